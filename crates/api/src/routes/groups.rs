//! User groups (`/api/user_group`, administrators): price ratio, API rate, visibility and the
//! auto-promotion range. The rules (units, range semantics, promotion) are documented in
//! `switchboard_domain::group`: `min_topup`/`max_topup` are quota units, the range is
//! `[min, max)` and `max_topup = 0` means no upper bound.
//!
//! Every change reloads the relay's pricing snapshot, which caches ratios and API rates.

use super::paging::{self, found_or, Search};
use crate::auth::AdminUser;
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::group::{self as rules, GroupSettings, DEFAULT_GROUP};
use switchboard_domain::ErrorCode;
use switchboard_domain::{validate, DomainError};
use switchboard_store::user_groups::{
    self, NewUserGroup, UserGroupChangeset, UserGroupFilter, UserGroupRow, ORDER_FIELDS,
};
use switchboard_store::{now, DbConn, StoreError};

pub fn group_json(g: &UserGroupRow) -> Value {
    json!({
        "id": g.id,
        "symbol": g.symbol,
        "name": g.name,
        "ratio": g.ratio,
        "public": g.public,
        "api_rate": g.api_rate,
        "promotion": g.promotion,
        "min_topup": g.min_topup,
        "max_topup": g.max_topup,
        "enabled": g.enabled,
        "created_at": g.created_at,
        "updated_at": g.updated_at,
    })
}

fn not_found() -> ApiError {
    ApiError::not_found("user group not found")
}

fn load(c: &mut DbConn, id: i64) -> ApiResult<UserGroupRow> {
    found_or(user_groups::find(c, id), not_found)
}

fn symbol_taken() -> ApiError {
    ApiError::conflict(
        ErrorCode::SymbolTaken,
        "a group with this symbol already exists",
    )
}

fn in_use(message: String) -> ApiError {
    ApiError::conflict(ErrorCode::GroupInUse, message)
}

/// Refuses removing a group that users or keys still reference (and `default`, which new users
/// join).
fn check_unused(c: &mut DbConn, g: &UserGroupRow, action: &str) -> ApiResult<()> {
    if g.symbol == DEFAULT_GROUP {
        return Err(in_use(format!(
            "the {DEFAULT_GROUP} group cannot be {action}: new users join it"
        )));
    }
    let (users, keys) = user_groups::usage(c, &g.symbol)?;
    if users > 0 || keys > 0 {
        return Err(in_use(format!(
            "group {} cannot be {action}: {users} user(s) and {keys} API key(s) still use it; move them to another group first",
            g.symbol
        )));
    }
    Ok(())
}

paging::list_query! {
    #[schemars(rename = "GroupListQuery")]
    pub struct ListQuery {
        enabled: Option<bool>,
        promotion: Option<bool>,
    }
}

/// `GET /api/user_group`: paged; `keyword` (symbol, name or id), `enabled`, `promotion`, `order`.
pub async fn list(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let mut q = q.into_inner();
    let s = Search::sorted(&mut q, ORDER_FIELDS, "id")?;
    paging::list(&state, s.page, group_json, move |c| {
        let f = UserGroupFilter {
            keyword: s.keyword(),
            enabled: q.enabled,
            promotion: q.promotion,
        };
        Ok(user_groups::list(c, &f, &s.order, s.page)?)
    })
    .await
}

pub async fn get(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    paging::one(&state, group_json, move |c| load(c, id)).await
}

/// Fields of a group; on update everything but `id` is optional.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupBody {
    id: Option<i64>,
    symbol: Option<String>,
    name: Option<String>,
    ratio: Option<f64>,
    public: Option<bool>,
    api_rate: Option<i32>,
    promotion: Option<bool>,
    min_topup: Option<i64>,
    max_topup: Option<i64>,
    enabled: Option<bool>,
}

