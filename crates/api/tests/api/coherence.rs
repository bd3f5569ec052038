//! Cache coherence between nodes (issue #17, part 2): two nodes on one database (PostgreSQL when
//! configured, else SQLite) sharing Redis. A change made through one node is seen by the other
//! within one second, by its Redis message (these test apps run no periodic reload, so nothing
//! else could carry it).

use crate::common::{unique, TestApp};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use switchboard_store::testing::TestDb;

const WITHIN: Duration = Duration::from_secs(1);

/// Polls `check` on the second node until it holds; panics after [`WITHIN`]. Returns how long
/// it took.
async fn seen_within<F, Fut>(what: &str, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    loop {
        if check().await {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < WITHIN,
            "{what}: not seen by the other node within {WITHIN:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn chat(app: &TestApp, key: &str, model: &str) -> (u16, Value) {
    let r = app
        .relay(
            key,
            "/v1/chat/completions",
            json!({"model": model, "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
    (r.status, r.body)
}

#[actix_web::test]
async fn a_change_on_one_node_is_seen_by_the_other_within_a_second() {
    let db = TestDb::postgres().unwrap_or_else(TestDb::sqlite);
    let prefix = format!("sbcoh:{}:", unique());
    let Some(a) = TestApp::node(db.shared(), &prefix, "node-a").await else {
        assert!(
            std::env::var("CI").is_err(),
            "TEST_REDIS_URL must be set in CI"
        );
        println!("TEST_REDIS_URL not set: cache coherence between nodes not run");
        return;
    };
    let b = TestApp::node(db.shared(), &prefix, "node-b").await.unwrap();
    let s = a
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    // Both nodes know the key and the channel (each has read them once).
    b.state.relay.reload_channels(&b.state).await.unwrap();
    assert_eq!(chat(&a, &s.key, "gpt-4o-mini").await.0, 200);
    let first = chat(&b, &s.key, "gpt-4o-mini").await;
    assert_eq!(first.0, 200, "{:?}", first.1);
    let mut took = Vec::new();

    // 1. A key disabled on A is refused by B (which had it cached).
    s.user
        .put("/api/token", json!({"id": s.token_id, "status": 2}))
        .await
        .ok();
    took.push(
        seen_within("key disabled", || async {
            chat(&b, &s.key, "gpt-4o-mini").await.0 == 401
        })
        .await,
    );
    s.user
        .put("/api/token", json!({"id": s.token_id, "status": 1}))
        .await
        .ok();
    took.push(
        seen_within("key enabled again", || async {
            chat(&b, &s.key, "gpt-4o-mini").await.0 == 200
        })
        .await,
    );

    // 2. A channel edited on A (a new model) is served by B.
    assert_eq!(chat(&b, &s.key, "coherence-model").await.0, 404);
    a.root()
        .post(
            "/api/prices",
            json!({"model": "coherence-model", "type": "tokens", "channel_type": 1, "input": 1, "output": 1}),
        )
        .await
        .ok();
    a.channel(&s.upstream.base_url, "sk-mock-ok", "coherence-model", 0)
        .await;
    took.push(
        seen_within("channel added", || async {
            chat(&b, &s.key, "coherence-model").await.0 == 200
        })
        .await,
    );

    // 3. A price changed on A prices B's next request.
    a.root()
        .put(
            "/api/prices",
            json!({"model": "coherence-model", "price": {"model": "coherence-model", "type": "times", "channel_type": 1, "input": 3}}),
        )
        .await
        .ok();
    took.push(
        seen_within("price changed", || async {
            b.state
                .relay
                .prices()
                .lookup("coherence-model")
                .is_some_and(|p| p.input == 3.0)
        })
        .await,
    );

    // 4. An option changed on A.
    a.root()
        .put(
            "/api/option",
            json!({"key": "ChatCacheExpireMinute", "value": "17"}),
        )
        .await
        .ok();
    took.push(
        seen_within("setting changed", || async {
            b.state
                .view()
                .get("ChatCacheExpireMinute")
                .map(String::as_str)
                == Some("17")
        })
        .await,
    );

    // 5. A user disabled on A loses every key on B.
    a.root()
        .post(
            "/api/user/manage",
            json!({"id": s.user_id, "action": "disable"}),
        )
        .await
        .ok();
    took.push(
        seen_within("user disabled", || async {
            let (status, body) = chat(&b, &s.key, "gpt-4o-mini").await;
            status == 403 && body["error"]["code"] == "user_disabled"
        })
        .await,
    );
    println!("changes seen by the other node after {took:?}");
}

#[test]
fn the_test_would_fail_without_messages() {
    // Guard for the test above: a node's key cache lives long enough (TOKEN_CACHE_TTL) that a
    // disabled key would still pass within the second without a message.
    assert!(switchboard_api::relay::TOKEN_CACHE_TTL >= Duration::from_secs(5));
}
