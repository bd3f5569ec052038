//! [`Refusal`]: every way a relayed call ends without an upstream answer (a bad key, no quota, no
//! channel, the upstream's own failure) as one typed value, rendered at the edge in the shape of
//! the protocol the client speaks ([`Protocol`]). No error body is ever parsed back to change its
//! shape: each protocol's renderer reads the same fields.

use std::borrow::Cow;
use switchboard_domain::ErrorCode;

use serde::Serialize;

use crate::error::{OpenAiErrorBody, RelayError};
use crate::provider::UpstreamFailure;

/// The protocol a client speaks on the path it called, which decides the shape of its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `/v1/...`: `{"error":{"message","type","param","code"}}`.
    OpenAi,
    /// `/v1/messages`, `/claude/v1/messages`: `{"type":"error","error":{"type","message"}}`.
    Anthropic,
    /// `/gemini/...`: `{"error":{"code","message","status"}}`.
    Gemini,
    /// `/mj/...` (midjourney-proxy): `{"code","description","result","error_code"}`.
    Midjourney,
    /// `/suno/...`: `{"code","message","data"}`.
    Suno,
}

/// Why a relayed call got no upstream answer: the HTTP status, the stable snake_case `code`, the
/// OpenAI error `kind` (`type`; an upstream's own type when it gave one), a message for people
/// and, for rate limits, how long to wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub kind: Cow<'static, str>,
    pub code: Cow<'static, str>,
    pub message: String,
    /// Seconds the client should wait before trying again (sent as `Retry-After`).
    pub retry_after: Option<u64>,
}

/// The error types of Anthropic's API.
const ANTHROPIC_TYPES: [&str; 9] = [
    "invalid_request_error",
    "authentication_error",
    "billing_error",
    "permission_error",
    "not_found_error",
    "request_too_large",
    "rate_limit_error",
    "api_error",
    "overloaded_error",
];

/// Google's canonical error statuses.
const GOOGLE_STATUSES: [&str; 16] = [
    "INVALID_ARGUMENT",
    "FAILED_PRECONDITION",
    "OUT_OF_RANGE",
    "UNAUTHENTICATED",
    "PERMISSION_DENIED",
    "NOT_FOUND",
    "ABORTED",
    "ALREADY_EXISTS",
    "RESOURCE_EXHAUSTED",
    "CANCELLED",
    "DATA_LOSS",
    "UNKNOWN",
    "INTERNAL",
    "NOT_IMPLEMENTED",
    "UNAVAILABLE",
    "DEADLINE_EXCEEDED",
];

/// The OpenAI error type of a refusal of the gateway's own, by its status.
pub fn openai_type(status: u16) -> &'static str {
    match status {
        402 => "insufficient_quota",
        429 => "rate_limit_error",
        502 => "upstream_error",
        500.. => "server_error",
        _ => "invalid_request_error",
    }
}

impl Refusal {
    /// A refusal of the gateway's own, the one constructor: its OpenAI error type follows from
    /// the status ([`openai_type`]).
    pub fn new(status: u16, code: ErrorCode, message: impl Into<String>) -> Self {
        Refusal {
            status,
            kind: Cow::Borrowed(openai_type(status)),
            code: Cow::Borrowed(code.as_str()),
            message: message.into(),
            retry_after: None,
        }
    }

    /// A 400 of the client's request.
    pub fn invalid(code: ErrorCode, message: impl Into<String>) -> Self {
        Refusal::new(400, code, message)
    }

    /// The 404 of a path that does not exist (or of a protocol switched off by its setting).
    pub fn path_not_found(method: &str, path: &str) -> Self {
        Refusal::new(
            404,
            ErrorCode::NotFound,
            format!("Invalid URL ({method} {path})"),
        )
    }

    /// The 413 of a body over the relay's limit.
    pub fn too_large(limit: usize) -> Self {
        Refusal::new(
            413,
            ErrorCode::RequestTooLarge,
            format!("The request body is larger than {limit} bytes."),
        )
    }

