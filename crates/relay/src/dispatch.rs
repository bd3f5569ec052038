//! The dispatch loop, written once for every protocol (`/v1`, Anthropic Messages, Gemini,
//! realtime, Midjourney and Suno tasks): candidate order (priority, then weight; the domain's
//! [`pick`]), retries across channels within the operator's limits, freezing a failed channel for
//! the cooldown, automatic disabling, and the decision to retry. What a channel is and how it is
//! called stay with the caller: the loop asks a [`Channels`] for channels and their health and
//! calls the caller's attempt.
//!
//! Freezing orders channels, it never empties a model: a frozen channel is tried only when every
//! unfrozen candidate has been tried, so a model whose only channel answered one 429 is tried
//! again (and the client gets the upstream's answer and its `Retry-After`), not refused with 503.
//!
//! Smarter routing ([`Routing`], both off by default): with the circuit breaker on, a (channel,
//! model) whose breaker is open goes after every other candidate (after the frozen ones too;
//! like freezing, it never empties a model), and a half-open one is tried by one request at a
//! time; with latency-aware choice on, a priority's channel is the cheaper of two weighted draws
//! by peak-EWMA latency x (in flight + 1) ([`pick_two`]). While either is on, every attempt's
//! outcome and latency is reported to the [`Health`] of [`Channels::health`], here, once, for
//! every protocol; while both are off the loop is the plain one above.

use std::future::Future;
use std::time::{Duration, Instant};

use switchboard_domain::dispatch::{pick, pick_two, Candidate};
use switchboard_domain::routing::BreakerConfig;

use crate::health::{Attempt, Health};
use crate::provider::UpstreamFailure;
use crate::refusal::Refusal;

/// The operator's retry settings for one call.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy {
    /// Further channels tried after the first (`RetryTimes`).
    pub retries: usize,
    /// How long a channel that failed with a retryable error is put last (`RetryCooldownSeconds`).
    pub cooldown: Duration,
    /// No new attempt starts after this (`RetryTimeOut`).
    pub deadline: Option<Instant>,
    /// Failures that show a channel's credentials or account unusable disable it
    /// (`AutomaticDisableChannelEnabled`, and the channel's own auto-ban flag, see
    /// [`Channels::disable`]).
    pub auto_disable: bool,
    /// The key pins one channel: its freezing is ignored.
    pub pinned: bool,
    /// Circuit breaking and latency-aware choice.
    pub routing: Routing,
}

/// The smarter-routing switches of one call (`CircuitBreakerEnabled` with its settings,
/// `LatencyAwareRouting`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Routing {
    /// The circuit breaker per (channel, model), when on.
    pub breaker: Option<BreakerConfig>,
    /// Power of two choices by peak-EWMA cost within a priority.
    pub latency_aware: bool,
}

impl Routing {
    /// Whether either feature is on (then attempts are reported to the health).
    pub const fn is_on(&self) -> bool {
        self.breaker.is_some() || self.latency_aware
    }
}

/// Whether a failure is the channel's fault for the circuit breaker and the latency estimate:
/// what the loop retries (429, 5xx, timeouts, connection errors, unusable credentials) and the
/// upstream's own 5xx, 408 and 429 even where they are not retried (504, 524); not the client's
/// own errors (a 400 for its request).
pub fn is_channel_fault(f: &UpstreamFailure) -> bool {
    f.retryable || f.status >= 500 || matches!(f.status, 408 | 429)
}

/// Where channels come from and where their health is kept; the application implements it.
pub trait Channels {
    type Channel;

    /// The channel with this id, `None` when it is gone since the candidates were listed.
    fn channel(&self, id: i64) -> Option<Self::Channel>;

    /// Whether the channel is in its retry cooldown.
    fn is_frozen(&self, id: i64) -> bool;

    /// Puts the channel in its retry cooldown.
    fn freeze(&self, id: i64, cooldown: Duration);

    /// Called once for every failed attempt (for the log).
    fn failed(&self, channel: &Self::Channel, failure: &UpstreamFailure);

