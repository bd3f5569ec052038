//! Anthropic Messages clients (`/v1/messages`) on OpenAI-protocol channels (OpenAI compatible,
//! Azure): the reverse of the Anthropic adapter. The Messages request becomes an OpenAI chat
//! request ([`chat_request`]); the `chat.completion` answer becomes an Anthropic `message`
//! ([`answer`]) and the `chat.completion.chunk` stream becomes Anthropic's event sequence
//! ([`MessagesStream`]). Usage is billed from the OpenAI answer or stream as for OpenAI clients.
//! See `docs/providers.md` for the field-by-field mapping.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::bridge::{ChunkStream, Chunks};
use crate::error::RelayError;
use crate::provider::{Answer, UpstreamFailure};
use crate::providers::openai::invalid_answer;
use crate::request::RelayRequest;
use crate::usage::Usage;
use crate::wire::anthropic::{
    BlockIn, MessageIn, MessagesRequest, TextBlockIn, ToolChoiceIn, ToolIn,
};
use crate::wire::anthropic::{
    BlockOut, DeltaOut, ErrorOut, EventOut, MessageOut, StopOut, UsageOut,
};
use crate::wire::openai::{
    ChatContent, ChatFunction, ChatMessage, ChatPart, ChatRequest, ChatResponse, ChatTool,
    ChatToolCall, ChatToolCallFunction, ChatToolChoice, ImageUrl, NamedFunction, ToolCallIn,
};
use crate::wire::{Obj, Shape};

fn invalid(msg: impl Into<String>) -> RelayError {
    RelayError::InvalidRequest(msg.into())
}

/// The OpenAI chat request (endpoint chat completions, same model: the channel's model mapping
/// is applied when it is sent) for a Messages request.
pub fn chat_request(req: &RelayRequest) -> Result<RelayRequest, RelayError> {
    if !req.body.is_object() {
        return Err(invalid("the request body must be a JSON object"));
    }
    let input = MessagesRequest::deserialize(&req.body)
        .map_err(|e| invalid(format!("the request body cannot be read: {e}")))?;
    let mut messages: Vec<ChatMessage<'_>> = Vec::new();
    let system = match input.system {
        None | Some(Shape::Null) => String::new(),
        Some(Shape::Str(s)) => s.into_owned(),
        Some(Shape::Arr(blocks)) => texts(&blocks).collect::<Vec<_>>().join("\n\n"),
        Some(Shape::Other) => {
            return Err(invalid(
                "system must be a string or an array of text blocks",
            ))
        }
    };
    if !system.is_empty() {
        messages.push(ChatMessage::text("system", system.into()));
    }
    let Some(Shape::Arr(turns)) = input.messages else {
        return Err(invalid("messages must be an array"));
    };
    for m in turns {
        turn_messages(m.or_empty(), &mut messages)?;
    }
    let tools = chat_tools(input.tools)?;
    let (tool_choice, parallel_tool_calls) = if tools.is_empty() {
        (None, None)
    } else {
        chat_tool_choice(input.tool_choice)
    };
    let reasoning_effort = reasoning_effort(input.output_config.as_ref(), input.thinking.as_ref());
    let body = ChatRequest {
        reasoning_effort,
        stop: input.stop_sequences.filter(Value::is_array),
        temperature: input.temperature.filter(Value::is_number),
        top_p: input.top_p.filter(Value::is_number),
        user: input.metadata.0.and_then(|m| m.user_id.0),
        tools,
        tool_choice,
        parallel_tool_calls,
        ..crate::bridge::chat_base(req, messages)
    };
    Ok(crate::bridge::chat(req, crate::bridge::chat_json(&body)?))
}

