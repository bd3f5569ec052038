//! The balance rule (docs/billing.md): requests admitted against a balance spend at most that
//! balance together, whatever the upstream answers, on every store of the ledger; and changes
//! made outside the relay (rewards, key edits) reach the ledger at once.

use crate::common::{RedisNode, RelaySetup, TestApp};
use serde_json::{json, Value};
use switchboard_mock_upstream::LONG_ANSWER;
use switchboard_store::testing::TestDb;
use switchboard_store::{tokens, users};

/// gpt-4o: input 1.25, output 5.0 per token-unit; output limit 16384 in the built-in prices.
const MODEL: &str = "gpt-4o";

fn chat(stream: bool) -> Value {
    json!({"model": MODEL, "stream": stream,
           "messages": [{"role": "user", "content": "Write a long story"}]})
}

/// 40 concurrent requests without `max_tokens` against 20 000 quota, each of which would cost
/// about 40 000 if the upstream were left to answer in full (8000 tokens at 5.0).
async fn concurrent_long_answers(app: &TestApp, s: &RelaySetup) -> (usize, usize) {
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let c = client.clone();
        let url = app.url("/v1/chat/completions");
        let key = s.key.clone();
        tasks.push(actix_web::rt::spawn(async move {
            let r = c
                .post(url)
                .bearer_auth(key)
                .json(&chat(i % 2 == 0))
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let _ = r.bytes().await;
            status
        }));
    }
    let (mut ok, mut refused) = (0, 0);
    for t in tasks {
        match t.await.unwrap() {
            200 => ok += 1,
            402 => refused += 1,
            other => panic!("unexpected status {other}"),
        }
    }
    (ok, refused)
}

/// A non-streamed chat on the slow channel (200 ms), in flight while the test acts.
fn slow_request(app: &TestApp, key: &str) -> actix_web::rt::task::JoinHandle<u16> {
    let key = key.to_owned();
    let url = app.url("/v1/chat/completions");
    actix_web::rt::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .bearer_auth(key)
            .json(&chat(false))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    })
}

/// A channel serving `long-model` from the long-answering mock, priced 1/1 with no known
/// output limit.
async fn long_model(app: &TestApp, s: &RelaySetup) {
    app.channel(&s.upstream.base_url, "sk-mock-long", "long-model", 0)
        .await;
    app.root()
        .post(
            "/api/prices",
            json!({"model": "long-model", "type": "tokens", "channel_type": 1, "input": 1.0, "output": 1.0}),
        )
        .await
        .ok();
    app.state.relay.reload_pricing(&app.state).await.unwrap();
}

/// A user with `quota` and an unlimited key, `long-model` at input and output 1, and no
/// `PreConsumedQuota`: a request's cost is its tokens.
async fn long_model_user(app: &TestApp, quota: i64) -> RelaySetup {
    let s = app
        .relay_setup(quota, json!({"unlimited_quota": true}))
        .await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "PreConsumedQuota", "value": "0"}),
        )
        .await
        .ok();
    long_model(app, &s).await;
    s
}

async fn setup(app: &TestApp, quota: i64, key: Value) -> RelaySetup {
    let s = app.relay_setup(quota, key).await;
    app.channel(&s.upstream.base_url, "sk-mock-long", MODEL, 0)
        .await;
    s
}

/// Checks the invariants after a run: no balance below zero, the balances' drop equals the
/// consume logs, one log per admitted request, and every upstream call was told to stop where
/// its reservation ended.
async fn check(app: &TestApp, s: &RelaySetup, start_user: i64, start_key: i64, ok: usize) {
    let logs = app.consume_logs(s.user_id).await;
    let spent: i64 = logs.iter().map(|l| l.quota).sum();
    assert_eq!(logs.len(), ok, "one consume log per admitted request");
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    let t = tokens::find(&mut app.conn(), s.token_id).unwrap();
    assert!(
        u.quota >= 0,
        "the user's balance went below zero: {}",
        u.quota
    );
    assert_eq!(
        u.quota,
        start_user - spent,
        "user balance drop equals the logs"
    );
    assert_eq!(u.used_quota, spent);
    assert_eq!(t.used_quota, spent);
    if start_key >= 0 {
        assert!(
            t.remain_quota >= 0,
            "the key went below zero: {}",
            t.remain_quota
        );
        assert_eq!(t.remain_quota, start_key - spent);
    }
    // The relay told the upstream how far each answer may go.
    let limited = s
        .upstream
        .requests()
        .iter()
        .filter(|r| r.key == "sk-mock-long")
        .filter(|r| {
            r.body["max_tokens"]
                .as_i64()
                .is_some_and(|m| m < LONG_ANSWER)
        })
        .count();
    assert_eq!(
        limited, ok,
        "every admitted call carried the covered max_tokens"
    );
    if let Some(sh) = app.state.relay.shared() {
        use switchboard_ledger::shared::Account;
        assert_eq!(
            app.state.relay.ledger.redis_backlog(),
            0,
            "Redis took every operation"
        );
        let res = sh.field(Account::User(s.user_id), "res").await.unwrap();
        assert_eq!(res, Some(0), "no reservation left behind");
        let bal = sh.field(Account::User(s.user_id), "bal").await.unwrap();
        assert_eq!(bal, Some(u.quota), "Redis agrees with the database");
    }
}

