//! The stable error codes of the API and the relay: one enum, serialised as the snake_case
//! strings clients have always seen. The console's list of codes is generated from it
//! (`frontend/src/lib/error-codes.gen.ts`, checked by this module's test), and the console's
//! translation test fails when a code has no message.

macro_rules! error_codes {
    (console { $($c:ident = $cs:literal,)* } relay { $($r:ident = $rs:literal,)* }) => {
        /// A stable error code. `console` codes are what the management API answers with (the
        /// console translates each); `relay` codes are the relay's refusals, in the
        /// error body of the client's protocol.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($c,)*
            $($r,)*
        }

        impl ErrorCode {
            /// The codes the management API answers with.
            pub const CONSOLE: &'static [ErrorCode] = &[$(ErrorCode::$c,)*];
            /// The relay's own refusal codes.
            pub const RELAY: &'static [ErrorCode] = &[$(ErrorCode::$r,)*];

            /// The code as clients see it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$c => $cs,)*
                    $(ErrorCode::$r => $rs,)*
                }
            }
        }
    };
}

error_codes! {
    console {
        BalanceNotSupported = "balance_not_supported",
        BalanceUpdateFailed = "balance_update_failed",
        BindingLastMethod = "binding_last_method",
        BodyTooLarge = "body_too_large",
        ChannelTestFailed = "channel_test_failed",
        Conflict = "conflict",
        CsrfRejected = "csrf_rejected",
        DatabaseUnavailable = "database_unavailable",
        DestinationNeedsRoot = "destination_needs_root",
        DuplicateKey = "duplicate_key",
        DuplicateModel = "duplicate_model",
        EmailDomainNotAllowed = "email_domain_not_allowed",
        EmailSendFailed = "email_send_failed",
        EmailTaken = "email_taken",
        EmailUnchanged = "email_unchanged",
        EmptyPriceList = "empty_price_list",
        FetchModelsFailed = "fetch_models_failed",
        Forbidden = "forbidden",
        GroupInUse = "group_in_use",
        IdTaken = "id_taken",
        InsufficientBalance = "insufficient_balance",
        InternalError = "internal_error",
        Invalid = "invalid",
        InvalidAccessToken = "invalid_access_token",
        InvalidAction = "invalid_action",
        InvalidAnthropicBeta = "invalid_anthropic_beta",
        InvalidApiVersion = "invalid_api_version",
        InvalidBatch = "invalid_batch",
        InvalidBody = "invalid_body",
        InvalidChannel = "invalid_channel",
        InvalidChatLink = "invalid_chat_link",
        InvalidCodeExecution = "invalid_code_execution",
        InvalidCredentials = "invalid_credentials",
        InvalidCustomParameter = "invalid_custom_parameter",
        InvalidDays = "invalid_days",
        InvalidDisabledStream = "invalid_disabled_stream",
        InvalidEmail = "invalid_email",
        InvalidExpiry = "invalid_expiry",
        InvalidField = "invalid_field",
        InvalidId = "invalid_id",
        InvalidIds = "invalid_ids",
        InvalidJson = "invalid_json",
        InvalidKey = "invalid_key",
        InvalidKnowledge = "invalid_knowledge",
        InvalidLanguage = "invalid_language",
        InvalidLimit = "invalid_limit",
        InvalidMaxOutputTokens = "invalid_max_output_tokens",
        InvalidOnlyChat = "invalid_only_chat",
        InvalidOrder = "invalid_order",
        InvalidPage = "invalid_page",
        InvalidPath = "invalid_path",
        InvalidPlatform = "invalid_platform",
        InvalidPlugin = "invalid_plugin",
        InvalidPriceList = "invalid_price_list",
        InvalidProvider = "invalid_provider",
        InvalidQuery = "invalid_query",
        InvalidQuota = "invalid_quota",
        InvalidRange = "invalid_range",
        InvalidRatio = "invalid_ratio",
        InvalidRedemptionCode = "invalid_redemption_code",
        InvalidRegion = "invalid_region",
        InvalidResetLink = "invalid_reset_link",
        InvalidResponses = "invalid_responses",
        InvalidRole = "invalid_role",
        InvalidSize = "invalid_size",
        InvalidStatus = "invalid_status",
        InvalidSuffix = "invalid_suffix",
        InvalidTestModel = "invalid_test_model",
        InvalidTimestamp = "invalid_timestamp",
        InvalidType = "invalid_type",
        InvalidVerificationCode = "invalid_verification_code",
        InvalidVoiceMapping = "invalid_voice_mapping",
        InvalidWebSearch = "invalid_web_search",
        InvoiceFontMissing = "invoice_font_missing",
        InvoicesDisabled = "invoices_disabled",
        KeyUnavailable = "key_unavailable",
        MissingUrl = "missing_url",
        ModelTaken = "model_taken",
        MonthNotComplete = "month_not_complete",
        NotFound = "not_found",
        NotLoggedIn = "not_logged_in",
        NothingToUpdate = "nothing_to_update",
        OauthCodeRequired = "oauth_code_required",
        OauthDisabled = "oauth_disabled",
        OauthIdentityTaken = "oauth_identity_taken",
        OauthNotConfigured = "oauth_not_configured",
        OauthProviderFailed = "oauth_provider_failed",
        OauthStateInvalid = "oauth_state_invalid",
        OidcIdTokenInvalid = "oidc_id_token_invalid",
        OrderNotFound = "order_not_found",
        OutOfRange = "out_of_range",
        OwnerInUse = "owner_in_use",
        PageTooDeep = "page_too_deep",
        PasswordLoginDisabled = "password_login_disabled",
        PasswordRegistrationClosed = "password_registration_closed",
        PaymentAmountInvalid = "payment_amount_invalid",
        PaymentConfigInvalid = "payment_config_invalid",
        PaymentConfigUnreadable = "payment_config_unreadable",
        PaymentFieldInvalid = "payment_field_invalid",
        PaymentGatewayError = "payment_gateway_error",
        PaymentGatewayNotFound = "payment_gateway_not_found",
        PaymentPriceInvalid = "payment_price_invalid",
        PaymentTooManyOrders = "payment_too_many_orders",
        PaymentTypeUnsupported = "payment_type_unsupported",
        PriceServerError = "price_server_error",
        PrivateDestination = "private_destination",
        RangeTooLong = "range_too_long",
        RateLimited = "rate_limited",
        RedemptionUsed = "redemption_used",
        RegistrationClosed = "registration_closed",
        Required = "required",
        RootOnlySetting = "root_only_setting",
        SessionExpired = "session_expired",
        SmtpNotConfigured = "smtp_not_configured",
        SymbolImmutable = "symbol_immutable",
        SymbolTaken = "symbol_taken",
        TelegramApiError = "telegram_api_error",
        TelegramCommandTaken = "telegram_command_taken",
        TelegramMenuInvalid = "telegram_menu_invalid",
        TelegramMenuNotFound = "telegram_menu_not_found",
        TelegramNotConfigured = "telegram_not_configured",
        TestModelRequired = "test_model_required",
        TokenExhausted = "token_exhausted",
        TokenExpired = "token_expired",
        TooLong = "too_long",
        TooMany = "too_many",
        TooManyKeys = "too_many_keys",
        TooShort = "too_short",
        TooSmall = "too_small",
        TurnstileFailed = "turnstile_failed",
        TurnstileRequired = "turnstile_required",
        Unauthorized = "unauthorized",
        UnknownGroup = "unknown_group",
        UnknownOption = "unknown_option",
        UnsupportedChannelType = "unsupported_channel_type",
        UserDisabled = "user_disabled",
        UsernameTaken = "username_taken",
        WeakPassword = "weak_password",
        WechatCodeInvalid = "wechat_code_invalid",
        WrongOriginalPassword = "wrong_original_password",
    }
    relay {
        GroupNotAvailable = "group_not_available",
        ImageNotFound = "image_not_found",
        InsufficientTokenQuota = "insufficient_token_quota",
        InsufficientUserQuota = "insufficient_user_quota",
        InvalidApiKey = "invalid_api_key",
        InvalidModelName = "invalid_model_name",
        InvalidN = "invalid_n",
        InvalidRequest = "invalid_request",
        IpNotAllowed = "ip_not_allowed",
        LedgerLeaseLost = "ledger_lease_lost",
        LedgerUnavailable = "ledger_unavailable",
        MissingApiKey = "missing_api_key",
        MissingModel = "missing_model",
        MissingTaskId = "missing_task_id",
        ModelNotAllowed = "model_not_allowed",
        ModelNotFound = "model_not_found",
        ModelPriceNotSet = "model_price_not_set",
        NoAvailableChannel = "no_available_channel",
        RateLimitExceeded = "rate_limit_exceeded",
        RequestTooLarge = "request_too_large",
        TaskNotFound = "task_not_found",
        TokenDisabled = "token_disabled",
        UnknownAction = "unknown_action",
        UpstreamError = "upstream_error",
        UpstreamInvalidResponse = "upstream_invalid_response",
        WebsocketRequired = "websocket_required",
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A code compares equal to its string (tests and callers that hold the string).
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The console's generated list of codes (`frontend/src/lib/error-codes.gen.ts`).
pub fn typescript() -> String {
    let mut out = String::from(
        "// Generated from crates/domain/src/code.rs by its test `the_consoles_codes_are_current`\n\
         // (UPDATE_GENERATED=1 cargo test -p switchboard-domain code::): do not edit.\n\n",
    );
    for (name, codes) in [
        ("CONSOLE_ERROR_CODES", ErrorCode::CONSOLE),
        ("RELAY_ERROR_CODES", ErrorCode::RELAY),
    ] {
        out.push_str(&format!("export const {name} = [\n"));
        for c in codes {
            out.push_str(&format!("  '{c}',\n"));
        }
        out.push_str("] as const\n\n");
    }
    out.push_str(
        "export type ErrorCode = (typeof CONSOLE_ERROR_CODES)[number] | (typeof RELAY_ERROR_CODES)[number]\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::CONSOLE.iter().chain(ErrorCode::RELAY) {
            let s = c.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{s}"
            );
            assert_eq!(serde_json::to_string(c).unwrap(), format!("\"{s}\""));
        }
    }

    /// The console's list is the enum's: regenerate with `UPDATE_GENERATED=1`.
    #[test]
    fn the_consoles_codes_are_current() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../frontend/src/lib/error-codes.gen.ts"
        );
        let want = typescript();
        if std::env::var("UPDATE_GENERATED").is_ok() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "{path} is stale: run UPDATE_GENERATED=1 cargo test -p switchboard-domain code::"
        );
    }
}
