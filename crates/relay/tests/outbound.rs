//! Golden outbound bodies: the exact bytes sent to Anthropic, Bedrock, Vertex AI (Claude and
//! Gemini models) and Gemini for a broad set of OpenAI chat requests (and of Messages and
//! Responses requests bridged into chat), or the error refusing them. Each case's expected
//! text is `tests/fixtures/outbound/<case>.txt`; `UPDATE_GOLDEN=1 cargo test --test outbound`
//! writes them from the current code (for a change meant to alter the bytes, reviewed in the
//! diff).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_relay::providers::vertex::Vertex;
use switchboard_relay::{ChannelTarget, Endpoint, Provider, RelayRequest};

const TYPE_ANTHROPIC: i32 = 14;
const TYPE_GEMINI: i32 = 25;
const TYPE_BEDROCK: i32 = 32;
const TYPE_VERTEX: i32 = 42;

const VERTEX_KEY: &str = r#"{"type":"service_account","project_id":"proj-1","private_key_id":"kid","private_key":"-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n","client_email":"sa@proj-1.iam.gserviceaccount.com","token_uri":"https://oauth2.googleapis.com/token"}"#;

/// The families a case is sent to: (label, channel type, key, model the client's maps to).
const TARGETS: [(&str, i32, &str, Option<&str>); 5] = [
    ("anthropic", TYPE_ANTHROPIC, "sk-ant", None),
    ("bedrock", TYPE_BEDROCK, "AK|SK|us-east-1", None),
    (
        "vertex-claude",
        TYPE_VERTEX,
        VERTEX_KEY,
        Some("claude-sonnet-4@20250514"),
    ),
    ("gemini", TYPE_GEMINI, "g-key", None),
    (
        "vertex-gemini",
        TYPE_VERTEX,
        VERTEX_KEY,
        Some("gemini-2.5-pro"),
    ),
];

fn target(
    channel_type: i32,
    key: &str,
    model: &str,
    mapped: Option<&str>,
    config: &Value,
) -> ChannelTarget {
    let base_url = match channel_type {
        TYPE_ANTHROPIC => "https://api.anthropic.example",
        TYPE_GEMINI => "https://generativelanguage.example",
        _ => "",
    };
    let mut model_mapping = HashMap::new();
    if let Some(m) = mapped {
        model_mapping.insert(model.to_owned(), m.to_owned());
    }
    ChannelTarget {
        id: 7,
        channel_type,
        base_url: base_url.into(),
        key: key.into(),
        model_mapping,
        timeout: Duration::from_secs(30),
        config: config.as_object().cloned().unwrap_or_default(),
        ..ChannelTarget::default()
    }
}

/// What `target` sends for `req`: the body's exact text (with the `anthropic-beta` header when
/// there is one), or the error.
fn sent(t: &ChannelTarget, req: &RelayRequest, raw: &[u8]) -> String {
    let client = reqwest::Client::new();
    let built = if t.channel_type == TYPE_VERTEX {
        match Provider::for_channel_type(TYPE_VERTEX)
            .unwrap()
            .bridge(req.endpoint)
        {
            Some(bridge) => bridge
                .chat_for(req)
                .and_then(|chat| Vertex.build(&client, t, chat, "token")),
            None => Vertex.build(&client, t, req, "token"),
        }
    } else {
        Provider::for_channel_type(t.channel_type)
            .unwrap()
            .build(&client, t, req, Some(raw), None)
    };
    match built {
        Err(e) => format!("error: {e:?}\n"),
        Ok(b) => {
            let r = b.build().unwrap();
            let mut out = String::new();
            if let Some(beta) = r.headers().get("anthropic-beta") {
                writeln!(out, "anthropic-beta: {}", beta.to_str().unwrap()).unwrap();
            }
            let body = r.body().unwrap().as_bytes().unwrap();
            writeln!(out, "{}", std::str::from_utf8(body).unwrap()).unwrap();
            out
        }
    }
}

/// Every target's rendering of `body` (sent as `endpoint`) on channels with `config`.
fn render(endpoint: Endpoint, body: &Value, config: &Value) -> String {
    let raw = serde_json::to_vec(body).unwrap();
    let req = RelayRequest::parse(endpoint, &raw).unwrap();
    let mut out = String::new();
    for (label, channel_type, key, mapped) in TARGETS {
        let t = target(channel_type, key, &req.model, mapped, config);
        writeln!(out, "## {label}").unwrap();
        out.push_str(&sent(&t, &req, &raw));
    }
    out
}

