//! OpenAI's Realtime API as a websocket: `GET /v1/realtime?model=...` (OpenAI) and
//! `GET /openai/realtime?api-version=...&deployment=...` (Azure, `api-key` header).
//!
//! - The handshake is recorded like any request (path, query, key, headers). `sk-mock-401`
//!   refuses it with 401 `invalid_api_key`, `sk-mock-500` with 500, `sk-mock-429` with 429;
//!   an Azure handshake without `api-version` or `deployment` gets 404.
//! - On connect the server sends `session.created`. It answers `session.update` with
//!   `session.updated`, `conversation.item.create` with `conversation.item.created`, and each
//!   `response.create` with `response.created`, one `response.text.delta` per piece of
//!   [`crate::CONTENT_CHUNKS`], `response.text.done` and a `response.done` whose usage is
//!   [`REALTIME_USAGE`]. Other events are ignored.
//! - `{"type": "mock.close", "code": N, "reason": "..."}` makes the server close with that code.
//! - With `sk-mock-slow`, the events answering `response.create` come after [`SLOW_RESPONSE`]
//!   (so that a client can leave while a response is in progress).
//! - With `sk-mock-stall`, `response.create` is answered with `response.created` and the first
//!   text delta only; the response then stays in progress until `response.cancel`, which ends it
//!   with a `response.done` of status `cancelled` and no usage (an upstream that reports none),
//!   or until the session closes (`mock.close` closes it mid-response).
//! - Binary frames are echoed, pings are answered with pongs, a close is answered with the same
//!   close.
//!
//! [`crate::MockUpstream::realtime_open`] counts the sessions still open and
//! [`crate::MockUpstream::realtime_events`] lists the type of every client event received,
//! [`crate::MockUpstream::realtime_event_bodies`] the events themselves.

use crate::{request_key, status_code, Recorded, Shared, CONTENT, CONTENT_CHUNKS};
use actix_web::{web, HttpRequest, HttpResponse};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, Session};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `response.usage` of every `response.done`: 30 input tokens (10 text, 20 audio, 8 of them
/// cached) and 50 output tokens (20 text, 30 audio).
/// The pause before a response of an `sk-mock-slow` session.
pub const SLOW_RESPONSE: std::time::Duration = std::time::Duration::from_millis(300);

pub const REALTIME_USAGE: RealtimeUsage = RealtimeUsage {
    input_tokens: 30,
    input_text_tokens: 10,
    input_audio_tokens: 20,
    cached_tokens: 8,
    output_tokens: 50,
    output_text_tokens: 20,
    output_audio_tokens: 30,
};

/// The token counts the mock reports per turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RealtimeUsage {
    pub input_tokens: i64,
    pub input_text_tokens: i64,
    pub input_audio_tokens: i64,
    pub cached_tokens: i64,
    pub output_tokens: i64,
    pub output_text_tokens: i64,
    pub output_audio_tokens: i64,
}

/// Sessions open now and the client events received.
#[derive(Debug, Default)]
pub(crate) struct RealtimeState {
    pub(crate) open: AtomicUsize,
    pub(crate) events: Mutex<Vec<String>>,
    pub(crate) bodies: Mutex<Vec<Value>>,
}

impl RealtimeState {
    pub(crate) fn events(&self) -> Vec<String> {
        match self.events.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    pub(crate) fn bodies(&self) -> Vec<Value> {
        match self.bodies.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    fn push(&self, kind: &str, event: &Value) {
        match self.events.lock() {
            Ok(mut g) => g.push(kind.to_owned()),
            Err(p) => p.into_inner().push(kind.to_owned()),
        }
        match self.bodies.lock() {
            Ok(mut g) => g.push(event.clone()),
            Err(p) => p.into_inner().push(event.clone()),
        }
    }
}

pub(crate) fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/realtime", web::get().to(open))
        .route("/openai/realtime", web::get().to(open));
}

fn query_has(req: &HttpRequest, name: &str) -> bool {
    req.query_string()
        .split('&')
        .any(|kv| kv.split('=').next() == Some(name))
}

async fn open(
    req: HttpRequest,
    body: web::Payload,
    shared: web::Data<Shared>,
) -> actix_web::Result<HttpResponse> {
    let key = request_key(&req);
    if shared.record {
        shared.lock().push(Recorded {
            path: req.path().to_owned(),
            query: req.query_string().to_owned(),
            authorization: req
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned(),
            key: key.clone(),
            headers: req
                .headers()
                .iter()
                .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect(),
            body: Value::Null,
        });
    }
    let refuse = |status: u16, code: &str, message: &str| {
        HttpResponse::build(status_code(status)).json(
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}}),
        )
    };
    match key.as_str() {
        "sk-mock-401" => {
            return Ok(refuse(
                401,
                "invalid_api_key",
                "Incorrect API key provided: sk-mock-401.",
            ))
        }
        "sk-mock-429" => {
            return Ok(refuse(
                429,
                "rate_limit_exceeded",
                "Rate limit reached for requests.",
            ))
        }
        "sk-mock-500" => {
            return Ok(refuse(
                500,
                "server_error",
                "The server had an error while processing your request.",
            ))
        }
        _ => {}
    }
    if req.path().starts_with("/openai/")
        && !(query_has(&req, "api-version") && query_has(&req, "deployment"))
    {
        return Ok(HttpResponse::NotFound()
            .json(json!({"error": {"code": "404", "message": "Resource not found"}})));
    }
    let model = url_param(&req, "model")
        .or_else(|| url_param(&req, "deployment"))
        .unwrap_or_default();
    let slow = key == "sk-mock-slow";
    let stall = key == "sk-mock-stall";
    let (resp, session, stream) = actix_ws::handle(&req, body)?;
    let stream = stream
        .max_frame_size(16 << 20)
        .aggregate_continuations()
        .max_continuation_size(16 << 20);
    shared.realtime.open.fetch_add(1, Ordering::SeqCst);
    actix_web::rt::spawn(async move {
        serve(&shared, session, stream, &model, slow, stall).await;
        shared.realtime.open.fetch_sub(1, Ordering::SeqCst);
    });
    Ok(resp)
}

