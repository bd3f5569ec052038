//! Monthly invoices (`invoices`): one row per user and month, generated from the daily rollup
//! (`statistics`, never the raw logs, which retention may have deleted).
//!
//! Generation is idempotent: the unique index `(user_id, month)` is the guard. Rows already
//! present are skipped first; of concurrent generators racing for the same row the index refuses
//! all but one insert ([`StoreError::Conflict`]), which is taken as "already generated". Each
//! insert runs in a savepoint so a refusal never aborts a caller's PostgreSQL transaction.

use crate::logs::sum_bigint_sql;
use crate::schema::{invoices, statistics};
use crate::{DbConn, Page, PageReq, StoreError, StoreResult};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use switchboard_domain::invoice::{InvoiceStatus, Month};
use switchboard_domain::DomainError;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = invoices)]
pub struct InvoiceRow {
    pub id: i64,
    pub user_id: i64,
    /// `YYYY-MM`
    pub month: String,
    /// 1 unpaid, 2 paid.
    pub status: i32,
    /// The amount, in quota units.
    pub quota: i64,
    pub request_count: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub request_time_ms: i64,
    /// JSON array of [`ModelUsage`], ordered by model name.
    pub model_details: String,
    pub created_at: i64,
    /// 0 until paid.
    pub paid_at: i64,
}

impl InvoiceRow {
    /// The per-model lines (empty when the stored JSON cannot be read).
    pub fn models(&self) -> Vec<ModelUsage> {
        serde_json::from_str(&self.model_details).unwrap_or_default()
    }
}

/// One model's usage in a month (summed over days and channels).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelUsage {
    pub model_name: String,
    pub request_count: i64,
    pub quota: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub request_time_ms: i64,
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = invoices)]
struct NewInvoice {
    user_id: i64,
    month: String,
    status: i32,
    quota: i64,
    request_count: i64,
    prompt_tokens: i64,
    completion_tokens: i64,
    request_time_ms: i64,
    model_details: String,
    created_at: i64,
    paid_at: i64,
}

fn parse(month: &str) -> StoreResult<Month> {
    Month::parse(month).map_err(|e: DomainError| StoreError::Config(e.to_string()))
}

/// Every user's per-model usage in `month`, from the rollup, by user then model name.
pub fn usage_by_user(
    conn: &mut DbConn,
    month: &str,
) -> StoreResult<BTreeMap<i64, Vec<ModelUsage>>> {
    let (from, to) = parse(month)?.bounds();
    let b = conn.backend();
    let rows: Vec<(i64, String, i64, i64, i64, i64, i64)> = statistics::table
        .filter(statistics::day.ge(from))
        .filter(statistics::day.lt(to))
        .group_by((statistics::user_id, statistics::model_name))
        .select((
            statistics::user_id,
            statistics::model_name,
            sql::<BigInt>(&sum_bigint_sql(b, "request_count")),
            sql::<BigInt>(&sum_bigint_sql(b, "quota")),
            sql::<BigInt>(&sum_bigint_sql(b, "prompt_tokens")),
            sql::<BigInt>(&sum_bigint_sql(b, "completion_tokens")),
            sql::<BigInt>(&sum_bigint_sql(b, "request_time_ms")),
        ))
        .order((statistics::user_id.asc(), statistics::model_name.asc()))
        .load(conn)?;
    let mut out: BTreeMap<i64, Vec<ModelUsage>> = BTreeMap::new();
    for (user_id, model_name, request_count, quota, prompt_tokens, completion_tokens, ms) in rows {
        out.entry(user_id).or_default().push(ModelUsage {
            model_name,
            request_count,
            quota,
            prompt_tokens,
            completion_tokens,
            request_time_ms: ms,
        });
    }
    Ok(out)
}

fn new_invoice(
    user_id: i64,
    month: &str,
    models: &[ModelUsage],
    now: i64,
) -> StoreResult<NewInvoice> {
    let sum = |f: fn(&ModelUsage) -> i64| models.iter().map(f).fold(0i64, i64::saturating_add);
    Ok(NewInvoice {
        user_id,
        month: month.to_owned(),
        // Switchboard is prepaid: every charge on the invoice left the balance when the call
        // was settled, so the month's invoice is paid as it is written.
        status: InvoiceStatus::Paid.as_i32(),
        quota: sum(|m| m.quota),
        request_count: sum(|m| m.request_count),
        prompt_tokens: sum(|m| m.prompt_tokens),
        completion_tokens: sum(|m| m.completion_tokens),
        request_time_ms: sum(|m| m.request_time_ms),
        model_details: serde_json::to_string(models)
            .map_err(|e| StoreError::Config(format!("model details: {e}")))?,
        created_at: now,
        paid_at: now,
    })
}

