//! The protections listed in docs/security.md, each tested the way an attacker would try it.

use crate::common::TestApp;
use serde_json::json;

/// A relay call from this test (peer 127.0.0.1) with extra headers; returns the status.
async fn relay_from(app: &TestApp, key: &str, headers: &[(&str, &str)]) -> u16 {
    let mut rb = reqwest::Client::new()
        .post(app.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(&json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}));
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    rb.send().await.unwrap().status().as_u16()
}

/// A key limited to 10.0.0.0/8 cannot be used from 127.0.0.1 by claiming `X-Forwarded-For:
/// 10.0.0.5`: the peer is not a trusted proxy, so its headers are not believed; and behind a
/// trusted proxy only the right-most untrusted hop counts, not a spoofed first entry.
#[actix_web::test]
async fn a_forwarded_address_cannot_be_forged() {
    // Trusted proxy elsewhere: 127.0.0.1 is a client, its header is its own word.
    let app = TestApp::with_config(|c| {
        c.trusted_proxies = switchboard_domain::net::trusted_proxies("203.0.113.1", false).unwrap()
    })
    .await;
    let s = app
        .relay_setup(
            10_000_000,
            json!({"subnet": "10.0.0.0/8", "unlimited_quota": true}),
        )
        .await;
    for h in [
        ("X-Forwarded-For", "10.0.0.5"),
        ("X-Real-IP", "10.0.0.5"),
        ("Forwarded", "for=10.0.0.5"),
    ] {
        assert_eq!(relay_from(&app, &s.key, &[h]).await, 403, "{h:?}");
    }

    // TRUST_PROXY_HEADERS=true (loopback and private ranges trusted): the proxy at 127.0.0.1
    // appended the real client last; what the client put first does not count.
    let app = TestApp::with_config(|c| {
        c.trusted_proxies = switchboard_domain::net::trusted_proxies("", true).unwrap()
    })
    .await;
    let s = app
        .relay_setup(
            10_000_000,
            json!({"subnet": "10.0.0.0/8", "unlimited_quota": true}),
        )
        .await;
    let spoofed = [("X-Forwarded-For", "10.0.0.5, 198.51.100.7")];
    assert_eq!(relay_from(&app, &s.key, &spoofed).await, 403);
    let spoofed = [
        ("X-Forwarded-For", "10.0.0.5"),
        ("X-Forwarded-For", "198.51.100.7"),
    ];
    assert_eq!(relay_from(&app, &s.key, &spoofed).await, 403);
    let garbage = [("X-Forwarded-For", "10.0.0.5, bogus")];
    assert_eq!(relay_from(&app, &s.key, &garbage).await, 403);
    // The proxy's own word about the client is believed.
    assert_eq!(
        relay_from(&app, &s.key, &[("X-Forwarded-For", "10.0.0.5")]).await,
        200
    );
    assert_eq!(
        relay_from(&app, &s.key, &[("X-Real-IP", "10.0.0.5")]).await,
        200
    );
}

/// Puts an e-mail code (as the mailer would) for `purpose` and `email`.
fn put_code(app: &TestApp, purpose: &str, email: &str, code: &str) {
    switchboard_store::verification::put(
        &mut app.conn(),
        purpose,
        email,
        &switchboard_api::auth::sha256_hex(code),
        switchboard_store::now(),
        900,
    )
    .unwrap();
}

