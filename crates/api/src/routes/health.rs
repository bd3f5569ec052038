//! Probes for load balancers and orchestrators, outside `/api` (no session, no rate limit, no
//! envelope): `GET /healthz` says the process serves HTTP; `GET /readyz` says whether this node
//! can serve requests now: its database answers within two seconds and, when the ledger is in
//! Redis, Redis answers too. A node whose database or Redis is away answers 503 (take it out of
//! rotation) and 200 again once they are back, without a restart.

use crate::AppState;
use actix_web::{web, HttpResponse};
use serde_json::json;
use std::time::Duration;

/// How long the readiness probe waits for each store.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// `GET /healthz`: the process is up.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// `GET /readyz`: `{status: ready|unavailable, database, redis}`, each `ok`, `off` (not used)
/// or the reason it failed; 503 unless all are usable.
pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    let pool = state.pool.clone();
    let database =
        match web::block(move || switchboard_store::conn::ping(&pool, PROBE_TIMEOUT)).await {
            Ok(Ok(())) => "ok".to_owned(),
            Ok(Err(e)) => format!("unavailable: {e}"),
            Err(e) => format!("unavailable: {e}"),
        };
    let redis = match state.relay.shared() {
        None => "off".to_owned(),
        Some(s) => match actix_web::rt::time::timeout(PROBE_TIMEOUT, s.ping()).await {
            Ok(Ok(())) => "ok".to_owned(),
            Ok(Err(e)) => format!("unavailable: {e}"),
            Err(_) => "unavailable: no answer within 2s".to_owned(),
        },
    };
    let ready = database == "ok" && (redis == "ok" || redis == "off");
    if !ready {
        tracing::warn!(%database, %redis, "readiness probe: not ready");
    }
    let body = json!({
        "status": if ready { "ready" } else { "unavailable" },
        "database": database,
        "redis": redis,
    });
    if ready {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}

/// One gauge in Prometheus' text format.
fn gauge(out: &mut String, name: &str, help: &str, value: impl std::fmt::Display) {
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
    );
}

/// Resident memory of this process from `/proc/self/statm` (Linux), in bytes.
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// `GET /metrics`: this node's state in Prometheus' text format: the database pool, the
/// ledger (records waiting to be written, the last complete flush and the lag behind it, open
/// reservations, Redis backlog), Redis, the Telegram bot, memory, uptime, and the request
/// metrics of [`crate::metrics`] (HTTP requests by route, relayed calls, upstream errors,
/// retries). With `METRICS_TOKEN` set, the scrape
/// must send `Authorization: Bearer <token>`.
pub async fn metrics(state: web::Data<AppState>, req: actix_web::HttpRequest) -> HttpResponse {
    if let Some(token) = state.config.metrics_token.as_deref() {
        let given = req
            .headers()
            .get("Authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        if !crate::crypto::constant_time_eq(given.as_bytes(), token.as_bytes()) {
            return HttpResponse::Unauthorized()
                .content_type("text/plain")
                .body("metrics need the bearer token (METRICS_TOKEN)\n");
        }
    }
    use std::sync::atomic::Ordering;
    let now = switchboard_store::now();
    // The shared pool and the consume-log writer's own connection, together.
    let (connections, idle, max) = state.pools().fold((0, 0, 0), |(c, i, m), p| {
        let s = p.state();
        (c + s.connections, i + s.idle_connections, m + p.max_size())
    });
    let ledger = &state.relay.ledger;
    let mut out = String::with_capacity(16 * 1024);
    {
        use std::fmt::Write as _;
        let _ = writeln!(
            out,
            "# HELP switchboard_build_info The running version.\n# TYPE switchboard_build_info gauge\nswitchboard_build_info{{version=\"{}\",backend=\"{}\"}} 1",
            switchboard_domain::VERSION,
            state.backend.name()
        );
    }
    gauge(
        &mut out,
        "switchboard_uptime_seconds",
        "Seconds since this process started.",
        (now - state.start_time).max(0),
    );
    gauge(
        &mut out,
        "switchboard_db_pool_connections",
        "Open database connections of this node.",
        connections,
    );
    gauge(
        &mut out,
        "switchboard_db_pool_idle_connections",
        "Idle database connections of this node.",
        idle,
    );
    gauge(
        &mut out,
        "switchboard_db_pool_max_connections",
        "The most this node opens (SQL_MAX_OPEN_CONNS).",
        max,
    );
    gauge(
        &mut out,
        "switchboard_ledger_pending_records",
        "Consume records waiting to be written to the database.",
        ledger.pending_len(),
    );
    gauge(
        &mut out,
        "switchboard_ledger_last_flush_timestamp_seconds",
        "Unix time of the last ledger flush that wrote everything it could.",
        state.relay.last_flush.load(Ordering::Relaxed),
    );
    gauge(
        &mut out,
        "switchboard_ledger_flush_lag_seconds",
        "Seconds since the last ledger flush that wrote everything it could.",
        (now - state.relay.last_flush.load(Ordering::Relaxed)).max(0),
    );
    gauge(
        &mut out,
        "switchboard_ledger_open_reservations",
        "Requests holding a quota reservation.",
        ledger.outstanding(),
    );
    gauge(
        &mut out,
        "switchboard_ledger_redis_backlog",
        "Ledger operations Redis has not taken yet.",
        ledger.redis_backlog(),
    );
    gauge(
        &mut out,
        "switchboard_redis_enabled",
        "1 when the ledger and limits are shared in Redis.",
        i32::from(state.relay.shared().is_some()),
    );
    gauge(
        &mut out,
        "switchboard_telegram_running",
        "1 when this node receives the Telegram bot's updates.",
        i32::from(state.telegram.is_running()),
    );
    // Requests: HTTP by route, relayed calls, upstream errors, retries.
    state.metrics.render(&mut out);
    if let Some(rss) = rss_bytes() {
        gauge(
            &mut out,
            "process_resident_memory_bytes",
            "Resident memory of this process.",
            rss,
        );
    }
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(out)
}
