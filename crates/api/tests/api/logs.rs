//! The log screens, stats, deletion, retention and the dashboard, over HTTP, with consume logs
//! produced by real relay requests against the mock upstream.

use crate::common::{Client, RelaySetup, TestApp};
use serde_json::{json, Value};
use switchboard_domain::log::{day_start, LogType};
use switchboard_store::logs::{self, ConsumeRecord};
use switchboard_store::now;

async fn chat(app: &TestApp, key: &str) {
    let r = app
        .relay(
            key,
            "/v1/chat/completions",
            json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say hello"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

async fn embed(app: &TestApp, key: &str) {
    let r = app
        .relay(
            key,
            "/v1/embeddings",
            json!({"model": "text-embedding-3-small", "input": "hello"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

/// The rows of one list call.
async fn rows(c: &Client, path: &str) -> Vec<Value> {
    let r = c.get(path).await;
    r.ok()["data"].as_array().unwrap().clone()
}

fn ids(rows: &[Value]) -> Vec<i64> {
    rows.iter().map(|r| r["id"].as_i64().unwrap()).collect()
}

/// Two users with traffic: `a` makes 3 chats and 2 embeddings with its first key and 1 chat with
/// a second key named "second", and gets a quota change from root (a manage log); `b` makes 2
/// chats. Returns both setups and a's second key's id.
async fn traffic(app: &TestApp) -> (RelaySetup, RelaySetup) {
    let a = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let b = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let second = a
        .user
        .post(
            "/api/token",
            json!({"name": "second", "unlimited_quota": true}),
        )
        .await;
    let second_key = second.ok()["key"].as_str().unwrap().to_owned();
    for _ in 0..3 {
        chat(app, &a.key).await;
    }
    embed(app, &a.key).await;
    embed(app, &a.key).await;
    chat(app, &second_key).await;
    chat(app, &b.key).await;
    chat(app, &b.key).await;
    app.root()
        .post(
            &format!("/api/user/quota/{}", a.user_id),
            json!({"quota": 1000, "remark": "gift"}),
        )
        .await
        .ok();
    app.flushed().await;
    (a, b)
}

#[actix_web::test]
async fn users_see_only_their_own_logs_and_no_channels() {
    let app = TestApp::new().await;
    let (a, b) = traffic(&app).await;
    let mine = rows(&a.user, "/api/log/self?size=100").await;
    assert_eq!(
        mine.len(),
        8,
        "6 requests, the account's creation and a quota change: {mine:?}"
    );
    for l in &mine {
        assert_eq!(l["user_id"], a.user_id);
        assert!(l.get("channel_id").is_none() && l.get("channel_name").is_none());
    }
    let consume: Vec<_> = mine.iter().filter(|l| l["type"] == 2).collect();
    assert_eq!(consume.len(), 6);
    for l in &consume {
        assert_eq!(l["source_ip"], "127.0.0.1", "a user sees their own IP");
        assert!(l["quota"].as_i64().unwrap() > 0);
        assert!(l["metadata"]["group_ratio"].is_number(), "{l}");
    }
    let theirs = rows(&b.user, "/api/log/self?size=100").await;
    assert_eq!(theirs.len(), 3);
    assert!(theirs.iter().all(|l| l["user_id"] == b.user_id));
    // Administrators see everyone's, with the channel.
    let (admin, _) = app.admin("auditor").await;
    let all = rows(&admin, "/api/log?size=100").await;
    for id in ids(&mine).into_iter().chain(ids(&theirs)) {
        assert!(ids(&all).contains(&id));
    }
    let c = all.iter().find(|l| l["type"] == 2).unwrap();
    assert!(c["channel_id"].as_i64().unwrap() > 0);
    assert_eq!(c["channel_name"], "ch-sk-mock-ok");
    // Newest first.
    let keys: Vec<(i64, i64)> = all
        .iter()
        .map(|l| (l["created_at"].as_i64().unwrap(), l["id"].as_i64().unwrap()))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] > w[1]), "{keys:?}");

    // Roles.
    let anon = app.client();
    for path in [
        "/api/log/self",
        "/api/log/self/stat",
        "/api/log",
        "/api/log/stat",
        "/api/user/dashboard",
    ] {
        assert_eq!(anon.get(path).await.status, 401, "{path}");
    }
    assert_eq!(anon.delete("/api/log?target_timestamp=1").await.status, 401);
    a.user.get("/api/log").await.err(403, "forbidden");
    a.user.get("/api/log/stat").await.err(403, "forbidden");
    a.user
        .delete("/api/log?target_timestamp=1")
        .await
        .err(403, "forbidden");
    admin
        .delete("/api/log?target_timestamp=1")
        .await
        .err(403, "forbidden");
    // Administrators' filters are refused on the self routes; empty ones mean "none".
    let ch = c["channel_id"].as_i64().unwrap();
    for q in [
        format!("channel={ch}"),
        "username=x".into(),
        format!("user_id={}", b.user_id),
    ] {
        a.user
            .get(&format!("/api/log/self?{q}"))
            .await
            .err(403, "forbidden");
        a.user
            .get(&format!("/api/log/self/stat?{q}"))
            .await
            .err(403, "forbidden");
    }
    let r = rows(
        &a.user,
        "/api/log/self?channel=&username=&type=&start_timestamp=&model_name=&size=100",
    )
    .await;
    assert_eq!(r.len(), 8);
}

#[actix_web::test]
async fn every_filter_narrows_the_list() {
    let app = TestApp::new().await;
    let (a, b) = traffic(&app).await;
    let root = app.root();
    let count = |v: &Vec<Value>| v.len();
    let base = "/api/log/self?size=100";
    let q = |extra: &str| format!("{base}&{extra}");
    assert_eq!(count(&rows(&a.user, &q("type=2")).await), 6);
    assert_eq!(count(&rows(&a.user, &q("type=3")).await), 2);
    assert_eq!(count(&rows(&a.user, &q("type=1")).await), 0);
    assert_eq!(count(&rows(&a.user, &q("type=0")).await), 8);
    let m = rows(&a.user, &q("model_name=text-embedding-3-small")).await;
    assert_eq!(m.len(), 2);
    assert!(m
        .iter()
        .all(|l| l["model_name"] == "text-embedding-3-small"));
    let t = rows(&a.user, &q("token_name=second")).await;
    assert_eq!(t.len(), 1);
    assert_eq!(t[0]["token_name"], "second");
    let tid = t[0]["token_id"].as_i64().unwrap();
    assert_eq!(
        ids(&rows(&a.user, &q(&format!("token_id={tid}"))).await),
        ids(&t)
    );
    assert_eq!(count(&rows(&a.user, &q("token_name=relay")).await), 5);
    assert_eq!(count(&rows(&a.user, &q("group=default")).await), 6);
    assert_eq!(count(&rows(&a.user, &q("group=vip")).await), 0);
    assert_eq!(count(&rows(&a.user, &q("source_ip=127.0.0.1")).await), 6);
    assert_eq!(count(&rows(&a.user, &q("source_ip=10.1.1.1")).await), 0);
    // Time range, inclusive at both ends: move three of a's logs into the past.
    let all = rows(&a.user, base).await;
    let t0 = 1_600_000_000;
    {
        let mut c = app.conn();
        for (i, id) in ids(&all).into_iter().take(3).enumerate() {
            logs::set_created_at(&mut c, id, t0 + i as i64 * 100).unwrap();
        }
    }
    let range = |s: i64, e: i64| q(&format!("start_timestamp={s}&end_timestamp={e}"));
    assert_eq!(count(&rows(&a.user, &range(t0, t0 + 200)).await), 3);
    assert_eq!(count(&rows(&a.user, &range(t0, t0 + 199)).await), 2);
    assert_eq!(count(&rows(&a.user, &range(t0 + 100, t0 + 100)).await), 1);
    assert_eq!(
        count(&rows(&a.user, &q(&format!("start_timestamp={}", t0 + 1))).await),
        7
    );
    assert_eq!(
        count(&rows(&a.user, &q(&format!("end_timestamp={}", t0 + 1))).await),
        1
    );
    // Administrators: username, user id, channel.
    let admin_q = |extra: &str| format!("/api/log?size=100&{extra}");
    let by_name = rows(&root, &admin_q("username=")).await;
    assert!(by_name.len() >= 9);
    let bname = rows(&b.user, base).await[0]["username"]
        .as_str()
        .unwrap()
        .to_owned();
    let bl = rows(&root, &admin_q(&format!("username={bname}"))).await;
    assert_eq!(bl.len(), 3);
    assert_eq!(
        ids(&rows(&root, &admin_q(&format!("user_id={}", b.user_id))).await),
        ids(&bl)
    );
    let everyone = rows(&root, &admin_q("type=2")).await;
    assert_eq!(everyone.len(), 8);
    let ch = everyone[0]["channel_id"].as_i64().unwrap();
    let on_ch = rows(&root, &admin_q(&format!("channel={ch}"))).await;
    assert!(!on_ch.is_empty());
    assert!(on_ch.iter().all(|l| l["channel_id"] == ch));
    assert_eq!(
        on_ch.len(),
        everyone.iter().filter(|l| l["channel_id"] == ch).count()
    );
    // Filters combine.
    let combo = rows(
        &root,
        &admin_q(&format!(
            "user_id={}&type=2&model_name=gpt-4o-mini&token_name=relay",
            a.user_id
        )),
    )
    .await;
    assert_eq!(combo.len(), 3);
}

#[actix_web::test]
async fn pages_by_offset_and_by_before_id_list_the_same_rows() {
    let app = TestApp::new().await;
    let (u, uid) = app.user("pager").await;
    let (_, other) = app.user("other").await;
    {
        let mut c = app.conn();
        for i in 0..23 {
            let who = if i % 5 == 0 { other } else { uid };
            logs::record(&mut c, LogType::System, who, "x", 0, &format!("n{i}"), "{}").unwrap();
        }
        // Make creation time disagree with insertion order (as several nodes' flushes can).
        let mine = logs::recent_for_user(&mut c, uid, 100).unwrap();
        for (k, l) in mine.iter().enumerate() {
            logs::set_created_at(&mut c, l.id, 2_000_000 + ((k as i64 * 7) % 5)).unwrap();
        }
    }
    let first = u.get("/api/log/self?size=4").await;
    let d = first.ok();
    let total = d["total_count"].as_i64().unwrap();
    assert_eq!((d["page"].as_i64(), d["size"].as_i64()), (Some(1), Some(4)));
    let stored = logs::recent_for_user(&mut app.conn(), uid, 1000).unwrap();
    assert_eq!(total, stored.len() as i64);
    assert!(total >= 18);
    let mut by_offset = Vec::new();
    let mut page = 1;
    loop {
        let r = u.get(&format!("/api/log/self?size=4&page={page}")).await;
        let d = r.ok().clone();
        let got = ids(d["data"].as_array().unwrap());
        if got.is_empty() {
            break;
        }
        let more = (page * 4) < total;
        assert_eq!(d["next_before_id"].as_i64().is_some(), more, "{d}");
        by_offset.extend(got);
        page += 1;
    }
    assert_eq!(by_offset.len() as i64, total);
    let mut by_keyset = Vec::new();
    let mut path = "/api/log/self?size=4".to_owned();
    loop {
        let r = u.get(&path).await;
        let d = r.ok().clone();
        by_keyset.extend(ids(d["data"].as_array().unwrap()));
        match d["next_before_id"].as_i64() {
            Some(next) => path = format!("/api/log/self?size=4&before_id={next}"),
            None => break,
        }
        if path.contains("before_id") {
            // Keyset pages do not count.
            let peek = u.get(&path).await;
            assert!(peek.ok()["total_count"].is_null());
            assert!(peek.ok()["page"].is_null());
        }
    }
    assert_eq!(by_keyset, by_offset);
    // The same with the administrators' route.
    let root = app.root();
    let admin_offset = ids(&rows(&root, &format!("/api/log?size=100&user_id={uid}")).await);
    assert_eq!(admin_offset, by_offset);
    // Bad paging.
    u.get("/api/log/self?size=0").await.err(400, "invalid_size");
    u.get("/api/log/self?size=101")
        .await
        .err(400, "invalid_size");
    u.get("/api/log/self?page=0").await.err(400, "invalid_page");
    u.get("/api/log/self?size=abc")
        .await
        .err(400, "invalid_query");
    u.get("/api/log/self?before_id=x")
        .await
        .err(400, "invalid_query");
    u.get("/api/log/self?page=2&before_id=5")
        .await
        .err(400, "invalid_query");
    u.get("/api/log/self?page=2000&size=100")
        .await
        .err(400, "page_too_deep");
    assert_eq!(
        rows(&u, "/api/log/self?size=100&before_id=1").await.len(),
        0
    );
}

#[actix_web::test]
async fn stats_equal_the_sums_of_the_listed_logs() {
    stats_scenario(TestApp::new().await).await;
}

#[actix_web::test]
async fn stats_and_dashboard_on_postgres_and_mysql() {
    use switchboard_store::testing::TestDb;
    for db in [TestDb::postgres(), TestDb::mysql()].into_iter().flatten() {
        stats_scenario(TestApp::on(db, |_| {}).await).await;
    }
    for db in [TestDb::postgres(), TestDb::mysql()].into_iter().flatten() {
        dashboard_scenario(TestApp::on(db, |_| {}).await).await;
    }
}

async fn stats_scenario(app: TestApp) {
    let (a, b) = traffic(&app).await;
    let root = app.root();
    let cases: Vec<(&Client, &str, String)> = vec![
        (&a.user, "/api/log/self", String::new()),
        (&a.user, "/api/log/self", "model_name=gpt-4o-mini".into()),
        (&a.user, "/api/log/self", "token_name=second".into()),
        (&a.user, "/api/log/self", "type=2".into()),
        (&a.user, "/api/log/self", "type=3".into()),
        (&b.user, "/api/log/self", String::new()),
        (&root, "/api/log", String::new()),
        (&root, "/api/log", format!("user_id={}", a.user_id)),
        (
            &root,
            "/api/log",
            "model_name=text-embedding-3-small".into(),
        ),
    ];
    for (c, route, q) in cases {
        let listed = rows(c, &format!("{route}?size=100&{q}")).await;
        let consume: Vec<&Value> = listed.iter().filter(|l| l["type"] == 2).collect();
        let sum = |f: &str| consume.iter().map(|l| l[f].as_i64().unwrap()).sum::<i64>();
        let s = c.get(&format!("{route}/stat?{q}")).await;
        let s = s.ok();
        assert_eq!(s["quota"].as_i64().unwrap(), sum("quota"), "{route}?{q}");
        assert_eq!(s["prompt_tokens"].as_i64().unwrap(), sum("prompt_tokens"));
        assert_eq!(
            s["completion_tokens"].as_i64().unwrap(),
            sum("completion_tokens")
        );
        assert_eq!(s["request_count"].as_i64().unwrap(), consume.len() as i64);
        // Everything happened just now: the last minute holds all of it.
        assert_eq!(s["rpm"].as_i64().unwrap(), consume.len() as i64);
        assert_eq!(
            s["tpm"].as_i64().unwrap(),
            sum("prompt_tokens") + sum("completion_tokens")
        );
    }
    let s = a.user.get("/api/log/self/stat").await;
    assert_eq!(s.ok()["request_count"], 6);
    assert!(s.ok()["quota"].as_i64().unwrap() > 0);
    // rpm/tpm ignore the time filter; old logs leave the minute.
    let old = now() - 3_600;
    {
        let mut c = app.conn();
        for l in logs::recent_for_user(&mut c, b.user_id, 10).unwrap() {
            logs::set_created_at(&mut c, l.id, old).unwrap();
        }
    }
    let s = b
        .user
        .get(&format!("/api/log/self/stat?end_timestamp={}", old + 1))
        .await;
    assert_eq!(s.ok()["request_count"], 2);
    assert_eq!(
        (s.ok()["rpm"].as_i64(), s.ok()["tpm"].as_i64()),
        (Some(0), Some(0))
    );
    // Bad input.
    a.user
        .get("/api/log/self/stat?type=9")
        .await
        .err(400, "invalid_type");
    a.user
        .get("/api/log/self/stat?start_timestamp=10&end_timestamp=9")
        .await
        .err(400, "invalid_range");
}

#[actix_web::test]
async fn bad_filters_answer_400() {
    let app = TestApp::new().await;
    let (u, _) = app.user("bad").await;
    for (q, code) in [
        ("type=9", "invalid_type"),
        ("type=-1", "invalid_type"),
        ("type=abc", "invalid_query"),
        ("type=1.5", "invalid_query"),
        ("start_timestamp=yesterday", "invalid_query"),
        ("end_timestamp=1e9", "invalid_query"),
        ("start_timestamp=-5", "invalid_range"),
        ("start_timestamp=200&end_timestamp=100", "invalid_range"),
        ("token_id=x", "invalid_query"),
    ] {
        let m = u.get(&format!("/api/log/self?{q}")).await.err(400, code);
        assert!(!m.is_empty());
        app.root()
            .get(&format!("/api/log?{q}"))
            .await
            .err(400, code);
    }
    app.root()
        .get("/api/log?channel=abc")
        .await
        .err(400, "invalid_query");
    app.root()
        .get("/api/log?user_id=abc")
        .await
        .err(400, "invalid_query");
}

#[actix_web::test]
async fn root_deletes_logs_before_a_time() {
    let app = TestApp::new().await;
    let (u, uid) = app.user("old").await;
    let t = now();
    {
        let mut c = app.conn();
        for i in 0..7 {
            logs::record(
                &mut c,
                LogType::System,
                uid,
                "old",
                0,
                &format!("o{i}"),
                "{}",
            )
            .unwrap();
        }
        let rows = logs::recent_for_user(&mut c, uid, 100).unwrap();
        let old: Vec<_> = rows.iter().filter(|l| l.content.starts_with('o')).collect();
        for (k, l) in old.iter().enumerate() {
            let age = if k < 5 { 10 } else { 1 };
            logs::set_created_at(&mut c, l.id, t - age * 86_400).unwrap();
        }
    }
    let before = rows(&u, "/api/log/self?size=100").await.len();
    let root = app.root();
    let r = root
        .delete(&format!("/api/log?target_timestamp={}", t - 5 * 86_400))
        .await;
    assert_eq!(r.ok().as_i64(), Some(5));
    let after = rows(&u, "/api/log/self?size=100").await;
    assert_eq!(after.len(), before - 5);
    assert!(after
        .iter()
        .all(|l| l["created_at"].as_i64().unwrap() >= t - 5 * 86_400));
    // The deletion is on record.
    let audit = rows(&root, "/api/log?type=3&size=100").await;
    assert!(audit
        .iter()
        .any(|l| l["content"].as_str().unwrap().starts_with("deleted 5 logs")));
    // Nothing left to delete there.
    let r = root
        .delete(&format!("/api/log?target_timestamp={}", t - 5 * 86_400))
        .await;
    assert_eq!(r.ok().as_i64(), Some(0));
    // Bad input.
    root.delete("/api/log").await.err(400, "invalid_query");
    root.delete("/api/log?target_timestamp=")
        .await
        .err(400, "invalid_query");
    root.delete("/api/log?target_timestamp=soon")
        .await
        .err(400, "invalid_query");
    root.delete(&format!("/api/log?target_timestamp={}", now() + 3_600))
        .await
        .err(400, "invalid_timestamp");
    root.delete("/api/log?target_timestamp=-1")
        .await
        .err(400, "invalid_timestamp");
    assert_eq!(rows(&u, "/api/log/self?size=100").await.len(), before - 5);
}

#[actix_web::test]
async fn retention_follows_log_cleanup_days() {
    let app = TestApp::new().await;
    let (u, uid) = app.user("kept").await;
    let t = now();
    {
        let mut c = app.conn();
        for (i, age_days) in [40, 31, 29, 2].into_iter().enumerate() {
            logs::record(
                &mut c,
                LogType::System,
                uid,
                "kept",
                0,
                &format!("r{i}"),
                "{}",
            )
            .unwrap();
            let l = logs::recent_for_user(&mut c, uid, 1).unwrap();
            logs::set_created_at(&mut c, l[0].id, t - age_days * 86_400).unwrap();
        }
    }
    let count = || async { rows(&u, "/api/log/self?size=100").await.len() };
    let start = count().await;
    // 0 (the default) keeps everything.
    assert_eq!(
        switchboard_api::routes::logs::cleanup_logs(&app.state)
            .await
            .unwrap(),
        0
    );
    assert_eq!(count().await, start);
    app.root()
        .put(
            "/api/option",
            json!({"key": "LogCleanupDays", "value": "30"}),
        )
        .await
        .ok();
    assert_eq!(
        switchboard_api::routes::logs::cleanup_logs(&app.state)
            .await
            .unwrap(),
        2
    );
    let left = rows(&u, "/api/log/self?size=100").await;
    assert_eq!(left.len(), start - 2);
    let contents: Vec<&str> = left
        .iter()
        .map(|l| l["content"].as_str().unwrap())
        .collect();
    assert!(contents.contains(&"r2") && contents.contains(&"r3"));
    assert!(!contents.contains(&"r0") && !contents.contains(&"r1"));
}

#[actix_web::test]
async fn dashboard_series_equal_the_consume_logs() {
    dashboard_scenario(TestApp::new().await).await;
}

async fn dashboard_scenario(app: TestApp) {
    let (a, b) = traffic(&app).await;
    // Usage three days ago, written as the ledger writes it (log and rollup together).
    let three_days_ago = now() - 3 * 86_400;
    logs::settle_batch(
        &mut app.conn(),
        &[ConsumeRecord {
            request_id: Some("old-req".into()),
            created_at: three_days_ago,
            log_type: 2,
            user_id: a.user_id,
            username: "a".into(),
            token_id: a.token_id,
            token_name: "relay".into(),
            channel_id: 0,
            model_name: "gpt-4o-mini".into(),
            group_name: "default".into(),
            quota: 1_234,
            prompt_tokens: 100,
            completion_tokens: 50,
            use_time_ms: 10,
            first_response_ms: 5,
            is_stream: false,
            source_ip: "127.0.0.1".into(),
            content: String::new(),
            metadata: "{}".into(),
            cache_hit: false,
        }],
    )
    .unwrap();
    let consume = rows(&a.user, "/api/log/self?type=2&size=100").await;
    assert_eq!(consume.len(), 7);
    let sum = |ls: &[&Value], f: &str| ls.iter().map(|l| l[f].as_i64().unwrap()).sum::<i64>();
    let all: Vec<&Value> = consume.iter().collect();
    let d = a.user.get("/api/user/dashboard").await;
    let d = d.ok().clone();
    assert_eq!(d["days"], 7);
    let today = day_start(now());
    assert_eq!(d["end_day"], today);
    assert_eq!(d["start_day"], today - 6 * 86_400);
    for f in ["quota", "prompt_tokens", "completion_tokens"] {
        assert_eq!(d["totals"][f].as_i64().unwrap(), sum(&all, f), "{f}");
    }
    assert_eq!(d["totals"]["request_count"], 7);
    // Per day and model: each entry equals the consume logs of that day and model.
    let series = d["series"].as_array().unwrap();
    assert_eq!(series.len(), 3, "{series:?}");
    for s in series {
        let day = s["day"].as_i64().unwrap();
        let model = s["model_name"].as_str().unwrap();
        let these: Vec<&Value> = consume
            .iter()
            .filter(|l| {
                day_start(l["created_at"].as_i64().unwrap()) == day && l["model_name"] == model
            })
            .collect();
        assert!(!these.is_empty());
        assert_eq!(s["request_count"].as_i64().unwrap(), these.len() as i64);
        for f in ["quota", "prompt_tokens", "completion_tokens"] {
            assert_eq!(s[f].as_i64().unwrap(), sum(&these, f), "{day} {model} {f}");
        }
    }
    let by_day = d["by_day"].as_array().unwrap();
    assert_eq!(by_day.len(), 7);
    assert_eq!(by_day[6]["day"], today);
    assert_eq!(by_day[3]["day"], day_start(three_days_ago));
    assert_eq!(by_day[3]["quota"], 1_234);
    assert_eq!(by_day[0]["request_count"], 0);
    let by_model = d["by_model"].as_array().unwrap();
    assert_eq!(by_model.len(), 2);
    assert_eq!(by_model[0]["model_name"], "gpt-4o-mini");
    assert_eq!(by_model[0]["request_count"], 5);
    assert_eq!(by_model[1]["request_count"], 2);
    // A shorter window leaves the old day out.
    let d2 = a.user.get("/api/user/dashboard?days=2").await;
    assert_eq!(d2.ok()["totals"]["request_count"], 6);
    assert_eq!(d2.ok()["by_day"].as_array().unwrap().len(), 2);
    // Another user's dashboard is their own.
    let db = b.user.get("/api/user/dashboard?days=90").await;
    assert_eq!(db.ok()["totals"]["request_count"], 2);
    // Bad input.
    for q in ["days=0", "days=91", "days=abc", "days=-3"] {
        let code = if q == "days=abc" {
            "invalid_query"
        } else {
            "invalid_days"
        };
        a.user
            .get(&format!("/api/user/dashboard?{q}"))
            .await
            .err(400, code);
    }
}

/// A call that fails upstream after admission leaves an error log (type 5) with the status,
/// code and reason the client got and the channel tried; it charges nothing and counts in no
/// statistic. `ErrorLogEnabled=false` turns the log off.
#[actix_web::test]
async fn failed_calls_leave_an_error_log_that_charges_nothing() {
    let app = TestApp::new().await;
    let a = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let broken = app
        .channel(&a.upstream.base_url, "sk-mock-500", "gpt-4o", 0)
        .await;
    chat(&app, &a.key).await;
    app.flushed().await;
    async fn me(c: &Client) -> Value {
        c.get("/api/user/self").await.ok().clone()
    }
    let before = me(&a.user).await;
    let dash_before = a.user.get("/api/user/dashboard").await.ok()["totals"].clone();
    let stat_before = a.user.get("/api/log/self/stat").await.ok().clone();

    let r = app
        .relay(
            &a.key,
            "/v1/chat/completions",
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
    assert!(r.status >= 500, "{:?}", r.body);
    let told = r.body["error"]["message"].as_str().unwrap().to_owned();
    app.flushed().await;

    let errors = rows(&a.user, "/api/log/self?type=5").await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e["type"], LogType::Error.as_i32());
    assert_eq!(e["model_name"], "gpt-4o");
    assert_eq!(e["token_name"], "relay");
    assert_eq!(e["quota"], 0);
    assert_eq!(e["content"], told.as_str());
    assert_eq!(e["metadata"]["status"].as_i64(), Some(i64::from(r.status)));
    assert_eq!(e["metadata"]["code"], r.body["error"]["code"]);
    assert!(e["request_id"].as_str().is_some_and(|s| !s.is_empty()));
    // The user does not see the channel; an administrator does.
    assert!(e.get("channel_id").is_none());
    let admin = rows(
        &app.root(),
        &format!("/api/log?type=5&user_id={}", a.user_id),
    )
    .await;
    assert_eq!(admin[0]["channel_id"].as_i64(), Some(broken));

    // Nothing was charged or counted.
    let after = me(&a.user).await;
    for f in ["quota", "used_quota", "request_count"] {
        assert_eq!(after[f], before[f], "{f}");
    }
    assert_eq!(
        a.user.get("/api/user/dashboard").await.ok()["totals"],
        dash_before
    );
    let stat_after = a.user.get("/api/log/self/stat").await.ok().clone();
    for f in [
        "quota",
        "request_count",
        "prompt_tokens",
        "completion_tokens",
    ] {
        assert_eq!(stat_after[f], stat_before[f], "{f}");
    }
    // The list of every type shows it beside the consume log.
    let all = rows(&a.user, "/api/log/self").await;
    assert!(all.iter().any(|l| l["type"] == 5) && all.iter().any(|l| l["type"] == 2));

    // Off: no more error logs.
    app.root()
        .put(
            "/api/option",
            json!({"key": "ErrorLogEnabled", "value": "false"}),
        )
        .await
        .ok();
    let r = app
        .relay(
            &a.key,
            "/v1/chat/completions",
            json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "again"}]}),
        )
        .await;
    assert!(r.status >= 500);
    app.flushed().await;
    assert_eq!(rows(&a.user, "/api/log/self?type=5").await.len(), 1);
    a.user
        .get("/api/log/self?type=6")
        .await
        .err(400, "invalid_type");
}

