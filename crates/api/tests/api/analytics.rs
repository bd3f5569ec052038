//! Admin analytics over HTTP: numbers from the daily rollup equal the consume logs written by
//! real relay requests; roles, period bounds, bad input and the CSV export.

use crate::common::{RelaySetup, TestApp};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use switchboard_domain::log::day_start;
use switchboard_store::logs::{self, ConsumeRecord};
use switchboard_store::now;

const FIELDS: [&str; 4] = [
    "quota",
    "request_count",
    "prompt_tokens",
    "completion_tokens",
];

async fn call(app: &TestApp, key: &str, model: &str) {
    let (path, body) = if model.starts_with("text-embedding") {
        (
            "/v1/embeddings",
            json!({"model": model, "input": "hello there"}),
        )
    } else {
        (
            "/v1/chat/completions",
            json!({"model": model, "messages": [{"role": "user", "content": "Say hello"}]}),
        )
    };
    let r = app.relay(key, path, body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

/// Two users, two models: a makes 3 chats and 2 embeddings, b makes 2 chats and 1 embedding.
async fn traffic(app: &TestApp) -> (RelaySetup, RelaySetup) {
    let a = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let b = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    for _ in 0..3 {
        call(app, &a.key, "gpt-4o-mini").await;
    }
    for _ in 0..2 {
        call(app, &a.key, "text-embedding-3-small").await;
        call(app, &b.key, "gpt-4o-mini").await;
    }
    call(app, &b.key, "text-embedding-3-small").await;
    app.flushed().await;
    (a, b)
}

/// Every consume log, as root sees them.
async fn consume_logs(app: &TestApp) -> Vec<Value> {
    let r = app.root().get("/api/log?type=2&size=100").await;
    r.ok()["data"].as_array().unwrap().clone()
}

fn sums<'a>(logs: impl IntoIterator<Item = &'a Value>) -> BTreeMap<&'static str, i64> {
    let mut m: BTreeMap<&'static str, i64> = FIELDS.iter().map(|f| (*f, 0)).collect();
    for l in logs {
        *m.get_mut("request_count").unwrap() += 1;
        for f in ["quota", "prompt_tokens", "completion_tokens"] {
            *m.get_mut(f).unwrap() += l[f].as_i64().unwrap();
        }
    }
    m
}

fn fields(v: &Value) -> BTreeMap<&'static str, i64> {
    FIELDS
        .iter()
        .map(|f| (*f, v[*f].as_i64().unwrap_or_else(|| panic!("{f} in {v}"))))
        .collect()
}

