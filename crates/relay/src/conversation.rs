//! An OpenAI chat request read once for the adapters that translate it into another family's
//! request (Anthropic Messages, for Anthropic, Bedrock and Vertex AI Claude; Gemini
//! `generateContent`, for Gemini and Vertex AI Gemini): [`Conversation`] walks the messages
//! into neutral [`Turn`]s (system and developer texts set aside, user content, assistant text
//! and tool calls, consecutive tool results grouped into one turn) and reads the request's
//! function tools, tool choice and stop sequences. Each adapter renders its wire request from
//! these (`crate::wire::anthropic::RequestBody`, `crate::wire::gemini::GenerateContentRequest`);
//! nothing here is either family's shape, and strings borrow from the request (a content of
//! text parts is their join).
//!
//! The walk refuses what neither family can take (a user message without content, a content
//! part other than text or an image, an image that is neither an http(s) nor a base64 `data:`
//! URL, a tool call without a function or whose arguments are not a JSON object, an unknown
//! role), each at the message where it stands: turns are read as the adapter asks for them, so
//! a refusal of the adapter's own (Anthropic's tool message without `tool_call_id`) still comes
//! before one of a later message.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::error::RelayError;
use crate::request::RelayRequest;
use crate::translate::{content_str, parse_data_url};

fn invalid(msg: impl Into<String>) -> RelayError {
    RelayError::InvalidRequest(msg.into())
}

/// A chat request being read: its body, and its messages as an iterator of [`Turn`]s.
#[derive(Debug)]
pub(crate) struct Conversation<'a> {
    /// The request's JSON object.
    body: &'a Map<String, Value>,
    messages: std::slice::Iter<'a, Value>,
    /// The turn (or the refusal) after a group of tool results, read to end the group.
    ahead: Option<Result<Turn<'a>, RelayError>>,
    /// The texts of the system and developer messages read so far, in order (empty ones left
    /// out): complete once the turns are.
    pub system: Vec<Cow<'a, str>>,
}

/// A turn of the conversation.
#[derive(Debug)]
pub(crate) enum Turn<'a> {
    User(UserContent<'a>),
    /// An assistant message with text or tool calls (one with neither is no turn).
    Assistant {
        /// Its text (the text parts joined); may be empty when it has calls.
        text: Cow<'a, str>,
        calls: Vec<ToolCall<'a>>,
    },
    /// Consecutive tool messages (system messages and empty assistant messages between them
    /// do not part them).
    ToolResults(Vec<ToolResult<'a>>),
}

/// A user message's content: a string, or its parts.
#[derive(Debug)]
pub(crate) enum UserContent<'a> {
    Text(&'a str),
    Parts(Vec<UserPart<'a>>),
}

#[derive(Debug)]
pub(crate) enum UserPart<'a> {
    /// A text part (its `text`, empty when absent).
    Text(&'a str),
    Image(Image<'a>),
}

/// An `image_url` part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Image<'a> {
    /// A base64 `data:` URL.
    Inline { media_type: &'a str, data: &'a str },
    /// An http(s) URL.
    Url(&'a str),
}

/// An assistant's tool call.
#[derive(Debug)]
pub(crate) struct ToolCall<'a> {
    /// The call's `id` and its function's `name`, whatever their JSON type (`None` when
    /// absent).
    pub id: Option<&'a Value>,
    pub name: Option<&'a Value>,
    /// The arguments: a JSON object (`{}` for none).
    pub arguments: Value,
}

/// A tool message.
#[derive(Debug)]
pub(crate) struct ToolResult<'a> {
    /// Its `tool_call_id` and `name`, when strings.
    pub call_id: Option<&'a str>,
    pub name: Option<&'a str>,
    /// Its content's text.
    pub content: Cow<'a, str>,
}

/// A function of the request's `tools`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Function<'a> {
    /// Whatever its JSON type (`None` when absent).
    pub name: Option<&'a Value>,
    /// When a string.
    pub description: Option<&'a str>,
    /// The `parameters` schema, when an object.
    pub parameters: Option<&'a Value>,
}

/// `tool_choice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolChoice<'a> {
    Auto,
    Required,
    None,
    /// One named function.
    Function(&'a str),
}

