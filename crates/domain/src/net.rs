//! The client's address behind reverse proxies, decided so that a client cannot forge it.
//!
//! Only a trusted proxy's word is taken. The peer (the TCP connection's other end) is the client
//! unless it is itself a trusted proxy; then the forwarded addresses are walked from the right
//! (the hop the proxy itself appended) to the left, skipping trusted proxies, and the first
//! address that is not one is the client. Everything left of it was written by the client and is
//! ignored, so `X-Forwarded-For: <anything>, ...` cannot choose the answer.

use crate::token::IpAllowList;
use std::net::IpAddr;

/// What `TRUST_PROXY_HEADERS=true` trusts: loopback and the private ranges (RFC 1918, IPv6
/// unique-local), where a deployment's own proxies normally live.
pub const PRIVATE_RANGES: &str =
    "127.0.0.0/8, ::1, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7";

/// The trusted proxies: the `TRUSTED_PROXIES` list (addresses and CIDR blocks, comma or space
/// separated), plus [`PRIVATE_RANGES`] when `private` (`TRUST_PROXY_HEADERS=true`). The error is
/// the reason, naming the bad entry.
pub fn trusted_proxies(list: &str, private: bool) -> Result<IpAllowList, String> {
    let mut nets = IpAllowList::parse(list).map_err(|e| match e {
        crate::DomainError::Invalid { reason, .. } => reason,
        other => other.to_string(),
    })?;
    if private {
        if let Ok(p) = IpAllowList::parse(PRIVATE_RANGES) {
            nets.extend(p);
        }
    }
    Ok(nets)
}

/// The forwarding headers of one request (several lines of a header joined with `,`).
#[derive(Debug, Default, Clone, Copy)]
pub struct ForwardedHeaders<'a> {
    pub x_forwarded_for: Option<&'a str>,
    /// RFC 7239 `Forwarded` (its `for=` parameters).
    pub forwarded: Option<&'a str>,
    pub x_real_ip: Option<&'a str>,
}

/// The client of a request that arrived from `peer`. Headers count only when `peer` is trusted;
/// then `X-Forwarded-For` is walked if present, else `Forwarded`, else `X-Real-IP` is taken
/// (a single address, as nginx's `$remote_addr`). An entry that is not an address (garbage,
/// `unknown`, an obfuscated name) ends the walk: the last address reached is the answer.
pub fn client_address(peer: IpAddr, trusted: &IpAllowList, h: &ForwardedHeaders<'_>) -> IpAddr {
    if !trusted.contains(peer) {
        return peer;
    }
    let hops: Vec<Option<IpAddr>> = if let Some(xff) = present(h.x_forwarded_for) {
        xff.split(',')
            .filter(|e| !e.trim().is_empty())
            .map(parse_hop)
            .collect()
    } else if let Some(fwd) = present(h.forwarded) {
        fwd.split(',')
            .filter(|e| !e.trim().is_empty())
            .map(forwarded_for)
            .collect()
    } else if let Some(real) = present(h.x_real_ip) {
        return parse_hop(real).unwrap_or(peer);
    } else {
        return peer;
    };
    let mut client = peer;
    for hop in hops.iter().rev() {
        match hop {
            Some(ip) => {
                client = *ip;
                if !trusted.contains(*ip) {
                    break;
                }
            }
            None => break,
        }
    }
    client
}

fn present(v: Option<&str>) -> Option<&str> {
    v.filter(|s| !s.trim().is_empty())
}

/// One forwarded address: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]`,
/// `[2001:db8::1]:443`, optionally in double quotes. Anything else is `None`.
pub fn parse_hop(entry: &str) -> Option<IpAddr> {
    let e = entry.trim();
    let e = e
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(e);
    if let Ok(ip) = e.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(sa) = e.parse::<std::net::SocketAddr>() {
        return Some(sa.ip());
    }
    e.strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .and_then(|s| s.parse::<IpAddr>().ok())
}