/// Inserts one invoice unless `(user_id, month)` exists; returns whether it inserted.
fn insert_if_absent(conn: &mut DbConn, row: &NewInvoice) -> StoreResult<bool> {
    let r = conn.transaction::<usize, diesel::result::Error, _>(|c| {
        diesel::insert_into(invoices::table).values(row).execute(c)
    });
    match r.map_err(StoreError::from) {
        Ok(n) => Ok(n > 0),
        Err(StoreError::Conflict(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Generates `month`'s invoices (`YYYY-MM`) from the rollup: one per user with rollup rows in the
/// month, inserted only when absent. Returns how many were created (0 on a second run).
pub fn generate_month(conn: &mut DbConn, month: &str) -> StoreResult<usize> {
    generate_month_at(conn, month, crate::now())
}

/// [`generate_month`] with an explicit creation time.
pub fn generate_month_at(conn: &mut DbConn, month: &str, now: i64) -> StoreResult<usize> {
    let usage = usage_by_user(conn, month)?;
    if usage.is_empty() {
        return Ok(0);
    }
    let existing: std::collections::HashSet<i64> = invoices::table
        .filter(invoices::month.eq(month))
        .select(invoices::user_id)
        .load::<i64>(conn)?
        .into_iter()
        .collect();
    let mut created = 0;
    for (user_id, models) in usage.iter().filter(|(u, _)| !existing.contains(u)) {
        let row = new_invoice(*user_id, month, models, now)?;
        if insert_if_absent(conn, &row)? {
            created += 1;
        }
    }
    Ok(created)
}

/// Replaces `month`'s invoices with freshly computed ones in one transaction (root's
/// "regenerate"). A user's paid status and payment time carry over to the new row. Returns the
/// number of invoices written.
pub fn regenerate_month(conn: &mut DbConn, month: &str, now: i64) -> StoreResult<usize> {
    parse(month)?;
    crate::transaction(conn, |c| {
        let paid: BTreeMap<i64, (i32, i64)> = invoices::table
            .filter(invoices::month.eq(month))
            .select((invoices::user_id, invoices::status, invoices::paid_at))
            .load::<(i64, i32, i64)>(c)?
            .into_iter()
            .map(|(u, s, p)| (u, (s, p)))
            .collect();
        diesel::delete(invoices::table.filter(invoices::month.eq(month))).execute(c)?;
        let usage = usage_by_user(c, month)?;
        let mut rows = Vec::with_capacity(usage.len());
        for (user_id, models) in &usage {
            let mut row = new_invoice(*user_id, month, models, now)?;
            if let Some(&(status, paid_at)) = paid.get(user_id) {
                row.status = status;
                row.paid_at = paid_at;
            }
            rows.push(row);
        }
        let mut n = 0;
        for chunk in rows.chunks(200) {
            n += crate::insert_many!(c, invoices::table, chunk)?;
        }
        Ok(n)
    })
}

/// How many invoices exist for `month` (anyone's).
pub fn count_month(conn: &mut DbConn, month: &str) -> StoreResult<i64> {
    Ok(invoices::table
        .filter(invoices::month.eq(month))
        .count()
        .get_result(conn)?)
}

/// One user's invoices, newest month first.
pub fn list_for_user(
    conn: &mut DbConn,
    user_id: i64,
    page: PageReq,
) -> StoreResult<Page<InvoiceRow>> {
    let total: i64 = invoices::table
        .filter(invoices::user_id.eq(user_id))
        .count()
        .get_result(conn)?;
    let items = invoices::table
        .filter(invoices::user_id.eq(user_id))
        .order((invoices::month.desc(), invoices::id.desc()))
        .limit(page.size)
        .offset(page.offset())
        .select(InvoiceRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

/// A user's invoice for a month ([`StoreError::NotFound`] when there is none).
pub fn find_for_user(conn: &mut DbConn, user_id: i64, month: &str) -> StoreResult<InvoiceRow> {
    Ok(invoices::table
        .filter(invoices::user_id.eq(user_id))
        .filter(invoices::month.eq(month))
        .select(InvoiceRow::as_select())
        .first(conn)?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::schema::statistics;
    use crate::testing::TestDb;

    fn stat(c: &mut DbConn, day: i64, user: i64, channel: i64, model: &str, v: [i64; 5]) {
        diesel::insert_into(statistics::table)
            .values((
                statistics::day.eq(day),
                statistics::user_id.eq(user),
                statistics::channel_id.eq(channel),
                statistics::model_name.eq(model),
                statistics::request_count.eq(v[0]),
                statistics::quota.eq(v[1]),
                statistics::prompt_tokens.eq(v[2]),
                statistics::completion_tokens.eq(v[3]),
                statistics::request_time_ms.eq(v[4]),
            ))
            .execute(c)
            .unwrap();
    }

    #[test]
    fn generates_once_per_user_and_month_from_the_rollup() {
        for db in TestDb::all() {
            let mut c = db.conn();
            let feb = Month::parse("2024-02").unwrap();
            let (from, to) = feb.bounds();
            // User 1: two channels of one model on two days, plus another model.
            stat(&mut c, from, 1, 1, "gpt-4o", [2, 100, 10, 20, 300]);
            stat(&mut c, from, 1, 2, "gpt-4o", [1, 50, 5, 6, 7]);
            stat(&mut c, to - 86_400, 1, 1, "模型-β", [3, 7, 1, 1, 1]);
            // User 2 in February; user 3 only in January and March (outside the month).
            stat(&mut c, from + 86_400, 2, 1, "gpt-4o", [1, 1, 1, 1, 1]);
            stat(&mut c, from - 86_400, 3, 1, "gpt-4o", [1, 1, 1, 1, 1]);
            stat(&mut c, to, 3, 1, "gpt-4o", [1, 1, 1, 1, 1]);

            assert_eq!(generate_month_at(&mut c, "2024-02", 1_000).unwrap(), 2);
            assert_eq!(generate_month_at(&mut c, "2024-02", 2_000).unwrap(), 0);
            assert_eq!(count_month(&mut c, "2024-02").unwrap(), 2);
            let inv = find_for_user(&mut c, 1, "2024-02").unwrap();
            assert_eq!(
                (
                    inv.quota,
                    inv.request_count,
                    inv.prompt_tokens,
                    inv.completion_tokens
                ),
                (157, 6, 16, 27)
            );
            // Prepaid: written paid, at the time it is written.
            assert_eq!(
                (inv.request_time_ms, inv.status, inv.created_at, inv.paid_at),
                (308, 2, 1_000, 1_000)
            );
            let models = inv.models();
            assert_eq!(models.len(), 2);
            assert_eq!(models[0].model_name, "gpt-4o");
            assert_eq!(models[0].quota, 150);
            assert_eq!(models[1].model_name, "模型-β");
            assert!(find_for_user(&mut c, 3, "2024-02")
                .unwrap_err()
                .is_not_found());

            // A new rollup row later: plain generation leaves existing invoices alone, ...
            stat(&mut c, from, 1, 3, "gpt-4o", [1, 1000, 0, 0, 0]);
            assert_eq!(generate_month_at(&mut c, "2024-02", 3_000).unwrap(), 0);
            assert_eq!(find_for_user(&mut c, 1, "2024-02").unwrap().quota, 157);
            // ... regeneration replaces them, keeping the paid status.
            diesel::update(invoices::table.filter(invoices::user_id.eq(2)))
                .set((invoices::status.eq(2), invoices::paid_at.eq(5)))
                .execute(&mut c)
                .unwrap();
            assert_eq!(regenerate_month(&mut c, "2024-02", 4_000).unwrap(), 2);
            let inv = find_for_user(&mut c, 1, "2024-02").unwrap();
            assert_eq!((inv.quota, inv.created_at), (1157, 4_000));
            let inv2 = find_for_user(&mut c, 2, "2024-02").unwrap();
            assert_eq!((inv2.status, inv2.paid_at), (2, 5));

            let page = list_for_user(&mut c, 1, PageReq { page: 1, size: 10 }).unwrap();
            assert_eq!(page.total, 1);
            assert!(generate_month(&mut c, "2024-13").is_err());
        }
    }

    #[test]
    fn a_lost_insert_race_is_not_an_error() {
        for db in TestDb::all() {
            let mut c = db.conn();
            let (from, _) = Month::parse("2024-05").unwrap().bounds();
            stat(&mut c, from, 7, 1, "m", [1, 2, 3, 4, 5]);
            let row = new_invoice(7, "2024-05", &[], 1).unwrap();
            assert!(insert_if_absent(&mut c, &row).unwrap());
            // The second insert hits the unique index, also inside an outer transaction.
            let r: StoreResult<bool> = crate::transaction(&mut c, |c| insert_if_absent(c, &row));
            assert!(!r.unwrap());
            assert_eq!(count_month(&mut c, "2024-05").unwrap(), 1);
        }
    }
}