/// Compares `actual` with the case's golden file (or writes it with `UPDATE_GOLDEN=1`).
fn golden(case: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/outbound")
        .join(format!("{case}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    if expected != actual {
        for (i, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
            if e != a {
                panic!(
                    "{case}: line {} differs\nexpected: {e}\nactual:   {a}",
                    i + 1
                );
            }
        }
        panic!("{case}: differs in length\nexpected:\n{expected}\nactual:\n{actual}");
    }
}

fn chat_case(case: &str, body: Value) {
    golden(case, &render(Endpoint::ChatCompletions, &body, &json!({})));
}

fn weather_tool() -> Value {
    json!({"type": "function", "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    }})
}

const PNG_DATA: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

#[test]
fn plain_user_message() {
    chat_case(
        "plain",
        json!({"model": "claude-3-5-sonnet-20241022", "messages": [{"role": "user", "content": "Hello"}]}),
    );
}

#[test]
fn old_claude_models_default_to_4096_tokens_and_streams() {
    chat_case(
        "old_model_stream",
        json!({"model": "claude-3-opus-20240229", "stream": true,
            "messages": [{"role": "user", "content": "Hi"}]}),
    );
}

#[test]
fn system_and_developer_messages() {
    chat_case(
        "system_developer",
        json!({"model": "claude-sonnet-4", "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "developer", "content": [{"type": "text", "text": "Answer "}, {"type": "text", "text": "in French."}]},
            {"role": "system", "content": ""},
            {"role": "user", "content": "Bonjour"},
            {"role": "system", "content": "A late reminder."}
        ]}),
    );
}

#[test]
fn multi_part_user_content_with_images() {
    chat_case(
        "user_parts_images",
        json!({"model": "claude-sonnet-4", "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": "https://img.example/cat.PNG?size=large#frag"}},
                {"type": "image_url", "image_url": {"url": PNG_DATA, "detail": "high"}},
                {"type": "image_url", "image_url": "https://img.example/dog.webp"},
                {"type": "image_url", "image_url": {"url": "http://img.example/a.gif"}},
                {"type": "image_url", "image_url": {"url": "https://img.example/b.heic"}},
                {"type": "image_url", "image_url": {"url": "https://img.example/c.heif"}},
                {"type": "image_url", "image_url": {"url": "https://img.example/photo"}},
                {"type": "image_url", "image_url": {"url": "data:;base64,AAAA"}},
                {"type": "text"}
            ]}
        ]}),
    );
}

#[test]
fn tools_with_and_without_parameters() {
    chat_case(
        "tools",
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "Weather?"}],
        "tools": [
            weather_tool(),
            {"type": "function", "function": {"name": "now"}},
            {"type": "function", "function": {"name": "odd", "description": 5, "parameters": "x"}},
            {"type": "retrieval"}
        ]}),
    );
}

#[test]
fn tool_choice_variants() {
    let choices = [
        json!("auto"),
        json!("required"),
        json!("none"),
        json!("sometimes"),
        json!({"type": "function", "function": {"name": "get_weather"}}),
        json!({"type": "function"}),
        json!(null),
    ];
    let mut out = String::new();
    for choice in &choices {
        for parallel in [None, Some(false), Some(true)] {
            let mut body = json!({"model": "claude-sonnet-4",
                "messages": [{"role": "user", "content": "Weather?"}],
                "tools": [weather_tool()], "tool_choice": choice});
            if let Some(p) = parallel {
                body["parallel_tool_calls"] = json!(p);
            }
            writeln!(
                out,
                "# tool_choice {choice} parallel_tool_calls {parallel:?}"
            )
            .unwrap();
            out.push_str(&render(Endpoint::ChatCompletions, &body, &json!({})));
        }
    }
    // A choice without tools, and parallel_tool_calls false without tools.
    for body in [
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "tool_choice": "required"}),
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "parallel_tool_calls": false}),
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": []}),
    ] {
        writeln!(out, "# {body}").unwrap();
        out.push_str(&render(Endpoint::ChatCompletions, &body, &json!({})));
    }
    golden("tool_choice", &out);
}

