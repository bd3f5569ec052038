//! Async tasks end to end: Midjourney and Suno through the real app over HTTP, a mock
//! midjourney-proxy / Suno upstream over HTTP, a real database; the poller called directly.

use crate::common::{RelaySetup, Resp, TestApp};
use serde_json::{json, Value};
use switchboard_api::relay::tasks::poll_tasks;
use switchboard_domain::channel::{TYPE_MIDJOURNEY, TYPE_SUNO};
use switchboard_store::{logs, tasks, users};

/// mj_imagine's built-in price: times, ratio 50 -> 1000 * 50 quota per call.
const IMAGINE: i64 = 50_000;
const UPSCALE: i64 = 25_000;
const SUNO_MUSIC: i64 = 50_000;

async fn task_channel(app: &TestApp, s: &RelaySetup, kind: i32, key: &str, models: &str) -> i64 {
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": format!("tasks-{kind}"), "type": kind, "key": key, "base_url": s.upstream.base_url, "models": models, "group": "default"}),
        )
        .await;
    r.ok()["ids"][0].as_i64().unwrap()
}

/// A user with a key, a Midjourney channel and a Suno channel on the mock.
async fn setup(app: &TestApp, quota: i64) -> RelaySetup {
    let s = app
        .relay_setup(quota, json!({"unlimited_quota": true}))
        .await;
    task_channel(
        app,
        &s,
        TYPE_MIDJOURNEY,
        "mj-secret",
        "mj_imagine,mj_upscale,mj_variation",
    )
    .await;
    task_channel(app, &s, TYPE_SUNO, "suno-key", "suno_music,suno_lyrics").await;
    s
}

