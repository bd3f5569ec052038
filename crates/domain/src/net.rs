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

/// What an outbound connection to an address would reach. Everything but [`AddressKind::Public`]
/// is refused to server-side fetches driven by administrators (the outbound URL policy, see
/// docs/security.md) unless the `AllowPrivateOutbound` setting allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressKind {
    /// A globally routable unicast address.
    Public,
    /// `0.0.0.0/8` ("this network", which Linux connects to the host itself), `::`.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`) and IPv6 site-local `fec0::/10`.
    Private,
    /// Carrier-grade NAT, `100.64.0.0/10` (RFC 6598).
    SharedCgnat,
    /// `169.254.0.0/16` (cloud metadata services live here) and `fe80::/10`.
    LinkLocal,
    /// IPv6 unique-local `fc00::/7`.
    UniqueLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Everything else that is not globally routable: `240.0.0.0/4`, `192.0.0.0/24`,
    /// `192.88.99.0/24`, IPv6 outside `2000::/3`, Teredo and ORCHID (`2001::/32`,
    /// `2001:10::/28`), local-use NAT64 `64:ff9b:1::/48`, discard-only `100::/64`.
    Reserved,
}

/// The kind of `ip`. IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
/// IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that IPv4
/// address, so `::ffff:127.0.0.1` is loopback.
pub fn address_kind(ip: IpAddr) -> AddressKind {
    match ip {
        IpAddr::V4(v4) => ipv4_kind(v4),
        IpAddr::V6(v6) => ipv6_kind(v6),
    }
}

/// Whether an outbound call may reach `ip` without the `AllowPrivateOutbound` setting.
pub fn is_public(ip: IpAddr) -> bool {
    address_kind(ip) == AddressKind::Public
}

fn ipv4_kind(ip: std::net::Ipv4Addr) -> AddressKind {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        _ if ip.is_broadcast() => AddressKind::Broadcast,
        (0, _, _) => AddressKind::Unspecified,
        (127, _, _) => AddressKind::Loopback,
        (10, _, _) | (192, 168, _) => AddressKind::Private,
        (172, 16..=31, _) => AddressKind::Private,
        (100, 64..=127, _) => AddressKind::SharedCgnat,
        (169, 254, _) => AddressKind::LinkLocal,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddressKind::Documentation,
        (198, 18..=19, _) => AddressKind::Benchmarking,
        (192, 0, 0) | (192, 88, 99) => AddressKind::Reserved,
        (224..=239, _, _) => AddressKind::Multicast,
        (240..=255, _, _) => AddressKind::Reserved,
        _ => AddressKind::Public,
    }
}

fn ipv6_kind(ip: std::net::Ipv6Addr) -> AddressKind {
    let s = ip.segments();
    let embedded_v4 = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        std::net::Ipv4Addr::new(a, b, c, d)
    };
    if ip.is_unspecified() {
        return AddressKind::Unspecified;
    }
    if ip.is_loopback() {
        return AddressKind::Loopback;
    }
    match s {
        // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d.
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0, 0, 0, 0, 0, 0, hi, lo] => {
            return ipv4_kind(embedded_v4(hi, lo))
        }
        // NAT64 well-known prefix 64:ff9b::/96.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return ipv4_kind(embedded_v4(hi, lo)),
        // 6to4 2002:aabb:ccdd::/48.
        [0x2002, hi, lo, ..] => return ipv4_kind(embedded_v4(hi, lo)),
        _ => {}
    }
    let first = s[0];
    if first & 0xff00 == 0xff00 {
        return AddressKind::Multicast;
    }
    if first & 0xfe00 == 0xfc00 {
        return AddressKind::UniqueLocal;
    }
    if first & 0xffc0 == 0xfe80 {
        return AddressKind::LinkLocal;
    }
    if first & 0xffc0 == 0xfec0 {
        return AddressKind::Private;
    }
    if (first == 0x2001 && s[1] == 0x0db8) || (first == 0x3fff && s[1] & 0xf000 == 0) {
        return AddressKind::Documentation;
    }
    if first == 0x2001 && s[1] == 0x0002 && s[2] == 0 {
        return AddressKind::Benchmarking;
    }
    let teredo = first == 0x2001 && s[1] == 0;
    let orchid = first == 0x2001 && s[1] & 0xfff0 == 0x0010;
    let local_nat64 = first == 0x64 && s[1] == 0xff9b && s[2] == 1;
    // Global unicast is 2000::/3; everything outside it (100::/64 discard-only included) is
    // not routable on the internet.
    if teredo || orchid || local_nat64 || first & 0xe000 != 0x2000 {
        return AddressKind::Reserved;
    }
    AddressKind::Public
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

    #[test]
    fn address_kinds() {
        use AddressKind::*;
        for (a, k) in [
            ("8.8.8.8", Public),
            ("1.1.1.1", Public),
            ("172.32.0.1", Public),
            ("100.128.0.1", Public),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("127.0.0.1", Loopback),
            ("127.255.0.9", Loopback),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("100.64.0.1", SharedCgnat),
            ("100.127.255.255", SharedCgnat),
            ("169.254.169.254", LinkLocal),
            ("192.0.2.1", Documentation),
            ("198.51.100.7", Documentation),
            ("203.0.113.9", Documentation),
            ("198.18.0.1", Benchmarking),
            ("192.0.0.8", Reserved),
            ("192.88.99.1", Reserved),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("240.0.0.1", Reserved),
            ("255.255.255.255", Broadcast),
            ("2606:4700:4700::1111", Public),
            ("2001:4860:4860::8888", Public),
            ("::", Unspecified),
            ("::1", Loopback),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("fec0::1", Private),
            ("fc00::1", UniqueLocal),
            ("fd12:3456::1", UniqueLocal),
            ("ff02::1", Multicast),
            ("2001:db8::1", Documentation),
            ("3fff::1", Documentation),
            ("2001:2::1", Benchmarking),
            ("2001:0:4136:e378::1", Reserved),
            ("2001:10::1", Reserved),
            ("100::1", Reserved),
            ("4000::1", Reserved),
            ("64:ff9b:1::1", Reserved),
            // IPv4 inside IPv6 is judged as IPv4.
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:169.254.169.254", LinkLocal),
            ("::ffff:10.0.0.1", Private),
            ("::ffff:8.8.8.8", Public),
            ("::127.0.0.1", Loopback),
            ("64:ff9b::a00:1", Private),
            ("64:ff9b::808:808", Public),
            ("2002:7f00:1::1", Loopback),
            ("2002:c0a8:101::1", Private),
            ("2002:808:808::1", Public),
        ] {
            assert_eq!(address_kind(ip(a)), k, "{a}");
            assert_eq!(is_public(ip(a)), k == Public, "{a}");
        }
    }
}
