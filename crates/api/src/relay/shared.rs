//! State shared by every node through Redis (when `REDIS_CONN_STRING` is set): the balances and
//! reservations of the ledger and the relay's rate limits, each changed by one atomic Lua script
//! so that several nodes admit exactly what one node would.
//!
//! Keys (under a configurable prefix): `{p}u:{id}` and `{p}t:{id}` hashes with `bal` (balance
//! as this cluster sees it), `res` (reserved), `unfl` (consumed but not yet in the database) and,
//! for keys, `unl` (unlimited); `{p}rl:{name}` rate-limit state.

use redis::aio::ConnectionManager;
use redis::Script;

#[derive(Clone)]
pub struct Shared {
    conn: ConnectionManager,
    prefix: String,
}

/// Outcome of a reservation script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    Ok,
    UserShort,
    TokenShort,
    /// An account is not in Redis yet (first use, or Redis lost its data): load it and retry.
    NotLoaded,
}

const RESERVE: &str = r"
local amt = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
local ub = tonumber(redis.call('HGET', KEYS[1], 'bal') or '0')
local ur = tonumber(redis.call('HGET', KEYS[1], 'res') or '0')
if ub <= 0 or ub - ur < amt then return 1 end
if redis.call('HGET', KEYS[2], 'unl') ~= '1' then
  local tb = tonumber(redis.call('HGET', KEYS[2], 'bal') or '0')
  local tr = tonumber(redis.call('HGET', KEYS[2], 'res') or '0')
  if tb <= 0 or tb - tr < amt then return 2 end
end
redis.call('HINCRBY', KEYS[1], 'res', amt)
redis.call('HINCRBY', KEYS[2], 'res', amt)
return 0
";

/// KEYS: user, token. ARGV: reserved, cost.
const SETTLE: &str = r"
local r = tonumber(ARGV[1])
local c = tonumber(ARGV[2])
for i = 1, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HINCRBY', KEYS[i], 'res', -r)
    redis.call('HINCRBY', KEYS[i], 'bal', -c)
    redis.call('HINCRBY', KEYS[i], 'unfl', c)
  end
end
return 0
";

/// KEYS: account. ARGV: bal, unl. Creates the account unless it exists.
const LOAD: &str = r"
if redis.call('HSETNX', KEYS[1], 'bal', ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'res', 0, 'unfl', 0, 'unl', ARGV[2])
else
  redis.call('HSET', KEYS[1], 'unl', ARGV[2])
end
return 0
";

/// KEYS: account. ARGV: field, delta. Changes an existing account only.
const INCR_IF_EXISTS: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], tonumber(ARGV[2]))
end
return 0
";

/// KEYS: account. ARGV: database value, unl. bal = database value - unflushed.
const RESYNC: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  local unfl = tonumber(redis.call('HGET', KEYS[1], 'unfl') or '0')
  redis.call('HSET', KEYS[1], 'bal', tonumber(ARGV[1]) - unfl, 'unl', ARGV[2])
end
return 0
";

/// KEYS: account. Drops it when nothing is reserved or unflushed.
const FORGET: &str = r"
local res = tonumber(redis.call('HGET', KEYS[1], 'res') or '0')
local unfl = tonumber(redis.call('HGET', KEYS[1], 'unfl') or '0')
if res == 0 and unfl == 0 then redis.call('DEL', KEYS[1]) end
return 0
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

impl Shared {
    /// Connects (the manager reconnects by itself afterwards).
    pub async fn connect(url: &str, prefix: &str) -> redis::RedisResult<Shared> {
        let client = redis::Client::open(url)?;
        let conn = ConnectionManager::new(client).await?;
        Ok(Shared {
            conn,
            prefix: prefix.to_owned(),
        })
    }

    fn user(&self, id: i64) -> String {
        format!("{}u:{id}", self.prefix)
    }

    fn token(&self, id: i64) -> String {
        format!("{}t:{id}", self.prefix)
    }

