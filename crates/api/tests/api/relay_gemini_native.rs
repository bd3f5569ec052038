//! Gemini clients end to end: `POST /gemini/{version}/models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse` with `x-goog-api-key` or `?key=`, served natively by Gemini
//! channels (bodies and streams passed through, the model mapped in the path), usage read from
//! `usageMetadata`, errors in Google's shape; and the settings that switch the inbound
//! protocols off.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};

async fn gemini_channel(app: &TestApp, base_url: &str, key: &str, models: &str, mapping: Value) {
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": format!("gemini-{key}"), "type": 25, "key": key, "base_url": base_url,
                "models": models, "group": "default", "model_mapping": mapping.to_string()}),
        )
        .await;
    r.ok();
}

fn generate() -> Value {
    json!({
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [{"role": "user", "parts": [{"text": "Say hello"}]}],
        "generationConfig": {"maxOutputTokens": 64}
    })
}

/// POST with `x-goog-api-key`; (status, body text, content type).
async fn post(app: &TestApp, path: &str, key: Option<&str>, body: &Value) -> (u16, String, String) {
    let mut rb = reqwest::Client::new().post(app.url(path)).json(body);
    if let Some(k) = key {
        rb = rb.header("x-goog-api-key", k);
    }
    let r = rb.send().await.unwrap();
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, r.text().await.unwrap(), ct)
}

async fn set_option(app: &TestApp, key: &str, value: Value) {
    app.root()
        .put("/api/option", json!({"key": key, "value": value}))
        .await
        .ok();
}

/// gemini-2.5-pro (0.625 / 5) for 11 prompt and 7 candidate tokens.
const COST: i64 = 42;

#[actix_web::test]
async fn generate_content_is_passed_through_and_billed() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    // The client's gemini-2.5-pro goes upstream as gemini-2.5-pro-002.
    gemini_channel(
        &app,
        &up.base_url,
        "AIza-ok",
        "gemini-2.5-pro",
        json!({"gemini-2.5-pro": "gemini-2.5-pro-002"}),
    )
    .await;
    for version in ["v1beta", "v1"] {
        let path = format!("/gemini/{version}/models/gemini-2.5-pro:generateContent");
        let (status, text, ct) = post(&app, &path, Some(&s.key), &generate()).await;
        assert_eq!(status, 200, "{text}");
        assert!(ct.starts_with("application/json"), "{ct}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["candidates"][0]["content"]["parts"][0]["text"], CONTENT);
        assert_eq!(v["usageMetadata"]["promptTokenCount"], 11);
        assert_eq!(
            v["modelVersion"], "gemini-2.5-pro-002",
            "Gemini's own shape"
        );
    }
    let seen = up.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[0].path,
        "/v1beta/models/gemini-2.5-pro-002:generateContent"
    );
    assert_eq!(
        MockUpstream::header(&seen[0], "x-goog-api-key"),
        Some("AIza-ok")
    );
    assert_eq!(seen[0].body, generate(), "the body is passed through");

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    for l in &logs {
        assert_eq!(
            (
                l.quota,
                l.prompt_tokens,
                l.completion_tokens,
                l.model_name.as_str()
            ),
            (COST, 11, 7, "gemini-2.5-pro")
        );
    }
}

