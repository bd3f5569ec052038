//! OpenAI's Responses API (`POST /v1/responses`) as bridged onto chat completions
//! (`crate::responses`): the request and its input items as read from the client (lenient, like
//! the other request shapes: a field of an unexpected JSON type reads as absent), and the
//! `response` object, its output items and the stream's events as written to the client.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Lenient, Obj, Shape, Str};

// ---------------------------------------------------------------------------------------------
// Read from the client

/// A Responses request: the fields the bridge reads (the rest, `include`, `prompt_cache_key`,
/// `metadata`, `truncation`, ..., are not sent upstream).
#[derive(Debug, Default, Deserialize)]
pub struct ResponsesRequest<'a> {
    /// A string (one user message) or an array of input items.
    #[serde(default, borrow)]
    pub input: Option<Shape<'a, Value>>,
    #[serde(default, borrow)]
    pub instructions: Str<'a>,
    #[serde(default, borrow)]
    pub tools: Option<Shape<'a, Obj<ToolIn<'a>>>>,
    /// `"auto"`, `"none"`, `"required"` or an object (`{"type": "function", "name"}`, ...).
    #[serde(default)]
    pub tool_choice: Option<Value>,
    #[serde(default)]
    pub parallel_tool_calls: Lenient<bool>,
    #[serde(default)]
    pub temperature: Option<Value>,
    #[serde(default)]
    pub top_p: Option<Value>,
    #[serde(default, borrow)]
    pub user: Str<'a>,
    #[serde(default, borrow)]
    pub safety_identifier: Str<'a>,
    #[serde(default, borrow)]
    pub reasoning: Obj<ReasoningIn<'a>>,
    #[serde(default)]
    pub text: Obj<TextIn>,
    #[serde(default, borrow)]
    pub previous_response_id: Str<'a>,
    #[serde(default)]
    pub store: Lenient<bool>,
}

/// `reasoning`: the effort (`minimal`, `low`, `medium`, `high`, ...), passed on as chat's
/// `reasoning_effort`; `summary` is not read.
#[derive(Debug, Default, Deserialize)]
pub struct ReasoningIn<'a> {
    #[serde(default, borrow)]
    pub effort: Str<'a>,
}

/// `text`: the output format (`{"type": "text" | "json_object" | "json_schema", ...}`);
/// `verbosity` is not read.
#[derive(Debug, Default, Deserialize)]
pub struct TextIn {
    #[serde(default)]
    pub format: Option<Value>,
}

/// A tool of the request: `function` (`name`, `description`, `parameters`, `strict`),
/// `custom` (`name`, `description`, `format`) or a hosted tool (`web_search`, ...).
#[derive(Debug, Default, Deserialize)]
pub struct ToolIn<'a> {
    #[serde(default, rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(default, borrow)]
    pub name: Str<'a>,
    #[serde(default, borrow)]
    pub description: Str<'a>,
    #[serde(default)]
    pub parameters: Option<Value>,
    /// A custom tool's input format: `{"type": "text"}` or
    /// `{"type": "grammar", "syntax": "lark" | "regex", "definition"}`.
    #[serde(default)]
    pub format: Option<Value>,
    /// A namespace tool's tools (functions and custom tools).
    #[serde(default, borrow)]
    pub tools: Option<Shape<'a, Obj<ToolIn<'a>>>>,
}

/// An input item: a message (`type` `message`, or absent with a `role`), a function or custom
/// tool call, a call's output, a reasoning item, ... (the fields of all of them).
#[derive(Debug, Default, Deserialize)]
pub struct ItemIn<'a> {
    #[serde(default, rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(default, borrow)]
    pub role: Str<'a>,
    /// A message's content: a string or content parts.
    #[serde(default, borrow)]
    pub content: Option<Shape<'a, Obj<PartIn<'a>>>>,
    #[serde(default, borrow)]
    pub call_id: Str<'a>,
    #[serde(default, borrow)]
    pub name: Str<'a>,
    /// A function call's namespace tool, when the function is one of a namespace's.
    #[serde(default, borrow)]
    pub namespace: Str<'a>,
    /// A function call's arguments (JSON text).
    #[serde(default, borrow)]
    pub arguments: Str<'a>,
    /// A custom tool call's input (free text).
    #[serde(default, borrow)]
    pub input: Str<'a>,
    /// A call output's output: a string or content parts.
    #[serde(default, borrow)]
    pub output: Option<Shape<'a, Obj<PartIn<'a>>>>,
}

