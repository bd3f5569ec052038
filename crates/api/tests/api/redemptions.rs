use crate::common::{Client, TestApp};
use serde_json::{json, Value};
use switchboard_store::testing::TestDb;
use switchboard_store::{logs, redemptions, users};

const INVALID: &str = "the code is invalid or has already been used";

/// Creates `count` codes of `quota` as root; returns them.
async fn codes(app: &TestApp, name: &str, quota: i64, count: i64) -> Vec<String> {
    let r = app
        .root()
        .post(
            "/api/redemption",
            json!({"name": name, "quota": quota, "count": count}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.ok()["codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect()
}

fn id_of(app: &TestApp, code: &str) -> i64 {
    redemptions::find_by_code(&mut app.conn(), code).unwrap().id
}

fn recharge_logs(app: &TestApp, user_id: i64) -> Vec<logs::LogRow> {
    logs::recent_for_user(&mut app.conn(), user_id, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.log_type == 1)
        .collect()
}

#[actix_web::test]
async fn codes_are_created_in_batches_listed_and_edited() {
    let app = TestApp::new().await;
    let root = app.root();
    let batch = codes(&app, " spring ", 500, 3).await;
    assert_eq!(batch.len(), 3);
    for c in &batch {
        assert!(
            switchboard_domain::redemption::is_well_formed_code(c),
            "{c}"
        );
    }
    let mut unique = batch.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 3, "codes are unique");
    // count defaults to 1; quota 0 is allowed (spec: at least 0).
    let r = root
        .post("/api/redemption", json!({"name": "free", "quota": 0}))
        .await;
    assert_eq!(r.ok()["codes"].as_array().unwrap().len(), 1);
    let big = codes(&app, "bulk", 7, 100).await;
    assert_eq!(big.len(), 100, "100 is the largest batch");

    // Listing: paged, newest first by default.
    let r = root.get("/api/redemption?size=10").await;
    let d = r.ok();
    assert_eq!(
        (&d["total_count"], &d["page"], &d["size"]),
        (&json!(104), &json!(1), &json!(10))
    );
    assert_eq!(d["data"].as_array().unwrap().len(), 10);
    assert_eq!(d["data"][0]["code"], json!(big[99]));
    let last = root.get("/api/redemption?size=10&page=11").await;
    assert_eq!(last.ok()["data"].as_array().unwrap().len(), 4);
    assert_eq!(last.ok()["data"][3]["code"], json!(batch[0]));
    let first = root.get("/api/redemption?order=id&size=1").await;
    assert_eq!(first.ok()["data"][0]["name"], "spring", "trimmed");
    let by_quota = root.get("/api/redemption?order=-quota&size=3").await;
    let quotas: Vec<&Value> = by_quota.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["quota"])
        .collect();
    assert_eq!(quotas, vec![&json!(500), &json!(500), &json!(500)]);
    // Keyword: name (contains), the whole code (any case), or the id.
    let count = |r: crate::common::Resp| r.ok()["total_count"].as_i64().unwrap();
    assert_eq!(count(root.get("/api/redemption?keyword=SPRING").await), 3);
    assert_eq!(
        count(
            root.get(&format!("/api/redemption?keyword={}", batch[1]))
                .await
        ),
        1
    );
    let id = id_of(&app, &batch[1]);
    let r = root.get(&format!("/api/redemption?keyword={id}")).await;
    assert_eq!(r.ok()["total_count"], 1);
    assert_eq!(r.ok()["data"][0]["code"], json!(batch[1]));
    let upper = batch[1].to_uppercase();
    assert_eq!(
        count(root.get(&format!("/api/redemption?keyword={upper}")).await),
        1
    );
    let part = &batch[1][..10];
    assert_eq!(
        count(root.get(&format!("/api/redemption?keyword={part}")).await),
        0,
        "codes are matched whole"
    );
    assert_eq!(count(root.get("/api/redemption?keyword=nothing").await), 0);
    // Bad paging and ordering.
    root.get("/api/redemption?order=code")
        .await
        .err(400, "invalid_order");
    root.get("/api/redemption?size=0")
        .await
        .err(400, "invalid_size");
    root.get("/api/redemption?size=101")
        .await
        .err(400, "invalid_size");
    root.get("/api/redemption?page=0")
        .await
        .err(400, "invalid_page");
    root.get("/api/redemption?status=x")
        .await
        .err(400, "invalid_query");

    // One code.
    let r = root.get(&format!("/api/redemption/{id}")).await;
    let d = r.ok();
    assert_eq!(
        (
            &d["code"],
            &d["status"],
            &d["quota"],
            &d["redeemed_at"],
            &d["used_user_id"]
        ),
        (
            &json!(batch[1]),
            &json!(1),
            &json!(500),
            &json!(0),
            &json!(0)
        )
    );
    root.get("/api/redemption/999999")
        .await
        .err(404, "not_found");
    root.get("/api/redemption/abc")
        .await
        .err(400, "invalid_path");

    // Edits.
    let r = root
        .put(
            "/api/redemption",
            json!({"id": id, "name": "renamed", "quota": 900, "status": 2}),
        )
        .await;
    let d = r.ok();
    assert_eq!(
        (&d["name"], &d["quota"], &d["status"]),
        (&json!("renamed"), &json!(900), &json!(2))
    );
    assert_eq!(count(root.get("/api/redemption?status=2").await), 1);
    let r = root
        .put("/api/redemption", json!({"id": id, "status": 1}))
        .await;
    assert_eq!(r.ok()["status"], 1);
    root.put("/api/redemption", json!({"id": id, "status": 3}))
        .await
        .err(400, "invalid_status");
    root.put("/api/redemption", json!({"id": id, "status": 0}))
        .await
        .err(400, "invalid_status");
    root.put("/api/redemption", json!({"id": id, "quota": -1}))
        .await
        .err(400, "out_of_range");
    root.put("/api/redemption", json!({"id": id, "name": ""}))
        .await
        .err(400, "required");
    root.put("/api/redemption", json!({"id": id, "name": "n".repeat(65)}))
        .await
        .err(400, "too_long");
    root.put("/api/redemption", json!({"id": id, "code": "x"}))
        .await
        .err(400, "invalid_field");
    root.put("/api/redemption", json!({"name": "no id"}))
        .await
        .err(400, "required");
    root.put("/api/redemption", json!({"id": 999_999, "name": "x"}))
        .await
        .err(404, "not_found");
    let r = root.get(&format!("/api/redemption/{id}")).await;
    assert_eq!(
        (&r.ok()["name"], &r.ok()["quota"]),
        (&json!("renamed"), &json!(900)),
        "refused edits changed nothing"
    );

    // Deletion.
    let r = root.delete(&format!("/api/redemption/{id}")).await;
    r.ok();
    root.delete(&format!("/api/redemption/{id}"))
        .await
        .err(404, "not_found");
    assert_eq!(count(root.get("/api/redemption").await), 103);
}

#[actix_web::test]
async fn creation_input_is_validated() {
    let app = TestApp::new().await;
    let root = app.root();
    let post = |body: Value| {
        let root = &root;
        async move { root.post("/api/redemption", body).await }
    };
    post(json!({"quota": 1, "count": 1}))
        .await
        .err(400, "required");
    post(json!({"name": "  ", "quota": 1}))
        .await
        .err(400, "required");
    post(json!({"name": "n".repeat(65), "quota": 1}))
        .await
        .err(400, "too_long");
    post(json!({"name": "n", "count": 1}))
        .await
        .err(400, "required");
    post(json!({"name": "n", "quota": -1}))
        .await
        .err(400, "out_of_range");
    post(json!({"name": "n", "quota": "100"}))
        .await
        .err(400, "invalid_field");
    post(json!({"name": "n", "quota": 1.5}))
        .await
        .err(400, "invalid_field");
    post(json!({"name": "n", "quota": 1, "count": 0}))
        .await
        .err(400, "out_of_range");
    post(json!({"name": "n", "quota": 1, "count": -3}))
        .await
        .err(400, "out_of_range");
    post(json!({"name": "n", "quota": 1, "count": 101}))
        .await
        .err(400, "out_of_range");
    post(json!({"name": "n", "quota": 1, "status": 2}))
        .await
        .err(400, "invalid_field");
    post(json!({"name": 5, "quota": 1}))
        .await
        .err(400, "invalid_field");
    root.raw(reqwest::Method::POST, "/api/redemption", "{\"name\": ")
        .await
        .err(400, "invalid_json");
    root.raw(reqwest::Method::POST, "/api/redemption", "")
        .await
        .err(400, "invalid_body");
    root.raw(reqwest::Method::POST, "/api/redemption", "[1]")
        .await
        .err(400, "invalid_body");
    assert_eq!(
        root.get("/api/redemption").await.ok()["total_count"],
        0,
        "refused requests created nothing"
    );
}

#[actix_web::test]
async fn only_administrators_manage_codes() {
    let app = TestApp::new().await;
    let code = codes(&app, "c", 10, 1).await.remove(0);
    let id = id_of(&app, &code);
    let (user, _) = app.user("plain").await;
    let anon = app.client();
    for (c, status, err) in [(&user, 403, "forbidden"), (&anon, 401, "not_logged_in")] {
        c.get("/api/redemption").await.err(status, err);
        c.get(&format!("/api/redemption/{id}"))
            .await
            .err(status, err);
        c.post("/api/redemption", json!({"name": "x", "quota": 1}))
            .await
            .err(status, err);
        c.put("/api/redemption", json!({"id": id, "status": 2}))
            .await
            .err(status, err);
        c.delete(&format!("/api/redemption/{id}"))
            .await
            .err(status, err);
        c.delete("/api/redemption/invalid").await.err(status, err);
    }
    anon.post("/api/user/topup", json!({"key": code}))
        .await
        .err(401, "not_logged_in");
    // Untouched, and an administrator (not only root) manages codes.
    let (admin, _) = app.admin("helper").await;
    let r = admin.get(&format!("/api/redemption/{id}")).await;
    assert_eq!(
        (&r.ok()["status"], &r.ok()["quota"]),
        (&json!(1), &json!(10))
    );
    let r = admin
        .post("/api/redemption", json!({"name": "by admin", "quota": 1}))
        .await;
    assert_eq!(r.status, 201);
}

#[actix_web::test]
async fn redeeming_credits_once_and_writes_a_recharge_log() {
    let app = TestApp::new().await;
    let root = app.root();
    let batch = codes(&app, "welcome", 2_500_000, 4).await;
    let (u, uid) = app.user("redeemer").await;
    let before = users::find(&mut app.conn(), uid).unwrap();
    let r = u.post("/api/user/topup", json!({"key": batch[0]})).await;
    let d = r.ok();
    assert_eq!(d["quota"], 2_500_000);
    assert_eq!(d["balance"], before.quota + 2_500_000);
    assert_eq!(d["group"], "default");
    let after = users::find(&mut app.conn(), uid).unwrap();
    assert_eq!(after.quota, before.quota + 2_500_000);
    assert_eq!(after.total_topup, before.total_topup + 2_500_000);
    assert_eq!(u.get("/api/user/self").await.ok()["quota"], after.quota);
    let row = redemptions::find_by_code(&mut app.conn(), &batch[0]).unwrap();
    assert_eq!((row.status, row.used_user_id), (3, uid));
    assert!(row.redeemed_at > 0);
    let logs = recharge_logs(&app, uid);
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].quota, 2_500_000);
    assert!(logs[0].content.contains("welcome"), "{}", logs[0].content);
    assert!(logs[0].content.contains("$5.00"), "{}", logs[0].content);
    assert!(
        !logs[0].content.contains(&batch[0]),
        "the code itself is not logged"
    );

    // Used, disabled and unknown codes: one answer, no hint which.
    let m = u
        .post("/api/user/topup", json!({"key": batch[0]}))
        .await
        .err(400, "invalid_redemption_code");
    assert_eq!(m, INVALID);
    let (other, other_id) = app.user("latecomer").await;
    let m = other
        .post("/api/user/topup", json!({"key": batch[0]}))
        .await
        .err(400, "invalid_redemption_code");
    assert_eq!(m, INVALID);
    let disabled = id_of(&app, &batch[1]);
    root.put("/api/redemption", json!({"id": disabled, "status": 2}))
        .await
        .ok();
    let m = u
        .post("/api/user/topup", json!({"key": batch[1]}))
        .await
        .err(400, "invalid_redemption_code");
    assert_eq!(m, INVALID);
    for bogus in [
        "0".repeat(32),
        "short".into(),
        format!("{}!", &batch[2][..31]),
    ] {
        let m = u
            .post("/api/user/topup", json!({"key": bogus}))
            .await
            .err(400, "invalid_redemption_code");
        assert_eq!(m, INVALID);
    }
    u.post("/api/user/topup", json!({}))
        .await
        .err(400, "required");
    u.post("/api/user/topup", json!({"key": "  "}))
        .await
        .err(400, "required");
    u.post("/api/user/topup", json!({"key": 5}))
        .await
        .err(400, "invalid_field");
    assert_eq!(
        users::find(&mut app.conn(), uid).unwrap().quota,
        after.quota,
        "refusals credited nothing"
    );
    assert!(recharge_logs(&app, other_id).is_empty());

    // Entry is trimmed and case-insensitive.
    let r = other
        .post(
            "/api/user/topup",
            json!({"key": format!("  {}  ", batch[2].to_uppercase())}),
        )
        .await;
    assert_eq!(r.ok()["quota"], 2_500_000);

    // A redeemed code is history: no edits; the admin sees who used it.
    let used = id_of(&app, &batch[0]);
    for body in [
        json!({"id": used, "status": 1}),
        json!({"id": used, "quota": 1}),
        json!({"id": used, "name": "again"}),
        json!({"id": used}),
    ] {
        root.put("/api/redemption", body)
            .await
            .err(409, "redemption_used");
    }
    let r = root.get(&format!("/api/redemption/{used}")).await;
    assert_eq!(
        (&r.ok()["status"], &r.ok()["used_user_id"]),
        (&json!(3), &json!(uid))
    );
    assert_eq!(
        root.get("/api/redemption?status=3").await.ok()["total_count"],
        2
    );

    // Clearing invalid codes deletes the disabled and the used ones.
    let r = root.delete("/api/redemption/invalid").await;
    assert_eq!(r.ok()["deleted"], 3);
    let left = root.get("/api/redemption").await;
    assert_eq!(left.ok()["total_count"], 1);
    assert_eq!(left.ok()["data"][0]["code"], json!(batch[3]));
    assert_eq!(
        root.delete("/api/redemption/invalid").await.ok()["deleted"],
        0
    );
}

