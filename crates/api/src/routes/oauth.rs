//! Third-party sign-in and account binding: `/api/oauth/*` and `DELETE /api/user/binding/*`.
//!
//! WeChat has no authorize page: the user types the code the official account answered, and the
//! console sends it with a state from `/api/oauth/state` (the same cookie and single-use rules).
//!
//! The flow of GitHub, OIDC and Lark: the console asks `/api/oauth/endpoint?provider=` for the
//! provider's authorize URL (or `/api/oauth/state` for a bare state), which also sets an
//! HttpOnly cookie holding the state; the provider sends the browser back to `/oauth/{provider}`
//! with a code and the state; the console passes both to `/api/oauth/{provider}`. The state must
//! equal the cookie's (it was issued to this browser) and is taken from the server's store (it
//! works once, for ten minutes). The OIDC nonce and PKCE verifier are derived from the state with
//! the server secret, so nothing else is kept between the two legs.
//!
//! What the identity does: with a signed-in caller it is bound to that account (answer message
//! `"bind"`; refused when another account has it); otherwise it signs in to the account bound to
//! it, or, when registration is open, to a new account made for it (with the affiliate code).

use super::account::{self, create_account, open_session, user_agent, user_json, Account};
use super::check_critical;
use crate::auth::{self, AuthUser};
use crate::error::{ApiError, ApiResult};
use crate::extract::client_ip;
use crate::oauth::{self, Identity, OidcExpect, OidcRequest, Provider};
use crate::settings::{Named, SignIn, Site};
use crate::AppState;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use switchboard_domain::user::UserStatus;
use switchboard_domain::validate;
use switchboard_domain::ErrorCode;
use switchboard_store::users::{self, IdentityKind, UserRow};
use switchboard_store::{now, verification};

/// The cookie that ties a state to the browser it was issued to.
pub const STATE_COOKIE: &str = "sb_oauth_state";
const STATE_PURPOSE: &str = "oauth_state";
/// How long a sign-in may take between leaving for the provider and coming back.
pub const STATE_TTL_SECS: i64 = 600;
/// Longest code or state taken from a provider's redirect.
const MAX_PARAM: usize = 1024;

fn kind(p: Provider) -> IdentityKind {
    match p {
        Provider::GitHub => IdentityKind::GitHub,
        Provider::Oidc => IdentityKind::Oidc,
        Provider::Lark => IdentityKind::Lark,
        Provider::WeChat => IdentityKind::WeChat,
    }
}

fn invalid_provider(name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::InvalidProvider,
        format!("no such sign-in provider: {name:?} (github, oidc, lark or wechat)"),
    )
}

fn state_invalid() -> ApiError {
    ApiError::forbidden(
        ErrorCode::OauthStateInvalid,
        "this sign-in link has expired, was already used or was started in another browser; start the sign-in again",
    )
}

fn parse_provider(name: &str) -> ApiResult<Provider> {
    Provider::parse(name).ok_or_else(|| invalid_provider(name))
}

/// Whether the settings switch provider `p` on.
fn enabled(s: &SignIn, p: Provider) -> bool {
    match p {
        Provider::GitHub => s.github.enabled,
        Provider::Oidc => s.oidc.enabled,
        Provider::Lark => s.lark.enabled,
        Provider::WeChat => s.wechat.enabled,
    }
}

fn require_enabled(s: &SignIn, p: Provider) -> ApiResult<()> {
    if enabled(s, p) {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            ErrorCode::OauthDisabled,
            format!("sign-in with {} is not enabled", p.name()),
        ))
    }
}

/// A setting the provider needs, trimmed; `oauth_not_configured` naming it when it is empty.
fn setting(n: &Named) -> ApiResult<String> {
    n.non_empty()
        .ok_or_else(|| oauth::not_configured(&format!("{} is empty", n.key)))
}

/// Where the provider sends the browser back: `{ServerAddress}/oauth/{provider}`, or this
/// request's own origin when no server address is set.
fn redirect_uri(site: &Site, req: &HttpRequest, p: Provider) -> String {
    format!("{}/oauth/{}", super::site_origin(site, req), p.name())
}

fn state_cookie(state: &AppState, value: String, max_age: i64) -> Cookie<'static> {
    Cookie::build(STATE_COOKIE, value)
        .path("/api/oauth")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.config.secure_cookie)
        .max_age(actix_web::cookie::time::Duration::seconds(max_age))
        .finish()
}