/// Sends a request with the key in `header` (`Authorization` gets `Bearer `).
async fn send(
    app: &TestApp,
    key: Option<(&str, &str)>,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> Resp {
    let mut rb = reqwest::Client::new().request(method, app.url(path));
    if let Some((header, key)) = key {
        let v = if header == "Authorization" {
            format!("Bearer {key}")
        } else {
            key.to_owned()
        };
        rb = rb.header(header, v);
    }
    if let Some(b) = body {
        rb = rb.json(&b);
    }
    let r = rb.send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Resp {
        status,
        body,
        headers,
    }
}

pub(crate) async fn post(app: &TestApp, key: &str, path: &str, body: Value) -> Resp {
    send(
        app,
        Some(("Authorization", key)),
        reqwest::Method::POST,
        path,
        Some(body),
    )
    .await
}

pub(crate) async fn get(app: &TestApp, key: &str, path: &str) -> Resp {
    send(
        app,
        Some(("Authorization", key)),
        reqwest::Method::GET,
        path,
        None,
    )
    .await
}

async fn imagine(app: &TestApp, key: &str, prompt: &str) -> String {
    let r = post(app, key, "/mj/submit/imagine", json!({"prompt": prompt})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["code"], 1, "{:?}", r.body);
    r.body["result"].as_str().unwrap().to_owned()
}

async fn logs_of(app: &TestApp, user_id: i64, log_type: i32) -> Vec<logs::LogRow> {
    app.flushed().await;
    logs::recent_for_user(&mut app.conn(), user_id, 1000)
        .unwrap()
        .into_iter()
        .filter(|l| l.log_type == log_type)
        .collect()
}

async fn quota_of(app: &TestApp, user_id: i64) -> i64 {
    app.flushed().await;
    users::find(&mut app.conn(), user_id).unwrap().quota
}

#[actix_web::test]
async fn imagine_is_charged_once_fetched_and_polled_to_success() {
    let app = TestApp::new().await;
    let s = setup(&app, 1_000_000).await;
    let id = imagine(&app, &s.key, "a cat").await;
    let seen = s.upstream.requests();
    let submit = seen
        .iter()
        .find(|r| r.path == "/mj/submit/imagine")
        .unwrap();
    assert_eq!(
        submit.authorization, "mj-secret",
        "the channel's secret goes upstream as mj-api-secret, never the client's key"
    );
    assert_eq!(submit.body["prompt"], "a cat");

    let consumed = logs_of(&app, s.user_id, 2).await;
    assert_eq!(consumed.len(), 1);
    assert_eq!(
        (consumed[0].quota, consumed[0].model_name.as_str()),
        (IMAGINE, "mj_imagine")
    );
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - IMAGINE);

    // Fetch through Switchboard (with the Midjourney clients' header), before any poll.
    let r = send(
        &app,
        Some(("mj-api-secret", &s.key)),
        reqwest::Method::GET,
        &format!("/mj/task/{id}/fetch"),
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        (
            r.body["id"].as_str(),
            r.body["status"].as_str(),
            r.body["action"].as_str()
        ),
        (Some(id.as_str()), Some("SUBMITTED"), Some("IMAGINE"))
    );

    let first = poll_tasks(&app.state).await.unwrap();
    assert_eq!((first.checked, first.updated, first.finished), (1, 1, 0));
    let r = get(&app, &s.key, &format!("/mj/task/{id}/fetch")).await;
    assert_eq!(
        (r.body["status"].as_str(), r.body["progress"].as_str()),
        (Some("IN_PROGRESS"), Some("50%"))
    );
    let second = poll_tasks(&app.state).await.unwrap();
    assert_eq!(
        (second.updated, second.finished, second.refunded),
        (1, 1, 0)
    );
    let r = get(&app, &s.key, &format!("/mj/task/{id}/fetch")).await;
    assert_eq!(
        (r.body["status"].as_str(), r.body["progress"].as_str()),
        (Some("SUCCESS"), Some("100%"))
    );
    assert!(r.body["imageUrl"].as_str().unwrap().ends_with(".png"));
    assert_eq!(r.body["promptEn"], "a cat (en)");
    assert_eq!(
        poll_tasks(&app.state).await.unwrap().checked,
        0,
        "finished tasks are not polled"
    );

    let r = post(
        &app,
        &s.key,
        "/mj/task/list-by-condition",
        json!({"ids": [id, "unknown"]}),
    )
    .await;
    assert_eq!(r.body.as_array().map(Vec::len), Some(1), "{:?}", r.body);

    // The image proxy streams the upstream's image.
    let img = reqwest::get(app.url(&format!("/mj/image/{id}")))
        .await
        .unwrap();
    assert_eq!(img.status(), 200);
    assert_eq!(img.headers()["content-type"], "image/png");
    assert!(img.bytes().await.unwrap().starts_with(b"\x89PNG"));

    // A button action on the task goes to the same channel, priced as an upscale.
    let r = post(
        &app,
        &s.key,
        "/mj/submit/action",
        json!({"customId": "MJ::JOB::upsample::1::abc", "taskId": id}),
    )
    .await;
    assert_eq!(r.body["code"], 1, "{:?}", r.body);
    let consumed = logs_of(&app, s.user_id, 2).await;
    assert_eq!(consumed.len(), 2);
    assert_eq!(
        (consumed[0].quota, consumed[0].model_name.as_str()),
        (UPSCALE, "mj_upscale")
    );
    let r = post(
        &app,
        &s.key,
        "/mj/submit/action",
        json!({"customId": "MJ::JOB::upsample::1::abc", "taskId": "not-mine"}),
    )
    .await;
    assert_eq!(r.status, 404, "{:?}", r.body);
}

#[actix_web::test]
async fn a_failed_task_is_refunded_exactly_once() {
    let app = TestApp::new().await;
    let s = setup(&app, 1_000_000).await;
    let id = imagine(&app, &s.key, "a cat that will fail").await;
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - IMAGINE);
    poll_tasks(&app.state).await.unwrap();
    let done = poll_tasks(&app.state).await.unwrap();
    assert_eq!(
        (done.finished, done.refunded, done.refunded_quota),
        (1, 1, IMAGINE)
    );
    let again = poll_tasks(&app.state).await.unwrap();
    assert_eq!((again.checked, again.refunded), (0, 0));
    let r = get(&app, &s.key, &format!("/mj/task/{id}/fetch")).await;
    assert_eq!(r.body["status"], "FAILURE");
    assert_eq!(r.body["failReason"], "mock failure");
    assert_eq!(
        quota_of(&app, s.user_id).await,
        1_000_000,
        "charge given back"
    );
    let refunds = logs_of(&app, s.user_id, 4).await;
    assert_eq!(refunds.len(), 1);
    assert_eq!(
        (refunds[0].quota, refunds[0].model_name.as_str()),
        (IMAGINE, "mj_imagine")
    );
    assert!(refunds[0].content.contains(&id));
    // The ledger sees the refund too: the balance can be spent again at once.
    assert_eq!(
        app.state.relay.ledger.user_balance(s.user_id),
        Some(1_000_000)
    );
    let row = tasks::find_by_task_id(&mut app.conn(), "midjourney", &id, None).unwrap();
    assert!(row.refunded);
}