fn url_param(req: &HttpRequest, name: &str) -> Option<String> {
    req.query_string().split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| v.to_owned())
    })
}

async fn serve(
    shared: &Shared,
    mut session: Session,
    mut stream: actix_ws::AggregatedMessageStream,
    model: &str,
    slow: bool,
    stall: bool,
) {
    let seq = || shared.seq.fetch_add(1, Ordering::Relaxed);
    // `sk-mock-stall`: the response left in progress.
    let mut stalled: Option<String> = None;
    let created = json!({"type": "session.created", "event_id": format!("event_{}", seq()),
        "session": {"id": format!("sess_{}", seq()), "object": "realtime.session", "model": model,
            "modalities": ["text", "audio"]}});
    if session.text(created.to_string()).await.is_err() {
        return;
    }
    while let Some(msg) = stream.next().await {
        let Ok(msg) = msg else { break };
        let sent = match msg {
            AggregatedMessage::Text(text) => {
                let event: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let kind = event["type"].as_str().unwrap_or("").to_owned();
                shared.realtime.push(&kind, &event);
                if kind == "mock.close" {
                    let code = event["code"].as_u64().and_then(|c| u16::try_from(c).ok());
                    let reason = CloseReason {
                        code: CloseCode::from(code.unwrap_or(1000)),
                        description: event["reason"].as_str().map(str::to_owned),
                    };
                    let _ = session.close(Some(reason)).await;
                    return;
                }
                if slow && kind == "response.create" {
                    actix_web::rt::time::sleep(SLOW_RESPONSE).await;
                }
                let replies = match (stall, kind.as_str()) {
                    (true, "response.create") => {
                        let mut out = answers(&kind, &event, &seq);
                        out.truncate(2);
                        stalled = out[0]["response"]["id"].as_str().map(str::to_owned);
                        out
                    }
                    (true, "response.cancel") => stalled
                        .take()
                        .map(|id| {
                            vec![json!({"type": "response.done", "event_id": format!("event_{}", seq()),
                                "response": {"id": id, "object": "realtime.response",
                                    "status": "cancelled", "output": [], "usage": null}})]
                        })
                        .unwrap_or_default(),
                    _ => answers(&kind, &event, &seq),
                };
                let mut ok = true;
                for reply in replies {
                    if session.text(reply.to_string()).await.is_err() {
                        ok = false;
                        break;
                    }
                }
                ok
            }
            AggregatedMessage::Binary(b) => session.binary(b).await.is_ok(),
            AggregatedMessage::Ping(p) => session.pong(&p).await.is_ok(),
            AggregatedMessage::Pong(_) => true,
            AggregatedMessage::Close(reason) => {
                let _ = session.close(reason).await;
                return;
            }
        };
        if !sent {
            return;
        }
    }
    let _ = session.close(None).await;
}

/// The server events answering one client event.
fn answers(kind: &str, event: &Value, seq: &dyn Fn() -> u64) -> Vec<Value> {
    let id = |prefix: &str| format!("{prefix}_{}", seq());
    match kind {
        "session.update" => vec![json!({"type": "session.updated", "event_id": id("event"),
            "session": event.get("session").cloned().unwrap_or_else(|| json!({}))})],
        "conversation.item.create" => {
            let mut item = event.get("item").cloned().unwrap_or_else(|| json!({}));
            if item.get("id").is_none() {
                item["id"] = json!(id("item"));
            }
            vec![
                json!({"type": "conversation.item.created", "event_id": id("event"),
                "previous_item_id": null, "item": item}),
            ]
        }
        "response.create" => {
            let response_id = id("resp");
            let item_id = id("item");
            let mut out = vec![json!({"type": "response.created", "event_id": id("event"),
                "response": {"id": response_id, "object": "realtime.response",
                    "status": "in_progress", "output": [], "usage": null}})];
            for piece in CONTENT_CHUNKS {
                out.push(
                    json!({"type": "response.text.delta", "event_id": id("event"),
                    "response_id": response_id, "item_id": item_id, "output_index": 0,
                    "content_index": 0, "delta": piece}),
                );
            }
            out.push(
                json!({"type": "response.text.done", "event_id": id("event"),
                "response_id": response_id, "item_id": item_id, "output_index": 0,
                "content_index": 0, "text": CONTENT}),
            );
            let u = REALTIME_USAGE;
            out.push(json!({"type": "response.done", "event_id": id("event"),
                "response": {"id": response_id, "object": "realtime.response",
                    "status": "completed",
                    "output": [{"id": item_id, "type": "message", "role": "assistant",
                        "content": [{"type": "text", "text": CONTENT}]}],
                    "usage": {"total_tokens": u.input_tokens + u.output_tokens,
                        "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                        "input_token_details": {"text_tokens": u.input_text_tokens,
                            "audio_tokens": u.input_audio_tokens,
                            "cached_tokens": u.cached_tokens},
                        "output_token_details": {"text_tokens": u.output_text_tokens,
                            "audio_tokens": u.output_audio_tokens}}}}));
            out
        }
        _ => Vec::new(),
    }
}
