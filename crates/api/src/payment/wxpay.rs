//! WeChat Pay (微信支付) API v3, Native payment (the payer scans a code):
//! - **requests** carry `Authorization: WECHATPAY2-SHA256-RSA2048 mchid="..",nonce_str="..",
//!   signature="..",timestamp="..",serial_no=".."`, the signature being the merchant API
//!   private key's RSA-SHA256 of `METHOD\nPATH?QUERY\nTIMESTAMP\nNONCE\nBODY\n`; `serial_no` is
//!   the merchant API certificate's serial number;
//! - **answers and notifications** are signed by WeChat Pay: headers `Wechatpay-Timestamp`,
//!   `Wechatpay-Nonce`, `Wechatpay-Signature` (RSA-SHA256 of `TIMESTAMP\nNONCE\nBODY\n`, base64)
//!   and `Wechatpay-Serial` (which WeChat Pay key signed: the configured public key's id,
//!   `PUB_KEY_ID_...`, or platform certificate serial); older than five minutes is a replay;
//! - **order**: `POST /v3/pay/transactions/native` `{appid, mchid, description, out_trade_no,
//!   time_expire, notify_url, amount: {total (fen), currency: "CNY"}}` answers `{code_url}`;
//! - **notify**: WeChat Pay POSTs `{id, event_type: "TRANSACTION.SUCCESS", resource: {algorithm:
//!   "AEAD_AES_256_GCM", ciphertext, nonce, associated_data}}`; the resource is the transaction
//!   (`mchid`, `appid`, `out_trade_no`, `transaction_id`, `trade_state`, `amount.total`,
//!   `amount.currency`) sealed with AES-256-GCM under the merchant's APIv3 key (the 16-byte tag
//!   at the end of the base64 ciphertext); WeChat Pay stops retrying on a 200 or 204, and a
//!   refusal is answered `{"code": "FAIL", "message": ...}` with a 4xx/5xx.

use super::rsa::{PrivateKey, PublicKey};
use super::{china_time, constant_time_eq, Paid, Refused};
use base64::Engine as _;
use ring::aead;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// WeChat Pay's API origin (`WXPAY_API_URL` overrides it).
pub const WXPAY_API_URL: &str = "https://api.mch.weixin.qq.com";

/// How far a signature's time may be from now, in seconds.
pub const WXPAY_TOLERANCE_SECS: i64 = 300;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A WeChat Pay merchant's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WxpayConfig {
    /// 商户号 (digits).
    pub mch_id: String,
    /// The app id the orders are placed for (official account, mini program or app: `wx...`).
    pub app_id: String,
    /// The merchant API certificate's serial number (hex).
    pub serial_no: String,
    /// The merchant API private key, `apiclient_key.pem` (secret).
    pub private_key: String,
    /// The APIv3 key: 32 characters that seal notifications (secret).
    pub api_v3_key: String,
    /// Which WeChat Pay key signs: its public key id (`PUB_KEY_ID_...`) or certificate serial.
    pub platform_key_id: String,
    /// That WeChat Pay public key (PEM).
    pub platform_public_key: String,
}

impl WxpayConfig {
    pub fn check(&self) -> Result<(), String> {
        if self.mch_id.is_empty()
            || self.mch_id.len() > 32
            || !self.mch_id.bytes().all(|b| b.is_ascii_digit())
        {
            return Err("config.mch_id must be the merchant id (digits)".into());
        }
        if self.app_id.is_empty()
            || self.app_id.len() > 64
            || self.app_id.contains(char::is_whitespace)
        {
            return Err("config.app_id is required (wx...), at most 64 characters".into());
        }
        if self.serial_no.is_empty()
            || self.serial_no.len() > 64
            || !self.serial_no.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(
                "config.serial_no must be the merchant API certificate's serial number (hex)"
                    .into(),
            );
        }
        if self.private_key.len() > 8192 {
            return Err("config.private_key is too long".into());
        }
        PrivateKey::parse(&self.private_key).map_err(|e| format!("config.private_key: {e}"))?;
        if self.api_v3_key.len() != 32 || !self.api_v3_key.is_ascii() {
            return Err("config.api_v3_key must be the 32-character APIv3 key".into());
        }
        if self.platform_key_id.is_empty()
            || self.platform_key_id.len() > 128
            || self.platform_key_id.contains(char::is_whitespace)
        {
            return Err(
                "config.platform_key_id must be WeChat Pay's public key id (PUB_KEY_ID_...) or \
                 platform certificate serial"
                    .into(),
            );
        }
        if self.platform_public_key.len() > 4096 {
            return Err("config.platform_public_key is too long".into());
        }
        PublicKey::parse(&self.platform_public_key)
            .map_err(|e| format!("config.platform_public_key: {e}"))?;
        Ok(())
    }

    pub fn public_json(&self) -> serde_json::Value {
        serde_json::json!({
            "mch_id": self.mch_id,
            "app_id": self.app_id,
            "serial_no": self.serial_no,
            "platform_key_id": self.platform_key_id,
            "platform_public_key": self.platform_public_key,
        })
    }
}

