//! `GET /v1/realtime`: a real websocket client through Switchboard to the mock upstream's
//! Realtime endpoint; keys in the header and in the subprotocol, frames both ways, turns billed
//! one consume log each, refusals as HTTP errors, quota running out mid-session, turns reserved
//! before they start (refused, or capped with `max_response_output_tokens`, when the balance is
//! low) and turns cut mid-way billed from what they produced.

use crate::common::TestApp;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use switchboard_mock_upstream::{MockUpstream, CONTENT, REALTIME_USAGE};
use switchboard_store::testing::TestDb;
use switchboard_store::{logs, tokens, users};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

const MODEL: &str = "gpt-4o-realtime-preview";
/// One turn of the mock (30 input tokens: 20 audio, 8 cached; 50 output tokens: 30 audio) at
/// input 2.5, output 10, cached 0.5, input audio 8, output audio 2:
/// prompt 30 - 8 * 0.5 + 20 * 7 = 166, completion 50 + 30 * 1 = 80,
/// cost ceil(166 * 2.5 + 80 * 10) = 1215.
const TURN_COST: i64 = 1215;
/// `PreConsumedQuota` (default): part of every turn's reservation.
const PRE_CONSUMED: i64 = 500;
/// The output ratio of the test price: a turn's reservation covers
/// `(reserved - PRE_CONSUMED) / OUTPUT` output tokens.
const OUTPUT: i64 = 10;

async fn set_price(app: &TestApp) {
    app.root()
        .post(
            "/api/prices",
            json!({"model": MODEL, "type": "tokens", "channel_type": 1, "input": 2.5,
                "output": 10, "extra_ratios": {"cached_tokens": 0.5, "input_audio_tokens": 8,
                "output_audio_tokens": 2}}),
        )
        .await
        .ok();
}

fn ws_url(app: &TestApp) -> String {
    format!(
        "{}/v1/realtime?model={MODEL}",
        app.base.replacen("http://", "ws://", 1)
    )
}

