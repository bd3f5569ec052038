//! The relay path: `/v1/*` requests authenticated by `sk-` keys, priced, reserved against the
//! ledger, dispatched to a channel by priority and weight with retries, streamed back as they
//! arrive, and settled exactly once from the real usage.
//!
//! Everything this path needs is held in memory ([`RelayState`]): keys (with a short TTL and
//! local invalidation), the channel snapshot, prices, group ratios, rate-limit states, frozen
//! channels and the ledger. The database is touched only on a cache miss and by the batched
//! ledger flush.

pub mod handler;
pub mod heartbeat;
pub mod ledger;
pub mod realtime;
pub mod shared;
pub mod snapshot;
pub mod tasks;

use crate::error::{ApiError, ApiResult};
use crate::AppState;
use dashmap::DashMap;
use ledger::Ledger;
use snapshot::Snapshot;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use switchboard_domain::price::{Price, PriceTable};
use switchboard_domain::ratelimit::{self, BucketState, Policy, WindowState};
use switchboard_domain::token::IpAllowList;
use switchboard_relay::provider::ClientPool;

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
}

enum LimitState {
    Window(WindowState),
    Bucket(BucketState),
}

pub struct RelayState {
    pub ledger: Ledger,
    tokens: DashMap<String, (Arc<AuthToken>, Instant)>,
    channels: RwLock<Arc<Snapshot>>,
    prices: RwLock<Arc<PriceTable>>,
    groups: RwLock<Arc<HashMap<String, GroupInfo>>>,
    frozen: DashMap<i64, Instant>,
    limits: DashMap<String, LimitState>,
    pub clients: ClientPool,
    started: Instant,
    /// Redis, when nodes share state.
    shared: Option<shared::Shared>,
}

impl Default for RelayState {
    fn default() -> Self {
        RelayState {
            ledger: Ledger::default(),
            tokens: DashMap::new(),
            channels: RwLock::new(Arc::new(Snapshot::default())),
            prices: RwLock::new(Arc::new(PriceTable::new(
                switchboard_domain::price::default_prices(),
            ))),
            groups: RwLock::new(Arc::new(HashMap::new())),
            frozen: DashMap::new(),
            limits: DashMap::new(),
            clients: ClientPool::new(),
            started: Instant::now(),
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

    pub fn cached_token(&self, digest: &str) -> Option<Arc<AuthToken>> {
        let hit = self.tokens.get(digest)?;
        if hit.1.elapsed() < TOKEN_CACHE_TTL {
            Some(Arc::clone(&hit.0))
        } else {
            None
        }
    }

    pub fn cache_token(&self, digest: String, t: Arc<AuthToken>) {
        if self.tokens.len() > 100_000 {
            self.tokens.retain(|_, v| v.1.elapsed() < TOKEN_CACHE_TTL);
        }
        self.tokens.insert(digest, (t, Instant::now()));
    }

    /// A key changed or was deleted: drop it from the cache and the ledger.
    pub fn forget_token(&self, id: i64, digest: &str) {
        self.tokens.remove(digest);
        self.ledger.forget_token(id);
    }

    /// A user changed (status, group, role, quota): drop every cached key.
    pub fn forget_user(&self, user_id: i64) {
        self.tokens.retain(|_, v| v.0.user_id != user_id);
        self.ledger.forget_user(user_id);
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

    /// Rebuilds the channel snapshot from the database (after any channel change on this node,
    /// and periodically for changes made elsewhere).
    pub async fn reload_channels(&self, state: &AppState) -> ApiResult<()> {
        let rows = state
            .db(|c| Ok(switchboard_store::channels::all(c)?))
            .await?;
        write(&self.channels, Snapshot::build(rows));
        Ok(())
    }

    /// Reloads prices (the table, with the built-in list as the fallback for models without a
    /// row) and group ratios.
    pub async fn reload_pricing(&self, state: &AppState) -> ApiResult<()> {
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
                    },
                )
            })
            .collect();
        write(&self.prices, PriceTable::new(prices));
        write(&self.groups, groups);
        Ok(())
    }
}

/// Writes the ledger's queued consume records (one idempotent transaction).
pub async fn flush_ledger(state: &AppState) -> ApiResult<usize> {
    let pool = state.pool.clone();
    state
        .relay
        .ledger
        .flush(|batch| async move {
            let batch = Arc::new(batch);
            let for_db = Arc::clone(&batch);
            let res = actix_web::web::block(move || {
                let mut c = pool.get().map_err(ApiError::internal)?;
                // The fast path first; a request id already written (a batch whose commit was
                // acknowledged too late) makes it fail whole, and the checked path sorts it out.
                match switchboard_store::logs::settle_new_batch(&mut c, &for_db) {
                    Err(switchboard_store::StoreError::Conflict(_)) => {
                        switchboard_store::logs::settle_batch(&mut c, &for_db)
                            .map_err(ApiError::from)
                    }
                    other => other.map_err(ApiError::from),
                }
            })
            .await
            .map_err(ApiError::internal)
            .and_then(|r| r);
            match res {
                Ok(_) => Ok(()),
                Err(e) => Err((Arc::try_unwrap(batch).unwrap_or_else(|b| (*b).clone()), e)),
            }
        })
        .await
}

/// Re-reads the balances of every tracked account (changes made by other nodes or by hand).
pub async fn resync_ledger(state: &AppState) -> ApiResult<()> {
    let pool = state.pool.clone();
    state
        .relay
        .ledger
        .resync_with(|users, tokens| async move {
            actix_web::web::block(move || {
                let mut c = pool.get().map_err(ApiError::internal)?;
                let mut u = Vec::with_capacity(users.len());
                for id in users {
                    if let Ok(row) = switchboard_store::users::find(&mut c, id) {
                        u.push((id, row.quota));
                    }
                }
                let mut t = Vec::with_capacity(tokens.len());
                for id in tokens {
                    if let Ok(row) = switchboard_store::tokens::find(&mut c, id) {
                        t.push((id, row.remain_quota, row.unlimited_quota));
                    }
                }
                Ok((u, t))
            })
            .await
            .map_err(ApiError::internal)?
        })
        .await
}

/// Writes settled relay requests to the database every `every`, for as long as the actix
/// system runs (failures keep the records for the next try).
pub fn spawn_flusher(state: actix_web::web::Data<AppState>, every: Duration) {
    actix_web::rt::spawn(async move {
        let mut tick = actix_web::rt::time::interval(every);
        loop {
            tick.tick().await;
            if let Err(e) = flush_ledger(&state).await {
                tracing::error!("writing consume records failed (kept for the next try): {e}");
            }
        }
    });
}
