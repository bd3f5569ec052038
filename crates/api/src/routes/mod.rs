//! Every route of the application, registered in one place so the whole API reads in one file.

pub mod account;
pub mod analytics;
pub mod channel_ops;
pub mod channels;
pub mod groups;
pub mod invoices;
pub mod logs;
pub mod option;
pub mod pricing;
pub mod redemptions;
pub mod site;
pub mod system;
pub mod tokens;
pub mod users;

use crate::error::ApiError;
use crate::extract::client_ip;
use crate::AppState;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::{from_fn, Next};
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::PathConfig::default().error_handler(|err, _| {
        ApiError::bad_request("invalid_path", format!("invalid path parameter: {err}")).into()
    }))
    .app_data(web::QueryConfig::default().error_handler(|err, _| {
        ApiError::bad_request("invalid_query", format!("invalid query parameter: {err}")).into()
    }))
    .service(
        web::scope("/api")
            .wrap(from_fn(api_rate_limit))
            // Site information (public).
            .route("/status", web::get().to(site::status))
            .route("/notice", web::get().to(site::notice))
            .route("/about", web::get().to(site::about))
            .route("/home_page_content", web::get().to(site::home_page_content))
            .route("/model_ownedby", web::get().to(site::model_owners))
            .route("/user_group_map", web::get().to(site::user_group_map))
            // Accounts (public; per-IP limited).
            .route("/verification", web::get().to(account::send_verification))
            .route("/reset_password", web::get().to(account::send_reset))
            .route("/user/reset", web::post().to(account::confirm_reset))
            .route("/user/register", web::post().to(account::register))
            .route("/user/login", web::post().to(account::login))
            .route("/user/logout", web::get().to(account::logout))
            // The signed-in user.
            .route("/user/self", web::get().to(account::get_self))
            .route("/user/self", web::put().to(account::update_self))
            .route("/user/token", web::get().to(account::generate_access_token))
            // Redeem a code (redemptions.rs; before `/user/{id}`, which would take it).
            .route("/user/topup", web::post().to(redemptions::redeem))
            // Usage logs and the user's dashboard (logs.rs). Registered before the users block:
            // `/user/{id}` would otherwise take `/user/dashboard`.
            .route("/user/dashboard", web::get().to(logs::dashboard))
            .route("/log/self", web::get().to(logs::list_self))
            .route("/log/self/", web::get().to(logs::list_self))
            .route("/log/self/stat", web::get().to(logs::stat_self))
            .route("/log/stat", web::get().to(logs::stat_all))
            .route("/log", web::get().to(logs::list_all))
            .route("/log/", web::get().to(logs::list_all))
            .route("/log", web::delete().to(logs::delete_before))
            .route("/log/", web::delete().to(logs::delete_before))
            // Monthly invoices (invoices.rs): the user's own, before `/user/{id}`.
            .route("/user/invoice", web::get().to(invoices::list_self))
            .route("/user/invoice/detail", web::get().to(invoices::detail_self))
            .route("/user/invoice/pdf", web::get().to(invoices::pdf_self))
            // User administration (admin).
            .route("/user", web::get().to(users::list))
            .route("/user/", web::get().to(users::list))
            .route("/user", web::post().to(users::create))
            .route("/user", web::put().to(users::update))
            .route("/user/manage", web::post().to(users::manage))
            .route("/user/quota/{id}", web::post().to(users::change_quota))
            .route("/user/{id}", web::get().to(users::get))
            .route("/user/{id}", web::delete().to(users::delete))
            // API keys (the signed-in user's own; admins search all).
            .route("/token", web::get().to(tokens::list))
            .route("/token/", web::get().to(tokens::list))
            .route("/token", web::post().to(tokens::create))
            .route("/token/", web::post().to(tokens::create))
            .route("/token", web::put().to(tokens::update))
            .route("/token/", web::put().to(tokens::update))
            .route("/token/search", web::get().to(tokens::admin_search))
            .route("/token/playground", web::post().to(tokens::playground))
            .route("/token/{id}", web::get().to(tokens::get))
            .route("/token/{id}/key", web::get().to(tokens::reveal_key))
            .route("/token/{id}", web::delete().to(tokens::delete))
            // Channels (admin; keys to root only).
            .route("/channel", web::get().to(channels::list))
            .route("/channel/", web::get().to(channels::list))
            .route("/channel", web::post().to(channels::create))
            .route("/channel/", web::post().to(channels::create))
            .route("/channel", web::put().to(channels::update))
            .route("/channel/", web::put().to(channels::update))
            .route("/channel/status", web::put().to(channels::set_status))
            // Channel operations (channel_ops.rs; admin): tests, upstream model list and
            // balance, batch and tag operations. Before `/channel/{id}` so literal paths win.
            .route("/channel/test", web::get().to(channel_ops::test_all_route))
            .route("/channel/test/{id}", web::get().to(channel_ops::test_one))
            .route(
                "/channel/fetch_models/{id}",
                web::get().to(channel_ops::fetch_models),
            )
            .route(
                "/channel/update_balance/{id}",
                web::get().to(channel_ops::update_balance),
            )
            .route(
                "/channel/batch_delete",
                web::post().to(channel_ops::batch_delete),
            )
            .route(
                "/channel/disabled",
                web::delete().to(channel_ops::delete_disabled),
            )
            .route(
                "/channel/batch/azure_api",
                web::put().to(channel_ops::batch_azure_api),
            )
            .route(
                "/channel/batch/del_model",
                web::put().to(channel_ops::batch_remove_model),
            )
            .route("/channel/copy/{id}", web::post().to(channel_ops::copy))
            .route("/channel/tags", web::get().to(channel_ops::tags))
            .route("/channel/tag", web::put().to(channel_ops::update_tag))
            .route(
                "/channel/tag/{tag}/disabled",
                web::delete().to(channel_ops::delete_tag_disabled),
            )
            .route("/channel/{id}", web::get().to(channels::get))
            .route("/channel/{id}", web::delete().to(channels::delete))
            // Prices and model owners (read: everyone / users; write: admin).
            .route("/prices", web::get().to(pricing::list))
            .route("/prices", web::post().to(pricing::create))
            .route("/prices", web::put().to(pricing::update))
            .route("/prices/batch", web::post().to(pricing::batch))
            .route("/prices/delete", web::post().to(pricing::delete))
            .route("/prices/warnings", web::get().to(pricing::warnings))
            .route("/prices/sync", web::post().to(pricing::sync))
            .route("/available_model", web::get().to(pricing::available))
            .route("/model_ownedby", web::post().to(pricing::create_owner))
            .route("/model_ownedby", web::put().to(pricing::update_owner))
            .route(
                "/model_ownedby/{id}",
                web::delete().to(pricing::delete_owner),
            )
            // Redemption codes and user groups (admin; redeem is `/user/topup` above).
            // `/redemption/invalid` and `/user_group/status` come before their `{id}` routes.
            .route("/redemption", web::get().to(redemptions::list))
            .route("/redemption/", web::get().to(redemptions::list))
            .route("/redemption", web::post().to(redemptions::create))
            .route("/redemption/", web::post().to(redemptions::create))
            .route("/redemption", web::put().to(redemptions::update))
            .route("/redemption/", web::put().to(redemptions::update))
            .route(
                "/redemption/invalid",
                web::delete().to(redemptions::delete_invalid),
            )
            .route("/redemption/{id}", web::get().to(redemptions::get))
            .route("/redemption/{id}", web::delete().to(redemptions::delete))
            .route("/user_group", web::get().to(groups::list))
            .route("/user_group/", web::get().to(groups::list))
            .route("/user_group", web::post().to(groups::create))
            .route("/user_group/", web::post().to(groups::create))
            .route("/user_group", web::put().to(groups::update))
            .route("/user_group/", web::put().to(groups::update))
            .route("/user_group/status", web::put().to(groups::set_status))
            .route("/user_group/{id}", web::get().to(groups::get))
            .route("/user_group/{id}", web::delete().to(groups::delete))
            // Analytics from the daily rollup (analytics.rs; admin) and the system panel
            // (system.rs): node info (admin) and the in-memory system log (root).
            .route(
                "/analytics/statistics",
                web::get().to(analytics::statistics_route),
            )
            .route("/analytics/period", web::get().to(analytics::period_route))
            .route("/analytics/users", web::get().to(analytics::users_route))
            .route(
                "/analytics/export.csv",
                web::get().to(analytics::export_csv),
            )
            .route("/system/info", web::get().to(system::info))
            .route("/system/log", web::get().to(system::log))
            // Invoice generation (invoices.rs; root). The user's invoices are under `/user/invoice`.
            .route("/invoice/generate", web::post().to(invoices::generate))
            // Settings (root).
            .route("/option", web::get().to(option::list))
            .route("/option", web::put().to(option::update))
            .route("/option/", web::get().to(option::list))
            .route("/option/", web::put().to(option::update))
            .default_service(web::to(api_not_found)),
    )
    .service(relay_scope());
}

