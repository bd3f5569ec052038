//! The node's routing health of each (channel, model): its circuit breaker and its peak-EWMA
//! latency with the attempts in flight (the domain's [`Breaker`] and [`PeakEwma`]), kept in
//! memory, per node. The dispatch loop reads it to order candidates and reports every attempt
//! to it, only while circuit breaking or latency-aware choice is on.
//!
//! Lock-cheap for the hot path: one `RwLock` over the map, read-locked just long enough to
//! clone the pair's `Arc` (written only when a pair is seen for the first time); each pair has
//! its own short-held mutex (never across an await) and an atomic in-flight count.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

use switchboard_domain::routing::{
    Breaker, BreakerConfig, BreakerState, PeakEwma, Permit, LATENCY_DECAY_MS,
};

/// Pairs kept before idle ones are dropped (deleted channels, models no longer asked for).
const MAX_PAIRS: usize = 10_000;
/// A pair without any attempt for this long may be dropped once [`MAX_PAIRS`] is reached.
const IDLE_MS: u64 = 600_000;
/// The latency a channel fault counts as, at least: a channel that fails fast must not look
/// fast to latency-aware choice.
pub const FAULT_LATENCY: Duration = Duration::from_secs(1);

#[derive(Default)]
struct PairState {
    breaker: Breaker,
    latency: PeakEwma,
    last_ms: u64,
}

#[derive(Default)]
struct Pair {
    state: Mutex<PairState>,
    in_flight: AtomicU32,
}

impl Pair {
    fn lock(&self) -> MutexGuard<'_, PairState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

type Map = HashMap<i64, HashMap<Box<str>, Arc<Pair>>>;

/// The routing health of every (channel, model) this node has dispatched to while a routing
/// feature was on.
pub struct Health {
    started: Instant,
    pairs: RwLock<Map>,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            started: Instant::now(),
            pairs: RwLock::new(HashMap::new()),
        }
    }
}

/// One (channel, model) as the health list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairHealth {
    pub channel_id: i64,
    pub model: String,
    pub state: BreakerState,
    /// When the breaker last opened (while open or half-open).
    pub opened_at: Option<SystemTime>,
    /// Outcomes in the breaker's window and the share of them that were channel faults.
    pub requests: u32,
    pub failures: u32,
    pub error_ratio: f64,
    /// The decayed peak-EWMA latency to the response headers; `None` before the first sample.
    pub latency_ms: Option<f64>,
    pub in_flight: u32,
}

impl Health {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn get(&self, id: i64, model: &str) -> Option<Arc<Pair>> {
        let map = self.pairs.read().unwrap_or_else(PoisonError::into_inner);
        map.get(&id).and_then(|m| m.get(model)).cloned()
    }

    fn get_or_insert(&self, id: i64, model: &str) -> Arc<Pair> {
        if let Some(p) = self.get(id, model) {
            return p;
        }
        let mut map = self.pairs.write().unwrap_or_else(PoisonError::into_inner);
        if map.values().map(HashMap::len).sum::<usize>() >= MAX_PAIRS {
            let now = self.now_ms();
            for models in map.values_mut() {
                models.retain(|_, p| {
                    p.in_flight.load(Ordering::Relaxed) > 0
                        || now.saturating_sub(p.lock().last_ms) < IDLE_MS
                });
            }
            map.retain(|_, models| !models.is_empty());
        }
        Arc::clone(map.entry(id).or_default().entry(model.into()).or_default())
    }

    /// Whether the breaker of (`id`, `model`) lets a request through now (a pair never seen
    /// does). Takes nothing: [`Health::begin`] takes a half-open breaker's probe.
    pub fn available(&self, id: i64, model: &str, cfg: &BreakerConfig) -> bool {
        self.get(id, model)
            .is_none_or(|p| p.lock().breaker.available(self.now_ms(), cfg))
    }

    /// The latency-aware cost of (`id`, `model`): peak-EWMA latency in milliseconds x (attempts
    /// in flight + 1); 0 while unmeasured.
    pub fn cost(&self, id: i64, model: &str) -> f64 {
        self.get(id, model).map_or(0.0, |p| {
            let in_flight = p.in_flight.load(Ordering::Relaxed);
            p.lock()
                .latency
                .cost(in_flight, self.now_ms(), LATENCY_DECAY_MS)
        })
    }

