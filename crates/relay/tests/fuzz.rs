//! Property-based fuzzing of the relay's parsers and translators (docs/security.md, "Fuzzing").
//! `cargo fuzz` needs a nightly toolchain, so these are proptest suites that run on stable in
//! the ordinary test run, with a bounded number of cases per property (`PROPTEST_CASES`
//! overrides the defaults given below, e.g. `PROPTEST_CASES=20000` for a longer session).
//!
//! 1. Request parsing: client bodies (OpenAI JSON endpoints, Anthropic Messages, Gemini native,
//!    multipart forms) as arbitrary bytes and arbitrary JSON never panic and fail with typed
//!    errors; well-formed bodies give back their model, stream flag and output limit, and the
//!    output limit the relay imposes holds in every field an upstream may read.
//! 2. Protocol translation: generated OpenAI chat requests and Anthropic Messages requests
//!    translated to Anthropic, Gemini, Bedrock and OpenAI bodies keep the model, the turns and
//!    their roles, the tool-call ids and the limits; arbitrary upstream answers translated back
//!    never panic and never report negative usage.
//! 3. Stream translation: generated upstream streams (Anthropic SSE, Gemini SSE, Bedrock event
//!    stream frames, Vertex, OpenAI chunks to Anthropic events, the tap) fed in arbitrary
//!    chunkings (random split points, one byte at a time, cuts inside every multi-byte UTF-8
//!    character) give exactly the output and usage of the stream fed whole; arbitrary bytes do
//!    too, and never panic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;

use base64::Engine as _;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::Config as ProptestConfig;
use serde_json::{json, Value};
use switchboard_domain::channel::{TYPE_ANTHROPIC, TYPE_AWS_BEDROCK, TYPE_GEMINI};
use switchboard_relay::aws::{crc32, Frame, FrameReader};
use switchboard_relay::messages;
use switchboard_relay::provider::Provider;
use switchboard_relay::providers::{anthropic, gemini};
use switchboard_relay::sse::SseReader;
use switchboard_relay::stream::{SseTap, StreamOutcome};
use switchboard_relay::translate::StreamTranslator;
use switchboard_relay::{ChannelTarget, Endpoint, RelayError, RelayRequest, Usage};

/// `cases` per property unless `PROPTEST_CASES` is set (then that).
fn config(cases: u32) -> ProptestConfig {
    let base = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_some() {
        base
    } else {
        ProptestConfig { cases, ..base }
    }
}

// ---------------------------------------------------------------------------------------------
// Arbitrary JSON, biased towards the field names and values the parsers look at

#[rustfmt::skip]
const KEYS: &[&str] = &[
    "model", "messages", "role", "content", "type", "text", "stream", "max_tokens",
    "max_completion_tokens", "max_output_tokens", "tools", "tool_choice", "tool_calls", "function",
    "name", "arguments", "id", "tool_call_id", "image_url", "url", "system", "input", "prompt",
    "stop", "stop_sequences", "temperature", "top_p", "top_k", "user", "metadata", "user_id",
    "source", "data", "media_type", "tool_use_id", "input_schema", "parameters", "generationConfig",
    "maxOutputTokens", "contents", "parts", "candidates", "usage", "usageMetadata",
    "promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount",
    "toolUsePromptTokenCount", "prompt_tokens", "completion_tokens", "total_tokens", "input_tokens",
    "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
    "prompt_tokens_details", "cached_tokens", "choices", "message", "delta", "finish_reason",
    "stop_reason", "error", "results", "embeddings", "values", "response", "functionCall", "args",
    "thought", "finishReason", "responseId", "modelVersion", "index", "partial_json",
    "content_block", "detail", "query", "documents", "instructions", "n", "dimensions",
    "encoding_format", "response_format", "stream_options", "include_usage", "parallel_tool_calls",
    "thinking", "signature", "inlineData", "fileData", "meta", "billed_units", "promptFeedback",
    "blockReason", "status", "reasoning_content", "disable_parallel_tool_use", "systemInstruction",
    "input_tokens_details", "completion_tokens_details", "reasoning_tokens",
];

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "user", "assistant", "system", "developer", "tool", "model", "text", "image_url", "image",
    "tool_use", "tool_result", "thinking", "redacted_thinking", "function", "custom", "auto",
    "required", "none", "any", "base64", "url", "json_object", "low", "high",
    "data:image/png;base64,iVBORw0KGgo=", "https://x.invalid/a.png", "[DONE]", "message",
    "message_start", "content_block_start", "content_block_delta", "text_delta", "thinking_delta",
    "input_json_delta", "message_delta", "message_stop", "error", "STOP", "MAX_TOKENS", "SAFETY",
    "length", "tool_calls", "end_turn", "max_tokens", "{}", "{\"a\":1}", "", "chatcmpl-1", "gpt-4o",
    "claude-sonnet-4", "gemini-2.5-pro", "response.completed", "response.output_text.delta",
    "PERMISSION_DENIED", "API_KEY_INVALID",
];

fn leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        prop_oneof![
            Just(i64::MAX),
            Just(i64::MIN),
            Just(0i64),
            -3i64..5000,
            any::<i64>()
        ]
        .prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        select(WORDS).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
    ]
    .boxed()
}

fn key() -> BoxedStrategy<String> {
    prop_oneof![4 => select(KEYS).prop_map(str::to_owned), 1 => "\\PC{0,6}"].boxed()
}

fn json_value() -> BoxedStrategy<Value> {
    leaf()
        .prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
        .boxed()
}

fn json_object() -> BoxedStrategy<Value> {
    prop::collection::vec((key(), json_value()), 0..8)
        .prop_map(|kv| Value::Object(kv.into_iter().collect()))
        .boxed()
}

fn endpoint() -> BoxedStrategy<Endpoint> {
    select(Endpoint::ALL.to_vec()).boxed()
}

/// Bytes that are JSON now and then: arbitrary bytes, JSON text cut short or with a byte
/// changed, or a JSON document.
fn body_bytes() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200),
        (json_object(), any::<Index>()).prop_map(|(v, i)| {
            let b = v.to_string().into_bytes();
            b[..i.index(b.len() + 1)].to_vec()
        }),
        (json_object(), any::<Index>(), any::<u8>()).prop_map(|(v, i, x)| {
            let mut b = v.to_string().into_bytes();
            let i = i.index(b.len());
            b[i] = x;
            b
        }),
        json_value().prop_map(|v| v.to_string().into_bytes()),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------------
// 1. Request parsing

/// The reading of a JSON body that [`RelayRequest::parse`] documents, written out: the model
/// (or the endpoint's default), the stream flag, and the output limit, which is the largest of
/// the limit fields present (an upstream may read any of them). `Err` carries the error code.
fn reference_parse(endpoint: Endpoint, v: &Value) -> Result<(String, bool, Option<i64>), &str> {
    let Some(obj) = v.as_object() else {
        return Err("invalid_request");
    };
    let model = match obj.get("model") {
        Some(Value::String(m)) if !m.trim().is_empty() => m.clone(),
        None | Some(Value::Null) | Some(Value::String(_)) => match endpoint.default_model() {
            Some(d) => d.to_owned(),
            None => return Err("model_required"),
        },
        Some(_) => return Err("invalid_request"),
    };
    let stream = match obj.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("invalid_request"),
    };
    let mut limit: Option<i64> = None;
    for field in ["max_tokens", "max_completion_tokens", "max_output_tokens"] {
        let n = match obj.get(field) {
            None | Some(Value::Null) => continue,
            Some(Value::Number(n)) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.trunc() == *f && f.abs() < 9.0e15)
                    .map(|f| f as i64)
            }),
            Some(_) => None,
        };
        let Some(n) = n else {
            return Err("invalid_request");
        };
        limit = Some(limit.map_or(n, |l| l.max(n)));
    }
    Ok((model, stream, limit))
}

/// A body, and the model, stream flag and limit fields (`max_tokens`, `max_completion_tokens`,
/// `max_output_tokens`) it was given.
type Wellformed = (Value, Option<String>, Option<bool>, Vec<Option<Value>>);

/// A well-formed request body with the fields the parser reads and some it passes through.
fn wellformed_body() -> BoxedStrategy<Wellformed> {
    let limit = prop_oneof![
        Just(None),
        (-5i64..100_000).prop_map(|n| Some(json!(n))),
        (1u32..100_000).prop_map(|n| Some(json!(f64::from(n)))),
        Just(Some(Value::Null)),
    ];
    (
        prop::option::of(prop_oneof!["[a-zA-Z0-9._/:@-]{1,24}", "\\PC{1,12}", " *"]),
        prop::option::of(any::<bool>()),
        prop::collection::vec(limit, 3),
        json_object(),
    )
        .prop_map(|(model, stream, limits, extra)| {
            let mut obj = extra.as_object().cloned().unwrap_or_default();
            for k in [
                "model",
                "stream",
                "max_tokens",
                "max_completion_tokens",
                "max_output_tokens",
            ] {
                obj.remove(k);
            }
            if let Some(m) = &model {
                obj.insert("model".into(), json!(m));
            }
            if let Some(s) = stream {
                obj.insert("stream".into(), json!(s));
            }
            for (field, v) in ["max_tokens", "max_completion_tokens", "max_output_tokens"]
                .iter()
                .zip(&limits)
            {
                if let Some(v) = v {
                    obj.insert((*field).into(), v.clone());
                }
            }
            (Value::Object(obj), model, stream, limits)
        })
        .boxed()
}

