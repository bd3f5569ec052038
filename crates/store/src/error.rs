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
}