async fn connect(
    app: &TestApp,
    headers: &[(&'static str, String)],
) -> Result<(Ws, Vec<String>), WsError> {
    let mut request = ws_url(app).into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    let (ws, resp) = tokio_tungstenite::connect_async(request).await?;
    let protocols = resp
        .headers()
        .get_all("sec-websocket-protocol")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect();
    Ok((ws, protocols))
}

fn bearer(key: &str) -> Vec<(&'static str, String)> {
    vec![("authorization", format!("Bearer {key}"))]
}

/// The next frame other than ping/pong, within 5 s.
async fn next_frame(ws: &mut Ws) -> Message {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("a frame within 5 s")
            .expect("the stream is open")
            .expect("a valid frame");
        if !matches!(m, Message::Ping(_) | Message::Pong(_)) {
            return m;
        }
    }
}

async fn next_event(ws: &mut Ws) -> Value {
    match next_frame(ws).await {
        Message::Text(t) => serde_json::from_str(t.as_str()).unwrap(),
        other => panic!("expected a text event, got {other:?}"),
    }
}

async fn send(ws: &mut Ws, event: Value) {
    ws.send(Message::Text(event.to_string().into()))
        .await
        .unwrap();
}

/// Sends `response.create` and reads up to `response.done`; returns the text deltas joined and
/// the `response.done` event.
async fn turn(ws: &mut Ws) -> (String, Value) {
    send(ws, json!({"type": "response.create"})).await;
    let mut text = String::new();
    loop {
        let e = next_event(ws).await;
        match e["type"].as_str().unwrap() {
            "response.text.delta" => text.push_str(e["delta"].as_str().unwrap()),
            "response.done" => return (text, e),
            _ => {}
        }
    }
}

/// A user with `quota` and an unlimited key, the test price and a realtime channel on the mock,
/// and a session opened with the key (its `session.created` read).
async fn open_session(app: &TestApp, quota: i64) -> (crate::common::RelaySetup, Ws) {
    set_price(app).await;
    let s = app
        .relay_setup(quota, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-rt", MODEL, 0)
        .await;
    let (mut ws, _) = connect(app, &bearer(&s.key)).await.unwrap();
    assert_eq!(next_event(&mut ws).await["type"], "session.created");
    (s, ws)
}

/// Reads up to the next `response.done`.
async fn until_done(ws: &mut Ws) {
    while next_event(ws).await["type"] != "response.done" {}
}

async fn set_option(app: &TestApp, key: &str, value: &str) {
    app.root()
        .put("/api/option", json!({"key": key, "value": value}))
        .await
        .ok();
}

/// The `response.create` events the upstream received, as sent.
fn response_creates(upstream: &MockUpstream) -> Vec<Value> {
    upstream
        .realtime_event_bodies()
        .into_iter()
        .filter(|e| e["type"] == "response.create")
        .collect()
}

/// Waits until every reservation is settled or refunded (the session ends asynchronously).
async fn wait_settled(app: &TestApp) {
    for _ in 0..100 {
        if app.state.relay.ledger.outstanding() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "{} reservation(s) still outstanding",
        app.state.relay.ledger.outstanding()
    );
}

async fn consume_logs(app: &TestApp, user_id: i64) -> Vec<logs::LogRow> {
    app.flushed().await;
    let mut l: Vec<logs::LogRow> = logs::recent_for_user(&mut app.conn(), user_id, 1000)
        .unwrap()
        .into_iter()
        .filter(|l| l.log_type == 2)
        .collect();
    l.sort_by_key(|l| l.id);
    l
}

async fn wait_closed(upstream: &MockUpstream) {
    for _ in 0..100 {
        if upstream.realtime_open() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the upstream session is still open");
}

#[actix_web::test]
async fn header_key_two_turns_are_two_consume_logs() {
    let app = TestApp::new().await;
    set_price(&app).await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let ch = app
        .channel(&s.upstream.base_url, "sk-mock-rt", MODEL, 0)
        .await;

    let (mut ws, _) = connect(&app, &bearer(&s.key)).await.unwrap();
    let created = next_event(&mut ws).await;
    assert_eq!(created["type"], "session.created");
    assert_eq!(created["session"]["model"], MODEL);
    send(
        &mut ws,
        json!({"type": "session.update", "session": {"modalities": ["text"]}}),
    )
    .await;
    assert_eq!(next_event(&mut ws).await["type"], "session.updated");
    send(
        &mut ws,
        json!({"type": "conversation.item.create", "item": {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "Say hello"}]}}),
    )
    .await;
    assert_eq!(
        next_event(&mut ws).await["type"],
        "conversation.item.created"
    );
    let (text, done) = turn(&mut ws).await;
    assert_eq!(text, CONTENT);
    assert_eq!(
        done["response"]["usage"]["input_tokens"],
        REALTIME_USAGE.input_tokens
    );

    // Binary frames and pings pass through both ways.
    ws.send(Message::Binary(vec![1u8, 2, 3].into()))
        .await
        .unwrap();
    assert_eq!(
        next_frame(&mut ws).await,
        Message::Binary(vec![1u8, 2, 3].into())
    );
    ws.send(Message::Ping(b"hi".to_vec().into())).await.unwrap();
    let pong = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(Ok(Message::Pong(p))) = ws.next().await {
                return p;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(&pong[..], b"hi");

    let (text, _) = turn(&mut ws).await;
    assert_eq!(text, CONTENT);

    // A normal close goes through and comes back.
    ws.send(Message::Close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: "done".into(),
    })))
    .await
    .unwrap();
    match next_frame(&mut ws).await {
        Message::Close(Some(f)) => assert_eq!(f.code, CloseCode::Normal),
        other => panic!("expected a close, got {other:?}"),
    }
    wait_closed(&s.upstream).await;

    let seen: Vec<_> = s
        .upstream
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/realtime")
        .collect();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].query, format!("model={MODEL}"));
    assert_eq!(seen[0].authorization, "Bearer sk-mock-rt");
    assert_eq!(
        MockUpstream::header(&seen[0], "openai-beta"),
        Some("realtime=v1")
    );
    assert_eq!(
        s.upstream.realtime_events(),
        [
            "session.update",
            "conversation.item.create",
            "response.create",
            "response.create"
        ]
    );
    // The balance covers each turn's worst case: the responses are forwarded without a limit.
    for e in response_creates(&s.upstream) {
        assert!(
            e.pointer("/response/max_response_output_tokens").is_none(),
            "{e}"
        );
    }
    assert_eq!(app.state.relay.ledger.outstanding(), 0);

    let logs = consume_logs(&app, s.user_id).await;
    assert_eq!(logs.len(), 2, "one consume log per turn");
    for l in &logs {
        assert_eq!(
            (
                l.model_name.as_str(),
                l.channel_id,
                l.prompt_tokens,
                l.completion_tokens,
                l.quota,
                l.token_id
            ),
            (
                MODEL,
                ch,
                REALTIME_USAGE.input_tokens as i32,
                REALTIME_USAGE.output_tokens as i32,
                TURN_COST,
                s.token_id
            )
        );
        let meta: Value = serde_json::from_str(&l.metadata).unwrap();
        assert_eq!(meta["usage"]["input_audio_tokens"], 20);
        assert_eq!(meta["usage"]["output_audio_tokens"], 30);
        assert_eq!(meta["usage"]["cached_tokens"], 8);
    }
    assert_ne!(logs[0].request_id, logs[1].request_id);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 1_000_000 - 2 * TURN_COST);
}

