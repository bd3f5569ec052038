//! Usage logs (`/api/log`): the user's own, everyone's for administrators, consumption sums,
//! deletion and retention; and the user's dashboard (`/api/user/dashboard`) from the daily rollup.
//!
//! - Visibility: a user sees every field of their own logs except the channel (`channel_id`,
//!   `channel_name`): channels are the operator's internal routing. The source IP is the user's
//!   own address and stays visible (and filterable). Administrators see every field of every log,
//!   plus the channel's name. The administrators' filters (`channel`, `username`, `user_id`) on a
//!   self route answer 403 rather than being ignored silently; empty values mean "no filter" on
//!   every route (the one-api console sends `channel=` for unset fields).
//! - Paging: `page`/`size` (1..=100, at most [`MAX_OFFSET`] rows deep) with an exact
//!   `total_count`; or keyset with `before_id` (the id of the last row seen): no OFFSET and no
//!   COUNT, so `page` and `total_count` are null. Both give `next_before_id` (null on the last
//!   page). The keyset follows the listing order `(created_at, id)` desc, not the id alone: rows
//!   are written by batched ledger flushes, so ids and times need not agree.
//! - Stats sum the consume logs among the filtered ones (as one-api does), so `type=1` sums to 0.
//! - `model_name` and `token_name` match by prefix (`gpt-4o` finds `gpt-4o-mini` too).
//! - Error logs (type 5) are relayed calls that failed after admission: no charge; `content`
//!   is the reason the client got, `metadata` has its `status`, `code` and `kind`.
//! - Deleting logs (by root, or by retention) leaves the daily rollup alone: dashboards and
//!   invoices keep their history.
//! - Dead letters (`/api/log/dead_letters`, administrators): consume records the database
//!   refused even sanitised, parked by the ledger flush so that they block nobody else's.

use super::paging::{self, int, page_req, text};
use crate::auth::{AdminUser, AuthUser, RootUser};
use crate::error::{ok, ApiError, ApiResult};
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use switchboard_domain::log::{day_start, LogType, DAY_SECS};
use switchboard_domain::ErrorCode;
use switchboard_store::dead_letters::{self, DeadLetterRow};
use switchboard_store::logs::{self, LogFilter, LogRow};
use switchboard_store::{now, statistics, PageReq};

/// Deepest row an offset page may reach; beyond it the caller scrolls with `before_id`.
pub const MAX_OFFSET: i64 = 100_000;
/// Rows per DELETE statement when deleting old logs.
pub const DELETE_BATCH: i64 = 5_000;
/// Window of `rpm` / `tpm` in the stats, seconds.
pub const RATE_WINDOW_SECS: i64 = 60;
pub const DASHBOARD_DEFAULT_DAYS: i64 = 7;
pub const DASHBOARD_MAX_DAYS: i64 = 90;

/// Query of the list and stat routes. Every value arrives as text so that an empty parameter
/// (`channel=`, as the one-api console sends for unset filters) means "no filter", and a wrong
/// type answers a 400 that names the parameter.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[schemars(rename = "LogQuery")]
pub struct LogQuery {
    page: Option<String>,
    /// one-api's 0-based page number; accepted for old scripts.
    p: Option<String>,
    size: Option<String>,
    before_id: Option<String>,
    #[serde(rename = "type")]
    log_type: Option<String>,
    start_timestamp: Option<String>,
    end_timestamp: Option<String>,
    model_name: Option<String>,
    token_name: Option<String>,
    token_id: Option<String>,
    group: Option<String>,
    source_ip: Option<String>,
    // Administrators only.
    username: Option<String>,
    user_id: Option<String>,
    channel: Option<String>,
}

