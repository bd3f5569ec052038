//! Model prices (read by everyone, edited by administrators), the models a user can use with
//! their prices, pricing warnings, and model owners.

use super::paging::found_or;
use crate::auth::{AdminUser, AuthUser};
use crate::error::{ok, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;
use switchboard_domain::price::{
    plan_sync, validate_price, ExtraRatios, Price, PriceType, SyncMode,
};
use switchboard_domain::DomainError;
use switchboard_domain::ErrorCode;
use switchboard_store::model_owners;
use switchboard_store::prices::{self, PriceFields, PriceRow};

/// Smallest id of an operator-defined model owner (spec section 5).
pub const CUSTOM_OWNER_MIN_ID: i64 = 1000;

fn price_json(r: &PriceRow) -> Value {
    // Every ratio is named, rows stored before a ratio existed included (they read it as its
    // default); text that no longer parses is shown as stored.
    let extra: Value = ExtraRatios::parse(&r.extra_ratios)
        .ok()
        .and_then(|e| serde_json::to_value(e).ok())
        .or_else(|| serde_json::from_str(&r.extra_ratios).ok())
        .unwrap_or_else(|| json!({}));
    json!({
        "model": r.model,
        "type": r.price_type,
        "channel_type": r.channel_type,
        "input": r.input,
        "output": r.output,
        "extra_ratios": extra,
        "locked": r.locked,
        "max_output_tokens": r.max_output_tokens,
        "updated_at": r.updated_at,
    })
}

/// `GET /api/prices`: every price row (the public price page reads it).
pub async fn list(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let rows = state.db(|c| Ok(prices::all(c)?)).await?;
    Ok(ok(rows.iter().map(price_json).collect::<Vec<_>>()))
}

/// One price as submitted: `extra_ratios` may be an object or JSON text.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceBody {
    model: String,
    #[serde(rename = "type")]
    price_type: String,
    channel_type: i32,
    input: f64,
    #[serde(default)]
    output: f64,
    extra_ratios: Option<Value>,
    #[serde(default)]
    locked: bool,
    /// The model's output limit in tokens (0 or absent: unknown); bounds the reservation of a
    /// request that sets no `max_tokens` (docs/billing.md).
    #[serde(default)]
    max_output_tokens: i64,
}

fn to_price(b: PriceBody) -> ApiResult<Price> {
    if b.model.is_empty() {
        return Err(DomainError::Required { field: "model" }.into());
    }
    let price_type: PriceType = b.price_type.parse().map_err(|_| {
        ApiError::bad_request(
            ErrorCode::InvalidType,
            "type must be \"tokens\" or \"times\"",
        )
    })?;
    let extra = match b.extra_ratios {
        None | Some(Value::Null) => ExtraRatios::default(),
        Some(Value::String(s)) => ExtraRatios::parse(&s)?,
        Some(v) => ExtraRatios::parse(&v.to_string())?,
    };
    let price = Price {
        model: b.model,
        price_type,
        channel_type: b.channel_type,
        input: b.input,
        output: if price_type == PriceType::Times {
            0.0
        } else {
            b.output
        },
        extra,
        locked: b.locked,
        max_output: b.max_output_tokens,
    };
    if !(0..=10_000_000).contains(&b.max_output_tokens) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidMaxOutputTokens,
            "max_output_tokens must be between 0 (unknown) and 10000000",
        ));
    }
    validate_price(&price)?;
    Ok(price)
}

fn to_fields(b: PriceBody) -> ApiResult<PriceFields> {
    Ok(PriceFields::from_price(&to_price(b)?))
}

fn taken() -> ApiError {
    ApiError::conflict(
        ErrorCode::ModelTaken,
        "this model already has a price; model names are unique",
    )
}

/// `POST /api/prices {model, type, channel_type, input, output, extra_ratios?, locked?}`.
pub async fn create(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<PriceBody>,
) -> ApiResult<HttpResponse> {
    let f = to_fields(b)?;
    let row = state
        .db(move |c| {
            prices::insert(c, &f).map_err(|e| match e {
                switchboard_store::StoreError::Conflict(_) => taken(),
                other => other.into(),
            })?;
            Ok(prices::find(c, &f.model)?)
        })
        .await?;
    state.relay.pricing_changed(&state).await?;
    Ok(HttpResponse::Created()
        .json(json!({"success": true, "message": "", "data": price_json(&row)})))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "PriceUpdateBody")]
