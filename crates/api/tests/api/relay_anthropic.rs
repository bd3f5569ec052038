//! Anthropic channels end to end: OpenAI chat requests through Switchboard, translated to
//! Messages for the mock upstream, answered in OpenAI's shape (whole and streamed), logged and
//! charged with Anthropic's cache prices.

use crate::common::TestApp;
use futures_util::StreamExt;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};
use switchboard_store::{channels, users};

async fn anthropic_channel(app: &TestApp, base_url: &str, key: &str, priority: i64) -> i64 {
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": format!("claude-{key}"), "type": 14, "key": key, "base_url": base_url,
                "models": "claude-sonnet-4-0", "group": "default", "priority": priority,
                "model_mapping": {"claude-sonnet-4-0": "claude-sonnet-4-20250514"}}),
        )
        .await;
    r.ok()["ids"][0].as_i64().unwrap()
}

fn chat() -> Value {
    json!({"model": "claude-sonnet-4-0", "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say hello"}
    ]})
}

/// claude-sonnet-4-0's built-in price (1.5 / 7.5) for 11 input and 7 output tokens:
/// 16.5 + 52.5 = 69.
const COST: i64 = 69;
/// With 1000 cache-read (x0.1) and 200 cache-write (x1.25) tokens on top:
/// prompt 1211 - 900 + 50 = 361 -> 541.5 + 52.5 = 594.
const CACHED_COST: i64 = 594;

async fn stream_text(app: &TestApp, key: &str, body: &Value) -> String {
    let r = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    r.text().await.unwrap()
}

fn data_events(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|e| e.trim().strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[actix_web::test]
async fn anthropic_chat_is_translated_charged_and_logged() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    let ch = anthropic_channel(&app, &up.base_url, "sk-ant-ok", 0).await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["object"], "chat.completion");
    assert_eq!(r.body["model"], "claude-sonnet-4-20250514");
    assert_eq!(r.body["choices"][0]["message"]["content"], CONTENT);
    assert_eq!(r.body["choices"][0]["finish_reason"], "stop");
    assert_eq!(r.body["usage"]["prompt_tokens"], 11);
    assert_eq!(r.body["usage"]["completion_tokens"], 7);
    assert!(r.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));

    let seen = up.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(
        MockUpstream::header(&seen[0], "x-api-key"),
        Some("sk-ant-ok")
    );
    assert_eq!(
        MockUpstream::header(&seen[0], "anthropic-version"),
        Some("2023-06-01")
    );
    assert_eq!(seen[0].authorization, "");
    assert_eq!(
        seen[0].body,
        json!({"model": "claude-sonnet-4-20250514", "max_tokens": 8192, "system": "Be brief.",
            "messages": [{"role": "user", "content": "Say hello"}]})
    );

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    let l = &logs[0];
    assert_eq!(
        (
            l.quota,
            l.prompt_tokens,
            l.completion_tokens,
            l.channel_id,
            l.is_stream
        ),
        (COST, 11, 7, ch, false)
    );
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 1_000_000 - COST);
    assert_eq!(
        channels::find(&mut app.conn(), ch).unwrap().used_quota,
        COST
    );
}

#[actix_web::test]
async fn anthropic_cache_tokens_are_billed_at_cache_prices() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    anthropic_channel(&app, &up.base_url, "sk-mock-cache", 0).await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["usage"]["prompt_tokens"], 1211);
    assert_eq!(
        r.body["usage"]["prompt_tokens_details"]["cached_tokens"],
        1000
    );
    // Streamed: the usage comes from message_start and message_delta.
    let mut body = chat();
    body["stream"] = json!(true);
    stream_text(&app, &s.key, &body).await;
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    for l in &logs {
        assert_eq!(
            (l.quota, l.prompt_tokens, l.completion_tokens),
            (CACHED_COST, 1211, 7)
        );
        assert!(
            l.metadata.contains("\"cached_read_tokens\":1000"),
            "{}",
            l.metadata
        );
        assert!(
            l.metadata.contains("\"cached_write_tokens\":200"),
            "{}",
            l.metadata
        );
    }
}

#[actix_web::test]
async fn anthropic_streams_become_openai_chunks() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    anthropic_channel(&app, &up.base_url, "sk-ant-ok", 0).await;
    let mut body = chat();
    body["stream"] = json!(true);
    let text = stream_text(&app, &s.key, &body).await;
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    assert!(!text.contains("event:"), "no Anthropic event lines: {text}");
    assert!(!text.contains("\"choices\":[]"), "usage held back: {text}");
    let events = data_events(&text);
    assert_eq!(events[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(events
        .iter()
        .all(|e| e["object"] == "chat.completion.chunk"));
    let content: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, CONTENT_CHUNKS.concat());
    assert_eq!(
        events.last().unwrap()["choices"][0]["finish_reason"],
        "stop"
    );
    assert_eq!(up.requests()[0].body["stream"], true);

    // Asked for usage: the final chunk carries it.
    body["stream_options"] = json!({"include_usage": true});
    let text = stream_text(&app, &s.key, &body).await;
    let events = data_events(&text);
    let last = events.last().unwrap();
    assert_eq!(last["choices"], json!([]));
    assert_eq!(last["usage"]["prompt_tokens"], 11);
    assert_eq!(last["usage"]["completion_tokens"], 7);

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    assert!(logs.iter().all(
        |l| (l.quota, l.prompt_tokens, l.completion_tokens, l.is_stream) == (COST, 11, 7, true)
    ));
    assert!(logs
        .iter()
        .all(|l| l.metadata.contains("\"usage_estimated\":false")));
}

