//! Server-sent events, passed through with a tap.
//!
//! The api crate forwards every upstream chunk to the client unchanged and, beside that, feeds
//! it to an [`SseTap`], which parses just enough to learn the usage (or the text to count when
//! no usage arrives), whether the stream completed, and whether the upstream sent an error
//! event. The tap holds the current partial line and the data of the current event, never the
//! whole body.
//!
//! Streamed chat completions and completions only report usage when asked, so the relay forces
//! `stream_options.include_usage` upstream ([`ensure_include_usage`]). The extra final chunk
//! (`"choices": []` with `usage`) is held back from clients that did not ask for it: the api
//! crate recognises it with [`is_usage_only_event`] and drops that one event, as the common
//! `chunk.choices[0]` loop of OpenAI SDK users fails on a chunk without choices. Clients that
//! asked for `include_usage` get it unchanged.

use serde_json::Value;

use crate::tokenizer;
use crate::usage::{self, Usage};

/// A line longer than this (a pathological upstream) is dropped rather than buffered further.
/// `response.completed` events repeat the whole response, so the limit is generous.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Observes an SSE stream chunk by chunk. Handles LF, CRLF and CR line ends, multi-line `data`,
/// comments (`: keep-alive`) and chunks split anywhere, inside UTF-8 sequences included (lines
/// are buffered as bytes and decoded whole).
#[derive(Debug, Default)]
pub struct SseTap {
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// The previous chunk ended in CR: an LF starting the next chunk belongs to that line end.
    after_cr: bool,
    /// The current line passed [`MAX_LINE`] and is being skipped.
    overflow: bool,
    /// `data` of the event being assembled (lines joined by `\n`).
    data: String,
    has_data: bool,
    usage: Option<Usage>,
    text: String,
    /// Events that can only add text (see [`only_text`]), parsed for it when the stream ends
    /// without usage (or when they pile up): most streams report usage, and their text need
    /// not be read at all.
    deferred: Vec<u8>,
    saw_done: bool,
    saw_event: bool,
    error: Option<String>,
}

/// Deferred event bytes read once they pass this size, to bound the memory of a long stream.
const MAX_DEFERRED: usize = 256 * 1024;

/// What an event's raw JSON can carry, read from its bytes without parsing (see
/// [`SseTap::dispatch`]). An event is text only when it names no `"error"` and no `"type"`
/// (Responses events, which may end the stream) and has no `"usage"` other than `null` (OpenAI
/// sends `"usage":null` on every chunk but the last). Names inside strings are escaped
/// (`\"usage\"`), so they are never taken for keys; a key spelt with escapes is not seen here,
/// and a wrong [`Shape::Other`] only costs a parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Only text: no `error`, no `type`, any `usage` null. Kept unparsed, read only if the
    /// stream ends without a usage report.
    Text,
    /// A non-null `usage` and no `error` or `type` member in sight: the `include_usage` chunk
    /// as a rule, tried with [`only_usage`] first.
    Usage,
    /// Anything else: read whole.
    Other,
}

fn shape(data: &[u8]) -> Shape {
    use memchr::memmem::Finder;
    use std::sync::LazyLock;
    // Built once: `memmem::find` builds its searcher anew on every call (9 events a stream).
    static ERROR: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"error\""));
    static TYPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"type\""));
    static USAGE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"usage\""));
    if ERROR.find(data).is_some() || TYPE.find(data).is_some() {
        return Shape::Other;
    }
    let text_only = USAGE.find_iter(data).all(|at| {
        let rest = data[at + 7..].trim_ascii_start();
        match rest.strip_prefix(b":") {
            Some(value) => value.trim_ascii_start().starts_with(b"null"),
            None => true, // a string value "usage", not a key
        }
    });
    if text_only {
        Shape::Text
    } else {
        Shape::Usage
    }
}

/// The usage of an event that carries nothing else the tap reads (the `include_usage` chunk:
/// `choices` empty or absent, no `error`, no `type`), read straight into its counts; `None` for
/// any other event, which is then read whole ([`SseTap::event`]). Reading the usage chunk into
/// a document and walking it was ~6 % of a streamed request's instructions. A repeated key, a
/// field of an unexpected kind or a usage that does not read falls back to the document, so
/// what is read is what [`SseTap::event`] reads (`only_usage_reads_what_the_document_reading_reads`).
fn only_usage(data: &str) -> Option<Usage> {
    use serde::de::IgnoredAny;
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        choices: Option<Vec<IgnoredAny>>,
        #[serde(default)]
        error: Option<IgnoredAny>,
        #[serde(default, rename = "type")]
        kind: Option<IgnoredAny>,
    }
    let p: Probe = serde_json::from_str(data).ok()?;
    if p.error.is_some() || p.kind.is_some() || p.choices.is_some_and(|c| !c.is_empty()) {
        return None;
    }
    usage::from_openai_bytes(data.as_bytes())
}

