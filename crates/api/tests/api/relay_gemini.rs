//! Gemini channels end to end: OpenAI chat and embeddings requests through Switchboard,
//! translated to generateContent / streamGenerateContent / batchEmbedContents for the mock
//! upstream, answered in OpenAI's shape, logged and charged.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};
use switchboard_store::{channels, users};

async fn gemini_channel(app: &TestApp, base_url: &str, key: &str, priority: i64) -> i64 {
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": format!("gemini-{key}"), "type": 25, "key": key, "base_url": base_url,
                "models": "gemini-2.5-pro", "group": "default", "priority": priority}),
        )
        .await;
    r.ok()["ids"][0].as_i64().unwrap()
}

fn chat() -> Value {
    json!({"model": "gemini-2.5-pro", "max_tokens": 100, "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say hello"}
    ]})
}

/// gemini-2.5-pro's built-in price (0.625 / 5) for 11 prompt and 7 candidate tokens:
/// ceil(6.875 + 35) = 42.
const COST: i64 = 42;
/// With 5 thinking tokens billed as completion: ceil(6.875 + 60) = 67.
const THINK_COST: i64 = 67;

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
async fn gemini_chat_is_translated_charged_and_logged() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    let ch = gemini_channel(&app, &up.base_url, "AIza-ok", 0).await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["object"], "chat.completion");
    assert_eq!(r.body["model"], "gemini-2.5-pro");
    assert_eq!(r.body["choices"][0]["message"]["content"], CONTENT);
    assert_eq!(r.body["choices"][0]["finish_reason"], "stop");
    assert_eq!(r.body["usage"]["total_tokens"], 18);

    let seen = up.requests();
    assert_eq!(
        seen[0].path,
        "/v1beta/models/gemini-2.5-pro:generateContent"
    );
    assert_eq!(
        MockUpstream::header(&seen[0], "x-goog-api-key"),
        Some("AIza-ok")
    );
    assert_eq!(seen[0].authorization, "");
    assert_eq!(
        seen[0].body,
        json!({"contents": [{"role": "user", "parts": [{"text": "Say hello"}]}],
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "generationConfig": {"maxOutputTokens": 100}})
    );

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    let l = &logs[0];
    assert_eq!(
        (l.quota, l.prompt_tokens, l.completion_tokens, l.channel_id),
        (COST, 11, 7, ch)
    );
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 1_000_000 - COST);
    assert_eq!(
        channels::find(&mut app.conn(), ch).unwrap().used_quota,
        COST
    );
}

#[actix_web::test]
async fn gemini_streams_become_openai_chunks() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url, "AIza-ok", 0).await;
    let mut body = chat();
    body["stream"] = json!(true);
    let text = stream_text(&app, &s.key, &body).await;
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    assert!(!text.contains("\"choices\":[]"), "usage held back: {text}");
    let events = data_events(&text);
    assert_eq!(events[0]["choices"][0]["delta"]["role"], "assistant");
    let content: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, CONTENT_CHUNKS.concat());
    assert_eq!(
        events.last().unwrap()["choices"][0]["finish_reason"],
        "stop"
    );
    assert_eq!(
        up.requests()[0].path,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
    );
    assert_eq!(up.requests()[0].query, "alt=sse");

    body["stream_options"] = json!({"include_usage": true});
    let text = stream_text(&app, &s.key, &body).await;
    let events = data_events(&text);
    assert_eq!(events.last().unwrap()["usage"]["completion_tokens"], 7);

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    assert!(logs.iter().all(
        |l| (l.quota, l.prompt_tokens, l.completion_tokens, l.is_stream) == (COST, 11, 7, true)
    ));
}

#[actix_web::test]
async fn gemini_thinking_tokens_are_billed_as_completion() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url, "sk-mock-think", 0).await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["usage"]["completion_tokens"], 12);
    assert_eq!(
        r.body["usage"]["completion_tokens_details"]["reasoning_tokens"],
        5
    );
    let mut body = chat();
    body["stream"] = json!(true);
    stream_text(&app, &s.key, &body).await;
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    for l in &logs {
        assert_eq!((l.quota, l.completion_tokens), (THINK_COST, 12));
        assert!(
            l.metadata.contains("\"reasoning_tokens\":5"),
            "{}",
            l.metadata
        );
    }
}

