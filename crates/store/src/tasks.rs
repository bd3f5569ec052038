//! Async tasks submitted to upstreams that answer later (Midjourney, Suno): one row per task,
//! written at submit, advanced by the poller, and refunded exactly once when it fails.
//!
//! Indexes: `(user_id, platform, id)` serves the user's lists, `(platform, id)` and
//! `(channel_id, id)` the administrators' lists, `(platform, task_id)` the look-up by upstream id
//! and `(status)` the poller's unfinished tasks.

use crate::schema::{logs, tasks, tokens, users};
use crate::{insert_returning_id, now, DbConn, Page, PageReq, StoreResult};
use diesel::prelude::*;
use switchboard_domain::log::LogType;

pub const PLATFORM_MIDJOURNEY: &str = "midjourney";
pub const PLATFORM_SUNO: &str = "suno";
pub const PLATFORM_KLING: &str = "kling";

/// Statuses of a task that is not finished yet (the poller's work list). `MODAL` waits for more
/// input from the client; it is polled like the others and times out like them.
pub const UNFINISHED: &[&str] = &[
    "",
    "NOT_START",
    "SUBMITTED",
    "QUEUED",
    "IN_PROGRESS",
    "MODAL",
];

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = tasks)]
pub struct TaskRow {
    pub id: i64,
    pub task_id: String,
    pub platform: String,
    pub user_id: i64,
    pub token_id: i64,
    pub channel_id: i64,
    pub quota: i64,
    pub action: String,
    pub status: String,
    pub fail_reason: String,
    pub submit_time: i64,
    pub start_time: i64,
    pub finish_time: i64,
    pub progress: String,
    pub prompt: String,
    pub prompt_en: String,
    pub image_url: String,
    /// JSON: what the client and the task need later (model, mode, group, request id).
    pub properties: String,
    /// JSON: the upstream's last answer about the task.
    pub data: String,
    pub refunded: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

impl TaskRow {
    pub fn is_finished(&self) -> bool {
        !UNFINISHED.contains(&self.status.as_str())
    }
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = tasks)]
pub struct NewTask<'a> {
    pub task_id: &'a str,
    pub platform: &'a str,
    pub user_id: i64,
    pub token_id: i64,
    pub channel_id: i64,
    pub quota: i64,
    pub action: &'a str,
    pub status: &'a str,
    pub fail_reason: &'a str,
    pub submit_time: i64,
    pub progress: &'a str,
    pub prompt: &'a str,
    pub prompt_en: &'a str,
    pub image_url: &'a str,
    pub properties: &'a str,
    pub data: &'a str,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What a fetch from the upstream changes; `None` leaves a column alone.
#[derive(Debug, Clone, Default, AsChangeset)]
#[diesel(table_name = tasks)]
pub struct TaskProgress {
    pub status: Option<String>,
    pub progress: Option<String>,
    pub fail_reason: Option<String>,
    pub start_time: Option<i64>,
    pub finish_time: Option<i64>,
    pub prompt_en: Option<String>,
    pub image_url: Option<String>,
    pub data: Option<String>,
    pub updated_at: Option<i64>,
}

pub fn insert(conn: &mut DbConn, new: &NewTask<'_>) -> StoreResult<i64> {
    insert_returning_id!(conn, tasks::table, new, tasks::id)
}

pub fn find(conn: &mut DbConn, id: i64) -> StoreResult<TaskRow> {
    Ok(tasks::table
        .find(id)
        .select(TaskRow::as_select())
        .first(conn)?)
}

/// A task by its upstream id on one platform, the caller's own when `user_id` is set (a user
/// never reads another user's task; an unknown and a foreign id look the same: not found).
pub fn find_by_task_id(
    conn: &mut DbConn,
    platform: &str,
    task_id: &str,
    user_id: Option<i64>,
) -> StoreResult<TaskRow> {
    let mut q = tasks::table
        .filter(tasks::platform.eq(platform))
        .filter(tasks::task_id.eq(task_id))
        .into_boxed();
    if let Some(u) = user_id {
        q = q.filter(tasks::user_id.eq(u));
    }
    Ok(q.order(tasks::id.desc())
        .select(TaskRow::as_select())
        .first(conn)?)
}