/// A content part: `input_text` / `output_text` (`text`), `refusal` (`refusal`),
/// `input_image` (`image_url`, or `file_id`), `input_file`, ...
#[derive(Debug, Default, Deserialize)]
pub struct PartIn<'a> {
    #[serde(default, rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(default, borrow)]
    pub text: Str<'a>,
    #[serde(default, borrow)]
    pub refusal: Str<'a>,
    #[serde(default, borrow)]
    pub image_url: Str<'a>,
    #[serde(default, borrow)]
    pub file_id: Str<'a>,
}

// ---------------------------------------------------------------------------------------------
// Written to the client

/// A `response` object. The request's settings are repeated as OpenAI does (the SDKs read
/// them): see [`Echo`].
#[derive(Debug, Clone, Serialize)]
pub struct ResponseOut<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created_at: u64,
    /// `in_progress`, `completed`, `incomplete` or `failed`.
    pub status: &'static str,
    pub error: Option<ErrorOut<'a>>,
    pub incomplete_details: Option<IncompleteOut>,
    pub model: &'a str,
    pub output: &'a [ItemOut],
    pub usage: Option<UsageOut>,
    #[serde(flatten)]
    pub echo: &'a Echo,
}

/// The request's settings as a `response` repeats them (`null` or OpenAI's default when the
/// request left them out).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Echo {
    pub instructions: Value,
    pub max_output_tokens: Value,
    pub metadata: Value,
    pub parallel_tool_calls: bool,
    pub previous_response_id: Value,
    pub reasoning: Value,
    pub store: bool,
    pub temperature: Value,
    pub text: Value,
    pub tool_choice: Value,
    pub tools: Value,
    pub top_p: Value,
    pub truncation: &'static str,
    pub user: Value,
}

/// `error` of a failed response.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorOut<'a> {
    pub code: Cow<'a, str>,
    pub message: Cow<'a, str>,
}

/// `incomplete_details`: `max_output_tokens` or `content_filter`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct IncompleteOut {
    pub reason: &'static str,
}

/// Responses usage: `input_tokens` include the cached ones, `output_tokens` the reasoning
/// ones (as in OpenAI's answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UsageOut {
    pub input_tokens: i64,
    pub input_tokens_details: InputDetails,
    pub output_tokens: i64,
    pub output_tokens_details: OutputDetails,
    pub total_tokens: i64,
}

/// `usage.input_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct InputDetails {
    pub cached_tokens: i64,
}

/// `usage.output_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OutputDetails {
    pub reasoning_tokens: i64,
}

impl From<&crate::usage::Usage> for UsageOut {
    fn from(u: &crate::usage::Usage) -> Self {
        UsageOut {
            input_tokens: u.prompt_tokens,
            input_tokens_details: InputDetails {
                cached_tokens: u.cached_tokens.saturating_add(u.cached_read_tokens),
            },
            output_tokens: u.completion_tokens,
            output_tokens_details: OutputDetails {
                reasoning_tokens: u.reasoning_tokens,
            },
            total_tokens: u.total_tokens(),
        }
    }
}

/// An output item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ItemOut {
    Reasoning {
        id: String,
        summary: Vec<SummaryOut>,
    },
    Message {
        id: String,
        status: &'static str,
        role: &'static str,
        content: Vec<PartOut>,
    },
    FunctionCall {
        id: String,
        status: &'static str,
        call_id: String,
        name: String,
        /// The namespace tool the function belongs to (Codex groups tools so).
        #[serde(skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        arguments: String,
    },
    CustomToolCall {
        id: String,
        status: &'static str,
        call_id: String,
        name: String,
        input: String,
    },
}

impl ItemOut {
    /// The item's `id`.
    pub fn id(&self) -> &str {
        match self {
            ItemOut::Reasoning { id, .. }
            | ItemOut::Message { id, .. }
            | ItemOut::FunctionCall { id, .. }
            | ItemOut::CustomToolCall { id, .. } => id,
        }
    }
}

/// A reasoning item's summary part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SummaryOut {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: String,
}

impl SummaryOut {
    pub fn new(text: String) -> Self {
        SummaryOut {
            kind: "summary_text",
            text,
        }
    }
}

/// A message's content part: `output_text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartOut {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: String,
    pub annotations: [(); 0],
}

impl PartOut {
    pub fn text(text: String) -> Self {
        PartOut {
            kind: "output_text",
            text,
            annotations: [],
        }
    }
}

/// A stream event: its kind and fields, and its `sequence_number`.
#[derive(Debug, Clone, Serialize)]
pub struct EventOut<'a> {
    #[serde(flatten)]
    pub kind: EventKind<'a>,
    pub sequence_number: u64,
}

