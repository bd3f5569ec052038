//! Upstream families. [`Provider`] is a closed enum (static dispatch); each family lives in its
//! own file under `providers/`. Every family answers the same questions: build the upstream
//! request, read the usage of a response, observe a stream, classify a failure, list the
//! models, read the balance. All OpenAI-compatible vendors share one adapter configured by base
//! URL; Azure OpenAI, Anthropic, Gemini, Bedrock, Vertex AI and the rerank vendors (Cohere,
//! Jina) have their own.
//!
//! Clients speak OpenAI's protocol, Anthropic's Messages API (passed through to Anthropic
//! channels, translated to and from chat completions for OpenAI-protocol channels, see
//! [`crate::messages`]) or, for Gemini channels only, Gemini's generateContent (passed
//! through). Families that answer in OpenAI's shape (OpenAI compatible, Azure) are passed
//! through byte for byte; the others (Anthropic, Gemini) are translated: [`Provider::answer`]
//! turns a whole answer into OpenAI's shape and a [`StreamTranslator`] turns their SSE into
//! OpenAI `chat.completion.chunk` events as they arrive.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::Value;
use switchboard_domain::channel::{is_retryable_status, should_auto_disable};
use switchboard_domain::channel_settings;

pub use crate::client::{http_client, ClientPool};
use crate::endpoint::Endpoint;
use crate::error::{OpenAiErrorBody, RelayError};
use crate::providers::anthropic::{Anthropic, ResponseTool};
use crate::providers::azure::Azure;
use crate::providers::bedrock::Bedrock;
use crate::providers::gemini::Gemini;
use crate::providers::openai::OpenAiCompatible;
use crate::providers::rerank::RerankVendor;
use crate::providers::vertex::Vertex;
use crate::request::RelayRequest;
use crate::stream::SseTap;
use crate::translate::StreamTranslator;
use crate::usage::Usage;

/// The channel a request is sent to, as the dispatcher hands it over.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChannelTarget {
    pub id: i64,
    pub channel_type: i32,
    /// Without `/v1` and without a trailing slash (as stored). Empty: the channel type's default.
    pub base_url: String,
    pub key: String,
    /// Sent after the relay's own headers, replacing any of the same name (`Authorization`
    /// included, for vendors that want their key elsewhere).
    pub custom_headers: Vec<(String, String)>,
    pub proxy: Option<String>,
    /// Requested model -> upstream model.
    pub model_mapping: HashMap<String, String>,
    /// Overall deadline of a non-streamed request; `Duration::ZERO` means none. Not applied to
    /// streams, where it would cut long generations (bound their time to first byte instead).
    pub timeout: Duration,
    /// The channel's `config` object (per-type settings such as Azure's `api_version`).
    pub config: serde_json::Map<String, Value>,
    /// Models (`prefix*` allowed) whose stream requests skip this channel.
    pub disabled_stream: Vec<String>,
    /// Upstream URLs already parsed, by path (see [`ChannelTarget::url`]).
    pub urls: UrlMemo,
}

