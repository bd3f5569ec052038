//! Smarter routing (issue #17 item 6), as pure state machines over a time the caller passes in
//! (milliseconds on any monotonic clock): a windowed error-ratio circuit breaker per channel and
//! model ([`Breaker`]: closed, open, half-open with one probe) and the peak-EWMA latency estimate
//! that latency-aware choice compares ([`PeakEwma`], cost = estimate x (in flight + 1), as
//! Finagle's and linkerd's "peak EWMA" balancers). The relay keeps one of each per (channel,
//! model) in memory, per node; both are switched on by settings (`CircuitBreakerEnabled`,
//! `LatencyAwareRouting`).

/// Buckets of a breaker's window: the window slides by a tenth of its length.
pub const BUCKETS: usize = 10;

/// The operator's breaker settings (`CircuitBreakerErrorRatio`, `CircuitBreakerMinRequests`,
/// `CircuitBreakerWindowSeconds`, `CircuitBreakerOpenSeconds`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerConfig {
    /// The breaker opens when failures / outcomes in the window reach this (0 < ratio <= 1).
    pub error_ratio: f64,
    /// ... and the window holds at least this many outcomes.
    pub min_requests: u32,
    /// The window's length.
    pub window_ms: u64,
    /// How long an open breaker keeps the pair out before one probe is let through.
    pub open_ms: u64,
}

impl Default for BreakerConfig {
    /// The catalogue's defaults: 0.5, 10 requests, 60 s, 30 s.
    fn default() -> Self {
        BreakerConfig {
            error_ratio: 0.5,
            min_requests: 10,
            window_ms: 60_000,
            open_ms: 30_000,
        }
    }
}

impl BreakerConfig {
    fn bucket_ms(&self) -> u64 {
        (self.window_ms / BUCKETS as u64).max(1)
    }
}

/// What a breaker shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Requests go through; outcomes are counted.
    Closed,
    /// The pair is held out (tried only when every other candidate is used up).
    Open,
    /// The open time is over: the next request is the probe (or the probe is in flight).
    HalfOpen,
}

impl BreakerState {
    pub const fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

/// How a request was let through a breaker; its outcome is recorded with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permit {
    /// The breaker was closed: the outcome is counted in the window.
    Closed,
    /// The one probe of a half-open breaker: success closes it, failure opens it again.
    Probe,
    /// Tried although the breaker is open, because every other candidate was used up: the
    /// outcome changes nothing (the breaker waits for its probe).
    Forced,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Bucket {
    /// Which bucket of time (`now / bucket_ms`) the counts belong to.
    index: u64,
    ok: u32,
    failed: u32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Closed,
    Open {
        since_ms: u64,
    },
    HalfOpen {
        since_ms: u64,
        probing: bool,
    },
}

/// A windowed error-ratio circuit breaker for one (channel, model).
#[derive(Debug, Clone, Default)]
pub struct Breaker {
    buckets: [Bucket; BUCKETS],
    /// The bucket length the counts were made with (a changed window setting starts afresh).
    bucket_ms: u64,
    phase: Phase,
}

/// A breaker as the health list shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerView {
    pub state: BreakerState,
    /// When it last opened (the caller's clock), while open or half-open.
    pub opened_at_ms: Option<u64>,
    /// Outcomes in the window, and how many of them were failures.
    pub requests: u32,
    pub failures: u32,
    /// failures / requests (0 when the window is empty).
    pub error_ratio: f64,
}

impl Breaker {
    /// Whether a request may be let through now (closed; or the open time is over and the probe
    /// is not taken). Changes nothing: [`Breaker::try_acquire`] takes the probe.
    pub fn available(&self, now_ms: u64, cfg: &BreakerConfig) -> bool {
        match self.phase {
            Phase::Closed => true,
            Phase::Open { since_ms } => now_ms.saturating_sub(since_ms) >= cfg.open_ms,
            Phase::HalfOpen { probing, .. } => !probing,
        }
    }

    /// Lets a request through: `Permit::Closed` while closed; once the open time is over, one
    /// `Permit::Probe` (the breaker becomes half-open, and every other request is refused until
    /// the probe's outcome is recorded or it is abandoned); `None` while open or probing.
    pub fn try_acquire(&mut self, now_ms: u64, cfg: &BreakerConfig) -> Option<Permit> {
        match self.phase {
            Phase::Closed => Some(Permit::Closed),
            Phase::Open { since_ms } if now_ms.saturating_sub(since_ms) >= cfg.open_ms => {
                self.phase = Phase::HalfOpen {
                    since_ms,
                    probing: true,
                };
                Some(Permit::Probe)
            }
            Phase::Open { .. } => None,
            Phase::HalfOpen { since_ms, probing } => {
                if probing {
                    None
                } else {
                    self.phase = Phase::HalfOpen {
                        since_ms,
                        probing: true,
                    };
                    Some(Permit::Probe)
                }
            }
        }
    }