fn limit_fields(endpoint: Endpoint, body: &Value) -> Vec<i64> {
    let mut out = Vec::new();
    if endpoint == Endpoint::GenerateContent {
        if let Some(n) = body.pointer("/generationConfig/maxOutputTokens") {
            out.push(n.as_i64().unwrap_or(i64::MAX));
        }
        return out;
    }
    for field in ["max_tokens", "max_completion_tokens", "max_output_tokens"] {
        match body.get(field) {
            None | Some(Value::Null) => {}
            Some(v) => out.push(
                v.as_i64()
                    .or_else(|| v.as_f64().map(|f| f as i64))
                    .unwrap_or(i64::MAX),
            ),
        }
    }
    out
}

fn typed(e: &RelayError) -> bool {
    matches!(e, RelayError::InvalidRequest(_) | RelayError::MissingModel) && e.status() == 400
}

fn multipart_form(boundary: &str, fields: &[(String, Vec<u8>, bool)], crlf: bool) -> Vec<u8> {
    let eol: &[u8] = if crlf { b"\r\n" } else { b"\n" };
    let mut out = Vec::new();
    for (name, content, file) in fields {
        out.extend_from_slice(format!("--{boundary}").as_bytes());
        out.extend_from_slice(eol);
        let disposition = if *file {
            format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"a.mp3\"")
        } else {
            format!("Content-Disposition: form-data; name=\"{name}\"")
        };
        out.extend_from_slice(disposition.as_bytes());
        out.extend_from_slice(eol);
        if *file {
            out.extend_from_slice(b"Content-Type: audio/mpeg");
            out.extend_from_slice(eol);
        }
        out.extend_from_slice(eol);
        out.extend_from_slice(content);
        out.extend_from_slice(eol);
    }
    out.extend_from_slice(format!("--{boundary}--").as_bytes());
    out.extend_from_slice(eol);
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn request_bodies_of_arbitrary_bytes_fail_typed(endpoint in endpoint(), bytes in body_bytes()) {
        match RelayRequest::parse(endpoint, &bytes) {
            Ok(r) => {
                let v: Value = serde_json::from_slice(&bytes).unwrap();
                prop_assert_eq!(Ok((r.model.clone(), r.stream, r.max_tokens)), reference_parse(endpoint, &v));
                prop_assert_eq!(r.body, v);
            }
            Err(e) => prop_assert!(typed(&e), "{e:?}"),
        }
    }

    #[test]
    fn request_bodies_of_arbitrary_json_agree_with_the_reference(
        endpoint in endpoint(),
        v in prop_oneof![json_object(), json_value()],
    ) {
        let got = RelayRequest::parse(endpoint, v.to_string().as_bytes());
        match (&got, reference_parse(endpoint, &v)) {
            (Ok(r), Ok(expected)) => {
                prop_assert_eq!((r.model.clone(), r.stream, r.max_tokens), expected);
                prop_assert_eq!(&r.body, &v);
                prop_assert_eq!(r.endpoint, endpoint);
            }
            (Err(e), Err(code)) => {
                prop_assert!(typed(e));
                prop_assert_eq!(e.code(), code);
            }
            (got, expected) => prop_assert!(false, "{got:?} but the reference says {expected:?}"),
        }
    }

    #[test]
    fn wellformed_bodies_round_trip(
        endpoint in endpoint(),
        (body, model, stream, limits) in wellformed_body(),
        pretty in any::<bool>(),
    ) {
        let bytes = if pretty { serde_json::to_vec_pretty(&body).unwrap() } else { serde_json::to_vec(&body).unwrap() };
        let r = RelayRequest::parse(endpoint, &bytes);
        let blank = model.as_deref().is_none_or(|m| m.trim().is_empty());
        if blank && endpoint.default_model().is_none() {
            prop_assert_eq!(r, Err(RelayError::MissingModel));
            return Ok(());
        }
        let r = r.map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let expected_model = if blank { endpoint.default_model().unwrap().to_owned() } else { model.unwrap() };
        prop_assert_eq!(&r.model, &expected_model);
        prop_assert_eq!(r.stream, stream.unwrap_or(false));
        let expected_limit = limits.iter().flatten().filter_map(|v| v.as_f64()).map(|f| f as i64).max();
        prop_assert_eq!(r.max_tokens, expected_limit);
        prop_assert_eq!(r.body, body);
    }

    #[test]
    fn the_imposed_output_limit_holds_in_every_field(
        endpoint in endpoint(),
        (body, _, _, _) in wellformed_body(),
        gemini_limit in prop::option::of(-5i64..100_000),
        tokens in -3i64..50_000,
    ) {
        let mut r = if endpoint == Endpoint::GenerateContent {
            let mut body = body;
            body.as_object_mut().unwrap().remove("generationConfig");
            if let Some(n) = gemini_limit {
                body["generationConfig"] = json!({"maxOutputTokens": n, "temperature": 1});
            }
            RelayRequest::parse_gemini("gemini-2.5-pro", false, body.to_string().as_bytes())
        } else {
            let mut body = body;
            body["model"] = json!("gpt-4o");
            RelayRequest::parse(endpoint, body.to_string().as_bytes())
        }
        .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let before = r.max_tokens;
        r.limit_output(tokens);
        let bound = tokens.max(1);
        // The relay's own reading and every field an upstream may read are within the bound;
        // a lower limit the client set stays.
        prop_assert!(r.max_tokens.is_some_and(|m| m <= bound), "{:?}", r.max_tokens);
        for n in limit_fields(endpoint, &r.body) {
            prop_assert!(n <= bound, "a limit field says {n} after limit_output({tokens}): {}", r.body);
        }
        if let Some(b) = before.filter(|b| *b <= bound) {
            prop_assert_eq!(r.max_tokens, Some(b));
        }
        // The body still parses to the limit the relay holds.
        let again = if endpoint == Endpoint::GenerateContent {
            RelayRequest::parse_gemini("gemini-2.5-pro", false, r.body.to_string().as_bytes())
        } else {
            RelayRequest::parse(endpoint, r.body.to_string().as_bytes())
        };
        let again = again.map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert!(again.max_tokens <= r.max_tokens, "{:?} > {:?}", again.max_tokens, r.max_tokens);
    }

    #[test]
    fn gemini_bodies_fail_typed_or_keep_the_path_model(
        model in "\\PC{0,16}|models/[a-z0-9.-]{0,12}",
        stream in any::<bool>(),
        bytes in body_bytes(),
    ) {
        match RelayRequest::parse_gemini(&model, stream, &bytes) {
            Ok(r) => {
                let m = model.trim();
                prop_assert_eq!(r.model.as_str(), m.strip_prefix("models/").unwrap_or(m));
                prop_assert!(!r.model.is_empty());
                prop_assert_eq!(r.stream, stream);
                prop_assert_eq!(r.endpoint, Endpoint::GenerateContent);
                let limit = r.body.pointer("/generationConfig/maxOutputTokens").filter(|v| !v.is_null());
                prop_assert_eq!(r.max_tokens.is_some(), limit.is_some());
            }
            Err(e) => prop_assert!(typed(&e), "{e:?}"),
        }
    }

    #[test]
    fn multipart_bodies_of_arbitrary_bytes_fail_typed(
        content_type in prop_oneof![
            Just("multipart/form-data; boundary=b".to_owned()),
            "multipart/form-data; ?boundary=\"?[a-z-]{0,8}\"?",
            "\\PC{0,30}",
        ],
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            prop::collection::vec(select(vec![&b"--b"[..], b"\r\n", b"\n", b"Content-Disposition: form-data; name=model", b"name=\"model\"", b";", b"gpt-4o", b"--", b"\xff"]), 0..20).prop_map(|p| p.concat()),
        ],
    ) {
        for endpoint in [Endpoint::AudioTranscriptions, Endpoint::AudioTranslations] {
            match RelayRequest::parse_multipart(endpoint, &content_type, &bytes) {
                Ok(r) => {
                    prop_assert!(!r.model.is_empty() && r.model.trim() == r.model);
                    prop_assert_eq!(r.body, Value::Null);
                }
                Err(e) => prop_assert!(typed(&e), "{e:?}"),
            }
        }
        let _ = switchboard_relay::parse_multipart_model(&content_type, &bytes);
    }

    #[test]
    fn multipart_forms_give_back_their_model(
        boundary in "[A-Za-z0-9'()+_,./:=?-]{1,40}",
        model in "[a-z0-9.-]{1,20}",
        before in prop::collection::vec(("[a-z_]{1,8}", prop::collection::vec(any::<u8>(), 0..300), any::<bool>()), 0..3),
        stream in prop::option::of(any::<bool>()),
        crlf in any::<bool>(),
        quoted in any::<bool>(),
    ) {
        let delimiter = format!("--{boundary}");
        // A sender picks a boundary that occurs in none of the parts.
        prop_assume!(before.iter().all(|(_, c, _)| !contains(c, delimiter.as_bytes())));
        prop_assume!(!model.contains(&delimiter));
        let mut fields: Vec<(String, Vec<u8>, bool)> = before
            .into_iter()
            .filter(|(n, _, _)| n != "model" && n != "stream")
            .collect();
        fields.push(("model".into(), model.clone().into_bytes(), false));
        if let Some(s) = stream {
            fields.push(("stream".into(), s.to_string().into_bytes(), false));
        }
        let body = multipart_form(&boundary, &fields, crlf);
        let ct = if quoted {
            format!("multipart/form-data; charset=utf-8; boundary=\"{boundary}\"")
        } else {
            format!("multipart/form-data; boundary={boundary}")
        };
        prop_assert_eq!(switchboard_relay::parse_multipart_model(&ct, &body), Ok(model.clone()));
        let r = RelayRequest::parse_multipart(Endpoint::AudioTranscriptions, &ct, &body)
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert_eq!((r.model, r.stream), (model, stream == Some(true)));
    }

    #[test]
    fn endpoint_paths_parse_without_panic(
        path in "\\PC{0,40}",
        e in endpoint(),
        query in "[?#][\\PC]{0,10}",
        slash in any::<bool>(),
    ) {
        let _ = Endpoint::from_path(&path);
        let with = format!("{}{}{query}", e.path(), if slash { "/" } else { "" });
        prop_assert_eq!(Endpoint::from_path(&with), Some(e));
    }

    #[test]
    fn prompt_estimates_never_panic(
        endpoint in endpoint(),
        body in json_object(),
        model in select(vec!["gpt-4o", "gpt-3.5-turbo", "claude-3-haiku", "o3"]),
    ) {
        let fast = switchboard_relay::tokenizer::estimate_prompt_fast(endpoint, &body);
        prop_assert!(fast >= 0);
        let exact = switchboard_relay::tokenizer::estimate_prompt(model, endpoint, &body);
        prop_assert!(exact >= 0);
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Protocol translation

fn text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => "[a-z ]{0,12}",
        2 => "\\PC{0,12}",
        1 => select(vec!["", "héllo wörld", "漢字かな", "🦀🦀", "a\nb\r\nc", "\"q\" \\ /", "\u{2028}\u{0}"])
            .prop_map(str::to_owned),
    ]
    .boxed()
}

