//! Log rows: consumption, recharge, management and system events.

use crate::schema::logs;
use crate::users::prefix_pattern;
use crate::{now, DbConn, StoreResult};
use diesel::prelude::*;
use switchboard_domain::log::LogType;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = logs)]
pub struct LogRow {
    pub id: i64,
    pub created_at: i64,
    pub log_type: i32,
    pub user_id: i64,
    pub username: String,
    pub token_id: i64,
    pub token_name: String,
    pub channel_id: i64,
    pub model_name: String,
    pub group_name: String,
    pub quota: i64,
    pub prompt_tokens: i32,
    pub completion_tokens: i32,
    pub use_time_ms: i32,
    pub first_response_ms: i32,
    pub is_stream: bool,
    pub source_ip: String,
    pub request_id: Option<String>,
    pub content: String,
    pub metadata: String,
    /// Answered from the response cache (no upstream call).
    pub cache_hit: bool,
}

/// Records an event that is not a relay request (management, recharge, system): who it concerns,
/// how much quota moved (0 when none) and a human sentence.
pub fn record(
    conn: &mut DbConn,
    kind: LogType,
    user_id: i64,
    username: &str,
    quota: i64,
    content: &str,
    metadata: &str,
) -> StoreResult<()> {
    diesel::insert_into(logs::table)
        .values((
            logs::created_at.eq(now()),
            logs::log_type.eq(kind.as_i32()),
            logs::user_id.eq(user_id),
            logs::username.eq(username),
            logs::quota.eq(quota),
            logs::content.eq(content),
            logs::metadata.eq(metadata),
        ))
        .execute(conn)?;
    Ok(())
}

/// The newest logs of a user, newest first (used by tests and the user's recent activity).
pub fn recent_for_user(conn: &mut DbConn, user_id: i64, limit: i64) -> StoreResult<Vec<LogRow>> {
    Ok(logs::table
        .filter(logs::user_id.eq(user_id))
        .order((logs::created_at.desc(), logs::id.desc()))
        .limit(limit)
        .select(LogRow::as_select())
        .load(conn)?)
}

/// A short text kept inline up to 24 bytes (longer ones on the heap); reads and compares as a
/// `str`, serialised as a plain JSON string.
pub type Text = compact_str::CompactString;

/// One settled relay request, as the ledger hands it to the database (written by
/// [`ConsumeRows`]).
///
/// The short texts are [`Text`]: inline up to 24 bytes (a request id, names, a model, a group,
/// an address), so a record queued by a worker holds no heap strings of its own and the log
/// writer, on another thread, frees none (each such free handed memory back across cores).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConsumeRecord {
    /// Unique per request: a batch written twice inserts (and counts) each request once.
    pub request_id: Option<Text>,
    pub created_at: i64,
    pub log_type: i32,
    pub user_id: i64,
    pub username: Text,
    pub token_id: i64,
    pub token_name: Text,
    pub channel_id: i64,
    pub model_name: Text,
    pub group_name: Text,
    pub quota: i64,
    pub prompt_tokens: i32,
    pub completion_tokens: i32,
    pub use_time_ms: i32,
    pub first_response_ms: i32,
    pub is_stream: bool,
    pub source_ip: Text,
    pub content: String,
    pub metadata: String,
    /// Answered from the response cache. Absent in records queued by a release without the
    /// cache (dead letters, Redis queues): false.
    #[serde(default)]
    pub cache_hit: bool,
}

/// Writes a batch of consume records in one transaction: the log rows, the users' balances and
/// counters, the tokens' remaining and used quota, the channels' used quota and the daily rollup.
/// Every delta is derived from the rows actually inserted, so replaying a batch (after a failed
/// commit acknowledgement, say) changes nothing the second time. Returns the rows inserted.
pub fn settle_batch(conn: &mut DbConn, batch: &[ConsumeRecord]) -> StoreResult<usize> {
    settle(conn, batch, true)
}

/// [`settle_batch`] for a batch that has never been attempted: it skips the look-up of request
/// ids already written. Should one exist after all, the unique index refuses the insert and the
/// whole transaction fails with [`crate::StoreError::Conflict`], changing nothing; the caller
/// then runs [`settle_batch`].
pub fn settle_new_batch(conn: &mut DbConn, batch: &[ConsumeRecord]) -> StoreResult<usize> {
    settle(conn, batch, false)
}

