use crate::common::TestApp;
use serde_json::json;

#[actix_web::test]
async fn only_root_reads_and_writes_settings() {
    let app = TestApp::new().await;
    let (admin, _) = app.admin("opal").await;
    let (user, _) = app.user("otto").await;
    admin.get("/api/option").await.err(403, "forbidden");
    user.get("/api/option").await.err(403, "forbidden");
    admin
        .put(
            "/api/option",
            json!({"key": "SystemName", "value": "Hacked"}),
        )
        .await
        .err(403, "forbidden");
    assert_eq!(
        app.client().get("/api/status").await.ok()["system_name"],
        "Switchboard"
    );
}

#[actix_web::test]
async fn settings_are_listed_with_secrets_hidden() {
    let app = TestApp::new().await;
    let root = app.root();
    root.put(
        "/api/option",
        json!({"key": "SMTPToken", "value": "super-secret"}),
    )
    .await
    .ok();
    let r = root.get("/api/option").await;
    let list = r.ok().as_array().unwrap().clone();
    let find = |k: &str| list.iter().find(|o| o["key"] == k).cloned().unwrap();
    assert_eq!(find("SystemName")["value"], "Switchboard");
    assert_eq!(find("RetryTimes")["value"], "0");
    assert_eq!(find("SMTPToken")["value"], "");
    assert_eq!(find("SMTPToken")["set"], true);
    assert!(!r.body.to_string().contains("super-secret"));
}

#[actix_web::test]
async fn updates_are_validated_and_applied_at_once() {
    let app = TestApp::new().await;
    let root = app.root();
    let r = root
        .put(
            "/api/option",
            json!({"key": "SystemName", "value": "  My Gateway  "}),
        )
        .await;
    assert_eq!(r.ok()["value"], "My Gateway");
    assert_eq!(
        app.client().get("/api/status").await.ok()["system_name"],
        "My Gateway"
    );
    root.put(
        "/api/option",
        json!({"key": "DisplayInCurrencyEnabled", "value": "false"}),
    )
    .await
    .ok();
    assert_eq!(
        app.client().get("/api/status").await.ok()["display_in_currency"],
        false
    );
    root.put(
        "/api/option",
        json!({"key": "ServerAddress", "value": "https://gw.example.com/"}),
    )
    .await
    .ok();
    assert_eq!(
        app.client().get("/api/status").await.ok()["server_address"],
        "https://gw.example.com"
    );

    root.put(
        "/api/option",
        json!({"key": "RegisterEnabled", "value": "maybe"}),
    )
    .await
    .err(400, "invalid");
    root.put("/api/option", json!({"key": "RetryTimes", "value": 99}))
        .await
        .err(400, "out_of_range");
    root.put(
        "/api/option",
        json!({"key": "QuotaPerUnit", "value": "1.5"}),
    )
    .await
    .err(400, "invalid");
    root.put(
        "/api/option",
        json!({"key": "RechargeDiscount", "value": "{broken"}),
    )
    .await
    .err(400, "invalid");
    root.put("/api/option", json!({"key": "ChatLinks", "value": "{}"}))
        .await
        .err(400, "invalid");
    root.put(
        "/api/option",
        json!({"key": "ServerAddress", "value": "gw.example.com"}),
    )
    .await
    .err(400, "invalid");
    root.put("/api/option", json!({"key": "NoSuchSetting", "value": "1"}))
        .await
        .err(400, "unknown_option");
    root.put("/api/option", json!({"key": "", "value": "1"}))
        .await
        .err(400, "required");
    root.put("/api/option", json!({"value": "1"}))
        .await
        .err(400, "invalid_field");
    root.put(
        "/api/option",
        json!({"key": "Notice", "value": {"nested": true}}),
    )
    .await
    .err(400, "invalid");
    // Nothing of the refused writes reached the database.
    let stored = switchboard_store::options::all(&mut app.conn()).unwrap();
    assert!(
        stored.iter().all(
            |(k, _)| ["SystemName", "DisplayInCurrencyEnabled", "ServerAddress"]
                .contains(&k.as_str())
        ),
        "{stored:?}"
    );
    // Stored values survive a reload from the database (another node, or a restart).
    app.state.settings.replace_all(Default::default());
    app.state.reload_settings().await.unwrap();
    assert_eq!(
        app.client().get("/api/status").await.ok()["system_name"],
        "My Gateway"
    );
}
