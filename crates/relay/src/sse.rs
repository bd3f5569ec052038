//! A small server-sent-events reader (for upstreams whose streams are translated) and the
//! writer of OpenAI-style `data:` events.

use serde::Serialize;

/// A line longer than this is dropped rather than buffered further.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// One event: its `event:` name (empty when none) and its `data` lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// Splits an SSE byte stream into events, whatever the chunking: LF, CRLF and CR line ends,
/// comments, multi-line data, UTF-8 sequences split across chunks.
#[derive(Debug, Default)]
pub struct SseReader {
    line: Vec<u8>,
    after_cr: bool,
    overflow: bool,
    event: String,
    data: String,
    has_data: bool,
}

/// A translator that reads its input stream one SSE event at a time (the upstream's stream, or
/// the OpenAI chunks of a bridged one): [`EventTranslator::feed`] and
/// [`EventTranslator::finish`] are written once here, each translator gives what it does with an
/// event and at a clean end.
pub trait EventTranslator {
    /// The reader of the input and its event buffer.
    fn reader(&mut self) -> (&mut SseReader, &mut Vec<SseEvent>);
    /// Writes what one input event gives to `out`.
    fn event(&mut self, e: &SseEvent, out: &mut Vec<u8>);
    /// The input ended cleanly after its last event: what is still to be written.
    fn end(&mut self, out: &mut Vec<u8>);

    /// The output for the next input chunk (often empty: partial events wait).
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let (reader, buffer) = self.reader();
        let mut events = std::mem::take(buffer);
        reader.feed(chunk, &mut events);
        for e in events.drain(..) {
            self.event(&e, out);
        }
        *self.reader().1 = events;
    }

    /// The input ended cleanly: a pending event, then [`EventTranslator::end`].
    fn finish(&mut self, out: &mut Vec<u8>) {
        let mut events = Vec::new();
        self.reader().0.finish(&mut events);
        for e in &events {
            self.event(e, out);
        }
        self.end(out);
    }
}

impl SseReader {
    pub fn new() -> Self {
        SseReader::default()
    }

    /// Reads `chunk`; complete events are appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        while let Some(i) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.append(&rest[..i]);
            self.end_line(out);
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

    /// The stream ended: an unterminated last line and a pending event are completed.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            self.end_line(out);
        }
        self.dispatch(out);
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

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        if self.overflow {
            self.overflow = false;
            return;
        }
        if self.line.is_empty() {
            self.dispatch(out);
            return;
        }
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.starts_with(':') {
            return;
        }
        let (name, value) = match line.split_once(':') {
            Some((n, v)) => (n, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match name {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => value.clone_into(&mut self.event),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if !self.has_data {
            self.event.clear();
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event: std::mem::take(&mut self.event),
            data: std::mem::take(&mut self.data),
        });
    }
}

/// Appends `data: <json>\n\n`.
pub fn write_data<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    out.extend_from_slice(b"data: ");
    // Serialising a JSON value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, v);
    out.extend_from_slice(b"\n\n");
}

/// Appends `data: [DONE]\n\n`.
pub fn write_done(out: &mut Vec<u8>) {
    out.extend_from_slice(b"data: [DONE]\n\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_across_any_split() {
        let body = b"event: message_start\r\ndata: {\"a\":1}\r\n\r\n: ping\n\nevent: x\ndata: l1\ndata: l2\n\ndata: tail";
        for cut in 0..body.len() {
            let mut r = SseReader::new();
            let mut out = Vec::new();
            r.feed(&body[..cut], &mut out);
            r.feed(&body[cut..], &mut out);
            r.finish(&mut out);
            assert_eq!(
                out,
                vec![
                    SseEvent {
                        event: "message_start".into(),
                        data: "{\"a\":1}".into()
                    },
                    SseEvent {
                        event: "x".into(),
                        data: "l1\nl2".into()
                    },
                    SseEvent {
                        event: String::new(),
                        data: "tail".into()
                    },
                ],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn writer() {
        let mut out = Vec::new();
        write_data(&mut out, &serde_json::json!({"a": 1}));
        write_done(&mut out);
        assert_eq!(out, b"data: {\"a\":1}\n\ndata: [DONE]\n\n");
    }
}
