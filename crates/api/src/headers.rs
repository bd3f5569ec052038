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

/// The documentation pages under [`FRAMED_PREFIX`] (the console's Guides and Tools screens show
/// them in a frame): [`CONTENT_SECURITY_POLICY`] with `frame-ancestors 'self'`, so only a page of
/// this site may frame them; everything else keeps `frame-ancestors 'none'`.
pub const CONTENT_SECURITY_POLICY_FRAMED: &str = "default-src 'self'; img-src 'self' data: https:; \
     media-src 'self' https:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; \
     frame-src 'self' https:; frame-ancestors 'self'; base-uri 'self'; form-action 'self'; \
     object-src 'none'";

/// The path prefix of the pages the console frames (`frontend/public/help`, static HTML).
pub const FRAMED_PREFIX: &str = "/help/";

// Built at compile time: `from_static` checks every byte of a value (the policy is 300 of
// them), which at run time would be done again for every answer. (Clippy's interior-mutability
// lints see the `Bytes` inside; a static value's `Bytes` has nothing to share or mutate.)
#[allow(clippy::declare_interior_mutable_const)]
const HEADERS: [(HeaderName, HeaderValue); 2] = [
    (
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    ),
    (
        HeaderName::from_static("referrer-policy"),
        HeaderValue::from_static("strict-origin-when-cross-origin"),
    ),
];
#[allow(clippy::declare_interior_mutable_const)]
const FRAME_OPTIONS_NAME: HeaderName = HeaderName::from_static("x-frame-options");
#[allow(clippy::declare_interior_mutable_const)]
const DENY: HeaderValue = HeaderValue::from_static("DENY");
#[allow(clippy::declare_interior_mutable_const)]
const SAMEORIGIN: HeaderValue = HeaderValue::from_static("SAMEORIGIN");
#[allow(clippy::declare_interior_mutable_const)]
const CSP_FRAMED: HeaderValue = HeaderValue::from_static(CONTENT_SECURITY_POLICY_FRAMED);
#[allow(clippy::declare_interior_mutable_const)]
const CSP_NAME: HeaderName = HeaderName::from_static("content-security-policy");
#[allow(clippy::declare_interior_mutable_const)]
const CSP: HeaderValue = HeaderValue::from_static(CONTENT_SECURITY_POLICY);
#[allow(clippy::declare_interior_mutable_const)]
const CSP_TURNSTILE: HeaderValue = HeaderValue::from_static(CONTENT_SECURITY_POLICY_TURNSTILE);

/// Middleware (`.wrap(from_fn(security_headers))` on the app): `X-Content-Type-Options:
/// nosniff`, `Referrer-Policy: strict-origin-when-cross-origin`, `X-Frame-Options: DENY` and
/// [`CONTENT_SECURITY_POLICY`] on every answer, refusals of the access gate, CSRF guard and
/// rate limit (401, 403, 429) included; under [`FRAMED_PREFIX`] (the Guides and Tools pages the
/// console frames) `X-Frame-Options: SAMEORIGIN` and [`CONTENT_SECURITY_POLICY_FRAMED`] instead. A response that sets one of them itself keeps its own (`/api/docs` has its own
/// policy).
#[allow(clippy::borrow_interior_mutable_const)]
pub async fn security_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let turnstile = req
        .app_data::<actix_web::web::Data<crate::AppState>>()
        .is_some_and(|s| s.settings.sign_in().turnstile.enabled);
    // The documentation pages the console frames may be framed by this site (and only them).
    let framed = req.path().starts_with(FRAMED_PREFIX);
    let (csp, frame_options) = if framed {
        (CSP_FRAMED, SAMEORIGIN)
    } else if turnstile {
        (CSP_TURNSTILE, DENY)
    } else {
        (CSP, DENY)
    };
    // Inner middleware answers its refusals (never returns them as errors), so every answer
    // comes through here.
    let mut res = next.call(req).await?.map_into_boxed_body();
    let headers = res.headers_mut();
    for (name, value) in HEADERS
        .into_iter()
        .chain([(FRAME_OPTIONS_NAME, frame_options), (CSP_NAME, csp)])
    {
        if !headers.contains_key(&name) {
            headers.insert(name, value);
        }
    }
    Ok(res)
}
