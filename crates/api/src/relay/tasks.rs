//! Async tasks: Midjourney (a midjourney-proxy server behind a "Midjourney Proxy" channel), Suno
//! (a Suno API server behind a "Suno API" channel) and Kling video (Kling's API behind a "Kling"
//! channel). See `docs/tasks.md`.
//!
//! - Submit: authenticate the key like `/v1`, name the model from the action
//!   (`mj_imagine`, `mj_turbo_upscale`, `suno_music`), reserve its per-call price, pick a channel
//!   through the dispatcher, call the upstream. An accepted submit (midjourney-proxy code 1, 21 or
//!   22; Suno `code: "success"`) settles the reservation (one consume log, through the ledger)
//!   and records the task; anything else gives the reservation back and relays the refusal.
//! - Fetch: answered from the database, which the poller keeps current.
//! - Poller ([`poll_tasks`]): asks each channel about its unfinished tasks in batches, records
//!   status, progress and results, and refunds a failed task's charge exactly once
//!   (`store::tasks::refund`); tasks older than [`TASK_TIMEOUT_SECS`] fail and are refunded.

use super::edge::{self, refuse};
use super::handler::{admit_any, authenticate, Admitted};
use super::record::Caller;
use super::snapshot::ChannelInfo;
use super::AuthToken;
use crate::error::ApiResult;
use crate::extract::client_ip;
use crate::metrics::Outcome;
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use bytes::Bytes;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_domain::channel::{TYPE_KLING, TYPE_MIDJOURNEY, TYPE_SUNO};
use switchboard_domain::log::LogType;
use switchboard_domain::price::{self, ReserveBounds, Usage};
use switchboard_domain::task::{self as dtask, MjMode};
use switchboard_domain::token::ChannelPin;
use switchboard_domain::ErrorCode;
use switchboard_relay::dispatch::dispatch;
use switchboard_relay::provider::{classify_transport, UpstreamFailure};
use switchboard_relay::refusal::{Protocol, Refusal};
use switchboard_store::logs::ConsumeRecord;
use switchboard_store::now;
use switchboard_store::tasks::{
    self, NewTask, TaskProgress, TaskRow, PLATFORM_KLING, PLATFORM_MIDJOURNEY, PLATFORM_SUNO,
};

/// A task not finished after this long is failed (and refunded) by the poller.
pub const TASK_TIMEOUT_SECS: i64 = 24 * 3600;
/// How often the poller runs (on one node of the cluster at a time).
pub const POLL_EVERY: Duration = Duration::from_secs(15);
/// Task ids per upstream fetch.
const FETCH_BATCH: usize = 100;
/// Unfinished tasks read from the database per round trip.
const DB_BATCH: i64 = 500;
/// Deadline of one upstream call (submit, fetch, image headers).
const UPSTREAM_CALL: Duration = Duration::from_secs(60);
/// Largest upstream JSON answer read.
const MAX_ANSWER: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Platform {
    Midjourney(MjMode),
    Suno,
    Kling,
}

impl Platform {
    fn name(self) -> &'static str {
        match self {
            Platform::Midjourney(_) => PLATFORM_MIDJOURNEY,
            Platform::Suno => PLATFORM_SUNO,
            Platform::Kling => PLATFORM_KLING,
        }
    }

    /// The protocol of the platform's clients (the shape of their errors).
    fn protocol(self) -> Protocol {
        match self {
            Platform::Midjourney(_) => Protocol::Midjourney,
            // Kling's clients read one-hub's task error shape, `{code, message}`: Suno's.
            Platform::Suno | Platform::Kling => Protocol::Suno,
        }
    }

    fn channel_type(self) -> i32 {
        match self {
            Platform::Midjourney(_) => TYPE_MIDJOURNEY,
            Platform::Suno => TYPE_SUNO,
            Platform::Kling => TYPE_KLING,
        }
    }
}

/// A refusal in the client protocol's shape (see [`Refusal::body`]): midjourney-proxy's
/// `{code, description, result, error_code}` or the Suno API's `{code, message, data}`.
fn task_error(p: Platform, status: u16, code: ErrorCode, message: &str) -> HttpResponse {
    refuse(p.protocol(), &Refusal::new(status, code, message))
}

async fn auth(
    state: &web::Data<AppState>,
    req: &HttpRequest,
    p: Platform,
) -> Result<(Arc<AuthToken>, ChannelPin), HttpResponse> {
    authenticate(state, req)
        .await
        .map_err(|r| refuse(p.protocol(), &r))
}

/// The upstream URL path of a relay path: Midjourney keeps the mode prefix (`/mj-fast/mj/...`,
/// the midjourney-proxy convention), plain `/mj/...` without one.
fn upstream_path(p: Platform, rest: &str) -> String {
    match p {
        Platform::Midjourney(MjMode::Default) => format!("/mj{rest}"),
        Platform::Midjourney(m) => format!("{}/mj{rest}", m.prefix()),
        Platform::Suno => format!("/suno{rest}"),
        Platform::Kling => format!("/v1/videos{rest}"),
    }
}

/// How long a Kling API token made from the channel's key pair is valid.
const KLING_TOKEN_SECS: i64 = 1800;

