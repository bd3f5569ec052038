//! Google Vertex AI (type 42), reached from OpenAI chat completions, for Gemini and Anthropic
//! models:
//!
//! - Credentials: the channel key is a service-account JSON key. A JWT (RS256, signed with its
//!   `private_key`; `iss` = `client_email`, `aud` = `token_uri`, scope `cloud-platform`, one
//!   hour) is exchanged at `token_uri` for an OAuth access token
//!   (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`), cached until a minute before
//!   it expires and sent as `Authorization: Bearer`.
//! - URL: `{base}/v1/projects/{project_id}/locations/{region}/publishers/{google|anthropic}/
//!   models/{model}:{method}`, base `https://{region}-aiplatform.googleapis.com` (the `global`
//!   region: `https://aiplatform.googleapis.com`), region from the channel config's `region`
//!   (default `us-central1`). Models starting with `claude` are Anthropic's.
//! - Gemini models: the Gemini adapter's body, `generateContent` /
//!   `streamGenerateContent?alt=sse`. Anthropic models: the Anthropic adapter's body without
//!   `model`, with `anthropic_version: vertex-2023-10-16`, `rawPredict` / `streamRawPredict`.
//!   Answers and streams are translated like those adapters' (the family is recognised from
//!   the answer itself).

use crate::sse::EventTranslator;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine as _;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{json, Value};

use crate::endpoint::Endpoint;
use crate::error::RelayError;
use crate::provider::{classify_transport, Answer, ChannelTarget, UpstreamFailure};
use crate::providers::anthropic::AnthropicStream;
use crate::providers::gemini::GeminiStream;
use crate::providers::openai::{
    apply_custom_headers, config_failure, json_bytes, key_header, parse_url,
};
use crate::request::RelayRequest;
use crate::usage::Usage;

/// The `anthropic_version` Vertex wants in Anthropic bodies.
pub const VERTEX_ANTHROPIC_VERSION: &str = "vertex-2023-10-16";
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
const DEFAULT_REGION: &str = "us-central1";
/// A cached token is replaced this long before it expires.
const TOKEN_MARGIN: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Vertex;

/// The fields of a service-account key that are used.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ServiceAccount {
    pub project_id: String,
    #[serde(default)]
    pub private_key_id: String,
    pub private_key: String,
    pub client_email: String,
    #[serde(default)]
    pub token_uri: String,
}

impl ServiceAccount {
    fn token_uri(&self) -> &str {
        if self.token_uri.trim().is_empty() {
            DEFAULT_TOKEN_URI
        } else {
            self.token_uri.trim()
        }
    }

    fn cache_key(&self) -> String {
        format!(
            "{}\n{}\n{}",
            self.client_email,
            self.private_key_id,
            self.token_uri()
        )
    }
}

/// The service account of a channel key.
pub fn service_account(target: &ChannelTarget) -> Result<ServiceAccount, RelayError> {
    serde_json::from_str(target.key.trim()).map_err(|e| {
        RelayError::Channel(format!(
            "channel {} key is not a service-account JSON key: {e}",
            target.id
        ))
    })
}

fn b64url(data: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(data)
}

/// The DER bytes of a PEM `PRIVATE KEY` (PKCS#8).
fn pem_der(pem: &str) -> Result<Vec<u8>, RelayError> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----") && !l.is_empty())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|_| RelayError::Channel("the service account's private_key is not PEM".into()))
}

/// The signed JWT asking for an access token, issued at `now` (Unix seconds).
pub fn assertion(sa: &ServiceAccount, now: u64) -> Result<String, RelayError> {
    let header = json!({"alg": "RS256", "typ": "JWT", "kid": sa.private_key_id});
    let claims = json!({
        "iss": sa.client_email,
        "scope": SCOPE,
        "aud": sa.token_uri(),
        "iat": now,
        "exp": now + 3600,
    });
    let signing_input = format!(
        "{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let key =
        ring::signature::RsaKeyPair::from_pkcs8(&pem_der(&sa.private_key)?).map_err(|_| {
            RelayError::Channel("the service account's private_key is not an RSA PKCS#8 key".into())
        })?;
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| RelayError::Channel("signing the token request failed".into()))?;
    Ok(format!("{signing_input}.{}", b64url(&signature)))
}

/// Access tokens by service account, with their expiry.
fn tokens() -> &'static Mutex<HashMap<String, (String, Instant)>> {
    static TOKENS: OnceLock<Mutex<HashMap<String, (String, Instant)>>> = OnceLock::new();
    TOKENS.get_or_init(|| Mutex::new(HashMap::new()))
}

