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
        let headers = request.headers_mut();
        headers
            .entry(http::header::ACCEPT)
            .or_insert(http::HeaderValue::from_static("*/*"));
        if let http::header::Entry::Vacant(e) = headers.entry(http::header::HOST) {
            if let Some(host) = plain_http_host(&url) {
                e.insert(host);
            }
        }
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

/// The `Host` header of a request to an `http://` URL, as hyper's client writes it when the
/// request has none: the URL's host (IPv6 in brackets, a name in its ASCII form) and the port
/// unless it is 80. Read off the parsed URL that the request carries anyway: hyper's client
/// parses the URI's authority three times and formats a string for it (~2,200 instructions a
/// request under callgrind). `None` for any other scheme: over TLS the connection may be
/// HTTP/2, where the authority travels as `:authority` and hyper sets no `Host`.
fn plain_http_host(url: &reqwest::Url) -> Option<http::HeaderValue> {
    if url.scheme() != "http" {
        return None;
    }
    let host = url.host_str()?;
    let mut value = Vec::with_capacity(host.len() + 6);
    value.extend_from_slice(host.as_bytes());
    if let Some(port) = url.port() {
        value.push(b':');
        let mut digits = [0u8; 5];
        let mut n = port;
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        value.extend_from_slice(&digits[at..]);
    }
    http::HeaderValue::from_maybe_shared(Bytes::from(value)).ok()
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

    fn host_of(url: &str) -> Option<String> {
        let url = reqwest::Url::parse(url).unwrap();
        plain_http_host(&url).map(|v| v.to_str().unwrap().to_owned())
    }

    #[test]
    fn the_host_header_of_a_plain_http_url_is_what_hyper_would_write() {
        for (url, want) in [
            ("http://127.0.0.1:8080/v1/chat", Some("127.0.0.1:8080")),
            ("http://10.0.0.2:1/", Some("10.0.0.2:1")),
            ("http://h:65535/", Some("h:65535")),
            ("http://h:0/", Some("h:0")),
            // The default port is left out, written or not.
            ("http://api.example.com/v1", Some("api.example.com")),
            ("http://api.example.com:80/v1", Some("api.example.com")),
            ("http://API.Example.COM:443/", Some("api.example.com:443")),
            ("http://[::1]:11434/api", Some("[::1]:11434")),
            ("http://bücher.example/", Some("xn--bcher-kva.example")),
            // TLS may be HTTP/2, which carries the authority otherwise: hyper decides there.
            ("https://api.example.com:8443/v1", None),
        ] {
            assert_eq!(host_of(url).as_deref(), want, "{url}");
        }
    }

    /// The request line and headers an upstream on a port of its own receives from
    /// [`Direct::execute`] of the request `build` makes for that port, with the port and the
    /// answer's status.
    async fn head_received(build: impl FnOnce(u16) -> reqwest::Request) -> (u16, u16, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = sock.read(&mut buf).await.unwrap();
                assert!(
                    n > 0,
                    "the connection closed before the request's head ended"
                );
                head.extend_from_slice(&buf[..n]);
            }
            sock.write_all(b"HTTP/1.1 204 No Content\r\n\r\n")
                .await
                .unwrap();
            String::from_utf8(head).unwrap()
        });
        let answer = Direct::new()
            .unwrap()
            .execute(build(port), Duration::from_secs(5))
            .await
            .unwrap();
        (port, answer.status().as_u16(), server.await.unwrap())
    }

    /// The values of the header lines named `name` in a request head.
    fn header_values<'h>(head: &'h str, name: &str) -> Vec<&'h str> {
        head.split("\r\n")
            .filter_map(|l| l.split_once(':'))
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
            .collect()
    }

    #[tokio::test]
    async fn a_plain_http_upstream_gets_one_host_header_with_its_port() {
        let (port, status, head) = head_received(|port| {
            reqwest::Client::new()
                .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
                .header("content-type", "application/json")
                .body("{}")
                .build()
                .unwrap()
        })
        .await;
        assert_eq!(status, 204);
        assert!(
            head.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"),
            "{head}"
        );
        assert_eq!(
            header_values(&head, "host"),
            [format!("127.0.0.1:{port}")],
            "{head}"
        );
    }

    #[tokio::test]
    async fn a_host_header_the_request_sets_is_kept() {
        let (_, status, head) = head_received(|port| {
            reqwest::Client::new()
                .get(format!("http://127.0.0.1:{port}/"))
                .header("host", "upstream.internal")
                .build()
                .unwrap()
        })
        .await;
        assert_eq!(status, 204);
        assert_eq!(
            header_values(&head, "host"),
            ["upstream.internal"],
            "{head}"
        );
    }

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
