//! The channel settings that change relaying (spec section 3): disabled-streaming models,
//! only-chat, voice mapping, other parameters, region and API version. Each is validated on
//! create and update with its own error code, returned, kept by updates that leave it out, and
//! shown to work through real HTTP to the mock upstream.

use crate::common::TestApp;
use serde_json::{json, Value};
use switchboard_mock_upstream::MockUpstream;

fn body(name: &str, base_url: &str, models: &str, extra: Value) -> Value {
    let mut b = json!({"name": name, "type": 1, "key": format!("sk-{name}"), "base_url": base_url,
        "models": models, "group": "default", "priority": 5});
    for (k, v) in extra.as_object().unwrap() {
        b[k] = v.clone();
    }
    b
}

fn chat(model: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "messages": [{"role": "user", "content": "Say hello"}]})
}

#[actix_web::test]
async fn settings_are_validated_returned_and_kept() {
    let app = TestApp::new().await;
    let root = app.root();
    let url = "https://up.example";
    for (extra, code) in [
        (json!({"disabled_stream": "o1"}), "invalid_disabled_stream"),
        (json!({"disabled_stream": [1]}), "invalid_disabled_stream"),
        (json!({"disabled_stream": ["*"]}), "invalid_disabled_stream"),
        (json!({"config": {"only_chat": "yes"}}), "invalid_only_chat"),
        (
            json!({"config": {"voice_mapping": {"robot": "x"}}}),
            "invalid_voice_mapping",
        ),
        (
            json!({"config": {"voice_mapping": {"alloy": ""}}}),
            "invalid_voice_mapping",
        ),
        (
            json!({"config": {"custom_parameter": [1]}}),
            "invalid_custom_parameter",
        ),
        (
            json!({"config": {"custom_parameter": {"model": "other"}}}),
            "invalid_custom_parameter",
        ),
        (
            json!({"config": {"custom_parameter": {"pad": "x".repeat(5000)}}}),
            "invalid_custom_parameter",
        ),
        (
            json!({"type": 14, "config": {"custom_parameter": {"top_k": 3}}}),
            "invalid_custom_parameter",
        ),
        (
            json!({"type": 3, "config": {"api_version": "latest"}}),
            "invalid_api_version",
        ),
        (
            json!({"type": 42, "key": "{}", "config": {"region": "a.b/"}}),
            "invalid_region",
        ),
    ] {
        let r = root
            .post("/api/channel", body("bad", url, "m1", extra.clone()))
            .await;
        assert_eq!(r.body["success"], false, "{extra}");
        r.err(400, code);
    }

    let r = root
        .post(
            "/api/channel",
            body(
                "good",
                url,
                "o1,gpt-4o",
                json!({"disabled_stream": [" o1 ", "gpt-4*", "o1"],
                    "config": {"only_chat": true, "voice_mapping": {"alloy": "zh-CN-XiaoxiaoNeural"},
                        "custom_parameter": {"temperature": 0.2, "user": null}}}),
            ),
        )
        .await;
    let id = r.ok()["ids"][0].as_i64().unwrap();
    let got = root.get(&format!("/api/channel/{id}")).await;
    let ch = got.ok();
    assert_eq!(ch["disabled_stream"], json!(["o1", "gpt-4*"]));
    assert_eq!(ch["config"]["only_chat"], true);
    assert_eq!(
        ch["config"]["voice_mapping"]["alloy"],
        "zh-CN-XiaoxiaoNeural"
    );
    assert_eq!(
        ch["config"]["custom_parameter"],
        json!({"temperature": 0.2, "user": null})
    );

    // An update that leaves them out keeps them; a bad one changes nothing.
    let r = root
        .put("/api/channel", json!({"id": id, "name": "renamed"}))
        .await;
    assert_eq!(r.ok()["disabled_stream"], json!(["o1", "gpt-4*"]));
    root.put(
        "/api/channel",
        json!({"id": id, "disabled_stream": ["a b"]}),
    )
    .await
    .err(400, "invalid_disabled_stream");
    // Settings that do not move the key: an administrator changes them without a new key.
    let (admin, _) = app.admin("settings-admin").await;
    let r = admin
        .put(
            "/api/channel",
            json!({"id": id, "disabled_stream": [], "config": {"only_chat": false,
                "voice_mapping": {"nova": "nova-2"}, "custom_parameter": {}}}),
        )
        .await;
    let ch = r.ok();
    assert_eq!(ch["disabled_stream"], json!([]));
    assert_eq!(ch["config"]["only_chat"], false);
    assert_eq!(ch["config"]["voice_mapping"], json!({"nova": "nova-2"}));
    // ...but a region (it picks the host) still needs root or a new key.
    admin
        .put(
            "/api/channel",
            json!({"id": id, "config": {"region": "us-east1"}}),
        )
        .await
        .err(403, "destination_needs_root");
}

