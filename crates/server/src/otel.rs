//! OpenTelemetry traces (cargo feature `otel`): the server's spans exported over OTLP/HTTP in
//! its JSON encoding to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (or `OTEL_EXPORTER_OTLP_ENDPOINT`
//! + `/v1/traces`), as resource `service.name` = `OTEL_SERVICE_NAME` (default `switchboard`).
//!
//! Every request is a server span (`request`: its id, method, route and status), every
//! upstream attempt a client span under it (`upstream`: channel, model, attempt, the failure's
//! status); other spans of the code are internal spans. A request carrying a W3C
//! `traceparent` continues the caller's trace. Spans are batched and sent from a thread of
//! their own every `OTEL_BSP_SCHEDULE_DELAY` milliseconds (default 1000) or at 512 spans;
//! at most 8192 wait (more are dropped and counted in the log); what waits is sent at shutdown.
//! A collector that is down costs a warning per failed batch, never a request.
//!
//! The exporter speaks the protocol itself (a few hundred lines, no OpenTelemetry SDK): the
//! SDK and its OTLP exporter would add a second reqwest, prost and their build time to every
//! build that enables the feature, for the one thing used here.

use std::fmt::Write as _;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// Where and how spans are sent, from the environment.
#[derive(Debug, Clone)]
pub struct Settings {
    pub url: String,
    pub service: String,
    pub delay: Duration,
}

impl Settings {
    /// The exporter's settings, or `None` when no endpoint is set (no export).
    pub fn from_env() -> Option<Settings> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let url = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| {
            var("OTEL_EXPORTER_OTLP_ENDPOINT")
                .map(|e| format!("{}/v1/traces", e.trim().trim_end_matches('/')))
        })?;
        let delay = match var("OTEL_BSP_SCHEDULE_DELAY") {
            None => 1000,
            Some(v) => v.trim().parse::<u64>().unwrap_or_else(|_| {
                eprintln!(
                    "switchboard: OTEL_BSP_SCHEDULE_DELAY must be a number of milliseconds \
                     (got {v:?}); using 1000"
                );
                1000
            }),
        }
        .clamp(10, 60_000);
        Some(Settings {
            url: url.trim().to_owned(),
            service: var("OTEL_SERVICE_NAME").unwrap_or_else(|| "switchboard".into()),
            delay: Duration::from_millis(delay),
        })
    }
}

/// Spans that ended and wait to be sent.
#[derive(Default)]
struct Queue {
    spans: Vec<Value>,
    dropped: u64,
    closing: bool,
}

const BATCH: usize = 512;
const MAX_QUEUED: usize = 8192;

/// The tracing layer and its exporter thread.
pub struct Exporter {
    queue: Arc<(Mutex<Queue>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The layer that records spans into the exporter's queue.
pub struct OtlpLayer {
    queue: Arc<(Mutex<Queue>, Condvar)>,
}

impl Exporter {
    /// Starts the exporter thread; `layer` gives what to install in the subscriber.
    pub fn start(settings: Settings) -> std::io::Result<Exporter> {
        let queue: Arc<(Mutex<Queue>, Condvar)> = Arc::default();
        let q = Arc::clone(&queue);
        let thread = std::thread::Builder::new()
            .name("otlp-export".into())
            .spawn(move || export_loop(&settings, &q))?;
        Ok(Exporter {
            queue,
            thread: Some(thread),
        })
    }

    pub fn layer(&self) -> OtlpLayer {
        OtlpLayer {
            queue: Arc::clone(&self.queue),
        }
    }

    /// Sends what waits and stops the thread.
    pub fn shutdown(mut self) {
        {
            let (lock, cv) = &*self.queue;
            lock.lock().unwrap_or_else(|e| e.into_inner()).closing = true;
            cv.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn export_loop(settings: &Settings, queue: &(Mutex<Queue>, Condvar)) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        eprintln!("switchboard: the trace exporter could not start its runtime");
        return;
    };
    let client = match reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("switchboard: the trace exporter could not build its client: {e}");
            return;
        }
    };
    let resource = json!({"attributes": [attr("service.name", &json!(settings.service))]});
    loop {
        let (batch, dropped, closing) = {
            let (lock, cv) = queue;
            let mut q = lock.lock().unwrap_or_else(|e| e.into_inner());
            if !q.closing && q.spans.len() < BATCH {
                q = cv
                    .wait_timeout(q, settings.delay)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            let n = q.spans.len().min(BATCH);
            let batch: Vec<Value> = q.spans.drain(..n).collect();
            (batch, std::mem::take(&mut q.dropped), q.closing)
        };
        if dropped > 0 {
            tracing::warn!("{dropped} trace spans were dropped: the exporter fell behind");
        }
        if !batch.is_empty() {
            let body = json!({"resourceSpans": [{
                "resource": resource,
                "scopeSpans": [{"scope": {"name": "switchboard"}, "spans": batch}],
            }]});
            let sent = rt.block_on(async { client.post(&settings.url).json(&body).send().await });
            match sent {
                Ok(r) if r.status().is_success() => {}
                Ok(r) => tracing::warn!("the trace collector refused a batch: {}", r.status()),
                Err(e) => tracing::warn!("the trace collector could not be reached: {e}"),
            }
        }
        let done = {
            let q = queue.0.lock().unwrap_or_else(|e| e.into_inner());
            closing && q.spans.is_empty()
        };
        if done {
            return;
        }
    }
}

/// An OTLP attribute.
fn attr(key: &str, value: &Value) -> Value {
    let v = match value {
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n.as_f64()}),
        Value::String(s) => json!({"stringValue": s}),
        other => json!({"stringValue": other.to_string()}),
    };
    json!({"key": key, "value": v})
}

