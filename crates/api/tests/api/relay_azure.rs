//! Azure OpenAI channels end to end: OpenAI requests through Switchboard to the mock upstream's
//! deployment paths (`api-key`, `api-version`), answered, logged and charged.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};
use switchboard_store::{channels, users};

async fn azure_channel(
    app: &TestApp,
    base_url: &str,
    key: &str,
    models: &str,
    config: Value,
    priority: i64,
) -> i64 {
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": format!("azure-{key}"), "type": 3, "key": key, "base_url": base_url,
                "models": models, "group": "default", "priority": priority, "config": config}),
        )
        .await;
    r.ok()["ids"][0].as_i64().unwrap()
}

fn chat(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "Say hello"}]})
}

/// gpt-3.5-turbo's built-in price (0.25 / 0.75) for 11 prompt and 7 completion tokens:
/// ceil(2.75 + 5.25) = 8.
const TURBO_COST: i64 = 8;
/// gpt-4o (1.25 / 5): ceil(13.75 + 35) = 49.
const GPT4O_COST: i64 = 49;

#[actix_web::test]
async fn azure_chat_embeddings_and_images_reach_their_deployments() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let azure = MockUpstream::start();
    let ch = azure_channel(
        &app,
        &azure.base_url,
        "az-key-1",
        "gpt-3.5-turbo,text-embedding-3-large,dall-e-3",
        json!({"api_version": "2025-01-01-preview"}),
        0,
    )
    .await;

    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-3.5-turbo"))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["choices"][0]["message"]["content"], CONTENT);
    let seen = azure.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].path, "/openai/deployments/gpt-35-turbo/chat/completions",
        "dots are removed from the deployment name"
    );
    assert_eq!(seen[0].query, "api-version=2025-01-01-preview");
    assert_eq!(MockUpstream::header(&seen[0], "api-key"), Some("az-key-1"));
    assert_eq!(seen[0].authorization, "", "no Authorization header");
    assert_eq!(seen[0].body["messages"][0]["content"], "Say hello");

    let r = app
        .relay(
            &s.key,
            "/v1/embeddings",
            json!({"model": "text-embedding-3-large", "input": ["a", "b"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 2);
    let r = app
        .relay(
            &s.key,
            "/v1/images/generations",
            json!({"model": "dall-e-3", "prompt": "a cat"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let paths: Vec<String> = azure.requests().iter().map(|q| q.path.clone()).collect();
    assert_eq!(
        paths[1..],
        [
            "/openai/deployments/text-embedding-3-large/embeddings",
            "/openai/deployments/dall-e-3/images/generations"
        ]
    );

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 3);
    let by_model = |m: &str| logs.iter().find(|l| l.model_name == m).unwrap();
    let l = by_model("gpt-3.5-turbo");
    assert_eq!(
        (l.quota, l.prompt_tokens, l.completion_tokens, l.channel_id),
        (TURBO_COST, 11, 7, ch)
    );
    assert_eq!(by_model("text-embedding-3-large").prompt_tokens, 6);
    assert_eq!(by_model("dall-e-3").quota, 20_000);
    let total: i64 = logs.iter().map(|l| l.quota).sum();
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 10_000_000 - total);
    assert_eq!(
        channels::find(&mut app.conn(), ch).unwrap().used_quota,
        total
    );
}

#[actix_web::test]
async fn azure_streams_carry_forced_usage_and_default_api_version() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let azure = MockUpstream::start();
    azure_channel(&app, &azure.base_url, "az-key", "gpt-4o", json!({}), 0).await;
    let mut body = chat("gpt-4o");
    body["stream"] = json!(true);
    let text = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(&s.key)
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for piece in CONTENT_CHUNKS {
        assert!(text.contains(&format!("\"content\":\"{piece}\"")), "{text}");
    }
    assert!(text.trim_end().ends_with("data: [DONE]"));
    assert!(
        !text.contains("\"choices\":[]"),
        "usage chunk held back: {text}"
    );
    let seen = &azure.requests()[0];
    assert_eq!(seen.query, "api-version=2024-10-21");
    assert_eq!(seen.body["stream_options"]["include_usage"], true);
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(
        (
            logs[0].quota,
            logs[0].prompt_tokens,
            logs[0].completion_tokens,
            logs[0].is_stream
        ),
        (GPT4O_COST, 11, 7, true)
    );
}

#[actix_web::test]
async fn azure_bad_key_fails_over_and_disables() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "AutomaticDisableChannelEnabled", "value": true}),
        )
        .await
        .ok();
    app.root()
        .put("/api/option", json!({"key": "RetryTimes", "value": 1}))
        .await
        .ok();
    let azure = MockUpstream::start();
    let bad = azure_channel(
        &app,
        &azure.base_url,
        "sk-mock-401",
        "gpt-4o",
        json!({}),
        10,
    )
    .await;
    let good = azure_channel(&app, &azure.base_url, "az-ok", "gpt-4o", json!({}), 0).await;
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4o"))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(channels::find(&mut app.conn(), bad).unwrap().status, 3);
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].channel_id, good);
}

#[actix_web::test]
async fn azure_channels_list_models() {
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let id = azure_channel(&app, &up.base_url, "az-key", "gpt-4o", json!({}), 0).await;
    let r = app
        .root()
        .get(&format!("/api/channel/fetch_models/{id}"))
        .await;
    assert!(r.ok().as_array().unwrap().contains(&json!("gpt-4o")));
    let seen = &up.requests()[0];
    assert_eq!(
        (seen.path.as_str(), seen.query.as_str()),
        ("/openai/models", "api-version=2024-10-21")
    );
}