// The generators of requests take `k`, the weight of the well-formed choices against the
// malformed ones (weight 1): 1 tries errors often, larger values give long valid requests.

fn image_url(k: u32) -> BoxedStrategy<String> {
    prop_oneof![
        3 * k => Just("data:image/png;base64,iVBORw0KGgo=".to_owned()),
        k => Just("data:;base64,AAAA".to_owned()),
        3 * k => Just("https://x.invalid/a.webp?x=1#f".to_owned()),
        k => Just("http://x.invalid/b".to_owned()),
        1 => "\\PC{0,10}",
    ]
    .boxed()
}

fn openai_part(k: u32) -> BoxedStrategy<Value> {
    prop_oneof![
        6 * k => text().prop_map(|t| json!({"type": "text", "text": t})),
        2 * k => (image_url(k), any::<bool>()).prop_map(|(u, string)| if string {
            json!({"type": "image_url", "image_url": u})
        } else {
            json!({"type": "image_url", "image_url": {"url": u, "detail": "low"}})
        }),
        1 => Just(json!({"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}})),
        1 => json_value(),
    ]
    .boxed()
}

fn openai_content(k: u32) -> BoxedStrategy<Value> {
    prop_oneof![
        6 * k => text().prop_map(Value::from),
        4 * k => prop::collection::vec(openai_part(k), 0..4).prop_map(Value::Array),
        1 => Just(Value::Null),
        1 => json_value(),
    ]
    .boxed()
}

fn tool_call(k: u32) -> BoxedStrategy<Value> {
    let args = prop_oneof![
        2 * k => Just(String::new()),
        k => Just("  ".to_owned()),
        6 * k => json_object().prop_map(|v| v.to_string()),
        1 => "\\PC{0,8}",
    ];
    (
        prop::option::of("call_[a-zA-Z0-9]{1,8}"),
        text(),
        args,
        0..20 * k,
    )
        .prop_map(|(id, name, args, shape)| {
            let mut c = json!({"type": "function", "function": {"name": name, "arguments": args}});
            if let Some(id) = id {
                c["id"] = json!(id);
            }
            if shape == 0 {
                c.as_object_mut().unwrap().remove("function");
            }
            c
        })
        .boxed()
}

fn openai_message(k: u32) -> BoxedStrategy<Value> {
    prop_oneof![
        2 * k => (select(vec!["system", "developer"]), openai_content(k))
            .prop_map(|(role, c)| json!({"role": role, "content": c})),
        5 * k => (openai_content(k), prop::option::of(text())).prop_map(|(c, name)| {
            let mut m = json!({"role": "user", "content": c});
            if let Some(n) = name {
                m["name"] = json!(n);
            }
            m
        }),
        4 * k => (openai_content(k), prop::option::of(prop::collection::vec(tool_call(k), 0..3))).prop_map(|(c, calls)| {
            let mut m = json!({"role": "assistant", "content": c});
            if let Some(calls) = calls {
                m["tool_calls"] = Value::Array(calls);
            }
            m
        }),
        3 * k => (prop::option::of("call_[a-zA-Z0-9]{1,8}"), openai_content(k), prop::option::of(text())).prop_map(|(id, c, name)| {
            let mut m = json!({"role": "tool", "content": c});
            if let Some(id) = id {
                m["tool_call_id"] = json!(id);
            }
            if let Some(n) = name {
                m["name"] = json!(n);
            }
            m
        }),
        1 => (json_value(), openai_content(k)).prop_map(|(role, c)| json!({"role": role, "content": c})),
        1 => json_value(),
    ]
    .boxed()
}

fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        (-1.0f64..3.0).prop_map(Value::from),
        (0i64..100).prop_map(Value::from),
        Just(json!("0.5")),
        Just(Value::Null),
    ]
    .boxed()
}

fn openai_tools() -> BoxedStrategy<Value> {
    prop::collection::vec(
        (
            text(),
            prop::option::of(text()),
            prop_oneof![json_object(), json_value()],
            0u8..10,
        )
            .prop_map(|(name, description, parameters, shape)| {
                let mut f = json!({"name": name, "parameters": parameters});
                if let Some(d) = description {
                    f["description"] = json!(d);
                }
                if shape == 0 {
                    json!({"type": "function"})
                } else {
                    json!({"type": "function", "function": f})
                }
            }),
        0..3,
    )
    .prop_map(Value::Array)
    .boxed()
}

fn openai_tool_choice() -> BoxedStrategy<Value> {
    prop_oneof![
        select(vec!["auto", "required", "none", "bogus"]).prop_map(Value::from),
        text().prop_map(|n| json!({"type": "function", "function": {"name": n}})),
        json_value(),
    ]
    .boxed()
}

/// A generated OpenAI chat request: half of them with a malformed part here and there, half
/// nearly always well formed.
fn chat_request_body() -> BoxedStrategy<Value> {
    prop_oneof![chat_request_body_with(1), chat_request_body_with(40)].boxed()
}

fn chat_request_body_with(k: u32) -> BoxedStrategy<Value> {
    let sampling = (
        prop::option::of(number()),
        prop::option::of(number()),
        prop::option::of(number()),
        prop::option::of(prop_oneof![
            text().prop_map(Value::from),
            prop::collection::vec(text().prop_map(Value::from), 0..3).prop_map(Value::Array),
            Just(Value::Null),
        ]),
        prop::option::of(select(vec!["json_object", "json_schema", "text"])),
    );
    let tools = (
        prop::option::of(openai_tools()),
        prop::option::of(openai_tool_choice()),
        prop::option::of(any::<bool>()),
        prop::option::of(text()),
    );
    (
        "[a-z0-9.-]{1,20}",
        prop::collection::vec(openai_message(k), 0..8),
        prop::option::of(prop_oneof![1i64..100_000, Just(i64::MAX)]),
        prop::option::of(any::<bool>()),
        sampling,
        tools,
    )
        .prop_map(|(model, messages, max_tokens, stream, sampling, tools)| {
            let mut b = json!({"model": model, "messages": messages});
            let (temperature, top_p, top_k, stop, format) = sampling;
            let (tool_list, choice, parallel, user) = tools;
            let mut set = |k: &str, v: Option<Value>| {
                if let Some(v) = v {
                    b[k] = v;
                }
            };
            set("max_tokens", max_tokens.map(Value::from));
            set("stream", stream.map(Value::from));
            set("temperature", temperature);
            set("top_p", top_p);
            set("top_k", top_k);
            set("stop", stop);
            set("response_format", format.map(|f| json!({"type": f})));
            set("tools", tool_list);
            set("tool_choice", choice);
            set("parallel_tool_calls", parallel.map(Value::from));
            set("user", user.map(Value::from));
            b
        })
        .boxed()
}

fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or_default()
}

/// `translate::content_text`: a string, or the `text` strings of the parts.
fn content_text(c: Option<&Value>) -> String {
    match c {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

fn calls(m: &Value) -> &[Value] {
    m.get("tool_calls")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The turns (roles) an OpenAI conversation becomes in a protocol without system or tool
/// roles (Anthropic `user`/`assistant`, Gemini `user`/`model`): system and developer messages
/// leave the turns, empty assistant messages are dropped, and consecutive tool results share
/// one user turn.
fn expected_turns(messages: &[Value], assistant: &'static str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut open_results = false;
    for m in messages {
        match role(m) {
            "user" => {
                out.push("user");
                open_results = false;
            }
            "assistant" if !content_text(m.get("content")).is_empty() || !calls(m).is_empty() => {
                out.push(assistant);
                open_results = false;
            }
            "tool" if !open_results => {
                out.push("user");
                open_results = true;
            }
            _ => {}
        }
    }
    out
}

fn system_texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| matches!(role(m), "system" | "developer"))
        .map(|m| content_text(m.get("content")))
        .filter(|t| !t.is_empty())
        .collect()
}

fn target(channel_type: i32, mapped: Option<&str>, model: &str, key: &str) -> ChannelTarget {
    let mut t = ChannelTarget {
        id: 5,
        channel_type,
        key: key.into(),
        ..ChannelTarget::default()
    };
    if let Some(m) = mapped {
        t.model_mapping.insert(model.to_owned(), m.to_owned());
    }
    t
}

fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(reqwest::Client::new)
}

