//! Connections, the pool and embedded migrations for the three backends.

use crate::error::{StoreError, StoreResult};
use diesel::connection::SimpleConnection;
use diesel::r2d2::{self, ManageConnection};
use diesel::{Connection, MysqlConnection, PgConnection, SqliteConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use std::time::Duration;

pub const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
pub const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");
pub const MYSQL_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/mysql");

/// One connection to whichever database the DSN names.
#[derive(diesel::MultiConnection)]
pub enum DbConn {
    Sqlite(SqliteConnection),
    Pg(PgConnection),
    Mysql(MysqlConnection),
}

impl DbConn {
    pub fn backend(&self) -> Backend {
        match self {
            DbConn::Sqlite(_) => Backend::Sqlite,
            DbConn::Pg(_) => Backend::Postgres,
            DbConn::Mysql(_) => Backend::Mysql,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    Mysql,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
        }
    }
}

/// A DSN resolved to its backend and the connection string Diesel understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dsn {
    pub backend: Backend,
    pub url: String,
}

impl Dsn {
    /// Accepts `postgres://` / `postgresql://`, `mysql://`, `sqlite://PATH` / `sqlite:PATH`, a plain
    /// file path (SQLite), and the Go driver form the one-api family documents for MySQL
    /// (`user:pass@tcp(host:port)/db?params`), which is rewritten to a `mysql://` URL.
    pub fn parse(dsn: &str) -> StoreResult<Dsn> {
        let dsn = dsn.trim();
        if dsn.is_empty() {
            return Err(StoreError::Config("SQL_DSN is empty".into()));
        }
        let lower = dsn.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            return Ok(Dsn {
                backend: Backend::Postgres,
                url: dsn.to_owned(),
            });
        }
        if lower.starts_with("mysql://") {
            return Ok(Dsn {
                backend: Backend::Mysql,
                url: dsn.to_owned(),
            });
        }
        if let Some(path) = dsn
            .strip_prefix("sqlite://")
            .or_else(|| dsn.strip_prefix("sqlite:"))
        {
            if path.is_empty() {
                return Err(StoreError::Config(
                    "SQL_DSN: sqlite:// needs a file path".into(),
                ));
            }
            return Ok(Dsn {
                backend: Backend::Sqlite,
                url: path.to_owned(),
            });
        }
        if let Some((creds, rest)) = dsn.split_once("@tcp(") {
            let (host, rest) = rest
                .split_once(')')
                .ok_or_else(|| StoreError::Config("SQL_DSN: unclosed tcp( in MySQL DSN".into()))?;
            let db = rest.strip_prefix('/').unwrap_or(rest);
            let db = db.split('?').next().unwrap_or_default();
            return Ok(Dsn {
                backend: Backend::Mysql,
                url: format!("mysql://{creds}@{host}/{db}"),
            });
        }
        if dsn.contains("://") {
            return Err(StoreError::Config(format!(
                "SQL_DSN: unsupported scheme in {:?} (use postgres://, mysql:// or sqlite://)",
                dsn.split("://").next().unwrap_or_default()
            )));
        }
        Ok(Dsn {
            backend: Backend::Sqlite,
            url: dsn.to_owned(),
        })
    }
}

/// Opens connections for the pool and applies per-backend session settings.
#[derive(Debug, Clone)]
pub struct Manager {
    dsn: Dsn,
}

