//! The dispatch loop with smarter routing on: the circuit breaker's ordering and reports, and
//! latency-aware choice.

use super::*;
use std::cell::RefCell;
use std::collections::HashMap;

#[derive(Default)]
struct Fake {
    frozen: RefCell<HashMap<i64, Duration>>,
    health: Health,
}

impl Channels for Fake {
    type Channel = i64;
    fn channel(&self, id: i64) -> Option<i64> {
        Some(id)
    }
    fn is_frozen(&self, id: i64) -> bool {
        self.frozen.borrow().contains_key(&id)
    }
    fn freeze(&self, id: i64, cooldown: Duration) {
        // As the relay state: a zero cooldown freezes nothing.
        if !cooldown.is_zero() {
            self.frozen.borrow_mut().insert(id, cooldown);
        }
    }
    fn failed(&self, _: &i64, _: &UpstreamFailure) {}
    async fn disable(&self, _: &i64, _: &str) {}
    fn health(&self) -> Option<&Health> {
        Some(&self.health)
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

fn breaker(open_ms: u64) -> BreakerConfig {
    BreakerConfig {
        error_ratio: 0.5,
        min_requests: 2,
        window_ms: 60_000,
        open_ms,
    }
}

fn policy(retries: usize, routing: Routing) -> Policy {
    Policy {
        retries,
        routing,
        ..Policy::default()
    }
}

fn run<T>(f: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(f)
}

fn state_of(fake: &Fake, id: i64) -> &'static str {
    fake.health
        .list(&breaker(60_000))
        .iter()
        .find(|p| p.channel_id == id)
        .map_or("none", |p| p.state.as_str())
}

#[test]
fn an_open_breaker_holds_the_channel_out_until_its_probe() {
    let fake = Fake::default();
    let on = policy(
        1,
        Routing {
            breaker: Some(breaker(60_000)),
            latency_aware: false,
        },
    );
    // Channel 2 (higher priority) fails twice: 2 of 2 >= 0.5 opens it.
    for _ in 0..2 {
        let got = run(dispatch(
            &fake,
            &[cand(1, 0), cand(2, 10)],
            &on,
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
    }
    assert_eq!(state_of(&fake, 2), "open");
    // Now the higher-priority channel is not tried first any more.
    let mut calls = Vec::new();
    let got = run(dispatch(
        &fake,
        &[cand(1, 0), cand(2, 10)],
        &on,
        "m",
        async |ch: &i64| {
            calls.push(*ch);
            Ok(())
        },
    ));
    assert_eq!((got, calls), (Ok((1, ())), vec![1]));
}

#[test]
fn an_open_only_channel_is_still_tried_last_and_forced_outcomes_change_nothing() {
    let fake = Fake::default();
    let on = policy(
        2,
        Routing {
            breaker: Some(breaker(60_000)),
            latency_aware: false,
        },
    );
    for _ in 0..2 {
        let _ = run(dispatch(
            &fake,
            &[cand(1, 0)],
            &on,
            "m",
            async |_: &i64| -> Result<(), _> { Err(fail(502, true)) },
        ));
    }
    assert_eq!(state_of(&fake, 1), "open");
    // Frozen too (the cooldown): still tried, after the fresh channel 3 that fails.
    fake.freeze(1, Duration::from_secs(60));
    let mut calls = Vec::new();
    let got = run(dispatch(
        &fake,
        &[cand(1, 10), cand(3, 0)],
        &on,
        "m",
        async |ch: &i64| {
            calls.push(*ch);
            if *ch == 3 {
                Err(fail(503, true))
            } else {
                Ok(())
            }
        },
    ));
    assert_eq!(got, Ok((1, ())));
    assert_eq!(calls, vec![3, 1], "the open channel goes last");
    assert_eq!(
        state_of(&fake, 1),
        "open",
        "a forced success does not close it"
    );
}

#[test]
fn a_half_open_breaker_probes_once_and_a_success_closes_it() {
    let fake = Fake::default();
    let on = policy(
        0,
        Routing {
            breaker: Some(breaker(0)),
            latency_aware: false,
        },
    );
    for _ in 0..2 {
        let _ = run(dispatch(
            &fake,
            &[cand(1, 0)],
            &on,
            "m",
            async |_: &i64| -> Result<(), _> { Err(fail(500, true)) },
        ));
    }
    // open_ms 0: due at once. While the probe is out, a concurrent request goes elsewhere.
    let probe = fake
        .health
        .begin(1, "m", on.routing.breaker.as_ref(), false)
        .unwrap();
    assert!(probe.is_probe());
    let mut calls = Vec::new();
    let _ = run(dispatch(
        &fake,
        &[cand(1, 10), cand(2, 0)],
        &on,
        "m",
        async |ch: &i64| {
            calls.push(*ch);
            Ok(())
        },
    ));
    assert_eq!(calls, vec![2], "the probe is taken: channel 1 is skipped");
    drop(probe);
    // The dispatch's own probe succeeds: closed.
    let got = run(dispatch(
        &fake,
        &[cand(1, 10), cand(2, 0)],
        &on,
        "m",
        async |_: &i64| Ok(()),
    ));
    assert_eq!(got, Ok((1, ())));
    assert_eq!(state_of(&fake, 1), "closed");
}

#[test]
fn client_errors_are_not_channel_faults() {
    assert!(!is_channel_fault(&fail(400, false)));
    assert!(!is_channel_fault(&fail(404, false)));
    assert!(is_channel_fault(&fail(500, true)));
    assert!(is_channel_fault(&fail(504, false)), "a timeout not retried");
    assert!(is_channel_fault(&fail(429, true)));
    assert!(is_channel_fault(&fail(401, true)), "bad credentials");
    let fake = Fake::default();
    let on = policy(
        0,
        Routing {
            breaker: Some(breaker(60_000)),
            latency_aware: false,
        },
    );
    for _ in 0..5 {
        let _ = run(dispatch(
            &fake,
            &[cand(1, 0)],
            &on,
            "m",
            async |_: &i64| -> Result<(), _> { Err(fail(400, false)) },
        ));
    }
    let l = fake.health.list(&breaker(60_000));
    assert_eq!(
        (l[0].state.as_str(), l[0].requests, l[0].failures),
        ("closed", 5, 0)
    );
}

#[test]
fn off_reports_nothing() {
    let fake = Fake::default();
    let _ = run(dispatch(
        &fake,
        &[cand(1, 0)],
        &policy(0, Routing::default()),
        "m",
        async |_: &i64| -> Result<(), _> { Err(fail(500, true)) },
    ));
    assert!(fake.health.list(&breaker(1)).is_empty());
}

#[test]
fn latency_aware_choice_prefers_the_fast_channel() {
    let fake = Fake::default();
    let on = policy(
        0,
        Routing {
            breaker: None,
            latency_aware: true,
        },
    );
    let cands = [cand(1, 0), cand(2, 0)];
    let mut counts: HashMap<i64, u32> = HashMap::new();
    for _ in 0..40 {
        let got = run(dispatch(&fake, &cands, &on, "m", async |ch: &i64| {
            let wait = if *ch == 2 { 20 } else { 1 };
            tokio::time::sleep(Duration::from_millis(wait)).await;
            Ok(())
        }));
        *counts.entry(got.unwrap().0).or_default() += 1;
    }
    // Both start unmeasured (cost 0); once measured, the slow one loses every two-way draw.
    assert!(
        counts.get(&2).copied().unwrap_or(0) <= 2,
        "the slow channel is left alone: {counts:?}"
    );
    let l = fake.health.list(&breaker(1));
    assert!(l.iter().all(|p| p.in_flight == 0 && p.latency_ms.is_some()));
}
