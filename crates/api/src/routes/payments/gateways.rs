//! Administrators configure payment gateways (`/api/payment`): list, get, create, update and
//! delete, under the rules of the module docs ([`super`]).

use super::{
    config_invalid, dec, field_invalid, gateway_not_found, load_gateway, open_config, public_json,
};
use crate::auth::AdminUser;
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::payment::{AlipayConfig, EpayConfig, GatewayConfig, StripeConfig, WxpayConfig};
use crate::routes::paging::{self, found, Search};
use crate::AppState;
use actix_web::{web, HttpResponse};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::payment as rules;
use switchboard_domain::user::Role;
use switchboard_domain::ErrorCode;
use switchboard_store::now;
use switchboard_store::payments::{self, GatewayFields, GatewayRow};

fn gateway_json(state: &AppState, g: &GatewayRow) -> Value {
    let cfg = open_config(state, g).ok();
    let mut v = public_json(g);
    let more = json!({
        "id": g.id,
        "enable": g.enabled,
        "notify_domain": g.notify_domain,
        "sort": g.sort,
        "created_at": g.created_at,
        "config": cfg.as_ref().map_or(json!({}), GatewayConfig::public_json),
        "secrets_set": cfg.as_ref().map_or(json!({}), GatewayConfig::secrets_set),
    });
    if let (Value::Object(v), Value::Object(more)) = (&mut v, more) {
        v.extend(more);
    }
    v
}

paging::keyword_query! {
    pub struct ListQuery;
}

pub async fn list(
    state: web::Data<AppState>,
    _a: AdminUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let s = Search::unsorted(&mut q.into_inner())?;
    let render = |g: &GatewayRow| gateway_json(&state, g);
    paging::list(&state, s.page, render, move |c| {
        Ok(payments::list_gateways(c, s.keyword(), s.page)?)
    })
    .await
}

