//! Third-party sign-in against local fakes of GitHub, an OpenID Connect provider, Lark and the
//! WeChat server (wiremock): sign-up with an affiliate code, sign-in, binding, the state's
//! one-time use and its tie to the browser, ID-token validation, and unbinding.

use crate::common::{unique, Client, TestApp};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn set(app: &TestApp, pairs: &[(&str, Value)]) {
    for (k, v) in pairs {
        app.root()
            .put("/api/option", json!({"key": k, "value": v}))
            .await
            .ok();
    }
}

fn query_of(url: &str, key: &str) -> String {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// A fake GitHub: the code `good-<n>` is GitHub user n (login `octo<n>`, a verified primary
/// address `octo<n>@example.com`); any other code is refused the way GitHub does (200 + error).
async fn fake_github() -> MockServer {
    let gh = MockServer::start().await;
    for n in 1..=4 {
        Mock::given(method("POST"))
            .and(path("/login/oauth/access_token"))
            .and(body_string_contains(format!("code=good-{n}")))
            .and(body_string_contains("client_secret=gh-secret"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(
                    json!({"access_token": format!("tok-{n}"), "token_type": "bearer"}),
                ),
            )
            .with_priority(1)
            .mount(&gh)
            .await;
        Mock::given(method("GET"))
            .and(path("/user"))
            .and(header("authorization", format!("Bearer tok-{n}").as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "id": 1000 + n, "login": format!("octo{n}"), "name": format!("Octo {n}"),
                "avatar_url": format!("https://avatars.example/{n}")
            })))
            .mount(&gh)
            .await;
        Mock::given(method("GET"))
            .and(path("/user/emails"))
            .and(header("authorization", format!("Bearer tok-{n}").as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([
                {"email": format!("old{n}@example.com"), "primary": false, "verified": true},
                {"email": format!("octo{n}@example.com"), "primary": true, "verified": true}
            ])))
            .mount(&gh)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/login/oauth/access_token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."}),
        ))
        .with_priority(5)
        .mount(&gh)
        .await;
    gh
}

async fn github_app() -> (TestApp, MockServer) {
    let gh = fake_github().await;
    let uri = gh.uri();
    let app = TestApp::with_config(|c| {
        c.oauth.github_web = uri.clone();
        c.oauth.github_api = uri.clone();
    })
    .await;
    set(
        &app,
        &[
            ("GitHubClientId", json!("gh-client")),
            ("GitHubClientSecret", json!("gh-secret")),
            ("GitHubOAuthEnabled", json!(true)),
            ("ServerAddress", json!("https://sb.example")),
        ],
    )
    .await;
    (app, gh)
}

/// Starts a GitHub sign-in in this browser: the authorize URL's state.
async fn start(c: &Client, provider: &str) -> (String, String) {
    let url = c
        .get(&format!("/api/oauth/endpoint?provider={provider}"))
        .await
        .ok()
        .as_str()
        .unwrap()
        .to_owned();
    (query_of(&url, "state"), url)
}

/// A WeChat sign-in's state for this browser (`/api/oauth/state`, also set as its cookie).
async fn wechat_state(c: &Client) -> String {
    c.get("/api/oauth/state")
        .await
        .ok()
        .as_str()
        .unwrap()
        .to_owned()
}

/// A fake WeChat server where the code `123456` is the WeChat user `wx-openid-1` (any other code
/// is refused as the server does), and an app with WeChat sign-in on and registration open.
async fn wechat_app() -> (TestApp, MockServer) {
    let app = TestApp::new().await;
    let wx = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/wechat/user"))
        .and(query_param("code", "123456"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"success": true, "message": "", "data": "wx-openid-1"})),
        )
        .with_priority(1)
        .mount(&wx)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/wechat/user"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"success": false, "message": "验证码错误或已过期"})),
        )
        .with_priority(5)
        .mount(&wx)
        .await;
    set(
        &app,
        &[
            ("WeChatServerAddress", json!(wx.uri())),
            ("WeChatServerToken", json!("wx-token")),
            ("WeChatAuthEnabled", json!(true)),
            ("RegisterEnabled", json!(true)),
        ],
    )
    .await;
    (app, wx)
}

