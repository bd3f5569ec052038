//! Video tasks (issue #18, part 2): Kling's API through the real app over HTTP, a mock Kling
//! upstream over HTTP, a real database; the poller called directly.

use crate::common::{RelaySetup, Resp, TestApp};
use crate::tasks::{get, post};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use switchboard_api::relay::tasks::poll_tasks;
use switchboard_domain::channel::TYPE_KLING;
use switchboard_store::{logs, users};

const ACCESS: &str = "kling-access-key";
const SECRET: &str = "kling-secret-key";

async fn kling_setup(app: &TestApp, quota: i64) -> RelaySetup {
    let s = app
        .relay_setup(quota, json!({"unlimited_quota": true}))
        .await;
    let r = app
        .root()
        .post(
            "/api/channel",
            json!({"name": "kling", "type": TYPE_KLING, "key": format!("{ACCESS}|{SECRET}"),
                "base_url": s.upstream.base_url,
                "models": "kling-video_kling-v1_std_5,kling-video_kling-v1_pro,kling-video_kling-v1_std",
                "group": "default"}),
        )
        .await;
    r.ok();
    // Per call for 5 s std; per second for pro (and for 10 s std, which has no per-call row).
    for (model, ratio) in [
        ("kling-video_kling-v1_std_5", 70.0),
        ("kling-video_kling-v1_pro", 20.0),
        ("kling-video_kling-v1_std", 15.0),
    ] {
        app.root()
            .post(
                "/api/prices",
                json!({"model": model, "type": "times", "channel_type": TYPE_KLING, "input": ratio}),
            )
            .await
            .ok();
    }
    s
}

/// Submits a text-to-video task.
async fn text2video(app: &TestApp, key: &str, body: Value) -> Resp {
    post(app, key, "/kling/v1/videos/text2video", body).await
}

async fn consumed(app: &TestApp, user_id: i64) -> Vec<logs::LogRow> {
    app.flushed().await;
    logs::recent_for_user(&mut app.conn(), user_id, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.log_type == 2)
        .collect()
}

async fn quota_of(app: &TestApp, user_id: i64) -> i64 {
    app.flushed().await;
    users::find(&mut app.conn(), user_id).unwrap().quota
}

/// Checks the token Kling got: a JWT signed HS256 with the secret key, `iss` the access key,
/// valid now.
fn assert_kling_token(authorization: &str) {
    let token = authorization.strip_prefix("Bearer ").unwrap();
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "{token}");
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header: Value = serde_json::from_slice(&b64.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(header["alg"], "HS256");
    let claims: Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
    assert_eq!(claims["iss"], ACCESS);
    let now = switchboard_store::now();
    assert!(claims["nbf"].as_i64().unwrap() <= now);
    assert!(claims["exp"].as_i64().unwrap() > now + 60);
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{}.{}", parts[0], parts[1]).as_bytes());
    mac.verify_slice(&b64.decode(parts[2]).unwrap())
        .expect("signed with the channel's secret key");
    assert!(!token.contains(SECRET), "the secret never travels");
}

#[actix_web::test]
async fn a_video_is_submitted_charged_polled_to_success_and_fetched() {
    let app = TestApp::new().await;
    let s = kling_setup(&app, 1_000_000).await;
    let r = text2video(
        &app,
        &s.key,
        json!({"prompt": "a cat surfing", "duration": "5"}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["code"], 0);
    let id = r.body["data"]["task_id"].as_str().unwrap().to_owned();
    let submit = s
        .upstream
        .requests()
        .into_iter()
        .find(|q| q.path == "/v1/videos/text2video")
        .unwrap();
    assert_kling_token(&submit.authorization);
    assert_eq!(submit.body["prompt"], "a cat surfing");

    // Charged once, per call: 1000 * 70.
    let logs = consumed(&app, s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(
        (logs[0].quota, logs[0].model_name.as_str()),
        (70_000, "kling-video_kling-v1_std_5")
    );
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - 70_000);

    // Answered from the database: submitted, then processing, then the video.
    let path = format!("/kling/v1/videos/text2video/{id}");
    let f = get(&app, &s.key, &path).await;
    assert_eq!(f.status, 200, "{:?}", f.body);
    assert_eq!(f.body["data"]["task_status"], "submitted");
    let sum = poll_tasks(&app.state).await.unwrap();
    assert_eq!(sum.updated, 1);
    let f = get(&app, &s.key, &path).await;
    assert_eq!(f.body["data"]["task_status"], "processing");
    let sum = poll_tasks(&app.state).await.unwrap();
    assert_eq!((sum.updated, sum.finished, sum.refunded), (1, 1, 0));
    let f = get(&app, &s.key, &path).await;
    assert_eq!(f.body["data"]["task_status"], "succeed");
    let url = f.body["data"]["task_result"]["videos"][0]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(url.ends_with(".mp4"), "{url}");
    // The poller asked Kling with a signed token too.
    let fetches: Vec<_> = s
        .upstream
        .requests()
        .into_iter()
        .filter(|q| q.path == format!("/v1/videos/text2video/{id}"))
        .collect();
    assert_eq!(fetches.len(), 2);
    assert_kling_token(&fetches[0].authorization);
    // The tasks screen shows the video's address; nothing more to poll.
    let list = s.user.get("/api/task/self?platform=kling").await;
    let rows = list.ok()["data"].as_array().cloned().unwrap_or_default();
    assert!(
        rows.iter()
            .any(|t| t["task_id"] == id.as_str() && t["image_url"] == url.as_str()),
        "{rows:?}"
    );
    assert_eq!(poll_tasks(&app.state).await.unwrap().checked, 0);
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - 70_000);
    // Another user's key does not see it.
    let other = app
        .relay_setup(1_000, json!({"unlimited_quota": true}))
        .await;
    let f = get(&app, &other.key, &path).await;
    assert_eq!(f.status, 404);
    assert_eq!(f.body["code"], "task_not_found");
}

