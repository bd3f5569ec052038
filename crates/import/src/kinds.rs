//! One function per kind of row: read from the source, map, match with the target by a natural
//! key, then insert, update or leave alone.

use crate::report::{KindReport, Report};
use crate::source::{Row, Source};
use crate::{ImportError, Options, Origin, Sealer};
use diesel::prelude::*;
use serde_json::{Map, Value};
use std::collections::HashMap;
use switchboard_api::crypto::{key_digest, key_hint};
use switchboard_domain::price::{validate_price, ExtraRatios, Price, PriceType};
use switchboard_store::schema::{channels, logs, redemptions, tokens, users};
use switchboard_store::{insert_returning_id, now, Backend, DbConn, StoreError};

/// The error of one row: reported with the row's id, the others go on.
struct RowErr(String);

impl From<diesel::result::Error> for RowErr {
    fn from(e: diesel::result::Error) -> Self {
        RowErr(format!("database refused it: {e}"))
    }
}

impl From<StoreError> for RowErr {
    fn from(e: StoreError) -> Self {
        RowErr(format!("database refused it: {e}"))
    }
}

impl From<String> for RowErr {
    fn from(e: String) -> Self {
        RowErr(e)
    }
}

enum Outcome {
    Inserted,
    Updated,
    Unchanged,
}

/// Runs one row's writes in a savepoint and counts the outcome; a failure rolls the row back
/// and is reported.
fn row(
    c: &mut DbConn,
    rep: &mut KindReport,
    id: &str,
    f: impl FnOnce(&mut DbConn) -> Result<Outcome, RowErr>,
) -> bool {
    match c.transaction::<Outcome, RowErr, _>(f) {
        Ok(Outcome::Inserted) => rep.inserted += 1,
        Ok(Outcome::Updated) => rep.updated += 1,
        Ok(Outcome::Unchanged) => rep.unchanged += 1,
        Err(RowErr(reason)) => {
            rep.skip(id, reason);
            return false;
        }
    }
    true
}

/// Runs one kind in its own transaction; a failure of the kind as a whole is recorded in its
/// report (nothing of it written) and the import goes on.
fn kind(
    target: &mut DbConn,
    name: &'static str,
    f: impl FnOnce(&mut DbConn, &mut KindReport) -> Result<(), ImportError>,
) -> KindReport {
    let mut rep = KindReport::new(name);
    let r = switchboard_store::transaction(target, |c| {
        let mut inner = KindReport::new(name);
        f(c, &mut inner)?;
        Ok::<_, ImportError>(inner)
    });
    match r {
        Ok(done) => done,
        Err(e) => {
            rep.failed = Some(e.to_string());
            rep
        }
    }
}

/// After rows were written with their source ids, PostgreSQL's sequence must move past them.
/// Not in a dry run: `setval` is not rolled back with the transaction.
fn fix_sequence(c: &mut DbConn, table: &str, dry_run: bool) -> Result<(), ImportError> {
    if c.backend() == Backend::Postgres && !dry_run {
        diesel::sql_query(format!(
            "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
             COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
        ))
        .execute(c)?;
    }
    Ok(())
}

/// What the kinds share: the source settings and the map of source user ids to target ids.
struct Ctx<'a> {
    opts: &'a Options,
    sealer: &'a Sealer,
    src_options: Vec<(String, String)>,
    users: HashMap<i64, i64>,
    /// Source channel ids to target ids (they differ when the source id was taken).
    channels: HashMap<i64, i64>,
}

impl Ctx<'_> {
    fn src_option(&self, key: &str) -> Option<&str> {
        self.src_options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn quota_per_unit(&self) -> f64 {
        self.src_option("QuotaPerUnit")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v > 0.0)
            .unwrap_or(500_000.0)
    }
}

pub fn import_all(
    opts: &Options,
    src: &mut Source,
    target: &mut DbConn,
    sealer: &Sealer,
) -> Result<Report, ImportError> {
    // A source read that fails fails its kind (reported, nothing of it written); the other kinds
    // go on. Every read of a kind happens before its transaction opens on the target (logs:
    // page by page inside it).
    let options_src = src.read("options", &["key", "value"], None);
    let mut ctx = Ctx {
        opts,
        sealer,
        src_options: options_src
            .as_ref()
            .map(|rows| {
                rows.iter()
                    .map(|r| (r.str("key"), r.str("value")))
                    .collect()
            })
            .unwrap_or_default(),
        users: HashMap::new(),
        channels: HashMap::new(),
    };
    let mut kinds = Vec::new();
    kinds.push(kind(target, "options", |c, rep| {
        options_src?;
        options(&ctx, c, rep)
    }));
    let groups_src = optional_table(src, "user_groups", GROUP_COLS);
    kinds.push(kind(target, "groups", |c, rep| {
        groups(&ctx, groups_src?.as_deref(), c, rep)
    }));
    let users_src = src.read("users", USER_COLS, None);
    let mut map = HashMap::new();
    kinds.push(kind(target, "users", |c, rep| {
        users_kind(opts.dry_run, &users_src?, c, rep, &mut map)
    }));
    ctx.users = map;
    let tokens_src = src.read("tokens", TOKEN_COLS, None);
    kinds.push(kind(target, "tokens", |c, rep| {
        tokens_kind(&ctx, &tokens_src?, c, rep)
    }));
    let channels_src = src.read("channels", CHANNEL_COLS, None);
    let mut channel_map = HashMap::new();
    kinds.push(kind(target, "channels", |c, rep| {
        channels_kind(&ctx, &channels_src?, c, rep, &mut channel_map)
    }));
    ctx.channels = channel_map;
    let codes_src = src.read("redemptions", CODE_COLS, None);
    kinds.push(kind(target, "redemptions", |c, rep| {
        codes_kind(&ctx, &codes_src?, c, rep)
    }));
    let prices_src = optional_table(src, "prices", PRICE_COLS);
    kinds.push(kind(target, "prices", |c, rep| {
        prices_kind(&ctx, prices_src?.as_deref(), c, rep)
    }));
    if opts.with_logs {
        kinds.push(logs_kind(&ctx, src, target));
    }
    Ok(Report {
        from: opts.from,
        dry_run: opts.dry_run,
        kinds,
    })
}

