//! The response cache end to end (issue #18, part 1): the real app over HTTP, the mock upstream
//! over HTTP, answers kept in the database (SQLite, PostgreSQL, MariaDB) or in Redis.

use crate::common::{RelaySetup, TestApp};
use serde_json::{json, Value};
use switchboard_store::testing::TestDb;
use switchboard_store::{response_cache, users};

const MODEL: &str = "cache-model";
/// The mock reports 11 prompt and 7 completion tokens: 11 * 10 + 7 * 20 = 250 at this price.
const FULL: i64 = 250;

fn chat(content: &str) -> Value {
    json!({"model": MODEL, "temperature": 0,
        "messages": [{"role": "user", "content": content}]})
}

async fn set_option(app: &TestApp, key: &str, value: Value) {
    app.root()
        .put("/api/option", json!({"key": key, "value": value}))
        .await
        .ok();
}

/// A user whose key has the cache toggle `toggle`, the cache on for the site at `ratio`, and a
/// channel serving [`MODEL`] priced input 10, output 20.
async fn setup(app: &TestApp, toggle: bool, ratio: &str) -> RelaySetup {
    let s = app
        .relay_setup(
            1_000_000,
            json!({"unlimited_quota": true, "cache_enabled": toggle}),
        )
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-ok", MODEL, 0)
        .await;
    app.root()
        .post(
            "/api/prices",
            json!({"model": MODEL, "type": "tokens", "channel_type": 1, "input": 10, "output": 20}),
        )
        .await
        .ok();
    set_option(app, "ChatCacheEnabled", json!("true")).await;
    set_option(app, "ChatCacheRatio", json!(ratio)).await;
    s
}

fn header<'a>(r: &'a crate::common::Resp, name: &str) -> Option<&'a str> {
    r.headers.get(name).and_then(|v| v.to_str().ok())
}

/// Waits until the database keeps `n` answers (they are written after the answer is sent).
async fn kept(app: &TestApp, n: i64) {
    for _ in 0..200 {
        if response_cache::count(&mut app.conn()).unwrap() == n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!(
        "the cache holds {} answers, not {n}",
        response_cache::count(&mut app.conn()).unwrap()
    );
}

fn chat_calls(s: &RelaySetup) -> usize {
    s.upstream.count("/v1/chat/completions")
}

async fn hit_is_served_from_the_cache_and_billed_at_the_ratio(app: TestApp) {
    let s = setup(&app, true, "0.4").await;
    let first = app
        .relay(&s.key, "/v1/chat/completions", chat("What is 2+2?"))
        .await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    assert_eq!(header(&first, "X-Switchboard-Cache"), Some("miss"));
    assert_eq!(chat_calls(&s), 1);
    kept(&app, 1).await;

    // The same request, its keys in another order: answered from the cache.
    let again = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"messages": [{"content": "What is 2+2?", "role": "user"}],
                "model": MODEL, "temperature": 0}),
        )
        .await;
    assert_eq!(again.status, 200, "{:?}", again.body);
    assert_eq!(header(&again, "X-Switchboard-Cache"), Some("hit"));
    assert_eq!(
        again.body, first.body,
        "the kept answer, as the client got it"
    );
    assert_eq!(chat_calls(&s), 1, "no upstream call for a hit");

    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    let (hit, miss) = (&logs[0], &logs[1]);
    assert!(!miss.cache_hit);
    assert_eq!(miss.quota, FULL);
    assert!(hit.cache_hit);
    assert_eq!(hit.quota, FULL * 2 / 5, "40 % of the full price");
    assert_eq!(hit.channel_id, 0, "no channel served it");
    assert_eq!((hit.prompt_tokens, hit.completion_tokens), (11, 7));
    let meta: Value = serde_json::from_str(&hit.metadata).unwrap();
    assert_eq!(meta["cache_full_quota"], FULL);
    assert_eq!(meta["cache_saved_quota"], FULL - FULL * 2 / 5);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.used_quota, FULL + FULL * 2 / 5);
    assert_eq!(u.quota, 1_000_000 - FULL - FULL * 2 / 5);

    // The log API and the dashboard show it.
    let r = s.user.get("/api/log/self?size=10").await;
    let items = r.ok()["data"].as_array().cloned().unwrap_or_default();
    assert!(items.iter().any(|l| l["cache_hit"] == true), "{items:?}");
    let d = s.user.get("/api/user/dashboard?days=1").await;
    assert_eq!(d.ok()["totals"]["cache_hits"], 1);
    assert_eq!(d.ok()["totals"]["request_count"], 2);

    // Any other parameter is another request.
    let mut other = chat("What is 2+2?");
    other["temperature"] = json!(0.5);
    let r = app.relay(&s.key, "/v1/chat/completions", other).await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("miss"));
    assert_eq!(chat_calls(&s), 2);

    // Streams, several choices and tools are never cached.
    let mut stream = chat("What is 2+2?");
    stream["stream"] = json!(true);
    let r = app.relay(&s.key, "/v1/chat/completions", stream).await;
    assert_eq!(r.status, 200);
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("skip"));
    let mut two = chat("What is 2+2?");
    two["n"] = json!(2);
    let r = app.relay(&s.key, "/v1/chat/completions", two).await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("skip"));
    let mut tools = chat("What is 2+2?");
    tools["tools"] = json!([{"type": "function", "function": {"name": "add", "parameters": {}}}]);
    let r = app.relay(&s.key, "/v1/chat/completions", tools).await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("skip"));
    assert_eq!(chat_calls(&s), 5);
}

