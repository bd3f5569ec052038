//! Settings (administrators; root alone reads and changes the root-only ones: secrets, sign-in,
//! mail, outbound and money conversion): read all (secrets are write-only, and stored sealed),
//! update one or several at once, validated before anything is written.

use crate::auth::{AdminUser, CurrentUser};
use crate::error::{ok, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::options::{self, OptionDef, CATALOGUE};
use switchboard_domain::user::Role;
use switchboard_domain::ErrorCode;
use switchboard_store::options as store_options;

/// Whether `user` may read and change `def`.
fn may_manage(user: &CurrentUser, def: &OptionDef) -> bool {
    !def.root_only || user.role == Role::Root
}

/// `GET /api/option`: `[{key, value, root_only}]` for every setting the caller manages (root:
/// all; an administrator: all but the root-only ones), stored value or default; secrets are
/// listed with an empty value and `secret: true` (they can be written, never read back).
pub async fn list(state: web::Data<AppState>, AdminUser(me): AdminUser) -> ApiResult<HttpResponse> {
    let snap = state.view();
    let items: Vec<Value> = CATALOGUE
        .iter()
        .filter(|d| may_manage(&me, d))
        .map(|d| {
            if d.secret {
                json!({"key": d.key, "value": "", "secret": true, "root_only": true, "set": snap.get(d.key).is_some_and(|v| !v.is_empty())})
            } else {
                let v = snap.get(d.key).cloned().unwrap_or_else(|| d.default.to_owned());
                json!({"key": d.key, "value": v, "root_only": d.root_only})
            }
        })
        .collect();
    Ok(ok(items))
}

/// Checks one change: the caller may manage the key, the value fits its kind. Returns the
/// canonical value to apply.
fn check(me: &CurrentUser, key: &str, value: &Value) -> ApiResult<String> {
    if key.is_empty() {
        return Err(ApiError::bad_request(
            ErrorCode::Required,
            "key cannot be empty",
        ));
    }
    if let Some(def) = options::find(key) {
        if !may_manage(me, def) {
            return Err(ApiError::forbidden(
                ErrorCode::RootOnlySetting,
                format!("{key} can only be changed by the root user"),
            ));
        }
    }
    Ok(options::normalize(key, value)?)
}

/// The text to store: secrets sealed (an empty one, unset, stays empty).
fn stored(state: &AppState, key: &str, value: &str) -> String {
    if crate::at_rest::is_secret_option(key) && !value.is_empty() {
        state.secret_box.seal(value)
    } else {
        value.to_owned()
    }
}

/// What a change answers with: secrets never come back.
fn shown(key: &str, value: String) -> Value {
    let value = if crate::at_rest::is_secret_option(key) {
        String::new()
    } else {
        value
    };
    json!({"key": key, "value": value})
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
    AdminUser(me): AdminUser,
    Body(body): Body<UpdateBody>,
) -> ApiResult<HttpResponse> {
    let value = check(&me, &body.key, &body.value)?;
    let key = body.key.clone();
    let sealed = stored(&state, &key, &value);
    state
        .db(move |c| Ok(store_options::set(c, &key, &sealed)?))
        .await?;
    state.settings_written(|s| s.set(&body.key, &value));
    crate::coherence::publish(&state, crate::coherence::Change::Settings);
    tracing::info!(key = %body.key, operator = me.id, "setting changed");
    Ok(ok(shown(&body.key, value)))
}

/// The most settings one batch may change (the whole catalogue fits).
const MAX_BATCH: usize = 200;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "OptionBatchBody")]
pub struct BatchBody {
    options: Vec<UpdateBody>,
}

/// `PUT /api/option/batch {options: [{key, value}]}`: what the console's one Save sends. Every
/// change is checked (permission, kind) before any is written, and they are written in one
/// transaction: all of them, or, when one is refused, none (the message names the key).
pub async fn update_batch(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    Body(body): Body<BatchBody>,
) -> ApiResult<HttpResponse> {
    if body.options.is_empty() {
        return Err(ApiError::bad_request(
            ErrorCode::Required,
            "options cannot be empty",
        ));
    }
    if body.options.len() > MAX_BATCH {
        return Err(ApiError::bad_request(
            ErrorCode::TooMany,
            format!("at most {MAX_BATCH} settings per batch"),
        ));
    }
    let mut changes: Vec<(String, String)> = Vec::with_capacity(body.options.len());
    for o in &body.options {
        if changes.iter().any(|(k, _)| k == &o.key) {
            return Err(ApiError::bad_request(
                ErrorCode::DuplicateKey,
                format!("{} appears twice in the batch", o.key),
            ));
        }
        changes.push((o.key.clone(), check(&me, &o.key, &o.value)?));
    }
    let rows: Vec<(String, String)> = changes
        .iter()
        .map(|(k, v)| (k.clone(), stored(&state, k, v)))
        .collect();
    state
        .db(move |c| Ok(store_options::set_many(c, &rows)?))
        .await?;
    state.settings_written(|s| s.set_many(&changes));
    crate::coherence::publish(&state, crate::coherence::Change::Settings);
    let keys: Vec<&str> = changes.iter().map(|(k, _)| k.as_str()).collect();
    tracing::info!(keys = ?keys, operator = me.id, "settings changed");
    let out: Vec<Value> = changes.into_iter().map(|(k, v)| shown(&k, v)).collect();
    Ok(ok(out))
}
