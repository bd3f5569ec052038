//! Checkout: a user sees the enabled gateways (`/api/user/payment`), asks what a top-up costs
//! (`/api/user/order/quote`) and places an order (`POST /api/user/order`), which answers where
//! to pay it.

use super::{
    dec, gateway_not_found, num, open_config, public_json, MAX_OPEN_ORDERS, ORDER_TTL_SECS,
    STRIPE_ORDER_TTL_SECS,
};
use crate::auth::AuthUser;
use crate::error::{ok, ApiError, ApiResult};
use crate::extract::Body;
use crate::payment::{self, GatewayConfig};
use crate::routes::check_critical;
use crate::routes::paging::found;
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::payment as rules;
use switchboard_domain::ErrorCode;
use switchboard_store::now;
use switchboard_store::payments::{self, GatewayRow, NewOrder, OrderStatus};

/// `GET /api/user/payment`: the enabled gateways (no configuration).
pub async fn enabled(state: web::Data<AppState>, _u: AuthUser) -> ApiResult<HttpResponse> {
    let rows = state.db(|c| Ok(payments::enabled_gateways(c)?)).await?;
    let data: Vec<Value> = rows.iter().map(public_json).collect();
    Ok(ok(data))
}

/// A top-up amount from a JSON value or query text: a whole number of dollars within the
/// bounds (anything else is refused by the same rule, with the same message).
fn amount_of(v: Option<&Value>, min: i64) -> ApiResult<i64> {
    let amount = match v {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        _ => None,
    }
    .unwrap_or(0);
    rules::check_amount(amount, min)?;
    Ok(amount)
}

/// The quote of `amount` through `g` under the current settings; `payment_price_invalid` (503:
/// nobody can pay until an administrator corrects the settings) when it would cost nothing.
fn quote_of(state: &AppState, g: &GatewayRow, amount: i64) -> ApiResult<rules::Quote> {
    let t = state.settings.typed();
    rules::quote(
        amount,
        rules::discount_for(amount, &t.payment.recharge_discount),
        &rules::Fees {
            fixed: dec(&g.fixed_fee),
            percent: dec(&g.percent_fee),
            currency: g.currency.clone(),
        },
        t.payment.usd_rate,
        t.site.quota_per_unit,
    )
    .map_err(|e| {
        tracing::error!(gateway = g.id, "online top-up refused: {e}");
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.code(), e.to_string())
    })
}

fn quote_json(q: &rules::Quote) -> Value {
    json!({
        "amount": q.amount,
        "discount": num(q.discount),
        "fee": q.fee.to_string(),
        "order_amount": q.pay.to_string(),
        "currency": q.currency,
        "quota": q.quota,
    })
}

fn min_amount(state: &AppState) -> i64 {
    state.settings.payment().min_amount
}

async fn enabled_gateway(state: &AppState, uuid: Option<String>) -> ApiResult<GatewayRow> {
    let uuid = uuid
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty())
        .ok_or_else(gateway_not_found)?;
    let g = state
        .db(move |c| found(payments::find_gateway_by_uuid(c, &uuid)))
        .await?;
    g.filter(|g| g.enabled).ok_or_else(gateway_not_found)
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct QuoteQuery {
    uuid: Option<String>,
    amount: Option<String>,
}

/// `GET /api/user/order/quote?uuid=&amount=`: what a top-up would cost, before paying.
pub async fn quote(
    state: web::Data<AppState>,
    _u: AuthUser,
    q: web::Query<QuoteQuery>,
) -> ApiResult<HttpResponse> {
    let q = q.into_inner();
    let amount = amount_of(q.amount.map(Value::String).as_ref(), min_amount(&state))?;
    let g = enabled_gateway(&state, q.uuid).await?;
    Ok(ok(quote_json(&quote_of(&state, &g, amount)?)))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderBody {
    uuid: Option<String>,
    /// Whole US dollars.
    #[schemars(with = "Option<i64>")]
    amount: Option<Value>,
}

/// Our trade number: `SB`, the time in milliseconds and 10 random characters.
fn new_trade_no() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "SB{millis}{}",
        crate::auth::random_string(10).to_ascii_uppercase()
    )
}

