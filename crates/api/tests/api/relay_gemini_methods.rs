//! Gemini clients' other methods: `:countTokens` (forwarded to Gemini channels free of charge,
//! else counted by the tokenizer), `:embedContent` and `:batchEmbedContents` (relayed as
//! embeddings to OpenAI-protocol and Gemini channels, billed as embeddings), in Google's
//! shapes.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, COUNTED_TOKENS};

async fn gemini_channel(app: &TestApp, base_url: &str, models: &str, mapping: Value) {
    app.root()
        .post(
            "/api/channel",
            json!({"name": "gemini", "type": 25, "key": "AIza-ok", "base_url": base_url,
                "models": models, "group": "default", "model_mapping": mapping.to_string()}),
        )
        .await
        .ok();
}

/// POST with `x-goog-api-key`; (status, body).
async fn post(app: &TestApp, path: &str, key: Option<&str>, body: &Value) -> (u16, Value) {
    let mut rb = reqwest::Client::new().post(app.url(path)).json(body);
    if let Some(k) = key {
        rb = rb.header("x-goog-api-key", k);
    }
    let r = rb.send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn contents() -> Value {
    json!([{"role": "user", "parts": [{"text": "Say hello"}]}])
}

async fn quota(s: &crate::common::RelaySetup) -> i64 {
    s.user.get("/api/user/self").await.ok()["quota"]
        .as_i64()
        .unwrap()
}

#[actix_web::test]
async fn count_tokens_is_forwarded_to_gemini_channels_or_counted() {
    let app = TestApp::new().await;
    // A key with no quota of its own: counting needs none.
    let s = app.relay_setup(1_000_000, json!({})).await;
    let up = MockUpstream::start();
    gemini_channel(
        &app,
        &up.base_url,
        "gemini-2.5-pro",
        json!({"gemini-2.5-pro": "gemini-2.5-pro-002"}),
    )
    .await;
    let before = quota(&s).await;
    let path = "/gemini/v1beta/models/gemini-2.5-pro:countTokens";
    let wrapped = json!({"generateContentRequest": {"model": "models/gemini-2.5-pro", "contents": contents()}});
    for body in [json!({ "contents": contents() }), wrapped] {
        let (status, v) = post(&app, path, Some(&s.key), &body).await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v, json!({ "totalTokens": COUNTED_TOKENS }));
    }
    let seen = up.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[0].path,
        "/v1beta/models/gemini-2.5-pro-002:countTokens"
    );
    assert_eq!(
        MockUpstream::header(&seen[0], "x-goog-api-key"),
        Some("AIza-ok")
    );
    assert_eq!(seen[0].body, json!({ "contents": contents() }));
    assert_eq!(
        seen[1].body["generateContentRequest"]["model"], "models/gemini-2.5-pro-002",
        "the wrapped request names the upstream's model"
    );

    // gpt-4o-mini is served by an OpenAI channel: the tokenizer counts (`?key=` works too).
    let (status, v) = post(
        &app,
        &format!(
            "/gemini/v1beta/models/gpt-4o-mini:countTokens?key={}",
            s.key
        ),
        None,
        &json!({ "contents": contents() }),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let n = v["totalTokens"].as_i64().unwrap();
    assert!(n > 0 && n < 100, "a count of `Say hello`: {n}");
    assert_eq!(up.requests().len(), 2, "not sent upstream");

    // Counting is free.
    assert!(app.consume_logs(s.user_id).await.is_empty());
    assert_eq!(quota(&s).await, before);

    // Refusals in Google's shape.
    for (key, body, want, status_name) in [
        (
            None,
            json!({ "contents": contents() }),
            401,
            "UNAUTHENTICATED",
        ),
        (Some(s.key.as_str()), json!({}), 400, "INVALID_ARGUMENT"),
        (
            Some(s.key.as_str()),
            json!({"contents": "hi"}),
            400,
            "INVALID_ARGUMENT",
        ),
        (
            Some(s.key.as_str()),
            json!({"generateContentRequest": 5}),
            400,
            "INVALID_ARGUMENT",
        ),
        (Some(s.key.as_str()), json!([1]), 400, "INVALID_ARGUMENT"),
    ] {
        let (status, v) = post(&app, path, key, &body).await;
        assert_eq!(status, want, "{body}: {v}");
        assert_eq!(v["error"]["status"], status_name, "{body}");
    }
    let (status, v) = post(
        &app,
        "/gemini/v1beta/models/no-such-model:countTokens",
        Some(&s.key),
        &json!({ "contents": contents() }),
    )
    .await;
    assert_eq!(
        (status, v["error"]["status"].as_str()),
        (404, Some("NOT_FOUND"))
    );
}

