//! Every route of the application, registered in one place so the whole API reads in one file.

pub mod account;
pub mod analytics;
pub mod channel_health;
pub mod channel_ops;
pub mod channels;
pub mod groups;
pub mod health;
pub mod invoices;
pub mod logs;
pub mod oauth;
pub mod openapi;
pub mod option;
pub mod paging;
pub mod payments;
pub mod pricing;
pub mod redemptions;
pub mod site;
pub mod system;
pub mod tasks;
pub mod telegram;
pub mod tokens;
pub mod users;

use crate::error::ApiError;
use crate::extract::client_ip;
use crate::AppState;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::{from_fn, Next};
use actix_web::{web, HttpMessage, HttpRequest, HttpResponse, ResponseError};
use switchboard_domain::ErrorCode;

/// Who may call a route. Enforced by the handler's extractor (`AuthUser`, `AdminUser`,
/// `RootUser`); documented in the OpenAPI document; a test checks that both agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Public,
    User,
    Admin,
    Root,
}

impl Access {
    pub const fn as_str(self) -> &'static str {
        match self {
            Access::Public => "public",
            Access::User => "user",
            Access::Admin => "admin",
            Access::Root => "root",
        }
    }
}

type SchemaFn = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// One documented route of `/api` (see [`api_routes`]).
pub struct RouteDoc {
    /// Lower-case HTTP method.
    pub method: &'static str,
    /// The path under `/api`, with `{param}` placeholders.
    pub path: &'static str,
    pub access: Access,
    pub tag: &'static str,
    pub summary: &'static str,
    /// The handler's name (`module::function`), the operation id.
    pub handler: &'static str,
    pub query: Option<SchemaFn>,
    pub body: Option<SchemaFn>,
}

/// The `/api` routes, in registration order (literal paths before `{id}` ones that would take
/// them). Each line registers the route *and* documents it, so the OpenAPI document
/// (`/api/openapi.json`) cannot name a route the server lacks or miss one it has. Optional
/// parts: `query = Type`, `body = Type` (their JSON Schemas). Every route also answers in its
/// trailing-slash form (`POST /api/user/`, `GET /api/model_ownedby/`), as one-api's router does
/// and scripts written for it call; that form is registered but not documented.
macro_rules! api_routes {
    ($(
        $method:ident $path:literal => $handler:path, $access:ident, $tag:literal, $summary:literal
        $(, query = $query:ty)? $(, body = $body:ty)? ;
    )*) => {
        /// Every documented `/api` route.
        pub fn api_routes() -> Vec<RouteDoc> {
            vec![$(RouteDoc {
                method: stringify!($method),
                path: $path,
                access: Access::$access,
                tag: $tag,
                summary: $summary,
                handler: stringify!($handler),
                query: api_routes!(@schema $($query)?),
                body: api_routes!(@schema $($body)?),
            }),*]
        }

        fn register_api(scope: actix_web::Scope) -> actix_web::Scope {
            scope
                $(
                    .route($path, api_routes!(@gate $access, web::$method().to($handler)))
                    .route(concat!($path, "/"), api_routes!(@gate $access, web::$method().to($handler)))
                )*
        }
    };
    (@gate Public, $route:expr) => { $route };
    (@gate $access:ident, $route:expr) => {
        $route.wrap(from_fn(|req: ServiceRequest, next: Next<BoxBody>| {
            gate(Access::$access, req, next)
        }))
    };
    (@schema) => { None };
    (@schema $t:ty) => {
        Some((|g: &mut schemars::SchemaGenerator| g.subschema_for::<$t>()) as SchemaFn)
    };
}