#[actix_web::test]
async fn subprotocol_key_is_accepted_and_not_forwarded() {
    let app = TestApp::new().await;
    set_price(&app).await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-rt", MODEL, 0)
        .await;
    let protocols = format!(
        "realtime, openai-insecure-api-key.{}, openai-beta.realtime-v1",
        s.key
    );
    let (mut ws, chosen) = connect(&app, &[("sec-websocket-protocol", protocols)])
        .await
        .unwrap();
    assert_eq!(chosen, ["realtime"]);
    assert_eq!(next_event(&mut ws).await["type"], "session.created");
    let (text, _) = turn(&mut ws).await;
    assert_eq!(text, CONTENT);
    ws.close(None).await.unwrap();
    wait_closed(&s.upstream).await;

    let seen = s.upstream.requests();
    let rt = seen.iter().find(|r| r.path == "/v1/realtime").unwrap();
    assert!(
        rt.headers.iter().all(|(_, v)| !v.contains(&s.key)),
        "the Switchboard key never reaches the upstream"
    );
    assert_eq!(rt.key, "sk-mock-rt");
    assert_eq!(consume_logs(&app, s.user_id).await.len(), 1);
}

#[actix_web::test]
async fn bad_or_missing_key_refuses_the_handshake() {
    let app = TestApp::new().await;
    set_price(&app).await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-rt", MODEL, 0)
        .await;
    for headers in [bearer("sk-not-a-real-key"), Vec::new()] {
        match connect(&app, &headers).await {
            Err(WsError::Http(resp)) => {
                assert_eq!(resp.status().as_u16(), 401);
                let body: Value =
                    serde_json::from_slice(resp.body().as_deref().unwrap_or_default()).unwrap();
                assert_eq!(body["error"]["type"], "invalid_request_error");
            }
            other => panic!("expected a refused handshake, got {:?}", other.map(|_| ())),
        }
    }
    assert_eq!(s.upstream.count("/v1/realtime"), 0);
}

#[actix_web::test]
async fn a_turn_that_exhausts_the_quota_closes_the_session_and_no_new_one_opens() {
    let app = TestApp::new().await;
    set_price(&app).await;
    // Enough for one turn, not for two; without pre-consumed quota the second turn's minimum
    // (one output token) fits in what is left, so it starts (capped) and exhausts the balance.
    set_option(&app, "PreConsumedQuota", "0").await;
    let s = app
        .relay_setup(TURN_COST + 300, json!({"unlimited_quota": true}))
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-rt", MODEL, 0)
        .await;
    let (mut ws, _) = connect(&app, &bearer(&s.key)).await.unwrap();
    assert_eq!(next_event(&mut ws).await["type"], "session.created");
    turn(&mut ws).await;
    let (_, done) = turn(&mut ws).await;
    assert_eq!(
        done["type"], "response.done",
        "the turn itself is delivered"
    );
    let err = next_event(&mut ws).await;
    assert_eq!(err["type"], "error");
    assert_eq!(err["error"]["code"], "insufficient_user_quota");
    match next_frame(&mut ws).await {
        Message::Close(Some(f)) => assert_eq!(f.code, CloseCode::Policy),
        other => panic!("expected a close, got {other:?}"),
    }
    wait_closed(&s.upstream).await;

    match connect(&app, &bearer(&s.key)).await {
        Err(WsError::Http(resp)) => assert_eq!(resp.status().as_u16(), 402),
        other => panic!("expected a refused handshake, got {:?}", other.map(|_| ())),
    }
    let logs = consume_logs(&app, s.user_id).await;
    assert_eq!(logs.len(), 2);
    // The balance rule: the second turn is charged what was left (300), not its full cost;
    // the log says what it would have cost.
    assert_eq!(logs.iter().map(|l| l.quota).sum::<i64>(), TURN_COST + 300);
    assert!(logs.iter().any(|l| l.quota == 300
        && l.metadata
            .contains(&format!("\"uncapped_quota\":{TURN_COST}"))));
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 0, "never below zero");
    assert_eq!(s.upstream.count("/v1/realtime"), 1);
}

