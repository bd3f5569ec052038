//! API keys ("tokens"): key format, channel pinning, status, IP and model allow-lists,
//! heartbeat bounds (spec sections 3 to 5; DOMAIN.md "Tokens").

use crate::DomainError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Every key starts with this prefix.
pub const KEY_PREFIX: &str = "sk-";
/// Number of characters after [`KEY_PREFIX`].
pub const KEY_BODY_LEN: usize = 48;

/// Heartbeat start time bounds in seconds (spec section 5).
pub const HEARTBEAT_MIN_SECS: i32 = 30;
pub const HEARTBEAT_MAX_SECS: i32 = 90;

/// `sk-` followed by exactly 48 ASCII letters or digits.
pub fn is_well_formed_key(key: &str) -> bool {
    key.strip_prefix(KEY_PREFIX).is_some_and(|body| {
        body.len() == KEY_BODY_LEN && body.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// Which channels a request may use, from the key's `#` suffix (administrators only; whether the
/// pin is honoured for the caller is decided elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelPin {
    Any,
    Only(i64),
    Exclude(i64),
}

/// Splits `sk-KEY#12` into `("sk-KEY", Only(12))` and `sk-KEY#!12` into `("sk-KEY", Exclude(12))`.
///
/// The key part always ends before the first `#`. A suffix that is not a positive decimal
/// channel id (digits only, no sign, no spaces, not 0, fits in i64) gives [`ChannelPin::Any`].
/// Without `#` the whole input is the key.
pub fn split_pin(raw: &str) -> (&str, ChannelPin) {
    let Some((key, suffix)) = raw.split_once('#') else {
        return (raw, ChannelPin::Any);
    };
    let (exclude, digits) = match suffix.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, suffix),
    };
    let id = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i64>().ok().filter(|id| *id > 0)
    } else {
        None
    };
    let pin = match id {
        Some(id) if exclude => ChannelPin::Exclude(id),
        Some(id) => ChannelPin::Only(id),
        None => ChannelPin::Any,
    };
    (key, pin)
}

/// A token's stored status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "i32", try_from = "i32")]
pub enum TokenStatus {
    Enabled,
    Disabled,
    Expired,
    Exhausted,
}

impl TokenStatus {
    pub const fn as_i32(self) -> i32 {
        match self {
            TokenStatus::Enabled => 1,
            TokenStatus::Disabled => 2,
            TokenStatus::Expired => 3,
            TokenStatus::Exhausted => 4,
        }
    }
}

impl From<TokenStatus> for i32 {
    fn from(s: TokenStatus) -> i32 {
        s.as_i32()
    }
}

impl TryFrom<i32> for TokenStatus {
    type Error = String;
    fn try_from(n: i32) -> Result<Self, Self::Error> {
        match n {
            1 => Ok(TokenStatus::Enabled),
            2 => Ok(TokenStatus::Disabled),
            3 => Ok(TokenStatus::Expired),
            4 => Ok(TokenStatus::Exhausted),
            other => Err(format!("unknown token status {other}")),
        }
    }
}

/// The status a token really has at `now` (unix seconds):
/// 1. expired when `expired_at` is set (`-1`, or any negative value, means never) and
///    `expired_at <= now`;
/// 2. else exhausted when it is not unlimited and `remain_quota <= 0`;
/// 3. else the stored status; an unknown stored number counts as disabled (fail closed).
pub fn effective_status(
    status: i32,
    expired_at: i64,
    unlimited: bool,
    remain_quota: i64,
    now: i64,
) -> TokenStatus {
    if expired_at >= 0 && expired_at <= now {
        TokenStatus::Expired
    } else if !unlimited && remain_quota <= 0 {
        TokenStatus::Exhausted
    } else {
        TokenStatus::try_from(status).unwrap_or(TokenStatus::Disabled)
    }
}

