//! Upstream channels and their abilities (group x model -> channel), kept in step on every change.

use crate::schema::{abilities, channels};
use crate::users::{like_pattern, lower};
use crate::{insert_returning_id, now, DbConn, Page, PageReq, StoreError, StoreResult};
use diesel::prelude::*;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = channels)]
pub struct ChannelRow {
    pub id: i64,
    pub channel_type: i32,
    pub name: String,
    /// As stored: sealed by the api layer (`sealed:v1:…`), or plain in a database written
    /// before sealing existed (sealed at the next start).
    pub key: String,
    pub base_url: String,
    pub group_name: String,
    pub models: String,
    pub model_mapping: String,
    pub priority: i64,
    pub weight: i32,
    pub tag: String,
    pub proxy: String,
    pub test_model: String,
    pub status: i32,
    pub response_time: i32,
    pub test_time: i64,
    pub used_quota: i64,
    pub balance: i64,
    pub balance_updated_at: i64,
    pub custom_headers: String,
    pub config: String,
    pub disabled_stream: String,
    pub pre_cost: i32,
    pub auto_ban: bool,
    pub created_at: i64,
    pub updated_at: i64,
    /// Whether root last set the destination (base URL, proxy, Vertex AI `token_uri`); when
    /// not, the relay reaches it through the outbound URL policy (docs/security.md).
    pub destination_by_root: bool,
}

/// Everything an operator sets on a channel (create and full update).
#[derive(Debug, Clone, PartialEq, Insertable, AsChangeset)]
#[diesel(table_name = channels)]
pub struct ChannelFields {
    pub channel_type: i32,
    pub name: String,
    pub key: String,
    pub base_url: String,
    pub group_name: String,
    pub models: String,
    pub model_mapping: String,
    pub priority: i64,
    pub weight: i32,
    pub tag: String,
    pub proxy: String,
    pub test_model: String,
    pub status: i32,
    pub custom_headers: String,
    pub config: String,
    pub disabled_stream: String,
    pub pre_cost: i32,
    pub auto_ban: bool,
    pub updated_at: i64,
    /// See [`ChannelRow::destination_by_root`]: set by whoever sets the destination, carried
    /// over by every other write.
    pub destination_by_root: bool,
}

