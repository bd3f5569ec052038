//! Online top-up through Alipay and WeChat Pay, end to end over HTTP against local fakes of both
//! (wiremock): each fake checks the request's RSA signature with the merchant's public key and
//! signs its answers and notifications with its own key, as the real gateway does; WeChat Pay's
//! fake seals the transaction with AES-256-GCM under the APIv3 key. The signing here is written
//! from the providers' documentation with ring directly, not with the code under test.

use crate::common::{Client, TestApp};
use crate::payments::order_status;
use base64::Engine as _;
use ring::signature::{
    RsaKeyPair, UnparsedPublicKey, RSA_PKCS1_2048_8192_SHA256, RSA_PKCS1_SHA256,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use switchboard_store::payments;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const MERCHANT_KEY: &str = include_str!("../fixtures/payment/merchant.key.pem");
const MERCHANT_PKCS1: &str = include_str!("../fixtures/payment/merchant.pkcs1.pem");
const MERCHANT_PUB: &str = include_str!("../fixtures/payment/merchant.pub.pem");
const GATEWAY_KEY: &str = include_str!("../fixtures/payment/gateway.key.pem");
const GATEWAY_PUB: &str = include_str!("../fixtures/payment/gateway.pub.pem");

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

fn pem_der(pem: &str) -> Vec<u8> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    B64.decode(body).unwrap()
}

/// RSA-SHA256 with a PKCS#8 key, base64.
fn rsa_sign(pkcs8_pem: &str, message: &[u8]) -> String {
    let key = RsaKeyPair::from_pkcs8(&pem_der(pkcs8_pem)).unwrap();
    let mut sig = vec![0; key.public().modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        message,
        &mut sig,
    )
    .unwrap();
    B64.encode(sig)
}

/// Checks an RSA-SHA256 signature with the merchant's public key (SubjectPublicKeyInfo: the
/// RSAPublicKey is the BIT STRING after the 24-byte header of a 2048-bit key).
fn merchant_signed(message: &[u8], sig_b64: &str) -> bool {
    let spki = pem_der(MERCHANT_PUB);
    let Ok(sig) = B64.decode(sig_b64) else {
        return false;
    };
    UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &spki[24..])
        .verify(message, &sig)
        .is_ok()
}

fn bare(pem: &str) -> String {
    pem.lines().filter(|l| !l.starts_with("-----")).collect()
}

async fn settings(app: &TestApp) {
    for (k, v) in [
        ("PaymentUSDRate", json!(7.3)),
        ("RechargeDiscount", json!("{\"10\": 0.9}")),
        ("PaymentMinAmount", json!(2)),
    ] {
        app.root()
            .put("/api/option", json!({"key": k, "value": v}))
            .await
            .ok();
    }
}

async fn quota_of(user: &Client) -> i64 {
    user.get("/api/user/self").await.ok()["quota"]
        .as_i64()
        .unwrap()
}

fn recharges(app: &TestApp, user_id: i64) -> usize {
    switchboard_store::logs::recent_for_user(&mut app.conn(), user_id, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.log_type == 1)
        .count()
}

// ---------------------------------------------------------------------------------------------
// Alipay
// ---------------------------------------------------------------------------------------------

const APP_ID: &str = "2021000000000001";

