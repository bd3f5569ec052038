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
//!
//! Calls to `http://` upstreams (local and in-cluster models: Ollama, vLLM, another gateway)
//! skip hyper-util's pool too: [`Http1Pool`] keeps their idle HTTP/1 connections by authority
//! and hands a connection back when its answer's body has been read to the end. Per request,
//! hyper-util's pool hashed its key with SipHash, raced a checkout against a lazy connect and
//! spawned a task to wait for the connection to become idle again (bench/README.md). It keeps
//! hyper-util's rules: a request that a reused connection closed before sending is sent again
//! on another (a fresh connection's failure is the call's), an answer not read to its end
//! closes its connection, idle connections are dropped after 90 s. `https://` calls stay on
//! hyper-util's client, which negotiates HTTP/2 over TLS.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::client::conn::http1;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::time::{Instant, Sleep};
use tower_service::Service;

use crate::client::CONNECT_TIMEOUT;
use crate::provider::{transport_failure, UpstreamFailure};

/// hyper's client over TLS, and hyper's HTTP/1 connections over plain TCP, taking reqwest's
/// request bodies.
#[derive(Clone, Debug)]
pub struct Direct {
    client: Client<HttpsConnector<HttpConnector>, reqwest::Body>,
    /// Connects to `http://` upstreams (the settings of `client`'s own TCP connector).
    tcp: HttpConnector,
    plain: Arc<Http1Pool>,
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
            .wrap_connector(http.clone());
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(IDLE_TIMEOUT)
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .build(tls);
        Some(Direct {
            client,
            tcp: http,
            plain: Arc::new(Http1Pool::new(IDLE_TIMEOUT)),
        })
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
        let sent = async {
            if url.scheme() == "http" {
                return self.send_plain(request).await;
            }
            match self.client.request(request).await {
                Ok(r) => Ok((r, None)),
                Err(e) => Err(transport_failure(false, e.is_connect(), &e)),
            }
        };
        let (response, back) = match tokio::time::timeout_at(head_by, sent).await {
            Ok(r) => r?,
            Err(_) => return Err(timed_out()),
        };
        let mut response = response.map(|body| {
            reqwest::Body::wrap(Bounded {
                body,
                sleep: deadline.map(|d| Box::pin(tokio::time::sleep_until(d))),
                back,
            })
        });
        with_url(&mut response, url);
        Ok(reqwest::Response::from(response))
    }
}

impl Direct {
    /// Sends a request to an `http://` upstream over an idle connection of [`Http1Pool`] or a
    /// new one, with what hands the connection back once the answer's body is read.
    async fn send_plain(
        &self,
        mut request: http::Request<reqwest::Body>,
    ) -> Result<(http::Response<hyper::body::Incoming>, Option<GiveBack>), UpstreamFailure> {
        let uri = request.uri().clone();
        let authority = uri.authority().map_or("", |a| a.as_str());
        origin_form(request.uri_mut());
        loop {
            let (key, idle) = self.plain.take(authority).await;
            let reused = idle.is_some();
            let mut sender = match idle {
                Some(sender) => sender,
                None => self.connect(&uri).await?,
            };
            match sender.try_send_request(request).await {
                Ok(response) => {
                    let back = GiveBack {
                        pool: self.plain.clone(),
                        key,
                        sender,
                    };
                    return Ok((response, Some(back)));
                }
                Err(mut e) => match e.take_message() {
                    // An idle connection that closed before the request went out (the upstream
                    // ended it while it waited): the request, untouched, goes on another.
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(transport_failure(false, false, &Caused(e.into_error()))),
                },
            }
        }
    }

    /// A new HTTP/1 connection to `uri`'s authority, its connection task spawned.
    async fn connect(
        &self,
        uri: &http::Uri,
    ) -> Result<http1::SendRequest<reqwest::Body>, UpstreamFailure> {
        let io = self
            .tcp
            .clone()
            .call(uri.clone())
            .await
            .map_err(|e| transport_failure(false, true, &Caused(e)))?;
        let (sender, connection) = http1::Builder::new()
            .handshake(io)
            .await
            .map_err(|e| transport_failure(false, true, &Caused(e)))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "upstream connection ended with an error");
            }
        });
        Ok(sender)
    }
}

/// An error as the first cause of a transport failure, whose message lists the causes of the
/// error it is given: "could not connect to the upstream: tcp connect error: Connection refused
/// (os error 111)", as when hyper-util's error carried the connector's or hyper's.
#[derive(Debug)]
struct Caused<E>(E);

