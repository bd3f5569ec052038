//! Structured output (`response_format`) of OpenAI chat requests on translated families:
//! Anthropic (and Bedrock / Vertex Claude, which share the translation) answers it through a
//! forced tool whose input comes back as the message's content; Gemini gets
//! `responseMimeType` and `responseJsonSchema`. What cannot be mapped is refused with 400,
//! never dropped. Golden fixtures: `tests/fixtures/anthropic/structured_*`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_relay::provider::Provider;
use switchboard_relay::stream::SseTap;
use switchboard_relay::translate::StreamTranslator;
use switchboard_relay::{ChannelTarget, Endpoint, RelayError, RelayRequest};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/anthropic")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_fixture(name: &str) -> Value {
    serde_json::from_slice(&fixture(name)).unwrap()
}

fn target(channel_type: i32, base_url: &str, key: &str) -> ChannelTarget {
    ChannelTarget {
        id: 9,
        channel_type,
        base_url: base_url.into(),
        key: key.into(),
        custom_headers: Vec::new(),
        proxy: None,
        model_mapping: HashMap::from([
            ("claude-sonnet-4".into(), "claude-sonnet-4-20250514".into()),
            ("gemini-flash".into(), "gemini-2.5-flash".into()),
        ]),
        timeout: Duration::from_secs(30),
        config: Default::default(),
        disabled_stream: Vec::new(),
        urls: Default::default(),
    }
}

fn request(body: &Value) -> RelayRequest {
    RelayRequest::parse(Endpoint::ChatCompletions, body.to_string().as_bytes()).unwrap()
}

/// The upstream body built for `body`, or the refusal.
fn built(channel_type: i32, body: &Value) -> Result<Value, RelayError> {
    let p = Provider::for_channel_type(channel_type).unwrap();
    let t = target(channel_type, "", "k");
    let req = request(body);
    let r = p
        .build(&reqwest::Client::new(), &t, &req, None, None)?
        .build()
        .unwrap();
    Ok(serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap())
}

fn refusal(channel_type: i32, body: &Value) -> String {
    match built(channel_type, body) {
        Err(RelayError::InvalidRequest(m)) => m,
        other => panic!("expected a 400 refusal, got {other:?}"),
    }
}

fn chat(format: Value) -> Value {
    json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "hi"}],
        "response_format": format})
}

/// The events of an OpenAI SSE body (`[DONE]` as a string), without `created`.
fn events(sse: &[u8]) -> Vec<Value> {
    String::from_utf8(sse.to_vec())
        .unwrap()
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let data = e.strip_prefix("data: ").unwrap();
            if data == "[DONE]" {
                return json!("[DONE]");
            }
            let mut v: Value = serde_json::from_str(data).unwrap();
            v.as_object_mut().unwrap().remove("created");
            v
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Anthropic

#[test]
fn json_schema_becomes_a_forced_tool_golden() {
    let body = built(14, &json_fixture("structured_chat_request.json")).unwrap();
    assert_eq!(body, json_fixture("structured_messages_request.json"));
}

#[test]
fn json_object_and_schema_variants() {
    let b = built(14, &chat(json!({"type": "json_object"}))).unwrap();
    assert_eq!(
        b["tools"],
        json!([{"name": "json_response", "description": "Give the answer as a JSON object.",
            "input_schema": {"type": "object"}}])
    );
    assert_eq!(
        b["tool_choice"],
        json!({"type": "tool", "name": "json_response"})
    );

    // No name, a description, no schema.
    let b = built(
        14,
        &chat(json!({"type": "json_schema", "json_schema": {"description": "A city."}})),
    )
    .unwrap();
    assert_eq!(
        b["tools"],
        json!([{"name": "json_response", "description": "A city.", "input_schema": {"type": "object"}}])
    );

    // `text` and null change nothing.
    for format in [json!({"type": "text"}), Value::Null] {
        let b = built(14, &chat(format)).unwrap();
        assert!(b.get("tools").is_none() && b.get("tool_choice").is_none());
    }
}

#[test]
fn what_cannot_be_mapped_is_refused_with_a_reason() {
    let m = refusal(
        14,
        &chat(json!({"type": "json_schema", "json_schema": {"name": "xs",
            "schema": {"type": "array", "items": {"type": "string"}}}})),
    );
    assert!(m.contains("must describe an object"), "{m}");
    let m = refusal(14, &chat(json!({"type": "grammar"})));
    assert!(m.contains("\"grammar\" is not supported"), "{m}");
    let m = refusal(14, &chat(json!({"type": "json_schema"})));
    assert!(m.contains("needs a json_schema object"), "{m}");
    let m = refusal(14, &chat(json!("json")));
    assert!(m.contains("must be an object"), "{m}");

    let mut with_tools = chat(json!({"type": "json_object"}));
    with_tools["tools"] =
        json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]);
    let m = refusal(14, &with_tools);
    assert!(m.contains("cannot be combined with tools"), "{m}");

    let mut thinking = chat(json!({"type": "json_object"}));
    thinking["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    let m = refusal(14, &thinking);
    assert!(m.contains("cannot be combined with thinking"), "{m}");
    thinking["thinking"] = json!({"type": "disabled"});
    assert!(built(14, &thinking).is_ok());
}

