//! The balance rule (docs/billing.md): requests admitted against a balance spend at most that
//! balance together, whatever the upstream answers, on every store of the ledger; and changes
//! made outside the relay (rewards, key edits) reach the ledger at once.

use crate::common::{RelaySetup, TestApp};
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
        use switchboard_api::relay::shared::Account;
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
    use switchboard_api::relay::shared::{Account, Reserve, Settlement, Shared};
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
    let expires = switchboard_api::relay::shared::reservation_expiry();
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

/// The marker generations of [`LedgerOnRedis`]'s ledger: short, so that a test crosses them.
const MARKER_PERIOD: std::time::Duration = std::time::Duration::from_millis(100);

/// A node's ledger on a Redis of the test's own (node `n1`), with users 1 to 3 loaded at
/// 10 000 each and no keys, marker generations of [`MARKER_PERIOD`], and a second connection to
/// that Redis for the test's own commands.
struct LedgerOnRedis {
    redis: crate::common::PrivateRedis,
    /// The ledger's way to Redis when it is not direct ([`LedgerOnRedis::behind_a_link`]).
    link: Option<crate::common::SlowLink>,
    prefix: String,
    sh: switchboard_api::relay::shared::Shared,
    admin: redis::aio::MultiplexedConnection,
    ledger: switchboard_api::relay::ledger::Ledger,
}

impl LedgerOnRedis {
    async fn start() -> LedgerOnRedis {
        Self::start_with(false).await
    }

    /// The ledger talks to Redis through a [`crate::common::SlowLink`] (no delay until the test
    /// sets one).
    async fn behind_a_link() -> LedgerOnRedis {
        Self::start_with(true).await
    }

