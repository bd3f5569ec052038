//! The quota ledger of this node: balances, reservations and not-yet-written consumption of
//! users and tokens, kept in memory so the relay path makes no database round trip in steady
//! state. Settled requests are queued as consume records and written in batches by
//! [`Ledger::flush`]; each batch is one idempotent transaction (`store::logs::settle_batch`).
//!
//! **The balance rule.** Requests admitted against a balance spend at most that balance (plus the
//! `OverdraftTolerance` setting) together: a reservation is between the request's minimum and its
//! worst case, as much as the balance allows ([`Ledger::reserve`]); a settlement charges the real
//! cost but never more than the reservation plus what nobody else holds reserved
//! ([`Ledger::settle`]); the consume record says what was charged (`metadata.uncapped_quota` keeps
//! the cost when the cap applied).
//!
//! Invariant: for every account, `balance = database value - unflushed consumption`. Changes made
//! outside the relay (credits, key edits) are database transactions followed by
//! [`Ledger::credit`]; every credit and flush bumps the account's version so that a resync
//! ([`Ledger::resync_with`]) that read the database before one of them does not apply stale
//! values.
//!
//! With Redis configured ([`Ledger::attach`]), balances, reservations and unflushed amounts live
//! in Redis instead (see [`crate::shared`]) so that every node admits against the same numbers;
//! the queue of consume records stays with the node that served the requests. Settlements and
//! refunds (which may happen in a `Drop`) are queued and applied by [`Ledger::apply_queued`],
//! whatever waits sent in one round trip (up to [`REDIS_BATCH`]); an operation Redis does not
//! take is retried in order until it is applied (each carries an id, so applying twice is a
//! no-op), and a settlement that could not reach Redis charges at most its reservation.
//!
//! **Markers.** Redis remembers which operations it applied in marker generations, one hash each
//! (`{p}done:{node}:g{gen}`); an operation takes the generation current when it is queued or
//! started, and is marked in it every time it is sent. A generation lasts [`MARKER_PERIOD`];
//! [`Ledger::rotate_markers`] then starts the next and drops every older one that no operation
//! still queued, on its way or waiting for a retry belongs to: Redis holds the markers of a few
//! seconds of operations, plus those of an outage's backlog until it is applied.

use crate::rule;
use crate::shared::{Account as SharedAccount, Call, Reserve, Settlement, Shared};
use foldhash::{HashMap, HashMapExt};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use switchboard_domain::log::LogType;
use switchboard_domain::price::ReserveBounds;
use switchboard_store::logs::ConsumeRecord;

#[derive(Debug, Default, Clone, Copy)]
struct Account {
    balance: i64,
    reserved: i64,
    unflushed: i64,
    unlimited: bool,
    /// Bumped by every credit and flush (see [`Ledger::resync_with`]).
    version: u64,
}

#[derive(Debug, Clone, Copy)]
struct Held {
    user_id: i64,
    token_id: i64,
    amount: i64,
}

#[derive(Debug, Default)]
struct Inner {
    users: HashMap<i64, Account>,
    tokens: HashMap<i64, Account>,
    /// Open reservations (local mode): settling or refunding one twice does nothing.
    held: HashMap<u64, Held>,
    pending: Vec<ConsumeRecord>,
    /// The buffer of the batch written last, cleared, kept for the next batch while the node is
    /// busy (see [`Ledger::flush`]): under load every batch is swapped for it instead of
    /// growing a new one from nothing.
    spare: Vec<ConsumeRecord>,
}

/// Records queued for the database that wake the flusher before its next tick
/// ([`Ledger::batch_ready`]). Under load a batch is written once this many wait, rather than
/// every `LEDGER_FLUSH_MS` whatever piled up: at 37,000 requests a second a 500 ms batch was
/// 18,500 records of 256 bytes in a queue grown by doubling from nothing each time (to 8 MB:
/// most of the relay's page faults, measured with `perf record -e page-faults`, and copies of
/// every record), held the database's write lock for tens of milliseconds, and set how much
/// memory a burst takes.
pub const FLUSH_AT: usize = 4096;

/// Queued Redis operations sent in one round trip, at most ([`Ledger::apply_queued`]). One at
/// a time, a node's settlements could not keep up with its requests (a Redis round trip each,
/// one applier): under a burst of streams the queue grew, and the reservations of the
/// settlements waiting in it held the users' whole balance, so that paying users were refused
/// (`402`). In one pipeline Redis runs them back to back; this bounds how long one batch holds
/// Redis from the other nodes' requests (each settlement is a short script).
pub const REDIS_BATCH: usize = 256;

/// How long a marker generation takes operations (see the module's "Markers"). Its markers are
/// dropped at the earliest one period later, once none of its operations can be sent again.
pub const MARKER_PERIOD: std::time::Duration = std::time::Duration::from_secs(10);

/// Marker generations dropped in one command at most (after a long outage, the rest go with the
/// next rotations).
const MARKER_DROP_MAX: u64 = 1_000;

/// A settlement or refund waiting for Redis.
#[derive(Debug)]
enum Queued {
    Settle {
        r: Reservation,
        record: Box<ConsumeRecord>,
        tolerance: i64,
        /// The operation's id (see [`Settlement::op`]).
        op: u64,
        /// Its marker generation.
        gen: u64,
        /// Told the charge once it is fixed ([`Ledger::settle_charged`]).
        report: Option<tokio::sync::oneshot::Sender<i64>>,
    },
    Refund(Reservation),
}

impl Queued {
    fn gen(&self) -> Option<u64> {
        match self {
            Queued::Settle { gen, .. } => Some(*gen),
            Queued::Refund(_) => None,
        }
    }
}

/// A batch taken from the queue for Redis that goes back to the queue's front, in order, if the
/// applier is dropped before the batch is settled: a request whose client went away while it
/// awaited the applier, or a flush's time limit, cancels it at its round trip. Redis may have
/// applied any of it by then; each operation is applied once however often it is sent. Its
/// oldest marker generation counts as on its way until the batch is back in the queue or
/// settled ([`InFlight`]).
struct Unapplied<'a> {
    queue: &'a Mutex<VecDeque<Queued>>,
    batch: Vec<Queued>,
    on_its_way: InFlight<'a>,
}

impl<'a> Unapplied<'a> {
    /// Takes up to [`REDIS_BATCH`] operations from the front of the queue.
    fn take(ledger: &'a Ledger) -> Unapplied<'a> {
        let mut q = Ledger::lock_queue(&ledger.queued);
        let n = q.len().min(REDIS_BATCH);
        let batch: Vec<Queued> = q.drain(..n).collect();
        let oldest = batch.iter().filter_map(Queued::gen).min();
        Unapplied {
            queue: &ledger.queued,
            batch,
            on_its_way: InFlight::enter(ledger, oldest),
        }
    }

    /// The batch, to be settled by the caller; its generation counts as on its way until the
    /// returned guard is dropped.
    fn into_inner(mut self) -> (Vec<Queued>, InFlight<'a>) {
        let on_its_way = InFlight {
            held: self.on_its_way.held,
            gen: self.on_its_way.gen.take(),
        };
        (std::mem::take(&mut self.batch), on_its_way)
    }
}

impl Drop for Unapplied<'_> {
    fn drop(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let mut q = Ledger::lock_queue(self.queue);
        for op in self.batch.drain(..).rev() {
            q.push_front(op);
        }
        // `on_its_way` is dropped after this, once the batch is back in the queue.
    }
}

/// A marker generation some operation on its way to Redis belongs to (and that may be sent
/// again), held from when the operation leaves the queue (or is made) until it is back in a
/// queue or settled. [`Ledger::rotate_markers`] keeps every generation held.
struct InFlight<'a> {
    held: &'a Mutex<Vec<u64>>,
    gen: Option<u64>,
}

