use crate::common::TestApp;
use serde_json::json;
use switchboard_store::{logs, users};

#[actix_web::test]
async fn users_cannot_call_admin_routes() {
    let app = TestApp::new().await;
    let (u, id) = app.user("uma").await;
    u.get("/api/user").await.err(403, "forbidden");
    u.get(&format!("/api/user/{id}"))
        .await
        .err(403, "forbidden");
    u.post(
        "/api/user",
        json!({"username": "x1x", "password": "password-123"}),
    )
    .await
    .err(403, "forbidden");
    u.post("/api/user/manage", json!({"id": 1, "action": "disable"}))
        .await
        .err(403, "forbidden");
    u.post(&format!("/api/user/quota/{id}"), json!({"quota": 1000}))
        .await
        .err(403, "forbidden");
    u.delete("/api/user/1").await.err(403, "forbidden");
    app.client()
        .get("/api/user")
        .await
        .err(401, "not_logged_in");
    assert_eq!(users::find(&mut app.conn(), id).unwrap().quota, 0);
}

#[actix_web::test]
async fn list_pages_filters_and_orders() {
    let app = TestApp::new().await;
    let root = app.root();
    for i in 0..12 {
        root.post("/api/user", json!({"username": format!("member{i:02}"), "password": "password-123", "quota": i * 10}))
            .await
            .ok();
    }
    let r = root.get("/api/user?page=1&size=5").await;
    let d = r.ok();
    assert_eq!(d["total_count"], 13);
    assert_eq!(d["page"], 1);
    assert_eq!(d["size"], 5);
    assert_eq!(d["data"].as_array().unwrap().len(), 5);
    assert_eq!(
        d["data"][0]["username"], "member11",
        "newest first by default"
    );
    let r = root.get("/api/user?page=3&size=5").await;
    assert_eq!(r.ok()["data"].as_array().unwrap().len(), 3);
    let r = root
        .get("/api/user?keyword=MEMBER0&order=-quota&size=3")
        .await;
    let names: Vec<_> = r.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].clone())
        .collect();
    assert_eq!(
        names,
        vec![json!("member09"), json!("member08"), json!("member07")]
    );
    assert_eq!(r.ok()["total_count"], 10);
    // Bad paging and ordering are refused.
    root.get("/api/user?size=101")
        .await
        .err(400, "invalid_size");
    root.get("/api/user?size=0").await.err(400, "invalid_size");
    root.get("/api/user?page=0").await.err(400, "invalid_page");
    root.get("/api/user?page=abc")
        .await
        .err(400, "invalid_query");
    root.get("/api/user?order=password")
        .await
        .err(400, "invalid_order");
    root.get("/api/user/abc").await.err(400, "invalid_path");
    root.get("/api/user/99999").await.err(404, "not_found");
}

