//! Monthly invoices: the signed-in user's (`/api/user/invoice`, detail and PDF) and root's
//! generation (`POST /api/invoice/generate`), plus [`run_monthly_invoices`] for the server's
//! maintenance loop.
//!
//! - Invoices are built from the daily rollup only (see `switchboard_store::invoices`), once per
//!   user and month; generating again creates nothing (root may regenerate a month, replacing its
//!   rows in one transaction).
//! - The user routes answer 403 `invoices_disabled` while the site setting `UserInvoiceMonth` is
//!   false (the console hides the menu item then). Generation does not depend on the setting, so
//!   switching it on shows past months at once.
//! - A `date` that is not `YYYY-MM`, a month that has not ended, and a month without an invoice
//!   for the caller all answer 404: the month names a resource, and another user's invoice is
//!   indistinguishable from a missing one.

use super::paging::{self, page_req};
use crate::auth::{AuthUser, RootUser};
use crate::error::{ok, ApiError, ApiResult};
use crate::extract::Body;
use crate::invoice_pdf::{self, InvoiceDoc};
use crate::AppState;
use actix_web::http::header;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::invoice::Month;
use switchboard_domain::ErrorCode;
use switchboard_store::invoices::{self, InvoiceRow};
use switchboard_store::{now, users};

/// How long the generation lease of a month is held after a successful run (a run that finds
/// nothing to bill is not repeated more often than this).
pub const LOCK_TTL_SECS: i64 = 3600;

pub fn invoice_json(r: &InvoiceRow, with_models: bool) -> Value {
    let mut v = json!({
        "id": r.id,
        "user_id": r.user_id,
        "month": r.month,
        "date": r.month,
        "status": r.status,
        "amount": r.quota,
        "quota": r.quota,
        "request_count": r.request_count,
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        "total_tokens": r.prompt_tokens.saturating_add(r.completion_tokens),
        "request_time_ms": r.request_time_ms,
        "created_at": r.created_at,
        "paid_at": r.paid_at,
    });
    if with_models {
        v["model_details"] = json!(r.models());
    }
    v
}

fn check_enabled(state: &AppState) -> ApiResult<()> {
    if state.settings.site().user_invoice_month {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            ErrorCode::InvoicesDisabled,
            "monthly invoices are not enabled on this site (setting UserInvoiceMonth)",
        ))
    }
}

fn no_invoice(date: &str) -> ApiError {
    ApiError::not_found(format!(
        "no invoice for {date:?} (months are written YYYY-MM)"
    ))
}

