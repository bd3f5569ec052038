//! User groups: price ratio, API rate, visibility and auto-promotion ranges.

use crate::schema::user_groups;
use crate::users::like_pattern;
use crate::{insert_returning_id, now, DbConn, Page, PageReq, StoreError, StoreResult};
use diesel::prelude::*;
use switchboard_domain::group::{promotion_target, PromotionRule};
use switchboard_domain::log::LogType;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = user_groups)]
pub struct UserGroupRow {
    pub id: i64,
    pub symbol: String,
    pub name: String,
    pub ratio: f64,
    pub public: bool,
    pub api_rate: i32,
    pub promotion: bool,
    pub min_topup: i64,
    pub max_topup: i64,
    pub enabled: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

pub fn list_enabled(conn: &mut DbConn) -> StoreResult<Vec<UserGroupRow>> {
    Ok(user_groups::table
        .filter(user_groups::enabled.eq(true))
        .order(user_groups::id.asc())
        .select(UserGroupRow::as_select())
        .load(conn)?)
}

pub fn exists_enabled(conn: &mut DbConn, symbol: &str) -> StoreResult<bool> {
    let n: i64 = user_groups::table
        .filter(user_groups::symbol.eq(symbol))
        .filter(user_groups::enabled.eq(true))
        .count()
        .get_result(conn)?;
    Ok(n > 0)
}

/// Creates the `default` group (ratio 1, public) when no group exists yet.
pub fn seed_default(conn: &mut DbConn) -> StoreResult<bool> {
    let n: i64 = user_groups::table.count().get_result(conn)?;
    if n > 0 {
        return Ok(false);
    }
    let t = now();
    diesel::insert_into(user_groups::table)
        .values((
            user_groups::symbol.eq("default"),
            user_groups::name.eq("默认分组"),
            user_groups::ratio.eq(1.0),
            user_groups::public.eq(true),
            user_groups::api_rate.eq(0),
            user_groups::promotion.eq(false),
            user_groups::min_topup.eq(0),
            user_groups::max_topup.eq(0),
            user_groups::enabled.eq(true),
            user_groups::created_at.eq(t),
            user_groups::updated_at.eq(t),
        ))
        .execute(conn)?;
    Ok(true)
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = user_groups)]
pub struct NewUserGroup<'a> {
    pub symbol: &'a str,
    pub name: &'a str,
    pub ratio: f64,
    pub public: bool,
    pub api_rate: i32,
    pub promotion: bool,
    pub min_topup: i64,
    pub max_topup: i64,
    pub enabled: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Fields an update may change; `None` leaves a column as it is. The symbol is not here: it is
/// immutable once created (users and keys reference it).
#[derive(Debug, Clone, Default, AsChangeset)]
#[diesel(table_name = user_groups)]
pub struct UserGroupChangeset {
    pub name: Option<String>,
    pub ratio: Option<f64>,
    pub public: Option<bool>,
    pub api_rate: Option<i32>,
    pub promotion: Option<bool>,
    pub min_topup: Option<i64>,
    pub max_topup: Option<i64>,
    pub enabled: Option<bool>,
    pub updated_at: Option<i64>,
}

pub fn insert(conn: &mut DbConn, new: &NewUserGroup<'_>) -> StoreResult<i64> {
    insert_returning_id!(conn, user_groups::table, new, user_groups::id)
}

pub fn find(conn: &mut DbConn, id: i64) -> StoreResult<UserGroupRow> {
    Ok(user_groups::table
        .find(id)
        .select(UserGroupRow::as_select())
        .first(conn)?)
}

pub fn find_by_symbol(conn: &mut DbConn, symbol: &str) -> StoreResult<UserGroupRow> {
    Ok(user_groups::table
        .filter(user_groups::symbol.eq(symbol))
        .select(UserGroupRow::as_select())
        .first(conn)?)
}

/// Every group, enabled or not, by id.
pub fn all(conn: &mut DbConn) -> StoreResult<Vec<UserGroupRow>> {
    Ok(user_groups::table
        .order(user_groups::id.asc())
        .select(UserGroupRow::as_select())
        .load(conn)?)
}

/// Whether a group with this symbol exists, ignoring case: MySQL's collation already compares
/// symbols case-insensitively, so `VIP` and `vip` are refused as duplicates on every backend.
pub fn symbol_taken(conn: &mut DbConn, symbol: &str) -> StoreResult<bool> {
    let n: i64 = user_groups::table
        .filter(crate::users::lower(user_groups::symbol).eq(symbol.to_lowercase()))
        .count()
        .get_result(conn)?;
    Ok(n > 0)
}

/// Sort keys a group list may be ordered by (`-` prefix: descending).
pub const ORDER_FIELDS: &[&str] = &[
    "id",
    "symbol",
    "name",
    "ratio",
    "api_rate",
    "min_topup",
    "created_at",
];

