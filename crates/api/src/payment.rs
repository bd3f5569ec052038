//! Payment gateways' protocols: what a gateway is configured with, how an order is sent to it
//! and how its payment notification is verified. The handlers (`routes::payments`) own the
//! orders and the crediting; this module owns the wire.
//!
//! Four protocols: epay and Stripe Checkout here, Alipay ([`alipay`]) and WeChat Pay
//! ([`wxpay`]) in their modules, with the RSA keys both use in [`rsa`]. **epay** (易支付, the MD5 form protocol most one-api
//! operators use):
//! - pay: the browser opens `{url}/submit.php?pid=&type=&out_trade_no=&notify_url=&return_url=
//!   &name=&money=&sign=&sign_type=MD5`;
//! - sign: the parameters with a value, except `sign` and `sign_type`, sorted by name, joined as
//!   `k=v&k=v`, the merchant key appended, MD5 in lower-case hex;
//! - notify: the gateway calls `notify_url` (GET, or a POSTed form) with `pid`, `trade_no` (its
//!   number), `out_trade_no` (ours), `type`, `name`, `money`, `trade_status` (`TRADE_SUCCESS`),
//!   `sign`, `sign_type`; it stops retrying once the answer's body is `success`.
//!
//! **Stripe Checkout**:
//! - pay: `POST {STRIPE_API_URL}/v1/checkout/sessions` (form, `Authorization: Bearer` the secret
//!   key) creates a session for the order (`client_reference_id` = our trade number, one line
//!   item of the amount in cents, `expires_at` = the order's expiry, so that Stripe stops taking
//!   payment when the order expires); the browser opens the session's `url`;
//! - notify: Stripe POSTs events as JSON to the webhook endpoint the administrator registered
//!   (`/api/payment/notify/{uuid}`), signed in the `Stripe-Signature` header: `t=<unix
//!   time>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the webhook secret>`; events older than
//!   five minutes are refused (replays); any 2xx stops its retries. A card payment is reported
//!   by `checkout.session.completed` (`payment_status` `paid`); a delayed method (ACH, SEPA
//!   debit, ...) completes the session `unpaid` and reports the outcome days later by
//!   `checkout.session.async_payment_succeeded` or `checkout.session.async_payment_failed`.

pub mod alipay;
pub mod rsa;
pub mod wxpay;

pub use alipay::AlipayConfig;
pub use wxpay::WxpayConfig;

use hmac::{Hmac, Mac};
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

/// Stripe's API origin (`STRIPE_API_URL` overrides it).
pub const STRIPE_API_URL: &str = "https://api.stripe.com";

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

/// A payment a notification reports, once its signature checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paid {
    /// Ours.
    pub trade_no: String,
    /// The gateway's.
    pub gateway_no: String,
    pub money: Decimal,
    /// Upper case, when the gateway says (Stripe does; epay has one currency).
    pub currency: Option<String>,
}

/// What a verified notification reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The order was paid.
    Paid(Paid),
    /// The payment of the order failed (Stripe's delayed methods): nothing was paid.
    Failed {
        trade_no: String,
        gateway_no: String,
    },
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

pub use crate::crypto::constant_time_eq;

/// Verifies an epay notification's `params` against `cfg`: signature (constant time), merchant
/// id and status; then the payment it reports.
pub fn epay_verify(cfg: &EpayConfig, params: &BTreeMap<String, String>) -> Result<Paid, Refused> {
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
    Ok(Paid {
        trade_no: trade_no.to_owned(),
        gateway_no: field("trade_no").to_owned(),
        money,
        currency: None,
    })
}

/// A Stripe gateway's configuration (both secrets).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StripeConfig {
    /// `sk_...` (or a restricted `rk_...` key allowed to create Checkout Sessions).
    pub secret_key: String,
    /// `whsec_...`: signs the webhook events.
    pub webhook_secret: String,
}

impl StripeConfig {
    pub fn check(&self) -> Result<(), String> {
        let k = &self.secret_key;
        if !(k.starts_with("sk_") || k.starts_with("rk_")) || k.len() > 256 {
            return Err("config.secret_key must be a Stripe secret key (sk_... or rk_...)".into());
        }
        let w = &self.webhook_secret;
        if !w.starts_with("whsec_") || w.len() > 256 {
            return Err(
                "config.webhook_secret must be a webhook signing secret (whsec_...)".into(),
            );
        }
        Ok(())
    }
}

