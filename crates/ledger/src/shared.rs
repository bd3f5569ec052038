//! State shared by every node through Redis (when `REDIS_CONN_STRING` is set): the balances and
//! reservations of the ledger and the relay's rate limits, each changed by one atomic Lua script
//! so that several nodes admit exactly what one node would. A single Redis (or a primary with
//! replicas) is assumed, not Redis Cluster: the scripts touch keys they derive.
//!
//! Keys (under a configurable prefix):
//! - `{p}u:{id}` and `{p}t:{id}`: hashes with `bal` (the balance as the cluster sees it:
//!   database value minus what nodes consumed but have not written yet), `res` (reserved),
//!   `unl` (keys: unlimited), `ver` (bumped by every credit and flush, so that a resync that read
//!   the database before one of them does not apply stale values) and `uf:{node}` (consumed on
//!   `node`, not yet in the database; per node so that a node that died can be reconciled).
//! - `{p}rz`: the open reservations, a sorted set scored by expiry (milliseconds); a member is
//!   `{user key}|{token key}|{amount}|{node}:{id}`. Expired ones are released by
//!   [`Shared::reap`] (a node that died mid-request leaves them behind).
//! - `{p}done:{node}:g{gen}`: a hash of the operations of one marker generation that were
//!   applied (field `s{op}` a settlement, with its charge; `c{op}` a credit; `f{op}` a flush), so
//!   that an operation sent again (its answer was lost) is applied once. A node starts a new
//!   generation every few seconds and drops the old ones once none of their operations can be
//!   sent again ([`Shared::rotate_markers`], driven by the ledger); each also expires 24 hours
//!   after it began, for the generations of a node that stopped.
//! - `{p}done:{node}:w{id}`: reservation `id` was withdrawn (as long as a reservation lives).
//! - `{p}acc`: every account key loaded (for the periodic resync); `{p}nacc:{node}`: the
//!   accounts with unwritten consumption of `node`.
//! - `{p}rl:{name}`: rate-limit state.
//! - `{p}epoch`: a random value set once per data set (by the first node that finds it missing).
//!   Each node keeps the one it rebuilt its view on; a Redis that lost its data (restarted
//!   without persistence, flushed) no longer has it, and every reservation is refused until the
//!   node has rebuilt the balances from the database ([`Shared::epoch_lost`], the ledger's
//!   `rebuild_with`).

use redis::aio::ConnectionManager;
use redis::Script;
use std::sync::LazyLock;

#[derive(Clone)]
pub struct Shared {
    /// For the pub/sub connection of [`Shared::subscribe_changes`].
    client: redis::Client,
    conn: ConnectionManager,
    prefix: String,
    node: String,
    /// The data set's epoch this node's view is built on (see the module's `{p}epoch`).
    epoch: std::sync::Arc<std::sync::Mutex<String>>,
}

/// Outcome of a reservation script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    /// Reserved this much (between the asked minimum and maximum).
    Ok(i64),
    UserShort,
    TokenShort,
    /// An account is not in Redis yet (first use, or Redis lost its data): load it and retry.
    NotLoaded,
    /// Redis no longer has the epoch this node's view is built on: it lost its data.
    Lost,
}

/// Which account a key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Account {
    User(i64),
    Token(i64),
}

