//! Fake async-task upstreams: a midjourney-proxy server and a Suno API server.
//!
//! - `POST [/mj-fast|/mj-turbo|/mj-relax]/mj/submit/{kind}` answers
//!   `{code: 1, description: "Submit success", result: "<task id>"}`; a prompt containing
//!   `refuse` answers `{code: 24, description: "Banned prompt"}` (nothing submitted).
//! - `GET .../mj/task/{id}/fetch` and `POST .../mj/task/list-by-condition {ids}` answer the task;
//!   each fetch advances it: first `IN_PROGRESS` at 50%, then `SUCCESS` at 100% with an
//!   `imageUrl` (served by `GET /mock-images/{id}.png`), or `FAILURE` when the prompt contains
//!   `fail`.
//! - `POST /suno/submit/{music|lyrics}` answers `{code: "success", data: "<task id>"}` (`refuse`
//!   in the prompt: `{code: "error"}`); `POST /suno/fetch {ids}` and `GET /suno/fetch/{id}`
//!   advance the same way (`IN_PROGRESS`, then `SUCCESS` with the clips in `data`, or `FAILURE`).
//!
//! - Kling: `POST /v1/videos/{text2video|image2video}` answers `{code: 0, message: "SUCCEED",
//!   data: {task_id, task_status: "submitted", ...}}` (`refuse` in the prompt: HTTP 400
//!   `{code: 1301, message: ...}`; a bearer token that is not a three-part JWT: 401
//!   `{code: 1000}`); `GET /v1/videos/{action}/{id}` advances it: `processing`, then `succeed`
//!   with `task_result.videos[0].url` (`GET /mock-videos/{id}.mp4`) and `duration` (the
//!   seconds asked for; 5 when the prompt contains `short`), or `failed` with a
//!   `task_status_msg` when the prompt contains `fail`.
//!
//! The midjourney-proxy key arrives as `mj-api-secret`, Suno's and Kling's as
//! `Authorization: Bearer`; all are recorded in [`crate::Recorded::authorization`].

use crate::{Recorded, Shared, PNG_1X1_B64};
use actix_web::{web, HttpRequest, HttpResponse};
use base64::Engine as _;
use bytes::Bytes;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

struct MockTask {
    action: String,
    prompt: String,
    fail: bool,
    fetches: u32,
    submit_ms: u64,
    /// A video's length as delivered (Kling).
    seconds: String,
}

#[derive(Default)]
pub(crate) struct Tasks {
    next: AtomicU64,
    tasks: Mutex<HashMap<String, MockTask>>,
}

