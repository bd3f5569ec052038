//! The mock upstream over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use futures_util::StreamExt;
use serde_json::{json, Value};
use switchboard_mock_upstream::{MockUpstream, CONTENT, CONTENT_CHUNKS};

async fn post(m: &MockUpstream, key: &str, path: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}{path}", m.base_url))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// The `data:` payloads of an SSE body, in order (event names kept as `event:` lines).
fn sse_lines(text: &str) -> Vec<String> {
    text.split("\n\n")
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect()
}

fn data_json(event: &str) -> Value {
    let line = event
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap();
    serde_json::from_str(line).unwrap()
}

#[tokio::test]
async fn chat_answers_echo_the_model_and_report_usage() {
    let m = MockUpstream::start();
    let r = post(
        &m,
        "sk-anything",
        "/v1/chat/completions",
        json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["model"], "gpt-4o-mini");
    assert_eq!(v["choices"][0]["message"]["content"], CONTENT);
    assert_eq!(v["usage"]["prompt_tokens"], 11);
    assert_eq!(v["usage"]["completion_tokens"], 7);
    assert_eq!(v["usage"]["total_tokens"], 18);
    assert_eq!(v["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
    assert_eq!(
        v["usage"]["completion_tokens_details"]["reasoning_tokens"],
        0
    );

    let r = post(
        &m,
        "sk-mock-nousage",
        "/v1/chat/completions",
        json!({"model": "x", "messages": []}),
    )
    .await;
    let v: Value = r.json().await.unwrap();
    assert!(v.get("usage").is_none());
    assert_eq!(v["model"], "x");

    let reqs = m.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].authorization, "Bearer sk-anything");
    assert_eq!(reqs[0].body["messages"][0]["content"], "hi");
    assert_eq!(m.count("/v1/chat/completions"), 2);
    assert_eq!(m.count("/v1/embeddings"), 0);
}

#[tokio::test]
async fn chat_stream_sequence_with_and_without_usage() {
    let m = MockUpstream::start();
    let r = post(
        &m,
        "sk-x",
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "stream": true, "stream_options": {"include_usage": true}, "messages": []}),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    // Each event arrives as its own chunk.
    let mut chunks = Vec::new();
    let mut s = r.bytes_stream();
    while let Some(c) = s.next().await {
        chunks.push(String::from_utf8(c.unwrap().to_vec()).unwrap());
    }
    let text = chunks.concat();
    let events = sse_lines(&text);
    assert_eq!(events.len(), 9, "{text}");
    assert_eq!(chunks.len(), 9, "one chunk per event: {chunks:?}");
    assert_eq!(events.last().unwrap(), "data: [DONE]");
    let first = data_json(&events[0]);
    assert_eq!(first["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(first["model"], "gpt-4o");
    let content: Vec<String> = events[1..6]
        .iter()
        .map(|e| {
            data_json(e)["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(content, CONTENT_CHUNKS);
    assert_eq!(data_json(&events[6])["choices"][0]["finish_reason"], "stop");
    let usage = data_json(&events[7]);
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["total_tokens"], 18);

    // Without include_usage: no usage chunk at all.
    let r = post(
        &m,
        "sk-x",
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "stream": true, "messages": []}),
    )
    .await;
    let text = r.text().await.unwrap();
    let events = sse_lines(&text);
    assert_eq!(events.len(), 8);
    assert!(!text.contains("\"usage\""), "{text}");

    // nousage never reports usage, even when asked.
    let r = post(
        &m,
        "sk-mock-nousage",
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "stream": true, "stream_options": {"include_usage": true}, "messages": []}),
    )
    .await;
    let text = r.text().await.unwrap();
    assert_eq!(sse_lines(&text).len(), 8);
    assert!(!text.contains("usage"), "{text}");
}