/// Model and key names filter by prefix on the list and the stats; `%` and `_` are literal.
#[actix_web::test]
async fn model_and_key_filters_match_by_prefix() {
    let app = TestApp::new().await;
    let (a, _b) = traffic(&app).await;
    let chats = rows(
        &a.user,
        "/api/log/self?type=2&model_name=gpt-4o-mini&size=100",
    )
    .await;
    assert_eq!(chats.len(), 4);
    let by_prefix = rows(&a.user, "/api/log/self?type=2&model_name=gpt-4o&size=100").await;
    assert_eq!(ids(&by_prefix), ids(&chats));
    assert_eq!(
        rows(&a.user, "/api/log/self?model_name=gpt_4o&size=100")
            .await
            .len(),
        0
    );
    assert_eq!(
        rows(&a.user, "/api/log/self?model_name=%25&size=100")
            .await
            .len(),
        0
    );
    let s = a.user.get("/api/log/self/stat?model_name=gpt-4o").await;
    assert_eq!(s.ok()["request_count"], 4);
    let s = a.user.get("/api/log/self/stat?model_name=text-").await;
    assert_eq!(s.ok()["request_count"], 2);
    // Key names: "sec" finds the key "second" (one chat).
    let second = rows(&a.user, "/api/log/self?token_name=sec&size=100").await;
    assert_eq!(second.len(), 1);
    assert_eq!(second[0]["token_name"], "second");
}