/// Turns the query into a store filter. `user_id` is the caller's id on the self routes (which
/// refuse the administrators' filters with 403) and `None` on the admin routes.
fn log_filter(q: &LogQuery, own: Option<i64>) -> ApiResult<LogFilter> {
    if own.is_some() {
        for (name, v) in [
            ("channel", &q.channel),
            ("username", &q.username),
            ("user_id", &q.user_id),
        ] {
            if text(v).is_some() {
                return Err(ApiError::forbidden(
                    ErrorCode::Forbidden,
                    format!("the {name} filter is for administrators; your logs are yours only"),
                ));
            }
        }
    }
    let log_type = match int("type", &q.log_type)? {
        None | Some(0) => None,
        Some(t) => Some(
            LogType::try_from(i32::try_from(t).unwrap_or(-1))
                .map_err(|_| {
                    ApiError::bad_request(
                        ErrorCode::InvalidType,
                        "type must be 0 (all), 1 (recharge), 2 (consume), 3 (manage), 4 (system) or 5 (error)",
                    )
                })?
                .as_i32(),
        ),
    };
    let start = int("start_timestamp", &q.start_timestamp)?.filter(|&s| s != 0);
    let end = int("end_timestamp", &q.end_timestamp)?.filter(|&e| e != 0);
    if start.is_some_and(|s| s < 0) || end.is_some_and(|e| e < 0) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidRange,
            "timestamps are unix seconds and cannot be negative",
        ));
    }
    if let (Some(s), Some(e)) = (start, end) {
        if e < s {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidRange,
                "end_timestamp cannot be before start_timestamp",
            ));
        }
    }
    Ok(LogFilter {
        user_id: own.or(int("user_id", &q.user_id)?),
        log_type,
        start,
        end,
        model_name: text(&q.model_name),
        token_name: text(&q.token_name),
        token_id: int("token_id", &q.token_id)?,
        username: text(&q.username),
        channel_id: int("channel", &q.channel)?.filter(|&c| c != 0),
        group_name: text(&q.group),
        source_ip: text(&q.source_ip),
    })
}

/// One log as the API shows it; `channel` is `Some` for administrators only (the channel's name,
/// empty when the channel no longer exists).
pub fn log_json(l: &LogRow, channel: Option<&str>) -> Value {
    let metadata = serde_json::from_str::<Value>(&l.metadata)
        .unwrap_or_else(|_| Value::String(l.metadata.clone()));
    let mut v = json!({
        "id": l.id,
        "created_at": l.created_at,
        "type": l.log_type,
        "user_id": l.user_id,
        "username": l.username,
        "token_id": l.token_id,
        "token_name": l.token_name,
        "model_name": l.model_name,
        "group": l.group_name,
        "quota": l.quota,
        "prompt_tokens": l.prompt_tokens,
        "completion_tokens": l.completion_tokens,
        "use_time_ms": l.use_time_ms,
        "first_response_ms": l.first_response_ms,
        "is_stream": l.is_stream,
        "cache_hit": l.cache_hit,
        "source_ip": l.source_ip,
        "request_id": l.request_id,
        "content": l.content,
        "metadata": metadata,
    });
    if let Some(name) = channel {
        v["channel_id"] = json!(l.channel_id);
        v["channel_name"] = json!(name);
    }
    v
}

enum Paging {
    Offset(PageReq),
    Before { before_id: i64, size: i64 },
}

fn paging(q: &LogQuery) -> ApiResult<Paging> {
    let page = int("page", &q.page)?.or(int("p", &q.p)?.map(|p| p.saturating_add(1)));
    let size = int("size", &q.size)?;
    if let Some(before_id) = int("before_id", &q.before_id)? {
        if page.is_some_and(|p| p != 1) {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidQuery,
                "use either page or before_id, not both",
            ));
        }
        let p = page_req(None, size)?;
        return Ok(Paging::Before {
            before_id,
            size: p.size,
        });
    }
    let p = page_req(page, size)?;
    if p.offset() > MAX_OFFSET {
        return Err(ApiError::bad_request(
            ErrorCode::PageTooDeep,
            format!(
                "pages reach {MAX_OFFSET} rows deep at most; scroll further with before_id (the id of the last log you have)"
            ),
        ));
    }
    Ok(Paging::Offset(p))
}

