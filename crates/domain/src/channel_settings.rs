//! The channel settings that change how a channel relays (spec section 3, "Channel"), beyond
//! address, key, models and mapping. All but one live in the channel's `config` object:
//!
//! | setting | where | meaning |
//! |---|---|---|
//! | disabled-streaming models | `disabled_stream` column, a JSON list of model names (`prefix*` allowed) | a stream request for such a (requested) model skips the channel; a non-stream request still uses it |
//! | only-chat | `config.only_chat` (boolean) | the channel serves chat only: `/v1/chat/completions`, and Anthropic Messages and Gemini generateContent clients (translated onto chat); every other endpoint and realtime skip it |
//! | voice mapping | `config.voice_mapping` (object) | on `/v1/audio/speech`, the client's `voice` (one of [`TTS_VOICES`]) is replaced by the upstream's voice name |
//! | other parameters | `config.custom_parameter` (object) | each top-level key is set in the upstream JSON body, replacing the client's value; `null` removes the key; not applied to multipart bodies; the keys of [`RESERVED_PARAMETERS`] are refused |
//! | API version | `config.api_version` | Azure OpenAI's `api-version` query parameter |
//! | region | `config.region` | Vertex AI's region (the host is built from it) |
//! | Responses API | `config.responses`, `"native"` or `"chat"` | how `/v1/responses` is served: passed to the upstream's own Responses API, or bridged onto chat completions; unset: native for OpenAI, bridged for every other type ([`responses_native_by_default`]) |
//! | provider switches | `config.web_search`, `config.code_execution` (booleans), `config.plugin` (object), `config.knowledge_id`, `config.knowledge_template` (strings) | the provider's own search, code execution, plugin and knowledge-base fields, added to chat requests; each only for the types of [`switches_for`] |
//!
//! Voice mapping and other parameters rewrite OpenAI-shaped JSON bodies, so they are accepted only
//! for the types served by the OpenAI-compatible and Azure adapters ([`speaks_openai`]).
//!
//! The provider switches are offered only where the provider really has the feature behind a
//! request field (`docs/providers.md` lists what each becomes); `switchboard_relay::switches`
//! writes the fields.

use crate::channel::{
    channel_type, is_region_name, validate_azure_api_version, validate_model_name,
    AZURE_API_VERSION_KEY, CHANNEL_TYPES, TYPE_ALI, TYPE_ANTHROPIC, TYPE_AZURE, TYPE_GEMINI,
    TYPE_MIDJOURNEY, TYPE_OPENROUTER, TYPE_SUNO, TYPE_VERTEX_AI, TYPE_ZHIPU,
};
use crate::DomainError;
use crate::ErrorCode;
use serde_json::{Map, Value};

/// `config` key: the channel serves chat only (boolean).
pub const ONLY_CHAT_KEY: &str = "only_chat";
/// `config` key: the TTS voice mapping (object of voice -> upstream voice).
pub const VOICE_MAPPING_KEY: &str = "voice_mapping";
/// `config` key: the other parameters set in the upstream JSON body (object).
pub const CUSTOM_PARAMETER_KEY: &str = "custom_parameter";
/// `config` key: the cloud region (Vertex AI).
pub const REGION_KEY: &str = "region";
/// `config` key: how `/v1/responses` is served (`"native"` or `"chat"`).
pub const RESPONSES_KEY: &str = "responses";
/// `config.responses`: passed to the upstream's own Responses API.
pub const RESPONSES_NATIVE: &str = "native";
/// `config.responses`: bridged onto chat completions.
pub const RESPONSES_CHAT: &str = "chat";
/// `config` key: turn on the provider's web search for chat requests (boolean).
pub const WEB_SEARCH_KEY: &str = "web_search";
/// `config` key: turn on the provider's code execution for chat requests (boolean).
pub const CODE_EXECUTION_KEY: &str = "code_execution";
/// `config` key: the provider plugins added to chat requests (object of plugin id -> options).
pub const PLUGIN_KEY: &str = "plugin";
/// `config` key: the provider knowledge base searched for chat requests (string id).
pub const KNOWLEDGE_ID_KEY: &str = "knowledge_id";
/// `config` key: the prompt template of that knowledge base (string).
pub const KNOWLEDGE_TEMPLATE_KEY: &str = "knowledge_template";
/// Every provider switch, in the order a form shows them.
/// `config.anthropic_beta`: `{"add": [flag, ...], "remove": [flag or prefix*, ...]}`, the
/// `anthropic-beta` flags a channel of Anthropic's protocol (Anthropic, Bedrock, Vertex AI)
/// sends beside the client's own (`remove: ["*"]`: none of the client's).
pub const ANTHROPIC_BETA_KEY: &str = "anthropic_beta";
/// The most flags in either list of [`ANTHROPIC_BETA_KEY`].
pub const ANTHROPIC_BETA_MAX: usize = 32;
/// The channel types whose upstream takes `anthropic-beta` flags.
pub const ANTHROPIC_BETA_TYPES: [i32; 3] = [
    crate::channel::TYPE_ANTHROPIC,
    crate::channel::TYPE_AWS_BEDROCK,
    crate::channel::TYPE_VERTEX_AI,
];
pub const SWITCHES: [&str; 5] = [
    WEB_SEARCH_KEY,
    CODE_EXECUTION_KEY,
    PLUGIN_KEY,
    KNOWLEDGE_ID_KEY,
    KNOWLEDGE_TEMPLATE_KEY,
];
/// Largest plugin object, as compact JSON.
pub const PLUGIN_MAX_BYTES: usize = 4096;
/// Longest plugin id.
pub const PLUGIN_ID_MAX: usize = 64;
/// Longest knowledge-base id.
pub const KNOWLEDGE_ID_MAX: usize = 128;
/// Longest knowledge-base prompt template, in characters.
pub const KNOWLEDGE_TEMPLATE_MAX: usize = 4000;
/// The placeholders a knowledge-base prompt template must contain (Zhipu replaces them with the
/// retrieved passages and the user's question; without them one of the two is lost).
pub const KNOWLEDGE_PLACEHOLDERS: [&str; 2] = ["{{knowledge}}", "{{question}}"];

