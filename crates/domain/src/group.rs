//! User groups (spec sections 3 and 5; DOMAIN.md "Money", "Units and prices"): the rules of a
//! group's settings and of automatic promotion after a top-up.
//!
//! Decisions:
//! - **Promotion ranges are in quota units**, like every other amount of the API (a user's quota
//!   and `total_topup`, a code's quota, a key's remain_quota); the console shows them in dollars
//!   by dividing by `QuotaPerUnit`, as it does for any quota figure. The cumulative top-up is
//!   stored in quota, so the comparison is exact integer arithmetic with no setting to read
//!   inside the crediting transaction (at the default 500000 quota per USD, a $10 threshold is
//!   `min_topup = 5000000`).
//! - A range is `[min_topup, max_topup)`: `min_topup` included, `max_topup` excluded, and
//!   **`max_topup = 0` means no upper bound** (the top tier). With promotion on,
//!   `0 <= min_topup` and `max_topup` is 0 or greater than `min_topup`.
//! - Selection ([`promotion_target`]): among the enabled promotion groups whose range holds the
//!   user's cumulative top-up, the highest `min_topup` wins (ties: the first in the given order,
//!   the caller passes groups by id). The user moves only when that is a promotion: their
//!   current group is not a promotion group (or no longer exists), or the target's `min_topup`
//!   is higher than the current group's. Nobody is ever demoted automatically.
//! - The symbol is immutable once created: users and keys reference groups by symbol.
//! - `default` cannot be deleted or disabled: new users join it.

use crate::DomainError;

/// The group every new user joins.
pub const DEFAULT_GROUP: &str = "default";
/// Longest display name (the column is VARCHAR(64)).
pub const NAME_MAX: usize = 64;
/// Highest group API rate, in requests per minute (0 = no limit).
pub const API_RATE_MAX: i32 = 1_000_000;

/// A group's settings as they will be stored (after merging an update with the current row).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupSettings {
    pub ratio: f64,
    pub api_rate: i32,
    pub promotion: bool,
    pub min_topup: i64,
    pub max_topup: i64,
}

/// A group's display name: required, at most [`NAME_MAX`] characters.
pub fn validate_name(name: &str) -> Result<(), DomainError> {
    if name.trim().is_empty() {
        return Err(DomainError::Required { field: "name" });
    }
    if name.chars().count() > NAME_MAX {
        return Err(DomainError::TooLong {
            field: "name",
            max: NAME_MAX,
        });
    }
    Ok(())
}

impl GroupSettings {
    /// Ratio finite and >= 0; api_rate 0 to [`API_RATE_MAX`]; top-up bounds >= 0; with promotion
    /// on, `max_topup` is 0 (no upper bound) or above `min_topup`.
    pub fn validate(&self) -> Result<(), DomainError> {
        if !self.ratio.is_finite() || self.ratio < 0.0 {
            return Err(DomainError::invalid(
                "ratio",
                "must be a finite number, 0 or more",
            ));
        }
        if !(0..=API_RATE_MAX).contains(&self.api_rate) {
            return Err(DomainError::OutOfRange {
                field: "api_rate",
                min: 0,
                max: API_RATE_MAX.into(),
            });
        }
        if self.min_topup < 0 {
            return Err(DomainError::TooSmall {
                field: "min_topup",
                min: 0,
            });
        }
        if self.max_topup < 0 {
            return Err(DomainError::TooSmall {
                field: "max_topup",
                min: 0,
            });
        }
        if self.promotion && self.max_topup != 0 && self.max_topup <= self.min_topup {
            return Err(DomainError::invalid(
                "max_topup",
                "must be greater than min_topup, or 0 for no upper bound",
            ));
        }
        Ok(())
    }
}

/// What promotion needs to know of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromotionRule<'a> {
    pub symbol: &'a str,
    pub enabled: bool,
    pub promotion: bool,
    pub min_topup: i64,
    pub max_topup: i64,
}

impl PromotionRule<'_> {
    /// Whether `total_topup` lies in `[min_topup, max_topup)` (`max_topup = 0`: no upper bound).
    pub fn holds(&self, total_topup: i64) -> bool {
        total_topup >= self.min_topup && (self.max_topup == 0 || total_topup < self.max_topup)
    }
}

