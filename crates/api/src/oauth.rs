//! Third-party sign-in, the protocols: GitHub's OAuth app flow, OpenID Connect (discovery,
//! PKCE, nonce, ID-token validation), Lark (Feishu) and the one-api family's WeChat
//! verification server. Each turns what the browser brought back (a code) into an
//! [`Identity`]; `routes::oauth` decides what that identity signs in to or is bound to.
//!
//! Every provider URL is configurable ([`OAuthEndpoints`], the issuer of OIDC is a setting), so
//! tests and self-hosted providers (GitHub Enterprise, Lark international) work the same way.

use crate::error::{ApiError, ApiResult};
use actix_web::http::StatusCode;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;
use switchboard_domain::ErrorCode;

/// How long one call to a provider may take.
pub const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// Allowed clock difference when checking an ID token's `exp` and `iat`.
pub const CLOCK_SKEW_SECS: i64 = 60;

/// Where the providers live (`GITHUB_OAUTH_URL`, `GITHUB_API_URL`, `LARK_ACCOUNTS_URL`,
/// `LARK_OPEN_URL`).
#[derive(Clone, Debug)]
pub struct OAuthEndpoints {
    /// GitHub's web origin: `/login/oauth/authorize` and `/login/oauth/access_token`.
    pub github_web: String,
    /// GitHub's REST API: `/user` and `/user/emails`.
    pub github_api: String,
    /// Lark's authorize page origin (`/open-apis/authen/v1/authorize`).
    pub lark_accounts: String,
    /// Lark's open API origin (`/open-apis/authen/v2/oauth/token`, `/open-apis/authen/v1/user_info`).
    pub lark_open: String,
}

impl Default for OAuthEndpoints {
    fn default() -> Self {
        OAuthEndpoints {
            github_web: "https://github.com".into(),
            github_api: "https://api.github.com".into(),
            lark_accounts: "https://accounts.feishu.cn".into(),
            lark_open: "https://open.feishu.cn".into(),
        }
    }
}

/// A sign-in provider, and the user column its identity is kept in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    GitHub,
    Oidc,
    Lark,
    WeChat,
}

impl Provider {
    pub fn parse(s: &str) -> Option<Provider> {
        Some(match s {
            "github" => Provider::GitHub,
            "oidc" => Provider::Oidc,
            "lark" => Provider::Lark,
            "wechat" => Provider::WeChat,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Provider::GitHub => "github",
            Provider::Oidc => "oidc",
            Provider::Lark => "lark",
            Provider::WeChat => "wechat",
        }
    }
}

/// Who the provider says the user is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Identity {
    /// The provider's stable id of the account (GitHub's numeric id, OIDC `sub`, Lark
    /// `open_id`, WeChat `openid`).
    pub id: String,
    /// A username to start from for a new account (GitHub login, a configured claim, ...).
    pub username: String,
    pub display_name: String,
    /// An address the provider says is verified; empty when it vouches for none.
    pub email: String,
    pub avatar_url: String,
}

pub fn provider_failed(what: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        StatusCode::BAD_GATEWAY,
        ErrorCode::OauthProviderFailed,
        format!("the sign-in provider failed: {what}"),
    )
}

pub fn not_configured(what: &str) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::OauthNotConfigured,
        format!("this sign-in method is not fully configured: {what}"),
    )
}

fn id_token_invalid(why: &str) -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        ErrorCode::OidcIdTokenInvalid,
        format!("the identity provider's ID token is not valid: {why}"),
    )
}

/// A random URL-safe string of `bytes` random bytes (state, PKCE verifier material).
pub fn random_token(bytes: usize) -> String {
    let buf: Vec<u8> = (0..bytes).map(|_| rand::random::<u8>()).collect();
    URL_SAFE_NO_PAD.encode(buf)
}

/// The nonce and PKCE verifier of the OIDC sign-in started with `state` (see [`derive`]): the
/// authorize URL and the code exchange compute the same pair.
pub fn oidc_nonce_and_verifier(secret: &[u8], state: &str) -> (String, String) {
    (
        derive(secret, "oidc-nonce", state),
        derive(secret, "oidc-pkce", state),
    )
}