/// A new state, kept (hashed) for [`STATE_TTL_SECS`], and the cookie that carries it.
async fn issue_state(state: &AppState) -> ApiResult<(String, Cookie<'static>)> {
    let s = oauth::random_token(24);
    let key = auth::sha256_hex(&s);
    state
        .db(move |c| {
            Ok(verification::put(
                c,
                STATE_PURPOSE,
                &key,
                &key,
                now(),
                STATE_TTL_SECS,
            )?)
        })
        .await?;
    let cookie = state_cookie(state, s.clone(), STATE_TTL_SECS);
    Ok((s, cookie))
}

/// Takes the state: it must be this browser's (the cookie) and unused and unexpired (the store).
async fn take_state(state: &AppState, req: &HttpRequest, given: &str) -> ApiResult<()> {
    let cookie = req
        .cookie(STATE_COOKIE)
        .map(|c| c.value().to_owned())
        .unwrap_or_default();
    let same = !given.is_empty()
        && given.len() <= MAX_PARAM
        && cookie.len() == given.len()
        && cookie
            .bytes()
            .zip(given.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if !same {
        return Err(state_invalid());
    }
    let key = auth::sha256_hex(given);
    let taken = state
        .db(move |c| Ok(verification::take(c, STATE_PURPOSE, &key, &key, now(), 1)?))
        .await?;
    if taken {
        Ok(())
    } else {
        Err(state_invalid())
    }
}

/// `GET /api/oauth/state`: a state for a sign-in the console builds itself (GitHub's authorize
/// page takes client id, state and scope `user:email`; WeChat's code is sent with one).
pub async fn get_state(state: web::Data<AppState>, req: HttpRequest) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    let (s, cookie) = issue_state(&state).await?;
    Ok(HttpResponse::Ok()
        .cookie(cookie)
        .json(json!({"success": true, "message": "", "data": s})))
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct EndpointQuery {
    /// `github`, `oidc` (the default) or `lark`.
    #[serde(default)]
    provider: Option<String>,
}

/// `GET /api/oauth/endpoint?provider=`: the provider's authorize URL for this browser (client
/// id, redirect URI, state; for OIDC also scope, nonce and the PKCE challenge).
pub async fn endpoint(
    state: web::Data<AppState>,
    req: HttpRequest,
    q: web::Query<EndpointQuery>,
) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    let p = parse_provider(q.provider.as_deref().unwrap_or("oidc"))?;
    let t = state.settings.typed();
    let o = &t.sign_in;
    require_enabled(o, p)?;
    let redirect = redirect_uri(&t.site, &req, p);
    // Checked before a state is issued: nothing is stored for a flow that cannot start.
    let discovery = match p {
        Provider::GitHub => {
            setting(&o.github.client_id)?;
            None
        }
        Provider::Lark => {
            setting(&o.lark.client_id)?;
            None
        }
        Provider::Oidc => {
            setting(&o.oidc.client_id)?;
            let client = state.relay.clients.get(None).map_err(ApiError::internal)?;
            Some(oauth::discover(&client, &setting(&o.oidc.issuer)?).await?)
        }
        Provider::WeChat => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidProvider,
                "WeChat sign-in has no authorize page: scan the QR code and enter the code",
            ))
        }
    };
    let (s, cookie) = issue_state(&state).await?;
    let url = match (p, discovery) {
        (Provider::GitHub, _) => oauth::github_authorize_url(
            &state.config.oauth,
            &o.github.client_id.value,
            &s,
            &redirect,
        )?,
        (Provider::Lark, _) => {
            oauth::lark_authorize_url(&state.config.oauth, &o.lark.client_id.value, &s, &redirect)?
        }
        (_, Some(d)) => {
            let (nonce, verifier) =
                oauth::oidc_nonce_and_verifier(&state.config.session_secret, &s);
            oauth::oidc_authorize_url(
                &d,
                &OidcRequest {
                    client_id: o.oidc.client_id.value.trim(),
                    redirect_uri: &redirect,
                    scopes: &o.oidc.scopes,
                    state: &s,
                    nonce: &nonce,
                    pkce_verifier: &verifier,
                },
            )?
        }
        _ => return Err(ApiError::internal("no discovery for OIDC")),
    };
    Ok(HttpResponse::Ok()
        .cookie(cookie)
        .json(json!({"success": true, "message": "", "data": url})))
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct CallbackQuery {
    #[serde(default)]
    code: String,
    #[serde(default)]
    state: String,
    /// The inviter's affiliate code, for an account made by this sign-in.
    #[serde(default)]
    aff: String,
}

