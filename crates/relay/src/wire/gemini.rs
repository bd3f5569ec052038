//! Gemini `generateContent` answers as read from the upstream: a whole answer, or one event of
//! a `streamGenerateContent?alt=sse` stream (the same shape, possibly wrapped in a one-element
//! array, or an `{"error": ...}`). Fields are lenient ([`Str`], [`Lenient`]). And the requests
//! sent upstream for OpenAI chat clients ([`GenerateContentRequest`]).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{from_object, Lenient, Str};

/// A `GenerateContentResponse`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentResponse<'a> {
    /// The candidates; only the first is read ([`GenerateContentResponse::candidate`]).
    #[serde(default, borrow)]
    pub candidates: Option<&'a RawValue>,
    #[serde(default)]
    pub usage_metadata: Option<Value>,
    #[serde(default, borrow)]
    pub model_version: Str<'a>,
    #[serde(default, borrow)]
    pub response_id: Str<'a>,
    #[serde(default, borrow)]
    pub prompt_feedback: Option<&'a RawValue>,
    /// An error event (present even when `null`).
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Value>,
}

/// `Some` for any value, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `Some` for any raw value, `null` included.
fn present_raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Reads a nested object leniently: the default when absent or malformed.
fn nested<'a, T: Deserialize<'a> + Default>(raw: Option<&'a RawValue>) -> T {
    raw.and_then(|r| from_object(r.get())).unwrap_or_default()
}

impl<'a> GenerateContentResponse<'a> {
    /// A whole answer: an object; other JSON reads as an answer without candidates; `None`
    /// when the body is not JSON.
    pub fn read(body: &'a [u8]) -> Option<Self> {
        let text = std::str::from_utf8(body).ok()?;
        from_object(text).or_else(|| {
            serde_json::from_str::<serde::de::IgnoredAny>(text)
                .ok()
                .map(|_| GenerateContentResponse::default())
        })
    }

    /// One stream event's data: an object, or a one-element array of one. Other JSON reads as
    /// an empty response (it still counts as an event); `None` when the data is not JSON.
    pub fn read_event(data: &'a str) -> Option<Self> {
        if let Some(v) = from_object(data) {
            return Some(v);
        }
        if let Ok(items) = serde_json::from_str::<Vec<&'a RawValue>>(data) {
            return Some(match items.as_slice() {
                [one] => from_object(one.get()).unwrap_or_default(),
                _ => GenerateContentResponse::default(),
            });
        }
        serde_json::from_str::<serde::de::IgnoredAny>(data)
            .ok()
            .map(|_| GenerateContentResponse::default())
    }

    /// The first candidate; `None` when there is none (or it is `null` or not an object).
    pub fn candidate(&self) -> Option<Candidate<'a>> {
        let list: Vec<&'a RawValue> = serde_json::from_str(self.candidates?.get()).ok()?;
        from_object(list.first()?.get())
    }

    /// The prompt was blocked (`promptFeedback.blockReason` is present).
    pub fn prompt_blocked(&self) -> bool {
        nested::<PromptFeedback<'_>>(self.prompt_feedback)
            .block_reason
            .is_some()
    }
}

/// `promptFeedback`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback<'a> {
    #[serde(default, borrow, deserialize_with = "present_raw")]
    block_reason: Option<&'a RawValue>,
}

/// A candidate: its content's parts and its finish reason.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate<'a> {
    #[serde(default, borrow)]
    pub content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub finish_reason: Str<'a>,
}

/// `content` of a candidate.
#[derive(Debug, Default, Deserialize)]
struct Content<'a> {
    #[serde(default, borrow)]
    parts: Option<&'a RawValue>,
}

impl<'a> Candidate<'a> {
    /// The parts of the content (malformed parts are skipped).
    pub fn parts(&self) -> Vec<Part<'a>> {
        let content: Content<'a> = nested(self.content);
        let raw: Vec<&'a RawValue> = content
            .parts
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or_default();
        raw.into_iter()
            .filter_map(|p| from_object(p.get()))
            .collect()
    }
}

/// A part: text (a thought when `thought` is true) and/or a function call, or the code the
/// code execution tool ran and its result.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part<'a> {
    #[serde(default, borrow)]
    pub text: Str<'a>,
    #[serde(default)]
    pub thought: Lenient<bool>,
    /// Present (any JSON, `null` included) when the part calls a function.
    #[serde(default, borrow, deserialize_with = "present_raw")]
    pub function_call: Option<&'a RawValue>,
    /// `{"language", "code"}`: code the model wrote for the code execution tool.
    #[serde(default, borrow)]
    pub executable_code: Option<&'a RawValue>,
    /// `{"outcome", "output"}`: what running it gave.
    #[serde(default, borrow)]
    pub code_execution_result: Option<&'a RawValue>,
}

/// An `executableCode` or a `codeExecutionResult` (the members either has).
#[derive(Debug, Default, Deserialize)]
pub struct CodeExecution<'a> {
    #[serde(default, borrow)]
    pub language: Str<'a>,
    #[serde(default, borrow)]
    pub code: Str<'a>,
    #[serde(default, borrow)]
    pub outcome: Str<'a>,
    #[serde(default, borrow)]
    pub output: Str<'a>,
}

/// A `functionCall`.
#[derive(Debug, Default, Deserialize)]
pub struct FunctionCall<'a> {
    #[serde(default, borrow)]
    pub id: Str<'a>,
    #[serde(default, borrow)]
    pub name: Str<'a>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    pub args: Option<&'a RawValue>,
}

