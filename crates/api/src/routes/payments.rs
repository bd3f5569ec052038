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

use super::check_critical;
use super::users::{page_json, page_req};
use crate::auth::{AdminUser, AuthUser};
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::payment::{
    self, AlipayConfig, EpayConfig, GatewayConfig, Notice, Refused, StripeConfig, WxpayConfig,
};
use crate::settings::View;
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::str::FromStr;
use switchboard_domain::log::LogType;
use switchboard_domain::options::OptionValues;
use switchboard_domain::payment as rules;
use switchboard_domain::quota;
use switchboard_domain::user::Role;
use switchboard_domain::ErrorCode;
use switchboard_store::payments::{
    self, GatewayFields, GatewayRow, NewOrder, OrderFilter, OrderRow, OrderStatus, OrderView,
};
use switchboard_store::{logs, now, redemptions, user_groups, users, DbConn};

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

/// A row that may not exist: `None` for "not found", other errors as they are.
fn found<T>(r: switchboard_store::StoreResult<T>) -> ApiResult<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
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

/// A decimal as a JSON number (fees and discounts are short decimals).
fn num(d: Decimal) -> Value {
    serde_json::Number::from_str(&d.normalize().to_string())
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

fn gateway_json(state: &AppState, g: &GatewayRow) -> Value {
    let cfg = open_config(state, g).ok();
    json!({
        "id": g.id,
        "uuid": g.uuid,
        "name": g.name,
        "type": g.gateway_type,
        "icon": g.icon,
        "enable": g.enabled,
        "fixed_fee": num(dec(&g.fixed_fee)),
        "percent_fee": num(dec(&g.percent_fee)),
        "currency": g.currency,
        "notify_domain": g.notify_domain,
        "sort": g.sort,
        "created_at": g.created_at,
        "config": cfg.as_ref().map_or(json!({}), GatewayConfig::public_json),
        "secrets_set": cfg.as_ref().map_or(json!({}), GatewayConfig::secrets_set),
    })
}

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

// ---------------------------------------------------------------------------------------------
// Administrators: gateways and the order log.
// ---------------------------------------------------------------------------------------------

#[derive(Deserialize, schemars::JsonSchema)]
pub struct ListQuery {
    page: Option<i64>,
    size: Option<i64>,
    keyword: Option<String>,
}

pub async fn list(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let q = q.into_inner();
    let page = page_req(q.page, q.size)?;
    let result = state
        .db(move |c| Ok(payments::list_gateways(c, q.keyword.as_deref(), page)?))
        .await?;
    let data: Vec<Value> = result
        .items
        .iter()
        .map(|g| gateway_json(&state, g))
        .collect();
    Ok(ok(page_json(data, page, result.total)))
}

pub async fn get(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let g = state.db(move |c| load_gateway(c, id)).await?;
    Ok(ok(gateway_json(&state, &g)))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigBody {
    /// epay: the gateway's site.
    url: Option<String>,
    /// epay: merchant id.
    pid: Option<String>,
    /// epay: merchant key (blank on update: keep).
    key: Option<String>,
    /// epay: alipay, wxpay, qqpay or empty.
    pay_type: Option<String>,
    /// Stripe: the secret key (blank on update: keep).
    secret_key: Option<String>,
    /// Stripe: the webhook signing secret (blank on update: keep).
    webhook_secret: Option<String>,
    /// Alipay: the application id; WeChat Pay: the app id the orders are placed for.
    app_id: Option<String>,
    /// Alipay: the application private key; WeChat Pay: the merchant API private key (blank on
    /// update: keep).
    private_key: Option<String>,
    /// Alipay: Alipay's public key.
    alipay_public_key: Option<String>,
    /// Alipay: `qrcode` (the payer scans a code) or `page` (Alipay's web cashier).
    mode: Option<String>,
    /// WeChat Pay: the merchant id.
    mch_id: Option<String>,
    /// WeChat Pay: the merchant API certificate's serial number.
    serial_no: Option<String>,
    /// WeChat Pay: the APIv3 key (blank on update: keep).
    api_v3_key: Option<String>,
    /// WeChat Pay: the id of WeChat Pay's public key (or platform certificate serial).
    platform_key_id: Option<String>,
    /// WeChat Pay: WeChat Pay's public key (PEM).
    platform_public_key: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GatewayBody {
    /// Only on update.
    id: Option<i64>,
    name: Option<String>,
    #[serde(rename = "type")]
    gateway_type: Option<String>,
    icon: Option<String>,
    enable: Option<bool>,
    /// USD per order.
    #[schemars(with = "Option<f64>")]
    fixed_fee: Option<Value>,
    /// A fraction: 0.05 is 5 %.
    #[schemars(with = "Option<f64>")]
    percent_fee: Option<Value>,
    currency: Option<String>,
    notify_domain: Option<String>,
    sort: Option<i64>,
    config: Option<ConfigBody>,
}

/// A gateway as checked, before it is written.
struct Checked {
    fields: GatewayFields,
    /// The configuration, open.
    config: GatewayConfig,
    /// Whether a stored secret was kept (left blank in the body).
    kept_secret: bool,
}

/// The fields of `b` checked, with the configuration sealed; `stored` is the configuration
/// saved before (an update may leave the key blank to keep it).
fn gateway_fields(
    state: &AppState,
    b: GatewayBody,
    stored: Option<GatewayConfig>,
) -> ApiResult<Checked> {
    let name = b.name.unwrap_or_default().trim().to_owned();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(field_invalid("name is required, at most 64 characters"));
    }
    let gateway_type = b.gateway_type.unwrap_or_default().trim().to_lowercase();
    if !rules::GATEWAY_TYPES.contains(&gateway_type.as_str()) {
        return Err(ApiError::bad_request(
            ErrorCode::PaymentTypeUnsupported,
            format!(
                "type must be one of: {} (got {gateway_type:?})",
                rules::GATEWAY_TYPES.join(", ")
            ),
        ));
    }
    let icon = b.icon.unwrap_or_default().trim().to_owned();
    if icon.is_empty() || icon.chars().count() > 255 {
        return Err(field_invalid("icon is required, at most 255 characters"));
    }
    let money = |v: Option<Value>, field: &str| -> ApiResult<Decimal> {
        match v {
            None | Some(Value::Null) => Ok(Decimal::ZERO),
            Some(v) => rules::decimal_of(&v)
                .ok_or_else(|| field_invalid(format!("{field} must be a number"))),
        }
    };
    let fixed = money(b.fixed_fee, "fixed_fee")?;
    let percent = money(b.percent_fee, "percent_fee")?;
    let currency = b.currency.unwrap_or_default().trim().to_uppercase();
    let sort = b.sort.unwrap_or(0);
    rules::check_fees(fixed, percent, &currency, sort)?;
    if let Some(only) = rules::only_currency(&gateway_type) {
        if currency != only {
            return Err(config_invalid(format!(
                "a {gateway_type} gateway charges in {only}, not {currency}"
            )));
        }
    }
    let notify_domain = b
        .notify_domain
        .unwrap_or_default()
        .trim()
        .trim_end_matches('/')
        .to_owned();
    if !notify_domain.is_empty() {
        let ok = url::Url::parse(&notify_domain).is_ok_and(|u| {
            matches!(u.scheme(), "http" | "https") && u.host_str().is_some() && u.path() == "/"
        });
        if !ok || notify_domain.len() > 255 {
            return Err(field_invalid(
                "notify_domain must be an http(s) origin such as https://pay.example.com",
            ));
        }
    }
    if gateway_type == "wxpay" {
        let snap = state.view();
        check_wxpay_notify(&notify_domain, &View(&snap).text("ServerAddress"))?;
    }
    let c = b
        .config
        .ok_or_else(|| config_invalid("config is required"))?;
    // A blank secret keeps the stored one (of the same type).
    let kept = std::cell::Cell::new(false);
    let keep = |given: Option<String>, stored: Option<&str>| -> String {
        match given.filter(|v| !v.is_empty()) {
            Some(v) => v,
            None => {
                let stored = stored.unwrap_or_default();
                if !stored.is_empty() {
                    kept.set(true);
                }
                stored.to_owned()
            }
        }
    };
    let text = |v: Option<String>| v.unwrap_or_default().trim().to_owned();
    let cfg = match gateway_type.as_str() {
        "stripe" => {
            let old = match &stored {
                Some(GatewayConfig::Stripe(s)) => Some(s),
                _ => None,
            };
            GatewayConfig::Stripe(StripeConfig {
                secret_key: keep(c.secret_key, old.map(|s| s.secret_key.as_str()))
                    .trim()
                    .to_owned(),
                webhook_secret: keep(c.webhook_secret, old.map(|s| s.webhook_secret.as_str()))
                    .trim()
                    .to_owned(),
            })
        }
        "alipay" => {
            let old = match &stored {
                Some(GatewayConfig::Alipay(a)) => Some(a),
                _ => None,
            };
            GatewayConfig::Alipay(AlipayConfig {
                app_id: text(c.app_id),
                private_key: keep(c.private_key, old.map(|a| a.private_key.as_str()))
                    .trim()
                    .to_owned(),
                alipay_public_key: text(c.alipay_public_key),
                mode: c
                    .mode
                    .map(|m| m.trim().to_owned())
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| "page".into()),
            })
        }
        "wxpay" => {
            let old = match &stored {
                Some(GatewayConfig::Wxpay(w)) => Some(w),
                _ => None,
            };
            GatewayConfig::Wxpay(WxpayConfig {
                mch_id: text(c.mch_id),
                app_id: text(c.app_id),
                serial_no: text(c.serial_no).to_ascii_uppercase(),
                private_key: keep(c.private_key, old.map(|w| w.private_key.as_str()))
                    .trim()
                    .to_owned(),
                api_v3_key: keep(c.api_v3_key, old.map(|w| w.api_v3_key.as_str())),
                platform_key_id: text(c.platform_key_id),
                platform_public_key: text(c.platform_public_key),
            })
        }
        _ => {
            let old = match &stored {
                Some(GatewayConfig::Epay(e)) => Some(e),
                _ => None,
            };
            GatewayConfig::Epay(EpayConfig {
                url: text(c.url),
                pid: text(c.pid),
                key: keep(c.key, old.map(|e| e.key.as_str())),
                pay_type: text(c.pay_type),
            })
        }
    };
    cfg.check().map_err(config_invalid)?;
    let sealed = state.secret_box.seal(&cfg.to_json());
    let fields = GatewayFields {
        name,
        gateway_type,
        icon,
        enabled: b.enable.unwrap_or(true),
        fixed_fee: fixed.normalize().to_string(),
        percent_fee: percent.normalize().to_string(),
        currency,
        notify_domain,
        sort,
        config: sealed,
        updated_at: now(),
    };
    Ok(Checked {
        fields,
        config: cfg,
        kept_secret: kept.get(),
    })
}

/// WeChat Pay refuses orders whose notify URL is not https: a WeChat Pay gateway's notify
/// address (`notify_domain`, else `ServerAddress`) must be an https origin.
fn check_wxpay_notify(notify_domain: &str, server_address: &str) -> ApiResult<()> {
    let address = if notify_domain.is_empty() {
        server_address.trim()
    } else {
        notify_domain
    };
    if address.to_ascii_lowercase().starts_with("https://") {
        return Ok(());
    }
    Err(field_invalid(if address.is_empty() {
        "WeChat Pay sends payment notifications only to https addresses: set notify_domain (or \
         ServerAddress) to an https origin such as https://pay.example.com"
            .to_owned()
    } else {
        format!(
            "WeChat Pay sends payment notifications only to https addresses, not {address}: set \
             notify_domain (or ServerAddress) to an https origin such as https://pay.example.com"
        )
    }))
}

pub async fn create(
    state: web::Data<AppState>,
    _a: AdminUser,
    Body(b): Body<GatewayBody>,
) -> ApiResult<HttpResponse> {
    if b.id.is_some() {
        return Err(field_invalid(
            "id is set by the server; use PUT to change a gateway",
        ));
    }
    let fields = gateway_fields(&state, b, None)?.fields;
    let uuid = crate::auth::random_string(24).to_ascii_lowercase();
    let g = state
        .db(move |c| {
            let id = payments::insert_gateway(c, &uuid, &fields)?;
            load_gateway(c, id)
        })
        .await?;
    Ok(ok(gateway_json(&state, &g)))
}

/// `PUT /api/payment {id, ...}`: changes a gateway (a blank secret keeps the stored one).
/// Someone other than root moves a gateway's destination only with its secrets entered again,
/// and never changes its fees or currency (module docs).
pub async fn update(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    Body(b): Body<GatewayBody>,
) -> ApiResult<HttpResponse> {
    let id = b.id.ok_or_else(|| field_invalid("id is required"))?;
    let current = state.db(move |c| load_gateway(c, id)).await?;
    // A key that cannot be opened any more can only be replaced.
    let stored = open_config(&state, &current).ok();
    let checked = gateway_fields(&state, b, stored.clone())?;
    if me.role != Role::Root {
        check_admin_update(&current, stored.as_ref(), &checked)?;
    }
    let fields = checked.fields;
    let g = state
        .db(move |c| {
            payments::update_gateway(c, id, &fields)?;
            load_gateway(c, id)
        })
        .await?;
    Ok(ok(gateway_json(&state, &g)))
}

/// What an administrator other than root may not do to gateway `current` (its configuration
/// `stored`, open): send a stored secret to a new destination (the channel rule: 403
/// `destination_needs_root`), or change what a top-up costs (403 `root_only_setting`).
fn check_admin_update(
    current: &GatewayRow,
    stored: Option<&GatewayConfig>,
    checked: &Checked,
) -> ApiResult<()> {
    if let Some(stored) = stored {
        let moved = stored.destination_changes(&checked.config);
        if !moved.is_empty() && checked.kept_secret {
            return Err(ApiError::forbidden(
                ErrorCode::DestinationNeedsRoot,
                format!(
                    "only root may send a payment gateway's stored secrets to a new destination \
                     ({}); enter its secrets again to change it",
                    moved.join(", ")
                ),
            ));
        }
    }
    let f = &checked.fields;
    let mut changed = Vec::new();
    if dec(&f.fixed_fee) != dec(&current.fixed_fee) {
        changed.push("fixed_fee");
    }
    if dec(&f.percent_fee) != dec(&current.percent_fee) {
        changed.push("percent_fee");
    }
    if f.currency != current.currency {
        changed.push("currency");
    }
    if !changed.is_empty() {
        return Err(ApiError::forbidden(
            ErrorCode::RootOnlySetting,
            format!(
                "only root may change what a top-up costs ({})",
                changed.join(", ")
            ),
        ));
    }
    Ok(())
}

pub async fn delete(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    state
        .db(move |c| found(payments::delete_gateway(c, id))?.ok_or_else(gateway_not_found))
        .await?;
    Ok(ok_message("deleted"))
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
    let result = state
        .db(move |c| {
            payments::expire_pending(c, now())?;
            let f = OrderFilter {
                trade_no: q.trade_no.as_deref(),
                user_id: q.user_id,
                status,
            };
            Ok(payments::list_orders(c, &f, page)?)
        })
        .await?;
    let data: Vec<Value> = result.items.iter().map(order_view_json).collect();
    Ok(ok(page_json(data, page, result.total)))
}

// ---------------------------------------------------------------------------------------------
// Users: gateways, quotes, orders.
// ---------------------------------------------------------------------------------------------

/// `GET /api/user/payment`: the enabled gateways (no configuration).
pub async fn enabled(state: web::Data<AppState>, _u: AuthUser) -> ApiResult<HttpResponse> {
    let rows = state.db(|c| Ok(payments::enabled_gateways(c)?)).await?;
    let data: Vec<Value> = rows
        .iter()
        .map(|g| {
            json!({
                "uuid": g.uuid,
                "name": g.name,
                "type": g.gateway_type,
                "icon": g.icon,
                "fixed_fee": num(dec(&g.fixed_fee)),
                "percent_fee": num(dec(&g.percent_fee)),
                "currency": g.currency,
            })
        })
        .collect();
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
    let snap = state.view();
    let o = View(&snap);
    let discounts: Value = serde_json::from_str(&o.text("RechargeDiscount")).unwrap_or(Value::Null);
    // The setting is a float ("7.3", "1e1"): its shortest decimal text, exactly.
    let usd_rate = rules::decimal_of(&json!(o.float("PaymentUSDRate"))).unwrap_or_default();
    rules::quote(
        amount,
        rules::discount_for(amount, &discounts),
        &rules::Fees {
            fixed: dec(&g.fixed_fee),
            percent: dec(&g.percent_fee),
            currency: g.currency.clone(),
        },
        usd_rate,
        o.int("QuotaPerUnit"),
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
    let snap = state.view();
    View(&snap).int("PaymentMinAmount")
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
    let trade_no = new_trade_no();
    let origin = {
        let snap = state.view();
        super::site_origin(&View(&snap), &req)
    };
    let notify_base = if g.notify_domain.is_empty() {
        origin.clone()
    } else {
        g.notify_domain.clone()
    };
    let name = format!("Top-up {amount} USD");
    let return_url = format!("{origin}/panel/topup?trade_no={trade_no}");
    let (user_id, gateway_id) = (me.id, g.id);
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
    let expires_at = placed_at + ttl;
    {
        let (trade_no, q) = (trade_no.clone(), q.clone());
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
            .await?;
    }
    // The order exists before the gateway hears of it, so that no payment can arrive for an
    // order this site does not know; an order the gateway refused is marked failed.
    let notify_url = format!("{notify_base}/api/payment/notify/{}", g.uuid);
    let money = q.pay.to_string();
    // `pay` has two decimals and is at most 1e12 (bounded amount and rate).
    let cents = rust_decimal::prelude::ToPrimitive::to_i64(&(q.pay * Decimal::ONE_HUNDRED).trunc())
        .ok_or_else(|| ApiError::internal(format!("{} cents do not fit", q.pay)))?;
    let client = || state.relay.clients.get(None).map_err(ApiError::internal);
    let pay: Result<Value, String> = match &cfg {
        GatewayConfig::Epay(e) => payment::epay_pay_url(
            e,
            &payment::EpayOrder {
                trade_no: &trade_no,
                money: &money,
                name: &name,
                notify_url: &notify_url,
                return_url: &return_url,
            },
        )
        .map(redirect),
        GatewayConfig::Stripe(s) => payment::stripe_checkout(
            &client()?,
            &state.config.stripe_api_url,
            s,
            &payment::StripeOrder {
                trade_no: &trade_no,
                amount_cents: cents,
                currency: &q.currency.to_ascii_lowercase(),
                name: &name,
                success_url: &return_url,
                cancel_url: &format!("{origin}/panel/topup"),
                expires_at,
            },
        )
        .await
        .map(redirect),
        GatewayConfig::Alipay(a) => {
            let order = payment::alipay::AlipayOrder {
                trade_no: &trade_no,
                total_amount: &money,
                subject: &name,
                notify_url: &notify_url,
                return_url: &return_url,
                timeout_minutes: ORDER_TTL_SECS / 60,
            };
            let gateway = &state.config.alipay_gateway_url;
            if a.mode == "page" {
                payment::alipay::page_pay_url(gateway, a, &order, placed_at).map(redirect)
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
                trade_no: &trade_no,
                total: cents,
                description: &name,
                notify_url: &notify_url,
                expires_at,
            },
            now(),
        )
        .await
        .map(qrcode),
    };
    let pay = match pay {
        Ok(p) => p,
        Err(why) => {
            tracing::warn!(gateway = gateway_id, order = %trade_no, "the gateway did not take the order: {why}");
            let failed = trade_no.clone();
            state
                .db(move |c| Ok(payments::mark_failed(c, &failed)?))
                .await?;
            return Err(ApiError::new(
                StatusCode::BAD_GATEWAY,
                ErrorCode::PaymentGatewayError,
                format!("the payment gateway did not take the order: {why}"),
            ));
        }
    };
    let mut data = quote_json(&q);
    data["trade_no"] = json!(trade_no);
    data["pay"] = pay;
    Ok(ok(data))
}

/// "Open this page to pay."
fn redirect(url: String) -> Value {
    json!({"type": "redirect", "url": url})
}

/// "Scan this code to pay": `content` is the text the QR code encodes.
fn qrcode(content: String) -> Value {
    json!({"type": "qrcode", "content": content})
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

// ---------------------------------------------------------------------------------------------
// Gateways: payment notifications.
// ---------------------------------------------------------------------------------------------

/// The answer a gateway expects: epay and Alipay stop retrying on the body `success`, Stripe on
/// any 2xx, WeChat Pay on a 200 or 204 (a refusal is `{"code": "FAIL", "message"}`); anything
/// else is retried. `None`: the notification could not be handled now (503).
fn answer(gateway_type: &str, accepted: Option<bool>) -> HttpResponse {
    let status = match accepted {
        Some(true) => StatusCode::OK,
        Some(false) => StatusCode::BAD_REQUEST,
        None => StatusCode::SERVICE_UNAVAILABLE,
    };
    let mut r = HttpResponse::build(status);
    match (gateway_type, accepted) {
        ("stripe", Some(ok)) => r.json(json!({"received": ok})),
        ("wxpay", Some(true)) => r.finish(),
        ("wxpay", Some(false)) => r.json(json!({"code": "FAIL", "message": "refused"})),
        ("wxpay", None) => r.json(json!({"code": "FAIL", "message": "try again later"})),
        (_, Some(true)) => r.content_type("text/plain").body("success"),
        (_, _) => r.content_type("text/plain").body("fail"),
    }
}

/// What a verified notification did.
#[derive(Debug)]
enum Outcome {
    Credited {
        user_id: i64,
        quota: i64,
        promoted: bool,
        /// Paid after the order expired (or was marked failed).
        late: bool,
    },
    /// A delayed payment failed: the order is marked failed.
    Failed,
    /// Already paid (a replay), or already failed: nothing changed.
    Unchanged(&'static str),
    /// Refused: the order is unknown, another gateway's, or the amount or currency differs.
    Refused(String),
}

/// `POST /api/payment/notify/{uuid}`: [`notify`] for gateways that POST (Stripe's webhook
/// events, epay's form).
pub async fn notify_post(
    state: web::Data<AppState>,
    req: HttpRequest,
    uuid: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    notify(state, req, uuid, body).await
}

/// `GET|POST /api/payment/notify/{uuid}`: a gateway reports a payment.
pub async fn notify(
    state: web::Data<AppState>,
    req: HttpRequest,
    uuid: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let uuid = uuid.into_inner();
    let gateway = {
        let uuid = uuid.clone();
        state
            .db(move |c| found(payments::find_gateway_by_uuid(c, &uuid)))
            .await
    };
    let g = match gateway {
        Ok(Some(g)) => g,
        Ok(None) => {
            tracing::warn!(gateway = %uuid, "payment notification for an unknown gateway refused");
            return answer("", Some(false));
        }
        Err(e) => {
            tracing::error!("payment notification: the database is unavailable: {e}");
            return answer("", None);
        }
    };
    let kind = g.gateway_type.clone();
    let cfg = match open_config(&state, &g) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(gateway = g.id, "payment notification: {e}");
            return answer(&kind, None);
        }
    };
    // epay and Alipay send a form (GET query or POSTed body).
    let form = || {
        let mut params: BTreeMap<String, String> =
            url::form_urlencoded::parse(req.query_string().as_bytes())
                .into_owned()
                .collect();
        if !body.is_empty() && body.len() <= 64 * 1024 {
            params.extend(url::form_urlencoded::parse(&body).into_owned());
        }
        params
    };
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let verified: Result<Notice, Refused> = match &cfg {
        GatewayConfig::Epay(c) => payment::epay_verify(c, &form()).map(Notice::Paid),
        GatewayConfig::Alipay(c) => payment::alipay::verify(c, &form()).map(Notice::Paid),
        GatewayConfig::Stripe(c) => {
            payment::stripe_verify(c, header("Stripe-Signature"), &body, now())
        }
        GatewayConfig::Wxpay(c) => {
            let by = payment::wxpay::SignedBy {
                timestamp: header("Wechatpay-Timestamp"),
                nonce: header("Wechatpay-Nonce"),
                signature: header("Wechatpay-Signature"),
                serial: header("Wechatpay-Serial"),
            };
            payment::wxpay::verify(c, &by, &body, now()).map(Notice::Paid)
        }
    };
    let notice = match verified {
        Ok(n) => n,
        Err(Refused::NotPaid(why)) => {
            // A real notification of something other than a finished payment: acknowledged,
            // nothing credited.
            tracing::info!(
                gateway = g.id,
                "payment notification without payment: {why}"
            );
            return answer(&kind, Some(true));
        }
        Err(why) => {
            tracing::warn!(gateway = g.id, "payment notification refused: {why}");
            return answer(&kind, Some(false));
        }
    };
    let per_unit = {
        let snap = state.view();
        View(&snap).int("QuotaPerUnit")
    };
    let gateway_id = g.id;
    let trade_no = match &notice {
        Notice::Paid(p) => p.trade_no.clone(),
        Notice::Failed { trade_no, .. } => trade_no.clone(),
    };
    let outcome = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| settle(c, gateway_id, per_unit, &notice))
        })
        .await;
    match outcome {
        Ok(Outcome::Credited {
            user_id,
            quota,
            promoted,
            late,
        }) => {
            state.relay.ledger.credit_user(user_id, quota).await;
            if promoted {
                state.relay.forget_user(user_id);
            }
            if late {
                tracing::warn!(gateway = gateway_id, order = %trade_no, user = user_id, "order paid after it expired, {quota} quota credited (paid late)");
            } else {
                tracing::info!(gateway = gateway_id, order = %trade_no, user = user_id, "order paid, {quota} quota credited");
            }
            answer(&kind, Some(true))
        }
        Ok(Outcome::Failed) => {
            tracing::info!(gateway = gateway_id, order = %trade_no, "the order's payment failed");
            answer(&kind, Some(true))
        }
        Ok(Outcome::Unchanged(why)) => {
            tracing::warn!(gateway = gateway_id, order = %trade_no, "payment notification changed nothing: order {why}");
            answer(&kind, Some(true))
        }
        Ok(Outcome::Refused(why)) => {
            tracing::warn!(gateway = gateway_id, "payment notification refused: {why}");
            answer(&kind, Some(false))
        }
        Err(e) => {
            tracing::error!(gateway = gateway_id, order = %trade_no, "payment notification failed, the gateway will retry: {e}");
            answer(&kind, None)
        }
    }
}

