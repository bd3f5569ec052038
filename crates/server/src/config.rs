//! Configuration from environment variables (one-api names where they exist), each mirrored by a
//! `--flag`. Invalid values stop start-up with a message naming the variable.

use clap::Parser;
use std::path::PathBuf;

#[derive(Debug, Clone, Parser)]
#[command(
    name = "switchboard",
    version,
    about = "Switchboard: an AI-model API gateway with a management console"
)]
pub struct Config {
    /// Port to listen on.
    #[arg(long, env = "PORT", value_name = "PORT", default_value_t = 3000)]
    pub port: u16,

    /// Address to bind.
    #[arg(long, env = "HOST", value_name = "HOST", default_value = "0.0.0.0")]
    pub host: String,

    /// Database: postgres://…, mysql://… (or the Go form user:pass@tcp(host:port)/db), or
    /// sqlite://PATH / a file path. Default: a SQLite file under ./data.
    #[arg(
        long,
        env = "SQL_DSN",
        value_name = "SQL_DSN",
        default_value = "sqlite://./data/switchboard.db"
    )]
    pub sql_dsn: String,

    /// Maximum open database connections per node.
    #[arg(long, env = "SQL_MAX_OPEN_CONNS", value_name = "SQL_MAX_OPEN_CONNS", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub sql_max_open_conns: u32,

    /// Redis for state shared between nodes (redis:// or rediss://). Optional.
    #[arg(long, env = "REDIS_CONN_STRING", value_name = "REDIS_CONN_STRING")]
    pub redis_conn_string: Option<String>,

    /// Prefix of every Redis key Switchboard writes (several installations can share one Redis).
    #[arg(
        long,
        env = "REDIS_KEY_PREFIX",
        value_name = "REDIS_KEY_PREFIX",
        default_value = "sb:"
    )]
    pub redis_key_prefix: String,

    /// Secret for session hashing; at least 16 characters. When unset, a random one is kept in
    /// ./data/session_secret (set it explicitly, and identically, on every node of a cluster).
    #[arg(
        long,
        env = "SESSION_SECRET",
        value_name = "SESSION_SECRET",
        hide_env_values = true
    )]
    pub session_secret: Option<String>,

    /// Earlier values of SESSION_SECRET, comma separated (key rotation): channel keys, secret
    /// settings and API keys sealed under one of them are still opened, and re-sealed under
    /// SESSION_SECRET at start. Remove them once the start-up log reports nothing left to re-seal.
    #[arg(
        long,
        env = "SESSION_SECRET_PREVIOUS",
        value_name = "SESSION_SECRET_PREVIOUS",
        hide_env_values = true
    )]
    pub session_secret_previous: Option<String>,

    /// Password for the root user created on first start (otherwise one is generated and printed once).
    #[arg(
        long,
        env = "INITIAL_ROOT_PASSWORD",
        value_name = "INITIAL_ROOT_PASSWORD",
        hide_env_values = true
    )]
    pub initial_root_password: Option<String>,

    /// Access token given to root at start (`Authorization: <token>` on /api); at least 16 characters.
    #[arg(
        long,
        env = "INITIAL_ROOT_ACCESS_TOKEN",
        value_name = "INITIAL_ROOT_ACCESS_TOKEN",
        hide_env_values = true
    )]
    pub initial_root_access_token: Option<String>,

    /// Log filter: error, warn, info, debug, trace, or a tracing directive list.
    #[arg(
        long,
        env = "LOG_LEVEL",
        value_name = "LOG_LEVEL",
        default_value = "info"
    )]
    pub log_level: String,

    /// Log format: text or json.
    #[arg(long, env = "LOG_FORMAT", value_name = "LOG_FORMAT", default_value = "text",
          value_parser = ["text", "json"])]
    pub log_format: String,

    /// Folder with the built console (index.html). Default: ./frontend/dist when it exists.
    #[arg(long, env = "FRONTEND_DIR", value_name = "FRONTEND_DIR")]
    pub frontend_dir: Option<PathBuf>,

    /// Mark the session cookie Secure (when the site is served over HTTPS).
    #[arg(long, env = "SESSION_SECURE_COOKIE", value_name = "SESSION_SECURE_COOKIE", default_value_t = false,
          action = clap::ArgAction::Set)]
    pub session_secure_cookie: bool,

    /// Console session lifetime in hours (sliding).
    #[arg(long, env = "SESSION_TTL_HOURS", value_name = "SESSION_TTL_HOURS", default_value_t = 720,
          value_parser = clap::value_parser!(u32).range(1..=87_600))]
    pub session_ttl_hours: u32,

    /// Trust the forwarding headers (X-Forwarded-For, Forwarded, X-Real-IP) of proxies at
    /// loopback and private addresses (127.0.0.0/8, ::1, 10/8, 172.16/12, 192.168/16, fc00::/7).
    /// Prefer TRUSTED_PROXIES with your proxies' exact addresses.
    #[arg(long, env = "TRUST_PROXY_HEADERS", value_name = "TRUST_PROXY_HEADERS", default_value_t = false,
          action = clap::ArgAction::Set)]
    pub trust_proxy_headers: bool,

    /// Addresses and CIDR blocks of your reverse proxies (comma separated), whose forwarding
    /// headers are believed; the client is the right-most forwarded address that is not one.
    #[arg(long, env = "TRUSTED_PROXIES", value_name = "TRUSTED_PROXIES")]
    pub trusted_proxies: Option<String>,

    /// GitHub's web origin for sign-in (GitHub Enterprise: your server's address).
    #[arg(
        long,
        env = "GITHUB_OAUTH_URL",
        value_name = "GITHUB_OAUTH_URL",
        default_value = "https://github.com"
    )]
    pub github_oauth_url: String,

    /// GitHub's REST API origin (GitHub Enterprise: `https://HOST/api/v3`).
    #[arg(
        long,
        env = "GITHUB_API_URL",
        value_name = "GITHUB_API_URL",
        default_value = "https://api.github.com"
    )]
    pub github_api_url: String,

    /// Lark's authorize page origin (Lark international: https://accounts.larksuite.com).
    #[arg(
        long,
        env = "LARK_ACCOUNTS_URL",
        value_name = "LARK_ACCOUNTS_URL",
        default_value = "https://accounts.feishu.cn"
    )]
    pub lark_accounts_url: String,

    /// Lark's open API origin (Lark international: https://open.larksuite.com).
    #[arg(
        long,
        env = "LARK_OPEN_URL",
        value_name = "LARK_OPEN_URL",
        default_value = "https://open.feishu.cn"
    )]
    pub lark_open_url: String,

    /// Stripe's API origin (Checkout Sessions are created there).
    #[arg(
        long,
        env = "STRIPE_API_URL",
        value_name = "STRIPE_API_URL",
        default_value = "https://api.stripe.com"
    )]
    pub stripe_api_url: String,

    /// Alipay's open API gateway (the sandbox: https://openapi-sandbox.dl.alipaydev.com/gateway.do).
    #[arg(
        long,
        env = "ALIPAY_GATEWAY_URL",
        value_name = "ALIPAY_GATEWAY_URL",
        default_value = "https://openapi.alipay.com/gateway.do"
    )]
    pub alipay_gateway_url: String,

    /// WeChat Pay's API origin (Native orders are placed there).
    #[arg(
        long,
        env = "WXPAY_API_URL",
        value_name = "WXPAY_API_URL",
        default_value = "https://api.mch.weixin.qq.com"
    )]
    pub wxpay_api_url: String,

    /// The Telegram Bot API's origin (a local Bot API server, or a mirror).
    #[arg(
        long,
        env = "TELEGRAM_API_URL",
        value_name = "TELEGRAM_API_URL",
        default_value = "https://api.telegram.org"
    )]
    pub telegram_api_url: String,

    /// A proxy for the Telegram Bot API (http://, https:// or socks5://), where Telegram is not
    /// reachable directly.
    #[arg(long, env = "TELEGRAM_PROXY", value_name = "TELEGRAM_PROXY")]
    pub telegram_proxy: Option<String>,

    /// A bearer token that `/metrics` then requires (unset: open, for a scraper on a private
    /// network).
    #[arg(long, env = "METRICS_TOKEN", value_name = "METRICS_TOKEN")]
    pub metrics_token: Option<String>,

    /// Requests per IP per window on /api (0 disables).
    #[arg(
        long,
        env = "GLOBAL_API_RATE_LIMIT",
        value_name = "GLOBAL_API_RATE_LIMIT",
        default_value_t = 480
    )]
    pub global_api_rate_limit: u32,

    /// Window of GLOBAL_API_RATE_LIMIT in seconds.
    #[arg(long, env = "GLOBAL_API_RATE_LIMIT_DURATION", value_name = "GLOBAL_API_RATE_LIMIT_DURATION",
          default_value_t = 180, value_parser = clap::value_parser!(u64).range(1..))]
    pub global_api_rate_limit_duration: u64,

    /// Login/registration/reset attempts per IP per window (0 disables).
    #[arg(
        long,
        env = "CRITICAL_RATE_LIMIT",
        value_name = "CRITICAL_RATE_LIMIT",
        default_value_t = 20
    )]
    pub critical_rate_limit: u32,

    /// Window of CRITICAL_RATE_LIMIT in seconds.
    #[arg(long, env = "CRITICAL_RATE_LIMIT_DURATION", value_name = "CRITICAL_RATE_LIMIT_DURATION",
          default_value_t = 1200, value_parser = clap::value_parser!(u64).range(1..))]
    pub critical_rate_limit_duration: u64,

    /// bcrypt cost for new password hashes (10 matches the one-api family).
    #[arg(long, env = "BCRYPT_COST", value_name = "BCRYPT_COST", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(4..=16))]
    pub bcrypt_cost: u32,

    /// Largest accepted /api request body in KiB.
    #[arg(long, env = "API_BODY_LIMIT_KB", value_name = "API_BODY_LIMIT_KB", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..=102_400))]
    pub api_body_limit_kb: u32,

    /// Seconds between reloads of the settings from the database (keeps nodes in step).
    #[arg(long, env = "SYNC_FREQUENCY", value_name = "SYNC_FREQUENCY", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub sync_frequency: u64,

    /// Milliseconds between batched writes of settled relay requests (logs, balances, rollups);
    /// a busy node writes a batch as soon as 4096 wait.
    #[arg(long, env = "LEDGER_FLUSH_MS", value_name = "LEDGER_FLUSH_MS", default_value_t = 500,
          value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub ledger_flush_ms: u64,

    /// Directory of this node's own files: the generated session secret, the node id and the
    /// ledger journal (consume records that could not be written at shutdown, written at the
    /// next start). Keep it across restarts (a volume in a container).
    #[arg(
        long,
        env = "DATA_DIR",
        value_name = "DATA_DIR",
        default_value = "./data"
    )]
    pub data_dir: PathBuf,

    /// Seconds that requests in progress (long streams) get to finish after SIGTERM; a stream
    /// still running then is cut and billed for what it delivered.
    #[arg(long, env = "SHUTDOWN_TIMEOUT", value_name = "SHUTDOWN_TIMEOUT", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub shutdown_timeout: u64,

    /// Largest relay (/v1) request body in MiB (image and audio uploads).
    #[arg(long, env = "RELAY_BODY_LIMIT_MB", value_name = "RELAY_BODY_LIMIT_MB", default_value_t = 32,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub relay_body_limit_mb: u32,

    /// HTTP worker threads (default: one per CPU core).
    #[arg(long, env = "WORKERS", value_name = "WORKERS")]
    pub workers: Option<usize>,

    /// A one-off task instead of serving (none: the server starts, as always).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands. Every setting above still applies (SQL_DSN names the target database,
