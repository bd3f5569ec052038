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
        let shared = switchboard_api::relay::shared::Shared::connect(&url, &prefix, "n1")
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
        let shared = switchboard_api::relay::shared::Shared::connect(url, prefix, node)
            .await
            .unwrap();
        // The nodes of a cluster share the server secret (it seals the channel keys).
        let secret = format!("cluster-secret-{prefix}").into_bytes();
        Self::build(db, Some(shared), |c| c.session_secret = secret).await
    }

    async fn build(
        db: TestDb,
        shared: Option<switchboard_api::relay::shared::Shared>,
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

pub fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed) + u64::from(std::process::id()) * 1000
}

/// A Redis server of the test's own (AOF on, so that a restart keeps its data) on a free port,
/// which the test may stop and start again (the system's Redis is never touched).
pub struct PrivateRedis {
    child: Option<std::process::Child>,
    pub port: u16,
    dir: std::path::PathBuf,
}

/// Whether the Redis tests can run (`TEST_REDIS_URL` set). Without it they are skipped with a
/// line naming `what`, outside CI only: CI always sets it, so there a missing Redis fails.
pub fn redis_configured(what: &str) -> bool {
    if std::env::var("TEST_REDIS_URL").is_ok_and(|u| !u.is_empty()) {
        return true;
    }
    assert!(
        std::env::var("CI").is_err(),
        "TEST_REDIS_URL must be set in CI"
    );
    println!("TEST_REDIS_URL not set: {what} not run");
    false
}

impl PrivateRedis {
    pub fn start() -> PrivateRedis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(format!("sb-redis-{}", unique()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = PrivateRedis {
            child: None,
            port,
            dir,
        };
        r.up();
        r
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again) on the same port and directory; waits until it answers.
    pub fn up(&mut self) {
        let child = std::process::Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("redis-server is needed by this test (apt-get install redis-server)");
        self.child = Some(child);
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "redis did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Holds every client's commands for `how_long` (`CLIENT PAUSE … ALL`), as a stalled Redis
    /// would; they run when the pause ends, which is returned.
    pub async fn pause(&self, how_long: std::time::Duration) -> std::time::Instant {
        let mut admin = redis::Client::open(self.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let ends = std::time::Instant::now() + how_long;
        let () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(how_long.as_millis() as u64)
            .arg("ALL")
            .query_async(&mut admin)
            .await
            .unwrap();
        ends
    }

    /// An app on `db` whose ledger lives in this Redis (a fresh key prefix), as node `n1`.
    pub async fn node(&self, db: TestDb) -> TestApp {
        TestApp::node_at(db, &self.url(), &format!("sbpr:{}:", unique()), "n1").await
    }

    /// Restarts the server with nothing kept (as one without persistence restarts): every key
    /// is gone.
    pub fn restart_empty(&mut self) {
        self.down();
        let _ = std::fs::remove_dir_all(&self.dir);
        std::fs::create_dir_all(&self.dir).unwrap();
        self.up();
    }

    /// Kills the server (a crash: open connections are dropped, new ones refused).
    pub fn down(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.down();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A TCP relay to a local port that holds every reply for `delay` before passing it on: a
/// distant server (Redis in another zone). Every round trip takes at least `delay`; commands
/// sent together (a pipeline) still share one. The delay can be changed while it runs
/// ([`SlowLink::set_delay`]: a server that stalls for a while). Runs on the runtime it is
/// started on, for as long as it is kept.
pub struct SlowLink {
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
    delay_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl SlowLink {
    pub async fn start(target: u16, delay: std::time::Duration) -> SlowLink {
        use std::sync::atomic::{AtomicU64, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let delay_ms = std::sync::Arc::new(AtomicU64::new(delay.as_millis() as u64));
        let delays = delay_ms.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let delays = delays.clone();
                tokio::spawn(async move {
                    let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await
                    else {
                        return;
                    };
                    let (mut from_client, mut to_client) = client.into_split();
                    let (mut from_server, mut to_server) = server.into_split();
                    tokio::spawn(async move {
                        let _ = tokio::io::copy(&mut from_client, &mut to_server).await;
                    });
                    // Replies keep their order, each released `delay` (as it was when the reply
                    // arrived) after it arrived.
                    let (tx, mut rx) =
                        tokio::sync::mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
                    tokio::spawn(async move {
                        while let Some((release, bytes)) = rx.recv().await {
                            tokio::time::sleep_until(release).await;
                            if to_client.write_all(&bytes).await.is_err() {
                                return;
                            }
                        }
                    });
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n @ 1..) = from_server.read(&mut buf).await {
                        let delay = std::time::Duration::from_millis(delays.load(Ordering::SeqCst));
                        if tx
                            .send((tokio::time::Instant::now() + delay, buf[..n].to_vec()))
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        SlowLink {
            port,
            task,
            delay_ms,
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Holds the replies that arrive from now on for `delay` (those held already keep theirs).
    pub fn set_delay(&self, delay: std::time::Duration) {
        self.delay_ms.store(
            delay.as_millis() as u64,
            std::sync::atomic::Ordering::SeqCst,
        );
    }
}

impl Drop for SlowLink {
    fn drop(&mut self) {
        self.task.abort();
    }
}
