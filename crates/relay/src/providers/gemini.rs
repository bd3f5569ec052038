//! Google Gemini (Generative Language API, `x-goog-api-key`), reached from OpenAI chat
//! completions (`models/{model}:generateContent`, `:streamGenerateContent?alt=sse`) and
//! embeddings (`:batchEmbedContents`): requests are translated into Gemini's shapes, answers
//! and streams back into OpenAI's. See `docs/providers.md` for the field-by-field mapping.
//! Clients speaking Gemini's protocol themselves (`/gemini/{version}/models/{model}:{method}`)
//! are passed through, their usage read on the side from `usageMetadata`.

use std::borrow::Cow;

use base64::Engine as _;
use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use serde_json::{json, Map, Value};

use crate::conversation::{Conversation, Image, ToolChoice, Turn, UserContent, UserPart};
use crate::endpoint::Endpoint;
use crate::error::RelayError;
use crate::provider::{classify_openai, Answer, ChannelTarget, UpstreamFailure};
use crate::providers::openai::{
    apply_custom_headers, config_failure, get_json_at, invalid_answer, json_bytes, key_header,
    parse_url,
};
use crate::request::RelayRequest;
use crate::sse::{write_done, SseEvent, SseReader};
use crate::translate::{chat_completion, ChunkWriter};
use crate::usage::Usage;
use crate::wire::gemini as wire;
use crate::wire::openai::{self, Delta, ToolCallDelta};

/// The API version in the paths.
pub const API_VERSION: &str = "v1beta";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gemini;

/// The base URL without a trailing `/v1beta`.
fn base(target: &ChannelTarget) -> Result<String, RelayError> {
    let b = target.effective_base_url()?;
    Ok(b.strip_suffix("/v1beta").unwrap_or(&b).to_owned())
}

impl Gemini {
    /// Chat completions and embeddings (translated), and Gemini's own `generateContent`
    /// (passed through).
    pub fn supports(&self, endpoint: Endpoint) -> bool {
        matches!(
            endpoint,
            Endpoint::ChatCompletions | Endpoint::Embeddings | Endpoint::GenerateContent
        )
    }

    /// The translated request: `generateContent`, `streamGenerateContent?alt=sse` or
    /// `batchEmbedContents` of the mapped model; for Gemini clients their own body (streams
    /// always with `alt=sse`).
    pub fn build(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        let model = target.upstream_model(&req.model);
        let model = model.strip_prefix("models/").unwrap_or(model);
        let body = match req.endpoint {
            Endpoint::ChatCompletions => json_bytes(&request(target, req)?)?,
            Endpoint::Embeddings => json_bytes(&embeddings_body(model, req)?)?,
            // Gemini clients: their body as it is (the model is in the path), with the
            // channel's switches' tools.
            Endpoint::GenerateContent => json_bytes(native_body(target, req).as_ref())?,
            other => return Err(RelayError::UnsupportedEndpoint(other.path().into())),
        };
        let method = match req.endpoint {
            Endpoint::Embeddings => "batchEmbedContents",
            _ if req.stream => "streamGenerateContent?alt=sse",
            _ => "generateContent",
        };
        let url = parse_url(&format!(
            "{}/{API_VERSION}/models/{model}:{method}",
            base(target)?
        ))?;
        let mut headers = auth_headers(target)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        apply_custom_headers(&mut headers, target)?;
        let mut builder = client.post(url).headers(headers).body(body);
        if !req.stream && !target.timeout.is_zero() {
            builder = builder.timeout(target.timeout);
        }
        Ok(builder)
    }

    /// A Gemini client's `:countTokens` for `model` (before the channel's model mapping):
    /// `body` as the client sent it, with the `model` of a `generateContentRequest` replaced by
    /// the mapped one (Google refuses one that differs from the path's).
    pub fn count_tokens(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        model: &str,
        body: &Value,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        let model = target.upstream_model(model);
        let model = model.strip_prefix("models/").unwrap_or(model);
        let mut body = Cow::Borrowed(body);
        if body
            .get("generateContentRequest")
            .is_some_and(Value::is_object)
        {
            body.to_mut()["generateContentRequest"]["model"] = json!(format!("models/{model}"));
        }
        let bytes = json_bytes(body.as_ref())?;
        let url = parse_url(&format!(
            "{}/{API_VERSION}/models/{model}:countTokens",
            base(target)?
        ))?;
        let mut headers = auth_headers(target)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        apply_custom_headers(&mut headers, target)?;
        let mut builder = client.post(url).headers(headers).body(bytes);
        if !target.timeout.is_zero() {
            builder = builder.timeout(target.timeout);
        }
        Ok(builder)
    }