impl<E> std::fmt::Display for Caused<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("upstream call failed")
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Caused<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// How long an idle connection is kept (hyper-util's pool and [`Http1Pool`] alike).
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// Idle HTTP/1 connections to `http://` upstreams, by authority (`host:port` as the URL
/// writes it), the most recently used last. Each worker thread has its own ([`Direct`] is per
/// thread), so the lock is not contended.
///
/// A connection that waited longer than the idle timeout is closed when its authority is
/// called again, or by the sweep of every slot that the first return of a connection after
/// each idle timeout runs (so an upstream no longer called keeps no connection open for long
/// while the thread relays anything). No timer task: a thread that relays nothing keeps its
/// idle connections until the upstream ends them.
#[derive(Debug)]
struct Http1Pool {
    slots: Mutex<Slots>,
    /// [`IDLE_TIMEOUT`] (tests shorten it).
    idle_timeout: Duration,
}

#[derive(Debug, Default)]
struct Slots {
    by_authority: foldhash::HashMap<Arc<str>, Slot>,
    /// When the next return of a connection sweeps every slot.
    next_sweep: Option<Instant>,
}

#[derive(Debug)]
struct Slot {
    /// The map's key again: std's map lends no key beside a mutable value, and a loan of a
    /// connection carries the key back to [`Http1Pool::put`] without allocating it anew.
    key: Arc<str>,
    idle: VecDeque<Idle>,
}

#[derive(Debug)]
struct Idle {
    sender: http1::SendRequest<reqwest::Body>,
    since: Instant,
}

impl Http1Pool {
    fn new(idle_timeout: Duration) -> Http1Pool {
        Http1Pool {
            slots: Mutex::default(),
            idle_timeout,
        }
    }

    /// The key of `authority`'s slot and, when it has one, an idle connection that is open,
    /// has waited less than the idle timeout and is ready for a request (those that waited
    /// longer or closed are dropped on the way).
    async fn take(&self, authority: &str) -> (Arc<str>, Option<http1::SendRequest<reqwest::Body>>) {
        loop {
            let (key, idle) = {
                let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
                match slots.by_authority.get_mut(authority) {
                    Some(slot) => {
                        let now = Instant::now();
                        let mut found = None;
                        while let Some(i) = slot.idle.pop_back() {
                            if now.duration_since(i.since) < self.idle_timeout
                                && !i.sender.is_closed()
                            {
                                found = Some(i.sender);
                                break;
                            }
                        }
                        (slot.key.clone(), found)
                    }
                    None => {
                        let key: Arc<str> = Arc::from(authority);
                        let slot = Slot {
                            key: key.clone(),
                            idle: VecDeque::new(),
                        };
                        slots.by_authority.insert(key.clone(), slot);
                        (key, None)
                    }
                }
            };
            let Some(mut sender) = idle else {
                return (key, None);
            };
            // Ready at once, or as soon as its connection task has read the end of the last
            // answer; an error means the connection closed meanwhile: try the next one.
            if sender.ready().await.is_ok() {
                return (key, Some(sender));
            }
        }
    }

    /// Keeps `sender` (its last answer read to the end) for the next request to `key`, and
    /// drops the connections of `key` (of every slot, once per idle timeout) that waited
    /// longer than the idle timeout or closed.
    fn put(&self, key: &Arc<str>, sender: http1::SendRequest<reqwest::Body>) {
        let now = Instant::now();
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let sweep_all = slots.next_sweep.is_none_or(|at| now >= at);
        if sweep_all {
            slots.next_sweep = Some(now + self.idle_timeout);
            for slot in slots.by_authority.values_mut() {
                self.drop_stale(slot, now);
            }
        }
        let slot = slots
            .by_authority
            .entry(key.clone())
            .or_insert_with(|| Slot {
                key: key.clone(),
                idle: VecDeque::new(),
            });
        self.drop_stale(slot, now);
        slot.idle.push_back(Idle { sender, since: now });
    }

    /// Drops the connections of `slot` that waited longer than the idle timeout or closed
    /// (the oldest wait at the front).
    fn drop_stale(&self, slot: &mut Slot, now: Instant) {
        while slot.idle.front().is_some_and(|i| {
            now.duration_since(i.since) >= self.idle_timeout || i.sender.is_closed()
        }) {
            slot.idle.pop_front();
        }
    }
}

/// A pooled connection on loan to one answer: back to [`Http1Pool`] when the answer's body has
/// been read to its end, closed (dropped) when it was not.
struct GiveBack {
    pool: Arc<Http1Pool>,
    key: Arc<str>,
    sender: http1::SendRequest<reqwest::Body>,
}

impl GiveBack {
    fn give_back(self) {
        self.pool.put(&self.key, self.sender);
    }
}

