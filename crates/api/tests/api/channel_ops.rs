//! Channel operations: tests (single and all), upstream model list and balance, batch delete,
//! delete disabled, tags.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::MockUpstream;
use switchboard_store::channels;

async fn set_option(app: &TestApp, key: &str, value: Value) {
    app.root()
        .put("/api/option", json!({"key": key, "value": value}))
        .await
        .ok();
}

/// Creates a channel as root with the given extra fields; returns its id.
/// Creates a channel through the API. `"status": 3` (disabled automatically, which only the
/// relay and the channel test set) is applied afterwards, as the relay would.
async fn chan(app: &TestApp, base_url: &str, key: &str, extra: Value) -> i64 {
    let mut body = json!({"name": format!("ch-{key}"), "type": 1, "key": key,
        "base_url": base_url, "models": "gpt-4o-mini", "group": "default"});
    let mut auto_disabled = false;
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            if k == "status" && v == 3 {
                auto_disabled = true;
                continue;
            }
            b.insert(k.clone(), v.clone());
        }
    }
    let r = app.root().post("/api/channel", body).await;
    let id = r.ok()["ids"][0].as_i64().unwrap();
    if auto_disabled {
        channels::set_status(&mut app.conn(), id, 3).unwrap();
        app.state.relay.reload_channels(&app.state).await.unwrap();
    }
    id
}

fn row(app: &TestApp, id: i64) -> channels::ChannelRow {
    channels::find(&mut app.conn(), id).unwrap()
}

fn exists(app: &TestApp, id: i64) -> bool {
    channels::find(&mut app.conn(), id).is_ok()
}

#[actix_web::test]
async fn test_success_stores_response_time_and_bills_nothing() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let id = chan(
        &app,
        &up.base_url,
        "sk-mock-ok",
        json!({"test_model": "gpt-4o-mini"}),
    )
    .await;
    assert_eq!(row(&app, id).test_time, 0);
    let r = app.root().get(&format!("/api/channel/test/{id}")).await;
    let d = r.ok();
    assert_eq!(d["model"], "gpt-4o-mini");
    assert!(d["time_ms"].as_i64().unwrap() >= 0);
    let seen = up.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(seen[0].authorization, "Bearer sk-mock-ok");
    assert_eq!(seen[0].body["model"], "gpt-4o-mini");
    assert_eq!(seen[0].body["max_tokens"], 1);
    assert_eq!(seen[0].body["messages"][0]["content"], "hi");
    let c = row(&app, id);
    assert!(c.test_time > 0);
    assert_eq!(c.response_time as i64, d["time_ms"].as_i64().unwrap());

    // ?model= overrides the test model.
    let r = app
        .root()
        .get(&format!("/api/channel/test/{id}?model=gpt-4o"))
        .await;
    assert_eq!(r.ok()["model"], "gpt-4o");
    assert_eq!(up.requests()[1].body["model"], "gpt-4o");

    app.flushed().await;
    let logs = app.root().get("/api/log?type=2").await;
    assert_eq!(logs.ok()["total_count"], 0, "a test writes no consume log");
    assert_eq!(row(&app, id).used_quota, 0);
}

#[actix_web::test]
async fn without_a_test_model_the_first_listed_model_is_tested() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    // No test model: the first model the channel lists that is not a wildcard.
    let id = chan(
        &app,
        &up.base_url,
        "sk-mock-ok",
        json!({"models": "gpt-4*,gpt-4o-mini,gpt-4o"}),
    )
    .await;
    let r = app.root().get(&format!("/api/channel/test/{id}")).await;
    assert_eq!(r.ok()["model"], "gpt-4o-mini");
    assert_eq!(up.requests().len(), 1);
    // Test-all does not skip it either.
    let sum = app.root().get("/api/channel/test").await;
    assert_eq!(sum.ok()["tested"], 1);
    assert_eq!(up.requests().len(), 2);
    // Only wildcards: nothing to ask for, and the answer says what to do.
    let only = chan(&app, &up.base_url, "sk-wild", json!({"models": "gpt-4*"})).await;
    let m = app
        .root()
        .get(&format!("/api/channel/test/{only}"))
        .await
        .err(400, "test_model_required");
    assert!(m.contains("test model"), "{m}");
    assert_eq!(up.requests().len(), 2);
    // With ?model= it runs.
    app.root()
        .get(&format!("/api/channel/test/{only}?model=gpt-4o"))
        .await
        .ok();
}

