//! The provider switches of a channel (`config.web_search`, `config.code_execution`,
//! `config.plugin`, `config.knowledge_id`, `config.knowledge_template`; validated, and offered
//! per channel type, by `switchboard_domain::channel_settings`) written as the request fields
//! each provider reads. The mapping lives here, once; each family's body builder calls it for
//! its own shape:
//!
//! | channel type | switch | upstream request |
//! |---|---|---|
//! | Zhipu (16) | `web_search` | `tools += {"type":"web_search","web_search":{"enable":true}}` |
//! | Zhipu (16) | `knowledge_id` (+ `knowledge_template`) | `tools += {"type":"retrieval","retrieval":{"knowledge_id","prompt_template"}}` |
//! | Ali DashScope (17) | `web_search` | `"enable_search": true` |
//! | OpenRouter (20) | `web_search` | `tools += {"type":"openrouter:web_search"}` |
//! | OpenRouter (20) | `plugin` `{id: options}` | `plugins += {"id": id, ...options}` |
//! | Anthropic (14) | `web_search` | `tools += {"type":"web_search_20250305","name":"web_search"}` |
//! | Anthropic (14) | `code_execution` | `tools += {"type":"code_execution_20250825","name":"code_execution"}` and `anthropic-beta: code-execution-2025-08-25` |
//! | Gemini (25), Vertex AI Gemini models (42) | `web_search` | `tools += {"googleSearch":{}}` |
//! | Gemini (25), Vertex AI Gemini models (42) | `code_execution` | `tools += {"codeExecution":{}}` |
//!
//! Rules shared by all of them:
//! - Only chat requests get them: chat completions (and Anthropic Messages clients on
//!   OpenAI-compatible channels, which are sent as chat completions); Gemini channels also add
//!   them to the generateContent bodies of Gemini-protocol clients (`/gemini/...`). Anthropic
//!   Messages clients on Anthropic channels are passed through as they are (they name server
//!   tools themselves).
//! - The client's own tools (and OpenRouter `plugins`) stay as sent, in their order; the
//!   channel's are appended, unless the client already sent the same one (same tool type, or
//!   for Anthropic the same tool name, which must be unique).
//! - A switch that is off or absent, or that the channel's type does not support, changes
//!   nothing: the body is the one built without switches.
//! - The channel's other parameters (`config.custom_parameter`) are applied last: a key they set
//!   replaces the switches' value for that key.
//! - Gemini refuses its built-in tools beside function declarations, and beside a JSON
//!   `responseMimeType`: a request carrying either is sent without the switches' tools. An
//!   Anthropic request whose `tool_choice` forces one tool (a client's forced function, or the
//!   forced tool of `response_format`) is sent without them too (the model could not use them).

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{json, Map, Value};
use switchboard_domain::channel::{TYPE_ALI, TYPE_OPENROUTER, TYPE_ZHIPU};
use switchboard_domain::channel_settings::{
    supports_switch, CODE_EXECUTION_KEY, KNOWLEDGE_ID_KEY, KNOWLEDGE_TEMPLATE_KEY, PLUGIN_KEY,
    WEB_SEARCH_KEY,
};

use crate::endpoint::Endpoint;
use crate::provider::ChannelTarget;
use crate::wire::anthropic::{RequestBody, RequestTool};

/// Anthropic's web search server tool (`type`, and the `name` the API requires for it).
pub const ANTHROPIC_WEB_SEARCH: (&str, &str) = ("web_search_20250305", "web_search");
/// Anthropic's code execution server tool (`type`, `name`).
pub const ANTHROPIC_CODE_EXECUTION: (&str, &str) = ("code_execution_20250825", "code_execution");
/// The `anthropic-beta` flag Anthropic's code execution tool needs.
pub const ANTHROPIC_CODE_EXECUTION_BETA: &str = "code-execution-2025-08-25";
/// OpenRouter's web search server tool type.
pub const OPENROUTER_WEB_SEARCH: &str = "openrouter:web_search";
/// OpenRouter's (older) web search plugin id: a request with it searches already.
const OPENROUTER_WEB_PLUGIN: &str = "web";