fn split(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// Replaces the abilities of one channel by the cross product of its groups and models.
fn rebuild_abilities(conn: &mut DbConn, id: i64, f: &ChannelFields) -> StoreResult<()> {
    diesel::delete(abilities::table.filter(abilities::channel_id.eq(id))).execute(conn)?;
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for g in split(&f.group_name) {
        for m in split(&f.models) {
            pairs.push((g, m));
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    let rows: Vec<_> = pairs
        .into_iter()
        .map(|(g, m)| {
            (
                abilities::group_name.eq(g.to_owned()),
                abilities::model.eq(m.to_owned()),
                abilities::channel_id.eq(id),
                abilities::enabled.eq(f.status == 1),
                abilities::priority.eq(f.priority),
                abilities::weight.eq(f.weight),
                abilities::tag.eq(f.tag.clone()),
            )
        })
        .collect();
    for chunk in rows.chunks(200) {
        crate::insert_many!(conn, abilities::table, chunk.to_vec())?;
    }
    Ok(())
}

/// Inserts a channel and its abilities in one transaction; returns the id.
pub fn insert(conn: &mut DbConn, f: &ChannelFields) -> StoreResult<i64> {
    crate::transaction(conn, |c| {
        let t = now();
        let id = insert_returning_id!(
            c,
            channels::table,
            (f, channels::created_at.eq(t)),
            channels::id
        )?;
        rebuild_abilities(c, id, f)?;
        Ok(id)
    })
}

pub fn update(conn: &mut DbConn, id: i64, f: &ChannelFields) -> StoreResult<()> {
    crate::transaction(conn, |c| {
        let n = diesel::update(channels::table.find(id)).set(f).execute(c)?;
        if n == 0 {
            return Err(StoreError::NotFound);
        }
        rebuild_abilities(c, id, f)
    })
}

pub fn find(conn: &mut DbConn, id: i64) -> StoreResult<ChannelRow> {
    Ok(channels::table
        .find(id)
        .select(ChannelRow::as_select())
        .first(conn)?)
}

pub fn delete(conn: &mut DbConn, id: i64) -> StoreResult<()> {
    crate::transaction(conn, |c| {
        diesel::delete(abilities::table.filter(abilities::channel_id.eq(id))).execute(c)?;
        let n = diesel::delete(channels::table.find(id)).execute(c)?;
        if n == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    })
}

/// Sets the status (1 enabled, 2 manually disabled, 3 automatically disabled) and the abilities'
/// enabled flag together. Returns false when the channel was already in that status.
pub fn set_status(conn: &mut DbConn, id: i64, status: i32) -> StoreResult<bool> {
    crate::transaction(conn, |c| {
        let n = diesel::update(channels::table.find(id).filter(channels::status.ne(status)))
            .set((channels::status.eq(status), channels::updated_at.eq(now())))
            .execute(c)?;
        if n == 0 {
            find(c, id)?;
            return Ok(false);
        }
        diesel::update(abilities::table.filter(abilities::channel_id.eq(id)))
            .set(abilities::enabled.eq(status == 1))
            .execute(c)?;
        Ok(true)
    })
}

pub fn set_response_time(conn: &mut DbConn, id: i64, ms: i32) -> StoreResult<()> {
    diesel::update(channels::table.find(id))
        .set((
            channels::response_time.eq(ms),
            channels::test_time.eq(now()),
        ))
        .execute(conn)?;
    Ok(())
}

/// Every channel (for the dispatcher's in-memory snapshot).
pub fn all(conn: &mut DbConn) -> StoreResult<Vec<ChannelRow>> {
    Ok(channels::table
        .order(channels::id.asc())
        .select(ChannelRow::as_select())
        .load(conn)?)
}

pub const ORDER_FIELDS: &[&str] = &[
    "id",
    "name",
    "priority",
    "weight",
    "status",
    "response_time",
    "used_quota",
    "balance",
    "created_at",
];

#[derive(Debug, Clone, Default)]
pub struct ChannelFilter<'a> {
    pub keyword: Option<&'a str>,
    pub channel_type: Option<i32>,
    pub status: Option<i32>,
    pub group: Option<&'a str>,
    pub tag: Option<&'a str>,
    pub model: Option<&'a str>,
}

pub fn list(
    conn: &mut DbConn,
    f: &ChannelFilter<'_>,
    order: &str,
    page: PageReq,
) -> StoreResult<Page<ChannelRow>> {
    let build = || {
        let mut q = channels::table.into_boxed();
        if let Some(k) = f.keyword.filter(|k| !k.is_empty()) {
            let id: i64 = k.parse().unwrap_or(-1);
            let pat = like_pattern(k);
            q = q.filter(
                lower(channels::name)
                    .like(pat.clone())
                    .escape('\\')
                    .or(lower(channels::base_url).like(pat).escape('\\'))
                    .or(channels::id.eq(id)),
            );
        }
        if let Some(t) = f.channel_type {
            q = q.filter(channels::channel_type.eq(t));
        }
        if let Some(s) = f.status {
            q = q.filter(channels::status.eq(s));
        }
        if let Some(t) = f.tag {
            q = q.filter(channels::tag.eq(t.to_owned()));
        }
        if let Some(g) = f.group.filter(|g| !g.is_empty()) {
            let ids = abilities::table
                .filter(abilities::group_name.eq(g.to_owned()))
                .select(abilities::channel_id);
            q = q.filter(channels::id.eq_any(ids));
        }
        if let Some(m) = f.model.filter(|m| !m.is_empty()) {
            let ids = abilities::table
                .filter(abilities::model.eq(m.to_owned()))
                .select(abilities::channel_id);
            q = q.filter(channels::id.eq_any(ids));
        }
        q
    };
    let total: i64 = build().count().get_result(conn)?;
    let (field, desc) = crate::split_order(order);
    let q = build();
    let q = match field {
        "name" => crate::order_by!(q, desc, channels::name, channels::id),
        "priority" => crate::order_by!(q, desc, channels::priority, channels::id),
        "weight" => crate::order_by!(q, desc, channels::weight, channels::id),
        "status" => crate::order_by!(q, desc, channels::status, channels::id),
        "response_time" => crate::order_by!(q, desc, channels::response_time, channels::id),
        "used_quota" => crate::order_by!(q, desc, channels::used_quota, channels::id),
        "balance" => crate::order_by!(q, desc, channels::balance, channels::id),
        "created_at" => crate::order_by!(q, desc, channels::created_at, channels::id),
        _ if desc => q.order(channels::id.desc()),
        _ => q.order(channels::id.asc()),
    };
    let items = q
        .limit(page.size)
        .offset(page.offset())
        .select(ChannelRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

/// (group, model, channel_id, enabled) rows, for checks and tests.
pub fn abilities_of(
    conn: &mut DbConn,
    channel_id: i64,
) -> StoreResult<Vec<(String, String, bool)>> {
    Ok(abilities::table
        .filter(abilities::channel_id.eq(channel_id))
        .order((abilities::group_name.asc(), abilities::model.asc()))
        .select((abilities::group_name, abilities::model, abilities::enabled))
        .load(conn)?)
}

/// The operator-set fields of a stored channel (to rewrite it through [`update`], which keeps
/// its abilities in step). The key is carried over as stored (sealed by the api layer).
pub(crate) fn fields_of(r: &ChannelRow) -> ChannelFields {
    ChannelFields {
        channel_type: r.channel_type,
        name: r.name.clone(),
        key: r.key.clone(),
        base_url: r.base_url.clone(),
        group_name: r.group_name.clone(),
        models: r.models.clone(),
        model_mapping: r.model_mapping.clone(),
        priority: r.priority,
        weight: r.weight,
        tag: r.tag.clone(),
        proxy: r.proxy.clone(),
        test_model: r.test_model.clone(),
        status: r.status,
        custom_headers: r.custom_headers.clone(),
        config: r.config.clone(),
        disabled_stream: r.disabled_stream.clone(),
        pre_cost: r.pre_cost,
        auto_ban: r.auto_ban,
        updated_at: now(),
        destination_by_root: r.destination_by_root,
    }
}

/// Stores the upstream account's remaining balance (micro-USD) and when it was read.
pub fn set_balance(conn: &mut DbConn, id: i64, micro_usd: i64) -> StoreResult<()> {
    let n = diesel::update(channels::table.find(id))
        .set((
            channels::balance.eq(micro_usd),
            channels::balance_updated_at.eq(now()),
        ))
        .execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Deletes the given channels and their abilities in one transaction; returns how many channels
/// existed and were deleted (unknown ids are ignored).
pub fn delete_many(conn: &mut DbConn, ids: &[i64]) -> StoreResult<usize> {
    if ids.is_empty() {
        return Ok(0);
    }
    crate::transaction(conn, |c| {
        let mut deleted = 0;
        for chunk in ids.chunks(200) {
            diesel::delete(abilities::table.filter(abilities::channel_id.eq_any(chunk)))
                .execute(c)?;
            deleted +=
                diesel::delete(channels::table.filter(channels::id.eq_any(chunk))).execute(c)?;
        }
        Ok(deleted)
    })
}

/// Deletes every disabled channel (status 2 or 3), only those of `tag` when given; returns how
/// many were deleted.
pub fn delete_disabled(conn: &mut DbConn, tag: Option<&str>) -> StoreResult<usize> {
    crate::transaction(conn, |c| {
        let mut q = channels::table
            .filter(channels::status.eq_any([2, 3]))
            .select(channels::id)
            .into_boxed();
        if let Some(t) = tag {
            q = q.filter(channels::tag.eq(t.to_owned()));
        }
        let ids: Vec<i64> = q.load(c)?;
        delete_many(c, &ids)
    })
}

/// The distinct non-empty tags with their number of channels, by tag.
pub fn tags(conn: &mut DbConn) -> StoreResult<Vec<(String, i64)>> {
    Ok(channels::table
        .filter(channels::tag.ne(""))
        .group_by(channels::tag)
        .select((channels::tag, diesel::dsl::count_star()))
        .order(channels::tag.asc())
        .load(conn)?)
}

/// What a tag edit changes on every channel of the tag (`None` keeps the channel's value).
#[derive(Debug, Clone, Copy, Default)]
pub struct TagEdit {
    pub priority: Option<i64>,
    pub weight: Option<i32>,
    pub status: Option<i32>,
}

/// Applies `edit` to every channel tagged `tag` through [`update`] (abilities follow); returns
/// how many channels carry the tag.
pub fn update_tag(conn: &mut DbConn, tag: &str, edit: TagEdit) -> StoreResult<usize> {
    crate::transaction(conn, |c| {
        let rows: Vec<ChannelRow> = channels::table
            .filter(channels::tag.eq(tag.to_owned()))
            .order(channels::id.asc())
            .select(ChannelRow::as_select())
            .load(c)?;
        for r in &rows {
            let mut f = fields_of(r);
            f.priority = edit.priority.unwrap_or(f.priority);
            f.weight = edit.weight.unwrap_or(f.weight);
            f.status = edit.status.unwrap_or(f.status);
            update(c, r.id, &f)?;
        }
        Ok(rows.len())
    })
}

/// Edits many channels in one transaction: every channel whose id is in `ids` (all channels
/// when `None`) and, when given, of type `channel_type`, is passed to `edit`; the ones it
/// reports changed are written through [`update`] (abilities follow). Returns the changed ids.
pub fn edit_many(
    conn: &mut DbConn,
    ids: Option<&[i64]>,
    channel_type: Option<i32>,
    mut edit: impl FnMut(&mut ChannelFields) -> bool,
) -> StoreResult<Vec<i64>> {
    crate::transaction(conn, |c| {
        let mut q = channels::table
            .select(ChannelRow::as_select())
            .order(channels::id.asc())
            .into_boxed();
        if let Some(ids) = ids {
            q = q.filter(channels::id.eq_any(ids.to_vec()));
        }
        if let Some(t) = channel_type {
            q = q.filter(channels::channel_type.eq(t));
        }
        let rows: Vec<ChannelRow> = q.load(c)?;
        let mut changed = Vec::new();
        for r in &rows {
            let mut f = fields_of(r);
            if edit(&mut f) {
                update(c, r.id, &f)?;
                changed.push(r.id);
            }
        }
        Ok(changed)
    })
}

/// Copies a channel under `name` with `key` (as the caller stores keys: sealed); the copy
/// starts with no usage, balance or test results. Returns the new id.
pub fn copy(conn: &mut DbConn, id: i64, name: &str, key: &str) -> StoreResult<i64> {
    crate::transaction(conn, |c| {
        let row = find(c, id)?;
        let mut f = fields_of(&row);
        f.name = name.to_owned();
        f.key = key.to_owned();
        insert(c, &f)
    })
}

/// `(id, key)` of every channel, keys as stored (for start-up's sealing pass).
pub fn keys(conn: &mut DbConn) -> StoreResult<Vec<(i64, String)>> {
    Ok(channels::table
        .order(channels::id.asc())
        .select((channels::id, channels::key))
        .load(conn)?)
}

/// Replaces a channel's stored key by `new` only while it is still `old` (another node may
/// have changed it since it was read); `updated_at` is left alone. Returns whether it was
/// replaced.
pub fn replace_key(conn: &mut DbConn, id: i64, old: &str, new: &str) -> StoreResult<bool> {
    let n = diesel::update(
        channels::table
            .find(id)
            .filter(channels::key.eq(old.to_owned())),
    )
    .set(channels::key.eq(new))
    .execute(conn)?;
    Ok(n == 1)
}
