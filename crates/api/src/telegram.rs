//! The Telegram bot: users check and top up their account from Telegram; root extends its menu.
//!
//! It speaks the Bot API over HTTPS (`{TELEGRAM_API_URL}/bot{token}/{method}`, JSON bodies,
//! answers `{ok, result}` or `{ok: false, description}`); the handful of methods the bot needs
//! (getMe, getUpdates, setWebhook, deleteWebhook, setMyCommands, sendMessage, editMessageText,
//! answerCallbackQuery, deleteMessage) are called directly with the relay's HTTP client (with
//! `TELEGRAM_PROXY` when set) rather than through a bot framework.
//!
//! **Modes.** With `TelegramBotToken` set, the bot runs in *webhook* mode ("online") when
//! `TelegramWebhookSecret` is set and `ServerAddress` is https: Telegram calls
//! `{ServerAddress}/api/telegram/{token}` with the secret in `X-Telegram-Bot-Api-Secret-Token`,
//! and any node answers. Otherwise it *long-polls* (`getUpdates`, "offline"). Either way one node
//! at a time (the `telegram` lease in `job_locks`) registers the webhook or polls.
//!
//! **Commands.** `/bind` (then the account's access token, which is deleted from the chat once
//! read), `/unbind`, `/balance`, `/recharge` (a redemption code, through the same transaction as
//! the console's top-up), `/apikey` (the account's keys, five per page, with buttons to page and
//! to show a key with its chat-client links), `/aff` (the invite link), `/cancel`, `/help`, and
//! root's menu entries (each answered with its static reply). A command may carry its argument
//! (`/bind <token>`); otherwise the bot asks for it and waits five minutes. That wait lives in
//! the memory of the node that asked: behind a load balancer in webhook mode, send the argument
//! with the command. The bot speaks the Telegram user's language when the console has it
//! (English, Simplified and Traditional Chinese, Japanese), else the site's (`texts`).

pub mod texts;

use self::texts::{render, Arg, Lang, Msg};
use crate::auth::sha256_hex;
use crate::error::{ApiError, ApiResult};
use crate::AppState;
use dashmap::DashMap;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use switchboard_domain::quota;
use switchboard_domain::ErrorCode;
use switchboard_store::{now, telegram as store, tokens, users, PageReq};

/// The Bot API's origin (`TELEGRAM_API_URL` overrides it).
pub const TELEGRAM_API_URL: &str = "https://api.telegram.org";

/// The built-in commands, in the order `/help` lists them.
pub const BUILTIN: &[(&str, &str)] = &[
    ("bind", "Bind your account (with its access token)"),
    ("unbind", "Unbind your account"),
    ("balance", "Your balance"),
    ("recharge", "Top up with a redemption code"),
    ("apikey", "Your API keys"),
    ("aff", "Your invite link"),
    ("help", "What this bot does"),
    ("cancel", "Cancel the current step"),
    ("start", "Start"),
];

/// How long the bot waits for the argument it asked for.
const PENDING_TTL: Duration = Duration::from_secs(300);
/// Keys per page of `/apikey`.
const KEYS_PER_PAGE: i64 = 5;
/// Seconds Telegram holds a `getUpdates` call open.
const POLL_TIMEOUT_SECS: u64 = 25;
/// The lease that makes one node the bot's runner.
const LEASE: &str = "telegram";
const LEASE_TTL_SECS: i64 = 60;

/// How the bot receives updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Off,
    Webhook,
    Polling,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Webhook => "webhook",
            Mode::Polling => "polling",
        }
    }
}

/// The bot's settings, read from the options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotConfig {
    pub token: String,
    pub webhook_secret: String,
    pub server: String,
}

impl BotConfig {
    pub fn read(state: &AppState) -> Self {
        let t = state.settings.typed();
        BotConfig {
            token: t.telegram.bot_token.trim().to_owned(),
            webhook_secret: t.telegram.webhook_secret.trim().to_owned(),
            server: t.site.origin().unwrap_or_default(),
        }
    }

    pub fn mode(&self) -> Mode {
        if self.token.is_empty() {
            Mode::Off
        } else if !self.webhook_secret.is_empty() && self.server.starts_with("https://") {
            Mode::Webhook
        } else {
            Mode::Polling
        }
    }

