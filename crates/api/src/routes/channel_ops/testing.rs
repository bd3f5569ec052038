//! Channel tests: one by hand (`/api/channel/test/{id}`), all of them by hand
//! (`/api/channel/test`) or periodically (every `ChannelTestFrequency` minutes, on one node).

use super::{client, load, reach, timed_out, upstream_error, MAX_ERROR_BODY, TEST_TIMEOUT};
use crate::auth::AdminUser;
use crate::error::{ok, ApiError, ApiResult};
use crate::relay::snapshot::ChannelInfo;
use crate::AppState;
use actix_web::{web, HttpResponse};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::{Duration, Instant};
use switchboard_domain::channel::ChannelStatus;
use switchboard_domain::ErrorCode;
use switchboard_relay::endpoint::Endpoint;
use switchboard_relay::provider::{classify_transport, Provider, UpstreamFailure};
use switchboard_relay::request::RelayRequest;
use switchboard_store::channels::{self, ChannelRow};

const ENABLED: i32 = ChannelStatus::Enabled.as_i32();
const AUTO_DISABLED: i32 = ChannelStatus::AutoDisabled.as_i32();

/// Sends the test request; the time to the whole answer in milliseconds, or why it failed.
async fn probe(
    state: &AppState,
    provider: &Provider,
    info: &ChannelInfo,
    model: &str,
) -> ApiResult<Result<i64, UpstreamFailure>> {
    let body = json!({
        "model": model,
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 1,
    });
    let req = RelayRequest::parse(Endpoint::ChatCompletions, body.to_string().as_bytes())
        .map_err(|e| ApiError::bad_request(ErrorCode::InvalidTestModel, e.to_string()))?;
    let client = client(state, info)?;
    // Vertex AI's OAuth token, as the relay gets it; a refusal is the test's failure.
    if let Err(f) = provider.authorize(&client, &info.target).await {
        return Ok(Err(f));
    }
    let rb = provider
        .build(&client, &info.target, &req, None, None)
        .map_err(|e| ApiError::bad_request(ErrorCode::InvalidChannel, e.to_string()))?;
    let op = state.settings.operation();
    let keywords: Vec<&str> = op
        .disable_channel_keywords
        .iter()
        .map(String::as_str)
        .collect();
    let started = Instant::now();
    let call = async {
        let resp = rb.send().await.map_err(|e| classify_transport(&e))?;
        let status = resp.status().as_u16();
        let ok = (200..300).contains(&status);
        let mut body = Vec::new();
        let mut s = resp.bytes_stream();
        while let Some(chunk) = s.next().await {
            let chunk = chunk.map_err(|e| classify_transport(&e))?;
            if !ok {
                let room = MAX_ERROR_BODY.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if body.len() >= MAX_ERROR_BODY {
                    break;
                }
            }
        }
        if ok {
            Ok(())
        } else {
            Err(provider.classify(status, &body, &keywords))
        }
    };
    let res = match tokio::time::timeout(TEST_TIMEOUT, call).await {
        Ok(r) => r,
        Err(_) => Err(timed_out()),
    };
    let ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    Ok(res.map(|()| ms))
}

/// What one test did.
struct Tested {
    model: String,
    result: Result<i64, UpstreamFailure>,
    disabled: bool,
    enabled: bool,
}

