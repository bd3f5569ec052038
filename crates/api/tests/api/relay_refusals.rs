//! Refusals through the one dispatch loop, end to end: an upstream's 429 reaches every protocol
//! with its `Retry-After` and its own error type, a frozen only channel is tried again rather
//! than refused, `/v1/messages/count_tokens` is served (natively by Anthropic channels, by the
//! tokenizer otherwise) and unknown Anthropic paths answer in Anthropic's shape.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, COUNTED_TOKENS, RETRY_AFTER_SECS};

async fn channel(app: &TestApp, kind: i64, base_url: &str, key: &str, models: &str) -> i64 {
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": format!("ch-{kind}-{key}"), "type": kind, "key": key,
                "base_url": base_url, "models": models, "group": "default"}),
        )
        .await;
    r.ok()["ids"][0].as_i64().unwrap()
}

struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: Value,
}

async fn post(app: &TestApp, path: &str, key: Option<&str>, body: &str) -> Answer {
    let mut rb = reqwest::Client::new()
        .post(app.url(path))
        .header("content-type", "application/json")
        .header("anthropic-version", "2023-06-01")
        .body(body.to_owned());
    if let Some(k) = key {
        rb = rb.header("x-api-key", k);
    }
    let r = rb.send().await.unwrap();
    let status = r.status().as_u16();
    let retry_after = r
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = r.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Answer {
        status,
        retry_after,
        body,
    }
}

fn chat(model: &str) -> String {
    json!({"model": model, "messages": [{"role": "user", "content": "Say hello"}]}).to_string()
}

fn message(model: &str) -> String {
    json!({"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": "Say hello"}]})
        .to_string()
}

#[actix_web::test]
async fn an_upstream_429_keeps_its_retry_after_and_type_and_the_frozen_channel_is_retried() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    // The model's only channel answers 429; the default RetryCooldownSeconds (5) freezes it.
    channel(&app, 1, &s.upstream.base_url, "sk-mock-429", "gpt-4.1").await;
    let tried = || {
        s.upstream
            .requests()
            .iter()
            .filter(|q| q.key == "sk-mock-429")
            .count()
    };
    for round in 1..=2 {
        let a = post(&app, "/v1/chat/completions", Some(&s.key), &chat("gpt-4.1")).await;
        assert_eq!(a.status, 429, "round {round}: {:?}", a.body);
        assert_eq!(
            a.retry_after.as_deref(),
            Some(RETRY_AFTER_SECS.to_string().as_str()),
            "the upstream's Retry-After reaches the client"
        );
        assert_eq!(a.body["error"]["type"], "requests", "the upstream's type");
        assert_eq!(a.body["error"]["code"], "rate_limit_exceeded");
        assert_eq!(tried(), round, "the frozen only channel is tried again");
    }
    assert!(app.consume_logs(s.user_id).await.is_empty());
}

#[actix_web::test]
async fn anthropic_and_gemini_clients_get_the_429_in_their_shape_with_retry_after() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    channel(&app, 14, &up.base_url, "sk-mock-429", "claude-sonnet-4-0").await;
    channel(&app, 25, &up.base_url, "sk-mock-429", "gemini-2.5-flash").await;
    let a = post(
        &app,
        "/v1/messages",
        Some(&s.key),
        &message("claude-sonnet-4-0"),
    )
    .await;
    assert_eq!(a.status, 429, "{:?}", a.body);
    assert_eq!(a.retry_after.as_deref(), Some("20"));
    assert_eq!(a.body["type"], "error");
    assert_eq!(a.body["error"]["type"], "rate_limit_error");
    // Google sends its wait in a RetryInfo detail; the client gets it as Retry-After.
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "Say hello"}]}]});
    let a = post(
        &app,
        "/gemini/v1beta/models/gemini-2.5-flash:generateContent",
        Some(&s.key),
        &body.to_string(),
    )
    .await;
    assert_eq!(a.status, 429, "{:?}", a.body);
    assert_eq!(a.retry_after.as_deref(), Some("20"));
    assert_eq!(a.body["error"]["status"], "RESOURCE_EXHAUSTED");
    // An OpenAI client of the Anthropic channel sees Anthropic's type as the error type.
    let a = post(
        &app,
        "/v1/chat/completions",
        Some(&s.key),
        &chat("claude-sonnet-4-0"),
    )
    .await;
    assert_eq!(a.status, 429, "{:?}", a.body);
    assert_eq!(a.body["error"]["type"], "rate_limit_error");
    assert_eq!(a.retry_after.as_deref(), Some("20"));
}

