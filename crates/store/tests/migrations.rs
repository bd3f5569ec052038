//! Migration round-trip tests for all three backends.
//!
//! For each backend: run the embedded migrations, check every table exists, check
//! that `switchboard_store::schema` matches the SQL exactly (same column count per
//! table, and a fully populated row inserts and loads back through the Diesel
//! schema), revert everything, check the tables are gone, and migrate up again.
//!
//! SQLite always runs (temporary file). PostgreSQL and MySQL/MariaDB run only when
//! `TEST_PG_DSN` / `TEST_MYSQL_DSN` point at an admin DSN, e.g.
//! `postgres://postgres@127.0.0.1:5432/postgres` and `mysql://root@127.0.0.1:3306/mysql`;
//! a throwaway database `sb_mig_<random>` is created there and dropped afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::SimpleConnection;
use diesel::mysql::MysqlConnection;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::SqliteConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use switchboard_store::schema;

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const PG_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");
const MYSQL_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/mysql");

/// Every table the initial migration creates, with its column count in schema.rs.
const TABLES: &[(&str, i64)] = &[
    ("users", 28),
    ("sessions", 7),
    ("verification_codes", 7),
    ("options", 2),
    ("tokens", 22),
    ("channels", 27),
    ("abilities", 7),
    ("redemptions", 9),
    ("logs", 21),
    ("user_groups", 12),
    ("prices", 11),
    ("model_owners", 5),
    ("payment_gateways", 14),
    ("orders", 15),
    ("statistics", 11),
    ("invoices", 12),
    ("tasks", 22),
    ("midjourneys", 20),
    ("telegram_menus", 5),
    ("job_locks", 3),
    ("dead_letters", 10),
    ("response_cache", 7),
    ("response_history", 6),
];

#[derive(QueryableByName)]
struct NameRow {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Backend-specific catalogue queries.
trait Catalog: Connection + MigrationHarness<Self::Backend> + Sized {
    /// Names of all user tables in the current database.
    fn table_names(&mut self) -> Vec<String>;
    /// Number of columns of `table`.
    fn column_count(&mut self, table: &str) -> i64;
    /// Names of all indexes (excluding primary keys) in the current database.
    fn index_names(&mut self) -> Vec<String>;
    /// `(column, type class, nullable)` for every column of `table`, the type class
    /// being one of `bigint`, `int`, `string`, `bool`, `double` (see [`sql_class`]).
    fn column_types(&mut self, table: &str) -> Vec<(String, &'static str, bool)>;
}

#[derive(QueryableByName)]
struct ColumnRow {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    decl: String,
    #[diesel(sql_type = BigInt)]
    nullable: i64,
}

/// Maps a declared SQL type (any backend) to a backend-neutral class.
fn sql_class(decl: &str) -> &'static str {
    let d = decl.to_ascii_lowercase();
    if d.starts_with("bigint") {
        "bigint"
    } else if d == "tinyint(1)" || d == "boolean" {
        "bool"
    } else if d.starts_with("int") {
        "int"
    } else if d.starts_with("varchar")
        || d == "character varying"
        || d == "text"
        || d == "mediumtext"
    {
        "string"
    } else if d == "double" || d == "double precision" || d == "real" {
        "double"
    } else {
        panic!("unexpected SQL column type {decl}")
    }
}

/// Maps the Rust type used for a column in the round trip to `(class, nullable)`.
fn rust_class(ty: &str) -> (&'static str, bool) {
    let ty: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
    let (inner, nullable) = match ty.strip_prefix("Option<").and_then(|t| t.strip_suffix('>')) {
        Some(inner) => (inner.to_owned(), true),
        None => (ty, false),
    };
    let class = match inner.as_str() {
        "i64" => "bigint",
        "i32" => "int",
        "String" => "string",
        "bool" => "bool",
        "f64" => "double",
        other => panic!("unexpected Rust column type {other}"),
    };
    (class, nullable)
}

fn columns_from_rows(rows: Vec<ColumnRow>) -> Vec<(String, &'static str, bool)> {
    rows.into_iter()
        .map(|r| (r.name, sql_class(&r.decl), r.nullable != 0))
        .collect()
}

impl Catalog for SqliteConnection {
    fn table_names(&mut self) -> Vec<String> {
        diesel::sql_query(
            "SELECT name FROM sqlite_master WHERE type = 'table' \
             AND name NOT LIKE 'sqlite_%' AND name <> '__diesel_schema_migrations'",
        )
        .load::<NameRow>(self)
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect()
    }

