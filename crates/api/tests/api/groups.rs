use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_store::{logs, users};

async fn create_group(app: &TestApp, body: Value) -> i64 {
    let r = app.root().post("/api/user_group", body).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.ok()["id"].as_i64().unwrap()
}

#[actix_web::test]
async fn groups_are_created_listed_edited_and_deleted() {
    let app = TestApp::new().await;
    let root = app.root();
    let r = root
        .post(
            "/api/user_group",
            json!({"symbol": " vip ", "name": " VIP ", "ratio": 0.8}),
        )
        .await;
    assert_eq!(r.status, 201);
    let d = r.ok().clone();
    assert_eq!(
        (
            &d["symbol"],
            &d["name"],
            &d["ratio"],
            &d["public"],
            &d["api_rate"],
            &d["promotion"],
            &d["min_topup"],
            &d["max_topup"],
            &d["enabled"]
        ),
        (
            &json!("vip"),
            &json!("VIP"),
            &json!(0.8),
            &json!(false),
            &json!(0),
            &json!(false),
            &json!(0),
            &json!(0),
            &json!(true)
        ),
        "trimmed, with defaults"
    );
    let vip = d["id"].as_i64().unwrap();
    let gold = create_group(
        &app,
        json!({"symbol": "gold", "name": "Gold", "ratio": 0.5, "public": true, "api_rate": 120,
               "promotion": true, "min_topup": 5_000_000, "max_topup": 0, "enabled": true}),
    )
    .await;
    // The relay's pricing snapshot follows at once.
    let groups = app.state.relay.groups();
    assert_eq!(groups["gold"].ratio, 0.5);
    assert_eq!(groups["gold"].api_rate, 120);

    // List: default (seeded) + 2, by id ascending unless ordered.
    let r = root.get("/api/user_group").await;
    let d = r.ok();
    assert_eq!(
        (&d["total_count"], &d["page"], &d["size"]),
        (&json!(3), &json!(1), &json!(10))
    );
    assert_eq!(d["data"][0]["symbol"], "default");
    let r = root.get("/api/user_group?order=-ratio&size=2").await;
    let symbols: Vec<&Value> = r.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["symbol"])
        .collect();
    assert_eq!(symbols, vec![&json!("default"), &json!("vip")]);
    let r = root.get("/api/user_group?order=ratio&size=2&page=2").await;
    assert_eq!(r.ok()["data"][0]["symbol"], "default");
    let total = |r: crate::common::Resp| r.ok()["total_count"].as_i64().unwrap();
    assert_eq!(total(root.get("/api/user_group?keyword=GOL").await), 1);
    assert_eq!(total(root.get("/api/user_group?keyword=vip").await), 1);
    assert_eq!(
        total(root.get(&format!("/api/user_group?keyword={vip}")).await),
        1
    );
    assert_eq!(total(root.get("/api/user_group?promotion=true").await), 1);
    root.get("/api/user_group?order=enabled")
        .await
        .err(400, "invalid_order");
    root.get("/api/user_group?size=500")
        .await
        .err(400, "invalid_size");
    root.get("/api/user_group?enabled=maybe")
        .await
        .err(400, "invalid_query");

    // One group.
    let r = root.get(&format!("/api/user_group/{gold}")).await;
    assert_eq!(r.ok()["min_topup"], 5_000_000);
    root.get("/api/user_group/99999")
        .await
        .err(404, "not_found");
    root.get("/api/user_group/x").await.err(400, "invalid_path");

    // Update: the given fields change; the symbol is immutable.
    let r = root
        .put(
            "/api/user_group",
            json!({"id": vip, "symbol": "vip", "name": "Very Important", "ratio": 0.7, "public": true, "api_rate": 30}),
        )
        .await;
    let d = r.ok();
    assert_eq!(
        (&d["name"], &d["ratio"], &d["public"], &d["api_rate"]),
        (
            &json!("Very Important"),
            &json!(0.7),
            &json!(true),
            &json!(30)
        )
    );
    assert_eq!(app.state.relay.groups()["vip"].ratio, 0.7);
    root.put("/api/user_group", json!({"id": vip, "symbol": "vip2"}))
        .await
        .err(400, "symbol_immutable");
    root.put("/api/user_group", json!({"id": 99999, "name": "x"}))
        .await
        .err(404, "not_found");
    root.put("/api/user_group", json!({"name": "x"}))
        .await
        .err(400, "required");
    // A public group shows in every user's group map (the existing route is unchanged).
    let (u, _) = app.user("mapper").await;
    let map = u.get("/api/user_group_map").await;
    assert_eq!(map.ok()["vip"]["ratio"], 0.7);

    // Enable / disable.
    let r = root
        .put(
            "/api/user_group/status",
            json!({"id": vip, "enabled": false}),
        )
        .await;
    assert_eq!(r.ok()["enabled"], false);
    assert!(!app.state.relay.groups().contains_key("vip"));
    assert!(u.get("/api/user_group_map").await.ok().get("vip").is_none());
    let r = root
        .put("/api/user_group", json!({"id": vip, "enabled": true}))
        .await;
    assert_eq!(r.ok()["enabled"], true);
    assert!(app.state.relay.groups().contains_key("vip"));
    root.put("/api/user_group/status", json!({"id": vip}))
        .await
        .err(400, "invalid_field");
    root.put(
        "/api/user_group/status",
        json!({"id": 99999, "enabled": true}),
    )
    .await
    .err(404, "not_found");

    // Delete.
    root.delete(&format!("/api/user_group/{vip}")).await.ok();
    root.get(&format!("/api/user_group/{vip}"))
        .await
        .err(404, "not_found");
    root.delete(&format!("/api/user_group/{vip}"))
        .await
        .err(404, "not_found");
    assert!(!app.state.relay.groups().contains_key("vip"));
    assert_eq!(total(root.get("/api/user_group").await), 2);
}

