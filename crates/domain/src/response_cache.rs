//! The response cache's rules (spec section 3, the key's "cache toggle"; settings
//! `ChatCacheEnabled`, `ChatCacheExpireMinute`, `ChatCacheRatio`): which chat requests may be
//! answered from an earlier identical one, what identifies them, and what a hit costs.
//!
//! - Only non-streamed chat completions with one choice (`n` absent or 1) and without tools or
//!   functions (their calls act on the caller's state, which a stored answer cannot know) are
//!   cached.
//! - The key is a SHA-256 digest of the user, the group, the model and the whole request body
//!   (every parameter, in a canonical key order), so that identical means identical. It is per
//!   user: a cache shared between users would let one learn, from a hit's price or speed, what
//!   another had asked.
//! - A hit costs `ceil(cost * ratio)` of what the stored answer's usage costs at today's price
//!   (the ratio between 0, free, and 1, full price).

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Why a request is not cached (shown in the `X-Switchboard-Cache` header as `skip`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    Stream,
    SeveralChoices,
    Tools,
}

/// Request keys that never change a non-streamed answer and are left out of the key.
const IGNORED: [&str; 2] = ["stream", "stream_options"];

/// Whether a chat completions body may be answered from the cache.
pub fn eligible(body: &Value) -> Result<(), Skip> {
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        return Err(Skip::Stream);
    }
    match body.get("n") {
        None | Some(Value::Null) => {}
        Some(n) if n.as_i64() == Some(1) => {}
        Some(_) => return Err(Skip::SeveralChoices),
    }
    let present = |k: &str| {
        body.get(k)
            .is_some_and(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
    };
    if present("tools") || present("functions") {
        return Err(Skip::Tools);
    }
    Ok(())
}

/// The cache key of a request: 64 hex digits. `body` is the client's JSON body (its object keys
/// are ordered by serde_json's map, so the same request gives the same key however its keys
/// were ordered on the wire).
pub fn key(user_id: i64, group: &str, model: &str, body: &Value) -> String {
    let mut h = Sha256::new();
    h.update(b"switchboard-response-cache-v1\0");
    h.update(user_id.to_le_bytes());
    for part in [group, model] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    match body {
        // The body's members by reference, in the map's (sorted) order, without the ignored
        // ones: no copy of the request is made to hash it.
        Value::Object(map) => {
            let kept: std::collections::BTreeMap<&String, &Value> = map
                .iter()
                .filter(|(k, _)| !IGNORED.contains(&k.as_str()))
                .collect();
            h.update(serde_json::to_vec(&kept).unwrap_or_default());
        }
        other => h.update(serde_json::to_vec(other).unwrap_or_default()),
    }
    hex::encode(h.finalize())
}

/// What a hit is charged: `ceil(full * ratio)` with the ratio clamped to 0..=1 (NaN is 0).
pub fn hit_quota(full: i64, ratio: f64) -> i64 {
    if full <= 0 || ratio.is_nan() || ratio <= 0.0 {
        return 0;
    }
    if ratio >= 1.0 {
        return full;
    }
    let r = Decimal::try_from(ratio).unwrap_or(Decimal::ZERO);
    (Decimal::from(full) * r)
        .ceil()
        .to_i64()
        .unwrap_or(full)
        .clamp(0, full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn eligibility() {
        let base = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(eligible(&base), Ok(()));
        let with = |k: &str, v: Value| {
            let mut b = base.clone();
            b[k] = v;
            eligible(&b)
        };
        assert_eq!(with("stream", json!(true)), Err(Skip::Stream));
        assert_eq!(with("stream", json!(false)), Ok(()));
        assert_eq!(with("n", json!(1)), Ok(()));
        assert_eq!(with("n", json!(null)), Ok(()));
        assert_eq!(with("n", json!(2)), Err(Skip::SeveralChoices));
        assert_eq!(with("n", json!("1")), Err(Skip::SeveralChoices));
        assert_eq!(
            with(
                "tools",
                json!([{"type": "function", "function": {"name": "f"}}])
            ),
            Err(Skip::Tools)
        );
        assert_eq!(with("tools", json!([])), Ok(()));
        assert_eq!(with("functions", json!([{"name": "f"}])), Err(Skip::Tools));
    }

    #[test]
    fn identical_requests_share_a_key_and_any_difference_changes_it() {
        let a: Value = serde_json::from_str(
            r#"{"model":"m","temperature":0.2,"messages":[{"role":"user","content":"hi"}]}"#,
        )
        .unwrap();
        let reordered: Value = serde_json::from_str(
            r#"{"messages":[{"content":"hi","role":"user"}],"temperature":0.2,"model":"m"}"#,
        )
        .unwrap();
        let k = key(1, "default", "m", &a);
        assert_eq!(k.len(), 64);
        assert_eq!(key(1, "default", "m", &reordered), k);
        // stream: false and stream_options change nothing of a non-streamed answer
        let mut s = a.clone();
        s["stream"] = json!(false);
        s["stream_options"] = json!({"include_usage": true});
        assert_eq!(key(1, "default", "m", &s), k);
        // user, group, model and every parameter are part of it
        assert_ne!(key(2, "default", "m", &a), k);
        assert_ne!(key(1, "vip", "m", &a), k);
        assert_ne!(key(1, "default", "m2", &a), k);
        let mut t = a.clone();
        t["temperature"] = json!(0.3);
        assert_ne!(key(1, "default", "m", &t), k);
        let mut u = a.clone();
        u["messages"][0]["content"] = json!("hi ");
        assert_ne!(key(1, "default", "m", &u), k);
        // the length prefixes keep group and model apart
        assert_ne!(key(1, "ab", "c", &a), key(1, "a", "bc", &a));
    }

    #[test]
    fn hit_costs_its_share() {
        assert_eq!(hit_quota(1000, 0.0), 0);
        assert_eq!(hit_quota(1000, 0.5), 500);
        assert_eq!(hit_quota(1001, 0.5), 501);
        assert_eq!(hit_quota(1000, 1.0), 1000);
        assert_eq!(hit_quota(1000, 7.0), 1000);
        assert_eq!(hit_quota(1000, -1.0), 0);
        assert_eq!(hit_quota(1000, f64::NAN), 0);
        assert_eq!(hit_quota(3, 0.1), 1);
        assert_eq!(hit_quota(0, 0.5), 0);
        assert_eq!(hit_quota(i64::MAX, 0.5), i64::MAX / 2 + 1);
    }
}
