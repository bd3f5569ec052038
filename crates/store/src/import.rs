//! Writes of `switchboard import`: rows brought over from a one-api or one-hub database.
//!
//! Every kind has the same shape ([`upsert`]): find the row the target already holds under the
//! kind's natural key (users by username, keys by digest, channels by id and name, codes by
//! code, groups by symbol, prices by model, logs by request id); leave it when it already says
//! the same, so a second import changes nothing; update it when it differs; insert it when there
//! is none, under the source's id when that id is free (so references the source's ids carry,
//! and what people remember, stay right) and under a fresh one otherwise. The importer runs each
//! call inside a savepoint of its own, so a row the database refuses leaves nothing behind.

use crate::channels::{ChannelFields, ChannelRow};
use crate::schema::{channels, logs, prices, redemptions, tokens, users};
use crate::tokens::TokenRow;
use crate::user_groups::{NewUserGroup, UserGroupChangeset, UserGroupRow};
use crate::users::UserRow;
use crate::{insert_returning_id, now, Backend, DbConn, StoreResult};
use diesel::prelude::*;
use std::collections::HashSet;
use switchboard_domain::price::Price;

/// What an import write did to its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Inserted,
    Updated,
    Unchanged,
}

/// The row an import write matched or created, and what it did to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upserted {
    /// The row's id in the target (the source's id when it was inserted under it).
    pub id: i64,
    pub outcome: Outcome,
}

/// One kind of imported row: what differs from kind to kind in [`upsert`].
trait Upsert {
    /// The stored row the natural key finds.
    type Current;
    fn find(&self, conn: &mut DbConn) -> StoreResult<Option<Self::Current>>;
    fn id(cur: &Self::Current) -> i64;
    /// Whether the stored row already says what the import would write.
    fn same(&self, cur: &Self::Current) -> bool;
    fn update(&self, conn: &mut DbConn, cur: &Self::Current) -> StoreResult<()>;
    /// Inserts the row; returns its id.
    fn insert(&self, conn: &mut DbConn) -> StoreResult<i64>;
}

/// Find, then leave, update or insert: the one shape of every import write.
fn upsert<U: Upsert>(conn: &mut DbConn, u: &U) -> StoreResult<Upserted> {
    let (id, outcome) = match u.find(conn)? {
        Some(cur) if u.same(&cur) => (U::id(&cur), Outcome::Unchanged),
        Some(cur) => {
            u.update(conn, &cur)?;
            (U::id(&cur), Outcome::Updated)
        }
        None => (u.insert(conn)?, Outcome::Inserted),
    };
    Ok(Upserted { id, outcome })
}

/// `Ok(None)` for a row that is not there.
fn optional<T>(r: StoreResult<T>) -> StoreResult<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Inserts `$values` into `$table` under the id `$keep` (an `Option<i64>`) when it is given and
/// no row has it yet, otherwise under a fresh id; evaluates to the row's id.
macro_rules! insert_keeping_id {
    ($conn:expr, $table:ident, $keep:expr, $values:expr) => {{
        let conn: &mut DbConn = $conn;
        let keep = match $keep {
            Some(id) => {
                let taken: i64 = $table::table
                    .filter($table::id.eq(id))
                    .count()
                    .get_result(conn)?;
                (taken == 0).then_some(id)
            }
            None => None,
        };
        match keep {
            Some(id) => {
                diesel::insert_into($table::table)
                    .values(($table::id.eq(id), $values))
                    .execute(conn)?;
                Ok::<i64, $crate::StoreError>(id)
            }
            None => insert_returning_id!(conn, $table::table, $values, $table::id),
        }
    }};
}

// ---------------------------------------------------------------------------------------------
// Users

/// The columns of a user the import writes (`updated_at` is set to now by every write).
#[derive(Debug, Clone, PartialEq, Insertable, AsChangeset)]
#[diesel(table_name = users)]
#[diesel(treat_none_as_default_value = false, treat_none_as_null = true)]
pub struct ImportedUserFields {
    pub username: String,
    /// A bcrypt hash, or empty (no password sign-in).
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
    pub quota: i64,
    pub used_quota: i64,
    pub request_count: i64,
    pub group_name: String,
    pub aff_code: Option<String>,
    pub aff_count: i32,
    pub aff_quota: i64,
    pub aff_history_quota: i64,
    pub inviter_id: i64,
    pub created_at: i64,
    pub last_login_at: i64,
}