#[actix_web::test]
async fn hit_on_sqlite() {
    hit_is_served_from_the_cache_and_billed_at_the_ratio(TestApp::new().await).await;
}

#[actix_web::test]
async fn hit_on_postgres_and_mysql() {
    for db in TestDb::postgres().into_iter().chain(TestDb::mysql()) {
        hit_is_served_from_the_cache_and_billed_at_the_ratio(TestApp::on(db, |_| {}).await).await;
    }
}

#[actix_web::test]
async fn a_free_hit_costs_nothing_and_the_default_ratio_is_free() {
    let app = TestApp::new().await;
    let s = setup(&app, true, "0").await;
    app.relay(&s.key, "/v1/chat/completions", chat("hello"))
        .await;
    kept(&app, 1).await;
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("hello"))
        .await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("hit"));
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!((logs[0].quota, logs[0].cache_hit), (0, true));
    let meta: Value = serde_json::from_str(&logs[0].metadata).unwrap();
    assert_eq!(meta["cache_saved_quota"], FULL);
}

#[actix_web::test]
async fn an_expired_answer_is_a_miss() {
    let app = TestApp::new().await;
    let s = setup(&app, true, "0.5").await;
    app.relay(&s.key, "/v1/chat/completions", chat("time"))
        .await;
    kept(&app, 1).await;
    // The kept answer's time runs out.
    switchboard_store::testing::expire_response_cache(&mut app.conn());
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("time"))
        .await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("miss"));
    assert_eq!(chat_calls(&s), 2, "an expired answer is asked for again");
    let logs = app.consume_logs(s.user_id).await;
    assert!(logs.iter().all(|l| !l.cache_hit && l.quota == FULL));
    // ... and kept anew, replacing the expired one (purged here, should the new answer not
    // have been written yet).
    response_cache::purge(&mut app.conn(), switchboard_store::now(), 1000).unwrap();
    kept(&app, 1).await;
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("time"))
        .await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("hit"));
}

#[actix_web::test]
async fn a_key_without_the_toggle_or_a_site_with_the_cache_off_never_uses_it() {
    let app = TestApp::new().await;
    let s = setup(&app, false, "0").await;
    for _ in 0..2 {
        let r = app
            .relay(&s.key, "/v1/chat/completions", chat("same"))
            .await;
        assert_eq!(r.status, 200);
        assert_eq!(header(&r, "X-Switchboard-Cache"), None);
    }
    assert_eq!(chat_calls(&s), 2);
    assert_eq!(response_cache::count(&mut app.conn()).unwrap(), 0);

    // A key with the toggle, on a site with the cache off.
    let r = s
        .user
        .post(
            "/api/token",
            json!({"name": "cached", "unlimited_quota": true, "cache_enabled": true}),
        )
        .await;
    let key = r.ok()["key"].as_str().unwrap().to_owned();
    set_option(&app, "ChatCacheEnabled", json!("false")).await;
    for _ in 0..2 {
        let r = app.relay(&key, "/v1/chat/completions", chat("same")).await;
        assert_eq!(header(&r, "X-Switchboard-Cache"), None);
    }
    assert_eq!(chat_calls(&s), 4);
    assert!(app
        .consume_logs(s.user_id)
        .await
        .iter()
        .all(|l| !l.cache_hit));
}