/// SESSION_SECRET seals what is stored sealed).
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Import users, API keys, channels, redemption codes, settings, prices, groups (and, with
    /// --with-logs, logs) from a one-api or one-hub database into SQL_DSN. The source is only
    /// read. Running it again changes nothing (docs/deployment.md, "Migrating from one-api or
    /// one-hub").
    Import(ImportArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// What wrote the source database: one-api or one-hub.
    #[arg(long, value_name = "one-api|one-hub")]
    pub from: switchboard_import::Origin,
    /// The source database: a SQLite file (or sqlite://PATH), postgres://…, mysql://… or the Go
    /// form user:pass@tcp(host:port)/db. Opened read-only.
    #[arg(long, value_name = "SOURCE_DSN")]
    pub dsn: String,
    /// Print what would be imported and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also import the logs (can be long on a big database).
    #[arg(long)]
    pub with_logs: bool,
}

/// The secrets listed in SESSION_SECRET_PREVIOUS (comma separated, trimmed, empty entries
/// skipped).
pub fn previous_secrets(c: &Config) -> Vec<Vec<u8>> {
    c.session_secret_previous
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.as_bytes().to_vec())
        .collect()
}

/// Checks what clap cannot: values whose rules span more than a type.
pub fn validate(c: &Config) -> Result<(), String> {
    switchboard_store::conn::Dsn::parse(&c.sql_dsn).map_err(|e| format!("SQL_DSN: {e}"))?;
    if let Some(r) = c.redis_conn_string.as_deref().filter(|s| !s.is_empty()) {
        let u = url::Url::parse(r).map_err(|e| format!("REDIS_CONN_STRING: not a URL ({e})"))?;
        if !matches!(u.scheme(), "redis" | "rediss" | "redis+unix" | "unix") {
            return Err(format!(
                "REDIS_CONN_STRING: unsupported scheme {:?} (use redis:// or rediss://)",
                u.scheme()
            ));
        }
    }
    if let Some(s) = &c.session_secret {
        if s.len() < 16 {
            return Err("SESSION_SECRET: must be at least 16 characters".into());
        }
    }
    if previous_secrets(c).iter().any(|s| s.len() < 16) {
        return Err(
            "SESSION_SECRET_PREVIOUS: every secret (comma separated) must be at least 16 characters"
                .into(),
        );
    }
    if let Some(p) = c.initial_root_password.as_deref().filter(|p| !p.is_empty()) {
        switchboard_domain::validate::password(p)
            .map_err(|e| format!("INITIAL_ROOT_PASSWORD: {e}"))?;
    }
    if let Some(t) = c
        .initial_root_access_token
        .as_deref()
        .filter(|t| !t.is_empty())
    {
        if t.len() < 16 || t.chars().any(char::is_whitespace) {
            return Err(
                "INITIAL_ROOT_ACCESS_TOKEN: must be at least 16 characters without spaces".into(),
            );
        }
    }
    if let Some(d) = &c.frontend_dir {
        if !d.join("index.html").is_file() {
            return Err(format!(
                "FRONTEND_DIR: {} has no index.html (build the console first)",
                d.display()
            ));
        }
    }
    if let Some(t) = &c.trusted_proxies {
        switchboard_domain::net::trusted_proxies(t, false)
            .map_err(|e| format!("TRUSTED_PROXIES: {e}"))?;
    }
    if c.workers == Some(0) {
        return Err("WORKERS: must be at least 1".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        let mut v = vec!["switchboard"];
        v.extend_from_slice(args);
        let c = Config::try_parse_from(v).map_err(|e| e.to_string())?;
        validate(&c)?;
        Ok(c)
    }

    #[test]
    fn defaults_are_valid() {
        let c = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.port, 3000);
        assert!(c.sql_dsn.starts_with("sqlite://"));
    }

    #[test]
    fn invalid_values_name_the_variable() {
        let e = parse(&["--port", "abc"]).err().unwrap_or_default();
        assert!(e.contains("PORT"), "{e}");
        let e = parse(&["--sql-dsn", "redis://x"]).err().unwrap_or_default();
        assert!(e.starts_with("SQL_DSN:"), "{e}");
        let e = parse(&["--redis-conn-string", "http://x"])
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("REDIS_CONN_STRING:"), "{e}");
        let e = parse(&["--session-secret", "short"])
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("SESSION_SECRET:"), "{e}");
        let e = parse(&["--session-secret-previous", "old-secret-0123456789, short"])
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("SESSION_SECRET_PREVIOUS:"), "{e}");
        let c = parse(&[
            "--session-secret-previous",
            " old-secret-0123456789 ,, older-secret-0123456789",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            previous_secrets(&c),
            vec![
                b"old-secret-0123456789".to_vec(),
                b"older-secret-0123456789".to_vec()
            ]
        );
        let e = parse(&["--initial-root-password", "1234"])
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("INITIAL_ROOT_PASSWORD:"), "{e}");
        let e = parse(&["--trusted-proxies", "10.0.0.1, 10.0.0.0/99"])
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("TRUSTED_PROXIES:"), "{e}");
        assert!(parse(&["--trusted-proxies", "10.0.0.1, fd00::/8"]).is_ok());
        let e = parse(&["--bcrypt-cost", "99"]).err().unwrap_or_default();
        assert!(e.contains("BCRYPT_COST"), "{e}");
        let e = parse(&["--frontend-dir", "/nonexistent"])
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("FRONTEND_DIR:"), "{e}");
    }
}
