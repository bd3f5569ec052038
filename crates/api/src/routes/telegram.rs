//! The Telegram bot's routes: root's custom menu (`/api/option/telegram...`), the bot's status,
//! the reload that registers the command list with Telegram, and the webhook Telegram calls
//! (`/api/telegram/{token}`). The bot itself is `crate::telegram`.

use super::paging::{self, found_or, Search};
use crate::auth::RootUser;
use crate::crypto::constant_time_eq;
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::telegram::{self, BotApi, BotConfig, Mode, BUILTIN};
use crate::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};
use switchboard_domain::ErrorCode;
use switchboard_store::telegram::{self as store, MenuFields, MenuRow};
use switchboard_store::StoreError;

/// Reply formats Telegram's `sendMessage` takes (`""`: plain text).
pub const PARSE_MODES: &[&str] = &["", "Markdown", "MarkdownV2", "HTML"];

fn menu_json(m: &MenuRow) -> Value {
    json!({
        "id": m.id,
        "command": m.command,
        "description": m.description,
        "parse_mode": m.parse_mode,
        "reply_message": m.reply_message,
    })
}

fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::TelegramMenuNotFound,
        "Telegram menu entry not found",
    )
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(ErrorCode::TelegramMenuInvalid, message)
}

fn taken(command: &str) -> ApiError {
    ApiError::conflict(
        ErrorCode::TelegramCommandTaken,
        format!("the command /{command} is taken (by a built-in command or another entry)"),
    )
}

paging::keyword_query! {
    pub struct ListQuery;
}

/// `GET /api/option/telegram`: the menu, by command.
pub async fn list(
    state: web::Data<AppState>,
    _r: RootUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let s = Search::unsorted(&mut q.into_inner())?;
    paging::list(&state, s.page, menu_json, move |c| {
        Ok(store::list_menus(c, s.keyword(), s.page)?)
    })
    .await
}

/// `GET /api/option/telegram/{id}`.
pub async fn get(
    state: web::Data<AppState>,
    _r: RootUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    paging::one(&state, menu_json, move |c| {
        found_or(store::find_menu(c, id), not_found)
    })
    .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MenuBody {
    /// Only on update.
    id: Option<i64>,
    /// 1–32 of a–z, 0–9 and `_` (a leading `/` is dropped); not a built-in command.
    command: Option<String>,
    /// What Telegram's command list shows, 1–256 characters.
    description: Option<String>,
    /// `""` (plain text), `Markdown`, `MarkdownV2` or `HTML`.
    parse_mode: Option<String>,
    /// The reply, 1–4096 characters.
    reply_message: Option<String>,
}

/// The entry `b` describes, checked (spec section 5: command, description, message type and
/// content required; Telegram's own rules for commands and messages).
struct Checked {
    command: String,
    description: String,
    parse_mode: String,
    reply_message: String,
}

impl Checked {
    fn fields(&self) -> MenuFields<'_> {
        MenuFields {
            command: &self.command,
            description: &self.description,
            parse_mode: &self.parse_mode,
            reply_message: &self.reply_message,
        }
    }
}

fn check(b: MenuBody) -> ApiResult<Checked> {
    let command = b
        .command
        .unwrap_or_default()
        .trim()
        .trim_start_matches('/')
        .to_owned();
    if command.is_empty()
        || command.len() > 32
        || !command
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
    {
        return Err(invalid(
            "command must be 1 to 32 characters of a-z, 0-9 and _ (Telegram's rule)",
        ));
    }
    if BUILTIN.iter().any(|(c, _)| *c == command) {
        return Err(taken(&command));
    }
    let description = b.description.unwrap_or_default().trim().to_owned();
    if description.is_empty() || description.chars().count() > 256 {
        return Err(invalid("description is required, at most 256 characters"));
    }
    let parse_mode = b
        .parse_mode
        .ok_or_else(|| invalid("parse_mode is required (\"\" for plain text)"))?
        .trim()
        .to_owned();
    let Some(parse_mode) = PARSE_MODES
        .iter()
        .find(|m| m.eq_ignore_ascii_case(&parse_mode))
    else {
        return Err(invalid(
            "parse_mode must be \"\" (plain text), Markdown, MarkdownV2 or HTML",
        ));
    };
    let reply_message = b.reply_message.unwrap_or_default();
    if reply_message.trim().is_empty() || reply_message.chars().count() > 4096 {
        return Err(invalid(
            "reply_message is required, at most 4096 characters (Telegram's limit)",
        ));
    }
    Ok(Checked {
        command,
        description,
        parse_mode: (*parse_mode).to_owned(),
        reply_message,
    })
}

