//! `switchboard import` from the command line: the exit codes and messages of a bad source, an
//! unknown `--from`, and a small real import (a one-api SQLite file) then a dry run that finds
//! nothing left to do. The importer itself is tested in crates/import/tests.

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