#[actix_web::test]
async fn embed_content_on_openai_and_gemini_channels() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    gemini_channel(&app, &up.base_url, "gemini-2.5-pro", json!({})).await;
    let before = quota(&s).await;
    let one = json!({"content": {"parts": [{"text": "hello"}, {"text": "world"}]},
        "taskType": "RETRIEVAL_QUERY", "outputDimensionality": 4});
    let batch = json!({"requests": [
        {"model": "models/x", "content": {"parts": [{"text": "a"}]}},
        {"model": "models/x", "content": {"parts": [{"text": "b"}]}}
    ]});

    // An OpenAI channel (relay_setup's): /v1/embeddings.
    let (status, v) = post(
        &app,
        "/gemini/v1beta/models/text-embedding-3-small:embedContent",
        Some(&s.key),
        &one,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["embedding"]["values"].as_array().unwrap().len(), 4, "{v}");
    assert_eq!(v.as_object().unwrap().len(), 1, "{v}");
    let sent = s.upstream.requests().last().unwrap().clone();
    assert_eq!(sent.path, "/v1/embeddings");
    assert_eq!(
        sent.body,
        json!({"model": "text-embedding-3-small", "input": "hello\nworld", "dimensions": 4})
    );
    let (status, v) = post(
        &app,
        "/gemini/v1beta/models/text-embedding-3-small:batchEmbedContents",
        Some(&s.key),
        &batch,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let list = v["embeddings"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert!(list.iter().all(|e| e["values"].is_array()));
    assert_eq!(
        s.upstream.requests().last().unwrap().body["input"],
        json!(["a", "b"])
    );

    // A Gemini channel: batchEmbedContents upstream.
    for (method, body) in [("embedContent", &one), ("batchEmbedContents", &batch)] {
        let (status, v) = post(
            &app,
            &format!("/gemini/v1beta/models/gemini-2.5-pro:{method}"),
            Some(&s.key),
            body,
        )
        .await;
        assert_eq!(status, 200, "{method}: {v}");
        assert!(v.get("embedding").or(v.get("embeddings")).is_some(), "{v}");
    }
    let seen = up.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[0].path,
        "/v1beta/models/gemini-2.5-pro:batchEmbedContents"
    );
    assert_eq!(
        seen[0].body,
        json!({"requests": [{"model": "models/gemini-2.5-pro", "outputDimensionality": 4,
            "content": {"parts": [{"text": "hello\nworld"}]}}]})
    );
    assert_eq!(seen[1].body["requests"].as_array().unwrap().len(), 2);

    // Billed as embeddings: a log each, the prompt only.
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 4);
    assert!(logs
        .iter()
        .all(|l| l.quota > 0 && l.prompt_tokens > 0 && l.completion_tokens == 0));
    let spent: i64 = logs.iter().map(|l| l.quota).sum();
    assert_eq!(quota(&s).await, before - spent);

    // Bad input: refused in Google's shape, nothing sent or billed.
    let sent_before = s.upstream.requests().len();
    for (method, body) in [
        ("embedContent", json!({})),
        ("embedContent", json!({"content": "hello"})),
        ("embedContent", json!({"content": {"parts": [{"text": 5}]}})),
        ("embedContent", json!({"content": {"parts": []}})),
        (
            "embedContent",
            json!({"content": {"parts": [{"text": "a"}]}, "outputDimensionality": "4"}),
        ),
        ("batchEmbedContents", json!({"requests": {}})),
        ("batchEmbedContents", json!({"requests": [{"content": {}}]})),
    ] {
        let (status, v) = post(
            &app,
            &format!("/gemini/v1beta/models/text-embedding-3-small:{method}"),
            Some(&s.key),
            &body,
        )
        .await;
        assert_eq!(status, 400, "{body}: {v}");
        assert_eq!(v["error"]["status"], "INVALID_ARGUMENT", "{body}");
    }
    assert_eq!(s.upstream.requests().len(), sent_before);
    assert_eq!(app.consume_logs(s.user_id).await.len(), 4);
}
