//! Anthropic Messages (`POST {base}/v1/messages`, `x-api-key`, `anthropic-version`), reached
//! from OpenAI chat completions: the request is translated into a Messages request, the answer
//! and the SSE stream back into OpenAI's `chat.completion` / `chat.completion.chunk`. See
//! `docs/providers.md` for the field-by-field mapping. Clients speaking the Messages API
//! themselves (`/v1/messages`) are passed through, their usage read on the side.

use std::borrow::Cow;
use std::collections::HashMap;

use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use serde_json::{json, Map, Value};

use crate::conversation::{Conversation, Image, ToolChoice, Turn, UserContent, UserPart};
use crate::endpoint::Endpoint;
use crate::error::RelayError;
use crate::provider::{classify_openai, Answer, ChannelTarget, UpstreamFailure};
use crate::providers::openai::{
    apply_custom_headers, config_failure, data_ids, get_json_at, invalid_answer, json_body,
    json_bytes, key_header,
};
use crate::request::RelayRequest;
use crate::sse::{write_done, SseEvent, SseReader};
use crate::translate::{chat_completion, ChunkWriter};
use crate::usage::Usage;
use crate::wire::anthropic as wire;
use crate::wire::openai::{self, Delta, ToolCallDelta};

/// The `anthropic-version` header sent (a channel custom header of that name replaces it).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Anthropic;

impl Anthropic {
    /// Chat completions (translated) and Messages (passed through).
    pub fn supports(&self, endpoint: Endpoint) -> bool {
        matches!(endpoint, Endpoint::ChatCompletions | Endpoint::Messages)
    }

    /// `POST {base}/v1/messages` with the translated body, or for Messages clients their own
    /// body (as [`crate::provider::Provider::build`] does for OpenAI-compatible channels: the
    /// client's bytes when given and nothing changes, else re-serialised with the mapped model).
    pub fn build(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
        raw_body: Option<&[u8]>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        if !self.supports(req.endpoint) {
            return Err(RelayError::UnsupportedEndpoint(req.endpoint.path().into()));
        }
        let (body, beta) = if req.endpoint == Endpoint::Messages {
            (json_body(target, req, raw_body)?, None)
        } else {
            let mut body = request(target, req)?;
            // The channel's provider switches: server tools (chat requests only).
            let beta = crate::switches::apply_anthropic(target, &mut body);
            (json_bytes(&body)?, beta)
        };
        post(client, target, "/v1/messages", body, !req.stream, req, beta)
    }

    /// `POST {base}/v1/messages/count_tokens` with the client's Messages body (model mapped).
    pub fn count_tokens(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
        raw_body: Option<&[u8]>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        let body = json_body(target, req, raw_body)?;
        post(
            client,
            target,
            "/v1/messages/count_tokens",
            body,
            true,
            req,
            None,
        )
    }

    /// GET `{base}/v1/models`: the ids in `data[].id`.
    pub async fn list_models(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
    ) -> Result<Vec<String>, UpstreamFailure> {
        let base = target.effective_base_url().map_err(config_failure)?;
        let headers = auth_headers(target).map_err(config_failure)?;
        let v = get_json_at(
            client,
            target,
            &format!("{base}/v1/models?limit=1000"),
            headers,
            classify,
        )
        .await?;
        data_ids(&v)
    }
}

/// Extended thinking's `budget_tokens` for OpenAI's `reasoning_effort` (`low` 1024, `medium`
/// 4096, `high` 16384), kept below the answer's `max_tokens` as Anthropic requires; `None`
/// without an effort, for `none`, or when the limit leaves no room for the 1024 minimum.
fn thinking_budget(effort: Option<&Value>, max_tokens: i64) -> Option<i64> {
    let budget = match effort?.as_str()? {
        "minimal" | "low" => 1024,
        "medium" => 4096,
        "high" => 16384,
        _ => return None,
    };
    let budget = budget.min(max_tokens - 1);
    (budget >= 1024).then_some(budget)
}

/// The `anthropic-beta` flags of `req` on `target`: the client's (its `anthropic-beta` header)
/// less those the channel's `config.anthropic_beta` removes, plus those it adds. Bedrock and
/// Vertex AI send the same list as the body's `anthropic_beta`.
pub(crate) fn beta_flags(target: &ChannelTarget, req: &RelayRequest) -> Vec<String> {
    switchboard_domain::channel_settings::anthropic_beta_flags(
        target
            .config
            .get(switchboard_domain::channel_settings::ANTHROPIC_BETA_KEY),
        req.anthropic_beta.as_deref(),
    )
}

