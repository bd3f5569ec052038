//! Security headers on every response (console, API and relay), installed on the whole app.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;

/// The console's Content-Security-Policy: its own scripts only (no inline script), inline styles
/// (the component library sets some), images from anywhere over HTTPS (logos, avatars), audio
/// and video from HTTPS (the tasks screen plays Suno songs and Kling videos from the providers'
/// storage), frames from itself and HTTPS (the About page may frame the operator's URL), and
/// nobody may frame it.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data: https:; \
     media-src 'self' https:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; \
     frame-src 'self' https:; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; \
     object-src 'none'";

/// [`CONTENT_SECURITY_POLICY`] while the Turnstile check is on (`TurnstileCheckEnabled`): the
/// console may also load Cloudflare's widget script (its frame is already admitted by
/// `frame-src https:`). Nothing else changes.
pub const CONTENT_SECURITY_POLICY_TURNSTILE: &str =
    "default-src 'self'; img-src 'self' data: https:; media-src 'self' https:; \
     style-src 'self' 'unsafe-inline'; script-src 'self' https://challenges.cloudflare.com; \
     connect-src 'self'; frame-src 'self' https:; frame-ancestors 'none'; base-uri 'self'; \
     form-action 'self'; object-src 'none'";

const HEADERS: [(&str, &str); 3] = [
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "strict-origin-when-cross-origin"),
    ("x-frame-options", "DENY"),
];

/// Middleware (`.wrap(from_fn(security_headers))` on the app): `X-Content-Type-Options:
/// nosniff`, `Referrer-Policy: strict-origin-when-cross-origin`, `X-Frame-Options: DENY` and
/// [`CONTENT_SECURITY_POLICY`] on every answer, refusals of the access gate, CSRF guard and
/// rate limit (401, 403, 429) included. A response that sets one of them itself keeps its own (`/api/docs` has its own
/// policy).
pub async fn security_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    use switchboard_domain::options::OptionValues;
    let turnstile = req
        .app_data::<actix_web::web::Data<crate::AppState>>()
        .is_some_and(|s| crate::settings::View(&s.view()).bool("TurnstileCheckEnabled"));
    let csp = if turnstile {
        CONTENT_SECURITY_POLICY_TURNSTILE
    } else {
        CONTENT_SECURITY_POLICY
    };
    // Inner middleware answers its refusals (never returns them as errors), so every answer
    // comes through here.
    let mut res = next.call(req).await?.map_into_boxed_body();
    let headers = res.headers_mut();
    for (name, value) in HEADERS
        .into_iter()
        .chain([("content-security-policy", csp)])
    {
        let name = HeaderName::from_static(name);
        if !headers.contains_key(&name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    }
    Ok(res)
}
