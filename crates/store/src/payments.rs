//! Online top-up: payment gateways (configured by administrators) and the orders users place
//! through them.
//!
//! Exactly-once crediting rests on [`mark_paid`]: `UPDATE orders SET status = paid WHERE
//! trade_no = ? AND status = pending`, which every backend applies atomically per row, so of
//! any number of concurrent callbacks for one order exactly one changes a row. A payment reported
//! after the order's time ran out (or for an order marked expired or failed) is still money the
//! payer gave: [`mark_paid_late`] moves such an order to `paid_late` by the same kind of
//! conditional update, so it too is credited exactly once. Callers run them in the same
//! transaction as the credit, the recharge log and the group promotion.

use crate::schema::{orders, payment_gateways, users};
use crate::users::like_pattern;
use crate::{insert_returning_id, DbConn, Page, PageReq, StoreError, StoreResult};
use diesel::prelude::*;

/// An order's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderStatus {
    Pending = 1,
    Paid = 2,
    Expired = 3,
    Failed = 4,
    /// Paid after the order expired (or after it was marked failed): credited all the same.
    PaidLate = 5,
}

const ALL: [OrderStatus; 5] = [
    OrderStatus::Pending,
    OrderStatus::Paid,
    OrderStatus::Expired,
    OrderStatus::Failed,
    OrderStatus::PaidLate,
];

impl OrderStatus {
    pub fn as_i32(self) -> i32 {
        self as i32
    }

    pub fn from_i32(v: i32) -> Option<Self> {
        ALL.into_iter().find(|s| s.as_i32() == v)
    }

