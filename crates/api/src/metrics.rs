//! This node's request metrics, rendered by `/metrics` in Prometheus' text format beside the
//! gauges of `routes::health`: HTTP requests by matched route, relayed calls by model and
//! channel, upstream failures, retries.
//!
//! Recording is on every request's path, so it costs a few atomic additions: counters and
//! fixed-bucket histograms are atomics, series are found in maps under a read lock by borrowed
//! keys (`&str`, channel id) and only a series seen for the first time takes the write lock and
//! allocates its key. Label sets are bounded: HTTP routes are the application's route patterns
//! (never raw paths), and the relay's distinct (model, channel) pairs, models of retries and
//! (channel, status) pairs of upstream errors are capped; what comes after a cap is counted
//! under `other`.

use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use switchboard_relay::provider::UpstreamFailure;

/// Upper bounds of the latency histograms' buckets, in seconds (Prometheus' defaults, then
/// longer ones for long generations and streams).
pub const BUCKETS: [f64; 15] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// [`BUCKETS`] in nanoseconds, compared without floating point when observing.
const BOUNDS_NS: [u64; 15] = [
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
    30_000_000_000,
    60_000_000_000,
    120_000_000_000,
    300_000_000_000,
];

/// The label value that collects what comes after a cap.
pub const OTHER: &str = "other";
/// The route label of a request no route matched (404s of unknown paths).
pub const UNMATCHED: &str = "unmatched";

/// Most distinct (model, channel) pairs of the relay series.
pub const MAX_RELAY_SERIES: usize = 2000;
/// Most distinct models of the retry counter.
pub const MAX_RETRY_MODELS: usize = 2000;
/// Most distinct (channel, status) pairs of the upstream error counter.
pub const MAX_UPSTREAM_ERROR_SERIES: usize = 2000;
/// Most distinct route labels (the application has a few hundred route patterns).
pub const MAX_ROUTES: usize = 1000;

/// A histogram with the fixed [`BUCKETS`]: one counter per bucket (not cumulative; summed when
/// rendered, so that `_count` and the `+Inf` bucket always agree) and the sum in nanoseconds.
pub struct Histogram {
    buckets: [AtomicU64; BUCKETS.len() + 1],
    sum_ns: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_ns: AtomicU64::new(0),
        }
    }
}

impl Histogram {
    pub fn observe(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        // The first bucket whose bound is >= the value (`le`), else +Inf.
        let i = BOUNDS_NS.partition_point(|&b| b < ns);
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }

    /// `name_bucket{labels,le=..}` lines (cumulative), `name_sum` and `name_count`. `labels`
    /// is the rendered label list without braces (may be empty).
    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0u64;
        for (i, b) in self.buckets.iter().enumerate() {
            cumulative += b.load(Ordering::Relaxed);
            match BUCKETS.get(i) {
                Some(le) => {
                    let _ = writeln!(
                        out,
                        "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {cumulative}"
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {cumulative}"
                    );
                }
            }
        }
        let sum = self.sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
        let braces = |l: &str| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{{{l}}}")
            }
        };
        let _ = writeln!(out, "{name}_sum{} {sum}", braces(labels));
        let _ = writeln!(out, "{name}_count{} {cumulative}", braces(labels));
    }
}

/// A label value escaped for the text format (backslash, double quote, newline).
fn escape(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains(['\\', '"', '\n']) {
        return std::borrow::Cow::Borrowed(v);
    }
    let mut s = String::with_capacity(v.len() + 4);
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    std::borrow::Cow::Owned(s)
}

fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn help(out: &mut String, name: &str, kind: &str, text: &str) {
    let _ = writeln!(out, "# HELP {name} {text}\n# TYPE {name} {kind}");
}

/// The HTTP methods kept apart in the `method` label; anything else is `other`.
const METHODS: [&str; 8] = [
    "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", OTHER,
];

/// The index of `method` in [`METHODS`].
pub fn method_index(method: &actix_web::http::Method) -> usize {
    METHODS[..METHODS.len() - 1]
        .iter()
        .position(|m| *m == method.as_str())
        .unwrap_or(METHODS.len() - 1)
}

/// One route and method: its answers by status and its duration.
#[derive(Default)]
struct HttpSeries {
    duration: Histogram,
    /// (status, count), a handful per route.
    statuses: RwLock<Vec<(u16, AtomicU64)>>,
}