#[actix_web::test]
async fn a_refused_submit_is_not_charged() {
    let app = TestApp::new().await;
    let s = setup(&app, 1_000_000).await;
    let r = post(
        &app,
        &s.key,
        "/mj/submit/imagine",
        json!({"prompt": "refuse me"}),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body["code"], 24,
        "the upstream's refusal is relayed: {:?}",
        r.body
    );
    let r = post(
        &app,
        &s.key,
        "/suno/submit/music",
        json!({"prompt": "refuse"}),
    )
    .await;
    assert_eq!(r.body["code"], "error", "{:?}", r.body);
    assert!(logs_of(&app, s.user_id, 2).await.is_empty());
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000);
    let listed = s.user.get("/api/mj/self").await;
    assert_eq!(listed.ok()["total_count"], 0);
    // Unknown actions are refused before anything is reserved.
    let r = post(&app, &s.key, "/mj/submit/nothing", json!({"prompt": "x"})).await;
    assert_eq!(
        (r.status, r.body["code"].as_i64()),
        (400, Some(4)),
        "{:?}",
        r.body
    );
}

#[actix_web::test]
async fn key_errors_answer_clearly_in_each_protocol() {
    let app = TestApp::new().await;
    let s = setup(&app, 1_000_000).await;
    let r = send(
        &app,
        None,
        reqwest::Method::POST,
        "/mj/submit/imagine",
        Some(json!({"prompt": "x"})),
    )
    .await;
    assert_eq!(r.status, 401);
    assert_eq!(
        (r.body["code"].as_i64(), r.body["error_code"].as_str()),
        (Some(4), Some("missing_api_key")),
        "{:?}",
        r.body
    );
    assert!(r.body["description"].as_str().unwrap().contains("API key"));
    let r = post(
        &app,
        "sk-not-a-real-key",
        "/mj/submit/imagine",
        json!({"prompt": "x"}),
    )
    .await;
    assert_eq!(
        (r.status, r.body["error_code"].as_str()),
        (401, Some("invalid_api_key"))
    );
    let r = send(&app, None, reqwest::Method::GET, "/suno/fetch/x", None).await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (401, Some("missing_api_key"))
    );

    // A key without quota left.
    let r = s
        .user
        .post(
            "/api/token",
            json!({"name": "empty", "remain_quota": 0, "unlimited_quota": false}),
        )
        .await;
    let empty = r.ok()["key"].as_str().unwrap().to_owned();
    let r = post(&app, &empty, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(
        (r.status, r.body["error_code"].as_str()),
        (402, Some("insufficient_token_quota")),
        "{:?}",
        r.body
    );
    let r = post(&app, &empty, "/suno/submit/music", json!({"prompt": "x"})).await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (402, Some("insufficient_token_quota"))
    );
    // A key limited to other models.
    let r = s
        .user
        .post(
            "/api/token",
            json!({"name": "suno-only", "unlimited_quota": true, "models": "suno_music"}),
        )
        .await;
    let limited = r.ok()["key"].as_str().unwrap().to_owned();
    let r = post(&app, &limited, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(
        (r.status, r.body["error_code"].as_str()),
        (403, Some("model_not_allowed")),
        "{:?}",
        r.body
    );
    assert!(logs_of(&app, s.user_id, 2).await.is_empty());
}

