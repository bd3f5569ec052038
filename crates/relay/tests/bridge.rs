//! Client protocols on channels of another protocol (`switchboard_relay::bridge`), and the
//! `anthropic-beta` flags a Messages client sends, as Claude Code speaks them: its request shape
//! (beta-only fields, a system turn within the conversation, `output_config.effort`, extended
//! thinking) built for each family, and answers and streams written back in Anthropic's shape.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_relay::{ChannelTarget, Endpoint, Provider, RelayRequest, SseTap};

fn fixture(provider: &str, name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/{provider}/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn target(channel_type: i32, key: &str, config: Value) -> ChannelTarget {
    ChannelTarget {
        id: 9,
        channel_type,
        base_url: String::new(),
        key: key.into(),
        custom_headers: Vec::new(),
        proxy: None,
        model_mapping: HashMap::new(),
        timeout: Duration::from_secs(30),
        config: config.as_object().cloned().unwrap_or_default(),
        disabled_stream: Vec::new(),
        urls: Default::default(),
    }
}

/// A Messages request as Claude Code sends it on `POST /v1/messages?beta=true`.
fn claude_code_request(stream: bool) -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "stream": stream,
        "system": [
            {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral", "scope": "global"}},
            {"type": "text", "text": "Work in /repo."}
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Read notes.txt", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should read it.", "signature": "sig"},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/repo/notes.txt"}}
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "the notes"}]},
            {"role": "system", "content": "<system-reminder>Be concise.</system-reminder>"},
            {"role": "user", "content": "Summarise them."}
        ],
        "tools": [{"name": "Read", "description": "Reads a file", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}}],
        "thinking": {"type": "enabled", "budget_tokens": 31999},
        "output_config": {"effort": "high"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
        "metadata": {"user_id": "user_abc"}
    })
}

fn messages_req(body: &Value, beta: Option<&str>) -> RelayRequest {
    let mut r = RelayRequest::parse(Endpoint::Messages, body.to_string().as_bytes()).unwrap();
    r.anthropic_beta = beta.map(str::to_owned);
    r
}

fn build(p: &Provider, t: &ChannelTarget, req: &RelayRequest) -> reqwest::Request {
    let raw = serde_json::to_vec(&req.body).unwrap();
    p.build(&reqwest::Client::new(), t, req, Some(&raw), None)
        .unwrap()
        .build()
        .unwrap()
}

fn body_of(r: &reqwest::Request) -> Value {
    serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap()
}

const CLAUDE_CODE_BETA: &str = "claude-code-20250219,context-management-2025-06-27,interleaved-thinking-2025-05-14,prompt-caching-scope-2026-01-05";

#[test]
fn anthropic_channels_get_the_clients_beta_flags_under_the_channels_rules() {
    let p = Provider::for_channel_type(14).unwrap();
    let req = messages_req(&claude_code_request(false), Some(CLAUDE_CODE_BETA));
    let r = build(&p, &target(14, "sk-ant", json!({})), &req);
    assert_eq!(r.headers()["anthropic-beta"], CLAUDE_CODE_BETA);
    // The body goes as sent: its beta-only fields need those flags.
    assert_eq!(
        body_of(&r)["context_management"],
        claude_code_request(false)["context_management"]
    );

    // The channel removes and adds flags; its custom header's flags come first.
    let mut t = target(
        14,
        "sk-ant",
        json!({"anthropic_beta": {"remove": ["prompt-caching-scope-*", "claude-code-20250219"], "add": ["context-1m-2025-08-07"]}}),
    );
    t.custom_headers = vec![(
        "anthropic-beta".into(),
        "fine-grained-tool-streaming-2025-05-14".into(),
    )];
    let r = build(&p, &t, &req);
    assert_eq!(
        r.headers()["anthropic-beta"],
        "fine-grained-tool-streaming-2025-05-14,context-management-2025-06-27,interleaved-thinking-2025-05-14,context-1m-2025-08-07"
    );
    // No flags from anyone: no header.
    let r = build(
        &p,
        &target(14, "sk-ant", json!({})),
        &messages_req(&claude_code_request(false), None),
    );
    assert!(r.headers().get("anthropic-beta").is_none());
    let all_removed = target(14, "sk-ant", json!({"anthropic_beta": {"remove": ["*"]}}));
    assert!(build(&p, &all_removed, &req)
        .headers()
        .get("anthropic-beta")
        .is_none());

    // Counting tokens carries them too.
    let raw = serde_json::to_vec(&req.body).unwrap();
    let r = p
        .count_tokens(
            &reqwest::Client::new(),
            &target(14, "sk-ant", json!({})),
            &req,
            Some(&raw),
        )
        .unwrap()
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(r.headers()["anthropic-beta"], CLAUDE_CODE_BETA);
}