fn sent_body(b: reqwest::RequestBuilder) -> Vec<u8> {
    let r = b.build().unwrap();
    r.body()
        .and_then(|b| b.as_bytes())
        .unwrap_or_default()
        .to_vec()
}

/// Checks an Anthropic Messages body translated from the OpenAI request `req`.
fn check_anthropic_body(
    req: &RelayRequest,
    t: &ChannelTarget,
    out: &Value,
) -> Result<(), TestCaseError> {
    let messages = req.body["messages"].as_array().unwrap();
    let model = t.upstream_model(&req.model);
    prop_assert_eq!(&out["model"], &json!(model));
    prop_assert_eq!(
        out["max_tokens"].as_i64(),
        Some(
            req.max_tokens
                .unwrap_or_else(|| anthropic::default_max_tokens(model))
        )
    );
    let turns: Vec<&str> = out["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(role)
        .collect();
    prop_assert_eq!(turns, expected_turns(messages, "assistant"));
    let system = system_texts(messages);
    prop_assert_eq!(
        out.get("system").cloned(),
        (!system.is_empty()).then(|| json!(system.join("\n\n")))
    );
    prop_assert_eq!(
        out.get("stream").cloned(),
        req.stream.then_some(json!(true))
    );
    if let Some(t) = out.get("temperature") {
        prop_assert!(t.as_f64().is_some_and(|t| (0.0..=1.0).contains(&t)), "{t}");
    }
    // Tool-call ids and tool-result ids survive, in order.
    let call_ids: Vec<Value> = messages
        .iter()
        .filter(|m| role(m) == "assistant")
        .flat_map(calls)
        .map(|c| c.get("id").cloned().unwrap_or_default())
        .collect();
    let result_ids: Vec<Value> = messages
        .iter()
        .filter(|m| role(m) == "tool")
        .map(|m| m["tool_call_id"].clone())
        .collect();
    let blocks: Vec<&Value> = out["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .collect();
    let uses: Vec<Value> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].clone())
        .collect();
    let results: Vec<Value> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["tool_use_id"].clone())
        .collect();
    prop_assert_eq!(uses, call_ids);
    prop_assert_eq!(results, result_ids);
    for b in blocks.iter().filter(|b| b["type"] == "tool_use") {
        prop_assert!(b["input"].is_object(), "tool_use input {}", b["input"]);
    }
    // User turns given as text keep it exactly.
    let user_texts: Vec<&Value> = messages
        .iter()
        .filter(|m| role(m) == "user")
        .map(|m| &m["content"])
        .collect();
    let out_user: Vec<&Value> = out["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            role(m) == "user"
                && !m["content"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
        })
        .map(|m| &m["content"])
        .collect();
    prop_assert_eq!(user_texts.len(), out_user.len());
    for (i, o) in user_texts.iter().zip(&out_user) {
        if i.is_string() {
            prop_assert_eq!(i, o);
        }
    }
    Ok(())
}

fn check_gemini_body(req: &RelayRequest, out: &Value) -> Result<(), TestCaseError> {
    let messages = req.body["messages"].as_array().unwrap();
    let contents = out["contents"].as_array().unwrap();
    let turns: Vec<&str> = contents.iter().map(role).collect();
    prop_assert_eq!(turns, expected_turns(messages, "model"));
    let system: Vec<Value> = system_texts(messages)
        .into_iter()
        .map(|t| json!({"text": t}))
        .collect();
    prop_assert_eq!(
        out.get("systemInstruction").cloned(),
        (!system.is_empty()).then(|| json!({"parts": system}))
    );
    prop_assert_eq!(
        out.pointer("/generationConfig/maxOutputTokens")
            .and_then(Value::as_i64),
        req.max_tokens
    );
    let names: Vec<Value> = messages
        .iter()
        .filter(|m| role(m) == "assistant")
        .flat_map(calls)
        .map(|c| {
            json!(c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default())
        })
        .collect();
    let out_calls: Vec<&Value> = contents
        .iter()
        .filter_map(|c| c["parts"].as_array())
        .flatten()
        .filter_map(|p| p.get("functionCall"))
        .collect();
    prop_assert_eq!(
        out_calls
            .iter()
            .map(|c| c["name"].clone())
            .collect::<Vec<_>>(),
        names
    );
    for c in out_calls {
        prop_assert!(c["args"].is_object(), "functionCall args {}", c["args"]);
    }
    let responses = contents
        .iter()
        .filter_map(|c| c["parts"].as_array())
        .flatten()
        .filter(|p| p.get("functionResponse").is_some())
        .count();
    prop_assert_eq!(
        responses,
        messages.iter().filter(|m| role(m) == "tool").count()
    );
    Ok(())
}

fn translation_error(e: &RelayError) -> bool {
    matches!(e, RelayError::InvalidRequest(_))
}

/// A generated Anthropic Messages request (as [`chat_request_body`]: half of them nearly always
/// well formed).
fn messages_request_body() -> BoxedStrategy<Value> {
    prop_oneof![
        messages_request_body_with(1),
        messages_request_body_with(40)
    ]
    .boxed()
}

fn messages_request_body_with(k: u32) -> BoxedStrategy<Value> {
    let text_block = || text().prop_map(|t| json!({"type": "text", "text": t}));
    // User turns hold text, images and tool results; assistant turns text, tool uses and
    // thinking; a block of the other kind (or junk) is an error.
    let user_block = prop_oneof![
        5 * k => text_block(),
        k => prop_oneof![
            Just(json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}})),
            Just(json!({"type": "image", "source": {"type": "url", "url": "https://x.invalid/a.png"}})),
        ],
        2 * k => ("toolu_[a-z0-9]{1,6}", prop_oneof![text().prop_map(Value::from), prop::collection::vec(openai_part(k), 0..3).prop_map(Value::Array)])
            .prop_map(|(id, c)| json!({"type": "tool_result", "tool_use_id": id, "content": c})),
        1 => Just(json!({"type": "image", "source": {"type": "file"}})),
        1 => Just(json!({"type": "thinking", "thinking": "t"})),
        1 => json_value(),
    ];
    let assistant_block = prop_oneof![
        5 * k => text_block(),
        2 * k => ("toolu_[a-z0-9]{1,6}", text(), json_object()).prop_map(|(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input})),
        k => text().prop_map(|t| json!({"type": "thinking", "thinking": t, "signature": "s"})),
        1 => Just(json!({"type": "tool_result", "tool_use_id": "x"})),
        1 => json_value(),
    ];
    let content = |blocks: BoxedStrategy<Value>| {
        prop_oneof![
            3 * k => text().prop_map(Value::from),
            6 * k => prop::collection::vec(blocks, 0..4).prop_map(Value::Array),
            1 => json_value(),
        ]
    };
    let message = prop_oneof![
        2 * k => content(user_block.boxed()).prop_map(|c| json!({"role": "user", "content": c})),
        2 * k => content(assistant_block.boxed()).prop_map(|c| json!({"role": "assistant", "content": c})),
        1 => (select(vec!["system", "bogus"]), text()).prop_map(|(role, c)| json!({"role": role, "content": c})),
    ];
    let system = prop_oneof![
        3 * k => text().prop_map(Value::from),
        3 * k => prop::collection::vec(text().prop_map(|t| json!({"type": "text", "text": t})), 0..3).prop_map(Value::Array),
        k => Just(Value::Null),
        1 => json_value(),
    ];
    let kind = prop_oneof![k => Just(None), k => Just(Some("custom")), 1 => Just(Some("web_search_20250305"))];
    let tool = (text(), kind, prop::option::of(json_object())).prop_map(|(name, kind, schema)| {
        let mut t = json!({"name": name});
        if let Some(k) = kind {
            t["type"] = json!(k);
        }
        if let Some(s) = schema {
            t["input_schema"] = s;
        }
        t
    });
    let choice = prop_oneof![
        select(vec!["auto", "any", "none", "tool", "bogus"])
            .prop_map(|t| json!({"type": t, "name": "f"})),
        Just(json!({"type": "auto", "disable_parallel_tool_use": true})),
        json_value(),
    ];
    (
        "[a-z0-9.-]{1,20}",
        prop::collection::vec(message, 0..7),
        prop::option::of(system),
        prop::option::of(1i64..100_000),
        prop::option::of(any::<bool>()),
        prop::option::of(prop::collection::vec(tool, 0..3)),
        prop::option::of(choice),
        prop::option::of(prop_oneof![text().prop_map(Value::from), json_value()]),
    )
        .prop_map(
            |(model, messages, system, max_tokens, stream, tools, choice, user)| {
                let mut b = json!({"model": model, "messages": messages});
                if let Some(s) = system {
                    b["system"] = s;
                }
                if let Some(n) = max_tokens {
                    b["max_tokens"] = json!(n);
                }
                if let Some(s) = stream {
                    b["stream"] = json!(s);
                }
                if let Some(t) = tools {
                    b["tools"] = Value::Array(t);
                }
                if let Some(c) = choice {
                    b["tool_choice"] = c;
                }
                if let Some(u) = user {
                    b["metadata"] = json!({"user_id": u});
                }
                b
            },
        )
        .boxed()
}