#[test]
fn assistant_tool_calls_and_grouped_tool_results() {
    chat_case(
        "tool_calls_results",
        json!({"model": "claude-sonnet-4", "messages": [
            {"role": "user", "content": "Weather in Paris and Rome? And the time."},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"units\": {\"b\": 1, \"a\": [1.5, null]}}"}},
                {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}},
                {"id": "call_3", "type": "function", "function": {"name": "now", "arguments": ""}},
                {"id": 4, "type": "function", "function": {"arguments": "  "}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21, \"sky\": \"clear\"}"},
            {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "18 degrees"}, {"type": "text", "text": ", rain"}]},
            {"role": "tool", "tool_call_id": "call_3", "content": "[1, 2]"},
            {"role": "tool", "tool_call_id": "call_9", "name": "lookup", "content": "orphan"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_5", "type": "function", "function": {"name": "now", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_5", "content": "noon"},
            {"role": "user", "content": "Thanks"},
            {"role": "tool", "tool_call_id": "call_5", "content": "again"},
            {"role": "tool", "tool_call_id": "call_1", "content": ""},
            {"role": "assistant", "content": ""},
            {"role": "assistant", "content": [{"type": "text", "text": "Parts "}, {"type": "text", "text": "answer"}]},
            {"role": "user", "content": "Bye"}
        ]}),
    );
}

#[test]
fn tool_results_stay_grouped_across_system_and_empty_assistant_messages() {
    chat_case(
        "tool_results_interleaved",
        json!({"model": "claude-sonnet-4", "messages": [
            {"role": "user", "content": "Go."},
            {"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "one", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "two", "arguments": "{}"}},
                {"id": "c", "type": "function", "function": {"name": "three", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "system", "content": "Between results."},
            {"role": "tool", "tool_call_id": "b", "content": "2"},
            {"role": "assistant", "content": "", "tool_calls": []},
            {"role": "developer", "content": ""},
            {"role": "tool", "tool_call_id": "c", "content": "3"},
            {"role": "assistant", "content": "Done."},
            {"role": "tool", "tool_call_id": "", "content": "late"},
            {"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "renamed", "arguments": "{}"}},
                {"id": "", "type": "function", "function": {"name": 7, "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "a", "content": "{}"},
            {"role": "tool", "tool_call_id": "", "content": "{\"x\": 1}"}
        ]}),
    );
}

#[test]
fn reasoning_effort_and_thinking() {
    let mut out = String::new();
    for effort in ["minimal", "low", "medium", "high", "none", "extreme"] {
        for max_tokens in [None, Some(2000), Some(1000), Some(100_000)] {
            let mut body = json!({"model": "claude-sonnet-4", "temperature": 0.3,
                "messages": [{"role": "user", "content": "Think."}], "reasoning_effort": effort});
            if let Some(n) = max_tokens {
                body["max_tokens"] = json!(n);
            }
            writeln!(out, "# reasoning_effort {effort} max_tokens {max_tokens:?}").unwrap();
            out.push_str(&render(Endpoint::ChatCompletions, &body, &json!({})));
        }
    }
    for body in [
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "Think."}],
            "thinking": {"type": "enabled", "budget_tokens": 2048}, "reasoning_effort": "high",
            "temperature": 0.5, "top_k": 40}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "Think."}],
            "thinking": null, "top_k": null, "reasoning_effort": "low", "max_completion_tokens": 5000}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "Think."}],
            "thinking": "on", "reasoning_effort": 3}),
    ] {
        writeln!(out, "# {body}").unwrap();
        out.push_str(&render(Endpoint::ChatCompletions, &body, &json!({})));
    }
    golden("reasoning", &out);
}

#[test]
fn sampling_limits_and_stop_sequences() {
    let mut out = String::new();
    let bodies = [
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "x"}],
            "temperature": 1.5, "top_p": 0.9, "top_k": 40, "seed": 12345678901234_i64,
            "presence_penalty": 0.5, "frequency_penalty": -0.25, "max_tokens": 300,
            "stop": "END", "user": "user-42"}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "x"}],
            "temperature": 0, "top_p": 1, "max_completion_tokens": 700, "max_tokens": 200,
            "stop": ["a", "b", 3]}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "x"}],
            "temperature": 1.0, "top_p": 1.0, "stop": "", "seed": "7", "user": 5}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "x"}],
            "temperature": 0.7, "top_p": "0.5", "stop": [], "presence_penalty": null,
            "top_k": 1e-7, "frequency_penalty": 2}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "x"}],
            "temperature": "hot", "stop": null}),
    ];
    for body in &bodies {
        writeln!(out, "# {body}").unwrap();
        out.push_str(&render(Endpoint::ChatCompletions, body, &json!({})));
    }
    golden("sampling", &out);
}