#[test]
fn bedrock_takes_the_flags_in_the_body() {
    let p = Provider::for_channel_type(32).unwrap();
    let t = target(
        32,
        "AKIDEXAMPLE|secret|us-east-1",
        json!({"anthropic_beta": {"remove": ["claude-code-*", "prompt-caching-scope-*"]}}),
    );
    let req = messages_req(&claude_code_request(false), Some(CLAUDE_CODE_BETA));
    let r = build(&p, &t, &req);
    assert!(r.headers().get("anthropic-beta").is_none());
    let b = body_of(&r);
    assert_eq!(
        b["anthropic_beta"],
        json!([
            "context-management-2025-06-27",
            "interleaved-thinking-2025-05-14"
        ])
    );
    assert_eq!(b["anthropic_version"], "bedrock-2023-05-31");
    // Through the chat bridge: thinking stays thinking, the system turns are the system.
    assert_eq!(
        b["thinking"],
        json!({"type": "enabled", "budget_tokens": 16384}),
        "effort high: its budget"
    );
    assert!(b["system"].as_str().unwrap().contains("Be concise."), "{b}");
    assert!(b.get("context_management").is_none());
}

#[test]
fn claude_code_requests_become_chat_requests_for_openai_channels() {
    let p = Provider::for_channel_type(1).unwrap();
    let req = messages_req(&claude_code_request(true), Some(CLAUDE_CODE_BETA));
    let r = build(&p, &target(1, "sk-x", json!({})), &req);
    assert_eq!(r.url().path(), "/v1/chat/completions");
    assert!(r.headers().get("anthropic-beta").is_none());
    let b = body_of(&r);
    let roles: Vec<&str> = b["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "system", "user"],
        "the system turn stays where it stood: {b}"
    );
    assert_eq!(
        b["messages"][0]["content"],
        "You are Claude Code.\n\nWork in /repo."
    );
    assert_eq!(
        b["messages"][4]["content"],
        "<system-reminder>Be concise.</system-reminder>"
    );
    assert_eq!(b["messages"][3]["tool_call_id"], "toolu_1");
    assert_eq!(b["reasoning_effort"], "high");
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
    for beta_only in [
        "context_management",
        "thinking",
        "output_config",
        "metadata",
    ] {
        assert!(b.get(beta_only).is_none(), "{beta_only}: {b}");
    }

    // Thinking alone sets the effort by its budget; disabled thinking sets none.
    for (thinking, effort) in [
        (
            json!({"type": "enabled", "budget_tokens": 1024}),
            json!("low"),
        ),
        (
            json!({"type": "enabled", "budget_tokens": 10000}),
            json!("medium"),
        ),
        (
            json!({"type": "enabled", "budget_tokens": 31999}),
            json!("high"),
        ),
        (json!({"type": "adaptive"}), json!("medium")),
        (json!({"type": "disabled"}), Value::Null),
    ] {
        let mut body = claude_code_request(false);
        body.as_object_mut().unwrap().remove("output_config");
        body["thinking"] = thinking.clone();
        let b = body_of(&build(
            &p,
            &target(1, "sk-x", json!({})),
            &messages_req(&body, None),
        ));
        assert_eq!(b["reasoning_effort"], effort, "{thinking}");
    }
}