api_routes! {
    // Site information (public).
    get "/status" => site::status, Public, "site", "Site information: name, logo, footer, version, quota unit, switches";
    get "/notice" => site::notice, Public, "site", "The notice text";
    get "/about" => site::about, Public, "site", "The about page text";
    get "/home_page_content" => site::home_page_content, Public, "site", "The home page content";
    get "/model_ownedby" => site::model_owners, Public, "pricing", "Model owners";
    get "/user_group_map" => site::user_group_map, User, "groups", "The groups the user may use, by symbol";
    get "/openapi.json" => openapi::document, Public, "site", "This OpenAPI document";
    get "/docs" => openapi::page, Public, "site", "A browsable page of this document";
    // Accounts (public; per-IP limited).
    get "/verification" => account::send_verification, Public, "account", "E-mail a registration code", query = account::EmailQuery;
    get "/reset_password" => account::send_reset, Public, "account", "E-mail a password reset link", query = account::EmailQuery;
    post "/user/reset" => account::confirm_reset, Public, "account", "Confirm a reset: sets and returns a new password", body = account::ResetBody;
    post "/user/register" => account::register, Public, "account", "Register", body = account::RegisterBody;
    post "/user/login" => account::login, Public, "account", "Sign in (sets the session cookie)", body = account::LoginBody;
    // Third-party sign-in (public; per-IP limited) and binding.
    get "/oauth/state" => oauth::get_state, Public, "oauth", "A sign-in state for this browser (also set as an HttpOnly cookie)";
    get "/oauth/endpoint" => oauth::endpoint, Public, "oauth", "The authorize URL of a provider (github, oidc, lark) for this browser", query = oauth::EndpointQuery;
    get "/oauth/{provider}" => oauth::callback, Public, "oauth", "Finish a sign-in: binds to the signed-in account (message \"bind\") or signs in", query = oauth::CallbackQuery;
    post "/user/logout" => account::logout, Public, "account", "Sign out (ends the session)";
    get "/user/logout" => account::logout_get, Public, "account", "Sign out, the GET form for access-token callers (browsers: POST)";
    // The signed-in user.
    get "/user/self" => account::get_self, User, "account", "The signed-in user";
    put "/user/self" => account::update_self, User, "account", "Change own name or password", body = account::UpdateSelfBody;
    post "/user/email/code" => account::send_bind_code, User, "account", "E-mail a code that binds a (new) address to the account", body = account::EmailCodeBody;
    post "/user/email/bind" => account::bind_email, User, "account", "Bind the address a code was sent to", body = account::EmailBindBody;
    delete "/user/binding/{provider}" => oauth::unbind, User, "oauth", "Unbind a sign-in provider (github, oidc, lark, wechat) or Telegram from the account";
    post "/user/token" => account::generate_access_token, User, "account", "Generate a new access token (shown once)";
    get "/user/token" => account::generate_access_token_get, User, "account", "Generate a new access token, the GET form for access-token callers (browsers: POST)";
    // Redeem a code (before `/user/{id}`, which would take it).
    post "/user/topup" => redemptions::redeem, User, "redemptions", "Redeem a code", body = redemptions::TopupBody;
    // Online top-up (before `/user/{id}`).
    get "/user/payment" => payments::enabled, User, "payments", "The enabled payment gateways";
    get "/user/order/quote" => payments::quote, User, "payments", "What a top-up costs through a gateway", query = payments::QuoteQuery;
    get "/user/order/status" => payments::order_status, User, "payments", "The state of one of the user's orders", query = payments::StatusQuery;
    post "/user/order" => payments::create_order, User, "payments", "Place a top-up order: where to pay it", body = payments::OrderBody;
    // Usage logs and the user's dashboard (before `/user/{id}`).
    get "/user/dashboard" => logs::dashboard, User, "logs", "The user's dashboard series", query = logs::DashboardQuery;
    get "/log/self" => logs::list_self, User, "logs", "The user's own logs", query = logs::LogQuery;
    get "/log/self/stat" => logs::stat_self, User, "logs", "Statistics of the user's own logs", query = logs::LogQuery;
    get "/log/stat" => logs::stat_all, Admin, "logs", "Statistics of all logs", query = logs::LogQuery;
    get "/log/dead_letters" => logs::dead_letters, Admin, "logs", "Consume records the database refused, parked (newest first)", query = logs::DeadLetterQuery;
    get "/log" => logs::list_all, Admin, "logs", "All logs", query = logs::LogQuery;
    delete "/log" => logs::delete_before, Root, "logs", "Delete logs before a time", query = logs::DeleteQuery;
    // Monthly invoices: the user's own (before `/user/{id}`).
    get "/user/invoice" => invoices::list_self, User, "invoices", "The user's monthly invoices", query = invoices::ListQuery;
    get "/user/invoice/detail" => invoices::detail_self, User, "invoices", "One invoice by month", query = invoices::DateQuery;
    get "/user/invoice/pdf" => invoices::pdf_self, User, "invoices", "One invoice as PDF", query = invoices::DateQuery;
    // User administration (admin).
    get "/user" => users::list, Admin, "users", "Users", query = users::ListQuery;
    post "/user" => users::create, Admin, "users", "Create a user", body = users::CreateBody;
    put "/user" => users::update, Admin, "users", "Update a user", body = users::UpdateBody;
    post "/user/manage" => users::manage, Admin, "users", "Enable, disable, delete, promote or demote a user", body = users::ManageBody;
    post "/user/quota/{id}" => users::change_quota, Admin, "users", "Add to or deduct from a user's balance", body = users::QuotaBody;
    get "/user/{id}" => users::get, Admin, "users", "One user";
    delete "/user/{id}" => users::delete, Admin, "users", "Delete a user";
    // API keys (the signed-in user's own; admins search all).
    get "/token" => tokens::list, User, "tokens", "The user's API keys (masked)", query = tokens::ListQuery;
    post "/token" => tokens::create, User, "tokens", "Create an API key (the full key is in this answer only)", body = tokens::TokenBody;
    put "/token" => tokens::update, User, "tokens", "Update an API key", body = tokens::TokenBody;
    get "/token/search" => tokens::admin_search, Admin, "tokens", "Search every user's keys (masked)", query = tokens::ListQuery;
    post "/token/playground" => tokens::playground, User, "tokens", "The user's playground key (made on first use)";
    get "/token/{id}" => tokens::get, User, "tokens", "One of the user's keys (masked)";
    get "/token/{id}/key" => tokens::reveal_key, User, "tokens", "The full key of one of the user's keys";
    delete "/token/{id}" => tokens::delete, User, "tokens", "Delete one of the user's keys";
    // Channels (admin; keys to root only).
    get "/channel" => channels::list, Admin, "channels", "Channels (keys never listed)", query = channels::ListQuery;
    post "/channel" => channels::create, Admin, "channels", "Create channels (one per key line)", body = channels::ChannelBody;
    put "/channel" => channels::update, Admin, "channels", "Update a channel", body = channels::ChannelBody;
    put "/channel/status" => channels::set_status, Admin, "channels", "Enable or disable a channel", body = channels::StatusBody;
    // Channel operations (before `/channel/{id}` so literal paths win).
    get "/channel/test" => channel_ops::test_all_route, Admin, "channels", "Test every channel";
    get "/channel/test/{id}" => channel_ops::test_one, Admin, "channels", "Test one channel", query = channel_ops::TestQuery;
    get "/channel/fetch_models/{id}" => channel_ops::fetch_models, Admin, "channels", "The upstream's model list";
    get "/channel/update_balance/{id}" => channel_ops::update_balance, Admin, "channels", "Read and store the upstream balance";
    post "/channel/batch_delete" => channel_ops::batch_delete, Admin, "channels", "Delete many channels", body = channel_ops::IdsBody;
    delete "/channel/disabled" => channel_ops::delete_disabled, Admin, "channels", "Delete every disabled channel";
    put "/channel/batch/azure_api" => channel_ops::batch_azure_api, Admin, "channels", "Set the API version of Azure channels", body = channel_ops::BatchValueBody;
    put "/channel/batch/del_model" => channel_ops::batch_remove_model, Admin, "channels", "Remove a model from channels", body = channel_ops::BatchValueBody;
    post "/channel/copy/{id}" => channel_ops::copy, Admin, "channels", "Copy a channel", query = channel_ops::CopyQuery;
    get "/channel/tags" => channel_ops::tags, Admin, "channels", "Channel tags with their counts";
    get "/channel/switches" => channels::switches, Admin, "channels", "The provider switches each channel type supports";
    get "/channel/health" => channel_health::health, Admin, "channels", "This node's circuit breakers and latency per channel and model";
    put "/channel/tag" => channel_ops::update_tag, Admin, "channels", "Edit every channel of a tag", body = channel_ops::TagBody;
    delete "/channel/tag/{tag}/disabled" => channel_ops::delete_tag_disabled, Admin, "channels", "Delete the disabled channels of a tag";
    get "/channel/{id}" => channels::get, Admin, "channels", "One channel (the key for root only)";
    delete "/channel/{id}" => channels::delete, Admin, "channels", "Delete a channel";
    // Prices and model owners (read: everyone / users; write: admin).
    get "/prices" => pricing::list, Public, "pricing", "Every model price";
    post "/prices" => pricing::create, Admin, "pricing", "Create a price", body = pricing::PriceBody;
    put "/prices" => pricing::update, Admin, "pricing", "Update a price", body = pricing::UpdateBody;
    post "/prices/batch" => pricing::batch, Admin, "pricing", "Create or replace many prices", body = pricing::BatchBody;
    post "/prices/delete" => pricing::delete, Admin, "pricing", "Delete prices", body = pricing::DeleteBody;
    get "/prices/warnings" => pricing::warnings, Admin, "pricing", "Unpriced models and prices with an unknown owner";
    post "/prices/sync" => pricing::sync, Admin, "pricing", "Merge a remote price list (add, update or overwrite)", body = pricing::SyncBody;
    get "/available_model" => pricing::available, User, "pricing", "The models the user can call, with prices";
    post "/model_ownedby" => pricing::create_owner, Admin, "pricing", "Create a model owner", body = pricing::OwnerBody;
    put "/model_ownedby" => pricing::update_owner, Admin, "pricing", "Update a model owner", body = pricing::OwnerBody;
    delete "/model_ownedby/{id}" => pricing::delete_owner, Admin, "pricing", "Delete a model owner";
    // Redemption codes and user groups (admin; redeem is `/user/topup`).
    get "/payment" => payments::list, Admin, "payments", "Payment gateways", query = payments::ListQuery;
    post "/payment" => payments::create, Admin, "payments", "Create a payment gateway", body = payments::GatewayBody;
    put "/payment" => payments::update, Admin, "payments", "Update a payment gateway (a blank key keeps the stored one)", body = payments::GatewayBody;
    get "/payment/order" => payments::orders, Admin, "payments", "The order log", query = payments::OrderQuery;
    get "/payment/notify/{uuid}" => payments::notify, Public, "payments", "A gateway reports a payment (answered in the gateway's own format)";
    post "/payment/notify/{uuid}" => payments::notify_post, Public, "payments", "A gateway reports a payment (a POSTed form)";
    get "/payment/{id}" => payments::get, Admin, "payments", "One payment gateway";
    delete "/payment/{id}" => payments::delete, Admin, "payments", "Delete a payment gateway";
    get "/redemption" => redemptions::list, Admin, "redemptions", "Redemption codes", query = redemptions::ListQuery;
    post "/redemption" => redemptions::create, Admin, "redemptions", "Create codes in a batch", body = redemptions::CreateBody;
    put "/redemption" => redemptions::update, Admin, "redemptions", "Update a code", body = redemptions::UpdateBody;
    delete "/redemption/invalid" => redemptions::delete_invalid, Admin, "redemptions", "Delete used and disabled codes";
    get "/redemption/{id}" => redemptions::get, Admin, "redemptions", "One code";
    delete "/redemption/{id}" => redemptions::delete, Admin, "redemptions", "Delete a code";
    get "/user_group" => groups::list, Admin, "groups", "User groups", query = groups::ListQuery;
    post "/user_group" => groups::create, Admin, "groups", "Create a group", body = groups::GroupBody;
    put "/user_group" => groups::update, Admin, "groups", "Update a group", body = groups::GroupBody;
    put "/user_group/status" => groups::set_status, Admin, "groups", "Enable or disable a group", body = groups::StatusBody;
    get "/user_group/{id}" => groups::get, Admin, "groups", "One group";
    delete "/user_group/{id}" => groups::delete, Admin, "groups", "Delete a group";
    // Analytics from the daily rollup, and the system panel.
    get "/analytics/statistics" => analytics::statistics_route, Admin, "analytics", "Totals for a period", query = analytics::PeriodQuery;
    get "/analytics/period" => analytics::period_route, Admin, "analytics", "Series by day for a period", query = analytics::PeriodQuery;
    get "/analytics/users" => analytics::users_route, Admin, "analytics", "Per-user totals for a period", query = analytics::PeriodQuery;
    get "/analytics/export.csv" => analytics::export_csv, Admin, "analytics", "Per-day, per-user CSV for a period", query = analytics::PeriodQuery;
    get "/system/info" => system::info, Admin, "system", "CPU and memory of this node";
    get "/system/log" => system::log, Root, "system", "Recent server log lines", query = system::LogQuery;
    // Async tasks: Midjourney and Suno (the relay itself is under /mj and /suno).
    get "/mj/self" => tasks::list_mj_self, User, "tasks", "The user's Midjourney tasks", query = tasks::TaskQuery;
    get "/mj" => tasks::list_mj_all, Admin, "tasks", "Every Midjourney task", query = tasks::TaskQuery;
    get "/task/self" => tasks::list_self, User, "tasks", "The user's async tasks (Suno by default)", query = tasks::TaskQuery;
    get "/task" => tasks::list_all, Admin, "tasks", "Every async task (Suno by default)", query = tasks::TaskQuery;
    // Invoice generation (root).
    post "/invoice/generate" => invoices::generate, Root, "invoices", "Generate or regenerate a month's invoices", body = invoices::GenerateBody;
    // Settings (administrators; the root-only ones to root alone).
    get "/option" => option::list, Admin, "settings", "Every setting the caller manages (secrets write-only)";
    put "/option" => option::update, Admin, "settings", "Change one setting", body = option::UpdateBody;
    put "/option/batch" => option::update_batch, Admin, "settings", "Change several settings at once (all or none)", body = option::BatchBody;
    // The Telegram bot (root): its menu, status and command registration; Telegram's webhook.
    get "/option/telegram" => telegram::list, Root, "telegram", "The bot's custom menu", query = telegram::ListQuery;
    post "/option/telegram" => telegram::create, Root, "telegram", "Create a menu entry", body = telegram::MenuBody;
    put "/option/telegram" => telegram::update, Root, "telegram", "Update a menu entry", body = telegram::MenuBody;
    put "/option/telegram/reload" => telegram::reload, Root, "telegram", "Register the command list (built-ins and menu) with Telegram";
    get "/option/telegram/status" => telegram::status, Root, "telegram", "The bot's status: webhook (online) or polling (offline), running, reload needed";
    get "/option/telegram/{id}" => telegram::get, Root, "telegram", "One menu entry";
    delete "/option/telegram/{id}" => telegram::delete, Root, "telegram", "Delete a menu entry";
    post "/telegram/{token}" => telegram::webhook, Public, "telegram", "Telegram delivers an update (webhook mode; answered {ok})";
}