/// The texts of text blocks (blocks without one left out).
fn texts<'b>(blocks: &'b [Obj<TextBlockIn<'_>>]) -> impl Iterator<Item = &'b str> {
    blocks
        .iter()
        .filter_map(|b| b.0.as_ref().and_then(|b| b.text.as_str()))
}

/// The chat messages of one turn.
fn turn_messages<'a>(m: MessageIn<'a>, out: &mut Vec<ChatMessage<'a>>) -> Result<(), RelayError> {
    let role = m.role.as_str().unwrap_or_default();
    match (role, m.content) {
        ("user", Some(Shape::Str(s))) => out.push(ChatMessage::text("user", s)),
        ("assistant", Some(Shape::Str(s))) => out.push(ChatMessage::text("assistant", s)),
        ("user", Some(Shape::Arr(blocks))) => user_messages(blocks, out)?,
        ("assistant", Some(Shape::Arr(blocks))) => out.push(assistant_message(blocks)?),
        // A system turn within the conversation (Claude Code's reminders): a system message
        // where it stands.
        ("system", Some(Shape::Str(s))) => {
            if !s.is_empty() {
                out.push(ChatMessage::text("system", s));
            }
        }
        ("system", Some(Shape::Arr(blocks))) => {
            let text = blocks
                .iter()
                .filter_map(|b| b.0.as_ref().and_then(|b| b.text.as_str()))
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n");
            if !text.is_empty() {
                out.push(ChatMessage::text("system", text.into()));
            }
        }
        ("user" | "assistant" | "system", _) => {
            return Err(invalid("message content must be a string or an array"))
        }
        (other, _) => return Err(invalid(format!("unsupported message role {other:?}"))),
    }
    Ok(())
}

/// The request's custom tools as chat functions (server tools are refused).
fn chat_tools<'a>(
    tools: Option<Shape<'a, Obj<ToolIn<'a>>>>,
) -> Result<Vec<ChatTool<'a>>, RelayError> {
    let Some(Shape::Arr(list)) = tools else {
        return Ok(Vec::new());
    };
    list.into_iter()
        .map(|t| {
            let t = t.or_empty();
            let kind = t.kind.as_str();
            if !matches!(kind, None | Some("custom")) {
                return Err(invalid(format!(
                    "server tools ({}) are not supported by this model",
                    kind.unwrap_or_default()
                )));
            }
            Ok(ChatTool {
                kind: "function",
                function: ChatFunction {
                    name: t.name.unwrap_or_default(),
                    description: t.description.0,
                    parameters: t
                        .input_schema
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                },
            })
        })
        .collect()
}

/// The chat `tool_choice` and `parallel_tool_calls` for the request's `tool_choice` (sent
/// only beside tools).
fn chat_tool_choice(choice: Obj<ToolChoiceIn<'_>>) -> (Option<ChatToolChoice<'_>>, Option<bool>) {
    let Some(choice) = choice.0 else {
        return (None, None);
    };
    let tool_choice = match choice.kind.as_str() {
        Some("auto") => Some(ChatToolChoice::Mode("auto")),
        Some("any") => Some(ChatToolChoice::Mode("required")),
        Some("none") => Some(ChatToolChoice::Mode("none")),
        Some("tool") => choice.name.0.map(|name| ChatToolChoice::Function {
            kind: "function",
            function: NamedFunction { name },
        }),
        _ => None,
    };
    let parallel_tool_calls =
        (choice.disable_parallel_tool_use.get() == Some(&true)).then_some(false);
    (tool_choice, parallel_tool_calls)
}

/// The chat `reasoning_effort` for a Messages request: `output_config.effort` (`low`,
/// `medium`, `high`; `max` is `high`), else from extended thinking's `budget_tokens` (up to 2048
/// `low`, up to 16384 `medium`, more `high`; adaptive thinking `medium`). `None` without either,
/// or with thinking disabled. The beta-only fields that have no chat meaning
/// (`context_management`, cache scopes) are not read at all.
fn reasoning_effort(
    output_config: Option<&Value>,
    thinking: Option<&Value>,
) -> Option<&'static str> {
    let effort = output_config
        .and_then(|c| c.get("effort"))
        .and_then(Value::as_str)
        .and_then(|e| match e {
            "low" | "minimal" => Some("low"),
            "medium" => Some("medium"),
            "high" | "max" | "xhigh" => Some("high"),
            _ => None,
        });
    if effort.is_some() {
        return effort;
    }
    let thinking = thinking?;
    match thinking.get("type").and_then(Value::as_str)? {
        "enabled" => Some(
            match thinking.get("budget_tokens").and_then(Value::as_i64) {
                Some(b) if b <= 2048 => "low",
                Some(b) if b > 16384 => "high",
                _ => "medium",
            },
        ),
        "adaptive" => Some("medium"),
        _ => None,
    }
}