#[actix_web::test]
async fn anthropic_tool_use_round_trip() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    anthropic_channel(&app, &up.base_url, "sk-ant-ok", 0).await;
    let tools = json!([{"type": "function", "function": {"name": "lookup", "description": "Look up",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}]);
    let body = json!({"model": "claude-sonnet-4-0", "tools": tools, "tool_choice": "auto",
        "messages": [{"role": "user", "content": "Find mock"}]});
    let r = app.relay(&s.key, "/v1/chat/completions", body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let msg = &r.body["choices"][0]["message"];
    assert_eq!(r.body["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(msg["content"], Value::Null);
    let call = &msg["tool_calls"][0];
    assert_eq!(call["function"]["name"], "lookup");
    assert_eq!(call["function"]["arguments"], "{\"query\":\"mock\"}");
    let sent = &up.requests()[0].body;
    assert_eq!(
        sent["tools"][0]["input_schema"]["properties"]["query"]["type"],
        "string"
    );
    assert_eq!(sent["tool_choice"], json!({"type": "auto"}));

    // The tool result goes back as a tool_result block; the answer is text again.
    let id = call["id"].as_str().unwrap().to_owned();
    let body = json!({"model": "claude-sonnet-4-0", "tools": tools, "messages": [
        {"role": "user", "content": "Find mock"},
        {"role": "assistant", "content": null, "tool_calls": [call.clone()]},
        {"role": "tool", "tool_call_id": id, "content": "found"}
    ]});
    let r = app
        .relay(&s.key, "/v1/chat/completions", body.clone())
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["choices"][0]["message"]["content"], CONTENT);
    let sent = &up.requests()[1].body;
    assert_eq!(
        sent["messages"][1]["content"][0],
        json!({"type": "tool_use", "id": id, "name": "lookup", "input": {"query": "mock"}})
    );
    assert_eq!(
        sent["messages"][2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "found"}]})
    );

    // Streamed tool calls.
    let mut streamed = json!({"model": "claude-sonnet-4-0", "tools": tools, "stream": true,
        "messages": [{"role": "user", "content": "Find mock"}]});
    let text = stream_text(&app, &s.key, &streamed).await;
    let events = data_events(&text);
    let args: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(args, "{\"query\": \"mock\"}");
    assert_eq!(
        events.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );
    streamed["stream"] = json!(false);
    assert_eq!(app.consume_logs(s.user_id).await.len(), 3);
}

#[actix_web::test]
async fn anthropic_errors_retry_disable_or_reach_the_client() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    // Alone, an overloaded channel's error reaches the client and nothing is charged.
    let overloaded = anthropic_channel(&app, &up.base_url, "sk-mock-529", 10).await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 529, "{:?}", r.body);
    assert_eq!(r.body["error"]["code"], "overloaded_error");
    assert_eq!(r.body["error"]["message"], "Overloaded");
    assert!(app.consume_logs(s.user_id).await.is_empty());

    // With retries: overloaded is retried, a bad key disables its channel, a good one answers.
    for (k, v) in [
        ("AutomaticDisableChannelEnabled", json!(true)),
        ("RetryTimes", json!(2)),
        ("RetryCooldownSeconds", json!(0)),
    ] {
        app.root()
            .put("/api/option", json!({"key": k, "value": v}))
            .await
            .ok();
    }
    let bad_key = anthropic_channel(&app, &up.base_url, "sk-mock-401", 5).await;
    let good = anthropic_channel(&app, &up.base_url, "sk-ant-ok", 0).await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(channels::find(&mut app.conn(), bad_key).unwrap().status, 3);
    assert_eq!(
        channels::find(&mut app.conn(), overloaded).unwrap().status,
        1
    );
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!((logs[0].channel_id, logs[0].quota), (good, COST));

    // What Anthropic cannot take is refused as the client's error, without a call.
    let before = up.requests().len();
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "claude-sonnet-4-0", "messages": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}]}]}),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert_eq!(up.requests().len(), before);
}

#[actix_web::test]
async fn anthropic_cut_streams_are_billed_for_what_was_produced() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    anthropic_channel(&app, &up.base_url, "sk-mock-cut", 0).await;
    let mut body = chat();
    body["stream"] = json!(true);
    let r = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(&s.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let mut s2 = r.bytes_stream();
    let mut got = String::new();
    while let Some(c) = s2.next().await {
        match c {
            Ok(c) => got.push_str(&String::from_utf8_lossy(&c)),
            Err(_) => break,
        }
    }
    assert!(!got.contains("[DONE]"), "{got}");
    let mut logs = Vec::new();
    for _ in 0..100 {
        logs = app.consume_logs(s.user_id).await;
        if !logs.is_empty() {
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(logs.len(), 1);
    let l = &logs[0];
    assert!(
        l.completion_tokens >= 1 && l.completion_tokens < 7,
        "{}",
        l.completion_tokens
    );
    assert!(l.metadata.contains("\"usage_estimated\":true"));
}

#[actix_web::test]
async fn anthropic_channels_list_models_and_pass_the_channel_test() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let id = anthropic_channel(&app, &up.base_url, "sk-ant-ok", 0).await;
    let r = app
        .root()
        .get(&format!("/api/channel/fetch_models/{id}"))
        .await;
    assert_eq!(
        r.ok(),
        &json!(["claude-sonnet-4-20250514", "claude-3-5-haiku-20241022"])
    );
    let seen = up.requests();
    assert_eq!(
        MockUpstream::header(&seen[0], "x-api-key"),
        Some("sk-ant-ok")
    );
    let r = app
        .root()
        .get(&format!("/api/channel/test/{id}?model=claude-sonnet-4-0"))
        .await;
    assert!(r.status < 300, "{:?}", r.body);
    assert_eq!(up.requests().last().unwrap().path, "/v1/messages");
    assert_eq!(up.requests().last().unwrap().body["max_tokens"], 1);
}
