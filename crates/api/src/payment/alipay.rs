//! Alipay's open API (支付宝开放平台), RSA2 both ways:
//! - every request carries the common parameters `app_id`, `method`, `format=JSON`,
//!   `charset=utf-8`, `sign_type=RSA2`, `timestamp` (`yyyy-MM-dd HH:mm:ss`, China time),
//!   `version=1.0`, `notify_url`, (`return_url`) and `biz_content` (the method's JSON); `sign`
//!   is the application private key's RSA-SHA256 signature of every other non-empty parameter,
//!   sorted by name, joined as `k=v&k=v` with raw (not URL-encoded) values;
//! - **precreate** (`alipay.trade.precreate`, 当面付): the request is POSTed to the gateway;
//!   the JSON answer holds `alipay_trade_precreate_response` (`code` "10000" and `qr_code`, the
//!   text the payer scans) and `sign`, Alipay's signature of that member's exact JSON text under
//!   the Alipay public key;
//! - **page pay** (`alipay.trade.page.pay`, 电脑网站支付): the browser opens the gateway URL
//!   with the signed request in its query;
//! - **notify**: Alipay POSTs a form to `notify_url` (`app_id`, `out_trade_no`, `trade_no`,
//!   `trade_status`, `total_amount`, ..., `sign_type`, `sign`); `sign` is Alipay's signature of
//!   the other fields except `sign_type`, sorted and joined as above; it stops retrying once the
//!   body of the answer is `success`. Payments are `TRADE_SUCCESS` or `TRADE_FINISHED`.
//!
//! Alipay charges in CNY (`total_amount` in yuan, two decimals).

use super::rsa::{PrivateKey, PublicKey};
use super::{china_time, Paid, Refused};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::str::FromStr;

/// Alipay's gateway (`ALIPAY_GATEWAY_URL` overrides it; Alipay's sandbox is
/// `https://openapi-sandbox.dl.alipaydev.com/gateway.do`).
pub const ALIPAY_GATEWAY_URL: &str = "https://openapi.alipay.com/gateway.do";

/// How the payer pays: scans a code, or is sent to Alipay's web cashier.
pub const ALIPAY_MODES: &[&str] = &["qrcode", "page"];

/// An Alipay gateway's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AlipayConfig {
    /// The application's id (digits).
    pub app_id: String,
    /// The application's RSA private key (secret): PEM or bare base64, PKCS#8 or PKCS#1.
    pub private_key: String,
    /// Alipay's public key for this application (signs answers and notifications).
    pub alipay_public_key: String,
    /// `qrcode` (alipay.trade.precreate) or `page` (alipay.trade.page.pay).
    pub mode: String,
}

impl AlipayConfig {
    pub fn check(&self) -> Result<(), String> {
        if self.app_id.is_empty()
            || self.app_id.len() > 32
            || !self.app_id.bytes().all(|b| b.is_ascii_digit())
        {
            return Err("config.app_id must be the application's id (digits)".into());
        }
        if !ALIPAY_MODES.contains(&self.mode.as_str()) {
            return Err("config.mode must be qrcode or page".into());
        }
        if self.private_key.len() > 8192 {
            return Err("config.private_key is too long".into());
        }
        PrivateKey::parse(&self.private_key).map_err(|e| format!("config.private_key: {e}"))?;
        if self.alipay_public_key.len() > 4096 {
            return Err("config.alipay_public_key is too long".into());
        }
        PublicKey::parse(&self.alipay_public_key)
            .map_err(|e| format!("config.alipay_public_key: {e}"))?;
        Ok(())
    }

    pub fn public_json(&self) -> serde_json::Value {
        serde_json::json!({
            "app_id": self.app_id,
            "mode": self.mode,
            "alipay_public_key": self.alipay_public_key,
        })
    }
}

/// The text Alipay signs: the non-empty `params` other than those in `skip`, sorted by name,
/// joined as `k=v&k=v`.
pub fn sign_content(params: &BTreeMap<String, String>, skip: &[&str]) -> String {
    let mut text = String::new();
    for (k, v) in params {
        if v.is_empty() || skip.contains(&k.as_str()) {
            continue;
        }
        if !text.is_empty() {
            text.push('&');
        }
        text.push_str(k);
        text.push('=');
        text.push_str(v);
    }
    text
}

/// An order as Alipay is asked to charge it.
pub struct AlipayOrder<'a> {
    pub trade_no: &'a str,
    /// Yuan, two decimals.
    pub total_amount: &'a str,
    pub subject: &'a str,
    pub notify_url: &'a str,
    pub return_url: &'a str,
    /// Minutes the payer has.
    pub timeout_minutes: i64,
}

