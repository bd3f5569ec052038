//! API keys ("tokens"). The key itself is never stored in clear: `key_hash` (a keyed hash) serves
//! the lookup and `key_ciphertext` lets the owner fetch the key again.

use crate::schema::tokens;
use crate::users::like_pattern;
use crate::{insert_returning_id, now, DbConn, Page, PageReq, StoreError, StoreResult};
use diesel::prelude::*;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = tokens)]
pub struct TokenRow {
    pub id: i64,
    pub user_id: i64,
    pub name: String,
    pub key_hash: String,
    pub key_ciphertext: String,
    pub key_hint: String,
    pub status: i32,
    pub created_at: i64,
    pub updated_at: i64,
    pub accessed_at: i64,
    pub expired_at: i64,
    pub remain_quota: i64,
    pub unlimited_quota: bool,
    pub used_quota: i64,
    pub request_count: i64,
    pub group_name: String,
    pub models: String,
    pub subnet: String,
    pub api_rate: i32,
    pub heartbeat_enabled: bool,
    pub heartbeat_timeout: i32,
    pub cache_enabled: bool,
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = tokens)]
pub struct NewToken<'a> {
    pub user_id: i64,
    pub name: &'a str,
    pub key_hash: &'a str,
    pub key_ciphertext: &'a str,
    pub key_hint: &'a str,
    pub status: i32,
    pub created_at: i64,
    pub updated_at: i64,
    pub expired_at: i64,
    pub remain_quota: i64,
    pub unlimited_quota: bool,
    pub group_name: &'a str,
    pub models: &'a str,
    pub subnet: &'a str,
    pub api_rate: i32,
    pub heartbeat_enabled: bool,
    pub heartbeat_timeout: i32,
    pub cache_enabled: bool,
}

#[derive(Debug, Clone, Default, AsChangeset)]
#[diesel(table_name = tokens)]
pub struct TokenChangeset {
    pub name: Option<String>,
    pub status: Option<i32>,
    pub expired_at: Option<i64>,
    pub remain_quota: Option<i64>,
    pub unlimited_quota: Option<bool>,
    pub group_name: Option<String>,
    pub models: Option<String>,
    pub subnet: Option<String>,
    pub api_rate: Option<i32>,
    pub heartbeat_enabled: Option<bool>,
    pub heartbeat_timeout: Option<i32>,
    pub cache_enabled: Option<bool>,
    pub updated_at: Option<i64>,
}

pub fn insert(conn: &mut DbConn, new: &NewToken<'_>) -> StoreResult<i64> {
    insert_returning_id!(conn, tokens::table, new, tokens::id)
}

pub fn find(conn: &mut DbConn, id: i64) -> StoreResult<TokenRow> {
    Ok(tokens::table
        .find(id)
        .select(TokenRow::as_select())
        .first(conn)?)
}

/// A token of this user; another user's token is "not found".
pub fn find_owned(conn: &mut DbConn, id: i64, user_id: i64) -> StoreResult<TokenRow> {
    Ok(tokens::table
        .find(id)
        .filter(tokens::user_id.eq(user_id))
        .select(TokenRow::as_select())
        .first(conn)?)
}

/// The user's enabled keys named `name`, newest first.
pub fn find_enabled_named(
    conn: &mut DbConn,
    user_id: i64,
    name: &str,
) -> StoreResult<Vec<TokenRow>> {
    Ok(tokens::table
        .filter(tokens::user_id.eq(user_id))
        .filter(tokens::name.eq(name))
        .filter(tokens::status.eq(1))
        .order(tokens::id.desc())
        .select(TokenRow::as_select())
        .load(conn)?)
}

pub fn find_by_key_hash(conn: &mut DbConn, hash: &str) -> StoreResult<TokenRow> {
    Ok(tokens::table
        .filter(tokens::key_hash.eq(hash))
        .select(TokenRow::as_select())
        .first(conn)?)
}

pub fn count_for_user(conn: &mut DbConn, user_id: i64) -> StoreResult<i64> {
    Ok(tokens::table
        .filter(tokens::user_id.eq(user_id))
        .count()
        .get_result(conn)?)
}

pub const ORDER_FIELDS: &[&str] = &[
    "id",
    "name",
    "created_at",
    "accessed_at",
    "expired_at",
    "remain_quota",
    "used_quota",
    "status",
];

#[derive(Debug, Clone, Default)]
pub struct TokenFilter<'a> {
    /// Only this user's tokens (always set for the user routes).
    pub user_id: Option<i64>,
    /// Name contains (case-insensitive), or the id exactly.
    pub keyword: Option<&'a str>,
    pub status: Option<i32>,
}

