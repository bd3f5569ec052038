//! AWS Bedrock (type 32), Anthropic models, reached from OpenAI chat completions:
//! `POST {base}/model/{modelId}/invoke` (or `/invoke-with-response-stream`) signed with SigV4
//! (service `bedrock`), the body being the Anthropic Messages request of the Anthropic adapter
//! without `model` and `stream` and with `anthropic_version: bedrock-2023-05-31`. Answers are
//! Anthropic messages (translated like the Anthropic adapter's); streams come in the binary
//! event stream framing, each `chunk` frame holding one Anthropic event base64-encoded in its
//! `bytes` field.
//!
//! The channel key is `ACCESS_KEY|SECRET_KEY|REGION` (optionally `|SESSION_TOKEN`); the base
//! URL defaults to `https://bedrock-runtime.{region}.amazonaws.com`. The model id is the
//! channel's model mapping of the requested model (e.g. `claude-sonnet-4-0` ->
//! `anthropic.claude-sonnet-4-20250514-v1:0`), else the requested model.

use crate::sse::EventTranslator;
use base64::Engine as _;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{json, Value};

use crate::aws::{self, Credentials, Frame, FrameReader};
use crate::endpoint::Endpoint;
use crate::error::RelayError;
use crate::provider::{classify_openai, ChannelTarget, UpstreamFailure};
use crate::providers::anthropic::{platform_request, AnthropicStream};
use crate::providers::openai::{apply_custom_headers, json_bytes, key_header, parse_url};
use crate::request::RelayRequest;
use crate::usage::Usage;

/// The `anthropic_version` Bedrock wants in the body.
pub const BEDROCK_ANTHROPIC_VERSION: &str = "bedrock-2023-05-31";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bedrock;

/// The credentials of a channel key `AK|SK|REGION[|SESSION_TOKEN]`.
pub fn credentials(target: &ChannelTarget) -> Result<Credentials, RelayError> {
    let parts: Vec<&str> = target.key.trim().split('|').map(str::trim).collect();
    match parts.as_slice() {
        [ak, sk, region, rest @ ..]
            if !ak.is_empty() && !sk.is_empty() && !region.is_empty() && rest.len() <= 1 =>
        {
            Ok(Credentials {
                access_key: (*ak).to_owned(),
                secret_key: (*sk).to_owned(),
                session_token: rest
                    .first()
                    .filter(|t| !t.is_empty())
                    .map(|t| (*t).to_owned()),
                region: (*region).to_owned(),
            })
        }
        _ => Err(RelayError::Channel(format!(
            "channel {} key must be ACCESS_KEY|SECRET_KEY|REGION",
            target.id
        ))),
    }
}

impl Bedrock {
    /// Chat completions.
    pub fn supports(&self, endpoint: Endpoint) -> bool {
        endpoint == Endpoint::ChatCompletions
    }

    /// The signed `invoke` / `invoke-with-response-stream` request.
    pub fn build(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        if !self.supports(req.endpoint) {
            return Err(RelayError::UnsupportedEndpoint(req.endpoint.path().into()));
        }
        let creds = credentials(target)?;
        let stored = target.base_url.trim().trim_end_matches('/');
        let base = if stored.is_empty() {
            format!("https://bedrock-runtime.{}.amazonaws.com", creds.region)
        } else {
            stored.to_owned()
        };
        let model = target.upstream_model(&req.model);
        let action = if req.stream {
            "invoke-with-response-stream"
        } else {
            "invoke"
        };
        let url = parse_url(&format!("{base}/model/{}/{action}", aws::uri_encode(model)))?;
        let mut body = platform_request(target, req, BEDROCK_ANTHROPIC_VERSION)?;
        // The action names the stream.
        body.stream = None;
        let body = json_bytes(&body)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let signed = aws::sign(
            &creds,
            "bedrock",
            "POST",
            &url,
            &[("content-type", "application/json")],
            &body,
            &aws::amz_date(now),
        );
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static(if req.stream {
                "application/vnd.amazon.eventstream"
            } else {
                "application/json"
            }),
        );
        headers.insert(AUTHORIZATION, key_header(target, &signed.authorization)?);
        headers.insert(
            "x-amz-date",
            HeaderValue::from_str(&signed.amz_date)
                .map_err(|_| RelayError::Channel("invalid date".into()))?,
        );
        if let Some(t) = &signed.security_token {
            headers.insert("x-amz-security-token", key_header(target, t)?);
        }
        apply_custom_headers(&mut headers, target)?;
        let mut builder = client.post(url).headers(headers).body(body);
        if !req.stream && !target.timeout.is_zero() {
            builder = builder.timeout(target.timeout);
        }
        Ok(builder)
    }
}

/// Classifies a Bedrock error (`{"message"}`, the exception in `x-amzn-errortype`): 403
/// (unrecognised client, bad signature, no model access) disables the channel; 429
/// (throttling) and 5xx are retried.
pub fn classify(status: u16, body: &[u8], disable_keywords: &[&str]) -> UpstreamFailure {
    let mut f = classify_openai(status, body, disable_keywords);
    if status == 403 {
        f.auto_disable = true;
        f.retryable = true;
    }
    f
}

