//! Site-wide analytics for administrators (`/api/analytics/*`), from the daily rollup only (never
//! the raw logs, which retention may have deleted): totals and inventory counts, per-day and
//! per-model series, per-user usage, and a CSV export of the per-day, per-model rows.
//!
//! A period is `start_timestamp..=end_timestamp` (unix seconds) widened to whole UTC days; the
//! default is the last [`DEFAULT_DAYS`] days (today included), at most [`MAX_DAYS`] days. Empty
//! or `0` values mean "default", as on the log routes.

use super::paging::{self, int, page_req};
use crate::auth::AdminUser;
use crate::error::{ok, ApiError, ApiResult};
use crate::log_buffer::utc_date;
use crate::AppState;
use actix_web::http::header;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use switchboard_domain::log::{day_start, DAY_SECS};
use switchboard_domain::ErrorCode;
use switchboard_store::analytics::{self, Usage};
use switchboard_store::{now, statistics};

pub const DEFAULT_DAYS: i64 = 7;
pub const MAX_DAYS: i64 = 366;

#[derive(Deserialize, Default, schemars::JsonSchema)]
pub struct PeriodQuery {
    start_timestamp: Option<String>,
    end_timestamp: Option<String>,
    page: Option<String>,
    size: Option<String>,
}

/// A period of whole UTC days, both ends included.
#[derive(Debug, Clone, Copy)]
struct Period {
    from_day: i64,
    to_day: i64,
}

impl Period {
    fn days(self) -> i64 {
        (self.to_day - self.from_day) / DAY_SECS + 1
    }

    fn json(self) -> Value {
        json!({"start_day": self.from_day, "end_day": self.to_day, "days": self.days()})
    }
}

fn period(q: &PeriodQuery, t: i64) -> ApiResult<Period> {
    let start = int("start_timestamp", &q.start_timestamp)?.filter(|&s| s != 0);
    let end = int("end_timestamp", &q.end_timestamp)?.filter(|&e| e != 0);
    if start.is_some_and(|s| s < 0) || end.is_some_and(|e| e < 0) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidRange,
            "timestamps are unix seconds and cannot be negative",
        ));
    }
    let to_day = day_start(end.unwrap_or(t));
    let from_day = match start {
        Some(s) => day_start(s),
        None => to_day - (DEFAULT_DAYS - 1) * DAY_SECS,
    };
    if to_day < from_day || start.zip(end).is_some_and(|(s, e)| e < s) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidRange,
            "end_timestamp cannot be before start_timestamp",
        ));
    }
    let p = Period { from_day, to_day };
    if p.days() > MAX_DAYS {
        return Err(ApiError::bad_request(
            ErrorCode::RangeTooLong,
            format!("a period spans at most {MAX_DAYS} days"),
        ));
    }
    Ok(p)
}

fn usage_fields(u: &Usage) -> Value {
    json!({
        "quota": u.quota,
        "request_count": u.request_count,
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
    })
}

fn with(mut v: Value, key: &str, x: Value) -> Value {
    v[key] = x;
    v
}

/// `GET /api/analytics/statistics`: totals of the period (`quota`, `request_count`, tokens, and
/// how many distinct `users` and `channels` had traffic), plus `total_users`, `total_channels`
/// and `enabled_channels` from the users and channels tables.
pub async fn statistics_route(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<PeriodQuery>,
) -> ApiResult<HttpResponse> {
    let p = period(&q, now())?;
    let (t, inv) = state
        .db(move |c| {
            Ok((
                analytics::totals(c, p.from_day, p.to_day)?,
                analytics::inventory(c)?,
            ))
        })
        .await?;
    let mut v = usage_fields(&t.usage);
    for (k, x) in [
        ("users", t.users),
        ("channels", t.channels),
        ("total_users", inv.total_users),
        ("total_channels", inv.total_channels),
        ("enabled_channels", inv.enabled_channels),
    ] {
        v[k] = json!(x);
    }
    for (k, x) in p.json().as_object().into_iter().flatten() {
        v[k] = x.clone();
    }
    Ok(ok(v))
}

/// `GET /api/analytics/period`: `by_day` (every day of the period, zeros included), `by_model`
/// (totals per model, most quota first) and `series` (per day and model, days with traffic).
pub async fn period_route(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<PeriodQuery>,
) -> ApiResult<HttpResponse> {
    let p = period(&q, now())?;
    let (days, rows) = state
        .db(move |c| {
            Ok((
                analytics::by_day(c, p.from_day, p.to_day)?,
                statistics::daily_by_model(c, None, p.from_day, p.to_day)?,
            ))
        })
        .await?;
    let mut by_day: BTreeMap<i64, Usage> = (0..p.days())
        .map(|i| (p.from_day + i * DAY_SECS, Usage::default()))
        .collect();
    for d in days {
        by_day.insert(d.day, d.usage);
    }
    let mut by_model: BTreeMap<&str, Usage> = BTreeMap::new();
    let mut series = Vec::with_capacity(rows.len());
    for r in &rows {
        let u = by_model.entry(r.model_name.as_str()).or_default();
        u.request_count += r.request_count;
        u.quota += r.quota;
        u.prompt_tokens += r.prompt_tokens;
        u.completion_tokens += r.completion_tokens;
        let v = usage_fields(&Usage {
            request_count: r.request_count,
            quota: r.quota,
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
        });
        series.push(with(
            with(v, "day", json!(r.day)),
            "model_name",
            json!(r.model_name),
        ));
    }
    let mut models: Vec<(&str, Usage)> = by_model.into_iter().collect();
    models.sort_by(|a, b| b.1.quota.cmp(&a.1.quota).then(a.0.cmp(b.0)));
    Ok(ok(with(
        with(
            with(
                p.json(),
                "by_day",
                by_day
                    .iter()
                    .map(|(d, u)| with(usage_fields(u), "day", json!(d)))
                    .collect(),
            ),
            "by_model",
            models
                .iter()
                .map(|(m, u)| with(usage_fields(u), "model_name", json!(m)))
                .collect(),
        ),
        "series",
        Value::Array(series),
    )))
}

