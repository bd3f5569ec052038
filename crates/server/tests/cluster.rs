//! Two real Switchboard processes sharing PostgreSQL and Redis (run when TEST_PG_DSN and
//! TEST_REDIS_URL are set, as CI does): billing stays exact and admission and rate limits hold
//! across nodes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ROOT_TOKEN: &str = "cluster-test-root-token-0123456789";

struct Node {
    child: Child,
    base: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start(dsn: &str, redis: &str, prefix: &str, dir: &std::path::Path) -> Node {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .current_dir(dir)
        // Each node keeps its own files (node id, journal), as on separate machines.
        .env("DATA_DIR", dir.join(format!("data-{port}")))
        .env("SQL_DSN", dsn)
        .env("REDIS_CONN_STRING", redis)
        .env("REDIS_KEY_PREFIX", prefix)
        .env("PORT", port.to_string())
        .env("HOST", "127.0.0.1")
        .env("INITIAL_ROOT_PASSWORD", "root-password-1")
        .env("INITIAL_ROOT_ACCESS_TOKEN", ROOT_TOKEN)
        .env("SESSION_SECRET", "cluster-test-secret-0123456789")
        .env("BCRYPT_COST", "4")
        .env("LOG_LEVEL", "warn")
        .env("LEDGER_FLUSH_MS", "100")
        .env("SYNC_FREQUENCY", "1")
        .env("GLOBAL_API_RATE_LIMIT", "0")
        .env("CRITICAL_RATE_LIMIT", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    while reqwest::blocking::get(format!("{base}/api/status")).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "node did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Node { child, base }
}

fn stop(mut n: Node) {
    Command::new("kill")
        .args(["-TERM", &n.child.id().to_string()])
        .status()
        .unwrap();
    assert!(n.child.wait().unwrap().success());
}

fn call(
    c: &reqwest::blocking::Client,
    method: reqwest::Method,
    url: String,
    auth: &str,
    body: Value,
) -> Value {
    c.request(method, url)
        .header("Authorization", auth)
        .json(&body)
        .send()
        .unwrap()
        .json()
        .unwrap()
}

fn chat(c: &reqwest::blocking::Client, base: &str, key: &str) -> u16 {
    c.post(format!("{base}/v1/chat/completions"))
        .bearer_auth(key)
        .json(&json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .unwrap()
        .status()
        .as_u16()
}

#[test]
fn two_nodes_share_balances_and_limits() {
    let (Some(db), Ok(redis)) = (
        switchboard_store::testing::TestDb::postgres(),
        std::env::var("TEST_REDIS_URL"),
    ) else {
        println!("TEST_PG_DSN or TEST_REDIS_URL not set: the two-node test was not run");
        return;
    };
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = std::env::temp_dir().join(format!("sb-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = format!("sbcluster:{}:", std::process::id());
    let a = start(&db.dsn, &redis, &prefix, &dir);
    let http = reqwest::blocking::Client::new();
    let r = call(
        &http,
        reqwest::Method::POST,
        format!("{}/api/channel", a.base),
        ROOT_TOKEN,
        json!({"name": "up", "type": 1, "key": "sk-mock-ok", "base_url": upstream.base_url, "models": "gpt-4o-mini", "group": "default"}),
    );
    assert_eq!(r["success"], true, "{r}");
    // A user with a small balance, signed in to make two keys.
    let r = call(
        &http,
        reqwest::Method::POST,
        format!("{}/api/user", a.base),
        ROOT_TOKEN,
        json!({"username": "cluster", "password": "password-123", "quota": 1_200}),
    );
    let uid = r["data"]["id"].as_i64().unwrap();
    let user = reqwest::blocking::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    user.post(format!("{}/api/user/login", a.base))
        .json(&json!({"username": "cluster", "password": "password-123"}))
        .send()
        .unwrap();
    let key = |body: Value| -> String {
        let r: Value = user
            .post(format!("{}/api/token", a.base))
            .json(&body)
            .send()
            .unwrap()
            .json()
            .unwrap();
        r["data"]["key"].as_str().unwrap().to_owned()
    };
    let spender = key(json!({"name": "spend", "unlimited_quota": true}));
    let limited = key(json!({"name": "limited", "unlimited_quota": true, "api_rate": 10}));
    let b = start(&db.dsn, &redis, &prefix, &dir);

    // The limit of 10 per minute holds across both nodes.
    let statuses: Vec<u16> = (0..20)
        .map(|i| chat(&http, if i % 2 == 0 { &a.base } else { &b.base }, &limited))
        .collect();
    let ok = statuses.iter().filter(|s| **s == 200).count();
    assert_eq!(ok, 10, "api_rate shared through Redis: {statuses:?}");

    // Many concurrent requests on both nodes against one small balance.
    let bases = [a.base.clone(), b.base.clone()];
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let base = bases[t % 2].clone();
            let key = spender.clone();
            std::thread::spawn(move || {
                let c = reqwest::blocking::Client::new();
                let mut counts = (0usize, 0usize);
                for _ in 0..60 {
                    match chat(&c, &base, &key) {
                        200 => counts.0 += 1,
                        402 => counts.1 += 1,
                        s => panic!("unexpected status {s}"),
                    }
                }
                counts
            })
        })
        .collect();
    let (mut ok, mut refused) = (0, 0);
    for h in handles {
        let (o, r) = h.join().unwrap();
        ok += o;
        refused += r;
    }
    stop(a);
    stop(b);
    let mut c = db.conn();
    let u = switchboard_store::users::find(&mut c, uid).unwrap();
    let spent = switchboard_store::logs::consumed_by_user(&mut c, uid).unwrap();
    assert_eq!(
        u.quota,
        1_200 - spent,
        "balance drop equals the consume logs, exactly"
    );
    assert_eq!(u.used_quota, spent);
    assert!(u.quota >= 0, "nobody overdraws across nodes");
    assert_eq!(u.request_count as usize, ok + 10);
    assert!(
        refused > 0 && ok > 10,
        "the run must exercise admission and refusal ({ok} ok, {refused} refused)"
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&dir);
}
