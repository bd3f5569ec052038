//! OpenAI Responses API clients (`POST /v1/responses`, Codex, openai-agents) on channels without
//! a Responses API of their own (Anthropic, Gemini, Bedrock, Vertex AI and the OpenAI-compatible
//! vendors other than OpenAI, see [`bridged`]). The Responses request becomes an OpenAI chat
//! request ([`chat_request`]), which every provider adapter
//! builds its upstream request from; the `chat.completion` answer becomes a `response`
//! ([`answer`]) and the `chat.completion.chunk` stream becomes the Responses event sequence
//! ([`ResponsesStream`]). Usage is billed from the chat answer or stream as for chat clients.
//!
//! `previous_response_id`: this crate does no I/O. The caller loads the conversation kept
//! under that id for the user and splices it into the request with [`continue_conversation`]
//! before anything else reads the request (the reservation estimates the whole conversation, and
//! any channel, bridged or native, is sent the whole conversation). An id the caller did not
//! find stays in the request: a native OpenAI channel may know it; the bridge refuses it
//! ([`previous_response_not_found`]). After a bridged answer, [`conversation`] gives the items to
//! keep under the new response's id, unless the request says `store: false` ([`stores`]).
//!
//! `docs/providers.md` ("Responses API") lists what is bridged, dropped and refused.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::bridge::{ChunkStream, Chunks};
use crate::error::RelayError;
use crate::provider::{Answer, UpstreamFailure};
use crate::providers::openai::invalid_answer;
use crate::request::RelayRequest;
use crate::usage::Usage;
use crate::wire::openai::{
    ChatContent, ChatFunction, ChatMessage, ChatPart, ChatRequest, ChatResponse, ChatTool,
    ChatToolCall, ChatToolCallFunction, ChatToolChoice, ImageUrl, MessageIn, NamedFunction,
    ToolCallIn,
};
use crate::wire::responses::{
    Echo, ErrorOut, EventKind, EventOut, IncompleteOut, ItemIn, ItemOut, PartIn, PartOut,
    ResponseOut, ResponsesRequest, SummaryOut, ToolIn, UsageOut,
};
use crate::wire::Shape;
use switchboard_domain::channel_settings::{RESPONSES_CHAT, RESPONSES_KEY, RESPONSES_NATIVE};

fn invalid(msg: impl Into<String>) -> RelayError {
    RelayError::InvalidRequest(msg.into())
}

/// Whether a channel serves `/v1/responses` through this bridge (onto chat completions) rather
/// than passing it to the upstream's own Responses API: the channel's `config.responses`
/// (`"native"` or `"chat"`) when set, else native for OpenAI (type 1) only. Azure deployments,
/// Anthropic, Gemini, Bedrock, Vertex AI and the other OpenAI-compatible vendors (DeepSeek,
/// Ollama, vLLM, ...) are bridged.
pub fn bridged(channel_type: i32, config: &Map<String, Value>) -> bool {
    match config.get(RESPONSES_KEY).and_then(Value::as_str) {
        Some(RESPONSES_NATIVE) => false,
        Some(RESPONSES_CHAT) => true,
        _ => !switchboard_domain::channel_settings::responses_native_by_default(channel_type),
    }
}

/// The request's `previous_response_id`, when it names one.
pub fn previous_response_id(req: &RelayRequest) -> Option<&str> {
    req.body
        .get("previous_response_id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
}

/// Whether the response to this request is kept for a later `previous_response_id`: unless the
/// request says `store: false` (OpenAI's default is to store).
pub fn stores(req: &RelayRequest) -> bool {
    req.body.get("store") != Some(&Value::Bool(false))
}

/// The refusal for a `previous_response_id` that names no response kept for this user (an
/// unknown id, another user's, expired, or stored with `store: false`): OpenAI answers 400
/// `previous_response_not_found`.
pub fn previous_response_not_found(id: &str) -> RelayError {
    invalid(format!(
        "previous response with id '{id}' not found (previous_response_not_found)"
    ))
}

/// Puts `history`, the Responses items kept for the request's `previous_response_id` (the
/// conversation up to and including that response, as [`conversation`] gave them), before the
/// request's input, and takes `previous_response_id` out: the request then carries its whole
/// conversation. A string input becomes a user message item. `instructions` stay the request's
/// own (an earlier response's are not carried over, as at OpenAI).
pub fn continue_conversation(req: &mut RelayRequest, history: Vec<Value>) {
    let Some(body) = req.body.as_object_mut() else {
        return;
    };
    let mut items = history;
    match body.remove("input") {
        Some(Value::String(s)) => items.push(user_item(s)),
        Some(Value::Array(list)) => items.extend(list),
        // Anything else is refused when the request is read.
        Some(other) if !other.is_null() => {
            body.insert("input".into(), other);
            return;
        }
        _ => {}
    }
    body.insert("input".into(), Value::Array(items));
    body.remove("previous_response_id");
}

/// A user message item of `text`.
fn user_item(text: String) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

/// The OpenAI chat request (endpoint chat completions, same model: the channel's model mapping
/// is applied when it is sent) for a Responses request. `instructions` become the first system
/// message. A `previous_response_id` still in the request (one the caller found no conversation
/// for, see [`continue_conversation`]) is refused.
pub fn chat_request(req: &RelayRequest) -> Result<RelayRequest, RelayError> {
    if !req.body.is_object() {
        return Err(invalid("the request body must be a JSON object"));
    }
    let input = ResponsesRequest::deserialize(&req.body)
        .map_err(|e| invalid(format!("the request body cannot be read: {e}")))?;
    let mut messages: Vec<ChatMessage<'_>> = Vec::new();
    if let Some(s) = input.instructions.as_str().filter(|s| !s.is_empty()) {
        messages.push(ChatMessage::text("system", Cow::Borrowed(s)));
    }
    if let Some(id) = previous_response_id(req) {
        return Err(previous_response_not_found(id));
    }
    let mut builder = Messages {
        out: messages,
        images: Vec::new(),
    };
    match &input.input {
        None | Some(Shape::Null) => {}
        Some(Shape::Str(s)) => {
            builder.flush_images();
            builder.out.push(ChatMessage::text("user", s.clone()));
        }
        Some(Shape::Arr(items)) => {
            for item in items {
                builder.item(item)?;
            }
        }
        Some(Shape::Other) => {
            return Err(invalid("input must be a string or an array of input items"))
        }
    }
    builder.flush_images();
    let messages = builder.out;
    if !messages.iter().any(|m| m.role != "system") {
        return Err(invalid(
            "input is required: a string or an array of input items",
        ));
    }

    let mut tools = Vec::new();
    match input.tools {
        None | Some(Shape::Null) => {}
        Some(Shape::Arr(list)) => {
            for t in list {
                let t = t.or_empty();
                if t.kind.as_str() == Some("namespace") {
                    // A namespace's functions, each as a chat function named `{ns}__{name}`.
                    let ns = t
                        .name
                        .as_str()
                        .filter(|n| !n.is_empty())
                        .ok_or_else(|| invalid("a namespace tool needs a name"))?;
                    let Some(Shape::Arr(inner)) = t.tools else {
                        return Err(invalid("a namespace tool needs its tools"));
                    };
                    for inner in inner {
                        if let Some(mut tool) = chat_tool(inner.or_empty())? {
                            let name = tool.function.name.as_str().unwrap_or_default();
                            tool.function.name = Value::from(namespaced(ns, name));
                            tools.push(tool);
                        }
                    }
                    continue;
                }
                if let Some(tool) = chat_tool(t)? {
                    tools.push(tool);
                }
            }
        }
        Some(_) => return Err(invalid("tools must be an array")),
    }
    let tool_choice = match (&input.tool_choice, tools.is_empty()) {
        (Some(choice), false) => chat_tool_choice(choice)?,
        _ => None,
    };
    let parallel_tool_calls = match tools.is_empty() {
        false => input.parallel_tool_calls.0,
        true => None,
    };
    let user = input.safety_identifier.0.or(input.user.0);
    let body = ChatRequest {
        temperature: input.temperature.filter(Value::is_number),
        top_p: input.top_p.filter(Value::is_number),
        user,
        tools,
        tool_choice,
        parallel_tool_calls,
        ..crate::bridge::chat_base(req, messages)
    };
    let mut body = crate::bridge::chat_json(&body)?;
    if let Some(obj) = body.as_object_mut() {
        let reasoning = input.reasoning.or_empty();
        if let Some(effort) = reasoning.effort.as_str() {
            obj.insert("reasoning_effort".into(), Value::from(effort));
        }
        let text = input.text.or_empty();
        if let Some(format) = response_format(text.format.as_ref())? {
            obj.insert("response_format".into(), format);
        }
    }
    Ok(crate::bridge::chat(req, body))
}

/// The chat messages of a run of input items.
struct Messages<'a> {
    out: Vec<ChatMessage<'a>>,
    /// The images of call outputs (a tool message carries text only), sent as one user message
    /// after the run of tool messages.
    images: Vec<ChatPart<'a>>,
}

