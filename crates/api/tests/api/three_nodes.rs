//! Three nodes on loopback (issue #17, "Scale-out and operations"): three applications on one
//! PostgreSQL database sharing one Redis, as a cluster behind a balancer runs them. Under load
//! spread over the three, a key's quota is a hard limit and the ledgers balance to the request;
//! a rate limit is one limit for the cluster; a key disabled on one node is refused by the other
//! two within a second; and a held lease whose holder dies goes to one of the others within its
//! time while a periodic job still runs once per period.
//!
//! Skipped without `TEST_PG_DSN` and `TEST_REDIS_URL`, never in CI.

use crate::common::{unique, TestApp};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_api::jobs::{self, Lease};
use switchboard_ledger::shared::Account;
use switchboard_store::testing::TestDb;
use switchboard_store::{tokens, users};

/// Three nodes on one fresh PostgreSQL database and one Redis (a fresh key prefix), or `None`
/// (after saying so) when either is not configured; in CI both must be.
async fn three_nodes(what: &str) -> Option<(TestDb, [TestApp; 3])> {
    let redis = std::env::var("TEST_REDIS_URL").is_ok_and(|u| !u.is_empty());
    let db = if redis { TestDb::postgres() } else { None };
    let Some(db) = db else {
        assert!(
            std::env::var("CI").is_err(),
            "TEST_PG_DSN and TEST_REDIS_URL must be set in CI"
        );
        println!("TEST_PG_DSN or TEST_REDIS_URL not set: three nodes ({what}) not run");
        return None;
    };
    let prefix = format!("sb3n:{}:", unique());
    let mut nodes = Vec::new();
    for name in ["node-a", "node-b", "node-c"] {
        nodes.push(TestApp::node(db.shared(), &prefix, name).await.unwrap());
    }
    let [a, b, c]: [TestApp; 3] = nodes.try_into().ok().unwrap();
    Some((db, [a, b, c]))
}

/// Makes every node read the channels and prices the first one created (the change messages
/// carry them too; this only removes the race with the test's first request).
async fn all_know_the_channels(nodes: &[&TestApp]) {
    for n in nodes {
        n.state.relay.reload_channels(&n.state).await.unwrap();
        n.state.relay.reload_pricing(&n.state).await.unwrap();
    }
}

/// A relay request; the status and, for a 200, the request id the node gave it. The whole body
/// is read (a stream to its end), within `timeout`.
async fn call(base: String, key: String, body: Value) -> (u16, Option<String>) {
    let r = reqwest::Client::new()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(key)
        .timeout(Duration::from_secs(30))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let id = r
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = r.text().await.unwrap();
    if status == 200 && body["stream"] == true {
        assert!(text.contains("[DONE]"), "a stream cut short: {text}");
    }
    (status, if status == 200 { id } else { None })
}

/// gpt-4o (input 1.25, output 5 per token) on the long-answering mock: every answer runs to the
/// request's `max_tokens`, so a request's worst case is what it really costs.
const MODEL: &str = "gpt-4o";
const MAX_TOKENS: i64 = 300;
/// The key's quota: about twenty requests' worth, for a load of many more.
const KEY_QUOTA: i64 = 30_000;

