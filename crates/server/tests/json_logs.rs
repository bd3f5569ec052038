//! The real binary with `LOG_FORMAT=json`: every line is JSON, and every line written while a
//! request is served (the relay's warning about a failed upstream, the access log) carries the
//! request's id, the same the client got in `X-Request-Id`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::Value;
use std::time::Duration;

/// The request id a JSON log line was written under (its innermost span's `request_id`).
fn request_id(line: &Value) -> Option<&str> {
    line["span"]["request_id"].as_str()
}

#[test]
fn json_log_lines_carry_the_request_id_the_client_got() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let server = common::Server::start(
        "jsonlogs",
        &[("LOG_FORMAT", "json".into()), ("LOG_LEVEL", "info".into())],
    );
    // A channel that fails (500) before one that answers, and one retry.
    let key = server.failing_then_answering(&upstream.base_url);
    let ids: Vec<String> = (0..2).map(|_| server.chat(&key, &[])).collect();
    assert_ne!(ids[0], ids[1]);
    // Stop the server and read everything it wrote.
    std::thread::sleep(Duration::from_millis(200));
    let out = server.stop();
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
}