/// The `for=` address of one `Forwarded` element (`for=192.0.2.60;proto=http;by=...`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("for")
            .then(|| parse_hop(v))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]))
    }

    fn xff(peer: &str, trusted: &IpAllowList, v: &str) -> String {
        let h = ForwardedHeaders {
            x_forwarded_for: Some(v),
            ..Default::default()
        };
        client_address(ip(peer), trusted, &h).to_string()
    }

    fn list(s: &str) -> IpAllowList {
        trusted_proxies(s, false).unwrap_or_default()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_says() {
        let t = list("10.0.0.1");
        assert_eq!(xff("198.51.100.7", &t, "10.0.0.5"), "198.51.100.7");
        let h = ForwardedHeaders {
            x_forwarded_for: Some("1.1.1.1"),
            forwarded: Some("for=1.1.1.1"),
            x_real_ip: Some("1.1.1.1"),
        };
        assert_eq!(
            client_address(ip("198.51.100.7"), &t, &h),
            ip("198.51.100.7")
        );
        // No proxies trusted at all (the default).
        assert_eq!(
            xff("127.0.0.1", &IpAllowList::default(), "10.0.0.5"),
            "127.0.0.1"
        );
    }

    #[test]
    fn spoofed_first_entries_are_ignored() {
        let t = list("10.0.0.1");
        // nginx appended the real client (203.0.113.9) after what the client sent.
        assert_eq!(xff("10.0.0.1", &t, "10.0.0.5, 203.0.113.9"), "203.0.113.9");
        assert_eq!(
            xff("10.0.0.1", &t, "1.2.3.4, 5.6.7.8, 203.0.113.9"),
            "203.0.113.9"
        );
        // Two proxies in a row: both skipped.
        let t2 = list("10.0.0.1, 10.0.0.2");
        assert_eq!(
            xff("10.0.0.1", &t2, "6.6.6.6, 203.0.113.9, 10.0.0.2"),
            "203.0.113.9"
        );
        // Every hop trusted: the left-most one reached.
        assert_eq!(xff("10.0.0.1", &t2, "10.0.0.2"), "10.0.0.2");
    }

    #[test]
    fn compatibility_mode_trusts_private_ranges_only() {
        let t = trusted_proxies("", true).unwrap_or_default();
        assert_eq!(xff("127.0.0.1", &t, "203.0.113.9"), "203.0.113.9");
        assert_eq!(xff("172.20.0.3", &t, "6.6.6.6, 203.0.113.9"), "203.0.113.9");
        assert_eq!(
            xff("192.168.1.1", &t, "fd00::1, 203.0.113.9"),
            "203.0.113.9"
        );
        assert_eq!(xff("203.0.113.1", &t, "10.0.0.5"), "203.0.113.1");
        assert_eq!(xff("::1", &t, "2001:db8::9"), "2001:db8::9");
    }

    #[test]
    fn ipv6_and_ports() {
        let t = list("10.0.0.1, 2001:db8:ffff::/48");
        assert_eq!(xff("10.0.0.1", &t, "203.0.113.9:51234"), "203.0.113.9");
        assert_eq!(xff("10.0.0.1", &t, "[2001:db8::7]:443"), "2001:db8::7");
        assert_eq!(xff("10.0.0.1", &t, "2001:db8::7"), "2001:db8::7");
        assert_eq!(xff("10.0.0.1", &t, "[2001:db8::7]"), "2001:db8::7");
        assert_eq!(
            xff("2001:db8:ffff::1", &t, "2001:db8::7, 2001:db8:ffff::2"),
            "2001:db8::7"
        );
        // An IPv4-mapped peer is matched as the IPv4 proxy.
        assert_eq!(xff("::ffff:10.0.0.1", &t, "203.0.113.9"), "203.0.113.9");
    }

    #[test]
    fn garbage_ends_the_walk() {
        let t = list("10.0.0.1, 10.0.0.2");
        assert_eq!(xff("10.0.0.1", &t, "not-an-ip"), "10.0.0.1");
        assert_eq!(xff("10.0.0.1", &t, "evil, 10.0.0.2"), "10.0.0.2");
        assert_eq!(xff("10.0.0.1", &t, &"a".repeat(100)), "10.0.0.1");
        assert_eq!(xff("10.0.0.1", &t, "1.2.3.4\0"), "10.0.0.1");
        assert_eq!(xff("10.0.0.1", &t, "999.1.1.1"), "10.0.0.1");
        assert_eq!(xff("10.0.0.1", &t, ", ,203.0.113.9,"), "203.0.113.9");
        assert_eq!(xff("10.0.0.1", &t, "  "), "10.0.0.1");
    }

    #[test]
    fn forwarded_and_x_real_ip() {
        let t = list("10.0.0.1");
        let h = ForwardedHeaders {
            forwarded: Some(
                r#"for=10.0.0.5;proto=http, For="[2001:db8:cafe::17]:4711";by=10.0.0.1"#,
            ),
            ..Default::default()
        };
        assert_eq!(
            client_address(ip("10.0.0.1"), &t, &h),
            ip("2001:db8:cafe::17")
        );
        let h = ForwardedHeaders {
            forwarded: Some("for=unknown"),
            ..Default::default()
        };
        assert_eq!(client_address(ip("10.0.0.1"), &t, &h), ip("10.0.0.1"));
        // X-Forwarded-For wins over the others when present.
        let h = ForwardedHeaders {
            x_forwarded_for: Some("203.0.113.9"),
            forwarded: Some("for=1.1.1.1"),
            x_real_ip: Some("2.2.2.2"),
        };
        assert_eq!(client_address(ip("10.0.0.1"), &t, &h), ip("203.0.113.9"));
        let real = |v| ForwardedHeaders {
            x_real_ip: Some(v),
            ..Default::default()
        };
        assert_eq!(
            client_address(ip("10.0.0.1"), &t, &real("203.0.113.9")),
            ip("203.0.113.9")
        );
        assert_eq!(
            client_address(ip("10.0.0.1"), &t, &real("garbage")),
            ip("10.0.0.1")
        );
        assert_eq!(
            client_address(ip("198.51.100.7"), &t, &real("203.0.113.9")),
            ip("198.51.100.7")
        );
    }

    #[test]
    fn the_list_names_its_bad_entry() {
        let e = trusted_proxies("10.0.0.1, nope", false)
            .err()
            .unwrap_or_default();
        assert!(e.contains("'nope'"), "{e}");
        assert!(trusted_proxies("", false).unwrap_or_default().is_empty());
        let t = trusted_proxies("203.0.113.0/24", true).unwrap_or_default();
        assert!(t.contains(ip("203.0.113.5")) && t.contains(ip("10.1.2.3")));
        assert!(!t.contains(ip("8.8.8.8")));
    }
}