/// A user turn's blocks: its `tool_result` blocks as `tool` messages first (OpenAI wants them
/// right after the assistant's calls), then one user message of the other blocks.
fn user_messages<'a>(
    blocks: Vec<Obj<BlockIn<'a>>>,
    out: &mut Vec<ChatMessage<'a>>,
) -> Result<(), RelayError> {
    let mut parts = Vec::new();
    for b in blocks {
        let b = b.or_empty();
        match b.kind.as_str() {
            Some("text") => {
                let text = b.text.0.unwrap_or_default();
                parts.push(ChatPart::Text { text });
            }
            Some("image") => {
                let s = b.source.or_empty();
                let url: Cow<'_, str> = match s.kind.as_str() {
                    Some("base64") => format!(
                        "data:{};base64,{}",
                        s.media_type.as_str().unwrap_or("image/png"),
                        s.data.as_str().unwrap_or_default()
                    )
                    .into(),
                    Some("url") => s.url.0.unwrap_or_default(),
                    _ => return Err(invalid("an image needs a base64 or url source")),
                };
                parts.push(ChatPart::ImageUrl {
                    image_url: ImageUrl { url },
                });
            }
            Some("tool_result") => {
                let id = b
                    .tool_use_id
                    .0
                    .ok_or_else(|| invalid("a tool_result needs tool_use_id"))?;
                let content: Cow<'_, str> = match b.content {
                    Some(Shape::Str(s)) => s,
                    Some(Shape::Arr(parts)) => texts(&parts).collect::<String>().into(),
                    _ => Cow::Borrowed(""),
                };
                out.push(ChatMessage {
                    role: "tool",
                    content: Some(ChatContent::Text(content)),
                    tool_call_id: Some(id),
                    tool_calls: Vec::new(),
                });
            }
            other => {
                return Err(invalid(format!(
                    "content blocks of type {} are not supported by this model",
                    other.unwrap_or("(none)")
                )))
            }
        }
    }
    if !parts.is_empty() {
        out.push(ChatMessage {
            role: "user",
            content: Some(ChatContent::Parts(parts)),
            tool_call_id: None,
            tool_calls: Vec::new(),
        });
    }
    Ok(())
}

/// An assistant turn: text blocks as `content`, `tool_use` blocks as `tool_calls` (thinking
/// blocks are dropped: OpenAI takes no reasoning back).
fn assistant_message(blocks: Vec<Obj<BlockIn<'_>>>) -> Result<ChatMessage<'_>, RelayError> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for b in blocks {
        let b = b.or_empty();
        match b.kind.as_str() {
            Some("text") => text.push_str(b.text.as_str().unwrap_or("")),
            Some("tool_use") => calls.push(ChatToolCall {
                id: b.id.unwrap_or_default(),
                kind: "function",
                function: ChatToolCallFunction {
                    name: b.name.unwrap_or_default(),
                    arguments: b
                        .input
                        .map(|i| i.to_string())
                        .unwrap_or_else(|| "{}".into()),
                },
            }),
            Some("thinking" | "redacted_thinking") => {}
            other => {
                return Err(invalid(format!(
                    "content blocks of type {} are not supported by this model",
                    other.unwrap_or("(none)")
                )))
            }
        }
    }
    let content = if text.is_empty() && !calls.is_empty() {
        None
    } else {
        Some(ChatContent::Text(text.into()))
    };
    Ok(ChatMessage {
        role: "assistant",
        content,
        tool_call_id: None,
        tool_calls: calls,
    })
}

/// Anthropic's stop reason for an OpenAI finish reason.
pub fn stop_reason(finish: Option<&str>) -> &'static str {
    match finish {
        Some("length") => "max_tokens",
        Some("tool_calls" | "function_call") => "tool_use",
        Some("content_filter") => "refusal",
        _ => "end_turn",
    }
}

/// An Anthropic `usage` object for OpenAI usage: the cached prompt tokens are cache reads
/// (Anthropic's `input_tokens` excludes them).
fn anthropic_usage(u: Option<&Usage>) -> UsageOut {
    let u = u.copied().unwrap_or_default();
    let cached = u.cached_tokens.saturating_add(u.cached_read_tokens);
    UsageOut {
        input_tokens: u
            .prompt_tokens
            .saturating_sub(cached)
            .saturating_sub(u.cached_write_tokens)
            .max(0),
        cache_creation_input_tokens: u.cached_write_tokens,
        cache_read_input_tokens: cached,
        output_tokens: u.completion_tokens,
    }
}