/// Several tasks by upstream id (at most `ids.len()` rows; unknown or foreign ids are left out).
pub fn find_by_task_ids(
    conn: &mut DbConn,
    platform: &str,
    ids: &[String],
    user_id: Option<i64>,
) -> StoreResult<Vec<TaskRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut q = tasks::table
        .filter(tasks::platform.eq(platform))
        .filter(tasks::task_id.eq_any(ids))
        .into_boxed();
    if let Some(u) = user_id {
        q = q.filter(tasks::user_id.eq(u));
    }
    Ok(q.order(tasks::id.desc())
        .select(TaskRow::as_select())
        .load(conn)?)
}

/// Records what the upstream said about a task. A finished task keeps its final state: the
/// update applies only while the task is unfinished, so two pollers cannot undo each other.
/// Returns whether the row changed.
pub fn update_progress(conn: &mut DbConn, id: i64, p: &TaskProgress) -> StoreResult<bool> {
    let mut p = p.clone();
    p.updated_at = Some(p.updated_at.unwrap_or_else(now));
    let n = diesel::update(
        tasks::table
            .filter(tasks::id.eq(id))
            .filter(tasks::status.eq_any(UNFINISHED)),
    )
    .set(&p)
    .execute(conn)?;
    Ok(n > 0)
}

/// The list filters. Every field narrows the result; `None` does not filter. The user's own
/// routes always set `user_id`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    pub platform: Option<String>,
    pub user_id: Option<i64>,
    pub channel_id: Option<i64>,
    pub task_id: Option<String>,
    pub action: Option<String>,
    pub status: Option<String>,
    /// `submit_time >= start` (unix seconds).
    pub start: Option<i64>,
    /// `submit_time <= end`.
    pub end: Option<i64>,
}

type Db = <DbConn as diesel::Connection>::Backend;

fn filtered(f: &TaskFilter) -> tasks::BoxedQuery<'_, Db> {
    let mut q = tasks::table.into_boxed();
    if let Some(p) = &f.platform {
        q = q.filter(tasks::platform.eq(p));
    }
    if let Some(u) = f.user_id {
        q = q.filter(tasks::user_id.eq(u));
    }
    if let Some(c) = f.channel_id {
        q = q.filter(tasks::channel_id.eq(c));
    }
    if let Some(t) = &f.task_id {
        q = q.filter(tasks::task_id.eq(t));
    }
    if let Some(a) = &f.action {
        q = q.filter(tasks::action.eq(a));
    }
    if let Some(s) = &f.status {
        q = q.filter(tasks::status.eq(s));
    }
    if let Some(s) = f.start {
        q = q.filter(tasks::submit_time.ge(s));
    }
    if let Some(e) = f.end {
        q = q.filter(tasks::submit_time.le(e));
    }
    q
}

