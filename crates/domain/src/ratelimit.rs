//! Request rate limits by requests per minute (DOMAIN.md "Rate limits"; spec section 9).
//!
//! Pure state machines over caller-supplied time in milliseconds, so that the same rules can run
//! in process (one state per key) and, later, as a Redis Lua script. The exact semantics:
//!
//! **Fixed window** (`check_window`): a window opens at the first request seen when no window is
//! open (not aligned to clock minutes) and lasts `window_ms`. A request is allowed while fewer
//! than `limit` requests were allowed in the current window, and then counts. When `now_ms` is at
//! or after `start_ms + window_ms`, a new window opens at `now_ms` with a count of 0. A clock
//! that goes backwards stays in the current window. In Redis: `INCR key`, `PEXPIRE key window`
//! when the result is 1, allow when the result is `<= limit` (a denied request still counting
//! there is harmless: the window's verdict does not change).
//!
//! **Token bucket** (`check_bucket`): holds up to `capacity` tokens and gains `refill_per_ms`
//! tokens per millisecond elapsed since `last_ms`, capped at `capacity`; a request takes one
//! token when at least one is there (with a 1e-9 tolerance for floating-point rounding), else it
//! is denied and takes nothing. A fresh bucket is full ([`BucketState::full`]). A clock that goes
//! backwards adds nothing and does not move `last_ms` back. In Redis: a hash of
//! `tokens`/`last_ms`, missing = full.

/// Floating-point tolerance when comparing a bucket's tokens with 1.
const EPSILON: f64 = 1e-9;

/// Length of the fixed window used below 60 requests per minute.
pub const MINUTE_MS: u64 = 60_000;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    Unlimited,
    Window { limit: u32, window_ms: u64 },
    Bucket { capacity: u32, refill_per_ms: f64 },
}

/// The policy for a group's or a token's `api_rate` (requests per minute):
/// - `rpm <= 0`: unlimited;
/// - `1..=59`: a fixed one-minute window allowing `rpm` requests;
/// - `>= 60`: a token bucket refilled at `rpm / 60` tokens per second (`rpm / 60000` per ms)
///   with a capacity of one second's worth, rounded up (`ceil(rpm / 60)`, so at least 1): a
///   sustained `rpm` per minute with bursts of at most one second's share.
pub fn policy_for_rpm(rpm: i32) -> Policy {
    match u32::try_from(rpm) {
        Ok(0) | Err(_) => Policy::Unlimited,
        Ok(r) if r < 60 => Policy::Window {
            limit: r,
            window_ms: MINUTE_MS,
        },
        Ok(r) => Policy::Bucket {
            capacity: r.div_ceil(60),
            refill_per_ms: f64::from(r) / MINUTE_MS as f64,
        },
    }
}

/// A fixed-window counter. `Default` is a fresh state (no window open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowState {
    pub start_ms: u64,
    pub count: u32,
}

impl WindowState {
    /// Milliseconds until a request would be allowed: 0 when one would be allowed now, else the
    /// time left in the current window.
    pub fn retry_after_ms(&self, limit: u32, window_ms: u64, now_ms: u64) -> u64 {
        let end = self.start_ms.saturating_add(window_ms);
        if now_ms >= end || self.count < limit {
            0
        } else {
            end - now_ms
        }
    }
}

/// Fixed-window check; counts the request and returns true when it is allowed.
pub fn check_window(state: &mut WindowState, limit: u32, window_ms: u64, now_ms: u64) -> bool {
    let fresh = state.count == 0;
    if fresh || now_ms >= state.start_ms.saturating_add(window_ms) {
        state.start_ms = now_ms;
        state.count = 0;
    }
    if state.count < limit {
        state.count += 1;
        true
    } else {
        false
    }
}

/// A token bucket. Start one with [`BucketState::full`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketState {
    pub tokens: f64,
    pub last_ms: u64,
}

impl BucketState {
    /// A fresh bucket: full at `now_ms`.
    pub fn full(capacity: u32, now_ms: u64) -> BucketState {
        BucketState {
            tokens: f64::from(capacity),
            last_ms: now_ms,
        }
    }

