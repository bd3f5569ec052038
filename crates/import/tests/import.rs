//! The importer against real databases: a one-api and a one-hub schema written here from their
//! published Go models (GORM naming: snake_case columns, `id` bigint primary key, reserved words
//! `key`, `group`, `type` quoted), filled with sample rows, imported into a fresh, migrated
//! Switchboard database. SQLite always; PostgreSQL and MySQL/MariaDB when `TEST_PG_DSN` /
//! `TEST_MYSQL_DSN` name an admin connection (source and target then both live there).

use diesel::connection::SimpleConnection;
use diesel::{Connection, MysqlConnection, PgConnection, SqliteConnection};
use switchboard_api::auth::verify_password;
use switchboard_api::crypto::key_digest;
use switchboard_import::{run, Options, Origin, Report, Sealer};
use switchboard_store::conn::Backend;
use switchboard_store::testing::TestDb;
use switchboard_store::{channels, options, prices, redemptions, tokens, user_groups, users};

const SECRET: &[u8] = b"import-test-secret-0123456789";
const ALICE_KEY: &str = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl";
const HUB_KEY: &str = "HubKey0123456789abcdefghijklmnopqrstuvwxyzABCDEF";

fn sealer() -> Sealer {
    Sealer::new(SECRET, &[])
}

/// A bcrypt hash as Go's x/crypto/bcrypt writes it (`$2a$`).
fn go_bcrypt(password: &str) -> String {
    bcrypt::hash_with_result(password, 4)
        .unwrap_or_else(|e| panic!("bcrypt: {e}"))
        .format_for_version(bcrypt::Version::TwoA)
}

