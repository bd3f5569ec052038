//! The kinds of row: read from the source, map each row for the target, and hand it to the
//! store (`switchboard_store::import`), which matches it by a natural key, then inserts, updates
//! or leaves it alone. A kind of source row states only what differs ([`RowKind`]); one loop
//! ([`write_rows`]) walks the rows, reports the skipped ones and counts the outcomes.

use crate::report::{KindReport, Report};
use crate::source::{Row, Source};
use crate::{ImportError, Options, Origin, Sealer};
use diesel::Connection;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use switchboard_api::crypto::{key_digest, key_hint};
use switchboard_domain::channel::{validate_channel, ChannelInput};
use switchboard_domain::price::{validate_price, ExtraRatios, Price, PriceType};
use switchboard_domain::redemption::{validate_quota, QUOTA_MAX};
use switchboard_domain::user::{Role, UserStatus};
use switchboard_domain::validate;
use switchboard_store::import::{self as store, IdTable, Outcome, Upserted};
use switchboard_store::{now, DbConn, StoreError};

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

/// One kind of source row, as [`write_rows`] walks it: what differs from kind to kind.
trait RowKind {
    /// What the target gets for one source row.
    type Item;
    /// The row mapped for the target, or why it is skipped.
    fn map(&mut self, r: &Row) -> Result<Self::Item, String>;
    /// Writes it, inside the row's savepoint.
    fn write(&mut self, c: &mut DbConn, item: &Self::Item) -> Result<Upserted, RowErr>;
    /// After the row `r` was written as the target's row `target`.
    fn written(&mut self, _r: &Row, _target: i64) {}
}

