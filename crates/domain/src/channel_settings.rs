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
//!
//! Voice mapping and other parameters rewrite OpenAI-shaped JSON bodies, so they are accepted only
//! for the types served by the OpenAI-compatible and Azure adapters ([`speaks_openai`]).

use crate::channel::{
    channel_type, is_region_name, validate_azure_api_version, validate_model_name,
    AZURE_API_VERSION_KEY, TYPE_AZURE, TYPE_MIDJOURNEY, TYPE_SUNO,
};
use crate::DomainError;
use serde_json::{Map, Value};

/// `config` key: the channel serves chat only (boolean).
pub const ONLY_CHAT_KEY: &str = "only_chat";
/// `config` key: the TTS voice mapping (object of voice -> upstream voice).
pub const VOICE_MAPPING_KEY: &str = "voice_mapping";
/// `config` key: the other parameters set in the upstream JSON body (object).
pub const CUSTOM_PARAMETER_KEY: &str = "custom_parameter";
/// `config` key: the cloud region (Vertex AI).
pub const REGION_KEY: &str = "region";

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

/// Whether a channel of this type serves chat at all (only-chat makes no sense elsewhere).
pub fn serves_chat(channel_type_id: i32) -> bool {
    !matches!(channel_type_id, TYPE_MIDJOURNEY | TYPE_SUNO)
}

/// Checks the known settings of a channel's `config` object (already trimmed); other keys are
/// left alone. Each refusal has its own code: `invalid_region`, `invalid_api_version`,
/// `invalid_only_chat`, `invalid_voice_mapping`, `invalid_custom_parameter`.
pub fn validate_config(
    channel_type_id: i32,
    config: &Map<String, Value>,
) -> Result<(), DomainError> {
    if let Some(v) = config.get(REGION_KEY) {
        if !v.as_str().is_some_and(is_region_name) {
            return Err(DomainError::invalid_coded(
                "invalid_region",
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
        let bad =
            |reason: &str| DomainError::invalid_coded("invalid_only_chat", "only_chat", reason);
        match v {
            Value::Bool(true) if !serves_chat(channel_type_id) => {
                return Err(bad("this channel type does not serve chat"))
            }
            Value::Bool(_) => {}
            _ => return Err(bad("must be true or false")),
        }
    }
    if let Some(v) = config.get(VOICE_MAPPING_KEY) {
        validate_voice_mapping(channel_type_id, v)?;
    }
    if let Some(v) = config.get(CUSTOM_PARAMETER_KEY) {
        validate_custom_parameter(channel_type_id, v)?;
    }
    Ok(())
}

fn validate_voice_mapping(channel_type_id: i32, v: &Value) -> Result<(), DomainError> {
    let bad = |reason: String| {
        DomainError::invalid_coded("invalid_voice_mapping", "voice_mapping", reason)
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
        DomainError::invalid_coded("invalid_custom_parameter", "custom_parameter", reason)
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
        DomainError::invalid_coded("invalid_disabled_stream", "disabled_stream", reason)
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
    use serde_json::json;

    fn check(ty: i32, v: Value) -> Result<(), &'static str> {
        validate_config(ty, v.as_object().unwrap()).map_err(|e| e.code())
    }

    #[test]
    fn known_settings_are_checked_with_their_codes() {
        assert_eq!(check(1, json!({"n": 1, "other": "kept"})), Ok(()));
        assert_eq!(check(42, json!({"region": "europe-west4"})), Ok(()));
        assert_eq!(check(42, json!({"region": "a.b/"})), Err("invalid_region"));
        assert_eq!(check(42, json!({"region": 4})), Err("invalid_region"));
        assert_eq!(
            check(3, json!({"api_version": "2025-01-01-preview"})),
            Ok(())
        );
        assert_eq!(
            check(3, json!({"api_version": "latest"})),
            Err("invalid_api_version")
        );
        assert_eq!(check(1, json!({"only_chat": true})), Ok(()));
        assert_eq!(
            check(1, json!({"only_chat": "yes"})),
            Err("invalid_only_chat")
        );
        assert_eq!(
            check(TYPE_SUNO, json!({"only_chat": true})),
            Err("invalid_only_chat")
        );
        assert_eq!(check(TYPE_SUNO, json!({"only_chat": false})), Ok(()));
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
            assert_eq!(check(1, bad.clone()), Err("invalid_voice_mapping"), "{bad}");
        }
        // Anthropic channels do not serve speech.
        assert_eq!(
            check(14, json!({"voice_mapping": {"alloy": "x"}})),
            Err("invalid_voice_mapping")
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
                Err("invalid_custom_parameter"),
                "{bad}"
            );
        }
        assert_eq!(
            check(25, json!({"custom_parameter": {"temperature": 1}})),
            Err("invalid_custom_parameter"),
            "Gemini bodies are translated, not OpenAI's"
        );
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
                Err("invalid_disabled_stream"),
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
