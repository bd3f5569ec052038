//! Client protocols spoken on channels of another protocol. Anthropic Messages, Gemini
//! `generateContent` and OpenAI Responses clients reach every channel that serves chat
//! completions through one pivot: the client's request becomes an OpenAI chat request
//! ([`Bridge::chat_request`]), the channel's adapter sends that as it sends any chat request
//! (translating it again for Anthropic, Gemini, Bedrock or Vertex AI), its answer comes back as a
//! `chat.completion` ([`crate::Provider::answer`]) and is written in the client's protocol
//! ([`Bridge::answer`]). Streams go the same way: the upstream's stream, turned into OpenAI
//! chunks by the adapter's [`StreamTranslator`] where it is not OpenAI's, then into the client's
//! events by a [`ClientStream`] ([`StreamTranslator::bridged`]).
//!
//! A channel that speaks the client's protocol itself is never bridged: Messages to Anthropic,
//! Gemini's own to Gemini and Responses to OpenAI (type 1, or a channel whose
//! `config.responses` says `native`) go through as sent ([`crate::Provider::bridge`] decides).

use serde_json::Value;

use crate::endpoint::Endpoint;
use crate::error::RelayError;
use crate::gemini_client::GeminiClientStream;
use crate::messages::MessagesStream;
use crate::provider::{Answer, UpstreamFailure};
use crate::request::RelayRequest;
use crate::responses::ResponsesStream;
use crate::sse::{EventTranslator, SseEvent, SseReader};
use crate::translate::StreamTranslator;
use crate::usage::Usage;
use crate::wire::openai::{ChatMessage, ChatRequest, ChatResponse, StreamOptions, ToolCallIn};

/// A client protocol written onto chat completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bridge {
    /// Anthropic Messages (`/v1/messages`), see [`crate::messages`].
    Messages,
    /// OpenAI's Responses API (`/v1/responses`), see [`crate::responses`].
    Responses,
    /// Gemini's `generateContent` / `streamGenerateContent`, see [`crate::gemini_client`].
    Gemini,
}

impl Bridge {
    /// The bridge of `endpoint`'s client protocol; `None` for OpenAI's own endpoints.
    pub fn of(endpoint: Endpoint) -> Option<Bridge> {
        match endpoint {
            Endpoint::Messages => Some(Bridge::Messages),
            Endpoint::Responses => Some(Bridge::Responses),
            Endpoint::GenerateContent => Some(Bridge::Gemini),
            _ => None,
        }
    }

    /// The OpenAI chat request for `req` (same model: the channel's model mapping is applied
    /// when it is sent), carrying the client's `anthropic-beta` flags along. A request the chat
    /// protocol cannot express is [`RelayError::InvalidRequest`]: the gateway's refusal.
    pub fn chat_request(self, req: &RelayRequest) -> Result<RelayRequest, RelayError> {
        let mut chat = match self {
            Bridge::Messages => crate::messages::chat_request(req)?,
            Bridge::Responses => crate::responses::chat_request(req)?,
            Bridge::Gemini => crate::gemini_client::chat_request(req)?,
        };
        chat.anthropic_beta.clone_from(&req.anthropic_beta);
        openai_model_fields(&mut chat);
        Ok(chat)
    }

    /// [`Bridge::chat_request`], made on the first call and kept on `req`: the channels tried,
    /// the answer and the stream of one request read the same chat request.
    pub fn chat_for(self, req: &RelayRequest) -> Result<&RelayRequest, RelayError> {
        if let Some(chat) = req.bridged.get() {
            return Ok(chat);
        }
        let chat = self.chat_request(req)?;
        Ok(req.bridged.get_or_init(|| Box::new(chat)))
    }

    /// The client's answer for the channel's `chat` answer. The usage billed is the
    /// channel's own count when its adapter read one (Anthropic's cache buckets, Gemini's
    /// thinking tokens), else the one the chat answer states.
    pub fn answer(self, req: &RelayRequest, chat: Answer) -> Result<Answer, UpstreamFailure> {
        let written = match self {
            Bridge::Messages => crate::messages::answer(req, &chat.body)?,
            Bridge::Responses => crate::responses::answer(req, &chat.body)?,
            Bridge::Gemini => crate::gemini_client::answer(req, &chat.body)?,
        };
        Ok(Answer {
            body: written.body,
            usage: chat.usage.or(written.usage),
        })
    }