#[tokio::test]
async fn cut_stream_drops_the_connection_after_two_content_chunks() {
    let m = MockUpstream::start();
    let r = post(
        &m,
        "sk-mock-cut",
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "stream": true, "messages": []}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let mut s = r.bytes_stream();
    let mut text = String::new();
    let mut broke = false;
    while let Some(c) = s.next().await {
        match c {
            Ok(b) => text.push_str(std::str::from_utf8(&b).unwrap()),
            Err(_) => {
                broke = true;
                break;
            }
        }
    }
    assert!(broke, "the body should end with an error: {text}");
    let events = sse_lines(&text);
    assert_eq!(events.len(), 3, "{text}");
    assert!(!text.contains("[DONE]") && !text.contains("usage"));
}

#[tokio::test]
async fn slow_key_spaces_chunks() {
    let m = MockUpstream::start();
    let started = std::time::Instant::now();
    let r = post(
        &m,
        "sk-mock-slow",
        "/v1/chat/completions",
        json!({"model": "gpt-4o", "stream": true, "messages": []}),
    )
    .await;
    let text = r.text().await.unwrap();
    assert_eq!(sse_lines(&text).len(), 8);
    assert!(started.elapsed() >= std::time::Duration::from_millis(7 * 50));
    let started = std::time::Instant::now();
    let r = post(
        &m,
        "sk-mock-slow",
        "/v1/embeddings",
        json!({"model": "e", "input": "x"}),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert!(started.elapsed() >= std::time::Duration::from_millis(200));
}

#[tokio::test]
async fn error_keys() {
    let m = MockUpstream::start();
    let cases = [
        ("sk-mock-401", 401, "invalid_api_key"),
        ("sk-mock-500", 500, ""),
        ("sk-mock-429", 429, "rate_limit_exceeded"),
        ("sk-mock-400", 400, "context_length_exceeded"),
        ("sk-mock-quota", 429, "insufficient_quota"),
    ];
    for (key, status, code) in cases {
        let r = post(
            &m,
            key,
            "/v1/chat/completions",
            json!({"model": "gpt-4o", "messages": []}),
        )
        .await;
        assert_eq!(r.status(), status, "{key}");
        let v: Value = r.json().await.unwrap();
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|s| !s.is_empty()),
            "{key}"
        );
        if !code.is_empty() {
            assert_eq!(v["error"]["code"], code, "{key}");
        }
    }
    let v: Value = post(
        &m,
        "sk-mock-401",
        "/v1/embeddings",
        json!({"model": "e", "input": "x"}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        v,
        json!({"error": {"message": "Incorrect API key provided: sk-mock-***", "type": "invalid_request_error", "code": "invalid_api_key"}})
    );
    let r = post(&m, "sk-x", "/v1/nope", json!({})).await;
    assert_eq!(r.status(), 404);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["type"], "invalid_request_error");
    assert_eq!(m.count("/v1/nope"), 1);
}

