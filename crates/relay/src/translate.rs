//! The OpenAI shapes that translated answers are written in (`chat.completion`,
//! `chat.completion.chunk`, `usage`), and [`StreamTranslator`], the per-family stream state
//! machines behind one type.

use std::borrow::Cow;

use serde_json::Value;

use crate::bridge::{BridgedStream, ClientStream};
use crate::providers::anthropic::AnthropicStream;
use crate::providers::bedrock::BedrockStream;
use crate::providers::gemini::GeminiStream;
use crate::providers::vertex::VertexStream;
use crate::sse::EventTranslator;
use crate::usage::Usage;
use crate::wire::openai::{
    ChatCompletion, ChatCompletionChunk, Choice, ChunkChoice, Delta, ErrorBody, ErrorEvent, Message,
};

/// Seconds since the Unix epoch (the `created` field).
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// An OpenAI `usage` object for `u`: `prompt_tokens` and `completion_tokens` as billed (cache
/// reads and writes included in the prompt), with the cached tokens (both OpenAI-style cached
/// and cache reads) as `prompt_tokens_details.cached_tokens` and the reasoning tokens as
/// `completion_tokens_details.reasoning_tokens`.
#[cfg(test)]
pub(crate) fn openai_usage(u: &Usage) -> Value {
    serde_json::to_value(crate::wire::openai::Usage::from(u)).unwrap_or_default()
}

/// A fallback id for translated chunks (the upstream's message or response id replaces it when
/// the stream gives one): `chatcmpl-<seconds><sequence>`.
fn next_chunk_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    format!(
        "chatcmpl-{}{:06}",
        now_secs(),
        SEQ.fetch_add(1, Ordering::Relaxed) % 1_000_000
    )
}

/// Builds the `chat.completion.chunk` events of one translated stream.
#[derive(Debug, Clone)]
pub(crate) struct ChunkWriter {
    pub id: String,
    pub model: String,
    pub created: u64,
}

impl ChunkWriter {
    pub fn new(model: &str) -> Self {
        ChunkWriter {
            id: next_chunk_id(),
            model: model.to_owned(),
            created: now_secs(),
        }
    }

    /// `data: {chunk with one choice}`.
    pub fn delta(&self, out: &mut Vec<u8>, delta: Delta<'_>, finish_reason: Option<&str>) {
        let chunk = ChatCompletionChunk {
            id: &self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: &self.model,
            choices: vec![ChunkChoice {
                index: 0,
                delta,
                logprobs: None,
                finish_reason,
            }],
            usage: None,
        };
        crate::sse::write_data(out, &chunk);
    }

    /// The final usage-only chunk (`"choices":[]`), as OpenAI sends with `include_usage`.
    pub fn usage(&self, out: &mut Vec<u8>, usage: &Usage) {
        let chunk = ChatCompletionChunk {
            id: &self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: &self.model,
            choices: Vec::new(),
            usage: Some(usage.into()),
        };
        crate::sse::write_data(out, &chunk);
    }

    /// An error event in OpenAI's shape (`{"error": {...}}`), which the tap and SDKs recognise.
    pub fn error(&self, out: &mut Vec<u8>, message: &str, kind: &str) {
        let event = ErrorEvent {
            error: ErrorBody {
                message,
                kind,
                param: None,
                code: kind,
            },
        };
        crate::sse::write_data(out, &event);
    }
}

/// A `chat.completion` with one choice, serialised.
pub(crate) fn chat_completion(
    id: &str,
    model: &str,
    message: Message<'_>,
    finish_reason: &str,
    usage: Option<&Usage>,
) -> Vec<u8> {
    let answer = ChatCompletion {
        id,
        object: "chat.completion",
        created: now_secs(),
        model,
        choices: [Choice {
            index: 0,
            message,
            logprobs: None,
            finish_reason,
        }],
        usage: usage.map(Into::into),
    };
    serde_json::to_vec(&answer).unwrap_or_default()
}

/// The text of an OpenAI message `content`: a string (borrowed), or the `text` of its text
/// parts joined.
pub(crate) fn content_str(content: Option<&Value>) -> Cow<'_, str> {
    match content {
        Some(Value::String(s)) => Cow::Borrowed(s),
        Some(Value::Array(parts)) => Cow::Owned(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        ),
        _ => Cow::Borrowed(""),
    }
}

/// A `data:` URL split into (media type, base64 data); `None` for other URLs.
pub(crate) fn parse_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    let media = meta.strip_suffix(";base64")?;
    let media = if media.is_empty() {
        "application/octet-stream"
    } else {
        media
    };
    Some((media, data))
}