/// `POST /api/user/order {uuid, amount}`: places an order and answers where to pay it.
pub async fn create_order(
    state: web::Data<AppState>,
    req: HttpRequest,
    AuthUser(me): AuthUser,
    Body(b): Body<OrderBody>,
) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    let amount = amount_of(b.amount.as_ref(), min_amount(&state))?;
    let g = enabled_gateway(&state, b.uuid).await?;
    let cfg = open_config(&state, &g)?;
    let q = quote_of(&state, &g, amount)?;
    let order = Placed::new(&state, &req, &g, &cfg, amount)?;
    insert_order(&state, &order, me.id, g.id, &q).await?;
    // The order exists before the gateway hears of it, so that no payment can arrive for an
    // order this site does not know; an order the gateway refused is marked failed.
    let pay = match ask_gateway(&state, &cfg, &order, &q).await? {
        Ok(p) => p,
        Err(why) => return Err(refused_by_gateway(&state, g.id, &order.trade_no, &why).await),
    };
    let mut data = quote_json(&q);
    data["trade_no"] = json!(order.trade_no);
    data["pay"] = pay;
    Ok(ok(data))
}

/// An order about to be placed: its number, what it is called, where the gateway sends the
/// payer back and its notification, and how long it may be paid.
struct Placed {
    trade_no: String,
    amount: i64,
    name: String,
    origin: String,
    notify_url: String,
    return_url: String,
    placed_at: i64,
    expires_at: i64,
}

impl Placed {
    fn new(
        state: &AppState,
        req: &HttpRequest,
        g: &GatewayRow,
        cfg: &GatewayConfig,
        amount: i64,
    ) -> ApiResult<Placed> {
        let trade_no = new_trade_no();
        let origin = { crate::routes::site_origin(&state.settings.site(), req) };
        let notify_base = if g.notify_domain.is_empty() {
            origin.clone()
        } else {
            g.notify_domain.clone()
        };
        let return_url = format!("{origin}/panel/topup?trade_no={trade_no}");
        // WeChat Pay refuses an http notify URL (checked on save; ServerAddress may have changed).
        if matches!(cfg, GatewayConfig::Wxpay(_)) && !notify_base.starts_with("https://") {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::PaymentConfigInvalid,
                format!(
                    "this WeChat Pay gateway's notify address {notify_base} is not https: an \
                     administrator must set its notify domain to an https origin"
                ),
            ));
        }
        let placed_at = now();
        // A Stripe session expires with its order (no payment after the order expired).
        let ttl = if matches!(cfg, GatewayConfig::Stripe(_)) {
            STRIPE_ORDER_TTL_SECS
        } else {
            ORDER_TTL_SECS
        };
        Ok(Placed {
            notify_url: format!("{notify_base}/api/payment/notify/{}", g.uuid),
            name: format!("Top-up {amount} USD"),
            trade_no,
            amount,
            origin,
            return_url,
            placed_at,
            expires_at: placed_at + ttl,
        })
    }
}

/// Records the order as pending, unless the user already has [`MAX_OPEN_ORDERS`] waiting.
async fn insert_order(
    state: &AppState,
    o: &Placed,
    user_id: i64,
    gateway_id: i64,
    q: &rules::Quote,
) -> ApiResult<()> {
    let (trade_no, q) = (o.trade_no.clone(), q.clone());
    let (amount, placed_at, expires_at) = (o.amount, o.placed_at, o.expires_at);
    state
        .db(move |c| {
            // Counted and inserted in one transaction; concurrent requests of one user on
            // PostgreSQL or MySQL may still pass the count together: a cap, not a ledger.
            switchboard_store::transaction(c, |c| {
                if payments::count_open_orders(c, user_id, placed_at)? >= MAX_OPEN_ORDERS {
                    return Err(ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        ErrorCode::PaymentTooManyOrders,
                        format!(
                            "you have {MAX_OPEN_ORDERS} unpaid orders waiting: pay one of \
                             them or wait until they expire ({} minutes after they were \
                             placed)",
                            ORDER_TTL_SECS / 60
                        ),
                    ));
                }
                payments::insert_order(
                    c,
                    &NewOrder {
                        trade_no: &trade_no,
                        user_id,
                        gateway_id,
                        amount,
                        discount: &q.discount.normalize().to_string(),
                        fee: &q.fee.to_string(),
                        order_amount: &q.pay.to_string(),
                        currency: &q.currency,
                        quota: q.quota,
                        status: OrderStatus::Pending.as_i32(),
                        created_at: placed_at,
                        expires_at,
                    },
                )?;
                Ok(())
            })
        })
        .await
}