/// The roles of the OpenAI chat request a Messages request becomes.
fn expected_chat_roles(body: &Value) -> Vec<&'static str> {
    let mut out = Vec::new();
    let system = match body.get("system") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    };
    if !system.is_empty() {
        out.push("system");
    }
    for m in body["messages"].as_array().unwrap() {
        match (role(m), &m["content"]) {
            ("user", Value::Array(blocks)) => {
                let results = blocks.iter().filter(|b| b["type"] == "tool_result").count();
                out.extend(std::iter::repeat_n("tool", results));
                if results < blocks.len() {
                    out.push("user");
                }
            }
            ("user", _) => out.push("user"),
            // A system turn within the conversation, where it stands (unless empty).
            ("system", Value::String(s)) => {
                if !s.is_empty() {
                    out.push("system");
                }
            }
            ("system", Value::Array(blocks)) => {
                if blocks.iter().any(|b| {
                    b.get("text")
                        .and_then(Value::as_str)
                        .is_some_and(|t| !t.is_empty())
                }) {
                    out.push("system");
                }
            }
            _ => out.push("assistant"),
        }
    }
    out
}

/// An upstream answer in the shape of one family, or something else.
fn upstream_answer() -> BoxedStrategy<Value> {
    let count = || prop_oneof![4 => 0i64..100_000, 1 => Just(i64::MAX), 1 => any::<i64>()].boxed();
    let anthropic = (
        prop::collection::vec(
            prop_oneof![
                text().prop_map(|t| json!({"type": "text", "text": t})),
                text().prop_map(|t| json!({"type": "thinking", "thinking": t})),
                ("toolu_[a-z0-9]{1,4}", text(), json_value()).prop_map(|(id, n, input)| json!({"type": "tool_use", "id": id, "name": n, "input": input})),
                json_value(),
            ],
            0..4,
        ),
        (count(), count(), count(), count()),
        prop::option::of(select(vec!["end_turn", "max_tokens", "tool_use", "refusal"])),
    )
        .prop_map(|(content, (i, o, r, w), stop)| json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": content,
            "stop_reason": stop,
            "usage": {"input_tokens": i, "output_tokens": o, "cache_read_input_tokens": r, "cache_creation_input_tokens": w},
        }));
    let gemini = (
        prop::collection::vec(
            prop_oneof![
                (text(), any::<bool>()).prop_map(|(t, thought)| json!({"text": t, "thought": thought})),
                (text(), json_value()).prop_map(|(n, a)| json!({"functionCall": {"name": n, "args": a}})),
                json_value(),
            ],
            0..4,
        ),
        (count(), count(), count(), count(), count()),
        prop::option::of(select(vec!["STOP", "MAX_TOKENS", "SAFETY", "OTHER"])),
    )
        .prop_map(|(parts, (p, c, t, cached, tool), finish)| json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish}],
            "usageMetadata": {"promptTokenCount": p, "candidatesTokenCount": c, "thoughtsTokenCount": t,
                "cachedContentTokenCount": cached, "toolUsePromptTokenCount": tool},
            "modelVersion": "gemini-x", "responseId": "r1",
        }));
    let openai = (text(), prop::collection::vec(tool_call(1), 0..2), (count(), count(), count()))
        .prop_map(|(t, calls, (p, c, cached))| json!({
            "id": "chatcmpl-x", "object": "chat.completion", "model": "gpt-4o",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": t, "tool_calls": calls}}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "prompt_tokens_details": {"cached_tokens": cached}},
        }));
    prop_oneof![anthropic, gemini, openai, json_object(), json_value()].boxed()
}

fn usage_is_sane(u: &Usage) -> bool {
    [
        u.prompt_tokens,
        u.completion_tokens,
        u.cached_tokens,
        u.cached_write_tokens,
        u.cached_read_tokens,
        u.input_audio_tokens,
        u.output_audio_tokens,
        u.reasoning_tokens,
    ]
    .iter()
    .all(|n| *n >= 0)
}

/// Every family (by a channel type of it).
const CHANNEL_TYPES: [i32; 8] = [1, 3, 14, 25, 32, 36, 42, 47];

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn chat_requests_translate_to_anthropic_keeping_turns(
        body in chat_request_body(),
        mapped in prop::option::of("[a-z-]{1,12}"),
    ) {
        let Ok(req) = RelayRequest::parse(Endpoint::ChatCompletions, body.to_string().as_bytes()) else {
            return Ok(());
        };
        let t = target(TYPE_ANTHROPIC, mapped.as_deref(), &req.model, "k");
        match anthropic::request_body(&t, &req) {
            Ok(out) => check_anthropic_body(&req, &t, &out)?,
            Err(e) => prop_assert!(translation_error(&e), "{e:?}"),
        }
    }

    #[test]
    fn chat_requests_translate_to_gemini_keeping_turns(body in chat_request_body()) {
        let Ok(req) = RelayRequest::parse(Endpoint::ChatCompletions, body.to_string().as_bytes()) else {
            return Ok(());
        };
        let t = target(TYPE_GEMINI, None, &req.model, "k");
        match gemini::chat_body(&t, &req) {
            Ok(out) => check_gemini_body(&req, &out)?,
            Err(e) => prop_assert!(translation_error(&e), "{e:?}"),
        }
    }

    #[test]
    fn chat_requests_translate_to_bedrock_as_anthropic_bodies(
        body in chat_request_body(),
        mapped in prop::option::of("[a-z.:-]{1,30}"),
    ) {
        let Ok(req) = RelayRequest::parse(Endpoint::ChatCompletions, body.to_string().as_bytes()) else {
            return Ok(());
        };
        let t = target(TYPE_AWS_BEDROCK, mapped.as_deref(), &req.model, "AK|SK|us-east-1");
        let p = Provider::for_channel_type(TYPE_AWS_BEDROCK).unwrap();
        match p.build(client(), &t, &req, None, None) {
            Ok(b) => {
                let sent: Value = serde_json::from_slice(&sent_body(b)).unwrap();
                let mut expected = anthropic::request_body(&t, &req).unwrap();
                let o = expected.as_object_mut().unwrap();
                o.remove("model");
                o.remove("stream");
                o.insert("anthropic_version".into(), json!("bedrock-2023-05-31"));
                prop_assert_eq!(sent, expected);
            }
            Err(e) => {
                prop_assert!(translation_error(&e), "{e:?}");
                prop_assert!(anthropic::request_body(&t, &req).is_err());
            }
        }
    }

    #[test]
    fn chat_requests_pass_to_openai_channels_with_only_model_and_usage_changed(
        body in chat_request_body(),
        mapped in prop::option::of("[a-z-]{1,12}"),
        options in prop::option::of(json_value()),
    ) {
        let mut body = body;
        if let Some(o) = options {
            body["stream_options"] = o;
        }
        let bytes = body.to_string().into_bytes();
        let Ok(req) = RelayRequest::parse(Endpoint::ChatCompletions, &bytes) else {
            return Ok(());
        };
        let t = target(1, mapped.as_deref(), &req.model, "k");
        let p = Provider::for_channel_type(1).unwrap();
        let sent = sent_body(p.build(client(), &t, &req, Some(&bytes), None).map_err(|e| TestCaseError::fail(format!("{e:?}")))?);
        let sent: Value = serde_json::from_slice(&sent).unwrap();
        let mut expected = body.clone();
        expected["model"] = json!(t.upstream_model(&req.model));
        if req.stream {
            let mut o = expected.get("stream_options").and_then(Value::as_object).cloned().unwrap_or_default();
            o.insert("include_usage".into(), json!(true));
            expected["stream_options"] = Value::Object(o);
        }
        prop_assert_eq!(sent, expected);
    }

    #[test]
    fn arbitrary_bodies_translate_or_fail_typed(
        body in json_object(),
        endpoint in endpoint(),
        stream in any::<bool>(),
    ) {
        let req = RelayRequest {
            endpoint,
            body: body.clone(),
            model: "m".into(),
            stream,
            max_tokens: body.get("max_tokens").and_then(Value::as_i64),
            anthropic_beta: None,
            bridged: Default::default(),
        };
        let t = target(TYPE_ANTHROPIC, None, "m", "AK|SK|us-east-1");
        if let Err(e) = anthropic::request_body(&t, &req) {
            prop_assert!(translation_error(&e), "{e:?}");
        }
        if let Err(e) = gemini::chat_body(&t, &req) {
            prop_assert!(translation_error(&e), "{e:?}");
        }
        if let Err(e) = gemini::embeddings_body("m", &req) {
            prop_assert!(translation_error(&e), "{e:?}");
        }
        if let Err(e) = messages::chat_request(&req) {
            prop_assert!(translation_error(&e), "{e:?}");
        }
        for channel_type in CHANNEL_TYPES {
            let Some(p) = Provider::for_channel_type(channel_type) else { continue };
            if !p.supports(endpoint) || channel_type == 42 {
                continue; // Vertex needs an access token first.
            }
            let t = target(channel_type, None, "m", "AK|SK|us-east-1");
            let bytes = body.to_string().into_bytes();
            let ct = endpoint.is_multipart().then_some("multipart/form-data; boundary=b");
            // Any error will do (a target without a base URL is a channel error); no panic.
            if let Ok(b) = p.build(client(), &t, &req, Some(&bytes), ct) {
                let _ = b.build();
            }
        }
    }

    #[test]
    fn messages_requests_become_chat_requests_keeping_turns(body in messages_request_body()) {
        let Ok(req) = RelayRequest::parse(Endpoint::Messages, body.to_string().as_bytes()) else {
            return Ok(());
        };
        match messages::chat_request(&req) {
            Ok(chat) => {
                prop_assert_eq!(chat.endpoint, Endpoint::ChatCompletions);
                prop_assert_eq!(&chat.model, &req.model);
                prop_assert_eq!(&chat.body["model"], &json!(req.model));
                prop_assert_eq!(chat.max_tokens, req.max_tokens);
                prop_assert_eq!(chat.body.get("max_tokens").and_then(Value::as_i64), req.max_tokens);
                prop_assert_eq!(chat.stream, req.stream);
                prop_assert_eq!(chat.body.pointer("/stream_options/include_usage").cloned(), req.stream.then_some(json!(true)));
                let roles: Vec<&str> = chat.body["messages"].as_array().unwrap().iter().map(role).collect();
                prop_assert_eq!(roles, expected_chat_roles(&body));
                // The chat request parses as one.
                let again = RelayRequest::parse(Endpoint::ChatCompletions, chat.body.to_string().as_bytes())
                    .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
                prop_assert_eq!((again.model, again.stream, again.max_tokens), (chat.model, chat.stream, chat.max_tokens));
            }
            Err(e) => prop_assert!(translation_error(&e), "{e:?}"),
        }
    }

    #[test]
    fn upstream_answers_translate_or_fail_without_negative_usage(
        answer in upstream_answer(),
        garbage in prop::option::of(body_bytes()),
        endpoint in select(vec![Endpoint::ChatCompletions, Endpoint::Embeddings, Endpoint::Messages, Endpoint::GenerateContent, Endpoint::Rerank, Endpoint::Responses]),
        status in prop_oneof![Just(400u16), Just(401), Just(403), Just(429), Just(500), Just(529), 100u16..600],
    ) {
        let body = garbage.unwrap_or_else(|| answer.to_string().into_bytes());
        let req = RelayRequest {
            endpoint,
            body: json!({"model": "m", "messages": [], "input": "hi", "query": "q", "documents": ["d"]}),
            model: "m".into(),
            stream: false,
            max_tokens: None,
            anthropic_beta: None,
            bridged: Default::default(),
        };
        for channel_type in CHANNEL_TYPES {
            let p = Provider::for_channel_type(channel_type).unwrap();
            if let Some(u) = p.response_usage(&body) {
                prop_assert!(usage_is_sane(&u), "{channel_type}: {u:?}");
            }
            let f = p.classify(status, &body, &["quota"]);
            prop_assert!(f.message.chars().count() <= 1001, "{}", f.message.len());
            if !p.supports(endpoint) {
                continue;
            }
            match p.answer(&req, body.clone()) {
                Ok(a) => {
                    if let Some(u) = &a.usage {
                        prop_assert!(usage_is_sane(u), "{channel_type} {endpoint:?}: {u:?}");
                    }
                    if p.translates() && endpoint == Endpoint::ChatCompletions {
                        let v: Value = serde_json::from_slice(&a.body).map_err(|e| TestCaseError::fail(e.to_string()))?;
                        prop_assert!(v["choices"][0]["message"].is_object(), "{v}");
                        if let Some(u) = v.get("usage") {
                            for k in ["prompt_tokens", "completion_tokens", "total_tokens"] {
                                prop_assert!(u[k].as_i64().is_some_and(|n| n >= 0), "{u}");
                            }
                        }
                    }
                }
                Err(f) => prop_assert_eq!(f.status, 502),
            }
        }
    }
}