    /// GET `{base}/v1beta/models`: the model names without their `models/` prefix.
    pub async fn list_models(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
    ) -> Result<Vec<String>, UpstreamFailure> {
        let base = base(target).map_err(config_failure)?;
        let headers = auth_headers(target).map_err(config_failure)?;
        let url = format!("{base}/{API_VERSION}/models?pageSize=1000");
        let v = get_json_at(client, target, &url, headers, classify).await?;
        let models = v
            .get("models")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid_answer("the model list has no models array"))?;
        Ok(models
            .iter()
            .filter_map(|m| m.get("name").and_then(Value::as_str))
            .map(|n| n.strip_prefix("models/").unwrap_or(n).to_owned())
            .collect())
    }
}

/// `x-goog-api-key: <key>`.
fn auth_headers(target: &ChannelTarget) -> Result<HeaderMap, RelayError> {
    let mut headers = HeaderMap::new();
    let key = target.key.trim();
    if !key.is_empty() {
        headers.insert("x-goog-api-key", key_header(target, key)?);
    }
    Ok(headers)
}

fn invalid(msg: impl Into<String>) -> RelayError {
    RelayError::InvalidRequest(msg.into())
}

/// A Gemini client's body with the tools of the channel's switches
/// ([`crate::switches::gemini_tools`]); borrowed unchanged when they add none.
fn native_body<'a>(target: &ChannelTarget, req: &'a RelayRequest) -> Cow<'a, Value> {
    let Some(obj) = req.body.as_object() else {
        return Cow::Borrowed(&req.body);
    };
    match crate::switches::gemini_tools(target, obj) {
        None => Cow::Borrowed(&req.body),
        Some(tools) => {
            let mut patched = obj.clone();
            patched.insert("tools".into(), tools);
            Cow::Owned(Value::Object(patched))
        }
    }
}

/// The `generateContent` request for an OpenAI chat request, as JSON (what [`request`]
/// writes).
pub fn chat_body(target: &ChannelTarget, req: &RelayRequest) -> Result<Value, RelayError> {
    serde_json::to_value(request(target, req)?)
        .map_err(|e| invalid(format!("cannot serialise the request: {e}")))
}

/// The `generateContent` request for an OpenAI chat request, with the tools of the channel's
/// switches ([`crate::switches::gemini_builtin_tools`]): the conversation rendered from its one
/// read ([`Conversation`]), then the request's settings.
pub fn request<'a>(
    target: &ChannelTarget,
    req: &'a RelayRequest,
) -> Result<wire::GenerateContentRequest<'a>, RelayError> {
    let mut chat = Conversation::of(req)?;
    let mut contents = Vec::new();
    // Tool call id -> function name, for the function responses.
    let mut call_names = foldhash::HashMap::default();
    for turn in &mut chat {
        contents.push(content(turn?, &mut call_names));
    }
    let system = std::mem::take(&mut chat.system);
    let system_instruction = (!system.is_empty()).then(|| wire::SystemInstruction {
        parts: system.into_iter().map(wire::RequestPart::Text).collect(),
    });
    let generation_config = generation_config(&chat, req)?;
    // The switches' tools, which Gemini refuses beside a JSON answer.
    let builtin = generation_config.response_mime_type.is_none();
    let (tools, tool_config) = tools(target, &chat, builtin);
    Ok(wire::GenerateContentRequest {
        contents,
        generation_config,
        system_instruction,
        tool_config,
        tools,
    })
}

