//! Anthropic Messages as read from the upstream: whole answers ([`MessageResponse`]) and
//! stream events ([`StreamEvent`]); and as written to Messages clients of OpenAI-protocol
//! channels ([`MessageOut`], [`EventOut`]). Fields are lenient ([`Str`], [`Lenient`]): an answer is
//! not refused for a field of an unexpected type, the field reads as absent.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
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