    async fn start_with(behind_a_link: bool) -> LedgerOnRedis {
        use switchboard_api::relay::ledger::Ledger;
        let redis = crate::common::PrivateRedis::start();
        let link = if behind_a_link {
            Some(crate::common::SlowLink::start(redis.port, std::time::Duration::ZERO).await)
        } else {
            None
        };
        let url = link.as_ref().map_or_else(|| redis.url(), |l| l.url());
        let prefix = format!("sbledger:{}:", crate::common::unique());
        let sh = switchboard_api::relay::shared::Shared::connect(&url, &prefix, "n1")
            .await
            .unwrap();
        let admin = redis::Client::open(redis.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let mut ledger = Ledger::default().with_marker_period(MARKER_PERIOD);
        ledger.attach(sh.clone());
        let t = LedgerOnRedis {
            redis,
            link,
            prefix,
            sh,
            admin,
            ledger,
        };
        for user in 1..=3 {
            t.load_user(user).await;
        }
        t
    }

    /// Loads `user` at 10 000 (what the database would say), without a key.
    async fn load_user(&self, user: i64) {
        self.ledger
            .load(switchboard_api::relay::ledger::Loaded {
                user_id: user,
                user_quota: 10_000,
                token_id: 0,
                token_remain: 0,
                token_unlimited: false,
            })
            .await
            .unwrap();
    }

    /// A user's balance and what it holds reserved, as Redis has them.
    async fn user(&self, user: i64) -> (i64, i64) {
        use switchboard_api::relay::shared::Account;
        let field = |name| async move {
            self.sh
                .field(Account::User(user), name)
                .await
                .unwrap()
                .unwrap()
        };
        (field("bal").await, field("res").await)
    }

    /// One of the test's own commands.
    async fn cmd(&mut self, args: &[&str]) {
        let mut c = redis::cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        let _: redis::Value = c.query_async(&mut self.admin).await.unwrap();
    }

    /// Settles a request of user 1 that cost nothing, answered in time. Redis loads the
    /// settlement's script with it, so that a round trip the test then holds up runs it rather
    /// than refusing it as unknown (which would apply nothing).
    async fn settle_one_in_time(&self) {
        let r = self.ledger.reserve(1, 0, 1_000).await.unwrap();
        self.ledger.settle(r, consume(1, 0), 0);
        self.ledger.apply_queued().await;
        assert_eq!(self.ledger.redis_backlog(), 0);
    }

    /// The operations Redis holds marked applied for node `n1` (the fields of its marker
    /// generations, each named by its kind and id), and the generations' keys.
    async fn markers(&mut self) -> (Vec<String>, Vec<String>) {
        let pattern = format!("{}done:n1:g*", self.prefix);
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(&pattern)
            .query_async(&mut self.admin)
            .await
            .unwrap();
        let mut ops = Vec::new();
        for k in &keys {
            let fields: Vec<String> = redis::cmd("HKEYS")
                .arg(k)
                .query_async(&mut self.admin)
                .await
                .unwrap();
            ops.extend(fields.into_iter().filter(|f| f != "at"));
        }
        ops.sort_unstable();
        (ops, keys)
    }

    /// Waits out two marker periods and rotates: every generation the operations so far took
    /// is over and may be dropped.
    async fn two_periods_later(&self) -> std::ops::Range<u64> {
        tokio::time::sleep(MARKER_PERIOD * 2 + std::time::Duration::from_millis(20)).await;
        self.ledger.rotate_markers().await
    }

    /// (user, charge) of every consume record queued for the database, taken from the queue.
    async fn charged(&self) -> Vec<(i64, i64)> {
        let mut charged: Vec<(i64, i64)> = self
            .ledger
            .take_pending()
            .await
            .iter()
            .map(|r| (r.user_id, r.quota))
            .collect();
        charged.sort_unstable();
        charged
    }
}

/// Settlements waiting for Redis go in one round trip. One that Redis refuses must not take
/// the rest of its batch with it: they are applied, it waits (with what arrives after it, in
/// order) until Redis takes it, and each is charged once. It fails here because the field that
/// marks it applied holds something that is not a charge (its script answers no number and
/// changes nothing). Redis has also forgotten the ledger's scripts (as after a restart), which
/// a batch must get over.
#[actix_web::test]
async fn a_settlement_redis_refuses_waits_and_the_rest_of_its_batch_is_applied() {
    if !crate::common::redis_configured("settlements applied in batches") {
        return;
    }
    let mut t = LedgerOnRedis::start().await;
    let mut held = Vec::new();
    for user in 1..=3 {
        held.push(t.ledger.reserve(user, 0, 1_000).await.unwrap());
    }
    let markers = t.sh.generation(t.ledger.marker_generation());
    let refused = format!("s{}", held[1].id);
    t.cmd(&["HSET", &markers, &refused, "not a charge"]).await;
    for (r, cost) in held.into_iter().zip([100, 200, 300]) {
        t.ledger.settle(r, consume(r.user_id, cost), 0);
    }
    t.cmd(&["SCRIPT", "FLUSH"]).await;
    t.ledger.apply_queued().await;
    assert_eq!(t.ledger.redis_backlog(), 1, "user 2's settlement waits");
    assert_eq!(t.user(1).await, (9_900, 0));
    assert_eq!(t.user(2).await, (10_000, 1_000));
    assert_eq!(t.user(3).await, (9_700, 0));
    // Every record is queued for the database with its charge (the refused one's is fixed at
    // most its reservation, and Redis is told that charge when it takes it).
    assert_eq!(t.charged().await, [(1, 100), (2, 200), (3, 300)]);

    // What comes after it waits behind it.
    let later = t.ledger.reserve(1, 0, 500).await.unwrap();
    t.ledger.settle(later, consume(1, 50), 0);
    t.ledger.apply_queued().await;
    assert_eq!(t.ledger.redis_backlog(), 2);
    assert_eq!(t.user(1).await, (9_900, 500));

    // Redis takes it again: both are applied, once.
    t.cmd(&["HDEL", &markers, &refused]).await;
    for _ in 0..2 {
        t.ledger.apply_queued().await;
        assert_eq!(t.ledger.redis_backlog(), 0);
        assert_eq!(t.user(1).await, (9_850, 0));
        assert_eq!(t.user(2).await, (9_800, 0));
        assert_eq!(t.user(3).await, (9_700, 0));
    }
}

/// An applier dropped while its batch is on its way to Redis (a non-streamed request whose
/// client went away while it waited for its settlement, or a flush's time limit) puts the batch
/// back: no consume record is lost, nothing stays held, and what Redis applied after the drop
/// is not applied twice, even after the marker period is over. Redis holds the batch here with
/// `CLIENT PAUSE` and runs it when the pause ends.
#[actix_web::test]
async fn an_applier_dropped_mid_round_trip_loses_nothing_and_charges_once() {
    use std::time::Duration;
    if !crate::common::redis_configured("an applier dropped mid round trip") {
        return;
    }
    let t = LedgerOnRedis::start().await;
    t.settle_one_in_time().await;
    for (user, cost) in (1..=3).zip([100, 200, 300]) {
        let r = t.ledger.reserve(user, 0, 1_000).await.unwrap();
        t.ledger.settle(r, consume(user, cost), 0);
    }
    let paused = t.redis.pause(Duration::from_millis(1_000)).await;
    let cut = tokio::time::timeout(Duration::from_millis(200), t.ledger.apply_queued()).await;
    assert!(cut.is_err(), "the applier was dropped mid round trip");
    assert_eq!(
        t.ledger.redis_backlog(),
        3,
        "the batch is back in the queue"
    );
    tokio::time::sleep_until(tokio::time::Instant::from_std(paused)).await;
    // The ledger's connection asks after its batch: Redis applied it when the pause ended.
    assert_eq!(t.user(1).await, (9_900, 0));
    // The queue holds it, and with it the generation of its markers, however many periods pass.
    t.two_periods_later().await;

    t.ledger.apply_queued().await;
    assert_eq!(t.ledger.redis_backlog(), 0);
    assert_eq!(t.user(1).await, (9_900, 0));
    assert_eq!(t.user(2).await, (9_800, 0));
    assert_eq!(t.user(3).await, (9_700, 0));
    assert_eq!(t.charged().await, [(1, 0), (1, 100), (2, 200), (3, 300)]);
}

/// Settlements that could not reach Redis during an outage wait in order and are sent in
/// batches when it is back: a backlog longer than one batch
/// ([`switchboard_api::relay::ledger::REDIS_BATCH`]) is applied in full, each charged once,
/// nothing left reserved. Redis keeps its data across the restart (AOF) but not its scripts.
#[actix_web::test]
async fn an_outages_backlog_longer_than_a_batch_is_applied_in_full_and_once() {
    use std::time::{Duration, Instant};
    use switchboard_api::relay::ledger::REDIS_BATCH;
    if !crate::common::redis_configured("an outage's backlog") {
        return;
    }
    let mut t = LedgerOnRedis::start().await;
    let n = REDIS_BATCH * 2 + 10;
    let mut held = Vec::new();
    for i in 0..n {
        let user = 1 + (i % 3) as i64;
        held.push(t.ledger.reserve(user, 0, 10).await.unwrap());
    }
    t.redis.down();
    for r in held {
        t.ledger.settle(r, consume(r.user_id, 3), 0);
    }
    t.ledger.apply_queued().await;
    assert_eq!(
        t.ledger.redis_backlog(),
        n,
        "every settlement waits for Redis"
    );
    // Each is queued for the database already, charged at most its reservation.
    let charged = t.charged().await;
    assert_eq!(charged.len(), n);
    assert!(charged.iter().all(|(_, q)| *q == 3));

    t.redis.up();
    let deadline = Instant::now() + Duration::from_secs(15);
    while t.ledger.redis_backlog() > 0 {
        assert!(
            Instant::now() < deadline,
            "{} still wait",
            t.ledger.redis_backlog()
        );
        t.ledger.apply_queued().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for user in 1..=3 {
        let count = (0..n).filter(|i| 1 + (i % 3) as i64 == user).count() as i64;
        assert_eq!(t.user(user).await, (10_000 - 3 * count, 0), "user {user}");
    }
}

/// Redis remembers which operations it applied only while one may be sent again: a period
/// after they were made, the markers of settlements, credits and flushes whose answers arrived
/// are dropped, and the generation that takes new ones expires on its own after a day (the
/// markers of a node that stopped). Before marker generations each applied operation left a key
/// in Redis for 24 hours, about 150 bytes for every request relayed.
#[actix_web::test]
async fn markers_of_answered_operations_are_dropped_a_period_later() {
    use switchboard_store::logs::ConsumeRecord;
    if !crate::common::redis_configured("operation markers dropped") {
        return;
    }
    let mut t = LedgerOnRedis::start().await;
    let n = 300;
    for i in 0..n {
        let user = 1 + (i % 3) as i64;
        let r = t.ledger.reserve(user, 0, 10).await.unwrap();
        t.ledger.settle(r, consume(user, 3), 0);
    }
    t.ledger.apply_queued().await;
    t.ledger.credit_user(1, 7).await;
    let written = t
        .ledger
        .flush(|batch| async move { Ok::<_, (Vec<ConsumeRecord>, ())>(batch) })
        .await
        .unwrap();
    assert_eq!(written, n);
    let (ops, _) = t.markers().await;
    let kinds = |k: char| ops.iter().filter(|f| f.starts_with(k)).count();
    assert_eq!(
        (kinds('s'), kinds('c'), kinds('f')),
        (n, 1, 1),
        "each operation is marked while it may be sent again"
    );

    let dropped = t.two_periods_later().await;
    assert!(!dropped.is_empty());
    let (ops, keys) = t.markers().await;
    assert!(ops.is_empty(), "{} markers left", ops.len());
    assert_eq!(
        keys,
        [t.sh.generation(t.ledger.marker_generation())],
        "only the generation taking new operations is left"
    );
    let ttl: i64 = redis::cmd("TTL")
        .arg(&keys[0])
        .query_async(&mut t.admin)
        .await
        .unwrap();
    assert!(
        ttl > 0 && ttl <= 24 * 3600,
        "a generation expires on its own: {ttl}"
    );
    // The books are right: 100 settlements of 3 each, and user 1's credit.
    assert_eq!(t.user(1).await, (10_000 - 300 + 7, 0));
    assert_eq!(t.user(2).await, (10_000 - 300, 0));
    assert_eq!(t.user(3).await, (10_000 - 300, 0));
}

/// A settlement whose answer was lost (Redis applied it, its reply came later than the node
/// waits: 2 s) waits for a retry, and its marker must outlive the marker period until the
/// retry has been answered: the retry is then recognised and charged once. Rotations while it
/// waits keep its generation; once it is applied, the next rotation drops it.
#[actix_web::test]
async fn a_settlement_whose_answer_was_lost_keeps_its_marker_until_its_retry_is_answered() {
    use std::time::Duration;
    if !crate::common::redis_configured("a lost answer's marker") {
        return;
    }
    let mut t = LedgerOnRedis::behind_a_link().await;
    t.settle_one_in_time().await;
    for (user, cost) in (1..=3).zip([100, 200, 300]) {
        let r = t.ledger.reserve(user, 0, 1_000).await.unwrap();
        t.ledger.settle(r, consume(user, cost), 0);
    }
    let link = t.link.as_ref().unwrap();
    link.set_delay(Duration::from_millis(2_500));
    t.ledger.apply_queued().await;
    link.set_delay(Duration::ZERO);
    assert_eq!(t.ledger.redis_backlog(), 3, "all three wait for a retry");
    assert_eq!(t.user(1).await, (9_900, 0), "Redis applied them");

    for _ in 0..3 {
        t.two_periods_later().await;
        assert_eq!(
            t.markers().await.0.len(),
            4,
            "the markers of settlements waiting for a retry stay (with the first's: the same \
             generation)"
        );
    }
    t.ledger.apply_queued().await;
    assert_eq!(t.ledger.redis_backlog(), 0);
    assert_eq!(t.user(1).await, (9_900, 0), "charged once");
    assert_eq!(t.user(2).await, (9_800, 0));
    assert_eq!(t.user(3).await, (9_700, 0));
    assert_eq!(t.charged().await, [(1, 0), (1, 100), (2, 200), (3, 300)]);

    t.two_periods_later().await;
    assert!(t.markers().await.0.is_empty());
}

/// An account hash without a balance (left when a node's restart bumped the version of an
/// account that had been forgotten) is not a loaded account with nothing in it: the
/// reservation asks for it to be loaded from the database, and then admits against the real
/// balance. Before, the request was refused as if the user had no quota.
#[actix_web::test]
async fn an_account_hash_without_a_balance_is_loaded_again_not_refused() {
    use switchboard_api::relay::ledger::Shortfall;
    if !crate::common::redis_configured("an account hash without a balance") {
        return;
    }
    let mut t = LedgerOnRedis::start().await;
    let user = format!("{}u:1", t.prefix);
    t.cmd(&["DEL", &user]).await;
    t.cmd(&["HINCRBY", &user, "ver", "1"]).await;
    assert_eq!(t.ledger.reserve(1, 0, 100).await, Err(Shortfall::NotLoaded));
    t.load_user(1).await;
    let r = t.ledger.reserve(1, 0, 100).await.unwrap();
    assert_eq!(t.user(1).await, (10_000, 100));
    t.ledger.settle(r, consume(1, 40), 0);
    t.ledger.apply_queued().await;
    assert_eq!(t.user(1).await, (9_960, 0));
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
        switchboard_api::relay::ledger::Reservation::none(s.user_id, s.token_id),
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
            switchboard_api::relay::shared::Account::Token(s.token_id),
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