    /// No channel could be tried for `model`.
    pub fn no_channel(model: &str) -> Self {
        Refusal::new(
            503,
            ErrorCode::NoAvailableChannel,
            format!(
                "No channel is available for the model `{model}` right now; try again shortly."
            ),
        )
    }

    /// The key may not use `model`, or no channel of its group serves it.
    pub fn model_not_found(model: &str) -> Self {
        Refusal::new(
            404,
            ErrorCode::ModelNotFound,
            format!("The model `{model}` does not exist or you do not have access to it."),
        )
    }

    /// The answer for an upstream failure when no retry is left: the upstream's status (its
    /// 401/403 become 502: they are about the channel's credentials, not the client's key),
    /// message, error type and code, and its `Retry-After`.
    pub fn upstream(f: UpstreamFailure) -> Self {
        let status = match f.status {
            401 | 403 => 502,
            s => s,
        };
        Refusal {
            status,
            kind: f.kind.map_or(Cow::Borrowed("upstream_error"), Cow::Owned),
            code: f.code.map_or(Cow::Borrowed("upstream_error"), Cow::Owned),
            message: f.message,
            retry_after: f.retry_after,
        }
    }

    /// Sets the `Retry-After` seconds.
    pub fn retry_after(mut self, secs: Option<u64>) -> Self {
        self.retry_after = secs;
        self
    }

    /// The HTTP status, 500 when out of range.
    pub fn http_status(&self) -> u16 {
        if (400..600).contains(&self.status) {
            self.status
        } else {
            500
        }
    }

    /// The OpenAI-shaped body.
    pub fn openai_body(&self) -> OpenAiErrorBody {
        OpenAiErrorBody::new(self.message.clone(), &self.kind, &self.code)
    }

    /// Anthropic's error type: the upstream's own when its code is one of Anthropic's (or
    /// Anthropic's type of the status; the OpenAI `kind` is not read, its vocabulary overlaps).
    pub fn anthropic_type(&self) -> &str {
        Some(&*self.code)
            .filter(|c| ANTHROPIC_TYPES.contains(c))
            .unwrap_or(match self.status {
                400 | 422 => "invalid_request_error",
                401 => "authentication_error",
                402 => "billing_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                503 | 529 => "overloaded_error",
                _ => "api_error",
            })
    }

    /// Google's canonical status: the upstream's own when its code is one (or Google's status
    /// of the HTTP code).
    pub fn google_status(&self) -> &str {
        Some(&*self.code)
            .filter(|c| GOOGLE_STATUSES.contains(c))
            .unwrap_or(match self.status {
                400 | 413 | 422 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                402 | 429 => "RESOURCE_EXHAUSTED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                499 => "CANCELLED",
                501 => "NOT_IMPLEMENTED",
                502 | 503 | 529 => "UNAVAILABLE",
                504 => "DEADLINE_EXCEEDED",
                _ => "INTERNAL",
            })
    }

    /// The JSON body in `protocol`'s shape.
    pub fn body(&self, protocol: Protocol) -> Vec<u8> {
        let bytes = match protocol {
            Protocol::OpenAi => serde_json::to_vec(&self.openai_body()),
            Protocol::Anthropic => serde_json::to_vec(&AnthropicError {
                kind: "error",
                error: AnthropicErrorDetail {
                    kind: self.anthropic_type(),
                    message: &self.message,
                },
            }),
            Protocol::Gemini => serde_json::to_vec(&GoogleError {
                error: GoogleErrorDetail {
                    code: self.http_status(),
                    message: &self.message,
                    status: self.google_status(),
                },
            }),
            Protocol::Midjourney => serde_json::to_vec(&MidjourneyError {
                // midjourney-proxy's codes: 3 unknown task, 9 a server-side failure, 4 refused.
                code: match self.status {
                    404 => 3,
                    s if s >= 500 => 9,
                    _ => 4,
                },
                description: &self.message,
                result: None,
                error_code: &self.code,
            }),
            Protocol::Suno => serde_json::to_vec(&SunoError {
                code: &self.code,
                message: &self.message,
                data: None,
            }),
        };
        // Serialising plain strings and numbers cannot fail.
        bytes.unwrap_or_default()
    }
}