/// What is kept of a span while it is open (in its extensions).
struct Open {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    parent: Option<[u8; 8]>,
    start: SystemTime,
    fields: Vec<(String, Value)>,
}

/// Collects a span's fields.
struct Fields<'a>(&'a mut Vec<(String, Value)>);

impl Fields<'_> {
    fn set(&mut self, field: &Field, value: Value) {
        let name = field.name();
        match self.0.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name.to_owned(), value)),
        }
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, json!(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, json!(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set(field, json!(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field, json!(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field, json!(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field, json!(format!("{value:?}")));
    }
}

/// The trace id and parent span id of a W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`),
/// when it is well formed and neither id is all zeros.
pub fn parse_traceparent(tp: &str) -> Option<([u8; 16], [u8; 8])> {
    let parts: Vec<&str> = tp.trim().split('-').collect();
    let [version, trace, parent, flags] = parts.as_slice() else {
        return None;
    };
    if version.len() != 2 || *version == "ff" || flags.len() != 2 {
        return None;
    }
    let mut t = [0u8; 16];
    let mut p = [0u8; 8];
    hex_into(trace, &mut t)?;
    hex_into(parent, &mut p)?;
    (t != [0; 16] && p != [0; 8]).then_some((t, p))
}

fn hex_into(s: &str, out: &mut [u8]) -> Option<()> {
    if s.len() != out.len() * 2 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(())
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unix_nanos(t: SystemTime) -> String {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
        .to_string()
}

impl<S> Layer<S> for OtlpLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        let from_parent = span.parent().and_then(|p| {
            p.extensions()
                .get::<Open>()
                .map(|o| (o.trace_id, o.span_id))
        });
        let (trace_id, parent) = match from_parent {
            Some((t, p)) => (t, Some(p)),
            None => match fields
                .iter()
                .find(|(k, _)| k == "traceparent")
                .and_then(|(_, v)| v.as_str())
                .and_then(parse_traceparent)
            {
                Some((t, p)) => (t, Some(p)),
                None => (rand::random(), None),
            },
        };
        span.extensions_mut().insert(Open {
            trace_id,
            span_id: rand::random(),
            parent,
            start: SystemTime::now(),
            fields,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let told_parent = span
                .metadata()
                .fields()
                .field("traceparent")
                .is_some_and(|f| values.contains(&f));
            if let Some(open) = span.extensions_mut().get_mut::<Open>() {
                values.record(&mut Fields(&mut open.fields));
                // A root span told the caller's `traceparent` after it began (the request
                // span records it before any child span exists): it joins the caller's trace.
                if told_parent && open.parent.is_none() {
                    if let Some((t, p)) = open
                        .fields
                        .iter()
                        .find(|(k, _)| k == "traceparent")
                        .and_then(|(_, v)| v.as_str())
                        .and_then(parse_traceparent)
                    {
                        open.trace_id = t;
                        open.parent = Some(p);
                    }
                }
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(open) = span.extensions_mut().remove::<Open>() else {
            return;
        };
        let name = span.name();
        // SERVER for a request, CLIENT for an upstream attempt, INTERNAL otherwise.
        let kind = match name {
            "request" => 2,
            "upstream" => 3,
            _ => 1,
        };
        let attributes: Vec<Value> = open
            .fields
            .iter()
            .filter(|(k, _)| k != "traceparent")
            .map(|(k, v)| attr(k, v))
            .collect();
        let mut s = json!({
            "traceId": hex(&open.trace_id),
            "spanId": hex(&open.span_id),
            "name": name,
            "kind": kind,
            "startTimeUnixNano": unix_nanos(open.start),
            "endTimeUnixNano": unix_nanos(SystemTime::now()),
            "attributes": attributes,
        });
        if let Some(p) = open.parent {
            s["parentSpanId"] = json!(hex(&p));
        }
        if let Some(code) = open
            .fields
            .iter()
            .find(|(k, _)| k == "http.response.status_code")
            .and_then(|(_, v)| v.as_u64())
        {
            // An error status for 5xx answers of a request and any failed attempt.
            if (kind == 2 && code >= 500) || kind == 3 {
                s["status"] = json!({"code": 2});
            }
        }
        let (lock, cv) = &*self.queue;
        let mut q = lock.lock().unwrap_or_else(|e| e.into_inner());
        if q.spans.len() >= MAX_QUEUED {
            q.dropped += 1;
            return;
        }
        q.spans.push(s);
        if q.spans.len() >= BATCH {
            cv.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_is_read_strictly() {
        let (t, p) =
            parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(hex(&t), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(hex(&p), "00f067aa0ba902b7");
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e47zz-00f067aa0ba902b7-01",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn attributes_take_otlp_value_types() {
        assert_eq!(attr("a", &json!(3))["value"], json!({"intValue": "3"}));
        assert_eq!(attr("a", &json!(true))["value"], json!({"boolValue": true}));
        assert_eq!(attr("a", &json!("x"))["value"], json!({"stringValue": "x"}));
        assert_eq!(attr("a", &json!(1.5))["value"], json!({"doubleValue": 1.5}));
    }
}