/// `GET /api/analytics/users`: usage per user in the period, most quota first, paged
/// (`page`, `size` 1-100) → `{data: [{user_id, username, quota, request_count, prompt_tokens,
/// completion_tokens, tokens}], page, size, total_count}`.
pub async fn users_route(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<PeriodQuery>,
) -> ApiResult<HttpResponse> {
    let p = period(&q, now())?;
    let pr = page_req(int("page", &q.page)?, int("size", &q.size)?)?;
    let render = |u: &analytics::UserUsage| {
        let mut v = usage_fields(&u.usage);
        v["user_id"] = json!(u.user_id);
        v["username"] = json!(u.username);
        v["tokens"] = json!(u.usage.prompt_tokens + u.usage.completion_tokens);
        v
    };
    let mut v = paging::list_json(&state, pr, render, move |c| {
        Ok(analytics::by_user(c, p.from_day, p.to_day, pr)?)
    })
    .await?;
    // The period beside the page: `{start_day, end_day, days, data, page, size, total_count}`.
    if let (Value::Object(page), Value::Object(period)) = (&mut v, p.json()) {
        page.extend(period);
    }
    Ok(ok(v))
}

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF (quotes doubled).
/// A text that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) is
/// prefixed with `'` so that opening an export never evaluates a model name.
pub fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_owned()
    };
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

pub const CSV_HEADER: &str =
    "date,day,model_name,request_count,quota,prompt_tokens,completion_tokens\r\n";

/// `GET /api/analytics/export.csv`: the per-day, per-model rows of the period as CSV (header
/// row, CRLF line ends, UTF-8), as a download.
pub async fn export_csv(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<PeriodQuery>,
) -> ApiResult<HttpResponse> {
    let p = period(&q, now())?;
    let rows = state
        .db(move |c| Ok(statistics::daily_by_model(c, None, p.from_day, p.to_day)?))
        .await?;
    let mut out = String::with_capacity(CSV_HEADER.len() + rows.len() * 64);
    out.push_str(CSV_HEADER);
    for r in &rows {
        out.push_str(&format!(
            "{},{},{},{},{},{},{}\r\n",
            utc_date(r.day),
            r.day,
            csv_field(&r.model_name),
            r.request_count,
            r.quota,
            r.prompt_tokens,
            r.completion_tokens
        ));
    }
    let name = format!(
        "analytics-{}-{}.csv",
        utc_date(p.from_day),
        utc_date(p.to_day)
    );
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        ))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("gpt-4o"), "gpt-4o");
        assert_eq!(csv_field(""), "");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field("cr\rx"), "\"cr\rx\"");
        assert_eq!(csv_field("=1+1"), "'=1+1");
        assert_eq!(csv_field("-x,y"), "\"'-x,y\"");
        assert_eq!(csv_field("@sum"), "'@sum");
        assert_eq!(csv_field("模型"), "模型");
    }

    fn q(s: Option<&str>, e: Option<&str>) -> PeriodQuery {
        PeriodQuery {
            start_timestamp: s.map(str::to_owned),
            end_timestamp: e.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn periods_are_whole_days_within_bounds() {
        let t = 1_800_000_000;
        let p = period(&q(None, None), t).ok().map(|p| (p.days(), p.to_day));
        assert_eq!(p, Some((DEFAULT_DAYS, day_start(t))));
        let p = period(&q(Some("1800000000"), Some("1800000001")), t).ok();
        assert_eq!(p.map(|p| p.days()), Some(1));
        let s = day_start(t);
        let full = period(
            &q(
                Some(&s.to_string()),
                Some(&(s + (MAX_DAYS - 1) * DAY_SECS).to_string()),
            ),
            t,
        );
        assert_eq!(full.ok().map(|p| p.days()), Some(MAX_DAYS));
        assert!(period(
            &q(
                Some(&s.to_string()),
                Some(&(s + MAX_DAYS * DAY_SECS).to_string())
            ),
            t
        )
        .is_err());
        assert!(period(&q(Some("10"), Some("5")), t).is_err());
        assert!(period(&q(Some("x"), None), t).is_err());
        assert!(period(&q(Some("-5"), None), t).is_err());
    }
}
