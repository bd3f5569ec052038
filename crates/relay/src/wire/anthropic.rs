//! Anthropic Messages as read from the upstream: whole answers ([`MessageResponse`]) and
//! stream events ([`StreamEvent`]); as written to Messages clients of OpenAI-protocol
//! channels ([`MessageOut`], [`EventOut`]); as read from those clients
//! ([`MessagesRequest`]); and as sent upstream for OpenAI chat clients ([`RequestBody`]). Fields are lenient ([`Str`], [`Lenient`]): an answer is
//! not refused for a field of an unexpected type, the field reads as absent.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{from_object, Lenient, Obj, Shape, Str};

/// A Messages answer (`{"id", "model", "content": [...], "stop_reason", "usage"}`).
#[derive(Debug, Deserialize)]
pub struct MessageResponse<'a> {
    #[serde(default, borrow)]
    pub id: Str<'a>,
    #[serde(default, borrow)]
    pub model: Str<'a>,
    /// The content blocks, each read on its own by [`ContentBlock::read`] (a malformed block
    /// is skipped, not fatal); `None` when absent or `null`.
    #[serde(default, borrow)]
    pub content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub stop_reason: Str<'a>,
    /// The `usage` object, read by the provider's counters.
    #[serde(default)]
    pub usage: Option<Value>,
}

impl<'a> MessageResponse<'a> {
    /// Reads an answer; `None` when it is not a JSON object.
    pub fn read(body: &'a [u8]) -> Option<Self> {
        from_object(std::str::from_utf8(body).ok()?)
    }

    /// The content blocks, or `None` when `content` is not an array.
    pub fn blocks(&self) -> Option<Vec<ContentBlock<'a>>> {
        let raw: Vec<&'a RawValue> = serde_json::from_str(self.content?.get()).ok()?;
        Some(raw.into_iter().filter_map(ContentBlock::read).collect())
    }
}

/// A content block of an answer or of `content_block_start`: `text`, `thinking` or
/// `tool_use` (others are kept with their `type` and ignored by the translation).
#[derive(Debug, Default, Deserialize)]
pub struct ContentBlock<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Str<'a>,
    #[serde(default, borrow)]
    pub text: Str<'a>,
    #[serde(default, borrow)]
    pub thinking: Str<'a>,
    #[serde(default, borrow)]
    pub id: Str<'a>,
    #[serde(default, borrow)]
    pub name: Str<'a>,
    /// A `tool_use` block's input (any JSON; an object from a well-behaved upstream).
    #[serde(default, borrow)]
    pub input: Option<&'a RawValue>,
}

impl<'a> ContentBlock<'a> {
    /// One block; `None` when it is not an object.
    pub fn read(raw: &'a RawValue) -> Option<Self> {
        from_object(raw.get())
    }

    /// The `tool_use` input as compact JSON text (`{}` when absent).
    pub fn input_json(&self) -> String {
        self.input
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
            .map_or_else(|| "{}".to_owned(), |v| v.to_string())
    }
}

impl<'a> StreamEvent<'a> {
    /// Reads one event's data; `None` when it is not a JSON object.
    pub fn read(data: &'a str) -> Option<Self> {
        from_object(data)
    }
}

/// One stream event. Every event type shares this one lenient shape: `type` says which
/// fields matter (`message_start`: `message`; `content_block_start`: `index`,
/// `content_block`; `content_block_delta`: `index`, `delta`; `message_delta`: `delta`,
/// `usage`; `error`: `error`, or the event itself).
#[derive(Debug, Deserialize)]
pub struct StreamEvent<'a> {
    /// The event type; when absent, the SSE `event:` name stands in.
    #[serde(rename = "type", default, borrow)]
    pub kind: Str<'a>,
    /// `message_start`'s message (see [`StreamEvent::message_start`]); an error's message
    /// when the event is the error itself (see [`StreamEvent::error_message`]).
    #[serde(default, borrow)]
    pub message: Option<&'a RawValue>,
    #[serde(default)]
    pub index: Lenient<u64>,
    #[serde(default, borrow)]
    pub content_block: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub delta: Option<&'a RawValue>,
    /// `message_delta`'s usage; present (`Some`) even when `null`.
    #[serde(default, deserialize_with = "present")]
    pub usage: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Value>,
}