/// Heartbeat start time: 30 to 90 seconds (spec section 5).
pub fn validate_heartbeat_timeout(secs: i32) -> Result<(), DomainError> {
    if (HEARTBEAT_MIN_SECS..=HEARTBEAT_MAX_SECS).contains(&secs) {
        Ok(())
    } else {
        Err(DomainError::OutOfRange {
            field: "heartbeat_timeout",
            min: HEARTBEAT_MIN_SECS.into(),
            max: HEARTBEAT_MAX_SECS.into(),
        })
    }
}

/// A token's model allow-list as stored: comma separated, trimmed, empty entries dropped, order
/// kept, duplicates removed. Same rules as [`crate::channel::parse_csv`].
pub fn parse_model_list(text: &str) -> Vec<String> {
    crate::channel::parse_csv(text)
}

/// Whether `model` may be used with a token whose allow-list is `allow`. An empty list allows
/// every model. Entries match exactly, or by prefix when they end with the `*` wildcard (the same
/// wildcard rule as model names elsewhere: `gpt-4o*` allows `gpt-4o` and `gpt-4o-mini`).
pub fn model_allowed(allow: &[String], model: &str) -> bool {
    allow.is_empty()
        || allow.iter().any(|a| match a.strip_suffix('*') {
            Some(prefix) if !prefix.is_empty() => model.starts_with(prefix),
            _ => a == model,
        })
}

/// One allow-list rule: a network address (host bits cleared) and its prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Net {
    V4(u32, u8),
    V6(u128, u8),
}

impl Net {
    fn v4(addr: Ipv4Addr, len: u8) -> Net {
        Net::V4(u32::from(addr) & mask32(len), len)
    }

    fn v6(addr: Ipv6Addr, len: u8) -> Net {
        // An IPv4-mapped rule (::ffff:a.b.c.d/96+) is the IPv4 rule it stands for.
        if len >= 96 {
            if let Some(v4) = addr.to_ipv4_mapped() {
                return Net::v4(v4, len - 96);
            }
        }
        Net::V6(u128::from(addr) & mask128(len), len)
    }

    fn contains(self, ip: IpAddr) -> bool {
        match (self, canonical(ip)) {
            (Net::V4(net, len), IpAddr::V4(a)) => u32::from(a) & mask32(len) == net,
            (Net::V6(net, len), IpAddr::V6(a)) => u128::from(a) & mask128(len) == net,
            _ => false,
        }
    }
}

impl fmt::Display for Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Net::V4(n, 32) => write!(f, "{}", Ipv4Addr::from(n)),
            Net::V4(n, len) => write!(f, "{}/{len}", Ipv4Addr::from(n)),
            Net::V6(n, 128) => write!(f, "{}", Ipv6Addr::from(n)),
            Net::V6(n, len) => write!(f, "{}/{len}", Ipv6Addr::from(n)),
        }
    }
}

fn mask32(len: u8) -> u32 {
    match len {
        0 => 0,
        l => u32::MAX << (32 - u32::from(l.min(32))),
    }
}

fn mask128(len: u8) -> u128 {
    match len {
        0 => 0,
        l => u128::MAX << (128 - u32::from(l.min(128))),
    }
}

/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is treated as the IPv4 address it carries.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// A token's IP allow-list: IPv4/IPv6 addresses and CIDR blocks.
///
/// Text form: entries separated by commas and/or whitespace (spaces, tabs, newlines). A bare
/// address is a single host (/32 or /128). A block with host bits set (`10.1.2.3/8`) is accepted
/// and means its network (`10.0.0.0/8`). IPv4-mapped IPv6 addresses, as clients and rules, are
/// matched as IPv4. [`fmt::Display`] gives the normalised text (comma separated).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IpAllowList {
    nets: Vec<Net>,
}

