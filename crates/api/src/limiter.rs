//! Per-IP fixed-window limits for the management API: a general one for every `/api` call and a
//! tighter one for login, registration, verification e-mails and password reset.

use dashmap::DashMap;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub requests: u32,
    pub window: Duration,
}

#[derive(Debug)]
pub struct IpLimiter {
    limit: Limit,
    windows: DashMap<String, (Instant, u32)>,
}

impl IpLimiter {
    pub fn new(limit: Limit) -> Self {
        IpLimiter {
            limit,
            windows: DashMap::new(),
        }
    }

    /// Counts one request from `ip`; false when the window's allowance is already spent.
    /// A limit of 0 requests disables the limiter.
    pub fn check(&self, ip: &str) -> bool {
        self.check_at(ip, Instant::now())
    }

    pub fn check_at(&self, ip: &str, now: Instant) -> bool {
        if self.limit.requests == 0 {
            return true;
        }
        let mut entry = self.windows.entry(ip.to_owned()).or_insert((now, 0));
        let (start, count) = *entry;
        if now.duration_since(start) >= self.limit.window {
            *entry = (now, 1);
            return true;
        }
        if count >= self.limit.requests {
            return false;
        }
        entry.1 = count + 1;
        true
    }

    /// Drops windows that have ended (called periodically so the map does not grow forever).
    pub fn sweep(&self) {
        let now = Instant::now();
        self.windows
            .retain(|_, (start, _)| now.duration_since(*start) < self.limit.window);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_counts_per_ip_and_resets() {
        let l = IpLimiter::new(Limit {
            requests: 2,
            window: Duration::from_secs(60),
        });
        let t0 = Instant::now();
        assert!(l.check_at("a", t0) && l.check_at("a", t0));
        assert!(!l.check_at("a", t0 + Duration::from_secs(59)));
        assert!(l.check_at("b", t0));
        assert!(
            l.check_at("a", t0 + Duration::from_secs(60)),
            "a new window starts"
        );
        assert!(l.check_at("a", t0 + Duration::from_secs(61)));
        assert!(!l.check_at("a", t0 + Duration::from_secs(62)));
        assert!(IpLimiter::new(Limit {
            requests: 0,
            window: Duration::from_secs(1)
        })
        .check("x"));
    }
}
