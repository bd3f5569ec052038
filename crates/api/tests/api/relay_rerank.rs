//! Rerank through Cohere (type 36) and Jina (type 47) channels: `POST /v1/rerank` to their
//! `/v1/rerank`, answered in one shape, billed per token or per call as the price says.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::MockUpstream;

async fn setup(app: &TestApp, base_url: &str, channel_type: i64, key: &str, model: &str) {
    app.root()
        .post(
            "/api/channel",
            json!({"name": format!("rerank-{key}"), "type": channel_type, "key": key,
                "base_url": base_url, "models": model, "group": "default"}),
        )
        .await
        .ok();
}

async fn price(app: &TestApp, model: &str, kind: &str, channel_type: i64, input: f64) {
    app.root()
        .post(
            "/api/prices",
            json!({"model": model, "type": kind, "channel_type": channel_type, "input": input, "output": 0}),
        )
        .await
        .ok();
}

fn rerank(model: &str) -> Value {
    json!({"model": model, "query": "capital of France",
        "documents": ["Paris is the capital of France.", "Berlin is in Germany.", "Lyon"], "top_n": 2})
}

#[actix_web::test]
async fn jina_rerank_is_billed_per_token() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    price(&app, "jina-reranker-v2", "tokens", 47, 1.0).await;
    setup(&app, &up.base_url, 47, "jina-ok", "jina-reranker-v2").await;
    let r = app
        .relay(&s.key, "/v1/rerank", rerank("jina-reranker-v2"))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let results = r.body["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["index"], 0);
    assert_eq!(
        results[0]["document"]["text"],
        "Paris is the capital of France."
    );
    assert!(results[0]["relevance_score"].as_f64().unwrap() > 0.0);
    assert_eq!(r.body["usage"]["total_tokens"], 10);
    let seen = up.requests();
    assert_eq!(seen[0].path, "/v1/rerank");
    assert_eq!(seen[0].authorization, "Bearer jina-ok");
    assert_eq!(seen[0].body, rerank("jina-reranker-v2"));

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    // The 10 tokens are input, at ratio 1.
    assert_eq!(
        (
            logs[0].quota,
            logs[0].prompt_tokens,
            logs[0].completion_tokens
        ),
        (10, 10, 0)
    );

    // Rerank channels serve nothing else.
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "jina-reranker-v2", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
    assert_eq!(r.status, 404, "{:?}", r.body);
    assert_eq!(r.body["error"]["code"], "model_not_found");
}

#[actix_web::test]
async fn cohere_rerank_takes_the_common_shape_and_is_billed_per_call() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    // 0.002 per call: 1000 * 0.002 = 2 quota.
    price(&app, "rerank-v3.5", "times", 36, 0.002).await;
    setup(&app, &up.base_url, 36, "co-key", "rerank-v3.5").await;
    for _ in 0..2 {
        let r = app.relay(&s.key, "/v1/rerank", rerank("rerank-v3.5")).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(r.body["model"], "rerank-v3.5");
        assert_eq!(r.body["results"].as_array().unwrap().len(), 2);
        assert_eq!(r.body["meta"]["billed_units"]["search_units"], 1);
        assert!(r.body["usage"]["prompt_tokens"].as_i64().unwrap() > 0);
    }
    assert_eq!(up.requests()[0].authorization, "Bearer co-key");
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    for l in &logs {
        assert_eq!((l.quota, l.completion_tokens), (2, 0));
        assert!(l.metadata.contains("\"usage_estimated\":true"));
    }
}

#[actix_web::test]
async fn rerank_upstream_errors_are_relayed() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    price(&app, "jina-reranker-v2", "tokens", 47, 1.0).await;
    setup(&app, &up.base_url, 47, "sk-mock-400", "jina-reranker-v2").await;
    let r = app
        .relay(&s.key, "/v1/rerank", rerank("jina-reranker-v2"))
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert_eq!(r.body["error"]["code"], "context_length_exceeded");
    assert!(app.consume_logs(s.user_id).await.is_empty());
}

#[actix_web::test]
async fn cohere_chat_goes_through_its_compatibility_api() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    price(&app, "command-a-03-2025", "tokens", 36, 1.0).await;
    setup(&app, &up.base_url, 36, "co-key", "command-a-03-2025").await;
    let chat =
        json!({"model": "command-a-03-2025", "messages": [{"role": "user", "content": "hi"}]});
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat.clone())
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        r.body["choices"][0]["message"]["content"],
        switchboard_mock_upstream::CONTENT
    );
    // Streamed, even when the client asks for usage: Cohere refuses stream_options.
    let mut streamed = chat.clone();
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
    let text = resp.text().await.unwrap();
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let seen = up.requests();
    assert_eq!(seen[0].path, "/compatibility/v1/chat/completions");
    assert_eq!(seen[0].authorization, "Bearer co-key");
    assert!(seen[1].body.get("stream_options").is_none());

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    // 11 prompt tokens at ratio 1 (output ratio 0); the stream reported no usage, so its
    // text was counted.
    let whole = logs.iter().find(|l| !l.is_stream).unwrap();
    assert_eq!(
        (whole.quota, whole.prompt_tokens, whole.completion_tokens),
        (11, 11, 7)
    );
    let stream = logs.iter().find(|l| l.is_stream).unwrap();
    assert!(stream.completion_tokens > 0);
    assert!(stream.metadata.contains("\"usage_estimated\":true"));
}
