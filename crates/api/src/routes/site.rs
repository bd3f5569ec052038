//! Site information: status, notice, about, home page, model owners and the group map.

use crate::auth::AuthUser;
use crate::error::{ok, ApiResult};
use crate::settings::Site;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde_json::{json, Map, Value};
use switchboard_domain::html;
use switchboard_store::{model_owners, user_groups};

/// `GET /api/status`: every site-info field the console needs (spec section 3).
pub async fn status(state: web::Data<AppState>) -> HttpResponse {
    let t = state.settings.typed();
    let (o, reg, s) = (&t.site, &t.registration, &t.sign_in);
    let chat_links: Value = o.chat_links.clone().unwrap_or_else(|| json!([]));
    ok(json!({
        "system_name": o.system_name,
        "logo": o.logo,
        // Administrator-written HTML is served cleaned (switchboard_domain::html), whatever
        // is stored (an imported or hand-edited value too).
        "footer_html": html::sanitize(&o.footer),
        "server_address": o.server_address,
        "version": switchboard_domain::VERSION,
        "start_time": state.start_time,
        "language": o.language,
        "quota_per_unit": o.quota_per_unit,
        "display_in_currency": o.display_in_currency,
        "top_up_link": o.top_up_link,
        "payment_min_amount": t.payment.min_amount,
        "chat_link": o.chat_link,
        "chat_links": chat_links,
        "UptimeEnabled": o.uptime_kuma_enabled,
        "UptimeDomain": o.uptime_kuma_url,
        "UptimePageName": o.uptime_kuma_status_page_name,
        "UserInvoiceMonth": o.user_invoice_month,
        "register_enabled": reg.enabled,
        "password_login_enabled": s.password_login,
        "password_register_enabled": reg.password,
        "email_verification": reg.email_verification,
        "github_oauth": s.github.enabled,
        "github_client_id": s.github.client_id.value,
        "oidc_auth": s.oidc.enabled,
        "lark_login": s.lark.enabled,
        "lark_client_id": s.lark.client_id.value,
        "wechat_login": s.wechat.enabled,
        "wechat_qrcode": s.wechat.qrcode_image_url,
        "turnstile_check": s.turnstile.enabled,
        "turnstile_site_key": s.turnstile.site_key,
        "telegram_bot": t.telegram.bot_name,
    }))
}

fn site_text(state: &AppState, text: fn(&Site) -> &str, clean: fn(&str) -> String) -> HttpResponse {
    ok(clean(text(&state.settings.site())))
}

/// `GET /api/notice`: the notice, as cleaned HTML.
pub async fn notice(state: web::Data<AppState>) -> HttpResponse {
    site_text(&state, |s| &s.notice, html::sanitize)
}

/// `GET /api/about`: an `http(s)://` address to frame, or cleaned HTML.
pub async fn about(state: web::Data<AppState>) -> HttpResponse {
    site_text(&state, |s| &s.about, html::page_content)
}

/// `GET /api/home_page_content`: an `http(s)://` address to frame, or cleaned HTML.
pub async fn home_page_content(state: web::Data<AppState>) -> HttpResponse {
    site_text(&state, |s| &s.home_page_content, html::page_content)
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