#[actix_web::test]
async fn users_see_only_their_own_tasks_and_admins_filter_and_page() {
    let app = TestApp::new().await;
    let a = setup(&app, 1_000_000).await;
    let b = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let mine = imagine(&app, &a.key, "one").await;
    imagine(&app, &a.key, "two").await;
    let theirs = imagine(&app, &b.key, "three").await;

    let r = get(&app, &b.key, &format!("/mj/task/{mine}/fetch")).await;
    assert_eq!(r.status, 404, "{:?}", r.body);
    let r = post(
        &app,
        &b.key,
        "/mj/task/list-by-condition",
        json!({"ids": [mine, theirs]}),
    )
    .await;
    let ids: Vec<&str> = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![theirs.as_str()]);

    let own = b.user.get("/api/mj/self").await;
    assert_eq!(own.ok()["total_count"], 1);
    assert!(
        own.ok()["data"][0].get("channel_id").is_none(),
        "users do not see channels"
    );
    b.user
        .get(&format!("/api/mj/self?user_id={}", a.user_id))
        .await
        .err(403, "forbidden");
    b.user.get("/api/mj").await.err(403, "forbidden");

    let root = app.root();
    let all = root.get("/api/mj?size=2").await;
    assert_eq!(
        (
            all.ok()["total_count"].as_i64(),
            all.ok()["data"].as_array().map(Vec::len)
        ),
        (Some(3), Some(2))
    );
    let page2 = root.get("/api/mj?size=2&page=2").await;
    assert_eq!(page2.ok()["data"][0]["task_id"], mine, "newest first");
    let by_user = root.get(&format!("/api/mj?user_id={}", a.user_id)).await;
    assert_eq!(by_user.ok()["total_count"], 2);
    let channel = by_user.ok()["data"][0]["channel_id"].as_i64().unwrap();
    let by_channel = root.get(&format!("/api/mj?channel_id={channel}")).await;
    assert_eq!(by_channel.ok()["total_count"], 3);
    let by_task = root.get(&format!("/api/mj?task_id={theirs}")).await;
    assert_eq!(by_task.ok()["data"][0]["user_id"], b.user_id);
    let future = root.get("/api/mj?start_timestamp=9999999999").await;
    assert_eq!(future.ok()["total_count"], 0);
    root.get("/api/mj?size=0").await.err(400, "invalid_size");
    assert_eq!(
        root.get("/api/task").await.ok()["total_count"],
        0,
        "no Suno tasks"
    );
    let mj = root
        .get("/api/task?platform=midjourney&action=imagine")
        .await;
    assert_eq!(mj.ok()["total_count"], 3);
}

#[actix_web::test]
async fn suno_submit_fetch_poll_and_refund() {
    let app = TestApp::new().await;
    let s = setup(&app, 1_000_000).await;
    let r = post(
        &app,
        &s.key,
        "/suno/submit/music",
        json!({"prompt": "a song about tea", "mv": "chirp-v3-5"}),
    )
    .await;
    assert_eq!(r.body["code"], "success", "{:?}", r.body);
    let id = r.body["data"].as_str().unwrap().to_owned();
    let up = s.upstream.requests();
    let submit = up.iter().find(|r| r.path == "/suno/submit/music").unwrap();
    assert_eq!(submit.authorization, "Bearer suno-key");
    let r = post(
        &app,
        &s.key,
        "/suno/submit/lyrics",
        json!({"prompt": "fail please"}),
    )
    .await;
    let failing = r.body["data"].as_str().unwrap().to_owned();

    let consumed = logs_of(&app, s.user_id, 2).await;
    let models: Vec<&str> = consumed.iter().map(|l| l.model_name.as_str()).collect();
    assert_eq!(models, vec!["suno_lyrics", "suno_music"]);
    assert_eq!(consumed[1].quota, SUNO_MUSIC);

    let r = get(&app, &s.key, &format!("/suno/fetch/{id}")).await;
    assert_eq!(
        (r.body["code"].as_str(), r.body["data"]["status"].as_str()),
        (Some("success"), Some("SUBMITTED"))
    );
    poll_tasks(&app.state).await.unwrap();
    let done = poll_tasks(&app.state).await.unwrap();
    assert_eq!((done.finished, done.refunded), (2, 1));
    let r = post(&app, &s.key, "/suno/fetch", json!({"ids": [id, failing]})).await;
    let data = r.body["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    let ok = data.iter().find(|t| t["task_id"] == id.as_str()).unwrap();
    assert_eq!(
        (ok["status"].as_str(), ok["progress"].as_str()),
        (Some("SUCCESS"), Some("100%"))
    );
    assert!(ok["data"][0]["audio_url"]
        .as_str()
        .unwrap()
        .ends_with(".mp3"));
    let bad = data
        .iter()
        .find(|t| t["task_id"] == failing.as_str())
        .unwrap();
    assert_eq!(bad["status"], "FAILURE");
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - SUNO_MUSIC);

    let own = s.user.get("/api/task/self?status=success").await;
    assert_eq!(own.ok()["total_count"], 1);
    assert_eq!(own.ok()["data"][0]["action"], "MUSIC");
    let r = get(&app, &s.key, "/suno/fetch/unknown").await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (404, Some("task_not_found"))
    );
}

