//! Request metrics on `/metrics` (HTTP requests by route pattern, relayed calls, upstream errors,
//! retries, the ledger's flush lag) and the request id every answer carries.

use crate::common::TestApp;
use serde_json::{json, Value};

const TOKEN: &str = "scrape-token";

async fn scrape(app: &TestApp) -> String {
    let r = reqwest::Client::new()
        .get(app.url("/metrics"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.text().await.unwrap()
}

/// The value of the sample line `series ` (name with its labels, exactly as rendered).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{series} ")))
        .map(|v| v.parse().unwrap())
}

fn must(text: &str, series: &str) -> f64 {
    sample(text, series).unwrap_or_else(|| panic!("no {series} in\n{text}"))
}

/// The `_bucket` values of one histogram series (labels without `le`), in order, with their
/// bounds.
fn buckets(text: &str, name: &str, labels: &str) -> Vec<(String, f64)> {
    let prefix = format!("{name}_bucket{{{labels},le=\"");
    text.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|rest| {
            let (le, value) = rest.split_once("\"} ").unwrap();
            (le.to_owned(), value.parse().unwrap())
        })
        .collect()
}

/// Checks a histogram series: cumulative buckets ending at +Inf, `_count` equal to `count` and
/// to the +Inf bucket, and a positive `_sum`.
fn histogram(text: &str, name: &str, labels: &str, count: f64) {
    let b = buckets(text, name, labels);
    assert_eq!(b.len(), 16, "{name}{{{labels}}} buckets in\n{text}");
    assert!(b.windows(2).all(|w| w[0].1 <= w[1].1), "cumulative: {b:?}");
    assert_eq!(b.last().unwrap().0, "+Inf");
    assert_eq!(b.last().unwrap().1, count, "{name}{{{labels}}} +Inf");
    assert_eq!(must(text, &format!("{name}_count{{{labels}}}")), count);
    assert!(must(text, &format!("{name}_sum{{{labels}}}")) > 0.0);
}

async fn set_option(app: &TestApp, key: &str, value: Value) {
    app.root()
        .put("/api/option", json!({"key": key, "value": value}))
        .await
        .ok();
}

fn chat(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "hi"}]})
}