/// A channel's upstream URLs, parsed once per path: parsing one (the host through IDNA) cost
/// several per cent of the relay's CPU per request. Each is kept with the base URL and channel
/// type it was made from and used only while they are unchanged. Clones share the memo; it
/// never makes two targets unequal.
#[derive(Debug, Clone, Default)]
pub struct UrlMemo(Arc<RwLock<foldhash::HashMap<&'static str, MemoUrl>>>);

/// A parsed URL with the base URL and channel type it was made from.
type MemoUrl = (String, i32, reqwest::Url);

impl PartialEq for UrlMemo {
    fn eq(&self, _: &UrlMemo) -> bool {
        true
    }
}

impl ChannelTarget {
    /// The URL `{base}{path()}` kept under `key` (a path that names it for this channel, such
    /// as the endpoint's), built and parsed on first use.
    pub fn url(
        &self,
        key: &'static str,
        path: impl FnOnce() -> String,
    ) -> Result<reqwest::Url, RelayError> {
        if let Some((base, kind, url)) = self
            .urls
            .0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
        {
            if *base == self.base_url && *kind == self.channel_type {
                return Ok(url.clone());
            }
        }
        let url = crate::providers::openai::parse_url(&format!(
            "{}{}",
            self.effective_base_url()?,
            path()
        ))?;
        self.urls
            .0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, (self.base_url.clone(), self.channel_type, url.clone()));
        Ok(url)
    }

    /// The model sent upstream for `model`, after this channel's model mapping.
    pub fn upstream_model<'a>(&'a self, model: &'a str) -> &'a str {
        match self.model_mapping.get(model) {
            Some(m) if !m.trim().is_empty() => m,
            _ => model,
        }
    }

    /// Whether this channel may serve a request for `model` (the requested name, before model
    /// mapping) at `endpoint`, streamed or not: a stream request for a model on the
    /// disabled-streaming list skips it, and an only-chat channel serves chat completions (and
    /// Messages and Gemini clients, translated onto chat) but no other endpoint.
    /// (`switchboard_domain::channel_settings` documents the settings.)
    pub fn serves(&self, endpoint: Endpoint, model: &str, stream: bool) -> bool {
        if stream && channel_settings::list_matches(&self.disabled_stream, model) {
            return false;
        }
        !self.only_chat()
            || matches!(
                endpoint,
                Endpoint::ChatCompletions | Endpoint::Messages | Endpoint::GenerateContent
            )
    }

    /// The channel serves chat only (`config.only_chat`); realtime sessions skip it too.
    pub fn only_chat(&self) -> bool {
        self.config.get(channel_settings::ONLY_CHAT_KEY) == Some(&Value::Bool(true))
    }

    /// The upstream voice for the client's TTS `voice` (`config.voice_mapping`), if mapped.
    pub fn mapped_voice(&self, voice: &str) -> Option<&str> {
        self.config
            .get(channel_settings::VOICE_MAPPING_KEY)?
            .get(voice)?
            .as_str()
            .filter(|v| !v.is_empty())
    }

    /// The other parameters set in the upstream JSON body (`config.custom_parameter`), if any.
    pub fn custom_parameters(&self) -> Option<&serde_json::Map<String, Value>> {
        self.config
            .get(channel_settings::CUSTOM_PARAMETER_KEY)?
            .as_object()
            .filter(|m| !m.is_empty())
    }

    /// A non-empty string setting of the channel's `config`.
    pub fn config_str(&self, key: &str) -> Option<&str> {
        self.config
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    }

    /// The base URL to use: the stored one, else the channel type's default; a trailing `/`
    /// or `/v1` is dropped (paths carry `/v1`).
    pub fn effective_base_url(&self) -> Result<String, RelayError> {
        let stored = self.base_url.trim();
        let base = if stored.is_empty() {
            switchboard_domain::channel::channel_type(self.channel_type)
                .map(|t| t.default_base_url)
                .unwrap_or_default()
        } else {
            stored
        };
        let base = base.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        if base.is_empty() {
            return Err(RelayError::Channel(format!(
                "channel {} has no base URL",
                self.id
            )));
        }
        Ok(base.to_owned())
    }
}

/// How an upstream call failed, and what the dispatcher should do about it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpstreamFailure {
    /// The upstream's HTTP status; 504 for a timeout and 502 for other transport failures.
    pub status: u16,
    /// The upstream's own error message (or a description of the transport failure).
    pub message: String,
    /// The upstream's error code or type, when it gave one (`context_length_exceeded`, ...).
    pub code: Option<String>,
    /// The upstream's error type (OpenAI's `error.type`, Anthropic's `error.type`), passed to
    /// clients so that their back-off and error handling see what the upstream said.
    pub kind: Option<String>,
    /// Seconds the upstream asked to wait (`Retry-After`, `retry-after-ms`, Google's
    /// `RetryInfo`), passed to clients.
    pub retry_after: Option<u64>,
    /// Another channel may succeed: 429, 5xx except 504/524, timeouts, connection errors, and
    /// failures that disable the channel (bad key, exhausted upstream quota).
    pub retryable: bool,
    /// The channel's credentials or account are unusable (domain `should_auto_disable`).
    pub auto_disable: bool,
    /// No upstream was called: the gateway refused the request because this channel's protocol
    /// cannot express it ([`UpstreamFailure::refused_here`]). Not the channel's failure.
    pub gateway: bool,
}

