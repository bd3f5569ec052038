//! The relay end to end: the real app over HTTP, a real mock upstream over HTTP, a real database.

use crate::common::{RelaySetup, TestApp};
use futures_util::StreamExt;
use serde_json::{json, Value};
use switchboard_mock_upstream::CONTENT;
use switchboard_store::{channels, tokens, users};

fn chat(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "Say hello"}]})
}

/// gpt-4o-mini's built-in price: input 0.075, output 0.3 per token-unit; the mock reports 11
/// prompt and 7 completion tokens: ceil(11 * 0.075 + 7 * 0.3) = ceil(2.925) = 3.
const MINI_COST: i64 = 3;

async fn set_option(app: &TestApp, key: &str, value: Value) {
    app.root()
        .put("/api/option", json!({"key": key, "value": value}))
        .await
        .ok();
}

#[actix_web::test]
async fn chat_is_relayed_charged_once_and_logged() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["choices"][0]["message"]["content"], CONTENT);
    let seen = s.upstream.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].authorization, "Bearer sk-mock-ok",
        "the channel's key goes upstream, never the client's"
    );
    assert_eq!(seen[0].body["messages"][0]["content"], "Say hello");
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    let l = &logs[0];
    assert_eq!(
        (l.quota, l.prompt_tokens, l.completion_tokens, l.is_stream),
        (MINI_COST, 11, 7, false)
    );
    assert_eq!(
        (l.token_id, l.model_name.as_str(), l.group_name.as_str()),
        (s.token_id, "gpt-4o-mini", "default")
    );
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(
        (u.quota, u.used_quota, u.request_count),
        (1_000_000 - MINI_COST, MINI_COST, 1)
    );
    let t = tokens::find(&mut app.conn(), s.token_id).unwrap();
    assert_eq!((t.used_quota, t.request_count), (MINI_COST, 1));
    assert_eq!(
        channels::find(&mut app.conn(), l.channel_id)
            .unwrap()
            .used_quota,
        MINI_COST
    );
}

/// A key's first requests arriving together (a cold start under load) read its balances once:
/// the others wait for that read instead of each taking a database connection of its own (the
/// pool opened up to its limit for 32 of them).
#[actix_web::test]
async fn a_keys_first_requests_at_once_read_its_balances_once() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let opened_before = app.db.pool.state().connections;
    let client = reqwest::Client::new();
    let calls: Vec<_> = (0..32)
        .map(|_| {
            let (c, url, key) = (
                client.clone(),
                app.url("/v1/chat/completions"),
                s.key.clone(),
            );
            actix_web::rt::spawn(async move {
                c.post(url)
                    .bearer_auth(key)
                    .json(&chat("gpt-4o-mini"))
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16()
            })
        })
        .collect();
    for c in calls {
        assert_eq!(c.await.unwrap(), 200);
    }
    let opened = app.db.pool.state().connections;
    assert!(
        opened <= opened_before + 2,
        "{opened_before} connections before, {opened} after"
    );
    // Every request was charged against the one balance that was read.
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 32);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 1_000_000 - 32 * MINI_COST);
}

#[actix_web::test]
async fn streams_pass_through_with_forced_usage() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let mut body = chat("gpt-4o-mini");
    body["stream"] = json!(true);
    let r = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(&s.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let text = r.text().await.unwrap();
    for piece in switchboard_mock_upstream::CONTENT_CHUNKS {
        assert!(
            text.contains(&format!("\"content\":\"{piece}\"")),
            "{piece:?} missing in {text}"
        );
    }
    assert!(text.trim_end().ends_with("data: [DONE]"));
    assert_eq!(
        s.upstream.requests()[0].body["stream_options"]["include_usage"],
        true,
        "usage is forced upstream"
    );
    assert!(
        !text.contains("\"choices\":[]"),
        "the client did not ask for the usage chunk: {text}"
    );
    // A client that asks for usage gets it.
    body["stream_options"] = json!({"include_usage": true});
    let r = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(&s.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let text = r.text().await.unwrap();
    assert!(
        text.contains("\"choices\":[]") && text.contains("\"prompt_tokens\":11"),
        "{text}"
    );
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 2);
    assert!(logs
        .iter()
        .all(|l| (l.quota, l.is_stream, l.completion_tokens) == (MINI_COST, true, 7)));
}