/// A ledger script with its keys and arguments, run alone ([`Shared::run`]) or with others in
/// one round trip ([`Shared::run_all`]). Every script made into a call answers a number.
pub struct Call(redis::ScriptInvocation<'static>);

/// A settlement ([`Shared::settle_call`]).
#[derive(Debug, Clone, Copy)]
pub struct Settlement {
    /// The reservation released (0: none was made).
    pub id: u64,
    /// The operation's id on this node, which makes it apply once: the reservation's id, or a
    /// new id of the same sequence when there is none.
    pub op: u64,
    pub user: i64,
    /// 0: no key.
    pub token: i64,
    /// The reservation's amount.
    pub amount: i64,
    pub cost: i64,
    /// How far below zero the charge may take a balance.
    pub tolerance: i64,
    /// Charges `cost` whatever the balances (a retry, whose charge was fixed already).
    pub force: bool,
    /// The marker generation the operation is marked applied in (the same each time it is sent).
    pub gen: u64,
}

/// KEYS: user, token, rz, withdrawal marker, epoch. ARGV: min, max, "{node}:{id}", expiry ms,
/// has token, epoch. Returns the amount reserved, or -1 not loaded, -2 user short, -3 token
/// short, -4 withdrawn, -5 another epoch (Redis lost its data). An account is loaded when its
/// hash has a balance (which `HMGET` answers).
const RESERVE: &str = r"
if redis.call('GET', KEYS[5]) ~= ARGV[6] then return -5 end
local min = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local tok = ARGV[5] == '1'
if redis.call('EXISTS', KEYS[4]) == 1 then return -4 end
local u = redis.call('HMGET', KEYS[1], 'bal', 'res')
if not u[1] then return -1 end
local t
if tok then
  t = redis.call('HMGET', KEYS[2], 'bal', 'res', 'unl')
  if not t[1] then return -1 end
end
local ub = tonumber(u[1])
local avail = ub - tonumber(u[2] or '0')
if ub <= 0 or avail < min then return -2 end
if tok then
  if t[3] ~= '1' then
    local tb = tonumber(t[1])
    local ta = tb - tonumber(t[2] or '0')
    if tb <= 0 or ta < min then return -3 end
    if ta < avail then avail = ta end
  end
end
local amt = max
if avail < amt then amt = avail end
if amt < 0 then amt = 0 end
redis.call('HINCRBY', KEYS[1], 'res', amt)
local tkey = ''
if tok then
  redis.call('HINCRBY', KEYS[2], 'res', amt)
  tkey = KEYS[2]
end
redis.call('ZADD', KEYS[3], tonumber(ARGV[4]), KEYS[1] .. '|' .. tkey .. '|' .. amt .. '|' .. ARGV[3])
return amt
";

/// Releases a reservation member if it is still open. Used inside other scripts.
// Lua 5.1 turns `-x` of 0 into -0, which HINCRBY refuses: negations are written `0 - x`.
const RELEASE_FN: &str = r"
local function release(rz, member)
  if member == '' or redis.call('ZREM', rz, member) == 0 then return end
  local u, t, a = string.match(member, '^([^|]*)|([^|]*)|(%-?%d+)|')
  local amt = tonumber(a)
  for _, k in ipairs({u, t}) do
    if k ~= '' and redis.call('EXISTS', k) == 1 then redis.call('HINCRBY', k, 'res', 0 - amt) end
  end
end
";

/// KEYS: user, token, rz, marker generation. ARGV: member, cost, tolerance, node field, nacc key,
/// has token, force, marker field. Releases the reservation and charges the cost, capped (unless
/// forced) so that no balance goes below `-tolerance` beyond what other requests hold reserved.
/// Returns the charge (the earlier charge when this settlement was applied already). Only
/// loaded accounts (a hash with a balance, which `HMGET` answers) are charged.
const SETTLE: &str = r"
local prev = redis.call('HGET', KEYS[4], ARGV[8])
if prev then return tonumber(prev) end
release(KEYS[3], ARGV[1])
local charge = tonumber(ARGV[2])
local tol = tonumber(ARGV[3])
local loaded = {}
for i, k in ipairs({KEYS[1], KEYS[2]}) do
  if i == 1 or ARGV[6] == '1' then
    local h = redis.call('HMGET', k, 'bal', 'res', 'unl')
    if h[1] then
      loaded[#loaded + 1] = k
      if ARGV[7] ~= '1' and (h[3] ~= '1' or i == 1) then
        local room = tonumber(h[1]) - tonumber(h[2] or '0') + tol
        if room < charge then charge = room end
      end
    end
  end
end
if charge < 0 then charge = 0 end
for _, k in ipairs(loaded) do
  redis.call('HINCRBY', k, 'bal', 0 - charge)
  redis.call('HINCRBY', k, ARGV[4], charge)
  redis.call('SADD', ARGV[5], k)
end
redis.call('HSET', KEYS[4], ARGV[8], charge)
return charge
";

/// KEYS: rz. ARGV: member.
const REFUND: &str = r"
release(KEYS[1], ARGV[1])
return 0
";

/// KEYS: rz, the reservation's withdrawal marker. ARGV: tag, expiry, seconds to keep the marker.
/// Withdraws a reservation whose caller never learnt the outcome (the reply was lost or late):
/// releases its member if Redis made it (found by its expiry score and tag, its amount unknown
/// to the caller), and sets the marker, which `RESERVE` checks, so that a reservation still on
/// its way is refused when it arrives.
const CANCEL: &str = r"
redis.call('SET', KEYS[2], '1', 'EX', tonumber(ARGV[3]))
local suffix = '|' .. ARGV[1]
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[2])) do
  if string.sub(m, 0 - string.len(suffix)) == suffix then release(KEYS[1], m) end
end
return 0
";

/// KEYS: account, marker generation. ARGV: delta, unl ('' keeps it), marker field. A credit (or
/// debit) already committed to the database.
const CREDIT: &str = r"
if redis.call('HSETNX', KEYS[2], ARGV[3], 1) == 0 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'bal', tonumber(ARGV[1]))
  redis.call('HINCRBY', KEYS[1], 'ver', 1)
  if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'unl', ARGV[2]) end
end
return 1
";

/// KEYS: account. ARGV: balance. Sets the balance of a tracked account (a key's new remaining
/// quota) and returns the one it replaces; nil when the account is not tracked.
const SETBAL: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local old = tonumber(redis.call('HGET', KEYS[1], 'bal') or '0')
redis.call('HSET', KEYS[1], 'bal', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'ver', 1)
return old
";

