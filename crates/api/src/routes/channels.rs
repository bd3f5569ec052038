//! Upstream channels (administrators): list with filters, get, create (one per key line),
//! update, delete, status. Keys are stored sealed (`crate::at_rest`) and returned, opened, to
//! root only.
//!
//! Since only root may read a key, only root may move a stored key somewhere else: an
//! administrator's update that changes a channel's destination (its type, base URL, proxy,
//! custom headers or destination-bearing `config`, see
//! [`switchboard_domain::channel::destination_changes`]) must bring a new key, else it is
//! refused with 403 `destination_needs_root`. The same holds for a copy (it keeps the original's
//! key and destination). And without the `AllowPrivateOutbound` setting, a destination saved by
//! someone other than root may not name a loopback, private or link-local address (403
//! `private_destination`): root alone points channels at local upstreams such as Ollama.
//!
//! Since a host name may resolve elsewhere later (DNS rebinding), each channel records whether
//! root last set its destination (`destination_by_root`: set on create and on an update that
//! moves the destination, kept by every other write, copies included); the relay reaches the
//! other channels' destinations through the outbound URL policy's public-only client
//! ([`crate::relay::channel_client`]).

use super::paging::{self, found_or, Search};
use crate::auth::AdminUser;
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::channel::{
    destination_changes, destination_urls, validate_channel, validate_channel_key, ChannelInput,
};
use switchboard_domain::user::Role;
use switchboard_domain::DomainError;
use switchboard_domain::ErrorCode;
use switchboard_store::channels::{self, ChannelFields, ChannelFilter, ChannelRow, ORDER_FIELDS};
use switchboard_store::now;

/// At most this many channels from one multi-line key submission.
pub const MAX_BATCH: usize = 500;

/// A channel as the API shows it; `state` given (root's view), with its key opened, or an empty
/// key and `key_unavailable: true` when no known server secret opens it.
pub fn channel_json(c: &ChannelRow, with_key: Option<&AppState>) -> Value {
    let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap_or_else(|_| json!({}));
    let mut v = json!({
        "id": c.id,
        "type": c.channel_type,
        "name": c.name,
        "base_url": c.base_url,
        "group": c.group_name,
        "models": c.models,
        "model_mapping": c.model_mapping,
        "priority": c.priority,
        "weight": c.weight,
        "tag": c.tag,
        "proxy": c.proxy,
        "test_model": c.test_model,
        "status": c.status,
        "response_time": c.response_time,
        "test_time": c.test_time,
        "used_quota": c.used_quota,
        "balance": c.balance,
        "balance_updated_at": c.balance_updated_at,
        "custom_headers": parse(&c.custom_headers),
        "config": parse(&c.config),
        "disabled_stream": serde_json::from_str::<Value>(&c.disabled_stream)
            .ok()
            .filter(Value::is_array)
            .unwrap_or_else(|| json!([])),
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        // one-api's names of the same fields.
        "created_time": c.created_at,
        "balance_updated_time": c.balance_updated_at,
        "destination_by_root": c.destination_by_root,
    });
    if let Some(state) = with_key {
        match state.secret_box.open(&c.key) {
            Ok(key) => v["key"] = json!(key),
            Err(_) => {
                v["key"] = json!("");
                v["key_unavailable"] = json!(true);
            }
        }
    }
    v
}

paging::list_query! {
    #[schemars(rename = "ChannelListQuery")]
    pub struct ListQuery {
        #[serde(rename = "type")]
        channel_type: Option<i32>,
        status: Option<i32>,
        group: Option<String>,
        tag: Option<String>,
        model: Option<String>,
    }
}

pub async fn list(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let mut q = q.into_inner();
    let s = Search::sorted(&mut q, ORDER_FIELDS, "-id")?;
    let render = |c: &ChannelRow| channel_json(c, None);
    paging::list(&state, s.page, render, move |c| {
        let f = ChannelFilter {
            keyword: s.keyword(),
            channel_type: q.channel_type,
            status: q.status,
            group: q.group.as_deref(),
            tag: q.tag.as_deref(),
            model: q.model.as_deref(),
        };
        Ok(channels::list(c, &f, &s.order, s.page)?)
    })
    .await
}

pub(crate) fn not_found() -> ApiError {
    ApiError::not_found("channel not found")
}

/// The provider switches each channel type supports (`config.web_search`, `code_execution`,
/// `plugin`, `knowledge_id`, `knowledge_template`; see
/// [`switchboard_domain::channel_settings::switches_for`]), so that a form offers only those:
/// `[{"type": 14, "name": "Anthropic", "switches": ["web_search", "code_execution"]}, ...]`,
/// the types without any left out.
pub async fn switches(_a: AdminUser) -> ApiResult<HttpResponse> {
    use switchboard_domain::channel::CHANNEL_TYPES;
    use switchboard_domain::channel_settings::switches_for;
    let data: Vec<Value> = CHANNEL_TYPES
        .iter()
        .filter(|t| !switches_for(t.id).is_empty())
        .map(|t| json!({"type": t.id, "name": t.name, "switches": switches_for(t.id)}))
        .collect();
    Ok(ok(data))
}