    /// The writer of the client's stream events for `req` (its model, until the upstream names
    /// its own; for Responses also the tools and settings every `response` object repeats).
    pub fn stream(self, req: &RelayRequest) -> ClientStream {
        match self {
            Bridge::Messages => ClientStream::Messages(MessagesStream::new(&req.model)),
            Bridge::Responses => ClientStream::Responses(Box::new(ResponsesStream::new(req))),
            Bridge::Gemini => ClientStream::Gemini(GeminiClientStream::new(&req.model)),
        }
    }
}

/// A client's request as the chat completions request `body` (`req`'s model, stream flag and
/// output limit), for [`Bridge::chat_request`].
pub(crate) fn chat(req: &RelayRequest, body: Value) -> RelayRequest {
    RelayRequest {
        endpoint: Endpoint::ChatCompletions,
        body,
        model: req.model.clone(),
        stream: req.stream,
        max_tokens: req.max_tokens,
        anthropic_beta: None,
        bridged: Default::default(),
    }
}

/// The chat request for a client's `req` with `messages`: `req`'s model and output limit,
/// streamed when `req` is (asking for the usage); nothing else set.
pub(crate) fn chat_base<'a>(
    req: &'a RelayRequest,
    messages: Vec<ChatMessage<'a>>,
) -> ChatRequest<'a> {
    ChatRequest {
        model: &req.model,
        messages,
        reasoning_effort: None,
        max_tokens: req.max_tokens,
        stop: None,
        temperature: None,
        top_p: None,
        user: None,
        tools: Vec::new(),
        tool_choice: None,
        parallel_tool_calls: None,
        stream: req.stream.then_some(true),
        stream_options: req.stream.then_some(StreamOptions {
            include_usage: true,
        }),
    }
}

/// A chat request written as JSON.
pub(crate) fn chat_json(chat: &ChatRequest<'_>) -> Result<Value, RelayError> {
    serde_json::to_value(chat)
        .map_err(|e| RelayError::InvalidRequest(format!("cannot write the chat request: {e}")))
}

/// The chat request's fields as OpenAI's own models take them, by the model the client named:
/// reasoning models (`o1`, `o3`, `o4`, `gpt-5`) get `max_completion_tokens` for `max_tokens`;
/// chat models without reasoning (`gpt-4*`, `gpt-3.5*`, `chatgpt-*`) no `reasoning_effort`,
/// which they refuse (Claude Code and Gemini CLI always ask for some reasoning). Other models
/// take both as written; the Anthropic and Gemini adapters read `reasoning_effort` as their own
/// reasoning setting.
fn openai_model_fields(chat: &mut RelayRequest) {
    let model = chat.model.clone();
    let Some(obj) = chat.body.as_object_mut() else {
        return;
    };
    if crate::request::refuses_reasoning_effort(&model) {
        obj.remove("reasoning_effort");
    }
    if crate::request::is_openai_reasoning_model(&model) {
        if let Some(limit) = obj.remove("max_tokens") {
            obj.insert("max_completion_tokens".into(), limit);
        }
    }
}

/// Turns OpenAI `chat.completion.chunk` events into a client protocol's stream.
#[derive(Debug)]
pub enum ClientStream {
    Messages(MessagesStream),
    Responses(Box<ResponsesStream>),
    Gemini(GeminiClientStream),
}

impl ClientStream {
    /// The client's bytes for the next OpenAI chunk (often empty: partial events wait).
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        match self {
            ClientStream::Messages(s) => s.feed(chunk, out),
            ClientStream::Responses(s) => s.feed(chunk, out),
            ClientStream::Gemini(s) => s.feed(chunk, out),
        }
    }

    /// The OpenAI stream ended: what the client still needs (the closing events).
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        match self {
            ClientStream::Messages(s) => s.finish(out),
            ClientStream::Responses(s) => s.finish(out),
            ClientStream::Gemini(s) => s.finish(out),
        }
    }

    /// The whole answer the client got, once the stream has ended, for the protocols that keep
    /// it (the Responses API's final `response` object; see [`crate::responses::conversation`]).
    pub fn final_answer(&self) -> Option<&serde_json::Value> {
        match self {
            ClientStream::Messages(_) | ClientStream::Gemini(_) => None,
            ClientStream::Responses(s) => s.response(),
        }
    }
}

