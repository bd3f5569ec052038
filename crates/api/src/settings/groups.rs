//! The settings outside the relay, typed: one group per concern of the catalogue
//! (`switchboard_domain::options::CATALOGUE`), parsed from the stored values once per write
//! ([`Typed::read`]). A value that is missing or (after a manual database edit) unparsable
//! reads as the catalogue's default, as [`OptionValues`] does; the API refuses such values on
//! write (`options::normalize`). This is the one place that names the keys: handlers read
//! fields (`state.settings.site().system_name`), so a misspelt key cannot fall back silently.

use rust_decimal::Decimal;
use serde_json::{json, Value};
use switchboard_domain::options::OptionValues;
use switchboard_domain::payment::decimal_of;

/// Every typed group, of one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed {
    pub site: Site,
    pub registration: Registration,
    pub sign_in: SignIn,
    pub smtp: Smtp,
    pub payment: Payment,
    pub telegram: Telegram,
    pub operation: Operation,
}

impl Typed {
    pub fn read(o: &impl OptionValues) -> Typed {
        Typed {
            site: Site::read(o),
            registration: Registration::read(o),
            sign_in: SignIn::read(o),
            smtp: Smtp::read(o),
            payment: Payment::read(o),
            telegram: Telegram::read(o),
            operation: Operation::read(o),
        }
    }
}

impl Default for Typed {
    /// The catalogue's defaults.
    fn default() -> Typed {
        Typed::read(&std::collections::HashMap::new())
    }
}

/// Site and content: what `/api/status` shows, and what links, e-mails, invoices and the bot
/// are made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// `SystemName`.
    pub system_name: String,
    /// `Logo`.
    pub logo: String,
    /// `ServerAddress` as stored ([`Site::origin`]: without its trailing slash).
    pub server_address: String,
    /// `Footer`.
    pub footer: String,
    /// `Notice`.
    pub notice: String,
    /// `About`.
    pub about: String,
    /// `HomePageContent`.
    pub home_page_content: String,
    /// `TopUpLink`.
    pub top_up_link: String,
    /// `ChatLink`.
    pub chat_link: String,
    /// `ChatLinks`, parsed; `None` when the stored text is not JSON.
    pub chat_links: Option<Value>,
    /// `Language`: the site's (`zh_CN`, `zh_HK`, `en`, `ja`).
    pub language: String,
    /// `DisplayInCurrencyEnabled`.
    pub display_in_currency: bool,
    /// `QuotaPerUnit`: quota per US dollar.
    pub quota_per_unit: i64,
    /// `UptimeKumaEnabled`.
    pub uptime_kuma_enabled: bool,
    /// `UptimeKumaUrl`.
    pub uptime_kuma_url: String,
    /// `UptimeKumaStatusPageName`.
    pub uptime_kuma_status_page_name: String,
    /// `UserInvoiceMonth`: monthly invoices are on.
    pub user_invoice_month: bool,
}

impl Site {
    fn read(o: &impl OptionValues) -> Site {
        Site {
            system_name: o.text("SystemName"),
            logo: o.text("Logo"),
            server_address: o.text("ServerAddress"),
            footer: o.text("Footer"),
            notice: o.text("Notice"),
            about: o.text("About"),
            home_page_content: o.text("HomePageContent"),
            top_up_link: o.text("TopUpLink"),
            chat_link: o.text("ChatLink"),
            chat_links: serde_json::from_str(&o.text("ChatLinks")).ok(),
            language: o.text("Language"),
            display_in_currency: o.bool("DisplayInCurrencyEnabled"),
            quota_per_unit: o.int("QuotaPerUnit"),
            uptime_kuma_enabled: o.bool("UptimeKumaEnabled"),
            uptime_kuma_url: o.text("UptimeKumaUrl"),
            uptime_kuma_status_page_name: o.text("UptimeKumaStatusPageName"),
            user_invoice_month: o.bool("UserInvoiceMonth"),
        }
    }

