//! The real binary for the server's black-box tests: started on a fresh SQLite database in a
//! temp dir of its own, waited for, called, stopped with SIGTERM.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Root's access token of every started server.
pub const ROOT_TOKEN: &str = "server-test-root-token-0123456789abcdef";

pub struct Server {
    pub child: Child,
    pub base: String,
    pub dir: PathBuf,
    pub http: reqwest::blocking::Client,
}

impl Server {
    /// Starts the binary with `env` on top of the test defaults (fresh database, loopback port,
    /// root's token, a session secret, cheap bcrypt, no global rate limit); stdout and stderr
    /// piped. Waits until `/healthz` answers (30 s at most).
    pub fn start(name: &str, env: &[(&str, String)]) -> Server {
        let dir = std::env::temp_dir().join(format!("sb-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchboard"));
        cmd.current_dir(&dir)
            .env(
                "SQL_DSN",
                format!("sqlite://{}", dir.join("s.db").display()),
            )
            .env("PORT", port.to_string())
            .env("HOST", "127.0.0.1")
            .env("INITIAL_ROOT_PASSWORD", "root-password-1")
            .env("INITIAL_ROOT_ACCESS_TOKEN", ROOT_TOKEN)
            .env("SESSION_SECRET", "server-test-secret-0123456789abcdef")
            .env("BCRYPT_COST", "4")
            .env("GLOBAL_API_RATE_LIMIT", "0")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap();
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            dir,
            http: reqwest::blocking::Client::new(),
        };
        let started = Instant::now();
        while server
            .http
            .get(format!("{}/healthz", server.base))
            .send()
            .is_err()
        {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "server did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// A management call as root; asserts it succeeded and returns its answer.
    pub fn api(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let r: Value = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("Authorization", ROOT_TOKEN)
            .json(&body)
            .send()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(r["success"], true, "{path}: {r}");
        r
    }

    /// Two channels for gpt-4o-mini on the mock at `upstream`: one answering 500 (tried first),
    /// one answering; one retry, no cooldown; returns an unlimited key. Each call then fails
    /// once and is answered on the retry.
    pub fn failing_then_answering(&self, upstream: &str) -> String {
        for (key, priority) in [("sk-mock-500", 10), ("sk-mock-ok", 0)] {
            self.api(
                reqwest::Method::POST,
                "/api/channel",
                json!({"name": key, "type": 1, "key": key, "base_url": upstream,
                       "models": "gpt-4o-mini", "group": "default", "priority": priority}),
            );
        }
        for (key, value) in [("RetryTimes", json!(1)), ("RetryCooldownSeconds", json!(0))] {
            self.api(
                reqwest::Method::PUT,
                "/api/option",
                json!({"key": key, "value": value}),
            );
        }
        self.api(
            reqwest::Method::POST,
            "/api/token",
            json!({"name": "k", "unlimited_quota": true}),
        )["data"]["key"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// A chat completion with `key` (and `headers`); asserts 200, reads the answer to its end
    /// and returns its `X-Request-Id`.
    pub fn chat(&self, key: &str, headers: &[(&str, String)]) -> String {
        let mut rb = self
            .http
            .post(format!("{}/v1/chat/completions", self.base))
            .bearer_auth(key)
            .json(
                &json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}),
            );
        for (k, v) in headers {
            rb = rb.header(*k, v);
        }
        let r = rb.send().unwrap();
        assert_eq!(r.status(), 200);
        let id = r.headers()["x-request-id"].to_str().unwrap().to_owned();
        // Read to the end: the access log line is written when the answer has been sent.
        r.text().unwrap();
        id
    }

    /// Stops the server with SIGTERM; asserts a clean exit and returns what it wrote.
    pub fn stop(self) -> Output {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        let out = self.child.wait_with_output().unwrap();
        assert!(out.status.success(), "clean exit: {}", out.status);
        let _ = std::fs::remove_dir_all(&self.dir);
        out
    }
}
