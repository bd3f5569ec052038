//! Golden fixtures in OpenAI's documented formats (`tests/fixtures/openai/`): usage extraction,
//! error classification and the SSE tap, the latter fed every possible split of each stream.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use switchboard_relay::provider::Provider;
use switchboard_relay::providers::openai::OpenAiCompatible;
use switchboard_relay::stream::{SseTap, StreamOutcome};
use switchboard_relay::tokenizer::count_text;
use switchboard_relay::usage::{from_openai, Usage};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openai")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(name: &str) -> serde_json::Value {
    serde_json::from_slice(&fixture(name)).unwrap()
}

fn provider() -> Provider {
    Provider::OpenAiCompatible(OpenAiCompatible::default())
}

#[test]
fn chat_completion_usage_with_cache_and_reasoning() {
    let expected = Usage {
        prompt_tokens: 1345,
        completion_tokens: 211,
        cached_tokens: 1280,
        reasoning_tokens: 192,
        ..Usage::default()
    };
    assert_eq!(from_openai(&json("chat_completion.json")), Some(expected));
    assert_eq!(
        provider().response_usage(&fixture("chat_completion.json")),
        Some(expected)
    );
}

#[test]
fn embeddings_usage() {
    let u = provider()
        .response_usage(&fixture("embeddings.json"))
        .unwrap();
    assert_eq!(
        u,
        Usage {
            prompt_tokens: 8,
            ..Usage::default()
        }
    );
}

#[test]
fn error_bodies_are_classified() {
    let p = provider();
    // (fixture, status, retryable, auto_disable, code)
    let cases = [
        ("error_401.json", 401, true, true, "invalid_api_key"),
        (
            "error_429_rate_limit.json",
            429,
            true,
            false,
            "rate_limit_exceeded",
        ),
        (
            "error_429_insufficient_quota.json",
            429,
            true,
            true,
            "insufficient_quota",
        ),
        ("error_500.json", 500, true, false, "server_error"),
        (
            "error_400_context_length.json",
            400,
            false,
            false,
            "context_length_exceeded",
        ),
    ];
    for (name, status, retryable, auto_disable, code) in cases {
        let body = fixture(name);
        let f = p.classify(status, &body, &[]);
        let message = json(name)["error"]["message"].as_str().unwrap().to_owned();
        assert_eq!(f.status, status, "{name}");
        assert_eq!(f.message, message, "{name}");
        assert_eq!(f.retryable, retryable, "{name}");
        assert_eq!(f.auto_disable, auto_disable, "{name}");
        assert_eq!(f.code.as_deref(), Some(code), "{name}");
    }
    // The operator's keywords disable on a message the built-in list does not know.
    let f = p.classify(
        429,
        &fixture("error_429_rate_limit.json"),
        &["tokens per min"],
    );
    assert!(f.auto_disable);
}

fn tap_all(chunks: &[&[u8]], model: &str) -> StreamOutcome {
    let mut tap = SseTap::new();
    for c in chunks {
        tap.feed(c);
    }
    tap.finish(model)
}

/// A tiny deterministic generator for the random splits.
struct XorShift(u64);
impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The outcome of the whole body in one chunk equals the outcome of every two-way split, of
/// byte-by-byte feeding, and of random multi-way splits.
fn same_outcome_for_every_split(name: &str, model: &str) -> StreamOutcome {
    let body = fixture(name);
    let whole = tap_all(&[&body], model);
    for i in 0..=body.len() {
        let (a, b) = body.split_at(i);
        assert_eq!(tap_all(&[a, b], model), whole, "{name} split at {i}");
    }
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(tap_all(&bytes, model), whole, "{name} byte by byte");
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for round in 0..50 {
        let mut cuts: Vec<usize> = (0..1 + rng.below(20))
            .map(|_| rng.below(body.len() + 1))
            .collect();
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for c in cuts {
            chunks.push(&body[start..c]);
            start = c;
        }
        chunks.push(&body[start..]);
        assert_eq!(
            tap_all(&chunks, model),
            whole,
            "{name} random round {round}"
        );
    }
    whole
}

#[test]
fn chat_stream_with_include_usage() {
    let out = same_outcome_for_every_split("chat_stream_include_usage.sse", "gpt-4o-mini");
    assert_eq!(
        out,
        StreamOutcome {
            usage: Some(Usage {
                prompt_tokens: 19,
                completion_tokens: 14,
                ..Usage::default()
            }),
            completion_text_tokens: 0,
            saw_done: true,
            saw_event: true,
            error: None,
        }
    );
}

#[test]
fn chat_stream_cut_before_usage_counts_the_text() {
    // A client that disconnects mid-stream: the tap saw the text but no usage.
    let body = String::from_utf8(fixture("chat_stream_include_usage.sse")).unwrap();
    let cut = body.find("\"choices\":[]").unwrap();
    let out = tap_all(&[&body.as_bytes()[..cut]], "gpt-4o-mini");
    let text = "Hello! Bonjour à vous — 你好，世界 👋";
    assert_eq!(out.usage, None);
    assert!(!out.saw_done);
    assert_eq!(out.completion_text_tokens, count_text("gpt-4o-mini", text));
    assert!(out.completion_text_tokens > 5);
    assert_eq!(out.usage_or_estimate(19).prompt_tokens, 19);
}

#[test]
fn completion_stream_without_usage_crlf_and_comments() {
    let out =
        same_outcome_for_every_split("completion_stream_no_usage.sse", "gpt-3.5-turbo-instruct");
    assert_eq!(out.usage, None);
    assert_eq!(out.completion_text_tokens, 5); // "This is a test."
    assert!(out.saw_done && out.saw_event);
    assert_eq!(out.error, None);
}

#[test]
fn responses_stream_with_completed_event() {
    let out = same_outcome_for_every_split("responses_stream.sse", "gpt-4.1");
    assert_eq!(
        out.usage,
        Some(Usage {
            prompt_tokens: 37,
            completion_tokens: 11,
            ..Usage::default()
        })
    );
    assert!(out.saw_done);
    assert_eq!(out.error, None);

    // Without the completed event, the deltas are counted.
    let body = String::from_utf8(fixture("responses_stream.sse")).unwrap();
    let cut = body.find("event: response.completed").unwrap();
    let out = tap_all(&[&body.as_bytes()[..cut]], "gpt-4.1");
    assert_eq!(out.usage, None);
    assert!(!out.saw_done);
    assert_eq!(
        out.completion_text_tokens,
        count_text("gpt-4.1", "Hi there! How can I help you today?")
    );
}

#[test]
fn chat_stream_error_event() {
    let out = same_outcome_for_every_split("chat_stream_error.sse", "gpt-4o-mini");
    assert_eq!(
        out.error.as_deref(),
        Some("The server had an error while processing your request. Sorry about that!")
    );
    assert!(!out.saw_done);
    assert_eq!(
        out.completion_text_tokens,
        count_text("gpt-4o-mini", "Once upon")
    );
}