/// The text Alipay signs: non-empty parameters but `skip`, sorted, `k=v&k=v`.
fn alipay_content(p: &BTreeMap<String, String>, skip: &[&str]) -> String {
    p.iter()
        .filter(|(k, v)| !v.is_empty() && !skip.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// Alipay's gateway: `alipay.trade.precreate` checked against the merchant's key, answered with
/// a code to scan (or a refusal above 1000 yuan), signed with Alipay's key.
struct FakeAlipay;

impl Respond for FakeAlipay {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let p: BTreeMap<String, String> = url::form_urlencoded::parse(&req.body)
            .into_owned()
            .collect();
        let signed = p
            .get("sign")
            .is_some_and(|s| merchant_signed(alipay_content(&p, &["sign"]).as_bytes(), s));
        let biz: Value = serde_json::from_str(p.get("biz_content").map_or("{}", |s| s)).unwrap();
        let member = if !signed || p.get("app_id").map(String::as_str) != Some(APP_ID) {
            json!({"code": "40002", "msg": "Invalid Arguments", "sub_code": "isv.invalid-signature",
                   "sub_msg": "验签出错"})
        } else if p.get("method").map(String::as_str) != Some("alipay.trade.precreate") {
            json!({"code": "40002", "msg": "Invalid Arguments", "sub_code": "isv.invalid-method"})
        } else if biz["total_amount"]
            .as_str()
            .unwrap()
            .parse::<f64>()
            .unwrap()
            > 1000.0
        {
            json!({"code": "40004", "msg": "Business Failed", "sub_code": "ACQ.TOTAL_FEE_EXCEED",
                   "sub_msg": "订单金额超过限额"})
        } else {
            json!({"code": "10000", "msg": "Success", "out_trade_no": biz["out_trade_no"],
                   "qr_code": format!("https://qr.alipay.com/{}", biz["out_trade_no"].as_str().unwrap())})
        };
        // Alipay escapes slashes; the signature covers the text exactly as sent.
        let text = member.to_string().replace('/', "\\/");
        let sig = rsa_sign(GATEWAY_KEY, text.as_bytes());
        ResponseTemplate::new(200).set_body_raw(
            format!(r#"{{"alipay_trade_precreate_response":{text},"sign":"{sig}"}}"#),
            "application/json;charset=utf-8",
        )
    }
}

fn alipay_gateway(name: &str, mode: &str, private_key: &str) -> Value {
    json!({
        "name": name, "type": "alipay", "icon": "alipay", "enable": true,
        "fixed_fee": 0, "percent_fee": 0.05, "currency": "CNY", "sort": 1,
        "config": {"app_id": APP_ID, "mode": mode, "private_key": private_key,
                   "alipay_public_key": bare(GATEWAY_PUB)}
    })
}

/// Alipay's notification that `trade_no` was paid `amount` yuan, signed with `key`.
fn alipay_notification(key: &str, trade_no: &str, amount: &str) -> BTreeMap<String, String> {
    let mut p: BTreeMap<String, String> = [
        ("notify_time", "2026-11-26 13:01:00"),
        ("notify_type", "trade_status_sync"),
        ("notify_id", "ac05099524730693a8b330c5ecf72da9786"),
        ("app_id", APP_ID),
        ("charset", "utf-8"),
        ("version", "1.0"),
        ("trade_no", "2026112622001456"),
        ("out_trade_no", trade_no),
        ("trade_status", "TRADE_SUCCESS"),
        ("total_amount", amount),
        ("receipt_amount", amount),
        ("subject", "Top-up 10 USD"),
        ("gmt_payment", "2026-11-26 13:00:58"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let sig = rsa_sign(key, alipay_content(&p, &[]).as_bytes());
    p.insert("sign".into(), sig);
    p.insert("sign_type".into(), "RSA2".into());
    p
}

/// Alipay POSTs the form; the answer's status and body.
async fn post_form(app: &TestApp, uuid: &str, p: &BTreeMap<String, String>) -> (u16, String) {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(p.iter())
        .finish();
    let r = reqwest::Client::new()
        .post(app.url(&format!("/api/payment/notify/{uuid}")))
        .header(
            "Content-Type",
            "application/x-www-form-urlencoded;charset=utf-8",
        )
        .body(body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[actix_web::test]
async fn alipay_qr_orders_are_signed_paid_and_credited_once() {
    let alipay = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/gateway.do"))
        .respond_with(FakeAlipay)
        .mount(&alipay)
        .await;
    let gateway_url = format!("{}/gateway.do", alipay.uri());
    let app = TestApp::with_config(|c| c.alipay_gateway_url = gateway_url.clone()).await;
    settings(&app).await;
    let root = app.root();

    // Configuration: checked, the private key sealed and never returned.
    let mut usd = alipay_gateway("x", "qrcode", MERCHANT_KEY);
    usd["currency"] = json!("USD");
    let m = root
        .post("/api/payment", usd)
        .await
        .err(400, "payment_config_invalid");
    assert!(m.contains("CNY"), "{m}");
    let mut bad = alipay_gateway("x", "qrcode", "-----BEGIN PRIVATE KEY-----\nAAAA\n");
    root.post("/api/payment", bad.clone())
        .await
        .err(400, "payment_config_invalid");
    bad["config"]["private_key"] = json!(MERCHANT_PKCS1);
    bad["config"]["alipay_public_key"] = json!("MIIBIjAN");
    root.post("/api/payment", bad)
        .await
        .err(400, "payment_config_invalid");
    // A PKCS#1 key, as Alipay's tools write it for non-Java servers.
    let gw = root
        .post(
            "/api/payment",
            alipay_gateway("支付宝", "qrcode", MERCHANT_PKCS1),
        )
        .await;
    let gw = gw.ok().clone();
    assert_eq!(gw["secrets_set"], json!({"private_key": true}));
    assert_eq!(
        gw["config"],
        json!({"app_id": APP_ID, "mode": "qrcode", "alipay_public_key": bare(GATEWAY_PUB)})
    );
    let stored = payments::find_gateway(&mut app.conn(), gw["id"].as_i64().unwrap()).unwrap();
    assert!(
        !stored.config.contains(&bare(MERCHANT_PKCS1)[..40]),
        "sealed at rest"
    );
    let uuid = gw["uuid"].as_str().unwrap().to_owned();

    // The order: Alipay's fake checked our signature and answered a code to scan.
    let (user, uid) = app.user("alipayer").await;
    let before = quota_of(&user).await;
    let r = user
        .post("/api/user/order", json!({"uuid": uuid, "amount": 10}))
        .await;
    let d = r.ok().clone();
    let trade_no = d["trade_no"].as_str().unwrap().to_owned();
    assert_eq!(d["order_amount"], "68.99");
    assert_eq!(
        d["pay"],
        json!({"type": "qrcode", "content": format!("https://qr.alipay.com/{trade_no}")})
    );
    let sent = alipay.received_requests().await.unwrap();
    let form: BTreeMap<String, String> = url::form_urlencoded::parse(&sent[0].body)
        .into_owned()
        .collect();
    let biz: Value = serde_json::from_str(&form["biz_content"]).unwrap();
    assert_eq!(biz["total_amount"], "68.99");
    assert_eq!(form["sign_type"], "RSA2");
    assert_eq!(
        form["notify_url"],
        app.url(&format!("/api/payment/notify/{uuid}"))
    );

    // Forged, tampered and short notifications change nothing.
    let forged = alipay_notification(MERCHANT_KEY, &trade_no, "68.99");
    assert_eq!(post_form(&app, &uuid, &forged).await, (400, "fail".into()));
    let mut tampered = alipay_notification(GATEWAY_KEY, &trade_no, "68.99");
    tampered.insert("total_amount".into(), "6899.00".into());
    assert_eq!(
        post_form(&app, &uuid, &tampered).await,
        (400, "fail".into())
    );
    let short = alipay_notification(GATEWAY_KEY, &trade_no, "6.89");
    assert_eq!(post_form(&app, &uuid, &short).await, (400, "fail".into()));
    assert_eq!(quota_of(&user).await, before);

    // Paid: credited once, however often Alipay sends it.
    let paid = alipay_notification(GATEWAY_KEY, &trade_no, "68.99");
    assert_eq!(post_form(&app, &uuid, &paid).await, (200, "success".into()));
    assert_eq!(quota_of(&user).await, before + 5_000_000);
    assert_eq!(post_form(&app, &uuid, &paid).await, (200, "success".into()));
    assert_eq!(quota_of(&user).await, before + 5_000_000);
    assert_eq!(recharges(&app, uid), 1);
    let o = payments::find_order(&mut app.conn(), &trade_no).unwrap();
    assert_eq!((o.status, o.gateway_no.as_str()), (2, "2026112622001456"));
    assert_eq!(order_status(&user, &trade_no).await, "paid");

    // Twenty concurrent copies of another order's notification credit once.
    let r = user
        .post("/api/user/order", json!({"uuid": uuid, "amount": 2}))
        .await;
    let d2 = r.ok().clone();
    let n2 = alipay_notification(
        GATEWAY_KEY,
        d2["trade_no"].as_str().unwrap(),
        d2["order_amount"].as_str().unwrap(),
    );
    let answers =
        futures_util::future::join_all((0..20).map(|_| post_form(&app, &uuid, &n2))).await;
    assert!(answers.iter().all(|a| a == &(200, "success".to_owned())));
    assert_eq!(quota_of(&user).await, before + 6_000_000);
    assert_eq!(recharges(&app, uid), 2);

    // Alipay refuses an order over its limit: the user sees why, the order is marked failed.
    let m = user
        .post("/api/user/order", json!({"uuid": uuid, "amount": 200}))
        .await
        .err(502, "payment_gateway_error");
    assert!(m.contains("订单金额超过限额"), "{m}");
    let failed = root.get("/api/payment/order?status=failed").await;
    assert_eq!(failed.ok()["total_count"], 1);

    // Page pay, the stored key kept by a blank one: the browser is sent to Alipay's cashier
    // with a request signed by the merchant key.
    let mut page = alipay_gateway("支付宝网页", "page", "");
    page["id"] = gw["id"].clone();
    let updated = root.put("/api/payment", page).await;
    assert_eq!(updated.ok()["config"]["mode"], "page");
    let r = user
        .post("/api/user/order", json!({"uuid": uuid, "amount": 3}))
        .await;
    let d3 = r.ok().clone();
    assert_eq!(d3["pay"]["type"], "redirect");
    let url = d3["pay"]["url"].as_str().unwrap();
    assert!(url.starts_with(&gateway_url), "{url}");
    let q: BTreeMap<String, String> = url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    assert_eq!(q["method"], "alipay.trade.page.pay");
    assert!(merchant_signed(
        alipay_content(&q, &["sign"]).as_bytes(),
        &q["sign"]
    ));
    assert_eq!(
        q["return_url"],
        app.url(&format!(
            "/panel/topup?trade_no={}",
            d3["trade_no"].as_str().unwrap()
        ))
    );
}

// ---------------------------------------------------------------------------------------------
// WeChat Pay
// ---------------------------------------------------------------------------------------------

const MCH_ID: &str = "1900000109";
const WX_APP_ID: &str = "wxd678efh567hg6787";
const SERIAL: &str = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
const V3_KEY: &str = "0123456789abcdef0123456789ABCDEF";
const KEY_ID: &str = "PUB_KEY_ID_0114232019";
/// WeChat Pay calls https addresses only.
const WX_NOTIFY: &str = "https://pay.example.com";

/// The four `Wechatpay-*` headers of `body`, signed with `key` at `ts`.
fn wx_headers(key: &str, ts: i64, body: &[u8]) -> [(String, String); 4] {
    let nonce = "593BEC0C930BF1AFEB40B4A08C8FB242";
    let mut message = format!("{ts}\n{nonce}\n").into_bytes();
    message.extend_from_slice(body);
    message.push(b'\n');
    [
        ("Wechatpay-Timestamp".into(), ts.to_string()),
        ("Wechatpay-Nonce".into(), nonce.into()),
        ("Wechatpay-Signature".into(), rsa_sign(key, &message)),
        ("Wechatpay-Serial".into(), KEY_ID.into()),
    ]
}

/// WeChat Pay's Native order endpoint: the `Authorization` signature checked against the
/// merchant's key, a code URL answered and signed with WeChat Pay's key.
struct FakeWxpay;

impl Respond for FakeWxpay {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let auth = req
            .headers
            .get("Authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let field = |name: &str| {
            auth.split(&format!("{name}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or_default()
                .to_owned()
        };
        let message = format!(
            "POST\n{}\n{}\n{}\n{}\n",
            req.url.path(),
            field("timestamp"),
            field("nonce_str"),
            String::from_utf8_lossy(&req.body)
        );
        let order: Value = serde_json::from_slice(&req.body).unwrap_or_default();
        if !auth.starts_with("WECHATPAY2-SHA256-RSA2048 ")
            || field("mchid") != MCH_ID
            || field("serial_no") != SERIAL
            || !merchant_signed(message.as_bytes(), &field("signature"))
        {
            return ResponseTemplate::new(401)
                .set_body_json(json!({"code": "SIGN_ERROR", "message": "签名错误"}));
        }
        if order["mchid"] != MCH_ID || order["appid"] != WX_APP_ID {
            return ResponseTemplate::new(400)
                .set_body_json(json!({"code": "PARAM_ERROR", "message": "appid和mch_id不匹配"}));
        }
        let body = json!({"code_url": format!("weixin://wxpay/bizpayurl?pr={}", order["out_trade_no"].as_str().unwrap())})
            .to_string();
        let mut r = ResponseTemplate::new(200).set_body_raw(body.clone(), "application/json");
        for (k, v) in wx_headers(GATEWAY_KEY, switchboard_store::now(), body.as_bytes()) {
            r = r.insert_header(k.as_str(), v.as_str());
        }
        r
    }
}

fn wxpay_gateway(name: &str, platform_key_id: &str) -> Value {
    json!({
        "name": name, "type": "wxpay", "icon": "wxpay", "enable": true,
        "fixed_fee": 0, "percent_fee": 0, "currency": "CNY", "sort": 2,
        "notify_domain": WX_NOTIFY,
        "config": {"mch_id": MCH_ID, "app_id": WX_APP_ID, "serial_no": SERIAL,
                   "private_key": MERCHANT_KEY, "api_v3_key": V3_KEY,
                   "platform_key_id": platform_key_id, "platform_public_key": GATEWAY_PUB}
    })
}

/// WeChat Pay's notification that `trade_no` was paid `total` fen: the transaction sealed with
/// AES-256-GCM under `v3_key`, the body signed with `key`.
fn wx_notification(
    key: &str,
    v3_key: &str,
    trade_no: &str,
    total: i64,
) -> (Vec<u8>, [(String, String); 4]) {
    let transaction = json!({
        "mchid": MCH_ID, "appid": WX_APP_ID, "out_trade_no": trade_no,
        "transaction_id": "4200000000202611260001", "trade_type": "NATIVE",
        "trade_state": "SUCCESS", "trade_state_desc": "支付成功", "bank_type": "OTHERS",
        "success_time": "2026-11-26T13:00:58+08:00", "payer": {"openid": "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"},
        "amount": {"total": total, "payer_total": total, "currency": "CNY", "payer_currency": "CNY"}
    });
    let nonce = "fdasflkja484";
    let sealing = ring::aead::LessSafeKey::new(
        ring::aead::UnboundKey::new(&ring::aead::AES_256_GCM, v3_key.as_bytes()).unwrap(),
    );
    let mut data = transaction.to_string().into_bytes();
    sealing
        .seal_in_place_append_tag(
            ring::aead::Nonce::try_assume_unique_for_key(nonce.as_bytes()).unwrap(),
            ring::aead::Aad::from(b"transaction"),
            &mut data,
        )
        .unwrap();
    let body = json!({
        "id": "EV-2018022511223320873", "create_time": "2026-11-26T13:01:00+08:00",
        "resource_type": "encrypt-resource", "event_type": "TRANSACTION.SUCCESS",
        "summary": "支付成功",
        "resource": {"original_type": "transaction", "algorithm": "AEAD_AES_256_GCM",
                      "ciphertext": B64.encode(data), "associated_data": "transaction",
                      "nonce": nonce}
    })
    .to_string()
    .into_bytes();
    let headers = wx_headers(key, switchboard_store::now(), &body);
    (body, headers)
}

async fn post_wx(
    app: &TestApp,
    uuid: &str,
    (body, headers): &(Vec<u8>, [(String, String); 4]),
) -> (u16, String) {
    let mut r = reqwest::Client::new()
        .post(app.url(&format!("/api/payment/notify/{uuid}")))
        .header("Content-Type", "application/json")
        .body(body.clone());
    for (k, v) in headers {
        r = r.header(k, v);
    }
    let r = r.send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[actix_web::test]
async fn wechat_pay_native_orders_are_signed_paid_and_credited_once() {
    let wx = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v3/pay/transactions/native"))
        .respond_with(FakeWxpay)
        .mount(&wx)
        .await;
    let api = wx.uri();
    let app = TestApp::with_config(|c| c.wxpay_api_url = api).await;
    settings(&app).await;
    let root = app.root();

    let mut short_key = wxpay_gateway("x", KEY_ID);
    short_key["config"]["api_v3_key"] = json!("too-short");
    let m = root
        .post("/api/payment", short_key)
        .await
        .err(400, "payment_config_invalid");
    assert!(m.contains("api_v3_key"), "{m}");
    let gw = root
        .post("/api/payment", wxpay_gateway("微信支付", KEY_ID))
        .await;
    let gw = gw.ok().clone();
    assert_eq!(
        gw["secrets_set"],
        json!({"private_key": true, "api_v3_key": true})
    );
    assert!(!gw.to_string().contains(V3_KEY));
    let uuid = gw["uuid"].as_str().unwrap().to_owned();

    // 10 USD × 0.9 × 7.3 = 65.70 yuan: 6570 fen, a code to scan.
    let (user, uid) = app.user("wxpayer").await;
    let before = quota_of(&user).await;
    let r = user
        .post("/api/user/order", json!({"uuid": uuid, "amount": 10}))
        .await;
    let d = r.ok().clone();
    let trade_no = d["trade_no"].as_str().unwrap().to_owned();
    assert_eq!(d["order_amount"], "65.70");
    assert_eq!(
        d["pay"],
        json!({"type": "qrcode", "content": format!("weixin://wxpay/bizpayurl?pr={trade_no}")})
    );
    let sent: Value =
        serde_json::from_slice(&wx.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(sent["amount"], json!({"total": 6570, "currency": "CNY"}));
    assert_eq!(
        sent["notify_url"],
        format!("{WX_NOTIFY}/api/payment/notify/{uuid}")
    );

    // Signed by someone else, sealed under another key, or for less: refused in WeChat Pay's
    // format, nothing credited.
    let forged = wx_notification(MERCHANT_KEY, V3_KEY, &trade_no, 6570);
    let (status, body) = post_wx(&app, &uuid, &forged).await;
    assert_eq!(status, 400);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["code"],
        "FAIL"
    );
    let other_key = wx_notification(
        GATEWAY_KEY,
        "ffffffffffffffffffffffffffffffff",
        &trade_no,
        6570,
    );
    assert_eq!(post_wx(&app, &uuid, &other_key).await.0, 400);
    let short = wx_notification(GATEWAY_KEY, V3_KEY, &trade_no, 657);
    assert_eq!(post_wx(&app, &uuid, &short).await.0, 400);
    let mut tampered = wx_notification(GATEWAY_KEY, V3_KEY, &trade_no, 6570);
    tampered.0 = String::from_utf8(tampered.0)
        .unwrap()
        .replace("EV-", "EX-")
        .into_bytes();
    assert_eq!(post_wx(&app, &uuid, &tampered).await.0, 400);
    assert_eq!(quota_of(&user).await, before);

    // Paid: 200 with no body, credited once; twenty concurrent deliveries change nothing more.
    let paid = wx_notification(GATEWAY_KEY, V3_KEY, &trade_no, 6570);
    assert_eq!(post_wx(&app, &uuid, &paid).await, (200, String::new()));
    assert_eq!(quota_of(&user).await, before + 5_000_000);
    let answers =
        futures_util::future::join_all((0..20).map(|_| post_wx(&app, &uuid, &paid))).await;
    assert!(answers.iter().all(|a| a.0 == 200), "{answers:?}");
    assert_eq!(quota_of(&user).await, before + 5_000_000);
    assert_eq!(recharges(&app, uid), 1);
    let o = payments::find_order(&mut app.conn(), &trade_no).unwrap();
    assert_eq!(
        (o.status, o.gateway_no.as_str()),
        (2, "4200000000202611260001")
    );

    // An answer signed by a WeChat Pay key other than the configured one is not trusted: no
    // code is shown and the order is marked failed.
    let distrusted = root
        .post(
            "/api/payment",
            wxpay_gateway("微信支付（旧）", "PUB_KEY_ID_OLD"),
        )
        .await;
    let distrusted = distrusted.ok()["uuid"].as_str().unwrap().to_owned();
    let m = user
        .post("/api/user/order", json!({"uuid": distrusted, "amount": 2}))
        .await
        .err(502, "payment_gateway_error");
    assert!(m.contains("not the configured WeChat Pay key"), "{m}");
}

/// WeChat Pay refuses orders whose notify URL is http: a WeChat Pay gateway is saved only with
/// an https notify address (its notify domain, else `ServerAddress`), and should `ServerAddress`
/// turn http later, its orders are refused before WeChat Pay is asked.
#[actix_web::test]
async fn wechat_pay_gateways_refuse_an_http_notify_address() {
    let wx = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v3/pay/transactions/native"))
        .respond_with(FakeWxpay)
        .mount(&wx)
        .await;
    let api = wx.uri();
    let app = TestApp::with_config(|c| c.wxpay_api_url = api).await;
    settings(&app).await;
    let root = app.root();
    let server_address = |v: &str| {
        let root = &root;
        let v = v.to_owned();
        async move {
            root.put("/api/option", json!({"key": "ServerAddress", "value": v}))
                .await
                .ok();
        }
    };

    let mut http = wxpay_gateway("微信支付", KEY_ID);
    http["notify_domain"] = json!("http://pay.example.com");
    let m = root
        .post("/api/payment", http.clone())
        .await
        .err(400, "payment_field_invalid");
    assert!(m.contains("https"), "{m}");
    // No notify domain: the site's address is used, and must be https too.
    let mut blank = wxpay_gateway("微信支付", KEY_ID);
    blank["notify_domain"] = json!("");
    root.post("/api/payment", blank.clone())
        .await
        .err(400, "payment_field_invalid");
    server_address("http://sb.example.com").await;
    root.post("/api/payment", blank.clone())
        .await
        .err(400, "payment_field_invalid");
    assert_eq!(root.get("/api/payment").await.ok()["total_count"], 0);
    server_address("https://sb.example.com").await;
    let gw = root.post("/api/payment", blank).await.ok().clone();
    let uuid = gw["uuid"].as_str().unwrap().to_owned();
    // Nor may an update make it http.
    http["id"] = gw["id"].clone();
    root.put("/api/payment", http)
        .await
        .err(400, "payment_field_invalid");

    // ServerAddress turned http after the gateway was saved: the order is refused here.
    server_address("http://sb.example.com").await;
    let (user, _) = app.user("wx-http").await;
    let m = user
        .post("/api/user/order", json!({"uuid": uuid, "amount": 2}))
        .await
        .err(503, "payment_config_invalid");
    assert!(m.contains("https"), "{m}");
    assert!(
        wx.received_requests().await.unwrap().is_empty(),
        "WeChat Pay was not asked"
    );
    // Back to https: the order reaches WeChat Pay with an https notify URL.
    server_address("https://sb.example.com").await;
    user.post("/api/user/order", json!({"uuid": uuid, "amount": 2}))
        .await
        .ok();
    let sent: Value =
        serde_json::from_slice(&wx.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(
        sent["notify_url"],
        format!("https://sb.example.com/api/payment/notify/{uuid}")
    );
}

/// Alipay and WeChat Pay notifications are checked against the public key configured: an
/// administrator other than root who could set it (or the merchant) while keeping root's stored
/// private key could sign payments herself, or send users' payments to her merchant. Refused
/// unless she enters the secrets again.
#[actix_web::test]
async fn administrators_cannot_change_whom_a_stored_key_pays_or_trusts() {
    let app = TestApp::new().await;
    settings(&app).await;
    let root = app.root();
    let (admin, _) = app.admin("eve").await;
    let ali = root
        .post(
            "/api/payment",
            alipay_gateway("支付宝", "qrcode", MERCHANT_KEY),
        )
        .await
        .ok()
        .clone();
    let wx = root
        .post("/api/payment", wxpay_gateway("微信支付", KEY_ID))
        .await
        .ok()
        .clone();
    let kept = |mut body: Value, id: &Value, change: Value| {
        body["id"] = id.clone();
        for k in ["private_key", "api_v3_key"] {
            if body["config"].get(k).is_some() {
                body["config"][k] = json!("");
            }
        }
        for (k, v) in change.as_object().unwrap() {
            body["config"][k] = v.clone();
        }
        body
    };
    let ali_body = alipay_gateway("支付宝", "qrcode", MERCHANT_KEY);
    let wx_body = wxpay_gateway("微信支付", KEY_ID);
    for (body, id, change) in [
        (
            &ali_body,
            &ali["id"],
            json!({"alipay_public_key": MERCHANT_PUB}),
        ),
        (&ali_body, &ali["id"], json!({"app_id": "2021000000000666"})),
        (
            &wx_body,
            &wx["id"],
            json!({"platform_public_key": MERCHANT_PUB}),
        ),
        (&wx_body, &wx["id"], json!({"mch_id": "1900000666"})),
    ] {
        admin
            .put("/api/payment", kept(body.clone(), id, change.clone()))
            .await
            .err(403, "destination_needs_root");
    }
    // Other fields with the secrets kept: allowed; the secrets entered again: allowed.
    admin
        .put(
            "/api/payment",
            kept(ali_body.clone(), &ali["id"], json!({"mode": "page"})),
        )
        .await
        .ok();
    let mut fresh = wx_body.clone();
    fresh["id"] = wx["id"].clone();
    fresh["config"]["mch_id"] = json!("1900000666");
    admin.put("/api/payment", fresh).await.ok();
    // Root may keep the key and change the rest.
    root.put(
        "/api/payment",
        kept(ali_body, &ali["id"], json!({"app_id": "2021000000000777"})),
    )
    .await
    .ok();
}

/// Alipay and WeChat Pay close a payment with the order, but one made at the last second may be
/// reported after the order expired here: credited once all the same, the order paid late.
#[actix_web::test]
async fn late_alipay_and_wechat_pay_payments_are_credited_once() {
    let wx = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v3/pay/transactions/native"))
        .respond_with(FakeWxpay)
        .mount(&wx)
        .await;
    let api = wx.uri();
    let app = TestApp::with_config(|c| c.wxpay_api_url = api).await;
    settings(&app).await;
    let root = app.root();
    let ali = root
        .post(
            "/api/payment",
            alipay_gateway("支付宝", "page", MERCHANT_KEY),
        )
        .await
        .ok()["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let wxg = root
        .post("/api/payment", wxpay_gateway("微信支付", KEY_ID))
        .await
        .ok()["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let (user, uid) = app.user("late-payer").await;
    let before = quota_of(&user).await;
    let place = |uuid: &str| {
        let (user, uuid) = (&user, uuid.to_owned());
        async move {
            let d = user
                .post("/api/user/order", json!({"uuid": uuid, "amount": 2}))
                .await
                .ok()
                .clone();
            (
                d["trade_no"].as_str().unwrap().to_owned(),
                d["order_amount"].as_str().unwrap().to_owned(),
            )
        }
    };
    let (ali_trade, ali_amount) = place(&ali).await;
    let (wx_trade, wx_amount) = place(&wxg).await;
    assert_eq!(
        payments::expire_pending(&mut app.conn(), i64::MAX).unwrap(),
        2
    );
    assert_eq!(order_status(&user, &ali_trade).await, "expired");

    // Alipay reports the payment after the order expired: credited, once.
    let paid = alipay_notification(GATEWAY_KEY, &ali_trade, &ali_amount);
    assert_eq!(post_form(&app, &ali, &paid).await, (200, "success".into()));
    assert_eq!(post_form(&app, &ali, &paid).await, (200, "success".into()));
    assert_eq!(
        quota_of(&user).await,
        before + 1_000_000,
        "a late Alipay payment is credited once"
    );
    assert_eq!(order_status(&user, &ali_trade).await, "paid_late");

    // So does WeChat Pay's, however often it is delivered.
    let fen: i64 = wx_amount.replace('.', "").parse().unwrap();
    let n = wx_notification(GATEWAY_KEY, V3_KEY, &wx_trade, fen);
    let answers = futures_util::future::join_all((0..10).map(|_| post_wx(&app, &wxg, &n))).await;
    assert!(answers.iter().all(|a| a.0 == 200), "{answers:?}");
    assert_eq!(
        quota_of(&user).await,
        before + 2_000_000,
        "a late WeChat Pay payment is credited once"
    );
    assert_eq!(order_status(&user, &wx_trade).await, "paid_late");
    assert_eq!(recharges(&app, uid), 2);
    let r = root.get("/api/payment/order?status=paid_late").await;
    assert_eq!(r.ok()["total_count"], 2);
}