    fn webhook_url(&self) -> String {
        format!("{}/api/telegram/{}", self.server, self.token)
    }
}

/// What the bot waits for in a chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    AccessToken,
    Code,
}

/// What this node knows of the bot (status, the chats it waits on).
#[derive(Default)]
pub struct BotState {
    /// This node is the runner (it registered the webhook, or it polls).
    running: AtomicBool,
    /// The menu changed since the commands were last registered.
    menu_dirty: AtomicBool,
    username: Mutex<String>,
    last_error: Mutex<String>,
    pending: DashMap<i64, (Pending, Instant)>,
}

impl BotState {
    /// Whether this node receives the bot's updates (it holds the lease and the bot runs).
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Relaxed)
    }

    pub fn menu_changed(&self) {
        self.menu_dirty.store(true, Ordering::Relaxed);
    }

    fn set_error(&self, e: &str) {
        if let Ok(mut g) = self.last_error.lock() {
            e.clone_into(&mut g);
        }
    }

    fn set_username(&self, u: &str) {
        if let Ok(mut g) = self.username.lock() {
            u.clone_into(&mut g);
        }
    }

    /// `/api/option/telegram/status`.
    pub fn status(&self, cfg: &BotConfig) -> Value {
        let mode = cfg.mode();
        json!({
            "configured": mode != Mode::Off,
            "mode": mode.name(),
            "online": mode == Mode::Webhook,
            "username": self.username.lock().map(|g| g.clone()).unwrap_or_default(),
            "running": mode != Mode::Off && self.running.load(Ordering::Relaxed),
            "reload_needed": self.menu_dirty.load(Ordering::Relaxed),
            "last_error": self.last_error.lock().map(|g| g.clone()).unwrap_or_default(),
        })
    }

    fn take_pending(&self, chat: i64) -> Option<Pending> {
        let (p, at) = self.pending.remove(&chat)?.1;
        (at.elapsed() < PENDING_TTL).then_some(p)
    }
}

/// The Bot API with one bot's token.
pub struct BotApi {
    client: reqwest::Client,
    base: String,
}

impl BotApi {
    pub fn new(state: &AppState, token: &str) -> ApiResult<Self> {
        let client = state
            .relay
            .clients
            .get(state.config.telegram_proxy.as_deref())
            .map_err(ApiError::internal)?;
        Ok(BotApi {
            client,
            base: format!(
                "{}/bot{token}",
                state.config.telegram_api_url.trim_end_matches('/')
            ),
        })
    }

    /// Calls `method` with `body`; its `result`, or Telegram's reason.
    pub async fn call(
        &self,
        method: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let resp = self
            .client
            .post(format!("{}/{method}", self.base))
            .json(body)
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| {
                format!(
                    "Telegram did not answer {method}: {}",
                    without_token(&e.to_string())
                )
            })?;
        let status = resp.status();
        let v: Value = resp
            .json()
            .await
            .map_err(|e| format!("Telegram's answer to {method} is not JSON ({status}): {e}"))?;
        if v["ok"].as_bool() != Some(true) {
            return Err(format!(
                "Telegram refused {method} ({status}): {}",
                v["description"].as_str().unwrap_or("no reason given")
            ));
        }
        Ok(v["result"].clone())
    }

    async fn send(&self, chat: i64, text: &str, markup: Option<Value>) -> Result<Value, String> {
        let mut body = json!({"chat_id": chat, "text": text, "parse_mode": "MarkdownV2",
                              "link_preview_options": {"is_disabled": true}});
        if let Some(m) = markup {
            body["reply_markup"] = m;
        }
        self.call("sendMessage", &body, Duration::from_secs(15))
            .await
    }
}

/// An error text without the bot token (reqwest's errors carry the URL, which holds it).
fn without_token(s: &str) -> String {
    match s.find("/bot") {
        Some(i) => {
            let rest = &s[i + 4..];
            let end = rest.find('/').unwrap_or(rest.len());
            format!("{}/bot<token>{}", &s[..i], &rest[end..])
        }
        None => s.to_owned(),
    }
}