    /// Records the outcome of a request let through with `permit` (`failed`: a channel fault).
    /// Closed: counted, and the breaker opens when the window holds at least `min_requests`
    /// outcomes with an error ratio of at least `error_ratio`. Probe: success closes (with an
    /// empty window), failure opens again for another `open_ms`. Outcomes of requests let through
    /// before the breaker opened, and of forced ones, change nothing.
    pub fn record(&mut self, permit: Permit, failed: bool, now_ms: u64, cfg: &BreakerConfig) {
        match (permit, self.phase) {
            (Permit::Closed, Phase::Closed) => {
                self.count(failed, now_ms, cfg);
                let (requests, failures) = self.totals(now_ms, cfg);
                if requests >= cfg.min_requests.max(1)
                    && f64::from(failures) >= cfg.error_ratio * f64::from(requests)
                {
                    self.phase = Phase::Open { since_ms: now_ms };
                }
            }
            (Permit::Probe, Phase::HalfOpen { .. }) => {
                if failed {
                    self.phase = Phase::Open { since_ms: now_ms };
                } else {
                    self.phase = Phase::Closed;
                    self.buckets = [Bucket::default(); BUCKETS];
                }
            }
            _ => {}
        }
    }

    /// A probe that ended without an outcome (the client went away, the channel was removed):
    /// the next request may probe.
    pub fn abandon(&mut self, permit: Permit) {
        if let (Permit::Probe, Phase::HalfOpen { since_ms, .. }) = (permit, self.phase) {
            self.phase = Phase::HalfOpen {
                since_ms,
                probing: false,
            };
        }
    }

    /// The state, when it opened, and the window's counts at `now_ms`.
    pub fn view(&self, now_ms: u64, cfg: &BreakerConfig) -> BreakerView {
        let (state, opened_at_ms) = match self.phase {
            Phase::Closed => (BreakerState::Closed, None),
            Phase::Open { since_ms } if now_ms.saturating_sub(since_ms) >= cfg.open_ms => {
                (BreakerState::HalfOpen, Some(since_ms))
            }
            Phase::Open { since_ms } => (BreakerState::Open, Some(since_ms)),
            Phase::HalfOpen { since_ms, .. } => (BreakerState::HalfOpen, Some(since_ms)),
        };
        let (requests, failures) = self.totals(now_ms, cfg);
        BreakerView {
            state,
            opened_at_ms,
            requests,
            failures,
            error_ratio: if requests == 0 {
                0.0
            } else {
                f64::from(failures) / f64::from(requests)
            },
        }
    }

    fn count(&mut self, failed: bool, now_ms: u64, cfg: &BreakerConfig) {
        let width = cfg.bucket_ms();
        if self.bucket_ms != width {
            self.buckets = [Bucket::default(); BUCKETS];
            self.bucket_ms = width;
        }
        let index = now_ms / width;
        let b = &mut self.buckets[(index % BUCKETS as u64) as usize];
        if b.index != index {
            *b = Bucket {
                index,
                ok: 0,
                failed: 0,
            };
        }
        if failed {
            b.failed = b.failed.saturating_add(1);
        } else {
            b.ok = b.ok.saturating_add(1);
        }
    }

    /// (outcomes, failures) in the window ending at `now_ms`.
    fn totals(&self, now_ms: u64, cfg: &BreakerConfig) -> (u32, u32) {
        let width = cfg.bucket_ms();
        if self.bucket_ms != width {
            return (0, 0);
        }
        let current = now_ms / width;
        self.buckets
            .iter()
            .filter(|b| b.index <= current && current - b.index < BUCKETS as u64)
            .fold((0u32, 0u32), |(n, f), b| {
                (
                    n.saturating_add(b.ok).saturating_add(b.failed),
                    f.saturating_add(b.failed),
                )
            })
    }
}

/// The time constant of the latency estimate's decay.
pub const LATENCY_DECAY_MS: f64 = 10_000.0;

/// A "peak EWMA" of a pair's upstream latency (time to the response headers): a sample above
/// the estimate replaces it at once, one below is blended in with a weight that grows with the
/// time since the last sample (`exp(-dt / tau)` keeps the old estimate), and the estimate decays
/// toward 0 while no sample comes, so an idle slow channel is tried again after a while.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PeakEwma {
    value_ms: f64,
    stamp_ms: u64,
    measured: bool,
}

