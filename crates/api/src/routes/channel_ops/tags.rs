//! Channel tags: the tags with their counts, an edit of every channel of a tag, and deleting a
//! tag's disabled channels.

use crate::auth::AdminUser;
use crate::error::{ok, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use switchboard_domain::DomainError;
use switchboard_domain::ErrorCode;
use switchboard_store::channels::{self, TagEdit};

/// `GET /api/channel/tags`: `[{tag, count}]` for every non-empty tag.
pub async fn tags(state: web::Data<AppState>, _a: AdminUser) -> ApiResult<HttpResponse> {
    let rows = state.db(|c| Ok(channels::tags(c)?)).await?;
    let data: Vec<_> = rows
        .into_iter()
        .map(|(tag, count)| json!({"tag": tag, "count": count}))
        .collect();
    Ok(ok(data))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TagBody {
    tag: String,
    priority: Option<i64>,
    weight: Option<i32>,
    status: Option<i32>,
}

/// `PUT /api/channel/tag {tag, priority?, weight?, status?}`: applies the given fields to every
/// channel of the tag → `{updated}`.
pub async fn update_tag(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<TagBody>,
) -> ApiResult<HttpResponse> {
    if b.tag.is_empty() {
        return Err(DomainError::Required { field: "tag" }.into());
    }
    if b.priority.is_some_and(|p| p < 0) {
        return Err(DomainError::TooSmall {
            field: "priority",
            min: 0,
        }
        .into());
    }
    if b.weight.is_some_and(|w| w < 1) {
        return Err(DomainError::TooSmall {
            field: "weight",
            min: 1,
        }
        .into());
    }
    if b.status.is_some_and(|s| !matches!(s, 1 | 2)) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidStatus,
            "status must be 1 (enabled) or 2 (disabled)",
        ));
    }
    if b.priority.is_none() && b.weight.is_none() && b.status.is_none() {
        return Err(ApiError::bad_request(
            ErrorCode::NothingToUpdate,
            "give at least one of priority, weight and status",
        ));
    }
    let edit = TagEdit {
        priority: b.priority,
        weight: b.weight,
        status: b.status,
    };
    let tag = b.tag;
    let updated = state
        .db(move |c| Ok(channels::update_tag(c, &tag, edit)?))
        .await?;
    if updated == 0 {
        return Err(ApiError::not_found("no channel has this tag"));
    }
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({ "updated": updated })))
}

/// `DELETE /api/channel/tag/{tag}/disabled`: deletes the disabled channels of a tag →
/// `{deleted}`.
pub async fn delete_tag_disabled(
    state: web::Data<AppState>,
    _a: AdminUser,
    tag: web::Path<String>,
) -> ApiResult<HttpResponse> {
    let tag = tag.into_inner();
    let deleted = state
        .db(move |c| Ok(channels::delete_disabled(c, Some(&tag))?))
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({ "deleted": deleted })))
}