    /// `ServerAddress` without a trailing slash; `None` when it is not set.
    pub fn origin(&self) -> Option<String> {
        let base = self.server_address.trim().trim_end_matches('/');
        (!base.is_empty()).then(|| base.to_owned())
    }
}

/// Registration: who may register, how, and what a new account (and its inviter) is granted.
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    /// `RegisterEnabled`: new accounts at all (a password or a third-party sign-in).
    pub enabled: bool,
    /// `PasswordRegisterEnabled`.
    pub password: bool,
    /// `EmailVerificationEnabled`: registration needs an e-mailed code.
    pub email_verification: bool,
    /// `EmailDomainRestrictionEnabled`.
    pub email_domain_restriction: bool,
    /// `EmailDomainWhitelist`: the domains, trimmed, without empty entries.
    pub email_domain_whitelist: Vec<String>,
    /// `QuotaForNewUser`.
    pub quota_for_new_user: i64,
    /// `QuotaForInvitee`.
    pub quota_for_invitee: i64,
    /// `QuotaForInviter`.
    pub quota_for_inviter: i64,
}

impl Registration {
    fn read(o: &impl OptionValues) -> Registration {
        Registration {
            enabled: o.bool("RegisterEnabled"),
            password: o.bool("PasswordRegisterEnabled"),
            email_verification: o.bool("EmailVerificationEnabled"),
            email_domain_restriction: o.bool("EmailDomainRestrictionEnabled"),
            email_domain_whitelist: o
                .text("EmailDomainWhitelist")
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            quota_for_new_user: o.int("QuotaForNewUser"),
            quota_for_invitee: o.int("QuotaForInvitee"),
            quota_for_inviter: o.int("QuotaForInviter"),
        }
    }
}

/// A text setting with its key, for the messages that name it ("OIDCIssuer is empty").
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    pub key: &'static str,
    /// As stored.
    pub value: String,
}

impl Named {
    fn read(o: &impl OptionValues, key: &'static str) -> Named {
        Named {
            key,
            value: o.text(key),
        }
    }

    /// The value trimmed; `None` when that leaves nothing.
    pub fn non_empty(&self) -> Option<String> {
        let v = self.value.trim();
        (!v.is_empty()).then(|| v.to_owned())
    }
}

/// Sign-in: the password switch, the third-party providers and Turnstile.
#[derive(Debug, Clone, PartialEq)]
pub struct SignIn {
    /// `PasswordLoginEnabled`.
    pub password_login: bool,
    /// `GitHubOAuthEnabled`, `GitHubClientId`, `GitHubClientSecret`.
    pub github: OAuthApp,
    pub oidc: Oidc,
    /// `LarkAuthEnabled`, `LarkClientId`, `LarkClientSecret`.
    pub lark: OAuthApp,
    pub wechat: WeChat,
    pub turnstile: Turnstile,
}

/// An OAuth application at a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthApp {
    pub enabled: bool,
    pub client_id: Named,
    pub client_secret: Named,
}

/// OpenID Connect (`OIDC...`).
#[derive(Debug, Clone, PartialEq)]
pub struct Oidc {
    /// `OIDCAuthEnabled`.
    pub enabled: bool,
    pub client_id: Named,
    pub client_secret: Named,
    pub issuer: Named,
    /// `OIDCScopes`.
    pub scopes: String,
    /// `OIDCUsernameClaims`.
    pub username_claims: String,
    /// `OIDCEmailClaims`.
    pub email_claims: String,
}

/// WeChat sign-in through a WeChat server (`WeChat...`).
#[derive(Debug, Clone, PartialEq)]
pub struct WeChat {
    /// `WeChatAuthEnabled`.
    pub enabled: bool,
    pub server_address: Named,
    /// `WeChatServerToken`.
    pub server_token: String,
    /// `WeChatAccountQRCodeImageURL`.
    pub qrcode_image_url: String,
}

