//! Responses API clients (`POST /v1/responses`, Codex and openai-agents) on channels without a
//! Responses API: bridged onto chat completions and from there onto Gemini's protocol, the
//! answer and the stream in the Responses shape, billed by the channel's own count, and a
//! conversation the gateway keeps continued with `previous_response_id` (the owner's only).

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};
use switchboard_store::users;

async fn respond(app: &TestApp, key: &str, body: &Value) -> (u16, String) {
    let r = reqwest::Client::new()
        .post(app.url("/v1/responses"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

async fn gemini_channel(app: &TestApp, base_url: &str) {
    app.root()
        .post(
            "/api/channel",
            json!({"name": "gemini", "type": 25, "key": "g-ok", "base_url": base_url,
                "models": "gemini-2.5-pro", "group": "default"}),
        )
        .await
        .ok();
}

/// The `data:` payloads of an SSE body, as JSON.
fn events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

#[actix_web::test]
async fn responses_reach_gemini_channels_and_continue_kept_conversations() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url).await;

    let (status, text) = respond(
        &app,
        &s.key,
        &json!({"model": "gemini-2.5-pro", "instructions": "Be brief.", "input": "Say hello",
            "max_output_tokens": 500, "reasoning": {"effort": "low"}}),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let first: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(first["object"], "response", "{first}");
    assert_eq!(first["status"], "completed");
    let id = first["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("resp_"), "{id}");
    let message = first["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["type"] == "message")
        .unwrap();
    assert_eq!(message["content"][0]["text"], CONTENT);
    assert_eq!(first["usage"]["input_tokens"], 11);

    // Streamed, continuing the kept conversation.
    let (status, text) = respond(
        &app,
        &s.key,
        &json!({"model": "gemini-2.5-pro", "input": "Again", "stream": true,
            "previous_response_id": id}),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let ev = events(&text);
    let kinds: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds[..2], ["response.created", "response.in_progress"]);
    assert_eq!(kinds.last(), Some(&"response.completed"));
    let deltas: Vec<&str> = ev
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, CONTENT_CHUNKS);

    let seen = up.requests();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[0]
            .path
            .ends_with("/models/gemini-2.5-pro:generateContent"),
        "{}",
        seen[0].path
    );
    assert_eq!(
        seen[0].body["systemInstruction"]["parts"][0]["text"],
        "Be brief."
    );
    assert_eq!(
        seen[0].body["generationConfig"]["thinkingConfig"]["thinkingBudget"], 1024,
        "reasoning.effort low: Gemini's own setting"
    );
    // The second call carries the first exchange before the new input.
    let turns: Vec<(&str, &str)> = seen[1].body["contents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["role"].as_str().unwrap(),
                c["parts"][0]["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        turns,
        [("user", "Say hello"), ("model", CONTENT), ("user", "Again")]
    );

    // Another user cannot continue it.
    let other = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let (status, text) = respond(
        &app,
        &other.key,
        &json!({"model": "gemini-2.5-pro", "input": "x", "previous_response_id": id}),
    )
    .await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("not found"), "{text}");
    assert_eq!(up.requests().len(), 2, "refused before any upstream call");

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    for l in &logs {
        assert_eq!(l.model_name, "gemini-2.5-pro");
        assert!(
            l.prompt_tokens > 0 && l.completion_tokens > 0 && l.quota > 0,
            "{l:?}"
        );
    }
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(
        u.quota,
        1_000_000 - logs.iter().map(|l| l.quota).sum::<i64>()
    );
}

/// Bad Responses input is the gateway's 400 in OpenAI's error shape, nothing charged.
#[actix_web::test]
async fn bad_responses_input_is_refused() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url).await;
    for body in [
        json!({"model": "gemini-2.5-pro", "input": 42}),
        json!({"model": "gemini-2.5-pro", "input": [{"type": "no_such_item"}]}),
        json!({"model": "gemini-2.5-pro", "input": [{"type": "function_call_output", "output": "x"}]}),
        json!({"model": "gemini-2.5-pro", "input": "x", "tools": [{"type": "file_search"}]}),
        json!({"model": "gemini-2.5-pro", "input": "x", "previous_response_id": "resp_unknown"}),
    ] {
        let (status, text) = respond(&app, &s.key, &body).await;
        assert_eq!(status, 400, "{body}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["type"], "invalid_request_error", "{body}: {v}");
        assert!(!v["error"]["message"].as_str().unwrap().is_empty());
    }
    assert!(up.requests().is_empty());
    assert!(app.consume_logs(s.user_id).await.is_empty());
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 1_000_000);
}
