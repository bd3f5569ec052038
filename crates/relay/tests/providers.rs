//! Azure, Anthropic and Gemini against golden fixtures written from their documented formats
//! (`tests/fixtures/<provider>/`): the upstream request built for an OpenAI request (URL,
//! headers, exact JSON), answers and streams translated back into OpenAI's shapes (streams fed
//! at every possible split), usage and error classification.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_relay::provider::Provider;
use switchboard_relay::stream::SseTap;
use switchboard_relay::translate::StreamTranslator;
use switchboard_relay::{ChannelTarget, Endpoint, RelayRequest, Usage};

fn fixture(provider: &str, name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(provider)
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_fixture(provider: &str, name: &str) -> Value {
    serde_json::from_slice(&fixture(provider, name)).unwrap()
}

fn target(channel_type: i32, base_url: &str, key: &str) -> ChannelTarget {
    ChannelTarget {
        id: 9,
        channel_type,
        base_url: base_url.into(),
        key: key.into(),
        custom_headers: vec![("X-Trace".into(), "t-1".into())],
        proxy: None,
        model_mapping: HashMap::new(),
        timeout: Duration::from_secs(30),
        config: Default::default(),
        disabled_stream: Vec::new(),
        urls: Default::default(),
    }
}

fn build(p: &Provider, t: &ChannelTarget, endpoint: Endpoint, body: &Value) -> reqwest::Request {
    let bytes = serde_json::to_vec(body).unwrap();
    let req = RelayRequest::parse(endpoint, &bytes).unwrap();
    p.build(&reqwest::Client::new(), t, &req, Some(&bytes), None)
        .unwrap()
        .build()
        .unwrap()
}

fn body_of(r: &reqwest::Request) -> Value {
    serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap()
}

/// The events of an OpenAI SSE body as JSON (`[DONE]` as the string "[DONE]"), without the
/// `created` field (the translation time).
fn events(sse: &[u8]) -> Vec<Value> {
    let text = String::from_utf8(sse.to_vec()).unwrap();
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let data = e.strip_prefix("data: ").unwrap_or_else(|| panic!("{e:?}"));
            if data == "[DONE]" {
                return json!("[DONE]");
            }
            let mut v: Value = serde_json::from_str(data).unwrap();
            if let Some(o) = v.as_object_mut() {
                o.remove("created");
            }
            v
        })
        .collect()
}