/// Recharge, management and system logs say what happened in a machine-readable `event` (the
/// console words it in the reader's language); `content` keeps the English sentence for old
/// clients.
#[actix_web::test]
async fn manage_and_recharge_logs_name_their_event() {
    let app = TestApp::new().await;
    let (a, _b) = traffic(&app).await;
    let manage = rows(&a.user, "/api/log/self?type=3").await;
    assert_eq!(manage.len(), 2, "{manage:?}");
    let change = manage
        .iter()
        .find(|l| l["metadata"]["event"] == "quota_changed")
        .expect("the quota change");
    assert_eq!(change["metadata"]["operator"], "root");
    assert_eq!(change["metadata"]["remark"], "gift");
    assert_eq!(change["quota"], 1000);
    assert!(change["content"]
        .as_str()
        .is_some_and(|c| c.contains("gift")));
    assert!(manage
        .iter()
        .any(|l| l["metadata"]["event"] == "user_created"));

    // A redeemed code.
    let code = app
        .root()
        .post(
            "/api/redemption",
            json!({"name": "promo", "quota": 500, "count": 1}),
        )
        .await;
    let key = code.ok()["codes"][0].as_str().unwrap().to_owned();
    a.user
        .post("/api/user/topup", json!({"key": key}))
        .await
        .ok();
    let recharge = rows(&a.user, "/api/log/self?type=1").await;
    assert_eq!(recharge[0]["metadata"]["event"], "redeemed");
    assert_eq!(recharge[0]["metadata"]["name"], "promo");
    assert_eq!(recharge[0]["quota"], 500);
}
