//! Anthropic Messages clients end to end: `POST /v1/messages` and `/claude/v1/messages` with
//! `x-api-key`, served natively by Anthropic channels (OpenAI channels: relay_messages_openai.rs) (bodies and streams passed through), with
//! the usage read on the side, errors in Anthropic's shape.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};
use switchboard_store::users;

async fn anthropic_channel(app: &TestApp, base_url: &str, key: &str) -> i64 {
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": format!("claude-{key}"), "type": 14, "key": key, "base_url": base_url,
                "models": "claude-sonnet-4-0", "group": "default"}),
        )
        .await;
    r.ok()["ids"][0].as_i64().unwrap()
}

async fn post(app: &TestApp, path: &str, key: &str, body: &Value) -> (u16, String) {
    let r = reqwest::Client::new()
        .post(app.url(path))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
        .json(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

fn message() -> Value {
    json!({"model": "claude-sonnet-4-0", "max_tokens": 64, "system": "Be brief.",
        "messages": [{"role": "user", "content": "Say hello"}]})
}

/// claude-sonnet-4-0 (1.5 / 7.5), 11 input and 7 output tokens: 69.
const COST: i64 = 69;
/// Plus 1000 cache reads (x0.1) and 200 cache writes (x1.25): 594.
const CACHED_COST: i64 = 594;

#[actix_web::test]
async fn messages_are_passed_through_and_billed() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    anthropic_channel(&app, &up.base_url, "sk-ant-ok").await;
    for path in ["/v1/messages", "/claude/v1/messages"] {
        let (status, text) = post(&app, path, &s.key, &message()).await;
        assert_eq!(status, 200, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["type"], "message", "Anthropic's own shape");
        assert_eq!(v["content"][0]["text"], CONTENT);
        assert_eq!(v["usage"]["input_tokens"], 11);
    }
    let seen = up.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(
        MockUpstream::header(&seen[0], "x-api-key"),
        Some("sk-ant-ok")
    );
    assert_eq!(seen[0].body, message(), "the body is passed through");

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    assert!(logs
        .iter()
        .all(|l| (l.quota, l.prompt_tokens, l.completion_tokens) == (COST, 11, 7)));
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 1_000_000 - 2 * COST);
}

#[actix_web::test]
async fn message_streams_are_passed_through_and_billed_with_cache_prices() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    anthropic_channel(&app, &up.base_url, "sk-mock-cache").await;
    let mut body = message();
    body["stream"] = json!(true);
    let (status, text) = post(&app, "/claude/v1/messages", &s.key, &body).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.starts_with("event: message_start"), "{text}");
    assert!(text.contains("event: message_stop"));
    assert!(
        !text.contains("chat.completion.chunk"),
        "nothing translated"
    );
    assert!(!text.contains("[DONE]"));
    for piece in CONTENT_CHUNKS {
        assert!(text.contains(&format!("\"text\":\"{piece}\"")), "{text}");
    }
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    let l = &logs[0];
    assert_eq!(
        (l.quota, l.prompt_tokens, l.completion_tokens, l.is_stream),
        (CACHED_COST, 1211, 7, true)
    );
    assert!(l.metadata.contains("\"cached_read_tokens\":1000"));
}

#[actix_web::test]
async fn message_errors_come_in_anthropic_shape() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    // A bad key.
    let (status, text) = post(&app, "/v1/messages", "sk-nope", &message()).await;
    assert_eq!(status, 401);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "authentication_error");
    // A model no channel serves.
    let mut body = message();
    body["model"] = json!("claude-3-5-haiku-latest");
    let (status, text) = post(&app, "/v1/messages", &s.key, &body).await;
    assert_eq!(status, 404, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["type"], "not_found_error");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("claude-3-5-haiku-latest"));
    // An upstream error keeps its Anthropic type.
    anthropic_channel(&app, &up.base_url, "sk-mock-529").await;
    let (status, text) = post(&app, "/v1/messages", &s.key, &message()).await;
    assert_eq!(status, 529, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    assert!(app.consume_logs(s.user_id).await.is_empty());
}
