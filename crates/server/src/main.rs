//! The Switchboard binary: reads configuration, prepares the database, starts the HTTP server
//! (management API, relay and console on one port) and shuts down gracefully on SIGTERM/SIGINT.

mod config;
#[cfg(feature = "otel")]
mod otel;

use actix_web::middleware::Logger;
use actix_web::{web, App, HttpServer};
use clap::Parser;
use config::Config;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use switchboard_api::cluster::{self, Claim, Mode};
use switchboard_api::limiter::Limit;
use switchboard_api::{bootstrap, ApiConfig, AppState};
use tracing_subscriber::EnvFilter;

/// mimalloc: the relay allocates and frees many small buffers per request on two or more
/// threads; glibc's malloc spent ~12 % of the relay's CPU on them (bench/README.md, profile).
/// Built without transparent huge pages (`no_thp`): with them, every touched 2 MiB of a fresh
/// arena counted in full (16 MB more RSS at start).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc v3's `include/mimalloc.h` (the crate exports no name
/// for it; Cargo.lock pins the version).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Freed memory goes back to the OS after 50 ms rather than mimalloc's default 1 s. A purge is
/// only acted on when the thread allocates again, so with the long delay a worker that fell idle
/// after a burst kept its freed pages: idle RSS after the benchmark's warm-up went from ~90 MB
/// to ~35 MB, peak from ~150 MB to ~75 MB, at the same CPU per request (0 ms cost ~15 % more
/// CPU in madvise calls). `MIMALLOC_PURGE_DELAY` in the environment wins.
///
/// glibc's malloc, which only the C libraries use (SQLite above all; Rust's allocations go to
/// mimalloc), keeps one arena: by default it gives each thread that meets contention an arena
/// of its own, and each blocking thread that ran SQLite for the pool kept what SQLite had freed
/// there for itself, so the node's memory rose with every thread that took a turn at the
/// database (bench/README.md, entry 18). SQLite is called from a few blocking threads
/// at a time, so the one arena's lock is rarely contended (the benchmark's CPU a request did not
/// move beyond its noise). `MALLOC_ARENA_MAX` in the environment wins.
#[allow(unsafe_code)]
fn tune_allocator() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets a process-wide option by its index; mimalloc reads it at each purge.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 50) };
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: sets one of glibc's malloc parameters; called before any other thread exists.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
    }
}

/// Runs mimalloc's collection on this worker thread once a second, from the first time it is
/// called on the thread. A freed page is purged (given back to the OS) only when some thread
/// asks the allocator for a fresh page or collects: after a burst, idle workers did neither, so
/// the pages freed at its end (the consume records the log writer had just written, the last
/// connections' buffers) stayed resident until the next burst (bench/README.md, "fifth
/// session": RSS after the load rounds 75-78 MB -> 42-43 MB; the CPU per request did not rise).
#[allow(unsafe_code)]
fn tidy_allocator_on_this_worker() {
    thread_local!(static STARTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if STARTED.replace(true) {
        return;
    }
    actix_web::rt::spawn(async {
        let mut tick = actix_web::rt::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tick.tick().await;
            // SAFETY: collects the calling thread's heap (its full pages too, where the blocks
            // other threads freed wait) and purges the freed pages; no pointer is passed.
            unsafe { libmimalloc_sys::mi_collect(true) };
        }
    });
}