#[actix_web::test]
async fn a_client_that_leaves_mid_stream_pays_for_what_was_produced() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-slow", "gpt-4.1-nano", 0)
        .await;
    let mut body = chat("gpt-4.1-nano");
    body["stream"] = json!(true);
    let r = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(&s.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let mut stream = r.bytes_stream();
    let mut got = String::new();
    while !got.contains("\"content\":\" from\"") {
        got.push_str(&String::from_utf8_lossy(
            &stream.next().await.unwrap().unwrap(),
        ));
    }
    drop(stream);
    // The relay notices the disconnect when it next writes; then it settles.
    let mut logs = Vec::new();
    for _ in 0..100 {
        logs = app.consume_logs(s.user_id).await;
        if !logs.is_empty() {
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(logs.len(), 1, "settled exactly once");
    let l = &logs[0];
    assert!(l.is_stream && l.quota > 0);
    assert!(
        l.completion_tokens >= 1 && l.completion_tokens < 7,
        "only the streamed part is billed: {}",
        l.completion_tokens
    );
    assert!(l.metadata.contains("\"usage_estimated\":true"));
}

#[actix_web::test]
async fn upstream_failure_retries_on_another_channel_and_bills_once() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let bad = app
        .channel(&s.upstream.base_url, "sk-mock-500", "gpt-4.1-mini", 10)
        .await;
    let good = app
        .channel(&s.upstream.base_url, "sk-mock-ok", "gpt-4.1-mini", 0)
        .await;
    // Without retries the failure reaches the client and nothing is charged.
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4.1-mini"))
        .await;
    assert_eq!(r.status, 500, "{:?}", r.body);
    // The upstream's own error type reaches the client.
    assert_eq!(r.body["error"]["type"], "server_error");
    assert!(app.consume_logs(s.user_id).await.is_empty());
    // With a retry, the lower-priority channel answers.
    set_option(&app, "RetryTimes", json!(1)).await;
    set_option(&app, "RetryCooldownSeconds", json!(0)).await;
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4.1-mini"))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].channel_id, good);
    assert_eq!(channels::find(&mut app.conn(), bad).unwrap().used_quota, 0);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 1_000_000 - logs[0].quota);
}

#[actix_web::test]
async fn an_upstream_401_disables_the_channel_when_enabled() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    set_option(&app, "AutomaticDisableChannelEnabled", json!(true)).await;
    set_option(&app, "RetryTimes", json!(2)).await;
    let bad = app
        .channel(&s.upstream.base_url, "sk-mock-401", "gpt-4.1", 10)
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-ok", "gpt-4.1", 0)
        .await;
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4.1"))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(channels::find(&mut app.conn(), bad).unwrap().status, 3);
    // Disabled channels are no longer tried.
    let before = s
        .upstream
        .requests()
        .iter()
        .filter(|q| q.authorization == "Bearer sk-mock-401")
        .count();
    app.relay(&s.key, "/v1/chat/completions", chat("gpt-4.1"))
        .await;
    let after = s
        .upstream
        .requests()
        .iter()
        .filter(|q| q.authorization == "Bearer sk-mock-401")
        .count();
    assert_eq!(before, after);
}

#[actix_web::test]
async fn keys_and_requests_are_checked_before_anything_is_spent() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(
            1_000_000,
            json!({"unlimited_quota": true, "models": "gpt-4o-mini"}),
        )
        .await;
    let expect = |r: crate::common::Resp, status: u16, code: &str| {
        assert_eq!(r.status, status, "{:?}", r.body);
        assert_eq!(r.body["error"]["code"], code, "{:?}", r.body);
    };
    expect(
        app.relay("sk-nope", "/v1/chat/completions", chat("gpt-4o-mini"))
            .await,
        401,
        "invalid_api_key",
    );
    let r = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .json(&chat("gpt-4o-mini"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    expect(
        app.relay(
            &s.key,
            "/v1/chat/completions",
            chat("text-embedding-3-small"),
        )
        .await,
        403,
        "model_not_allowed",
    );
    expect(
        app.relay(&s.key, "/v1/chat/completions", json!({"messages": []}))
            .await,
        400,
        "model_required",
    );
    expect(
        app.relay(
            &s.key,
            "/v1/chat/completions",
            json!({"model": "gpt-4o-mini", "stream": "yes"}),
        )
        .await,
        400,
        "invalid_request",
    );
    let raw = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(&s.key)
        .body("{broken")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 400);
    // A model with a price but no channel, and one with no price.
    let open = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    expect(
        app.relay(&open.key, "/v1/chat/completions", chat("gpt-4o"))
            .await,
        404,
        "model_not_found",
    );
    expect(
        app.relay(&open.key, "/v1/chat/completions", chat("no-such-model-x"))
            .await,
        404,
        "model_not_found",
    );
    app.channel(&open.upstream.base_url, "sk-mock-ok", "unpriced-model-x", 0)
        .await;
    expect(
        app.relay(&open.key, "/v1/chat/completions", chat("unpriced-model-x"))
            .await,
        400,
        "model_price_not_set",
    );
    // A disabled key.
    s.user
        .put("/api/token", json!({"id": s.token_id, "status": 2}))
        .await
        .ok();
    expect(
        app.relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
            .await,
        401,
        "token_disabled",
    );
    assert!(app.consume_logs(s.user_id).await.is_empty());
    assert_eq!(
        s.upstream.count("/v1/chat/completions"),
        0,
        "nothing reached the upstream"
    );
}

