//! Monthly invoices: month arithmetic in UTC (spec sections 4 and 9). A month is written
//! `YYYY-MM`; an invoice for a month sums the daily rollup rows whose day start lies in
//! `[start, end)` of [`Month::bounds`]. Invoices for a month are generated on the 1st of the
//! next month.

use crate::log::DAY_SECS;
use crate::DomainError;
use std::fmt;

/// Invoice status. Balances are prepaid (every call is charged when it is settled), so an
/// invoice is written paid; `Unpaid` remains for rows written by earlier versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceStatus {
    Unpaid = 1,
    Paid = 2,
}

impl InvoiceStatus {
    pub const fn as_i32(self) -> i32 {
        self as i32
    }
}

/// Earliest month accepted (unix time starts in 1970).
pub const MIN_YEAR: i32 = 1970;
pub const MAX_YEAR: i32 = 9999;

/// A calendar month (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Month {
    pub year: i32,
    /// 1..=12
    pub month: u32,
}

impl fmt::Display for Month {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

impl Month {
    /// Parses exactly `YYYY-MM` (four digits, a dash, two digits; month 01..12).
    pub fn parse(s: &str) -> Result<Month, DomainError> {
        let bad =
            || DomainError::invalid("month", format!("{s:?} is not a month in the form YYYY-MM"));
        let b = s.as_bytes();
        if b.len() != 7 || b[4] != b'-' {
            return Err(bad());
        }
        let digits = |r: std::ops::Range<usize>| -> Option<u32> {
            let part = &b[r];
            if part.iter().all(u8::is_ascii_digit) {
                std::str::from_utf8(part).ok()?.parse().ok()
            } else {
                None
            }
        };
        let year = digits(0..4).ok_or_else(bad)? as i32;
        let month = digits(5..7).ok_or_else(bad)?;
        if !(1..=12).contains(&month) || !(MIN_YEAR..=MAX_YEAR).contains(&year) {
            return Err(bad());
        }
        Ok(Month { year, month })
    }

    /// The month containing unix time `ts` (seconds, UTC).
    pub fn of(ts: i64) -> Month {
        let (year, month, _) = civil_from_days(ts.div_euclid(DAY_SECS));
        Month { year, month }
    }

    /// The month before the one containing `ts`: the month an invoice run at `ts` bills.
    pub fn previous_of(ts: i64) -> Month {
        Month::of(ts).prev()
    }

    pub fn prev(self) -> Month {
        if self.month == 1 {
            Month {
                year: self.year - 1,
                month: 12,
            }
        } else {
            Month {
                year: self.year,
                month: self.month - 1,
            }
        }
    }

    pub fn next(self) -> Month {
        if self.month == 12 {
            Month {
                year: self.year + 1,
                month: 1,
            }
        } else {
            Month {
                year: self.year,
                month: self.month + 1,
            }
        }
    }

    /// Unix seconds (UTC) of the first instant of the month.
    pub fn start(self) -> i64 {
        days_from_civil(self.year, self.month, 1) * DAY_SECS
    }

    /// `[start, end)` in unix seconds, UTC: `end` is the start of the next month.
    pub fn bounds(self) -> (i64, i64) {
        (self.start(), self.next().start())
    }

    /// Whether the month has ended at `now` (only ended months can be billed).
    pub fn is_complete_at(self, now: i64) -> bool {
        self.next().start() <= now
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
pub fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `(year, month, day)` of a day counted from 1970-01-01 (H. Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
    (year, month, day)
}

/// `YYYY-MM-DD HH:mm:ss` (UTC) of a unix time, the spec's time format.
pub fn format_datetime(ts: i64) -> String {
    let (y, m, d) = civil_from_days(ts.div_euclid(DAY_SECS));
    let secs = ts.rem_euclid(DAY_SECS);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// An invoice amount in US dollars with six decimals (one quota unit is $0.000002 at the default
/// 500000 per dollar, so two decimals would hide small bills): `"$0.000314"`.
pub fn usd(quota: i64, quota_per_unit: i64) -> String {
    use rust_decimal::{Decimal, RoundingStrategy};
    let per = if quota_per_unit > 0 {
        quota_per_unit
    } else {
        crate::quota::DEFAULT_QUOTA_PER_UNIT
    };
    let v = (Decimal::from(quota) / Decimal::from(per))
        .round_dp_with_strategy(6, RoundingStrategy::MidpointAwayFromZero);
    format!("${v:.6}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_only_yyyy_mm() {
        assert_eq!(
            Month::parse("2024-02"),
            Ok(Month {
                year: 2024,
                month: 2
            })
        );
        assert_eq!(
            Month::parse("2024-12").map(|m| m.to_string()).ok(),
            Some("2024-12".into())
        );
        for bad in [
            "",
            "2024",
            "2024-1",
            "2024-13",
            "2024-00",
            "24-01",
            "2024/01",
            "2024-01-01",
            "abcd-ef",
            "+024-01",
            "2024-+1",
            "1969-12",
            " 2024-01",
            "２０２４-01",
        ] {
            assert!(Month::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn bounds_are_utc_month_starts() {
        let m = Month::parse("2024-02").unwrap_or(Month { year: 0, month: 1 });
        // 2024-02-01T00:00:00Z and 2024-03-01T00:00:00Z (leap year: 29 days).
        assert_eq!(m.bounds(), (1_706_745_600, 1_709_251_200));
        assert_eq!(m.bounds().1 - m.bounds().0, 29 * DAY_SECS);
        let dec = Month {
            year: 2023,
            month: 12,
        };
        assert_eq!(dec.bounds(), (1_701_388_800, 1_704_067_200));
        assert_eq!(
            Month {
                year: 1970,
                month: 1
            }
            .start(),
            0
        );
    }

    #[test]
    fn previous_month_of_a_date() {
        // 2024-03-01T00:00:00Z -> February.
        assert_eq!(Month::previous_of(1_709_251_200).to_string(), "2024-02");
        // One second earlier is still February -> January.
        assert_eq!(Month::previous_of(1_709_251_199).to_string(), "2024-01");
        // January wraps to December of the previous year.
        assert_eq!(Month::previous_of(1_704_067_200).to_string(), "2023-12");
        assert_eq!(Month::of(1_704_067_199).to_string(), "2023-12");
    }

    #[test]
    fn completeness() {
        let feb = Month {
            year: 2024,
            month: 2,
        };
        assert!(!feb.is_complete_at(1_709_251_199));
        assert!(feb.is_complete_at(1_709_251_200));
    }

    #[test]
    fn civil_round_trip() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(format_datetime(1_709_251_199), "2024-02-29 23:59:59");
    }

    #[test]
    fn dollars_with_six_decimals() {
        assert_eq!(usd(1, 500_000), "$0.000002");
        assert_eq!(usd(1_234_567, 500_000), "$2.469134");
        assert_eq!(usd(500_000, 0), "$1.000000");
        assert_eq!(usd(0, 500_000), "$0.000000");
    }
}
