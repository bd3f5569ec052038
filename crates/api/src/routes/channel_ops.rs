//! Channel operations (administrators): test one channel or all of them, fetch the upstream's
//! model list, read the upstream balance, batch delete, delete the disabled channels, and the
//! tag operations. Every change reloads the relay's channel snapshot.
//!
//! A test sends a minimal non-streamed chat completion through the channel's adapter. It is
//! never billed and writes no consume log. A failure that the adapter marks `auto_disable`
//! disables an enabled channel when `AutomaticDisableChannelEnabled` is on; a success enables an
//! automatically disabled channel when `AutomaticEnableChannelEnabled` is on. The periodic test
//! ([`test_all`]) also disables enabled channels slower than `ChannelDisableThreshold` seconds
//! (when automatic disabling is on) and does not re-enable them.

use super::channels::not_found;
use super::channels::MAX_BATCH;
use crate::auth::AdminUser;
use crate::error::{ok, ApiError, ApiResult};
use crate::extract::Body;
use crate::relay::snapshot::{ChannelInfo, Snapshot};
use crate::settings::View;
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::{Duration, Instant};
use switchboard_domain::channel::ChannelStatus;
use switchboard_domain::options::OptionValues;
use switchboard_domain::DomainError;
use switchboard_domain::ErrorCode;
use switchboard_relay::endpoint::Endpoint;
use switchboard_relay::provider::{classify_transport, Provider, UpstreamFailure};
use switchboard_relay::request::RelayRequest;
use switchboard_store::channels::{self, ChannelRow, TagEdit};

/// Every upstream call made here (a test, the model list, the balance) ends within this time.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest upstream error body read.
const MAX_ERROR_BODY: usize = 64 << 10;

const ENABLED: i32 = ChannelStatus::Enabled.as_i32();
const AUTO_DISABLED: i32 = ChannelStatus::AutoDisabled.as_i32();

fn upstream_error(code: ErrorCode, f: &UpstreamFailure) -> ApiError {
    ApiError::new(StatusCode::BAD_GATEWAY, code, f.message.clone())
}

async fn load(state: &AppState, id: i64) -> ApiResult<ChannelRow> {
    state
        .db(move |c| {
            channels::find(c, id).map_err(|e| {
                if e.is_not_found() {
                    not_found()
                } else {
                    e.into()
                }
            })
        })
        .await
}

/// How to reach the channel as stored now (not as the relay's snapshot last saw it), its key
/// opened, with the upstream calls bounded by [`TEST_TIMEOUT`]. A key that cannot be opened is
/// refused here (`key_unavailable`), never sent upstream.
fn reach(state: &AppState, mut row: ChannelRow) -> ApiResult<(Provider, ChannelInfo)> {
    let id = row.id;
    row.key = crate::at_rest::channel_key(state, &row)?;
    let info = Snapshot::build(vec![row])
        .channel(id)
        .ok_or_else(not_found)?;
    let mut info = (*info).clone();
    info.target.timeout = TEST_TIMEOUT;
    let provider = info.provider.clone().ok_or_else(|| {
        ApiError::bad_request(
            ErrorCode::UnsupportedChannelType,
            format!(
                "channels of type {} cannot be used yet (no adapter)",
                info.channel_type
            ),
        )
    })?;
    Ok((provider, info))
}

fn client(state: &AppState, info: &ChannelInfo) -> ApiResult<reqwest::Client> {
    crate::relay::channel_client(state, info)
        .map_err(|e| ApiError::bad_request(ErrorCode::InvalidChannel, e.to_string()))
}