#[actix_web::test]
async fn requests_beyond_the_balance_are_refused_with_402() {
    let app = TestApp::new().await;
    let poor = app.relay_setup(0, json!({"unlimited_quota": true})).await;
    let r = app
        .relay(&poor.key, "/v1/chat/completions", chat("gpt-4o-mini"))
        .await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_str()),
        (402, Some("insufficient_user_quota"))
    );
    let small_key = app.relay_setup(1_000_000, json!({"remain_quota": 2})).await;
    let r = app
        .relay(&small_key.key, "/v1/chat/completions", chat("gpt-4o-mini"))
        .await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_str()),
        (402, Some("insufficient_token_quota"))
    );
    let empty_key = app.relay_setup(1_000_000, json!({"remain_quota": 0})).await;
    let r = app
        .relay(&empty_key.key, "/v1/chat/completions", chat("gpt-4o-mini"))
        .await;
    assert_eq!(r.status, 402);
    assert_eq!(
        poor.upstream.count("/v1/chat/completions")
            + small_key.upstream.count("/v1/chat/completions"),
        0
    );
}

#[actix_web::test]
async fn key_rate_limits_answer_429() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true, "api_rate": 2}))
        .await;
    for _ in 0..2 {
        assert_eq!(
            app.relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
                .await
                .status,
            200
        );
    }
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
        .await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_str()),
        (429, Some("rate_limit_exceeded"))
    );
}

#[actix_web::test]
async fn models_lists_what_the_key_may_use() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let r = reqwest::Client::new()
        .get(app.url("/v1/models"))
        .bearer_auth(&s.key)
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    let ids: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["gpt-4o-mini", "text-embedding-3-small"]);
    let limited = app
        .relay_setup(
            1_000_000,
            json!({"unlimited_quota": true, "models": "text-embedding-3-small"}),
        )
        .await;
    let r = reqwest::Client::new()
        .get(app.url("/v1/models"))
        .bearer_auth(&limited.key)
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["data"].as_array().unwrap().len(), 1);
    let r = reqwest::Client::new()
        .get(app.url("/v1/models/gpt-4o-mini"))
        .bearer_auth(&limited.key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[actix_web::test]
async fn admins_can_pin_a_channel() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let second = app
        .channel(&s.upstream.base_url, "sk-mock-second", "gpt-4o-mini", 0)
        .await;
    // Root's own key, pinned to the second channel.
    let root_key = app
        .root()
        .post(
            "/api/token",
            json!({"name": "pin", "unlimited_quota": true}),
        )
        .await
        .ok()["key"]
        .as_str()
        .unwrap()
        .to_owned();
    for _ in 0..4 {
        let r = app
            .relay(
                &format!("{root_key}#{second}"),
                "/v1/chat/completions",
                chat("gpt-4o-mini"),
            )
            .await;
        assert_eq!(r.status, 200);
    }
    let pinned = s
        .upstream
        .requests()
        .iter()
        .filter(|q| q.authorization == "Bearer sk-mock-second")
        .count();
    assert_eq!(pinned, 4);
    // An ordinary user's pin is ignored, not an error.
    let r = app
        .relay(
            &format!("{}#999", s.key),
            "/v1/chat/completions",
            chat("gpt-4o-mini"),
        )
        .await;
    assert_eq!(r.status, 200);
}