/// Turns an upstream stream in another protocol into OpenAI `chat.completion.chunk` events:
/// a first chunk with the assistant role, content / tool-call / reasoning deltas, a chunk with
/// the finish reason, a usage-only chunk (`"choices":[]`, always written: the api crate holds
/// it back from clients that did not ask for usage) and `data: [DONE]`. Upstream errors become
/// `{"error": ...}` events. [`StreamTranslator::Bridged`] goes the other way: OpenAI chunks
/// (the upstream's, or another translator's) to a client protocol's events.
#[derive(Debug)]
pub enum StreamTranslator {
    Anthropic(AnthropicStream),
    Gemini(GeminiStream),
    /// An Anthropic stream relayed unchanged to a Messages client: the OpenAI rendering only
    /// feeds the tap (usage, text, errors, completion).
    AnthropicObserver(AnthropicStream),
    /// A Gemini stream relayed unchanged to a Gemini client (the rendering feeds the tap).
    GeminiObserver(GeminiStream),
    /// A stream for a client of another protocol (see [`crate::bridge`]): the client gets its
    /// protocol's events, the tap the OpenAI chunks they were written from (see
    /// [`StreamTranslator::is_bridged`]).
    Bridged(BridgedStream),
    /// A Bedrock event stream (binary frames of Anthropic events) into OpenAI chunks.
    Bedrock(BedrockStream),
    /// A Vertex AI stream (Gemini's or Anthropic's, recognised) into OpenAI chunks.
    Vertex(VertexStream),
}

impl StreamTranslator {
    /// For Anthropic Messages streams; `model` is the fallback model name of the chunks.
    pub fn anthropic(model: &str) -> Self {
        StreamTranslator::Anthropic(AnthropicStream::new(model))
    }

    /// For Anthropic streams relayed unchanged (see [`StreamTranslator::passes_through`]).
    pub fn anthropic_observer(model: &str) -> Self {
        StreamTranslator::AnthropicObserver(AnthropicStream::new(model))
    }

    /// The client receives the upstream's bytes; the output of [`StreamTranslator::feed`] is
    /// for the tap only.
    pub fn passes_through(&self) -> bool {
        matches!(
            self,
            StreamTranslator::AnthropicObserver(_) | StreamTranslator::GeminiObserver(_)
        )
    }

    /// For Bedrock `invoke-with-response-stream` streams.
    pub fn bedrock(model: &str) -> Self {
        StreamTranslator::Bedrock(BedrockStream::new(model))
    }

    /// For Vertex AI streams.
    pub fn vertex(model: &str) -> Self {
        StreamTranslator::Vertex(VertexStream::new(model))
    }

    /// Answers an OpenAI `response_format` that was asked of an Anthropic model as a forced
    /// tool (Anthropic, Bedrock and Vertex streams; see
    /// [`crate::providers::anthropic::ResponseTool`]): the input of the `tool_use` block named
    /// `name` is streamed as content. `None`, and other translators, are unchanged.
    pub fn with_response_tool(self, name: Option<String>) -> Self {
        match self {
            StreamTranslator::Anthropic(s) => {
                StreamTranslator::Anthropic(s.with_response_tool(name))
            }
            StreamTranslator::Bedrock(s) => StreamTranslator::Bedrock(s.with_response_tool(name)),
            StreamTranslator::Vertex(s) => StreamTranslator::Vertex(s.with_response_tool(name)),
            other => other,
        }
    }

    /// For a client of another protocol: `upstream` makes the channel's stream OpenAI's
    /// (`None`: it already is), `client` writes the client's events.
    pub fn bridged(upstream: Option<StreamTranslator>, client: ClientStream) -> Self {
        StreamTranslator::Bridged(BridgedStream {
            upstream: upstream.map(Box::new),
            client,
        })
    }

    /// For OpenAI streams to Anthropic Messages clients.
    pub fn messages(model: &str) -> Self {
        Self::bridged(
            None,
            ClientStream::Messages(crate::messages::MessagesStream::new(model)),
        )
    }

    /// A bridged stream's whole answer once it has ended, where the client's protocol keeps
    /// one (see [`ClientStream::final_answer`]).
    pub fn final_answer(&self) -> Option<&Value> {
        match self {
            StreamTranslator::Bridged(b) => b.client.final_answer(),
            _ => None,
        }
    }