/// The bearer token of a Kling channel: with a key `ACCESS_KEY|SECRET_KEY`, a JWT (HS256) Kling
/// asks for, `iss` the access key, valid from 5 s ago for [`KLING_TOKEN_SECS`], signed with the
/// secret key; any other key is sent as it is (a token made elsewhere).
fn kling_token(key: &str, now: i64) -> String {
    use base64::Engine as _;
    use hmac::{Hmac, Mac};
    let Some((access, secret)) = key.split_once('|') else {
        return key.to_owned();
    };
    let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
    let header = b64(br#"{"alg":"HS256","typ":"JWT"}"#);
    let claims = b64(
        json!({"iss": access.trim(), "exp": now + KLING_TOKEN_SECS, "nbf": now - 5})
            .to_string()
            .as_bytes(),
    );
    let signing = format!("{header}.{claims}");
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(secret.trim().as_bytes()) else {
        return key.to_owned();
    };
    mac.update(signing.as_bytes());
    format!("{signing}.{}", b64(&mac.finalize().into_bytes()))
}

/// One call to a task upstream: the status and the body (2xx), or why it failed.
async fn call(
    state: &AppState,
    ch: &ChannelInfo,
    p: Platform,
    method: reqwest::Method,
    path: &str,
    body: Option<Vec<u8>>,
) -> Result<(u16, Bytes), UpstreamFailure> {
    let fail = |status: u16, m: String, code: &str, retryable: bool| UpstreamFailure {
        status,
        message: m,
        code: Some(code.into()),
        retryable,
        auto_disable: false,
        kind: None,
        retry_after: None,
        gateway: false,
    };
    let base = ch
        .target
        .effective_base_url()
        .map_err(|e| fail(500, e.to_string(), "channel_config_error", true))?;
    let client = super::channel_client(state, ch)
        .map_err(|e| fail(500, e.to_string(), "channel_config_error", true))?;
    let mut rb = client
        .request(method, format!("{base}{path}"))
        .timeout(UPSTREAM_CALL);
    rb = match p {
        Platform::Midjourney(_) => rb.header("mj-api-secret", &ch.target.key),
        Platform::Suno => rb.bearer_auth(&ch.target.key),
        Platform::Kling => rb.bearer_auth(kling_token(&ch.target.key, now())),
    };
    if let Some(b) = body {
        rb = rb.header("content-type", "application/json").body(b);
    }
    for (k, v) in &ch.target.custom_headers {
        rb = rb.header(k.as_str(), v.as_str());
    }
    let resp = rb.send().await.map_err(|e| classify_transport(&e))?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = read_limited(resp)
        .await
        .map_err(|e| classify_transport(&e))?;
    if (200..300).contains(&status) {
        return Ok((status, bytes));
    }
    let message = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| {
            ["description", "message", "error"]
                .iter()
                .find_map(|k| v.get(*k).and_then(Value::as_str).map(str::to_owned))
        })
        .unwrap_or_else(|| String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).into_owned());
    let retryable = status == 429 || (status >= 500 && status != 504 && status != 524);
    Err(UpstreamFailure {
        status,
        message,
        code: Some("upstream_error".into()),
        retryable,
        ..UpstreamFailure::default()
    }
    .with_retry_headers(&headers))
}

async fn read_limited(resp: reqwest::Response) -> Result<Bytes, reqwest::Error> {
    use futures_util::StreamExt;
    let mut out = Vec::new();
    let mut s = resp.bytes_stream();
    while let Some(chunk) = s.next().await {
        let chunk = chunk?;
        let room = MAX_ANSWER.saturating_sub(out.len());
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= MAX_ANSWER {
            break;
        }
    }
    Ok(Bytes::from(out))
}

/// Unix seconds from an upstream time (midjourney-proxy sends milliseconds, Suno seconds).
fn secs(v: Option<&Value>) -> i64 {
    let n = v.and_then(Value::as_i64).unwrap_or(0);
    if n > 100_000_000_000 {
        n / 1000
    } else {
        n
    }
}

