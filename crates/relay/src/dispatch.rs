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

use std::future::Future;
use std::time::{Duration, Instant};

use switchboard_domain::dispatch::{pick, Candidate};

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

    /// Disables the channel automatically, when its own settings allow it.
    fn disable(&self, channel: &Self::Channel, reason: &str) -> impl Future<Output = ()>;
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
    for n in 0..=policy.retries {
        if n > 0 && policy.deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let Some(id) = next(channels, candidates, policy, &tried) else {
            break;
        };
        tried.push(id);
        let Some(ch) = channels.channel(id) else {
            continue;
        };
        let failure = match attempt(&ch).await {
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