/// A client stream written from OpenAI `chat.completion.chunk` events (the Messages and
/// Responses ones): every chunk is read here, once for all of them, and handed over in parts,
/// from which the stream writes its protocol's events. Its [`EventTranslator`] is this reading:
/// `[DONE]`, or a clean end after a finish reason, is [`ChunkStream::done`].
pub(crate) trait ChunkStream {
    /// What the stream keeps of the chunks.
    fn chunks(&mut self) -> &mut Chunks;
    /// Whether the stream is over (later chunks are not read).
    fn ended(&self) -> bool {
        false
    }
    /// The end of the chunks.
    fn done(&mut self, out: &mut Vec<u8>);
    /// An `{"error"}` event.
    fn error(&mut self, error: &Value, out: &mut Vec<u8>);
    /// Any other chunk, before its parts (the first one starts the client's stream).
    fn chunk(&mut self, chunk: &ChatResponse<'_>, out: &mut Vec<u8>);
    /// The parts of the first choice's delta: reasoning text, text and tool calls (empty texts
    /// are not handed over).
    fn reasoning(&mut self, text: &str, out: &mut Vec<u8>);
    fn text(&mut self, text: &str, out: &mut Vec<u8>);
    fn tool_call(&mut self, call: &ToolCallIn<'_>, out: &mut Vec<u8>);
}

/// What a [`ChunkStream`] keeps of the chunks: their reader, and the finish reason and the
/// usage they gave so far.
#[derive(Debug, Default)]
pub(crate) struct Chunks {
    reader: SseReader,
    events: Vec<SseEvent>,
    pub finish: Option<String>,
    pub usage: Option<Usage>,
}

impl<S: ChunkStream> EventTranslator for S {
    fn reader(&mut self) -> (&mut SseReader, &mut Vec<SseEvent>) {
        let chunks = self.chunks();
        (&mut chunks.reader, &mut chunks.events)
    }

    fn event(&mut self, e: &SseEvent, out: &mut Vec<u8>) {
        if self.ended() {
            return;
        }
        if e.data.trim() == "[DONE]" {
            self.done(out);
            return;
        }
        let Some(v) = ChatResponse::read(&e.data) else {
            return;
        };
        if let Some(err) = &v.error {
            self.error(err, out);
            return;
        }
        self.chunk(&v, out);
        if let Some(u) = v.usage() {
            self.chunks().usage = Some(u);
        }
        let Some(choice) = v.first_choice() else {
            return;
        };
        let d = choice.delta();
        if let Some(r) = d.reasoning_content.as_str().filter(|r| !r.is_empty()) {
            self.reasoning(r, out);
        }
        if let Some(Value::String(t)) = d.content.as_ref().filter(|t| t.as_str() != Some("")) {
            self.text(t, out);
        }
        for call in d.tool_calls() {
            self.tool_call(&call, out);
        }
        if let Some(f) = choice.finish_reason.as_str() {
            self.chunks().finish = Some(f.to_owned());
        }
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        if self.chunks().finish.is_some() {
            self.done(out);
        }
    }
}

/// A bridged stream: the channel's stream made OpenAI's by `upstream` (`None`: it already is),
/// then written in the client's protocol by `client`. The tap reads the OpenAI chunks between.
#[derive(Debug)]
pub struct BridgedStream {
    pub(crate) upstream: Option<Box<StreamTranslator>>,
    pub(crate) client: ClientStream,
}

impl BridgedStream {
    /// The client's bytes for the next upstream chunk; `tap` gets the chunk's OpenAI rendering.
    pub fn feed(&mut self, chunk: &[u8], tap: Option<&mut crate::SseTap>) -> Vec<u8> {
        let mut out = Vec::new();
        match self.upstream.as_mut() {
            None => {
                if let Some(tap) = tap {
                    tap.feed(chunk);
                }
                self.client.feed(chunk, &mut out);
            }
            Some(u) => {
                let openai = u.feed(chunk);
                if let Some(tap) = tap {
                    tap.feed(&openai);
                }
                self.client.feed(&openai, &mut out);
            }
        }
        out
    }

    /// The upstream ended cleanly: the client's closing bytes (`tap` gets the rest of the
    /// OpenAI rendering first).
    pub fn finish(&mut self, tap: Option<&mut crate::SseTap>) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(u) = self.upstream.as_mut() {
            let openai = u.finish();
            if let Some(tap) = tap {
                tap.feed(&openai);
            }
            self.client.feed(&openai, &mut out);
        }
        self.client.finish(&mut out);
        out
    }
}
