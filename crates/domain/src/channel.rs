//! Channels (upstream accounts): status, known types, validation of spec section 5, model
//! mapping, and the retry / auto-disable classification of upstream errors (DOMAIN.md
//! "Channels").

use crate::validate::{normalize_url, trim_strings};
use crate::DomainError;
use crate::ErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "i32", try_from = "i32")]
pub enum ChannelStatus {
    Enabled,
    ManuallyDisabled,
    AutoDisabled,
}

impl ChannelStatus {
    pub const fn as_i32(self) -> i32 {
        match self {
            ChannelStatus::Enabled => 1,
            ChannelStatus::ManuallyDisabled => 2,
            ChannelStatus::AutoDisabled => 3,
        }
    }
}

impl From<ChannelStatus> for i32 {
    fn from(s: ChannelStatus) -> i32 {
        s.as_i32()
    }
}

impl TryFrom<i32> for ChannelStatus {
    type Error = String;
    fn try_from(n: i32) -> Result<Self, Self::Error> {
        match n {
            1 => Ok(ChannelStatus::Enabled),
            2 => Ok(ChannelStatus::ManuallyDisabled),
            3 => Ok(ChannelStatus::AutoDisabled),
            other => Err(format!("unknown channel status {other}")),
        }
    }
}

/// A known upstream type. `default_base_url` is stored without the trailing `/v1` (the adapter
/// appends `/v1/...`); empty means "no default".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelType {
    pub id: i32,
    pub name: &'static str,
    pub default_base_url: &'static str,
    /// Served by the shared OpenAI-compatible adapter (`{base}/v1/chat/completions`, ...).
    pub openai_compatible: bool,
}

impl ChannelType {
    /// Whether a channel of this type must be given a base URL: types without a default URL,
    /// except the ones whose endpoint is derived from the key/config (AWS Bedrock and Vertex AI
    /// build it from region and project).
    pub const fn needs_base_url(&self) -> bool {
        self.default_base_url.is_empty() && !matches!(self.id, TYPE_AWS_BEDROCK | TYPE_VERTEX_AI)
    }
}

pub const TYPE_OPENAI: i32 = 1;
pub const TYPE_AZURE: i32 = 3;
pub const TYPE_CUSTOM: i32 = 8;
pub const TYPE_ANTHROPIC: i32 = 14;
pub const TYPE_ZHIPU: i32 = 16;
pub const TYPE_ALI: i32 = 17;
pub const TYPE_OPENROUTER: i32 = 20;
pub const TYPE_GEMINI: i32 = 25;
pub const TYPE_AWS_BEDROCK: i32 = 32;
pub const TYPE_DEEPSEEK: i32 = 28;
pub const TYPE_OLLAMA: i32 = 39;
pub const TYPE_VERTEX_AI: i32 = 42;
pub const TYPE_COHERE: i32 = 36;
pub const TYPE_JINA: i32 = 47;
pub const TYPE_XAI: i32 = 49;
/// A midjourney-proxy server (one-hub's Midjourney id; new-api numbers it 2).
pub const TYPE_MIDJOURNEY: i32 = 34;
/// A Suno API server (one-hub's Suno id; new-api's 36 is Cohere in one-hub's numbering).
pub const TYPE_SUNO: i32 = 41;
/// Kling's video API (one-hub's Kling id). The key is `ACCESS_KEY|SECRET_KEY` (a signed token is
/// made per call) or a ready bearer token.
pub const TYPE_KLING: i32 = 53;

const fn ct(
    id: i32,
    name: &'static str,
    default_base_url: &'static str,
    openai_compatible: bool,
) -> ChannelType {
    ChannelType {
        id,
        name,
        default_base_url,
        openai_compatible,
    }
}

/// The channel types Switchboard knows, by id (sorted by id).
pub const CHANNEL_TYPES: &[ChannelType] = &[
    ct(TYPE_OPENAI, "OpenAI", "https://api.openai.com", true),
    ct(TYPE_AZURE, "Azure OpenAI", "", false),
    ct(TYPE_CUSTOM, "Custom", "", true),
    ct(
        TYPE_ANTHROPIC,
        "Anthropic",
        "https://api.anthropic.com",
        false,
    ),
    // Baidu Qianfan and Zhipu speak OpenAI's protocol under their own version path
    // ([`api_version_path`]).
    ct(15, "Baidu Qianfan", "https://qianfan.baidubce.com", true),
    ct(TYPE_ZHIPU, "Zhipu", "https://open.bigmodel.cn", true),
    ct(
        TYPE_ALI,
        "Ali DashScope",
        "https://dashscope.aliyuncs.com/compatible-mode",
        true,
    ),
    ct(
        TYPE_OPENROUTER,
        "OpenRouter",
        "https://openrouter.ai/api",
        true,
    ),
    ct(
        TYPE_GEMINI,
        "Google Gemini",
        "https://generativelanguage.googleapis.com",
        false,
    ),
    ct(TYPE_DEEPSEEK, "DeepSeek", "https://api.deepseek.com", true),
    ct(29, "Moonshot", "https://api.moonshot.cn", true),
    ct(30, "Mistral", "https://api.mistral.ai", true),
    ct(31, "Groq", "https://api.groq.com/openai", true),
    ct(TYPE_AWS_BEDROCK, "AWS Bedrock", "", false),
    ct(TYPE_MIDJOURNEY, "Midjourney Proxy", "", false),
    ct(36, "Cohere", "https://api.cohere.ai", false),
    ct(TYPE_OLLAMA, "Ollama", "http://localhost:11434", true),
    ct(TYPE_SUNO, "Suno API", "", false),
    ct(TYPE_VERTEX_AI, "Vertex AI", "", false),
    ct(45, "SiliconFlow", "https://api.siliconflow.cn", true),
    ct(47, "Jina", "https://api.jina.ai", false),
    // Not in the one-hub list: the next free id after it.
    ct(TYPE_XAI, "xAI", "https://api.x.ai", true),
    ct(TYPE_KLING, "Kling", "https://api.klingai.com", false),
];