/// PKCE S256: `BASE64URL(SHA256(verifier))`.
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A value derived from the server secret and the state (HMAC-SHA256, base64url): the PKCE
/// verifier and the nonce of an OIDC sign-in are derived rather than stored, so a state alone
/// carries them and nothing else needs to be kept between the two legs.
pub fn derive(secret: &[u8], label: &str, state: &str) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let mut ctx = ring::hmac::Context::with_key(&key);
    ctx.update(label.as_bytes());
    ctx.update(b"\0");
    ctx.update(state.as_bytes());
    URL_SAFE_NO_PAD.encode(ctx.sign().as_ref())
}

fn trim_slash(s: &str) -> &str {
    s.trim().trim_end_matches('/')
}

fn with_query(base: &str, params: &[(&str, &str)]) -> ApiResult<String> {
    let mut url = url::Url::parse(base).map_err(|e| not_configured(&format!("{base}: {e}")))?;
    {
        let mut q = url.query_pairs_mut();
        for (k, v) in params {
            if !v.is_empty() {
                q.append_pair(k, v);
            }
        }
    }
    Ok(url.into())
}

async fn json_of(resp: Result<reqwest::Response, reqwest::Error>, what: &str) -> ApiResult<Value> {
    let resp = resp.map_err(|e| provider_failed(format!("{what}: {e}")))?;
    let status = resp.status();
    let body = resp
        .bytes()
        .await
        .map_err(|e| provider_failed(format!("{what}: {e}")))?;
    let v: Value = serde_json::from_slice(&body)
        .map_err(|_| provider_failed(format!("{what} answered {status} without JSON")))?;
    if !status.is_success() {
        let why = v
            .get("error_description")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("msg"))
            .and_then(Value::as_str)
            .unwrap_or("");
        return Err(provider_failed(format!("{what} answered {status} {why}")));
    }
    Ok(v)
}

/// `a` unless it is empty.
fn or_else(a: String, b: String) -> String {
    if a.is_empty() {
        b
    } else {
        a
    }
}