/// `generationConfig`: the limit, the client's sampling numbers and stop sequences, its
/// `response_format` ([`response_format`]) and `reasoning_effort` ([`thinking_budget`]).
fn generation_config<'a>(
    chat: &Conversation<'a>,
    req: &RelayRequest,
) -> Result<wire::GenerationConfig<'a>, RelayError> {
    let mut config = wire::GenerationConfig {
        max_output_tokens: req.max_tokens,
        temperature: chat.number("temperature"),
        top_p: chat.number("top_p"),
        top_k: chat.number("top_k"),
        seed: chat.number("seed"),
        presence_penalty: chat.number("presence_penalty"),
        frequency_penalty: chat.number("frequency_penalty"),
        stop_sequences: chat.stop(),
        ..wire::GenerationConfig::default()
    };
    response_format(chat.get("response_format"), &mut config)?;
    config.thinking_config =
        thinking_budget(chat.get("reasoning_effort")).map(|budget| wire::ThinkingConfig {
            include_thoughts: budget > 0,
            thinking_budget: budget,
        });
    Ok(config)
}

/// The client's functions as one `functionDeclarations` tool, with its `tool_choice` as the
/// `toolConfig`; without functions, the switches' built-in tools when `builtin` allows them
/// (Gemini refuses them beside functions).
fn tools<'a>(
    target: &ChannelTarget,
    chat: &Conversation<'a>,
    builtin: bool,
) -> (Vec<wire::RequestTool<'a>>, Option<wire::ToolConfig<'a>>) {
    let declarations: Vec<_> = chat
        .functions()
        .map(|f| wire::FunctionDeclaration {
            description: f.description,
            name: f.name,
            parameters: f.parameters.map(clean_schema),
        })
        .collect();
    if declarations.is_empty() {
        let tools = if builtin {
            crate::switches::gemini_builtin_tools(target, |_, _| false)
                .into_iter()
                .map(wire::RequestTool::Builtin)
                .collect()
        } else {
            Vec::new()
        };
        return (tools, None);
    }
    let tool_config = chat.tool_choice().map(|c| {
        let (mode, allowed_function_names) = match c {
            ToolChoice::Auto => ("AUTO", None),
            ToolChoice::Required => ("ANY", None),
            ToolChoice::None => ("NONE", None),
            ToolChoice::Function(name) => ("ANY", Some([name])),
        };
        wire::ToolConfig {
            function_calling_config: wire::FunctionCallingConfig {
                allowed_function_names,
                mode,
            },
        }
    });
    let tools = vec![wire::RequestTool::Functions {
        function_declarations: declarations,
    }];
    (tools, tool_config)
}

/// A turn as a `Content`: user content as text and image parts, an assistant's (`model`) text
/// and function calls, tool results as the function responses of one user turn. `call_names`
/// maps the calls' ids to their function names, which the responses need.
fn content<'a>(
    turn: Turn<'a>,
    call_names: &mut foldhash::HashMap<&'a str, &'a str>,
) -> wire::RequestContent<'a> {
    let (role, parts) = match turn {
        Turn::User(UserContent::Text(text)) => ("user", vec![wire::RequestPart::Text(text.into())]),
        Turn::User(UserContent::Parts(parts)) => (
            "user",
            parts
                .into_iter()
                .map(|p| match p {
                    UserPart::Text(text) => wire::RequestPart::Text(text.into()),
                    UserPart::Image(Image::Inline { media_type, data }) => {
                        wire::RequestPart::InlineData {
                            data,
                            mime_type: media_type,
                        }
                    }
                    UserPart::Image(Image::Url(url)) => wire::RequestPart::FileData {
                        file_uri: url,
                        mime_type: guess_image_type(url),
                    },
                })
                .collect(),
        ),
        Turn::Assistant { text, calls } => {
            let mut parts = Vec::with_capacity(calls.len() + 1);
            if !text.is_empty() {
                parts.push(wire::RequestPart::Text(text));
            }
            for c in calls {
                let name = c.name.and_then(Value::as_str).unwrap_or_default();
                if let Some(id) = c.id.and_then(Value::as_str) {
                    call_names.insert(id, name);
                }
                parts.push(wire::RequestPart::FunctionCall {
                    args: c.arguments,
                    name,
                });
            }
            ("model", parts)
        }
        Turn::ToolResults(results) => (
            "user",
            results
                .into_iter()
                .map(|r| {
                    let name = call_names
                        .get(r.call_id.unwrap_or(""))
                        .copied()
                        .or(r.name)
                        .unwrap_or_default();
                    let response = match serde_json::from_str::<Value>(&r.content) {
                        Ok(v @ Value::Object(_)) => wire::FunctionResponse::Object(v),
                        _ => wire::FunctionResponse::Text { content: r.content },
                    };
                    wire::RequestPart::FunctionResponse { name, response }
                })
                .collect(),
        ),
    };
    wire::RequestContent { parts, role }
}