/// Hands the order to the gateway: where to pay it ([`redirect`] or [`qrcode`]), or why the
/// gateway did not take it.
async fn ask_gateway(
    state: &AppState,
    cfg: &GatewayConfig,
    o: &Placed,
    q: &rules::Quote,
) -> ApiResult<Result<Value, String>> {
    let money = q.pay.to_string();
    // `pay` has two decimals and is at most 1e12 (bounded amount and rate).
    let cents = rust_decimal::prelude::ToPrimitive::to_i64(&(q.pay * Decimal::ONE_HUNDRED).trunc())
        .ok_or_else(|| ApiError::internal(format!("{} cents do not fit", q.pay)))?;
    let client = || state.relay.clients.get(None).map_err(ApiError::internal);
    Ok(match cfg {
        GatewayConfig::Epay(e) => payment::epay_pay_url(
            e,
            &payment::EpayOrder {
                trade_no: &o.trade_no,
                money: &money,
                name: &o.name,
                notify_url: &o.notify_url,
                return_url: &o.return_url,
            },
        )
        .map(redirect),
        GatewayConfig::Stripe(s) => payment::stripe_checkout(
            &client()?,
            &state.config.stripe_api_url,
            s,
            &payment::StripeOrder {
                trade_no: &o.trade_no,
                amount_cents: cents,
                currency: &q.currency.to_ascii_lowercase(),
                name: &o.name,
                success_url: &o.return_url,
                cancel_url: &format!("{}/panel/topup", o.origin),
                expires_at: o.expires_at,
            },
        )
        .await
        .map(redirect),
        GatewayConfig::Alipay(a) => {
            let order = payment::alipay::AlipayOrder {
                trade_no: &o.trade_no,
                total_amount: &money,
                subject: &o.name,
                notify_url: &o.notify_url,
                return_url: &o.return_url,
                timeout_minutes: ORDER_TTL_SECS / 60,
            };
            let gateway = &state.config.alipay_gateway_url;
            if a.mode == "page" {
                payment::alipay::page_pay_url(gateway, a, &order, o.placed_at).map(redirect)
            } else {
                payment::alipay::precreate(&client()?, gateway, a, &order, now())
                    .await
                    .map(qrcode)
            }
        }
        GatewayConfig::Wxpay(w) => payment::wxpay::native(
            &client()?,
            &state.config.wxpay_api_url,
            w,
            &payment::wxpay::WxpayOrder {
                trade_no: &o.trade_no,
                total: cents,
                description: &o.name,
                notify_url: &o.notify_url,
                expires_at: o.expires_at,
            },
            now(),
        )
        .await
        .map(qrcode),
    })
}

/// The gateway did not take order `trade_no` (`why`): the order is marked failed, and the
/// answer is 502 `payment_gateway_error` (or the database's error).
async fn refused_by_gateway(
    state: &AppState,
    gateway_id: i64,
    trade_no: &str,
    why: &str,
) -> ApiError {
    tracing::warn!(gateway = gateway_id, order = %trade_no, "the gateway did not take the order: {why}");
    let failed = trade_no.to_owned();
    match state
        .db(move |c| Ok(payments::mark_failed(c, &failed)?))
        .await
    {
        Ok(_) => ApiError::new(
            StatusCode::BAD_GATEWAY,
            ErrorCode::PaymentGatewayError,
            format!("the payment gateway did not take the order: {why}"),
        ),
        Err(e) => e,
    }
}

/// "Open this page to pay."
fn redirect(url: String) -> Value {
    json!({"type": "redirect", "url": url})
}

/// "Scan this code to pay": `content` is the text the QR code encodes.
fn qrcode(content: String) -> Value {
    json!({"type": "qrcode", "content": content})
}
