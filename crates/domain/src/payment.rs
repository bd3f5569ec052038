//! Online top-up arithmetic (spec section 9) and the validation of gateways and orders
//! (spec section 5). Money is `Decimal` throughout: nothing here goes through a float.
//!
//! The amount to pay for a top-up of `amount` US dollars:
//!
//! ```text
//! discounted = amount × discount                     (discount: RechargeDiscount[amount], else 1)
//! fee        = discounted × percent_fee + fixed_fee  (USD; the spec's "fee rate" is percent_fee)
//! pay        = (discounted + fee) × exchange rate    (PaymentUSDRate for CNY, 1 for USD)
//! ```
//!
//! which with no fixed fee is the spec's `(amount × discount + amount × discount × fee rate) ×
//! exchange rate`. The amount paid and the fee shown are rounded half away from zero to cents.
//! The quota credited is `amount × quota_per_unit`: the discount and the fee change what is
//! paid, never what is credited.

use crate::DomainError;
use crate::ErrorCode;
use rust_decimal::{Decimal, RoundingStrategy};
use std::str::FromStr;

/// Largest top-up, in USD (spec section 9).
pub const MAX_AMOUNT: i64 = 1_000_000;

/// Currencies a gateway may charge in.
pub const CURRENCIES: &[&str] = &["CNY", "USD"];

/// Gateway types this release speaks.
pub const GATEWAY_TYPES: &[&str] = &["epay", "stripe", "alipay", "wxpay"];

/// The currency a gateway type charges in, when the type has only one (Alipay and WeChat Pay
/// charge in yuan).
pub fn only_currency(gateway_type: &str) -> Option<&'static str> {
    matches!(gateway_type, "alipay" | "wxpay").then_some("CNY")
}

/// What a top-up costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    /// USD, whole.
    pub amount: i64,
    pub discount: Decimal,
    /// In `currency`, two decimals.
    pub fee: Decimal,
    /// What is paid, in `currency`, two decimals.
    pub pay: Decimal,
    pub currency: String,
    pub quota: i64,
}

/// A gateway's fees and currency, as the quote needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fees {
    /// USD per order.
    pub fixed: Decimal,
    /// A fraction (0.05 = 5 %).
    pub percent: Decimal,
    pub currency: String,
}

/// Rounded half away from zero to cents, always written with two decimals ("73.00").
fn cents(d: Decimal) -> Decimal {
    let mut c = d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    c.rescale(2);
    c
}

/// Checks a top-up amount: a whole number of dollars from `min` to [`MAX_AMOUNT`].
pub fn check_amount(amount: i64, min: i64) -> Result<(), DomainError> {
    let min = min.max(1);
    if amount < min || amount > MAX_AMOUNT {
        return Err(DomainError::invalid_coded(
            ErrorCode::PaymentAmountInvalid,
            "amount",
            format!("the amount must be a whole number of dollars from {min} to {MAX_AMOUNT}"),
        ));
    }
    Ok(())
}

/// The discount of a top-up of `amount` dollars: the `RechargeDiscount` setting maps whole
/// amounts to a factor (`{"100": 0.9}`: 10 % off a top-up of exactly 100 dollars). Entries
/// that are not a factor in (0, 1] are ignored.
pub fn discount_for(amount: i64, discounts: &serde_json::Value) -> Decimal {
    discounts
        .get(amount.to_string())
        .and_then(decimal_of)
        .filter(|d| *d > Decimal::ZERO && *d <= Decimal::ONE)
        .unwrap_or(Decimal::ONE)
}

/// A JSON number (or a numeric string) as a decimal, from its shortest text (0.1 is 0.1).
pub fn decimal_of(v: &serde_json::Value) -> Option<Decimal> {
    match v {
        serde_json::Value::Number(n) => Decimal::from_str(&n.to_string())
            .or_else(|_| Decimal::from_scientific(&n.to_string()))
            .ok(),
        serde_json::Value::String(s) => Decimal::from_str(s.trim()).ok(),
        _ => None,
    }
}

/// The exchange rate from USD to `currency`: `usd_rate` (the `PaymentUSDRate` setting) for CNY,
/// 1 for USD.
pub fn exchange_rate(currency: &str, usd_rate: Decimal) -> Decimal {
    if currency == "USD" {
        Decimal::ONE
    } else {
        usd_rate
    }
}