/// Hundreds of concurrent requests mixing successes, upstream failures, refusals and clients
/// that leave mid-stream: the sum of the consume logs equals the drop of every balance, exactly,
/// one log per admitted request, and nobody overdraws.
async fn billing_invariants(app: TestApp) {
    let s: RelaySetup = app
        .relay_setup(100_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-500", "gpt-4.1-nano", 0)
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-slow", "gpt-4o", 0)
        .await;
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for i in 0..2000 {
        let c = client.clone();
        let url = app.url("/v1/chat/completions");
        let key = s.key.clone();
        // Every 7th: a slow stream the client leaves after its first chunk.
        let leave = i % 7 == 0;
        let model = if leave {
            "gpt-4o"
        } else if i % 5 == 0 {
            "gpt-4.1-nano"
        } else {
            "gpt-4o-mini"
        };
        let stream = leave || i % 3 == 0;
        tasks.push(actix_web::rt::spawn(async move {
            let mut body = chat(model);
            body["stream"] = json!(stream);
            let r = c
                .post(url)
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            if leave && status == 200 {
                let mut s = r.bytes_stream();
                let _ = s.next().await;
                drop(s);
            } else {
                let _ = r.bytes().await;
            }
            (status, model)
        }));
    }
    let (mut ok, mut ok_mini, mut refused) = (0, 0, 0);
    for t in tasks {
        match t.await.unwrap() {
            (200, m) => {
                ok += 1;
                ok_mini += usize::from(m == "gpt-4o-mini");
            }
            (402, _) => refused += 1,
            // The failing channel answers 500, then is frozen for the cooldown (503: none available).
            (500 | 503, _) => {}
            // The server timed out reading a request on a saturated machine: never admitted.
            (408, _) => {}
            (other, _) => panic!("unexpected status {other}"),
        }
    }
    // Streams left by their clients settle when the relay notices the disconnect.
    let mut logs = app.consume_logs(s.user_id).await;
    for _ in 0..100 {
        if logs.len() >= ok {
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
        logs = app.consume_logs(s.user_id).await;
    }
    let spent: i64 = logs.iter().map(|l| l.quota).sum();
    assert_eq!(logs.len(), ok, "one consume log per admitted request");
    let mini: i64 = logs
        .iter()
        .filter(|l| l.model_name == "gpt-4o-mini")
        .map(|l| l.quota)
        .sum();
    assert_eq!(mini, ok_mini as i64 * MINI_COST);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(
        u.quota,
        100_000 - spent,
        "balance drop equals the logs, exactly"
    );
    assert_eq!(u.used_quota, spent);
    assert!(u.quota >= 0);
    let t = tokens::find(&mut app.conn(), s.token_id).unwrap();
    assert_eq!(t.used_quota, spent);
    let by_channel: i64 = channels::all(&mut app.conn())
        .unwrap()
        .iter()
        .map(|c| c.used_quota)
        .sum();
    assert_eq!(by_channel, spent);
    assert!(
        ok > 0 && refused > 0,
        "the run must exercise both admission and refusal ({ok} ok, {refused} refused)"
    );
    assert!(
        logs.iter().any(|l| l.model_name == "gpt-4o"),
        "the run must include streams left mid-way"
    );
}

#[actix_web::test]
async fn billing_invariants_hold_under_concurrency_on_sqlite() {
    billing_invariants(TestApp::new().await).await;
}

#[actix_web::test]
async fn billing_invariants_hold_under_concurrency_on_postgres() {
    match switchboard_store::testing::TestDb::postgres() {
        Some(db) => billing_invariants(TestApp::on(db, |_| {}).await).await,
        None => println!("TEST_PG_DSN not set: PostgreSQL billing invariants not run"),
    }
}

#[actix_web::test]
async fn billing_invariants_hold_with_the_ledger_in_redis() {
    match TestApp::with_redis(switchboard_store::testing::TestDb::sqlite()).await {
        Some(app) => billing_invariants(app).await,
        None => println!("TEST_REDIS_URL not set: Redis-backed billing invariants not run"),
    }
}

#[actix_web::test]
async fn key_rate_limits_hold_in_redis() {
    let Some(app) = TestApp::with_redis(switchboard_store::testing::TestDb::sqlite()).await else {
        println!("TEST_REDIS_URL not set: Redis rate limits not run");
        return;
    };
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true, "api_rate": 3}))
        .await;
    let mut ok = 0;
    for _ in 0..6 {
        if app
            .relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
            .await
            .status
            == 200
        {
            ok += 1;
        }
    }
    assert_eq!(ok, 3);
}