/// `GET /api/oauth/{provider}?code=&state=&aff=` (GitHub, OIDC, Lark and WeChat; WeChat's state
/// comes from `GET /api/oauth/state`).
pub async fn callback(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    q: web::Query<CallbackQuery>,
) -> ApiResult<HttpResponse> {
    let p = parse_provider(&path)?;
    check_critical(&state, &req)?;
    crate::csrf::check_signed_in_get(&req)?;
    let t = state.settings.typed();
    let o = &t.sign_in;
    require_enabled(o, p)?;
    let code = required_code(&q.code)?;
    // Every provider's sign-in carries a state issued to this browser. WeChat has no redirect
    // leg (the user types the code the official account answered), so the console takes a state
    // from `/api/oauth/state` and sends it with the code: a link on another site carrying its
    // author's code cannot sign the visitor in to the author's account (login CSRF).
    take_state(&state, &req, q.state.trim()).await?;
    let client = state.relay.clients.get(None).map_err(ApiError::internal)?;
    let redirect = redirect_uri(&t.site, &req, p);
    let ep = &state.config.oauth;
    let identity = match p {
        Provider::GitHub => {
            oauth::github_identity(
                &client,
                ep,
                &setting(&o.github.client_id)?,
                &setting(&o.github.client_secret)?,
                code,
                &redirect,
            )
            .await?
        }
        Provider::Lark => {
            oauth::lark_identity(
                &client,
                ep,
                &setting(&o.lark.client_id)?,
                &setting(&o.lark.client_secret)?,
                code,
                &redirect,
            )
            .await?
        }
        Provider::Oidc => {
            let issuer = setting(&o.oidc.issuer)?;
            let client_id = setting(&o.oidc.client_id)?;
            let s = q.state.trim();
            let (nonce, verifier) = oauth::oidc_nonce_and_verifier(&state.config.session_secret, s);
            let d = oauth::discover(&client, &issuer).await?;
            oauth::oidc_identity(
                &client,
                &d,
                &OidcRequest {
                    client_id: &client_id,
                    redirect_uri: &redirect,
                    scopes: &o.oidc.scopes,
                    state: s,
                    nonce: &nonce,
                    pkce_verifier: &verifier,
                },
                &OidcExpect {
                    issuer: &issuer,
                    client_id: &client_id,
                    client_secret: &setting(&o.oidc.client_secret)?,
                    nonce: &nonce,
                    username_claims: &o.oidc.username_claims,
                    email_claims: &o.oidc.email_claims,
                    now: now(),
                },
                code,
            )
            .await?
        }
        // The code the user got from the WeChat account (valid three minutes), checked with
        // the configured WeChat server.
        Provider::WeChat => {
            oauth::wechat_identity(
                &client,
                &setting(&o.wechat.server_address)?,
                &o.wechat.server_token,
                code,
            )
            .await?
        }
    };
    let mut res = sign_in_or_bind(&state, &req, p, identity, &q.aff).await?;
    // The state is spent: its cookie goes.
    res.add_cookie(&state_cookie(&state, String::new(), 0))
        .map_err(ApiError::internal)?;
    Ok(res)
}

fn required_code(code: &str) -> ApiResult<&str> {
    let code = code.trim();
    if code.is_empty() {
        return Err(ApiError::bad_request(
            ErrorCode::OauthCodeRequired,
            "the provider sent no authorization code",
        ));
    }
    if code.len() > MAX_PARAM {
        return Err(ApiError::bad_request(
            ErrorCode::OauthCodeRequired,
            "the authorization code is too long",
        ));
    }
    Ok(code)
}

/// A username for a new account from what the provider calls the user: kept when it is a valid
/// and free name, else `{provider}_{n}` with the first free n.
fn new_username(c: &mut switchboard_store::DbConn, p: Provider, hint: &str) -> ApiResult<String> {
    let hint = hint.trim();
    if validate::username(hint).is_ok() && !users::username_taken(c, hint, 0)? {
        return Ok(hint.to_owned());
    }
    for _ in 0..20 {
        let candidate = format!(
            "{}_{}",
            p.name(),
            rand::random_range(10_000..100_000_000u32)
        );
        if !users::username_taken(c, &candidate, 0)? {
            return Ok(candidate);
        }
    }
    Err(ApiError::internal("no free username for a new account"))
}