/// What a finished (or interrupted) stream reported.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamOutcome {
    /// The last usage the upstream reported, if any.
    pub usage: Option<Usage>,
    /// Tokens of the streamed text (content, tool-call arguments, reasoning text), counted only
    /// when no usage arrived (0 otherwise): the fallback for billing.
    pub completion_text_tokens: i64,
    /// The stream ended with `data: [DONE]` (chat/completions) or a terminal Responses event
    /// (`response.completed`, `response.incomplete`, `response.failed`).
    pub saw_done: bool,
    /// At least one event with data arrived.
    pub saw_event: bool,
    /// The message of an upstream error event.
    pub error: Option<String>,
}

impl StreamOutcome {
    /// The usage to bill: the upstream's when reported, else `prompt_estimate` and the counted
    /// completion text.
    pub fn usage_or_estimate(&self, prompt_estimate: i64) -> Usage {
        self.usage.unwrap_or_else(|| Usage {
            prompt_tokens: prompt_estimate,
            completion_tokens: self.completion_text_tokens,
            ..Usage::default()
        })
    }
}

impl SseTap {
    pub fn new() -> Self {
        SseTap::default()
    }

    /// Observes the next chunk of the upstream body.
    pub fn feed(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        while let Some(i) = memchr::memchr2(b'\n', b'\r', rest) {
            if self.line.is_empty() && !self.overflow {
                // The whole line is in this chunk (the usual case): read it where it is.
                if i <= MAX_LINE {
                    self.line_done(&rest[..i]);
                }
            } else {
                self.append(&rest[..i]);
                self.end_line();
            }
            if rest[i] == b'\r' {
                match rest.get(i + 1) {
                    Some(b'\n') => rest = &rest[i + 2..],
                    Some(_) => rest = &rest[i + 1..],
                    None => {
                        self.after_cr = true;
                        rest = &[];
                    }
                }
            } else {
                rest = &rest[i + 1..];
            }
        }
        self.append(rest);
    }

    /// The last usage seen so far.
    pub fn usage(&self) -> Option<&Usage> {
        self.usage.as_ref()
    }

    /// Whether any event with data arrived so far.
    pub fn saw_event(&self) -> bool {
        self.saw_event
    }

    /// Whether the terminal event arrived.
    pub fn saw_done(&self) -> bool {
        self.saw_done
    }