impl UpstreamFailure {
    /// The gateway's own 400 `invalid_request` for a request the channel's protocol cannot
    /// express (a translation refusal), given before any upstream call: not retried on another
    /// channel, not counted against this one.
    pub fn refused_here(message: String) -> Self {
        UpstreamFailure {
            status: 400,
            message,
            code: Some("invalid_request".into()),
            kind: Some("invalid_request_error".into()),
            gateway: true,
            ..UpstreamFailure::default()
        }
    }

    /// The OpenAI-shaped body for the client when no retry is left (see
    /// [`crate::refusal::Refusal::upstream`]).
    pub fn to_body(&self) -> OpenAiErrorBody {
        crate::refusal::Refusal::upstream(self.clone()).openai_body()
    }

    /// Notes the upstream's wait hint from its response headers (`Retry-After`,
    /// `retry-after-ms`) when the body gave none.
    pub fn with_retry_headers(mut self, headers: &reqwest::header::HeaderMap) -> Self {
        if self.retry_after.is_none() {
            let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            self.retry_after =
                crate::refusal::parse_retry_after(get("retry-after"), get("retry-after-ms"), now);
        }
        self
    }
}

/// The upstream family of a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provider {
    OpenAiCompatible(OpenAiCompatible),
    Azure(Azure),
    Anthropic(Anthropic),
    Gemini(Gemini),
    /// Cohere (rerank, and chat and embeddings through its Compatibility API) and Jina
    /// (rerank).
    Rerank(RerankVendor),
    /// AWS Bedrock, Anthropic models.
    Bedrock(Bedrock),
    /// Google Vertex AI, Gemini and Anthropic models.
    Vertex(Vertex),
}

/// A non-streamed answer ready for the client, and the usage to bill.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// OpenAI-shaped JSON (or the upstream's bytes unchanged for pass-through families).
    pub body: Vec<u8>,
    /// The usage the upstream reported, `None` when it reported none.
    pub usage: Option<Usage>,
}

impl Provider {
    /// The adapter for a channel type, `None` for types whose family is not implemented yet.
    /// Unknown type ids are treated as OpenAI-compatible (like the "Custom" type).
    pub fn for_channel_type(channel_type: i32) -> Option<Provider> {
        use switchboard_domain::channel::{
            TYPE_ANTHROPIC, TYPE_AWS_BEDROCK, TYPE_AZURE, TYPE_COHERE, TYPE_GEMINI, TYPE_JINA,
            TYPE_VERTEX_AI,
        };
        match channel_type {
            TYPE_AZURE => return Some(Provider::Azure(Azure)),
            TYPE_ANTHROPIC => return Some(Provider::Anthropic(Anthropic)),
            TYPE_GEMINI => return Some(Provider::Gemini(Gemini)),
            TYPE_COHERE => return Some(Provider::Rerank(RerankVendor::Cohere)),
            TYPE_AWS_BEDROCK => return Some(Provider::Bedrock(Bedrock)),
            TYPE_VERTEX_AI => return Some(Provider::Vertex(Vertex)),
            TYPE_JINA => return Some(Provider::Rerank(RerankVendor::Jina)),
            _ => {}
        }
        match switchboard_domain::channel::channel_type(channel_type) {
            Some(t) if !t.openai_compatible => None,
            _ => Some(Provider::OpenAiCompatible(OpenAiCompatible {
                responses: !crate::responses::bridged(channel_type, &serde_json::Map::new()),
            })),
        }
    }

    /// [`Provider::for_channel_type`] with the channel's `config` settings that decide what the
    /// upstream speaks (`config.responses`: whether `/v1/responses` goes to the upstream's own
    /// Responses API or through the chat bridge).
    pub fn for_channel(
        channel_type: i32,
        config: &serde_json::Map<String, Value>,
    ) -> Option<Provider> {
        match Provider::for_channel_type(channel_type)? {
            Provider::OpenAiCompatible(_) => Some(Provider::OpenAiCompatible(OpenAiCompatible {
                responses: !crate::responses::bridged(channel_type, config),
            })),
            other => Some(other),
        }
    }

    /// Whether this family serves `endpoint`: in its own protocol, or through the chat bridge
    /// ([`Provider::bridge`]) when it serves chat completions.
    pub fn supports(&self, endpoint: Endpoint) -> bool {
        self.speaks(endpoint)
            || (crate::bridge::Bridge::of(endpoint).is_some()
                && self.speaks(Endpoint::ChatCompletions))
    }