fn cached(key: &str) -> Option<String> {
    let map = tokens().lock().unwrap_or_else(|p| p.into_inner());
    map.get(key)
        .filter(|(_, until)| Instant::now() < *until)
        .map(|(t, _)| t.clone())
}

/// The channel's access token: cached, else exchanged at the key's `token_uri`.
pub async fn access_token(
    client: &reqwest::Client,
    target: &ChannelTarget,
) -> Result<String, UpstreamFailure> {
    let sa = service_account(target).map_err(config_failure)?;
    let key = sa.cache_key();
    if let Some(t) = cached(&key) {
        return Ok(t);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let jwt = assertion(&sa, now).map_err(config_failure)?;
    let body = format!(
        "grant_type={}&assertion={}",
        crate::aws::uri_encode("urn:ietf:params:oauth:grant-type:jwt-bearer"),
        crate::aws::uri_encode(&jwt)
    );
    let resp = client
        .post(sa.token_uri())
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| classify_transport(&e))?;
    let status = resp.status().as_u16();
    let bytes = resp.bytes().await.map_err(|e| classify_transport(&e))?;
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let token = v.get("access_token").and_then(Value::as_str);
    let (true, Some(token)) = ((200..300).contains(&status), token) else {
        let message = v
            .get("error_description")
            .or_else(|| v.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("the token endpoint refused the service account");
        // A refused service account: the channel's credentials are unusable.
        return Err(UpstreamFailure {
            status: if status == 200 { 502 } else { 401 },
            message: format!("Vertex AI token exchange failed: {message}"),
            code: Some("vertex_token_error".into()),
            retryable: true,
            auto_disable: (400..500).contains(&status),
            kind: None,
            retry_after: None,
            gateway: false,
        });
    };
    let ttl = v.get("expires_in").and_then(Value::as_u64).unwrap_or(3600);
    let until = Instant::now() + Duration::from_secs(ttl).saturating_sub(TOKEN_MARGIN);
    tokens()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, (token.to_owned(), until));
    Ok(token.to_owned())
}

/// The cached, unexpired access token of the channel, if any (see [`access_token`]).
pub fn cached_token(target: &ChannelTarget) -> Option<String> {
    cached(&service_account(target).ok()?.cache_key())
}

/// Whether a (mapped) model is Anthropic's on Vertex.
pub fn is_anthropic(model: &str) -> bool {
    model.to_ascii_lowercase().starts_with("claude")
}

impl Vertex {
    /// Chat completions.
    pub fn supports(&self, endpoint: Endpoint) -> bool {
        endpoint == Endpoint::ChatCompletions
    }

    /// The request, with the access token obtained by [`access_token`] just before.
    pub fn build(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
        token: &str,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        if !self.supports(req.endpoint) {
            return Err(RelayError::UnsupportedEndpoint(req.endpoint.path().into()));
        }
        let sa = service_account(target)?;
        let region = target.config_str("region").unwrap_or(DEFAULT_REGION);
        let stored = target.base_url.trim().trim_end_matches('/');
        let base = match (stored.is_empty(), region) {
            (false, _) => stored.to_owned(),
            (true, "global") => "https://aiplatform.googleapis.com".to_owned(),
            (true, r) => format!("https://{r}-aiplatform.googleapis.com"),
        };
        let model = target.upstream_model(&req.model);
        let (publisher, method, body) = if is_anthropic(model) {
            let body = crate::providers::anthropic::platform_request(
                target,
                req,
                VERTEX_ANTHROPIC_VERSION,
            )?;
            let method = if req.stream {
                "streamRawPredict"
            } else {
                "rawPredict"
            };
            ("anthropic", method, json_bytes(&body)?)
        } else {
            let method = if req.stream {
                "streamGenerateContent?alt=sse"
            } else {
                "generateContent"
            };
            let body = crate::providers::gemini::request(target, req)?;
            ("google", method, json_bytes(&body)?)
        };
        let url = parse_url(&format!(
            "{base}/v1/projects/{}/locations/{region}/publishers/{publisher}/models/{model}:{method}",
            sa.project_id
        ))?;
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            AUTHORIZATION,
            key_header(target, format!("Bearer {token}"))?,
        );
        apply_custom_headers(&mut headers, target)?;
        let mut builder = client.post(url).headers(headers).body(body);
        if !req.stream && !target.timeout.is_zero() {
            builder = builder.timeout(target.timeout);
        }
        Ok(builder)
    }
}