fn expected_lines(provider: &str, name: &str) -> Vec<Value> {
    String::from_utf8(fixture(provider, name))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Translates `sse` split at `cut`; returns the output and the translator's usage.
fn translate(mut t: StreamTranslator, sse: &[u8], cut: usize) -> (Vec<u8>, Option<Usage>) {
    let mut out = t.feed(&sse[..cut]);
    out.extend(t.feed(&sse[cut..]));
    out.extend(t.finish());
    (out, t.usage())
}

fn chat_req(body: &Value, endpoint: Endpoint) -> RelayRequest {
    RelayRequest::parse(endpoint, body.to_string().as_bytes()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Azure

#[test]
fn azure_urls_headers_and_deployments() {
    let p = Provider::for_channel_type(3).unwrap();
    let mut t = target(3, "https://my-resource.openai.azure.com/", "azure-key");
    let r = build(
        &p,
        &t,
        Endpoint::ChatCompletions,
        &json!({"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "hi"}], "stream": true}),
    );
    assert_eq!(
        r.url().as_str(),
        "https://my-resource.openai.azure.com/openai/deployments/gpt-35-turbo/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(r.headers()["api-key"], "azure-key");
    assert!(r.headers()["api-key"].is_sensitive());
    assert!(r.headers().get("authorization").is_none());
    assert_eq!(r.headers()["x-trace"], "t-1");
    assert_eq!(
        body_of(&r)["stream_options"],
        json!({"include_usage": true}),
        "usage is forced on Azure streams too"
    );

    t.config
        .insert("api_version".into(), json!("2025-01-01-preview"));
    t.model_mapping
        .insert("text-embedding-3-small".into(), "emb.small".into());
    let r = build(
        &p,
        &t,
        Endpoint::Embeddings,
        &json!({"model": "text-embedding-3-small", "input": "x"}),
    );
    assert_eq!(
        r.url().as_str(),
        "https://my-resource.openai.azure.com/openai/deployments/emb.small/embeddings?api-version=2025-01-01-preview",
        "a mapped model is the deployment name verbatim"
    );
    for (endpoint, suffix) in [
        (Endpoint::Completions, "/completions"),
        (Endpoint::ImagesGenerations, "/images/generations"),
        (Endpoint::AudioSpeech, "/audio/speech"),
    ] {
        let r = build(
            &p,
            &t,
            endpoint,
            &json!({"model": "dall-e-3", "prompt": "x", "input": "x"}),
        );
        assert_eq!(
            r.url().path(),
            format!("/openai/deployments/dall-e-3{suffix}")
        );
    }
    assert!(!p.supports(Endpoint::Moderations));
    // Deployments have no Responses API: Responses clients come through the chat bridge.
    assert!(p.supports(Endpoint::Responses));
    assert_eq!(
        p.bridge(Endpoint::Responses),
        Some(switchboard_relay::bridge::Bridge::Responses)
    );
    assert!(p.supports(Endpoint::AudioTranscriptions));
}

#[test]
fn azure_answers_pass_through_and_errors_classify() {
    let p = Provider::for_channel_type(3).unwrap();
    let body = fixture("openai", "chat_completion.json");
    let req = chat_req(
        &json!({"model": "gpt-4o", "messages": []}),
        Endpoint::ChatCompletions,
    );
    let a = p.answer(&req, body.clone()).unwrap();
    assert_eq!(a.body, body, "byte for byte");
    assert_eq!(a.usage.map(|u| u.prompt_tokens), Some(1345));
    assert!(p.stream_translator(&req).is_none());

    let f = p.classify(401, &fixture("azure", "error_401.json"), &[]);
    assert!(f.auto_disable && f.retryable);
    assert!(f.message.starts_with("Access denied"));
    let f = p.classify(400, &fixture("azure", "error_content_filter.json"), &[]);
    assert!(!f.retryable && !f.auto_disable);
    assert_eq!(f.code.as_deref(), Some("content_filter"));
}

// ---------------------------------------------------------------------------------------------
// Anthropic

fn anthropic_target() -> ChannelTarget {
    let mut t = target(14, "", "sk-ant-key");
    t.model_mapping
        .insert("claude-sonnet-4".into(), "claude-sonnet-4-20250514".into());
    t
}

#[test]
fn anthropic_request_translation_is_golden() {
    let p = Provider::for_channel_type(14).unwrap();
    let r = build(
        &p,
        &anthropic_target(),
        Endpoint::ChatCompletions,
        &json_fixture("anthropic", "chat_request.json"),
    );
    assert_eq!(r.url().as_str(), "https://api.anthropic.com/v1/messages");
    assert_eq!(r.headers()["x-api-key"], "sk-ant-key");
    assert!(r.headers()["x-api-key"].is_sensitive());
    assert_eq!(r.headers()["anthropic-version"], "2023-06-01");
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(r.headers()["x-trace"], "t-1");
    assert!(r.headers().get("authorization").is_none());
    assert_eq!(r.timeout(), Some(&Duration::from_secs(30)));
    assert_eq!(
        body_of(&r),
        json_fixture("anthropic", "messages_request.json")
    );
}

#[test]
fn anthropic_request_defaults_and_choices() {
    let p = Provider::for_channel_type(14).unwrap();
    let t = anthropic_target();
    let r = build(
        &p,
        &t,
        Endpoint::ChatCompletions,
        &json!({"model": "claude-3-haiku-20240307", "stream": true, "stop": "x",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
            "tool_choice": "required"}),
    );
    let b = body_of(&r);
    assert_eq!(b["max_tokens"], 4096, "older models default to 4096");
    assert_eq!(b["stream"], true);
    assert_eq!(b["stop_sequences"], json!(["x"]));
    assert_eq!(b["tool_choice"], json!({"type": "any"}));
    assert!(b.get("stream_options").is_none());
    assert_eq!(r.timeout(), None, "streams get no overall timeout");
    let b = body_of(&build(
        &p,
        &t,
        Endpoint::ChatCompletions,
        &json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "hi"}], "tool_choice": "none"}),
    ));
    assert_eq!(b["max_tokens"], 8192);
    assert!(b.get("tool_choice").is_none(), "no tools, no tool choice");

    // What Anthropic cannot express is refused before any call.
    let bytes = json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]}).to_string();
    let req = RelayRequest::parse(Endpoint::ChatCompletions, bytes.as_bytes()).unwrap();
    assert!(p
        .build(&reqwest::Client::new(), &t, &req, None, None)
        .is_err());
    assert!(!p.supports(Endpoint::Embeddings));
    assert!(p.supports(Endpoint::ChatCompletions));
}

