//! The real binary under faults: SIGTERM during a long stream, SIGTERM with the database locked,
//! kill -9 with the ledger in Redis, Redis going away mid-settlement, and a second node without
//! Redis on the same database. Nothing served may be lost or counted twice, and no balance may
//! be left reduced by consumption that never reaches the database.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use switchboard_store::{logs, users};

const ROOT_TOKEN: &str = "faults-test-root-token-0123456789";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A scratch directory removed at the end of the test.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!(
            "sb-{name}-{}-{}",
            std::process::id(),
            Instant::now().elapsed().as_nanos()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Node {
    child: Child,
    base: String,
    port: u16,
}

/// Starts the binary on `dsn` with its files in `data`, plus `env`; waits until it answers.
fn spawn(dsn: &str, data: &Path, env: &[(&str, String)], port: u16) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchboard"));
    cmd.current_dir(data)
        .env("DATA_DIR", data)
        .env("SQL_DSN", dsn)
        .env("PORT", port.to_string())
        .env("HOST", "127.0.0.1")
        .env("INITIAL_ROOT_PASSWORD", "root-password-1")
        .env("INITIAL_ROOT_ACCESS_TOKEN", ROOT_TOKEN)
        .env("SESSION_SECRET", "faults-test-secret-0123456789")
        .env("BCRYPT_COST", "4")
        .env("LOG_LEVEL", "warn")
        .env("GLOBAL_API_RATE_LIMIT", "0")
        .env("CRITICAL_RATE_LIMIT", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

fn start(dsn: &str, data: &Path, env: &[(&str, String)]) -> Node {
    let port = free_port();
    let mut child = spawn(dsn, data, env, port);
    let base = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    while reqwest::blocking::get(format!("{base}/api/status")).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the node exited at start: {status}: {}", stderr(&mut child));
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "node did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Node { child, base, port }
}

fn stderr(child: &mut Child) -> String {
    use std::io::Read;
    let mut s = String::new();
    if let Some(e) = child.stderr.as_mut() {
        let _ = e.read_to_string(&mut s);
    }
    s
}

fn signal(n: &Node, sig: &str) {
    Command::new("kill")
        .args([sig, &n.child.id().to_string()])
        .status()
        .unwrap();
}

fn api(base: &str, method: reqwest::Method, path: &str, body: Value) -> Value {
    reqwest::blocking::Client::new()
        .request(method, format!("{base}{path}"))
        .header("Authorization", ROOT_TOKEN)
        .json(&body)
        .send()
        .unwrap()
        .json()
        .unwrap()
}

/// A channel to `upstream` with `key` for `model`, and an unlimited key of root's.
fn setup(base: &str, upstream: &str, key: &str, model: &str) -> String {
    let r = api(
        base,
        reqwest::Method::POST,
        "/api/channel",
        json!({"name": "up", "type": 1, "key": key, "base_url": upstream, "models": model, "group": "default"}),
    );
    assert_eq!(r["success"], true, "{r}");
    api(
        base,
        reqwest::Method::POST,
        "/api/token",
        json!({"name": "k", "unlimited_quota": true}),
    )["data"]["key"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn chat(base: &str, key: &str, model: &str) -> u16 {
    reqwest::blocking::Client::new()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(key)
        .json(&json!({"model": model, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .unwrap()
        .status()
        .as_u16()
}

fn sqlite(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("s.db").display())
}

/// Root's row and the sum of root's consume logs, read from the database left behind.
fn root_state(dsn: &str) -> (users::UserRow, i64, usize) {
    let (pool, _) = switchboard_store::conn::connect(dsn, 1).unwrap();
    let mut c = pool.get().unwrap();
    let root = users::find_by_username(&mut c, "root").unwrap();
    let logs: Vec<logs::LogRow> = logs::recent_for_user(&mut c, root.id, 10_000)
        .unwrap()
        .into_iter()
        .filter(|l| l.log_type == 2)
        .collect();
    let sum = logs.iter().map(|l| l.quota).sum();
    (root, sum, logs.len())
}

const ROOT_QUOTA: i64 = 100_000_000;

#[test]
fn sigterm_during_a_long_stream_bills_what_was_delivered() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = Scratch::new("sigterm-stream");
    let dsn = sqlite(&dir.0);
    // One second of grace: the 4-second stream is cut by the shutdown.
    let node = start(&dsn, &dir.0, &[("SHUTDOWN_TIMEOUT", "1".into())]);
    let key = setup(&node.base, &upstream.base_url, "sk-mock-longslow", "gpt-4o");
    let resp = reqwest::blocking::Client::new()
        .post(format!("{}/v1/chat/completions", node.base))
        .bearer_auth(&key)
        .json(&json!({"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .unwrap();
    assert_eq!(resp.status(), 200);
    let reader = std::thread::spawn(move || {
        let mut received = Vec::new();
        let mut resp = resp;
        let mut buf = [0u8; 4096];
        loop {
            match std::io::Read::read(&mut resp, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
        String::from_utf8_lossy(&received).into_owned()
    });
    std::thread::sleep(Duration::from_millis(700));
    let mut node = node;
    signal(&node, "-TERM");
    let status = node.child.wait().unwrap();
    assert!(status.success(), "clean exit: {status}");
    let received = reader.join().unwrap();
    let words = received.matches("word").count();
    assert!(
        words > 3 && !received.contains("[DONE]"),
        "the stream was cut part-way ({words} chunks)"
    );
    let (root, spent, n) = root_state(&dsn);
    assert_eq!(n, 1, "the cut stream has its consume log");
    assert!(spent > 0, "what was delivered is billed");
    assert_eq!(root.quota, ROOT_QUOTA - spent);
    assert_eq!(root.used_quota, spent);
}

/// A busy node writes its consume records as soon as a full batch waits, not only every
/// `LEDGER_FLUSH_MS` (here a minute, never reached): what is served under load reaches the
/// database and the balances in bounded batches.
#[test]
fn a_full_batch_is_written_without_waiting_for_the_tick() {
    use switchboard_ledger::FLUSH_AT;
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = Scratch::new("full-batch");
    let dsn = sqlite(&dir.0);
    let mut node = start(&dsn, &dir.0, &[("LEDGER_FLUSH_MS", "60000".into())]);
    let key = setup(&node.base, &upstream.base_url, "sk-mock-ok", "gpt-4o-mini");
    let started = Instant::now();
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let (base, key) = (node.base.clone(), key.clone());
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::new();
                let body = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]});
                for _ in (i..FLUSH_AT).step_by(8) {
                    let status = client
                        .post(format!("{base}/v1/chat/completions"))
                        .bearer_auth(&key)
                        .json(&body)
                        .send()
                        .unwrap()
                        .status();
                    assert_eq!(status, 200);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    wait_until("the full batch was written before the tick", || {
        root_state(&dsn).2 == FLUSH_AT
    });
    assert!(
        started.elapsed() < Duration::from_secs(55),
        "not by the tick"
    );
    let (root, spent, _) = root_state(&dsn);
    assert_eq!(
        spent,
        3 * FLUSH_AT as i64,
        "3 quota a request (the mock's usage)"
    );
    assert_eq!((root.quota, root.used_quota), (ROOT_QUOTA - spent, spent));
    // A batch short of full waits for the tick, or for the shutdown, which writes it.
    assert_eq!(chat(&node.base, &key, "gpt-4o-mini"), 200);
    signal(&node, "-TERM");
    assert!(node.child.wait().unwrap().success());
    assert_eq!(root_state(&dsn).2, FLUSH_AT + 1);
}

#[test]
fn sigterm_with_the_database_locked_keeps_records_in_the_journal() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = Scratch::new("sigterm-locked");
    let dsn = sqlite(&dir.0);
    let env = [("LEDGER_FLUSH_MS", "60000".to_owned())];
    let mut node = start(&dsn, &dir.0, &env);
    let key = setup(&node.base, &upstream.base_url, "sk-mock-ok", "gpt-4o-mini");
    for _ in 0..12 {
        assert_eq!(chat(&node.base, &key, "gpt-4o-mini"), 200);
    }
    // Another process holds SQLite's write lock for the whole shutdown.
    let (pool, _) = switchboard_store::conn::connect(&dsn, 1).unwrap();
    let mut lock = pool.get().unwrap();
    switchboard_store::testing::execute_raw(&mut lock, "BEGIN IMMEDIATE");
    signal(&node, "-TERM");
    let status = node.child.wait().unwrap();
    assert!(
        !status.success(),
        "records not in the database: the exit says so ({status})"
    );
    let journal = dir.0.join("ledger-journal.jsonl");
    let kept = std::fs::read_to_string(&journal).unwrap();
    assert_eq!(
        kept.lines().count(),
        12,
        "every served request is journaled"
    );
    diesel::connection::SimpleConnection::batch_execute(&mut *lock, "ROLLBACK").unwrap();
    drop(lock);
    drop(pool);
    let (root, spent, n) = root_state(&dsn);
    assert_eq!(
        (n, root.used_quota),
        (0, 0),
        "nothing reached the database yet"
    );
    // The next start writes them first, once.
    let mut node = start(&dsn, &dir.0, &env);
    assert!(!journal.exists(), "the journal is gone once written");
    let (root, spent_after, n) = root_state(&dsn);
    assert_eq!(n, 12);
    assert_eq!(spent, 0);
    assert_eq!(root.used_quota, spent_after);
    assert_eq!(root.quota, ROOT_QUOTA - spent_after);
    assert_eq!(root.request_count, 12);
    signal(&node, "-TERM");
    assert!(node.child.wait().unwrap().success());
    let (_, again, n) = root_state(&dsn);
    assert_eq!((n, again), (12, spent_after), "written once");
}

#[test]
fn a_second_node_without_redis_refuses_to_start() {
    let dir = Scratch::new("second-node");
    let dsn = sqlite(&dir.0);
    let a_dir = dir.0.join("a");
    let b_dir = dir.0.join("b");
    std::fs::create_dir_all(&a_dir).unwrap();
    std::fs::create_dir_all(&b_dir).unwrap();
    let mut a = start(&dsn, &a_dir, &[]);
    let why = refused(&dsn, &b_dir, &[]);
    assert!(
        why.contains("REDIS_CONN_STRING"),
        "the refusal names the setting: {why}"
    );
    // The first node restarting (same data directory) takes its own claim back at once.
    signal(&a, "-KILL");
    let _ = a.child.wait();
    let mut a = start(&dsn, &a_dir, &[]);
    signal(&a, "-TERM");
    assert!(a.child.wait().unwrap().success());
}

/// Starts a node that must refuse to start: waits for it to exit (30 s at most), asserts it
/// failed and returns what it wrote to stderr.
fn refused(dsn: &str, data: &Path, env: &[(&str, String)]) -> String {
    let mut b = spawn(dsn, data, env, free_port());
    let started = Instant::now();
    let status = loop {
        if let Some(s) = b.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = b.kill();
            panic!("the node kept running: {}", stderr(&mut b));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(!status.success());
    stderr(&mut b)
}

/// Two processes on one data directory (the default `./data`) would share a node id and both
/// hold the local-ledger lease: the second is refused at start. Fails without the data
/// directory's lock: both ran and spent the same balance twice (-100 000 on 50 000).
#[test]
fn a_second_process_on_the_same_data_directory_refuses_to_start() {
    let dir = Scratch::new("same-dir");
    let dsn = sqlite(&dir.0);
    let data = dir.0.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let mut a = start(&dsn, &data, &[]);
    let why = refused(&dsn, &data, &[]);
    assert!(
        why.contains("DATA_DIR"),
        "the refusal names the setting: {why}"
    );
    // The first one is untouched and still serves.
    assert!(reqwest::blocking::get(format!("{}/api/status", a.base))
        .unwrap()
        .status()
        .is_success());
    signal(&a, "-TERM");
    assert!(a.child.wait().unwrap().success());
}

/// The database records which ledger mode its nodes run in: a node with Redis does not start
/// beside a running node without it, nor the other way round. Fails without the record: the
/// second node started and both spent the same balances (-18 974).
#[test]
fn nodes_of_the_two_ledger_modes_never_share_a_database() {
    let Some(redis) = std::env::var("TEST_REDIS_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        assert!(
            std::env::var("CI").is_err(),
            "TEST_REDIS_URL must be set in CI"
        );
        println!("TEST_REDIS_URL not set: ledger modes not run");
        return;
    };
    let dir = Scratch::new("modes");
    let dsn = sqlite(&dir.0);
    let (a_dir, b_dir) = (dir.0.join("a"), dir.0.join("b"));
    std::fs::create_dir_all(&a_dir).unwrap();
    std::fs::create_dir_all(&b_dir).unwrap();
    let with_redis = [
        ("REDIS_CONN_STRING", redis),
        ("REDIS_KEY_PREFIX", format!("modes{}:", free_port())),
    ];
    let mut local = start(&dsn, &a_dir, &[]);
    let why = refused(&dsn, &b_dir, &with_redis);
    assert!(why.contains("in-memory ledger"), "{why}");
    signal(&local, "-TERM");
    assert!(local.child.wait().unwrap().success());
    // The local node stopped cleanly (its claim released): a Redis node may start, and then
    // a node without Redis may not.
    let mut shared = start(&dsn, &b_dir, &with_redis);
    let why = refused(&dsn, &a_dir, &[]);
    assert!(
        why.contains("share balances through Redis") && why.contains("REDIS_CONN_STRING"),
        "{why}"
    );
    signal(&shared, "-TERM");
    assert!(shared.child.wait().unwrap().success());
    let mut local = start(&dsn, &a_dir, &[]);
    signal(&local, "-TERM");
    assert!(local.child.wait().unwrap().success());
}

/// Sets the local-ledger lease to another holder, as a node does that took it over while this
/// one was paused past the lease (or gives it back: `None`).
fn take_local_lease(dsn: &str, holder: Option<&str>) {
    use diesel::RunQueryDsl;
    let (pool, _) = switchboard_store::conn::connect(dsn, 1).unwrap();
    let mut c = pool.get().unwrap();
    let sql = match holder {
        Some(h) => format!(
            "UPDATE job_locks SET holder = '{h}', expires_at = {} WHERE name = 'ledger:local'",
            switchboard_store::now() + 600
        ),
        None => "DELETE FROM job_locks WHERE name = 'ledger:local'".to_owned(),
    };
    assert_eq!(diesel::sql_query(sql).execute(&mut *c).unwrap(), 1);
}

/// The relay's answer: status and error code.
fn chat_code(base: &str, key: &str) -> (u16, String) {
    let r = reqwest::blocking::Client::new()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(key)
        .json(&json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().unwrap_or(Value::Null);
    let code = body["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (status, code)
}

/// A node without Redis whose local-ledger lease another node took over stops admitting relay
/// requests (503 `ledger_lease_lost`) and starts again once the lease is free and its own
/// again. Fails when it keeps serving and only logs: both nodes spent the balances (-18 985).
#[test]
fn a_node_that_lost_its_lease_admits_nothing_until_it_holds_it_again() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = Scratch::new("lease-lost");
    let dsn = sqlite(&dir.0);
    let mut node = start(&dsn, &dir.0, &[]);
    let key = setup(&node.base, &upstream.base_url, "sk-mock-ok", "gpt-4o-mini");
    let (_, _, before) = root_state(&dsn);
    // Every answer the client saw, counted on its side: the consume logs are written behind
    // the answers, so the database is read only after the node has stopped.
    let (mut served, mut refused) = (0, 0);
    let chat = |served: &mut usize, refused: &mut usize| {
        let answer = chat_code(&node.base, &key);
        match answer.0 {
            200 => *served += 1,
            503 => *refused += 1,
            other => panic!("unexpected answer {other} {answer:?}"),
        }
        answer
    };
    assert_eq!(chat(&mut served, &mut refused).0, 200);
    take_local_lease(&dsn, Some("another-node"));
    // Within one renewal (10 s) the node sees it and stops admitting.
    wait_until("the node stopped admitting", || {
        chat(&mut served, &mut refused) == (503, "ledger_lease_lost".to_owned())
    });
    // While the lease is another's, every request is refused.
    for _ in 0..5 {
        assert_eq!(
            chat(&mut served, &mut refused),
            (503, "ledger_lease_lost".to_owned()),
            "a request was admitted while the lease was another's"
        );
    }
    take_local_lease(&dsn, None);
    wait_until("the node admits again", || {
        chat(&mut served, &mut refused).0 == 200
    });
    signal(&node, "-TERM");
    assert!(node.child.wait().unwrap().success());
    let (_, _, n) = root_state(&dsn);
    assert!(refused >= 6, "{refused}");
    assert_eq!(
        n - before,
        served,
        "a refused request was served (billed) all the same"
    );
}

/// A private Redis (AOF on, so that a restart keeps its data) on a free port.
struct PrivateRedis {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl PrivateRedis {
    fn start(dir: &Path, port: u16) -> PrivateRedis {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--dir",
                &dir.display().to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is needed by this test (apt-get install redis-server)");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "redis did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        PrivateRedis {
            child,
            port,
            dir: dir.to_owned(),
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn restart(&mut self) {
        self.kill();
        *self = PrivateRedis::start(&self.dir.clone(), self.port);
    }

    /// A field of root's account hash.
    fn field(&self, prefix: &str, uid: i64, field: &str) -> Option<i64> {
        let out = Command::new("redis-cli")
            .args([
                "-p",
                &self.port.to_string(),
                "HGET",
                &format!("{prefix}u:{uid}"),
                field,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    /// The sum of every node's unwritten consumption on root's account.
    fn unflushed(&self, prefix: &str, uid: i64) -> i64 {
        let all = self.fields(prefix, uid);
        let lines: Vec<&str> = all.lines().collect();
        lines
            .chunks(2)
            .filter(|kv| kv[0].starts_with("uf:"))
            .filter_map(|kv| kv.get(1)?.trim().parse::<i64>().ok())
            .sum()
    }

    fn fields(&self, prefix: &str, uid: i64) -> String {
        let out = Command::new("redis-cli")
            .args([
                "-p",
                &self.port.to_string(),
                "HGETALL",
                &format!("{prefix}u:{uid}"),
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.kill();
    }
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ok() {
        assert!(started.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn kill_9_with_the_ledger_in_redis_then_restart_converges_on_the_database() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = Scratch::new("kill9-redis");
    let dsn = sqlite(&dir.0);
    let redis_dir = dir.0.join("redis");
    std::fs::create_dir_all(&redis_dir).unwrap();
    let redis = PrivateRedis::start(&redis_dir, free_port());
    let prefix = "k9:";
    let env = [
        ("REDIS_CONN_STRING", redis.url()),
        ("REDIS_KEY_PREFIX", prefix.to_owned()),
        // Nothing reaches the database before the kill.
        ("LEDGER_FLUSH_MS", "60000".to_owned()),
    ];
    let mut node = start(&dsn, &dir.0, &env);
    let key = setup(&node.base, &upstream.base_url, "sk-mock-ok", "gpt-4o-mini");
    for _ in 0..10 {
        assert_eq!(chat(&node.base, &key, "gpt-4o-mini"), 200);
    }
    let (root, _, _) = root_state(&dsn);
    wait_until("Redis charged the requests", || {
        redis.field(prefix, root.id, "bal") == Some(ROOT_QUOTA - 30)
    });
    signal(&node, "-KILL");
    let _ = node.child.wait();
    // The ten requests never reached the database: Redis must not keep them against the user.
    let node = start(&dsn, &dir.0, &env);
    let (root, spent, n) = root_state(&dsn);
    assert_eq!((n, spent, root.quota), (0, 0, ROOT_QUOTA));
    assert_eq!(
        redis.field(prefix, root.id, "bal"),
        Some(ROOT_QUOTA),
        "the balance is the database's again: {}",
        redis.fields(prefix, root.id)
    );
    assert_eq!(redis.field(prefix, root.id, "res"), Some(0));
    let mut node = node;
    assert_eq!(chat(&node.base, &key, "gpt-4o-mini"), 200);
    signal(&node, "-TERM");
    assert!(node.child.wait().unwrap().success());
    let (root, spent, n) = root_state(&dsn);
    assert_eq!((n, spent), (1, 3));
    assert_eq!(redis.field(prefix, root.id, "bal"), Some(root.quota));
}

#[test]
fn redis_going_away_mid_settlement_loses_and_creates_nothing() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = Scratch::new("redis-away");
    let dsn = sqlite(&dir.0);
    let redis_dir = dir.0.join("redis");
    std::fs::create_dir_all(&redis_dir).unwrap();
    let mut redis = PrivateRedis::start(&redis_dir, free_port());
    let prefix = "away:";
    let env = [
        ("REDIS_CONN_STRING", redis.url()),
        ("REDIS_KEY_PREFIX", prefix.to_owned()),
        ("LEDGER_FLUSH_MS", "100".to_owned()),
    ];
    let mut node = start(&dsn, &dir.0, &env);
    let key = setup(&node.base, &upstream.base_url, "sk-mock-longslow", "gpt-4o");
    // A 4-second stream is admitted (reserved in Redis); Redis dies while it runs.
    let base = node.base.clone();
    let k = key.clone();
    let stream = std::thread::spawn(move || {
        let r = reqwest::blocking::Client::new()
            .post(format!("{base}/v1/chat/completions"))
            .bearer_auth(&k)
            .json(&json!({"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .unwrap();
        let status = r.status().as_u16();
        let body = r.text().unwrap_or_default();
        (status, body.contains("[DONE]"))
    });
    std::thread::sleep(Duration::from_millis(500));
    redis.kill();
    // While Redis is away, new requests are refused cleanly (nothing can be reserved).
    let r = reqwest::blocking::Client::new()
        .post(format!("{}/v1/chat/completions", node.base))
        .bearer_auth(&key)
        .timeout(Duration::from_secs(10))
        .json(&json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 503);
    let (status, done) = stream.join().unwrap();
    assert_eq!((status, done), (200, true), "the stream itself finished");
    // Its settlement could not reach Redis: the consume record is written anyway.
    wait_until("the record reached the database", || {
        root_state(&dsn).2 == 1
    });
    redis.restart();
    let (root, spent, _) = root_state(&dsn);
    assert!(spent > 0);
    assert_eq!(root.quota, ROOT_QUOTA - spent);
    // Once Redis is back, the settlement and the flush are applied (once): the reservation is
    // released and Redis agrees with the database.
    wait_until("Redis caught up", || {
        redis.field(prefix, root.id, "res") == Some(0)
            && redis.field(prefix, root.id, "bal") == Some(root.quota)
            && redis.unflushed(prefix, root.id) == 0
    });
    assert_eq!(chat(&node.base, &key, "gpt-4o"), 200);
    signal(&node, "-TERM");
    assert!(node.child.wait().unwrap().success());
    let (root, spent, n) = root_state(&dsn);
    assert_eq!(n, 2);
    assert_eq!(root.quota, ROOT_QUOTA - spent);
    assert_eq!(redis.field(prefix, root.id, "bal"), Some(root.quota));
    let _ = node.port;
}
