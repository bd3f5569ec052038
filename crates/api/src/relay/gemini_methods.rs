//! Gemini clients' methods besides generating, on `/gemini/{version}/models/{model}:{method}`
//! (see [`super::gemini::gemini`]), answered in Google's shapes:
//!
//! - `countTokens`: counted by the upstream when a Gemini channel serves the model (dispatched
//!   like any call, free of charge, no consume log), else by the relay's tokenizer;
//!   `{"totalTokens": n}`. The body is `{"contents": [...]}` or
//!   `{"generateContentRequest": {...}}`.
//! - `embedContent` and `batchEmbedContents`: relayed as OpenAI embeddings (billed as
//!   embeddings are) to any channel that serves them: OpenAI-protocol channels get
//!   `/v1/embeddings`, Gemini channels `:batchEmbedContents` (see
//!   `switchboard_relay::providers::gemini::embeddings_body`); the answer comes back as
//!   `{"embedding": {"values"}}` or `{"embeddings": [{"values"}]}`. `taskType` and `title` have
//!   no OpenAI counterpart and are not passed on.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use bytes::Bytes;
use serde_json::{json, Map, Value};
use switchboard_domain::ErrorCode;
use switchboard_relay::endpoint::Endpoint;
use switchboard_relay::error::RelayError;
use switchboard_relay::refusal::{Protocol, Refusal};
use switchboard_relay::request::RelayRequest;
use switchboard_relay::tokenizer;

use super::edge::refuse;
use super::handler::{authenticate, relay_parsed, upstream_count};
use crate::AppState;

/// `POST .../models/{model}:countTokens`.
pub async fn count_tokens(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    model: &str,
) -> HttpResponse {
    count_tokens_answer(state, req, body, model)
        .await
        .unwrap_or_else(|r| refuse(Protocol::Gemini, &r))
}

async fn count_tokens_answer(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    model: &str,
) -> Result<HttpResponse, Refusal> {
    if body.len() > state.config.relay_body_bytes {
        return Err(Refusal::too_large(state.config.relay_body_bytes));
    }
    let (token, pin) = authenticate(&state, &req).await?;
    let rreq = RelayRequest::parse_gemini(model, false, &body)?;
    // The request counted: the body's, or the `generateContentRequest` it wraps.
    let counted = match rreq.body.get("generateContentRequest") {
        Some(inner @ Value::Object(_)) => inner,
        None | Some(Value::Null) => &rreq.body,
        Some(_) => {
            return Err(Refusal::invalid(
                ErrorCode::InvalidRequest,
                "generateContentRequest must be an object.",
            ))
        }
    };
    if !counted.get("contents").is_some_and(Value::is_array) {
        return Err(Refusal::invalid(
            ErrorCode::InvalidRequest,
            "contents: an array of contents is required.",
        ));
    }
    match upstream_count(&state, &token, pin, &rreq, None).await? {
        Some(answer) => Ok(HttpResponse::Ok()
            .content_type("application/json")
            .body(answer)),
        None => {
            let n = tokenizer::estimate_prompt(&rreq.model, Endpoint::GenerateContent, counted);
            Ok(HttpResponse::Ok().json(json!({ "totalTokens": n })))
        }
    }
}

/// `POST .../models/{model}:embedContent` (`batch` false) and `:batchEmbedContents`.
pub async fn embed(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    model: &str,
    batch: bool,
) -> HttpResponse {
    embed_answer(state, req, body, model, batch)
        .await
        .unwrap_or_else(|r| refuse(Protocol::Gemini, &r))
}

