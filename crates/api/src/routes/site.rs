//! Site information: status, notice, about, home page, model owners and the group map.

use crate::auth::AuthUser;
use crate::error::{ok, ApiResult};
use crate::settings::View;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde_json::{json, Map, Value};
use switchboard_domain::html;
use switchboard_domain::options::OptionValues;
use switchboard_store::{model_owners, user_groups};

/// `GET /api/status`: every site-info field the console needs (spec section 3).
pub async fn status(state: web::Data<AppState>) -> HttpResponse {
    let snap = state.view();
    let o = View(&snap);
    let chat_links: Value =
        serde_json::from_str(&o.text("ChatLinks")).unwrap_or_else(|_| json!([]));
    ok(json!({
        "system_name": o.text("SystemName"),
        "logo": o.text("Logo"),
        // Administrator-written HTML is served cleaned (switchboard_domain::html), whatever
        // is stored (an imported or hand-edited value too).
        "footer_html": html::sanitize(&o.text("Footer")),
        "server_address": o.text("ServerAddress"),
        "version": switchboard_domain::VERSION,
        "start_time": state.start_time,
        "language": o.text("Language"),
        "quota_per_unit": o.int("QuotaPerUnit"),
        "display_in_currency": o.bool("DisplayInCurrencyEnabled"),
        "top_up_link": o.text("TopUpLink"),
        "payment_min_amount": o.int("PaymentMinAmount"),
        "chat_link": o.text("ChatLink"),
        "chat_links": chat_links,
        "UptimeEnabled": o.bool("UptimeKumaEnabled"),
        "UptimeDomain": o.text("UptimeKumaUrl"),
        "UptimePageName": o.text("UptimeKumaStatusPageName"),
        "UserInvoiceMonth": o.bool("UserInvoiceMonth"),
        "register_enabled": o.bool("RegisterEnabled"),
        "password_login_enabled": o.bool("PasswordLoginEnabled"),
        "password_register_enabled": o.bool("PasswordRegisterEnabled"),
        "email_verification": o.bool("EmailVerificationEnabled"),
        "github_oauth": o.bool("GitHubOAuthEnabled"),
        "github_client_id": o.text("GitHubClientId"),
        "oidc_auth": o.bool("OIDCAuthEnabled"),
        "lark_login": o.bool("LarkAuthEnabled"),
        "lark_client_id": o.text("LarkClientId"),
        "wechat_login": o.bool("WeChatAuthEnabled"),
        "wechat_qrcode": o.text("WeChatAccountQRCodeImageURL"),
        "turnstile_check": o.bool("TurnstileCheckEnabled"),
        "turnstile_site_key": o.text("TurnstileSiteKey"),
        "telegram_bot": o.text("TelegramBotName"),
    }))
}

fn text_option(state: &AppState, key: &str, clean: fn(&str) -> String) -> HttpResponse {
    let snap = state.view();
    ok(clean(&View(&snap).text(key)))
}

/// `GET /api/notice`: the notice, as cleaned HTML.
pub async fn notice(state: web::Data<AppState>) -> HttpResponse {
    text_option(&state, "Notice", html::sanitize)
}

/// `GET /api/about`: an `http(s)://` address to frame, or cleaned HTML.
pub async fn about(state: web::Data<AppState>) -> HttpResponse {
    text_option(&state, "About", html::page_content)
}

/// `GET /api/home_page_content`: an `http(s)://` address to frame, or cleaned HTML.
pub async fn home_page_content(state: web::Data<AppState>) -> HttpResponse {
    text_option(&state, "HomePageContent", html::page_content)
}

/// `GET /api/model_ownedby`: the model owners with their ids and icons.
pub async fn model_owners(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let rows = state.db(|c| Ok(model_owners::list(c)?)).await?;
    let list: Vec<Value> = rows
        .into_iter()
        .map(|r| json!({"id": r.id, "name": r.name, "icon": r.icon}))
        .collect();
    Ok(ok(list))
}

/// `GET /api/user_group_map`: the groups a user may choose for tokens, keyed by symbol: the
/// public groups and the user's own; administrators see every enabled group.
pub async fn user_group_map(
    state: web::Data<AppState>,
    AuthUser(user): AuthUser,
) -> ApiResult<HttpResponse> {
    let rows = state.db(|c| Ok(user_groups::list_enabled(c)?)).await?;
    let mut map = Map::new();
    for g in rows
        .into_iter()
        .filter(|g| g.public || g.symbol == user.group || user.role.is_admin())
    {
        map.insert(
            g.symbol.clone(),
            json!({"id": g.id, "symbol": g.symbol, "name": g.name, "ratio": g.ratio, "api_rate": g.api_rate, "public": g.public}),
        );
    }
    Ok(ok(map))
}
