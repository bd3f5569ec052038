//! HTTP clients for upstream calls. A reqwest client owns a connection pool, so the relay keeps
//! one per distinct proxy (the proxy is a property of the client, not of a request) and never
//! builds one per request.
//!
//! Clients are kept per thread as well. A pooled HTTP/1 connection is driven by a task on the
//! runtime of the thread that opened it; the server runs one single-threaded runtime per worker,
//! so a connection opened by one worker and reused by another hands every request and answer
//! across threads (two wake-ups each way). One client per worker thread keeps each connection
//! on the worker that uses it.

use std::collections::HashMap;
use std::sync::RwLock;
use std::thread::ThreadId;
use std::time::Duration;

use crate::error::RelayError;
use crate::provider::ChannelTarget;

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
#[derive(Debug, Default)]
pub struct ClientPool {
    clients: PerThread,
    /// The outbound policy's clients ([`crate::outbound::public_only_client`]), under "" without
    /// a proxy, else per proxy URL.
    public_only: PerThread,
}

/// Clients by proxy URL, then by thread.
type PerThread = RwLock<HashMap<String, HashMap<ThreadId, reqwest::Client>>>;

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
    pub fn new() -> Self {
        ClientPool::default()
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

    #[test]
    fn bad_proxy_is_a_channel_error() {
        assert!(matches!(
            http_client(Some("not a url")),
            Err(RelayError::Channel(_))
        ));
    }
}
