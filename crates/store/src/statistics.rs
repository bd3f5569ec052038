//! The daily rollup (`statistics`): one row per UTC day, user, channel and model, written by
//! [`crate::logs::settle_batch`] in the same transaction as the consume logs. Dashboards read
//! here, never the raw logs.

use crate::logs::sum_bigint_sql;
use crate::schema::statistics;
use crate::{DbConn, StoreResult};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::BigInt;

/// One model's usage on one day (summed over channels).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyModelUsage {
    /// Start of the UTC day, unix seconds.
    pub day: i64,
    pub model_name: String,
    pub request_count: i64,
    pub quota: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    /// Requests answered from the response cache (part of `request_count`).
    pub cache_hits: i64,
}

/// Usage per day and model for days `from_day..=to_day` (day starts), ordered by day then model;
/// one user's when `user_id` is set (index `(user_id, day)`), everyone's otherwise (the unique
/// index leads with `day`).
pub fn daily_by_model(
    conn: &mut DbConn,
    user_id: Option<i64>,
    from_day: i64,
    to_day: i64,
) -> StoreResult<Vec<DailyModelUsage>> {
    let b = conn.backend();
    let mut q = statistics::table
        .filter(statistics::day.ge(from_day))
        .filter(statistics::day.le(to_day))
        .group_by((statistics::day, statistics::model_name))
        .select((
            statistics::day,
            statistics::model_name,
            sql::<BigInt>(&sum_bigint_sql(b, "request_count")),
            sql::<BigInt>(&sum_bigint_sql(b, "quota")),
            sql::<BigInt>(&sum_bigint_sql(b, "prompt_tokens")),
            sql::<BigInt>(&sum_bigint_sql(b, "completion_tokens")),
            sql::<BigInt>(&sum_bigint_sql(b, "cache_hits")),
        ))
        .order((statistics::day.asc(), statistics::model_name.asc()))
        .into_boxed::<<DbConn as diesel::Connection>::Backend>();
    if let Some(u) = user_id {
        q = q.filter(statistics::user_id.eq(u));
    }
    let rows: Vec<(i64, String, i64, i64, i64, i64, i64)> = q.load(conn)?;
    Ok(rows
        .into_iter()
        .map(
            |(day, model_name, request_count, quota, prompt_tokens, completion_tokens, hits)| {
                DailyModelUsage {
                    day,
                    model_name,
                    request_count,
                    quota,
                    prompt_tokens,
                    completion_tokens,
                    cache_hits: hits,
                }
            },
        )
        .collect())
}