fn saved(r: Result<MenuRow, StoreError>, command: &str) -> ApiResult<MenuRow> {
    match r {
        Ok(m) => Ok(m),
        Err(StoreError::Conflict(_)) => Err(taken(command)),
        Err(e) if e.is_not_found() => Err(not_found()),
        Err(e) => Err(e.into()),
    }
}

/// `POST /api/option/telegram`: a new entry (a reload registers it with Telegram).
pub async fn create(
    state: web::Data<AppState>,
    _r: RootUser,
    Body(b): Body<MenuBody>,
) -> ApiResult<HttpResponse> {
    let e = check(b)?;
    let command = e.command.clone();
    let m = state
        .db(move |c| {
            let r = store::insert_menu(c, &e.fields()).and_then(|id| store::find_menu(c, id));
            saved(r, &e.command)
        })
        .await?;
    state.telegram.menu_changed();
    tracing::info!(command = %command, "telegram menu entry created");
    Ok(ok(menu_json(&m)))
}

/// `PUT /api/option/telegram`: replaces an entry.
pub async fn update(
    state: web::Data<AppState>,
    _r: RootUser,
    Body(b): Body<MenuBody>,
) -> ApiResult<HttpResponse> {
    let id = b.id.ok_or_else(|| invalid("id is required"))?;
    let e = check(b)?;
    let m = state
        .db(move |c| {
            let r = store::update_menu(c, id, &e.fields()).and_then(|()| store::find_menu(c, id));
            saved(r, &e.command)
        })
        .await?;
    state.telegram.menu_changed();
    Ok(ok(menu_json(&m)))
}

/// `DELETE /api/option/telegram/{id}`.
pub async fn delete(
    state: web::Data<AppState>,
    _r: RootUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    state
        .db(move |c| found_or(store::delete_menu(c, id), not_found))
        .await?;
    state.telegram.menu_changed();
    Ok(ok_message("deleted"))
}

/// `PUT /api/option/telegram/reload`: registers the built-in commands and the menu with
/// Telegram → `{commands}`.
pub async fn reload(state: web::Data<AppState>, _r: RootUser) -> ApiResult<HttpResponse> {
    let n = telegram::register_commands(&state).await?;
    Ok(ok(json!({"commands": n})))
}

/// `GET /api/option/telegram/status`: whether the bot runs, how (webhook "online" or polling
/// "offline"), and whether the menu needs a reload.
pub async fn status(state: web::Data<AppState>, _r: RootUser) -> ApiResult<HttpResponse> {
    let cfg = BotConfig::read(&state);
    Ok(ok(state.telegram.status(&cfg)))
}

/// `POST /api/telegram/{token}`: Telegram delivers an update (webhook mode). The path's token
/// and the `X-Telegram-Bot-Api-Secret-Token` header must both be the configured ones (compared
/// in constant time); anything else is a 404 / 401 that changes nothing.
pub async fn webhook(
    state: web::Data<AppState>,
    req: HttpRequest,
    token: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let cfg = BotConfig::read(&state);
    if cfg.mode() != Mode::Webhook || !constant_time_eq(token.as_bytes(), cfg.token.as_bytes()) {
        return HttpResponse::NotFound().json(json!({"ok": false}));
    }
    let secret = req
        .headers()
        .get("X-Telegram-Bot-Api-Secret-Token")
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if !constant_time_eq(secret, cfg.webhook_secret.as_bytes()) {
        tracing::warn!("telegram webhook call without the right secret refused");
        return HttpResponse::Unauthorized().json(json!({"ok": false}));
    }
    let Ok(update) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().json(json!({"ok": false}));
    };
    let api = match BotApi::new(&state, &cfg.token) {
        Ok(a) => a,
        Err(e) => {
            tracing::error!("telegram webhook: {e}");
            return HttpResponse::ServiceUnavailable().json(json!({"ok": false}));
        }
    };
    telegram::handle_update(&state, &api, &update).await;
    HttpResponse::Ok().json(json!({"ok": true}))
}