impl PeakEwma {
    /// Adds a latency sample taken at `now_ms`.
    pub fn observe(&mut self, latency_ms: f64, now_ms: u64, tau_ms: f64) {
        let sample = latency_ms.max(0.0);
        if !self.measured {
            self.value_ms = sample;
            self.measured = true;
        } else {
            let current = self.estimate(now_ms, tau_ms).unwrap_or(0.0);
            self.value_ms = if sample > current {
                sample
            } else {
                let w = decay(now_ms.saturating_sub(self.stamp_ms), tau_ms);
                current * w + sample * (1.0 - w)
            };
        }
        self.stamp_ms = now_ms;
    }

    /// The estimate at `now_ms` (decayed since the last sample), `None` before the first sample.
    pub fn estimate(&self, now_ms: u64, tau_ms: f64) -> Option<f64> {
        self.measured
            .then(|| self.value_ms * decay(now_ms.saturating_sub(self.stamp_ms), tau_ms))
    }

    /// The cost latency-aware choice compares: estimate x (`in_flight` + 1); 0 while unmeasured,
    /// so that a new channel is tried.
    pub fn cost(&self, in_flight: u32, now_ms: u64, tau_ms: f64) -> f64 {
        self.estimate(now_ms, tau_ms)
            .map_or(0.0, |e| e * (f64::from(in_flight) + 1.0))
    }
}

