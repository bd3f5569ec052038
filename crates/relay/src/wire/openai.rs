//! OpenAI chat completions as written by the translations: `chat.completion`,
//! `chat.completion.chunk` (with one choice, or none and `usage`), `usage` and error events;
//! and as read from OpenAI-protocol upstreams for Anthropic Messages clients ([`ChatResponse`]).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::Str;
use crate::usage::Usage as Billed;

/// A whole answer with one choice.
#[derive(Debug, Clone, Serialize)]
pub struct ChatCompletion<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: u64,
    pub model: &'a str,
    pub choices: [Choice<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The choice of a [`ChatCompletion`].
#[derive(Debug, Clone, Serialize)]
pub struct Choice<'a> {
    pub index: u32,
    pub message: Message<'a>,
    /// Always `null` (no translated family reports log probabilities).
    pub logprobs: Option<()>,
    pub finish_reason: &'a str,
}

/// The assistant message of a [`Choice`]: `content` is `null` when the answer is only tool
/// calls.
#[derive(Debug, Clone, Serialize)]
pub struct Message<'a> {
    pub role: &'static str,
    pub content: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall<'a>>,
}

/// A function call of a [`Message`]. `id` and `name` are `null` when the upstream gave none.
#[derive(Debug, Clone, Serialize)]
pub struct ToolCall<'a> {
    pub id: Option<Cow<'a, str>>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall<'a>,
}

/// The function of a [`ToolCall`]: `arguments` is JSON text.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionCall<'a> {
    pub name: Option<Cow<'a, str>>,
    pub arguments: Cow<'a, str>,
}

/// One streamed chunk: one choice, or none and the usage (the final chunk that
/// `stream_options.include_usage` asks for).
#[derive(Debug, Clone, Serialize)]
pub struct ChatCompletionChunk<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: u64,
    pub model: &'a str,
    pub choices: Vec<ChunkChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The choice of a [`ChatCompletionChunk`].
#[derive(Debug, Clone, Serialize)]
pub struct ChunkChoice<'a> {
    pub index: u32,
    pub delta: Delta<'a>,
    /// Always `null`.
    pub logprobs: Option<()>,
    pub finish_reason: Option<&'a str>,
}

/// What one chunk adds to the message; absent fields are left out (`{}` for the chunk that
/// only carries the finish reason).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallDelta<'a>>,
}

impl<'a> Delta<'a> {
    /// The first chunk: `{"role": "assistant", "content": ""}`.
    pub fn start() -> Self {
        Delta {
            role: Some("assistant"),
            content: Some(Cow::Borrowed("")),
            ..Delta::default()
        }
    }

    /// A piece of the content.
    pub fn content(text: impl Into<Cow<'a, str>>) -> Self {
        Delta {
            content: Some(text.into()),
            ..Delta::default()
        }
    }

    /// A piece of the reasoning.
    pub fn reasoning(text: impl Into<Cow<'a, str>>) -> Self {
        Delta {
            reasoning_content: Some(text.into()),
            ..Delta::default()
        }
    }

    /// One tool-call piece.
    pub fn tool_call(call: ToolCallDelta<'a>) -> Self {
        Delta {
            tool_calls: vec![call],
            ..Delta::default()
        }
    }
}

/// A tool-call piece: the first of a call has `id`, `type` and `function.name` (each `null`
/// when the upstream gave none) and empty or whole `arguments`; later ones only `index` and
/// an `arguments` piece.
#[derive(Debug, Clone, Serialize)]
pub struct ToolCallDelta<'a> {
    pub index: usize,
    #[serde(flatten)]
    pub head: Option<ToolCallHead<'a>>,
    pub function: FunctionDelta<'a>,
}

/// `id` and `type` of the first piece of a tool call.
#[derive(Debug, Clone, Serialize)]
pub struct ToolCallHead<'a> {
    pub id: Option<Cow<'a, str>>,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// `function` of a [`ToolCallDelta`]: `name` only on the first piece.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionDelta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<Option<Cow<'a, str>>>,
    pub arguments: Cow<'a, str>,
}

impl<'a> ToolCallDelta<'a> {
    /// The first piece of call `index`.
    pub fn first(
        index: usize,
        id: Option<Cow<'a, str>>,
        name: Option<Cow<'a, str>>,
        arguments: impl Into<Cow<'a, str>>,
    ) -> Self {
        ToolCallDelta {
            index,
            head: Some(ToolCallHead {
                id,
                kind: "function",
            }),
            function: FunctionDelta {
                name: Some(name),
                arguments: arguments.into(),
            },
        }
    }

    /// A later piece of the arguments of call `index`.
    pub fn arguments(index: usize, piece: impl Into<Cow<'a, str>>) -> Self {
        ToolCallDelta {
            index,
            head: None,
            function: FunctionDelta {
                name: None,
                arguments: piece.into(),
            },
        }
    }
}

