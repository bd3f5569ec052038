//! The response cache on the relay path (rules in `switchboard_domain::response_cache`): a
//! non-streamed chat request of a key with the cache toggle on, while `ChatCacheEnabled` is on,
//! is answered from an identical earlier request of the same user, group and model kept for
//! `ChatCacheExpireMinute`, and billed `ChatCacheRatio` of what the answer cost.
//!
//! Answers live in Redis when it is configured (shared by every node, expired by Redis), else in
//! the database (`response_cache`, purged by the maintenance loop to `ChatCacheMaxEntries`).
//! The cache never fails a request: a store that does not answer is a miss, and a write that
//! fails is forgotten.

use super::AuthToken;
use crate::settings::View;
use crate::AppState;
use actix_web::web;
use switchboard_domain::options::OptionValues;
use switchboard_domain::price::Usage;
use switchboard_domain::response_cache;
use switchboard_relay::endpoint::Endpoint;

/// The response header that tells a client how the cache treated its request: `hit`, `miss`
/// (answered by the upstream and kept) or `skip` (not cacheable: a stream, `n` > 1, tools).
/// Absent when the cache is off for the request.
pub const HEADER: &str = "X-Switchboard-Cache";

/// How long a database read of the cache may hold a request before it counts as a miss.
const READ_BUDGET: std::time::Duration = std::time::Duration::from_millis(500);

/// What the cache does for one request.
pub(super) enum Decision {
    /// The cache is off (site or key): no header.
    Off,
    /// Not cacheable (a stream, several choices, tools).
    Skip,
    /// Look up, and keep the answer on a miss.
    Use(Slot),
}

/// Where a cacheable request's answer is (or will be) kept.
pub(super) struct Slot {
    pub key: String,
    pub ttl_secs: i64,
    pub max_bytes: usize,
    pub ratio: f64,
}

/// A kept answer.
pub(super) struct Hit {
    pub body: Vec<u8>,
    pub usage: Usage,
}

/// Redis's value: the usage (JSON, one line) then a newline then the body.
fn encode(body: &[u8], usage: &Usage) -> Vec<u8> {
    let mut out = serde_json::to_vec(usage).unwrap_or_default();
    out.push(b'\n');
    out.extend_from_slice(body);
    out
}

fn decode(value: &[u8]) -> Option<Hit> {
    let nl = value.iter().position(|&b| b == b'\n')?;
    let usage = serde_json::from_slice(&value[..nl]).ok()?;
    Some(Hit {
        body: value[nl + 1..].to_vec(),
        usage,
    })
}

/// Whether and how the cache serves this request (`body` is the client's, before any rewrite).
pub(super) fn decide(
    o: &View<'_>,
    token: &AuthToken,
    group: &str,
    model: &str,
    endpoint: Endpoint,
    body: &serde_json::Value,
) -> Decision {
    if endpoint != Endpoint::ChatCompletions || !token.cache_enabled || !o.bool("ChatCacheEnabled")
    {
        return Decision::Off;
    }
    if response_cache::eligible(body).is_err() {
        return Decision::Skip;
    }
    Decision::Use(Slot {
        key: response_cache::key(token.user_id, group, model, body),
        ttl_secs: o.int("ChatCacheExpireMinute").max(1).saturating_mul(60),
        max_bytes: usize::try_from(o.int("ChatCacheMaxEntryKB").max(1))
            .unwrap_or(usize::MAX)
            .saturating_mul(1024),
        ratio: o.float("ChatCacheRatio"),
    })
}

/// The kept answer of `slot`, if any.
pub(super) async fn lookup(state: &web::Data<AppState>, slot: &Slot) -> Option<Hit> {
    if let Some(sh) = state.relay.ledger.shared() {
        return match sh.cache_get(&slot.key).await {
            Ok(v) => v.as_deref().and_then(decode),
            Err(e) => {
                tracing::warn!("response cache read failed (a miss): {e}");
                None
            }
        };
    }
    let key = slot.key.clone();
    let read = state.db(move |c| {
        Ok(switchboard_store::response_cache::get(
            c,
            &key,
            switchboard_store::now(),
        )?)
    });
    match tokio::time::timeout(READ_BUDGET, read).await {
        Ok(Ok(Some(row))) => Some(Hit {
            usage: serde_json::from_str(&row.usage_json).ok()?,
            body: row.body.into_bytes(),
        }),
        Ok(Ok(None)) => None,
        Ok(Err(e)) => {
            tracing::warn!("response cache read failed (a miss): {e}");
            None
        }
        Err(_) => None,
    }
}

/// Keeps an answer for `slot` in the background (an answer larger than the slot allows, or not
/// UTF-8 text, is not kept).
pub(super) fn keep(
    state: &web::Data<AppState>,
    slot: Slot,
    user_id: i64,
    model: &str,
    body: &[u8],
    usage: &Usage,
) {
    if body.len() > slot.max_bytes {
        return;
    }
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    let state = state.clone();
    if let Some(sh) = state.relay.ledger.shared().cloned() {
        let value = encode(body, usage);
        actix_web::rt::spawn(async move {
            let ttl = u64::try_from(slot.ttl_secs).unwrap_or(60);
            if let Err(e) = sh.cache_put(&slot.key, &value, ttl).await {
                tracing::warn!("response cache write failed: {e}");
            }
        });
        return;
    }
    let now = switchboard_store::now();
    let row = switchboard_store::response_cache::CachedAnswer {
        cache_key: slot.key,
        user_id,
        model_name: model.to_owned(),
        body: text.to_owned(),
        usage_json: serde_json::to_string(usage).unwrap_or_default(),
        created_at: now,
        expires_at: now.saturating_add(slot.ttl_secs),
    };
    actix_web::rt::spawn(async move {
        let written = state
            .db(move |c| Ok(switchboard_store::response_cache::put(c, &row)?))
            .await;
        if let Err(e) = written {
            tracing::warn!("response cache write failed: {e}");
        }
    });
}

/// Removes expired answers from the database and keeps it within `ChatCacheMaxEntries`
/// (maintenance; nothing to do when Redis holds the cache).
pub async fn purge(state: &AppState) -> crate::error::ApiResult<usize> {
    if state.relay.ledger.shared().is_some() {
        return Ok(0);
    }
    let max = {
        let snap = state.view();
        View(&snap).int("ChatCacheMaxEntries")
    };
    state
        .db(move |c| {
            Ok(switchboard_store::response_cache::purge(
                c,
                switchboard_store::now(),
                max,
            )?)
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_value_round_trips() {
        let usage = Usage {
            prompt_tokens: 12,
            completion_tokens: 3,
            cached_tokens: 2,
            ..Usage::default()
        };
        let body = b"{\"id\":\"x\",\n\"choices\":[]}";
        let hit = decode(&encode(body, &usage)).unwrap();
        assert_eq!(hit.usage, usage);
        assert_eq!(hit.body, body);
        assert!(decode(b"no newline").is_none());
        assert!(decode(b"not json\n{}").is_none());
    }
}
