//! The real binary with `LOG_FORMAT=json`: every line is JSON, and every line written while a
//! request is served (the relay's warning about a failed upstream, the access log) carries the
//! request's id, the same the client got in `X-Request-Id`.
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

/// The request id a JSON log line was written under (its innermost span's `request_id`).
fn request_id(line: &Value) -> Option<&str> {
    line["span"]["request_id"].as_str()
}

#[test]
fn json_log_lines_carry_the_request_id_the_client_got() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let dir = std::env::temp_dir().join(format!("sb-jsonlogs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("s.db");
    let port = free_port();
    let token = "json-logs-test-root-token-0123456789";
    let child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .current_dir(&dir)
        .env("SQL_DSN", format!("sqlite://{}", db.display()))
        .env("PORT", port.to_string())
        .env("HOST", "127.0.0.1")
        .env("INITIAL_ROOT_PASSWORD", "root-password-1")
        .env("INITIAL_ROOT_ACCESS_TOKEN", token)
        .env("SESSION_SECRET", "json-logs-test-secret-0123456789")
        .env("BCRYPT_COST", "4")
        .env("LOG_FORMAT", "json")
        .env("LOG_LEVEL", "info")
        .env("GLOBAL_API_RATE_LIMIT", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::blocking::Client::new();
    let started = Instant::now();
    while http.get(format!("{base}/healthz")).send().is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let api = |method: reqwest::Method, path: &str, body: Value| -> Value {
        let r: Value = http
            .request(method, format!("{base}{path}"))
            .header("Authorization", token)
            .json(&body)
            .send()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(r["success"], true, "{path}: {r}");
        r
    };
    // A channel that fails (500) before one that answers, and one retry.
    for (key, priority) in [("sk-mock-500", 10), ("sk-mock-ok", 0)] {
        api(
            reqwest::Method::POST,
            "/api/channel",
            json!({"name": key, "type": 1, "key": key, "base_url": upstream.base_url,
                   "models": "gpt-4o-mini", "group": "default", "priority": priority}),
        );
    }
    for (key, value) in [("RetryTimes", json!(1)), ("RetryCooldownSeconds", json!(0))] {
        api(
            reqwest::Method::PUT,
            "/api/option",
            json!({"key": key, "value": value}),
        );
    }
    let key = api(
        reqwest::Method::POST,
        "/api/token",
        json!({"name": "k", "unlimited_quota": true}),
    )["data"]["key"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let r = http
            .post(format!("{base}/v1/chat/completions"))
            .bearer_auth(&key)
            .json(&json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .unwrap();
        assert_eq!(r.status(), 200);
        ids.push(r.headers()["x-request-id"].to_str().unwrap().to_owned());
        // Read to the end: the access log line is written when the answer has been sent.
        r.text().unwrap();
    }
    assert_ne!(ids[0], ids[1]);
    // Stop the server and read everything it wrote.
    std::thread::sleep(Duration::from_millis(200));
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "clean exit: {}", out.status);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let message = |l: &Value| {
        l["fields"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    for id in &ids {
        // The failed attempt's warning, in the request's span.
        let warned: Vec<&Value> = lines
            .iter()
            .filter(|l| l["level"] == "WARN" && message(l).starts_with("upstream failed"))
            .filter(|l| request_id(l) == Some(id.as_str()))
            .collect();
        assert_eq!(
            warned.len(),
            1,
            "one failed attempt logged under {id}:\n{stdout}"
        );
        assert_eq!(warned[0]["fields"]["status"], 500);
        // The access log's line, written as the answer ends.
        let access = lines
            .iter()
            .filter(|l| message(l).contains("\"POST /v1/chat/completions\" 200"))
            .filter(|l| request_id(l) == Some(id.as_str()))
            .count();
        assert_eq!(access, 1, "the access log line of {id}:\n{stdout}");
    }
    // No line about the relay is written outside a request.
    for l in &lines {
        let m = message(l);
        if m.starts_with("upstream failed") || m.contains("/v1/chat/completions") {
            let id = request_id(l).unwrap_or_else(|| panic!("no request id: {l}"));
            assert!(ids.iter().any(|i| i == id), "{l}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
