//! Upstream request building, inspected through `RequestBuilder::build()`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_relay::{ChannelTarget, Endpoint, Provider, RelayError, RelayRequest};

fn target() -> ChannelTarget {
    ChannelTarget {
        id: 7,
        channel_type: 1,
        base_url: "https://upstream.example/".into(),
        key: "sk-upstream".into(),
        custom_headers: vec![("X-Org".into(), "acme".into())],
        proxy: None,
        model_mapping: HashMap::from([("gpt-4o".to_owned(), "gpt-4o-2024-11-20".to_owned())]),
        timeout: Duration::from_secs(30),
        config: Default::default(),
        disabled_stream: Vec::new(),
        urls: Default::default(),
    }
}

fn provider() -> Provider {
    Provider::for_channel_type(1).unwrap()
}

fn build(t: &ChannelTarget, endpoint: Endpoint, body: &Value) -> reqwest::Request {
    let bytes = serde_json::to_vec(body).unwrap();
    let req = RelayRequest::parse(endpoint, &bytes).unwrap();
    provider()
        .build(&reqwest::Client::new(), t, &req, Some(&bytes), None)
        .unwrap()
        .build()
        .unwrap()
}

fn body_of(r: &reqwest::Request) -> Value {
    serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap()
}

#[test]
fn url_headers_and_mapping() {
    let r = build(
        &target(),
        Endpoint::ChatCompletions,
        &json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "x_extra": {"a": 1}}),
    );
    assert_eq!(r.method(), reqwest::Method::POST);
    assert_eq!(
        r.url().as_str(),
        "https://upstream.example/v1/chat/completions"
    );
    assert_eq!(r.headers()["authorization"], "Bearer sk-upstream");
    assert!(r.headers()["authorization"].is_sensitive());
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(r.headers()["x-org"], "acme");
    assert_eq!(r.timeout(), Some(&Duration::from_secs(30)));
    assert_eq!(
        body_of(&r),
        json!({"model": "gpt-4o-2024-11-20", "messages": [{"role": "user", "content": "hi"}], "x_extra": {"a": 1}})
    );
}

#[test]
fn unchanged_bodies_are_sent_byte_for_byte() {
    let raw = br#"{ "model" : "gpt-4o-mini", "input": "x" }"#;
    let req = RelayRequest::parse(Endpoint::Embeddings, raw).unwrap();
    let r = provider()
        .build(&reqwest::Client::new(), &target(), &req, Some(raw), None)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(r.url().path(), "/v1/embeddings");
    assert_eq!(r.body().unwrap().as_bytes().unwrap(), raw);
}