/// `Some` for any value, `null` included (absent fields take the default `None`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `message_start`'s message: the id, model and first usage.
#[derive(Debug, Default, Deserialize)]
pub struct MessageStart<'a> {
    #[serde(default, borrow)]
    pub id: Str<'a>,
    #[serde(default, borrow)]
    pub model: Str<'a>,
    #[serde(default)]
    pub usage: Option<Value>,
}

/// The `delta` of `content_block_delta` (`type`: `text_delta`, `thinking_delta`,
/// `input_json_delta`) and of `message_delta` (`stop_reason`).
#[derive(Debug, Default, Deserialize)]
pub struct EventDelta<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Str<'a>,
    #[serde(default, borrow)]
    pub text: Str<'a>,
    #[serde(default, borrow)]
    pub thinking: Str<'a>,
    #[serde(default, borrow)]
    pub partial_json: Str<'a>,
    #[serde(default, borrow)]
    pub stop_reason: Str<'a>,
}

/// Reads an optional nested object leniently: the default when absent or not an object.
fn nested<'a, T: Deserialize<'a> + Default>(raw: Option<&'a RawValue>) -> T {
    raw.and_then(|r| from_object(r.get())).unwrap_or_default()
}

impl<'a> StreamEvent<'a> {
    /// `message_start`'s message (empty when absent or malformed).
    pub fn message_start(&self) -> MessageStart<'a> {
        nested(self.message)
    }

    /// The content block of `content_block_start` (empty when absent or malformed).
    pub fn content_block(&self) -> ContentBlock<'a> {
        nested(self.content_block)
    }

    /// The delta (empty when absent or malformed).
    pub fn delta(&self) -> EventDelta<'a> {
        nested(self.delta)
    }

    /// An error event's message and type: from its `error` object, or from the event itself.
    pub fn error_parts(&self) -> (Option<String>, Option<String>) {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        match &self.error {
            Some(e) => (text(e.get("message")), text(e.get("type"))),
            None => {
                let message: Str<'_> = self
                    .message
                    .and_then(|r| serde_json::from_str(r.get()).ok())
                    .unwrap_or_default();
                (
                    message.as_str().map(str::to_owned),
                    self.kind.as_str().map(str::to_owned),
                )
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Written for Anthropic Messages clients (answers and streams of OpenAI-protocol channels)

/// A `message` answer.
#[derive(Debug, Clone, Serialize)]
pub struct MessageOut<'a> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub role: &'static str,
    pub model: &'a str,
    pub content: Vec<BlockOut<'a>>,
    /// `null` in `message_start`.
    pub stop_reason: Option<&'static str>,
    /// Always `null`.
    pub stop_sequence: Option<()>,
    pub usage: UsageOut,
}

/// A content block written to a Messages client: whole in answers, empty in
/// `content_block_start`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockOut<'a> {
    Thinking {
        thinking: Cow<'a, str>,
        /// Always empty: OpenAI upstreams sign nothing.
        signature: &'static str,
    },
    Text {
        text: Cow<'a, str>,
    },
    ToolUse {
        /// `null` when the upstream gave none.
        id: Option<Cow<'a, str>>,
        name: Option<Cow<'a, str>>,
        input: Value,
    },
}

/// An Anthropic `usage` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UsageOut {
    pub input_tokens: i64,
    pub cache_creation_input_tokens: i64,
    pub cache_read_input_tokens: i64,
    pub output_tokens: i64,
}