fn settle(conn: &mut DbConn, batch: &[ConsumeRecord], check_written: bool) -> StoreResult<usize> {
    use crate::schema::{channels, statistics, tokens, users};
    use std::collections::BTreeMap;
    if batch.is_empty() {
        return Ok(0);
    }
    crate::transaction(conn, |c| {
        let fresh: Vec<&ConsumeRecord> = if check_written {
            let ids: Vec<&str> = batch
                .iter()
                .filter_map(|r| r.request_id.as_deref())
                .collect();
            let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
            for chunk in ids.chunks(500) {
                let found: Vec<Option<String>> = logs::table
                    .filter(logs::request_id.eq_any(chunk))
                    .select(logs::request_id)
                    .load(c)?;
                seen.extend(found.into_iter().flatten());
            }
            let fresh: Vec<&ConsumeRecord> = batch
                .iter()
                .filter(|r| match &r.request_id {
                    Some(id) => seen.insert(id.to_string()),
                    None => true,
                })
                .collect();
            insert_rows(c, &fresh)?;
            fresh
        } else {
            // A batch never attempted is written as it is: a request id already written, or
            // twice in the batch, fails the unique index and the whole transaction (see
            // `settle_new_batch`).
            let all: Vec<&ConsumeRecord> = batch.iter().collect();
            insert_rows(c, &all)?;
            all
        };
        let mut per_user: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
        let mut per_token: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
        let mut per_channel: BTreeMap<i64, i64> = BTreeMap::new();
        let mut per_day: BTreeMap<(i64, i64, i64, &str), [i64; 6]> = BTreeMap::new();
        // Only consumption moves balances, counters and the rollup; an error log is a row only.
        for r in fresh
            .iter()
            .filter(|r| r.log_type == LogType::Consume.as_i32())
        {
            let u = per_user.entry(r.user_id).or_default();
            u.0 += r.quota;
            u.1 += 1;
            if r.token_id > 0 {
                let t = per_token.entry(r.token_id).or_default();
                t.0 += r.quota;
                t.1 += 1;
            }
            if r.channel_id > 0 {
                *per_channel.entry(r.channel_id).or_default() += r.quota;
            }
            let day = r.created_at - r.created_at.rem_euclid(86_400);
            let s = per_day
                .entry((day, r.user_id, r.channel_id, r.model_name.as_str()))
                .or_default();
            s[0] += 1;
            s[1] += r.quota;
            s[2] += i64::from(r.prompt_tokens);
            s[3] += i64::from(r.completion_tokens);
            s[4] += i64::from(r.use_time_ms);
            s[5] += i64::from(r.cache_hit);
        }
        for (id, (q, n)) in per_user {
            diesel::update(users::table.find(id))
                .set((
                    users::quota.eq(users::quota - q),
                    users::used_quota.eq(users::used_quota + q),
                    users::request_count.eq(users::request_count + n),
                ))
                .execute(c)?;
        }
        for (id, (q, n)) in per_token {
            diesel::update(tokens::table.find(id))
                .set((
                    tokens::remain_quota.eq(tokens::remain_quota - q),
                    tokens::used_quota.eq(tokens::used_quota + q),
                    tokens::request_count.eq(tokens::request_count + n),
                ))
                .execute(c)?;
        }
        for (id, q) in per_channel {
            diesel::update(channels::table.find(id))
                .set(channels::used_quota.eq(channels::used_quota + q))
                .execute(c)?;
        }
        for ((day, user, channel, model), s) in per_day {
            let key = statistics::table
                .filter(statistics::day.eq(day))
                .filter(statistics::user_id.eq(user))
                .filter(statistics::channel_id.eq(channel))
                .filter(statistics::model_name.eq(model));
            let n = diesel::update(key)
                .set((
                    statistics::request_count.eq(statistics::request_count + s[0]),
                    statistics::quota.eq(statistics::quota + s[1]),
                    statistics::prompt_tokens.eq(statistics::prompt_tokens + s[2]),
                    statistics::completion_tokens.eq(statistics::completion_tokens + s[3]),
                    statistics::request_time_ms.eq(statistics::request_time_ms + s[4]),
                    statistics::cache_hits.eq(statistics::cache_hits + s[5]),
                ))
                .execute(c)?;
            if n == 0 {
                diesel::insert_into(statistics::table)
                    .values((
                        statistics::day.eq(day),
                        statistics::user_id.eq(user),
                        statistics::channel_id.eq(channel),
                        statistics::model_name.eq(model),
                        statistics::request_count.eq(s[0]),
                        statistics::quota.eq(s[1]),
                        statistics::prompt_tokens.eq(s[2]),
                        statistics::completion_tokens.eq(s[3]),
                        statistics::request_time_ms.eq(s[4]),
                        statistics::cache_hits.eq(s[5]),
                    ))
                    .execute(c)?;
            }
        }
        Ok(fresh.len())
    })
}

/// Writes `rows` in statements of 64, 16, 4 and 1 rows: a few fixed shapes, each prepared once
/// per connection and reused (a statement for any length would be prepared anew every time),
/// and at most nine statements for a batch's tail.
fn insert_rows(c: &mut DbConn, rows: &[&ConsumeRecord]) -> StoreResult<()> {
    let rest = insert_chunks::<64>(c, rows)?;
    let rest = insert_chunks::<16>(c, rest)?;
    let rest = insert_chunks::<4>(c, rest)?;
    insert_chunks::<1>(c, rest)?;
    Ok(())
}

/// Writes the whole `N`-row chunks of `rows`; returns what is left (fewer than `N`).
fn insert_chunks<'r, 'a, const N: usize>(
    c: &mut DbConn,
    rows: &'r [&'a ConsumeRecord],
) -> StoreResult<&'r [&'a ConsumeRecord]> {
    let (chunks, rest) = rows.as_chunks::<N>();
    for chunk in chunks {
        let q = ConsumeRows(*chunk);
        match c {
            DbConn::Sqlite(c) => q.execute(c)?,
            DbConn::Pg(c) => q.execute(c)?,
            DbConn::Mysql(c) => q.execute(c)?,
        };
    }
    Ok(rest)
}