/// The quote of a top-up of `amount` dollars through a gateway with `fees` (see the module
/// documentation). `amount` must have passed [`check_amount`]. An order that would cost nothing
/// (an exchange rate of 0, or a discount so deep the total rounds to 0.00) is refused with
/// `payment_price_invalid`: it would credit quota for free.
pub fn quote(
    amount: i64,
    discount: Decimal,
    fees: &Fees,
    usd_rate: Decimal,
    quota_per_unit: i64,
) -> Result<Quote, DomainError> {
    let rate = exchange_rate(&fees.currency, usd_rate);
    let discounted = Decimal::from(amount) * discount;
    let fee_usd = discounted * fees.percent + fees.fixed;
    let pay = cents((discounted + fee_usd) * rate);
    if rate <= Decimal::ZERO || pay <= Decimal::ZERO {
        return Err(DomainError::invalid_coded(
            ErrorCode::PaymentPriceInvalid,
            "PaymentUSDRate",
            format!(
                "a top-up of {amount} USD would cost {pay} {}: the exchange rate \
                 (PaymentUSDRate, {usd_rate}) or the discount (RechargeDiscount) is wrong; an \
                 administrator must correct it",
                fees.currency
            ),
        ));
    }
    Ok(Quote {
        amount,
        discount,
        fee: cents(fee_usd * rate),
        pay,
        currency: fees.currency.clone(),
        quota: amount.saturating_mul(quota_per_unit),
    })
}