#[test]
fn anthropic_answer_translation_is_golden() {
    let p = Provider::for_channel_type(14).unwrap();
    let req = chat_req(
        &json!({"model": "claude-sonnet-4", "messages": []}),
        Endpoint::ChatCompletions,
    );
    let body = fixture("anthropic", "message_response.json");
    let expected_usage = Usage {
        prompt_tokens: 472 + 1200 + 3000,
        completion_tokens: 89,
        cached_read_tokens: 3000,
        cached_write_tokens: 1200,
        ..Usage::default()
    };
    assert_eq!(p.response_usage(&body), Some(expected_usage));
    let a = p.answer(&req, body).unwrap();
    assert_eq!(a.usage, Some(expected_usage));
    let mut v: Value = serde_json::from_slice(&a.body).unwrap();
    assert!(v["created"].as_u64().unwrap() > 1_700_000_000);
    v.as_object_mut().unwrap().remove("created");
    assert_eq!(v, json_fixture("anthropic", "chat_completion.json"));

    // Plain text; the other stop reasons.
    for (stop, finish) in [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "content_filter"),
    ] {
        let body = json!({"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": "Hi"}], "stop_reason": stop,
            "usage": {"input_tokens": 3, "output_tokens": 1}});
        let a = p.answer(&req, body.to_string().into_bytes()).unwrap();
        let v: Value = serde_json::from_slice(&a.body).unwrap();
        assert_eq!(v["choices"][0]["finish_reason"], finish);
        assert_eq!(v["choices"][0]["message"]["content"], "Hi");
        assert!(v["choices"][0]["message"].get("tool_calls").is_none());
    }
    let f = p.answer(&req, b"<html>".to_vec()).unwrap_err();
    assert_eq!((f.status, f.retryable), (502, false));
}

#[test]
fn anthropic_stream_translation_is_golden_at_every_split() {
    let sse = fixture("anthropic", "stream.sse");
    let expected = expected_lines("anthropic", "stream_expected.jsonl");
    let usage = Usage {
        prompt_tokens: 572,
        completion_tokens: 89,
        cached_read_tokens: 100,
        ..Usage::default()
    };
    for cut in 0..=sse.len() {
        let (out, u) = translate(StreamTranslator::anthropic("claude-sonnet-4"), &sse, cut);
        assert_eq!(events(&out), expected, "cut at {cut}");
        assert_eq!(u, Some(usage), "cut at {cut}");
    }
    // The tap sees the OpenAI rendering: usage, completion and text.
    let (out, _) = translate(StreamTranslator::anthropic("m"), &sse, 0);
    let mut tap = SseTap::new();
    tap.feed(&out);
    let o = tap.finish("claude-sonnet-4");
    assert!(o.saw_done && o.error.is_none());
    assert_eq!(
        o.usage.map(|u| (u.prompt_tokens, u.completion_tokens)),
        Some((572, 89))
    );
}

#[test]
fn anthropic_stream_errors_and_cuts() {
    let sse = fixture("anthropic", "stream_error.sse");
    let (out, usage) = translate(StreamTranslator::anthropic("m"), &sse, 10);
    let ev = events(&out);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert_eq!(ev[1]["error"]["type"], "overloaded_error");
    assert_eq!(ev[1]["error"]["message"], "Overloaded");
    assert_eq!(usage, None, "no output count arrived");
    let mut tap = SseTap::new();
    tap.feed(&out);
    let o = tap.finish("m");
    assert_eq!(o.error.as_deref(), Some("Overloaded"));
    assert!(!o.saw_done);

    // Cut before message_delta: no usage from the translator, no [DONE].
    let full = fixture("anthropic", "stream.sse");
    let text = String::from_utf8(full).unwrap();
    let cut = text.find("event: message_delta").unwrap();
    let mut t = StreamTranslator::anthropic("m");
    let out = t.feed(&text.as_bytes()[..cut]);
    assert_eq!(t.usage(), None);
    assert!(!String::from_utf8(out).unwrap().contains("[DONE]"));
}