#[actix_web::test]
async fn model_mapping_sends_the_upstream_model_and_bills_the_requested_one() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": "mapped", "type": 1, "key": "sk-mock-map", "base_url": s.upstream.base_url, "models": "gpt-4.1", "group": "default", "priority": 5, "model_mapping": {"gpt-4.1": "gpt-4.1-2025-04-14"}}),
        )
        .await;
    r.ok();
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4.1"))
        .await;
    assert_eq!(r.status, 200);
    let seen = s.upstream.requests();
    assert_eq!(seen.last().unwrap().body["model"], "gpt-4.1-2025-04-14");
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(
        logs[0].model_name, "gpt-4.1",
        "priced and logged as requested"
    );
}

#[actix_web::test]
async fn key_rate_limits_use_a_token_bucket_from_60_rpm() {
    let app = TestApp::new().await;
    // api_rate 60: a bucket of one request per second, burst 1.
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true, "api_rate": 60}))
        .await;
    assert_eq!(
        app.relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
            .await
            .status,
        200
    );
    assert_eq!(
        app.relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
            .await
            .status,
        429
    );
}

#[actix_web::test]
async fn a_top_up_can_be_spent_at_once() {
    let app = TestApp::new().await;
    let s = app.relay_setup(0, json!({"unlimited_quota": true})).await;
    assert_eq!(
        app.relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
            .await
            .status,
        402
    );
    let r = app
        .root()
        .post(
            "/api/redemption",
            json!({"name": "gift", "quota": 100_000, "count": 1}),
        )
        .await;
    let code = r.ok()["codes"][0].as_str().unwrap().to_owned();
    s.user
        .post("/api/user/topup", json!({"key": code}))
        .await
        .ok();
    assert_eq!(
        app.relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
            .await
            .status,
        200
    );
    // And an administrator's quota change too.
    let poor = app.relay_setup(0, json!({"unlimited_quota": true})).await;
    app.root()
        .post(
            &format!("/api/user/quota/{}", poor.user_id),
            json!({"quota": 50_000, "remark": "trial"}),
        )
        .await
        .ok();
    assert_eq!(
        app.relay(&poor.key, "/v1/chat/completions", chat("gpt-4o-mini"))
            .await
            .status,
        200
    );
}

#[actix_web::test]
async fn group_rate_limits_apply_per_user_and_follow_group_edits() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    // The default group gets 2 requests a minute; the change applies at once.
    let groups = app.root().get("/api/user_group?keyword=default").await;
    let id = groups.ok()["data"][0]["id"].as_i64().unwrap();
    app.root()
        .put("/api/user_group", json!({"id": id, "api_rate": 2}))
        .await
        .ok();
    for _ in 0..2 {
        assert_eq!(
            app.relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
                .await
                .status,
            200
        );
    }
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
        .await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_str()),
        (429, Some("rate_limit_exceeded"))
    );
    // The limit is per user: another user of the group still has their own two.
    let other = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    assert_eq!(
        app.relay(&other.key, "/v1/chat/completions", chat("gpt-4o-mini"))
            .await
            .status,
        200
    );
}

/// The relay's endpoints take POST only: another method is the OpenAI-shaped 404 of a path
/// that does not exist, reaching no upstream and charging nothing.
#[actix_web::test]
async fn another_method_on_a_relay_endpoint_is_an_invalid_url() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let client = reqwest::Client::new();
    for (method, path) in [
        (reqwest::Method::GET, "/v1/chat/completions"),
        (reqwest::Method::PUT, "/v1/chat/completions"),
        (reqwest::Method::DELETE, "/v1/embeddings"),
        (reqwest::Method::PATCH, "/v1/responses"),
    ] {
        let r = client
            .request(method.clone(), app.url(path))
            .bearer_auth(&s.key)
            .json(&chat("gpt-4o-mini"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{method} {path}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(
            body["error"]["message"],
            format!("Invalid URL ({method} {path})")
        );
        assert_eq!(body["error"]["type"], "invalid_request_error");
    }
    // POST still reaches the handler.
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
        .await;
    assert_eq!(r.status, 200);
    assert!(
        s.upstream.requests().len() == 1,
        "only the POST went upstream"
    );
    assert_eq!(app.consume_logs(s.user_id).await.len(), 1);
}