/// Login CSRF: an attacker gets a WeChat code for their own WeChat account and sends a visitor
/// to `/api/oauth/wechat?code=…` (a link, a frame, a redirect). Without a state issued to the
/// visitor's browser the sign-in is refused (403 `oauth_state_invalid`) and the visitor stays
/// signed out; the attacker's own state does not help (the cookie is not the visitor's), nor
/// does a spent one. The console's way (a state, then the code) signs in.
#[actix_web::test]
async fn wechat_sign_in_needs_a_state_issued_to_this_browser() {
    let (app, _wx) = wechat_app().await;
    // The attacker's account, made with their WeChat code in their own browser.
    let attacker = app.client();
    let state = wechat_state(&attacker).await;
    let mine = attacker
        .get(&format!("/api/oauth/wechat?code=123456&state={state}"))
        .await
        .ok()["id"]
        .as_i64()
        .unwrap();
    let attackers_state = wechat_state(&attacker).await;

    let visitor = app.client();
    for forged in [
        "/api/oauth/wechat?code=123456".to_owned(),
        "/api/oauth/wechat?code=123456&state=".to_owned(),
        format!("/api/oauth/wechat?code=123456&state={attackers_state}"),
        // Spent by the attacker's own sign-in above.
        format!("/api/oauth/wechat?code=123456&state={state}"),
    ] {
        let r = visitor
            .http
            .get(app.url(&forged))
            .header("Sec-Fetch-Site", "cross-site")
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap();
        assert_eq!(status, 403, "{forged}: {body}");
        assert_eq!(body["code"], "oauth_state_invalid", "{forged}: {body}");
        // Still signed out: no session was opened for the attacker's account.
        visitor
            .get("/api/user/self")
            .await
            .err(401, "not_logged_in");
    }

    // The visitor's own flow: a state for this browser, then the code. Once only.
    let state = wechat_state(&visitor).await;
    let r = visitor
        .get(&format!("/api/oauth/wechat?code=123456&state={state}"))
        .await;
    assert_eq!(r.ok()["id"], mine);
    visitor
        .get(&format!("/api/oauth/wechat?code=123456&state={state}"))
        .await
        .err(403, "oauth_state_invalid");
}