    /// Called when an attempt ends, before [`Channels::failed`] (for metrics): `model` as the
    /// client asked for it, `index` the attempt's place in this call (0 for the first, more for
    /// retries), `took` its time to an answer (the upstream's response head on success), and
    /// its failure when it failed. Does nothing unless implemented.
    fn attempted(
        &self,
        _channel: &Self::Channel,
        _model: &str,
        _index: usize,
        _took: Duration,
        _failure: Option<&UpstreamFailure>,
    ) {
    }

    /// Disables the channel automatically, when its own settings allow it.
    fn disable(&self, channel: &Self::Channel, reason: &str) -> impl Future<Output = ()>;

    /// The node's routing health per (channel, model): read to order candidates and told every
    /// attempt's outcome and latency while [`Policy::routing`] has a feature on. `None` (the
    /// default): smarter routing does not apply.
    fn health(&self) -> Option<&Health> {
        None
    }
}

/// Tries `attempt` on the candidates in order until one succeeds, a failure is not worth another
/// channel, or the policy's retries or deadline run out. Returns the channel that answered with
/// the attempt's value, or the refusal for the client: the last upstream failure (its status,
/// type, code, message and `Retry-After`), or `no_available_channel` when no channel could be
/// tried at all.
pub async fn dispatch<C, T>(
    channels: &C,
    candidates: &[Candidate],
    policy: &Policy,
    model: &str,
    mut attempt: impl AsyncFnMut(&C::Channel) -> Result<T, UpstreamFailure>,
) -> Result<(C::Channel, T), Refusal>
where
    C: Channels,
{
    let mut tried: Vec<i64> = Vec::new();
    let mut last: Option<UpstreamFailure> = None;
    let mut made = 0;
    // Smarter routing: one branch when both features are off.
    let health = if policy.routing.is_on() {
        channels.health()
    } else {
        None
    };
    for n in 0..=policy.retries {
        if n > 0 && policy.deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let (id, watch) = match health {
            None => match next(channels, candidates, policy, &tried) {
                Some(id) => (id, None),
                None => break,
            },
            Some(h) => match next_routed(h, channels, candidates, policy, model, &tried) {
                Some((id, watch)) => (id, Some(watch)),
                None => break,
            },
        };
        tried.push(id);
        let Some(ch) = channels.channel(id) else {
            continue;
        };
        let begun = Instant::now();
        // One span per upstream attempt (a trace's client span; log lines inside carry it).
        let span = tracing::info_span!(
            "upstream",
            channel_id = id,
            gen_ai.request.model = model,
            attempt = made,
            http.response.status_code = tracing::field::Empty,
        );
        let result = tracing::Instrument::instrument(attempt(&ch), span.clone()).await;
        if let Err(f) = &result {
            if f.gateway {
                // Refused before any upstream call: the request's fault, not the channel's.
                tracing::info!(
                    channel = id,
                    "refused before the upstream call: {}",
                    f.message
                );
                if let Some(w) = watch {
                    w.finish(false, policy.routing.breaker.as_ref());
                }
                last = result.err();
                break;
            }
            span.record("http.response.status_code", f.status);
        }
        channels.attempted(&ch, model, made, begun.elapsed(), result.as_ref().err());
        if let Some(w) = watch {
            let fault = result.as_ref().err().is_some_and(is_channel_fault);
            w.finish(fault, policy.routing.breaker.as_ref());
        }
        made += 1;
        let failure = match result {
            Ok(v) => return Ok((ch, v)),
            Err(f) => f,
        };
        channels.failed(&ch, &failure);
        if failure.auto_disable && policy.auto_disable {
            channels.disable(&ch, &failure.message).await;
        }
        if failure.retryable {
            channels.freeze(id, policy.cooldown);
        }
        let stop = !failure.retryable;
        last = Some(failure);
        if stop {
            break;
        }
    }
    Err(match last {
        Some(f) => Refusal::upstream(f),
        None => Refusal::no_channel(model),
    })
}