fn str_of(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// GitHub

pub fn github_authorize_url(
    ep: &OAuthEndpoints,
    client_id: &str,
    state: &str,
    redirect_uri: &str,
) -> ApiResult<String> {
    with_query(
        &format!("{}/login/oauth/authorize", trim_slash(&ep.github_web)),
        &[
            ("client_id", client_id),
            ("state", state),
            ("scope", "user:email"),
            ("redirect_uri", redirect_uri),
        ],
    )
}

/// Code → access token → `/user` and the primary verified address of `/user/emails`.
pub async fn github_identity(
    client: &reqwest::Client,
    ep: &OAuthEndpoints,
    client_id: &str,
    client_secret: &str,
    code: &str,
    redirect_uri: &str,
) -> ApiResult<Identity> {
    let mut form = vec![
        ("client_id", client_id),
        ("client_secret", client_secret),
        ("code", code),
    ];
    if !redirect_uri.is_empty() {
        form.push(("redirect_uri", redirect_uri));
    }
    let token = json_of(
        client
            .post(format!(
                "{}/login/oauth/access_token",
                trim_slash(&ep.github_web)
            ))
            .header("Accept", "application/json")
            .form(&form)
            .timeout(PROVIDER_TIMEOUT)
            .send()
            .await,
        "GitHub's token endpoint",
    )
    .await?;
    // GitHub answers a refused code with 200 and `error`.
    let access = str_of(&token, "access_token");
    if access.is_empty() {
        return Err(provider_failed(format!(
            "GitHub refused the code: {}",
            or_else(str_of(&token, "error_description"), str_of(&token, "error"))
        )));
    }
    let api = trim_slash(&ep.github_api);
    let get = |path: &str| {
        client
            .get(format!("{api}{path}"))
            .bearer_auth(&access)
            .header("Accept", "application/vnd.github+json")
            .header("User-Agent", "Switchboard")
            .timeout(PROVIDER_TIMEOUT)
            .send()
    };
    let user = json_of(get("/user").await, "GitHub's /user").await?;
    let id = str_of(&user, "id");
    if id.is_empty() {
        return Err(provider_failed("GitHub's /user has no id"));
    }
    // Without the user:email scope (or with no verified primary address) there is no e-mail:
    // the sign-in goes on without one.
    let email = match json_of(get("/user/emails").await, "GitHub's /user/emails").await {
        Ok(Value::Array(list)) => list
            .iter()
            .find(|e| e["primary"] == true && e["verified"] == true)
            .map(|e| str_of(e, "email"))
            .unwrap_or_default(),
        _ => String::new(),
    };
    Ok(Identity {
        id,
        username: str_of(&user, "login"),
        display_name: str_of(&user, "name"),
        email,
        avatar_url: str_of(&user, "avatar_url"),
    })
}

// ---------------------------------------------------------------------------------------------
// OpenID Connect

/// The parts of a provider's discovery document the flow uses.
#[derive(Clone, Debug, Deserialize)]
pub struct Discovery {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    #[serde(default)]
    pub userinfo_endpoint: Option<String>,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

/// `{issuer}/.well-known/openid-configuration`, whose `issuer` must be the configured one.
pub async fn discover(client: &reqwest::Client, issuer: &str) -> ApiResult<Discovery> {
    let issuer = trim_slash(issuer);
    if issuer.is_empty() {
        return Err(not_configured("OIDCIssuer is empty"));
    }
    let v = json_of(
        client
            .get(format!("{issuer}/.well-known/openid-configuration"))
            .timeout(PROVIDER_TIMEOUT)
            .send()
            .await,
        "the OIDC discovery document",
    )
    .await?;
    let d: Discovery = serde_json::from_value(v)
        .map_err(|e| provider_failed(format!("the OIDC discovery document: {e}")))?;
    if trim_slash(&d.issuer) != issuer {
        return Err(provider_failed(format!(
            "the discovery document names issuer {}, not {issuer}",
            d.issuer
        )));
    }
    Ok(d)
}

pub struct OidcRequest<'a> {
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    /// Space- or comma-separated; `openid` is added when missing.
    pub scopes: &'a str,
    pub state: &'a str,
    pub nonce: &'a str,
    pub pkce_verifier: &'a str,
}

pub fn oidc_authorize_url(d: &Discovery, r: &OidcRequest<'_>) -> ApiResult<String> {
    let mut scopes: Vec<&str> = r
        .scopes
        .split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if !scopes.contains(&"openid") {
        scopes.insert(0, "openid");
    }
    let scope = scopes.join(" ");
    let challenge = pkce_challenge(r.pkce_verifier);
    with_query(
        &d.authorization_endpoint,
        &[
            ("response_type", "code"),
            ("client_id", r.client_id),
            ("redirect_uri", r.redirect_uri),
            ("scope", &scope),
            ("state", r.state),
            ("nonce", r.nonce),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
    )
}

/// What the ID token (and the userinfo endpoint) must say, and which claims name the user.
pub struct OidcExpect<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub client_secret: &'a str,
    pub nonce: &'a str,
    /// Claims tried in order for the username (`OIDCUsernameClaims`).
    pub username_claims: &'a str,
    /// Claims tried in order for the e-mail address (`OIDCEmailClaims`).
    pub email_claims: &'a str,
    pub now: i64,
}

/// Code (with the PKCE verifier) → tokens → a validated ID token → the identity; claims missing
/// from the ID token are looked up at the userinfo endpoint.
pub async fn oidc_identity(
    client: &reqwest::Client,
    d: &Discovery,
    r: &OidcRequest<'_>,
    expect: &OidcExpect<'_>,
    code: &str,
) -> ApiResult<Identity> {
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", r.redirect_uri),
        ("client_id", r.client_id),
        ("code_verifier", r.pkce_verifier),
    ];
    // client_secret_basic is the default of the spec; client_secret_post when that is all the
    // provider lists.
    let basic = d
        .token_endpoint_auth_methods_supported
        .as_ref()
        .is_none_or(|m| m.iter().any(|x| x == "client_secret_basic") || m.is_empty());
    let mut rb = client
        .post(&d.token_endpoint)
        .header("Accept", "application/json")
        .timeout(PROVIDER_TIMEOUT);
    rb = if basic {
        rb.basic_auth(
            form_encode(expect.client_id),
            Some(form_encode(expect.client_secret)),
        )
        .form(&form)
    } else {
        let mut f = form.to_vec();
        f.push(("client_secret", expect.client_secret));
        rb.form(&f)
    };
    let tokens = json_of(rb.send().await, "the OIDC token endpoint").await?;
    let id_token = str_of(&tokens, "id_token");
    if id_token.is_empty() {
        return Err(provider_failed("the OIDC token answer has no id_token"));
    }
    let jwks = json_of(
        client
            .get(&d.jwks_uri)
            .timeout(PROVIDER_TIMEOUT)
            .send()
            .await,
        "the OIDC key set",
    )
    .await?;
    let mut claims = jwt::verify(&id_token, &jwks, expect)?;
    let sub = str_of(&claims, "sub");
    let access = str_of(&tokens, "access_token");
    let wants = |list: &str, c: &Value| claim_names(list).all(|k| str_of(c, k).is_empty());
    if let (Some(info_url), false) = (&d.userinfo_endpoint, access.is_empty()) {
        if wants(expect.username_claims, &claims) || wants(expect.email_claims, &claims) {
            if let Ok(info) = json_of(
                client
                    .get(info_url)
                    .bearer_auth(&access)
                    .timeout(PROVIDER_TIMEOUT)
                    .send()
                    .await,
                "the OIDC userinfo endpoint",
            )
            .await
            {
                // Userinfo about somebody else is ignored (OIDC Core 5.3.2).
                if str_of(&info, "sub") == sub {
                    if let (Some(c), Value::Object(extra)) = (claims.as_object_mut(), info) {
                        for (k, v) in extra {
                            c.entry(k).or_insert(v);
                        }
                    }
                }
            }
        }
    }
    let first = |list: &str| {
        claim_names(list)
            .map(|k| str_of(&claims, k))
            .find(|v| !v.is_empty())
            .unwrap_or_default()
    };
    // An address the provider says is unverified is not taken.
    let email = if claims.get("email_verified") == Some(&Value::Bool(false)) {
        String::new()
    } else {
        first(expect.email_claims)
    };
    Ok(Identity {
        username: first(expect.username_claims),
        display_name: str_of(&claims, "name"),
        email,
        avatar_url: str_of(&claims, "picture"),
        id: sub,
    })
}

