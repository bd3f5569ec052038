//! Redemption codes: batches created by administrators, redeemed once by a user for quota.
//!
//! Exactly-once redemption rests on one conditional statement ([`redeem`]): `UPDATE ... SET
//! status = used WHERE code = ? AND status = enabled`, which every backend applies atomically per
//! row (SQLite serialises writers; PostgreSQL and InnoDB re-check the condition after waiting for
//! a concurrent writer's row lock), so of any number of concurrent attempts exactly one changes a
//! row. Callers run it in the same transaction as the credit.

use crate::schema::{redemptions, users};
use crate::users::like_pattern;
use crate::{insert_many, now, DbConn, Page, PageReq, StoreError, StoreResult};
use diesel::prelude::*;
use switchboard_domain::redemption::{RedemptionStatus, INVALID_STATUSES};

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = redemptions)]
pub struct RedemptionRow {
    pub id: i64,
    /// The administrator who created the code.
    pub user_id: i64,
    pub name: String,
    pub code: String,
    pub status: i32,
    pub quota: i64,
    pub created_at: i64,
    /// 0 until redeemed.
    pub redeemed_at: i64,
    /// 0 until redeemed.
    pub used_user_id: i64,
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = redemptions)]
pub struct NewRedemption<'a> {
    pub user_id: i64,
    pub name: &'a str,
    pub code: &'a str,
    pub status: i32,
    pub quota: i64,
    pub created_at: i64,
}

/// Fields an administrator may change; `None` leaves a column as it is.
#[derive(Debug, Clone, Default, AsChangeset)]
#[diesel(table_name = redemptions)]
pub struct RedemptionChangeset {
    pub name: Option<String>,
    pub quota: Option<i64>,
    pub status: Option<i32>,
}

/// Inserts a batch in one statement (callers wrap it in a transaction with anything else).
/// A duplicate code fails the whole batch with [`StoreError::Conflict`].
pub fn insert_batch(conn: &mut DbConn, rows: &[NewRedemption<'_>]) -> StoreResult<usize> {
    if rows.is_empty() {
        return Ok(0);
    }
    insert_many!(conn, redemptions::table, rows)
}

pub fn find(conn: &mut DbConn, id: i64) -> StoreResult<RedemptionRow> {
    Ok(redemptions::table
        .find(id)
        .select(RedemptionRow::as_select())
        .first(conn)?)
}

pub fn find_by_code(conn: &mut DbConn, code: &str) -> StoreResult<RedemptionRow> {
    Ok(redemptions::table
        .filter(redemptions::code.eq(code))
        .select(RedemptionRow::as_select())
        .first(conn)?)
}

/// Sort keys a code list may be ordered by (`-` prefix: descending).
pub const ORDER_FIELDS: &[&str] = &["id", "name", "quota", "status", "created_at", "redeemed_at"];

#[derive(Debug, Clone, Default)]
pub struct RedemptionFilter<'a> {
    /// Name contains (case-insensitive), the whole code (codes are lower case; a digit string
    /// would match most codes as a substring), or the id exactly.
    pub keyword: Option<&'a str>,
    pub status: Option<i32>,
}