    /// The output of [`StreamTranslator::feed`] is for the client only: the tap reads the
    /// OpenAI chunks in between, given by [`StreamTranslator::feed_tapped`] and
    /// [`StreamTranslator::finish_tapped`].
    pub fn is_bridged(&self) -> bool {
        matches!(self, StreamTranslator::Bridged(_))
    }

    /// [`StreamTranslator::feed`], the OpenAI rendering fed to `tap` on the way: the upstream's
    /// bytes where they are OpenAI's, else this translator's output (for a bridged stream, the
    /// chunks between its two translations).
    pub fn feed_tapped(&mut self, chunk: &[u8], tap: &mut crate::SseTap) -> Vec<u8> {
        match self {
            StreamTranslator::Bridged(b) => b.feed(chunk, Some(tap)),
            other => {
                let out = other.feed(chunk);
                tap.feed(&out);
                out
            }
        }
    }

    /// [`StreamTranslator::finish`] with the tap fed as by [`StreamTranslator::feed_tapped`].
    pub fn finish_tapped(&mut self, tap: &mut crate::SseTap) -> Vec<u8> {
        match self {
            StreamTranslator::Bridged(b) => b.finish(Some(tap)),
            other => {
                let out = other.finish();
                tap.feed(&out);
                out
            }
        }
    }

    /// For Gemini streams relayed unchanged (see [`StreamTranslator::passes_through`]).
    pub fn gemini_observer(model: &str) -> Self {
        StreamTranslator::GeminiObserver(GeminiStream::new(model))
    }

    /// For Gemini `streamGenerateContent?alt=sse` streams.
    pub fn gemini(model: &str) -> Self {
        StreamTranslator::Gemini(GeminiStream::new(model))
    }

    /// The OpenAI SSE bytes for the next upstream chunk (often empty: partial events wait).
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            StreamTranslator::Anthropic(s) | StreamTranslator::AnthropicObserver(s) => {
                s.feed(chunk, &mut out)
            }
            StreamTranslator::Gemini(s) | StreamTranslator::GeminiObserver(s) => {
                s.feed(chunk, &mut out)
            }
            StreamTranslator::Bridged(b) => out = b.feed(chunk, None),
            StreamTranslator::Bedrock(s) => s.feed(chunk, &mut out),
            StreamTranslator::Vertex(s) => s.feed(chunk, &mut out),
        }
        out
    }

    /// The upstream stream ended cleanly: what is still to be written (a pending event; for
    /// Gemini, whose streams have no end marker, the usage chunk and `[DONE]`).
    pub fn finish(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            StreamTranslator::Anthropic(s) | StreamTranslator::AnthropicObserver(s) => {
                s.finish(&mut out)
            }
            StreamTranslator::Gemini(s) | StreamTranslator::GeminiObserver(s) => s.finish(&mut out),
            StreamTranslator::Bridged(b) => out = b.finish(None),
            StreamTranslator::Bedrock(s) => s.finish(&mut out),
            StreamTranslator::Vertex(s) => s.finish(&mut out),
        }
        out
    }

    /// The usage the upstream reported so far, in billing terms (Anthropic cache reads and
    /// writes kept in their own buckets). `None` until the upstream reported its output count.
    pub fn usage(&self) -> Option<Usage> {
        match self {
            StreamTranslator::Anthropic(s) | StreamTranslator::AnthropicObserver(s) => s.usage(),
            StreamTranslator::Gemini(s) | StreamTranslator::GeminiObserver(s) => s.usage(),
            // The channel's own count, when its stream is translated; else the tap reads the
            // upstream's OpenAI usage.
            StreamTranslator::Bridged(b) => b.upstream.as_ref().and_then(|u| u.usage()),
            StreamTranslator::Bedrock(s) => s.usage(),
            StreamTranslator::Vertex(s) => s.usage(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls() {
        assert_eq!(
            parse_data_url("data:image/png;base64,iVBOR"),
            Some(("image/png", "iVBOR"))
        );
        assert_eq!(parse_data_url("https://x/y.png"), None);
        assert_eq!(parse_data_url("data:text/plain,hello"), None);
    }

    #[test]
    fn usage_shape() {
        let u = Usage {
            prompt_tokens: 1300,
            completion_tokens: 20,
            cached_read_tokens: 1000,
            cached_write_tokens: 200,
            ..Usage::default()
        };
        let v = openai_usage(&u);
        assert_eq!(v["total_tokens"], 1320);
        assert_eq!(v["prompt_tokens_details"]["cached_tokens"], 1000);
        assert_eq!(v["prompt_tokens_details"]["cache_write_tokens"], 200);
    }
}
