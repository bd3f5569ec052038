//! One spender per balance (docs/deployment.md, "One spender per balance"): which nodes may
//! admit requests against a database's balances, recorded in the database as leases
//! (`job_locks`), taken through the one lease helper, [`crate::jobs`].
//!
//! - `ledger:local`: the one node that keeps balances in its own memory (no `REDIS_CONN_STRING`).
//!   While it holds the lease no other node runs on the database. It admits requests only while
//!   its lease is renewed ([`Ledger::admit_until`](switchboard_ledger::Ledger::admit_until)):
//!   a node that stopped renewing (paused, cut off from the database) stops admitting before
//!   the lease can pass to another node, and answers `503 ledger_lease_lost` until it holds it
//!   again (its balances read from the database first).
//! - `ledger:shared:{node}`: each node that shares balances through Redis. The two modes
//!   exclude each other: a node of one mode refuses to start while a lease of the other is held.
//! - `node:{id}`: each running process's node id, held by its instance (host and data
//!   directory). A second live process with the same id (two processes on one `DATA_DIR`, a
//!   copied data directory) is refused at start; a lease an earlier run of the same instance
//!   left is taken back at once.

use crate::jobs::{self, Lease};
use crate::AppState;
use std::time::{Duration, Instant};
use switchboard_store::job_locks;

/// How long a lease lasts without renewal, in seconds.
pub const LEASE_TTL: i64 = 30;

/// How often a node renews its leases.
pub const RENEW_EVERY: Duration = Duration::from_secs(10);

/// The local-ledger lease.
pub const LOCAL_LEDGER: &str = "ledger:local";

/// The prefix of the shared-ledger leases (one per node).
pub const SHARED_LEDGER_PREFIX: &str = "ledger:shared:";

/// The prefix of the node-id leases.
pub const NODE_PREFIX: &str = "node:";

/// A local node admits only until this long before its lease's expiry as it renewed it: the
/// expiry is stored in whole seconds and another node takes the lease only once it has passed.
const FENCE_MARGIN: Duration = Duration::from_secs(2);

/// Where a node keeps the balances it admits against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In its own memory (no Redis): the only node on its database.
    Local,
    /// In Redis, shared with the other nodes.
    Shared,
}

/// The leases of a running node (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Claim {
    pub node: String,
    /// This process's instance: host and data directory, as the node-id lease's holder.
    pub instance: String,
    pub mode: Mode,
}

