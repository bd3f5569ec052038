//! Redemption codes (spec sections 3 to 5; DOMAIN.md "Money"): statuses, the code format and the
//! rules of batch creation and editing.
//!
//! Decisions:
//! - A code is [`CODE_LEN`] characters from [`CODE_ALPHABET`] (lower-case ASCII letters and
//!   digits, about 165 bits of entropy). Lower case only because MySQL/MariaDB compare the code
//!   column case-insensitively (utf8mb4_unicode_ci): with one case the lookup behaves the same on
//!   every backend. What a user types is trimmed and lower-cased ([`normalize_code`]), so entry is
//!   case-insensitive everywhere.
//! - A batch holds 1 to [`MAX_BATCH`] codes: one request, one transaction, one response listing
//!   every code; larger runs are several requests.
//! - Quota is 0 to [`QUOTA_MAX`] (spec: "quota at least 0"; the ceiling keeps every balance far
//!   from overflowing i64 however many codes a user redeems).
//! - A redeemed code ([`RedemptionStatus::Used`]) is history: it cannot be edited or re-enabled.

use crate::DomainError;
use serde::{Deserialize, Serialize};

/// Length of a generated code.
pub const CODE_LEN: usize = 32;
/// The characters of a generated code.
pub const CODE_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// Most codes one create request may generate.
pub const MAX_BATCH: i64 = 100;
/// Longest code name (the column is VARCHAR(64)).
pub const NAME_MAX: usize = 64;
/// Largest quota one code may carry: 10^15 quota, 2 billion USD at the default 500000 per USD.
pub const QUOTA_MAX: i64 = 1_000_000_000_000_000;

/// A code's stored status (one-api's values: 1 enabled, 2 disabled, 3 used).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "i32", try_from = "i32")]
pub enum RedemptionStatus {
    /// Not yet redeemed; can be redeemed.
    Enabled,
    /// Switched off by an administrator; cannot be redeemed until enabled again.
    Disabled,
    /// Redeemed (final).
    Used,
}

impl RedemptionStatus {
    pub const fn as_i32(self) -> i32 {
        match self {
            RedemptionStatus::Enabled => 1,
            RedemptionStatus::Disabled => 2,
            RedemptionStatus::Used => 3,
        }
    }

    pub const fn from_i32(n: i32) -> Option<Self> {
        match n {
            1 => Some(RedemptionStatus::Enabled),
            2 => Some(RedemptionStatus::Disabled),
            3 => Some(RedemptionStatus::Used),
            _ => None,
        }
    }
}

impl From<RedemptionStatus> for i32 {
    fn from(s: RedemptionStatus) -> i32 {
        s.as_i32()
    }
}

impl TryFrom<i32> for RedemptionStatus {
    type Error = String;
    fn try_from(n: i32) -> Result<Self, String> {
        Self::from_i32(n).ok_or_else(|| format!("unknown redemption status {n}"))
    }
}

/// Exactly [`CODE_LEN`] characters of [`CODE_ALPHABET`].
pub fn is_well_formed_code(code: &str) -> bool {
    code.len() == CODE_LEN && code.bytes().all(|b| CODE_ALPHABET.contains(&b))
}

/// What a user typed, as the code to look up: trimmed and lower-cased, or `None` when it cannot
/// be a code at all (then it is refused like any unknown code, without a database lookup).
pub fn normalize_code(input: &str) -> Option<String> {
    let code = input.trim().to_ascii_lowercase();
    is_well_formed_code(&code).then_some(code)
}

/// A code name: required, at most [`NAME_MAX`] characters.
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

/// A code's quota: 0 to [`QUOTA_MAX`].
pub fn validate_quota(quota: i64) -> Result<(), DomainError> {
    if !(0..=QUOTA_MAX).contains(&quota) {
        return Err(DomainError::OutOfRange {
            field: "quota",
            min: 0,
            max: QUOTA_MAX,
        });
    }
    Ok(())
}

/// The number of codes of one create request: 1 to [`MAX_BATCH`].
pub fn validate_count(count: i64) -> Result<(), DomainError> {
    if !(1..=MAX_BATCH).contains(&count) {
        return Err(DomainError::OutOfRange {
            field: "count",
            min: 1,
            max: MAX_BATCH,
        });
    }
    Ok(())
}

/// Why an administrator's edit of a code is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditDenied {
    /// The code was redeemed: it is history.
    AlreadyUsed,
    /// The requested status is not 1 (enabled) or 2 (disabled); "used" is only set by redeeming.
    InvalidStatus,
}

