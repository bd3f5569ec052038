//! The books on Redis, alone (no server): settlements in batches, an applier dropped mid round
//! trip, an outage's backlog, marker generations, lost answers and account hashes without a
//! balance. Run where `TEST_REDIS_URL` is set (CI sets it); each test starts a Redis of its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// A consume record as the relay queues it (no key), for tests of the ledger alone.
fn consume(user_id: i64, quota: i64) -> switchboard_store::logs::ConsumeRecord {
    switchboard_store::testing::consume_record(user_id, 0, quota)
}

/// The marker generations of [`LedgerOnRedis`]'s ledger: short, so that a test crosses them.
const MARKER_PERIOD: std::time::Duration = std::time::Duration::from_millis(100);

/// A node's ledger on a Redis of the test's own (node `n1`), with users 1 to 3 loaded at
/// 10 000 each and no keys, marker generations of [`MARKER_PERIOD`], and a second connection to
/// that Redis for the test's own commands.
struct LedgerOnRedis {
    redis: switchboard_ledger::testing::PrivateRedis,
    /// The ledger's way to Redis when it is not direct ([`LedgerOnRedis::behind_a_link`]).
    link: Option<switchboard_ledger::testing::SlowLink>,
    prefix: String,
    sh: switchboard_ledger::shared::Shared,
    admin: redis::aio::MultiplexedConnection,
    ledger: switchboard_ledger::Ledger,
}

impl LedgerOnRedis {
    async fn start() -> LedgerOnRedis {
        Self::start_with(false).await
    }

    /// The ledger talks to Redis through a [`switchboard_ledger::testing::SlowLink`] (no delay until the test
    /// sets one).
    async fn behind_a_link() -> LedgerOnRedis {
        Self::start_with(true).await
    }