    /// Ends observation: an unterminated last line and a pending event are processed as if the
    /// stream had ended properly, then the text is counted with `model`'s encoding when no usage
    /// arrived.
    pub fn finish(mut self, model: &str) -> StreamOutcome {
        if !self.line.is_empty() {
            self.end_line();
        }
        self.dispatch();
        if self.usage.is_none() {
            self.read_deferred();
        }
        let completion_text_tokens = if self.usage.is_none() {
            tokenizer::count_text(model, &self.text)
        } else {
            0
        };
        StreamOutcome {
            usage: self.usage,
            completion_text_tokens,
            saw_done: self.saw_done,
            saw_event: self.saw_event,
            error: self.error,
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.overflow || bytes.is_empty() {
            return;
        }
        if self.line.len() + bytes.len() > MAX_LINE {
            self.overflow = true;
            self.line = Vec::new();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self) {
        if self.overflow {
            self.overflow = false;
            return;
        }
        let line = std::mem::take(&mut self.line);
        self.line_done(&line);
        // Keep the allocation for the next line unless it grew large.
        if line.capacity() <= 64 * 1024 {
            self.line = line;
            self.line.clear();
        }
    }

    /// A complete line (without its end): an empty one ends the event.
    fn line_done(&mut self, line: &[u8]) {
        if line.is_empty() {
            self.dispatch();
        } else {
            // `from_utf8` checks ASCII a word at a time; the lossy reading walks every byte
            // (5 % of a streamed request's instructions). Both read valid text the same.
            match std::str::from_utf8(line) {
                Ok(text) => self.field(text),
                Err(_) => self.field(&String::from_utf8_lossy(line)),
            }
        }
    }

    /// One non-empty line. Only `data` matters: the event name is repeated as `type` in the
    /// JSON of every Responses event, and `id`/`retry` do not concern a proxy.
    fn field(&mut self, line: &str) {
        if line.starts_with(':') {
            return; // comment
        }
        let (name, value) = match line.split_once(':') {
            Some((n, v)) => (n, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if name == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
        }
    }

    fn dispatch(&mut self) {
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let data = std::mem::take(&mut self.data);
        self.saw_event = true;
        let trimmed = data.trim();
        if trimmed == "[DONE]" {
            self.saw_done = true;
            return self.recycle(data);
        }
        let shape = shape(trimmed.as_bytes());
        if shape == Shape::Text {
            if self.deferred.len() + trimmed.len() > MAX_DEFERRED {
                self.read_deferred();
            }
            // One event a line: a line break inside JSON is whitespace.
            let at = self.deferred.len();
            self.deferred.extend_from_slice(trimmed.as_bytes());
            if memchr::memchr(b'\n', trimmed.as_bytes()).is_some() {
                for b in &mut self.deferred[at..] {
                    if *b == b'\n' {
                        *b = b' ';
                    }
                }
            }
            self.deferred.push(b'\n');
        } else if let Some(u) = (shape == Shape::Usage)
            .then(|| only_usage(trimmed))
            .flatten()
        {
            // Responses events (all with a `type`) and errors skip this probe.
            self.usage = Some(u);
        } else if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
            self.event(&v);
        }
        self.recycle(data);
    }

    /// Keeps the event buffer's allocation for the next event.
    fn recycle(&mut self, mut data: String) {
        data.clear();
        self.data = data;
    }

    /// Reads the text of the deferred events (one JSON document a line) and forgets them.
    fn read_deferred(&mut self) {
        let deferred = std::mem::take(&mut self.deferred);
        for line in deferred.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            if let Ok(v) = serde_json::from_slice::<Value>(line) {
                self.event(&v);
            }
        }
    }

    /// One JSON event: usage, error, text deltas, terminal Responses events.
    fn event(&mut self, v: &Value) {
        if let Some(u) = usage::from_openai(v) {
            self.usage = Some(u);
        }
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            self.error = Some(error_message(e));
        }
        // Chat and completion chunks.
        if let Some(choices) = v.get("choices").and_then(Value::as_array) {
            for c in choices {
                if let Some(delta) = c.get("delta") {
                    for key in ["content", "reasoning_content", "reasoning", "refusal"] {
                        if let Some(Value::String(s)) = delta.get(key) {
                            self.text.push_str(s);
                        }
                    }
                    if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                        for call in calls {
                            if let Some(f) = call.get("function") {
                                for key in ["name", "arguments"] {
                                    if let Some(Value::String(s)) = f.get(key) {
                                        self.text.push_str(s);
                                    }
                                }
                            }
                        }
                    }
                }
                if let Some(Value::String(s)) = c.get("text") {
                    self.text.push_str(s);
                }
            }
        }
        // Responses API events.
        match v.get("type").and_then(Value::as_str) {
            Some(
                "response.output_text.delta"
                | "response.refusal.delta"
                | "response.function_call_arguments.delta"
                | "response.reasoning_summary_text.delta",
            ) => {
                if let Some(Value::String(s)) = v.get("delta") {
                    self.text.push_str(s);
                }
            }
            Some("response.completed" | "response.incomplete") => self.saw_done = true,
            Some("response.failed") => {
                self.saw_done = true;
                let e = v.get("response").and_then(|r| r.get("error"));
                if let Some(e) = e.filter(|e| !e.is_null()) {
                    self.error = Some(error_message(e));
                }
            }
            Some("error") if self.error.is_none() => {
                self.error = Some(error_message(v));
            }
            _ => {}
        }
    }
}

/// The message of an error value: `{"message": ..}`, a plain string, or its JSON text.
fn error_message(e: &Value) -> String {
    match e {
        Value::String(s) => s.clone(),
        _ => match e.get("message") {
            Some(Value::String(m)) => m.clone(),
            _ => e.to_string(),
        },
    }
}