pub fn list(
    conn: &mut DbConn,
    f: &RedemptionFilter<'_>,
    order: &str,
    page: PageReq,
) -> StoreResult<Page<RedemptionRow>> {
    let build = || {
        let mut q = redemptions::table.into_boxed();
        if let Some(k) = f.keyword.filter(|k| !k.is_empty()) {
            let id: i64 = k.parse().unwrap_or(-1);
            q = q.filter(
                crate::users::lower(redemptions::name)
                    .like(like_pattern(k))
                    .escape('\\')
                    .or(redemptions::code.eq(k.trim().to_lowercase()))
                    .or(redemptions::id.eq(id)),
            );
        }
        if let Some(s) = f.status {
            q = q.filter(redemptions::status.eq(s));
        }
        q
    };
    let total: i64 = build().count().get_result(conn)?;
    let (field, desc) = crate::split_order(order);
    let q = build();
    let q = match field {
        "name" => crate::order_by!(q, desc, redemptions::name, redemptions::id),
        "quota" => crate::order_by!(q, desc, redemptions::quota, redemptions::id),
        "status" => crate::order_by!(q, desc, redemptions::status, redemptions::id),
        "created_at" => crate::order_by!(q, desc, redemptions::created_at, redemptions::id),
        "redeemed_at" => crate::order_by!(q, desc, redemptions::redeemed_at, redemptions::id),
        _ if desc => q.order(redemptions::id.desc()),
        _ => q.order(redemptions::id.asc()),
    };
    let items = q
        .limit(page.size)
        .offset(page.offset())
        .select(RedemptionRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

/// Changes a code that has not been redeemed, in one statement that re-checks the status (so an
/// edit racing a redemption never rewrites a used code). Returns `false` when the code exists but
/// was redeemed; [`StoreError::NotFound`] when it does not exist.
pub fn update_unused(
    conn: &mut DbConn,
    id: i64,
    changes: &RedemptionChangeset,
) -> StoreResult<bool> {
    let used = RedemptionStatus::Used.as_i32();
    let target = redemptions::table
        .find(id)
        .filter(redemptions::status.ne(used));
    let n = if changes.name.is_none() && changes.quota.is_none() && changes.status.is_none() {
        // Nothing to set: only report whether the code could be edited.
        target.count().get_result::<i64>(conn)? as usize
    } else {
        diesel::update(target).set(changes).execute(conn)?
    };
    if n == 0 {
        find(conn, id)?;
        return Ok(false);
    }
    Ok(true)
}

pub fn delete(conn: &mut DbConn, id: i64) -> StoreResult<()> {
    let n = diesel::delete(redemptions::table.find(id)).execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Deletes every disabled or used code; returns how many.
pub fn delete_invalid(conn: &mut DbConn) -> StoreResult<usize> {
    Ok(
        diesel::delete(redemptions::table.filter(redemptions::status.eq_any(INVALID_STATUSES)))
            .execute(conn)?,
    )
}

/// Marks an enabled code as used by `user_id` at `at`, exactly once: of any number of concurrent
/// calls for one code, one gets the row (with its quota) and the others `None`, as do unknown,
/// disabled and already used codes. Run it in the transaction that credits the user, so a failed
/// credit also un-redeems the code.
pub fn redeem(
    conn: &mut DbConn,
    code: &str,
    user_id: i64,
    at: i64,
) -> StoreResult<Option<RedemptionRow>> {
    let n = diesel::update(
        redemptions::table
            .filter(redemptions::code.eq(code))
            .filter(redemptions::status.eq(RedemptionStatus::Enabled.as_i32())),
    )
    .set((
        redemptions::status.eq(RedemptionStatus::Used.as_i32()),
        redemptions::redeemed_at.eq(at),
        redemptions::used_user_id.eq(user_id),
    ))
    .execute(conn)?;
    if n != 1 {
        return Ok(None);
    }
    Ok(Some(find_by_code(conn, code)?))
}

/// Credits a top-up to a user: the balance and the cumulative top-up (`total_topup`, which
/// drives group promotion) both grow by `quota`. Shared by redemption codes and payments.
/// Returns the new balance; [`StoreError::NotFound`] for an unknown user.
pub fn credit_topup(conn: &mut DbConn, user_id: i64, quota: i64) -> StoreResult<i64> {
    let n = diesel::update(users::table.find(user_id))
        .set((
            users::quota.eq(users::quota + quota),
            users::total_topup.eq(users::total_topup + quota),
            users::updated_at.eq(now()),
        ))
        .execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(users::table
        .find(user_id)
        .select(users::quota)
        .first(conn)?)
}