#[tokio::test]
async fn other_endpoints() {
    let m = MockUpstream::start();
    // Embeddings, as floats and as base64 little-endian f32.
    let v: Value = post(
        &m,
        "k",
        "/v1/embeddings",
        json!({"model": "text-embedding-3-small", "input": ["a", "b"]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(v["data"].as_array().unwrap().len(), 2);
    let floats: Vec<f32> = v["data"][1]["embedding"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(floats.len(), 8);
    assert_eq!(v["usage"], json!({"prompt_tokens": 6, "total_tokens": 6}));
    let v: Value = post(
        &m,
        "k",
        "/v1/embeddings",
        json!({"model": "m", "input": ["a", "b"], "encoding_format": "base64"}),
    )
    .await
    .json()
    .await
    .unwrap();
    let raw = base64::engine::general_purpose::STANDARD
        .decode(v["data"][1]["embedding"].as_str().unwrap())
        .unwrap();
    assert_eq!(raw.len(), 32);
    let decoded: Vec<f32> = raw
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(decoded, floats);

    // Completions.
    let v: Value = post(
        &m,
        "k",
        "/v1/completions",
        json!({"model": "gpt-3.5-turbo-instruct", "prompt": "x"}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(v["object"], "text_completion");
    assert_eq!(v["choices"][0]["text"], CONTENT);
    assert_eq!(v["usage"]["prompt_tokens"], 5);
    assert_eq!(v["usage"]["completion_tokens"], 7);

    // Moderations, images.
    let v: Value = post(&m, "k", "/v1/moderations", json!({"input": "hello"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["model"], "omni-moderation-latest");
    assert_eq!(v["results"][0]["flagged"], false);
    let v: Value = post(
        &m,
        "k",
        "/v1/images/generations",
        json!({"model": "dall-e-3", "prompt": "a cat"}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(v["data"][0]["url"], "https://images.example.invalid/1.png");
    let v: Value = post(
        &m,
        "k",
        "/v1/images/generations",
        json!({"model": "dall-e-3", "prompt": "a cat", "response_format": "b64_json"}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert!(v["data"][0]["b64_json"].as_str().is_some());

    // Speech.
    let r = post(
        &m,
        "k",
        "/v1/audio/speech",
        json!({"model": "tts-1", "input": "hi", "voice": "alloy"}),
    )
    .await;
    assert_eq!(r.headers()["content-type"], "audio/mpeg");
    assert!(r.bytes().await.unwrap().starts_with(b"ID3"));

    // Transcription (multipart).
    let body = "--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\nContent-Type: audio/mpeg\r\n\r\nID3\r\n--XyZ--\r\n";
    let r = reqwest::Client::new()
        .post(format!("{}/v1/audio/transcriptions", m.base_url))
        .bearer_auth("k")
        .header("content-type", "multipart/form-data; boundary=XyZ")
        .body(body)
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(v, json!({"text": "hello from the mock upstream"}));
    assert_eq!(m.requests().last().unwrap().body, Value::Null);

    // Rerank.
    let v: Value = post(
        &m,
        "k",
        "/v1/rerank",
        json!({"model": "rerank-v1", "query": "q", "documents": ["a", "b", "c"], "top_n": 2}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
    assert!(
        v["results"][0]["relevance_score"].as_f64().unwrap()
            > v["results"][1]["relevance_score"].as_f64().unwrap()
    );
    assert_eq!(v["usage"]["total_tokens"], 10);

    // Models.
    let v: Value = reqwest::Client::new()
        .get(format!("{}/v1/models", m.base_url))
        .bearer_auth("k")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(v["data"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["id"] == "gpt-4o-mini"));
}

#[tokio::test]
async fn responses_plain_and_streamed() {
    let m = MockUpstream::start();
    let v: Value = post(
        &m,
        "k",
        "/v1/responses",
        json!({"model": "gpt-4.1", "input": "hi"}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(v["object"], "response");
    assert_eq!(v["output_text"], CONTENT);
    assert_eq!(v["output"][0]["content"][0]["text"], CONTENT);
    assert_eq!(v["usage"]["input_tokens"], 9);
    assert_eq!(v["usage"]["output_tokens"], 4);
    assert_eq!(v["usage"]["total_tokens"], 13);

    let r = post(
        &m,
        "k",
        "/v1/responses",
        json!({"model": "gpt-4.1", "input": "hi", "stream": true}),
    )
    .await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let text = r.text().await.unwrap();
    let events = sse_lines(&text);
    let names: Vec<&str> = events
        .iter()
        .map(|e| e.lines().next().unwrap().strip_prefix("event: ").unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.completed"
        ]
    );
    let deltas: String = events[1..3]
        .iter()
        .map(|e| data_json(e)["delta"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(deltas, CONTENT);
    let done = data_json(&events[3]);
    assert_eq!(done["type"], "response.completed");
    assert_eq!(done["response"]["usage"]["total_tokens"], 13);
}

async fn post_with(
    m: &MockUpstream,
    path: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> reqwest::Response {
    let mut rb = reqwest::Client::new()
        .post(format!("{}{path}", m.base_url))
        .json(&body);
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    rb.send().await.unwrap()
}

#[tokio::test]
async fn azure_deployment_paths() {
    let m = MockUpstream::start();
    let r = post_with(
        &m,
        "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
        &[("api-key", "az-key")],
        json!({"messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["model"], "gpt-4o", "the deployment names the model");
    assert_eq!(v["choices"][0]["message"]["content"], CONTENT);
    let seen = &m.requests()[0];
    assert_eq!(
        (seen.key.as_str(), seen.query.as_str()),
        ("az-key", "api-version=2024-10-21")
    );
    assert_eq!(MockUpstream::header(seen, "api-key"), Some("az-key"));

    let r = post_with(
        &m,
        "/openai/deployments/gpt-4o/chat/completions",
        &[("api-key", "az-key")],
        json!({"messages": []}),
    )
    .await;
    assert_eq!(r.status(), 404, "no api-version");
    let r = post_with(
        &m,
        "/openai/deployments/emb/embeddings?api-version=2024-10-21",
        &[("api-key", "sk-mock-401")],
        json!({"input": "x"}),
    )
    .await;
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn anthropic_messages_text_tools_stream_and_errors() {
    let m = MockUpstream::start();
    let h = [("x-api-key", "sk-ant"), ("anthropic-version", "2023-06-01")];
    let r = post_with(
        &m,
        "/v1/messages",
        &h,
        json!({"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["content"][0]["text"], CONTENT);
    assert_eq!(v["stop_reason"], "end_turn");
    assert_eq!(v["usage"]["input_tokens"], 11);

    let tools = json!({"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "lookup", "input_schema": {"type": "object"}}]});
    let v: Value = post_with(&m, "/v1/messages", &h, tools.clone())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["content"][0]["type"], "tool_use");
    assert_eq!(v["content"][0]["name"], "lookup");
    assert_eq!(v["stop_reason"], "tool_use");

    let mut stream = tools;
    stream["stream"] = json!(true);
    let text = post_with(&m, "/v1/messages", &h, stream)
        .await
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("input_json_delta") && text.contains("event: message_stop"),
        "{text}"
    );

    let r = post_with(
        &m,
        "/v1/messages",
        &[
            ("x-api-key", "sk-mock-529"),
            ("anthropic-version", "2023-06-01"),
        ],
        json!({"model": "claude-x", "messages": []}),
    )
    .await;
    assert_eq!(r.status(), 529);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["type"], "overloaded_error");
    let r = post_with(&m, "/v1/messages", &[("x-api-key", "k")], json!({})).await;
    assert_eq!(r.status(), 400, "anthropic-version is required");
}

#[tokio::test]
async fn gemini_generate_stream_embed_and_errors() {
    let m = MockUpstream::start();
    let h = [("x-goog-api-key", "AIza")];
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let v: Value = post_with(
        &m,
        "/v1beta/models/gemini-2.0-flash:generateContent",
        &h,
        body.clone(),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(v["candidates"][0]["content"]["parts"][0]["text"], CONTENT);
    assert_eq!(v["usageMetadata"]["candidatesTokenCount"], 7);
    assert_eq!(v["modelVersion"], "gemini-2.0-flash");

    let r = post_with(
        &m,
        "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
        &h,
        body,
    )
    .await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let text = r.text().await.unwrap();
    assert_eq!(text.matches("data: ").count(), CONTENT_CHUNKS.len());
    assert!(text.contains("\"finishReason\":\"STOP\""));

    let v: Value = post_with(
        &m,
        "/v1beta/models/text-embedding-004:batchEmbedContents",
        &h,
        json!({"requests": [{"content": {"parts": [{"text": "a"}]}}, {"content": {"parts": [{"text": "b"}]}, "outputDimensionality": 3}]}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(v["embeddings"].as_array().unwrap().len(), 2);
    assert_eq!(v["embeddings"][1]["values"].as_array().unwrap().len(), 3);

    let r = post_with(
        &m,
        "/v1beta/models/gemini-2.0-flash:generateContent?key=sk-mock-401",
        &[],
        json!({}),
    )
    .await;
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["details"][0]["reason"], "API_KEY_INVALID");
}