#[test]
fn response_formats() {
    let mut out = String::new();
    let formats = [
        json!({"type": "text"}),
        json!({"type": "json_object"}),
        json!({"type": "json_schema", "json_schema": {"name": "weather", "description": "A forecast.", "strict": true,
            "schema": {"type": "object", "properties": {"temp": {"type": "number"}, "sky": {"type": ["string", "null"]}},
                "required": ["temp"], "additionalProperties": false, "$defs": {"x": {"type": "integer"}}}}}),
        json!({"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}),
        json!({"type": "json_schema", "json_schema": {"name": "w"}}),
        json!({"type": "json_schema", "json_schema": {"name": "arr", "schema": {"type": "array"}}}),
        json!({"type": "json_schema"}),
        json!({"type": "json_schema", "json_schema": {"name": "", "schema": {"type": "object"}}}),
        json!({"type": "json_schema", "json_schema": {"schema": 5}}),
        json!({"type": "yaml"}),
        json!({}),
        json!("json"),
        json!(null),
    ];
    for format in &formats {
        let body = json!({"model": "claude-sonnet-4", "response_format": format,
            "messages": [{"role": "user", "content": "Forecast?"}]});
        writeln!(out, "# response_format {format}").unwrap();
        out.push_str(&render(Endpoint::ChatCompletions, &body, &json!({})));
    }
    for body in [
        json!({"model": "claude-sonnet-4", "response_format": {"type": "json_object"},
            "tools": [weather_tool()], "messages": [{"role": "user", "content": "x"}]}),
        json!({"model": "claude-sonnet-4", "response_format": {"type": "json_object"},
            "thinking": {"type": "enabled", "budget_tokens": 2048}, "messages": [{"role": "user", "content": "x"}]}),
        json!({"model": "claude-sonnet-4", "response_format": {"type": "json_object"},
            "thinking": {"type": "disabled"}, "reasoning_effort": "high", "tools": [],
            "messages": [{"role": "user", "content": "x"}]}),
    ] {
        writeln!(out, "# {body}").unwrap();
        out.push_str(&render(Endpoint::ChatCompletions, &body, &json!({})));
    }
    golden("response_format", &out);
}

#[test]
fn tool_schemas_cleaned_for_gemini() {
    chat_case(
        "tool_schemas",
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "x"}],
        "tools": [{"type": "function", "function": {"name": "search", "strict": true,
            "parameters": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "q": {"type": "string", "minLength": 1, "examples": ["a"], "title": "Query"},
                    "n": {"type": ["integer", "null"], "exclusiveMinimum": 0, "exclusiveMaximum": 10, "maximum": 5, "default": 3},
                    "kind": {"const": "web"},
                    "level": {"enum": [1, 2]},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 3},
                    "either": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/x"}]},
                    "one": {"oneOf": [{"type": "number", "format": "float"}]},
                    "nested": {"type": "object", "properties": {"deep": {"type": ["null"]}}, "propertyOrdering": ["deep"]}
                },
                "required": ["q"]
            }}}]}),
    );
}

#[test]
fn strings_numbers_and_escapes() {
    chat_case(
        "escapes",
        json!({"model": "claude-sonnet-4", "temperature": 0.1, "top_p": 0.30000000000000004,
        "messages": [
            {"role": "system", "content": "Quote \"this\" \\ and </script> \u{2028} tab\t"},
            {"role": "user", "content": "Emoji 🦀, accents é, control \u{0001}, newline\nend"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c\"1", "type": "function", "function": {"name": "f\u{00e9}", "arguments": "{\"s\": \"\\u00e9\\n\", \"n\": 1e3, \"big\": 12345678901234567890, \"f\": 0.1}"}}
            ]},
            {"role": "tool", "tool_call_id": "c\"1", "content": "{\"ok\": true, \"v\": -0.0}"}
        ]}),
    );
}

#[test]
fn model_mapping_and_unknown_fields() {
    chat_case(
        "extra_fields",
        json!({"model": "gpt-4o", "n": 2, "logprobs": true, "stream_options": {"include_usage": true},
            "metadata": {"a": "b"}, "store": true, "modalities": ["text"],
            "messages": [{"role": "user", "content": "x", "name": "bob"}]}),
    );
}