#[actix_web::test]
async fn count_tokens_is_answered_by_anthropic_channels_or_the_tokenizer() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    channel(&app, 14, &up.base_url, "sk-ant-ok", "claude-sonnet-4-0").await;
    for path in [
        "/v1/messages/count_tokens",
        "/claude/v1/messages/count_tokens",
    ] {
        let a = post(&app, path, Some(&s.key), &message("claude-sonnet-4-0")).await;
        assert_eq!(a.status, 200, "{path}: {:?}", a.body);
        assert_eq!(a.body, json!({ "input_tokens": COUNTED_TOKENS }));
    }
    let counted: Vec<_> = up
        .requests()
        .into_iter()
        .filter(|q| q.path == "/v1/messages/count_tokens")
        .collect();
    assert_eq!(counted.len(), 2);
    assert_eq!(counted[0].key, "sk-ant-ok");
    assert_eq!(counted[0].body["model"], "claude-sonnet-4-0");
    // gpt-4o-mini is served by an OpenAI channel: the tokenizer counts.
    let a = post(
        &app,
        "/v1/messages/count_tokens",
        Some(&s.key),
        &message("gpt-4o-mini"),
    )
    .await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    let n = a.body["input_tokens"].as_i64().unwrap();
    assert!(n > 0 && n < 100, "a count of `Say hello`: {n}");
    // Counting is free.
    assert!(app.consume_logs(s.user_id).await.is_empty());
}

#[actix_web::test]
async fn count_tokens_refuses_bad_input_in_anthropic_shape() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let path = "/v1/messages/count_tokens";
    let cases: Vec<(Option<&str>, String, u16, &str)> = vec![
        (None, message("gpt-4o-mini"), 401, "authentication_error"),
        (
            Some("sk-nope"),
            message("gpt-4o-mini"),
            401,
            "authentication_error",
        ),
        (
            Some(&s.key),
            "{not json".into(),
            400,
            "invalid_request_error",
        ),
        (Some(&s.key), "[1, 2]".into(), 400, "invalid_request_error"),
        (
            Some(&s.key),
            json!({"model": "gpt-4o-mini"}).to_string(),
            400,
            "invalid_request_error",
        ),
        (
            Some(&s.key),
            json!({"model": 7, "messages": []}).to_string(),
            400,
            "invalid_request_error",
        ),
        (
            Some(&s.key),
            message("no-such-model"),
            404,
            "not_found_error",
        ),
        (
            Some(&s.key),
            "x".repeat(app.state.config.relay_body_bytes + 1),
            413,
            "request_too_large",
        ),
    ];
    for (key, body, status, kind) in cases {
        let a = post(&app, path, key, &body).await;
        assert_eq!(a.status, status, "{:?}", a.body);
        assert_eq!(a.body["type"], "error", "{:?}", a.body);
        assert_eq!(a.body["error"]["type"], kind, "{:?}", a.body);
        assert!(a.body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
}

#[actix_web::test]
async fn unknown_anthropic_paths_answer_in_anthropic_shape() {
    let app = TestApp::new().await;
    for (method, path) in [
        ("POST", "/v1/messages/batches"),
        ("GET", "/v1/messages"),
        ("POST", "/claude/v1/messages/nope"),
    ] {
        let r = reqwest::Client::new()
            .request(method.parse().unwrap(), app.url(path))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 404, "{method} {path}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["type"], "error", "{method} {path}: {v}");
        assert_eq!(v["error"]["type"], "not_found_error");
    }
    // Elsewhere under /v1, OpenAI's shape.
    let r = reqwest::Client::new()
        .post(app.url("/v1/nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], "not_found");
    // Switched off, the count answers 404 too.
    app.root()
        .put(
            "/api/option",
            json!({"key": "ClaudeAPIEnabled", "value": false}),
        )
        .await
        .ok();
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let a = post(
        &app,
        "/v1/messages/count_tokens",
        Some(&s.key),
        &message("gpt-4o-mini"),
    )
    .await;
    assert_eq!(a.status, 404);
    assert_eq!(a.body["error"]["type"], "not_found_error");
}
