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

/// [`from_openai`] on a raw response body, without building the document: the `usage` (or
/// `response.usage`) member is read straight into its counts while parsing, everything else is
/// skipped. Reads exactly what [`from_openai`] reads from the parsed document (the differential
/// test below holds it to that), at about a third of the instructions: this runs on every
/// non-streamed answer. `None` when the body is not a JSON object or reports no usage.
pub fn from_openai_bytes(body: &[u8]) -> Option<Usage> {
    #[derive(serde::Deserialize)]
    struct Holder {
        #[serde(default)]
        usage: Option<typed::UsageObject>,
        #[serde(default)]
        response: Option<Inner>,
    }
    #[derive(serde::Deserialize)]
    struct Inner {
        #[serde(default)]
        usage: Option<typed::UsageObject>,
    }
    let h: Holder = crate::wire::from_json_bytes(body).ok()?;
    let u = match h.usage {
        Some(typed::UsageObject(Some(u))) => u,
        _ => h.response?.usage?.0?,
    };
    u.usage()
}

/// The typed reading of a `usage` object for [`from_openai_bytes`], with [`int`]'s rules: a
/// count is a number's integer value (a float truncated), 0 when negative, absent, null or not
/// a number; a details member that is not an object counts zeros; a repeated key counts its
/// last value (as a parsed document keeps it).
mod typed {
    use std::fmt;

    use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

    use super::Usage;

    /// A count, and whether its key was there at all (even as null).
    #[derive(Clone, Copy, Default)]
    pub struct Count {
        present: bool,
        n: i64,
    }

    impl<'de> Deserialize<'de> for Count {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = i64;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_i64<E>(self, v: i64) -> Result<i64, E> {
                    Ok(v.max(0))
                }
                fn visit_u64<E>(self, v: u64) -> Result<i64, E> {
                    Ok(i64::try_from(v).unwrap_or(i64::MAX))
                }
                fn visit_f64<E>(self, v: f64) -> Result<i64, E> {
                    Ok((v as i64).max(0))
                }
                fn visit_bool<E>(self, _: bool) -> Result<i64, E> {
                    Ok(0)
                }
                fn visit_str<E>(self, _: &str) -> Result<i64, E> {
                    Ok(0)
                }
                fn visit_unit<E>(self) -> Result<i64, E> {
                    Ok(0)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<i64, A::Error> {
                    Count::visit_seq_as_zero(a).map(|()| 0)
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<i64, A::Error> {
                    while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(0)
                }
            }
            d.deserialize_any(V).map(|n| Count { present: true, n })
        }
    }

