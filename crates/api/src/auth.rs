//! Authentication: bcrypt passwords, server-side sessions (HttpOnly, SameSite cookie), access
//! tokens for scripts, and the role extractors `AuthUser`, `AdminUser`, `RootUser`.

use crate::error::{ApiError, ApiResult};
use crate::AppState;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use futures_util::future::LocalBoxFuture;
use hmac::{Hmac, Mac};
use rand::distr::{Alphanumeric, SampleString};
use rand::RngCore;
use sha2::{Digest, Sha256};
use switchboard_domain::user::{Role, UserStatus};
use switchboard_domain::ErrorCode;
use switchboard_store::{now, sessions, users};

pub const SESSION_COOKIE: &str = "session";

pub fn hash_password(password: &str, cost: u32) -> ApiResult<String> {
    bcrypt::hash(password, cost).map_err(ApiError::internal)
}

/// Verifies against a stored bcrypt hash (`$2a$`/`$2b$`/`$2y$`, as the one-api family writes).
pub fn verify_password(password: &str, hash: &str) -> bool {
    bcrypt::verify(password, hash).unwrap_or(false)
}

/// Spends the time of one verification when there is no user to check against, so that unknown
/// users and wrong passwords take the same time and get the same answer. `dummy_hash` is a hash
/// of a random string made at start with the configured cost.
pub fn verify_dummy(password: &str, dummy_hash: &str) {
    let _ = bcrypt::verify(password, dummy_hash);
}

/// A random alphanumeric string for generated passwords, access tokens and codes.
pub fn random_string(len: usize) -> String {
    Alphanumeric.sample_string(&mut rand::rng(), len)
}

/// SHA-256 of `s` in lowercase hex: how API keys, access tokens and codes are stored.
pub fn sha256_hex(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    // Every relayed request hashes its key: `encode_to_slice` writes the 64 digits straight
    // into a buffer, where `hex::encode` collects them one `char` at a time (~1,700
    // instructions). It fails only on a buffer of the wrong length, which this one is not.
    let mut digits = [0u8; 64];
    match hex::encode_to_slice(digest, &mut digits) {
        Ok(()) => String::from_utf8_lossy(&digits).into_owned(),
        Err(_) => hex::encode(digest),
    }
}

/// Session ids are stored as HMAC(SESSION_SECRET, id): rotating the secret signs everyone out.
pub fn session_hash(secret: &[u8], id: &str) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret) {
        Ok(m) => m,
        Err(_) => return sha256_hex(id),
    };
    mac.update(id.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

pub fn new_session_id() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

pub fn session_cookie(state: &AppState, value: String, max_age_secs: i64) -> Cookie<'static> {
    Cookie::build(SESSION_COOKIE, value)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.config.secure_cookie)
        .max_age(actix_web::cookie::time::Duration::seconds(max_age_secs))
        .finish()
}

pub fn removal_cookie(state: &AppState) -> Cookie<'static> {
    let mut c = session_cookie(state, String::new(), 0);
    c.make_removal();
    c
}

/// The signed-in user of a request.
#[derive(Debug, Clone)]
pub struct CurrentUser {
    pub id: i64,
    pub username: String,
    pub role: Role,
    pub group: String,
    /// Set when the request came with a session cookie (not an access token).
    pub session_hash: Option<String>,
}

enum Credential {
    Token(String),
    Session(String),
}

fn credential(req: &HttpRequest) -> Option<Credential> {
    if let Some(h) = req.headers().get(actix_web::http::header::AUTHORIZATION) {
        let raw = h.to_str().unwrap_or_default().trim();
        let token = raw.strip_prefix("Bearer ").unwrap_or(raw).trim();
        if !token.is_empty() {
            return Some(Credential::Token(token.to_owned()));
        }
    }
    req.cookie(SESSION_COOKIE)
        .map(|c| c.value().to_owned())
        .filter(|v| !v.is_empty())
        .map(Credential::Session)
}

/// The signed-in user of a request: the one the route's access gate already resolved, or
/// looked up from the request's credentials.
pub async fn authenticate(req: HttpRequest) -> ApiResult<CurrentUser> {
    if let Some(user) = req.extensions().get::<CurrentUser>() {
        return Ok(user.clone());
    }
    authenticate_credentials(req).await
}

async fn authenticate_credentials(req: HttpRequest) -> ApiResult<CurrentUser> {
    let state = req
        .app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::internal("application state missing"))?;
    let cred = credential(&req).ok_or_else(|| {
        ApiError::new(
            actix_web::http::StatusCode::UNAUTHORIZED,
            ErrorCode::NotLoggedIn,
            "not logged in",
        )
    })?;
    let ttl = state.config.session_ttl_secs;
    let secret = state.config.session_secret.clone();
    state
        .db(move |c| {
            let (user, session_hash) = match cred {
                Credential::Token(t) => {
                    let user =
                        users::find_by_access_token_hash(c, &sha256_hex(&t)).map_err(|e| {
                            if e.is_not_found() {
                                ApiError::new(
                                    actix_web::http::StatusCode::UNAUTHORIZED,
                                    ErrorCode::InvalidAccessToken,
                                    "invalid access token",
                                )
                            } else {
                                e.into()
                            }
                        })?;
                    (user, None)
                }
                Credential::Session(id) => {
                    let hash = session_hash(&secret, &id);
                    let t = now();
                    let session = sessions::find_valid(c, &hash, t)?.ok_or_else(|| {
                        ApiError::new(
                            actix_web::http::StatusCode::UNAUTHORIZED,
                            ErrorCode::SessionExpired,
                            "your session has expired, please log in again",
                        )
                    })?;
                    // Slide the expiry once half of the lifetime has passed.
                    if session.expires_at - t < ttl / 2 {
                        sessions::touch(c, &hash, t, t + ttl)?;
                    }
                    let user = users::find(c, session.user_id).map_err(|e| {
                        if e.is_not_found() {
                            ApiError::unauthorized("your account no longer exists")
                        } else {
                            e.into()
                        }
                    })?;
                    (user, Some(hash))
                }
            };
            if user.status != UserStatus::Enabled.as_i32() {
                return Err(ApiError::forbidden(
                    ErrorCode::UserDisabled,
                    "this user has been disabled",
                ));
            }
            Ok(CurrentUser {
                id: user.id,
                username: user.username,
                role: Role::from_stored(user.role),
                group: user.group_name,
                session_hash,
            })
        })
        .await
}

/// The message of the 403 for a caller below `Admin` / `Root`.
pub const ADMIN_ONLY: &str = "permission denied: administrators only";
pub const ROOT_ONLY: &str = "permission denied: the root user only";

macro_rules! role_extractor {
    ($name:ident, $check:expr, $msg:expr) => {
        pub struct $name(pub CurrentUser);

        impl FromRequest for $name {
            type Error = ApiError;
            type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

            fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
                let req = req.clone();
                Box::pin(async move {
                    let user = authenticate(req).await?;
                    let check: fn(Role) -> bool = $check;
                    if !check(user.role) {
                        return Err(ApiError::forbidden(ErrorCode::Forbidden, $msg));
                    }
                    Ok($name(user))
                })
            }
        }
    };
}

role_extractor!(AuthUser, |_| true, "");
role_extractor!(AdminUser, Role::is_admin, ADMIN_ONLY);
role_extractor!(RootUser, |r| r == Role::Root, ROOT_ONLY);
