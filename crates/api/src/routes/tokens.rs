//! API keys of the signed-in user (`/api/token`), and an administrators' search across users.

use super::paging::{self, found_or, Search};
use crate::auth::{AdminUser, AuthUser, CurrentUser};
use crate::crypto::{key_digest, key_hint, new_api_key};
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::token::{
    effective_status, parse_model_list, validate_heartbeat_timeout, IpAllowList, TokenStatus,
};
use switchboard_domain::ErrorCode;
use switchboard_domain::{channel::validate_model_name, DomainError};
use switchboard_store::tokens::{
    self, NewToken, TokenChangeset, TokenFilter, TokenRow, ORDER_FIELDS,
};
use switchboard_store::{now, user_groups, DbConn};

pub const NAME_MAX: usize = 64;
pub const API_RATE_MAX: i32 = 1_000_000;

pub fn token_json(t: &TokenRow) -> Value {
    let status = effective_status(
        t.status,
        t.expired_at,
        t.unlimited_quota,
        t.remain_quota,
        now(),
    );
    json!({
        "id": t.id,
        "user_id": t.user_id,
        "name": t.name,
        "key": t.key_hint,
        "status": status.as_i32(),
        "created_at": t.created_at,
        "accessed_at": t.accessed_at,
        "expired_at": t.expired_at,
        // one-api's names of the same fields (scripts written for it read these).
        "created_time": t.created_at,
        "accessed_time": t.accessed_at,
        "expired_time": t.expired_at,
        "remain_quota": t.remain_quota,
        "unlimited_quota": t.unlimited_quota,
        "used_quota": t.used_quota,
        "request_count": t.request_count,
        "group": t.group_name,
        "models": t.models,
        "subnet": t.subnet,
        "api_rate": t.api_rate,
        "heartbeat_enabled": t.heartbeat_enabled,
        "heartbeat_timeout": t.heartbeat_timeout,
        "cache_enabled": t.cache_enabled,
    })
}

paging::list_query! {
    #[schemars(rename = "TokenListQuery")]
    pub struct ListQuery {
        status: Option<i32>,
        /// Admin search only.
        user_id: Option<i64>,
    }
}

async fn list_tokens(
    state: &AppState,
    mut q: ListQuery,
    user_id: Option<i64>,
) -> ApiResult<HttpResponse> {
    let s = Search::sorted(&mut q, ORDER_FIELDS, "-id")?;
    paging::list(state, s.page, token_json, move |c| {
        let f = TokenFilter {
            user_id,
            keyword: s.keyword(),
            status: q.status,
        };
        Ok(tokens::list(c, &f, &s.order, s.page)?)
    })
    .await
}

/// `GET /api/token`: the user's own keys (masked), paged, with keyword/status filters.
pub async fn list(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    list_tokens(&state, q.into_inner(), Some(me.id)).await
}

/// `GET /api/token/search`: administrators search every user's keys (masked; `user_id` filter).
pub async fn admin_search(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let q = q.into_inner();
    let user = q.user_id;
    list_tokens(&state, q, user).await
}

fn not_found() -> ApiError {
    ApiError::not_found("token not found")
}

fn load_owned(c: &mut DbConn, id: i64, user_id: i64) -> ApiResult<TokenRow> {
    found_or(tokens::find_owned(c, id, user_id), not_found)
}

pub async fn get(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    paging::one(&state, token_json, move |c| load_owned(c, id, me.id)).await
}

/// `GET /api/token/{id}/key`: the full key, to its owner only (copy button, chat-client links).
pub async fn reveal_key(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let t = state.db(move |c| load_owned(c, id, me.id)).await?;
    let key = state.key_box.open(&t.key_ciphertext).ok_or_else(|| {
        ApiError::new(
            actix_web::http::StatusCode::CONFLICT,
            ErrorCode::KeyUnavailable,
            "this key cannot be shown again (the server secret changed); create a new key",
        )
    })?;
    Ok(ok(json!({"key": key})))
}

/// Name of the key the dashboard's quick start and the playground use.
pub const PLAYGROUND_TOKEN_NAME: &str = "playground";