/// The claim names of a comma-separated setting (`OIDCUsernameClaims`, `OIDCEmailClaims`).
fn claim_names(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|k| !k.is_empty())
}

/// RFC 6749 2.3.1: the client id and secret are form-encoded before HTTP Basic.
fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Compact JWS verification of ID tokens with the provider's JWK set (RS256, RS384, RS512,
/// PS256, ES256, ES384) and the claim checks of OIDC Core 3.1.3.7.
pub mod jwt {
    use super::*;
    use ring::signature;

    fn b64(part: &str) -> Result<Vec<u8>, ApiError> {
        URL_SAFE_NO_PAD
            .decode(part.trim_end_matches('='))
            .map_err(|_| id_token_invalid("not base64url"))
    }

    fn key_for<'a>(jwks: &'a Value, kid: &str, kty: &str) -> Result<&'a Value, ApiError> {
        let keys = jwks
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| id_token_invalid("the provider's key set has no keys"))?;
        let usable = |k: &&Value| k["kty"] == kty && k.get("use").is_none_or(|u| u == "sig");
        let found = if kid.is_empty() {
            let mut it = keys.iter().filter(usable);
            match (it.next(), it.next()) {
                (Some(k), None) => Some(k),
                _ => None,
            }
        } else {
            keys.iter().filter(usable).find(|k| k["kid"] == kid)
        };
        found.ok_or_else(|| id_token_invalid("no key of the provider matches the token's kid"))
    }

    fn check_signature(alg: &str, key: &Value, signed: &[u8], sig: &[u8]) -> Result<(), ApiError> {
        let field = |name: &str| -> Result<Vec<u8>, ApiError> {
            b64(key.get(name).and_then(Value::as_str).unwrap_or_default())
        };
        let ok = match alg {
            "RS256" | "RS384" | "RS512" | "PS256" => {
                let params: &signature::RsaParameters = match alg {
                    "RS256" => &signature::RSA_PKCS1_2048_8192_SHA256,
                    "RS384" => &signature::RSA_PKCS1_2048_8192_SHA384,
                    "RS512" => &signature::RSA_PKCS1_2048_8192_SHA512,
                    _ => &signature::RSA_PSS_2048_8192_SHA256,
                };
                signature::RsaPublicKeyComponents {
                    n: field("n")?,
                    e: field("e")?,
                }
                .verify(params, signed, sig)
                .is_ok()
            }
            "ES256" | "ES384" => {
                let (crv, alg_ring): (&str, &dyn signature::VerificationAlgorithm) = match alg {
                    "ES256" => ("P-256", &signature::ECDSA_P256_SHA256_FIXED),
                    _ => ("P-384", &signature::ECDSA_P384_SHA384_FIXED),
                };
                if key["crv"] != crv {
                    return Err(id_token_invalid("the key's curve does not match alg"));
                }
                let mut point = vec![4u8];
                point.extend(field("x")?);
                point.extend(field("y")?);
                signature::UnparsedPublicKey::new(alg_ring, point)
                    .verify(signed, sig)
                    .is_ok()
            }
            _ => return Err(id_token_invalid(&format!("unsupported alg {alg}"))),
        };
        if ok {
            Ok(())
        } else {
            Err(id_token_invalid("bad signature"))
        }
    }

    /// The token's claims when its signature, issuer, audience, authorized party, expiry,
    /// issue time and nonce are all right.
    pub fn verify(token: &str, jwks: &Value, e: &OidcExpect<'_>) -> Result<Value, ApiError> {
        let mut parts = token.split('.');
        let (Some(h), Some(p), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(id_token_invalid("not a compact JWS"));
        };
        let header: Value = serde_json::from_slice(&b64(h)?)
            .map_err(|_| id_token_invalid("the header is not JSON"))?;
        let alg = header["alg"].as_str().unwrap_or_default();
        let kty = if alg.starts_with("ES") { "EC" } else { "RSA" };
        if alg == "none" || alg.starts_with("HS") || alg.is_empty() {
            return Err(id_token_invalid(&format!("alg {alg:?} is not accepted")));
        }
        let key = key_for(jwks, header["kid"].as_str().unwrap_or_default(), kty)?;
        let signed = &token.as_bytes()[..h.len() + 1 + p.len()];
        check_signature(alg, key, signed, &b64(s)?)?;
        let claims: Value = serde_json::from_slice(&b64(p)?)
            .map_err(|_| id_token_invalid("the claims are not JSON"))?;
        if trim_slash(claims["iss"].as_str().unwrap_or_default()) != trim_slash(e.issuer) {
            return Err(id_token_invalid("wrong issuer"));
        }
        let audiences: Vec<&str> = match &claims["aud"] {
            Value::String(a) => vec![a.as_str()],
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !audiences.contains(&e.client_id) {
            return Err(id_token_invalid("the token is not for this client"));
        }
        if audiences.len() > 1 && claims["azp"].as_str() != Some(e.client_id) {
            return Err(id_token_invalid("wrong authorized party"));
        }
        let exp = claims["exp"]
            .as_i64()
            .ok_or_else(|| id_token_invalid("no expiry"))?;
        if exp + CLOCK_SKEW_SECS <= e.now {
            return Err(id_token_invalid("the token has expired"));
        }
        if claims["iat"]
            .as_i64()
            .is_some_and(|iat| iat > e.now + CLOCK_SKEW_SECS)
        {
            return Err(id_token_invalid("the token was issued in the future"));
        }
        if claims["nonce"].as_str() != Some(e.nonce) {
            return Err(id_token_invalid("wrong nonce"));
        }
        if str_of(&claims, "sub").is_empty() {
            return Err(id_token_invalid("no subject"));
        }
        Ok(claims)
    }
}

