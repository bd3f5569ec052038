use crate::ErrorCode;
use thiserror::Error;

/// A rule of the product was broken by the input. Every variant has a stable snake_case `code`
/// (for translation in the console) and a human message naming what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DomainError {
    #[error("{field} cannot be empty")]
    Required { field: &'static str },
    #[error("{field} must be at least {min} characters")]
    TooShort { field: &'static str, min: usize },
    #[error("{field} must be at most {max} characters")]
    TooLong { field: &'static str, max: usize },
    #[error("{field} is not valid: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("{field} must be between {min} and {max}")]
    OutOfRange {
        field: &'static str,
        min: i64,
        max: i64,
    },
    #[error("{field} must be at least {min}")]
    TooSmall { field: &'static str, min: i64 },
    #[error("unknown setting: {0}")]
    UnknownOption(String),
    #[error("this password is too common and easy to guess; choose another")]
    WeakPassword,
    /// An invalid value with its own stable code (so the console can say exactly what is wrong
    /// in the user's language), e.g. `invalid_voice_mapping`.
    #[error("{field} is not valid: {reason}")]
    InvalidCoded {
        code: ErrorCode,
        field: &'static str,
        reason: String,
    },
}

impl DomainError {
    pub fn code(&self) -> ErrorCode {
        match self {
            DomainError::Required { .. } => ErrorCode::Required,
            DomainError::TooShort { .. } => ErrorCode::TooShort,
            DomainError::TooLong { .. } => ErrorCode::TooLong,
            DomainError::Invalid { .. } => ErrorCode::Invalid,
            DomainError::OutOfRange { .. } => ErrorCode::OutOfRange,
            DomainError::TooSmall { .. } => ErrorCode::TooSmall,
            DomainError::UnknownOption(_) => ErrorCode::UnknownOption,
            DomainError::WeakPassword => ErrorCode::WeakPassword,
            DomainError::InvalidCoded { code, .. } => *code,
        }
    }

    /// An invalid `field` refused with its own stable `code`.
    pub fn invalid_coded(code: ErrorCode, field: &'static str, reason: impl Into<String>) -> Self {
        DomainError::InvalidCoded {
            code,
            field,
            reason: reason.into(),
        }
    }

    pub fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        DomainError::Invalid {
            field,
            reason: reason.into(),
        }
    }
}