/// The prompt of a submit body (`prompt`, Suno's `gpt_description_prompt`, or a
/// simple-change's `content`).
fn prompt_of(body: &Value) -> String {
    ["prompt", "gpt_description_prompt", "content"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
        .unwrap_or_default()
        .to_owned()
}

/// The task an action refers to (`taskId`, or the first word of a simple-change's `content`).
fn origin_task_id(body: &Value) -> Option<String> {
    if let Some(t) = body.get("taskId").and_then(Value::as_str) {
        return Some(t.to_owned());
    }
    body.get("content")
        .and_then(Value::as_str)
        .and_then(|c| c.split_whitespace().next())
        .map(str::to_owned)
}

/// `POST /mj[-mode]/submit/{kind}`.
pub async fn mj_submit(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    kind: String,
    mode: MjMode,
) -> HttpResponse {
    submit(state, req, body, kind, Platform::Midjourney(mode)).await
}

/// `POST /kling/v1/videos/{text2video|image2video}`.
pub async fn kling_submit(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    kind: String,
) -> HttpResponse {
    submit(state, req, body, kind, Platform::Kling).await
}

/// `POST /suno/submit/{music|lyrics}`.
pub async fn suno_submit(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    kind: String,
) -> HttpResponse {
    submit(state, req, body, kind, Platform::Suno).await
}

async fn submit(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    kind: String,
    p: Platform,
) -> HttpResponse {
    submit_task(state, req, body, kind, p)
        .await
        .unwrap_or_else(|r| refuse(p.protocol(), &r))
}

/// A submit: the key, the action and its model, admission and the per-call price reserved like
/// `/v1`, the upstream through the relay crate's dispatch loop, then the charge and the task row.
async fn submit_task(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    kind: String,
    p: Platform,
) -> Result<HttpResponse, Refusal> {
    let (token, pin) = authenticate(&state, &req).await?;
    if body.len() > state.config.relay_body_bytes {
        return Err(Refusal::too_large(state.config.relay_body_bytes));
    }
    let parsed: Value = match serde_json::from_slice(&body) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return Err(Refusal::new(
                400,
                ErrorCode::InvalidJson,
                "The body must be a JSON object.",
            ))
        }
    };
    let action = match p {
        Platform::Midjourney(_) => dtask::mj_action(&kind, &parsed),
        Platform::Suno => dtask::suno_action(&kind),
        Platform::Kling => dtask::kling_action(&kind),
    };
    let action = action.ok_or_else(|| {
        Refusal::new(
            400,
            ErrorCode::UnknownAction,
            format!(
                "`{kind}` with this body is not a known {} action.",
                p.name()
            ),
        )
    })?;
    // A video: its model, mode and length decide the price (and are checked before any charge).
    let video = match p {
        Platform::Kling => Some(
            dtask::kling_video(action, &parsed)
                .map_err(|m| Refusal::new(400, ErrorCode::InvalidRequest, format!("{m}.")))?,
        ),
        _ => None,
    };
    // An action on an earlier task must reach the channel that holds that task.
    let pin = origin_pin(&state, &token, p, &kind, &parsed)
        .await?
        .unwrap_or(pin);
    let models = match &video {
        Some(v) => vec![v.per_call_model(), v.per_second_model()],
        None => task_models(p, action),
    };
    let names: Vec<&str> = models.iter().map(String::as_str).collect();
    let (chosen, admitted) = admit_any(&state, &token, &names, pin, |ch| {
        ch.channel_type == p.channel_type()
    })
    .await?;
    let Admitted {
        group,
        ginfo,
        snapshot,
        candidates,
        price,
    } = admitted;
    let model = models[chosen].clone();
    // A video is priced by the row of the model it was admitted for: the per-call row of its
    // length when that model is served and priced, else the per-second row (`admit_any` takes
    // the first priced name from the chosen one on), which costs its price once per second.
    let per_call = chosen == 0 && state.relay.prices().lookup(&models[0]).is_some();
    let units = match &video {
        Some(v) if !per_call => v.seconds,
        _ => 1,
    };
    let amount = price::cost_units(&price, &Usage::default(), ginfo.ratio, units);
    let bounds = ReserveBounds {
        min: amount,
        max: amount,
    };
    let reservation = edge::reserve(&state, &token, bounds).await?;
    let started = Instant::now();
    let path = match p {
        Platform::Kling => upstream_path(p, &format!("/{kind}")),
        _ => upstream_path(p, &format!("/submit/{kind}")),
    };
    let source = edge::Source {
        state: &state,
        snapshot: &snapshot,
        what: "task upstream",
    };
    let dispatched = dispatch(
        &source,
        &candidates,
        &edge::policy(&state.settings.relay_options(), pin),
        &model,
        async |ch: &Arc<ChannelInfo>| {
            let body = Some(body.to_vec());
            call(&state, ch, p, reqwest::Method::POST, &path, body).await
        },
    )
    .await;
    let (ch, (status, answer)) = match dispatched {
        Ok(v) => {
            state
                .metrics
                .relay_request(&model, v.0.id, Outcome::Success, started.elapsed());
            v
        }
        Err(r) => {
            let outcome = Outcome::of_refusal(&r);
            state
                .metrics
                .relay_request(&model, 0, outcome, started.elapsed());
            state.relay.ledger.refund(reservation);
            super::kick_applier(&state);
            return Err(r);
        }
    };
    let relayed = |answer: Bytes| {
        HttpResponse::build(StatusCode::from_u16(status).unwrap_or(StatusCode::OK))
            .content_type("application/json")
            .body(answer)
    };
    let v: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
    let Some(task_id) = accepted_task_id(p, &v) else {
        // Refused by the upstream: nothing charged, its answer relayed.
        state.relay.ledger.refund(reservation);
        state.relay.ledger.apply_queued().await;
        return Ok(relayed(answer));
    };
    let request_id = crate::observe::request_id(&req);
    let ip = client_ip(&req, &state.config.trusted_proxies);
    let caller = Caller {
        token: &token,
        model: &model,
        group: &group,
        ip: &ip,
    };
    let record = ConsumeRecord {
        quota: amount,
        content: format!("{} {action} task {task_id}", p.name()),
        metadata: json!({
            "group_ratio": ginfo.ratio,
            "input_ratio": price.input,
            "output_ratio": price.output,
            "price_type": price.price_type,
            "task_id": task_id,
            "units": units,
        })
        .to_string(),
        ..caller.record(LogType::Consume, request_id.clone(), ch.id, started)
    };
    // A per-call price: the reservation is the charge, unless the balance rule cut it (the key's
    // quota lowered while the task was submitted). The task keeps what was charged: a refund
    // gives back at most that.
    let quota = state
        .relay
        .ledger
        .settle_charged(reservation, record, 0)
        .await;
    let mode = match (p, &video) {
        (Platform::Midjourney(m), _) => m.as_str(),
        (Platform::Kling, Some(v)) => v.mode.as_str(),
        _ => "",
    };
    let mut props = json!({"model": model, "mode": mode, "group": group, "request_id": request_id, "kind": kind});
    if let Some(v) = &video {
        props["seconds"] = json!(v.seconds);
        props["video_model"] = json!(v.model);
        // Seconds billed one by one: a shorter video gives the difference back.
        props["per_second"] = json!(!per_call);
    }
    let row = SubmittedTask {
        task_id,
        platform: p.name(),
        user_id: token.user_id,
        token_id: token.id,
        channel_id: ch.id,
        quota,
        action,
        prompt: prompt_of(&parsed),
        properties: props.to_string(),
    };
    record_task(&state, row).await;
    Ok(relayed(answer))
}

/// For Midjourney actions on an earlier task (`action`, `change`, `simple-change`, `modal`):
/// the pin to the channel that holds that task (it must be the key owner's).
async fn origin_pin(
    state: &web::Data<AppState>,
    token: &AuthToken,
    p: Platform,
    kind: &str,
    parsed: &Value,
) -> Result<Option<ChannelPin>, Refusal> {
    let needs_origin = matches!(p, Platform::Midjourney(_))
        && matches!(kind, "action" | "change" | "simple-change" | "modal");
    if !needs_origin {
        return Ok(None);
    }
    let origin = origin_task_id(parsed).ok_or_else(|| {
        Refusal::new(
            400,
            ErrorCode::MissingTaskId,
            "taskId is required for this action.",
        )
    })?;
    let uid = token.user_id;
    let found = state
        .db(
            move |c| match tasks::find_by_task_id(c, PLATFORM_MIDJOURNEY, &origin, Some(uid)) {
                Ok(t) => Ok(Some(t)),
                Err(e) if e.is_not_found() => Ok(None),
                Err(e) => Err(e.into()),
            },
        )
        .await
        .map_err(|_| edge::internal("finding the task"))?;
    match found {
        Some(t) => Ok(Some(ChannelPin::Only(t.channel_id))),
        None => Err(Refusal::new(
            404,
            ErrorCode::TaskNotFound,
            "The task this action refers to does not exist.",
        )),
    }
}