    /// The bridge that carries `endpoint`'s client protocol to this family over chat
    /// completions; `None` when the family speaks it (Messages to Anthropic, Gemini's own to
    /// Gemini, Responses to OpenAI-compatible upstreams) or the endpoint is OpenAI's.
    pub fn bridge(&self, endpoint: Endpoint) -> Option<crate::bridge::Bridge> {
        crate::bridge::Bridge::of(endpoint).filter(|_| !self.speaks(endpoint))
    }

    /// Whether this family's upstream speaks `endpoint`'s protocol itself.
    fn speaks(&self, endpoint: Endpoint) -> bool {
        match self {
            Provider::OpenAiCompatible(p) => p.supports(endpoint),
            Provider::Azure(p) => p.supports(endpoint),
            Provider::Anthropic(p) => p.supports(endpoint),
            Provider::Gemini(p) => p.supports(endpoint),
            Provider::Rerank(p) => p.supports(endpoint),
            Provider::Bedrock(p) => p.supports(endpoint),
            Provider::Vertex(p) => p.supports(endpoint),
        }
    }

    /// Whether answers are translated into OpenAI's shape (rather than passed through).
    pub fn translates(&self) -> bool {
        matches!(
            self,
            Provider::Anthropic(_)
                | Provider::Gemini(_)
                | Provider::Bedrock(_)
                | Provider::Vertex(_)
        )
    }

    /// The upstream request for `req` on `target`, ready to `send()`.
    ///
    /// OpenAI-compatible and Azure: JSON endpoints send `req.body` with the model mapped through
    /// the channel's model mapping and, for streamed chat/completions,
    /// `stream_options.include_usage` forced (when nothing needs changing and `raw_body` is
    /// given, the client's bytes are sent as they are). Multipart endpoints need `raw_body` and
    /// `content_type` and forward both unchanged: model mapping is not applied to multipart
    /// bodies. Anthropic and Gemini: the OpenAI request is translated into their protocol.
    pub fn build(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
        raw_body: Option<&[u8]>,
        content_type: Option<&str>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        if let Some(bridge) = self.bridge(req.endpoint) {
            return self.build(client, target, bridge.chat_for(req)?, None, None);
        }
        match self {
            Provider::OpenAiCompatible(p) => p.build(client, target, req, raw_body, content_type),
            Provider::Azure(p) => p.build(client, target, req, raw_body, content_type),
            Provider::Anthropic(p) => p.build(client, target, req, raw_body),
            Provider::Gemini(p) => p.build(client, target, req),
            Provider::Rerank(p) => p.build(client, target, req, raw_body),
            Provider::Bedrock(p) => p.build(client, target, req),
            Provider::Vertex(p) => {
                let token = crate::providers::vertex::cached_token(target).ok_or_else(|| {
                    RelayError::Channel(format!(
                        "channel {} has no Vertex AI access token yet (Provider::authorize)",
                        target.id
                    ))
                })?;
                p.build(client, target, req, &token)
            }
        }
    }

    /// Gets what a request needs before [`Provider::build`]: Vertex AI's OAuth access token
    /// (cached until it expires). Nothing for the other families.
    pub async fn authorize(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
    ) -> Result<(), UpstreamFailure> {
        match self {
            Provider::Vertex(_) => crate::providers::vertex::access_token(client, target)
                .await
                .map(|_| ()),
            _ => Ok(()),
        }
    }

    /// The usage in a non-streamed response body, in the upstream's own format.
    pub fn response_usage(&self, body: &[u8]) -> Option<Usage> {
        match self {
            Provider::OpenAiCompatible(_) | Provider::Azure(_) => {
                crate::usage::from_openai_bytes(body)
            }
            Provider::Anthropic(_) => crate::providers::anthropic::response_usage(body),
            Provider::Gemini(_) => crate::providers::gemini::response_usage(body),
            Provider::Rerank(_) => crate::providers::rerank::usage_of(body),
            Provider::Bedrock(_) => crate::providers::anthropic::response_usage(body),
            Provider::Vertex(_) => crate::providers::vertex::response_usage(body),
        }
    }

