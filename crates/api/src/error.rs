//! The one error type of the HTTP layer. Its `ResponseError` impl picks the status and writes the
//! `{success:false, message, code}` envelope in one place; internal causes are logged, never sent.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use switchboard_domain::{DomainError, ErrorCode};
use switchboard_store::StoreError;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    /// Stable snake_case identifier for clients and translations.
    pub code: ErrorCode,
    pub message: String,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
    pub fn bad_request(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized, message)
    }
    pub fn forbidden(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, ErrorCode::NotFound, message)
    }
    pub fn conflict(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }
    /// The database does not answer (a restart, a failover, a network cut): 503, so that
    /// clients and balancers retry; the cause is logged.
    pub fn unavailable(cause: impl std::fmt::Display) -> Self {
        tracing::warn!(error = %cause, "database unavailable");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::DatabaseUnavailable,
            "The database is not answering right now; try again shortly.",
        )
    }
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::InternalError,
            "internal server error",
        )
    }
}

/// A cause from a layer that only has text (the ledger's shared store): an internal error.
impl From<String> for ApiError {
    fn from(cause: String) -> Self {
        ApiError::internal(cause)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    success: bool,
    message: &'a str,
    code: ErrorCode,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status).json(ErrorBody {
            success: false,
            message: &self.message,
            code: self.code,
        })
    }
}

impl From<DomainError> for ApiError {
    fn from(e: DomainError) -> Self {
        ApiError::bad_request(e.code(), e.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ApiError::not_found("not found"),
            StoreError::Conflict(what) => {
                tracing::debug!(%what, "unique constraint");
                ApiError::conflict(
                    ErrorCode::Conflict,
                    "a record with the same unique value already exists",
                )
            }
            other if other.is_unavailable() => ApiError::unavailable(other),
            other => ApiError::internal(other),
        }
    }
}

/// A successful envelope: `{success:true, message:"", data}`.
pub fn ok<T: Serialize>(data: T) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "success": true, "message": "", "data": data }))
}

/// A successful envelope with a message and no data.
pub fn ok_message(message: &str) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "success": true, "message": message }))
}