#[actix_web::test]
async fn create_validates_and_only_root_makes_admins() {
    let app = TestApp::new().await;
    let (admin, _) = app.admin("adam").await;
    admin
        .post(
            "/api/user",
            json!({"username": "nina", "password": "password-123", "quota": -1}),
        )
        .await
        .err(400, "invalid_quota");
    admin
        .post(
            "/api/user",
            json!({"username": "nina", "password": "password-123", "group": "ghost"}),
        )
        .await
        .err(400, "unknown_group");
    admin
        .post(
            "/api/user",
            json!({"username": "nina", "password": "password-123", "role": 10}),
        )
        .await
        .err(403, "forbidden");
    admin
        .post(
            "/api/user",
            json!({"username": "nina", "password": "password-123", "role": 100}),
        )
        .await
        .err(400, "invalid_role");
    admin
        .post("/api/user", json!({"username": "nina"}))
        .await
        .err(400, "invalid_field");
    admin
        .post(
            "/api/user",
            json!({"username": "nina", "password": "password-123", "quota": "lots"}),
        )
        .await
        .err(400, "invalid_field");
    let r = admin
        .post(
            "/api/user",
            json!({"username": "nina", "password": "password-123", "quota": 500}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.ok()["quota"], 500);
    admin
        .post(
            "/api/user",
            json!({"username": "nina", "password": "password-123"}),
        )
        .await
        .err(409, "username_taken");
    // The new user can sign in.
    app.client()
        .post(
            "/api/user/login",
            json!({"username": "nina", "password": "password-123"}),
        )
        .await
        .ok();
}

#[actix_web::test]
async fn admins_cannot_change_root_or_other_admins() {
    let app = TestApp::new().await;
    let (admin, admin_id) = app.admin("alan").await;
    let (_, other_admin) = app.admin("alma").await;
    let root_id = users::find_by_username(&mut app.conn(), "root").unwrap().id;
    for action in ["disable", "delete", "demote"] {
        admin
            .post("/api/user/manage", json!({"id": root_id, "action": action}))
            .await
            .err(403, "forbidden");
    }
    admin
        .put("/api/user", json!({"id": root_id, "display_name": "pwned"}))
        .await
        .err(403, "forbidden");
    admin
        .put(
            "/api/user",
            json!({"id": root_id, "password": "hijacked-123"}),
        )
        .await
        .err(403, "forbidden");
    admin
        .delete(&format!("/api/user/{root_id}"))
        .await
        .err(403, "forbidden");
    admin
        .post(
            "/api/user/manage",
            json!({"id": other_admin, "action": "disable"}),
        )
        .await
        .err(403, "forbidden");
    admin
        .post(
            &format!("/api/user/quota/{other_admin}"),
            json!({"quota": 5}),
        )
        .await
        .err(403, "forbidden");
    let root = users::find(&mut app.conn(), root_id).unwrap();
    assert_eq!((root.display_name.as_str(), root.status), ("Root User", 1));
    assert_eq!(users::find(&mut app.conn(), other_admin).unwrap().status, 1);
    // An admin cannot promote; root can promote and demote.
    let (_, uid) = app.user("olly").await;
    admin
        .post("/api/user/manage", json!({"id": uid, "action": "promote"}))
        .await
        .err(403, "forbidden");
    let r = app
        .root()
        .post(
            "/api/user/manage",
            json!({"username": "olly", "action": "promote"}),
        )
        .await;
    assert_eq!(r.ok()["role"], 10);
    app.root()
        .post("/api/user/manage", json!({"id": uid, "action": "promote"}))
        .await
        .err(400, "invalid_action");
    let r = app
        .root()
        .post("/api/user/manage", json!({"id": uid, "action": "demote"}))
        .await;
    assert_eq!(r.ok()["role"], 1);
    app.root()
        .post("/api/user/manage", json!({"id": uid, "action": "explode"}))
        .await
        .err(400, "invalid_field");
    app.root()
        .post("/api/user/manage", json!({"action": "enable"}))
        .await
        .err(400, "required");
    let _ = admin_id;
}

#[actix_web::test]
async fn admin_edits_users_and_manages_status() {
    let app = TestApp::new().await;
    let (admin, _) = app.admin("ava").await;
    let (u, uid) = app.user("pete").await;
    app.user("quinn").await;
    let r = admin
        .put(
            "/api/user",
            json!({"id": uid, "display_name": "Peter", "email": "p@x.io"}),
        )
        .await;
    assert_eq!(r.ok()["display_name"], "Peter");
    admin
        .put("/api/user", json!({"id": uid, "username": "quinn"}))
        .await
        .err(409, "username_taken");
    admin
        .put("/api/user", json!({"id": uid, "group": "nope"}))
        .await
        .err(400, "unknown_group");
    admin
        .put("/api/user", json!({"id": uid, "quota": 5}))
        .await
        .err(400, "invalid_field");
    admin
        .put("/api/user", json!({"id": 424242, "display_name": "x"}))
        .await
        .err(404, "not_found");
    // A password set by an admin ends the user's sessions.
    admin
        .put(
            "/api/user",
            json!({"id": uid, "password": "reset-by-admin"}),
        )
        .await
        .ok();
    u.get("/api/user/self").await.err(401, "session_expired");
    admin
        .post("/api/user/manage", json!({"id": uid, "action": "disable"}))
        .await
        .ok();
    assert_eq!(
        admin.get(&format!("/api/user/{uid}")).await.ok()["status"],
        2
    );
    admin
        .post("/api/user/manage", json!({"id": uid, "action": "enable"}))
        .await
        .ok();
    app.client()
        .post(
            "/api/user/login",
            json!({"username": "pete", "password": "reset-by-admin"}),
        )
        .await
        .ok();
    let r = admin.delete(&format!("/api/user/{uid}")).await;
    assert_eq!(r.status, 200);
    admin
        .get(&format!("/api/user/{uid}"))
        .await
        .err(404, "not_found");
    let manage_logs = logs::recent_for_user(&mut app.conn(), uid, 10).unwrap();
    assert!(manage_logs
        .iter()
        .any(|l| l.log_type == 3 && l.content.contains("deleted")));
}

#[actix_web::test]
async fn quota_changes_carry_a_remark_and_never_overdraw() {
    let app = TestApp::new().await;
    let (admin, _) = app.admin("abe").await;
    let (u, uid) = app.user("rita").await;
    let r = admin
        .post(
            &format!("/api/user/quota/{uid}"),
            json!({"quota": 500000, "remark": "welcome gift"}),
        )
        .await;
    assert_eq!(r.ok()["quota"], 500000);
    let r = admin
        .post(
            &format!("/api/user/quota/{uid}"),
            json!({"quota": -200000, "remark": "correction"}),
        )
        .await;
    assert_eq!(r.ok()["quota"], 300000);
    let m = admin
        .post(
            &format!("/api/user/quota/{uid}"),
            json!({"quota": -300001, "remark": "too much"}),
        )
        .await
        .err(400, "insufficient_balance");
    assert!(m.contains("300000"), "{m}");
    admin
        .post(&format!("/api/user/quota/{uid}"), json!({"quota": 0}))
        .await
        .err(400, "required");
    admin
        .post(&format!("/api/user/quota/{uid}"), json!({"quota": "1e9"}))
        .await
        .err(400, "invalid_field");
    admin
        .post(
            &format!("/api/user/quota/{uid}"),
            json!({"remark": "no amount"}),
        )
        .await
        .err(400, "invalid_field");
    admin
        .post("/api/user/quota/77777", json!({"quota": 5}))
        .await
        .err(404, "not_found");
    assert_eq!(u.get("/api/user/self").await.ok()["quota"], 300000);
    let l = logs::recent_for_user(&mut app.conn(), uid, 10).unwrap();
    let manage: Vec<_> = l.iter().filter(|l| l.log_type == 3).collect();
    assert_eq!(
        manage.len(),
        2,
        "one management log per successful change, none for refused ones"
    );
    assert!(manage.iter().any(|l| l.quota == 500000
        && l.content.contains("welcome gift")
        && l.content.contains("$1.00")));
    assert!(manage
        .iter()
        .any(|l| l.quota == -200000 && l.content.contains("correction")));
}