impl<'a> Messages<'a> {
    fn flush_images(&mut self) {
        if !self.images.is_empty() {
            self.out.push(ChatMessage {
                role: "user",
                content: Some(ChatContent::Parts(std::mem::take(&mut self.images))),
                tool_call_id: None,
                tool_calls: Vec::new(),
            });
        }
    }

    /// The assistant message that a call is added to: the last message when it is the
    /// assistant's (its text, or calls before this one), else a new one.
    fn assistant(&mut self) -> &mut ChatMessage<'a> {
        if self.out.last().is_none_or(|m| m.role != "assistant") {
            self.out.push(ChatMessage {
                role: "assistant",
                content: None,
                tool_call_id: None,
                tool_calls: Vec::new(),
            });
        }
        let last = self.out.len() - 1;
        &mut self.out[last]
    }

    fn item(&mut self, item: &'a Value) -> Result<(), RelayError> {
        if !item.is_object() {
            return Err(invalid("input items must be objects"));
        }
        let it = ItemIn::deserialize(item)
            .map_err(|e| invalid(format!("an input item cannot be read: {e}")))?;
        let kind = match (it.kind.as_str(), it.role.as_str()) {
            (Some(k), _) => k,
            (None, Some(_)) => "message",
            (None, None) => return Err(invalid("an input item needs a type")),
        };
        if !matches!(kind, "function_call_output" | "custom_tool_call_output") {
            self.flush_images();
        }
        match kind {
            "message" => self.message(it),
            "function_call" => {
                let call_id = it
                    .call_id
                    .0
                    .ok_or_else(|| invalid("a function_call item needs call_id"))?;
                let name = it.name.as_str().unwrap_or_default();
                let name = match it.namespace.as_str().filter(|n| !n.is_empty()) {
                    Some(ns) => namespaced(ns, name),
                    None => name.to_owned(),
                };
                let call = ChatToolCall {
                    id: Value::from(call_id.into_owned()),
                    kind: "function",
                    function: ChatToolCallFunction {
                        name: Value::from(name),
                        arguments: it.arguments.as_str().unwrap_or("{}").to_owned(),
                    },
                };
                self.assistant().tool_calls.push(call);
                Ok(())
            }
            "custom_tool_call" => {
                let call_id = it
                    .call_id
                    .0
                    .ok_or_else(|| invalid("a custom_tool_call item needs call_id"))?;
                let call = ChatToolCall {
                    id: Value::from(call_id.into_owned()),
                    kind: "function",
                    function: ChatToolCallFunction {
                        name: Value::from(it.name.as_str().unwrap_or_default()),
                        arguments: json!({"input": it.input.as_str().unwrap_or_default()})
                            .to_string(),
                    },
                };
                self.assistant().tool_calls.push(call);
                Ok(())
            }
            "function_call_output" | "custom_tool_call_output" => {
                let call_id = it
                    .call_id
                    .0
                    .ok_or_else(|| invalid(format!("a {kind} item needs call_id")))?;
                let content: Cow<'a, str> = match it.output {
                    Some(Shape::Str(s)) => s,
                    Some(Shape::Arr(parts)) => {
                        let mut text = String::new();
                        for p in parts {
                            let p = p.or_empty();
                            match p.kind.as_str() {
                                Some("input_image") => self.images.push(image_part(&p)?),
                                _ => text.push_str(p.text.as_str().unwrap_or_default()),
                            }
                        }
                        text.into()
                    }
                    _ => Cow::Borrowed(""),
                };
                self.out.push(ChatMessage {
                    role: "tool",
                    content: Some(ChatContent::Text(content)),
                    tool_call_id: Some(call_id),
                    tool_calls: Vec::new(),
                });
                Ok(())
            }
            // Reasoning is not sent back (chat takes none; encrypted content is OpenAI's), and
            // a hosted web search's record is dropped with the hosted tool (see `chat_tool`).
            "reasoning" | "web_search_call" => Ok(()),
            other => Err(invalid(format!(
                "input items of type {other:?} are not supported by this model"
            ))),
        }
    }

    fn message(&mut self, it: ItemIn<'a>) -> Result<(), RelayError> {
        let role = it.role.as_str().unwrap_or_default();
        let role: &'static str = match role {
            "user" => "user",
            "assistant" => "assistant",
            "system" | "developer" => "system",
            other => return Err(invalid(format!("unsupported message role {other:?}"))),
        };
        let parts = match it.content {
            Some(Shape::Str(s)) => {
                self.out.push(ChatMessage::text(role, s));
                return Ok(());
            }
            Some(Shape::Arr(parts)) => parts,
            _ => return Err(invalid("message content must be a string or an array")),
        };
        if role == "user" {
            let mut out = Vec::with_capacity(parts.len());
            for p in parts {
                let p = p.or_empty();
                match p.kind.as_str() {
                    Some("input_text" | "output_text" | "text") => out.push(ChatPart::Text {
                        text: p.text.0.unwrap_or_default(),
                    }),
                    Some("input_image") => out.push(image_part(&p)?),
                    other => return Err(unsupported_part(other)),
                }
            }
            self.out.push(ChatMessage {
                role,
                content: Some(ChatContent::Parts(out)),
                tool_call_id: None,
                tool_calls: Vec::new(),
            });
            return Ok(());
        }
        // System and assistant turns as text.
        let mut text = String::new();
        for p in parts {
            let p = p.or_empty();
            let piece = match p.kind.as_str() {
                Some("input_text" | "output_text" | "text") => p.text.0,
                Some("refusal") => p.refusal.0,
                other => return Err(unsupported_part(other)),
            };
            if role == "system" && !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(piece.as_deref().unwrap_or_default());
        }
        self.out.push(ChatMessage::text(role, text.into()));
        Ok(())
    }
}

fn unsupported_part(kind: Option<&str>) -> RelayError {
    invalid(format!(
        "content parts of type {} are not supported by this model",
        kind.unwrap_or("(none)")
    ))
}

/// An `input_image` part as chat's `image_url` part (a URL or a data URL; uploaded files are
/// OpenAI's).
fn image_part<'a>(p: &PartIn<'a>) -> Result<ChatPart<'a>, RelayError> {
    match &p.image_url.0 {
        Some(url) if !url.is_empty() => Ok(ChatPart::ImageUrl {
            image_url: ImageUrl { url: url.clone() },
        }),
        _ if p.file_id.0.is_some() => Err(invalid(
            "input_image by file_id is not supported by this model: send image_url",
        )),
        _ => Err(invalid("an input_image needs image_url")),
    }
}

/// The hosted tools a request may carry and that are left out of the chat request: Codex sends
/// `web_search` by default (its "cached" web search mode); the model works without it.
const DROPPED_TOOLS: [&str; 3] = ["web_search", "web_search_preview", "web_search_2025_08_26"];

/// A request tool as a chat function tool: `function` as it is (without `strict`), `custom`
/// as a function taking `{"input": string}` (its format, a grammar, in the description);
/// `None` for a dropped hosted tool; other hosted tools are refused.
fn chat_tool(t: ToolIn<'_>) -> Result<Option<ChatTool<'_>>, RelayError> {
    let kind = t.kind.as_str().unwrap_or_default();
    match kind {
        "function" => {
            let name = t
                .name
                .as_str()
                .filter(|n| !n.is_empty())
                .ok_or_else(|| invalid("a function tool needs a name"))?;
            Ok(Some(ChatTool {
                kind: "function",
                function: ChatFunction {
                    name: Value::from(name),
                    description: t.description.0,
                    parameters: t
                        .parameters
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                },
            }))
        }
        "custom" => {
            let name = t
                .name
                .as_str()
                .filter(|n| !n.is_empty())
                .ok_or_else(|| invalid("a custom tool needs a name"))?;
            let mut description = t.description.0.unwrap_or_default().into_owned();
            let format = t.format.as_ref();
            if format.and_then(|f| f.get("type")).and_then(Value::as_str) == Some("grammar") {
                let f = format.unwrap_or(&Value::Null);
                let syntax = f.get("syntax").and_then(Value::as_str).unwrap_or("lark");
                let definition = f.get("definition").and_then(Value::as_str).unwrap_or("");
                description.push_str(&format!(
                    "\n\nThe `input` argument is free text (not JSON) that must follow this \
                     {syntax} grammar:\n{definition}"
                ));
            }
            Ok(Some(ChatTool {
                kind: "function",
                function: ChatFunction {
                    name: Value::from(name),
                    description: Some(description.into()),
                    parameters: custom_parameters(),
                },
            }))
        }
        k if DROPPED_TOOLS.contains(&k) => Ok(None),
        "" => Err(invalid("a tool needs a type")),
        other => Err(invalid(format!(
            "hosted tools ({other}) are not supported by this model: only function and custom \
             tools are"
        ))),
    }
}

/// The parameters of a custom tool's chat function.
fn custom_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {"input": {"type": "string", "description": "The tool's input."}},
        "required": ["input"],
        "additionalProperties": false
    })
}

