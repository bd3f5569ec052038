//! The quota ledger of this node: balances, reservations and not-yet-written consumption of
//! users and tokens, kept in memory so the relay path makes no database round trip in steady
//! state. Settled requests are queued as consume records and written in batches by
//! [`Ledger::flush`]; each batch is one idempotent transaction (`store::logs::settle_batch`).
//!
//! Invariant: for every account, `balance = database value - unflushed consumption`. Credits
//! (admin changes, redemptions, payments) are database transactions followed by
//! [`Ledger::credit_user`]; [`Ledger::resync`] re-reads loaded accounts so changes made by other
//! nodes converge.
//!
//! With Redis configured ([`Ledger::attach`]), balances, reservations and unflushed amounts live
//! in Redis instead (see [`super::shared`]) so that every node admits against the same numbers;
//! the queue of consume records stays with the node that served the requests.

use super::shared::{Reserve, Shared};
use std::collections::HashMap;
use std::sync::Mutex;
use switchboard_store::logs::ConsumeRecord;

#[derive(Debug, Default, Clone, Copy)]
struct Account {
    balance: i64,
    reserved: i64,
    unflushed: i64,
    unlimited: bool,
}

#[derive(Debug, Default)]
struct Inner {
    users: HashMap<i64, Account>,
    tokens: HashMap<i64, Account>,
    pending: Vec<ConsumeRecord>,
}

