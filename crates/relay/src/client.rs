//! HTTP clients for upstream calls. A reqwest client owns a connection pool, so the relay keeps
//! one per distinct proxy (the proxy is a property of the client, not of a request) and never
//! builds one per request.
//!
//! Clients are kept per thread as well. A pooled HTTP/1 connection is driven by a task on the
//! runtime of the thread that opened it; the server runs one single-threaded runtime per worker,
//! so a connection opened by one worker and reused by another hands every request and answer
//! across threads (two wake-ups each way). One client per worker thread keeps each connection
//! on the worker that uses it.

use std::sync::RwLock;
use std::thread::ThreadId;
use std::time::Duration;

use crate::direct::Direct;
use crate::error::RelayError;
use crate::provider::{classify_transport, ChannelTarget, UpstreamFailure};

/// Time allowed to establish a TCP (and TLS) connection to an upstream or proxy.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A client for upstream calls, through `proxy` when given (`http://`, `https://`, `socks5://`,
/// `socks5h://`; an empty string means none). Connect timeout 10 s; the overall timeout is set
/// per request (see [`crate::provider::Provider::build`]). Without a channel proxy the usual
/// `HTTPS_PROXY`/`NO_PROXY` environment variables apply.
pub fn http_client(proxy: Option<&str>) -> Result<reqwest::Client, RelayError> {
    let builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_keepalive(Duration::from_secs(60));
    build_via(builder, proxy, |_| Ok(()))
}

/// Finishes `builder` with the channel proxy `proxy` when given (blank: none), after `check`
/// accepted the proxy's parsed URL; every error is a [`RelayError::Channel`]. Shared by the plain
/// clients and the outbound policy's ([`crate::outbound::public_only_client_via`]).
pub(crate) fn build_via(
    mut builder: reqwest::ClientBuilder,
    proxy: Option<&str>,
    check: impl FnOnce(&reqwest::Url) -> Result<(), RelayError>,
) -> Result<reqwest::Client, RelayError> {
    if let Some(p) = proxy.map(str::trim).filter(|p| !p.is_empty()) {
        let invalid =
            |e: &dyn std::fmt::Display| RelayError::Channel(format!("invalid proxy URL {p}: {e}"));
        check(&reqwest::Url::parse(p).map_err(|e| invalid(&e))?)?;
        builder = builder.proxy(reqwest::Proxy::all(p).map_err(|e| invalid(&e))?);
    }
    builder
        .build()
        .map_err(|e| RelayError::Channel(format!("cannot build the HTTP client: {e}")))
}

/// One client per distinct proxy URL (and one for "no proxy") and thread (see the module's
/// documentation). Cloning a `reqwest::Client` is cheap and shares its pool.
#[derive(Debug)]
pub struct ClientPool {
    clients: PerThread,
    /// The outbound policy's clients ([`crate::outbound::public_only_client`]), under "" without
    /// a proxy, else per proxy URL.
    public_only: PerThread,
    /// The direct clients by thread ([`crate::direct`]); `None` when not used (a proxy in the
    /// environment, or switched off).
    direct: Option<RwLock<foldhash::HashMap<ThreadId, Direct>>>,
}

impl Default for ClientPool {
    fn default() -> Self {
        ClientPool::with_direct(!crate::direct::environment_has_proxy())
    }
}

/// Clients by proxy URL, then by thread.
type PerThread = RwLock<foldhash::HashMap<String, foldhash::HashMap<ThreadId, reqwest::Client>>>;

/// This thread's client for `proxy` in `map`, built by `build` and kept when missing.
fn cached(
    map: &PerThread,
    proxy: &str,
    build: impl FnOnce() -> Result<reqwest::Client, RelayError>,
) -> Result<reqwest::Client, RelayError> {
    let thread = std::thread::current().id();
    {
        let clients = map.read().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = clients.get(proxy).and_then(|t| t.get(&thread)) {
            return Ok(c.clone());
        }
    }
    let client = build()?;
    let mut clients = map.write().unwrap_or_else(|e| e.into_inner());
    Ok(clients
        .entry(proxy.to_owned())
        .or_default()
        .entry(thread)
        .or_insert(client)
        .clone())
}

impl ClientPool {
    /// The pool, with the direct client for calls that need nothing else of reqwest unless the
    /// environment names a proxy (reqwest's clients honour it).
    pub fn new() -> Self {
        ClientPool::default()
    }