    fn column_count(&mut self, table: &str) -> i64 {
        diesel::sql_query("SELECT COUNT(*) AS n FROM pragma_table_info(?)")
            .bind::<Text, _>(table)
            .get_result::<CountRow>(self)
            .unwrap()
            .n
    }

    fn index_names(&mut self) -> Vec<String> {
        diesel::sql_query(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'",
        )
        .load::<NameRow>(self)
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect()
    }

    fn column_types(&mut self, table: &str) -> Vec<(String, &'static str, bool)> {
        // `id INTEGER PRIMARY KEY` is SQLite's 64-bit rowid alias (and never NULL).
        let rows = diesel::sql_query(
            "SELECT name, CASE WHEN pk = 1 AND type = 'INTEGER' THEN 'BIGINT' ELSE type END AS decl, \
             CASE WHEN \"notnull\" = 1 OR pk > 0 THEN 0 ELSE 1 END AS nullable \
             FROM pragma_table_info(?)",
        )
        .bind::<Text, _>(table)
        .load::<ColumnRow>(self)
        .unwrap();
        columns_from_rows(rows)
    }
}

impl Catalog for PgConnection {
    fn table_names(&mut self) -> Vec<String> {
        diesel::sql_query(
            "SELECT table_name::text AS name FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' \
             AND table_name <> '__diesel_schema_migrations'",
        )
        .load::<NameRow>(self)
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect()
    }

    fn column_count(&mut self, table: &str) -> i64 {
        diesel::sql_query(
            "SELECT COUNT(*) AS n FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1",
        )
        .bind::<Text, _>(table)
        .get_result::<CountRow>(self)
        .unwrap()
        .n
    }

    fn index_names(&mut self) -> Vec<String> {
        diesel::sql_query(
            "SELECT indexname::text AS name FROM pg_indexes \
             WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey'",
        )
        .load::<NameRow>(self)
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect()
    }

    fn column_types(&mut self, table: &str) -> Vec<(String, &'static str, bool)> {
        let rows = diesel::sql_query(
            "SELECT column_name::text AS name, data_type::text AS decl, \
             CASE WHEN is_nullable = 'YES' THEN 1::bigint ELSE 0::bigint END AS nullable \
             FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1",
        )
        .bind::<Text, _>(table)
        .load::<ColumnRow>(self)
        .unwrap();
        columns_from_rows(rows)
    }
}

impl Catalog for MysqlConnection {
    fn table_names(&mut self) -> Vec<String> {
        diesel::sql_query(
            "SELECT CAST(table_name AS CHAR) AS name FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' \
             AND table_name <> '__diesel_schema_migrations'",
        )
        .load::<NameRow>(self)
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect()
    }

    fn column_count(&mut self, table: &str) -> i64 {
        diesel::sql_query(
            "SELECT COUNT(*) AS n FROM information_schema.columns \
             WHERE table_schema = DATABASE() AND table_name = ?",
        )
        .bind::<Text, _>(table)
        .get_result::<CountRow>(self)
        .unwrap()
        .n
    }

    fn index_names(&mut self) -> Vec<String> {
        diesel::sql_query(
            "SELECT DISTINCT CAST(index_name AS CHAR) AS name FROM information_schema.statistics \
             WHERE table_schema = DATABASE() AND index_name <> 'PRIMARY'",
        )
        .load::<NameRow>(self)
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect()
    }