/// Gemini's `thinkingBudget` for OpenAI's `reasoning_effort`: `minimal` 0 (off where the model
/// allows it), `low` 1024, `medium` 8192, `high` 24576; `None` without an effort.
fn thinking_budget(effort: Option<&Value>) -> Option<i64> {
    match effort?.as_str()? {
        "minimal" | "none" => Some(0),
        "low" => Some(1024),
        "medium" => Some(8192),
        "high" => Some(24576),
        _ => None,
    }
}

/// OpenAI's `response_format` in `generationConfig`: `json_object` asks for
/// `responseMimeType: "application/json"`; `json_schema` also sends its `schema` as
/// `responseJsonSchema` (Gemini takes a JSON Schema there as it is, `$defs`/`$ref`,
/// `additionalProperties` and all; its `name`, `description` and `strict` have no counterpart:
/// the schema is always enforced). `text` or none: nothing. Anything else is refused with 400
/// rather than dropped.
fn response_format<'a>(
    format: Option<&'a Value>,
    config: &mut wire::GenerationConfig<'a>,
) -> Result<(), RelayError> {
    let format = match format {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(f)) => f,
        Some(_) => {
            return Err(invalid(
                "response_format must be an object such as {\"type\": \"json_object\"}",
            ))
        }
    };
    match format.get("type").and_then(Value::as_str) {
        Some("text") => {}
        Some("json_object") => config.response_mime_type = Some("application/json"),
        Some("json_schema") => {
            let spec = format
                .get("json_schema")
                .and_then(Value::as_object)
                .ok_or_else(|| {
                    invalid("response_format of type json_schema needs a json_schema object")
                })?;
            config.response_mime_type = Some("application/json");
            match spec.get("schema") {
                None | Some(Value::Null) => {}
                Some(schema @ Value::Object(_)) => config.response_json_schema = Some(schema),
                Some(_) => {
                    return Err(invalid(
                        "response_format.json_schema.schema must be a JSON Schema object",
                    ))
                }
            }
        }
        Some(other) => {
            return Err(invalid(format!(
                "response_format type {other:?} is not supported for Gemini models \
                 (json_schema, json_object and text are)"
            )))
        }
        None => return Err(invalid("response_format needs a type")),
    }
    Ok(())
}

/// A JSON schema in the OpenAPI subset Gemini's `parameters` take (its `Schema` object refuses
/// any other member with 400 "Unknown name"): the members it knows, `type` as one name (a list
/// such as `["integer", "null"]` becomes `integer` with `nullable: true`), `exclusiveMinimum` /
/// `exclusiveMaximum` as `minimum` / `maximum`, a string `const` as a one-value `enum`;
/// `properties` and `items` / `anyOf` schemas cleaned the same way; everything else (`$schema`,
/// `additionalProperties`, `$ref`, `strict`, `examples`, ...) left out.
fn clean_schema(v: &Value) -> Value {
    let Value::Object(o) = v else {
        return json!({});
    };
    let mut out = Map::new();
    for (k, v) in o {
        match k.as_str() {
            "type" => match v {
                Value::String(_) => {
                    out.insert("type".into(), v.clone());
                }
                Value::Array(types) => {
                    let named: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    if let Some(t) = named.first() {
                        out.insert("type".into(), (*t).clone());
                    }
                    if named.len() < types.len() {
                        out.insert("nullable".into(), json!(true));
                    }
                }
                _ => {}
            },
            "format" | "title" | "description" | "nullable" | "enum" | "maxItems" | "minItems"
            | "required" | "minProperties" | "maxProperties" | "minLength" | "maxLength"
            | "pattern" | "example" | "propertyOrdering" | "default" | "minimum" | "maximum" => {
                out.insert(k.clone(), v.clone());
            }
            "exclusiveMinimum" if v.is_number() => {
                out.entry("minimum").or_insert_with(|| v.clone());
            }
            "exclusiveMaximum" if v.is_number() => {
                out.entry("maximum").or_insert_with(|| v.clone());
            }
            "const" if v.is_string() => {
                out.insert("enum".into(), json!([v]));
            }
            "properties" => {
                if let Value::Object(props) = v {
                    let props: Map<String, Value> = props
                        .iter()
                        .map(|(name, s)| (name.clone(), clean_schema(s)))
                        .collect();
                    out.insert("properties".into(), Value::Object(props));
                }
            }
            "items" => {
                out.insert("items".into(), clean_schema(v));
            }
            "anyOf" | "oneOf" => {
                if let Value::Array(list) = v {
                    out.insert(
                        "anyOf".into(),
                        Value::Array(list.iter().map(clean_schema).collect()),
                    );
                }
            }
            _ => {}
        }
    }
    // Gemini's enums are of strings.
    if out
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.iter().all(Value::is_string))
    {
        out.remove("enum");
    }
    Value::Object(out)
}