impl ImportedUserFields {
    fn of(r: &UserRow) -> ImportedUserFields {
        ImportedUserFields {
            username: r.username.clone(),
            password: r.password.clone(),
            display_name: r.display_name.clone(),
            role: r.role,
            status: r.status,
            email: r.email.clone(),
            avatar_url: r.avatar_url.clone(),
            github_id: r.github_id.clone(),
            oidc_id: r.oidc_id.clone(),
            lark_id: r.lark_id.clone(),
            wechat_id: r.wechat_id.clone(),
            telegram_id: r.telegram_id,
            quota: r.quota,
            used_quota: r.used_quota,
            request_count: r.request_count,
            group_name: r.group_name.clone(),
            aff_code: r.aff_code.clone(),
            aff_count: r.aff_count,
            aff_quota: r.aff_quota,
            aff_history_quota: r.aff_history_quota,
            inviter_id: r.inviter_id,
            created_at: r.created_at,
            last_login_at: r.last_login_at,
        }
    }
}

/// A user to import, matched by username ([`crate::users::find_by_username`]: ignoring case).
#[derive(Debug, Clone)]
pub struct ImportedUser {
    /// The id to insert under when no row has it yet (the source's); `None`: a fresh one.
    pub keep_id: Option<i64>,
    pub fields: ImportedUserFields,
}

impl ImportedUser {
    /// What to write over `cur`: the stored username keeps its case (it matched ignoring case).
    fn over(&self, cur: &UserRow) -> ImportedUserFields {
        ImportedUserFields {
            username: cur.username.clone(),
            ..self.fields.clone()
        }
    }
}

impl Upsert for ImportedUser {
    type Current = UserRow;

    fn find(&self, conn: &mut DbConn) -> StoreResult<Option<UserRow>> {
        optional(crate::users::find_by_username(conn, &self.fields.username))
    }

    fn id(cur: &UserRow) -> i64 {
        cur.id
    }

    fn same(&self, cur: &UserRow) -> bool {
        ImportedUserFields::of(cur) == self.over(cur)
    }

    fn update(&self, conn: &mut DbConn, cur: &UserRow) -> StoreResult<()> {
        diesel::update(users::table.find(cur.id))
            .set((&self.over(cur), users::updated_at.eq(now())))
            .execute(conn)?;
        Ok(())
    }

    fn insert(&self, conn: &mut DbConn) -> StoreResult<i64> {
        insert_keeping_id!(
            conn,
            users,
            self.keep_id,
            (&self.fields, users::updated_at.eq(now()))
        )
    }
}

/// The ids of the target's root users (a stored role of 100 or more grants root).
pub fn root_user_ids(conn: &mut DbConn) -> StoreResult<Vec<i64>> {
    Ok(users::table
        .filter(users::role.ge(switchboard_domain::user::Role::Root.as_i32()))
        .select(users::id)
        .order(users::id)
        .load(conn)?)
}

/// Writes an imported user: unchanged when the user of that name already holds these values,
/// updated when not (the stored name keeps its case), inserted under `keep_id` when it is free.
pub fn upsert_user_with_id(conn: &mut DbConn, user: &ImportedUser) -> StoreResult<Upserted> {
    upsert(conn, user)
}

// ---------------------------------------------------------------------------------------------
// API keys

/// The columns of an API key the import writes besides the key itself (`updated_at` is set to
/// now by every write).
#[derive(Debug, Clone, PartialEq, Insertable, AsChangeset)]
#[diesel(table_name = tokens)]
pub struct ImportedTokenFields {
    pub user_id: i64,
    pub name: String,
    pub status: i32,
    pub created_at: i64,
    pub accessed_at: i64,
    pub expired_at: i64,
    pub remain_quota: i64,
    pub unlimited_quota: bool,
    pub used_quota: i64,
    pub group_name: String,
    pub models: String,
    pub subnet: String,
    pub heartbeat_enabled: bool,
    pub heartbeat_timeout: i32,
}

