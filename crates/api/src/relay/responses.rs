//! The conversations of bridged Responses API answers (`switchboard_relay::responses`,
//! `docs/providers.md` "Responses API"), kept in the database (`response_history`) so that a
//! later request naming one as `previous_response_id` continues it, on any channel:
//!
//! - [`continue_conversation`], before the request is estimated or dispatched: the conversation
//!   kept under the id for this user is put before the request's input and the id taken out. An
//!   id not found stays: a native OpenAI channel may know it (OpenAI keeps its own), the bridge
//!   refuses it with 400 `invalid_request` ("previous response ... not found").
//! - [`keep`], after a bridged answer (not after a native one: OpenAI keeps those): the input and
//!   the output under the new response's id, for 30 days, unless the request said
//!   `store: false` (Codex does, and sends the whole conversation every time).
//! - [`purge`], from the maintenance job: expired conversations.

use crate::AppState;
use actix_web::web;
use serde_json::Value;
use switchboard_relay::endpoint::Endpoint;
use switchboard_relay::request::RelayRequest;
use switchboard_relay::responses;
use switchboard_store::response_history::{self, Conversation};

/// Splices the conversation kept under the request's `previous_response_id` for `user_id` into
/// the request (see the module). A database that does not answer leaves the request as it is.
pub async fn continue_conversation(
    state: &web::Data<AppState>,
    user_id: i64,
    rreq: &mut RelayRequest,
) {
    if rreq.endpoint != Endpoint::Responses {
        return;
    }
    let Some(id) = responses::previous_response_id(rreq).map(str::to_owned) else {
        return;
    };
    let read = state
        .db(move |c| {
            Ok(response_history::find(
                c,
                &id,
                user_id,
                switchboard_store::now(),
            )?)
        })
        .await;
    let row = match read {
        Ok(Some(row)) => row,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!("previous response read failed: {e}");
            return;
        }
    };
    match serde_json::from_str::<Vec<Value>>(&row.items) {
        Ok(items) => responses::continue_conversation(rreq, items),
        Err(e) => tracing::warn!("previous response {} unreadable: {e}", row.response_id),
    }
}

/// Keeps, in the background, the conversation of a bridged answer: `response` is the
/// `response` object the client got (the non-streamed answer's body, or
/// `ResponsesStream::response()` at the end of a stream). Nothing is kept for `store: false`,
/// for failed responses, or beyond `response_history::MAX_BYTES`.
pub fn keep(state: &web::Data<AppState>, user_id: i64, rreq: &RelayRequest, response: &Value) {
    if rreq.endpoint != Endpoint::Responses || !responses::stores(rreq) {
        return;
    }
    if !matches!(
        response.get("status").and_then(Value::as_str),
        Some("completed" | "incomplete")
    ) {
        return;
    }
    let Some(id) = response.get("id").and_then(Value::as_str) else {
        return;
    };
    let items = Value::Array(responses::conversation(rreq, response)).to_string();
    if items.len() > response_history::MAX_BYTES {
        tracing::debug!("conversation of {id} not kept: {} bytes", items.len());
        return;
    }
    let now = switchboard_store::now();
    let row = Conversation {
        response_id: id.to_owned(),
        user_id,
        model_name: rreq.model.clone(),
        items,
        created_at: now,
        expires_at: now.saturating_add(response_history::TTL_SECS),
    };
    let state = state.clone();
    actix_web::rt::spawn(async move {
        if let Err(e) = state.db(move |c| Ok(response_history::put(c, &row)?)).await {
            tracing::warn!("conversation write failed: {e}");
        }
    });
}

/// Removes the expired conversations (maintenance).
pub async fn purge(state: &AppState) -> crate::error::ApiResult<usize> {
    state
        .db(|c| Ok(response_history::purge(c, switchboard_store::now())?))
        .await
}