/// Cloudflare Turnstile on the public account forms (`Turnstile...`).
#[derive(Debug, Clone, PartialEq)]
pub struct Turnstile {
    /// `TurnstileCheckEnabled`.
    pub enabled: bool,
    /// `TurnstileSiteKey`.
    pub site_key: String,
    /// `TurnstileSecretKey`.
    pub secret_key: String,
}

impl SignIn {
    fn read(o: &impl OptionValues) -> SignIn {
        let app = |enabled: &str, id: &'static str, secret: &'static str| OAuthApp {
            enabled: o.bool(enabled),
            client_id: Named::read(o, id),
            client_secret: Named::read(o, secret),
        };
        SignIn {
            password_login: o.bool("PasswordLoginEnabled"),
            github: app("GitHubOAuthEnabled", "GitHubClientId", "GitHubClientSecret"),
            oidc: Oidc {
                enabled: o.bool("OIDCAuthEnabled"),
                client_id: Named::read(o, "OIDCClientId"),
                client_secret: Named::read(o, "OIDCClientSecret"),
                issuer: Named::read(o, "OIDCIssuer"),
                scopes: o.text("OIDCScopes"),
                username_claims: o.text("OIDCUsernameClaims"),
                email_claims: o.text("OIDCEmailClaims"),
            },
            lark: app("LarkAuthEnabled", "LarkClientId", "LarkClientSecret"),
            wechat: WeChat {
                enabled: o.bool("WeChatAuthEnabled"),
                server_address: Named::read(o, "WeChatServerAddress"),
                server_token: o.text("WeChatServerToken"),
                qrcode_image_url: o.text("WeChatAccountQRCodeImageURL"),
            },
            turnstile: Turnstile {
                enabled: o.bool("TurnstileCheckEnabled"),
                site_key: o.text("TurnstileSiteKey"),
                secret_key: o.text("TurnstileSecretKey"),
            },
        }
    }
}

/// Outgoing e-mail (`SMTP...`).
#[derive(Debug, Clone, PartialEq)]
pub struct Smtp {
    /// `SMTPServer`; empty: e-mail is not configured.
    pub server: String,
    /// `SMTPPort`.
    pub port: i64,
    /// `SMTPAccount`.
    pub account: String,
    /// `SMTPFrom`; empty: the account.
    pub from: String,
    /// `SMTPToken`.
    pub token: String,
}

impl Smtp {
    fn read(o: &impl OptionValues) -> Smtp {
        Smtp {
            server: o.text("SMTPServer"),
            port: o.int("SMTPPort"),
            account: o.text("SMTPAccount"),
            from: o.text("SMTPFrom"),
            token: o.text("SMTPToken"),
        }
    }
}

/// Online top-up: what quota costs.
#[derive(Debug, Clone, PartialEq)]
pub struct Payment {
    /// `PaymentUSDRate` (a float, "7.3" or "1e1"), as its shortest decimal text, exactly.
    pub usd_rate: Decimal,
    /// `PaymentMinAmount`: whole US dollars.
    pub min_amount: i64,
    /// `RechargeDiscount`, parsed (`Null` when the stored text is not JSON).
    pub recharge_discount: Value,
}

impl Payment {
    fn read(o: &impl OptionValues) -> Payment {
        Payment {
            usd_rate: decimal_of(&json!(o.float("PaymentUSDRate"))).unwrap_or_default(),
            min_amount: o.int("PaymentMinAmount"),
            recharge_discount: serde_json::from_str(&o.text("RechargeDiscount"))
                .unwrap_or(Value::Null),
        }
    }
}

/// The Telegram bot.
#[derive(Debug, Clone, PartialEq)]
pub struct Telegram {
    /// `TelegramBotName`.
    pub bot_name: String,
    /// `TelegramBotToken`.
    pub bot_token: String,
    /// `TelegramWebhookSecret`.
    pub webhook_secret: String,
}

