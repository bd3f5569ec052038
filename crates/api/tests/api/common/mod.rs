//! Test harness: the real actix application on a fresh database, served over real HTTP on
//! 127.0.0.1, driven by reqwest clients with their own cookie jars.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use actix_web::{web, App, HttpServer};
use serde_json::{json, Value};
use std::sync::mpsc;
use switchboard_api::{bootstrap, ApiConfig, AppState};
use switchboard_store::testing::TestDb;

pub const ROOT_PASSWORD: &str = "root-password-1";
pub const ROOT_TOKEN: &str = "root-access-token-0123456789";

pub struct TestApp {
    pub base: String,
    pub state: web::Data<AppState>,
    pub db: TestDb,
    stop: Option<actix_web::dev::ServerHandle>,
}

impl TestApp {
    pub async fn new() -> TestApp {
        Self::with_config(|_| {}).await
    }

    pub async fn with_config(tweak: impl FnOnce(&mut ApiConfig)) -> TestApp {
        Self::on(TestDb::sqlite(), tweak).await
    }

    pub async fn on(db: TestDb, tweak: impl FnOnce(&mut ApiConfig)) -> TestApp {
        Self::build(db, None, tweak).await
    }

    /// An app whose ledger and relay limits live in Redis (`TEST_REDIS_URL`, under a fresh key
    /// prefix), or `None` when Redis is not configured for the run.
    pub async fn with_redis(db: TestDb) -> Option<TestApp> {
        let url = std::env::var("TEST_REDIS_URL")
            .ok()
            .filter(|u| !u.is_empty())?;
        let prefix = format!("sbtest:{}:", unique());
        let shared = switchboard_ledger::shared::Shared::connect(&url, &prefix, "n1")
            .await
            .unwrap();
        Some(Self::build(db, Some(shared), |_| {}).await)
    }

    /// A node of a cluster: the app on `db` (share one database with `TestDb::shared`) with its
    /// ledger, limits and change messages in Redis under `prefix`, named `node`. `None` without
    /// `TEST_REDIS_URL`.
    pub async fn node(db: TestDb, prefix: &str, node: &str) -> Option<TestApp> {
        let url = std::env::var("TEST_REDIS_URL")
            .ok()
            .filter(|u| !u.is_empty())?;
        Some(Self::node_at(db, &url, prefix, node).await)
    }

    /// Like [`TestApp::node`], with the Redis at `url` (a [`PrivateRedis`], say).
    pub async fn node_at(db: TestDb, url: &str, prefix: &str, node: &str) -> TestApp {
        let shared = switchboard_ledger::shared::Shared::connect(url, prefix, node)
            .await
            .unwrap();
        // The nodes of a cluster share the server secret (it seals the channel keys).
        let secret = format!("cluster-secret-{prefix}").into_bytes();
        Self::build(db, Some(shared), |c| c.session_secret = secret).await
    }