fn timed_out() -> UpstreamFailure {
    UpstreamFailure {
        status: 504,
        message: "the upstream did not answer in time".into(),
        code: Some("upstream_timeout".into()),
        retryable: true,
        auto_disable: false,
        kind: None,
        retry_after: None,
        gateway: false,
    }
}

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
    let o = state.view();
    let keywords_text = View(&o).text("DisableChannelKeywords");
    let keywords: Vec<&str> = keywords_text
        .lines()
        .map(str::trim)
        .filter(|k| !k.is_empty())
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
    let o = state.view();
    let o = View(&o);
    let auto_disable = o.bool("AutomaticDisableChannelEnabled") && auto_ban;
    let threshold_ms = o.float("ChannelDisableThreshold") * 1000.0;
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
            } else if !slow && status == AUTO_DISABLED && o.bool("AutomaticEnableChannelEnabled") {
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

/// `GET /api/channel/fetch_models/{id}`: the upstream's model ids.
pub async fn fetch_models(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let row = load(&state, id.into_inner()).await?;
    let (provider, info) = reach(&state, row)?;
    let client = client(&state, &info)?;
    let res = tokio::time::timeout(TEST_TIMEOUT, provider.list_models(&client, &info.target))
        .await
        .unwrap_or_else(|_| Err(timed_out()));
    match res {
        Ok(ids) => Ok(ok(ids)),
        Err(f) => Err(upstream_error(ErrorCode::FetchModelsFailed, &f)),
    }
}

/// `GET /api/channel/update_balance/{id}`: reads and stores the upstream balance →
/// `{balance}` in USD.
pub async fn update_balance(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let row = load(&state, id.into_inner()).await?;
    let id = row.id;
    let (provider, info) = reach(&state, row)?;
    let client = client(&state, &info)?;
    let res = tokio::time::timeout(TEST_TIMEOUT, provider.balance(&client, &info.target))
        .await
        .unwrap_or_else(|_| Err(timed_out()));
    let usd = match res {
        Ok(Some(usd)) if usd.is_finite() => usd,
        Ok(Some(_)) => {
            return Err(ApiError::new(
                StatusCode::BAD_GATEWAY,
                ErrorCode::BalanceUpdateFailed,
                "the upstream answered an invalid balance",
            ))
        }
        Ok(None) => {
            return Err(ApiError::bad_request(
                ErrorCode::BalanceNotSupported,
                "this channel type has no balance API",
            ))
        }
        Err(f) => return Err(upstream_error(ErrorCode::BalanceUpdateFailed, &f)),
    };
    // Saturating float-to-int conversion; balances are far inside the i64 range.
    #[allow(clippy::cast_possible_truncation)]
    let micro = (usd * 1_000_000.0).round() as i64;
    state
        .db(move |c| {
            channels::set_balance(c, id, micro).map_err(|e| {
                if e.is_not_found() {
                    not_found()
                } else {
                    e.into()
                }
            })
        })
        .await?;
    Ok(ok(json!({"balance": usd})))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdsBody {
    ids: Vec<i64>,
}

/// `POST /api/channel/batch_delete {ids}` (1 to 500 ids) → `{deleted}`; unknown ids are
/// ignored.
pub async fn batch_delete(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<IdsBody>,
) -> ApiResult<HttpResponse> {
    if b.ids.is_empty() || b.ids.len() > MAX_BATCH {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidIds,
            format!("ids must hold 1 to {MAX_BATCH} channel ids"),
        ));
    }
    let mut ids = b.ids;
    ids.sort_unstable();
    ids.dedup();
    let deleted = state
        .db(move |c| Ok(channels::delete_many(c, &ids)?))
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({ "deleted": deleted })))
}

/// `DELETE /api/channel/disabled`: deletes every disabled channel (status 2 or 3) →
/// `{deleted}`.
pub async fn delete_disabled(state: web::Data<AppState>, _a: AdminUser) -> ApiResult<HttpResponse> {
    let deleted = state
        .db(|c| Ok(channels::delete_disabled(c, None)?))
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({ "deleted": deleted })))
}

/// `GET /api/channel/tags`: `[{tag, count}]` for every non-empty tag.
pub async fn tags(state: web::Data<AppState>, _a: AdminUser) -> ApiResult<HttpResponse> {
    let rows = state.db(|c| Ok(channels::tags(c)?)).await?;
    let data: Vec<_> = rows
        .into_iter()
        .map(|(tag, count)| json!({"tag": tag, "count": count}))
        .collect();
    Ok(ok(data))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TagBody {
    tag: String,
    priority: Option<i64>,
    weight: Option<i32>,
    status: Option<i32>,
}

/// `PUT /api/channel/tag {tag, priority?, weight?, status?}`: applies the given fields to every
/// channel of the tag → `{updated}`.
pub async fn update_tag(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<TagBody>,
) -> ApiResult<HttpResponse> {
    if b.tag.is_empty() {
        return Err(DomainError::Required { field: "tag" }.into());
    }
    if b.priority.is_some_and(|p| p < 0) {
        return Err(DomainError::TooSmall {
            field: "priority",
            min: 0,
        }
        .into());
    }
    if b.weight.is_some_and(|w| w < 1) {
        return Err(DomainError::TooSmall {
            field: "weight",
            min: 1,
        }
        .into());
    }
    if b.status.is_some_and(|s| !matches!(s, 1 | 2)) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidStatus,
            "status must be 1 (enabled) or 2 (disabled)",
        ));
    }
    if b.priority.is_none() && b.weight.is_none() && b.status.is_none() {
        return Err(ApiError::bad_request(
            ErrorCode::NothingToUpdate,
            "give at least one of priority, weight and status",
        ));
    }
    let edit = TagEdit {
        priority: b.priority,
        weight: b.weight,
        status: b.status,
    };
    let tag = b.tag;
    let updated = state
        .db(move |c| Ok(channels::update_tag(c, &tag, edit)?))
        .await?;
    if updated == 0 {
        return Err(ApiError::not_found("no channel has this tag"));
    }
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({ "updated": updated })))
}