async fn embed_answer(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    model: &str,
    batch: bool,
) -> Result<HttpResponse, Refusal> {
    if body.len() > state.config.relay_body_bytes {
        return Err(Refusal::too_large(state.config.relay_body_bytes));
    }
    let resp = relay_parsed(state, req, body, Endpoint::Embeddings, |b, _| {
        embeddings_request(model, b, batch)
    })
    .await?;
    if !resp.status().is_success() {
        return Ok(resp);
    }
    let mut res = HttpResponse::build(resp.status());
    for (name, value) in resp.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            res.insert_header((name.clone(), value.clone()));
        }
    }
    let bytes = actix_web::body::to_bytes(resp.into_body())
        .await
        .map_err(|_| unreadable_answer())?;
    let out = gemini_embeddings(&bytes, batch).ok_or_else(unreadable_answer)?;
    Ok(res.json(out))
}

fn unreadable_answer() -> Refusal {
    Refusal::new(
        502,
        ErrorCode::UpstreamInvalidResponse,
        "unexpected upstream answer: not an embeddings list",
    )
}

fn invalid(msg: impl Into<String>) -> RelayError {
    RelayError::InvalidRequest(msg.into())
}

/// The OpenAI embeddings request for a Gemini `embedContent` (`batch` false) or
/// `batchEmbedContents` body: one input per content (its text parts joined by line breaks),
/// `outputDimensionality` as `dimensions` (the same for every request of a batch).
pub fn embeddings_request(
    model: &str,
    bytes: &[u8],
    batch: bool,
) -> Result<RelayRequest, RelayError> {
    let body: Value = switchboard_relay::wire::from_json_bytes(bytes)
        .map_err(|e| invalid(format!("the request body is not valid JSON: {e}")))?;
    let obj = body
        .as_object()
        .ok_or_else(|| invalid("the request body must be a JSON object"))?;
    let model = model.trim();
    let model = model.strip_prefix("models/").unwrap_or(model);
    if model.is_empty() {
        return Err(RelayError::MissingModel);
    }
    let requests: Vec<(String, &Map<String, Value>)> = if batch {
        match obj.get("requests") {
            Some(Value::Array(list)) if !list.is_empty() => list
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    r.as_object()
                        .map(|r| (format!("requests[{i}]."), r))
                        .ok_or_else(|| invalid(format!("requests[{i}] must be an object")))
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(invalid("requests must be a non-empty array")),
        }
    } else {
        vec![(String::new(), obj)]
    };
    let mut inputs = Vec::with_capacity(requests.len());
    let mut dimensions: Option<Option<u64>> = None;
    for (at, r) in &requests {
        inputs.push(Value::String(content_text(at, r)?));
        let dims = match r.get("outputDimensionality") {
            None | Some(Value::Null) => None,
            Some(d) => Some(d.as_u64().filter(|d| *d > 0).ok_or_else(|| {
                invalid(format!(
                    "{at}outputDimensionality must be a positive integer"
                ))
            })?),
        };
        match dimensions {
            None => dimensions = Some(dims),
            Some(first) if first != dims => {
                return Err(invalid(
                    "every request of a batch must ask the same outputDimensionality",
                ))
            }
            Some(_) => {}
        }
    }
    let mut openai = Map::new();
    openai.insert("model".into(), json!(model));
    openai.insert(
        "input".into(),
        if batch {
            Value::Array(inputs)
        } else {
            inputs.pop().unwrap_or_default()
        },
    );
    if let Some(Some(d)) = dimensions {
        openai.insert("dimensions".into(), json!(d));
    }
    Ok(RelayRequest {
        endpoint: Endpoint::Embeddings,
        body: Value::Object(openai),
        model: model.to_owned(),
        stream: false,
        max_tokens: None,
        anthropic_beta: None,
        bridged: Default::default(),
    })
}