impl HttpSeries {
    fn record(&self, status: u16, took: Duration) {
        self.duration.observe(took);
        {
            let s = read(&self.statuses);
            if let Some((_, n)) = s.iter().find(|(code, _)| *code == status) {
                n.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        let mut s = write(&self.statuses);
        match s.iter().find(|(code, _)| *code == status) {
            Some((_, n)) => {
                n.fetch_add(1, Ordering::Relaxed);
            }
            None => s.push((status, AtomicU64::new(1))),
        }
    }
}

/// One route label: a series per method.
#[derive(Default)]
struct Route {
    methods: [HttpSeries; METHODS.len()],
}

/// How a relayed call ended (the `outcome` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// An upstream answered and the answer was relayed.
    Success,
    /// Every channel tried failed; the client got the last upstream failure.
    UpstreamError,
    /// No channel could be tried.
    NoChannel,
    /// An upstream answered, but its answer broke off or could not be relayed.
    Interrupted,
    /// Answered from the response cache, no upstream.
    CacheHit,
    /// The client went away before an answer.
    Aborted,
}

impl Outcome {
    const ALL: [Outcome; 6] = [
        Outcome::Success,
        Outcome::UpstreamError,
        Outcome::NoChannel,
        Outcome::Interrupted,
        Outcome::CacheHit,
        Outcome::Aborted,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::UpstreamError => "upstream_error",
            Outcome::NoChannel => "no_channel",
            Outcome::Interrupted => "interrupted",
            Outcome::CacheHit => "cache_hit",
            Outcome::Aborted => "aborted",
        }
    }

    /// The outcome of a refusal the dispatch loop returned.
    pub fn of_refusal(r: &switchboard_relay::refusal::Refusal) -> Outcome {
        if r.code == "no_available_channel" {
            Outcome::NoChannel
        } else {
            Outcome::UpstreamError
        }
    }
}

/// One (model, channel) pair of the relay.
#[derive(Default)]
struct RelaySeries {
    outcomes: [AtomicU64; Outcome::ALL.len()],
    duration: Histogram,
    first_byte: Histogram,
}

#[derive(Default)]
struct RelayMap {
    by_model: HashMap<String, HashMap<i64, RelaySeries>>,
    pairs: usize,
}

/// What an upstream failure is counted as (the `status` label): the upstream's HTTP status, or
/// the kind of failure when there was none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum FailureKind {
    Status(u16),
    Timeout,
    Connect,
    Transport,
    /// The channel could not be called as configured (no adapter, refused destination, ...).
    Config,
    Other,
}

impl FailureKind {
    fn of(f: &UpstreamFailure) -> FailureKind {
        match f.code.as_deref() {
            Some("upstream_timeout") => FailureKind::Timeout,
            Some("upstream_connect_error") => FailureKind::Connect,
            Some("upstream_transport_error") => FailureKind::Transport,
            Some("channel_config_error") => FailureKind::Config,
            _ => FailureKind::Status(f.status),
        }
    }

    fn label(self) -> std::borrow::Cow<'static, str> {
        match self {
            FailureKind::Status(s) => s.to_string().into(),
            FailureKind::Timeout => "timeout".into(),
            FailureKind::Connect => "connect".into(),
            FailureKind::Transport => "transport".into(),
            FailureKind::Config => "config".into(),
            FailureKind::Other => OTHER.into(),
        }
    }
}

/// The channel id under which overflowing upstream errors are counted (rendered `other`).
const OTHER_CHANNEL: i64 = -1;

/// The caps of [`Metrics`] (tests use small ones).
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    pub relay_series: usize,
    pub retry_models: usize,
    pub upstream_error_series: usize,
    pub routes: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            relay_series: MAX_RELAY_SERIES,
            retry_models: MAX_RETRY_MODELS,
            upstream_error_series: MAX_UPSTREAM_ERROR_SERIES,
            routes: MAX_ROUTES,
        }
    }
}

/// Every request metric of this node.
#[derive(Default)]
pub struct Metrics {
    caps: Caps,
    http: RwLock<HashMap<String, Route>>,
    relay: RwLock<RelayMap>,
    upstream_errors: RwLock<HashMap<(i64, FailureKind), AtomicU64>>,
    retries: RwLock<HashMap<String, AtomicU64>>,
}

impl Metrics {
    pub fn with_caps(caps: Caps) -> Self {
        Metrics {
            caps,
            ..Metrics::default()
        }
    }