/// The voices of OpenAI's `/v1/audio/speech` a channel may map (spec section 3).
pub const TTS_VOICES: [&str; 6] = ["alloy", "echo", "fable", "onyx", "nova", "shimmer"];
/// Longest upstream voice name.
pub const VOICE_NAME_MAX: usize = 100;
/// Largest other-parameters object, as compact JSON.
pub const CUSTOM_PARAMETER_MAX_BYTES: usize = 4096;
/// Body keys the other parameters may not set: they decide routing, billing and whether the
/// answer streams, which the relay has already settled from the client's request (the output
/// limits and `n` size the reservation, and the balance rule lowers the output limits).
pub const RESERVED_PARAMETERS: [&str; 7] = [
    "model",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "max_output_tokens",
    "n",
];
/// Most entries of the disabled-streaming list.
pub const DISABLED_STREAM_MAX: usize = 200;

/// Whether requests to channels of this type are OpenAI-shaped JSON bodies that the relay sends
/// as they came (the OpenAI-compatible adapter and Azure), so that voice mapping and other
/// parameters can rewrite them.
pub fn speaks_openai(channel_type_id: i32) -> bool {
    channel_type_id == TYPE_AZURE
        || channel_type(channel_type_id).is_some_and(|t| t.openai_compatible)
}

/// Whether `/v1/responses` goes to the upstream's own Responses API when the channel does not
/// say (`config.responses`): only for OpenAI; every other type is bridged onto chat completions
/// (Azure deployments, Anthropic, Gemini, and the OpenAI-compatible vendors without a Responses
/// API, such as DeepSeek, Ollama or vLLM).
pub fn responses_native_by_default(channel_type_id: i32) -> bool {
    channel_type_id == crate::channel::TYPE_OPENAI
}

/// Whether a channel of this type serves chat at all (only-chat makes no sense elsewhere).
pub fn serves_chat(channel_type_id: i32) -> bool {
    !matches!(
        channel_type_id,
        TYPE_MIDJOURNEY | TYPE_SUNO | crate::channel::TYPE_KLING
    )
}

/// The provider switches ([`SWITCHES`]) a channel type supports, i.e. the ones whose provider
/// has the feature behind a field of its chat request (`docs/providers.md` says which):
///
/// - Anthropic: `web_search` (the web search server tool), `code_execution` (the code execution
///   server tool);
/// - Google Gemini and Vertex AI (Gemini models): `web_search` (`googleSearch`),
///   `code_execution` (`codeExecution`);
/// - Zhipu: `web_search` (the `web_search` tool), `knowledge_id` and `knowledge_template` (the
///   `retrieval` tool);
/// - Ali DashScope: `web_search` (`enable_search`);
/// - OpenRouter: `web_search` (the `openrouter:web_search` server tool), `plugin` (`plugins`).
///
/// Every other type supports none (an empty slice).
pub fn switches_for(channel_type_id: i32) -> &'static [&'static str] {
    match channel_type_id {
        TYPE_ANTHROPIC | TYPE_GEMINI | TYPE_VERTEX_AI => &[WEB_SEARCH_KEY, CODE_EXECUTION_KEY],
        TYPE_ZHIPU => &[WEB_SEARCH_KEY, KNOWLEDGE_ID_KEY, KNOWLEDGE_TEMPLATE_KEY],
        TYPE_ALI => &[WEB_SEARCH_KEY],
        TYPE_OPENROUTER => &[WEB_SEARCH_KEY, PLUGIN_KEY],
        _ => &[],
    }
}

/// Whether channels of this type support the provider switch `key` (see [`switches_for`]).
pub fn supports_switch(channel_type_id: i32, key: &str) -> bool {
    switches_for(channel_type_id).contains(&key)
}