/// KEYS: marker generation, accounts... ARGV: node field, amounts..., marker field (after the
/// amounts). A batch reached the database.
const FLUSHED: &str = r"
if redis.call('HSETNX', KEYS[1], ARGV[#KEYS + 1], 1) == 0 then return 0 end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HINCRBY', KEYS[i], ARGV[1], 0 - tonumber(ARGV[i]))
    redis.call('HINCRBY', KEYS[i], 'ver', 1)
  end
end
return 1
";

/// KEYS: account, account set. ARGV: bal, unl. Creates the account unless it exists.
const LOAD: &str = r"
if redis.call('HSETNX', KEYS[1], 'bal', ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'res', 0, 'ver', 0, 'unl', ARGV[2])
else
  redis.call('HSET', KEYS[1], 'unl', ARGV[2])
end
redis.call('SADD', KEYS[2], KEYS[1])
return 0
";

/// KEYS: accounts... Their `ver` (0 when missing).
const VERS: &str = r"
local out = {}
for i = 1, #KEYS do out[i] = tonumber(redis.call('HGET', KEYS[i], 'ver') or '0') end
return out
";

/// KEYS: account. ARGV: database value, unl ('' keeps it), expected ver.
/// bal = database value - every node's unwritten consumption, unless a credit or flush came in
/// since the database was read (then the next resync does it).
const RESYNC: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'ver') or '0') ~= tonumber(ARGV[3]) then return 0 end
local h = redis.call('HGETALL', KEYS[1])
local unflushed = 0
for i = 1, #h, 2 do
  if string.sub(h[i], 1, 3) == 'uf:' then unflushed = unflushed + tonumber(h[i + 1]) end
end
redis.call('HSET', KEYS[1], 'bal', tonumber(ARGV[1]) - unflushed)
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'unl', ARGV[2]) end
return 1
";

/// KEYS: account, account set. Drops it when nothing is reserved or unwritten.
const FORGET: &str = r"
local h = redis.call('HGETALL', KEYS[1])
for i = 1, #h, 2 do
  if (h[i] == 'res' or string.sub(h[i], 1, 3) == 'uf:') and tonumber(h[i + 1]) ~= 0 then
    return 0
  end
end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], KEYS[1])
return 1
";

/// KEYS: nacc of the node, rz. ARGV: node field, '|{node}:' (the members' node part).
/// A node starts again: what it consumed and did not write is gone (its journal was written
/// already), its reservations belong to requests that no longer exist. Returns the accounts
/// touched (to be resynced from the database).
const RECLAIM: &str = r"
local accts = drop_unflushed(KEYS[1], ARGV[1])
local all = redis.call('ZRANGE', KEYS[2], 0, -1)
for _, m in ipairs(all) do
  if string.find(m, ARGV[2], 1, true) then release(KEYS[2], m) end
end
return accts
";

/// KEYS: nacc of the node. ARGV: node field. This node's unwritten consumption is all in the
/// database now (a rebuild): its fields go. Returns the accounts touched.
const DROP_UNFLUSHED: &str = r"
return drop_unflushed(KEYS[1], ARGV[1])
";

/// Drops a node's unwritten-consumption field from the accounts of its set `nacc` (each
/// account's version bumped) and the set; returns the accounts. Used inside other scripts.
const DROP_UNFLUSHED_FN: &str = r"
local function drop_unflushed(nacc, field)
  local accts = redis.call('SMEMBERS', nacc)
  for _, k in ipairs(accts) do
    redis.call('HDEL', k, field)
    redis.call('HINCRBY', k, 'ver', 1)
  end
  redis.call('DEL', nacc)
  return accts
end
";

