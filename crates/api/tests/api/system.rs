//! The system panel over HTTP: node info (admin) and the in-memory system log (root). The
//! server's tracing subscriber is not installed in tests, so the log buffer is fed directly.

use crate::common::TestApp;
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
    assert!(metric(&before, "switchboard_db_pool_max_connections") >= 1.0);
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
    assert!(metric(&after, "switchboard_db_pool_connections") >= 1.0);
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
