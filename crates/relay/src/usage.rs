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
///   level of a response or under `response` in stream events (`response.completed`, ...);
///   gpt-image-1's image answers report the same shape;
/// - in both shapes, the modality split where the upstream gives it: `text_tokens` and
///   `image_tokens` of the prompt and completion details (priced with the text and image extra
///   ratios).
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
            input_text_tokens: int(usage, &["input_tokens_details", "text_tokens"]),
            input_image_tokens: int(usage, &["input_tokens_details", "image_tokens"]),
            output_text_tokens: int(usage, &["output_tokens_details", "text_tokens"]),
            output_image_tokens: int(usage, &["output_tokens_details", "image_tokens"]),
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
        input_text_tokens: int(usage, &["prompt_tokens_details", "text_tokens"]),
        input_image_tokens: int(usage, &["prompt_tokens_details", "image_tokens"]),
        output_text_tokens: int(usage, &["completion_tokens_details", "text_tokens"]),
        output_image_tokens: int(usage, &["completion_tokens_details", "image_tokens"]),
        ..Usage::default()
    })
}

/// The usage of an image generation answer: what the answer's tokens are when the upstream
/// does not split them (gpt-image-1 reports `output_tokens` without details, and every one of
/// them is an image token, as OpenAI documents).
pub fn of_image_answer(mut u: Usage) -> Usage {
    if u.output_image_tokens == 0 && u.output_text_tokens == 0 {
        u.output_image_tokens = u.completion_tokens;
    }
    u
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
    fn text_and_image_buckets() {
        let chat = json!({"usage": {"prompt_tokens": 300, "completion_tokens": 20,
            "prompt_tokens_details": {"text_tokens": 45, "image_tokens": 255, "cached_tokens": 0},
            "completion_tokens_details": {"text_tokens": 20}}});
        let u = from_openai(&chat).unwrap();
        assert_eq!(
            (
                u.input_text_tokens,
                u.input_image_tokens,
                u.output_text_tokens,
                u.output_image_tokens
            ),
            (45, 255, 20, 0)
        );
        // gpt-image-1: input split, output all image tokens
        let image = br#"{"created":1,"data":[{"b64_json":"x"}],"usage":{"total_tokens":4210,
            "input_tokens":50,"output_tokens":4160,
            "input_tokens_details":{"text_tokens":40,"image_tokens":10}}}"#;
        let u = of_image_answer(from_openai_bytes(image).unwrap());
        assert_eq!(
            (u.prompt_tokens, u.input_text_tokens, u.input_image_tokens),
            (50, 40, 10)
        );
        assert_eq!((u.completion_tokens, u.output_image_tokens), (4160, 4160));
        // an answer that splits its output keeps the split
        let split = br#"{"usage":{"input_tokens":5,"output_tokens":100,
            "output_tokens_details":{"text_tokens":30,"image_tokens":70}}}"#;
        let u = of_image_answer(from_openai_bytes(split).unwrap());
        assert_eq!((u.output_text_tokens, u.output_image_tokens), (30, 70));
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