#[actix_web::test]
async fn github_sign_up_sign_in_and_the_state_rules() {
    let (app, gh) = github_app().await;
    set(
        &app,
        &[
            ("QuotaForInviter", json!(700)),
            ("QuotaForNewUser", json!(100)),
        ],
    )
    .await;
    let (inviter_c, inviter_id) = app.user(&format!("inv{}", unique())).await;
    let aff = inviter_c.get("/api/user/self").await.ok()["aff_code"]
        .as_str()
        .unwrap()
        .to_owned();

    // The authorize URL: GitHub's page with our client id, scope user:email and the callback.
    let c = app.client();
    let (state, url) = start(&c, "github").await;
    assert!(
        url.starts_with(&format!("{}/login/oauth/authorize?", gh.uri())),
        "{url}"
    );
    assert_eq!(query_of(&url, "client_id"), "gh-client");
    assert_eq!(query_of(&url, "scope"), "user:email");
    assert_eq!(
        query_of(&url, "redirect_uri"),
        "https://sb.example/oauth/github"
    );
    assert!(state.len() >= 32, "{state}");

    // A state issued to another browser is refused (and is not spent by the attempt).
    let other = app.client();
    other
        .get(&format!("/api/oauth/github?code=good-1&state={state}"))
        .await
        .err(403, "oauth_state_invalid");
    // No code: refused before anything else.
    c.get(&format!("/api/oauth/github?state={state}"))
        .await
        .err(400, "oauth_code_required");

    // First sign-in makes the account: GitHub's login, verified primary address, avatar,
    // the identity bound, the inviter rewarded, and a session.
    let r = c
        .get(&format!(
            "/api/oauth/github?code=good-1&state={state}&aff={aff}"
        ))
        .await;
    let user = r.ok().clone();
    assert_eq!(r.body["message"], "", "a sign-in, not a binding");
    assert_eq!(user["username"], "octo1");
    assert_eq!(user["email"], "octo1@example.com");
    assert_eq!(user["github_id"], "1001");
    assert_eq!(user["avatar_url"], "https://avatars.example/1");
    assert_eq!(user["has_password"], false);
    assert_eq!(user["inviter_id"], inviter_id);
    let me = c.get("/api/user/self").await;
    assert_eq!(
        me.ok()["id"],
        user["id"],
        "the session belongs to the new account"
    );
    let inviter = inviter_c.get("/api/user/self").await;
    assert_eq!(inviter.ok()["aff_count"], 1);

    // The same state again (a replayed callback) is refused: a state works once.
    c.get(&format!("/api/oauth/github?code=good-1&state={state}"))
        .await
        .err(403, "oauth_state_invalid");

    // Signing in again from a new browser finds the same account.
    let c2 = app.client();
    let (state2, _) = start(&c2, "github").await;
    let r = c2
        .get(&format!("/api/oauth/github?code=good-1&state={state2}"))
        .await;
    assert_eq!(r.ok()["id"], user["id"]);

    // A code GitHub refuses: 502 with the reason, nobody signed in.
    let c3 = app.client();
    let (state3, _) = start(&c3, "github").await;
    let m = c3
        .get(&format!("/api/oauth/github?code=stolen&state={state3}"))
        .await
        .err(502, "oauth_provider_failed");
    assert!(m.contains("incorrect or expired"), "{m}");
    c3.get("/api/user/self").await.err(401, "not_logged_in");

    // A disabled user cannot sign in through GitHub either.
    let id = user["id"].as_i64().unwrap();
    app.root()
        .post("/api/user/manage", json!({"id": id, "action": "disable"}))
        .await
        .ok();
    let c4 = app.client();
    let (state4, _) = start(&c4, "github").await;
    c4.get(&format!("/api/oauth/github?code=good-1&state={state4}"))
        .await
        .err(403, "user_disabled");
    c4.get("/api/user/self").await.err(401, "not_logged_in");

    // Registration closed: an unknown GitHub account gets no new account.
    set(&app, &[("RegisterEnabled", json!(false))]).await;
    let c5 = app.client();
    let (state5, _) = start(&c5, "github").await;
    c5.get(&format!("/api/oauth/github?code=good-2&state={state5}"))
        .await
        .err(403, "registration_closed");

    // Switched off: neither the start nor the callback works.
    set(&app, &[("GitHubOAuthEnabled", json!(false))]).await;
    app.client()
        .get("/api/oauth/endpoint?provider=github")
        .await
        .err(403, "oauth_disabled");
    app.client()
        .get("/api/oauth/github?code=good-1&state=x")
        .await
        .err(403, "oauth_disabled");
    app.client()
        .get("/api/oauth/endpoint?provider=myspace")
        .await
        .err(404, "invalid_provider");
}