#[actix_web::test]
async fn a_key_quota_holds_across_three_nodes_and_the_ledgers_balance_to_the_request() {
    let Some((_db, nodes)) = three_nodes("billing").await else {
        return;
    };
    let s = nodes[0]
        .relay_setup(
            10_000_000,
            json!({"unlimited_quota": false, "remain_quota": KEY_QUOTA}),
        )
        .await;
    nodes[0]
        .channel(&s.upstream.base_url, "sk-mock-long", MODEL, 10)
        .await;
    all_know_the_channels(&[&nodes[0], &nodes[1], &nodes[2]]).await;

    // 24 clients, 8 per node, each sending requests one after another (streamed and not)
    // until the key refuses it three times.
    let started = Instant::now();
    let mut clients = Vec::new();
    for i in 0..24 {
        let base = nodes[i % 3].base.clone();
        let key = s.key.clone();
        clients.push(actix_web::rt::spawn(async move {
            let (mut ok, mut refused, mut ids) = (0, 0, Vec::new());
            for n in 0..40 {
                let body = json!({"model": MODEL, "max_tokens": MAX_TOKENS, "stream": (i + n).is_multiple_of(2),
                                  "messages": [{"role": "user", "content": "Write a long story"}]});
                match call(base.clone(), key.clone(), body).await {
                    (200, Some(id)) => {
                        ok += 1;
                        ids.push(id);
                    }
                    (200, None) => panic!("a 200 without a request id"),
                    (402, _) => {
                        refused += 1;
                        if refused == 3 {
                            break;
                        }
                    }
                    (other, _) => panic!("unexpected status {other}"),
                }
            }
            (i % 3, ok, refused, ids)
        }));
    }
    let mut served = [0usize; 3];
    let (mut refused, mut ids) = (0, Vec::new());
    for c in clients {
        let (node, ok, r, i) = c.await.unwrap();
        served[node] += ok;
        refused += r;
        ids.extend(i);
    }
    println!(
        "served per node {served:?}, {refused} refused, in {:?}",
        started.elapsed()
    );
    assert!(
        served.iter().all(|&n| n > 0),
        "every node served some: {served:?}"
    );
    assert!(refused > 0, "the load went past the key's quota");

    // Every node writes what it holds; then the books.
    for n in &nodes {
        n.flushed().await;
    }
    let logs: Vec<_> =
        switchboard_store::logs::recent_for_user(&mut nodes[0].conn(), s.user_id, 10_000)
            .unwrap()
            .into_iter()
            .filter(|l| l.log_type == 2)
            .collect();
    let spent: i64 = logs.iter().map(|l| l.quota).sum();
    let u = users::find(&mut nodes[0].conn(), s.user_id).unwrap();
    let t = tokens::find(&mut nodes[0].conn(), s.token_id).unwrap();
    println!(
        "{} requests served, {spent} spent of {KEY_QUOTA}, {} left",
        ids.len(),
        t.remain_quota
    );
    // Never overspent (OverdraftTolerance is 0): what the key spent is at most its quota.
    assert!(
        t.remain_quota >= 0,
        "the key went below zero: {}",
        t.remain_quota
    );
    assert!(spent <= KEY_QUOTA, "{spent} spent of {KEY_QUOTA}");
    assert_eq!(
        t.remain_quota,
        KEY_QUOTA - spent,
        "the key's balance drop equals the logs"
    );
    assert_eq!(t.used_quota, spent, "the key's used quota equals the logs");
    assert_eq!(u.used_quota, spent, "the user's used quota equals the logs");
    assert_eq!(
        u.quota,
        10_000_000 - spent,
        "the user's balance drop equals the logs"
    );
    // The limit was really crossed: at the end a request's worst case exceeded what was left,
    // and the requests admitted then were told to stop where their reservation ended.
    let worst = 5 * MAX_TOKENS;
    assert!(t.remain_quota < worst, "{} left", t.remain_quota);
    assert!(
        logs.iter()
            .any(|l| i64::from(l.completion_tokens) < MAX_TOKENS),
        "no request was cut at the end of the quota"
    );
    // One consume log per request served, under its request id, and no other.
    let mut logged: HashMap<String, usize> = HashMap::new();
    for l in &logs {
        *logged
            .entry(
                l.request_id
                    .clone()
                    .expect("a consume log has its request id"),
            )
            .or_default() += 1;
    }
    assert!(
        logged.values().all(|&n| n == 1),
        "request ids logged twice: {:?}",
        logged.iter().filter(|(_, &n)| n > 1).collect::<Vec<_>>()
    );
    let served_ids: HashSet<String> = ids.iter().cloned().collect();
    assert_eq!(served_ids.len(), ids.len(), "request ids are unique");
    assert_eq!(
        served_ids,
        logged.keys().cloned().collect::<HashSet<_>>(),
        "the logged requests are the served ones"
    );
    // Redis agrees with the database, nothing is left reserved or unwritten.
    let sh = nodes[0].state.relay.shared().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let view = (
            sh.field(Account::User(s.user_id), "res").await.unwrap(),
            sh.field(Account::Token(s.token_id), "res").await.unwrap(),
            sh.field(Account::User(s.user_id), "bal").await.unwrap(),
            sh.field(Account::Token(s.token_id), "bal").await.unwrap(),
        );
        let want = (Some(0), Some(0), Some(u.quota), Some(t.remain_quota));
        if view == want {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Redis {view:?}, database {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for n in &nodes {
        assert_eq!(n.state.relay.ledger.redis_backlog(), 0);
    }
}

#[actix_web::test]
async fn a_key_rate_limit_is_one_limit_for_the_three_nodes() {
    let Some((_db, nodes)) = three_nodes("rate limit").await else {
        return;
    };
    // 6 requests a minute (a fixed window): one limit, whichever node counts.
    let s = nodes[0]
        .relay_setup(1_000_000, json!({"unlimited_quota": true, "api_rate": 6}))
        .await;
    all_know_the_channels(&[&nodes[0], &nodes[1], &nodes[2]]).await;
    let mut calls = Vec::new();
    for i in 0..18 {
        let body = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
        calls.push(actix_web::rt::spawn(call(
            nodes[i % 3].base.clone(),
            s.key.clone(),
            body,
        )));
    }
    let mut by_status: HashMap<u16, usize> = HashMap::new();
    for c in calls {
        *by_status.entry(c.await.unwrap().0).or_default() += 1;
    }
    assert_eq!(
        by_status,
        HashMap::from([(200, 6), (429, 12)]),
        "6 a minute for the cluster, not per node"
    );
    // Still refused on each node (the window is the cluster's).
    for n in &nodes {
        let body = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(call(n.base.clone(), s.key.clone(), body).await.0, 429);
    }
}

async fn chat_status(node: &TestApp, key: &str) -> u16 {
    let body = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
    call(node.base.clone(), key.to_owned(), body).await.0
}

/// Polls until `status` is what `key` gets from every node in `on`; panics after one second.
async fn seen_by(on: &[&TestApp], key: &str, status: u16, what: &str) -> Duration {
    let start = Instant::now();
    let mut pending: Vec<&TestApp> = on.to_vec();
    loop {
        let mut still = Vec::new();
        for n in pending {
            if chat_status(n, key).await != status {
                still.push(n);
            }
        }
        if still.is_empty() {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{what}: not seen by {:?} within a second",
            still.iter().map(|n| n.base.as_str()).collect::<Vec<_>>()
        );
        pending = still;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[actix_web::test]
async fn a_key_disabled_on_one_node_is_refused_by_the_two_others_within_a_second() {
    let Some((_db, [a, b, c])) = three_nodes("cache coherence").await else {
        return;
    };
    let s = a
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    all_know_the_channels(&[&a, &b, &c]).await;
    // Every node has the key in its cache.
    for n in [&a, &b, &c] {
        assert_eq!(chat_status(n, &s.key).await, 200);
    }
    s.user
        .put("/api/token", json!({"id": s.token_id, "status": 2}))
        .await
        .ok();
    let off = seen_by(&[&b, &c], &s.key, 401, "key disabled").await;
    assert_eq!(chat_status(&a, &s.key).await, 401);
    s.user
        .put("/api/token", json!({"id": s.token_id, "status": 1}))
        .await
        .ok();
    let on = seen_by(&[&b, &c], &s.key, 200, "key enabled again").await;
    println!("disabled seen by both others after {off:?}, enabled after {on:?}");
}

/// What a node saw of the held lease: (node, when, whether it held it).
type Seen = Arc<Mutex<Vec<(usize, Instant, bool)>>>;
/// The runs of the periodic job: (node, clock before the call, clock after), in seconds.
type Runs = Arc<Mutex<Vec<(usize, i64, i64)>>>;

/// One node's background work as the server runs it: renew (or try to take) the held lease
/// `bot` every 200 ms, and try the periodic task poll (a 2 s period) every 100 ms.
fn node_jobs(
    i: usize,
    state: actix_web::web::Data<switchboard_api::AppState>,
    seen: Seen,
    runs: Runs,
) -> Vec<actix_web::rt::task::JoinHandle<()>> {
    use switchboard_api::relay::tasks::poll_tasks_once;
    let name = format!("node-{i}");
    let (st, holder) = (state.clone(), name.clone());
    let lease = actix_web::rt::spawn(async move {
        loop {
            let held = jobs::acquire(&st, "bot", &holder, 1, Lease::Held)
                .await
                .unwrap();
            seen.lock().unwrap().push((i, Instant::now(), held));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let period = actix_web::rt::spawn(async move {
        loop {
            let before = switchboard_store::now();
            let ran = poll_tasks_once(&state, &name, Duration::from_secs(2))
                .await
                .unwrap();
            if ran.is_some() {
                runs.lock()
                    .unwrap()
                    .push((i, before, switchboard_store::now()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    vec![lease, period]
}

/// The nodes that held the lease in `seen` at or after `from` (and before `to`).
fn holders(seen: &Seen, from: Instant, to: Instant) -> HashSet<usize> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|(_, at, held)| *held && *at >= from && *at < to)
        .map(|(i, _, _)| *i)
        .collect()
}

#[actix_web::test]
async fn a_dead_lease_holder_is_replaced_by_one_of_the_two_others_and_periodic_jobs_run_once() {
    let Some((_db, nodes)) = three_nodes("leader hand-over").await else {
        return;
    };
    let seen: Seen = Arc::default();
    let runs: Runs = Arc::default();
    let mut nodes: Vec<Option<TestApp>> = nodes.into_iter().map(Some).collect();
    let mut work: Vec<_> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            node_jobs(
                i,
                n.as_ref().unwrap().state.clone(),
                seen.clone(),
                runs.clone(),
            )
        })
        .collect();
    // The three race for the lease; one wins and keeps it while it renews, past its time.
    let start = Instant::now();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let before = holders(&seen, start, Instant::now());
    assert_eq!(before.len(), 1, "one holder at a time: {before:?}");
    let dead = *before.iter().next().unwrap();
    // The holder dies: its jobs stop with it, and its server.
    for h in work[dead].drain(..) {
        h.abort();
    }
    let died = Instant::now();
    let died_at = switchboard_store::now();
    drop(nodes[dead].take());
    // One of the two others holds it within the lease's time (one second, and a second of
    // clock granularity: leases are in whole seconds).
    let took = loop {
        let now = Instant::now();
        let after = holders(&seen, died, now);
        assert!(!after.contains(&dead), "the dead node renewed");
        if !after.is_empty() {
            break now - died;
        }
        assert!(
            now - died < Duration::from_secs(3),
            "no hand-over within 3 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // ... and keeps it: the other living node never gets it.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let after = holders(&seen, died, Instant::now());
    assert_eq!(after.len(), 1, "one new holder: {after:?}");
    for w in work.iter_mut() {
        for h in w.drain(..) {
            h.abort();
        }
    }
    println!("held lease handed from node-{dead} to node-{after:?} after {took:?}");

    // The periodic job ran once per period all along, on one node at a time, also after
    // its node died: a run is taken at least two (whole) seconds after the one before.
    let mut runs = runs.lock().unwrap().clone();
    runs.sort_by_key(|r| r.1);
    println!("task-poll runs (node, from, to): {runs:?}");
    assert!(runs.len() >= 3, "the job ran each period: {runs:?}");
    for w in runs.windows(2) {
        assert!(
            w[1].2 >= w[0].1 + 2,
            "two runs in one period: {:?} then {:?}",
            w[0],
            w[1]
        );
    }
    assert!(
        runs.iter().any(|r| r.1 >= died_at && r.0 != dead),
        "the job ran after its node died: {runs:?}"
    );
    drop(nodes);
}