    pub async fn reserve(&self, user: i64, token: i64, amount: i64) -> redis::RedisResult<Reserve> {
        let mut c = self.conn.clone();
        let r: i64 = script(RESERVE)
            .key(self.user(user))
            .key(self.token(token))
            .arg(amount)
            .invoke_async(&mut c)
            .await?;
        Ok(match r {
            0 => Reserve::Ok,
            1 => Reserve::UserShort,
            2 => Reserve::TokenShort,
            _ => Reserve::NotLoaded,
        })
    }

    pub async fn settle(
        &self,
        user: i64,
        token: i64,
        reserved: i64,
        cost: i64,
    ) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        script(SETTLE)
            .key(self.user(user))
            .key(self.token(token))
            .arg(reserved)
            .arg(cost)
            .invoke_async::<i64>(&mut c)
            .await?;
        Ok(())
    }

    pub async fn refund(&self, user: i64, token: i64, reserved: i64) -> redis::RedisResult<()> {
        self.incr(&self.user(user), "res", -reserved).await?;
        self.incr(&self.token(token), "res", -reserved).await
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
        script(LOAD)
            .key(self.user(user))
            .arg(user_quota)
            .arg("0")
            .invoke_async::<i64>(&mut c)
            .await?;
        script(LOAD)
            .key(self.token(token))
            .arg(remain)
            .arg(if unlimited { "1" } else { "0" })
            .invoke_async::<i64>(&mut c)
            .await?;
        Ok(())
    }

    async fn incr(&self, key: &str, field: &str, delta: i64) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        script(INCR_IF_EXISTS)
            .key(key)
            .arg(field)
            .arg(delta)
            .invoke_async::<i64>(&mut c)
            .await?;
        Ok(())
    }

    pub async fn credit_user(&self, user: i64, delta: i64) -> redis::RedisResult<()> {
        self.incr(&self.user(user), "bal", delta).await
    }

    pub async fn credit_token(&self, token: i64, delta: i64) -> redis::RedisResult<()> {
        self.incr(&self.token(token), "bal", delta).await
    }

    /// After a batch reached the database: that much is no longer unflushed.
    pub async fn flushed(
        &self,
        users: &[(i64, i64)],
        tokens: &[(i64, i64)],
    ) -> redis::RedisResult<()> {
        for (id, q) in users {
            self.incr(&self.user(*id), "unfl", -q).await?;
        }
        for (id, q) in tokens {
            self.incr(&self.token(*id), "unfl", -q).await?;
        }
        Ok(())
    }

    pub async fn resync(
        &self,
        users: &[(i64, i64)],
        tokens: &[(i64, i64, bool)],
    ) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        for (id, q) in users {
            script(RESYNC)
                .key(self.user(*id))
                .arg(q)
                .arg("0")
                .invoke_async::<i64>(&mut c)
                .await?;
        }
        for (id, q, unl) in tokens {
            script(RESYNC)
                .key(self.token(*id))
                .arg(q)
                .arg(if *unl { "1" } else { "0" })
                .invoke_async::<i64>(&mut c)
                .await?;
        }
        Ok(())
    }

    pub async fn forget(&self, user: Option<i64>, token: Option<i64>) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        if let Some(u) = user {
            script(FORGET)
                .key(self.user(u))
                .invoke_async::<i64>(&mut c)
                .await?;
        }
        if let Some(t) = token {
            script(FORGET)
                .key(self.token(t))
                .invoke_async::<i64>(&mut c)
                .await?;
        }
        Ok(())
    }

    /// A user's balance as Redis holds it (tests and diagnostics).
    pub async fn user_balance(&self, user: i64) -> redis::RedisResult<Option<i64>> {
        let mut c = self.conn.clone();
        redis::cmd("HGET")
            .arg(self.user(user))
            .arg("bal")
            .query_async(&mut c)
            .await
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
        let ok: i64 = script(WINDOW)
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
        let ok: i64 = script(BUCKET)
            .key(key)
            .arg(capacity)
            .arg(refill_per_ms)
            .invoke_async(&mut c)
            .await?;
        Ok(ok == 1)
    }
}