#[actix_web::test]
async fn binding_github_and_wechat_and_unbinding() {
    let (app, _gh) = github_app().await;
    let wx = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/wechat/user"))
        .and(query_param("code", "123456"))
        .and(header("authorization", "wx-token"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"success": true, "message": "", "data": "wx-openid-1"})),
        )
        .with_priority(1)
        .mount(&wx)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/wechat/user"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"success": false, "message": "验证码错误或已过期"})),
        )
        .with_priority(5)
        .mount(&wx)
        .await;
    set(
        &app,
        &[
            ("WeChatServerAddress", json!(wx.uri())),
            ("WeChatServerToken", json!("wx-token")),
            ("WeChatAuthEnabled", json!(true)),
        ],
    )
    .await;

    // A password user binds GitHub account 3: answer "bind", the account is unchanged otherwise.
    let (alice, alice_id) = app.user(&format!("alice{}", unique())).await;
    let (state, _) = start(&alice, "github").await;
    let r = alice
        .get(&format!("/api/oauth/github?code=good-3&state={state}"))
        .await;
    assert_eq!(r.ok()["id"], alice_id);
    assert_eq!(r.body["message"], "bind");
    assert_eq!(r.body["data"]["github_id"], "1003");

    // Another account cannot bind the same GitHub account.
    let (bob, _) = app.user(&format!("bob{}", unique())).await;
    let (state, _) = start(&bob, "github").await;
    bob.get(&format!("/api/oauth/github?code=good-3&state={state}"))
        .await
        .err(409, "oauth_identity_taken");
    assert_eq!(bob.get("/api/user/self").await.ok()["github_id"], "");

    // Signing in with GitHub account 3 now opens alice's account.
    let visitor = app.client();
    let (state, _) = start(&visitor, "github").await;
    let r = visitor
        .get(&format!("/api/oauth/github?code=good-3&state={state}"))
        .await;
    assert_eq!(r.ok()["id"], alice_id);

    // A link on another site carrying its author's code (and a state of its author's) must not
    // bind that WeChat account to the signed-in visitor (the browser says cross-site).
    let foreign_state = wechat_state(&app.client()).await;
    let forged = alice
        .http
        .get(app.url(&format!(
            "/api/oauth/wechat?code=123456&state={foreign_state}"
        )))
        .header("Sec-Fetch-Site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 403);
    let body: Value = forged.json().await.unwrap();
    assert_eq!(body["code"], "csrf_rejected", "{body}");
    assert_eq!(alice.get("/api/user/self").await.ok()["wechat_id"], "");
    // WeChat: a wrong code is refused; the right one binds, then signs in.
    let state = wechat_state(&alice).await;
    alice
        .get(&format!("/api/oauth/wechat?code=000000&state={state}"))
        .await
        .err(400, "wechat_code_invalid");
    let state = wechat_state(&alice).await;
    let r = alice
        .get(&format!("/api/oauth/wechat?code=123456&state={state}"))
        .await;
    assert_eq!(r.ok()["wechat_id"], "wx-openid-1");
    assert_eq!(r.body["message"], "bind");
    let phone = app.client();
    let state = wechat_state(&phone).await;
    assert_eq!(
        phone
            .get(&format!("/api/oauth/wechat?code=123456&state={state}"))
            .await
            .ok()["id"],
        alice_id
    );

    // Unbinding: alice has a password, so both may go; bad provider names are refused.
    alice
        .delete("/api/user/binding/myspace")
        .await
        .err(404, "invalid_provider");
    let r = alice.delete("/api/user/binding/github").await;
    assert_eq!(r.ok()["github_id"], "");
    assert_eq!(r.ok()["wechat_id"], "wx-openid-1");
    app.client()
        .delete("/api/user/binding/wechat")
        .await
        .err(401, "not_logged_in");

    // An account made by GitHub (no password) keeps its last way in.
    let gh_user = app.client();
    let (state, _) = start(&gh_user, "github").await;
    gh_user
        .get(&format!("/api/oauth/github?code=good-4&state={state}"))
        .await
        .ok();
    gh_user
        .delete("/api/user/binding/github")
        .await
        .err(409, "binding_last_method");
    assert_eq!(
        gh_user.get("/api/user/self").await.ok()["github_id"],
        "1004"
    );
    // Its first password needs no old one; then GitHub may go.
    gh_user
        .put("/api/user/self", json!({"password": "new-password-1"}))
        .await
        .ok();
    assert_eq!(
        gh_user.delete("/api/user/binding/github").await.ok()["github_id"],
        ""
    );
}

/// A fake OpenID Connect provider signing ES256 ID tokens.
struct Idp {
    server: MockServer,
    key: EcdsaKeyPair,
}

impl Idp {
    async fn start() -> Idp {
        let server = MockServer::start().await;
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        Idp { server, key }
    }