async fn list_logs(state: &AppState, q: LogQuery, own: Option<i64>) -> ApiResult<HttpResponse> {
    let filter = log_filter(&q, own)?;
    let paging = paging(&q)?;
    let admin = own.is_none();
    let (items, names, page, size, total, next) = state
        .db(move |c| {
            let (items, page, size, total, next) = match paging {
                Paging::Offset(p) => {
                    let r = logs::list(c, &filter, p)?;
                    let more = p.offset() + (r.items.len() as i64) < r.total;
                    let next = r.items.last().filter(|_| more).map(|l| l.id);
                    (r.items, Some(p.page), p.size, Some(r.total), next)
                }
                Paging::Before { before_id, size } => {
                    let mut items = logs::list_before(c, &filter, before_id, size + 1)?;
                    let more = items.len() as i64 > size;
                    items.truncate(usize::try_from(size).unwrap_or(0));
                    let next = items.last().filter(|_| more).map(|l| l.id);
                    (items, None, size, None, next)
                }
            };
            let names: HashMap<i64, String> = if admin {
                let mut ids: Vec<i64> = items
                    .iter()
                    .map(|l| l.channel_id)
                    .filter(|&i| i > 0)
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                logs::channel_names(c, &ids)?.into_iter().collect()
            } else {
                HashMap::new()
            };
            Ok((items, names, page, size, total, next))
        })
        .await?;
    let data: Vec<Value> = items
        .iter()
        .map(|l| {
            if admin {
                log_json(l, Some(names.get(&l.channel_id).map_or("", String::as_str)))
            } else {
                log_json(l, None)
            }
        })
        .collect();
    Ok(ok(json!({
        "data": data,
        "page": page,
        "size": size,
        "total_count": total,
        "next_before_id": next,
    })))
}

/// `GET /api/log/self`: the signed-in user's logs, newest first.
pub async fn list_self(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<LogQuery>,
) -> ApiResult<HttpResponse> {
    list_logs(&state, q.into_inner(), Some(me.id)).await
}

/// `GET /api/log`: every log (administrators).
pub async fn list_all(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<LogQuery>,
) -> ApiResult<HttpResponse> {
    list_logs(&state, q.into_inner(), None).await
}

async fn stat(state: &AppState, q: LogQuery, own: Option<i64>) -> ApiResult<HttpResponse> {
    let filter = log_filter(&q, own)?;
    let t = now();
    let (sums, recent) = state
        .db(move |c| {
            let sums = logs::consume_sums_fast(c, &filter)?;
            let window = LogFilter {
                start: Some(t - RATE_WINDOW_SECS),
                end: None,
                ..filter
            };
            let recent = logs::consume_sums(c, &window)?;
            Ok((sums, recent))
        })
        .await?;
    Ok(ok(json!({
        "quota": sums.quota,
        "prompt_tokens": sums.prompt_tokens,
        "completion_tokens": sums.completion_tokens,
        "request_count": sums.request_count,
        "rpm": recent.request_count,
        "tpm": recent.prompt_tokens + recent.completion_tokens,
    })))
}

/// `GET /api/log/self/stat`: sums of the user's consume logs matching the filters.
pub async fn stat_self(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<LogQuery>,
) -> ApiResult<HttpResponse> {
    stat(&state, q.into_inner(), Some(me.id)).await
}

/// `GET /api/log/stat`: sums of every consume log matching the filters (administrators).
pub async fn stat_all(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<LogQuery>,
) -> ApiResult<HttpResponse> {
    stat(&state, q.into_inner(), None).await
}

/// Query of `GET /api/log/dead_letters`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct DeadLetterQuery {
    page: Option<i64>,
    size: Option<i64>,
}

/// One dead letter as the API shows it; `payload` is the record as JSON (a string if it is not
/// JSON).
fn dead_letter_json(d: &DeadLetterRow) -> Value {
    let payload = serde_json::from_str::<Value>(&d.payload)
        .unwrap_or_else(|_| Value::String(d.payload.clone()));
    json!({
        "id": d.id,
        "created_at": d.created_at,
        "kind": d.kind,
        "request_id": d.request_id,
        "user_id": d.user_id,
        "token_id": d.token_id,
        "quota": d.quota,
        "reason": d.reason,
        "payload": payload,
        "resolved_at": d.resolved_at,
    })
}