    fn column_types(&mut self, table: &str) -> Vec<(String, &'static str, bool)> {
        // MariaDB reports `bigint(20)`, MySQL 8 plain `bigint`; sql_class handles both.
        let rows = diesel::sql_query(
            "SELECT CAST(column_name AS CHAR) AS name, CAST(column_type AS CHAR) AS decl, \
             CAST(CASE WHEN is_nullable = 'YES' THEN 1 ELSE 0 END AS SIGNED) AS nullable \
             FROM information_schema.columns \
             WHERE table_schema = DATABASE() AND table_name = ?",
        )
        .bind::<Text, _>(table)
        .load::<ColumnRow>(self)
        .unwrap();
        columns_from_rows(rows)
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn expected_tables() -> Vec<String> {
    sorted(TABLES.iter().map(|(t, _)| (*t).to_owned()).collect())
}

/// Inserts one row with every column set through `schema::$table`, loads the whole
/// row back (`SELECT` of all schema columns, in declaration order) and compares
/// each column. Columns must be listed in schema.rs declaration order.
macro_rules! roundtrip {
    ($conn:expr, $table:ident { $($col:ident : $ty:ty = $val:expr),+ $(,)? }) => {{
        use schema::$table as t;
        // Declared SQL type class and nullability match the Rust/Diesel type.
        let mut actual = $conn.column_types(stringify!($table));
        actual.sort();
        let mut expected: Vec<(String, &'static str, bool)> = vec![$({
            let (class, nullable) = rust_class(stringify!($ty));
            (<t::$col as diesel::Column>::NAME.to_owned(), class, nullable)
        }),+];
        expected.sort();
        assert_eq!(actual, expected, "column types of {}", stringify!($table));
        diesel::insert_into(t::table)
            .values(( $( t::$col.eq::<$ty>($val), )+ ))
            .execute($conn)
            .unwrap_or_else(|e| panic!("insert into {}: {e}", stringify!($table)));
        let row: ( $( $ty, )+ ) = t::table
            .first($conn)
            .unwrap_or_else(|e| panic!("load from {}: {e}", stringify!($table)));
        let ( $( $col, )+ ) = row;
        $(
            let expected: $ty = $val;
            assert_eq!($col, expected, "{}.{}", stringify!($table), stringify!($col));
        )+
    }};
}

fn s(v: &str) -> String {
    v.to_owned()
}

macro_rules! roundtrip_all {
    ($conn:expr) => {{
        let conn = $conn;
        roundtrip!(conn, users {
            id: i64 = 900_000_007,
            username: String = s("alice"),
            password: String = s("$2b$12$hash"),
            display_name: String = s("Alice"),
            role: i32 = 100,
            status: i32 = 2,
            email: String = s("alice@example.com"),
            avatar_url: String = s("https://example.com/a.png"),
            github_id: String = s("gh1"),
            oidc_id: String = s("oidc1"),
            lark_id: String = s("lark1"),
            wechat_id: String = s("wx1"),
            telegram_id: i64 = 1_234_567_890_123,
            access_token_hash: Option<String> = Some(s("ab".repeat(32).as_str())),
            quota: i64 = 5_000_000_000_000,
            used_quota: i64 = -3,
            request_count: i64 = 9,
            group_name: String = s("vip"),
            aff_code: Option<String> = None,
            aff_count: i32 = 4,
            aff_quota: i64 = 5,
            aff_history_quota: i64 = 6,
            inviter_id: i64 = 1,
            total_topup: i64 = 100,
            created_at: i64 = 1_700_000_000,
            updated_at: i64 = 1_700_000_001,
            last_login_at: i64 = 1_700_000_002,
            language: String = s("zh_HK"),
        });
        roundtrip!(conn, sessions {
            id_hash: String = s("cd".repeat(32).as_str()),
            user_id: i64 = 900_000_007,
            created_at: i64 = 1,
            expires_at: i64 = 2,
            last_seen_at: i64 = 3,
            ip: String = s("2001:db8::1"),
            user_agent: String = s("curl/8"),
        });
        roundtrip!(conn, verification_codes {
            id: i64 = 900_000_001,
            purpose: String = s("register"),
            email: String = s("a@b.c"),
            code_hash: String = s("00ff"),
            created_at: i64 = 1,
            expires_at: i64 = 2,
            attempts: i32 = 4,
        });
        roundtrip!(conn, options {
            key: String = s("SystemName"),
            value: String = s("Switchboard ✓ 交换机"),
        });
        roundtrip!(conn, tokens {
            id: i64 = 900_000_001,
            user_id: i64 = 900_000_007,
            name: String = s("default"),
            key_hash: String = s("ef".repeat(32).as_str()),
            key_ciphertext: String = s("ciphertext"),
            key_hint: String = s("sk-...abcd"),
            status: i32 = 1,
            created_at: i64 = 1,
            updated_at: i64 = 2,
            accessed_at: i64 = 3,
            expired_at: i64 = -1,
            remain_quota: i64 = 500,
            unlimited_quota: bool = true,
            used_quota: i64 = 6,
            request_count: i64 = 7,
            group_name: String = s("default"),
            models: String = s("gpt-4o,claude"),
            subnet: String = s("10.0.0.0/8"),
            api_rate: i32 = 60,
            heartbeat_enabled: bool = true,
            heartbeat_timeout: i32 = 30,
            cache_enabled: bool = false,
        });
        roundtrip!(conn, channels {
            id: i64 = 900_000_001,
            channel_type: i32 = 14,
            name: String = s("anthropic"),
            key: String = s("sk-ant"),
            base_url: String = s("https://api.anthropic.com"),
            group_name: String = s("default,vip"),
            models: String = s("claude-3"),
            model_mapping: String = s("{}"),
            priority: i64 = -5,
            weight: i32 = 3,
            tag: String = s("t"),
            proxy: String = s("socks5://p"),
            test_model: String = s("claude-3"),
            status: i32 = 1,
            response_time: i32 = 250,
            test_time: i64 = 11,
            used_quota: i64 = 12,
            balance: i64 = 13_000_000,
            balance_updated_at: i64 = 14,
            custom_headers: String = s("{\"x\":\"y\"}"),
            config: String = s("{\"region\":\"us\"}"),
            disabled_stream: String = s("[]"),
            pre_cost: i32 = 2,
            auto_ban: bool = false,
            created_at: i64 = 15,
            updated_at: i64 = 16,
            destination_by_root: bool = false,
        });
        roundtrip!(conn, abilities {
            group_name: String = s("default"),
            model: String = s("claude-3"),
            channel_id: i64 = 1,
            enabled: bool = true,
            priority: i64 = 10,
            weight: i32 = 2,
            tag: String = s("t"),
        });
        roundtrip!(conn, redemptions {
            id: i64 = 900_000_001,
            user_id: i64 = 900_000_007,
            name: String = s("promo"),
            code: String = s("CODE-1"),
            status: i32 = 1,
            quota: i64 = 1000,
            created_at: i64 = 1,
            redeemed_at: i64 = 0,
            used_user_id: i64 = 0,
        });
        roundtrip!(conn, logs {
            id: i64 = 900_000_001,
            created_at: i64 = 1_700_000_000,
            log_type: i32 = 2,
            user_id: i64 = 900_000_007,
            username: String = s("alice"),
            token_id: i64 = 1,
            token_name: String = s("default"),
            channel_id: i64 = 1,
            model_name: String = s("claude-3"),
            group_name: String = s("default"),
            quota: i64 = 42,
            prompt_tokens: i32 = 100,
            completion_tokens: i32 = 200,
            use_time_ms: i32 = 1500,
            first_response_ms: i32 = 300,
            is_stream: bool = true,
            source_ip: String = s("127.0.0.1"),
            request_id: Option<String> = Some(s("req-1")),
            content: String = s("ok"),
            metadata: String = s("{}"),
            cache_hit: bool = true,
        });
        roundtrip!(conn, user_groups {
            id: i64 = 900_000_001,
            symbol: String = s("vip"),
            name: String = s("VIP"),
            ratio: f64 = 0.75,
            public: bool = true,
            api_rate: i32 = 10,
            promotion: bool = true,
            min_topup: i64 = 5,
            max_topup: i64 = 500,
            enabled: bool = true,
            created_at: i64 = 1,
            updated_at: i64 = 2,
        });
        roundtrip!(conn, prices {
            id: i64 = 900_000_001,
            model: String = s("claude-3"),
            price_type: String = s("times"),
            channel_type: i32 = 14,
            input: f64 = 1.5,
            output: f64 = 7.25,
            extra_ratios: String = s("{}"),
            locked: bool = true,
            created_at: i64 = 1,
            updated_at: i64 = 2,
            max_output_tokens: i64 = 16_384,
        });
        roundtrip!(conn, model_owners {
            id: i64 = 1000,
            name: String = s("Custom"),
            icon: String = s("https://example.com/i.svg"),
            created_at: i64 = 1,
            updated_at: i64 = 2,
        });
        roundtrip!(conn, payment_gateways {
            id: i64 = 900_000_001,
            uuid: String = s("6f1c2d3e-0000-4000-8000-000000000000"),
            name: String = s("Epay"),
            gateway_type: String = s("epay"),
            icon: String = s("alipay"),
            enabled: bool = true,
            fixed_fee: String = s("0.3"),
            percent_fee: String = s("0.029"),
            currency: String = s("CNY"),
            notify_domain: String = s("https://pay.example.com"),
            sort: i64 = 1,
            config: String = s("sealed"),
            created_at: i64 = 1,
            updated_at: i64 = 2,
        });
        roundtrip!(conn, orders {
            id: i64 = 900_000_001,
            trade_no: String = s("T-1"),
            user_id: i64 = 900_000_007,
            gateway_id: i64 = 1,
            gateway_no: String = s("pi_1"),
            amount: i64 = 10,
            discount: String = s("0.9"),
            fee: String = s("3.29"),
            order_amount: String = s("68.99"),
            currency: String = s("CNY"),
            quota: i64 = 5_000_000,
            status: i32 = 2,
            created_at: i64 = 1,
            expires_at: i64 = 1_801,
            paid_at: i64 = 60,
        });
        roundtrip!(conn, statistics {
            id: i64 = 900_000_001,
            day: i64 = 1_699_920_000,
            user_id: i64 = 900_000_007,
            channel_id: i64 = 1,
            model_name: String = s("claude-3"),
            request_count: i64 = 3,
            quota: i64 = 4,
            prompt_tokens: i64 = 5_000_000_000,
            completion_tokens: i64 = 6,
            request_time_ms: i64 = 7,
            cache_hits: i64 = 8,
        });
        roundtrip!(conn, response_cache {
            cache_key: String = s(&"ab".repeat(32)),
            user_id: i64 = 900_000_007,
            model_name: String = s("gpt-4o"),
            // Larger than MySQL's TEXT (64 KiB): the column is MEDIUMTEXT there.
            body: String = "x".repeat(70_000),
            usage_json: String = s("{\"prompt_tokens\":1}"),
            created_at: i64 = 1_700_000_000,
            expires_at: i64 = 1_700_000_300,
        });
        roundtrip!(conn, response_history {
            response_id: String = s(&format!("resp_{}", "ab".repeat(16))),
            user_id: i64 = 900_000_007,
            model_name: String = s("claude-sonnet-4-5"),
            // Larger than MySQL's TEXT (64 KiB): the column is MEDIUMTEXT there.
            items: String = "x".repeat(70_000),
            created_at: i64 = 1_700_000_000,
            expires_at: i64 = 1_702_592_000,
        });
        roundtrip!(conn, invoices {
            id: i64 = 900_000_001,
            user_id: i64 = 900_000_007,
            month: String = s("2026-11"),
            status: i32 = 2,
            quota: i64 = 1,
            request_count: i64 = 2,
            prompt_tokens: i64 = 3,
            completion_tokens: i64 = 4,
            request_time_ms: i64 = 5,
            model_details: String = s("[]"),
            created_at: i64 = 6,
            paid_at: i64 = 7,
        });
        roundtrip!(conn, tasks {
            id: i64 = 900_000_001,
            task_id: String = s("task-1"),
            platform: String = s("suno"),
            user_id: i64 = 900_000_007,
            channel_id: i64 = 1,
            quota: i64 = 2,
            action: String = s("MUSIC"),
            status: String = s("SUCCESS"),
            fail_reason: String = s(""),
            submit_time: i64 = 3,
            start_time: i64 = 4,
            finish_time: i64 = 5,
            progress: String = s("100%"),
            properties: String = s("{}"),
            data: String = s("{}"),
            created_at: i64 = 6,
            updated_at: i64 = 7,
            token_id: i64 = 8,
            prompt: String = s("a cat"),
            prompt_en: String = s("a cat"),
            image_url: String = s("https://example.com/cat.png"),
            refunded: bool = true,
        });
        roundtrip!(conn, midjourneys {
            id: i64 = 900_000_001,
            code: i32 = 1,
            user_id: i64 = 900_000_007,
            action: String = s("IMAGINE"),
            mj_id: String = s("mj-1"),
            prompt: String = s("a cat"),
            prompt_en: String = s("a cat"),
            description: String = s("submitted"),
            state: String = s(""),
            submit_time: i64 = 2,
            start_time: i64 = 3,
            finish_time: i64 = 4,
            image_url: String = s("https://example.com/cat.png"),
            status: String = s("SUCCESS"),
            progress: String = s("100%"),
            fail_reason: String = s(""),
            channel_id: i64 = 1,
            quota: i64 = 5,
            buttons: String = s("[]"),
            properties: String = s("{}"),
        });
        roundtrip!(conn, telegram_menus {
            id: i64 = 900_000_001,
            command: String = s("start"),
            description: String = s("Start"),
            parse_mode: String = s("Markdown"),
            reply_message: String = s("Hello"),
        });
        roundtrip!(conn, job_locks {
            name: String = s("statistics"),
            holder: String = s("node-1"),
            expires_at: i64 = 99,
        });
        roundtrip!(conn, dead_letters {
            id: i64 = 900_000_001,
            created_at: i64 = 1_700_000_000,
            kind: String = s("consume"),
            request_id: Option<String> = Some(s("req-1")),
            user_id: i64 = 900_000_007,
            token_id: i64 = 1,
            quota: i64 = 5_000_000_000,
            reason: String = s("value too long for type character varying(255)"),
            payload: String = s("{\"model_name\":\"m\\u0000\"}"),
            resolved_at: i64 = 0,
        });
    }};
}

/// Column defaults and autoincrement: a user inserted with only the required
/// columns gets the documented defaults and a generated id.
macro_rules! check_defaults {
    ($conn:expr) => {{
        use schema::users::dsl as u;
        let conn = $conn;
        diesel::insert_into(u::users)
            .values((u::username.eq("bob"), u::password.eq("x")))
            .execute(conn)
            .unwrap();
        let (
            id,
            display_name,
            role,
            status,
            group_name,
            access_token_hash,
            aff_code,
            quota,
            created_at,
        ): (
            i64,
            String,
            i32,
            i32,
            String,
            Option<String>,
            Option<String>,
            i64,
            i64,
        ) = u::users
            .filter(u::username.eq("bob"))
            .select((
                u::id,
                u::display_name,
                u::role,
                u::status,
                u::group_name,
                u::access_token_hash,
                u::aff_code,
                u::quota,
                u::created_at,
            ))
            .first(conn)
            .unwrap();
        assert!(id > 0 && id != 900_000_007, "generated id, got {id}");
        assert_eq!(
            (
                display_name.as_str(),
                role,
                status,
                group_name.as_str(),
                quota,
                created_at
            ),
            ("", 1, 1, "default", 0, 0)
        );
        assert_eq!((access_token_hash, aff_code), (None, None));

        // Unique username.
        let dup = diesel::insert_into(u::users)
            .values((u::username.eq("bob"), u::password.eq("y")))
            .execute(conn);
        assert!(dup.is_err(), "duplicate username must be rejected");

        // Token defaults (booleans, negative default).
        {
            use schema::tokens::dsl as t;
            diesel::insert_into(t::tokens)
                .values((
                    t::user_id.eq(id),
                    t::key_hash.eq("k2"),
                    t::key_ciphertext.eq(""),
                    t::created_at.eq(1_i64),
                    t::updated_at.eq(1_i64),
                    t::models.eq(""),
                    t::subnet.eq(""),
                ))
                .execute(conn)
                .unwrap();
            let got: (i32, i64, bool, bool, i32, bool) = t::tokens
                .filter(t::key_hash.eq("k2"))
                .select((
                    t::status,
                    t::expired_at,
                    t::unlimited_quota,
                    t::heartbeat_enabled,
                    t::heartbeat_timeout,
                    t::cache_enabled,
                ))
                .first(conn)
                .unwrap();
            assert_eq!(got, (1, -1, false, false, 30, false));
        }

        // Several NULL request_ids are allowed; a repeated non-NULL one is not.
        {
            use schema::logs::dsl as l;
            for rid in [None, None, Some("req-2")] {
                diesel::insert_into(l::logs)
                    .values((
                        l::created_at.eq(1_i64),
                        l::log_type.eq(1),
                        l::user_id.eq(id),
                        l::request_id.eq(rid),
                        l::content.eq(""),
                        l::metadata.eq(""),
                    ))
                    .execute(conn)
                    .unwrap();
            }
            let dup = diesel::insert_into(l::logs)
                .values((
                    l::created_at.eq(1_i64),
                    l::log_type.eq(1),
                    l::user_id.eq(id),
                    l::request_id.eq(Some("req-2")),
                    l::content.eq(""),
                    l::metadata.eq(""),
                ))
                .execute(conn);
            assert!(dup.is_err(), "duplicate request_id must be rejected");
        }

        // Abilities composite primary key.
        {
            use schema::abilities::dsl as a;
            let dup = diesel::insert_into(a::abilities)
                .values((
                    a::group_name.eq("default"),
                    a::model.eq("claude-3"),
                    a::channel_id.eq(1_i64),
                ))
                .execute(conn);
            assert!(
                dup.is_err(),
                "duplicate ability primary key must be rejected"
            );
        }

        // A join across tables compiles and runs (allow_tables_to_appear_in_same_query!).
        let n: i64 = schema::tokens::table
            .inner_join(schema::users::table.on(schema::users::id.eq(schema::tokens::user_id)))
            .count()
            .get_result(conn)
            .unwrap();
        assert_eq!(n, 2, "tokens joined to their users");
    }};
}

/// Index names every backend must have (primary keys excluded).
const INDEXES: &[&str] = &[
    "uq_users_username",
    "idx_users_email",
    "idx_users_github_id",
    "idx_users_oidc_id",
    "idx_users_lark_id",
    "idx_users_wechat_id",
    "idx_users_telegram_id",
    "uq_users_access_token_hash",
    "uq_users_aff_code",
    "idx_users_inviter_id",
    "idx_sessions_user_id",
    "idx_sessions_expires_at",
    "uq_verification_codes_purpose_email",
    "uq_tokens_key_hash",
    "idx_tokens_user_id_id",
    "idx_channels_type",
    "idx_channels_tag",
    "idx_channels_status",
    "idx_abilities_channel_id",
    "idx_redemptions_name",
    "uq_redemptions_code",
    "idx_redemptions_status",
    "idx_response_cache_created_at",
    "idx_response_cache_expires_at",
    "idx_response_history_expires_at",
    "uq_logs_request_id",
    "idx_logs_created_at_id",
    "idx_logs_user_id_created_at",
    "idx_logs_type_created_at",
    "idx_logs_token_id_created_at",
    "idx_logs_channel_id_created_at",
    "idx_logs_model_name_created_at",
    "idx_logs_token_name_created_at",
    "idx_logs_username_created_at",
    "idx_logs_user_id_type_created_at",
    "uq_user_groups_symbol",
    "uq_prices_model",
    "uq_payment_gateways_uuid",
    "uq_orders_trade_no",
    "idx_orders_user_id_id",
    "idx_orders_status_expires_at",
    "uq_statistics_day_user_id_channel_id_model_name",
    "idx_statistics_user_id_day",
    "uq_invoices_user_id_month",
    "idx_tasks_user_id_platform_id",
    "idx_tasks_platform_id",
    "idx_tasks_channel_id_id",
    "idx_tasks_platform_task_id",
    "idx_tasks_status",
    "idx_midjourneys_user_id",
    "idx_midjourneys_mj_id",
    "idx_midjourneys_status",
    "uq_telegram_menus_command",
    "idx_dead_letters_created_at",
    "idx_dead_letters_resolved_at",
    "idx_dead_letters_request_id",
];

fn check_structure<C: Catalog>(conn: &mut C) {
    assert_eq!(
        sorted(conn.table_names()),
        expected_tables(),
        "tables after migrating up"
    );
    for (table, cols) in TABLES {
        assert_eq!(
            conn.column_count(table),
            *cols,
            "column count of {table} (SQL vs schema.rs)"
        );
    }
    let mut expected: Vec<String> = INDEXES.iter().map(|s| (*s).to_owned()).collect();
    expected.sort();
    assert_eq!(sorted(conn.index_names()), expected, "index names");
}

/// `EmbeddedMigrations` is neither `Copy` nor `Clone`, so the migration set is
/// passed as a constructor (`|| SQLITE_MIGRATIONS`).
type Migrations = fn() -> EmbeddedMigrations;

fn migrate_up<C: Catalog>(conn: &mut C, migrations: Migrations) {
    let applied = conn.run_pending_migrations(migrations()).unwrap();
    assert!(!applied.is_empty(), "expected pending migrations");
    assert!(!conn.has_pending_migration(migrations()).unwrap());
}

fn migrate_down<C: Catalog>(conn: &mut C, migrations: Migrations) {
    conn.revert_all_migrations(migrations()).unwrap();
    assert_eq!(
        conn.table_names(),
        Vec::<String>::new(),
        "tables left after revert_all_migrations"
    );
    assert!(
        conn.index_names().is_empty(),
        "indexes left after revert_all_migrations"
    );
}

macro_rules! full_cycle {
    ($conn:expr, $migrations:expr) => {{
        let conn = $conn;
        let migrations: Migrations = || $migrations;
        migrate_up(conn, migrations);
        check_structure(conn);
        roundtrip_all!(&mut *conn);
        check_defaults!(&mut *conn);
        migrate_down(conn, migrations);
        // Up again on the reverted database (down.sql really removed everything).
        migrate_up(conn, migrations);
        check_structure(conn);
        roundtrip_all!(&mut *conn);
        migrate_down(conn, migrations);
    }};
}

fn unique_suffix() -> String {
    format!("{}_{:08x}", std::process::id(), rand::random::<u32>())
}

/// Replaces the database (path) part of a `scheme://user@host:port/db?query` DSN.
fn with_database(dsn: &str, db: &str) -> String {
    let (base, query) = match dsn.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (dsn, String::new()),
    };
    let authority_start = base.find("://").map(|i| i + 3).unwrap_or(0);
    let root = match base[authority_start..].find('/') {
        Some(i) => &base[..authority_start + i],
        None => base,
    };
    format!("{root}/{db}{query}")
}