#[test]
fn anthropic_errors_classify() {
    let p = Provider::for_channel_type(14).unwrap();
    let f = p.classify(529, &fixture("anthropic", "error_overloaded.json"), &[]);
    assert!(f.retryable && !f.auto_disable);
    assert_eq!(
        (f.message.as_str(), f.code.as_deref()),
        ("Overloaded", Some("overloaded_error"))
    );
    let f = p.classify(401, &fixture("anthropic", "error_authentication.json"), &[]);
    assert!(f.retryable && f.auto_disable);
    assert_eq!(f.code.as_deref(), Some("authentication_error"));
    let f = p.classify(
        400,
        &fixture("anthropic", "error_invalid_request.json"),
        &[],
    );
    assert!(!f.retryable && !f.auto_disable);
    assert_eq!(f.code.as_deref(), Some("invalid_request_error"));
    let f = p.classify(400, &fixture("anthropic", "error_credit.json"), &[]);
    assert!(f.retryable && f.auto_disable, "exhausted credit disables");
}

// ---------------------------------------------------------------------------------------------
// Gemini

fn gemini_target() -> ChannelTarget {
    let mut t = target(
        25,
        "https://generativelanguage.googleapis.com/v1beta/",
        "AIza-key",
    );
    t.model_mapping
        .insert("gemini-flash".into(), "gemini-2.5-flash".into());
    t
}

#[test]
fn gemini_request_translation_is_golden() {
    let p = Provider::for_channel_type(25).unwrap();
    let t = gemini_target();
    let mut body = json_fixture("gemini", "chat_request.json");
    let r = build(&p, &t, Endpoint::ChatCompletions, &body);
    assert_eq!(
        r.url().as_str(),
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(r.headers()["x-goog-api-key"], "AIza-key");
    assert!(r.headers()["x-goog-api-key"].is_sensitive());
    assert!(r.headers().get("authorization").is_none());
    assert_eq!(r.headers()["x-trace"], "t-1");
    assert_eq!(body_of(&r), json_fixture("gemini", "generate_request.json"));

    body["stream"] = json!(true);
    let r = build(&p, &t, Endpoint::ChatCompletions, &body);
    assert_eq!(
        r.url().as_str(),
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(body_of(&r), json_fixture("gemini", "generate_request.json"));
}

#[test]
fn gemini_answer_translation_is_golden() {
    let p = Provider::for_channel_type(25).unwrap();
    let req = chat_req(
        &json!({"model": "gemini-flash", "messages": []}),
        Endpoint::ChatCompletions,
    );
    let body = fixture("gemini", "generate_response.json");
    let usage = Usage {
        prompt_tokens: 120,
        completion_tokens: 70,
        cached_tokens: 64,
        reasoning_tokens: 40,
        // promptTokensDetails: TEXT 120
        input_text_tokens: 120,
        ..Usage::default()
    };
    assert_eq!(p.response_usage(&body), Some(usage));
    let a = p.answer(&req, body).unwrap();
    assert_eq!(a.usage, Some(usage));
    let mut v: Value = serde_json::from_slice(&a.body).unwrap();
    v.as_object_mut().unwrap().remove("created");
    assert_eq!(v, json_fixture("gemini", "chat_completion.json"));

    for (reason, finish) in [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
    ] {
        let body = json!({"candidates": [{"content": {"parts": [{"text": "x"}], "role": "model"}, "finishReason": reason}]});
        let a = p.answer(&req, body.to_string().into_bytes()).unwrap();
        let v: Value = serde_json::from_slice(&a.body).unwrap();
        assert_eq!(v["choices"][0]["finish_reason"], finish, "{reason}");
        assert_eq!(a.usage, None);
    }
    let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5}});
    let a = p.answer(&req, blocked.to_string().into_bytes()).unwrap();
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(v["choices"][0]["finish_reason"], "content_filter");
    assert_eq!(a.usage.map(|u| u.prompt_tokens), Some(5));
}

#[test]
fn gemini_stream_translation_is_golden_at_every_split() {
    let sse = fixture("gemini", "stream.sse");
    let expected = expected_lines("gemini", "stream_expected.jsonl");
    for cut in 0..=sse.len() {
        let (out, u) = translate(StreamTranslator::gemini("gemini-flash"), &sse, cut);
        assert_eq!(events(&out), expected, "cut at {cut}");
        assert_eq!(
            u.map(|u| (u.prompt_tokens, u.completion_tokens)),
            Some((9, 6))
        );
    }
    let (out, _) = translate(
        StreamTranslator::gemini("m"),
        &fixture("gemini", "stream_tool.sse"),
        0,
    );
    let ev = events(&out);
    assert_eq!(
        ev[1]["choices"][0]["delta"]["tool_calls"][0]["function"],
        json!({"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"})
    );
    assert_eq!(ev[2]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(ev.last().unwrap(), &json!("[DONE]"));

    // An error event ends the stream without [DONE].
    let mut t = StreamTranslator::gemini("m");
    let mut out = t.feed(b"data: {\"error\": {\"code\": 503, \"message\": \"The model is overloaded.\", \"status\": \"UNAVAILABLE\"}}\n\n");
    out.extend(t.finish());
    let ev = events(&out);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0]["error"]["message"], "The model is overloaded.");
}

