use crate::common::{TestApp, ROOT_PASSWORD};
use serde_json::json;
use switchboard_store::{logs, sessions, users};

#[actix_web::test]
async fn register_then_login_then_logout() {
    let app = TestApp::new().await;
    let c = app.client();
    let r = c
        .post(
            "/api/user/register",
            json!({"username": "  alice ", "password": "password-123", "email": " a@x.io "}),
        )
        .await;
    let d = r.ok().clone();
    assert_eq!(r.status, 201);
    assert_eq!(d["username"], "alice", "strings are trimmed");
    assert_eq!(d["email"], "a@x.io");
    assert_eq!(d["role"], 1);
    assert_eq!(d["group"], "default");
    assert!(
        d.get("password").is_none(),
        "password hash must never be sent"
    );

    // Log in by e-mail as well as by username.
    let r = c
        .post(
            "/api/user/login",
            json!({"username": "a@x.io", "password": "password-123"}),
        )
        .await;
    assert_eq!(r.ok()["username"], "alice");
    let cookie = r
        .headers
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert!(cookie.starts_with("session="), "{cookie}");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    assert_eq!(c.get("/api/user/self").await.ok()["username"], "alice");

    // The stored password is a bcrypt hash.
    let row = users::find_by_username(&mut app.conn(), "alice").unwrap();
    assert!(row.password.starts_with("$2"), "{}", row.password);

    let r = c.post("/api/user/logout", json!({})).await;
    assert_eq!(r.status, 200);
    c.get("/api/user/self").await.err(401, "not_logged_in");
}

#[actix_web::test]
async fn logout_really_ends_the_session_on_the_server() {
    let app = TestApp::new().await;
    let (c, id) = app.user("bob").await;
    let before = app.conn();
    drop(before);
    // Replay the old cookie from a second client after logout: the server must refuse it.
    let cookie_value = {
        let jar_client = app.client();
        let r = jar_client
            .post(
                "/api/user/login",
                json!({"username": "bob", "password": "password-123"}),
            )
            .await;
        let set = r
            .headers
            .get("set-cookie")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        set.split(';')
            .next()
            .unwrap()
            .trim_start_matches("session=")
            .to_owned()
    };
    let replay = reqwest::Client::new();
    let get_self = || {
        replay
            .get(app.url("/api/user/self"))
            .header("Cookie", format!("session={cookie_value}"))
            .send()
    };
    assert_eq!(get_self().await.unwrap().status(), 200);
    let r = replay
        .post(app.url("/api/user/logout"))
        .header("Cookie", format!("session={cookie_value}"))
        .header("Content-Type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = get_self().await.unwrap();
    assert_eq!(r.status(), 401);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], "session_expired");
    // The other session of the same user is untouched.
    assert_eq!(c.get("/api/user/self").await.ok()["id"], id);
}

#[actix_web::test]
async fn expired_session_is_refused() {
    let app = TestApp::new().await;
    let c = app.client();
    let r = c
        .post(
            "/api/user/login",
            json!({"username": "root", "password": ROOT_PASSWORD}),
        )
        .await;
    let set = r
        .headers
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let value = set
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("session=")
        .to_owned();
    let hash = switchboard_api::auth::session_hash(&app.state.config.session_secret, &value);
    sessions::touch(&mut app.conn(), &hash, 1, 2).unwrap();
    c.get("/api/user/self").await.err(401, "session_expired");
}