#[test]
fn dsn_rewrite() {
    assert_eq!(
        with_database("postgres://postgres@127.0.0.1:5432/postgres", "x"),
        "postgres://postgres@127.0.0.1:5432/x"
    );
    assert_eq!(
        with_database("mysql://root@127.0.0.1:3306", "x"),
        "mysql://root@127.0.0.1:3306/x"
    );
    assert_eq!(
        with_database("postgres://u:p@h/db?sslmode=disable", "x"),
        "postgres://u:p@h/x?sslmode=disable"
    );
}

struct TempSqlite(std::path::PathBuf);

impl Drop for TempSqlite {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut p = self.0.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

#[test]
fn sqlite_migrations() {
    let path = std::env::temp_dir().join(format!("sb_mig_{}.db", unique_suffix()));
    let guard = TempSqlite(path);
    let url = guard.0.to_str().expect("utf-8 temp path").to_owned();
    let mut conn = SqliteConnection::establish(&url).unwrap();
    conn.batch_execute("PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL;")
        .unwrap();
    full_cycle!(&mut conn, SQLITE_MIGRATIONS);
    drop(conn);
    drop(guard);
}

/// Drops the throwaway database on scope exit (also when the test panics).
struct TempDb<F: FnMut(&str)> {
    name: String,
    drop_db: F,
}

impl<F: FnMut(&str)> Drop for TempDb<F> {
    fn drop(&mut self) {
        (self.drop_db)(&self.name);
    }
}

#[test]
fn postgres_migrations() {
    let Ok(admin_dsn) = std::env::var("TEST_PG_DSN") else {
        println!("postgres_migrations: TEST_PG_DSN not set, PostgreSQL migrations not tested");
        return;
    };
    let name = format!("sb_mig_{}", unique_suffix());
    let mut admin = PgConnection::establish(&admin_dsn).unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let _guard = TempDb {
        name: name.clone(),
        drop_db: move |n: &str| {
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {n} WITH (FORCE)"));
        },
    };
    let mut conn = PgConnection::establish(&with_database(&admin_dsn, &name)).unwrap();
    full_cycle!(&mut conn, PG_MIGRATIONS);
}

#[test]
fn mysql_migrations() {
    let Ok(admin_dsn) = std::env::var("TEST_MYSQL_DSN") else {
        println!("mysql_migrations: TEST_MYSQL_DSN not set, MySQL/MariaDB migrations not tested");
        return;
    };
    let name = format!("sb_mig_{}", unique_suffix());
    let mut admin = MysqlConnection::establish(&admin_dsn).unwrap();
    admin
        .batch_execute(&format!(
            "CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
        ))
        .unwrap();
    let _guard = TempDb {
        name: name.clone(),
        drop_db: move |n: &str| {
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {n}"));
        },
    };
    let mut conn = MysqlConnection::establish(&with_database(&admin_dsn, &name)).unwrap();
    full_cycle!(&mut conn, MYSQL_MIGRATIONS);
}
