//! Accounts: registration, login, logout, the user's own profile, access tokens, e-mail
//! verification codes and password reset.
//!
//! One file per flow: [`signup`] (registration), [`session`] (sign-in and sign-out),
//! [`profile`] (the signed-in user's own account and access token), [`email`] (codes that
//! register or bind an address) and [`reset`] (password reset by e-mail). What they share is
//! here: how a user is shown and loaded, how a new account is made, and the e-mail code rules.

mod email;
mod profile;
mod reset;
mod session;
mod signup;

pub use email::{bind_email, send_bind_code, send_verification, EmailBindBody, EmailCodeBody};
pub use profile::{
    generate_access_token, generate_access_token_get, get_self, update_self, UpdateSelfBody,
};
pub use reset::{confirm_reset, send_reset, ResetBody};
pub use session::{login, logout, logout_get, open_session, user_agent, LoginBody};
pub use signup::{register, RegisterBody};

use super::check_critical;
use super::paging::found_or;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::settings::Registration;
use crate::AppState;
use actix_web::HttpRequest;
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::log::LogType;
use switchboard_domain::user::{Role, UserStatus};
use switchboard_domain::validate;
use switchboard_domain::ErrorCode;
use switchboard_store::users::{NewUser, UserRow};
use switchboard_store::{logs, now, user_groups, users, verification, DbConn};

/// How long an e-mail code or reset link stays valid.
const CODE_TTL_SECS: i64 = 15 * 60;
const PURPOSE_REGISTER: &str = "register";
const PURPOSE_RESET: &str = "reset";
/// Wrong codes (or reset tokens) an address may send before its code is void.
pub const MAX_CODE_ATTEMPTS: i32 = 5;

fn invalid_code() -> ApiError {
    ApiError::bad_request(
        ErrorCode::InvalidVerificationCode,
        "the verification code is wrong or has expired",
    )
}

fn invalid_reset_link() -> ApiError {
    ApiError::bad_request(
        ErrorCode::InvalidResetLink,
        "the reset link is invalid or has expired",
    )
}

/// A user as the API shows it: never the password hash or the access-token hash.
pub fn user_json(u: &UserRow) -> Value {
    json!({
        "id": u.id,
        "username": u.username,
        "display_name": u.display_name,
        "role": u.role,
        "status": u.status,
        "email": u.email,
        "avatar_url": u.avatar_url,
        "group": u.group_name,
        "quota": u.quota,
        "used_quota": u.used_quota,
        "request_count": u.request_count,
        "aff_code": u.aff_code,
        "aff_count": u.aff_count,
        "aff_quota": u.aff_quota,
        "aff_history_quota": u.aff_history_quota,
        "inviter_id": u.inviter_id,
        "github_id": u.github_id,
        "oidc_id": u.oidc_id,
        "lark_id": u.lark_id,
        "wechat_id": u.wechat_id,
        "telegram_id": u.telegram_id,
        "has_access_token": u.access_token_hash.is_some(),
        "has_password": !u.password.is_empty(),
        "created_at": u.created_at,
        "last_login_at": u.last_login_at,
        "language": u.language,
    })
}

pub(crate) fn user_not_found() -> ApiError {
    ApiError::not_found("user not found")
}

/// Maps a store "not found" onto the user-facing message.
pub fn load_user(c: &mut DbConn, id: i64) -> ApiResult<UserRow> {
    found_or(users::find(c, id), user_not_found)
}

/// A new account and what it is granted (registration and third-party sign-up).
pub struct Account<'a> {
    pub username: &'a str,
    /// Empty for an account that signs in only through a provider.
    pub password_hash: &'a str,
    /// The username when empty.
    pub display_name: &'a str,
    pub email: &'a str,
    /// The inviter's affiliate code (unknown codes are ignored).
    pub aff_code: &'a str,
    pub quota_new: i64,
    pub quota_invitee: i64,
    pub quota_inviter: i64,
}

