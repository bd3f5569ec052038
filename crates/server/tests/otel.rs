//! The real binary built with `--features otel`, exporting to a small OTLP/HTTP receiver: a
//! relayed call that continues the caller's `traceparent` arrives as a server span with its
//! request id, route and status, and its two upstream attempts (a 500, then a success) as client
//! spans under it, even with `LOG_LEVEL=warn`; what waits is sent at shutdown.
#![cfg(feature = "otel")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An OTLP/HTTP receiver: keeps the JSON body of every `POST /v1/traces`, answers 200.
fn receiver() -> (u16, Arc<Mutex<Vec<Value>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let got: Arc<Mutex<Vec<Value>>> = Arc::default();
    let keep = Arc::clone(&got);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let keep = Arc::clone(&keep);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut conn = conn;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line
                        .split_whitespace()
                        .nth(1)
                        .unwrap_or_default()
                        .to_owned();
                    let mut length = 0;
                    loop {
                        let mut h = String::new();
                        reader.read_line(&mut h).unwrap();
                        if h.trim().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = h.split_once(':') {
                            if k.eq_ignore_ascii_case("content-length") {
                                length = v.trim().parse().unwrap();
                            }
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    if path == "/v1/traces" {
                        keep.lock()
                            .unwrap()
                            .push(serde_json::from_slice(&body).unwrap());
                    }
                    conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                        .unwrap();
                }
            });
        }
    });
    (port, got)
}

/// An attribute's value as text (OTLP's `stringValue` or `intValue`).
fn attr(span: &Value, key: &str) -> Option<String> {
    let v = &span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)?["value"];
    v["stringValue"]
        .as_str()
        .or(v["intValue"].as_str())
        .map(str::to_owned)
}

#[test]
fn relayed_calls_are_exported_as_traces() {
    let upstream = switchboard_mock_upstream::MockUpstream::start();
    let (otlp_port, received) = receiver();
    let server = common::Server::start(
        "otel",
        &[
            ("LOG_LEVEL", "warn".into()),
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{otlp_port}/"),
            ),
            ("OTEL_BSP_SCHEDULE_DELAY", "100".into()),
            ("OTEL_SERVICE_NAME", "switchboard-test".into()),
        ],
    );
    // Each call fails once (500) and is answered on the retry: two attempts.
    let key = server.failing_then_answering(&upstream.base_url);
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let caller = "00f067aa0ba902b7";
    let first = server.chat(&key, &[("traceparent", format!("00-{trace}-{caller}-01"))]);
    let second = server.chat(&key, &[]);

    // Before shutdown: the batches arrive on their schedule.
    let spans = |received: &Arc<Mutex<Vec<Value>>>| -> Vec<Value> {
        let batches = received.lock().unwrap();
        let mut out = Vec::new();
        for b in batches.iter() {
            let rs = &b["resourceSpans"][0];
            let service = rs["resource"]["attributes"][0].clone();
            assert_eq!(service["key"], "service.name");
            assert_eq!(service["value"]["stringValue"], "switchboard-test");
            for s in rs["scopeSpans"][0]["spans"].as_array().unwrap() {
                out.push(s.clone());
            }
        }
        out
    };
    let waited = Instant::now();
    while !spans(&received)
        .iter()
        .any(|s| attr(s, "request_id").as_deref() == Some(second.as_str()))
    {
        if waited.elapsed() > Duration::from_secs(10) {
            let out = server.stop();
            panic!(
                "no span of the second request arrived: {:#?}\n{}",
                spans(&received),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    server.stop();
    let all = spans(&received);

    let request = |id: &str| {
        let found: Vec<&Value> = all
            .iter()
            .filter(|s| s["name"] == "request" && attr(s, "request_id").as_deref() == Some(id))
            .collect();
        assert_eq!(found.len(), 1, "one server span for {id}: {all:#?}");
        found[0].clone()
    };
    let r1 = request(&first);
    assert_eq!(r1["kind"], 2);
    assert_eq!(r1["traceId"], trace, "the caller's trace continues");
    assert_eq!(r1["parentSpanId"], caller);
    assert_eq!(
        attr(&r1, "http.route").as_deref(),
        Some("/v1/chat/completions")
    );
    assert_eq!(attr(&r1, "http.request.method").as_deref(), Some("POST"));
    assert_eq!(
        attr(&r1, "http.response.status_code").as_deref(),
        Some("200")
    );
    assert!(attr(&r1, "traceparent").is_none());
    let start: u128 = r1["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
    let end: u128 = r1["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
    assert!(end >= start && start > 0);

    let mut attempts: Vec<&Value> = all
        .iter()
        .filter(|s| s["name"] == "upstream" && s["parentSpanId"] == r1["spanId"])
        .collect();
    attempts.sort_by_key(|s| attr(s, "attempt"));
    assert_eq!(
        attempts.len(),
        2,
        "two attempts under the request: {all:#?}"
    );
    for a in &attempts {
        assert_eq!(a["traceId"], trace);
        assert_eq!(a["kind"], 3);
        assert_eq!(
            attr(a, "gen_ai.request.model").as_deref(),
            Some("gpt-4o-mini")
        );
    }
    assert_eq!(
        attr(attempts[0], "http.response.status_code").as_deref(),
        Some("500")
    );
    assert_eq!(attempts[0]["status"]["code"], 2);
    assert_ne!(
        attr(attempts[0], "channel_id"),
        attr(attempts[1], "channel_id")
    );
    assert!(attr(attempts[1], "http.response.status_code").is_none());

    // Without a traceparent: a trace of its own.
    let r2 = request(&second);
    assert_ne!(r2["traceId"], trace);
    assert!(r2.get("parentSpanId").is_none());
    assert_eq!(r2["traceId"].as_str().unwrap().len(), 32);
}