#[actix_web::test]
async fn analytics_equal_the_consume_logs() {
    let app = TestApp::new().await;
    let (a, b) = traffic(&app).await;
    let (admin, _) = app.admin("analyst").await;
    let logs = consume_logs(&app).await;
    assert_eq!(logs.len(), 8);
    let expected = sums(&logs);
    assert!(expected["quota"] > 0 && expected["prompt_tokens"] > 0);

    // Totals and the overview counts.
    let s = admin.get("/api/analytics/statistics").await;
    let s = s.ok().clone();
    assert_eq!(fields(&s), expected, "{s}");
    assert_eq!(s["users"], 2);
    let channels: BTreeSet<i64> = logs
        .iter()
        .map(|l| l["channel_id"].as_i64().unwrap())
        .collect();
    assert_eq!(s["channels"], channels.len());
    let total_users = app.root().get("/api/user?size=1").await.ok()["total_count"].clone();
    assert_eq!(s["total_users"], total_users);
    assert_eq!(s["total_channels"], 2);
    assert_eq!(s["enabled_channels"], 2);
    assert_eq!(s["days"], 7);
    assert_eq!(s["end_day"], day_start(now()));
    // Disabling a channel shows in the overview.
    let ch = *channels.iter().next().unwrap();
    app.root()
        .put("/api/channel/status", json!({"id": ch, "status": 2}))
        .await
        .ok();
    let s2 = admin.get("/api/analytics/statistics").await;
    assert_eq!(s2.ok()["enabled_channels"], 1);

    // Per day and per model.
    let p = admin.get("/api/analytics/period").await;
    let p = p.ok().clone();
    let by_day = p["by_day"].as_array().unwrap();
    assert_eq!(by_day.len(), 7, "every day of the period, zeros included");
    let today = day_start(now());
    let last = by_day.last().unwrap();
    assert_eq!(last["day"], today);
    assert_eq!(fields(last), expected);
    assert!(by_day[..6].iter().all(|d| d["quota"] == 0));
    let by_model = p["by_model"].as_array().unwrap();
    assert_eq!(by_model.len(), 2);
    for m in by_model {
        let name = m["model_name"].as_str().unwrap();
        let want = sums(logs.iter().filter(|l| l["model_name"] == name));
        assert_eq!(fields(m), want, "{name}");
    }
    assert!(by_model[0]["quota"].as_i64() >= by_model[1]["quota"].as_i64());
    let series = p["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    assert!(series.iter().all(|r| r["day"] == today));

    // Per user, most quota first, paged.
    let u = admin.get("/api/analytics/users").await;
    let u = u.ok().clone();
    assert_eq!(
        (u["page"].as_i64(), u["size"].as_i64()),
        (Some(1), Some(10))
    );
    assert_eq!(u["total_count"], 2);
    // The period beside the page.
    for k in ["start_day", "end_day", "days"] {
        assert!(u[k].is_i64(), "{k}: {u}");
    }
    let data = u["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert!(data[0]["quota"].as_i64() >= data[1]["quota"].as_i64());
    for row in data {
        let id = row["user_id"].as_i64().unwrap();
        assert!(id == a.user_id || id == b.user_id);
        let theirs: Vec<&Value> = logs.iter().filter(|l| l["user_id"] == id).collect();
        assert_eq!(fields(row), sums(theirs.iter().copied()), "user {id}");
        assert_eq!(row["username"], theirs[0]["username"]);
        assert_eq!(
            row["tokens"].as_i64().unwrap(),
            row["prompt_tokens"].as_i64().unwrap() + row["completion_tokens"].as_i64().unwrap()
        );
    }
    let p1 = admin.get("/api/analytics/users?size=1").await;
    let p2 = admin.get("/api/analytics/users?size=1&page=2").await;
    let p3 = admin.get("/api/analytics/users?size=1&page=3").await;
    assert_eq!(p1.ok()["data"][0]["user_id"], data[0]["user_id"]);
    assert_eq!(p2.ok()["data"][0]["user_id"], data[1]["user_id"]);
    assert_eq!(p2.ok()["total_count"], 2);
    assert_eq!(p3.ok()["data"].as_array().unwrap().len(), 0);

    // A period before the traffic is empty; one ending today counts it all.
    let old = admin
        .get("/api/analytics/statistics?start_timestamp=1600000000&end_timestamp=1600100000")
        .await;
    let old = old.ok().clone();
    assert!(FIELDS.iter().all(|f| old[*f] == 0), "{old}");
    assert_eq!(
        (old["users"].as_i64(), old["days"].as_i64()),
        (Some(0), Some(2))
    );
    let today_only = admin
        .get(&format!(
            "/api/analytics/statistics?start_timestamp={}&end_timestamp={}",
            today + 3600,
            today + 7200
        ))
        .await;
    assert_eq!(fields(today_only.ok()), expected);
    let yesterday = admin
        .get(&format!(
            "/api/analytics/statistics?start_timestamp={}&end_timestamp={}",
            today - 86_400,
            today - 1
        ))
        .await;
    assert_eq!(yesterday.ok()["request_count"], 0);
}

#[actix_web::test]
async fn roles_and_bad_input() {
    let app = TestApp::new().await;
    let (user, _) = app.user("plain").await;
    let (admin, _) = app.admin("boss").await;
    let anon = app.client();
    for path in [
        "/api/analytics/statistics",
        "/api/analytics/period",
        "/api/analytics/users",
        "/api/analytics/export.csv",
    ] {
        assert_eq!(anon.get(path).await.status, 401, "{path}");
        user.get(path).await.err(403, "forbidden");
        assert_eq!(admin.get(path).await.status, 200, "{path}");
        assert_eq!(app.root().get(path).await.status, 200, "{path}");

        let q = |s: &str| format!("{path}?{s}");
        admin
            .get(&q("start_timestamp=1700100000&end_timestamp=1700000000"))
            .await
            .err(400, "invalid_range");
        // 367 days is one too many; 366 is fine.
        let start = 1_700_006_400; // a day start
        admin
            .get(&q(&format!(
                "start_timestamp={start}&end_timestamp={}",
                start + 366 * 86_400
            )))
            .await
            .err(400, "range_too_long");
        assert_eq!(
            admin
                .get(&q(&format!(
                    "start_timestamp={start}&end_timestamp={}",
                    start + 365 * 86_400 + 86_399
                )))
                .await
                .status,
            200
        );
        admin
            .get(&q("start_timestamp=yesterday"))
            .await
            .err(400, "invalid_query");
        admin
            .get(&q("end_timestamp=1.5"))
            .await
            .err(400, "invalid_query");
        admin
            .get(&q("start_timestamp=-3"))
            .await
            .err(400, "invalid_range");
        // No end: the period ends today, so a start in the future is after it.
        admin
            .get(&q(&format!("start_timestamp={}", now() + 3 * 86_400)))
            .await
            .err(400, "invalid_range");
        // Empty values mean the default period.
        assert_eq!(
            admin
                .get(&q("start_timestamp=&end_timestamp="))
                .await
                .status,
            200
        );
    }
    admin
        .get("/api/analytics/users?size=101")
        .await
        .err(400, "invalid_size");
    admin
        .get("/api/analytics/users?page=0")
        .await
        .err(400, "invalid_page");
    admin
        .get("/api/analytics/users?page=x")
        .await
        .err(400, "invalid_query");
}

#[actix_web::test]
async fn csv_export_has_the_rows_with_quoted_model_names() {
    let app = TestApp::new().await;
    let (a, _b) = traffic(&app).await;
    // A model name that needs quoting, written as the ledger writes it (log and rollup).
    let odd = "odd, \"quoted\" model";
    logs::settle_batch(
        &mut app.conn(),
        &[ConsumeRecord {
            request_id: Some("csv-odd".into()),
            created_at: now(),
            log_type: 2,
            user_id: a.user_id,
            username: "a".into(),
            token_id: a.token_id,
            token_name: "relay".into(),
            channel_id: 0,
            model_name: odd.into(),
            group_name: "default".into(),
            quota: 777,
            prompt_tokens: 11,
            completion_tokens: 22,
            use_time_ms: 10,
            first_response_ms: 5,
            is_stream: false,
            source_ip: "127.0.0.1".into(),
            content: String::new(),
            metadata: "{}".into(),
            cache_hit: false,
        }],
    )
    .unwrap();
    let r = app.root().get("/api/analytics/export.csv").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "text/csv; charset=utf-8");
    assert!(r.headers["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("attachment; filename=\"analytics-"));
    let text = r.body.as_str().unwrap().to_owned();
    let lines: Vec<&str> = text.split_terminator("\r\n").collect();
    assert_eq!(
        lines[0],
        "date,day,model_name,request_count,quota,prompt_tokens,completion_tokens"
    );
    assert_eq!(lines.len(), 4, "{text}");
    let today = day_start(now());
    let date = {
        let p = app.root().get("/api/analytics/period").await;
        assert_eq!(p.ok()["end_day"], today);
        // `YYYY-MM-DD` of today, from the rows themselves.
        lines[1].split(',').next().unwrap().to_owned()
    };
    assert_eq!(date.len(), 10);
    assert!(lines[1..]
        .iter()
        .all(|l| l.starts_with(&format!("{date},{today},"))));
    let odd_line = format!("{date},{today},\"odd, \"\"quoted\"\" model\",1,777,11,22");
    assert!(lines.contains(&odd_line.as_str()), "{text}");
    // The other rows equal the consume logs per model.
    let logs = consume_logs(&app).await;
    for model in ["gpt-4o-mini", "text-embedding-3-small"] {
        let s = sums(logs.iter().filter(|l| l["model_name"] == model));
        let want = format!(
            "{date},{today},{model},{},{},{},{}",
            s["request_count"], s["quota"], s["prompt_tokens"], s["completion_tokens"]
        );
        assert!(lines.contains(&want.as_str()), "{want} in {text}");
    }
    // An empty period is just the header.
    let r = app
        .root()
        .get("/api/analytics/export.csv?start_timestamp=1600000000&end_timestamp=1600000001")
        .await;
    assert_eq!(
        r.body.as_str().unwrap(),
        "date,day,model_name,request_count,quota,prompt_tokens,completion_tokens\r\n"
    );
    // Bad input answers the JSON error envelope.
    app.root()
        .get("/api/analytics/export.csv?start_timestamp=2&end_timestamp=1")
        .await
        .err(400, "invalid_range");
}