impl IpAllowList {
    /// Parses the list; the first invalid entry is named in the error (field `allow_ips`).
    /// Duplicate entries are kept once.
    pub fn parse(text: &str) -> Result<IpAllowList, DomainError> {
        let mut nets = Vec::new();
        for entry in text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|e| !e.is_empty())
        {
            let net = parse_net(entry).ok_or_else(|| {
                DomainError::invalid(
                    "allow_ips",
                    format!("'{entry}' is not an IP address or CIDR block"),
                )
            })?;
            if !nets.contains(&net) {
                nets.push(net);
            }
        }
        Ok(IpAllowList { nets })
    }

    /// An empty list (which allows every address).
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty()
    }

    /// Whether a client at `ip` may use the token. An empty list allows all.
    pub fn allows(&self, ip: IpAddr) -> bool {
        self.nets.is_empty() || self.contains(ip)
    }

    /// Whether one of the entries holds `ip` (an empty list holds nothing).
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.nets.iter().any(|n| n.contains(ip))
    }

    /// Adds the entries of `other` that this list lacks.
    pub fn extend(&mut self, other: IpAllowList) {
        for n in other.nets {
            if !self.nets.contains(&n) {
                self.nets.push(n);
            }
        }
    }
}

impl fmt::Display for IpAllowList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, n) in self.nets.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{n}")?;
        }
        Ok(())
    }
}