/// Whether the boolean switch `key` is on for the channel (and its type supports it).
pub fn is_on(target: &ChannelTarget, key: &str) -> bool {
    supports_switch(target.channel_type, key) && target.config.get(key) == Some(&Value::Bool(true))
}

/// The channel's plugins (`config.plugin`, plugin id -> options), when it has any and its type
/// takes them.
pub fn plugins(target: &ChannelTarget) -> Option<&Map<String, Value>> {
    if !supports_switch(target.channel_type, PLUGIN_KEY) {
        return None;
    }
    target
        .config
        .get(PLUGIN_KEY)?
        .as_object()
        .filter(|m| !m.is_empty())
}

/// The channel's knowledge base: its id and prompt template (`config.knowledge_id`,
/// `config.knowledge_template`), when it has one and its type takes it.
pub fn knowledge(target: &ChannelTarget) -> Option<(&str, Option<&str>)> {
    if !supports_switch(target.channel_type, KNOWLEDGE_ID_KEY) {
        return None;
    }
    let id = target.config_str(KNOWLEDGE_ID_KEY)?;
    Some((id, target.config_str(KNOWLEDGE_TEMPLATE_KEY)))
}

/// The client's list at `key` with `ours` appended: `None` when there is nothing to append, or
/// when the client's value is neither a list nor null (it is sent as it is, for the upstream
/// to refuse, rather than silently replaced).
fn appended(existing: Option<&Value>, ours: Vec<Value>) -> Option<Value> {
    if ours.is_empty() {
        return None;
    }
    match existing {
        None | Some(Value::Null) => Some(Value::Array(ours)),
        Some(Value::Array(items)) => {
            let mut all = items.clone();
            all.extend(ours);
            Some(Value::Array(all))
        }
        Some(_) => None,
    }
}

/// The items of the list at `key` of `obj` (none when absent or not a list).
fn items<'a>(obj: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    obj.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Whether a list of OpenAI-shaped tools has one of type `kind`.
fn has_tool_type(tools: &[Value], kind: &str) -> bool {
    tools
        .iter()
        .any(|t| t.get("type").and_then(Value::as_str) == Some(kind))
}

/// The body keys the switches set on an OpenAI-shaped request to an OpenAI-compatible channel
/// (Zhipu, Ali DashScope, OpenRouter), each with its whole new value (lists: the client's items
/// then the channel's). Empty for other endpoints than chat completions, other types, and when
/// every switch is off.
pub fn openai_fields(
    target: &ChannelTarget,
    endpoint: Endpoint,
    obj: &Map<String, Value>,
) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    if endpoint != Endpoint::ChatCompletions {
        return out;
    }
    let client_tools = items(obj, "tools");
    let mut tools = Vec::new();
    match target.channel_type {
        TYPE_ZHIPU => {
            if is_on(target, WEB_SEARCH_KEY) && !has_tool_type(client_tools, "web_search") {
                tools.push(json!({"type": "web_search", "web_search": {"enable": true}}));
            }
            if let Some((id, template)) = knowledge(target) {
                if !has_tool_type(client_tools, "retrieval") {
                    let mut retrieval = Map::new();
                    retrieval.insert("knowledge_id".into(), json!(id));
                    if let Some(t) = template {
                        retrieval.insert("prompt_template".into(), json!(t));
                    }
                    tools.push(json!({"type": "retrieval", "retrieval": retrieval}));
                }
            }
        }
        TYPE_ALI if is_on(target, WEB_SEARCH_KEY) => {
            out.push(("enable_search", Value::Bool(true)));
        }
        TYPE_OPENROUTER => {
            let client_plugins = items(obj, "plugins");
            let has_plugin = |id: &str| {
                client_plugins
                    .iter()
                    .any(|p| p.get("id").and_then(Value::as_str) == Some(id))
            };
            let mut ours = Vec::new();
            let mut web_plugin = has_plugin(OPENROUTER_WEB_PLUGIN);
            for (id, options) in plugins(target).into_iter().flatten() {
                if has_plugin(id) {
                    continue;
                }
                let mut entry = Map::new();
                entry.insert("id".into(), json!(id));
                for (k, v) in options.as_object().into_iter().flatten() {
                    if k != "id" {
                        entry.insert(k.clone(), v.clone());
                    }
                }
                web_plugin |= id == OPENROUTER_WEB_PLUGIN;
                ours.push(Value::Object(entry));
            }
            if let Some(v) = appended(obj.get("plugins"), ours) {
                out.push(("plugins", v));
            }
            if is_on(target, WEB_SEARCH_KEY)
                && !web_plugin
                && !has_tool_type(client_tools, OPENROUTER_WEB_SEARCH)
            {
                tools.push(json!({"type": OPENROUTER_WEB_SEARCH}));
            }
        }
        _ => {}
    }
    if let Some(v) = appended(obj.get("tools"), tools) {
        out.push(("tools", v));
    }
    out
}