/// The rows of a table only one of the sources has (one-hub's `user_groups` and `prices`), or
/// `None` when the source has no such table.
fn optional_table(
    src: &mut Source,
    table: &'static str,
    cols: &[&'static str],
) -> Result<Option<Vec<Row>>, ImportError> {
    if src.has_table(table)? {
        Ok(Some(src.read(table, cols, None)?))
    } else {
        Ok(None)
    }
}

// ---------------------------------------------------------------------------------------------
// Settings

/// one-api setting names whose Switchboard name differs.
const OPTION_RENAMES: &[(&str, &str)] = &[
    ("OidcEnabled", "OIDCAuthEnabled"),
    ("OidcClientId", "OIDCClientId"),
    ("OidcClientSecret", "OIDCClientSecret"),
];

/// Settings that the prices and groups kinds convert.
const CONVERTED_OPTIONS: &[&str] = &["ModelRatio", "CompletionRatio", "GroupRatio"];

fn options(ctx: &Ctx<'_>, c: &mut DbConn, rep: &mut KindReport) -> Result<(), ImportError> {
    let existing: HashMap<String, String> =
        switchboard_store::options::all(c)?.into_iter().collect();
    for (src_key, value) in &ctx.src_options {
        if CONVERTED_OPTIONS.contains(&src_key.as_str()) {
            continue;
        }
        let key = OPTION_RENAMES
            .iter()
            .find(|(from, _)| from == src_key)
            .map(|(_, to)| *to)
            .unwrap_or(src_key.as_str());
        let Some(def) = switchboard_domain::options::find(key) else {
            rep.skip(src_key, "not a Switchboard setting");
            continue;
        };
        let canonical =
            match switchboard_domain::options::normalize(key, &Value::String(value.clone())) {
                Ok(v) => v,
                Err(e) => {
                    rep.skip(src_key, format!("invalid value: {e}"));
                    continue;
                }
            };
        let current = existing.get(key).map(|stored| {
            if def.secret {
                ctx.sealer.secret_box.open(stored).unwrap_or_default()
            } else {
                stored.clone()
            }
        });
        // A setting the target does not hold yet equals its default when the value is the
        // default: nothing to write.
        let same = match &current {
            Some(cur) => *cur == canonical,
            None => canonical == def.default,
        };
        row(c, rep, src_key, |c| {
            if same {
                return Ok(Outcome::Unchanged);
            }
            let stored = if def.secret && !canonical.is_empty() {
                ctx.sealer.secret_box.seal(&canonical)
            } else {
                canonical.clone()
            };
            switchboard_store::options::set(c, key, &stored)?;
            Ok(if current.is_some() {
                Outcome::Updated
            } else {
                Outcome::Inserted
            })
        });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Groups

const GROUP_COLS: &[&str] = &[
    "id",
    "symbol",
    "name",
    "ratio",
    "api_rate",
    "public",
    "promotion",
    "min",
    "max",
    "enable",
    "deleted_at",
];

struct GroupData {
    symbol: String,
    name: String,
    ratio: f64,
    public: bool,
    api_rate: i32,
    promotion: bool,
    min_topup: i64,
    max_topup: i64,
    enabled: bool,
}

fn groups(
    ctx: &Ctx<'_>,
    table: Option<&[Row]>,
    c: &mut DbConn,
    rep: &mut KindReport,
) -> Result<(), ImportError> {
    let mut wanted: Vec<(String, GroupData)> = Vec::new();
    match table {
        Some(rows) => {
            let qpu = ctx.quota_per_unit();
            for r in rows {
                if r.soft_deleted() {
                    rep.skip(r.id(), "soft-deleted (deleted_at set)");
                    continue;
                }
                let symbol = r.str("symbol").trim().to_owned();
                if symbol.is_empty() {
                    rep.skip(r.id(), "empty symbol");
                    continue;
                }
                let name = match r.str("name").trim() {
                    "" => symbol.clone(),
                    n => n.to_owned(),
                };
                wanted.push((
                    r.id(),
                    GroupData {
                        symbol,
                        name,
                        ratio: r.float("ratio", 1.0),
                        public: r.bool("public", false),
                        api_rate: r.int("api_rate", 0).clamp(0, i32::MAX as i64) as i32,
                        promotion: r.bool("promotion", false),
                        // one-hub's promotion range is money (top-up amount); Switchboard's is
                        // quota units.
                        min_topup: (r.float("min", 0.0) * qpu).round() as i64,
                        max_topup: (r.float("max", 0.0) * qpu).round() as i64,
                        enabled: r.bool("enable", true),
                    },
                ));
            }
            if !rows.is_empty() {
                rep.notes.push(format!(
                    "promotion ranges (min/max) converted from money to quota at {qpu} quota per unit"
                ));
            }
        }
        None => {
            let Some(text) = ctx.src_option("GroupRatio") else {
                return Ok(());
            };
            let map: Map<String, Value> = match serde_json::from_str(text) {
                Ok(m) => m,
                Err(e) => {
                    rep.skip("GroupRatio", format!("not a JSON object: {e}"));
                    return Ok(());
                }
            };
            for (symbol, ratio) in map {
                let Some(ratio) = ratio.as_f64().filter(|r| *r >= 0.0) else {
                    rep.skip(
                        format!("GroupRatio[{symbol}]"),
                        "ratio is not a non-negative number",
                    );
                    continue;
                };
                wanted.push((
                    format!("GroupRatio[{symbol}]"),
                    GroupData {
                        name: symbol.clone(),
                        public: symbol == "default",
                        symbol,
                        ratio,
                        api_rate: 0,
                        promotion: false,
                        min_topup: 0,
                        max_topup: 0,
                        enabled: true,
                    },
                ));
            }
            rep.notes.push(
                "one-api groups come from the GroupRatio setting: a new group is named after its \
                 symbol, public only for \"default\"; an existing group gets the ratio only"
                    .into(),
            );
        }
    }
    let from_table = table.is_some();
    for (id, g) in wanted {
        row(
            c,
            rep,
            &id,
            |c| match switchboard_store::user_groups::find_by_symbol(c, &g.symbol) {
                Ok(cur) => {
                    let same = if from_table {
                        cur.name == g.name
                            && cur.ratio == g.ratio
                            && cur.public == g.public
                            && cur.api_rate == g.api_rate
                            && cur.promotion == g.promotion
                            && cur.min_topup == g.min_topup
                            && cur.max_topup == g.max_topup
                            && cur.enabled == g.enabled
                    } else {
                        cur.ratio == g.ratio
                    };
                    if same {
                        return Ok(Outcome::Unchanged);
                    }
                    let changes = if from_table {
                        switchboard_store::user_groups::UserGroupChangeset {
                            name: Some(g.name.clone()),
                            ratio: Some(g.ratio),
                            public: Some(g.public),
                            api_rate: Some(g.api_rate),
                            promotion: Some(g.promotion),
                            min_topup: Some(g.min_topup),
                            max_topup: Some(g.max_topup),
                            enabled: Some(g.enabled),
                            updated_at: None,
                        }
                    } else {
                        switchboard_store::user_groups::UserGroupChangeset {
                            ratio: Some(g.ratio),
                            ..Default::default()
                        }
                    };
                    switchboard_store::user_groups::update(c, cur.id, &changes)?;
                    Ok(Outcome::Updated)
                }
                Err(e) if e.is_not_found() => {
                    let t = now();
                    switchboard_store::user_groups::insert(
                        c,
                        &switchboard_store::user_groups::NewUserGroup {
                            symbol: &g.symbol,
                            name: &g.name,
                            ratio: g.ratio,
                            public: g.public,
                            api_rate: g.api_rate,
                            promotion: g.promotion,
                            min_topup: g.min_topup,
                            max_topup: g.max_topup,
                            enabled: g.enabled,
                            created_at: t,
                            updated_at: t,
                        },
                    )?;
                    Ok(Outcome::Inserted)
                }
                Err(e) => Err(e.into()),
            },
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Users

const USER_COLS: &[&str] = &[
    "id",
    "username",
    "password",
    "display_name",
    "role",
    "status",
    "email",
    "github_id",
    "wechat_id",
    "lark_id",
    "oidc_id",
    "quota",
    "used_quota",
    "request_count",
    "group",
    "aff_code",
    "inviter_id",
    "avatar_url",
    "telegram_id",
    "aff_count",
    "aff_quota",
    "aff_history",
    "last_login_time",
    "created_time",
    "deleted_at",
];

#[derive(Debug, Clone, PartialEq)]
struct UserData {
    username: String,
    password: String,
    display_name: String,
    role: i32,
    status: i32,
    email: String,
    avatar_url: String,
    github_id: String,
    oidc_id: String,
    lark_id: String,
    wechat_id: String,
    telegram_id: i64,
    quota: i64,
    used_quota: i64,
    request_count: i64,
    group_name: String,
    aff_code: Option<String>,
    aff_count: i32,
    aff_quota: i64,
    aff_history_quota: i64,
    inviter_id: i64,
    created_at: i64,
    last_login_at: i64,
}

impl UserData {
    fn of(r: &switchboard_store::users::UserRow) -> UserData {
        UserData {
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

macro_rules! user_values {
    ($d:expr) => {
        (
            users::username.eq(&$d.username),
            users::password.eq(&$d.password),
            users::display_name.eq(&$d.display_name),
            users::role.eq($d.role),
            users::status.eq($d.status),
            users::email.eq(&$d.email),
            users::avatar_url.eq(&$d.avatar_url),
            users::github_id.eq(&$d.github_id),
            users::oidc_id.eq(&$d.oidc_id),
            users::lark_id.eq(&$d.lark_id),
            users::wechat_id.eq(&$d.wechat_id),
            users::telegram_id.eq($d.telegram_id),
            users::quota.eq($d.quota),
            users::used_quota.eq($d.used_quota),
            users::request_count.eq($d.request_count),
            users::group_name.eq(&$d.group_name),
            users::aff_code.eq($d.aff_code.as_deref()),
            users::aff_count.eq($d.aff_count),
            users::aff_quota.eq($d.aff_quota),
            users::aff_history_quota.eq($d.aff_history_quota),
            users::inviter_id.eq($d.inviter_id),
            users::created_at.eq($d.created_at),
            users::last_login_at.eq($d.last_login_at),
            users::updated_at.eq(now()),
        )
    };
}

fn is_bcrypt(hash: &str) -> bool {
    hash.len() == 60 && ["$2a$", "$2b$", "$2y$"].iter().any(|p| hash.starts_with(p))
}

fn clamp_i32(v: i64) -> i32 {
    v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

fn users_kind(
    dry_run: bool,
    rows: &[Row],
    c: &mut DbConn,
    rep: &mut KindReport,
    map: &mut HashMap<i64, i64>,
) -> Result<(), ImportError> {
    let mut unusable_passwords = 0;
    // Target users already matched in this run (two source names equal ignoring case would
    // otherwise both land on one account).
    let mut claimed = std::collections::HashSet::new();
    for r in rows {
        let id = r.id();
        if r.soft_deleted() {
            rep.skip(&id, "soft-deleted (deleted_at set)");
            continue;
        }
        let src_id = match r.int_checked("id") {
            Ok(Some(v)) => v,
            _ => {
                rep.skip(&id, "no numeric id");
                continue;
            }
        };
        let username = r.str("username").trim().to_owned();
        if username.is_empty() {
            rep.skip(&id, "empty username");
            continue;
        }
        let mut password = r.str("password");
        if !is_bcrypt(&password) {
            unusable_passwords += 1;
            password = String::new();
        }
        let group = match r.str("group").trim() {
            "" => "default".to_owned(),
            g => g.to_owned(),
        };
        let aff = r.str("aff_code").trim().to_owned();
        let inviter = r.int("inviter_id", 0);
        let d = UserData {
            display_name: r.str("display_name"),
            role: clamp_i32(r.int("role", 1)),
            status: clamp_i32(r.int("status", 1)),
            email: r.str("email"),
            avatar_url: r.str("avatar_url"),
            github_id: r.str("github_id"),
            oidc_id: r.str("oidc_id"),
            lark_id: r.str("lark_id"),
            wechat_id: r.str("wechat_id"),
            telegram_id: r.int("telegram_id", 0),
            quota: r.int("quota", 0),
            used_quota: r.int("used_quota", 0),
            request_count: r.int("request_count", 0),
            group_name: group,
            aff_code: (!aff.is_empty()).then_some(aff),
            aff_count: clamp_i32(r.int("aff_count", 0)),
            aff_quota: r.int("aff_quota", 0),
            aff_history_quota: r.int("aff_history", 0),
            inviter_id: map.get(&inviter).copied().unwrap_or(0),
            created_at: r.int("created_time", 0),
            last_login_at: r.int("last_login_time", 0),
            password,
            username,
        };
        let mut target_id = None;
        let ok = row(c, rep, &id, |c| {
            match switchboard_store::users::find_by_username(c, &d.username) {
                Ok(cur) if claimed.contains(&cur.id) => Err(RowErr(format!(
                    "username {:?} equals, ignoring case, that of another imported user \
                     (Switchboard user {}); usernames are unique ignoring case",
                    d.username, cur.id
                ))),
                Ok(cur) => {
                    target_id = Some(cur.id);
                    let mut want = d.clone();
                    // The stored name keeps its case (it matched case-insensitively).
                    want.username = cur.username.clone();
                    if UserData::of(&cur) == want {
                        return Ok(Outcome::Unchanged);
                    }
                    diesel::update(users::table.find(cur.id))
                        .set(user_values!(want))
                        .execute(c)?;
                    Ok(Outcome::Updated)
                }
                Err(e) if e.is_not_found() => {
                    let free: i64 = users::table
                        .filter(users::id.eq(src_id))
                        .count()
                        .get_result(c)?;
                    let new_id = if free == 0 {
                        diesel::insert_into(users::table)
                            .values((users::id.eq(src_id), user_values!(d)))
                            .execute(c)?;
                        src_id
                    } else {
                        insert_returning_id!(c, users::table, user_values!(d), users::id)?
                    };
                    target_id = Some(new_id);
                    Ok(Outcome::Inserted)
                }
                Err(e) => Err(e.into()),
            }
        });
        if let (true, Some(t)) = (ok, target_id) {
            map.insert(src_id, t);
            claimed.insert(t);
        }
    }
    if unusable_passwords > 0 {
        rep.notes.push(format!(
            "{unusable_passwords} user(s) had no bcrypt password hash: imported without a \
             password (they sign in through their bound OAuth identity, or an administrator \
             sets one)"
        ));
    }
    rep.notes.push(
        "management access tokens (users.access_token) are not imported: users generate new ones"
            .into(),
    );
    let mut groups: Vec<&str> = rows
        .iter()
        .filter(|r| !r.soft_deleted())
        .map(|r| r.opt("group").map(str::trim).filter(|g| !g.is_empty()))
        .map(|g| g.unwrap_or("default"))
        .collect();
    groups.sort_unstable();
    groups.dedup();
    let mut missing = Vec::new();
    for g in groups {
        if !switchboard_store::user_groups::exists_enabled(c, g)? {
            missing.push(g);
        }
    }
    if !missing.is_empty() {
        rep.notes.push(format!(
            "users are in groups that are not enabled groups in Switchboard: {} (create or \
             enable them in the console)",
            missing.join(", ")
        ));
    }
    fix_sequence(c, "users", dry_run)
}

// ---------------------------------------------------------------------------------------------
// API keys

const TOKEN_COLS: &[&str] = &[
    "id",
    "user_id",
    "key",
    "status",
    "name",
    "created_time",
    "accessed_time",
    "expired_time",
    "remain_quota",
    "unlimited_quota",
    "used_quota",
    "models",
    "subnet",
    "group",
    "setting",
    "deleted_at",
];

#[derive(Debug, Clone, PartialEq)]
struct TokenData {
    user_id: i64,
    name: String,
    status: i32,
    created_at: i64,
    accessed_at: i64,
    expired_at: i64,
    remain_quota: i64,
    unlimited_quota: bool,
    used_quota: i64,
    group_name: String,
    models: String,
    subnet: String,
    heartbeat_enabled: bool,
    heartbeat_timeout: i32,
}

impl TokenData {
    fn of(r: &switchboard_store::tokens::TokenRow) -> TokenData {
        TokenData {
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

macro_rules! token_values {
    ($d:expr) => {
        (
            tokens::user_id.eq($d.user_id),
            tokens::name.eq(&$d.name),
            tokens::status.eq($d.status),
            tokens::created_at.eq($d.created_at),
            tokens::accessed_at.eq($d.accessed_at),
            tokens::expired_at.eq($d.expired_at),
            tokens::remain_quota.eq($d.remain_quota),
            tokens::unlimited_quota.eq($d.unlimited_quota),
            tokens::used_quota.eq($d.used_quota),
            tokens::group_name.eq(&$d.group_name),
            tokens::models.eq(&$d.models),
            tokens::subnet.eq(&$d.subnet),
            tokens::heartbeat_enabled.eq($d.heartbeat_enabled),
            tokens::heartbeat_timeout.eq($d.heartbeat_timeout),
            tokens::updated_at.eq(now()),
        )
    };
}

fn comma_list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let mut out: Vec<&str> = Vec::new();
    for i in items.map(str::trim).filter(|s| !s.is_empty()) {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out.join(",")
}

/// one-hub keeps a key's model and IP limits and heartbeat in a JSON `setting`.
fn one_hub_setting(text: &str) -> (Option<String>, Option<String>, Option<(bool, i32)>) {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return (None, None, None);
    };
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let limits = v.get("limits");
    let models = limits
        .and_then(|l| l.get("limit_model_setting"))
        .filter(|m| m.get("enabled").and_then(Value::as_bool) == Some(true))
        .map(|m| {
            let list = strings(m.get("models"));
            comma_list(list.iter().map(String::as_str))
        });
    let ips = limits
        .and_then(|l| l.get("limits_ip_setting"))
        .filter(|m| m.get("enabled").and_then(Value::as_bool) == Some(true))
        .map(|m| {
            let list = strings(m.get("whitelist"));
            comma_list(list.iter().map(String::as_str))
        });
    let heartbeat = v.get("heartbeat").map(|h| {
        (
            h.get("enabled").and_then(Value::as_bool).unwrap_or(false),
            h.get("timeout_seconds")
                .and_then(Value::as_i64)
                .map(clamp_i32)
                .filter(|t| *t > 0)
                .unwrap_or(30),
        )
    });
    (models, ips, heartbeat)
}

fn tokens_kind(
    ctx: &Ctx<'_>,
    rows: &[Row],
    c: &mut DbConn,
    rep: &mut KindReport,
) -> Result<(), ImportError> {
    for r in rows {
        let id = r.id();
        if r.soft_deleted() {
            rep.skip(&id, "soft-deleted (deleted_at set)");
            continue;
        }
        let owner = r.int("user_id", 0);
        let Some(&user_id) = ctx.users.get(&owner) else {
            rep.skip(&id, format!("its user {owner} was not imported"));
            continue;
        };
        let key = r.str("key").trim().to_owned();
        if key.is_empty() {
            rep.skip(&id, "empty key");
            continue;
        }
        let full = if key.starts_with(switchboard_domain::token::KEY_PREFIX) {
            key
        } else {
            format!("{}{key}", switchboard_domain::token::KEY_PREFIX)
        };
        let status = clamp_i32(r.int("status", 1));
        if !(1..=4).contains(&status) {
            rep.skip(&id, format!("unknown status {status}"));
            continue;
        }
        let (mut models, mut subnet, mut heartbeat) = (
            comma_list(r.str("models").split(',')),
            r.str("subnet").trim().to_owned(),
            (false, 30),
        );
        if let Some(setting) = r.opt("setting") {
            let (m, ips, hb) = one_hub_setting(setting);
            models = m.unwrap_or(models);
            subnet = ips.unwrap_or(subnet);
            heartbeat = hb.unwrap_or(heartbeat);
        }
        if !subnet.is_empty() {
            match switchboard_domain::token::IpAllowList::parse(&subnet) {
                Ok(list) => subnet = list.to_string(),
                Err(e) => {
                    rep.skip(&id, format!("IP allow-list {subnet:?} is invalid: {e}"));
                    continue;
                }
            }
        }
        let name = match r.str("name").trim() {
            "" => "imported".to_owned(),
            n => n.to_owned(),
        };
        let d = TokenData {
            user_id,
            name,
            status,
            created_at: r.int("created_time", 0),
            accessed_at: r.int("accessed_time", 0),
            expired_at: r.int("expired_time", -1),
            remain_quota: r.int("remain_quota", 0),
            unlimited_quota: r.bool("unlimited_quota", false),
            used_quota: r.int("used_quota", 0),
            group_name: r.str("group").trim().to_owned(),
            models,
            subnet,
            heartbeat_enabled: heartbeat.0,
            heartbeat_timeout: heartbeat.1,
        };
        let src_id = r.int("id", 0);
        let digest = key_digest(&full);
        row(
            c,
            rep,
            &id,
            |c| match switchboard_store::tokens::find_by_key_hash(c, &digest) {
                Ok(cur) => {
                    if TokenData::of(&cur) == d {
                        return Ok(Outcome::Unchanged);
                    }
                    diesel::update(tokens::table.find(cur.id))
                        .set(token_values!(d))
                        .execute(c)?;
                    Ok(Outcome::Updated)
                }
                Err(e) if e.is_not_found() => {
                    let sealed = ctx.sealer.key_box.seal(&full);
                    let hint = key_hint(&full);
                    let secret = (
                        tokens::key_hash.eq(&digest),
                        tokens::key_ciphertext.eq(&sealed),
                        tokens::key_hint.eq(&hint),
                    );
                    let taken: i64 = tokens::table
                        .filter(tokens::id.eq(src_id))
                        .count()
                        .get_result(c)?;
                    if taken == 0 && src_id > 0 {
                        diesel::insert_into(tokens::table)
                            .values((tokens::id.eq(src_id), secret, token_values!(d)))
                            .execute(c)?;
                    } else {
                        insert_returning_id!(
                            c,
                            tokens::table,
                            (secret, token_values!(d)),
                            tokens::id
                        )?;
                    }
                    Ok(Outcome::Inserted)
                }
                Err(e) => Err(e.into()),
            },
        );
    }
    fix_sequence(c, "tokens", ctx.opts.dry_run)
}

// ---------------------------------------------------------------------------------------------
// Channels

const CHANNEL_COLS: &[&str] = &[
    "id",
    "type",
    "key",
    "status",
    "name",
    "weight",
    "created_time",
    "test_time",
    "response_time",
    "base_url",
    "other",
    "balance",
    "balance_updated_time",
    "models",
    "group",
    "used_quota",
    "model_mapping",
    "priority",
    "config",
    "tag",
    "model_headers",
    "custom_parameter",
    "proxy",
    "test_model",
    "only_chat",
    "pre_cost",
    "disabled_stream",
    "deleted_at",
];

/// A one-api channel type (its `channeltype` numbering) in Switchboard's numbering (one-hub's),
/// for the types Switchboard relays.
fn one_api_channel_type(t: i64) -> Option<i32> {
    Some(match t {
        1 => 1,   // OpenAI
        3 => 3,   // Azure
        8 => 8,   // Custom
        14 => 14, // Anthropic
        15 => 15, // Baidu
        16 => 16, // Zhipu
        17 => 17, // Ali
        20 => 20, // OpenRouter
        24 => 25, // Gemini
        25 => 29, // Moonshot
        28 => 30, // Mistral
        29 => 31, // Groq
        30 => 39, // Ollama
        33 => 32, // AWS Claude -> AWS Bedrock
        35 => 36, // Cohere
        36 => 28, // DeepSeek
        42 => 42, // Vertex AI
        44 => 45, // SiliconFlow
        45 => 49, // xAI
        50 => 8,  // OpenAI-compatible -> Custom
        _ => return None,
    })
}

/// A one-hub channel type in Switchboard's numbering.
fn one_hub_channel_type(t: i64) -> Option<i32> {
    let t = if t == 56 { 49 } else { t }; // xAI
    let t = i32::try_from(t).ok()?;
    switchboard_domain::channel::channel_type(t).map(|ct| ct.id)
}

struct ChannelData {
    fields: switchboard_store::channels::ChannelFields,
    created_at: i64,
    used_quota: i64,
    balance: i64,
    balance_updated_at: i64,
    response_time: i32,
    test_time: i64,
}

fn channel_data(ctx: &Ctx<'_>, r: &Row) -> Result<ChannelData, String> {
    let src_type = r.int("type", 0);
    let channel_type = match ctx.opts.from {
        Origin::OneApi => one_api_channel_type(src_type),
        Origin::OneHub => one_hub_channel_type(src_type),
    }
    .ok_or_else(|| format!("channel type {src_type} has no Switchboard equivalent"))?;
    let mut config = Map::new();
    if let Some(Value::Object(m)) = r
        .opt("config")
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
    {
        for k in ["api_version", "region"] {
            if let Some(Value::String(s)) = m.get(k).filter(|v| v.as_str() != Some("")) {
                config.insert(k.to_owned(), Value::String(s.clone()));
            }
        }
    }
    let other = r.str("other").trim().to_owned();
    if channel_type == switchboard_domain::channel::TYPE_AZURE
        && !other.is_empty()
        && !config.contains_key("api_version")
    {
        config.insert("api_version".into(), Value::String(other));
    }
    if r.bool("only_chat", false) {
        config.insert("only_chat".into(), Value::Bool(true));
    }
    if let Some(Value::Object(p)) = r
        .opt("custom_parameter")
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
    {
        if !p.is_empty() {
            config.insert("custom_parameter".into(), Value::Object(p));
        }
    }
    let custom_headers = match r
        .opt("model_headers")
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
    {
        Some(Value::Object(h)) if !h.is_empty() => Value::Object(h).to_string(),
        _ => String::new(),
    };
    let disabled_stream = match r
        .opt("disabled_stream")
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
    {
        Some(Value::Array(a)) if !a.is_empty() => Value::Array(a).to_string(),
        _ => String::new(),
    };
    let status = clamp_i32(r.int("status", 1));
    if !(1..=3).contains(&status) {
        return Err(format!("unknown status {status}"));
    }
    let mapping = r.str("model_mapping").trim().to_owned();
    let mapping = if mapping == "{}" || mapping == "null" {
        String::new()
    } else {
        mapping
    };
    let group = comma_list(r.str("group").split(','));
    let fields = switchboard_store::channels::ChannelFields {
        channel_type,
        name: r.str("name").trim().to_owned(),
        key: r.str("key").trim().to_owned(),
        base_url: r.str("base_url").trim().to_owned(),
        group_name: if group.is_empty() {
            "default".into()
        } else {
            group
        },
        models: comma_list(r.str("models").split(',')),
        model_mapping: mapping,
        priority: r.int("priority", 0),
        weight: clamp_i32(r.int("weight", 1).max(0)),
        tag: r.str("tag").trim().to_owned(),
        proxy: r.str("proxy").trim().to_owned(),
        test_model: r.str("test_model").trim().to_owned(),
        status,
        custom_headers,
        config: if config.is_empty() {
            String::new()
        } else {
            Value::Object(config).to_string()
        },
        disabled_stream,
        pre_cost: clamp_i32(r.int("pre_cost", 1)),
        auto_ban: true,
        updated_at: now(),
        destination_by_root: true,
    };
    Ok(ChannelData {
        fields,
        created_at: r.int("created_time", 0),
        used_quota: r.int("used_quota", 0),
        balance: (r.float("balance", 0.0) * 1_000_000.0).round() as i64,
        balance_updated_at: r.int("balance_updated_time", 0),
        response_time: clamp_i32(r.int("response_time", 0)),
        test_time: r.int("test_time", 0),
    })
}

fn same_channel(
    ctx: &Ctx<'_>,
    cur: &switchboard_store::channels::ChannelRow,
    d: &ChannelData,
) -> bool {
    let f = &d.fields;
    cur.channel_type == f.channel_type
        && cur.name == f.name
        && ctx.sealer.secret_box.open(&cur.key).ok().as_deref() == Some(f.key.as_str())
        && cur.base_url == f.base_url
        && cur.group_name == f.group_name
        && cur.models == f.models
        && cur.model_mapping == f.model_mapping
        && cur.priority == f.priority
        && cur.weight == f.weight
        && cur.tag == f.tag
        && cur.proxy == f.proxy
        && cur.test_model == f.test_model
        && cur.status == f.status
        && cur.custom_headers == f.custom_headers
        && cur.config == f.config
        && cur.disabled_stream == f.disabled_stream
        && cur.pre_cost == f.pre_cost
        && cur.auto_ban == f.auto_ban
        && cur.destination_by_root == f.destination_by_root
        && cur.created_at == d.created_at
        && cur.used_quota == d.used_quota
        && cur.balance == d.balance
        && cur.balance_updated_at == d.balance_updated_at
        && cur.response_time == d.response_time
        && cur.test_time == d.test_time
}

fn channels_kind(
    ctx: &Ctx<'_>,
    rows: &[Row],
    c: &mut DbConn,
    rep: &mut KindReport,
    map: &mut HashMap<i64, i64>,
) -> Result<(), ImportError> {
    for r in rows {
        let id = r.id();
        if r.soft_deleted() {
            rep.skip(&id, "soft-deleted (deleted_at set)");
            continue;
        }
        let mut d = match channel_data(ctx, r) {
            Ok(d) => d,
            Err(e) => {
                rep.skip(&id, e);
                continue;
            }
        };
        if d.fields.name.is_empty() {
            rep.skip(&id, "empty name");
            continue;
        }
        let src_id = r.int("id", 0);
        let mut mapped = None;
        let ok = row(c, rep, &id, |c| {
            // Same id and name first; otherwise the first channel of that name and type.
            // A channel another source row already matched in this run is not taken twice.
            let by_id = switchboard_store::channels::find(c, src_id)
                .ok()
                .filter(|cur| cur.name == d.fields.name && !map.values().any(|v| *v == cur.id));
            let cur = match by_id {
                Some(cur) => Some(cur),
                None => channels::table
                    .filter(channels::name.eq(&d.fields.name))
                    .filter(channels::channel_type.eq(d.fields.channel_type))
                    .order(channels::id.asc())
                    .select(switchboard_store::channels::ChannelRow::as_select())
                    .load(c)?
                    .into_iter()
                    .find(|cur| !map.values().any(|v| *v == cur.id)),
            };
            let plain_key = d.fields.key.clone();
            let (target_id, outcome) = match cur {
                Some(cur) if same_channel(ctx, &cur, &d) => {
                    mapped = Some(cur.id);
                    return Ok(Outcome::Unchanged);
                }
                Some(cur) => {
                    d.fields.key = ctx.sealer.secret_box.seal(&plain_key);
                    switchboard_store::channels::update(c, cur.id, &d.fields)?;
                    (cur.id, Outcome::Updated)
                }
                None => {
                    d.fields.key = ctx.sealer.secret_box.seal(&plain_key);
                    let taken: i64 = channels::table
                        .filter(channels::id.eq(src_id))
                        .count()
                        .get_result(c)?;
                    let new_id = if taken == 0 && src_id > 0 {
                        diesel::insert_into(channels::table)
                            .values((
                                channels::id.eq(src_id),
                                &d.fields,
                                channels::created_at.eq(d.created_at),
                            ))
                            .execute(c)?;
                        src_id
                    } else {
                        insert_returning_id!(
                            c,
                            channels::table,
                            (&d.fields, channels::created_at.eq(d.created_at)),
                            channels::id
                        )?
                    };
                    // The store's update rebuilds the abilities (group x model) from the fields.
                    switchboard_store::channels::update(c, new_id, &d.fields)?;
                    (new_id, Outcome::Inserted)
                }
            };
            diesel::update(channels::table.find(target_id))
                .set((
                    channels::created_at.eq(d.created_at),
                    channels::used_quota.eq(d.used_quota),
                    channels::balance.eq(d.balance),
                    channels::balance_updated_at.eq(d.balance_updated_at),
                    channels::response_time.eq(d.response_time),
                    channels::test_time.eq(d.test_time),
                ))
                .execute(c)?;
            mapped = Some(target_id);
            Ok(outcome)
        });
        if let (true, Some(t)) = (ok, mapped) {
            map.insert(src_id, t);
        }
    }
    if ctx.opts.from == Origin::OneApi {
        rep.notes.push(
            "one-api's per-channel system_prompt and plugin settings are not imported".into(),
        );
    }
    fix_sequence(c, "channels", ctx.opts.dry_run)
}

// ---------------------------------------------------------------------------------------------
// Redemption codes

const CODE_COLS: &[&str] = &[
    "id",
    "user_id",
    "key",
    "status",
    "name",
    "quota",
    "created_time",
    "redeemed_time",
    "deleted_at",
];

fn codes_kind(
    ctx: &Ctx<'_>,
    rows: &[Row],
    c: &mut DbConn,
    rep: &mut KindReport,
) -> Result<(), ImportError> {
    for r in rows {
        let id = r.id();
        if r.soft_deleted() {
            rep.skip(&id, "soft-deleted (deleted_at set)");
            continue;
        }
        let code = r.str("key").trim().to_owned();
        if code.is_empty() {
            rep.skip(&id, "empty code");
            continue;
        }
        let status = clamp_i32(r.int("status", 1));
        if !(1..=3).contains(&status) {
            rep.skip(&id, format!("unknown status {status}"));
            continue;
        }
        let creator = r.int("user_id", 0);
        let user_id = ctx.users.get(&creator).copied().unwrap_or(0);
        let name = r.str("name");
        let quota = r.int("quota", 0);
        let created_at = r.int("created_time", 0);
        let redeemed_at = r.int("redeemed_time", 0);
        let src_id = r.int("id", 0);
        let values = (
            redemptions::user_id.eq(user_id),
            redemptions::name.eq(&name),
            redemptions::status.eq(status),
            redemptions::quota.eq(quota),
            redemptions::created_at.eq(created_at),
            redemptions::redeemed_at.eq(redeemed_at),
        );
        row(
            c,
            rep,
            &id,
            |c| match switchboard_store::redemptions::find_by_code(c, &code) {
                Ok(cur) => {
                    if (cur.user_id, &cur.name, cur.status, cur.quota)
                        == (user_id, &name, status, quota)
                        && (cur.created_at, cur.redeemed_at) == (created_at, redeemed_at)
                    {
                        return Ok(Outcome::Unchanged);
                    }
                    diesel::update(redemptions::table.find(cur.id))
                        .set(values)
                        .execute(c)?;
                    Ok(Outcome::Updated)
                }
                Err(e) if e.is_not_found() => {
                    let taken: i64 = redemptions::table
                        .filter(redemptions::id.eq(src_id))
                        .count()
                        .get_result(c)?;
                    if taken == 0 && src_id > 0 {
                        diesel::insert_into(redemptions::table)
                            .values((
                                redemptions::id.eq(src_id),
                                redemptions::code.eq(&code),
                                values,
                            ))
                            .execute(c)?;
                    } else {
                        insert_returning_id!(
                            c,
                            redemptions::table,
                            (redemptions::code.eq(&code), values),
                            redemptions::id
                        )?;
                    }
                    Ok(Outcome::Inserted)
                }
                Err(e) => Err(e.into()),
            },
        );
    }
    rep.notes
        .push("who redeemed a used code is not recorded by the source: used_user_id is 0".into());
    fix_sequence(c, "redemptions", ctx.opts.dry_run)
}

// ---------------------------------------------------------------------------------------------
// Prices

const PRICE_COLS: &[&str] = &[
    "model",
    "type",
    "channel_type",
    "input",
    "output",
    "locked",
    "extra_ratios",
];

fn write_price(c: &mut DbConn, p: &Price) -> Result<Outcome, RowErr> {
    use switchboard_store::prices;
    match prices::find(c, &p.model) {
        Ok(cur) => {
            let mut f = prices::PriceFields::from_price(p);
            f.max_output_tokens = cur.max_output_tokens;
            if (&cur.price_type, cur.channel_type, cur.input, cur.output)
                == (&f.price_type, f.channel_type, f.input, f.output)
                && (&cur.extra_ratios, cur.locked) == (&f.extra_ratios, f.locked)
            {
                return Ok(Outcome::Unchanged);
            }
            prices::update(c, &p.model, &f)?;
            Ok(Outcome::Updated)
        }
        Err(e) if e.is_not_found() => {
            prices::insert(c, &prices::PriceFields::from_price(p))?;
            Ok(Outcome::Inserted)
        }
        Err(e) => Err(e.into()),
    }
}

fn prices_kind(
    ctx: &Ctx<'_>,
    table: Option<&[Row]>,
    c: &mut DbConn,
    rep: &mut KindReport,
) -> Result<(), ImportError> {
    if let Some(rows) = table {
        for r in rows {
            let model = r.str("model").trim().to_owned();
            let price_type = match r.str("type").trim() {
                "" | "tokens" => PriceType::Tokens,
                "times" => PriceType::Times,
                other => {
                    rep.skip(&model, format!("unknown price type {other:?}"));
                    continue;
                }
            };
            let extra = match r.opt("extra_ratios").map(str::trim) {
                None | Some("" | "null") => ExtraRatios::default(),
                Some(t) => match ExtraRatios::parse(t) {
                    Ok(e) => e,
                    Err(e) => {
                        rep.skip(&model, format!("extra ratios: {e}"));
                        continue;
                    }
                },
            };
            let p = Price {
                model: model.clone(),
                price_type,
                channel_type: clamp_i32(r.int("channel_type", 0)),
                input: r.float("input", 0.0),
                output: r.float("output", 0.0),
                extra,
                locked: r.bool("locked", false),
                max_output: 0,
            };
            if let Err(e) = validate_price(&p) {
                rep.skip(&model, e.to_string());
                continue;
            }
            row(c, rep, &model, |c| write_price(c, &p));
        }
        return Ok(());
    }
    // one-api: ModelRatio (input ratio) and CompletionRatio (output = input x completion).
    let Some(text) = ctx.src_option("ModelRatio") else {
        return Ok(());
    };
    let ratios: Map<String, Value> = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => {
            rep.skip("ModelRatio", format!("not a JSON object: {e}"));
            return Ok(());
        }
    };
    let completion: Map<String, Value> = ctx
        .src_option("CompletionRatio")
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default();
    let mut assumed = 0;
    for (model, ratio) in &ratios {
        let Some(input) = ratio.as_f64() else {
            rep.skip(format!("ModelRatio[{model}]"), "ratio is not a number");
            continue;
        };
        let factor = match completion.get(model).and_then(Value::as_f64) {
            Some(f) => f,
            None => {
                assumed += 1;
                1.0
            }
        };
        let existing = switchboard_store::prices::find(c, model).ok();
        let mut p = Price::tokens(
            model,
            existing.as_ref().map(|e| e.channel_type).unwrap_or(1),
            input,
            input * factor,
        );
        if let Some(e) = &existing {
            p.extra = ExtraRatios::parse(&e.extra_ratios).unwrap_or_default();
            p.locked = e.locked;
        }
        if let Err(e) = validate_price(&p) {
            rep.skip(format!("ModelRatio[{model}]"), e.to_string());
            continue;
        }
        row(c, rep, &format!("ModelRatio[{model}]"), |c| {
            write_price(c, &p)
        });
    }
    for model in completion.keys().filter(|m| !ratios.contains_key(*m)) {
        rep.skip(
            format!("CompletionRatio[{model}]"),
            "no ModelRatio entry for this model (nothing to multiply)",
        );
    }
    if assumed > 0 {
        rep.notes.push(format!(
            "{assumed} model(s) had no CompletionRatio entry: output ratio = input ratio \
             (one-api's built-in completion ratios are not in its database)"
        ));
    }
    rep.notes.push(
        "one-api prices have no owner: a new price is owned by OpenAI (channel type 1), an \
         existing one keeps its owner, extra ratios and lock"
            .into(),
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Logs

const LOG_COLS: &[&str] = &[
    "id",
    "user_id",
    "created_at",
    "type",
    "content",
    "username",
    "token_name",
    "model_name",
    "quota",
    "prompt_tokens",
    "completion_tokens",
    "channel_id",
    "elapsed_time",
    "request_time",
    "is_stream",
    "source_ip",
    "metadata",
];

const LOG_PAGE: i64 = 1000;

fn logs_kind(ctx: &Ctx<'_>, src: &mut Source, target: &mut DbConn) -> KindReport {
    // Paged reads from the source inside the one transaction of the kind on the target.
    kind(target, "logs", |c, rep| {
        let mut after = i64::MIN;
        loop {
            let page = src.read("logs", LOG_COLS, Some((after, LOG_PAGE)))?;
            let Some(last) = page.last() else { break };
            after = last.int("id", after);
            for r in &page {
                log_row(ctx, r, c, rep);
            }
            if (page.len() as i64) < LOG_PAGE {
                break;
            }
        }
        rep.notes.push(
            "imported logs keep their quota and tokens but are not added to the daily \
             statistics (dashboards and invoices count from the import on)"
                .into(),
        );
        fix_sequence(c, "logs", ctx.opts.dry_run)
    })
}

fn log_row(ctx: &Ctx<'_>, r: &Row, c: &mut DbConn, rep: &mut KindReport) {
    let id = r.id();
    let log_type = clamp_i32(r.int("type", 0));
    if !(1..=5).contains(&log_type) {
        rep.skip(&id, format!("unknown log type {log_type}"));
        return;
    }
    let request_id = format!("import:{}:{id}", ctx.opts.from);
    let src_user = r.int("user_id", 0);
    let user_id = ctx.users.get(&src_user).copied().unwrap_or(src_user);
    let src_channel = r.int("channel_id", 0);
    let channel_id = ctx
        .channels
        .get(&src_channel)
        .copied()
        .unwrap_or(src_channel);
    let elapsed = r
        .int_checked("request_time")
        .ok()
        .flatten()
        .or_else(|| r.int_checked("elapsed_time").ok().flatten())
        .unwrap_or(0);
    let metadata = match r.opt("metadata").map(str::trim) {
        None | Some("" | "null") => String::new(),
        Some(m) => m.to_owned(),
    };
    row(c, rep, &id, |c| {
        let n: i64 = logs::table
            .filter(logs::request_id.eq(&request_id))
            .count()
            .get_result(c)?;
        if n > 0 {
            return Ok(Outcome::Unchanged);
        }
        diesel::insert_into(logs::table)
            .values((
                logs::created_at.eq(r.int("created_at", 0)),
                logs::log_type.eq(log_type),
                logs::user_id.eq(user_id),
                logs::username.eq(r.str("username")),
                logs::token_name.eq(r.str("token_name")),
                logs::channel_id.eq(channel_id),
                logs::model_name.eq(r.str("model_name")),
                logs::quota.eq(r.int("quota", 0)),
                logs::prompt_tokens.eq(clamp_i32(r.int("prompt_tokens", 0))),
                logs::completion_tokens.eq(clamp_i32(r.int("completion_tokens", 0))),
                logs::use_time_ms.eq(clamp_i32(elapsed)),
                logs::is_stream.eq(r.bool("is_stream", false)),
                logs::source_ip.eq(r.str("source_ip")),
                logs::request_id.eq(&request_id),
                logs::content.eq(r.str("content")),
                logs::metadata.eq(&metadata),
            ))
            .execute(c)?;
        Ok(Outcome::Inserted)
    });
}
