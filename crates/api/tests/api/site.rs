use crate::common::TestApp;
use serde_json::json;

#[actix_web::test]
async fn status_returns_every_site_info_field() {
    let app = TestApp::new().await;
    let r = app.client().get("/api/status").await;
    let d = r.ok();
    for key in [
        "UptimeEnabled",
        "UptimeDomain",
        "UptimePageName",
        "UserInvoiceMonth",
        "chat_link",
        "chat_links",
        "display_in_currency",
        "email_verification",
        "footer_html",
        "github_client_id",
        "github_oauth",
        "oidc_auth",
        "logo",
        "quota_per_unit",
        "server_address",
        "start_time",
        "system_name",
        "language",
        "top_up_link",
        "payment_min_amount",
        "turnstile_check",
        "turnstile_site_key",
        "version",
        "wechat_login",
        "wechat_qrcode",
        "lark_login",
        "lark_client_id",
        "telegram_bot",
    ] {
        assert!(d.get(key).is_some(), "status lacks {key}: {d}");
    }
    assert_eq!(d["version"], "v0.17");
    assert_eq!(d["quota_per_unit"], 500000);
    assert_eq!(
        d["payment_min_amount"], 1,
        "the minimum top-up the console checks against"
    );
    assert_eq!(d["system_name"], "Switchboard");
    assert_eq!(d["language"], "zh_CN");
    assert!(d["chat_links"].as_array().unwrap().len() >= 4);
    assert_eq!(d["chat_links"][0]["show"], true);
    assert!(d["start_time"].as_i64().unwrap() > 1_700_000_000);
}

#[actix_web::test]
async fn notice_about_and_home_page_follow_the_settings() {
    let app = TestApp::new().await;
    let c = app.client();
    assert_eq!(c.get("/api/notice").await.ok(), &json!(""));
    for (key, path) in [
        ("Notice", "/api/notice"),
        ("About", "/api/about"),
        ("HomePageContent", "/api/home_page_content"),
    ] {
        let text = format!("<b>{key} text</b>");
        app.root()
            .put("/api/option", json!({"key": key, "value": text}))
            .await
            .ok();
        assert_eq!(c.get(path).await.ok(), &json!(text));
    }
}

#[actix_web::test]
async fn model_owners_are_seeded_with_the_providers() {
    let app = TestApp::new().await;
    let r = app.client().get("/api/model_ownedby").await;
    let list = r.ok().as_array().unwrap().clone();
    assert!(list.iter().any(|o| o["id"] == 1 && o["name"] == "OpenAI"));
    assert!(list
        .iter()
        .any(|o| o["id"] == 14 && o["name"] == "Anthropic"));
}

#[actix_web::test]
async fn group_map_needs_a_user_and_shows_public_groups() {
    let app = TestApp::new().await;
    app.client()
        .get("/api/user_group_map")
        .await
        .err(401, "not_logged_in");
    let (u, _) = app.user("gina").await;
    let r = u.get("/api/user_group_map").await;
    let d = r.ok();
    assert_eq!(d["default"]["ratio"], 1.0);
    assert_eq!(d["default"]["api_rate"], 0);
}

#[actix_web::test]
async fn unknown_paths_answer_in_their_protocol() {
    let app = TestApp::new().await;
    let c = app.client();
    let m = c.get("/api/no/such/thing").await.err(404, "not_found");
    assert!(m.contains("/api/no/such/thing"));
    // A known path with the wrong method is also a JSON 404, not the console.
    c.delete("/api/status").await.err(404, "not_found");
    let r = c.post("/v1/nothing", json!({})).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["error"]["type"], "invalid_request_error");
    assert_eq!(r.body["error"]["code"], "not_found");
}

#[actix_web::test]
async fn per_ip_limit_answers_429_in_the_envelope() {
    let app = TestApp::with_config(|c| {
        c.api_limit = switchboard_api::limiter::Limit {
            requests: 3,
            window: std::time::Duration::from_secs(600),
        };
    })
    .await;
    let c = app.client();
    for _ in 0..3 {
        c.get("/api/status").await.ok();
    }
    c.get("/api/status").await.err(429, "rate_limited");
}

#[actix_web::test]
async fn head_of_the_root_answers_200_without_a_body() {
    let app = TestApp::new().await;
    let r = reqwest::Client::new()
        .head(app.url("/"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.bytes().await.unwrap().len(), 0);
    // Other methods on `/` still go on to the console (not built in tests: its 404).
    let r = reqwest::Client::new()
        .get(app.url("/"))
        .send()
        .await
        .unwrap();
    assert_ne!(r.status(), 405);
    // And HEAD elsewhere is not answered by it.
    let r = reqwest::Client::new()
        .head(app.url("/no-such-page"))
        .send()
        .await
        .unwrap();
    assert_ne!(r.status(), 200);
}