/// The model names an action may be served under: a Midjourney mode's model, then the plain
/// one (for keys and channels that name only that); Suno's one model.
fn task_models(p: Platform, action: &'static str) -> Vec<String> {
    match p {
        Platform::Midjourney(mode) => {
            let m = dtask::mj_model(action, mode);
            let plain = dtask::mj_model(action, MjMode::Default);
            if m == plain {
                vec![m]
            } else {
                vec![m, plain]
            }
        }
        Platform::Suno => vec![dtask::suno_model(action)],
        // Decided from the body (see `submit_task`).
        Platform::Kling => Vec::new(),
    }
}

/// A task the upstream accepted, as recorded for the poller.
struct SubmittedTask {
    task_id: String,
    platform: &'static str,
    user_id: i64,
    token_id: i64,
    channel_id: i64,
    quota: i64,
    action: &'static str,
    prompt: String,
    properties: String,
}

/// Records an accepted task (already charged); a failure is logged: the client has its task id
/// and the charge stands.
async fn record_task(state: &web::Data<AppState>, t: SubmittedTask) {
    let task_id = t.task_id.clone();
    let saved = state
        .db(move |c| {
            let now = now();
            Ok(tasks::insert(
                c,
                &NewTask {
                    task_id: &t.task_id,
                    platform: t.platform,
                    user_id: t.user_id,
                    token_id: t.token_id,
                    channel_id: t.channel_id,
                    quota: t.quota,
                    action: t.action,
                    status: "SUBMITTED",
                    fail_reason: "",
                    submit_time: now,
                    progress: "0%",
                    prompt: &t.prompt,
                    prompt_en: "",
                    image_url: "",
                    properties: &t.properties,
                    data: "{}",
                    created_at: now,
                    updated_at: now,
                },
            )?)
        })
        .await;
    if let Err(e) = saved {
        tracing::error!(task = %task_id, "recording a submitted task failed: {e}");
    }
}

/// The upstream task id of an accepted submit, `None` when the upstream refused it.
fn accepted_task_id(p: Platform, v: &Value) -> Option<String> {
    let id = match p {
        Platform::Midjourney(_) => {
            let code = v.get("code").and_then(Value::as_i64)?;
            if !dtask::mj_submit_accepted(code) {
                return None;
            }
            v.get("result")
        }
        Platform::Suno => {
            if v.get("code").and_then(Value::as_str) != Some("success") {
                return None;
            }
            v.get("data")
        }
        Platform::Kling => {
            if v.get("code").and_then(Value::as_i64) != Some(0) {
                return None;
            }
            v.get("data")?.get("task_id")
        }
    }?;
    let s = match id {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    (!s.is_empty()).then_some(s)
}

/// A task as a midjourney-proxy client reads it (times in milliseconds).
pub fn mj_task_json(t: &TaskRow) -> Value {
    let mut o = match serde_json::from_str::<Value>(&t.data) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    };
    let ms = |s: i64| if s > 0 { json!(s * 1000) } else { Value::Null };
    o.insert("id".into(), json!(t.task_id));
    o.insert("action".into(), json!(t.action));
    o.insert("prompt".into(), json!(t.prompt));
    o.insert("promptEn".into(), json!(t.prompt_en));
    o.insert("status".into(), json!(t.status));
    o.insert("progress".into(), json!(t.progress));
    o.insert("failReason".into(), json!(t.fail_reason));
    o.insert("imageUrl".into(), json!(t.image_url));
    o.insert("submitTime".into(), ms(t.submit_time));
    o.insert("startTime".into(), ms(t.start_time));
    o.insert("finishTime".into(), ms(t.finish_time));
    o.entry("description").or_insert(json!(""));
    o.entry("buttons").or_insert(json!([]));
    o.entry("properties").or_insert(json!({}));
    Value::Object(o)
}

/// A task as a Suno API client reads it (times in seconds; `data` the upstream's clips).
pub fn suno_task_json(t: &TaskRow) -> Value {
    let upstream: Value = serde_json::from_str(&t.data).unwrap_or(Value::Null);
    json!({
        "task_id": t.task_id,
        "action": t.action,
        "status": t.status,
        "fail_reason": t.fail_reason,
        "submit_time": t.submit_time,
        "start_time": t.start_time,
        "finish_time": t.finish_time,
        "progress": t.progress,
        "data": upstream.get("data").cloned().unwrap_or(Value::Null),
    })
}

/// A task as a Kling client reads it: Kling's own answer, `{code: 0, message, request_id,
/// data: {task_id, task_status, task_status_msg, created_at, updated_at, task_result}}`, from
/// the upstream's last word on it (times in milliseconds, as Kling sends them).
pub fn kling_task_json(t: &TaskRow) -> Value {
    let mut data = match serde_json::from_str::<Value>(&t.data) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    };
    let status = match t.status.as_str() {
        "SUCCESS" => "succeed",
        "FAILURE" => "failed",
        "IN_PROGRESS" => "processing",
        _ => "submitted",
    };
    data.insert("task_id".into(), json!(t.task_id));
    data.insert("task_status".into(), json!(status));
    if !t.fail_reason.is_empty() {
        data.insert("task_status_msg".into(), json!(t.fail_reason));
    }
    data.entry("created_at")
        .or_insert(json!(t.submit_time * 1000));
    data.entry("updated_at")
        .or_insert(json!(t.updated_at * 1000));
    json!({"code": 0, "message": "SUCCEED", "request_id": t.task_id, "data": data})
}

