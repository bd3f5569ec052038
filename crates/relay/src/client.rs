//! HTTP clients for upstream calls. A reqwest client owns a connection pool, so the relay keeps
//! one per distinct proxy (the proxy is a property of the client, not of a request) and never
//! builds one per request.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::Duration;

use crate::error::RelayError;

/// Time allowed to establish a TCP (and TLS) connection to an upstream or proxy.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A client for upstream calls, through `proxy` when given (`http://`, `https://`, `socks5://`,
/// `socks5h://`; an empty string means none). Connect timeout 10 s; the overall timeout is set
/// per request (see [`crate::provider::Provider::build`]). Without a channel proxy the usual
/// `HTTPS_PROXY`/`NO_PROXY` environment variables apply.
pub fn http_client(proxy: Option<&str>) -> Result<reqwest::Client, RelayError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_keepalive(Duration::from_secs(60));
    if let Some(p) = proxy.map(str::trim).filter(|p| !p.is_empty()) {
        let proxy = reqwest::Proxy::all(p)
            .map_err(|e| RelayError::Channel(format!("invalid proxy URL {p}: {e}")))?;
        builder = builder.proxy(proxy);
    }
    builder
        .build()
        .map_err(|e| RelayError::Channel(format!("cannot build the HTTP client: {e}")))
}

/// One shared client per distinct proxy URL (and one for "no proxy"). Cloning a
/// `reqwest::Client` is cheap and shares its pool.
#[derive(Debug, Default)]
pub struct ClientPool {
    clients: RwLock<HashMap<String, reqwest::Client>>,
    /// The outbound policy's client ([`crate::outbound::public_only_client`]), built once.
    public_only: std::sync::OnceLock<reqwest::Client>,
}

impl ClientPool {
    pub fn new() -> Self {
        ClientPool::default()
    }

    /// The client for `proxy` (`None` or empty: direct), built on first use.
    pub fn get(&self, proxy: Option<&str>) -> Result<reqwest::Client, RelayError> {
        let key = proxy.map(str::trim).unwrap_or_default();
        {
            let clients = self.clients.read().unwrap_or_else(|e| e.into_inner());
            if let Some(c) = clients.get(key) {
                return Ok(c.clone());
            }
        }
        let client = http_client(Some(key))?;
        let mut clients = self.clients.write().unwrap_or_else(|e| e.into_inner());
        Ok(clients.entry(key.to_owned()).or_insert(client).clone())
    }

    /// The client of the outbound URL policy: public addresses only, no proxy
    /// ([`crate::outbound`]). Built on first use and kept.
    pub fn public_only(&self) -> Result<reqwest::Client, RelayError> {
        if let Some(c) = self.public_only.get() {
            return Ok(c.clone());
        }
        let client = crate::outbound::public_only_client()?;
        Ok(self.public_only.get_or_init(|| client).clone())
    }

    /// Forgets every client (for example after channels' proxies changed); requests in flight
    /// keep theirs.
    pub fn clear(&self) {
        self.clients
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Number of distinct clients held.
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
    fn bad_proxy_is_a_channel_error() {
        assert!(matches!(
            http_client(Some("not a url")),
            Err(RelayError::Channel(_))
        ));
    }
}