pub async fn get(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let row = state
        .db(move |c| found_or(channels::find(c, id), not_found))
        .await?;
    Ok(ok(channel_json(
        &row,
        (me.role == Role::Root).then_some(&**state),
    )))
}

/// The channel fields as JSON: JSON-valued fields may come as objects or as JSON text.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChannelBody {
    id: Option<i64>,
    status: Option<i32>,
    name: Option<String>,
    #[serde(rename = "type")]
    channel_type: Option<i32>,
    key: Option<String>,
    base_url: Option<String>,
    models: Option<String>,
    group: Option<String>,
    model_mapping: Option<Value>,
    priority: Option<i64>,
    weight: Option<i32>,
    custom_headers: Option<Value>,
    config: Option<Value>,
    test_model: Option<String>,
    proxy: Option<String>,
    tag: Option<String>,
    /// Models whose stream requests skip this channel: a JSON list (or its text).
    disabled_stream: Option<Value>,
}

fn json_text(v: Option<Value>) -> Option<String> {
    v.map(|v| match v {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

fn status_of(s: Option<i32>) -> ApiResult<i32> {
    match s.unwrap_or(1) {
        s @ (1 | 2) => Ok(s),
        // Status 3 (disabled automatically) is the relay's and the channel test's to set.
        _ => Err(ApiError::bad_request(
            ErrorCode::InvalidStatus,
            "status must be 1 (enabled) or 2 (disabled)",
        )),
    }
}

/// The row to store for `input`, with `sealed_key` (the key as stored: sealed, never plain);
/// `destination_by_root`: whether root set the destination it carries.
fn fields(
    input: &ChannelInput,
    status: i32,
    sealed_key: String,
    destination_by_root: bool,
) -> ChannelFields {
    ChannelFields {
        channel_type: input.channel_type,
        name: input.name.clone(),
        key: sealed_key,
        base_url: input.base_url.clone(),
        group_name: input.group.clone(),
        models: input.models.clone(),
        model_mapping: input.model_mapping.clone(),
        priority: input.priority,
        weight: input.weight,
        tag: input.tag.clone(),
        proxy: input.proxy.clone(),
        test_model: input.test_model.clone(),
        status,
        custom_headers: input.custom_headers.clone(),
        config: input.config.clone(),
        disabled_stream: input.disabled_stream.clone(),
        pre_cost: 1,
        auto_ban: true,
        updated_at: now(),
        destination_by_root,
    }
}

fn destination_needs_root(fields: &[&str]) -> ApiError {
    ApiError::forbidden(
        ErrorCode::DestinationNeedsRoot,
        format!(
            "only root may send a channel's stored key to a new destination ({}); enter a new key to change it",
            fields.join(", ")
        ),
    )
}

/// The outbound URL policy for addresses saved by someone other than root: unless
/// `AllowPrivateOutbound` is on, none of `input`'s destination URLs (for each of `keys`, which
/// may carry one: Vertex AI's `token_uri`) may name a non-public address now.
async fn check_saved_destinations(
    state: &AppState,
    input: &ChannelInput,
    keys: &[String],
) -> ApiResult<()> {
    if state.settings.operation().allow_private_outbound {
        return Ok(());
    }
    let mut urls: Vec<String> = Vec::new();
    for key in keys {
        let with_key = ChannelInput {
            key: key.clone(),
            ..input.clone()
        };
        for u in destination_urls(&with_key) {
            if !urls.contains(&u) {
                urls.push(u);
            }
        }
    }
    for u in &urls {
        if switchboard_relay::outbound::names_a_non_public_address(u).await {
            return Err(ApiError::forbidden(
                ErrorCode::PrivateDestination,
                "only root may point a channel at a loopback, private or link-local address",
            ));
        }
    }
    Ok(())
}

fn merge(base: ChannelInput, b: ChannelBody) -> ChannelInput {
    ChannelInput {
        name: b.name.unwrap_or(base.name),
        channel_type: b.channel_type.unwrap_or(base.channel_type),
        key: b.key.filter(|k| !k.trim().is_empty()).unwrap_or(base.key),
        base_url: b.base_url.unwrap_or(base.base_url),
        models: b.models.unwrap_or(base.models),
        group: b.group.unwrap_or(base.group),
        model_mapping: json_text(b.model_mapping).unwrap_or(base.model_mapping),
        priority: b.priority.unwrap_or(base.priority),
        weight: b.weight.unwrap_or(base.weight),
        custom_headers: json_text(b.custom_headers).unwrap_or(base.custom_headers),
        config: json_text(b.config).unwrap_or(base.config),
        test_model: b.test_model.unwrap_or(base.test_model),
        proxy: b.proxy.unwrap_or(base.proxy),
        tag: b.tag.unwrap_or(base.tag),
        disabled_stream: json_text(b.disabled_stream).unwrap_or(base.disabled_stream),
    }
}

/// `POST /api/channel`: creates one channel, or one per line when `key` holds several lines.
pub async fn create(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    Body(b): Body<ChannelBody>,
) -> ApiResult<HttpResponse> {
    if b.id.is_some() {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidField,
            "id is set by the server",
        ));
    }
    let status = status_of(b.status)?;
    let root = me.role == Role::Root;
    let mut input = merge(ChannelInput::default(), b);
    let keys: Vec<String> = input
        .key
        .lines()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
        .collect();
    if keys.len() > MAX_BATCH {
        return Err(ApiError::bad_request(
            ErrorCode::TooManyKeys,
            format!("at most {MAX_BATCH} keys at once"),
        ));
    }
    input.key = keys.first().cloned().unwrap_or_default();
    validate_channel(&mut input)?;
    for k in &keys {
        validate_channel_key(input.channel_type, k)?;
    }
    if !root {
        check_saved_destinations(&state, &input, &keys).await?;
    }
    let rows: Vec<ChannelFields> = keys
        .iter()
        .map(|k| fields(&input, status, state.secret_box.seal(k), root))
        .collect();
    let ids = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                let mut ids = Vec::with_capacity(rows.len());
                for f in &rows {
                    ids.push(channels::insert(c, f)?);
                }
                Ok::<_, ApiError>(ids)
            })
        })
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(HttpResponse::Created()
        .json(json!({"success": true, "message": "", "data": {"ids": ids, "count": ids.len()}})))
}

