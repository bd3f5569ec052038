//! Online top-up: administrators configure payment gateways (`/api/payment`), users quote and
//! place orders (`/api/user/payment`, `/api/user/order...`), gateways report payments
//! (`/api/payment/notify/{uuid}`). The arithmetic lives in `switchboard_domain::payment`, the
//! gateways' protocols in `crate::payment`.
//!
//! A notification credits at most once: in one transaction the order goes from pending to paid
//! by a conditional update only one caller can win (`store::payments::mark_paid`), the user is
//! credited `amount × QuotaPerUnit` (balance and cumulative top-up), a recharge log is written
//! and group promotion runs; the relay's ledger learns the credit after the commit (in Redis
//! mode every node at once). A payment reported after the order expired (or after it was marked
//! failed) is money the payer gave: it is credited the same way, once, and the order is marked
//! `paid_late` (`store::payments::mark_paid_late`). Replays, wrong amounts and bad signatures
//! change nothing and are logged. Stripe's delayed methods report their outcome later:
//! `checkout.session.async_payment_succeeded` credits, `async_payment_failed` marks the order
//! failed.
//!
//! Administrators other than root manage gateways under the channel rule: changing where a
//! gateway sends money or whom it trusts (`GatewayConfig::destination_changes`) while a stored
//! secret is kept is refused with 403 `destination_needs_root` (enter the secrets again, or ask
//! root), and a gateway's fees and currency, like the `PaymentUSDRate` and `RechargeDiscount`
//! settings, are root's (403 `root_only_setting`).
//!
//! The routes, by who calls them: [`gateways`] (administrators configure gateways), [`orders`]
//! (the order log, and a user's order status), [`checkout`] (users quote and place orders) and
//! [`notify`] (gateways report payments).

mod checkout;
mod gateways;
mod notify;
mod orders;

pub use checkout::{create_order, enabled, quote, OrderBody, QuoteQuery};
pub use gateways::{create, delete, get, list, update, ConfigBody, GatewayBody, ListQuery};
pub use notify::{notify, notify_post};
pub use orders::{order_status, orders, OrderQuery, StatusQuery};

use super::paging::found;
use crate::error::{ApiError, ApiResult};
use crate::payment::{self, GatewayConfig};
use crate::AppState;
use actix_web::http::StatusCode;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::str::FromStr;
use switchboard_domain::ErrorCode;
use switchboard_store::payments::{self, GatewayRow};
use switchboard_store::DbConn;

/// How long an order may be paid after it was placed.
pub const ORDER_TTL_SECS: i64 = 30 * 60;

/// How long a Stripe order may be paid: its Checkout Session expires with it, and Stripe wants
/// at least 30 minutes from the session's creation, so a minute more for the way there.
pub const STRIPE_ORDER_TTL_SECS: i64 = payment::STRIPE_MIN_EXPIRY_SECS + 60;

/// How many unpaid, unexpired orders one user may have waiting: a user clicking "pay" again and
/// again, or a script, cannot fill the order table or flood a gateway with orders.
pub const MAX_OPEN_ORDERS: i64 = 5;

fn gateway_not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::PaymentGatewayNotFound,
        "payment gateway not found (or disabled)",
    )
}

fn order_not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::OrderNotFound,
        "order not found",
    )
}

fn field_invalid(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(ErrorCode::PaymentFieldInvalid, message)
}

fn config_invalid(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(ErrorCode::PaymentConfigInvalid, message)
}

fn load_gateway(c: &mut DbConn, id: i64) -> ApiResult<GatewayRow> {
    found(payments::find_gateway(c, id))?.ok_or_else(gateway_not_found)
}

/// The gateway's configuration, opened; an error when the server secret cannot open it.
fn open_config(state: &AppState, g: &GatewayRow) -> ApiResult<GatewayConfig> {
    let plain = state.secret_box.open(&g.config).map_err(|_| {
        ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::PaymentConfigUnreadable,
            format!(
                "the configuration of payment gateway {} cannot be opened: it was sealed under a \
                 server secret this node does not know; enter its secrets again",
                g.id
            ),
        )
    })?;
    GatewayConfig::parse(&g.gateway_type, &plain).map_err(ApiError::internal)
}

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap_or_default()
}

/// A gateway as users see it (no configuration): what it is called and what it costs.
fn public_json(g: &GatewayRow) -> Value {
    json!({
        "uuid": g.uuid,
        "name": g.name,
        "type": g.gateway_type,
        "icon": g.icon,
        "fixed_fee": num(dec(&g.fixed_fee)),
        "percent_fee": num(dec(&g.percent_fee)),
        "currency": g.currency,
    })
}

/// A decimal as a JSON number (fees and discounts are short decimals).
fn num(d: Decimal) -> Value {
    serde_json::Number::from_str(&d.normalize().to_string())
        .map(Value::Number)
        .unwrap_or(Value::Null)
}