#[derive(Debug, Clone, Default)]
pub struct UserGroupFilter<'a> {
    /// Symbol or name contains (case-insensitive), or the id exactly.
    pub keyword: Option<&'a str>,
    pub enabled: Option<bool>,
    pub promotion: Option<bool>,
}

pub fn list(
    conn: &mut DbConn,
    f: &UserGroupFilter<'_>,
    order: &str,
    page: PageReq,
) -> StoreResult<Page<UserGroupRow>> {
    let build = || {
        let mut q = user_groups::table.into_boxed();
        if let Some(k) = f.keyword.filter(|k| !k.is_empty()) {
            let pat = like_pattern(k);
            let id: i64 = k.parse().unwrap_or(-1);
            q = q.filter(
                crate::users::lower(user_groups::symbol)
                    .like(pat.clone())
                    .escape('\\')
                    .or(crate::users::lower(user_groups::name)
                        .like(pat)
                        .escape('\\'))
                    .or(user_groups::id.eq(id)),
            );
        }
        if let Some(e) = f.enabled {
            q = q.filter(user_groups::enabled.eq(e));
        }
        if let Some(p) = f.promotion {
            q = q.filter(user_groups::promotion.eq(p));
        }
        q
    };
    let total: i64 = build().count().get_result(conn)?;
    let (field, desc) = crate::split_order(order);
    let q = build();
    let q = match field {
        "symbol" => crate::order_by!(q, desc, user_groups::symbol, user_groups::id),
        "name" => crate::order_by!(q, desc, user_groups::name, user_groups::id),
        "ratio" => crate::order_by!(q, desc, user_groups::ratio, user_groups::id),
        "api_rate" => crate::order_by!(q, desc, user_groups::api_rate, user_groups::id),
        "min_topup" => crate::order_by!(q, desc, user_groups::min_topup, user_groups::id),
        "created_at" => crate::order_by!(q, desc, user_groups::created_at, user_groups::id),
        _ if desc => q.order(user_groups::id.desc()),
        _ => q.order(user_groups::id.asc()),
    };
    let items = q
        .limit(page.size)
        .offset(page.offset())
        .select(UserGroupRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

pub fn update(conn: &mut DbConn, id: i64, changes: &UserGroupChangeset) -> StoreResult<()> {
    let mut changes = changes.clone();
    changes.updated_at = Some(now());
    let n = diesel::update(user_groups::table.find(id))
        .set(&changes)
        .execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn delete(conn: &mut DbConn, id: i64) -> StoreResult<()> {
    let n = diesel::delete(user_groups::table.find(id)).execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// How many users and how many API keys reference a group symbol.
pub fn usage(conn: &mut DbConn, symbol: &str) -> StoreResult<(i64, i64)> {
    use crate::schema::{tokens, users};
    let u: i64 = users::table
        .filter(users::group_name.eq(symbol))
        .count()
        .get_result(conn)?;
    let t: i64 = tokens::table
        .filter(tokens::group_name.eq(symbol))
        .count()
        .get_result(conn)?;
    Ok((u, t))
}

/// Group auto-promotion after a credit (DOMAIN.md "Money"; the rule and its units are in
/// [`switchboard_domain::group`]): moves the user to the enabled promotion group whose
/// `[min_topup, max_topup)` range (quota units) holds their cumulative top-up, the highest
/// `min_topup` winning, never demoting. Writes a system log when the user moves.
///
/// Call it inside the transaction that credited `total_topup`. Returns the new group symbol
/// when the user moved; the caller then drops the user's cached keys
/// (`relay.forget_user`) after the commit, since they carry the group.
pub fn apply_promotion(conn: &mut DbConn, user_id: i64) -> StoreResult<Option<String>> {
    use crate::schema::users;
    let (username, current, total): (String, String, i64) = users::table
        .find(user_id)
        .select((users::username, users::group_name, users::total_topup))
        .first(conn)?;
    let groups = all(conn)?;
    let rules: Vec<PromotionRule<'_>> = groups
        .iter()
        .map(|g| PromotionRule {
            symbol: &g.symbol,
            enabled: g.enabled,
            promotion: g.promotion,
            min_topup: g.min_topup,
            max_topup: g.max_topup,
        })
        .collect();
    let Some(target) = promotion_target(&rules, &current, total).map(str::to_owned) else {
        return Ok(None);
    };
    // Conditional on the group read above: a concurrent change by an administrator wins.
    let n = diesel::update(
        users::table
            .find(user_id)
            .filter(users::group_name.eq(&current)),
    )
    .set((users::group_name.eq(&target), users::updated_at.eq(now())))
    .execute(conn)?;
    if n == 0 {
        return Ok(None);
    }
    crate::logs::record(
        conn,
        LogType::System,
        user_id,
        &username,
        0,
        &format!(
            "automatically promoted from group {current} to {target} (cumulative top-up {total})"
        ),
        &serde_json::json!({"event": "group_promoted", "from": current, "to": target, "total_topup": total}).to_string(),
    )?;
    Ok(Some(target))
}
