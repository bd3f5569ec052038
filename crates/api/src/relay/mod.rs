//! The relay path: `/v1/*` requests authenticated by `sk-` keys, priced, reserved against the
//! ledger, dispatched to a channel by priority and weight with retries, streamed back as they
//! arrive, and settled exactly once from the real usage.
//!
//! Everything this path needs is held in memory ([`RelayState`]): keys (with a short TTL and
//! local invalidation), the channel snapshot, prices, group ratios, rate-limit states, frozen
//! channels and the ledger. The database is touched only on a cache miss and by the batched
//! ledger flush.

pub mod cache;
pub mod edge;
pub mod gather;
pub mod gemini;
pub mod gemini_methods;
pub mod handler;
pub mod heartbeat;
pub mod realtime;
pub mod record;
pub mod responses;
pub mod snapshot;
pub mod tasks;

use crate::error::{ApiError, ApiResult};
use crate::AppState;
use dashmap::DashMap;
use snapshot::Snapshot;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use switchboard_domain::options::OptionValues;
use switchboard_domain::price::{Price, PriceTable};
use switchboard_domain::ratelimit::{self, BucketState, Policy, WindowState};
use switchboard_domain::token::IpAllowList;
use switchboard_ledger::Ledger;
use switchboard_ledger::{self as ledger, shared};
use switchboard_relay::provider::ClientPool;

/// Whether `ch`'s upstream calls follow the outbound URL policy: its destination was not last
/// set by root and the `AllowPrivateOutbound` setting is off (docs/security.md).
pub fn public_only(state: &AppState, ch: &snapshot::ChannelInfo) -> bool {
    !ch.destination_by_root
        && !crate::settings::View(&state.settings.snapshot()).bool("AllowPrivateOutbound")
}

/// The HTTP client for `ch`'s upstream calls: the shared client of its proxy, or, under the
/// outbound URL policy ([`public_only`]), one that connects to public addresses only (its
/// non-public IP literals refused before connecting: a [`RelayError::Channel`]).
pub fn channel_client(
    state: &AppState,
    ch: &snapshot::ChannelInfo,
) -> Result<reqwest::Client, switchboard_relay::error::RelayError> {
    state
        .relay
        .clients
        .for_channel(&ch.target, public_only(state, ch))
}

/// A new request id: the time in milliseconds (hex), this process's random tag and a counter,
/// 24 characters. Unique across nodes and restarts (the tag), and rising within a process, so
/// that the consume logs' unique index on it is appended to rather than written at random.
/// Written digit by digit: one per request, and `format!` with padding cost ~1,500
/// instructions.
pub fn request_id() -> switchboard_store::logs::Text {
    use std::sync::atomic::{AtomicU64, Ordering};
    static TAG: std::sync::OnceLock<[u8; 6]> = std::sync::OnceLock::new();
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let tag = TAG.get_or_init(|| {
        let mut tag = [b'0'; 6];
        for (t, c) in tag.iter_mut().zip(crate::auth::random_string(6).bytes()) {
            *t = c.to_ascii_lowercase();
        }
        tag
    });
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let seq = SEQ.fetch_add(1, Ordering::Relaxed) & 0xff_ffff;
    let mut id = [0u8; 24];
    put_hex(
        &mut id[..11],
        u64::try_from(millis & 0xfff_ffff_ffff).unwrap_or(0),
    );
    id[11..17].copy_from_slice(tag);
    put_hex(&mut id[17..], seq);
    // ASCII throughout (hex digits and the alphanumeric tag), so the lossy reading never
    // replaces anything and costs what a checked one does; unlike a fallback to an empty text it
    // could never hand two requests one id. 24 bytes: kept inline, no allocation.
    switchboard_store::logs::Text::from_utf8_lossy(&id)
}

/// Writes the low digits of `v` in lowercase hex, zero-padded, filling `out`.
fn put_hex(out: &mut [u8], mut v: u64) {
    for digit in out.iter_mut().rev() {
        *digit = b"0123456789abcdef"[usize::try_from(v & 0xf).unwrap_or(0)];
        v >>= 4;
    }
}

/// How long a key stays cached; changes made on another node reach this one within it.
pub const TOKEN_CACHE_TTL: Duration = Duration::from_secs(30);

