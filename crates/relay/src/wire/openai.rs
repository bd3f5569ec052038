//! OpenAI chat completions as written by the translations: `chat.completion`,
//! `chat.completion.chunk` (with one choice, or none and `usage`), `usage` and error events.

use std::borrow::Cow;

use serde::Serialize;

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