impl From<RelayError> for Refusal {
    fn from(e: RelayError) -> Self {
        let body = e.to_body();
        Refusal {
            status: e.status(),
            kind: Cow::Borrowed(e.kind()),
            code: Cow::Borrowed(e.code()),
            message: body.error.message,
            retry_after: None,
        }
    }
}

#[derive(Serialize)]
struct AnthropicError<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    error: AnthropicErrorDetail<'a>,
}

#[derive(Serialize)]
struct AnthropicErrorDetail<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct GoogleError<'a> {
    error: GoogleErrorDetail<'a>,
}

#[derive(Serialize)]
struct GoogleErrorDetail<'a> {
    code: u16,
    message: &'a str,
    status: &'a str,
}

#[derive(Serialize)]
struct MidjourneyError<'a> {
    code: u8,
    description: &'a str,
    result: Option<()>,
    error_code: &'a str,
}

#[derive(Serialize)]
struct SunoError<'a> {
    code: &'a str,
    message: &'a str,
    data: Option<()>,
}

/// Seconds to wait from a `Retry-After` header (delta seconds, or an HTTP date) or OpenAI's
/// `retry-after-ms`; `None` when absent or unreadable. `now` is Unix seconds.
pub fn parse_retry_after(
    retry_after: Option<&str>,
    retry_after_ms: Option<&str>,
    now: u64,
) -> Option<u64> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some((ms / 1000.0).ceil() as u64);
        }
    }
    let v = retry_after?.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(secs);
    }
    let at = httpdate_secs(v)?;
    Some(at.saturating_sub(now))
}

/// Unix seconds of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form HTTP requires.
fn httpdate_secs(s: &str) -> Option<u64> {
    let mut parts = s.split_ascii_whitespace();
    let _weekday = parts.next()?;
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|x| x.parse::<u64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + (h * 3600 + m * 60 + sec) as i64;
    u64::try_from(secs).ok()
}