/// Whether an answer body is Gemini's (rather than an Anthropic message).
fn is_gemini_answer(body: &[u8]) -> bool {
    /// The members that tell the families apart (parsed, so spacing does not matter; the
    /// rest is skipped).
    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(rename = "type", default, borrow)]
        kind: crate::wire::Str<'a>,
        #[serde(default)]
        candidates: Option<serde::de::IgnoredAny>,
        #[serde(rename = "usageMetadata", default)]
        usage: Option<serde::de::IgnoredAny>,
    }
    let Some(p) = std::str::from_utf8(body)
        .ok()
        .and_then(crate::wire::from_object::<Probe<'_>>)
    else {
        return false;
    };
    p.kind.as_str() != Some("message") && (p.candidates.is_some() || p.usage.is_some())
}

/// The usage of an answer of either family.
pub fn response_usage(body: &[u8]) -> Option<Usage> {
    if is_gemini_answer(body) {
        crate::providers::gemini::response_usage(body)
    } else {
        crate::providers::anthropic::response_usage(body)
    }
}

/// An answer of either family in OpenAI's shape.
pub fn answer(req: &RelayRequest, body: Vec<u8>) -> Result<Answer, UpstreamFailure> {
    if is_gemini_answer(&body) {
        crate::providers::gemini::answer(req, &body)
    } else {
        crate::providers::anthropic::answer(req, body)
    }
}

/// Classifies a Vertex error: Google's shape (Gemini's rules), or Anthropic's for Anthropic
/// models.
pub fn classify(status: u16, body: &[u8], disable_keywords: &[&str]) -> UpstreamFailure {
    let anthropic = body.windows(15).any(|w| w == b"\"type\":\"error\"");
    if anthropic {
        crate::providers::anthropic::classify(status, body, disable_keywords)
    } else {
        crate::providers::gemini::classify(status, body, disable_keywords)
    }
}

/// A stream of either family, recognised from its first complete line that is neither blank
/// nor a comment (`event:` for Anthropic's, `data:` for Gemini's).
#[derive(Debug)]
pub struct VertexStream {
    model: String,
    pending: Vec<u8>,
    inner: Option<Family>,
    /// For Anthropic streams: see [`AnthropicStream::with_response_tool`].
    response_tool: Option<String>,
}

#[derive(Debug)]
enum Family {
    Anthropic(AnthropicStream),
    Gemini(GeminiStream),
}

impl VertexStream {
    pub fn new(model: &str) -> Self {
        VertexStream {
            model: model.to_owned(),
            pending: Vec::new(),
            inner: None,
            response_tool: None,
        }
    }