/// Five wrong codes for an address void its code: the right one is refused afterwards, so a
/// six-digit code cannot be guessed. Four wrong tries still leave it usable.
#[actix_web::test]
async fn verification_codes_die_after_five_wrong_tries() {
    let app = TestApp::new().await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "EmailVerificationEnabled", "value": true}),
        )
        .await
        .ok();
    let c = app.client();
    let register = |name: &str, email: &str, code: &str| json!({"username": name, "password": "password-123", "email": email, "verification_code": code});
    put_code(&app, "register", "four@x.io", "123456");
    for wrong in ["000001", "000002", "000003", "000004"] {
        c.post("/api/user/register", register("four", "four@x.io", wrong))
            .await
            .err(400, "invalid_verification_code");
    }
    let r = c
        .post(
            "/api/user/register",
            register("four", "four@x.io", "123456"),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    put_code(&app, "register", "five@x.io", "654321");
    for wrong in ["000001", "000002", "000003", "000004", "000005"] {
        c.post("/api/user/register", register("five", "five@x.io", wrong))
            .await
            .err(400, "invalid_verification_code");
    }
    c.post(
        "/api/user/register",
        register("five", "five@x.io", "654321"),
    )
    .await
    .err(400, "invalid_verification_code");
    // A new code (a new e-mail) starts again from zero.
    put_code(&app, "register", "five@x.io", "111111");
    let r = c
        .post(
            "/api/user/register",
            register("five", "five@x.io", "111111"),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    // The same for reset links: five wrong tokens for the address void the real one.
    put_code(&app, "reset", "four@x.io", "the-real-token");
    for i in 0..5 {
        c.post(
            "/api/user/reset",
            json!({"email": "four@x.io", "token": format!("guess-{i}")}),
        )
        .await
        .err(400, "invalid_reset_link");
    }
    c.post(
        "/api/user/reset",
        json!({"email": "four@x.io", "token": "the-real-token"}),
    )
    .await
    .err(400, "invalid_reset_link");
}

/// A POST to `/api/token` as a signed-in browser session, with the given content type and extra
/// headers (the session cookie is in `user`'s jar).
async fn cookie_post(
    user: &crate::common::Client,
    path: &str,
    content_type: &str,
    headers: &[(&str, &str)],
) -> crate::common::Resp {
    let mut rb = user
        .http
        .post(format!("{}{path}", user.base))
        .header("Content-Type", content_type)
        .body(json!({"name": "csrf"}).to_string());
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let r = rb.send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.unwrap();
    crate::common::Resp {
        status,
        body: serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
        headers,
    }
}

/// A forged cross-site request riding on the session cookie (a form's text/plain POST, a
/// foreign Origin, `Sec-Fetch-Site: cross-site`) is refused with 403 `csrf_rejected` and changes
/// nothing; the console's own same-origin JSON call works; access-token callers are unaffected.
#[actix_web::test]
async fn cross_site_requests_with_the_session_cookie_are_refused() {
    let app = TestApp::new().await;
    let (user, _) = app.user("csrf-victim").await;
    let own = app.base.clone();
    let forged: [(&str, Vec<(&str, &str)>); 5] = [
        ("text/plain", vec![("Origin", "https://evil.example")]),
        ("text/plain", vec![]),
        (
            "application/x-www-form-urlencoded",
            vec![("Origin", own.as_str())],
        ),
        ("application/json", vec![("Origin", "https://evil.example")]),
        (
            "application/json",
            vec![("Sec-Fetch-Site", "cross-site"), ("Origin", own.as_str())],
        ),
    ];
    for (ct, headers) in &forged {
        cookie_post(&user, "/api/token", ct, headers)
            .await
            .err(403, "csrf_rejected");
    }
    // A bodiless DELETE without the JSON content type is refused too.
    let r = user
        .http
        .delete(format!("{}/api/token/1", user.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let listed = user.get("/api/token").await;
    assert_eq!(listed.ok()["total_count"], 0, "{:?}", listed.body);

    // The console: same origin, JSON.
    for headers in [
        vec![("Origin", own.as_str()), ("Sec-Fetch-Site", "same-origin")],
        vec![("Origin", own.as_str())],
        vec![],
    ] {
        let r = cookie_post(
            &user,
            "/api/token",
            "application/json; charset=utf-8",
            &headers,
        )
        .await;
        assert_eq!(r.status, 201, "{headers:?} {:?}", r.body);
    }

    // A script with an access token: no browser rules.
    let token = user
        .post("/api/user/token", json!({}))
        .await
        .ok()
        .as_str()
        .unwrap()
        .to_owned();
    let r = reqwest::Client::new()
        .post(app.url("/api/token"))
        .header("Authorization", &token)
        .header("Content-Type", "text/plain")
        .header("Origin", "https://evil.example")
        .body(json!({"name": "script"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
}

/// Logout and access-token generation change state: POST for the console; the GET forms remain
/// for access-token callers only, so a link or image on another site cannot trigger them.
#[actix_web::test]
async fn logout_and_token_generation_are_posts_for_browsers() {
    let app = TestApp::new().await;
    let (user, id) = app.user("poster").await;
    user.get("/api/user/token").await.err(403, "csrf_rejected");
    let token = user
        .post("/api/user/token", json!({}))
        .await
        .ok()
        .as_str()
        .unwrap()
        .to_owned();
    user.get("/api/user/logout").await.err(403, "csrf_rejected");
    assert_eq!(user.get("/api/user/self").await.ok()["id"], id);
    // The script's GET form still works with its token.
    let script = crate::common::Client {
        token: Some(token),
        ..app.client()
    };
    let again = script
        .get("/api/user/token")
        .await
        .ok()
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(again.len(), 32);
    // Sign-out by POST ends the session.
    assert_eq!(user.post("/api/user/logout", json!({})).await.status, 200);
    user.get("/api/user/self").await.err(401, "not_logged_in");
}

/// A huge `page` (or one-api's 0-based `p`) never overflows the row offset: 400 `invalid_page`
/// (or the log list's own depth limit), never a crash or a 500.
#[actix_web::test]
async fn huge_pages_do_not_overflow_the_offset() {
    let app = TestApp::new().await;
    let (user, _) = app.user("pager").await;
    let max = i64::MAX;
    for path in [
        format!("/api/token?page={max}&size=100"),
        format!("/api/token?page={max}"),
        format!("/api/user?page={max}&size=100"),
        format!("/api/user?p={max}&size=100"),
        format!("/api/redemption?page={max}&size=100"),
        format!("/api/channel?page={max}&size=100"),
        format!("/api/user_group?page={max}&size=100"),
    ] {
        app.root().get(&path).await.err(400, "invalid_page");
    }
    user.get(&format!("/api/log/self?page={max}&size=100"))
        .await
        .err(400, "invalid_page");
    let r = user.get(&format!("/api/log/self?p={max}&size=100")).await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    // The last page that exists still answers (empty).
    let last = max / 100;
    let r = app
        .root()
        .get(&format!("/api/token?page={last}&size=100"))
        .await;
    assert_eq!(r.ok()["data"], json!([]), "{:?}", r.body);
}

fn assert_security_headers(what: &str, h: &reqwest::header::HeaderMap) {
    let get = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).unwrap_or("");
    assert_eq!(get("x-content-type-options"), "nosniff", "{what}");
    assert_eq!(
        get("referrer-policy"),
        "strict-origin-when-cross-origin",
        "{what}"
    );
    assert_eq!(get("x-frame-options"), "DENY", "{what}");
    let csp = get("content-security-policy");
    for part in [
        "default-src 'self'",
        // The tasks screen plays Kling videos and Suno songs from the providers' HTTPS storage.
        "media-src 'self' https:;",
        "script-src 'self';",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(part), "{what}: {csp}");
    }
    assert!(!csp.contains("unsafe-eval"), "{what}: {csp}");
}

/// Every answer (API, errors, relay, the console and its client-side routes) carries the
/// security headers; the console may not be framed and runs only its own scripts.
#[actix_web::test]
async fn security_headers_are_on_every_answer() {
    let app = TestApp::new().await;
    for path in [
        "/api/status",
        "/api/no-such-route",
        "/api/user/self",
        "/v1/models",
    ] {
        let r = app.client().get(path).await;
        assert_security_headers(path, &r.headers);
    }
    // The browsable API page keeps its own policy (inline script) but gets the rest.
    let r = app.client().get("/api/docs").await;
    assert_eq!(r.headers["x-frame-options"], "DENY");
    assert!(r.headers["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("'unsafe-inline'"));

    // The console, served as the server serves it.
    let dir = std::env::temp_dir().join(format!("sb-console-{}", crate::common::unique()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.html"), "<!doctype html><title>c</title>").unwrap();
    std::fs::write(dir.join("theme.js"), "// theme").unwrap();
    let svc = actix_web::test::init_service(
        actix_web::App::new()
            .wrap(actix_web::middleware::from_fn(
                switchboard_api::headers::security_headers,
            ))
            .service(switchboard_api::spa::service(&dir)),
    )
    .await;
    for path in ["/", "/theme.js", "/console/tokens"] {
        let res = actix_web::test::call_service(
            &svc,
            actix_web::test::TestRequest::get().uri(path).to_request(),
        )
        .await;
        assert_eq!(res.status(), 200, "{path}");
        let mut h = reqwest::header::HeaderMap::new();
        for (k, v) in res.headers() {
            h.insert(
                reqwest::header::HeaderName::from_bytes(k.as_str().as_bytes()).unwrap(),
                reqwest::header::HeaderValue::from_bytes(v.as_bytes()).unwrap(),
            );
        }
        assert_security_headers(path, &h);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Common passwords are refused with `weak_password` wherever a password is set (registration,
/// own change, administrators); too short ones keep `too_short`.
#[actix_web::test]
async fn common_passwords_are_refused() {
    let app = TestApp::new().await;
    let c = app.client();
    for weak in ["12345678", "password", "qwerty123", "Password1"] {
        c.post(
            "/api/user/register",
            json!({"username": "weakling", "password": weak}),
        )
        .await
        .err(400, "weak_password");
    }
    c.post(
        "/api/user/register",
        json!({"username": "weakling", "password": "1234567"}),
    )
    .await
    .err(400, "too_short");
    let (user, id) = app.user("strong").await;
    user.put(
        "/api/user/self",
        json!({"password": "iloveyou", "original_password": "password-123"}),
    )
    .await
    .err(400, "weak_password");
    app.root()
        .put("/api/user", json!({"id": id, "password": "abcd1234"}))
        .await
        .err(400, "weak_password");
    app.root()
        .post(
            "/api/user",
            json!({"username": "weak2", "password": "letmein123"}),
        )
        .await
        .err(400, "weak_password");
}

/// Changing or resetting a password revokes the access token too (not only the sessions): a
/// token leaked with the old password dies with it.
#[actix_web::test]
async fn password_changes_revoke_the_access_token() {
    let app = TestApp::new().await;
    let script = |token: &str| crate::common::Client {
        token: Some(token.to_owned()),
        ..app.client()
    };
    let new_token = |c: &crate::common::Client| {
        let c = c.http.clone();
        let url = app.url("/api/user/token");
        async move {
            let r: serde_json::Value = c
                .post(url)
                .header("Content-Type", "application/json")
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            r["data"].as_str().unwrap().to_owned()
        }
    };

    // Own change.
    let (user, id) = app.user("changer").await;
    let token = new_token(&user).await;
    script(&token).get("/api/user/self").await.ok();
    user.put(
        "/api/user/self",
        json!({"password": "a-new-password-9", "original_password": "password-123"}),
    )
    .await
    .ok();
    script(&token)
        .get("/api/user/self")
        .await
        .err(401, "invalid_access_token");
    assert_eq!(user.get("/api/user/self").await.ok()["id"], id);

    // Set by an administrator.
    let token = new_token(&user).await;
    app.root()
        .put(
            "/api/user",
            json!({"id": id, "password": "admin-set-pass-7"}),
        )
        .await
        .ok();
    script(&token)
        .get("/api/user/self")
        .await
        .err(401, "invalid_access_token");

    // Reset by e-mail link.
    app.root()
        .post(
            "/api/user",
            json!({"username": "resetter", "password": "password-123", "email": "r@x.io"}),
        )
        .await
        .ok();
    let user = app.client();
    user.post(
        "/api/user/login",
        json!({"username": "resetter", "password": "password-123"}),
    )
    .await
    .ok();
    let token = new_token(&user).await;
    script(&token).get("/api/user/self").await.ok();
    put_code(&app, "reset", "r@x.io", "reset-token");
    app.client()
        .post(
            "/api/user/reset",
            json!({"email": "r@x.io", "token": "reset-token"}),
        )
        .await
        .ok();
    script(&token)
        .get("/api/user/self")
        .await
        .err(401, "invalid_access_token");
}

/// A key pinned to a private group is usable only while its owner belongs to that group: moving
/// the user out ends it at the next request (before, the group was checked only when the key was
/// made, so the user kept the group's cheaper price ratio). A public group stays usable.
#[actix_web::test]
async fn a_key_loses_a_private_group_its_owner_left() {
    let app = TestApp::new().await;
    let root = app.root();
    for (symbol, public) in [("vip", false), ("open", true)] {
        let r = root
            .post(
                "/api/user_group",
                json!({"symbol": symbol, "name": symbol, "ratio": 0.5, "public": public}),
            )
            .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
    }
    let s = app.relay_setup(10_000_000, json!({})).await;
    let r = root
        .post(
            "/api/channel",
            json!({"name": "vip-ch", "type": 1, "key": "sk-mock-ok", "base_url": s.upstream.base_url,
                   "models": "gpt-4o-mini", "group": "vip,open"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    root.put("/api/user", json!({"id": s.user_id, "group": "vip"}))
        .await
        .ok();
    let mut keys = vec![];
    for group in ["vip", "open"] {
        let r = s
            .user
            .post(
                "/api/token",
                json!({"name": group, "group": group, "unlimited_quota": true}),
            )
            .await;
        keys.push(r.ok()["key"].as_str().unwrap().to_owned());
    }
    for key in &keys {
        assert_eq!(relay_from(&app, key, &[]).await, 200);
    }

    root.put("/api/user", json!({"id": s.user_id, "group": "default"}))
        .await
        .ok();
    let body = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
    let r = app
        .relay(&keys[0], "/v1/chat/completions", body.clone())
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(r.body["error"]["code"], "group_not_available");
    assert_eq!(
        app.relay(&keys[1], "/v1/chat/completions", body)
            .await
            .status,
        200
    );
}

/// `Alice` and `alice` are one name: registration, creation by root and renaming refuse a name
/// that differs from a taken one only by case, and sign-in finds the account whatever the case.
/// Names that could pass for another (Cyrillic or full-width letters, invisible characters) are
/// refused.
#[actix_web::test]
async fn usernames_are_unique_whatever_the_case_and_look_alikes_are_refused() {
    let app = TestApp::new().await;
    let (alice, _) = app.user("alice").await;
    let visitor = app.client();
    let r = visitor
        .post(
            "/api/user/register",
            json!({"username": "ALICE", "password": "password-123"}),
        )
        .await;
    assert_eq!(
        r.err(409, "username_taken"),
        "this username is already taken"
    );
    let r = app
        .root()
        .post(
            "/api/user",
            json!({"username": "Alice", "password": "password-123"}),
        )
        .await;
    r.err(409, "username_taken");
    let (bob, bob_id) = app.user("bob").await;
    let r = bob
        .put("/api/user/self", json!({"username": "AlIcE"}))
        .await;
    r.err(409, "username_taken");
    let r = app
        .root()
        .put("/api/user", json!({"id": bob_id, "username": "aLICE"}))
        .await;
    r.err(409, "username_taken");
    // Changing one's own name's case is no clash with oneself.
    let r = alice
        .put("/api/user/self", json!({"username": "Alice"}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);

    let r = app
        .client()
        .post(
            "/api/user/login",
            json!({"username": "ALICE", "password": "password-123"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.ok()["username"], "Alice");

    for spoof in [
        "\u{430}lice",
        "\u{FF41}lice",
        "al\u{200B}ice",
        "ali\u{301}ce",
    ] {
        let r = visitor
            .post(
                "/api/user/register",
                json!({"username": spoof, "password": "password-123"}),
            )
            .await;
        assert_eq!(r.status, 400, "{spoof}: {:?}", r.body);
    }
    let r = visitor
        .post(
            "/api/user/register",
            json!({"username": "张三丰", "password": "password-123"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

/// Root's channel to `upstream` with a key only root may read; returns its id.
async fn secret_channel(app: &TestApp, upstream: &str, extra: serde_json::Value) -> i64 {
    let mut body = json!({"name": "root-only", "type": 1, "key": "sk-root-secret", "base_url": upstream, "models": "gpt-4o-mini", "group": "default", "test_model": "gpt-4o-mini"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    app.root().post("/api/channel", body).await.ok()["ids"][0]
        .as_i64()
        .unwrap()
}

/// Every way an administrator could make the server call a channel (test, model list, balance).
async fn use_channel(admin: &crate::common::Client, id: i64) {
    admin.get(&format!("/api/channel/test/{id}")).await;
    admin.get(&format!("/api/channel/fetch_models/{id}")).await;
    admin
        .get(&format!("/api/channel/update_balance/{id}"))
        .await;
}

fn keys_seen(upstream: &switchboard_mock_upstream::MockUpstream) -> Vec<String> {
    upstream.requests().into_iter().map(|r| r.key).collect()
}

fn row(app: &TestApp, id: i64) -> switchboard_store::channels::ChannelRow {
    switchboard_store::channels::find(&mut app.conn(), id).unwrap()
}

/// An administrator may edit channels but never read their keys; so they may not move a stored
/// key to another destination (base URL, type, proxy, custom headers, destination config)
/// without bringing a new key: 403 `destination_needs_root`, the row unchanged, and the test,
/// model list and balance calls still go to the old upstream. With a new key the admin's own key
/// goes to the admin's server; root may move a key.
#[actix_web::test]
async fn admins_cannot_send_a_stored_key_to_a_new_destination() {
    use switchboard_mock_upstream::MockUpstream;
    let app = TestApp::new().await;
    let good = MockUpstream::start();
    let evil = MockUpstream::start();
    let id = secret_channel(&app, &good.base_url, json!({})).await;
    let (admin, _) = app.admin("mallory").await;
    // Local mocks: allow private destinations so that only the key rule is exercised here.
    app.root()
        .put(
            "/api/option",
            json!({"key": "AllowPrivateOutbound", "value": true}),
        )
        .await
        .ok();

    let m = admin
        .put("/api/channel", json!({"id": id, "base_url": evil.base_url}))
        .await
        .err(403, "destination_needs_root");
    assert!(m.contains("base_url"), "{m}");
    for patch in [
        json!({"type": 8}),
        json!({"type": 39, "base_url": ""}),
        json!({"proxy": format!("{}", evil.base_url)}),
        json!({"custom_headers": {"Host": "evil.example"}}),
        json!({"config": {"region": "elsewhere"}}),
        json!({"base_url": evil.base_url, "key": "   "}),
    ] {
        let mut body = patch.clone();
        body["id"] = json!(id);
        admin
            .put("/api/channel", body)
            .await
            .err(403, "destination_needs_root");
    }
    let r = row(&app, id);
    assert_eq!(
        (
            r.base_url.as_str(),
            app.channel_key(id).as_str(),
            r.channel_type
        ),
        (good.base_url.as_str(), "sk-root-secret", 1)
    );
    use_channel(&admin, id).await;
    assert!(evil.requests().is_empty(), "{:?}", keys_seen(&evil));
    assert!(keys_seen(&good).iter().all(|k| k == "sk-root-secret"));
    assert!(!good.requests().is_empty());

    // The console sends the whole form: an unchanged destination (written differently) is not
    // a change; Azure's API version is not a destination either.
    let d = admin
        .put(
            "/api/channel",
            json!({"id": id, "name": "renamed", "type": 1, "base_url": format!("{}/", good.base_url), "custom_headers": "{}", "proxy": "", "config": {"api_version": "2024-10-21"}, "models": "gpt-4o-mini,gpt-4o", "priority": 3}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(d["name"], "renamed");
    assert!(d.get("key").is_none());

    // With a new key the admin sends their own key to their own server.
    admin
        .put(
            "/api/channel",
            json!({"id": id, "base_url": evil.base_url, "key": "sk-admin-own"}),
        )
        .await
        .ok();
    assert_eq!(app.channel_key(id), "sk-admin-own");
    use_channel(&admin, id).await;
    assert!(!evil.requests().is_empty());
    assert!(keys_seen(&evil).iter().all(|k| k == "sk-admin-own"));

    // Root may move a stored key.
    let id2 = secret_channel(&app, &good.base_url, json!({})).await;
    app.root()
        .put(
            "/api/channel",
            json!({"id": id2, "base_url": evil.base_url}),
        )
        .await
        .ok();
    assert_eq!(row(&app, id2).base_url, evil.base_url);
    assert_eq!(app.channel_key(id2), "sk-root-secret");
}

/// A copy keeps the original's key and destination, so an administrator may copy a channel, but
/// editing the copy's destination needs a new key like any other channel. Batch and tag edits
/// cannot carry a destination at all.
#[actix_web::test]
async fn copies_and_batch_edits_do_not_move_a_stored_key() {
    use switchboard_mock_upstream::MockUpstream;
    let app = TestApp::new().await;
    let good = MockUpstream::start();
    let evil = MockUpstream::start();
    app.root()
        .put(
            "/api/option",
            json!({"key": "AllowPrivateOutbound", "value": true}),
        )
        .await
        .ok();
    let id = secret_channel(&app, &good.base_url, json!({"tag": "t"})).await;
    let azure = secret_channel(
        &app,
        &good.base_url,
        json!({"type": 3, "config": {"api_version": "2024-10-21"}}),
    )
    .await;
    let (admin, _) = app.admin("copycat").await;

    let r = admin
        .post(&format!("/api/channel/copy/{id}"), json!({}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let copy = r.body["data"]["id"].as_i64().unwrap();
    assert_eq!(row(&app, copy).base_url, good.base_url);
    admin
        .put(
            "/api/channel",
            json!({"id": copy, "base_url": evil.base_url}),
        )
        .await
        .err(403, "destination_needs_root");
    admin
        .put(
            "/api/channel",
            json!({"id": copy, "proxy": evil.base_url, "name": "x"}),
        )
        .await
        .err(403, "destination_needs_root");
    use_channel(&admin, copy).await;
    assert!(evil.requests().is_empty());

    // Batch edits change the API version or the model list only; tag edits priority, weight
    // and status: a destination field is refused as an unknown field.
    admin
        .put(
            "/api/channel/batch/azure_api",
            json!({"ids": [azure], "value": "2025-01-01-preview"}),
        )
        .await
        .ok();
    assert_eq!(row(&app, azure).base_url, good.base_url);
    for (path, body) in [
        (
            "/api/channel/batch/azure_api",
            json!({"value": "2025-01-01-preview", "base_url": evil.base_url}),
        ),
        (
            "/api/channel/batch/del_model",
            json!({"value": "gpt-4o-mini", "proxy": evil.base_url}),
        ),
        (
            "/api/channel/tag",
            json!({"tag": "t", "priority": 1, "base_url": evil.base_url}),
        ),
    ] {
        let r = admin.put(path, body).await;
        assert_eq!(r.status, 400, "{path}: {:?}", r.body);
    }
    admin
        .put("/api/channel/tag", json!({"tag": "t", "priority": 2}))
        .await
        .ok();
    for id in [id, copy, azure] {
        assert_eq!(row(&app, id).base_url, good.base_url);
        use_channel(&admin, id).await;
    }
    assert!(evil.requests().is_empty());
}

/// Without `AllowPrivateOutbound`, a channel destination saved by someone other than root may
/// not name a loopback, private or link-local address (literal, by name, proxy, or a Vertex
/// key's token_uri): 403 `private_destination`. Root may (local upstreams such as Ollama), and
/// an administrator may still edit other fields of such a channel.
#[actix_web::test]
async fn only_root_points_channels_at_private_addresses() {
    let app = TestApp::new().await;
    let (admin, _) = app.admin("netadmin").await;
    let ch = |base: &str| json!({"name": "local", "type": 1, "key": "sk-admin-own", "base_url": base, "models": "m", "group": "default"});
    for base in [
        "http://127.0.0.1:11434",
        "http://localhost:11434",
        "http://[::1]:11434",
        "http://169.254.169.254",
        "http://10.1.2.3",
        "http://[::ffff:192.168.1.1]",
        "http://2130706433",
    ] {
        admin
            .post("/api/channel", ch(base))
            .await
            .err(403, "private_destination");
    }
    let mut proxied = ch("https://8.8.8.8");
    proxied["proxy"] = json!("socks5://127.0.0.1:1080");
    admin
        .post("/api/channel", proxied)
        .await
        .err(403, "private_destination");
    let vertex = json!({"name": "v", "type": 42, "models": "gemini-1.5-pro", "group": "default",
        "key": json!({"project_id": "p", "client_email": "a@b.c", "private_key": "x", "token_uri": "http://127.0.0.1:9/token"}).to_string()});
    admin
        .post("/api/channel", vertex)
        .await
        .err(403, "private_destination");
    // A public address is fine for an administrator.
    let r = admin.post("/api/channel", ch("https://8.8.8.8")).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let public = r.body["data"]["ids"][0].as_i64().unwrap();
    admin
        .put(
            "/api/channel",
            json!({"id": public, "base_url": "http://127.0.0.1:8080", "key": "sk-new"}),
        )
        .await
        .err(403, "private_destination");

    // Root's Ollama at 127.0.0.1: allowed; an administrator may rename it.
    let r = app
        .root()
        .post("/api/channel", ch("http://127.0.0.1:11434"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let local = r.body["data"]["ids"][0].as_i64().unwrap();
    admin
        .put("/api/channel", json!({"id": local, "name": "ollama"}))
        .await
        .ok();

    // The setting lets administrators do it too.
    app.root()
        .put(
            "/api/option",
            json!({"key": "AllowPrivateOutbound", "value": true}),
        )
        .await
        .ok();
    let r = admin
        .post("/api/channel", ch("http://127.0.0.1:11434"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

/// Points channel `id`'s stored base URL at `base` behind the API's back, as a DNS change
/// would move the address a saved host name stands for; `destination_by_root` is untouched.
fn rebind(app: &TestApp, id: i64, base: &str) {
    let changed = switchboard_store::channels::edit_many(&mut app.conn(), Some(&[id]), None, |f| {
        f.base_url = base.to_owned();
        true
    })
    .unwrap();
    assert_eq!(changed, vec![id]);
}

/// DNS rebinding: a destination is checked when an administrator saves it, but a host name may
/// answer a private address later. So each channel records whether root last set its
/// destination, and the relay reaches the others through the public-only resolver (unless
/// `AllowPrivateOutbound` is on): an administrator's channel whose name now resolves to
/// loopback, or whose stored address became a loopback literal, never reaches the local
/// upstream (relay, channel test, model list, balance); root's channel does; so does the
/// administrator's once the setting is on. Creating and moving the destination set the flag
/// (to whether root did it), other edits and copies keep it.
#[actix_web::test]
async fn channels_not_set_by_root_reach_public_addresses_only_when_used() {
    use switchboard_mock_upstream::MockUpstream;
    let app = TestApp::new().await;
    let up = MockUpstream::start();
    let port = up.base_url.rsplit(':').next().unwrap().to_owned();
    let by_name = format!("http://localhost:{port}");
    let (admin, _) = app.admin("rebinder").await;
    let (_, key) = root_key(&app).await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "RetryCooldownSeconds", "value": 0}),
        )
        .await
        .ok();
    // Saved by an administrator while it named a public address.
    let r = admin
        .post(
            "/api/channel",
            json!({"name": "rebound", "type": 1, "key": "sk-admin-own", "base_url": "https://8.8.8.8", "models": "gpt-4o-mini", "group": "default", "test_model": "gpt-4o-mini"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = r.body["data"]["ids"][0].as_i64().unwrap();
    assert!(!row(&app, id).destination_by_root);

    for stored in [by_name.clone(), up.base_url.clone()] {
        rebind(&app, id, &stored);
        // An edit that does not move the destination keeps who set it (and reloads the relay).
        let d = admin
            .put("/api/channel", json!({"id": id, "name": "renamed"}))
            .await
            .ok()
            .clone();
        assert_eq!(d["destination_by_root"], false, "{d}");
        assert_eq!(d["base_url"], stored.as_str());
        let r = chat(&app, &key).await;
        assert_ne!(r.status, 200, "{stored}: {:?}", r.body);
        use_channel(&admin, id).await;
        assert!(up.requests().is_empty(), "{stored}: {:?}", keys_seen(&up));
    }

    // A copy keeps the original's flag.
    let copy = admin
        .post(&format!("/api/channel/copy/{id}"), json!({}))
        .await
        .ok()["id"]
        .as_i64()
        .unwrap();
    assert!(!row(&app, copy).destination_by_root);
    admin.delete(&format!("/api/channel/{copy}")).await.ok();

    // Root sets the same destination: the relay reaches it.
    let d = app
        .root()
        .put("/api/channel", json!({"id": id, "base_url": by_name}))
        .await
        .ok()
        .clone();
    assert_eq!(d["destination_by_root"], true, "{d}");
    assert_eq!(chat(&app, &key).await.status, 200);
    assert_eq!(up.requests().len(), 1);
    let copy = app
        .root()
        .post(&format!("/api/channel/copy/{id}"), json!({}))
        .await
        .ok()["id"]
        .as_i64()
        .unwrap();
    assert!(row(&app, copy).destination_by_root);
    app.root()
        .delete(&format!("/api/channel/{copy}"))
        .await
        .ok();

    // An administrator moves it again (to a public address, with a new key): theirs again.
    admin
        .put(
            "/api/channel",
            json!({"id": id, "base_url": "https://8.8.4.4", "key": "sk-admin-new"}),
        )
        .await
        .ok();
    assert!(!row(&app, id).destination_by_root);
    rebind(&app, id, &by_name);
    admin
        .put("/api/channel", json!({"id": id, "name": "again"}))
        .await
        .ok();
    assert_ne!(chat(&app, &key).await.status, 200);
    assert_eq!(up.requests().len(), 1);

    // With AllowPrivateOutbound the administrator's destination is reached as it stands.
    app.root()
        .put(
            "/api/option",
            json!({"key": "AllowPrivateOutbound", "value": true}),
        )
        .await
        .ok();
    assert_eq!(chat(&app, &key).await.status, 200);
    assert_eq!(up.requests().len(), 2);
}

/// Price sync fetches public addresses only unless `AllowPrivateOutbound` is on: a loopback
/// server is not contacted whether named by literal, by a name that resolves to it, by an
/// IPv4-mapped address or through the `PriceSyncUrl` setting; and a refused address, a closed
/// port and a name that does not resolve all give the same message, so the fetch cannot map
/// the network.
#[actix_web::test]
async fn price_sync_reaches_public_addresses_only() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let list = json!([{"model": "synced", "type": "tokens", "channel_type": 1, "input": 1.0, "output": 2.0}]);
    Mock::given(method("GET"))
        .and(path("/prices"))
        .respond_with(ResponseTemplate::new(200).set_body_json(list))
        .mount(&server)
        .await;
    let port = server.address().port();
    let app = TestApp::new().await;
    let (admin, _) = app.admin("pricer").await;
    let sync = |url: String| {
        let admin = &admin;
        async move {
            admin
                .post("/api/prices/sync", json!({"mode": "add", "url": url}))
                .await
        }
    };
    let uniform = "could not fetch the price list: could not reach the server";
    for url in [
        format!("{}/prices", server.uri()),
        format!("http://localhost:{port}/prices"),
        format!("http://[::ffff:127.0.0.1]:{port}/prices"),
        format!("http://0.0.0.0:{port}/prices"),
        "http://169.254.169.254/latest/meta-data".to_owned(),
        "http://127.0.0.1:9/prices".to_owned(),
        "http://no-such-host.invalid/prices".to_owned(),
    ] {
        let m = sync(url.clone()).await.err(502, "price_server_error");
        assert_eq!(m, uniform, "{url}");
    }
    app.root()
        .put(
            "/api/option",
            json!({"key": "PriceSyncUrl", "value": format!("{}/prices", server.uri())}),
        )
        .await
        .ok();
    let m = admin
        .post("/api/prices/sync", json!({"mode": "add"}))
        .await
        .err(502, "price_server_error");
    assert_eq!(m, uniform);
    assert!(server.received_requests().await.unwrap().is_empty());

    app.root()
        .put(
            "/api/option",
            json!({"key": "AllowPrivateOutbound", "value": true}),
        )
        .await
        .ok();
    let d = sync(format!("http://localhost:{port}/prices")).await;
    assert_eq!(d.ok()["inserted"], 1);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

/// With `TurnstileCheckEnabled`, login, registration and the verification and reset e-mails
/// need the widget's token (`?turnstile=`), verified at the siteverify endpoint with the secret
/// and the client's address: missing → 400 `turnstile_required`, refused → 403
/// `turnstile_failed`, confirmed → the action runs. Disabled: no call is made.
#[actix_web::test]
async fn turnstile_tokens_are_verified_when_the_check_is_on() {
    use wiremock::matchers::{body_string_contains, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let verify = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/siteverify"))
        .and(body_string_contains("response=good-token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"success": true})))
        .with_priority(1)
        .mount(&verify)
        .await;
    Mock::given(method("POST"))
        .and(path("/siteverify"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"success": false, "error-codes": ["invalid-input-response"]}),
            ),
        )
        .with_priority(2)
        .mount(&verify)
        .await;
    let url = format!("{}/siteverify", verify.uri());
    let app = TestApp::with_config(|c| c.turnstile_verify_url = url).await;
    let creds = json!({"username": "root", "password": crate::common::ROOT_PASSWORD});

    // Off (the default): no token needed, no call made, and no foreign script admitted.
    let r = app.client().get("/api/status").await;
    assert!(!r.headers["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("cloudflare"));
    app.client()
        .post("/api/user/login", creds.clone())
        .await
        .ok();
    // (No SMTP server here: getting past the check shows as `smtp_not_configured`.)
    app.client()
        .get("/api/reset_password?email=nobody@example.com")
        .await
        .err(503, "smtp_not_configured");
    assert!(verify.received_requests().await.unwrap().is_empty());

    for (k, v) in [
        ("TurnstileSecretKey", json!("ts-secret")),
        ("TurnstileSiteKey", json!("ts-site")),
        ("TurnstileCheckEnabled", json!(true)),
    ] {
        app.root()
            .put("/api/option", json!({"key": k, "value": v}))
            .await
            .ok();
    }
    let status = app.client().get("/api/status").await;
    assert_eq!(status.ok()["turnstile_check"], true);
    // The console may now load Cloudflare's widget script, and only that one more.
    let csp = status.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self' https://challenges.cloudflare.com;"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-eval"), "{csp}");

    let register = json!({"username": "turnstiled", "password": "password-123"});
    let c = app.client();
    c.post("/api/user/login", creds.clone())
        .await
        .err(400, "turnstile_required");
    c.post("/api/user/register", register.clone())
        .await
        .err(400, "turnstile_required");
    c.get("/api/verification?email=a@example.com")
        .await
        .err(400, "turnstile_required");
    c.get("/api/reset_password?email=a@example.com")
        .await
        .err(400, "turnstile_required");
    assert!(verify.received_requests().await.unwrap().is_empty());

    c.post("/api/user/login?turnstile=bad-token", creds.clone())
        .await
        .err(403, "turnstile_failed");
    c.post("/api/user/register?turnstile=bad-token", register.clone())
        .await
        .err(403, "turnstile_failed");
    c.get("/api/verification?email=a@example.com&turnstile=bad-token")
        .await
        .err(403, "turnstile_failed");
    c.get("/api/reset_password?email=a@example.com&turnstile=bad-token")
        .await
        .err(403, "turnstile_failed");
    let seen = verify.received_requests().await.unwrap();
    assert_eq!(seen.len(), 4);
    let form = String::from_utf8(seen[0].body.clone()).unwrap();
    for part in [
        "secret=ts-secret",
        "response=bad-token",
        "remoteip=127.0.0.1",
    ] {
        assert!(form.contains(part), "{form}");
    }

    c.post("/api/user/login?turnstile=good-token", creds.clone())
        .await
        .ok();
    let r = c
        .post("/api/user/register?turnstile=good-token", register)
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    c.get("/api/reset_password?email=a@example.com&turnstile=good-token")
        .await
        .err(503, "smtp_not_configured");

    // No confirmation (siteverify answers an error), or no secret set: the check fails closed.
    verify.reset().await;
    c.post("/api/user/login?turnstile=good-token", creds.clone())
        .await
        .err(403, "turnstile_failed");
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"success": true})))
        .mount(&verify)
        .await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "TurnstileSecretKey", "value": ""}),
        )
        .await
        .ok();
    c.post("/api/user/login?turnstile=good-token", creds)
        .await
        .err(403, "turnstile_failed");
    // Only the call answered with an error reached siteverify since the reset.
    assert_eq!(verify.received_requests().await.unwrap().len(), 1);
}

// ---- Secrets at rest: channel keys, secret settings and API keys sealed under the server
// secret, with rotation through SESSION_SECRET_PREVIOUS.

const OLD_SECRET: &str = "old-server-secret-0123456789";
const NEW_SECRET: &str = "new-server-secret-0123456789";

fn sealed_under(secret: &str, stored: &str) -> Option<String> {
    switchboard_api::crypto::SecretBox::new(secret.as_bytes(), &[])
        .open(stored)
        .ok()
        .filter(|_| stored.starts_with(switchboard_api::crypto::SEALED_PREFIX))
}

fn stored_key(app: &TestApp, id: i64) -> String {
    switchboard_store::channels::find(&mut app.conn(), id)
        .unwrap()
        .key
}

fn stored_option(app: &TestApp, key: &str) -> Option<String> {
    switchboard_store::options::all(&mut app.conn())
        .unwrap()
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// Root's own API key (unlimited) → (token id, key).
async fn root_key(app: &TestApp) -> (i64, String) {
    let r = app
        .root()
        .post(
            "/api/token",
            json!({"name": format!("k{}", crate::common::unique()), "unlimited_quota": true}),
        )
        .await;
    let d = r.ok();
    (
        d["id"].as_i64().unwrap(),
        d["key"].as_str().unwrap().to_owned(),
    )
}

async fn chat(app: &TestApp, key: &str) -> crate::common::Resp {
    app.relay(
        key,
        "/v1/chat/completions",
        json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await
}

fn last_upstream_key(up: &switchboard_mock_upstream::MockUpstream) -> String {
    up.requests()
        .last()
        .map(|r| r.key.clone())
        .unwrap_or_default()
}

/// A channel key never rests in clear: create, update, copy and the batch edits store it
/// sealed (`sealed:v1:`), while the relay, the channel test and the model list send the plain
/// key upstream, and only root is shown it. On every backend.
#[actix_web::test]
async fn channel_keys_are_sealed_at_rest_and_opened_to_use() {
    for db in switchboard_store::testing::TestDb::all() {
        let backend = db.backend;
        let app = TestApp::on(db, |_| {}).await;
        let up = switchboard_mock_upstream::MockUpstream::start();
        let id = app
            .channel(&up.base_url, "sk-mock-ok", "gpt-4o-mini", 0)
            .await;
        let stored = stored_key(&app, id);
        assert!(
            stored.starts_with("sealed:v1:") && !stored.contains("mock"),
            "{backend:?}: {stored}"
        );
        assert_eq!(app.channel_key(id), "sk-mock-ok");

        let (_, key) = root_key(&app).await;
        let r = chat(&app, &key).await;
        assert_eq!(r.status, 200, "{backend:?}: {:?}", r.body);
        assert_eq!(last_upstream_key(&up), "sk-mock-ok");
        let root = app.root();
        root.get(&format!("/api/channel/test/{id}?model=gpt-4o-mini"))
            .await
            .ok();
        assert_eq!(last_upstream_key(&up), "sk-mock-ok");
        root.get(&format!("/api/channel/fetch_models/{id}"))
            .await
            .ok();
        assert_eq!(last_upstream_key(&up), "sk-mock-ok");

        // Root is shown the key open; an administrator never, in no answer.
        assert_eq!(
            root.get(&format!("/api/channel/{id}")).await.ok()["key"],
            "sk-mock-ok"
        );
        let (admin, _) = app.admin(&format!("adm{}", crate::common::unique())).await;
        let shown = admin.get(&format!("/api/channel/{id}")).await;
        assert!(shown.ok().get("key").is_none(), "{:?}", shown.body);
        let shown = admin
            .put("/api/channel", json!({"id": id, "weight": 2}))
            .await;
        assert!(shown.ok().get("key").is_none(), "{:?}", shown.body);
        let list = root.get("/api/channel").await;
        list.ok();
        assert!(
            !list.body.to_string().contains("\"key\""),
            "{:?}",
            list.body
        );

        // An update without a key keeps it (sealed); with one, the new key is sealed.
        let r = root
            .put(
                "/api/channel",
                json!({"id": id, "priority": 3, "tag": "t", "models": "gpt-4o-mini,extra-model"}),
            )
            .await;
        assert_eq!(r.ok()["key"], "sk-mock-ok");
        assert_eq!(app.channel_key(id), "sk-mock-ok");
        root.put("/api/channel", json!({"id": id, "key": "sk-mock-nousage"}))
            .await
            .ok();
        assert_eq!(app.channel_key(id), "sk-mock-nousage");
        assert!(!stored_key(&app, id).contains("nousage"));
        assert_eq!(chat(&app, &key).await.status, 200);
        assert_eq!(last_upstream_key(&up), "sk-mock-nousage");

        // Copy and the batch edits keep the key sealed and usable.
        let copy = root
            .post(&format!("/api/channel/copy/{id}"), json!({}))
            .await
            .ok()["id"]
            .as_i64()
            .unwrap();
        assert_eq!(app.channel_key(copy), "sk-mock-nousage");
        root.put("/api/channel/tag", json!({"tag": "t", "weight": 5}))
            .await
            .ok();
        let r = root
            .put(
                "/api/channel/batch/del_model",
                json!({"value": "extra-model"}),
            )
            .await;
        assert_eq!(r.ok()["updated"], 2, "{:?}", r.body);
        assert_eq!(app.channel_key(id), "sk-mock-nousage");
        root.get(&format!("/api/channel/test/{copy}?model=gpt-4o-mini"))
            .await
            .ok();
        assert_eq!(last_upstream_key(&up), "sk-mock-nousage");
    }
}

/// A database written before sealing existed (plain channel keys and secret settings) is sealed
/// at start, the relay still works with the same key, and a second start changes nothing
/// (idempotent). On every backend.
#[actix_web::test]
async fn plain_secrets_of_an_older_database_are_sealed_at_start() {
    use switchboard_store::{channels, options};
    for db in switchboard_store::testing::TestDb::all() {
        let backend = db.backend;
        let up = switchboard_mock_upstream::MockUpstream::start();
        let id = {
            let c = &mut db.conn();
            options::set(c, "SMTPToken", "smtp-plain-password").unwrap();
            options::set(c, "GitHubClientSecret", "").unwrap();
            options::set(c, "SystemName", "Plain Name").unwrap();
            channels::insert(
                c,
                &channels::ChannelFields {
                    channel_type: 1,
                    name: "legacy".into(),
                    key: "sk-mock-ok".into(),
                    base_url: up.base_url.clone(),
                    group_name: "default".into(),
                    models: "gpt-4o-mini".into(),
                    model_mapping: "{}".into(),
                    priority: 0,
                    weight: 1,
                    tag: String::new(),
                    proxy: String::new(),
                    test_model: String::new(),
                    status: 1,
                    custom_headers: "{}".into(),
                    config: "{}".into(),
                    disabled_stream: String::new(),
                    pre_cost: 1,
                    auto_ban: true,
                    updated_at: 1,
                    destination_by_root: true,
                },
            )
            .unwrap()
        };
        let second = db.shared();
        let app = TestApp::on(db, |c| c.session_secret = OLD_SECRET.into()).await;
        let key_row = stored_key(&app, id);
        assert_eq!(
            sealed_under(OLD_SECRET, &key_row).as_deref(),
            Some("sk-mock-ok"),
            "{backend:?}: {key_row}"
        );
        let smtp = stored_option(&app, "SMTPToken").unwrap();
        assert_eq!(
            sealed_under(OLD_SECRET, &smtp).as_deref(),
            Some("smtp-plain-password"),
            "{backend:?}: {smtp}"
        );
        // Unset secrets stay empty, ordinary settings stay as they are.
        assert_eq!(stored_option(&app, "GitHubClientSecret").unwrap(), "");
        assert_eq!(stored_option(&app, "SystemName").unwrap(), "Plain Name");
        assert_eq!(
            app.state.view().get("SMTPToken").map(String::as_str),
            Some("smtp-plain-password")
        );
        let (_, key) = root_key(&app).await;
        let r = chat(&app, &key).await;
        assert_eq!(r.status, 200, "{backend:?}: {:?}", r.body);
        assert_eq!(last_upstream_key(&up), "sk-mock-ok");

        // Starting again (another node, a restart) finds nothing to do.
        let again = TestApp::on(second, |c| c.session_secret = OLD_SECRET.into()).await;
        assert_eq!(stored_key(&again, id), key_row);
        assert_eq!(stored_option(&again, "SMTPToken").unwrap(), smtp);
        assert_eq!(chat(&again, &key).await.status, 200);
    }
}

/// Rotation: a node started with a new SESSION_SECRET and the old one in
/// SESSION_SECRET_PREVIOUS opens what was sealed under the old secret and re-seals it under
/// the new one (channel keys, secret settings, API keys), so that afterwards the new secret
/// alone is enough. On every backend.
#[actix_web::test]
async fn rotating_the_server_secret_reseals_under_the_new_one() {
    for db in switchboard_store::testing::TestDb::all() {
        let backend = db.backend;
        let (rotated, after) = (db.shared(), db.shared());
        let old = TestApp::on(db, |c| c.session_secret = OLD_SECRET.into()).await;
        let up = switchboard_mock_upstream::MockUpstream::start();
        let id = old
            .channel(&up.base_url, "sk-mock-ok", "gpt-4o-mini", 0)
            .await;
        old.root()
            .put(
                "/api/option",
                json!({"key": "SMTPToken", "value": "smtp-rotated"}),
            )
            .await
            .ok();
        let (token_id, key) = root_key(&old).await;
        let gateway = old
            .root()
            .post(
                "/api/payment",
                json!({"name": "Epay", "type": "epay", "icon": "alipay", "currency": "CNY",
                       "config": {"url": "https://pay.example.com", "pid": "7",
                                  "key": "merchant-rotated"}}),
            )
            .await
            .ok()["id"]
            .as_i64()
            .unwrap();
        let under_old = stored_key(&old, id);
        assert!(sealed_under(OLD_SECRET, &under_old).is_some());

        let app = TestApp::on(rotated, |c| {
            c.session_secret = NEW_SECRET.into();
            c.previous_secrets = vec![b"unrelated-secret-0123456789".to_vec(), OLD_SECRET.into()];
        })
        .await;
        let resealed = stored_key(&app, id);
        assert_eq!(
            sealed_under(NEW_SECRET, &resealed).as_deref(),
            Some("sk-mock-ok"),
            "{backend:?}: {resealed}"
        );
        assert_eq!(sealed_under(OLD_SECRET, &resealed), None);
        let smtp = stored_option(&app, "SMTPToken").unwrap();
        assert_eq!(
            sealed_under(NEW_SECRET, &smtp).as_deref(),
            Some("smtp-rotated")
        );
        let cfg = switchboard_store::payments::find_gateway(&mut app.conn(), gateway)
            .unwrap()
            .config;
        assert!(
            sealed_under(NEW_SECRET, &cfg).is_some_and(|c| c.contains("merchant-rotated")),
            "{backend:?}: the merchant key is re-sealed"
        );
        let ct = switchboard_store::tokens::find(&mut app.conn(), token_id)
            .unwrap()
            .key_ciphertext;
        assert_eq!(
            switchboard_api::crypto::KeyBox::new(NEW_SECRET.as_bytes())
                .open(&ct)
                .as_deref(),
            Some(key.as_str())
        );
        let r = chat(&app, &key).await;
        assert_eq!(r.status, 200, "{backend:?}: {:?}", r.body);
        assert_eq!(last_upstream_key(&up), "sk-mock-ok");

        // Once re-sealed, the new secret alone opens everything.
        let app = TestApp::on(after, |c| c.session_secret = NEW_SECRET.into()).await;
        assert_eq!(chat(&app, &key).await.status, 200);
        assert_eq!(last_upstream_key(&up), "sk-mock-ok");
        assert_eq!(
            app.state.view().get("SMTPToken").map(String::as_str),
            Some("smtp-rotated")
        );
        let shown = app.root().get(&format!("/api/token/{token_id}/key")).await;
        assert_eq!(shown.ok()["key"], key.as_str());
        let g = app.root().get(&format!("/api/payment/{gateway}")).await;
        assert_eq!(
            (&g.ok()["secrets_set"]["key"], &g.ok()["config"]["pid"]),
            (&json!(true), &json!("7"))
        );
    }
}

/// A node whose secret does not open a stored channel key (SESSION_SECRET changed, old one not
/// listed) never sends the sealed text upstream: the relay leaves the channel out, the channel
/// test and root's view say why, the stored value is left for a node that knows the secret, and
/// entering the key again repairs the channel. A secret setting it cannot open counts as unset.
#[actix_web::test]
async fn a_key_sealed_under_an_unknown_secret_is_never_sent_upstream() {
    let db = switchboard_store::testing::TestDb::sqlite();
    let other = db.shared();
    let old = TestApp::on(db, |c| c.session_secret = OLD_SECRET.into()).await;
    let up = switchboard_mock_upstream::MockUpstream::start();
    let id = old
        .channel(&up.base_url, "sk-mock-ok", "gpt-4o-mini", 0)
        .await;
    old.root()
        .put(
            "/api/option",
            json!({"key": "SMTPToken", "value": "smtp-old"}),
        )
        .await
        .ok();
    let (_, key) = root_key(&old).await;
    let under_old = stored_key(&old, id);

    let app = TestApp::on(other, |c| c.session_secret = NEW_SECRET.into()).await;
    let before = up.requests().len();
    let r = chat(&app, &key).await;
    assert!(r.status >= 400, "{:?}", r.body);
    let root = app.root();
    let m = root
        .get(&format!("/api/channel/test/{id}?model=gpt-4o-mini"))
        .await
        .err(409, "key_unavailable");
    assert!(m.contains("SESSION_SECRET_PREVIOUS"), "{m}");
    root.get(&format!("/api/channel/fetch_models/{id}"))
        .await
        .err(409, "key_unavailable");
    root.post(&format!("/api/channel/copy/{id}"), json!({}))
        .await
        .err(409, "key_unavailable");
    root.put("/api/channel", json!({"id": id, "priority": 1}))
        .await
        .err(409, "key_unavailable");
    assert_eq!(up.requests().len(), before, "nothing reached the upstream");
    let shown = root.get(&format!("/api/channel/{id}")).await;
    assert_eq!(
        (&shown.ok()["key"], &shown.ok()["key_unavailable"]),
        (&json!(""), &json!(true))
    );
    // The stored value is left as it was (a node with the right secret can still use it).
    assert_eq!(stored_key(&app, id), under_old);
    let opts = root.get("/api/option").await;
    let smtp = opts
        .ok()
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["key"] == "SMTPToken")
        .cloned()
        .unwrap();
    assert_eq!(smtp["set"], false);
    assert_eq!(app.state.view().get("SMTPToken"), None);

    // Entering the key again repairs the channel.
    root.put("/api/channel", json!({"id": id, "key": "sk-mock-ok"}))
        .await
        .ok();
    assert_eq!(
        sealed_under(NEW_SECRET, &stored_key(&app, id)).as_deref(),
        Some("sk-mock-ok")
    );
    let r = chat(&app, &key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(last_upstream_key(&up), "sk-mock-ok");
}

/// What [`administrator_html_is_served_cleaned`] writes: the notice that sent root's browser to
/// another site, and every other way HTML can run script, frame or redirect.
const HOSTILE_HTML: &str = r#"<meta http-equiv="refresh" content="0;url=https://evil.example/"><p>Hello <a href="javascript:alert(1)">x</a> <a href="https://ok.example/" target="_blank">ok</a> <img src="https://ok.example/a.png" onerror="alert(1)"><script>alert(2)</script><iframe src="https://evil.example/"></iframe><a href="mailto:ops@example.com">m</a><a href="data:text/html,x">d</a><span style="position:fixed" onclick="alert(3)">s</span><base href="https://evil.example/"></p>"#;

/// Every piece of `served` that could run, frame or redirect is gone; the harmless rest stays.
fn assert_clean(what: &str, served: &str) {
    for bad in [
        "<meta",
        "refresh",
        "javascript:",
        "onerror",
        "onclick",
        "<script",
        "alert(2)",
        "<iframe",
        "evil.example",
        "data:",
        "style=",
        "<base",
    ] {
        assert!(!served.contains(bad), "{what} serves {bad:?}: {served}");
    }
    for good in [
        "<p>Hello ",
        r#"href="https://ok.example/""#,
        r#"target="_blank""#,
        r#"src="https://ok.example/a.png""#,
        r#"href="mailto:ops@example.com""#,
        "<span>s</span>",
    ] {
        assert!(served.contains(good), "{what} lost {good:?}: {served}");
    }
}

/// Administrator-written HTML (notice, footer, About, home page) is served cleaned to an
/// allow-list: no `<meta>` refresh, script, event handler, frame, `style`, `<base>`, and links
/// and images only over http(s) or mailto. It is cleaned when saved (an administrator's write
/// through `/api/option`) and again when served (a value that reached the database another
/// way: an import, an older version, a hand edit). About and the home page may instead be a
/// single http(s) address (the console frames it).
#[actix_web::test]
async fn administrator_html_is_served_cleaned() {
    let app = TestApp::new().await;
    let (admin, _) = app.admin("htmlwriter").await;
    let pages: [(&str, &str, Option<&str>); 4] = [
        ("Notice", "/api/notice", None),
        ("Footer", "/api/status", Some("footer_html")),
        ("About", "/api/about", None),
        ("HomePageContent", "/api/home_page_content", None),
    ];
    let served = |path: &'static str, field: Option<&'static str>| {
        let c = app.client();
        async move {
            let r = c.get(path).await;
            let v = match field {
                Some(f) => &r.ok()[f],
                None => r.ok(),
            };
            v.as_str().unwrap().to_owned()
        }
    };
    // Saved by an administrator: stored cleaned, served cleaned.
    for (key, path, field) in pages {
        admin
            .put("/api/option", json!({"key": key, "value": HOSTILE_HTML}))
            .await
            .ok();
        assert_clean(key, &served(path, field).await);
        let stored = switchboard_store::options::all(&mut app.conn()).unwrap();
        let (_, v) = stored.iter().find(|(k, _)| k == key).unwrap();
        assert_clean(&format!("stored {key}"), v);
    }
    // Written to the database another way (as an import would), then loaded: served cleaned.
    for (key, _, _) in pages {
        switchboard_store::options::set(&mut app.conn(), key, HOSTILE_HTML).unwrap();
    }
    app.state.reload_settings().await.unwrap();
    for (key, path, field) in pages {
        assert_clean(&format!("imported {key}"), &served(path, field).await);
    }
    // About and the home page as an address to frame: only http(s), kept as it is.
    for &(key, path, _) in &pages[2..] {
        admin
            .put(
                "/api/option",
                json!({"key": key, "value": " https://about.example/page?x=1 "}),
            )
            .await
            .ok();
        assert_eq!(
            served(path, None).await,
            "https://about.example/page?x=1",
            "{key}"
        );
        admin
            .put(
                "/api/option",
                json!({"key": key, "value": "javascript:alert(1)"}),
            )
            .await
            .ok();
        // Not an address: shown as text, never framed or followed.
        let text = served(path, None).await;
        assert!(!text.starts_with("http"), "{key}: {text}");
    }
}

/// Chat-client links (`ChatLinks`) are web links or the built-in desktop clients' own schemes
/// (`ama://`, `opencat://`): a `javascript:`, `data:` or scheme-less address is refused with
/// 400 `invalid_chat_link` naming the entry, and the stored list is unchanged.
#[actix_web::test]
async fn chat_links_are_web_or_app_links_only() {
    let app = TestApp::new().await;
    let (admin, _) = app.admin("linkwriter").await;
    let before = app.client().get("/api/status").await.ok()["chat_links"].clone();
    for url in [
        "javascript:alert(document.cookie)//{key}",
        " JAVASCRIPT:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
        "//evil.example/?key={key}",
        "",
    ] {
        let links = json!([{"name": "Chat", "url": url, "show": true, "sort": 1}]).to_string();
        let msg = admin
            .put("/api/option", json!({"key": "ChatLinks", "value": links}))
            .await
            .err(400, "invalid_chat_link");
        assert!(msg.contains("entry 1"), "{msg}");
        admin
            .put(
                "/api/option/batch",
                json!({"options": [{"key": "ChatLinks", "value": links}]}),
            )
            .await
            .err(400, "invalid_chat_link");
    }
    assert_eq!(
        app.client().get("/api/status").await.ok()["chat_links"],
        before
    );
    // The default list (two web clients, AMA and OpenCat) and a web link are accepted.
    admin
        .put(
            "/api/option",
            json!({"key": "ChatLinks", "value": switchboard_domain::options::DEFAULT_CHAT_LINKS}),
        )
        .await
        .ok();
    let links = json!([{"name": "Chat", "url": "https://chat.example/#/?key={key}&url={server}", "show": true, "sort": 1}]);
    admin
        .put(
            "/api/option",
            json!({"key": "ChatLinks", "value": links.to_string()}),
        )
        .await
        .ok();
    assert_eq!(
        app.client().get("/api/status").await.ok()["chat_links"],
        links
    );
}