/// Whether a code currently in `current` may be edited, to `new_status` when given.
pub fn check_edit(current: i32, new_status: Option<i32>) -> Result<(), EditDenied> {
    if current == RedemptionStatus::Used.as_i32() {
        return Err(EditDenied::AlreadyUsed);
    }
    match new_status.map(RedemptionStatus::from_i32) {
        None | Some(Some(RedemptionStatus::Enabled | RedemptionStatus::Disabled)) => Ok(()),
        Some(_) => Err(EditDenied::InvalidStatus),
    }
}

/// Statuses that `DELETE /api/redemption/invalid` clears: disabled and used codes.
pub const INVALID_STATUSES: [i32; 2] = [
    RedemptionStatus::Disabled.as_i32(),
    RedemptionStatus::Used.as_i32(),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn statuses_round_trip() {
        for s in [
            RedemptionStatus::Enabled,
            RedemptionStatus::Disabled,
            RedemptionStatus::Used,
        ] {
            assert_eq!(RedemptionStatus::from_i32(s.as_i32()), Some(s));
        }
        assert_eq!(RedemptionStatus::Used.as_i32(), 3, "one-api's value");
        assert_eq!(RedemptionStatus::from_i32(0), None);
        assert_eq!(RedemptionStatus::from_i32(4), None);
    }

    #[test]
    fn code_format() {
        let good = "abcdefghijklmnopqrstuvwxyz012345";
        assert_eq!(good.len(), CODE_LEN);
        assert!(is_well_formed_code(good));
        assert!(!is_well_formed_code(&good[1..]));
        assert!(!is_well_formed_code(&format!("{good}6")));
        assert!(!is_well_formed_code("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"));
        assert!(!is_well_formed_code("abcdefghijklmnopqrstuvwxyz01234-"));
        assert!(!is_well_formed_code(""));
        // Multi-byte characters never pass, whatever their byte length.
        assert!(!is_well_formed_code("ééééééééééééééééabcdefghijklmnop"));
    }

    #[test]
    fn entry_is_trimmed_and_case_insensitive() {
        let code = "abcdefghijklmnopqrstuvwxyz012345";
        assert_eq!(
            normalize_code("  ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 ").as_deref(),
            Some(code)
        );
        assert_eq!(normalize_code(code).as_deref(), Some(code));
        assert_eq!(normalize_code("short"), None);
        assert_eq!(normalize_code(""), None);
        assert_eq!(normalize_code("abcdefghijklmnopqrstuvwxyz01234%"), None);
    }

    #[test]
    fn create_bounds() {
        assert!(validate_count(1).is_ok());
        assert!(validate_count(MAX_BATCH).is_ok());
        assert_eq!(
            validate_count(0).map_err(|e| e.code()),
            Err(ErrorCode::OutOfRange)
        );
        assert!(validate_count(MAX_BATCH + 1).is_err());
        assert!(validate_count(-1).is_err());
        assert!(validate_quota(0).is_ok(), "spec: quota at least 0");
        assert!(validate_quota(QUOTA_MAX).is_ok());
        assert!(validate_quota(-1).is_err());
        assert!(validate_quota(QUOTA_MAX + 1).is_err());
        assert_eq!(
            validate_name("").map_err(|e| e.code()),
            Err(ErrorCode::Required)
        );
        assert!(validate_name("  ").is_err());
        assert!(validate_name(&"码".repeat(NAME_MAX)).is_ok());
        assert_eq!(
            validate_name(&"x".repeat(NAME_MAX + 1)).map_err(|e| e.code()),
            Err(ErrorCode::TooLong)
        );
    }

    #[test]
    fn used_codes_are_history() {
        assert_eq!(check_edit(1, None), Ok(()));
        assert_eq!(check_edit(1, Some(2)), Ok(()));
        assert_eq!(check_edit(2, Some(1)), Ok(()));
        assert_eq!(check_edit(3, None), Err(EditDenied::AlreadyUsed));
        assert_eq!(check_edit(3, Some(1)), Err(EditDenied::AlreadyUsed));
        assert_eq!(check_edit(1, Some(3)), Err(EditDenied::InvalidStatus));
        assert_eq!(check_edit(2, Some(0)), Err(EditDenied::InvalidStatus));
    }

    #[test]
    fn invalid_means_disabled_or_used() {
        assert_eq!(INVALID_STATUSES, [2, 3]);
    }
}