/// Runs before the handler (and before its body is read) on every non-public route: resolves
/// the caller, refuses a caller below the route's [`Access`] with 401/403, and leaves the user
/// in the request for the handler's extractor. So the access the table declares is the access
/// enforced, and nobody learns anything about a route's input they may not call.
async fn gate(
    access: Access,
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    // A refusal is answered here (not returned as an error), so that it passes through the
    // outer middleware like any answer (the security headers).
    match admit(access, &req).await {
        Ok(user) => {
            req.extensions_mut().insert(user);
            next.call(req)
                .await
                .map(ServiceResponse::map_into_left_body)
        }
        Err(e) => Ok(req.error_response(e).map_into_right_body()),
    }
}

/// The caller of a route with this access, or the 401/403 that refuses them.
async fn admit(access: Access, req: &ServiceRequest) -> Result<crate::auth::CurrentUser, ApiError> {
    use switchboard_domain::user::Role;
    let user = crate::auth::authenticate(req.request().clone()).await?;
    let allowed = match access {
        Access::Public | Access::User => true,
        Access::Admin => user.role.is_admin(),
        Access::Root => user.role == Role::Root,
    };
    if !allowed {
        let msg = if access == Access::Root {
            crate::auth::ROOT_ONLY
        } else {
            crate::auth::ADMIN_ONLY
        };
        return Err(ApiError::forbidden(ErrorCode::Forbidden, msg));
    }
    Ok(user)
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::PathConfig::default().error_handler(|err, _| {
        ApiError::bad_request(
            ErrorCode::InvalidPath,
            format!("invalid path parameter: {err}"),
        )
        .into()
    }))
    .app_data(web::QueryConfig::default().error_handler(|err, _| {
        ApiError::bad_request(
            ErrorCode::InvalidQuery,
            format!("invalid query parameter: {err}"),
        )
        .into()
    }))
    // The relay first: actix tries an app's services in the order they are registered, each
    // try matching the path against a pattern, and all but a few of the requests are relayed.
    // No other service serves a path under `/v1`, so the order changes no route's answer; a
    // chat request was matched against 13 other patterns before its own (~2,400 instructions,
    // 1.5 % of a relayed request's under bench/instructions.py).
    .service(relay_scope())
    .service(
        register_api(web::scope("/api"))
            .wrap(from_fn(crate::csrf::guard))
            .wrap(from_fn(api_rate_limit))
            .default_service(web::to(api_not_found)),
    )
    // `HEAD /` answers 200 without a body whether or not the console is served (clients such
    // as Claude Code probe the base URL with it). A resource guard, not a route's: another
    // method goes on to the console.
    .service(
        web::resource("/")
            .guard(actix_web::guard::Head())
            .to(|| async { HttpResponse::Ok().finish() }),
    )
    .route("/healthz", web::get().to(health::healthz))
    .route("/readyz", web::get().to(health::readyz))
    .route("/metrics", web::get().to(health::metrics))
    .configure(crate::relay::tasks::configure)
    .service(gemini_scope())
    .service(
        // Anthropic Messages for Anthropic SDK clients (also served as `/v1/messages`); unknown
        // paths answer in Anthropic's error shape.
        web::scope("/claude/v1/messages")
            .app_data(web::PayloadConfig::new(64 << 20))
            .route("", web::post().to(crate::relay::handler::messages))
            .route(
                "/count_tokens",
                web::post().to(crate::relay::handler::count_tokens),
            )
            .default_service(web::to(crate::relay::handler::anthropic_not_found)),
    );
}

