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