/// `POST {base}{path}` with a JSON body, the key and the channel's headers; `timed`: bounded by
/// the channel's timeout (not streams). `anthropic-beta` carries, after the flags of a channel's
/// custom `anthropic-beta` header, the client's flags that the channel keeps and the ones it adds
/// ([`beta_flags`]), then `beta`, a flag a provider switch needs.
fn post(
    client: &reqwest::Client,
    target: &ChannelTarget,
    path: &'static str,
    body: Vec<u8>,
    timed: bool,
    req: &RelayRequest,
    beta: Option<&str>,
) -> Result<reqwest::RequestBuilder, RelayError> {
    let url = target.url(path, || path.to_owned())?;
    let mut headers = auth_headers(target)?;
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    apply_custom_headers(&mut headers, target)?;
    for flag in beta_flags(target, req) {
        crate::switches::add_anthropic_beta(&mut headers, &flag);
    }
    if let Some(flag) = beta {
        crate::switches::add_anthropic_beta(&mut headers, flag);
    }
    let builder = client.post(url).headers(headers).body(body);
    Ok(if timed && !target.timeout.is_zero() {
        builder.timeout(target.timeout)
    } else {
        builder
    })
}

/// `x-api-key` and `anthropic-version`.
fn auth_headers(target: &ChannelTarget) -> Result<HeaderMap, RelayError> {
    let mut headers = HeaderMap::new();
    headers.insert(
        "anthropic-version",
        HeaderValue::from_static(ANTHROPIC_VERSION),
    );
    let key = target.key.trim();
    if !key.is_empty() {
        headers.insert("x-api-key", key_header(target, key)?);
    }
    Ok(headers)
}

/// `max_tokens` when the client sets none (Anthropic requires it): 8192 for the Claude 3.5
/// generation and later, 4096 for older models.
pub fn default_max_tokens(model: &str) -> i64 {
    let m = model.to_ascii_lowercase();
    let old = [
        "claude-2",
        "claude-instant",
        "claude-3-opus",
        "claude-3-sonnet",
        "claude-3-haiku",
    ];
    if old.iter().any(|p| m.starts_with(p)) {
        4096
    } else {
        8192
    }
}

fn invalid(msg: impl Into<String>) -> RelayError {
    RelayError::InvalidRequest(msg.into())
}

/// The Messages request for an OpenAI chat request, as JSON (what [`request`] writes).
pub fn request_body(target: &ChannelTarget, req: &RelayRequest) -> Result<Value, RelayError> {
    serde_json::to_value(request(target, req)?)
        .map_err(|e| invalid(format!("cannot serialise the request: {e}")))
}

/// The Messages request for an OpenAI chat request (without the channel's switches, which
/// [`Anthropic::build`] adds): the conversation rendered from its one read
/// ([`Conversation`]), then the request's settings.
pub fn request<'a>(
    target: &'a ChannelTarget,
    req: &'a RelayRequest,
) -> Result<wire::RequestBody<'a>, RelayError> {
    let mut chat = Conversation::of(req)?;
    let mut messages = Vec::new();
    for turn in &mut chat {
        messages.push(message(turn?)?);
    }
    let model = target.upstream_model(&req.model);
    let max_tokens = req.max_tokens.unwrap_or_else(|| default_max_tokens(model));
    let mut body = wire::RequestBody {
        anthropic_beta: None,
        anthropic_version: None,
        max_tokens,
        messages,
        metadata: chat
            .str("user")
            .map(|user_id| wire::RequestMetadata { user_id }),
        model: Some(model),
        stop_sequences: chat.stop(),
        stream: req.stream.then_some(true),
        system: joined(std::mem::take(&mut chat.system), "\n\n"),
        // OpenAI allows 0..2, Anthropic 0..1.
        temperature: chat
            .get("temperature")
            .and_then(Value::as_f64)
            .map(|t| t.clamp(0.0, 1.0)),
        thinking: chat
            .get("thinking")
            .filter(|v| !v.is_null())
            .map(wire::RequestThinking::Client),
        tool_choice: None,
        tools: Vec::new(),
        top_k: chat.get("top_k").filter(|v| !v.is_null()),
        top_p: chat.number("top_p"),
    };
    if body.thinking.is_none() {
        if let Some(budget) = thinking_budget(chat.get("reasoning_effort"), max_tokens) {
            body.thinking = Some(wire::RequestThinking::enabled(budget));
            // Anthropic takes no temperature but 1 with extended thinking.
            body.temperature = None;
        }
    }
    tools(&chat, &mut body)?;
    Ok(body)
}