fn main() -> ExitCode {
    tune_allocator();
    let cfg = Config::parse();
    if let Err(msg) = config::validate(&cfg) {
        eprintln!("switchboard: invalid configuration: {msg}");
        return ExitCode::from(2);
    }
    if let Some(config::Command::Import(args)) = &cfg.command {
        return import(&cfg, args);
    }
    let filter = match EnvFilter::try_new(&cfg.log_level) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("switchboard: invalid configuration: LOG_LEVEL: {e}");
            return ExitCode::from(2);
        }
    };
    // The console's system log (`/api/system/log`) sees what stdout sees, through the same filter.
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let json = cfg.log_format == "json";
    // With traces exported (feature `otel` and an OTLP endpoint), the log filter applies to the
    // logs only: spans reach the exporter at info level whatever LOG_LEVEL says.
    #[cfg(feature = "otel")]
    let exporter = otel::Settings::from_env().and_then(|s| match otel::Exporter::start(s) {
        Ok(e) => Some(e),
        Err(e) => {
            eprintln!("switchboard: the trace exporter could not start: {e}");
            None
        }
    });
    #[cfg(feature = "otel")]
    let filter = match &exporter {
        Some(e) => {
            use tracing_subscriber::Layer as _;
            tracing_subscriber::registry()
                .with(log_layers(json).with_filter(filter))
                .with(
                    e.layer()
                        .with_filter(tracing_subscriber::filter::LevelFilter::INFO),
                )
                .init();
            None
        }
        None => Some(filter),
    };
    #[cfg(not(feature = "otel"))]
    let filter = Some(filter);
    if let Some(filter) = filter {
        tracing_subscriber::registry()
            .with(filter)
            .with(log_layers(json))
            .init();
    }
    let ran = actix_web::rt::System::new().block_on(run(cfg));
    #[cfg(feature = "otel")]
    if let Some(e) = exporter {
        e.shutdown();
    }
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("switchboard: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The log's layers: the console's system log (`/api/system/log`) and stdout, as text or JSON.
fn log_layers<S>(json: bool) -> Box<dyn tracing_subscriber::Layer<S> + Send + Sync>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;
    let out = tracing_subscriber::fmt::layer()
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()));
    let out: Box<dyn tracing_subscriber::Layer<S> + Send + Sync> = if json {
        Box::new(out.json())
    } else {
        Box::new(out)
    };
    Box::new(switchboard_api::log_buffer::global().layer().and_then(out))
}

/// `switchboard import`: fills SQL_DSN from a one-api or one-hub database, then prints the
/// report. Exits non-zero when the source cannot be read, the target fails, or a kind of row
/// could not be written as a whole.
fn import(cfg: &Config, args: &config::ImportArgs) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("switchboard import: {msg}");
        ExitCode::FAILURE
    };
    let kept = cfg.data_dir.join("session_secret");
    let secret = if args.dry_run && cfg.session_secret.is_none() && !kept.exists() {
        // Nothing sealed is stored by a dry run: no need to create the secret file.
        switchboard_api::auth::random_string(48).into_bytes()
    } else {
        if cfg.session_secret.is_none() {
            eprintln!(
                "switchboard import: SESSION_SECRET is not set: sealing with the secret kept in {} \
                 (the server must run with the same secret to open what is imported)",
                kept.display()
            );
        }
        match session_secret(cfg) {
            Ok(s) => s,
            Err(e) => return fail(e),
        }
    };
    let sealer = switchboard_import::Sealer::new(&secret, &config::previous_secrets(cfg));
    let (pool, _) = match switchboard_store::conn::connect(&cfg.sql_dsn, 2) {
        Ok(p) => p,
        Err(e) => return fail(format!("SQL_DSN: {e}")),
    };
    let mut conn = match pool.get() {
        Ok(c) => c,
        Err(e) => return fail(format!("SQL_DSN: {e}")),
    };
    let opts = switchboard_import::Options {
        from: args.from,
        source_dsn: args.dsn.clone(),
        dry_run: args.dry_run,
        with_logs: args.with_logs,
    };
    match switchboard_import::run(&opts, &mut conn, &sealer) {
        Ok(report) => {
            print!("{report}");
            if report.has_failures() {
                fail("some kinds could not be imported (see FAILED above)".into())
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => fail(e.to_string()),
    }
}

/// The session secret: from SESSION_SECRET, else kept in `<data>/session_secret` so that restarts
/// keep sessions valid on a single node.
fn session_secret(cfg: &Config) -> Result<Vec<u8>, String> {
    if let Some(s) = &cfg.session_secret {
        return Ok(s.as_bytes().to_vec());
    }
    let path = cfg.data_dir.join("session_secret");
    if let Ok(s) = std::fs::read_to_string(&path) {
        let s = s.trim();
        if s.len() >= 16 {
            return Ok(s.as_bytes().to_vec());
        }
    }
    std::fs::create_dir_all(&cfg.data_dir)
        .map_err(|e| format!("cannot create {} (DATA_DIR): {e}", cfg.data_dir.display()))?;
    let secret = switchboard_api::auth::random_string(48);
    write_private(&path, &secret).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tracing::warn!(
        "SESSION_SECRET is not set: generated one in {} (set SESSION_SECRET, the same on every node, for a cluster)",
        path.display()
    );
    Ok(secret.into_bytes())
}

/// This node's name in shared state (Redis fields, leases): kept in `<DATA_DIR>/node_id` so that
/// a restarted node recognises what it left behind.
fn node_id(cfg: &Config) -> Result<String, String> {
    let path = cfg.data_dir.join("node_id");
    if let Ok(s) = std::fs::read_to_string(&path) {
        let s = s.trim();
        if !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Ok(s.to_owned());
        }
    }
    std::fs::create_dir_all(&cfg.data_dir)
        .map_err(|e| format!("cannot create {} (DATA_DIR): {e}", cfg.data_dir.display()))?;
    let id = switchboard_api::auth::random_string(12);
    write_private(&path, &id).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(id)
}