#[actix_web::test]
async fn modes_reach_the_upstream_as_path_prefixes() {
    let app = TestApp::new().await;
    let s = setup(&app, 1_000_000).await;
    let r = post(
        &app,
        &s.key,
        "/mj-turbo/submit/imagine",
        json!({"prompt": "fast cat"}),
    )
    .await;
    assert_eq!(r.body["code"], 1, "{:?}", r.body);
    let id = r.body["result"].as_str().unwrap().to_owned();
    assert_eq!(s.upstream.count("/mj-turbo/mj/submit/imagine"), 1);
    let consumed = logs_of(&app, s.user_id, 2).await;
    assert_eq!(
        consumed[0].model_name, "mj_imagine",
        "no mj_turbo_imagine channel or price: the plain model serves"
    );
    poll_tasks(&app.state).await.unwrap();
    assert_eq!(s.upstream.count("/mj-turbo/mj/task/list-by-condition"), 1);
    let r = get(&app, &s.key, &format!("/mj-turbo/task/{id}/fetch")).await;
    assert_eq!(r.body["status"], "IN_PROGRESS");
    let listed = app.root().get(&format!("/api/mj?task_id={id}")).await;
    assert_eq!(listed.ok()["data"][0]["mode"], "turbo");
}

#[actix_web::test]
async fn tasks_past_the_deadline_fail_and_are_refunded() {
    let app = TestApp::new().await;
    let s = setup(&app, 1_000_000).await;
    let id = imagine(&app, &s.key, "a slow cat").await;
    let row = tasks::find_by_task_id(&mut app.conn(), "midjourney", &id, None).unwrap();
    let old = switchboard_store::now() - switchboard_api::relay::tasks::TASK_TIMEOUT_SECS - 60;
    tasks::set_submit_time(&mut app.conn(), row.id, old).unwrap();
    // The upstream still says IN_PROGRESS: past the deadline the task fails all the same.
    let done = poll_tasks(&app.state).await.unwrap();
    assert_eq!((done.finished, done.refunded), (1, 1));
    let r = get(&app, &s.key, &format!("/mj/task/{id}/fetch")).await;
    assert_eq!(r.body["status"], "FAILURE");
    assert!(r.body["failReason"].as_str().unwrap().contains("24 hours"));
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000);
}

#[actix_web::test]
async fn one_node_polls_per_period() {
    use switchboard_api::relay::tasks::{poll_tasks_once, POLL_EVERY};
    let app = TestApp::new().await;
    let first = poll_tasks_once(&app.state, "node-a", POLL_EVERY)
        .await
        .unwrap();
    assert!(first.is_some());
    let second = poll_tasks_once(&app.state, "node-b", POLL_EVERY)
        .await
        .unwrap();
    assert!(second.is_none(), "node-a holds this period");
}

/// How a task fails in [`a_refund_never_exceeds_the_charge`].
#[derive(Clone, Copy)]
enum Ends {
    /// The upstream reports it failed.
    Failed,
    /// Past the deadline (the poller's timeout).
    TimedOut,
}

/// A platform's submit in [`a_refund_never_exceeds_the_charge`]: its channel, route, body, and
/// the task id in the answer.
struct Submit {
    platform: &'static str,
    channel_type: i32,
    channel_key: &'static str,
    models: &'static str,
    path: &'static str,
    body: Value,
    id: fn(&Value) -> Option<String>,
}

fn mj_submit(prompt: &str) -> Submit {
    Submit {
        platform: "midjourney",
        channel_type: TYPE_MIDJOURNEY,
        channel_key: "mj-secret",
        models: "mj_imagine",
        path: "/mj/submit/imagine",
        body: json!({"prompt": prompt}),
        id: |v| v["result"].as_str().map(str::to_owned),
    }
}

fn suno_submit(prompt: &str) -> Submit {
    Submit {
        platform: "suno",
        channel_type: TYPE_SUNO,
        channel_key: "suno-key",
        models: "suno_music",
        path: "/suno/submit/music",
        body: json!({"prompt": prompt, "mv": "chirp-v3-5"}),
        id: |v| v["data"].as_str().map(str::to_owned),
    }
}

