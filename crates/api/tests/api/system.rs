//! The system panel over HTTP: node info (admin) and the in-memory system log (root). The
//! server's tracing subscriber is not installed in tests, so the log buffer is fed directly.

use crate::common::{RedisNode, TestApp};
use switchboard_api::log_buffer::{self, DEFAULT_CAPACITY};

#[actix_web::test]
async fn system_info_has_plausible_values() {
    let app = TestApp::new().await;
    let (user, _) = app.user("someone").await;
    let (admin, _) = app.admin("operator").await;
    assert_eq!(app.client().get("/api/system/info").await.status, 401);
    user.get("/api/system/info").await.err(403, "forbidden");
    for _ in 0..2 {
        let r = admin.get("/api/system/info").await;
        let d = r.ok();
        let total = d["memory"]["total_bytes"].as_u64().unwrap();
        let used = d["memory"]["used_bytes"].as_u64().unwrap();
        let rss = d["memory"]["process_rss_bytes"].as_u64().unwrap();
        assert!(total > 0, "{d}");
        assert!(used > 0 && used <= total, "{d}");
        assert!(rss > 0 && rss <= total, "{d}");
        let cpu = d["cpu_percent"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&cpu), "{d}");
        assert!(d["cores"].as_u64().unwrap() >= 1);
        assert!(d["uptime_seconds"].as_i64().unwrap() >= 0);
        assert_eq!(d["version"], switchboard_domain::VERSION);
        assert_eq!(d["backend"], "sqlite");
        assert_eq!(d["redis"], false);
        assert_eq!(d["pending_consume_records"], 0);
    }
    assert_eq!(app.root().get("/api/system/info").await.status, 200);
}