    /// The visitor methods of every JSON scalar (number, boolean, string, null), each giving
    /// `$value`: a member that is not an object reads as zeros.
    macro_rules! scalars_are {
        ($value:expr) => {
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok($value)
            }
        };
    }

    /// The keys of a details member that count.
    #[derive(serde::Deserialize)]
    #[serde(field_identifier, rename_all = "snake_case")]
    enum DetailKey {
        CachedTokens,
        AudioTokens,
        TextTokens,
        ImageTokens,
        ReasoningTokens,
        #[serde(other)]
        Other,
    }

    /// `*_tokens_details`: zeros unless it is an object.
    #[derive(Clone, Copy, Default)]
    pub struct Details {
        cached: i64,
        audio: i64,
        text: i64,
        image: i64,
        reasoning: i64,
    }

    impl<'de> Deserialize<'de> for Details {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Details, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Details;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Details, A::Error> {
                    let mut out = Details::default();
                    while let Some(key) = a.next_key::<DetailKey>()? {
                        let slot = match key {
                            DetailKey::CachedTokens => &mut out.cached,
                            DetailKey::AudioTokens => &mut out.audio,
                            DetailKey::TextTokens => &mut out.text,
                            DetailKey::ImageTokens => &mut out.image,
                            DetailKey::ReasoningTokens => &mut out.reasoning,
                            DetailKey::Other => {
                                a.next_value::<IgnoredAny>()?;
                                continue;
                            }
                        };
                        *slot = a.next_value::<Count>()?.n;
                    }
                    Ok(out)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Details, A::Error> {
                    Count::visit_seq_as_zero(a).map(|_| Details::default())
                }
                scalars_are!(Details::default());
            }
            d.deserialize_any(V)
        }
    }

    impl Count {
        fn visit_seq_as_zero<'de, A: SeqAccess<'de>>(mut a: A) -> Result<(), A::Error> {
            while a.next_element::<IgnoredAny>()?.is_some() {}
            Ok(())
        }
    }

    /// The keys of a `usage` object that count.
    #[derive(serde::Deserialize)]
    #[serde(field_identifier, rename_all = "snake_case")]
    enum UsageKey {
        InputTokens,
        OutputTokens,
        PromptTokens,
        CompletionTokens,
        TotalTokens,
        PromptCacheHitTokens,
        CachedTokens,
        PromptTokensDetails,
        CompletionTokensDetails,
        InputTokensDetails,
        OutputTokensDetails,
        #[serde(other)]
        Other,
    }

    /// A `usage` object's counts.
    #[derive(Default)]
    pub struct RawUsage {
        input: Count,
        output: Count,
        prompt: Count,
        completion: Count,
        total: Count,
        prompt_cache_hit: Count,
        cached: Count,
        prompt_details: Details,
        completion_details: Details,
        input_details: Details,
        output_details: Details,
    }

    /// A `usage` member: its counts when it is an object, `None` for any other value.
    pub struct UsageObject(pub Option<RawUsage>);

    impl<'de> Deserialize<'de> for UsageObject {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<UsageObject, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = UsageObject;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<UsageObject, A::Error> {
                    let mut u = RawUsage::default();
                    while let Some(key) = a.next_key::<UsageKey>()? {
                        let count = match key {
                            UsageKey::InputTokens => &mut u.input,
                            UsageKey::OutputTokens => &mut u.output,
                            UsageKey::PromptTokens => &mut u.prompt,
                            UsageKey::CompletionTokens => &mut u.completion,
                            UsageKey::TotalTokens => &mut u.total,
                            UsageKey::PromptCacheHitTokens => &mut u.prompt_cache_hit,
                            UsageKey::CachedTokens => &mut u.cached,
                            UsageKey::PromptTokensDetails
                            | UsageKey::CompletionTokensDetails
                            | UsageKey::InputTokensDetails
                            | UsageKey::OutputTokensDetails => {
                                let details = match key {
                                    UsageKey::PromptTokensDetails => &mut u.prompt_details,
                                    UsageKey::CompletionTokensDetails => &mut u.completion_details,
                                    UsageKey::InputTokensDetails => &mut u.input_details,
                                    _ => &mut u.output_details,
                                };
                                *details = a.next_value::<Details>()?;
                                continue;
                            }
                            UsageKey::Other => {
                                a.next_value::<IgnoredAny>()?;
                                continue;
                            }
                        };
                        *count = a.next_value::<Count>()?;
                    }
                    Ok(UsageObject(Some(u)))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<UsageObject, A::Error> {
                    Count::visit_seq_as_zero(a).map(|_| UsageObject(None))
                }
                scalars_are!(UsageObject(None));
            }
            d.deserialize_any(V)
        }
    }

    impl RawUsage {
        /// [`super::from_openai`]'s reading of these counts.
        pub fn usage(&self) -> Option<Usage> {
            if self.input.present || self.output.present {
                return Some(Usage {
                    prompt_tokens: self.input.n,
                    completion_tokens: self.output.n,
                    cached_tokens: self.input_details.cached,
                    input_audio_tokens: self.input_details.audio,
                    reasoning_tokens: self.output_details.reasoning,
                    output_audio_tokens: self.output_details.audio,
                    input_text_tokens: self.input_details.text,
                    input_image_tokens: self.input_details.image,
                    output_text_tokens: self.output_details.text,
                    output_image_tokens: self.output_details.image,
                    ..Usage::default()
                });
            }
            if !self.prompt.present && !self.completion.present && !self.total.present {
                return None;
            }
            let prompt = self.prompt.n;
            let completion = if self.completion.present {
                self.completion.n
            } else {
                (self.total.n - prompt).max(0)
            };
            let mut cached = self.prompt_details.cached;
            if cached == 0 {
                cached = self.prompt_cache_hit.n.max(self.cached.n);
            }
            Some(Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                cached_tokens: cached,
                input_audio_tokens: self.prompt_details.audio,
                reasoning_tokens: self.completion_details.reasoning,
                output_audio_tokens: self.completion_details.audio,
                input_text_tokens: self.prompt_details.text,
                input_image_tokens: self.prompt_details.image,
                output_text_tokens: self.completion_details.text,
                output_image_tokens: self.completion_details.image,
                ..Usage::default()
            })
        }
    }
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
mod typed_tests {
    use super::*;
    use proptest::prelude::*;

