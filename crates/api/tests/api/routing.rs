//! Smarter routing end to end (issue #17 item 6): the circuit breaker per channel and model, the
//! latency-aware choice within a priority, their settings and the health list.

use crate::common::{RelaySetup, TestApp};
use serde_json::{json, Value};
use std::time::Duration;

fn chat(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "Say hello"}]})
}

async fn set_options(app: &TestApp, options: Value) {
    app.root()
        .put("/api/option/batch", json!({ "options": options }))
        .await
        .ok();
}

/// How many requests reached the upstream with this channel key.
fn hits(s: &RelaySetup, key: &str) -> usize {
    let auth = format!("Bearer {key}");
    s.upstream
        .requests()
        .iter()
        .filter(|q| q.authorization == auth)
        .count()
}

async fn ok_chat(app: &TestApp, s: &RelaySetup, model: &str) {
    let r = app.relay(&s.key, "/v1/chat/completions", chat(model)).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

/// The health list's entry for a channel and model.
async fn pair(app: &TestApp, channel: i64, model: &str) -> Value {
    let r = app.root().get("/api/channel/health").await;
    r.ok()["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["channel_id"] == channel && p["model"] == model)
        .cloned()
        .unwrap_or(Value::Null)
}

#[actix_web::test]
async fn an_open_breaker_keeps_requests_off_a_failing_channel_until_one_probe() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let model = "gpt-4.1-mini";
    let bad = app
        .channel(&s.upstream.base_url, "sk-mock-500", model, 0)
        .await;
    let good = app
        .channel(&s.upstream.base_url, "sk-mock-ok", model, 0)
        .await;
    set_options(
        &app,
        json!([
            {"key": "RetryTimes", "value": 1},
            {"key": "RetryCooldownSeconds", "value": 0},
            {"key": "CircuitBreakerEnabled", "value": true},
            {"key": "CircuitBreakerMinRequests", "value": 3},
            {"key": "CircuitBreakerErrorRatio", "value": 0.5},
            {"key": "CircuitBreakerWindowSeconds", "value": 60},
            {"key": "CircuitBreakerOpenSeconds", "value": 3600},
        ]),
    )
    .await;
    // Same priority and weight: the failing channel is drawn first about half the time; each
    // time the retry answers from the good one. Its third failure opens its breaker.
    let mut sent = 0;
    while hits(&s, "sk-mock-500") < 3 {
        ok_chat(&app, &s, model).await;
        sent += 1;
        assert!(sent < 80, "the failing channel was not drawn three times");
    }
    let p = pair(&app, bad, model).await;
    assert_eq!(p["state"], "open", "{p}");
    assert_eq!(
        (p["requests"].as_i64(), p["failures"].as_i64()),
        (Some(3), Some(3))
    );
    assert!(p["opened_at"].as_i64().is_some_and(|t| t > 0), "{p}");
    assert_eq!(pair(&app, good, model).await["state"], "closed");
    // Open: no request reaches it, not even at the top priority, and the clients see successes.
    app.root()
        .put("/api/channel", json!({"id": bad, "priority": 10}))
        .await
        .ok();
    for _ in 0..15 {
        ok_chat(&app, &s, model).await;
    }
    assert_eq!(
        hits(&s, "sk-mock-500"),
        3,
        "an open breaker holds the channel out"
    );

    // After the open time, exactly one probe goes to it; it fails and the breaker opens again.
    set_options(
        &app,
        json!([{"key": "CircuitBreakerOpenSeconds", "value": 1}]),
    )
    .await;
    actix_web::rt::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(pair(&app, bad, model).await["state"], "half_open");
    ok_chat(&app, &s, model).await;
    assert_eq!(hits(&s, "sk-mock-500"), 4, "one probe");
    set_options(
        &app,
        json!([{"key": "CircuitBreakerOpenSeconds", "value": 3600}]),
    )
    .await;
    for _ in 0..5 {
        ok_chat(&app, &s, model).await;
    }
    assert_eq!(
        hits(&s, "sk-mock-500"),
        4,
        "the failed probe opened it again"
    );
    assert_eq!(pair(&app, bad, model).await["state"], "open");

    // The channel is mended (a new key); after the open time its probe succeeds and closes it.
    app.root()
        .put("/api/channel", json!({"id": bad, "key": "sk-mock-ok"}))
        .await
        .ok();
    set_options(
        &app,
        json!([{"key": "CircuitBreakerOpenSeconds", "value": 1}]),
    )
    .await;
    actix_web::rt::time::sleep(Duration::from_millis(1_100)).await;
    let before = s.upstream.requests().len();
    ok_chat(&app, &s, model).await;
    assert_eq!(
        s.upstream.requests().len(),
        before + 1,
        "the probe answered"
    );
    let p = pair(&app, bad, model).await;
    assert_eq!(p["state"], "closed", "{p}");
    assert_eq!(p["opened_at"], Value::Null);
    assert!(p["latency_ms"].as_f64().is_some(), "{p}");
}

#[actix_web::test]
async fn without_the_breaker_a_failing_channel_keeps_being_tried() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let model = "gpt-4.1-mini";
    // The failing channel first by priority: every request tries it, then retries.
    app.channel(&s.upstream.base_url, "sk-mock-500", model, 10)
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-ok", model, 0)
        .await;
    set_options(
        &app,
        json!([
            {"key": "RetryTimes", "value": 1},
            {"key": "RetryCooldownSeconds", "value": 0},
            {"key": "CircuitBreakerMinRequests", "value": 3},
        ]),
    )
    .await;
    for _ in 0..12 {
        ok_chat(&app, &s, model).await;
    }
    assert_eq!(hits(&s, "sk-mock-500"), 12, "tried on every request");
    assert_eq!(hits(&s, "sk-mock-ok"), 12);
    // Nothing is collected while both features are off.
    let r = app.root().get("/api/channel/health").await;
    assert_eq!(r.ok()["circuit_breaker_enabled"], false);
    assert_eq!(r.ok()["pairs"], json!([]));

    // The same with the breaker on: tried three times, then held out.
    set_options(
        &app,
        json!([{"key": "CircuitBreakerEnabled", "value": true}]),
    )
    .await;
    for _ in 0..12 {
        ok_chat(&app, &s, model).await;
    }
    assert_eq!(hits(&s, "sk-mock-500"), 15);
}