    async fn build(
        db: TestDb,
        shared: Option<switchboard_ledger::shared::Shared>,
        tweak: impl FnOnce(&mut ApiConfig),
    ) -> TestApp {
        let mut config = ApiConfig::for_tests();
        tweak(&mut config);
        let mut app_state = AppState::new(db.pool.clone(), db.backend, config).unwrap();
        // As the server does: the ledger's flush on a connection of its own.
        app_state.open_ledger_writer(&db.dsn).unwrap();
        if let Some(sh) = shared {
            app_state.relay.attach(sh);
        }
        let state = web::Data::new(app_state);
        bootstrap::run(&state, Some(ROOT_PASSWORD.into()), Some(ROOT_TOKEN.into()))
            .await
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let st = state.clone();
        let flusher_state = state.clone();
        std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let limit = st.config.max_body_bytes;
                let server = HttpServer::new(move || {
                    App::new()
                        .app_data(st.clone())
                        .app_data(web::PayloadConfig::new(limit + 1))
                        .wrap(actix_web::middleware::from_fn(
                            switchboard_api::headers::security_headers,
                        ))
                        .wrap(actix_web::middleware::from_fn(
                            switchboard_api::observe::observe,
                        ))
                        .configure(switchboard_api::configure)
                })
                .workers(2)
                // The concurrency tests open hundreds of connections at once on a 2-core
                // machine; actix's 5 s default for a request head to arrive (answered with 408,
                // which the client reads as an unexpected message) is a production guard, not
                // part of what these tests check.
                .client_request_timeout(std::time::Duration::from_secs(60))
                .disable_signals()
                .bind(("127.0.0.1", 0))
                .unwrap();
                let addr = server.addrs()[0];
                let server = server.run();
                switchboard_api::relay::spawn_applier(flusher_state.clone());
                switchboard_api::coherence::spawn_subscriber(flusher_state.clone());
                switchboard_api::relay::spawn_flusher(
                    flusher_state,
                    std::time::Duration::from_millis(20),
                );
                tx.send((addr, server.handle())).unwrap();
                let _ = server.await;
            })
        });
        let (addr, handle) = rx.recv().unwrap();
        TestApp {
            base: format!("http://{addr}"),
            state,
            db,
            stop: Some(handle),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// A client with an empty cookie jar.
    pub fn client(&self) -> Client {
        Client {
            http: reqwest::Client::builder()
                .cookie_store(true)
                .build()
                .unwrap(),
            base: self.base.clone(),
            token: None,
        }
    }

    /// A client authenticated with root's access token.
    pub fn root(&self) -> Client {
        let mut c = self.client();
        c.token = Some(ROOT_TOKEN.into());
        c
    }

    /// Registers a user through the API (as a visitor) and returns a client signed in as them.
    pub async fn user(&self, name: &str) -> (Client, i64) {
        let c = self.client();
        let r = c
            .post(
                "/api/user/register",
                json!({"username": name, "password": "password-123"}),
            )
            .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        let id = r.body["data"]["id"].as_i64().unwrap();
        let r = c
            .post(
                "/api/user/login",
                json!({"username": name, "password": "password-123"}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        (c, id)
    }

    /// A signed-in administrator created by root.
    pub async fn admin(&self, name: &str) -> (Client, i64) {
        let r = self
            .root()
            .post(
                "/api/user",
                json!({"username": name, "password": "password-123", "role": 10}),
            )
            .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        let id = r.body["data"]["id"].as_i64().unwrap();
        let c = self.client();
        let r = c
            .post(
                "/api/user/login",
                json!({"username": name, "password": "password-123"}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        (c, id)
    }

    pub fn conn(&self) -> switchboard_store::PooledConn {
        self.db.conn()
    }

    /// A channel's key as stored, which must be sealed, opened with this app's secret.
    pub fn channel_key(&self, id: i64) -> String {
        let stored = switchboard_store::channels::find(&mut self.conn(), id)
            .unwrap()
            .key;
        assert!(
            stored.starts_with(switchboard_api::crypto::SEALED_PREFIX),
            "channel {id}: key stored in clear: {stored}"
        );
        self.state.secret_box.open(&stored).unwrap()
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(h) = self.stop.take() {
            drop(h.stop(false));
        }
    }
}

pub struct Client {
    pub http: reqwest::Client,
    pub base: String,
    pub token: Option<String>,
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Resp {
    /// Asserts an error envelope with this status and code; returns the message.
    pub fn err(&self, status: u16, code: &str) -> String {
        assert_eq!(self.status, status, "{:?}", self.body);
        assert_eq!(self.body["success"], false, "{:?}", self.body);
        assert_eq!(self.body["code"], code, "{:?}", self.body);
        let m = self.body["message"].as_str().unwrap_or_default().to_owned();
        assert!(!m.is_empty(), "error without a message: {:?}", self.body);
        m
    }

    pub fn ok(&self) -> &Value {
        assert!(self.status < 300, "{} {:?}", self.status, self.body);
        assert_eq!(self.body["success"], true, "{:?}", self.body);
        &self.body["data"]
    }
}

impl Client {
    async fn send(&self, rb: reqwest::RequestBuilder) -> Resp {
        let rb = match &self.token {
            Some(t) => rb.header("Authorization", t),
            None => rb,
        };
        let r = rb.send().await.unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Resp {
            status,
            body,
            headers,
        }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.send(self.http.get(format!("{}{path}", self.base)))
            .await
    }

    /// A DELETE as the console sends it (declared JSON, which the CSRF rule asks of browsers).
    pub async fn delete(&self, path: &str) -> Resp {
        self.send(
            self.http
                .delete(format!("{}{path}", self.base))
                .header("Content-Type", "application/json"),
        )
        .await
    }

    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.send(self.http.post(format!("{}{path}", self.base)).json(&body))
            .await
    }

    pub async fn put(&self, path: &str, body: Value) -> Resp {
        self.send(self.http.put(format!("{}{path}", self.base)).json(&body))
            .await
    }

    /// Sends a raw body (for malformed JSON and oversized bodies).
    pub async fn raw(
        &self,
        method: reqwest::Method,
        path: &str,
        body: impl Into<reqwest::Body>,
    ) -> Resp {
        self.send(
            self.http
                .request(method, format!("{}{path}", self.base))
                .header("Content-Type", "application/json")
                .body(body),
        )
        .await
    }
}

/// What the relay tests need: an upstream, a channel to it, a user with a key.
pub struct RelaySetup {
    pub upstream: switchboard_mock_upstream::MockUpstream,
    pub user: Client,
    pub user_id: i64,
    pub key: String,
    pub token_id: i64,
}

impl RelaySetup {
    /// The key's owner sets its remaining quota to 0 (a limited key); asserts it was saved.
    pub async fn empty_the_key(&self) {
        let r = self
            .user
            .put(
                "/api/token",
                json!({"id": self.token_id, "remain_quota": 0, "unlimited_quota": false}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
}

impl TestApp {
    /// Creates a channel (as root) to `base_url` with `key` serving `models`; returns its id.
    pub async fn channel(&self, base_url: &str, key: &str, models: &str, priority: i64) -> i64 {
        let r = self
            .root()
            .post(
                "/api/channel",
                json!({"name": format!("ch-{key}"), "type": 1, "key": key, "base_url": base_url, "models": models, "group": "default", "priority": priority}),
            )
            .await;
        r.ok()["ids"][0].as_i64().unwrap()
    }

    /// A user with `quota`, one key with `key_body` fields, and an upstream with a normal channel
    /// serving gpt-4o-mini and text-embedding-3-small.
    pub async fn relay_setup(&self, quota: i64, key_body: Value) -> RelaySetup {
        let upstream = switchboard_mock_upstream::MockUpstream::start();
        self.channel(
            &upstream.base_url,
            "sk-mock-ok",
            "gpt-4o-mini,text-embedding-3-small",
            0,
        )
        .await;
        let name = format!("u{}", crate::common::unique());
        let r = self
            .root()
            .post(
                "/api/user",
                json!({"username": name, "password": "password-123", "quota": quota}),
            )
            .await;
        let user_id = r.ok()["id"].as_i64().unwrap();
        let user = self.client();
        user.post(
            "/api/user/login",
            json!({"username": name, "password": "password-123"}),
        )
        .await
        .ok();
        let mut body = key_body;
        body["name"] = json!("relay");
        let r = user.post("/api/token", body).await;
        let key = r.ok()["key"].as_str().unwrap().to_owned();
        let token_id = r.ok()["id"].as_i64().unwrap();
        RelaySetup {
            upstream,
            user,
            user_id,
            key,
            token_id,
        }
    }

    /// Sends a relay request with a key.
    pub async fn relay(&self, key: &str, path: &str, body: Value) -> Resp {
        let r = reqwest::Client::new()
            .post(self.url(path))
            .header("Authorization", format!("Bearer {key}"))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Resp {
            status,
            body,
            headers,
        }
    }

    /// Every consume log (type 2) of the user, newest first, after writing what the ledger
    /// holds. All of the user's logs are read and the consume ones kept: a limit of the newest
    /// 1000 let the error logs of a concurrency test's failing channel push consume logs out of
    /// the window (and its count below the admitted).
    pub async fn consume_logs(&self, user_id: i64) -> Vec<switchboard_store::logs::LogRow> {
        self.flushed().await;
        switchboard_store::logs::recent_for_user(&mut self.conn(), user_id, 1_000_000)
            .unwrap()
            .into_iter()
            .filter(|l| l.log_type == 2)
            .collect()
    }

    /// Waits until the ledger has written everything it holds.
    pub async fn flushed(&self) {
        switchboard_api::relay::flush_ledger(&self.state)
            .await
            .unwrap();
    }
}

pub use switchboard_ledger::testing::{redis_configured, unique, PrivateRedis, SlowLink};

/// An app on a [`PrivateRedis`].
pub trait RedisNode {
    /// An app on `db` whose ledger lives in this Redis (a fresh key prefix), as node `n1`.
    async fn node(&self, db: TestDb) -> TestApp;
}

impl RedisNode for PrivateRedis {
    async fn node(&self, db: TestDb) -> TestApp {
        TestApp::node_at(db, &self.url(), &format!("sbpr:{}:", unique()), "n1").await
    }
}