/// The signed parameters of `method` for `order`, at unix time `now`.
pub fn signed_request(
    cfg: &AlipayConfig,
    method: &str,
    order: &AlipayOrder<'_>,
    now: i64,
) -> Result<BTreeMap<String, String>, String> {
    let key = PrivateKey::parse(&cfg.private_key)?;
    let mut biz = serde_json::json!({
        "out_trade_no": order.trade_no,
        "total_amount": order.total_amount,
        "subject": order.subject,
        "timeout_express": format!("{}m", order.timeout_minutes),
    });
    if method == "alipay.trade.page.pay" {
        biz["product_code"] = "FAST_INSTANT_TRADE_PAY".into();
    }
    let (date, time) = china_time(now);
    let mut p: BTreeMap<String, String> = BTreeMap::new();
    p.insert("app_id".into(), cfg.app_id.clone());
    p.insert("method".into(), method.into());
    p.insert("format".into(), "JSON".into());
    p.insert("charset".into(), "utf-8".into());
    p.insert("sign_type".into(), "RSA2".into());
    p.insert("timestamp".into(), format!("{date} {time}"));
    p.insert("version".into(), "1.0".into());
    p.insert("notify_url".into(), order.notify_url.into());
    if method == "alipay.trade.page.pay" {
        p.insert("return_url".into(), order.return_url.into());
    }
    p.insert("biz_content".into(), biz.to_string());
    let sign = key.sign(sign_content(&p, &["sign"]).as_bytes());
    p.insert("sign".into(), sign);
    Ok(p)
}

/// The URL of Alipay's web cashier for `order` (page pay) under `gateway`.
pub fn page_pay_url(
    gateway: &str,
    cfg: &AlipayConfig,
    order: &AlipayOrder<'_>,
    now: i64,
) -> Result<String, String> {
    let p = signed_request(cfg, "alipay.trade.page.pay", order, now)?;
    let mut url = url::Url::parse(gateway).map_err(|e| format!("ALIPAY_GATEWAY_URL: {e}"))?;
    url.query_pairs_mut().extend_pairs(p.iter());
    Ok(url.into())
}

#[derive(Deserialize)]
struct SignedAnswer<'a> {
    #[serde(borrow, default)]
    alipay_trade_precreate_response: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error_response: Option<&'a RawValue>,
    #[serde(default)]
    sign: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PrecreateResponse {
    code: String,
    msg: String,
    sub_code: String,
    sub_msg: String,
    out_trade_no: String,
    qr_code: String,
}

/// Reads a precreate answer `body`: the code to scan, once Alipay's signature of it checked
/// out and it is for `trade_no`.
pub fn read_precreate(cfg: &AlipayConfig, trade_no: &str, body: &str) -> Result<String, String> {
    let answer: SignedAnswer<'_> =
        serde_json::from_str(body).map_err(|e| format!("Alipay's answer is not JSON: {e}"))?;
    let raw = answer
        .alipay_trade_precreate_response
        .or(answer.error_response)
        .ok_or("Alipay's answer has no alipay_trade_precreate_response")?;
    let r: PrecreateResponse = serde_json::from_str(raw.get()).unwrap_or_default();
    if r.code != "10000" {
        // A refusal credits nothing and shows no code: its reason is worth showing even if it
        // is unsigned (Alipay does not sign some of them).
        let reason = if r.sub_msg.is_empty() {
            r.msg
        } else {
            r.sub_msg
        };
        return Err(format!(
            "Alipay refused the order ({} {}): {reason}",
            r.code, r.sub_code
        ));
    }
    let public = PublicKey::parse(&cfg.alipay_public_key)?;
    if !answer
        .sign
        .as_deref()
        .is_some_and(|s| public.verify(raw.get().as_bytes(), s))
    {
        return Err("Alipay's answer is not signed with the configured Alipay public key".into());
    }
    if r.out_trade_no != trade_no || r.qr_code.is_empty() {
        return Err(format!(
            "Alipay's answer is for order {:?}, with no code to scan",
            r.out_trade_no
        ));
    }
    Ok(r.qr_code)
}

/// Creates the order at Alipay (precreate) under `gateway`; the code the payer scans.
pub async fn precreate(
    client: &reqwest::Client,
    gateway: &str,
    cfg: &AlipayConfig,
    order: &AlipayOrder<'_>,
    now: i64,
) -> Result<String, String> {
    let p = signed_request(cfg, "alipay.trade.precreate", order, now)?;
    let resp = client
        .post(gateway)
        .form(&p)
        .timeout(std::time::Duration::from_secs(20))
        .send()
        .await
        .map_err(|e| format!("Alipay did not answer: {e}"))?;
    let status = resp.status();
    let body = resp
        .text()
        .await
        .map_err(|e| format!("Alipay's answer was cut ({status}): {e}"))?;
    if !status.is_success() {
        return Err(format!("Alipay answered {status}"));
    }
    read_precreate(cfg, order.trade_no, &body)
}