/// `uri` as an HTTP/1 request line names it without a proxy: its path and query (`/` when it
/// has none), as hyper-util's client writes it.
fn origin_form(uri: &mut http::Uri) {
    let origin = match uri.path_and_query() {
        Some(path) if path.as_str() != "/" => {
            let mut parts = http::uri::Parts::default();
            parts.path_and_query = Some(path.clone());
            http::Uri::from_parts(parts).unwrap_or_default()
        }
        _ => http::Uri::default(),
    };
    *uri = origin;
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
/// as a timeout) once its deadline has passed, and hands its pooled connection back when it has
/// been read to the end.
struct Bounded {
    body: hyper::body::Incoming,
    sleep: Option<Pin<Box<Sleep>>>,
    back: Option<GiveBack>,
}

impl Drop for Bounded {
    fn drop(&mut self) {
        // An answer without a body (or whose last frame was read, its end not polled) leaves
        // its connection reusable; anything else closes it with the sender.
        if self.body.is_end_stream() {
            if let Some(back) = self.back.take() {
                back.give_back();
            }
        }
    }
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
        let frame = Pin::new(&mut self.body).poll_frame(cx);
        match &frame {
            Poll::Ready(None) => {
                if let Some(back) = self.back.take() {
                    back.give_back();
                }
            }
            // A failed body leaves its connection unusable.
            Poll::Ready(Some(Err(_))) => self.back = None,
            _ => {}
        }
        frame.map_err(|e| Box::new(e) as Self::Error)
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

    /// An HTTP/1.1 upstream on a port of its own: it answers every request on a connection
    /// with `200` and the body `n` (the request's number on its connection, padded with spaces
    /// to `body_len` bytes; `204` without a body when `body_len` is 0), closing the connection after an answer when `close_after` says so.
    /// Counts the connections it accepted and those the client closed (EOF while waiting for a
    /// request, or a failed write of an answer).
    struct Upstream {
        port: u16,
        accepted: Arc<std::sync::atomic::AtomicUsize>,
        closed_by_client: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Upstream {
        async fn start(close_after: fn(usize) -> bool, body_len: usize) -> Upstream {
            use std::sync::atomic::{AtomicUsize, Ordering};
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let accepted = Arc::new(AtomicUsize::new(0));
            let closed_by_client = Arc::new(AtomicUsize::new(0));
            let (a, c) = (accepted.clone(), closed_by_client.clone());
            tokio::spawn(async move {
                loop {
                    let (mut sock, _) = listener.accept().await.unwrap();
                    a.fetch_add(1, Ordering::SeqCst);
                    let c = c.clone();
                    tokio::spawn(async move {
                        let mut pending = Vec::new();
                        let mut buf = [0u8; 4096];
                        for n in 1.. {
                            while !pending.windows(4).any(|w| w == b"\r\n\r\n") {
                                match sock.read(&mut buf).await {
                                    Ok(0) | Err(_) => {
                                        c.fetch_add(1, Ordering::SeqCst);
                                        return;
                                    }
                                    Ok(k) => pending.extend_from_slice(&buf[..k]),
                                }
                            }
                            // The tests send bodiless requests: one head is one request.
                            let end = pending.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
                            pending.drain(..end + 4);
                            let answer = if body_len == 0 {
                                "HTTP/1.1 204 No Content\r\n\r\n".to_owned()
                            } else {
                                let mut body = n.to_string();
                                while body.len() < body_len {
                                    body.push(' ');
                                }
                                format!(
                                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                                    body.len()
                                )
                            };
                            if sock.write_all(answer.as_bytes()).await.is_err() {
                                c.fetch_add(1, Ordering::SeqCst);
                                return;
                            }
                            if close_after(n) {
                                return;
                            }
                        }
                    });
                }
            });
            Upstream {
                port,
                accepted,
                closed_by_client,
            }
        }

        fn accepted(&self) -> usize {
            self.accepted.load(std::sync::atomic::Ordering::SeqCst)
        }

        fn closed_by_client(&self) -> usize {
            self.closed_by_client
                .load(std::sync::atomic::Ordering::SeqCst)
        }

        /// A GET of this upstream through `direct`: the answer, not read.
        async fn call(&self, direct: &Direct) -> reqwest::Response {
            let request = reqwest::Client::new()
                .get(format!("http://127.0.0.1:{}/v1/models", self.port))
                .build()
                .unwrap();
            direct
                .execute(request, Duration::from_secs(5))
                .await
                .unwrap()
        }

        /// The body of a GET of this upstream through `direct`, read to its end.
        async fn text(&self, direct: &Direct) -> String {
            self.call(direct).await.text().await.unwrap()
        }
    }

    /// A direct client whose pool drops connections idle for `timeout`.
    fn with_idle_timeout(timeout: Duration) -> Direct {
        let mut direct = Direct::new().unwrap();
        direct.plain = Arc::new(Http1Pool::new(timeout));
        direct
    }

    /// Waits (up to 5 s) until `cond` holds: the upstream's side of a connection's end is
    /// seen a moment after the client's.
    async fn eventually(what: &str, cond: impl Fn() -> bool) {
        for _ in 0..500 {
            if cond() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{what} did not happen within 5 s");
    }

    #[tokio::test]
    async fn calls_to_a_plain_upstream_take_turns_on_one_connection() {
        let up = Upstream::start(|_| false, 1).await;
        let direct = Direct::new().unwrap();
        for n in 1..=3 {
            let answer = up.call(&direct).await;
            assert_eq!(answer.status(), 200);
            // The number of the request on its connection: the same connection each time.
            assert_eq!(answer.text().await.unwrap(), n.to_string());
        }
        assert_eq!(up.accepted(), 1);
        assert_eq!(up.closed_by_client(), 0);
    }

    #[tokio::test]
    async fn an_answer_without_a_body_dropped_unread_keeps_its_connection() {
        let up = Upstream::start(|_| false, 0).await;
        let direct = Direct::new().unwrap();
        for _ in 0..3 {
            let answer = up.call(&direct).await;
            assert_eq!(answer.status(), 204);
            drop(answer);
        }
        assert_eq!(up.accepted(), 1);
        assert_eq!(up.closed_by_client(), 0);
    }

    #[tokio::test]
    async fn an_answer_not_read_to_its_end_closes_its_connection() {
        // A body of 1 MB: the client stops after the head, with most of it unsent.
        let up = Upstream::start(|_| false, 1 << 20).await;
        let direct = Direct::new().unwrap();
        let answer = up.call(&direct).await;
        assert_eq!(answer.status(), 200);
        drop(answer);
        let next = up.call(&direct).await;
        assert_eq!(
            next.text().await.unwrap().trim_end(),
            "1",
            "a new connection"
        );
        assert_eq!(up.accepted(), 2);
        eventually("the first connection's close", || {
            up.closed_by_client() == 1
        })
        .await;
    }

    #[tokio::test]
    async fn a_connection_the_upstream_closed_while_idle_is_replaced() {
        // The upstream ends every connection after its first answer, without saying so in a
        // `connection: close` header.
        let up = Upstream::start(|_| true, 1).await;
        let direct = Direct::new().unwrap();
        assert_eq!(up.text(&direct).await, "1");
        tokio::time::sleep(Duration::from_millis(50)).await;
        for _ in 0..3 {
            let answer = up.call(&direct).await;
            assert_eq!(answer.text().await.unwrap(), "1");
            // The client notices the close once its connection task has read it.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(up.accepted(), 4);
    }

    #[tokio::test]
    async fn a_connection_idle_past_the_timeout_is_closed_not_reused() {
        let up = Upstream::start(|_| false, 1).await;
        let direct = with_idle_timeout(Duration::from_millis(200));
        assert_eq!(up.text(&direct).await, "1");
        assert_eq!(up.text(&direct).await, "2");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(up.text(&direct).await, "1");
        assert_eq!(up.accepted(), 2);
        eventually("the idle connection's close", || up.closed_by_client() == 1).await;
    }

    #[tokio::test]
    async fn a_connection_to_an_upstream_no_longer_called_is_closed_by_the_sweep() {
        let (a, b) = (
            Upstream::start(|_| false, 1).await,
            Upstream::start(|_| false, 1).await,
        );
        let direct = with_idle_timeout(Duration::from_millis(200));
        assert_eq!(a.text(&direct).await, "1");
        assert_eq!(b.text(&direct).await, "1");
        tokio::time::sleep(Duration::from_millis(300)).await;
        // Only `b` is called again: returning its connection sweeps `a`'s idle one.
        assert_eq!(b.text(&direct).await, "1");
        eventually("the close of the idle connection to a", || {
            a.closed_by_client() == 1
        })
        .await;
        assert_eq!(a.accepted(), 1);
    }

    #[tokio::test]
    async fn a_refused_plain_connection_is_a_connect_failure() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let request = reqwest::Client::new()
            .get(format!("http://127.0.0.1:{port}/"))
            .build()
            .unwrap();
        let failure = Direct::new()
            .unwrap()
            .execute(request, Duration::from_secs(5))
            .await
            .unwrap_err();
        assert_eq!(failure.status, 502);
        assert_eq!(
            failure.code.as_deref(),
            Some("upstream_connect_error"),
            "{}",
            failure.message
        );
        // What failed, down to the system's word for it.
        assert!(
            failure
                .message
                .starts_with("could not connect to the upstream: tcp connect error: ")
                && failure.message.contains("refused"),
            "{}",
            failure.message
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