// ---------------------------------------------------------------------------------------------
// Lark (Feishu)

pub fn lark_authorize_url(
    ep: &OAuthEndpoints,
    app_id: &str,
    state: &str,
    redirect_uri: &str,
) -> ApiResult<String> {
    with_query(
        &format!(
            "{}/open-apis/authen/v1/authorize",
            trim_slash(&ep.lark_accounts)
        ),
        &[
            ("client_id", app_id),
            ("redirect_uri", redirect_uri),
            ("state", state),
        ],
    )
}

/// Lark's answers carry `code` 0 on success, whatever the HTTP status.
fn lark_ok(v: &Value, what: &str) -> ApiResult<()> {
    match v.get("code").and_then(Value::as_i64) {
        Some(0) | None => Ok(()),
        Some(c) => Err(provider_failed(format!(
            "{what}: code {c} {}",
            or_else(str_of(v, "error_description"), str_of(v, "msg"))
        ))),
    }
}

/// Code → user access token (OAuth v2 token endpoint) → user info (`open_id`).
pub async fn lark_identity(
    client: &reqwest::Client,
    ep: &OAuthEndpoints,
    app_id: &str,
    app_secret: &str,
    code: &str,
    redirect_uri: &str,
) -> ApiResult<Identity> {
    let open = trim_slash(&ep.lark_open);
    let token = json_of(
        client
            .post(format!("{open}/open-apis/authen/v2/oauth/token"))
            .json(&serde_json::json!({
                "grant_type": "authorization_code",
                "client_id": app_id,
                "client_secret": app_secret,
                "code": code,
                "redirect_uri": redirect_uri,
            }))
            .timeout(PROVIDER_TIMEOUT)
            .send()
            .await,
        "Lark's token endpoint",
    )
    .await?;
    lark_ok(&token, "Lark's token endpoint")?;
    let access = str_of(&token, "access_token");
    if access.is_empty() {
        return Err(provider_failed("Lark's token answer has no access_token"));
    }
    let info = json_of(
        client
            .get(format!("{open}/open-apis/authen/v1/user_info"))
            .bearer_auth(&access)
            .timeout(PROVIDER_TIMEOUT)
            .send()
            .await,
        "Lark's user_info",
    )
    .await?;
    lark_ok(&info, "Lark's user_info")?;
    let data = &info["data"];
    let id = str_of(data, "open_id");
    if id.is_empty() {
        return Err(provider_failed("Lark's user_info has no open_id"));
    }
    let name = str_of(data, "name");
    Ok(Identity {
        id,
        username: str_of(data, "en_name"),
        display_name: name,
        email: or_else(str_of(data, "enterprise_email"), str_of(data, "email")),
        avatar_url: str_of(data, "avatar_url"),
    })
}