/// The names of the channel types that support the switch `key`, for refusals.
fn types_with(key: &str) -> String {
    CHANNEL_TYPES
        .iter()
        .filter(|t| supports_switch(t.id, key))
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks the known settings of a channel's `config` object (already trimmed); other keys are
/// left alone. Each refusal has its own code: `invalid_region`, `invalid_api_version`,
/// `invalid_only_chat`, `invalid_responses`, `invalid_voice_mapping`, `invalid_custom_parameter`, and for the
/// provider switches `invalid_web_search`, `invalid_code_execution`, `invalid_plugin`,
/// `invalid_knowledge`, and `invalid_anthropic_beta`. A switch that is off (`false`, `{}`, `""`) is accepted on every type;
/// one that is on only on the types of [`switches_for`].
pub fn validate_config(
    channel_type_id: i32,
    config: &Map<String, Value>,
) -> Result<(), DomainError> {
    if let Some(v) = config.get(REGION_KEY) {
        if !v.as_str().is_some_and(is_region_name) {
            return Err(DomainError::invalid_coded(
                ErrorCode::InvalidRegion,
                "config",
                "region must be a region name (letters, digits and -)",
            ));
        }
    }
    if let Some(v) = config.get(AZURE_API_VERSION_KEY) {
        // A non-string is refused like a badly formed string.
        validate_azure_api_version(v.as_str().unwrap_or_default())?;
    }
    if let Some(v) = config.get(ONLY_CHAT_KEY) {
        let bad = |reason: &str| {
            DomainError::invalid_coded(ErrorCode::InvalidOnlyChat, "only_chat", reason)
        };
        match v {
            Value::Bool(true) if !serves_chat(channel_type_id) => {
                return Err(bad("this channel type does not serve chat"))
            }
            Value::Bool(_) => {}
            _ => return Err(bad("must be true or false")),
        }
    }
    if let Some(v) = config.get(RESPONSES_KEY) {
        let bad = |reason: &str| {
            DomainError::invalid_coded(ErrorCode::InvalidResponses, "responses", reason)
        };
        match v.as_str() {
            // Azure deployments are not served `/v1/responses` by its adapter.
            Some(RESPONSES_NATIVE)
                if !channel_type(channel_type_id).is_some_and(|t| t.openai_compatible) =>
            {
                return Err(bad(
                    "this channel type has no Responses API of its own: use \"chat\"",
                ))
            }
            Some(RESPONSES_CHAT) if !serves_chat(channel_type_id) => {
                return Err(bad("this channel type does not serve chat"))
            }
            Some(RESPONSES_NATIVE | RESPONSES_CHAT) => {}
            _ => return Err(bad("must be \"native\" or \"chat\"")),
        }
    }
    if let Some(v) = config.get(VOICE_MAPPING_KEY) {
        validate_voice_mapping(channel_type_id, v)?;
    }
    if let Some(v) = config.get(CUSTOM_PARAMETER_KEY) {
        validate_custom_parameter(channel_type_id, v)?;
    }
    if let Some(v) = config.get(WEB_SEARCH_KEY) {
        let bad = |reason: String| {
            DomainError::invalid_coded(ErrorCode::InvalidWebSearch, "web_search", reason)
        };
        validate_flag(channel_type_id, WEB_SEARCH_KEY, v).map_err(bad)?;
    }
    if let Some(v) = config.get(CODE_EXECUTION_KEY) {
        let bad = |reason: String| {
            DomainError::invalid_coded(ErrorCode::InvalidCodeExecution, "code_execution", reason)
        };
        validate_flag(channel_type_id, CODE_EXECUTION_KEY, v).map_err(bad)?;
    }
    if let Some(v) = config.get(PLUGIN_KEY) {
        validate_plugin(channel_type_id, v)?;
    }
    validate_knowledge(channel_type_id, config)?;
    if let Some(v) = config.get(ANTHROPIC_BETA_KEY) {
        validate_anthropic_beta(channel_type_id, v)?;
    }
    Ok(())
}

/// `{"add": [...], "remove": [...]}`: flags of lower-case letters, digits and `-` (at most 64
/// characters, [`ANTHROPIC_BETA_MAX`] a list); `remove` also takes `prefix*` and `*`. Refused
/// with `invalid_anthropic_beta`, and on types not of Anthropic's protocol unless empty.
fn validate_anthropic_beta(channel_type_id: i32, v: &Value) -> Result<(), DomainError> {
    let bad = |reason: String| {
        DomainError::invalid_coded(ErrorCode::InvalidAnthropicBeta, ANTHROPIC_BETA_KEY, reason)
    };
    let Value::Object(map) = v else {
        return Err(bad(
            r#"must be an object such as {"add": ["flag"], "remove": ["flag"]}"#.into(),
        ));
    };
    let mut any = false;
    for (key, list) in map {
        if key != "add" && key != "remove" {
            return Err(bad(format!("unknown member {key:?} (add, remove)")));
        }
        let Value::Array(flags) = list else {
            return Err(bad(format!("{key} must be a list of flags")));
        };
        if flags.len() > ANTHROPIC_BETA_MAX {
            return Err(bad(format!(
                "{key} has more than {ANTHROPIC_BETA_MAX} flags"
            )));
        }
        for f in flags {
            let flag = f.as_str().unwrap_or_default();
            let name = match key.as_str() {
                "remove" => flag.strip_suffix('*').unwrap_or(flag),
                _ => flag,
            };
            let valid = name.len() <= 64
                && (!name.is_empty() || (key == "remove" && flag == "*"))
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !valid {
                return Err(bad(format!(
                    "{key}: {f} is not a flag (lower-case letters, digits and -{})",
                    if key == "remove" { ", or prefix*" } else { "" }
                )));
            }
        }
        any |= !flags.is_empty();
    }
    if any && !ANTHROPIC_BETA_TYPES.contains(&channel_type_id) {
        return Err(bad(
            "only channels of Anthropic's protocol (Anthropic, AWS Bedrock, Vertex AI) take anthropic-beta flags".into(),
        ));
    }
    Ok(())
}

/// The `anthropic-beta` flags to send for a client that sent `client` (the header's
/// comma-separated list) on a channel whose `config.anthropic_beta` is `setting`: the client's
/// flags the channel does not remove, then the channel's added ones, each once, in order.
pub fn anthropic_beta_flags(setting: Option<&Value>, client: Option<&str>) -> Vec<String> {
    let list = |key: &str| -> Vec<&str> {
        setting
            .and_then(|s| s.get(key))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let remove = list("remove");
    let removed = |flag: &str| {
        remove.iter().any(|r| match r.strip_suffix('*') {
            Some(prefix) => flag.starts_with(prefix),
            None => *r == flag,
        })
    };
    let mut out: Vec<String> = Vec::new();
    let client = client
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty() && !removed(f));
    for flag in client.chain(list("add")) {
        if !out.iter().any(|f| f == flag) {
            out.push(flag.to_owned());
        }
    }
    out
}

/// A boolean switch: `true` only where the type supports it.
fn validate_flag(channel_type_id: i32, key: &str, v: &Value) -> Result<(), String> {
    match v {
        Value::Bool(true) if !supports_switch(channel_type_id, key) => Err(format!(
            "this channel type has no {key} switch (offered for {})",
            types_with(key)
        )),
        Value::Bool(_) => Ok(()),
        _ => Err("must be true or false".into()),
    }
}

fn validate_plugin(channel_type_id: i32, v: &Value) -> Result<(), DomainError> {
    let bad =
        |reason: String| DomainError::invalid_coded(ErrorCode::InvalidPlugin, "plugin", reason);
    let Value::Object(map) = v else {
        return Err(bad(
            "must be a JSON object of plugin id -> options object".into()
        ));
    };
    if map.is_empty() {
        return Ok(());
    }
    if !supports_switch(channel_type_id, PLUGIN_KEY) {
        return Err(bad(format!(
            "this channel type takes no plugins (offered for {})",
            types_with(PLUGIN_KEY)
        )));
    }
    for (id, options) in map {
        let id_ok = !id.is_empty()
            && id.len() <= PLUGIN_ID_MAX
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b));
        if !id_ok {
            return Err(bad(format!(
                "'{id}' is not a plugin id (1 to {PLUGIN_ID_MAX} of letters, digits, -, _, . and :)"
            )));
        }
        match options {
            Value::Object(o) if o.contains_key("id") => {
                return Err(bad(format!(
                    "the options of '{id}' cannot set id (the key is the plugin id)"
                )))
            }
            Value::Object(_) => {}
            _ => {
                return Err(bad(format!(
                    "the options of '{id}' must be a JSON object ({{}} for none)"
                )))
            }
        }
    }
    if v.to_string().len() > PLUGIN_MAX_BYTES {
        return Err(bad(format!("at most {PLUGIN_MAX_BYTES} bytes of JSON")));
    }
    Ok(())
}