/// The path that stands for OpenAI's `/v1` at an OpenAI-compatible vendor: Baidu Qianfan's
/// OpenAI-compatible API lives under `/v2`, Zhipu's under `/api/paas/v4`; every other vendor
/// uses `/v1`.
pub fn api_version_path(channel_type: i32) -> &'static str {
    match channel_type {
        15 => "/v2",
        16 => "/api/paas/v4",
        _ => "/v1",
    }
}

/// `path` (an OpenAI path such as `/v1/chat/completions`) at this channel type's version path.
pub fn vendor_path(channel_type: i32, path: &str) -> String {
    match path.strip_prefix("/v1") {
        Some(rest) => format!("{}{rest}", api_version_path(channel_type)),
        None => path.to_owned(),
    }
}

pub fn channel_type(id: i32) -> Option<&'static ChannelType> {
    CHANNEL_TYPES.iter().find(|t| t.id == id)
}

/// The key of an Azure channel's API version in its `config` object.
pub const AZURE_API_VERSION_KEY: &str = "api_version";

/// The API version used for an Azure channel whose config names none.
pub const AZURE_DEFAULT_API_VERSION: &str = "2024-10-21";

/// Validates an Azure OpenAI `api-version` (`YYYY-MM-DD`, optionally `-preview` or another
/// lower-case suffix such as `-preview.1`); refused with `invalid_api_version`.
pub fn validate_azure_api_version(v: &str) -> Result<(), DomainError> {
    let bad = || {
        DomainError::invalid_coded(
            ErrorCode::InvalidApiVersion,
            "api_version",
            "must look like 2024-10-21 or 2025-01-01-preview",
        )
    };
    let b = v.as_bytes();
    if b.len() < 10 || b.len() > 40 {
        return Err(bad());
    }
    let date_ok = b[..10].iter().enumerate().all(|(i, c)| {
        if i == 4 || i == 7 {
            *c == b'-'
        } else {
            c.is_ascii_digit()
        }
    });
    let rest_ok = b.len() == 10
        || (b[10] == b'-'
            && b.len() > 11
            && b[11..]
                .iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'.' || *c == b'-'));
    if date_ok && rest_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

/// `config` (a JSON object as stored, or empty) with `key` set to the string `value`, compact.
pub fn set_config_string(config: &str, key: &str, value: &str) -> String {
    let mut obj = match serde_json::from_str::<Value>(config) {
        Ok(Value::Object(o)) => o,
        _ => serde_json::Map::new(),
    };
    obj.insert(key.to_owned(), Value::String(value.to_owned()));
    Value::Object(obj).to_string()
}

/// A string value of the stored `config` object.
pub fn config_string(config: &str, key: &str) -> Option<String> {
    match serde_json::from_str::<Value>(config) {
        Ok(Value::Object(o)) => o.get(key).and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// `models` (a comma list) without `model`; `None` when it does not contain it.
pub fn remove_model(models: &str, model: &str) -> Option<String> {
    let list = parse_csv(models);
    if !list.iter().any(|m| m == model) {
        return None;
    }
    Some(
        list.into_iter()
            .filter(|m| m != model)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// A comma separated list as stored (models, groups, token model allow-lists): entries trimmed,
/// empty entries dropped, first occurrence kept, order kept. Join with `","` to store.
pub fn parse_csv(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        if !out.iter().any(|o| o == entry) {
            out.push(entry.to_owned());
        }
    }
    out
}

/// A model name: not empty, no whitespace, control characters or commas (lists are comma
/// separated), and the wildcard `*` only as the last character with at least one character
/// before it (`gpt-4*` is fine; `*`, `gpt*4` and `gpt-4**` are not).
pub fn validate_model_name(name: &str) -> Result<(), DomainError> {
    if name.is_empty() {
        return Err(DomainError::Required { field: "model" });
    }
    if name
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == ',')
    {
        return Err(DomainError::invalid(
            "model",
            format!("'{name}' contains spaces, control characters or commas"),
        ));
    }
    let body = name.strip_suffix('*').unwrap_or(name);
    if body.is_empty() || body.contains('*') {
        return Err(DomainError::invalid(
            "model",
            format!(
                "'{name}': the wildcard * is allowed only as the last character, after at least one other"
            ),
        ));
    }
    Ok(())
}

/// A channel's model mapping: requested model -> upstream model, exact names only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelMapping(BTreeMap<String, String>);

impl ModelMapping {
    /// Empty text (after trimming) or `{}` is no mapping. Otherwise a JSON object whose keys and
    /// values are non-empty strings (both trimmed). Anything else is an error on `model_mapping`.
    pub fn parse(text: &str) -> Result<ModelMapping, DomainError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(ModelMapping::default());
        }
        let map = string_map("model_mapping", text)?;
        if let Some(k) = map.iter().find_map(|(k, v)| v.is_empty().then_some(k)) {
            return Err(DomainError::invalid(
                "model_mapping",
                format!("the target of '{k}' is empty"),
            ));
        }
        Ok(ModelMapping(map))
    }

    /// The upstream model for `model`: its mapping, or `model` itself.
    pub fn map<'a>(&'a self, model: &'a str) -> &'a str {
        self.0.get(model).map_or(model, String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Compact JSON, `{}` when empty.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_else(|_| "{}".to_owned())
    }
}

/// Parses a JSON object of string -> string, trimming keys and values; keys must be non-empty.
fn string_map(field: &'static str, text: &str) -> Result<BTreeMap<String, String>, DomainError> {
    let obj = json_object(field, text)?;
    let mut out = BTreeMap::new();
    for (k, v) in obj {
        let key = k.trim();
        if key.is_empty() {
            return Err(DomainError::invalid(field, "keys cannot be empty"));
        }
        let Value::String(v) = v else {
            return Err(DomainError::invalid(
                field,
                format!("the value of '{key}' must be a string"),
            ));
        };
        out.insert(key.to_owned(), v.trim().to_owned());
    }
    Ok(out)
}

fn json_object(field: &'static str, text: &str) -> Result<Map<String, Value>, DomainError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(DomainError::invalid(field, "must be a JSON object")),
        Err(e) => Err(DomainError::invalid(field, format!("invalid JSON: {e}"))),
    }
}