#[actix_web::test]
async fn latency_aware_routing_prefers_the_fast_channel() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let model = "gpt-4.1-mini";
    let slow = app
        .channel(&s.upstream.base_url, "sk-mock-slow", model, 0)
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-ok", model, 0)
        .await;
    // Off: by weight, about half each.
    for _ in 0..30 {
        ok_chat(&app, &s, model).await;
    }
    let by_weight = hits(&s, "sk-mock-slow");
    assert!(
        (5..=25).contains(&by_weight),
        "off, equal weights share the load: {by_weight} of 30 to the slow channel"
    );
    // On: after warm-up (each channel's first answer measures it), the slow one (200 ms) loses
    // every two-way draw against the fast one.
    set_options(&app, json!([{"key": "LatencyAwareRouting", "value": true}])).await;
    for _ in 0..30 {
        ok_chat(&app, &s, model).await;
    }
    let on = hits(&s, "sk-mock-slow") - by_weight;
    assert!(on <= 3, "{on} of 30 went to the slow channel");
    assert_eq!(hits(&s, "sk-mock-ok"), 60 - by_weight - on);
    let p = pair(&app, slow, model).await;
    assert!(p["latency_ms"].as_f64().unwrap() >= 150.0, "{p}");
    assert_eq!(p["in_flight"], 0);
    assert_eq!(p["state"], "closed");
}