#[actix_web::test]
async fn metrics_count_requests_by_route_and_relayed_calls_by_model_channel_and_outcome() {
    let app = TestApp::with_config(|c| c.metrics_token = Some(TOKEN.into())).await;
    let s = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let bad = app
        .channel(&s.upstream.base_url, "sk-mock-500", "gpt-4.1-mini", 10)
        .await;
    let good = app
        .channel(&s.upstream.base_url, "sk-mock-ok", "gpt-4.1-mini", 0)
        .await;
    // A failed channel is not put last, so that the second call tries it first again.
    set_option(&app, "RetryCooldownSeconds", json!(0)).await;
    // Without retries the failure reaches the client.
    let failed = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4.1-mini"))
        .await;
    assert_eq!(failed.status, 500, "{:?}", failed.body);
    // With a retry the second channel answers.
    set_option(&app, "RetryTimes", json!(1)).await;
    let ok = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4.1-mini"))
        .await;
    assert_eq!(ok.status, 200, "{:?}", ok.body);
    // Two users read by id: one route pattern, never the ids.
    let (_, u1) = app.user("metrics-a").await;
    let (_, u2) = app.user("metrics-b").await;
    for id in [u1, u2] {
        let r = app.root().get(&format!("/api/user/{id}")).await;
        assert_eq!(r.status, 200);
        let rid = r.headers["x-request-id"].to_str().unwrap();
        assert_eq!(rid.len(), 24, "every answer carries its request id");
    }
    assert_eq!(app.client().get("/api/no/such/route/77").await.status, 404);
    assert_eq!(app.client().get("/nothing/here/77").await.status, 404);
    // The scrape itself needs the token (METRICS_TOKEN), and a refused scrape is counted.
    let refused = reqwest::get(app.url("/metrics")).await.unwrap();
    assert_eq!(refused.status(), 401);

    let text = scrape(&app).await;
    // HTTP requests by the matched route pattern.
    let chat_route = "route=\"/v1/chat/completions\",method=\"POST\"";
    assert_eq!(
        must(
            &text,
            &format!("switchboard_http_requests_total{{{chat_route},status=\"500\"}}")
        ),
        1.0
    );
    assert_eq!(
        must(
            &text,
            &format!("switchboard_http_requests_total{{{chat_route},status=\"200\"}}")
        ),
        1.0
    );
    histogram(
        &text,
        "switchboard_http_request_duration_seconds",
        chat_route,
        2.0,
    );
    assert_eq!(
        must(
            &text,
            "switchboard_http_requests_total{route=\"/api/user/{id}\",method=\"GET\",status=\"200\"}"
        ),
        2.0
    );
    histogram(
        &text,
        "switchboard_http_request_duration_seconds",
        "route=\"/api/user/{id}\",method=\"GET\"",
        2.0,
    );
    for id in [u1, u2] {
        assert!(
            !text.contains(&format!("/api/user/{id}\"")),
            "a raw path is never a label:\n{text}"
        );
    }
    assert!(
        !text.contains("/77"),
        "a raw path is never a label:\n{text}"
    );
    assert_eq!(
        must(
            &text,
            "switchboard_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"}"
        ),
        2.0,
        "{text}"
    );
    assert_eq!(
        must(
            &text,
            "switchboard_http_requests_total{route=\"/metrics\",method=\"GET\",status=\"401\"}"
        ),
        1.0
    );
    // Relayed calls by model, channel and outcome; their durations.
    let failed_labels = format!("model=\"gpt-4.1-mini\",channel=\"{bad}\"");
    let ok_labels = format!("model=\"gpt-4.1-mini\",channel=\"{good}\"");
    assert_eq!(
        must(
            &text,
            &format!(
                "switchboard_relay_requests_total{{{failed_labels},outcome=\"upstream_error\"}}"
            )
        ),
        1.0
    );
    assert_eq!(
        must(
            &text,
            &format!("switchboard_relay_requests_total{{{ok_labels},outcome=\"success\"}}")
        ),
        1.0
    );
    assert!(sample(
        &text,
        &format!("switchboard_relay_requests_total{{{ok_labels},outcome=\"upstream_error\"}}")
    )
    .is_none());
    histogram(
        &text,
        "switchboard_relay_request_duration_seconds",
        &ok_labels,
        1.0,
    );
    histogram(
        &text,
        "switchboard_relay_request_duration_seconds",
        &failed_labels,
        1.0,
    );
    // The answering attempt's time to the upstream's response head.
    histogram(
        &text,
        "switchboard_upstream_first_byte_seconds",
        &ok_labels,
        1.0,
    );
    // Both failed attempts on the bad channel, with its status; one retry.
    assert_eq!(
        must(
            &text,
            &format!("switchboard_upstream_errors_total{{channel=\"{bad}\",status=\"500\"}}")
        ),
        2.0
    );
    assert!(!text.contains(&format!(
        "switchboard_upstream_errors_total{{channel=\"{good}\""
    )));
    assert_eq!(
        must(
            &text,
            "switchboard_relay_retries_total{model=\"gpt-4.1-mini\"}"
        ),
        1.0
    );
    // The ledger: how far behind its last complete flush is.
    assert!(text.contains("# TYPE switchboard_ledger_flush_lag_seconds gauge"));
    assert!(must(&text, "switchboard_ledger_flush_lag_seconds") <= 5.0);
    // Every metric family is declared once.
    for family in [
        "switchboard_http_requests_total counter",
        "switchboard_http_request_duration_seconds histogram",
        "switchboard_relay_requests_total counter",
        "switchboard_relay_request_duration_seconds histogram",
        "switchboard_upstream_first_byte_seconds histogram",
        "switchboard_upstream_errors_total counter",
        "switchboard_relay_retries_total counter",
    ] {
        assert_eq!(
            text.matches(&format!("# TYPE {family}\n")).count(),
            1,
            "{family}"
        );
    }
}

#[actix_web::test]
async fn a_relayed_call_logs_under_the_id_its_answer_carries() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini"))
        .await;
    assert_eq!(r.status, 200);
    let header = r.headers["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(r.headers.get_all("x-request-id").iter().count(), 1);
    let logs = app.consume_logs(s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].request_id.as_deref(), Some(header.as_str()));
    // A refusal carries one too, and each request its own.
    let refused = app
        .relay("sk-nope", "/v1/chat/completions", chat("gpt-4o-mini"))
        .await;
    assert_eq!(refused.status, 401);
    let other = refused.headers["x-request-id"].to_str().unwrap();
    assert_ne!(other, header);
}
