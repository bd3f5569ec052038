//! Settings (root only): read all (secrets are write-only, and stored sealed), update one with
//! validation.

use crate::auth::RootUser;
use crate::error::{ok, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::options::{self, CATALOGUE};
use switchboard_store::options as store_options;

/// `GET /api/option`: `[{key, value}]` for every setting, stored value or default; secrets are
/// listed with an empty value and `secret: true` (they can be written, never read back).
pub async fn list(state: web::Data<AppState>, _root: RootUser) -> ApiResult<HttpResponse> {
    let snap = state.view();
    let items: Vec<Value> = CATALOGUE
        .iter()
        .map(|d| {
            if d.secret {
                json!({"key": d.key, "value": "", "secret": true, "set": snap.get(d.key).is_some_and(|v| !v.is_empty())})
            } else {
                let v = snap.get(d.key).cloned().unwrap_or_else(|| d.default.to_owned());
                json!({"key": d.key, "value": v})
            }
        })
        .collect();
    Ok(ok(items))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "OptionUpdateBody")]
pub struct UpdateBody {
    key: String,
    value: Value,
}

/// `PUT /api/option {key, value}`: validates by the setting's kind, stores, applies at once.
pub async fn update(
    state: web::Data<AppState>,
    RootUser(me): RootUser,
    Body(body): Body<UpdateBody>,
) -> ApiResult<HttpResponse> {
    if body.key.is_empty() {
        return Err(ApiError::bad_request("required", "key cannot be empty"));
    }
    let value = options::normalize(&body.key, &body.value)?;
    let secret = crate::at_rest::is_secret_option(&body.key);
    // Secrets are stored sealed (an empty one, unset, stays empty); the snapshot holds them open.
    let stored = if secret && !value.is_empty() {
        state.secret_box.seal(&value)
    } else {
        value.clone()
    };
    let key = body.key.clone();
    state
        .db(move |c| Ok(store_options::set(c, &key, &stored)?))
        .await?;
    state.settings.set(&body.key, &value);
    tracing::info!(key = %body.key, operator = me.id, "setting changed");
    let shown = if secret { String::new() } else { value };
    Ok(ok(json!({"key": body.key, "value": shown})))
}