/// `tool_choice` for chat: the modes as they are, a named function or custom tool as a named
/// function, `allowed_tools` as its mode (the restriction to some tools is dropped).
fn chat_tool_choice(choice: &Value) -> Result<Option<ChatToolChoice<'_>>, RelayError> {
    let mode = |m: &str| match m {
        "auto" => Ok(Some(ChatToolChoice::Mode("auto"))),
        "none" => Ok(Some(ChatToolChoice::Mode("none"))),
        "required" => Ok(Some(ChatToolChoice::Mode("required"))),
        other => Err(invalid(format!("unsupported tool_choice {other:?}"))),
    };
    match choice {
        Value::Null => Ok(None),
        Value::String(m) => mode(m),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("function" | "custom") => {
                let name = o
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("tool_choice needs the tool's name"))?;
                Ok(Some(ChatToolChoice::Function {
                    kind: "function",
                    function: NamedFunction {
                        name: Cow::Borrowed(name),
                    },
                }))
            }
            Some("allowed_tools") => mode(o.get("mode").and_then(Value::as_str).unwrap_or("auto")),
            other => Err(invalid(format!(
                "tool_choice of type {} is not supported by this model",
                other.unwrap_or("(none)")
            ))),
        },
        _ => Err(invalid("tool_choice must be a string or an object")),
    }
}

/// `text.format` as chat's `response_format` (`None` for plain text).
fn response_format(format: Option<&Value>) -> Result<Option<Value>, RelayError> {
    let Some(f) = format.filter(|f| !f.is_null()) else {
        return Ok(None);
    };
    match f.get("type").and_then(Value::as_str) {
        Some("text") => Ok(None),
        Some("json_object") => Ok(Some(json!({"type": "json_object"}))),
        Some("json_schema") => {
            let mut schema = Map::new();
            for key in ["name", "schema", "strict", "description"] {
                if let Some(v) = f.get(key) {
                    schema.insert(key.into(), v.clone());
                }
            }
            Ok(Some(json!({"type": "json_schema", "json_schema": schema})))
        }
        _ => Err(invalid(
            "text.format must be of type text, json_object or json_schema",
        )),
    }
}

/// The items to keep under a response's id for a later `previous_response_id`: the request's
/// input items (after [`continue_conversation`], the whole conversation before this request; a
/// string input as one user message) and the response's `output` items without their ids and
/// without the reasoning items (the bridge sends no reasoning back, and a native OpenAI channel
/// the conversation may continue on refuses reasoning and item ids it does not know).
/// `instructions` are not kept (OpenAI does not carry them over either).
pub fn conversation(req: &RelayRequest, response: &Value) -> Vec<Value> {
    let mut items = Vec::new();
    match req.body.get("input") {
        Some(Value::String(s)) => items.push(user_item(s.clone())),
        Some(Value::Array(list)) => items.extend(list.iter().cloned()),
        _ => {}
    }
    if let Some(Value::Array(output)) = response.get("output") {
        for item in output {
            if item.get("type").and_then(Value::as_str) == Some("reasoning") {
                continue;
            }
            let mut item = item.clone();
            if let Some(o) = item.as_object_mut() {
                o.remove("id");
            }
            items.push(item);
        }
    }
    items
}

/// The request's settings repeated in a `response` (see [`Echo`]).
fn echo(req: &RelayRequest) -> Echo {
    let b = &req.body;
    let get = |k: &str| b.get(k).cloned().unwrap_or(Value::Null);
    let or = |k: &str, d: Value| b.get(k).filter(|v| !v.is_null()).cloned().unwrap_or(d);
    let reasoning = b.get("reasoning");
    Echo {
        instructions: get("instructions"),
        max_output_tokens: get("max_output_tokens"),
        metadata: or("metadata", json!({})),
        parallel_tool_calls: b.get("parallel_tool_calls") != Some(&Value::Bool(false)),
        previous_response_id: get("previous_response_id"),
        reasoning: json!({
            "effort": reasoning.and_then(|r| r.get("effort")).cloned().unwrap_or(Value::Null),
            "summary": reasoning.and_then(|r| r.get("summary")).cloned().unwrap_or(Value::Null),
        }),
        store: stores(req),
        temperature: or("temperature", json!(1.0)),
        text: or("text", json!({"format": {"type": "text"}})),
        tool_choice: or("tool_choice", json!("auto")),
        tools: or("tools", json!([])),
        top_p: or("top_p", json!(1.0)),
        truncation: "disabled",
        user: get("user"),
    }
}

/// The chat function name of function `name` of namespace tool `ns`.
fn namespaced(ns: &str, name: &str) -> String {
    format!("{ns}__{name}")
}

/// What a chat tool call's function name stands for in the request's tools.
#[derive(Debug, Default)]
struct ToolNames {
    /// The custom tools (their calls become `custom_tool_call` items).
    custom: HashSet<String>,
    /// The functions of namespace tools: chat name -> (namespace, function name).
    namespaced: HashMap<String, (String, String)>,
}

impl ToolNames {
    /// `(namespace, name)` of the function a chat call names.
    fn function(&self, chat_name: String) -> (Option<String>, String) {
        match self.namespaced.get(&chat_name) {
            Some((ns, name)) => (Some(ns.clone()), name.clone()),
            None => (None, chat_name),
        }
    }
}

fn custom_tools(req: &RelayRequest) -> ToolNames {
    let mut names = ToolNames::default();
    let tools = req.body.get("tools").and_then(Value::as_array);
    for t in tools.into_iter().flatten() {
        let name = t.get("name").and_then(Value::as_str).unwrap_or_default();
        match t.get("type").and_then(Value::as_str) {
            Some("custom") => {
                names.custom.insert(name.to_owned());
            }
            Some("namespace") => {
                let inner = t.get("tools").and_then(Value::as_array);
                for f in inner.into_iter().flatten() {
                    let f = f.get("name").and_then(Value::as_str).unwrap_or_default();
                    names
                        .namespaced
                        .insert(namespaced(name, f), (name.to_owned(), f.to_owned()));
                }
            }
            _ => {}
        }
    }
    names
}

/// A fresh id suffix: 32 hex digits.
fn new_suffix() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// The id of output item `index` of the response whose id ends in `suffix`.
fn item_id(prefix: &str, suffix: &str, index: usize) -> String {
    format!("{prefix}_{suffix}{index:02x}")
}

/// A custom tool's input from its chat function's arguments (`{"input": "..."}`; arguments
/// that are not such an object are taken as the input itself).
fn custom_input(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(o)) => match o.get("input") {
            Some(Value::String(s)) => s.clone(),
            _ => arguments.to_owned(),
        },
        Ok(Value::String(s)) => s,
        _ => arguments.to_owned(),
    }
}

/// The output item of a finished tool call.
fn call_item(
    suffix: &str,
    index: usize,
    custom: &ToolNames,
    call_id: String,
    name: String,
    arguments: String,
) -> ItemOut {
    if custom.custom.contains(&name) {
        ItemOut::CustomToolCall {
            id: item_id("ctc", suffix, index),
            status: "completed",
            call_id,
            name,
            input: custom_input(&arguments),
        }
    } else {
        let (namespace, name) = custom.function(name);
        ItemOut::FunctionCall {
            id: item_id("fc", suffix, index),
            status: "completed",
            call_id,
            name,
            namespace,
            arguments,
        }
    }
}

/// The output items of a chat answer's message: reasoning, text, tool calls.
fn output_items(m: &MessageIn<'_>, suffix: &str, custom: &ToolNames) -> Vec<ItemOut> {
    let mut items = Vec::new();
    if let Some(r) = m.reasoning_content.as_str().filter(|r| !r.is_empty()) {
        items.push(ItemOut::Reasoning {
            id: item_id("rs", suffix, items.len()),
            summary: vec![SummaryOut::new(r.to_owned())],
        });
    }
    let text = crate::translate::content_str(m.content.as_ref());
    if !text.is_empty() {
        items.push(ItemOut::Message {
            id: item_id("msg", suffix, items.len()),
            status: "completed",
            role: "assistant",
            content: vec![PartOut::text(text.into_owned())],
        });
    }
    for c in m.tool_calls() {
        let f = c.function();
        let index = items.len();
        items.push(call_item(
            suffix,
            index,
            custom,
            c.id.0.map(Cow::into_owned).unwrap_or_default(),
            f.name.0.map(Cow::into_owned).unwrap_or_default(),
            f.arguments.0.map(Cow::into_owned).unwrap_or_default(),
        ));
    }
    items
}

/// The status of a response for the chat finish reason: `incomplete` (with its reason) when the
/// output limit or the content filter stopped it.
fn status_of(finish: Option<&str>) -> (&'static str, Option<IncompleteOut>) {
    match finish {
        Some("length") => (
            "incomplete",
            Some(IncompleteOut {
                reason: "max_output_tokens",
            }),
        ),
        Some("content_filter") => (
            "incomplete",
            Some(IncompleteOut {
                reason: "content_filter",
            }),
        ),
        _ => ("completed", None),
    }
}

/// Marks the message items of an incomplete response `incomplete`.
fn mark_incomplete(items: &mut [ItemOut]) {
    for item in items {
        if let ItemOut::Message { status, .. } = item {
            *status = "incomplete";
        }
    }
}

fn now_secs() -> u64 {
    crate::translate::now_secs()
}