impl Tasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, MockTask>> {
        match self.tasks.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    fn create(&self, prefix: &str, action: &str, prompt: &str) -> String {
        let id = format!(
            "{prefix}{}{}",
            now_ms(),
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        self.lock().insert(
            id.clone(),
            MockTask {
                action: action.to_owned(),
                prompt: prompt.to_owned(),
                fail: prompt.contains("fail"),
                fetches: 0,
                submit_ms: now_ms(),
                seconds: "5".into(),
            },
        );
        id
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// Registers the task routes (before the OpenAI catch-all); the server adds one
/// `web::Data<Tasks>` shared by all its workers.
pub(crate) fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/mj/submit/{kind}", web::post().to(mj_submit))
        .route("/{mode}/mj/submit/{kind}", web::post().to(mj_submit_mode))
        .route("/mj/task/{id}/fetch", web::get().to(mj_fetch))
        .route("/{mode}/mj/task/{id}/fetch", web::get().to(mj_fetch_mode))
        .route("/mj/task/list-by-condition", web::post().to(mj_list))
        .route("/{mode}/mj/task/list-by-condition", web::post().to(mj_list))
        .route("/mock-images/{name}", web::get().to(image))
        .route("/suno/submit/{kind}", web::post().to(suno_submit))
        .route("/suno/fetch", web::post().to(suno_fetch_many))
        .route("/suno/fetch/{id}", web::get().to(suno_fetch_one))
        .route("/v1/videos/{action}", web::post().to(kling_submit))
        .route("/v1/videos/{action}/{id}", web::get().to(kling_fetch))
        .route("/mock-videos/{name}", web::get().to(video));
}

/// Kling's answer to a token it does not take.
fn kling_unauthorized() -> HttpResponse {
    HttpResponse::Unauthorized()
        .json(json!({"code": 1000, "message": "Authentication failed", "request_id": "mock"}))
}

/// Whether the request carries a bearer token shaped like Kling's (a three-part JWT).
fn kling_authorized(req: &HttpRequest) -> bool {
    req.headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| t.split('.').count() == 3 && t.split('.').all(|p| !p.is_empty()))
}

async fn kling_submit(
    req: HttpRequest,
    body: Bytes,
    path: web::Path<String>,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    let v = record(&shared, &req, &body);
    if !kling_authorized(&req) {
        return kling_unauthorized();
    }
    let action = path.into_inner();
    if action != "text2video" && action != "image2video" {
        return HttpResponse::NotFound()
            .json(json!({"code": 1202, "message": "unknown action", "request_id": "mock"}));
    }
    let prompt = prompt_of(&v);
    if prompt.contains("refuse") {
        return HttpResponse::BadRequest().json(json!({"code": 1301,
            "message": "The prompt violates the content policy", "request_id": "mock"}));
    }
    let id = tasks.create("kling-", &action, &prompt);
    // The length asked for, delivered; a prompt with `short` gets 5 s whatever was asked.
    let seconds = match v.get("duration") {
        Some(Value::String(d)) => d.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "5".into(),
    };
    if let Some(t) = tasks.lock().get_mut(&id) {
        t.seconds = if prompt.contains("short") {
            "5".into()
        } else {
            seconds
        };
    }
    let ms = now_ms();
    HttpResponse::Ok().json(
        json!({"code": 0, "message": "SUCCEED", "request_id": "mock",
        "data": {"task_id": id, "task_status": "submitted", "created_at": ms, "updated_at": ms}}),
    )
}

fn kling_view(base: &str, id: &str, t: &mut MockTask) -> Value {
    t.fetches += 1;
    let mut data = json!({"task_id": id, "created_at": t.submit_ms, "updated_at": now_ms()});
    match (t.fetches, t.fail) {
        (1, _) => data["task_status"] = json!("processing"),
        (_, true) => {
            data["task_status"] = json!("failed");
            data["task_status_msg"] = json!("The video could not be generated (mock)");
        }
        (_, false) => {
            data["task_status"] = json!("succeed");
            data["task_result"] = json!({"videos": [{"id": format!("{id}-v"),
                "url": format!("{base}/mock-videos/{id}.mp4"), "duration": t.seconds}]});
        }
    }
    data
}

async fn kling_fetch(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    record(&shared, &req, &Bytes::new());
    if !kling_authorized(&req) {
        return kling_unauthorized();
    }
    let base = base(&req);
    let (_, id) = path.into_inner();
    let mut g = tasks.lock();
    match g.get_mut(&id) {
        Some(t) => HttpResponse::Ok().json(json!({"code": 0, "message": "SUCCEED",
            "request_id": "mock", "data": kling_view(&base, &id, t)})),
        None => HttpResponse::NotFound()
            .json(json!({"code": 1203, "message": "task not found", "request_id": "mock"})),
    }
}

/// A few bytes that start like an MP4 file (an `ftyp` box).
async fn video(req: HttpRequest, shared: web::Data<Shared>) -> HttpResponse {
    record(&shared, &req, &Bytes::new());
    let mut mp4 = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2".to_vec();
    mp4.resize(64, 0);
    HttpResponse::Ok().content_type("video/mp4").body(mp4)
}

fn record(shared: &Shared, req: &HttpRequest, body: &Bytes) -> Value {
    let parsed: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if shared.record {
        let h = |n: &str| {
            req.headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let authorization = h("mj-api-secret")
            .or_else(|| h("authorization"))
            .unwrap_or_default();
        let key = authorization
            .strip_prefix("Bearer ")
            .unwrap_or(&authorization)
            .to_owned();
        shared.lock().push(Recorded {
            path: req.path().to_owned(),
            query: req.query_string().to_owned(),
            authorization,
            key,
            headers: req
                .headers()
                .iter()
                .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect(),
            body: parsed.clone(),
        });
    }
    parsed
}

fn base(req: &HttpRequest) -> String {
    let ci = req.connection_info();
    format!("{}://{}", ci.scheme(), ci.host())
}

fn prompt_of(body: &Value) -> String {
    ["prompt", "gpt_description_prompt", "content"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
        .unwrap_or_default()
        .to_owned()
}

async fn mj_submit(
    req: HttpRequest,
    body: Bytes,
    path: web::Path<String>,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    submit(&req, &body, &path.into_inner(), &shared, &tasks)
}

async fn mj_submit_mode(
    req: HttpRequest,
    body: Bytes,
    path: web::Path<(String, String)>,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    let (_, kind) = path.into_inner();
    submit(&req, &body, &kind, &shared, &tasks)
}

fn submit(
    req: &HttpRequest,
    body: &Bytes,
    kind: &str,
    shared: &Shared,
    tasks: &Tasks,
) -> HttpResponse {
    let v = record(shared, req, body);
    let prompt = prompt_of(&v);
    if prompt.contains("refuse") {
        return HttpResponse::Ok().json(
            json!({"code": 24, "description": "Banned prompt", "result": null, "properties": {}}),
        );
    }
    let action = match kind {
        "action" | "change" | "simple-change" => "UPSCALE".to_owned(),
        k => k.to_ascii_uppercase(),
    };
    let id = tasks.create("", &action, &prompt);
    HttpResponse::Ok()
        .json(json!({"code": 1, "description": "Submit success", "result": id, "properties": {}}))
}

/// Advances a task by one fetch and shows it as midjourney-proxy does.
fn mj_view(base: &str, id: &str, t: &mut MockTask) -> Value {
    t.fetches += 1;
    let (status, progress, image, reason, finish) = match (t.fetches, t.fail) {
        (1, _) => ("IN_PROGRESS", "50%", String::new(), "", 0),
        (_, true) => ("FAILURE", "", String::new(), "mock failure", now_ms()),
        (_, false) => (
            "SUCCESS",
            "100%",
            format!("{base}/mock-images/{id}.png"),
            "",
            now_ms(),
        ),
    };
    json!({
        "id": id,
        "action": t.action,
        "prompt": t.prompt,
        "promptEn": format!("{} (en)", t.prompt),
        "description": "/imagine",
        "state": "",
        "submitTime": t.submit_ms,
        "startTime": t.submit_ms,
        "finishTime": finish,
        "imageUrl": image,
        "status": status,
        "progress": progress,
        "failReason": reason,
        "buttons": [{"customId": format!("MJ::JOB::upsample::1::{id}"), "label": "U1", "emoji": "", "style": 2, "type": 2}],
        "properties": {}
    })
}

async fn mj_fetch(
    req: HttpRequest,
    path: web::Path<String>,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    fetch_one(&req, &path.into_inner(), &shared, &tasks)
}

async fn mj_fetch_mode(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    let (_, id) = path.into_inner();
    fetch_one(&req, &id, &shared, &tasks)
}

fn fetch_one(req: &HttpRequest, id: &str, shared: &Shared, tasks: &Tasks) -> HttpResponse {
    record(shared, req, &Bytes::new());
    let base = base(req);
    let mut g = tasks.lock();
    match g.get_mut(id) {
        Some(t) => HttpResponse::Ok().json(mj_view(&base, id, t)),
        None => HttpResponse::NotFound().json(json!({"code": 3, "description": "task not found"})),
    }
}

fn ids_of(body: &Value) -> Vec<String> {
    body.get("ids")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

async fn mj_list(
    req: HttpRequest,
    body: Bytes,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    let v = record(&shared, &req, &body);
    let base = base(&req);
    let mut g = tasks.lock();
    let out: Vec<Value> = ids_of(&v)
        .iter()
        .filter_map(|id| g.get_mut(id).map(|t| mj_view(&base, id, t)))
        .collect();
    HttpResponse::Ok().json(out)
}

async fn image(req: HttpRequest, shared: web::Data<Shared>) -> HttpResponse {
    record(&shared, &req, &Bytes::new());
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG_1X1_B64)
        .unwrap_or_default();
    HttpResponse::Ok().content_type("image/png").body(png)
}

async fn suno_submit(
    req: HttpRequest,
    body: Bytes,
    path: web::Path<String>,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    let v = record(&shared, &req, &body);
    let prompt = prompt_of(&v);
    if prompt.contains("refuse") {
        return HttpResponse::Ok()
            .json(json!({"code": "error", "message": "prompt refused", "data": null}));
    }
    let action = path.into_inner().to_ascii_uppercase();
    let id = tasks.create("suno-", &action, &prompt);
    HttpResponse::Ok().json(json!({"code": "success", "message": "", "data": id}))
}

fn suno_view(base: &str, id: &str, t: &mut MockTask) -> Value {
    t.fetches += 1;
    let secs = t.submit_ms / 1000;
    let (status, progress, reason, data, finish) = match (t.fetches, t.fail) {
        (1, _) => ("IN_PROGRESS", "50%", "", json!([]), 0),
        (_, true) => (
            "FAILURE",
            "100%",
            "mock failure",
            json!([]),
            now_ms() / 1000,
        ),
        (_, false) => (
            "SUCCESS",
            "100%",
            "",
            json!([{"id": format!("{id}-clip"), "title": "mock song", "audio_url": format!("{base}/mock-audio/{id}.mp3"), "image_url": format!("{base}/mock-images/{id}.png"), "metadata": {"prompt": t.prompt}}]),
            now_ms() / 1000,
        ),
    };
    json!({
        "task_id": id,
        "action": t.action,
        "status": status,
        "fail_reason": reason,
        "submit_time": secs,
        "start_time": secs,
        "finish_time": finish,
        "progress": progress,
        "data": data
    })
}

async fn suno_fetch_many(
    req: HttpRequest,
    body: Bytes,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    let v = record(&shared, &req, &body);
    let base = base(&req);
    let mut g = tasks.lock();
    let out: Vec<Value> = ids_of(&v)
        .iter()
        .filter_map(|id| g.get_mut(id).map(|t| suno_view(&base, id, t)))
        .collect();
    HttpResponse::Ok().json(json!({"code": "success", "message": "", "data": out}))
}

async fn suno_fetch_one(
    req: HttpRequest,
    path: web::Path<String>,
    shared: web::Data<Shared>,
    tasks: web::Data<Tasks>,
) -> HttpResponse {
    record(&shared, &req, &Bytes::new());
    let base = base(&req);
    let id = path.into_inner();
    let mut g = tasks.lock();
    match g.get_mut(&id) {
        Some(t) => HttpResponse::Ok()
            .json(json!({"code": "success", "message": "", "data": suno_view(&base, &id, t)})),
        None => HttpResponse::NotFound()
            .json(json!({"code": "not_found", "message": "task not found", "data": null})),
    }
}
