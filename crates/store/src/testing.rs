//! Test support shared by the store and api test suites: a fresh, migrated database per test on
//! SQLite (a temporary file) and, when `TEST_PG_DSN` / `TEST_MYSQL_DSN` name an admin connection,
//! on PostgreSQL and MySQL/MariaDB (a new database created for the test and dropped afterwards).

use crate::conn::{self, Backend, Pool};
use diesel::connection::SimpleConnection;
use diesel::{Connection, MysqlConnection, PgConnection};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!(
        "sb_t_{}_{}_{}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A migrated database that lives as long as this value.
pub struct TestDb {
    pub pool: Pool,
    pub backend: Backend,
    pub dsn: String,
    cleanup: Cleanup,
}

enum Cleanup {
    /// A second handle ([`TestDb::shared`]): the original drops the database.
    None,
    File(std::path::PathBuf),
    Pg {
        admin: String,
        name: String,
    },
    Mysql {
        admin: String,
        name: String,
    },
}

impl TestDb {
    pub fn sqlite() -> TestDb {
        let path = std::env::temp_dir().join(format!("{}.db", unique_name()));
        let dsn = format!("sqlite://{}", path.display());
        Self::open(dsn, Cleanup::File(path))
    }

    /// A fresh PostgreSQL database, or `None` when `TEST_PG_DSN` is not set.
    pub fn postgres() -> Option<TestDb> {
        let admin = std::env::var("TEST_PG_DSN")
            .ok()
            .filter(|s| !s.is_empty())?;
        let name = unique_name();
        let mut c = PgConnection::establish(&admin).unwrap_or_else(|e| panic!("TEST_PG_DSN: {e}"));
        c.batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("create database: {e}"));
        let dsn = replace_db(&admin, &name);
        Some(Self::open(dsn, Cleanup::Pg { admin, name }))
    }

    /// A fresh MySQL/MariaDB database, or `None` when `TEST_MYSQL_DSN` is not set.
    pub fn mysql() -> Option<TestDb> {
        let admin = std::env::var("TEST_MYSQL_DSN")
            .ok()
            .filter(|s| !s.is_empty())?;
        let name = unique_name();
        let mut c =
            MysqlConnection::establish(&admin).unwrap_or_else(|e| panic!("TEST_MYSQL_DSN: {e}"));
        c.batch_execute(&format!(
            "CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
        ))
        .unwrap_or_else(|e| panic!("create database: {e}"));
        let dsn = replace_db(&admin, &name);
        Some(Self::open(dsn, Cleanup::Mysql { admin, name }))
    }

    /// Every backend available to this run: SQLite always, the others when configured.
    pub fn all() -> Vec<TestDb> {
        let mut v = vec![Self::sqlite()];
        v.extend(Self::postgres());
        v.extend(Self::mysql());
        v
    }

    fn open(dsn: String, cleanup: Cleanup) -> TestDb {
        let (pool, backend) =
            conn::connect(&dsn, 8).unwrap_or_else(|e| panic!("connect {dsn}: {e}"));
        let mut c = pool.get().unwrap_or_else(|e| panic!("pool: {e}"));
        conn::run_migrations(&mut c).unwrap_or_else(|e| panic!("migrations: {e}"));
        drop(c);
        TestDb {
            pool,
            backend,
            dsn,
            cleanup,
        }
    }

    /// Another handle on the same database, for a second application on it (another node, or
    /// the same one restarted with other settings). The database is dropped with the original,
    /// so declare the original first.
    pub fn shared(&self) -> TestDb {
        TestDb {
            pool: self.pool.clone(),
            backend: self.backend,
            dsn: self.dsn.clone(),
            cleanup: Cleanup::None,
        }
    }

    pub fn conn(&self) -> crate::PooledConn {
        self.pool.get().unwrap_or_else(|e| panic!("pool: {e}"))
    }
}