/// The next channel to try: the best untried unfrozen candidate, else (unless pinned, where
/// freezing does not apply) the best untried frozen one.
fn next<C: Channels>(
    channels: &C,
    candidates: &[Candidate],
    policy: &Policy,
    tried: &[i64],
) -> Option<i64> {
    let mut random = |n: u64| rand::random_range(0..n.max(1));
    let fresh = pick(
        candidates,
        |id| tried.contains(&id) || (!policy.pinned && channels.is_frozen(id)),
        &mut random,
    );
    fresh.or_else(|| pick(candidates, |id| tried.contains(&id), &mut random))
}

/// Where a candidate stands for [`next_routed`]: the first three are tried in this order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Standing {
    Fresh,
    Frozen,
    Open,
    /// Tried already.
    Out,
}

/// [`next`] with smarter routing: the best untried candidate that is neither frozen nor held
/// out by its breaker, else a frozen one (unless pinned), else one whose breaker is open
/// (forced); within each, the weighted pick, or with latency-aware choice the cheaper of two
/// weighted draws. Returns the attempt started on the health (with the breaker's permit).
fn next_routed<'h, C: Channels>(
    health: &'h Health,
    channels: &C,
    candidates: &[Candidate],
    policy: &Policy,
    model: &str,
    tried: &[i64],
) -> Option<(i64, Attempt<'h>)> {
    let breaker = policy.routing.breaker.as_ref();
    let mut standing: Vec<(i64, Standing)> = candidates
        .iter()
        .map(|c| {
            let s = if tried.contains(&c.id) {
                Standing::Out
            } else if breaker.is_some_and(|b| !health.available(c.id, model, b)) {
                Standing::Open
            } else if !policy.pinned && channels.is_frozen(c.id) {
                Standing::Frozen
            } else {
                Standing::Fresh
            };
            (c.id, s)
        })
        .collect();
    let mut random = |n: u64| rand::random_range(0..n.max(1));
    for level in [Standing::Fresh, Standing::Frozen, Standing::Open] {
        loop {
            let skip = |id: i64| {
                standing
                    .iter()
                    .find(|(i, _)| *i == id)
                    .is_none_or(|(_, s)| *s != level)
            };
            let picked = if policy.routing.latency_aware {
                pick_two(candidates, skip, &mut random, |id| health.cost(id, model))
            } else {
                pick(candidates, skip, &mut random)
            };
            let Some(id) = picked else {
                break;
            };
            match health.begin(id, model, breaker, level == Standing::Open) {
                Some(watch) => return Some((id, watch)),
                // A concurrent request took the half-open probe (or the breaker just opened):
                // the channel goes with the open ones.
                None => {
                    for s in standing.iter_mut().filter(|(i, _)| *i == id) {
                        s.1 = Standing::Open;
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod routing_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::HashMap;

    #[derive(Default)]
    struct Fake {
        frozen: RefCell<HashMap<i64, Duration>>,
        disabled: RefCell<Vec<i64>>,
        failures: RefCell<Vec<i64>>,
        gone: Vec<i64>,
    }

    impl Channels for Fake {
        type Channel = i64;
        fn channel(&self, id: i64) -> Option<i64> {
            (!self.gone.contains(&id)).then_some(id)
        }
        fn is_frozen(&self, id: i64) -> bool {
            self.frozen.borrow().contains_key(&id)
        }
        fn freeze(&self, id: i64, cooldown: Duration) {
            self.frozen.borrow_mut().insert(id, cooldown);
        }
        fn failed(&self, channel: &i64, _: &UpstreamFailure) {
            self.failures.borrow_mut().push(*channel);
        }
        async fn disable(&self, channel: &i64, _: &str) {
            self.disabled.borrow_mut().push(*channel);
        }
    }

    fn cand(id: i64, priority: i64) -> Candidate {
        Candidate {
            id,
            priority,
            weight: 1,
        }
    }

    fn fail(status: u16, retryable: bool) -> UpstreamFailure {
        UpstreamFailure {
            status,
            message: format!("HTTP {status}"),
            retryable,
            ..UpstreamFailure::default()
        }
    }

    fn policy(retries: usize) -> Policy {
        Policy {
            retries,
            cooldown: Duration::from_secs(60),
            auto_disable: true,
            ..Policy::default()
        }
    }

    fn run<T>(f: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn higher_priority_first_then_retry_the_next() {
        let fake = Fake::default();
        let mut calls = Vec::new();
        let got = run(dispatch(
            &fake,
            &[cand(1, 0), cand(2, 10)],
            &policy(1),
            "m",
            async |ch: &i64| {
                calls.push(*ch);
                if *ch == 2 {
                    Err(fail(500, true))
                } else {
                    Ok("answer")
                }
            },
        ));
        assert_eq!(got, Ok((1, "answer")));
        assert_eq!(calls, vec![2, 1]);
        assert!(fake.is_frozen(2), "the failed channel is frozen");
        assert_eq!(*fake.failures.borrow(), vec![2]);
    }

    #[test]
    fn a_client_error_is_not_retried() {
        let fake = Fake::default();
        let mut calls = 0;
        let got = run(dispatch(
            &fake,
            &[cand(1, 0), cand(2, 0)],
            &policy(3),
            "m",
            async |_: &i64| -> Result<(), _> {
                calls += 1;
                Err(fail(400, false))
            },
        ));
        assert_eq!(calls, 1);
        assert_eq!(got.unwrap_err().status, 400);
        assert!(fake.frozen.borrow().is_empty());
    }

    #[test]
    fn retries_are_bounded_and_the_last_failure_is_answered() {
        let fake = Fake::default();
        let mut calls = 0;
        let got = run(dispatch(
            &fake,
            &[cand(1, 0), cand(2, 0), cand(3, 0)],
            &policy(1),
            "m",
            async |_: &i64| -> Result<(), _> {
                calls += 1;
                Err(UpstreamFailure {
                    retry_after: Some(9),
                    ..fail(429, true)
                })
            },
        ));
        assert_eq!(calls, 2);
        let r = got.unwrap_err();
        assert_eq!((r.status, r.retry_after), (429, Some(9)));
    }

    #[test]
    fn a_frozen_only_channel_is_still_tried() {
        // Gap 5 of issue 11: one 429 froze the model's only channel; the next request must try
        // it again rather than answer 503 no_available_channel.
        let fake = Fake::default();
        fake.freeze(1, Duration::from_secs(60));
        let got = run(dispatch(
            &fake,
            &[cand(1, 0)],
            &policy(0),
            "m",
            async |_: &i64| Ok(()),
        ));
        assert_eq!(got, Ok((1, ())));
    }

    #[test]
    fn unfrozen_channels_go_before_frozen_ones() {
        let fake = Fake::default();
        fake.freeze(2, Duration::from_secs(60));
        let mut calls = Vec::new();
        let got = run(dispatch(
            &fake,
            &[cand(1, 0), cand(2, 10)],
            &policy(2),
            "m",
            async |ch: &i64| -> Result<(), _> {
                calls.push(*ch);
                Err(fail(503, true))
            },
        ));
        assert_eq!(
            calls,
            vec![1, 2],
            "the frozen high-priority channel goes last"
        );
        assert_eq!(got.unwrap_err().status, 503);
    }

    #[test]
    fn credentials_failures_disable_when_allowed() {
        let fake = Fake::default();
        let bad_key = || UpstreamFailure {
            auto_disable: true,
            ..fail(401, true)
        };
        let _ = run(dispatch(
            &fake,
            &[cand(1, 0)],
            &policy(0),
            "m",
            async |_: &i64| -> Result<(), _> { Err(bad_key()) },
        ));
        assert_eq!(*fake.disabled.borrow(), vec![1]);
        let off = Fake::default();
        let got = run(dispatch(
            &off,
            &[cand(1, 0)],
            &Policy {
                auto_disable: false,
                ..policy(0)
            },
            "m",
            async |_: &i64| -> Result<(), _> { Err(bad_key()) },
        ));
        assert!(off.disabled.borrow().is_empty());
        assert_eq!(
            got.unwrap_err().status,
            502,
            "the channel's 401 is not the client's"
        );
    }

    #[test]
    fn nothing_to_try_is_no_available_channel() {
        let fake = Fake {
            gone: vec![1],
            ..Fake::default()
        };
        let got = run(dispatch(
            &fake,
            &[cand(1, 0)],
            &policy(0),
            "gpt-x",
            async |_: &i64| Ok(()),
        ));
        let r = got.unwrap_err();
        assert_eq!((r.status, &*r.code), (503, "no_available_channel"));
        assert!(r.message.contains("gpt-x"));
        let none = run(dispatch(
            &Fake::default(),
            &[],
            &policy(0),
            "m",
            async |_: &i64| Ok(()),
        ));
        assert_eq!(none.unwrap_err().code, "no_available_channel");
    }

    #[test]
    fn the_deadline_stops_further_attempts() {
        let fake = Fake::default();
        let mut calls = 0;
        let got = run(dispatch(
            &fake,
            &[cand(1, 0), cand(2, 0)],
            &Policy {
                deadline: Some(Instant::now()),
                ..policy(5)
            },
            "m",
            async |_: &i64| -> Result<(), _> {
                calls += 1;
                Err(fail(502, true))
            },
        ));
        assert_eq!(calls, 1, "the first attempt always runs");
        assert_eq!(got.unwrap_err().status, 502);
    }

    #[test]
    fn every_attempt_is_reported_with_its_index_and_failure() {
        /// (channel, model, index, failure status) of one report.
        type Seen = (i64, String, usize, Option<u16>);
        /// Records what the metrics hook is told.
        #[derive(Default)]
        struct Counting {
            inner: Fake,
            seen: RefCell<Vec<Seen>>,
        }
        impl Channels for Counting {
            type Channel = i64;
            fn channel(&self, id: i64) -> Option<i64> {
                self.inner.channel(id)
            }
            fn is_frozen(&self, id: i64) -> bool {
                self.inner.is_frozen(id)
            }
            fn freeze(&self, id: i64, cooldown: Duration) {
                self.inner.freeze(id, cooldown);
            }
            fn failed(&self, channel: &i64, f: &UpstreamFailure) {
                self.inner.failed(channel, f);
            }
            async fn disable(&self, channel: &i64, reason: &str) {
                self.inner.disable(channel, reason).await;
            }
            fn attempted(
                &self,
                channel: &i64,
                model: &str,
                index: usize,
                _: Duration,
                failure: Option<&UpstreamFailure>,
            ) {
                self.seen.borrow_mut().push((
                    *channel,
                    model.to_owned(),
                    index,
                    failure.map(|f| f.status),
                ));
            }
        }
        // Channel 3 is gone: it is skipped without counting as an attempt.
        let c = Counting {
            inner: Fake {
                gone: vec![3],
                ..Fake::default()
            },
            ..Counting::default()
        };
        let got = run(dispatch(
            &c,
            &[cand(1, 0), cand(2, 5), cand(3, 10)],
            &policy(5),
            "m",
            async |ch: &i64| {
                if *ch == 2 {
                    Err(fail(500, true))
                } else {
                    Ok(())
                }
            },
        ));
        assert_eq!(got, Ok((1, ())));
        assert_eq!(
            *c.seen.borrow(),
            vec![
                (2, "m".to_owned(), 0, Some(500)),
                (1, "m".to_owned(), 1, None)
            ]
        );
    }

    #[test]
    fn a_pinned_channel_ignores_its_freezing() {
        let fake = Fake::default();
        fake.freeze(1, Duration::from_secs(60));
        let got = run(dispatch(
            &fake,
            &[cand(1, 0)],
            &Policy {
                pinned: true,
                ..policy(0)
            },
            "m",
            async |_: &i64| Ok(()),
        ));
        assert!(got.is_ok());
    }
}