/// `msg_` + the OpenAI id without its `chatcmpl-` prefix.
fn message_id(id: Option<&str>) -> String {
    let id = id.unwrap_or("relay");
    format!("msg_{}", id.strip_prefix("chatcmpl-").unwrap_or(id))
}

/// A `chat.completion` as an Anthropic `message`; the usage to bill is OpenAI's.
pub fn answer(req: &RelayRequest, body: &[u8]) -> Result<Answer, UpstreamFailure> {
    let v = std::str::from_utf8(body)
        .ok()
        .and_then(ChatResponse::read)
        .ok_or_else(|| invalid_answer("the answer is not JSON"))?;
    let choice = v
        .first_choice()
        .ok_or_else(|| invalid_answer("the answer has no choices"))?;
    let m = choice.message();
    let mut content = Vec::new();
    if let Some(r) = m.reasoning_content.as_str().filter(|r| !r.is_empty()) {
        content.push(BlockOut::Thinking {
            thinking: r.into(),
            signature: "",
        });
    }
    let text = crate::translate::content_str(m.content.as_ref());
    if !text.is_empty() {
        content.push(BlockOut::Text { text });
    }
    let calls = m.tool_calls();
    for c in &calls {
        let f = c.function();
        let input = serde_json::from_str::<Value>(f.arguments.as_str().unwrap_or(""))
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        content.push(BlockOut::ToolUse {
            id: c.id.0.clone(),
            name: f.name.0,
            input,
        });
    }
    let usage = v.usage();
    let id = message_id(v.id.as_str());
    let out = MessageOut {
        id: &id,
        kind: "message",
        role: "assistant",
        model: v.model.as_str().unwrap_or(&req.model),
        content,
        stop_reason: Some(stop_reason(choice.finish_reason.as_str())),
        stop_sequence: None,
        usage: anthropic_usage(usage.as_ref()),
    };
    Ok(Answer {
        body: serde_json::to_vec(&out).unwrap_or_default(),
        usage,
    })
}

/// The kind of the content block being streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Text,
    Thinking,
    /// A tool call, by its OpenAI `tool_calls[].index`.
    Tool(u64),
}

/// Turns an OpenAI `chat.completion.chunk` stream into Anthropic's events: `message_start`,
/// one `content_block_start` / `content_block_delta`s / `content_block_stop` per text,
/// thinking or tool-use block, `message_delta` (stop reason and usage) and `message_stop` at
/// `[DONE]` (or at a clean end after a finish reason); an `{"error"}` event becomes an
/// Anthropic `error` event.
#[derive(Debug)]
pub struct MessagesStream {
    chunks: Chunks,
    model: String,
    started: bool,
    /// The open block and its index.
    open: Option<(Block, usize)>,
    next_index: usize,
    stopped: bool,
}

impl MessagesStream {
    pub fn new(model: &str) -> Self {
        MessagesStream {
            chunks: Chunks::default(),
            model: model.to_owned(),
            started: false,
            open: None,
            next_index: 0,
            stopped: false,
        }
    }

    fn write(out: &mut Vec<u8>, event: &EventOut<'_>) {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(event.name().as_bytes());
        out.push(b'\n');
        crate::sse::write_data(out, event);
    }

