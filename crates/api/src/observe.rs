//! What every request gets on its way in and out, installed as the outermost middleware of the
//! app ([`observe`]): an id, a tracing span carrying it around everything done for the request
//! (its handler, and the polling and dropping of its response body, so that a stream's late
//! log lines and the access log carry it too), the id in the `X-Request-Id` response header
//! (and, for relayed calls, in the consume log), and its line in the HTTP metrics.
//!
//! The id is always made here, never taken from the client: it is the consume log's unique key.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage, HttpRequest};
use bytes::Bytes;
use tracing::Instrument;

use crate::AppState;

/// The response header that carries the request's id.
pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The request's id, in its extensions (24 bytes, kept inline).
#[derive(Debug, Clone)]
pub struct RequestId(pub switchboard_store::logs::Text);

/// The id [`observe`] gave this request (a new one where the middleware is not installed).
pub fn request_id(req: &HttpRequest) -> switchboard_store::logs::Text {
    req.extensions()
        .get::<RequestId>()
        .map(|r| r.0.clone())
        .unwrap_or_else(crate::relay::request_id)
}

/// The middleware (`.wrap(from_fn(observe))`, registered last so it runs first): see the module.
pub async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody + Unpin + 'static>,
) -> Result<ServiceResponse<Spanned<impl MessageBody + Unpin>>, actix_web::Error> {
    let started = Instant::now();
    let id = crate::relay::request_id();
    // The HTTP facts a trace exporter reads (OpenTelemetry's names), and the caller's W3C
    // `traceparent`, if any, so that an exported trace continues the caller's.
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        http.request.method = %req.method(),
        http.route = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
        traceparent = tracing::field::Empty,
    );
    if let Some(tp) = req
        .headers()
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
    {
        span.record("traceparent", tp);
    }
    let header = HeaderValue::from_str(&id).ok();
    let method = crate::metrics::method_index(req.method());
    req.extensions_mut().insert(RequestId(id));
    // Inner middleware answers its refusals rather than returning errors, so every answer comes
    // through here (an error returned all the same is answered by actix, uncounted).
    let mut res = next.call(req).instrument(span.clone()).await?;
    let status = res.status().as_u16();
    span.record("http.response.status_code", status);
    if !span.is_disabled() {
        if let Some(route) = res.request().match_pattern() {
            span.record("http.route", route.as_str());
        }
    }
    if let Some(state) = res.request().app_data::<web::Data<AppState>>() {
        let req = res.request();
        state.metrics.http_request_at(
            req.path(),
            || req.match_pattern(),
            method,
            status,
            started.elapsed(),
        );
    }
    if let Some(h) = header {
        let headers = res.headers_mut();
        if !headers.contains_key(HEADER) {
            headers.insert(HEADER, h);
        }
    }
    Ok(res.map_body(|_, body| Spanned {
        body: Some(body),
        span,
    }))
}

/// A response body polled (and dropped) inside its request's span.
pub struct Spanned<B> {
    body: Option<B>,
    span: tracing::Span,
}

impl<B: MessageBody + Unpin> MessageBody for Spanned<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.body.as_ref().map_or(BodySize::None, MessageBody::size)
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.get_mut();
        let _entered = this.span.enter();
        match this.body.as_mut() {
            Some(b) => Pin::new(b).poll_next(cx),
            None => Poll::Ready(None),
        }
    }

    fn try_into_bytes(mut self) -> Result<Bytes, Self> {
        match self.body.take().map(MessageBody::try_into_bytes) {
            Some(Ok(bytes)) => Ok(bytes),
            Some(Err(body)) => {
                self.body = Some(body);
                Err(self)
            }
            None => Ok(Bytes::new()),
        }
    }
}

impl<B> Drop for Spanned<B> {
    fn drop(&mut self) {
        // A stream that settles, or the access log that writes its line, when the body ends.
        if let Some(body) = self.body.take() {
            let _entered = self.span.enter();
            drop(body);
        }
    }
}
