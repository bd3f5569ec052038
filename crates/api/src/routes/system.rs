//! The system panel: this node's resource use (`GET /api/system/info`, administrators) and its
//! recent log lines (`GET /api/system/log`, root), both polled by the console's auto refresh.
//!
//! CPU use is measured between two samples, so the probe lives for the whole process: each call
//! refreshes only the CPU usage, the RAM figures and this process's memory, and a call sooner
//! than sysinfo's minimum interval after the previous sample reuses that sample.

use crate::auth::{AdminUser, RootUser};
use crate::error::{ok, ApiError, ApiResult};
use crate::log_buffer;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use switchboard_domain::ErrorCode;
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, Pid, ProcessRefreshKind, ProcessesToUpdate};

/// Lines a log poll returns unless told otherwise, and at most.
pub const LOG_DEFAULT_LIMIT: usize = 200;
pub const LOG_MAX_LIMIT: usize = 1000;

/// A snapshot of the node's resources.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    /// Whole-machine CPU use since the previous sample, 0-100.
    pub cpu_percent: f32,
    pub total_bytes: u64,
    pub used_bytes: u64,
    pub process_rss_bytes: u64,
    /// Logical CPUs.
    pub cores: usize,
}

struct Probe {
    sys: sysinfo::System,
    pid: Option<Pid>,
    last_cpu: Option<Instant>,
    cpu_percent: f32,
}

fn probe() -> Result<&'static Mutex<Probe>, String> {
    static PROBE: OnceLock<Result<Mutex<Probe>, String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let sys = sysinfo::System::new().map_err(|e| e.to_string())?;
            Ok(Mutex::new(Probe {
                sys,
                pid: sysinfo::get_current_pid().ok(),
                last_cpu: None,
                cpu_percent: 0.0,
            }))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Takes a sample (blocking: reads `/proc`; the first call waits sysinfo's minimum CPU interval
/// to have two CPU samples).
pub fn sample() -> Result<Sample, String> {
    let mut p = probe()?.lock().unwrap_or_else(|e| e.into_inner());
    let min = sysinfo::MINIMUM_CPU_UPDATE_INTERVAL;
    let cpu_kind = CpuRefreshKind::nothing().with_usage();
    match p.last_cpu {
        None => {
            p.sys.refresh_cpu_specifics(cpu_kind);
            std::thread::sleep(min.max(Duration::from_millis(100)));
            p.sys.refresh_cpu_specifics(cpu_kind);
            p.last_cpu = Some(Instant::now());
            p.cpu_percent = p.sys.global_cpu_usage();
        }
        Some(at) if at.elapsed() >= min => {
            p.sys.refresh_cpu_specifics(cpu_kind);
            p.last_cpu = Some(Instant::now());
            p.cpu_percent = p.sys.global_cpu_usage();
        }
        Some(_) => {}
    }
    p.sys
        .refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
    let mut rss = 0;
    if let Some(pid) = p.pid {
        p.sys.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            false,
            ProcessRefreshKind::nothing().with_memory(),
        );
        rss = p.sys.process(pid).map_or(0, |pr| pr.memory());
    }
    let cores = match p.sys.cpus().len() {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let cpu = p.cpu_percent;
    Ok(Sample {
        cpu_percent: if cpu.is_finite() {
            cpu.clamp(0.0, 100.0)
        } else {
            0.0
        },
        total_bytes: p.sys.total_memory(),
        used_bytes: p.sys.used_memory(),
        process_rss_bytes: rss,
        cores,
    })
}

/// `GET /api/system/info` (admin): `{cpu_percent, memory: {total_bytes, used_bytes,
/// process_rss_bytes}, uptime_seconds, start_time, version, backend, redis,
/// pending_consume_records, cores}` of the node that answers.
pub async fn info(state: web::Data<AppState>, _a: AdminUser) -> ApiResult<HttpResponse> {
    let s = web::block(sample)
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)?;
    let cpu = (f64::from(s.cpu_percent) * 10.0).round() / 10.0;
    // Who runs each cluster-wide job now (a lease per job in `job_locks`).
    let at = switchboard_store::now();
    let leases: Vec<serde_json::Value> = state
        .db(|c| Ok(switchboard_store::job_locks::all(c)?))
        .await?
        .into_iter()
        .map(|(name, holder, expires_at)| {
            json!({"name": name, "holder": holder, "expires_at": expires_at,
                   "held": expires_at >= at})
        })
        .collect();
    Ok(ok(json!({
        "cpu_percent": cpu,
        "memory": {
            "total_bytes": s.total_bytes,
            "used_bytes": s.used_bytes,
            "process_rss_bytes": s.process_rss_bytes,
        },
        "cores": s.cores,
        "uptime_seconds": (switchboard_store::now() - state.start_time).max(0),
        "start_time": state.start_time,
        "version": switchboard_domain::VERSION,
        "backend": state.backend.name(),
        "redis": state.relay.shared().is_some(),
        "pending_consume_records": state.relay.ledger.pending_len(),
        "leases": leases,
    })))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[schemars(rename = "SystemLogLogQuery")]
pub struct LogQuery {
    after: Option<String>,
    limit: Option<String>,
}

fn non_negative(name: &str, v: &Option<String>) -> ApiResult<Option<u64>> {
    match v.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => s.parse::<u64>().map(Some).map_err(|_| {
            ApiError::bad_request(
                ErrorCode::InvalidQuery,
                format!("{name} must be a whole number of 0 or more, not {s:?}"),
            )
        }),
    }
}

/// `GET /api/system/log?after=<seq>&limit=<n>` (root): `{lines: [{seq, time, level, text}],
/// next, truncated, capacity}`, oldest first. Without `after`, the newest `limit` lines (the
/// first load); with it, the lines after that seq (poll with `after=next`). `truncated` says
/// lines after `after` were dropped from the ring before this poll. `limit` is 1-1000 (200).
pub async fn log(_r: RootUser, q: web::Query<LogQuery>) -> ApiResult<HttpResponse> {
    let limit = match non_negative("limit", &q.limit)? {
        None => LOG_DEFAULT_LIMIT,
        Some(n) if (1..=LOG_MAX_LIMIT as u64).contains(&n) => n as usize,
        Some(_) => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidLimit,
                format!("limit must be between 1 and {LOG_MAX_LIMIT}"),
            ))
        }
    };
    let buf = log_buffer::global();
    let page = match non_negative("after", &q.after)? {
        None => buf.tail(limit),
        Some(after) => buf.after(after, limit),
    };
    Ok(ok(json!({
        "lines": page.lines,
        "next": page.next,
        "truncated": page.truncated,
        "capacity": buf.capacity(),
    })))
}