    /// For Anthropic models: see [`AnthropicStream::with_response_tool`] (Gemini's answer
    /// is JSON text already).
    pub fn with_response_tool(mut self, name: Option<String>) -> Self {
        self.response_tool = name;
        self
    }

    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        if self.inner.is_none() {
            self.pending.extend_from_slice(chunk);
            // Only complete lines count: the first non-blank line used to be taken even when
            // unfinished, so `\n\nev` (a stream cut there) read as Gemini's and `\n\nevent:` as
            // Anthropic's; and a leading comment (`: keep-alive`) made any stream Gemini's.
            let Some(end) = self.pending.iter().rposition(|&b| b == b'\n' || b == b'\r') else {
                return;
            };
            let Some(first) = self.pending[..end]
                .split(|&b| b == b'\n' || b == b'\r')
                .map(<[u8]>::trim_ascii)
                .find(|l| !l.is_empty() && !l.starts_with(b":"))
            else {
                // Blank and comment lines only: nothing for either reader, so not kept.
                self.pending.drain(..=end);
                return;
            };
            self.inner = Some(if first.starts_with(b"event:") {
                Family::Anthropic(
                    AnthropicStream::new(&self.model).with_response_tool(self.response_tool.take()),
                )
            } else {
                Family::Gemini(GeminiStream::new(&self.model))
            });
            let pending = std::mem::take(&mut self.pending);
            self.feed_inner(&pending, out);
            return;
        }
        self.feed_inner(chunk, out);
    }

    fn feed_inner(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        match &mut self.inner {
            Some(Family::Anthropic(s)) => s.feed(chunk, out),
            Some(Family::Gemini(s)) => s.feed(chunk, out),
            None => {}
        }
    }

    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.inner.is_none() && !self.pending.is_empty() {
            self.inner = Some(Family::Gemini(GeminiStream::new(&self.model)));
            let pending = std::mem::take(&mut self.pending);
            self.feed_inner(&pending, out);
        }
        match &mut self.inner {
            Some(Family::Anthropic(s)) => s.finish(out),
            Some(Family::Gemini(s)) => s.finish(out),
            None => {}
        }
    }

    pub fn usage(&self) -> Option<Usage> {
        match &self.inner {
            Some(Family::Anthropic(s)) => s.usage(),
            Some(Family::Gemini(s)) => s.usage(),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = include_str!("../../tests/fixtures/vertex/service_account.json");

    #[test]
    fn assertions_are_rs256_jwts_signed_with_the_key() {
        let target = ChannelTarget {
            key: KEY.into(),
            ..ChannelTarget::default()
        };
        let sa = service_account(&target).unwrap();
        assert_eq!(sa.project_id, "switchboard-test");
        let jwt = assertion(&sa, 1_700_000_000).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let decode = |p: &str| {
            let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .unwrap();
            serde_json::from_slice::<Value>(&bytes).unwrap()
        };
        assert_eq!(
            decode(parts[0]),
            json!({"alg": "RS256", "typ": "JWT", "kid": "0123456789abcdef"})
        );
        assert_eq!(
            decode(parts[1]),
            json!({"iss": "relay@switchboard-test.iam.gserviceaccount.com", "scope": SCOPE,
                "aud": "https://oauth2.googleapis.com/token", "iat": 1_700_000_000u64, "exp": 1_700_003_600u64})
        );
        // Verified with the key's public half.
        let pair =
            ring::signature::RsaKeyPair::from_pkcs8(&pem_der(&sa.private_key).unwrap()).unwrap();
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::RSA_PKCS1_2048_8192_SHA256,
            ring::signature::KeyPair::public_key(&pair)
                .as_ref()
                .to_vec(),
        );
        let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[2])
            .unwrap();
        public
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .unwrap();
        assert!(service_account(&ChannelTarget {
            key: "AK|SK|us-east-1".into(),
            ..ChannelTarget::default()
        })
        .is_err());
    }

    #[test]
    fn families_are_recognised() {
        assert!(is_anthropic("claude-sonnet-4@20250514"));
        assert!(!is_anthropic("gemini-2.5-pro"));
        assert!(is_gemini_answer(br#"{"candidates":[],"usageMetadata":{}}"#));
        assert!(!is_gemini_answer(
            br#"{"id":"msg","type":"message","content":[]}"#
        ));

        let mut s = VertexStream::new("m");
        let mut out = Vec::new();
        s.feed(b"eve", &mut out);
        assert!(out.is_empty());
        s.feed(
            b"nt: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":3}}}\n\n",
            &mut out,
        );
        assert!(String::from_utf8_lossy(&out).contains("\"role\":\"assistant\""));
        assert!(matches!(s.inner, Some(Family::Anthropic(_))));
    }

    /// The families were told apart by bytes (`"type":"message"`): a spaced Anthropic answer
    /// whose tool input has a `candidates` member read as Gemini's.
    #[test]
    fn families_are_recognised_by_parsing() {
        assert!(!is_gemini_answer(
            br#"{"id": "msg", "type": "message", "content": [{"type": "tool_use", "id": "t", "name": "pick", "input": {"candidates": ["a", "b"]}}], "usage": {}}"#
        ));
        assert!(is_gemini_answer(
            br#"{ "candidates" : [ ], "modelVersion": "gemini-2.5-pro" }"#
        ));
        assert!(!is_gemini_answer(b"<html>candidates usageMetadata</html>"));
    }

    /// Regression (tests/fuzz.rs, stream properties): the family was taken from the first
    /// non-blank line even when unfinished, from a comment, and never from CR-terminated lines.
    #[test]
    fn the_family_comes_from_the_first_complete_field_line() {
        let anthropic = |pieces: &[&[u8]]| {
            let mut s = VertexStream::new("m");
            let mut out = Vec::new();
            for p in pieces {
                s.feed(p, &mut out);
            }
            matches!(s.inner, Some(Family::Anthropic(_)))
        };
        let line = b"event: message_start\ndata: {}\n\n";
        // Blank lines first, cut inside `event:`.
        assert!(anthropic(&[b"\r\n\r\nev", &line[2..]]));
        assert!(anthropic(&[b"\n", b"\nev", &line[2..]]));
        // A comment first.
        assert!(anthropic(&[b": keep-alive\n\n", line]));
        // CR line ends.
        assert!(anthropic(&[b"event: message_start\rdata: {}\r\r"]));
        // Gemini's streams are still Gemini's.
        let mut s = VertexStream::new("m");
        s.feed(b": ping\n\ndata: {\"candidates\":[]}\n\n", &mut Vec::new());
        assert!(matches!(s.inner, Some(Family::Gemini(_))));
    }
}