async fn user_balance_is_a_hard_limit(app: TestApp) {
    let s = setup(&app, 20_000, json!({"unlimited_quota": true})).await;
    let (ok, refused) = concurrent_long_answers(&app, &s).await;
    assert!(ok >= 1 && refused >= 1, "{ok} ok, {refused} refused");
    check(&app, &s, 20_000, -1, ok).await;
}

async fn key_quota_is_a_hard_limit(app: TestApp) {
    let s = setup(
        &app,
        10_000_000,
        json!({"unlimited_quota": false, "remain_quota": 20_000}),
    )
    .await;
    let (ok, refused) = concurrent_long_answers(&app, &s).await;
    assert!(ok >= 1 && refused >= 1, "{ok} ok, {refused} refused");
    check(&app, &s, 10_000_000, 20_000, ok).await;
}

#[actix_web::test]
async fn concurrent_requests_never_overdraw_a_user_on_sqlite() {
    user_balance_is_a_hard_limit(TestApp::new().await).await;
}

#[actix_web::test]
async fn concurrent_requests_never_overdraw_a_key_on_sqlite() {
    key_quota_is_a_hard_limit(TestApp::new().await).await;
}

#[actix_web::test]
async fn concurrent_requests_never_overdraw_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        println!("TEST_PG_DSN not set: PostgreSQL balance rule not run");
        return;
    };
    user_balance_is_a_hard_limit(TestApp::on(db, |_| {}).await).await;
    let db = TestDb::postgres().unwrap();
    key_quota_is_a_hard_limit(TestApp::on(db, |_| {}).await).await;
}

#[actix_web::test]
async fn concurrent_requests_never_overdraw_on_mariadb() {
    let Some(db) = TestDb::mysql() else {
        println!("TEST_MYSQL_DSN not set: MariaDB balance rule not run");
        return;
    };
    user_balance_is_a_hard_limit(TestApp::on(db, |_| {}).await).await;
}

#[actix_web::test]
async fn concurrent_requests_never_overdraw_with_the_ledger_in_redis() {
    let Some(app) = TestApp::with_redis(TestDb::sqlite()).await else {
        println!("TEST_REDIS_URL not set: Redis balance rule not run");
        return;
    };
    user_balance_is_a_hard_limit(app).await;
    let app = TestApp::with_redis(TestDb::sqlite()).await.unwrap();
    key_quota_is_a_hard_limit(app).await;
}

/// A call that costs more than it reserved (the price row does not know the model's limit and
/// the upstream answers past the default) is charged what the balance holds, not more.
async fn a_costlier_answer_is_capped(app: TestApp) {
    let s = long_model_user(&app, 5_000).await;
    let body = json!({"model": "long-model", "messages": [{"role": "user", "content": "hi"}]});
    let r = app.relay(&s.key, "/v1/chat/completions", body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // 4096 default output tokens + the prompt fit the balance: no limit was sent, and the
    // upstream answered with 8000 tokens (cost 8011).
    assert_eq!(r.body["usage"]["completion_tokens"], LONG_ANSWER);
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].quota, 5_000, "charged what the balance held");
    assert!(
        logs[0].metadata.contains("\"uncapped_quota\":8011"),
        "{}",
        logs[0].metadata
    );
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!((u.quota, u.used_quota), (0, 5_000));
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "long-model", "messages": []}),
        )
        .await;
    assert_eq!(r.status, 402, "an empty balance admits nothing");
}

