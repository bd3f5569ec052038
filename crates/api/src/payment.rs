//! Payment gateways' protocols: what a gateway is configured with, how an order is sent to it
//! and how its payment notification is verified. The handlers (`routes::payments`) own the
//! orders and the crediting; this module owns the wire.
//!
//! This release speaks **epay** (易支付, the MD5 form protocol most one-api operators use):
//! - pay: the browser opens `{url}/submit.php?pid=&type=&out_trade_no=&notify_url=&return_url=
//!   &name=&money=&sign=&sign_type=MD5`;
//! - sign: the parameters with a value, except `sign` and `sign_type`, sorted by name, joined as
//!   `k=v&k=v`, the merchant key appended, MD5 in lower-case hex;
//! - notify: the gateway calls `notify_url` (GET, or a POSTed form) with `pid`, `trade_no` (its
//!   number), `out_trade_no` (ours), `type`, `name`, `money`, `trade_status` (`TRADE_SUCCESS`),
//!   `sign`, `sign_type`; it stops retrying once the answer's body is `success`.

use md5::{Digest, Md5};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::str::FromStr;

/// A gateway's configuration, stored sealed as JSON (`payment_gateways.config`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EpayConfig {
    /// The epay site, e.g. `https://pay.example.com` (its `submit.php` is under it).
    pub url: String,
    /// Merchant id.
    pub pid: String,
    /// Merchant key (secret).
    pub key: String,
    /// `alipay`, `wxpay`, `qqpay`, or empty for the gateway's own choice page.
    pub pay_type: String,
}

pub const EPAY_PAY_TYPES: &[&str] = &["", "alipay", "wxpay", "qqpay"];

impl EpayConfig {
    /// The configuration's problems, if any (checked on save).
    pub fn check(&self) -> Result<(), String> {
        let url =
            url::Url::parse(self.url.trim()).map_err(|_| "config.url is not a URL".to_owned())?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err("config.url must be an http(s) URL".into());
        }
        if self.pid.trim().is_empty() || self.pid.len() > 64 {
            return Err("config.pid (merchant id) is required, at most 64 characters".into());
        }
        if self.key.is_empty() || self.key.len() > 256 {
            return Err("config.key (merchant key) is required, at most 256 characters".into());
        }
        if !EPAY_PAY_TYPES.contains(&self.pay_type.as_str()) {
            return Err("config.pay_type must be alipay, wxpay, qqpay or empty".into());
        }
        Ok(())
    }

    /// The configuration as an administrator sees it: no key.
    pub fn public_json(&self) -> serde_json::Value {
        serde_json::json!({"url": self.url, "pid": self.pid, "pay_type": self.pay_type})
    }
}

/// epay's signature of `params` (see the module documentation).
pub fn epay_sign(params: &BTreeMap<String, String>, key: &str) -> String {
    let mut text = String::new();
    for (k, v) in params {
        if k == "sign" || k == "sign_type" || v.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push('&');
        }
        text.push_str(k);
        text.push('=');
        text.push_str(v);
    }
    text.push_str(key);
    hex::encode(Md5::digest(text.as_bytes()))
}

/// What the browser opens to pay an order.
pub struct EpayOrder<'a> {
    pub trade_no: &'a str,
    /// Two decimals.
    pub money: &'a str,
    pub name: &'a str,
    pub notify_url: &'a str,
    pub return_url: &'a str,
}