    /// Discovery, the key set, userinfo, and a token endpoint answering with this ID token
    /// (everything mounted earlier is dropped).
    async fn answer(&self, id_token: String) {
        self.server.reset().await;
        let issuer = self.server.uri();
        Mock::given(method("GET"))
            .and(path("/.well-known/openid-configuration"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "jwks_uri": format!("{issuer}/jwks"),
                "userinfo_endpoint": format!("{issuer}/userinfo"),
            })))
            .mount(&self.server)
            .await;
        let point = self.key.public_key().as_ref();
        Mock::given(method("GET"))
            .and(path("/jwks"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"keys": [{
                "kty": "EC", "crv": "P-256", "kid": "k1", "use": "sig", "alg": "ES256",
                "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
                "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
            }]})))
            .mount(&self.server)
            .await;
        Mock::given(method("GET"))
            .and(path("/userinfo"))
            .and(header("authorization", "Bearer at-1"))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"sub": "user-42", "preferred_username": "dana", "email": "dana@idp.example", "email_verified": true}),
            ))
            .mount(&self.server)
            .await;
        Mock::given(method("POST"))
            .and(path("/token"))
            .and(body_string_contains("grant_type=authorization_code"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "access_token": "at-1", "token_type": "Bearer", "id_token": id_token
            })))
            .mount(&self.server)
            .await;
    }

    fn sign(&self, claims: &Value, kid: &str) -> String {
        let header = URL_SAFE_NO_PAD.encode(json!({"alg": "ES256", "kid": kid}).to_string());
        let body = URL_SAFE_NO_PAD.encode(claims.to_string());
        let input = format!("{header}.{body}");
        let sig = self
            .key
            .sign(&SystemRandom::new(), input.as_bytes())
            .unwrap();
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[actix_web::test]
async fn oidc_sign_in_with_pkce_nonce_and_id_token_checks() {
    let idp = Idp::start().await;
    let issuer = idp.server.uri();
    // Discovery must answer before the first authorize URL can be made.
    idp.answer(String::new()).await;
    let app = TestApp::new().await;
    set(
        &app,
        &[
            ("OIDCIssuer", json!(issuer)),
            ("OIDCClientId", json!("sb-client")),
            ("OIDCClientSecret", json!("sb-secret")),
            ("OIDCAuthEnabled", json!(true)),
            ("ServerAddress", json!("https://sb.example")),
        ],
    )
    .await;

    let claims = |nonce: &str, over: Value| {
        let mut c = json!({
            "iss": issuer, "aud": "sb-client", "sub": "user-42",
            "exp": now() + 300, "iat": now(), "nonce": nonce,
        });
        for (k, v) in over.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };

    // Each refused token: the sign-in fails with oidc_id_token_invalid and nobody is signed in.
    // (what, why it is refused, claims to change, key id, claims swapped after signing)
    let cases = [
        (
            "bad nonce",
            "wrong nonce",
            json!({"nonce": "someone-elses"}),
            "k1",
            false,
        ),
        (
            "expired",
            "expired",
            json!({"exp": now() - 3600}),
            "k1",
            false,
        ),
        (
            "other audience",
            "not for this client",
            json!({"aud": "another-app"}),
            "k1",
            false,
        ),
        (
            "other issuer",
            "wrong issuer",
            json!({"iss": "https://evil.example"}),
            "k1",
            false,
        ),
        ("unknown key", "no key", json!({}), "k9", false),
        ("tampered claims", "bad signature", json!({}), "k1", true),
    ];
    for (what, why, over, kid, tamper) in cases {
        let c = app.client();
        let (state, url) = start(&c, "oidc").await;
        let nonce = query_of(&url, "nonce");
        let mut token = idp.sign(&claims(&nonce, over), kid);
        if tamper {
            let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
            parts[1] = URL_SAFE_NO_PAD.encode(claims(&nonce, json!({"sub": "admin"})).to_string());
            token = parts.join(".");
        }
        idp.answer(token).await;
        let m = c
            .get(&format!("/api/oauth/oidc?code=c-1&state={state}"))
            .await
            .err(401, "oidc_id_token_invalid");
        assert!(m.contains(why), "{what}: {m}");
        c.get("/api/user/self").await.err(401, "not_logged_in");
    }

    // A good token: signed in, username and address from the userinfo endpoint (the ID token
    // carries neither), and the token request proved the PKCE verifier.
    let c = app.client();
    let (state, url) = start(&c, "oidc").await;
    assert!(url.starts_with(&format!("{issuer}/authorize?")), "{url}");
    assert_eq!(query_of(&url, "code_challenge_method"), "S256");
    assert_eq!(query_of(&url, "scope"), "openid email profile");
    assert_eq!(
        query_of(&url, "redirect_uri"),
        "https://sb.example/oauth/oidc"
    );
    let challenge = query_of(&url, "code_challenge");
    let nonce = query_of(&url, "nonce");
    idp.answer(idp.sign(&claims(&nonce, json!({})), "k1")).await;
    let r = c
        .get(&format!("/api/oauth/oidc?code=c-2&state={state}"))
        .await;
    let user = r.ok().clone();
    assert_eq!(user["username"], "dana");
    assert_eq!(user["email"], "dana@idp.example");
    assert_eq!(user["oidc_id"], "user-42");
    assert_eq!(c.get("/api/user/self").await.ok()["id"], user["id"]);
    let token_calls: Vec<_> = idp
        .server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == "/token")
        .collect();
    let body = String::from_utf8(token_calls.last().unwrap().body.clone()).unwrap();
    let verifier = url::form_urlencoded::parse(body.as_bytes())
        .find(|(k, _)| k == "code_verifier")
        .map(|(_, v)| v.into_owned())
        .expect("the token request carries the PKCE verifier");
    assert_eq!(switchboard_api::oauth::pkce_challenge(&verifier), challenge);
    let auth = token_calls.last().unwrap().headers["authorization"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        auth,
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("sb-client:sb-secret")
        )
    );
}