/// A gateway's configuration, by its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayConfig {
    Epay(EpayConfig),
    Stripe(StripeConfig),
    Alipay(AlipayConfig),
    Wxpay(WxpayConfig),
}

/// The date (`YYYY-MM-DD`) and time (`HH:MM:SS`) of unix time `secs` in China (UTC+8, no
/// daylight saving), as Alipay and WeChat Pay write times.
pub fn china_time(secs: i64) -> (String, String) {
    let local = secs + 8 * 3600;
    let (y, m, d) = switchboard_domain::invoice::civil_from_days(local.div_euclid(86_400));
    let s = local.rem_euclid(86_400);
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60),
    )
}

impl GatewayConfig {
    /// The configuration of a gateway of `gateway_type` from its (opened) JSON.
    pub fn parse(gateway_type: &str, json: &str) -> Result<Self, String> {
        match gateway_type {
            "epay" => serde_json::from_str(json).map(GatewayConfig::Epay),
            "stripe" => serde_json::from_str(json).map(GatewayConfig::Stripe),
            "alipay" => serde_json::from_str(json).map(GatewayConfig::Alipay),
            "wxpay" => serde_json::from_str(json).map(GatewayConfig::Wxpay),
            other => return Err(format!("unknown gateway type {other:?}")),
        }
        .map_err(|e| e.to_string())
    }

    pub fn to_json(&self) -> String {
        match self {
            GatewayConfig::Epay(c) => serde_json::to_string(c),
            GatewayConfig::Stripe(c) => serde_json::to_string(c),
            GatewayConfig::Alipay(c) => serde_json::to_string(c),
            GatewayConfig::Wxpay(c) => serde_json::to_string(c),
        }
        .unwrap_or_default()
    }

    pub fn check(&self) -> Result<(), String> {
        match self {
            GatewayConfig::Epay(c) => c.check(),
            GatewayConfig::Stripe(c) => c.check(),
            GatewayConfig::Alipay(c) => c.check(),
            GatewayConfig::Wxpay(c) => c.check(),
        }
    }

    /// What an administrator sees: no secret.
    pub fn public_json(&self) -> serde_json::Value {
        match self {
            GatewayConfig::Epay(c) => c.public_json(),
            GatewayConfig::Stripe(_) => serde_json::json!({}),
            GatewayConfig::Alipay(c) => c.public_json(),
            GatewayConfig::Wxpay(c) => c.public_json(),
        }
    }

    /// Where the gateway sends money and whom it trusts, field by field: the epay site and
    /// merchant id; the Alipay application and Alipay's public key; the WeChat Pay merchant,
    /// application, certificate serial and WeChat Pay's key (whoever sets a public key the
    /// notifications are checked against can sign payments). Stripe has none beyond its secret
    /// key. Only root may change these while a stored secret is kept (`destination_changes`).
    fn destination(&self) -> Vec<(&'static str, String)> {
        match self {
            GatewayConfig::Epay(c) => vec![
                ("url", c.url.trim().trim_end_matches('/').to_owned()),
                ("pid", c.pid.trim().to_owned()),
            ],
            GatewayConfig::Stripe(_) => Vec::new(),
            GatewayConfig::Alipay(c) => vec![
                ("app_id", c.app_id.clone()),
                (
                    "alipay_public_key",
                    c.alipay_public_key.split_whitespace().collect(),
                ),
            ],
            GatewayConfig::Wxpay(c) => vec![
                ("mch_id", c.mch_id.clone()),
                ("app_id", c.app_id.clone()),
                ("serial_no", c.serial_no.to_ascii_uppercase()),
                ("platform_key_id", c.platform_key_id.clone()),
                (
                    "platform_public_key",
                    c.platform_public_key.split_whitespace().collect(),
                ),
            ],
        }
    }

    /// The destination fields `new` changes from `self` (`type` when the type changes).
    pub fn destination_changes(&self, new: &GatewayConfig) -> Vec<&'static str> {
        if std::mem::discriminant(self) != std::mem::discriminant(new) {
            return vec!["type"];
        }
        self.destination()
            .into_iter()
            .zip(new.destination())
            .filter(|(a, b)| a.1 != b.1)
            .map(|(a, _)| a.0)
            .collect()
    }

    /// Which secrets are stored.
    pub fn secrets_set(&self) -> serde_json::Value {
        match self {
            GatewayConfig::Epay(c) => serde_json::json!({"key": !c.key.is_empty()}),
            GatewayConfig::Stripe(c) => serde_json::json!({
                "secret_key": !c.secret_key.is_empty(),
                "webhook_secret": !c.webhook_secret.is_empty(),
            }),
            GatewayConfig::Alipay(c) => {
                serde_json::json!({"private_key": !c.private_key.is_empty()})
            }
            GatewayConfig::Wxpay(c) => serde_json::json!({
                "private_key": !c.private_key.is_empty(),
                "api_v3_key": !c.api_v3_key.is_empty(),
            }),
        }
    }
}