    /// The pool with (`true`) or without the direct client.
    pub fn with_direct(direct: bool) -> Self {
        ClientPool {
            clients: PerThread::default(),
            public_only: PerThread::default(),
            direct: direct.then(RwLock::default),
        }
    }

    /// This thread's direct client for `target`'s calls: only without a channel proxy and
    /// outside the outbound URL policy (`public_only`), whose checks live in reqwest clients.
    fn direct_for(&self, target: &ChannelTarget, public_only: bool) -> Option<Direct> {
        let map = self.direct.as_ref()?;
        if public_only
            || target
                .proxy
                .as_deref()
                .is_some_and(|p| !p.trim().is_empty())
        {
            return None;
        }
        let thread = std::thread::current().id();
        if let Some(d) = map.read().unwrap_or_else(|e| e.into_inner()).get(&thread) {
            return Some(d.clone());
        }
        let direct = Direct::new()?;
        Some(
            map.write()
                .unwrap_or_else(|e| e.into_inner())
                .entry(thread)
                .or_insert(direct)
                .clone(),
        )
    }

    /// Sends a call built with `client` (the client of [`ClientPool::for_channel`] for the same
    /// `target` and `public_only`): through the direct client where it applies, else through
    /// reqwest. The request's own timeout (non-streamed calls) bounds the answer's head and
    /// body; `head_timeout` bounds the head of any call (a stream's body is not bounded, that
    /// would cut long generations). No answer is a transport failure (retryable).
    pub async fn execute(
        &self,
        target: &ChannelTarget,
        public_only: bool,
        client: &reqwest::Client,
        request: reqwest::Request,
        head_timeout: Duration,
    ) -> Result<reqwest::Response, UpstreamFailure> {
        if let Some(direct) = self.direct_for(target, public_only) {
            return direct.execute(request, head_timeout).await;
        }
        // A request with an overall timeout within the head's is bounded by it: one timer.
        if request.timeout().is_some_and(|t| *t <= head_timeout) {
            return client
                .execute(request)
                .await
                .map_err(|e| classify_transport(&e));
        }
        match tokio::time::timeout(head_timeout, client.execute(request)).await {
            Ok(r) => r.map_err(|e| classify_transport(&e)),
            Err(_) => Err(crate::direct::timed_out()),
        }
    }

    /// This thread's client for `proxy` (`None` or empty: direct), built on first use.
    pub fn get(&self, proxy: Option<&str>) -> Result<reqwest::Client, RelayError> {
        let proxy = proxy.map(str::trim).unwrap_or_default();
        cached(&self.clients, proxy, || http_client(Some(proxy)))
    }

    /// This thread's client of the outbound URL policy: public addresses only, no proxy
    /// ([`crate::outbound`]). Built on first use and kept.
    pub fn public_only(&self) -> Result<reqwest::Client, RelayError> {
        cached(&self.public_only, "", crate::outbound::public_only_client)
    }

    /// The client for `target`'s upstream calls. `public_only` (a destination not set by root,
    /// with `AllowPrivateOutbound` off): the outbound policy's client, through the channel's
    /// proxy if any, after [`crate::outbound::check_channel_literals`]; a refusal is a
    /// [`RelayError::Channel`]. Otherwise the client of the channel's proxy.
    pub fn for_channel(
        &self,
        target: &ChannelTarget,
        public_only: bool,
    ) -> Result<reqwest::Client, RelayError> {
        if !public_only {
            return self.get(target.proxy.as_deref());
        }
        crate::outbound::check_channel_literals(target)?;
        let proxy = target.proxy.as_deref().map(str::trim).unwrap_or_default();
        if proxy.is_empty() {
            return self.public_only();
        }
        cached(&self.public_only, proxy, || {
            crate::outbound::public_only_client_via(Some(proxy))
        })
    }