pub struct UpdateBody {
    /// The model whose price changes (the body's `price.model` may rename it).
    model: String,
    price: PriceBody,
}

/// `PUT /api/prices {model, price}`.
pub async fn update(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<UpdateBody>,
) -> ApiResult<HttpResponse> {
    let f = to_fields(b.price)?;
    let model = b.model;
    let row = state
        .db(move |c| {
            prices::update(c, &model, &f).map_err(|e| match e {
                switchboard_store::StoreError::NotFound => {
                    ApiError::not_found("no price for this model")
                }
                switchboard_store::StoreError::Conflict(_) => taken(),
                other => other.into(),
            })?;
            Ok(prices::find(c, &f.model)?)
        })
        .await?;
    state.relay.pricing_changed(&state).await?;
    Ok(ok(price_json(&row)))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchBody {
    prices: Vec<PriceBody>,
}

/// `POST /api/prices/batch {prices: [...]}`: creates or replaces many prices in one transaction
/// (all or nothing); locked rows are replaced only by rows that say so themselves.
pub async fn batch(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<BatchBody>,
) -> ApiResult<HttpResponse> {
    if b.prices.is_empty() || b.prices.len() > 1000 {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidBatch,
            "send between 1 and 1000 prices",
        ));
    }
    let mut rows = Vec::with_capacity(b.prices.len());
    let mut seen = BTreeSet::new();
    for (i, p) in b.prices.into_iter().enumerate() {
        let f = to_fields(p).map_err(|e| {
            ApiError::bad_request(e.code, format!("price #{}: {}", i + 1, e.message))
        })?;
        if !seen.insert(f.model.clone()) {
            return Err(ApiError::bad_request(
                ErrorCode::DuplicateModel,
                format!("model {:?} appears twice", f.model),
            ));
        }
        rows.push(f);
    }
    let n = rows.len();
    state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                for f in &rows {
                    prices::upsert(c, f)?;
                }
                Ok::<_, ApiError>(())
            })
        })
        .await?;
    state.relay.pricing_changed(&state).await?;
    Ok(ok(json!({"count": n})))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteBody {
    models: Vec<String>,
}

/// `POST /api/prices/delete {models: [...]}` (model names may contain `/`, so not in the path).
pub async fn delete(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<DeleteBody>,
) -> ApiResult<HttpResponse> {
    if b.models.is_empty() {
        return Err(DomainError::Required { field: "models" }.into());
    }
    let models = b.models;
    let n = state
        .db(move |c| Ok(prices::delete_many(c, &models)?))
        .await?;
    state.relay.pricing_changed(&state).await?;
    Ok(ok(json!({"deleted": n})))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncBody {
    /// `add`, `update` or `overwrite` (see [`SyncMode`]).
    mode: String,
    /// The price server; empty: the `PriceSyncUrl` setting. Ignored when `prices` is given.
    #[serde(default)]
    url: String,
    /// A price list sent by the caller instead of fetching one (the console's paste box).
    prices: Option<Value>,
    /// Only report what would change.
    #[serde(default)]
    dry_run: bool,
}

/// One row of a remote price list.
#[derive(Deserialize)]
struct RemotePrice {
    model: String,
    #[serde(rename = "type")]
    price_type: String,
    channel_type: i32,
    input: f64,
    #[serde(default)]
    output: f64,
    extra_ratios: Option<Value>,
    #[serde(default)]
    max_output_tokens: i64,
}

/// The price rows of a remote document: a bare array, or `{data: [...]}` (the one-api family's
/// envelope). Rows that do not make a valid price are skipped and reported (at most 20 reasons).
fn remote_prices(doc: Value) -> ApiResult<(Vec<Price>, usize, Vec<String>)> {
    let rows = match doc {
        Value::Array(a) => a,
        Value::Object(mut o) => match o.remove("data") {
            Some(Value::Array(a)) => a,
            _ => {
                return Err(ApiError::bad_request(
                    ErrorCode::InvalidPriceList,
                    "the price list must be an array or an object with a \"data\" array",
                ))
            }
        },
        _ => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidPriceList,
                "the price list must be an array or an object with a \"data\" array",
            ))
        }
    };
    if rows.len() > 20_000 {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidPriceList,
            "the price list has more than 20000 rows",
        ));
    }
    let mut prices = Vec::with_capacity(rows.len());
    let mut skipped = 0;
    let mut reasons = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        // Remote rows may carry more fields (ids, timestamps): read leniently, and never
        // take a lock from a remote list.
        let parsed = serde_json::from_value::<RemotePrice>(row)
            .map_err(|e| e.to_string())
            .and_then(|r| {
                to_price(PriceBody {
                    model: r.model.trim().to_owned(),
                    price_type: r.price_type.trim().to_owned(),
                    channel_type: r.channel_type,
                    input: r.input,
                    output: r.output,
                    extra_ratios: r.extra_ratios,
                    locked: false,
                    max_output_tokens: r.max_output_tokens,
                })
                .map_err(|e| e.message)
            });
        match parsed {
            Ok(p) => prices.push(p),
            Err(why) => {
                skipped += 1;
                if reasons.len() < 20 {
                    reasons.push(format!("row {}: {why}", i + 1));
                }
            }
        }
    }
    Ok((prices, skipped, reasons))
}