async fn sign_in_or_bind(
    state: &web::Data<AppState>,
    req: &HttpRequest,
    p: Provider,
    identity: Identity,
    aff: &str,
) -> ApiResult<HttpResponse> {
    let current = auth::authenticate(req.clone()).await.ok();
    let reg = state.settings.registration();
    let register_open = reg.enabled;
    let quota_new = reg.quota_for_new_user;
    let quota_invitee = reg.quota_for_invitee;
    let quota_inviter = reg.quota_for_inviter;
    let ip = client_ip(req, &state.config.trusted_proxies);
    let ua = user_agent(req);
    let ttl = state.config.session_ttl_secs;
    let secret = state.config.session_secret.clone();
    let aff = aff.trim().chars().take(32).collect::<String>();
    let k = kind(p);
    let bind_to = current.as_ref().map(|u| u.id);

    enum Outcome {
        Bound(UserRow),
        SignedIn(UserRow, String, Option<i64>),
    }
    let outcome = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                let holder = users::find_by_identity(c, k, &identity.id)?;
                if let Some(me) = bind_to {
                    if holder.as_ref().is_some_and(|h| h.id != me) {
                        return Err(ApiError::conflict(
                            ErrorCode::OauthIdentityTaken,
                            "this third-party account is already bound to another user",
                        ));
                    }
                    users::set_identity(c, me, k, &identity.id)?;
                    return Ok(Outcome::Bound(account::load_user(c, me)?));
                }
                let (user, inviter) = match holder {
                    Some(u) => (u, None),
                    None => {
                        if !register_open {
                            return Err(ApiError::forbidden(
                                ErrorCode::RegistrationClosed,
                                "the administrator has closed new registrations",
                            ));
                        }
                        let username = new_username(c, p, &identity.username)?;
                        let email = if !identity.email.is_empty()
                            && validate::email(&identity.email).is_ok()
                            && !users::email_taken(c, &identity.email, 0)?
                        {
                            identity.email.as_str()
                        } else {
                            ""
                        };
                        let display: String = identity.display_name.chars().take(20).collect();
                        let display = if validate::display_name(&display).is_ok() {
                            display
                        } else {
                            String::new()
                        };
                        let (user, inviter) = create_account(
                            c,
                            &Account {
                                username: &username,
                                password_hash: "",
                                display_name: &display,
                                email,
                                aff_code: &aff,
                                quota_new,
                                quota_invitee,
                                quota_inviter,
                            },
                        )?;
                        users::set_identity(c, user.id, k, &identity.id)?;
                        if identity.avatar_url.len() <= 512 && !identity.avatar_url.is_empty() {
                            users::set_avatar_url(c, user.id, &identity.avatar_url)?;
                        }
                        (account::load_user(c, user.id)?, inviter)
                    }
                };
                if user.status != UserStatus::Enabled.as_i32() {
                    return Err(ApiError::forbidden(
                        ErrorCode::UserDisabled,
                        "this user has been disabled",
                    ));
                }
                let session = open_session(c, user.id, ip, ua, &secret, ttl)?;
                Ok(Outcome::SignedIn(user, session, inviter))
            })
        })
        .await?;
    match outcome {
        Outcome::Bound(user) => {
            tracing::info!(user_id = user.id, provider = p.name(), "identity bound");
            Ok(HttpResponse::Ok()
                .json(json!({"success": true, "message": "bind", "data": user_json(&user)})))
        }
        Outcome::SignedIn(user, session, inviter) => {
            if let (Some(inviter), true) = (inviter, quota_inviter > 0) {
                state.relay.ledger.credit_user(inviter, quota_inviter).await;
            }
            tracing::info!(user_id = user.id, provider = p.name(), "signed in");
            let cookie = auth::session_cookie(state, session, ttl);
            Ok(HttpResponse::Ok()
                .cookie(cookie)
                .json(json!({"success": true, "message": "", "data": user_json(&user)})))
        }
    }
}

/// `DELETE /api/user/binding/{provider}`: unbinds the signed-in account's identity. Refused when
/// it is the account's last way to sign in (no password, no other identity).
pub async fn unbind(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    path: web::Path<String>,
) -> ApiResult<HttpResponse> {
    // Telegram is bound through the bot and is not a way to sign in: unbinding it is always
    // allowed.
    if path.as_str() == "telegram" {
        let user = state
            .db(move |c| {
                switchboard_store::telegram::set_user(c, me.id, 0)?;
                account::load_user(c, me.id)
            })
            .await?;
        return Ok(crate::error::ok(user_json(&user)));
    }
    let p = parse_provider(&path)?;
    let k = kind(p);
    let user = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                let user = account::load_user(c, me.id)?;
                if user.identity(k).is_empty() {
                    return Ok(user);
                }
                let others = IdentityKind::ALL
                    .into_iter()
                    .filter(|o| *o != k)
                .any(|o| !user.identity(o).is_empty());
                if user.password.is_empty() && !others {
                    return Err(ApiError::conflict(
                        ErrorCode::BindingLastMethod,
                        "this is the account's only way to sign in: set a password or bind another method first",
                    ));
                }
                users::set_identity(c, user.id, k, "")?;
                account::load_user(c, user.id)
            })
        })
        .await?;
    Ok(crate::error::ok(user_json(&user)))
}