/// The `Authorization` header of a request (`path`: path and query, as sent).
pub fn authorization(
    cfg: &WxpayConfig,
    method: &str,
    path: &str,
    body: &str,
    timestamp: i64,
    nonce: &str,
) -> Result<String, String> {
    let key = PrivateKey::parse(&cfg.private_key)?;
    let message = format!("{method}\n{path}\n{timestamp}\n{nonce}\n{body}\n");
    Ok(format!(
        "WECHATPAY2-SHA256-RSA2048 mchid=\"{}\",nonce_str=\"{nonce}\",signature=\"{}\",timestamp=\"{timestamp}\",serial_no=\"{}\"",
        cfg.mch_id,
        key.sign(message.as_bytes()),
        cfg.serial_no
    ))
}

/// WeChat Pay's signature headers of an answer or a notification.
#[derive(Debug, Clone, Copy, Default)]
pub struct SignedBy<'a> {
    pub timestamp: Option<&'a str>,
    pub nonce: Option<&'a str>,
    pub signature: Option<&'a str>,
    pub serial: Option<&'a str>,
}

/// Checks that `body` was signed by the configured WeChat Pay key within the tolerance of
/// `now`.
pub fn check_signed(
    cfg: &WxpayConfig,
    by: &SignedBy<'_>,
    body: &[u8],
    now: i64,
) -> Result<(), Refused> {
    let (Some(ts), Some(nonce), Some(sig), Some(serial)) =
        (by.timestamp, by.nonce, by.signature, by.serial)
    else {
        return Err(Refused::Forged(
            "the Wechatpay-* signature headers are missing".into(),
        ));
    };
    if !constant_time_eq(serial.as_bytes(), cfg.platform_key_id.as_bytes()) {
        return Err(Refused::Forged(format!(
            "signed by key {serial:?}, not the configured WeChat Pay key"
        )));
    }
    let t: i64 = ts
        .parse()
        .map_err(|_| Refused::Forged(format!("Wechatpay-Timestamp {ts:?} is not a time")))?;
    let public = PublicKey::parse(&cfg.platform_public_key)
        .map_err(|e| Refused::Forged(format!("the WeChat Pay public key is unusable: {e}")))?;
    let mut message = Vec::with_capacity(ts.len() + nonce.len() + body.len() + 3);
    message.extend_from_slice(ts.as_bytes());
    message.push(b'\n');
    message.extend_from_slice(nonce.as_bytes());
    message.push(b'\n');
    message.extend_from_slice(body);
    message.push(b'\n');
    if !public.verify(&message, sig) {
        return Err(Refused::Forged("the signature does not match".into()));
    }
    if (now - t).abs() > WXPAY_TOLERANCE_SECS {
        return Err(Refused::Forged(format!(
            "the signature is {}s old (at most {WXPAY_TOLERANCE_SECS}s): a replay",
            now - t
        )));
    }
    Ok(())
}

/// An order as WeChat Pay is asked to charge it.
pub struct WxpayOrder<'a> {
    pub trade_no: &'a str,
    /// Fen (CNY cents).
    pub total: i64,
    pub description: &'a str,
    pub notify_url: &'a str,
    /// Unix time after which the code no longer pays.
    pub expires_at: i64,
}