/// Makes the database refuse every log row with this request id: a trigger that raises an
/// error, as a database refuses a value it cannot store. The refusal is about the data (the
/// connection stays usable) and sanitising cannot lift it (it keeps the request id), so tests of
/// the isolating flush can park a record on every backend.
/// Runs `sql` as it is on `conn` (test support: `BEGIN IMMEDIATE` to hold SQLite's write lock
/// from another connection, `ROLLBACK` to give it back).
pub fn execute_raw(conn: &mut crate::DbConn, sql: &str) {
    use diesel::connection::SimpleConnection;
    conn.batch_execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

pub fn refuse_log_request_id(conn: &mut crate::DbConn, request_id: &str) {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let rid = request_id.replace('\'', "''");
    let sql = match conn.backend() {
        Backend::Sqlite => format!(
            "CREATE TRIGGER sb_refuse_{n} BEFORE INSERT ON logs WHEN NEW.request_id = '{rid}' \
             BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END;"
        ),
        Backend::Postgres => format!(
            "CREATE FUNCTION sb_refuse_{n}() RETURNS trigger AS $$ BEGIN \
             IF NEW.request_id = '{rid}' THEN RAISE EXCEPTION 'refused by test trigger'; END IF; \
             RETURN NEW; END $$ LANGUAGE plpgsql; \
             CREATE TRIGGER sb_refuse_{n} BEFORE INSERT ON logs \
             FOR EACH ROW EXECUTE FUNCTION sb_refuse_{n}();"
        ),
        Backend::Mysql => format!(
            "CREATE TRIGGER sb_refuse_{n} BEFORE INSERT ON logs FOR EACH ROW \
             BEGIN IF NEW.request_id = '{rid}' THEN \
             SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by test trigger'; END IF; END"
        ),
    };
    conn.batch_execute(&sql)
        .unwrap_or_else(|e| panic!("create trigger: {e}"));
}

/// SQLite does not enforce `VARCHAR(n)`: this trigger makes it refuse log rows whose model
/// name or source IP is longer than its column (255 and 64 characters), as PostgreSQL and MySQL
/// do, so that tests on SQLite meet the refusal those backends give. Nothing on the others.
pub fn enforce_log_lengths_on_sqlite(conn: &mut crate::DbConn) {
    if conn.backend() != Backend::Sqlite {
        return;
    }
    conn.batch_execute(
        "CREATE TRIGGER sb_log_lengths BEFORE INSERT ON logs \
         WHEN length(NEW.model_name) > 255 OR length(NEW.source_ip) > 64 \
         BEGIN SELECT RAISE(ABORT, 'value too long (test trigger)'); END;",
    )
    .unwrap_or_else(|e| panic!("create trigger: {e}"));
}

/// Swaps the database name (the URL path) of a DSN.
fn replace_db(dsn: &str, name: &str) -> String {
    let (base, query) = match dsn.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (dsn, None),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host_part = match base[scheme_end..].find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    match query {
        Some(q) => format!("{host_part}/{name}?{q}"),
        None => format!("{host_part}/{name}"),
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        match &self.cleanup {
            Cleanup::None => {}
            Cleanup::File(p) => {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", p.display()));
                }
            }
            Cleanup::Pg { admin, name } => {
                if let Ok(mut c) = PgConnection::establish(admin) {
                    let _ =
                        c.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
                }
            }
            Cleanup::Mysql { admin, name } => {
                if let Ok(mut c) = MysqlConnection::establish(admin) {
                    let _ = c.batch_execute(&format!("DROP DATABASE IF EXISTS {name}"));
                }
            }
        }
    }
}

/// Makes every answer of the response cache expired (as time passing would).
pub fn expire_response_cache(conn: &mut crate::DbConn) {
    use diesel::prelude::*;
    diesel::update(crate::schema::response_cache::table)
        .set(crate::schema::response_cache::expires_at.eq(crate::now() - 1))
        .execute(conn)
        .unwrap_or_else(|e| panic!("expire response cache: {e}"));
}

/// A consume record of `quota` for the user and key, as the relay queues it (channel 1, model
/// `m`, no request id), for tests of the ledger and the log writer.
pub fn consume_record(user_id: i64, token_id: i64, quota: i64) -> crate::logs::ConsumeRecord {
    crate::logs::ConsumeRecord {
        request_id: None,
        created_at: 0,
        log_type: 2,
        user_id,
        username: Default::default(),
        token_id,
        token_name: Default::default(),
        channel_id: 1,
        model_name: "m".into(),
        group_name: Default::default(),
        quota,
        prompt_tokens: 0,
        completion_tokens: 0,
        use_time_ms: 0,
        first_response_ms: 0,
        is_stream: false,
        source_ip: Default::default(),
        content: String::new(),
        metadata: "{\"group_ratio\":1.0}".into(),
        cache_hit: false,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_database_name() {
        assert_eq!(
            super::replace_db("postgres://u@h:5432/postgres", "x"),
            "postgres://u@h:5432/x"
        );
        assert_eq!(
            super::replace_db("mysql://root@h:3306", "x"),
            "mysql://root@h:3306/x"
        );
        assert_eq!(
            super::replace_db("mysql://r@h/db?ssl=0", "x"),
            "mysql://r@h/x?ssl=0"
        );
    }
}