/// The month of a user route: a complete `YYYY-MM` month, else 404.
fn user_month(q: &DateQuery) -> ApiResult<String> {
    let date = q
        .date
        .as_deref()
        .or(q.month.as_deref())
        .map(str::trim)
        .unwrap_or_default();
    match Month::parse(date) {
        Ok(m) if m.is_complete_at(now()) => Ok(m.to_string()),
        _ => Err(no_invoice(date)),
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[schemars(rename = "InvoiceListQuery")]
pub struct ListQuery {
    page: Option<i64>,
    size: Option<i64>,
}

/// `GET /api/user/invoice`: the caller's invoices, newest month first.
pub async fn list_self(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    check_enabled(&state)?;
    let page = page_req(q.page, q.size)?;
    let render = |r: &_| invoice_json(r, false);
    paging::list(&state, page, render, move |c| {
        Ok(invoices::list_for_user(c, me.id, page)?)
    })
    .await
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct DateQuery {
    date: Option<String>,
    /// Accepted as an alias of `date`.
    month: Option<String>,
    /// The PDF's language: `zh_CN` (default), `zh_HK`, `en` or `ja`.
    lang: Option<String>,
}

async fn load_own(state: &AppState, user_id: i64, month: String) -> ApiResult<InvoiceRow> {
    state
        .db(move |c| match invoices::find_for_user(c, user_id, &month) {
            Ok(r) => Ok(r),
            Err(e) if e.is_not_found() => Err(no_invoice(&month)),
            Err(e) => Err(e.into()),
        })
        .await
}

/// `GET /api/user/invoice/detail?date=YYYY-MM`: one invoice with its per-model lines.
pub async fn detail_self(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<DateQuery>,
) -> ApiResult<HttpResponse> {
    check_enabled(&state)?;
    let month = user_month(&q)?;
    let inv = load_own(&state, me.id, month).await?;
    Ok(ok(invoice_json(&inv, true)))
}

/// `GET /api/user/invoice/pdf?date=YYYY-MM`: the invoice as a PDF download.
pub async fn pdf_self(
    state: web::Data<AppState>,
    AuthUser(me): AuthUser,
    q: web::Query<DateQuery>,
) -> ApiResult<HttpResponse> {
    check_enabled(&state)?;
    let month = user_month(&q)?;
    // Simplified Chinese, the console's default, when the download names no language.
    let lang = q.lang.as_deref().map(str::trim).filter(|l| !l.is_empty());
    let labels = invoice_pdf::Labels::for_lang(lang.unwrap_or("zh_CN")).ok_or_else(|| {
        ApiError::bad_request(
            ErrorCode::InvalidLanguage,
            format!(
                "lang must be zh_CN, zh_HK, en or ja, not {:?}",
                lang.unwrap_or_default()
            ),
        )
    })?;
    let inv = load_own(&state, me.id, month).await?;
    let user_id = me.id;
    let user = state.db(move |c| Ok(users::find(c, user_id)?)).await?;
    let site = state.settings.site();
    let doc = InvoiceDoc {
        system_name: site.system_name.clone(),
        month: inv.month.clone(),
        user_id: inv.user_id,
        username: user.username,
        display_name: user.display_name,
        status: inv.status,
        quota: inv.quota,
        request_count: inv.request_count,
        prompt_tokens: inv.prompt_tokens,
        completion_tokens: inv.completion_tokens,
        request_time_ms: inv.request_time_ms,
        models: inv.models(),
        created_at: inv.created_at,
        quota_per_unit: site.quota_per_unit,
    };
    let bytes = web::block(move || -> ApiResult<Vec<u8>> {
        let (path, face) = invoice_pdf::font_location();
        let font = invoice_pdf::load_font(&path, face)?;
        Ok(invoice_pdf::render(&font, &doc, labels))
    })
    .await
    .map_err(ApiError::internal)??;
    Ok(HttpResponse::Ok()
        .content_type("application/pdf")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"invoice-{}.pdf\"", inv.month),
        ))
        .body(bytes))
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct GenerateBody {
    month: String,
    #[serde(default)]
    regenerate: bool,
}

/// `POST /api/invoice/generate {month, regenerate?}` (root): generates a month that has ended;
/// `regenerate` replaces the month's invoices. Answers `{generated}`.
pub async fn generate(
    state: web::Data<AppState>,
    RootUser(_): RootUser,
    Body(b): Body<GenerateBody>,
) -> ApiResult<HttpResponse> {
    let month = Month::parse(b.month.trim())?;
    let t = now();
    if !month.is_complete_at(t) {
        return Err(ApiError::bad_request(
            ErrorCode::MonthNotComplete,
            format!("{month} has not ended yet; only past months can be invoiced"),
        ));
    }
    let month = month.to_string();
    let generated = state
        .db(move |c| {
            Ok(if b.regenerate {
                invoices::regenerate_month(c, &month, t)?
            } else {
                invoices::generate_month_at(c, &month, t)?
            })
        })
        .await?;
    Ok(ok(json!({ "generated": generated })))
}

/// The maintenance job: when the month before `now` (UTC) has no invoices for anyone yet and this
/// node takes the lease `invoices:<YYYY-MM>`, generates that month. Returns how many invoices it
/// created (0 when another node did or does the work, or when nobody used anything).
///
/// The lease is kept (for [`LOCK_TTL_SECS`]) after a successful run and released after a failed
/// one so that the next tick, on any node, retries.
pub async fn run_monthly_invoices(state: &AppState, now: i64) -> ApiResult<usize> {
    let month = Month::previous_of(now).to_string();
    let lock = format!("invoices:{month}");
    let holder = format!("{}-{}", std::process::id(), crate::auth::random_string(12));
    let m = month.clone();
    if state.db(move |c| Ok(invoices::count_month(c, &m)?)).await? > 0 {
        return Ok(0);
    }
    if !crate::jobs::acquire(
        state,
        &lock,
        &holder,
        LOCK_TTL_SECS,
        crate::jobs::Lease::Period,
    )
    .await?
    {
        return Ok(0);
    }
    // Another node may have finished between the check and the lease.
    let m = month.clone();
    let generated = state
        .db(move |c| match invoices::count_month(c, &m)? {
            0 => Ok(invoices::generate_month_at(c, &m, now)?),
            _ => Ok(0),
        })
        .await;
    match generated {
        Ok(n) => {
            if n > 0 {
                tracing::info!(%month, invoices = n, "monthly invoices generated");
            }
            Ok(n)
        }
        Err(e) => {
            if let Err(re) = crate::jobs::release(state, &lock, &holder).await {
                tracing::warn!(error = %re, %lock, "releasing the invoice lease failed");
            }
            Err(e)
        }
    }
}