/// An OpenAI `usage` object: `prompt_tokens` and `completion_tokens` as billed (cache reads
/// and writes included in the prompt), the cached tokens (OpenAI-style cached and cache reads)
/// as `prompt_tokens_details.cached_tokens`, cache writes as `cache_write_tokens` when there
/// are any, the reasoning tokens as `completion_tokens_details.reasoning_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub total_tokens: i64,
    pub prompt_tokens_details: PromptDetails,
    pub completion_tokens_details: CompletionDetails,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PromptDetails {
    pub cached_tokens: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<i64>,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CompletionDetails {
    pub reasoning_tokens: i64,
}

impl From<&Billed> for Usage {
    fn from(u: &Billed) -> Self {
        Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total_tokens(),
            prompt_tokens_details: PromptDetails {
                cached_tokens: u.cached_tokens.saturating_add(u.cached_read_tokens),
                cache_write_tokens: (u.cached_write_tokens > 0).then_some(u.cached_write_tokens),
            },
            completion_tokens_details: CompletionDetails {
                reasoning_tokens: u.reasoning_tokens,
            },
        }
    }
}

/// An error event: `{"error": {"message", "type", "param": null, "code"}}` (`code` repeats
/// the type), which the tap and the SDKs recognise.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorEvent<'a> {
    pub error: ErrorBody<'a>,
}

/// The `error` of an [`ErrorEvent`].
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody<'a> {
    pub message: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub param: Option<()>,
    pub code: &'a str,
}

// ---------------------------------------------------------------------------------------------
// Read from OpenAI-protocol upstreams (for Anthropic Messages clients)

/// A `chat.completion` or one `chat.completion.chunk` as read from an upstream (lenient, see
/// [`super::Lenient`]): the fields the translation into Anthropic's shapes needs.
#[derive(Debug, Default, Deserialize)]
pub struct ChatResponse<'a> {
    #[serde(default, borrow)]
    pub id: Str<'a>,
    #[serde(default, borrow)]
    pub model: Str<'a>,
    #[serde(default, borrow)]
    pub choices: Option<&'a RawValue>,
    #[serde(default)]
    pub usage: Option<Value>,
    /// The Responses API's place for the usage (`response.usage`), read as OpenAI usage is.
    #[serde(default, borrow)]
    pub response: Option<&'a RawValue>,
    /// An error event (present even when `null`).
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Value>,
}

/// `Some` for any value, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl<'a> ChatResponse<'a> {
    /// Reads an answer or a chunk: an object; other JSON reads as empty; `None` when the text
    /// is not JSON.
    pub fn read(json: &'a str) -> Option<Self> {
        super::from_object(json).or_else(|| {
            serde_json::from_str::<serde::de::IgnoredAny>(json)
                .ok()
                .map(|_| ChatResponse::default())
        })
    }

    /// The first choice; `None` when there is none. A choice that is not an object reads as
    /// empty.
    pub fn first_choice(&self) -> Option<ChoiceIn<'a>> {
        let list: Vec<&'a RawValue> = serde_json::from_str(self.choices?.get()).ok()?;
        let first = list.first()?;
        Some(super::from_object(first.get()).unwrap_or_default())
    }

    /// The usage, as [`crate::usage::from_openai`] reads it from the whole document.
    pub fn usage(&self) -> Option<Billed> {
        let mut v = serde_json::Map::new();
        if let Some(u) = &self.usage {
            v.insert("usage".into(), u.clone());
        }
        if let Some(r) = self.response {
            if let Ok(r) = serde_json::from_str::<Value>(r.get()) {
                v.insert("response".into(), r);
            }
        }
        crate::usage::from_openai(&Value::Object(v))
    }
}

/// A choice: `message` (answers) or `delta` (chunks), and the finish reason.
#[derive(Debug, Default, Deserialize)]
pub struct ChoiceIn<'a> {
    #[serde(default, borrow)]
    pub message: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub delta: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub finish_reason: Str<'a>,
}

impl<'a> ChoiceIn<'a> {
    /// The answer's message (empty when absent or not an object).
    pub fn message(&self) -> MessageIn<'a> {
        self.message
            .and_then(|m| super::from_object(m.get()))
            .unwrap_or_default()
    }

    /// The chunk's delta (empty when absent or not an object).
    pub fn delta(&self) -> MessageIn<'a> {
        self.delta
            .and_then(|m| super::from_object(m.get()))
            .unwrap_or_default()
    }
}

/// A message or a delta: content (a string or text parts), reasoning and tool calls.
#[derive(Debug, Default, Deserialize)]
pub struct MessageIn<'a> {
    /// A string, or content parts (see [`crate::translate::content_str`]).
    #[serde(default)]
    pub content: Option<Value>,
    #[serde(default, borrow)]
    pub reasoning_content: Str<'a>,
    #[serde(default, borrow)]
    pub tool_calls: Option<&'a RawValue>,
}

