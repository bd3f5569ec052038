//! The upstream side of OpenAI's Realtime API (`GET /v1/realtime?model=...`, a websocket): where
//! a channel's realtime endpoint is and which headers open it, and the usage of a
//! `response.done` server event. The websocket itself is driven by the API crate.
//!
//! - OpenAI compatible: `ws(s)://{base}/v1/realtime?model={upstream model}` with
//!   `Authorization: Bearer <key>`.
//! - Azure OpenAI: `ws(s)://{base}/openai/realtime?api-version={version}&deployment={deployment}`
//!   with `api-key: <key>` (deployment and version as for the other Azure endpoints).
//!
//! Both send `OpenAI-Beta: realtime=v1` and then the channel's custom headers (which may replace
//! it). Anthropic and Gemini channels have no realtime endpoint.

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use crate::error::RelayError;
use crate::provider::{ChannelTarget, Provider};
use crate::providers::openai::{apply_custom_headers, parse_url};
use crate::providers::{azure, openai};
use crate::usage::Usage;

/// The websocket URL and handshake headers of a channel's realtime endpoint.
#[derive(Debug, Clone)]
pub struct RealtimeUpstream {
    /// `ws://` or `wss://` (from the channel's `http://` or `https://` base URL).
    pub url: String,
    pub headers: HeaderMap,
}

impl Provider {
    /// Whether this family offers the Realtime API.
    pub fn supports_realtime(&self) -> bool {
        matches!(self, Provider::OpenAiCompatible(_) | Provider::Azure(_))
    }

    /// Where to open the realtime session for `model` on `target` (see the module
    /// documentation).
    pub fn realtime(
        &self,
        target: &ChannelTarget,
        model: &str,
    ) -> Result<RealtimeUpstream, RelayError> {
        let base = target.effective_base_url()?;
        let (mut url, mut headers) = match self {
            Provider::OpenAiCompatible(_) => {
                let mut url = parse_url(&format!("{base}/v1/realtime"))?;
                url.query_pairs_mut()
                    .append_pair("model", target.upstream_model(model));
                (url, openai::auth_headers(target)?)
            }
            Provider::Azure(_) => {
                let mut url = parse_url(&format!("{base}/openai/realtime"))?;
                url.query_pairs_mut()
                    .append_pair("api-version", azure::api_version(target))
                    .append_pair("deployment", &azure::deployment(target, model));
                (url, azure::auth_headers(target)?)
            }
            Provider::Anthropic(_)
            | Provider::Gemini(_)
            | Provider::Rerank(_)
            | Provider::Bedrock(_)
            | Provider::Vertex(_) => {
                return Err(RelayError::UnsupportedEndpoint("/v1/realtime".into()))
            }
        };
        let scheme = match url.scheme() {
            "https" | "wss" => "wss",
            "http" | "ws" => "ws",
            other => {
                return Err(RelayError::Channel(format!(
                    "channel {} base URL has the scheme {other}, not http(s)",
                    target.id
                )))
            }
        };
        url.set_scheme(scheme).map_err(|()| {
            RelayError::Channel(format!(
                "channel {} base URL cannot be a websocket",
                target.id
            ))
        })?;
        headers.insert("openai-beta", HeaderValue::from_static("realtime=v1"));
        apply_custom_headers(&mut headers, target)?;
        Ok(RealtimeUpstream {
            url: url.into(),
            headers,
        })
    }
}