impl ImportedTokenFields {
    fn of(r: &TokenRow) -> ImportedTokenFields {
        ImportedTokenFields {
            user_id: r.user_id,
            name: r.name.clone(),
            status: r.status,
            created_at: r.created_at,
            accessed_at: r.accessed_at,
            expired_at: r.expired_at,
            remain_quota: r.remain_quota,
            unlimited_quota: r.unlimited_quota,
            used_quota: r.used_quota,
            group_name: r.group_name.clone(),
            models: r.models.clone(),
            subnet: r.subnet.clone(),
            heartbeat_enabled: r.heartbeat_enabled,
            heartbeat_timeout: r.heartbeat_timeout,
        }
    }
}

/// An API key to import, matched by its digest. The key columns are written only when the key
/// is inserted (a key found by its digest is that key).
#[derive(Debug, Clone)]
pub struct ImportedToken {
    /// The id to insert under when no row has it yet (the source's); `None`: a fresh one.
    pub keep_id: Option<i64>,
    pub key_hash: String,
    /// The key as the api layer seals it.
    pub key_ciphertext: String,
    pub key_hint: String,
    pub fields: ImportedTokenFields,
}

impl Upsert for ImportedToken {
    type Current = TokenRow;

    fn find(&self, conn: &mut DbConn) -> StoreResult<Option<TokenRow>> {
        optional(crate::tokens::find_by_key_hash(conn, &self.key_hash))
    }

    fn id(cur: &TokenRow) -> i64 {
        cur.id
    }

    fn same(&self, cur: &TokenRow) -> bool {
        ImportedTokenFields::of(cur) == self.fields
    }

    fn update(&self, conn: &mut DbConn, cur: &TokenRow) -> StoreResult<()> {
        diesel::update(tokens::table.find(cur.id))
            .set((&self.fields, tokens::updated_at.eq(now())))
            .execute(conn)?;
        Ok(())
    }

    fn insert(&self, conn: &mut DbConn) -> StoreResult<i64> {
        let key = (
            tokens::key_hash.eq(&self.key_hash),
            tokens::key_ciphertext.eq(&self.key_ciphertext),
            tokens::key_hint.eq(&self.key_hint),
        );
        insert_keeping_id!(
            conn,
            tokens,
            self.keep_id,
            (key, &self.fields, tokens::updated_at.eq(now()))
        )
    }
}

/// Writes an imported API key: unchanged, updated, or inserted under `keep_id` when it is free.
pub fn upsert_token_with_id(conn: &mut DbConn, token: &ImportedToken) -> StoreResult<Upserted> {
    upsert(conn, token)
}

// ---------------------------------------------------------------------------------------------
// Channels

/// What a channel has learnt by running (usage, balance, tests) and its creation time: the
/// import carries them over, where an operator's write never sets them.
#[derive(Debug, Clone, PartialEq, AsChangeset)]
#[diesel(table_name = channels)]
pub struct ImportedChannelStats {
    pub created_at: i64,
    pub used_quota: i64,
    /// Micro-USD.
    pub balance: i64,
    pub balance_updated_at: i64,
    pub response_time: i32,
    pub test_time: i64,
}

impl ImportedChannelStats {
    fn of(r: &ChannelRow) -> ImportedChannelStats {
        ImportedChannelStats {
            created_at: r.created_at,
            used_quota: r.used_quota,
            balance: r.balance,
            balance_updated_at: r.balance_updated_at,
            response_time: r.response_time,
            test_time: r.test_time,
        }
    }
}

/// A channel to import.
#[derive(Debug, Clone)]
pub struct ImportedChannel {
    /// The source's id: the channel with this id and the same name is the match, and a new
    /// channel is inserted under it when no row has it yet; `None`: matched by name and type
    /// only, inserted under a fresh id.
    pub keep_id: Option<i64>,
    /// With the key sealed as the api layer stores it.
    pub fields: ChannelFields,
    pub stats: ImportedChannelStats,
}