#[actix_web::test]
async fn garbage_session_cookie_is_refused() {
    let app = TestApp::new().await;
    let r = reqwest::Client::new()
        .get(app.url("/api/user/self"))
        .header("Cookie", "session=not-a-real-session")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

#[actix_web::test]
async fn wrong_password_and_unknown_user_get_the_same_answer() {
    let app = TestApp::new().await;
    app.user("carol").await;
    let c = app.client();
    let a = c
        .post(
            "/api/user/login",
            json!({"username": "carol", "password": "wrong-password"}),
        )
        .await;
    let b = c
        .post(
            "/api/user/login",
            json!({"username": "nobody", "password": "wrong-password"}),
        )
        .await;
    let ma = a.err(401, "invalid_credentials");
    let mb = b.err(401, "invalid_credentials");
    assert_eq!(ma, mb);
    assert!(a.headers.get("set-cookie").is_none());
    c.get("/api/user/self").await.err(401, "not_logged_in");
}

#[actix_web::test]
async fn login_rejects_missing_and_malformed_input() {
    let app = TestApp::new().await;
    let c = app.client();
    c.post("/api/user/login", json!({"username": "root"}))
        .await
        .err(400, "invalid_field");
    c.post(
        "/api/user/login",
        json!({"username": "root", "password": ""}),
    )
    .await
    .err(400, "required");
    c.post("/api/user/login", json!({"username": 12, "password": "x"}))
        .await
        .err(400, "invalid_field");
    c.raw(reqwest::Method::POST, "/api/user/login", "{not json")
        .await
        .err(400, "invalid_json");
    c.raw(reqwest::Method::POST, "/api/user/login", "")
        .await
        .err(400, "invalid_body");
    c.raw(reqwest::Method::POST, "/api/user/login", "[1,2]")
        .await
        .err(400, "invalid_body");
}

#[actix_web::test]
async fn oversized_bodies_are_refused_before_parsing() {
    let app = TestApp::with_config(|c| c.max_body_bytes = 4096).await;
    let big = format!(
        "{{\"username\":\"{}\",\"password\":\"password-123\"}}",
        "a".repeat(10_000)
    );
    app.client()
        .raw(reqwest::Method::POST, "/api/user/register", big)
        .await
        .err(413, "body_too_large");
    assert!(users::find_by_username(&mut app.conn(), &"a".repeat(10_000)).is_err());
}

#[actix_web::test]
async fn registration_validates_and_refuses_duplicates() {
    let app = TestApp::new().await;
    let c = app.client();
    c.post("/api/user/register", json!({"password": "password-123"}))
        .await
        .err(400, "invalid_field");
    c.post(
        "/api/user/register",
        json!({"username": "ab", "password": "password-123"}),
    )
    .await
    .err(400, "too_short");
    c.post(
        "/api/user/register",
        json!({"username": "abc", "password": "short"}),
    )
    .await
    .err(400, "too_short");
    c.post(
        "/api/user/register",
        json!({"username": "abc", "password": "password-123", "email": "nope"}),
    )
    .await
    .err(400, "invalid");
    c.post(
        "/api/user/register",
        json!({"username": ["x"], "password": "password-123"}),
    )
    .await
    .err(400, "invalid_field");
    c.post(
        "/api/user/register",
        json!({"username": "dave", "password": "password-123", "email": "d@x.io"}),
    )
    .await
    .ok();
    let m = c
        .post(
            "/api/user/register",
            json!({"username": "dave", "password": "password-456"}),
        )
        .await
        .err(409, "username_taken");
    assert!(m.contains("username"));
    c.post(
        "/api/user/register",
        json!({"username": "dave2", "password": "password-456", "email": "d@x.io"}),
    )
    .await
    .err(409, "email_taken");
    assert_eq!(
        users::count(&mut app.conn()).unwrap(),
        2,
        "root and dave only"
    );
}

#[actix_web::test]
async fn registration_can_be_closed() {
    let app = TestApp::new().await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "RegisterEnabled", "value": false}),
        )
        .await
        .ok();
    app.client()
        .post(
            "/api/user/register",
            json!({"username": "erin", "password": "password-123"}),
        )
        .await
        .err(403, "registration_closed");
    assert!(users::find_by_username(&mut app.conn(), "erin").is_err());
}