/// The usage of a Realtime `response.done` server event (`response.usage`): `input_tokens`,
/// `output_tokens`, `input_token_details.{cached_tokens, audio_tokens}` and
/// `output_token_details.audio_tokens` (the plural `*_tokens_details` of the Responses API is
/// read too). Audio and cached tokens are parts of the totals, as in [`Usage`]. `None` for other
/// events and for a `response.done` without usage.
pub fn usage_of_event(event: &Value) -> Option<Usage> {
    if event.get("type").and_then(Value::as_str) != Some("response.done") {
        return None;
    }
    let usage = event.pointer("/response/usage").filter(|u| u.is_object())?;
    let int = |path: &str| {
        usage
            .pointer(path)
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .max(0)
    };
    let detail = |side: &str, field: &str| {
        int(&format!("/{side}_token_details/{field}"))
            .max(int(&format!("/{side}_tokens_details/{field}")))
    };
    if usage.get("input_tokens").is_none() && usage.get("output_tokens").is_none() {
        return None;
    }
    Some(Usage {
        prompt_tokens: int("/input_tokens"),
        completion_tokens: int("/output_tokens"),
        cached_tokens: detail("input", "cached_tokens"),
        input_audio_tokens: detail("input", "audio_tokens"),
        output_audio_tokens: detail("output", "audio_tokens"),
        reasoning_tokens: detail("output", "reasoning_tokens"),
        ..Usage::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn target(channel_type: i32, base: &str) -> ChannelTarget {
        ChannelTarget {
            id: 7,
            channel_type,
            base_url: base.into(),
            key: "sk-up".into(),
            ..ChannelTarget::default()
        }
    }

    #[test]
    fn openai_realtime_url_and_headers() {
        let mut t = target(1, "https://api.example.com/v1");
        t.model_mapping
            .insert("rt".into(), "gpt-4o-realtime-preview".into());
        t.custom_headers.push(("x-extra".into(), "1".into()));
        let p = Provider::for_channel_type(1).unwrap_or_else(|| panic!("openai"));
        let up = p.realtime(&t, "rt").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            up.url,
            "wss://api.example.com/v1/realtime?model=gpt-4o-realtime-preview"
        );
        assert_eq!(up.headers["authorization"], "Bearer sk-up");
        assert_eq!(up.headers["openai-beta"], "realtime=v1");
        assert_eq!(up.headers["x-extra"], "1");
        let plain = target(1, "http://127.0.0.1:9");
        let up = p.realtime(&plain, "m").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(up.url, "ws://127.0.0.1:9/v1/realtime?model=m");
    }

    #[test]
    fn azure_realtime_url_and_headers() {
        let mut t = target(3, "https://res.openai.azure.com");
        t.config
            .insert("api_version".into(), json!("2024-10-01-preview"));
        let p = Provider::for_channel_type(3).unwrap_or_else(|| panic!("azure"));
        assert!(p.supports_realtime());
        let up = p
            .realtime(&t, "gpt-4o-realtime-preview")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            up.url,
            "wss://res.openai.azure.com/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-4o-realtime-preview"
        );
        assert_eq!(up.headers["api-key"], "sk-up");
        assert!(up.headers.get("authorization").is_none());
        let anthropic = Provider::for_channel_type(14).unwrap_or_else(|| panic!("anthropic"));
        assert!(!anthropic.supports_realtime());
        assert!(anthropic.realtime(&t, "m").is_err());
    }

    #[test]
    fn usage_of_response_done() {
        let e = json!({"type": "response.done", "response": {"usage": {
            "total_tokens": 360, "input_tokens": 120, "output_tokens": 240,
            "input_token_details": {"text_tokens": 20, "audio_tokens": 100, "cached_tokens": 64},
            "output_token_details": {"text_tokens": 40, "audio_tokens": 200}}}});
        assert_eq!(
            usage_of_event(&e),
            Some(Usage {
                prompt_tokens: 120,
                completion_tokens: 240,
                cached_tokens: 64,
                input_audio_tokens: 100,
                output_audio_tokens: 200,
                ..Usage::default()
            })
        );
        assert_eq!(
            usage_of_event(&json!({"type": "response.text.delta", "delta": "x"})),
            None
        );
        assert_eq!(
            usage_of_event(&json!({"type": "response.done", "response": {"usage": null}})),
            None
        );
    }
}
