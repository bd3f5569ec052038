//! The signed-in user's own account: read it, change name, password or language
//! (`/api/user/self`), and make a new access token (`/api/user/token`).

use super::{check_profile_edit, check_username_free, load_user, user_json};
use crate::auth::{self, AuthUser};
use crate::error::{ok, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use switchboard_domain::validate;
use switchboard_domain::ErrorCode;
use switchboard_store::sessions;
use switchboard_store::users::{self, UserChangeset};

pub async fn get_self(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
) -> ApiResult<HttpResponse> {
    let user = state.db(move |c| load_user(c, me.id)).await?;
    Ok(ok(user_json(&user)))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSelfBody {
    username: Option<String>,
    display_name: Option<String>,
    password: Option<String>,
    /// The current password, required to set a new one.
    original_password: Option<String>,
    /// The console language (`zh_CN`, `zh_HK`, `en`, `ja`; empty: the site's), which e-mails
    /// to the user are written in.
    language: Option<String>,
}

pub async fn update_self(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    Body(body): Body<UpdateSelfBody>,
) -> ApiResult<HttpResponse> {
    let new_password = check_profile_edit(
        body.username.as_deref(),
        body.display_name.as_deref(),
        body.password,
    )?;
    if let Some(l) = &body.language {
        validate::language(l)?;
    }
    let cost = state.config.bcrypt_cost;
    let user = state
        .db(move |c| {
            let current = load_user(c, me.id)?;
            let mut changes = UserChangeset {
                display_name: body.display_name,
                language: body.language,
                ..Default::default()
            };
            if let Some(u) = body.username.filter(|u| *u != current.username) {
                check_username_free(c, &u, me.id)?;
                changes.username = Some(u);
            }
            if let Some(p) = &new_password {
                let original = body.original_password.unwrap_or_default();
                // An account made by a third-party sign-in has no password yet: its first one
                // needs none.
                if !current.password.is_empty()
                    && !auth::verify_password(&original, &current.password)
                {
                    return Err(ApiError::bad_request(
                        ErrorCode::WrongOriginalPassword,
                        "the current password is wrong; it is needed to set a new one",
                    ));
                }
                changes.password = Some(auth::hash_password(p, cost)?);
            }
            users::update(c, me.id, &changes)?;
            if new_password.is_some() {
                // Sign out every other session of this user, and revoke the access token.
                match &me.session_hash {
                    Some(keep) => sessions::delete_for_user_except(c, me.id, keep)?,
                    None => sessions::delete_for_user(c, me.id)?,
                };
                users::set_access_token_hash(c, me.id, None)?;
            }
            load_user(c, me.id)
        })
        .await?;
    Ok(ok(user_json(&user)))
}

/// `GET /api/user/token`: the old form of [`generate_access_token`], for access-token callers
/// only (the console uses POST).
pub async fn generate_access_token_get(
    state: web::Data<AppState>,
    req: HttpRequest,
    me: AuthUser,
) -> ApiResult<HttpResponse> {
    crate::csrf::require_access_token(&req)?;
    generate_access_token(state, me).await
}

/// `POST /api/user/token`: makes a new access token (replacing the old one) and returns it once;
/// scripts send it as `Authorization: <token>` on the management API.
pub async fn generate_access_token(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
) -> ApiResult<HttpResponse> {
    let token = auth::random_string(32);
    let hash = auth::sha256_hex(&token);
    state
        .db(move |c| Ok(users::set_access_token_hash(c, me.id, Some(&hash))?))
        .await?;
    Ok(ok(token))
}