    /// Forgets every client (for example after channels' proxies changed); requests in flight
    /// keep theirs.
    pub fn clear(&self) {
        self.clients
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.public_only
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|proxy, _| proxy.is_empty());
    }

    /// Number of distinct proxies (and "none") this pool has plain clients for.
    pub fn len(&self) -> usize {
        self.clients.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_client_per_proxy() {
        let pool = ClientPool::new();
        pool.get(None).unwrap();
        pool.get(Some("")).unwrap();
        pool.get(Some("http://127.0.0.1:3128")).unwrap();
        pool.get(Some(" http://127.0.0.1:3128 ")).unwrap();
        pool.get(Some("socks5://127.0.0.1:1080")).unwrap();
        assert_eq!(pool.len(), 3);
        pool.clear();
        assert!(pool.is_empty());
    }

    #[test]
    fn one_client_per_thread() {
        let pool = ClientPool::new();
        pool.get(None).unwrap();
        pool.get(None).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| pool.get(None).unwrap());
        });
        let clients = pool.clients.read().unwrap();
        assert_eq!(
            clients[""].len(),
            2,
            "one for this thread, one for the other"
        );
        assert_eq!(pool.len(), 1);
    }

    fn target(base_url: String, proxy: Option<String>) -> ChannelTarget {
        ChannelTarget {
            id: 7,
            channel_type: 1,
            base_url,
            proxy,
            ..ChannelTarget::default()
        }
    }

    #[tokio::test]
    async fn channels_not_set_by_root_reach_public_addresses_only() {
        let server = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(wiremock::ResponseTemplate::new(200))
            .mount(&server)
            .await;
        let port = server.address().port();
        let pool = ClientPool::new();
        let by_name = target(format!("http://localhost:{port}"), None);
        let url = format!("http://localhost:{port}/v1/models");

        // Set by root: the plain client reaches the local upstream.
        let c = pool.for_channel(&by_name, false).unwrap();
        assert!(c.get(&url).send().await.is_ok_and(|r| r.status() == 200));

        // Not set by root: the name resolves to loopback only, nothing is connected to.
        let c = pool.for_channel(&by_name, true).unwrap();
        let r = c.get(&url).send().await;
        assert!(r.as_ref().is_err_and(reqwest::Error::is_connect), "{r:?}");

        // Non-public IP literals (base URL, proxy) are refused before connecting.
        for t in [
            target(format!("http://127.0.0.1:{port}"), None),
            target(format!("http://[::1]:{port}"), None),
            target(
                "https://8.8.8.8".into(),
                Some(format!("http://127.0.0.1:{port}")),
            ),
        ] {
            assert!(
                matches!(pool.for_channel(&t, true), Err(RelayError::Channel(_))),
                "{t:?}"
            );
            assert!(pool.for_channel(&t, false).is_ok(), "{t:?}");
        }

        // A proxy named by a host name is resolved through the public-only resolver too.
        let via_name = target(
            "http://upstream.example".into(),
            Some(format!("http://localhost:{port}")),
        );
        let c = pool.for_channel(&via_name, true).unwrap();
        let r = c.get("http://upstream.example/v1/models").send().await;
        assert!(r.is_err(), "{r:?}");
        // Root's proxy is used as it is: the mock (as proxy) answers.
        let c = pool.for_channel(&via_name, false).unwrap();
        let r = c.get("http://upstream.example/v1/models").send().await;
        assert!(r.is_ok_and(|r| r.status() == 200));

        // Only root's two requests reached the mock.
        let seen = server.received_requests().await.unwrap_or_default();
        assert_eq!(seen.len(), 2, "{seen:?}");
    }

    /// Sends a POST built by `pool`'s client for `t` through [`ClientPool::execute`].
    async fn post(
        pool: &ClientPool,
        t: &ChannelTarget,
        url: &str,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, UpstreamFailure> {
        let client = pool.for_channel(t, false).unwrap();
        let mut rb = client
            .post(url)
            .header("authorization", "Bearer sk-upstream")
            .body(r#"{"model":"m"}"#);
        if let Some(t) = timeout {
            rb = rb.timeout(t);
        }
        let (client, request) = rb.build_split();
        pool.execute(t, false, &client, request.unwrap(), Duration::from_secs(5))
            .await
    }

    #[tokio::test]
    async fn the_direct_client_sends_what_reqwest_built_and_answers_as_reqwest() {
        use wiremock::matchers::{body_string, header, method, path};
        let server = wiremock::MockServer::start().await;
        wiremock::Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .and(header("authorization", "Bearer sk-upstream"))
            .and(header("accept", "*/*"))
            .and(body_string(r#"{"model":"m"}"#))
            .respond_with(
                wiremock::ResponseTemplate::new(201)
                    .insert_header("x-upstream", "yes")
                    .set_body_string("answer"),
            )
            .mount(&server)
            .await;
        let pool = ClientPool::with_direct(true);
        let t = target(server.uri(), None);
        assert!(pool.direct_for(&t, false).is_some());
        for _ in 0..2 {
            // The second call reuses the pooled connection.
            let r = post(
                &pool,
                &t,
                &format!("{}/v1/chat/completions", server.uri()),
                None,
            )
            .await
            .unwrap();
            assert_eq!(r.status(), 201);
            assert_eq!(r.headers()["x-upstream"], "yes");
            assert_eq!(r.bytes().await.unwrap(), "answer");
        }
        let seen = server.received_requests().await.unwrap_or_default();
        assert_eq!(seen.len(), 2);
        assert_eq!(
            seen[0].headers["host"],
            format!("127.0.0.1:{}", server.address().port())
        );
    }

    #[test]
    fn proxied_and_policed_channels_never_go_direct() {
        let pool = ClientPool::with_direct(true);
        let plain = target("http://127.0.0.1:9".into(), None);
        assert!(pool.direct_for(&plain, false).is_some());
        assert!(pool.direct_for(&plain, true).is_none(), "outbound policy");
        let proxied = target(
            "http://127.0.0.1:9".into(),
            Some("http://127.0.0.1:3128".into()),
        );
        assert!(pool.direct_for(&proxied, false).is_none(), "channel proxy");
        let blank = target("http://127.0.0.1:9".into(), Some("  ".into()));
        assert!(
            pool.direct_for(&blank, false).is_some(),
            "a blank proxy is none"
        );
        assert!(ClientPool::with_direct(false)
            .direct_for(&plain, false)
            .is_none());
    }

    #[tokio::test]
    async fn a_proxied_channel_is_sent_through_its_proxy() {
        // The mock plays the proxy: the call reaches it in absolute form, where a direct call
        // would have looked up the upstream's (unresolvable) name.
        let proxy = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("via proxy"))
            .mount(&proxy)
            .await;
        let pool = ClientPool::with_direct(true);
        let t = target("http://upstream.invalid".into(), Some(proxy.uri()));
        let r = post(
            &pool,
            &t,
            "http://upstream.invalid/v1/chat/completions",
            None,
        )
        .await
        .unwrap();
        assert_eq!(r.text().await.unwrap(), "via proxy");
    }

    #[tokio::test]
    async fn direct_calls_fail_as_transport_failures() {
        // Nothing listens: a connection error, retryable.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let pool = ClientPool::with_direct(true);
        let t = target(format!("http://127.0.0.1:{port}"), None);
        let f = post(&pool, &t, &format!("http://127.0.0.1:{port}/v1/x"), None)
            .await
            .unwrap_err();
        assert_eq!(
            (f.status, f.code.as_deref()),
            (502, Some("upstream_connect_error"))
        );
        assert!(f.retryable && !f.auto_disable);

        // No head within the request's timeout.
        let server = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(wiremock::ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
            .mount(&server)
            .await;
        let t = target(server.uri(), None);
        let started = std::time::Instant::now();
        let f = post(&pool, &t, &server.uri(), Some(Duration::from_millis(200)))
            .await
            .unwrap_err();
        assert_eq!(
            (f.status, f.code.as_deref()),
            (504, Some("upstream_timeout"))
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn a_direct_calls_timeout_covers_the_body_too() {
        // The head comes at once, the body never: reading it fails at the request's timeout,
        // as a timeout.
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = sock.read(&mut buf).await;
            let _ = sock
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial")
                .await;
            tokio::time::sleep(Duration::from_secs(10)).await;
        });
        let pool = ClientPool::with_direct(true);
        let t = target(format!("http://{addr}"), None);
        let started = std::time::Instant::now();
        let r = post(
            &pool,
            &t,
            &format!("http://{addr}/v1/x"),
            Some(Duration::from_millis(300)),
        )
        .await
        .unwrap();
        assert_eq!(r.status(), 200);
        let e = r.bytes().await.unwrap_err();
        assert!(e.is_timeout(), "{e:?}");
        assert_eq!(
            classify_transport(&e).code.as_deref(),
            Some("upstream_timeout")
        );
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn bad_proxy_is_a_channel_error() {
        assert!(matches!(
            http_client(Some("not a url")),
            Err(RelayError::Channel(_))
        ));
    }
}