#[test]
fn include_usage_is_injected_for_streamed_chat_and_completions() {
    let t = target();
    let r = build(
        &t,
        Endpoint::ChatCompletions,
        &json!({"model": "gpt-4o-mini", "stream": true, "messages": []}),
    );
    assert_eq!(
        body_of(&r)["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(r.timeout(), None, "no overall deadline on streams");

    let r = build(
        &t,
        Endpoint::Completions,
        &json!({"model": "gpt-4o", "stream": true, "prompt": "x", "stream_options": {"include_obfuscation": false}}),
    );
    let b = body_of(&r);
    assert_eq!(
        b["stream_options"],
        json!({"include_obfuscation": false, "include_usage": true})
    );
    assert_eq!(b["model"], "gpt-4o-2024-11-20");

    // Not streamed, or not an endpoint with stream_options: untouched.
    let r = build(
        &t,
        Endpoint::ChatCompletions,
        &json!({"model": "m", "messages": []}),
    );
    assert_eq!(body_of(&r).get("stream_options"), None);
    let r = build(
        &t,
        Endpoint::Responses,
        &json!({"model": "m", "stream": true, "input": "x"}),
    );
    assert_eq!(body_of(&r).get("stream_options"), None);
}

#[test]
fn custom_headers_override_and_empty_key_sends_no_authorization() {
    let mut t = target();
    t.custom_headers = vec![("Authorization".into(), "Token abc".into())];
    let r = build(&t, Endpoint::Moderations, &json!({"input": "x"}));
    assert_eq!(r.headers().get_all("authorization").iter().count(), 1);
    assert_eq!(r.headers()["authorization"], "Token abc");
    // The defaulted model is not inserted into the body unless mapped.
    assert_eq!(body_of(&r), json!({"input": "x"}));

    t.custom_headers.clear();
    t.key = String::new();
    t.model_mapping = HashMap::from([(
        "omni-moderation-latest".into(),
        "text-moderation-007".into(),
    )]);
    let r = build(&t, Endpoint::Moderations, &json!({"input": "x"}));
    assert!(r.headers().get("authorization").is_none());
    assert_eq!(
        body_of(&r),
        json!({"input": "x", "model": "text-moderation-007"})
    );
}

#[test]
fn zero_timeout_means_none() {
    let mut t = target();
    t.timeout = Duration::ZERO;
    let r = build(
        &t,
        Endpoint::Embeddings,
        &json!({"model": "m", "input": "x"}),
    );
    assert_eq!(r.timeout(), None);
}

#[test]
fn multipart_is_forwarded_unchanged() {
    let ct = "multipart/form-data; boundary=XyZ";
    let raw = b"--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\nRIFF\r\n--XyZ--\r\n";
    let req = RelayRequest::parse_multipart(Endpoint::AudioTranscriptions, ct, raw).unwrap();
    let mut t = target();
    t.model_mapping = HashMap::from([("whisper-1".into(), "whisper-large".into())]);
    let r = provider()
        .build(&reqwest::Client::new(), &t, &req, Some(raw), Some(ct))
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(r.url().path(), "/v1/audio/transcriptions");
    assert_eq!(r.headers()["content-type"], ct);
    assert_eq!(r.body().unwrap().as_bytes().unwrap(), raw);

    let missing = provider().build(&reqwest::Client::new(), &t, &req, None, None);
    assert!(matches!(missing, Err(RelayError::InvalidRequest(_))));
}

#[test]
fn channel_configuration_errors() {
    let body = json!({"model": "m", "input": "x"});
    let bytes = serde_json::to_vec(&body).unwrap();
    let req = RelayRequest::parse(Endpoint::Embeddings, &bytes).unwrap();
    let client = reqwest::Client::new();

    let mut t = target();
    t.custom_headers = vec![("Bad Header".into(), "x".into())];
    assert!(matches!(
        provider().build(&client, &t, &req, None, None),
        Err(RelayError::Channel(_))
    ));

    let mut t = target();
    t.base_url = "not a url".into();
    assert!(matches!(
        provider().build(&client, &t, &req, None, None),
        Err(RelayError::Channel(_))
    ));
}

#[test]
fn vendors_with_their_own_version_path_get_it_in_the_url() {
    let chat = json!({"model": "glm-4-flash", "messages": [{"role": "user", "content": "hi"}]});
    for (channel_type, base, want) in [
        (
            16,
            "",
            "https://open.bigmodel.cn/api/paas/v4/chat/completions",
        ),
        (15, "", "https://qianfan.baidubce.com/v2/chat/completions"),
        (
            17,
            "",
            "https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions",
        ),
        (
            16,
            "https://zhipu.proxy.example",
            "https://zhipu.proxy.example/api/paas/v4/chat/completions",
        ),
    ] {
        let t = ChannelTarget {
            channel_type,
            base_url: base.into(),
            ..target()
        };
        let bytes = serde_json::to_vec(&chat).unwrap();
        let req = RelayRequest::parse(Endpoint::ChatCompletions, &bytes).unwrap();
        let r = Provider::for_channel_type(channel_type)
            .unwrap()
            .build(&reqwest::Client::new(), &t, &req, Some(&bytes), None)
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(r.url().as_str(), want);
        assert_eq!(r.headers()["authorization"], "Bearer sk-upstream");
    }
}
