//! Redemption codes: administrators create and manage them (`/api/redemption`), users redeem
//! them for quota (`POST /api/user/topup`). The rules live in `switchboard_domain::redemption`.

use super::paging::{self, found_or, Search};
use crate::auth::{AdminUser, AuthUser};
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use rand::Rng;
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::log::LogType;
use switchboard_domain::redemption::{
    self as rules, EditDenied, RedemptionStatus, CODE_ALPHABET, CODE_LEN,
};
use switchboard_domain::ErrorCode;
use switchboard_domain::{quota, DomainError};
use switchboard_store::redemptions::{
    self, NewRedemption, RedemptionChangeset, RedemptionFilter, RedemptionRow, ORDER_FIELDS,
};
use switchboard_store::{logs, now, user_groups, users, DbConn, StoreError};

pub fn redemption_json(r: &RedemptionRow) -> Value {
    json!({
        "id": r.id,
        "user_id": r.user_id,
        "name": r.name,
        "code": r.code,
        "status": r.status,
        "quota": r.quota,
        "created_at": r.created_at,
        "redeemed_at": r.redeemed_at,
        // one-api's names of the same fields.
        "created_time": r.created_at,
        "redeemed_time": r.redeemed_at,
        "used_user_id": r.used_user_id,
    })
}

/// A new code: [`CODE_LEN`] characters drawn uniformly from [`CODE_ALPHABET`] by the OS-seeded
/// CSPRNG (lower case only, so lookups behave the same on every backend).
pub fn new_code() -> String {
    let mut rng = rand::rng();
    (0..CODE_LEN)
        .map(|_| char::from(CODE_ALPHABET[rng.random_range(0..CODE_ALPHABET.len())]))
        .collect()
}

fn not_found() -> ApiError {
    ApiError::not_found("redemption code not found")
}

fn load(c: &mut DbConn, id: i64) -> ApiResult<RedemptionRow> {
    found_or(redemptions::find(c, id), not_found)
}

fn used() -> ApiError {
    ApiError::conflict(
        ErrorCode::RedemptionUsed,
        "this code has been redeemed and can no longer be changed",
    )
}

fn invalid_status() -> ApiError {
    ApiError::bad_request(
        ErrorCode::InvalidStatus,
        "status must be 1 (enabled) or 2 (disabled)",
    )
}

paging::list_query! {
    #[schemars(rename = "RedemptionListQuery")]
    pub struct ListQuery {
        status: Option<i32>,
    }
}

/// `GET /api/redemption`: paged; `keyword` (name, code or id), `status`, `order`.
pub async fn list(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let mut q = q.into_inner();
    let s = Search::sorted(&mut q, ORDER_FIELDS, "-id")?;
    paging::list(&state, s.page, redemption_json, move |c| {
        let f = RedemptionFilter {
            keyword: s.keyword(),
            status: q.status,
        };
        Ok(redemptions::list(c, &f, &s.order, s.page)?)
    })
    .await
}

pub async fn get(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    paging::one(&state, redemption_json, move |c| load(c, id)).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "RedemptionCreateBody")]
pub struct CreateBody {
    name: Option<String>,
    quota: Option<i64>,
    count: Option<i64>,
}

/// `POST /api/redemption {name, quota, count}` → 201 `{codes}`: `count` (1 to 100, default 1)
/// new enabled codes worth `quota` (0 or more) each, in one transaction.
pub async fn create(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    Body(b): Body<CreateBody>,
) -> ApiResult<HttpResponse> {
    let name = b.name.ok_or(DomainError::Required { field: "name" })?;
    rules::validate_name(&name)?;
    let quota = b.quota.ok_or(DomainError::Required { field: "quota" })?;
    rules::validate_quota(quota)?;
    let count = b.count.unwrap_or(1);
    rules::validate_count(count)?;
    let codes = state
        .db(move |c| {
            // A collision among ~2^165 codes does not happen; if one ever did, the unique index
            // refuses the batch and a fresh batch is drawn.
            let mut last = None;
            for _ in 0..3 {
                let mut codes: Vec<String> = Vec::with_capacity(count as usize);
                while codes.len() < count as usize {
                    let code = new_code();
                    if !codes.contains(&code) {
                        codes.push(code);
                    }
                }
                let t = now();
                let rows: Vec<NewRedemption<'_>> = codes
                    .iter()
                    .map(|code| NewRedemption {
                        user_id: me.id,
                        name: &name,
                        code,
                        status: RedemptionStatus::Enabled.as_i32(),
                        quota,
                        created_at: t,
                    })
                    .collect();
                let res = switchboard_store::transaction(c, |c| {
                    redemptions::insert_batch(c, &rows)?;
                    logs::record(
                        c,
                        LogType::Manage,
                        me.id,
                        &me.username,
                        0,
                        &format!(
                            "created {count} redemption code(s) \"{name}\" worth {quota} quota each"
                        ),
                        &json!({"event": "redemptions_created", "name": name, "count": count, "quota": quota}).to_string(),
                    )?;
                    Ok::<_, StoreError>(())
                });
                match res {
                    Ok(()) => return Ok(codes),
                    Err(StoreError::Conflict(what)) => last = Some(StoreError::Conflict(what)),
                    Err(e) => return Err(e.into()),
                }
            }
            Err(ApiError::internal(last.map_or_else(
                || "code generation failed".to_owned(),
                |e| e.to_string(),
            )))
        })
        .await?;
    Ok(HttpResponse::Created()
        .json(json!({"success": true, "message": "", "data": {"codes": codes}})))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "RedemptionUpdateBody")]