/// The OpenAI-compatible relay under `/v1`.
fn relay_scope() -> actix_web::Scope {
    use crate::relay::handler;
    use switchboard_relay::endpoint::Endpoint;
    let mut scope = web::scope("/v1")
        .app_data(web::PayloadConfig::new(64 << 20))
        .route("/models", web::get().to(handler::list_models))
        .route("/models/{model:.+}", web::get().to(handler::get_model));
    for endpoint in Endpoint::ALL {
        let path = endpoint.path().trim_start_matches("/v1");
        scope = scope.route(
            path,
            web::post().to(
                move |state: web::Data<AppState>, req: HttpRequest, body: web::Bytes| async move {
                    if body.len() > state.config.relay_body_bytes {
                        return crate::relay::handler::oai_error(
                            413,
                            format!(
                                "The request body is larger than {} bytes.",
                                state.config.relay_body_bytes
                            ),
                            "invalid_request_error",
                            "request_too_large",
                        );
                    }
                    handler::relay(state, req, body, endpoint).await
                },
            ),
        );
    }
    scope.default_service(web::to(relay_not_found))
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

/// Unknown `/v1` paths answer in OpenAI's error shape.
async fn relay_not_found(req: HttpRequest) -> HttpResponse {
    let body = switchboard_relay::error::OpenAiErrorBody::new(
        format!("Invalid URL ({} {})", req.method(), req.path()),
        "invalid_request_error",
        "not_found",
    );
    HttpResponse::NotFound().json(body)
}

async fn api_rate_limit(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    if let Some(state) = req.app_data::<web::Data<AppState>>() {
        let ip = client_ip(req.request(), state.config.trust_proxy);
        if !state.api_limiter.check(&ip) {
            return Err(too_many_requests().into());
        }
    }
    next.call(req).await
}

pub fn too_many_requests() -> ApiError {
    ApiError::new(
        actix_web::http::StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        "too many requests, please try again later",
    )
}

/// Applies the tight per-IP limit of login, registration, verification and reset.
pub fn check_critical(state: &AppState, req: &HttpRequest) -> Result<(), ApiError> {
    let ip = client_ip(req, state.config.trust_proxy);
    if state.critical_limiter.check(&ip) {
        Ok(())
    } else {
        Err(too_many_requests())
    }
}