/// `s` escaped for MarkdownV2 outside of code spans.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if "_*[]()~`>#+-=|{}.!\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `s` escaped for a MarkdownV2 code span (only `` ` `` and `\`).
pub fn esc_code(s: &str) -> String {
    s.replace('\\', "\\\\").replace('`', "\\`")
}

/// The command of a message text (`/bind@my_bot tok` → `("bind", "tok")`), lower case.
pub fn parse_command(text: &str) -> Option<(String, String)> {
    let text = text.trim();
    let rest = text.strip_prefix('/')?;
    let (head, arg) = match rest.split_once(char::is_whitespace) {
        Some((h, a)) => (h, a.trim()),
        None => (rest, ""),
    };
    let cmd = head
        .split('@')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    (!cmd.is_empty()).then(|| (cmd, arg.to_owned()))
}

/// The commands registered with Telegram: the built-ins (but `start`) and root's menu.
pub async fn register_commands(state: &AppState) -> ApiResult<usize> {
    let cfg = BotConfig::read(state);
    if cfg.mode() == Mode::Off {
        return Err(ApiError::conflict(
            ErrorCode::TelegramNotConfigured,
            "the Telegram bot has no token: set TelegramBotToken in the settings first",
        ));
    }
    let menus = state.db(|c| Ok(store::all_menus(c)?)).await?;
    // In the site's language (users see their own in /help).
    let lang = Lang::of(None, &site_lang(state));
    let mut commands: Vec<Value> = BUILTIN
        .iter()
        .filter(|(c, _)| *c != "start")
        .map(|(c, _)| json!({"command": c, "description": texts::command_description(lang, c)}))
        .collect();
    commands.extend(
        menus
            .iter()
            .map(|m| json!({"command": m.command, "description": m.description})),
    );
    // Telegram takes at most 100 commands.
    commands.truncate(100);
    let api = BotApi::new(state, &cfg.token)?;
    api.call(
        "setMyCommands",
        &json!({"commands": commands}),
        Duration::from_secs(15),
    )
    .await
    .map_err(|e| {
        state.telegram.set_error(&e);
        ApiError::new(
            actix_web::http::StatusCode::BAD_GATEWAY,
            ErrorCode::TelegramApiError,
            e,
        )
    })?;
    state.telegram.menu_dirty.store(false, Ordering::Relaxed);
    Ok(commands.len())
}

/// Handles one update (a message or a button press); errors are logged, never returned to
/// Telegram (it would only retry the same update).
pub async fn handle_update(state: &AppState, api: &BotApi, update: &Value) {
    let r = if update.get("callback_query").is_some() {
        on_button(state, api, &update["callback_query"]).await
    } else if let Some(m) = update.get("message") {
        on_message(state, api, m).await
    } else {
        Ok(())
    };
    if let Err(e) = r {
        tracing::warn!(
            "telegram: handling update {} failed: {e}",
            update["update_id"]
        );
        state.telegram.set_error(&e);
    }
}

/// Quota as the site shows it.
fn show_quota(state: &AppState, q: i64) -> String {
    let site = state.settings.site();
    quota::display(q, site.quota_per_unit, site.display_in_currency)
}

async fn bound_user(state: &AppState, from: i64) -> ApiResult<Option<users::UserRow>> {
    state
        .db(move |c| crate::routes::paging::found(store::find_user(c, from)))
        .await
}

/// The site's language (`Language`).
fn site_lang(state: &AppState) -> String {
    state.settings.site().language.clone()
}