/// A channel as submitted by the console, before it is stored. Missing JSON fields take
/// [`Default`] values (weight 1, everything else empty or zero).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChannelInput {
    pub name: String,
    #[serde(rename = "type")]
    pub channel_type: i32,
    pub key: String,
    pub base_url: String,
    pub models: String,
    pub group: String,
    pub model_mapping: String,
    pub priority: i64,
    pub weight: i32,
    pub custom_headers: String,
    pub config: String,
    pub test_model: String,
    pub proxy: String,
    pub tag: String,
    /// JSON list of the models whose stream requests skip this channel
    /// ([`crate::channel_settings::normalize_disabled_stream`]).
    pub disabled_stream: String,
}

impl Default for ChannelInput {
    fn default() -> Self {
        ChannelInput {
            name: String::new(),
            channel_type: 0,
            key: String::new(),
            base_url: String::new(),
            models: String::new(),
            group: String::new(),
            model_mapping: String::new(),
            priority: 0,
            weight: 1,
            custom_headers: String::new(),
            config: String::new(),
            test_model: String::new(),
            proxy: String::new(),
            tag: String::new(),
            disabled_stream: String::new(),
        }
    }
}

/// Validates a channel (spec section 5) and normalises it in place:
/// - every string trimmed; `name`, `type` (non-zero), `key`, `models` and `group` required
///   ([`DomainError::Required`], "X cannot be empty"); the type must be in [`CHANNEL_TYPES`];
/// - `base_url`: trailing slashes stripped, http(s) only; empty becomes the type's default; a type
///   without a default (Azure, Custom) requires it (see [`ChannelType::needs_base_url`]);
/// - `models` and `group`: comma lists, trimmed and de-duplicated, joined with `,`; every model
///   passes [`validate_model_name`]; a group entry has no whitespace;
/// - `model_mapping` per [`ModelMapping::parse`]; `custom_headers` a JSON object of valid header
///   names to strings without line breaks; `config` a JSON object; all three are stored as compact
///   JSON with their strings trimmed, `{}` when empty;
/// - `priority >= 0`, `weight >= 1` ([`DomainError::TooSmall`]);
/// - `test_model` a model name without wildcard, or empty;
/// - `proxy` empty or an `http://`, `https://`, `socks5://` or `socks5h://` URL (trailing slash
///   stripped);
/// - the relaying settings of `config` and the `disabled_stream` list per
///   [`crate::channel_settings`].
pub fn validate_channel(input: &mut ChannelInput) -> Result<(), DomainError> {
    for s in [
        &mut input.name,
        &mut input.key,
        &mut input.base_url,
        &mut input.models,
        &mut input.group,
        &mut input.model_mapping,
        &mut input.custom_headers,
        &mut input.config,
        &mut input.test_model,
        &mut input.proxy,
        &mut input.tag,
        &mut input.disabled_stream,
    ] {
        let t = s.trim();
        if t.len() != s.len() {
            *s = t.to_owned();
        }
    }

    if input.name.is_empty() {
        return Err(DomainError::Required { field: "name" });
    }
    if input.channel_type == 0 {
        return Err(DomainError::Required { field: "type" });
    }
    let ty = channel_type(input.channel_type).ok_or_else(|| {
        DomainError::invalid(
            "type",
            format!("unknown channel type {}", input.channel_type),
        )
    })?;
    if input.key.is_empty() {
        return Err(DomainError::Required { field: "key" });
    }
    validate_channel_key(input.channel_type, &input.key)?;

    let models = parse_csv(&input.models);
    if models.is_empty() {
        return Err(DomainError::Required { field: "models" });
    }
    for m in &models {
        validate_model_name(m).map_err(|e| rename_field(e, "models"))?;
    }
    input.models = models.join(",");

    let groups = parse_csv(&input.group);
    if groups.is_empty() {
        return Err(DomainError::Required { field: "group" });
    }
    if let Some(g) = groups.iter().find(|g| g.chars().any(char::is_whitespace)) {
        return Err(DomainError::invalid(
            "group",
            format!("'{g}' contains spaces"),
        ));
    }
    input.group = groups.join(",");

    let base_url = normalize_url("base_url", &input.base_url)?;
    input.base_url = if !base_url.is_empty() {
        base_url
    } else if ty.needs_base_url() {
        return Err(DomainError::Required { field: "base_url" });
    } else {
        ty.default_base_url.to_owned()
    };

    input.model_mapping = ModelMapping::parse(&input.model_mapping)?.to_json();
    input.custom_headers = normalize_headers(&input.custom_headers)?;
    input.config = normalize_config(&input.config)?;
    if let Ok(Value::Object(config)) = serde_json::from_str::<Value>(&input.config) {
        crate::channel_settings::validate_config(input.channel_type, &config)?;
    }
    input.disabled_stream =
        crate::channel_settings::normalize_disabled_stream(&input.disabled_stream)?;

    if input.priority < 0 {
        return Err(DomainError::TooSmall {
            field: "priority",
            min: 0,
        });
    }
    if input.weight < 1 {
        return Err(DomainError::TooSmall {
            field: "weight",
            min: 1,
        });
    }

    if !input.test_model.is_empty() {
        validate_model_name(&input.test_model).map_err(|e| rename_field(e, "test_model"))?;
        if input.test_model.ends_with('*') {
            return Err(DomainError::invalid(
                "test_model",
                "a test model cannot be a wildcard",
            ));
        }
    }

    input.proxy = normalize_proxy(&input.proxy)?;
    Ok(())
}