#[actix_web::test]
async fn group_input_is_validated() {
    let app = TestApp::new().await;
    let root = app.root();
    let post = |body: Value| {
        let root = &root;
        async move { root.post("/api/user_group", body).await }
    };
    post(json!({"name": "n", "ratio": 1}))
        .await
        .err(400, "required");
    post(json!({"symbol": "", "name": "n", "ratio": 1}))
        .await
        .err(400, "required");
    post(json!({"symbol": "1vip", "name": "n", "ratio": 1}))
        .await
        .err(400, "invalid");
    post(json!({"symbol": "v i p", "name": "n", "ratio": 1}))
        .await
        .err(400, "invalid");
    post(json!({"symbol": "组", "name": "n", "ratio": 1}))
        .await
        .err(400, "invalid");
    post(json!({"symbol": "v".repeat(65), "name": "n", "ratio": 1}))
        .await
        .err(400, "too_long");
    post(json!({"symbol": "vip", "ratio": 1}))
        .await
        .err(400, "required");
    post(json!({"symbol": "vip", "name": "n".repeat(65), "ratio": 1}))
        .await
        .err(400, "too_long");
    post(json!({"symbol": "vip", "name": "n"}))
        .await
        .err(400, "required");
    post(json!({"symbol": "vip", "name": "n", "ratio": -0.5}))
        .await
        .err(400, "invalid");
    post(json!({"symbol": "vip", "name": "n", "ratio": "1"}))
        .await
        .err(400, "invalid_field");
    post(json!({"symbol": "vip", "name": "n", "ratio": 1, "api_rate": -1}))
        .await
        .err(400, "out_of_range");
    post(json!({"symbol": "vip", "name": "n", "ratio": 1, "api_rate": 1.5}))
        .await
        .err(400, "invalid_field");
    post(json!({"symbol": "vip", "name": "n", "ratio": 1, "min_topup": -1}))
        .await
        .err(400, "too_small");
    post(json!({"symbol": "vip", "name": "n", "ratio": 1, "promotion": true, "min_topup": 100, "max_topup": 100}))
        .await
        .err(400, "invalid");
    post(json!({"symbol": "vip", "name": "n", "ratio": 1, "promotion": true, "min_topup": 100, "max_topup": 10}))
        .await
        .err(400, "invalid");
    post(json!({"symbol": "vip", "name": "n", "ratio": 1, "public": "yes"}))
        .await
        .err(400, "invalid_field");
    post(json!({"symbol": "vip", "name": "n", "ratio": 1, "id": 7}))
        .await
        .err(400, "invalid_field");
    post(json!({"symbol": "vip", "name": "n", "ratio": 1, "colour": "red"}))
        .await
        .err(400, "invalid_field");
    assert_eq!(
        root.get("/api/user_group").await.ok()["total_count"],
        1,
        "refused creations wrote nothing"
    );
    // Symbols are unique, ignoring case (as MySQL compares them).
    let id = create_group(
        &app,
        json!({"symbol": "vip", "name": "n", "ratio": 1, "promotion": true, "min_topup": 100, "max_topup": 0}),
    )
    .await;
    post(json!({"symbol": "vip", "name": "again", "ratio": 1}))
        .await
        .err(409, "symbol_taken");
    post(json!({"symbol": "VIP", "name": "again", "ratio": 1}))
        .await
        .err(409, "symbol_taken");
    post(json!({"symbol": "default", "name": "again", "ratio": 1}))
        .await
        .err(409, "symbol_taken");
    // Updates are checked against the merged result.
    root.put("/api/user_group", json!({"id": id, "max_topup": 50}))
        .await
        .err(400, "invalid");
    root.put("/api/user_group", json!({"id": id, "ratio": -1}))
        .await
        .err(400, "invalid");
    root.put("/api/user_group", json!({"id": id, "name": ""}))
        .await
        .err(400, "required");
    root.put(
        "/api/user_group",
        json!({"id": id, "promotion": false, "min_topup": 500}),
    )
    .await
    .ok();
    // With promotion off the range is kept but unused; turning it on re-checks it.
    root.put("/api/user_group", json!({"id": id, "max_topup": 200}))
        .await
        .ok();
    root.put("/api/user_group", json!({"id": id, "promotion": true}))
        .await
        .err(400, "invalid");
    let r = root.get(&format!("/api/user_group/{id}")).await;
    assert_eq!(
        (
            &r.ok()["promotion"],
            &r.ok()["min_topup"],
            &r.ok()["max_topup"]
        ),
        (&json!(false), &json!(500), &json!(200))
    );
}