/// The Messages request as Bedrock and Vertex AI take it ([`request`]): without `model` (it
/// is in their URL), with their `anthropic_version` and the `anthropic-beta` flags
/// ([`beta_flags`]) in the body.
pub(crate) fn platform_request<'a>(
    target: &'a ChannelTarget,
    req: &'a RelayRequest,
    version: &'static str,
) -> Result<wire::RequestBody<'a>, RelayError> {
    let mut body = request(target, req)?;
    body.model = None;
    body.anthropic_version = Some(version);
    let flags = beta_flags(target, req);
    body.anthropic_beta = (!flags.is_empty()).then_some(flags);
    Ok(body)
}

/// `parts` joined by `sep`; `None` for none.
fn joined<'a>(mut parts: Vec<Cow<'a, str>>, sep: &str) -> Option<Cow<'a, str>> {
    match parts.len() {
        0 | 1 => parts.pop(),
        _ => Some(parts.join(sep).into()),
    }
}

/// The client's functions as `tools` and its `tool_choice` (sent only beside tools), or the
/// forced tool of its `response_format` ([`ResponseTool`]).
fn tools<'a>(chat: &Conversation<'a>, body: &mut wire::RequestBody<'a>) -> Result<(), RelayError> {
    body.tools = chat
        .functions()
        .map(|f| wire::RequestTool::Function {
            description: f.description,
            input_schema: f.parameters,
            name: f.name,
        })
        .collect();
    if !body.tools.is_empty() {
        let mut choice = chat.tool_choice().map(|c| match c {
            ToolChoice::Auto => wire::RequestToolChoice::of("auto"),
            ToolChoice::Required => wire::RequestToolChoice::of("any"),
            ToolChoice::None => wire::RequestToolChoice::of("none"),
            ToolChoice::Function(name) => wire::RequestToolChoice::tool(name),
        });
        if chat.get("parallel_tool_calls") == Some(&Value::Bool(false)) {
            let c = choice.get_or_insert_with(|| wire::RequestToolChoice::of("auto"));
            if c.kind != "none" {
                c.disable_parallel_tool_use = Some(true);
            }
        }
        body.tool_choice = choice;
    }
    if let Some(tool) = ResponseTool::of(chat.body())? {
        body.tool_choice = Some(wire::RequestToolChoice::tool(tool.name));
        body.tools = vec![tool.definition()];
    }
    Ok(())
}

