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

/// A one-route HTTP server answering GET `/prices` with `status` and `body`; returns its URL.
async fn price_server(status: u16, body: String) -> String {
    use actix_web::{web, App, HttpResponse, HttpServer};
    let server = HttpServer::new(move || {
        let body = body.clone();
        App::new().route(
            "/prices",
            web::get().to(move || {
                let body = body.clone();
                async move {
                    HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                        .content_type("application/json")
                        .body(body)
                }
            }),
        )
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let addr = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    format!("http://{addr}/prices")
}

/// Lets price sync reach this machine (the outbound policy refuses loopback by default).
async fn allow_private(root: &crate::common::Client) {
    root.put(
        "/api/option",
        json!({"key": "AllowPrivateOutbound", "value": true}),
    )
    .await
    .ok();
}

fn row(model: &str, input: f64) -> serde_json::Value {
    json!({"model": model, "type": "tokens", "channel_type": 1, "input": input, "output": input * 2.0})
}

async fn local(app: &TestApp) -> Vec<serde_json::Value> {
    app.client()
        .get("/api/prices")
        .await
        .ok()
        .as_array()
        .unwrap()
        .clone()
}

fn input_of(list: &[serde_json::Value], model: &str) -> Option<f64> {
    list.iter()
        .find(|p| p["model"] == model)
        .map(|p| p["input"].as_f64().unwrap())
}

#[actix_web::test]
async fn sync_from_a_price_server_in_three_modes_never_touches_locked_prices() {
    let app = TestApp::new().await;
    let root = app.root();
    // The price server of this test listens on 127.0.0.1 (security.rs tests the refusal).
    allow_private(&root).await;
    root.post("/api/prices", row("sync-a", 1.0)).await.ok();
    let mut locked = row("sync-b", 1.0);
    locked["locked"] = json!(true);
    root.post("/api/prices", locked).await.ok();
    root.post("/api/prices", row("sync-c", 1.0)).await.ok();
    let before = local(&app).await.len();

    // The one-api family's envelope, rows with extra fields, one invalid row.
    let mut with_extra = row("sync-new", 5.0);
    with_extra["id"] = json!(77);
    let remote = json!({"success": true, "data": [
        row("sync-a", 2.0), row("sync-b", 9.0), with_extra,
        {"model": "broken", "type": "minutes", "channel_type": 1, "input": 1},
    ]});
    let url = price_server(200, remote.to_string()).await;

    // A dry run reports and changes nothing.
    let r = root
        .post(
            "/api/prices/sync",
            json!({"mode": "update", "url": url, "dry_run": true}),
        )
        .await;
    let d = r.ok();
    assert_eq!(
        (
            d["inserted"].as_u64(),
            d["updated"].as_u64(),
            d["locked"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(d["insert_models"], json!(["sync-new"]));
    assert_eq!(d["skipped"], 1);
    assert!(
        d["errors"][0].as_str().unwrap().starts_with("row 4:"),
        "{d:?}"
    );
    assert_eq!(local(&app).await.len(), before);

    // add: only the missing model arrives.
    let d = root
        .post("/api/prices/sync", json!({"mode": "add", "url": url}))
        .await
        .ok()
        .clone();
    assert_eq!(
        (
            d["inserted"].as_u64(),
            d["updated"].as_u64(),
            d["deleted"].as_u64()
        ),
        (Some(1), Some(0), Some(0))
    );
    let list = local(&app).await;
    assert_eq!(input_of(&list, "sync-a"), Some(1.0));
    assert_eq!(input_of(&list, "sync-new"), Some(5.0));
    assert_eq!(list.len(), before + 1);
    // The relay prices the new model at once.
    assert!(app.state.relay.prices().lookup("sync-new").is_some());

    // update: unlocked prices follow the list, the locked one stays.
    let d = root
        .post("/api/prices/sync", json!({"mode": "update", "url": url}))
        .await
        .ok()
        .clone();
    assert_eq!(
        (
            d["inserted"].as_u64(),
            d["updated"].as_u64(),
            d["unchanged"].as_u64()
        ),
        (Some(0), Some(1), Some(1))
    );
    let list = local(&app).await;
    assert_eq!(input_of(&list, "sync-a"), Some(2.0));
    assert_eq!(input_of(&list, "sync-b"), Some(1.0));
    assert_eq!(input_of(&list, "sync-c"), Some(1.0));

    // overwrite (with the list sent in the body): every unlocked price not listed goes.
    let d = root
        .post(
            "/api/prices/sync",
            json!({"mode": "overwrite", "prices": [row("sync-a", 3.0), row("sync-b", 9.0)]}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(d["updated"], 1);
    let list = local(&app).await;
    let models: Vec<&str> = list.iter().map(|p| p["model"].as_str().unwrap()).collect();
    assert_eq!(
        models,
        ["sync-a", "sync-b"],
        "only the list and the locked price remain"
    );
    assert_eq!(input_of(&list, "sync-b"), Some(1.0));
    assert_eq!(list[1]["locked"], true);
}

#[actix_web::test]
async fn sync_rejects_bad_input_and_failing_servers() {
    let app = TestApp::new().await;
    let root = app.root();
    let (user, _) = app.user("syncer").await;
    let body = json!({"mode": "add", "prices": [row("x-1", 1.0)]});
    user.post("/api/prices/sync", body.clone())
        .await
        .err(403, "forbidden");
    app.client()
        .post("/api/prices/sync", body)
        .await
        .err(401, "not_logged_in");

    root.post("/api/prices/sync", json!({"mode": "replace", "prices": []}))
        .await
        .err(400, "invalid");
    root.post("/api/prices/sync", json!({"mode": "add"}))
        .await
        .err(400, "missing_url");
    root.post(
        "/api/prices/sync",
        json!({"mode": "add", "prices": {"rows": []}}),
    )
    .await
    .err(400, "invalid_price_list");
    root.post(
        "/api/prices/sync",
        json!({"mode": "add", "prices": [{"model": "x"}]}),
    )
    .await
    .err(400, "empty_price_list");
    root.post(
        "/api/prices/sync",
        json!({"mode": "add", "url": "ftp://prices.example/list"}),
    )
    .await
    .err(502, "price_server_error");
    root.post(
        "/api/prices/sync",
        json!({"mode": "add", "url": "http://127.0.0.1:9/prices"}),
    )
    .await
    .err(502, "price_server_error");
    // The price servers below listen on 127.0.0.1 (security.rs tests the refusal).
    allow_private(&root).await;
    let failing = price_server(500, "{}".into()).await;
    let m = root
        .post("/api/prices/sync", json!({"mode": "add", "url": failing}))
        .await
        .err(502, "price_server_error");
    assert!(m.contains("HTTP 500"), "{m}");
    let not_json = price_server(200, "<html>".into()).await;
    root.post("/api/prices/sync", json!({"mode": "add", "url": not_json}))
        .await
        .err(502, "price_server_error");

    // The PriceSyncUrl setting is used when no URL is given.
    let url = price_server(200, json!([row("from-setting", 1.0)]).to_string()).await;
    root.put("/api/option", json!({"key": "PriceSyncUrl", "value": url}))
        .await
        .ok();
    let d = root
        .post("/api/prices/sync", json!({"mode": "add"}))
        .await
        .ok()
        .clone();
    assert_eq!(d["inserted"], 1);
}

/// Issue #18, part 4: the text and image extra ratios price an image model's tokens, each by
/// exactly its own factor, through the relay (the mock reports gpt-image-1's usage shape).
#[actix_web::test]
async fn text_and_image_ratios_price_an_image_models_tokens() {
    use switchboard_mock_upstream::{IMAGE_INPUT_TOKENS, IMAGE_OUTPUT_TOKENS, IMAGE_TEXT_TOKENS};
    let app = TestApp::new().await;
    let s = app
        .relay_setup(100_000_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-ok", "gpt-image-test", 0)
        .await;
    let set = |extra: serde_json::Value| {
        json!({"model": "gpt-image-test", "type": "tokens", "channel_type": 1,
            "input": 2.5, "output": 20, "extra_ratios": extra})
    };
    app.root().post("/api/prices", set(json!({}))).await.ok();
    // Every ratio is listed, the new ones at 1 by default.
    let listed = app.root().get("/api/prices").await;
    let row = listed
        .ok()
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["model"] == "gpt-image-test")
        .cloned()
        .unwrap();
    for k in [
        "input_text_tokens",
        "output_text_tokens",
        "input_image_tokens",
        "output_image_tokens",
    ] {
        assert_eq!(row["extra_ratios"][k], 1.0, "{k}");
    }
    let mut charges = Vec::new();
    for extra in [
        json!({}),
        json!({"input_text_tokens": 2}),
        json!({"input_image_tokens": 3}),
        json!({"output_image_tokens": 0.5}),
        json!({"input_text_tokens": 2, "input_image_tokens": 3, "output_image_tokens": 0.5}),
    ] {
        let r = app
            .root()
            .put(
                "/api/prices",
                json!({"model": "gpt-image-test", "price": set(extra.clone())}),
            )
            .await;
        r.ok();
        let r = app
            .relay(
                &s.key,
                "/v1/images/generations",
                json!({"model": "gpt-image-test", "prompt": "a cat", "n": 2}),
            )
            .await;
        assert_eq!(r.status, 200, "{extra}: {:?}", r.body);
        app.flushed().await;
        let logs = switchboard_store::logs::recent_for_user(&mut app.conn(), s.user_id, 1).unwrap();
        charges.push(logs[0].quota);
    }
    let prompt = IMAGE_TEXT_TOKENS + IMAGE_INPUT_TOKENS;
    let output = 2 * IMAGE_OUTPUT_TOKENS;
    // input 2.5, output 20: 50 * 2.5 + 2112 * 20 = 42365 (whole: no rounding to hide a factor).
    let base = prompt * 5 / 2 + output * 20;
    assert_eq!(charges[0], base);
    // text tokens x2: +40 at 2.5; image input x3: +20 at 2.5; image output x0.5: -1056 at 20.
    assert_eq!(charges[1] - base, IMAGE_TEXT_TOKENS * 5 / 2);
    assert_eq!(charges[2] - base, 2 * IMAGE_INPUT_TOKENS * 5 / 2);
    assert_eq!(charges[3] - base, -(output / 2) * 20);
    assert_eq!(
        charges[4] - base,
        IMAGE_TEXT_TOKENS * 5 / 2 + 2 * IMAGE_INPUT_TOKENS * 5 / 2 - (output / 2) * 20
    );
}