/// `GET /kling/v1/videos/{action}/{id}`: the caller's video task.
pub async fn kling_fetch(state: web::Data<AppState>, req: HttpRequest, id: String) -> HttpResponse {
    fetch_own(&state, &req, Platform::Kling, id, kling_task_json).await
}

/// One of the caller's tasks of a platform, by upstream id, as `render` shows it (404 in the
/// platform's shape when the task is not the caller's or does not exist).
async fn fetch_own(
    state: &web::Data<AppState>,
    req: &HttpRequest,
    p: Platform,
    id: String,
    render: fn(&TaskRow) -> Value,
) -> HttpResponse {
    let (token, _) = match auth(state, req, p).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    match own_tasks(state, p.name(), token.user_id, vec![id]).await {
        Ok(rows) => match rows.first() {
            Some(t) => HttpResponse::Ok().json(render(t)),
            None => task_error(p, 404, ErrorCode::TaskNotFound, "No such task."),
        },
        Err(_) => task_error(
            p,
            500,
            ErrorCode::InternalError,
            "internal error while reading the task",
        ),
    }
}

/// `GET /mj[-mode]/task/{id}/fetch`: the caller's task.
pub async fn mj_fetch(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: String,
    mode: MjMode,
) -> HttpResponse {
    let p = Platform::Midjourney(mode);
    let (token, _) = match auth(&state, &req, p).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    let uid = token.user_id;
    let found = state
        .db(
            move |c| match tasks::find_by_task_id(c, PLATFORM_MIDJOURNEY, &id, Some(uid)) {
                Ok(t) => Ok(Some(t)),
                Err(e) if e.is_not_found() => Ok(None),
                Err(e) => Err(e.into()),
            },
        )
        .await;
    match found {
        Ok(Some(t)) => HttpResponse::Ok().json(mj_task_json(&t)),
        Ok(None) => task_error(p, 404, ErrorCode::TaskNotFound, "No such task."),
        Err(_) => task_error(
            p,
            500,
            ErrorCode::InternalError,
            "internal error while reading the task",
        ),
    }
}

fn ids_of(body: &[u8]) -> Option<Vec<String>> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let ids = v.get("ids")?.as_array()?;
    Some(
        ids.iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .take(1000)
            .collect(),
    )
}

async fn own_tasks(
    state: &AppState,
    platform: &'static str,
    user_id: i64,
    ids: Vec<String>,
) -> ApiResult<Vec<TaskRow>> {
    state
        .db(move |c| Ok(tasks::find_by_task_ids(c, platform, &ids, Some(user_id))?))
        .await
}

/// `POST /mj[-mode]/task/list-by-condition {ids}`: the caller's tasks among `ids`.
pub async fn mj_list(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    mode: MjMode,
) -> HttpResponse {
    let p = Platform::Midjourney(mode);
    let (token, _) = match auth(&state, &req, p).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    let Some(ids) = ids_of(&body) else {
        return task_error(
            p,
            400,
            ErrorCode::InvalidJson,
            "The body must be {\"ids\": [...]}.",
        );
    };
    match own_tasks(&state, PLATFORM_MIDJOURNEY, token.user_id, ids).await {
        Ok(rows) => HttpResponse::Ok().json(rows.iter().map(mj_task_json).collect::<Vec<_>>()),
        Err(_) => task_error(
            p,
            500,
            ErrorCode::InternalError,
            "internal error while reading tasks",
        ),
    }
}

/// `GET /mj[-mode]/image/{id}`: the task's result image, streamed from the upstream through the
/// task's channel (its proxy and headers). Public, like the image URLs it stands for: the upstream
/// task id is the capability.
pub async fn mj_image(state: web::Data<AppState>, id: String) -> HttpResponse {
    let p = Platform::Midjourney(MjMode::Default);
    let found = state
        .db(
            move |c| match tasks::find_by_task_id(c, PLATFORM_MIDJOURNEY, &id, None) {
                Ok(t) => Ok(Some(t)),
                Err(e) if e.is_not_found() => Ok(None),
                Err(e) => Err(e.into()),
            },
        )
        .await;
    let t = match found {
        Ok(Some(t)) if !t.image_url.is_empty() => t,
        Ok(_) => {
            return task_error(
                p,
                404,
                ErrorCode::ImageNotFound,
                "This task has no image (yet).",
            )
        }
        Err(_) => {
            return task_error(
                p,
                500,
                ErrorCode::InternalError,
                "internal error while reading the task",
            )
        }
    };
    // The channel's client: its proxy, and the outbound URL policy when root did not set its
    // destination (then the image URL may not be a non-public IP literal either).
    let client = match state.relay.snapshot().channel(t.channel_id) {
        Some(ch) if super::public_only(&state, &ch) => {
            let literal_refused = reqwest::Url::parse(&t.image_url).map_or(true, |u| {
                switchboard_relay::outbound::refused_before_lookup(&u)
            });
            if literal_refused {
                return task_error(
                    p,
                    502,
                    ErrorCode::UpstreamError,
                    "The image could not be fetched.",
                );
            }
            super::channel_client(&state, &ch)
        }
        Some(ch) => super::channel_client(&state, &ch),
        None => state.relay.clients.get(None),
    };
    let client = match client {
        Ok(c) => c,
        Err(_) => {
            return task_error(
                p,
                502,
                ErrorCode::UpstreamError,
                "The image could not be fetched.",
            )
        }
    };
    let resp = match tokio::time::timeout(UPSTREAM_CALL, client.get(&t.image_url).send()).await {
        Ok(Ok(r)) if r.status().is_success() => r,
        Ok(Ok(r)) => {
            return task_error(
                p,
                502,
                ErrorCode::UpstreamError,
                &format!("The image upstream answered {}.", r.status().as_u16()),
            )
        }
        _ => {
            return task_error(
                p,
                502,
                ErrorCode::UpstreamError,
                "The image could not be fetched.",
            )
        }
    };
    let ct = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("image/png")
        .to_owned();
    use futures_util::StreamExt;
    let stream = resp
        .bytes_stream()
        .map(|r| r.map_err(|e| actix_web::error::ErrorBadGateway(e.to_string())));
    HttpResponse::Ok()
        .content_type(ct)
        .insert_header(("Cache-Control", "public, max-age=86400"))
        .streaming(stream)
}

