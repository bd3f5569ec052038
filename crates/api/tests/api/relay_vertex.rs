//! Vertex AI channels end to end: a service-account key exchanged for an OAuth token at the
//! mock's token endpoint (once, then cached), Gemini and Anthropic models on Vertex URLs,
//! answers and streams in OpenAI's shape, charged.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};

const KEY: &str = include_str!("../../../relay/tests/fixtures/vertex/service_account.json");

async fn vertex_channel(app: &TestApp, base_url: &str, email: &str) {
    let mut key: Value = serde_json::from_str(KEY).unwrap();
    key["token_uri"] = json!(format!("{base_url}/token"));
    // Each test its own service account, so tokens cached by other tests do not count.
    key["client_email"] = json!(email);
    app.root()
        .post(
            "/api/channel",
            json!({"name": "vertex", "type": 42, "key": key.to_string(), "base_url": base_url,
                "models": "gemini-2.5-pro,claude-sonnet-4-0", "group": "default",
                "config": json!({"region": "europe-west4"}).to_string(),
                "model_mapping": json!({"claude-sonnet-4-0": "claude-sonnet-4@20250514"}).to_string()}),
        )
        .await
        .ok();
}

fn chat(model: &str) -> Value {
    json!({"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": "Say hello"}]})
}

async fn stream_events(app: &TestApp, key: &str, model: &str) -> Vec<Value> {
    let mut body = chat(model);
    body["stream"] = json!(true);
    body["stream_options"] = json!({"include_usage": true});
    let text = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    text.split("\n\n")
        .filter_map(|e| e.trim().strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[actix_web::test]
async fn vertex_gemini_and_claude_with_a_cached_token() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    vertex_channel(
        &app,
        &up.base_url,
        "gemini-and-claude@switchboard-test.iam.gserviceaccount.com",
    )
    .await;

    for model in ["gemini-2.5-pro", "claude-sonnet-4-0"] {
        let r = app.relay(&s.key, "/v1/chat/completions", chat(model)).await;
        assert_eq!(r.status, 200, "{model}: {:?}", r.body);
        assert_eq!(r.body["choices"][0]["message"]["content"], CONTENT);
        assert_eq!(r.body["usage"]["prompt_tokens"], 11);
        let events = stream_events(&app, &s.key, model).await;
        let content: String = events
            .iter()
            .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(content, CONTENT_CHUNKS.concat(), "{model}");
        assert_eq!(events.last().unwrap()["usage"]["completion_tokens"], 7);
    }

    let seen = up.requests();
    let paths: Vec<&str> = seen.iter().map(|r| r.path.as_str()).collect();
    let base = "/v1/projects/switchboard-test/locations/europe-west4/publishers";
    assert_eq!(
        paths,
        [
            "/token".to_owned(),
            format!("{base}/google/models/gemini-2.5-pro:generateContent"),
            format!("{base}/google/models/gemini-2.5-pro:streamGenerateContent"),
            format!("{base}/anthropic/models/claude-sonnet-4@20250514:rawPredict"),
            format!("{base}/anthropic/models/claude-sonnet-4@20250514:streamRawPredict"),
        ],
        "one token exchange for four requests"
    );
    let token = &seen[0];
    assert!(token.body.is_null(), "a form, not JSON");
    assert_eq!(
        MockUpstream::header(token, "content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert!(seen[1..]
        .iter()
        .all(|r| r.authorization.starts_with("Bearer ya29.mock-")));
    assert_eq!(seen[2].query, "alt=sse");
    assert_eq!(seen[3].body["anthropic_version"], "vertex-2023-10-16");
    assert!(seen[3].body.get("model").is_none());
    assert_eq!(seen[4].body["stream"], true);

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 4);
    let mut quotas: Vec<i64> = logs.iter().map(|l| l.quota).collect();
    quotas.sort_unstable();
    // gemini-2.5-pro 42, claude-sonnet-4-0 69.
    assert_eq!(quotas, [42, 42, 69, 69]);
}

#[actix_web::test]
async fn vertex_token_refusals_fail_the_channel() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    let mut key: Value = serde_json::from_str(KEY).unwrap();
    // The mock's token endpoint answers 404 for another path: the exchange fails.
    key["token_uri"] = json!(format!("{}/no-token-here", up.base_url));
    key["client_email"] = json!("refused@switchboard-test.iam.gserviceaccount.com");
    app.root()
        .post(
            "/api/channel",
            json!({"name": "vertex-bad", "type": 42, "key": key.to_string(), "base_url": up.base_url,
                "models": "gemini-2.5-pro", "group": "default"}),
        )
        .await
        .ok();
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gemini-2.5-pro"))
        .await;
    assert_eq!(r.status, 502, "{:?}", r.body);
    assert_eq!(r.body["error"]["code"], "vertex_token_error");
    assert!(app.consume_logs(s.user_id).await.is_empty());
}

/// The channel test gets the OAuth token itself (no relay request needs to come first).
#[actix_web::test]
async fn a_fresh_vertex_channel_passes_its_test() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    vertex_channel(
        &app,
        &up.base_url,
        "fresh-test@switchboard-test.iam.gserviceaccount.com",
    )
    .await;
    let list = app.root().get("/api/channel?keyword=vertex").await;
    let id = list.ok()["data"][0]["id"].as_i64().unwrap();
    let r = app
        .root()
        .get(&format!("/api/channel/test/{id}?model=gemini-2.5-pro"))
        .await;
    assert!(r.ok()["time_ms"].as_i64().is_some(), "{:?}", r.body);
    assert_eq!(up.count("/token"), 1);
}