#[actix_web::test]
async fn gemini_function_calls_round_trip() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url, "AIza-ok", 0).await;
    let tools = json!([{"type": "function", "function": {"name": "lookup",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "additionalProperties": false}}}]);
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "gemini-2.5-pro", "tools": tools, "messages": [{"role": "user", "content": "Find mock"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["choices"][0]["finish_reason"], "tool_calls");
    let call = r.body["choices"][0]["message"]["tool_calls"][0].clone();
    assert_eq!(call["function"]["name"], "lookup");
    assert_eq!(call["function"]["arguments"], "{\"query\":\"mock\"}");
    let sent = &up.requests()[0].body;
    assert_eq!(
        sent["tools"],
        json!([{"functionDeclarations": [{"name": "lookup", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]}])
    );

    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "gemini-2.5-pro", "tools": tools, "messages": [
                {"role": "user", "content": "Find mock"},
                {"role": "assistant", "content": null, "tool_calls": [call.clone()]},
                {"role": "tool", "tool_call_id": call["id"], "content": "found"}
            ]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["choices"][0]["message"]["content"], CONTENT);
    let sent = &up.requests()[1].body;
    assert_eq!(
        sent["contents"][1],
        json!({"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {"query": "mock"}}}]})
    );
    assert_eq!(
        sent["contents"][2],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"content": "found"}}}]})
    );
}

#[actix_web::test]
async fn gemini_embeddings_and_errors() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    app.root()
        .put(
            "/api/option",
            json!({"key": "RetryCooldownSeconds", "value": 0}),
        )
        .await
        .ok();
    // Alone, a bad key's error reaches the client as a gateway error (the channel's key, not
    // the client's, is wrong).
    let bad = gemini_channel(&app, &up.base_url, "sk-mock-401", 10).await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 502, "{:?}", r.body);
    assert_eq!(r.body["error"]["code"], "INVALID_ARGUMENT");
    assert!(app.consume_logs(s.user_id).await.is_empty());
    for (k, v) in [
        ("AutomaticDisableChannelEnabled", json!(true)),
        ("RetryTimes", json!(1)),
    ] {
        app.root()
            .put("/api/option", json!({"key": k, "value": v}))
            .await
            .ok();
    }
    gemini_channel(&app, &up.base_url, "AIza-ok", 0).await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(channels::find(&mut app.conn(), bad).unwrap().status, 3);

    let r = app
        .relay(
            &s.key,
            "/v1/embeddings",
            json!({"model": "gemini-2.5-pro", "input": ["hello world", "bye"], "dimensions": 4}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["object"], "list");
    assert_eq!(r.body["data"].as_array().unwrap().len(), 2);
    assert_eq!(r.body["data"][0]["embedding"].as_array().unwrap().len(), 4);
    let prompt = r.body["usage"]["prompt_tokens"].as_i64().unwrap();
    assert!(prompt > 0);
    let last = up.requests().last().unwrap().clone();
    assert_eq!(
        last.path,
        "/v1beta/models/gemini-2.5-pro:batchEmbedContents"
    );
    assert_eq!(
        last.body["requests"][1]["content"]["parts"][0]["text"],
        "bye"
    );

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    let emb = logs
        .iter()
        .find(|l| !l.is_stream && l.completion_tokens == 0)
        .unwrap();
    assert_eq!(emb.prompt_tokens, prompt as i32, "billed on the same count");
    assert!(emb.metadata.contains("\"usage_estimated\":true"));
}

#[actix_web::test]
async fn gemini_channels_list_models() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let id = gemini_channel(&app, &up.base_url, "AIza-ok", 0).await;
    let r = app
        .root()
        .get(&format!("/api/channel/fetch_models/{id}"))
        .await;
    assert_eq!(
        r.ok(),
        &json!(["gemini-2.0-flash", "gemini-2.5-pro", "gemini-embedding-001"])
    );
    assert_eq!(up.requests()[0].path, "/v1beta/models");
    assert_eq!(
        MockUpstream::header(&up.requests()[0], "x-goog-api-key"),
        Some("AIza-ok")
    );
}