#[actix_web::test]
async fn per_second_prices_charge_each_second() {
    let app = TestApp::new().await;
    let s = kling_setup(&app, 1_000_000).await;
    // pro has only a per-second row: 10 s x 1000 x 20.
    let r = text2video(
        &app,
        &s.key,
        json!({"prompt": "waves", "mode": "pro", "duration": "10"}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // std 10 s: no per-call row for 10 s, the std per-second row: 10 x 1000 x 15.
    let r = post(
        &app,
        &s.key,
        "/kling/v1/videos/image2video",
        json!({"image": "https://example.com/a.png", "duration": 10}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let logs = consumed(&app, s.user_id).await;
    let mut charged: Vec<(i64, String)> = logs
        .iter()
        .map(|l| (l.quota, l.model_name.clone()))
        .collect();
    charged.sort();
    assert_eq!(
        charged,
        vec![
            (150_000, "kling-video_kling-v1_std".to_owned()),
            (200_000, "kling-video_kling-v1_pro".to_owned()),
        ]
    );
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - 350_000);
}

#[actix_web::test]
async fn a_failed_video_is_refunded_exactly_once() {
    let app = TestApp::new().await;
    let s = kling_setup(&app, 1_000_000).await;
    let r = text2video(&app, &s.key, json!({"prompt": "this will fail"})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - 70_000);
    poll_tasks(&app.state).await.unwrap();
    let sum = poll_tasks(&app.state).await.unwrap();
    assert_eq!(
        (sum.finished, sum.refunded, sum.refunded_quota),
        (1, 1, 70_000)
    );
    for _ in 0..2 {
        let again = poll_tasks(&app.state).await.unwrap();
        assert_eq!(again.refunded, 0);
    }
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000);
    let id = r.body["data"]["task_id"].as_str().unwrap();
    let f = get(&app, &s.key, &format!("/kling/v1/videos/text2video/{id}")).await;
    assert_eq!(f.body["data"]["task_status"], "failed");
    assert_eq!(
        f.body["data"]["task_status_msg"],
        "The video could not be generated (mock)"
    );
}

#[actix_web::test]
async fn bad_video_requests_are_refused_before_any_charge() {
    let app = TestApp::new().await;
    let s = kling_setup(&app, 1_000_000).await;
    for (path, body, code) in [
        ("/kling/v1/videos/text2video", json!({}), "invalid_request"),
        (
            "/kling/v1/videos/text2video",
            json!({"prompt": "x", "duration": "7"}),
            "invalid_request",
        ),
        (
            "/kling/v1/videos/text2video",
            json!({"prompt": "x", "mode": "ultra"}),
            "invalid_request",
        ),
        (
            "/kling/v1/videos/image2video",
            json!({"prompt": "no image"}),
            "invalid_request",
        ),
        (
            "/kling/v1/videos/extend",
            json!({"prompt": "x"}),
            "unknown_action",
        ),
        // A model no channel serves.
        (
            "/kling/v1/videos/text2video",
            json!({"prompt": "x", "model_name": "kling-v9"}),
            "model_not_found",
        ),
    ] {
        let r = post(&app, &s.key, path, body.clone()).await;
        assert!(r.status >= 400, "{path} {body}: {:?}", r.body);
        assert_eq!(r.body["code"], code, "{path} {body}: {:?}", r.body);
    }
    let r = reqwest::Client::new()
        .post(app.url("/kling/v1/videos/text2video"))
        .header("Authorization", format!("Bearer {}", s.key))
        .header("Content-Type", "application/json")
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    // No key; an unknown key.
    let r = reqwest::Client::new()
        .post(app.url("/kling/v1/videos/text2video"))
        .json(&json!({"prompt": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let r = text2video(&app, "sk-nope", json!({"prompt": "x"})).await;
    assert_eq!(r.status, 401);
    // Refused by Kling: relayed, nothing charged.
    let r = text2video(&app, &s.key, json!({"prompt": "please refuse this"})).await;
    assert_eq!(r.status, 400, "{:?}", r.body);
    assert!(consumed(&app, s.user_id).await.is_empty());
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000);
    // A user short of the price is refused before Kling is asked.
    let poor = app.relay_setup(10, json!({"unlimited_quota": true})).await;
    let before = s.upstream.requests().len();
    let r = text2video(&app, &poor.key, json!({"prompt": "x"})).await;
    assert_eq!(r.status, 402, "{:?}", r.body);
    assert_eq!(r.body["code"], "insufficient_user_quota");
    assert_eq!(s.upstream.requests().len(), before);
}

/// A channel that serves only the per-second model while a per-call row exists for the length
/// asked for: the video is billed by the row of the model it was admitted for, duration x the
/// per-second price. Fails when seconds count only without a per-call row: a 5 s std video was
/// billed as one second (15 000 instead of 75 000).
#[actix_web::test]
async fn a_per_second_model_bills_every_second_asked_for() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    app.root()
        .post(
            "/api/channel",
            json!({"name": "kling-per-second", "type": TYPE_KLING,
                "key": format!("{ACCESS}|{SECRET}"), "base_url": s.upstream.base_url,
                "models": "kling-video_kling-v1_std", "group": "default"}),
        )
        .await
        .ok();
    for (model, ratio) in [
        ("kling-video_kling-v1_std_5", 70.0),
        ("kling-video_kling-v1_std", 15.0),
    ] {
        app.root()
            .post(
                "/api/prices",
                json!({"model": model, "type": "times", "channel_type": TYPE_KLING, "input": ratio}),
            )
            .await
            .ok();
    }
    let r = text2video(&app, &s.key, json!({"prompt": "waves", "duration": "5"})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let logs = consumed(&app, s.user_id).await;
    assert_eq!(
        logs.iter()
            .map(|l| (l.quota, l.model_name.as_str()))
            .collect::<Vec<_>>(),
        [(75_000, "kling-video_kling-v1_std")]
    );
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - 75_000);
}

/// A 10 s video billed per second that comes back 5 s long: the 5 s not delivered are given
/// back once (a refund log), the task keeps what it cost. Fails without the partial refund:
/// the user paid 200 000 for a 5 s video.
#[actix_web::test]
async fn a_shorter_video_gives_back_the_seconds_not_delivered() {
    let app = TestApp::new().await;
    let s = kling_setup(&app, 1_000_000).await;
    let r = text2video(
        &app,
        &s.key,
        json!({"prompt": "a short wave", "mode": "pro", "duration": "10"}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - 200_000);
    poll_tasks(&app.state).await.unwrap();
    let sum = poll_tasks(&app.state).await.unwrap();
    assert_eq!(
        (sum.finished, sum.refunded, sum.refunded_quota),
        (1, 1, 100_000)
    );
    for _ in 0..2 {
        assert_eq!(poll_tasks(&app.state).await.unwrap().refunded, 0);
    }
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - 100_000);
    let refunds: Vec<logs::LogRow> = logs::recent_for_user(&mut app.conn(), s.user_id, 100)
        .unwrap()
        .into_iter()
        .filter(|l| l.log_type == 4)
        .collect();
    assert_eq!(refunds.len(), 1);
    assert_eq!(refunds[0].quota, 100_000);
    assert!(
        refunds[0].content.contains("5 s delivered of 10 s"),
        "{}",
        refunds[0].content
    );
    // A video as long as asked gives nothing back.
    let r = text2video(
        &app,
        &s.key,
        json!({"prompt": "a full wave", "mode": "pro", "duration": "10"}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    poll_tasks(&app.state).await.unwrap();
    let sum = poll_tasks(&app.state).await.unwrap();
    assert_eq!((sum.finished, sum.refunded), (1, 0));
    assert_eq!(quota_of(&app, s.user_id).await, 1_000_000 - 300_000);
}
