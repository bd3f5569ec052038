//! Gemini's own protocol for Gemini clients (`/gemini/{version}/...`): `generateContent` and
//! `streamGenerateContent` through the relay path ([`super::handler::relay_parsed`]),
//! `countTokens` and the embeddings methods ([`super::gemini_methods`]), the model list, and
//! Google's error shape for paths that match nothing.

use super::edge::refuse;
use super::handler::{allowed_models, authenticate, option_enabled, path_not_found, relay_parsed};
use super::AuthToken;
use crate::AppState;
use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use bytes::Bytes;
use futures_util::Stream;
use serde_json::{json, Value};
use std::pin::Pin;
use std::task::{Context, Poll};
use switchboard_relay::endpoint::Endpoint;
use switchboard_relay::refusal::{Protocol, Refusal};
use switchboard_relay::request::RelayRequest;

/// `POST /gemini/{version}/models/{model}:{method}` (`generateContent`,
/// `streamGenerateContent`): Gemini clients, served natively by Gemini channels; `countTokens`,
/// `embedContent` and `batchEmbedContents` are answered by [`super::gemini_methods`]. Errors
/// come in Google's shape.
pub async fn gemini(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    if !option_enabled(&state, "GeminiAPIEnabled") {
        return refuse(Protocol::Gemini, &path_not_found(&req));
    }
    let (_version, target) = path.into_inner();
    let (model, stream) = match target.rsplit_once(':') {
        Some((m, "generateContent")) => (m.to_owned(), false),
        Some((m, "streamGenerateContent")) => (m.to_owned(), true),
        Some((m, "countTokens")) => {
            return super::gemini_methods::count_tokens(state, req, body, m).await
        }
        Some((m, "embedContent")) => {
            return super::gemini_methods::embed(state, req, body, m, false).await
        }
        Some((m, "batchEmbedContents")) => {
            return super::gemini_methods::embed(state, req, body, m, true).await
        }
        _ => return refuse(Protocol::Gemini, &path_not_found(&req)),
    };
    if body.len() > state.config.relay_body_bytes {
        return refuse(
            Protocol::Gemini,
            &Refusal::too_large(state.config.relay_body_bytes),
        );
    }
    // Without `alt=sse`, Google streams one JSON array of responses.
    let array = stream
        && !url::form_urlencoded::parse(req.query_string().as_bytes())
            .any(|(k, v)| k == "alt" && v == "sse");
    let resp = match relay_parsed(state, req, body, Endpoint::GenerateContent, |b, _| {
        RelayRequest::parse_gemini(&model, stream, b)
    })
    .await
    {
        Ok(resp) => resp,
        Err(r) => return refuse(Protocol::Gemini, &r),
    };
    let is_sse = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    if !(array && is_sse) {
        return resp;
    }
    let mut res = HttpResponse::build(resp.status());
    for (name, value) in resp.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            res.insert_header((name.clone(), value.clone()));
        }
    }
    res.insert_header((header::CONTENT_TYPE, "application/json"))
        .streaming(SseToJsonArray {
            body: resp.into_body(),
            reader: switchboard_relay::sse::SseReader::new(),
            started: false,
            done: false,
        })
}

/// An SSE response body re-framed as the JSON array Google streams without `alt=sse`: `[`,
/// the events' data separated by `,\r\n`, `]` (comments, such as keep-alives, dropped).
struct SseToJsonArray {
    body: actix_web::body::BoxBody,
    reader: switchboard_relay::sse::SseReader,
    started: bool,
    done: bool,
}

impl SseToJsonArray {
    fn frame(&mut self, events: Vec<switchboard_relay::sse::SseEvent>, out: &mut Vec<u8>) {
        for e in events {
            if e.data.trim().is_empty() {
                continue;
            }
            out.extend_from_slice(if self.started { b",\r\n" } else { b"[" });
            self.started = true;
            out.extend_from_slice(e.data.as_bytes());
        }
    }
}

impl Stream for SseToJsonArray {
    type Item = Result<Bytes, actix_web::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        use actix_web::body::MessageBody;
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            match Pin::new(&mut this.body).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    let mut events = Vec::new();
                    this.reader.feed(&chunk, &mut events);
                    let mut out = Vec::new();
                    this.frame(events, &mut out);
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Bytes::from(out))));
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(actix_web::error::ErrorBadGateway(
                        e.to_string(),
                    ))));
                }
                Poll::Ready(None) => {
                    this.done = true;
                    let mut events = Vec::new();
                    this.reader.finish(&mut events);
                    let mut out = Vec::new();
                    this.frame(events, &mut out);
                    out.extend_from_slice(if this.started { b"]" } else { b"[]" });
                    return Poll::Ready(Some(Ok(Bytes::from(out))));
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// `GET /gemini/{version}/models`: the models this key may use that a Gemini channel serves,
/// in Gemini's list shape.
pub async fn gemini_models(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    if !option_enabled(&state, "GeminiAPIEnabled") {
        return refuse(Protocol::Gemini, &path_not_found(&req));
    }
    let (token, _) = match authenticate(&state, &req).await {
        Ok(t) => t,
        Err(r) => return refuse(Protocol::Gemini, &r),
    };
    let models: Vec<Value> = gemini_served_models(&state, &token)
        .iter()
        .map(|m| gemini_model_json(m))
        .collect();
    HttpResponse::Ok().json(json!({ "models": models }))
}

/// `GET /gemini/{version}/models/{model}`.
pub async fn gemini_model(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    if !option_enabled(&state, "GeminiAPIEnabled") {
        return refuse(Protocol::Gemini, &path_not_found(&req));
    }
    let (token, _) = match authenticate(&state, &req).await {
        Ok(t) => t,
        Err(r) => return refuse(Protocol::Gemini, &r),
    };
    let (_version, model) = path.into_inner();
    let model = model.strip_prefix("models/").unwrap_or(&model).to_owned();
    if gemini_served_models(&state, &token).contains(&model) {
        HttpResponse::Ok().json(gemini_model_json(&model))
    } else {
        refuse(Protocol::Gemini, &Refusal::model_not_found(&model))
    }
}

/// The key's models that a channel of its group serves to Gemini clients (Gemini channels as
/// they are, every other channel that serves chat through the chat bridge).
fn gemini_served_models(state: &AppState, token: &AuthToken) -> Vec<String> {
    let snapshot = state.relay.snapshot();
    allowed_models(state, token)
        .into_iter()
        .filter(|m| {
            snapshot.candidates(token.group(), m).iter().any(|c| {
                snapshot.channel(c.id).is_some_and(|ch| {
                    ch.provider
                        .as_ref()
                        .is_some_and(|p| p.supports(Endpoint::GenerateContent))
                })
            })
        })
        .collect()
}

fn gemini_model_json(model: &str) -> Value {
    // An embedding model (by its name, as Gemini's and OpenAI's are named) embeds; the others
    // generate.
    let methods = if model.contains("embed") {
        json!(["embedContent", "batchEmbedContents", "countTokens"])
    } else {
        json!(["generateContent", "streamGenerateContent", "countTokens"])
    };
    json!({
        "name": format!("models/{model}"),
        "displayName": model,
        "supportedGenerationMethods": methods,
    })
}

/// `ANY /gemini/...` that matches no route, in Google's error shape.
pub async fn gemini_not_found(req: HttpRequest) -> HttpResponse {
    refuse(Protocol::Gemini, &path_not_found(&req))
}