    /// A successful non-streamed answer made ready for the client: passed through unchanged
    /// (OpenAI-compatible, Azure) or translated into OpenAI's shape for `req`'s endpoint
    /// (Anthropic, Gemini), with the usage to bill. An answer that cannot be translated is an
    /// upstream failure (502, not retried: the upstream did the work).
    pub fn answer(&self, req: &RelayRequest, body: Vec<u8>) -> Result<Answer, UpstreamFailure> {
        if let Some(bridge) = self.bridge(req.endpoint) {
            let chat = bridge
                .chat_for(req)
                .map_err(|e| crate::providers::openai::invalid_answer(&e.to_string()))?;
            return bridge.answer(req, self.answer(chat, body)?);
        }
        match self {
            // Rerank tokens are input (see `providers::rerank`).
            Provider::OpenAiCompatible(_) if req.endpoint == Endpoint::Rerank => Ok(Answer {
                usage: crate::providers::rerank::usage_of(&body),
                body,
            }),
            Provider::OpenAiCompatible(_) | Provider::Azure(_)
                if req.endpoint == Endpoint::ImagesGenerations =>
            {
                Ok(Answer {
                    usage: crate::usage::from_openai_bytes(&body)
                        .map(crate::usage::of_image_answer),
                    body,
                })
            }
            Provider::OpenAiCompatible(_) | Provider::Azure(_) => Ok(Answer {
                usage: crate::usage::from_openai_bytes(&body),
                body,
            }),
            Provider::Rerank(v) => crate::providers::rerank::answer(*v, req, body),
            Provider::Bedrock(_) => crate::providers::anthropic::answer(req, body),
            Provider::Vertex(_) => crate::providers::vertex::answer(req, body),
            Provider::Anthropic(_) => crate::providers::anthropic::answer(req, body),
            Provider::Gemini(_) if req.endpoint == Endpoint::GenerateContent => Ok(Answer {
                usage: crate::providers::gemini::response_usage(&body),
                body,
            }),
            Provider::Gemini(_) => crate::providers::gemini::answer(req, &body),
        }
    }

    /// A tap for the OpenAI-shaped stream the client receives.
    pub fn stream_tap(&self) -> SseTap {
        SseTap::new()
    }

    /// For families whose streams are not OpenAI's, the translator of the upstream's SSE into
    /// OpenAI chunks (fed every upstream chunk; its output goes to the client and the tap, or
    /// to the tap only when [`StreamTranslator::passes_through`]: Anthropic streams to
    /// Messages clients). `None`: pass the stream through to client and tap.
    pub fn stream_translator(&self, req: &RelayRequest) -> Option<StreamTranslator> {
        if let Some(bridge) = self.bridge(req.endpoint) {
            let upstream = bridge
                .chat_for(req)
                .ok()
                .and_then(|chat| self.stream_translator(chat));
            return Some(StreamTranslator::bridged(upstream, bridge.stream(req)));
        }
        match self {
            Provider::OpenAiCompatible(_) | Provider::Azure(_) | Provider::Rerank(_) => None,
            Provider::Anthropic(_) if req.endpoint == Endpoint::Messages => {
                Some(StreamTranslator::anthropic_observer(&req.model))
            }
            Provider::Anthropic(_) => Some(
                StreamTranslator::anthropic(&req.model)
                    .with_response_tool(ResponseTool::name_for(req)),
            ),
            Provider::Gemini(_) if req.endpoint == Endpoint::GenerateContent => {
                Some(StreamTranslator::gemini_observer(&req.model))
            }
            Provider::Gemini(_) => Some(StreamTranslator::gemini(&req.model)),
            Provider::Bedrock(_) => Some(
                StreamTranslator::bedrock(&req.model)
                    .with_response_tool(ResponseTool::name_for(req)),
            ),
            Provider::Vertex(_) => Some(
                StreamTranslator::vertex(&req.model)
                    .with_response_tool(ResponseTool::name_for(req)),
            ),
        }
    }

    /// Classifies a non-success upstream response. `disable_keywords` are the operator's
    /// extra auto-disable keywords.
    pub fn classify(&self, status: u16, body: &[u8], disable_keywords: &[&str]) -> UpstreamFailure {
        match self {
            Provider::OpenAiCompatible(_) | Provider::Azure(_) | Provider::Rerank(_) => {
                classify_openai(status, body, disable_keywords)
            }
            Provider::Anthropic(_) => {
                crate::providers::anthropic::classify(status, body, disable_keywords)
            }
            Provider::Gemini(_) => {
                crate::providers::gemini::classify(status, body, disable_keywords)
            }
            Provider::Bedrock(_) => {
                crate::providers::bedrock::classify(status, body, disable_keywords)
            }
            Provider::Vertex(_) => {
                crate::providers::vertex::classify(status, body, disable_keywords)
            }
        }
    }

