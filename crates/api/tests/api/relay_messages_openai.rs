//! Anthropic Messages clients (`/v1/messages`, `/claude/v1/messages`) on OpenAI-protocol
//! channels: the request is sent as a chat completion, the answer and the stream come back as
//! Anthropic's message and events, billed from the OpenAI usage.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};

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

async fn openai_channel(app: &TestApp, base_url: &str, key: &str, models: &str) {
    app.root()
        .post(
            "/api/channel",
            json!({"name": format!("oai-{key}"), "type": 1, "key": key, "base_url": base_url,
                "models": models, "group": "default"}),
        )
        .await
        .ok();
}

/// (event name, data) of an Anthropic event stream.
fn events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut name = String::new();
            let mut data = Value::Null;
            for line in e.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = n.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(d).unwrap();
                }
            }
            (name, data)
        })
        .collect()
}

/// gpt-4.1-mini (0.2 / 0.8) for 11 prompt and 7 completion tokens: ceil(2.2 + 5.6) = 8.
const COST: i64 = 8;

fn message() -> Value {
    json!({"model": "gpt-4.1-mini", "max_tokens": 64, "system": "Be brief.",
        "messages": [{"role": "user", "content": "Say hello"}]})
}

#[actix_web::test]
async fn messages_on_openai_channels_are_translated_and_billed() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    openai_channel(&app, &up.base_url, "sk-mock-ok", "gpt-4.1-mini").await;
    for path in ["/v1/messages", "/claude/v1/messages"] {
        let (status, text) = post(&app, path, &s.key, &message()).await;
        assert_eq!(status, 200, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["type"], "message");
        assert_eq!(v["role"], "assistant");
        assert!(v["id"].as_str().unwrap().starts_with("msg_"), "{v}");
        assert_eq!(v["content"], json!([{"type": "text", "text": CONTENT}]));
        assert_eq!(v["stop_reason"], "end_turn");
        assert_eq!(v["usage"]["input_tokens"], 11);
        assert_eq!(v["usage"]["output_tokens"], 7);
    }
    let seen = up.requests();
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(seen[0].authorization, "Bearer sk-mock-ok");
    assert_eq!(
        seen[0].body,
        json!({"model": "gpt-4.1-mini", "max_tokens": 64, "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Say hello"}
        ]})
    );
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    assert!(logs
        .iter()
        .all(|l| (l.quota, l.prompt_tokens, l.completion_tokens) == (COST, 11, 7)));
}

#[actix_web::test]
async fn message_streams_on_openai_channels_become_anthropic_events() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    openai_channel(&app, &up.base_url, "sk-mock-ok", "gpt-4.1-mini").await;
    let mut body = message();
    body["stream"] = json!(true);
    let (status, text) = post(&app, "/v1/messages", &s.key, &body).await;
    assert_eq!(status, 200, "{text}");
    assert!(!text.contains("chat.completion.chunk"), "{text}");
    assert!(!text.contains("[DONE]"));
    let ev = events(&text);
    let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
    let mut expected = vec!["message_start", "content_block_start"];
    expected.extend(std::iter::repeat_n(
        "content_block_delta",
        CONTENT_CHUNKS.len(),
    ));
    expected.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(names, expected);
    for (name, data) in &ev {
        assert_eq!(
            data["type"],
            name.as_str(),
            "the type repeats the event name"
        );
    }
    let streamed: String = ev
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(streamed, CONTENT);
    let delta = &ev[ev.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(delta["usage"]["output_tokens"], 7);
    assert_eq!(
        up.requests()[0].body["stream_options"],
        json!({"include_usage": true})
    );

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(
        (
            logs[0].quota,
            logs[0].prompt_tokens,
            logs[0].completion_tokens,
            logs[0].is_stream
        ),
        (COST, 11, 7, true)
    );
}

