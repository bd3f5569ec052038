//! Site-wide analytics for administrators, read from the daily rollup (`statistics`) only, never
//! from the raw logs: totals of a period, per-day usage and per-user usage. Days are day starts
//! (UTC, unix seconds) and both ends of a period are inclusive.

use crate::logs::sum_bigint_sql;
use crate::schema::{channels, statistics, users};
use crate::{DbConn, Page, PageReq, StoreResult};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::BigInt;

/// Usage summed over a set of rollup rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub request_count: i64,
    pub quota: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
}

/// Totals of a period, with how many distinct users and channels had traffic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeriodTotals {
    pub usage: Usage,
    pub users: i64,
    pub channels: i64,
}

/// One day's usage (summed over users, channels and models).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayUsage {
    pub day: i64,
    pub usage: Usage,
}

/// One user's usage over a period; `username` is empty when the user no longer exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserUsage {
    pub user_id: i64,
    pub username: String,
    pub usage: Usage,
}

/// Counts of the users and channels tables for the overview.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Inventory {
    pub total_users: i64,
    pub total_channels: i64,
    pub enabled_channels: i64,
}

/// Channel status "enabled" (`switchboard_domain::channel::ChannelStatus::Enabled`).
const CHANNEL_ENABLED: i32 = 1;

type Sums = (i64, i64, i64, i64);

fn usage((request_count, quota, prompt_tokens, completion_tokens): Sums) -> Usage {
    Usage {
        request_count,
        quota,
        prompt_tokens,
        completion_tokens,
    }
}

/// Totals of days `from_day..=to_day`.
pub fn totals(conn: &mut DbConn, from_day: i64, to_day: i64) -> StoreResult<PeriodTotals> {
    let b = conn.backend();
    let (request_count, quota, prompt_tokens, completion_tokens, users, channels): (
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
    ) = statistics::table
        .filter(statistics::day.ge(from_day))
        .filter(statistics::day.le(to_day))
        .select((
            sql::<BigInt>(&sum_bigint_sql(b, "request_count")),
            sql::<BigInt>(&sum_bigint_sql(b, "quota")),
            sql::<BigInt>(&sum_bigint_sql(b, "prompt_tokens")),
            sql::<BigInt>(&sum_bigint_sql(b, "completion_tokens")),
            sql::<BigInt>("COUNT(DISTINCT user_id)"),
            sql::<BigInt>("COUNT(DISTINCT channel_id)"),
        ))
        .get_result(conn)?;
    Ok(PeriodTotals {
        usage: usage((request_count, quota, prompt_tokens, completion_tokens)),
        users,
        channels,
    })
}

/// Usage per day of `from_day..=to_day`, days with traffic only, oldest first.
pub fn by_day(conn: &mut DbConn, from_day: i64, to_day: i64) -> StoreResult<Vec<DayUsage>> {
    let b = conn.backend();
    let rows: Vec<(i64, i64, i64, i64, i64)> = statistics::table
        .filter(statistics::day.ge(from_day))
        .filter(statistics::day.le(to_day))
        .group_by(statistics::day)
        .select((
            statistics::day,
            sql::<BigInt>(&sum_bigint_sql(b, "request_count")),
            sql::<BigInt>(&sum_bigint_sql(b, "quota")),
            sql::<BigInt>(&sum_bigint_sql(b, "prompt_tokens")),
            sql::<BigInt>(&sum_bigint_sql(b, "completion_tokens")),
        ))
        .order(statistics::day.asc())
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|(day, r, q, p, c)| DayUsage {
            day,
            usage: usage((r, q, p, c)),
        })
        .collect())
}

/// Usage per user over `from_day..=to_day`, most quota first (ties by user id), one page; the
/// total is the number of users with traffic in the period.
pub fn by_user(
    conn: &mut DbConn,
    from_day: i64,
    to_day: i64,
    page: PageReq,
) -> StoreResult<Page<UserUsage>> {
    let b = conn.backend();
    let total: i64 = statistics::table
        .filter(statistics::day.ge(from_day))
        .filter(statistics::day.le(to_day))
        .select(sql::<BigInt>("COUNT(DISTINCT user_id)"))
        .get_result(conn)?;
    let quota_sum = sum_bigint_sql(b, "quota");
    let rows: Vec<(i64, i64, i64, i64, i64)> = statistics::table
        .filter(statistics::day.ge(from_day))
        .filter(statistics::day.le(to_day))
        .group_by(statistics::user_id)
        .select((
            statistics::user_id,
            sql::<BigInt>(&sum_bigint_sql(b, "request_count")),
            sql::<BigInt>(&quota_sum),
            sql::<BigInt>(&sum_bigint_sql(b, "prompt_tokens")),
            sql::<BigInt>(&sum_bigint_sql(b, "completion_tokens")),
        ))
        .order((sql::<BigInt>(&quota_sum).desc(), statistics::user_id.asc()))
        .limit(page.size)
        .offset(page.offset())
        .load(conn)?;
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let names: std::collections::HashMap<i64, String> = if ids.is_empty() {
        Default::default()
    } else {
        users::table
            .filter(users::id.eq_any(&ids))
            .select((users::id, users::username))
            .load::<(i64, String)>(conn)?
            .into_iter()
            .collect()
    };
    let items = rows
        .into_iter()
        .map(|(user_id, r, q, p, c)| UserUsage {
            user_id,
            username: names.get(&user_id).cloned().unwrap_or_default(),
            usage: usage((r, q, p, c)),
        })
        .collect();
    Ok(Page { items, total })
}

/// How many users and channels exist, and how many channels are enabled.
pub fn inventory(conn: &mut DbConn) -> StoreResult<Inventory> {
    let total_users = users::table.count().get_result(conn)?;
    let total_channels = channels::table.count().get_result(conn)?;
    let enabled_channels = channels::table
        .filter(channels::status.eq(CHANNEL_ENABLED))
        .count()
        .get_result(conn)?;
    Ok(Inventory {
        total_users,
        total_channels,
        enabled_channels,
    })
}