#[actix_web::test]
async fn an_upstream_refusal_is_a_clear_error_and_close_codes_pass_through() {
    let app = TestApp::new().await;
    set_price(&app).await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let bad = app
        .channel(&s.upstream.base_url, "sk-mock-401", MODEL, 0)
        .await;
    match connect(&app, &bearer(&s.key)).await {
        Err(WsError::Http(resp)) => {
            assert_eq!(resp.status().as_u16(), 502);
            let body: Value =
                serde_json::from_slice(resp.body().as_deref().unwrap_or_default()).unwrap();
            assert!(
                body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("Incorrect API key"),
                "{body}"
            );
        }
        other => panic!("expected a refused handshake, got {:?}", other.map(|_| ())),
    }
    assert!(consume_logs(&app, s.user_id).await.is_empty());

    // With a working channel beside it, the upstream's own close code reaches the client.
    app.root().delete(&format!("/api/channel/{bad}")).await.ok();
    app.channel(&s.upstream.base_url, "sk-mock-rt", MODEL, 0)
        .await;
    let (mut ws, _) = connect(&app, &bearer(&s.key)).await.unwrap();
    assert_eq!(next_event(&mut ws).await["type"], "session.created");
    send(
        &mut ws,
        json!({"type": "mock.close", "code": 4001, "reason": "bye"}),
    )
    .await;
    match next_frame(&mut ws).await {
        Message::Close(Some(f)) => {
            assert_eq!(u16::from(f.code), 4001);
            assert_eq!(f.reason.as_str(), "bye");
        }
        other => panic!("expected a close, got {other:?}"),
    }
}

#[actix_web::test]
async fn a_client_that_goes_away_ends_the_upstream_session() {
    let app = TestApp::new().await;
    let (s, ws) = open_session(&app, 1_000_000).await;
    assert_eq!(s.upstream.realtime_open(), 1);
    drop(ws);
    wait_closed(&s.upstream).await;
}

#[actix_web::test]
async fn azure_channels_open_their_realtime_deployment() {
    let app = TestApp::new().await;
    set_price(&app).await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let azure = MockUpstream::start();
    app.root()
        .post(
            "/api/channel",
            json!({"name": "azure-rt", "type": 3, "key": "az-key", "base_url": azure.base_url,
                "models": MODEL, "group": "default", "priority": 0,
                "config": {"api_version": "2024-10-01-preview"}}),
        )
        .await
        .ok();
    let (mut ws, _) = connect(&app, &bearer(&s.key)).await.unwrap();
    assert_eq!(next_event(&mut ws).await["type"], "session.created");
    turn(&mut ws).await;
    ws.close(None).await.unwrap();
    wait_closed(&azure).await;
    let seen = azure.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/openai/realtime");
    assert_eq!(
        seen[0].query,
        format!("api-version=2024-10-01-preview&deployment={MODEL}")
    );
    assert_eq!(MockUpstream::header(&seen[0], "api-key"), Some("az-key"));
    assert_eq!(seen[0].authorization, "");
    let logs = consume_logs(&app, s.user_id).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].quota, TURN_COST);
}