/// `DELETE /api/channel/tag/{tag}/disabled`: deletes the disabled channels of a tag →
/// `{deleted}`.
pub async fn delete_tag_disabled(
    state: web::Data<AppState>,
    _a: AdminUser,
    tag: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let tag = tag.into_inner();
    let deleted = state
        .db(move |c| Ok(channels::delete_disabled(c, Some(&tag))?))
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({ "deleted": deleted })))
}

/// Longest channel name a copy may get (the suffix is cut to fit).
const MAX_NAME: usize = 100;

fn checked_ids(ids: Option<Vec<i64>>) -> ApiResult<Option<Vec<i64>>> {
    match ids {
        None => Ok(None),
        Some(ids) if ids.is_empty() || ids.len() > MAX_BATCH => Err(ApiError::bad_request(
            ErrorCode::InvalidIds,
            format!("ids must hold 1 to {MAX_BATCH} channel ids (leave it out for every channel)"),
        )),
        Some(mut ids) => {
            ids.sort_unstable();
            ids.dedup();
            Ok(Some(ids))
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchValueBody {
    /// The channels to edit; every channel when left out.
    ids: Option<Vec<i64>>,
    value: String,
}

/// `PUT /api/channel/batch/azure_api {ids?, value}`: sets the API version of the Azure
/// channels among `ids` (every Azure channel without `ids`) → `{updated, ids}`.
pub async fn batch_azure_api(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<BatchValueBody>,
) -> ApiResult<HttpResponse> {
    use switchboard_domain::channel::{
        config_string, set_config_string, validate_azure_api_version, AZURE_API_VERSION_KEY,
        TYPE_AZURE,
    };
    if b.value.is_empty() {
        return Err(DomainError::Required { field: "value" }.into());
    }
    validate_azure_api_version(&b.value)?;
    let ids = checked_ids(b.ids)?;
    let version = b.value;
    let changed = state
        .db(move |c| {
            Ok(channels::edit_many(
                c,
                ids.as_deref(),
                Some(TYPE_AZURE),
                |f| {
                    if config_string(&f.config, AZURE_API_VERSION_KEY).as_deref() == Some(&version)
                    {
                        return false;
                    }
                    f.config = set_config_string(&f.config, AZURE_API_VERSION_KEY, &version);
                    true
                },
            )?)
        })
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({"updated": changed.len(), "ids": changed})))
}

/// `PUT /api/channel/batch/del_model {ids?, value}`: removes the model `value` from the
/// channels among `ids` (every channel without `ids`); a channel that would be left without
/// any model keeps it and is reported in `kept` → `{updated, ids, kept}`.
pub async fn batch_remove_model(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<BatchValueBody>,
) -> ApiResult<HttpResponse> {
    use switchboard_domain::channel::remove_model;
    if b.value.is_empty() {
        return Err(DomainError::Required { field: "value" }.into());
    }
    let ids = checked_ids(b.ids)?;
    let model = b.value;
    let (changed, kept) = state
        .db(move |c| {
            let mut kept = Vec::new();
            let changed = channels::edit_many(c, ids.as_deref(), None, |f| {
                match remove_model(&f.models, &model) {
                    Some(rest) if rest.is_empty() => {
                        kept.push(f.name.clone());
                        false
                    }
                    Some(rest) => {
                        f.models = rest;
                        if f.test_model == model {
                            f.test_model.clear();
                        }
                        true
                    }
                    None => false,
                }
            })?;
            Ok((changed, kept))
        })
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(
        json!({"updated": changed.len(), "ids": changed, "kept": kept}),
    ))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CopyQuery {
    /// Appended to the name of the copy; default `_copy`.
    suffix: Option<String>,
}

/// `POST /api/channel/copy/{id}?suffix=`: a new channel with the same settings and key (name
/// + suffix), without usage, balance or test results → 201 `{id}`.
pub async fn copy(
    state: web::Data<AppState>,
    _a: AdminUser,
    path: web::Path<i64>,
    q: web::Query<CopyQuery>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let suffix = q.into_inner().suffix.unwrap_or_else(|| "_copy".to_owned());
    if suffix.chars().count() > 32 || suffix.chars().any(char::is_control) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidSuffix,
            "the suffix has at most 32 characters and no control characters",
        ));
    }
    let st = state.clone();
    let new_id = state
        .db(move |c| {
            let row = channels::find(c, id).map_err(|e| match e {
                switchboard_store::StoreError::NotFound => not_found(),
                other => other.into(),
            })?;
            let keep = MAX_NAME.saturating_sub(suffix.chars().count());
            let name: String = row.name.chars().take(keep).chain(suffix.chars()).collect();
            // Sealed afresh: the copy never carries a plain or stale value over.
            let key = st.secret_box.seal(&crate::at_rest::channel_key(&st, &row)?);
            Ok::<_, ApiError>(channels::copy(c, id, &name, &key)?)
        })
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(HttpResponse::Created()
        .json(json!({"success": true, "message": "", "data": {"id": new_id}})))
}
