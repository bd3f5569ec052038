use crate::common::TestApp;
use serde_json::json;
use switchboard_store::tokens;

#[actix_web::test]
async fn create_returns_the_key_once_and_lists_mask_it() {
    let app = TestApp::new().await;
    let (u, uid) = app.user("tina").await;
    let r = u
        .post(
            "/api/token",
            json!({"name": " laptop ", "remain_quota": 1000, "expired_at": -1}),
        )
        .await;
    assert_eq!(r.status, 201);
    let d = r.ok().clone();
    let key = d["key"].as_str().unwrap().to_owned();
    assert!(switchboard_domain::token::is_well_formed_key(&key), "{key}");
    assert_eq!(d["name"], "laptop");
    assert_eq!(d["status"], 1);
    let id = d["id"].as_i64().unwrap();
    // Not stored in clear.
    let row = tokens::find(&mut app.conn(), id).unwrap();
    assert_eq!(row.user_id, uid);
    assert!(!row.key_hash.contains(&key[3..]) && !row.key_ciphertext.contains(&key[3..]));
    // Lists and details show a hint only.
    let list = u.get("/api/token").await;
    let shown = list.ok()["data"][0]["key"].as_str().unwrap().to_owned();
    assert!(
        shown.contains("**") && !shown.contains(&key[7..40]),
        "{shown}"
    );
    assert_eq!(list.ok()["total_count"], 1);
    assert!(!u
        .get(&format!("/api/token/{id}"))
        .await
        .body
        .to_string()
        .contains(&key));
    // The owner can fetch the full key again.
    assert_eq!(
        u.get(&format!("/api/token/{id}/key")).await.ok()["key"],
        key
    );
}

#[actix_web::test]
async fn users_cannot_see_or_change_other_users_keys() {
    let app = TestApp::new().await;
    let (a, _) = app.user("amy").await;
    let (b, _) = app.user("ben").await;
    let id = a.post("/api/token", json!({"name": "mine"})).await.ok()["id"]
        .as_i64()
        .unwrap();
    b.get(&format!("/api/token/{id}"))
        .await
        .err(404, "not_found");
    b.get(&format!("/api/token/{id}/key"))
        .await
        .err(404, "not_found");
    b.put("/api/token", json!({"id": id, "name": "stolen"}))
        .await
        .err(404, "not_found");
    b.delete(&format!("/api/token/{id}"))
        .await
        .err(404, "not_found");
    assert_eq!(b.get("/api/token").await.ok()["total_count"], 0);
    assert_eq!(tokens::find(&mut app.conn(), id).unwrap().name, "mine");
    // Admins search across users, masked.
    b.get("/api/token/search").await.err(403, "forbidden");
    let all = app.root().get("/api/token/search?keyword=min").await;
    assert_eq!(all.ok()["total_count"], 1);
    app.client()
        .get("/api/token")
        .await
        .err(401, "not_logged_in");
}

#[actix_web::test]
async fn token_fields_are_validated() {
    let app = TestApp::new().await;
    let (u, _) = app.user("val").await;
    u.post("/api/token", json!({})).await.err(400, "required");
    u.post("/api/token", json!({"name": ""}))
        .await
        .err(400, "required");
    u.post("/api/token", json!({"name": "x".repeat(65)}))
        .await
        .err(400, "too_long");
    u.post("/api/token", json!({"name": "n", "remain_quota": -1}))
        .await
        .err(400, "invalid_quota");
    u.post("/api/token", json!({"name": "n", "expired_at": 1000}))
        .await
        .err(400, "invalid_expiry");
    u.post("/api/token", json!({"name": "n", "heartbeat_timeout": 10}))
        .await
        .err(400, "out_of_range");
    u.post("/api/token", json!({"name": "n", "heartbeat_timeout": 91}))
        .await
        .err(400, "out_of_range");
    u.post("/api/token", json!({"name": "n", "subnet": "10.0.0.0/33"}))
        .await
        .err(400, "invalid");
    u.post("/api/token", json!({"name": "n", "models": "gpt-*-x"}))
        .await
        .err(400, "invalid");
    u.post("/api/token", json!({"name": "n", "group": "vip"}))
        .await
        .err(400, "unknown_group");
    u.post("/api/token", json!({"name": "n", "api_rate": -5}))
        .await
        .err(400, "out_of_range");
    u.post("/api/token", json!({"name": "n", "remain_quota": "lots"}))
        .await
        .err(400, "invalid_field");
    u.post("/api/token", json!({"name": "n", "status": 1}))
        .await
        .err(400, "invalid_field");
    u.post("/api/token", json!({"name": "n", "bogus": 1}))
        .await
        .err(400, "invalid_field");
    let r = u
        .post("/api/token", json!({"name": "ok", "models": " gpt-4o , gpt-4o-mini,gpt-4o ", "subnet": "10.0.0.0/8, 127.0.0.1", "heartbeat_enabled": true, "heartbeat_timeout": 45}))
        .await;
    assert_eq!(r.ok()["models"], "gpt-4o,gpt-4o-mini");
    assert_eq!(r.ok()["heartbeat_timeout"], 45);
    assert_eq!(
        u.get("/api/token").await.ok()["total_count"],
        1,
        "refused creations wrote nothing"
    );
}

