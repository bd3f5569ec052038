//! **The balance rule**, as pure functions: what an account admits, what a request reserves and
//! what a settlement charges. Requests admitted against a balance spend at most that balance
//! (plus the `OverdraftTolerance` setting) together.
//!
//! The local ledger ([`crate::Ledger`]) calls these functions; the Redis scripts
//! ([`crate::shared`], `RESERVE` and `SETTLE`) state the same rule in Lua, and the tests of this
//! module and of `tests/redis.rs` hold the two to the same answers. docs/billing.md points here.

/// What an account has free for a new reservation: its balance less what requests in flight
/// hold reserved. `None` when it admits nothing: an empty (or negative) balance admits no
/// request, not even a free one, and a balance whose free part is below the request's
/// minimum (`min`, the cost of its prompt) admits none either.
pub fn available(balance: i64, reserved: i64, min: i64) -> Option<i64> {
    let free = balance - reserved;
    (balance > 0 && free >= min).then_some(free)
}

/// The amount reserved for a request whose cost lies between `min` and `max`: its worst case,
/// as much of it as the free part of the balance covers (`free`, the smaller of the user's and
/// the key's; [`available`] checked it covers `min`).
pub fn reservation(max: i64, free: i64) -> i64 {
    max.min(free).max(0)
}

/// What an account can give a settlement: its balance less what the other requests in flight
/// hold reserved, plus the overdraft tolerance; never below 0.
pub fn room(balance: i64, reserved_by_others: i64, tolerance: i64) -> i64 {
    (balance - reserved_by_others + tolerance.max(0)).max(0)
}

/// The charge of a settlement: the request's real cost, but no more than the account's
/// [`room`]. The consume record keeps the cost when the cap applied
/// (`metadata.uncapped_quota`, [`note_cap`]).
pub fn charge(cost: i64, room: i64) -> i64 {
    cost.min(room).max(0)
}

/// The record's metadata (a JSON object) with `uncapped_quota` set to `cost` when the charge
/// is less than the cost; unchanged otherwise.
pub fn note_cap(metadata: &str, cost: i64, charge: i64) -> Option<String> {
    if charge == cost {
        return None;
    }
    let body = metadata.trim();
    Some(match body.strip_prefix('{') {
        Some(rest) if rest.trim_start().starts_with('}') => {
            format!("{{\"uncapped_quota\":{cost}}}")
        }
        Some(rest) => format!("{{\"uncapped_quota\":{cost},{rest}"),
        None => format!("{{\"uncapped_quota\":{cost}}}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_balance_admits_nothing_not_even_a_free_request() {
        assert_eq!(available(0, 0, 0), None);
        assert_eq!(available(-5, 0, 0), None);
        assert_eq!(available(100, 0, 0), Some(100));
    }

    #[test]
    fn a_request_is_admitted_only_when_the_free_balance_covers_its_minimum() {
        assert_eq!(available(100, 60, 41), None);
        assert_eq!(available(100, 60, 40), Some(40));
    }

    #[test]
    fn a_reservation_is_the_worst_case_as_far_as_the_balance_covers_it() {
        assert_eq!(reservation(500, 40), 40);
        assert_eq!(reservation(30, 40), 30);
        assert_eq!(reservation(30, -1), 0);
    }

    #[test]
    fn a_settlement_charges_the_cost_up_to_the_room_the_others_leave() {
        assert_eq!(charge(70, room(100, 50, 0)), 50);
        assert_eq!(charge(70, room(100, 50, 25)), 70);
        assert_eq!(charge(70, room(10, 50, 0)), 0);
        assert_eq!(charge(-3, room(100, 0, 0)), 0);
        assert_eq!(room(100, 0, -7), 100, "a negative tolerance counts as none");
    }

    #[test]
    fn the_cut_cost_is_kept_in_the_metadata() {
        assert_eq!(note_cap("{}", 70, 70), None);
        assert_eq!(note_cap("{}", 70, 50).unwrap(), r#"{"uncapped_quota":70}"#);
        assert_eq!(
            note_cap(r#"{"a":1}"#, 70, 50).unwrap(),
            r#"{"uncapped_quota":70,"a":1}"#
        );
        assert_eq!(note_cap("", 70, 50).unwrap(), r#"{"uncapped_quota":70}"#);
    }
}
