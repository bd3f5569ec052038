//! The settings catalogue (spec section 9 and the one-api family's option names): every setting
//! has a kind, a default and a validation rule, so `/api/option` can refuse bad values before they
//! reach the database and every node reads the same typed values.

use crate::validate;
use crate::DomainError;
use crate::ErrorCode;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionKind {
    Bool,
    /// Integer within an inclusive range.
    Int {
        min: i64,
        max: i64,
    },
    /// Decimal number within an inclusive range.
    Float {
        min: f64,
        max: f64,
    },
    /// A share: a number greater than 0 and at most 1 (refused with `invalid_ratio`).
    Ratio,
    /// Free text (names, plain text).
    Text,
    /// HTML shown in the console (notice, footer): stored cleaned by [`crate::html::sanitize`].
    Html,
    /// A page (About, home page): an `http(s)://` address to show in a frame, or HTML cleaned by
    /// [`crate::html::sanitize`] ([`crate::html::page_content`]).
    Page,
    /// An http(s) URL, stored without its trailing slash; empty allowed.
    Url,
    /// JSON text whose top level is an object.
    JsonObject,
    /// JSON text whose top level is an array.
    JsonArray,
    /// Empty, or 1 to `max` characters of `A-Z a-z 0-9 _ -` (Telegram's webhook secret).
    Token {
        max: usize,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct OptionDef {
    pub key: &'static str,
    pub kind: OptionKind,
    pub default: &'static str,
    /// Write-only: never returned by `GET /api/option` (client secrets, tokens, passwords).
    pub secret: bool,
    /// Only root reads and changes it: secrets, sign-in and mail configuration, and what decides
    /// where the server itself connects or how quota converts to money. Administrators manage
    /// the rest (spec 2.3 gives them the settings item).
    pub root_only: bool,
}

const fn def(key: &'static str, kind: OptionKind, default: &'static str) -> OptionDef {
    OptionDef {
        key,
        kind,
        default,
        secret: false,
        root_only: false,
    }
}

/// A setting only root reads and changes.
const fn root(key: &'static str, kind: OptionKind, default: &'static str) -> OptionDef {
    OptionDef {
        root_only: true,
        ..def(key, kind, default)
    }
}

const fn secret(key: &'static str) -> OptionDef {
    OptionDef {
        key,
        kind: OptionKind::Text,
        default: "",
        secret: true,
        root_only: true,
    }
}

const BOOL: OptionKind = OptionKind::Bool;
const TEXT: OptionKind = OptionKind::Text;
const URL: OptionKind = OptionKind::Url;
const HTML: OptionKind = OptionKind::Html;
const PAGE: OptionKind = OptionKind::Page;
const fn int(min: i64, max: i64) -> OptionKind {
    OptionKind::Int { min, max }
}
const fn float(min: f64, max: f64) -> OptionKind {
    OptionKind::Float { min, max }
}

pub const DEFAULT_CHAT_LINKS: &str = r#"[{"name":"ChatGPT Next","url":"https://app.nextchat.dev/#/?settings={\"key\":\"{key}\",\"url\":\"{server}\"}","show":true,"sort":1},{"name":"chatgpt-web-midjourney-proxy","url":"https://vercel.ddaiai.com/#/?settings={\"key\":\"{key}\",\"url\":\"{server}\"}","show":true,"sort":2},{"name":"AMA 问天","url":"ama://set-api-key?server={server}&key={key}","show":false,"sort":3},{"name":"OpenCat","url":"opencat://team/join?domain={server}&token={key}","show":false,"sort":4}]"#;

/// Every setting the product knows. Keys follow the one-api family where a name exists there.
pub const CATALOGUE: &[OptionDef] = &[
    // Site and content.
    def("SystemName", TEXT, "Switchboard"),
    def("Logo", URL, ""),
    root("ServerAddress", URL, ""),
    def("Footer", HTML, ""),
    def("Notice", HTML, ""),
    def("About", PAGE, ""),
    def("HomePageContent", PAGE, ""),
    def("TopUpLink", URL, ""),
    def("ChatLink", URL, ""),
    def("ChatLinks", OptionKind::JsonArray, DEFAULT_CHAT_LINKS),
    def("Language", TEXT, "zh_CN"),
    def("DisplayInCurrencyEnabled", BOOL, "true"),
    root("QuotaPerUnit", int(1, 1_000_000_000), "500000"),
    root("UptimeKumaEnabled", BOOL, "false"),
    root("UptimeKumaUrl", URL, ""),
    root("UptimeKumaStatusPageName", TEXT, ""),
    def("UserInvoiceMonth", BOOL, "false"),
    // Sign-in and registration.
    root("PasswordLoginEnabled", BOOL, "true"),
    root("PasswordRegisterEnabled", BOOL, "true"),
    root("RegisterEnabled", BOOL, "true"),
    root("EmailVerificationEnabled", BOOL, "false"),
    root("EmailDomainRestrictionEnabled", BOOL, "false"),
    root("EmailDomainWhitelist", TEXT, "gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com"),
    root("GitHubOAuthEnabled", BOOL, "false"),
    root("GitHubClientId", TEXT, ""),
    secret("GitHubClientSecret"),
    root("OIDCAuthEnabled", BOOL, "false"),
    root("OIDCClientId", TEXT, ""),
    secret("OIDCClientSecret"),
    root("OIDCIssuer", URL, ""),
    root("OIDCScopes", TEXT, "openid,email,profile"),
    root("OIDCUsernameClaims", TEXT, "preferred_username"),
    root("OIDCEmailClaims", TEXT, "email"),
    root("LarkAuthEnabled", BOOL, "false"),
    root("LarkClientId", TEXT, ""),
    secret("LarkClientSecret"),
    root("WeChatAuthEnabled", BOOL, "false"),
    root("WeChatServerAddress", URL, ""),
    secret("WeChatServerToken"),
    root("WeChatAccountQRCodeImageURL", URL, ""),
    root("TurnstileCheckEnabled", BOOL, "false"),
    root("TurnstileSiteKey", TEXT, ""),
    secret("TurnstileSecretKey"),
    root("TelegramBotName", TEXT, ""),
    secret("TelegramBotToken"),
    OptionDef {
        key: "TelegramWebhookSecret",
        kind: OptionKind::Token { max: 256 },
        default: "",
        secret: true,
        root_only: true,
    },
    root("SMTPServer", TEXT, ""),
    root("SMTPPort", int(1, 65535), "587"),
    root("SMTPAccount", TEXT, ""),
    root("SMTPFrom", TEXT, ""),
    secret("SMTPToken"),
    // Operation: quota and rewards.
    def("QuotaForNewUser", int(0, i64::MAX), "0"),
    def("QuotaForInviter", int(0, i64::MAX), "0"),
    def("QuotaForInvitee", int(0, i64::MAX), "0"),
    def("PreConsumedQuota", int(0, i64::MAX), "500"),
    // How far a settled request may take a balance below zero (quota; 0: never).
    def("OverdraftTolerance", int(0, i64::MAX), "0"),
    // Output tokens reserved for a request without max_tokens when the price row does not know
    // the model's output limit.
    def("DefaultMaxOutputTokens", int(1, 10_000_000), "4096"),
    def("QuotaRemindThreshold", int(0, i64::MAX), "1000"),
    def("DefaultPriceEnabled", BOOL, "false"),
    def("ExtraTokenPriceJson", OptionKind::JsonObject, "{}"),
    // Where "sync prices" fetches a price list from (`POST /api/prices/sync` without a `url`).
    root("PriceSyncUrl", URL, ""),
    // Outbound URL policy: server-side fetches that administrators point somewhere (price sync;
    // channel addresses saved by someone other than root) may reach loopback, private,
    // link-local and other non-public addresses only when this is on (docs/security.md).
    root("AllowPrivateOutbound", BOOL, "false"),
    def("ApproximateTokenEnabled", BOOL, "false"),
    def("LogConsumeEnabled", BOOL, "true"),
    // Relayed calls that failed are logged (type 5, no charge) with the reason the client got.
    def("ErrorLogEnabled", BOOL, "true"),
    def("LogCleanupDays", int(0, 3650), "0"),
    // Operation: channels and retry.
    def("RetryTimes", int(0, 10), "0"),
    def("RetryCooldownSeconds", int(0, 86_400), "5"),
    def("RetryTimeOut", int(0, 3_600), "0"),
    def("AutomaticDisableChannelEnabled", BOOL, "false"),
    def("AutomaticEnableChannelEnabled", BOOL, "false"),
    def("ChannelDisableThreshold", float(0.0, 3_600.0), "5"),
    def("DisableChannelKeywords", TEXT, "Your credit balance is too low\nThis organization has been disabled.\nYou exceeded your current quota\nPermission denied\nThe security token included in the request is invalid\nOperation not allowed\nYour account is not authorized"),
    def("ChannelTestFrequency", int(0, 100_000), "0"),
    // Smarter routing (docs/routing.md), per node, both off by default: a
    // windowed error-ratio circuit breaker per channel and model, and latency-aware choice
    // (peak EWMA, power of two choices) within a priority.
    def("CircuitBreakerEnabled", BOOL, "false"),
    def("CircuitBreakerErrorRatio", OptionKind::Ratio, "0.5"),
    def("CircuitBreakerMinRequests", int(1, 1_000_000), "10"),
    def("CircuitBreakerWindowSeconds", int(1, 86_400), "60"),
    def("CircuitBreakerOpenSeconds", int(1, 86_400), "30"),
    def("LatencyAwareRouting", BOOL, "false"),
    // Inbound protocols besides OpenAI's: Anthropic Messages (`/v1/messages`,
    // `/claude/v1/messages`) and Gemini (`/gemini/{version}/...`). Off: those paths answer 404.
    def("ClaudeAPIEnabled", BOOL, "true"),
    def("GeminiAPIEnabled", BOOL, "true"),
    // Money: what quota costs (the exchange rate and the discounts) is root's, as are the
    // gateways' fees (`routes::payments`).
    root("PaymentUSDRate", float(0.0, 1_000_000.0), "7.3"),
    def("PaymentMinAmount", int(1, 1_000_000), "1"),
    root("RechargeDiscount", OptionKind::JsonObject, "{}"),
    // Chat cache and Midjourney.
    def("ChatCacheEnabled", BOOL, "false"),
    def("ChatCacheExpireMinute", int(1, 100_000), "5"),
    // What a cache hit costs, as a share of what the original answer cost (0: free).
    def("ChatCacheRatio", float(0.0, 1.0), "0"),
    // Most answers kept (the oldest go first), and the largest answer kept, in KiB.
    def("ChatCacheMaxEntries", int(100, 10_000_000), "10000"),
    def("ChatCacheMaxEntryKB", int(1, 16_384), "512"),
    def("MjNotifyEnabled", BOOL, "false"),
];

/// Schemes a chat-client link (`ChatLinks`) may use: web addresses, and the own schemes of the
/// built-in desktop clients (AMA 问天 `ama://`, OpenCat `opencat://`, spec "Chat-link entry").
/// Anything else (`javascript:`, `data:`, `file:`, ...) is refused with `invalid_chat_link`.
pub const CHAT_LINK_SCHEMES: [&str; 4] = ["http", "https", "ama", "opencat"];

/// Every entry of a `ChatLinks` list is an object whose `url` starts with one of
/// [`CHAT_LINK_SCHEMES`] (`scheme:`, letters compared without case).
fn chat_links(items: &[Value]) -> Result<(), DomainError> {
    for (i, item) in items.iter().enumerate() {
        let url = item
            .get("url")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or("");
        let scheme = url.split_once(':').map(|(s, _)| s).unwrap_or("");
        if !CHAT_LINK_SCHEMES
            .iter()
            .any(|allowed| scheme.eq_ignore_ascii_case(allowed))
        {
            return Err(DomainError::invalid_coded(
                ErrorCode::InvalidChatLink,
                "ChatLinks",
                format!(
                    "entry {} has the address {url:?}: a chat link must start with http://, https://, ama:// or opencat://",
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

pub fn find(key: &str) -> Option<&'static OptionDef> {
    // Read on the relay path for every setting left at its default (several per request): a
    // map, not a scan of the catalogue, hashed with FNV-1a (the keys are ours and short; the
    // default SipHash costs more than the rest of the look-up).
    static BY_KEY: std::sync::LazyLock<
        std::collections::HashMap<&'static str, &'static OptionDef, Fnv>,
    > = std::sync::LazyLock::new(|| CATALOGUE.iter().map(|d| (d.key, d)).collect());
    BY_KEY.get(key).copied()
}

/// FNV-1a, for maps keyed by the catalogue's own names.
#[derive(Default, Clone, Copy)]
struct Fnv;

impl std::hash::BuildHasher for Fnv {
    type Hasher = FnvHasher;
    fn build_hasher(&self) -> FnvHasher {
        FnvHasher(0xcbf2_9ce4_8422_2325)
    }
}

struct FnvHasher(u64);

impl std::hash::Hasher for FnvHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Validates a value for a setting and returns the canonical text to store (booleans as
/// `true`/`false`, numbers without padding, URLs without their trailing slash, JSON as given).
pub fn normalize(key: &str, value: &Value) -> Result<String, DomainError> {
    let def = find(key).ok_or_else(|| DomainError::UnknownOption(key.to_owned()))?;
    let field = def.key;
    let text = match value {
        Value::String(s) => s.trim().to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => String::new(),
        _ => {
            return Err(DomainError::invalid(
                field,
                "must be a string, number or boolean",
            ))
        }
    };
    match def.kind {
        OptionKind::Bool => match text.as_str() {
            "true" | "1" => Ok("true".into()),
            "false" | "0" => Ok("false".into()),
            _ => Err(DomainError::invalid(field, "must be true or false")),
        },
        OptionKind::Int { min, max } => {
            let n: i64 = text
                .parse()
                .map_err(|_| DomainError::invalid(field, "must be a whole number"))?;
            if n < min || n > max {
                return Err(DomainError::OutOfRange { field, min, max });
            }
            Ok(n.to_string())
        }
        OptionKind::Float { min, max } => {
            let n: f64 = text
                .parse()
                .map_err(|_| DomainError::invalid(field, "must be a number"))?;
            if !n.is_finite() || n < min || n > max {
                return Err(DomainError::invalid(
                    field,
                    format!("must be between {min} and {max}"),
                ));
            }
            Ok(n.to_string())
        }
        OptionKind::Ratio => match text.parse::<f64>() {
            Ok(n) if n.is_finite() && n > 0.0 && n <= 1.0 => Ok(n.to_string()),
            _ => Err(DomainError::invalid_coded(
                ErrorCode::InvalidRatio,
                field,
                "must be a number greater than 0 and at most 1",
            )),
        },
        OptionKind::Text => Ok(text),
        OptionKind::Html => Ok(crate::html::sanitize(&text)),
        OptionKind::Page => Ok(crate::html::page_content(&text)),
        OptionKind::Token { max } => {
            let ok = text.len() <= max
                && text
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if ok {
                Ok(text)
            } else {
                Err(DomainError::invalid(
                    field,
                    format!("must be at most {max} characters of A-Z, a-z, 0-9, _ and -"),
                ))
            }
        }
        OptionKind::Url => validate::normalize_url(field, &text),
        OptionKind::JsonObject => match validate::json_text(field, &text)? {
            Value::Object(_) => Ok(text),
            _ => Err(DomainError::invalid(field, "must be a JSON object")),
        },
        OptionKind::JsonArray => match validate::json_text(field, &text)? {
            Value::Array(items) if field == "ChatLinks" => {
                chat_links(&items)?;
                Ok(text)
            }
            Value::Array(_) => Ok(text),
            _ => Err(DomainError::invalid(field, "must be a JSON array")),
        },
    }
}

/// Typed reads over a key/value snapshot, falling back to the catalogue default when a stored
/// value is missing or (after a manual database edit) unparsable.
pub trait OptionValues {
    fn raw(&self, key: &str) -> Option<&str>;

    fn text(&self, key: &str) -> String {
        self.raw(key)
            .map(str::to_owned)
            .or_else(|| find(key).map(|d| d.default.to_owned()))
            .unwrap_or_default()
    }

    fn bool(&self, key: &str) -> bool {
        parse_or_default(self.raw(key), key, |s| match s {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        })
    }

    fn int(&self, key: &str) -> i64 {
        parse_or_default(self.raw(key), key, |s| s.parse().ok())
    }

    fn float(&self, key: &str) -> f64 {
        parse_or_default(self.raw(key), key, |s| s.parse().ok())
    }
}

fn parse_or_default<T: Default>(
    raw: Option<&str>,
    key: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> T {
    raw.and_then(&parse)
        .or_else(|| find(key).and_then(|d| parse(d.default)))
        .unwrap_or_default()
}

impl OptionValues for std::collections::HashMap<String, String> {
    fn raw(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    #[test]
    fn find_knows_every_setting_and_nothing_else() {
        // (Keys are unique: `keys_are_unique`.)
        for d in CATALOGUE {
            let found = find(d.key).unwrap();
            assert_eq!((found.key, found.default), (d.key, d.default));
        }
        assert!(find("NoSuchOption").is_none());
        assert!(find("").is_none());
    }

    #[test]
    fn every_default_is_valid_for_its_own_kind() {
        for d in CATALOGUE {
            let got = normalize(d.key, &json!(d.default));
            assert!(got.is_ok(), "default of {} rejected: {got:?}", d.key);
        }
    }

    #[test]
    fn keys_are_unique() {
        let mut keys: Vec<_> = CATALOGUE.iter().map(|d| d.key).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(n, keys.len());
    }

    #[test]
    fn values_are_typed_and_validated() {
        assert_eq!(
            normalize("RegisterEnabled", &json!(false)).as_deref(),
            Ok("false")
        );
        assert_eq!(
            normalize("RegisterEnabled", &json!("true")).as_deref(),
            Ok("true")
        );
        assert!(normalize("RegisterEnabled", &json!("yes")).is_err());
        assert_eq!(normalize("RetryTimes", &json!(3)).as_deref(), Ok("3"));
        assert_eq!(
            normalize("RetryTimes", &json!("11")),
            Err(DomainError::OutOfRange {
                field: "RetryTimes",
                min: 0,
                max: 10
            })
        );
        assert!(normalize("RetryTimes", &json!("2.5")).is_err());
        assert!(normalize("QuotaForNewUser", &json!(-1)).is_err());
        assert_eq!(
            normalize("ServerAddress", &json!("https://x.io/")).as_deref(),
            Ok("https://x.io")
        );
        assert!(normalize("ServerAddress", &json!("x.io")).is_err());
        assert!(normalize("RechargeDiscount", &json!("{\"10\":0.9}")).is_ok());
        assert!(normalize("RechargeDiscount", &json!("[1]")).is_err());
        assert!(normalize("RechargeDiscount", &json!("{oops")).is_err());
        assert!(normalize("ChatLinks", &json!("{}")).is_err());
        assert!(normalize("ChatLinks", &json!(DEFAULT_CHAT_LINKS)).is_ok());
        for bad in [
            r#"[{"name":"x","url":"javascript:alert(1)//{key}"}]"#,
            r#"[{"name":"x","url":" JavaScript:alert(1)"}]"#,
            r#"[{"name":"x","url":"data:text/html,<script>"}]"#,
            r#"[{"name":"x","url":"//evil.example/{key}"}]"#,
            r#"[{"name":"x"}]"#,
            r#"["https://example.com"]"#,
        ] {
            let e = normalize("ChatLinks", &json!(bad)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidChatLink, "{bad}");
        }
        assert!(normalize(
            "ChatLinks",
            &json!(r#"[{"name":"x","url":"HTTPS://chat.example/#/?key={key}"}]"#)
        )
        .is_ok());
        // Telegram accepts only these characters in a webhook secret.
        assert_eq!(
            normalize("TelegramWebhookSecret", &json!("a-Z_9")).unwrap(),
            "a-Z_9"
        );
        assert_eq!(normalize("TelegramWebhookSecret", &json!("")).unwrap(), "");
        assert!(normalize("TelegramWebhookSecret", &json!("has space")).is_err());
        assert!(normalize("TelegramWebhookSecret", &json!("x".repeat(257))).is_err());
        assert!(normalize("ChannelDisableThreshold", &json!("NaN")).is_err());
        // A ratio is greater than 0 and at most 1.
        assert_eq!(
            normalize("CircuitBreakerErrorRatio", &json!("0.25")).as_deref(),
            Ok("0.25")
        );
        assert_eq!(
            normalize("CircuitBreakerErrorRatio", &json!(1)).as_deref(),
            Ok("1")
        );
        for bad in [
            json!(0),
            json!("0"),
            json!(1.5),
            json!("abc"),
            json!(-0.5),
            json!("NaN"),
        ] {
            let e = normalize("CircuitBreakerErrorRatio", &bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidRatio, "{bad}");
        }
        assert!(normalize("CircuitBreakerOpenSeconds", &json!(-1)).is_err());
        assert!(normalize("CircuitBreakerMinRequests", &json!(0)).is_err());
        assert_eq!(
            normalize("Nope", &json!("1")),
            Err(DomainError::UnknownOption("Nope".into()))
        );
        assert!(normalize("Notice", &json!({"a": 1})).is_err());
    }

    #[test]
    fn typed_reads_fall_back_to_defaults() {
        let mut m = HashMap::new();
        assert_eq!(m.int("QuotaPerUnit"), 500_000);
        assert!(m.bool("RegisterEnabled"));
        m.insert("QuotaPerUnit".to_string(), "garbage".to_string());
        assert_eq!(m.int("QuotaPerUnit"), 500_000);
        m.insert("RegisterEnabled".to_string(), "false".to_string());
        assert!(!m.bool("RegisterEnabled"));
        assert_eq!(m.text("SystemName"), "Switchboard");
    }
}
