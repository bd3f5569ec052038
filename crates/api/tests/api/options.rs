use crate::common::TestApp;
use serde_json::json;

#[actix_web::test]
async fn administrators_manage_settings_but_not_the_root_only_ones() {
    let app = TestApp::new().await;
    let root = app.root();
    let (admin, _) = app.admin("opal").await;
    let (user, _) = app.user("otto").await;
    user.get("/api/option").await.err(403, "forbidden");
    user.put("/api/option", json!({"key": "Notice", "value": "x"}))
        .await
        .err(403, "forbidden");
    user.put(
        "/api/option/batch",
        json!({"options": [{"key": "Notice", "value": "x"}]}),
    )
    .await
    .err(403, "forbidden");
    root.put(
        "/api/option",
        json!({"key": "SMTPToken", "value": "smtp-secret"}),
    )
    .await
    .ok();

    // The administrator lists what they manage: no secret, no root-only key.
    let r = admin.get("/api/option").await;
    let list = r.ok().as_array().unwrap().clone();
    let keys: Vec<&str> = list.iter().map(|o| o["key"].as_str().unwrap()).collect();
    for k in [
        "SystemName",
        "Notice",
        "RetryTimes",
        "QuotaForNewUser",
        "ChatLinks",
    ] {
        assert!(keys.contains(&k), "{k} missing for an administrator");
    }
    for k in [
        "SMTPToken",
        "SMTPServer",
        "GitHubClientSecret",
        "ServerAddress",
        "QuotaPerUnit",
        "AllowPrivateOutbound",
        "PriceSyncUrl",
        "RegisterEnabled",
    ] {
        assert!(!keys.contains(&k), "{k} listed to an administrator");
    }
    assert!(list.iter().all(|o| o["root_only"] == false));
    assert!(!r.body.to_string().contains("smtp-secret"));
    // Root sees them all, marked.
    let all = root
        .get("/api/option")
        .await
        .ok()
        .as_array()
        .unwrap()
        .clone();
    let flag = |k: &str| all.iter().find(|o| o["key"] == k).unwrap()["root_only"].clone();
    assert_eq!(flag("SMTPToken"), true);
    assert_eq!(flag("AllowPrivateOutbound"), true);
    assert_eq!(flag("Notice"), false);

    // The administrator changes an ordinary setting, one or in a batch...
    admin
        .put(
            "/api/option",
            json!({"key": "SystemName", "value": "Ops Gateway"}),
        )
        .await
        .ok();
    assert_eq!(
        app.client().get("/api/status").await.ok()["system_name"],
        "Ops Gateway"
    );
    // ...but not a root-only one, alone or hidden in a batch: nothing of that batch is written.
    for (key, value) in [
        ("AllowPrivateOutbound", json!(true)),
        ("SMTPToken", json!("stolen")),
        ("QuotaPerUnit", json!(1)),
        ("ServerAddress", json!("https://evil.example")),
    ] {
        admin
            .put("/api/option", json!({"key": key, "value": value}))
            .await
            .err(403, "root_only_setting");
        admin
            .put(
                "/api/option/batch",
                json!({"options": [{"key": "Notice", "value": "batched"}, {"key": key, "value": value}]}),
            )
            .await
            .err(403, "root_only_setting");
    }
    assert_eq!(
        app.client().get("/api/status").await.ok()["quota_per_unit"],
        500_000
    );
    let stored = switchboard_store::options::all(&mut app.conn()).unwrap();
    assert!(
        !stored
            .iter()
            .any(|(k, _)| k == "Notice" || k == "AllowPrivateOutbound" || k == "QuotaPerUnit"),
        "{stored:?}"
    );
}

