//! Scripts written for one-api keep working (issue #17, part 5): every route answers in its
//! trailing-slash form, and one-api's field names are accepted and sent.

use crate::common::TestApp;
use serde_json::json;

#[actix_web::test]
async fn every_route_answers_in_its_trailing_slash_form() {
    let app = TestApp::new().await;
    let root = app.root();
    // Public, user, admin routes; GET, POST and PUT; a route with a path parameter.
    assert_eq!(app.client().get("/api/model_ownedby/").await.status, 200);
    assert_eq!(app.client().get("/api/status/").await.status, 200);
    let r = root
        .post(
            "/api/user/",
            json!({"username": "slash-user", "password": "password-123"}),
        )
        .await;
    let id = r.ok()["id"].as_i64().unwrap();
    let r = root.get(&format!("/api/user/{id}/")).await;
    assert_eq!(r.ok()["username"], "slash-user");
    let r = root
        .put("/api/user/", json!({"id": id, "display_name": "Slash"}))
        .await;
    assert_eq!(r.ok()["display_name"], "Slash");
    // Every documented route is registered both ways: the route table says so for each.
    for route in switchboard_api::routes::api_routes() {
        assert!(
            !route.path.ends_with('/'),
            "{} documented with a slash",
            route.path
        );
    }
    // Access is still enforced on the trailing-slash form.
    assert_eq!(app.client().get("/api/user/").await.status, 401);
    // An unknown path stays a JSON 404.
    let r = root.get("/api/no_such_route/").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["success"], false);
}

#[actix_web::test]
async fn one_api_field_names_are_accepted_and_sent() {
    let app = TestApp::new().await;
    let (user, _) = app.user("compat").await;
    let in_a_day = switchboard_store::now() + 86_400;
    // `expired_time` on create, as one-api's console and scripts send it.
    let r = user
        .post(
            "/api/token/",
            json!({"name": "script", "remain_quota": 1000, "expired_time": in_a_day}),
        )
        .await;
    let created = r.ok().clone();
    assert_eq!(created["expired_at"], in_a_day);
    assert_eq!(created["expired_time"], in_a_day);
    let id = created["id"].as_i64().unwrap();
    // ... and on update.
    let r = user
        .put("/api/token/", json!({"id": id, "expired_time": -1}))
        .await;
    assert_eq!(r.ok()["expired_time"], -1);
    let listed = user.get("/api/token/").await;
    let row = listed.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .cloned()
        .unwrap();
    assert_eq!(
        (row["expired_time"].clone(), row["expired_at"].clone()),
        (json!(-1), json!(-1))
    );
    assert_eq!(row["created_time"], row["created_at"]);
    // Both names at once is a conflict serde refuses, with a clear error.
    let r = user
        .put(
            "/api/token",
            json!({"id": id, "expired_time": -1, "expired_at": -1}),
        )
        .await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    // Redemption codes and channels send one-api's time names too.
    let r = app
        .root()
        .post(
            "/api/redemption/",
            json!({"name": "promo", "quota": 100, "count": 1}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let list = app.root().get("/api/redemption/").await;
    let code = list.ok()["data"][0].clone();
    assert_eq!(code["created_time"], code["created_at"]);
    assert_eq!(code["redeemed_time"], code["redeemed_at"]);
    let cid = app.channel("http://127.0.0.1:9", "sk-x", "m", 0).await;
    let ch = app.root().get(&format!("/api/channel/{cid}/")).await;
    assert_eq!(ch.ok()["created_time"], ch.ok()["created_at"]);
}