/// Consume records kept on disk when the database could not take them at shutdown.
fn journal_path(cfg: &Config) -> PathBuf {
    cfg.data_dir.join("ledger-journal.jsonl")
}

/// Appends `records` to the journal and syncs it to disk.
fn write_journal(
    path: &Path,
    records: &[switchboard_store::logs::ConsumeRecord],
) -> Result<(), String> {
    use std::io::Write;
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).map_err(|e| e.to_string())?);
        text.push('\n');
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(|e| e.to_string())?;
    f.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    f.sync_all().map_err(|e| e.to_string())
}

/// The journal of an earlier run (empty when there is none). A line that does not parse (a
/// write cut by a crash) is skipped with a warning.
fn read_journal(path: &Path) -> Result<Vec<switchboard_store::logs::ConsumeRecord>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match serde_json::from_str(line) {
            Ok(r) => out.push(r),
            Err(e) => tracing::warn!(line = i + 1, "unreadable ledger journal line skipped: {e}"),
        }
    }
    Ok(out)
}

/// Holds `<DATA_DIR>/node.lock` for as long as the process runs: a second process on the same
/// data directory (and so the same node id) is refused at start. The lock goes with the process,
/// however it ends.
fn lock_data_dir(cfg: &Config) -> Result<std::fs::File, String> {
    std::fs::create_dir_all(&cfg.data_dir)
        .map_err(|e| format!("cannot create {} (DATA_DIR): {e}", cfg.data_dir.display()))?;
    let path = cfg.data_dir.join("node.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(format!(
            "another Switchboard process is running on the data directory {} (DATA_DIR) and \
             would share its node id; give each process its own DATA_DIR",
            cfg.data_dir.display()
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

/// This process's instance, the holder of its node-id lease: its host and data directory.
fn instance_of(cfg: &Config) -> String {
    use std::hash::{Hash, Hasher};
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().chars().take(40).collect::<String>())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    let dir = std::fs::canonicalize(&cfg.data_dir).unwrap_or_else(|_| cfg.data_dir.clone());
    let mut h = std::hash::DefaultHasher::new();
    dir.hash(&mut h);
    format!("{host}:{:016x}", h.finish())
}

fn write_private(path: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path)?.write_all(content.as_bytes())
}

fn frontend_dir(cfg: &Config) -> Option<PathBuf> {
    if let Some(d) = &cfg.frontend_dir {
        return Some(d.clone());
    }
    let default = PathBuf::from("frontend/dist");
    default.join("index.html").is_file().then_some(default)
}