fn rename_field(e: DomainError, field: &'static str) -> DomainError {
    match e {
        DomainError::Required { .. } => DomainError::Required { field },
        DomainError::Invalid { reason, .. } => DomainError::Invalid { field, reason },
        other => other,
    }
}

fn normalize_headers(text: &str) -> Result<String, DomainError> {
    if text.is_empty() {
        return Ok("{}".to_owned());
    }
    let map = string_map("custom_headers", text)?;
    for (name, value) in &map {
        if !name.bytes().all(is_header_token_byte) {
            return Err(DomainError::invalid(
                "custom_headers",
                format!("'{name}' is not a valid header name"),
            ));
        }
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err(DomainError::invalid(
                "custom_headers",
                format!("the value of '{name}' contains control characters"),
            ));
        }
    }
    serde_json::to_string(&map).map_err(|e| DomainError::invalid("custom_headers", e.to_string()))
}

/// RFC 9110 `tchar`.
fn is_header_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn normalize_config(text: &str) -> Result<String, DomainError> {
    if text.is_empty() {
        return Ok("{}".to_owned());
    }
    let mut value = Value::Object(json_object("config", text)?);
    trim_strings(&mut value);
    serde_json::to_string(&value).map_err(|e| DomainError::invalid("config", e.to_string()))
}

fn normalize_proxy(text: &str) -> Result<String, DomainError> {
    if text.is_empty() {
        return Ok(String::new());
    }
    let bad = || {
        DomainError::invalid(
            "proxy",
            "must be an http://, https://, socks5:// or socks5h:// URL",
        )
    };
    let (scheme, rest) = text.split_once("://").ok_or_else(bad)?;
    let scheme_ok = ["http", "https", "socks5", "socks5h"]
        .iter()
        .any(|s| s.eq_ignore_ascii_case(scheme));
    if !scheme_ok
        || rest.is_empty()
        || rest.starts_with('/')
        || text.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(bad());
    }
    Ok(text.trim_end_matches('/').to_owned())
}

/// A cloud region name as it appears in a host name (`us-east-1`, `europe-west4`, `global`):
/// 1 to 40 ASCII letters, digits and `-`. Vertex AI and AWS Bedrock build their host from the
/// region, so anything else (`/`, `@`, `.`) could move the request to another host.
pub fn is_region_name(region: &str) -> bool {
    !region.is_empty()
        && region.len() <= 40
        && region
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Checks what a key's own text says about where it is sent: an AWS Bedrock key
/// `ACCESS_KEY|SECRET_KEY|REGION[|SESSION_TOKEN]` must name a region ([`is_region_name`]), since
/// the default endpoint is `bedrock-runtime.{region}.amazonaws.com`. Other keys are opaque.
pub fn validate_channel_key(channel_type: i32, key: &str) -> Result<(), DomainError> {
    if channel_type == TYPE_AWS_BEDROCK {
        if let Some(region) = key.split('|').nth(2).map(str::trim) {
            if !is_region_name(region) {
                return Err(DomainError::invalid(
                    "key",
                    "the region of an AWS key (ACCESS_KEY|SECRET_KEY|REGION) must be a region name",
                ));
            }
        }
    }
    Ok(())
}

/// The `config` keys that do not decide where a channel's requests go (Azure's `api-version` is
/// a query parameter of the same host; only-chat, voice mapping, other parameters and the
/// provider switches choose requests or change their bodies). Every other key counts as part of
/// the destination (Vertex AI's `region` picks the host), including keys a later version may
/// read.
pub const NON_DESTINATION_CONFIG_KEYS: &[&str] = &[
    AZURE_API_VERSION_KEY,
    crate::channel_settings::ONLY_CHAT_KEY,
    crate::channel_settings::VOICE_MAPPING_KEY,
    crate::channel_settings::CUSTOM_PARAMETER_KEY,
    crate::channel_settings::WEB_SEARCH_KEY,
    crate::channel_settings::CODE_EXECUTION_KEY,
    crate::channel_settings::PLUGIN_KEY,
    crate::channel_settings::KNOWLEDGE_ID_KEY,
    crate::channel_settings::KNOWLEDGE_TEMPLATE_KEY,
];

/// The fields that decide where a channel's key is sent, in the order checked.
pub const DESTINATION_FIELDS: &[&str] = &["type", "base_url", "proxy", "custom_headers", "config"];

/// The destination fields ([`DESTINATION_FIELDS`]) that differ between a channel as stored
/// (`before`) and as it would be saved (`after`, validated by [`validate_channel`]): the type
/// (it picks the adapter, the default address and how the key is sent), the base URL (an empty
/// one counts as the type's default), the proxy, the custom headers and the `config` keys other
/// than [`NON_DESTINATION_CONFIG_KEYS`]. JSON fields are compared as values, so formatting does
/// not count as a change. Only root may change these while keeping a key it alone can read.
pub fn destination_changes(before: &ChannelInput, after: &ChannelInput) -> Vec<&'static str> {
    let mut out = Vec::new();
    if before.channel_type != after.channel_type {
        out.push("type");
    }
    let base = |c: &ChannelInput| {
        let url = c.base_url.trim().trim_end_matches('/');
        if url.is_empty() {
            channel_type(c.channel_type)
                .map(|t| t.default_base_url)
                .unwrap_or_default()
                .to_owned()
        } else {
            url.to_owned()
        }
    };
    if base(before) != base(after) {
        out.push("base_url");
    }
    let proxy = |c: &ChannelInput| c.proxy.trim().trim_end_matches('/').to_owned();
    if proxy(before) != proxy(after) {
        out.push("proxy");
    }
    if json_map(&before.custom_headers, &[]) != json_map(&after.custom_headers, &[]) {
        out.push("custom_headers");
    }
    if json_map(&before.config, NON_DESTINATION_CONFIG_KEYS)
        != json_map(&after.config, NON_DESTINATION_CONFIG_KEYS)
    {
        out.push("config");
    }
    out
}