    async fn start_with(behind_a_link: bool) -> LedgerOnRedis {
        use switchboard_ledger::Ledger;
        let redis = switchboard_ledger::testing::PrivateRedis::start();
        let link = if behind_a_link {
            Some(
                switchboard_ledger::testing::SlowLink::start(redis.port, std::time::Duration::ZERO)
                    .await,
            )
        } else {
            None
        };
        let url = link.as_ref().map_or_else(|| redis.url(), |l| l.url());
        let prefix = format!("sbledger:{}:", switchboard_ledger::testing::unique());
        let sh = switchboard_ledger::shared::Shared::connect(&url, &prefix, "n1")
            .await
            .unwrap();
        let admin = redis::Client::open(redis.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let mut ledger = Ledger::default().with_marker_period(MARKER_PERIOD);
        ledger.attach(sh.clone());
        let t = LedgerOnRedis {
            redis,
            link,
            prefix,
            sh,
            admin,
            ledger,
        };
        for user in 1..=3 {
            t.load_user(user).await;
        }
        t
    }

    /// Loads `user` at 10 000 (what the database would say), without a key.
    async fn load_user(&self, user: i64) {
        self.ledger
            .load(switchboard_ledger::Loaded {
                user_id: user,
                user_quota: 10_000,
                token_id: 0,
                token_remain: 0,
                token_unlimited: false,
            })
            .await
            .unwrap();
    }

    /// A user's balance and what it holds reserved, as Redis has them.
    async fn user(&self, user: i64) -> (i64, i64) {
        use switchboard_ledger::shared::Account;
        let field = |name| async move {
            self.sh
                .field(Account::User(user), name)
                .await
                .unwrap()
                .unwrap()
        };
        (field("bal").await, field("res").await)
    }

    /// One of the test's own commands.
    async fn cmd(&mut self, args: &[&str]) {
        let mut c = redis::cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        let _: redis::Value = c.query_async(&mut self.admin).await.unwrap();
    }

    /// Settles a request of user 1 that cost nothing, answered in time. Redis loads the
    /// settlement's script with it, so that a round trip the test then holds up runs it rather
    /// than refusing it as unknown (which would apply nothing).
    async fn settle_one_in_time(&self) {
        let r = self.ledger.reserve(1, 0, 1_000).await.unwrap();
        self.ledger.settle(r, consume(1, 0), 0);
        self.ledger.apply_queued().await;
        assert_eq!(self.ledger.redis_backlog(), 0);
    }

    /// The operations Redis holds marked applied for node `n1` (the fields of its marker
    /// generations, each named by its kind and id), and the generations' keys.
    async fn markers(&mut self) -> (Vec<String>, Vec<String>) {
        let pattern = format!("{}done:n1:g*", self.prefix);
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(&pattern)
            .query_async(&mut self.admin)
            .await
            .unwrap();
        let mut ops = Vec::new();
        for k in &keys {
            let fields: Vec<String> = redis::cmd("HKEYS")
                .arg(k)
                .query_async(&mut self.admin)
                .await
                .unwrap();
            ops.extend(fields.into_iter().filter(|f| f != "at"));
        }
        ops.sort_unstable();
        (ops, keys)
    }

    /// Waits out two marker periods and rotates: every generation the operations so far took
    /// is over and may be dropped.
    async fn two_periods_later(&self) -> std::ops::Range<u64> {
        tokio::time::sleep(MARKER_PERIOD * 2 + std::time::Duration::from_millis(20)).await;
        self.ledger.rotate_markers().await
    }

    /// (user, charge) of every consume record queued for the database, taken from the queue.
    async fn charged(&self) -> Vec<(i64, i64)> {
        let mut charged: Vec<(i64, i64)> = self
            .ledger
            .take_pending()
            .await
            .iter()
            .map(|r| (r.user_id, r.quota))
            .collect();
        charged.sort_unstable();
        charged
    }
}

/// Settlements waiting for Redis go in one round trip. One that Redis refuses must not take
/// the rest of its batch with it: they are applied, it waits (with what arrives after it, in
/// order) until Redis takes it, and each is charged once. It fails here because the field that
/// marks it applied holds something that is not a charge (its script answers no number and
/// changes nothing). Redis has also forgotten the ledger's scripts (as after a restart), which
/// a batch must get over.
#[tokio::test]
async fn a_settlement_redis_refuses_waits_and_the_rest_of_its_batch_is_applied() {
    if !switchboard_ledger::testing::redis_configured("settlements applied in batches") {
        return;
    }
    let mut t = LedgerOnRedis::start().await;
    let mut held = Vec::new();
    for user in 1..=3 {
        held.push(t.ledger.reserve(user, 0, 1_000).await.unwrap());
    }
    let markers = t.sh.generation(t.ledger.marker_generation());
    let refused = format!("s{}", held[1].id);
    t.cmd(&["HSET", &markers, &refused, "not a charge"]).await;
    for (r, cost) in held.into_iter().zip([100, 200, 300]) {
        t.ledger.settle(r, consume(r.user_id, cost), 0);
    }
    t.cmd(&["SCRIPT", "FLUSH"]).await;
    t.ledger.apply_queued().await;
    assert_eq!(t.ledger.redis_backlog(), 1, "user 2's settlement waits");
    assert_eq!(t.user(1).await, (9_900, 0));
    assert_eq!(t.user(2).await, (10_000, 1_000));
    assert_eq!(t.user(3).await, (9_700, 0));
    // Every record is queued for the database with its charge (the refused one's is fixed at
    // most its reservation, and Redis is told that charge when it takes it).
    assert_eq!(t.charged().await, [(1, 100), (2, 200), (3, 300)]);

    // What comes after it waits behind it.
    let later = t.ledger.reserve(1, 0, 500).await.unwrap();
    t.ledger.settle(later, consume(1, 50), 0);
    t.ledger.apply_queued().await;
    assert_eq!(t.ledger.redis_backlog(), 2);
    assert_eq!(t.user(1).await, (9_900, 500));

    // Redis takes it again: both are applied, once.
    t.cmd(&["HDEL", &markers, &refused]).await;
    for _ in 0..2 {
        t.ledger.apply_queued().await;
        assert_eq!(t.ledger.redis_backlog(), 0);
        assert_eq!(t.user(1).await, (9_850, 0));
        assert_eq!(t.user(2).await, (9_800, 0));
        assert_eq!(t.user(3).await, (9_700, 0));
    }
}

/// An applier dropped while its batch is on its way to Redis (a non-streamed request whose
/// client went away while it waited for its settlement, or a flush's time limit) puts the batch
/// back: no consume record is lost, nothing stays held, and what Redis applied after the drop
/// is not applied twice, even after the marker period is over. Redis holds the batch here with
/// `CLIENT PAUSE` and runs it when the pause ends.
#[tokio::test]
async fn an_applier_dropped_mid_round_trip_loses_nothing_and_charges_once() {
    use std::time::Duration;
    if !switchboard_ledger::testing::redis_configured("an applier dropped mid round trip") {
        return;
    }
    let t = LedgerOnRedis::start().await;
    t.settle_one_in_time().await;
    for (user, cost) in (1..=3).zip([100, 200, 300]) {
        let r = t.ledger.reserve(user, 0, 1_000).await.unwrap();
        t.ledger.settle(r, consume(user, cost), 0);
    }
    let paused = t.redis.pause(Duration::from_millis(1_000)).await;
    let cut = tokio::time::timeout(Duration::from_millis(200), t.ledger.apply_queued()).await;
    assert!(cut.is_err(), "the applier was dropped mid round trip");
    assert_eq!(
        t.ledger.redis_backlog(),
        3,
        "the batch is back in the queue"
    );
    tokio::time::sleep_until(tokio::time::Instant::from_std(paused)).await;
    // The ledger's connection asks after its batch: Redis applied it when the pause ended.
    assert_eq!(t.user(1).await, (9_900, 0));
    // The queue holds it, and with it the generation of its markers, however many periods pass.
    t.two_periods_later().await;

    t.ledger.apply_queued().await;
    assert_eq!(t.ledger.redis_backlog(), 0);
    assert_eq!(t.user(1).await, (9_900, 0));
    assert_eq!(t.user(2).await, (9_800, 0));
    assert_eq!(t.user(3).await, (9_700, 0));
    assert_eq!(t.charged().await, [(1, 0), (1, 100), (2, 200), (3, 300)]);
}

/// Settlements that could not reach Redis during an outage wait in order and are sent in
/// batches when it is back: a backlog longer than one batch
/// ([`switchboard_ledger::REDIS_BATCH`]) is applied in full, each charged once,
/// nothing left reserved. Redis keeps its data across the restart (AOF) but not its scripts.
#[tokio::test]
async fn an_outages_backlog_longer_than_a_batch_is_applied_in_full_and_once() {
    use std::time::{Duration, Instant};
    use switchboard_ledger::REDIS_BATCH;
    if !switchboard_ledger::testing::redis_configured("an outage's backlog") {
        return;
    }
    let mut t = LedgerOnRedis::start().await;
    let n = REDIS_BATCH * 2 + 10;
    let mut held = Vec::new();
    for i in 0..n {
        let user = 1 + (i % 3) as i64;
        held.push(t.ledger.reserve(user, 0, 10).await.unwrap());
    }
    t.redis.down();
    for r in held {
        t.ledger.settle(r, consume(r.user_id, 3), 0);
    }
    t.ledger.apply_queued().await;
    assert_eq!(
        t.ledger.redis_backlog(),
        n,
        "every settlement waits for Redis"
    );
    // Each is queued for the database already, charged at most its reservation.
    let charged = t.charged().await;
    assert_eq!(charged.len(), n);
    assert!(charged.iter().all(|(_, q)| *q == 3));

    t.redis.up();
    let deadline = Instant::now() + Duration::from_secs(15);
    while t.ledger.redis_backlog() > 0 {
        assert!(
            Instant::now() < deadline,
            "{} still wait",
            t.ledger.redis_backlog()
        );
        t.ledger.apply_queued().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for user in 1..=3 {
        let count = (0..n).filter(|i| 1 + (i % 3) as i64 == user).count() as i64;
        assert_eq!(t.user(user).await, (10_000 - 3 * count, 0), "user {user}");
    }
}

/// Redis remembers which operations it applied only while one may be sent again: a period
/// after they were made, the markers of settlements, credits and flushes whose answers arrived
/// are dropped, and the generation that takes new ones expires on its own after a day (the
/// markers of a node that stopped). Before marker generations each applied operation left a key
/// in Redis for 24 hours, about 150 bytes for every request relayed.
#[tokio::test]
async fn markers_of_answered_operations_are_dropped_a_period_later() {
    use switchboard_store::logs::ConsumeRecord;
    if !switchboard_ledger::testing::redis_configured("operation markers dropped") {
        return;
    }
    let mut t = LedgerOnRedis::start().await;
    let n = 300;
    for i in 0..n {
        let user = 1 + (i % 3) as i64;
        let r = t.ledger.reserve(user, 0, 10).await.unwrap();
        t.ledger.settle(r, consume(user, 3), 0);
    }
    t.ledger.apply_queued().await;
    t.ledger.credit_user(1, 7).await;
    let written = t
        .ledger
        .flush(|batch| async move { Ok::<_, (Vec<ConsumeRecord>, ())>(batch) })
        .await
        .unwrap();
    assert_eq!(written, n);
    let (ops, _) = t.markers().await;
    let kinds = |k: char| ops.iter().filter(|f| f.starts_with(k)).count();
    assert_eq!(
        (kinds('s'), kinds('c'), kinds('f')),
        (n, 1, 1),
        "each operation is marked while it may be sent again"
    );

    let dropped = t.two_periods_later().await;
    assert!(!dropped.is_empty());
    let (ops, keys) = t.markers().await;
    assert!(ops.is_empty(), "{} markers left", ops.len());
    assert_eq!(
        keys,
        [t.sh.generation(t.ledger.marker_generation())],
        "only the generation taking new operations is left"
    );
    let ttl: i64 = redis::cmd("TTL")
        .arg(&keys[0])
        .query_async(&mut t.admin)
        .await
        .unwrap();
    assert!(
        ttl > 0 && ttl <= 24 * 3600,
        "a generation expires on its own: {ttl}"
    );
    // The books are right: 100 settlements of 3 each, and user 1's credit.
    assert_eq!(t.user(1).await, (10_000 - 300 + 7, 0));
    assert_eq!(t.user(2).await, (10_000 - 300, 0));
    assert_eq!(t.user(3).await, (10_000 - 300, 0));
}

/// A settlement whose answer was lost (Redis applied it, its reply came later than the node
/// waits: 2 s) waits for a retry, and its marker must outlive the marker period until the
/// retry has been answered: the retry is then recognised and charged once. Rotations while it
/// waits keep its generation; once it is applied, the next rotation drops it.
#[tokio::test]
async fn a_settlement_whose_answer_was_lost_keeps_its_marker_until_its_retry_is_answered() {
    use std::time::Duration;
    if !switchboard_ledger::testing::redis_configured("a lost answer's marker") {
        return;
    }
    let mut t = LedgerOnRedis::behind_a_link().await;
    t.settle_one_in_time().await;
    for (user, cost) in (1..=3).zip([100, 200, 300]) {
        let r = t.ledger.reserve(user, 0, 1_000).await.unwrap();
        t.ledger.settle(r, consume(user, cost), 0);
    }
    let link = t.link.as_ref().unwrap();
    link.set_delay(Duration::from_millis(2_500));
    t.ledger.apply_queued().await;
    link.set_delay(Duration::ZERO);
    assert_eq!(t.ledger.redis_backlog(), 3, "all three wait for a retry");
    assert_eq!(t.user(1).await, (9_900, 0), "Redis applied them");

    for _ in 0..3 {
        t.two_periods_later().await;
        assert_eq!(
            t.markers().await.0.len(),
            4,
            "the markers of settlements waiting for a retry stay (with the first's: the same \
             generation)"
        );
    }
    t.ledger.apply_queued().await;
    assert_eq!(t.ledger.redis_backlog(), 0);
    assert_eq!(t.user(1).await, (9_900, 0), "charged once");
    assert_eq!(t.user(2).await, (9_800, 0));
    assert_eq!(t.user(3).await, (9_700, 0));
    assert_eq!(t.charged().await, [(1, 0), (1, 100), (2, 200), (3, 300)]);

    t.two_periods_later().await;
    assert!(t.markers().await.0.is_empty());
}

/// An account hash without a balance (left when a node's restart bumped the version of an
/// account that had been forgotten) is not a loaded account with nothing in it: the
/// reservation asks for it to be loaded from the database, and then admits against the real
/// balance. Before, the request was refused as if the user had no quota.
#[tokio::test]
async fn an_account_hash_without_a_balance_is_loaded_again_not_refused() {
    use switchboard_ledger::Shortfall;
    if !switchboard_ledger::testing::redis_configured("an account hash without a balance") {
        return;
    }
    let mut t = LedgerOnRedis::start().await;
    let user = format!("{}u:1", t.prefix);
    t.cmd(&["DEL", &user]).await;
    t.cmd(&["HINCRBY", &user, "ver", "1"]).await;
    assert_eq!(t.ledger.reserve(1, 0, 100).await, Err(Shortfall::NotLoaded));
    t.load_user(1).await;
    let r = t.ledger.reserve(1, 0, 100).await.unwrap();
    assert_eq!(t.user(1).await, (10_000, 100));
    t.ledger.settle(r, consume(1, 40), 0);
    t.ledger.apply_queued().await;
    assert_eq!(t.user(1).await, (9_960, 0));
}