/// The media type of an image URL, guessed from its extension (JPEG when unknown).
fn guess_image_type(url: &str) -> &'static str {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or(url)
        .to_ascii_lowercase();
    match path.rsplit('.').next() {
        Some("png") => "image/png",
        Some("webp") => "image/webp",
        Some("gif") => "image/gif",
        Some("heic") => "image/heic",
        Some("heif") => "image/heif",
        _ => "image/jpeg",
    }
}

/// The `batchEmbedContents` request for an OpenAI embeddings request (`input` a string or an
/// array of strings; `dimensions` -> `outputDimensionality`).
pub fn embeddings_body(model: &str, req: &RelayRequest) -> Result<Value, RelayError> {
    let inputs: Vec<&str> = match req.body.get("input") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) if a.iter().all(Value::is_string) && !a.is_empty() => {
            a.iter().filter_map(Value::as_str).collect()
        }
        _ => {
            return Err(invalid(
                "input must be a string or an array of strings for this model",
            ))
        }
    };
    let dims = req.body.get("dimensions").and_then(Value::as_u64);
    let requests: Vec<Value> = inputs
        .iter()
        .map(|text| {
            let mut r =
                json!({"model": format!("models/{model}"), "content": {"parts": [{"text": text}]}});
            if let Some(d) = dims {
                r["outputDimensionality"] = json!(d);
            }
            r
        })
        .collect();
    Ok(json!({ "requests": requests }))
}

/// OpenAI's finish reason for a Gemini one (`tool_calls` when the answer calls functions).
pub fn finish_reason(reason: Option<&str>, calls: bool) -> &'static str {
    match reason {
        Some("MAX_TOKENS") => "length",
        Some(
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY",
        ) => "content_filter",
        _ if calls => "tool_calls",
        _ => "stop",
    }
}

/// The usage of a `usageMetadata` object: the prompt count includes cached content (kept as
/// `cached_tokens`); the completion count adds the thinking tokens (`thoughtsTokenCount`, kept
/// as `reasoning_tokens`) to `candidatesTokenCount`, which excludes them. The sums saturate
/// (counts near `i64::MAX` overflowed them).
pub fn usage_from(m: &Value) -> Option<Usage> {
    if !m.is_object() || m.get("promptTokenCount").is_none() {
        return None;
    }
    let get = |k: &str| m.get(k).and_then(Value::as_i64).unwrap_or(0).max(0);
    let thoughts = get("thoughtsTokenCount");
    let prompt = modalities(m.get("promptTokensDetails"));
    let answer = modalities(m.get("candidatesTokensDetails"));
    Some(Usage {
        prompt_tokens: get("promptTokenCount").saturating_add(get("toolUsePromptTokenCount")),
        completion_tokens: get("candidatesTokenCount").saturating_add(thoughts),
        cached_tokens: get("cachedContentTokenCount"),
        reasoning_tokens: thoughts,
        input_text_tokens: prompt.text,
        input_image_tokens: prompt.image,
        input_audio_tokens: prompt.audio,
        output_text_tokens: answer.text,
        output_image_tokens: answer.image,
        output_audio_tokens: answer.audio,
        ..Usage::default()
    })
}