fn parse_net(entry: &str) -> Option<Net> {
    let (addr, len) = match entry.split_once('/') {
        Some((addr, len)) => {
            if len.is_empty() || len.len() > 3 || !len.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (addr, Some(len.parse::<u8>().ok()?))
        }
        None => (entry, None),
    };
    match addr.parse::<IpAddr>().ok()? {
        IpAddr::V4(a) => {
            let len = len.unwrap_or(32);
            (len <= 32).then(|| Net::v4(a, len))
        }
        IpAddr::V6(a) => {
            let len = len.unwrap_or(128);
            (len <= 128).then(|| Net::v6(a, len))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use proptest::prelude::*;

    fn key48() -> String {
        format!("sk-{}", "aB3".repeat(16))
    }

    #[test]
    fn key_format() {
        assert!(is_well_formed_key(&key48()));
        assert!(!is_well_formed_key(&key48()[..50]));
        assert!(!is_well_formed_key(&format!("{}x", key48())));
        assert!(!is_well_formed_key(&format!("pk-{}", &key48()[3..])));
        assert!(!is_well_formed_key(&format!("sk-{}-", &key48()[3..50])));
        // 48 bytes but non-ASCII characters
        assert!(!is_well_formed_key(&format!("sk-{}", "é".repeat(24))));
        assert!(!is_well_formed_key(""));
    }

    #[test]
    fn pins() {
        assert_eq!(split_pin("sk-KEY#12"), ("sk-KEY", ChannelPin::Only(12)));
        assert_eq!(split_pin("sk-KEY#!12"), ("sk-KEY", ChannelPin::Exclude(12)));
        assert_eq!(split_pin("sk-KEY"), ("sk-KEY", ChannelPin::Any));
        for bad in [
            "sk-KEY#",
            "sk-KEY#!",
            "sk-KEY#abc",
            "sk-KEY#-3",
            "sk-KEY#+3",
            "sk-KEY#0",
            "sk-KEY#!0",
            "sk-KEY# 3",
            "sk-KEY#3#4",
            "sk-KEY#99999999999999999999",
        ] {
            assert_eq!(split_pin(bad), ("sk-KEY", ChannelPin::Any), "{bad}");
        }
    }

    #[test]
    fn status_round_trip() {
        for s in [
            TokenStatus::Enabled,
            TokenStatus::Disabled,
            TokenStatus::Expired,
            TokenStatus::Exhausted,
        ] {
            assert_eq!(TokenStatus::try_from(s.as_i32()), Ok(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, s.as_i32().to_string());
            assert_eq!(serde_json::from_str::<TokenStatus>(&json).unwrap(), s);
        }
        assert!(TokenStatus::try_from(0).is_err());
        assert!(serde_json::from_str::<TokenStatus>("5").is_err());
    }

    #[test]
    fn effective_statuses() {
        use TokenStatus::*;
        let now = 1_000;
        assert_eq!(effective_status(1, -1, false, 10, now), Enabled);
        assert_eq!(effective_status(1, 1_001, false, 10, now), Enabled);
        assert_eq!(effective_status(1, 1_000, false, 10, now), Expired);
        assert_eq!(effective_status(1, 0, false, 10, now), Expired);
        assert_eq!(effective_status(1, -1, false, 0, now), Exhausted);
        assert_eq!(effective_status(1, -1, false, -5, now), Exhausted);
        assert_eq!(effective_status(1, -1, true, 0, now), Enabled);
        assert_eq!(effective_status(2, -1, true, 0, now), Disabled);
        assert_eq!(effective_status(2, 5, true, 0, now), Expired);
        assert_eq!(effective_status(4, -1, false, 10, now), Exhausted);
        assert_eq!(effective_status(99, -1, true, 0, now), Disabled);
    }

    #[test]
    fn heartbeat_bounds() {
        assert!(validate_heartbeat_timeout(30).is_ok());
        assert!(validate_heartbeat_timeout(90).is_ok());
        assert_eq!(
            validate_heartbeat_timeout(29),
            Err(DomainError::OutOfRange {
                field: "heartbeat_timeout",
                min: 30,
                max: 90
            })
        );
        assert!(validate_heartbeat_timeout(91).is_err());
    }

    #[test]
    fn model_lists() {
        let l = parse_model_list(" gpt-4o, ,claude-3*,gpt-4o ,, o1 ");
        assert_eq!(l, vec!["gpt-4o", "claude-3*", "o1"]);
        assert!(model_allowed(&l, "gpt-4o"));
        assert!(model_allowed(&l, "claude-3-5-sonnet"));
        assert!(!model_allowed(&l, "gpt-4o-mini"));
        assert!(!model_allowed(&l, "o1-mini"));
        assert!(model_allowed(&[], "anything"));
        assert!(parse_model_list("").is_empty());
        // a lone "*" is not a valid wildcard and only matches itself
        assert!(!model_allowed(&["*".to_owned()], "gpt-4o"));
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn ip_allow_lists() {
        let l = IpAllowList::parse("10.0.0.0/8, 192.168.1.5\n::1/128\t2001:db8::/32,,").unwrap();
        assert!(!l.is_empty());
        assert!(l.allows(ip("10.200.3.4")));
        assert!(!l.allows(ip("11.0.0.1")));
        assert!(l.allows(ip("192.168.1.5")));
        assert!(!l.allows(ip("192.168.1.6")));
        assert!(l.allows(ip("::1")));
        assert!(!l.allows(ip("::2")));
        assert!(l.allows(ip("2001:db8:ffff::1")));
        assert!(!l.allows(ip("2001:db9::1")));
        // IPv4-mapped IPv6 clients match IPv4 rules
        assert!(l.allows(ip("::ffff:10.1.1.1")));
        assert!(!l.allows(ip("::ffff:11.1.1.1")));
        assert_eq!(l.to_string(), "10.0.0.0/8,192.168.1.5,::1,2001:db8::/32");
    }

    #[test]
    fn ip_allow_list_edges() {
        let empty = IpAllowList::parse(" \n , ").unwrap();
        assert!(empty.is_empty());
        assert!(empty.allows(ip("1.2.3.4")));
        assert!(empty.allows(ip("::1")));

        let all4 = IpAllowList::parse("0.0.0.0/0").unwrap();
        assert!(all4.allows(ip("8.8.8.8")));
        assert!(all4.allows(ip("::ffff:8.8.8.8")));
        assert!(!all4.allows(ip("2001:db8::1")));

        // host bits are cleared
        let l = IpAllowList::parse("10.1.2.3/8").unwrap();
        assert!(l.allows(ip("10.9.9.9")));
        assert_eq!(l.to_string(), "10.0.0.0/8");

        // an IPv4-mapped rule is an IPv4 rule
        let mapped = IpAllowList::parse("::ffff:192.168.0.0/112").unwrap();
        assert!(mapped.allows(ip("192.168.7.7")));
        assert!(!mapped.allows(ip("192.169.0.1")));
        assert_eq!(mapped.to_string(), "192.168.0.0/16");

        let dup = IpAllowList::parse("1.2.3.4 1.2.3.4/32").unwrap();
        assert_eq!(dup.to_string(), "1.2.3.4");
    }

    #[test]
    fn ip_allow_list_errors_name_the_entry() {
        for bad in [
            "10.0.0.0/33",
            "::/129",
            "1.2.3",
            "1.2.3.4/",
            "1.2.3.4/-1",
            "1.2.3.4/+8",
            "1.2.3.4/0008",
            "localhost",
            "1.2.3.4/8/8",
        ] {
            let err = IpAllowList::parse(&format!("10.0.0.1, {bad}")).unwrap_err();
            assert_eq!(err.code(), ErrorCode::Invalid);
            assert!(err.to_string().contains(bad), "{err}");
            assert!(err.to_string().contains("allow_ips"), "{err}");
        }
    }

    proptest! {
        #[test]
        fn v4_cidr_matches_prefix(a in any::<u32>(), b in any::<u32>(), len in 0u8..=32) {
            let rule = IpAllowList::parse(&format!("{}/{len}", Ipv4Addr::from(a))).unwrap();
            let same_prefix = len == 0 || (a >> (32 - u32::from(len))) == (b >> (32 - u32::from(len)));
            prop_assert_eq!(rule.allows(IpAddr::V4(Ipv4Addr::from(b))), same_prefix);
            prop_assert!(rule.allows(IpAddr::V4(Ipv4Addr::from(a))));
            prop_assert!(rule.allows(IpAddr::V6(Ipv4Addr::from(a).to_ipv6_mapped())));
        }

        #[test]
        fn v6_cidr_matches_prefix(a in any::<u128>(), b in any::<u128>(), len in 0u8..=128) {
            let a6 = Ipv6Addr::from(a);
            prop_assume!(a6.to_ipv4_mapped().is_none());
            let rule = IpAllowList::parse(&format!("{a6}/{len}")).unwrap();
            let b6 = Ipv6Addr::from(b);
            prop_assume!(b6.to_ipv4_mapped().is_none());
            let same_prefix = len == 0 || (a >> (128 - u32::from(len))) == (b >> (128 - u32::from(len)));
            prop_assert_eq!(rule.allows(IpAddr::V6(b6)), same_prefix);
            prop_assert!(rule.allows(IpAddr::V6(a6)));
        }

        #[test]
        fn split_pin_key_never_contains_hash(s in ".*") {
            let (key, _) = split_pin(&s);
            prop_assert!(!key.contains('#'));
            prop_assert!(s.starts_with(key));
        }
    }

    // Fuzzing of the key and channel-pin parser (docs/security.md, "Fuzzing"): arbitrary text
    // never panics and agrees with a reference written differently (chars and i128 arithmetic
    // instead of bytes and `str::parse`); formatted keys and pins parse back to themselves.

    /// `split_pin` as the documentation states it, computed another way.
    fn reference_pin(raw: &str) -> (String, ChannelPin) {
        let chars: Vec<char> = raw.chars().collect();
        let Some(hash) = chars.iter().position(|&c| c == '#') else {
            return (raw.to_owned(), ChannelPin::Any);
        };
        let key: String = chars[..hash].iter().collect();
        let mut suffix = &chars[hash + 1..];
        let exclude = suffix.first() == Some(&'!');
        if exclude {
            suffix = &suffix[1..];
        }
        let mut n: i128 = 0;
        let mut valid = !suffix.is_empty();
        for c in suffix {
            match c {
                '0'..='9' => {
                    // Stop growing past i64::MAX (the value is then out of range anyway).
                    n = (n * 10 + i128::from(*c as u8 - b'0')).min(i128::from(i64::MAX) + 1);
                }
                _ => valid = false,
            }
        }
        let pin = match i64::try_from(n) {
            Ok(id) if valid && id > 0 && exclude => ChannelPin::Exclude(id),
            Ok(id) if valid && id > 0 => ChannelPin::Only(id),
            _ => ChannelPin::Any,
        };
        (key, pin)
    }

    /// Text that looks like a key with a pin often enough to reach every branch.
    fn pin_input() -> impl Strategy<Value = String> {
        let key = prop_oneof!["sk-[A-Za-z0-9]{0,50}", "\\PC{0,12}", "[a-z#!]{0,6}"];
        let suffix = prop_oneof![
            Just(String::new()),
            "#!?[0-9]{0,22}",
            "#!?0*[1-9][0-9]{0,18}",
            "#!?0{1,3}",
            "#!?[0-9+ !#-]{0,6}",
            "#\\PC{0,8}",
            (1i64..=i64::MAX, any::<bool>())
                .prop_map(|(id, ex)| format!("#{}{id}", if ex { "!" } else { "" })),
            Just(format!("#{}", i128::from(i64::MAX) + 1)),
        ];
        (key, suffix).prop_map(|(k, s)| k + &s)
    }

    /// `is_well_formed_key` as documented, on chars.
    fn reference_well_formed(key: &str) -> bool {
        let chars: Vec<char> = key.chars().collect();
        chars.len() == 3 + KEY_BODY_LEN
            && chars[..3] == ['s', 'k', '-']
            && chars[3..].iter().all(char::is_ascii_alphanumeric)
    }

    proptest! {
        #[test]
        fn split_pin_agrees_with_the_reference(raw in pin_input()) {
            let (key, pin) = split_pin(&raw);
            prop_assert_eq!((key.to_owned(), pin), reference_pin(&raw));
        }

        #[test]
        fn split_pin_of_any_text_agrees_with_the_reference(raw in any::<String>()) {
            let (key, pin) = split_pin(&raw);
            prop_assert_eq!((key.to_owned(), pin), reference_pin(&raw));
        }

        #[test]
        fn keys_and_pins_round_trip(
            body in "[A-Za-z0-9]{48}",
            id in 1i64..=i64::MAX,
            zeros in 0usize..3,
            exclude in any::<bool>(),
        ) {
            let key = format!("{KEY_PREFIX}{body}");
            prop_assert!(is_well_formed_key(&key));
            prop_assert_eq!(split_pin(&key), (key.as_str(), ChannelPin::Any));
            let bang = if exclude { "!" } else { "" };
            let raw = format!("{key}#{bang}{}{id}", "0".repeat(zeros));
            let expected = if exclude { ChannelPin::Exclude(id) } else { ChannelPin::Only(id) };
            prop_assert_eq!(split_pin(&raw), (key.as_str(), expected));
        }

        #[test]
        fn key_format_agrees_with_the_reference(
            key in prop_oneof!["sk-[A-Za-z0-9]{46,50}", "sk-[A-Za-z0-9é_-]{47,49}", "[sk-]{0,3}\\PC{0,52}", any::<String>()],
        ) {
            prop_assert_eq!(is_well_formed_key(&key), reference_well_formed(&key));
        }

        #[test]
        fn model_allow_lists_agree_with_the_reference(
            allow in proptest::collection::vec("[a-cé*]{0,4}", 0..5),
            model in "[a-cé*]{0,5}",
        ) {
            // Reference: an entry of two or more characters ending in `*` is a prefix rule.
            let expected = allow.is_empty()
                || allow.iter().any(|a| {
                    let chars: Vec<char> = a.chars().collect();
                    if chars.len() >= 2 && chars.last() == Some(&'*') {
                        let prefix: String = chars[..chars.len() - 1].iter().collect();
                        model.starts_with(&prefix)
                    } else {
                        *a == model
                    }
                });
            prop_assert_eq!(model_allowed(&allow, &model), expected);
        }
    }
}