/// The text of an embed request's `content`: its text parts joined by line breaks.
fn content_text(at: &str, r: &Map<String, Value>) -> Result<String, RelayError> {
    let content = r.get("content").and_then(Value::as_object).ok_or_else(|| {
        invalid(format!(
            "{at}content must be a Content object with text parts"
        ))
    })?;
    let parts = match content.get("parts") {
        Some(Value::Array(p)) if !p.is_empty() => p,
        _ => {
            return Err(invalid(format!(
                "{at}content.parts must be a non-empty array"
            )))
        }
    };
    let texts = parts
        .iter()
        .map(|p| {
            p.get("text").and_then(Value::as_str).ok_or_else(|| {
                invalid(format!(
                    "{at}content.parts: only text parts can be embedded by this model"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(texts.join("\n"))
}

/// An OpenAI embeddings list as Gemini's answer, in the order of the inputs.
fn gemini_embeddings(bytes: &[u8], batch: bool) -> Option<Value> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let mut data: Vec<&Value> = v.get("data")?.as_array()?.iter().collect();
    data.sort_by_key(|d| d.get("index").and_then(Value::as_u64).unwrap_or(0));
    let mut embeddings = data
        .into_iter()
        .map(|d| json!({"values": d.get("embedding").filter(|e| e.is_array()).cloned().unwrap_or(json!([]))}));
    Some(if batch {
        json!({"embeddings": embeddings.collect::<Vec<_>>()})
    } else {
        json!({"embedding": embeddings.next()?})
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embed_bodies_become_embeddings_requests() {
        let one = json!({"content": {"parts": [{"text": "a"}, {"text": "b"}]}, "taskType": "RETRIEVAL_QUERY", "outputDimensionality": 8});
        let r = embeddings_request(
            "models/gemini-embedding-001",
            one.to_string().as_bytes(),
            false,
        )
        .unwrap();
        assert_eq!(r.endpoint, Endpoint::Embeddings);
        assert_eq!(
            r.body,
            json!({"model": "gemini-embedding-001", "input": "a\nb", "dimensions": 8})
        );
        let batch = json!({"requests": [
            {"model": "models/e", "content": {"parts": [{"text": "x"}]}},
            {"content": {"parts": [{"text": "y"}]}}
        ]});
        let r = embeddings_request("e", batch.to_string().as_bytes(), true).unwrap();
        assert_eq!(r.body, json!({"model": "e", "input": ["x", "y"]}));

        for (body, batch, needle) in [
            (json!({}), false, "content must be a Content"),
            (json!({"content": "hi"}), false, "content must be a Content"),
            (json!({"content": {"parts": []}}), false, "non-empty array"),
            (
                json!({"content": {"parts": [{"inlineData": {}}]}}),
                false,
                "only text parts",
            ),
            (
                json!({"content": {"parts": [{"text": "a"}]}, "outputDimensionality": "8"}),
                false,
                "positive integer",
            ),
            (json!({"requests": []}), true, "requests must be"),
            (
                json!({"requests": [3]}),
                true,
                "requests[0] must be an object",
            ),
            (
                json!({"requests": [{"content": {"parts": [{"text": "a"}]}, "outputDimensionality": 8},
                {"content": {"parts": [{"text": "b"}]}}]}),
                true,
                "same outputDimensionality",
            ),
        ] {
            match embeddings_request("e", body.to_string().as_bytes(), batch) {
                Err(RelayError::InvalidRequest(m)) => assert!(m.contains(needle), "{body}: {m}"),
                other => panic!("{body}: {:?}", other.map(|r| r.body)),
            }
        }
        assert!(embeddings_request("e", b"[]", false).is_err());
    }

    #[test]
    fn embeddings_lists_become_gemini_answers() {
        let list = json!({"object": "list", "data": [
            {"object": "embedding", "index": 1, "embedding": [0.5]},
            {"object": "embedding", "index": 0, "embedding": [0.25, 1.0]}
        ]});
        let bytes = list.to_string().into_bytes();
        assert_eq!(
            gemini_embeddings(&bytes, true),
            Some(json!({"embeddings": [{"values": [0.25, 1.0]}, {"values": [0.5]}]}))
        );
        assert_eq!(
            gemini_embeddings(&bytes, false),
            Some(json!({"embedding": {"values": [0.25, 1.0]}}))
        );
        assert_eq!(gemini_embeddings(b"{}", true), None);
    }
}