/// `POST /api/prices/sync {mode, url?, prices?, dry_run?}`: merges a price list from a remote
/// price server (or the one sent) into the local prices. Locked prices are never touched.
/// Answers what changed: `{inserted, updated, deleted, unchanged, locked, skipped, errors,
/// dry_run}` (with `dry_run` the lists of models that would change are included).
pub async fn sync(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<SyncBody>,
) -> ApiResult<HttpResponse> {
    let mode: SyncMode = b.mode.parse()?;
    let doc = match b.prices {
        Some(v) => v,
        None => {
            let url = if b.url.is_empty() {
                state.settings.operation().price_sync_url.clone()
            } else {
                b.url
            };
            if url.is_empty() {
                return Err(ApiError::bad_request(
                    ErrorCode::MissingUrl,
                    "give a price server URL, or set PriceSyncUrl in the settings",
                ));
            }
            let allow_private = state.settings.operation().allow_private_outbound;
            switchboard_relay::remote::fetch_json(
                &state.relay.clients,
                &url,
                Duration::from_secs(30),
                allow_private,
            )
            .await
            .map_err(|why| {
                ApiError::new(
                    actix_web::http::StatusCode::BAD_GATEWAY,
                    ErrorCode::PriceServerError,
                    format!("could not fetch the price list: {why}"),
                )
            })?
        }
    };
    let (remote, skipped, errors) = remote_prices(doc)?;
    if remote.is_empty() {
        return Err(ApiError::bad_request(
            ErrorCode::EmptyPriceList,
            "the price list has no valid price",
        ));
    }
    let dry_run = b.dry_run;
    let (plan, counts) = state
        .db(move |c| {
            let local = prices::all_prices(c)?;
            let plan = plan_sync(&local, &remote, mode);
            let counts = if dry_run {
                (plan.insert.len(), plan.update.len(), plan.delete.len())
            } else {
                prices::apply_sync(c, &plan)?
            };
            Ok((plan, counts))
        })
        .await?;
    if !dry_run {
        state.relay.pricing_changed(&state).await?;
    }
    let mut data = json!({
        "inserted": counts.0,
        "updated": counts.1,
        "deleted": counts.2,
        "unchanged": plan.unchanged,
        "locked": plan.locked,
        "skipped": skipped,
        "errors": errors,
        "dry_run": dry_run,
    });
    if dry_run {
        let models = |v: &[Price]| v.iter().map(|p| p.model.clone()).collect::<Vec<_>>();
        data["insert_models"] = json!(models(&plan.insert));
        data["update_models"] = json!(models(&plan.update));
        data["delete_models"] = json!(plan.delete);
    }
    Ok(ok(data))
}

