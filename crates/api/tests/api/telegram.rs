//! The Telegram bot against a local fake of the Bot API (wiremock) that records every call:
//! updates are delivered through the webhook route (as Telegram does in webhook mode) or
//! handed out by the fake's `getUpdates` (polling), and the bot's answers are read back from
//! the fake's `sendMessage`, `editMessageText`, `setMyCommands`... calls.

use crate::common::{Client, TestApp};
use serde_json::{json, Value};
use switchboard_store::users;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "123456:ABC-def_ghi";
const SECRET: &str = "webhook-secret-1";
/// Telegram user ids (in private chats the chat id is the user id).
const ALICE: i64 = 7_001;
const BOB: i64 = 7_002;

async fn fake_telegram() -> MockServer {
    let tg = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/bot[^/]+/getMe$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"ok": true, "result": {"id": 42, "is_bot": true, "username": "switchboard_bot"}}),
        ))
        .mount(&tg)
        .await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/bot[^/]+/[A-Za-z]+$"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": true, "result": {"message_id": 99}})),
        )
        .mount(&tg)
        .await;
    tg
}

async fn configure(app: &TestApp, secret: &str) {
    for (k, v) in [
        ("TelegramBotToken", TOKEN),
        ("TelegramWebhookSecret", secret),
        ("ServerAddress", "https://sb.example"),
    ] {
        app.root()
            .put("/api/option", json!({"key": k, "value": v}))
            .await
            .ok();
    }
}

