//! The system log: the last [`DEFAULT_CAPACITY`] lines of this process's own log, kept in memory
//! for the console's system-log screen (`GET /api/system/log`).
//!
//! The server binary installs [`LogBuffer::layer`] of [`global`] into its tracing subscriber, so
//! the buffer sees exactly the events the configured `LOG_LEVEL` lets through. A line holds the
//! event's time (RFC 3339, UTC), level, target, message and fields: log messages are secret-free
//! by policy and nothing here reads a request body. Each line is cut at [`MAX_LINE_CHARS`] so the
//! buffer's memory stays bounded. Lines carry a sequence number, increasing for the life of the
//! process, that the console polls with (`after`).

use serde::Serialize;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// Lines kept by [`global`].
pub const DEFAULT_CAPACITY: usize = 2000;
/// Longest line text kept, in characters (longer ones are cut and end with `…`).
pub const MAX_LINE_CHARS: usize = 4096;

/// One captured line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    pub seq: u64,
    /// RFC 3339, UTC, milliseconds.
    pub time: String,
    /// `ERROR`, `WARN`, `INFO`, `DEBUG` or `TRACE`.
    pub level: String,
    /// `target: message key=value ...`
    pub text: String,
}

/// A page of lines and the sequence number to poll after next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPage {
    pub lines: Vec<LogLine>,
    /// The last line's `seq` (the `after` of the next poll); the requested `after` when no line
    /// is newer.
    pub next: u64,
    /// Lines after `after` were dropped from the buffer before being read.
    pub truncated: bool,
}

struct Ring {
    lines: VecDeque<LogLine>,
    /// Sequence number of the newest line (0: none yet).
    last_seq: u64,
}

/// A bounded ring of log lines; the oldest line goes when a new one would exceed the capacity.
pub struct LogBuffer {
    capacity: usize,
    ring: Mutex<Ring>,
}

impl LogBuffer {
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        LogBuffer {
            capacity,
            ring: Mutex::new(Ring {
                lines: VecDeque::with_capacity(capacity.min(DEFAULT_CAPACITY)),
                last_seq: 0,
            }),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn lock(&self) -> MutexGuard<'_, Ring> {
        // A panic while holding the lock cannot leave the ring inconsistent (push and read
        // are single steps), so a poisoned lock is still usable.
        self.ring.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends a line stamped with the current time; returns its sequence number.
    pub fn push(&self, level: &str, text: &str) -> u64 {
        self.push_at(now_rfc3339(), level, text)
    }

    fn push_at(&self, time: String, level: &str, text: &str) -> u64 {
        let text = cut(text);
        let mut ring = self.lock();
        ring.last_seq += 1;
        let seq = ring.last_seq;
        if ring.lines.len() >= self.capacity {
            ring.lines.pop_front();
        }
        ring.lines.push_back(LogLine {
            seq,
            time,
            level: level.to_owned(),
            text,
        });
        seq
    }

    /// Up to `limit` lines after `after`, oldest first. An `after` newer than every line (the
    /// process restarted since the caller's last poll) starts over from the oldest line.
    pub fn after(&self, after: u64, limit: usize) -> LogPage {
        let ring = self.lock();
        let after = if after > ring.last_seq { 0 } else { after };
        let first = ring.lines.front().map_or(ring.last_seq + 1, |l| l.seq);
        let lines: Vec<LogLine> = ring
            .lines
            .iter()
            .skip_while(|l| l.seq <= after)
            .take(limit)
            .cloned()
            .collect();
        LogPage {
            next: lines.last().map_or(after, |l| l.seq),
            truncated: after + 1 < first,
            lines,
        }
    }

    /// The newest `limit` lines, oldest first (the first load of the screen).
    pub fn tail(&self, limit: usize) -> LogPage {
        let ring = self.lock();
        let skip = ring.lines.len().saturating_sub(limit);
        let lines: Vec<LogLine> = ring.lines.iter().skip(skip).cloned().collect();
        LogPage {
            next: ring.last_seq,
            truncated: false,
            lines,
        }
    }

    /// A tracing layer that copies every event it sees into this buffer.
    pub fn layer(self: &Arc<Self>) -> LogBufferLayer {
        LogBufferLayer {
            buffer: Arc::clone(self),
        }
    }
}

/// The process-wide buffer shared by the server's subscriber and the API.
pub fn global() -> &'static Arc<LogBuffer> {
    static GLOBAL: OnceLock<Arc<LogBuffer>> = OnceLock::new();
    GLOBAL.get_or_init(|| Arc::new(LogBuffer::new(DEFAULT_CAPACITY)))
}