/// Decodes an `invoke-with-response-stream` body into Anthropic SSE events and translates them
/// (see [`AnthropicStream`]).
#[derive(Debug)]
pub struct BedrockStream {
    frames: FrameReader,
    inner: AnthropicStream,
    failed: bool,
}

impl BedrockStream {
    pub fn new(model: &str) -> Self {
        BedrockStream {
            frames: FrameReader::default(),
            inner: AnthropicStream::new(model),
            failed: false,
        }
    }

    /// Translates the frames `chunk` completes. A corrupt frame ends the stream with an error
    /// event, after the frames that came before it in the same chunk (they used to be dropped,
    /// so the output depended on where the upstream's chunks were cut).
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        if self.failed {
            return;
        }
        let mut frames = Vec::new();
        let result = self.frames.feed(chunk, &mut frames);
        for f in frames {
            let sse = frame_to_sse(&f);
            if !sse.is_empty() {
                self.inner.feed(&sse, out);
            }
        }
        if let Err(e) = result {
            self.failed = true;
            let sse = anthropic_error_event("api_error", &e);
            self.inner.feed(&sse, out);
        }
    }

    /// See [`AnthropicStream::with_response_tool`].
    pub fn with_response_tool(mut self, name: Option<String>) -> Self {
        self.inner = self.inner.with_response_tool(name);
        self
    }

    pub fn finish(&mut self, out: &mut Vec<u8>) {
        self.inner.finish(out);
    }

    pub fn usage(&self) -> Option<Usage> {
        self.inner.usage()
    }
}

fn anthropic_error_event(kind: &str, message: &str) -> Vec<u8> {
    let v = json!({"type": "error", "error": {"type": kind, "message": message}});
    format!("event: error\ndata: {v}\n\n").into_bytes()
}

/// One frame as Anthropic SSE: a `chunk` event's decoded `bytes`, or an exception as an
/// `error` event.
fn frame_to_sse(f: &Frame) -> Vec<u8> {
    let payload: Value = serde_json::from_slice(&f.payload).unwrap_or(Value::Null);
    if f.header(":message-type") == Some("exception") {
        let message = payload
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the upstream stream failed");
        let kind = f.header(":exception-type").unwrap_or("api_error");
        return anthropic_error_event(kind, message);
    }
    let Some(b64) = payload.get("bytes").and_then(Value::as_str) else {
        return Vec::new();
    };
    let Ok(event) = base64::engine::general_purpose::STANDARD.decode(b64) else {
        return Vec::new();
    };
    let kind = serde_json::from_slice::<Value>(&event)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    let mut out = Vec::with_capacity(event.len() + kind.len() + 16);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    out.extend(event.iter().copied().filter(|b| *b != b'\n'));
    out.extend_from_slice(b"\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(key: &str) -> ChannelTarget {
        ChannelTarget {
            id: 7,
            channel_type: 32,
            key: key.into(),
            ..ChannelTarget::default()
        }
    }

    #[test]
    fn keys() {
        let c = credentials(&target("AK|SK|us-west-2")).unwrap();
        assert_eq!(
            (
                c.access_key.as_str(),
                c.secret_key.as_str(),
                c.region.as_str()
            ),
            ("AK", "SK", "us-west-2")
        );
        assert_eq!(c.session_token, None);
        let c = credentials(&target("AK|SK|eu-west-1|TOKEN")).unwrap();
        assert_eq!(c.session_token.as_deref(), Some("TOKEN"));
        assert!(credentials(&target("AK|SK")).is_err());
        assert!(credentials(&target("AK||us-east-1")).is_err());
    }

    #[test]
    fn streams_are_unframed_and_translated() {
        let event = |v: Value| {
            let b64 = base64::engine::general_purpose::STANDARD.encode(v.to_string());
            Frame::encode(
                &[
                    (":event-type", "chunk"),
                    (":content-type", "application/json"),
                    (":message-type", "event"),
                ],
                json!({ "bytes": b64 }).to_string().as_bytes(),
            )
        };
        let mut bytes = Vec::new();
        bytes.extend(event(
            json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage": {"input_tokens": 11, "output_tokens": 1}}}),
        ));
        bytes.extend(event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
        ));
        bytes.extend(event(
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}}),
        ));
        bytes.extend(event(json!({"type": "message_stop"})));
        let mut s = BedrockStream::new("claude");
        let mut out = Vec::new();
        for piece in bytes.chunks(13) {
            s.feed(piece, &mut out);
        }
        s.finish(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"content\":\"Hi\""), "{text}");
        assert!(text.contains("\"finish_reason\":\"stop\""));
        assert!(text.trim_end().ends_with("data: [DONE]"));
        let u = s.usage().unwrap();
        assert_eq!((u.prompt_tokens, u.completion_tokens), (11, 7));

        let mut s = BedrockStream::new("claude");
        let mut out = Vec::new();
        s.feed(
            &Frame::encode(
                &[
                    (":message-type", "exception"),
                    (":exception-type", "throttlingException"),
                ],
                br#"{"message":"Too many requests"}"#,
            ),
            &mut out,
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Too many requests"), "{text}");
        assert!(text.contains("throttlingException"));
    }
}
