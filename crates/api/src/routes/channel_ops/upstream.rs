//! What the upstream says: its model list and its balance.

use super::{client, load, reach, timed_out, upstream_error, TEST_TIMEOUT};
use crate::auth::AdminUser;
use crate::error::{ok, ApiError, ApiResult};
use crate::routes::channels::not_found;
use crate::routes::paging::found_or;
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use serde_json::json;
use switchboard_domain::ErrorCode;
use switchboard_store::channels::{self};

/// `GET /api/channel/fetch_models/{id}`: the upstream's model ids.
pub async fn fetch_models(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let row = load(&state, id.into_inner()).await?;
    let (provider, info) = reach(&state, row)?;
    let client = client(&state, &info)?;
    let res = tokio::time::timeout(TEST_TIMEOUT, provider.list_models(&client, &info.target))
        .await
        .unwrap_or_else(|_| Err(timed_out()));
    match res {
        Ok(ids) => Ok(ok(ids)),
        Err(f) => Err(upstream_error(ErrorCode::FetchModelsFailed, &f)),
    }
}

/// `GET /api/channel/update_balance/{id}`: reads and stores the upstream balance →
/// `{balance}` in USD.
pub async fn update_balance(
    state: web::Data<AppState>,
    _a: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let row = load(&state, id.into_inner()).await?;
    let id = row.id;
    let (provider, info) = reach(&state, row)?;
    let client = client(&state, &info)?;
    let res = tokio::time::timeout(TEST_TIMEOUT, provider.balance(&client, &info.target))
        .await
        .unwrap_or_else(|_| Err(timed_out()));
    let usd = match res {
        Ok(Some(usd)) if usd.is_finite() => usd,
        Ok(Some(_)) => {
            return Err(ApiError::new(
                StatusCode::BAD_GATEWAY,
                ErrorCode::BalanceUpdateFailed,
                "the upstream answered an invalid balance",
            ))
        }
        Ok(None) => {
            return Err(ApiError::bad_request(
                ErrorCode::BalanceNotSupported,
                "this channel type has no balance API",
            ))
        }
        Err(f) => return Err(upstream_error(ErrorCode::BalanceUpdateFailed, &f)),
    };
    // Saturating float-to-int conversion; balances are far inside the i64 range.
    #[allow(clippy::cast_possible_truncation)]
    let micro = (usd * 1_000_000.0).round() as i64;
    state
        .db(move |c| found_or(channels::set_balance(c, id, micro), not_found))
        .await?;
    Ok(ok(json!({"balance": usd})))
}
