//! Quota units and their display (spec section 9). Quota is an integer; `quota_per_unit` quota
//! make one US dollar.

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};

pub const DEFAULT_QUOTA_PER_UNIT: i64 = 500_000;

/// Formats a quota amount the way the console does: in currency mode `$` and the dollar amount
/// with two decimals; otherwise the raw figure, abbreviated as k (>= 1e4), M (>= 1e6) or B (>= 1e9).
pub fn display(quota: i64, quota_per_unit: i64, in_currency: bool) -> String {
    if in_currency {
        let per = if quota_per_unit > 0 {
            quota_per_unit
        } else {
            DEFAULT_QUOTA_PER_UNIT
        };
        let usd = (Decimal::from(quota) / Decimal::from(per))
            .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
        return format!("${usd:.2}");
    }
    let abs = quota.unsigned_abs();
    let (div, suffix) = if abs >= 1_000_000_000 {
        (1_000_000_000, "B")
    } else if abs >= 1_000_000 {
        (1_000_000, "M")
    } else if abs >= 10_000 {
        (1_000, "k")
    } else {
        return quota.to_string();
    };
    let v = (Decimal::from(quota) / Decimal::from(div))
        .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
        .normalize();
    format!("{v}{suffix}")
}

/// Dollars (whole or fractional) to quota, rounded to the nearest unit.
pub fn from_usd(usd: Decimal, quota_per_unit: i64) -> Option<i64> {
    (usd * Decimal::from(quota_per_unit))
        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
        .to_i64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn currency_mode() {
        assert_eq!(display(500_000, 500_000, true), "$1.00");
        assert_eq!(display(1_234_567, 500_000, true), "$2.47");
        assert_eq!(display(0, 500_000, true), "$0.00");
        assert_eq!(display(-250_000, 500_000, true), "$-0.50");
    }

    #[test]
    fn abbreviations() {
        assert_eq!(display(9_999, 500_000, false), "9999");
        assert_eq!(display(10_000, 500_000, false), "10k");
        assert_eq!(display(12_345, 500_000, false), "12.35k");
        assert_eq!(display(2_500_000, 500_000, false), "2.5M");
        assert_eq!(display(3_000_000_000, 500_000, false), "3B");
    }

    #[test]
    fn dollars_to_quota() {
        assert_eq!(from_usd(Decimal::new(15, 1), 500_000), Some(750_000));
    }
}