/// Tests `row` with `model` and applies the outcome: the response time on success, automatic
/// disabling and enabling per the settings. `periodic` also disables slow channels.
async fn run_test(
    state: &AppState,
    row: ChannelRow,
    model: String,
    periodic: bool,
) -> ApiResult<Tested> {
    let (id, status, auto_ban) = (row.id, row.status, row.auto_ban);
    let (provider, info) = reach(state, row)?;
    let result = probe(state, &provider, &info, &model).await?;
    let op = state.settings.operation();
    let auto_disable = op.auto_disable_channel && auto_ban;
    let threshold_ms = op.channel_disable_threshold * 1000.0;
    let mut next = None;
    match &result {
        Ok(ms) => {
            state
                .db({
                    let ms = i32::try_from(*ms).unwrap_or(i32::MAX);
                    move |c| Ok(channels::set_response_time(c, id, ms)?)
                })
                .await?;
            #[allow(clippy::cast_precision_loss)]
            let slow = periodic && threshold_ms > 0.0 && *ms as f64 > threshold_ms;
            if slow && auto_disable && status == ENABLED {
                next = Some(AUTO_DISABLED);
            } else if !slow && status == AUTO_DISABLED && op.auto_enable_channel {
                next = Some(ENABLED);
            }
        }
        Err(f) => {
            if f.auto_disable && auto_disable && status == ENABLED {
                next = Some(AUTO_DISABLED);
            }
        }
    }
    let mut changed = false;
    if let Some(s) = next {
        changed = state
            .db(move |c| Ok(channels::set_status(c, id, s)?))
            .await?;
        if changed {
            tracing::warn!(channel = id, status = s, "channel status changed by a test");
            state.relay.channels_changed(state).await?;
        }
    }
    Ok(Tested {
        model,
        disabled: changed && next == Some(AUTO_DISABLED),
        enabled: changed && next == Some(ENABLED),
        result,
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct TestQuery {
    model: Option<String>,
}

/// The model a test asks for when none is given: the channel's test model, else the first
/// model it lists (wildcards cannot be asked for), so a channel saved without a test model is
/// still tested rather than silently skipped.
fn default_test_model(row: &channels::ChannelRow) -> Option<String> {
    Some(row.test_model.trim().to_owned())
        .filter(|m| !m.is_empty())
        .or_else(|| {
            row.models
                .split(',')
                .map(str::trim)
                .find(|m| !m.is_empty() && !m.ends_with('*'))
                .map(str::to_owned)
        })
}

/// `GET /api/channel/test/{id}?model=`: `{time_ms, model}`, or 502 `channel_test_failed` with
/// the upstream's message. Without `model`, the channel's test model or its first model.
pub async fn test_one(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
    q: web::Query<TestQuery>,
) -> ApiResult<HttpResponse> {
    let row = load(&state, id.into_inner()).await?;
    let model = q
        .into_inner()
        .model
        .map(|m| m.trim().to_owned())
        .filter(|m| !m.is_empty())
        .or_else(|| default_test_model(&row))
        .ok_or_else(|| {
            ApiError::bad_request(
                ErrorCode::TestModelRequired,
                "set a test model first (the channel lists no model a test can ask for)",
            )
        })?;
    let t = run_test(&state, row, model, false).await?;
    match t.result {
        Ok(ms) => Ok(ok(
            json!({"time_ms": ms, "model": t.model, "enabled": t.enabled}),
        )),
        Err(f) => Err(upstream_error(ErrorCode::ChannelTestFailed, &f)),
    }
}

/// What a test of all channels did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TestSummary {
    pub tested: usize,
    pub failed: usize,
    pub disabled: usize,
    pub enabled: usize,
    /// Each channel whose test failed, with why (so the console can name them).
    pub failures: Vec<TestFailure>,
}

/// One failed channel test of [`TestSummary`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestFailure {
    pub id: i64,
    pub name: String,
    pub message: String,
}

/// Tests, one after the other, every enabled or automatically disabled channel that has a model
/// to test with (its test model, else its first model; each bounded by [`TEST_TIMEOUT`]). For the periodic run every `ChannelTestFrequency`
/// minutes as well as `GET /api/channel/test`.
pub async fn test_all(state: &AppState) -> ApiResult<TestSummary> {
    let rows = state.db(|c| Ok(channels::all(c)?)).await?;
    let mut sum = TestSummary::default();
    for row in rows {
        let Some(model) = default_test_model(&row) else {
            continue;
        };
        if !matches!(row.status, ENABLED | AUTO_DISABLED) {
            continue;
        }
        if Provider::for_channel_type(row.channel_type).is_none() {
            continue;
        }
        let id = row.id;
        let name = row.name.clone();
        sum.tested += 1;
        let fail = |sum: &mut TestSummary, message: String| {
            sum.failed += 1;
            sum.failures.push(TestFailure {
                id,
                name: name.clone(),
                message,
            });
        };
        let t = match tokio::time::timeout(
            TEST_TIMEOUT + Duration::from_secs(5),
            run_test(state, row, model, true),
        )
        .await
        {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                tracing::warn!(channel = id, "channel test could not run: {e}");
                fail(&mut sum, e.message.clone());
                continue;
            }
            Err(_) => {
                tracing::warn!(channel = id, "channel test timed out");
                fail(&mut sum, "the test timed out".into());
                continue;
            }
        };
        if let Err(f) = &t.result {
            tracing::warn!(channel = id, "channel test failed: {}", f.message);
            fail(&mut sum, f.message.clone());
        }
        sum.disabled += usize::from(t.disabled);
        sum.enabled += usize::from(t.enabled);
    }
    Ok(sum)
}

/// `GET /api/channel/test`: tests all channels → `{tested, failed, disabled, enabled}`.
/// The periodic channel test, once per period for the whole cluster: every node calls this on
/// each maintenance tick; the node that takes the `channel-test` lease (held for the period,
/// `minutes` long, and not given back) runs the test, the others do nothing until it expires.
/// Returns `None` when another node (or this one) already has the period.
pub async fn scheduled_test_all(
    state: &AppState,
    minutes: i64,
    holder: &str,
) -> ApiResult<Option<TestSummary>> {
    let ttl = minutes.saturating_mul(60).saturating_sub(1).max(1);
    let mine = crate::jobs::acquire(
        state,
        "channel-test",
        holder,
        ttl,
        crate::jobs::Lease::Period,
    )
    .await?;
    if !mine {
        return Ok(None);
    }
    test_all(state).await.map(Some)
}

pub async fn test_all_route(state: web::Data<AppState>, _a: AdminUser) -> ApiResult<HttpResponse> {
    Ok(ok(test_all(&state).await?))
}