#[actix_web::test]
async fn failing_test_disables_when_configured() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let extra = json!({"test_model": "gpt-4o-mini"});
    let bad = chan(&app, &up.base_url, "sk-mock-401", extra.clone()).await;

    // Auto-disable off: 502, status unchanged.
    let r = app.root().get(&format!("/api/channel/test/{bad}")).await;
    let m = r.err(502, "channel_test_failed");
    assert!(m.contains("Incorrect API key"), "{m}");
    assert_eq!(row(&app, bad).status, 1);

    set_option(&app, "AutomaticDisableChannelEnabled", json!(true)).await;
    let r = app.root().get(&format!("/api/channel/test/{bad}")).await;
    r.err(502, "channel_test_failed");
    assert_eq!(row(&app, bad).status, 3);
    assert!(
        channels::abilities_of(&mut app.conn(), bad)
            .unwrap()
            .iter()
            .all(|a| !a.2),
        "abilities follow"
    );
    assert!(app.state.relay.snapshot().channel(bad).unwrap().status == 3);

    // A 500 is not a reason to disable.
    let flaky = chan(&app, &up.base_url, "sk-mock-500", extra.clone()).await;
    let r = app.root().get(&format!("/api/channel/test/{flaky}")).await;
    r.err(502, "channel_test_failed");
    assert_eq!(row(&app, flaky).status, 1);

    // A manually disabled channel stays manually disabled.
    let manual = chan(
        &app,
        &up.base_url,
        "sk-mock-401",
        json!({"test_model": "gpt-4o-mini", "status": 2}),
    )
    .await;
    app.root()
        .get(&format!("/api/channel/test/{manual}"))
        .await
        .err(502, "channel_test_failed");
    assert_eq!(row(&app, manual).status, 2);
}

#[actix_web::test]
async fn successful_test_enables_auto_disabled_channel_when_configured() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let id = chan(
        &app,
        &up.base_url,
        "sk-mock-ok",
        json!({"test_model": "gpt-4o-mini", "status": 3}),
    )
    .await;
    assert_eq!(row(&app, id).status, 3);
    // Auto-enable off: stays disabled.
    app.root()
        .get(&format!("/api/channel/test/{id}"))
        .await
        .ok();
    assert_eq!(row(&app, id).status, 3);

    set_option(&app, "AutomaticEnableChannelEnabled", json!(true)).await;
    let r = app.root().get(&format!("/api/channel/test/{id}")).await;
    assert_eq!(r.ok()["enabled"], true);
    assert_eq!(row(&app, id).status, 1);
    assert!(channels::abilities_of(&mut app.conn(), id)
        .unwrap()
        .iter()
        .all(|a| a.2));
    assert_eq!(app.state.relay.snapshot().channel(id).unwrap().status, 1);

    // Only automatic disabling is undone: a manually disabled channel stays disabled.
    let manual = chan(
        &app,
        &up.base_url,
        "sk-mock-ok",
        json!({"test_model": "gpt-4o-mini", "status": 2}),
    )
    .await;
    app.root()
        .get(&format!("/api/channel/test/{manual}"))
        .await
        .ok();
    assert_eq!(row(&app, manual).status, 2);
}