/// KEYS: nodes set, rz. ARGV: prefix, this node. Nodes whose heartbeat lapsed (they died and did
/// not come back, or came back with another data directory): what they left unwritten is gone
/// and their reservations belong to requests that no longer exist. Returns the accounts touched.
const RECLAIM_DEAD: &str = r"
local out = {}
for _, n in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if n ~= ARGV[2] and redis.call('EXISTS', ARGV[1] .. 'node:' .. n) == 0 then
    local nacc = ARGV[1] .. 'nacc:' .. n
    for _, k in ipairs(redis.call('SMEMBERS', nacc)) do
      redis.call('HDEL', k, 'uf:' .. n)
      redis.call('HINCRBY', k, 'ver', 1)
      out[#out + 1] = k
    end
    redis.call('DEL', nacc)
    for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
      if string.find(m, '|' .. n .. ':', 1, true) then release(KEYS[2], m) end
    end
    redis.call('SREM', KEYS[1], n)
  end
end
return out
";

/// KEYS: rz. ARGV: now ms, limit. Releases expired reservations; returns how many.
const REAP: &str = r"
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(old) do release(KEYS[1], m) end
return #old
";

/// Fixed one-minute window. KEYS: counter. ARGV: limit, window ms.
const WINDOW: &str = r"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
if n > tonumber(ARGV[1]) then return 0 end
return 1
";

/// Token bucket on Redis time. KEYS: bucket. ARGV: capacity, refill per ms.
const BUCKET: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local h = redis.call('HMGET', KEYS[1], 'tk', 'ts')
local tk = tonumber(h[1]) or cap
local ts = tonumber(h[2]) or now
if now > ts then tk = math.min(cap, tk + (now - ts) * rate) end
local ok = 0
if tk >= 1 - 1e-9 then tk = math.max(0, tk - 1) ok = 1 end
redis.call('HSET', KEYS[1], 'tk', tostring(tk), 'ts', math.max(now, ts))
redis.call('PEXPIRE', KEYS[1], 120000)
return ok
";

fn script(src: &'static str) -> Script {
    Script::new(src)
}

/// A script that calls `release`.
fn with_release(src: &str) -> Script {
    Script::new(&format!("{RELEASE_FN}\n{src}"))
}

// Each script is hashed once.
static BUCKET_S: LazyLock<Script> = LazyLock::new(|| script(BUCKET));
static CANCEL_S: LazyLock<Script> = LazyLock::new(|| with_release(CANCEL));
static CREDIT_S: LazyLock<Script> = LazyLock::new(|| script(CREDIT));
static DROP_UNFLUSHED_S: LazyLock<Script> =
    LazyLock::new(|| Script::new(&format!("{DROP_UNFLUSHED_FN}\n{DROP_UNFLUSHED}")));
static FLUSHED_S: LazyLock<Script> = LazyLock::new(|| script(FLUSHED));
static FORGET_S: LazyLock<Script> = LazyLock::new(|| script(FORGET));
static LOAD_S: LazyLock<Script> = LazyLock::new(|| script(LOAD));
static RECLAIM_DEAD_S: LazyLock<Script> = LazyLock::new(|| with_release(RECLAIM_DEAD));
static REAP_S: LazyLock<Script> = LazyLock::new(|| with_release(REAP));
static RECLAIM_S: LazyLock<Script> =
    LazyLock::new(|| with_release(&format!("{DROP_UNFLUSHED_FN}\n{RECLAIM}")));
static REFUND_S: LazyLock<Script> = LazyLock::new(|| with_release(REFUND));
static RESERVE_S: LazyLock<Script> = LazyLock::new(|| script(RESERVE));
static RESYNC_S: LazyLock<Script> = LazyLock::new(|| script(RESYNC));
static SETBAL_S: LazyLock<Script> = LazyLock::new(|| script(SETBAL));
static SETTLE_S: LazyLock<Script> = LazyLock::new(|| with_release(SETTLE));
static VERS_S: LazyLock<Script> = LazyLock::new(|| script(VERS));
static WINDOW_S: LazyLock<Script> = LazyLock::new(|| script(WINDOW));

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

/// A node silent this long (no heartbeat) is taken for dead by the others.
pub const NODE_TTL_SECS: u64 = 600;

/// How long a generation of operation markers lives at most (`{p}done:{node}:g{gen}`): the
/// markers of a node that stopped, which no node drops.
pub const MARKER_TTL_SECS: u64 = 24 * 3600;

/// How long a reservation may stay open before [`Shared::reap`] releases it.
pub const RESERVATION_TTL_MS: i64 = 2 * 3600 * 1000;

/// The expiry (the reservation set's score) of a reservation made now.
pub fn reservation_expiry() -> i64 {
    now_ms().saturating_add(RESERVATION_TTL_MS)
}

impl Shared {
    /// Connects (the manager reconnects by itself afterwards). `node` names this process in the
    /// shared state (stable across restarts: see the server's data directory).
    pub async fn connect(url: &str, prefix: &str, node: &str) -> redis::RedisResult<Shared> {
        let client = redis::Client::open(url)?;
        // A Redis that does not answer must fail a request quickly (it is refused with 503, or
        // the operation is retried later), never hold it: bounded connect and response times.
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(std::time::Duration::from_secs(2)))
            .set_response_timeout(Some(std::time::Duration::from_secs(2)))
            .set_number_of_retries(2)
            .set_max_delay(std::time::Duration::from_millis(500));
        let conn = ConnectionManager::new_with_config(client.clone(), config).await?;
        let shared = Shared {
            client,
            conn,
            prefix: prefix.to_owned(),
            node: node.to_owned(),
            epoch: std::sync::Arc::default(),
        };
        shared.adopt_epoch().await?;
        Ok(shared)
    }

    fn epoch_key(&self) -> String {
        format!("{}epoch", self.prefix)
    }

    fn epoch(&self) -> String {
        match self.epoch.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Builds this node's view on Redis's current data set: its epoch, set first when Redis
    /// has none (a new or emptied data set). Call once the view is built (at start; after a
    /// rebuild).
    pub async fn adopt_epoch(&self) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        let fresh = rand::distr::SampleString::sample_string(
            &rand::distr::Alphanumeric,
            &mut rand::rng(),
            24,
        );
        let (epoch,): (String,) = redis::pipe()
            .cmd("SET")
            .arg(self.epoch_key())
            .arg(&fresh)
            .arg("NX")
            .ignore()
            .cmd("GET")
            .arg(self.epoch_key())
            .query_async(&mut c)
            .await?;
        match self.epoch.lock() {
            Ok(mut g) => *g = epoch,
            Err(p) => *p.into_inner() = epoch,
        }
        Ok(())
    }

    /// Whether Redis no longer has the data set this node's view is built on (its epoch is
    /// missing or another): the balances must be rebuilt from the database.
    pub async fn epoch_lost(&self) -> redis::RedisResult<bool> {
        let mut c = self.conn.clone();
        let now: Option<String> = redis::cmd("GET")
            .arg(self.epoch_key())
            .query_async(&mut c)
            .await?;
        Ok(now.as_deref() != Some(self.epoch().as_str()))
    }

    /// A rebuild: this node's unwritten consumption was written to the database, so its
    /// per-node fields go. Returns the accounts touched.
    pub async fn drop_unflushed(&self) -> redis::RedisResult<Vec<Account>> {
        let mut c = self.conn.clone();
        let keys: Vec<String> = DROP_UNFLUSHED_S
            .key(self.nacc())
            .arg(self.uf())
            .invoke_async(&mut c)
            .await?;
        Ok(keys.iter().filter_map(|k| self.parse_key(k)).collect())
    }

    /// Whether Redis answers (`PING`), for the readiness probe.
    pub async fn ping(&self) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        redis::cmd("PING")
            .query_async::<String>(&mut c)
            .await
            .map(|_| ())
    }

    pub fn node(&self) -> &str {
        &self.node
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn user(&self, id: i64) -> String {
        format!("{}u:{id}", self.prefix)
    }

    fn token(&self, id: i64) -> String {
        format!("{}t:{id}", self.prefix)
    }

    fn key(&self, a: Account) -> String {
        match a {
            Account::User(id) => self.user(id),
            Account::Token(id) => self.token(id),
        }
    }

    fn parse_key(&self, k: &str) -> Option<Account> {
        let rest = k.strip_prefix(&self.prefix)?;
        if let Some(id) = rest.strip_prefix("u:") {
            return id.parse().ok().map(Account::User);
        }
        rest.strip_prefix("t:")?.parse().ok().map(Account::Token)
    }

    fn rz(&self) -> String {
        format!("{}rz", self.prefix)
    }

    /// The marker of reservation `id`'s withdrawal ([`Shared::cancel_call`]), a key of its own
    /// that lives as long as a reservation may (withdrawals are rare: a reply lost or late).
    fn withdrawn(&self, id: u64) -> String {
        format!("{}done:{}:w{id}", self.prefix, self.node)
    }

    fn acc(&self) -> String {
        format!("{}acc", self.prefix)
    }

    fn nacc(&self) -> String {
        format!("{}nacc:{}", self.prefix, self.node)
    }

    fn uf(&self) -> String {
        format!("uf:{}", self.node)
    }

    /// The hash of marker generation `gen` of this node (the operations of it that were applied).
    pub fn generation(&self, gen: u64) -> String {
        format!("{}done:{}:g{gen}", self.prefix, self.node)
    }

    /// The reservation member's last part.
    fn tag(&self, id: u64) -> String {
        format!("{}:{id}", self.node)
    }

    /// The sorted-set member of a reservation of `amount`.
    pub fn member(&self, id: u64, user: i64, token: i64, amount: i64) -> String {
        let t = if token > 0 {
            self.token(token)
        } else {
            String::new()
        };
        format!("{}|{t}|{amount}|{}", self.user(user), self.tag(id))
    }

    /// Reserves between `min` and `max` (as much of `max` as both balances allow), open until
    /// `expires` ([`reservation_expiry`]). An error leaves the outcome unknown: Redis may have
    /// made the reservation and the reply been lost; [`Shared::cancel_call`] withdraws it either way.
    pub async fn reserve(
        &self,
        id: u64,
        user: i64,
        token: i64,
        min: i64,
        max: i64,
        expires: i64,
    ) -> redis::RedisResult<Reserve> {
        let mut c = self.conn.clone();
        let mut call = RESERVE_S.key(self.user(user));
        call.key(self.token(token.max(0)))
            .key(self.rz())
            .key(self.withdrawn(id))
            .key(self.epoch_key())
            .arg(min)
            .arg(max)
            .arg(self.tag(id))
            .arg(expires)
            .arg(if token > 0 { "1" } else { "0" });
        // Written into the call under the lock (no copy of the epoch a reservation).
        match self.epoch.lock() {
            Ok(e) => call.arg(e.as_str()),
            Err(p) => call.arg(p.into_inner().as_str()),
        };
        let r: i64 = call.invoke_async(&mut c).await?;
        Ok(match r {
            r if r >= 0 => Reserve::Ok(r),
            -2 => Reserve::UserShort,
            -3 => Reserve::TokenShort,
            -5 => Reserve::Lost,
            _ => Reserve::NotLoaded,
        })
    }

    /// Releases a reservation and charges its cost, capped by the balance rule unless forced
    /// (see [`Settlement`]). The same `op` is applied once however often the call runs; a
    /// repeat answers the charge made the first time.
    pub fn settle_call(&self, s: &Settlement) -> Call {
        let member = if s.id == 0 {
            String::new()
        } else {
            self.member(s.id, s.user, s.token, s.amount)
        };
        let mut c = SETTLE_S.prepare_invoke();
        c.key(self.user(s.user))
            .key(self.token(s.token.max(0)))
            .key(self.rz())
            .key(self.generation(s.gen))
            .arg(member)
            .arg(s.cost.max(0))
            .arg(s.tolerance.max(0))
            .arg(self.uf())
            .arg(self.nacc())
            .arg(if s.token > 0 { "1" } else { "0" })
            .arg(if s.force { "1" } else { "0" })
            .arg(format!("s{}", s.op));
        Call(c)
    }

    /// Releases reservation `id` without charging (nothing when it was released already; safe
    /// to repeat).
    pub fn refund_call(&self, id: u64, user: i64, token: i64, amount: i64) -> Call {
        let mut s = REFUND_S.prepare_invoke();
        s.key(self.rz()).arg(self.member(id, user, token, amount));
        Call(s)
    }

    /// Withdraws reservation `id` of a [`Shared::reserve`] that failed (made `expires`): releases
    /// it if Redis made it, and refuses it if it arrives later. Safe to repeat.
    pub fn cancel_call(&self, id: u64, expires: i64) -> Call {
        let mut s = CANCEL_S.prepare_invoke();
        s.key(self.rz())
            .key(self.withdrawn(id))
            .arg(self.tag(id))
            .arg(expires)
            .arg(RESERVATION_TTL_MS / 1000);
        Call(s)
    }

    /// Runs one call (loading its script when Redis does not know it). Returns the script's
    /// number.
    pub async fn run(&self, call: &Call) -> redis::RedisResult<i64> {
        let mut c = self.conn.clone();
        call.0.invoke_async(&mut c).await
    }

    /// Runs `calls` in order in one round trip (a pipeline: Redis runs each script alone, as
    /// [`Shared::run`] would, one after the other). The outer error leaves every outcome unknown
    /// (the connection failed: any of them may have been applied); otherwise each call has its
    /// own result, in order. A call that failed because Redis did not know its script (after a
    /// restart or `SCRIPT FLUSH`) did not run: it is run again, after the rest, with its script
    /// loaded.
    pub async fn run_all(
        &self,
        calls: &[Call],
    ) -> redis::RedisResult<Vec<redis::RedisResult<i64>>> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = self.conn.clone();
        let mut p = redis::pipe();
        p.ignore_errors();
        for call in calls {
            p.invoke_script(&call.0);
        }
        let mut results: Vec<redis::RedisResult<i64>> = p.query_async(&mut c).await?;
        if results.len() != calls.len() {
            return Err(redis::RedisError::from((
                redis::ErrorKind::UnexpectedReturnType,
                "a pipeline answered with the wrong number of replies",
            )));
        }
        for (call, result) in calls.iter().zip(results.iter_mut()) {
            let unknown_script = matches!(result, Err(e)
                if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript));
            if unknown_script {
                *result = call.0.invoke_async(&mut c).await;
            }
        }
        Ok(results)
    }

    pub async fn load(
        &self,
        user: i64,
        user_quota: i64,
        token: i64,
        remain: i64,
        unlimited: bool,
    ) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        LOAD_S
            .key(self.user(user))
            .key(self.acc())
            .arg(user_quota)
            .arg("0")
            .invoke_async::<i64>(&mut c)
            .await?;
        if token > 0 {
            LOAD_S
                .key(self.token(token))
                .key(self.acc())
                .arg(remain)
                .arg(if unlimited { "1" } else { "0" })
                .invoke_async::<i64>(&mut c)
                .await?;
        }
        Ok(())
    }

    /// A change already committed to the database: `delta` on the balance (and, for keys, the
    /// unlimited flag when given). `op` (marked in generation `gen`) makes it apply once however
    /// often it runs.
    pub fn credit_call(
        &self,
        account: Account,
        delta: i64,
        unlimited: Option<bool>,
        op: u64,
        gen: u64,
    ) -> Call {
        let mut s = CREDIT_S.prepare_invoke();
        s.key(self.key(account))
            .key(self.generation(gen))
            .arg(delta)
            .arg(match unlimited {
                None => "",
                Some(true) => "1",
                Some(false) => "0",
            })
            .arg(format!("c{op}"));
        Call(s)
    }

    /// Sets a tracked account's balance; returns the balance it replaced (`None`: not tracked).
    pub async fn set_balance(
        &self,
        account: Account,
        value: i64,
    ) -> redis::RedisResult<Option<i64>> {
        let mut c = self.conn.clone();
        SETBAL_S
            .key(self.key(account))
            .arg(value)
            .invoke_async(&mut c)
            .await
    }

    /// After a batch reached the database: that much of this node's consumption is written
    /// (`op`, marked in generation `gen`, applied once however often it runs). `None` when there
    /// is nothing to say.
    pub fn flushed_call(&self, amounts: &[(Account, i64)], op: u64, gen: u64) -> Option<Call> {
        if amounts.is_empty() {
            return None;
        }
        let mut s = FLUSHED_S.prepare_invoke();
        s.key(self.generation(gen)).arg(self.uf());
        for (a, q) in amounts {
            s.key(self.key(*a)).arg(*q);
        }
        s.arg(format!("f{op}"));
        Some(Call(s))
    }

    /// Starts marker generation `current` (its hash made now, expiring after
    /// [`MARKER_TTL_SECS`]) and drops the hashes of generations `drop` (none of whose operations
    /// can be sent again). `UNLINK` frees a large hash off Redis's main thread.
    pub async fn rotate_markers(
        &self,
        current: u64,
        drop: std::ops::Range<u64>,
    ) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        let mut p = redis::pipe();
        let key = self.generation(current);
        p.cmd("HSET").arg(&key).arg("at").arg(now_ms()).ignore();
        p.cmd("EXPIRE").arg(&key).arg(MARKER_TTL_SECS).ignore();
        if !drop.is_empty() {
            let mut unlink = redis::cmd("UNLINK");
            for gen in drop {
                unlink.arg(self.generation(gen));
            }
            p.add_command(unlink).ignore();
        }
        p.query_async::<()>(&mut c).await
    }

    /// Every account loaded by any node.
    pub async fn accounts(&self) -> redis::RedisResult<Vec<Account>> {
        let mut c = self.conn.clone();
        let keys: Vec<String> = redis::cmd("SMEMBERS")
            .arg(self.acc())
            .query_async(&mut c)
            .await?;
        Ok(keys.iter().filter_map(|k| self.parse_key(k)).collect())
    }

    /// The accounts' change counters (read before the database, passed to [`Shared::resync`]).
    pub async fn versions(&self, accounts: &[Account]) -> redis::RedisResult<Vec<i64>> {
        if accounts.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = self.conn.clone();
        let mut s = VERS_S.prepare_invoke();
        for a in accounts {
            s.key(self.key(*a));
        }
        s.invoke_async(&mut c).await
    }

    /// Sets each account to its database value minus every node's unwritten consumption,
    /// unless it changed since its version was read. `values`: (account, database value,
    /// unlimited for keys, version read before the database).
    pub async fn resync(
        &self,
        values: &[(Account, i64, Option<bool>, i64)],
    ) -> redis::RedisResult<usize> {
        let mut c = self.conn.clone();
        let mut applied = 0;
        for (a, q, unl, ver) in values {
            let n: i64 = RESYNC_S
                .key(self.key(*a))
                .arg(q)
                .arg(match unl {
                    None => "",
                    Some(true) => "1",
                    Some(false) => "0",
                })
                .arg(ver)
                .invoke_async(&mut c)
                .await?;
            applied += usize::from(n == 1);
        }
        Ok(applied)
    }

    pub async fn forget(&self, account: Account) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        FORGET_S
            .key(self.key(account))
            .key(self.acc())
            .invoke_async::<i64>(&mut c)
            .await?;
        Ok(())
    }

    /// At start: forgets this node's unwritten consumption of an earlier run (whatever of it was
    /// kept is in the journal, written to the database before this) and releases its
    /// reservations. Returns the accounts to resync from the database.
    pub async fn reclaim(&self) -> redis::RedisResult<Vec<Account>> {
        let mut c = self.conn.clone();
        let keys: Vec<String> = RECLAIM_S
            .key(self.nacc())
            .key(self.rz())
            .arg(self.uf())
            .arg(format!("|{}:", self.node))
            .invoke_async(&mut c)
            .await?;
        Ok(keys.iter().filter_map(|k| self.parse_key(k)).collect())
    }

    /// Says this node is alive (for [`Shared::reclaim_dead`] on the other nodes): a key that
    /// lapses after [`NODE_TTL_SECS`] without a new heartbeat.
    pub async fn heartbeat(&self) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        redis::pipe()
            .cmd("SET")
            .arg(format!("{}node:{}", self.prefix, self.node))
            .arg(1)
            .arg("EX")
            .arg(NODE_TTL_SECS)
            .ignore()
            .cmd("SADD")
            .arg(format!("{}nodes", self.prefix))
            .arg(&self.node)
            .ignore()
            .query_async::<()>(&mut c)
            .await
    }

    /// Drops what dead nodes (no heartbeat for [`NODE_TTL_SECS`]) left in Redis: their unwritten
    /// consumption and their reservations. Returns the accounts to resync from the database.
    pub async fn reclaim_dead(&self) -> redis::RedisResult<Vec<Account>> {
        let mut c = self.conn.clone();
        let keys: Vec<String> = RECLAIM_DEAD_S
            .key(format!("{}nodes", self.prefix))
            .key(self.rz())
            .arg(&self.prefix)
            .arg(&self.node)
            .invoke_async(&mut c)
            .await?;
        Ok(keys.iter().filter_map(|k| self.parse_key(k)).collect())
    }

    /// Releases reservations past their expiry (their node died); returns how many.
    pub async fn reap(&self) -> redis::RedisResult<i64> {
        let mut c = self.conn.clone();
        REAP_S
            .key(self.rz())
            .arg(now_ms())
            .arg(500)
            .invoke_async(&mut c)
            .await
    }

    /// The channel the nodes tell each other about their changes on (`crate::coherence`).
    fn changes(&self) -> String {
        format!("{}changes", self.prefix)
    }

    /// Publishes a change message to the other nodes.
    pub async fn publish_change(&self, msg: &str) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        redis::cmd("PUBLISH")
            .arg(self.changes())
            .arg(msg)
            .query_async::<i64>(&mut c)
            .await
            .map(|_| ())
    }

    /// A pub/sub connection subscribed to the change messages.
    pub async fn subscribe_changes(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let mut p = self.client.get_async_pubsub().await?;
        p.subscribe(self.changes()).await?;
        Ok(p)
    }

    /// The response cache's key of `digest` (`switchboard_domain::response_cache::key`).
    pub fn cache_key(&self, digest: &str) -> String {
        format!("{}rc:{digest}", self.prefix)
    }

    /// A kept answer of the response cache (Redis expires it).
    pub async fn cache_get(&self, digest: &str) -> redis::RedisResult<Option<Vec<u8>>> {
        let mut c = self.conn.clone();
        redis::cmd("GET")
            .arg(self.cache_key(digest))
            .query_async(&mut c)
            .await
    }

    /// Keeps an answer of the response cache for `ttl_secs`.
    pub async fn cache_put(
        &self,
        digest: &str,
        value: &[u8],
        ttl_secs: u64,
    ) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        redis::cmd("SET")
            .arg(self.cache_key(digest))
            .arg(value)
            .arg("EX")
            .arg(ttl_secs.max(1))
            .query_async(&mut c)
            .await
    }

    /// One account's hash field (tests and diagnostics).
    pub async fn field(&self, account: Account, field: &str) -> redis::RedisResult<Option<i64>> {
        let mut c = self.conn.clone();
        redis::cmd("HGET")
            .arg(self.key(account))
            .arg(field)
            .query_async(&mut c)
            .await
    }

    /// A user's balance as Redis holds it (tests and diagnostics).
    pub async fn user_balance(&self, user: i64) -> redis::RedisResult<Option<i64>> {
        self.field(Account::User(user), "bal").await
    }

    /// A user's available balance (balance minus reservations) as Redis holds it.
    pub async fn user_available(&self, user: i64) -> redis::RedisResult<Option<i64>> {
        let mut c = self.conn.clone();
        let v: (Option<i64>, Option<i64>) = redis::cmd("HMGET")
            .arg(self.user(user))
            .arg("bal")
            .arg("res")
            .query_async(&mut c)
            .await?;
        Ok(v.0.map(|b| b - v.1.unwrap_or(0)))
    }

    pub async fn allow_window(
        &self,
        name: &str,
        limit: u32,
        window_ms: u64,
    ) -> redis::RedisResult<bool> {
        let mut c = self.conn.clone();
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default();
        // One counter per window: the window index is part of the key.
        let key = format!("{}rl:{name}:{}", self.prefix, now_ms / window_ms.max(1));
        let ok: i64 = WINDOW_S
            .key(key)
            .arg(limit)
            .arg(window_ms)
            .invoke_async(&mut c)
            .await?;
        Ok(ok == 1)
    }

    pub async fn allow_bucket(
        &self,
        name: &str,
        capacity: u32,
        refill_per_ms: f64,
    ) -> redis::RedisResult<bool> {
        let mut c = self.conn.clone();
        let key = format!("{}rl:{name}", self.prefix);
        let ok: i64 = BUCKET_S
            .key(key)
            .arg(capacity)
            .arg(refill_per_ms)
            .invoke_async(&mut c)
            .await?;
        Ok(ok == 1)
    }
}