#[test]
fn bedrock_claude_shares_the_mapping() {
    let body = chat(json!({"type": "json_object"}));
    let req = request(&body);
    let t = target(32, "", "AKID|secret|us-east-1");
    let r = Provider::for_channel_type(32)
        .unwrap()
        .build(&reqwest::Client::new(), &t, &req, None, None)
        .unwrap()
        .build()
        .unwrap();
    let b: Value = serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap();
    assert_eq!(
        b["tool_choice"],
        json!({"type": "tool", "name": "json_response"})
    );
    assert_eq!(b["tools"][0]["input_schema"], json!({"type": "object"}));
}

#[test]
fn the_forced_tool_input_is_answered_as_content() {
    let p = Provider::for_channel_type(14).unwrap();
    let req = request(&json_fixture("structured_chat_request.json"));
    let a = p.answer(&req, fixture("structured_response.json")).unwrap();
    let mut v: Value = serde_json::from_slice(&a.body).unwrap();
    v.as_object_mut().unwrap().remove("created");
    let mut expected = json_fixture("structured_chat_completion.json");
    // The content is JSON text; compare it parsed (key order is serde_json's).
    let content = |v: &mut Value| -> Value {
        let text = v["choices"][0]["message"]["content"].take();
        serde_json::from_str(text.as_str().unwrap()).unwrap()
    };
    assert_eq!(content(&mut v), content(&mut expected));
    assert_eq!(v, expected);
    assert_eq!(
        a.usage.map(|u| (u.prompt_tokens, u.completion_tokens)),
        Some((420, 61))
    );

    // Without response_format the same answer stays a tool call.
    let plain = request(&json!({"model": "claude-sonnet-4", "messages": []}));
    let a = p
        .answer(&plain, fixture("structured_response.json"))
        .unwrap();
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "CalendarEvent"
    );

    // Cut by max_tokens: the (partial) input is still the content, the finish reason says so.
    let body = json!({"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "tool_use", "id": "t", "name": "CalendarEvent", "input": {}}],
        "stop_reason": "max_tokens", "usage": {"input_tokens": 3, "output_tokens": 1}});
    let a = p.answer(&req, body.to_string().into_bytes()).unwrap();
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(v["choices"][0]["finish_reason"], "length");
    assert_eq!(v["choices"][0]["message"]["content"], "{}");
}

