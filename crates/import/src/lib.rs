//! `switchboard import`: brings a one-api or one-hub database into Switchboard's.
//!
//! The source is opened read-only ([`source`]); every kind of row (settings, groups, users, keys,
//! channels, codes, prices, logs) is written to the target in one transaction of its own, and
//! every row inside it in a savepoint, so a row that cannot be written is reported (with its id
//! and the reason) and the others go on, while a crash leaves no kind half-written. A dry run
//! does all of it inside one transaction that is rolled back: the report is the one a real run
//! would print, and nothing is written.
//!
//! Rows are matched to what the target already holds by a natural key (users by username, keys
//! by their digest, channels by id and name, codes by code, settings by key, prices by model,
//! groups by symbol, logs by the request id the import gives them), so a second run changes
//! nothing. docs/deployment.md ("Migrating from one-api or one-hub") has the field mapping.

mod kinds;
pub mod one_api;
mod report;
pub mod source;

use diesel::Connection;
pub use report::{KindReport, Report, Skip};
use std::fmt;
use std::str::FromStr;
use switchboard_api::crypto::{KeyBox, SecretBox};
use switchboard_store::{DbConn, StoreError};

/// Which program wrote the source database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    OneApi,
    OneHub,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Origin::OneApi => "one-api",
            Origin::OneHub => "one-hub",
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Origin {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "one-api" | "oneapi" => Ok(Origin::OneApi),
            "one-hub" | "onehub" => Ok(Origin::OneHub),
            other => Err(format!(
                "unknown source {other:?}: use --from one-api or --from one-hub"
            )),
        }
    }
}

/// What to import from where.
#[derive(Debug, Clone)]
pub struct Options {
    pub from: Origin,
    /// The source database: a SQLite file, `postgres://…` or `mysql://…` (or the Go form
    /// `user:pass@tcp(host:port)/db`).
    pub source_dsn: String,
    pub dry_run: bool,
    pub with_logs: bool,
}

/// Seals what Switchboard keeps sealed at rest, with the server's secret: API keys
/// ([`KeyBox`]), channel keys and secret settings ([`SecretBox`]).
pub struct Sealer {
    pub key_box: KeyBox,
    pub secret_box: SecretBox,
}

impl Sealer {
    /// `secret` is SESSION_SECRET; `previous` SESSION_SECRET_PREVIOUS (to compare with values
    /// already stored under an older secret).
    pub fn new(secret: &[u8], previous: &[Vec<u8>]) -> Sealer {
        Sealer {
            key_box: KeyBox::with_previous(secret, previous),
            secret_box: SecretBox::new(secret, previous),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The source cannot be opened or read.
    #[error("source database: {0}")]
    Source(String),
    /// The target database failed (outside a single row).
    #[error("target database: {0}")]
    Target(#[from] StoreError),
}

impl From<diesel::result::Error> for ImportError {
    fn from(e: diesel::result::Error) -> Self {
        ImportError::Target(StoreError::from(e))
    }
}

enum DryRun {
    Rollback,
    Failed(ImportError),
}

impl From<diesel::result::Error> for DryRun {
    fn from(e: diesel::result::Error) -> Self {
        DryRun::Failed(e.into())
    }
}

/// Imports (or, with `dry_run`, reports what would be imported) from the source into `target`,
/// a Switchboard database (migrated first when it needs it, as the server does at start). An error means the source could not be read at all or the
/// target failed outside a row; problems with single rows, or with one kind, are in the report.
pub fn run(opts: &Options, target: &mut DbConn, sealer: &Sealer) -> Result<Report, ImportError> {
    let mut src = source::Source::open(&opts.source_dsn)?;
    if !src.has_table("users")? {
        return Err(ImportError::Source(format!(
            "no users table: not a {} database",
            opts.from
        )));
    }
    if !opts.dry_run {
        migrate(target)?;
        return kinds::import_all(opts, &mut src, target, sealer);
    }
    mysql_dry_run_check(target)?;
    let mysql = target.backend() == switchboard_store::Backend::Mysql;
    let mut out = None;
    let r = target.transaction::<(), DryRun, _>(|t| {
        if !mysql {
            if let Err(e) = migrate(t) {
                return Err(DryRun::Failed(e));
            }
        }
        match kinds::import_all(opts, &mut src, t, sealer) {
            Ok(rep) => out = Some(rep),
            Err(e) => return Err(DryRun::Failed(e)),
        }
        Err(DryRun::Rollback)
    });
    match (r, out) {
        (Err(DryRun::Rollback), Some(rep)) => Ok(rep),
        (Err(DryRun::Failed(e)), _) => Err(e),
        _ => Err(ImportError::Source("dry run ended unexpectedly".into())),
    }
}

/// Whether the target still needs migrations.
fn pending_migrations(conn: &mut DbConn) -> Result<bool, ImportError> {
    use diesel_migrations::MigrationHarness;
    use switchboard_store::conn::{MYSQL_MIGRATIONS, POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS};
    Ok(match conn {
        DbConn::Sqlite(c) => c.has_pending_migration(SQLITE_MIGRATIONS),
        DbConn::Pg(c) => c.has_pending_migration(POSTGRES_MIGRATIONS),
        DbConn::Mysql(c) => c.has_pending_migration(MYSQL_MIGRATIONS),
    }
    .map_err(|e| StoreError::Migration(e.to_string()))?)
}

/// Brings the target's schema up to date, as the server does at start. A dry run does this
/// inside the transaction it rolls back: SQLite and PostgreSQL roll DDL back. MySQL commits DDL
/// at once (which would also end that transaction), so there a dry run checks beforehand
/// ([`mysql_dry_run_check`]) and never migrates.
fn migrate(conn: &mut DbConn) -> Result<(), ImportError> {
    switchboard_store::conn::run_migrations(conn)?;
    Ok(())
}

/// A dry run on MySQL refuses a target that still needs migrations (see [`migrate`]).
fn mysql_dry_run_check(conn: &mut DbConn) -> Result<(), ImportError> {
    if conn.backend() == switchboard_store::Backend::Mysql && pending_migrations(conn)? {
        return Err(ImportError::Target(StoreError::Config(
            "the target database (SQL_DSN) is not migrated yet, and MySQL cannot roll a \
             migration back, so a dry run (which writes nothing) cannot go on: start \
             switchboard once, or run the import without --dry-run"
                .into(),
        )));
    }
    Ok(())
}
