//! The real binary: consumption still in the ledger when SIGTERM arrives is written before exit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn sigterm_flushes_the_ledger() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = std::env::temp_dir().join(format!("sb-shutdown-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("s.db");
    let port = free_port();
    let token = "shutdown-test-root-token-0123456789";
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .current_dir(&dir)
        .env("SQL_DSN", format!("sqlite://{}", db.display()))
        .env("PORT", port.to_string())
        .env("HOST", "127.0.0.1")
        .env("INITIAL_ROOT_PASSWORD", "root-password-1")
        .env("INITIAL_ROOT_ACCESS_TOKEN", token)
        .env("SESSION_SECRET", "shutdown-test-secret-0123456789")
        .env("BCRYPT_COST", "4")
        .env("LOG_LEVEL", "warn")
        // Nothing is written during the run: everything waits for the shutdown flush.
        .env("LEDGER_FLUSH_MS", "60000")
        .env("GLOBAL_API_RATE_LIMIT", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::blocking::Client::new();
    let started = Instant::now();
    while http.get(format!("{base}/api/status")).send().is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let api = |method: reqwest::Method, path: &str, body: Value| -> Value {
        http.request(method, format!("{base}{path}"))
            .header("Authorization", token)
            .json(&body)
            .send()
            .unwrap()
            .json()
            .unwrap()
    };
    let r = api(
        reqwest::Method::POST,
        "/api/channel",
        json!({"name": "up", "type": 1, "key": "sk-mock-ok", "base_url": upstream.base_url, "models": "gpt-4o-mini", "group": "default"}),
    );
    assert_eq!(r["success"], true, "{r}");
    let key = api(
        reqwest::Method::POST,
        "/api/token",
        json!({"name": "k", "unlimited_quota": true}),
    )["data"]["key"]
        .as_str()
        .unwrap()
        .to_owned();
    for _ in 0..25 {
        let r = http
            .post(format!("{base}/v1/chat/completions"))
            .bearer_auth(&key)
            .json(&json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let before = api(reqwest::Method::GET, "/api/user/self", json!({}))["data"]["used_quota"]
        .as_i64()
        .unwrap();
    assert_eq!(before, 0, "nothing flushed yet");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "clean exit: {status}");
    // Read the database the server left behind.
    let (pool, _) =
        switchboard_store::conn::connect(&format!("sqlite://{}", db.display()), 1).unwrap();
    let mut c = pool.get().unwrap();
    let root = switchboard_store::users::find_by_username(&mut c, "root").unwrap();
    assert_eq!(root.request_count, 25);
    assert_eq!(root.used_quota, 25 * 3);
    assert_eq!(
        switchboard_store::logs::consumed_by_user(&mut c, root.id).unwrap(),
        25 * 3
    );
    assert_eq!(root.quota, 100_000_000 - 25 * 3);
    drop(c);
    drop(pool);
    let _ = std::fs::remove_dir_all(&dir);
}