pub async fn get(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let render = |g: &GatewayRow| gateway_json(&state, g);
    paging::one(&state, render, move |c| load_gateway(c, id)).await
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
/// saved before (an update may leave the key blank to keep it). The checks run in the order of
/// the form: name, type, icon, fees and currency, notify domain, configuration.
fn gateway_fields(
    state: &AppState,
    b: GatewayBody,
    stored: Option<GatewayConfig>,
) -> ApiResult<Checked> {
    let name = required_text(b.name, "name", 64)?;
    let gateway_type = gateway_type(b.gateway_type)?;
    let icon = required_text(b.icon, "icon", 255)?;
    let fees = Fees::check(
        b.fixed_fee,
        b.percent_fee,
        b.currency,
        b.sort,
        &gateway_type,
    )?;
    let notify_domain = notify_domain(b.notify_domain)?;
    if gateway_type == "wxpay" {
        let server_address = state.settings.site().server_address.clone();
        check_wxpay_notify(&notify_domain, &server_address)?;
    }
    let c = b
        .config
        .ok_or_else(|| config_invalid("config is required"))?;
    let (cfg, kept_secret) = config_of(&gateway_type, c, stored.as_ref());
    cfg.check().map_err(config_invalid)?;
    let sealed = state.secret_box.seal(&cfg.to_json());
    let fields = GatewayFields {
        name,
        gateway_type,
        icon,
        enabled: b.enable.unwrap_or(true),
        fixed_fee: fees.fixed.normalize().to_string(),
        percent_fee: fees.percent.normalize().to_string(),
        currency: fees.currency,
        notify_domain,
        sort: fees.sort,
        config: sealed,
        updated_at: now(),
    };
    Ok(Checked {
        fields,
        config: cfg,
        kept_secret,
    })
}

/// A required text field of at most `max` characters, trimmed.
fn required_text(v: Option<String>, field: &str, max: usize) -> ApiResult<String> {
    let v = v.unwrap_or_default().trim().to_owned();
    if v.is_empty() || v.chars().count() > max {
        return Err(field_invalid(format!(
            "{field} is required, at most {max} characters"
        )));
    }
    Ok(v)
}

/// The gateway type, lower case, one of [`rules::GATEWAY_TYPES`].
fn gateway_type(v: Option<String>) -> ApiResult<String> {
    let gateway_type = v.unwrap_or_default().trim().to_lowercase();
    if !rules::GATEWAY_TYPES.contains(&gateway_type.as_str()) {
        return Err(ApiError::bad_request(
            ErrorCode::PaymentTypeUnsupported,
            format!(
                "type must be one of: {} (got {gateway_type:?})",
                rules::GATEWAY_TYPES.join(", ")
            ),
        ));
    }
    Ok(gateway_type)
}

/// What a top-up through the gateway costs, checked.
struct Fees {
    fixed: Decimal,
    percent: Decimal,
    currency: String,
    sort: i64,
}

impl Fees {
    fn check(
        fixed: Option<Value>,
        percent: Option<Value>,
        currency: Option<String>,
        sort: Option<i64>,
        gateway_type: &str,
    ) -> ApiResult<Fees> {
        let money = |v: Option<Value>, field: &str| -> ApiResult<Decimal> {
            match v {
                None | Some(Value::Null) => Ok(Decimal::ZERO),
                Some(v) => rules::decimal_of(&v)
                    .ok_or_else(|| field_invalid(format!("{field} must be a number"))),
            }
        };
        let fixed = money(fixed, "fixed_fee")?;
        let percent = money(percent, "percent_fee")?;
        let currency = currency.unwrap_or_default().trim().to_uppercase();
        let sort = sort.unwrap_or(0);
        rules::check_fees(fixed, percent, &currency, sort)?;
        if let Some(only) = rules::only_currency(gateway_type) {
            if currency != only {
                return Err(config_invalid(format!(
                    "a {gateway_type} gateway charges in {only}, not {currency}"
                )));
            }
        }
        Ok(Fees {
            fixed,
            percent,
            currency,
            sort,
        })
    }
}

/// Where the gateway's notifications go instead of the site's address: an http(s) origin, or
/// empty.
fn notify_domain(v: Option<String>) -> ApiResult<String> {
    let notify_domain = v
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
    Ok(notify_domain)
}

/// The configuration `c` of a gateway of `gateway_type`, a blank secret keeping the one in
/// `stored` (of the same type); and whether a stored secret was kept.
fn config_of(
    gateway_type: &str,
    c: ConfigBody,
    stored: Option<&GatewayConfig>,
) -> (GatewayConfig, bool) {
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
    let cfg = match (gateway_type, stored) {
        ("stripe", old) => GatewayConfig::Stripe(stripe_config(c, old, &keep)),
        ("alipay", old) => GatewayConfig::Alipay(alipay_config(c, old, &keep)),
        ("wxpay", old) => GatewayConfig::Wxpay(wxpay_config(c, old, &keep)),
        (_, old) => GatewayConfig::Epay(epay_config(c, old, &keep)),
    };
    (cfg, kept.get())
}

/// A text field of the configuration, trimmed.
fn text(v: Option<String>) -> String {
    v.unwrap_or_default().trim().to_owned()
}

/// `keep(given, stored)`: the given secret, or the stored one when it is blank.
type Keep<'a> = &'a dyn Fn(Option<String>, Option<&str>) -> String;

fn stripe_config(c: ConfigBody, stored: Option<&GatewayConfig>, keep: Keep<'_>) -> StripeConfig {
    let old = match stored {
        Some(GatewayConfig::Stripe(s)) => Some(s),
        _ => None,
    };
    StripeConfig {
        secret_key: keep(c.secret_key, old.map(|s| s.secret_key.as_str()))
            .trim()
            .to_owned(),
        webhook_secret: keep(c.webhook_secret, old.map(|s| s.webhook_secret.as_str()))
            .trim()
            .to_owned(),
    }
}

fn alipay_config(c: ConfigBody, stored: Option<&GatewayConfig>, keep: Keep<'_>) -> AlipayConfig {
    let old = match stored {
        Some(GatewayConfig::Alipay(a)) => Some(a),
        _ => None,
    };
    AlipayConfig {
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
    }
}

fn wxpay_config(c: ConfigBody, stored: Option<&GatewayConfig>, keep: Keep<'_>) -> WxpayConfig {
    let old = match stored {
        Some(GatewayConfig::Wxpay(w)) => Some(w),
        _ => None,
    };
    WxpayConfig {
        mch_id: text(c.mch_id),
        app_id: text(c.app_id),
        serial_no: text(c.serial_no).to_ascii_uppercase(),
        private_key: keep(c.private_key, old.map(|w| w.private_key.as_str()))
            .trim()
            .to_owned(),
        api_v3_key: keep(c.api_v3_key, old.map(|w| w.api_v3_key.as_str())),
        platform_key_id: text(c.platform_key_id),
        platform_public_key: text(c.platform_public_key),
    }
}

fn epay_config(c: ConfigBody, stored: Option<&GatewayConfig>, keep: Keep<'_>) -> EpayConfig {
    let old = match stored {
        Some(GatewayConfig::Epay(e)) => Some(e),
        _ => None,
    };
    EpayConfig {
        url: text(c.url),
        pid: text(c.pid),
        key: keep(c.key, old.map(|e| e.key.as_str())),
        pay_type: text(c.pay_type),
    }
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