/// A `chat.completion` as a `response`; the usage to bill is the chat answer's.
pub fn answer(req: &RelayRequest, body: &[u8]) -> Result<Answer, UpstreamFailure> {
    let v = std::str::from_utf8(body)
        .ok()
        .and_then(ChatResponse::read)
        .ok_or_else(|| invalid_answer("the answer is not JSON"))?;
    let choice = v
        .first_choice()
        .ok_or_else(|| invalid_answer("the answer has no choices"))?;
    let suffix = new_suffix();
    let mut output = output_items(&choice.message(), &suffix, &custom_tools(req));
    let (status, incomplete_details) = status_of(choice.finish_reason.as_str());
    if incomplete_details.is_some() {
        mark_incomplete(&mut output);
    }
    let usage = v.usage();
    let id = format!("resp_{suffix}");
    let echo = echo(req);
    let out = ResponseOut {
        id: &id,
        object: "response",
        created_at: now_secs(),
        status,
        error: None,
        incomplete_details,
        model: v.model.as_str().unwrap_or(&req.model),
        output: &output,
        usage: Some(
            usage
                .as_ref()
                .map(UsageOut::from)
                .unwrap_or(UsageOut::from(&Usage::default())),
        ),
        echo: &echo,
    };
    Ok(Answer {
        body: serde_json::to_vec(&out).unwrap_or_default(),
        usage,
    })
}

/// The item being streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Reasoning,
    Message,
    /// A tool call, by its chat `tool_calls[].index`.
    Tool(u64),
}

/// Turns an OpenAI `chat.completion.chunk` stream into the Responses event sequence:
/// `response.created`, `response.in_progress`, then per output item
/// `response.output_item.added`, its part and delta events and `response.output_item.done`
/// (reasoning as a summary: `response.reasoning_summary_part.added`,
/// `response.reasoning_summary_text.delta`/`.done`, `response.reasoning_summary_part.done`;
/// text: `response.content_part.added`, `response.output_text.delta`/`.done`,
/// `response.content_part.done`; function calls: `response.function_call_arguments.delta`/
/// `.done`; custom tool calls: `response.custom_tool_call_input.delta`/`.done` once the call is
/// whole), and at the end (`[DONE]`, or a clean end after a finish reason)
/// `response.completed`, or `response.incomplete` when the output limit or the content filter
/// stopped the answer. An `{"error"}` event becomes `response.failed`. Every event has its
/// `sequence_number`.
#[derive(Debug)]
pub struct ResponsesStream {
    chunks: Chunks,
    id: String,
    suffix: String,
    created_at: u64,
    model: String,
    echo: Echo,
    custom: ToolNames,
    seq: u64,
    started: bool,
    /// The output items so far; the last one is being streamed when `open` is set.
    output: Vec<ItemOut>,
    open: Option<Open>,
    /// The chat arguments of the open tool call so far.
    tool_args: String,
    ended: bool,
    /// The final `response` object (completed, incomplete or failed).
    response: Option<Value>,
}

impl ResponsesStream {
    /// A stream for the Responses request `req` (its model, and its tools and settings, which
    /// the `response` objects repeat).
    pub fn new(req: &RelayRequest) -> Self {
        let suffix = new_suffix();
        ResponsesStream {
            chunks: Chunks::default(),
            id: format!("resp_{suffix}"),
            suffix,
            created_at: now_secs(),
            model: req.model.clone(),
            echo: echo(req),
            custom: custom_tools(req),
            seq: 0,
            started: false,
            output: Vec::new(),
            open: None,
            tool_args: String::new(),
            ended: false,
            response: None,
        }
    }

    /// The response's id (`resp_...`).
    pub fn response_id(&self) -> &str {
        &self.id
    }

    /// The final `response` object once the stream has ended in `response.completed`,
    /// `response.incomplete` or `response.failed` (what [`conversation`] reads the output
    /// from; keep it only when completed or incomplete).
    pub fn response(&self) -> Option<&Value> {
        self.response.as_ref()
    }

    fn write(out: &mut Vec<u8>, seq: &mut u64, kind: EventKind<'_>) {
        let name = kind.name();
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
        crate::sse::write_data(
            out,
            &EventOut {
                kind,
                sequence_number: *seq,
            },
        );
        *seq += 1;
    }

    /// The `response` object as it stands.
    fn snapshot<'a>(
        &'a self,
        status: &'static str,
        incomplete_details: Option<IncompleteOut>,
        error: Option<ErrorOut<'a>>,
        usage: Option<UsageOut>,
    ) -> ResponseOut<'a> {
        ResponseOut {
            id: &self.id,
            object: "response",
            created_at: self.created_at,
            status,
            error,
            incomplete_details,
            model: &self.model,
            output: &self.output,
            usage,
            echo: &self.echo,
        }
    }

    fn start(&mut self, model: Option<&str>, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        if let Some(m) = model.filter(|m| !m.is_empty()) {
            self.model = m.to_owned();
        }
        let mut seq = self.seq;
        let response = self.snapshot("in_progress", None, None, None);
        Self::write(
            out,
            &mut seq,
            EventKind::Created {
                response: response.clone(),
            },
        );
        Self::write(out, &mut seq, EventKind::InProgress { response });
        self.seq = seq;
    }

    /// Starts output item `item` as the open one (closing another).
    fn open_item(&mut self, open: Open, item: ItemOut, out: &mut Vec<u8>) {
        self.close_item(out);
        self.output.push(item);
        self.open = Some(open);
        let output_index = self.output.len() - 1;
        Self::write(
            out,
            &mut self.seq,
            EventKind::OutputItemAdded {
                output_index,
                item: &self.output[output_index],
            },
        );
        // The text part or summary part, added after the item (as OpenAI's streams do: the
        // SDKs append it to the item they hold).
        match &mut self.output[output_index] {
            ItemOut::Reasoning { id, summary } => {
                summary.push(SummaryOut::new(String::new()));
                Self::write(
                    out,
                    &mut self.seq,
                    EventKind::ReasoningSummaryPartAdded {
                        item_id: id,
                        output_index,
                        summary_index: 0,
                        part: &summary[0],
                    },
                );
            }
            ItemOut::Message { id, content, .. } => {
                content.push(PartOut::text(String::new()));
                Self::write(
                    out,
                    &mut self.seq,
                    EventKind::ContentPartAdded {
                        item_id: id,
                        output_index,
                        content_index: 0,
                        part: &content[0],
                    },
                );
            }
            _ => {}
        }
    }

    /// Ends the open item: its done events, then `response.output_item.done`.
    fn close_item(&mut self, out: &mut Vec<u8>) {
        if self.open.take().is_none() {
            return;
        }
        let Some(output_index) = self.output.len().checked_sub(1) else {
            return;
        };
        // A custom tool call's input is whole only now (it streams as JSON arguments).
        if let ItemOut::CustomToolCall { input, .. } = &mut self.output[output_index] {
            *input = custom_input(&self.tool_args);
        }
        let item = &mut self.output[output_index];
        match item {
            ItemOut::Message { status, .. }
            | ItemOut::FunctionCall { status, .. }
            | ItemOut::CustomToolCall { status, .. } => *status = "completed",
            ItemOut::Reasoning { .. } => {}
        }
        let item = &self.output[output_index];
        let item_id = item.id();
        let seq = &mut self.seq;
        match item {
            ItemOut::Reasoning { summary, .. } => {
                if let Some(part) = summary.first() {
                    let (summary_index, text) = (0, part.text.as_str());
                    Self::write(
                        out,
                        seq,
                        EventKind::ReasoningSummaryTextDone {
                            item_id,
                            output_index,
                            summary_index,
                            text,
                        },
                    );
                    Self::write(
                        out,
                        seq,
                        EventKind::ReasoningSummaryPartDone {
                            item_id,
                            output_index,
                            summary_index,
                            part,
                        },
                    );
                }
            }
            ItemOut::Message { content, .. } => {
                if let Some(part) = content.first() {
                    Self::write(
                        out,
                        seq,
                        EventKind::OutputTextDone {
                            item_id,
                            output_index,
                            content_index: 0,
                            text: &part.text,
                            logprobs: [],
                        },
                    );
                    Self::write(
                        out,
                        seq,
                        EventKind::ContentPartDone {
                            item_id,
                            output_index,
                            content_index: 0,
                            part,
                        },
                    );
                }
            }
            ItemOut::FunctionCall {
                name, arguments, ..
            } => Self::write(
                out,
                seq,
                EventKind::FunctionCallArgumentsDone {
                    item_id,
                    output_index,
                    name,
                    arguments,
                },
            ),
            ItemOut::CustomToolCall { input, .. } => {
                Self::write(
                    out,
                    seq,
                    EventKind::CustomToolCallInputDelta {
                        item_id,
                        output_index,
                        delta: input,
                    },
                );
                Self::write(
                    out,
                    seq,
                    EventKind::CustomToolCallInputDone {
                        item_id,
                        output_index,
                        input,
                    },
                );
            }
        }
        Self::write(out, seq, EventKind::OutputItemDone { output_index, item });
    }

    /// Ends the response: `response.completed` or `response.incomplete`.
    fn complete(&mut self, out: &mut Vec<u8>) {
        if self.ended || !self.started {
            return;
        }
        self.ended = true;
        self.close_item(out);
        let (status, incomplete) = status_of(self.chunks.finish.as_deref());
        if incomplete.is_some() {
            mark_incomplete(&mut self.output);
        }
        let usage = UsageOut::from(&self.chunks.usage.unwrap_or_default());
        let mut seq = self.seq;
        let response = self.snapshot(status, incomplete, None, Some(usage));
        let value = serde_json::to_value(&response).ok();
        let kind = match incomplete {
            Some(_) => EventKind::Incomplete { response },
            None => EventKind::Completed { response },
        };
        Self::write(out, &mut seq, kind);
        self.seq = seq;
        self.response = value;
    }

    /// Ends the response as `response.failed` with the upstream's error.
    fn fail(&mut self, error: &Value, out: &mut Vec<u8>) {
        if self.ended {
            return;
        }
        self.start(None, out);
        self.ended = true;
        let text = |k: &str| error.get(k).and_then(Value::as_str);
        let message = text("message").unwrap_or("the upstream stream failed");
        let code = text("code").or(text("type")).unwrap_or("server_error");
        let usage = self.chunks.usage.as_ref().map(UsageOut::from);
        let mut seq = self.seq;
        let error = ErrorOut {
            code: code.into(),
            message: message.into(),
        };
        let response = self.snapshot("failed", None, Some(error), usage);
        let value = serde_json::to_value(&response).ok();
        Self::write(out, &mut seq, EventKind::Failed { response });
        self.seq = seq;
        self.response = value;
    }
}