/// Runs `f` (a batch write: the consume-log flush) with SQLite's statement journals in memory
/// (`temp_store = MEMORY`, for this connection and only while `f` runs); other backends: just
/// `f`. Every multi-row `INSERT` inside a transaction keeps the original of each page it
/// changes, in case it fails half-way; past 64 KiB SQLite spills that journal to a temporary
/// file, and the flush wrote two `pwrite`s per changed page to it: measured at c32, 0.56 page
/// writes per consume row to that file against 0.12 to the WAL itself. One 64-row statement
/// changes a few dozen pages, so the journal in memory stays small.
pub fn for_batch_write<T>(
    conn: &mut DbConn,
    f: impl FnOnce(&mut DbConn) -> StoreResult<T>,
) -> StoreResult<T> {
    let DbConn::Sqlite(c) = conn else {
        return f(conn);
    };
    c.batch_execute("PRAGMA temp_store = MEMORY;")?;
    let out = f(conn);
    if let DbConn::Sqlite(c) = conn {
        // What `f` did stands (committed or not) whether or not this works; a connection that
        // keeps the setting only keeps its temporary data in memory.
        if let Err(e) = c.batch_execute("PRAGMA temp_store = DEFAULT;") {
            tracing::warn!("could not restore the SQLite connection's temp_store: {e}");
        }
    }
    out
}

impl ManageConnection for Manager {
    type Connection = DbConn;
    type Error = r2d2::Error;

    fn connect(&self) -> Result<DbConn, r2d2::Error> {
        let url = &self.dsn.url;
        match self.dsn.backend {
            Backend::Sqlite => {
                let mut c =
                    SqliteConnection::establish(url).map_err(r2d2::Error::ConnectionError)?;
                // A page cache of 512 KiB per connection (SQLite's default is 2 MiB): a pool
                // of SQL_MAX_OPEN_CONNS connections would otherwise hold up to 32 MiB of pages
                // that the OS page cache keeps anyway.
                c.batch_execute(
                    "PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; \
                     PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
                     PRAGMA cache_size = -512;",
                )
                .map_err(r2d2::Error::QueryError)?;
                Ok(DbConn::Sqlite(c))
            }
            Backend::Postgres => {
                let c = PgConnection::establish(url).map_err(r2d2::Error::ConnectionError)?;
                Ok(DbConn::Pg(c))
            }
            Backend::Mysql => {
                let mut c =
                    MysqlConnection::establish(url).map_err(r2d2::Error::ConnectionError)?;
                c.batch_execute("SET time_zone = '+00:00'")
                    .map_err(r2d2::Error::QueryError)?;
                Ok(DbConn::Mysql(c))
            }
        }
    }

    fn is_valid(&self, conn: &mut DbConn) -> Result<(), r2d2::Error> {
        conn.batch_execute("SELECT 1")
            .map_err(r2d2::Error::QueryError)
    }

    fn has_broken(&self, _conn: &mut DbConn) -> bool {
        false
    }
}

pub type Pool = r2d2::Pool<Manager>;
pub type PooledConn = r2d2::PooledConnection<Manager>;

/// Whether the database answers: a connection within `timeout` and `SELECT 1` on it (the
/// readiness probe). Blocking: call it from a blocking thread.
pub fn ping(pool: &Pool, timeout: Duration) -> crate::StoreResult<()> {
    use diesel::RunQueryDsl;
    let mut conn = pool
        .get_timeout(timeout)
        .map_err(|e| crate::StoreError::Pool(e.to_string()))?;
    diesel::sql_query("SELECT 1").execute(&mut *conn)?;
    Ok(())
}

/// Builds a pool for the DSN. SQLite files get their parent folder created.
pub fn connect(dsn: &str, max_size: u32) -> StoreResult<(Pool, Backend)> {
    let dsn = Dsn::parse(dsn)?;
    if dsn.backend == Backend::Sqlite {
        if let Some(parent) = std::path::Path::new(&dsn.url).parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    StoreError::Config(format!("cannot create folder {}: {e}", parent.display()))
                })?;
            }
        }
    }
    let backend = dsn.backend;
    let pool = r2d2::Pool::builder()
        .max_size(max_size.max(1))
        .min_idle(Some(1))
        .connection_timeout(Duration::from_secs(10))
        .build(Manager { dsn })
        .map_err(|e| StoreError::Pool(e.to_string()))?;
    Ok((pool, backend))
}