/// `knowledge_id` and `knowledge_template`: strings, empty for none; set only where the type
/// supports them; a template needs a knowledge base and both [`KNOWLEDGE_PLACEHOLDERS`].
fn validate_knowledge(
    channel_type_id: i32,
    config: &Map<String, Value>,
) -> Result<(), DomainError> {
    let id = config.get(KNOWLEDGE_ID_KEY);
    let template = config.get(KNOWLEDGE_TEMPLATE_KEY);
    let bad = |field: &'static str, reason: String| {
        DomainError::invalid_coded(ErrorCode::InvalidKnowledge, field, reason)
    };
    let text = |field: &'static str, v: Option<&Value>| -> Result<String, DomainError> {
        match v {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(bad(field, "must be a string".into())),
        }
    };
    let id = text(KNOWLEDGE_ID_KEY, id)?;
    let template = text(KNOWLEDGE_TEMPLATE_KEY, template)?;
    if id.is_empty() && template.is_empty() {
        return Ok(());
    }
    if !supports_switch(channel_type_id, KNOWLEDGE_ID_KEY) {
        let field = if id.is_empty() {
            KNOWLEDGE_TEMPLATE_KEY
        } else {
            KNOWLEDGE_ID_KEY
        };
        return Err(bad(
            field,
            format!(
                "this channel type has no knowledge base (offered for {})",
                types_with(KNOWLEDGE_ID_KEY)
            ),
        ));
    }
    if id.is_empty() {
        return Err(bad(
            KNOWLEDGE_TEMPLATE_KEY,
            "a prompt template needs a knowledge base id".into(),
        ));
    }
    let id_ok = id.len() <= KNOWLEDGE_ID_MAX
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !id_ok {
        return Err(bad(
            KNOWLEDGE_ID_KEY,
            format!("a knowledge base id has 1 to {KNOWLEDGE_ID_MAX} letters, digits, -, _ and ."),
        ));
    }
    if !template.is_empty() {
        if template.chars().count() > KNOWLEDGE_TEMPLATE_MAX {
            return Err(bad(
                KNOWLEDGE_TEMPLATE_KEY,
                format!("at most {KNOWLEDGE_TEMPLATE_MAX} characters"),
            ));
        }
        if let Some(missing) = KNOWLEDGE_PLACEHOLDERS
            .iter()
            .find(|p| !template.contains(**p))
        {
            return Err(bad(
                KNOWLEDGE_TEMPLATE_KEY,
                format!(
                    "the template must contain {} (it lacks {missing})",
                    KNOWLEDGE_PLACEHOLDERS.join(" and ")
                ),
            ));
        }
    }
    Ok(())
}