/// A turn as a Messages message: user content as a string or blocks, an assistant's text and
/// `tool_use` blocks, tool results as the `tool_result` blocks of one user message (as
/// Anthropic requires for parallel tool use).
fn message(turn: Turn<'_>) -> Result<wire::RequestMessage<'_>, RelayError> {
    let (role, blocks) = match turn {
        Turn::User(UserContent::Text(text)) => {
            return Ok(wire::RequestMessage {
                content: wire::RequestContent::Text(text),
                role: "user",
            })
        }
        Turn::User(UserContent::Parts(parts)) => (
            "user",
            parts
                .into_iter()
                .map(|p| match p {
                    UserPart::Text(text) => wire::RequestBlock::text(text.into()),
                    UserPart::Image(image) => wire::RequestBlock::image(image_source(image)),
                })
                .collect(),
        ),
        Turn::Assistant { text, calls } => {
            let mut blocks = Vec::with_capacity(calls.len() + 1);
            if !text.is_empty() {
                blocks.push(wire::RequestBlock::text(text));
            }
            blocks.extend(
                calls
                    .into_iter()
                    .map(|c| wire::RequestBlock::tool_use(c.id, c.name, c.arguments)),
            );
            ("assistant", blocks)
        }
        Turn::ToolResults(results) => (
            "user",
            results
                .into_iter()
                .map(|r| {
                    let id = r
                        .call_id
                        .ok_or_else(|| invalid("a tool message needs tool_call_id"))?;
                    Ok(wire::RequestBlock::tool_result(id, r.content))
                })
                .collect::<Result<_, RelayError>>()?,
        ),
    };
    Ok(wire::RequestMessage {
        content: wire::RequestContent::Blocks(blocks),
        role,
    })
}

/// An image's source: `data:` URLs as base64 data, http(s) URLs as URLs.
fn image_source(image: Image<'_>) -> wire::ImageSource<'_> {
    match image {
        Image::Inline { media_type, data } => wire::ImageSource::base64(media_type, data),
        Image::Url(url) => wire::ImageSource::url(url),
    }
}

/// The name of the forced tool that carries a JSON answer when the request sets no schema
/// name (`json_object`, or a `json_schema` without `name`).
pub const JSON_RESPONSE_TOOL: &str = "json_response";

/// OpenAI's `response_format` as Anthropic models answer it: Anthropic has no JSON mode, so
/// the answer is asked for as the input of one forced tool (`tools: [this]`,
/// `tool_choice: {type: "tool", name}`), whose `input` the answer translation returns as the
/// message's `content` (see [`answer`] and [`AnthropicStream::with_response_tool`]).
///
/// - `json_schema`: the tool is named after `json_schema.name` (else [`JSON_RESPONSE_TOOL`]),
///   described by `json_schema.description`, its `input_schema` is `json_schema.schema` (an
///   object schema, as a tool's input must be; `strict` is not sent, Anthropic's tool inputs
///   follow the schema without it).
/// - `json_object`: the tool [`JSON_RESPONSE_TOOL`] with the schema `{"type":"object"}`. A
///   forced tool (rather than an instruction and a `{` prefill) gives a valid object every
///   time and the same path as `json_schema`.
/// - `text` (or no `response_format`): nothing.
///
/// Refused with 400, never dropped: another type; a schema that does not describe an object;
/// `response_format` together with the client's own `tools` (the forced tool would keep the
/// model from calling them, so the request's meaning could not be kept); and together with
/// `thinking` (Anthropic refuses a forced tool choice when extended thinking is on).
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseTool<'a> {
    /// The tool's name, which the answer's `tool_use` block carries back.
    pub name: &'a str,
    description: Cow<'a, str>,
    schema: Cow<'a, Value>,
}

impl<'a> ResponseTool<'a> {
    /// The forced tool for the request's `response_format`; `None` for none or `text`.
    pub fn of(obj: &'a Map<String, Value>) -> Result<Option<ResponseTool<'a>>, RelayError> {
        let format = match obj.get("response_format") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(f)) => f,
            Some(_) => {
                return Err(invalid(
                    "response_format must be an object such as {\"type\": \"json_object\"}",
                ))
            }
        };
        let tool = match format.get("type").and_then(Value::as_str) {
            Some("text") => return Ok(None),
            Some("json_object") => ResponseTool {
                name: JSON_RESPONSE_TOOL,
                description: "Give the answer as a JSON object.".into(),
                schema: Cow::Owned(json!({"type": "object"})),
            },
            Some("json_schema") => {
                let spec = format
                    .get("json_schema")
                    .and_then(Value::as_object)
                    .ok_or_else(|| {
                        invalid("response_format of type json_schema needs a json_schema object")
                    })?;
                let name = match spec.get("name") {
                    Some(Value::String(n)) if !n.is_empty() => n.as_str(),
                    None | Some(Value::Null) => JSON_RESPONSE_TOOL,
                    Some(_) => {
                        return Err(invalid(
                            "response_format.json_schema.name must be a non-empty string",
                        ))
                    }
                };
                let schema = match spec.get("schema") {
                    None | Some(Value::Null) => Cow::Owned(json!({"type": "object"})),
                    Some(s @ Value::Object(o)) if o.get("type") == Some(&json!("object")) => {
                        Cow::Borrowed(s)
                    }
                    Some(_) => {
                        return Err(invalid(
                            "response_format.json_schema.schema must describe an object \
                             (\"type\": \"object\") for Anthropic models: they answer \
                             structured output as a tool input, which is always an object",
                        ))
                    }
                };
                let description = match spec.get("description").and_then(Value::as_str) {
                    Some(d) => Cow::Borrowed(d),
                    None => Cow::Owned(format!(
                        "Give the answer as the input of this tool, following its schema ({name})."
                    )),
                };
                ResponseTool {
                    name,
                    description,
                    schema,
                }
            }
            Some(other) => {
                return Err(invalid(format!(
                    "response_format type {other:?} is not supported for Anthropic models \
                     (json_schema, json_object and text are)"
                )))
            }
            None => return Err(invalid("response_format needs a type")),
        };
        let has_tools = obj
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty());
        if has_tools {
            return Err(invalid(
                "response_format cannot be combined with tools for Anthropic models: the \
                 structured answer is asked for as a forced tool call, which would keep the \
                 model from calling your tools; send them in separate requests",
            ));
        }
        let thinking = obj
            .get("thinking")
            .filter(|t| !t.is_null() && t.get("type") != Some(&json!("disabled")));
        if thinking.is_some() {
            return Err(invalid(
                "response_format cannot be combined with thinking for Anthropic models: the \
                 structured answer is asked for as a forced tool call, which Anthropic refuses \
                 while extended thinking is on",
            ));
        }
        Ok(Some(tool))
    }

    /// The name of the forced tool of a request translated by [`request`] (`None` when it
    /// has none, or when its `response_format` would have been refused).
    pub fn name_for(req: &RelayRequest) -> Option<String> {
        let obj = req.body.as_object()?;
        ResponseTool::of(obj)
            .ok()
            .flatten()
            .map(|t| t.name.to_owned())
    }

    /// The tool definition sent in `tools`.
    fn definition(self) -> wire::RequestTool<'a> {
        wire::RequestTool::Forced {
            description: self.description,
            input_schema: self.schema,
            name: self.name,
        }
    }
}