/// Runs every pending embedded migration for the connection's backend; returns how many ran.
pub fn run_migrations(conn: &mut DbConn) -> StoreResult<usize> {
    let ran = match conn {
        DbConn::Sqlite(c) => c.run_pending_migrations(SQLITE_MIGRATIONS).map(|v| v.len()),
        DbConn::Pg(c) => c
            .run_pending_migrations(POSTGRES_MIGRATIONS)
            .map(|v| v.len()),
        DbConn::Mysql(c) => c.run_pending_migrations(MYSQL_MIGRATIONS).map(|v| v.len()),
    };
    ran.map_err(|e| StoreError::Migration(e.to_string()))
}

/// Inserts one row and returns its generated `id`. PostgreSQL and SQLite use `RETURNING`;
/// MySQL has none, so it reads `LAST_INSERT_ID()` on the same connection.
#[macro_export]
macro_rules! insert_returning_id {
    ($conn:expr, $table:expr, $values:expr, $id:expr) => {{
        use diesel::prelude::*;
        let r: $crate::StoreResult<i64> = match $conn {
            $crate::DbConn::Sqlite(c) => diesel::insert_into($table)
                .values($values)
                .returning($id)
                .get_result::<i64>(c)
                .map_err(Into::into),
            $crate::DbConn::Pg(c) => diesel::insert_into($table)
                .values($values)
                .returning($id)
                .get_result::<i64>(c)
                .map_err(Into::into),
            $crate::DbConn::Mysql(c) => diesel::insert_into($table)
                .values($values)
                .execute(c)
                .and_then(|_| {
                    diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
                        "LAST_INSERT_ID()",
                    ))
                    .get_result::<i64>(c)
                })
                .map_err(Into::into),
        };
        r
    }};
}

/// Inserts many rows in one statement. `MultiConnection` cannot express a multi-row INSERT for
/// all backends at once, so this matches on the backend (the statement is the same SQL).
#[macro_export]
macro_rules! insert_many {
    ($conn:expr, $table:expr, $rows:expr) => {{
        use diesel::prelude::*;
        let r: $crate::StoreResult<usize> = match $conn {
            $crate::DbConn::Sqlite(c) => diesel::insert_into($table)
                .values($rows)
                .execute(c)
                .map_err(Into::into),
            $crate::DbConn::Pg(c) => diesel::insert_into($table)
                .values($rows)
                .execute(c)
                .map_err(Into::into),
            $crate::DbConn::Mysql(c) => diesel::insert_into($table)
                .values($rows)
                .execute(c)
                .map_err(Into::into),
        };
        r
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsn_forms() {
        assert_eq!(
            Dsn::parse("postgres://u@h/db").map(|d| d.backend).ok(),
            Some(Backend::Postgres)
        );
        assert_eq!(
            Dsn::parse("postgresql://u@h/db").map(|d| d.backend).ok(),
            Some(Backend::Postgres)
        );
        assert_eq!(
            Dsn::parse("mysql://root@h/db").map(|d| d.backend).ok(),
            Some(Backend::Mysql)
        );
        assert_eq!(
            Dsn::parse("sqlite://./data/a.db").ok(),
            Some(Dsn {
                backend: Backend::Sqlite,
                url: "./data/a.db".into()
            })
        );
        assert_eq!(
            Dsn::parse("data/one-api.db").ok(),
            Some(Dsn {
                backend: Backend::Sqlite,
                url: "data/one-api.db".into()
            })
        );
        assert_eq!(
            Dsn::parse("root:pw@tcp(127.0.0.1:3306)/oneapi?charset=utf8mb4").ok(),
            Some(Dsn {
                backend: Backend::Mysql,
                url: "mysql://root:pw@127.0.0.1:3306/oneapi".into()
            })
        );
        assert!(Dsn::parse("").is_err());
        assert!(Dsn::parse("redis://x").is_err());
        assert!(Dsn::parse("sqlite://").is_err());
    }
}
