//! Switchboard storage. One codebase for SQLite (the embedded default), PostgreSQL and
//! MySQL/MariaDB through Diesel's `MultiConnection`; the backend is chosen by the DSN.
//!
//! Repository functions take `&mut DbConn` so they work inside and outside a transaction.

pub mod analytics;
pub mod channels;
pub mod conn;
pub mod dead_letters;
pub mod error;
pub mod import;
pub mod invoices;
pub mod job_locks;
pub mod logs;
pub mod model_owners;
pub mod options;
pub mod payments;
pub mod prices;
pub mod redemptions;
pub mod response_cache;
pub mod response_history;
pub mod schema;
pub mod sessions;
pub mod statistics;
pub mod tasks;
pub mod telegram;
mod text;
pub mod user_groups;
pub mod users;
pub mod verification;

#[doc(hidden)]
pub mod testing;
pub mod tokens;

pub use conn::{Backend, DbConn, Pool, PooledConn};
pub use error::{StoreError, StoreResult};

/// A page request: 1-based page number and page size (bounded by the caller).
#[derive(Debug, Clone, Copy)]
pub struct PageReq {
    pub page: i64,
    pub size: i64,
}

impl PageReq {
    /// The row offset; saturates rather than overflows (callers bound `page` first).
    pub fn offset(&self) -> i64 {
        (self.page.max(1) - 1).saturating_mul(self.size)
    }
}

/// Splits an allow-listed `order` parameter (`field` or `-field`) into the field and whether it
/// sorts descending.
pub fn split_order(order: &str) -> (&str, bool) {
    match order.strip_prefix('-') {
        Some(f) => (f, true),
        None => (order, false),
    }
}

/// Orders a boxed query by an allow-listed column, ties broken by id in the same direction.
#[macro_export]
macro_rules! order_by {
    ($q:expr, $desc:expr, $col:expr, $id:expr) => {
        if $desc {
            $q.order(($col.desc(), $id.desc()))
        } else {
            $q.order(($col.asc(), $id.asc()))
        }
    };
}

/// One page of rows plus the total number of matching rows.
#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: i64,
}

/// Current time as unix seconds, the timestamp unit of every table.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// Runs `f` in a database transaction: committed when it returns `Ok`, rolled back on `Err`.
/// Callers keep their own error type (it only needs to absorb a [`StoreError`]).
pub fn transaction<T, E, F>(conn: &mut DbConn, f: F) -> Result<T, E>
where
    F: FnOnce(&mut DbConn) -> Result<T, E>,
    E: From<StoreError>,
{
    use diesel::Connection;
    enum TxErr<E> {
        Db(diesel::result::Error),
        App(E),
    }
    impl<E> From<diesel::result::Error> for TxErr<E> {
        fn from(e: diesel::result::Error) -> Self {
            TxErr::Db(e)
        }
    }
    let sqlite = matches!(conn, DbConn::Sqlite(_));
    match conn.transaction::<T, TxErr<E>, _>(|c| {
        if sqlite {
            // Take SQLite's write lock first (waiting up to busy_timeout). A deferred transaction
            // that reads and then writes fails at once with "database is locked" when another
            // writer committed in between; starting with a (no-op) write avoids that upgrade.
            use diesel::RunQueryDsl;
            diesel::sql_query("UPDATE job_locks SET name = name WHERE 1 = 0").execute(c)?;
        }
        f(c).map_err(TxErr::App)
    }) {
        Ok(v) => Ok(v),
        Err(TxErr::App(e)) => Err(e),
        Err(TxErr::Db(e)) => Err(StoreError::from(e).into()),
    }
}