#[actix_web::test]
async fn test_all_counts_disables_and_enables() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let tm = json!({"test_model": "gpt-4o-mini"});
    let good = chan(&app, &up.base_url, "sk-mock-ok", tm.clone()).await;
    let bad = chan(&app, &up.base_url, "sk-mock-401", tm.clone()).await;
    let slow = chan(&app, &up.base_url, "sk-mock-slow", tm.clone()).await;
    let back = chan(
        &app,
        &up.base_url,
        "sk-mock-ok",
        json!({"test_model": "gpt-4o-mini", "status": 3}),
    )
    .await;
    let manual = chan(
        &app,
        &up.base_url,
        "sk-mock-401",
        json!({"test_model": "gpt-4o-mini", "status": 2}),
    )
    .await;
    // Only a wildcard and no test model: nothing a test can ask for.
    let untestable = chan(
        &app,
        &up.base_url,
        "sk-mock-ok",
        json!({"models": "gpt-4*"}),
    )
    .await;
    set_option(&app, "AutomaticDisableChannelEnabled", json!(true)).await;
    set_option(&app, "AutomaticEnableChannelEnabled", json!(true)).await;
    set_option(&app, "ChannelDisableThreshold", json!(0.19)).await;

    let r = app.root().get("/api/channel/test").await;
    let sum = r.ok();
    assert_eq!(
        (
            &sum["tested"],
            &sum["failed"],
            &sum["disabled"],
            &sum["enabled"]
        ),
        (&json!(4), &json!(1), &json!(2), &json!(1))
    );
    // The failed channel is named, with the upstream's reason.
    let failures = sum["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["id"].as_i64(), Some(bad));
    assert_eq!(failures[0]["name"], json!(row(&app, bad).name));
    assert!(
        failures[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Incorrect API key")),
        "{failures:?}"
    );
    assert_eq!(row(&app, good).status, 1);
    assert_eq!(row(&app, bad).status, 3);
    assert_eq!(row(&app, slow).status, 3, "slower than the threshold");
    assert!(row(&app, slow).response_time >= 190);
    assert_eq!(row(&app, back).status, 1);
    assert_eq!(row(&app, manual).status, 2);
    assert_eq!(row(&app, untestable).test_time, 0);
    assert_eq!(up.requests().len(), 4);

    // The function the maintenance loop calls gives the same summary shape.
    let s = switchboard_api::routes::channel_ops::test_all(&app.state)
        .await
        .unwrap();
    assert_eq!((s.tested, s.failed), (4, 1));
}

#[actix_web::test]
async fn fetch_models_lists_the_upstream_models() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let id = chan(&app, &up.base_url, "sk-mock-ok", json!({})).await;
    let r = app
        .root()
        .get(&format!("/api/channel/fetch_models/{id}"))
        .await;
    let ids: Vec<&str> = r
        .ok()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(ids.contains(&"gpt-4o-mini") && ids.contains(&"text-embedding-3-small"));
    let bad = chan(&app, &up.base_url, "sk-mock-401", json!({})).await;
    app.root()
        .get(&format!("/api/channel/fetch_models/{bad}"))
        .await
        .err(502, "fetch_models_failed");
    // A Midjourney-proxy channel (34) serves tasks, not chat or model lists.
    let other = chan(&app, &up.base_url, "sk-mock-ok", json!({"type": 34})).await;
    app.root()
        .get(&format!("/api/channel/fetch_models/{other}"))
        .await
        .err(400, "unsupported_channel_type");
    app.root()
        .get(&format!("/api/channel/test/{other}?model=x"))
        .await
        .err(400, "unsupported_channel_type");
}

#[actix_web::test]
async fn update_balance_reports_upstream_errors() {
    // The mock upstream has no billing endpoints: the error path only.
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let id = chan(&app, &up.base_url, "sk-mock-ok", json!({})).await;
    let r = app
        .root()
        .get(&format!("/api/channel/update_balance/{id}"))
        .await;
    r.err(502, "balance_update_failed");
    let c = row(&app, id);
    assert_eq!((c.balance, c.balance_updated_at), (0, 0));
    channels::set_balance(&mut app.conn(), id, 12_340_000).unwrap();
    let c = row(&app, id);
    assert_eq!(c.balance, 12_340_000);
    assert!(c.balance_updated_at > 0);
    assert!(channels::set_balance(&mut app.conn(), 999_999, 1)
        .unwrap_err()
        .is_not_found());
}