/// See [`LogBuffer::layer`].
pub struct LogBufferLayer {
    buffer: Arc<LogBuffer>,
}

impl<S: Subscriber> Layer<S> for LogBufferLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        let mut v = LineVisitor::default();
        event.record(&mut v);
        let mut text = format!("{}: {}", meta.target(), v.message);
        if !v.fields.is_empty() {
            if !v.message.is_empty() {
                text.push(' ');
            }
            text.push_str(&v.fields);
        }
        self.buffer.push(meta.level().as_str(), &text);
    }
}

#[derive(Default)]
struct LineVisitor {
    message: String,
    fields: String,
}

impl LineVisitor {
    fn sep(&mut self) {
        if !self.fields.is_empty() {
            self.fields.push(' ');
        }
    }
}

impl Visit for LineVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.sep();
            let _ = write!(self.fields, "{}={value:?}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            self.sep();
            let _ = write!(self.fields, "{}={value:?}", field.name());
        }
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => text.to_owned(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

/// Year, month and day of a count of days since 1970-01-01 (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// `YYYY-MM-DD` of a unix time (UTC).
pub fn utc_date(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// RFC 3339 (UTC, milliseconds) of a unix time.
pub fn rfc3339(secs: i64, millis: u32) -> String {
    let s = secs.rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}.{millis:03}Z",
        utc_date(secs),
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

fn now_rfc3339() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(
        i64::try_from(d.as_secs()).unwrap_or_default(),
        d.subsec_millis(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn dates() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(-1), "1969-12-31");
        assert_eq!(rfc3339(1_798_761_599, 7), "2026-12-31T23:59:59.007Z");
    }

    #[test]
    fn keeps_the_last_lines_and_pages_after_a_seq() {
        let b = LogBuffer::new(3);
        for i in 1..=5 {
            assert_eq!(b.push("INFO", &format!("line {i}")), i);
        }
        let p = b.after(0, 10);
        let seqs: Vec<u64> = p.lines.iter().map(|l| l.seq).collect();
        assert_eq!(seqs, [3, 4, 5]);
        assert!(p.truncated, "lines 1 and 2 are gone");
        assert_eq!(p.next, 5);
        let p = b.after(3, 1);
        assert_eq!(p.lines[0].text, "line 4");
        assert_eq!((p.next, p.truncated), (4, false));
        let p = b.after(5, 10);
        assert!(p.lines.is_empty());
        assert_eq!(p.next, 5);
        // An `after` from a previous process starts over.
        assert_eq!(b.after(99, 10).lines.len(), 3);
        assert_eq!(b.tail(2).lines[0].seq, 4);
        assert!(b.after(0, 10).lines[0].time.ends_with('Z'));
    }

    #[test]
    fn long_lines_are_cut() {
        let b = LogBuffer::new(2);
        b.push("WARN", &"é".repeat(MAX_LINE_CHARS + 10));
        let l = &b.after(0, 1).lines[0];
        assert_eq!(l.text.chars().count(), MAX_LINE_CHARS + 1);
        assert!(l.text.ends_with('…'));
    }

    #[test]
    fn the_layer_captures_level_target_message_and_fields() {
        let b = Arc::new(LogBuffer::new(10));
        let sub = tracing_subscriber::registry().with(b.layer());
        tracing::subscriber::with_default(sub, || {
            tracing::warn!(target: "switchboard::test", channel_id = 7, name = "ch", "channel disabled");
            tracing::info!("plain");
        });
        let p = b.after(0, 10);
        assert_eq!(p.lines.len(), 2);
        assert_eq!(p.lines[0].level, "WARN");
        assert_eq!(
            p.lines[0].text,
            "switchboard::test: channel disabled channel_id=7 name=\"ch\""
        );
        assert_eq!(p.lines[1].level, "INFO");
        assert!(p.lines[1].text.ends_with(": plain"), "{}", p.lines[1].text);
    }
}