#[actix_web::test]
async fn a_turn_in_progress_when_the_client_leaves_is_still_billed() {
    let app = TestApp::new().await;
    set_price(&app).await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    // The slow mock answers a response only after 300 ms.
    app.channel(&s.upstream.base_url, "sk-mock-slow", MODEL, 0)
        .await;
    let (mut ws, _) = connect(&app, &bearer(&s.key)).await.unwrap();
    assert_eq!(next_event(&mut ws).await["type"], "session.created");
    send(&mut ws, json!({"type": "response.create"})).await;
    for _ in 0..100 {
        if s.upstream
            .realtime_events()
            .contains(&"response.create".to_owned())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(ws);
    wait_closed(&s.upstream).await;
    let mut logs = consume_logs(&app, s.user_id).await;
    for _ in 0..50 {
        if !logs.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        logs = consume_logs(&app, s.user_id).await;
    }
    assert_eq!(logs.len(), 1, "the upstream's response.done is billed");
    assert_eq!(
        s.upstream.realtime_events(),
        ["response.create", "response.cancel"]
    );
    assert_eq!(logs[0].quota, TURN_COST);
}

#[actix_web::test]
async fn the_key_running_out_closes_the_session_and_plain_http_is_refused() {
    let app = TestApp::new().await;
    set_price(&app).await;
    let s = app
        .relay_setup(
            1_000_000,
            json!({"unlimited_quota": false, "remain_quota": TURN_COST - 10}),
        )
        .await;
    app.channel(&s.upstream.base_url, "sk-mock-rt", MODEL, 0)
        .await;

    // Not a websocket handshake.
    let r = reqwest::Client::new()
        .get(app.url(&format!("/v1/realtime?model={MODEL}")))
        .header("Authorization", format!("Bearer {}", s.key))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "websocket_required");
    // No model.
    let mut request = format!("{}/v1/realtime", app.base.replacen("http://", "ws://", 1))
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {}", s.key).parse().unwrap(),
    );
    match tokio_tungstenite::connect_async(request).await {
        Err(WsError::Http(resp)) => assert_eq!(resp.status().as_u16(), 400),
        other => panic!("expected a refused handshake, got {:?}", other.map(|_| ())),
    }

    let (mut ws, _) = connect(&app, &bearer(&s.key)).await.unwrap();
    assert_eq!(next_event(&mut ws).await["type"], "session.created");
    turn(&mut ws).await;
    let err = next_event(&mut ws).await;
    assert_eq!(err["error"]["code"], "insufficient_token_quota");
    match next_frame(&mut ws).await {
        Message::Close(Some(f)) => assert_eq!(f.code, CloseCode::Policy),
        other => panic!("expected a close, got {other:?}"),
    }
    match connect(&app, &bearer(&s.key)).await {
        Err(WsError::Http(resp)) => assert_eq!(resp.status().as_u16(), 402),
        other => panic!("expected a refused handshake, got {:?}", other.map(|_| ())),
    }
    let logs = consume_logs(&app, s.user_id).await;
    assert_eq!(logs.len(), 1);
    // The key had TURN_COST - 10 left: the turn is charged that much (the balance rule), and
    // the key ends at zero, not below.
    assert_eq!(logs[0].quota, TURN_COST - 10);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 1_000_000 - (TURN_COST - 10));
    let t = tokens::find(&mut app.conn(), s.token_id).unwrap();
    assert_eq!(t.remain_quota, 0);
}

/// Refusals before the upstream: a balance (the user's, then the key's) below a turn's minimum
/// (one output token plus `PreConsumedQuota`) refuses `response.create` with an `error` event and
/// a 1008 close; the upstream never sees it and nothing is charged or left reserved.
#[actix_web::test]
async fn a_turn_the_balance_cannot_start_never_reaches_the_upstream() {
    let min = OUTPUT + PRE_CONSUMED;
    for (user_quota, key, code) in [
        (
            min - 1,
            json!({"unlimited_quota": true}),
            "insufficient_user_quota",
        ),
        (
            1_000_000,
            json!({"unlimited_quota": false, "remain_quota": min - 1}),
            "insufficient_token_quota",
        ),
    ] {
        let app = TestApp::new().await;
        set_price(&app).await;
        let s = app.relay_setup(user_quota, key).await;
        app.channel(&s.upstream.base_url, "sk-mock-rt", MODEL, 0)
            .await;
        // The session opens (there is quota), the turn does not start.
        let (mut ws, _) = connect(&app, &bearer(&s.key)).await.unwrap();
        assert_eq!(next_event(&mut ws).await["type"], "session.created");
        send(&mut ws, json!({"type": "response.create"})).await;
        let err = next_event(&mut ws).await;
        assert_eq!(err["type"], "error", "{err}");
        assert_eq!(err["error"]["code"], code);
        match next_frame(&mut ws).await {
            Message::Close(Some(f)) => assert_eq!(f.code, CloseCode::Policy),
            other => panic!("expected a close, got {other:?}"),
        }
        wait_closed(&s.upstream).await;
        assert!(
            !s.upstream
                .realtime_events()
                .contains(&"response.create".to_owned()),
            "{:?}",
            s.upstream.realtime_events()
        );
        wait_settled(&app).await;
        assert!(consume_logs(&app, s.user_id).await.is_empty());
        let u = users::find(&mut app.conn(), s.user_id).unwrap();
        assert_eq!(u.quota, user_quota);
    }
}