/// `PUT /api/channel {id, ...}`: changes the given fields (an empty key keeps the old one).
/// Someone other than root changes the destination only with a new key (module docs).
pub async fn update(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    Body(b): Body<ChannelBody>,
) -> ApiResult<HttpResponse> {
    let id = b.id.ok_or(DomainError::Required { field: "id" })?;
    if b.key
        .as_deref()
        .is_some_and(|k| k.trim().lines().count() > 1)
    {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidKey,
            "an update takes one key; create new channels for more keys",
        ));
    }
    let root = me.role == Role::Root;
    let new_key = b.key.as_deref().is_some_and(|k| !k.trim().is_empty());
    let body_status = b.status;
    let st = state.clone();
    // Read and check: the row as it will be written, computed from the row as read now.
    let (input, status, cur, moved) = state
        .db(move |c| {
            let cur = found_or(channels::find(c, id), not_found)?;
            // The key is validated open and stored sealed; a stored key that cannot be opened
            // can only be replaced.
            let cur_key = if new_key {
                String::new()
            } else {
                crate::at_rest::channel_key(&st, &cur)?
            };
            let status = match body_status {
                Some(s) => status_of(Some(s))?,
                None => cur.status,
            };
            let base = ChannelInput {
                name: cur.name.clone(),
                channel_type: cur.channel_type,
                key: cur_key,
                base_url: cur.base_url.clone(),
                models: cur.models.clone(),
                group: cur.group_name.clone(),
                model_mapping: cur.model_mapping.clone(),
                priority: cur.priority,
                weight: cur.weight,
                custom_headers: cur.custom_headers.clone(),
                config: cur.config.clone(),
                test_model: cur.test_model.clone(),
                proxy: cur.proxy.clone(),
                tag: cur.tag.clone(),
                disabled_stream: cur.disabled_stream.clone(),
            };
            let mut input = merge(base.clone(), b);
            validate_channel(&mut input)?;
            let moved = destination_changes(&base, &input);
            if !root && !moved.is_empty() && !new_key {
                return Err(destination_needs_root(&moved));
            }
            Ok::<_, ApiError>((input, status, cur, !moved.is_empty()))
        })
        .await?;
    if !root && moved {
        check_saved_destinations(&state, &input, std::slice::from_ref(&input.key)).await?;
    }
    // Write every field from that reading: the key goes with the destination it was read
    // with, or with the new one it came with.
    let sealed = state.secret_box.seal(&input.key);
    let row = state
        .db(move |c| {
            // Whoever changes the destination sets it; other edits keep who set it.
            let by_root = if moved { root } else { cur.destination_by_root };
            let mut f = fields(&input, status, sealed, by_root);
            f.pre_cost = cur.pre_cost;
            f.auto_ban = cur.auto_ban;
            found_or(channels::update(c, id, &f), not_found)?;
            Ok(channels::find(c, id)?)
        })
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(channel_json(&row, root.then_some(&**state))))
}

pub async fn delete(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    state
        .db(move |c| found_or(channels::delete(c, id), not_found))
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok_message("channel deleted"))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ChannelStatusBody")]
pub struct StatusBody {
    id: i64,
    status: i32,
}

/// `PUT /api/channel/status {id, status}`: enable (1) or disable (2) by hand.
pub async fn set_status(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<StatusBody>,
) -> ApiResult<HttpResponse> {
    if !matches!(b.status, 1 | 2) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidStatus,
            "status must be 1 (enabled) or 2 (disabled)",
        ));
    }
    state
        .db(move |c| found_or(channels::set_status(c, b.id, b.status), not_found))
        .await?;
    state.relay.channels_changed(&state).await?;
    Ok(ok(json!({"id": b.id, "status": b.status})))
}