/// The events of a Responses stream (`type` is the SSE event name).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type")]
pub enum EventKind<'a> {
    #[serde(rename = "response.created")]
    Created { response: ResponseOut<'a> },
    #[serde(rename = "response.in_progress")]
    InProgress { response: ResponseOut<'a> },
    #[serde(rename = "response.completed")]
    Completed { response: ResponseOut<'a> },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: ResponseOut<'a> },
    #[serde(rename = "response.failed")]
    Failed { response: ResponseOut<'a> },
    #[serde(rename = "response.output_item.added")]
    OutputItemAdded {
        output_index: usize,
        item: &'a ItemOut,
    },
    #[serde(rename = "response.output_item.done")]
    OutputItemDone {
        output_index: usize,
        item: &'a ItemOut,
    },
    #[serde(rename = "response.content_part.added")]
    ContentPartAdded {
        item_id: &'a str,
        output_index: usize,
        content_index: usize,
        part: &'a PartOut,
    },
    #[serde(rename = "response.content_part.done")]
    ContentPartDone {
        item_id: &'a str,
        output_index: usize,
        content_index: usize,
        part: &'a PartOut,
    },
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta {
        item_id: &'a str,
        output_index: usize,
        content_index: usize,
        delta: &'a str,
        logprobs: [(); 0],
    },
    #[serde(rename = "response.output_text.done")]
    OutputTextDone {
        item_id: &'a str,
        output_index: usize,
        content_index: usize,
        text: &'a str,
        logprobs: [(); 0],
    },
    #[serde(rename = "response.reasoning_summary_part.added")]
    ReasoningSummaryPartAdded {
        item_id: &'a str,
        output_index: usize,
        summary_index: usize,
        part: &'a SummaryOut,
    },
    #[serde(rename = "response.reasoning_summary_part.done")]
    ReasoningSummaryPartDone {
        item_id: &'a str,
        output_index: usize,
        summary_index: usize,
        part: &'a SummaryOut,
    },
    #[serde(rename = "response.reasoning_summary_text.delta")]
    ReasoningSummaryTextDelta {
        item_id: &'a str,
        output_index: usize,
        summary_index: usize,
        delta: &'a str,
    },
    #[serde(rename = "response.reasoning_summary_text.done")]
    ReasoningSummaryTextDone {
        item_id: &'a str,
        output_index: usize,
        summary_index: usize,
        text: &'a str,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    FunctionCallArgumentsDelta {
        item_id: &'a str,
        output_index: usize,
        delta: &'a str,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    FunctionCallArgumentsDone {
        item_id: &'a str,
        output_index: usize,
        name: &'a str,
        arguments: &'a str,
    },
    #[serde(rename = "response.custom_tool_call_input.delta")]
    CustomToolCallInputDelta {
        item_id: &'a str,
        output_index: usize,
        delta: &'a str,
    },
    #[serde(rename = "response.custom_tool_call_input.done")]
    CustomToolCallInputDone {
        item_id: &'a str,
        output_index: usize,
        input: &'a str,
    },
}

impl EventKind<'_> {
    /// The event's `type`, which is also its SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Created { .. } => "response.created",
            EventKind::InProgress { .. } => "response.in_progress",
            EventKind::Completed { .. } => "response.completed",
            EventKind::Incomplete { .. } => "response.incomplete",
            EventKind::Failed { .. } => "response.failed",
            EventKind::OutputItemAdded { .. } => "response.output_item.added",
            EventKind::OutputItemDone { .. } => "response.output_item.done",
            EventKind::ContentPartAdded { .. } => "response.content_part.added",
            EventKind::ContentPartDone { .. } => "response.content_part.done",
            EventKind::OutputTextDelta { .. } => "response.output_text.delta",
            EventKind::OutputTextDone { .. } => "response.output_text.done",
            EventKind::ReasoningSummaryPartAdded { .. } => "response.reasoning_summary_part.added",
            EventKind::ReasoningSummaryPartDone { .. } => "response.reasoning_summary_part.done",
            EventKind::ReasoningSummaryTextDelta { .. } => "response.reasoning_summary_text.delta",
            EventKind::ReasoningSummaryTextDone { .. } => "response.reasoning_summary_text.done",
            EventKind::FunctionCallArgumentsDelta { .. } => {
                "response.function_call_arguments.delta"
            }
            EventKind::FunctionCallArgumentsDone { .. } => "response.function_call_arguments.done",
            EventKind::CustomToolCallInputDelta { .. } => "response.custom_tool_call_input.delta",
            EventKind::CustomToolCallInputDone { .. } => "response.custom_tool_call_input.done",
        }
    }
}
