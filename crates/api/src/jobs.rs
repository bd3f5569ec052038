//! Cluster jobs: the one lease helper every periodic job goes through (issue #17, part 1), so
//! that each job runs on one node at a time and another node takes over when the holder dies
//! (stops renewing), within the lease's time. Leases live in the database (`job_locks`, race-safe
//! on every backend, see `switchboard_store::job_locks`); system info lists their holders.
//!
//! | lease | job | kind | time |
//! |---|---|---|---|
//! | `task-poll` | polling Midjourney, Suno and Kling tasks | per period | 14 s |
//! | `channel-test` | the scheduled channel test | per period | `ChannelTestFrequency` |
//! | `invoices:{month}` | the month's invoices | per period (released on failure) | 1 day |
//! | `maintenance` | log retention, the response-cache purge and the Responses conversations' purge | per period | 10 min |
//! | `telegram` | the Telegram bot (webhook or polling) | held, renewed | 60 s |
//! | `ledger:local` | a node without Redis owns its database's balances | held, renewed | 30 s |
//! | `ledger:shared:{node}` | a node sharing balances through Redis runs | held, renewed | 30 s |
//! | `node:{id}` | a node id runs in one process | held, renewed | 30 s |
//!
//! The last three are [`crate::cluster`]'s (one spender per balance).

use crate::error::ApiResult;
use crate::AppState;

/// How a lease is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lease {
    /// Once per period: taken when free or expired, never renewed by its holder; the job runs
    /// once per `ttl`, on whichever node takes it first.
    Period,
    /// Held: the holder renews it before it expires, and keeps it until it stops (dies).
    Held,
}

/// Takes (or, for [`Lease::Held`], renews) the lease `name` for `holder` for `ttl_secs`.
/// Whether the caller holds it now.
pub async fn acquire(
    state: &AppState,
    name: &str,
    holder: &str,
    ttl_secs: i64,
    kind: Lease,
) -> ApiResult<bool> {
    let (name, holder) = (name.to_owned(), holder.to_owned());
    let ttl = ttl_secs.max(1);
    state
        .db(move |c| {
            let now = switchboard_store::now();
            Ok(match kind {
                Lease::Period => {
                    switchboard_store::job_locks::try_acquire(c, &name, &holder, now, ttl)?
                }
                Lease::Held => {
                    switchboard_store::job_locks::acquire_or_renew(c, &name, &holder, now, ttl)?
                }
            })
        })
        .await
}

/// Gives a lease back (a failed run, so that the next tick on any node retries; or a holder
/// that stops cleanly). Whether `holder` held it.
pub async fn release(state: &AppState, name: &str, holder: &str) -> ApiResult<bool> {
    let (name, holder) = (name.to_owned(), holder.to_owned());
    state
        .db(move |c| Ok(switchboard_store::job_locks::release(c, &name, &holder)?))
        .await
}

/// The lease of the maintenance jobs that clean up (log retention, the response-cache purge).
pub const MAINTENANCE: &str = "maintenance";
/// How long one node keeps the maintenance period.
pub const MAINTENANCE_TTL_SECS: i64 = 600;

/// The clean-up jobs, once per [`MAINTENANCE_TTL_SECS`] for the cluster: old logs
/// (`LogCleanupDays`), the response cache's expired answers and the expired conversations of
/// bridged Responses answers (`relay::responses`). `None` when another node has
/// the period.
pub async fn clean_up(state: &AppState, holder: &str) -> ApiResult<Option<(u64, usize)>> {
    if !acquire(
        state,
        MAINTENANCE,
        holder,
        MAINTENANCE_TTL_SECS,
        Lease::Period,
    )
    .await?
    {
        return Ok(None);
    }
    let logs = crate::routes::logs::cleanup_logs(state).await?;
    let cache = crate::relay::cache::purge(state).await?;
    let conversations = crate::relay::responses::purge(state).await?;
    if conversations > 0 {
        tracing::info!("{conversations} expired Responses conversations removed");
    }
    Ok(Some((logs, cache)))
}