/// OpenAI's finish reason for an Anthropic stop reason.
pub fn finish_reason(stop_reason: Option<&str>) -> &'static str {
    match stop_reason {
        Some("max_tokens") => "length",
        Some("tool_use") => "tool_calls",
        Some("refusal") => "content_filter",
        _ => "stop",
    }
}

/// Counts of an Anthropic `usage` object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    input: i64,
    output: i64,
    cache_read: i64,
    cache_write: i64,
}

impl Counts {
    /// Reads the fields present in `u` (absent fields keep their value).
    fn update(&mut self, u: &Value) {
        let get = |k: &str| u.get(k).and_then(Value::as_i64).map(|n| n.max(0));
        if let Some(n) = get("input_tokens") {
            self.input = n;
        }
        if let Some(n) = get("output_tokens") {
            self.output = n;
        }
        if let Some(n) = get("cache_read_input_tokens") {
            self.cache_read = n;
        }
        if let Some(n) = get("cache_creation_input_tokens") {
            self.cache_write = n;
        }
    }

    /// In billing terms: Anthropic's `input_tokens` excludes cache reads and writes, which the
    /// prompt count includes (and keeps in their own buckets for their prices). The sum
    /// saturates: an upstream's counts near `i64::MAX` overflowed it (a panic in debug builds, a
    /// negative prompt in release ones).
    fn usage(&self) -> Usage {
        Usage {
            prompt_tokens: self
                .input
                .saturating_add(self.cache_read)
                .saturating_add(self.cache_write),
            completion_tokens: self.output,
            cached_read_tokens: self.cache_read,
            cached_write_tokens: self.cache_write,
            ..Usage::default()
        }
    }
}

/// The usage of an Anthropic `usage` object.
pub fn usage_from(u: &Value) -> Option<Usage> {
    if !u.is_object() || (u.get("input_tokens").is_none() && u.get("output_tokens").is_none()) {
        return None;
    }
    let mut c = Counts::default();
    c.update(u);
    Some(c.usage())
}

/// The usage of a Messages response body.
pub fn response_usage(body: &[u8]) -> Option<Usage> {
    usage_from(wire::MessageResponse::read(body)?.usage.as_ref()?)
}