/// Token counts per modality of a `ModalityTokenCount` list (`promptTokensDetails`,
/// `candidatesTokensDetails`); video and document tokens are priced as plain tokens.
#[derive(Default)]
struct Modalities {
    text: i64,
    image: i64,
    audio: i64,
}

fn modalities(list: Option<&Value>) -> Modalities {
    let mut m = Modalities::default();
    for item in list.and_then(Value::as_array).into_iter().flatten() {
        let n = item
            .get("tokenCount")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .max(0);
        let slot = match item.get("modality").and_then(Value::as_str) {
            Some("TEXT") => &mut m.text,
            Some("IMAGE") => &mut m.image,
            Some("AUDIO") => &mut m.audio,
            _ => continue,
        };
        *slot = slot.saturating_add(n);
    }
    m
}

/// The usage of a `generateContent` response body.
pub fn response_usage(body: &[u8]) -> Option<Usage> {
    usage_from(
        wire::GenerateContentResponse::read(body)?
            .usage_metadata
            .as_ref()?,
    )
}

/// The pieces of one candidate.
#[derive(Default)]
struct Pieces<'a> {
    text: String,
    reasoning: String,
    /// (id, name, arguments as JSON text) of each function call.
    calls: Vec<(Option<Cow<'a, str>>, Cow<'a, str>, String)>,
}

/// The parts of one candidate. The code execution tool's parts (the code the model ran and its
/// output) become fenced blocks of the text (` ```python ` and ` ```output `), which is how an
/// OpenAI-shaped answer can show them.
fn pieces<'a>(candidate: Option<&wire::Candidate<'a>>) -> Pieces<'a> {
    let mut p = Pieces::default();
    for part in candidate.map(wire::Candidate::parts).unwrap_or_default() {
        if let Some(t) = part.text.as_str() {
            if part.thought.get() == Some(&true) {
                p.reasoning.push_str(t);
            } else {
                p.text.push_str(t);
            }
        }
        if let Some(code) = part.executable_code() {
            let language = code.language.as_str().unwrap_or("").to_ascii_lowercase();
            fenced(&mut p.text, &language, code.code.as_str().unwrap_or(""));
        }
        if let Some(result) = part.code_execution_result() {
            fenced(&mut p.text, "output", result.output.as_str().unwrap_or(""));
        }
        if let Some(fc) = part.call() {
            let args = fc.args_json();
            p.calls
                .push((fc.id.0, fc.name.0.unwrap_or(Cow::Borrowed("")), args));
        }
    }
    p
}

/// Appends a fenced block to `text`, on lines of its own (it starts with a line break unless
/// `text` ends with one: in a stream, the text before it came in an earlier event).
fn fenced(text: &mut String, info: &str, body: &str) {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("```");
    text.push_str(info);
    text.push('\n');
    text.push_str(body);
    if !body.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("```\n");
}

/// A Gemini answer in OpenAI's shape: `generateContent` as a `chat.completion`,
/// `batchEmbedContents` as an embeddings list.
pub fn answer(req: &RelayRequest, body: &[u8]) -> Result<Answer, UpstreamFailure> {
    if req.endpoint == Endpoint::Embeddings {
        return embeddings_answer(req, body);
    }
    let v = wire::GenerateContentResponse::read(body)
        .ok_or_else(|| invalid_answer("the Gemini answer is not JSON"))?;
    let candidate = v.candidate();
    let p = pieces(candidate.as_ref());
    let has_calls = !p.calls.is_empty();
    let content = if p.text.is_empty() && has_calls {
        None
    } else {
        Some(p.text.into())
    };
    let tool_calls = p
        .calls
        .into_iter()
        .enumerate()
        .map(|(i, (id, name, args))| openai::ToolCall {
            id: Some(id.unwrap_or_else(|| format!("call_{i}").into())),
            kind: "function",
            function: openai::FunctionCall {
                name: Some(name),
                arguments: args.into(),
            },
        })
        .collect();
    let message = openai::Message {
        role: "assistant",
        content,
        reasoning_content: (!p.reasoning.is_empty()).then(|| p.reasoning.into()),
        tool_calls,
    };
    let reason = if candidate.is_none() && v.prompt_blocked() {
        "content_filter"
    } else {
        finish_reason(
            candidate.as_ref().and_then(|c| c.finish_reason.as_str()),
            has_calls,
        )
    };
    let usage = v.usage_metadata.as_ref().and_then(usage_from);
    let body = chat_completion(
        v.response_id.as_str().unwrap_or("chatcmpl-gemini"),
        v.model_version.as_str().unwrap_or(&req.model),
        message,
        reason,
        usage.as_ref(),
    );
    Ok(Answer { body, usage })
}