#[test]
fn gemini_embeddings() {
    let p = Provider::for_channel_type(25).unwrap();
    let t = gemini_target();
    let body = json!({"model": "text-embedding-004", "input": ["hello", "world"], "dimensions": 3});
    let r = build(&p, &t, Endpoint::Embeddings, &body);
    assert_eq!(
        r.url().as_str(),
        "https://generativelanguage.googleapis.com/v1beta/models/text-embedding-004:batchEmbedContents"
    );
    assert_eq!(
        body_of(&r),
        json!({"requests": [
            {"model": "models/text-embedding-004", "content": {"parts": [{"text": "hello"}]}, "outputDimensionality": 3},
            {"model": "models/text-embedding-004", "content": {"parts": [{"text": "world"}]}, "outputDimensionality": 3}
        ]})
    );
    let req = chat_req(&body, Endpoint::Embeddings);
    let a = p
        .answer(&req, fixture("gemini", "embed_response.json"))
        .unwrap();
    assert_eq!(a.usage, None, "Gemini reports no tokens for embeddings");
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(v["object"], "list");
    assert_eq!(v["model"], "text-embedding-004");
    assert_eq!(v["data"][1]["index"], 1);
    assert_eq!(v["data"][1]["embedding"], json!([0.5, 0.25, -0.125]));
    assert!(v["usage"]["prompt_tokens"].as_i64().unwrap() > 0);

    let mut b64 = body.clone();
    b64["encoding_format"] = json!("base64");
    let a = p
        .answer(
            &chat_req(&b64, Endpoint::Embeddings),
            fixture("gemini", "embed_response.json"),
        )
        .unwrap();
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(v["data"][1]["embedding"], "AAAAPwAAgD4AAAC+");
}

#[test]
fn gemini_errors_classify() {
    let p = Provider::for_channel_type(25).unwrap();
    let f = p.classify(400, &fixture("gemini", "error_key_invalid.json"), &[]);
    assert!(f.auto_disable && f.retryable);
    assert_eq!(f.status, 401, "a bad channel key is a credential error");
    assert_eq!(f.code.as_deref(), Some("INVALID_ARGUMENT"));
    assert_eq!(f.message, "API key not valid. Please pass a valid API key.");
    let f = p.classify(429, &fixture("gemini", "error_quota.json"), &[]);
    assert!(f.retryable);
    assert_eq!(f.code.as_deref(), Some("RESOURCE_EXHAUSTED"));
    let f = p.classify(400, &fixture("gemini", "error_invalid_argument.json"), &[]);
    assert!(!f.retryable && !f.auto_disable);
    assert_eq!(f.message, "Request contains an invalid argument.");
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages clients (`/v1/messages`), passed through

#[test]
fn anthropic_messages_clients_are_passed_through() {
    let p = Provider::for_channel_type(14).unwrap();
    let t = anthropic_target();
    assert!(p.supports(Endpoint::Messages));
    // Every channel that serves chat serves Messages, through the chat bridge; Anthropic's
    // own, as they come.
    assert!(p.bridge(Endpoint::Messages).is_none());
    for other in [1, 3, 25, 32, 42] {
        let other = Provider::for_channel_type(other).unwrap();
        assert!(other.supports(Endpoint::Messages));
        assert!(other.bridge(Endpoint::Messages).is_some());
    }
    assert!(!Provider::for_channel_type(47)
        .unwrap()
        .supports(Endpoint::Messages));
    // Unchanged bytes when the model is not mapped; the mapped model otherwise.
    let raw = br#"{"model":"claude-3-5-haiku-20241022","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
    let req = RelayRequest::parse(Endpoint::Messages, raw).unwrap();
    let r = p
        .build(&reqwest::Client::new(), &t, &req, Some(raw), None)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(r.url().as_str(), "https://api.anthropic.com/v1/messages");
    assert_eq!(r.headers()["x-api-key"], "sk-ant-key");
    assert_eq!(r.body().unwrap().as_bytes().unwrap(), raw);
    let raw = br#"{"model":"claude-sonnet-4","max_tokens":5,"stream":true,"messages":[]}"#;
    let req = RelayRequest::parse(Endpoint::Messages, raw).unwrap();
    let r = p
        .build(&reqwest::Client::new(), &t, &req, Some(raw), None)
        .unwrap()
        .build()
        .unwrap();
    let b = body_of(&r);
    assert_eq!(b["model"], "claude-sonnet-4-20250514");
    assert!(b.get("stream_options").is_none());

    // Answers unchanged, usage read from them.
    let body = fixture("anthropic", "message_response.json");
    let a = p.answer(&req, body.clone()).unwrap();
    assert_eq!(a.body, body);
    assert_eq!(a.usage.map(|u| u.cached_read_tokens), Some(3000));

    // Streams: the observer's output is for the tap only.
    let t = p.stream_translator(&req).unwrap();
    assert!(t.passes_through());
    let sse = fixture("anthropic", "stream.sse");
    let (out, usage) = translate(t, &sse, 100);
    assert_eq!(usage.map(|u| u.prompt_tokens), Some(572));
    let mut tap = SseTap::new();
    tap.feed(&out);
    let o = tap.finish("m");
    assert!(o.saw_done);
    assert_eq!(o.usage.map(|u| u.completion_tokens), Some(89));
}

#[test]
fn messages_requests_estimate_their_prompt() {
    let body = json!({"model": "claude-x", "system": [{"type": "text", "text": "Be brief and kind."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hello there"},
            {"type": "tool_result", "tool_use_id": "t", "content": "result text"}]}],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}]});
    let n = switchboard_relay::tokenizer::estimate_prompt("claude-x", Endpoint::Messages, &body);
    let bare = switchboard_relay::tokenizer::estimate_prompt(
        "claude-x",
        Endpoint::Messages,
        &json!({"messages": []}),
    );
    assert!(n > bare + 8, "{n} vs {bare}");
    assert_eq!(
        Endpoint::from_path("/v1/messages"),
        Some(Endpoint::Messages)
    );
}