/// A frame with these raw header bytes and correct checksums.
fn raw_frame(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let total = 12 + headers.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude = crc32(&out);
    out.extend_from_slice(&prelude.to_be_bytes());
    out.extend_from_slice(headers);
    out.extend_from_slice(payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

// ---------------------------------------------------------------------------------------------
// 3. Stream translation at every split

/// How a generated SSE stream is written.
#[derive(Debug, Clone)]
struct Framing {
    eol: &'static str,
    event_lines: bool,
    space: bool,
    pretty: bool,
    comments: bool,
    leading: &'static str,
}

fn framing() -> BoxedStrategy<Framing> {
    (
        select(vec!["\n", "\r\n", "\r"]),
        any::<bool>(),
        prop::bool::weighted(0.8),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        select(vec!["", "", "", "\n", "\r\n\r\n", ": keep-alive\n\n"]),
    )
        .prop_map(
            |(eol, event_lines, space, pretty, comments, leading)| Framing {
                eol,
                event_lines,
                space,
                pretty,
                comments,
                leading,
            },
        )
        .boxed()
}

/// Writes events (`event` name, JSON data or a raw data string) as SSE.
fn render(events: &[(String, Value)], f: &Framing) -> Vec<u8> {
    let mut out = String::from(f.leading);
    for (name, data) in events {
        if f.comments {
            out += ": ping";
            out += f.eol;
        }
        if f.event_lines && !name.is_empty() {
            out += "event: ";
            out += name;
            out += f.eol;
        }
        let text = match data {
            Value::String(raw) => raw.clone(),
            v if f.pretty => serde_json::to_string_pretty(v).unwrap(),
            v => v.to_string(),
        };
        for line in text.split('\n') {
            out += if f.space { "data: " } else { "data:" };
            out += line;
            out += f.eol;
        }
        out += f.eol;
    }
    out.into_bytes()
}

fn count() -> BoxedStrategy<i64> {
    prop_oneof![8 => 0i64..5000, 1 => Just(i64::MAX), 1 => any::<i64>()].boxed()
}

/// One content block of an Anthropic stream.
#[derive(Debug, Clone)]
enum Block {
    Text(String, Vec<String>),
    Thinking(Vec<String>),
    Tool(String, String, Vec<String>),
}

fn block() -> BoxedStrategy<Block> {
    prop_oneof![
        3 => (prop_oneof![3 => Just(String::new()), 1 => text()], prop::collection::vec(text(), 0..4)).prop_map(|(s, d)| Block::Text(s, d)),
        1 => prop::collection::vec(text(), 0..3).prop_map(Block::Thinking),
        1 => ("toolu_[a-zA-Z0-9]{1,8}", text(), prop::collection::vec(text(), 0..3)).prop_map(|(i, n, d)| Block::Tool(i, n, d)),
    ]
    .boxed()
}

/// A generated Anthropic Messages stream: its events and the text the client should get.
fn anthropic_stream() -> BoxedStrategy<(Vec<(String, Value)>, String)> {
    (
        "msg_[a-zA-Z0-9]{1,12}",
        (count(), count(), count(), count()),
        prop::collection::vec(block(), 0..5),
        prop::option::of((count(), select(vec!["end_turn", "max_tokens", "tool_use", "refusal", "pause_turn"]))),
        any::<bool>(),
        prop::option::of((any::<Index>(), text())),
        prop::option::of(any::<Index>()),
        any::<bool>(),
    )
        .prop_map(|(id, (input, read, write, first_out), blocks, delta, stop, error, cut, pings)| {
            let mut ev: Vec<(String, Value)> = Vec::new();
            let mut push = |name: &str, v: Value| ev.push((name.to_owned(), v));
            push("message_start", json!({"type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4", "content": [],
                "stop_reason": null, "usage": {"input_tokens": input, "cache_read_input_tokens": read,
                "cache_creation_input_tokens": write, "output_tokens": first_out}}}));
            for (index, b) in blocks.iter().enumerate() {
                if pings {
                    push("ping", json!({"type": "ping"}));
                }
                match b {
                    Block::Text(start, deltas) => {
                        push("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": start}}));
                        for d in deltas {
                            push("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": d}}));
                        }
                    }
                    Block::Thinking(deltas) => {
                        push("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}}));
                        for d in deltas {
                            push("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": d}}));
                        }
                    }
                    Block::Tool(tid, name, parts) => {
                        push("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": tid, "name": name, "input": {}}}));
                        for p in parts {
                            push("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}}));
                        }
                    }
                }
                push("content_block_stop", json!({"type": "content_block_stop", "index": index}));
            }
            if let Some((out, reason)) = delta {
                push("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": out}}));
            }
            if stop {
                push("message_stop", json!({"type": "message_stop"}));
            }
            if let Some((at, message)) = error {
                let at = at.index(ev.len() + 1);
                ev.insert(at, ("error".into(), json!({"type": "error", "error": {"type": "overloaded_error", "message": message}})));
            }
            if let Some(cut) = cut {
                // A stream cut off early (the connection dropped).
                ev.truncate(cut.index(ev.len() + 1));
            }
            let text_out = anthropic_text(&ev);
            (ev, text_out)
        })
        .boxed()
}

/// The text an Anthropic stream carries (text block starts and text deltas).
fn anthropic_text(events: &[(String, Value)]) -> String {
    events
        .iter()
        .filter_map(|(_, v)| {
            v.pointer("/content_block/text")
                .or_else(|| v.pointer("/delta/text"))
                .and_then(Value::as_str)
        })
        .collect()
}

