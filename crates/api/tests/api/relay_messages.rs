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

/// Claude Code's flags (`POST /v1/messages?beta=true`): they reach Anthropic channels, less the
/// ones the channel removes and with the ones it adds; counting tokens carries them too.
#[actix_web::test]
async fn the_clients_anthropic_beta_flags_reach_the_channel() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    let id = anthropic_channel(&app, &up.base_url, "sk-ant-ok").await;
    let flags = "context-management-2025-06-27,interleaved-thinking-2025-05-14,prompt-caching-scope-2026-01-05";
    let mut body = message();
    body["context_management"] = json!({"edits": [{"type": "clear_thinking_20251015"}]});
    let send = |path: &'static str, body: Value| {
        let (url, key) = (app.url(path), s.key.clone());
        async move {
            let r = reqwest::Client::new()
                .post(url)
                .header("x-api-key", key)
                .header("anthropic-version", "2023-06-01")
                .header("anthropic-beta", flags)
                .json(&body)
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let (status, text) = send("/v1/messages?beta=true", body.clone()).await;
    assert_eq!(status, 200, "{text}");
    let seen = up.requests();
    assert_eq!(
        MockUpstream::header(&seen[0], "anthropic-beta"),
        Some(flags)
    );
    assert_eq!(seen[0].body, body, "beta-only fields go as sent");

    // The channel's rule: drop the cache-scope flags, add the 1M context window.
    let r = app
        .root()
        .put(
            "/api/channel",
            json!({"id": id, "config": {"anthropic_beta": {"remove": ["prompt-caching-scope-*"], "add": ["context-1m-2025-08-07"]}}}),
        )
        .await;
    r.ok();
    let (status, text) = send("/v1/messages", body.clone()).await;
    assert_eq!(status, 200, "{text}");
    let (status, text) = send("/v1/messages/count_tokens", body.clone()).await;
    assert_eq!(status, 200, "{text}");
    let seen = up.requests();
    let expected =
        "context-management-2025-06-27,interleaved-thinking-2025-05-14,context-1m-2025-08-07";
    assert_eq!(seen[1].path, "/v1/messages");
    assert_eq!(
        MockUpstream::header(&seen[1], "anthropic-beta"),
        Some(expected)
    );
    assert_eq!(seen[2].path, "/v1/messages/count_tokens");
    assert_eq!(
        MockUpstream::header(&seen[2], "anthropic-beta"),
        Some(expected)
    );

    // A rule that is not one is refused with its code.
    let r = app
        .root()
        .put(
            "/api/channel",
            json!({"id": id, "config": {"anthropic_beta": {"add": ["Not A Flag"]}}}),
        )
        .await;
    let m = r.err(400, "invalid_anthropic_beta");
    assert!(m.contains("Not A Flag"), "{m}");
}

async fn gemini_channel(app: &TestApp, base_url: &str, models: &str) -> i64 {
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": "gemini", "type": 25, "key": "g-ok", "base_url": base_url,
                "models": models, "group": "default"}),
        )
        .await;
    r.ok()["ids"][0].as_i64().unwrap()
}

/// Claude Code's newest request shape on a Gemini channel: bridged through chat into Gemini's
/// protocol (a system turn within the conversation, `output_config.effort`, beta-only fields
/// dropped), the answer and the stream in Anthropic's shape, billed by Gemini's count.
#[actix_web::test]
async fn messages_reach_gemini_channels_through_the_chat_bridge() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url, "gemini-2.5-pro").await;
    let body = json!({"model": "gemini-2.5-pro", "max_tokens": 2000,
        "system": [{"type": "text", "text": "You are an agent.", "cache_control": {"type": "ephemeral", "scope": "global"}}],
        "messages": [
            {"role": "user", "content": "Say hello"},
            {"role": "system", "content": "<system-reminder>Be brief.</system-reminder>"},
            {"role": "user", "content": "Now."}
        ],
        "output_config": {"effort": "low"},
        "context_management": {"edits": []}});
    let (status, text) = post(&app, "/v1/messages", &s.key, &body).await;
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["type"], "message", "{v}");
    assert_eq!(v["content"][0]["type"], "text");
    assert_eq!(v["content"][0]["text"], CONTENT);
    assert_eq!(v["usage"]["input_tokens"], 11);

    let mut streamed = body.clone();
    streamed["stream"] = json!(true);
    let (status, text) = post(&app, "/v1/messages", &s.key, &streamed).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.starts_with("event: message_start"), "{text}");
    assert!(text.contains("event: message_stop"), "{text}");
    assert!(!text.contains("chat.completion"), "{text}");
    let deltas: String = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter(|e| e["type"] == "content_block_delta")
        .map(|e| e["delta"]["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(deltas, CONTENT_CHUNKS.concat());

    let seen = up.requests();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[0]
            .path
            .ends_with("/models/gemini-2.5-pro:generateContent"),
        "{}",
        seen[0].path
    );
    assert!(
        seen[1].path.ends_with(":streamGenerateContent"),
        "{}",
        seen[1].path
    );
    let sent = &seen[0].body;
    assert_eq!(
        sent["systemInstruction"]["parts"],
        json!([{"text": "You are an agent."}, {"text": "<system-reminder>Be brief.</system-reminder>"}])
    );
    assert_eq!(
        sent["generationConfig"]["thinkingConfig"]["thinkingBudget"],
        1024
    );
    assert!(sent.get("context_management").is_none(), "{sent}");

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    for l in &logs {
        assert_eq!(l.prompt_tokens, 11, "{l:?}");
        assert!(l.completion_tokens > 0 && l.quota > 0, "{l:?}");
    }
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(
        u.quota,
        1_000_000 - logs.iter().map(|l| l.quota).sum::<i64>()
    );
}

/// A request the channel's protocol cannot express is the gateway's refusal: 400 in
/// Anthropic's shape, no upstream call, the channel not frozen nor failed (the next request
/// goes through), nothing charged.
#[actix_web::test]
async fn a_translation_refusal_is_the_gateways_own() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url, "gemini-2.5-pro").await;
    let body = json!({"model": "gemini-2.5-pro", "max_tokens": 50, "messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}}
    ]}]});
    let (status, text) = post(&app, "/v1/messages", &s.key, &body).await;
    assert_eq!(status, 400, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "invalid_request_error", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("document"),
        "{v}"
    );
    assert!(up.requests().is_empty(), "no upstream call");
    let mut ok = body.clone();
    ok["messages"] = json!([{"role": "user", "content": "hi"}]);
    let (status, text) = post(&app, "/v1/messages", &s.key, &ok).await;
    assert_eq!(status, 200, "the channel is not frozen: {text}");
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(
        u.quota,
        1_000_000 - logs[0].quota,
        "the refusal charged nothing"
    );
}