#[actix_web::test]
async fn batch_delete_and_delete_disabled() {
    let app = TestApp::new().await;
    let u = "http://127.0.0.1:9";
    let a = chan(&app, u, "k-a", json!({})).await;
    let b = chan(&app, u, "k-b", json!({})).await;
    let c = chan(&app, u, "k-c", json!({})).await;
    let r = app
        .root()
        .post(
            "/api/channel/batch_delete",
            json!({"ids": [a, b, a, 987_654]}),
        )
        .await;
    assert_eq!(r.ok()["deleted"], 2);
    assert!(!exists(&app, a) && !exists(&app, b) && exists(&app, c));
    assert!(channels::abilities_of(&mut app.conn(), a)
        .unwrap()
        .is_empty());
    assert!(app.state.relay.snapshot().channel(a).is_none());

    for bad in [
        json!({"ids": []}),
        json!({"ids": "1"}),
        json!({"ids": ["x"]}),
        json!({}),
        json!({"ids": (1..=501).collect::<Vec<i64>>()}),
    ] {
        let r = app.root().post("/api/channel/batch_delete", bad).await;
        assert_eq!(r.status, 400, "{:?}", r.body);
    }
    app.root()
        .post("/api/channel/batch_delete", json!({"ids": []}))
        .await
        .err(400, "invalid_ids");

    let off = chan(&app, u, "k-off", json!({"status": 2})).await;
    let auto = chan(&app, u, "k-auto", json!({"status": 3})).await;
    let r = app.root().delete("/api/channel/disabled").await;
    assert_eq!(r.ok()["deleted"], 2);
    assert!(!exists(&app, off) && !exists(&app, auto) && exists(&app, c));
    assert_eq!(
        app.root().delete("/api/channel/disabled").await.ok()["deleted"],
        0
    );
}

#[actix_web::test]
async fn tags_list_edit_and_delete_disabled() {
    let app = TestApp::new().await;
    let u = "http://127.0.0.1:9";
    let a1 = chan(&app, u, "k-a1", json!({"tag": "alpha"})).await;
    let a2 = chan(&app, u, "k-a2", json!({"tag": "alpha", "status": 2})).await;
    let b1 = chan(&app, u, "k-b1", json!({"tag": "beta", "status": 3})).await;
    let none = chan(&app, u, "k-none", json!({})).await;

    let r = app.root().get("/api/channel/tags").await;
    assert_eq!(
        r.ok(),
        &json!([{"tag": "alpha", "count": 2}, {"tag": "beta", "count": 1}])
    );

    let r = app
        .root()
        .put(
            "/api/channel/tag",
            json!({"tag": "alpha", "priority": 7, "weight": 3, "status": 1}),
        )
        .await;
    assert_eq!(r.ok()["updated"], 2);
    for id in [a1, a2] {
        let c = row(&app, id);
        assert_eq!((c.priority, c.weight, c.status), (7, 3, 1));
        assert!(channels::abilities_of(&mut app.conn(), id)
            .unwrap()
            .iter()
            .all(|a| a.2));
    }
    let snap = app.state.relay.snapshot();
    let cands = snap.candidates("default", "gpt-4o-mini");
    assert!(cands
        .iter()
        .any(|c| c.id == a2 && c.priority == 7 && c.weight == 3));
    for id in [b1, none] {
        let c = row(&app, id);
        assert_eq!((c.priority, c.weight), (0, 1));
    }
    assert_eq!(row(&app, b1).status, 3);

    // Only the given field changes.
    app.root()
        .put("/api/channel/tag", json!({"tag": "alpha", "status": 2}))
        .await
        .ok();
    let c = row(&app, a1);
    assert_eq!((c.priority, c.weight, c.status), (7, 3, 2));
    assert!(channels::abilities_of(&mut app.conn(), a1)
        .unwrap()
        .iter()
        .all(|a| !a.2));

    // Bad input.
    let cases = [
        (json!({"tag": "alpha", "priority": -1}), "too_small"),
        (json!({"tag": "alpha", "weight": 0}), "too_small"),
        (json!({"tag": "alpha", "status": 3}), "invalid_status"),
        (json!({"tag": "alpha"}), "nothing_to_update"),
        (json!({"tag": "", "priority": 1}), "required"),
        (json!({"tag": "alpha", "priority": "high"}), "invalid_field"),
        (json!({"priority": 1}), "invalid_field"),
    ];
    for (body, code) in cases {
        app.root()
            .put("/api/channel/tag", body)
            .await
            .err(400, code);
    }
    app.root()
        .put("/api/channel/tag", json!({"tag": "nope", "priority": 1}))
        .await
        .err(404, "not_found");

    // Delete the disabled channels of one tag: alpha's are both disabled now, beta's stays.
    let r = app.root().delete("/api/channel/tag/alpha/disabled").await;
    assert_eq!(r.ok()["deleted"], 2);
    assert!(!exists(&app, a1) && !exists(&app, a2));
    assert!(exists(&app, b1) && exists(&app, none));
    let r = app.root().get("/api/channel/tags").await;
    assert_eq!(r.ok(), &json!([{"tag": "beta", "count": 1}]));
}