#[actix_web::test]
async fn new_users_get_the_configured_quota_and_inviters_their_reward() {
    let app = TestApp::new().await;
    let root = app.root();
    root.put(
        "/api/option",
        json!({"key": "QuotaForNewUser", "value": 1000}),
    )
    .await
    .ok();
    root.put(
        "/api/option",
        json!({"key": "QuotaForInvitee", "value": 50}),
    )
    .await
    .ok();
    root.put(
        "/api/option",
        json!({"key": "QuotaForInviter", "value": 70}),
    )
    .await
    .ok();
    let (inviter, inviter_id) = app.user("ivan").await;
    let code = inviter.get("/api/user/self").await.ok()["aff_code"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = app
        .client()
        .post(
            "/api/user/register",
            json!({"username": "jane", "password": "password-123", "aff_code": code}),
        )
        .await;
    assert_eq!(r.ok()["quota"], 1050);
    assert_eq!(r.ok()["inviter_id"], inviter_id);
    let me = inviter.get("/api/user/self").await;
    assert_eq!(me.ok()["quota"], 1070);
    assert_eq!(me.ok()["aff_count"], 1);
}

#[actix_web::test]
async fn disabled_users_cannot_log_in_and_lose_their_sessions() {
    let app = TestApp::new().await;
    let (c, id) = app.user("frank").await;
    app.root()
        .post("/api/user/manage", json!({"id": id, "action": "disable"}))
        .await
        .ok();
    c.get("/api/user/self").await.err(401, "session_expired");
    app.client()
        .post(
            "/api/user/login",
            json!({"username": "frank", "password": "password-123"}),
        )
        .await
        .err(403, "user_disabled");
}

#[actix_web::test]
async fn update_self_changes_profile_and_guards_the_password() {
    let app = TestApp::new().await;
    let (c, id) = app.user("gail").await;
    let (other_session, _) = {
        let c2 = app.client();
        c2.post(
            "/api/user/login",
            json!({"username": "gail", "password": "password-123"}),
        )
        .await
        .ok();
        (c2, ())
    };
    app.user("harry").await;
    let r = c
        .put("/api/user/self", json!({"display_name": "Gail G."}))
        .await;
    assert_eq!(r.ok()["display_name"], "Gail G.");
    c.put("/api/user/self", json!({"username": "harry"}))
        .await
        .err(409, "username_taken");
    c.put("/api/user/self", json!({"password": "new-password-1"}))
        .await
        .err(400, "wrong_original_password");
    c.put(
        "/api/user/self",
        json!({"password": "new-password-1", "original_password": "nope"}),
    )
    .await
    .err(400, "wrong_original_password");
    c.put(
        "/api/user/self",
        json!({"password": "short", "original_password": "password-123"}),
    )
    .await
    .err(400, "too_short");
    c.put("/api/user/self", json!({"role": 100}))
        .await
        .err(400, "invalid_field");
    c.put(
        "/api/user/self",
        json!({"password": "new-password-1", "original_password": "password-123"}),
    )
    .await
    .ok();
    // This sign-in stays signed in, the other one is signed out, and the new password works.
    assert_eq!(c.get("/api/user/self").await.ok()["id"], id);
    other_session
        .get("/api/user/self")
        .await
        .err(401, "session_expired");
    app.client()
        .post(
            "/api/user/login",
            json!({"username": "gail", "password": "new-password-1"}),
        )
        .await
        .ok();
    assert_eq!(users::find(&mut app.conn(), id).unwrap().role, 1);
}

#[actix_web::test]
async fn access_tokens_authenticate_scripts_and_can_be_rotated() {
    let app = TestApp::new().await;
    let (c, id) = app.user("ida").await;
    let t1 = c
        .post("/api/user/token", json!({}))
        .await
        .ok()
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(t1.len(), 32);
    let script = |t: &str| {
        let t = t.to_owned();
        let url = app.url("/api/user/self");
        async move {
            reqwest::Client::new()
                .get(url)
                .header("Authorization", t)
                .send()
                .await
                .unwrap()
        }
    };
    let r = script(&t1).await;
    assert_eq!(r.status(), 200);
    let r = script(&format!("Bearer {t1}")).await;
    assert_eq!(r.status(), 200, "Bearer prefix accepted too");
    let t2 = c
        .post("/api/user/token", json!({}))
        .await
        .ok()
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(t1, t2);
    assert_eq!(script(&t1).await.status(), 401);
    assert_eq!(script(&t2).await.status(), 200);
    // Only the hash is stored.
    let row = users::find(&mut app.conn(), id).unwrap();
    assert_ne!(row.access_token_hash.as_deref(), Some(t2.as_str()));
}

#[actix_web::test]
async fn password_login_can_be_switched_off() {
    let app = TestApp::new().await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "PasswordLoginEnabled", "value": "false"}),
        )
        .await
        .ok();
    app.client()
        .post(
            "/api/user/login",
            json!({"username": "root", "password": ROOT_PASSWORD}),
        )
        .await
        .err(403, "password_login_disabled");
}

#[actix_web::test]
async fn login_and_registration_are_limited_per_ip() {
    let app = TestApp::with_config(|c| {
        c.critical_limit = switchboard_api::limiter::Limit {
            requests: 3,
            window: std::time::Duration::from_secs(600),
        };
    })
    .await;
    let c = app.client();
    for _ in 0..3 {
        c.post(
            "/api/user/login",
            json!({"username": "root", "password": "bad-password"}),
        )
        .await
        .err(401, "invalid_credentials");
    }
    c.post(
        "/api/user/login",
        json!({"username": "root", "password": ROOT_PASSWORD}),
    )
    .await
    .err(429, "rate_limited");
    c.post(
        "/api/user/register",
        json!({"username": "kim", "password": "password-123"}),
    )
    .await
    .err(429, "rate_limited");
    // Other endpoints are not affected by the tight limit.
    c.get("/api/status").await.ok();
}

#[actix_web::test]
async fn first_start_creates_root_once() {
    let app = TestApp::new().await;
    let root = users::find_by_username(&mut app.conn(), "root").unwrap();
    assert_eq!(root.role, 100);
    // A second bootstrap (a restart) creates nobody and keeps the password.
    let again = switchboard_api::bootstrap::run(&app.state, Some("other-password".into()), None)
        .await
        .unwrap();
    assert!(!again.root_created);
    assert_eq!(users::count(&mut app.conn()).unwrap(), 1);
    app.client()
        .post(
            "/api/user/login",
            json!({"username": "root", "password": ROOT_PASSWORD}),
        )
        .await
        .ok();
    assert!(logs::recent_for_user(&mut app.conn(), root.id, 5)
        .unwrap()
        .is_empty());
}

#[actix_web::test]
async fn generated_root_password_is_random_and_works() {
    let db = switchboard_store::testing::TestDb::sqlite();
    let state = switchboard_api::AppState::new(
        db.pool.clone(),
        db.backend,
        switchboard_api::ApiConfig::for_tests(),
    )
    .unwrap();
    let boot = switchboard_api::bootstrap::run(&state, None, None)
        .await
        .unwrap();
    let pw = boot.generated_root_password.unwrap();
    assert!(pw.len() >= 16);
    let row = users::find_by_username(&mut db.conn(), "root").unwrap();
    assert!(switchboard_api::auth::verify_password(&pw, &row.password));
}