/// `GET /api/log/dead_letters` (administrators): consume records the database refused even
/// sanitised, parked by the ledger flush and charged to nobody, newest first, with their
/// reason and the record itself.
pub async fn dead_letters(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<DeadLetterQuery>,
) -> ApiResult<HttpResponse> {
    let page = page_req(q.page, q.size)?;
    paging::list(&state, page, dead_letter_json, move |c| {
        Ok(dead_letters::list_page(c, page)?)
    })
    .await
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct DeleteQuery {
    target_timestamp: Option<String>,
}

/// `DELETE /api/log?target_timestamp=<unix>` (root): deletes every log created before that time;
/// `data` is how many. The daily rollup is kept. The deletion itself is logged (manage).
pub async fn delete_before(
    state: web::Data<AppState>,
    RootUser(me): RootUser,
    q: web::Query<DeleteQuery>,
) -> ApiResult<HttpResponse> {
    let ts = int("target_timestamp", &q.target_timestamp)?.ok_or_else(|| {
        ApiError::bad_request(
            ErrorCode::InvalidQuery,
            "target_timestamp (unix seconds) is required",
        )
    })?;
    if ts < 0 || ts > now() {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidTimestamp,
            "target_timestamp must be a past unix time (seconds)",
        ));
    }
    let n = state
        .db(move |c| {
            let n = logs::delete_before(c, ts, DELETE_BATCH)?;
            logs::record(
                c,
                LogType::Manage,
                me.id,
                &me.username,
                0,
                &format!("deleted {n} logs created before {ts}"),
                &serde_json::json!({"event": "logs_deleted", "count": n, "before": ts}).to_string(),
            )?;
            Ok(n)
        })
        .await?;
    Ok(ok(n))
}

/// Retention: deletes the logs older than the `LogCleanupDays` setting (0 keeps them forever);
/// returns how many went. Meant for the maintenance loop (one node at a time).
pub async fn cleanup_logs(state: &AppState) -> ApiResult<u64> {
    let days = state.settings.operation().log_cleanup_days;
    if days <= 0 {
        return Ok(0);
    }
    let before = now() - days.saturating_mul(DAY_SECS);
    let n = state
        .db(move |c| Ok(logs::delete_before(c, before, DELETE_BATCH)?))
        .await?;
    if n > 0 {
        tracing::info!(deleted = n, before, "old logs deleted (LogCleanupDays)");
    }
    Ok(n)
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct DashboardQuery {
    days: Option<String>,
}

fn add(acc: &mut [i64; 5], s: &[i64; 5]) {
    for (a, x) in acc.iter_mut().zip(s) {
        *a += x;
    }
}

fn usage_json(day: Option<i64>, model: Option<&str>, s: &[i64; 5]) -> Value {
    let mut v = json!({
        "request_count": s[0],
        "quota": s[1],
        "prompt_tokens": s[2],
        "completion_tokens": s[3],
        "cache_hits": s[4],
    });
    if let Some(d) = day {
        v["day"] = json!(d);
    }
    if let Some(m) = model {
        v["model_name"] = json!(m);
    }
    v
}

/// `GET /api/user/dashboard?days=7`: the user's usage over the last `days` UTC days (today
/// included; 1..=90) from the daily rollup: `series` per day and model, `by_day` (every day, zeros
/// included), `by_model` and `totals`; each with `cache_hits`, the requests of `request_count`
/// answered from the response cache.
pub async fn dashboard(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<DashboardQuery>,
) -> ApiResult<HttpResponse> {
    let days = int("days", &q.days)?.unwrap_or(DASHBOARD_DEFAULT_DAYS);
    if !(1..=DASHBOARD_MAX_DAYS).contains(&days) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidDays,
            format!("days must be between 1 and {DASHBOARD_MAX_DAYS}"),
        ));
    }
    let today = day_start(now());
    let from = today - (days - 1) * DAY_SECS;
    let rows = state
        .db(move |c| Ok(statistics::daily_by_model(c, Some(me.id), from, today)?))
        .await?;
    let mut by_day: BTreeMap<i64, [i64; 5]> =
        (0..days).map(|i| (from + i * DAY_SECS, [0; 5])).collect();
    let mut by_model: BTreeMap<&str, [i64; 5]> = BTreeMap::new();
    let mut totals = [0i64; 5];
    let mut series = Vec::with_capacity(rows.len());
    for r in &rows {
        let s = [
            r.request_count,
            r.quota,
            r.prompt_tokens,
            r.completion_tokens,
            r.cache_hits,
        ];
        add(by_day.entry(r.day).or_default(), &s);
        add(by_model.entry(r.model_name.as_str()).or_default(), &s);
        add(&mut totals, &s);
        series.push(usage_json(Some(r.day), Some(&r.model_name), &s));
    }
    Ok(ok(json!({
        "days": days,
        "start_day": from,
        "end_day": today,
        "series": series,
        "by_day": by_day.iter().map(|(d, s)| usage_json(Some(*d), None, s)).collect::<Vec<_>>(),
        "by_model": by_model.iter().map(|(m, s)| usage_json(None, Some(m), s)).collect::<Vec<_>>(),
        "totals": usage_json(None, None, &totals),
    })))
}