async fn on_message(state: &AppState, api: &BotApi, m: &Value) -> Result<(), String> {
    let chat = m["chat"]["id"].as_i64().unwrap_or_default();
    let from = m["from"]["id"].as_i64().unwrap_or_default();
    let private = m["chat"]["type"].as_str() == Some("private");
    let text = m["text"].as_str().unwrap_or_default();
    if chat == 0 || from == 0 || text.is_empty() {
        return Ok(());
    }
    let c = Chat {
        api,
        id: chat,
        from,
        message_id: m["message_id"].as_i64().unwrap_or_default(),
        lang: Lang::of(m["from"]["language_code"].as_str(), &site_lang(state)),
    };
    let Some((cmd, arg)) = command_of(state, &c, private, text).await? else {
        return Ok(());
    };
    // The account's commands are for private chats only: a token or a key is never posted in a
    // group.
    let personal = matches!(
        cmd.as_str(),
        "bind" | "unbind" | "balance" | "recharge" | "apikey" | "aff"
    );
    if personal && !private {
        return c.send(&c.text(Msg::PrivateOnly)).await;
    }
    let reply = if personal && cmd != "bind" {
        match bound_user(state, from).await.map_err(|e| e.to_string())? {
            Some(u) => account_reply(state, &c, &cmd, &arg, u).await?,
            None => Some(c.text(Msg::NotBound)),
        }
    } else {
        reply(state, &c, &cmd, &arg).await?
    };
    match reply {
        Some(r) => c.send(&r).await,
        None => Ok(()),
    }
}

/// The chat a message came from, who sent it, and the language to answer in.
struct Chat<'a> {
    api: &'a BotApi,
    id: i64,
    from: i64,
    message_id: i64,
    lang: Lang,
}

impl Chat<'_> {
    /// `msg` without arguments.
    fn text(&self, msg: Msg) -> String {
        render(self.lang, msg, &[])
    }

    async fn send(&self, text: &str) -> Result<(), String> {
        self.api.send(self.id, text, None).await.map(|_| ())
    }
}

/// The command of a message and its argument: `/command arg`, or the answer the chat was asked
/// for (an access token after /bind, a code after /recharge). `None` when there is none (a
/// private chat is told to send /help).
async fn command_of(
    state: &AppState,
    c: &Chat<'_>,
    private: bool,
    text: &str,
) -> Result<Option<(String, String)>, String> {
    if let Some(command) = parse_command(text) {
        return Ok(Some(command));
    }
    match state.telegram.take_pending(c.id) {
        Some(Pending::AccessToken) if private => {
            Ok(Some(("bind".to_owned(), text.trim().to_owned())))
        }
        Some(Pending::Code) if private => Ok(Some(("recharge".to_owned(), text.trim().to_owned()))),
        _ => {
            if private {
                c.send(&c.text(Msg::UseHelp)).await?;
            }
            Ok(None)
        }
    }
}

/// The answer to a command that needs no bound account (`None`: already answered).
async fn reply(
    state: &AppState,
    c: &Chat<'_>,
    cmd: &str,
    arg: &str,
) -> Result<Option<String>, String> {
    Ok(Some(match cmd {
        "start" | "help" => help(state, c.lang).await,
        "cancel" => {
            state.telegram.pending.remove(&c.id);
            c.text(Msg::Cancelled)
        }
        "bind" if arg.is_empty() => {
            state
                .telegram
                .pending
                .insert(c.id, (Pending::AccessToken, Instant::now()));
            c.text(Msg::AskToken)
        }
        "bind" => {
            let reply = bind(state, c.lang, c.from, arg).await;
            // The token does not stay in the chat's history.
            if c.message_id != 0 {
                let _ = c
                    .api
                    .call(
                        "deleteMessage",
                        &json!({"chat_id": c.id, "message_id": c.message_id}),
                        Duration::from_secs(10),
                    )
                    .await;
            }
            reply
        }
        other => return menu_reply(state, c, other).await,
    }))
}

/// The answer of root's custom menu to `command` (`None`: already sent, in the entry's own
/// format), or "unknown command".
async fn menu_reply(
    state: &AppState,
    c: &Chat<'_>,
    command: &str,
) -> Result<Option<String>, String> {
    let command = command.to_owned();
    let menu = state
        .db(move |db| crate::routes::paging::found(store::find_menu_by_command(db, &command)))
        .await
        .map_err(|e| e.to_string())?;
    let Some(m) = menu else {
        return Ok(Some(c.text(Msg::Unknown)));
    };
    let mut body = json!({"chat_id": c.id, "text": m.reply_message});
    if !m.parse_mode.is_empty() {
        body["parse_mode"] = json!(m.parse_mode);
    }
    c.api
        .call("sendMessage", &body, Duration::from_secs(15))
        .await?;
    Ok(None)
}