#[actix_web::test]
async fn a_zero_quota_code_is_redeemed_for_nothing() {
    let app = TestApp::new().await;
    let code = codes(&app, "zero", 0, 1).await.remove(0);
    let (u, uid) = app.user("zed").await;
    let before = users::find(&mut app.conn(), uid).unwrap().quota;
    let r = u.post("/api/user/topup", json!({"key": code})).await;
    assert_eq!(
        (&r.ok()["quota"], &r.ok()["balance"]),
        (&json!(0), &json!(before))
    );
    u.post("/api/user/topup", json!({"key": code}))
        .await
        .err(400, "invalid_redemption_code");
}

#[actix_web::test]
async fn redeeming_is_limited_per_ip() {
    let app = TestApp::with_config(|c| {
        c.critical_limit = switchboard_api::limiter::Limit {
            requests: 2,
            window: std::time::Duration::from_secs(600),
        };
    })
    .await;
    let code = codes(&app, "limited", 10, 1).await.remove(0);
    // Root uses its access token: no login spends the critical budget.
    let root = app.root();
    for _ in 0..2 {
        root.post("/api/user/topup", json!({"key": "0".repeat(32)}))
            .await
            .err(400, "invalid_redemption_code");
    }
    root.post("/api/user/topup", json!({"key": code}))
        .await
        .err(429, "rate_limited");
    assert_eq!(
        redemptions::find_by_code(&mut app.conn(), &code)
            .unwrap()
            .status,
        1,
        "a limited attempt does not redeem"
    );
}