struct ChannelUpsert<'a, F> {
    channel: &'a ImportedChannel,
    claimed: &'a HashSet<i64>,
    key_matches: F,
}

impl<F: Fn(&str) -> bool> Upsert for ChannelUpsert<'_, F> {
    type Current = ChannelRow;

    fn find(&self, conn: &mut DbConn) -> StoreResult<Option<ChannelRow>> {
        let f = &self.channel.fields;
        let free = |cur: &ChannelRow| !self.claimed.contains(&cur.id);
        // Any failure to read by id falls through to the search by name.
        let by_id = self
            .channel
            .keep_id
            .and_then(|id| crate::channels::find(conn, id).ok())
            .filter(|cur| cur.name == f.name && free(cur));
        if by_id.is_some() {
            return Ok(by_id);
        }
        let named: Vec<ChannelRow> = channels::table
            .filter(channels::name.eq(&f.name))
            .filter(channels::channel_type.eq(f.channel_type))
            .order(channels::id.asc())
            .select(ChannelRow::as_select())
            .load(conn)?;
        Ok(named.into_iter().find(free))
    }

    fn id(cur: &ChannelRow) -> i64 {
        cur.id
    }

    fn same(&self, cur: &ChannelRow) -> bool {
        let want = &self.channel.fields;
        let stored = ChannelFields {
            key: want.key.clone(),
            updated_at: want.updated_at,
            ..crate::channels::fields_of(cur)
        };
        (self.key_matches)(&cur.key)
            && stored == *want
            && ImportedChannelStats::of(cur) == self.channel.stats
    }

    fn update(&self, conn: &mut DbConn, cur: &ChannelRow) -> StoreResult<()> {
        crate::channels::update(conn, cur.id, &self.channel.fields)?;
        set_channel_stats(conn, cur.id, &self.channel.stats)
    }

    fn insert(&self, conn: &mut DbConn) -> StoreResult<i64> {
        let c = &self.channel;
        let id = insert_keeping_id!(
            conn,
            channels,
            c.keep_id,
            (&c.fields, channels::created_at.eq(c.stats.created_at))
        )?;
        // The update builds the abilities (group x model) from the fields.
        crate::channels::update(conn, id, &c.fields)?;
        set_channel_stats(conn, id, &c.stats)?;
        Ok(id)
    }
}

fn set_channel_stats(conn: &mut DbConn, id: i64, stats: &ImportedChannelStats) -> StoreResult<()> {
    diesel::update(channels::table.find(id))
        .set(stats)
        .execute(conn)?;
    Ok(())
}