/// The `retryDelay` of a Google error's `RetryInfo` detail (`"30s"`, `"1.5s"`), rounded up.
pub fn google_retry_delay(body: &[u8]) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let details = v.pointer("/error/details")?.as_array()?;
    details.iter().find_map(|d| {
        let delay = d.get("retryDelay")?.as_str()?.strip_suffix('s')?;
        let secs: f64 = delay.parse().ok()?;
        (secs.is_finite() && secs >= 0.0).then(|| secs.ceil() as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn parsed(r: &Refusal, p: Protocol) -> Value {
        serde_json::from_slice(&r.body(p)).unwrap()
    }

    #[test]
    fn one_refusal_in_every_protocol() {
        let r = Refusal::new(402, ErrorCode::InsufficientUserQuota, "top up");
        assert_eq!(
            parsed(&r, Protocol::OpenAi),
            json!({"error": {"message": "top up", "type": "insufficient_quota", "param": null, "code": "insufficient_user_quota"}})
        );
        assert_eq!(
            parsed(&r, Protocol::Anthropic),
            json!({"type": "error", "error": {"type": "billing_error", "message": "top up"}})
        );
        assert_eq!(
            parsed(&r, Protocol::Gemini),
            json!({"error": {"code": 402, "message": "top up", "status": "RESOURCE_EXHAUSTED"}})
        );
        assert_eq!(
            parsed(&r, Protocol::Midjourney),
            json!({"code": 4, "description": "top up", "result": null, "error_code": "insufficient_user_quota"})
        );
        assert_eq!(
            parsed(&r, Protocol::Suno),
            json!({"code": "insufficient_user_quota", "message": "top up", "data": null})
        );
    }

    #[test]
    fn upstream_type_and_retry_after_pass_through() {
        let f = UpstreamFailure {
            status: 429,
            message: "slow down".into(),
            code: Some("rate_limit_exceeded".into()),
            kind: Some("requests".into()),
            retry_after: Some(7),
            retryable: true,
            auto_disable: false,
            gateway: false,
        };
        let r = Refusal::upstream(f);
        assert_eq!(r.status, 429);
        assert_eq!(r.retry_after, Some(7));
        let v = parsed(&r, Protocol::OpenAi);
        assert_eq!(v["error"]["type"], "requests");
        assert_eq!(v["error"]["code"], "rate_limit_exceeded");
        // Anthropic's own type survives into Anthropic's shape; Google's status into Google's.
        let overloaded = Refusal::upstream(UpstreamFailure {
            status: 529,
            message: "busy".into(),
            code: Some("overloaded_error".into()),
            kind: Some("overloaded_error".into()),
            retry_after: None,
            retryable: true,
            auto_disable: false,
            gateway: false,
        });
        assert_eq!(
            parsed(&overloaded, Protocol::Anthropic)["error"]["type"],
            "overloaded_error"
        );
        let exhausted = Refusal::upstream(UpstreamFailure {
            status: 429,
            message: "quota".into(),
            code: Some("RESOURCE_EXHAUSTED".into()),
            kind: None,
            retry_after: Some(30),
            retryable: true,
            auto_disable: false,
            gateway: false,
        });
        assert_eq!(
            parsed(&exhausted, Protocol::Gemini)["error"]["status"],
            "RESOURCE_EXHAUSTED"
        );
        assert_eq!(
            parsed(&exhausted, Protocol::OpenAi)["error"]["type"],
            "upstream_error"
        );
    }

    #[test]
    fn channel_credentials_are_not_the_clients() {
        let r = Refusal::upstream(UpstreamFailure {
            status: 401,
            message: "bad key".into(),
            code: None,
            kind: None,
            retry_after: None,
            retryable: true,
            auto_disable: true,
            gateway: false,
        });
        assert_eq!(r.status, 502);
        assert_eq!(
            parsed(&r, Protocol::Gemini)["error"]["status"],
            "UNAVAILABLE"
        );
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after(Some("12"), None, 0), Some(12));
        assert_eq!(parse_retry_after(Some(" 3 "), Some("1500"), 0), Some(2));
        assert_eq!(parse_retry_after(None, Some("20"), 0), Some(1));
        assert_eq!(parse_retry_after(Some("soon"), None, 0), None);
        assert_eq!(parse_retry_after(None, None, 0), None);
        // 784111777 is Sun, 06 Nov 1994 08:49:37 GMT.
        assert_eq!(
            parse_retry_after(Some("Sun, 06 Nov 1994 08:49:37 GMT"), None, 784_111_770),
            Some(7)
        );
        assert_eq!(
            parse_retry_after(Some("Sun, 06 Nov 1994 08:49:37 GMT"), None, 784_111_800),
            Some(0)
        );
        assert_eq!(
            parse_retry_after(Some("Sun, 06 Foo 1994 08:49:37 GMT"), None, 0),
            None
        );
    }

    #[test]
    fn google_retry_info() {
        let body = br#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.2s"}]}}"#;
        assert_eq!(google_retry_delay(body), Some(2));
        assert_eq!(google_retry_delay(b"{}"), None);
    }

    #[test]
    fn relay_errors_keep_their_codes() {
        let r = Refusal::from(RelayError::MissingModel);
        assert_eq!(r.status, 400);
        assert_eq!(r.code, "model_required");
        let r = Refusal::from(RelayError::Channel("secret detail".into()));
        assert!(!r.message.contains("secret"));
    }
}
