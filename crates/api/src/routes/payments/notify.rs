//! Payment notifications (`/api/payment/notify/{uuid}`): a gateway reports a payment, which
//! credits at most once (the module docs of [`super`]).

use super::{dec, open_config};
use crate::error::ApiResult;
use crate::payment::{self, GatewayConfig, Notice, Refused};
use crate::routes::paging::found;
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;
use std::collections::BTreeMap;
use switchboard_domain::log::LogType;
use switchboard_domain::quota;
use switchboard_store::payments::{self, GatewayRow};
use switchboard_store::{logs, now, redemptions, user_groups, users, DbConn};

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
    let (g, cfg) = match gateway_of(&state, uuid.into_inner()).await {
        Ok(found) => found,
        Err(answered) => return answered,
    };
    let kind = g.gateway_type.clone();
    let notice = match verify(&cfg, &req, &body) {
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
    let per_unit = state.settings.site().quota_per_unit;
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
    let accepted = done(&state, gateway_id, &trade_no, outcome).await;
    answer(&kind, accepted)
}

/// The gateway `uuid` names, with its configuration open; or the answer that refuses the
/// notification (an unknown gateway) or asks for it again (the database or the configuration
/// cannot be read now).
async fn gateway_of(
    state: &AppState,
    uuid: String,
) -> Result<(GatewayRow, GatewayConfig), HttpResponse> {
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
            return Err(answer("", Some(false)));
        }
        Err(e) => {
            tracing::error!("payment notification: the database is unavailable: {e}");
            return Err(answer("", None));
        }
    };
    match open_config(state, &g) {
        Ok(c) => Ok((g, c)),
        Err(e) => {
            tracing::error!(gateway = g.id, "payment notification: {e}");
            Err(answer(&g.gateway_type, None))
        }
    }
}

/// The notification checked by the gateway's own rules (signature, form or event).
fn verify(cfg: &GatewayConfig, req: &HttpRequest, body: &[u8]) -> Result<Notice, Refused> {
    // epay and Alipay send a form (GET query or POSTed body).
    let form = || {
        let mut params: BTreeMap<String, String> =
            url::form_urlencoded::parse(req.query_string().as_bytes())
                .into_owned()
                .collect();
        if !body.is_empty() && body.len() <= 64 * 1024 {
            params.extend(url::form_urlencoded::parse(body).into_owned());
        }
        params
    };
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    match cfg {
        GatewayConfig::Epay(c) => payment::epay_verify(c, &form()).map(Notice::Paid),
        GatewayConfig::Alipay(c) => payment::alipay::verify(c, &form()).map(Notice::Paid),
        GatewayConfig::Stripe(c) => {
            payment::stripe_verify(c, header("Stripe-Signature"), body, now())
        }
        GatewayConfig::Wxpay(c) => {
            let by = payment::wxpay::SignedBy {
                timestamp: header("Wechatpay-Timestamp"),
                nonce: header("Wechatpay-Nonce"),
                signature: header("Wechatpay-Signature"),
                serial: header("Wechatpay-Serial"),
            };
            payment::wxpay::verify(c, &by, body, now()).map(Notice::Paid)
        }
    }
}

/// After the transaction: the ledger learns a credit, the outcome is logged, and the answer
/// says whether the gateway may stop ([`answer`]'s `accepted`).
async fn done(
    state: &AppState,
    gateway_id: i64,
    trade_no: &str,
    outcome: ApiResult<Outcome>,
) -> Option<bool> {
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
            Some(true)
        }
        Ok(Outcome::Failed) => {
            tracing::info!(gateway = gateway_id, order = %trade_no, "the order's payment failed");
            Some(true)
        }
        Ok(Outcome::Unchanged(why)) => {
            tracing::warn!(gateway = gateway_id, order = %trade_no, "payment notification changed nothing: order {why}");
            Some(true)
        }
        Ok(Outcome::Refused(why)) => {
            tracing::warn!(gateway = gateway_id, "payment notification refused: {why}");
            Some(false)
        }
        Err(e) => {
            tracing::error!(gateway = gateway_id, order = %trade_no, "payment notification failed, the gateway will retry: {e}");
            None
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