#[actix_web::test]
async fn groups_in_use_and_default_cannot_be_removed() {
    let app = TestApp::new().await;
    let root = app.root();
    let default_id = root.get("/api/user_group?keyword=default").await.ok()["data"][0]["id"]
        .as_i64()
        .unwrap();
    root.delete(&format!("/api/user_group/{default_id}"))
        .await
        .err(409, "group_in_use");
    root.put(
        "/api/user_group/status",
        json!({"id": default_id, "enabled": false}),
    )
    .await
    .err(409, "group_in_use");
    root.put(
        "/api/user_group",
        json!({"id": default_id, "enabled": false}),
    )
    .await
    .err(409, "group_in_use");
    // Other settings of default can change.
    root.put("/api/user_group", json!({"id": default_id, "ratio": 1.5}))
        .await
        .ok();

    let team = create_group(
        &app,
        json!({"symbol": "team", "name": "Team", "ratio": 1, "public": true}),
    )
    .await;
    let (u, uid) = app.user("member").await;
    root.put("/api/user", json!({"id": uid, "group": "team"}))
        .await
        .ok();
    let m = root
        .delete(&format!("/api/user_group/{team}"))
        .await
        .err(409, "group_in_use");
    assert!(m.contains("1 user"), "{m}");
    root.put("/api/user", json!({"id": uid, "group": "default"}))
        .await
        .ok();
    // A key pinned to the group also keeps it.
    let r = u
        .post("/api/token", json!({"name": "k", "group": "team"}))
        .await;
    let key_id = r.ok()["id"].as_i64().unwrap();
    let m = root
        .delete(&format!("/api/user_group/{team}"))
        .await
        .err(409, "group_in_use");
    assert!(m.contains("1 API key"), "{m}");
    u.delete(&format!("/api/token/{key_id}")).await.ok();
    root.delete(&format!("/api/user_group/{team}")).await.ok();
}