/// A key's quota set to 0 while its task is submitted: the balance rule cuts the charge to 0,
/// and when the task then fails (the upstream says so, or the deadline passes) nothing is given
/// back: the refund is at most the charge, never the price. Fails when the task row keeps the
/// uncut price: the user got the price (50,000) more.
async fn a_refund_never_exceeds_the_charge(app: &TestApp, submit: Submit, ends: Ends) {
    let s = app
        .relay_setup(
            1_000_000,
            json!({"unlimited_quota": false, "remain_quota": 1_000_000}),
        )
        .await;
    let port: u16 = s
        .upstream
        .base_url
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let slow = crate::common::SlowLink::start(port, std::time::Duration::from_millis(700)).await;
    let channel = app
        .root()
        .post(
            "/api/channel",
            json!({"name": format!("slow-{}", s.user_id), "type": submit.channel_type,
                "key": submit.channel_key, "base_url": format!("http://127.0.0.1:{}", slow.port),
                "models": submit.models, "group": "default"}),
        )
        .await
        .ok()["ids"][0]
        .as_i64()
        .unwrap();
    let in_flight = {
        let (url, key, body) = (app.url(submit.path), s.key.clone(), submit.body.clone());
        tokio::spawn(async move {
            let r = reqwest::Client::new()
                .post(url)
                .bearer_auth(key)
                .json(&body);
            r.send().await.unwrap().json::<Value>().await.unwrap()
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    s.empty_the_key().await;
    let submitted = in_flight.await.unwrap();
    let id = (submit.id)(&submitted).unwrap_or_else(|| panic!("{submitted}"));
    let charged = logs_of(app, s.user_id, 2).await;
    assert_eq!(charged.len(), 1);
    assert_eq!(charged[0].quota, 0, "the balance rule cut the charge to 0");
    let row = tasks::find_by_task_id(&mut app.conn(), submit.platform, &id, None).unwrap();
    assert_eq!(row.quota, 0, "the task keeps what was charged");
    if let Ends::TimedOut = ends {
        let old = switchboard_store::now() - switchboard_api::relay::tasks::TASK_TIMEOUT_SECS - 60;
        tasks::set_submit_time(&mut app.conn(), row.id, old).unwrap();
    }
    poll_tasks(&app.state).await.unwrap();
    poll_tasks(&app.state).await.unwrap();
    let row = tasks::find_by_task_id(&mut app.conn(), submit.platform, &id, None).unwrap();
    assert_eq!(row.status, "FAILURE");
    assert_eq!(
        quota_of(app, s.user_id).await,
        1_000_000,
        "nothing charged, nothing refunded: no money made"
    );
    assert!(logs_of(app, s.user_id, 4).await.is_empty(), "no refund log");
    let t = switchboard_store::tokens::find(&mut app.conn(), s.token_id).unwrap();
    assert_eq!(t.remain_quota, 0, "the key gets nothing back either");
    // Its upstream goes with this case: the next one must not be sent there.
    app.root()
        .delete(&format!("/api/channel/{channel}"))
        .await
        .ok();
}

/// [`a_refund_never_exceeds_the_charge`] on Midjourney and Suno, failed by the upstream and by
/// the deadline (Kling: `tasks_video`, whose partial refund takes the same charge).
async fn refunds_never_exceed_the_charges(app: TestApp) {
    a_refund_never_exceeds_the_charge(&app, mj_submit("a cat that will fail"), Ends::Failed).await;
    a_refund_never_exceeds_the_charge(&app, suno_submit("a song that will fail"), Ends::Failed)
        .await;
    a_refund_never_exceeds_the_charge(&app, mj_submit("a slow cat"), Ends::TimedOut).await;
}

#[actix_web::test]
async fn a_task_refund_never_exceeds_what_was_charged() {
    refunds_never_exceed_the_charges(TestApp::new().await).await;
    if let Some(app) = TestApp::with_redis(switchboard_store::testing::TestDb::sqlite()).await {
        refunds_never_exceed_the_charges(app).await;
    } else {
        assert!(
            std::env::var("CI").is_err(),
            "TEST_REDIS_URL must be set in CI"
        );
    }
}