/// RFC 3339 in China time, as WeChat Pay writes times.
fn china_rfc3339(secs: i64) -> String {
    let (date, time) = china_time(secs);
    format!("{date}T{time}+08:00")
}

/// The JSON body of a Native order.
pub fn native_body(cfg: &WxpayConfig, order: &WxpayOrder<'_>) -> String {
    serde_json::json!({
        "appid": cfg.app_id,
        "mchid": cfg.mch_id,
        "description": order.description,
        "out_trade_no": order.trade_no,
        "time_expire": china_rfc3339(order.expires_at),
        "notify_url": order.notify_url,
        "amount": {"total": order.total, "currency": "CNY"},
    })
    .to_string()
}

/// Places a Native order at `api`; the `code_url` the payer scans.
pub async fn native(
    client: &reqwest::Client,
    api: &str,
    cfg: &WxpayConfig,
    order: &WxpayOrder<'_>,
    now: i64,
) -> Result<String, String> {
    const PATH: &str = "/v3/pay/transactions/native";
    let body = native_body(cfg, order);
    let nonce = crate::auth::random_string(32);
    let auth = authorization(cfg, "POST", PATH, &body, now, &nonce)?;
    let resp = client
        .post(format!("{}{PATH}", api.trim_end_matches('/')))
        .header("Authorization", auth)
        .header("Accept", "application/json")
        .header("Content-Type", "application/json")
        .body(body)
        .timeout(std::time::Duration::from_secs(20))
        .send()
        .await
        .map_err(|e| format!("WeChat Pay did not answer: {e}"))?;
    let status = resp.status();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (ts, nonce, sig, serial) = (
        header("Wechatpay-Timestamp"),
        header("Wechatpay-Nonce"),
        header("Wechatpay-Signature"),
        header("Wechatpay-Serial"),
    );
    let text = resp
        .text()
        .await
        .map_err(|e| format!("WeChat Pay's answer was cut ({status}): {e}"))?;
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    if !status.is_success() {
        return Err(format!(
            "WeChat Pay refused the order ({status} {}): {}",
            json["code"].as_str().unwrap_or(""),
            json["message"].as_str().unwrap_or("no reason given")
        ));
    }
    let by = SignedBy {
        timestamp: ts.as_deref(),
        nonce: nonce.as_deref(),
        signature: sig.as_deref(),
        serial: serial.as_deref(),
    };
    check_signed(cfg, &by, text.as_bytes(), now)
        .map_err(|e| format!("WeChat Pay's answer is not to be trusted: {e}"))?;
    json["code_url"]
        .as_str()
        .filter(|u| !u.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| "WeChat Pay's answer has no code_url".into())
}

#[derive(Deserialize)]
struct Notification {
    #[serde(default)]
    event_type: String,
    resource: Option<Resource>,
}