/// The calls the bot made to `method`, their bodies, in order.
async fn calls(tg: &MockServer, method: &str) -> Vec<Value> {
    tg.received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == format!("/bot{TOKEN}/{method}"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// The text of the last message the bot sent.
async fn last_text(tg: &MockServer) -> String {
    calls(tg, "sendMessage").await.last().unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Telegram delivers an update to the webhook with `secret`; the answer's status.
async fn deliver(app: &TestApp, secret: &str, update: Value) -> u16 {
    reqwest::Client::new()
        .post(app.url(&format!("/api/telegram/{TOKEN}")))
        .header("X-Telegram-Bot-Api-Secret-Token", secret)
        .json(&update)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn message(from: i64, chat_type: &str, text: &str) -> Value {
    let chat = if chat_type == "private" { from } else { -100 };
    json!({"update_id": 1, "message": {"message_id": 555, "date": 1_800_000_000, "text": text,
           "from": {"id": from, "is_bot": false, "first_name": "A", "language_code": "en"},
           "chat": {"id": chat, "type": chat_type}}})
}

/// Alice says `text` in her private chat with the bot; what the bot answers.
async fn say(app: &TestApp, tg: &MockServer, from: i64, text: &str) -> String {
    assert_eq!(
        deliver(app, SECRET, message(from, "private", text)).await,
        200
    );
    last_text(tg).await
}

async fn access_token(user: &Client) -> String {
    user.post("/api/user/token", json!({}))
        .await
        .ok()
        .as_str()
        .unwrap()
        .to_owned()
}

#[actix_web::test]
async fn the_bot_binds_answers_and_tops_up_through_the_webhook() {
    let tg = fake_telegram().await;
    let uri = tg.uri();
    let app = TestApp::with_config(|c| c.telegram_api_url = uri).await;
    configure(&app, SECRET).await;

    // Webhook calls without the bot's token or secret are refused and reach nobody.
    assert_eq!(
        deliver(&app, "wrong", message(ALICE, "private", "/help")).await,
        401
    );
    let r = reqwest::Client::new()
        .post(app.url("/api/telegram/999:other"))
        .header("X-Telegram-Bot-Api-Secret-Token", SECRET)
        .json(&message(ALICE, "private", "/help"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    assert!(calls(&tg, "sendMessage").await.is_empty());

    // Help lists the commands (MarkdownV2, escaped).
    let help = say(&app, &tg, ALICE, "/start").await;
    assert!(help.contains("/bind") && help.contains("/apikey"), "{help}");
    assert_eq!(
        calls(&tg, "sendMessage").await[0]["parse_mode"],
        "MarkdownV2"
    );
    assert_eq!(calls(&tg, "sendMessage").await[0]["chat_id"], ALICE);

    // Users are answered in their language, else the site's (zh_CN by default).
    let mut zh = message(BOB, "private", "/balance");
    zh["message"]["from"]["language_code"] = json!("zh-hans");
    deliver(&app, SECRET, zh).await;
    assert!(last_text(&tg).await.contains("尚未绑定"));
    let mut ja = message(BOB, "private", "/balance");
    ja["message"]["from"]["language_code"] = json!("ja");
    deliver(&app, SECRET, ja).await;
    assert!(last_text(&tg).await.contains("連携されていません"));
    let mut none = message(BOB, "private", "/cancel");
    none["message"]["from"]
        .as_object_mut()
        .unwrap()
        .remove("language_code");
    deliver(&app, SECRET, none).await;
    assert_eq!(last_text(&tg).await, "已取消。");

    // Not bound yet; a wrong token is refused.
    assert!(say(&app, &tg, ALICE, "/balance")
        .await
        .contains("not bound"));
    assert!(say(&app, &tg, ALICE, "/bind not-a-token")
        .await
        .contains("not valid"));

    // Binding with the account's access token, sent after /bind; the message is deleted.
    let (alice, alice_id) = app.user("alice").await;
    let token = access_token(&alice).await;
    assert!(say(&app, &tg, ALICE, "/bind")
        .await
        .contains("access token"));
    let bound = say(&app, &tg, ALICE, &token).await;
    assert!(bound.contains("Bound to *alice*"), "{bound}");
    let deleted = calls(&tg, "deleteMessage").await;
    assert_eq!(
        deleted.last().unwrap(),
        &json!({"chat_id": ALICE, "message_id": 555})
    );
    assert_eq!(
        users::find(&mut app.conn(), alice_id).unwrap().telegram_id,
        ALICE
    );
    assert_eq!(alice.get("/api/user/self").await.ok()["telegram_id"], ALICE);

    // Another account cannot take this Telegram account; /cancel ends a waiting step.
    let (bob, bob_id) = app.user("bob").await;
    let bob_token = access_token(&bob).await;
    let r = say(&app, &tg, ALICE, &format!("/bind {bob_token}")).await;
    assert!(r.contains("bound to another account"), "{r}");
    assert_eq!(users::find(&mut app.conn(), bob_id).unwrap().telegram_id, 0);
    say(&app, &tg, BOB, "/bind").await;
    assert!(say(&app, &tg, BOB, "/cancel").await.contains("Cancelled"));
    assert!(
        say(&app, &tg, BOB, &bob_token).await.contains("/help"),
        "no longer waiting"
    );
    assert_eq!(users::find(&mut app.conn(), bob_id).unwrap().telegram_id, 0);

    // Balance, and a top-up with a redemption code: once.
    let balance = say(&app, &tg, ALICE, "/balance").await;
    assert!(
        balance.contains("*alice*") && balance.contains("Balance"),
        "{balance}"
    );
    let codes = app
        .root()
        .post(
            "/api/redemption",
            json!({"name": "tg", "quota": 1_000_000, "count": 1}),
        )
        .await;
    let code = codes.ok()["codes"][0].as_str().unwrap().to_owned();
    let before = users::find(&mut app.conn(), alice_id).unwrap().quota;
    assert!(say(&app, &tg, ALICE, "/recharge")
        .await
        .contains("redemption code"));
    let topped = say(&app, &tg, ALICE, &code).await;
    assert!(topped.contains("Topped up"), "{topped}");
    assert_eq!(
        users::find(&mut app.conn(), alice_id).unwrap().quota,
        before + 1_000_000
    );
    let again = say(&app, &tg, ALICE, &format!("/recharge {code}")).await;
    assert!(again.contains("Not topped up"), "{again}");
    assert_eq!(
        users::find(&mut app.conn(), alice_id).unwrap().quota,
        before + 1_000_000
    );

    // Keys: five per page with buttons; the next page edits the message; a key is shown with
    // its chat-client links.
    let mut ids = Vec::new();
    for i in 0..6 {
        let r = alice
            .post(
                "/api/token",
                json!({"name": format!("key-{i}"), "unlimited_quota": true}),
            )
            .await;
        ids.push(r.ok()["id"].as_i64().unwrap());
    }
    let list = say(&app, &tg, ALICE, "/apikey").await;
    assert!(
        list.contains("1/2") && list.contains("key\\-5") && !list.contains("key\\-0"),
        "{list}"
    );
    let markup =
        calls(&tg, "sendMessage").await.last().unwrap()["reply_markup"]["inline_keyboard"].clone();
    assert_eq!(
        markup.as_array().unwrap().len(),
        6,
        "five keys and the pager: {markup}"
    );
    assert_eq!(markup[5][0]["callback_data"], "p:2");
    let press = |data: String| {
        json!({"update_id": 2, "callback_query": {"id": "cb1", "data": data,
               "from": {"id": ALICE, "is_bot": false, "first_name": "A", "language_code": "en"},
               "message": {"message_id": 77, "date": 1, "chat": {"id": ALICE, "type": "private"}}}})
    };
    assert_eq!(deliver(&app, SECRET, press("p:2".into())).await, 200);
    let edited = calls(&tg, "editMessageText").await;
    let page2 = edited.last().unwrap();
    assert_eq!(page2["message_id"], 77);
    assert!(page2["text"].as_str().unwrap().contains("key\\-0"));
    assert!(!calls(&tg, "answerCallbackQuery").await.is_empty());
    assert_eq!(
        deliver(&app, SECRET, press(format!("k:{}", ids[0]))).await,
        200
    );
    let shown = calls(&tg, "sendMessage").await.last().unwrap().clone();
    let key = alice.get(&format!("/api/token/{}/key", ids[0])).await.ok()["key"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(shown["text"]
        .as_str()
        .unwrap()
        .contains(key.trim_start_matches("sk-")));
    let links = shown["reply_markup"]["inline_keyboard"].to_string();
    assert!(
        links.contains("nextchat") && links.contains(key.trim_start_matches("sk-")),
        "{links}"
    );
    // Bob may not see Alice's key.
    let bob_press = json!({"update_id": 3, "callback_query": {"id": "cb2", "data": format!("k:{}", ids[0]),
        "from": {"id": BOB, "is_bot": false, "first_name": "B", "language_code": "en-US"},
        "message": {"message_id": 78, "date": 1, "chat": {"id": BOB, "type": "private"}}}});
    assert_eq!(deliver(&app, SECRET, bob_press).await, 200);
    assert!(last_text(&tg).await.contains("not bound"));

    // The invite link; account commands refused in a group.
    let aff = say(&app, &tg, ALICE, "/aff").await;
    assert!(aff.contains("https://sb.example/register?aff="), "{aff}");
    assert_eq!(
        deliver(
            &app,
            SECRET,
            message(ALICE, "group", "/balance@switchboard_bot")
        )
        .await,
        200
    );
    assert!(last_text(&tg).await.contains("private chat"));

    // Unbinding in Telegram, binding again, unbinding from the console.
    assert!(say(&app, &tg, ALICE, "/unbind").await.contains("Unbound"));
    assert_eq!(
        users::find(&mut app.conn(), alice_id).unwrap().telegram_id,
        0
    );
    say(&app, &tg, ALICE, &format!("/bind {token}")).await;
    assert_eq!(
        users::find(&mut app.conn(), alice_id).unwrap().telegram_id,
        ALICE
    );
    let r = alice.delete("/api/user/binding/telegram").await;
    assert_eq!(r.ok()["telegram_id"], 0);
    assert!(say(&app, &tg, ALICE, "/balance")
        .await
        .contains("not bound"));
}

#[actix_web::test]
async fn root_edits_the_menu_and_reload_registers_it() {
    let tg = fake_telegram().await;
    let uri = tg.uri();
    let app = TestApp::with_config(|c| c.telegram_api_url = uri).await;
    let root = app.root();

    // No token: the status says so and a reload is refused.
    let s = root.get("/api/option/telegram/status").await;
    assert_eq!(s.ok()["configured"], false);
    assert_eq!(s.ok()["mode"], "off");
    root.put("/api/option/telegram/reload", json!({}))
        .await
        .err(409, "telegram_not_configured");
    configure(&app, SECRET).await;

    // Validation (spec section 5 and Telegram's rules), the built-ins reserved.
    let entry = |command: &str| {
        json!({"command": command, "description": "Prices", "parse_mode": "HTML",
               "reply_message": "<b>cheap</b>"})
    };
    for bad in ["", "Bad-Cmd", "x".repeat(33).as_str(), "价格"] {
        root.post("/api/option/telegram", entry(bad))
            .await
            .err(400, "telegram_menu_invalid");
    }
    root.post("/api/option/telegram", entry("bind"))
        .await
        .err(409, "telegram_command_taken");
    for (field, value) in [
        ("description", json!("")),
        ("parse_mode", json!("Markdown3")),
        ("reply_message", json!("")),
        ("reply_message", json!("x".repeat(4097))),
    ] {
        let mut b = entry("price");
        b[field] = value;
        root.post("/api/option/telegram", b)
            .await
            .err(400, "telegram_menu_invalid");
    }
    let mut no_mode = entry("price");
    no_mode.as_object_mut().unwrap().remove("parse_mode");
    root.post("/api/option/telegram", no_mode)
        .await
        .err(400, "telegram_menu_invalid");
    root.post("/api/option/telegram", json!({"command": 5}))
        .await
        .err(400, "invalid_field");
    // Administrators and users may not touch it.
    let (admin, _) = app.admin("ops").await;
    assert_eq!(admin.get("/api/option/telegram").await.status, 403);
    assert_eq!(
        admin
            .post("/api/option/telegram", entry("price"))
            .await
            .status,
        403
    );

    // Create (a leading slash dropped), list, edit, duplicate, delete.
    let created = root.post("/api/option/telegram", entry("/price")).await;
    let created = created.ok().clone();
    assert_eq!(created["command"], "price");
    let id = created["id"].as_i64().unwrap();
    root.post("/api/option/telegram", entry("price"))
        .await
        .err(409, "telegram_command_taken");
    let other = root.post("/api/option/telegram", entry("contact")).await;
    let other_id = other.ok()["id"].as_i64().unwrap();
    let list = root.get("/api/option/telegram?keyword=CON").await;
    assert_eq!(list.ok()["total_count"], 1);
    assert_eq!(
        root.get("/api/option/telegram").await.ok()["total_count"],
        2
    );
    let mut edit = entry("contact");
    edit["id"] = json!(id);
    root.put("/api/option/telegram", edit)
        .await
        .err(409, "telegram_command_taken");
    let mut edit = entry("prices");
    edit["id"] = json!(id);
    edit["parse_mode"] = json!("");
    edit["reply_message"] = json!("1 USD = 500000 quota");
    assert_eq!(
        root.put("/api/option/telegram", edit).await.ok()["command"],
        "prices"
    );
    root.delete(&format!("/api/option/telegram/{other_id}"))
        .await
        .ok();
    root.get(&format!("/api/option/telegram/{other_id}"))
        .await
        .err(404, "telegram_menu_not_found");
    let mut gone = entry("gone");
    gone["id"] = json!(other_id);
    root.put("/api/option/telegram", gone)
        .await
        .err(404, "telegram_menu_not_found");

    // The menu changed: a reload is needed; it registers the built-ins and the menu.
    let s = root.get("/api/option/telegram/status").await;
    assert_eq!(
        (
            s.ok()["reload_needed"].clone(),
            s.ok()["mode"].clone(),
            s.ok()["online"].clone()
        ),
        (json!(true), json!("webhook"), json!(true))
    );
    let r = root.put("/api/option/telegram/reload", json!({})).await;
    assert_eq!(r.ok()["commands"], 9, "eight built-ins and /prices");
    let registered = calls(&tg, "setMyCommands").await;
    let commands = registered.last().unwrap()["commands"]
        .as_array()
        .unwrap()
        .clone();
    assert!(commands.contains(&json!({"command": "prices", "description": "Prices"})));
    assert!(
        commands.contains(&json!({"command": "balance", "description": "查询余额"})),
        "built-ins in the site's language: {commands:?}"
    );
    assert!(commands.iter().any(|c| c["command"] == "bind"));
    assert_eq!(
        root.get("/api/option/telegram/status").await.ok()["reload_needed"],
        false
    );

    // The entry answers with its static reply, in its format.
    assert_eq!(
        deliver(&app, SECRET, message(ALICE, "private", "/prices")).await,
        200
    );
    let sent = calls(&tg, "sendMessage").await.last().unwrap().clone();
    assert_eq!(sent["text"], "1 USD = 500000 quota");
    assert!(sent.get("parse_mode").is_none(), "plain text");
    assert!(say(&app, &tg, ALICE, "/nothing")
        .await
        .contains("Unknown command"));
}

#[actix_web::test]
async fn telegram_refusing_the_commands_is_reported() {
    let tg = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/bot[^/]+/setMyCommands$"))
        .respond_with(
            ResponseTemplate::new(401).set_body_json(
                json!({"ok": false, "error_code": 401, "description": "Unauthorized"}),
            ),
        )
        .mount(&tg)
        .await;
    let uri = tg.uri();
    let app = TestApp::with_config(|c| c.telegram_api_url = uri).await;
    configure(&app, SECRET).await;
    let m = app
        .root()
        .put("/api/option/telegram/reload", json!({}))
        .await
        .err(502, "telegram_api_error");
    assert!(m.contains("Unauthorized"), "{m}");
    assert!(!m.contains(TOKEN), "the token is not repeated: {m}");
    let s = app.root().get("/api/option/telegram/status").await;
    assert!(s.ok()["last_error"]
        .as_str()
        .unwrap()
        .contains("Unauthorized"));
}

#[actix_web::test]
async fn without_a_webhook_secret_the_bot_polls_on_one_node() {
    let tg = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/bot[^/]+/getUpdates$"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"ok": true, "result": [
                {"update_id": 500, "message": {"message_id": 1, "date": 1, "text": "/help",
                 "from": {"id": ALICE, "is_bot": false, "first_name": "A"},
                 "chat": {"id": ALICE, "type": "private"}}}
            ]})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&tg)
        .await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/bot[^/]+/getUpdates$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true, "result": []})))
        .with_priority(2)
        .mount(&tg)
        .await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/bot[^/]+/[A-Za-z]+$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"ok": true, "result": {"message_id": 9, "username": "switchboard_bot"}}),
        ))
        .with_priority(5)
        .mount(&tg)
        .await;
    let uri = tg.uri();
    let app = TestApp::with_config(|c| c.telegram_api_url = uri).await;
    configure(&app, "").await;
    let state = &app.state;
    let (mut offset, mut registered) = (0, None);
    switchboard_api::telegram::run_once(state, "node-a", &mut offset, &mut registered, 0).await;
    // Started: who the bot is, no webhook, the update answered and acknowledged by the offset.
    assert!(!calls(&tg, "getMe").await.is_empty());
    assert_eq!(calls(&tg, "deleteWebhook").await.len(), 1);
    assert!(calls(&tg, "setWebhook").await.is_empty());
    assert_eq!(offset, 501);
    assert!(last_text(&tg).await.contains("/bind"));
    switchboard_api::telegram::run_once(state, "node-a", &mut offset, &mut registered, 0).await;
    assert_eq!(
        calls(&tg, "getUpdates").await.last().unwrap()["offset"],
        501
    );
    // A second node does not poll while the first holds the lease.
    let polled = calls(&tg, "getUpdates").await.len();
    let (mut o2, mut r2) = (0, None);
    switchboard_api::telegram::run_once(state, "node-b", &mut o2, &mut r2, 0).await;
    assert_eq!(calls(&tg, "getUpdates").await.len(), polled);
    let s = app.root().get("/api/option/telegram/status").await;
    assert_eq!(
        (
            s.ok()["mode"].clone(),
            s.ok()["online"].clone(),
            s.ok()["username"].clone()
        ),
        (json!("polling"), json!(false), json!("switchboard_bot"))
    );
    // Webhook calls are refused while polling.
    assert_eq!(
        deliver(&app, "", message(ALICE, "private", "/help")).await,
        404
    );

    // With a secret, the runner registers the webhook at the site's address instead.
    configure(&app, SECRET).await;
    switchboard_api::telegram::run_once(state, "node-a", &mut offset, &mut registered, 0).await;
    let hooks = calls(&tg, "setWebhook").await;
    assert_eq!(
        (hooks[0]["url"].clone(), hooks[0]["secret_token"].clone()),
        (
            json!(format!("https://sb.example/api/telegram/{TOKEN}")),
            json!(SECRET)
        )
    );
}

#[actix_web::test]
async fn a_busy_bot_is_not_rate_limited_like_a_browser() {
    let tg = fake_telegram().await;
    let uri = tg.uri();
    let app = TestApp::with_config(|c| {
        c.telegram_api_url = uri;
        c.api_limit = switchboard_api::limiter::Limit {
            requests: 40,
            window: std::time::Duration::from_secs(60),
        };
    })
    .await;
    configure(&app, SECRET).await;
    // Far more updates than the per-address limit, all from one address (Telegram's).
    for _ in 0..60 {
        assert_eq!(
            deliver(&app, SECRET, message(ALICE, "private", "/help")).await,
            200
        );
    }
    assert_eq!(calls(&tg, "sendMessage").await.len(), 60);
    // The rest of /api is still limited for that address.
    let mut statuses = Vec::new();
    for _ in 0..60 {
        statuses.push(app.client().get("/api/status").await.status);
    }
    assert!(statuses.contains(&429), "{statuses:?}");
}