/// Lark: the authorize page on the accounts origin, the v2 token endpoint and user_info on the
/// open origin; Lark's `code` field (not the HTTP status) says whether a call worked.
#[actix_web::test]
async fn lark_sign_in_and_a_refused_code() {
    let lark = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/open-apis/authen/v2/oauth/token"))
        .and(body_string_contains("\"code\":\"lark-good\""))
        .and(body_string_contains("\"client_secret\":\"lk-secret\""))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"code": 0, "access_token": "u-tok", "token_type": "Bearer"})),
        )
        .with_priority(1)
        .mount(&lark)
        .await;
    Mock::given(method("POST"))
        .and(path("/open-apis/authen/v2/oauth/token"))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"code": 20003, "error": "invalid_grant", "error_description": "The authorization code has expired"}),
        ))
        .with_priority(5)
        .mount(&lark)
        .await;
    Mock::given(method("GET"))
        .and(path("/open-apis/authen/v1/user_info"))
        .and(header("authorization", "Bearer u-tok"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"code": 0, "msg": "success", "data": {
            "open_id": "ou_123", "name": "李雷", "en_name": "lilei", "avatar_url": "https://lark.example/a.png",
            "email": "lilei@lark.example"
        }})))
        .mount(&lark)
        .await;
    let uri = lark.uri();
    let app = TestApp::with_config(|c| {
        c.oauth.lark_accounts = uri.clone();
        c.oauth.lark_open = uri.clone();
    })
    .await;
    set(
        &app,
        &[
            ("LarkClientId", json!("cli_app")),
            ("LarkClientSecret", json!("lk-secret")),
            ("LarkAuthEnabled", json!(true)),
        ],
    )
    .await;

    let c = app.client();
    let (state, url) = start(&c, "lark").await;
    assert!(
        url.starts_with(&format!(
            "{uri}/open-apis/authen/v1/authorize?client_id=cli_app"
        )),
        "{url}"
    );
    // No ServerAddress: the callback is on the origin the console was reached at.
    assert!(
        query_of(&url, "redirect_uri").ends_with("/oauth/lark"),
        "{url}"
    );
    let user = c
        .get(&format!("/api/oauth/lark?code=lark-good&state={state}"))
        .await
        .ok()
        .clone();
    assert_eq!(user["lark_id"], "ou_123");
    assert_eq!(user["username"], "lilei");
    assert_eq!(user["display_name"], "李雷");
    assert_eq!(user["email"], "lilei@lark.example");

    let c2 = app.client();
    let (state, _) = start(&c2, "lark").await;
    let m = c2
        .get(&format!("/api/oauth/lark?code=lark-old&state={state}"))
        .await
        .err(502, "oauth_provider_failed");
    assert!(m.contains("expired"), "{m}");
}