/// The OpenAI-compatible relay under `/v1`.
fn relay_scope() -> actix_web::Scope {
    use crate::relay::handler;
    use switchboard_relay::endpoint::Endpoint;
    // The relayed endpoints first (chat completions the first of them), for the same reason as
    // the scope's place among the app's services.
    let mut scope = web::scope("/v1").app_data(web::PayloadConfig::new(64 << 20));
    for endpoint in Endpoint::ALL.into_iter().filter(|e| e.under_v1()) {
        let path = endpoint.path().trim_start_matches("/v1");
        scope = scope.route(
            path,
            // POST only, by a plain comparison: actix's method guard (`web::post()`) records
            // every method it checks in a new list in the request's extensions, for a 405 that
            // a scope with its own default never answers (3 allocations a request). Another
            // method falls through to `relay_not_found`, as it did.
            web::route().guard(actix_web::guard::fn_guard(is_post)).to(
                move |state: web::Data<AppState>, req: HttpRequest, body: web::Bytes| {
                    handler::relay(state, req, body, endpoint)
                },
            ),
        );
    }
    // The one pattern with a variable part last: the router tries resources in order, and a
    // pattern's regular expression allocates its capture slots on every try, also for the
    // chat requests that only passed by.
    scope
        .route("/models", web::get().to(handler::list_models))
        .route("/realtime", web::get().to(crate::relay::realtime::realtime))
        .route(
            "/messages/count_tokens",
            web::post().to(handler::count_tokens),
        )
        .route("/models/{model:.+}", web::get().to(handler::get_model))
        .default_service(web::to(relay_not_found))
}