impl Telegram {
    fn read(o: &impl OptionValues) -> Telegram {
        Telegram {
            bot_name: o.text("TelegramBotName"),
            bot_token: o.text("TelegramBotToken"),
            webhook_secret: o.text("TelegramWebhookSecret"),
        }
    }
}

/// Operation outside the relay's own requests (which read [`super::RelayOptions`]):
/// channel tests, log clean-up, price sync and the outbound address policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// `LogCleanupDays` (0: keep logs).
    pub log_cleanup_days: i64,
    /// `ChannelTestFrequency`: minutes between periodic channel tests (0: none).
    pub channel_test_frequency: i64,
    /// `AutomaticDisableChannelEnabled`.
    pub auto_disable_channel: bool,
    /// `AutomaticEnableChannelEnabled`.
    pub auto_enable_channel: bool,
    /// `ChannelDisableThreshold`, seconds.
    pub channel_disable_threshold: f64,
    /// `DisableChannelKeywords`: one per line, trimmed, without empty lines.
    pub disable_channel_keywords: Vec<String>,
    /// `PriceSyncUrl`.
    pub price_sync_url: String,
    /// `AllowPrivateOutbound`.
    pub allow_private_outbound: bool,
}

impl Operation {
    fn read(o: &impl OptionValues) -> Operation {
        Operation {
            log_cleanup_days: o.int("LogCleanupDays"),
            channel_test_frequency: o.int("ChannelTestFrequency"),
            auto_disable_channel: o.bool("AutomaticDisableChannelEnabled"),
            auto_enable_channel: o.bool("AutomaticEnableChannelEnabled"),
            channel_disable_threshold: o.float("ChannelDisableThreshold"),
            disable_channel_keywords: o
                .text("DisableChannelKeywords")
                .lines()
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(str::to_owned)
                .collect(),
            price_sync_url: o.text("PriceSyncUrl"),
            allow_private_outbound: o.bool("AllowPrivateOutbound"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::{BTreeSet, HashMap};
    use switchboard_domain::options::{find, CATALOGUE};

    /// Records the keys a parse reads (and answers none, so that defaults apply).
    #[derive(Default)]
    struct Recorder(RefCell<BTreeSet<String>>);

    impl OptionValues for Recorder {
        fn raw(&self, key: &str) -> Option<&str> {
            self.0.borrow_mut().insert(key.to_owned());
            None
        }
    }

    /// What the relay reads itself (`RelayOptions`, the cache, the protocol switches), and the
    /// settings kept for the console and old databases that nothing on the server reads.
    const NOT_HERE: &[&str] = &[
        "PreConsumedQuota",
        "OverdraftTolerance",
        "DefaultMaxOutputTokens",
        "ApproximateTokenEnabled",
        "ErrorLogEnabled",
        "RetryTimes",
        "RetryCooldownSeconds",
        "RetryTimeOut",
        "CircuitBreakerEnabled",
        "CircuitBreakerErrorRatio",
        "CircuitBreakerMinRequests",
        "CircuitBreakerWindowSeconds",
        "CircuitBreakerOpenSeconds",
        "LatencyAwareRouting",
        "ClaudeAPIEnabled",
        "GeminiAPIEnabled",
        "ChatCacheEnabled",
        "ChatCacheExpireMinute",
        "ChatCacheRatio",
        "ChatCacheMaxEntries",
        "ChatCacheMaxEntryKB",
        "QuotaRemindThreshold",
        "DefaultPriceEnabled",
        "ExtraTokenPriceJson",
        "LogConsumeEnabled",
        "MjNotifyEnabled",
    ];

    #[test]
    fn every_key_read_is_in_the_catalogue_and_every_setting_has_a_reader() {
        let r = Recorder::default();
        Typed::read(&r);
        let read = r.0.into_inner();
        for key in &read {
            assert!(find(key).is_some(), "{key} is not a setting");
            assert!(!NOT_HERE.contains(&key.as_str()), "{key} is read here too");
        }
        for d in CATALOGUE {
            assert!(
                read.contains(d.key) || NOT_HERE.contains(&d.key),
                "{} has no typed reader",
                d.key
            );
        }
        for key in NOT_HERE {
            assert!(find(key).is_some(), "{key} is not a setting");
        }
    }

    #[test]
    fn the_defaults_are_the_catalogues() {
        let t = Typed::default();
        let site = &t.site;
        assert_eq!(site.system_name, "Switchboard");
        assert_eq!((site.logo.as_str(), site.server_address.as_str()), ("", ""));
        assert_eq!(site.origin(), None);
        assert_eq!(site.language, "zh_CN");
        assert!(site.display_in_currency);
        assert_eq!(site.quota_per_unit, 500_000);
        assert!(!site.uptime_kuma_enabled && !site.user_invoice_month);
        let links = site.chat_links.as_ref().and_then(Value::as_array).unwrap();
        assert_eq!(links.len(), 4);
        let reg = &t.registration;
        assert!(reg.enabled && reg.password);
        assert!(!reg.email_verification && !reg.email_domain_restriction);
        assert_eq!(reg.email_domain_whitelist.len(), 9);
        assert_eq!(reg.email_domain_whitelist[0], "gmail.com");
        assert_eq!(
            (
                reg.quota_for_new_user,
                reg.quota_for_invitee,
                reg.quota_for_inviter
            ),
            (0, 0, 0)
        );
        let s = &t.sign_in;
        assert!(s.password_login);
        assert!(!s.github.enabled && !s.oidc.enabled && !s.lark.enabled && !s.wechat.enabled);
        assert!(!s.turnstile.enabled);
        assert_eq!(s.github.client_id.key, "GitHubClientId");
        assert_eq!(s.oidc.issuer.non_empty(), None);
        assert_eq!(s.oidc.scopes, "openid,email,profile");
        assert_eq!(s.oidc.username_claims, "preferred_username");
        assert_eq!(s.oidc.email_claims, "email");
        assert_eq!(
            t.smtp,
            Smtp {
                server: String::new(),
                port: 587,
                account: String::new(),
                from: String::new(),
                token: String::new(),
            }
        );
        assert_eq!(t.payment.usd_rate, Decimal::new(73, 1));
        assert_eq!(t.payment.min_amount, 1);
        assert_eq!(t.payment.recharge_discount, json!({}));
        assert_eq!(t.telegram.bot_token, "");
        let op = &t.operation;
        assert_eq!((op.log_cleanup_days, op.channel_test_frequency), (0, 0));
        assert!(!op.auto_disable_channel && !op.auto_enable_channel);
        assert_eq!(op.channel_disable_threshold, 5.0);
        assert_eq!(op.disable_channel_keywords.len(), 7);
        assert_eq!(
            op.disable_channel_keywords[1],
            "This organization has been disabled."
        );
        assert!(!op.allow_private_outbound && op.price_sync_url.is_empty());
    }

    #[test]
    fn every_group_reads_what_is_stored() {
        let stored: HashMap<String, String> = [
            ("SystemName", "Gate"),
            ("ServerAddress", " https://gw.example.com/ "),
            ("ChatLinks", "[]"),
            ("QuotaPerUnit", "1000"),
            ("DisplayInCurrencyEnabled", "false"),
            ("UserInvoiceMonth", "true"),
            ("RegisterEnabled", "false"),
            ("EmailDomainWhitelist", " a.com, ,b.org "),
            ("QuotaForInviter", "7"),
            ("PasswordLoginEnabled", "0"),
            ("GitHubOAuthEnabled", "1"),
            ("GitHubClientId", " id "),
            ("OIDCIssuer", "https://id.example.com"),
            ("LarkClientSecret", "s"),
            ("WeChatServerToken", "t"),
            ("TurnstileCheckEnabled", "true"),
            ("TurnstileSecretKey", "k"),
            ("SMTPServer", "smtp.example.com"),
            ("SMTPPort", "465"),
            ("PaymentUSDRate", "1e1"),
            ("PaymentMinAmount", "5"),
            ("RechargeDiscount", r#"{"10":0.9}"#),
            ("TelegramBotToken", "123:abc"),
            ("TelegramWebhookSecret", "s3"),
            ("LogCleanupDays", "30"),
            ("ChannelTestFrequency", "15"),
            ("AutomaticEnableChannelEnabled", "true"),
            ("ChannelDisableThreshold", "2.5"),
            ("DisableChannelKeywords", "one\n\n  two  \n"),
            ("AllowPrivateOutbound", "true"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let t = Typed::read(&stored);
        assert_eq!(t.site.system_name, "Gate");
        assert_eq!(t.site.origin().as_deref(), Some("https://gw.example.com"));
        assert_eq!(t.site.chat_links, Some(json!([])));
        assert_eq!(t.site.quota_per_unit, 1000);
        assert!(!t.site.display_in_currency && t.site.user_invoice_month);
        assert!(!t.registration.enabled);
        assert_eq!(t.registration.email_domain_whitelist, ["a.com", "b.org"]);
        assert_eq!(t.registration.quota_for_inviter, 7);
        assert!(!t.sign_in.password_login && t.sign_in.github.enabled);
        assert_eq!(t.sign_in.github.client_id.value, " id ");
        assert_eq!(
            t.sign_in.github.client_id.non_empty().as_deref(),
            Some("id")
        );
        assert_eq!(
            t.sign_in.oidc.issuer.non_empty().as_deref(),
            Some("https://id.example.com")
        );
        assert_eq!(t.sign_in.lark.client_secret.value, "s");
        assert_eq!(t.sign_in.wechat.server_token, "t");
        assert!(t.sign_in.turnstile.enabled);
        assert_eq!(t.sign_in.turnstile.secret_key, "k");
        assert_eq!(
            (t.smtp.server.as_str(), t.smtp.port),
            ("smtp.example.com", 465)
        );
        assert_eq!(t.payment.usd_rate, Decimal::from(10));
        assert_eq!(t.payment.min_amount, 5);
        assert_eq!(t.payment.recharge_discount, json!({"10": 0.9}));
        assert_eq!(t.telegram.bot_token, "123:abc");
        assert_eq!(t.telegram.webhook_secret, "s3");
        let op = &t.operation;
        assert_eq!((op.log_cleanup_days, op.channel_test_frequency), (30, 15));
        assert!(op.auto_enable_channel && op.allow_private_outbound);
        assert_eq!(op.channel_disable_threshold, 2.5);
        assert_eq!(op.disable_channel_keywords, ["one", "two"]);
    }

    #[test]
    fn unparsable_stored_values_read_as_the_defaults() {
        // Refused on write; only a hand-edited database holds them.
        let stored: HashMap<String, String> = [
            ("QuotaPerUnit", "many"),
            ("DisplayInCurrencyEnabled", "yes"),
            ("SMTPPort", "25x"),
            ("PaymentUSDRate", "cheap"),
            ("ChatLinks", "[oops"),
            ("RechargeDiscount", "{oops"),
            ("ChannelDisableThreshold", "soon"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let t = Typed::read(&stored);
        let d = Typed::default();
        assert_eq!(t.site.quota_per_unit, d.site.quota_per_unit);
        assert_eq!(t.site.display_in_currency, d.site.display_in_currency);
        assert_eq!(t.smtp.port, 587);
        assert_eq!(t.payment.usd_rate, d.payment.usd_rate);
        assert_eq!(t.site.chat_links, None);
        assert_eq!(t.payment.recharge_discount, Value::Null);
        assert_eq!(t.operation.channel_disable_threshold, 5.0);
    }
}
