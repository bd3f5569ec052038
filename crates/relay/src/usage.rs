//! Token usage reported by OpenAI-protocol upstreams.

use serde_json::Value;

pub use switchboard_domain::price::Usage;

/// The usage in an OpenAI-protocol response or stream event, if it reports one:
/// - chat completions / completions / embeddings: `usage.prompt_tokens`, `completion_tokens`
///   (embeddings: `total_tokens - prompt_tokens`, i.e. 0), `prompt_tokens_details.cached_tokens`
///   and `.audio_tokens`, `completion_tokens_details.reasoning_tokens` and `.audio_tokens`;
///   vendors that report cache hits elsewhere are read too (DeepSeek's
///   `prompt_cache_hit_tokens`, Moonshot's top-level `cached_tokens`);
/// - the Responses API: `usage.input_tokens`, `output_tokens`,
///   `input_tokens_details.cached_tokens`, `output_tokens_details.reasoning_tokens`, at the top
///   level of a response or under `response` in stream events (`response.completed`, ...).
///
/// Prompt and completion counts are the upstream's totals: cached, audio and reasoning tokens
/// are parts of them, kept for pricing (which adds only their extra ratio, never the count
/// again). A `usage` that is null or has no token counts gives `None`.
pub fn from_openai(v: &Value) -> Option<Usage> {
    let usage = match v.get("usage") {
        Some(u) if u.is_object() => u,
        _ => v.get("response")?.get("usage").filter(|u| u.is_object())?,
    };
    if usage.get("input_tokens").is_some() || usage.get("output_tokens").is_some() {
        return Some(Usage {
            prompt_tokens: int(usage, &["input_tokens"]),
            completion_tokens: int(usage, &["output_tokens"]),
            cached_tokens: int(usage, &["input_tokens_details", "cached_tokens"]),
            input_audio_tokens: int(usage, &["input_tokens_details", "audio_tokens"]),
            reasoning_tokens: int(usage, &["output_tokens_details", "reasoning_tokens"]),
            output_audio_tokens: int(usage, &["output_tokens_details", "audio_tokens"]),
            ..Usage::default()
        });
    }
    if usage.get("prompt_tokens").is_none()
        && usage.get("completion_tokens").is_none()
        && usage.get("total_tokens").is_none()
    {
        return None;
    }
    let prompt = int(usage, &["prompt_tokens"]);
    let completion = match usage.get("completion_tokens") {
        Some(_) => int(usage, &["completion_tokens"]),
        None => (int(usage, &["total_tokens"]) - prompt).max(0),
    };
    let mut cached = int(usage, &["prompt_tokens_details", "cached_tokens"]);
    if cached == 0 {
        cached = int(usage, &["prompt_cache_hit_tokens"]).max(int(usage, &["cached_tokens"]));
    }
    Some(Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: cached,
        input_audio_tokens: int(usage, &["prompt_tokens_details", "audio_tokens"]),
        reasoning_tokens: int(usage, &["completion_tokens_details", "reasoning_tokens"]),
        output_audio_tokens: int(usage, &["completion_tokens_details", "audio_tokens"]),
        ..Usage::default()
    })
}

/// [`from_openai`] on a raw response body, without building the whole document: only the
/// `usage` and `response.usage` members are kept while parsing. `None` when the body is not a
/// JSON object or reports no usage.
pub fn from_openai_bytes(body: &[u8]) -> Option<Usage> {
    #[derive(serde::Deserialize)]
    struct Holder {
        #[serde(default)]
        usage: Option<Value>,
        #[serde(default)]
        response: Option<Inner>,
    }
    #[derive(serde::Deserialize)]
    struct Inner {
        #[serde(default)]
        usage: Option<Value>,
    }
    let h: Holder = serde_json::from_slice(body).ok()?;
    let mut v = serde_json::Map::new();
    if let Some(u) = h.usage {
        v.insert("usage".into(), u);
    }
    if let Some(u) = h.response.and_then(|r| r.usage) {
        v.insert("response".into(), serde_json::json!({ "usage": u }));
    }
    from_openai(&Value::Object(v))
}

/// The non-negative integer at `path`, 0 when absent, null or not a number.
fn int(v: &Value, path: &[&str]) -> i64 {
    let mut cur = v;
    for key in path {
        match cur.get(key) {
            Some(next) => cur = next,
            None => return 0,
        }
    }
    let n = match cur {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        _ => None,
    };
    n.unwrap_or(0).max(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chat_usage_with_details() {
        let v = json!({"usage": {
            "prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
            "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 7},
            "completion_tokens_details": {"reasoning_tokens": 128, "audio_tokens": 3,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
        }});
        let u = from_openai(&v).unwrap();
        assert_eq!(
            u,
            Usage {
                prompt_tokens: 2006,
                completion_tokens: 300,
                cached_tokens: 1920,
                input_audio_tokens: 7,
                reasoning_tokens: 128,
                output_audio_tokens: 3,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn embeddings_usage() {
        let u = from_openai(&json!({"usage": {"prompt_tokens": 8, "total_tokens": 8}})).unwrap();
        assert_eq!((u.prompt_tokens, u.completion_tokens), (8, 0));
    }

    #[test]
    fn responses_usage_top_level_and_nested() {
        let usage = json!({"input_tokens": 36, "input_tokens_details": {"cached_tokens": 10},
            "output_tokens": 87, "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 123});
        let expected = Usage {
            prompt_tokens: 36,
            completion_tokens: 87,
            cached_tokens: 10,
            reasoning_tokens: 20,
            ..Usage::default()
        };
        assert_eq!(from_openai(&json!({"usage": usage})), Some(expected));
        assert_eq!(
            from_openai(&json!({"type": "response.completed", "response": {"usage": usage}})),
            Some(expected)
        );
    }

    #[test]
    fn absent_or_null_usage() {
        assert_eq!(from_openai(&json!({"choices": []})), None);
        assert_eq!(from_openai(&json!({"usage": null})), None);
        assert_eq!(from_openai(&json!({"usage": {}})), None);
        assert_eq!(
            from_openai(&json!({"type": "response.created", "response": {"usage": null}})),
            None
        );
    }

    #[test]
    fn from_raw_bytes() {
        let body = br#"{"id":"x","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#;
        assert_eq!(
            from_openai_bytes(body).map(|u| (u.prompt_tokens, u.completion_tokens)),
            Some((3, 1))
        );
        let nested = br#"{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":5,"output_tokens":2}}}"#;
        assert_eq!(from_openai_bytes(nested).map(|u| u.prompt_tokens), Some(5));
        assert_eq!(from_openai_bytes(b"not json"), None);
        assert_eq!(from_openai_bytes(b"[1]"), None);
    }

    #[test]
    fn vendor_cache_fields() {
        let deepseek = json!({"usage": {"prompt_tokens": 100, "completion_tokens": 5,
            "prompt_cache_hit_tokens": 64, "prompt_cache_miss_tokens": 36}});
        assert_eq!(from_openai(&deepseek).map(|u| u.cached_tokens), Some(64));
        let moonshot =
            json!({"usage": {"prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 50}});
        assert_eq!(from_openai(&moonshot).map(|u| u.cached_tokens), Some(50));
    }
}