/// Whether one SSE event is the usage-only chunk that `stream_options.include_usage` adds: its
/// JSON has `choices` as an empty array and `usage` as an object. `event` is either the raw
/// event (`data:` lines, possibly with `event:`/`id:` lines and the blank line ending it) or the
/// bare JSON of its data. Whitespace anywhere in the JSON (compact, spaced or pretty-printed) is
/// fine, since the JSON is parsed; it is parsed only when the bytes contain `usage` at all, so
/// ordinary content chunks cost one substring scan.
pub fn is_usage_only_event(event: &[u8]) -> bool {
    if !event.windows(5).any(|w| w == b"usage") {
        return false;
    }
    let Ok(text) = std::str::from_utf8(event) else {
        return false;
    };
    let trimmed = text.trim();
    let data: std::borrow::Cow<'_, str> = if trimmed.starts_with('{') {
        trimmed.into()
    } else {
        // An SSE event: join its `data` lines as the SSE rules do.
        let mut joined = String::new();
        let mut any = false;
        for line in text.lines() {
            let Some(value) = line.strip_prefix("data:") else {
                continue;
            };
            if any {
                joined.push('\n');
            }
            joined.push_str(value.strip_prefix(' ').unwrap_or(value));
            any = true;
        }
        joined.into()
    };

    /// Only the two fields that decide; everything else is skipped unparsed. A `usage` that is
    /// not an object (or `choices` not an array) fails the parse: not usage-only.
    #[derive(serde::Deserialize)]
    struct Probe {
        choices: Option<Vec<serde::de::IgnoredAny>>,
        usage: Option<serde_json::Map<String, Value>>,
    }
    match serde_json::from_str::<Probe>(&data) {
        Ok(Probe {
            choices: Some(choices),
            usage: Some(_),
        }) => choices.is_empty(),
        _ => false,
    }
}