// ---------------------------------------------------------------------------------------------
// WeChat (the one-api family's verification server)

/// `GET {server}/api/wechat/user?code=` with the server's token: the `openid` the code was
/// issued to (codes are valid for 3 minutes on that server).
pub async fn wechat_identity(
    client: &reqwest::Client,
    server: &str,
    token: &str,
    code: &str,
) -> ApiResult<Identity> {
    let server = trim_slash(server);
    if server.is_empty() {
        return Err(not_configured("WeChatServerAddress is empty"));
    }
    let url = with_query(&format!("{server}/api/wechat/user"), &[("code", code)])?;
    let resp = client
        .get(url)
        .header("Authorization", token)
        .timeout(PROVIDER_TIMEOUT)
        .send()
        .await
        .map_err(|e| provider_failed(format!("the WeChat server: {e}")))?;
    let status = resp.status();
    let v: Value = resp.json().await.map_err(|_| {
        provider_failed(format!("the WeChat server answered {status} without JSON"))
    })?;
    let openid = str_of(&v, "data");
    if v["success"] != true || openid.is_empty() {
        if status.is_server_error() {
            return Err(provider_failed(format!(
                "the WeChat server answered {status}"
            )));
        }
        return Err(ApiError::bad_request(
            ErrorCode::WechatCodeInvalid,
            "the WeChat verification code is wrong or has expired",
        ));
    }
    Ok(Identity {
        username: String::new(),
        display_name: String::new(),
        email: String::new(),
        avatar_url: String::new(),
        id: openid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2048-bit RSA key (RSAPrivateKey DER, base64) made for these tests only.
    const TEST_RSA_DER: &str = concat!(
        "MIIEogIBAAKCAQEAmrPVGf9JX8R36JK+nlJB29By8f3pDKxwB+TIUqt/eShRLn4Iik7D/rfEq0msc/nhvKZgQd/xSY",
        "/Js5eSkQM852SlZLwN8GZUL9YG4tJv6WlP1JAt1yreHgi+6vO7XdD9oYpBf4CAaj7oO4ZK53p0f8OUPxg/87a8yxmE",
        "BDNLsNPKwf7WW4LJfsR5F14KwJ6rA8omchabh7u1GRXf5ovgPk7uvFRqObZQozB7FdZp1WPgXVPh2+l+ow6Vdpku9d",
        "IDTy9tvHTlzggwyxD6qks7KbG1lTy33rs3PZaLpAO5CkfHuFhNaMGD1GR7YezmYEJRkAVlgQzFw3cuxOY/17GB5wID",
        "AQABAoIBAB13vtJeZdgXoO2MskGPEptv181Pm8o9uHNQeXYB09y8uMX93NuXiE7nK0+jT3Wh9gVMvc4efaQQ/w82Ao",
        "Wb08iRy81l4tPVchjQkGw5QHb6B+pJ8mlncXrQGKnBdoG20vEn2DUUwaE7TVo1SORR14oUs5LXKCtgthKL0DFKohLS",
        "4RxmT9umAuisbgX0Q2E+PM/Z5PlD7/eHRSAgkJtQKUkvqukskM8NawcSYfEHemrin740sfxlsGEtmi2SUD5Qu08V9Z",
        "MLTf+6qajhI/hnMQ3/Py61C+ZwwzXZW0jaHSuZ9M8HDQ0gxmcs27l1+BRaNRq25dt8JwJjleTIv263Io0CgYEAybxu",
        "IE+lEjo1MQfiTBc7bJRO6gS6HqXqLaMQR6eNhXqG/QJ1pBSC+oWxo32ui1SaPbFTk28FBBFloITAqvRkPryKx7o5cu",
        "n/HtS+4+nBzX4Gia1xz0UxTku9XN5lyMu5KSFw8AVSrIfgwWEu1BiovHouds5Rj2qM09YVJbz/UeUCgYEAxFCp61W0",
        "V3m6QqDkpE9ZVn0K5uOQ260+ZeSfcbc91QfyjlI/m9Y5IMQrJG0H8NQ1pL8gE/+y8tM98ZFW9K3VDJZO9NZ7nVG21C",
        "8MHJChBcxkSP7jng6MeGEOjLNGhDAt1pWYHRW2+Vd1wMjBEypHeRMCcmrf0+mcg8u/L0IRd9sCgYB7crtROmuhA82Y",
        "+2IXff/3KapAujPKnWz4EFjeAEIx9BC2stKaXZLpCvbxPO+ag2L/bYvfJIjFPIAcAiCEfJj7axThs6uEDnz3uOg3P8",
        "xAm2YUyfZjB8xsRRzTv6Q5g7EC4lviBN/ahCudKoMldxGKhJn6SbbPNDyJRPAb79OtoQKBgD0lltd7WXHJs49fR/g5",
        "0uzSg9vI0+zouD/KhzNHTRYWpKFZ0wA6KI8hKwLshwWnQ5IuCdLQ2S8zRt8AUyJhJrQF+U/fop8svZK3mMEo9060DC",
        "SEZ+dqRqyUJpECohs4Wn61F60vf0+Iw1+p6CGNELgQiLmUumTqJdsTUlho7sHzAoGAFvtOA8Y0/G/CKt5u+y0EZz61",
        "eFToXEMnV3R9nCWl+rsRXXLYop7RYDQB9VlyiH7/FmbCo9ITn4jQPAbiOIiEUAClPc6JQdORbUMXly/dC0Mcldc4UT",
        "/CWeg8WEijhlvo4NwB6vaE+UzMiYFyLExKR9tQfqd5cJBd77zc26YF9n8=",
    );

    fn rs256_token(claims: &Value, alg: &str) -> (String, Value) {
        use ring::rand::SystemRandom;
        use ring::signature::{RsaKeyPair, RsaPublicKeyComponents, RSA_PKCS1_SHA256};
        let der = base64::engine::general_purpose::STANDARD
            .decode(TEST_RSA_DER)
            .unwrap();
        let pair = RsaKeyPair::from_der(&der).unwrap();
        let header =
            URL_SAFE_NO_PAD.encode(serde_json::json!({"alg": alg, "kid": "r1"}).to_string());
        let input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(claims.to_string()));
        let mut sig = vec![0; pair.public().modulus_len()];
        pair.sign(
            &RSA_PKCS1_SHA256,
            &SystemRandom::new(),
            input.as_bytes(),
            &mut sig,
        )
        .unwrap();
        let parts = RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
        let jwks = serde_json::json!({"keys": [
            {"kty": "EC", "kid": "other", "crv": "P-256", "x": "", "y": ""},
            {"kty": "RSA", "kid": "r1", "use": "sig",
             "n": URL_SAFE_NO_PAD.encode(&parts.n), "e": URL_SAFE_NO_PAD.encode(&parts.e)}
        ]});
        (format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig)), jwks)
    }

    #[test]
    fn rs256_id_tokens_verify_and_forgeries_do_not() {
        let expect = OidcExpect {
            issuer: "https://id.example/",
            client_id: "c1",
            client_secret: "",
            nonce: "n1",
            username_claims: "",
            email_claims: "",
            now: 1_800_000_000,
        };
        let claims = serde_json::json!({
            "iss": "https://id.example", "aud": ["c1", "c2"], "azp": "c1", "sub": "s1",
            "exp": 1_800_000_100, "iat": 1_800_000_000, "nonce": "n1"
        });
        let (token, jwks) = rs256_token(&claims, "RS256");
        let got = jwt::verify(&token, &jwks, &expect).unwrap();
        assert_eq!(got["sub"], "s1");

        // Another party among several audiences must be named the authorized party.
        let mut c = claims.clone();
        c["azp"] = "c2".into();
        let (t, j) = rs256_token(&c, "RS256");
        assert!(jwt::verify(&t, &j, &expect).is_err());
        // A signature over other claims does not carry over.
        let forged = {
            let mut p: Vec<&str> = token.split('.').collect();
            let other = URL_SAFE_NO_PAD.encode(
                serde_json::json!({"iss": "https://id.example", "aud": "c1", "sub": "root",
                    "exp": 1_800_000_100, "nonce": "n1"})
                .to_string(),
            );
            p[1] = &other;
            p.join(".")
        };
        assert!(jwt::verify(&forged, &jwks, &expect).is_err());
        // Unsigned and shared-secret tokens are never taken, whatever they claim.
        for alg in ["none", "HS256"] {
            let header = URL_SAFE_NO_PAD.encode(serde_json::json!({"alg": alg}).to_string());
            let body = URL_SAFE_NO_PAD.encode(claims.to_string());
            let t = format!("{header}.{body}.");
            assert!(jwt::verify(&t, &jwks, &expect).is_err(), "{alg}");
        }
        // Within the clock skew an expiry just past is still taken; beyond it, not.
        let late = OidcExpect {
            now: 1_800_000_100 + CLOCK_SKEW_SECS - 1,
            ..expect
        };
        assert!(jwt::verify(&token, &jwks, &late).is_ok());
        let later = OidcExpect {
            now: 1_800_000_100 + CLOCK_SKEW_SECS,
            ..late
        };
        assert!(jwt::verify(&token, &jwks, &later).is_err());
    }

    #[test]
    fn pkce_matches_rfc7636_appendix_b() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn derived_values_depend_on_secret_label_and_state() {
        let a = derive(b"k1", "nonce", "s");
        assert_eq!(a, derive(b"k1", "nonce", "s"));
        assert_ne!(a, derive(b"k2", "nonce", "s"));
        assert_ne!(a, derive(b"k1", "pkce", "s"));
        assert_ne!(a, derive(b"k1", "nonce", "t"));
        assert!(
            a.len() >= 43,
            "a PKCE verifier needs at least 43 characters"
        );
    }

    #[test]
    fn authorize_urls_carry_what_the_providers_need() {
        let ep = OAuthEndpoints::default();
        let u = github_authorize_url(&ep, "cid", "st", "").unwrap();
        assert_eq!(
            u,
            "https://github.com/login/oauth/authorize?client_id=cid&state=st&scope=user%3Aemail"
        );
        let d = Discovery {
            issuer: "https://id.example".into(),
            authorization_endpoint: "https://id.example/auth?x=1".into(),
            token_endpoint: String::new(),
            jwks_uri: String::new(),
            userinfo_endpoint: None,
            token_endpoint_auth_methods_supported: None,
        };
        let u = oidc_authorize_url(
            &d,
            &OidcRequest {
                client_id: "c",
                redirect_uri: "https://sb.example/oauth/oidc",
                scopes: "email,profile",
                state: "st",
                nonce: "n",
                pkce_verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
            },
        )
        .unwrap();
        assert!(u.starts_with("https://id.example/auth?x=1&response_type=code&client_id=c"));
        assert!(u.contains("scope=openid+email+profile"), "{u}");
        assert!(u.contains("code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(u.contains("code_challenge_method=S256&") || u.ends_with("S256"));
        assert!(u.contains("nonce=n"));
    }
}