/// A Messages response as an OpenAI `chat.completion` (for Messages clients: unchanged).
pub fn answer(req: &RelayRequest, body: Vec<u8>) -> Result<Answer, UpstreamFailure> {
    if req.endpoint == Endpoint::Messages {
        return Ok(Answer {
            usage: response_usage(&body),
            body,
        });
    }
    let response_tool = ResponseTool::name_for(req);
    let v = match wire::MessageResponse::read(&body) {
        Some(v) => v,
        None if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_ok() => {
            return Err(invalid_answer("the Anthropic answer has no content"))
        }
        None => return Err(invalid_answer("the Anthropic answer is not JSON")),
    };
    let blocks = v
        .blocks()
        .ok_or_else(|| invalid_answer("the Anthropic answer has no content"))?;
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    // The input of the forced `response_format` tool: the answer's content.
    let mut structured: Option<String> = None;
    for b in &blocks {
        match b.kind.as_str() {
            Some("text") => text.push_str(b.text.as_str().unwrap_or("")),
            Some("thinking") => reasoning.push_str(b.thinking.as_str().unwrap_or("")),
            Some("tool_use")
                if structured.is_none()
                    && response_tool.is_some()
                    && b.name.as_str() == response_tool.as_deref() =>
            {
                structured = Some(b.input_json());
            }
            Some("tool_use") => calls.push(openai::ToolCall {
                id: b.id.0.clone(),
                kind: "function",
                function: openai::FunctionCall {
                    name: b.name.0.clone(),
                    arguments: b.input_json().into(),
                },
            }),
            _ => {}
        }
    }
    let stop_reason = v.stop_reason.as_str();
    let finish = match (&structured, stop_reason) {
        // The forced tool was called: for the client, the answer simply ended.
        (Some(_), Some("tool_use")) => "stop",
        _ => finish_reason(stop_reason),
    };
    if let Some(json_text) = structured {
        text = json_text;
    }
    let content = if text.is_empty() && !calls.is_empty() {
        None
    } else {
        Some(text.into())
    };
    let message = openai::Message {
        role: "assistant",
        content,
        reasoning_content: (!reasoning.is_empty()).then(|| reasoning.into()),
        tool_calls: calls,
    };
    let usage = v.usage.as_ref().and_then(usage_from);
    let body = chat_completion(
        v.id.as_str().unwrap_or("msg"),
        v.model.as_str().unwrap_or(&req.model),
        message,
        finish,
        usage.as_ref(),
    );
    Ok(Answer { body, usage })
}

/// Classifies an Anthropic error (`{"type":"error","error":{"type","message"}}`): overloaded
/// (529), api and rate-limit errors are retryable; authentication and permission errors disable
/// the channel; invalid requests are the client's (unless the message is a known credential or
/// credit one, which the domain's auto-disable list covers).
pub fn classify(status: u16, body: &[u8], disable_keywords: &[&str]) -> UpstreamFailure {
    let mut f = classify_openai(status, body, disable_keywords);
    match f.code.as_deref() {
        Some("overloaded_error" | "api_error" | "rate_limit_error") => f.retryable = true,
        Some("authentication_error" | "permission_error") => {
            f.auto_disable = true;
            f.retryable = true;
        }
        _ => {}
    }
    f
}

/// Translates an Anthropic Messages SSE stream (see [`crate::translate::StreamTranslator`]).
#[derive(Debug)]
pub struct AnthropicStream {
    reader: SseReader,
    events: Vec<SseEvent>,
    writer: ChunkWriter,
    started: bool,
    /// Content block index -> tool call index.
    tools: HashMap<u64, usize>,
    counts: Counts,
    got_output: bool,
    stopped: bool,
    /// The forced `response_format` tool (see [`ResponseTool`]) whose input is streamed as
    /// content.
    response_tool: Option<String>,
    /// The content block index of that tool's `tool_use` block once it started.
    response_block: Option<u64>,
}

impl AnthropicStream {
    pub fn new(model: &str) -> Self {
        AnthropicStream {
            reader: SseReader::new(),
            events: Vec::new(),
            writer: ChunkWriter::new(model),
            started: false,
            tools: HashMap::new(),
            counts: Counts::default(),
            got_output: false,
            stopped: false,
            response_tool: None,
            response_block: None,
        }
    }

    /// Streams the input of the `tool_use` block named `name` (the forced tool of a
    /// `response_format`, see [`ResponseTool::name_for`]) as content deltas, and ends with
    /// `finish_reason` `stop` when that tool was called. `None` changes nothing.
    pub fn with_response_tool(mut self, name: Option<String>) -> Self {
        self.response_tool = name;
        self
    }