#[actix_web::test]
async fn unknown_ids_are_404() {
    let app = TestApp::new().await;
    for path in [
        "/api/channel/test/999999",
        "/api/channel/fetch_models/999999",
        "/api/channel/update_balance/999999",
    ] {
        app.root().get(path).await.err(404, "not_found");
    }
    app.root()
        .get("/api/channel/test/abc")
        .await
        .err(400, "invalid_path");
}

#[actix_web::test]
async fn normal_users_are_refused_everywhere() {
    let app = TestApp::new().await;
    let id = chan(
        &app,
        "http://127.0.0.1:9",
        "k",
        json!({"tag": "t", "status": 2}),
    )
    .await;
    let (user, _) = app.user("plainuser").await;
    let gets = [
        format!("/api/channel/test/{id}"),
        "/api/channel/test".to_owned(),
        format!("/api/channel/fetch_models/{id}"),
        format!("/api/channel/update_balance/{id}"),
        "/api/channel/tags".to_owned(),
    ];
    for p in &gets {
        let r = user.get(p).await;
        assert_eq!(r.status, 403, "{p}: {:?}", r.body);
    }
    let r = user
        .post("/api/channel/batch_delete", json!({"ids": [id]}))
        .await;
    assert_eq!(r.status, 403);
    let r = user.delete("/api/channel/disabled").await;
    assert_eq!(r.status, 403);
    let r = user
        .put("/api/channel/tag", json!({"tag": "t", "priority": 1}))
        .await;
    assert_eq!(r.status, 403);
    let r = user.delete("/api/channel/tag/t/disabled").await;
    assert_eq!(r.status, 403);
    let r = app.client().get("/api/channel/tags").await;
    assert_eq!(r.status, 401);
    assert!(exists(&app, id));
    assert_eq!(row(&app, id).priority, 0);

    // An administrator (not root) may use them.
    let (admin, _) = app.admin("opsadmin").await;
    admin.get("/api/channel/tags").await.ok();
}