/// `INSERT INTO logs (...) VALUES (...), ...` of `N` consume records, with every value bound
/// (a `None` request id as NULL; diesel's generated insert would write a `DEFAULT`, which
/// SQLite's multi-row `VALUES` lacks).
///
/// Written by hand rather than through `#[derive(Insertable)]` for the log writer's cost: the
/// derived statement is walked three times per execution (is it cacheable, is it empty, its
/// binds), through a tuple of twenty column wrappers per row, ~11k instructions a row under
/// callgrind; this one answers the first two at once and walks the binds once.
struct ConsumeRows<'a, const N: usize>([&'a ConsumeRecord; N]);

/// The statement's identity in diesel's prepared-statement cache: one per row count.
struct ConsumeRowsId<const N: usize>;

impl<const N: usize> diesel::query_builder::QueryId for ConsumeRows<'_, N> {
    type QueryId = ConsumeRowsId<N>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<Conn, const N: usize> RunQueryDsl<Conn> for ConsumeRows<'_, N> {}

/// Calls `$m!` with the `logs` columns a consume record fills, each named as the schema's column
/// and as the record's field (the same name): the column list and the binds of
/// [`ConsumeRows`] are made from this one list, in one order, with the schema's names and SQL
/// types.
macro_rules! consume_columns {
    ($m:ident) => {
        $m!(
            request_id,
            created_at,
            log_type,
            user_id,
            username,
            token_id,
            token_name,
            channel_id,
            model_name,
            group_name,
            quota,
            prompt_tokens,
            completion_tokens,
            use_time_ms,
            first_response_ms,
            is_stream,
            source_ip,
            content,
            metadata,
            cache_hit
        )
    };
}

impl<DB, const N: usize> diesel::query_builder::QueryFragment<DB> for ConsumeRows<'_, N>
where
    DB: diesel::backend::Backend
        + diesel::sql_types::HasSqlType<diesel::sql_types::BigInt>
        + diesel::sql_types::HasSqlType<diesel::sql_types::Integer>
        + diesel::sql_types::HasSqlType<diesel::sql_types::Text>
        + diesel::sql_types::HasSqlType<diesel::sql_types::Bool>,
    logs::table: diesel::query_builder::QueryFragment<DB>,
    i64: diesel::serialize::ToSql<diesel::sql_types::BigInt, DB>,
    i32: diesel::serialize::ToSql<diesel::sql_types::Integer, DB>,
    bool: diesel::serialize::ToSql<diesel::sql_types::Bool, DB>,
    String: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
    Text: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
    Option<Text>:
        diesel::serialize::ToSql<diesel::sql_types::Nullable<diesel::sql_types::Text>, DB>,
{
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> QueryResult<()> {
        use diesel::{Column, Expression};
        macro_rules! names {
            ($first:ident $(, $c:ident)*) => {
                out.push_identifier(<logs::$first as Column>::NAME)?;
                $(
                    out.push_sql(", ");
                    out.push_identifier(<logs::$c as Column>::NAME)?;
                )*
            };
        }
        macro_rules! binds {
            ($r:ident; $first:ident $(, $c:ident)*) => {
                out.push_bind_param::<<logs::$first as Expression>::SqlType, _>(&$r.$first)?;
                $(
                    out.push_sql(", ");
                    out.push_bind_param::<<logs::$c as Expression>::SqlType, _>(&$r.$c)?;
                )*
            };
        }
        macro_rules! row_binds {
            ($($c:ident),*) => {
                for (i, r) in self.0.iter().enumerate() {
                    out.push_sql(if i == 0 { "(" } else { ", (" });
                    binds!(r; $($c),*);
                    out.push_sql(")");
                }
            };
        }
        out.push_sql("INSERT INTO ");
        logs::table.walk_ast(out.reborrow())?;
        out.push_sql(" (");
        consume_columns!(names);
        out.push_sql(") VALUES ");
        consume_columns!(row_binds);
        Ok(())
    }

    fn is_safe_to_cache_prepared(&self, _backend: &DB) -> QueryResult<bool> {
        Ok(true)
    }

    fn is_noop(&self, _backend: &DB) -> QueryResult<bool> {
        Ok(N == 0)
    }
}

// ---------------------------------------------------------------------------------------------
// Isolating flush: one record the database refuses never blocks the others.
// ---------------------------------------------------------------------------------------------

/// Column sizes of `logs` on PostgreSQL and MySQL (`VARCHAR(n)` holds `n` characters there;
/// SQLite does not enforce them). `content` and `metadata` are `TEXT`: 65,535 bytes on MySQL.
pub const USERNAME_MAX_CHARS: usize = 64;
pub const TOKEN_NAME_MAX_CHARS: usize = 64;
pub const MODEL_NAME_MAX_CHARS: usize = 255;
pub const GROUP_NAME_MAX_CHARS: usize = 64;
pub const SOURCE_IP_MAX_CHARS: usize = 64;
pub const TEXT_MAX_BYTES: usize = 65_535;