/// A low balance: each turn reserves what is left and the forwarded `response.create` carries
/// `max_response_output_tokens` set to what that covers (a client's own lower limit is kept);
/// the charges (capped by the balance rule: the mock ignores the limit) never take the balance
/// below zero, and the turn that empties it closes the session.
#[actix_web::test]
async fn a_low_balance_limits_each_turn_and_never_goes_below_zero() {
    let app = TestApp::new().await;
    let (s, mut ws) = open_session(&app, 3_000).await;
    // 1: 3000 reserved of 4096 * 10 + 500: covers (3000 - 500) / 10 = 250 tokens.
    turn(&mut ws).await;
    // 2: 1785 left; the client's own limit (20 tokens: 700 with pre-consumed quota) fits.
    send(
        &mut ws,
        json!({"type": "response.create", "response": {"max_response_output_tokens": 20}}),
    )
    .await;
    until_done(&mut ws).await;
    // 3: 570 left: covers (570 - 500) / 10 = 7 tokens; charged 570, not 1215.
    let (_, done) = turn(&mut ws).await;
    assert_eq!(done["type"], "response.done");
    let err = next_event(&mut ws).await;
    assert_eq!(err["error"]["code"], "insufficient_user_quota");
    match next_frame(&mut ws).await {
        Message::Close(Some(f)) => assert_eq!(f.code, CloseCode::Policy),
        other => panic!("expected a close, got {other:?}"),
    }
    wait_closed(&s.upstream).await;

    let limits: Vec<Value> = response_creates(&s.upstream)
        .iter()
        .map(|e| e["response"]["max_response_output_tokens"].clone())
        .collect();
    assert_eq!(limits, [json!(250), json!(20), json!(7)]);
    wait_settled(&app).await;
    let logs = consume_logs(&app, s.user_id).await;
    let charged: Vec<i64> = logs.iter().map(|l| l.quota).collect();
    assert_eq!(charged, [TURN_COST, TURN_COST, 3_000 - 2 * TURN_COST]);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(u.quota, 0, "never below zero");
}

/// Turns cut before their `response.done` are billed from their counted text deltas, and
/// nothing stays reserved: the client closing mid-response (the upstream's `response.done` for
/// the cancel has no usage), then the upstream closing mid-response.
async fn cut_turns_are_billed(app: TestApp) {
    set_price(&app).await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    // The stalling mock sends `response.created` and one delta, then holds the response.
    app.channel(&s.upstream.base_url, "sk-mock-stall", MODEL, 0)
        .await;
    for upstream_cuts in [false, true] {
        let (mut ws, _) = connect(&app, &bearer(&s.key)).await.unwrap();
        assert_eq!(next_event(&mut ws).await["type"], "session.created");
        send(&mut ws, json!({"type": "response.create"})).await;
        assert_eq!(next_event(&mut ws).await["type"], "response.created");
        let delta = next_event(&mut ws).await;
        assert_eq!(delta["type"], "response.text.delta");
        if upstream_cuts {
            send(
                &mut ws,
                json!({"type": "mock.close", "code": 4000, "reason": "cut"}),
            )
            .await;
        } else {
            ws.send(Message::Close(None)).await.unwrap();
        }
        match next_frame(&mut ws).await {
            Message::Close(_) => {}
            other => panic!("expected a close, got {other:?}"),
        }
        wait_closed(&s.upstream).await;
        wait_settled(&app).await;
    }
    assert_eq!(
        s.upstream.realtime_events(),
        [
            "response.create",
            "response.cancel",
            "response.create",
            "mock.close"
        ]
    );
    app.state.relay.ledger.apply_queued().await;
    let logs = consume_logs(&app, s.user_id).await;
    assert_eq!(logs.len(), 2, "each cut turn is one consume log");
    for l in &logs {
        assert!(l.completion_tokens > 0, "the delta is counted");
        assert_eq!(l.prompt_tokens, 0);
        assert_eq!(l.quota, i64::from(l.completion_tokens) * OUTPUT);
        let meta: Value = serde_json::from_str(&l.metadata).unwrap();
        assert_eq!(meta["usage_estimated"], true, "{meta}");
    }
    assert_eq!(app.state.relay.ledger.outstanding(), 0);
    let u = users::find(&mut app.conn(), s.user_id).unwrap();
    assert_eq!(
        u.quota,
        1_000_000 - logs.iter().map(|l| l.quota).sum::<i64>()
    );
}

