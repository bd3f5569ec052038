//! E-mailed codes: one that registers an address (`GET /api/verification`), and one that binds
//! an address to the signed-in account (`/api/user/email/code`, `/api/user/email/bind`).

use super::{
    check_email_domain, check_email_free, invalid_code, load_user, mail_request, user_json, Code,
    EmailQuery, CODE_TTL_SECS, PURPOSE_REGISTER,
};
use crate::auth::{self, AuthUser};
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::mail::{self, Lang, Mail};
use crate::routes::check_critical;
use crate::settings::Site;
use crate::AppState;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use switchboard_domain::validate;
use switchboard_domain::ErrorCode;
use switchboard_store::users::{self, UserChangeset};
use switchboard_store::{now, verification};

/// `GET /api/verification?email=`: e-mails a registration code.
pub async fn send_verification(
    state: web::Data<AppState>,
    req: HttpRequest,
    q: web::Query<EmailQuery>,
) -> ApiResult<HttpResponse> {
    let email = mail_request(&state, &req, &q.email).await?;
    let s = state.settings.typed();
    check_email_domain(&s.registration, &email)?;
    mail::require_configured(&s.smtp)?;
    let e2 = email.clone();
    let taken = state
        .db(move |c| Ok(users::email_taken(c, &e2, 0)?))
        .await?;
    let st = state.clone();
    mail::in_background(async move {
        if taken {
            // No code: the address's owner learns that somebody tried, the caller learns nothing.
            let lang = recipient_language(&st, &s.site, &email).await?;
            return mail::send_mail(&s, &email, lang, &Mail::RegisterTaken, CODE_TTL_SECS / 60)
                .await;
        }
        let code = issue_code(&st, PURPOSE_REGISTER.to_owned(), &email).await?;
        // Nobody has the address yet: the site's language.
        let lang = Lang::for_recipient(None, &s.site);
        let mail = Mail::RegisterCode { code: &code };
        mail::send_mail(&s, &email, lang, &mail, CODE_TTL_SECS / 60).await
    });
    Ok(ok_message(
        "if the address can be registered, a verification code has been sent to it",
    ))
}

/// Makes a six-digit code for `purpose` and `email`, stores its hash (replacing an earlier one,
/// valid [`CODE_TTL_SECS`]) and returns it to be mailed.
async fn issue_code(state: &AppState, purpose: String, email: &str) -> ApiResult<String> {
    let code = format!("{:06}", rand::random_range(0..1_000_000u32));
    let hash = auth::sha256_hex(&code);
    let email = email.to_owned();
    state
        .db(move |c| {
            Ok(verification::put(
                c,
                &purpose,
                &email,
                &hash,
                now(),
                CODE_TTL_SECS,
            )?)
        })
        .await?;
    Ok(code)
}

/// The language of e-mails to `email`: its account's stored language, else the site's.
pub(super) async fn recipient_language(
    state: &AppState,
    site: &Site,
    email: &str,
) -> ApiResult<Lang> {
    let e = email.to_owned();
    let stored = state
        .db(move |c| match users::find_by_login(c, &e) {
            Ok(u) => Ok(Some(u.language)),
            Err(err) if err.is_not_found() => Ok(None),
            Err(err) => Err(err.into()),
        })
        .await?;
    Ok(Lang::for_recipient(stored.as_deref(), site))
}

/// The code purpose of binding an address to one account: codes are per user, so a code sent
/// for one account never binds another.
fn bind_purpose(user_id: i64) -> String {
    format!("bind:{user_id}")
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailCodeBody {
    email: String,
}

/// `POST /api/user/email/code {email}`: e-mails a code that binds `email` to the signed-in
/// account (a first address or a new one). Same answer whether or not another account uses the
/// address: that account's owner is told somebody tried, and no code is made.
pub async fn send_bind_code(
    state: web::Data<AppState>,
    req: HttpRequest,
    AuthUser(me): AuthUser,
    Body(body): Body<EmailCodeBody>,
) -> ApiResult<HttpResponse> {
    let email = mail_request(&state, &req, &body.email).await?;
    let s = state.settings.typed();
    check_email_domain(&s.registration, &email)?;
    mail::require_configured(&s.smtp)?;
    let (e2, uid) = (email.clone(), me.id);
    let (current, my_language, taken) = state
        .db(move |c| {
            let me = load_user(c, uid)?;
            Ok((me.email, me.language, users::email_taken(c, &e2, uid)?))
        })
        .await?;
    if current.eq_ignore_ascii_case(&email) {
        return Err(ApiError::bad_request(
            ErrorCode::EmailUnchanged,
            "this is already the account's e-mail address",
        ));
    }
    let st = state.clone();
    mail::in_background(async move {
        if taken {
            // Written to the account that has the address, in its language.
            let lang = recipient_language(&st, &s.site, &email).await?;
            return mail::send_mail(&s, &email, lang, &Mail::BindTaken, CODE_TTL_SECS / 60).await;
        }
        let code = issue_code(&st, bind_purpose(uid), &email).await?;
        let lang = Lang::for_recipient(Some(&my_language), &s.site);
        let mail = Mail::BindCode { code: &code };
        mail::send_mail(&s, &email, lang, &mail, CODE_TTL_SECS / 60).await
    });
    Ok(ok_message(
        "if the address can be bound, a code has been sent to it",
    ))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailBindBody {
    email: String,
    code: String,
}

/// `POST /api/user/email/bind {email, code}`: binds the address the code was sent to; answers
/// the updated user. A wrong code counts against the address's code (gone after
/// [`MAX_CODE_ATTEMPTS`] wrong tries); an address another account took meanwhile is refused.
pub async fn bind_email(
    state: web::Data<AppState>,
    req: HttpRequest,
    AuthUser(me): AuthUser,
    Body(body): Body<EmailBindBody>,
) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    let email = body.email.trim().to_owned();
    validate::email(&email)?;
    let code = body.code.trim().to_owned();
    if code.is_empty() {
        return Err(switchboard_domain::DomainError::Required { field: "code" }.into());
    }
    let uid = me.id;
    let user = state
        .db(move |c| {
            let hash = auth::sha256_hex(&code);
            let purpose = bind_purpose(uid);
            let code = Code {
                purpose: &purpose,
                email: &email,
                hash: &hash,
                wrong: invalid_code,
            };
            code.check(c)?;
            switchboard_store::transaction(c, |c| {
                check_email_free(c, &email, uid)?;
                code.take(c)?;
                users::update(
                    c,
                    uid,
                    &UserChangeset {
                        email: Some(email.clone()),
                        ..Default::default()
                    },
                )?;
                load_user(c, uid)
            })
        })
        .await?;
    tracing::info!(user_id = uid, "e-mail address bound");
    Ok(ok(user_json(&user)))
}