impl ConsumeRecord {
    /// The record made storable on every backend: control characters (NUL among them, which
    /// PostgreSQL refuses) removed from its strings (tabs and line breaks stay in `content` and
    /// `metadata`), and the strings cut to their columns' sizes. Who is charged, by which key
    /// and channel, how much and under which request id are unchanged, so the consumption still
    /// reaches the balances (and a replay still finds the request written).
    pub fn sanitised(&self) -> ConsumeRecord {
        use crate::text::{truncate_bytes, truncate_chars, without_controls};
        let short =
            |s: &str, max: usize| Text::from(truncate_chars(&without_controls(s, false), max));
        let long = |s: &str| truncate_bytes(&without_controls(s, true), TEXT_MAX_BYTES).to_owned();
        ConsumeRecord {
            username: short(&self.username, USERNAME_MAX_CHARS),
            token_name: short(&self.token_name, TOKEN_NAME_MAX_CHARS),
            model_name: short(&self.model_name, MODEL_NAME_MAX_CHARS),
            group_name: short(&self.group_name, GROUP_NAME_MAX_CHARS),
            source_ip: short(&self.source_ip, SOURCE_IP_MAX_CHARS),
            content: long(&self.content),
            metadata: long(&self.metadata),
            ..self.clone()
        }
    }

    /// The record as JSON for a dead letter, bounded to fit one: JSON escapes control
    /// characters (`\u0000`), and every string is cut shorter until the whole fits.
    fn dead_letter_payload(&self) -> String {
        let max = crate::dead_letters::PAYLOAD_MAX_BYTES;
        let full = serde_json::to_string(self).unwrap_or_default();
        if full.len() <= max {
            return full;
        }
        for keep in [8_000, 1_000, 100] {
            let cut = |s: &str| crate::text::truncate_chars(s, keep).to_owned();
            let cut_short = |s: &str| Text::from(crate::text::truncate_chars(s, keep));
            let shorter = ConsumeRecord {
                request_id: self.request_id.as_deref().map(cut_short),
                username: cut_short(&self.username),
                token_name: cut_short(&self.token_name),
                model_name: cut_short(&self.model_name),
                group_name: cut_short(&self.group_name),
                source_ip: cut_short(&self.source_ip),
                content: cut(&self.content),
                metadata: cut(&self.metadata),
                ..self.clone()
            };
            let mut v = serde_json::to_value(&shorter).unwrap_or_default();
            v["truncated"] = serde_json::Value::Bool(true);
            let text = v.to_string();
            if text.len() <= max {
                return text;
            }
        }
        String::new()
    }
}

/// A record the database refused even sanitised, parked in `dead_letters` and not applied to
/// any balance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parked {
    pub request_id: Option<String>,
    pub user_id: i64,
    pub token_id: i64,
    pub quota: i64,
    /// The database's error message.
    pub reason: String,
}

/// What [`settle_isolated`] did with a batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettleOutcome {
    /// Log rows inserted (and applied to the balances); a request already written counts 0.
    pub written: usize,
    /// Of the `written`, those inserted in their sanitised form (see
    /// [`ConsumeRecord::sanitised`]).
    pub sanitised: usize,
    /// Records parked in `dead_letters`.
    pub parked: Vec<Parked>,
}

/// Writes a batch so that one record the database refuses never blocks the others:
///
/// 1. The whole batch in one transaction ([`settle_new_batch`], then [`settle_batch`] when a
///    request id was already written), the usual case.
/// 2. If the database refused the data ([`crate::StoreError::is_about_data`]), each record on
///    its own, through [`settle_batch`] (idempotent by request id; once more on a conflict, a
///    concurrent writer of the same rollup row). A record refused is tried once more
///    [`ConsumeRecord::sanitised`], so the customer's consumption still reaches the balances
///    and the logs.
/// 3. A record refused even sanitised is parked in `dead_letters` with the reason, and is not
///    applied to any balance: every balance delta still comes from log rows inserted.
///
/// Errors that are not about the data (the pool, a lost connection, a lock, or a failure to
/// park) are returned, and the caller keeps the whole batch queued: what was written already
/// is skipped on the next try, by request id. (Records without a request id would be written
/// again; the relay always sets one.) So is the batch's error when none of two or more records
/// could be written: that points at the database rather than at each record's data.
///
/// A record parked by an earlier attempt of the same batch is listed in `parked` again but not
/// stored twice.
pub fn settle_isolated(conn: &mut DbConn, batch: &[ConsumeRecord]) -> StoreResult<SettleOutcome> {
    crate::conn::for_batch_write(conn, |conn| settle_isolated_in(conn, batch))
}