#[actix_web::test]
async fn an_answer_costlier_than_its_reservation_is_capped_by_the_balance() {
    a_costlier_answer_is_capped(TestApp::new().await).await;
    if let Some(app) = TestApp::with_redis(TestDb::sqlite()).await {
        a_costlier_answer_is_capped(app).await;
    }
}

/// With `OverdraftTolerance` the balance may go that far below zero, no further.
#[actix_web::test]
async fn the_overdraft_tolerance_is_honoured() {
    let app = TestApp::new().await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "OverdraftTolerance", "value": "1000"}),
        )
        .await
        .ok();
    let s = app
        .relay_setup(5_000, json!({"unlimited_quota": true}))
        .await;
    long_model(&app, &s).await;
    let body = json!({"model": "long-model", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(
        app.relay(&s.key, "/v1/chat/completions", body).await.status,
        200
    );
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs[0].quota, 6_000);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, -1_000);
}

/// Per-call prices count each image asked for with `n`.
#[actix_web::test]
async fn ten_images_cost_ten_times_one() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-ok", "dall-e-2", 0)
        .await;
    for n in [1, 10] {
        let r = app
            .relay(
                &s.key,
                "/v1/images/generations",
                json!({"model": "dall-e-2", "prompt": "a cat", "n": n}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(r.body["data"].as_array().map(Vec::len), Some(n));
    }
    let mut logs = app.consume_logs(s.user_id).await;
    logs.sort_by_key(|l| l.quota);
    // dall-e-2: ratio 10 per call = 10 000 quota per image.
    assert_eq!(
        logs.iter().map(|l| l.quota).collect::<Vec<_>>(),
        [10_000, 100_000]
    );
    // `n` decides the charge: anything but a whole number from 1 to 10 is refused.
    for n in [json!(0), json!(11), json!(2.5), json!("2")] {
        let r = app
            .relay(
                &s.key,
                "/v1/images/generations",
                json!({"model": "dall-e-2", "prompt": "a cat", "n": n}),
            )
            .await;
        assert_eq!(
            (r.status, r.body["error"]["code"].as_str()),
            (400, Some("invalid_n")),
            "{n}: {:?}",
            r.body
        );
    }
    // Ten images need ten images' worth of balance.
    let poor = app
        .relay_setup(50_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&poor.upstream.base_url, "sk-mock-ok", "dall-e-2", 0)
        .await;
    let r = app
        .relay(
            &poor.key,
            "/v1/images/generations",
            json!({"model": "dall-e-2", "prompt": "a cat", "n": 10}),
        )
        .await;
    assert_eq!(r.status, 402);
}

/// An inviter's reward reaches the ledger at once (it used to wait for the database to be
/// re-read, and never did with the ledger in Redis).
async fn rewards_reach_the_ledger(app: TestApp) {
    app.root()
        .put(
            "/api/option",
            json!({"key": "QuotaForInviter", "value": "1000000"}),
        )
        .await
        .ok();
    let s = app.relay_setup(0, json!({"unlimited_quota": true})).await;
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "gpt-4o-mini", "messages": []}),
        )
        .await;
    assert_eq!(r.status, 402, "no balance yet");
    let aff = s.user.get("/api/user/self").await.ok()["aff_code"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!aff.is_empty());
    let r = app
        .client()
        .post(
            "/api/user/register",
            json!({"username": format!("inv{}", crate::common::unique()), "password": "password-123", "aff_code": aff}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "gpt-4o-mini", "messages": []}),
        )
        .await;
    assert_eq!(
        r.status, 200,
        "the reward is spendable at once: {:?}",
        r.body
    );
}

#[actix_web::test]
async fn an_inviter_reward_is_spendable_at_once() {
    rewards_reach_the_ledger(TestApp::new().await).await;
    if let Some(app) = TestApp::with_redis(TestDb::sqlite()).await {
        rewards_reach_the_ledger(app).await;
    }
}

/// A key whose quota is set to 0 while one of its requests is in flight is refused from then on.
async fn key_edits_reach_the_ledger(app: TestApp) {
    let s = app
        .relay_setup(
            1_000_000,
            json!({"unlimited_quota": false, "remain_quota": 500_000}),
        )
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-slow", "gpt-4o", 0)
        .await;
    let in_flight = slow_request(&app, &s.key);
    actix_web::rt::time::sleep(std::time::Duration::from_millis(80)).await;
    s.empty_the_key().await;
    assert_eq!(in_flight.await.unwrap(), 200);
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "gpt-4o-mini", "messages": []}),
        )
        .await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_str()),
        (402, Some("insufficient_token_quota")),
        "{:?}",
        r.body
    );
    // The in-flight request was still billed, from the key's new quota of 0: never below zero.
    let logs = app.consume_logs(s.user_id).await;
    let t = tokens::find(&mut app.conn(), s.token_id).unwrap();
    assert!(
        t.remain_quota >= 0,
        "{} (redis: {}, logs: {:?})",
        t.remain_quota,
        app.state.relay.shared().is_some(),
        logs.iter()
            .map(|l| (l.quota, l.metadata.clone()))
            .collect::<Vec<_>>()
    );
}