/// `POST /api/token/playground`: the signed-in user's playground key (quick start and chat
/// playground): an existing enabled, usable key named `playground` is returned again, otherwise
/// a new one is made (no expiry, drawing on the account's balance) → `{id, key, created}`
/// (201 when created).
pub async fn playground(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
) -> ApiResult<HttpResponse> {
    let t = now();
    let st = state.clone();
    let (id, key, created) = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                for row in tokens::find_enabled_named(c, me.id, PLAYGROUND_TOKEN_NAME)? {
                    let status = effective_status(
                        row.status,
                        row.expired_at,
                        row.unlimited_quota,
                        row.remain_quota,
                        t,
                    );
                    let usable = status == TokenStatus::Enabled;
                    if let (true, Some(key)) = (usable, st.key_box.open(&row.key_ciphertext)) {
                        return Ok::<_, ApiError>((row.id, key, false));
                    }
                }
                let key = new_api_key();
                let id = tokens::insert(
                    c,
                    &NewToken {
                        user_id: me.id,
                        name: PLAYGROUND_TOKEN_NAME,
                        key_hash: &key_digest(&key),
                        key_ciphertext: &st.key_box.seal(&key),
                        key_hint: &key_hint(&key),
                        status: TokenStatus::Enabled.as_i32(),
                        created_at: t,
                        updated_at: t,
                        expired_at: -1,
                        remain_quota: 0,
                        unlimited_quota: true,
                        group_name: "",
                        models: "",
                        subnet: "",
                        api_rate: 0,
                        heartbeat_enabled: false,
                        heartbeat_timeout: 30,
                        cache_enabled: false,
                    },
                )?;
                Ok((id, key, true))
            })
        })
        .await?;
    let body =
        json!({"success": true, "message": "", "data": {"id": id, "key": key, "created": created}});
    Ok(if created {
        HttpResponse::Created().json(body)
    } else {
        HttpResponse::Ok().json(body)
    })
}

/// Fields a user sets on a key; on update every field is optional.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenBody {
    id: Option<i64>,
    name: Option<String>,
    remain_quota: Option<i64>,
    unlimited_quota: Option<bool>,
    /// Unix seconds, -1 never. one-api's name `expired_time` is accepted too.
    #[serde(alias = "expired_time")]
    expired_at: Option<i64>,
    group: Option<String>,
    models: Option<String>,
    subnet: Option<String>,
    api_rate: Option<i32>,
    heartbeat_enabled: Option<bool>,
    heartbeat_timeout: Option<i32>,
    cache_enabled: Option<bool>,
    status: Option<i32>,
}

/// Validates what the body sets; returns normalised models/subnet text.
fn check_body(b: &TokenBody, t: i64) -> ApiResult<(Option<String>, Option<String>)> {
    if let Some(n) = &b.name {
        if n.is_empty() {
            return Err(DomainError::Required { field: "name" }.into());
        }
        if n.chars().count() > NAME_MAX {
            return Err(DomainError::TooLong {
                field: "name",
                max: NAME_MAX,
            }
            .into());
        }
    }
    if b.remain_quota.is_some_and(|q| q < 0) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidQuota,
            "remain_quota cannot be negative",
        ));
    }
    if let Some(e) = b.expired_at {
        if e != -1 && e <= t {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidExpiry,
                "expired_at must be -1 (never) or a time in the future",
            ));
        }
    }
    if let Some(r) = b.api_rate {
        if !(0..=API_RATE_MAX).contains(&r) {
            return Err(DomainError::OutOfRange {
                field: "api_rate",
                min: 0,
                max: API_RATE_MAX.into(),
            }
            .into());
        }
    }
    if let Some(h) = b.heartbeat_timeout {
        validate_heartbeat_timeout(h)?;
    }
    let models = match &b.models {
        Some(m) => {
            let list = parse_model_list(m);
            for name in &list {
                validate_model_name(name)?;
            }
            Some(list.join(","))
        }
        None => None,
    };
    let subnet = match &b.subnet {
        Some(s) => {
            IpAllowList::parse(s)?;
            Some(s.trim().to_owned())
        }
        None => None,
    };
    Ok((models, subnet))
}

/// A token group must be empty (use the user's group) or an enabled group the user may use.
fn check_group(c: &mut DbConn, me: &CurrentUser, group: &str) -> ApiResult<()> {
    if group.is_empty() || group == me.group {
        return Ok(());
    }
    let allowed = user_groups::list_enabled(c)?
        .into_iter()
        .any(|g| g.symbol == group && (g.public || me.role.is_admin()));
    if allowed {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            ErrorCode::UnknownGroup,
            format!("group {group:?} does not exist or is not available to you"),
        ))
    }
}

pub async fn create(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    Body(b): Body<TokenBody>,
) -> ApiResult<HttpResponse> {
    if b.id.is_some() || b.status.is_some() {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidField,
            "id and status are set by the server",
        ));
    }
    let t = now();
    let (models, subnet) = check_body(&b, t)?;
    let name = b
        .name
        .clone()
        .ok_or(DomainError::Required { field: "name" })?;
    let key = new_api_key();
    let digest = key_digest(&key);
    let sealed = state.key_box.seal(&key);
    let hint = key_hint(&key);
    let row = state
        .db(move |c| {
            let group = b.group.clone().unwrap_or_default();
            check_group(c, &me, &group)?;
            let id = tokens::insert(
                c,
                &NewToken {
                    user_id: me.id,
                    name: &name,
                    key_hash: &digest,
                    key_ciphertext: &sealed,
                    key_hint: &hint,
                    status: TokenStatus::Enabled.as_i32(),
                    created_at: t,
                    updated_at: t,
                    expired_at: b.expired_at.unwrap_or(-1),
                    remain_quota: b.remain_quota.unwrap_or(0),
                    unlimited_quota: b.unlimited_quota.unwrap_or(false),
                    group_name: &group,
                    models: models.as_deref().unwrap_or(""),
                    subnet: subnet.as_deref().unwrap_or(""),
                    api_rate: b.api_rate.unwrap_or(0),
                    heartbeat_enabled: b.heartbeat_enabled.unwrap_or(false),
                    heartbeat_timeout: b.heartbeat_timeout.unwrap_or(30),
                    cache_enabled: b.cache_enabled.unwrap_or(false),
                },
            )?;
            Ok(tokens::find(c, id)?)
        })
        .await?;
    let mut data = token_json(&row);
    data["key"] = json!(key);
    Ok(HttpResponse::Created().json(json!({"success": true, "message": "", "data": data})))
}