/// One message as read: a turn, a tool result (grouped with the ones next to it), or nothing
/// for the turns (a system text, set aside; an empty assistant message).
enum Read<'a> {
    Turn(Turn<'a>),
    ToolResult(ToolResult<'a>),
    Aside,
}

impl<'a> Conversation<'a> {
    /// The chat request of `req`: refused unless its body is an object with a `messages`
    /// array.
    pub fn of(req: &'a RelayRequest) -> Result<Self, RelayError> {
        let body = req
            .body
            .as_object()
            .ok_or_else(|| invalid("the request body must be a JSON object"))?;
        let messages = body
            .get("messages")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("messages must be an array"))?;
        Ok(Conversation {
            body,
            messages: messages.iter(),
            ahead: None,
            system: Vec::new(),
        })
    }

    /// The request's member `key`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.body.get(key)
    }

    /// The request's member `key` when it is a number.
    pub fn number(&self, key: &str) -> Option<&'a Value> {
        self.get(key).filter(|v| v.is_number())
    }

    /// The request's member `key` when it is a string.
    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Value::as_str)
    }

    /// The request's JSON object.
    pub fn body(&self) -> &'a Map<String, Value> {
        self.body
    }

    /// `stop` as a list of sequences: a non-empty string as a list of one, a non-empty list as
    /// it is (whatever its items).
    pub fn stop(&self) -> Option<&'a [Value]> {
        match self.get("stop")? {
            s @ Value::String(text) if !text.is_empty() => Some(std::slice::from_ref(s)),
            Value::Array(list) if !list.is_empty() => Some(list),
            _ => None,
        }
    }

    /// The functions of `tools` (its entries with a `function`; none when `tools` is not a
    /// list).
    pub fn functions(&self) -> impl Iterator<Item = Function<'a>> {
        self.get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("function"))
            .map(|f| Function {
                name: f.get("name"),
                description: f.get("description").and_then(Value::as_str),
                parameters: f.get("parameters").filter(|p| p.is_object()),
            })
    }

    /// `tool_choice`: `auto`, `required`, `none` or a named function (`None` for anything
    /// else).
    pub fn tool_choice(&self) -> Option<ToolChoice<'a>> {
        match self.get("tool_choice")? {
            Value::String(s) => match s.as_str() {
                "auto" => Some(ToolChoice::Auto),
                "required" => Some(ToolChoice::Required),
                "none" => Some(ToolChoice::None),
                _ => None,
            },
            Value::Object(o) => o
                .get("function")
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .map(ToolChoice::Function),
            _ => None,
        }
    }

    /// One message.
    fn read(&mut self, m: &'a Value) -> Result<Read<'a>, RelayError> {
        let content = m.get("content");
        Ok(
            match m.get("role").and_then(Value::as_str).unwrap_or_default() {
                "system" | "developer" => {
                    let text = content_str(content);
                    if !text.is_empty() {
                        self.system.push(text);
                    }
                    Read::Aside
                }
                "user" => Read::Turn(Turn::User(match content {
                    Some(Value::String(s)) => UserContent::Text(s),
                    Some(Value::Array(parts)) => {
                        UserContent::Parts(parts.iter().map(user_part).collect::<Result<_, _>>()?)
                    }
                    _ => return Err(invalid("a user message needs content")),
                })),
                "assistant" => {
                    let text = content_str(content);
                    let calls = match m.get("tool_calls").and_then(Value::as_array) {
                        Some(calls) => calls.iter().map(tool_call).collect::<Result<_, _>>()?,
                        None => Vec::new(),
                    };
                    if text.is_empty() && calls.is_empty() {
                        Read::Aside
                    } else {
                        Read::Turn(Turn::Assistant { text, calls })
                    }
                }
                "tool" => Read::ToolResult(ToolResult {
                    call_id: m.get("tool_call_id").and_then(Value::as_str),
                    name: m.get("name").and_then(Value::as_str),
                    content: content_str(content),
                }),
                other => return Err(invalid(format!("unsupported message role {other:?}"))),
            },
        )
    }
}

impl<'a> Iterator for Conversation<'a> {
    type Item = Result<Turn<'a>, RelayError>;

    /// The next turn, or the refusal of the message where it stands.
    fn next(&mut self) -> Option<Self::Item> {
        if let Some(turn) = self.ahead.take() {
            return Some(turn);
        }
        let mut results = Vec::new();
        while let Some(m) = self.messages.next() {
            let turn = match self.read(m) {
                Ok(Read::Aside) => continue,
                Ok(Read::ToolResult(r)) => {
                    results.push(r);
                    continue;
                }
                Ok(Read::Turn(turn)) => Ok(turn),
                Err(e) => Err(e),
            };
            if results.is_empty() {
                return Some(turn);
            }
            self.ahead = Some(turn);
            break;
        }
        (!results.is_empty()).then_some(Ok(Turn::ToolResults(results)))
    }
}

/// A part of a user message's content.
fn user_part(p: &Value) -> Result<UserPart<'_>, RelayError> {
    match p.get("type").and_then(Value::as_str) {
        Some("text") => Ok(UserPart::Text(
            p.get("text").and_then(Value::as_str).unwrap_or_default(),
        )),
        Some("image_url") => {
            let url = match p.get("image_url") {
                Some(Value::String(u)) => u.as_str(),
                Some(o) => o.get("url").and_then(Value::as_str).unwrap_or_default(),
                None => "",
            };
            image(url).map(UserPart::Image)
        }
        other => Err(invalid(format!(
            "content parts of type {} are not supported by this model",
            other.unwrap_or("(none)")
        ))),
    }
}

/// An image URL: a base64 `data:` URL, or an http(s) one.
fn image(url: &str) -> Result<Image<'_>, RelayError> {
    if let Some((media_type, data)) = parse_data_url(url) {
        return Ok(Image::Inline { media_type, data });
    }
    if url.starts_with("http://") || url.starts_with("https://") {
        return Ok(Image::Url(url));
    }
    Err(invalid(
        "image_url must be an http(s) URL or a base64 data URL",
    ))
}

/// An assistant's tool call: it needs a function; its arguments, when not blank, must be a
/// JSON object (both families take an object; other JSON, `0` or `[]`, used to pass through).
fn tool_call(call: &Value) -> Result<ToolCall<'_>, RelayError> {
    let f = call
        .get("function")
        .ok_or_else(|| invalid("a tool call needs a function"))?;
    let args = f.get("arguments").and_then(Value::as_str).unwrap_or("");
    let arguments = if args.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str::<Value>(args)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| invalid("tool call arguments must be a JSON object"))?
    };
    Ok(ToolCall {
        id: call.get("id"),
        name: f.get("name"),
        arguments,
    })
}
