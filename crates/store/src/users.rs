//! Users: accounts, roles, balances.

use crate::schema::users;
use crate::{insert_returning_id, now, DbConn, Page, PageReq, StoreError, StoreResult};
use diesel::prelude::*;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = users)]
pub struct UserRow {
    pub id: i64,
    pub username: String,
    pub password: String,
    pub display_name: String,
    pub role: i32,
    pub status: i32,
    pub email: String,
    pub avatar_url: String,
    pub github_id: String,
    pub oidc_id: String,
    pub lark_id: String,
    pub wechat_id: String,
    pub telegram_id: i64,
    pub access_token_hash: Option<String>,
    pub quota: i64,
    pub used_quota: i64,
    pub request_count: i64,
    pub group_name: String,
    pub aff_code: Option<String>,
    pub aff_count: i32,
    pub aff_quota: i64,
    pub aff_history_quota: i64,
    pub inviter_id: i64,
    pub total_topup: i64,
    pub created_at: i64,
    pub updated_at: i64,
    pub last_login_at: i64,
    /// The console language the user chose (`zh_CN`, `zh_HK`, `en`, `ja`); empty: the site's.
    pub language: String,
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = users)]
pub struct NewUser<'a> {
    pub username: &'a str,
    pub password: &'a str,
    pub display_name: &'a str,
    pub role: i32,
    pub status: i32,
    pub email: &'a str,
    pub quota: i64,
    pub group_name: &'a str,
    pub aff_code: Option<&'a str>,
    pub inviter_id: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Fields an update may change; `None` leaves a column as it is.
#[derive(Debug, Clone, Default, AsChangeset)]
#[diesel(table_name = users)]
pub struct UserChangeset {
    pub username: Option<String>,
    pub password: Option<String>,
    pub display_name: Option<String>,
    pub email: Option<String>,
    pub group_name: Option<String>,
    pub role: Option<i32>,
    pub status: Option<i32>,
    pub quota: Option<i64>,
    pub updated_at: Option<i64>,
    pub language: Option<String>,
}

pub fn insert(conn: &mut DbConn, new: &NewUser<'_>) -> StoreResult<i64> {
    insert_returning_id!(conn, users::table, new, users::id)
}

pub fn find(conn: &mut DbConn, id: i64) -> StoreResult<UserRow> {
    Ok(users::table
        .find(id)
        .select(UserRow::as_select())
        .first(conn)?)
}

/// The account named `username`, whatever the case: the exact name first; otherwise the one
/// account whose name equals it case-insensitively. Names are unique case-insensitively since
/// 2026-11-23 ([`username_taken`]); should older rows differ only by case, no case-insensitive
/// match is taken (not found), so nobody signs in to another's account.
pub fn find_by_username(conn: &mut DbConn, username: &str) -> StoreResult<UserRow> {
    match users::table
        .filter(users::username.eq(username))
        .select(UserRow::as_select())
        .first(conn)
    {
        Err(diesel::result::Error::NotFound) => {}
        found => return Ok(found?),
    }
    let mut rows: Vec<UserRow> = users::table
        .filter(lower(users::username).eq(username.to_lowercase()))
        .select(UserRow::as_select())
        .limit(2)
        .load(conn)?;
    if rows.len() == 1 {
        Ok(rows.remove(0))
    } else {
        Err(StoreError::NotFound)
    }
}

/// Finds the account a login name refers to: an e-mail address (contains `@`) or a username.
pub fn find_by_login(conn: &mut DbConn, login: &str) -> StoreResult<UserRow> {
    if login.contains('@') {
        Ok(users::table
            .filter(users::email.eq(login))
            .order(users::id.asc())
            .select(UserRow::as_select())
            .first(conn)?)
    } else {
        find_by_username(conn, login)
    }
}

pub fn find_by_access_token_hash(conn: &mut DbConn, hash: &str) -> StoreResult<UserRow> {
    Ok(users::table
        .filter(users::access_token_hash.eq(hash))
        .select(UserRow::as_select())
        .first(conn)?)
}

/// Whether another account has this name, compared case-insensitively (`Alice` and `alice` are
/// one name; the username rule keeps names to ASCII and CJK ideographs, where SQL `lower()`
/// folds case the same on every backend).
pub fn username_taken(conn: &mut DbConn, username: &str, except_id: i64) -> StoreResult<bool> {
    let n: i64 = users::table
        .filter(lower(users::username).eq(username.to_lowercase()))
        .filter(users::id.ne(except_id))
        .count()
        .get_result(conn)?;
    Ok(n > 0)
}

pub fn email_taken(conn: &mut DbConn, email: &str, except_id: i64) -> StoreResult<bool> {
    if email.is_empty() {
        return Ok(false);
    }
    let n: i64 = users::table
        .filter(users::email.eq(email))
        .filter(users::id.ne(except_id))
        .count()
        .get_result(conn)?;
    Ok(n > 0)
}