#[actix_web::test]
async fn status_changes_follow_expiry_and_quota() {
    let app = TestApp::new().await;
    let (u, _) = app.user("stan").await;
    let id = u
        .post("/api/token", json!({"name": "k", "remain_quota": 0}))
        .await
        .ok()["id"]
        .as_i64()
        .unwrap();
    // No quota and not unlimited: shown as exhausted, and cannot be enabled as it is.
    assert_eq!(u.get(&format!("/api/token/{id}")).await.ok()["status"], 4);
    u.put("/api/token", json!({"id": id, "status": 1}))
        .await
        .err(400, "token_exhausted");
    let r = u
        .put(
            "/api/token",
            json!({"id": id, "status": 1, "unlimited_quota": true}),
        )
        .await;
    assert_eq!(r.ok()["status"], 1);
    assert_eq!(
        u.put("/api/token", json!({"id": id, "status": 2}))
            .await
            .ok()["status"],
        2
    );
    u.put("/api/token", json!({"id": id, "status": 7}))
        .await
        .err(400, "invalid_status");
    u.put("/api/token", json!({"name": "no id"}))
        .await
        .err(400, "required");
    u.put("/api/token", json!({"id": 999, "name": "x"}))
        .await
        .err(404, "not_found");
    // Expired keys show as expired.
    tokens::update(
        &mut app.conn(),
        id,
        &tokens::TokenChangeset {
            expired_at: Some(1),
            status: Some(1),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(u.get(&format!("/api/token/{id}")).await.ok()["status"], 3);
    u.put("/api/token", json!({"id": id, "status": 1}))
        .await
        .err(400, "token_expired");
    assert_eq!(u.delete(&format!("/api/token/{id}")).await.status, 200);
    u.get(&format!("/api/token/{id}"))
        .await
        .err(404, "not_found");
}

#[actix_web::test]
async fn list_pages_and_orders() {
    let app = TestApp::new().await;
    let (u, _) = app.user("paul").await;
    for i in 0..7 {
        u.post(
            "/api/token",
            json!({"name": format!("key{i}"), "remain_quota": i * 100}),
        )
        .await
        .ok();
    }
    let r = u.get("/api/token?size=3&page=3&order=remain_quota").await;
    assert_eq!(r.ok()["data"].as_array().unwrap().len(), 1);
    assert_eq!(r.ok()["data"][0]["name"], "key6");
    assert_eq!(
        u.get("/api/token?keyword=KEY3").await.ok()["total_count"],
        1
    );
    u.get("/api/token?order=key_hash")
        .await
        .err(400, "invalid_order");
    u.get("/api/token?size=1000").await.err(400, "invalid_size");
}

#[actix_web::test]
async fn playground_key_is_made_once_and_then_returned_again() {
    let app = TestApp::new().await;
    let (user, _) = app.user("player").await;
    let r = user.post("/api/token/playground", json!({})).await;
    assert_eq!(r.status, 201);
    let first = r.ok().clone();
    assert_eq!(first["created"], true);
    let key = first["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("sk-") && key.len() == 51, "{key}");

    let again = user.post("/api/token/playground", json!({})).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.ok()["key"], key.as_str());
    assert_eq!(again.ok()["id"], first["id"]);

    // It is an ordinary key of the user: listed, never expiring, drawing on the balance.
    let id = first["id"].as_i64().unwrap();
    let t = user.get(&format!("/api/token/{id}")).await;
    assert_eq!(t.ok()["name"], "playground");
    assert_eq!(t.ok()["expired_at"], -1);
    assert_eq!(t.ok()["unlimited_quota"], true);

    // Disabled, it is not handed out again: a new one is made.
    user.put("/api/token", json!({"id": id, "status": 2}))
        .await
        .ok();
    let r = user.post("/api/token/playground", json!({})).await;
    assert_eq!(r.status, 201);
    assert_ne!(r.ok()["key"], key.as_str());

    // Each user has their own.
    let (other, _) = app.user("player2").await;
    let theirs = other.post("/api/token/playground", json!({})).await;
    assert_ne!(theirs.ok()["key"], r.ok()["key"]);
    app.client()
        .post("/api/token/playground", json!({}))
        .await
        .err(401, "not_logged_in");
}