    fn start(&mut self, v: &ChatResponse<'_>, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        if let Some(m) = v.model.as_str() {
            self.model = m.to_owned();
        }
        let id = message_id(v.id.as_str());
        let message = MessageOut {
            id: &id,
            kind: "message",
            role: "assistant",
            model: &self.model,
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: anthropic_usage(None),
        };
        Self::write(out, &EventOut::MessageStart { message });
    }

    fn close_block(&mut self, out: &mut Vec<u8>) {
        if let Some((_, index)) = self.open.take() {
            Self::write(out, &EventOut::ContentBlockStop { index });
        }
    }

    /// Makes `block` the open block (closing another), starting it with `start` when new.
    fn open_block(&mut self, block: Block, start: BlockOut<'_>, out: &mut Vec<u8>) -> usize {
        if let Some((b, index)) = self.open {
            if b == block {
                return index;
            }
        }
        self.close_block(out);
        let index = self.next_index;
        self.next_index += 1;
        self.open = Some((block, index));
        Self::write(
            out,
            &EventOut::ContentBlockStart {
                index,
                content_block: start,
            },
        );
        index
    }

    fn delta(out: &mut Vec<u8>, index: usize, delta: DeltaOut<'_>) {
        Self::write(out, &EventOut::ContentBlockDelta { index, delta });
    }

    fn stop(&mut self, out: &mut Vec<u8>) {
        if self.stopped || !self.started {
            return;
        }
        self.stopped = true;
        self.close_block(out);
        Self::write(
            out,
            &EventOut::MessageDelta {
                delta: StopOut {
                    stop_reason: stop_reason(self.chunks.finish.as_deref()),
                    stop_sequence: None,
                },
                usage: anthropic_usage(self.chunks.usage.as_ref()),
            },
        );
        Self::write(out, &EventOut::MessageStop);
    }
}

impl ChunkStream for MessagesStream {
    fn chunks(&mut self) -> &mut Chunks {
        &mut self.chunks
    }

    fn done(&mut self, out: &mut Vec<u8>) {
        self.stop(out);
    }