#[test]
fn claude_code_requests_reach_gemini_channels() {
    let p = Provider::for_channel_type(25).unwrap();
    assert!(p.supports(Endpoint::Messages));
    assert!(p.bridge(Endpoint::Messages).is_some());
    let req = messages_req(&claude_code_request(true), Some(CLAUDE_CODE_BETA));
    let r = build(&p, &target(25, "g-key", json!({})), &req);
    assert!(
        r.url()
            .path()
            .ends_with("/models/claude-sonnet-4-5:streamGenerateContent"),
        "{}",
        r.url()
    );
    let b = body_of(&r);
    let system: Vec<&str> = b["systemInstruction"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        system,
        [
            "You are Claude Code.\n\nWork in /repo.",
            "<system-reminder>Be concise.</system-reminder>"
        ]
    );
    assert_eq!(
        b["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 24576, "includeThoughts": true})
    );
    assert_eq!(b["generationConfig"]["maxOutputTokens"], 32000);
    let roles: Vec<&str> = b["contents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "model", "user", "user"]);
    assert_eq!(
        b["contents"][2]["parts"][0]["functionResponse"]["name"],
        "Read"
    );
    assert!(b.get("context_management").is_none());
}

#[test]
fn gemini_answers_come_back_as_anthropic_messages_billed_by_geminis_count() {
    let p = Provider::for_channel_type(25).unwrap();
    let req = messages_req(&claude_code_request(false), None);
    let body = fixture("gemini", "generate_response.json");
    let a = p.answer(&req, body).unwrap();
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(v["type"], "message", "{v}");
    assert_eq!(v["role"], "assistant");
    assert!(v["content"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["type"] == "text"));
    // Gemini's own count: its cached and thinking tokens kept apart.
    let u = a.usage.unwrap();
    assert_eq!(
        (
            u.prompt_tokens,
            u.completion_tokens,
            u.cached_tokens,
            u.reasoning_tokens
        ),
        (120, 70, 64, 40)
    );
    assert_eq!(v["usage"]["output_tokens"], 70);
}

#[test]
fn gemini_streams_come_back_as_anthropic_events_at_every_split() {
    let p = Provider::for_channel_type(25).unwrap();
    let req = messages_req(&claude_code_request(true), None);
    let sse = fixture("gemini", "stream.sse");
    let mut whole: Option<Vec<Value>> = None;
    for cut in 0..=sse.len() {
        let mut t = p.stream_translator(&req).unwrap();
        assert!(t.is_bridged() && !t.passes_through());
        let mut tap = SseTap::new();
        let mut out = t.feed_tapped(&sse[..cut], &mut tap);
        out.extend(t.feed_tapped(&sse[cut..], &mut tap));
        out.extend(t.finish_tapped(&mut tap));
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("chat.completion.chunk"), "{text}");
        let events: Vec<Value> = text
            .split("\n\n")
            .filter(|e| !e.trim().is_empty())
            .map(|e| {
                let data = e.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
                let mut v: Value = serde_json::from_str(data).unwrap();
                if let Some(m) = v.get_mut("message").and_then(Value::as_object_mut) {
                    m.remove("id");
                }
                v
            })
            .collect();
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds.first(), Some(&"message_start"), "cut {cut}");
        assert_eq!(kinds.last(), Some(&"message_stop"), "cut {cut}");
        assert!(kinds.contains(&"content_block_delta"));
        // The tap read the OpenAI chunks in between: the usage is Gemini's.
        let o = tap.finish("m");
        assert!(o.saw_done, "cut {cut}");
        assert_eq!(
            t.usage().map(|u| (u.prompt_tokens, u.completion_tokens)),
            Some((9, 6))
        );
        match &whole {
            None => whole = Some(events),
            Some(w) => assert_eq!(&events, w, "cut {cut}"),
        }
    }
}

#[test]
fn a_request_the_channel_cannot_express_is_the_gateways_refusal() {
    // A document block has no chat counterpart: refused before any upstream call.
    let p = Provider::for_channel_type(1).unwrap();
    let body = json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}}
    ]}]});
    let req = messages_req(&body, None);
    let err = p
        .build(
            &reqwest::Client::new(),
            &target(1, "k", json!({})),
            &req,
            None,
            None,
        )
        .unwrap_err();
    assert!(
        matches!(&err, switchboard_relay::RelayError::InvalidRequest(m) if m.contains("document")),
        "{err:?}"
    );
    let f = switchboard_relay::UpstreamFailure::refused_here("x".into());
    assert!(f.gateway && !f.retryable && f.status == 400);
}