/// The pay URL of `order` at the gateway configured by `cfg`.
pub fn epay_pay_url(cfg: &EpayConfig, order: &EpayOrder<'_>) -> Result<String, String> {
    let mut params: BTreeMap<String, String> = BTreeMap::new();
    params.insert("pid".into(), cfg.pid.clone());
    if !cfg.pay_type.is_empty() {
        params.insert("type".into(), cfg.pay_type.clone());
    }
    params.insert("out_trade_no".into(), order.trade_no.into());
    params.insert("notify_url".into(), order.notify_url.into());
    params.insert("return_url".into(), order.return_url.into());
    params.insert("name".into(), order.name.into());
    params.insert("money".into(), order.money.into());
    let sign = epay_sign(&params, &cfg.key);
    params.insert("sign".into(), sign);
    params.insert("sign_type".into(), "MD5".into());
    let base = cfg.url.trim().trim_end_matches('/');
    let mut url = url::Url::parse(&format!("{base}/submit.php")).map_err(|e| e.to_string())?;
    url.query_pairs_mut().extend_pairs(params.iter());
    Ok(url.into())
}

/// A payment an epay notification reports, once its signature and merchant checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpayPaid {
    /// Ours.
    pub trade_no: String,
    /// The gateway's.
    pub gateway_no: String,
    pub money: Decimal,
}

/// Why a notification is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Signature missing or wrong, or another merchant: not from the gateway.
    Forged(String),
    /// From the gateway but not a completed payment (`trade_status` other than success).
    NotPaid(String),
    /// Fields missing or malformed.
    Malformed(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Forged(m) => write!(f, "forged: {m}"),
            Refused::NotPaid(m) => write!(f, "not paid: {m}"),
            Refused::Malformed(m) => write!(f, "malformed: {m}"),
        }
    }
}

