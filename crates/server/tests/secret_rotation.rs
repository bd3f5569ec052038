//! The real binary and the server secret: channel keys are sealed under SESSION_SECRET, a
//! restart with a new secret and the old one in SESSION_SECRET_PREVIOUS re-seals them, and a
//! secret that opens nothing is reported at start instead of sending garbage upstream.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "rotation-test-root-token-0123456789";
const OLD: &str = "rotation-old-secret-0123456789";
const NEW: &str = "rotation-new-secret-0123456789";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Node {
    child: Child,
    base: String,
}

/// Starts the binary on `dir`'s database with `env`; its log goes to `log`.
fn start(dir: &Path, log: &str, env: &[(&str, &str)]) -> Node {
    let port = free_port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchboard"));
    cmd.current_dir(dir)
        .env(
            "SQL_DSN",
            format!("sqlite://{}", dir.join("s.db").display()),
        )
        .env("DATA_DIR", dir.join("data"))
        .env("PORT", port.to_string())
        .env("HOST", "127.0.0.1")
        .env("INITIAL_ROOT_PASSWORD", "root-password-1")
        .env("INITIAL_ROOT_ACCESS_TOKEN", TOKEN)
        .env("BCRYPT_COST", "4")
        .env("LOG_LEVEL", "warn")
        .env("LEDGER_FLUSH_MS", "50")
        .env("GLOBAL_API_RATE_LIMIT", "0")
        .env_remove("SESSION_SECRET")
        .env_remove("SESSION_SECRET_PREVIOUS")
        .stdout(Stdio::from(std::fs::File::create(dir.join(log)).unwrap()))
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    while reqwest::blocking::get(format!("{base}/api/status")).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "server did not start"
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

fn api(base: &str, method: reqwest::Method, path: &str, body: Value) -> Value {
    reqwest::blocking::Client::new()
        .request(method, format!("{base}{path}"))
        .header("Authorization", TOKEN)
        .json(&body)
        .send()
        .unwrap()
        .json()
        .unwrap()
}

fn chat(base: &str, key: &str) -> u16 {
    reqwest::blocking::Client::new()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(key)
        .json(&json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .unwrap()
        .status()
        .as_u16()
}

fn stored_key(dir: &Path, id: i64) -> String {
    let dsn = format!("sqlite://{}", dir.join("s.db").display());
    let (pool, _) = switchboard_store::conn::connect(&dsn, 1).unwrap();
    switchboard_store::channels::find(&mut pool.get().unwrap(), id)
        .unwrap()
        .key
}

fn opens_under(secret: &str, stored: &str) -> Option<String> {
    switchboard_api::crypto::SecretBox::new(secret.as_bytes(), &[])
        .open(stored)
        .ok()
        .filter(|_| stored.starts_with(switchboard_api::crypto::SEALED_PREFIX))
}

#[test]
fn session_secret_previous_reseals_and_an_unknown_secret_is_reported() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = std::env::temp_dir().join(format!("sb-rotation-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let a = start(&dir, "a.log", &[("SESSION_SECRET", OLD)]);
    let r = api(
        &a.base,
        reqwest::Method::POST,
        "/api/channel",
        json!({"name": "up", "type": 1, "key": "sk-mock-ok", "base_url": upstream.base_url,
               "models": "gpt-4o-mini", "group": "default"}),
    );
    let id = r["data"]["ids"][0].as_i64().unwrap();
    let r = api(
        &a.base,
        reqwest::Method::POST,
        "/api/token",
        json!({"name": "k", "unlimited_quota": true}),
    );
    let key = r["data"]["key"].as_str().unwrap().to_owned();
    assert_eq!(chat(&a.base, &key), 200);
    stop(a);
    assert_eq!(
        opens_under(OLD, &stored_key(&dir, id)).as_deref(),
        Some("sk-mock-ok")
    );

    // A short entry in SESSION_SECRET_PREVIOUS stops start-up with a message naming it.
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .current_dir(&dir)
        .env("SESSION_SECRET", NEW)
        .env("SESSION_SECRET_PREVIOUS", format!("{OLD},short"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SESSION_SECRET_PREVIOUS"));

    // The new secret with the old one listed: re-sealed under the new one, still relays.
    let b = start(
        &dir,
        "b.log",
        &[("SESSION_SECRET", NEW), ("SESSION_SECRET_PREVIOUS", OLD)],
    );
    assert_eq!(chat(&b.base, &key), 200);
    stop(b);
    let resealed = stored_key(&dir, id);
    assert_eq!(opens_under(NEW, &resealed).as_deref(), Some("sk-mock-ok"));
    assert_eq!(opens_under(OLD, &resealed), None);

    // A secret that opens nothing: said at start, and the sealed text never goes upstream.
    let before = upstream.requests().len();
    let c = start(
        &dir,
        "c.log",
        &[("SESSION_SECRET", "rotation-wrong-secret-0123456789")],
    );
    assert_ne!(chat(&c.base, &key), 200);
    stop(c);
    assert_eq!(upstream.requests().len(), before);
    let log = std::fs::read_to_string(dir.join("c.log")).unwrap();
    assert!(
        log.contains("SESSION_SECRET_PREVIOUS") && log.contains(&format!("channel {id}")),
        "{log}"
    );
    assert_eq!(stored_key(&dir, id), resealed, "left for the right secret");
    let _ = std::fs::remove_dir_all(&dir);
}