#[actix_web::test]
async fn stream_generate_content_with_query_key() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(
        &app,
        &up.base_url,
        "sk-mock-think",
        "gemini-2.5-pro",
        json!({}),
    )
    .await;
    let path = format!(
        "/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key={}",
        s.key
    );
    let (status, text, ct) = post(&app, &path, None, &generate()).await;
    assert_eq!(status, 200, "{text}");
    assert!(ct.starts_with("text/event-stream"), "{ct}");
    assert!(
        !text.contains("chat.completion.chunk"),
        "nothing translated"
    );
    assert!(!text.contains("[DONE]"));
    let events: Vec<Value> = text
        .split("\r\n\r\n")
        .filter_map(|e| e.trim().strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let streamed: String = events
        .iter()
        .filter_map(|e| e["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(streamed, CONTENT_CHUNKS.concat());
    let seen = up.requests();
    assert_eq!(
        seen[0].path,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
    );
    assert_eq!(seen[0].query, "alt=sse", "the client's key stays here");

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    let l = &logs[0];
    // 5 thinking tokens billed as completion: ceil(11 * 0.625 + 12 * 5) = 67.
    assert_eq!(
        (l.quota, l.prompt_tokens, l.completion_tokens, l.is_stream),
        (67, 11, 12, true)
    );
}

#[actix_web::test]
async fn stream_generate_content_without_alt_sse_is_a_json_array() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url, "AIza-ok", "gemini-2.5-pro", json!({})).await;
    let path = "/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent";
    let (status, text, ct) = post(&app, path, Some(&s.key), &generate()).await;
    assert_eq!(status, 200, "{text}");
    assert!(ct.starts_with("application/json"), "{ct}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let parts: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(parts, CONTENT_CHUNKS);
    assert_eq!(
        up.requests()[0].query,
        "alt=sse",
        "upstream streams are SSE"
    );
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!((logs[0].quota, logs[0].is_stream), (COST, true));
}

#[actix_web::test]
async fn gemini_errors_come_in_google_shape() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    let path = "/gemini/v1beta/models/gemini-2.5-pro:generateContent";
    let (status, text, _) = post(&app, path, Some("sk-nope"), &generate()).await;
    assert_eq!(status, 401);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], 401);
    assert_eq!(v["error"]["status"], "UNAUTHENTICATED");
    assert!(v["error"]["message"].is_string());

    // No channel serves the model (an OpenAI channel's gpt-4o-mini would, through the chat
    // bridge).
    let (status, text, _) = post(
        &app,
        "/gemini/v1beta/models/no-such-model:generateContent",
        Some(&s.key),
        &generate(),
    )
    .await;
    assert_eq!(status, 404, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["status"], "NOT_FOUND");

    // Unknown methods and paths.
    for bad in [
        "/gemini/v1beta/models/gemini-2.5-pro:predict",
        "/gemini/v1beta/other",
    ] {
        let (status, text, _) = post(&app, bad, Some(&s.key), &generate()).await;
        assert_eq!(status, 404, "{bad}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["status"], "NOT_FOUND", "{bad}");
    }

    // Not JSON.
    let r = reqwest::Client::new()
        .post(app.url(path))
        .header("x-goog-api-key", &s.key)
        .body("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["status"], "INVALID_ARGUMENT");

    // The upstream's own error keeps its status.
    gemini_channel(
        &app,
        &up.base_url,
        "sk-mock-400",
        "gemini-2.5-pro",
        json!({}),
    )
    .await;
    let (status, text, _) = post(&app, path, Some(&s.key), &generate()).await;
    assert_eq!(status, 400, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v,
        json!({"error": {"code": 400, "message": "The input token count exceeds the maximum number of tokens allowed.", "status": "INVALID_ARGUMENT"}})
    );
    assert!(app.consume_logs(s.user_id).await.is_empty());
}

#[actix_web::test]
async fn gemini_model_list_shows_gemini_served_models() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(
        &app,
        &up.base_url,
        "AIza-ok",
        "gemini-2.5-pro,gemini-2.0-flash",
        json!({}),
    )
    .await;
    let r = reqwest::Client::new()
        .get(app.url("/gemini/v1beta/models"))
        .header("x-goog-api-key", &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    let names: Vec<&str> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "models/gemini-2.0-flash",
            "models/gemini-2.5-pro",
            "models/gpt-4o-mini",
            "models/text-embedding-3-small"
        ],
        "Gemini channels' models, and the OpenAI channel's through the chat bridge"
    );
    let methods = |name: &str| {
        v["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap()["supportedGenerationMethods"]
            .clone()
    };
    assert_eq!(
        methods("models/gpt-4o-mini"),
        json!(["generateContent", "streamGenerateContent", "countTokens"])
    );
    assert_eq!(
        methods("models/text-embedding-3-small"),
        json!(["embedContent", "batchEmbedContents", "countTokens"])
    );
    let r = reqwest::Client::new()
        .get(app.url(&format!(
            "/gemini/v1beta/models/gemini-2.5-pro?key={}",
            s.key
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["name"], "models/gemini-2.5-pro");
    assert_eq!(
        v["supportedGenerationMethods"],
        json!(["generateContent", "streamGenerateContent", "countTokens"])
    );
}

#[actix_web::test]
async fn inbound_protocols_can_be_switched_off() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url, "AIza-ok", "gemini-2.5-pro", json!({})).await;
    app.root()
        .post(
            "/api/channel",
            json!({"name": "claude", "type": 14, "key": "sk-ant", "base_url": up.base_url,
                "models": "claude-sonnet-4-0", "group": "default"}),
        )
        .await
        .ok();
    let gemini_path = "/gemini/v1beta/models/gemini-2.5-pro:generateContent";
    let message = json!({"model": "claude-sonnet-4-0", "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}]});
    let claude = |path: &'static str| {
        let key = s.key.clone();
        let body = message.clone();
        let url = app.url(path);
        async move {
            let r = reqwest::Client::new()
                .post(url)
                .header("x-api-key", key)
                .json(&body)
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    assert_eq!(
        post(&app, gemini_path, Some(&s.key), &generate()).await.0,
        200
    );
    assert_eq!(claude("/v1/messages").await.0, 200);

    set_option(&app, "GeminiAPIEnabled", json!(false)).await;
    set_option(&app, "ClaudeAPIEnabled", json!(false)).await;
    let (status, text, _) = post(&app, gemini_path, Some(&s.key), &generate()).await;
    assert_eq!(status, 404, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["status"], "NOT_FOUND");
    for path in ["/v1/messages", "/claude/v1/messages"] {
        let (status, v) = claude(path).await;
        assert_eq!(status, 404, "{path}: {v}");
        assert_eq!(v["type"], "error");
        assert_eq!(v["error"]["type"], "not_found_error");
    }
    // OpenAI clients are not affected.
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "gemini-2.5-pro", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);

    set_option(&app, "GeminiAPIEnabled", json!(true)).await;
    assert_eq!(
        post(&app, gemini_path, Some(&s.key), &generate()).await.0,
        200
    );
    assert_eq!(
        up.requests().len(),
        4,
        "nothing reached the upstream while off"
    );
}
