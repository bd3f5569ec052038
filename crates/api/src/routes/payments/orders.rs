//! Orders: the administrators' order log (`/api/payment/order`) and the state of one of a
//! user's orders (`/api/user/order/status`), which the console polls while the user pays.

use super::{dec, num, order_not_found};
use crate::auth::{AdminUser, AuthUser};
use crate::error::{ok, ApiError, ApiResult};
use crate::routes::paging::{self, found, page_req};
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::ErrorCode;
use switchboard_store::now;
use switchboard_store::payments::{self, OrderFilter, OrderRow, OrderStatus, OrderView};

fn order_json(o: &OrderRow) -> Value {
    let status = OrderStatus::from_i32(o.status).map_or("unknown", OrderStatus::name);
    json!({
        "id": o.id,
        "trade_no": o.trade_no,
        "user_id": o.user_id,
        "gateway_id": o.gateway_id,
        "gateway_no": o.gateway_no,
        "amount": o.amount,
        "discount": num(dec(&o.discount)),
        "fee": o.fee,
        "order_amount": o.order_amount,
        "currency": o.currency,
        "quota": o.quota,
        "status": status,
        "created_at": o.created_at,
        "paid_at": o.paid_at,
    })
}

fn order_view_json(v: &OrderView) -> Value {
    let mut j = order_json(&v.order);
    j["username"] = json!(v.username);
    j["gateway_name"] = json!(v.gateway_name);
    j
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct OrderQuery {
    page: Option<i64>,
    size: Option<i64>,
    trade_no: Option<String>,
    user_id: Option<i64>,
    /// pending, paid, expired or failed.
    status: Option<String>,
}

pub async fn orders(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<OrderQuery>,
) -> ApiResult<HttpResponse> {
    let q = q.into_inner();
    let page = page_req(q.page, q.size)?;
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(
            OrderStatus::from_name(s)
                .ok_or_else(|| {
                    ApiError::bad_request(
                        ErrorCode::InvalidStatus,
                        "status must be pending, paid, paid_late, expired or failed",
                    )
                })?
                .as_i32(),
        ),
    };
    paging::list(&state, page, order_view_json, move |c| {
        payments::expire_pending(c, now())?;
        let f = OrderFilter {
            trade_no: q.trade_no.as_deref(),
            user_id: q.user_id,
            status,
        };
        Ok(payments::list_orders(c, &f, page)?)
    })
    .await
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct StatusQuery {
    trade_no: Option<String>,
}

/// `GET /api/user/order/status?trade_no=`: the state of one of the user's orders (polled by
/// the console while the user pays).
pub async fn order_status(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<StatusQuery>,
) -> ApiResult<HttpResponse> {
    let trade_no = q
        .into_inner()
        .trade_no
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .ok_or(switchboard_domain::DomainError::Required { field: "trade_no" })?;
    let o = state
        .db(move |c| found(payments::find_order(c, &trade_no)))
        .await?
        .filter(|o| o.user_id == me.id)
        .ok_or_else(order_not_found)?;
    let mut status = OrderStatus::from_i32(o.status).unwrap_or(OrderStatus::Failed);
    if status == OrderStatus::Pending && o.expires_at < now() {
        status = OrderStatus::Expired;
    }
    Ok(ok(json!({
        "trade_no": o.trade_no,
        "status": status.name(),
        "quota": o.quota,
        "amount": o.amount,
        "order_amount": o.order_amount,
        "currency": o.currency,
    })))
}
