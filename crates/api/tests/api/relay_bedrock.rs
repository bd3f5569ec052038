//! AWS Bedrock channels end to end: OpenAI chat requests through Switchboard, sent SigV4-signed
//! to the mock's `/model/{id}/invoke` and `/invoke-with-response-stream` (binary event stream
//! frames), answered in OpenAI's shape and charged.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};

const MODEL_ID: &str = "anthropic.claude-sonnet-4-20250514-v1:0";

async fn bedrock_channel(app: &TestApp, base_url: &str, key: &str) {
    app.root()
        .post(
            "/api/channel",
            json!({"name": "bedrock", "type": 32, "key": key, "base_url": base_url,
                "models": "claude-sonnet-4-0", "group": "default",
                "model_mapping": json!({"claude-sonnet-4-0": MODEL_ID}).to_string()}),
        )
        .await
        .ok();
}

fn chat() -> Value {
    json!({"model": "claude-sonnet-4-0", "max_tokens": 64, "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say hello"}
    ]})
}

/// claude-sonnet-4-0 (1.5 / 7.5), 11 input and 7 output tokens.
const COST: i64 = 69;

#[actix_web::test]
async fn bedrock_chat_is_signed_translated_and_billed() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    bedrock_channel(&app, &up.base_url, "AKIDMOCK|mock-secret|us-west-2").await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["object"], "chat.completion");
    assert_eq!(r.body["choices"][0]["message"]["content"], CONTENT);
    assert_eq!(r.body["usage"]["prompt_tokens"], 11);

    let seen = up.requests();
    assert_eq!(
        seen[0].path,
        "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/invoke"
    );
    let auth = &seen[0].authorization;
    let date = MockUpstream::header(&seen[0], "x-amz-date").unwrap();
    assert_eq!(date.len(), 16, "{date}");
    let prefix = format!(
        "AWS4-HMAC-SHA256 Credential=AKIDMOCK/{}/us-west-2/bedrock/aws4_request, \
         SignedHeaders=content-type;host;x-amz-date, Signature=",
        &date[..8]
    );
    assert!(auth.starts_with(&prefix), "{auth}");
    let signature = &auth[prefix.len()..];
    assert_eq!(signature.len(), 64);
    assert!(signature.bytes().all(|b| b.is_ascii_hexdigit()));
    let body = &seen[0].body;
    assert_eq!(body["anthropic_version"], "bedrock-2023-05-31");
    assert_eq!(body["system"], "Be brief.");
    assert!(body.get("model").is_none() && body.get("stream").is_none());

    // Streamed: event stream frames become OpenAI chunks.
    let mut streamed = chat();
    streamed["stream"] = json!(true);
    streamed["stream_options"] = json!({"include_usage": true});
    let resp = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(&s.key)
        .json(&streamed)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let text = resp.text().await.unwrap();
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let events: Vec<Value> = text
        .split("\n\n")
        .filter_map(|e| e.trim().strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let content: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, CONTENT_CHUNKS.concat());
    assert_eq!(events.last().unwrap()["usage"]["completion_tokens"], 7);
    assert_eq!(
        up.requests()[1].path,
        "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream"
    );

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    assert!(logs
        .iter()
        .all(|l| (l.quota, l.prompt_tokens, l.completion_tokens) == (COST, 11, 7)));
}

#[actix_web::test]
async fn bedrock_errors_and_bad_keys() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    // The mock answers an access key named sk-mock-401 with Bedrock's 403.
    bedrock_channel(&app, &up.base_url, "sk-mock-401|secret|us-east-1").await;
    let r = app.relay(&s.key, "/v1/chat/completions", chat()).await;
    assert_eq!(r.status, 502, "{:?}", r.body);
    assert_eq!(
        r.body["error"]["message"],
        "The security token included in the request is invalid."
    );
    assert!(app.consume_logs(s.user_id).await.is_empty());
}
