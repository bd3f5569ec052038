//! The outbound URL policy for server-side fetches that administrators aim (the remote price
//! list): without the `AllowPrivateOutbound` setting such a fetch reaches public addresses only,
//! never loopback, private, link-local (cloud metadata), CGNAT, unique-local, multicast or
//! reserved ones ([`switchboard_domain::net::address_kind`]).
//!
//! The check is made on the address actually connected to: the public-only client resolves a
//! host name once, through [`PublicOnlyResolver`], keeps only public addresses and connects to
//! those, so a name that answers public first and private later (DNS rebinding) gains nothing.
//! IP literals, which never reach a resolver, are checked on the URL and on every redirect. The
//! client takes no proxy from the environment (a proxy would resolve and connect for us).
//!
//! Channels whose destination was not last set by root ([`ChannelTarget`] with
//! `destination_by_root` false in the store) are reached the same way unless
//! `AllowPrivateOutbound` is on: [`check_channel_literals`] refuses their non-public IP literals
//! (base URL, proxy, Vertex AI `token_uri`) before connecting, and
//! [`crate::ClientPool::for_channel`] gives them a public-only client. A channel proxy is
//! connected to through the same resolver, so it is judged like any other address; the proxy
//! then reaches the upstream from its own network.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use switchboard_domain::net::is_public;

use crate::client::CONNECT_TIMEOUT;
use crate::error::RelayError;
use crate::provider::ChannelTarget;

/// Redirects a public-only fetch may follow (each one checked).
pub const MAX_REDIRECTS: usize = 5;

/// The IP address a URL names its host by, when it is an IP literal (`[::1]` unbracketed).
pub fn literal_ip(url: &reqwest::Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.parse().ok()
}

/// Whether the policy refuses `url` before any lookup: no host, or an IP literal that is not
/// public. (Host names are judged by the addresses they resolve to.)
pub fn refused_before_lookup(url: &reqwest::Url) -> bool {
    match url.host_str() {
        None | Some("") => true,
        Some(_) => literal_ip(url).is_some_and(|ip| !is_public(ip)),
    }
}

/// How long [`names_a_non_public_address`] waits for name resolution.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `url` (`http`, `https`, `socks5`, ... with a host) points at a non-public address
/// now: its host is such an IP literal, or any address its name resolves to is one. A URL that
/// does not parse, or a name that does not resolve (in [`LOOKUP_TIMEOUT`]), is not judged here
/// (`false`). For a check when an address is *saved*; fetches use [`public_only_client`], which
/// judges the address actually connected to.
pub async fn names_a_non_public_address(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url.trim()) else {
        return false;
    };
    let Some(host) = parsed.host_str().filter(|h| !h.is_empty()) else {
        return false;
    };
    if let Some(ip) = literal_ip(&parsed) {
        return !is_public(ip);
    }
    let port = parsed.port_or_known_default().unwrap_or(80);
    let host = host.to_owned();
    let found = tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((host, port))).await;
    match found {
        Ok(Ok(mut addrs)) => addrs.any(|a| !is_public(a.ip())),
        _ => false,
    }
}