/// What a verified `notice` to gateway `gateway_id` does to its order, in one transaction: a
/// payment marks the order paid (in time) or paid late (after its expiry, or after it was marked
/// expired or failed) and credits the user, once; a failure marks a pending or expired order
/// failed.
fn settle(c: &mut DbConn, gateway_id: i64, per_unit: i64, notice: &Notice) -> ApiResult<Outcome> {
    let trade_no = match notice {
        Notice::Paid(p) => &p.trade_no,
        Notice::Failed { trade_no, .. } => trade_no,
    };
    let Some(o) = found(payments::find_order(c, trade_no))? else {
        return Ok(Outcome::Refused(format!("unknown order {trade_no}")));
    };
    if o.gateway_id != gateway_id {
        return Ok(Outcome::Refused(format!(
            "order {} belongs to gateway {}",
            o.trade_no, o.gateway_id
        )));
    }
    let p = match notice {
        Notice::Paid(p) => p,
        Notice::Failed { .. } => {
            return Ok(if payments::mark_failed(c, &o.trade_no)? {
                Outcome::Failed
            } else {
                Outcome::Unchanged("already paid or failed")
            });
        }
    };
    if dec(&o.order_amount) != p.money || p.currency.as_ref().is_some_and(|cur| *cur != o.currency)
    {
        return Ok(Outcome::Refused(format!(
            "order {} is {} {}, the notification says {} {}",
            o.trade_no,
            o.order_amount,
            o.currency,
            p.money,
            p.currency.as_deref().unwrap_or("")
        )));
    }
    let at = now();
    let late = if payments::mark_paid(c, &o.trade_no, &p.gateway_no, at)? {
        false
    } else if payments::mark_paid_late(c, &o.trade_no, &p.gateway_no, at)? {
        true
    } else {
        return Ok(Outcome::Unchanged("already paid"));
    };
    redemptions::credit_topup(c, o.user_id, o.quota)?;
    let username = users::find(c, o.user_id)?.username;
    logs::record(
        c,
        LogType::Recharge,
        o.user_id,
        &username,
        o.quota,
        &format!(
            "paid order {} ({} {}) online{}: {}",
            o.trade_no,
            o.order_amount,
            o.currency,
            if late { " after it expired" } else { "" },
            quota::display(o.quota, per_unit, true)
        ),
        &json!({"event": if late { "paid_late" } else { "paid" }, "trade_no": o.trade_no,
                "gateway_id": gateway_id, "gateway_no": p.gateway_no})
        .to_string(),
    )?;
    let promoted = user_groups::apply_promotion(c, o.user_id)?.is_some();
    Ok(Outcome::Credited {
        user_id: o.user_id,
        quota: o.quota,
        promoted,
        late,
    })
}