/// A key with its owner, as the relay checks it.
#[derive(Debug, Clone)]
pub struct AuthToken {
    pub id: i64,
    pub name: String,
    pub status: i32,
    pub expired_at: i64,
    pub group: String,
    pub models: Vec<String>,
    pub subnet: IpAllowList,
    pub api_rate: i32,
    /// The key's response-cache toggle (answers come from the cache only when the site's
    /// `ChatCacheEnabled` is on too).
    pub cache_enabled: bool,
    /// Seconds of upstream silence after which a stream gets keep-alive comments (every
    /// [`heartbeat::EVERY`]); `None` when the key's heartbeat is off.
    pub heartbeat_after: Option<Duration>,
    pub user_id: i64,
    pub username: String,
    pub user_status: i32,
    pub user_role: i32,
    pub user_group: String,
}

impl AuthToken {
    /// The group that prices and routes this key's requests: the key's, else the user's.
    pub fn group(&self) -> &str {
        if self.group.is_empty() {
            &self.user_group
        } else {
            &self.group
        }
    }
}

#[derive(Debug, Clone)]
pub struct GroupInfo {
    pub ratio: f64,
    pub api_rate: i32,
    /// Any user may pin a key to it; otherwise only members (their own group) and administrators.
    pub public: bool,
}

enum LimitState {
    Window(WindowState),
    Bucket(BucketState),
}

/// The relay's concurrent maps hash with foldhash (keys are ids, key hashes and names).
type Fold = foldhash::fast::RandomState;

pub struct RelayState {
    pub ledger: Ledger,
    tokens: DashMap<String, (Arc<AuthToken>, Instant), Fold>,
    /// Keys being read from the database, so that concurrent misses for one key (every request
    /// in flight when its cache entry expires) wait for one read instead of each making its own.
    loading: Gates<String>,
    /// (user, key) balances being read into the ledger ([`RelayState::one_ledger_load`]).
    ledger_loading: Gates<(i64, i64)>,
    channels: RwLock<Arc<Snapshot>>,
    prices: RwLock<Arc<PriceTable>>,
    groups: RwLock<Arc<HashMap<String, GroupInfo>>>,
    channel_reloads: Reloads,
    pricing_reloads: Reloads,
    frozen: DashMap<i64, Instant, Fold>,
    limits: DashMap<String, LimitState, Fold>,
    /// Circuit breakers and latency per (channel, model), this node's own (smarter routing).
    pub health: switchboard_relay::health::Health,
    pub clients: ClientPool,
    started: Instant,
    /// Redis, when nodes share state.
    shared: Option<shared::Shared>,
    /// Unix time of the last ledger flush that left nothing it could write behind (`/metrics`).
    pub last_flush: std::sync::atomic::AtomicI64,
}

impl Default for RelayState {
    fn default() -> Self {
        RelayState {
            ledger: Ledger::default(),
            tokens: DashMap::default(),
            loading: Gates::default(),
            ledger_loading: Gates::default(),
            channels: RwLock::new(Arc::new(Snapshot::default())),
            prices: RwLock::new(Arc::new(PriceTable::new(
                switchboard_domain::price::default_prices(),
            ))),
            groups: RwLock::new(Arc::new(HashMap::new())),
            channel_reloads: Reloads::default(),
            pricing_reloads: Reloads::default(),
            frozen: DashMap::default(),
            limits: DashMap::default(),
            health: switchboard_relay::health::Health::default(),
            clients: ClientPool::new(),
            started: Instant::now(),
            last_flush: std::sync::atomic::AtomicI64::new(switchboard_store::now()),
            shared: None,
        }
    }
}

fn read<T>(l: &RwLock<Arc<T>>) -> Arc<T> {
    match l.read() {
        Ok(g) => Arc::clone(&g),
        Err(p) => Arc::clone(&p.into_inner()),
    }
}

fn write<T>(l: &RwLock<Arc<T>>, v: T) {
    match l.write() {
        Ok(mut g) => *g = Arc::new(v),
        Err(p) => *p.into_inner() = Arc::new(v),
    }
}

/// One gate per key, so that concurrent loads of one thing (a key from the database, an
/// account's balances) run one at a time: the first caller loads, the others wait for it and
/// then find what it loaded. A key's gate lives only while someone holds or awaits it.
#[derive(Default)]
struct Gates<K: Eq + std::hash::Hash>(DashMap<K, Arc<tokio::sync::Mutex<()>>, Fold>);

impl<K: Eq + std::hash::Hash + Clone> Gates<K> {
    /// Runs `f` while holding `key`'s gate.
    async fn one_at_a_time<T, Fut>(&self, key: K, f: impl FnOnce() -> Fut) -> T
    where
        Fut: std::future::Future<Output = T>,
    {
        let gate = Arc::clone(self.0.entry(key.clone()).or_default().value());
        let held = Held {
            gates: &self.0,
            key,
            gate,
        };
        let _turn = held.gate.lock().await;
        f().await
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A caller's hold on a gate. Dropped, also when the caller is (its client went away while it
/// waited or loaded), it removes the gate if no one else holds it: held by the map and by this
/// hold only, a count of 2.
struct Held<'a, K: Eq + std::hash::Hash> {
    gates: &'a DashMap<K, Arc<tokio::sync::Mutex<()>>, Fold>,
    key: K,
    gate: Arc<tokio::sync::Mutex<()>>,
}

impl<K: Eq + std::hash::Hash> Drop for Held<'_, K> {
    fn drop(&mut self) {
        self.gates
            .remove_if(&self.key, |_, g| Arc::strong_count(g) <= 2);
    }
}

