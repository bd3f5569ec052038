use crate::common::TestApp;
use serde_json::json;
use switchboard_store::channels;

fn channel(name: &str) -> serde_json::Value {
    json!({"name": name, "type": 1, "key": "sk-upstream-secret", "base_url": "https://up.example.com/", "models": "gpt-4o, gpt-4o-mini", "group": "default"})
}

#[actix_web::test]
async fn only_admins_manage_channels_and_only_root_sees_keys() {
    let app = TestApp::new().await;
    let (u, _) = app.user("ursula").await;
    let (admin, _) = app.admin("adele").await;
    u.post("/api/channel", channel("c"))
        .await
        .err(403, "forbidden");
    u.get("/api/channel").await.err(403, "forbidden");
    let r = admin.post("/api/channel", channel("main")).await;
    assert_eq!(r.status, 201);
    let id = r.ok()["ids"][0].as_i64().unwrap();
    let as_admin = admin.get(&format!("/api/channel/{id}")).await;
    assert!(as_admin.ok().get("key").is_none());
    assert!(!as_admin.body.to_string().contains("sk-upstream-secret"));
    assert!(!admin
        .get("/api/channel")
        .await
        .body
        .to_string()
        .contains("sk-upstream-secret"));
    let as_root = app.root().get(&format!("/api/channel/{id}")).await;
    assert_eq!(as_root.ok()["key"], "sk-upstream-secret");
    assert_eq!(
        as_root.ok()["base_url"],
        "https://up.example.com",
        "trailing slash stripped"
    );
    assert_eq!(as_root.ok()["models"], "gpt-4o,gpt-4o-mini");
    assert_eq!(
        channels::abilities_of(&mut app.conn(), id).unwrap().len(),
        2
    );
}

#[actix_web::test]
async fn several_keys_make_several_channels() {
    let app = TestApp::new().await;
    let mut body = channel("multi");
    body["key"] = json!("sk-one\n sk-two \n\nsk-three");
    let r = app.root().post("/api/channel", body).await;
    assert_eq!(r.ok()["count"], 3);
    let list = app.root().get("/api/channel?keyword=multi").await;
    assert_eq!(list.ok()["total_count"], 3);
    let ids: Vec<i64> = r.ok()["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let keys: Vec<String> = ids.iter().map(|id| app.channel_key(*id)).collect();
    assert_eq!(keys, vec!["sk-one", "sk-two", "sk-three"]);
}

#[actix_web::test]
async fn channel_input_is_validated_and_nothing_half_written() {
    let app = TestApp::new().await;
    let root = app.root();
    let bad = |patch: serde_json::Value| {
        let mut b = channel("bad");
        for (k, v) in patch.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };
    root.post("/api/channel", bad(json!({"name": ""})))
        .await
        .err(400, "required");
    root.post("/api/channel", bad(json!({"key": ""})))
        .await
        .err(400, "required");
    root.post("/api/channel", bad(json!({"models": ""})))
        .await
        .err(400, "required");
    root.post("/api/channel", bad(json!({"group": ""})))
        .await
        .err(400, "required");
    root.post("/api/channel", bad(json!({"type": 9999})))
        .await
        .err(400, "invalid");
    root.post("/api/channel", bad(json!({"priority": -1})))
        .await
        .err(400, "too_small");
    root.post("/api/channel", bad(json!({"weight": 0})))
        .await
        .err(400, "too_small");
    root.post("/api/channel", bad(json!({"model_mapping": "{not json"})))
        .await
        .err(400, "invalid");
    root.post("/api/channel", bad(json!({"models": "*gpt"})))
        .await
        .err(400, "invalid");
    root.post("/api/channel", bad(json!({"base_url": "ftp://x"})))
        .await
        .err(400, "invalid");
    root.post("/api/channel", bad(json!({"type": 8, "base_url": ""})))
        .await
        .err(400, "required");
    root.post("/api/channel", bad(json!({"priority": "high"})))
        .await
        .err(400, "invalid_field");
    root.post("/api/channel", bad(json!({"status": 9})))
        .await
        .err(400, "invalid_status");
    // Status 3 (disabled automatically) is not set by hand.
    root.post("/api/channel", bad(json!({"status": 3})))
        .await
        .err(400, "invalid_status");
    assert_eq!(root.get("/api/channel").await.ok()["total_count"], 0);
    // JSON fields may be sent as objects.
    let r = root
        .post(
            "/api/channel",
            bad(json!({"name": "ok", "model_mapping": {"gpt-4o": "gpt-4o-2024-08-06"}})),
        )
        .await;
    let id = r.ok()["ids"][0].as_i64().unwrap();
    assert_eq!(
        channels::find(&mut app.conn(), id).unwrap().model_mapping,
        r#"{"gpt-4o":"gpt-4o-2024-08-06"}"#
    );
}

#[actix_web::test]
async fn update_status_filters_and_delete() {
    let app = TestApp::new().await;
    let root = app.root();
    let id = root.post("/api/channel", channel("one")).await.ok()["ids"][0]
        .as_i64()
        .unwrap();
    let mut two = channel("two");
    two["group"] = json!("default,vip");
    two["tag"] = json!("team-a");
    let id2 = root.post("/api/channel", two).await.ok()["ids"][0]
        .as_i64()
        .unwrap();
    // Update without a key keeps the old key.
    let r = root
        .put(
            "/api/channel",
            json!({"id": id, "models": "claude-3-haiku", "priority": 5}),
        )
        .await;
    assert_eq!(r.ok()["models"], "claude-3-haiku");
    assert_eq!(app.channel_key(id), "sk-upstream-secret");
    assert_eq!(
        channels::abilities_of(&mut app.conn(), id).unwrap(),
        vec![("default".into(), "claude-3-haiku".into(), true)]
    );
    root.put("/api/channel", json!({"id": id, "weight": 0}))
        .await
        .err(400, "too_small");
    root.put("/api/channel", json!({"id": 4242, "name": "x"}))
        .await
        .err(404, "not_found");
    root.put("/api/channel", json!({"id": id, "key": "a\nb"}))
        .await
        .err(400, "invalid_key");
    // Status.
    root.put("/api/channel/status", json!({"id": id, "status": 2}))
        .await
        .ok();
    assert!(!channels::abilities_of(&mut app.conn(), id).unwrap()[0].2);
    root.put("/api/channel/status", json!({"id": id, "status": 3}))
        .await
        .err(400, "invalid_status");
    // Filters.
    let ids = |r: crate::common::Resp| {
        r.body["data"]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(root.get("/api/channel?status=2").await), vec![id]);
    assert_eq!(ids(root.get("/api/channel?group=vip").await), vec![id2]);
    assert_eq!(ids(root.get("/api/channel?tag=team-a").await), vec![id2]);
    assert_eq!(
        ids(root.get("/api/channel?model=claude-3-haiku").await),
        vec![id]
    );
    assert_eq!(
        ids(root.get("/api/channel?type=1&order=priority").await),
        vec![id2, id]
    );
    root.get("/api/channel?order=key")
        .await
        .err(400, "invalid_order");
    // Delete.
    root.delete(&format!("/api/channel/{id}")).await.ok();
    root.delete(&format!("/api/channel/{id}"))
        .await
        .err(404, "not_found");
    assert!(channels::abilities_of(&mut app.conn(), id)
        .unwrap()
        .is_empty());
}