/// The answer to a command of the bound account `u` (`None`: already answered).
async fn account_reply(
    state: &AppState,
    c: &Chat<'_>,
    cmd: &str,
    arg: &str,
    u: users::UserRow,
) -> Result<Option<String>, String> {
    let lang = c.lang;
    Ok(Some(match cmd {
        "unbind" => {
            let id = u.id;
            state
                .db(move |db| Ok(store::set_user(db, id, 0)?))
                .await
                .map_err(|e| e.to_string())?;
            render(lang, Msg::Unbound, &[Arg::Bold(&u.username)])
        }
        "balance" => render(
            lang,
            Msg::Balance,
            &[
                Arg::Bold(&u.username),
                Arg::Text(&show_quota(state, u.quota)),
                Arg::Text(&show_quota(state, u.used_quota)),
                Arg::Text(&u.request_count.to_string()),
            ],
        ),
        "recharge" if arg.is_empty() => {
            state
                .telegram
                .pending
                .insert(c.id, (Pending::Code, Instant::now()));
            c.text(Msg::AskCode)
        }
        "recharge" => recharge(state, lang, &u, arg).await,
        "apikey" => {
            let (text, markup) = key_page(state, lang, u.id, 1)
                .await
                .map_err(|e| e.to_string())?;
            c.api.send(c.id, &text, Some(markup)).await?;
            return Ok(None);
        }
        "aff" => {
            let code = u.aff_code.clone().unwrap_or_default();
            let server = BotConfig::read(state).server;
            if server.is_empty() {
                render(lang, Msg::InviteCode, &[Arg::Code(&code)])
            } else {
                let link = format!("{server}/register?aff={code}");
                render(lang, Msg::InviteLink, &[Arg::Code(&link)])
            }
        }
        other => return reply(state, c, other, arg).await,
    }))
}

/// Redeems code `arg` for `u`: what was credited, or why not.
async fn recharge(state: &AppState, lang: Lang, u: &users::UserRow, arg: &str) -> String {
    match crate::routes::redemptions::redeem_for(state, u.id, &u.username, arg).await {
        Ok(r) => render(
            lang,
            Msg::ToppedUp,
            &[
                Arg::Text(&show_quota(state, r.credited)),
                Arg::Text(&show_quota(state, r.balance)),
            ],
        ),
        Err(e) if e.code == "invalid_redemption_code" => render(lang, Msg::CodeInvalid, &[]),
        Err(e) => render(lang, Msg::NotToppedUp, &[Arg::Text(&e.message)]),
    }
}

async fn help(state: &AppState, lang: Lang) -> String {
    let menus = state
        .db(|c| Ok(store::all_menus(c)?))
        .await
        .unwrap_or_default();
    let system = state.settings.site().system_name.clone();
    let mut text = format!("*{}*\n", esc(&system));
    for (c, _) in BUILTIN.iter().filter(|(c, _)| *c != "start") {
        text.push_str(&format!(
            "/{c} – {}\n",
            esc(texts::command_description(lang, c))
        ));
    }
    for m in &menus {
        text.push_str(&format!("/{} – {}\n", esc(&m.command), esc(&m.description)));
    }
    text
}

async fn bind(state: &AppState, lang: Lang, from: i64, token: &str) -> String {
    let hash = sha256_hex(token.trim());
    let r = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                let user = match users::find_by_access_token_hash(c, &hash) {
                    Ok(u) => u,
                    Err(e) if e.is_not_found() => return Ok(Err(Msg::InvalidToken)),
                    Err(e) => return Err(e.into()),
                };
                if user.status != 1 {
                    return Ok(Err(Msg::Disabled));
                }
                match store::set_user(c, user.id, from) {
                    Ok(()) => Ok(Ok(user.username)),
                    Err(switchboard_store::StoreError::Conflict(_)) => Ok(Err(Msg::Taken)),
                    Err(e) => Err::<_, ApiError>(e.into()),
                }
            })
        })
        .await;
    match r {
        Ok(Ok(name)) => render(lang, Msg::Bound, &[Arg::Bold(&name)]),
        Ok(Err(why)) => render(lang, why, &[]),
        Err(e) => {
            tracing::warn!("telegram: binding failed: {e}");
            render(lang, Msg::Failed, &[])
        }
    }
}

