//! Accounts: registration, login, logout, the user's own profile, access tokens, e-mail
//! verification codes and password reset.

use super::check_critical;
use crate::auth::{self, AuthUser};
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::{client_ip, Body};
use crate::mail::{self, Lang, Mail};
use crate::settings::View;
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::log::LogType;
use switchboard_domain::options::OptionValues;
use switchboard_domain::user::{Role, UserStatus};
use switchboard_domain::validate;
use switchboard_domain::ErrorCode;
use switchboard_store::users::{NewUser, UserChangeset, UserRow};
use switchboard_store::{logs, now, sessions, user_groups, users, verification, DbConn};

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

fn user_not_found() -> ApiError {
    ApiError::not_found("user not found")
}

/// Maps a store "not found" onto the user-facing message.
pub fn load_user(c: &mut DbConn, id: i64) -> ApiResult<UserRow> {
    users::find(c, id).map_err(|e| {
        if e.is_not_found() {
            user_not_found()
        } else {
            e.into()
        }
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct RegisterBody {
    username: String,
    password: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    verification_code: String,
    #[serde(default)]
    aff_code: String,
}

pub async fn register(
    state: web::Data<AppState>,
    req: HttpRequest,
    Body(body): Body<RegisterBody>,
) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    crate::turnstile::check(&state, &req).await?;
    let snap = state.view();
    let o = View(&snap);
    if !o.bool("RegisterEnabled") {
        return Err(ApiError::forbidden(
            ErrorCode::RegistrationClosed,
            "the administrator has closed new registrations",
        ));
    }
    if !o.bool("PasswordRegisterEnabled") {
        return Err(ApiError::forbidden(
            ErrorCode::PasswordRegistrationClosed,
            "registration with a password is closed; use another sign-in method",
        ));
    }
    validate::username(&body.username)?;
    validate::password(&body.password)?;
    validate::display_name(&body.display_name)?;
    let verify_email = o.bool("EmailVerificationEnabled");
    if verify_email || !body.email.is_empty() {
        validate::email(&body.email)?;
    }
    if verify_email {
        if body.verification_code.is_empty() {
            return Err(ApiError::bad_request(
                ErrorCode::Required,
                "verification_code cannot be empty",
            ));
        }
        check_email_domain(&o, &body.email)?;
    }
    let quota_new = o.int("QuotaForNewUser");
    let quota_invitee = o.int("QuotaForInvitee");
    let quota_inviter = o.int("QuotaForInviter");
    let cost = state.config.bcrypt_cost;
    let (user, inviter_id) = state
        .db(move |c| {
            let hash = auth::hash_password(&body.password, cost)?;
            let code_hash = auth::sha256_hex(&body.verification_code);
            // Checked (and a wrong one counted) outside the transaction, which a refusal rolls
            // back; consumed inside it.
            if verify_email
                && !verification::check(
                    c,
                    PURPOSE_REGISTER,
                    &body.email,
                    &code_hash,
                    now(),
                    MAX_CODE_ATTEMPTS,
                )?
            {
                return Err(invalid_code());
            }
            switchboard_store::transaction(c, |c| {
                if users::username_taken(c, &body.username, 0)? {
                    return Err(ApiError::conflict(
                        ErrorCode::UsernameTaken,
                        "this username is already taken",
                    ));
                }
                if users::email_taken(c, &body.email, 0)? {
                    return Err(ApiError::conflict(
                        ErrorCode::EmailTaken,
                        "this e-mail address is already in use",
                    ));
                }
                if verify_email
                    && !verification::take(
                        c,
                        PURPOSE_REGISTER,
                        &body.email,
                        &code_hash,
                        now(),
                        MAX_CODE_ATTEMPTS,
                    )?
                {
                    return Err(invalid_code());
                }
                create_account(
                    c,
                    &Account {
                        username: &body.username,
                        password_hash: &hash,
                        display_name: &body.display_name,
                        email: &body.email,
                        aff_code: &body.aff_code,
                        quota_new,
                        quota_invitee,
                        quota_inviter,
                    },
                )
            })
        })
        .await?;
    // Committed: the inviter's reward reaches the relay's ledger at once (every node's, in
    // Redis mode).
    if let (Some(inviter), true) = (inviter_id, quota_inviter > 0) {
        state.relay.ledger.credit_user(inviter, quota_inviter).await;
    }
    tracing::info!(user_id = user.id, username = %user.username, "user registered");
    Ok(HttpResponse::Created()
        .json(json!({"success": true, "message": "", "data": user_json(&user)})))
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

fn check_email_domain(o: &View<'_>, email: &str) -> ApiResult<()> {
    if o.bool("EmailDomainRestrictionEnabled") {
        let list = o.text("EmailDomainWhitelist");
        let allowed: Vec<&str> = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
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
    let snap = state.view();
    if !View(&snap).bool("PasswordLoginEnabled") {
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
    if let Some(u) = &body.username {
        validate::username(u)?;
    }
    if let Some(d) = &body.display_name {
        validate::display_name(d)?;
    }
    let new_password = body.password.filter(|p| !p.is_empty());
    if let Some(p) = &new_password {
        validate::password(p)?;
    }
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
                if users::username_taken(c, &u, me.id)? {
                    return Err(ApiError::conflict(
                        ErrorCode::UsernameTaken,
                        "this username is already taken",
                    ));
                }
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

#[derive(Deserialize, schemars::JsonSchema)]
pub struct EmailQuery {
    #[serde(default)]
    email: String,
}

/// `GET /api/verification?email=`: e-mails a registration code.
pub async fn send_verification(
    state: web::Data<AppState>,
    req: HttpRequest,
    q: web::Query<EmailQuery>,
) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    crate::turnstile::check(&state, &req).await?;
    let email = q.email.trim().to_owned();
    validate::email(&email)?;
    let snap = state.view();
    let o = View(&snap);
    check_email_domain(&o, &email)?;
    mail::require_configured(&o)?;
    let e2 = email.clone();
    let taken = state
        .db(move |c| Ok(users::email_taken(c, &e2, 0)?))
        .await?;
    let st = state.clone();
    mail::in_background(async move {
        let o = View(&snap);
        if taken {
            // No code: the address's owner learns that somebody tried, the caller learns nothing.
            let lang = recipient_language(&st, &o, &email).await?;
            return mail::send_mail(&o, &email, lang, &Mail::RegisterTaken, CODE_TTL_SECS / 60)
                .await;
        }
        let code = issue_code(&st, PURPOSE_REGISTER.to_owned(), &email).await?;
        // Nobody has the address yet: the site's language.
        let lang = Lang::for_recipient(None, &o);
        let mail = Mail::RegisterCode { code: &code };
        mail::send_mail(&o, &email, lang, &mail, CODE_TTL_SECS / 60).await
    });
    Ok(ok_message(
        "if the address can be registered, a verification code has been sent to it",
    ))
}

/// `GET /api/reset_password?email=`: e-mails a reset link when an account has that address. The
/// answer is the same either way, and so is its time: the token and the e-mail are made after
/// the answer (see [`mail::in_background`]), so the endpoint does not reveal who is registered.
pub async fn send_reset(
    state: web::Data<AppState>,
    req: HttpRequest,
    q: web::Query<EmailQuery>,
) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    crate::turnstile::check(&state, &req).await?;
    let email = q.email.trim().to_owned();
    validate::email(&email)?;
    let snap = state.view();
    mail::require_configured(&View(&snap))?;
    // The link is absolute: `ServerAddress`, else the address this request was made to.
    let origin = super::mail_origin(&View(&snap), &req, &state.config.trusted_proxies);
    let e2 = email.clone();
    let exists = state
        .db(move |c| Ok(users::email_taken(c, &e2, 0)?))
        .await?;
    if exists {
        let st = state.clone();
        mail::in_background(async move {
            let o = View(&snap);
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
            let lang = recipient_language(&st, &o, &email).await?;
            let mail = Mail::Reset { link: &link };
            mail::send_mail(&o, &email, lang, &mail, CODE_TTL_SECS / 60).await
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
            if !verification::check(
                c,
                PURPOSE_RESET,
                &body.email,
                &hash,
                now(),
                MAX_CODE_ATTEMPTS,
            )? {
                return Err(invalid_reset_link());
            }
            switchboard_store::transaction(c, |c| {
                if !verification::take(
                    c,
                    PURPOSE_RESET,
                    &body.email,
                    &hash,
                    now(),
                    MAX_CODE_ATTEMPTS,
                )? {
                    return Err(invalid_reset_link());
                }
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

/// Whether a group symbol names an enabled group.
pub fn group_exists(c: &mut DbConn, symbol: &str) -> ApiResult<bool> {
    Ok(user_groups::exists_enabled(c, symbol)?)
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
async fn recipient_language(state: &AppState, o: &View<'_>, email: &str) -> ApiResult<Lang> {
    let e = email.to_owned();
    let stored = state
        .db(move |c| match users::find_by_login(c, &e) {
            Ok(u) => Ok(Some(u.language)),
            Err(err) if err.is_not_found() => Ok(None),
            Err(err) => Err(err.into()),
        })
        .await?;
    Ok(Lang::for_recipient(stored.as_deref(), o))
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
    check_critical(&state, &req)?;
    crate::turnstile::check(&state, &req).await?;
    let email = body.email.trim().to_owned();
    validate::email(&email)?;
    let snap = state.view();
    let o = View(&snap);
    check_email_domain(&o, &email)?;
    mail::require_configured(&o)?;
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
        let o = View(&snap);
        if taken {
            // Written to the account that has the address, in its language.
            let lang = recipient_language(&st, &o, &email).await?;
            return mail::send_mail(&o, &email, lang, &Mail::BindTaken, CODE_TTL_SECS / 60).await;
        }
        let code = issue_code(&st, bind_purpose(uid), &email).await?;
        let lang = Lang::for_recipient(Some(&my_language), &o);
        let mail = Mail::BindCode { code: &code };
        mail::send_mail(&o, &email, lang, &mail, CODE_TTL_SECS / 60).await
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
            // Checked (and a wrong one counted) outside the transaction, which a refusal rolls
            // back; consumed inside it.
            if !verification::check(c, &purpose, &email, &hash, now(), MAX_CODE_ATTEMPTS)? {
                return Err(invalid_code());
            }
            switchboard_store::transaction(c, |c| {
                if users::email_taken(c, &email, uid)? {
                    return Err(ApiError::conflict(
                        ErrorCode::EmailTaken,
                        "this e-mail address is already in use",
                    ));
                }
                if !verification::take(c, &purpose, &email, &hash, now(), MAX_CODE_ATTEMPTS)? {
                    return Err(invalid_code());
                }
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