/// Verifies an Alipay notification's form `params`: signature (Alipay's public key), app id and
/// status; then the payment it reports.
pub fn verify(cfg: &AlipayConfig, params: &BTreeMap<String, String>) -> Result<Paid, Refused> {
    let sign = params
        .get("sign")
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Refused::Forged("no signature".into()))?;
    let public = PublicKey::parse(&cfg.alipay_public_key)
        .map_err(|e| Refused::Forged(format!("the Alipay public key is unusable: {e}")))?;
    let content = sign_content(params, &["sign", "sign_type"]);
    if !public.verify(content.as_bytes(), sign) {
        return Err(Refused::Forged("the signature does not match".into()));
    }
    let field = |k: &str| params.get(k).map(String::as_str).unwrap_or_default();
    if field("app_id") != cfg.app_id {
        return Err(Refused::Forged(format!(
            "app_id {:?} is not this gateway's",
            field("app_id")
        )));
    }
    if !matches!(field("trade_status"), "TRADE_SUCCESS" | "TRADE_FINISHED") {
        return Err(Refused::NotPaid(format!(
            "trade_status is {:?}",
            field("trade_status")
        )));
    }
    let trade_no = field("out_trade_no");
    if trade_no.is_empty() {
        return Err(Refused::Malformed("no out_trade_no".into()));
    }
    let money = Decimal::from_str(field("total_amount").trim()).map_err(|_| {
        Refused::Malformed(format!(
            "total_amount {:?} is not a number",
            field("total_amount")
        ))
    })?;
    Ok(Paid {
        trade_no: trade_no.to_owned(),
        gateway_no: field("trade_no").to_owned(),
        money,
        currency: Some("CNY".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::super::rsa::tests::{bare, GATEWAY_KEY, GATEWAY_PUB, MERCHANT_KEY, MERCHANT_PUB};
    use super::*;

    fn cfg() -> AlipayConfig {
        AlipayConfig {
            app_id: "2021000000000001".into(),
            private_key: MERCHANT_KEY.into(),
            alipay_public_key: bare(GATEWAY_PUB),
            mode: "qrcode".into(),
        }
    }

    fn order() -> AlipayOrder<'static> {
        AlipayOrder {
            trade_no: "SB1",
            total_amount: "73.00",
            subject: "Top-up 10 USD",
            notify_url: "https://sb.example/api/payment/notify/u",
            return_url: "https://sb.example/panel/topup?trade_no=SB1",
            timeout_minutes: 30,
        }
    }

    #[test]
    fn requests_are_signed_over_the_sorted_parameters() {
        // 2026-11-26 05:00:00 UTC is 13:00:00 in China.
        let p = signed_request(&cfg(), "alipay.trade.precreate", &order(), 1_795_669_200).unwrap();
        assert_eq!(p["timestamp"], "2026-11-26 13:00:00");
        assert_eq!(p["sign_type"], "RSA2");
        assert!(!p.contains_key("return_url"), "precreate has no return_url");
        let biz: serde_json::Value = serde_json::from_str(&p["biz_content"]).unwrap();
        assert_eq!(biz["total_amount"], "73.00");
        assert_eq!(biz["out_trade_no"], "SB1");
        // The text signed, written out independently: every parameter but sign, by name.
        let text = format!(
            "app_id=2021000000000001&biz_content={}&charset=utf-8&format=JSON&\
             method=alipay.trade.precreate&notify_url=https://sb.example/api/payment/notify/u&\
             sign_type=RSA2&timestamp=2026-11-26 13:00:00&version=1.0",
            p["biz_content"]
        );
        let merchant = PublicKey::parse(MERCHANT_PUB).unwrap();
        assert!(merchant.verify(text.as_bytes(), &p["sign"]));

        let url = page_pay_url(ALIPAY_GATEWAY_URL, &cfg(), &order(), 1_795_669_200).unwrap();
        let q: BTreeMap<String, String> = url::Url::parse(&url)
            .unwrap()
            .query_pairs()
            .into_owned()
            .collect();
        assert_eq!(q["method"], "alipay.trade.page.pay");
        assert_eq!(
            q["return_url"],
            "https://sb.example/panel/topup?trade_no=SB1"
        );
        assert!(q["biz_content"].contains("FAST_INSTANT_TRADE_PAY"));
        assert!(merchant.verify(sign_content(&q, &["sign"]).as_bytes(), &q["sign"]));
    }

    fn signed_answer(member: &str, key: &str) -> String {
        let sig = PrivateKey::parse(key).unwrap().sign(member.as_bytes());
        format!(r#"{{"alipay_trade_precreate_response":{member},"sign":"{sig}"}}"#)
    }

    #[test]
    fn precreate_answers_are_checked_against_alipays_key() {
        // Alipay's member text is signed byte for byte: spacing and escapes included.
        let member = r#"{"code":"10000","msg":"Success","out_trade_no":"SB1","qr_code":"https:\/\/qr.alipay.com\/bax01"}"#;
        let ok = signed_answer(member, GATEWAY_KEY);
        assert_eq!(
            read_precreate(&cfg(), "SB1", &ok).unwrap(),
            "https://qr.alipay.com/bax01"
        );
        // Signed by someone else, or not signed.
        let forged = signed_answer(member, MERCHANT_KEY);
        assert!(read_precreate(&cfg(), "SB1", &forged)
            .unwrap_err()
            .contains("not signed"));
        let unsigned = format!(r#"{{"alipay_trade_precreate_response":{member}}}"#);
        assert!(read_precreate(&cfg(), "SB1", &unsigned).is_err());
        // Another order's code.
        assert!(read_precreate(&cfg(), "SB2", &ok).is_err());
        // A refusal carries its reason.
        let refused = signed_answer(
            r#"{"code":"40004","msg":"Business Failed","sub_code":"ACQ.TOTAL_FEE_EXCEED","sub_msg":"订单金额超过限额"}"#,
            GATEWAY_KEY,
        );
        let e = read_precreate(&cfg(), "SB1", &refused).unwrap_err();
        assert!(e.contains("40004") && e.contains("订单金额超过限额"), "{e}");
        assert!(read_precreate(&cfg(), "SB1", "<html>").is_err());
    }

    fn notification(key: &str, fields: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut p: BTreeMap<String, String> = fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        p.insert("sign_type".into(), "RSA2".into());
        let text = sign_content(&p, &["sign", "sign_type"]);
        let sig = PrivateKey::parse(key).unwrap().sign(text.as_bytes());
        p.insert("sign".into(), sig);
        p
    }

    const PAID: &[(&str, &str)] = &[
        ("app_id", "2021000000000001"),
        ("out_trade_no", "SB1"),
        ("trade_no", "2026112622001"),
        ("trade_status", "TRADE_SUCCESS"),
        ("total_amount", "73.00"),
        ("notify_time", "2026-11-26 13:01:00"),
        ("charset", "utf-8"),
    ];

    #[test]
    fn notifications_are_verified() {
        let c = cfg();
        let p = notification(GATEWAY_KEY, PAID);
        assert_eq!(
            verify(&c, &p).unwrap(),
            Paid {
                trade_no: "SB1".into(),
                gateway_no: "2026112622001".into(),
                money: Decimal::from_str("73.00").unwrap(),
                currency: Some("CNY".into()),
            }
        );
        // Tampered amount.
        let mut t = p.clone();
        t.insert("total_amount".into(), "7300.00".into());
        assert!(matches!(verify(&c, &t), Err(Refused::Forged(_))));
        // Signed with the merchant's own key (anyone who has it is not Alipay).
        let m = notification(MERCHANT_KEY, PAID);
        assert!(matches!(verify(&c, &m), Err(Refused::Forged(_))));
        // No signature.
        let mut n = p.clone();
        n.remove("sign");
        assert!(matches!(verify(&c, &n), Err(Refused::Forged(_))));
        // Another application.
        let mut other: Vec<(&str, &str)> = PAID.to_vec();
        other[0] = ("app_id", "2021000000000002");
        assert!(matches!(
            verify(&c, &notification(GATEWAY_KEY, &other)),
            Err(Refused::Forged(_))
        ));
        // Waiting for the payer: acknowledged, nothing paid.
        let mut waiting: Vec<(&str, &str)> = PAID.to_vec();
        waiting[3] = ("trade_status", "WAIT_BUYER_PAY");
        assert!(matches!(
            verify(&c, &notification(GATEWAY_KEY, &waiting)),
            Err(Refused::NotPaid(_))
        ));
        let mut finished: Vec<(&str, &str)> = PAID.to_vec();
        finished[3] = ("trade_status", "TRADE_FINISHED");
        assert!(verify(&c, &notification(GATEWAY_KEY, &finished)).is_ok());
    }

    #[test]
    fn configurations_are_checked() {
        assert!(cfg().check().is_ok());
        for (what, c) in [
            (
                "app_id",
                AlipayConfig {
                    app_id: "app-1".into(),
                    ..cfg()
                },
            ),
            (
                "mode",
                AlipayConfig {
                    mode: "wap".into(),
                    ..cfg()
                },
            ),
            (
                "private_key",
                AlipayConfig {
                    private_key: MERCHANT_PUB.into(),
                    ..cfg()
                },
            ),
            (
                "alipay_public_key",
                AlipayConfig {
                    alipay_public_key: "MIIB".into(),
                    ..cfg()
                },
            ),
        ] {
            let e = c.check().unwrap_err();
            assert!(e.contains(what), "{what}: {e}");
        }
    }
}