#[derive(Default)]
pub struct Ledger {
    inner: Mutex<Inner>,
    /// Serialises flushes and resyncs (one writer at a time).
    flush_lock: tokio::sync::Mutex<()>,
    shared: Option<Shared>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shortfall {
    User,
    Token,
    /// The account is not tracked yet: load it from the database and try again.
    NotLoaded,
    /// The shared store did not answer.
    Unavailable(String),
}

/// Quota set aside for one request until it settles or is refunded.
#[derive(Debug)]
pub struct Reservation {
    pub user_id: i64,
    pub token_id: i64,
    pub amount: i64,
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

impl Ledger {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Keeps balances in Redis from now on (call before serving requests).
    pub fn attach(&mut self, shared: Shared) {
        self.shared = Some(shared);
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

    /// Reserves `amount` on the user and the token when both can afford it; nothing otherwise.
    pub async fn reserve(
        &self,
        user_id: i64,
        token_id: i64,
        amount: i64,
    ) -> Result<Reservation, Shortfall> {
        let amount = amount.max(0);
        if let Some(sh) = &self.shared {
            return match sh.reserve(user_id, token_id, amount).await {
                Ok(Reserve::Ok) => Ok(Reservation {
                    user_id,
                    token_id,
                    amount,
                }),
                Ok(Reserve::UserShort) => Err(Shortfall::User),
                Ok(Reserve::TokenShort) => Err(Shortfall::Token),
                Ok(Reserve::NotLoaded) => Err(Shortfall::NotLoaded),
                Err(e) => Err(Shortfall::Unavailable(e.to_string())),
            };
        }
        self.reserve_local(user_id, token_id, amount)
    }

    fn reserve_local(
        &self,
        user_id: i64,
        token_id: i64,
        amount: i64,
    ) -> Result<Reservation, Shortfall> {
        let mut g = self.lock();
        let Some(user) = g.users.get(&user_id).copied() else {
            return Err(Shortfall::NotLoaded);
        };
        if token_id > 0 && !g.tokens.contains_key(&token_id) {
            return Err(Shortfall::NotLoaded);
        }
        if user.balance - user.reserved < amount || user.balance <= 0 {
            return Err(Shortfall::User);
        }
        if token_id > 0 {
            let t = g.tokens.get(&token_id).copied().unwrap_or_default();
            if !t.unlimited && (t.balance - t.reserved < amount || t.balance <= 0) {
                return Err(Shortfall::Token);
            }
            if let Some(t) = g.tokens.get_mut(&token_id) {
                t.reserved += amount;
            }
        }
        if let Some(u) = g.users.get_mut(&user_id) {
            u.reserved += amount;
        }
        Ok(Reservation {
            user_id,
            token_id,
            amount,
        })
    }

    /// Releases a reservation without charging (upstream failed before any output).
    pub fn refund(&self, r: Reservation) {
        if let Some(sh) = self.shared.clone() {
            tokio::spawn(async move {
                if let Err(e) = sh.refund(r.user_id, r.token_id, r.amount).await {
                    tracing::error!("releasing a reservation in Redis failed: {e}");
                }
            });
            return;
        }
        let mut g = self.lock();
        if let Some(u) = g.users.get_mut(&r.user_id) {
            u.reserved -= r.amount;
        }
        if let Some(t) = g.tokens.get_mut(&r.token_id) {
            t.reserved -= r.amount;
        }
    }

    /// Replaces the reservation by the real cost and queues the consume record.
    pub fn settle(&self, r: Reservation, record: ConsumeRecord) {
        let cost = record.quota;
        if let Some(sh) = self.shared.clone() {
            self.lock().pending.push(record);
            tokio::spawn(async move {
                // If this fails, the next resync repairs the balance from the database.
                if let Err(e) = sh.settle(r.user_id, r.token_id, r.amount, cost).await {
                    tracing::error!("settling in Redis failed: {e}");
                }
            });
            return;
        }
        let mut g = self.lock();
        if let Some(u) = g.users.get_mut(&r.user_id) {
            u.reserved -= r.amount;
            u.balance -= cost;
            u.unflushed += cost;
        }
        if let Some(t) = g.tokens.get_mut(&r.token_id) {
            t.reserved -= r.amount;
            t.balance -= cost;
            t.unflushed += cost;
        }
        g.pending.push(record);
    }

    /// A credit (or debit) already committed to the database for this user.
    pub async fn credit_user(&self, user_id: i64, delta: i64) {
        if let Some(sh) = &self.shared {
            if let Err(e) = sh.credit_user(user_id, delta).await {
                tracing::error!("crediting in Redis failed (the next resync repairs it): {e}");
            }
            return;
        }
        if let Some(u) = self.lock().users.get_mut(&user_id) {
            u.balance += delta;
        }
    }

    /// A credit already committed to the database for this key (a refunded task).
    pub async fn credit_token(&self, token_id: i64, delta: i64) {
        if let Some(sh) = &self.shared {
            if let Err(e) = sh.credit_token(token_id, delta).await {
                tracing::error!("crediting in Redis failed (the next resync repairs it): {e}");
            }
            return;
        }
        if let Some(t) = self.lock().tokens.get_mut(&token_id) {
            t.balance += delta;
        }
    }

    /// Forgets a token (its quota or limits were edited): it is loaded again on next use.
    /// Only possible when nothing of it is reserved or unflushed; callers flush first.
    pub fn forget_token(&self, token_id: i64) {
        if let Some(sh) = self.shared.clone() {
            tokio::spawn(async move {
                let _ = sh.forget(None, Some(token_id)).await;
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

    pub fn forget_user(&self, user_id: i64) {
        if let Some(sh) = self.shared.clone() {
            tokio::spawn(async move {
                let _ = sh.forget(Some(user_id), None).await;
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

    pub fn pending_len(&self) -> usize {
        self.lock().pending.len()
    }

    /// Writes every queued record in one transaction through `write` (which runs the store's
    /// `settle_batch`). On failure the records stay queued for the next attempt.
    pub async fn flush<F, Fut, E>(&self, write: F) -> Result<usize, E>
    where
        F: FnOnce(Vec<ConsumeRecord>) -> Fut,
        Fut: std::future::Future<Output = Result<(), (Vec<ConsumeRecord>, E)>>,
    {
        let _one_writer = self.flush_lock.lock().await;
        let batch = std::mem::take(&mut self.lock().pending);
        if batch.is_empty() {
            return Ok(0);
        }
        let mut by_user: HashMap<i64, i64> = HashMap::new();
        let mut by_token: HashMap<i64, i64> = HashMap::new();
        for r in &batch {
            *by_user.entry(r.user_id).or_default() += r.quota;
            if r.token_id > 0 {
                *by_token.entry(r.token_id).or_default() += r.quota;
            }
        }
        let n = batch.len();
        match write(batch).await {
            Ok(()) => {
                if let Some(sh) = &self.shared {
                    let users: Vec<(i64, i64)> = by_user.into_iter().collect();
                    let tokens: Vec<(i64, i64)> = by_token.into_iter().collect();
                    if let Err(e) = sh.flushed(&users, &tokens).await {
                        tracing::error!("recording a flush in Redis failed: {e}");
                    }
                    return Ok(n);
                }
                let mut g = self.lock();
                for (id, q) in by_user {
                    if let Some(u) = g.users.get_mut(&id) {
                        u.unflushed -= q;
                    }
                }
                for (id, q) in by_token {
                    if let Some(t) = g.tokens.get_mut(&id) {
                        t.unflushed -= q;
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

    /// Ids of the tracked accounts (for [`Ledger::resync`]).
    pub fn tracked(&self) -> (Vec<i64>, Vec<i64>) {
        let g = self.lock();
        (
            g.users.keys().copied().collect(),
            g.tokens.keys().copied().collect(),
        )
    }

    /// Replaces tracked balances by fresh database values minus what this node has not written
    /// yet. Call it under the same writer lock as flushes (see [`Ledger::resync_with`]).
    fn apply_db_values(&self, users: &[(i64, i64)], tokens: &[(i64, i64, bool)]) {
        let mut g = self.lock();
        for (id, quota) in users {
            if let Some(u) = g.users.get_mut(id) {
                u.balance = quota - u.unflushed;
            }
        }
        for (id, remain, unlimited) in tokens {
            if let Some(t) = g.tokens.get_mut(id) {
                t.balance = remain - t.unflushed;
                t.unlimited = *unlimited;
            }
        }
    }

    /// Reads the database values of the tracked accounts through `read` and applies them,
    /// holding the writer lock so no flush runs in between.
    pub async fn resync_with<F, Fut, E>(&self, read: F) -> Result<(), E>
    where
        F: FnOnce(Vec<i64>, Vec<i64>) -> Fut,
        Fut: std::future::Future<Output = Result<(Vec<(i64, i64)>, Vec<(i64, i64, bool)>), E>>,
    {
        let _one_writer = self.flush_lock.lock().await;
        let (u, t) = self.tracked();
        let (users, tokens) = read(u, t).await?;
        if let Some(sh) = &self.shared {
            if let Err(e) = sh.resync(&users, &tokens).await {
                tracing::error!("resyncing balances in Redis failed: {e}");
            }
            return Ok(());
        }
        self.apply_db_values(&users, &tokens);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(user_id: i64, token_id: i64, quota: i64) -> ConsumeRecord {
        ConsumeRecord {
            request_id: None,
            created_at: 0,
            log_type: 2,
            user_id,
            username: String::new(),
            token_id,
            token_name: String::new(),
            channel_id: 1,
            model_name: "m".into(),
            group_name: String::new(),
            quota,
            prompt_tokens: 0,
            completion_tokens: 0,
            use_time_ms: 0,
            first_response_ms: 0,
            is_stream: false,
            source_ip: String::new(),
            content: String::new(),
            metadata: String::new(),
        }
    }

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

    #[actix_web::test]
    async fn reservations_never_exceed_the_balance() {
        let l = ledger(100, 1000, false).await;
        assert_eq!(l.reserve(2, 7, 1).await.unwrap_err(), Shortfall::NotLoaded);
        let a = l.reserve(1, 7, 60).await.unwrap();
        assert_eq!(l.reserve(1, 7, 41).await.unwrap_err(), Shortfall::User);
        let b = l.reserve(1, 7, 40).await.unwrap();
        l.refund(a);
        l.settle(b, record(1, 7, 25));
        assert_eq!(l.user_balance(1), Some(75));
        assert!(l.reserve(1, 7, 75).await.is_ok());
    }

    #[actix_web::test]
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

    #[actix_web::test]
    async fn flush_keeps_records_on_failure_and_balances_converge() {
        let l = ledger(100, 100, false).await;
        let r = l.reserve(1, 7, 10).await.unwrap();
        l.settle(r, record(1, 7, 10));
        let failed: Result<usize, &str> = l.flush(|b| async move { Err((b, "db down")) }).await;
        assert!(failed.is_err());
        assert_eq!(l.pending_len(), 1);
        let r = l.reserve(1, 7, 5).await.unwrap();
        l.settle(r, record(1, 7, 5));
        let ok: Result<usize, &str> = l
            .flush(|b| async move {
                assert_eq!(b.len(), 2);
                Ok(())
            })
            .await;
        assert_eq!(ok, Ok(2));
        // The database now holds 85; a resync keeps 85 (nothing unflushed).
        let res: Result<(), ()> = l
            .resync_with(|_, _| async { Ok((vec![(1, 85)], vec![(7, 85, false)])) })
            .await;
        assert!(res.is_ok());
        assert_eq!(l.user_balance(1), Some(85));
        // Another node spent 20: the resync brings the balance down, minus what is unflushed here.
        let r = l.reserve(1, 7, 5).await.unwrap();
        l.settle(r, record(1, 7, 5));
        let res: Result<(), ()> = l
            .resync_with(|_, _| async { Ok((vec![(1, 65)], vec![(7, 65, false)])) })
            .await;
        assert!(res.is_ok());
        assert_eq!(l.user_balance(1), Some(60));
    }
}