#[test]
fn refused_requests() {
    let mut out = String::new();
    let bodies = [
        json!({"model": "m", "messages": "hi"}),
        json!({"model": "m"}),
        json!({"model": "m", "messages": [{"role": "user"}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": 5}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": null}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": [{"text": "no type"}]}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "ftp://x/y.png"}}]}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "r"}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": 5, "content": "r"}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "function", "content": "r"}]}),
        json!({"model": "m", "messages": [{"content": "x"}]}),
        json!({"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"id": "c"}]}]}),
        json!({"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}]}]}),
        json!({"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{bad"}}]}]}),
        json!({"model": "m", "messages": [{"role": "tool", "content": "r"}, {"role": "robot", "content": "x"}]}),
        json!({"model": "m", "messages": [{"role": "robot", "content": "x"}, {"role": "tool", "content": "r"}]}),
        json!({"model": "m", "messages": [{"role": "tool", "content": "r"}, {"role": "user", "content": 1}]}),
        json!({"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "[1]"}}]}, {"role": "user"}]}),
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "response_format": {"type": "yaml"}}),
        json!({"model": "m", "messages": [{"role": "user"}], "response_format": {"type": "yaml"}}),
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "tool_calls": 5, "tools": "x", "tool_choice": 3}),
    ];
    for body in &bodies {
        writeln!(out, "# {body}").unwrap();
        out.push_str(&render(Endpoint::ChatCompletions, body, &json!({})));
    }
    golden("refused", &out);
}

#[test]
fn switches_add_server_tools() {
    let mut out = String::new();
    let on = json!({"web_search": true, "code_execution": true});
    let bodies = [
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "News?"}]}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "News?"}],
            "tools": [weather_tool()], "tool_choice": "auto", "parallel_tool_calls": false}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "News?"}],
            "tools": [weather_tool(), {"type": "function", "function": {"name": "web_search"}}]}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "News?"}],
            "tools": [weather_tool()], "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "News?"}],
            "response_format": {"type": "json_object"}}),
        json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "News?"}],
            "response_format": {"type": "text"}, "stream": true}),
    ];
    for config in [
        on.clone(),
        json!({"web_search": true}),
        json!({"code_execution": true}),
        json!({"web_search": false, "code_execution": "yes"}),
    ] {
        for body in &bodies {
            writeln!(out, "# config {config} body {body}").unwrap();
            out.push_str(&render(Endpoint::ChatCompletions, body, &config));
        }
    }
    golden("switches", &out);
}

#[test]
fn anthropic_beta_flags_from_the_client_and_the_channel() {
    let body = json!({"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "x"}]});
    let raw = serde_json::to_vec(&body).unwrap();
    let mut req = RelayRequest::parse(Endpoint::ChatCompletions, &raw).unwrap();
    req.anthropic_beta = Some("interleaved-thinking-2025-05-14,context-1m-2025-08-07".into());
    let config = json!({"anthropic_beta": {"remove": ["context-1m-2025-08-07"], "add": ["token-efficient-tools-2025-02-19"]}, "code_execution": true});
    let mut out = String::new();
    for (label, channel_type, key, mapped) in TARGETS {
        let t = target(channel_type, key, &req.model, mapped, &config);
        writeln!(out, "## {label}").unwrap();
        out.push_str(&sent(&t, &req, &raw));
    }
    golden("beta_flags", &out);
}

#[test]
fn messages_and_responses_clients_bridged_into_chat() {
    let messages = json!({"model": "claude-sonnet-4", "max_tokens": 1024, "stream": true,
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "cold"},
                {"type": "text", "text": "And tomorrow?"}]}
        ],
        "tools": [{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": true},
        "thinking": {"type": "enabled", "budget_tokens": 4000},
        "temperature": 1, "metadata": {"user_id": "u-1"}, "stop_sequences": ["STOP"]});
    let mut out = String::from("# messages\n");
    out.push_str(&render(Endpoint::Messages, &messages, &json!({})));
    let responses = json!({"model": "claude-sonnet-4", "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "cold"}
        ],
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}],
        "reasoning": {"effort": "low"}, "max_output_tokens": 3000, "store": false});
    out.push_str("# responses\n");
    out.push_str(&render(Endpoint::Responses, &responses, &json!({})));
    golden("bridged", &out);
}