#[test]
fn the_forced_tool_input_streams_as_content_at_every_split() {
    let sse = fixture("structured_stream.sse");
    let expected: Vec<Value> = String::from_utf8(fixture("structured_stream_expected.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let req = request(&json_fixture("structured_chat_request.json"));
    let p = Provider::for_channel_type(14).unwrap();
    for cut in 0..=sse.len() {
        let mut t = p.stream_translator(&req).unwrap();
        let mut out = t.feed(&sse[..cut]);
        out.extend(t.feed(&sse[cut..]));
        out.extend(t.finish());
        assert_eq!(events(&out), expected, "cut at {cut}");
    }
    // The content pieces add up to the object; the tap bills the usage.
    let mut t = p.stream_translator(&req).unwrap();
    let out = t.feed(&sse);
    let text: String = events(&out)
        .iter()
        .filter_map(|e| {
            e.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect();
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed["participants"], json!(["Alice", "Bob"]));
    let mut tap = SseTap::new();
    tap.feed(&out);
    let o = tap.finish("claude-sonnet-4");
    assert_eq!(
        o.usage.map(|u| (u.prompt_tokens, u.completion_tokens)),
        Some((420, 61))
    );

    // Without response_format the stream is a tool call, as before.
    let plain = request(&json!({"model": "claude-sonnet-4", "messages": []}));
    let out = p.stream_translator(&plain).unwrap().feed(&sse);
    let ev = events(&out);
    assert!(ev
        .iter()
        .any(|e| e.pointer("/choices/0/delta/tool_calls").is_some()));
    assert_eq!(
        StreamTranslator::anthropic("m").feed(&sse),
        StreamTranslator::anthropic("m")
            .with_response_tool(None)
            .feed(&sse)
    );
}

#[test]
fn bedrock_and_vertex_streams_answer_the_forced_tool_as_content() {
    let sse = fixture("structured_stream.sse");
    let req = request(&json_fixture("structured_chat_request.json"));
    // Vertex recognises Anthropic's stream by its `event:` lines.
    let mut t = Provider::for_channel_type(42)
        .unwrap()
        .stream_translator(&req)
        .unwrap();
    let mut out = t.feed(&sse);
    out.extend(t.finish());
    let ev = events(&out);
    let text: String = ev
        .iter()
        .filter_map(|e| {
            e.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["name"],
        "Science fair"
    );
    assert!(ev
        .iter()
        .any(|e| e.pointer("/choices/0/finish_reason") == Some(&json!("stop"))));
    assert!(matches!(
        Provider::for_channel_type(32)
            .unwrap()
            .stream_translator(&req),
        Some(StreamTranslator::Bedrock(_))
    ));
}

// ---------------------------------------------------------------------------------------------
// Gemini

fn gemini(format: Value) -> Value {
    json!({"model": "gemini-flash", "messages": [{"role": "user", "content": "hi"}],
        "response_format": format})
}

#[test]
fn gemini_gets_the_json_schema() {
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"], "additionalProperties": false,
        "$defs": {"X": {"type": "string"}}});
    let b = built(
        25,
        &gemini(json!({"type": "json_schema",
            "json_schema": {"name": "City", "strict": true, "schema": schema}})),
    )
    .unwrap();
    assert_eq!(
        b["generationConfig"],
        json!({"responseMimeType": "application/json", "responseJsonSchema": schema})
    );

    let b = built(25, &gemini(json!({"type": "json_object"}))).unwrap();
    assert_eq!(
        b["generationConfig"],
        json!({"responseMimeType": "application/json"})
    );
    let b = built(25, &gemini(json!({"type": "text"}))).unwrap();
    assert!(b.get("generationConfig").is_none());

    let m = refusal(25, &gemini(json!({"type": "grammar"})));
    assert!(m.contains("\"grammar\" is not supported"), "{m}");
    let m = refusal(
        25,
        &gemini(json!({"type": "json_schema", "json_schema": {"schema": "x"}})),
    );
    assert!(m.contains("must be a JSON Schema object"), "{m}");
}