/// Asks a streamed chat completion or completion to report usage in a final chunk: sets
/// `stream_options.include_usage = true`, keeping other stream options. Does nothing unless
/// `stream` is `true` (OpenAI rejects `stream_options` on non-streamed requests) or when the
/// body is not an object.
pub fn ensure_include_usage(body: &mut Value) {
    let Some(obj) = body.as_object_mut() else {
        return;
    };
    if obj.get("stream") != Some(&Value::Bool(true)) {
        return;
    }
    let options = obj
        .entry("stream_options")
        .or_insert_with(|| Value::Object(Default::default()));
    if !options.is_object() {
        *options = Value::Object(Default::default());
    }
    if let Some(o) = options.as_object_mut() {
        o.insert("include_usage".into(), Value::Bool(true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// What a tap reads from one event's JSON: the fast path first, as `dispatch` does, or the
    /// document reading alone.
    fn read_event(data: &str, fast: bool) -> (Option<Usage>, String, Option<String>, bool) {
        let mut tap = SseTap::new();
        match only_usage(data).filter(|_| fast) {
            Some(u) => tap.usage = Some(u),
            None => {
                if let Ok(v) = serde_json::from_str::<Value>(data) {
                    tap.event(&v);
                }
            }
        }
        (tap.usage, tap.text, tap.error, tap.saw_done)
    }

    fn member() -> impl Strategy<Value = String> {
        let count = prop_oneof![
            Just("7".to_owned()),
            Just("-3".to_owned()),
            Just("2.9".to_owned()),
            Just("null".to_owned()),
            Just("\"5\"".to_owned()),
            Just("1e3".to_owned()),
        ];
        let usage = (count.clone(), count.clone(), count).prop_map(|(p, c, t)| {
            format!(
                r#"{{"prompt_tokens":{p},"completion_tokens":{c},"total_tokens":{t},"prompt_tokens_details":{{"cached_tokens":{p}}}}}"#
            )
        });
        let value = prop_oneof![
            usage.clone(),
            Just("null".to_owned()),
            Just("[]".to_owned()),
            Just("{}".to_owned()),
            Just("\"x\"".to_owned()),
            Just("3".to_owned()),
            Just(r#"[{"delta":{"content":"hi"}}]"#.to_owned()),
            Just(r#"[{"index":0}]"#.to_owned()),
            Just(r#"{"message":"boom"}"#.to_owned()),
            Just("\"response.completed\"".to_owned()),
            usage.prop_map(|u| format!(r#"{{"usage":{u}}}"#)),
        ];
        let key = prop_oneof![
            Just("usage"),
            Just("choices"),
            Just("error"),
            Just("type"),
            Just("response"),
            Just("id"),
            Just("\\u0074ype"),
            Just("\\u0065rror"),
            Just("us\\u0061ge"),
        ];
        (key, value).prop_map(|(k, v)| format!(r#""{k}":{v}"#))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn only_usage_reads_what_the_document_reading_reads(
            members in prop::collection::vec(member(), 0..6),
        ) {
            let data = format!("{{{}}}", members.join(","));
            prop_assert_eq!(read_event(&data, true), read_event(&data, false), "{}", data);
        }
    }

    #[test]
    fn the_usage_chunk_takes_the_fast_path_and_others_do_not() {
        let chunk = r#"{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}"#;
        let u = only_usage(chunk).expect("the include_usage chunk");
        assert_eq!((u.prompt_tokens, u.completion_tokens), (9, 3));
        for other in [
            r#"{"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":1}}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1},"error":{"message":"m"}}"#,
            r#"{"type":"response.completed","response":{"usage":{"input_tokens":1}}}"#,
            r#"{"choices":[],"choices":[],"usage":{"prompt_tokens":1}}"#,
        ] {
            assert_eq!(only_usage(other), None, "{other}");
        }
    }

    fn run(chunks: &[&[u8]]) -> StreamOutcome {
        let mut tap = SseTap::new();
        for c in chunks {
            tap.feed(c);
        }
        tap.finish("gpt-4o")
    }

    #[test]
    fn line_ends_comments_and_multiline_data() {
        let body = b": keep-alive\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\r\rdata: {\"choices\":\ndata: [{\"delta\":{\"content\":\" world\"}}]}\n\ndata: [DONE]\n\n";
        let out = run(&[body]);
        assert!(out.saw_done && out.saw_event);
        assert_eq!(out.usage, None);
        assert_eq!(out.completion_text_tokens, 2);
        assert_eq!(out.error, None);
    }

    #[test]
    fn only_events_that_can_add_text_are_deferred() {
        let text = [
            &br#"{"choices":[{"delta":{"content":"hi"}}],"usage":null}"#[..],
            br#"{"choices":[{"delta":{"content":"\"usage\": {}"}}]}"#,
            br#"{"choices":[],"usage" :  null}"#,
        ];
        for t in text {
            assert_eq!(shape(t), Shape::Text, "{}", String::from_utf8_lossy(t));
        }
        assert_eq!(
            shape(br#"{"choices":[],"usage":{"prompt_tokens":1}}"#),
            Shape::Usage
        );
        assert_eq!(
            shape(br#"{"choices":[],"usage" : {"total_tokens":1}}"#),
            Shape::Usage
        );
        // Responses events and errors are read whole, a usage among them too.
        assert_eq!(shape(br#"{"type":"response.completed"}"#), Shape::Other);
        assert_eq!(
            shape(br#"{"type":"response.completed","response":{"usage":{"input_tokens":1}}}"#),
            Shape::Other
        );
        assert_eq!(shape(br#"{"error":"boom"}"#), Shape::Other);
    }

    #[test]
    fn deferred_text_is_counted_when_no_usage_arrives_and_skipped_when_it_does() {
        let chunk = |t: &str| {
            format!(
                "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{t}\"}}}}],\"usage\":null}}\n\n"
            )
        };
        let body: String = ["hello", " world"].iter().map(|t| chunk(t)).collect();
        let out = run(&[body.as_bytes(), b"data: [DONE]\n\n"]);
        assert_eq!(out.usage, None);
        assert_eq!(out.completion_text_tokens, 2);

        let usage = br#"data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#;
        let out = run(&[body.as_bytes(), usage, b"\n\ndata: [DONE]\n\n"]);
        assert_eq!(out.usage.map(|u| u.completion_tokens), Some(2));
        assert_eq!(out.completion_text_tokens, 0);

        // A long stream is read as it goes, and every word still counts.
        let long: String = (0..20_000).map(|_| chunk(" hello")).collect();
        let mut tap = SseTap::new();
        tap.feed(long.as_bytes());
        assert!(tap.deferred.len() <= MAX_DEFERRED);
        assert_eq!(tap.finish("gpt-4o").completion_text_tokens, 20_000);
    }

    #[test]
    fn comments_alone_are_not_events() {
        let out = run(&[b": ping\n\n: ping\n\n"]);
        assert!(!out.saw_event && !out.saw_done);
    }

    #[test]
    fn error_events() {
        let out = run(&[
            b"data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\"}}\n\n",
        ]);
        assert_eq!(out.error.as_deref(), Some("Rate limit reached"));
        let out = run(&[b"data: {\"error\":\"boom\"}\n\n"]);
        assert_eq!(out.error.as_deref(), Some("boom"));
        let out = run(&[b"event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"oops\"}\n\n"]);
        assert_eq!(out.error.as_deref(), Some("oops"));
    }

    #[test]
    fn unterminated_stream_is_processed_at_finish() {
        let out = run(&[b"data: {\"choices\":[{\"text\":\"hello world\"}]}"]);
        assert!(out.saw_event && !out.saw_done);
        assert_eq!(out.completion_text_tokens, 2);
    }

    #[test]
    fn overlong_lines_are_dropped() {
        let mut tap = SseTap::new();
        tap.feed(b"data: ");
        let big = vec![b'x'; 1024 * 1024];
        for _ in 0..17 {
            tap.feed(&big);
        }
        tap.feed(b"\n\ndata: [DONE]\n\n");
        let out = tap.finish("gpt-4");
        assert!(out.saw_done);
    }

    #[test]
    fn usage_or_estimate() {
        let out = run(&[b"data: {\"choices\":[{\"delta\":{\"content\":\"hello world\"}}]}\n\n"]);
        let u = out.usage_or_estimate(10);
        assert_eq!((u.prompt_tokens, u.completion_tokens), (10, 2));
    }

    #[test]
    fn include_usage_is_forced_only_on_streams() {
        let mut b = json!({"model": "m", "stream": true});
        ensure_include_usage(&mut b);
        assert_eq!(b["stream_options"], json!({"include_usage": true}));

        let mut b = json!({"stream": true, "stream_options": {"include_usage": false, "x": 1}});
        ensure_include_usage(&mut b);
        assert_eq!(b["stream_options"], json!({"include_usage": true, "x": 1}));

        let mut b = json!({"stream": true, "stream_options": null});
        ensure_include_usage(&mut b);
        assert_eq!(b["stream_options"], json!({"include_usage": true}));

        let mut b = json!({"stream": false});
        ensure_include_usage(&mut b);
        assert_eq!(b, json!({"stream": false}));
    }

    const USAGE: &str = r#""usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}"#;

    #[test]
    fn usage_only_chunks_compact_spaced_and_pretty() {
        let compact =
            format!(r#"{{"id":"c1","object":"chat.completion.chunk","choices":[],{USAGE}}}"#);
        assert!(is_usage_only_event(compact.as_bytes()));
        let event = format!("data: {compact}\n\n");
        assert!(is_usage_only_event(event.as_bytes()));
        let crlf = format!("event: message\r\ndata:{compact}\r\n\r\n");
        assert!(is_usage_only_event(crlf.as_bytes()));

        let spaced = r#"data: {"id": "c1", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}

"#;
        assert!(is_usage_only_event(spaced.as_bytes()));
        let pretty = serde_json::to_string_pretty(&json!({
            "id": "c1",
            "choices": [],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        }))
        .unwrap_or_default();
        assert!(pretty.contains('\n'));
        assert!(is_usage_only_event(pretty.as_bytes()));
        // Pretty JSON split over several `data` lines of one event.
        let multi: String = pretty.lines().map(|l| format!("data: {l}\n")).collect();
        assert!(is_usage_only_event(format!("{multi}\n").as_bytes()));
    }

    #[test]
    fn ordinary_chunks_are_not_usage_only() {
        for chunk in [
            r#"data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}"#.to_string(),
            // The last content chunk may carry usage too (some vendors): it has choices.
            format!(
                r#"data: {{"choices": [{{"index": 0, "delta": {{}}, "finish_reason": "stop"}}], {USAGE}}}"#
            ),
            // Content that merely mentions the words.
            r#"data: {"choices":[{"delta":{"content":""choices":[] and "usage":{}"}}]}"#
                .to_string(),
            r#"data: {"choices": [], "usage": null}"#.to_string(),
            r#"data: {"choices": [], "usage": 7}"#.to_string(),
            format!(r#"data: {{"choices": {{}}, {USAGE}}}"#),
            format!(r#"data: {{{USAGE}}}"#),
            "data: [DONE]".to_string(),
            "data: {not json usage".to_string(),
            ": usage comment".to_string(),
        ] {
            assert!(!is_usage_only_event(chunk.as_bytes()), "{chunk}");
        }
    }
}