/// Orders reloads of one snapshot that may overlap (a change made here, another node's message,
/// the resync after (re)subscribing, the periodic one): each takes a ticket before it reads the
/// database and keeps its result only if no reload that began later has been kept already. A
/// later reload read the database later, so it saw at least as much; without this, a reload
/// that began before a change and finished after the change's own reload put the old snapshot
/// back until the next periodic reload (seen: the price set just after start-up lost to the
/// subscriber's first resync).
#[derive(Debug, Default)]
pub struct Reloads {
    next: std::sync::atomic::AtomicU64,
    kept: std::sync::Mutex<u64>,
}

impl Reloads {
    /// The ticket of a reload about to read the database.
    pub fn begin(&self) -> u64 {
        self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
    }

    /// Runs `keep` (the write of the reloaded snapshot) unless a reload that began after
    /// `ticket` has been kept; returns whether it ran.
    pub fn keep(&self, ticket: u64, keep: impl FnOnce()) -> bool {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if ticket < *kept {
            return false;
        }
        *kept = ticket;
        keep();
        true
    }
}

impl RelayState {
    /// Shares balances, reservations and rate limits with the other nodes through Redis.
    pub fn attach(&mut self, shared: shared::Shared) {
        self.ledger.attach(shared.clone());
        self.shared = Some(shared);
    }

    pub fn shared(&self) -> Option<&shared::Shared> {
        self.shared.as_ref()
    }

    pub fn snapshot(&self) -> Arc<Snapshot> {
        read(&self.channels)
    }

    pub fn prices(&self) -> Arc<PriceTable> {
        read(&self.prices)
    }

    pub fn groups(&self) -> Arc<HashMap<String, GroupInfo>> {
        read(&self.groups)
    }

    /// The group a key's request is priced and routed in, checked now rather than when the key
    /// was made: the group must be enabled, and a key pinned to a group other than its owner's
    /// needs the group to be public or the owner to be an administrator. A user moved out of a
    /// private group therefore loses it on every key at once (the owner's group and role come
    /// from the key cache, which a user change empties; groups reload on every group change).
    /// `None` answers `group_not_available`.
    pub fn key_group(&self, token: &AuthToken) -> Option<(String, GroupInfo)> {
        let group = token.group();
        let info = self.groups().get(group).cloned()?;
        let own = token.group.is_empty() || token.group == token.user_group;
        let admin = switchboard_domain::user::Role::from_stored(token.user_role).is_admin();
        (own || info.public || admin).then(|| (group.to_owned(), info))
    }

    pub fn cached_token(&self, digest: &str) -> Option<Arc<AuthToken>> {
        let hit = self.tokens.get(digest)?;
        if hit.1.elapsed() < TOKEN_CACHE_TTL {
            Some(Arc::clone(&hit.0))
        } else {
            None
        }
    }

    /// The key `digest` from the cache, else from `load` (`Ok(None)`: no such key), which runs
    /// once for concurrent misses of one key: the others wait for it and take its result from
    /// the cache. A key that is not found is not cached; each waiter then looks it up itself.
    pub async fn token_or_load<E, F, Fut>(
        &self,
        digest: &str,
        load: F,
    ) -> Result<Option<Arc<AuthToken>>, E>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Option<Arc<AuthToken>>, E>>,
    {
        if let Some(t) = self.cached_token(digest) {
            return Ok(Some(t));
        }
        self.loading
            .one_at_a_time(digest.to_owned(), || async {
                if let Some(t) = self.cached_token(digest) {
                    return Ok(Some(t));
                }
                let loaded = load().await;
                if let Ok(Some(t)) = &loaded {
                    self.cache_token(digest.to_owned(), Arc::clone(t));
                }
                loaded
            })
            .await
    }