    /// The reading before the typed one: the `usage` members parsed as documents, then
    /// [`from_openai`]. The typed reading must give the same for every body.
    fn reference(body: &[u8]) -> Option<Usage> {
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

    /// Any JSON value a count may be given as.
    fn count() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "12",
            "0",
            "7",
            "-5",
            "3.7",
            "1e3",
            "-0.5",
            "null",
            "\"7\"",
            "true",
            "{}",
            "{\"a\":1}",
            "[1,2]",
            "18446744073709551615",
            "9223372036854775808",
        ])
        .prop_map(str::to_owned)
    }

    /// An object of `keys` (repeats allowed: a repeated key counts its last value), or
    /// another value.
    fn object_of(
        keys: &'static [&'static str],
        value: BoxedStrategy<String>,
    ) -> BoxedStrategy<String> {
        prop_oneof![
            3 => prop::collection::vec((prop::sample::select(keys), value), 0..6).prop_map(
                |entries| {
                    let inner: Vec<String> =
                        entries.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", inner.join(","))
                }
            ),
            1 => count(),
        ]
        .boxed()
    }

    fn details() -> BoxedStrategy<String> {
        object_of(
            &[
                "cached_tokens",
                "audio_tokens",
                "text_tokens",
                "image_tokens",
                "reasoning_tokens",
                "other",
            ],
            count().boxed(),
        )
    }

    fn usage() -> BoxedStrategy<String> {
        const KEYS: &[&str] = &[
            "input_tokens",
            "output_tokens",
            "prompt_tokens",
            "completion_tokens",
            "total_tokens",
            "prompt_cache_hit_tokens",
            "cached_tokens",
            "prompt_tokens_details",
            "completion_tokens_details",
            "input_tokens_details",
            "output_tokens_details",
            "x",
        ];
        prop_oneof![
            3 => prop::collection::vec((prop::sample::select(KEYS), count(), details()), 0..8)
                .prop_map(|entries| {
                    let inner: Vec<String> = entries
                        .iter()
                        .map(|(k, c, d)| {
                            let v = if k.ends_with("_details") { d } else { c };
                            format!("\"{k}\":{v}")
                        })
                        .collect();
                    format!("{{{}}}", inner.join(","))
                }),
            1 => count(),
        ]
        .boxed()
    }

    fn body() -> impl Strategy<Value = String> {
        let member = prop_oneof![
            3 => usage().prop_map(|u| format!("\"usage\":{u}")),
            2 => prop_oneof![usage().prop_map(|u| format!("{{\"usage\":{u}}}")), count()]
                .prop_map(|r| format!("\"response\":{r}")),
            1 => Just("\"choices\":[{\"message\":{\"content\":\"\\\"usage\\\": 5\"}}]".to_owned()),
            1 => Just("\"id\":\"chatcmpl-1\"".to_owned()),
        ];
        prop::collection::vec(member, 0..4).prop_map(|m| format!("{{{}}}", m.join(",")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn the_typed_reading_reads_what_the_document_reading_reads(body in body()) {
            prop_assert_eq!(from_openai_bytes(body.as_bytes()), reference(body.as_bytes()), "{}", body);
        }
    }

    #[test]
    fn typed_reading_examples() {
        for (body, want) in [
            (
                r#"{"usage":{"prompt_tokens":3,"completion_tokens":4,"prompt_tokens":5}}"#,
                Some((5, 4)),
            ),
            (r#"{"usage":{"prompt_tokens":null}}"#, Some((0, 0))),
            (
                r#"{"usage":{"total_tokens":9,"prompt_tokens":2}}"#,
                Some((2, 7)),
            ),
            (r#"{"usage":{"foo":1}}"#, None),
            (
                r#"{"usage":5,"response":{"usage":{"input_tokens":1,"output_tokens":2}}}"#,
                Some((1, 2)),
            ),
            (r#"{"usage":{},"usage":{}}"#, None),
            (r#"[1]"#, None),
            (r#"{"response":"x","usage":{"prompt_tokens":1}}"#, None),
        ] {
            let got =
                from_openai_bytes(body.as_bytes()).map(|u| (u.prompt_tokens, u.completion_tokens));
            assert_eq!(got, want, "{body}");
            assert_eq!(
                from_openai_bytes(body.as_bytes()),
                reference(body.as_bytes()),
                "{body}"
            );
        }
    }
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
        // Bytes that are not UTF-8 in a part the reading skips: the usage is read all the same.
        let mut latin1 = br#"{"choices":[{"message":{"content":"caf"#.to_vec();
        latin1.extend_from_slice(
            b"\xe9\"}}],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2}}",
        );
        assert!(std::str::from_utf8(&latin1).is_err());
        assert_eq!(
            from_openai_bytes(&latin1).map(|u| (u.prompt_tokens, u.completion_tokens)),
            Some((4, 2))
        );
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