/// A JSON object field as a value without `skip` keys; empty text is `{}`, text that is not
/// JSON is kept as a string (so that any change to it counts).
fn json_map(text: &str, skip: &[&str]) -> Value {
    let text = text.trim();
    if text.is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut o)) => {
            for k in skip {
                o.remove(*k);
            }
            Value::Object(o)
        }
        Ok(other) => other,
        Err(_) => Value::String(text.to_owned()),
    }
}

/// The URLs a channel makes the server contact besides the fixed vendor hosts: its base URL,
/// its proxy and, for Vertex AI, the `token_uri` of the service-account key. (The defaults of
/// Bedrock and Vertex AI are built from a validated region under amazonaws.com and
/// googleapis.com.) The outbound policy checks these when someone other than root saves them.
pub fn destination_urls(input: &ChannelInput) -> Vec<String> {
    let mut out = Vec::new();
    for u in [&input.base_url, &input.proxy] {
        let u = u.trim();
        if !u.is_empty() {
            out.push(u.to_owned());
        }
    }
    if input.channel_type == TYPE_VERTEX_AI {
        if let Some(uri) = serde_json::from_str::<Value>(input.key.trim())
            .ok()
            .and_then(|v| {
                v.get("token_uri")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .filter(|u| !u.trim().is_empty())
        {
            out.push(uri.trim().to_owned());
        }
    }
    out
}

/// Whether an upstream HTTP status is worth retrying on another channel: 429 and 5xx, except
/// 504 and 524 (gateway timeouts: the request may still be running upstream). 408 and every
/// other 4xx are not retried. Timeouts and connection errors (no status) are the caller's call.
pub fn is_retryable_status(status: u16) -> bool {
    status == 429 || ((500..=599).contains(&status) && status != 504 && status != 524)
}

/// Messages that mean the channel's credentials or account are unusable (matched
/// case-insensitively as substrings).
pub const AUTO_DISABLE_MESSAGES: &[&str] = &[
    "invalid api key",
    "incorrect api key",
    "account deactivated",
    "insufficient_quota",
    "billing",
    "has been disabled",
    "permission denied",
    "credit balance is too low",
];

/// Whether an upstream failure should disable the channel (when auto-disable is on): status 401,
/// or a message containing (case-insensitively) one of [`AUTO_DISABLE_MESSAGES`] or one of the
/// operator's non-empty `keywords` (trimmed).
pub fn should_auto_disable(status: u16, message: &str, keywords: &[&str]) -> bool {
    if status == 401 {
        return true;
    }
    let msg = message.to_lowercase();
    AUTO_DISABLE_MESSAGES.iter().any(|k| msg.contains(k))
        || keywords
            .iter()
            .map(|k| k.trim())
            .filter(|k| !k.is_empty())
            .any(|k| msg.contains(&k.to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn valid_input() -> ChannelInput {
        ChannelInput {
            name: " main ".into(),
            channel_type: 1,
            key: " sk-upstream ".into(),
            base_url: "".into(),
            models: "gpt-4o, gpt-4o-mini ,gpt-4o,, o1*".into(),
            group: "default, vip,default".into(),
            model_mapping: "".into(),
            priority: 0,
            weight: 1,
            custom_headers: "".into(),
            config: "".into(),
            test_model: "".into(),
            proxy: "".into(),
            tag: " t ".into(),
            disabled_stream: "".into(),
        }
    }

    #[test]
    fn input_defaults() {
        let c: ChannelInput = serde_json::from_str(r#"{"name": "x", "type": 1}"#).unwrap();
        assert_eq!(c.weight, 1);
        assert_eq!(c.channel_type, 1);
        assert_eq!(c.priority, 0);
    }

    #[test]
    fn status_round_trip() {
        for s in [
            ChannelStatus::Enabled,
            ChannelStatus::ManuallyDisabled,
            ChannelStatus::AutoDisabled,
        ] {
            assert_eq!(ChannelStatus::try_from(s.as_i32()), Ok(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), s.as_i32().to_string());
        }
        assert!(ChannelStatus::try_from(4).is_err());
    }

    #[test]
    fn channel_types_table() {
        let ids: Vec<i32> = CHANNEL_TYPES.iter().map(|t| t.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted, "ids sorted and unique");
        for t in CHANNEL_TYPES {
            assert!(!t.default_base_url.ends_with('/'), "{}", t.name);
            assert!(!t.default_base_url.ends_with("/v1"), "{}", t.name);
            if !t.default_base_url.is_empty() {
                assert_eq!(
                    normalize_url("u", t.default_base_url).as_deref(),
                    Ok(t.default_base_url)
                );
            }
        }
        assert_eq!(channel_type(1).map(|t| t.name), Some("OpenAI"));
        assert_eq!(
            channel_type(TYPE_DEEPSEEK).map(|t| t.default_base_url),
            Some("https://api.deepseek.com")
        );
        assert!(channel_type(2).is_none());
        assert!(channel_type(TYPE_MIDJOURNEY).is_some_and(|t| t.needs_base_url()));
        assert!(channel_type(TYPE_CUSTOM).is_some_and(|t| t.needs_base_url()));
        assert!(channel_type(TYPE_AZURE).is_some_and(|t| t.needs_base_url()));
        assert!(channel_type(TYPE_OLLAMA).is_some_and(|t| !t.needs_base_url()));
        assert!(channel_type(TYPE_AWS_BEDROCK).is_some_and(|t| !t.needs_base_url()));
        assert!(channel_type(TYPE_ANTHROPIC).is_some_and(|t| !t.openai_compatible));
    }

    #[test]
    fn csv() {
        assert_eq!(parse_csv(" a, b ,,a , c"), vec!["a", "b", "c"]);
        assert!(parse_csv(" , ,").is_empty());
        assert_eq!(parse_csv("B,b"), vec!["B", "b"]);
    }

    #[test]
    fn model_names() {
        for ok in [
            "gpt-4o",
            "gpt-4*",
            "a*",
            "claude-3-5-sonnet@20240620",
            "模型",
        ] {
            assert!(validate_model_name(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            validate_model_name(""),
            Err(DomainError::Required { field: "model" })
        );
        for bad in ["*", "**", "gpt*4", "*gpt", "gpt-4**", "gpt 4", "a,b", "a\n"] {
            assert!(validate_model_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn model_mappings() {
        assert!(ModelMapping::parse("").unwrap().is_empty());
        assert!(ModelMapping::parse("  {} ").unwrap().is_empty());
        let m = ModelMapping::parse(r#"{"gpt-4": " gpt-4-0613 ", "a": "b"}"#).unwrap();
        assert_eq!(m.map("gpt-4"), "gpt-4-0613");
        assert_eq!(m.map("a"), "b");
        assert_eq!(m.map("b"), "b");
        assert_eq!(m.to_json(), r#"{"a":"b","gpt-4":"gpt-4-0613"}"#);
        assert_eq!(ModelMapping::parse(&m.to_json()).unwrap(), m);
        for bad in [
            "[]",
            "null",
            "\"x\"",
            "{",
            r#"{"a": 1}"#,
            r#"{"a": ""}"#,
            r#"{" ": "b"}"#,
            r#"{"a": null}"#,
        ] {
            let e = ModelMapping::parse(bad).unwrap_err();
            assert!(e.to_string().contains("model_mapping"), "{bad}: {e}");
        }
    }

    #[test]
    fn validates_and_normalises_a_channel() {
        let mut c = valid_input();
        validate_channel(&mut c).unwrap();
        assert_eq!(c.name, "main");
        assert_eq!(c.key, "sk-upstream");
        assert_eq!(c.base_url, "https://api.openai.com");
        assert_eq!(c.models, "gpt-4o,gpt-4o-mini,o1*");
        assert_eq!(c.group, "default,vip");
        assert_eq!(c.model_mapping, "{}");
        assert_eq!(c.custom_headers, "{}");
        assert_eq!(c.config, "{}");
        assert_eq!(c.tag, "t");

        let mut c = valid_input();
        c.base_url = "https://proxy.example.com/ ".into();
        c.model_mapping = r#"{"gpt-4o": "gpt-4o-2024-08-06"}"#.into();
        c.custom_headers = r#"{"X-Org": " acme "}"#.into();
        c.config = r#"{"region": " us ", "n": 1}"#.into();
        c.proxy = "socks5://127.0.0.1:1080/".into();
        c.test_model = "gpt-4o-mini".into();
        c.priority = 5;
        c.weight = 10;
        validate_channel(&mut c).unwrap();
        assert_eq!(c.base_url, "https://proxy.example.com");
        assert_eq!(c.model_mapping, r#"{"gpt-4o":"gpt-4o-2024-08-06"}"#);
        assert_eq!(c.custom_headers, r#"{"X-Org":"acme"}"#);
        assert_eq!(c.config, r#"{"n":1,"region":"us"}"#);
        assert_eq!(c.proxy, "socks5://127.0.0.1:1080");
    }

    #[test]
    fn channel_errors() {
        let check = |f: fn(&mut ChannelInput), expected: DomainError| {
            let mut c = valid_input();
            f(&mut c);
            assert_eq!(validate_channel(&mut c), Err(expected));
        };
        check(
            |c| c.name = "  ".into(),
            DomainError::Required { field: "name" },
        );
        check(
            |c| c.channel_type = 0,
            DomainError::Required { field: "type" },
        );
        check(
            |c| c.key = "".into(),
            DomainError::Required { field: "key" },
        );
        check(
            |c| c.models = " , ".into(),
            DomainError::Required { field: "models" },
        );
        check(
            |c| c.group = "".into(),
            DomainError::Required { field: "group" },
        );
        check(
            |c| c.channel_type = TYPE_CUSTOM,
            DomainError::Required { field: "base_url" },
        );
        check(
            |c| c.priority = -1,
            DomainError::TooSmall {
                field: "priority",
                min: 0,
            },
        );
        check(
            |c| c.weight = 0,
            DomainError::TooSmall {
                field: "weight",
                min: 1,
            },
        );
        assert_eq!(
            DomainError::Required { field: "name" }.to_string(),
            "name cannot be empty"
        );

        let field_of = |f: fn(&mut ChannelInput)| {
            let mut c = valid_input();
            f(&mut c);
            match validate_channel(&mut c) {
                Err(DomainError::Invalid { field, .. }) => field,
                other => panic!("expected invalid, got {other:?}"),
            }
        };
        assert_eq!(field_of(|c| c.channel_type = 2), "type");
        assert_eq!(field_of(|c| c.models = "gpt*4".into()), "models");
        assert_eq!(field_of(|c| c.group = "a b".into()), "group");
        assert_eq!(field_of(|c| c.base_url = "ftp://x".into()), "base_url");
        assert_eq!(
            field_of(|c| c.model_mapping = "[1]".into()),
            "model_mapping"
        );
        assert_eq!(
            field_of(|c| c.custom_headers = "{".into()),
            "custom_headers"
        );
        assert_eq!(
            field_of(|c| c.custom_headers = r#"{"a": 1}"#.into()),
            "custom_headers"
        );
        assert_eq!(
            field_of(|c| c.custom_headers = r#"{"bad name": "x"}"#.into()),
            "custom_headers"
        );
        assert_eq!(
            field_of(|c| c.custom_headers = r#"{"X": "a\r\nInjected: 1"}"#.into()),
            "custom_headers"
        );
        assert_eq!(field_of(|c| c.config = "[]".into()), "config");
        assert_eq!(field_of(|c| c.test_model = "gpt*".into()), "test_model");
        assert_eq!(field_of(|c| c.proxy = "ftp://x".into()), "proxy");
        assert_eq!(field_of(|c| c.proxy = "http://".into()), "proxy");
    }

    #[test]
    fn types_with_defaults_or_derived_endpoints() {
        for ty in [
            TYPE_OLLAMA,
            TYPE_ANTHROPIC,
            TYPE_AWS_BEDROCK,
            TYPE_VERTEX_AI,
        ] {
            let mut c = valid_input();
            c.channel_type = ty;
            validate_channel(&mut c).unwrap();
            assert_eq!(
                c.base_url,
                channel_type(ty).map(|t| t.default_base_url).unwrap()
            );
        }
        let mut c = valid_input();
        c.channel_type = TYPE_AZURE;
        c.base_url = "https://acme.openai.azure.com/".into();
        validate_channel(&mut c).unwrap();
        assert_eq!(c.base_url, "https://acme.openai.azure.com");
    }

    #[test]
    fn retryable_statuses() {
        assert!(is_retryable_status(429));
        assert!(is_retryable_status(500));
        assert!(is_retryable_status(502));
        assert!(is_retryable_status(503));
        assert!(is_retryable_status(599));
        for s in [200, 400, 401, 403, 404, 408, 413, 504, 524, 600] {
            assert!(!is_retryable_status(s), "{s}");
        }
    }

    #[test]
    fn auto_disable() {
        assert!(should_auto_disable(401, "", &[]));
        assert!(should_auto_disable(
            400,
            "Incorrect API key provided: sk-abc",
            &[]
        ));
        assert!(should_auto_disable(
            429,
            "You exceeded your current quota (insufficient_quota)",
            &[]
        ));
        assert!(should_auto_disable(
            400,
            "Your credit balance is too low to access the Anthropic API",
            &[]
        ));
        assert!(should_auto_disable(
            403,
            "Organization HAS BEEN DISABLED.",
            &[]
        ));
        assert!(!should_auto_disable(500, "upstream overloaded", &[]));
        assert!(!should_auto_disable(
            500,
            "upstream overloaded",
            &["", "  "]
        ));
        assert!(should_auto_disable(
            500,
            "Upstream OVERLOADED",
            &[" overloaded "]
        ));
    }

    proptest! {
        #[test]
        fn parse_csv_is_idempotent_and_clean(s in "[a-c, ]{0,24}") {
            let once = parse_csv(&s);
            prop_assert_eq!(parse_csv(&once.join(",")), once.clone());
            for e in &once {
                prop_assert!(!e.is_empty() && e.trim() == e && !e.contains(','));
            }
            let mut d = once.clone();
            d.sort();
            d.dedup();
            prop_assert_eq!(d.len(), once.len());
        }
    }

    #[test]
    fn azure_versions_and_config() {
        for ok in ["2024-10-21", "2025-01-01-preview", "2024-05-01-preview.1"] {
            assert!(validate_azure_api_version(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "2024-1-21",
            "2024/10/21",
            "2024-10-21-",
            "2024-10-21 preview",
            "latest",
        ] {
            assert!(validate_azure_api_version(bad).is_err(), "{bad:?}");
        }
        let c = set_config_string("", AZURE_API_VERSION_KEY, "2024-10-21");
        assert_eq!(
            config_string(&c, AZURE_API_VERSION_KEY).as_deref(),
            Some("2024-10-21")
        );
        let c = set_config_string(
            r#"{"region":"us"}"#,
            AZURE_API_VERSION_KEY,
            "2025-01-01-preview",
        );
        assert_eq!(c, r#"{"api_version":"2025-01-01-preview","region":"us"}"#);
    }

    #[test]
    fn removing_a_model() {
        assert_eq!(remove_model("a, b,c", "b").as_deref(), Some("a,c"));
        assert_eq!(remove_model("a", "a").as_deref(), Some(""));
        assert_eq!(remove_model("a,b", "c"), None);
        assert_eq!(
            remove_model("gpt-4*,gpt-4", "gpt-4").as_deref(),
            Some("gpt-4*")
        );
    }

    #[test]
    fn vendors_with_their_own_version_path() {
        assert_eq!(
            vendor_path(1, "/v1/chat/completions"),
            "/v1/chat/completions"
        );
        assert_eq!(
            vendor_path(16, "/v1/chat/completions"),
            "/api/paas/v4/chat/completions"
        );
        assert_eq!(vendor_path(15, "/v1/embeddings"), "/v2/embeddings");
        assert_eq!(vendor_path(16, "/v1/models"), "/api/paas/v4/models");
        assert!(channel_type(15).is_some_and(|t| t.openai_compatible));
        assert!(channel_type(16).is_some_and(|t| t.openai_compatible));
    }

    #[test]
    fn destination_fields() {
        let mut before = valid_input();
        validate_channel(&mut before).unwrap();
        let same = |f: fn(&mut ChannelInput)| {
            let mut after = before.clone();
            f(&mut after);
            validate_channel(&mut after).unwrap();
            destination_changes(&before, &after)
        };
        // Not the destination: name, key, models, group, mapping, priority, weight, test model,
        // tag, Azure's API version, formatting of JSON fields, the default base URL spelled out.
        assert!(same(|c| {
            c.name = "other".into();
            c.key = "sk-other".into();
            c.models = "a".into();
            c.group = "vip".into();
            c.model_mapping = r#"{"a":"b"}"#.into();
            c.priority = 3;
            c.weight = 9;
            c.test_model = "a".into();
            c.tag = "x".into();
            c.config = r#"{ "api_version": "2025-01-01-preview" }"#.into();
            c.custom_headers = " { } ".into();
            c.base_url = "https://api.openai.com/".into();
        })
        .is_empty());
        assert!(same(|c| c.base_url = String::new()).is_empty());
        assert_eq!(same(|c| c.channel_type = TYPE_DEEPSEEK), ["type"]);
        assert_eq!(
            same(|c| {
                c.channel_type = TYPE_OLLAMA;
                c.base_url = String::new();
            }),
            ["type", "base_url"]
        );
        assert_eq!(
            same(|c| c.base_url = "https://evil.example".into()),
            ["base_url"]
        );
        assert_eq!(
            same(|c| c.proxy = "http://127.0.0.1:8080".into()),
            ["proxy"]
        );
        assert_eq!(
            same(|c| c.custom_headers = r#"{"Host":"evil.example"}"#.into()),
            ["custom_headers"]
        );
        assert_eq!(same(|c| c.config = r#"{"region":"x"}"#.into()), ["config"]);
        assert_eq!(same(|c| c.config = r#"{"future":1}"#.into()), ["config"]);
        // JSON formatting and key order do not count.
        let mut b = before.clone();
        b.custom_headers = r#"{"A":"1","B":"2"}"#.into();
        let mut a = b.clone();
        a.custom_headers = "{\n  \"B\": \"2\",\n  \"A\": \"1\"\n}".into();
        assert!(destination_changes(&b, &a).is_empty());
        assert_eq!(DESTINATION_FIELDS.len(), 5);
    }

    #[test]
    fn regions_cannot_move_the_host() {
        for ok in ["us-east-1", "europe-west4", "global", "us-central1"] {
            assert!(is_region_name(ok), "{ok}");
        }
        for bad in [
            "",
            "evil.example/",
            "x@evil.example",
            "us east",
            "a.b",
            &"a".repeat(41),
        ] {
            assert!(!is_region_name(bad), "{bad}");
        }
        let mut c = valid_input();
        c.channel_type = TYPE_VERTEX_AI;
        c.config = r#"{"region":"127.0.0.1/"}"#.into();
        assert!(matches!(
            validate_channel(&mut c),
            Err(DomainError::InvalidCoded {
                code: ErrorCode::InvalidRegion,
                field: "config",
                ..
            })
        ));
        let mut c = valid_input();
        c.channel_type = TYPE_AWS_BEDROCK;
        c.key = "AK|SK|x@evil.example/".into();
        assert!(matches!(
            validate_channel(&mut c),
            Err(DomainError::Invalid { field: "key", .. })
        ));
        c.key = "AK|SK|us-east-1".into();
        assert!(validate_channel(&mut c).is_ok());
        assert!(validate_channel_key(TYPE_OPENAI, "a|b|c/d").is_ok());
    }

    #[test]
    fn destination_urls_of_a_channel() {
        let mut c = valid_input();
        c.base_url = "http://10.0.0.1:8080".into();
        c.proxy = "socks5://127.0.0.1:1080".into();
        assert_eq!(
            destination_urls(&c),
            ["http://10.0.0.1:8080", "socks5://127.0.0.1:1080"]
        );
        c.channel_type = TYPE_VERTEX_AI;
        c.base_url = String::new();
        c.proxy = String::new();
        c.key = r#"{"project_id":"p","token_uri":"http://169.254.169.254/token"}"#.into();
        assert_eq!(destination_urls(&c), ["http://169.254.169.254/token"]);
        c.key = "not json".into();
        assert!(destination_urls(&c).is_empty());
    }
}