/// Whether a Gemini tool (a `Tool` object) has the member `camel` (or its snake_case spelling
/// `snake`, which Gemini's JSON also reads).
fn gemini_tool_has(tool: &Value, camel: &str, snake: &str) -> bool {
    tool.get(camel).or_else(|| tool.get(snake)).is_some()
}

/// The `tools` of a Gemini client's `generateContent` body with the switches' tools appended
/// ([`gemini_builtin_tools`], each unless the body has it already). `None` when nothing is
/// added, which includes a body that declares functions (Gemini refuses built-in tools beside
/// function calling) or asks for a JSON `responseMimeType` (refused beside tools too).
pub fn gemini_tools(target: &ChannelTarget, body: &Map<String, Value>) -> Option<Value> {
    if !is_on(target, WEB_SEARCH_KEY) && !is_on(target, CODE_EXECUTION_KEY) {
        return None;
    }
    let tools = items(body, "tools");
    let declares_functions = tools.iter().any(|t| {
        t.get("functionDeclarations")
            .or_else(|| t.get("function_declarations"))
            .and_then(Value::as_array)
            .is_some_and(|d| !d.is_empty())
    });
    let config = body
        .get("generationConfig")
        .or_else(|| body.get("generation_config"));
    let json_answer = config
        .and_then(|c| {
            c.get("responseMimeType")
                .or_else(|| c.get("response_mime_type"))
        })
        .and_then(Value::as_str)
        .is_some_and(|m| m != "text/plain");
    if declares_functions || json_answer {
        return None;
    }
    let ours = gemini_builtin_tools(target, |camel, snake| {
        tools.iter().any(|t| gemini_tool_has(t, camel, snake))
    });
    appended(body.get("tools"), ours)
}

/// The Gemini built-in tools of the switches that are on: `{"googleSearch": {}}` for web
/// search and `{"codeExecution": {}}` for code execution, each unless `has(camelCase,
/// snake_case)` says the request has that tool already. For a chat request translated to
/// Gemini they are its tools when it declares no function and asks for no JSON answer (which
/// Gemini refuses beside them); for a Gemini client's body see [`gemini_tools`].
pub fn gemini_builtin_tools(
    target: &ChannelTarget,
    has: impl Fn(&str, &str) -> bool,
) -> Vec<Value> {
    let mut ours = Vec::new();
    if is_on(target, WEB_SEARCH_KEY) && !has("googleSearch", "google_search") {
        ours.push(json!({"googleSearch": {}}));
    }
    if is_on(target, CODE_EXECUTION_KEY) && !has("codeExecution", "code_execution") {
        ours.push(json!({"codeExecution": {}}));
    }
    ours
}