#[actix_web::test]
async fn another_users_identical_request_is_not_answered_from_the_cache() {
    let app = TestApp::new().await;
    let a = setup(&app, true, "0").await;
    app.relay(&a.key, "/v1/chat/completions", chat("secret question"))
        .await;
    kept(&app, 1).await;
    let b = app
        .relay_setup(
            1_000_000,
            json!({"unlimited_quota": true, "cache_enabled": true}),
        )
        .await;
    let r = app
        .relay(&b.key, "/v1/chat/completions", chat("secret question"))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("miss"));
}

#[actix_web::test]
async fn an_answer_larger_than_the_limit_is_not_kept() {
    let app = TestApp::new().await;
    let s = setup(&app, true, "0").await;
    // A channel whose chat answers carry 4 KiB of content.
    app.channel(&s.upstream.base_url, "sk-mock-big", "cache-big", 0)
        .await;
    app.root()
        .post(
            "/api/prices",
            json!({"model": "cache-big", "type": "tokens", "channel_type": 1, "input": 1, "output": 1}),
        )
        .await
        .ok();
    set_option(&app, "ChatCacheMaxEntryKB", json!("1")).await;
    let big =
        json!({"model": "cache-big", "messages": [{"role": "user", "content": "a long report"}]});
    let r = app.relay(&s.key, "/v1/chat/completions", big.clone()).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let size = serde_json::to_vec(&r.body).unwrap().len();
    assert!(size > 4096, "the answer is {size} bytes");
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("miss"));
    // A small answer is still kept under the same limit: the write path works, the size stops it.
    app.relay(&s.key, "/v1/chat/completions", chat("short"))
        .await;
    kept(&app, 1).await;
    let r = app.relay(&s.key, "/v1/chat/completions", big.clone()).await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("miss"), "not kept");
    // With room for it, it is kept and served whole.
    set_option(&app, "ChatCacheMaxEntryKB", json!("512")).await;
    app.relay(&s.key, "/v1/chat/completions", big.clone()).await;
    kept(&app, 2).await;
    let r = app.relay(&s.key, "/v1/chat/completions", big).await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("hit"));
    assert_eq!(serde_json::to_vec(&r.body).unwrap().len(), size);
}

#[actix_web::test]
async fn purge_removes_expired_answers_and_keeps_the_cap() {
    for db in TestDb::all() {
        let mut c = db.conn();
        let now = switchboard_store::now();
        for i in 0..5i64 {
            response_cache::put(
                &mut c,
                &response_cache::CachedAnswer {
                    cache_key: format!("{i:064}"),
                    user_id: 1,
                    model_name: "m".into(),
                    body: "{}".into(),
                    usage_json: "{}".into(),
                    created_at: now - 100 + i * 10,
                    // the first is expired
                    expires_at: if i == 0 { now - 1 } else { now + 300 },
                },
            )
            .unwrap();
        }
        assert!(response_cache::get(&mut c, &format!("{:064}", 0), now)
            .unwrap()
            .is_none());
        assert!(response_cache::get(&mut c, &format!("{:064}", 1), now)
            .unwrap()
            .is_some());
        // Expired: 1 removed; then the oldest beyond a cap of 2: 2 more.
        assert_eq!(response_cache::purge(&mut c, now, 2).unwrap(), 3);
        assert_eq!(response_cache::count(&mut c).unwrap(), 2);
        for i in [3, 4] {
            assert!(response_cache::get(&mut c, &format!("{i:064}"), now)
                .unwrap()
                .is_some());
        }
        // Writing a key again replaces its answer.
        let mut again = response_cache::get(&mut c, &format!("{:064}", 4), now)
            .unwrap()
            .unwrap();
        again.body = "{\"new\":true}".into();
        response_cache::put(&mut c, &again).unwrap();
        assert_eq!(response_cache::count(&mut c).unwrap(), 2);
        assert_eq!(
            response_cache::get(&mut c, &format!("{:064}", 4), now)
                .unwrap()
                .unwrap()
                .body,
            "{\"new\":true}"
        );
    }
}