fn is_post(ctx: &actix_web::guard::GuardContext<'_>) -> bool {
    ctx.head().method == actix_web::http::Method::POST
}

/// Gemini clients under `/gemini/{version}` (`v1beta`, `v1`, ...), errors in Google's shape.
fn gemini_scope() -> actix_web::Scope {
    use crate::relay::gemini;
    web::scope("/gemini/{version}")
        .app_data(web::PayloadConfig::new(64 << 20))
        .route("/models", web::get().to(gemini::gemini_models))
        .route("/models/{target}", web::get().to(gemini::gemini_model))
        .route("/models/{target}", web::post().to(gemini::gemini))
        .default_service(web::to(gemini::gemini_not_found))
}

/// Unknown `/api` paths (and known paths with the wrong method) answer JSON, never the console.
async fn api_not_found(req: HttpRequest) -> HttpResponse {
    ApiError::not_found(format!(
        "no such API route: {} {}",
        req.method(),
        req.path()
    ))
    .error_response()
}

/// Unknown `/v1` paths answer in OpenAI's error shape; those under `/v1/messages` (Anthropic's
/// API) in Anthropic's.
async fn relay_not_found(req: HttpRequest) -> HttpResponse {
    use switchboard_relay::refusal::Protocol;
    let anthropic = req.path() == "/v1/messages" || req.path().starts_with("/v1/messages/");
    let protocol = if anthropic {
        Protocol::Anthropic
    } else {
        Protocol::OpenAi
    };
    crate::relay::edge::refuse(protocol, &crate::relay::handler::path_not_found(&req))
}