/// Adds the switches' server tools to an Anthropic Messages request translated from chat: web
/// search ([`ANTHROPIC_WEB_SEARCH`]) and code execution ([`ANTHROPIC_CODE_EXECUTION`]), each
/// unless a tool of that name (or type) is there already. Nothing is added when `tool_choice`
/// forces one tool. Returns the `anthropic-beta` flag the request then needs, if any.
pub fn apply_anthropic(target: &ChannelTarget, body: &mut RequestBody<'_>) -> Option<&'static str> {
    let search = is_on(target, WEB_SEARCH_KEY);
    let code = is_on(target, CODE_EXECUTION_KEY);
    if !search && !code {
        return None;
    }
    if body.tool_choice.as_ref().is_some_and(|c| c.kind == "tool") {
        return None;
    }
    let present = |(kind, name): (&str, &str)| body.tools.iter().any(|t| t.is(kind, name));
    let search = search && !present(ANTHROPIC_WEB_SEARCH);
    let code = code && !present(ANTHROPIC_CODE_EXECUTION);
    let server_tool = |(kind, name)| RequestTool::Server { name, kind };
    if search {
        body.tools.push(server_tool(ANTHROPIC_WEB_SEARCH));
    }
    if code {
        body.tools.push(server_tool(ANTHROPIC_CODE_EXECUTION));
        return Some(ANTHROPIC_CODE_EXECUTION_BETA);
    }
    None
}

/// Adds `flag` to the request's `anthropic-beta` header (a comma-separated list), keeping the
/// flags already there (the channel's custom header of that name included).
pub fn add_anthropic_beta(headers: &mut HeaderMap, flag: &str) {
    let current = headers
        .get("anthropic-beta")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .unwrap_or_default();
    if current.split(',').any(|f| f.trim() == flag) {
        return;
    }
    let value = if current.is_empty() {
        flag.to_owned()
    } else {
        format!("{current},{flag}")
    };
    if let Ok(v) = HeaderValue::from_str(&value) {
        headers.insert("anthropic-beta", v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::anthropic::RequestToolChoice;

    fn target(channel_type: i32, config: Value) -> ChannelTarget {
        ChannelTarget {
            channel_type,
            config: config.as_object().cloned().unwrap_or_default(),
            ..ChannelTarget::default()
        }
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    /// A Gemini client's body with the switches' tools, as the Gemini adapter sends it.
    fn apply_gemini(target: &ChannelTarget, body: &mut Map<String, Value>) {
        if let Some(tools) = gemini_tools(target, body) {
            body.insert("tools".into(), tools);
        }
    }

    /// A client's function as a translated Messages request holds it.
    fn function<'a>(name: &'a Value, schema: &'a Value) -> RequestTool<'a> {
        RequestTool::Function {
            description: None,
            input_schema: Some(schema),
            name: Some(name),
        }
    }

    fn json_of(body: &RequestBody<'_>) -> Value {
        serde_json::to_value(body).unwrap_or_default()
    }

    fn fields(t: &ChannelTarget, body: Value) -> Value {
        Value::Object(
            openai_fields(t, Endpoint::ChatCompletions, &obj(body))
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    #[test]
    fn switches_off_or_unsupported_change_nothing() {
        let chat = json!({"model": "m", "messages": [], "tools": [{"type": "function"}]});
        for t in [
            target(16, json!({})),
            target(16, json!({"web_search": false, "knowledge_id": ""})),
            target(17, json!({"web_search": false})),
            target(20, json!({"plugin": {}})),
            // Types without the switch (a stale config) get nothing either.
            target(1, json!({"web_search": true, "plugin": {"web": {}}})),
            target(28, json!({"knowledge_id": "kb"})),
            target(17, json!({"code_execution": true, "plugin": {"x": {}}})),
        ] {
            assert_eq!(fields(&t, chat.clone()), json!({}), "{:?}", t.config);
        }
        // Other endpoints than chat completions.
        let t = target(17, json!({"web_search": true}));
        assert!(openai_fields(&t, Endpoint::Embeddings, &obj(json!({"input": "a"}))).is_empty());
        assert!(openai_fields(&t, Endpoint::Responses, &obj(json!({}))).is_empty());

        for ty in [25, 42] {
            let mut body = obj(json!({"contents": []}));
            apply_gemini(&target(ty, json!({"web_search": false})), &mut body);
            assert_eq!(body, obj(json!({"contents": []})));
        }
        let (f, schema) = (json!("f"), json!({}));
        let mut body = RequestBody {
            tools: vec![function(&f, &schema)],
            ..RequestBody::default()
        };
        let before = json_of(&body);
        assert_eq!(
            apply_anthropic(&target(14, json!({"code_execution": false})), &mut body),
            None
        );
        assert_eq!(json_of(&body), before);
    }

    #[test]
    fn zhipu_web_search_and_knowledge_are_tools() {
        let t = target(
            16,
            json!({"web_search": true, "knowledge_id": "1748261416034889728",
                "knowledge_template": "From {{knowledge}} answer {{question}}"}),
        );
        let client_tool = json!({"type": "function", "function": {"name": "f"}});
        let got = fields(&t, json!({"messages": [], "tools": [client_tool.clone()]}));
        assert_eq!(
            got,
            json!({"tools": [
                client_tool,
                {"type": "web_search", "web_search": {"enable": true}},
                {"type": "retrieval", "retrieval": {"knowledge_id": "1748261416034889728",
                    "prompt_template": "From {{knowledge}} answer {{question}}"}}
            ]})
        );
        // Without a template, and without client tools.
        let t = target(16, json!({"knowledge_id": "kb-1"}));
        assert_eq!(
            fields(&t, json!({"messages": []})),
            json!({"tools": [{"type": "retrieval", "retrieval": {"knowledge_id": "kb-1"}}]})
        );
        // The client's own web_search tool is kept and not doubled.
        let t = target(16, json!({"web_search": true}));
        let mine = json!({"type": "web_search", "web_search": {"enable": true, "search_engine": "search_pro"}});
        assert_eq!(
            fields(&t, json!({"messages": [], "tools": [mine]})),
            json!({})
        );
        // A malformed client value is left for the upstream to refuse.
        assert_eq!(fields(&t, json!({"messages": [], "tools": "x"})), json!({}));
    }

    #[test]
    fn ali_web_search_is_enable_search() {
        let t = target(17, json!({"web_search": true}));
        assert_eq!(
            fields(&t, json!({"messages": [], "enable_search": false})),
            json!({"enable_search": true})
        );
    }

    #[test]
    fn openrouter_web_search_and_plugins() {
        let t = target(
            20,
            json!({"web_search": true, "plugin": {"file-parser": {"pdf": {"engine": "pdf-text"}},
                "response-healing": {}}}),
        );
        let client_plugin = json!({"id": "response-healing", "enabled": false});
        let got = fields(
            &t,
            json!({"messages": [], "plugins": [client_plugin.clone()], "tools": [{"type": "function"}]}),
        );
        assert_eq!(
            got,
            json!({
                "plugins": [client_plugin, {"id": "file-parser", "pdf": {"engine": "pdf-text"}}],
                "tools": [{"type": "function"}, {"type": "openrouter:web_search"}]
            }),
            "the client's plugin of the same id wins"
        );
        // The web plugin (the client's or the channel's) searches already.
        let t = target(
            20,
            json!({"web_search": true, "plugin": {"web": {"max_results": 3}}}),
        );
        assert_eq!(
            fields(&t, json!({"messages": []})),
            json!({"plugins": [{"id": "web", "max_results": 3}]})
        );
        let t = target(20, json!({"web_search": true}));
        assert_eq!(
            fields(&t, json!({"messages": [], "plugins": [{"id": "web"}]})),
            json!({})
        );
        assert_eq!(
            fields(
                &t,
                json!({"messages": [], "tools": [{"type": "openrouter:web_search"}]})
            ),
            json!({})
        );
    }

    #[test]
    fn gemini_search_and_code_execution_tools() {
        for ty in [25, 42] {
            let t = target(ty, json!({"web_search": true, "code_execution": true}));
            let mut body = obj(json!({"contents": []}));
            apply_gemini(&t, &mut body);
            assert_eq!(
                body["tools"],
                json!([{"googleSearch": {}}, {"codeExecution": {}}])
            );
        }
        let t = target(25, json!({"web_search": true, "code_execution": true}));
        // A Gemini client's own search tool (either spelling) is kept, not doubled.
        let mut body = obj(json!({"contents": [], "tools": [{"google_search": {}}]}));
        apply_gemini(&t, &mut body);
        assert_eq!(
            body["tools"],
            json!([{"google_search": {}}, {"codeExecution": {}}])
        );
        // Function declarations, or a JSON answer: Gemini refuses built-in tools beside them.
        for refused in [
            json!({"contents": [], "tools": [{"functionDeclarations": [{"name": "f"}]}]}),
            json!({"contents": [], "generationConfig": {"responseMimeType": "application/json"}}),
        ] {
            let mut body = obj(refused.clone());
            apply_gemini(&t, &mut body);
            assert_eq!(body, obj(refused));
        }
        // Only the switch that is on.
        let mut body = obj(json!({"contents": []}));
        apply_gemini(&target(25, json!({"code_execution": true})), &mut body);
        assert_eq!(body["tools"], json!([{"codeExecution": {}}]));
    }

    #[test]
    fn anthropic_server_tools_and_beta() {
        let t = target(14, json!({"web_search": true, "code_execution": true}));
        let mine = json!({"name": "get_weather", "input_schema": {"type": "object"}});
        let tool = || function(&mine["name"], &mine["input_schema"]);
        let mut body = RequestBody {
            tools: vec![tool()],
            ..RequestBody::default()
        };
        assert_eq!(
            apply_anthropic(&t, &mut body),
            Some("code-execution-2025-08-25")
        );
        assert_eq!(
            json_of(&body)["tools"],
            json!([mine,
                {"type": "web_search_20250305", "name": "web_search"},
                {"type": "code_execution_20250825", "name": "code_execution"}])
        );
        // Web search alone needs no beta flag; a client function named web_search keeps its
        // name (tool names are unique).
        let t = target(14, json!({"web_search": true}));
        let mut body = RequestBody::default();
        assert_eq!(apply_anthropic(&t, &mut body), None);
        assert_eq!(
            json_of(&body)["tools"],
            json!([{"type": "web_search_20250305", "name": "web_search"}])
        );
        let (name, schema) = (json!("web_search"), json!({}));
        let mut body = RequestBody {
            tools: vec![function(&name, &schema)],
            ..RequestBody::default()
        };
        let clash = json_of(&body);
        apply_anthropic(&t, &mut body);
        assert_eq!(json_of(&body), clash);
        // A forced tool: nothing added.
        let mut body = RequestBody {
            tools: vec![tool()],
            tool_choice: Some(RequestToolChoice::tool("get_weather")),
            ..RequestBody::default()
        };
        let forced = json_of(&body);
        apply_anthropic(
            &target(14, json!({"web_search": true, "code_execution": true})),
            &mut body,
        );
        assert_eq!(json_of(&body), forced);
    }

    #[test]
    fn beta_flags_are_merged() {
        let mut h = HeaderMap::new();
        add_anthropic_beta(&mut h, "code-execution-2025-08-25");
        assert_eq!(h["anthropic-beta"], "code-execution-2025-08-25");
        add_anthropic_beta(&mut h, "code-execution-2025-08-25");
        assert_eq!(h["anthropic-beta"], "code-execution-2025-08-25");
        let mut h = HeaderMap::new();
        h.insert(
            "anthropic-beta",
            HeaderValue::from_static("context-1m-2025-08-07"),
        );
        add_anthropic_beta(&mut h, "code-execution-2025-08-25");
        assert_eq!(
            h["anthropic-beta"],
            "context-1m-2025-08-07,code-execution-2025-08-25"
        );
    }
}
