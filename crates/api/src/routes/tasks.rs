//! Async task lists: `/api/mj` (Midjourney) and `/api/task` (Suno and other async tasks), all
//! tasks for administrators, the user's own on the `/self` routes.
//!
//! Filters arrive as text so that an empty parameter means "no filter" (as on the log routes);
//! the administrators' filters (`user_id`, `channel_id`) on a self route answer 403. Users never
//! see the channel of a task. Paging: `page` (1-based) and `size` (1..=100), newest first.

use super::paging::{self, int, page_req, text};
use crate::auth::{AdminUser, AuthUser};
use crate::error::{ApiError, ApiResult};
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::ErrorCode;
use switchboard_store::tasks::{
    self, TaskFilter, TaskRow, PLATFORM_KLING, PLATFORM_MIDJOURNEY, PLATFORM_SUNO,
};

/// Query of the task lists.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[schemars(rename = "TaskQuery")]
pub struct TaskQuery {
    page: Option<String>,
    size: Option<String>,
    /// The upstream's task id.
    task_id: Option<String>,
    /// `/api/task` only: `suno` (the default there), `kling` (video) or `midjourney`.
    platform: Option<String>,
    /// `IMAGINE`, `UPSCALE`, `MUSIC`, `LYRICS`, ...
    action: Option<String>,
    /// `SUBMITTED`, `IN_PROGRESS`, `SUCCESS`, `FAILURE`, ...
    status: Option<String>,
    /// Submit time from (unix seconds).
    start_timestamp: Option<String>,
    /// Submit time to (unix seconds).
    end_timestamp: Option<String>,
    // Administrators only.
    user_id: Option<String>,
    channel_id: Option<String>,
}

fn filter(q: &TaskQuery, own: Option<i64>, platform: Option<&str>) -> ApiResult<TaskFilter> {
    if own.is_some() {
        for (name, v) in [("user_id", &q.user_id), ("channel_id", &q.channel_id)] {
            if text(v).is_some() {
                return Err(ApiError::forbidden(
                    ErrorCode::Forbidden,
                    format!("the {name} filter is for administrators; your tasks are yours only"),
                ));
            }
        }
    }
    let platform = match platform {
        Some(p) => p.to_owned(),
        None => match text(&q.platform).map(|p| p.to_ascii_lowercase()) {
            None => PLATFORM_SUNO.to_owned(),
            Some(p) if p == PLATFORM_SUNO || p == PLATFORM_MIDJOURNEY || p == PLATFORM_KLING => p,
            Some(_) => {
                return Err(ApiError::bad_request(
                    ErrorCode::InvalidPlatform,
                    "platform must be suno, kling or midjourney",
                ))
            }
        },
    };
    let start = int("start_timestamp", &q.start_timestamp)?.filter(|&s| s != 0);
    let end = int("end_timestamp", &q.end_timestamp)?.filter(|&e| e != 0);
    if let (Some(s), Some(e)) = (start, end) {
        if e < s {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidRange,
                "end_timestamp cannot be before start_timestamp",
            ));
        }
    }
    Ok(TaskFilter {
        platform: Some(platform),
        user_id: own.or(int("user_id", &q.user_id)?),
        channel_id: int("channel_id", &q.channel_id)?.filter(|&c| c != 0),
        task_id: text(&q.task_id),
        action: text(&q.action).map(|a| a.to_ascii_uppercase()),
        status: text(&q.status).map(|s| s.to_ascii_uppercase()),
        start,
        end,
    })
}

/// One task as the console shows it; the channel for administrators only.
pub fn task_json(t: &TaskRow, admin: bool) -> Value {
    let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
    let props = parse(&t.properties);
    let mut v = json!({
        "id": t.id,
        "task_id": t.task_id,
        "platform": t.platform,
        "action": t.action,
        "status": t.status,
        "progress": t.progress,
        "user_id": t.user_id,
        "token_id": t.token_id,
        "quota": t.quota,
        "refunded": t.refunded,
        "model": props.get("model").cloned().unwrap_or(Value::Null),
        "mode": props.get("mode").cloned().unwrap_or(Value::Null),
        "prompt": t.prompt,
        "prompt_en": t.prompt_en,
        "image_url": t.image_url,
        "fail_reason": t.fail_reason,
        "submit_time": t.submit_time,
        "start_time": t.start_time,
        "finish_time": t.finish_time,
        "data": parse(&t.data),
    });
    if admin {
        v["channel_id"] = json!(t.channel_id);
    }
    v
}

async fn list(
    state: &AppState,
    q: TaskQuery,
    own: Option<i64>,
    platform: Option<&str>,
) -> ApiResult<HttpResponse> {
    let f = filter(&q, own, platform)?;
    let page = page_req(int("page", &q.page)?, int("size", &q.size)?)?;
    let admin = own.is_none();
    let render = |t: &_| task_json(t, admin);
    paging::list(state, page, render, move |c| Ok(tasks::list(c, &f, page)?)).await
}

/// `GET /api/mj`: every Midjourney task (administrators).
pub async fn list_mj_all(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<TaskQuery>,
) -> ApiResult<HttpResponse> {
    list(&state, q.into_inner(), None, Some(PLATFORM_MIDJOURNEY)).await
}

/// `GET /api/mj/self`: the user's Midjourney tasks.
pub async fn list_mj_self(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<TaskQuery>,
) -> ApiResult<HttpResponse> {
    list(
        &state,
        q.into_inner(),
        Some(me.id),
        Some(PLATFORM_MIDJOURNEY),
    )
    .await
}

/// `GET /api/task`: every async task of a platform (Suno by default; administrators).
pub async fn list_all(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<TaskQuery>,
) -> ApiResult<HttpResponse> {
    list(&state, q.into_inner(), None, None).await
}

/// `GET /api/task/self`: the user's async tasks of a platform (Suno by default).
pub async fn list_self(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<TaskQuery>,
) -> ApiResult<HttpResponse> {
    list(&state, q.into_inner(), Some(me.id), None).await
}