#[actix_web::test]
async fn system_log_is_root_only_keeps_the_last_lines_and_pages_after_a_seq() {
    let app = TestApp::new().await;
    let (user, _) = app.user("viewer").await;
    let (admin, _) = app.admin("helper").await;
    assert_eq!(app.client().get("/api/system/log").await.status, 401);
    user.get("/api/system/log").await.err(403, "forbidden");
    admin.get("/api/system/log").await.err(403, "forbidden");
    let root = app.root();

    // The only writer of the global buffer in this test binary is this test.
    let buf = log_buffer::global();
    let extra = 150;
    let first = buf.push("INFO", "switchboard: line 0");
    for i in 1..(DEFAULT_CAPACITY + extra) {
        buf.push(
            if i % 2 == 0 { "INFO" } else { "WARN" },
            &format!("switchboard: line {i}"),
        );
    }
    let last = first + (DEFAULT_CAPACITY + extra) as u64 - 1;

    // Without `after`: the newest lines.
    let r = root.get("/api/system/log?limit=5").await;
    let d = r.ok();
    let lines = d["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[4]["seq"], last);
    assert_eq!(d["next"], last);
    assert_eq!(d["capacity"], DEFAULT_CAPACITY);
    let l = &lines[4];
    assert_eq!(
        l["text"],
        format!("switchboard: line {}", DEFAULT_CAPACITY + extra - 1)
    );
    assert!(l["time"].as_str().unwrap().ends_with('Z'));
    assert!(["INFO", "WARN"].contains(&l["level"].as_str().unwrap()));

    // From the start: only the last DEFAULT_CAPACITY lines are left, read page by page.
    let mut after = 0u64;
    let mut seen = Vec::new();
    let mut truncated = None;
    loop {
        let r = root
            .get(&format!("/api/system/log?after={after}&limit=700"))
            .await;
        let d = r.ok().clone();
        truncated.get_or_insert(d["truncated"].as_bool().unwrap());
        let lines = d["lines"].as_array().unwrap().clone();
        if lines.is_empty() {
            assert_eq!(d["next"], after);
            break;
        }
        assert!(lines.len() <= 700);
        seen.extend(lines.iter().map(|l| l["seq"].as_u64().unwrap()));
        after = d["next"].as_u64().unwrap();
    }
    assert_eq!(truncated, Some(true), "the oldest lines were dropped");
    assert_eq!(seen.len(), DEFAULT_CAPACITY);
    assert_eq!(seen[0], last - DEFAULT_CAPACITY as u64 + 1);
    assert!(seen.windows(2).all(|w| w[1] == w[0] + 1));

    // Polling after the newest line answers nothing new; a new line comes next.
    let d = root.get(&format!("/api/system/log?after={last}")).await;
    assert!(d.ok()["lines"].as_array().unwrap().is_empty());
    let seq = buf.push("ERROR", "switchboard: something broke");
    let d = root.get(&format!("/api/system/log?after={last}")).await;
    let d = d.ok();
    assert_eq!(d["lines"][0]["seq"], seq);
    assert_eq!(d["lines"][0]["level"], "ERROR");
    assert_eq!(d["next"], seq);
    assert_eq!(d["truncated"], false);

    // Bad input.
    for q in ["limit=0", "limit=1001", "limit=x", "after=-1", "after=abc"] {
        let r = root.get(&format!("/api/system/log?{q}")).await;
        assert_eq!(r.status, 400, "{q}: {:?}", r.body);
    }
}

#[actix_web::test]
async fn system_info_names_the_holder_of_each_cluster_job() {
    let app = TestApp::new().await;
    let at = switchboard_store::now();
    let c = &mut app.conn();
    assert!(switchboard_store::job_locks::try_acquire(c, "telegram", "node-a", at, 60).unwrap());
    assert!(
        switchboard_store::job_locks::try_acquire(c, "task-poll", "node-b", at - 100, 10).unwrap()
    );
    let r = app.root().get("/api/system/info").await;
    let leases = r.ok()["leases"].clone();
    let find = |name: &str| {
        leases
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {leases}"))
    };
    assert_eq!(
        (
            find("telegram")["holder"].clone(),
            find("telegram")["held"].clone()
        ),
        (serde_json::json!("node-a"), serde_json::json!(true))
    );
    assert_eq!(
        find("task-poll")["held"],
        false,
        "expired: nobody runs it now"
    );
}

async fn probe(app: &TestApp, path: &str) -> (u16, serde_json::Value) {
    let r = reqwest::get(app.url(path)).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[actix_web::test]
async fn health_and_readiness_probes_answer_without_a_session() {
    let app = TestApp::new().await;
    assert_eq!(
        probe(&app, "/healthz").await,
        (200, serde_json::json!({"status": "ok"}))
    );
    assert_eq!(
        probe(&app, "/readyz").await,
        (
            200,
            serde_json::json!({"status": "ready", "database": "ok", "redis": "off"})
        )
    );
    // With the ledger in Redis, Redis is probed too.
    let Some(app) = TestApp::with_redis(switchboard_store::testing::TestDb::sqlite()).await else {
        assert!(
            std::env::var("CI").is_err(),
            "TEST_REDIS_URL must be set in CI"
        );
        return;
    };
    let (status, body) = probe(&app, "/readyz").await;
    assert_eq!(
        (status, body["redis"].clone()),
        (200, serde_json::json!("ok"))
    );
}

/// `psql` against the PostgreSQL server the tests use.
fn psql(admin: &str, sql: &str) {
    let out = std::process::Command::new("psql")
        .arg(admin)
        .args(["-v", "ON_ERROR_STOP=1", "-qc", sql])
        .output()
        .expect("psql runs");
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[actix_web::test]
async fn a_node_whose_database_goes_away_is_not_ready_until_it_is_back() {
    let Some(db) = switchboard_store::testing::TestDb::postgres() else {
        assert!(
            std::env::var("CI").is_err(),
            "TEST_PG_DSN must be set in CI"
        );
        return;
    };
    let admin = std::env::var("TEST_PG_DSN").unwrap();
    let name = db.dsn.rsplit('/').next().unwrap().to_owned();
    let app = TestApp::on(db, |_| {}).await;
    assert_eq!(probe(&app, "/readyz").await.0, 200);
    // A user with a key in use (its balance and the key are in the node's memory).
    let s = app
        .relay_setup(1_000_000, serde_json::json!({"unlimited_quota": true}))
        .await;
    let chat = serde_json::json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(
        app.relay(&s.key, "/v1/chat/completions", chat.clone())
            .await
            .status,
        200
    );
    app.flushed().await;
    // The database refuses connections and drops the open ones (a restart, a failover).
    psql(
        &admin,
        &format!("ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false"),
    );
    psql(
        &admin,
        &format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"),
    );
    let (status, body) = probe(&app, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "unavailable");
    assert!(
        body["database"]
            .as_str()
            .unwrap()
            .starts_with("unavailable"),
        "{body}"
    );
    assert_eq!(
        probe(&app, "/healthz").await.0,
        200,
        "alive, only not ready"
    );
    // The relay keeps serving a key it knows (its charge waits in the ledger) ...
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat.clone())
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // ... and what needs the database fails cleanly: 503 with its code, nothing half-written.
    let r = app.root().get("/api/user/self").await;
    assert_eq!(r.status, 503, "{:?}", r.body);
    assert_eq!(r.body["success"], false);
    assert_eq!(r.body["code"], "database_unavailable");
    // Back: ready again without a restart, and requests are served.
    psql(
        &admin,
        &format!("ALTER DATABASE {name} WITH ALLOW_CONNECTIONS true"),
    );
    let mut status = 0;
    for _ in 0..20 {
        status = probe(&app, "/readyz").await.0;
        if status == 200 {
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(status, 200);
    assert_eq!(app.root().get("/api/user/self").await.status, 200);
    // The charge made while the database was away is written once it is back, exactly.
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    let spent: i64 = logs.iter().map(|l| l.quota).sum();
    let u = switchboard_store::users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!((u.quota, u.used_quota), (1_000_000 - spent, spent));
}

/// The value of the metric line `name ` in a Prometheus text answer.
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} in {text}"))
        .parse()
        .unwrap()
}

#[actix_web::test]
async fn metrics_show_the_pool_and_the_ledger_flush() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(10_000_000, serde_json::json!({"unlimited_quota": true}))
        .await;
    let scrape = || async {
        let r = reqwest::get(app.url("/metrics")).await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4"));
        r.text().await.unwrap()
    };
    let before = scrape().await;
    assert!(before.contains("# TYPE switchboard_ledger_pending_records gauge"));
    assert!(before.contains(&format!(
        "switchboard_build_info{{version=\"{}\",backend=\"sqlite\"}} 1",
        switchboard_domain::VERSION
    )));
    // The shared pool and the consume-log writer's own connection (the harness opens it as
    // the server does).
    assert_eq!(
        metric(&before, "switchboard_db_pool_max_connections"),
        f64::from(app.state.pool.max_size() + 1)
    );
    assert_eq!(metric(&before, "switchboard_redis_enabled"), 0.0);
    let chat = serde_json::json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
    for _ in 0..3 {
        assert_eq!(
            app.relay(&s.key, "/v1/chat/completions", chat.clone())
                .await
                .status,
            200
        );
    }
    // The node's flusher writes them: nothing left waiting, and a flush newer than before.
    let flushed_before = metric(&before, "switchboard_ledger_last_flush_timestamp_seconds");
    actix_web::rt::time::sleep(std::time::Duration::from_millis(1100)).await;
    app.flushed().await;
    let after = scrape().await;
    assert_eq!(metric(&after, "switchboard_ledger_pending_records"), 0.0);
    assert_eq!(metric(&after, "switchboard_ledger_open_reservations"), 0.0);
    assert!(metric(&after, "switchboard_ledger_last_flush_timestamp_seconds") > flushed_before);
    // At least one shared connection (r2d2's min_idle) and the writer's, which just flushed.
    assert!(metric(&after, "switchboard_db_pool_connections") >= 2.0);
}

#[actix_web::test]
async fn metrics_can_require_a_bearer_token() {
    let app = TestApp::with_config(|c| c.metrics_token = Some("scrape-me".into())).await;
    let r = reqwest::get(app.url("/metrics")).await.unwrap();
    assert_eq!(r.status(), 401);
    let wrong = reqwest::Client::new()
        .get(app.url("/metrics"))
        .bearer_auth("scrape-you")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let ok = reqwest::Client::new()
        .get(app.url("/metrics"))
        .bearer_auth("scrape-me")
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    assert!(ok
        .text()
        .await
        .unwrap()
        .contains("switchboard_uptime_seconds"));
}

/// A relay call under load: status, error code, how long it took and the request id of a 200.
async fn timed_call(
    url: String,
    key: String,
    body: serde_json::Value,
) -> (u16, String, std::time::Duration, Option<String>) {
    let started = std::time::Instant::now();
    let r = reqwest::Client::new()
        .post(url)
        .bearer_auth(key)
        // A request that takes this long has hung: the test fails on it.
        .timeout(std::time::Duration::from_secs(15))
        .json(&body)
        .send()
        .await
        .expect("an answer, not a hang");
    let status = r.status().as_u16();
    let id = r
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = r.text().await.expect("the whole body, not a hang");
    let code = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
        .unwrap_or_default();
    if status == 200 && body["stream"] == true {
        assert!(text.contains("[DONE]"), "a stream cut short: {text}");
    }
    (
        status,
        code,
        started.elapsed(),
        id.filter(|_| status == 200),
    )
}

#[actix_web::test]
async fn redis_restarting_under_load_fails_requests_cleanly_and_the_books_balance() {
    use crate::common::PrivateRedis;
    use serde_json::json;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    if !crate::common::redis_configured("Redis restarting under load") {
        return;
    }
    // A Redis of the test's own, which it may kill (the system's is never touched), and the
    // database the other PostgreSQL tests use when configured.
    let mut redis = PrivateRedis::start();
    let db = switchboard_store::testing::TestDb::postgres()
        .unwrap_or_else(switchboard_store::testing::TestDb::sqlite);
    let app = redis.node(db).await;
    let (user_start, key_start) = (100_000_000, 50_000_000);
    let s = app
        .relay_setup(
            user_start,
            json!({"unlimited_quota": false, "remain_quota": key_start}),
        )
        .await;
    // A slower channel too, so that requests are in flight when Redis goes.
    app.channel(&s.upstream.base_url, "sk-mock-slow", "gpt-4o", 0)
        .await;
    app.state.relay.reload_channels(&app.state).await.unwrap();

    // Six clients send requests one after another (fast and slow, streamed and not) ...
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for i in 0..6usize {
        let (url, key, stop) = (app.url("/v1/chat/completions"), s.key.clone(), stop.clone());
        clients.push(actix_web::rt::spawn(async move {
            let mut seen = Vec::new();
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let model = if (i + n).is_multiple_of(3) {
                    "gpt-4o"
                } else {
                    "gpt-4o-mini"
                };
                let body = json!({"model": model, "stream": (i + n).is_multiple_of(2),
                                  "messages": [{"role": "user", "content": "hi"}]});
                seen.push(timed_call(url.clone(), key.clone(), body).await);
                n += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            seen
        }));
    }
    // ... while Redis crashes for a moment and comes back.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    redis.down();
    let went = Instant::now();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    redis.up();
    println!("Redis away for {:?}", went.elapsed());
    tokio::time::sleep(Duration::from_millis(3000)).await;
    stop.store(true, Ordering::Relaxed);
    let mut seen = Vec::new();
    for c in clients {
        seen.extend(c.await.unwrap());
    }
    let count = |st: u16| seen.iter().filter(|r| r.0 == st).count();
    let slowest = seen.iter().map(|r| r.2).max().unwrap();
    println!(
        "{} requests: {} served, {} refused (503), slowest {slowest:?}",
        seen.len(),
        count(200),
        count(503)
    );
    // Every request was served or refused cleanly with the documented code, none hung.
    for (status, code, took, _) in &seen {
        assert!(
            *status == 200 || (*status == 503 && code == "ledger_unavailable"),
            "{status} {code}"
        );
        assert!(*took < Duration::from_secs(5), "a request took {took:?}");
    }
    assert!(count(503) > 0, "the outage was seen");
    assert!(count(200) > count(503), "most requests were served");
    let served_under_load = count(200);
    // Back: requests are served again (the clients' last ones already were, and more now).
    let body = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
    for _ in 0..5 {
        let r = timed_call(app.url("/v1/chat/completions"), s.key.clone(), body.clone()).await;
        assert_eq!((r.0, r.1.as_str()), (200, ""));
        seen.push(r);
    }
    // The books balance to the request: one consume log per request served, under its id;
    // the user's and the key's used quota equal their sum; Redis agrees with the database.
    let served: std::collections::HashSet<String> =
        seen.iter().filter_map(|r| r.3.clone()).collect();
    assert_eq!(
        served.len(),
        served_under_load + 5,
        "one id per request served"
    );
    let sh = app.state.relay.shared().unwrap().clone();
    use switchboard_ledger::shared::Account;
    let deadline = Instant::now() + Duration::from_secs(15);
    let (logs, u, t) = loop {
        app.flushed().await;
        let logs: Vec<_> =
            switchboard_store::logs::recent_for_user(&mut app.conn(), s.user_id, 100_000)
                .unwrap()
                .into_iter()
                .filter(|l| l.log_type == 2)
                .collect();
        let u = switchboard_store::users::find(&mut app.conn(), s.user_id).unwrap();
        let t = switchboard_store::tokens::find(&mut app.conn(), s.token_id).unwrap();
        let redis_view = (
            sh.field(Account::User(s.user_id), "res")
                .await
                .ok()
                .flatten(),
            sh.field(Account::Token(s.token_id), "res")
                .await
                .ok()
                .flatten(),
            sh.field(Account::User(s.user_id), "bal")
                .await
                .ok()
                .flatten(),
            sh.field(Account::Token(s.token_id), "bal")
                .await
                .ok()
                .flatten(),
        );
        let settled = app.state.relay.ledger.redis_backlog() == 0
            && redis_view == (Some(0), Some(0), Some(u.quota), Some(t.remain_quota));
        if settled {
            break (logs, u, t);
        }
        assert!(
            Instant::now() < deadline,
            "Redis {redis_view:?} never agreed with the database (user {}, key {}), backlog {}",
            u.quota,
            t.remain_quota,
            app.state.relay.ledger.redis_backlog()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let spent: i64 = logs.iter().map(|l| l.quota).sum();
    let logged: Vec<String> = logs.iter().filter_map(|l| l.request_id.clone()).collect();
    assert_eq!(
        logged.len(),
        logs.len(),
        "every consume log has its request id"
    );
    assert_eq!(
        logged
            .iter()
            .cloned()
            .collect::<std::collections::HashSet<_>>(),
        served,
        "the logged requests are the served ones"
    );
    assert_eq!(logs.len(), served.len(), "each logged once");
    assert!(spent > 0);
    assert_eq!((u.used_quota, u.quota), (spent, user_start - spent));
    assert_eq!((t.used_quota, t.remain_quota), (spent, key_start - spent));
}

/// A node on a Redis of the test's own (its key prefix starting `prefix`), a user with
/// 1 000 000 quota and a key limited to 500 000, and one request served, which loads both
/// accounts into Redis.
async fn node_on_private_redis(
    prefix: &str,
) -> (
    crate::common::PrivateRedis,
    TestApp,
    crate::common::RelaySetup,
) {
    use serde_json::json;
    let redis = crate::common::PrivateRedis::start();
    let db = switchboard_store::testing::TestDb::sqlite();
    let prefix = format!("{prefix}:{}:", crate::common::unique());
    let app = TestApp::node_at(db, &redis.url(), &prefix, "n1").await;
    let s = app
        .relay_setup(
            1_000_000,
            json!({"unlimited_quota": false, "remain_quota": 500_000}),
        )
        .await;
    let body = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
    let r = timed_call(app.url("/v1/chat/completions"), s.key.clone(), body).await;
    assert_eq!(r.0, 200, "{r:?}");
    (redis, app, s)
}

/// A reservation Redis makes after its caller stopped waiting (the reply later than the
/// connection's two-second timeout, as under a stalled Redis, or lost with a cut connection)
/// must not hold the balance: the caller withdraws it. Redis is stalled here with `CLIENT PAUSE`,
/// which holds every command it receives and runs them when the pause ends.
#[actix_web::test]
async fn a_reservation_redis_makes_after_its_caller_gave_up_is_withdrawn() {
    use std::time::{Duration, Instant};
    use switchboard_ledger::shared::Account;
    use switchboard_ledger::Shortfall;
    if !crate::common::redis_configured("the late reservation test") {
        return;
    }
    let (redis, app, s) = node_on_private_redis("sblate").await;
    let sh = app.state.relay.shared().unwrap().clone();
    let held = |account| {
        let sh = sh.clone();
        async move { sh.field(account, "res").await.unwrap().unwrap_or(0) }
    };
    assert_eq!(held(Account::User(s.user_id)).await, 0);

    // Redis stalls for longer than the ledger waits for an answer ...
    let paused = redis.pause(Duration::from_millis(3500)).await;
    // ... so the reservation is refused as unavailable, and Redis makes it when it wakes.
    let refused = app
        .state
        .relay
        .ledger
        .reserve(s.user_id, s.token_id, 7_000)
        .await;
    assert!(
        matches!(refused, Err(Shortfall::Unavailable(_))),
        "{refused:?}"
    );
    tokio::time::sleep_until(tokio::time::Instant::from_std(paused)).await;

    // Withdrawn: nothing stays held, in Redis or on the ledger's queue.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        app.state.relay.ledger.apply_queued().await;
        let user = held(Account::User(s.user_id)).await;
        let token = held(Account::Token(s.token_id)).await;
        if app.state.relay.ledger.redis_backlog() == 0 && (user, token) == (0, 0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still held: user {user}, key {token}, backlog {}",
            app.state.relay.ledger.redis_backlog()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // And the account reserves as before.
    let again = app
        .state
        .relay
        .ledger
        .reserve(s.user_id, s.token_id, 7_000)
        .await
        .unwrap();
    assert_eq!(held(Account::User(s.user_id)).await, again.amount);

    // A reservation that reaches Redis only after its withdrawal (a late command on a dropped
    // connection) is refused there, so it cannot be made behind the withdrawal's back.
    let expires = switchboard_ledger::shared::reservation_expiry();
    let late = u64::MAX - 1;
    sh.run(&sh.cancel_call(late, expires)).await.unwrap();
    assert_eq!(
        sh.reserve(late, s.user_id, s.token_id, 100, 100, expires)
            .await
            .unwrap(),
        switchboard_ledger::shared::Reserve::NotLoaded
    );
    assert_eq!(held(Account::User(s.user_id)).await, again.amount);
    assert_eq!(held(Account::Token(s.token_id)).await, again.amount);
}

/// While Redis is away a refused connection sends nothing, so a refused reservation leaves no
/// withdrawal to replay: an outage's refused requests must not pile up work for Redis's return
/// (only a command that may have been sent is withdrawn).
/// A running node drops the once-only markers of the requests it settled once their marker
/// generation is over (every [`switchboard_ledger::MARKER_PERIOD`], from the
/// applier's loop): Redis is left with the current generation's hash and no marker of them.
#[actix_web::test]
async fn a_running_node_drops_the_markers_of_settled_requests() {
    use serde_json::json;
    use std::time::{Duration, Instant};
    use switchboard_ledger::MARKER_PERIOD;
    if !crate::common::redis_configured("a running node's markers") {
        return;
    }
    let (redis, app, s) = node_on_private_redis("sbmarks").await;
    let prefix = app.state.relay.shared().unwrap().prefix().to_owned();
    let body = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
    for _ in 0..5 {
        let r = timed_call(app.url("/v1/chat/completions"), s.key.clone(), body.clone()).await;
        assert_eq!(r.0, 200, "{r:?}");
    }
    let mut admin = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    // The settlements marked applied (fields `s{op}`) in the node's marker generations.
    let mut settlements = async || -> usize {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{prefix}done:n1:g*"))
            .query_async(&mut admin)
            .await
            .unwrap();
        let mut n = 0;
        for k in keys {
            let fields: Vec<String> = redis::cmd("HKEYS")
                .arg(&k)
                .query_async(&mut admin)
                .await
                .unwrap();
            n += fields.iter().filter(|f| f.starts_with('s')).count();
        }
        n
    };
    let marked = settlements().await;
    assert!(marked >= 6, "each settlement is marked: {marked}");
    let deadline = Instant::now() + MARKER_PERIOD * 3;
    loop {
        let left = settlements().await;
        if left == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{left} settlement markers still in Redis"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[actix_web::test]
async fn reservations_refused_while_redis_is_away_queue_nothing() {
    use std::time::{Duration, Instant};
    use switchboard_ledger::shared::Account;
    use switchboard_ledger::Shortfall;
    if !crate::common::redis_configured("refused reservations queue nothing") {
        return;
    }
    let (mut redis, app, s) = node_on_private_redis("sbaway").await;
    let ledger = &app.state.relay.ledger;
    ledger.apply_queued().await;
    let before = ledger.redis_backlog();

    redis.down();
    let tries = 10;
    for _ in 0..tries {
        let refused = ledger.reserve(s.user_id, s.token_id, 1_000).await;
        assert!(
            matches!(refused, Err(Shortfall::Unavailable(_))),
            "{refused:?}"
        );
    }
    // At most the first, on the connection Redis dropped, may have been sent (and a flush or two
    // may have queued its own operation meanwhile); the refused ones add nothing.
    let grown = ledger.redis_backlog() - before;
    assert!(
        grown <= 3,
        "{grown} operations queued for {tries} refused reservations"
    );

    // Back: whatever was queued is applied and nothing stays held.
    redis.up();
    let sh = app.state.relay.shared().unwrap().clone();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        ledger.apply_queued().await;
        let held = sh
            .field(Account::User(s.user_id), "res")
            .await
            .ok()
            .flatten();
        if ledger.redis_backlog() == 0 && held == Some(0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "held {held:?}, backlog {}",
            ledger.redis_backlog()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// In Redis mode a streamed answer's settlement waits in the node's queue for Redis, and its
/// reservation stays held until Redis applies it. Applied one per round trip, the queue grew
/// under a burst of streams until the held reservations took the user's whole balance, and
/// paying users were refused (`402 insufficient_user_quota`: `make bench` on Redis). Redis is
/// made distant here (5 ms a round trip), so that the round trips, not the relay, set the pace:
/// the balance covers the reservations of 300 requests at once and the burst's cost many times,
/// and every request must be served.
#[actix_web::test]
async fn a_burst_of_streams_is_served_while_their_settlements_wait_for_a_distant_redis() {
    use crate::common::{unique, PrivateRedis, SlowLink};
    use serde_json::json;
    use std::time::{Duration, Instant};
    use switchboard_ledger::shared::Account;
    if !crate::common::redis_configured("the stream burst over a distant Redis") {
        return;
    }
    let redis = PrivateRedis::start();
    let link = SlowLink::start(redis.port, Duration::from_millis(5)).await;
    let db = switchboard_store::testing::TestDb::sqlite();
    let app = TestApp::node_at(db, &link.url(), &format!("sbburst:{}:", unique()), "n1").await;
    // A request reserves its worst case, its prompt and 1000 output tokens of gpt-4o-mini
    // (0.3 quota a token: about 300), and costs what the mock answers (5 + 7 tokens: 3).
    let balance = 100_000;
    let s = app
        .relay_setup(
            balance,
            json!({"unlimited_quota": false, "remain_quota": balance}),
        )
        .await;
    let body = json!({"model": "gpt-4o-mini", "stream": true, "max_tokens": 1000,
                      "messages": [{"role": "user", "content": "hi"}]});
    let (clients, each) = (32usize, 20usize);
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (url, key, body) = (app.url("/v1/chat/completions"), s.key.clone(), body.clone());
        tasks.push(actix_web::rt::spawn(async move {
            let mut seen = Vec::new();
            for _ in 0..each {
                seen.push(timed_call(url.clone(), key.clone(), body.clone()).await);
            }
            seen
        }));
    }
    let mut seen = Vec::new();
    for t in tasks {
        seen.extend(t.await.unwrap());
    }
    let refused: Vec<_> = seen.iter().filter(|r| r.0 != 200).collect();
    assert!(
        refused.is_empty(),
        "{} of {} requests refused, the first: {:?}",
        refused.len(),
        seen.len(),
        refused.first()
    );

    // And the books balance: what was logged was charged, in the database and in Redis.
    let sh = app.state.relay.shared().unwrap().clone();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        app.state.relay.ledger.apply_queued().await;
        app.flushed().await;
        let logs = app.consume_logs(s.user_id).await;
        let spent: i64 = logs.iter().map(|l| l.quota).sum();
        let u = switchboard_store::users::find(&mut app.conn(), s.user_id).unwrap();
        let held = sh.field(Account::User(s.user_id), "res").await.unwrap();
        let bal = sh.field(Account::User(s.user_id), "bal").await.unwrap();
        if logs.len() == clients * each
            && (u.used_quota, u.quota) == (spent, balance - spent)
            && (held, bal) == (Some(0), Some(u.quota))
        {
            assert!(spent > 0 && spent < balance / 10, "spent {spent}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{} logs for {} requests, {spent} spent; user used {} of {}; Redis holds {held:?}, \
             balance {bal:?}",
            logs.len(),
            clients * each,
            u.used_quota,
            u.quota
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