impl<'a> InFlight<'a> {
    fn enter(ledger: &'a Ledger, gen: Option<u64>) -> InFlight<'a> {
        if let Some(g) = gen {
            Ledger::lock_queue(&ledger.in_flight).push(g);
        }
        InFlight {
            held: &ledger.in_flight,
            gen,
        }
    }

    /// The current generation, taken and held at once (an operation about to be sent).
    fn current(ledger: &'a Ledger) -> (u64, InFlight<'a>) {
        let mut held = Ledger::lock_queue(&ledger.in_flight);
        let gen = ledger.marker_gen.load(Ordering::SeqCst);
        held.push(gen);
        (
            gen,
            InFlight {
                held: &ledger.in_flight,
                gen: Some(gen),
            },
        )
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(g) = self.gen {
            let mut held = Ledger::lock_queue(self.held);
            if let Some(i) = held.iter().position(|h| *h == g) {
                held.swap_remove(i);
            }
        }
    }
}

/// A Redis operation that failed, retried in order.
#[derive(Debug, Clone)]
enum Op {
    /// A settlement whose charge is fixed already (its record is queued with it).
    Settle {
        r: Reservation,
        charge: i64,
        op: u64,
        gen: u64,
    },
    Refund(Reservation),
    Credit {
        account: SharedAccount,
        delta: i64,
        unlimited: Option<bool>,
        id: u64,
        gen: u64,
    },
    Flushed {
        amounts: Vec<(SharedAccount, i64)>,
        id: u64,
        gen: u64,
    },
    /// A reservation whose outcome was not heard (see [`Shared::cancel_call`]).
    Cancel {
        id: u64,
        expires: i64,
    },
}

impl Op {
    /// The marker generation the operation is marked applied in.
    fn gen(&self) -> Option<u64> {
        match self {
            Op::Settle { gen, .. } | Op::Credit { gen, .. } | Op::Flushed { gen, .. } => Some(*gen),
            Op::Refund(_) | Op::Cancel { .. } => None,
        }
    }
}

pub struct Ledger {
    inner: Mutex<Inner>,
    /// Serialises flushes and resyncs (one writer at a time).
    flush_lock: tokio::sync::Mutex<()>,
    shared: Option<Shared>,
    next_id: AtomicU64,
    /// Reservations handed out and not yet settled or refunded (shutdown waits for them).
    outstanding: AtomicI64,
    queued: Mutex<VecDeque<Queued>>,
    queued_signal: tokio::sync::Notify,
    /// Woken when [`FLUSH_AT`] records wait ([`Ledger::batch_ready`]).
    batch_full: tokio::sync::Notify,
    /// One applier at a time, so that a flush waits for settlements being applied.
    apply_lock: tokio::sync::Mutex<()>,
    retry: Mutex<VecDeque<Op>>,
    /// The marker generation operations take now (see the module's "Markers"), counted in
    /// periods of `marker_period_ms` since the epoch.
    marker_gen: AtomicU64,
    marker_period_ms: u64,
    /// Marker generations of operations on their way to Redis ([`InFlight`]).
    in_flight: Mutex<Vec<u64>>,
    /// The generation whose hash was last made in Redis, and the first not dropped yet.
    markers_started: AtomicU64,
    markers_kept_from: AtomicU64,
    /// Local mode behind a lease: milliseconds after `born` until which reservations are
    /// admitted; `u64::MAX` when not fenced ([`Ledger::admit_until`]).
    admit_until_ms: AtomicU64,
    born: std::time::Instant,
    /// Redis mode: Redis lost its data (see `shared`'s epoch); nothing is admitted until the
    /// balances are rebuilt from the database ([`Ledger::rebuild_with`]).
    lost: std::sync::atomic::AtomicBool,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger {
            inner: Mutex::default(),
            flush_lock: tokio::sync::Mutex::new(()),
            shared: None,
            // Ids are unique per node and run: a restarted node must not reuse the ids of the
            // reservations it left in Redis.
            next_id: AtomicU64::new(start_id()),
            outstanding: AtomicI64::new(0),
            queued: Mutex::default(),
            queued_signal: tokio::sync::Notify::new(),
            batch_full: tokio::sync::Notify::new(),
            apply_lock: tokio::sync::Mutex::new(()),
            retry: Mutex::default(),
            marker_gen: AtomicU64::new(0),
            marker_period_ms: 0,
            in_flight: Mutex::default(),
            markers_started: AtomicU64::new(0),
            markers_kept_from: AtomicU64::new(0),
            admit_until_ms: AtomicU64::new(u64::MAX),
            born: std::time::Instant::now(),
            lost: std::sync::atomic::AtomicBool::new(false),
        }
        .with_marker_period(MARKER_PERIOD)
    }
}

/// Why a reservation is refused while the balances are rebuilt after Redis lost its data.
const LOST: &str = "Redis lost its data: the balances are being rebuilt from the database";

/// Milliseconds since the epoch (the marker generations count periods of it).
fn epoch_ms() -> u64 {
    u64::try_from(crate::shared::now_ms()).unwrap_or_default()
}

/// The first reservation id of this run: the start time in microseconds, so ids never repeat
/// across restarts of a node.
fn start_id() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(1))
        .unwrap_or(1)
        .max(1)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shortfall {
    User,
    Token,
    /// The account is not tracked yet: load it from the database and try again.
    NotLoaded,
    /// The shared store did not answer.
    Unavailable(String),
    /// This node does not hold its database's local-ledger lease (another node may be spending
    /// the same balances): nothing is admitted until it holds it again ([`Ledger::admit_until`]).
    NotHeld,
}

/// Quota set aside for one request until it settles or is refunded. `id` 0 holds nothing (a
/// charge without a reservation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    pub id: u64,
    pub user_id: i64,
    pub token_id: i64,
    pub amount: i64,
}

impl Reservation {
    /// No reservation: [`Ledger::settle`] then only charges (capped by the balance rule).
    pub fn none(user_id: i64, token_id: i64) -> Reservation {
        Reservation {
            id: 0,
            user_id,
            token_id,
            amount: 0,
        }
    }
}

/// What the database says about an account when it is first used.
#[derive(Debug, Clone, Copy)]
pub struct Loaded {
    pub user_id: i64,
    pub user_quota: i64,
    pub token_id: i64,
    pub token_remain: i64,
    pub token_unlimited: bool,
}

/// Which account a credit is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credit {
    User(i64),
    /// A key; `unlimited` replaces its flag when given.
    Token {
        id: i64,
        unlimited: Option<bool>,
    },
}

/// What the database says about tracked accounts (for [`Ledger::resync_with`]).
#[derive(Debug, Default, Clone)]
pub struct DbValues {
    pub users: Vec<(i64, i64)>,
    /// (id, remain quota, unlimited)
    pub tokens: Vec<(i64, i64, bool)>,
}

/// Notes in the record's metadata the cost that the balance rule cut ([`rule::note_cap`]) and
/// charges the record what was charged.
fn note_cap(record: &mut ConsumeRecord, charge: i64) {
    if let Some(metadata) = rule::note_cap(&record.metadata, record.quota, charge) {
        record.metadata = metadata;
    }
    record.quota = charge;
}

impl Ledger {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Queues a record for the next flush; the [`FLUSH_AT`]th waiting wakes the flusher.
    fn queue(&self, g: &mut Inner, record: ConsumeRecord) {
        g.pending.push(record);
        if g.pending.len() == FLUSH_AT {
            self.batch_full.notify_one();
        }
    }

    /// Resolves once [`FLUSH_AT`] records wait (at once when that happened since the last
    /// call): the flusher writes them without waiting for its tick. Records put back after a
    /// failed write do not wake it (the tick paces the retries).
    pub async fn batch_ready(&self) {
        self.batch_full.notified().await;
    }

    fn lock_queue<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        match m.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Keeps balances in Redis from now on (call before serving requests).
    pub fn attach(&mut self, shared: Shared) {
        self.shared = Some(shared);
    }

    pub fn shared(&self) -> Option<&Shared> {
        self.shared.as_ref()
    }