/// `GET /api/available_model`: the models the user's group can use, each with its price
/// (`null` when an administrator has not priced it yet: such a model cannot be called).
pub async fn available(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
) -> ApiResult<HttpResponse> {
    let snapshot = state.relay.snapshot();
    let table = state.relay.prices();
    let ratio = state.relay.groups().get(&me.group).map_or(1.0, |g| g.ratio);
    let data: Vec<Value> = snapshot
        .models(&me.group)
        .into_iter()
        .map(|m| {
            let price = table
                .lookup(&m)
                .map(|p| serde_json::to_value(p).unwrap_or(Value::Null));
            json!({"model": m, "price": price, "group_ratio": ratio})
        })
        .collect();
    Ok(ok(data))
}

/// `GET /api/prices/warnings`: models that channels offer but nobody priced, and prices whose
/// owner (channel type) is unknown (spec section 8).
pub async fn warnings(state: web::Data<AppState>, _a: AdminUser) -> ApiResult<HttpResponse> {
    let (channels, rows, owners) = state
        .db(|c| {
            Ok((
                switchboard_store::channels::all(c)?,
                prices::all(c)?,
                model_owners::list(c)?,
            ))
        })
        .await?;
    let table = state.relay.prices();
    let mut unpriced = BTreeSet::new();
    for ch in &channels {
        for m in switchboard_domain::channel::parse_csv(&ch.models) {
            if !m.ends_with('*') && table.lookup(&m).is_none() {
                unpriced.insert(m);
            }
        }
    }
    let owner_ids: BTreeSet<i64> = owners.iter().map(|o| o.id).collect();
    let unknown_owner: Vec<&str> = rows
        .iter()
        .filter(|r| !owner_ids.contains(&i64::from(r.channel_type)))
        .map(|r| r.model.as_str())
        .collect();
    Ok(ok(
        json!({"unpriced_models": unpriced, "unknown_owner": unknown_owner}),
    ))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OwnerBody {
    id: i64,
    name: String,
    #[serde(default)]
    icon: String,
}

fn owner_not_found() -> ApiError {
    ApiError::not_found("model owner not found")
}

fn check_owner(b: &OwnerBody) -> ApiResult<()> {
    if b.name.is_empty() {
        return Err(DomainError::Required { field: "name" }.into());
    }
    if b.name.chars().count() > 64 {
        return Err(DomainError::TooLong {
            field: "name",
            max: 64,
        }
        .into());
    }
    if !b.icon.is_empty() {
        switchboard_domain::validate::normalize_url("icon", &b.icon)?;
    }
    Ok(())
}

/// `POST /api/model_ownedby {id, name, icon}`: operator-defined owners take ids from 1000 on.
pub async fn create_owner(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<OwnerBody>,
) -> ApiResult<HttpResponse> {
    check_owner(&b)?;
    if b.id < CUSTOM_OWNER_MIN_ID {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidId,
            format!("the id must be {CUSTOM_OWNER_MIN_ID} or more"),
        ));
    }
    state
        .db(move |c| {
            model_owners::insert(c, b.id, &b.name, &b.icon).map_err(|e| match e {
                switchboard_store::StoreError::Conflict(_) => {
                    ApiError::conflict(ErrorCode::IdTaken, "this id is already used")
                }
                other => other.into(),
            })
        })
        .await?;
    Ok(HttpResponse::Created().json(json!({"success": true, "message": ""})))
}

/// `PUT /api/model_ownedby {id, name, icon}`: the id itself never changes.
pub async fn update_owner(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<OwnerBody>,
) -> ApiResult<HttpResponse> {
    check_owner(&b)?;
    state
        .db(move |c| {
            found_or(
                model_owners::update(c, b.id, &b.name, &b.icon),
                owner_not_found,
            )
        })
        .await?;
    Ok(ok(json!({"id": b.id})))
}

/// `DELETE /api/model_ownedby/{id}`: refused while prices name the owner.
pub async fn delete_owner(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    state
        .db(move |c| {
            let used = i32::try_from(id)
                .map(|t| prices::count_for_owner(c, t))
                .unwrap_or(Ok(0))?;
            if used > 0 {
                return Err(ApiError::conflict(
                    ErrorCode::OwnerInUse,
                    format!("{used} prices name this owner; change them first"),
                ));
            }
            found_or(model_owners::delete(c, id), owner_not_found)
        })
        .await?;
    Ok(ok(json!({"id": id})))
}