/// `{"embeddings": [{"values": [...]}]}` as OpenAI's list (base64 when the client asked). Gemini
/// reports no token counts: the usage is the tokenizer's count of the input (and `None` is
/// returned so billing counts it the same way, marked as estimated).
fn embeddings_answer(req: &RelayRequest, body: &[u8]) -> Result<Answer, UpstreamFailure> {
    let v = match wire::EmbedResponse::read(body) {
        Some(v) => v,
        None if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() => {
            wire::EmbedResponse::default()
        }
        None => return Err(invalid_answer("the Gemini answer is not JSON")),
    };
    let list = v
        .list()
        .ok_or_else(|| invalid_answer("the Gemini answer has no embeddings"))?;
    let base64 = req.body.get("encoding_format").and_then(Value::as_str) == Some("base64");
    let data = list
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let embedding = if base64 {
                let bytes: Vec<u8> = e
                    .floats()
                    .into_iter()
                    .flat_map(|f| (f as f32).to_le_bytes())
                    .collect();
                openai::EmbeddingData::Base64(
                    base64::engine::general_purpose::STANDARD.encode(bytes),
                )
            } else {
                match e.values {
                    Some(values) => openai::EmbeddingData::Floats(values),
                    None => openai::EmbeddingData::Empty([]),
                }
            };
            openai::EmbeddingItem {
                object: "embedding",
                index: i,
                embedding,
            }
        })
        .collect();
    let prompt = crate::tokenizer::estimate_prompt(&req.model, Endpoint::Embeddings, &req.body);
    let out = openai::EmbeddingList {
        object: "list",
        data,
        model: &req.model,
        usage: openai::EmbeddingUsage {
            prompt_tokens: prompt,
            total_tokens: prompt,
        },
    };
    Ok(Answer {
        body: serde_json::to_vec(&out).unwrap_or_default(),
        usage: None,
    })
}