#[actix_web::test]
async fn only_administrators_manage_groups() {
    let app = TestApp::new().await;
    let id = create_group(&app, json!({"symbol": "g", "name": "G", "ratio": 1})).await;
    let (user, _) = app.user("plain").await;
    let anon = app.client();
    for (c, status, err) in [(&user, 403, "forbidden"), (&anon, 401, "not_logged_in")] {
        c.get("/api/user_group").await.err(status, err);
        c.get(&format!("/api/user_group/{id}"))
            .await
            .err(status, err);
        c.post(
            "/api/user_group",
            json!({"symbol": "h", "name": "H", "ratio": 1}),
        )
        .await
        .err(status, err);
        c.put("/api/user_group", json!({"id": id, "ratio": 0}))
            .await
            .err(status, err);
        c.put(
            "/api/user_group/status",
            json!({"id": id, "enabled": false}),
        )
        .await
        .err(status, err);
        c.delete(&format!("/api/user_group/{id}"))
            .await
            .err(status, err);
    }
    let (admin, _) = app.admin("helper").await;
    let r = admin.get(&format!("/api/user_group/{id}")).await;
    assert_eq!(
        (&r.ok()["ratio"], &r.ok()["enabled"]),
        (&json!(1.0), &json!(true))
    );
}

#[actix_web::test]
async fn top_ups_promote_users_and_never_demote() {
    let app = TestApp::new().await;
    let root = app.root();
    // Ranges are in quota units: silver from $10, gold from $50 (500000 quota per USD).
    create_group(
        &app,
        json!({"symbol": "silver", "name": "Silver", "ratio": 0.9, "promotion": true, "min_topup": 5_000_000, "max_topup": 25_000_000}),
    )
    .await;
    create_group(
        &app,
        json!({"symbol": "gold", "name": "Gold", "ratio": 0.8, "promotion": true, "min_topup": 25_000_000, "max_topup": 0}),
    )
    .await;
    let platinum = create_group(
        &app,
        json!({"symbol": "platinum", "name": "Platinum", "ratio": 0.5, "promotion": true, "min_topup": 30_000_000, "enabled": false}),
    )
    .await;
    let code = |quota: i64| {
        let root = &root;
        async move {
            root.post(
                "/api/redemption",
                json!({"name": "promo", "quota": quota, "count": 1}),
            )
            .await
            .ok()["codes"][0]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let (u, uid) = app.user("climber").await;
    let topup = |key: String| {
        let u = &u;
        async move {
            u.post("/api/user/topup", json!({"key": key}))
                .await
                .ok()
                .clone()
        }
    };
    let group = || users::find(&mut app.conn(), uid).unwrap().group_name;

    let r = topup(code(4_999_999).await).await;
    assert_eq!(r["group"], "default", "below silver's minimum");
    assert_eq!(group(), "default");
    let r = topup(code(1).await).await;
    assert_eq!(r["group"], "silver", "exactly silver's minimum");
    assert_eq!(group(), "silver");
    assert_eq!(u.get("/api/user/self").await.ok()["group"], "silver");
    let r = topup(code(30_000_000).await).await;
    assert_eq!(
        r["group"], "gold",
        "35M: gold, the disabled platinum is skipped"
    );
    // Enabling platinum promotes at the next top-up, however small.
    root.put(
        "/api/user_group/status",
        json!({"id": platinum, "enabled": true}),
    )
    .await
    .ok();
    let r = topup(code(0).await).await;
    assert_eq!(r["group"], "platinum");

    // Never demoted: an administrator moves the user to silver by hand and it stays...
    root.put("/api/user", json!({"id": uid, "group": "silver"}))
        .await
        .ok();
    // ...until a top-up, which promotes again (silver's min is lower than platinum's).
    let r = topup(code(10).await).await;
    assert_eq!(r["group"], "platinum");
    // A user in a higher promotion group than their top-up earns stays there.
    let (v, vid) = app.user("vip-by-hand").await;
    root.put("/api/user", json!({"id": vid, "group": "gold"}))
        .await
        .ok();
    let key = code(5_000_000).await;
    let r = v.post("/api/user/topup", json!({"key": key})).await;
    assert_eq!(r.ok()["group"], "gold", "not demoted to silver");
    assert_eq!(
        users::find(&mut app.conn(), vid).unwrap().group_name,
        "gold"
    );

    // Every move left a system log.
    let moves = logs::recent_for_user(&mut app.conn(), uid, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.log_type == 4)
        .count();
    assert_eq!(moves, 4, "default→silver→gold→platinum, silver→platinum");
}
