//! Cluster jobs (issue #17, part 1): two nodes on one database. Each periodic job runs on one
//! node per period, a held lease moves to another node within its time when the holder dies,
//! and system info names each lease's holder.

use crate::common::TestApp;
use std::time::{Duration, Instant};
use switchboard_api::jobs::{self, Lease};
use switchboard_api::relay::tasks::poll_tasks_once;
use switchboard_store::testing::TestDb;

/// Two nodes (two applications) on one database: PostgreSQL when configured, else SQLite.
async fn two_nodes() -> (TestDb, TestApp, TestApp) {
    let db = TestDb::postgres().unwrap_or_else(TestDb::sqlite);
    let a = TestApp::on(db.shared(), |_| {}).await;
    let b = TestApp::on(db.shared(), |_| {}).await;
    (db, a, b)
}

#[actix_web::test]
async fn a_held_lease_moves_to_another_node_within_its_time_when_the_holder_dies() {
    let (_db, a, b) = two_nodes().await;
    let ttl = 1;
    assert!(jobs::acquire(&a.state, "bot", "node-a", ttl, Lease::Held)
        .await
        .unwrap());
    assert!(!jobs::acquire(&b.state, "bot", "node-b", ttl, Lease::Held)
        .await
        .unwrap());
    // While node-a renews, node-b never gets it, past the lease's time.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(2500) {
        assert!(jobs::acquire(&a.state, "bot", "node-a", ttl, Lease::Held)
            .await
            .unwrap());
        assert!(!jobs::acquire(&b.state, "bot", "node-b", ttl, Lease::Held)
            .await
            .unwrap());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // node-a dies (stops renewing): node-b holds it within the lease's time (and a second of
    // clock granularity: leases are in whole seconds).
    let died = Instant::now();
    loop {
        if jobs::acquire(&b.state, "bot", "node-b", ttl, Lease::Held)
            .await
            .unwrap()
        {
            break;
        }
        assert!(
            died.elapsed() < Duration::from_secs(3),
            "no hand-over within 3 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let took = died.elapsed();
    println!("held lease handed over after {took:?}");
    // The old holder, back, does not take it from the new one.
    assert!(!jobs::acquire(&a.state, "bot", "node-a", ttl, Lease::Held)
        .await
        .unwrap());
    // A holder that stops cleanly gives it back at once.
    assert!(jobs::release(&b.state, "bot", "node-b").await.unwrap());
    assert!(jobs::acquire(&a.state, "bot", "node-a", ttl, Lease::Held)
        .await
        .unwrap());
}

#[actix_web::test]
async fn periodic_jobs_run_on_one_node_per_period_and_move_on_after_it() {
    let (_db, a, b) = two_nodes().await;
    // Task polling with a 2 s period (a 1 s lease).
    let every = Duration::from_secs(2);
    assert!(poll_tasks_once(&a.state, "node-a", every)
        .await
        .unwrap()
        .is_some());
    assert!(poll_tasks_once(&b.state, "node-b", every)
        .await
        .unwrap()
        .is_none());
    // The maintenance clean-up (log retention, response-cache purge).
    assert!(jobs::clean_up(&a.state, "node-a").await.unwrap().is_some());
    assert!(jobs::clean_up(&b.state, "node-b").await.unwrap().is_none());
    assert!(
        jobs::clean_up(&a.state, "node-a").await.unwrap().is_none(),
        "once per period"
    );
    // The scheduled channel test (a one-minute period).
    use switchboard_api::routes::channel_ops::scheduled_test_all;
    assert!(scheduled_test_all(&a.state, 1, "node-a")
        .await
        .unwrap()
        .is_some());
    assert!(scheduled_test_all(&b.state, 1, "node-b")
        .await
        .unwrap()
        .is_none());
    // node-a stops: the next polling period goes to node-b.
    let start = Instant::now();
    loop {
        if poll_tasks_once(&b.state, "node-b", every)
            .await
            .unwrap()
            .is_some()
        {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(3), "no hand-over");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // System info names the holders (from either node).
    let info = b.root().get("/api/system/info").await;
    let leases = info.ok()["leases"].as_array().cloned().unwrap();
    let holder = |name: &str| {
        leases
            .iter()
            .find(|l| l["name"] == name)
            .map(|l| l["holder"].as_str().unwrap_or_default().to_owned())
    };
    assert_eq!(holder("task-poll").as_deref(), Some("node-b"));
    assert_eq!(holder(jobs::MAINTENANCE).as_deref(), Some("node-a"));
    assert_eq!(holder("channel-test").as_deref(), Some("node-a"));
}