/// Classifies a Google API error (`{"error":{"code","message","status","details"}}`): the
/// `status` becomes the code; an invalid key (`API_KEY_INVALID`, which Google answers with
/// 400) is reported as 401 like the other families' credential errors, and it,
/// `PERMISSION_DENIED` and `UNAUTHENTICATED` disable the channel; `RESOURCE_EXHAUSTED` and
/// `UNAVAILABLE` are retried.
pub fn classify(status: u16, body: &[u8], disable_keywords: &[&str]) -> UpstreamFailure {
    let mut f = classify_openai(status, body, disable_keywords);
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let v = match &v {
        Value::Array(a) if a.len() == 1 => a[0].clone(),
        _ => v,
    };
    let e = v.get("error");
    let google_status = e
        .and_then(|e| e.get("status"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let key_invalid = e
        .and_then(|e| e.get("details"))
        .and_then(Value::as_array)
        .is_some_and(|d| {
            d.iter()
                .any(|x| x.get("reason").and_then(Value::as_str) == Some("API_KEY_INVALID"))
        });
    if let Some(s) = &google_status {
        f.code = Some(s.clone());
        // Google's `status` is its error type; OpenAI clients get it as the code only.
        f.kind = None;
    }
    f.retry_after = crate::refusal::google_retry_delay(body);
    if key_invalid {
        f.status = 401;
    }
    if key_invalid
        || matches!(
            google_status.as_deref(),
            Some("PERMISSION_DENIED" | "UNAUTHENTICATED")
        )
    {
        f.auto_disable = true;
        f.retryable = true;
    }
    if matches!(
        google_status.as_deref(),
        Some("RESOURCE_EXHAUSTED" | "UNAVAILABLE")
    ) {
        f.retryable = true;
    }
    f
}

/// Translates a `streamGenerateContent?alt=sse` stream (see
/// [`crate::translate::StreamTranslator`]). Gemini streams have no end marker: the usage chunk
/// and `[DONE]` are written when the upstream body ends cleanly.
#[derive(Debug)]
pub struct GeminiStream {
    reader: SseReader,
    events: Vec<SseEvent>,
    writer: ChunkWriter,
    started: bool,
    calls: usize,
    usage: Option<Usage>,
    failed: bool,
    done: bool,
}

impl GeminiStream {
    pub fn new(model: &str) -> Self {
        GeminiStream {
            reader: SseReader::new(),
            events: Vec::new(),
            writer: ChunkWriter::new(model),
            started: false,
            calls: 0,
            usage: None,
            failed: false,
            done: false,
        }
    }

    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    fn event(&mut self, e: &SseEvent, out: &mut Vec<u8>) {
        let Some(v) = wire::GenerateContentResponse::read_event(&e.data) else {
            return;
        };
        if let Some(err) = &v.error {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the upstream stream failed");
            let kind = err
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("upstream_error");
            self.failed = true;
            self.writer.error(out, message, kind);
            return;
        }
        if !self.started {
            self.started = true;
            if let Some(id) = v.response_id.as_str() {
                self.writer.id = id.to_owned();
            }
            if let Some(m) = v.model_version.as_str() {
                self.writer.model = m.to_owned();
            }
            self.writer.delta(out, Delta::start(), None);
        }
        if let Some(u) = v.usage_metadata.as_ref().and_then(usage_from) {
            self.usage = Some(u);
        }
        let candidate = v.candidate();
        let p = pieces(candidate.as_ref());
        if !p.reasoning.is_empty() {
            self.writer.delta(out, Delta::reasoning(p.reasoning), None);
        }
        if !p.text.is_empty() {
            self.writer.delta(out, Delta::content(p.text), None);
        }
        for (id, name, args) in p.calls {
            let index = self.calls;
            self.calls += 1;
            let id = id.unwrap_or_else(|| format!("call_{index}").into());
            self.writer.delta(
                out,
                Delta::tool_call(ToolCallDelta::first(index, Some(id), Some(name), args)),
                None,
            );
        }
        let blocked = candidate.is_none() && v.prompt_blocked();
        if let Some(r) = candidate.as_ref().and_then(|c| c.finish_reason.as_str()) {
            self.writer.delta(
                out,
                Delta::default(),
                Some(finish_reason(Some(r), self.calls > 0)),
            );
        } else if blocked {
            self.writer
                .delta(out, Delta::default(), Some("content_filter"));
        }
    }
}

impl crate::sse::EventTranslator for GeminiStream {
    fn reader(&mut self) -> (&mut SseReader, &mut Vec<SseEvent>) {
        (&mut self.reader, &mut self.events)
    }

    fn event(&mut self, e: &SseEvent, out: &mut Vec<u8>) {
        GeminiStream::event(self, e, out);
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        if self.started && !self.failed && !self.done {
            self.done = true;
            if let Some(u) = &self.usage {
                self.writer.usage(out, u);
            }
            write_done(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_schemas_keep_to_geminis_openapi_subset() {
        // Claude Code's Read tool, as its schema library writes it.
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "file_path": {"type": "string", "description": "The absolute path"},
                "limit": {"type": "integer", "exclusiveMinimum": 0, "maximum": 2000},
                "offset": {"type": ["integer", "null"]},
                "type": {"const": "file", "examples": ["file"]},
                "tags": {"type": "array", "items": {"type": "string", "minLength": 1, "$ref": "#/x"}},
                "mode": {"oneOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "number", "enum": [1, 2]}]}
            },
            "required": ["file_path"]
        });
        assert_eq!(
            clean_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The absolute path"},
                    "limit": {"type": "integer", "minimum": 0, "maximum": 2000},
                    "offset": {"type": "integer", "nullable": true},
                    "type": {"enum": ["file"]},
                    "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "mode": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "number"}]}
                },
                "required": ["file_path"]
            })
        );
        assert_eq!(clean_schema(&json!("not a schema")), json!({}));
    }
}