    /// Runs `load` (reading a user's and a key's balances into the ledger) for one request at a
    /// time per (user, key): the requests that find the same accounts unknown at once (every
    /// request in flight on a cold start, or after the accounts were forgotten) wait for the
    /// first one's read and then find them loaded, instead of each taking a database connection
    /// of its own (a cold start at 32 concurrent requests left up to 11 open).
    pub async fn one_ledger_load<T, Fut>(
        &self,
        user_id: i64,
        token_id: i64,
        load: impl FnOnce() -> Fut,
    ) -> T
    where
        Fut: std::future::Future<Output = T>,
    {
        self.ledger_loading
            .one_at_a_time((user_id, token_id), load)
            .await
    }

    pub fn cache_token(&self, digest: String, t: Arc<AuthToken>) {
        if self.tokens.len() > 100_000 {
            self.tokens.retain(|_, v| v.1.elapsed() < TOKEN_CACHE_TTL);
        }
        self.tokens.insert(digest, (t, Instant::now()));
    }

    /// A key changed or was deleted: drop it from the cache and the ledger, here and (through
    /// Redis) on the other nodes.
    pub fn forget_token(&self, id: i64, digest: &str) {
        self.tokens.remove(digest);
        self.ledger.forget_token(id);
        crate::coherence::publish_via(
            self.shared(),
            crate::coherence::Change::Token {
                id,
                digest: digest.to_owned(),
            },
        );
    }

    /// Another node changed a key: drop it from this node's cache (its balance lives in Redis).
    pub fn forget_token_here(&self, _id: i64, digest: &str) {
        self.tokens.remove(digest);
    }

    /// Another node's change this node may have missed: every key is read again.
    pub fn forget_all_tokens_here(&self) {
        self.tokens.clear();
    }

    /// A key was edited: drop it from the cache (here and on the other nodes); its balance moves
    /// by `delta` (the change of its remaining quota) and takes the new unlimited flag.
    pub async fn token_changed(&self, id: i64, digest: &str, delta: i64, unlimited: bool) {
        self.tokens.remove(digest);
        crate::coherence::publish_via(
            self.shared(),
            crate::coherence::Change::Token {
                id,
                digest: digest.to_owned(),
            },
        );
        self.ledger
            .credit(
                ledger::Credit::Token {
                    id,
                    unlimited: Some(unlimited),
                },
                delta,
            )
            .await;
    }

    /// A user changed (status, group, role, quota): drop every cached key, here and on the
    /// other nodes.
    pub fn forget_user(&self, user_id: i64) {
        self.tokens.retain(|_, v| v.0.user_id != user_id);
        self.ledger.forget_user(user_id);
        crate::coherence::publish_via(
            self.shared(),
            crate::coherence::Change::User { id: user_id },
        );
    }

    /// Another node changed a user: drop this node's cached keys of theirs.
    pub fn forget_user_here(&self, user_id: i64) {
        self.tokens.retain(|_, v| v.0.user_id != user_id);
    }

    pub fn is_frozen(&self, channel_id: i64) -> bool {
        self.frozen
            .get(&channel_id)
            .is_some_and(|until| Instant::now() < *until)
    }