pub fn count(conn: &mut DbConn) -> StoreResult<i64> {
    Ok(users::table.count().get_result(conn)?)
}

pub fn count_with_role_at_least(conn: &mut DbConn, role: i32) -> StoreResult<i64> {
    Ok(users::table
        .filter(users::role.ge(role))
        .count()
        .get_result(conn)?)
}

/// Sort keys a user list may be ordered by (allow-listed; `-` prefix means descending).
pub const ORDER_FIELDS: &[&str] = &[
    "id",
    "username",
    "quota",
    "used_quota",
    "request_count",
    "created_at",
    "role",
    "status",
];

#[derive(Debug, Clone, Default)]
pub struct UserFilter<'a> {
    /// Matches username, display name or e-mail (case-insensitive substring), or the id exactly.
    pub keyword: Option<&'a str>,
    pub group: Option<&'a str>,
    pub role: Option<i32>,
    pub status: Option<i32>,
}

diesel::define_sql_function!(fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text);

/// Escapes `%`, `_` and the escape character itself for a LIKE pattern with `ESCAPE '\'`.
pub fn like_pattern(keyword: &str) -> String {
    let mut s = String::with_capacity(keyword.len() + 2);
    s.push('%');
    for c in keyword.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('%');
    s
}

/// A LIKE pattern (with `ESCAPE '\\'`) for the values that start with `prefix`, as typed.
pub fn prefix_pattern(prefix: &str) -> String {
    let mut s = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '%' | '_' | '\\') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('%');
    s
}