    /// One answered HTTP request at `path`: a path that is itself a known route label (a route
    /// without parameters, the relay's) is counted under it at once; any other is counted under
    /// the route pattern `pattern` gives (matched by actix; [`UNMATCHED`] when none matched).
    pub fn http_request_at(
        &self,
        path: &str,
        pattern: impl FnOnce() -> Option<String>,
        method: usize,
        status: u16,
        took: Duration,
    ) {
        let method = method.min(METHODS.len() - 1);
        {
            let routes = read(&self.http);
            if let Some(r) = routes.get(path) {
                r.methods[method].record(status, took);
                return;
            }
        }
        let pattern = pattern();
        self.http_request(
            pattern.as_deref().unwrap_or(UNMATCHED),
            method,
            status,
            took,
        );
    }

    /// One answered HTTP request: `route` is the matched route pattern (or [`UNMATCHED`]).
    pub fn http_request(&self, route: &str, method: usize, status: u16, took: Duration) {
        let method = method.min(METHODS.len() - 1);
        {
            let routes = read(&self.http);
            if let Some(r) = routes.get(route) {
                r.methods[method].record(status, took);
                return;
            }
        }
        let mut routes = write(&self.http);
        let key = if routes.len() >= self.caps.routes && !routes.contains_key(route) {
            OTHER
        } else {
            route
        };
        if !routes.contains_key(key) {
            routes.insert(key.to_owned(), Route::default());
        }
        if let Some(r) = routes.get(key) {
            r.methods[method].record(status, took);
        }
    }

    /// Runs `f` on the (model, channel) series, created on first use; past the cap, a new pair
    /// is counted under model [`OTHER`].
    fn relay_series(&self, model: &str, channel: i64, f: impl Fn(&RelaySeries)) {
        {
            let map = read(&self.relay);
            if let Some(s) = map.by_model.get(model).and_then(|m| m.get(&channel)) {
                return f(s);
            }
            if map.pairs >= self.caps.relay_series {
                if let Some(s) = map.by_model.get(OTHER).and_then(|m| m.get(&channel)) {
                    return f(s);
                }
            }
        }
        let mut map = write(&self.relay);
        let exists = map
            .by_model
            .get(model)
            .is_some_and(|m| m.contains_key(&channel));
        let model = if !exists && map.pairs >= self.caps.relay_series {
            OTHER
        } else {
            model
        };
        let RelayMap { by_model, pairs } = &mut *map;
        if !by_model.contains_key(model) {
            by_model.insert(model.to_owned(), HashMap::new());
        }
        if let Some(channels) = by_model.get_mut(model) {
            let s = channels.entry(channel).or_insert_with(|| {
                *pairs += 1;
                RelaySeries::default()
            });
            f(s);
        }
    }

    /// A relayed call ended: `channel` is the channel that answered or was tried last (0 for
    /// none), `took` the whole call (to the end of a stream).
    pub fn relay_request(&self, model: &str, channel: i64, outcome: Outcome, took: Duration) {
        self.relay_series(model, channel, |s| {
            s.outcomes[outcome as usize].fetch_add(1, Ordering::Relaxed);
            s.duration.observe(took);
        });
    }

    /// One upstream attempt ended (the dispatch loop's hook): attempts after the first are
    /// retries; a success's time to the upstream's answer is its first byte; a failure is
    /// counted by channel and status.
    pub fn attempt(
        &self,
        model: &str,
        channel: i64,
        index: usize,
        took: Duration,
        failure: Option<&UpstreamFailure>,
    ) {
        if index > 0 {
            self.retry(model);
        }
        match failure {
            None => self.relay_series(model, channel, |s| s.first_byte.observe(took)),
            Some(f) => self.upstream_error(channel, FailureKind::of(f)),
        }
    }

