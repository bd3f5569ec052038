//! Password reset by e-mail: `GET /api/reset_password` mails a link, `POST /api/user/reset`
//! consumes it and sets a new password.

use super::email::recipient_language;
use super::{invalid_reset_link, mail_request, Code, EmailQuery, CODE_TTL_SECS, PURPOSE_RESET};
use crate::auth;
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::mail::{self, Mail};
use crate::routes::check_critical;
use crate::AppState;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use switchboard_domain::ErrorCode;
use switchboard_store::users::{self, UserChangeset};
use switchboard_store::{now, sessions, verification};

/// `GET /api/reset_password?email=`: e-mails a reset link when an account has that address. The
/// answer is the same either way, and so is its time: the token and the e-mail are made after
/// the answer (see [`mail::in_background`]), so the endpoint does not reveal who is registered.
pub async fn send_reset(
    state: web::Data<AppState>,
    req: HttpRequest,
    q: web::Query<EmailQuery>,
) -> ApiResult<HttpResponse> {
    let email = mail_request(&state, &req, &q.email).await?;
    let s = state.settings.typed();
    mail::require_configured(&s.smtp)?;
    // The link is absolute: `ServerAddress`, else the address this request was made to.
    let origin = crate::routes::mail_origin(&s.site, &req, &state.config.trusted_proxies);
    let e2 = email.clone();
    let exists = state
        .db(move |c| Ok(users::email_taken(c, &e2, 0)?))
        .await?;
    if exists {
        let st = state.clone();
        mail::in_background(async move {
            let token = auth::random_string(32);
            let hash = auth::sha256_hex(&token);
            let e2 = email.clone();
            st.db(move |c| {
                Ok(verification::put(
                    c,
                    PURPOSE_RESET,
                    &e2,
                    &hash,
                    now(),
                    CODE_TTL_SECS,
                )?)
            })
            .await?;
            let Some(origin) = origin else {
                return Err(ApiError::internal(
                    "no absolute address for the reset link: set ServerAddress (the request's \
                     Host is not a host name)",
                ));
            };
            let link = format!(
                "{origin}/user/reset?email={}&token={token}",
                url::form_urlencoded::byte_serialize(email.as_bytes()).collect::<String>()
            );
            let lang = recipient_language(&st, &s.site, &email).await?;
            let mail = Mail::Reset { link: &link };
            mail::send_mail(&s, &email, lang, &mail, CODE_TTL_SECS / 60).await
        });
    }
    Ok(ok_message(
        "if an account uses this address, a reset link has been sent to it",
    ))
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct ResetBody {
    email: String,
    token: String,
}

/// `POST /api/user/reset {email, token}`: consumes the link's token, sets a new random password
/// and returns it (shown once on the confirmation page); every session of the user ends.
pub async fn confirm_reset(
    state: web::Data<AppState>,
    req: HttpRequest,
    Body(body): Body<ResetBody>,
) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    if body.email.is_empty() || body.token.is_empty() {
        return Err(ApiError::bad_request(
            ErrorCode::Required,
            "email and token cannot be empty",
        ));
    }
    let cost = state.config.bcrypt_cost;
    let password = state
        .db(move |c| {
            let hash = auth::sha256_hex(&body.token);
            let token = Code {
                purpose: PURPOSE_RESET,
                email: &body.email,
                hash: &hash,
                wrong: invalid_reset_link,
            };
            token.check(c)?;
            switchboard_store::transaction(c, |c| {
                token.take(c)?;
                let user =
                    users::find_by_login(c, &body.email).map_err(|_| invalid_reset_link())?;
                let password = auth::random_string(12);
                let changes = UserChangeset {
                    password: Some(auth::hash_password(&password, cost)?),
                    ..Default::default()
                };
                users::update(c, user.id, &changes)?;
                sessions::delete_for_user(c, user.id)?;
                users::set_access_token_hash(c, user.id, None)?;
                Ok(password)
            })
        })
        .await?;
    Ok(ok(password))
}
