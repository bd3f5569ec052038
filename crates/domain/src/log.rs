//! Log types (spec section 4: all, recharge, consumption, management, system; and error, as
//! new-api has it, for relayed calls that failed).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "i32", try_from = "i32")]
pub enum LogType {
    Recharge,
    Consume,
    Manage,
    System,
    /// A relayed call that failed (new-api's type 5): no charge, the reason the client got.
    Error,
}

impl LogType {
    pub const fn as_i32(self) -> i32 {
        match self {
            LogType::Recharge => 1,
            LogType::Consume => 2,
            LogType::Manage => 3,
            LogType::System => 4,
            LogType::Error => 5,
        }
    }
}

impl From<LogType> for i32 {
    fn from(t: LogType) -> i32 {
        t.as_i32()
    }
}

impl TryFrom<i32> for LogType {
    type Error = String;
    fn try_from(n: i32) -> Result<Self, String> {
        match n {
            1 => Ok(LogType::Recharge),
            2 => Ok(LogType::Consume),
            3 => Ok(LogType::Manage),
            4 => Ok(LogType::System),
            5 => Ok(LogType::Error),
            other => Err(format!("unknown log type {other}")),
        }
    }
}

/// Seconds in a (UTC) day: the unit of the daily rollup and of the retention setting.
pub const DAY_SECS: i64 = 86_400;

/// Start of the UTC day that holds `ts` (unix seconds): the `day` key of the daily rollup.
pub const fn day_start(ts: i64) -> i64 {
    ts - ts.rem_euclid(DAY_SECS)
}

#[cfg(test)]
mod day_tests {
    use super::*;

    #[test]
    fn days_start_at_utc_midnight() {
        assert_eq!(day_start(0), 0);
        assert_eq!(day_start(DAY_SECS - 1), 0);
        assert_eq!(day_start(DAY_SECS), DAY_SECS);
        assert_eq!(day_start(-1), -DAY_SECS);
        assert_eq!(day_start(1_700_000_000), 1_699_920_000);
    }

    #[test]
    fn log_types_round_trip() {
        for n in 1..=5 {
            assert_eq!(LogType::try_from(n).map(LogType::as_i32), Ok(n));
        }
        assert!(LogType::try_from(0).is_err());
        assert!(LogType::try_from(6).is_err());
    }
}