/// Equal byte strings, compared in time that depends only on their lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Verifies an epay notification's `params` against `cfg`: signature (constant time), merchant
/// id and status; then the payment it reports.
pub fn epay_verify(
    cfg: &EpayConfig,
    params: &BTreeMap<String, String>,
) -> Result<EpayPaid, Refused> {
    let sign = params
        .get("sign")
        .map(|s| s.to_ascii_lowercase())
        .ok_or_else(|| Refused::Forged("no signature".into()))?;
    let expected = epay_sign(params, &cfg.key);
    if !constant_time_eq(sign.as_bytes(), expected.as_bytes()) {
        return Err(Refused::Forged("the signature does not match".into()));
    }
    let field = |k: &str| params.get(k).map(String::as_str).unwrap_or_default();
    if field("pid") != cfg.pid {
        return Err(Refused::Forged(format!(
            "merchant id {:?} is not this gateway's",
            field("pid")
        )));
    }
    if field("trade_status") != "TRADE_SUCCESS" {
        return Err(Refused::NotPaid(format!(
            "trade_status is {:?}",
            field("trade_status")
        )));
    }
    let trade_no = field("out_trade_no");
    if trade_no.is_empty() {
        return Err(Refused::Malformed("no out_trade_no".into()));
    }
    let money = Decimal::from_str(field("money").trim())
        .map_err(|_| Refused::Malformed(format!("money {:?} is not a number", field("money"))))?;
    Ok(EpayPaid {
        trade_no: trade_no.to_owned(),
        gateway_no: field("trade_no").to_owned(),
        money,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> EpayConfig {
        EpayConfig {
            url: "https://pay.example.com/".into(),
            pid: "1001".into(),
            key: "k3y".into(),
            pay_type: "alipay".into(),
        }
    }

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_signature_is_md5_of_the_sorted_non_empty_fields_and_the_key() {
        let p = params(&[
            ("pid", "1001"),
            ("money", "1.00"),
            ("type", ""),
            ("sign", "x"),
            ("sign_type", "MD5"),
            ("name", "t"),
        ]);
        // md5("money=1.00&name=t&pid=1001k3y"), computed independently.
        let text = "money=1.00&name=t&pid=1001k3y";
        assert_eq!(
            epay_sign(&p, "k3y"),
            hex::encode(Md5::digest(text.as_bytes()))
        );
        assert_eq!(
            hex::encode(Md5::digest(b"abc")),
            "900150983cd24fb0d6963f7d28e17f72",
            "RFC 1321's test vector"
        );
    }

    #[test]
    fn the_pay_url_carries_a_signature_the_verifier_accepts() {
        let c = cfg();
        let url = epay_pay_url(
            &c,
            &EpayOrder {
                trade_no: "SB1",
                money: "73.00",
                name: "Top-up 10 USD",
                notify_url: "https://sb.example/api/payment/notify/u",
                return_url: "https://sb.example/panel/topup",
            },
        )
        .unwrap();
        assert!(
            url.starts_with("https://pay.example.com/submit.php?"),
            "{url}"
        );
        let q: BTreeMap<String, String> = url::Url::parse(&url)
            .unwrap()
            .query_pairs()
            .into_owned()
            .collect();
        assert_eq!(q["type"], "alipay");
        assert_eq!(q["sign"], epay_sign(&q, "k3y"));
        assert_eq!(q["sign_type"], "MD5");
    }

    #[test]
    fn notifications_are_verified() {
        let c = cfg();
        let mut p = params(&[
            ("pid", "1001"),
            ("trade_no", "2026112600001"),
            ("out_trade_no", "SB1"),
            ("type", "alipay"),
            ("name", "Top-up"),
            ("money", "73.00"),
            ("trade_status", "TRADE_SUCCESS"),
        ]);
        let sign = epay_sign(&p, "k3y");
        p.insert("sign".into(), sign.clone());
        p.insert("sign_type".into(), "MD5".into());
        let paid = epay_verify(&c, &p).unwrap();
        assert_eq!(
            paid,
            EpayPaid {
                trade_no: "SB1".into(),
                gateway_no: "2026112600001".into(),
                money: Decimal::from_str("73").unwrap(),
            }
        );
        // Tampered money: the signature no longer matches.
        let mut t = p.clone();
        t.insert("money".into(), "7300.00".into());
        assert!(matches!(epay_verify(&c, &t), Err(Refused::Forged(_))));
        // Signed with another key.
        let mut other = p.clone();
        other.insert("sign".into(), epay_sign(&p, "other"));
        assert!(matches!(epay_verify(&c, &other), Err(Refused::Forged(_))));
        // No signature.
        let mut none = p.clone();
        none.remove("sign");
        assert!(matches!(epay_verify(&c, &none), Err(Refused::Forged(_))));
        // Another merchant, correctly signed with its own fields.
        let mut m = p.clone();
        m.insert("pid".into(), "2002".into());
        let s = epay_sign(&m, "k3y");
        m.insert("sign".into(), s);
        assert!(matches!(epay_verify(&c, &m), Err(Refused::Forged(_))));
        // Not paid yet.
        let mut w = p.clone();
        w.insert("trade_status".into(), "WAIT_BUYER_PAY".into());
        let s = epay_sign(&w, "k3y");
        w.insert("sign".into(), s);
        assert!(matches!(epay_verify(&c, &w), Err(Refused::NotPaid(_))));
        // Upper-case hex signatures are accepted.
        let mut u = p.clone();
        u.insert("sign".into(), sign.to_ascii_uppercase());
        assert!(epay_verify(&c, &u).is_ok());
    }

    #[test]
    fn configurations_are_checked() {
        assert!(cfg().check().is_ok());
        for (what, c) in [
            (
                "url",
                EpayConfig {
                    url: "ftp://x".into(),
                    ..cfg()
                },
            ),
            (
                "url",
                EpayConfig {
                    url: "not a url".into(),
                    ..cfg()
                },
            ),
            (
                "pid",
                EpayConfig {
                    pid: " ".into(),
                    ..cfg()
                },
            ),
            (
                "key",
                EpayConfig {
                    key: String::new(),
                    ..cfg()
                },
            ),
            (
                "pay_type",
                EpayConfig {
                    pay_type: "card".into(),
                    ..cfg()
                },
            ),
        ] {
            let e = c.check().unwrap_err();
            assert!(e.contains(what), "{what}: {e}");
        }
    }

    #[test]
    fn constant_time_eq_compares_whole_strings() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