    /// Tokens at `now_ms` after refilling (without changing the state).
    fn available(&self, capacity: u32, refill_per_ms: f64, now_ms: u64) -> f64 {
        let elapsed = now_ms.saturating_sub(self.last_ms) as f64;
        let refill = if refill_per_ms > 0.0 {
            elapsed * refill_per_ms
        } else {
            0.0
        };
        (self.tokens + refill).min(f64::from(capacity))
    }

    /// Milliseconds until a request would be allowed: 0 when one would be allowed now,
    /// `u64::MAX` when the bucket never refills (or can never hold a token).
    pub fn retry_after_ms(&self, capacity: u32, refill_per_ms: f64, now_ms: u64) -> u64 {
        let tokens = self.available(capacity, refill_per_ms, now_ms);
        if tokens + EPSILON >= 1.0 {
            return 0;
        }
        if capacity == 0 || refill_per_ms.is_nan() || refill_per_ms <= 0.0 {
            return u64::MAX;
        }
        let ms = ((1.0 - tokens - EPSILON) / refill_per_ms).ceil();
        if ms >= u64::MAX as f64 {
            u64::MAX
        } else {
            (ms as u64).max(1)
        }
    }
}

/// Token-bucket check; takes a token and returns true when the request is allowed.
pub fn check_bucket(
    state: &mut BucketState,
    capacity: u32,
    refill_per_ms: f64,
    now_ms: u64,
) -> bool {
    state.tokens = state.available(capacity, refill_per_ms, now_ms);
    state.last_ms = state.last_ms.max(now_ms);
    if state.tokens + EPSILON >= 1.0 {
        state.tokens = (state.tokens - 1.0).max(0.0);
        true
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn policies() {
        assert_eq!(policy_for_rpm(0), Policy::Unlimited);
        assert_eq!(policy_for_rpm(-5), Policy::Unlimited);
        assert_eq!(
            policy_for_rpm(1),
            Policy::Window {
                limit: 1,
                window_ms: 60_000
            }
        );
        assert_eq!(
            policy_for_rpm(59),
            Policy::Window {
                limit: 59,
                window_ms: 60_000
            }
        );
        assert_eq!(
            policy_for_rpm(60),
            Policy::Bucket {
                capacity: 1,
                refill_per_ms: 0.001
            }
        );
        assert_eq!(
            policy_for_rpm(90),
            Policy::Bucket {
                capacity: 2,
                refill_per_ms: 0.0015
            }
        );
        assert_eq!(
            policy_for_rpm(600),
            Policy::Bucket {
                capacity: 10,
                refill_per_ms: 0.01
            }
        );
    }

    #[test]
    fn fixed_window() {
        let mut s = WindowState::default();
        let (limit, win) = (3, 60_000);
        let t0 = 1_000_000;
        assert!(check_window(&mut s, limit, win, t0));
        assert_eq!(s.start_ms, t0);
        assert!(check_window(&mut s, limit, win, t0 + 10));
        assert!(check_window(&mut s, limit, win, t0 + 20));
        assert_eq!(s.retry_after_ms(limit, win, t0 + 20), 60_000 - 20);
        assert!(!check_window(&mut s, limit, win, t0 + 30));
        assert!(!check_window(&mut s, limit, win, t0 + 59_999));
        assert_eq!(s.count, 3, "denied requests do not count");
        assert_eq!(s.retry_after_ms(limit, win, t0 + 59_999), 1);
        assert_eq!(s.retry_after_ms(limit, win, t0 + 60_000), 0);
        assert!(check_window(&mut s, limit, win, t0 + 60_000));
        assert_eq!((s.start_ms, s.count), (t0 + 60_000, 1));
        // a clock going backwards stays in the window
        assert!(check_window(&mut s, limit, win, t0));
        assert!(check_window(&mut s, limit, win, t0));
        assert!(!check_window(&mut s, limit, win, t0));
    }

    #[test]
    fn fresh_window_at_time_zero() {
        let mut s = WindowState::default();
        assert!(check_window(&mut s, 1, 60_000, 0));
        assert!(!check_window(&mut s, 1, 60_000, 59_999));
        assert!(check_window(&mut s, 1, 60_000, 60_000));
        assert_eq!(WindowState::default().retry_after_ms(1, 60_000, 5), 0);
    }

    #[test]
    fn bucket_at_60_rpm_allows_one_per_second() {
        let Policy::Bucket {
            capacity,
            refill_per_ms,
        } = policy_for_rpm(60)
        else {
            panic!("bucket expected");
        };
        let t0 = 5_000_000;
        let mut s = BucketState::full(capacity, t0);
        assert!(check_bucket(&mut s, capacity, refill_per_ms, t0));
        assert!(!check_bucket(&mut s, capacity, refill_per_ms, t0));
        assert_eq!(s.retry_after_ms(capacity, refill_per_ms, t0), 1000);
        assert!(!check_bucket(&mut s, capacity, refill_per_ms, t0 + 999));
        assert_eq!(s.retry_after_ms(capacity, refill_per_ms, t0 + 999), 1);
        assert!(check_bucket(&mut s, capacity, refill_per_ms, t0 + 1000));
        // over a long idle time the bucket holds only `capacity`
        assert!(check_bucket(&mut s, capacity, refill_per_ms, t0 + 100_000));
        assert!(!check_bucket(&mut s, capacity, refill_per_ms, t0 + 100_000));
    }

    #[test]
    fn bucket_bursts_up_to_capacity() {
        let (capacity, refill) = (10, 0.01); // 600 rpm
        let mut s = BucketState::full(capacity, 0);
        for _ in 0..10 {
            assert!(check_bucket(&mut s, capacity, refill, 0));
        }
        assert!(!check_bucket(&mut s, capacity, refill, 0));
        assert!(!check_bucket(&mut s, capacity, refill, 99));
        assert!(check_bucket(&mut s, capacity, refill, 100));
        // clock going backwards adds nothing and keeps last_ms
        assert!(!check_bucket(&mut s, capacity, refill, 50));
        assert_eq!(s.last_ms, 100);
    }

    #[test]
    fn bucket_without_refill() {
        let mut s = BucketState::full(1, 0);
        assert!(check_bucket(&mut s, 1, 0.0, 0));
        assert!(!check_bucket(&mut s, 1, 0.0, 1_000_000));
        assert_eq!(s.retry_after_ms(1, 0.0, 1_000_000), u64::MAX);
    }

    proptest! {
        /// Over any span, a bucket allows at most capacity + rate * span requests, and a window
        /// at most `limit` per window.
        #[test]
        fn bucket_never_exceeds_its_rate(rpm in 60i32..10_000, gaps in proptest::collection::vec(0u64..200, 1..400)) {
            let Policy::Bucket { capacity, refill_per_ms } = policy_for_rpm(rpm) else {
                return Err(TestCaseError::fail("bucket expected"));
            };
            let mut s = BucketState::full(capacity, 0);
            let mut now = 0;
            let mut allowed = 0u64;
            for g in gaps {
                now += g;
                if check_bucket(&mut s, capacity, refill_per_ms, now) {
                    allowed += 1;
                }
                let bound = f64::from(capacity) + refill_per_ms * now as f64;
                prop_assert!(allowed as f64 <= bound + 1e-6, "{} > {}", allowed, bound);
                prop_assert!(s.tokens >= 0.0 && s.tokens <= f64::from(capacity));
            }
        }

        #[test]
        fn window_never_exceeds_its_limit(rpm in 1i32..60, gaps in proptest::collection::vec(0u64..2_000, 1..400)) {
            let Policy::Window { limit, window_ms } = policy_for_rpm(rpm) else {
                return Err(TestCaseError::fail("window expected"));
            };
            let mut s = WindowState::default();
            let mut now = 0;
            let mut allowed_in_window = 0u32;
            let mut window_start = None;
            for g in gaps {
                now += g;
                let allowed = check_window(&mut s, limit, window_ms, now);
                if window_start != Some(s.start_ms) {
                    window_start = Some(s.start_ms);
                    allowed_in_window = 0;
                }
                if allowed {
                    allowed_in_window += 1;
                    prop_assert_eq!(s.retry_after_ms(limit, window_ms, now) == 0, s.count < limit);
                }
                prop_assert!(allowed_in_window <= limit);
                prop_assert!(now - s.start_ms < window_ms);
            }
        }
    }
}