#[actix_web::test]
async fn batch_azure_api_version_touches_only_azure_channels() {
    let app = TestApp::new().await;
    let u = "http://127.0.0.1:9";
    let az1 = chan(
        &app,
        u,
        "k-az1",
        json!({"type": 3, "config": r#"{"region":"eu"}"#}),
    )
    .await;
    let az2 = chan(&app, u, "k-az2", json!({"type": 3})).await;
    let oa = chan(&app, u, "k-oa", json!({})).await;
    let r = app
        .root()
        .put(
            "/api/channel/batch/azure_api",
            json!({"value": "2025-01-01-preview"}),
        )
        .await;
    assert_eq!(r.ok()["updated"], 2);
    assert_eq!(r.ok()["ids"], json!([az1, az2]));
    assert_eq!(
        row(&app, az1).config,
        r#"{"api_version":"2025-01-01-preview","region":"eu"}"#
    );
    assert_eq!(
        row(&app, az2).config,
        r#"{"api_version":"2025-01-01-preview"}"#
    );
    assert_eq!(row(&app, oa).config, "{}");
    // Only the listed ids, and nothing to do when the version is already set.
    let r = app
        .root()
        .put(
            "/api/channel/batch/azure_api",
            json!({"ids": [az2, oa], "value": "2024-10-21"}),
        )
        .await;
    assert_eq!(r.ok()["ids"], json!([az2]));
    assert!(row(&app, az1).config.contains("2025-01-01-preview"));
    let r = app
        .root()
        .put(
            "/api/channel/batch/azure_api",
            json!({"ids": [az2], "value": "2024-10-21"}),
        )
        .await;
    assert_eq!(r.ok()["updated"], 0);

    for (body, code) in [
        (json!({"value": "latest"}), "invalid_api_version"),
        (json!({"value": ""}), "required"),
        (json!({"ids": [], "value": "2024-10-21"}), "invalid_ids"),
        (json!({"ids": "1", "value": "2024-10-21"}), "invalid_json"),
    ] {
        let r = app.root().put("/api/channel/batch/azure_api", body).await;
        assert_eq!(r.status, 400, "{:?}", r.body);
        assert_eq!(r.body["success"], false);
        if code != "invalid_json" {
            r.err(400, code);
        }
    }
    let (admin, _) = app.admin("batcher").await;
    admin
        .put(
            "/api/channel/batch/azure_api",
            json!({"value": "2024-10-21"}),
        )
        .await
        .ok();
    let (user, _) = app.user("batch-user").await;
    user.put(
        "/api/channel/batch/azure_api",
        json!({"value": "2024-10-21"}),
    )
    .await
    .err(403, "forbidden");
}

#[actix_web::test]
async fn batch_remove_model_keeps_channels_that_would_be_left_empty() {
    let app = TestApp::new().await;
    let u = "http://127.0.0.1:9";
    let both = chan(
        &app,
        u,
        "k-both",
        json!({"models": "m-gone,m-stay", "test_model": "m-gone"}),
    )
    .await;
    let only = chan(&app, u, "k-only", json!({"models": "m-gone"})).await;
    let other = chan(&app, u, "k-other", json!({"models": "m-stay"})).await;
    let r = app
        .root()
        .put("/api/channel/batch/del_model", json!({"value": "m-gone"}))
        .await;
    let d = r.ok();
    assert_eq!(d["ids"], json!([both]));
    assert_eq!(d["kept"], json!(["ch-k-only"]));
    let b = row(&app, both);
    assert_eq!((b.models.as_str(), b.test_model.as_str()), ("m-stay", ""));
    assert_eq!(row(&app, only).models, "m-gone");
    assert_eq!(row(&app, other).models, "m-stay");
    // Abilities and the relay's snapshot follow.
    let abilities = channels::abilities_of(&mut app.conn(), both).unwrap();
    assert!(abilities.iter().all(|a| a.1 != "m-gone"), "{abilities:?}");
    // m-stay is still offered; m-gone only by the channel that kept it.
    let models = app.state.relay.snapshot().models("default");
    assert!(models.contains(&"m-stay".to_owned()) && models.contains(&"m-gone".to_owned()));
    app.root()
        .put(
            "/api/channel/batch/del_model",
            json!({"value": "m-gone", "ids": [only]}),
        )
        .await
        .ok();
    app.root()
        .delete(&format!("/api/channel/{only}"))
        .await
        .ok();
    assert!(!app
        .state
        .relay
        .snapshot()
        .models("default")
        .contains(&"m-gone".to_owned()));
    app.root()
        .put(
            "/api/channel/batch/del_model",
            json!({"ids": [other], "value": ""}),
        )
        .await
        .err(400, "required");
}

#[actix_web::test]
async fn copy_makes_an_independent_channel_with_the_same_settings() {
    let app = TestApp::new().await;
    let u = "http://127.0.0.1:9";
    let id = chan(
        &app,
        u,
        "k-copy",
        json!({"models": "a,b", "priority": 5, "tag": "t1"}),
    )
    .await;
    channels::set_response_time(&mut app.conn(), id, 321).unwrap();
    let r = app
        .root()
        .post(&format!("/api/channel/copy/{id}"), json!({}))
        .await;
    assert_eq!(r.status, 201);
    let new_id = r.ok()["id"].as_i64().unwrap();
    assert_ne!(new_id, id);
    let (orig, copy) = (row(&app, id), row(&app, new_id));
    assert_eq!(copy.name, "ch-k-copy_copy");
    assert_eq!(
        (
            app.channel_key(new_id),
            copy.models.as_str(),
            copy.priority,
            copy.tag.as_str()
        ),
        (
            app.channel_key(id),
            orig.models.as_str(),
            orig.priority,
            orig.tag.as_str()
        )
    );
    // The same key, sealed afresh (its own nonce).
    assert_ne!(copy.key, orig.key);
    assert_eq!((copy.response_time, copy.used_quota), (0, 0));
    assert_eq!(
        channels::abilities_of(&mut app.conn(), new_id)
            .unwrap()
            .len(),
        2
    );
    assert!(app.state.relay.snapshot().channel(new_id).is_some());

    let r = app
        .root()
        .post(&format!("/api/channel/copy/{id}?suffix=%20(2)"), json!({}))
        .await;
    assert_eq!(
        row(&app, r.ok()["id"].as_i64().unwrap()).name,
        "ch-k-copy (2)"
    );
    app.root()
        .post(
            &format!("/api/channel/copy/{id}?suffix={}", "x".repeat(33)),
            json!({}),
        )
        .await
        .err(400, "invalid_suffix");
    app.root()
        .post("/api/channel/copy/999999", json!({}))
        .await
        .err(404, "not_found");
    app.root()
        .post("/api/channel/copy/abc", json!({}))
        .await
        .err(400, "invalid_path");
    let (user, _) = app.user("copier").await;
    user.post(&format!("/api/channel/copy/{id}"), json!({}))
        .await
        .err(403, "forbidden");
}

#[actix_web::test]
async fn the_periodic_test_runs_once_per_period_across_nodes() {
    use switchboard_api::routes::channel_ops::scheduled_test_all;
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let id = chan(
        &app,
        &up.base_url,
        "sk-mock-ok",
        json!({"test_model": "gpt-4o-mini"}),
    )
    .await;
    // Node A takes the period and tests; node B (and A again) skip it while the lease lasts.
    let first = scheduled_test_all(&app.state, 5, "node-a").await.unwrap();
    assert_eq!(first.map(|s| s.tested), Some(1));
    assert!(row(&app, id).test_time > 0);
    assert!(scheduled_test_all(&app.state, 5, "node-b")
        .await
        .unwrap()
        .is_none());
    assert!(scheduled_test_all(&app.state, 5, "node-a")
        .await
        .unwrap()
        .is_none());
    assert_eq!(up.count("/v1/chat/completions"), 1);
    let (holder, expires) = switchboard_store::job_locks::find(&mut app.conn(), "channel-test")
        .unwrap()
        .unwrap();
    assert_eq!(holder, "node-a");
    assert!(expires > switchboard_store::now() + 4 * 60);
}