    pub fn usage(&self) -> Option<Usage> {
        self.got_output.then(|| self.counts.usage())
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            self.writer.delta(out, Delta::start(), None);
        }
    }

    fn event(&mut self, e: &SseEvent, out: &mut Vec<u8>) {
        let Some(v) = wire::StreamEvent::read(&e.data) else {
            return;
        };
        let kind = v.kind.as_str().unwrap_or(e.event.as_str());
        match kind {
            "message_start" => {
                let m = v.message_start();
                if let Some(id) = m.id.as_str() {
                    self.writer.id = id.to_owned();
                }
                if let Some(model) = m.model.as_str() {
                    self.writer.model = model.to_owned();
                }
                if let Some(u) = &m.usage {
                    self.counts.update(u);
                }
                self.start(out);
            }
            "content_block_start" => {
                self.start(out);
                let b = v.content_block();
                let index = v.index.get().copied();
                match b.kind.as_str() {
                    Some("tool_use")
                        if self.response_block.is_none()
                            && self.response_tool.is_some()
                            && b.name.as_str() == self.response_tool.as_deref() =>
                    {
                        // Its input arrives as partial JSON: the content, streamed below.
                        self.response_block = Some(index.unwrap_or(0));
                    }
                    Some("tool_use") => {
                        let call = self.tools.len();
                        if let Some(i) = index {
                            self.tools.insert(i, call);
                        }
                        self.writer.delta(
                            out,
                            Delta::tool_call(ToolCallDelta::first(call, b.id.0, b.name.0, "")),
                            None,
                        );
                    }
                    Some("text") => {
                        if let Some(t) = b.text.as_str().filter(|t| !t.is_empty()) {
                            self.writer.delta(out, Delta::content(t), None);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                self.start(out);
                let d = v.delta();
                let index = v.index.get().copied();
                match d.kind.as_str() {
                    Some("text_delta") => {
                        let t = d.text.as_str().unwrap_or("");
                        self.writer.delta(out, Delta::content(t), None);
                    }
                    Some("thinking_delta") => {
                        let t = d.thinking.as_str().unwrap_or("");
                        self.writer.delta(out, Delta::reasoning(t), None);
                    }
                    Some("input_json_delta") if self.response_block == Some(index.unwrap_or(0)) => {
                        let part = d.partial_json.as_str().unwrap_or("");
                        if !part.is_empty() {
                            self.writer.delta(out, Delta::content(part), None);
                        }
                    }
                    Some("input_json_delta") => {
                        let part = d.partial_json.as_str().unwrap_or("");
                        let call = index.and_then(|i| self.tools.get(&i).copied());
                        if let (false, Some(call)) = (part.is_empty(), call) {
                            self.writer.delta(
                                out,
                                Delta::tool_call(ToolCallDelta::arguments(call, part)),
                                None,
                            );
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                self.start(out);
                if let Some(u) = &v.usage {
                    self.counts.update(u);
                    self.got_output = true;
                }
                let d = v.delta();
                let reason = d.stop_reason.as_str();
                let finish = match (self.response_block, reason) {
                    (Some(_), Some("tool_use")) => "stop",
                    _ => finish_reason(reason),
                };
                self.writer.delta(out, Delta::default(), Some(finish));
            }
            "message_stop" if !self.stopped => {
                self.stopped = true;
                self.got_output = true;
                self.writer.usage(out, &self.counts.usage());
                write_done(out);
            }
            "error" => {
                let (message, kind) = v.error_parts();
                let message = message.as_deref().unwrap_or("the upstream stream failed");
                self.writer
                    .error(out, message, kind.as_deref().unwrap_or("api_error"));
            }
            _ => {}
        }
    }
}

impl crate::sse::EventTranslator for AnthropicStream {
    fn reader(&mut self) -> (&mut SseReader, &mut Vec<SseEvent>) {
        (&mut self.reader, &mut self.events)
    }

    fn event(&mut self, e: &SseEvent, out: &mut Vec<u8>) {
        AnthropicStream::event(self, e, out);
    }

    fn end(&mut self, _out: &mut Vec<u8>) {}
}