pub struct UpdateBody {
    id: Option<i64>,
    name: Option<String>,
    quota: Option<i64>,
    status: Option<i32>,
}

/// `PUT /api/redemption {id, name?, quota?, status?}`: edits a code that has not been redeemed
/// (status 1 enabled or 2 disabled). A redeemed code answers 409 `redemption_used`.
pub async fn update(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<UpdateBody>,
) -> ApiResult<HttpResponse> {
    let id = b.id.ok_or(DomainError::Required { field: "id" })?;
    if let Some(n) = &b.name {
        rules::validate_name(n)?;
    }
    if let Some(q) = b.quota {
        rules::validate_quota(q)?;
    }
    if rules::check_edit(RedemptionStatus::Enabled.as_i32(), b.status).is_err() {
        return Err(invalid_status());
    }
    let row = state
        .db(move |c| {
            let cur = load(c, id)?;
            match rules::check_edit(cur.status, b.status) {
                Ok(()) => {}
                Err(EditDenied::AlreadyUsed) => return Err(used()),
                Err(EditDenied::InvalidStatus) => return Err(invalid_status()),
            }
            let ch = RedemptionChangeset {
                name: b.name,
                quota: b.quota,
                status: b.status,
            };
            // Re-checked in the statement: a redemption in between wins over the edit.
            let changed = found_or(redemptions::update_unused(c, id, &ch), not_found)?;
            if !changed {
                return Err(used());
            }
            load(c, id)
        })
        .await?;
    Ok(ok(redemption_json(&row)))
}

pub async fn delete(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    state
        .db(move |c| found_or(redemptions::delete(c, id), not_found))
        .await?;
    Ok(ok_message("redemption code deleted"))
}

/// `DELETE /api/redemption/invalid`: deletes every disabled and used code → `{deleted: n}`.
pub async fn delete_invalid(state: web::Data<AppState>, _a: AdminUser) -> ApiResult<HttpResponse> {
    let n = state.db(|c| Ok(redemptions::delete_invalid(c)?)).await?;
    Ok(ok(json!({"deleted": n})))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopupBody {
    key: Option<String>,
}

/// The one answer for unknown, disabled and used codes: which it was is not revealed.
fn invalid_code() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        ErrorCode::InvalidRedemptionCode,
        "the code is invalid or has already been used",
    )
}

/// `POST /api/user/topup {key}`: redeems a code for the signed-in user, exactly once even under
/// concurrent attempts. In one transaction: the code is marked used by this user (a conditional
/// update that only one attempt can win), the user's quota and cumulative top-up grow by the
/// code's quota, a recharge log is written and group auto-promotion runs. After the commit the
/// relay ledger learns the credit. → `{quota: credited, balance: new quota, group}`.
pub async fn redeem(
    state: web::Data<AppState>,
    req: HttpRequest,
    AuthUser(me): AuthUser,
    Body(b): Body<TopupBody>,
) -> ApiResult<HttpResponse> {
    super::check_critical(&state, &req)?;
    let key = b
        .key
        .filter(|k| !k.is_empty())
        .ok_or(DomainError::Required { field: "key" })?;
    let r = redeem_for(&state, me.id, &me.username, &key).await?;
    Ok(ok(
        json!({"quota": r.credited, "balance": r.balance, "group": r.group}),
    ))
}

/// What a redeemed code did.
pub struct Redeemed {
    pub credited: i64,
    pub balance: i64,
    pub group: String,
}

/// Redeems `key` for the user `user_id` (named `username`): exactly once, in one transaction
/// with the credit, the recharge log and promotion; the ledger learns it after the commit. The
/// console's top-up and the Telegram bot's `/recharge` both come here.
pub async fn redeem_for(
    state: &AppState,
    user_id: i64,
    username: &str,
    key: &str,
) -> ApiResult<Redeemed> {
    let code = rules::normalize_code(key).ok_or_else(invalid_code)?;
    let per_unit = state.settings.site().quota_per_unit;
    let username = username.to_owned();
    let (credited, balance, group, promoted) = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                let r = redemptions::redeem(c, &code, user_id, now())?.ok_or_else(invalid_code)?;
                let balance = redemptions::credit_topup(c, user_id, r.quota)?;
                logs::record(
                    c,
                    LogType::Recharge,
                    user_id,
                    &username,
                    r.quota,
                    &format!(
                        "redeemed code \"{}\" (id {}) for {}",
                        r.name,
                        r.id,
                        quota::display(r.quota, per_unit, true)
                    ),
                    &json!({"event": "redeemed", "redemption_id": r.id, "name": r.name})
                        .to_string(),
                )?;
                let promoted = user_groups::apply_promotion(c, user_id)?;
                let group = match &promoted {
                    Some(g) => g.clone(),
                    None => users::find(c, user_id)?.group_name,
                };
                Ok::<_, ApiError>((r.quota, balance, group, promoted.is_some()))
            })
        })
        .await?;
    // Committed: the relay's ledger sees the new balance at once; a new group drops the cached
    // keys (they carry the group).
    state.relay.ledger.credit_user(user_id, credited).await;
    if promoted {
        state.relay.forget_user(user_id);
    }
    Ok(Redeemed {
        credited,
        balance,
        group,
    })
}