/// Page `page` of the user's keys: the text and its buttons.
async fn key_page(
    state: &AppState,
    lang: Lang,
    user_id: i64,
    page: i64,
) -> ApiResult<(String, Value)> {
    let page = page.max(1);
    let list = state
        .db(move |c| {
            Ok(tokens::list(
                c,
                &tokens::TokenFilter {
                    user_id: Some(user_id),
                    keyword: None,
                    status: None,
                },
                "-id",
                PageReq {
                    page,
                    size: KEYS_PER_PAGE,
                },
            )?)
        })
        .await?;
    if list.total == 0 {
        return Ok((
            render(lang, Msg::NoKeys, &[]),
            json!({"inline_keyboard": []}),
        ));
    }
    let pages = (list.total + KEYS_PER_PAGE - 1) / KEYS_PER_PAGE;
    let title = render(
        lang,
        Msg::KeysTitle,
        &[Arg::Text(&page.to_string()), Arg::Text(&pages.to_string())],
    );
    let mut text = format!("*{title}*\n");
    let mut rows: Vec<Value> = Vec::new();
    for t in &list.items {
        use switchboard_domain::token::TokenStatus;
        let status = match switchboard_domain::token::effective_status(
            t.status,
            t.expired_at,
            t.unlimited_quota,
            t.remain_quota,
            now(),
        ) {
            TokenStatus::Enabled => Msg::Enabled,
            TokenStatus::Disabled => Msg::KeyDisabled,
            TokenStatus::Expired => Msg::Expired,
            TokenStatus::Exhausted => Msg::Exhausted,
        };
        let remain = if t.unlimited_quota {
            texts::template(lang, Msg::Unlimited).to_owned()
        } else {
            show_quota(state, t.remain_quota)
        };
        text.push_str(&format!(
            "\n*{}* `{}`\n{} · {}\n",
            esc(&t.name),
            esc_code(&t.key_hint),
            render(lang, status, &[]),
            render(lang, Msg::Remaining, &[Arg::Text(&remain)])
        ));
        rows.push(
            json!([{"text": format!("🔑 {}", t.name), "callback_data": format!("k:{}", t.id)}]),
        );
    }
    let mut nav = Vec::new();
    if page > 1 {
        nav.push(json!({"text": "‹", "callback_data": format!("p:{}", page - 1)}));
    }
    if page < pages {
        nav.push(json!({"text": "›", "callback_data": format!("p:{}", page + 1)}));
    }
    if !nav.is_empty() {
        rows.push(Value::Array(nav));
    }
    Ok((text, json!({"inline_keyboard": rows})))
}

async fn on_button(state: &AppState, api: &BotApi, q: &Value) -> Result<(), String> {
    let from = q["from"]["id"].as_i64().unwrap_or_default();
    let data = q["data"].as_str().unwrap_or_default();
    let chat = q["message"]["chat"]["id"].as_i64().unwrap_or_default();
    let message_id = q["message"]["message_id"].as_i64().unwrap_or_default();
    let lang = Lang::of(q["from"]["language_code"].as_str(), &site_lang(state));
    let _ = api
        .call(
            "answerCallbackQuery",
            &json!({"callback_query_id": q["id"]}),
            Duration::from_secs(10),
        )
        .await;
    let Some(u) = bound_user(state, from).await.map_err(|e| e.to_string())? else {
        return api
            .send(chat, &render(lang, Msg::NotBound, &[]), None)
            .await
            .map(|_| ());
    };
    if let Some(page) = data.strip_prefix("p:").and_then(|p| p.parse::<i64>().ok()) {
        let (text, markup) = key_page(state, lang, u.id, page)
            .await
            .map_err(|e| e.to_string())?;
        api.call(
            "editMessageText",
            &json!({"chat_id": chat, "message_id": message_id, "text": text,
                    "parse_mode": "MarkdownV2", "reply_markup": markup}),
            Duration::from_secs(15),
        )
        .await?;
        return Ok(());
    }
    if let Some(id) = data.strip_prefix("k:").and_then(|p| p.parse::<i64>().ok()) {
        let owner = u.id;
        let t = state
            .db(move |c| match tokens::find(c, id) {
                Ok(t) if t.user_id == owner => Ok(Some(t)),
                Ok(_) => Ok(None),
                Err(e) if e.is_not_found() => Ok(None),
                Err(e) => Err(e.into()),
            })
            .await
            .map_err(|e| e.to_string())?;
        let Some(t) = t else {
            return api
                .send(chat, &render(lang, Msg::KeyGone, &[]), None)
                .await
                .map(|_| ());
        };
        let Some(key) = state.key_box.open(&t.key_ciphertext) else {
            return api
                .send(chat, &render(lang, Msg::KeyUnavailable, &[]), None)
                .await
                .map(|_| ());
        };
        let key = format!("sk-{}", key.trim_start_matches("sk-"));
        let server = BotConfig::read(state).server;
        let links = chat_links(state, &key, &server);
        let markup = json!({"inline_keyboard": links
            .into_iter()
            .map(|(name, url)| json!([{"text": name, "url": url}]))
            .collect::<Vec<_>>()});
        return api
            .send(
                chat,
                &format!("*{}*\n`{}`", esc(&t.name), esc_code(&key)),
                Some(markup),
            )
            .await
            .map(|_| ());
    }
    Ok(())
}