#[actix_web::test]
async fn a_turn_cut_mid_way_is_billed_and_nothing_stays_reserved() {
    cut_turns_are_billed(TestApp::new().await).await;
}

#[actix_web::test]
async fn a_turn_cut_mid_way_with_the_ledger_in_redis() {
    let Some(app) = TestApp::with_redis(TestDb::sqlite()).await else {
        println!("TEST_REDIS_URL not set: Redis realtime reservations not run");
        return;
    };
    cut_turns_are_billed(app).await;
}

/// The outbound URL policy holds for realtime sessions too: a channel whose destination root
/// did not set (its stored address a loopback literal, or a name that now resolves to loopback,
/// as after a DNS change) opens no upstream websocket unless `AllowPrivateOutbound` is on.
#[actix_web::test]
async fn channels_not_set_by_root_open_no_private_realtime_upstream() {
    let app = TestApp::new().await;
    set_price(&app).await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let ch = app
        .channel(&s.upstream.base_url, "sk-mock-rt", MODEL, 0)
        .await;
    set_option(&app, "RetryCooldownSeconds", "0").await;
    let port = s.upstream.base_url.rsplit(':').next().unwrap().to_owned();
    for base in [
        s.upstream.base_url.clone(),
        format!("http://localhost:{port}"),
    ] {
        let changed =
            switchboard_store::channels::edit_many(&mut app.conn(), Some(&[ch]), None, |f| {
                f.base_url = base.clone();
                f.destination_by_root = false;
                true
            })
            .unwrap();
        assert_eq!(changed, vec![ch]);
        // A rename reloads the relay's channels and keeps who set the destination.
        app.root()
            .put("/api/channel", json!({"id": ch, "name": "rebound"}))
            .await
            .ok();
        match connect(&app, &bearer(&s.key)).await {
            Err(WsError::Http(resp)) => assert!(resp.status().is_server_error(), "{base}"),
            other => panic!(
                "{base}: expected a refused handshake, got {:?}",
                other.map(|_| ())
            ),
        }
    }
    set_option(&app, "AllowPrivateOutbound", "true").await;
    let (mut ws, _) = connect(&app, &bearer(&s.key)).await.unwrap();
    assert_eq!(next_event(&mut ws).await["type"], "session.created");
}

/// A `response.create` written with JSON escapes (`response\u002ecreate`) is the same event:
/// it is reserved, and the upstream is told to stop where the reservation ends. Fails when the
/// check reads the raw text: the event went through unreserved, without the limit, unbilled
/// against the balance rule.
#[actix_web::test]
async fn an_escaped_response_create_is_still_reserved() {
    let app = TestApp::new().await;
    let (s, mut ws) = open_session(&app, 3_000).await;
    ws.send(Message::Text(
        r#"{"type":"response\u002ecreate","response":{}}"#.into(),
    ))
    .await
    .unwrap();
    until_done(&mut ws).await;
    let creates = response_creates(&s.upstream);
    assert_eq!(creates.len(), 1, "{:?}", s.upstream.realtime_events());
    // 3000 reserved of 4096 * 10 + 500: covers (3000 - 500) / 10 = 250 tokens.
    assert_eq!(creates[0]["response"]["max_response_output_tokens"], 250);
    ws.close(None).await.unwrap();
    wait_closed(&s.upstream).await;
    wait_settled(&app).await;
    let logs = consume_logs(&app, s.user_id).await;
    assert_eq!(
        logs.iter().map(|l| l.quota).collect::<Vec<_>>(),
        [TURN_COST]
    );
}