/// `GET /suno/fetch/{id}`: the caller's task.
pub async fn suno_fetch_one(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: String,
) -> HttpResponse {
    fetch_own(
        &state,
        &req,
        Platform::Suno,
        id,
        |t| json!({"code": "success", "message": "", "data": suno_task_json(t)}),
    )
    .await
}

/// `POST /suno/fetch {ids}`: the caller's tasks among `ids`.
pub async fn suno_fetch_many(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    let p = Platform::Suno;
    let (token, _) = match auth(&state, &req, p).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    let Some(ids) = ids_of(&body) else {
        return task_error(
            p,
            400,
            ErrorCode::InvalidJson,
            "The body must be {\"ids\": [...]}.",
        );
    };
    match own_tasks(&state, PLATFORM_SUNO, token.user_id, ids).await {
        Ok(rows) => HttpResponse::Ok().json(json!({"code": "success", "message": "", "data": rows.iter().map(suno_task_json).collect::<Vec<_>>()})),
        Err(_) => task_error(p, 500, ErrorCode::InternalError, "internal error while reading tasks"),
    }
}

/// What one poller run did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PollSummary {
    /// Unfinished tasks looked at.
    pub checked: usize,
    /// Tasks whose state changed.
    pub updated: usize,
    /// Tasks that reached SUCCESS or FAILURE (timeouts included).
    pub finished: usize,
    /// Failed tasks whose charge went back (this run).
    pub refunded: usize,
    /// Quota refunded (this run).
    pub refunded_quota: i64,
}

fn mode_of(t: &TaskRow) -> MjMode {
    let m = serde_json::from_str::<Value>(&t.properties)
        .ok()
        .and_then(|v| v.get("mode").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    MjMode::ALL
        .into_iter()
        .find(|x| x.as_str() == m)
        .unwrap_or(MjMode::Default)
}

/// The change an upstream task object brings to a row.
fn progress_from(p: Platform, t: &TaskRow, v: &Value) -> TaskProgress {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let (status, progress, reason, start, finish) = match p {
        Platform::Midjourney(_) => (
            s("status"),
            v.get("progress"),
            s("failReason"),
            secs(v.get("startTime")),
            secs(v.get("finishTime")),
        ),
        Platform::Suno => (
            s("status"),
            v.get("progress"),
            s("fail_reason"),
            secs(v.get("start_time")),
            secs(v.get("finish_time")),
        ),
        // Kling reports no progress; its times are the task's creation and last change.
        Platform::Kling => (
            s("task_status"),
            None,
            s("task_status_msg"),
            0,
            secs(v.get("updated_at")),
        ),
    };
    let status = status
        .map(|x| dtask::normalize_status(&x))
        .filter(|x| !x.is_empty());
    let mut progress = progress.and_then(dtask::normalize_progress);
    if status.as_deref() == Some("SUCCESS") {
        progress = Some("100%".into());
    }
    let finished = status.as_deref().is_some_and(dtask::is_final_status);
    let mut out = TaskProgress {
        status: status.clone(),
        progress,
        fail_reason: reason.filter(|r| !r.is_empty()),
        start_time: (start > 0 && t.start_time == 0).then_some(start),
        finish_time: finished.then(|| if finish > 0 { finish } else { now() }),
        data: Some(v.to_string()),
        ..TaskProgress::default()
    };
    if let Platform::Midjourney(_) = p {
        out.image_url = s("imageUrl").filter(|u| !u.is_empty());
        out.prompt_en = s("promptEn").filter(|u| !u.is_empty());
    }
    if p == Platform::Kling {
        // The result's address (the first video) is kept where Midjourney keeps its image.
        out.image_url = v
            .pointer("/task_result/videos/0/url")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
            .map(str::to_owned);
        if status.as_deref() == Some("IN_PROGRESS") && t.progress == "0%" {
            out.progress = Some("50%".into());
        }
    }
    if status.as_deref() == Some("FAILURE") && out.fail_reason.is_none() {
        out.fail_reason = Some("the upstream reported a failure".into());
    }
    out
}

fn changed(t: &TaskRow, u: &TaskProgress) -> bool {
    u.status.as_ref().is_some_and(|s| *s != t.status)
        || u.progress.as_ref().is_some_and(|s| *s != t.progress)
        || u.image_url.as_ref().is_some_and(|s| *s != t.image_url)
        || u.fail_reason.as_ref().is_some_and(|s| *s != t.fail_reason)
}

/// Applies an update and, when it fails the task, refunds it, in one transaction. Returns
/// (row changed, quota refunded).
async fn apply(state: &AppState, t: &TaskRow, u: TaskProgress) -> ApiResult<(bool, i64)> {
    let id = t.id;
    let failing = u.status.as_deref() == Some("FAILURE");
    let short = if u.status.as_deref() == Some("SUCCESS") {
        unused_seconds(t, u.data.as_deref())
    } else {
        None
    };
    let (changed, refunded) = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                let changed = tasks::update_progress(c, id, &u)?;
                let refunded = match short {
                    _ if failing => tasks::refund(c, id)?,
                    Some((asked, delivered)) => tasks::refund_unused(c, id, asked, delivered)?,
                    None => 0,
                };
                Ok::<_, crate::error::ApiError>((changed, refunded))
            })
        })
        .await?;
    if refunded > 0 {
        state.relay.ledger.credit_user(t.user_id, refunded).await;
        if t.token_id > 0 {
            state.relay.ledger.credit_token(t.token_id, refunded).await;
        }
    }
    Ok((changed, refunded))
}