#[actix_web::test]
async fn a_key_emptied_mid_request_is_refused_afterwards() {
    key_edits_reach_the_ledger(TestApp::new().await).await;
    if let Some(app) = TestApp::with_redis(TestDb::sqlite()).await {
        key_edits_reach_the_ledger(app).await;
    }
}

/// An administrator's deduction cannot take what requests in flight hold.
#[actix_web::test]
async fn a_deduction_is_checked_against_the_ledger() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(10_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-slow", "gpt-4o", 0)
        .await;
    let in_flight = slow_request(&app, &s.key);
    actix_web::rt::time::sleep(std::time::Duration::from_millis(80)).await;
    let r = app
        .root()
        .post(
            &format!("/api/user/quota/{}", s.user_id),
            json!({"quota": -5_000, "remark": "refund"}),
        )
        .await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (400, Some("insufficient_balance")),
        "{:?}",
        r.body
    );
    assert_eq!(in_flight.await.unwrap(), 200);
    let r = app
        .root()
        .post(
            &format!("/api/user/quota/{}", s.user_id),
            json!({"quota": i64::MIN, "remark": "overflow"}),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
}

/// What a client sends that ends up in the consume record is bounded at admission, so that the
/// record's write cannot fail (a 300-character or NUL-containing model name through a wildcard
/// channel, a 100-character forwarded address).
#[actix_web::test]
async fn consume_record_fields_are_bounded_at_admission() {
    let app = TestApp::with_config(|c| {
        c.trusted_proxies = switchboard_domain::net::trusted_proxies("", true).unwrap()
    })
    .await;
    let s = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-ok", "gpt-4o-mini*", 0)
        .await;
    for model in [
        "gpt-4o-mini".to_owned() + &"x".repeat(300),
        "gpt-4o-mini\u{0}x".into(),
    ] {
        let r = app
            .relay(
                &s.key,
                "/v1/chat/completions",
                json!({"model": model, "messages": []}),
            )
            .await;
        assert_eq!(
            (r.status, r.body["error"]["code"].as_str()),
            (400, Some("invalid_model_name")),
            "{:?}",
            r.body
        );
    }
    let r = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(&s.key)
        .header("X-Forwarded-For", "a".repeat(100))
        .json(&json!({"model": "gpt-4o-mini", "messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert!(
        logs[0].source_ip.chars().count() <= 64,
        "{}",
        logs[0].source_ip
    );
}

/// A node that died and never came back (its data directory lost) leaves consumption it never
/// wrote and reservations in Redis; once its heartbeat lapses, the other nodes drop them and
/// set the accounts from the database.
#[actix_web::test]
async fn what_a_dead_node_left_in_redis_is_reclaimed() {
    use switchboard_ledger::shared::{Account, Reserve, Settlement, Shared};
    let Some(app) = TestApp::with_redis(TestDb::sqlite()).await else {
        println!("TEST_REDIS_URL not set: dead-node reclaim not run");
        return;
    };
    let s = app
        .relay_setup(100_000, json!({"unlimited_quota": true}))
        .await;
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "gpt-4o-mini", "messages": []}),
        )
        .await;
    assert_eq!(r.status, 200);
    let ours = app.state.relay.shared().unwrap().clone();
    let url = std::env::var("TEST_REDIS_URL").unwrap();
    let dead = Shared::connect(&url, ours.prefix(), "n2").await.unwrap();
    dead.heartbeat().await.unwrap();
    // The other node charged 4000 it never wrote, and died holding a reservation of 1000.
    let expires = switchboard_ledger::shared::reservation_expiry();
    assert_eq!(
        dead.reserve(1, s.user_id, s.token_id, 5_000, 5_000, expires)
            .await
            .unwrap(),
        Reserve::Ok(5_000)
    );
    assert_eq!(
        dead.run(&dead.settle_call(&Settlement {
            id: 1,
            op: 1,
            user: s.user_id,
            token: s.token_id,
            amount: 5_000,
            cost: 4_000,
            tolerance: 0,
            force: false,
            gen: 1,
        }))
        .await
        .unwrap(),
        4_000
    );
    assert_eq!(
        dead.reserve(2, s.user_id, s.token_id, 1_000, 1_000, expires)
            .await
            .unwrap(),
        Reserve::Ok(1_000)
    );
    // Still alive: nothing is taken from it.
    assert_eq!(
        switchboard_api::relay::reclaim_dead_nodes(&app.state)
            .await
            .unwrap(),
        0
    );
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let _: i64 = redis::cmd("DEL")
        .arg(format!("{}node:n2", ours.prefix()))
        .query_async(&mut c)
        .await
        .unwrap();
    assert!(
        switchboard_api::relay::reclaim_dead_nodes(&app.state)
            .await
            .unwrap()
            >= 1
    );
    app.flushed().await;
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    let user = Account::User(s.user_id);
    assert_eq!(ours.field(user, "bal").await.unwrap(), Some(u.quota));
    assert_eq!(ours.field(user, "res").await.unwrap(), Some(0));
    assert_eq!(ours.field(user, "uf:n2").await.unwrap(), None);
    assert_eq!(
        u.quota,
        100_000 - 3,
        "only what reached the database counts"
    );
}