/// Walks the rows of one kind: a row GORM soft-deleted, or one [`RowKind::map`] refuses, is
/// reported skipped; every other row is written in a savepoint of its own ([`row`]).
fn write_rows<K: RowKind>(kind: &mut K, rows: &[Row], c: &mut DbConn, rep: &mut KindReport) {
    for r in rows {
        let id = r.id();
        if r.soft_deleted() {
            rep.skip(&id, "soft-deleted (deleted_at set)");
            continue;
        }
        let item = match kind.map(r) {
            Ok(item) => item,
            Err(reason) => {
                rep.skip(&id, reason);
                continue;
            }
        };
        let mut target = None;
        let ok = row(c, rep, &id, |c| {
            let up = kind.write(c, &item)?;
            target = Some(up.id);
            Ok(up.outcome)
        });
        if let (true, Some(t)) = (ok, target) {
            kind.written(r, t);
        }
    }
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
fn fix_sequence(c: &mut DbConn, table: IdTable, dry_run: bool) -> Result<(), ImportError> {
    if !dry_run {
        store::move_id_sequence_past_max(c, table)?;
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

    /// A source setting holding a JSON object: `None` when the source has no such setting, or
    /// when it is not an object (then reported as skipped).
    fn src_json_option(&self, key: &str, rep: &mut KindReport) -> Option<Map<String, Value>> {
        match serde_json::from_str(self.src_option(key)?) {
            Ok(m) => Some(m),
            Err(e) => {
                rep.skip(key, format!("not a JSON object: {e}"));
                None
            }
        }
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
        write_rows(&mut Tokens(&ctx), &tokens_src?, c, rep);
        fix_sequence(c, IdTable::Tokens, opts.dry_run)
    }));
    let channels_src = src.read("channels", CHANNEL_COLS, None);
    let mut channel_map = HashMap::new();
    kinds.push(kind(target, "channels", |c, rep| {
        channels_kind(&ctx, &channels_src?, c, rep, &mut channel_map)
    }));
    ctx.channels = channel_map;
    let codes_src = src.read("redemptions", CODE_COLS, None);
    kinds.push(kind(target, "redemptions", |c, rep| {
        write_rows(&mut Codes(&ctx), &codes_src?, c, rep);
        rep.notes.push(
            "who redeemed a used code is not recorded by the source: used_user_id is 0".into(),
        );
        fix_sequence(c, IdTable::Redemptions, opts.dry_run)
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

fn groups(
    ctx: &Ctx<'_>,
    table: Option<&[Row]>,
    c: &mut DbConn,
    rep: &mut KindReport,
) -> Result<(), ImportError> {
    let mut wanted: Vec<(String, store::ImportedGroup)> = Vec::new();
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
                    store::ImportedGroup {
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
                        ratio_only: false,
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
            let Some(map) = ctx.src_json_option("GroupRatio", rep) else {
                return Ok(());
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
                    store::ImportedGroup {
                        name: symbol.clone(),
                        public: symbol == "default",
                        symbol,
                        ratio,
                        api_rate: 0,
                        promotion: false,
                        min_topup: 0,
                        max_topup: 0,
                        enabled: true,
                        ratio_only: true,
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
    for (id, g) in wanted {
        // The API's rules of a group (`POST /api/group`).
        let settings = switchboard_domain::group::GroupSettings {
            ratio: g.ratio,
            api_rate: g.api_rate,
            promotion: g.promotion,
            min_topup: g.min_topup,
            max_topup: g.max_topup,
        };
        let checked = validate::group_symbol(&g.symbol)
            .and_then(|()| switchboard_domain::group::validate_name(&g.name))
            .and_then(|()| settings.validate());
        if let Err(e) = checked {
            rep.skip(&id, e.to_string());
            continue;
        }
        row(c, rep, &id, |c| Ok(store::upsert_group(c, &g)?.outcome));
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

fn is_bcrypt(hash: &str) -> bool {
    hash.len() == 60 && ["$2a$", "$2b$", "$2y$"].iter().any(|p| hash.starts_with(p))
}

fn clamp_i32(v: i64) -> i32 {
    v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

struct Users<'a> {
    /// Source user ids to target ids, as they are written.
    ids: &'a mut HashMap<i64, i64>,
    /// Target users already matched in this run (two source names equal ignoring case would
    /// otherwise both land on one account).
    claimed: HashSet<i64>,
    unusable_passwords: usize,
}

impl RowKind for Users<'_> {
    type Item = store::ImportedUser;

    fn map(&mut self, r: &Row) -> Result<store::ImportedUser, String> {
        let Ok(Some(src_id)) = r.int_checked("id") else {
            return Err("no numeric id".into());
        };
        let username = r.str("username").trim().to_owned();
        if username.is_empty() {
            return Err("empty username".into());
        }
        // The API's rules (`POST /api/user`): a name the API would not accept (a look-alike in
        // another script, an `@`) is not imported either.
        validate::username(&username).map_err(|e| format!("{e} ({username:?})"))?;
        let role = r.int("role", 1);
        let role = i32::try_from(role)
            .ok()
            .and_then(|n| Role::try_from(n).ok())
            .ok_or_else(|| {
                format!(
                    "role {role} is not a Switchboard role (1 user, 10 administrator, 100 root)"
                )
            })?;
        let status = r.int("status", 1);
        let status = i32::try_from(status)
            .ok()
            .and_then(|n| UserStatus::try_from(n).ok())
            .ok_or_else(|| {
                format!("status {status} is not a user status (1 enabled, 2 disabled)")
            })?;
        let display_name = r.str("display_name").trim().to_owned();
        validate::display_name(&display_name).map_err(|e| e.to_string())?;
        let email = r.str("email").trim().to_owned();
        if !email.is_empty() {
            validate::email(&email).map_err(|e| e.to_string())?;
        }
        let mut password = r.str("password");
        if !is_bcrypt(&password) {
            self.unusable_passwords += 1;
            password = String::new();
        }
        let group = match r.str("group").trim() {
            "" => "default".to_owned(),
            g => g.to_owned(),
        };
        validate::group_symbol(&group).map_err(|e| format!("group {group:?}: {e}"))?;
        let amount = |col: &'static str| -> Result<i64, String> {
            let v = r.int(col, 0);
            validate_quota(v).map_err(|_| {
                format!("{col} {v} is outside 0 to {QUOTA_MAX} (the API's range of a quota)")
            })?;
            Ok(v)
        };
        let (quota, used_quota, aff_quota, aff_history_quota) = (
            amount("quota")?,
            amount("used_quota")?,
            amount("aff_quota")?,
            amount("aff_history")?,
        );
        let aff = r.str("aff_code").trim().to_owned();
        let inviter = r.int("inviter_id", 0);
        Ok(store::ImportedUser {
            keep_id: Some(src_id),
            fields: store::ImportedUserFields {
                display_name,
                role: role.as_i32(),
                status: status.as_i32(),
                email,
                avatar_url: r.str("avatar_url"),
                github_id: r.str("github_id"),
                oidc_id: r.str("oidc_id"),
                lark_id: r.str("lark_id"),
                wechat_id: r.str("wechat_id"),
                telegram_id: r.int("telegram_id", 0),
                quota,
                used_quota,
                request_count: r.int("request_count", 0).max(0),
                group_name: group,
                aff_code: (!aff.is_empty()).then_some(aff),
                aff_count: clamp_i32(r.int("aff_count", 0)),
                aff_quota,
                aff_history_quota,
                inviter_id: self.ids.get(&inviter).copied().unwrap_or(0),
                created_at: r.int("created_time", 0),
                last_login_at: r.int("last_login_time", 0),
                password,
                username,
            },
        })
    }

    fn write(&mut self, c: &mut DbConn, user: &store::ImportedUser) -> Result<Upserted, RowErr> {
        // One root: Switchboard's root owns money and secrets, so an import neither adds a
        // second root nor takes root's role from the one the target has.
        let matched = match switchboard_store::users::find_by_username(c, &user.fields.username) {
            Ok(u) => Some(u),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e.into()),
        };
        let roots = store::root_user_ids(c)?;
        let is_root = |id: i64| roots.contains(&id);
        if user.fields.role == Role::Root.as_i32() {
            if let Some(other) = roots
                .iter()
                .find(|id| Some(**id) != matched.as_ref().map(|u| u.id))
            {
                return Err(RowErr(format!(
                    "role 100 (root): the target already has a root user (id {other}) and \
                     Switchboard has one root; not imported"
                )));
            }
        } else if let Some(m) = matched.as_ref().filter(|m| is_root(m.id)) {
            return Err(RowErr(format!(
                "its name matches the target's root user (id {}), whose role an import does not \
                 lower (source role {})",
                m.id, user.fields.role
            )));
        }
        let up = store::upsert_user_with_id(c, user)?;
        // Refused after the write: the row's savepoint rolls it back.
        if self.claimed.contains(&up.id) {
            return Err(RowErr(format!(
                "username {:?} equals, ignoring case, that of another imported user \
                 (Switchboard user {}); usernames are unique ignoring case",
                user.fields.username, up.id
            )));
        }
        Ok(up)
    }

    fn written(&mut self, r: &Row, target: i64) {
        self.ids.insert(r.int("id", 0), target);
        self.claimed.insert(target);
    }
}

fn users_kind(
    dry_run: bool,
    rows: &[Row],
    c: &mut DbConn,
    rep: &mut KindReport,
    map: &mut HashMap<i64, i64>,
) -> Result<(), ImportError> {
    let mut users = Users {
        ids: map,
        claimed: HashSet::new(),
        unusable_passwords: 0,
    };
    write_rows(&mut users, rows, c, rep);
    let unusable_passwords = users.unusable_passwords;
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
    fix_sequence(c, IdTable::Users, dry_run)
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
    // An enabled limit's list (`{"enabled": true, "<list>": ["a", "b"]}`) as a comma list.
    let limits = v.get("limits");
    let enabled_list = |setting: &str, list: &str| {
        let m = limits?.get(setting)?;
        if m.get("enabled").and_then(Value::as_bool) != Some(true) {
            return None;
        }
        let items = m.get(list).and_then(Value::as_array);
        Some(comma_list(
            items.into_iter().flatten().filter_map(Value::as_str),
        ))
    };
    let models = enabled_list("limit_model_setting", "models");
    let ips = enabled_list("limits_ip_setting", "whitelist");
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

struct Tokens<'a>(&'a Ctx<'a>);

impl RowKind for Tokens<'_> {
    type Item = store::ImportedToken;

    fn map(&mut self, r: &Row) -> Result<store::ImportedToken, String> {
        let owner = r.int("user_id", 0);
        let Some(&user_id) = self.0.users.get(&owner) else {
            return Err(format!("its user {owner} was not imported"));
        };
        let key = r.str("key").trim().to_owned();
        if key.is_empty() {
            return Err("empty key".into());
        }
        let full = if key.starts_with(switchboard_domain::token::KEY_PREFIX) {
            key
        } else {
            format!("{}{key}", switchboard_domain::token::KEY_PREFIX)
        };
        let status = clamp_i32(r.int("status", 1));
        if !(1..=4).contains(&status) {
            return Err(format!("unknown status {status}"));
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
                Err(e) => return Err(format!("IP allow-list {subnet:?} is invalid: {e}")),
            }
        }
        let name = match r.str("name").trim() {
            "" => "imported".to_owned(),
            n => n.to_owned(),
        };
        // one-api takes what a key spends from its remainder even when the key is unlimited,
        // so a spent key's remainder is negative: nothing is left, which is 0. Above the API's
        // ceiling of a quota it is refused.
        let remain = r.int("remain_quota", 0);
        if remain > QUOTA_MAX {
            return Err(format!(
                "remain_quota {remain} is above {QUOTA_MAX} (the API's range of a quota)"
            ));
        }
        let src_id = r.int("id", 0);
        Ok(store::ImportedToken {
            keep_id: (src_id > 0).then_some(src_id),
            key_hash: key_digest(&full),
            key_ciphertext: self.0.sealer.key_box.seal(&full),
            key_hint: key_hint(&full),
            fields: store::ImportedTokenFields {
                user_id,
                name,
                status,
                created_at: r.int("created_time", 0),
                accessed_at: r.int("accessed_time", 0),
                expired_at: r.int("expired_time", -1),
                remain_quota: remain.max(0),
                unlimited_quota: r.bool("unlimited_quota", false),
                used_quota: r.int("used_quota", 0).max(0),
                group_name: r.str("group").trim().to_owned(),
                models,
                subnet,
                heartbeat_enabled: heartbeat.0,
                heartbeat_timeout: heartbeat.1,
            },
        })
    }

    fn write(&mut self, c: &mut DbConn, token: &store::ImportedToken) -> Result<Upserted, RowErr> {
        Ok(store::upsert_token_with_id(c, token)?)
    }
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

/// The channel of a source row, its key still plain.
fn channel_data(ctx: &Ctx<'_>, r: &Row) -> Result<store::ImportedChannel, String> {
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
    // The channel as the API would take it (`POST /api/channel`), checked and normalised by the
    // API's own rules: http(s) base URL (empty: the type's default), region names, headers,
    // mapping, models, priority 0 or more, weight 1 or more. one-api's weight 0 (its default:
    // it picks among equal priorities at random) is the least weight, 1.
    let mut input = ChannelInput {
        name: r.str("name"),
        channel_type,
        key: r.str("key"),
        base_url: r.str("base_url"),
        models: comma_list(r.str("models").split(',')),
        group: if group.is_empty() {
            "default".into()
        } else {
            group
        },
        model_mapping: mapping,
        priority: r.int("priority", 0),
        weight: clamp_i32(r.int("weight", 1).max(1)),
        custom_headers,
        config: if config.is_empty() {
            String::new()
        } else {
            Value::Object(config).to_string()
        },
        test_model: r.str("test_model"),
        proxy: r.str("proxy"),
        tag: r.str("tag"),
        disabled_stream,
    };
    validate_channel(&mut input).map_err(|e| e.to_string())?;
    let fields = switchboard_store::channels::ChannelFields {
        channel_type,
        name: input.name,
        key: input.key,
        base_url: input.base_url,
        group_name: input.group,
        models: input.models,
        model_mapping: input.model_mapping,
        priority: input.priority,
        weight: input.weight,
        tag: input.tag,
        proxy: input.proxy,
        test_model: input.test_model,
        status,
        custom_headers: input.custom_headers,
        config: input.config,
        disabled_stream: input.disabled_stream,
        pre_cost: clamp_i32(r.int("pre_cost", 1)),
        auto_ban: true,
        updated_at: now(),
        // The outbound URL policy: root did not set these destinations (the source's
        // administrators did), so unless `AllowPrivateOutbound` is on they are reached at
        // public addresses only, until root saves the channel's destination in the console.
        destination_by_root: false,
    };
    let src_id = r.int("id", 0);
    Ok(store::ImportedChannel {
        keep_id: (src_id > 0).then_some(src_id),
        fields,
        stats: store::ImportedChannelStats {
            created_at: r.int("created_time", 0),
            used_quota: r.int("used_quota", 0),
            balance: (r.float("balance", 0.0) * 1_000_000.0).round() as i64,
            balance_updated_at: r.int("balance_updated_time", 0),
            response_time: clamp_i32(r.int("response_time", 0)),
            test_time: r.int("test_time", 0),
        },
    })
}

/// A channel to write, and its key in plain (to compare with the sealed one stored).
struct ChannelItem {
    channel: store::ImportedChannel,
    plain_key: String,
}

struct Channels<'a> {
    ctx: &'a Ctx<'a>,
    /// Source channel ids to target ids, as they are written.
    ids: &'a mut HashMap<i64, i64>,
    /// Target channels already matched in this run: a channel is not taken twice.
    claimed: HashSet<i64>,
}

impl RowKind for Channels<'_> {
    type Item = ChannelItem;

    fn map(&mut self, r: &Row) -> Result<ChannelItem, String> {
        let mut channel = channel_data(self.ctx, r)?;
        if channel.fields.name.is_empty() {
            return Err("empty name".into());
        }
        let plain_key = std::mem::take(&mut channel.fields.key);
        channel.fields.key = self.ctx.sealer.secret_box.seal(&plain_key);
        Ok(ChannelItem { channel, plain_key })
    }

    fn write(&mut self, c: &mut DbConn, item: &ChannelItem) -> Result<Upserted, RowErr> {
        let key_matches = |stored: &str| {
            self.ctx.sealer.secret_box.open(stored).ok().as_deref() == Some(&*item.plain_key)
        };
        Ok(store::upsert_channel_with_id(
            c,
            &item.channel,
            &self.claimed,
            key_matches,
        )?)
    }

    fn written(&mut self, r: &Row, target: i64) {
        self.ids.insert(r.int("id", 0), target);
        self.claimed.insert(target);
    }
}

fn channels_kind(
    ctx: &Ctx<'_>,
    rows: &[Row],
    c: &mut DbConn,
    rep: &mut KindReport,
    map: &mut HashMap<i64, i64>,
) -> Result<(), ImportError> {
    let claimed = map.values().copied().collect();
    let mut channels = Channels {
        ctx,
        ids: map,
        claimed,
    };
    write_rows(&mut channels, rows, c, rep);
    if ctx.opts.from == Origin::OneApi {
        rep.notes.push(
            "one-api's per-channel system_prompt and plugin settings are not imported".into(),
        );
    }
    rep.notes.push(
        "imported channels count as destinations root did not set: unless AllowPrivateOutbound \
         is on, they reach public addresses only until root saves their address in the console"
            .into(),
    );
    fix_sequence(c, IdTable::Channels, ctx.opts.dry_run)
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

struct Codes<'a>(&'a Ctx<'a>);

impl RowKind for Codes<'_> {
    type Item = store::ImportedRedemption;

    fn map(&mut self, r: &Row) -> Result<store::ImportedRedemption, String> {
        let code = r.str("key").trim().to_owned();
        if code.is_empty() {
            return Err("empty code".into());
        }
        let status = clamp_i32(r.int("status", 1));
        if !(1..=3).contains(&status) {
            return Err(format!("unknown status {status}"));
        }
        let quota = r.int("quota", 0);
        validate_quota(quota).map_err(|e| format!("{e} (source quota {quota})"))?;
        let creator = r.int("user_id", 0);
        let src_id = r.int("id", 0);
        Ok(store::ImportedRedemption {
            keep_id: (src_id > 0).then_some(src_id),
            code,
            fields: store::ImportedRedemptionFields {
                user_id: self.0.users.get(&creator).copied().unwrap_or(0),
                name: r.str("name"),
                status,
                quota,
                created_at: r.int("created_time", 0),
                redeemed_at: r.int("redeemed_time", 0),
            },
        })
    }

    fn write(
        &mut self,
        c: &mut DbConn,
        code: &store::ImportedRedemption,
    ) -> Result<Upserted, RowErr> {
        Ok(store::upsert_redemption_with_id(c, code)?)
    }
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
            row(c, rep, &model, |c| Ok(store::upsert_price(c, &p)?.outcome));
        }
        return Ok(());
    }
    // one-api: ModelRatio (input ratio) and CompletionRatio (output = input x completion).
    let Some(ratios) = ctx.src_json_option("ModelRatio", rep) else {
        return Ok(());
    };
    let completion: Map<String, Value> = ctx
        .src_option("CompletionRatio")
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default();
    // The models whose output ratio came from one-api's built-in rules, with the ratio.
    let mut built_in: Vec<String> = Vec::new();
    for (model, ratio) in &ratios {
        let Some(input) = ratio.as_f64() else {
            rep.skip(format!("ModelRatio[{model}]"), "ratio is not a number");
            continue;
        };
        let factor = match completion.get(model).and_then(Value::as_f64) {
            Some(f) => f,
            None => {
                let f = crate::one_api::completion_ratio(model);
                // Shown to 4 decimals (4/3 as 1.3333); the price keeps the exact product.
                built_in.push(format!("{model} x{}", (f * 10_000.0).round() / 10_000.0));
                f
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
            Ok(store::upsert_price(c, &p)?.outcome)
        });
    }
    for model in completion.keys().filter(|m| !ratios.contains_key(*m)) {
        rep.skip(
            format!("CompletionRatio[{model}]"),
            "no ModelRatio entry for this model (nothing to multiply)",
        );
    }
    if !built_in.is_empty() {
        rep.notes.push(format!(
            "{} model(s) have no CompletionRatio entry: their output ratio is the input ratio \
             times one-api's built-in completion ratio, as one-api billed them: {}",
            built_in.len(),
            built_in.join(", ")
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
            write_rows(&mut Logs(ctx), &page, c, rep);
            if (page.len() as i64) < LOG_PAGE {
                break;
            }
        }
        rep.notes.push(
            "imported logs keep their quota and tokens but are not added to the daily \
             statistics (dashboards and invoices count from the import on)"
                .into(),
        );
        fix_sequence(c, IdTable::Logs, ctx.opts.dry_run)
    })
}

struct Logs<'a>(&'a Ctx<'a>);

impl RowKind for Logs<'_> {
    type Item = store::ImportedLog;

    fn map(&mut self, r: &Row) -> Result<store::ImportedLog, String> {
        let log_type = clamp_i32(r.int("type", 0));
        if !(1..=5).contains(&log_type) {
            return Err(format!("unknown log type {log_type}"));
        }
        let request_id = format!("import:{}:{}", self.0.opts.from, r.id());
        let src_user = r.int("user_id", 0);
        let user_id = self.0.users.get(&src_user).copied().unwrap_or(src_user);
        let src_channel = r.int("channel_id", 0);
        let channel_id = self
            .0
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
        Ok(store::ImportedLog {
            created_at: r.int("created_at", 0),
            log_type,
            user_id,
            username: r.str("username"),
            token_name: r.str("token_name"),
            channel_id,
            model_name: r.str("model_name"),
            quota: r.int("quota", 0),
            prompt_tokens: clamp_i32(r.int("prompt_tokens", 0)),
            completion_tokens: clamp_i32(r.int("completion_tokens", 0)),
            use_time_ms: clamp_i32(elapsed),
            is_stream: r.bool("is_stream", false),
            source_ip: r.str("source_ip"),
            request_id,
            content: r.str("content"),
            metadata,
        })
    }

    fn write(&mut self, c: &mut DbConn, log: &store::ImportedLog) -> Result<Upserted, RowErr> {
        Ok(store::insert_log_once(c, log)?)
    }
}