/// A generated Gemini `streamGenerateContent?alt=sse` stream and the text the client should get.
fn gemini_stream() -> BoxedStrategy<(Vec<(String, Value)>, String)> {
    let part = prop_oneof![
        4 => text().prop_map(|t| json!({"text": t})),
        1 => text().prop_map(|t| json!({"text": t, "thought": true})),
        1 => (text(), json_object(), prop::option::of("[a-z0-9]{1,6}")).prop_map(|(n, a, id)| {
            let mut c = json!({"functionCall": {"name": n, "args": a}});
            if let Some(id) = id {
                c["functionCall"]["id"] = json!(id);
            }
            c
        }),
    ];
    let chunk = (
        prop::collection::vec(part, 0..3),
        prop::option::of(select(vec!["STOP", "MAX_TOKENS", "SAFETY", "OTHER"])),
        prop::option::of((count(), count(), count(), count())),
        prop::bool::weighted(0.1),
    );
    (
        "resp-[a-zA-Z0-9]{1,10}",
        prop::collection::vec(chunk, 0..6),
        prop::option::of((any::<Index>(), text())),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(id, chunks, error, blocked)| {
            let mut ev: Vec<(String, Value)> = Vec::new();
            let mut text_out = String::new();
            for (parts, finish, usage, wrapped) in chunks {
                for p in &parts {
                    if p.get("thought").is_none() {
                        if let Some(t) = p.get("text").and_then(Value::as_str) {
                            text_out += t;
                        }
                    }
                }
                let mut c = json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
                    "modelVersion": "gemini-2.5-pro", "responseId": id});
                if let Some(f) = finish {
                    c["candidates"][0]["finishReason"] = json!(f);
                }
                if let Some((p, o, t, cached)) = usage {
                    c["usageMetadata"] = json!({"promptTokenCount": p, "candidatesTokenCount": o,
                        "thoughtsTokenCount": t, "cachedContentTokenCount": cached});
                }
                ev.push((String::new(), if wrapped { json!([c]) } else { c }));
            }
            if blocked {
                ev.push((String::new(), json!({"promptFeedback": {"blockReason": "SAFETY"}, "responseId": id})));
            }
            if let Some((at, message)) = error {
                let at = at.index(ev.len() + 1);
                ev.insert(at, (String::new(), json!({"error": {"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED"}})));
            }
            (ev, text_out)
        })
        .boxed()
}

/// A generated OpenAI `chat.completion.chunk` stream and the text it carries.
fn openai_stream() -> BoxedStrategy<(Vec<(String, Value)>, String)> {
    let delta = prop_oneof![
        4 => text().prop_map(|t| json!({"content": t})),
        1 => text().prop_map(|t| json!({"reasoning_content": t})),
        1 => (0u64..3, prop::option::of("call_[a-z0-9]{1,6}"), prop::option::of(text()), text()).prop_map(|(i, id, name, args)| {
            let mut c = json!({"index": i, "function": {"arguments": args}});
            if let Some(id) = id {
                c["id"] = json!(id);
                c["type"] = json!("function");
            }
            if let Some(n) = name {
                c["function"]["name"] = json!(n);
            }
            json!({"tool_calls": [c]})
        }),
    ];
    (
        prop::collection::vec(delta, 0..8),
        prop::option::of(select(vec!["stop", "length", "tool_calls", "content_filter"])),
        prop::option::of((count(), count(), count())),
        any::<bool>(),
        prop::option::of((any::<Index>(), text())),
    )
        .prop_map(|(deltas, finish, usage, done, error)| {
            let chunk = |delta: Value, finish: Option<&str>| {
                json!({"id": "chatcmpl-AbC", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            let mut ev: Vec<(String, Value)> = vec![(String::new(), chunk(json!({"role": "assistant", "content": ""}), None))];
            let mut text_out = String::new();
            for d in deltas {
                if let Some(t) = d.get("content").and_then(Value::as_str) {
                    text_out += t;
                }
                ev.push((String::new(), chunk(d, None)));
            }
            if let Some(f) = finish {
                ev.push((String::new(), chunk(json!({}), Some(f))));
            }
            if let Some((p, c, cached)) = usage {
                ev.push((String::new(), json!({"id": "chatcmpl-AbC", "object": "chat.completion.chunk", "choices": [],
                    "usage": {"prompt_tokens": p, "completion_tokens": c, "prompt_tokens_details": {"cached_tokens": cached}}})));
            }
            if let Some((at, message)) = error {
                let at = at.index(ev.len() + 1);
                ev.insert(at, (String::new(), json!({"error": {"message": message, "type": "server_error"}})));
            }
            if done {
                ev.push((String::new(), Value::String("[DONE]".into())));
            }
            (ev, text_out)
        })
        .boxed()
}

/// The split points of a chunking: random cuts, every byte, or every byte inside a multi-byte
/// UTF-8 character.
#[derive(Debug, Clone)]
enum Chunking {
    Cuts(Vec<Index>),
    EveryByte,
    InsideCharacters,
}

fn chunking() -> BoxedStrategy<Chunking> {
    prop_oneof![
        3 => prop::collection::vec(any::<Index>(), 0..40).prop_map(Chunking::Cuts),
        1 => Just(Chunking::EveryByte),
        1 => Just(Chunking::InsideCharacters),
    ]
    .boxed()
}

fn pieces<'a>(bytes: &'a [u8], c: &Chunking) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = match c {
        Chunking::Cuts(ix) => ix.iter().map(|i| i.index(bytes.len() + 1)).collect(),
        Chunking::EveryByte => (0..=bytes.len()).collect(),
        // Before every continuation byte: each multi-byte character is cut in all its places.
        Chunking::InsideCharacters => (0..bytes.len())
            .filter(|&i| bytes[i] & 0xC0 == 0x80)
            .collect(),
    };
    cuts.push(0);
    cuts.push(bytes.len());
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}

/// Translated output as lines, with what legitimately differs between two runs (the `created`
/// time, the relay's own fallback chunk id) masked.
fn normalize(out: &[u8]) -> Result<Vec<String>, TestCaseError> {
    let text = std::str::from_utf8(out)
        .map_err(|e| TestCaseError::fail(format!("output is not UTF-8: {e}")))?;
    Ok(text
        .split('\n')
        .map(|line| {
            let Some(data) = line.strip_prefix("data: ") else {
                return line.to_owned();
            };
            let Ok(mut v) = serde_json::from_str::<Value>(data) else {
                return line.to_owned();
            };
            if let Some(o) = v.as_object_mut() {
                o.remove("created");
                let fallback = o
                    .get("id")
                    .and_then(Value::as_str)
                    .and_then(|id| id.strip_prefix("chatcmpl-"))
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
                if fallback {
                    o.insert("id".into(), json!("chatcmpl-<fallback>"));
                }
            }
            format!("data: {v}")
        })
        .collect())
}

/// What one run of a translator gave: its output, its usage, and the tap's reading of the
/// output (or, for translators whose tap reads the upstream, of the upstream bytes).
#[derive(Debug, PartialEq)]
struct Run {
    out: Vec<String>,
    usage: Option<Usage>,
    tap: StreamOutcome,
}

fn run(make: &dyn Fn() -> StreamTranslator, pieces: &[&[u8]]) -> Result<Run, TestCaseError> {
    let mut t = make();
    let mut out = Vec::new();
    let mut tap = SseTap::new();
    for p in pieces {
        let o = if t.is_bridged() {
            t.feed_tapped(p, &mut tap)
        } else {
            let o = t.feed(p);
            tap.feed(&o);
            o
        };
        out.extend(o);
    }
    let o = if t.is_bridged() {
        t.finish_tapped(&mut tap)
    } else {
        let o = t.finish();
        tap.feed(&o);
        o
    };
    out.extend(o);
    Ok(Run {
        out: normalize(&out)?,
        usage: t.usage(),
        tap: tap.finish("gpt-4o"),
    })
}

/// The property: every chunking gives what the whole stream gives.
fn same_at_every_split(
    make: &dyn Fn() -> StreamTranslator,
    bytes: &[u8],
    c: &Chunking,
) -> Result<Run, TestCaseError> {
    let whole = run(make, &[bytes])?;
    let split = run(make, &pieces(bytes, c))?;
    prop_assert_eq!(
        &split,
        &whole,
        "chunking {:?} of {:?}",
        c,
        String::from_utf8_lossy(bytes)
    );
    Ok(whole)
}

/// The concatenated `delta.content` of translated OpenAI chunks.
fn streamed_text(lines: &[String]) -> String {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| {
            v.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect()
}

fn bedrock_frames(events: &[(String, Value)], pretty: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (_, v) in events {
        let json = if pretty {
            serde_json::to_string_pretty(v).unwrap()
        } else {
            v.to_string()
        };
        let b64 = base64::engine::general_purpose::STANDARD.encode(json);
        out.extend(Frame::encode(
            &[
                (":event-type", "chunk"),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            json!({ "bytes": b64 }).to_string().as_bytes(),
        ));
    }
    out
}

/// Bytes that are SSE-like now and then.
fn sse_garbage() -> BoxedStrategy<Vec<u8>> {
    let token = prop_oneof![
        select(vec![
            &b"data: "[..], b"data:", b"event: ", b"event: message_start", b"event: error", b"\n", b"\r",
            b"\r\n", b"\n\n", b": c\n", b"{", b"}", b"[DONE]", b"\"type\":\"content_block_delta\"",
            b"{\"type\":\"message_stop\"}", b"{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}",
            b"{\"choices\":[{\"delta\":{\"content\":\"\xc3\xa9\"}}]}", b"\xc3", b"\xa9", b"\xf0\x9f", b"\xff",
            b"{\"usage\":{\"prompt_tokens\":9223372036854775807,\"completion_tokens\":1}}",
            b"{\"type\":\"message_delta\",\"usage\":{\"output_tokens\":9223372036854775807,\"input_tokens\":9223372036854775807}}",
        ])
        .prop_map(<[u8]>::to_vec),
        prop::collection::vec(any::<u8>(), 0..8),
    ];
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        prop::collection::vec(token, 0..40).prop_map(|t| t.concat()),
    ]
    .boxed()
}

type Factory = fn() -> StreamTranslator;

const TRANSLATORS: [(&str, Factory); 7] = [
    ("anthropic", || StreamTranslator::anthropic("claude")),
    ("anthropic_observer", || {
        StreamTranslator::anthropic_observer("claude")
    }),
    ("gemini", || StreamTranslator::gemini("gemini")),
    ("gemini_observer", || {
        StreamTranslator::gemini_observer("gemini")
    }),
    ("messages", || StreamTranslator::messages("gpt-4o")),
    ("bedrock", || StreamTranslator::bedrock("claude")),
    ("vertex", || StreamTranslator::vertex("gemini")),
];

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn anthropic_streams_translate_the_same_at_every_split(
        (events, text) in anthropic_stream(),
        f in framing(),
        c in chunking(),
    ) {
        let bytes = render(&events, &f);
        for make in [TRANSLATORS[0].1, TRANSLATORS[1].1] {
            let whole = same_at_every_split(&make, &bytes, &c)?;
            prop_assert_eq!(streamed_text(&whole.out), text.clone());
        }
        // Vertex recognises the family from the stream itself (here with `event:` lines).
        if f.event_lines {
            let vertex = same_at_every_split(&TRANSLATORS[6].1, &bytes, &c)?;
            prop_assert_eq!(streamed_text(&vertex.out), text);
        }
    }

    #[test]
    fn gemini_streams_translate_the_same_at_every_split(
        (events, text) in gemini_stream(),
        f in framing(),
        c in chunking(),
    ) {
        let bytes = render(&events, &f);
        for make in [TRANSLATORS[2].1, TRANSLATORS[3].1, TRANSLATORS[6].1] {
            let whole = same_at_every_split(&make, &bytes, &c)?;
            prop_assert_eq!(streamed_text(&whole.out), text.clone());
        }
    }

    #[test]
    fn bedrock_streams_translate_the_same_at_every_split(
        (events, text) in anthropic_stream(),
        pretty in any::<bool>(),
        tail in prop::option::of(prop::collection::vec(any::<u8>(), 1..40)),
        c in chunking(),
    ) {
        let mut bytes = bedrock_frames(&events, pretty);
        let clean = tail.as_ref().is_none_or(|t| t.len() < 12);
        if let Some(t) = tail {
            bytes.extend(t);
        }
        let whole = same_at_every_split(&TRANSLATORS[5].1, &bytes, &c)?;
        // Garbage after the frames (a corrupt frame of 12 bytes or more) ends the stream with
        // an error, but everything before it still arrives.
        prop_assert_eq!(streamed_text(&whole.out), text);
        if !clean {
            prop_assert!(whole.out.iter().any(|l| l.contains("\"error\"")), "{:?}", whole.out);
        }
    }

    #[test]
    fn openai_streams_become_anthropic_events_the_same_at_every_split(
        (events, text) in openai_stream(),
        f in framing(),
        c in chunking(),
    ) {
        let bytes = render(&events, &f);
        let whole = same_at_every_split(&TRANSLATORS[4].1, &bytes, &c)?;
        let deltas: String = whole
            .out
            .iter()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter(|v| v.pointer("/delta/type") == Some(&json!("text_delta")))
            .filter_map(|v| v.pointer("/delta/text").and_then(Value::as_str).map(str::to_owned))
            .collect();
        prop_assert_eq!(deltas, text);
        // The tap reads OpenAI streams passed through the same way at every split.
        let tap = |pieces: &[&[u8]]| {
            let mut t = SseTap::new();
            for p in pieces {
                t.feed(p);
            }
            t.finish("gpt-4o")
        };
        prop_assert_eq!(tap(&pieces(&bytes, &c)), tap(&[&bytes]));
    }

    #[test]
    fn bedrock_frames_with_arbitrary_headers_never_panic(
        headers in prop::collection::vec(any::<u8>(), 0..64),
        payload in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        // Frames with valid checksums around arbitrary header bytes (the other properties send
        // string headers only).
        let frame = raw_frame(&headers, &payload);
        let mut frames = Vec::new();
        if FrameReader::default().feed(&frame, &mut frames).is_ok() {
            prop_assert_eq!(frames.len(), 1);
            prop_assert_eq!(&frames[0].payload, &payload);
        }
        let out = StreamTranslator::bedrock("m").feed(&frame);
        prop_assert!(std::str::from_utf8(&out).is_ok());
    }

}

proptest! {
    // Cheap (arbitrary bytes rarely make events): more cases.
    #![proptest_config(config(512))]

    #[test]
    fn arbitrary_bytes_translate_the_same_at_every_split(bytes in sse_garbage(), c in chunking()) {
        for (_, make) in TRANSLATORS {
            same_at_every_split(&make, &bytes, &c)?;
        }
        let mut whole = Vec::new();
        let mut r = SseReader::new();
        r.feed(&bytes, &mut whole);
        r.finish(&mut whole);
        let mut split = Vec::new();
        let mut r = SseReader::new();
        for p in pieces(&bytes, &c) {
            r.feed(p, &mut split);
        }
        r.finish(&mut split);
        prop_assert_eq!(split, whole);
    }
}

// ---------------------------------------------------------------------------------------------
// Findings: one test per fault the properties found (docs/security.md, "Fuzzing"). The request
// limit, Vertex and float findings have theirs beside the code (request.rs, vertex.rs, price.rs).

fn anthropic_sse(events: &[Value]) -> Vec<u8> {
    let named: Vec<(String, Value)> = events
        .iter()
        .map(|v| (v["type"].as_str().unwrap_or_default().to_owned(), v.clone()))
        .collect();
    let f = Framing {
        eol: "\n",
        event_lines: true,
        space: true,
        pretty: false,
        comments: false,
        leading: "",
    };
    render(&named, &f)
}

/// Usage counts near `i64::MAX` overflowed the sums of Anthropic's and Gemini's usage (a panic
/// in debug builds, a negative prompt count in release builds): they saturate now.
#[test]
fn huge_upstream_usage_counts_saturate() {
    let max = i64::MAX;
    let sse = anthropic_sse(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude",
            "usage": {"input_tokens": max, "cache_creation_input_tokens": 1, "cache_read_input_tokens": 1, "output_tokens": 1}}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": max}}),
        json!({"type": "message_stop"}),
    ]);
    let mut t = StreamTranslator::anthropic("claude");
    let out = [t.feed(&sse), t.finish()].concat();
    let u = t.usage().unwrap();
    assert_eq!((u.prompt_tokens, u.completion_tokens), (max, max));
    let mut tap = SseTap::new();
    tap.feed(&out);
    assert_eq!(
        tap.finish("gpt-4o").usage.map(|u| u.prompt_tokens),
        Some(max)
    );

    let body = json!({"id": "m", "type": "message", "content": [{"type": "text", "text": "hi"}],
        "usage": {"input_tokens": max, "output_tokens": 1, "cache_read_input_tokens": max}});
    let req =
        RelayRequest::parse(Endpoint::ChatCompletions, br#"{"model":"m","messages":[]}"#).unwrap();
    let a = Provider::for_channel_type(TYPE_ANTHROPIC)
        .unwrap()
        .answer(&req, body.to_string().into_bytes())
        .unwrap();
    assert_eq!(a.usage.unwrap().prompt_tokens, max);

    let gemini = json!({"candidates": [{"content": {"parts": [{"text": "hi"}]}}],
        "usageMetadata": {"promptTokenCount": max, "toolUsePromptTokenCount": 5, "candidatesTokenCount": 1, "thoughtsTokenCount": max}});
    let a = Provider::for_channel_type(TYPE_GEMINI)
        .unwrap()
        .answer(&req, gemini.to_string().into_bytes())
        .unwrap();
    let u = a.usage.unwrap();
    assert_eq!((u.prompt_tokens, u.completion_tokens), (max, max));
    let v: Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(v["usage"]["total_tokens"], json!(max));
}