/// A consume record as the relay queues it (no key), for tests of the ledger alone.
fn consume(user_id: i64, quota: i64) -> switchboard_store::logs::ConsumeRecord {
    switchboard_store::testing::consume_record(user_id, 0, quota)
}

/// The ledger's flush writes through a connection of its own: with every connection of the
/// shared pool taken (a burst of console queries, a slow export), what the relay settled still
/// reaches the database, and the balance with it.
#[actix_web::test]
async fn the_ledger_flush_does_not_wait_for_the_shared_pool() {
    let app = TestApp::new().await;
    let s = app.relay_setup(1_000_000, json!({})).await;
    let pool = app.state.pool.clone();
    let mut held = actix_web::web::block(move || {
        (0..pool.max_size())
            .map(|_| pool.get().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    assert!(
        app.state.pool.try_get().is_none(),
        "the shared pool is all taken"
    );
    let mut record = consume(s.user_id, 7);
    record.token_id = s.token_id;
    record.request_id = Some("writer-own-connection-1".into());
    app.state.relay.ledger.settle(
        switchboard_ledger::Reservation::none(s.user_id, s.token_id),
        record,
        0,
    );
    // The shared pool waits 10 s for a connection: a flush that needed one would not be done.
    let flushed = actix_web::rt::time::timeout(
        std::time::Duration::from_secs(5),
        switchboard_api::relay::flush_ledger(&app.state),
    )
    .await
    .expect("the flush waited for the shared pool");
    flushed.unwrap();
    // Read on one of the held connections (the test's own).
    let c = &mut held[0];
    let rows = switchboard_store::logs::consumed_by_user(c, s.user_id).unwrap();
    assert_eq!(rows, 7, "the record is written");
    assert_eq!(users::find(c, s.user_id).unwrap().quota, 1_000_000 - 7);
}

/// Eight answers asked for at once (`n: 8`) against 20 000 quota, each of which may run to
/// 4 000 tokens: the balance rule lowers each answer's limit to an eighth of what the balance
/// covers, so the eight together cost no more than was reserved and nothing is cut by the cap.
/// Fails when one answer is reserved and limited: the upstream kept the client's 4 000 per
/// answer, served 32 000 tokens and the cap charged 20 000 of a 32 011 cost.
async fn n_answers_share_the_covered_output(app: TestApp) {
    let s = long_model_user(&app, 20_000).await;
    // A prompt the estimate counts at more than the 11 tokens the mock reports.
    let body = json!({"model": "long-model", "n": 8, "max_tokens": 4000,
        "messages": [{"role": "user", "content": "hello there ".repeat(40)}]});
    let r = app.relay(&s.key, "/v1/chat/completions", body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["choices"].as_array().map(Vec::len), Some(8));
    let sent = s
        .upstream
        .requests()
        .into_iter()
        .rfind(|q| q.path == "/v1/chat/completions")
        .unwrap();
    let per_answer = sent.body["max_tokens"].as_i64().unwrap();
    assert!(
        per_answer * 8 <= 20_000 && per_answer > 2_000,
        "each answer's limit is its share of the covered output: {per_answer}"
    );
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    let completion = r.body["usage"]["completion_tokens"].as_i64().unwrap();
    assert_eq!(completion, per_answer * 8);
    assert_eq!(
        logs[0].quota,
        11 + completion,
        "charged the real cost of the eight answers: {}",
        logs[0].metadata
    );
    assert!(
        !logs[0].metadata.contains("uncapped_quota"),
        "the cap did not cut it: {}",
        logs[0].metadata
    );
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 20_000 - logs[0].quota);
    assert!(u.quota >= 0);
}

#[actix_web::test]
async fn n_answers_are_reserved_and_limited_together() {
    n_answers_share_the_covered_output(TestApp::new().await).await;
    if let Some(app) = TestApp::with_redis(TestDb::sqlite()).await {
        n_answers_share_the_covered_output(app).await;
    }
}

/// Redis restarted without persistence while consumption it had charged was not in the
/// database yet (the database's write lock held): the node finds the data set gone (its
/// epoch), admits nothing until it has written its records and set every balance from the
/// database, and the books then agree to the unit: Redis' balances are the database's, the
/// database's are the start less the consume logs. Fails without the epoch: the request after
/// the restart was admitted on the database's stale balance and, once the records were written,
/// Redis stayed above the database by what they charged, resync after resync.
#[actix_web::test]
async fn redis_that_lost_its_data_is_rebuilt_from_the_database() {
    use std::time::Duration;
    if !crate::common::redis_configured("Redis losing its data") {
        return;
    }
    let mut redis = crate::common::PrivateRedis::start();
    let db = TestDb::sqlite();
    let dsn = db.dsn.clone();
    let app = redis.node(db).await;
    let (user_start, key_start) = (1_000_000, 500_000);
    let s = app
        .relay_setup(
            user_start,
            json!({"unlimited_quota": false, "remain_quota": key_start}),
        )
        .await;
    let chat = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(
        app.relay(&s.key, "/v1/chat/completions", chat.clone())
            .await
            .status,
        200
    );
    app.flushed().await;
    // Another connection holds SQLite's write lock: what follows is charged in Redis only.
    let (pool, _) = switchboard_store::conn::connect(&dsn, 1).unwrap();
    let mut lock = pool.get().unwrap();
    switchboard_store::testing::execute_raw(&mut lock, "BEGIN IMMEDIATE");
    for _ in 0..4 {
        assert_eq!(
            app.relay(&s.key, "/v1/chat/completions", chat.clone())
                .await
                .status,
            200
        );
    }
    redis.restart_empty();
    // Once the node reaches the new Redis: refused (the rebuild waits for the database), or
    // admitted on the database's balance, which lacks the four charges.
    let started = std::time::Instant::now();
    let admitted_stale = loop {
        let r = app
            .relay(&s.key, "/v1/chat/completions", chat.clone())
            .await;
        if r.status == 200 {
            break true;
        }
        assert_eq!(
            r.body["error"]["code"], "ledger_unavailable",
            "{:?}",
            r.body
        );
        if app.state.relay.ledger.needs_rebuild() {
            break false;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "Redis is back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    switchboard_store::testing::execute_raw(&mut lock, "ROLLBACK");
    drop(lock);
    let started = std::time::Instant::now();
    loop {
        let r = app
            .relay(&s.key, "/v1/chat/completions", chat.clone())
            .await;
        if r.status == 200 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the node admits again once rebuilt: {:?}",
            r.body
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    app.flushed().await;
    switchboard_api::relay::resync_ledger(&app.state)
        .await
        .unwrap();
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(
        logs.len(),
        6 + usize::from(admitted_stale),
        "every served request has its log"
    );
    let spent: i64 = logs.iter().map(|l| l.quota).sum();
    assert!(spent > 0);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    let t = tokens::find(&mut app.conn(), s.token_id).unwrap();
    assert_eq!(u.quota, user_start - spent);
    assert_eq!(t.remain_quota, key_start - spent);
    let sh = app.state.relay.shared().unwrap();
    assert_eq!(
        sh.user_balance(s.user_id).await.unwrap(),
        Some(u.quota),
        "Redis holds the database's balance"
    );
    assert_eq!(
        sh.field(
            switchboard_ledger::shared::Account::Token(s.token_id),
            "bal"
        )
        .await
        .unwrap(),
        Some(t.remain_quota)
    );
    assert!(
        !admitted_stale,
        "nothing is admitted before the balances are rebuilt"
    );
}