/// How far a Stripe event's signature time may be from now, in seconds (Stripe's default).
pub const STRIPE_TOLERANCE_SECS: i64 = 300;

/// The `Stripe-Signature` header's value for `body` at `t` under `secret` (what Stripe sends;
/// used by the tests' stand-in).
pub fn stripe_signature(secret: &str, t: i64, body: &[u8]) -> String {
    format!("t={t},v1={}", stripe_v1(secret, t, body))
}

fn stripe_v1(secret: &str, t: i64, body: &[u8]) -> String {
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()) else {
        return String::new();
    };
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// The Checkout Session events a Stripe gateway acts on.
pub const STRIPE_COMPLETED: &str = "checkout.session.completed";
pub const STRIPE_ASYNC_SUCCEEDED: &str = "checkout.session.async_payment_succeeded";
pub const STRIPE_ASYNC_FAILED: &str = "checkout.session.async_payment_failed";

/// Verifies a Stripe webhook call (`header`: its `Stripe-Signature`, `body`: the raw body) at
/// `now`, and reads what it reports: a payment (`checkout.session.completed` or
/// `checkout.session.async_payment_succeeded` of a session whose `payment_status` is `paid`) or
/// a failed delayed payment (`checkout.session.async_payment_failed`). Other events, and
/// sessions completed but not paid yet (a delayed method still processing), are
/// [`Refused::NotPaid`] (acknowledged, nothing done).
pub fn stripe_verify(
    cfg: &StripeConfig,
    header: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<Notice, Refused> {
    let header = header.ok_or_else(|| Refused::Forged("no Stripe-Signature header".into()))?;
    let mut t: Option<i64> = None;
    let mut v1: Vec<&str> = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", v)) => t = v.parse().ok(),
            Some(("v1", v)) => v1.push(v),
            _ => {}
        }
    }
    let t = t.ok_or_else(|| Refused::Forged("the signature has no time".into()))?;
    let expected = stripe_v1(&cfg.webhook_secret, t, body);
    if expected.is_empty()
        || !v1
            .iter()
            .any(|s| constant_time_eq(s.as_bytes(), expected.as_bytes()))
    {
        return Err(Refused::Forged("the signature does not match".into()));
    }
    if (now - t).abs() > STRIPE_TOLERANCE_SECS {
        return Err(Refused::Forged(format!(
            "the signature is {}s old (at most {STRIPE_TOLERANCE_SECS}s): a replay",
            now - t
        )));
    }
    let event: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| Refused::Malformed(format!("the event is not JSON: {e}")))?;
    let kind = event["type"].as_str().unwrap_or_default();
    if ![
        STRIPE_COMPLETED,
        STRIPE_ASYNC_SUCCEEDED,
        STRIPE_ASYNC_FAILED,
    ]
    .contains(&kind)
    {
        return Err(Refused::NotPaid(format!("event {kind:?} is not a payment")));
    }
    let session = &event["data"]["object"];
    let trade_no = || {
        session["client_reference_id"]
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Refused::Malformed("no client_reference_id".into()))
    };
    if kind == STRIPE_ASYNC_FAILED {
        return Ok(Notice::Failed {
            trade_no: trade_no()?.to_owned(),
            gateway_no: session["id"].as_str().unwrap_or_default().to_owned(),
        });
    }
    if session["payment_status"].as_str() != Some("paid") {
        return Err(Refused::NotPaid(format!(
            "the session's payment_status is {} ({kind})",
            session["payment_status"]
        )));
    }
    let trade_no = trade_no()?;
    let cents = session["amount_total"]
        .as_i64()
        .ok_or_else(|| Refused::Malformed("no amount_total".into()))?;
    Ok(Notice::Paid(Paid {
        trade_no: trade_no.to_owned(),
        gateway_no: session["id"].as_str().unwrap_or_default().to_owned(),
        money: Decimal::new(cents, 2),
        currency: session["currency"].as_str().map(str::to_ascii_uppercase),
    }))
}