fn settle_isolated_in(conn: &mut DbConn, batch: &[ConsumeRecord]) -> StoreResult<SettleOutcome> {
    let whole = match settle_new_batch(conn, batch) {
        Err(crate::StoreError::Conflict(_)) => settle_batch(conn, batch),
        other => other,
    };
    let refused = match whole {
        Ok(written) => {
            return Ok(SettleOutcome {
                written,
                ..SettleOutcome::default()
            })
        }
        Err(e) if !e.is_about_data() => return Err(e),
        Err(e) => e,
    };
    tracing::warn!(
        "a batch of {} consume records was refused ({refused}); writing them one by one",
        batch.len()
    );
    let mut out = SettleOutcome::default();
    let mut unstorable: Vec<(&ConsumeRecord, String)> = Vec::new();
    let mut accepted = 0usize;
    for record in batch {
        let first = match settle_one(conn, record) {
            Ok(n) => {
                out.written += n;
                accepted += 1;
                continue;
            }
            Err(e) if !e.is_about_data() => return Err(e),
            Err(e) => e,
        };
        let clean = record.sanitised();
        if clean == *record {
            unstorable.push((record, first.to_string()));
            continue;
        }
        match settle_one(conn, &clean) {
            Ok(n) => {
                out.written += n;
                out.sanitised += n;
                accepted += 1;
            }
            Err(e) if !e.is_about_data() => return Err(e),
            Err(e) => unstorable.push((record, format!("{first} (sanitised: {e})"))),
        }
    }
    if unstorable.is_empty() {
        return Ok(out);
    }
    if accepted == 0 && batch.len() > 1 {
        // Not one record could be written: the database (a missing table, a permission) is
        // more likely the cause than every record's data. Nothing is parked; the batch stays
        // queued, and a bad record is parked once it meets a good one.
        return Err(refused);
    }
    // A connection that broke in a way not recognised above fails here too: nothing is parked
    // then, and the batch stays queued.
    diesel::sql_query("SELECT 1").execute(conn)?;
    crate::transaction(conn, |c| {
        for (record, reason) in &unstorable {
            crate::dead_letters::insert(
                c,
                &crate::dead_letters::NewDeadLetter {
                    kind: crate::dead_letters::KIND_CONSUME.to_owned(),
                    request_id: record.request_id.as_deref().map(str::to_owned),
                    user_id: record.user_id,
                    token_id: record.token_id,
                    quota: record.quota,
                    reason: reason.clone(),
                    payload: record.dead_letter_payload(),
                },
            )?;
        }
        Ok::<_, crate::StoreError>(())
    })?;
    out.parked = unstorable
        .into_iter()
        .map(|(r, reason)| Parked {
            request_id: r.request_id.as_deref().map(str::to_owned),
            user_id: r.user_id,
            token_id: r.token_id,
            quota: r.quota,
            reason: crate::text::truncate_chars(
                &crate::text::without_controls(&reason, true),
                crate::dead_letters::REASON_MAX_CHARS,
            )
            .to_owned(),
        })
        .collect();
    Ok(out)
}

/// One record through the checked path; once more on a conflict (another writer inserted the
/// same rollup row between the update and the insert).
fn settle_one(conn: &mut DbConn, record: &ConsumeRecord) -> StoreResult<usize> {
    let one = std::slice::from_ref(record);
    match settle_batch(conn, one) {
        Err(crate::StoreError::Conflict(_)) => settle_batch(conn, one),
        other => other,
    }
}

/// Sum of consume-log quota of a user (invariant checks and reconciliation; not a hot path).
pub fn consumed_by_user(conn: &mut DbConn, user_id: i64) -> StoreResult<i64> {
    let rows: Vec<i64> = logs::table
        .filter(logs::user_id.eq(user_id))
        .filter(logs::log_type.eq(LogType::Consume.as_i32()))
        .select(logs::quota)
        .load(conn)?;
    Ok(rows.iter().sum())
}

// ---------------------------------------------------------------------------------------------
// The log screens: filtered lists (offset and keyset pages), consumption sums, retention.
// ---------------------------------------------------------------------------------------------

type Db = <DbConn as diesel::Connection>::Backend;

/// What the log screens filter on. Every field narrows the result; `None` does not filter.
/// The user's own routes always set `user_id`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFilter {
    pub user_id: Option<i64>,
    pub log_type: Option<i32>,
    /// `created_at >= start` (unix seconds).
    pub start: Option<i64>,
    /// `created_at <= end` (unix seconds).
    pub end: Option<i64>,
    /// Logs whose model name starts with this (`gpt-4o` finds `gpt-4o` and `gpt-4o-mini`).
    pub model_name: Option<String>,
    /// Logs whose key name starts with this.
    pub token_name: Option<String>,
    pub token_id: Option<i64>,
    pub username: Option<String>,
    pub channel_id: Option<i64>,
    pub group_name: Option<String>,
    pub source_ip: Option<String>,
}

impl LogFilter {
    /// Whether a filter narrows the rows more than a log type can (an index serves each).
    fn has_selective_column(&self) -> bool {
        self.user_id.is_some()
            || self.token_id.is_some()
            || self.channel_id.is_some()
            || self.model_name.is_some()
    }
}

/// The log-type condition. SQLite without `ANALYZE` statistics cannot tell that `type` has four
/// values and may walk the `(type, created_at)` index (every consume log) instead of, say,
/// `(user_id, created_at)`; written as `type + 0 = t` the term cannot use an index, so SQLite
/// takes the selective one. Elsewhere the plain term is kept: PostgreSQL has statistics, and it
/// misjudges the selectivity of an expression (it would sort a heavy user's rows).
fn type_is<'a>(
    q: logs::BoxedQuery<'a, Db>,
    t: i32,
    f: &LogFilter,
    backend: crate::Backend,
) -> logs::BoxedQuery<'a, Db> {
    if backend == crate::Backend::Sqlite && f.has_selective_column() {
        q.filter((logs::log_type + 0).eq(t))
    } else {
        q.filter(logs::log_type.eq(t))
    }
}