fn decay(elapsed_ms: u64, tau_ms: f64) -> f64 {
    if tau_ms <= 0.0 {
        0.0
    } else {
        (-(elapsed_ms as f64) / tau_ms).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> BreakerConfig {
        BreakerConfig {
            error_ratio: 0.5,
            min_requests: 4,
            window_ms: 10_000,
            open_ms: 5_000,
        }
    }

    fn feed(b: &mut Breaker, outcomes: &[bool], now: u64) {
        for failed in outcomes {
            let p = b.try_acquire(now, &cfg()).expect("closed");
            assert_eq!(p, Permit::Closed);
            b.record(p, *failed, now, &cfg());
        }
    }

    #[test]
    fn opens_at_the_threshold() {
        let mut b = Breaker::default();
        feed(&mut b, &[false, false, false, true], 100);
        assert_eq!(b.view(100, &cfg()).state, BreakerState::Closed, "1 of 4");
        feed(&mut b, &[true], 100);
        assert_eq!(b.view(100, &cfg()).state, BreakerState::Closed, "2 of 5");
        // 3 of 6 failed: 0.5 >= 0.5 with 6 >= min_requests.
        feed(&mut b, &[true], 200);
        let v = b.view(200, &cfg());
        assert_eq!(v.state, BreakerState::Open);
        assert_eq!(v.opened_at_ms, Some(200));
        assert_eq!((v.requests, v.failures), (6, 3));
        assert!((v.error_ratio - 0.5).abs() < 1e-9);
        assert!(!b.available(300, &cfg()));
        assert_eq!(b.try_acquire(300, &cfg()), None);
    }

    #[test]
    fn exactly_at_the_ratio_opens() {
        let mut b = Breaker::default();
        feed(&mut b, &[false, false, true, true], 0);
        assert_eq!(b.view(0, &cfg()).state, BreakerState::Open);
    }

    #[test]
    fn not_below_min_requests() {
        let mut b = Breaker::default();
        feed(&mut b, &[true, true, true], 0);
        let v = b.view(0, &cfg());
        assert_eq!(v.state, BreakerState::Closed, "3 failures < 4 requests");
        assert_eq!((v.requests, v.failures), (3, 3));
        assert!(b.available(0, &cfg()));
    }

    #[test]
    fn below_the_ratio_stays_closed() {
        let mut b = Breaker::default();
        feed(&mut b, &[true, false, false, false, true, false, false], 0);
        assert_eq!(b.view(0, &cfg()).state, BreakerState::Closed);
    }

    fn opened(at: u64) -> Breaker {
        let mut b = Breaker::default();
        feed(&mut b, &[true, true, true, true], at);
        assert_eq!(b.view(at, &cfg()).state, BreakerState::Open);
        b
    }

    #[test]
    fn half_open_lets_exactly_one_probe_through() {
        let mut b = opened(1_000);
        assert_eq!(b.try_acquire(5_999, &cfg()), None, "still open");
        assert!(b.available(6_000, &cfg()));
        assert_eq!(b.view(6_000, &cfg()).state, BreakerState::HalfOpen);
        assert_eq!(b.try_acquire(6_000, &cfg()), Some(Permit::Probe));
        // Concurrent requests skip it while the probe is out.
        assert!(!b.available(6_001, &cfg()));
        assert_eq!(b.try_acquire(6_001, &cfg()), None);
        assert_eq!(b.try_acquire(60_000, &cfg()), None);
        assert_eq!(b.view(6_001, &cfg()).state, BreakerState::HalfOpen);
    }

    #[test]
    fn probe_success_closes_with_an_empty_window() {
        let mut b = opened(0);
        let p = b.try_acquire(5_000, &cfg()).unwrap();
        b.record(p, false, 5_100, &cfg());
        let v = b.view(5_100, &cfg());
        assert_eq!(v.state, BreakerState::Closed);
        assert_eq!((v.requests, v.failures, v.opened_at_ms), (0, 0, None));
        // One failure after closing does not reopen it (the old failures are gone).
        feed(&mut b, &[true], 5_200);
        assert_eq!(b.view(5_200, &cfg()).state, BreakerState::Closed);
    }

    #[test]
    fn probe_failure_reopens_for_another_open_time() {
        let mut b = opened(0);
        let p = b.try_acquire(5_000, &cfg()).unwrap();
        b.record(p, true, 5_500, &cfg());
        let v = b.view(5_500, &cfg());
        assert_eq!((v.state, v.opened_at_ms), (BreakerState::Open, Some(5_500)));
        assert_eq!(b.try_acquire(10_499, &cfg()), None);
        assert_eq!(b.try_acquire(10_500, &cfg()), Some(Permit::Probe));
    }

    #[test]
    fn an_abandoned_probe_frees_the_slot() {
        let mut b = opened(0);
        let p = b.try_acquire(5_000, &cfg()).unwrap();
        b.abandon(p);
        assert_eq!(b.try_acquire(5_001, &cfg()), Some(Permit::Probe));
    }

    #[test]
    fn late_and_forced_outcomes_change_nothing() {
        let mut b = opened(0);
        // A request admitted before the breaker opened answers now; a forced one succeeds.
        b.record(Permit::Closed, false, 10, &cfg());
        b.record(Permit::Forced, false, 20, &cfg());
        assert_eq!(b.view(30, &cfg()).state, BreakerState::Open);
        // A late closed-permit outcome does not end a half-open probe either.
        let _probe = b.try_acquire(5_000, &cfg()).unwrap();
        b.record(Permit::Closed, false, 5_001, &cfg());
        assert_eq!(b.try_acquire(5_002, &cfg()), None, "the probe is still out");
    }

    #[test]
    fn old_outcomes_leave_the_window() {
        let mut b = Breaker::default();
        feed(&mut b, &[true, true, true], 0);
        // 10 s later the first bucket has slid out: the window is empty again.
        let v = b.view(10_000, &cfg());
        assert_eq!((v.requests, v.failures), (0, 0));
        feed(&mut b, &[true], 10_000);
        assert_eq!(
            b.view(10_000, &cfg()).state,
            BreakerState::Closed,
            "1 failure in the window, not 4"
        );
        // Within the window outcomes add up across buckets.
        feed(&mut b, &[true, true], 14_000);
        feed(&mut b, &[true], 19_999);
        assert_eq!(b.view(19_999, &cfg()).state, BreakerState::Open);
    }

    #[test]
    fn a_changed_window_starts_afresh() {
        let mut b = Breaker::default();
        feed(&mut b, &[true, true, true], 0);
        let wider = BreakerConfig {
            window_ms: 20_000,
            ..cfg()
        };
        assert_eq!(b.view(0, &wider).requests, 0);
        b.record(Permit::Closed, true, 0, &wider);
        assert_eq!(b.view(0, &wider).state, BreakerState::Closed);
    }

    #[test]
    fn peak_ewma_takes_peaks_and_decays() {
        let tau = LATENCY_DECAY_MS;
        let mut e = PeakEwma::default();
        assert_eq!(e.estimate(0, tau), None);
        assert_eq!(e.cost(5, 0, tau), 0.0, "unmeasured costs nothing");
        e.observe(100.0, 0, tau);
        assert_eq!(e.estimate(0, tau), Some(100.0));
        // A peak replaces the estimate at once.
        e.observe(300.0, 10, tau);
        let now = e.estimate(10, tau).unwrap();
        assert!((now - 300.0).abs() < 1e-9);
        // A lower sample right after barely moves it; one much later counts fully.
        e.observe(10.0, 11, tau);
        assert!(e.estimate(11, tau).unwrap() > 290.0);
        e.observe(10.0, 200_000, tau);
        assert!((e.estimate(200_000, tau).unwrap() - 10.0).abs() < 0.01);
        // Idle, it decays toward 0: after one tau to about 37 %.
        let later = e.estimate(210_000, tau).unwrap();
        assert!((later - 10.0 / std::f64::consts::E).abs() < 0.01);
        // Cost grows with what is in flight.
        assert!((e.cost(0, 200_000, tau) - 10.0).abs() < 0.01);
        assert!((e.cost(2, 200_000, tau) - 30.0).abs() < 0.03);
    }
}