/// The site's chat-client links (`ChatLinks`, those shown) for `key`; Telegram's buttons open
/// only http(s) addresses.
fn chat_links(state: &AppState, key: &str, server: &str) -> Vec<(String, String)> {
    let links: Value = state.settings.site().chat_links.clone().unwrap_or_default();
    let server_enc: String = url::form_urlencoded::byte_serialize(server.as_bytes()).collect();
    links
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|l| l["show"].as_bool() != Some(false))
                .filter_map(|l| {
                    let name = l["name"].as_str()?;
                    let url = l["url"].as_str()?;
                    if !(url.starts_with("https://") || url.starts_with("http://"))
                        || server.is_empty()
                    {
                        return None;
                    }
                    Some((
                        name.to_owned(),
                        url.replace("{key}", key).replace("{server}", &server_enc),
                    ))
                })
                .take(8)
                .collect()
        })
        .unwrap_or_default()
}

/// The runner's lease: taken or renewed for `holder`.
async fn hold_lease(state: &AppState, holder: &str) -> bool {
    crate::jobs::acquire(
        state,
        LEASE,
        holder,
        LEASE_TTL_SECS,
        crate::jobs::Lease::Held,
    )
    .await
    .unwrap_or(false)
}

/// One step of the runner on this node: with the lease, registers the webhook (webhook mode)
/// or polls once (polling mode). `offset` is the next update to ask for; `registered` the
/// configuration whose webhook was last registered.
pub async fn run_once(
    state: &AppState,
    holder: &str,
    offset: &mut i64,
    registered: &mut Option<BotConfig>,
    poll_timeout: u64,
) -> Duration {
    let cfg = BotConfig::read(state);
    let bot = &state.telegram;
    if cfg.mode() == Mode::Off {
        bot.running.store(false, Ordering::Relaxed);
        *registered = None;
        return Duration::from_secs(5);
    }
    if !hold_lease(state, holder).await {
        bot.running.store(false, Ordering::Relaxed);
        return Duration::from_secs(15);
    }
    let api = match BotApi::new(state, &cfg.token) {
        Ok(a) => a,
        Err(e) => {
            bot.set_error(&e.to_string());
            return Duration::from_secs(15);
        }
    };
    if registered.as_ref() != Some(&cfg) {
        // The configuration changed (or this node just took over): who is the bot, and where
        // do its updates go.
        match api.call("getMe", &json!({}), Duration::from_secs(15)).await {
            Ok(me) => bot.set_username(me["username"].as_str().unwrap_or_default()),
            Err(e) => {
                tracing::warn!("telegram: {e}");
                bot.set_error(&e);
                bot.running.store(false, Ordering::Relaxed);
                return Duration::from_secs(30);
            }
        }
        let r = if cfg.mode() == Mode::Webhook {
            api.call(
                "setWebhook",
                &json!({"url": cfg.webhook_url(), "secret_token": cfg.webhook_secret,
                        "allowed_updates": ["message", "callback_query"]}),
                Duration::from_secs(15),
            )
            .await
        } else {
            api.call("deleteWebhook", &json!({}), Duration::from_secs(15))
                .await
        };
        if let Err(e) = r {
            tracing::warn!("telegram: {e}");
            bot.set_error(&e);
            bot.running.store(false, Ordering::Relaxed);
            return Duration::from_secs(30);
        }
        tracing::info!(mode = cfg.mode().name(), "telegram bot started");
        bot.set_error("");
        *registered = Some(cfg.clone());
    }
    bot.running.store(true, Ordering::Relaxed);
    if cfg.mode() == Mode::Webhook {
        return Duration::from_secs(20);
    }
    let started = Instant::now();
    let updates = api
        .call(
            "getUpdates",
            &json!({"offset": *offset, "timeout": poll_timeout,
                    "allowed_updates": ["message", "callback_query"]}),
            Duration::from_secs(poll_timeout + 10),
        )
        .await;
    match updates {
        Ok(Value::Array(list)) => {
            for u in &list {
                if let Some(id) = u["update_id"].as_i64() {
                    *offset = (*offset).max(id + 1);
                }
                handle_update(state, &api, u).await;
            }
            if list.is_empty() && started.elapsed() < Duration::from_secs(1) {
                // A server that does not hold the call open: do not spin.
                return Duration::from_secs(1);
            }
            Duration::ZERO
        }
        Ok(_) => Duration::from_secs(1),
        Err(e) => {
            tracing::warn!("telegram: {e}");
            bot.set_error(&e);
            Duration::from_secs(5)
        }
    }
}