async fn api_rate_limit(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    // Telegram's webhook is exempt: every update of a busy bot comes from a few Telegram
    // addresses, and the handler refuses a wrong token or secret before any other work.
    let exempt = req.path().starts_with("/api/telegram/");
    let limited = !exempt
        && req.app_data::<web::Data<AppState>>().is_some_and(|state| {
            let ip = client_ip(req.request(), &state.config.trusted_proxies);
            !state.api_limiter.check(&ip)
        });
    if limited {
        // Answered here (not returned as an error) so that it carries the security headers.
        return Ok(req
            .error_response(too_many_requests())
            .map_into_right_body());
    }
    next.call(req)
        .await
        .map(ServiceResponse::map_into_left_body)
}

pub fn too_many_requests() -> ApiError {
    ApiError::new(
        actix_web::http::StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::RateLimited,
        "too many requests, please try again later",
    )
}

/// Applies the tight per-IP limit of login, registration, verification and reset.
/// This site's public origin, for links that leave it and come back (sign-in redirects, payment
/// returns and notifications): the `ServerAddress` setting without a trailing slash, else the
/// origin this request was made to.
pub fn site_origin(site: &crate::settings::Site, req: &HttpRequest) -> String {
    site.origin().unwrap_or_else(|| {
        let info = req.connection_info();
        format!("{}://{}", info.scheme(), info.host())
    })
}