/// Stripe's shortest Checkout Session life: `expires_at` must be at least 30 minutes after the
/// session is created.
pub const STRIPE_MIN_EXPIRY_SECS: i64 = 30 * 60;

/// An order as Stripe Checkout is asked to charge it.
pub struct StripeOrder<'a> {
    pub trade_no: &'a str,
    /// In the currency's smallest unit (cents).
    pub amount_cents: i64,
    /// Lower case (`usd`, `cny`).
    pub currency: &'a str,
    pub name: &'a str,
    pub success_url: &'a str,
    pub cancel_url: &'a str,
    /// Unix time after which Stripe takes no payment for the session: the order's expiry.
    pub expires_at: i64,
}

/// Creates a Checkout Session for `order` at `api` (Stripe's API origin); its payment page URL.
pub async fn stripe_checkout(
    client: &reqwest::Client,
    api: &str,
    cfg: &StripeConfig,
    order: &StripeOrder<'_>,
) -> Result<String, String> {
    let cents = order.amount_cents.to_string();
    let expires_at = order.expires_at.to_string();
    let form = [
        ("expires_at", expires_at.as_str()),
        ("mode", "payment"),
        ("client_reference_id", order.trade_no),
        ("metadata[trade_no]", order.trade_no),
        ("success_url", order.success_url),
        ("cancel_url", order.cancel_url),
        ("line_items[0][quantity]", "1"),
        ("line_items[0][price_data][currency]", order.currency),
        ("line_items[0][price_data][unit_amount]", &cents),
        ("line_items[0][price_data][product_data][name]", order.name),
    ];
    let url = format!("{}/v1/checkout/sessions", api.trim_end_matches('/'));
    let resp = client
        .post(url)
        .bearer_auth(&cfg.secret_key)
        .header("Idempotency-Key", order.trade_no)
        .form(&form)
        .timeout(std::time::Duration::from_secs(20))
        .send()
        .await
        .map_err(|e| format!("Stripe did not answer: {e}"))?;
    let status = resp.status();
    let body: serde_json::Value = resp
        .json()
        .await
        .map_err(|e| format!("Stripe's answer is not JSON ({status}): {e}"))?;
    if !status.is_success() {
        return Err(format!(
            "Stripe refused the session ({status}): {}",
            body["error"]["message"]
                .as_str()
                .unwrap_or("no reason given")
        ));
    }
    body["url"]
        .as_str()
        .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
        .map(str::to_owned)
        .ok_or_else(|| "Stripe's session has no payment page URL".into())
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
            Paid {
                trade_no: "SB1".into(),
                gateway_no: "2026112600001".into(),
                money: Decimal::from_str("73").unwrap(),
                currency: None,
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

    fn stripe() -> StripeConfig {
        StripeConfig {
            secret_key: "sk_test_1".into(),
            webhook_secret: "whsec_test".into(),
        }
    }

    fn completed(trade_no: &str, cents: i64, status: &str) -> Vec<u8> {
        serde_json::json!({
            "id": "evt_1", "type": "checkout.session.completed",
            "data": {"object": {"id": "cs_test_1", "client_reference_id": trade_no,
                                 "amount_total": cents, "currency": "usd",
                                 "payment_status": status}}
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn stripe_events_are_verified_within_the_tolerance() {
        let c = stripe();
        let body = completed("SB9", 1_050, "paid");
        let now = 1_800_000_000;
        let sig = stripe_signature("whsec_test", now - 10, &body);
        let paid = stripe_verify(&c, Some(&sig), &body, now).unwrap();
        assert_eq!(
            paid,
            Notice::Paid(Paid {
                trade_no: "SB9".into(),
                gateway_no: "cs_test_1".into(),
                money: Decimal::from_str("10.50").unwrap(),
                currency: Some("USD".into()),
            })
        );
        // Several v1 values (secret rolling): any one may match.
        let two = format!(
            "t={},v1={},v1={}",
            now,
            "0".repeat(64),
            stripe_v1("whsec_test", now, &body)
        );
        assert!(stripe_verify(&c, Some(&two), &body, now).is_ok());
        // Too old or from the future: a replay.
        let old = stripe_signature("whsec_test", now - 301, &body);
        assert!(
            matches!(stripe_verify(&c, Some(&old), &body, now), Err(Refused::Forged(m)) if m.contains("replay"))
        );
        let future = stripe_signature("whsec_test", now + 301, &body);
        assert!(stripe_verify(&c, Some(&future), &body, now).is_err());
        // Another secret, a changed body, no header, no time.
        let other = stripe_signature("whsec_other", now, &body);
        assert!(matches!(
            stripe_verify(&c, Some(&other), &body, now),
            Err(Refused::Forged(_))
        ));
        let tampered = completed("SB9", 1, "paid");
        assert!(matches!(
            stripe_verify(&c, Some(&sig), &tampered, now),
            Err(Refused::Forged(_))
        ));
        assert!(matches!(
            stripe_verify(&c, None, &body, now),
            Err(Refused::Forged(_))
        ));
        let v1_only = format!("v1={}", stripe_v1("whsec_test", now, &body));
        assert!(matches!(
            stripe_verify(&c, Some(&v1_only), &body, now),
            Err(Refused::Forged(_))
        ));
        // Signed, but not a payment.
        let unpaid = completed("SB9", 1_050, "unpaid");
        let s = stripe_signature("whsec_test", now, &unpaid);
        assert!(matches!(
            stripe_verify(&c, Some(&s), &unpaid, now),
            Err(Refused::NotPaid(_))
        ));
        let other_event = br#"{"type":"payment_intent.created","data":{"object":{}}}"#;
        let s = stripe_signature("whsec_test", now, other_event);
        assert!(matches!(
            stripe_verify(&c, Some(&s), other_event, now),
            Err(Refused::NotPaid(_))
        ));
    }

    #[test]
    fn stripe_delayed_payments_are_read_from_their_async_events() {
        let c = stripe();
        let now = 1_800_000_000;
        let event = |kind: &str, status: &str| {
            serde_json::json!({
                "id": "evt_2", "type": kind,
                "data": {"object": {"id": "cs_test_2", "client_reference_id": "SB7",
                                     "amount_total": 2_000, "currency": "eur",
                                     "payment_status": status}}
            })
            .to_string()
            .into_bytes()
        };
        let verify = |body: &[u8]| {
            let sig = stripe_signature("whsec_test", now, body);
            stripe_verify(&c, Some(&sig), body, now)
        };
        // SEPA debit: the session completes unpaid (nothing yet), then succeeds or fails.
        assert!(matches!(
            verify(&event(STRIPE_COMPLETED, "unpaid")),
            Err(Refused::NotPaid(_))
        ));
        assert_eq!(
            verify(&event(STRIPE_ASYNC_SUCCEEDED, "paid")).unwrap(),
            Notice::Paid(Paid {
                trade_no: "SB7".into(),
                gateway_no: "cs_test_2".into(),
                money: Decimal::from_str("20").unwrap(),
                currency: Some("EUR".into()),
            })
        );
        assert_eq!(
            verify(&event(STRIPE_ASYNC_FAILED, "unpaid")).unwrap(),
            Notice::Failed {
                trade_no: "SB7".into(),
                gateway_no: "cs_test_2".into(),
            }
        );
        assert!(matches!(
            verify(&event("checkout.session.expired", "unpaid")),
            Err(Refused::NotPaid(_))
        ));
    }

    #[test]
    fn stripe_configurations_are_checked() {
        assert!(stripe().check().is_ok());
        let bad_key = StripeConfig {
            secret_key: "pk_test_1".into(),
            ..stripe()
        };
        assert!(bad_key.check().unwrap_err().contains("secret_key"));
        let bad_hook = StripeConfig {
            webhook_secret: "secret".into(),
            ..stripe()
        };
        assert!(bad_hook.check().unwrap_err().contains("webhook_secret"));
        let g = GatewayConfig::parse("stripe", &GatewayConfig::Stripe(stripe()).to_json()).unwrap();
        assert_eq!(g, GatewayConfig::Stripe(stripe()));
        assert_eq!(g.public_json(), serde_json::json!({}));
        assert!(GatewayConfig::parse("paypal", "{}").is_err());
    }

    #[test]
    fn china_time_is_utc_plus_eight() {
        // 2026-11-26 16:30:05 UTC is the next day in China.
        assert_eq!(
            china_time(1_795_710_605),
            ("2026-11-27".to_owned(), "00:30:05".to_owned())
        );
        assert_eq!(
            china_time(0),
            ("1970-01-01".to_owned(), "08:00:00".to_owned())
        );
    }
}