impl<'a> Part<'a> {
    /// The function call, when the part has one (fields of a malformed one are empty).
    pub fn call(&self) -> Option<FunctionCall<'a>> {
        self.function_call.map(|raw| nested(Some(raw)))
    }

    /// The executed code, when the part has some.
    pub fn executable_code(&self) -> Option<CodeExecution<'a>> {
        self.executable_code.map(|raw| nested(Some(raw)))
    }

    /// The code execution result, when the part has one.
    pub fn code_execution_result(&self) -> Option<CodeExecution<'a>> {
        self.code_execution_result.map(|raw| nested(Some(raw)))
    }
}

impl FunctionCall<'_> {
    /// The arguments as compact JSON text (`{}` when absent).
    pub fn args_json(&self) -> String {
        match self.args {
            Some(raw) => serde_json::from_str::<Value>(raw.get())
                .map(|v| v.to_string())
                .unwrap_or_else(|_| "{}".to_owned()),
            None => "{}".to_owned(),
        }
    }
}

/// A `batchEmbedContents` answer: `{"embeddings": [{"values": [...]}]}`.
#[derive(Debug, Default, Deserialize)]
pub struct EmbedResponse<'a> {
    #[serde(default, borrow)]
    pub embeddings: Option<&'a RawValue>,
}

/// One embedding: its `values`, kept as raw JSON (passed on as they are unless base64 is
/// asked for).
#[derive(Debug, Default, Deserialize)]
pub struct Embedding<'a> {
    /// Present (`null` included) when the upstream wrote it.
    #[serde(default, borrow, deserialize_with = "present_raw")]
    pub values: Option<&'a RawValue>,
}

impl<'a> EmbedResponse<'a> {
    /// Reads an answer; `None` when it is not a JSON object.
    pub fn read(body: &'a [u8]) -> Option<Self> {
        from_object(std::str::from_utf8(body).ok()?)
    }

    /// The embeddings, or `None` when `embeddings` is not an array (one that is not an object
    /// reads as an embedding without values).
    pub fn list(&self) -> Option<Vec<Embedding<'a>>> {
        let raw: Vec<&'a RawValue> = serde_json::from_str(self.embeddings?.get()).ok()?;
        Some(
            raw.into_iter()
                .map(|e| from_object(e.get()).unwrap_or_default())
                .collect(),
        )
    }
}

impl Embedding<'_> {
    /// The values as floats (non-numbers skipped), for base64 encoding.
    pub fn floats(&self) -> Vec<f64> {
        let items: Vec<Value> = self
            .values
            .and_then(|v| serde_json::from_str(v.get()).ok())
            .unwrap_or_default();
        items.iter().filter_map(Value::as_f64).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// generateContent requests sent to Gemini (and Vertex AI), translated from OpenAI chat requests

// The members of every object below are declared in alphabetical order: the bytes are the
// ones the translation wrote when it built a `serde_json::Value`, whose maps are sorted.

/// The `generateContent` request for an OpenAI chat request
/// (`crate::providers::gemini::request`). What the client sent and the relay passes on
/// unchanged is borrowed from its body.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentRequest<'a> {
    pub contents: Vec<RequestContent<'a>>,
    #[serde(skip_serializing_if = "GenerationConfig::is_empty")]
    pub generation_config: GenerationConfig<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<SystemInstruction<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_config: Option<ToolConfig<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<RequestTool<'a>>,
}

/// A turn: `role` `user` or `model`.
#[derive(Debug, Serialize)]
pub struct RequestContent<'a> {
    pub parts: Vec<RequestPart<'a>>,
    pub role: &'static str,
}

/// `systemInstruction`.
#[derive(Debug, Serialize)]
pub struct SystemInstruction<'a> {
    pub parts: Vec<RequestPart<'a>>,
}

/// A part: `{"text"}`, `{"inlineData"}`, `{"fileData"}`, `{"functionCall"}` or
/// `{"functionResponse"}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum RequestPart<'a> {
    Text(Cow<'a, str>),
    InlineData {
        data: &'a str,
        mime_type: &'a str,
    },
    FileData {
        file_uri: &'a str,
        mime_type: &'static str,
    },
    /// `args` an object.
    FunctionCall {
        args: Value,
        name: &'a str,
    },
    FunctionResponse {
        name: &'a str,
        response: FunctionResponse<'a>,
    },
}

/// A function response: the tool message's content when it is a JSON object, else
/// `{"content": text}`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum FunctionResponse<'a> {
    Object(Value),
    Text { content: Cow<'a, str> },
}

/// `generationConfig`: the client's numbers as they are.
#[derive(Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_json_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_mime_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<&'a Value>,
    /// The client's sequences (whatever their items).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<&'a [Value]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_config: Option<ThinkingConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<&'a Value>,
}

impl GenerationConfig<'_> {
    /// Nothing set (the member is then left out).
    pub fn is_empty(&self) -> bool {
        *self == GenerationConfig::default()
    }
}

/// `thinkingConfig`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingConfig {
    pub include_thoughts: bool,
    pub thinking_budget: i64,
}

/// A tool: the client's functions, or a built-in tool of the channel's switches
/// (`{"googleSearch": {}}`, `{"codeExecution": {}}`).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum RequestTool<'a> {
    Functions {
        #[serde(rename = "functionDeclarations")]
        function_declarations: Vec<FunctionDeclaration<'a>>,
    },
    Builtin(Value),
}

/// A function declaration: `parameters` in the schema subset Gemini takes.
#[derive(Debug, Serialize)]
pub struct FunctionDeclaration<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    /// As the client gave it (`null` when absent).
    pub name: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

/// `toolConfig`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolConfig<'a> {
    pub function_calling_config: FunctionCallingConfig<'a>,
}

/// `functionCallingConfig`: `mode` `AUTO`, `ANY` or `NONE`; `ANY` of one function.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionCallingConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_function_names: Option<[&'a str; 1]>,
    pub mode: &'static str,
}