    fn error(&mut self, error: &Value, out: &mut Vec<u8>) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the upstream stream failed");
        Self::write(
            out,
            &EventOut::Error {
                error: ErrorOut {
                    kind: "api_error",
                    message,
                },
            },
        );
    }

    fn chunk(&mut self, chunk: &ChatResponse<'_>, out: &mut Vec<u8>) {
        self.start(chunk, out);
    }

    fn reasoning(&mut self, text: &str, out: &mut Vec<u8>) {
        let start = BlockOut::Thinking {
            thinking: "".into(),
            signature: "",
        };
        let i = self.open_block(Block::Thinking, start, out);
        Self::delta(out, i, DeltaOut::ThinkingDelta { thinking: text });
    }

    fn text(&mut self, text: &str, out: &mut Vec<u8>) {
        let start = BlockOut::Text { text: "".into() };
        let i = self.open_block(Block::Text, start, out);
        Self::delta(out, i, DeltaOut::TextDelta { text });
    }

    fn tool_call(&mut self, call: &ToolCallIn<'_>, out: &mut Vec<u8>) {
        let tool = call.index.get().copied().unwrap_or(0);
        let f = call.function();
        let start = BlockOut::ToolUse {
            id: call.id.0.clone(),
            name: f.name.0.clone(),
            input: json!({}),
        };
        let i = self.open_block(Block::Tool(tool), start, out);
        if let Some(args) = f.arguments.as_str().filter(|a| !a.is_empty()) {
            Self::delta(out, i, DeltaOut::InputJsonDelta { partial_json: args });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::Endpoint;
    use crate::sse::EventTranslator as _;

    fn messages(body: Value) -> RelayRequest {
        RelayRequest::parse(Endpoint::Messages, body.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn requests_become_chat_requests() {
        let req = messages(json!({
            "model": "gpt-4o", "max_tokens": 100, "system": [{"type": "text", "text": "Be brief."}],
            "stop_sequences": ["END"], "temperature": 0.5, "top_k": 3, "stream": true,
            "metadata": {"user_id": "u1"},
            "tools": [{"name": "lookup", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "Look"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA"}}
                ]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "s"},
                    {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"q": 1}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "found"}]},
                    {"type": "text", "text": "And?"}
                ]}
            ]
        }));
        let chat = chat_request(&req).unwrap();
        assert_eq!(chat.endpoint, Endpoint::ChatCompletions);
        assert_eq!(
            chat.body,
            json!({
                "model": "gpt-4o", "max_tokens": 100, "stop": ["END"], "temperature": 0.5,
                "user": "u1", "stream": true, "stream_options": {"include_usage": true},
                "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
                "tool_choice": "required", "parallel_tool_calls": false,
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": [
                        {"type": "text", "text": "Look"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}
                    ]},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "t1", "content": "found"},
                    {"role": "user", "content": [{"type": "text", "text": "And?"}]}
                ]
            })
        );
        let bad = messages(json!({"model": "m", "max_tokens": 1, "messages": [],
            "tools": [{"type": "web_search_20250305", "name": "web_search"}]}));
        assert!(matches!(
            chat_request(&bad),
            Err(RelayError::InvalidRequest(_))
        ));
    }

    #[test]
    fn answers_become_messages() {
        let req = messages(json!({"model": "gpt-4o", "max_tokens": 10, "messages": []}));
        let body = json!({
            "id": "chatcmpl-abc", "object": "chat.completion", "model": "gpt-4o-2024",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Let me look.",
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}}]
            }}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 8}}
        });
        let a = answer(&req, body.to_string().as_bytes()).unwrap();
        let v: Value = serde_json::from_slice(&a.body).unwrap();
        assert_eq!(
            v,
            json!({
                "id": "msg_abc", "type": "message", "role": "assistant", "model": "gpt-4o-2024",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"q": "x"}}
                ],
                "stop_reason": "tool_use", "stop_sequence": null,
                "usage": {"input_tokens": 12, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 8, "output_tokens": 5}
            })
        );
        let u = a.usage.unwrap();
        assert_eq!((u.prompt_tokens, u.cached_tokens), (20, 8));
    }

    fn events(text: &str) -> Vec<(String, Value)> {
        text.split("\n\n")
            .filter(|e| !e.trim().is_empty())
            .map(|e| {
                let mut lines = e.lines();
                let name = lines.next().unwrap().strip_prefix("event: ").unwrap();
                let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
                (name.to_owned(), serde_json::from_str(data).unwrap())
            })
            .collect()
    }

    #[test]
    fn streams_become_event_sequences_at_any_split() {
        let chunk = |delta: Value, finish: Value| {
            format!(
                "data: {}\n\n",
                json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            )
        };
        let mut upstream = String::new();
        upstream += &chunk(json!({"role": "assistant", "content": ""}), Value::Null);
        upstream += &chunk(json!({"content": "Hi"}), Value::Null);
        upstream += &chunk(json!({"content": " there"}), Value::Null);
        upstream += &chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": ""}}]}),
            Value::Null,
        );
        upstream += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\":"}}]}),
            Value::Null,
        );
        upstream += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
            Value::Null,
        );
        upstream += &chunk(json!({}), json!("tool_calls"));
        upstream += "data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\n";
        upstream += "data: [DONE]\n\n";
        let bytes = upstream.as_bytes();
        let mut whole = None;
        for split in 0..bytes.len() {
            let mut s = MessagesStream::new("gpt-4o");
            let mut out = Vec::new();
            s.feed(&bytes[..split], &mut out);
            s.feed(&bytes[split..], &mut out);
            s.finish(&mut out);
            let text = String::from_utf8(out).unwrap();
            match &whole {
                None => whole = Some(text),
                Some(w) => assert_eq!(&text, w, "split at {split}"),
            }
        }
        let ev = events(whole.as_deref().unwrap());
        let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(ev[0].1["message"]["id"], "msg_1");
        assert_eq!(
            ev[2].1["delta"],
            json!({"type": "text_delta", "text": "Hi"})
        );
        assert_eq!(
            ev[5].1["content_block"],
            json!({"type": "tool_use", "id": "call_1", "name": "lookup", "input": {}})
        );
        assert_eq!(ev[5].1["index"], 1);
        assert_eq!(ev[7].1["delta"]["partial_json"], "1}");
        assert_eq!(ev[9].1["delta"]["stop_reason"], "tool_use");
        assert_eq!(ev[9].1["usage"]["input_tokens"], 9);
        assert_eq!(ev[9].1["usage"]["output_tokens"], 4);
    }

    #[test]
    fn stream_errors_become_error_events() {
        let mut s = MessagesStream::new("m");
        let mut out = Vec::new();
        s.feed(
            b"data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n",
            &mut out,
        );
        s.finish(&mut out);
        let ev = events(std::str::from_utf8(&out).unwrap());
        assert_eq!(ev.len(), 1);
        assert_eq!(
            ev[0],
            (
                "error".to_owned(),
                json!({"type": "error", "error": {"type": "api_error", "message": "boom"}})
            )
        );
    }
}