/// Runs the bot on this node for as long as the actix system runs (it idles without a token or
/// while another node holds the lease).
pub fn spawn_runner(state: actix_web::web::Data<AppState>, holder: String) {
    actix_web::rt::spawn(async move {
        let mut offset = 0;
        let mut registered = None;
        loop {
            let wait = run_once(
                &state,
                &holder,
                &mut offset,
                &mut registered,
                POLL_TIMEOUT_SECS,
            )
            .await;
            if !wait.is_zero() {
                actix_web::rt::time::sleep(wait).await;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_v2_is_escaped() {
        assert_eq!(
            esc("a_b*c[d](e)~`>#+-=|{}.!\\"),
            "a\\_b\\*c\\[d\\]\\(e\\)\\~\\`\\>\\#\\+\\-\\=\\|\\{\\}\\.\\!\\\\"
        );
        assert_eq!(esc("plain 中文"), "plain 中文");
        assert_eq!(esc_code("a`b\\c_d"), "a\\`b\\\\c_d");
    }

    #[test]
    fn commands_are_parsed() {
        assert_eq!(
            parse_command("/bind abc"),
            Some(("bind".into(), "abc".into()))
        );
        assert_eq!(
            parse_command("/Balance@my_bot"),
            Some(("balance".into(), String::new()))
        );
        assert_eq!(
            parse_command("  /recharge   CODE-1 "),
            Some(("recharge".into(), "CODE-1".into()))
        );
        assert_eq!(parse_command("hello"), None);
        assert_eq!(parse_command("/"), None);
    }

    #[test]
    fn tokens_are_kept_out_of_errors() {
        assert_eq!(
            without_token(
                "error sending request for url (https://api.telegram.org/bot123:ABC/getMe)"
            ),
            "error sending request for url (https://api.telegram.org/bot<token>/getMe)"
        );
        assert_eq!(without_token("no url"), "no url");
    }

    #[test]
    fn the_mode_follows_the_settings() {
        let c = |t: &str, s: &str, a: &str| BotConfig {
            token: t.into(),
            webhook_secret: s.into(),
            server: a.into(),
        };
        assert_eq!(c("", "s", "https://x").mode(), Mode::Off);
        assert_eq!(c("1:a", "s", "https://x").mode(), Mode::Webhook);
        assert_eq!(c("1:a", "", "https://x").mode(), Mode::Polling);
        assert_eq!(
            c("1:a", "s", "http://x").mode(),
            Mode::Polling,
            "Telegram calls https only"
        );
    }
}
