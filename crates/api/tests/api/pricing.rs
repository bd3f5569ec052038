use crate::common::TestApp;
use serde_json::json;

fn price(model: &str) -> serde_json::Value {
    json!({"model": model, "type": "tokens", "channel_type": 1, "input": 1.5, "output": 3})
}

#[actix_web::test]
async fn built_in_prices_are_listed_publicly() {
    let app = TestApp::new().await;
    let r = app.client().get("/api/prices").await;
    let list = r.ok().as_array().unwrap().clone();
    let mini = list.iter().find(|p| p["model"] == "gpt-4o-mini").unwrap();
    assert_eq!(mini["type"], "tokens");
    assert_eq!(mini["input"], 0.075);
    assert_eq!(mini["locked"], false);
    assert!(list
        .iter()
        .any(|p| p["model"] == "dall-e-3" && p["type"] == "times"));
}

#[actix_web::test]
async fn admins_create_update_and_delete_prices_with_validation() {
    let app = TestApp::new().await;
    let (user, _) = app.user("pricey").await;
    user.post("/api/prices", price("my-model"))
        .await
        .err(403, "forbidden");
    let root = app.root();
    let r = root.post("/api/prices", price(" my-model ")).await;
    assert_eq!(r.status, 201);
    assert_eq!(r.ok()["model"], "my-model");
    root.post("/api/prices", price("my-model"))
        .await
        .err(409, "model_taken");
    let bad = |patch: serde_json::Value| {
        let mut p = price("x-model");
        for (k, v) in patch.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    };
    root.post("/api/prices", bad(json!({"model": ""})))
        .await
        .err(400, "required");
    root.post("/api/prices", bad(json!({"type": "monthly"})))
        .await
        .err(400, "invalid_type");
    root.post("/api/prices", bad(json!({"input": -1})))
        .await
        .err(400, "too_small");
    root.post("/api/prices", bad(json!({"model": "*x"})))
        .await
        .err(400, "invalid");
    root.post("/api/prices", bad(json!({"channel_type": 0})))
        .await
        .err(400, "required");
    root.post("/api/prices", bad(json!({"input": "cheap"})))
        .await
        .err(400, "invalid_field");
    root.post(
        "/api/prices",
        bad(json!({"extra_ratios": {"cached_tokens": -2}})),
    )
    .await
    .err(400, "invalid");
    let r = root
        .put("/api/prices", json!({"model": "my-model", "price": {"model": "my-model", "type": "times", "channel_type": 1, "input": 2, "locked": true}}))
        .await;
    assert_eq!(
        (
            r.ok()["type"].as_str(),
            r.ok()["output"].as_f64(),
            r.ok()["locked"].as_bool()
        ),
        (Some("times"), Some(0.0), Some(true))
    );
    root.put(
        "/api/prices",
        json!({"model": "ghost", "price": price("ghost")}),
    )
    .await
    .err(404, "not_found");
    let r = root
        .post(
            "/api/prices/delete",
            json!({"models": ["my-model", "ghost"]}),
        )
        .await;
    assert_eq!(r.ok()["deleted"], 1);
    root.post("/api/prices/delete", json!({"models": []}))
        .await
        .err(400, "required");
}

#[actix_web::test]
async fn batch_is_all_or_nothing() {
    let app = TestApp::new().await;
    let root = app.root();
    let mut broken = price("b-2");
    broken["input"] = json!(-5);
    let m = root
        .post(
            "/api/prices/batch",
            json!({"prices": [price("b-1"), broken]}),
        )
        .await
        .err(400, "too_small");
    assert!(m.contains("#2"), "{m}");
    root.post(
        "/api/prices/batch",
        json!({"prices": [price("b-1"), price("b-1")]}),
    )
    .await
    .err(400, "duplicate_model");
    let list = root.get("/api/prices").await;
    assert!(
        !list.body.to_string().contains("\"b-1\""),
        "nothing written by refused batches"
    );
    let r = root
        .post(
            "/api/prices/batch",
            json!({"prices": [price("b-1"), price("gpt-4o-mini")]}),
        )
        .await;
    assert_eq!(r.ok()["count"], 2);
    let list = root.get("/api/prices").await;
    let mini = list
        .ok()
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["model"] == "gpt-4o-mini")
        .cloned()
        .unwrap();
    assert_eq!(mini["input"], 1.5, "an existing price is replaced");
}

#[actix_web::test]
async fn a_new_price_is_used_by_the_relay_at_once() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-ok", "house-model", 0)
        .await;
    let chat = json!({"model": "house-model", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(
        app.relay(&s.key, "/v1/chat/completions", chat.clone())
            .await
            .status,
        400,
        "unpriced"
    );
    let w = app.root().get("/api/prices/warnings").await;
    assert!(w.ok()["unpriced_models"]
        .as_array()
        .unwrap()
        .contains(&json!("house-model")));
    app.root()
        .post(
            "/api/prices",
            json!({"model": "house-*", "type": "times", "channel_type": 1, "input": 0.5}),
        )
        .await
        .ok();
    assert_eq!(
        app.relay(&s.key, "/v1/chat/completions", chat).await.status,
        200
    );
    app.flushed().await;
    let logs = switchboard_store::logs::recent_for_user(&mut app.conn(), s.user_id, 10).unwrap();
    assert_eq!(logs[0].quota, 500, "times price: 1000 * 0.5 per call");
    // The user sees the model with its price.
    let r = s.user.get("/api/available_model").await;
    let house = r
        .ok()
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "house-model")
        .cloned()
        .unwrap();
    assert_eq!(house["price"]["model"], "house-*");
}

#[actix_web::test]
async fn model_owners_have_fixed_ids_from_1000() {
    let app = TestApp::new().await;
    let root = app.root();
    root.post("/api/model_ownedby", json!({"id": 999, "name": "Mine"}))
        .await
        .err(400, "invalid_id");
    root.post("/api/model_ownedby", json!({"id": 1000, "name": ""}))
        .await
        .err(400, "required");
    root.post(
        "/api/model_ownedby",
        json!({"id": 1000, "name": "Mine", "icon": "not a url"}),
    )
    .await
    .err(400, "invalid");
    assert_eq!(
        root.post("/api/model_ownedby", json!({"id": 1000, "name": "Mine"}))
            .await
            .status,
        201
    );
    root.post("/api/model_ownedby", json!({"id": 1000, "name": "Again"}))
        .await
        .err(409, "id_taken");
    root.put(
        "/api/model_ownedby",
        json!({"id": 1000, "name": "Mine 2", "icon": "https://x.io/i.png"}),
    )
    .await
    .ok();
    let list = app.client().get("/api/model_ownedby").await;
    assert!(list
        .ok()
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["id"] == 1000 && o["name"] == "Mine 2"));
    root.post(
        "/api/prices",
        json!({"model": "mine-1", "type": "tokens", "channel_type": 1000, "input": 1, "output": 1}),
    )
    .await
    .ok();
    root.delete("/api/model_ownedby/1000")
        .await
        .err(409, "owner_in_use");
    root.post("/api/prices/delete", json!({"models": ["mine-1"]}))
        .await
        .ok();
    root.delete("/api/model_ownedby/1000").await.ok();
    root.delete("/api/model_ownedby/1000")
        .await
        .err(404, "not_found");
    let (u, _) = app.user("owner-user").await;
    u.post("/api/model_ownedby", json!({"id": 1001, "name": "x"}))
        .await
        .err(403, "forbidden");
}
