//! `switchboard import` from the command line: the exit codes and messages of a bad source, an
//! unknown `--from`, and a small real import (a one-api SQLite file) then a dry run that finds
//! nothing left to do. The importer itself is tested in crates/import/tests.

mod common;

use diesel::connection::SimpleConnection;
use diesel::{Connection, SqliteConnection};
use std::path::PathBuf;
use std::process::{Command, Output};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sb_import_cli_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
    d
}

fn switchboard(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(args)
        .env_clear()
        .env(
            "SQL_DSN",
            format!("sqlite://{}", dir.join("target.db").display()),
        )
        .env("DATA_DIR", dir.join("data"))
        .env("SESSION_SECRET", "cli-import-secret-0123456789")
        .output()
        .unwrap_or_else(|e| panic!("run switchboard: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn unknown_source_kind_is_refused() {
    let d = dir("unknown");
    let o = switchboard(&d, &["import", "--from", "new-api", "--dsn", "x.db"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("one-api") && err.contains("one-hub"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn missing_source_is_a_clear_error() {
    let d = dir("missing");
    let missing = d.join("nope.db");
    let o = switchboard(
        &d,
        &[
            "import",
            "--from",
            "one-api",
            "--dsn",
            &missing.display().to_string(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no SQLite database file"),
        "{}",
        text(&o)
    );
    assert!(!missing.exists(), "the source must not be created");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn imports_then_a_dry_run_finds_nothing_to_do() {
    let d = dir("real");
    let src = d.join("one-api.db");
    let mut c =
        SqliteConnection::establish(&src.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
    c.batch_execute(
        r#"CREATE TABLE users (id BIGINT PRIMARY KEY, username VARCHAR(191), password TEXT NOT NULL,
             display_name VARCHAR(191), role BIGINT, status BIGINT, email VARCHAR(191),
             quota BIGINT, "group" VARCHAR(32));
           CREATE TABLE tokens (id BIGINT PRIMARY KEY, user_id BIGINT, "key" CHAR(48),
             status BIGINT, name VARCHAR(191), expired_time BIGINT, remain_quota BIGINT,
             unlimited_quota BOOLEAN);
           CREATE TABLE channels (id BIGINT PRIMARY KEY, "type" BIGINT, "key" TEXT, status BIGINT,
             name VARCHAR(191), models TEXT, "group" VARCHAR(32));
           CREATE TABLE redemptions (id BIGINT PRIMARY KEY, user_id BIGINT, "key" CHAR(32),
             status BIGINT, name VARCHAR(191), quota BIGINT);
           CREATE TABLE options ("key" VARCHAR(191) PRIMARY KEY, value TEXT);
           INSERT INTO users VALUES (1, 'root', '$2a$04$abcdefghijklmnopqrstuu5b1v4wE.ZG5eM1Km2qGZ0Q9sCpY6Xy.',
             'Root', 100, 1, '', 100, 'default');
           INSERT INTO tokens VALUES (1, 1, 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl', 1,
             'k', -1, 10, false);
           INSERT INTO channels VALUES (1, 1, 'sk-up', 1, 'main', 'gpt-4o', 'default');
           INSERT INTO options VALUES ('SystemName', 'Old');"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    drop(c);
    let dsn = src.display().to_string();
    let o = switchboard(&d, &["import", "--from", "one-api", "--dsn", &dsn]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("users:       inserted 1"), "{}", text(&o));
    assert!(out.contains("tokens:      inserted 1"), "{}", text(&o));
    assert!(out.contains("channels:    inserted 1"), "{}", text(&o));

    let o = switchboard(
        &d,
        &["import", "--from", "one-api", "--dsn", &dsn, "--dry-run"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("dry run: nothing was written"), "{}", text(&o));
    assert!(
        out.contains("would insert 0, would update 0"),
        "{}",
        text(&o)
    );
    assert!(!out.contains("would insert 1"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// A hostile one-api source through the real command and then the real server: the rows the API
/// would refuse are named in the report and absent from the server's answers; prices without a
/// CompletionRatio entry bill output as one-api did (its built-in ratios), not at the input
/// price.
#[test]
fn a_hostile_source_is_refused_row_by_row_and_output_prices_keep_one_apis_ratios() {
    let d = dir("hostile");
    let src = d.join("one-api.db");
    let mut c =
        SqliteConnection::establish(&src.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
    let hash = "$2a$04$abcdefghijklmnopqrstuu5b1v4wE.ZG5eM1Km2qGZ0Q9sCpY6Xy.";
    c.batch_execute(&format!(
        r#"CREATE TABLE users (id BIGINT PRIMARY KEY, username VARCHAR(191), password TEXT NOT NULL,
             display_name VARCHAR(191), role BIGINT, status BIGINT, email VARCHAR(191),
             quota BIGINT, "group" VARCHAR(32));
           CREATE TABLE tokens (id BIGINT PRIMARY KEY, user_id BIGINT, "key" CHAR(48),
             status BIGINT, name VARCHAR(191), expired_time BIGINT, remain_quota BIGINT,
             unlimited_quota BOOLEAN);
           CREATE TABLE channels (id BIGINT PRIMARY KEY, "type" BIGINT, "key" TEXT, status BIGINT,
             name VARCHAR(191), models TEXT, "group" VARCHAR(32), base_url VARCHAR(191),
             config TEXT);
           CREATE TABLE redemptions (id BIGINT PRIMARY KEY, user_id BIGINT, "key" CHAR(32),
             status BIGINT, name VARCHAR(191), quota BIGINT);
           CREATE TABLE options ("key" VARCHAR(191) PRIMARY KEY, value TEXT);
           INSERT INTO users VALUES
             (1, 'root', '{hash}', 'Root', 100, 1, '', 100, 'default'),
             (2, 'mallory', '{hash}', 'Mallory', 1000, 1, '', 100, 'default'),
             (3, 'r{o}{o}t', '{hash}', 'Look-alike', 100, 1, '', 100, 'default'),
             (4, 'eve', '{hash}', 'Eve', 1, 1, '', {min}, 'default');
           INSERT INTO channels VALUES
             (1, 1, 'sk-up', 1, 'main', 'gpt-4', 'default', '', ''),
             (2, 1, 'sk-file', 1, 'file', 'gpt-4', 'default', 'file:///etc/passwd', ''),
             (3, 42, 'vertex-key', 1, 'vertex', 'gemini-1.5-pro', 'default', '',
              '{{"region":"../../evil"}}');
           INSERT INTO redemptions VALUES
             (1, 1, '0123456789abcdef0123456789abcdef', 1, 'minus', {min});
           INSERT INTO options VALUES
             ('ModelRatio', '{{"gpt-4":15,"claude-3-5-sonnet-20241022":1.5,"my-model":2}}');"#,
        o = '\u{043E}',
        min = i64::MIN
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    drop(c);
    let dsn = src.display().to_string();
    let o = switchboard(&d, &["import", "--from", "one-api", "--dsn", &dsn]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    for line in [
        "skipped users id=2: role 1000 is not a Switchboard role",
        "skipped users id=3: username is not valid",
        "skipped users id=4: quota -9223372036854775808 is outside",
        "skipped channels id=2: base_url is not valid",
        "skipped channels id=3: config is not valid: region",
        "skipped redemptions id=1: quota must be between 0 and",
        "gpt-4 x2",
        "claude-3-5-sonnet-20241022 x5",
        "my-model x1",
    ] {
        assert!(out.contains(line), "{line:?} missing:\n{}", text(&o));
    }

    // The server on the imported database.
    let server = common::Server::start(
        "import-hostile",
        &[
            (
                "SQL_DSN",
                format!("sqlite://{}", d.join("target.db").display()),
            ),
            ("SESSION_SECRET", "cli-import-secret-0123456789".to_owned()),
        ],
    );
    let users = server.api(
        reqwest::Method::GET,
        "/api/user?page=1&size=50",
        serde_json::json!({}),
    );
    let items = users["data"]["data"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = items
        .iter()
        .filter_map(|u| u["username"].as_str())
        .collect();
    assert_eq!(names, ["root"], "{users}");
    let prices = server.api(reqwest::Method::GET, "/api/prices", serde_json::json!({}));
    let price = |model: &str| {
        prices["data"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["model"] == model))
            .map(|p| (p["input"].as_f64(), p["output"].as_f64()))
            .unwrap_or_else(|| panic!("{model} not priced: {prices}"))
    };
    assert_eq!(price("gpt-4"), (Some(15.0), Some(30.0)));
    assert_eq!(price("claude-3-5-sonnet-20241022"), (Some(1.5), Some(7.5)));
    assert_eq!(price("my-model"), (Some(2.0), Some(2.0)));
    server.stop();
    let _ = std::fs::remove_dir_all(&d);
}