/// Writes an imported channel and its abilities. The match is the channel with the source's id
/// and the same name, otherwise the first (by id) of that name and type; a channel in `claimed`
/// (matched by another source row of this run) is never the match. It is unchanged when every
/// field and stat is the same and `key_matches` accepts its stored key (sealed keys differ
/// from one sealing to the next, so only the caller, holding the secret, can compare them).
pub fn upsert_channel_with_id(
    conn: &mut DbConn,
    channel: &ImportedChannel,
    claimed: &HashSet<i64>,
    key_matches: impl Fn(&str) -> bool,
) -> StoreResult<Upserted> {
    upsert(
        conn,
        &ChannelUpsert {
            channel,
            claimed,
            key_matches,
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Redemption codes

/// The columns of a redemption code the import writes besides the code.
#[derive(Debug, Clone, PartialEq, Insertable, AsChangeset)]
#[diesel(table_name = redemptions)]
pub struct ImportedRedemptionFields {
    pub user_id: i64,
    pub name: String,
    pub status: i32,
    pub quota: i64,
    pub created_at: i64,
    pub redeemed_at: i64,
}

/// A redemption code to import, matched by its code.
#[derive(Debug, Clone)]
pub struct ImportedRedemption {
    /// The id to insert under when no row has it yet (the source's); `None`: a fresh one.
    pub keep_id: Option<i64>,
    pub code: String,
    pub fields: ImportedRedemptionFields,
}

impl Upsert for ImportedRedemption {
    type Current = crate::redemptions::RedemptionRow;

    fn find(&self, conn: &mut DbConn) -> StoreResult<Option<Self::Current>> {
        optional(crate::redemptions::find_by_code(conn, &self.code))
    }

    fn id(cur: &Self::Current) -> i64 {
        cur.id
    }

    fn same(&self, cur: &Self::Current) -> bool {
        let f = &self.fields;
        (cur.user_id, &cur.name, cur.status, cur.quota) == (f.user_id, &f.name, f.status, f.quota)
            && (cur.created_at, cur.redeemed_at) == (f.created_at, f.redeemed_at)
    }

    fn update(&self, conn: &mut DbConn, cur: &Self::Current) -> StoreResult<()> {
        diesel::update(redemptions::table.find(cur.id))
            .set(&self.fields)
            .execute(conn)?;
        Ok(())
    }

    fn insert(&self, conn: &mut DbConn) -> StoreResult<i64> {
        insert_keeping_id!(
            conn,
            redemptions,
            self.keep_id,
            (redemptions::code.eq(&self.code), &self.fields)
        )
    }
}

/// Writes an imported redemption code: unchanged, updated, or inserted under `keep_id` when it
/// is free.
pub fn upsert_redemption_with_id(
    conn: &mut DbConn,
    code: &ImportedRedemption,
) -> StoreResult<Upserted> {
    upsert(conn, code)
}

// ---------------------------------------------------------------------------------------------
// Groups

/// A user group to import, matched by its symbol.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedGroup {
    pub symbol: String,
    pub name: String,
    pub ratio: f64,
    pub public: bool,
    pub api_rate: i32,
    pub promotion: bool,
    pub min_topup: i64,
    pub max_topup: i64,
    pub enabled: bool,
    /// The source knows the ratio only (one-api's `GroupRatio` setting): an existing group is
    /// compared and updated on its ratio alone; a new one is inserted with every field.
    pub ratio_only: bool,
}

impl Upsert for ImportedGroup {
    type Current = UserGroupRow;

    fn find(&self, conn: &mut DbConn) -> StoreResult<Option<UserGroupRow>> {
        optional(crate::user_groups::find_by_symbol(conn, &self.symbol))
    }

    fn id(cur: &UserGroupRow) -> i64 {
        cur.id
    }

    fn same(&self, cur: &UserGroupRow) -> bool {
        cur.ratio == self.ratio
            && (self.ratio_only
                || (cur.name == self.name
                    && cur.public == self.public
                    && cur.api_rate == self.api_rate
                    && cur.promotion == self.promotion
                    && cur.min_topup == self.min_topup
                    && cur.max_topup == self.max_topup
                    && cur.enabled == self.enabled))
    }

    fn update(&self, conn: &mut DbConn, cur: &UserGroupRow) -> StoreResult<()> {
        let changes = if self.ratio_only {
            UserGroupChangeset {
                ratio: Some(self.ratio),
                ..Default::default()
            }
        } else {
            UserGroupChangeset {
                name: Some(self.name.clone()),
                ratio: Some(self.ratio),
                public: Some(self.public),
                api_rate: Some(self.api_rate),
                promotion: Some(self.promotion),
                min_topup: Some(self.min_topup),
                max_topup: Some(self.max_topup),
                enabled: Some(self.enabled),
                updated_at: None,
            }
        };
        crate::user_groups::update(conn, cur.id, &changes)
    }

    fn insert(&self, conn: &mut DbConn) -> StoreResult<i64> {
        let t = now();
        crate::user_groups::insert(
            conn,
            &NewUserGroup {
                symbol: &self.symbol,
                name: &self.name,
                ratio: self.ratio,
                public: self.public,
                api_rate: self.api_rate,
                promotion: self.promotion,
                min_topup: self.min_topup,
                max_topup: self.max_topup,
                enabled: self.enabled,
                created_at: t,
                updated_at: t,
            },
        )
    }
}

/// Writes an imported user group: unchanged, updated or inserted (under a fresh id: groups are
/// referred to by symbol).
pub fn upsert_group(conn: &mut DbConn, group: &ImportedGroup) -> StoreResult<Upserted> {
    upsert(conn, group)
}

// ---------------------------------------------------------------------------------------------
// Prices

struct PriceUpsert<'a>(&'a Price);

impl Upsert for PriceUpsert<'_> {
    type Current = crate::prices::PriceRow;

    fn find(&self, conn: &mut DbConn) -> StoreResult<Option<Self::Current>> {
        optional(crate::prices::find(conn, &self.0.model))
    }

    fn id(cur: &Self::Current) -> i64 {
        cur.id
    }

    fn same(&self, cur: &Self::Current) -> bool {
        let f = crate::prices::PriceFields::from_price(self.0);
        (&cur.price_type, cur.channel_type, cur.input, cur.output)
            == (&f.price_type, f.channel_type, f.input, f.output)
            && (&cur.extra_ratios, cur.locked) == (&f.extra_ratios, f.locked)
    }

    fn update(&self, conn: &mut DbConn, cur: &Self::Current) -> StoreResult<()> {
        let mut f = crate::prices::PriceFields::from_price(self.0);
        f.max_output_tokens = cur.max_output_tokens;
        crate::prices::update(conn, &self.0.model, &f)
    }

    fn insert(&self, conn: &mut DbConn) -> StoreResult<i64> {
        let f = crate::prices::PriceFields::from_price(self.0);
        insert_returning_id!(
            conn,
            prices::table,
            (&f, prices::created_at.eq(now())),
            prices::id
        )
    }
}