#[actix_web::test]
async fn message_tool_use_on_openai_channels() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    openai_channel(&app, &up.base_url, "sk-mock-ok", "gpt-4.1-mini").await;
    let tools = json!([{"name": "lookup", "description": "Looks up",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}]);
    let mut body = json!({"model": "gpt-4.1-mini", "max_tokens": 64, "tools": tools,
        "tool_choice": {"type": "auto"},
        "messages": [{"role": "user", "content": "Find mock"}]});
    let (status, text) = post(&app, "/v1/messages", &s.key, &body).await;
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["stop_reason"], "tool_use");
    let call = v["content"][0].clone();
    assert_eq!(call["type"], "tool_use");
    assert_eq!(call["name"], "lookup");
    assert_eq!(call["input"], json!({"query": "mock"}));
    let sent = &up.requests()[0].body;
    assert_eq!(sent["tool_choice"], "auto");
    assert_eq!(
        sent["tools"][0]["function"]["parameters"]["properties"]["query"]["type"],
        "string"
    );

    // Streamed: one tool_use block with the arguments as partial JSON.
    body["stream"] = json!(true);
    let (status, text) = post(&app, "/v1/messages", &s.key, &body).await;
    assert_eq!(status, 200, "{text}");
    let ev = events(&text);
    let start = ev.iter().find(|(n, _)| n == "content_block_start").unwrap();
    assert_eq!(start.1["content_block"]["type"], "tool_use");
    let args: String = ev
        .iter()
        .filter_map(|(_, d)| d["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"query": "mock"})
    );
    assert_eq!(ev[ev.len() - 2].1["delta"]["stop_reason"], "tool_use");

    // The result goes back as a tool message.
    body["stream"] = json!(false);
    body["messages"] = json!([
        {"role": "user", "content": "Find mock"},
        {"role": "assistant", "content": [call.clone()]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "found"}]}
    ]);
    let (status, text) = post(&app, "/v1/messages", &s.key, &body).await;
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["content"][0]["text"], CONTENT);
    let sent = &up.requests()[2].body;
    assert_eq!(
        sent["messages"][2],
        json!({"role": "tool", "tool_call_id": call["id"], "content": "found"})
    );
    assert_eq!(app.consume_logs(s.user_id).await.len(), 3);
}

#[actix_web::test]
async fn message_errors_from_openai_channels_come_in_anthropic_shape() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    openai_channel(&app, &up.base_url, "sk-mock-429", "gpt-4.1-mini").await;
    // A block the OpenAI protocol cannot carry is the client's error.
    let mut body = message();
    body["messages"] = json!([{"role": "user", "content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}}
    ]}]);
    let (status, text) = post(&app, "/v1/messages", &s.key, &body).await;
    assert_eq!(status, 400, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["type"], "invalid_request_error");
    // The upstream's 429.
    let (status, text) = post(&app, "/v1/messages", &s.key, &message()).await;
    assert_eq!(status, 429, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "rate_limit_error");
    assert!(app.consume_logs(s.user_id).await.is_empty());
}

/// Claude Code's request shape on an OpenAI channel: its system turn within the conversation
/// is a system message where it stood (it was refused with 400 `unsupported message role
/// "system"`), `output_config.effort` is `reasoning_effort` for a reasoning model and left out
/// for a chat model that refuses it, the beta-only fields are dropped.
#[actix_web::test]
async fn claude_codes_request_shape_on_openai_channels() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    openai_channel(&app, &up.base_url, "sk-mock-ok", "gpt-4.1-mini,o4-mini").await;
    for model in ["gpt-4.1-mini", "o4-mini"] {
        let body = json!({"model": model, "max_tokens": 32000, "stream": true,
            "system": [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral", "scope": "global"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
                {"role": "system", "content": "<system-reminder>Be brief.</system-reminder>"},
                {"role": "user", "content": "Say hello"}
            ],
            "thinking": {"type": "adaptive"},
            "output_config": {"effort": "high"},
            "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}});
        let (status, text) = post(&app, "/v1/messages?beta=true", &s.key, &body).await;
        assert_eq!(status, 200, "{model}: {text}");
        assert!(text.contains("event: message_stop"), "{text}");
    }
    let seen = up.requests();
    assert_eq!(seen.len(), 2);
    for (i, r) in seen.iter().enumerate() {
        let roles: Vec<&str> = r.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["system", "user", "system", "user"], "{i}");
        assert_eq!(
            r.body["messages"][2]["content"],
            "<system-reminder>Be brief.</system-reminder>"
        );
        for dropped in ["context_management", "output_config", "thinking", "system"] {
            assert!(r.body.get(dropped).is_none(), "{dropped}: {}", r.body);
        }
    }
    assert!(
        seen[0].body.get("reasoning_effort").is_none(),
        "{}",
        seen[0].body
    );
    assert_eq!(seen[0].body["max_tokens"], 32000);
    assert_eq!(seen[1].body["reasoning_effort"], "high");
    assert_eq!(seen[1].body["max_completion_tokens"], 32000);
    assert!(seen[1].body.get("max_tokens").is_none());
    assert_eq!(app.consume_logs(s.user_id).await.len(), 2);
}