    /// Whether this family's upstream counts the input tokens of `endpoint`'s requests itself
    /// (Anthropic's `count_tokens` for Messages, Gemini's `countTokens`); the others' counts
    /// are the tokenizer's.
    pub fn counts_tokens(&self, endpoint: Endpoint) -> bool {
        matches!(
            (self, endpoint),
            (Provider::Anthropic(_), Endpoint::Messages)
                | (Provider::Gemini(_), Endpoint::GenerateContent)
        )
    }

    /// The upstream request that counts `req`'s input tokens, where
    /// [`Provider::counts_tokens`]; `None` elsewhere.
    pub fn count_tokens(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
        raw_body: Option<&[u8]>,
    ) -> Option<Result<reqwest::RequestBuilder, RelayError>> {
        match self {
            Provider::Anthropic(p) if req.endpoint == Endpoint::Messages => {
                Some(p.count_tokens(client, target, req, raw_body))
            }
            Provider::Gemini(p) if req.endpoint == Endpoint::GenerateContent => {
                Some(p.count_tokens(client, target, &req.model, &req.body))
            }
            _ => None,
        }
    }

    /// The upstream's model ids ("fetch the provider's model list").
    pub async fn list_models(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
    ) -> Result<Vec<String>, UpstreamFailure> {
        match self {
            Provider::OpenAiCompatible(p) => p.list_models(client, target).await,
            Provider::Azure(p) => p.list_models(client, target).await,
            Provider::Anthropic(p) => p.list_models(client, target).await,
            Provider::Gemini(p) => p.list_models(client, target).await,
            Provider::Rerank(p) => p.list_models(client, target).await,
            // ListFoundationModels lives on another host (`bedrock.{region}`); Vertex's
            // publisher model lists are per publisher.
            Provider::Bedrock(_) | Provider::Vertex(_) => Err(UpstreamFailure {
                status: 501,
                message: "this channel type's model list is not fetched; enter the models by hand"
                    .into(),
                code: Some("model_list_unsupported".into()),
                retryable: false,
                auto_disable: false,
                kind: None,
                retry_after: None,
                gateway: false,
            }),
        }
    }

    /// The remaining balance of the upstream account in USD, `Ok(None)` when the family has no
    /// balance API.
    pub async fn balance(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
    ) -> Result<Option<f64>, UpstreamFailure> {
        match self {
            Provider::OpenAiCompatible(p) => p.balance(client, target).await.map(Some),
            Provider::Azure(_)
            | Provider::Anthropic(_)
            | Provider::Gemini(_)
            | Provider::Rerank(_)
            | Provider::Bedrock(_)
            | Provider::Vertex(_) => Ok(None),
        }
    }
}

/// Longest upstream message kept (error pages can be large HTML documents).
const MAX_MESSAGE: usize = 1000;

/// Classifies an OpenAI-shaped error response. The message is read from
/// `{"error": {"message"}}`, `{"error": "..."}`, `{"message": ...}`, `{"detail": ...}` or the
/// text; the auto-disable check also looks at the error's code and type (so
/// `account_deactivated` matches "account deactivated").
pub(crate) fn classify_openai(
    status: u16,
    body: &[u8],
    disable_keywords: &[&str],
) -> UpstreamFailure {
    let (message, code, kind) = error_parts(body);
    let message = if message.is_empty() {
        format!("upstream returned HTTP {status}")
    } else {
        message
    };
    let mut haystack = message.clone();
    for extra in [&code, &kind].into_iter().flatten() {
        haystack.push(' ');
        haystack.push_str(extra);
        haystack.push(' ');
        haystack.push_str(&extra.replace('_', " "));
    }
    let auto_disable = should_auto_disable(status, &haystack, disable_keywords);
    UpstreamFailure {
        status,
        message,
        code: code.or_else(|| kind.clone()),
        kind,
        retry_after: None,
        retryable: is_retryable_status(status) || auto_disable,
        auto_disable,
        gateway: false,
    }
}

