//! `GET /api/channel/health` (administrators): this node's smarter-routing state per (channel,
//! model), the circuit breaker (closed, open, half-open; when it opened; the window's error
//! ratio and count) and the peak-EWMA latency with the attempts in flight. The state is per
//! node (each node of a cluster answers with its own) and is collected only while
//! `CircuitBreakerEnabled` or `LatencyAwareRouting` is on.

use crate::auth::AdminUser;
use crate::error::{ok, ApiResult};
use crate::settings::breaker_config;
use crate::settings::View;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde_json::{json, Value};
use std::time::UNIX_EPOCH;

/// `{circuit_breaker_enabled, latency_aware_routing, pairs: [{channel_id, model, state,
/// opened_at, error_ratio, requests, failures, latency_ms, in_flight}]}`, pairs ordered by
/// channel and model; `opened_at` in unix seconds (null while closed), `latency_ms` null before
/// the first measured attempt.
pub async fn health(state: web::Data<AppState>, _a: AdminUser) -> ApiResult<HttpResponse> {
    // The breaker's settings apply to the list whether or not the breaker is on.
    let (snap, relay) = state.settings.snapshot_and_relay_options();
    let pairs: Vec<Value> = state
        .relay
        .health
        .list(&breaker_config(&View(&snap)))
        .into_iter()
        .map(|p| {
            json!({
                "channel_id": p.channel_id,
                "model": p.model,
                "state": p.state.as_str(),
                "opened_at": p.opened_at
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map(|d| d.as_secs()),
                "error_ratio": p.error_ratio,
                "requests": p.requests,
                "failures": p.failures,
                "latency_ms": p.latency_ms.map(|ms| (ms * 10.0).round() / 10.0),
                "in_flight": p.in_flight,
            })
        })
        .collect();
    Ok(ok(json!({
        "circuit_breaker_enabled": relay.breaker.is_some(),
        "latency_aware_routing": relay.latency_aware,
        "pairs": pairs,
    })))
}
