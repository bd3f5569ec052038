//! Anthropic Messages: `POST /v1/messages` (whole answers and the SSE event sequence, text or
//! tool use) and `GET /v1/models`.
//!
//! Usage: 11 input and 7 output tokens; with `sk-mock-cache` also 1000 cache-read and 200
//! cache-write input tokens. A request with `tools` whose last message is not a tool result is
//! answered with a `tool_use` block calling the first tool with `{"query":"mock"}`.

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

/// The tool to call, when the request offers tools and does not answer a tool call.
fn tool_to_call(ctx: &Ctx) -> Option<String> {
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
            json!([{"type": "tool_use", "id": format!("toolu_mock{}", ctx.id), "name": name, "input": {"query": "mock"}}]),
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
        for part in ["{\"query\":", " \"mock\"}"] {
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