fn filtered(f: &LogFilter, backend: crate::Backend) -> logs::BoxedQuery<'_, Db> {
    let mut q = logs::table.into_boxed();
    if let Some(u) = f.user_id {
        q = q.filter(logs::user_id.eq(u));
    }
    if let Some(t) = f.log_type {
        q = type_is(q, t, f, backend);
    }
    if let Some(s) = f.start {
        q = q.filter(logs::created_at.ge(s));
    }
    if let Some(e) = f.end {
        q = q.filter(logs::created_at.le(e));
    }
    if let Some(m) = &f.model_name {
        q = q.filter(logs::model_name.like(prefix_pattern(m)).escape('\\'));
    }
    if let Some(t) = &f.token_name {
        q = q.filter(logs::token_name.like(prefix_pattern(t)).escape('\\'));
    }
    if let Some(t) = f.token_id {
        q = q.filter(logs::token_id.eq(t));
    }
    if let Some(u) = &f.username {
        q = q.filter(logs::username.eq(u));
    }
    if let Some(c) = f.channel_id {
        q = q.filter(logs::channel_id.eq(c));
    }
    if let Some(g) = &f.group_name {
        q = q.filter(logs::group_name.eq(g));
    }
    if let Some(ip) = &f.source_ip {
        q = q.filter(logs::source_ip.eq(ip));
    }
    q
}

/// One page of logs, newest first (`created_at` desc, then `id` desc), with the exact number of
/// matching rows. For deep scrolling through large tables use [`list_before`] instead: OFFSET
/// reads and discards every skipped row.
pub fn list(
    conn: &mut DbConn,
    f: &LogFilter,
    page: crate::PageReq,
) -> StoreResult<crate::Page<LogRow>> {
    let b = conn.backend();
    let total: i64 = filtered(f, b).count().get_result(conn)?;
    let items = filtered(f, b)
        .order((logs::created_at.desc(), logs::id.desc()))
        .limit(page.size)
        .offset(page.offset())
        .select(LogRow::as_select())
        .load(conn)?;
    Ok(crate::Page { items, total })
}

/// Keyset page: up to `limit` logs that come after the log `before_id` in the listing order
/// (`created_at` desc, `id` desc), i.e. `(created_at, id) < (cursor.created_at, before_id)`.
/// The cursor row is looked up within `f.user_id` only (a user cannot probe other users' rows);
/// when it is not visible (deleted by retention, another user's, or made up) the condition falls
/// back to `id < before_id`. No OFFSET and no COUNT: cost is `limit` rows down an index.
pub fn list_before(
    conn: &mut DbConn,
    f: &LogFilter,
    before_id: i64,
    limit: i64,
) -> StoreResult<Vec<LogRow>> {
    let mut cursor = logs::table.find(before_id).into_boxed();
    if let Some(u) = f.user_id {
        cursor = cursor.filter(logs::user_id.eq(u));
    }
    let at: Option<i64> = cursor.select(logs::created_at).first(conn).optional()?;
    let mut q = filtered(f, conn.backend());
    q = match at {
        Some(at) => q.filter(
            logs::created_at
                .le(at)
                .and(logs::created_at.lt(at).or(logs::id.lt(before_id))),
        ),
        None => q.filter(logs::id.lt(before_id)),
    };
    Ok(q.order((logs::created_at.desc(), logs::id.desc()))
        .limit(limit)
        .select(LogRow::as_select())
        .load(conn)?)
}

/// `COALESCE(SUM(col), 0)` as a BIGINT on every backend: PostgreSQL sums BIGINT to NUMERIC and
/// MySQL sums anything to DECIMAL, so both are cast back (SQLite's SUM of integers is an integer
/// and fails loudly on overflow).
pub(crate) fn sum_bigint_sql(backend: crate::Backend, column: &str) -> String {
    match backend {
        crate::Backend::Sqlite => format!("COALESCE(SUM({column}), 0)"),
        crate::Backend::Postgres => format!("CAST(COALESCE(SUM({column}), 0) AS BIGINT)"),
        crate::Backend::Mysql => format!("CAST(COALESCE(SUM({column}), 0) AS SIGNED)"),
    }
}

/// Consumption totals of a set of logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsumeSums {
    pub request_count: i64,
    pub quota: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
}

/// Exact sums over the consume logs (type 2) among those the filter selects (a filter on another
/// type therefore sums to zero): computed by the database with SUM, never by loading rows.
pub fn consume_sums(conn: &mut DbConn, f: &LogFilter) -> StoreResult<ConsumeSums> {
    use diesel::dsl::sql;
    use diesel::sql_types::BigInt;
    let b = conn.backend();
    let q = type_is(filtered(f, b), LogType::Consume.as_i32(), f, b);
    let (request_count, quota, prompt_tokens, completion_tokens) = q
        .select((
            sql::<BigInt>("COUNT(*)"),
            sql::<BigInt>(&sum_bigint_sql(b, "quota")),
            sql::<BigInt>(&sum_bigint_sql(b, "prompt_tokens")),
            sql::<BigInt>(&sum_bigint_sql(b, "completion_tokens")),
        ))
        .get_result::<(i64, i64, i64, i64)>(conn)?;
    Ok(ConsumeSums {
        request_count,
        quota,
        prompt_tokens,
        completion_tokens,
    })
}