/// A video billed per second that came back shorter than asked: (seconds billed, seconds
/// delivered, rounded up). `None` for every other task, and when the upstream does not say.
fn unused_seconds(t: &TaskRow, data: Option<&str>) -> Option<(i64, i64)> {
    if t.platform != Platform::Kling.name() {
        return None;
    }
    let props: Value = serde_json::from_str(&t.properties).ok()?;
    if props.get("per_second").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let asked = props.get("seconds").and_then(Value::as_i64)?;
    let v: Value = serde_json::from_str(data?).ok()?;
    let d = v.pointer("/task_result/videos/0/duration")?;
    let delivered = match d {
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        other => other.as_f64()?,
    };
    if !delivered.is_finite() || delivered < 0.0 {
        return None;
    }
    let delivered = delivered.ceil() as i64;
    (delivered < asked).then_some((asked, delivered))
}

/// Asks the upstream about a batch of tasks of one channel, platform and mode; the answers by
/// upstream id. `None` when the call failed (the tasks are tried again next time).
async fn fetch_batch(
    state: &AppState,
    ch: &ChannelInfo,
    p: Platform,
    batch: &[&TaskRow],
) -> Option<BTreeMap<String, Value>> {
    if p == Platform::Kling {
        return kling_fetch_batch(state, ch, batch).await;
    }
    let ids: Vec<&str> = batch.iter().map(|t| t.task_id.as_str()).collect();
    let (path, body) = match p {
        Platform::Midjourney(_) => (
            upstream_path(p, "/task/list-by-condition"),
            json!({"ids": ids}),
        ),
        Platform::Suno => (
            upstream_path(p, "/fetch"),
            json!({"ids": ids, "action": batch.first().map(|t| t.action.as_str()).unwrap_or("")}),
        ),
        Platform::Kling => return None,
    };
    let body = serde_json::to_vec(&body).ok()?;
    let (_, answer) = match call(state, ch, p, reqwest::Method::POST, &path, Some(body)).await {
        Ok(a) => a,
        Err(f) => {
            tracing::warn!(channel = ch.id, "fetching tasks failed: {}", f.message);
            return None;
        }
    };
    let v: Value = serde_json::from_slice(&answer).ok()?;
    let (list, key) = match p {
        Platform::Midjourney(_) => (v.as_array().cloned()?, "id"),
        Platform::Suno => (v.get("data").and_then(Value::as_array).cloned()?, "task_id"),
        Platform::Kling => return None,
    };
    Some(
        list.into_iter()
            .filter_map(|item| {
                let id = match item.get(key)? {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some((id, item))
            })
            .collect(),
    )
}

/// Kling has no fetch by several ids: each task is asked for on its own
/// (`GET /v1/videos/{action}/{task_id}`); the answers (Kling's `data` objects) by task id. `None`
/// when no call succeeded.
async fn kling_fetch_batch(
    state: &AppState,
    ch: &ChannelInfo,
    batch: &[&TaskRow],
) -> Option<BTreeMap<String, Value>> {
    let p = Platform::Kling;
    let mut out = BTreeMap::new();
    for t in batch {
        let path = upstream_path(
            p,
            &format!("/{}/{}", t.action.to_ascii_lowercase(), t.task_id),
        );
        let answer = match call(state, ch, p, reqwest::Method::GET, &path, None).await {
            Ok((_, a)) => a,
            Err(f) => {
                tracing::warn!(channel = ch.id, task = %t.task_id, "fetching a video task failed: {}", f.message);
                continue;
            }
        };
        let Ok(v) = serde_json::from_slice::<Value>(&answer) else {
            continue;
        };
        if v.get("code").and_then(Value::as_i64) != Some(0) {
            continue;
        }
        if let Some(data) = v.get("data").filter(|d| d.is_object()) {
            out.insert(t.task_id.clone(), data.clone());
        }
    }
    (!out.is_empty()).then_some(out)
}

/// One pass over every unfinished task (see the module documentation). Safe to run on several
/// nodes at once (updates apply to unfinished rows only and refunds happen once), but
/// [`poll_tasks_once`] keeps it to one node per period.
pub async fn poll_tasks(state: &AppState) -> ApiResult<PollSummary> {
    let mut sum = PollSummary::default();
    let snapshot = state.relay.snapshot();
    let mut after = 0;
    loop {
        let rows = state
            .db(move |c| Ok(tasks::unfinished(c, after, DB_BATCH)?))
            .await?;
        let Some(last) = rows.last() else { break };
        after = last.id;
        sum.checked += rows.len();
        // (channel, platform, mode or action) -> tasks
        let mut groups: BTreeMap<(i64, &'static str, String), Vec<&TaskRow>> = BTreeMap::new();
        for t in &rows {
            let (platform, sub) = if t.platform == PLATFORM_SUNO {
                (PLATFORM_SUNO, t.action.clone())
            } else if t.platform == PLATFORM_KLING {
                (PLATFORM_KLING, t.action.clone())
            } else {
                (PLATFORM_MIDJOURNEY, mode_of(t).as_str().to_owned())
            };
            groups
                .entry((t.channel_id, platform, sub))
                .or_default()
                .push(t);
        }
        for ((cid, platform, _), list) in groups {
            let ch = snapshot.channel(cid);
            for batch in list.chunks(FETCH_BATCH) {
                let p = if platform == PLATFORM_SUNO {
                    Platform::Suno
                } else if platform == PLATFORM_KLING {
                    Platform::Kling
                } else {
                    Platform::Midjourney(
                        batch.first().map(|t| mode_of(t)).unwrap_or(MjMode::Default),
                    )
                };
                let answers = match &ch {
                    Some(ch) => fetch_batch(state, ch, p, batch).await,
                    None => None,
                };
                for t in batch {
                    let update = match answers.as_ref().and_then(|a| a.get(&t.task_id)) {
                        Some(v) => progress_from(p, t, v),
                        None if now() - t.submit_time > TASK_TIMEOUT_SECS => TaskProgress {
                            status: Some("FAILURE".into()),
                            fail_reason: Some(format!(
                                "the task did not finish within {} hours",
                                TASK_TIMEOUT_SECS / 3600
                            )),
                            finish_time: Some(now()),
                            ..TaskProgress::default()
                        },
                        None => continue,
                    };
                    // Still unfinished past the deadline: fail it even though the upstream answers.
                    let update = if now() - t.submit_time > TASK_TIMEOUT_SECS
                        && !update.status.as_deref().is_some_and(dtask::is_final_status)
                    {
                        TaskProgress {
                            status: Some("FAILURE".into()),
                            fail_reason: Some(format!(
                                "the task did not finish within {} hours",
                                TASK_TIMEOUT_SECS / 3600
                            )),
                            finish_time: Some(now()),
                            ..update
                        }
                    } else {
                        update
                    };
                    if !changed(t, &update) {
                        continue;
                    }
                    let finishing = update.status.as_deref().is_some_and(dtask::is_final_status);
                    match apply(state, t, update).await {
                        Ok((ch_changed, refunded)) => {
                            if ch_changed {
                                sum.updated += 1;
                                if finishing {
                                    sum.finished += 1;
                                }
                            }
                            if refunded > 0 {
                                sum.refunded += 1;
                                sum.refunded_quota += refunded;
                            }
                        }
                        Err(e) => tracing::warn!(task = t.id, "updating a task failed: {e}"),
                    }
                }
            }
        }
        if (rows.len() as i64) < DB_BATCH {
            break;
        }
    }
    Ok(sum)
}

/// The poller as the cluster runs it: the node that takes the `task-poll` lease for this period
/// polls, the others do nothing. Returns `None` when another node has the period.
pub async fn poll_tasks_once(
    state: &AppState,
    holder: &str,
    every: Duration,
) -> ApiResult<Option<PollSummary>> {
    let ttl = i64::try_from(every.as_secs())
        .unwrap_or(15)
        .saturating_sub(1)
        .max(1);
    let mine =
        crate::jobs::acquire(state, "task-poll", holder, ttl, crate::jobs::Lease::Period).await?;
    if !mine {
        return Ok(None);
    }
    poll_tasks(state).await.map(Some)
}

/// Runs [`poll_tasks_once`] every `every` for as long as the actix system runs.
pub fn spawn_poller(state: web::Data<AppState>, holder: String, every: Duration) {
    actix_web::rt::spawn(async move {
        let mut tick = actix_web::rt::time::interval(every);
        loop {
            tick.tick().await;
            match poll_tasks_once(&state, &holder, every).await {
                Ok(Some(s)) if s.updated > 0 || s.refunded > 0 => {
                    tracing::info!(?s, "async tasks polled")
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("polling async tasks failed: {e}"),
            }
        }
    });
}

/// Registers the task relay routes: `/mj`, `/mj-fast`, `/mj-turbo`, `/mj-relax`, `/suno` and
/// `/kling`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    for mode in MjMode::ALL {
        cfg.service(
            web::scope(mode.prefix())
                .app_data(web::PayloadConfig::new(64 << 20))
                .route(
                    "/submit/{kind}",
                    web::post().to(
                        move |s: web::Data<AppState>,
                              r: HttpRequest,
                              b: Bytes,
                              k: web::Path<String>| {
                            mj_submit(s, r, b, k.into_inner(), mode)
                        },
                    ),
                )
                .route(
                    "/task/list-by-condition",
                    web::post().to(move |s: web::Data<AppState>, r: HttpRequest, b: Bytes| {
                        mj_list(s, r, b, mode)
                    }),
                )
                .route(
                    "/task/{id}/fetch",
                    web::get().to(
                        move |s: web::Data<AppState>, r: HttpRequest, id: web::Path<String>| {
                            mj_fetch(s, r, id.into_inner(), mode)
                        },
                    ),
                )
                .route(
                    "/image/{id}",
                    web::get().to(|s: web::Data<AppState>, id: web::Path<String>| {
                        mj_image(s, id.into_inner())
                    }),
                )
                .default_service(web::to(move || async move {
                    task_error(
                        Platform::Midjourney(mode),
                        404,
                        ErrorCode::NotFound,
                        "No such Midjourney route.",
                    )
                })),
        );
    }
    cfg.service(
        web::scope("/suno")
            .app_data(web::PayloadConfig::new(64 << 20))
            .route(
                "/submit/{kind}",
                web::post().to(
                    |s: web::Data<AppState>, r: HttpRequest, b: Bytes, k: web::Path<String>| {
                        suno_submit(s, r, b, k.into_inner())
                    },
                ),
            )
            .route("/fetch", web::post().to(suno_fetch_many))
            .route(
                "/fetch/{id}",
                web::get().to(
                    |s: web::Data<AppState>, r: HttpRequest, id: web::Path<String>| {
                        suno_fetch_one(s, r, id.into_inner())
                    },
                ),
            )
            .default_service(web::to(|| async {
                task_error(
                    Platform::Suno,
                    404,
                    ErrorCode::NotFound,
                    "No such Suno route.",
                )
            })),
    );
    cfg.service(
        web::scope("/kling/v1/videos")
            .app_data(web::PayloadConfig::new(64 << 20))
            .route(
                "/{kind}",
                web::post().to(
                    |s: web::Data<AppState>, r: HttpRequest, b: Bytes, k: web::Path<String>| {
                        kling_submit(s, r, b, k.into_inner())
                    },
                ),
            )
            .route(
                "/{kind}/{id}",
                web::get().to(
                    |s: web::Data<AppState>, r: HttpRequest, path: web::Path<(String, String)>| {
                        kling_fetch(s, r, path.into_inner().1)
                    },
                ),
            )
            .default_service(web::to(|| async {
                task_error(
                    Platform::Kling,
                    404,
                    ErrorCode::NotFound,
                    "No such Kling route.",
                )
            })),
    );
}