impl ChunkStream for ResponsesStream {
    fn chunks(&mut self) -> &mut Chunks {
        &mut self.chunks
    }

    fn ended(&self) -> bool {
        self.ended
    }

    fn done(&mut self, out: &mut Vec<u8>) {
        self.complete(out);
    }

    fn error(&mut self, error: &Value, out: &mut Vec<u8>) {
        self.fail(error, out);
    }

    fn chunk(&mut self, chunk: &ChatResponse<'_>, out: &mut Vec<u8>) {
        self.start(chunk.model.as_str(), out);
    }

    fn reasoning(&mut self, text: &str, out: &mut Vec<u8>) {
        if self.open != Some(Open::Reasoning) {
            let id = item_id("rs", &self.suffix, self.output.len());
            let item = ItemOut::Reasoning {
                id,
                summary: Vec::new(),
            };
            self.open_item(Open::Reasoning, item, out);
        }
        let output_index = self.output.len() - 1;
        if let ItemOut::Reasoning { id, summary } = &mut self.output[output_index] {
            if let Some(s) = summary.first_mut() {
                s.text.push_str(text);
            }
            Self::write(
                out,
                &mut self.seq,
                EventKind::ReasoningSummaryTextDelta {
                    item_id: id,
                    output_index,
                    summary_index: 0,
                    delta: text,
                },
            );
        }
    }

    fn text(&mut self, text: &str, out: &mut Vec<u8>) {
        if self.open != Some(Open::Message) {
            let item = ItemOut::Message {
                id: item_id("msg", &self.suffix, self.output.len()),
                status: "in_progress",
                role: "assistant",
                content: Vec::new(),
            };
            self.open_item(Open::Message, item, out);
        }
        let output_index = self.output.len() - 1;
        if let ItemOut::Message { id, content, .. } = &mut self.output[output_index] {
            if let Some(p) = content.first_mut() {
                p.text.push_str(text);
            }
            Self::write(
                out,
                &mut self.seq,
                EventKind::OutputTextDelta {
                    item_id: id,
                    output_index,
                    content_index: 0,
                    delta: text,
                    logprobs: [],
                },
            );
        }
    }