#[actix_web::test]
async fn routing_settings_are_validated() {
    let app = TestApp::new().await;
    let root = app.root();
    let put = |key: &str, value: Value| {
        let root = &root;
        let body = json!({"key": key, "value": value});
        async move { root.put("/api/option", body).await }
    };
    for bad in [json!(0), json!("0"), json!(1.5), json!("abc"), json!(-0.2)] {
        put("CircuitBreakerErrorRatio", bad)
            .await
            .err(400, "invalid_ratio");
    }
    for key in [
        "CircuitBreakerWindowSeconds",
        "CircuitBreakerOpenSeconds",
        "CircuitBreakerMinRequests",
    ] {
        put(key, json!(-5)).await.err(400, "out_of_range");
        put(key, json!(0)).await.err(400, "out_of_range");
        put(key, json!("abc")).await.err(400, "invalid");
    }
    put("CircuitBreakerEnabled", json!("maybe"))
        .await
        .err(400, "invalid");
    put("LatencyAwareRouting", json!(2))
        .await
        .err(400, "invalid");
    // A batch with one bad value changes nothing.
    root.put(
        "/api/option/batch",
        json!({"options": [
            {"key": "CircuitBreakerEnabled", "value": true},
            {"key": "CircuitBreakerErrorRatio", "value": 0},
        ]}),
    )
    .await
    .err(400, "invalid_ratio");
    let list = root.get("/api/option").await;
    let value = |k: &str| {
        list.ok()
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["key"] == k)
            .map(|o| o["value"].clone())
            .unwrap()
    };
    // The defaults: both off.
    assert_eq!(value("CircuitBreakerEnabled"), "false");
    assert_eq!(value("LatencyAwareRouting"), "false");
    assert_eq!(value("CircuitBreakerErrorRatio"), "0.5");
    assert_eq!(value("CircuitBreakerMinRequests"), "10");
    assert_eq!(value("CircuitBreakerWindowSeconds"), "60");
    assert_eq!(value("CircuitBreakerOpenSeconds"), "30");
    // Good values are stored in their canonical form.
    let r = put("CircuitBreakerErrorRatio", json!("0.25")).await;
    assert_eq!(r.ok()["value"], "0.25");
    let r = put("CircuitBreakerErrorRatio", json!(1)).await;
    assert_eq!(r.ok()["value"], "1");
    put("LatencyAwareRouting", json!(true)).await.ok();
}

#[actix_web::test]
async fn the_health_list_is_for_administrators() {
    let app = TestApp::new().await;
    let (user, _) = app.user("hugo").await;
    user.get("/api/channel/health").await.err(403, "forbidden");
    app.client()
        .get("/api/channel/health")
        .await
        .err(401, "not_logged_in");
    let (admin, _) = app.admin("hana").await;
    let r = admin.get("/api/channel/health").await;
    assert_eq!(
        r.ok(),
        &json!({"circuit_breaker_enabled": false, "latency_aware_routing": false, "pairs": []})
    );
}

#[actix_web::test]
async fn routing_settings_reach_the_other_nodes() {
    use crate::common::unique;
    use switchboard_store::testing::TestDb;
    let db = TestDb::postgres().unwrap_or_else(TestDb::sqlite);
    let prefix = format!("sbroute:{}:", unique());
    let Some(a) = TestApp::node(db.shared(), &prefix, "node-a").await else {
        assert!(
            std::env::var("CI").is_err(),
            "TEST_REDIS_URL must be set in CI"
        );
        println!("TEST_REDIS_URL not set: routing settings between nodes not run");
        return;
    };
    let b = TestApp::node(db.shared(), &prefix, "node-b").await.unwrap();
    set_options(
        &a,
        json!([
            {"key": "CircuitBreakerEnabled", "value": true},
            {"key": "LatencyAwareRouting", "value": true},
            {"key": "CircuitBreakerErrorRatio", "value": 0.75},
        ]),
    )
    .await;
    let mut seen = false;
    for _ in 0..50 {
        let r = b.root().get("/api/channel/health").await;
        let view = b.state.view();
        if r.ok()["circuit_breaker_enabled"] == true
            && r.ok()["latency_aware_routing"] == true
            && view.get("CircuitBreakerErrorRatio").map(String::as_str) == Some("0.75")
        {
            seen = true;
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(seen, "node B did not see node A's routing settings");
}
