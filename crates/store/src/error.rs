use diesel::result::{DatabaseErrorKind, Error as DieselError};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    /// A unique constraint refused the write; the payload names the constraint or column.
    #[error("already exists: {0}")]
    Conflict(String),
    #[error("database error: {0}")]
    Database(DieselError),
    #[error("connection pool error: {0}")]
    Pool(String),
    #[error("migration error: {0}")]
    Migration(String),
    #[error("invalid database configuration: {0}")]
    Config(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

impl From<DieselError> for StoreError {
    fn from(e: DieselError) -> Self {
        match e {
            DieselError::NotFound => StoreError::NotFound,
            DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                let what = info
                    .constraint_name()
                    .map(str::to_owned)
                    .unwrap_or_else(|| info.message().to_owned());
                StoreError::Conflict(what)
            }
            other => StoreError::Database(other),
        }
    }
}

impl From<diesel::r2d2::PoolError> for StoreError {
    fn from(e: diesel::r2d2::PoolError) -> Self {
        StoreError::Pool(e.to_string())
    }
}

impl StoreError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::NotFound)
    }

    /// Whether the database could not be reached (no connection from the pool in time, a
    /// connection closed or cut under a query): the request may succeed once it is back.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Pool(_) => true,
            StoreError::Database(DieselError::DatabaseError(
                DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
                _,
            )) => true,
            StoreError::Database(e) => {
                let m = e.to_string().to_ascii_lowercase();
                [
                    "terminating connection",
                    "server closed the connection",
                    "server has gone away",
                    "lost connection",
                    "connection refused",
                    "could not connect",
                ]
                .iter()
                .any(|w| m.contains(w))
            }
            _ => false,
        }
    }

    /// Whether the database refused the data itself (a value it cannot store, a constraint, a
    /// trigger), so that the same data would be refused again, rather than being unreachable,
    /// busy or broken (the pool, a closed connection, a lock or serialization failure, a full
    /// disk), when the same data may well be accepted later. Unknown causes count as the latter:
    /// a caller that keeps data queued on `false` loses nothing.
    pub fn is_about_data(&self) -> bool {
        match self {
            StoreError::Conflict(_) => true,
            StoreError::Database(e) => diesel_error_is_about_data(e),
            StoreError::NotFound
            | StoreError::Pool(_)
            | StoreError::Migration(_)
            | StoreError::Config(_) => false,
        }
    }
}

/// Words of the messages of errors that are about the database's state or schema, not the data
/// (SQLite, PostgreSQL and MySQL/MariaDB), lower case. Diesel maps most errors to `Unknown`, so the
/// message is what tells "value too long" from "server has gone away".
const UNAVAILABLE: &[&str] = &[
    "connection",
    "connect to",
    "database is locked",
    "table is locked",
    "busy",
    "disk i/o",
    "disk is full",
    "no space left",
    "unable to open",
    "malformed",
    "readonly",
    "read-only",
    "read only",
    "gone away",
    "timeout",
    "timed out",
    "deadlock",
    "could not serialize",
    "too many clients",
    "out of memory",
    "shutdown",
    "shutting down",
    "starting up",
    "in recovery",
    "interrupted",
    "terminating",
    "canceling statement",
    "lock wait",
    // The schema or the rights, not the row: every row would be refused alike.
    "no such table",
    "no such column",
    "does not exist",
    "doesn't exist",
    "unknown column",
    "permission denied",
    "command denied",
    "access denied",
];

fn diesel_error_is_about_data(e: &DieselError) -> bool {
    match e {
        DieselError::DatabaseError(kind, info) => match kind {
            DatabaseErrorKind::ClosedConnection
            | DatabaseErrorKind::UnableToSendCommand
            | DatabaseErrorKind::SerializationFailure
            | DatabaseErrorKind::ReadOnlyTransaction => false,
            DatabaseErrorKind::UniqueViolation
            | DatabaseErrorKind::ForeignKeyViolation
            | DatabaseErrorKind::NotNullViolation
            | DatabaseErrorKind::CheckViolation
            | DatabaseErrorKind::RestrictViolation
            | DatabaseErrorKind::ExclusionViolation => true,
            _ => {
                let message = info.message().to_lowercase();
                !UNAVAILABLE.iter().any(|w| message.contains(w))
            }
        },
        DieselError::InvalidCString(_)
        | DieselError::SerializationError(_)
        | DieselError::DeserializationError(_)
        | DieselError::QueryBuilderError(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(kind: DatabaseErrorKind, message: &str) -> StoreError {
        StoreError::Database(DieselError::DatabaseError(
            kind,
            Box::new(message.to_owned()),
        ))
    }

    #[test]
    fn data_errors_are_told_from_unavailability() {
        for about_data in [
            db(
                DatabaseErrorKind::Unknown,
                "value too long for type character varying(64)",
            ),
            db(
                DatabaseErrorKind::Unknown,
                "invalid byte sequence for encoding \"UTF8\": 0x00",
            ),
            db(
                DatabaseErrorKind::Unknown,
                "Data too long for column 'model_name' at row 1",
            ),
            db(DatabaseErrorKind::Unknown, "bigint out of range"),
            db(DatabaseErrorKind::CheckViolation, "check"),
            StoreError::Conflict("uq_statistics".into()),
        ] {
            assert!(about_data.is_about_data(), "{about_data}");
        }
        for unavailable in [
            db(DatabaseErrorKind::ClosedConnection, "server closed"),
            db(DatabaseErrorKind::Unknown, "database is locked"),
            db(DatabaseErrorKind::Unknown, "MySQL server has gone away"),
            db(
                DatabaseErrorKind::Unknown,
                "Lost connection to MySQL server during query",
            ),
            db(
                DatabaseErrorKind::Unknown,
                "terminating connection due to administrator command",
            ),
            db(
                DatabaseErrorKind::Unknown,
                "Lock wait timeout exceeded; try restarting transaction",
            ),
            db(DatabaseErrorKind::SerializationFailure, "deadlock"),
            db(DatabaseErrorKind::Unknown, "no such table: statistics"),
            db(
                DatabaseErrorKind::Unknown,
                "permission denied for table logs",
            ),
            StoreError::Pool("timed out waiting for connection".into()),
            StoreError::Database(DieselError::BrokenTransactionManager),
        ] {
            assert!(!unavailable.is_about_data(), "{unavailable}");
        }
    }
}