#[derive(Deserialize)]
struct Resource {
    #[serde(default)]
    algorithm: String,
    ciphertext: String,
    nonce: String,
    #[serde(default)]
    associated_data: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Transaction {
    mchid: String,
    appid: String,
    out_trade_no: String,
    transaction_id: String,
    trade_state: String,
    amount: TransactionAmount,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TransactionAmount {
    total: Option<i64>,
    currency: String,
}

/// Opens an AES-256-GCM resource sealed under the APIv3 key.
pub fn decrypt(
    api_v3_key: &str,
    nonce: &str,
    associated_data: &str,
    ciphertext_b64: &str,
) -> Result<Vec<u8>, String> {
    let key = aead::UnboundKey::new(&aead::AES_256_GCM, api_v3_key.as_bytes())
        .map_err(|_| "the APIv3 key is not 32 bytes".to_owned())?;
    let nonce = aead::Nonce::try_assume_unique_for_key(nonce.as_bytes())
        .map_err(|_| "the resource's nonce is not 12 bytes".to_owned())?;
    let mut data = B64
        .decode(ciphertext_b64.as_bytes())
        .map_err(|_| "the ciphertext is not base64".to_owned())?;
    let plain = aead::LessSafeKey::new(key)
        .open_in_place(
            nonce,
            aead::Aad::from(associated_data.as_bytes()),
            &mut data,
        )
        .map_err(|_| "the resource does not open under the APIv3 key".to_owned())?;
    Ok(plain.to_vec())
}

/// Seals `plain` as WeChat Pay seals a notification's resource (for the tests' stand-in).
pub fn encrypt(api_v3_key: &str, nonce: &str, associated_data: &str, plain: &[u8]) -> String {
    let Ok(key) = aead::UnboundKey::new(&aead::AES_256_GCM, api_v3_key.as_bytes()) else {
        return String::new();
    };
    let Ok(n) = aead::Nonce::try_assume_unique_for_key(nonce.as_bytes()) else {
        return String::new();
    };
    let mut data = plain.to_vec();
    match aead::LessSafeKey::new(key).seal_in_place_append_tag(
        n,
        aead::Aad::from(associated_data.as_bytes()),
        &mut data,
    ) {
        Ok(()) => B64.encode(data),
        Err(_) => String::new(),
    }
}

/// Verifies a WeChat Pay notification (signature headers `by`, raw `body`) at `now`, opens
/// its resource and reads the payment.
pub fn verify(
    cfg: &WxpayConfig,
    by: &SignedBy<'_>,
    body: &[u8],
    now: i64,
) -> Result<Paid, Refused> {
    check_signed(cfg, by, body, now)?;
    let n: Notification = serde_json::from_slice(body)
        .map_err(|e| Refused::Malformed(format!("the notification is not JSON: {e}")))?;
    if n.event_type != "TRANSACTION.SUCCESS" {
        return Err(Refused::NotPaid(format!(
            "event {:?} is not a payment",
            n.event_type
        )));
    }
    let r = n
        .resource
        .ok_or_else(|| Refused::Malformed("no resource".into()))?;
    if r.algorithm != "AEAD_AES_256_GCM" {
        return Err(Refused::Malformed(format!(
            "resource algorithm {:?}",
            r.algorithm
        )));
    }
    // Signed by WeChat Pay but not sealed under our key: the configuration is wrong; refused
    // (WeChat Pay retries) so that nothing is lost once it is corrected.
    let plain = decrypt(&cfg.api_v3_key, &r.nonce, &r.associated_data, &r.ciphertext)
        .map_err(Refused::Forged)?;
    let t: Transaction = serde_json::from_slice(&plain)
        .map_err(|e| Refused::Malformed(format!("the transaction is not JSON: {e}")))?;
    if t.mchid != cfg.mch_id || t.appid != cfg.app_id {
        return Err(Refused::Forged(format!(
            "merchant {:?} / app {:?} is not this gateway's",
            t.mchid, t.appid
        )));
    }
    if t.trade_state != "SUCCESS" {
        return Err(Refused::NotPaid(format!(
            "trade_state is {:?}",
            t.trade_state
        )));
    }
    if t.out_trade_no.is_empty() {
        return Err(Refused::Malformed("no out_trade_no".into()));
    }
    let total = t
        .amount
        .total
        .ok_or_else(|| Refused::Malformed("no amount.total".into()))?;
    Ok(Paid {
        trade_no: t.out_trade_no,
        gateway_no: t.transaction_id,
        money: Decimal::new(total, 2),
        currency: Some(if t.amount.currency.is_empty() {
            "CNY".into()
        } else {
            t.amount.currency.to_ascii_uppercase()
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::super::rsa::tests::{GATEWAY_KEY, GATEWAY_PUB, MERCHANT_KEY, MERCHANT_PUB};
    use super::*;
    use std::str::FromStr;

    const V3_KEY: &str = "0123456789abcdef0123456789ABCDEF";

    fn cfg() -> WxpayConfig {
        WxpayConfig {
            mch_id: "1900000109".into(),
            app_id: "wxd678efh567hg6787".into(),
            serial_no: "5157F09EFDC096DE15EBE81A47057A7232F1B8E1".into(),
            private_key: MERCHANT_KEY.into(),
            api_v3_key: V3_KEY.into(),
            platform_key_id: "PUB_KEY_ID_0112345".into(),
            platform_public_key: GATEWAY_PUB.into(),
        }
    }

    #[test]
    fn requests_are_signed_with_the_merchant_key() {
        let body = native_body(
            &cfg(),
            &WxpayOrder {
                trade_no: "SB1",
                total: 7300,
                description: "Top-up 10 USD",
                notify_url: "https://sb.example/api/payment/notify/u",
                expires_at: 1_795_669_200,
            },
        );
        let j: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            j["amount"],
            serde_json::json!({"total": 7300, "currency": "CNY"})
        );
        assert_eq!(j["time_expire"], "2026-11-26T13:00:00+08:00");
        let auth = authorization(
            &cfg(),
            "POST",
            "/v3/pay/transactions/native",
            &body,
            1_795_669_200,
            "N0NCE",
        )
        .unwrap();
        assert!(
            auth.starts_with(
                "WECHATPAY2-SHA256-RSA2048 mchid=\"1900000109\",nonce_str=\"N0NCE\",signature=\""
            ),
            "{auth}"
        );
        assert!(
            auth.ends_with(
                ",timestamp=\"1795669200\",serial_no=\"5157F09EFDC096DE15EBE81A47057A7232F1B8E1\""
            ),
            "{auth}"
        );
        let sig = auth
            .split("signature=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let message = format!("POST\n/v3/pay/transactions/native\n1795669200\nN0NCE\n{body}\n");
        assert!(PublicKey::parse(MERCHANT_PUB)
            .unwrap()
            .verify(message.as_bytes(), sig));
    }

    /// A notification as WeChat Pay sends it: the resource sealed, the body signed.
    fn notification(
        key: &str,
        serial: &str,
        at: i64,
        transaction: &serde_json::Value,
    ) -> (Vec<u8>, [String; 4]) {
        let resource = encrypt(
            V3_KEY,
            "n0nce-12byte",
            "transaction",
            transaction.to_string().as_bytes(),
        );
        let body = serde_json::json!({
            "id": "EV-2018022511223320873", "create_time": "2026-11-26T13:01:00+08:00",
            "resource_type": "encrypt-resource", "event_type": "TRANSACTION.SUCCESS",
            "summary": "支付成功",
            "resource": {"original_type": "transaction", "algorithm": "AEAD_AES_256_GCM",
                          "ciphertext": resource, "associated_data": "transaction",
                          "nonce": "n0nce-12byte"}
        })
        .to_string()
        .into_bytes();
        let mut message = format!("{at}\nsig-nonce\n").into_bytes();
        message.extend_from_slice(&body);
        message.push(b'\n');
        let sig = PrivateKey::parse(key).unwrap().sign(&message);
        (
            body,
            [at.to_string(), "sig-nonce".into(), sig, serial.into()],
        )
    }

    fn by(h: &[String; 4]) -> SignedBy<'_> {
        SignedBy {
            timestamp: Some(&h[0]),
            nonce: Some(&h[1]),
            signature: Some(&h[2]),
            serial: Some(&h[3]),
        }
    }

    fn transaction(state: &str) -> serde_json::Value {
        serde_json::json!({
            "mchid": "1900000109", "appid": "wxd678efh567hg6787", "out_trade_no": "SB1",
            "transaction_id": "4200000001", "trade_type": "NATIVE", "trade_state": state,
            "amount": {"total": 7300, "payer_total": 7300, "currency": "CNY", "payer_currency": "CNY"}
        })
    }

    #[test]
    fn notifications_are_verified_and_opened() {
        let now = 1_795_669_200;
        let c = cfg();
        let (body, h) = notification(
            GATEWAY_KEY,
            "PUB_KEY_ID_0112345",
            now - 5,
            &transaction("SUCCESS"),
        );
        assert_eq!(
            verify(&c, &by(&h), &body, now).unwrap(),
            Paid {
                trade_no: "SB1".into(),
                gateway_no: "4200000001".into(),
                money: Decimal::from_str("73.00").unwrap(),
                currency: Some("CNY".into()),
            }
        );
        // A changed body, another signer, another key id, no headers, too old.
        let mut tampered = body.clone();
        let at = tampered.iter().position(|b| *b == b'S').unwrap();
        tampered[at] = b's';
        assert!(matches!(
            verify(&c, &by(&h), &tampered, now),
            Err(Refused::Forged(_))
        ));
        let (b2, h2) = notification(
            MERCHANT_KEY,
            "PUB_KEY_ID_0112345",
            now,
            &transaction("SUCCESS"),
        );
        assert!(matches!(
            verify(&c, &by(&h2), &b2, now),
            Err(Refused::Forged(_))
        ));
        let (b3, h3) = notification(
            GATEWAY_KEY,
            "PUB_KEY_ID_OTHER",
            now,
            &transaction("SUCCESS"),
        );
        assert!(matches!(
            verify(&c, &by(&h3), &b3, now),
            Err(Refused::Forged(_))
        ));
        assert!(matches!(
            verify(&c, &SignedBy::default(), &body, now),
            Err(Refused::Forged(_))
        ));
        let (b4, h4) = notification(
            GATEWAY_KEY,
            "PUB_KEY_ID_0112345",
            now - 301,
            &transaction("SUCCESS"),
        );
        assert!(
            matches!(verify(&c, &by(&h4), &b4, now), Err(Refused::Forged(m)) if m.contains("replay"))
        );
        // Sealed under another APIv3 key.
        let other = WxpayConfig {
            api_v3_key: "ffffffffffffffffffffffffffffffff".into(),
            ..cfg()
        };
        assert!(matches!(
            verify(&other, &by(&h), &body, now),
            Err(Refused::Forged(_))
        ));
        // Another merchant's transaction.
        let mut t = transaction("SUCCESS");
        t["mchid"] = "1900000999".into();
        let (b5, h5) = notification(GATEWAY_KEY, "PUB_KEY_ID_0112345", now, &t);
        assert!(matches!(
            verify(&c, &by(&h5), &b5, now),
            Err(Refused::Forged(_))
        ));
        // Not paid.
        let (b6, h6) = notification(
            GATEWAY_KEY,
            "PUB_KEY_ID_0112345",
            now,
            &transaction("NOTPAY"),
        );
        assert!(matches!(
            verify(&c, &by(&h6), &b6, now),
            Err(Refused::NotPaid(_))
        ));
    }

    #[test]
    fn decryption_follows_aes_256_gcm() {
        let sealed = encrypt(V3_KEY, "123456789012", "aad", b"{\"x\":1}");
        // Ciphertext and a 16-byte tag.
        assert_eq!(B64.decode(&sealed).unwrap().len(), 7 + 16);
        assert_eq!(
            decrypt(V3_KEY, "123456789012", "aad", &sealed).unwrap(),
            b"{\"x\":1}"
        );
        assert!(
            decrypt(V3_KEY, "123456789012", "other", &sealed).is_err(),
            "associated data is bound"
        );
        assert!(decrypt(V3_KEY, "123456789013", "aad", &sealed).is_err());
        assert!(decrypt("short", "123456789012", "aad", &sealed).is_err());
    }

    #[test]
    fn configurations_are_checked() {
        assert!(cfg().check().is_ok());
        for (what, c) in [
            (
                "mch_id",
                WxpayConfig {
                    mch_id: "m1".into(),
                    ..cfg()
                },
            ),
            (
                "app_id",
                WxpayConfig {
                    app_id: String::new(),
                    ..cfg()
                },
            ),
            (
                "serial_no",
                WxpayConfig {
                    serial_no: "not hex".into(),
                    ..cfg()
                },
            ),
            (
                "private_key",
                WxpayConfig {
                    private_key: "x".into(),
                    ..cfg()
                },
            ),
            (
                "api_v3_key",
                WxpayConfig {
                    api_v3_key: "short".into(),
                    ..cfg()
                },
            ),
            (
                "platform_key_id",
                WxpayConfig {
                    platform_key_id: String::new(),
                    ..cfg()
                },
            ),
            (
                "platform_public_key",
                WxpayConfig {
                    platform_public_key: MERCHANT_KEY.into(),
                    ..cfg()
                },
            ),
        ] {
            let e = c.check().unwrap_err();
            assert!(e.contains(what), "{what}: {e}");
        }
    }
}