pub fn list(
    conn: &mut DbConn,
    filter: &UserFilter<'_>,
    order: &str,
    page: PageReq,
) -> StoreResult<Page<UserRow>> {
    let build = || {
        let mut q = users::table.into_boxed();
        if let Some(k) = filter.keyword.filter(|k| !k.is_empty()) {
            let pat = like_pattern(k);
            let id: i64 = k.parse().unwrap_or(-1);
            q = q.filter(
                lower(users::username)
                    .like(pat.clone())
                    .escape('\\')
                    .or(lower(users::display_name).like(pat.clone()).escape('\\'))
                    .or(lower(users::email).like(pat).escape('\\'))
                    .or(users::id.eq(id)),
            );
        }
        if let Some(g) = filter.group {
            q = q.filter(users::group_name.eq(g.to_owned()));
        }
        if let Some(r) = filter.role {
            q = q.filter(users::role.eq(r));
        }
        if let Some(s) = filter.status {
            q = q.filter(users::status.eq(s));
        }
        q
    };
    let total: i64 = build().count().get_result(conn)?;
    let (field, desc) = crate::split_order(order);
    let q = build();
    let q = match (field, desc) {
        ("username", false) => q.order((users::username.asc(), users::id.asc())),
        ("username", true) => q.order((users::username.desc(), users::id.desc())),
        ("quota", false) => q.order((users::quota.asc(), users::id.asc())),
        ("quota", true) => q.order((users::quota.desc(), users::id.desc())),
        ("used_quota", false) => q.order((users::used_quota.asc(), users::id.asc())),
        ("used_quota", true) => q.order((users::used_quota.desc(), users::id.desc())),
        ("request_count", false) => q.order((users::request_count.asc(), users::id.asc())),
        ("request_count", true) => q.order((users::request_count.desc(), users::id.desc())),
        ("created_at", false) => q.order((users::created_at.asc(), users::id.asc())),
        ("created_at", true) => q.order((users::created_at.desc(), users::id.desc())),
        ("role", false) => q.order((users::role.asc(), users::id.asc())),
        ("role", true) => q.order((users::role.desc(), users::id.desc())),
        ("status", false) => q.order((users::status.asc(), users::id.asc())),
        ("status", true) => q.order((users::status.desc(), users::id.desc())),
        ("id", false) => q.order(users::id.asc()),
        _ => q.order(users::id.desc()),
    };
    let items = q
        .limit(page.size)
        .offset(page.offset())
        .select(UserRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

pub fn update(conn: &mut DbConn, id: i64, changes: &UserChangeset) -> StoreResult<()> {
    let mut changes = changes.clone();
    changes.updated_at = Some(now());
    let n = diesel::update(users::table.find(id))
        .set(&changes)
        .execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn set_access_token_hash(conn: &mut DbConn, id: i64, hash: Option<&str>) -> StoreResult<()> {
    let n = diesel::update(users::table.find(id))
        .set((
            users::access_token_hash.eq(hash),
            users::updated_at.eq(now()),
        ))
        .execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn touch_login(conn: &mut DbConn, id: i64) -> StoreResult<()> {
    diesel::update(users::table.find(id))
        .set(users::last_login_at.eq(now()))
        .execute(conn)?;
    Ok(())
}

/// Adds `delta` (which may be negative) to a user's quota in one statement that refuses to take
/// the balance below zero. Returns `false` (and changes nothing) when the balance is too small.
pub fn add_quota(conn: &mut DbConn, id: i64, delta: i64) -> StoreResult<bool> {
    let q = diesel::update(users::table.find(id));
    let n = if delta < 0 {
        q.filter(users::quota.ge(-delta))
            .set((
                users::quota.eq(users::quota + delta),
                users::updated_at.eq(now()),
            ))
            .execute(conn)?
    } else {
        q.set((
            users::quota.eq(users::quota + delta),
            users::updated_at.eq(now()),
        ))
        .execute(conn)?
    };
    if n == 0 {
        // Distinguish "no such user" from "not enough balance".
        find(conn, id)?;
        return Ok(false);
    }
    Ok(true)
}

/// The balances of users (for the ledger's resync), by id, in chunks of 500.
pub fn quotas(conn: &mut DbConn, ids: &[i64]) -> StoreResult<Vec<(i64, i64)>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        out.extend(
            users::table
                .filter(users::id.eq_any(chunk))
                .select((users::id, users::quota))
                .load::<(i64, i64)>(conn)?,
        );
    }
    Ok(out)
}

pub fn delete(conn: &mut DbConn, id: i64) -> StoreResult<()> {
    let n = diesel::delete(users::table.find(id)).execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn find_by_aff_code(conn: &mut DbConn, code: &str) -> StoreResult<UserRow> {
    Ok(users::table
        .filter(users::aff_code.eq(code))
        .select(UserRow::as_select())
        .first(conn)?)
}

/// Credits an inviter for a new invitee: reward quota (possibly 0) and one more invite.
pub fn credit_inviter(conn: &mut DbConn, inviter_id: i64, reward: i64) -> StoreResult<()> {
    diesel::update(users::table.find(inviter_id))
        .set((
            users::aff_count.eq(users::aff_count + 1),
            users::aff_quota.eq(users::aff_quota + reward),
            users::aff_history_quota.eq(users::aff_history_quota + reward),
            users::quota.eq(users::quota + reward),
            users::updated_at.eq(now()),
        ))
        .execute(conn)?;
    Ok(())
}

/// A third-party identity column of `users`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdentityKind {
    GitHub,
    Oidc,
    Lark,
    WeChat,
}

impl IdentityKind {
    pub const ALL: [IdentityKind; 4] = [
        IdentityKind::GitHub,
        IdentityKind::Oidc,
        IdentityKind::Lark,
        IdentityKind::WeChat,
    ];
}

/// The account bound to `id` at this provider (the oldest, should older data hold two).
pub fn find_by_identity(
    conn: &mut DbConn,
    kind: IdentityKind,
    id: &str,
) -> StoreResult<Option<UserRow>> {
    if id.is_empty() {
        return Ok(None);
    }
    let q = users::table
        .order(users::id.asc())
        .select(UserRow::as_select())
        .into_boxed();
    let q = match kind {
        IdentityKind::GitHub => q.filter(users::github_id.eq(id)),
        IdentityKind::Oidc => q.filter(users::oidc_id.eq(id)),
        IdentityKind::Lark => q.filter(users::lark_id.eq(id)),
        IdentityKind::WeChat => q.filter(users::wechat_id.eq(id)),
    };
    Ok(q.first(conn).optional()?)
}

/// Binds (or, with `id` empty, unbinds) the account's identity at this provider.
pub fn set_identity(
    conn: &mut DbConn,
    user_id: i64,
    kind: IdentityKind,
    id: &str,
) -> StoreResult<()> {
    let target = users::table.find(user_id);
    let t = users::updated_at.eq(now());
    let n = match kind {
        IdentityKind::GitHub => diesel::update(target)
            .set((users::github_id.eq(id), t))
            .execute(conn)?,
        IdentityKind::Oidc => diesel::update(target)
            .set((users::oidc_id.eq(id), t))
            .execute(conn)?,
        IdentityKind::Lark => diesel::update(target)
            .set((users::lark_id.eq(id), t))
            .execute(conn)?,
        IdentityKind::WeChat => diesel::update(target)
            .set((users::wechat_id.eq(id), t))
            .execute(conn)?,
    };
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

impl UserRow {
    /// The account's identity at this provider (empty when not bound).
    pub fn identity(&self, kind: IdentityKind) -> &str {
        match kind {
            IdentityKind::GitHub => &self.github_id,
            IdentityKind::Oidc => &self.oidc_id,
            IdentityKind::Lark => &self.lark_id,
            IdentityKind::WeChat => &self.wechat_id,
        }
    }
}

/// Sets the account's picture (a provider's avatar on third-party sign-up).
pub fn set_avatar_url(conn: &mut DbConn, user_id: i64, url: &str) -> StoreResult<()> {
    diesel::update(users::table.find(user_id))
        .set(users::avatar_url.eq(url))
        .execute(conn)?;
    Ok(())
}