    /// The name the API uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Paid => "paid",
            Self::Expired => "expired",
            Self::Failed => "failed",
            Self::PaidLate => "paid_late",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        ALL.into_iter().find(|s| s.name() == name)
    }
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = payment_gateways)]
pub struct GatewayRow {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub gateway_type: String,
    pub icon: String,
    pub enabled: bool,
    /// Decimal text, USD per order.
    pub fixed_fee: String,
    /// Decimal text, a fraction (0.05 = 5 %).
    pub percent_fee: String,
    pub currency: String,
    pub notify_domain: String,
    pub sort: i64,
    /// Sealed JSON (the caller seals and opens it).
    pub config: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What an administrator sets on a gateway (the uuid and creation time are set once).
#[derive(Debug, Clone, AsChangeset, Insertable)]
#[diesel(table_name = payment_gateways)]
pub struct GatewayFields {
    pub name: String,
    pub gateway_type: String,
    pub icon: String,
    pub enabled: bool,
    pub fixed_fee: String,
    pub percent_fee: String,
    pub currency: String,
    pub notify_domain: String,
    pub sort: i64,
    pub config: String,
    pub updated_at: i64,
}

pub fn insert_gateway(conn: &mut DbConn, uuid: &str, f: &GatewayFields) -> StoreResult<i64> {
    insert_returning_id!(
        conn,
        payment_gateways::table,
        (
            f,
            payment_gateways::uuid.eq(uuid),
            payment_gateways::created_at.eq(f.updated_at)
        ),
        payment_gateways::id
    )
}

pub fn update_gateway(conn: &mut DbConn, id: i64, f: &GatewayFields) -> StoreResult<()> {
    let n = diesel::update(payment_gateways::table.find(id))
        .set(f)
        .execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Deletes a gateway; its orders stay (the order log names the gateway by id).
pub fn delete_gateway(conn: &mut DbConn, id: i64) -> StoreResult<()> {
    let n = diesel::delete(payment_gateways::table.find(id)).execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn find_gateway(conn: &mut DbConn, id: i64) -> StoreResult<GatewayRow> {
    Ok(payment_gateways::table
        .find(id)
        .select(GatewayRow::as_select())
        .first(conn)?)
}

pub fn find_gateway_by_uuid(conn: &mut DbConn, uuid: &str) -> StoreResult<GatewayRow> {
    Ok(payment_gateways::table
        .filter(payment_gateways::uuid.eq(uuid))
        .select(GatewayRow::as_select())
        .first(conn)?)
}

/// Gateways, highest `sort` first (then by id); `keyword` matches the name or type.
pub fn list_gateways(
    conn: &mut DbConn,
    keyword: Option<&str>,
    page: PageReq,
) -> StoreResult<Page<GatewayRow>> {
    let build = || {
        let mut q = payment_gateways::table.into_boxed();
        if let Some(k) = keyword.map(str::trim).filter(|k| !k.is_empty()) {
            q = q.filter(
                crate::users::lower(payment_gateways::name)
                    .like(like_pattern(k))
                    .escape('\\')
                    .or(payment_gateways::gateway_type.eq(k.to_lowercase())),
            );
        }
        q
    };
    let total: i64 = build().count().get_result(conn)?;
    let items = build()
        .order((payment_gateways::sort.desc(), payment_gateways::id.asc()))
        .limit(page.size)
        .offset(page.offset())
        .select(GatewayRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

/// Every enabled gateway, in the list's order (a handful: not paged).
pub fn enabled_gateways(conn: &mut DbConn) -> StoreResult<Vec<GatewayRow>> {
    Ok(payment_gateways::table
        .filter(payment_gateways::enabled.eq(true))
        .order((payment_gateways::sort.desc(), payment_gateways::id.asc()))
        .limit(100)
        .select(GatewayRow::as_select())
        .load(conn)?)
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = orders)]
pub struct OrderRow {
    pub id: i64,
    pub trade_no: String,
    pub user_id: i64,
    pub gateway_id: i64,
    /// The gateway's own number, once it reported the payment.
    pub gateway_no: String,
    /// USD, whole.
    pub amount: i64,
    pub discount: String,
    pub fee: String,
    /// What is paid, in `currency`, two decimals.
    pub order_amount: String,
    pub currency: String,
    pub quota: i64,
    pub status: i32,
    pub created_at: i64,
    pub expires_at: i64,
    pub paid_at: i64,
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = orders)]
pub struct NewOrder<'a> {
    pub trade_no: &'a str,
    pub user_id: i64,
    pub gateway_id: i64,
    pub amount: i64,
    pub discount: &'a str,
    pub fee: &'a str,
    pub order_amount: &'a str,
    pub currency: &'a str,
    pub quota: i64,
    pub status: i32,
    pub created_at: i64,
    pub expires_at: i64,
}

pub fn insert_order(conn: &mut DbConn, o: &NewOrder<'_>) -> StoreResult<i64> {
    insert_returning_id!(conn, orders::table, o, orders::id)
}

/// How many of `user_id`'s orders are waiting to be paid (pending and unexpired at `now`).
pub fn count_open_orders(conn: &mut DbConn, user_id: i64, now: i64) -> StoreResult<i64> {
    Ok(orders::table
        .filter(orders::user_id.eq(user_id))
        .filter(orders::status.eq(OrderStatus::Pending.as_i32()))
        .filter(orders::expires_at.ge(now))
        .count()
        .get_result(conn)?)
}

pub fn find_order(conn: &mut DbConn, trade_no: &str) -> StoreResult<OrderRow> {
    Ok(orders::table
        .filter(orders::trade_no.eq(trade_no))
        .select(OrderRow::as_select())
        .first(conn)?)
}

/// Marks a pending, unexpired order paid by the gateway's number `gateway_no`, exactly once:
/// of any number of concurrent calls one gets `true`; a paid, expired or failed order, or one
/// past `expires_at`, gives `false`. Run it in the transaction that credits the user.
pub fn mark_paid(
    conn: &mut DbConn,
    trade_no: &str,
    gateway_no: &str,
    at: i64,
) -> StoreResult<bool> {
    let n = diesel::update(
        orders::table
            .filter(orders::trade_no.eq(trade_no))
            .filter(orders::status.eq(OrderStatus::Pending.as_i32()))
            .filter(orders::expires_at.ge(at)),
    )
    .set((
        orders::status.eq(OrderStatus::Paid.as_i32()),
        orders::gateway_no.eq(gateway_no),
        orders::paid_at.eq(at),
    ))
    .execute(conn)?;
    Ok(n == 1)
}

/// Marks an order that [`mark_paid`] no longer takes (pending past its expiry, expired, or
/// failed) paid late by the gateway's number, exactly once: of any number of concurrent calls one
/// gets `true`; a paid (or paid-late) order, or an unknown one, gives `false`. Run it in the
/// transaction that credits the user, after `mark_paid` said no.
pub fn mark_paid_late(
    conn: &mut DbConn,
    trade_no: &str,
    gateway_no: &str,
    at: i64,
) -> StoreResult<bool> {
    let n = diesel::update(orders::table.filter(orders::trade_no.eq(trade_no)).filter(
        orders::status.eq_any([
            OrderStatus::Pending.as_i32(),
            OrderStatus::Expired.as_i32(),
            OrderStatus::Failed.as_i32(),
        ]),
    ))
    .set((
        orders::status.eq(OrderStatus::PaidLate.as_i32()),
        orders::gateway_no.eq(gateway_no),
        orders::paid_at.eq(at),
    ))
    .execute(conn)?;
    Ok(n == 1)
}

/// Marks pending orders past their expiry expired; returns how many.
pub fn expire_pending(conn: &mut DbConn, now: i64) -> StoreResult<usize> {
    Ok(diesel::update(
        orders::table
            .filter(orders::status.eq(OrderStatus::Pending.as_i32()))
            .filter(orders::expires_at.lt(now)),
    )
    .set(orders::status.eq(OrderStatus::Expired.as_i32()))
    .execute(conn)?)
}

#[derive(Debug, Clone, Default)]
pub struct OrderFilter<'a> {
    pub trade_no: Option<&'a str>,
    pub user_id: Option<i64>,
    pub status: Option<i32>,
}

/// An order with its user's name and its gateway's name (empty when deleted).
#[derive(Debug, Clone, PartialEq)]
pub struct OrderView {
    pub order: OrderRow,
    pub username: String,
    pub gateway_name: String,
}

/// Orders, newest first.
pub fn list_orders(
    conn: &mut DbConn,
    f: &OrderFilter<'_>,
    page: PageReq,
) -> StoreResult<Page<OrderView>> {
    let build = || {
        let mut q = orders::table.into_boxed();
        if let Some(t) = f.trade_no.map(str::trim).filter(|t| !t.is_empty()) {
            q = q.filter(orders::trade_no.eq(t.to_owned()));
        }
        if let Some(u) = f.user_id {
            q = q.filter(orders::user_id.eq(u));
        }
        if let Some(s) = f.status {
            q = q.filter(orders::status.eq(s));
        }
        q
    };
    let total: i64 = build().count().get_result(conn)?;
    let rows: Vec<OrderRow> = build()
        .order(orders::id.desc())
        .limit(page.size)
        .offset(page.offset())
        .select(OrderRow::as_select())
        .load(conn)?;
    let user_ids: Vec<i64> = rows.iter().map(|r| r.user_id).collect();
    let gateway_ids: Vec<i64> = rows.iter().map(|r| r.gateway_id).collect();
    let names: std::collections::HashMap<i64, String> = users::table
        .filter(users::id.eq_any(&user_ids))
        .select((users::id, users::username))
        .load::<(i64, String)>(conn)?
        .into_iter()
        .collect();
    let gateways: std::collections::HashMap<i64, String> = payment_gateways::table
        .filter(payment_gateways::id.eq_any(&gateway_ids))
        .select((payment_gateways::id, payment_gateways::name))
        .load::<(i64, String)>(conn)?
        .into_iter()
        .collect();
    let items = rows
        .into_iter()
        .map(|order| OrderView {
            username: names.get(&order.user_id).cloned().unwrap_or_default(),
            gateway_name: gateways.get(&order.gateway_id).cloned().unwrap_or_default(),
            order,
        })
        .collect();
    Ok(Page { items, total })
}

/// Every gateway's stored (sealed) configuration, for re-sealing under a new server secret.
pub fn configs(conn: &mut DbConn) -> StoreResult<Vec<(i64, String)>> {
    Ok(payment_gateways::table
        .select((payment_gateways::id, payment_gateways::config))
        .order(payment_gateways::id.asc())
        .load(conn)?)
}

/// Replaces gateway `id`'s configuration by `new` if it is still `old`; whether it did.
pub fn replace_config(conn: &mut DbConn, id: i64, old: &str, new: &str) -> StoreResult<bool> {
    let n = diesel::update(
        payment_gateways::table
            .find(id)
            .filter(payment_gateways::config.eq(old)),
    )
    .set(payment_gateways::config.eq(new))
    .execute(conn)?;
    Ok(n == 1)
}

/// Marks a pending or expired order failed (the gateway refused to take it, or reported that the
/// payment failed); whether it did. A paid order stays paid.
pub fn mark_failed(conn: &mut DbConn, trade_no: &str) -> StoreResult<bool> {
    let n = diesel::update(orders::table.filter(orders::trade_no.eq(trade_no)).filter(
        orders::status.eq_any([OrderStatus::Pending.as_i32(), OrderStatus::Expired.as_i32()]),
    ))
    .set(orders::status.eq(OrderStatus::Failed.as_i32()))
    .execute(conn)?;
    Ok(n == 1)
}