const DAY: i64 = 86_400;

/// [`consume_sums`], with the whole UTC days of the range read from the daily rollup
/// (`statistics`) instead of the logs, so a month of statistics costs a few thousand rollup rows
/// rather than millions of log rows. The answer is the same as [`consume_sums`]'s: the rollup is
/// written in the same transaction as the consume logs, and only days after the day of the oldest
/// remaining log are taken from it (log cleanup deletes the oldest logs first, so those days are
/// complete). Filters the rollup cannot answer (key, username, group, source IP) fall back to the
/// logs.
pub fn consume_sums_fast(conn: &mut DbConn, f: &LogFilter) -> StoreResult<ConsumeSums> {
    use crate::schema::statistics;
    use diesel::dsl::{min, sql};
    use diesel::sql_types::BigInt;
    let rollup_answers = f.token_name.is_none()
        && f.token_id.is_none()
        && f.username.is_none()
        && f.group_name.is_none()
        && f.source_ip.is_none()
        && matches!(f.log_type, None | Some(2));
    if !rollup_answers {
        return consume_sums(conn, f);
    }
    let oldest: Option<i64> = logs::table.select(min(logs::created_at)).first(conn)?;
    let Some(oldest) = oldest else {
        return Ok(ConsumeSums::default());
    };
    let day_of = |t: i64| t - t.rem_euclid(DAY);
    // First whole day: inside the range and after the oldest log's day.
    let range_start = f.start.map_or(i64::MIN, |s| {
        day_of(s) + if s.rem_euclid(DAY) == 0 { 0 } else { DAY }
    });
    let first = range_start.max(day_of(oldest) + DAY);
    // Last whole day: its last second is inside the range.
    let last = f.end.map(|e| day_of(e.saturating_add(1)) - DAY);
    if last.is_some_and(|l| l < first) {
        return consume_sums(conn, f);
    }
    let b = conn.backend();
    let mut q = statistics::table
        .filter(statistics::day.ge(first))
        .into_boxed();
    if let Some(l) = last {
        q = q.filter(statistics::day.le(l));
    }
    if let Some(u) = f.user_id {
        q = q.filter(statistics::user_id.eq(u));
    }
    if let Some(ch) = f.channel_id {
        q = q.filter(statistics::channel_id.eq(ch));
    }
    if let Some(m) = &f.model_name {
        q = q.filter(statistics::model_name.like(prefix_pattern(m)).escape('\\'));
    }
    let (request_count, quota, prompt_tokens, completion_tokens) = q
        .select((
            sql::<BigInt>(&sum_bigint_sql(b, "request_count")),
            sql::<BigInt>(&sum_bigint_sql(b, "quota")),
            sql::<BigInt>(&sum_bigint_sql(b, "prompt_tokens")),
            sql::<BigInt>(&sum_bigint_sql(b, "completion_tokens")),
        ))
        .get_result::<(i64, i64, i64, i64)>(conn)?;
    let mut total = ConsumeSums {
        request_count,
        quota,
        prompt_tokens,
        completion_tokens,
    };
    // The partial days at either end, from the logs.
    let mut edges = vec![LogFilter {
        end: Some(first - 1),
        ..f.clone()
    }];
    if let Some(l) = last {
        edges.push(LogFilter {
            start: Some(l + DAY),
            ..f.clone()
        });
    }
    for edge in &edges {
        if edge.start.zip(edge.end).is_some_and(|(s, e)| s > e) {
            continue;
        }
        let s = consume_sums(conn, edge)?;
        total.request_count += s.request_count;
        total.quota += s.quota;
        total.prompt_tokens += s.prompt_tokens;
        total.completion_tokens += s.completion_tokens;
    }
    Ok(total)
}

/// Deletes every log created before `before` (exclusive), `batch_size` rows per statement (each
/// its own short transaction, oldest first), so a cleanup of millions of rows never holds one long
/// lock and lets the ledger's writes through between batches. Returns how many rows went. The
/// daily rollup (`statistics`) is kept: dashboards and invoices do not depend on raw logs.
pub fn delete_before(conn: &mut DbConn, before: i64, batch_size: i64) -> StoreResult<u64> {
    let batch_size = batch_size.clamp(1, 10_000);
    let mut deleted: u64 = 0;
    loop {
        let ids: Vec<i64> = logs::table
            .filter(logs::created_at.lt(before))
            .order((logs::created_at.asc(), logs::id.asc()))
            .limit(batch_size)
            .select(logs::id)
            .load(conn)?;
        if ids.is_empty() {
            break;
        }
        let n = diesel::delete(logs::table.filter(logs::id.eq_any(&ids))).execute(conn)?;
        deleted += n as u64;
        if (ids.len() as i64) < batch_size {
            break;
        }
    }
    Ok(deleted)
}

