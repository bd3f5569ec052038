//! The provider switches of a channel (`config.web_search`, `code_execution`, `plugin`,
//! `knowledge_id`, `knowledge_template`) as each provider's own request field, inspected on the
//! requests `Provider::build` makes: the field is there when the switch is on, the client's
//! tools are kept, and with the switches off the body is the one sent without them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use switchboard_relay::{ChannelTarget, Endpoint, Provider, RelayRequest};

fn target(channel_type: i32, config: Value) -> ChannelTarget {
    ChannelTarget {
        id: 3,
        channel_type,
        base_url: "https://upstream.example".into(),
        key: "k".into(),
        config: config.as_object().cloned().unwrap(),
        ..ChannelTarget::default()
    }
}

fn build(t: &ChannelTarget, endpoint: Endpoint, body: &Value) -> reqwest::Request {
    let bytes = serde_json::to_vec(body).unwrap();
    let req = RelayRequest::parse(endpoint, &bytes).unwrap();
    Provider::for_channel_type(t.channel_type)
        .unwrap()
        .build(&reqwest::Client::new(), t, &req, Some(&bytes), None)
        .unwrap()
        .build()
        .unwrap()
}

fn sent(t: &ChannelTarget, endpoint: Endpoint, body: &Value) -> Value {
    let r = build(t, endpoint, body);
    serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap()
}

fn function_tool() -> Value {
    json!({"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})
}

fn chat(tools: bool) -> Value {
    let mut b = json!({"model": "m1", "messages": [{"role": "user", "content": "What's new?"}]});
    if tools {
        b["tools"] = json!([function_tool()]);
    }
    b
}

#[test]
fn zhipu_web_search_and_knowledge_base_are_its_tools() {
    let t = target(
        16,
        json!({"web_search": true, "knowledge_id": "1748261416034889728",
            "knowledge_template": "From {{knowledge}} answer {{question}}"}),
    );
    let r = build(&t, Endpoint::ChatCompletions, &chat(true));
    assert_eq!(
        r.url().as_str(),
        "https://upstream.example/api/paas/v4/chat/completions"
    );
    let b: Value = serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap();
    assert_eq!(
        b["tools"],
        json!([
            function_tool(),
            {"type": "web_search", "web_search": {"enable": true}},
            {"type": "retrieval", "retrieval": {"knowledge_id": "1748261416034889728",
                "prompt_template": "From {{knowledge}} answer {{question}}"}}
        ]),
        "the client's tool first, then the channel's"
    );
    assert_eq!(b["messages"], chat(false)["messages"]);

    // Embeddings are no chat: untouched.
    let emb = json!({"model": "embedding-3", "input": "a"});
    assert_eq!(sent(&t, Endpoint::Embeddings, &emb), emb);
}

#[test]
fn switches_off_send_the_clients_bytes() {
    for (ty, config) in [
        (16, json!({"web_search": false, "knowledge_id": ""})),
        (17, json!({"web_search": false})),
        (20, json!({"web_search": false, "plugin": {}})),
        // A switch on a type without it (a config from before a type change) does nothing.
        (1, json!({"web_search": true, "code_execution": true})),
    ] {
        let t = target(ty, config);
        let raw = br#"{ "model" : "m1", "messages" : [ ] }"#;
        let req = RelayRequest::parse(Endpoint::ChatCompletions, raw).unwrap();
        let r = Provider::for_channel_type(ty)
            .unwrap()
            .build(&reqwest::Client::new(), &t, &req, Some(raw), None)
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(r.body().unwrap().as_bytes().unwrap(), raw, "type {ty}");
    }
}

#[test]
fn dashscope_web_search_is_enable_search() {
    let t = target(17, json!({"web_search": true}));
    let b = sent(&t, Endpoint::ChatCompletions, &chat(true));
    assert_eq!(b["enable_search"], true);
    assert_eq!(
        b["tools"],
        json!([function_tool()]),
        "the client's tools kept"
    );
    // The channel's other parameters are applied last and win.
    let t = target(
        17,
        json!({"web_search": true, "custom_parameter": {"enable_search": false}}),
    );
    assert_eq!(
        sent(&t, Endpoint::ChatCompletions, &chat(false))["enable_search"],
        false
    );
}

#[test]
fn openrouter_web_search_tool_and_plugins() {
    let t = target(
        20,
        json!({"web_search": true, "plugin": {"file-parser": {"pdf": {"engine": "pdf-text"}}}}),
    );
    let b = sent(&t, Endpoint::ChatCompletions, &chat(true));
    assert_eq!(
        b["tools"],
        json!([function_tool(), {"type": "openrouter:web_search"}])
    );
    assert_eq!(
        b["plugins"],
        json!([{"id": "file-parser", "pdf": {"engine": "pdf-text"}}])
    );
}

#[test]
fn messages_clients_on_openai_compatible_channels_get_them_as_chat() {
    let t = target(17, json!({"web_search": true}));
    let b = sent(
        &t,
        Endpoint::Messages,
        &json!({"model": "qwen-plus", "max_tokens": 100,
            "messages": [{"role": "user", "content": "What's new?"}]}),
    );
    assert_eq!(b["enable_search"], true);
    assert!(b.get("messages").is_some());
}

#[test]
fn gemini_web_search_and_code_execution_are_its_tools() {
    let t = target(25, json!({"web_search": true, "code_execution": true}));
    let b = sent(&t, Endpoint::ChatCompletions, &chat(false));
    assert_eq!(
        b["tools"],
        json!([{"googleSearch": {}}, {"codeExecution": {}}])
    );
    // The client's functions: Gemini refuses built-in tools beside them, so only they go.
    let b = sent(&t, Endpoint::ChatCompletions, &chat(true));
    assert_eq!(
        b["tools"][0]["functionDeclarations"][0]["name"],
        "get_weather"
    );
    assert_eq!(b["tools"].as_array().unwrap().len(), 1);
    // Off: no tools at all.
    let off = target(25, json!({"web_search": false}));
    assert!(sent(&off, Endpoint::ChatCompletions, &chat(false))
        .get("tools")
        .is_none());
}

#[test]
fn gemini_clients_get_them_in_their_own_body() {
    let t = target(25, json!({"web_search": true}));
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "What's new?"}]}],
        "tools": [{"codeExecution": {}}]});
    let bytes = serde_json::to_vec(&body).unwrap();
    let mut req = RelayRequest::parse(
        Endpoint::GenerateContent,
        &serde_json::to_vec(&json!({"model": "gemini-2.5-flash"})).unwrap(),
    )
    .unwrap();
    req.body = serde_json::from_slice(&bytes).unwrap();
    let r = Provider::for_channel_type(25)
        .unwrap()
        .build(&reqwest::Client::new(), &t, &req, Some(&bytes), None)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(
        r.url().path(),
        "/v1beta/models/gemini-2.5-flash:generateContent"
    );
    let b: Value = serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap();
    assert_eq!(
        b["tools"],
        json!([{"codeExecution": {}}, {"googleSearch": {}}])
    );
    assert_eq!(b["contents"], body["contents"]);
    // Off: the client's body as it is.
    let off = target(25, json!({}));
    let r = Provider::for_channel_type(25)
        .unwrap()
        .build(&reqwest::Client::new(), &off, &req, Some(&bytes), None)
        .unwrap()
        .build()
        .unwrap();
    let b: Value = serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap();
    assert_eq!(b, body);
}