/// 50 users with their own sessions redeem one code at the same moment: exactly one wins.
async fn one_code_many_redeemers(app: TestApp) {
    const N: usize = 50;
    const QUOTA: i64 = 777_777;
    let code = codes(&app, "race", QUOTA, 1).await.remove(0);
    let mut clients: Vec<(Client, i64, i64)> = Vec::with_capacity(N);
    for i in 0..N {
        let (c, id) = app.user(&format!("racer{i:02}")).await;
        let quota = users::find(&mut app.conn(), id).unwrap().quota;
        clients.push((c, id, quota));
    }
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(N));
    let mut tasks = Vec::with_capacity(N);
    for (c, id, _) in clients.iter().map(|(c, id, q)| (c.http.clone(), *id, *q)) {
        let url = app.url("/api/user/topup");
        let code = code.clone();
        let start = start.clone();
        tasks.push(actix_web::rt::spawn(async move {
            start.wait().await;
            let r = c
                .post(url)
                .json(&json!({"key": code}))
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap();
            (id, status, body)
        }));
    }
    let mut winners = Vec::new();
    for t in tasks {
        let (id, status, body) = t.await.unwrap();
        match status {
            200 => {
                assert_eq!(body["data"]["quota"], QUOTA);
                winners.push(id);
            }
            400 => {
                assert_eq!(body["code"], "invalid_redemption_code", "{body:?}");
                assert_eq!(body["message"], INVALID);
            }
            other => panic!("unexpected status {other}: {body:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one winner: {winners:?}");
    let winner = winners[0];
    let row = redemptions::find_by_code(&mut app.conn(), &code).unwrap();
    assert_eq!((row.status, row.used_user_id), (3, winner));
    let mut logs_total = 0;
    for (_, id, before) in &clients {
        let u = users::find(&mut app.conn(), *id).unwrap();
        let gained = if *id == winner { QUOTA } else { 0 };
        assert_eq!(u.quota, before + gained, "user {id}");
        assert_eq!(u.total_topup, gained, "user {id}");
        logs_total += recharge_logs(&app, *id).len();
    }
    assert_eq!(logs_total, 1, "one recharge log in total");
}

#[actix_web::test]
async fn one_code_is_redeemed_once_under_concurrency_on_sqlite() {
    one_code_many_redeemers(TestApp::new().await).await;
}

#[actix_web::test]
async fn one_code_is_redeemed_once_under_concurrency_on_postgres() {
    match TestDb::postgres() {
        Some(db) => one_code_many_redeemers(TestApp::on(db, |_| {}).await).await,
        None => println!("TEST_PG_DSN not set: PostgreSQL redemption race not run"),
    }
}

#[actix_web::test]
async fn one_code_is_redeemed_once_under_concurrency_on_mysql() {
    match TestDb::mysql() {
        Some(db) => one_code_many_redeemers(TestApp::on(db, |_| {}).await).await,
        None => println!("TEST_MYSQL_DSN not set: MySQL redemption race not run"),
    }
}