#[actix_web::test]
async fn a_batch_is_written_whole_or_not_at_all() {
    let app = TestApp::new().await;
    let root = app.root();
    let r = root
        .put(
            "/api/option/batch",
            json!({"options": [
                {"key": "SystemName", "value": " Batch GW "},
                {"key": "RetryTimes", "value": 3},
                {"key": "DisplayInCurrencyEnabled", "value": false},
                {"key": "SMTPToken", "value": "batch-secret"},
            ]}),
        )
        .await;
    let out = r.ok().as_array().unwrap().clone();
    assert_eq!(out.len(), 4);
    assert_eq!(out[0], json!({"key": "SystemName", "value": "Batch GW"}));
    assert_eq!(out[3]["value"], "");
    assert!(!r.body.to_string().contains("batch-secret"));
    let status = app.client().get("/api/status").await.ok().clone();
    assert_eq!(status["system_name"], "Batch GW");
    assert_eq!(status["display_in_currency"], false);
    // The secret is stored sealed, and open in the running settings.
    let stored = switchboard_store::options::all(&mut app.conn()).unwrap();
    let smtp = &stored.iter().find(|(k, _)| k == "SMTPToken").unwrap().1;
    assert!(!smtp.contains("batch-secret"), "{smtp}");
    assert_eq!(
        app.state
            .settings
            .snapshot()
            .get("SMTPToken")
            .map(String::as_str),
        Some("batch-secret")
    );

    // One bad value refuses the batch, naming it; the good changes before it are not written.
    let before = switchboard_store::options::all(&mut app.conn()).unwrap();
    for (bad, code) in [
        (json!({"key": "RetryTimes", "value": 99}), "out_of_range"),
        (
            json!({"key": "NoSuchSetting", "value": "1"}),
            "unknown_option",
        ),
        (json!({"key": "ChatLinks", "value": "{}"}), "invalid"),
        (
            json!({"key": "SystemName", "value": "again"}),
            "duplicate_key",
        ),
    ] {
        let r = root
            .put(
                "/api/option/batch",
                json!({"options": [{"key": "SystemName", "value": "Half"}, bad]}),
            )
            .await;
        r.err(400, code);
    }
    assert_eq!(
        switchboard_store::options::all(&mut app.conn()).unwrap(),
        before
    );
    assert_eq!(
        app.client().get("/api/status").await.ok()["system_name"],
        "Batch GW"
    );

    root.put("/api/option/batch", json!({"options": []}))
        .await
        .err(400, "required");
    root.put("/api/option/batch", json!({"options": "SystemName"}))
        .await
        .err(400, "invalid_field");
    root.put("/api/option/batch", json!({}))
        .await
        .err(400, "invalid_field");
    let many: Vec<_> = (0..201)
        .map(|i| json!({"key": format!("K{i}"), "value": "1"}))
        .collect();
    root.put("/api/option/batch", json!({"options": many}))
        .await
        .err(400, "too_many");
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

/// A reload that read the settings before an administrator's change and finishes after it
/// (the periodic sync, the resync after subscribing) must not put the old value back.
#[actix_web::test]
async fn a_reload_that_read_before_a_change_does_not_undo_it() {
    let app = TestApp::new().await;
    let root = app.root();
    // The reload begins and reads: Notice is still unset.
    let reload = app.state.settings_reloads.begin();
    let read_before = app
        .state
        .db(|c| Ok(switchboard_store::options::all(c)?))
        .await
        .unwrap();
    root.put(
        "/api/option",
        json!({"key": "Notice", "value": "maintenance at 9"}),
    )
    .await
    .ok();
    // It finishes after the change.
    let replaced = app.state.settings_reloads.keep(reload, || {
        app.state
            .settings
            .replace_all(read_before.into_iter().collect())
    });
    assert!(!replaced, "the older reload was kept");
    assert_eq!(
        app.state
            .settings
            .snapshot()
            .get("Notice")
            .map(String::as_str),
        Some("maintenance at 9")
    );
    let notice = app.client().get("/api/notice").await;
    assert_eq!(notice.ok(), &json!("maintenance at 9"));
}

/// Every switch, number and ratio of the catalogue refuses a value of the wrong kind, and an
/// unknown key is refused, through `PUT /api/option` and `PUT /api/option/batch`: each answer
/// is `{success: false, message, code}`, nothing reaches the database, and the typed settings
/// the handlers read keep their defaults.
#[actix_web::test]
async fn a_value_of_the_wrong_kind_or_an_unknown_key_is_refused_and_nothing_is_written() {
    use switchboard_api::settings::Typed;
    use switchboard_domain::options::{OptionKind, CATALOGUE};
    let app = TestApp::new().await;
    let root = app.root();
    let mut cases = vec![
        (
            json!({"key": "NoSuchSetting", "value": "1"}),
            "unknown_option",
        ),
        (json!({"key": "smtpport", "value": "25"}), "unknown_option"),
        (json!({"key": "SMTP Port", "value": "25"}), "unknown_option"),
    ];
    for d in CATALOGUE {
        let (bad, code) = match d.kind {
            OptionKind::Bool => ("yes", "invalid"),
            OptionKind::Int { .. } => ("ten", "invalid"),
            OptionKind::Float { .. } => ("cheap", "invalid"),
            OptionKind::Ratio => ("half", "invalid_ratio"),
            _ => continue,
        };
        cases.push((json!({"key": d.key, "value": bad}), code));
    }
    // Numbers in a switch, a fraction or a word in a whole number, out-of-range numbers.
    cases.extend([
        (
            json!({"key": "TurnstileCheckEnabled", "value": 2}),
            "invalid",
        ),
        (json!({"key": "RegisterEnabled", "value": "on"}), "invalid"),
        (json!({"key": "SMTPPort", "value": "587.5"}), "invalid"),
        (json!({"key": "SMTPPort", "value": 70000}), "out_of_range"),
        (
            json!({"key": "QuotaForNewUser", "value": -5}),
            "out_of_range",
        ),
        (json!({"key": "LogCleanupDays", "value": true}), "invalid"),
        (json!({"key": "PaymentUSDRate", "value": "NaN"}), "invalid"),
        (
            json!({"key": "PaymentMinAmount", "value": ["1"]}),
            "invalid",
        ),
    ]);
    assert!(cases.len() > 50, "{} cases", cases.len());
    for (body, code) in &cases {
        let m = root.put("/api/option", body.clone()).await.err(400, code);
        let key = body["key"].as_str().unwrap();
        if *code != "unknown_option" {
            assert!(m.contains(key.trim()), "{key}: {m}");
        }
        let batch = json!({"options": [{"key": "SystemName", "value": "Half"}, body]});
        root.put("/api/option/batch", batch).await.err(400, code);
    }
    assert!(
        switchboard_store::options::all(&mut app.conn())
            .unwrap()
            .is_empty(),
        "a refused value was written"
    );
    assert!(app.state.settings.snapshot().is_empty());
    assert_eq!(*app.state.settings.typed(), Typed::default());
    assert_eq!(app.state.settings.smtp().port, 587);
    assert!(app.state.settings.registration().enabled);
    assert!(!app.state.settings.sign_in().turnstile.enabled);
    let status = app.client().get("/api/status").await.ok().clone();
    assert_eq!(status["system_name"], "Switchboard");
    assert_eq!(status["turnstile_check"], false);
    assert_eq!(status["quota_per_unit"], 500_000);
}

/// A change reaches the typed groups the handlers read at once, and the groups follow a reload
/// from the database (another node's write).
#[actix_web::test]
async fn the_typed_settings_follow_writes_and_reloads() {
    use switchboard_api::settings::Typed;
    let app = TestApp::new().await;
    let root = app.root();
    root.put(
        "/api/option/batch",
        json!({"options": [
            {"key": "SMTPPort", "value": "465"},
            {"key": "RegisterEnabled", "value": false},
            {"key": "PaymentUSDRate", "value": 7},
            {"key": "LogCleanupDays", "value": "30"},
            {"key": "GitHubClientId", "value": " gh-id "},
            {"key": "TelegramBotToken", "value": "123:abc"},
        ]}),
    )
    .await
    .ok();
    let s = &app.state.settings;
    assert_eq!(s.smtp().port, 465);
    assert!(!s.registration().enabled);
    assert_eq!(s.payment().usd_rate, rust_decimal::Decimal::from(7));
    assert_eq!(s.operation().log_cleanup_days, 30);
    assert_eq!(s.sign_in().github.client_id.value, "gh-id");
    assert_eq!(s.telegram().bot_token, "123:abc");
    let before = s.typed();
    s.replace_all(Default::default());
    assert_eq!(*s.typed(), Typed::default());
    app.state.reload_settings().await.unwrap();
    assert_eq!(s.typed(), before);
    assert_eq!(
        app.client().get("/api/status").await.ok()["register_enabled"],
        false
    );
}