// ---------------------------------------------------------------------------------------------
// Round trips over real HTTP (wiremock)

mod over_http {
    use super::*;
    use futures_util::StreamExt;
    use wiremock::matchers::{body_json, header, method, path, query_param};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    #[tokio::test]
    async fn anthropic_chat_round_trip() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(header("x-api-key", "sk-ant-key"))
            .and(header("anthropic-version", "2023-06-01"))
            .and(body_json(json_fixture(
                "anthropic",
                "messages_request.json",
            )))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                fixture("anthropic", "message_response.json"),
                "application/json",
            ))
            .expect(1)
            .mount(&server)
            .await;
        let mut t = anthropic_target();
        t.base_url = server.uri();
        let p = Provider::for_channel_type(14).unwrap();
        let req = chat_req(
            &json_fixture("anthropic", "chat_request.json"),
            Endpoint::ChatCompletions,
        );
        let resp = p
            .build(&reqwest::Client::new(), &t, &req, None, None)
            .unwrap()
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let a = p
            .answer(&req, resp.bytes().await.unwrap().to_vec())
            .unwrap();
        let mut v: Value = serde_json::from_slice(&a.body).unwrap();
        v.as_object_mut().unwrap().remove("created");
        assert_eq!(v, json_fixture("anthropic", "chat_completion.json"));
    }

    #[tokio::test]
    async fn gemini_stream_round_trip() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            ))
            .and(query_param("alt", "sse"))
            .and(header("x-goog-api-key", "AIza-key"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_raw(fixture("gemini", "stream.sse"), "text/event-stream"),
            )
            .expect(1)
            .mount(&server)
            .await;
        let mut t = gemini_target();
        t.base_url = server.uri();
        let p = Provider::for_channel_type(25).unwrap();
        let req = chat_req(
            &json!({"model": "gemini-flash", "stream": true, "messages": [{"role": "user", "content": "sky?"}]}),
            Endpoint::ChatCompletions,
        );
        let resp = p
            .build(&reqwest::Client::new(), &t, &req, None, None)
            .unwrap()
            .send()
            .await
            .unwrap();
        let mut translator = p.stream_translator(&req).unwrap();
        assert!(!translator.passes_through());
        let mut out = Vec::new();
        let mut body = resp.bytes_stream();
        while let Some(chunk) = body.next().await {
            out.extend(translator.feed(&chunk.unwrap()));
        }
        out.extend(translator.finish());
        assert_eq!(
            events(&out),
            expected_lines("gemini", "stream_expected.jsonl")
        );
        assert_eq!(translator.usage().map(|u| u.completion_tokens), Some(6));
    }
}