/// One stream event written to a Messages client (the SSE `event:` name is its `type`, see
/// [`EventOut::name`]).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventOut<'a> {
    MessageStart {
        message: MessageOut<'a>,
    },
    ContentBlockStart {
        index: usize,
        content_block: BlockOut<'a>,
    },
    ContentBlockDelta {
        index: usize,
        delta: DeltaOut<'a>,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: StopOut,
        usage: UsageOut,
    },
    MessageStop,
    Error {
        error: ErrorOut<'a>,
    },
}

impl EventOut<'_> {
    /// The SSE event name: the same as `type`.
    pub fn name(&self) -> &'static str {
        match self {
            EventOut::MessageStart { .. } => "message_start",
            EventOut::ContentBlockStart { .. } => "content_block_start",
            EventOut::ContentBlockDelta { .. } => "content_block_delta",
            EventOut::ContentBlockStop { .. } => "content_block_stop",
            EventOut::MessageDelta { .. } => "message_delta",
            EventOut::MessageStop => "message_stop",
            EventOut::Error { .. } => "error",
        }
    }
}

/// The `delta` of `content_block_delta`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DeltaOut<'a> {
    TextDelta { text: &'a str },
    ThinkingDelta { thinking: &'a str },
    InputJsonDelta { partial_json: &'a str },
}

/// The `delta` of `message_delta`.
#[derive(Debug, Clone, Serialize)]
pub struct StopOut {
    pub stop_reason: &'static str,
    /// Always `null`.
    pub stop_sequence: Option<()>,
}

/// The `error` of an `error` event.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorOut<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub message: &'a str,
}

// ---------------------------------------------------------------------------------------------
// Messages requests (from Anthropic clients, for OpenAI-protocol channels)

/// A Messages request as read from a client (from its parsed body: strings borrow from it).
/// Only what the translation into an OpenAI chat request reads; every field lenient, the
/// translation decides what is refused.
#[derive(Debug, Default, Deserialize)]
pub struct MessagesRequest<'a> {
    /// A string or text blocks.
    #[serde(default, borrow)]
    pub system: Option<Shape<'a, Obj<TextBlockIn<'a>>>>,
    #[serde(default, borrow)]
    pub messages: Option<Shape<'a, Obj<MessageIn<'a>>>>,
    #[serde(default)]
    pub stop_sequences: Option<Value>,
    #[serde(default)]
    pub temperature: Option<Value>,
    #[serde(default)]
    pub top_p: Option<Value>,
    #[serde(default, borrow)]
    pub metadata: Obj<MetadataIn<'a>>,
    #[serde(default, borrow)]
    pub tools: Option<Shape<'a, Obj<ToolIn<'a>>>>,
    #[serde(default, borrow)]
    pub tool_choice: Obj<ToolChoiceIn<'a>>,
    /// Extended thinking (`{"type": "enabled", "budget_tokens"}`, `{"type": "adaptive"}`).
    #[serde(default)]
    pub thinking: Option<Value>,
    /// `{"effort": "low" | "medium" | "high" | "max"}`.
    #[serde(default)]
    pub output_config: Option<Value>,
}

/// A block of which only the text matters (`system` blocks, `tool_result` content parts).
#[derive(Debug, Default, Deserialize)]
pub struct TextBlockIn<'a> {
    #[serde(default, borrow)]
    pub text: Str<'a>,
}

/// One message of a request.
#[derive(Debug, Default, Deserialize)]
pub struct MessageIn<'a> {
    #[serde(default, borrow)]
    pub role: Str<'a>,
    /// A string or content blocks.
    #[serde(default, borrow)]
    pub content: Option<Shape<'a, Obj<BlockIn<'a>>>>,
}

/// A content block of a request message: `text`, `image`, `tool_result` (user turns),
/// `text`, `tool_use`, `thinking` (assistant turns).
#[derive(Debug, Default, Deserialize)]
pub struct BlockIn<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Str<'a>,
    #[serde(default, borrow)]
    pub text: Str<'a>,
    #[serde(default, borrow)]
    pub source: Obj<ImageSourceIn<'a>>,
    #[serde(default, borrow)]
    pub tool_use_id: Str<'a>,
    /// A `tool_result`'s content: a string or text blocks.
    #[serde(default, borrow)]
    pub content: Option<Shape<'a, Obj<TextBlockIn<'a>>>>,
    /// A `tool_use` id and name, passed on whatever their JSON type.
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default)]
    pub name: Option<Value>,
    /// A `tool_use` input (present even when `null`).
    #[serde(default, deserialize_with = "present")]
    pub input: Option<Value>,
}

