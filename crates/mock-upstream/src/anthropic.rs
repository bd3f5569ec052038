//! Anthropic Messages: `POST /v1/messages` (whole answers and the SSE event sequence, text or
//! tool use) and `GET /v1/models`.
//!
//! Usage: 11 input and 7 output tokens; with `sk-mock-cache` also 1000 cache-read and 200
//! cache-write input tokens. A request with `tools` whose last message is not a tool result is
//! answered with a `tool_use` block calling the first tool with `{"query":"mock"}`; a forced
//! `tool_choice` (`{"type":"tool","name"}`) calls that tool with [`super::sample_json`] of its
//! `input_schema` (how structured output is asked of Claude). As Anthropic does, a request is
//! refused with 400 when a forced tool is not among `tools` or a tool's `input_schema` has a
//! `type` other than `object` ([`check`]).

use super::{sse, Ctx, Mode, CONTENT, CONTENT_CHUNKS};
use actix_web::HttpResponse;
use bytes::Bytes;
use serde_json::{json, Value};

fn usage(ctx: &Ctx, output: i64) -> Value {
    let (read, write) = if ctx.mode == Mode::Cache {
        (1000, 200)
    } else {
        (0, 0)
    };
    json!({
        "input_tokens": 11,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": output,
    })
}

/// What Anthropic refuses in `tools` / `tool_choice`: the 400 message, `None` when fine.
pub(super) fn check(body: &Value) -> Option<String> {
    let tools = body.get("tools").and_then(Value::as_array);
    for (i, t) in tools.into_iter().flatten().enumerate() {
        let kind = t.pointer("/input_schema/type");
        if t.get("type").is_none() && kind.is_some_and(|k| k != "object") {
            return Some(format!(
                "tools.{i}.custom.input_schema.type: Input should be 'object'"
            ));
        }
    }
    if let Some(name) = forced_tool(body) {
        let known = tools
            .into_iter()
            .flatten()
            .any(|t| t.get("name").and_then(Value::as_str) == Some(name));
        if !known {
            return Some(format!(
                "tool_choice.name: Tool '{name}' not found in provided tools"
            ));
        }
    }
    None
}

/// The name in `tool_choice: {"type": "tool", "name"}`.
fn forced_tool(body: &Value) -> Option<&str> {
    let c = body.get("tool_choice")?;
    (c.get("type")? == "tool").then(|| c.get("name")?.as_str())?
}

/// The input of a call of `name`: the sample of its schema when the tool is forced, else
/// `{"query":"mock"}`.
fn tool_input(ctx: &Ctx, name: &str) -> Value {
    if forced_tool(ctx.body) != Some(name) {
        return json!({"query": "mock"});
    }
    let tools = ctx.body.get("tools").and_then(Value::as_array);
    let schema = tools
        .into_iter()
        .flatten()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|t| t.get("input_schema"));
    schema.map_or(json!({}), |s| super::sample_json(s, s))
}

/// The tool to call, when the request offers tools and does not answer a tool call (the forced
/// one when `tool_choice` names one).
fn tool_to_call(ctx: &Ctx) -> Option<String> {
    if let Some(name) = forced_tool(ctx.body) {
        return Some(name.to_owned());
    }
    let name = ctx
        .body
        .pointer("/tools/0/name")
        .and_then(Value::as_str)?
        .to_owned();
    let last = ctx
        .body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())?;
    let answers_tool = last
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"));
    (!answers_tool).then_some(name)
}

pub(super) fn message(ctx: &Ctx) -> Value {
    let (content, stop) = match tool_to_call(ctx) {
        Some(name) => (
            json!([{"type": "tool_use", "id": format!("toolu_mock{}", ctx.id), "name": name, "input": tool_input(ctx, &name)}]),
            "tool_use",
        ),
        None => (json!([{"type": "text", "text": CONTENT}]), "end_turn"),
    };
    json!({
        "id": format!("msg_mock{}", ctx.id),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": usage(ctx, 7),
    })
}

fn event(name: &str, v: &Value) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    let _ = serde_json::to_writer(&mut out, v);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The Messages event sequence: (event name, data), and whether the stream is cut after them.
fn stream_events(ctx: &Ctx) -> (Vec<(&'static str, Value)>, bool) {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_mock{}", ctx.id), "type": "message", "role": "assistant",
            "model": ctx.model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": usage(ctx, 1),
        }}),
    )];
    let tool = tool_to_call(ctx);
    let stop = if let Some(name) = &tool {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": format!("toolu_mock{}", ctx.id), "name": name, "input": {}}}),
        ));
        // The input as partial JSON, cut in two (`{"query": "mock"}` as Anthropic spaces it).
        let input = if forced_tool(ctx.body) == Some(name.as_str()) {
            tool_input(ctx, name).to_string()
        } else {
            "{\"query\": \"mock\"}".to_owned()
        };
        let mid = if input.starts_with("{\"query\":") {
            "{\"query\":".len()
        } else {
            (0..=input.len() / 2)
                .rev()
                .find(|&i| input.is_char_boundary(i))
                .unwrap_or(0)
        };
        for part in [&input[..mid], &input[mid..]] {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": part}}),
            ));
        }
        "tool_use"
    } else {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ));
        events.push(("ping", json!({"type": "ping"})));
        for piece in CONTENT_CHUNKS {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        "end_turn"
    };
    if ctx.mode == Mode::Cut {
        events.truncate(4);
        return (events, true);
    }
    events.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 7}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    (events, false)
}

pub(super) fn stream(ctx: &Ctx) -> HttpResponse {
    let (events, cut) = stream_events(ctx);
    let events = events.iter().map(|(n, v)| event(n, v)).collect();
    sse(events, ctx.delay, cut)
}

/// Bedrock's `invoke-with-response-stream`: the same events, each base64-encoded in the
/// `bytes` field of a binary event stream `chunk` frame.
pub(super) fn bedrock_stream(ctx: &Ctx) -> HttpResponse {
    use base64::Engine as _;
    let (events, cut) = stream_events(ctx);
    let frames = events
        .iter()
        .map(|(_, v)| {
            let b64 = base64::engine::general_purpose::STANDARD.encode(v.to_string());
            Bytes::from(super::bedrock::frame(
                &[
                    (":event-type", "chunk"),
                    (":content-type", "application/json"),
                    (":message-type", "event"),
                ],
                json!({ "bytes": b64 }).to_string().as_bytes(),
            ))
        })
        .collect();
    super::stream_body(frames, ctx.delay, cut, "application/vnd.amazon.eventstream")
}

pub(super) fn models() -> Value {
    let ids = ["claude-sonnet-4-20250514", "claude-3-5-haiku-20241022"];
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"type": "model", "id": id, "display_name": id, "created_at": "2025-05-22T00:00:00Z"}))
        .collect();
    json!({"data": data, "has_more": false, "first_id": ids[0], "last_id": ids[1]})
}