/// Writes an imported price (validated by the caller): unchanged when the model's price has
/// this type, owner, ratios and lock; updated when not (its maximum output is kept); inserted
/// when the model has none.
pub fn upsert_price(conn: &mut DbConn, price: &Price) -> StoreResult<Upserted> {
    upsert(conn, &PriceUpsert(price))
}

// ---------------------------------------------------------------------------------------------
// Logs

/// A log row to import. The request id (which the importer derives from the source and the
/// source row's id) makes it idempotent.
#[derive(Debug, Clone, PartialEq, Insertable)]
#[diesel(table_name = logs)]
pub struct ImportedLog {
    pub request_id: String,
    pub created_at: i64,
    pub log_type: i32,
    pub user_id: i64,
    pub username: String,
    pub token_name: String,
    pub channel_id: i64,
    pub model_name: String,
    pub quota: i64,
    pub prompt_tokens: i32,
    pub completion_tokens: i32,
    pub use_time_ms: i32,
    pub is_stream: bool,
    pub source_ip: String,
    pub content: String,
    pub metadata: String,
}

/// Inserts an imported log row unless a row with its request id exists (then: unchanged; a
/// log row is never updated).
pub fn insert_log_once(conn: &mut DbConn, log: &ImportedLog) -> StoreResult<Upserted> {
    let existing: Option<i64> = logs::table
        .filter(logs::request_id.eq(&log.request_id))
        .select(logs::id)
        .first(conn)
        .optional()?;
    Ok(match existing {
        Some(id) => Upserted {
            id,
            outcome: Outcome::Unchanged,
        },
        None => Upserted {
            id: insert_returning_id!(conn, logs::table, log, logs::id)?,
            outcome: Outcome::Inserted,
        },
    })
}

// ---------------------------------------------------------------------------------------------
// Id sequences

/// The tables whose rows the import writes under their source ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdTable {
    Users,
    Tokens,
    Channels,
    Redemptions,
    Logs,
}

impl IdTable {
    pub fn name(self) -> &'static str {
        match self {
            IdTable::Users => "users",
            IdTable::Tokens => "tokens",
            IdTable::Channels => "channels",
            IdTable::Redemptions => "redemptions",
            IdTable::Logs => "logs",
        }
    }
}

/// After rows were written under ids of their own, moves PostgreSQL's id sequence of `table`
/// past the largest id, so the next row created the ordinary way does not collide. SQLite and
/// MySQL move on by themselves (nothing is done there). `setval` is not rolled back with a
/// transaction: a dry run must not call this.
pub fn move_id_sequence_past_max(conn: &mut DbConn, table: IdTable) -> StoreResult<()> {
    if conn.backend() == Backend::Postgres {
        let table = table.name();
        diesel::sql_query(format!(
            "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
             COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
        ))
        .execute(conn)?;
    }
    Ok(())
}
