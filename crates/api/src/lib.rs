//! The Switchboard HTTP application: management API under `/api`, the relay (added by the relay
//! issue) and the console's static files with SPA fallback.

pub mod at_rest;
pub mod auth;
pub mod bootstrap;
pub mod cluster;
pub mod coherence;
pub mod crypto;
pub mod csrf;
pub mod error;
pub mod extract;
pub mod headers;
pub mod invoice_pdf;
pub mod jobs;
pub mod limiter;
pub mod log_buffer;
pub mod mail;
pub mod metrics;
pub mod oauth;
pub mod observe;
pub mod payment;
pub mod relay;
pub mod routes;
pub mod settings;
pub mod spa;
pub mod telegram;
pub mod turnstile;

use crate::error::{ApiError, ApiResult};
use crate::limiter::{IpLimiter, Limit};
use crate::settings::Settings;
use actix_web::web;
use switchboard_store::{Backend, DbConn, Pool};

/// Settings of the HTTP layer that come from the environment (not from the options table).
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// The server secret: key for session-id hashing and, through derived keys, for sealing
    /// API keys, channel keys and secret settings at rest.
    pub session_secret: Vec<u8>,
    /// Earlier server secrets (`SESSION_SECRET_PREVIOUS`): values sealed under them are still
    /// opened, and start-up re-seals them under `session_secret`.
    pub previous_secrets: Vec<Vec<u8>>,
    pub bcrypt_cost: u32,
    pub session_ttl_secs: i64,
    /// Mark the session cookie `Secure` (serve over HTTPS).
    pub secure_cookie: bool,
    /// The reverse proxies whose forwarding headers (`X-Forwarded-For`, `Forwarded`,
    /// `X-Real-IP`) are believed (`TRUSTED_PROXIES`, plus loopback and the private ranges with
    /// `TRUST_PROXY_HEADERS=true`). Empty: the peer address is the client.
    pub trusted_proxies: switchboard_domain::token::IpAllowList,
    pub max_body_bytes: usize,
    /// Largest relay (`/v1`) request body (images and audio uploads).
    pub relay_body_bytes: usize,
    /// Per-IP limit for every `/api` request.
    pub api_limit: Limit,
    /// Per-IP limit for login, registration, verification and password reset.
    pub critical_limit: Limit,
    /// Where Turnstile tokens are verified ([`turnstile::SITEVERIFY_URL`]; tests point it at a
    /// local mock).
    pub turnstile_verify_url: String,
    /// Where GitHub and Lark live (tests point them at local fakes).
    pub oauth: oauth::OAuthEndpoints,
    /// Stripe's API origin ([`payment::STRIPE_API_URL`]; tests point it at a local fake).
    pub stripe_api_url: String,
    /// Alipay's gateway ([`payment::alipay::ALIPAY_GATEWAY_URL`]; tests point it at a fake).
    pub alipay_gateway_url: String,
    /// WeChat Pay's API origin ([`payment::wxpay::WXPAY_API_URL`]; tests point it at a fake).
    pub wxpay_api_url: String,
    /// The Telegram Bot API's origin ([`telegram::TELEGRAM_API_URL`]; tests point it at a fake).
    pub telegram_api_url: String,
    /// A proxy for the Bot API (`TELEGRAM_PROXY`), where Telegram is not reachable directly.
    pub telegram_proxy: Option<String>,
    /// When set, `/metrics` needs `Authorization: Bearer <token>` (`METRICS_TOKEN`).
    pub metrics_token: Option<String>,
}

impl ApiConfig {
    /// Defaults suitable for tests: cheap bcrypt, generous limits, random secret.
    pub fn for_tests() -> Self {
        ApiConfig {
            session_secret: auth::random_string(32).into_bytes(),
            previous_secrets: Vec::new(),
            bcrypt_cost: 4,
            session_ttl_secs: 7 * 24 * 3600,
            secure_cookie: false,
            trusted_proxies: Default::default(),
            max_body_bytes: 1 << 20,
            relay_body_bytes: 32 << 20,
            api_limit: Limit {
                requests: 0,
                window: std::time::Duration::from_secs(60),
            },
            critical_limit: Limit {
                requests: 0,
                window: std::time::Duration::from_secs(60),
            },
            turnstile_verify_url: turnstile::SITEVERIFY_URL.to_owned(),
            oauth: oauth::OAuthEndpoints::default(),
            stripe_api_url: payment::STRIPE_API_URL.to_owned(),
            alipay_gateway_url: payment::alipay::ALIPAY_GATEWAY_URL.to_owned(),
            wxpay_api_url: payment::wxpay::WXPAY_API_URL.to_owned(),
            telegram_api_url: telegram::TELEGRAM_API_URL.to_owned(),
            telegram_proxy: None,
            metrics_token: None,
        }
    }
}

