//! Errors in the OpenAI shape, which every `/v1` client (the official SDKs included) understands:
//! `{"error": {"message", "type", "param", "code"}}`, and [`RelayError`], the relay's own errors
//! (bad client input, a misconfigured channel).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAiError {
    pub message: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub param: Option<String>,
    pub code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAiErrorBody {
    pub error: OpenAiError,
}

impl OpenAiErrorBody {
    pub fn new(message: impl Into<String>, kind: &str, code: &str) -> Self {
        OpenAiErrorBody {
            error: OpenAiError {
                message: message.into(),
                kind: kind.to_owned(),
                param: None,
                code: Some(code.to_owned()),
            },
        }
    }
}

/// What the relay itself refuses or cannot do, before any upstream answered. Upstream failures
/// are [`crate::provider::UpstreamFailure`], not errors of this type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelayError {
    /// The client's request is malformed: not JSON, not an object, a field of the wrong type.
    #[error("{0}")]
    InvalidRequest(String),
    /// The request names no model (and the endpoint has no default model).
    #[error("you must provide a model parameter")]
    MissingModel,
    /// The path is not an endpoint the relay knows, or the channel's provider does not serve it.
    #[error("unsupported endpoint: {0}")]
    UnsupportedEndpoint(String),
    /// The channel's configuration cannot be used (bad base URL, proxy or custom header). The
    /// detail is for the log; clients see a generic message (see [`RelayError::to_body`]).
    /// Another channel may work, so this is retryable.
    #[error("channel configuration error: {0}")]
    Channel(String),
}

impl RelayError {
    /// The HTTP status the client receives.
    pub fn status(&self) -> u16 {
        match self {
            RelayError::InvalidRequest(_) | RelayError::MissingModel => 400,
            RelayError::UnsupportedEndpoint(_) => 404,
            RelayError::Channel(_) => 500,
        }
    }

    /// Stable snake_case code, the `error.code` of the OpenAI body.
    pub fn code(&self) -> &'static str {
        match self {
            RelayError::InvalidRequest(_) => "invalid_request",
            RelayError::MissingModel => "model_required",
            RelayError::UnsupportedEndpoint(_) => "unsupported_endpoint",
            RelayError::Channel(_) => "channel_config_error",
        }
    }

    /// The OpenAI `error.type`.
    pub fn kind(&self) -> &'static str {
        match self {
            RelayError::Channel(_) => "server_error",
            _ => "invalid_request_error",
        }
    }

    /// Whether trying another channel may help.
    pub fn is_retryable(&self) -> bool {
        matches!(self, RelayError::Channel(_))
    }

    /// The body sent to the client. Channel errors carry operator configuration in their
    /// detail, so clients get a generic message instead.
    pub fn to_body(&self) -> OpenAiErrorBody {
        let message = match self {
            RelayError::Channel(_) => "the upstream channel is misconfigured".to_owned(),
            other => other.to_string(),
        };
        OpenAiErrorBody::new(message, self.kind(), self.code())
    }
}

impl From<&RelayError> for OpenAiErrorBody {
    fn from(e: &RelayError) -> Self {
        e.to_body()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay_errors_map_to_status_code_and_body() {
        let e = RelayError::InvalidRequest("body must be a JSON object".into());
        assert_eq!((e.status(), e.code()), (400, "invalid_request"));
        assert!(!e.is_retryable());
        assert_eq!(
            serde_json::to_value(e.to_body()).unwrap(),
            serde_json::json!({"error": {"message": "body must be a JSON object", "type": "invalid_request_error", "param": null, "code": "invalid_request"}})
        );
        let c = RelayError::Channel("invalid proxy URL socks9://x".into());
        assert_eq!((c.status(), c.code()), (500, "channel_config_error"));
        assert!(c.is_retryable());
        let body = OpenAiErrorBody::from(&c);
        assert!(!body.error.message.contains("socks9"));
        assert_eq!(RelayError::MissingModel.status(), 400);
        assert_eq!(
            RelayError::UnsupportedEndpoint("/v1/x".into()).status(),
            404
        );
    }

    #[test]
    fn serialises_in_openai_shape() {
        let b = OpenAiErrorBody::new(
            "Invalid URL (GET /v1/x)",
            "invalid_request_error",
            "not_found",
        );
        let v = serde_json::to_value(&b).unwrap_or_default();
        assert_eq!(
            v,
            serde_json::json!({"error": {"message": "Invalid URL (GET /v1/x)", "type": "invalid_request_error", "param": null, "code": "not_found"}})
        );
    }
}