/// An image block's `source`.
#[derive(Debug, Default, Deserialize)]
pub struct ImageSourceIn<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Str<'a>,
    #[serde(default, borrow)]
    pub media_type: Str<'a>,
    #[serde(default, borrow)]
    pub data: Str<'a>,
    #[serde(default, borrow)]
    pub url: Str<'a>,
}

/// `metadata`.
#[derive(Debug, Default, Deserialize)]
pub struct MetadataIn<'a> {
    #[serde(default, borrow)]
    pub user_id: Str<'a>,
}

/// A tool of a request: a custom tool (no `type`, or `custom`) or a server tool.
#[derive(Debug, Default, Deserialize)]
pub struct ToolIn<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Str<'a>,
    /// Passed on whatever its JSON type.
    #[serde(default)]
    pub name: Option<Value>,
    #[serde(default, borrow)]
    pub description: Str<'a>,
    #[serde(default)]
    pub input_schema: Option<Value>,
}

/// `tool_choice`.
#[derive(Debug, Default, Deserialize)]
pub struct ToolChoiceIn<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Str<'a>,
    #[serde(default, borrow)]
    pub name: Str<'a>,
    #[serde(default)]
    pub disable_parallel_tool_use: Lenient<bool>,
}

// ---------------------------------------------------------------------------------------------
// Messages requests sent to Anthropic (Bedrock, Vertex AI), translated from OpenAI chat requests

// The members of every object below are declared in alphabetical order, and a block's `type`
// is a member of its own rather than serde's `tag` (which is written first): the bytes are the
// ones the translation wrote when it built a `serde_json::Value`, whose maps are sorted.

/// The Messages request for an OpenAI chat request (`crate::providers::anthropic::request`).
/// What the client sent and the relay passes on unchanged is borrowed from its body.
#[derive(Debug, Default, Serialize)]
pub struct RequestBody<'a> {
    /// Bedrock and Vertex AI: the `anthropic-beta` flags, in the body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anthropic_beta: Option<Vec<String>>,
    /// Bedrock and Vertex AI: the API version, in the body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anthropic_version: Option<&'static str>,
    pub max_tokens: i64,
    pub messages: Vec<RequestMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<RequestMetadata<'a>>,
    /// Absent for Bedrock and Vertex AI (the model is in the URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    /// The client's sequences (whatever their items).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<&'a [Value]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<RequestThinking<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<RequestToolChoice<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<RequestTool<'a>>,
    /// The client's value, whatever it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<&'a Value>,
    /// The client's number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<&'a Value>,
}

/// A message: `role` `user` or `assistant`.
#[derive(Debug, Serialize)]
pub struct RequestMessage<'a> {
    pub content: RequestContent<'a>,
    pub role: &'static str,
}

