//! Against a real HTTP upstream (wiremock on 127.0.0.1): requests built by the relay go out
//! through reqwest, the mock checks what it received, and streamed answers come back through
//! the tap byte for byte.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use switchboard_relay::{
    classify_transport, ChannelTarget, ClientPool, Endpoint, Provider, RelayRequest, Usage,
};
use wiremock::matchers::{body_partial_json, header, method, path, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/openai")
            .join(name),
    )
    .unwrap()
}

fn target(base_url: String) -> ChannelTarget {
    ChannelTarget {
        id: 3,
        channel_type: 1,
        base_url,
        key: "sk-upstream-key".into(),
        custom_headers: vec![("OpenAI-Organization".into(), "org-test".into())],
        proxy: None,
        model_mapping: HashMap::from([(
            "gpt-4o-mini".to_owned(),
            "gpt-4o-mini-2024-07-18".to_owned(),
        )]),
        timeout: Duration::from_secs(10),
        config: Default::default(),
        disabled_stream: Vec::new(),
        urls: Default::default(),
    }
}

#[tokio::test]
async fn streamed_chat_goes_out_mapped_and_comes_back_through_the_tap() {
    let server = MockServer::start().await;
    let sse = fixture("chat_stream_include_usage.sse");
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-upstream-key"))
        .and(header("openai-organization", "org-test"))
        .and(header("content-type", "application/json"))
        .and(body_partial_json(json!({
            "model": "gpt-4o-mini-2024-07-18",
            "stream": true,
            "stream_options": {"include_usage": true}
        })))
        .respond_with(ResponseTemplate::new(200).set_body_raw(sse.clone(), "text/event-stream"))
        .expect(1)
        .mount(&server)
        .await;

    let client_body = json!({
        "model": "gpt-4o-mini",
        "stream": true,
        "messages": [{"role": "user", "content": "Say hello in three languages"}],
        "temperature": 0.2,
        "x_vendor_extension": {"keep": true}
    });
    let raw = serde_json::to_vec(&client_body).unwrap();
    let req = RelayRequest::parse(Endpoint::ChatCompletions, &raw).unwrap();
    let t = target(server.uri());
    let pool = ClientPool::new();
    let client = pool.get(t.proxy.as_deref()).unwrap();
    let provider = Provider::for_channel_type(t.channel_type).unwrap();

    let resp = provider
        .build(&client, &t, &req, Some(&raw), None)
        .unwrap()
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    let mut tap = provider.stream_tap();
    let mut forwarded = Vec::new();
    let mut chunks = resp.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.unwrap();
        tap.feed(&chunk);
        forwarded.extend_from_slice(&chunk); // what the api crate sends to the client
    }
    assert_eq!(forwarded, sse, "the stream passes through unchanged");
    let out = tap.finish(t.upstream_model(&req.model));
    assert!(out.saw_done);
    assert_eq!(
        out.usage,
        Some(Usage {
            prompt_tokens: 19,
            completion_tokens: 14,
            ..Usage::default()
        })
    );

    // Everything else the client sent reached the upstream untouched.
    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 1);
    let sent: Value = serde_json::from_slice(&received[0].body).unwrap();
    let mut expected = client_body.clone();
    expected["model"] = json!("gpt-4o-mini-2024-07-18");
    expected["stream_options"] = json!({"include_usage": true});
    assert_eq!(sent, expected);
    assert_eq!(received[0].url.path(), "/v1/chat/completions");
}

#[tokio::test]
async fn json_answers_errors_models_and_balance() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(fixture("embeddings.json"), "application/json"),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/moderations"))
        .respond_with(
            ResponseTemplate::new(401).set_body_raw(fixture("error_401.json"), "application/json"),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .and(header("authorization", "Bearer sk-upstream-key"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "list",
            "data": [
                {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
                {"id": "text-embedding-3-small", "object": "model", "created": 1705948997, "owned_by": "system"}
            ]
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/dashboard/billing/subscription"))
        .and(query_param_is_missing("start_date"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "object": "billing_subscription", "has_payment_method": true, "hard_limit_usd": 100.0
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/dashboard/billing/usage"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"object": "list", "total_usage": 2550.0})),
        )
        .mount(&server)
        .await;

    let t = target(server.uri());
    let client = ClientPool::new().get(None).unwrap();
    let provider = Provider::for_channel_type(1).unwrap();

    let raw =
        br#"{"model":"text-embedding-3-small","input":"The food was delicious and the waiter..."}"#;
    let req = RelayRequest::parse(Endpoint::Embeddings, raw).unwrap();
    let resp = provider
        .build(&client, &t, &req, Some(raw), None)
        .unwrap()
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body = resp.bytes().await.unwrap();
    assert_eq!(
        provider.response_usage(&body).map(|u| u.prompt_tokens),
        Some(8)
    );

    let raw = br#"{"input":"hello"}"#;
    let req = RelayRequest::parse(Endpoint::Moderations, raw).unwrap();
    let resp = provider
        .build(&client, &t, &req, Some(raw), None)
        .unwrap()
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let failure = provider.classify(status, &resp.bytes().await.unwrap(), &[]);
    assert_eq!(failure.status, 401);
    assert!(failure.auto_disable && failure.retryable);
    assert!(failure.message.starts_with("Incorrect API key provided"));

    assert_eq!(
        provider.list_models(&client, &t).await.unwrap(),
        vec![
            "gpt-4o-mini".to_owned(),
            "text-embedding-3-small".to_owned()
        ]
    );
    let balance = provider.balance(&client, &t).await.unwrap().unwrap();
    assert!((balance - 74.5).abs() < 1e-9, "{balance}");
    let usage_request = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.url.path() == "/v1/dashboard/billing/usage")
        .unwrap();
    let query: HashMap<_, _> = usage_request.url.query_pairs().into_owned().collect();
    assert_eq!(query["start_date"].len(), 10);
    assert_eq!(query["end_date"].len(), 10);
}

#[tokio::test]
async fn transport_failures_are_retryable() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(5)))
        .mount(&server)
        .await;
    let mut t = target(server.uri());
    t.timeout = Duration::from_millis(200);
    let client = ClientPool::new().get(None).unwrap();
    let provider = Provider::for_channel_type(1).unwrap();
    let raw = br#"{"model":"m","input":"x"}"#;
    let req = RelayRequest::parse(Endpoint::Embeddings, raw).unwrap();

    let err = provider
        .build(&client, &t, &req, Some(raw), None)
        .unwrap()
        .send()
        .await
        .unwrap_err();
    let f = classify_transport(&err);
    assert_eq!((f.status, f.retryable, f.auto_disable), (504, true, false));
    assert!(!f.message.contains(&server.uri()));

    // Nothing listens on a port that was just released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let t = target(format!("http://127.0.0.1:{port}"));
    let err = provider
        .build(&client, &t, &req, Some(raw), None)
        .unwrap()
        .send()
        .await
        .unwrap_err();
    let f = classify_transport(&err);
    assert_eq!((f.status, f.retryable), (502, true));
    assert_eq!(f.code.as_deref(), Some("upstream_connect_error"));
}