fn validate_voice_mapping(channel_type_id: i32, v: &Value) -> Result<(), DomainError> {
    let bad = |reason: String| {
        DomainError::invalid_coded(ErrorCode::InvalidVoiceMapping, "voice_mapping", reason)
    };
    let Value::Object(map) = v else {
        return Err(bad("must be a JSON object of voice names".into()));
    };
    if map.is_empty() {
        return Ok(());
    }
    if !speaks_openai(channel_type_id) {
        return Err(bad(
            "this channel type does not serve /v1/audio/speech".into()
        ));
    }
    for (voice, target) in map {
        if !TTS_VOICES.contains(&voice.as_str()) {
            return Err(bad(format!(
                "'{voice}' is not one of {}",
                TTS_VOICES.join(", ")
            )));
        }
        let ok = target.as_str().is_some_and(|t| {
            !t.is_empty() && t.len() <= VOICE_NAME_MAX && !t.chars().any(char::is_control)
        });
        if !ok {
            return Err(bad(format!(
                "the voice for '{voice}' must be a name of 1 to {VOICE_NAME_MAX} characters"
            )));
        }
    }
    Ok(())
}

fn validate_custom_parameter(channel_type_id: i32, v: &Value) -> Result<(), DomainError> {
    let bad = |reason: String| {
        DomainError::invalid_coded(
            ErrorCode::InvalidCustomParameter,
            "custom_parameter",
            reason,
        )
    };
    let Value::Object(map) = v else {
        return Err(bad("must be a JSON object".into()));
    };
    if map.is_empty() {
        return Ok(());
    }
    if !speaks_openai(channel_type_id) {
        return Err(bad(
            "only OpenAI-compatible and Azure channels take other parameters".into(),
        ));
    }
    if let Some(k) = map
        .keys()
        .find(|k| k.is_empty() || RESERVED_PARAMETERS.contains(&k.as_str()))
    {
        return Err(bad(format!(
            "'{k}' cannot be set ({} are decided by the request)",
            RESERVED_PARAMETERS.join(", ")
        )));
    }
    if v.to_string().len() > CUSTOM_PARAMETER_MAX_BYTES {
        return Err(bad(format!(
            "at most {CUSTOM_PARAMETER_MAX_BYTES} bytes of JSON"
        )));
    }
    Ok(())
}

/// The disabled-streaming list as submitted (JSON text of a list of model names; empty is none)
/// as stored: compact JSON, names trimmed and de-duplicated in order, `[]` when empty. Every
/// name passes [`validate_model_name`] (`prefix*` allowed); at most [`DISABLED_STREAM_MAX`].
/// Refused with `invalid_disabled_stream`.
pub fn normalize_disabled_stream(text: &str) -> Result<String, DomainError> {
    let bad = |reason: String| {
        DomainError::invalid_coded(ErrorCode::InvalidDisabledStream, "disabled_stream", reason)
    };
    let text = text.trim();
    if text.is_empty() {
        return Ok("[]".to_owned());
    }
    let items = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => items,
        _ => return Err(bad("must be a JSON list of model names".into())),
    };
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let Value::String(name) = item else {
            return Err(bad("must be a JSON list of model names".into()));
        };
        let name = name.trim();
        if let Err(e) = validate_model_name(name) {
            return Err(bad(e.to_string()));
        }
        if !out.iter().any(|o| o == name) {
            out.push(name.to_owned());
        }
    }
    if out.len() > DISABLED_STREAM_MAX {
        return Err(bad(format!("at most {DISABLED_STREAM_MAX} models")));
    }
    serde_json::to_string(&out).map_err(|e| bad(e.to_string()))
}

/// The stored disabled-streaming list (lenient: anything unreadable is no list).
pub fn parse_disabled_stream(stored: &str) -> Vec<String> {
    serde_json::from_str::<Vec<String>>(stored).unwrap_or_default()
}

