//! Cross-site request forgery defence for the session cookie.
//!
//! A call to `/api` authenticated by the session cookie (no `Authorization` header) with a
//! state-changing method (POST, PUT, DELETE, PATCH) must declare a JSON body
//! (`Content-Type: application/json`, which a cross-site form or simple `fetch` cannot send
//! without a CORS preflight this server never grants) and must come from this site: when the
//! browser sends `Sec-Fetch-Site` it must be `same-origin` or `none`; otherwise, when it sends
//! `Origin`, that must be this host. Access-token callers (scripts) are not concerned: a browser
//! never adds an `Authorization` header on its own.

use crate::auth::SESSION_COOKIE;
use crate::error::ApiError;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::HttpRequest;
use switchboard_domain::ErrorCode;

fn rejected(message: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, ErrorCode::CsrfRejected, message)
}

/// Whether the request carries an access token (what [`crate::auth`] would authenticate with).
pub fn has_access_token(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .map(|raw| {
            let raw = raw.trim();
            raw.strip_prefix("Bearer ").unwrap_or(raw).trim()
        })
        .is_some_and(|t| !t.is_empty())
}

fn has_session_cookie(req: &HttpRequest) -> bool {
    req.cookie(SESSION_COOKIE)
        .is_some_and(|c| !c.value().is_empty())
}

fn is_json(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether `origin` (`scheme://host[:port]`) names the host the request was sent to.
fn same_origin(origin: &str, own_host: &str) -> bool {
    let Ok(o) = url::Url::parse(origin) else {
        return false;
    };
    let Ok(own) = url::Url::parse(&format!("{}://{own_host}", o.scheme())) else {
        return false;
    };
    matches!(o.scheme(), "http" | "https")
        && o.host_str().is_some()
        && o.host_str() == own.host_str()
        && o.port_or_known_default() == own.port_or_known_default()
}

/// Refuses a forged cookie-authenticated state change (see the module documentation).
pub fn check(req: &HttpRequest) -> Result<(), ApiError> {
    let m = req.method();
    let changes_state =
        m == Method::POST || m == Method::PUT || m == Method::DELETE || m == Method::PATCH;
    if !changes_state || has_access_token(req) || !has_session_cookie(req) {
        return Ok(());
    }
    if !is_json(req) {
        return Err(rejected(
            "a signed-in browser request that changes something must send Content-Type: application/json",
        ));
    }
    from_this_site(req)
}

/// The request came from this site: `Sec-Fetch-Site` is `same-origin` or `none` when the browser
/// sends it; otherwise `Origin`, when sent, names this host.
fn from_this_site(req: &HttpRequest) -> Result<(), ApiError> {
    let text = |name: header::HeaderName| {
        req.headers()
            .get(name)
            .map(|v| v.to_str().unwrap_or("").trim().to_owned())
    };
    if let Some(site) = text(header::HeaderName::from_static("sec-fetch-site")) {
        if !(site.eq_ignore_ascii_case("same-origin") || site.eq_ignore_ascii_case("none")) {
            return Err(rejected("cross-site request refused"));
        }
    } else if let Some(origin) = text(header::ORIGIN) {
        if !same_origin(&origin, req.connection_info().host()) {
            return Err(rejected("cross-origin request refused"));
        }
    }
    Ok(())
}

/// For the GET that finishes a third-party sign-in (`/api/oauth/{provider}`), which binds the
/// identity to a signed-in caller: with the session cookie, the request must come from this
/// site, so that a link or image on another site cannot bind its author's identity to the
/// visitor's account (a second guard beside the sign-in state every provider's flow carries).
pub fn check_signed_in_get(req: &HttpRequest) -> Result<(), ApiError> {
    if has_access_token(req) || !has_session_cookie(req) {
        return Ok(());
    }
    from_this_site(req)
}

/// The middleware form of [`check`], wrapped around `/api`.
pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    // Answered here rather than returned as an error, so that outer middleware sees an answer.
    if let Err(e) = check(req.request()) {
        return Ok(req.error_response(e).map_into_right_body());
    }
    next.call(req)
        .await
        .map(ServiceResponse::map_into_left_body)
}

/// For the GET forms of state-changing calls (`GET /api/user/logout`, `GET /api/user/token`)
/// kept for scripts: only an access-token caller may use them; the console uses POST.
pub fn require_access_token(req: &HttpRequest) -> Result<(), ApiError> {
    if has_access_token(req) || !has_session_cookie(req) {
        Ok(())
    } else {
        Err(rejected(
            "this GET form is for access-token callers; signed-in browsers use POST",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::same_origin;

    #[test]
    fn origins() {
        assert!(same_origin("http://localhost:3000", "localhost:3000"));
        assert!(same_origin("https://example.com", "example.com"));
        assert!(same_origin("https://example.com", "example.com:443"));
        assert!(same_origin("http://[::1]:8080", "[::1]:8080"));
        assert!(same_origin("HTTP://Example.COM", "example.com"));
        assert!(!same_origin("http://localhost:3001", "localhost:3000"));
        assert!(!same_origin("https://evil.example", "example.com"));
        assert!(!same_origin("https://example.com.evil", "example.com"));
        assert!(!same_origin("null", "example.com"));
        assert!(!same_origin("", "example.com"));
        assert!(!same_origin("file:///x", "example.com"));
    }
}