/// One page of tasks, newest first, with the number of matching rows.
pub fn list(conn: &mut DbConn, f: &TaskFilter, page: PageReq) -> StoreResult<Page<TaskRow>> {
    let total: i64 = filtered(f).count().get_result(conn)?;
    let items = filtered(f)
        .order(tasks::id.desc())
        .limit(page.size)
        .offset(page.offset())
        .select(TaskRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

/// Unfinished tasks with an id above `after_id`, oldest first, at most `limit` (the poller walks
/// them in batches).
pub fn unfinished(conn: &mut DbConn, after_id: i64, limit: i64) -> StoreResult<Vec<TaskRow>> {
    Ok(tasks::table
        .filter(tasks::status.eq_any(UNFINISHED))
        .filter(tasks::id.gt(after_id))
        .order(tasks::id.asc())
        .limit(limit)
        .select(TaskRow::as_select())
        .load(conn)?)
}

/// Gives a failed task's charge back, once: in one transaction, marks the task refunded (only
/// if it is finished with `FAILURE`, charged, and not refunded yet), credits the user and the
/// key, and writes a system log with the amount. Returns the amount refunded, 0 when there was
/// nothing to do (already refunded, not failed, free).
pub fn refund(conn: &mut DbConn, id: i64) -> StoreResult<i64> {
    give_back(conn, id, "FAILURE", None)
}

/// Gives back the seconds a video billed per second did not last, once: the task must have
/// succeeded, be charged and not refunded yet. The refund is the charge's share of the
/// seconds missing (`charge * (asked - delivered) / asked`, never more than the charge); the
/// task then keeps what it cost. Returns the amount refunded (0: nothing to do).
pub fn refund_unused(conn: &mut DbConn, id: i64, asked: i64, delivered: i64) -> StoreResult<i64> {
    if asked <= 0 || delivered >= asked {
        return Ok(0);
    }
    give_back(conn, id, "SUCCESS", Some((asked, delivered.max(0))))
}

/// [`refund`] and [`refund_unused`]: the whole charge (`part` None) or the share of the
/// seconds missing, for a task in `status`.
fn give_back(
    conn: &mut DbConn,
    id: i64,
    status: &str,
    part: Option<(i64, i64)>,
) -> StoreResult<i64> {
    crate::transaction(conn, |c| {
        let marked = diesel::update(
            tasks::table
                .filter(tasks::id.eq(id))
                .filter(tasks::status.eq(status))
                .filter(tasks::refunded.eq(false))
                .filter(tasks::quota.gt(0)),
        )
        .set((tasks::refunded.eq(true), tasks::updated_at.eq(now())))
        .execute(c)?;
        if marked == 0 {
            return Ok(0);
        }
        let t = find(c, id)?;
        let amount = match part {
            None => t.quota,
            Some((asked, delivered)) => {
                let share = i128::from(t.quota) * i128::from(asked - delivered) / i128::from(asked);
                i64::try_from(share).unwrap_or(0).clamp(0, t.quota)
            }
        };
        if amount == 0 {
            return Ok(0);
        }
        if part.is_some() {
            // The task keeps what it cost in the end.
            diesel::update(tasks::table.find(id))
                .set(tasks::quota.eq(t.quota - amount))
                .execute(c)?;
        }
        diesel::update(users::table.find(t.user_id))
            .set(users::quota.eq(users::quota + amount))
            .execute(c)?;
        let mut token_name = String::new();
        if t.token_id > 0 {
            diesel::update(tokens::table.find(t.token_id))
                .set(tokens::remain_quota.eq(tokens::remain_quota + amount))
                .execute(c)?;
            token_name = tokens::table
                .find(t.token_id)
                .select(tokens::name)
                .first::<String>(c)
                .optional()?
                .unwrap_or_default();
        }
        let username: String = users::table
            .find(t.user_id)
            .select(users::username)
            .first::<String>(c)
            .optional()?
            .unwrap_or_default();
        let model: String = serde_json::from_str::<serde_json::Value>(&t.properties)
            .ok()
            .and_then(|v| v.get("model").and_then(|m| m.as_str()).map(str::to_owned))
            .unwrap_or_default();
        let content = match part {
            None => format!(
                "Refund of failed {} task {} ({}): {}",
                t.platform, t.task_id, t.action, t.fail_reason
            ),
            Some((asked, delivered)) => format!(
                "Refund of {} task {} ({}): {delivered} s delivered of {asked} s billed",
                t.platform, t.task_id, t.action
            ),
        };
        let reason = match part {
            None => t.fail_reason.clone(),
            Some((_, delivered)) => format!("{delivered} s delivered"),
        };
        let metadata = serde_json::json!({"event": "task_refund", "task": t.id, "task_id": t.task_id, "platform": t.platform, "action": t.action, "reason": reason, "refund": true});
        diesel::insert_into(logs::table)
            .values((
                logs::created_at.eq(now()),
                logs::log_type.eq(LogType::System.as_i32()),
                logs::user_id.eq(t.user_id),
                logs::username.eq(username),
                logs::token_id.eq(t.token_id),
                logs::token_name.eq(token_name),
                logs::channel_id.eq(t.channel_id),
                logs::model_name.eq(model),
                logs::quota.eq(amount),
                logs::content.eq(content),
                logs::metadata.eq(metadata.to_string()),
            ))
            .execute(c)?;
        Ok(amount)
    })
}

/// Moves a task's submit time. Test support (the timeout tests need old tasks); not used by the
/// application.
#[doc(hidden)]
pub fn set_submit_time(conn: &mut DbConn, id: i64, submit_time: i64) -> StoreResult<()> {
    diesel::update(tasks::table.find(id))
        .set(tasks::submit_time.eq(submit_time))
        .execute(conn)?;
    Ok(())
}