/// Names of the given channels (for the administrators' log screen); unknown ids are left out.
pub fn channel_names(conn: &mut DbConn, ids: &[i64]) -> StoreResult<Vec<(i64, String)>> {
    use crate::schema::channels;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(channels::table
        .filter(channels::id.eq_any(ids))
        .select((channels::id, channels::name))
        .load(conn)?)
}

/// Moves a log in time. Test support (retention and range tests need old rows); not used by the
/// application.
#[doc(hidden)]
pub fn set_created_at(conn: &mut DbConn, id: i64, created_at: i64) -> StoreResult<()> {
    diesel::update(logs::table.find(id))
        .set(logs::created_at.eq(created_at))
        .execute(conn)?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn record() -> ConsumeRecord {
        ConsumeRecord {
            request_id: Some("req-\0-1".into()),
            created_at: 1,
            log_type: 2,
            user_id: 3,
            username: "bob\0".into(),
            token_id: 4,
            token_name: "k".repeat(100).into(),
            channel_id: 5,
            model_name: format!("m\0{}", "é".repeat(300)).into(),
            group_name: "g\u{7}".into(),
            quota: 6,
            prompt_tokens: 7,
            completion_tokens: 8,
            use_time_ms: 9,
            first_response_ms: 10,
            is_stream: true,
            source_ip: "1".repeat(100).into(),
            content: format!("line\n\0{}", "c".repeat(70_000)),
            metadata: "{\"a\":\"\0\"}".into(),
            cache_hit: false,
        }
    }

    #[test]
    fn sanitising_keeps_who_and_how_much_and_makes_strings_fit() {
        let r = record();
        let s = r.sanitised();
        assert_eq!(
            (
                s.request_id.as_deref(),
                s.user_id,
                s.token_id,
                s.channel_id,
                s.quota
            ),
            (Some("req-\0-1"), 3, 4, 5, 6),
            "identity and amounts unchanged"
        );
        assert_eq!(s.username, "bob");
        assert_eq!(s.token_name.chars().count(), TOKEN_NAME_MAX_CHARS);
        assert_eq!(s.model_name, format!("m{}", "é".repeat(254)));
        assert_eq!(s.group_name, "g");
        assert_eq!(s.source_ip, "1".repeat(SOURCE_IP_MAX_CHARS));
        assert!(s.content.starts_with("line\nccc") && s.content.len() == TEXT_MAX_BYTES);
        assert_eq!(s.metadata, "{\"a\":\"\"}");
        assert_eq!(s.sanitised(), s, "sanitising twice changes nothing");
    }

    #[test]
    fn a_record_queued_as_plain_strings_reads_back_the_same_with_short_texts_inline() {
        // How a record looked in a journal, a Redis queue or a dead letter before the short
        // texts were kept inline: plain JSON strings.
        let queued = r#"{"request_id":"0193a1b2c3dabcdef000001","created_at":1,"log_type":2,
            "user_id":3,"username":"alice","token_id":4,"token_name":"default key","channel_id":5,
            "model_name":"claude-3-5-sonnet-20241022-long-name","group_name":"default",
            "quota":6,"prompt_tokens":7,"completion_tokens":8,"use_time_ms":9,
            "first_response_ms":10,"is_stream":true,"source_ip":"203.0.113.7","content":"",
            "metadata":"{}"}"#;
        let r: ConsumeRecord = serde_json::from_str(queued).unwrap();
        assert_eq!(r.request_id.as_deref(), Some("0193a1b2c3dabcdef000001"));
        assert_eq!(
            (
                r.username.as_str(),
                r.token_name.as_str(),
                r.group_name.as_str()
            ),
            ("alice", "default key", "default")
        );
        assert_eq!(r.model_name, "claude-3-5-sonnet-20241022-long-name");
        assert_eq!(
            (r.source_ip.as_str(), r.quota, r.cache_hit),
            ("203.0.113.7", 6, false)
        );
        // Up to 24 bytes in place; the 36-byte model name on the heap.
        assert!(!r.request_id.as_ref().unwrap().is_heap_allocated());
        assert!(!r.username.is_heap_allocated() && !r.source_ip.is_heap_allocated());
        assert!(r.model_name.is_heap_allocated());
        let again: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(again["model_name"], "claude-3-5-sonnet-20241022-long-name");
        assert_eq!(serde_json::from_value::<ConsumeRecord>(again).unwrap(), r);
    }

    #[test]
    fn a_dead_letter_payload_is_json_that_fits() {
        let small = ConsumeRecord {
            content: String::new(),
            ..record()
        };
        let v: serde_json::Value = serde_json::from_str(&small.dead_letter_payload()).unwrap();
        assert_eq!(v["model_name"], small.model_name.as_str());
        assert!(v.get("truncated").is_none());
        let big = record().dead_letter_payload();
        assert!(big.len() <= crate::dead_letters::PAYLOAD_MAX_BYTES && !big.contains('\0'));
        let v: serde_json::Value = serde_json::from_str(&big).unwrap();
        assert_eq!(
            (v["truncated"].as_bool(), v["quota"].as_i64()),
            (Some(true), Some(6))
        );
        assert_eq!(v["content"].as_str().unwrap().chars().count(), 8_000);
    }
}