static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn unique(prefix: &str) -> String {
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// An empty source database of one backend (dropped with the value).
struct SourceDb {
    backend: Backend,
    dsn: String,
    drop_with: Option<(String, String)>,
    file: Option<std::path::PathBuf>,
}

fn with_db(admin: &str, name: &str) -> String {
    let (base, query) = match admin.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (admin, None),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host = match base[scheme_end..].find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    match query {
        Some(q) => format!("{host}/{name}?{q}"),
        None => format!("{host}/{name}"),
    }
}

impl SourceDb {
    fn sqlite() -> SourceDb {
        let path = std::env::temp_dir().join(format!("{}.db", unique("oneapi_src")));
        SourceDb {
            backend: Backend::Sqlite,
            dsn: path.display().to_string(),
            drop_with: None,
            file: Some(path),
        }
    }

    fn server(backend: Backend) -> Option<SourceDb> {
        let var = match backend {
            Backend::Postgres => "TEST_PG_DSN",
            Backend::Mysql => "TEST_MYSQL_DSN",
            Backend::Sqlite => return Some(SourceDb::sqlite()),
        };
        let admin = std::env::var(var).ok().filter(|s| !s.is_empty())?;
        let name = unique("oneapi_src");
        exec(backend, &admin, &format!("CREATE DATABASE {name}"));
        Some(SourceDb {
            backend,
            dsn: with_db(&admin, &name),
            drop_with: Some((admin, name)),
            file: None,
        })
    }

    /// Runs SQL written with `"`-quoted identifiers and `TS` for a timestamp type.
    fn exec(&self, sql: &str) {
        let sql = match self.backend {
            // ANSI_QUOTES: `"` quotes identifiers, as on the other backends.
            Backend::Mysql => format!(
                "SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES'); {}",
                sql.replace(" TS", " DATETIME(3)")
            ),
            Backend::Postgres => sql.replace(" TS", " TIMESTAMPTZ"),
            Backend::Sqlite => sql.replace(" TS", " DATETIME"),
        };
        exec(self.backend, &self.dsn, &sql);
    }
}

fn exec(backend: Backend, url: &str, sql: &str) {
    let r = match backend {
        Backend::Sqlite => SqliteConnection::establish(url)
            .map_err(|e| e.to_string())
            .and_then(|mut c| c.batch_execute(sql).map_err(|e| e.to_string())),
        Backend::Postgres => PgConnection::establish(url)
            .map_err(|e| e.to_string())
            .and_then(|mut c| c.batch_execute(sql).map_err(|e| e.to_string())),
        Backend::Mysql => MysqlConnection::establish(url)
            .map_err(|e| e.to_string())
            .and_then(|mut c| c.batch_execute(sql).map_err(|e| e.to_string())),
    };
    r.unwrap_or_else(|e| panic!("{e}\n{sql}"));
}

impl Drop for SourceDb {
    fn drop(&mut self) {
        if let Some(p) = &self.file {
            let _ = std::fs::remove_file(p);
        }
        if let Some((admin, name)) = &self.drop_with {
            let sql = match self.backend {
                Backend::Postgres => format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                _ => format!("DROP DATABASE IF EXISTS {name}"),
            };
            let _ = std::panic::catch_unwind(|| exec(self.backend, admin, &sql));
        }
    }
}

/// The backends of this run: SQLite always, the others when configured.
fn backends() -> Vec<Backend> {
    let mut v = vec![Backend::Sqlite];
    if std::env::var("TEST_PG_DSN").is_ok_and(|s| !s.is_empty()) {
        v.push(Backend::Postgres);
    }
    if std::env::var("TEST_MYSQL_DSN").is_ok_and(|s| !s.is_empty()) {
        v.push(Backend::Mysql);
    }
    v
}

fn target(backend: Backend) -> TestDb {
    match backend {
        Backend::Sqlite => Some(TestDb::sqlite()),
        Backend::Postgres => TestDb::postgres(),
        Backend::Mysql => TestDb::mysql(),
    }
    .unwrap_or_else(|| panic!("no {backend:?} test database"))
}

// ---------------------------------------------------------------------------------------------
// one-api (songquanpeng/one-api model/*.go)

const ONE_API_SCHEMA: &str = r#"
CREATE TABLE users (
    id BIGINT PRIMARY KEY, username VARCHAR(191) UNIQUE, password TEXT NOT NULL,
    display_name VARCHAR(191), role BIGINT DEFAULT 1, status BIGINT DEFAULT 1,
    email VARCHAR(191), github_id VARCHAR(191), wechat_id VARCHAR(191), lark_id VARCHAR(191),
    oidc_id VARCHAR(191), access_token CHAR(32), quota BIGINT DEFAULT 0,
    used_quota BIGINT DEFAULT 0, request_count BIGINT DEFAULT 0,
    "group" VARCHAR(32) DEFAULT 'default', aff_code VARCHAR(32), inviter_id BIGINT
);
CREATE TABLE tokens (
    id BIGINT PRIMARY KEY, user_id BIGINT, "key" CHAR(48), status BIGINT DEFAULT 1,
    name VARCHAR(191), created_time BIGINT, accessed_time BIGINT, expired_time BIGINT DEFAULT -1,
    remain_quota BIGINT DEFAULT 0, unlimited_quota BOOLEAN DEFAULT false,
    used_quota BIGINT DEFAULT 0, models TEXT, subnet VARCHAR(191) DEFAULT ''
);
CREATE TABLE channels (
    id BIGINT PRIMARY KEY, "type" BIGINT DEFAULT 0, "key" TEXT, status BIGINT DEFAULT 1,
    name VARCHAR(191), weight BIGINT DEFAULT 0, created_time BIGINT, test_time BIGINT,
    response_time BIGINT, base_url VARCHAR(191) DEFAULT '', other TEXT, balance DOUBLE PRECISION,
    balance_updated_time BIGINT, models TEXT, "group" VARCHAR(32) DEFAULT 'default',
    used_quota BIGINT DEFAULT 0, model_mapping VARCHAR(1024) DEFAULT '', priority BIGINT DEFAULT 0,
    config TEXT, system_prompt TEXT
);
CREATE TABLE abilities (
    "group" VARCHAR(32) NOT NULL, model VARCHAR(191) NOT NULL, channel_id BIGINT NOT NULL,
    enabled BOOLEAN, priority BIGINT DEFAULT 0, PRIMARY KEY ("group", model, channel_id)
);
CREATE TABLE redemptions (
    id BIGINT PRIMARY KEY, user_id BIGINT, "key" CHAR(32) UNIQUE, status BIGINT DEFAULT 1,
    name VARCHAR(191), quota BIGINT DEFAULT 100, created_time BIGINT, redeemed_time BIGINT
);
CREATE TABLE options ("key" VARCHAR(191) PRIMARY KEY, value TEXT);
CREATE TABLE logs (
    id BIGINT PRIMARY KEY, user_id BIGINT, created_at BIGINT, "type" BIGINT, content TEXT,
    username VARCHAR(191) DEFAULT '', token_name VARCHAR(191) DEFAULT '',
    model_name VARCHAR(191) DEFAULT '', quota BIGINT DEFAULT 0, prompt_tokens BIGINT DEFAULT 0,
    completion_tokens BIGINT DEFAULT 0, channel_id BIGINT, request_id VARCHAR(191) DEFAULT '',
    elapsed_time BIGINT DEFAULT 0, is_stream BOOLEAN DEFAULT false,
    system_prompt_reset BOOLEAN DEFAULT false
);
"#;

fn one_api_source(backend: Backend) -> Option<SourceDb> {
    let src = SourceDb::server(backend)?;
    src.exec(ONE_API_SCHEMA);
    let root = go_bcrypt("123456-root");
    let alice = go_bcrypt("alice-password-1");
    src.exec(&format!(
        r#"
INSERT INTO users (id, username, password, display_name, role, status, email, github_id,
    wechat_id, lark_id, oidc_id, access_token, quota, used_quota, request_count, "group",
    aff_code, inviter_id)
VALUES
 (1, 'root', '{root}', 'Root User', 100, 1, 'root@example.com', '', '', '', '', 'abcdefabcdefabcdefabcdefabcdef12',
  500000000, 1000, 3, 'default', 'RooT', 0),
 (2, 'alice', '{alice}', 'Alice', 1, 1, 'alice@example.com', 'gh-alice', '', '', '', NULL,
  250000, 42, 7, 'vip', 'AlIc', 1);
INSERT INTO tokens (id, user_id, "key", status, name, created_time, accessed_time, expired_time,
    remain_quota, unlimited_quota, used_quota, models, subnet)
VALUES
 (1, 2, '{ALICE_KEY}', 1, 'alice key', 1700000000, 1700000500, -1, 1000, false, 5,
  'gpt-4o,gpt-4o-mini', '10.0.0.0/8'),
 (2, 99, 'ZZZZEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl', 1, 'orphan', 1700000000, 0, -1, 0,
  true, 0, '', '');
INSERT INTO channels (id, "type", "key", status, name, weight, created_time, test_time,
    response_time, base_url, other, balance, balance_updated_time, models, "group", used_quota,
    model_mapping, priority, config, system_prompt)
VALUES
 (1, 1, 'sk-upstream-one', 1, 'openai-main', 5, 1700000000, 1700000100, 321,
  'https://api.openai.com', '', 12.5, 1700000200, 'gpt-4o,gpt-4o-mini', 'default,vip', 777,
  '{{"gpt-4":"gpt-4o"}}', 10, '{{}}', NULL),
 (2, 24, 'AIzaSyExample', 2, 'gemini', NULL, 1700000000, 0, 0, '', '', 0, 0,
  'gemini-1.5-pro', 'default', 0, '', 0, '', NULL),
 (3, 22, 'fastgpt-key', 1, 'fastgpt', 1, 1700000000, 0, 0, '', '', 0, 0, 'x', 'default', 0, '',
  0, '', NULL),
 (4, 3, 'azure-key', 1, 'azure', 1, 1700000000, 0, 0, 'https://x.openai.azure.com', '2024-02-01',
  0, 0, 'gpt-4o', 'default', 0, '', 0, '{{"region":""}}', NULL);
INSERT INTO abilities ("group", model, channel_id, enabled, priority)
VALUES ('default', 'gpt-4o', 1, true, 10);
INSERT INTO redemptions (id, user_id, "key", status, name, quota, created_time, redeemed_time)
VALUES
 (1, 1, '0123456789abcdef0123456789abcdef', 1, 'gift', 100000, 1700000000, 0),
 (2, 1, 'fedcba9876543210fedcba9876543210', 3, 'spent', 5000, 1700000000, 1700000300);
INSERT INTO options ("key", value) VALUES
 ('SystemName', 'Old Gateway'), ('QuotaForNewUser', '1000'), ('SMTPToken', 'smtp-secret'),
 ('OidcEnabled', 'true'), ('Theme', 'berry'), ('RetryTimes', 'many'),
 ('ModelRatio', '{{"gpt-4o":1.25,"my-model":2}}'),
 ('CompletionRatio', '{{"gpt-4o":4,"ghost-model":3}}'),
 ('GroupRatio', '{{"default":1,"vip":0.8}}');
INSERT INTO logs (id, user_id, created_at, "type", content, username, token_name, model_name,
    quota, prompt_tokens, completion_tokens, channel_id, request_id, elapsed_time, is_stream)
VALUES
 (1, 2, 1700000400, 2, 'model ratio 1.25', 'alice', 'alice key', 'gpt-4o', 1500, 100, 20, 1,
  'req-1', 850, true),
 (2, 1, 1700000450, 1, 'top-up', 'root', '', '', 500000, 0, 0, 0, '', 0, false);
"#
    ));
    Some(src)
}

fn one_api_opts(src: &SourceDb, dry_run: bool, with_logs: bool) -> Options {
    Options {
        from: Origin::OneApi,
        source_dsn: src.dsn.clone(),
        dry_run,
        with_logs,
    }
}

fn import(db: &TestDb, opts: &Options) -> Report {
    let mut c = db.conn();
    run(opts, &mut c, &sealer()).unwrap_or_else(|e| panic!("import: {e}"))
}

fn skipped(rep: &Report, kind: &str, id: &str) -> String {
    rep.kind(kind)
        .and_then(|k| k.skipped.iter().find(|s| s.id == id))
        .map(|s| s.reason.clone())
        .unwrap_or_else(|| panic!("{kind} {id} not reported as skipped:\n{rep}"))
}

#[test]
fn one_api_import_keeps_logins_keys_channels_and_codes() {
    for backend in backends() {
        let Some(src) = one_api_source(backend) else {
            continue;
        };
        let db = target(backend);
        let rep = import(&db, &one_api_opts(&src, false, true));
        println!("{rep}");
        assert!(!rep.has_failures(), "{rep}");
        let s = sealer();
        let mut c = db.conn();

        // Users: the original passwords still sign in (Go's $2a$ hashes, kept as they are).
        let alice = users::find_by_login(&mut c, "alice").unwrap_or_else(|e| panic!("{e}"));
        assert!(verify_password("alice-password-1", &alice.password));
        assert!(!verify_password("wrong-password", &alice.password));
        assert_eq!(alice.id, 2);
        assert_eq!(
            (alice.quota, alice.used_quota, alice.request_count),
            (250000, 42, 7)
        );
        assert_eq!(alice.group_name, "vip");
        assert_eq!(alice.github_id, "gh-alice");
        assert_eq!(alice.inviter_id, 1);
        let root = users::find_by_username(&mut c, "root").unwrap_or_else(|e| panic!("{e}"));
        assert!(verify_password("123456-root", &root.password));
        assert_eq!(root.role, 100);
        assert_eq!(
            root.access_token_hash, None,
            "access tokens are not imported"
        );

        // Keys: the client's `sk-<key>` finds the token by its digest; the sealed copy opens.
        let full = format!("sk-{ALICE_KEY}");
        let t =
            tokens::find_by_key_hash(&mut c, &key_digest(&full)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.user_id, alice.id);
        assert_eq!(
            s.key_box.open(&t.key_ciphertext).as_deref(),
            Some(full.as_str())
        );
        assert_eq!(t.name, "alice key");
        assert_eq!((t.remain_quota, t.used_quota, t.expired_at), (1000, 5, -1));
        assert_eq!(t.models, "gpt-4o,gpt-4o-mini");
        assert_eq!(t.subnet, "10.0.0.0/8");
        assert!(skipped(&rep, "tokens", "2").contains("user 99"));

        // Channels: type translated, key sealed, models/groups/priority/weight kept, abilities
        // rebuilt (group x model).
        let ch = channels::find(&mut c, 1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ch.channel_type, 1);
        assert_eq!(ch.name, "openai-main");
        assert!(ch.key.starts_with("sealed:v1:"), "{}", ch.key);
        assert_eq!(s.secret_box.open(&ch.key).as_deref(), Ok("sk-upstream-one"));
        assert_eq!(ch.group_name, "default,vip");
        assert_eq!(ch.models, "gpt-4o,gpt-4o-mini");
        assert_eq!((ch.priority, ch.weight, ch.status), (10, 5, 1));
        assert_eq!(ch.model_mapping, r#"{"gpt-4":"gpt-4o"}"#);
        assert_eq!(
            (ch.used_quota, ch.balance, ch.response_time),
            (777, 12_500_000, 321)
        );
        let abilities = channels::abilities_of(&mut c, 1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            abilities,
            vec![
                ("default".into(), "gpt-4o".into(), true),
                ("default".into(), "gpt-4o-mini".into(), true),
                ("vip".into(), "gpt-4o".into(), true),
                ("vip".into(), "gpt-4o-mini".into(), true),
            ]
        );
        let gemini = channels::find(&mut c, 2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((gemini.channel_type, gemini.status), (25, 2));
        assert!(channels::abilities_of(&mut c, 2)
            .unwrap_or_else(|e| panic!("{e}"))
            .iter()
            .all(|a| !a.2));
        assert!(skipped(&rep, "channels", "3").contains("no Switchboard equivalent"));
        let azure = channels::find(&mut c, 4).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(azure.config, r#"{"api_version":"2024-02-01"}"#);

        // Codes.
        let gift = redemptions::find_by_code(&mut c, "0123456789abcdef0123456789abcdef")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (gift.status, gift.quota, gift.name.as_str()),
            (1, 100000, "gift")
        );
        let spent = redemptions::find_by_code(&mut c, "fedcba9876543210fedcba9876543210")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((spent.status, spent.redeemed_at), (3, 1700000300));

        // Settings: known keys validated, secrets sealed, renamed, the rest reported.
        let opts: std::collections::HashMap<String, String> = options::all(&mut c)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .collect();
        assert_eq!(
            opts.get("SystemName").map(String::as_str),
            Some("Old Gateway")
        );
        assert_eq!(
            opts.get("QuotaForNewUser").map(String::as_str),
            Some("1000")
        );
        assert_eq!(
            opts.get("OIDCAuthEnabled").map(String::as_str),
            Some("true")
        );
        let smtp = opts.get("SMTPToken").cloned().unwrap_or_default();
        assert!(smtp.starts_with("sealed:v1:"), "{smtp}");
        assert_eq!(s.secret_box.open(&smtp).as_deref(), Ok("smtp-secret"));
        assert!(skipped(&rep, "options", "Theme").contains("not a Switchboard setting"));
        assert!(skipped(&rep, "options", "RetryTimes").contains("invalid value"));
        assert!(!opts.contains_key("ModelRatio"));

        // Prices from ModelRatio x CompletionRatio; groups from GroupRatio.
        let p = prices::find(&mut c, "gpt-4o").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (p.input, p.output, p.price_type.as_str()),
            (1.25, 5.0, "tokens")
        );
        let p = prices::find(&mut c, "my-model").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((p.input, p.output, p.channel_type), (2.0, 2.0, 1));
        assert!(skipped(&rep, "prices", "CompletionRatio[ghost-model]").contains("no ModelRatio"));
        let vip = user_groups::find_by_symbol(&mut c, "vip").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(vip.ratio, 0.8);

        // Logs.
        let logs = switchboard_store::logs::recent_for_user(&mut c, alice.id, 10)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(logs.len(), 1);
        assert_eq!(
            (logs[0].quota, logs[0].prompt_tokens, logs[0].use_time_ms),
            (1500, 100, 850)
        );
        assert_eq!(logs[0].request_id.as_deref(), Some("import:one-api:1"));
        assert!(logs[0].is_stream);
        drop(c);

        // A second run changes nothing.
        let again = import(&db, &one_api_opts(&src, false, true));
        assert_eq!(again.changes(), 0, "second run changed something:\n{again}");
        assert_eq!(
            again.kind("tokens").map(|k| k.unchanged),
            rep.kind("tokens").map(|k| k.inserted)
        );

        // The imported code is redeemable once.
        let mut c = db.conn();
        // Rows created afterwards get fresh ids (PostgreSQL's sequences moved past the imported
        // ids).
        let t = switchboard_store::now();
        let new_user = users::insert(
            &mut c,
            &users::NewUser {
                username: "newcomer",
                password: "",
                display_name: "",
                role: 1,
                status: 1,
                email: "",
                quota: 0,
                group_name: "default",
                aff_code: None,
                inviter_id: 0,
                created_at: t,
                updated_at: t,
            },
        )
        .unwrap_or_else(|e| panic!("insert after import: {e}"));
        assert!(new_user > 2, "{new_user}");
        let mut f = channels::find(&mut c, 1)
            .map(|r| channels::ChannelFields {
                channel_type: r.channel_type,
                name: "copy".into(),
                key: r.key,
                base_url: r.base_url,
                group_name: r.group_name,
                models: r.models,
                model_mapping: r.model_mapping,
                priority: r.priority,
                weight: r.weight,
                tag: r.tag,
                proxy: r.proxy,
                test_model: r.test_model,
                status: r.status,
                custom_headers: r.custom_headers,
                config: r.config,
                disabled_stream: r.disabled_stream,
                pre_cost: r.pre_cost,
                auto_ban: r.auto_ban,
                updated_at: t,
                destination_by_root: r.destination_by_root,
            })
            .unwrap_or_else(|e| panic!("{e}"));
        f.name = "copy".into();
        let new_channel = channels::insert(&mut c, &f).unwrap_or_else(|e| panic!("{e}"));
        assert!(new_channel > 4, "{new_channel}");
        let got = redemptions::redeem(
            &mut c,
            "0123456789abcdef0123456789abcdef",
            alice.id,
            switchboard_store::now(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got.map(|r| r.quota), Some(100000));
    }
}

#[test]
fn dry_run_reports_and_writes_nothing() {
    for backend in backends() {
        let Some(src) = one_api_source(backend) else {
            continue;
        };
        let db = target(backend);
        let rep = import(&db, &one_api_opts(&src, true, true));
        println!("{rep}");
        assert!(rep.dry_run);
        assert!(rep.to_string().contains("would insert"));
        assert_eq!(rep.kind("users").map(|k| k.inserted), Some(2));
        assert_eq!(rep.kind("tokens").map(|k| k.inserted), Some(1));
        assert_eq!(rep.kind("channels").map(|k| k.inserted), Some(3));
        assert_eq!(rep.kind("logs").map(|k| k.inserted), Some(2));
        let mut c = db.conn();
        assert_eq!(users::count(&mut c).unwrap_or_else(|e| panic!("{e}")), 0);
        assert!(channels::all(&mut c)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty());
        assert!(options::all(&mut c)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty());
        assert!(redemptions::find_by_code(&mut c, "0123456789abcdef0123456789abcdef").is_err());
        drop(c);
        // The real run then does what the dry run said.
        let real = import(&db, &one_api_opts(&src, false, true));
        for k in &rep.kinds {
            let r = real.kind(k.kind).unwrap_or_else(|| panic!("{}", k.kind));
            assert_eq!(
                (r.inserted, r.updated, r.skipped.len()),
                (k.inserted, k.updated, k.skipped.len()),
                "{}",
                k.kind
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// one-hub (MartialBE/one-hub model/*.go)

const ONE_HUB_SCHEMA: &str = r#"
CREATE TABLE users (
    id BIGINT PRIMARY KEY, username VARCHAR(191) UNIQUE, password TEXT NOT NULL,
    display_name VARCHAR(191), role BIGINT DEFAULT 1, status BIGINT DEFAULT 1,
    email VARCHAR(191), avatar_url VARCHAR(500) DEFAULT '', oidc_id VARCHAR(191),
    github_id VARCHAR(191), github_id_new BIGINT, wechat_id VARCHAR(191),
    telegram_id BIGINT DEFAULT 0, lark_id VARCHAR(191), access_token CHAR(32),
    quota BIGINT DEFAULT 0, used_quota BIGINT DEFAULT 0, request_count BIGINT DEFAULT 0,
    "group" VARCHAR(32) DEFAULT 'default', aff_code VARCHAR(32), aff_count BIGINT DEFAULT 0,
    aff_quota BIGINT DEFAULT 0, aff_history BIGINT DEFAULT 0, inviter_id BIGINT,
    last_login_time BIGINT DEFAULT 0, last_login_ip VARCHAR(128) DEFAULT '',
    created_time BIGINT, deleted_at TS
);
CREATE TABLE tokens (
    id BIGINT PRIMARY KEY, user_id BIGINT, "key" VARCHAR(59) UNIQUE, status BIGINT DEFAULT 1,
    name VARCHAR(191), created_time BIGINT, accessed_time BIGINT, expired_time BIGINT DEFAULT -1,
    remain_quota BIGINT DEFAULT 0, unlimited_quota BOOLEAN DEFAULT false,
    used_quota BIGINT DEFAULT 0, "group" VARCHAR(191) DEFAULT '',
    backup_group VARCHAR(191) DEFAULT '', setting JSON, deleted_at TS
);
CREATE TABLE channels (
    id BIGINT PRIMARY KEY, "type" BIGINT DEFAULT 0, "key" TEXT, status BIGINT DEFAULT 1,
    name VARCHAR(191), weight BIGINT DEFAULT 1, created_time BIGINT, test_time BIGINT,
    response_time BIGINT, base_url VARCHAR(191) DEFAULT '', other TEXT,
    balance DOUBLE PRECISION, balance_updated_time BIGINT, models TEXT,
    "group" VARCHAR(32) DEFAULT 'default', tag VARCHAR(32) DEFAULT '',
    used_quota BIGINT DEFAULT 0, model_mapping TEXT, model_headers VARCHAR(1024) DEFAULT '',
    custom_parameter VARCHAR(1024) DEFAULT '', priority BIGINT DEFAULT 0,
    proxy VARCHAR(255) DEFAULT '', test_model VARCHAR(50) DEFAULT '',
    only_chat BOOLEAN DEFAULT false, pre_cost BIGINT DEFAULT 1,
    compatible_response BOOLEAN DEFAULT false, allow_extra_body BOOLEAN DEFAULT false,
    disabled_stream JSON, plugin JSON, deleted_at TS
);
CREATE TABLE redemptions (
    id BIGINT PRIMARY KEY, user_id BIGINT, "key" CHAR(32) UNIQUE, status BIGINT DEFAULT 1,
    name VARCHAR(191), quota BIGINT DEFAULT 100, created_time BIGINT, redeemed_time BIGINT
);
CREATE TABLE options ("key" VARCHAR(191) PRIMARY KEY, value TEXT);
CREATE TABLE prices (
    model VARCHAR(100) PRIMARY KEY, "type" VARCHAR(191) DEFAULT 'tokens',
    channel_type BIGINT DEFAULT 0, input DOUBLE PRECISION DEFAULT 0,
    output DOUBLE PRECISION DEFAULT 0, locked BOOLEAN DEFAULT false, extra_ratios JSON
);
CREATE TABLE user_groups (
    id BIGINT PRIMARY KEY, symbol VARCHAR(50) UNIQUE, name VARCHAR(50),
    ratio DECIMAL(10,2) DEFAULT 1, api_rate BIGINT DEFAULT 600, public BOOLEAN DEFAULT false,
    promotion BOOLEAN DEFAULT false, min BIGINT DEFAULT 0, max BIGINT DEFAULT 0,
    enable BOOLEAN DEFAULT true
);
CREATE TABLE logs (
    id BIGINT PRIMARY KEY, user_id BIGINT, created_at BIGINT, "type" BIGINT, content TEXT,
    username VARCHAR(191) DEFAULT '', token_name VARCHAR(191) DEFAULT '',
    model_name VARCHAR(191) DEFAULT '', quota BIGINT DEFAULT 0, prompt_tokens BIGINT DEFAULT 0,
    completion_tokens BIGINT DEFAULT 0, channel_id BIGINT, request_time BIGINT DEFAULT 0,
    is_stream BOOLEAN DEFAULT false, source_ip VARCHAR(191) DEFAULT '', metadata JSON
);
"#;

fn one_hub_source(backend: Backend) -> Option<SourceDb> {
    let src = SourceDb::server(backend)?;
    src.exec(ONE_HUB_SCHEMA);
    let bob = go_bcrypt("bob-password-1");
    src.exec(&format!(
        r#"
INSERT INTO users (id, username, password, display_name, role, status, email, avatar_url,
    telegram_id, quota, used_quota, request_count, "group", aff_code, aff_count, aff_quota,
    aff_history, inviter_id, last_login_time, created_time, deleted_at)
VALUES
 (5, 'bob', '{bob}', 'Bob', 10, 1, 'bob@example.com', 'https://img/bob.png', 12345, 900, 100, 9,
  'vip', 'bobc', 2, 300, 600, 0, 1700001000, 1690000000, NULL),
 (6, 'carol', '{bob}', 'Carol', 1, 1, '', '', 0, 0, 0, 0, 'default', 'caro', 0, 0, 0, 5, 0,
  1690000000, '2024-01-02 03:04:05');
INSERT INTO tokens (id, user_id, "key", status, name, created_time, accessed_time, expired_time,
    remain_quota, unlimited_quota, used_quota, "group", setting, deleted_at)
VALUES
 (7, 5, '{HUB_KEY}', 1, 'bob key', 1700000000, 0, 1900000000, 0, true, 3, 'vip',
  '{{"heartbeat":{{"enabled":true,"timeout_seconds":45}},"limits":{{"limit_model_setting":{{"enabled":true,"models":["gpt-4o","claude-3"]}},"limits_ip_setting":{{"enabled":true,"whitelist":["192.168.1.0/24"]}}}}}}',
  NULL),
 (8, 5, 'deletedkey0123456789abcdefghijklmnopqrstuvwxyzAB', 1, 'gone', 1700000000, 0, -1, 0,
  false, 0, '', NULL, '2024-01-02 03:04:05');
INSERT INTO channels (id, "type", "key", status, name, weight, created_time, test_time,
    response_time, base_url, other, balance, balance_updated_time, models, "group", tag,
    used_quota, model_mapping, model_headers, custom_parameter, priority, proxy, test_model,
    only_chat, pre_cost, disabled_stream, deleted_at)
VALUES
 (11, 28, 'sk-deepseek', 1, 'deepseek', 3, 1700000000, 0, 0, '', '', 0, 0,
  'deepseek-chat,deepseek-reasoner', 'default', 'cn', 0, '', '{{"X-Trace":"1"}}',
  '{{"temperature":0.2}}', 5, 'socks5://127.0.0.1:1080', 'deepseek-chat', true, 1,
  '["deepseek-reasoner"]', NULL),
 (12, 1, 'sk-old', 1, 'removed', 1, 1700000000, 0, 0, '', '', 0, 0, 'gpt-4o', 'default', '', 0,
  '', '', '', 0, '', '', false, 1, NULL, '2024-01-02 03:04:05');
INSERT INTO redemptions (id, user_id, "key", status, name, quota, created_time, redeemed_time)
VALUES (3, 5, 'aaaabbbbccccddddeeeeffff00001111', 1, 'hub gift', 7000, 1700000000, 0);
INSERT INTO options ("key", value) VALUES ('SystemName', 'One Hub'), ('QuotaPerUnit', '500000');
INSERT INTO prices (model, "type", channel_type, input, output, locked, extra_ratios) VALUES
 ('deepseek-chat', 'tokens', 28, 0.14, 0.28, true, '{{"cached_tokens":0.1}}'),
 ('mj-imagine', 'times', 34, 25, 0, false, NULL),
 ('bad-price', 'tokens', 0, 1, 1, false, NULL);
INSERT INTO user_groups (id, symbol, name, ratio, api_rate, public, promotion, min, max, enable)
VALUES
 (1, 'default', 'Default', 1, 600, true, false, 0, 0, true),
 (2, 'vip', 'VIP', 0.9, 1200, false, true, 10, 0, true);
INSERT INTO logs (id, user_id, created_at, "type", content, username, token_name, model_name,
    quota, prompt_tokens, completion_tokens, channel_id, request_time, is_stream, source_ip,
    metadata)
VALUES (1, 5, 1700000400, 2, '', 'bob', 'bob key', 'deepseek-chat', 20, 10, 5, 11, 1200, false,
    '203.0.113.9', '{{"cached_tokens":0}}');
"#
    ));
    if backend != Backend::Mysql {
        // A name equal to bob's but for case (MySQL's collation refuses it in the source).
        src.exec(&format!(
            r#"INSERT INTO users (id, username, password, display_name, "group", aff_code)
               VALUES (9, 'BOB', '{bob}', 'Other Bob', 'default', 'bob2');"#
        ));
    }
    Some(src)
}

#[test]
fn one_hub_import_skips_soft_deleted_rows_and_maps_groups_and_prices() {
    for backend in backends() {
        let Some(src) = one_hub_source(backend) else {
            continue;
        };
        let db = target(backend);
        let opts = Options {
            from: Origin::OneHub,
            source_dsn: src.dsn.clone(),
            dry_run: false,
            with_logs: true,
        };
        let rep = import(&db, &opts);
        println!("{rep}");
        assert!(!rep.has_failures(), "{rep}");
        let s = sealer();
        let mut c = db.conn();

        let bob = users::find_by_login(&mut c, "bob").unwrap_or_else(|e| panic!("{e}"));
        assert!(verify_password("bob-password-1", &bob.password));
        assert_eq!((bob.id, bob.role, bob.telegram_id), (5, 10, 12345));
        assert_eq!(
            (bob.aff_count, bob.aff_quota, bob.aff_history_quota),
            (2, 300, 600)
        );
        assert_eq!(bob.avatar_url, "https://img/bob.png");
        assert!(users::find_by_username(&mut c, "carol").is_err());
        assert!(skipped(&rep, "users", "6").contains("soft-deleted"));
        // Usernames are unique ignoring case: the second one does not land on bob's account.
        if backend != Backend::Mysql {
            assert!(skipped(&rep, "users", "9").contains("ignoring case"));
        }
        assert_eq!(bob.display_name, "Bob");

        let full = format!("sk-{HUB_KEY}");
        let t =
            tokens::find_by_key_hash(&mut c, &key_digest(&full)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.id, 7);
        assert_eq!(
            s.key_box.open(&t.key_ciphertext).as_deref(),
            Some(full.as_str())
        );
        assert_eq!(t.models, "gpt-4o,claude-3");
        assert_eq!(t.subnet, "192.168.1.0/24");
        assert_eq!(t.group_name, "vip");
        assert!(t.unlimited_quota);
        assert_eq!((t.heartbeat_enabled, t.heartbeat_timeout), (true, 45));
        assert!(skipped(&rep, "tokens", "8").contains("soft-deleted"));

        let ch = channels::find(&mut c, 11).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((ch.channel_type, ch.priority, ch.weight), (28, 5, 3));
        assert_eq!(s.secret_box.open(&ch.key).as_deref(), Ok("sk-deepseek"));
        assert_eq!(ch.tag, "cn");
        assert_eq!(ch.proxy, "socks5://127.0.0.1:1080");
        assert_eq!(ch.test_model, "deepseek-chat");
        assert_eq!(ch.custom_headers, r#"{"X-Trace":"1"}"#);
        assert_eq!(ch.disabled_stream, r#"["deepseek-reasoner"]"#);
        let cfg: serde_json::Value =
            serde_json::from_str(&ch.config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cfg["only_chat"], serde_json::json!(true));
        assert_eq!(
            cfg["custom_parameter"]["temperature"],
            serde_json::json!(0.2)
        );
        assert_eq!(
            channels::abilities_of(&mut c, 11)
                .unwrap_or_else(|e| panic!("{e}"))
                .len(),
            2
        );
        assert!(channels::find(&mut c, 12).is_err());
        assert!(skipped(&rep, "channels", "12").contains("soft-deleted"));

        let code = redemptions::find_by_code(&mut c, "aaaabbbbccccddddeeeeffff00001111")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((code.quota, code.user_id), (7000, 5));

        let p = prices::find(&mut c, "deepseek-chat").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (p.input, p.output, p.channel_type, p.locked),
            (0.14, 0.28, 28, true)
        );
        assert!(p.extra_ratios.contains("0.1"), "{}", p.extra_ratios);
        let p = prices::find(&mut c, "mj-imagine").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((p.price_type.as_str(), p.input), ("times", 25.0));
        assert!(!skipped(&rep, "prices", "bad-price").is_empty());

        let vip = user_groups::find_by_symbol(&mut c, "vip").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (vip.name.as_str(), vip.ratio, vip.api_rate),
            ("VIP", 0.9, 1200)
        );
        assert!(vip.promotion && !vip.public);
        assert_eq!((vip.min_topup, vip.max_topup), (5_000_000, 0));

        let logs = switchboard_store::logs::recent_for_user(&mut c, 5, 10)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(logs.len(), 1);
        assert_eq!(
            (
                logs[0].source_ip.as_str(),
                logs[0].use_time_ms,
                logs[0].channel_id
            ),
            ("203.0.113.9", 1200, 11)
        );
        drop(c);

        let again = import(&db, &opts);
        assert_eq!(again.changes(), 0, "second run changed something:\n{again}");
    }
}

#[test]
fn unreadable_sources_are_clear_errors() {
    let db = TestDb::sqlite();
    let mut c = db.conn();
    let missing = Options {
        from: Origin::OneApi,
        source_dsn: "/nonexistent/one-api.db".into(),
        dry_run: true,
        with_logs: false,
    };
    let e = run(&missing, &mut c, &sealer())
        .err()
        .unwrap_or_else(|| panic!("a missing file must fail"));
    assert!(e.to_string().contains("no SQLite database file"), "{e}");

    let bad = Options {
        source_dsn: "redis://localhost/0".into(),
        ..missing.clone()
    };
    let e = run(&bad, &mut c, &sealer())
        .err()
        .unwrap_or_else(|| panic!("an unsupported scheme must fail"));
    assert!(e.to_string().contains("unsupported scheme"), "{e}");

    // A SQLite file that is not a one-api database.
    let other = SourceDb::sqlite();
    other.exec("CREATE TABLE something (id BIGINT PRIMARY KEY);");
    let e = run(
        &Options {
            source_dsn: other.dsn.clone(),
            ..missing
        },
        &mut c,
        &sealer(),
    )
    .err()
    .unwrap_or_else(|| panic!("a database without users must fail"));
    assert!(e.to_string().contains("no users table"), "{e}");

    let e = "new-api"
        .parse::<Origin>()
        .err()
        .unwrap_or_else(|| panic!("unknown source accepted"));
    assert!(e.contains("one-api") && e.contains("one-hub"), "{e}");
}

#[test]
fn dry_run_on_an_unmigrated_sqlite_target_leaves_it_empty() {
    let Some(src) = one_api_source(Backend::Sqlite) else {
        return;
    };
    let path = std::env::temp_dir().join(format!("{}.db", unique("empty_target")));
    let (pool, _) = switchboard_store::conn::connect(&path.display().to_string(), 1)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut c = pool.get().unwrap_or_else(|e| panic!("{e}"));
    let rep =
        run(&one_api_opts(&src, true, false), &mut c, &sealer()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rep.kind("users").map(|k| k.inserted), Some(2));
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    use diesel::RunQueryDsl;
    let tables: Vec<N> = diesel::sql_query("SELECT COUNT(*) AS n FROM sqlite_master")
        .load(&mut *c)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tables[0].n, 0, "the dry run left tables behind");
    drop(c);
    drop(pool);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

#[test]
fn a_row_the_database_refuses_is_reported_and_the_others_go_on() {
    for backend in backends() {
        let Some(src) = one_api_source(backend) else {
            continue;
        };
        src.exec(
            r#"INSERT INTO logs (id, user_id, created_at, "type", content, model_name, quota)
               VALUES (3, 2, 1700000500, 2, '', 'gpt-4o', 1);"#,
        );
        let db = target(backend);
        // The target refuses this one row (a trigger), as a database refuses a value.
        switchboard_store::testing::refuse_log_request_id(&mut db.conn(), "import:one-api:3");
        let rep = import(&db, &one_api_opts(&src, false, true));
        assert!(!rep.has_failures(), "{rep}");
        let logs = rep.kind("logs").unwrap_or_else(|| panic!("{rep}"));
        assert_eq!(logs.inserted, 2, "{rep}");
        assert!(skipped(&rep, "logs", "3").contains("refused"), "{rep}");
        // The rest of the kind was committed; a second run still reports the refused row.
        let again = import(&db, &one_api_opts(&src, false, true));
        assert_eq!(again.changes(), 0, "{again}");
        assert!(skipped(&again, "logs", "3").contains("refused"));
    }
}

// ---------------------------------------------------------------------------------------------
// A hostile source: the API's rules hold for what the import writes.

fn hostile_source(backend: Backend) -> Option<SourceDb> {
    let src = SourceDb::server(backend)?;
    src.exec(ONE_API_SCHEMA);
    let pw = go_bcrypt("hostile-password-1");
    // 'rооt' below is written with two Cyrillic o (U+043E).
    src.exec(&format!(
        r#"
INSERT INTO users (id, username, password, display_name, role, status, email, quota, "group")
VALUES
 (1, 'root', '{pw}', 'Root', 100, 1, '', 1000, 'default'),
 (2, 'mallory', '{pw}', 'Mallory', 1000, 1, '', 1000, 'default'),
 (3, 'r{o}{o}t', '{pw}', 'Look-alike', 100, 1, '', 1000, 'default'),
 (4, 'eve', '{pw}', 'Eve', 1, 1, '', {min}, 'default'),
 (5, 'trent', '{pw}', 'Second root', 100, 1, '', 1000, 'default'),
 (6, 'peggy', '{pw}', 'Peggy', 1, 7, '', 1000, 'default'),
 (7, 'victor', '{pw}', 'Victor', 10, 1, 'not an address', 1000, 'default'),
 (8, 'walter', '{pw}', 'Walter', 1, 1, '', 1000, 'bad group'),
 (9, 'alice', '{pw}', 'Alice', 1, 1, 'alice@example.com', 5000, 'default');
INSERT INTO tokens (id, user_id, "key", status, name, created_time, accessed_time, expired_time,
    remain_quota, unlimited_quota, used_quota, models, subnet)
VALUES
 (1, 9, '{ALICE_KEY}', 1, 'spent unlimited', 1700000000, 0, -1, -4200, true, 4200, '', ''),
 (2, 9, 'ZZZZEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl', 1, 'huge', 1700000000, 0, -1,
  {max}, false, 0, '', '');
INSERT INTO channels (id, "type", "key", status, name, weight, created_time, base_url, models,
    "group", model_mapping, priority, config)
VALUES
 (1, 1, 'sk-file', 1, 'file-url', 1, 1700000000, 'file:///etc/passwd', 'gpt-4o', 'default', '',
  0, ''),
 (2, 42, '{{"type":"service_account"}}', 1, 'vertex-evil', 1, 1700000000, '', 'gemini-1.5-pro',
  'default', '', 0, '{{"region":"../../evil"}}'),
 (3, 33, 'AKID|SECRET|../../evil', 1, 'bedrock-evil', 1, 1700000000, '', 'claude-3-haiku',
  'default', '', 0, ''),
 (4, 1, 'sk-good', 1, 'good', 0, 1700000000, '', 'gpt-4o', 'default', '', 0, ''),
 (5, 1, 'sk-meta', 1, 'metadata', 1, 1700000000, 'http://169.254.169.254', 'gpt-4o',
  'default', '', 0, '');
INSERT INTO redemptions (id, user_id, "key", status, name, quota, created_time, redeemed_time)
VALUES
 (1, 1, '0123456789abcdef0123456789abcdef', 1, 'negative', {min}, 1700000000, 0),
 (2, 1, 'fedcba9876543210fedcba9876543210', 1, 'huge', {max}, 1700000000, 0),
 (3, 1, 'aaaabbbbccccddddeeeeffff00001111', 1, 'fine', 5000, 1700000000, 0);
"#,
        o = '\u{043E}',
        min = i64::MIN,
        max = i64::MAX,
    ));
    Some(src)
}

#[test]
fn hostile_rows_are_refused_by_the_apis_rules_and_named_in_the_report() {
    for backend in backends() {
        let Some(src) = hostile_source(backend) else {
            continue;
        };
        let db = target(backend);
        let rep = import(&db, &one_api_opts(&src, false, false));
        println!("{rep}");
        assert!(!rep.has_failures(), "{rep}");
        let mut c = db.conn();

        // Users: only the API's roles, usernames, statuses, quotas, addresses and groups; one
        // root.
        assert!(skipped(&rep, "users", "2").contains("role 1000"), "{rep}");
        assert!(skipped(&rep, "users", "3").contains("username"), "{rep}");
        assert!(skipped(&rep, "users", "4").contains("quota"), "{rep}");
        assert!(skipped(&rep, "users", "5").contains("root"), "{rep}");
        assert!(skipped(&rep, "users", "6").contains("status"), "{rep}");
        assert!(skipped(&rep, "users", "7").contains("email"), "{rep}");
        assert!(skipped(&rep, "users", "8").contains("group"), "{rep}");
        for name in ["mallory", "eve", "trent", "peggy", "victor", "walter"] {
            assert!(users::find_by_username(&mut c, name).is_err(), "{name}");
        }
        assert!(users::find_by_username(&mut c, "r\u{043E}\u{043E}t").is_err());
        assert_eq!(
            users::count_with_role_at_least(&mut c, 100).unwrap_or_else(|e| panic!("{e}")),
            1
        );
        let alice = users::find_by_username(&mut c, "alice").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((alice.role, alice.quota), (1, 5000));

        // Keys: a spent unlimited key's negative remainder is 0; a limited key's remainder is
        // bounded like every quota.
        let t = tokens::find_by_key_hash(&mut c, &key_digest(&format!("sk-{ALICE_KEY}")))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.remain_quota, t.used_quota), (0, 4200));
        assert!(
            skipped(&rep, "tokens", "2").contains("remain_quota"),
            "{rep}"
        );

        // Channels: the API's channel rules (http(s) base URL, region names) and the outbound
        // URL policy (a destination root did not set reaches public addresses only).
        assert!(skipped(&rep, "channels", "1").contains("base_url"), "{rep}");
        assert!(skipped(&rep, "channels", "2").contains("region"), "{rep}");
        assert!(skipped(&rep, "channels", "3").contains("region"), "{rep}");
        for id in [1, 2, 3] {
            assert!(channels::find(&mut c, id).is_err(), "channel {id}");
        }
        let good = channels::find(&mut c, 4).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            good.weight, 1,
            "one-api's weight 0 is the API's least weight"
        );
        assert_eq!(good.base_url, "https://api.openai.com");
        let meta = channels::find(&mut c, 5).unwrap_or_else(|e| panic!("{e}"));
        assert!(!good.destination_by_root && !meta.destination_by_root);

        // Codes: quota 0 to the API's ceiling.
        assert!(skipped(&rep, "redemptions", "1").contains("quota"), "{rep}");
        assert!(skipped(&rep, "redemptions", "2").contains("quota"), "{rep}");
        assert!(
            redemptions::find_by_code(&mut c, "aaaabbbbccccddddeeeeffff00001111").is_ok(),
            "{rep}"
        );
        drop(c);

        // A second run refuses the same rows and changes nothing.
        let again = import(&db, &one_api_opts(&src, false, false));
        assert_eq!(again.changes(), 0, "{again}");
        assert!(skipped(&again, "users", "5").contains("root"), "{again}");
    }
}

#[test]
fn one_api_built_in_completion_ratios_fill_what_the_setting_leaves_out() {
    for backend in backends() {
        let Some(src) = SourceDb::server(backend) else {
            continue;
        };
        src.exec(ONE_API_SCHEMA);
        src.exec(
            r#"INSERT INTO options ("key", value) VALUES
 ('ModelRatio', '{"gpt-4o":1.25,"gpt-4":15,"gpt-3.5-turbo":0.25,"gpt-3.5-turbo-16k":1.5,"claude-3-5-sonnet-20241022":1.5,"claude-2.1":4,"gemini-1.5-pro":1.25,"my-model":2,"o1-mini":1.5}'),
 ('CompletionRatio', '{"o1-mini":2}');"#,
        );
        let db = target(backend);
        let rep = import(&db, &one_api_opts(&src, false, false));
        println!("{rep}");
        let mut c = db.conn();
        for (model, input, output) in [
            ("gpt-4o", 1.25, 5.0),
            ("gpt-4", 15.0, 30.0),
            ("gpt-3.5-turbo", 0.25, 0.75),
            ("gpt-3.5-turbo-16k", 1.5, 2.0),
            ("claude-3-5-sonnet-20241022", 1.5, 7.5),
            ("claude-2.1", 4.0, 12.0),
            ("gemini-1.5-pro", 1.25, 3.75),
            ("my-model", 2.0, 2.0),
            // The setting's own entry wins over the built-in rule (4).
            ("o1-mini", 1.5, 3.0),
        ] {
            let p = prices::find(&mut c, model).unwrap_or_else(|e| panic!("{model}: {e}"));
            assert_eq!((p.input, p.output), (input, output), "{model}\n{rep}");
        }
        // The report names every model whose output ratio came from one-api's built-in rules.
        let notes = rep
            .kind("prices")
            .map(|k| k.notes.join("\n"))
            .unwrap_or_default();
        for listed in [
            "gpt-4o x4",
            "gpt-4 x2",
            "gpt-3.5-turbo x3",
            "claude-3-5-sonnet-20241022 x5",
            "my-model x1",
        ] {
            assert!(notes.contains(listed), "{listed} not in:\n{notes}");
        }
        assert!(!notes.contains("o1-mini x"), "{notes}");
    }
}