    pub fn freeze(&self, channel_id: i64, for_: Duration) {
        if !for_.is_zero() {
            self.frozen.insert(channel_id, Instant::now() + for_);
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Counts one request against an `api_rate` (requests per minute) under `key`; false when
    /// over the limit. Shared by all nodes through Redis when configured (a Redis failure lets
    /// the request through rather than failing it), else per process.
    pub async fn allow(&self, key: &str, rpm: i32) -> bool {
        if let Some(sh) = &self.shared {
            let r = match ratelimit::policy_for_rpm(rpm) {
                Policy::Unlimited => return true,
                Policy::Window { limit, window_ms } => sh.allow_window(key, limit, window_ms).await,
                Policy::Bucket {
                    capacity,
                    refill_per_ms,
                } => sh.allow_bucket(key, capacity, refill_per_ms).await,
            };
            return r.unwrap_or_else(|e| {
                tracing::warn!("rate limit check in Redis failed, allowing: {e}");
                true
            });
        }
        self.allow_local(key, rpm)
    }

    fn allow_local(&self, key: &str, rpm: i32) -> bool {
        let now = self.now_ms();
        match ratelimit::policy_for_rpm(rpm) {
            Policy::Unlimited => true,
            Policy::Window { limit, window_ms } => {
                let mut e = self
                    .limits
                    .entry(key.to_owned())
                    .or_insert(LimitState::Window(WindowState::default()));
                match &mut *e {
                    LimitState::Window(s) => ratelimit::check_window(s, limit, window_ms, now),
                    other => {
                        let mut s = WindowState::default();
                        let ok = ratelimit::check_window(&mut s, limit, window_ms, now);
                        *other = LimitState::Window(s);
                        ok
                    }
                }
            }
            Policy::Bucket {
                capacity,
                refill_per_ms,
            } => {
                let mut e = self
                    .limits
                    .entry(key.to_owned())
                    .or_insert_with(|| LimitState::Bucket(BucketState::full(capacity, now)));
                match &mut *e {
                    LimitState::Bucket(s) => {
                        ratelimit::check_bucket(s, capacity, refill_per_ms, now)
                    }
                    other => {
                        let mut s = BucketState::full(capacity, now);
                        let ok = ratelimit::check_bucket(&mut s, capacity, refill_per_ms, now);
                        *other = LimitState::Bucket(s);
                        ok
                    }
                }
            }
        }
    }

    /// A channel changed on this node: the snapshot is rebuilt here and on the other nodes.
    pub async fn channels_changed(&self, state: &AppState) -> ApiResult<()> {
        let done = self.reload_channels(state).await;
        crate::coherence::publish_via(self.shared(), crate::coherence::Change::Channels);
        done
    }

    /// A price, model owner or group changed on this node: prices and groups are reloaded here
    /// and on the other nodes.
    pub async fn pricing_changed(&self, state: &AppState) -> ApiResult<()> {
        let done = self.reload_pricing(state).await;
        crate::coherence::publish_via(self.shared(), crate::coherence::Change::Pricing);
        done
    }

    /// Rebuilds the channel snapshot from the database (after any channel change on this node,
    /// and periodically for changes made elsewhere), with the channel keys opened; a channel
    /// whose key cannot be opened is left out.
    pub async fn reload_channels(&self, state: &AppState) -> ApiResult<()> {
        let ticket = self.channel_reloads.begin();
        let rows = state
            .db(|c| Ok(switchboard_store::channels::all(c)?))
            .await?;
        let rows = crate::at_rest::open_channel_keys(state, rows);
        let snapshot = Snapshot::build(rows);
        self.channel_reloads
            .keep(ticket, || write(&self.channels, snapshot));
        Ok(())
    }

    /// Reloads prices (the table, with the built-in list as the fallback for models without a
    /// row) and group ratios.
    pub async fn reload_pricing(&self, state: &AppState) -> ApiResult<()> {
        let ticket = self.pricing_reloads.begin();
        let (price_rows, group_rows) = state
            .db(|c| {
                Ok((
                    switchboard_store::prices::all(c)?,
                    switchboard_store::user_groups::list_enabled(c)?,
                ))
            })
            .await?;
        let mut prices: Vec<Price> = Vec::with_capacity(price_rows.len());
        for r in price_rows {
            let price_type = match r.price_type.parse() {
                Ok(t) => t,
                Err(_) => {
                    tracing::warn!(model = %r.model, "price row with unknown type ignored");
                    continue;
                }
            };
            prices.push(Price {
                model: r.model,
                price_type,
                channel_type: r.channel_type,
                input: r.input,
                output: r.output,
                extra: switchboard_domain::price::ExtraRatios::parse(&r.extra_ratios)
                    .unwrap_or_default(),
                locked: r.locked,
                max_output: r.max_output_tokens,
            });
        }
        let groups = group_rows
            .into_iter()
            .map(|g| {
                (
                    g.symbol,
                    GroupInfo {
                        ratio: g.ratio,
                        api_rate: g.api_rate,
                        public: g.public,
                    },
                )
            })
            .collect();
        self.pricing_reloads.keep(ticket, || {
            write(&self.prices, PriceTable::new(prices));
            write(&self.groups, groups);
        });
        Ok(())
    }
}

/// Writes the ledger's queued consume records through `store::logs::settle_isolated`: one
/// idempotent transaction in the usual case; when the database refuses a record, the others are
/// written all the same, the refused one sanitised or else parked in `dead_letters` (an error
/// in the system log for each, with its request id, user and the database's reason, never its
/// content). Parked records leave the queue like written ones. Errors that are not about the
/// data (the pool, a lost connection) keep the whole batch queued for the next try.
pub async fn flush_ledger(state: &AppState) -> ApiResult<usize> {
    let pool = state.ledger_pool().clone();
    let written = state
        .relay
        .ledger
        .flush(|batch| write_records(pool, batch))
        .await;
    if written.is_ok() {
        state.relay.last_flush.store(
            switchboard_store::now(),
            std::sync::atomic::Ordering::Relaxed,
        );
    }
    written
}

type WriteResult = Result<
    Vec<switchboard_store::logs::ConsumeRecord>,
    (Vec<switchboard_store::logs::ConsumeRecord>, ApiError),
>;

/// Writes a batch of consume records to the database in one transaction (each refused record
/// sanitised or parked in dead_letters); the batch's buffer comes back for the next one, or
/// with the records on failure.
async fn write_records(
    pool: switchboard_store::Pool,
    batch: Vec<switchboard_store::logs::ConsumeRecord>,
) -> WriteResult {
    let batch = Arc::new(batch);
    let for_db = Arc::clone(&batch);
    let res = actix_web::web::block(move || {
        let mut c = pool.get().map_err(ApiError::internal)?;
        switchboard_store::logs::settle_isolated(&mut c, &for_db).map_err(ApiError::from)
    })
    .await
    .map_err(ApiError::internal)
    .and_then(|r| r);
    match res {
        Ok(outcome) => {
            if outcome.sanitised > 0 {
                tracing::warn!(
                    "{} consume records were refused by the database and written sanitised",
                    outcome.sanitised
                );
            }
            for p in &outcome.parked {
                tracing::error!(
                    request_id = p.request_id.as_deref().unwrap_or(""),
                    user_id = p.user_id,
                    token_id = p.token_id,
                    quota = p.quota,
                    "a consume record the database refused was parked in dead_letters \
                     and not charged: {}",
                    p.reason
                );
            }
            // The blocking closure is done with its handle: the buffer comes back whole for
            // the next batch (or, should it not, a new one is grown).
            Ok(Arc::try_unwrap(batch).unwrap_or_default())
        }
        Err(e) => Err((Arc::try_unwrap(batch).unwrap_or_else(|b| (*b).clone()), e)),
    }
}

/// Redis mode, after Redis lost its data: writes this node's consume records and sets every
/// account from the database before anything is admitted again ([`ledger::Ledger::rebuild_with`]).
pub async fn rebuild_ledger(state: &AppState) -> ApiResult<usize> {
    let pool = state.ledger_pool().clone();
    state
        .relay
        .ledger
        .rebuild_with(
            |batch| write_records(pool, batch),
            |users, tokens| read_balances(state, users, tokens),
        )
        .await
}

/// Reads the database values of users and keys (for the ledger's resync and reconcile).
async fn read_balances(
    state: &AppState,
    users: Vec<i64>,
    tokens: Vec<i64>,
) -> Result<ledger::DbValues, ApiError> {
    let pool = state.pool.clone();
    actix_web::web::block(move || {
        let mut c = pool.get().map_err(ApiError::internal)?;
        Ok(ledger::DbValues {
            users: switchboard_store::users::quotas(&mut c, &users)?,
            tokens: switchboard_store::tokens::remains(&mut c, &tokens)?,
        })
    })
    .await
    .map_err(ApiError::internal)?
}

/// Re-reads the balances of every tracked account (changes made by other nodes or by hand; in
/// Redis mode every account any node loaded).
pub async fn resync_ledger(state: &AppState) -> ApiResult<usize> {
    state
        .relay
        .ledger
        .resync_with(|users, tokens| read_balances(state, users, tokens))
        .await
}

/// Redis mode, at start: drops what this node left unwritten or reserved in an earlier run and
/// sets the accounts it touched from the database (after the journal was written).
pub async fn reconcile_ledger(state: &AppState) -> ApiResult<usize> {
    state
        .relay
        .ledger
        .reconcile_with(|users, tokens| read_balances(state, users, tokens))
        .await
}

/// Redis mode: drops what nodes without a heartbeat for [`shared::NODE_TTL_SECS`] left unwritten
/// or reserved, and sets the accounts they touched from the database.
pub async fn reclaim_dead_nodes(state: &AppState) -> ApiResult<usize> {
    state
        .relay
        .ledger
        .reclaim_dead_with(|users, tokens| read_balances(state, users, tokens))
        .await
}

/// Redis mode: applies what was just queued (a settlement or a refund, possibly from a `Drop`)
/// at once on the current runtime, so that the next request of the same client sees it; the
/// applier task ([`spawn_applier`]) catches anything this misses (a runtime shutting down).
pub fn kick_applier(state: &actix_web::web::Data<AppState>) {
    if state.relay.ledger.shared().is_none() {
        return;
    }
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        let state = state.clone();
        rt.spawn(async move { state.relay.ledger.apply_queued().await });
    }
}

/// Redis mode: applies queued settlements and refunds as they come (they may be queued from a
/// `Drop`), retries failed ledger operations and rotates the operation markers every second and
/// releases expired reservations every minute, for as long as the actix system runs.
pub fn spawn_applier(state: actix_web::web::Data<AppState>) {
    if state.relay.ledger.shared().is_none() {
        return;
    }
    actix_web::rt::spawn(async move {
        let mut last_reap = Instant::now();
        let mut last_epoch_check = Instant::now();
        loop {
            let _ = actix_web::rt::time::timeout(
                Duration::from_secs(1),
                state.relay.ledger.queued_changed(),
            )
            .await;
            // Redis lost its data (a reservation found out, or its epoch is gone): the
            // balances are rebuilt from the database before anything is admitted again.
            if let Some(sh) = state.relay.ledger.shared() {
                // Asked of Redis once a second at most (the loop wakes at every settlement).
                let ask = last_epoch_check.elapsed() >= Duration::from_secs(1);
                if ask {
                    last_epoch_check = Instant::now();
                }
                let lost = state.relay.ledger.needs_rebuild()
                    || (ask && sh.epoch_lost().await.unwrap_or(false));
                if lost {
                    match rebuild_ledger(&state).await {
                        Ok(n) => tracing::warn!(
                            accounts = n,
                            "Redis had lost its data: the balances were rebuilt from the database"
                        ),
                        Err(e) => tracing::error!(
                            "Redis lost its data and rebuilding the balances failed (retried; \
                             nothing is admitted meanwhile): {e}"
                        ),
                    }
                }
            }
            state.relay.ledger.apply_queued().await;
            state.relay.ledger.rotate_markers().await;
            if last_reap.elapsed() >= Duration::from_secs(60) {
                last_reap = Instant::now();
                if let Some(sh) = state.relay.ledger.shared() {
                    if let Err(e) = sh.heartbeat().await {
                        tracing::warn!("the node heartbeat in Redis failed: {e}");
                    }
                    match reclaim_dead_nodes(&state).await {
                        Ok(n) if n > 0 => tracing::warn!(
                            accounts = n,
                            "balances left by dead nodes set from the database"
                        ),
                        Ok(_) => {}
                        Err(e) => tracing::warn!("reclaiming what dead nodes left failed: {e}"),
                    }
                    match sh.reap().await {
                        Ok(n) if n > 0 => {
                            tracing::warn!(released = n, "expired reservations released")
                        }
                        Ok(_) => {}
                        Err(e) => tracing::warn!("releasing expired reservations failed: {e}"),
                    }
                }
            }
        }
    });
}

/// Writes settled relay requests to the database every `every`, and as soon as
/// [`ledger::FLUSH_AT`] wait, for as long as the actix system runs (failures keep the records
/// for the next tick).
pub fn spawn_flusher(state: actix_web::web::Data<AppState>, every: Duration) {
    actix_web::rt::spawn(async move {
        let mut tick = actix_web::rt::time::interval(every);
        loop {
            // Every `every`, and as soon as a full batch waits (a busy node).
            tokio::select! {
                _ = tick.tick() => {}
                () = state.relay.ledger.batch_ready() => {}
            }
            if let Err(e) = flush_ledger(&state).await {
                tracing::error!("writing consume records failed (kept for the next try): {e}");
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{put_hex, request_id, AuthToken, RelayState, Reloads};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_reload_that_began_earlier_never_replaces_a_later_ones_snapshot() {
        let r = Reloads::default();
        let kept = std::cell::RefCell::new(Vec::new());
        // Begun before the change, finished after the change's own reload: dropped.
        let before_change = r.begin();
        let after_change = r.begin();
        assert!(r.keep(after_change, || kept.borrow_mut().push("new")));
        assert!(!r.keep(before_change, || kept.borrow_mut().push("old")));
        // In order, each is kept.
        let next = r.begin();
        assert!(r.keep(next, || kept.borrow_mut().push("newer")));
        assert_eq!(*kept.borrow(), ["new", "newer"]);
    }

    fn token(id: i64) -> Arc<AuthToken> {
        Arc::new(AuthToken {
            id,
            name: "k".into(),
            status: 1,
            expired_at: -1,
            group: String::new(),
            models: Vec::new(),
            subnet: Default::default(),
            api_rate: 0,
            cache_enabled: false,
            heartbeat_after: None,
            user_id: 1,
            username: "u".into(),
            user_status: 1,
            user_role: 1,
            user_group: "default".into(),
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_misses_of_one_key_read_it_once() {
        let state = Arc::new(RelayState::default());
        let reads = Arc::new(AtomicUsize::new(0));
        let mut calls = Vec::new();
        for _ in 0..32 {
            let (state, reads) = (Arc::clone(&state), Arc::clone(&reads));
            calls.push(tokio::spawn(async move {
                state
                    .token_or_load::<(), _, _>("digest-a", || async {
                        reads.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                        Ok(Some(token(7)))
                    })
                    .await
            }));
        }
        for c in calls {
            assert_eq!(c.await.unwrap().unwrap().unwrap().id, 7);
        }
        assert_eq!(
            reads.load(Ordering::SeqCst),
            1,
            "one database read for 32 misses"
        );
        assert!(state.loading.is_empty(), "no gate is left behind");

        // A key that does not exist is looked up by each request (nothing to cache), and an
        // error reaches the caller.
        let missing = state
            .token_or_load::<(), _, _>("digest-b", || async { Ok(None) })
            .await;
        assert!(matches!(missing, Ok(None)));
        let failed = state
            .token_or_load::<&str, _, _>("digest-c", || async { Err("db down") })
            .await;
        assert_eq!(failed.err(), Some("db down"));
        assert!(state.cached_token("digest-c").is_none());
        assert!(state.loading.is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_first_uses_of_one_account_load_it_once() {
        let state = Arc::new(RelayState::default());
        let loaded = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reads = Arc::new(AtomicUsize::new(0));
        let mut calls = Vec::new();
        for _ in 0..32 {
            let (state, loaded, reads) =
                (Arc::clone(&state), Arc::clone(&loaded), Arc::clone(&reads));
            calls.push(tokio::spawn(async move {
                state
                    .one_ledger_load(1, 7, || async {
                        // What `edge::reserve` does: try again, read only if still unknown.
                        if !loaded.load(Ordering::SeqCst) {
                            reads.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                            loaded.store(true, Ordering::SeqCst);
                        }
                        7
                    })
                    .await
            }));
        }
        for c in calls {
            assert_eq!(c.await.unwrap(), 7);
        }
        assert_eq!(
            reads.load(Ordering::SeqCst),
            1,
            "one read for 32 first uses"
        );
        assert!(state.ledger_loading.is_empty(), "no gate is left behind");
        // Another account is not held up by this one's gate.
        let other = state.one_ledger_load(2, 8, || async { 8 }).await;
        assert_eq!(other, 8);
        assert!(state.ledger_loading.is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_load_whose_caller_went_away_leaves_no_gate_behind() {
        let state = Arc::new(RelayState::default());
        let slow = || async {
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            Ok::<_, ()>(Some(token(7)))
        };
        // One caller loading, one waiting for it: both are dropped (their clients went away).
        let loading = tokio::spawn({
            let state = Arc::clone(&state);
            async move { state.token_or_load("digest-a", slow).await }
        });
        let waiting = tokio::spawn({
            let state = Arc::clone(&state);
            async move { state.token_or_load("digest-a", slow).await }
        });
        let balances = tokio::spawn({
            let state = Arc::clone(&state);
            async move { state.one_ledger_load(1, 7, slow).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(!state.loading.is_empty() && !state.ledger_loading.is_empty());
        for call in [loading, waiting, balances] {
            call.abort();
            assert!(call.await.unwrap_err().is_cancelled());
        }
        assert!(
            state.loading.is_empty(),
            "the key's gate went with its callers"
        );
        assert!(state.ledger_loading.is_empty());
        // The next caller loads afresh.
        let t = state
            .token_or_load::<(), _, _>("digest-a", || async { Ok(Some(token(8))) })
            .await;
        assert_eq!(t.unwrap().unwrap().id, 8);
        assert!(state.loading.is_empty());
    }

    #[test]
    fn request_ids_are_unique_and_rise() {
        let ids: Vec<switchboard_store::logs::Text> = (0..10_000).map(|_| request_id()).collect();
        assert!(ids.iter().all(|id| id.len() == 24
            && id
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())));
        // Kept in place: making one allocates nothing, nor does a consume record's copy.
        assert!(ids.iter().all(|id| !id.is_heap_allocated()));
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(
            sorted, ids,
            "ids are distinct and in the order they were made"
        );
    }

    #[test]
    fn a_request_id_is_the_time_the_tag_and_the_counter_in_hex() {
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let (a, b) = (request_id(), request_id());
        let millis = u128::from_str_radix(&a[..11], 16).unwrap();
        assert!(
            millis >= before & 0xfff_ffff_ffff && millis <= (before & 0xfff_ffff_ffff) + 60_000
        );
        assert_eq!(a[11..17], b[11..17], "one tag per process");
        // The counter rose (by more than one when a test beside this one made ids meanwhile).
        let seq = |id: &str| u64::from_str_radix(&id[17..], 16).unwrap();
        let step = (seq(&b) + 0x100_0000 - seq(&a)) & 0xff_ffff;
        assert!((1..0x10_0000).contains(&step), "counter step {step}");
        let mut digits = [0u8; 7];
        put_hex(&mut digits, 0xabc);
        assert_eq!(&digits, b"0000abc");
        put_hex(&mut digits, 0x1_2345_6789);
        assert_eq!(&digits, b"3456789", "only the low digits that fit");
    }
}