/// A corrupt Bedrock frame dropped the good frames that arrived in the same chunk before it,
/// so what the client got depended on where the upstream's chunks were cut.
#[test]
fn bedrock_frames_before_a_corrupt_one_still_arrive() {
    let events: Vec<(String, Value)> = vec![
        (
            String::new(),
            json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}}),
        ),
        (
            String::new(),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
        ),
    ];
    let mut bytes = bedrock_frames(&events, false);
    bytes.extend_from_slice(&[0xAB; 16]);
    for cut in [0, bytes.len() - 16, bytes.len()] {
        let mut t = StreamTranslator::bedrock("claude");
        let out = [t.feed(&bytes[..cut]), t.feed(&bytes[cut..]), t.finish()].concat();
        let lines = normalize(&out).unwrap();
        assert_eq!(streamed_text(&lines), "Hi", "cut at {cut}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("prelude checksum mismatch")),
            "cut at {cut}"
        );
    }
}

/// Tool-call arguments that were JSON but not an object (`0`, `[1]`) were sent on as
/// Anthropic's `input` and Gemini's `args`, which must be objects; they are refused now, as
/// the error message always said.
#[test]
fn tool_call_arguments_must_be_objects() {
    for args in ["0", "[1]", "\"s\"", "null"] {
        let body = json!({"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}}]}
        ]});
        let req =
            RelayRequest::parse(Endpoint::ChatCompletions, body.to_string().as_bytes()).unwrap();
        let t = target(TYPE_ANTHROPIC, None, "m", "k");
        assert!(
            matches!(
                anthropic::request_body(&t, &req),
                Err(RelayError::InvalidRequest(_))
            ),
            "{args}"
        );
        assert!(
            matches!(
                gemini::chat_body(&t, &req),
                Err(RelayError::InvalidRequest(_))
            ),
            "{args}"
        );
    }
}