    /// Starts an attempt on (`id`, `model`). With a breaker (`Some(cfg)`), `forced` false: its
    /// permit, or `None` when it refuses (open, or a concurrent request took the probe);
    /// `forced` true: tried although open (every other candidate is used up), which changes
    /// nothing in the breaker. The attempt counts as in flight until it is finished or dropped.
    pub fn begin(
        &self,
        id: i64,
        model: &str,
        breaker: Option<&BreakerConfig>,
        forced: bool,
    ) -> Option<Attempt<'_>> {
        let pair = self.get_or_insert(id, model);
        let permit = match breaker {
            Some(cfg) if !forced => pair.lock().breaker.try_acquire(self.now_ms(), cfg)?,
            Some(_) => Permit::Forced,
            None => Permit::Closed,
        };
        pair.in_flight.fetch_add(1, Ordering::Relaxed);
        Some(Attempt {
            health: self,
            pair,
            permit,
            started: Instant::now(),
            done: false,
        })
    }

    /// Every pair, ordered by channel and model, as of now (`breaker`: the current settings,
    /// which decide when an open breaker turns half-open and how long the window is).
    pub fn list(&self, breaker: &BreakerConfig) -> Vec<PairHealth> {
        let pairs: Vec<(i64, String, Arc<Pair>)> = {
            let map = self.pairs.read().unwrap_or_else(PoisonError::into_inner);
            map.iter()
                .flat_map(|(id, models)| {
                    models
                        .iter()
                        .map(|(m, p)| (*id, m.to_string(), Arc::clone(p)))
                })
                .collect()
        };
        let now = self.now_ms();
        let wall = SystemTime::now();
        let mut out: Vec<PairHealth> = pairs
            .into_iter()
            .map(|(channel_id, model, p)| {
                let in_flight = p.in_flight.load(Ordering::Relaxed);
                let s = p.lock();
                let v = s.breaker.view(now, breaker);
                PairHealth {
                    channel_id,
                    model,
                    state: v.state,
                    opened_at: v.opened_at_ms.map(|at| {
                        wall.checked_sub(Duration::from_millis(now.saturating_sub(at)))
                            .unwrap_or(wall)
                    }),
                    requests: v.requests,
                    failures: v.failures,
                    error_ratio: v.error_ratio,
                    latency_ms: s.latency.estimate(now, LATENCY_DECAY_MS),
                    in_flight,
                }
            })
            .collect();
        out.sort_by(|a, b| (a.channel_id, &a.model).cmp(&(b.channel_id, &b.model)));
        out
    }
}

/// An attempt in flight on one (channel, model).
pub struct Attempt<'a> {
    health: &'a Health,
    pair: Arc<Pair>,
    permit: Permit,
    started: Instant,
    done: bool,
}

impl Attempt<'_> {
    /// Whether the breaker let this attempt through as its half-open probe.
    pub fn is_probe(&self) -> bool {
        self.permit == Permit::Probe
    }

    /// Records the attempt's outcome: `fault` (a channel fault: 5xx, 429, a timeout, a
    /// connection error) or not (a success, or the client's own error), and its latency so far
    /// (a fault counts at least [`FAULT_LATENCY`]).
    pub fn finish(mut self, fault: bool, breaker: Option<&BreakerConfig>) {
        let now = self.health.now_ms();
        let mut latency = self.started.elapsed();
        if fault {
            latency = latency.max(FAULT_LATENCY);
        }
        let mut s = self.pair.lock();
        s.last_ms = now;
        s.latency
            .observe(latency.as_secs_f64() * 1000.0, now, LATENCY_DECAY_MS);
        if let Some(cfg) = breaker {
            s.breaker.record(self.permit, fault, now, cfg);
        }
        self.done = true;
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        self.pair.in_flight.fetch_sub(1, Ordering::Relaxed);
        if !self.done {
            let mut s = self.pair.lock();
            s.breaker.abandon(self.permit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> BreakerConfig {
        BreakerConfig {
            error_ratio: 0.5,
            min_requests: 2,
            window_ms: 60_000,
            open_ms: 0,
        }
    }

    #[test]
    fn attempts_are_counted_in_flight_and_recorded() {
        let h = Health::default();
        assert_eq!(h.cost(1, "m"), 0.0);
        assert!(h.available(1, "m", &cfg()));
        let a = h.begin(1, "m", Some(&cfg()), false).unwrap();
        let b = h.begin(1, "m", Some(&cfg()), false).unwrap();
        assert_eq!(h.list(&cfg())[0].in_flight, 2);
        a.finish(true, Some(&cfg()));
        b.finish(true, Some(&cfg()));
        let l = h.list(&cfg());
        assert_eq!(l.len(), 1);
        assert_eq!((l[0].channel_id, l[0].model.as_str()), (1, "m"));
        assert_eq!((l[0].requests, l[0].failures, l[0].in_flight), (2, 2, 0));
        assert!(l[0].latency_ms.unwrap() >= 1000.0, "faults count a second");
        assert!(h.cost(1, "m") >= 1000.0);
        assert!(l[0].opened_at.is_some());
    }

    #[test]
    fn a_dropped_probe_frees_the_slot() {
        let h = Health::default();
        for _ in 0..2 {
            h.begin(7, "m", Some(&cfg()), false)
                .unwrap()
                .finish(true, Some(&cfg()));
        }
        // open_ms 0: half-open at once; one probe, the next refused until the probe ends.
        let probe = h.begin(7, "m", Some(&cfg()), false).unwrap();
        assert!(probe.is_probe());
        assert!(h.begin(7, "m", Some(&cfg()), false).is_none());
        assert!(!h.available(7, "m", &cfg()));
        // A forced attempt goes through regardless.
        assert!(h.begin(7, "m", Some(&cfg()), true).is_some());
        drop(probe);
        assert!(h.begin(7, "m", Some(&cfg()), false).unwrap().is_probe());
    }
}
