//! The direct upstream client: hyper's pooled HTTP/1 and HTTP/2 client (TLS by rustls with the
//! webpki roots, as reqwest's) under the relay's requests, without reqwest's layers.
//!
//! Providers build their calls with reqwest's request builder (its URL, headers, body and
//! timeout); [`ClientPool::execute`](crate::client::ClientPool::execute) sends a call that needs
//! nothing else of reqwest (no channel proxy, no outbound URL policy, no proxy from the
//! environment) through this client and hands back a `reqwest::Response`, so what follows is the
//! same either way. Per request, reqwest's client added a redirect policy that parses the URL
//! again (`Url::parse` of the request URI, IDNA host check included), a tower stack and its
//! futures: about 9 % of the relay's instructions per request (bench/instructions.py).
//!
//! What reqwest did and this client does the same way: connect timeout 10 s, TCP keep-alive
//! 60 s, `TCP_NODELAY`, idle connections kept 90 s, HTTP/2 where TLS negotiates it, `Accept:
//! */*` unless the request sets one, the request's overall timeout covering the response head
//! and its body. Redirects are not followed (reqwest followed up to ten): an API upstream that
//! answers a redirect is misconfigured, and following one would leave the channel's host.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::time::{Instant, Sleep};

use crate::client::CONNECT_TIMEOUT;
use crate::provider::{transport_failure, UpstreamFailure};

/// hyper's client over plain TCP or TLS, taking reqwest's request bodies.
#[derive(Clone, Debug)]
pub struct Direct {
    client: Client<HttpsConnector<HttpConnector>, reqwest::Body>,
}

impl Direct {
    /// A client with its own connection pool; `None` when TLS cannot be set up (the relay then
    /// sends through reqwest).
    pub fn new() -> Option<Direct> {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(CONNECT_TIMEOUT));
        http.set_keepalive(Some(Duration::from_secs(60)));
        let tls = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
            .ok()?
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .build(tls);
        Some(Direct { client })
    }

    /// Sends `request`: its own timeout (non-streamed calls) bounds the answer's head and
    /// body; `head_timeout` bounds the head of any call (a stream's body is not bounded).
    pub async fn execute(
        &self,
        request: reqwest::Request,
        head_timeout: Duration,
    ) -> Result<reqwest::Response, UpstreamFailure> {
        let overall = request.timeout().copied();
        let url = request.url().clone();
        let mut request: http::Request<reqwest::Body> = request
            .try_into()
            .map_err(|e: reqwest::Error| transport_failure(false, false, &e))?;
        request
            .headers_mut()
            .entry(http::header::ACCEPT)
            .or_insert(http::HeaderValue::from_static("*/*"));
        let started = Instant::now();
        let deadline = overall.map(|t| started + t);
        let head_by = match deadline {
            Some(d) => d.min(started + head_timeout),
            None => started + head_timeout,
        };
        let response = match tokio::time::timeout_at(head_by, self.client.request(request)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Err(transport_failure(false, e.is_connect(), &e)),
            Err(_) => return Err(timed_out()),
        };
        let mut response = response.map(|body| {
            reqwest::Body::wrap(Bounded {
                body,
                sleep: deadline.map(|d| Box::pin(tokio::time::sleep_until(d))),
            })
        });
        with_url(&mut response, url);
        Ok(reqwest::Response::from(response))
    }
}

/// Gives `response` the URL it answers, as reqwest's own client does. Without it,
/// `reqwest::Response::from` parses a placeholder URL for every answer (`Url::parse` with the
/// host check: ~3,000 instructions a request); the URL travels in a response extension that
/// only reqwest's `ResponseBuilderExt` can make, so it is made on an empty builder and moved.
fn with_url<B>(response: &mut http::Response<B>, url: reqwest::Url) {
    use reqwest::ResponseBuilderExt;
    if let Some(ext) = http::response::Builder::new().url(url).extensions_mut() {
        response.extensions_mut().extend(std::mem::take(ext));
    }
}

/// The failure of a call that did not answer within its time (either client).
pub(crate) fn timed_out() -> UpstreamFailure {
    transport_failure(
        true,
        false,
        &std::io::Error::new(std::io::ErrorKind::TimedOut, "operation timed out"),
    )
}

/// A response body that fails with a timeout (`io::ErrorKind::TimedOut`, which reqwest reports
/// as a timeout) once its deadline has passed.
struct Bounded {
    body: hyper::body::Incoming,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Body for Bounded {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(sleep) = self.sleep.as_mut() {
            if sleep.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Some(Err(Box::new(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the upstream's answer did not arrive in time",
                )))));
            }
        }
        Pin::new(&mut self.body)
            .poll_frame(cx)
            .map_err(|e| Box::new(e) as Self::Error)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Whether the process's environment names a proxy (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
/// either case): reqwest's clients honour it, the direct client does not, so it is then not
/// used.
pub fn environment_has_proxy() -> bool {
    ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"].iter().any(|k| {
        [k.to_string(), k.to_ascii_lowercase()]
            .iter()
            .any(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_carries_the_url_it_answers() {
        let url = reqwest::Url::parse("https://api.example.com/v1/chat/completions?x=1").unwrap();
        let mut response = http::Response::builder()
            .status(201)
            .header("x-upstream", "yes")
            .body(reqwest::Body::from("{}"))
            .unwrap();
        response.extensions_mut().insert(7_u8);
        with_url(&mut response, url.clone());
        let answer = reqwest::Response::from(response);
        assert_eq!(answer.url(), &url);
        // The rest of the answer is untouched.
        assert_eq!(answer.status(), 201);
        assert_eq!(answer.headers()["x-upstream"], "yes");
        assert_eq!(answer.extensions().get::<u8>(), Some(&7));
    }
}