/// A resolver that answers only the public addresses of a name, and fails when it has none.
#[derive(Debug, Clone, Copy, Default)]
pub struct PublicOnlyResolver;

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| is_public(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err("no public address (outbound policy)".into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// A client that connects to public addresses only ([`PublicOnlyResolver`], IP literals checked
/// on every redirect, at most [`MAX_REDIRECTS`]), without proxies.
pub fn public_only_client() -> Result<reqwest::Client, RelayError> {
    public_only_client_via(None)
}

/// The public addresses of `host` (resolved now, with `port`); an error when it has none. For
/// connections made without reqwest (the realtime websocket). An IP literal is returned as it
/// is when public.
pub async fn public_addrs(host: &str, port: u16) -> Result<Vec<SocketAddr>, RelayError> {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let refused = || RelayError::Channel(format!("{host} has no public address (outbound policy)"));
    if let Ok(ip) = host.parse::<IpAddr>() {
        return if is_public(ip) {
            Ok(vec![SocketAddr::new(ip, port)])
        } else {
            Err(refused())
        };
    }
    let found = tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((host, port)))
        .await
        .map_err(|_| refused())?
        .map_err(|e| RelayError::Channel(format!("cannot resolve {host}: {e}")))?;
    let addrs: Vec<SocketAddr> = found.filter(|a| is_public(a.ip())).collect();
    if addrs.is_empty() {
        return Err(refused());
    }
    Ok(addrs)
}

/// The policy's check of a channel's IP literals, made before connecting: its base URL (the
/// type's default when empty), proxy and Vertex AI `token_uri` may not name a non-public IP
/// literal (which no resolver sees). Host names are left to [`PublicOnlyResolver`].
pub fn check_channel_literals(target: &ChannelTarget) -> Result<(), RelayError> {
    let input = switchboard_domain::channel::ChannelInput {
        channel_type: target.channel_type,
        key: target.key.clone(),
        base_url: target.effective_base_url().unwrap_or_default(),
        proxy: target.proxy.clone().unwrap_or_default(),
        ..Default::default()
    };
    for u in switchboard_domain::channel::destination_urls(&input) {
        let refused = reqwest::Url::parse(&u)
            .ok()
            .and_then(|u| literal_ip(&u))
            .is_some_and(|ip| !is_public(ip));
        if refused {
            return Err(RelayError::Channel(format!(
                "channel {}: {u} names a non-public address; only root may point a channel there \
                 (outbound policy)",
                target.id
            )));
        }
    }
    Ok(())
}

/// [`public_only_client`] through the channel proxy `proxy` when given (its host name is
/// resolved through [`PublicOnlyResolver`] too; a non-public IP literal is refused).
pub fn public_only_client_via(proxy: Option<&str>) -> Result<reqwest::Client, RelayError> {
    let redirects = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if refused_before_lookup(attempt.url()) {
            attempt.error("redirect refused by the outbound policy")
        } else {
            attempt.follow()
        }
    });
    let builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .pool_idle_timeout(Duration::from_secs(90))
        .no_proxy()
        .dns_resolver(Arc::new(PublicOnlyResolver))
        .redirect(redirects);
    crate::client::build_via(builder, proxy, |parsed| {
        if refused_before_lookup(parsed) {
            let p = proxy.unwrap_or_default().trim();
            return Err(RelayError::Channel(format!(
                "proxy {p} names a non-public address; only root may use it (outbound policy)"
            )));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> reqwest::Url {
        reqwest::Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn literals_are_judged_before_any_lookup() {
        for refused in [
            "http://127.0.0.1/x",
            "http://127.1/x",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://[::1]:8080/",
            "http://[::ffff:127.0.0.1]/",
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.1/",
            "http://0.0.0.0/",
            "http://[fd00::1]/",
        ] {
            assert!(refused_before_lookup(&url(refused)), "{refused}");
        }
        for looked_up in [
            "https://prices.example.com/list.json",
            "http://localhost/",
            "http://8.8.8.8/",
            "http://[2606:4700:4700::1111]/",
        ] {
            assert!(!refused_before_lookup(&url(looked_up)), "{looked_up}");
        }
        assert_eq!(
            literal_ip(&url("http://[::1]/")),
            Some(IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]))
        );
    }

    #[tokio::test]
    async fn saved_addresses_are_judged_by_what_they_name() {
        for private in [
            "http://127.0.0.1:11434",
            "http://localhost:11434",
            "socks5://127.0.0.1:1080",
            "socks5h://localhost:1080",
            "http://[::1]/",
            "https://169.254.169.254/token",
            "http://2130706433/",
        ] {
            assert!(names_a_non_public_address(private).await, "{private}");
        }
        for not_private in ["https://8.8.8.8/v1", "not a url", ""] {
            assert!(
                !names_a_non_public_address(not_private).await,
                "{not_private}"
            );
        }
    }

    #[tokio::test]
    async fn names_of_private_addresses_resolve_to_nothing() {
        let name: Name = "localhost".parse().unwrap_or_else(|_| panic!("name"));
        assert!(PublicOnlyResolver.resolve(name).await.is_err());
    }

    #[tokio::test]
    async fn the_client_does_not_connect_to_loopback_by_name() {
        let server = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(wiremock::ResponseTemplate::new(200))
            .mount(&server)
            .await;
        let port = server.address().port();
        let client = public_only_client().unwrap_or_else(|e| panic!("{e}"));
        // localhost resolves to loopback only: nothing is left to connect to.
        let r = client.get(format!("http://localhost:{port}/")).send().await;
        assert!(r.as_ref().is_err_and(reqwest::Error::is_connect), "{r:?}");
        assert!(server
            .received_requests()
            .await
            .unwrap_or_default()
            .is_empty());
        // The same server is reachable by a client without the policy.
        let plain = crate::http_client(None).unwrap_or_else(|e| panic!("{e}"));
        let r = plain.get(format!("http://localhost:{port}/")).send().await;
        assert!(r.is_ok_and(|r| r.status() == 200));
    }
}