/// `POST /api/user_group {symbol, name, ratio, public?, api_rate?, promotion?, min_topup?,
/// max_topup?, enabled?}` → 201 with the group. Defaults: not public, no API rate, no
/// promotion, range 0..0, enabled.
pub async fn create(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<GroupBody>,
) -> ApiResult<HttpResponse> {
    if b.id.is_some() {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidField,
            "id is set by the server",
        ));
    }
    let symbol = b.symbol.ok_or(DomainError::Required { field: "symbol" })?;
    validate::group_symbol(&symbol).map_err(|e| match e {
        DomainError::Required { .. } => DomainError::Required { field: "symbol" },
        DomainError::TooLong { max, .. } => DomainError::TooLong {
            field: "symbol",
            max,
        },
        DomainError::Invalid { reason, .. } => DomainError::Invalid {
            field: "symbol",
            reason,
        },
        other => other,
    })?;
    let name = b.name.ok_or(DomainError::Required { field: "name" })?;
    rules::validate_name(&name)?;
    let settings = GroupSettings {
        ratio: b.ratio.ok_or(DomainError::Required { field: "ratio" })?,
        api_rate: b.api_rate.unwrap_or(0),
        promotion: b.promotion.unwrap_or(false),
        min_topup: b.min_topup.unwrap_or(0),
        max_topup: b.max_topup.unwrap_or(0),
    };
    settings.validate()?;
    let public = b.public.unwrap_or(false);
    let enabled = b.enabled.unwrap_or(true);
    let row = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                if user_groups::symbol_taken(c, &symbol)? {
                    return Err(symbol_taken());
                }
                let t = now();
                let id = user_groups::insert(
                    c,
                    &NewUserGroup {
                        symbol: &symbol,
                        name: &name,
                        ratio: settings.ratio,
                        public,
                        api_rate: settings.api_rate,
                        promotion: settings.promotion,
                        min_topup: settings.min_topup,
                        max_topup: settings.max_topup,
                        enabled,
                        created_at: t,
                        updated_at: t,
                    },
                )
                .map_err(|e| match e {
                    StoreError::Conflict(_) => symbol_taken(),
                    other => other.into(),
                })?;
                load(c, id)
            })
        })
        .await?;
    state.relay.pricing_changed(&state).await?;
    Ok(HttpResponse::Created()
        .json(json!({"success": true, "message": "", "data": group_json(&row)})))
}

/// `PUT /api/user_group {id, ...}`: changes the given fields. The symbol is immutable (sending
/// the current one is accepted); `default` cannot be disabled.
pub async fn update(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<GroupBody>,
) -> ApiResult<HttpResponse> {
    let id = b.id.ok_or(DomainError::Required { field: "id" })?;
    if let Some(n) = &b.name {
        rules::validate_name(n)?;
    }
    let row = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                let cur = load(c, id)?;
                if b.symbol.as_ref().is_some_and(|s| *s != cur.symbol) {
                    return Err(ApiError::bad_request(
                        ErrorCode::SymbolImmutable,
                        "a group's symbol cannot be changed: users and keys reference it",
                    ));
                }
                let settings = GroupSettings {
                    ratio: b.ratio.unwrap_or(cur.ratio),
                    api_rate: b.api_rate.unwrap_or(cur.api_rate),
                    promotion: b.promotion.unwrap_or(cur.promotion),
                    min_topup: b.min_topup.unwrap_or(cur.min_topup),
                    max_topup: b.max_topup.unwrap_or(cur.max_topup),
                };
                settings.validate()?;
                if b.enabled == Some(false) && cur.symbol == DEFAULT_GROUP {
                    return Err(in_use(format!(
                        "the {DEFAULT_GROUP} group cannot be disabled: new users join it"
                    )));
                }
                let ch = UserGroupChangeset {
                    name: b.name,
                    ratio: b.ratio,
                    public: b.public,
                    api_rate: b.api_rate,
                    promotion: b.promotion,
                    min_topup: b.min_topup,
                    max_topup: b.max_topup,
                    enabled: b.enabled,
                    updated_at: None,
                };
                user_groups::update(c, id, &ch)?;
                load(c, id)
            })
        })
        .await?;
    state.relay.pricing_changed(&state).await?;
    Ok(ok(group_json(&row)))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "GroupStatusBody")]
pub struct StatusBody {
    id: i64,
    enabled: bool,
}

/// `PUT /api/user_group/status {id, enabled}`: enables or disables a group (not `default`).
/// Users of a disabled group keep it, but the relay refuses their requests
/// (`group_not_available`) until it is enabled again or they are moved.
pub async fn set_status(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<StatusBody>,
) -> ApiResult<HttpResponse> {
    let row = state
        .db(move |c| {
            let cur = load(c, b.id)?;
            if !b.enabled && cur.symbol == DEFAULT_GROUP {
                return Err(in_use(format!(
                    "the {DEFAULT_GROUP} group cannot be disabled: new users join it"
                )));
            }
            user_groups::update(
                c,
                b.id,
                &UserGroupChangeset {
                    enabled: Some(b.enabled),
                    ..Default::default()
                },
            )?;
            load(c, b.id)
        })
        .await?;
    state.relay.pricing_changed(&state).await?;
    Ok(ok(group_json(&row)))
}

/// `DELETE /api/user_group/{id}`: refused (409 `group_in_use`) for `default` and for a group that
/// users or API keys still reference.
pub async fn delete(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                let g = load(c, id)?;
                check_unused(c, &g, "deleted")?;
                user_groups::delete(c, id)?;
                Ok(())
            })
        })
        .await?;
    state.relay.pricing_changed(&state).await?;
    Ok(ok_message("user group deleted"))
}