/// `SQL_MAX_OPEN_CONNS` shared out: the shared pool's size, and whether the consume-log writer
/// has a connection of its own (one of them, when there are two or more; see
/// `AppState::ledger_pool`). The node never opens more than the setting.
fn split_connections(max: u32) -> (u32, bool) {
    if max >= 2 {
        (max - 1, true)
    } else {
        (max, false)
    }
}

async fn run(cfg: Config) -> Result<(), String> {
    let secret = session_secret(&cfg)?;
    let (shared_conns, own_writer) = split_connections(cfg.sql_max_open_conns);
    let (pool, backend) = switchboard_store::conn::connect(&cfg.sql_dsn, shared_conns)
        .map_err(|e| format!("SQL_DSN: {e}"))?;
    {
        let pool = pool.clone();
        let ran = web::block(move || {
            let mut c = pool
                .get()
                .map_err(|e| format!("cannot connect to the database (SQL_DSN): {e}"))?;
            switchboard_store::conn::run_migrations(&mut c).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())??;
        tracing::info!(
            backend = backend.name(),
            migrations_applied = ran,
            "database ready"
        );
    }
    let frontend = frontend_dir(&cfg);
    match &frontend {
        Some(d) => tracing::info!(dir = %d.display(), "serving the console"),
        None => tracing::warn!(
            "console not built (no frontend/dist/index.html): only the API is served"
        ),
    }
    // The current secret listed again among the previous ones would only cost time.
    let previous_secrets: Vec<Vec<u8>> = config::previous_secrets(&cfg)
        .into_iter()
        .filter(|p| *p != secret)
        .collect();
    if !previous_secrets.is_empty() {
        tracing::info!(
            previous = previous_secrets.len(),
            "SESSION_SECRET_PREVIOUS is set: secrets sealed under those are re-sealed under SESSION_SECRET"
        );
    }
    let api_config = ApiConfig {
        session_secret: secret,
        previous_secrets,
        bcrypt_cost: cfg.bcrypt_cost,
        session_ttl_secs: i64::from(cfg.session_ttl_hours) * 3600,
        secure_cookie: cfg.session_secure_cookie,
        trusted_proxies: switchboard_domain::net::trusted_proxies(
            cfg.trusted_proxies.as_deref().unwrap_or_default(),
            cfg.trust_proxy_headers,
        )
        .map_err(|e| format!("TRUSTED_PROXIES: {e}"))?,
        max_body_bytes: cfg.api_body_limit_kb as usize * 1024,
        relay_body_bytes: cfg.relay_body_limit_mb as usize * 1024 * 1024,
        api_limit: Limit {
            requests: cfg.global_api_rate_limit,
            window: Duration::from_secs(cfg.global_api_rate_limit_duration),
        },
        critical_limit: Limit {
            requests: cfg.critical_rate_limit,
            window: Duration::from_secs(cfg.critical_rate_limit_duration),
        },
        turnstile_verify_url: switchboard_api::turnstile::SITEVERIFY_URL.to_owned(),
        oauth: switchboard_api::oauth::OAuthEndpoints {
            github_web: cfg.github_oauth_url.clone(),
            github_api: cfg.github_api_url.clone(),
            lark_accounts: cfg.lark_accounts_url.clone(),
            lark_open: cfg.lark_open_url.clone(),
        },
        stripe_api_url: cfg.stripe_api_url.clone(),
        alipay_gateway_url: cfg.alipay_gateway_url.clone(),
        wxpay_api_url: cfg.wxpay_api_url.clone(),
        telegram_api_url: cfg.telegram_api_url.clone(),
        telegram_proxy: cfg.telegram_proxy.clone().filter(|p| !p.trim().is_empty()),
        metrics_token: cfg.metrics_token.clone().filter(|t| !t.trim().is_empty()),
    };
    // Held until the process ends: one process per data directory (and node id).
    let _data_dir_lock = lock_data_dir(&cfg)?;
    let node = node_id(&cfg)?;
    let mut app_state = AppState::new(pool, backend, api_config).map_err(|e| e.to_string())?;
    // Opened once the migrations have run.
    if own_writer {
        app_state
            .open_ledger_writer(&cfg.sql_dsn)
            .map_err(|e| format!("SQL_DSN: the consume-log writer's connection: {e}"))?;
    }
    let redis = cfg.redis_conn_string.as_deref().filter(|s| !s.is_empty());
    if let Some(url) = redis {
        let shared = switchboard_ledger::shared::Shared::connect(url, &cfg.redis_key_prefix, &node)
            .await
            .map_err(|e| format!("REDIS_CONN_STRING: cannot connect: {e}"))?;
        app_state.relay.attach(shared);
        tracing::info!("balances, reservations and relay rate limits are shared through Redis");
    }
    let state = web::Data::new(app_state);
    // One spender per balance: the database records which nodes admit against its balances
    // (switchboard_api::cluster): a node without Redis is the only node on its database, nodes
    // with Redis share it, and a node id runs in one process at a time.
    let claim = Claim::new(
        &node,
        &instance_of(&cfg),
        if redis.is_some() {
            Mode::Shared
        } else {
            Mode::Local
        },
    );
    claim
        .take(
            &state,
            Duration::from_secs(cluster::LEASE_TTL.unsigned_abs() + 5),
        )
        .await?;
    // Consume records an earlier run could not write (the database was away at shutdown).
    let journal = journal_path(&cfg);
    let journaled = read_journal(&journal)?;
    if !journaled.is_empty() {
        let n = journaled.len();
        state.relay.ledger.requeue(journaled);
        switchboard_api::relay::flush_ledger(&state)
            .await
            .map_err(|e| {
                format!(
                    "cannot write the {n} journaled consume records ({}): {e}",
                    journal.display()
                )
            })?;
        std::fs::remove_file(&journal)
            .map_err(|e| format!("cannot remove {}: {e}", journal.display()))?;
        tracing::warn!(
            records = n,
            "consume records of an earlier run written from the journal"
        );
    }
    if redis.is_some() {
        let n = switchboard_api::relay::reconcile_ledger(&state)
            .await
            .map_err(|e| format!("cannot reconcile the shared ledger: {e}"))?;
        if n > 0 {
            tracing::info!(
                accounts = n,
                "balances left by an earlier run of this node set from the database"
            );
        }
    }
    let boot = bootstrap::run(
        &state,
        cfg.initial_root_password.clone(),
        cfg.initial_root_access_token.clone(),
    )
    .await
    .map_err(|e| format!("start-up failed: {e}"))?;
    if let Some(pw) = &boot.generated_root_password {
        tracing::warn!("created user 'root' with the generated password {pw} (shown only this once; change it after signing in)");
    } else if boot.root_created {
        tracing::info!("created user 'root' with INITIAL_ROOT_PASSWORD");
    }
    spawn_maintenance(state.clone(), Duration::from_secs(cfg.sync_frequency));
    switchboard_api::relay::spawn_flusher(
        state.clone(),
        Duration::from_millis(cfg.ledger_flush_ms),
    );
    switchboard_api::relay::spawn_applier(state.clone());
    // Other nodes' changes to channels, prices, settings, keys and users (Redis pub/sub).
    switchboard_api::coherence::spawn_subscriber(state.clone());
    {
        let st = state.clone();
        let claim = claim.clone();
        actix_web::rt::spawn(async move {
            loop {
                actix_web::rt::time::sleep(cluster::RENEW_EVERY).await;
                if let Err(e) = claim.renew(&st).await {
                    tracing::warn!("renewing this node's leases failed: {e}");
                }
            }
        });
    }

    let body_limit = cfg.api_body_limit_kb as usize * 1024;
    let access_log = tracing::enabled!(tracing::Level::INFO);
    let st = state.clone();
    let mut server = HttpServer::new(move || {
        // Called on each worker thread as it starts.
        tidy_allocator_on_this_worker();
        let app = App::new()
            .app_data(st.clone())
            .app_data(web::PayloadConfig::new(body_limit + 1))
            .wrap(actix_web::middleware::from_fn(
                switchboard_api::headers::security_headers,
            ))
            // The access log costs per request; it is only installed when it would be shown.
            .wrap(actix_web::middleware::Condition::new(
                access_log,
                Logger::new("%a \"%{method}xi %U\" %s %b %Dms")
                    .custom_request_replace("method", |req| req.method().to_string()),
            ))
            // Outermost: the request's id and span around everything (the access log's line
            // included), X-Request-Id, and the HTTP metrics.
            .wrap(actix_web::middleware::from_fn(
                switchboard_api::observe::observe,
            ))
            .configure(switchboard_api::configure);
        match &frontend {
            Some(dir) => app.service(switchboard_api::spa::service(dir)),
            None => app.default_service(web::to(|| async { switchboard_api::spa::no_console() })),
        }
    })
    .shutdown_timeout(cfg.shutdown_timeout)
    // Small SSE events must leave at once, not wait for the peer's delayed ACK.
    .tcp_nodelay(true);
    let workers = cfg.workers.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    // Blocking work (database calls, PDF rendering) waits for one of SQL_MAX_OPEN_CONNS
    // connections anyway: more threads than that only hold memory (tokio's default is 512 per
    // worker, and a burst of cache misses would start dozens).
    let blocking = (cfg.sql_max_open_conns as usize).div_ceil(workers).max(4);
    server = server
        .workers(workers)
        .worker_max_blocking_threads(blocking);
    let server = server.bind((cfg.host.as_str(), cfg.port)).map_err(|e| {
        format!(
            "cannot listen on {}:{} (PORT/HOST): {e}",
            cfg.host, cfg.port
        )
    })?;
    tracing::info!(
        "Switchboard {} listening on http://{}:{}",
        switchboard_domain::VERSION,
        cfg.host,
        cfg.port
    );
    server.run().await.map_err(|e| e.to_string())?;
    // The server has stopped; requests cut at the end of the grace period settle as their
    // streams are dropped on the worker threads: wait for them (bounded).
    let waited = std::time::Instant::now();
    while state.relay.ledger.outstanding() > 0 && waited.elapsed() < Duration::from_secs(10) {
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    if state.relay.ledger.outstanding() > 0 {
        tracing::warn!(
            reservations = state.relay.ledger.outstanding(),
            "requests still unsettled at exit (their reservations are released at the next start)"
        );
    }
    // Write what the ledger still holds before exiting.
    let mut written = false;
    for attempt in 1..=3 {
        match switchboard_api::relay::flush_ledger(&state).await {
            Ok(n) => {
                tracing::info!(records = n, "ledger flushed");
                written = true;
                break;
            }
            Err(e) => {
                tracing::error!(attempt, "final ledger flush failed: {e}");
                actix_web::rt::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
    claim.release(&state).await;
    if state.relay.ledger.redis_backlog() > 0 {
        tracing::warn!(
            operations = state.relay.ledger.redis_backlog(),
            "ledger operations Redis did not take; the next start of this node sets the balances from the database"
        );
    }
    if !written {
        let records = state.relay.ledger.take_pending().await;
        let n = records.len();
        write_journal(&journal, &records).map_err(|e| {
            format!(
                "{n} consume records could not be written to the database nor to {}: {e}",
                journal.display()
            )
        })?;
        return Err(format!(
            "the database did not take {n} consume records; they are kept in {} and written at the next start",
            journal.display()
        ));
    }
    tracing::info!("stopped");
    Ok(())
}

/// Periodic work of every node: reload settings, channels, prices and balances (so a change on
/// one node reaches all), purge expired sessions, forget ended rate-limit windows.
fn spawn_maintenance(state: web::Data<AppState>, every: Duration) {
    actix_web::rt::spawn(async move {
        let mut tick = actix_web::rt::time::interval(every);
        tick.tick().await;
        let mut n: u64 = 0;
        // This node's name in the cluster-wide lease of the periodic channel test.
        let node = format!(
            "{}-{}",
            std::process::id(),
            switchboard_api::auth::random_string(8)
        );
        // Async tasks (Midjourney, Suno): one node per period polls the upstreams.
        switchboard_api::relay::tasks::spawn_poller(
            state.clone(),
            node.clone(),
            switchboard_api::relay::tasks::POLL_EVERY,
        );
        // The Telegram bot: one node registers its webhook or polls (a lease).
        switchboard_api::telegram::spawn_runner(state.clone(), node.clone());
        loop {
            tick.tick().await;
            n += 1;
            let minutes = state.settings.operation().channel_test_frequency;
            if minutes > 0 {
                // One node per period runs it (a lease in the database, see
                // `scheduled_test_all`), beside the maintenance loop.
                let st = state.clone();
                let node = node.clone();
                actix_web::rt::spawn(async move {
                    use switchboard_api::routes::channel_ops::scheduled_test_all;
                    match scheduled_test_all(&st, minutes, &node).await {
                        Ok(Some(s)) => tracing::info!(?s, "scheduled channel test"),
                        Ok(None) => {}
                        Err(e) => tracing::warn!("scheduled channel test failed: {e}"),
                    }
                });
            }
            if let Err(e) = state.reload_settings().await {
                tracing::warn!("reloading settings failed: {e}");
            }
            if let Err(e) = state.relay.reload_channels(&state).await {
                tracing::warn!("reloading channels failed: {e}");
            }
            if let Err(e) = state.relay.reload_pricing(&state).await {
                tracing::warn!("reloading prices failed: {e}");
            }
            if let Err(e) = switchboard_api::relay::resync_ledger(&state).await {
                tracing::warn!("resyncing balances failed: {e}");
            }
            state.api_limiter.sweep();
            state.critical_limiter.sweep();
            if n.is_multiple_of(20) {
                let purged = state
                    .db(|c| {
                        Ok(switchboard_store::sessions::purge_expired(
                            c,
                            switchboard_store::now(),
                        )?)
                    })
                    .await;
                if let Err(e) = purged {
                    tracing::warn!("purging sessions failed: {e}");
                }
                // The previous month's invoices, once: a lock in the database picks one node.
                match switchboard_api::routes::invoices::run_monthly_invoices(
                    &state,
                    switchboard_store::now(),
                )
                .await
                {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(invoices = n, "monthly invoices generated"),
                    Err(e) => tracing::warn!("monthly invoice generation failed: {e}"),
                }
                // Old logs and expired cached answers: one node per period (a lease).
                match switchboard_api::jobs::clean_up(&state, &node).await {
                    Ok(Some((logs, cache))) => {
                        if logs > 0 {
                            tracing::info!(deleted = logs, "old logs removed (LogCleanupDays)");
                        }
                        if cache > 0 {
                            tracing::debug!(removed = cache, "response cache purged");
                        }
                    }
                    Ok(None) => {}
                    Err(e) => tracing::warn!("log and cache clean-up failed: {e}"),
                }
            }
        }
    });
}

#[cfg(test)]
mod connection_tests {
    #[test]
    fn the_writer_connection_is_one_of_sql_max_open_conns() {
        assert_eq!(super::split_connections(16), (15, true));
        assert_eq!(super::split_connections(2), (1, true));
        // One connection in all: the writer shares it.
        assert_eq!(super::split_connections(1), (1, false));
    }
}

#[cfg(test)]
mod allocator_tests {
    #[test]
    fn purge_delay_is_the_option_we_set() {
        // mimalloc v3 defaults: purge_delay 1000 (ms); its neighbours use_numa_nodes and
        // deprecated_eager_commit_delay are 0 and 1. A version whose numbering moved fails here.
        #[allow(unsafe_code)]
        unsafe {
            assert_eq!(
                libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY - 1),
                1
            );
            if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
                assert_eq!(
                    libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY),
                    1000
                );
            }
            assert_eq!(
                libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY + 1),
                0
            );
        }
        super::tune_allocator();
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            #[allow(unsafe_code)]
            let now = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
            assert_eq!(now, 50);
        }
    }
}