/// Inserts the account (inside the caller's transaction), credits its inviter and writes the
/// grant logs. Returns the new user and the inviter's id.
pub fn create_account(c: &mut DbConn, a: &Account<'_>) -> ApiResult<(UserRow, Option<i64>)> {
    let inviter = if a.aff_code.is_empty() {
        None
    } else {
        users::find_by_aff_code(c, a.aff_code).ok()
    };
    let display = if a.display_name.is_empty() {
        a.username
    } else {
        a.display_name
    };
    let aff_code = auth::random_string(8);
    let t = now();
    let quota = a.quota_new
        + if inviter.is_some() {
            a.quota_invitee
        } else {
            0
        };
    let id = users::insert(
        c,
        &NewUser {
            username: a.username,
            password: a.password_hash,
            display_name: display,
            role: Role::Common.as_i32(),
            status: UserStatus::Enabled.as_i32(),
            email: a.email,
            quota,
            group_name: "default",
            aff_code: Some(&aff_code),
            inviter_id: inviter.as_ref().map_or(0, |u| u.id),
            created_at: t,
            updated_at: t,
        },
    )
    .map_err(|e| match e {
        switchboard_store::StoreError::Conflict(_) => {
            ApiError::conflict(ErrorCode::UsernameTaken, "this username is already taken")
        }
        other => other.into(),
    })?;
    let inviter_id = inviter.as_ref().map(|u| u.id);
    if let Some(inv) = inviter {
        users::credit_inviter(c, inv.id, a.quota_inviter)?;
        if a.quota_inviter > 0 {
            logs::record(
                c,
                LogType::System,
                inv.id,
                &inv.username,
                a.quota_inviter,
                &format!("invitation reward for new user {}", a.username),
                &json!({"event": "invite_reward", "invitee": a.username}).to_string(),
            )?;
        }
    }
    if quota > 0 {
        logs::record(
            c,
            LogType::System,
            id,
            a.username,
            quota,
            "quota granted on registration",
            &json!({"event": "signup_grant"}).to_string(),
        )?;
    }
    Ok((users::find(c, id)?, inviter_id))
}

/// Whether a group symbol names an enabled group.
pub fn group_exists(c: &mut DbConn, symbol: &str) -> ApiResult<bool> {
    Ok(user_groups::exists_enabled(c, symbol)?)
}

/// Checks the profile fields an edit gives (a username, a display name, a new password) and
/// returns the new password: `None` when none is given (a blank one keeps the old).
pub fn check_profile_edit(
    username: Option<&str>,
    display_name: Option<&str>,
    password: Option<String>,
) -> ApiResult<Option<String>> {
    if let Some(u) = username {
        validate::username(u)?;
    }
    if let Some(d) = display_name {
        validate::display_name(d)?;
    }
    let password = password.filter(|p| !p.is_empty());
    if let Some(p) = &password {
        validate::password(p)?;
    }
    Ok(password)
}

/// Refuses a username another account has (`except`: the account being changed, 0 for none).
pub fn check_username_free(c: &mut DbConn, username: &str, except: i64) -> ApiResult<()> {
    if users::username_taken(c, username, except)? {
        return Err(ApiError::conflict(
            ErrorCode::UsernameTaken,
            "this username is already taken",
        ));
    }
    Ok(())
}

/// Refuses an e-mail address another account has (`except` as in [`check_username_free`]).
pub fn check_email_free(c: &mut DbConn, email: &str, except: i64) -> ApiResult<()> {
    if users::email_taken(c, email, except)? {
        return Err(ApiError::conflict(
            ErrorCode::EmailTaken,
            "this e-mail address is already in use",
        ));
    }
    Ok(())
}

/// An e-mailed code (or reset token, by its hash) for `purpose` and `email`, checked in two
/// steps: [`Code::check`] outside the transaction (a wrong one is counted, and a refusal in
/// the transaction would roll the count back), [`Code::take`] inside it (consumed). Both
/// answer `wrong` when the code does not hold.
pub struct Code<'a> {
    pub purpose: &'a str,
    pub email: &'a str,
    pub hash: &'a str,
    pub wrong: fn() -> ApiError,
}

impl Code<'_> {
    pub fn check(&self, c: &mut DbConn) -> ApiResult<()> {
        let t = now();
        let ok = verification::check(c, self.purpose, self.email, self.hash, t, MAX_CODE_ATTEMPTS)?;
        if ok {
            Ok(())
        } else {
            Err((self.wrong)())
        }
    }

    pub fn take(&self, c: &mut DbConn) -> ApiResult<()> {
        let t = now();
        let ok = verification::take(c, self.purpose, self.email, self.hash, t, MAX_CODE_ATTEMPTS)?;
        if ok {
            Ok(())
        } else {
            Err((self.wrong)())
        }
    }
}

/// The first steps of a request that e-mails an address: the tight per-IP limit, Turnstile,
/// and a valid address (trimmed), returned.
async fn mail_request(state: &AppState, req: &HttpRequest, email: &str) -> ApiResult<String> {
    check_critical(state, req)?;
    crate::turnstile::check(state, req).await?;
    let email = email.trim().to_owned();
    validate::email(&email)?;
    Ok(email)
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct EmailQuery {
    #[serde(default)]
    email: String,
}

fn check_email_domain(r: &Registration, email: &str) -> ApiResult<()> {
    if r.email_domain_restriction {
        let allowed: Vec<&str> = r
            .email_domain_whitelist
            .iter()
            .map(String::as_str)
            .collect();
        if !validate::email_domain_allowed(email, &allowed) {
            return Err(ApiError::bad_request(
                ErrorCode::EmailDomainNotAllowed,
                "registration with this e-mail domain is not allowed by the administrator",
            ));
        }
    }
    Ok(())
}