/// Checks a gateway's fees, currency and sort (spec section 5): fees at least 0 (the percent
/// fee a fraction below 1), a known currency, sort at least 0.
pub fn check_fees(
    fixed: Decimal,
    percent: Decimal,
    currency: &str,
    sort: i64,
) -> Result<(), DomainError> {
    let field = |field: &'static str, reason: &str| {
        DomainError::invalid_coded(ErrorCode::PaymentFieldInvalid, field, reason)
    };
    if fixed < Decimal::ZERO || fixed > Decimal::from(MAX_AMOUNT) {
        return Err(field("fixed_fee", "must be from 0 to 1000000 (USD)"));
    }
    if percent < Decimal::ZERO || percent >= Decimal::ONE {
        return Err(field(
            "percent_fee",
            "must be a fraction from 0 up to (not including) 1: 0.05 is 5 %",
        ));
    }
    if !CURRENCIES.contains(&currency) {
        return Err(field("currency", "must be CNY or USD"));
    }
    if sort < 0 {
        return Err(field("sort", "must be 0 or more"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap_or_default()
    }

    fn fees(fixed: &str, percent: &str, currency: &str) -> Fees {
        Fees {
            fixed: d(fixed),
            percent: d(percent),
            currency: currency.into(),
        }
    }

    /// Spec section 9's formula, case by case: (amount × discount + amount × discount × fee
    /// rate) × exchange rate, to the cent, plus the fixed fee where one is set.
    #[test]
    fn alipay_and_wechat_pay_charge_in_yuan_only() {
        assert_eq!(only_currency("alipay"), Some("CNY"));
        assert_eq!(only_currency("wxpay"), Some("CNY"));
        assert_eq!(only_currency("epay"), None);
        assert_eq!(only_currency("stripe"), None);
    }

    #[test]
    fn quotes_follow_the_spec_formula() {
        let cases = [
            // amount, discount, fixed, percent, currency, rate -> fee, pay
            (10, "1", "0", "0", "CNY", "7.3", "0.00", "73.00"),
            (10, "0.9", "0", "0.05", "CNY", "7.3", "3.29", "68.99"), // 9×0.05=0.45×7.3=3.285
            (100, "0.8", "0", "0.006", "CNY", "7.25", "3.48", "583.48"),
            (1, "1", "0.3", "0.029", "USD", "7.3", "0.33", "1.33"),
            (7, "1", "0", "0.1", "USD", "7.3", "0.70", "7.70"),
            (3, "1", "0", "0.015", "CNY", "7.1", "0.32", "21.62"), // 3×0.015×7.1=0.3195
            (1_000_000, "1", "0", "0", "CNY", "7.3", "0.00", "7300000.00"),
        ];
        for (amount, disc, fixed, percent, cur, rate, fee, pay) in cases {
            let q = quote(
                amount,
                d(disc),
                &fees(fixed, percent, cur),
                d(rate),
                500_000,
            )
            .unwrap();
            assert_eq!(
                (q.fee, q.pay),
                (d(fee), d(pay)),
                "{amount} {disc} {percent} {cur}"
            );
            assert_eq!(
                q.quota,
                amount * 500_000,
                "the discount never changes the credit"
            );
            assert_eq!(q.pay.scale(), 2, "two decimals: {}", q.pay);
        }
    }

    #[test]
    fn half_a_cent_rounds_away_from_zero() {
        // 1 × 0.005 = 0.005 USD fee: 0.01, and 1.005 paid: 1.01.
        let q = quote(1, Decimal::ONE, &fees("0", "0.005", "USD"), Decimal::ONE, 1).unwrap();
        assert_eq!((q.fee, q.pay), (d("0.01"), d("1.01")));
    }

    /// An order that would cost nothing is refused: it would credit quota for free.
    #[test]
    fn free_orders_are_refused() {
        let cny = fees("0", "0", "CNY");
        for (rate, discount) in [("0", "1"), ("-1", "1"), ("7.3", "0.0001")] {
            let e = quote(1, d(discount), &cny, d(rate), 500_000).unwrap_err();
            assert_eq!(
                e.code(),
                ErrorCode::PaymentPriceInvalid,
                "{rate} {discount}"
            );
        }
        // A USD gateway does not use the rate: a rate of 0 does not matter there.
        assert!(quote(1, Decimal::ONE, &fees("0", "0", "USD"), Decimal::ZERO, 1).is_ok());
        // The smallest payable order: one cent.
        let q = quote(1, d("0.0014"), &cny, d("7.3"), 1).unwrap();
        assert_eq!(q.pay, d("0.01"));
    }

    #[test]
    fn discounts_apply_to_their_exact_amount_only() {
        let table = json!({"100": 0.9, "50": "0.95", "10": 1.5, "20": 0, "x": 0.1});
        assert_eq!(discount_for(100, &table), d("0.9"));
        assert_eq!(discount_for(50, &table), d("0.95"));
        assert_eq!(discount_for(99, &table), Decimal::ONE);
        assert_eq!(discount_for(10, &table), Decimal::ONE, "above 1 is ignored");
        assert_eq!(discount_for(20, &table), Decimal::ONE, "0 is ignored");
        assert_eq!(discount_for(100, &json!([])), Decimal::ONE);
    }

    #[test]
    fn amounts_are_whole_dollars_within_bounds() {
        assert!(check_amount(1, 1).is_ok());
        assert!(check_amount(MAX_AMOUNT, 1).is_ok());
        for (amount, min) in [(0, 1), (-5, 1), (4, 5), (MAX_AMOUNT + 1, 1)] {
            let e = check_amount(amount, min).unwrap_err();
            assert_eq!(e.code(), ErrorCode::PaymentAmountInvalid, "{amount} {min}");
        }
        // A minimum setting of 0 still means at least one dollar.
        assert!(check_amount(0, 0).is_err());
    }

    #[test]
    fn gateway_fees_are_checked() {
        assert!(check_fees(d("0"), d("0"), "CNY", 0).is_ok());
        assert!(check_fees(d("0.3"), d("0.029"), "USD", 5).is_ok());
        for (fixed, percent, cur, sort, field) in [
            ("-1", "0", "CNY", 0, "fixed_fee"),
            ("0", "-0.01", "CNY", 0, "percent_fee"),
            ("0", "1", "CNY", 0, "percent_fee"),
            ("0", "5", "CNY", 0, "percent_fee"),
            ("0", "0", "EUR", 0, "currency"),
            ("0", "0", "CNY", -1, "sort"),
        ] {
            match check_fees(d(fixed), d(percent), cur, sort) {
                Err(DomainError::InvalidCoded { code, field: f, .. }) => {
                    assert_eq!((code.as_str(), f), ("payment_field_invalid", field));
                }
                other => panic!("{fixed} {percent} {cur} {sort}: {other:?}"),
            }
        }
    }

    #[test]
    fn json_numbers_become_exact_decimals() {
        assert_eq!(decimal_of(&json!(0.1)), Some(d("0.1")));
        assert_eq!(decimal_of(&json!(7.3)), Some(d("7.3")));
        assert_eq!(decimal_of(&json!("0.05")), Some(d("0.05")));
        assert_eq!(decimal_of(&json!(1e-7)), Some(d("0.0000001")));
        assert_eq!(decimal_of(&json!(true)), None);
    }
}