pub struct AppState {
    pub pool: Pool,
    /// The consume-log writer's own connection (a pool of one), when the node has one: see
    /// [`AppState::ledger_pool`].
    ledger_writer: Option<Pool>,
    pub backend: Backend,
    pub config: ApiConfig,
    pub settings: Settings,
    /// Orders overlapping reloads of `settings` (see [`relay::Reloads`]).
    pub settings_reloads: relay::Reloads,
    pub api_limiter: IpLimiter,
    pub critical_limiter: IpLimiter,
    /// Unix seconds when this process started (`/api/status` start_time).
    pub start_time: i64,
    /// bcrypt hash of a random string, verified for unknown login names (equal timing).
    pub dummy_hash: String,
    /// Seals API keys at rest.
    pub key_box: crypto::KeyBox,
    /// Seals channel keys and secret settings at rest.
    pub secret_box: crypto::SecretBox,
    /// Stored secrets found unreadable and already logged.
    pub unreadable: at_rest::Reported,
    /// Everything the relay path keeps in memory.
    pub relay: relay::RelayState,
    /// The Telegram bot's state on this node.
    pub telegram: telegram::BotState,
    /// Request metrics of this node (`/metrics`).
    pub metrics: metrics::Metrics,
}

impl AppState {
    pub fn new(pool: Pool, backend: Backend, config: ApiConfig) -> ApiResult<Self> {
        let dummy_hash = auth::hash_password(&auth::random_string(24), config.bcrypt_cost)?;
        Ok(AppState {
            key_box: crypto::KeyBox::with_previous(
                &config.session_secret,
                &config.previous_secrets,
            ),
            secret_box: crypto::SecretBox::new(&config.session_secret, &config.previous_secrets),
            unreadable: at_rest::Reported::default(),
            relay: relay::RelayState::default(),
            telegram: telegram::BotState::default(),
            metrics: metrics::Metrics::default(),
            pool,
            ledger_writer: None,
            backend,
            api_limiter: IpLimiter::new(config.api_limit),
            critical_limiter: IpLimiter::new(config.critical_limit),
            config,
            settings: Settings::default(),
            settings_reloads: relay::Reloads::default(),
            start_time: switchboard_store::now(),
            dummy_hash,
        })
    }

    /// Where the ledger's flush takes its connection: the writer's own (opened by
    /// [`Self::open_ledger_writer`], which the server calls when `SQL_MAX_OPEN_CONNS` is 2 or
    /// more), else the shared pool.
    ///
    /// On its own connection the flush never waits for one behind the API's queries, and only
    /// that connection prepares the writer's multi-row statements and fills its page cache with
    /// the log table's pages. Taken from the shared pool, each flush got whichever connection
    /// was idle: every connection the pool had opened came to hold those statements and pages,
    /// in the arena of whichever blocking thread ran it, and the node's memory rose each time
    /// the pool opened one more (bench/README.md, entry 18).
    pub fn ledger_pool(&self) -> &Pool {
        self.ledger_writer.as_ref().unwrap_or(&self.pool)
    }

    /// Opens the consume-log writer's own connection on `dsn` (see [`Self::ledger_pool`]).
    pub fn open_ledger_writer(&mut self, dsn: &str) -> switchboard_store::StoreResult<()> {
        let (writer, _) = switchboard_store::conn::connect(dsn, 1)?;
        self.ledger_writer = Some(writer);
        Ok(())
    }

    /// Every pool this node's database connections come from (for the gauges of `/metrics`).
    pub fn pools(&self) -> impl Iterator<Item = &Pool> {
        std::iter::once(&self.pool).chain(self.ledger_writer.as_ref())
    }

    /// Runs blocking database work on the blocking pool, never on an actix worker thread.
    pub async fn db<T, F>(&self, f: F) -> ApiResult<T>
    where
        F: FnOnce(&mut DbConn) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let pool = self.pool.clone();
        // Log lines of the blocking work carry the request's id too.
        let span = tracing::Span::current();
        web::block(move || {
            let _entered = span.enter();
            let mut conn = pool.get().map_err(ApiError::unavailable)?;
            f(&mut conn)
        })
        .await
        .map_err(ApiError::internal)?
    }

    /// Applies settings already written to the database to the in-memory snapshot, in the same
    /// order as the reloads ([`relay::Reloads`]): a reload that began before this (and may
    /// have read the database before the write) can no longer put the old values back when it
    /// finishes after it.
    pub fn settings_written(&self, apply: impl FnOnce(&Settings)) {
        let ticket = self.settings_reloads.begin();
        self.settings_reloads.keep(ticket, || apply(&self.settings));
    }

    /// Reloads every setting from the database into the in-memory snapshot, secret settings
    /// opened (a secret no known server secret opens is left out, as if unset, and logged).
    pub async fn reload_settings(&self) -> ApiResult<()> {
        let ticket = self.settings_reloads.begin();
        let rows = self.db(|c| Ok(switchboard_store::options::all(c)?)).await?;
        let mut values = std::collections::HashMap::with_capacity(rows.len());
        for (key, value) in rows {
            if !at_rest::is_secret_option(&key) {
                values.insert(key, value);
                continue;
            }
            match self.secret_box.open(&value) {
                Ok(plain) => {
                    values.insert(key, plain);
                }
                Err(e) => {
                    if self
                        .unreadable
                        .first_time(&format!("setting {key}"), &value)
                    {
                        tracing::error!(setting = %key, "secret setting treated as unset: it is {e}");
                    }
                }
            }
        }
        self.settings_reloads
            .keep(ticket, || self.settings.replace_all(values));
        Ok(())
    }

    pub fn view(&self) -> settings::Snapshot {
        self.settings.snapshot()
    }
}

/// Registers every route of the application: `/api` (management), `/v1` (relay), then the console.
pub fn configure(cfg: &mut web::ServiceConfig) {
    routes::configure(cfg);
}