#[test]
fn vertex_gemini_models_get_the_gemini_tools() {
    let t = target(42, json!({"web_search": true, "code_execution": true}));
    let req = RelayRequest::parse(
        Endpoint::ChatCompletions,
        &serde_json::to_vec(&chat(false)).unwrap(),
    )
    .unwrap();
    let b = switchboard_relay::providers::gemini::chat_body(&t, &req).unwrap();
    assert_eq!(
        b["tools"],
        json!([{"googleSearch": {}}, {"codeExecution": {}}])
    );
}

#[test]
fn anthropic_web_search_and_code_execution_are_server_tools() {
    let mut t = target(14, json!({"web_search": true, "code_execution": true}));
    t.custom_headers = vec![("anthropic-beta".into(), "context-1m-2025-08-07".into())];
    let r = build(&t, Endpoint::ChatCompletions, &chat(true));
    assert_eq!(r.url().path(), "/v1/messages");
    assert_eq!(
        r.headers()["anthropic-beta"],
        "context-1m-2025-08-07,code-execution-2025-08-25",
        "the channel's own beta flags are kept"
    );
    let b: Value = serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap();
    assert_eq!(b["tools"][0]["name"], "get_weather");
    assert_eq!(
        b["tools"][1],
        json!({"type": "web_search_20250305", "name": "web_search"})
    );
    assert_eq!(
        b["tools"][2],
        json!({"type": "code_execution_20250825", "name": "code_execution"})
    );

    // Web search alone: no beta header.
    let t = target(14, json!({"web_search": true}));
    let r = build(&t, Endpoint::ChatCompletions, &chat(false));
    assert!(r.headers().get("anthropic-beta").is_none());

    // Messages clients are passed through as they are.
    let messages = json!({"model": "claude-sonnet-4-5", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(sent(&t, Endpoint::Messages, &messages), messages);

    // Off: no tools.
    let off = target(14, json!({"web_search": false, "code_execution": false}));
    let r = build(&off, Endpoint::ChatCompletions, &chat(false));
    let b: Value = serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap();
    assert!(b.get("tools").is_none());
    assert!(r.headers().get("anthropic-beta").is_none());
}

#[test]
fn gemini_code_execution_parts_reach_the_answer_text() {
    let body = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gemini/code_execution_response.json"),
    )
    .unwrap();
    let req = RelayRequest::parse(
        Endpoint::ChatCompletions,
        &serde_json::to_vec(&chat(false)).unwrap(),
    )
    .unwrap();
    let a = Provider::for_channel_type(25)
        .unwrap()
        .answer(&req, body)
        .unwrap();
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(
        v["choices"][0]["message"]["content"],
        "I will compute it.\n```python\nprint(sum(range(101)))\n```\n```output\n5050\n```\nThe sum is 5050."
    );
}