/// Whether `model` is on the list: an exact entry, or a `prefix*` entry it starts with.
pub fn list_matches(list: &[String], model: &str) -> bool {
    list.iter().any(|e| match e.strip_suffix('*') {
        Some(prefix) => model.starts_with(prefix),
        None => e == model,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use serde_json::json;

    fn check(ty: i32, v: Value) -> Result<(), ErrorCode> {
        validate_config(ty, v.as_object().unwrap()).map_err(|e| e.code())
    }

    #[test]
    fn anthropic_beta_flags_are_checked_and_combined() {
        let ok = json!({"anthropic_beta": {"add": ["context-1m-2025-08-07"], "remove": ["context-management-*", "x"]}});
        for ty in ANTHROPIC_BETA_TYPES {
            assert_eq!(check(ty, ok.clone()), Ok(()), "{ty}");
        }
        assert_eq!(
            check(14, json!({"anthropic_beta": {"remove": ["*"]}})),
            Ok(())
        );
        assert_eq!(
            check(1, json!({"anthropic_beta": {}})),
            Ok(()),
            "empty: any type"
        );
        for bad in [
            json!({"anthropic_beta": {"add": ["x"]}, "_type": 1}),
            json!({"anthropic_beta": ["x"]}),
            json!({"anthropic_beta": {"keep": ["x"]}}),
            json!({"anthropic_beta": {"add": "x"}}),
            json!({"anthropic_beta": {"add": ["Upper"]}}),
            json!({"anthropic_beta": {"add": ["a,b"]}}),
            json!({"anthropic_beta": {"add": ["x*"]}}),
            json!({"anthropic_beta": {"add": [""]}}),
            json!({"anthropic_beta": {"add": [7]}}),
            json!({"anthropic_beta": {"add": vec!["f"; ANTHROPIC_BETA_MAX + 1]}}),
        ] {
            let ty = if bad.get("_type").is_some() { 1 } else { 14 };
            let mut v = bad.clone();
            v.as_object_mut().unwrap().remove("_type");
            assert_eq!(check(ty, v), Err(ErrorCode::InvalidAnthropicBeta), "{bad}");
        }

        let setting = ok["anthropic_beta"].clone();
        assert_eq!(
            anthropic_beta_flags(
                Some(&setting),
                Some("interleaved-thinking-2025-05-14, context-management-2025-06-27,x,context-1m-2025-08-07")
            ),
            ["interleaved-thinking-2025-05-14", "context-1m-2025-08-07"]
        );
        assert_eq!(
            anthropic_beta_flags(None, Some(" a ,, b ,a")),
            ["a", "b"],
            "the client's flags, trimmed, each once"
        );
        assert_eq!(
            anthropic_beta_flags(Some(&json!({"remove": ["*"], "add": ["c"]})), Some("a,b")),
            ["c"]
        );
        assert!(anthropic_beta_flags(None, None).is_empty());
    }

    #[test]
    fn known_settings_are_checked_with_their_codes() {
        assert_eq!(check(1, json!({"n": 1, "other": "kept"})), Ok(()));
        assert_eq!(check(42, json!({"region": "europe-west4"})), Ok(()));
        assert_eq!(
            check(42, json!({"region": "a.b/"})),
            Err(ErrorCode::InvalidRegion)
        );
        assert_eq!(
            check(42, json!({"region": 4})),
            Err(ErrorCode::InvalidRegion)
        );
        assert_eq!(
            check(3, json!({"api_version": "2025-01-01-preview"})),
            Ok(())
        );
        assert_eq!(
            check(3, json!({"api_version": "latest"})),
            Err(ErrorCode::InvalidApiVersion)
        );
        assert_eq!(check(1, json!({"only_chat": true})), Ok(()));
        assert_eq!(
            check(1, json!({"only_chat": "yes"})),
            Err(ErrorCode::InvalidOnlyChat)
        );
        assert_eq!(
            check(TYPE_SUNO, json!({"only_chat": true})),
            Err(ErrorCode::InvalidOnlyChat)
        );
        assert_eq!(check(TYPE_SUNO, json!({"only_chat": false})), Ok(()));
    }

    #[test]
    fn responses_mode_rules() {
        assert!(responses_native_by_default(1));
        assert!(!responses_native_by_default(TYPE_ANTHROPIC));
        assert!(!responses_native_by_default(TYPE_AZURE));
        assert_eq!(check(1, json!({"responses": "chat"})), Ok(()));
        assert_eq!(check(1, json!({"responses": "native"})), Ok(()));
        // Any OpenAI-compatible vendor with a Responses API of its own may say native.
        assert_eq!(
            check(TYPE_OPENROUTER, json!({"responses": "native"})),
            Ok(())
        );
        assert_eq!(check(TYPE_ANTHROPIC, json!({"responses": "chat"})), Ok(()));
        for (ty, v) in [
            (TYPE_ANTHROPIC, json!("native")),
            (TYPE_GEMINI, json!("native")),
            (TYPE_AZURE, json!("native")),
            (TYPE_SUNO, json!("chat")),
            (1, json!("bridge")),
            (1, json!(true)),
        ] {
            assert_eq!(
                check(ty, json!({"responses": v})),
                Err(ErrorCode::InvalidResponses),
                "type {ty}, {v}"
            );
        }
    }

    #[test]
    fn voice_mapping_rules() {
        assert_eq!(
            check(
                1,
                json!({"voice_mapping": {"alloy": "zh-CN-XiaoxiaoNeural"}})
            ),
            Ok(())
        );
        assert_eq!(
            check(3, json!({"voice_mapping": {"nova": "nova-2"}})),
            Ok(())
        );
        assert_eq!(check(14, json!({"voice_mapping": {}})), Ok(()));
        for bad in [
            json!({"voice_mapping": ["alloy"]}),
            json!({"voice_mapping": {"robot": "x"}}),
            json!({"voice_mapping": {"alloy": ""}}),
            json!({"voice_mapping": {"alloy": 1}}),
            json!({"voice_mapping": {"alloy": "x".repeat(VOICE_NAME_MAX + 1)}}),
            json!({"voice_mapping": {"alloy": "a\nb"}}),
        ] {
            assert_eq!(
                check(1, bad.clone()),
                Err(ErrorCode::InvalidVoiceMapping),
                "{bad}"
            );
        }
        // Anthropic channels do not serve speech.
        assert_eq!(
            check(14, json!({"voice_mapping": {"alloy": "x"}})),
            Err(ErrorCode::InvalidVoiceMapping)
        );
    }

    #[test]
    fn custom_parameter_rules() {
        assert_eq!(
            check(
                1,
                json!({"custom_parameter": {"temperature": 0.2, "user": null}})
            ),
            Ok(())
        );
        assert_eq!(check(25, json!({"custom_parameter": {}})), Ok(()));
        for bad in [
            json!({"custom_parameter": "temperature=1"}),
            json!({"custom_parameter": {"model": "x"}}),
            json!({"custom_parameter": {"stream": false}}),
            json!({"custom_parameter": {"stream_options": {}}}),
            json!({"custom_parameter": {"max_tokens": 100000}}),
            json!({"custom_parameter": {"max_completion_tokens": 1}}),
            json!({"custom_parameter": {"n": 4}}),
            json!({"custom_parameter": {"": 1}}),
            json!({"custom_parameter": {"pad": "x".repeat(CUSTOM_PARAMETER_MAX_BYTES)}}),
        ] {
            assert_eq!(
                check(1, bad.clone()),
                Err(ErrorCode::InvalidCustomParameter),
                "{bad}"
            );
        }
        assert_eq!(
            check(25, json!({"custom_parameter": {"temperature": 1}})),
            Err(ErrorCode::InvalidCustomParameter),
            "Gemini bodies are translated, not OpenAI's"
        );
    }

    #[test]
    fn switches_by_type() {
        assert_eq!(switches_for(14), ["web_search", "code_execution"]);
        assert_eq!(switches_for(25), ["web_search", "code_execution"]);
        assert_eq!(switches_for(42), ["web_search", "code_execution"]);
        assert_eq!(
            switches_for(16),
            ["web_search", "knowledge_id", "knowledge_template"]
        );
        assert_eq!(switches_for(17), ["web_search"]);
        assert_eq!(switches_for(20), ["web_search", "plugin"]);
        for none in [1, 3, 8, 15, 28, 32, 34, 36, 41, 49, 9999] {
            assert!(switches_for(none).is_empty(), "type {none}");
        }
        // Every switch named is a known one, and every known one is offered somewhere.
        for t in crate::channel::CHANNEL_TYPES {
            assert!(switches_for(t.id).iter().all(|k| SWITCHES.contains(k)));
        }
        for k in SWITCHES {
            assert!(!types_with(k).is_empty(), "{k}");
        }
        assert_eq!(
            types_with(PLUGIN_KEY),
            "OpenRouter",
            "the names a refusal lists"
        );
    }

    #[test]
    fn flag_switches_accepted_and_refused_by_type() {
        for (key, code) in [
            ("web_search", "invalid_web_search"),
            ("code_execution", "invalid_code_execution"),
        ] {
            for ty in [1, 3, 8, 14, 16, 17, 20, 25, 28, 32, 42] {
                let on = check(ty, json!({key: true}));
                if supports_switch(ty, key) {
                    assert_eq!(on, Ok(()), "{key} on type {ty}");
                } else {
                    assert_eq!(
                        on.map_err(ErrorCode::as_str),
                        Err(code),
                        "{key} on type {ty}"
                    );
                }
                // Off is accepted everywhere (a form may send it for every type).
                assert_eq!(check(ty, json!({key: false})), Ok(()), "{key} off on {ty}");
            }
            for wrong in [
                json!("true"),
                json!(1),
                json!({}),
                json!(null),
                json!([true]),
            ] {
                assert_eq!(
                    check(25, json!({key: wrong})).map_err(ErrorCode::as_str),
                    Err(code),
                    "{key}: {wrong}"
                );
            }
        }
        assert_eq!(check(17, json!({"web_search": true})), Ok(()));
        assert_eq!(
            check(17, json!({"code_execution": true})),
            Err(ErrorCode::InvalidCodeExecution),
            "DashScope's chat has no code execution switch"
        );
        let e = validate_config(1, json!({"web_search": true}).as_object().unwrap())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("Google Gemini") && e.contains("Zhipu"), "{e}");
    }

    #[test]
    fn plugin_rules() {
        assert_eq!(
            check(
                20,
                json!({"plugin": {"file-parser": {"pdf": {"engine": "pdf-text"}}, "web": {}}})
            ),
            Ok(())
        );
        // Empty is off: accepted on every type.
        assert_eq!(check(1, json!({"plugin": {}})), Ok(()));
        assert_eq!(check(17, json!({"plugin": {}})), Ok(()));
        for (ty, bad) in [
            (17, json!({"plugin": {"code_interpreter": {}}})),
            (1, json!({"plugin": {"web": {}}})),
            (25, json!({"plugin": {"web": {}}})),
            (20, json!({"plugin": ["web"]})),
            (20, json!({"plugin": "web"})),
            (20, json!({"plugin": {"web": true}})),
            (20, json!({"plugin": {"web": null}})),
            (20, json!({"plugin": {"web": {"id": "other"}}})),
            (20, json!({"plugin": {"": {}}})),
            (20, json!({"plugin": {"a b": {}}})),
            (20, json!({"plugin": {"x".repeat(PLUGIN_ID_MAX + 1): {}}})),
            (
                20,
                json!({"plugin": {"web": {"search_prompt": "x".repeat(PLUGIN_MAX_BYTES)}}}),
            ),
        ] {
            assert_eq!(
                check(ty, bad.clone()),
                Err(ErrorCode::InvalidPlugin),
                "{ty}: {bad}"
            );
        }
    }

    #[test]
    fn knowledge_rules() {
        let template = "Use {{knowledge}} to answer {{question}}";
        assert_eq!(
            check(16, json!({"knowledge_id": "1748261416034889728"})),
            Ok(())
        );
        assert_eq!(
            check(
                16,
                json!({"knowledge_id": "kb-1", "knowledge_template": template})
            ),
            Ok(())
        );
        // Empty is off: accepted on every type.
        assert_eq!(
            check(1, json!({"knowledge_id": "", "knowledge_template": ""})),
            Ok(())
        );
        assert_eq!(check(25, json!({"knowledge_id": null})), Ok(()));
        for (ty, bad) in [
            (1, json!({"knowledge_id": "kb-1"})),
            (17, json!({"knowledge_id": "kb-1"})),
            (14, json!({"knowledge_template": template})),
            (16, json!({"knowledge_id": 17})),
            (16, json!({"knowledge_id": ["kb"]})),
            (16, json!({"knowledge_id": "a b"})),
            (
                16,
                json!({"knowledge_id": "x".repeat(KNOWLEDGE_ID_MAX + 1)}),
            ),
            (16, json!({"knowledge_template": template})),
            (
                16,
                json!({"knowledge_id": "kb", "knowledge_template": "only {{knowledge}}"}),
            ),
            (
                16,
                json!({"knowledge_id": "kb", "knowledge_template": "only {{question}}"}),
            ),
            (16, json!({"knowledge_id": "kb", "knowledge_template": 3})),
            (
                16,
                json!({"knowledge_id": "kb",
                    "knowledge_template": format!("{template}{}", "x".repeat(KNOWLEDGE_TEMPLATE_MAX))}),
            ),
        ] {
            assert_eq!(
                check(ty, bad.clone()),
                Err(ErrorCode::InvalidKnowledge),
                "{ty}: {bad}"
            );
        }
        // The refusal names the field at fault.
        let e = validate_config(
            16,
            json!({"knowledge_template": template}).as_object().unwrap(),
        );
        assert!(matches!(
            e,
            Err(DomainError::InvalidCoded {
                field: "knowledge_template",
                ..
            })
        ));
    }

    #[test]
    fn disabled_stream_lists() {
        assert_eq!(normalize_disabled_stream("").unwrap(), "[]");
        assert_eq!(
            normalize_disabled_stream(r#"[" o1 ", "o1", "gpt-4*"]"#).unwrap(),
            r#"["o1","gpt-4*"]"#
        );
        for bad in [r#"{"o1":1}"#, "o1", r#"[1]"#, r#"["*"]"#, r#"["a b"]"#] {
            assert_eq!(
                normalize_disabled_stream(bad).map_err(|e| e.code()),
                Err(ErrorCode::InvalidDisabledStream),
                "{bad}"
            );
        }
        let many: Vec<String> = (0..=DISABLED_STREAM_MAX).map(|i| format!("m{i}")).collect();
        assert!(normalize_disabled_stream(&serde_json::to_string(&many).unwrap()).is_err());
        let list = parse_disabled_stream(r#"["o1","gpt-4*"]"#);
        assert!(list_matches(&list, "o1") && list_matches(&list, "gpt-4o"));
        assert!(!list_matches(&list, "o1-mini") && !list_matches(&list, "gpt-3.5"));
        assert!(parse_disabled_stream("not json").is_empty());
    }
}