    fn retry(&self, model: &str) {
        {
            let r = read(&self.retries);
            if let Some(n) = r.get(model) {
                n.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        let mut r = write(&self.retries);
        let key = if r.len() >= self.caps.retry_models && !r.contains_key(model) {
            OTHER
        } else {
            model
        };
        match r.get(key) {
            Some(n) => {
                n.fetch_add(1, Ordering::Relaxed);
            }
            None => {
                r.insert(key.to_owned(), AtomicU64::new(1));
            }
        }
    }

    fn upstream_error(&self, channel: i64, kind: FailureKind) {
        {
            let e = read(&self.upstream_errors);
            if let Some(n) = e.get(&(channel, kind)) {
                n.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        let mut e = write(&self.upstream_errors);
        let key = if e.len() >= self.caps.upstream_error_series && !e.contains_key(&(channel, kind))
        {
            (OTHER_CHANNEL, FailureKind::Other)
        } else {
            (channel, kind)
        };
        e.entry(key)
            .or_insert_with(|| AtomicU64::new(0))
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Appends every request metric in the text format (families sorted by label).
    pub fn render(&self, out: &mut String) {
        self.render_http(out);
        self.render_relay(out);
        self.render_errors(out);
    }

    fn render_http(&self, out: &mut String) {
        let routes = read(&self.http);
        let sorted: BTreeMap<&str, &Route> = routes.iter().map(|(k, v)| (k.as_str(), v)).collect();
        help(
            out,
            "switchboard_http_requests_total",
            "counter",
            "HTTP requests answered, by matched route pattern, method and status.",
        );
        for (route, r) in &sorted {
            for (m, s) in r.methods.iter().enumerate() {
                let mut statuses: Vec<(u16, u64)> = read(&s.statuses)
                    .iter()
                    .map(|(c, n)| (*c, n.load(Ordering::Relaxed)))
                    .collect();
                statuses.sort_unstable();
                for (code, n) in statuses {
                    let _ = writeln!(
                        out,
                        "switchboard_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{code}\"}} {n}",
                        escape(route),
                        METHODS[m]
                    );
                }
            }
        }
        help(
            out,
            "switchboard_http_request_duration_seconds",
            "histogram",
            "Time from a request's arrival to its response head, by matched route pattern and method.",
        );
        for (route, r) in &sorted {
            for (m, s) in r.methods.iter().enumerate() {
                if s.duration.count() == 0 {
                    continue;
                }
                let labels = format!("route=\"{}\",method=\"{}\"", escape(route), METHODS[m]);
                s.duration
                    .render(out, "switchboard_http_request_duration_seconds", &labels);
            }
        }
    }

    fn render_relay(&self, out: &mut String) {
        let map = read(&self.relay);
        let mut sorted: Vec<(&str, i64, &RelaySeries)> = map
            .by_model
            .iter()
            .flat_map(|(m, chans)| chans.iter().map(move |(c, s)| (m.as_str(), *c, s)))
            .collect();
        sorted.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let labels = |model: &str, channel: i64| {
            format!(
                "model=\"{}\",channel=\"{}\"",
                escape(model),
                channel_label(channel)
            )
        };
        help(
            out,
            "switchboard_relay_requests_total",
            "counter",
            "Relayed calls by model (as asked), channel (that answered or was tried last; none when none was) and outcome.",
        );
        for (model, channel, s) in &sorted {
            for o in Outcome::ALL {
                let n = s.outcomes[o as usize].load(Ordering::Relaxed);
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "switchboard_relay_requests_total{{{},outcome=\"{}\"}} {n}",
                        labels(model, *channel),
                        o.as_str()
                    );
                }
            }
        }
        help(
            out,
            "switchboard_relay_request_duration_seconds",
            "histogram",
            "Whole relayed calls (to the end of a stream), by model and channel.",
        );
        for (model, channel, s) in &sorted {
            if s.duration.count() > 0 {
                s.duration.render(
                    out,
                    "switchboard_relay_request_duration_seconds",
                    &labels(model, *channel),
                );
            }
        }
        help(
            out,
            "switchboard_upstream_first_byte_seconds",
            "histogram",
            "Time from the start of a successful upstream attempt to the upstream's response head, by model and channel.",
        );
        for (model, channel, s) in &sorted {
            if s.first_byte.count() > 0 {
                s.first_byte.render(
                    out,
                    "switchboard_upstream_first_byte_seconds",
                    &labels(model, *channel),
                );
            }
        }
    }

    fn render_errors(&self, out: &mut String) {
        help(
            out,
            "switchboard_upstream_errors_total",
            "counter",
            "Failed upstream attempts by channel and status (the upstream's HTTP status, or timeout, connect, transport, config).",
        );
        let errors = read(&self.upstream_errors);
        let mut sorted: Vec<(&(i64, FailureKind), u64)> = errors
            .iter()
            .map(|(k, n)| (k, n.load(Ordering::Relaxed)))
            .collect();
        sorted.sort_unstable_by_key(|(k, _)| **k);
        for ((channel, kind), n) in sorted {
            let _ = writeln!(
                out,
                "switchboard_upstream_errors_total{{channel=\"{}\",status=\"{}\"}} {n}",
                channel_label(*channel),
                kind.label()
            );
        }
        drop(errors);
        help(
            out,
            "switchboard_relay_retries_total",
            "counter",
            "Upstream attempts after the first of a call, by model.",
        );
        let retries = read(&self.retries);
        let sorted: BTreeMap<&str, u64> = retries
            .iter()
            .map(|(k, n)| (k.as_str(), n.load(Ordering::Relaxed)))
            .collect();
        for (model, n) in sorted {
            let _ = writeln!(
                out,
                "switchboard_relay_retries_total{{model=\"{}\"}} {n}",
                escape(model)
            );
        }
    }
}

/// The `channel` label: the channel's id, `none` for 0, `other` past the cap.
fn channel_label(id: i64) -> std::borrow::Cow<'static, str> {
    match id {
        0 => "none".into(),
        OTHER_CHANNEL => OTHER.into(),
        id => id.to_string().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(status: u16, code: Option<&str>) -> UpstreamFailure {
        UpstreamFailure {
            status,
            code: code.map(str::to_owned),
            ..UpstreamFailure::default()
        }
    }

    fn lines<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
        text.lines().filter(|l| l.starts_with(prefix)).collect()
    }

    #[test]
    fn histogram_buckets_are_cumulative_and_count_matches() {
        let h = Histogram::default();
        for ms in [1, 7, 7, 300, 400_000] {
            h.observe(Duration::from_millis(ms));
        }
        // Exactly on a bound counts in that bucket (`le`).
        h.observe(Duration::from_millis(10));
        let mut out = String::new();
        h.render(&mut out, "x", "a=\"b\"");
        assert!(out.contains("x_bucket{a=\"b\",le=\"0.005\"} 1\n"), "{out}");
        assert!(out.contains("x_bucket{a=\"b\",le=\"0.01\"} 4\n"), "{out}");
        assert!(out.contains("x_bucket{a=\"b\",le=\"0.5\"} 5\n"), "{out}");
        assert!(out.contains("x_bucket{a=\"b\",le=\"300\"} 5\n"), "{out}");
        assert!(out.contains("x_bucket{a=\"b\",le=\"+Inf\"} 6\n"), "{out}");
        assert!(out.contains("x_count{a=\"b\"} 6\n"), "{out}");
        let sum: f64 = out
            .lines()
            .find_map(|l| l.strip_prefix("x_sum{a=\"b\"} "))
            .unwrap()
            .parse()
            .unwrap();
        assert!((sum - 400.325).abs() < 1e-9, "{out}");
        assert_eq!(lines(&out, "x_bucket").len(), BUCKETS.len() + 1);
    }

    #[test]
    fn relay_pairs_past_the_cap_are_counted_as_other() {
        let m = Metrics::with_caps(Caps {
            relay_series: 3,
            ..Caps::default()
        });
        let ms = Duration::from_millis(1);
        for model in ["a", "b", "c"] {
            m.relay_request(model, 1, Outcome::Success, ms);
        }
        // Known pairs keep counting under their own labels.
        m.relay_request("a", 1, Outcome::Success, ms);
        // New pairs past the cap, whichever the model, go to model="other" (same channel).
        for model in ["d", "e", "f"] {
            m.relay_request(model, 1, Outcome::UpstreamError, ms);
        }
        m.relay_request("g", 2, Outcome::Success, ms);
        m.attempt("h", 2, 0, ms, None);
        let mut out = String::new();
        m.render(&mut out);
        let total = lines(&out, "switchboard_relay_requests_total{");
        assert_eq!(
            total,
            vec![
                "switchboard_relay_requests_total{model=\"a\",channel=\"1\",outcome=\"success\"} 2",
                "switchboard_relay_requests_total{model=\"b\",channel=\"1\",outcome=\"success\"} 1",
                "switchboard_relay_requests_total{model=\"c\",channel=\"1\",outcome=\"success\"} 1",
                "switchboard_relay_requests_total{model=\"other\",channel=\"1\",outcome=\"upstream_error\"} 3",
                "switchboard_relay_requests_total{model=\"other\",channel=\"2\",outcome=\"success\"} 1",
            ]
        );
        assert!(
            out.contains(
                "switchboard_upstream_first_byte_seconds_count{model=\"other\",channel=\"2\"} 1"
            ),
            "{out}"
        );
        assert!(!out.contains("model=\"d\""));
        assert!(!out.contains("model=\"h\""));
    }

    #[test]
    fn the_other_caps_hold_too() {
        let m = Metrics::with_caps(Caps {
            relay_series: 10,
            retry_models: 2,
            upstream_error_series: 2,
            routes: 2,
        });
        let ms = Duration::from_millis(1);
        for model in ["a", "b", "c", "d"] {
            m.attempt(model, 1, 1, ms, Some(&failure(500, None)));
        }
        m.attempt("a", 2, 0, ms, Some(&failure(504, Some("upstream_timeout"))));
        m.attempt(
            "a",
            3,
            0,
            ms,
            Some(&failure(502, Some("upstream_connect_error"))),
        );
        for route in ["/x", "/y", "/z", "/w"] {
            m.http_request(route, 0, 200, ms);
        }
        let mut out = String::new();
        m.render(&mut out);
        assert_eq!(
            lines(&out, "switchboard_relay_retries_total{"),
            vec![
                "switchboard_relay_retries_total{model=\"a\"} 1",
                "switchboard_relay_retries_total{model=\"b\"} 1",
                "switchboard_relay_retries_total{model=\"other\"} 2",
            ]
        );
        assert_eq!(
            lines(&out, "switchboard_upstream_errors_total{"),
            vec![
                "switchboard_upstream_errors_total{channel=\"other\",status=\"other\"} 1",
                "switchboard_upstream_errors_total{channel=\"1\",status=\"500\"} 4",
                "switchboard_upstream_errors_total{channel=\"2\",status=\"timeout\"} 1",
            ]
        );
        assert_eq!(
            lines(&out, "switchboard_http_requests_total{"),
            vec![
                "switchboard_http_requests_total{route=\"/x\",method=\"GET\",status=\"200\"} 1",
                "switchboard_http_requests_total{route=\"/y\",method=\"GET\",status=\"200\"} 1",
                "switchboard_http_requests_total{route=\"other\",method=\"GET\",status=\"200\"} 2",
            ]
        );
    }

    #[test]
    fn upstream_failures_are_labelled_by_status_or_kind() {
        let m = Metrics::default();
        let ms = Duration::from_millis(1);
        m.attempt("m", 7, 0, ms, Some(&failure(500, None)));
        m.attempt("m", 7, 1, ms, Some(&failure(504, Some("upstream_timeout"))));
        m.attempt(
            "m",
            7,
            2,
            ms,
            Some(&failure(502, Some("upstream_connect_error"))),
        );
        m.attempt(
            "m",
            7,
            3,
            ms,
            Some(&failure(500, Some("channel_config_error"))),
        );
        m.attempt(
            "m",
            7,
            4,
            ms,
            Some(&failure(429, Some("rate_limit_exceeded"))),
        );
        let mut out = String::new();
        m.render(&mut out);
        assert_eq!(
            lines(&out, "switchboard_upstream_errors_total{"),
            vec![
                "switchboard_upstream_errors_total{channel=\"7\",status=\"429\"} 1",
                "switchboard_upstream_errors_total{channel=\"7\",status=\"500\"} 1",
                "switchboard_upstream_errors_total{channel=\"7\",status=\"timeout\"} 1",
                "switchboard_upstream_errors_total{channel=\"7\",status=\"connect\"} 1",
                "switchboard_upstream_errors_total{channel=\"7\",status=\"config\"} 1",
            ]
        );
        assert!(out.contains("switchboard_relay_retries_total{model=\"m\"} 4"));
    }

    #[test]
    fn label_values_are_escaped() {
        let m = Metrics::default();
        m.relay_request("a\"b\\c\nd", 1, Outcome::Success, Duration::ZERO);
        let mut out = String::new();
        m.render(&mut out);
        assert!(out.contains("model=\"a\\\"b\\\\c\\nd\""), "{out}");
    }

    #[test]
    fn unusual_methods_are_other() {
        use actix_web::http::Method;
        assert_eq!(METHODS[method_index(&Method::GET)], "GET");
        assert_eq!(METHODS[method_index(&Method::OPTIONS)], "OPTIONS");
        let odd = Method::from_bytes(b"PURGE").unwrap();
        assert_eq!(METHODS[method_index(&odd)], OTHER);
    }
}