#[actix_web::test]
async fn a_disabled_streaming_model_skips_the_channel_for_streams_only() {
    let app = TestApp::new().await;
    // The setup's channel (priority 0) serves gpt-4o-mini too.
    let s = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let first = MockUpstream::start();
    app.root()
        .post(
            "/api/channel",
            body(
                "nostream",
                &first.base_url,
                "gpt-4o-mini",
                json!({"disabled_stream": ["gpt-4o-mini"]}),
            ),
        )
        .await
        .ok();

    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini", false))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(first.requests().len(), 1, "non-stream: the higher priority");
    assert!(s.upstream.requests().is_empty());

    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini", true))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(r.body.as_str().unwrap_or_default().contains("data:"));
    assert_eq!(first.requests().len(), 1, "the stream skipped it");
    assert_eq!(s.upstream.requests().len(), 1);
    assert_eq!(s.upstream.requests()[0].body["stream"], true);
}

#[actix_web::test]
async fn an_only_chat_channel_serves_chat_and_nothing_else() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let chatty = MockUpstream::start();
    app.root()
        .post(
            "/api/channel",
            body(
                "chatty",
                &chatty.base_url,
                "gpt-4o-mini,text-embedding-3-small",
                json!({"config": {"only_chat": true}}),
            ),
        )
        .await
        .ok();

    let r = app
        .relay(&s.key, "/v1/chat/completions", chat("gpt-4o-mini", false))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = app
        .relay(
            &s.key,
            "/v1/messages",
            json!({"model": "gpt-4o-mini", "max_tokens": 50,
                "messages": [{"role": "user", "content": "Say hello"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let paths: Vec<String> = chatty.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/chat/completions", "/v1/chat/completions"]);

    let r = app
        .relay(
            &s.key,
            "/v1/embeddings",
            json!({"model": "text-embedding-3-small", "input": "a"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(chatty.requests().len(), 2, "embeddings skipped it");
    let paths: Vec<String> = s.upstream.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/embeddings"]);
}

#[actix_web::test]
async fn voice_mapping_and_other_parameters_reach_the_upstream_body() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(10_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    app.root()
        .post(
            "/api/channel",
            body(
                "tuned",
                &up.base_url,
                "tts-1,gpt-4o-mini",
                json!({"config": {"voice_mapping": {"alloy": "zh-CN-XiaoxiaoNeural"},
                    "custom_parameter": {"temperature": 0.1, "user": null, "safe_prompt": true}}}),
            ),
        )
        .await
        .ok();

    let r = app
        .relay(
            &s.key,
            "/v1/audio/speech",
            json!({"model": "tts-1", "input": "hello", "voice": "alloy"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = app
        .relay(
            &s.key,
            "/v1/audio/speech",
            json!({"model": "tts-1", "input": "hello", "voice": "echo"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let mut chat_body = chat("gpt-4o-mini", false);
    chat_body["temperature"] = json!(1.5);
    chat_body["user"] = json!("end-user-1");
    let r = app.relay(&s.key, "/v1/chat/completions", chat_body).await;
    assert_eq!(r.status, 200, "{:?}", r.body);

    let seen = up.requests();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0].body["voice"], "zh-CN-XiaoxiaoNeural");
    assert_eq!(
        seen[1].body["voice"], "echo",
        "unmapped voices pass as sent"
    );
    assert_eq!(seen[2].path, "/v1/chat/completions");
    let b = &seen[2].body;
    assert_eq!(b["temperature"], 0.1);
    assert_eq!(b["safe_prompt"], true);
    assert!(b.get("user").is_none(), "null removes the client's key");
    assert_eq!(b["model"], "gpt-4o-mini");
    assert_eq!(b["messages"][0]["content"], "Say hello");
}

#[actix_web::test]
async fn an_only_chat_channel_serves_no_realtime_session() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    use tokio_tungstenite::tungstenite::Error as WsError;
    const MODEL: &str = "gpt-4o-realtime-preview";
    let app = TestApp::new().await;
    app.root()
        .post(
            "/api/prices",
            json!({"model": MODEL, "type": "tokens", "channel_type": 1, "input": 2.5, "output": 10}),
        )
        .await
        .ok();
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let r = app
        .root()
        .post(
            "/api/channel",
            body(
                "rt",
                &s.upstream.base_url,
                MODEL,
                json!({"config": {"only_chat": true}}),
            ),
        )
        .await;
    let id = r.ok()["ids"][0].as_i64().unwrap();
    let connect = || async {
        let url = format!(
            "{}/v1/realtime?model={MODEL}",
            app.base.replacen("http://", "ws://", 1)
        );
        let mut request = url.into_client_request().unwrap();
        request.headers_mut().insert(
            "authorization",
            format!("Bearer {}", s.key).parse().unwrap(),
        );
        tokio_tungstenite::connect_async(request).await
    };
    match connect().await {
        Err(WsError::Http(resp)) => assert_eq!(resp.status().as_u16(), 404),
        other => panic!("expected a refused handshake, got {:?}", other.map(|_| ())),
    }
    assert_eq!(s.upstream.count("/v1/realtime"), 0);

    app.root()
        .put(
            "/api/channel",
            json!({"id": id, "config": {"only_chat": false}}),
        )
        .await
        .ok();
    let (ws, _) = connect()
        .await
        .expect("the same channel serves it without only-chat");
    drop(ws);
}

#[actix_web::test]
async fn provider_switches_are_offered_and_refused_by_type() {
    let app = TestApp::new().await;
    let root = app.root();
    let url = "https://up.example";
    // The console's list: only the types with a switch, each with its own.
    let r = root.get("/api/channel/switches").await;
    let list = r.ok().as_array().unwrap().clone();
    let of = |ty: i64| {
        list.iter()
            .find(|x| x["type"] == ty)
            .map(|x| x["switches"].clone())
    };
    assert_eq!(of(25), Some(json!(["web_search", "code_execution"])));
    assert_eq!(of(42), Some(json!(["web_search", "code_execution"])));
    assert_eq!(of(14), Some(json!(["web_search", "code_execution"])));
    assert_eq!(
        of(16),
        Some(json!(["web_search", "knowledge_id", "knowledge_template"]))
    );
    assert_eq!(of(17), Some(json!(["web_search"])));
    assert_eq!(of(20), Some(json!(["web_search", "plugin"])));
    assert_eq!(of(1), None, "OpenAI channels have none");
    assert!(list.iter().all(|x| x["name"].is_string()));
    let (user, _) = app.user("switch-user").await;
    assert_eq!(user.get("/api/channel/switches").await.status, 403);

    for (extra, code) in [
        (
            json!({"config": {"web_search": true}}),
            "invalid_web_search",
        ),
        (
            json!({"type": 17, "config": {"code_execution": true}}),
            "invalid_code_execution",
        ),
        (
            json!({"type": 25, "config": {"web_search": "on"}}),
            "invalid_web_search",
        ),
        (
            json!({"type": 17, "config": {"plugin": {"code_interpreter": {}}}}),
            "invalid_plugin",
        ),
        (
            json!({"type": 20, "config": {"plugin": {"web": true}}}),
            "invalid_plugin",
        ),
        (
            json!({"type": 25, "config": {"knowledge_id": "kb-1"}}),
            "invalid_knowledge",
        ),
        (
            json!({"type": 16, "config": {"knowledge_id": "kb-1", "knowledge_template": "no placeholders"}}),
            "invalid_knowledge",
        ),
    ] {
        let r = root
            .post("/api/channel", body("bad", url, "m1", extra.clone()))
            .await;
        assert_eq!(r.body["success"], false, "{extra}");
        r.err(400, code);
    }

    // Accepted where offered; an administrator toggles them without a new key (they do not
    // move the key), and a type change that leaves one unsupported is refused.
    let r = root
        .post(
            "/api/channel",
            body(
                "zhipu",
                url,
                "glm-4-plus",
                json!({"type": 16, "config": {"web_search": true, "knowledge_id": "kb-1"}}),
            ),
        )
        .await;
    let id = r.ok()["ids"][0].as_i64().unwrap();
    let (admin, _) = app.admin("switch-admin").await;
    let r = admin
        .put(
            "/api/channel",
            json!({"id": id, "config": {"web_search": false, "knowledge_id": "kb-2"}}),
        )
        .await;
    assert_eq!(
        r.ok()["config"],
        json!({"web_search": false, "knowledge_id": "kb-2"})
    );
    root.put(
        "/api/channel",
        json!({"id": id, "type": 17, "key": "sk-new"}),
    )
    .await
    .err(400, "invalid_knowledge");
}

#[actix_web::test]
async fn gemini_switches_reach_the_upstream_as_its_tools() {
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let up = MockUpstream::start();
    app.root()
        .post(
            "/api/channel",
            json!({"name": "gemini-switches", "type": 25, "key": "AIza-ok", "base_url": up.base_url,
                "models": "gemini-2.5-pro", "group": "default",
                "config": {"web_search": true, "code_execution": true}}),
        )
        .await
        .ok();
    let r = app
        .relay(
            &s.key,
            "/v1/chat/completions",
            chat("gemini-2.5-pro", false),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let seen = up.requests();
    assert_eq!(
        seen[0].path,
        "/v1beta/models/gemini-2.5-pro:generateContent"
    );
    assert_eq!(
        seen[0].body["tools"],
        json!([{"googleSearch": {}}, {"codeExecution": {}}])
    );
}

#[actix_web::test]
async fn zhipu_switches_reach_the_upstream_as_its_tools() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let app = TestApp::new().await;
    let s = app
        .relay_setup(1_000_000, json!({"unlimited_quota": true}))
        .await;
    let zhipu = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/paas/v4/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-zhipu", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Hello"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
        })))
        .mount(&zhipu)
        .await;
    app.root()
        .post(
            "/api/channel",
            body(
                "zhipu",
                &zhipu.uri(),
                "gpt-4o-mini",
                json!({"type": 16, "config": {"web_search": true, "knowledge_id": "1748261416034889728",
                    "knowledge_template": "From {{knowledge}} answer {{question}}"}}),
            ),
        )
        .await
        .ok();
    let client_tool = json!({"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {}}}});
    let mut req = chat("gpt-4o-mini", false);
    req["tools"] = json!([client_tool.clone()]);
    let r = app.relay(&s.key, "/v1/chat/completions", req).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["choices"][0]["message"]["content"], "Hello");
    assert!(
        s.upstream.requests().is_empty(),
        "the Zhipu channel (priority 5) served it"
    );

    let seen = zhipu.received_requests().await.unwrap();
    assert_eq!(seen.len(), 1);
    let sent: Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(
        sent["tools"],
        json!([
            client_tool,
            {"type": "web_search", "web_search": {"enable": true}},
            {"type": "retrieval", "retrieval": {"knowledge_id": "1748261416034889728",
                "prompt_template": "From {{knowledge}} answer {{question}}"}}
        ])
    );
    assert_eq!(sent["messages"][0]["content"], "Say hello");
}