impl<'a> MessageIn<'a> {
    /// The tool calls (one that is not an object reads as an empty call).
    pub fn tool_calls(&self) -> Vec<ToolCallIn<'a>> {
        let list: Vec<&'a RawValue> = self
            .tool_calls
            .and_then(|t| serde_json::from_str(t.get()).ok())
            .unwrap_or_default();
        list.into_iter()
            .map(|c| super::from_object(c.get()).unwrap_or_default())
            .collect()
    }
}

/// A tool call of a message, or a piece of one in a delta.
#[derive(Debug, Default, Deserialize)]
pub struct ToolCallIn<'a> {
    #[serde(default)]
    pub index: super::Lenient<u64>,
    #[serde(default, borrow)]
    pub id: Str<'a>,
    #[serde(default, borrow)]
    pub function: Option<&'a RawValue>,
}

/// The function of a [`ToolCallIn`].
#[derive(Debug, Default, Deserialize)]
pub struct FunctionIn<'a> {
    #[serde(default, borrow)]
    pub name: Str<'a>,
    #[serde(default, borrow)]
    pub arguments: Str<'a>,
}

impl<'a> ToolCallIn<'a> {
    /// The function (empty when absent or not an object).
    pub fn function(&self) -> FunctionIn<'a> {
        self.function
            .and_then(|f| super::from_object(f.get()))
            .unwrap_or_default()
    }
}

/// An embeddings list (translated from another family's embeddings answer).
#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingList<'a> {
    pub object: &'static str,
    pub data: Vec<EmbeddingItem<'a>>,
    pub model: &'a str,
    pub usage: EmbeddingUsage,
}

/// One embedding of an [`EmbeddingList`].
#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingItem<'a> {
    pub object: &'static str,
    pub index: usize,
    pub embedding: EmbeddingData<'a>,
}

/// The floats as the upstream wrote them, base64 of their little-endian f32s, or `[]` when the
/// upstream gave none.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum EmbeddingData<'a> {
    Floats(&'a RawValue),
    Base64(String),
    Empty([u8; 0]),
}

/// `usage` of an [`EmbeddingList`].
#[derive(Debug, Clone, Copy, Serialize)]
pub struct EmbeddingUsage {
    pub prompt_tokens: i64,
    pub total_tokens: i64,
}

// ---------------------------------------------------------------------------------------------
// Chat requests (written for OpenAI-protocol channels serving Anthropic Messages clients)

/// A chat completions request.
#[derive(Debug, Clone, Serialize)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub messages: Vec<ChatMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ChatTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ChatToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

/// A message of a [`ChatRequest`]: `content` is `null` for an assistant turn of tool calls
/// only.
#[derive(Debug, Clone, Serialize)]
pub struct ChatMessage<'a> {
    pub role: &'static str,
    pub content: Option<ChatContent<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ChatToolCall>,
}

impl<'a> ChatMessage<'a> {
    /// `{"role", "content": text}`.
    pub fn text(role: &'static str, text: Cow<'a, str>) -> Self {
        ChatMessage {
            role,
            content: Some(ChatContent::Text(text)),
            tool_call_id: None,
            tool_calls: Vec::new(),
        }
    }
}

/// Message content: a string or parts.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ChatContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<ChatPart<'a>>),
}

/// A content part.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatPart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl<'a> },
}

/// `image_url` of a part.
#[derive(Debug, Clone, Serialize)]
pub struct ImageUrl<'a> {
    pub url: Cow<'a, str>,
}

/// An assistant's tool call in a request; `id` and `name` as the client gave them.
#[derive(Debug, Clone, Serialize)]
pub struct ChatToolCall {
    pub id: Value,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: ChatToolCallFunction,
}

/// The function of a [`ChatToolCall`]; `arguments` is JSON text.
#[derive(Debug, Clone, Serialize)]
pub struct ChatToolCallFunction {
    pub name: Value,
    pub arguments: String,
}

/// A function tool.
#[derive(Debug, Clone, Serialize)]
pub struct ChatTool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: ChatFunction<'a>,
}

/// The function of a [`ChatTool`].
#[derive(Debug, Clone, Serialize)]
pub struct ChatFunction<'a> {
    pub name: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<Cow<'a, str>>,
    pub parameters: Value,
}

/// `tool_choice`: a mode (`auto`, `required`, `none`) or one function.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ChatToolChoice<'a> {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: NamedFunction<'a>,
    },
}

/// `{"name"}` of a forced function.
#[derive(Debug, Clone, Serialize)]
pub struct NamedFunction<'a> {
    pub name: Cow<'a, str>,
}

/// `stream_options`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StreamOptions {
    pub include_usage: bool,
}
