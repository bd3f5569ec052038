//! Gemini: `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` (SSE with
//! `alt=sse`), `:batchEmbedContents`, `:embedContent`, `:countTokens` and `GET /v1beta/models`.
//!
//! Usage: 11 prompt and 7 candidate tokens; `sk-mock-think` adds 5 thinking tokens,
//! `sk-mock-cache` reports 8 of the prompt tokens as cached; `sk-mock-nousage` reports none.
//! A request with function declarations whose last turn is not a function response is answered
//! with a `functionCall` of the first function with `{"query":"mock"}`. With
//! `generationConfig.responseMimeType: "application/json"` the text is JSON: the
//! [`super::sample_json`] of `responseJsonSchema` (or `responseSchema`), `{}` without a schema
//! (streamed in two pieces). As Gemini does, [`check`] refuses with 400 a schema without the
//! JSON MIME type, and `responseSchema` together with `responseJsonSchema`.

use super::{embedding_values, sse, Ctx, Mode, CONTENT, CONTENT_CHUNKS, EMBEDDING_DIMS};
use actix_web::HttpResponse;
use bytes::Bytes;
use serde_json::{json, Value};

fn usage(ctx: &Ctx, candidates: i64) -> Option<Value> {
    if !ctx.usage() {
        return None;
    }
    let mut u = json!({"promptTokenCount": 11, "candidatesTokenCount": candidates, "totalTokenCount": 11 + candidates});
    if ctx.mode == Mode::Think {
        u["thoughtsTokenCount"] = json!(5);
        u["totalTokenCount"] = json!(16 + candidates);
    }
    if ctx.mode == Mode::Cache {
        u["cachedContentTokenCount"] = json!(8);
    }
    Some(u)
}

fn function_to_call(ctx: &Ctx) -> Option<String> {
    let name = ctx
        .body
        .pointer("/tools/0/functionDeclarations/0/name")
        .and_then(Value::as_str)?
        .to_owned();
    let last = ctx
        .body
        .get("contents")
        .and_then(Value::as_array)
        .and_then(|c| c.last())?;
    let answers = last
        .get("parts")
        .and_then(Value::as_array)
        .is_some_and(|p| p.iter().any(|p| p.get("functionResponse").is_some()));
    (!answers).then_some(name)
}

/// What Gemini refuses in `generationConfig`: the 400 message, `None` when fine.
pub(super) fn check(body: &Value) -> Option<String> {
    let config = body.get("generationConfig")?;
    let json_schema = config.get("responseJsonSchema").is_some();
    let schema = config.get("responseSchema").is_some();
    if json_schema && schema {
        return Some("responseJsonSchema and responseSchema cannot both be set.".into());
    }
    if (json_schema || schema)
        && config.get("responseMimeType").and_then(Value::as_str) != Some("application/json")
    {
        return Some(
            "responseMimeType must be application/json when a response schema is set.".into(),
        );
    }
    None
}

/// The JSON text of a structured answer, when the request asks for JSON.
fn json_answer(ctx: &Ctx) -> Option<String> {
    let config = ctx.body.get("generationConfig")?;
    if config.get("responseMimeType").and_then(Value::as_str) != Some("application/json") {
        return None;
    }
    let schema = config
        .get("responseJsonSchema")
        .or_else(|| config.get("responseSchema"));
    Some(
        schema
            .map_or(json!({}), |s| super::sample_json(s, s))
            .to_string(),
    )
}

fn response(ctx: &Ctx, parts: Value, finish: Option<&str>, candidates: i64) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(f) = finish {
        candidate["finishReason"] = json!(f);
    }
    let mut v = json!({
        "candidates": [candidate],
        "modelVersion": ctx.model,
        "responseId": format!("mockresp{}", ctx.id),
    });
    if let Some(u) = usage(ctx, candidates) {
        v["usageMetadata"] = u;
    }
    v
}

pub(super) fn generate(ctx: &Ctx) -> Value {
    match function_to_call(ctx) {
        Some(name) => response(
            ctx,
            json!([{"functionCall": {"name": name, "args": {"query": "mock"}}}]),
            Some("STOP"),
            7,
        ),
        None => {
            let text = json_answer(ctx).unwrap_or_else(|| CONTENT.to_owned());
            response(ctx, json!([{ "text": text }]), Some("STOP"), 7)
        }
    }
}

fn data(v: &Value) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"data: ");
    let _ = serde_json::to_writer(&mut out, v);
    out.extend_from_slice(b"\r\n\r\n");
    Bytes::from(out)
}

pub(super) fn stream(ctx: &Ctx) -> HttpResponse {
    let mut events = Vec::new();
    if let Some(name) = function_to_call(ctx) {
        events.push(data(&response(
            ctx,
            json!([{"functionCall": {"name": name, "args": {"query": "mock"}}}]),
            Some("STOP"),
            7,
        )));
        return sse(events, ctx.delay, false);
    }
    let json_text = json_answer(ctx);
    let halves;
    let pieces: &[&str] = match &json_text {
        Some(text) => {
            let mid = (0..=text.len() / 2)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            halves = [&text[..mid], &text[mid..]];
            &halves
        }
        None => &CONTENT_CHUNKS,
    };
    let last = pieces.len() - 1;
    for (i, piece) in pieces.iter().enumerate() {
        let finish = (i == last).then_some("STOP");
        let candidates = if i == last { 7 } else { i as i64 + 1 };
        events.push(data(&response(
            ctx,
            json!([{ "text": piece }]),
            finish,
            candidates,
        )));
    }
    if ctx.mode == Mode::Cut {
        events.truncate(2);
        return sse(events, ctx.delay, true);
    }
    sse(events, ctx.delay, false)
}

pub(super) fn embed(ctx: &Ctx) -> Value {
    let requests = ctx
        .body
        .get("requests")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let embeddings: Vec<Value> = requests
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let dims = r
                .get("outputDimensionality")
                .and_then(Value::as_u64)
                .map_or(EMBEDDING_DIMS, |d| (d as usize).clamp(1, 8192));
            json!({"values": embedding_values(i, dims)})
        })
        .collect();
    json!({ "embeddings": embeddings })
}

/// `:embedContent`: `{"embedding": {"values": [...]}}` (`outputDimensionality` honoured).
pub(super) fn embed_one(ctx: &Ctx) -> Value {
    let dims = ctx
        .body
        .get("outputDimensionality")
        .and_then(Value::as_u64)
        .map_or(EMBEDDING_DIMS, |d| (d as usize).clamp(1, 8192));
    json!({"embedding": {"values": embedding_values(0, dims)}})
}

pub(super) fn models() -> Value {
    let names = ["gemini-2.0-flash", "gemini-2.5-pro", "gemini-embedding-001"];
    let models: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": format!("models/{n}"), "displayName": n, "supportedGenerationMethods": ["generateContent"]}))
        .collect();
    json!({ "models": models })
}