pub fn list(
    conn: &mut DbConn,
    f: &TokenFilter<'_>,
    order: &str,
    page: PageReq,
) -> StoreResult<Page<TokenRow>> {
    let build = || {
        let mut q = tokens::table.into_boxed();
        if let Some(u) = f.user_id {
            q = q.filter(tokens::user_id.eq(u));
        }
        if let Some(k) = f.keyword.filter(|k| !k.is_empty()) {
            let id: i64 = k.parse().unwrap_or(-1);
            q = q.filter(
                crate::users::lower(tokens::name)
                    .like(like_pattern(k))
                    .escape('\\')
                    .or(tokens::id.eq(id)),
            );
        }
        if let Some(s) = f.status {
            q = q.filter(tokens::status.eq(s));
        }
        q
    };
    let total: i64 = build().count().get_result(conn)?;
    let (field, desc) = crate::split_order(order);
    let q = build();
    let q = match field {
        "name" => crate::order_by!(q, desc, tokens::name, tokens::id),
        "created_at" => crate::order_by!(q, desc, tokens::created_at, tokens::id),
        "accessed_at" => crate::order_by!(q, desc, tokens::accessed_at, tokens::id),
        "expired_at" => crate::order_by!(q, desc, tokens::expired_at, tokens::id),
        "remain_quota" => crate::order_by!(q, desc, tokens::remain_quota, tokens::id),
        "used_quota" => crate::order_by!(q, desc, tokens::used_quota, tokens::id),
        "status" => crate::order_by!(q, desc, tokens::status, tokens::id),
        _ if desc => q.order(tokens::id.desc()),
        _ => q.order(tokens::id.asc()),
    };
    let items = q
        .limit(page.size)
        .offset(page.offset())
        .select(TokenRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

pub fn update(conn: &mut DbConn, id: i64, changes: &TokenChangeset) -> StoreResult<()> {
    let mut changes = changes.clone();
    changes.updated_at = Some(now());
    let n = diesel::update(tokens::table.find(id))
        .set(&changes)
        .execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// The remaining quota and unlimited flag of keys (for the ledger's resync), by id, in chunks
/// of 500.
pub fn remains(conn: &mut DbConn, ids: &[i64]) -> StoreResult<Vec<(i64, i64, bool)>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        out.extend(
            tokens::table
                .filter(tokens::id.eq_any(chunk))
                .select((tokens::id, tokens::remain_quota, tokens::unlimited_quota))
                .load::<(i64, i64, bool)>(conn)?,
        );
    }
    Ok(out)
}

pub fn delete_owned(conn: &mut DbConn, id: i64, user_id: i64) -> StoreResult<()> {
    let n =
        diesel::delete(tokens::table.find(id).filter(tokens::user_id.eq(user_id))).execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn delete_for_user(conn: &mut DbConn, user_id: i64) -> StoreResult<usize> {
    Ok(diesel::delete(tokens::table.filter(tokens::user_id.eq(user_id))).execute(conn)?)
}

/// Ids of a user's tokens (to drop them from caches when the user changes).
pub fn ids_for_user(conn: &mut DbConn, user_id: i64) -> StoreResult<Vec<(i64, String)>> {
    Ok(tokens::table
        .filter(tokens::user_id.eq(user_id))
        .select((tokens::id, tokens::key_hash))
        .load(conn)?)
}

/// `(id, key_ciphertext)` of up to `limit` tokens with an id above `after`, by id (for
/// re-sealing the keys after a change of the server secret).
pub fn ciphertexts_after(
    conn: &mut DbConn,
    after: i64,
    limit: i64,
) -> StoreResult<Vec<(i64, String)>> {
    Ok(tokens::table
        .filter(tokens::id.gt(after))
        .order(tokens::id.asc())
        .limit(limit)
        .select((tokens::id, tokens::key_ciphertext))
        .load(conn)?)
}

/// Replaces a token's `key_ciphertext` by `new` only while it is still `old`. Returns whether
/// it was replaced.
pub fn replace_ciphertext(conn: &mut DbConn, id: i64, old: &str, new: &str) -> StoreResult<bool> {
    let n = diesel::update(
        tokens::table
            .find(id)
            .filter(tokens::key_ciphertext.eq(old.to_owned())),
    )
    .set(tokens::key_ciphertext.eq(new))
    .execute(conn)?;
    Ok(n == 1)
}