/// The absolute origin of links in e-mails (a password reset): the `ServerAddress` setting
/// without a trailing slash, else the address this request was made to ([`request_origin`]).
/// `None` when neither gives a usable host.
pub fn mail_origin(
    site: &crate::settings::Site,
    req: &HttpRequest,
    trusted: &switchboard_domain::token::IpAllowList,
) -> Option<String> {
    site.origin().or_else(|| request_origin(req, trusted))
}

/// The origin this request was made to, `scheme://host[:port]`. Forwarding headers
/// (`X-Forwarded-Proto`, `X-Forwarded-Host`) count only from a trusted proxy (`TRUSTED_PROXIES`,
/// as for the client address); otherwise the scheme is the connection's and the host is the
/// `Host` header (or the HTTP/2 authority). A host that is not a host name, IP address or
/// bracketed IPv6 address with an optional port gives `None`, so nothing else lands in a link.
pub fn request_origin(
    req: &HttpRequest,
    trusted: &switchboard_domain::token::IpAllowList,
) -> Option<String> {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let via_proxy = req
        .peer_addr()
        .is_some_and(|peer| trusted.contains(peer.ip()));
    let connection_scheme = if req.app_config().secure() {
        "https"
    } else {
        "http"
    };
    let (scheme, forwarded_host) = if via_proxy {
        let scheme = header("x-forwarded-proto")
            .map(|p| p.to_ascii_lowercase())
            .filter(|p| p == "http" || p == "https")
            .unwrap_or_else(|| connection_scheme.to_owned());
        (scheme, header("x-forwarded-host"))
    } else {
        (connection_scheme.to_owned(), None)
    };
    let host = forwarded_host
        .or_else(|| header("host"))
        .or_else(|| req.uri().authority().map(|a| a.to_string()))?;
    let host_ok = host.len() <= 255
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        && !host.starts_with([':', '.', '-']);
    host_ok.then(|| format!("{scheme}://{}", host.to_ascii_lowercase()))
}

pub fn check_critical(state: &AppState, req: &HttpRequest) -> Result<(), ApiError> {
    let ip = client_ip(req, &state.config.trusted_proxies);
    if state.critical_limiter.check(&ip) {
        Ok(())
    } else {
        Err(too_many_requests())
    }
}