    /// The ledger with marker generations of `period` (default [`MARKER_PERIOD`]; tests take a
    /// shorter one). Set before the ledger is used.
    pub fn with_marker_period(mut self, period: std::time::Duration) -> Ledger {
        self.marker_period_ms = u64::try_from(period.as_millis()).unwrap_or(u64::MAX).max(1);
        let gen = epoch_ms() / self.marker_period_ms;
        self.marker_gen = AtomicU64::new(gen);
        self.markers_kept_from = AtomicU64::new(gen);
        self
    }

    /// Fences a ledger kept in this node's memory: reservations are admitted until `until` and
    /// refused ([`Shortfall::NotHeld`]) after it, until it is moved on again. The holder of the
    /// database's local-ledger lease moves it on at each renewal (`crate::cluster`): a node that
    /// stopped renewing (paused, cut off from the database) stops admitting before the lease
    /// can pass to another node. Settlements of requests already admitted go on.
    pub fn admit_until(&self, until: std::time::Instant) {
        let ms = until
            .checked_duration_since(self.born)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX - 1));
        self.admit_until_ms.store(ms, Ordering::SeqCst);
    }

    /// Whether reservations are admitted now (see [`Ledger::admit_until`]).
    pub fn admitting(&self) -> bool {
        let until = self.admit_until_ms.load(Ordering::Relaxed);
        until == u64::MAX
            || u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX) < until
    }

    /// The marker generation operations take now.
    pub fn marker_generation(&self) -> u64 {
        self.marker_gen.load(Ordering::SeqCst)
    }

    /// Redis mode: once the marker generation's period is over, starts the next one (its hash
    /// made in Redis with its 24-hour expiry) and drops every older generation that no
    /// operation queued, on its way or waiting for a retry belongs to. Cheap when there is
    /// nothing to do; the applier's loop calls it every second. Answers the generations dropped
    /// (a range that may hold some that were never made).
    pub async fn rotate_markers(&self) -> std::ops::Range<u64> {
        let Some(sh) = &self.shared else {
            return 0..0;
        };
        let clock = epoch_ms() / self.marker_period_ms;
        // The generation never goes back (a clock set back keeps the current one).
        let current = self
            .marker_gen
            .fetch_max(clock, Ordering::SeqCst)
            .max(clock);
        if current == self.markers_started.load(Ordering::SeqCst) {
            return 0..0;
        }
        // An operation takes its generation under the lock of what holds it (the queue, or the
        // list of those on their way) and moves between them (queue -> on its way -> retry or
        // back to the queue) before it leaves the one it was in: with all three locked, in that
        // order, every operation that may still be sent is seen, or takes `current`.
        let oldest_held = {
            let queued = Self::lock_queue(&self.queued);
            let retry = Self::lock_queue(&self.retry);
            let in_flight = Self::lock_queue(&self.in_flight);
            queued
                .iter()
                .filter_map(Queued::gen)
                .chain(retry.iter().filter_map(Op::gen))
                .chain(in_flight.iter().copied())
                .min()
        };
        let keep_from = oldest_held.map_or(current, |g| g.min(current));
        let from = self.markers_kept_from.load(Ordering::SeqCst);
        let to = keep_from.clamp(from, from.saturating_add(MARKER_DROP_MAX));
        match sh.rotate_markers(current, from..to).await {
            Ok(()) => {
                self.markers_started.store(current, Ordering::SeqCst);
                self.markers_kept_from.store(to, Ordering::SeqCst);
                from..to
            }
            Err(e) => {
                tracing::warn!("rotating the ledger's operation markers in Redis failed: {e}");
                0..0
            }
        }
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Records the database values of accounts seen for the first time (never overwrites an
    /// account already tracked, which may hold unflushed consumption).
    pub async fn load(&self, l: Loaded) -> Result<(), Shortfall> {
        if let Some(sh) = &self.shared {
            return sh
                .load(
                    l.user_id,
                    l.user_quota,
                    l.token_id,
                    l.token_remain,
                    l.token_unlimited,
                )
                .await
                .map_err(|e| Shortfall::Unavailable(e.to_string()));
        }
        let mut g = self.lock();
        g.users.entry(l.user_id).or_insert(Account {
            balance: l.user_quota,
            ..Default::default()
        });
        if l.token_id > 0 {
            let t = g.tokens.entry(l.token_id).or_insert(Account {
                balance: l.token_remain,
                unlimited: l.token_unlimited,
                ..Default::default()
            });
            t.unlimited = l.token_unlimited;
        }
        Ok(())
    }

    /// Reserves `amount` exactly (per-call prices, tasks).
    pub async fn reserve(
        &self,
        user_id: i64,
        token_id: i64,
        amount: i64,
    ) -> Result<Reservation, Shortfall> {
        let amount = amount.max(0);
        self.reserve_between(
            user_id,
            token_id,
            ReserveBounds {
                min: amount,
                max: amount,
            },
        )
        .await
    }

    /// Reserves as much of `bounds.max` as the user's and the key's balances allow, at least
    /// `bounds.min`; nothing (a shortfall) otherwise. An empty balance admits nothing, not even
    /// a free request.
    pub async fn reserve_between(
        &self,
        user_id: i64,
        token_id: i64,
        bounds: ReserveBounds,
    ) -> Result<Reservation, Shortfall> {
        let min = bounds.min.max(0);
        let max = bounds.max.max(min);
        let id = self.next_id();
        if let Some(sh) = &self.shared {
            if self.lost.load(Ordering::SeqCst) {
                return Err(Shortfall::Unavailable(LOST.into()));
            }
            let expires = crate::shared::reservation_expiry();
            return match sh.reserve(id, user_id, token_id, min, max, expires).await {
                Ok(Reserve::Lost) => {
                    self.lost.store(true, Ordering::SeqCst);
                    // The applier's loop rebuilds.
                    self.queued_signal.notify_one();
                    Err(Shortfall::Unavailable(LOST.into()))
                }
                Ok(Reserve::Ok(amount)) => {
                    self.outstanding.fetch_add(1, Ordering::SeqCst);
                    Ok(Reservation {
                        id,
                        user_id,
                        token_id,
                        amount,
                    })
                }
                Ok(Reserve::UserShort) => Err(Shortfall::User),
                Ok(Reserve::TokenShort) => Err(Shortfall::Token),
                Ok(Reserve::NotLoaded) => Err(Shortfall::NotLoaded),
                Err(e) => {
                    // Redis may have made the reservation and the answer been lost (a
                    // connection cut after the command, a reply later than the timeout): it
                    // would hold the balance until the reaper's two hours. Withdrawn behind
                    // whatever else waits for Redis; the request is refused meanwhile. A
                    // refused connection sent nothing (the common error while Redis is away,
                    // which must not pile up withdrawals to replay when it is back).
                    if !e.is_connection_refusal() {
                        Self::lock_queue(&self.retry).push_back(Op::Cancel { id, expires });
                        self.queued_signal.notify_one();
                    }
                    Err(Shortfall::Unavailable(e.to_string()))
                }
            };
        }
        if !self.admitting() {
            return Err(Shortfall::NotHeld);
        }
        let mut g = self.lock();
        let Some(user) = g.users.get(&user_id).copied() else {
            return Err(Shortfall::NotLoaded);
        };
        if token_id > 0 && !g.tokens.contains_key(&token_id) {
            return Err(Shortfall::NotLoaded);
        }
        let Some(mut free) = rule::available(user.balance, user.reserved, min) else {
            return Err(Shortfall::User);
        };
        if token_id > 0 {
            let t = g.tokens.get(&token_id).copied().unwrap_or_default();
            if !t.unlimited {
                let Some(token_free) = rule::available(t.balance, t.reserved, min) else {
                    return Err(Shortfall::Token);
                };
                free = free.min(token_free);
            }
        }
        let amount = rule::reservation(max, free);
        if let Some(u) = g.users.get_mut(&user_id) {
            u.reserved += amount;
        }
        if let Some(t) = g.tokens.get_mut(&token_id) {
            t.reserved += amount;
        }
        g.held.insert(
            id,
            Held {
                user_id,
                token_id,
                amount,
            },
        );
        self.outstanding.fetch_add(1, Ordering::SeqCst);
        Ok(Reservation {
            id,
            user_id,
            token_id,
            amount,
        })
    }

    /// Releases a reservation without charging (upstream failed before any output). Releasing
    /// one twice does nothing.
    pub fn refund(&self, r: Reservation) {
        if r.id == 0 {
            return;
        }
        if self.shared.is_some() {
            self.outstanding.fetch_sub(1, Ordering::SeqCst);
            Self::lock_queue(&self.queued).push_back(Queued::Refund(r));
            self.queued_signal.notify_one();
            return;
        }
        let mut g = self.lock();
        self.release_local(&mut g, r.id);
    }

    /// Local mode: releases reservation `id` if it is still open; false when it is not (settled
    /// or refunded already).
    fn release_local(&self, g: &mut Inner, id: u64) -> bool {
        let Some(h) = g.held.remove(&id) else {
            return false;
        };
        self.outstanding.fetch_sub(1, Ordering::SeqCst);
        if let Some(u) = g.users.get_mut(&h.user_id) {
            u.reserved -= h.amount;
        }
        if let Some(t) = g.tokens.get_mut(&h.token_id) {
            t.reserved -= h.amount;
        }
        true
    }

    /// Replaces the reservation by the real cost (capped by the balance rule) and queues the
    /// consume record with what was charged. Settling one reservation twice does nothing.
    pub fn settle(&self, r: Reservation, record: ConsumeRecord, tolerance: i64) {
        self.settle_reporting(r, record, tolerance, None);
    }

    /// [`Ledger::settle`], answering what was charged (the cost as the balance rule cut it; 0
    /// when the reservation was settled already). With Redis, once the settlement is applied
    /// (or its charge fixed for a retry). What a later refund may give back is at most this
    /// (a task's charge, docs/billing.md).
    pub async fn settle_charged(
        &self,
        r: Reservation,
        record: ConsumeRecord,
        tolerance: i64,
    ) -> i64 {
        if self.shared.is_none() {
            return self.settle_reporting(r, record, tolerance, None);
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.settle_reporting(r, record, tolerance, Some(tx));
        self.apply_queued().await;
        // Applied by this call or by the applier it waited for; 0 only when the ledger went
        // away with the settlement (nothing is then known to be charged).
        rx.await.unwrap_or(0)
    }

    /// Local mode: the charge. With Redis: 0, the charge goes to `report` when fixed.
    fn settle_reporting(
        &self,
        r: Reservation,
        mut record: ConsumeRecord,
        tolerance: i64,
        report: Option<tokio::sync::oneshot::Sender<i64>>,
    ) -> i64 {
        if self.shared.is_some() {
            let op = if r.id != 0 {
                self.outstanding.fetch_sub(1, Ordering::SeqCst);
                r.id
            } else {
                self.next_id()
            };
            let record = Box::new(record);
            let mut q = Self::lock_queue(&self.queued);
            // Taken under the queue's lock (see `rotate_markers`).
            let gen = self.marker_gen.load(Ordering::SeqCst);
            q.push_back(Queued::Settle {
                r,
                record,
                tolerance,
                op,
                gen,
                report,
            });
            drop(q);
            self.queued_signal.notify_one();
            return 0;
        }
        let mut g = self.lock();
        if r.id != 0 && !self.release_local(&mut g, r.id) {
            tracing::warn!(reservation = r.id, "a reservation was settled twice");
            return 0;
        }
        let mut charge = record.quota.max(0);
        if let Some(u) = g.users.get(&r.user_id) {
            charge = rule::charge(charge, rule::room(u.balance, u.reserved, tolerance));
        }
        if let Some(t) = g.tokens.get(&r.token_id) {
            if !t.unlimited {
                charge = rule::charge(charge, rule::room(t.balance, t.reserved, tolerance));
            }
        }
        note_cap(&mut record, charge);
        if let Some(u) = g.users.get_mut(&r.user_id) {
            u.balance -= charge;
            u.unflushed += charge;
        }
        if let Some(t) = g.tokens.get_mut(&r.token_id) {
            t.balance -= charge;
            t.unflushed += charge;
        }
        self.queue(&mut g, record);
        charge
    }

    /// Redis mode: applies the queued settlements and refunds, then retries what failed before.
    /// A settlement Redis does not take charges at most its reservation (which the balance
    /// covered), its record is queued with that charge and the settlement retried until applied.
    pub async fn apply_queued(&self) {
        let Some(sh) = &self.shared else {
            return;
        };
        let _one_applier = self.apply_lock.lock().await;
        self.apply_locked(sh).await;
    }

    /// [`Ledger::apply_queued`] for at most a few seconds: a flush does not wait long for Redis
    /// (what is still queued goes with the next flush).
    async fn apply_queued_briefly(&self) {
        if self.shared.is_some() {
            let _ =
                tokio::time::timeout(std::time::Duration::from_secs(5), self.apply_queued()).await;
        }
    }

    async fn apply_locked(&self, sh: &Shared) {
        self.retry_failed().await;
        loop {
            let batch = Unapplied::take(self);
            if batch.batch.is_empty() {
                break;
            }
            // Behind operations waiting for a retry, nothing is tried: they go first.
            let mut results = if Self::lock_queue(&self.retry).is_empty() {
                let calls: Vec<Call> = batch
                    .batch
                    .iter()
                    .map(|q| match q {
                        Queued::Refund(r) => sh.refund_call(r.id, r.user_id, r.token_id, r.amount),
                        Queued::Settle {
                            r,
                            record,
                            tolerance,
                            op,
                            gen,
                            ..
                        } => sh.settle_call(&Settlement {
                            id: r.id,
                            op: *op,
                            user: r.user_id,
                            token: r.token_id,
                            amount: r.amount,
                            cost: record.quota.max(0),
                            tolerance: *tolerance,
                            force: false,
                            gen: *gen,
                        }),
                    })
                    .collect();
                sh.run_all(&calls)
                    .await
                    .map_err(|e| {
                        tracing::error!(
                            operations = calls.len(),
                            "settling in Redis failed (retried): {e}"
                        )
                    })
                    .unwrap_or_default()
            } else {
                Vec::new()
            }
            .into_iter();
            // From here on nothing waits: the batch is settled below whatever the caller does.
            let (batch, on_its_way) = batch.into_inner();
            let mut failed = None;
            let mut records = Vec::with_capacity(batch.len());
            {
                let mut retry = Self::lock_queue(&self.retry);
                for q in batch {
                    // None: not tried, or the whole round trip failed.
                    let result = results.next();
                    if let Some(Err(e)) = &result {
                        failed.get_or_insert_with(|| e.to_string());
                    }
                    let applied = result.and_then(Result::ok);
                    match q {
                        Queued::Refund(r) => {
                            if applied.is_none() {
                                retry.push_back(Op::Refund(r));
                            }
                        }
                        Queued::Settle {
                            r,
                            mut record,
                            op,
                            gen,
                            report,
                            ..
                        } => {
                            let charge = match applied {
                                Some(charge) => charge,
                                None => {
                                    let charge = record.quota.max(0).min(r.amount);
                                    retry.push_back(Op::Settle { r, charge, op, gen });
                                    charge
                                }
                            };
                            if let Some(report) = report {
                                let _ = report.send(charge);
                            }
                            note_cap(&mut record, charge);
                            records.push(*record);
                        }
                    }
                }
            }
            // What may be sent again is in the retry queue now.
            drop(on_its_way);
            if let Some(e) = failed {
                tracing::error!("a settlement or refund in Redis failed (retried): {e}");
            }
            let mut g = self.lock();
            for record in records {
                self.queue(&mut g, record);
            }
        }
    }

    /// The Redis call of an operation waiting for a retry (`None`: nothing left to do).
    fn call_of(sh: &Shared, op: &Op) -> Option<Call> {
        Some(match op {
            Op::Settle { r, charge, op, gen } => sh.settle_call(&Settlement {
                id: r.id,
                op: *op,
                user: r.user_id,
                token: r.token_id,
                amount: r.amount,
                cost: *charge,
                tolerance: 0,
                force: true,
                gen: *gen,
            }),
            Op::Refund(r) => sh.refund_call(r.id, r.user_id, r.token_id, r.amount),
            Op::Credit {
                account,
                delta,
                unlimited,
                id,
                gen,
            } => sh.credit_call(*account, *delta, *unlimited, *id, *gen),
            Op::Flushed { amounts, id, gen } => return sh.flushed_call(amounts, *id, *gen),
            Op::Cancel { id, expires } => sh.cancel_call(*id, *expires),
        })
    }

    /// Runs the Redis operations that failed before, in order, [`REDIS_BATCH`] per round trip,
    /// until Redis refuses one again. Those Redis applied leave the queue; those it refused stay
    /// at its front, in their order. Every operation is applied once however often it is sent
    /// (a settlement, credit or flush by its id, a refund or withdrawal by its reservation), so
    /// one whose answer was lost may be sent again.
    async fn retry_failed(&self) {
        let Some(sh) = &self.shared else {
            return;
        };
        loop {
            // Only this (under the applier's lock) takes from the queue; others add at its back.
            let ops: Vec<Op> = Self::lock_queue(&self.retry)
                .iter()
                .take(REDIS_BATCH)
                .cloned()
                .collect();
            if ops.is_empty() {
                return;
            }
            // Operations with nothing left to do count as applied.
            let (sent, calls): (Vec<usize>, Vec<Call>) = ops
                .iter()
                .enumerate()
                .filter_map(|(i, op)| Self::call_of(sh, op).map(|c| (i, c)))
                .unzip();
            let results = match sh.run_all(&calls).await {
                Ok(results) => results,
                Err(e) => {
                    tracing::warn!("Redis still refuses the ledger's operations (retried): {e}");
                    return;
                }
            };
            let mut refused = vec![false; ops.len()];
            let mut first_error = None;
            for (i, result) in sent.into_iter().zip(results) {
                if let Err(e) = result {
                    refused[i] = true;
                    first_error.get_or_insert(e);
                }
            }
            {
                let mut retry = Self::lock_queue(&self.retry);
                let kept: Vec<Op> = retry
                    .drain(..ops.len())
                    .zip(refused)
                    .filter_map(|(op, refused)| refused.then_some(op))
                    .collect();
                for op in kept.into_iter().rev() {
                    retry.push_front(op);
                }
            }
            if let Some(e) = first_error {
                tracing::warn!("Redis still refuses a ledger operation (retried): {e}");
                return;
            }
        }
    }

    /// Runs `op` now, or queues it behind the operations waiting for a retry. `on_its_way` holds
    /// its marker generation until it is applied or queued.
    async fn run_or_queue(&self, op: Op, on_its_way: InFlight<'_>) {
        let Some(sh) = &self.shared else {
            return;
        };
        if Self::lock_queue(&self.retry).is_empty() {
            let res = match Self::call_of(sh, &op) {
                Some(call) => sh.run(&call).await.map(drop),
                None => Ok(()),
            };
            match res {
                Ok(()) => return,
                Err(e) => tracing::error!("a ledger operation in Redis failed (retried): {e}"),
            }
        }
        Self::lock_queue(&self.retry).push_back(op);
        drop(on_its_way);
    }

    /// Waits until something is queued for Redis (the applier's loop).
    pub async fn queued_changed(&self) {
        self.queued_signal.notified().await;
    }

    /// Operations waiting for Redis (queued and failed).
    pub fn redis_backlog(&self) -> usize {
        Self::lock_queue(&self.queued).len() + Self::lock_queue(&self.retry).len()
    }

    /// Reservations handed out and not settled or refunded yet.
    pub fn outstanding(&self) -> i64 {
        self.outstanding.load(Ordering::SeqCst)
    }

    /// A change already committed to the database (a credit, a debit, a key's new quota): the
    /// balance moves by `delta` at once, on every node when the ledger is in Redis.
    pub async fn credit(&self, what: Credit, delta: i64) {
        if self.shared.is_some() {
            let (account, unlimited) = match what {
                Credit::User(id) => (SharedAccount::User(id), None),
                Credit::Token { id, unlimited } => (SharedAccount::Token(id), unlimited),
            };
            let id = self.next_id();
            let (gen, on_its_way) = InFlight::current(self);
            self.run_or_queue(
                Op::Credit {
                    account,
                    delta,
                    unlimited,
                    id,
                    gen,
                },
                on_its_way,
            )
            .await;
            return;
        }
        let mut g = self.lock();
        let acct = match what {
            Credit::User(id) => g.users.get_mut(&id),
            Credit::Token { id, unlimited } => {
                let t = g.tokens.get_mut(&id);
                if let (Some(t), Some(u)) = (t, unlimited) {
                    t.unlimited = u;
                }
                g.tokens.get_mut(&id)
            }
        };
        if let Some(a) = acct {
            a.balance += delta;
            a.version += 1;
        }
    }

    /// A credit (or debit) already committed to the database for this user.
    pub async fn credit_user(&self, user_id: i64, delta: i64) {
        self.credit(Credit::User(user_id), delta).await;
    }

    /// A credit already committed to the database for this key (a refunded task).
    pub async fn credit_token(&self, token_id: i64, delta: i64) {
        self.credit(
            Credit::Token {
                id: token_id,
                unlimited: None,
            },
            delta,
        )
        .await;
    }

    /// Forgets a deleted key (when nothing of it is reserved or unflushed).
    pub fn forget_token(&self, token_id: i64) {
        if let Some(sh) = self.shared.clone() {
            tokio::spawn(async move {
                let _ = sh.forget(SharedAccount::Token(token_id)).await;
            });
        }
        let mut g = self.lock();
        if g.tokens
            .get(&token_id)
            .is_some_and(|t| t.unflushed == 0 && t.reserved == 0)
        {
            g.tokens.remove(&token_id);
        }
    }

    /// Forgets a user (when nothing of it is reserved or unflushed); loaded again on next use.
    pub fn forget_user(&self, user_id: i64) {
        if let Some(sh) = self.shared.clone() {
            tokio::spawn(async move {
                let _ = sh.forget(SharedAccount::User(user_id)).await;
            });
        }
        let mut g = self.lock();
        if g.users
            .get(&user_id)
            .is_some_and(|u| u.unflushed == 0 && u.reserved == 0)
        {
            g.users.remove(&user_id);
        }
    }

    /// The balance this node sees for a user (database value minus unflushed consumption).
    pub fn user_balance(&self, user_id: i64) -> Option<i64> {
        self.lock().users.get(&user_id).map(|u| u.balance)
    }

    /// What a user can still spend: balance minus reservations (from Redis when shared).
    /// `None` when the ledger does not track the user.
    pub async fn user_available(&self, user_id: i64) -> Result<Option<i64>, String> {
        if let Some(sh) = &self.shared {
            return sh.user_available(user_id).await.map_err(|e| e.to_string());
        }
        Ok(self
            .lock()
            .users
            .get(&user_id)
            .map(|u| u.balance - u.reserved))
    }

    /// Sets a key's balance to `value` at once (its remaining quota was set by its owner) and
    /// returns the balance it replaced, `None` when the ledger does not track the key. The
    /// caller writes `value` plus what was consumed and not written yet (database value minus
    /// the returned balance) to the database, so that both end at `value`; settlements that land
    /// in between are charged against the new value (never below zero).
    pub async fn set_token_balance(
        &self,
        token_id: i64,
        value: i64,
    ) -> Result<Option<i64>, String> {
        if let Some(sh) = &self.shared {
            return sh
                .set_balance(SharedAccount::Token(token_id), value)
                .await
                .map_err(|e| e.to_string());
        }
        let mut g = self.lock();
        Ok(g.tokens.get_mut(&token_id).map(|t| {
            let old = t.balance;
            t.balance = value;
            t.version += 1;
            old
        }))
    }

    /// Queues a record that charges nobody (an error log, `quota` 0) with the consume records,
    /// so it is written by the same batched flush; it moves no balance and no rollup.
    pub fn record(&self, record: ConsumeRecord) {
        debug_assert_ne!(record.log_type, LogType::Consume.as_i32());
        self.queue(&mut self.lock(), record);
    }

    pub fn pending_len(&self) -> usize {
        self.lock().pending.len()
    }

    /// Takes every queued record out (the journal at shutdown when the database is away),
    /// waiting for a flush in progress to put its batch back or write it.
    pub async fn take_pending(&self) -> Vec<ConsumeRecord> {
        let _one_writer = self.flush_lock.lock().await;
        std::mem::take(&mut self.lock().pending)
    }

    /// Queues records from the journal of an earlier run (written to the database by the next
    /// flush; idempotent by request id). Their consumption is already in the balances the
    /// database will show once they are written, so no account is charged here.
    pub fn requeue(&self, records: Vec<ConsumeRecord>) {
        self.lock().pending.extend(records);
    }

    /// Writes every queued record in one transaction through `write` (which runs the store's
    /// `settle_batch` and hands the batch back when it is written). On failure the records stay
    /// queued for the next attempt.
    ///
    /// A written batch's buffer, cleared, becomes the next one's while the node is busy (a
    /// batch of at least half [`FLUSH_AT`], in a buffer of at most twice that): the requests
    /// then queue into memory touched already rather than into a new buffer grown by doubling.
    /// After a smaller batch it is let go, so an idle node holds none.
    pub async fn flush<F, Fut, E>(&self, write: F) -> Result<usize, E>
    where
        F: FnOnce(Vec<ConsumeRecord>) -> Fut,
        Fut: std::future::Future<Output = Result<Vec<ConsumeRecord>, (Vec<ConsumeRecord>, E)>>,
    {
        self.apply_queued_briefly().await;
        let _one_writer = self.flush_lock.lock().await;
        let batch = {
            let mut g = self.lock();
            let spare = std::mem::take(&mut g.spare);
            std::mem::replace(&mut g.pending, spare)
        };
        if batch.is_empty() {
            return Ok(0);
        }
        let mut by_user: HashMap<i64, i64> = HashMap::new();
        let mut by_token: HashMap<i64, i64> = HashMap::new();
        // Error logs (and any other non-consume record) charge nobody.
        for r in batch
            .iter()
            .filter(|r| r.log_type == LogType::Consume.as_i32())
        {
            *by_user.entry(r.user_id).or_default() += r.quota;
            if r.token_id > 0 {
                *by_token.entry(r.token_id).or_default() += r.quota;
            }
        }
        let n = batch.len();
        match write(batch).await {
            Ok(mut written) => {
                written.clear();
                {
                    let mut g = self.lock();
                    if n >= FLUSH_AT / 2 && written.capacity() <= 2 * FLUSH_AT {
                        g.spare = written;
                    } else if g.pending.is_empty() {
                        // Quiet again: the buffer swapped in for this batch goes too.
                        g.pending = Vec::new();
                    }
                }
                if self.shared.is_some() {
                    let mut amounts: Vec<(SharedAccount, i64)> = by_user
                        .into_iter()
                        .map(|(id, q)| (SharedAccount::User(id), q))
                        .collect();
                    amounts.extend(
                        by_token
                            .into_iter()
                            .map(|(id, q)| (SharedAccount::Token(id), q)),
                    );
                    let id = self.next_id();
                    let (gen, on_its_way) = InFlight::current(self);
                    self.run_or_queue(Op::Flushed { amounts, id, gen }, on_its_way)
                        .await;
                    return Ok(n);
                }
                let mut g = self.lock();
                for (id, q) in by_user {
                    if let Some(u) = g.users.get_mut(&id) {
                        u.unflushed -= q;
                        u.version += 1;
                    }
                }
                for (id, q) in by_token {
                    if let Some(t) = g.tokens.get_mut(&id) {
                        t.unflushed -= q;
                        t.version += 1;
                    }
                }
                Ok(n)
            }
            Err((batch, e)) => {
                let mut g = self.lock();
                let newer = std::mem::replace(&mut g.pending, batch);
                g.pending.extend(newer);
                Err(e)
            }
        }
    }

    /// Re-reads the database values of every tracked account through `read` and applies them
    /// (`balance = database value - unflushed`), holding the writer lock so that no flush of this
    /// node runs in between; an account credited or flushed (on any node) after its version was
    /// read keeps its balance until the next resync. In Redis mode the tracked accounts are
    /// every account any node loaded. Returns how many accounts were set.
    pub async fn resync_with<F, Fut, E>(&self, read: F) -> Result<usize, E>
    where
        F: FnOnce(Vec<i64>, Vec<i64>) -> Fut,
        Fut: std::future::Future<Output = Result<DbValues, E>>,
        E: From<String>,
    {
        let _one_writer = self.flush_lock.lock().await;
        if let Some(sh) = &self.shared {
            let accounts = sh.accounts().await.map_err(|e| E::from(e.to_string()))?;
            self.resync_shared(sh, accounts, read).await
        } else {
            let (users, tokens, versions) = {
                let g = self.lock();
                let users: Vec<(i64, u64)> = g.users.iter().map(|(k, a)| (*k, a.version)).collect();
                let tokens: Vec<(i64, u64)> =
                    g.tokens.iter().map(|(k, a)| (*k, a.version)).collect();
                (
                    users.iter().map(|u| u.0).collect::<Vec<_>>(),
                    tokens.iter().map(|t| t.0).collect::<Vec<_>>(),
                    (
                        users.into_iter().collect::<HashMap<_, _>>(),
                        tokens.into_iter().collect::<HashMap<_, _>>(),
                    ),
                )
            };
            let db = read(users, tokens).await?;
            let mut g = self.lock();
            let mut n = 0;
            for (id, quota) in db.users {
                if let Some(u) = g.users.get_mut(&id) {
                    if versions.0.get(&id) == Some(&u.version) {
                        u.balance = quota - u.unflushed;
                        n += 1;
                    }
                }
            }
            for (id, remain, unlimited) in db.tokens {
                if let Some(t) = g.tokens.get_mut(&id) {
                    if versions.1.get(&id) == Some(&t.version) {
                        t.balance = remain - t.unflushed;
                        t.unlimited = unlimited;
                        n += 1;
                    }
                }
            }
            Ok(n)
        }
    }

    async fn resync_shared<F, Fut, E>(
        &self,
        sh: &Shared,
        accounts: Vec<SharedAccount>,
        read: F,
    ) -> Result<usize, E>
    where
        F: FnOnce(Vec<i64>, Vec<i64>) -> Fut,
        Fut: std::future::Future<Output = Result<DbValues, E>>,
        E: From<String>,
    {
        let versions = sh
            .versions(&accounts)
            .await
            .map_err(|e| E::from(e.to_string()))?;
        let mut ver: HashMap<SharedAccount, i64> = HashMap::new();
        for (a, v) in accounts.iter().zip(versions) {
            ver.insert(*a, v);
        }
        let users = accounts
            .iter()
            .filter_map(|a| match a {
                SharedAccount::User(id) => Some(*id),
                SharedAccount::Token(_) => None,
            })
            .collect();
        let tokens = accounts
            .iter()
            .filter_map(|a| match a {
                SharedAccount::Token(id) => Some(*id),
                SharedAccount::User(_) => None,
            })
            .collect();
        let db = read(users, tokens).await?;
        let mut values = Vec::with_capacity(db.users.len() + db.tokens.len());
        for (id, q) in db.users {
            let a = SharedAccount::User(id);
            values.push((a, q, None, ver.get(&a).copied().unwrap_or(0)));
        }
        for (id, q, unl) in db.tokens {
            let a = SharedAccount::Token(id);
            values.push((a, q, Some(unl), ver.get(&a).copied().unwrap_or(0)));
        }
        sh.resync(&values).await.map_err(|e| E::from(e.to_string()))
    }

    /// Redis mode: drops what dead nodes left unwritten or reserved and sets the accounts they
    /// touched from the database through `read`. Returns how many accounts were set.
    pub async fn reclaim_dead_with<F, Fut, E>(&self, read: F) -> Result<usize, E>
    where
        F: FnOnce(Vec<i64>, Vec<i64>) -> Fut,
        Fut: std::future::Future<Output = Result<DbValues, E>>,
        E: From<String>,
    {
        self.reclaim_with(false, read).await
    }

    /// Redis mode: whether the balances must be rebuilt (a reservation found that Redis lost its
    /// data); the applier's loop also asks Redis itself ([`crate::shared::Shared::epoch_lost`]).
    pub fn needs_rebuild(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// Redis mode, after Redis lost its data (restarted without persistence, flushed): rebuilds
    /// the balances from the database before anything is admitted again. Nothing is admitted
    /// meanwhile. Under the applier's and the writer's locks: the settlements queued are applied
    /// (to the new data set: the charges their records keep are what the database gets), every
    /// consume record of this node is written through `write` *without* telling Redis (the
    /// amounts it would subtract were lost with the data), this node's unwritten fields go,
    /// every account Redis holds is set from the database through `read` (`balance = database
    /// value - what the other nodes have not written yet`), and the node takes the data set's
    /// epoch. Operations waiting for a retry belonged to the lost data: their effects are in
    /// the database (credits, flushes) or in the records (settlements), so they go. Returns the
    /// accounts set; an error leaves the node refusing, to try again.
    pub async fn rebuild_with<W, WFut, R, RFut, E>(&self, write: W, read: R) -> Result<usize, E>
    where
        W: FnOnce(Vec<ConsumeRecord>) -> WFut,
        WFut: std::future::Future<Output = Result<Vec<ConsumeRecord>, (Vec<ConsumeRecord>, E)>>,
        R: FnOnce(Vec<i64>, Vec<i64>) -> RFut,
        RFut: std::future::Future<Output = Result<DbValues, E>>,
        E: From<String>,
    {
        let Some(sh) = &self.shared else {
            return Ok(0);
        };
        self.lost.store(true, Ordering::SeqCst);
        let _one_applier = self.apply_lock.lock().await;
        Self::lock_queue(&self.retry).clear();
        self.apply_locked(sh).await;
        let _one_writer = self.flush_lock.lock().await;
        let batch = std::mem::take(&mut self.lock().pending);
        if !batch.is_empty() {
            if let Err((batch, e)) = write(batch).await {
                let mut g = self.lock();
                let newer = std::mem::replace(&mut g.pending, batch);
                g.pending.extend(newer);
                return Err(e);
            }
        }
        // What the applier above could not apply waits for a retry against the new data set:
        // its records were written already, so it goes too.
        Self::lock_queue(&self.retry).clear();
        let e = |e: redis::RedisError| E::from(e.to_string());
        sh.drop_unflushed().await.map_err(e)?;
        let accounts = sh.accounts().await.map_err(e)?;
        let n = self.resync_shared(sh, accounts, read).await?;
        sh.adopt_epoch().await.map_err(e)?;
        self.lost.store(false, Ordering::SeqCst);
        Ok(n)
    }

    /// Redis mode, at start: this node's unwritten consumption and reservations of an earlier
    /// run are dropped (the journal of that run was written to the database before) and the
    /// accounts they touched are set from the database through `read`. Returns how many.
    pub async fn reconcile_with<F, Fut, E>(&self, read: F) -> Result<usize, E>
    where
        F: FnOnce(Vec<i64>, Vec<i64>) -> Fut,
        Fut: std::future::Future<Output = Result<DbValues, E>>,
        E: From<String>,
    {
        self.reclaim_with(true, read).await
    }

    /// What this node (`own`: at start, after a heartbeat) or dead nodes left in Redis is dropped,
    /// then the accounts it touched are set from the database.
    async fn reclaim_with<F, Fut, E>(&self, own: bool, read: F) -> Result<usize, E>
    where
        F: FnOnce(Vec<i64>, Vec<i64>) -> Fut,
        Fut: std::future::Future<Output = Result<DbValues, E>>,
        E: From<String>,
    {
        let Some(sh) = &self.shared else {
            return Ok(0);
        };
        let _one_writer = self.flush_lock.lock().await;
        let accounts = if own {
            sh.heartbeat().await.map_err(|e| E::from(e.to_string()))?;
            sh.reclaim().await
        } else {
            sh.reclaim_dead().await
        }
        .map_err(|e| E::from(e.to_string()))?;
        if accounts.is_empty() {
            return Ok(0);
        }
        self.resync_shared(sh, accounts, read).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use switchboard_store::testing::consume_record as record;

    async fn ledger(user: i64, token: i64, unlimited: bool) -> Ledger {
        let l = Ledger::default();
        let loaded = Loaded {
            user_id: 1,
            user_quota: user,
            token_id: 7,
            token_remain: token,
            token_unlimited: unlimited,
        };
        l.load(loaded).await.unwrap();
        l
    }

    fn values(user: i64, token: i64) -> DbValues {
        DbValues {
            users: vec![(1, user)],
            tokens: vec![(7, token, false)],
        }
    }

    /// The time fence of a node without Redis: nothing is admitted once the instant its last
    /// renewal allowed has passed (a paused node resumes refusing, before any renewal could
    /// tell it another node took the lease), and admission resumes when it is moved on;
    /// settling what was admitted before still works.
    #[tokio::test]
    async fn admission_stops_when_the_fence_passes() {
        let l = ledger(100, 1000, false).await;
        assert!(l.admitting(), "unfenced by default");
        let now = std::time::Instant::now();
        l.admit_until(now + std::time::Duration::from_secs(60));
        let held = l.reserve(1, 7, 10).await.unwrap();
        l.admit_until(now);
        assert!(!l.admitting());
        assert_eq!(l.reserve(1, 7, 10).await.unwrap_err(), Shortfall::NotHeld);
        l.settle(held, record(1, 7, 10), 0);
        assert_eq!(l.user_balance(1), Some(90));
        l.admit_until(std::time::Instant::now() + std::time::Duration::from_secs(60));
        assert!(l.reserve(1, 7, 10).await.is_ok());
    }

    #[tokio::test]
    async fn reservations_never_exceed_the_balance() {
        let l = ledger(100, 1000, false).await;
        assert_eq!(l.reserve(2, 7, 1).await.unwrap_err(), Shortfall::NotLoaded);
        let a = l.reserve(1, 7, 60).await.unwrap();
        assert_eq!(l.reserve(1, 7, 41).await.unwrap_err(), Shortfall::User);
        let b = l.reserve(1, 7, 40).await.unwrap();
        l.refund(a);
        l.settle(b, record(1, 7, 25), 0);
        assert_eq!(l.user_balance(1), Some(75));
        assert!(l.reserve(1, 7, 75).await.is_ok());
        assert_eq!(l.outstanding(), 1);
    }

    #[tokio::test]
    async fn a_flexible_reservation_takes_what_the_balance_allows() {
        let l = ledger(100, 1000, false).await;
        let wide = ReserveBounds { min: 10, max: 500 };
        let a = l.reserve_between(1, 7, wide).await.unwrap();
        assert_eq!(a.amount, 100, "all of the balance, not the worst case");
        assert_eq!(
            l.reserve_between(1, 7, wide).await.unwrap_err(),
            Shortfall::User,
            "nothing left for a second request"
        );
        l.refund(a);
        let l = ledger(1000, 30, false).await;
        let a = l.reserve_between(1, 7, wide).await.unwrap();
        assert_eq!(a.amount, 30, "the key's quota limits too");
        assert_eq!(
            l.reserve_between(1, 7, ReserveBounds { min: 1, max: 1 })
                .await
                .unwrap_err(),
            Shortfall::Token
        );
    }

    #[tokio::test]
    async fn a_settlement_never_takes_the_balance_below_zero() {
        let l = ledger(100, 1000, false).await;
        let a = l.reserve(1, 7, 30).await.unwrap();
        let b = l.reserve(1, 7, 30).await.unwrap();
        // The first request cost far more than it reserved: it may take what nobody holds
        // (100 - 30 held by b = 70), not b's reservation.
        l.settle(a, record(1, 7, 500), 0);
        assert_eq!(l.user_balance(1), Some(30));
        l.settle(b, record(1, 7, 500), 0);
        assert_eq!(l.user_balance(1), Some(0));
        let written = l.take_pending().await;
        assert_eq!(written[0].quota, 70);
        assert_eq!(written[1].quota, 30);
        assert!(
            written[0]
                .metadata
                .starts_with("{\"uncapped_quota\":500,\"group_ratio\""),
            "{}",
            written[0].metadata
        );
        // With a tolerance the balance may go that far below zero, and no further.
        let l = ledger(100, 1000, true).await;
        let a = l.reserve(1, 7, 100).await.unwrap();
        l.settle(a, record(1, 7, 1000), 50);
        assert_eq!(l.user_balance(1), Some(-50));
    }

    #[tokio::test]
    async fn settling_or_refunding_twice_does_nothing() {
        let l = ledger(100, 1000, false).await;
        let a = l.reserve(1, 7, 10).await.unwrap();
        l.settle(a, record(1, 7, 10), 0);
        l.settle(a, record(1, 7, 10), 0);
        l.refund(a);
        assert_eq!(l.user_balance(1), Some(90));
        assert_eq!(l.pending_len(), 1);
        assert_eq!(l.outstanding(), 0);
        assert!(l.reserve(1, 7, 90).await.is_ok(), "nothing is held twice");
    }

    #[tokio::test]
    async fn token_limits_apply_unless_unlimited() {
        let l = ledger(1000, 10, false).await;
        assert_eq!(l.reserve(1, 7, 11).await.unwrap_err(), Shortfall::Token);
        let l = ledger(1000, 0, true).await;
        assert!(l.reserve(1, 7, 500).await.is_ok());
        let empty = ledger(0, 10, false).await;
        assert_eq!(
            empty.reserve(1, 7, 0).await.unwrap_err(),
            Shortfall::User,
            "an empty balance admits nothing"
        );
    }

    #[tokio::test]
    async fn flush_keeps_records_on_failure_and_balances_converge() {
        let l = ledger(100, 100, false).await;
        let r = l.reserve(1, 7, 10).await.unwrap();
        l.settle(r, record(1, 7, 10), 0);
        let failed: Result<usize, &str> = l.flush(|b| async move { Err((b, "db down")) }).await;
        assert!(failed.is_err());
        assert_eq!(l.pending_len(), 1);
        let r = l.reserve(1, 7, 5).await.unwrap();
        l.settle(r, record(1, 7, 5), 0);
        let ok: Result<usize, &str> = l
            .flush(|b| async move {
                assert_eq!(b.len(), 2);
                Ok(b)
            })
            .await;
        assert_eq!(ok, Ok(2));
        // The database now holds 85; a resync keeps 85 (nothing unflushed).
        let res: Result<usize, String> = l.resync_with(|_, _| async { Ok(values(85, 85)) }).await;
        assert_eq!(res, Ok(2));
        assert_eq!(l.user_balance(1), Some(85));
        // Another node spent 20: the resync brings the balance down, minus what is unflushed here.
        let r = l.reserve(1, 7, 5).await.unwrap();
        l.settle(r, record(1, 7, 5), 0);
        let res: Result<usize, String> = l.resync_with(|_, _| async { Ok(values(65, 65)) }).await;
        assert!(res.is_ok());
        assert_eq!(l.user_balance(1), Some(60));
    }

    fn error_record() -> ConsumeRecord {
        ConsumeRecord {
            log_type: LogType::Error.as_i32(),
            ..record(1, 7, 0)
        }
    }

    #[tokio::test]
    async fn a_full_batch_wakes_the_flusher_before_its_tick() {
        use futures_util::FutureExt;
        let l = ledger(1000, 1000, false).await;
        for _ in 0..FLUSH_AT - 1 {
            l.record(error_record());
        }
        assert!(
            l.batch_ready().now_or_never().is_none(),
            "a batch short of FLUSH_AT waits for the tick"
        );
        // A consume record settled like any other completes the batch.
        let r = l.reserve(1, 7, 1).await.unwrap();
        l.settle(r, record(1, 7, 1), 0);
        assert!(l.batch_ready().now_or_never().is_some());
        assert!(
            l.batch_ready().now_or_never().is_none(),
            "woken once per full batch"
        );
        let n: Result<usize, &str> = l.flush(|b| async move { Ok(b) }).await;
        assert_eq!(n, Ok(FLUSH_AT));
        // A write that fails puts the batch back without waking the flusher again: the tick
        // paces the retries while the database is away.
        for _ in 0..FLUSH_AT {
            l.record(error_record());
        }
        assert!(l.batch_ready().now_or_never().is_some());
        let failed: Result<usize, &str> = l.flush(|b| async move { Err((b, "db down")) }).await;
        assert!(failed.is_err());
        l.record(error_record());
        assert_eq!(l.pending_len(), FLUSH_AT + 1);
        assert!(l.batch_ready().now_or_never().is_none());
    }

    #[tokio::test]
    async fn a_busy_node_queues_into_a_written_batchs_buffer_and_an_idle_one_keeps_none() {
        let l = ledger(1000, 1000, false).await;
        let capacity = |l: &Ledger| l.lock().pending.capacity();
        let full_batch = |l: &Ledger| {
            for _ in 0..FLUSH_AT {
                l.record(error_record());
            }
        };
        // Busy: two buffers take turns, so after the first two full batches the queue never
        // grows a buffer again (the records queued during a write go into the other one).
        for _ in 0..2 {
            full_batch(&l);
            let n: Result<usize, &str> = l.flush(|b| async move { Ok(b) }).await;
            assert_eq!(n, Ok(FLUSH_AT));
        }
        assert!(capacity(&l) >= FLUSH_AT, "{}", capacity(&l));
        full_batch(&l);
        assert_eq!(capacity(&l), FLUSH_AT, "no growing, no copying");
        let n: Result<usize, &str> = l.flush(|b| async move { Ok(b) }).await;
        assert_eq!(n, Ok(FLUSH_AT));
        // Quiet again: the first small batch lets both buffers go.
        l.record(error_record());
        let n: Result<usize, &str> = l.flush(|b| async move { Ok(b) }).await;
        assert_eq!(n, Ok(1));
        assert_eq!((capacity(&l), l.lock().spare.capacity()), (0, 0));
    }

    #[tokio::test]
    async fn a_credit_racing_a_resync_is_counted_once() {
        let l = Arc::new(ledger(100, 100, false).await);
        // The resync reads the database after a credit of 50 was committed, but the credit
        // reaches the ledger only after that read: the stale read must not be applied on top.
        let l2 = Arc::clone(&l);
        let res: Result<usize, String> = l
            .resync_with(|_, _| async move {
                l2.credit_user(1, 50).await;
                Ok(values(150, 100))
            })
            .await;
        assert_eq!(res, Ok(1), "only the key was set");
        assert_eq!(l.user_balance(1), Some(150), "the credit counted once");
        // A credit committed and applied before the read: the resync sets the same value.
        let res: Result<usize, String> = l.resync_with(|_, _| async { Ok(values(150, 100)) }).await;
        assert_eq!(res, Ok(2));
        assert_eq!(l.user_balance(1), Some(150));
    }
}