/// (message, code, type) of an error body.
pub(crate) fn error_parts(body: &[u8]) -> (String, Option<String>, Option<String>) {
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        // Some gateways wrap the error in a one-element array.
        let v = match &v {
            Value::Array(a) if a.len() == 1 => &a[0],
            _ => &v,
        };
        let found = match v.get("error") {
            Some(Value::String(s)) => Some((s.clone(), None, None)),
            Some(e @ Value::Object(_)) => Some((
                text(e.get("message")).unwrap_or_default(),
                text(e.get("code")),
                text(e.get("type")),
            )),
            _ => None,
        };
        let found = found.or_else(|| {
            text(v.get("message"))
                .or_else(|| text(v.get("detail")))
                .map(|m| (m, text(v.get("code")), text(v.get("type"))))
        });
        if let Some((m, c, k)) = found {
            return (truncate(m.trim()), c, k);
        }
    }
    (truncate(String::from_utf8_lossy(body).trim()), None, None)
}

pub(crate) fn truncate(s: &str) -> String {
    if s.len() <= MAX_MESSAGE {
        return s.to_owned();
    }
    let mut end = MAX_MESSAGE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Classifies a failure to get a response at all (connection refused, DNS, TLS, timeout, a
/// body cut off): always retryable, never a reason to disable the channel. The message names
/// the cause but not the URL.
pub fn classify_transport(err: &reqwest::Error) -> UpstreamFailure {
    transport_failure(err.is_timeout(), err.is_connect(), err)
}

/// The failure of a call that got no answer: a timeout (504 `upstream_timeout`), a connection
/// that could not be made (502 `upstream_connect_error`) or another transport error (502
/// `upstream_transport_error`), with `err` and its sources as the message. Retryable.
pub fn transport_failure(
    timeout: bool,
    connect: bool,
    err: &(dyn std::error::Error + 'static),
) -> UpstreamFailure {
    let (status, what, code) = if timeout {
        (
            504,
            "the upstream did not answer in time",
            "upstream_timeout",
        )
    } else if connect {
        (
            502,
            "could not connect to the upstream",
            "upstream_connect_error",
        )
    } else {
        (
            502,
            "the upstream request failed",
            "upstream_transport_error",
        )
    };
    let mut message = what.to_owned();
    let mut source = err.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    UpstreamFailure {
        status,
        message: truncate(&message),
        code: Some(code.to_owned()),
        retryable: true,
        auto_disable: false,
        kind: None,
        retry_after: None,
        gateway: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_by_channel_type() {
        use switchboard_domain::channel::{TYPE_ANTHROPIC, TYPE_DEEPSEEK, TYPE_OPENAI};
        assert!(Provider::for_channel_type(TYPE_OPENAI).is_some());
        assert!(Provider::for_channel_type(TYPE_DEEPSEEK).is_some());
        assert!(matches!(
            Provider::for_channel_type(TYPE_ANTHROPIC),
            Some(Provider::Anthropic(_))
        ));
        assert!(matches!(
            Provider::for_channel_type(3),
            Some(Provider::Azure(_))
        ));
        assert!(matches!(
            Provider::for_channel_type(25),
            Some(Provider::Gemini(_))
        ));
        assert!(matches!(
            Provider::for_channel_type(32),
            Some(Provider::Bedrock(_))
        ));
        assert!(matches!(
            Provider::for_channel_type(42),
            Some(Provider::Vertex(_))
        ));
        assert!(
            matches!(
                Provider::for_channel_type(16),
                Some(Provider::OpenAiCompatible(_))
            ),
            "Zhipu speaks OpenAI's protocol under its own version path"
        );
        assert!(Provider::for_channel_type(9999).is_some());
    }

    #[test]
    fn base_url_defaults_and_normalisation() {
        let mut t = ChannelTarget {
            channel_type: 1,
            ..ChannelTarget::default()
        };
        assert_eq!(t.effective_base_url().unwrap(), "https://api.openai.com");
        t.base_url = "https://proxy.example/v1/".into();
        assert_eq!(t.effective_base_url().unwrap(), "https://proxy.example");
        t.base_url = String::new();
        t.channel_type = 8; // custom: no default
        assert!(matches!(
            t.effective_base_url(),
            Err(RelayError::Channel(_))
        ));
    }

    #[test]
    fn which_requests_a_channel_serves() {
        let mut t = ChannelTarget {
            channel_type: 1,
            disabled_stream: vec!["o1".into(), "gpt-4*".into()],
            ..ChannelTarget::default()
        };
        let chat = Endpoint::ChatCompletions;
        assert!(
            t.serves(chat, "o1", false),
            "non-stream requests still use it"
        );
        assert!(!t.serves(chat, "o1", true));
        assert!(!t.serves(chat, "gpt-4o", true), "prefix entries match");
        assert!(t.serves(chat, "o1-mini", true), "other names are exact");
        assert!(t.serves(Endpoint::Embeddings, "text-embedding-3-small", false));

        t.config.insert("only_chat".into(), Value::Bool(true));
        assert!(t.only_chat());
        for e in [
            Endpoint::ChatCompletions,
            Endpoint::Messages,
            Endpoint::GenerateContent,
        ] {
            assert!(t.serves(e, "m", false), "{e:?}");
        }
        for e in [
            Endpoint::Completions,
            Endpoint::Embeddings,
            Endpoint::ImagesGenerations,
            Endpoint::AudioSpeech,
            Endpoint::AudioTranscriptions,
            Endpoint::Moderations,
            Endpoint::Rerank,
            Endpoint::Responses,
        ] {
            assert!(!t.serves(e, "m", false), "{e:?}");
        }
        assert!(
            !t.serves(Endpoint::ChatCompletions, "o1", true),
            "both rules apply"
        );
        t.config.insert("only_chat".into(), Value::Bool(false));
        assert!(t.serves(Endpoint::Embeddings, "m", false));
    }

    #[test]
    fn voice_and_parameter_settings() {
        let mut t = ChannelTarget::default();
        assert_eq!(t.mapped_voice("alloy"), None);
        assert!(t.custom_parameters().is_none());
        t.config.insert(
            "voice_mapping".into(),
            serde_json::json!({"alloy": "zh-CN-XiaoxiaoNeural", "echo": ""}),
        );
        t.config
            .insert("custom_parameter".into(), serde_json::json!({}));
        assert_eq!(t.mapped_voice("alloy"), Some("zh-CN-XiaoxiaoNeural"));
        assert_eq!(t.mapped_voice("echo"), None);
        assert_eq!(t.mapped_voice("nova"), None);
        assert!(t.custom_parameters().is_none(), "an empty object is none");
        t.config
            .insert("custom_parameter".into(), serde_json::json!({"top_p": 0.5}));
        assert_eq!(t.custom_parameters().map(|m| m.len()), Some(1));
    }

    #[test]
    fn message_shapes() {
        let f = classify_openai(500, br#"{"error":"boom"}"#, &[]);
        assert_eq!((f.message.as_str(), f.retryable), ("boom", true));
        let f = classify_openai(400, br#"{"message":"bad","code":42}"#, &[]);
        assert_eq!((f.message.as_str(), f.code.as_deref()), ("bad", Some("42")));
        let f = classify_openai(422, br#"{"detail":"field required"}"#, &[]);
        assert_eq!(f.message, "field required");
        let f = classify_openai(502, b"<html>Bad Gateway</html>", &[]);
        assert_eq!(f.message, "<html>Bad Gateway</html>");
        let f = classify_openai(503, b"", &[]);
        assert_eq!(f.message, "upstream returned HTTP 503");
        let long = "é".repeat(2000);
        assert!(classify_openai(500, long.as_bytes(), &[]).message.len() <= MAX_MESSAGE + 3);
    }

    #[test]
    fn keywords_and_codes_disable() {
        let body = br#"{"error":{"message":"This key is associated with a deactivated account.","type":"invalid_request_error","code":"account_deactivated"}}"#;
        let f = classify_openai(403, body, &[]);
        assert!(f.auto_disable && f.retryable);
        let f = classify_openai(
            400,
            br#"{"error":{"message":"Organization suspended"}}"#,
            &[],
        );
        assert!(!f.auto_disable && !f.retryable);
        let f = classify_openai(
            400,
            br#"{"error":{"message":"Organization suspended"}}"#,
            &["organization SUSPENDED"],
        );
        assert!(f.auto_disable && f.retryable);
    }

    #[test]
    fn failure_body() {
        let f = classify_openai(
            400,
            br#"{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
            &[],
        );
        let b = f.to_body();
        assert_eq!(b.error.message, "too long");
        assert_eq!(b.error.code.as_deref(), Some("context_length_exceeded"));
    }
}
