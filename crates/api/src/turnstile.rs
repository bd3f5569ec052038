//! Cloudflare Turnstile, the human check of login, registration, verification e-mails and reset
//! e-mails. When `TurnstileCheckEnabled` is on (and `/api/status` advertises it with
//! `turnstile_check` and `turnstile_site_key`), those routes take the widget's token as the
//! query parameter `turnstile` (the one-api family's convention) and the server verifies it at
//! Cloudflare's siteverify endpoint with `TurnstileSecretKey` before doing anything else. A
//! missing token is refused with 400 `turnstile_required`; a token Cloudflare does not confirm,
//! or no confirmation at all (no secret configured, Cloudflare unreachable), with 403
//! `turnstile_failed`: the check fails closed.

use crate::error::{ApiError, ApiResult};
use crate::extract::client_ip;
use crate::AppState;
use actix_web::HttpRequest;
use serde::Deserialize;
use std::time::Duration;
use switchboard_domain::ErrorCode;

/// Cloudflare's verification endpoint (overridable in [`crate::ApiConfig`] for tests).
pub const SITEVERIFY_URL: &str = "https://challenges.cloudflare.com/turnstile/v0/siteverify";

/// Longest token sent on (Cloudflare's tokens are at most 2048 characters).
pub const MAX_TOKEN: usize = 2048;

/// How long the verification may take.
pub const VERIFY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Deserialize)]
struct Verdict {
    #[serde(default)]
    success: bool,
    #[serde(default, rename = "error-codes")]
    error_codes: Vec<String>,
}

fn required() -> ApiError {
    ApiError::bad_request(
        ErrorCode::TurnstileRequired,
        "complete the human check (Turnstile) first",
    )
}

fn failed() -> ApiError {
    ApiError::forbidden(
        ErrorCode::TurnstileFailed,
        "the human check (Turnstile) failed; refresh it and try again",
    )
}

/// The `turnstile` query parameter of the request, trimmed (empty when absent).
fn token_of(req: &HttpRequest) -> String {
    url::form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(k, _)| k == "turnstile")
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_default()
}

/// Passes when Turnstile is off, or when Cloudflare confirms the request's token.
pub async fn check(state: &AppState, req: &HttpRequest) -> ApiResult<()> {
    let sign_in = state.settings.sign_in();
    let o = &sign_in.turnstile;
    if !o.enabled {
        return Ok(());
    }
    let token = token_of(req);
    if token.is_empty() {
        return Err(required());
    }
    if token.len() > MAX_TOKEN {
        return Err(failed());
    }
    let secret = o.secret_key.clone();
    if secret.is_empty() {
        tracing::warn!("TurnstileCheckEnabled is on but TurnstileSecretKey is empty: refusing");
        return Err(failed());
    }
    let client = state.relay.clients.get(None).map_err(ApiError::internal)?;
    let ip = client_ip(req, &state.config.trusted_proxies);
    let form = [
        ("secret", secret.as_str()),
        ("response", token.as_str()),
        ("remoteip", ip.as_str()),
    ];
    let answer = client
        .post(&state.config.turnstile_verify_url)
        .form(&form)
        .timeout(VERIFY_TIMEOUT)
        .send()
        .await;
    let verdict = match answer {
        Ok(resp) if resp.status().is_success() => resp.json::<Verdict>().await.ok(),
        Ok(resp) => {
            tracing::warn!(
                status = resp.status().as_u16(),
                "Turnstile siteverify answered an error"
            );
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "Turnstile siteverify could not be reached");
            None
        }
    };
    match verdict {
        Some(v) if v.success => Ok(()),
        Some(v) => {
            tracing::debug!(codes = ?v.error_codes, "Turnstile token refused");
            Err(failed())
        }
        None => Err(failed()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_the_turnstile_query_parameter() {
        let req = actix_web::test::TestRequest::get()
            .uri("/api/verification?email=a%40b.c&turnstile=%20tok%2Ben%20")
            .to_http_request();
        assert_eq!(token_of(&req), "tok+en");
        let req = actix_web::test::TestRequest::get()
            .uri("/api/verification?email=a")
            .to_http_request();
        assert_eq!(token_of(&req), "");
    }
}