    fn tool_call(&mut self, call: &ToolCallIn<'_>, out: &mut Vec<u8>) {
        let tool = call.index.get().copied().unwrap_or(0);
        let f = call.function();
        if self.open != Some(Open::Tool(tool)) {
            let index = self.output.len();
            let call_id = call.id.as_str().unwrap_or_default().to_owned();
            let name = f.name.as_str().unwrap_or_default().to_owned();
            let item = if self.custom.custom.contains(&name) {
                ItemOut::CustomToolCall {
                    id: item_id("ctc", &self.suffix, index),
                    status: "in_progress",
                    call_id,
                    name,
                    input: String::new(),
                }
            } else {
                let (namespace, name) = self.custom.function(name);
                ItemOut::FunctionCall {
                    id: item_id("fc", &self.suffix, index),
                    status: "in_progress",
                    call_id,
                    name,
                    namespace,
                    arguments: String::new(),
                }
            };
            self.open_item(Open::Tool(tool), item, out);
            self.tool_args.clear();
        }
        let output_index = self.output.len() - 1;
        let Some(args) = f.arguments.as_str().filter(|a| !a.is_empty()) else {
            return;
        };
        self.tool_args.push_str(args);
        // A custom tool's input is sent once whole (see `close_item`).
        if let ItemOut::FunctionCall { id, arguments, .. } = &mut self.output[output_index] {
            arguments.push_str(args);
            Self::write(
                out,
                &mut self.seq,
                EventKind::FunctionCallArgumentsDelta {
                    item_id: id,
                    output_index,
                    delta: args,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::Endpoint;
    use crate::sse::EventTranslator as _;

    fn responses(body: Value) -> RelayRequest {
        RelayRequest::parse(Endpoint::Responses, body.to_string().as_bytes()).unwrap()
    }

    fn refused(body: Value) -> String {
        match chat_request(&responses(body)) {
            Err(RelayError::InvalidRequest(m)) => m,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn codex_requests_become_chat_requests() {
        let req = responses(json!({
            "model": "claude-sonnet-4-5", "instructions": "You are Codex.",
            "stream": true, "store": false, "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "k", "max_output_tokens": 300, "temperature": 0.2,
            "safety_identifier": "u-7", "parallel_tool_calls": false, "tool_choice": "auto",
            "reasoning": {"effort": "high", "summary": "auto"},
            "text": {"verbosity": "low", "format": {"type": "json_schema", "name": "out",
                "schema": {"type": "object"}, "strict": true}},
            "tools": [
                {"type": "function", "name": "shell", "description": "Runs a command.",
                 "strict": false, "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
                {"type": "custom", "name": "apply_patch", "description": "Edits files.",
                 "format": {"type": "grammar", "syntax": "lark", "definition": "start: patch"}},
                {"type": "web_search", "external_web_access": false}
            ],
            "input": [
                {"type": "message", "role": "developer", "content": [
                    {"type": "input_text", "text": "Sandbox: read-only."},
                    {"type": "input_text", "text": "Approvals: never."}
                ]},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "Fix it"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAA"}
                ]},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}],
                 "encrypted_content": "gAAA"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]},
                {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"},
                {"type": "function_call", "call_id": "c2", "name": "shell", "arguments": "{\"cmd\":\"pwd\"}"},
                {"type": "function_call_output", "call_id": "c1", "output": "a.rs"},
                {"type": "function_call_output", "call_id": "c2", "output": [
                    {"type": "input_text", "text": "/w"},
                    {"type": "input_image", "image_url": "https://x/s.png"}
                ]},
                {"type": "custom_tool_call", "call_id": "c3", "name": "apply_patch", "input": "*** Begin Patch"},
                {"type": "custom_tool_call_output", "call_id": "c3", "output": "Done"},
                {"role": "user", "content": "Thanks"}
            ]
        }));
        let chat = chat_request(&req).unwrap();
        assert_eq!(chat.endpoint, Endpoint::ChatCompletions);
        assert_eq!((chat.stream, chat.max_tokens), (true, Some(300)));
        assert_eq!(
            chat.body,
            json!({
                "model": "claude-sonnet-4-5", "max_tokens": 300, "temperature": 0.2,
                "user": "u-7", "stream": true, "stream_options": {"include_usage": true},
                "reasoning_effort": "high",
                "response_format": {"type": "json_schema", "json_schema":
                    {"name": "out", "schema": {"type": "object"}, "strict": true}},
                "tool_choice": "auto", "parallel_tool_calls": false,
                "tools": [
                    {"type": "function", "function": {"name": "shell", "description": "Runs a command.",
                        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}},
                    {"type": "function", "function": {"name": "apply_patch",
                        "description": "Edits files.\n\nThe `input` argument is free text (not JSON) that must follow this lark grammar:\nstart: patch",
                        "parameters": custom_parameters()}}
                ],
                "messages": [
                    {"role": "system", "content": "You are Codex."},
                    {"role": "system", "content": "Sandbox: read-only.\n\nApprovals: never."},
                    {"role": "user", "content": [
                        {"type": "text", "text": "Fix it"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}
                    ]},
                    {"role": "assistant", "content": "Looking.", "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"ls\"}"}},
                        {"id": "c2", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"pwd\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "a.rs"},
                    {"role": "tool", "tool_call_id": "c2", "content": "/w"},
                    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/s.png"}}]},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c3", "type": "function", "function": {"name": "apply_patch",
                            "arguments": "{\"input\":\"*** Begin Patch\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "c3", "content": "Done"},
                    {"role": "user", "content": "Thanks"}
                ]
            })
        );
    }

    /// A Codex turn as the Anthropic and Gemini adapters build it from the bridged chat request:
    /// the calls and their results pair up, the custom tool is a function of `input`.
    #[test]
    fn codex_turns_reach_anthropic_and_gemini_whole() {
        let req = responses(json!({
            "model": "claude-sonnet-4-5", "instructions": "You are Codex.", "stream": true,
            "store": false, "max_output_tokens": 1000,
            "tools": [
                {"type": "function", "name": "shell", "parameters": {"type": "object",
                    "properties": {"cmd": {"type": "string"}}}},
                {"type": "custom", "name": "apply_patch", "description": "Edits files.",
                 "format": {"type": "grammar", "syntax": "lark", "definition": "start: patch"}},
                {"type": "web_search", "external_web_access": false}
            ],
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Sandbox."}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it"}]},
                {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
                {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"},
                {"type": "function_call", "call_id": "c2", "name": "shell", "arguments": "{\"cmd\":\"pwd\"}"},
                {"type": "function_call_output", "call_id": "c1", "output": "a.rs"},
                {"type": "function_call_output", "call_id": "c2", "output": "/w"},
                {"type": "custom_tool_call", "call_id": "c3", "name": "apply_patch", "input": "*** Begin Patch"},
                {"type": "custom_tool_call_output", "call_id": "c3", "output": "Done"}
            ]
        }));
        let chat = chat_request(&req).unwrap();
        let target = crate::provider::ChannelTarget {
            channel_type: 14,
            ..crate::provider::ChannelTarget::default()
        };
        let a = crate::providers::anthropic::request_body(&target, &chat).unwrap();
        assert_eq!(a["system"], "You are Codex.\n\nSandbox.");
        assert_eq!(a["max_tokens"], 1000);
        assert_eq!(a["stream"], true);
        let tools: Vec<&str> = a["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(tools, ["shell", "apply_patch"]);
        assert_eq!(a["tools"][1]["input_schema"], custom_parameters());
        let m = a["messages"].as_array().unwrap();
        let roles: Vec<&str> = m.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
        let kinds = |i: usize| -> Vec<String> {
            m[i]["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b["type"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(kinds(1), ["tool_use", "tool_use"]);
        assert_eq!(m[1]["content"][0]["input"], json!({"cmd": "ls"}));
        assert_eq!(kinds(2), ["tool_result", "tool_result"]);
        assert_eq!(m[2]["content"][1]["tool_use_id"], "c2");
        assert_eq!(
            m[3]["content"][0]["input"],
            json!({"input": "*** Begin Patch"})
        );
        assert_eq!(m[4]["content"][0]["tool_use_id"], "c3");

        let target = crate::provider::ChannelTarget {
            channel_type: 25,
            ..crate::provider::ChannelTarget::default()
        };
        let g = crate::providers::gemini::chat_body(&target, &chat).unwrap();
        let contents = g["contents"].as_array().unwrap();
        let roles: Vec<&str> = contents
            .iter()
            .map(|c| c["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "model", "user", "model", "user"], "{g}");
        assert_eq!(contents[1]["parts"][0]["functionCall"]["name"], "shell");
        assert_eq!(contents[2]["parts"][1]["functionResponse"]["name"], "shell");
        assert_eq!(
            contents[3]["parts"][0]["functionCall"]["args"],
            json!({"input": "*** Begin Patch"})
        );
    }

    #[test]
    fn string_input_tool_choices_and_plain_requests() {
        let chat = chat_request(&responses(
            json!({"model": "m", "input": "Hi", "user": "u"}),
        ))
        .unwrap();
        assert_eq!(
            chat.body,
            json!({"model": "m", "user": "u", "messages": [{"role": "user", "content": "Hi"}]})
        );
        let with = |choice: Value| {
            let req = responses(json!({"model": "m", "input": "Hi", "tool_choice": choice,
                "tools": [{"type": "custom", "name": "patch"}]}));
            chat_request(&req).unwrap().body["tool_choice"].clone()
        };
        assert_eq!(with(json!("required")), json!("required"));
        assert_eq!(
            with(json!({"type": "custom", "name": "patch"})),
            json!({"type": "function", "function": {"name": "patch"}})
        );
        assert_eq!(
            with(json!({"type": "allowed_tools", "mode": "required", "tools": []})),
            json!("required")
        );
        // No tools (the dropped web search only): no tool fields at all.
        let chat = chat_request(&responses(json!({"model": "m", "input": "Hi",
            "tools": [{"type": "web_search"}], "tool_choice": "auto", "parallel_tool_calls": true})))
        .unwrap();
        assert!(chat.body.get("tools").is_none() && chat.body.get("tool_choice").is_none());
        assert!(chat.body.get("parallel_tool_calls").is_none());
        let chat = chat_request(&responses(json!({"model": "m", "input": "Hi",
            "text": {"format": {"type": "json_object"}}})))
        .unwrap();
        assert_eq!(chat.body["response_format"], json!({"type": "json_object"}));
    }

    #[test]
    fn kept_conversations_continue_before_the_input() {
        let mut req = responses(json!({"model": "m", "instructions": "Be brief.",
        "previous_response_id": "resp_1", "input": [
            {"type": "function_call_output", "call_id": "c1", "output": "42"}
        ]}));
        assert_eq!(previous_response_id(&req), Some("resp_1"));
        // Not found by the caller: the bridge refuses it.
        match chat_request(&req) {
            Err(RelayError::InvalidRequest(m)) => {
                assert!(
                    m.contains("previous response with id 'resp_1' not found"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
        let history = vec![
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Ask"}]}),
            json!({"type": "reasoning", "id": "rs_1", "summary": []}),
            json!({"type": "function_call", "id": "fc_1", "status": "completed",
                "call_id": "c1", "name": "calc", "arguments": "{}"}),
        ];
        continue_conversation(&mut req, history);
        assert_eq!(previous_response_id(&req), None);
        assert_eq!(req.body["input"].as_array().unwrap().len(), 4);
        let chat = chat_request(&req).unwrap();
        assert_eq!(
            chat.body["messages"],
            json!([
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Ask"}]},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "calc", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "42"}
            ])
        );
        // What is kept: the conversation so far, this input, the output.
        let response = json!({"id": "resp_2", "output": [
            {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "Hm."}]},
            {"type": "message", "id": "msg_2", "status": "completed", "role": "assistant",
             "content": [{"type": "output_text", "text": "42.", "annotations": []}]}
        ]});
        let kept = conversation(&req, &response);
        assert_eq!(kept.len(), 5);
        assert_eq!(kept[0]["content"][0]["text"], "Ask");
        // The input is kept as it came (its reasoning item included).
        assert_eq!(kept[1]["id"], "rs_1");
        assert_eq!(kept[3]["type"], "function_call_output");
        // The output without reasoning and without ids.
        assert_eq!(
            kept[4],
            json!({"type": "message", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "42.", "annotations": []}]})
        );
        // A string input after a kept conversation is one user message item.
        let mut req = responses(json!({"model": "m", "input": "Hi", "previous_response_id": "r"}));
        continue_conversation(
            &mut req,
            vec![json!({"role": "assistant", "content": "Yes?"})],
        );
        assert_eq!(
            req.body["input"],
            json!([{"role": "assistant", "content": "Yes?"},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}])
        );
        let kept = conversation(&responses(json!({"model": "m", "input": "Hi"})), &response);
        assert_eq!(kept[0], req.body["input"][1]);
        assert!(stores(&req));
        assert!(!stores(&responses(
            json!({"model": "m", "input": "Hi", "store": false})
        )));
    }

    #[test]
    fn bad_input_is_refused() {
        let m = refused(json!({"model": "m", "input": 5}));
        assert!(m.contains("input must be a string or an array"), "{m}");
        let m = refused(json!({"model": "m", "input": {"role": "user"}}));
        assert!(m.contains("input must be a string or an array"), "{m}");
        let m = refused(json!({"model": "m"}));
        assert!(m.contains("input is required"), "{m}");
        let m = refused(json!({"model": "m", "input": ["hi"]}));
        assert!(m.contains("input items must be objects"), "{m}");
        let m = refused(json!({"model": "m", "input": [{"type": "item_reference", "id": "x"}]}));
        assert!(m.contains("\"item_reference\""), "{m}");
        let m = refused(
            json!({"model": "m", "input": [{"type": "function_call_output", "output": "x"}]}),
        );
        assert!(m.contains("function_call_output item needs call_id"), "{m}");
        let m = refused(json!({"model": "m", "input": [{"type": "function_call", "name": "f"}]}));
        assert!(m.contains("function_call item needs call_id"), "{m}");
        let m = refused(json!({"model": "m", "input": [{"role": "tool", "content": "x"}]}));
        assert!(m.contains("unsupported message role"), "{m}");
        let m = refused(json!({"model": "m", "input": [{"role": "user", "content": [
            {"type": "input_file", "file_id": "f"}]}]}));
        assert!(m.contains("input_file"), "{m}");
        let m = refused(json!({"model": "m", "input": [{"role": "user", "content": [
            {"type": "input_image", "file_id": "f"}]}]}));
        assert!(m.contains("file_id"), "{m}");
        for tool in [
            "file_search",
            "computer_use_preview",
            "local_shell",
            "image_generation",
            "code_interpreter",
            "mcp",
        ] {
            let m = refused(json!({"model": "m", "input": "x", "tools": [{"type": tool}]}));
            assert!(m.contains(tool) && m.contains("not supported"), "{m}");
        }
        let m = refused(json!({"model": "m", "input": "x", "tools": [{"type": "function"}]}));
        assert!(m.contains("needs a name"), "{m}");
        let m = refused(
            json!({"model": "m", "input": "x", "tools": [{"type": "function", "name": "f"}],
            "tool_choice": {"type": "web_search"}}),
        );
        assert!(m.contains("tool_choice of type web_search"), "{m}");
        let m = refused(json!({"model": "m", "input": "x", "text": {"format": {"type": "yaml"}}}));
        assert!(m.contains("text.format"), "{m}");
        assert!(previous_response_not_found("resp_x")
            .to_string()
            .contains("previous response with id 'resp_x' not found"));
    }

    #[test]
    fn channels_bridged_by_type_and_setting() {
        let none = Map::new();
        let mut native = Map::new();
        native.insert("responses".into(), json!("native"));
        let mut chat = Map::new();
        chat.insert("responses".into(), json!("chat"));
        assert!(!bridged(1, &none));
        assert!(bridged(1, &chat));
        for ty in [3, 14, 24, 25, 32, 42, 36, 8] {
            assert!(bridged(ty, &none), "type {ty}");
        }
        assert!(!bridged(8, &native));
    }

    fn request_with_tools(stream: bool) -> RelayRequest {
        responses(
            json!({"model": "m", "input": "Hi", "stream": stream, "instructions": "I",
            "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object"}},
                      {"type": "custom", "name": "apply_patch"}]}),
        )
    }

    #[test]
    fn answers_become_responses() {
        let req = request_with_tools(false);
        let body = json!({
            "id": "chatcmpl-abc", "object": "chat.completion", "model": "claude-x",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Let me look.", "reasoning_content": "Plan.",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"ls\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "apply_patch", "arguments": "{\"input\":\"*** Begin\"}"}}
                ]
            }}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 8},
                "completion_tokens_details": {"reasoning_tokens": 3}}
        });
        let a = answer(&req, body.to_string().as_bytes()).unwrap();
        let v: Value = serde_json::from_slice(&a.body).unwrap();
        let id = v["id"].as_str().unwrap();
        assert!(id.starts_with("resp_") && id.len() == 37, "{id}");
        let suffix = &id[5..];
        assert_eq!(
            v["output"],
            json!([
                {"type": "reasoning", "id": format!("rs_{suffix}00"),
                 "summary": [{"type": "summary_text", "text": "Plan."}]},
                {"type": "message", "id": format!("msg_{suffix}01"), "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
                {"type": "function_call", "id": format!("fc_{suffix}02"), "status": "completed",
                 "call_id": "call_1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"},
                {"type": "custom_tool_call", "id": format!("ctc_{suffix}03"), "status": "completed",
                 "call_id": "call_2", "name": "apply_patch", "input": "*** Begin"}
            ])
        );
        assert_eq!(
            v["usage"],
            json!({"input_tokens": 20, "input_tokens_details": {"cached_tokens": 8},
                "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 3}, "total_tokens": 29})
        );
        assert_eq!(
            (&v["object"], &v["status"], &v["model"]),
            (&json!("response"), &json!("completed"), &json!("claude-x"))
        );
        assert_eq!(v["incomplete_details"], Value::Null);
        assert_eq!(v["error"], Value::Null);
        assert_eq!(v["instructions"], "I");
        assert_eq!(v["tools"], req.body["tools"]);
        assert_eq!(
            (&v["tool_choice"], &v["parallel_tool_calls"], &v["store"]),
            (&json!("auto"), &json!(true), &json!(true))
        );
        assert!(v["created_at"].as_u64().unwrap() > 1_700_000_000);
        let u = a.usage.unwrap();
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.cached_tokens),
            (20, 9, 8)
        );
    }

    #[test]
    fn answers_cut_by_the_output_limit_are_incomplete() {
        let req = responses(json!({"model": "m", "input": "Hi", "max_output_tokens": 5}));
        let body = json!({"id": "x", "model": "m", "choices": [{"index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": "Once upon"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 5}});
        let v: Value =
            serde_json::from_slice(&answer(&req, body.to_string().as_bytes()).unwrap().body)
                .unwrap();
        assert_eq!(v["status"], "incomplete");
        assert_eq!(
            v["incomplete_details"],
            json!({"reason": "max_output_tokens"})
        );
        assert_eq!(v["output"][0]["status"], "incomplete");
        assert_eq!(v["max_output_tokens"], 5);
        assert!(answer(&req, b"not json").is_err());
        assert!(answer(&req, b"{\"choices\": []}").is_err());
    }

    fn events(text: &str) -> Vec<(String, Value)> {
        text.split("\n\n")
            .filter(|e| !e.trim().is_empty())
            .map(|e| {
                let mut lines = e.lines();
                let name = lines.next().unwrap().strip_prefix("event: ").unwrap();
                let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
                let v: Value = serde_json::from_str(data).unwrap();
                assert_eq!(v["type"], name);
                (name.to_owned(), v)
            })
            .collect()
    }

    fn chunk(delta: Value, finish: Value) -> String {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "claude-x",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    }

    const USAGE: &str = "data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\n";

    /// The client events for `upstream`, the same at every split of its bytes.
    fn run(req: &RelayRequest, upstream: &str) -> (Vec<(String, Value)>, Option<Value>) {
        let bytes = upstream.as_bytes();
        let mut whole: Option<String> = None;
        let mut last = None;
        for split in 0..bytes.len() {
            let mut s = ResponsesStream::new(req);
            s.created_at = 1_795_000_000;
            let mut out = Vec::new();
            s.feed(&bytes[..split], &mut out);
            s.feed(&bytes[split..], &mut out);
            s.finish(&mut out);
            // Ids are fresh per stream: compare with this stream's id taken out.
            let text = String::from_utf8(out).unwrap().replace(&s.suffix, "S");
            match &whole {
                None => whole = Some(text),
                Some(w) => assert_eq!(&text, w, "split at {split}"),
            }
            last = s
                .response()
                .map(|r| serde_json::from_str(&r.to_string().replace(&s.suffix, "S")).unwrap());
        }
        let ev = events(whole.as_deref().unwrap());
        for (i, (_, v)) in ev.iter().enumerate() {
            assert_eq!(v["sequence_number"], i, "{v}");
        }
        (ev, last)
    }

    fn names(ev: &[(String, Value)]) -> Vec<&str> {
        ev.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn text_streams_become_the_event_sequence() {
        let req = responses(json!({"model": "m", "input": "Hi", "stream": true}));
        let mut up = String::new();
        up += &chunk(json!({"role": "assistant", "content": ""}), Value::Null);
        up += &chunk(json!({"content": "Hel"}), Value::Null);
        up += &chunk(json!({"content": "lo"}), Value::Null);
        up += &chunk(json!({}), json!("stop"));
        up += USAGE;
        up += "data: [DONE]\n\n";
        let (ev, kept) = run(&req, &up);
        assert_eq!(
            names(&ev),
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed"
            ]
        );
        assert_eq!(ev[0].1["response"]["status"], "in_progress");
        assert_eq!(ev[0].1["response"]["id"], "resp_S");
        assert_eq!(ev[0].1["response"]["output"], json!([]));
        assert_eq!(ev[0].1["response"]["model"], "claude-x");
        assert_eq!(
            ev[2].1["item"],
            json!({"type": "message", "id": "msg_S00", "status": "in_progress", "role": "assistant", "content": []})
        );
        assert_eq!(
            ev[3].1,
            json!({"type": "response.content_part.added", "item_id": "msg_S00", "output_index": 0,
                "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []},
                "sequence_number": 3})
        );
        assert_eq!(
            ev[4].1,
            json!({"type": "response.output_text.delta", "item_id": "msg_S00", "output_index": 0,
                "content_index": 0, "delta": "Hel", "logprobs": [], "sequence_number": 4})
        );
        assert_eq!(ev[6].1["text"], "Hello");
        assert_eq!(ev[7].1["part"]["text"], "Hello");
        assert_eq!(
            ev[8].1["item"],
            json!({"type": "message", "id": "msg_S00", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello", "annotations": []}]})
        );
        let done = &ev[9].1["response"];
        assert_eq!(done["status"], "completed");
        assert_eq!(done["output"], json!([ev[8].1["item"]]));
        assert_eq!(
            done["usage"],
            json!({"input_tokens": 9, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 4,
                "output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": 13})
        );
        assert_eq!(kept.as_ref(), Some(done));
    }

    /// Codex's namespace tools (`multi_agent_v1`): their functions are chat functions named
    /// `{namespace}__{name}`, and calls of them come back as `function_call` items with the
    /// namespace, in answers and streams, and go out again joined.
    #[test]
    fn namespace_tools_are_flattened_and_their_calls_named_back() {
        let body = json!({"model": "claude-x", "input": [
            {"role": "user", "content": "spawn one"},
            {"type": "function_call", "call_id": "c1", "name": "spawn_agent", "namespace": "multi_agent_v1", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "agent 7"}
        ],
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {"type": "object", "properties": {}}},
            {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents.", "tools": [
                {"type": "function", "name": "spawn_agent", "description": "Spawns.", "parameters": {"type": "object", "properties": {"task": {"type": "string"}}}},
                {"type": "function", "name": "close_agent", "parameters": {"type": "object", "properties": {}}}
            ]}
        ]});
        let req = responses(body.clone());
        let chat = chat_request(&req).unwrap();
        let names: Vec<&str> = chat.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "exec_command",
                "multi_agent_v1__spawn_agent",
                "multi_agent_v1__close_agent"
            ]
        );
        assert_eq!(chat.body["tools"][1]["function"]["description"], "Spawns.");
        assert_eq!(
            chat.body["messages"][1]["tool_calls"][0]["function"]["name"],
            "multi_agent_v1__spawn_agent"
        );

        let answer = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "claude-x",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "multi_agent_v1__close_agent", "arguments": "{}"}},
                {"id": "c3", "type": "function", "function": {"name": "exec_command", "arguments": "{}"}}
            ]}}]});
        let a = answer_of(&req, &answer);
        assert_eq!(a["output"][0]["name"], "close_agent");
        assert_eq!(a["output"][0]["namespace"], "multi_agent_v1");
        assert_eq!(a["output"][1]["name"], "exec_command");
        assert!(a["output"][1].get("namespace").is_none());

        let mut up = chunk(
            json!({"tool_calls": [{"index": 0, "id": "c4", "type": "function", "function": {"name": "multi_agent_v1__spawn_agent", "arguments": "{}"}}]}),
            Value::Null,
        );
        up += &chunk(json!({}), json!("tool_calls"));
        up += "data: [DONE]\n\n";
        let (ev, last) = run(&req, &up);
        let added = ev
            .iter()
            .find(|(n, _)| n == "response.output_item.added")
            .unwrap();
        assert_eq!(added.1["item"]["name"], "spawn_agent");
        assert_eq!(added.1["item"]["namespace"], "multi_agent_v1");
        assert_eq!(last.unwrap()["output"][0]["namespace"], "multi_agent_v1");

        let mut bad = body;
        bad["tools"][1] = json!({"type": "namespace", "name": "ns"});
        assert!(refused(bad).contains("namespace"));
    }

    fn answer_of(req: &RelayRequest, chat: &Value) -> Value {
        let a = answer(req, chat.to_string().as_bytes()).unwrap();
        serde_json::from_slice(&a.body).unwrap()
    }

    #[test]
    fn function_call_streams_send_argument_deltas() {
        let req = request_with_tools(true);
        let mut up = String::new();
        up += &chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "shell", "arguments": ""}}]}),
            Value::Null,
        );
        up += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"cmd\":"}}]}),
            Value::Null,
        );
        up += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"ls\"}"}}]}),
            Value::Null,
        );
        up += &chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": {"name": "apply_patch", "arguments": "{\"input\":"}}]}),
            Value::Null,
        );
        up += &chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "\"*** Begin\"}"}}]}),
            Value::Null,
        );
        up += &chunk(json!({}), json!("tool_calls"));
        up += USAGE;
        // No [DONE]: a clean end after the finish reason completes the response.
        let (ev, kept) = run(&req, &up);
        assert_eq!(
            names(&ev),
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.custom_tool_call_input.delta",
                "response.custom_tool_call_input.done",
                "response.output_item.done",
                "response.completed"
            ]
        );
        assert_eq!(
            ev[2].1["item"],
            json!({"type": "function_call", "id": "fc_S00", "status": "in_progress",
                "call_id": "call_1", "name": "shell", "arguments": ""})
        );
        assert_eq!(ev[3].1["delta"], "{\"cmd\":");
        assert_eq!(ev[3].1["item_id"], "fc_S00");
        assert_eq!(
            (&ev[5].1["arguments"], &ev[5].1["name"]),
            (&json!("{\"cmd\":\"ls\"}"), &json!("shell"))
        );
        assert_eq!(
            ev[6].1["item"],
            json!({"type": "function_call", "id": "fc_S00", "status": "completed",
                "call_id": "call_1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"})
        );
        assert_eq!(ev[7].1["item"]["type"], "custom_tool_call");
        assert_eq!(ev[7].1["output_index"], 1);
        assert_eq!(ev[8].1["delta"], "*** Begin");
        assert_eq!(
            ev[10].1["item"],
            json!({"type": "custom_tool_call", "id": "ctc_S01", "status": "completed",
                "call_id": "call_2", "name": "apply_patch", "input": "*** Begin"})
        );
        assert_eq!(kept.unwrap()["output"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn reasoning_then_text_streams() {
        let req = responses(json!({"model": "m", "input": "Hi", "stream": true}));
        let mut up = String::new();
        up += &chunk(json!({"reasoning_content": "Think"}), Value::Null);
        up += &chunk(json!({"reasoning_content": "ing."}), Value::Null);
        up += &chunk(json!({"content": "Hi"}), Value::Null);
        up += &chunk(json!({}), json!("stop"));
        up += "data: [DONE]\n\n";
        let (ev, _) = run(&req, &up);
        assert_eq!(
            names(&ev),
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.reasoning_summary_part.added",
                "response.reasoning_summary_text.delta",
                "response.reasoning_summary_text.delta",
                "response.reasoning_summary_text.done",
                "response.reasoning_summary_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed"
            ]
        );
        assert_eq!(
            ev[2].1["item"],
            json!({"type": "reasoning", "id": "rs_S00", "summary": []})
        );
        assert_eq!(ev[3].1["part"], json!({"type": "summary_text", "text": ""}));
        assert_eq!(
            (
                &ev[4].1["delta"],
                &ev[4].1["summary_index"],
                &ev[4].1["item_id"]
            ),
            (&json!("Think"), &json!(0), &json!("rs_S00"))
        );
        assert_eq!(ev[6].1["text"], "Thinking.");
        assert_eq!(
            ev[8].1["item"],
            json!({"type": "reasoning", "id": "rs_S00", "summary": [{"type": "summary_text", "text": "Thinking."}]})
        );
        assert_eq!(
            (&ev[9].1["output_index"], &ev[9].1["item"]["id"]),
            (&json!(1), &json!("msg_S01"))
        );
        assert_eq!(ev[15].1["response"]["output"].as_array().unwrap().len(), 2);
        // Without usage from the upstream the usage is zero, never absent (Codex reads it).
        assert_eq!(ev[15].1["response"]["usage"]["total_tokens"], 0);
    }

    #[test]
    fn streams_cut_by_the_limit_end_incomplete() {
        let req = responses(json!({"model": "m", "input": "Hi", "stream": true}));
        let up = chunk(json!({"content": "Once"}), json!("length")) + "data: [DONE]\n\n";
        let (ev, kept) = run(&req, &up);
        let (name, last) = ev.last().unwrap();
        assert_eq!(name, "response.incomplete");
        assert_eq!(last["response"]["status"], "incomplete");
        assert_eq!(
            last["response"]["incomplete_details"]["reason"],
            "max_output_tokens"
        );
        assert_eq!(last["response"]["output"][0]["status"], "incomplete");
        assert_eq!(kept.unwrap()["status"], "incomplete");
    }

    #[test]
    fn stream_errors_become_failed_responses() {
        let req = responses(json!({"model": "m", "input": "Hi", "stream": true}));
        let up = chunk(json!({"content": "Par"}), Value::Null)
            + "data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\",\"code\":\"context_length_exceeded\"}}\n\n"
            + "data: [DONE]\n\n";
        let (ev, kept) = run(&req, &up);
        let (name, last) = ev.last().unwrap();
        assert_eq!(name, "response.failed");
        assert_eq!(
            last["response"]["error"],
            json!({"code": "context_length_exceeded", "message": "boom"})
        );
        assert_eq!(last["response"]["status"], "failed");
        assert_eq!(kept.unwrap()["status"], "failed");
        // An error before anything: created first (the SDKs want it), then failed.
        let (ev, _) = run(
            &req,
            "data: {\"error\":{\"message\":\"down\",\"type\":\"upstream_error\"}}\n\n",
        );
        assert_eq!(
            names(&ev),
            [
                "response.created",
                "response.in_progress",
                "response.failed"
            ]
        );
        assert_eq!(ev[2].1["response"]["error"]["code"], "upstream_error");
        // A stream cut before any finish reason ends with no terminal event.
        let (ev, kept) = run(&req, &chunk(json!({"content": "Hi"}), Value::Null));
        assert_eq!(ev.last().unwrap().0, "response.output_text.delta");
        assert!(kept.is_none());
    }
}