#[actix_web::test]
async fn redis_holds_the_cache_when_configured() {
    let Some(app) = TestApp::with_redis(TestDb::sqlite()).await else {
        assert!(
            std::env::var("CI").is_err(),
            "TEST_REDIS_URL must be set in CI"
        );
        println!("TEST_REDIS_URL not set: the Redis-held response cache not run");
        return;
    };
    let s = setup(&app, true, "0.4").await;
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("redis"))
        .await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("miss"));
    let sh = app.state.relay.ledger.shared().unwrap().clone();
    let mut hit = None;
    for _ in 0..100 {
        let r = app
            .relay(&s.key, "/v1/chat/completions", chat("redis"))
            .await;
        if header(&r, "X-Switchboard-Cache") == Some("hit") {
            hit = Some(r);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(hit.is_some(), "the answer reached Redis");
    // Nothing in the database: Redis holds it, with Redis's expiry.
    assert_eq!(response_cache::count(&mut app.conn()).unwrap(), 0);
    let url = std::env::var("TEST_REDIS_URL").unwrap();
    let mut c = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{}rc:*", sh.prefix()))
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(keys.len(), 1);
    let ttl: i64 = redis::cmd("TTL")
        .arg(&keys[0])
        .query_async(&mut c)
        .await
        .unwrap();
    assert!(
        (1..=300).contains(&ttl),
        "expires with ChatCacheExpireMinute: {ttl}"
    );
    // Expired (gone from Redis): a miss again.
    let _: () = redis::cmd("DEL")
        .arg(&keys[0])
        .query_async(&mut c)
        .await
        .unwrap();
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("redis"))
        .await;
    assert_eq!(header(&r, "X-Switchboard-Cache"), Some("miss"));
    let logs = app.consume_logs(s.user_id).await;
    let hits: Vec<_> = logs.iter().filter(|l| l.cache_hit).collect();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|l| l.quota == FULL * 2 / 5));
}

/// An answer the balance rule cut short (the user's balance covered part of the output) is not
/// kept: after a top-up the same request reaches the upstream and gets a whole answer, which
/// is then kept and served. Fails when the cut answer is kept: the second request was a hit
/// with the 2 900-odd tokens the small balance paid for.
#[actix_web::test]
async fn an_answer_cut_by_the_balance_is_never_kept() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(
            3_000,
            json!({"unlimited_quota": true, "cache_enabled": true}),
        )
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-long", "cut-model", 0)
        .await;
    app.root()
        .post(
            "/api/prices",
            json!({"model": "cut-model", "type": "tokens", "channel_type": 1, "input": 1, "output": 1}),
        )
        .await
        .ok();
    set_option(&app, "ChatCacheEnabled", json!("true")).await;
    set_option(&app, "ChatCacheRatio", json!("0.4")).await;
    set_option(&app, "PreConsumedQuota", json!("0")).await;
    app.state.relay.reload_pricing(&app.state).await.unwrap();
    let body = json!({"model": "cut-model", "temperature": 0,
        "messages": [{"role": "user", "content": "Write a long story."}]});
    let cut = app
        .relay(&s.key, "/v1/chat/completions", body.clone())
        .await;
    assert_eq!(cut.status, 200, "{:?}", cut.body);
    assert_eq!(cut.body["choices"][0]["finish_reason"], "length");
    let cut_tokens = cut.body["usage"]["completion_tokens"].as_i64().unwrap();
    assert!(cut_tokens < 3_000, "{cut_tokens}");
    // The cut answer is not kept; wait as long as a kept answer takes to be written.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(response_cache::count(&mut app.conn()).unwrap(), 0);
    app.root()
        .post(
            &format!("/api/user/quota/{}", s.user_id),
            json!({"quota": 1_000_000, "remark": "top-up"}),
        )
        .await
        .ok();
    let full = app
        .relay(&s.key, "/v1/chat/completions", body.clone())
        .await;
    assert_eq!(full.status, 200, "{:?}", full.body);
    assert_eq!(header(&full, "X-Switchboard-Cache"), Some("miss"));
    assert_eq!(
        full.body["usage"]["completion_tokens"],
        switchboard_mock_upstream::LONG_ANSWER
    );
    assert_eq!(chat_calls(&s), 2, "the second request reached the upstream");
    kept(&app, 1).await;
    let hit = app.relay(&s.key, "/v1/chat/completions", body).await;
    assert_eq!(header(&hit, "X-Switchboard-Cache"), Some("hit"));
    assert_eq!(
        hit.body["usage"]["completion_tokens"],
        switchboard_mock_upstream::LONG_ANSWER
    );
}