fn cut(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

impl Claim {
    /// A node's claim; `instance` names the process's host and data directory (64 characters
    /// at most are kept).
    pub fn new(node: &str, instance: &str, mode: Mode) -> Claim {
        Claim {
            node: cut(node, 48).to_owned(),
            instance: cut(instance, 64).to_owned(),
            mode,
        }
    }

    fn node_lease(&self) -> String {
        format!("{NODE_PREFIX}{}", self.node)
    }

    /// The lease of the node's ledger mode and its holder.
    fn ledger_lease(&self) -> (String, &str) {
        match self.mode {
            Mode::Local => (LOCAL_LEDGER.to_owned(), &self.node),
            Mode::Shared => (
                format!("{SHARED_LEDGER_PREFIX}{}", self.node),
                &self.instance,
            ),
        }
    }

    /// Takes or renews the node-id lease and the ledger lease (`jobs::acquire`, held leases):
    /// whether each is held.
    async fn hold(&self, state: &AppState) -> Result<(bool, bool), String> {
        let node = jobs::acquire(
            state,
            &self.node_lease(),
            &self.instance,
            LEASE_TTL,
            Lease::Held,
        )
        .await
        .map_err(|e| format!("cannot record this node in the database: {e}"))?;
        if !node {
            return Ok((false, false));
        }
        let (name, holder) = self.ledger_lease();
        let ledger = jobs::acquire(state, &name, holder, LEASE_TTL, Lease::Held)
            .await
            .map_err(|e| format!("cannot record this node's ledger mode in the database: {e}"))?;
        Ok((true, ledger))
    }

    /// Why a node of this mode must not run beside the leases held of the other mode, if so.
    async fn other_mode(&self, state: &AppState) -> Result<Option<String>, String> {
        let mode = self.mode;
        state
            .db(move |c| {
                let now = switchboard_store::now();
                Ok(match mode {
                    Mode::Local => {
                        let shared = job_locks::held_with_prefix(c, SHARED_LEDGER_PREFIX, now)?;
                        (!shared.is_empty()).then(|| {
                            let names: Vec<&str> = shared
                                .iter()
                                .map(|(n, _)| &n[SHARED_LEDGER_PREFIX.len()..])
                                .collect();
                            format!(
                                "nodes that share balances through Redis use this database ({}); \
                                 this node has no REDIS_CONN_STRING and would spend the same \
                                 balances on its own: set REDIS_CONN_STRING (the same Redis) on \
                                 this node too",
                                names.join(", ")
                            )
                        })
                    }
                    Mode::Shared => job_locks::find(c, LOCAL_LEDGER)?
                        .filter(|(_, expires)| *expires >= now)
                        .map(|(holder, _)| {
                            format!(
                                "a node with its own in-memory ledger (node {holder}, no \
                                 REDIS_CONN_STRING) uses this database; nodes of both kinds would \
                                 spend the same balances: stop it, or give it REDIS_CONN_STRING \
                                 too (its claim lapses {LEASE_TTL} s after it stops)"
                            )
                        }),
                })
            })
            .await
            .map_err(|e| format!("cannot read the ledger modes in the database: {e}"))
    }

    /// Takes the node's leases at start, or says why it must not run. A node-id lease held by
    /// another instance is waited for up to `wait` (the lease of a process that died lapses;
    /// a live duplicate renews it).
    pub async fn take(&self, state: &AppState, wait: Duration) -> Result<(), String> {
        let waiting = Instant::now();
        let (ledger_held, taken) = loop {
            let taken = Instant::now();
            match self.hold(state).await? {
                (true, ledger) => break (ledger, taken),
                (false, _) if waiting.elapsed() >= wait => {
                    let name = self.node_lease();
                    let holder = state
                        .db(move |c| Ok(job_locks::find(c, &name)?))
                        .await
                        .ok()
                        .flatten()
                        .map(|h| h.0)
                        .unwrap_or_default();
                    return Err(format!(
                        "another running Switchboard process uses the node id `{}` ({holder}); \
                         each process needs its own DATA_DIR (where its node id is kept)",
                        self.node
                    ));
                }
                (false, _) => actix_web::rt::time::sleep(Duration::from_secs(1)).await,
            }
        };
        let refused = if ledger_held {
            self.other_mode(state).await?
        } else {
            Some(format!(
                "another Switchboard node is using this database with its own in-memory ledger; \
                 several nodes must share balances through Redis: set REDIS_CONN_STRING on every \
                 node (or stop the other node; its claim lapses {LEASE_TTL} s after it stops)"
            ))
        };
        if let Some(why) = refused {
            self.release(state).await;
            return Err(why);
        }
        if self.mode == Mode::Local {
            state.relay.ledger.admit_until(taken + lease_span());
        }
        Ok(())
    }

    /// Renews the leases. A local node moves its admission fence on while it holds the
    /// local-ledger lease, stops admitting at once when another node holds it, and reads the
    /// balances from the database again before admitting after a loss. Returns whether the
    /// node holds what it needs to admit requests.
    pub async fn renew(&self, state: &AppState) -> Result<bool, String> {
        let started = Instant::now();
        let (node_held, ledger_held) = self.hold(state).await?;
        if !node_held {
            tracing::error!(
                node = %self.node,
                "another process holds this node's id: each process needs its own DATA_DIR"
            );
        }
        if self.mode == Mode::Shared {
            return Ok(ledger_held);
        }
        let ledger = &state.relay.ledger;
        if !ledger_held {
            ledger.admit_until(started);
            tracing::error!(
                node = %self.node,
                "another node holds this database's local-ledger lease: this node admits no \
                 request until it holds it again (several nodes need REDIS_CONN_STRING)"
            );
            return Ok(false);
        }
        if !ledger.admitting() {
            // The lease lapsed (or passed to another node and back): the balances in memory
            // may be stale. Read them again before admitting.
            crate::relay::resync_ledger(state)
                .await
                .map_err(|e| format!("reading the balances again failed: {e}"))?;
            tracing::warn!(node = %self.node, "the local-ledger lease is held again: admitting");
        }
        ledger.admit_until(started + lease_span());
        Ok(true)
    }

    /// Gives the leases up (a clean stop).
    pub async fn release(&self, state: &AppState) {
        let (name, holder) = self.ledger_lease();
        let _ = jobs::release(state, &name, holder).await;
        let _ = jobs::release(state, &self.node_lease(), &self.instance).await;
    }
}

/// How long after a renewal began a local node keeps admitting.
fn lease_span() -> Duration {
    Duration::from_secs(LEASE_TTL.unsigned_abs()).saturating_sub(FENCE_MARGIN)
}