/// A message's content: a string (a user's string content), or blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum RequestContent<'a> {
    Text(&'a str),
    Blocks(Vec<RequestBlock<'a>>),
}

/// A content block (see [`RequestBlock::text`] and the others for their `type`).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum RequestBlock<'a> {
    /// `text`.
    Text {
        text: Cow<'a, str>,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    /// `image`.
    Image {
        source: ImageSource<'a>,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    /// `tool_use`: `id` and `name` as the client gave them (`null` when absent), `input` an
    /// object.
    ToolUse {
        id: Option<&'a Value>,
        input: Value,
        name: Option<&'a Value>,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    /// `tool_result`.
    ToolResult {
        content: Cow<'a, str>,
        tool_use_id: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

impl<'a> RequestBlock<'a> {
    pub fn text(text: Cow<'a, str>) -> Self {
        RequestBlock::Text { text, kind: "text" }
    }

    pub fn image(source: ImageSource<'a>) -> Self {
        RequestBlock::Image {
            source,
            kind: "image",
        }
    }

    pub fn tool_use(id: Option<&'a Value>, name: Option<&'a Value>, input: Value) -> Self {
        RequestBlock::ToolUse {
            id,
            input,
            name,
            kind: "tool_use",
        }
    }

    pub fn tool_result(tool_use_id: &'a str, content: Cow<'a, str>) -> Self {
        RequestBlock::ToolResult {
            content,
            tool_use_id,
            kind: "tool_result",
        }
    }
}

/// An image block's `source`: `base64` data, or a `url` (see [`ImageSource::base64`],
/// [`ImageSource::url`]).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ImageSource<'a> {
    Base64 {
        data: &'a str,
        media_type: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
    Url {
        #[serde(rename = "type")]
        kind: &'static str,
        url: &'a str,
    },
}

impl<'a> ImageSource<'a> {
    pub fn base64(media_type: &'a str, data: &'a str) -> Self {
        ImageSource::Base64 {
            data,
            media_type,
            kind: "base64",
        }
    }

    pub fn url(url: &'a str) -> Self {
        ImageSource::Url { kind: "url", url }
    }
}

/// `metadata`.
#[derive(Debug, Serialize)]
pub struct RequestMetadata<'a> {
    pub user_id: &'a str,
}

/// `thinking`: the client's own, or extended thinking for its `reasoning_effort`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum RequestThinking<'a> {
    Client(&'a Value),
    Enabled {
        budget_tokens: i64,
        /// `enabled`.
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

impl RequestThinking<'_> {
    /// `{"type": "enabled", "budget_tokens": budget}`.
    pub fn enabled(budget_tokens: i64) -> Self {
        RequestThinking::Enabled {
            budget_tokens,
            kind: "enabled",
        }
    }
}

/// `tool_choice`: `type` `auto`, `any`, `none` or `tool` (with `name`).
#[derive(Debug, Serialize)]
pub struct RequestToolChoice<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_parallel_tool_use: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl<'a> RequestToolChoice<'a> {
    /// `{"type": kind}`.
    pub fn of(kind: &'static str) -> Self {
        RequestToolChoice {
            disable_parallel_tool_use: None,
            name: None,
            kind,
        }
    }

    /// `{"type": "tool", "name": name}`.
    pub fn tool(name: &'a str) -> Self {
        RequestToolChoice {
            name: Some(name),
            ..RequestToolChoice::of("tool")
        }
    }
}

/// A tool: a client's function, the forced tool of a `response_format`, or a server tool of
/// the channel's switches.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum RequestTool<'a> {
    Function {
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
        /// The function's `parameters`; `{"properties": {}, "type": "object"}` without.
        #[serde(serialize_with = "object_schema")]
        input_schema: Option<&'a Value>,
        /// As the client gave it (`null` when absent).
        name: Option<&'a Value>,
    },
    Forced {
        description: Cow<'a, str>,
        input_schema: Cow<'a, Value>,
        name: &'a str,
    },
    Server {
        name: &'static str,
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

impl RequestTool<'_> {
    /// Whether the tool is named `name`, or is a server tool of type `kind`.
    pub fn is(&self, kind: &str, name: &str) -> bool {
        match self {
            RequestTool::Function { name: n, .. } => n.and_then(Value::as_str) == Some(name),
            RequestTool::Forced { name: n, .. } => *n == name,
            RequestTool::Server { name: n, kind: k } => *n == name || *k == kind,
        }
    }
}

/// A function's schema, or the schema of an object without properties.
fn object_schema<S: Serializer>(schema: &Option<&Value>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    match schema {
        Some(schema) => schema.serialize(s),
        None => {
            let mut m = s.serialize_map(Some(2))?;
            m.serialize_entry("properties", &serde_json::Map::new())?;
            m.serialize_entry("type", "object")?;
            m.end()
        }
    }
}