/// The group a user with cumulative top-up `total_topup`, now in group `current`, should be
/// moved to, or `None` when they stay. See the module documentation for the rule.
pub fn promotion_target<'a>(
    groups: &[PromotionRule<'a>],
    current: &str,
    total_topup: i64,
) -> Option<&'a str> {
    let mut best: Option<&PromotionRule<'a>> = None;
    for g in groups
        .iter()
        .filter(|g| g.enabled && g.promotion && g.holds(total_topup))
    {
        if best.is_none_or(|b| g.min_topup > b.min_topup) {
            best = Some(g);
        }
    }
    let target = best?;
    if target.symbol == current {
        return None;
    }
    let current_min = groups
        .iter()
        .find(|g| g.symbol == current && g.promotion)
        .map(|g| g.min_topup);
    match current_min {
        Some(min) if target.min_topup <= min => None,
        _ => Some(target.symbol),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    fn rule(symbol: &str, min: i64, max: i64) -> PromotionRule<'_> {
        PromotionRule {
            symbol,
            enabled: true,
            promotion: true,
            min_topup: min,
            max_topup: max,
        }
    }

    fn plain(symbol: &str) -> PromotionRule<'_> {
        PromotionRule {
            symbol,
            enabled: true,
            promotion: false,
            min_topup: 0,
            max_topup: 0,
        }
    }

    fn tiers() -> Vec<PromotionRule<'static>> {
        vec![
            plain("default"),
            rule("silver", 100, 1000),
            rule("gold", 1000, 10_000),
            rule("diamond", 10_000, 0),
        ]
    }

    #[test]
    fn ranges_include_min_and_exclude_max() {
        let r = rule("x", 100, 200);
        assert!(!r.holds(99));
        assert!(r.holds(100));
        assert!(r.holds(199));
        assert!(!r.holds(200));
        let open = rule("y", 100, 0);
        assert!(open.holds(i64::MAX), "max 0: no upper bound");
    }

    #[test]
    fn picks_the_range_holding_the_total() {
        let g = tiers();
        assert_eq!(promotion_target(&g, "default", 0), None);
        assert_eq!(promotion_target(&g, "default", 99), None);
        assert_eq!(promotion_target(&g, "default", 100), Some("silver"));
        assert_eq!(promotion_target(&g, "default", 999), Some("silver"));
        assert_eq!(promotion_target(&g, "default", 1000), Some("gold"));
        assert_eq!(promotion_target(&g, "default", 5_000_000), Some("diamond"));
        assert_eq!(promotion_target(&g, "silver", 1000), Some("gold"));
        assert_eq!(promotion_target(&g, "silver", 20_000), Some("diamond"));
    }

    #[test]
    fn staying_in_the_same_group_is_no_move() {
        let g = tiers();
        assert_eq!(promotion_target(&g, "silver", 500), None);
        assert_eq!(promotion_target(&g, "diamond", 50_000), None);
    }

    #[test]
    fn never_demotes() {
        // Gold members whose total is (somehow) only in silver's range stay gold.
        let g = tiers();
        assert_eq!(promotion_target(&g, "gold", 500), None);
        assert_eq!(promotion_target(&g, "diamond", 1500), None);
        // A target whose min equals the current group's min is not a promotion either.
        let same = vec![rule("a", 100, 0), rule("b", 100, 0)];
        assert_eq!(promotion_target(&same, "b", 150), None);
    }

    #[test]
    fn highest_min_wins_when_ranges_overlap() {
        let g = vec![
            rule("wide", 0, 0),
            rule("narrow", 500, 600),
            plain("default"),
        ];
        assert_eq!(promotion_target(&g, "default", 550), Some("narrow"));
        assert_eq!(promotion_target(&g, "default", 700), Some("wide"));
        // Ties go to the first in the given order.
        let tie = vec![rule("first", 10, 0), rule("second", 10, 0)];
        assert_eq!(promotion_target(&tie, "default", 10), Some("first"));
    }

    #[test]
    fn disabled_and_non_promotion_groups_are_not_targets() {
        let mut g = tiers();
        g[2].enabled = false; // gold off
        assert_eq!(
            promotion_target(&g, "default", 1500),
            None,
            "nothing holds 1500"
        );
        assert_eq!(promotion_target(&g, "default", 500), Some("silver"));
        g[1].promotion = false; // silver no longer a promotion group
        assert_eq!(promotion_target(&g, "default", 500), None);
        // A user in a disabled promotion group keeps its rank: no move to a lower tier.
        assert_eq!(promotion_target(&g, "gold", 500), None);
    }

    #[test]
    fn users_outside_promotion_groups_move_in() {
        let g = tiers();
        // A manually assigned non-promotion group, or a group that no longer exists.
        let mut with_vip = g.clone();
        with_vip.push(plain("vip"));
        assert_eq!(promotion_target(&with_vip, "vip", 100), Some("silver"));
        assert_eq!(promotion_target(&g, "deleted", 100), Some("silver"));
    }

    #[test]
    fn settings_are_validated() {
        let ok = GroupSettings {
            ratio: 1.0,
            api_rate: 0,
            promotion: true,
            min_topup: 0,
            max_topup: 0,
        };
        assert!(ok.validate().is_ok());
        let with = |f: fn(&mut GroupSettings)| {
            let mut s = ok;
            f(&mut s);
            s.validate().map_err(|e| e.code())
        };
        assert_eq!(with(|s| s.ratio = 0.0), Ok(()));
        assert_eq!(with(|s| s.ratio = -0.1), Err(ErrorCode::Invalid));
        assert_eq!(with(|s| s.ratio = f64::NAN), Err(ErrorCode::Invalid));
        assert_eq!(with(|s| s.ratio = f64::INFINITY), Err(ErrorCode::Invalid));
        assert_eq!(with(|s| s.api_rate = -1), Err(ErrorCode::OutOfRange));
        assert_eq!(
            with(|s| s.api_rate = API_RATE_MAX + 1),
            Err(ErrorCode::OutOfRange)
        );
        assert_eq!(with(|s| s.min_topup = -1), Err(ErrorCode::TooSmall));
        assert_eq!(with(|s| s.max_topup = -1), Err(ErrorCode::TooSmall));
        assert_eq!(
            with(|s| {
                s.min_topup = 100;
                s.max_topup = 100;
            }),
            Err(ErrorCode::Invalid)
        );
        assert_eq!(
            with(|s| {
                s.min_topup = 100;
                s.max_topup = 50;
            }),
            Err(ErrorCode::Invalid)
        );
        assert_eq!(
            with(|s| {
                s.min_topup = 100;
                s.max_topup = 101;
            }),
            Ok(())
        );
        // Without promotion the range is not used; only the signs are checked.
        assert_eq!(
            with(|s| {
                s.promotion = false;
                s.min_topup = 100;
                s.max_topup = 50;
            }),
            Ok(())
        );
    }

    #[test]
    fn names_are_bounded() {
        assert!(validate_name("VIP").is_ok());
        assert_eq!(
            validate_name("").map_err(|e| e.code()),
            Err(ErrorCode::Required)
        );
        assert_eq!(
            validate_name(&"n".repeat(NAME_MAX + 1)).map_err(|e| e.code()),
            Err(ErrorCode::TooLong)
        );
    }
}