/// `PUT /api/token {id, ...}`: changes the given fields. Enabling an expired or exhausted key is
/// refused until its expiry or quota is changed too.
pub async fn update(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    Body(b): Body<TokenBody>,
) -> ApiResult<HttpResponse> {
    let id = b.id.ok_or(DomainError::Required { field: "id" })?;
    let t = now();
    let (models, subnet) = check_body(&b, t)?;
    if let Some(s) = b.status {
        if !matches!(s, 1 | 2) {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidStatus,
                "status must be 1 (enabled) or 2 (disabled)",
            ));
        }
    }
    // Unwritten consumption must reach the database before quota fields are replaced.
    crate::relay::flush_ledger(&state).await?;
    // What other nodes (or settlements still on their way) consumed and did not write yet: a new
    // remaining quota means "this much left from now on", so the database gets that much more
    // and ends at the new value once it is written.
    let new_remain = b.remain_quota;
    if new_remain.is_some() {
        // Only the owner's key may be set: check before touching the ledger.
        let owner = me.id;
        state
            .db(move |c| load_owned(c, id, owner).map(|_| ()))
            .await?;
    }
    let replaced = match new_remain {
        Some(q) => state
            .relay
            .ledger
            .set_token_balance(id, q)
            .await
            .map_err(ApiError::internal)?,
        None => None,
    };
    let row = state
        .db(move |c| {
            let cur = load_owned(c, id, me.id)?;
            if let Some(g) = &b.group {
                check_group(c, &me, g)?;
            }
            let unwritten = replaced.map_or(0, |bal| (cur.remain_quota - bal).max(0));
            let ch = TokenChangeset {
                name: b.name,
                status: b.status,
                expired_at: b.expired_at,
                remain_quota: b.remain_quota.map(|q| q.saturating_add(unwritten)),
                unlimited_quota: b.unlimited_quota,
                group_name: b.group,
                models,
                subnet,
                api_rate: b.api_rate,
                heartbeat_enabled: b.heartbeat_enabled,
                heartbeat_timeout: b.heartbeat_timeout,
                cache_enabled: b.cache_enabled,
                updated_at: None,
            };
            if ch.status == Some(1) {
                let expired_at = ch.expired_at.unwrap_or(cur.expired_at);
                let unlimited = ch.unlimited_quota.unwrap_or(cur.unlimited_quota);
                let remain = ch.remain_quota.unwrap_or(cur.remain_quota);
                match effective_status(1, expired_at, unlimited, remain, t) {
                    TokenStatus::Expired => {
                        return Err(ApiError::bad_request(ErrorCode::TokenExpired, "this key has expired; change its expiry before enabling it"))
                    }
                    TokenStatus::Exhausted => {
                        return Err(ApiError::bad_request(ErrorCode::TokenExhausted, "this key has no quota left; add quota or make it unlimited before enabling it"))
                    }
                    _ => {}
                }
            }
            tokens::update(c, id, &ch)?;
            let row = tokens::find(c, id)?;
            Ok((row.remain_quota - cur.remain_quota, row))
        })
        .await;
    let (delta, row) = match row {
        Ok(r) => r,
        Err(e) => {
            // Nothing was written: give the ledger its balance back.
            if let (Some(q), Some(old)) = (new_remain, replaced) {
                state.relay.ledger.credit_token(id, old - q).await;
            }
            return Err(e);
        }
    };
    // The ledger holds the new balance already when it tracked the key.
    let delta = if replaced.is_some() { 0 } else { delta };
    // Committed: the relay's ledger (every node's, in Redis mode) moves the key's balance by
    // what changed, so requests in flight keep their reservations and the new quota holds at
    // once.
    state
        .relay
        .token_changed(row.id, &row.key_hash, delta, row.unlimited_quota)
        .await;
    Ok(ok(token_json(&row)))
}

pub async fn delete(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    crate::relay::flush_ledger(&state).await?;
    let row = state
        .db(move |c| {
            let row = load_owned(c, id, me.id)?;
            tokens::delete_owned(c, id, me.id)?;
            Ok(row)
        })
        .await?;
    state.relay.forget_token(row.id, &row.key_hash);
    Ok(ok_message("token deleted"))
}
