//! Operations on many channels at once: delete a batch or every disabled one, set the Azure API
//! version or remove a model across channels, and copy a channel.

use crate::auth::AdminUser;
use crate::error::{ok, ApiError, ApiResult};
use crate::extract::Body;
use crate::routes::channels::not_found;
use crate::routes::channels::MAX_BATCH;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use switchboard_domain::DomainError;
use switchboard_domain::ErrorCode;
use switchboard_store::channels::{self};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdsBody {
    ids: Vec<i64>,
}

/// `POST /api/channel/batch_delete {ids}` (1 to 500 ids) → `{deleted}`; unknown ids are
/// ignored.
pub async fn batch_delete(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<IdsBody>,
) -> ApiResult<HttpResponse> {
    if b.ids.is_empty() || b.ids.len() > MAX_BATCH {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidIds,
            format!("ids must hold 1 to {MAX_BATCH} channel ids"),
        ));
    }
    let mut ids = b.ids;
    ids.sort_unstable();
    ids.dedup();
    let deleted = state
        .db(move |c| Ok(channels::delete_many(c, &ids)?))
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({ "deleted": deleted })))
}

/// `DELETE /api/channel/disabled`: deletes every disabled channel (status 2 or 3) →
/// `{deleted}`.
pub async fn delete_disabled(state: web::Data<AppState>, _a: AdminUser) -> ApiResult<HttpResponse> {
    let deleted = state
        .db(|c| Ok(channels::delete_disabled(c, None)?))
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({ "deleted": deleted })))
}

/// Longest channel name a copy may get (the suffix is cut to fit).
const MAX_NAME: usize = 100;

fn checked_ids(ids: Option<Vec<i64>>) -> ApiResult<Option<Vec<i64>>> {
    match ids {
        None => Ok(None),
        Some(ids) if ids.is_empty() || ids.len() > MAX_BATCH => Err(ApiError::bad_request(
            ErrorCode::InvalidIds,
            format!("ids must hold 1 to {MAX_BATCH} channel ids (leave it out for every channel)"),
        )),
        Some(mut ids) => {
            ids.sort_unstable();
            ids.dedup();
            Ok(Some(ids))
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchValueBody {
    /// The channels to edit; every channel when left out.
    ids: Option<Vec<i64>>,
    value: String,
}

/// `PUT /api/channel/batch/azure_api {ids?, value}`: sets the API version of the Azure
/// channels among `ids` (every Azure channel without `ids`) → `{updated, ids}`.
pub async fn batch_azure_api(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<BatchValueBody>,
) -> ApiResult<HttpResponse> {
    use switchboard_domain::channel::{
        config_string, set_config_string, validate_azure_api_version, AZURE_API_VERSION_KEY,
        TYPE_AZURE,
    };
    if b.value.is_empty() {
        return Err(DomainError::Required { field: "value" }.into());
    }
    validate_azure_api_version(&b.value)?;
    let ids = checked_ids(b.ids)?;
    let version = b.value;
    let changed = state
        .db(move |c| {
            Ok(channels::edit_many(
                c,
                ids.as_deref(),
                Some(TYPE_AZURE),
                |f| {
                    if config_string(&f.config, AZURE_API_VERSION_KEY).as_deref() == Some(&version)
                    {
                        return false;
                    }
                    f.config = set_config_string(&f.config, AZURE_API_VERSION_KEY, &version);
                    true
                },
            )?)
        })
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({"updated": changed.len(), "ids": changed})))
}

/// `PUT /api/channel/batch/del_model {ids?, value}`: removes the model `value` from the
/// channels among `ids` (every channel without `ids`); a channel that would be left without
/// any model keeps it and is reported in `kept` → `{updated, ids, kept}`.
pub async fn batch_remove_model(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<BatchValueBody>,
) -> ApiResult<HttpResponse> {
    use switchboard_domain::channel::remove_model;
    if b.value.is_empty() {
        return Err(DomainError::Required { field: "value" }.into());
    }
    let ids = checked_ids(b.ids)?;
    let model = b.value;
    let (changed, kept) = state
        .db(move |c| {
            let mut kept = Vec::new();
            let changed = channels::edit_many(c, ids.as_deref(), None, |f| {
                match remove_model(&f.models, &model) {
                    Some(rest) if rest.is_empty() => {
                        kept.push(f.name.clone());
                        false
                    }
                    Some(rest) => {
                        f.models = rest;
                        if f.test_model == model {
                            f.test_model.clear();
                        }
                        true
                    }
                    None => false,
                }
            })?;
            Ok((changed, kept))
        })
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(
        json!({"updated": changed.len(), "ids": changed, "kept": kept}),
    ))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CopyQuery {
    /// Appended to the name of the copy; default `_copy`.
    suffix: Option<String>,
}

/// `POST /api/channel/copy/{id}?suffix=`: a new channel with the same settings and key (name
/// + suffix), without usage, balance or test results → 201 `{id}`.
pub async fn copy(
    state: web::Data<AppState>,
    _a: AdminUser,
    path: web::Path<i64>,
    q: web::Query<CopyQuery>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let suffix = q.into_inner().suffix.unwrap_or_else(|| "_copy".to_owned());
    if suffix.chars().count() > 32 || suffix.chars().any(char::is_control) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidSuffix,
            "the suffix has at most 32 characters and no control characters",
        ));
    }
    let st = state.clone();
    let new_id = state
        .db(move |c| {
            let row = channels::find(c, id).map_err(|e| match e {
                switchboard_store::StoreError::NotFound => not_found(),
                other => other.into(),
            })?;
            let keep = MAX_NAME.saturating_sub(suffix.chars().count());
            let name: String = row.name.chars().take(keep).chain(suffix.chars()).collect();
            // Sealed afresh: the copy never carries a plain or stale value over.
            let key = st.secret_box.seal(&crate::at_rest::channel_key(&st, &row)?);
            Ok::<_, ApiError>(channels::copy(c, id, &name, &key)?)
        })
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(HttpResponse::Created()
        .json(json!({"success": true, "message": "", "data": {"id": new_id}})))
}
