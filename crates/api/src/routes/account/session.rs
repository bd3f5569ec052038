//! Signing in and out: `POST /api/user/login` opens a console session (the cookie),
//! `/api/user/logout` ends it.

use super::user_json;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::{client_ip, Body};
use crate::routes::check_critical;
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use switchboard_domain::user::UserStatus;
use switchboard_domain::ErrorCode;
use switchboard_store::{now, sessions, users, DbConn};

/// Starts a console session for `user_id` (inside the caller's connection) and returns the
/// session id for the cookie.
pub fn open_session(
    c: &mut DbConn,
    user_id: i64,
    ip: String,
    user_agent: String,
    secret: &[u8],
    ttl: i64,
) -> ApiResult<String> {
    let id = auth::new_session_id();
    let t = now();
    sessions::insert(
        c,
        &sessions::SessionRow {
            id_hash: auth::session_hash(secret, &id),
            user_id,
            created_at: t,
            expires_at: t + ttl,
            last_seen_at: t,
            ip,
            user_agent,
        },
    )?;
    users::touch_login(c, user_id)?;
    Ok(id)
}

/// The request's User-Agent, at most 255 characters (kept with the session).
pub fn user_agent(req: &HttpRequest) -> String {
    req.headers()
        .get(actix_web::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .chars()
        .take(255)
        .collect()
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct LoginBody {
    username: String,
    password: String,
}

pub async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    Body(body): Body<LoginBody>,
) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    crate::turnstile::check(&state, &req).await?;
    if !state.settings.sign_in().password_login {
        return Err(ApiError::forbidden(
            ErrorCode::PasswordLoginDisabled,
            "password login is disabled by the administrator",
        ));
    }
    if body.username.is_empty() || body.password.is_empty() {
        return Err(ApiError::bad_request(
            ErrorCode::Required,
            "username (or e-mail) and password cannot be empty",
        ));
    }
    let ip = client_ip(&req, &state.config.trusted_proxies);
    let ua = user_agent(&req);
    let ttl = state.config.session_ttl_secs;
    let secret = state.config.session_secret.clone();
    let dummy = state.dummy_hash.clone();
    let (user, session_id) = state
        .db(move |c| {
            let found = match users::find_by_login(c, &body.username) {
                Ok(u) => Some(u),
                Err(e) if e.is_not_found() => None,
                Err(e) => return Err(e.into()),
            };
            let user = match found {
                Some(u) if auth::verify_password(&body.password, &u.password) => u,
                Some(_) => return Err(bad_credentials()),
                None => {
                    auth::verify_dummy(&body.password, &dummy);
                    return Err(bad_credentials());
                }
            };
            if user.status != UserStatus::Enabled.as_i32() {
                return Err(ApiError::forbidden(
                    ErrorCode::UserDisabled,
                    "this user has been disabled",
                ));
            }
            let id = open_session(c, user.id, ip, ua, &secret, ttl)?;
            Ok((user, id))
        })
        .await?;
    let cookie = auth::session_cookie(&state, session_id, state.config.session_ttl_secs);
    Ok(HttpResponse::Ok()
        .cookie(cookie)
        .json(json!({"success": true, "message": "", "data": user_json(&user)})))
}

fn bad_credentials() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        ErrorCode::InvalidCredentials,
        "username or password is incorrect",
    )
}

/// Ends the session on the server (every node) and clears the cookie. Always succeeds.
pub async fn logout(state: web::Data<AppState>, req: HttpRequest) -> ApiResult<HttpResponse> {
    if let Some(cookie) = req.cookie(auth::SESSION_COOKIE) {
        let hash = auth::session_hash(&state.config.session_secret, cookie.value());
        state.db(move |c| Ok(sessions::delete(c, &hash)?)).await?;
    }
    Ok(HttpResponse::Ok()
        .cookie(auth::removal_cookie(&state))
        .json(json!({"success": true, "message": ""})))
}

/// `GET /api/user/logout`: the old form, for access-token callers only (a cookie-only GET is
/// refused: a link on another site must not sign the user out).
pub async fn logout_get(state: web::Data<AppState>, req: HttpRequest) -> ApiResult<HttpResponse> {
    crate::csrf::require_access_token(&req)?;
    logout(state, req).await
}
