//! The relay's settings, parsed once per write ([`super::Settings::relay_options`]).

use super::View;
use std::time::Duration;
use switchboard_domain::options::OptionValues;
use switchboard_domain::routing::BreakerConfig;

/// The settings every relayed request reads, parsed once per write of settings
/// ([`crate::settings::Settings::relay_options`]): reading them by name costs a hashed look-up,
/// a catalogue look-up for a default and a parse each, ~2,400 instructions for the ten of a
/// request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelayOptions {
    /// `RetryTimes`.
    pub retries: usize,
    /// `RetryCooldownSeconds`.
    pub cooldown: Duration,
    /// `RetryTimeOut` in seconds; 0 or less: none.
    pub retry_timeout_secs: i64,
    /// `AutomaticDisableChannelEnabled`.
    pub auto_disable: bool,
    /// `CircuitBreakerEnabled` with the breaker's settings.
    pub breaker: Option<BreakerConfig>,
    /// `LatencyAwareRouting`.
    pub latency_aware: bool,
    /// `PreConsumedQuota`.
    pub pre_consumed: i64,
    /// `DefaultMaxOutputTokens`.
    pub default_max_output: i64,
    /// `OverdraftTolerance`.
    pub overdraft_tolerance: i64,
    /// `ApproximateTokenEnabled`.
    pub approximate: bool,
}

impl RelayOptions {
    /// Reads them from `o`.
    pub fn read(o: &View<'_>) -> RelayOptions {
        RelayOptions {
            retries: usize::try_from(o.int("RetryTimes")).unwrap_or(0),
            cooldown: Duration::from_secs(
                u64::try_from(o.int("RetryCooldownSeconds")).unwrap_or(0),
            ),
            retry_timeout_secs: o.int("RetryTimeOut"),
            auto_disable: o.bool("AutomaticDisableChannelEnabled"),
            breaker: o.bool("CircuitBreakerEnabled").then(|| breaker_config(o)),
            latency_aware: o.bool("LatencyAwareRouting"),
            pre_consumed: o.int("PreConsumedQuota"),
            default_max_output: o.int("DefaultMaxOutputTokens"),
            overdraft_tolerance: o.int("OverdraftTolerance"),
            approximate: o.bool("ApproximateTokenEnabled"),
        }
    }
}

/// The circuit breaker's settings (`CircuitBreakerErrorRatio`, `CircuitBreakerMinRequests`,
/// `CircuitBreakerWindowSeconds`, `CircuitBreakerOpenSeconds`).
pub fn breaker_config(o: &View<'_>) -> BreakerConfig {
    let secs_ms = |key: &str| {
        u64::try_from(o.int(key))
            .unwrap_or(1)
            .max(1)
            .saturating_mul(1000)
    };
    BreakerConfig {
        error_ratio: o
            .float("CircuitBreakerErrorRatio")
            .clamp(f64::MIN_POSITIVE, 1.0),
        min_requests: u32::try_from(o.int("CircuitBreakerMinRequests"))
            .unwrap_or(u32::MAX)
            .max(1),
        window_ms: secs_ms("CircuitBreakerWindowSeconds"),
        open_ms: secs_ms("CircuitBreakerOpenSeconds"),
    }
}
