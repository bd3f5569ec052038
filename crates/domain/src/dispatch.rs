//! Channel selection: highest priority first, weighted random inside a priority, over an RNG the
//! caller passes in (DOMAIN.md "Channels"; spec section 4 "Retry tries higher-priority nodes
//! first").

/// A channel that can serve a request (already filtered by group, model and status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub id: i64,
    pub priority: i64,
    pub weight: u32,
}

impl Candidate {
    /// The weight used for selection: 0 counts as 1.
    pub const fn effective_weight(&self) -> u64 {
        if self.weight == 0 {
            1
        } else {
            self.weight as u64
        }
    }
}

/// Picks a channel id.
///
/// Among the candidates for which `skip(id)` is false (the caller skips channels already tried
/// and channels frozen by the retry cooldown), only those of the highest priority present are
/// considered, so lower priorities are used only when every higher one is skipped. Inside that
/// priority the choice is weighted: `random(total)` is called exactly once, with `total` the sum
/// of the effective weights (weight 0 counts as 1), and must return a uniform value in
/// `0..total`; candidate `i` (in slice order) is chosen when the value falls in its cumulative
/// weight range. An out-of-range value is reduced modulo `total`. `skip` is called once per
/// candidate. Returns `None` when every candidate is skipped (and then `random` is not called).
/// Deterministic given `skip` and `random`.
pub fn pick(
    candidates: &[Candidate],
    skip: impl Fn(i64) -> bool,
    random: &mut impl FnMut(u64) -> u64,
) -> Option<i64> {
    let open: Vec<&Candidate> = candidates.iter().filter(|c| !skip(c.id)).collect();
    let top = open.iter().map(|c| c.priority).max()?;
    let tier = || open.iter().filter(move |c| c.priority == top);
    let total = tier().fold(0u64, |sum, c| sum.saturating_add(c.effective_weight()));
    let mut r = random(total);
    if r >= total {
        r %= total;
    }
    let mut last = None;
    for c in tier() {
        let w = c.effective_weight();
        if r < w {
            return Some(c.id);
        }
        r -= w;
        last = Some(c.id);
    }
    // Only reachable if the weight sum saturated; the last candidate takes the remainder.
    last
}

/// Picks a channel id by "power of two choices" (latency-aware routing): two draws by weight
/// from the highest priority present among the candidates `skip` leaves (each as [`pick`]
/// draws; the second without the first), and the one with the lower `cost` wins, ties going to
/// the first draw. A priority with one candidate left gives that one (`random` called once,
/// `cost` not at all); otherwise `random` is called twice and `cost` once for each draw. Lower
/// priorities are used only when every higher one is skipped, as with [`pick`].
pub fn pick_two(
    candidates: &[Candidate],
    skip: impl Fn(i64) -> bool,
    random: &mut impl FnMut(u64) -> u64,
    cost: impl Fn(i64) -> f64,
) -> Option<i64> {
    let first = pick(candidates, &skip, random)?;
    let top = candidates.iter().find(|c| c.id == first)?.priority;
    let in_tier = |id: i64| candidates.iter().any(|c| c.id == id && c.priority == top);
    let Some(second) = pick(
        candidates,
        |id| id == first || skip(id) || !in_tier(id),
        random,
    ) else {
        return Some(first);
    };
    if cost(second) < cost(first) {
        Some(second)
    } else {
        Some(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{HashMap, HashSet};

    fn c(id: i64, priority: i64, weight: u32) -> Candidate {
        Candidate {
            id,
            priority,
            weight,
        }
    }

    #[test]
    fn highest_priority_first_then_lower() {
        let cs = [c(1, 0, 10), c(2, 5, 1), c(3, 5, 1), c(4, 1, 100)];
        let mut zero = |_| 0;
        assert_eq!(pick(&cs, |_| false, &mut zero), Some(2));
        assert_eq!(pick(&cs, |id| id == 2, &mut zero), Some(3));
        assert_eq!(pick(&cs, |id| id == 2 || id == 3, &mut zero), Some(4));
        assert_eq!(pick(&cs, |id| id != 1, &mut zero), Some(1));
        assert_eq!(pick(&cs, |_| true, &mut zero), None);
        assert_eq!(pick(&[], |_| false, &mut zero), None);
    }

    #[test]
    fn weighted_ranges_and_zero_weight() {
        let cs = [c(1, 0, 3), c(2, 0, 0), c(3, 0, 2)];
        let expect = [1, 1, 1, 2, 3, 3];
        for (r, want) in expect.iter().enumerate() {
            let mut totals = Vec::new();
            let mut rng = |total| {
                totals.push(total);
                r as u64
            };
            assert_eq!(pick(&cs, |_| false, &mut rng), Some(*want));
            assert_eq!(totals, vec![6]);
        }
        // an out-of-range value wraps
        assert_eq!(pick(&cs, |_| false, &mut |_| 6), Some(1));
        assert_eq!(pick(&cs, |_| false, &mut |_| u64::MAX), Some(2)); // (2^64 - 1) % 6 = 3
    }

    #[test]
    fn random_not_called_when_nothing_left() {
        let mut called = false;
        let mut rng = |_| {
            called = true;
            0
        };
        assert_eq!(pick(&[c(1, 0, 1)], |_| true, &mut rng), None);
        assert!(!called);
    }

    #[test]
    fn saturated_weights_still_pick() {
        let cs: Vec<Candidate> = (0..4).map(|i| c(i, 0, u32::MAX)).collect();
        assert_eq!(pick(&cs, |_| false, &mut |t| t - 1), Some(3));
        assert_eq!(pick(&cs, |_| false, &mut |_| 0), Some(0));
    }

    #[test]
    fn two_choices_take_the_cheaper_draw() {
        let cs = [c(1, 5, 1), c(2, 5, 1), c(3, 5, 1), c(4, 9, 1), c(5, 0, 1)];
        let costs = |id: i64| match id {
            1 => 50.0,
            2 => 10.0,
            3 => 30.0,
            _ => 0.0,
        };
        // Draws in the top priority among the unskipped: 4 is skipped, so priority 5.
        let mut draws = vec![0u64, 0].into_iter(); // first: 1 (of 1,2,3); second: 2 (of 2,3)
        let got = pick_two(&cs, |id| id == 4, &mut |_| draws.next().unwrap(), costs);
        assert_eq!(got, Some(2), "10 < 50");
        let mut draws = vec![2u64, 0].into_iter(); // first: 3; second: 1 (of 1,2)
        let mut totals = Vec::new();
        let got = pick_two(
            &cs,
            |id| id == 4,
            &mut |t| {
                totals.push(t);
                draws.next().unwrap()
            },
            costs,
        );
        assert_eq!(got, Some(3), "30 < 50");
        assert_eq!(totals, vec![3, 2], "the second draw leaves the first out");
    }

    #[test]
    fn two_choices_tie_goes_to_the_first_and_never_leave_the_priority() {
        let cs = [c(1, 5, 1), c(2, 5, 1), c(3, 0, 1)];
        assert_eq!(pick_two(&cs, |_| false, &mut |_| 1, |_| 7.0), Some(2));
        // One candidate left in the top priority: it is taken, the lower one is not drawn even
        // though it is cheaper, and cost is not asked.
        let mut calls = 0;
        let got = pick_two(
            &cs,
            |id| id == 2,
            &mut |_| {
                calls += 1;
                0
            },
            |id| {
                assert_ne!(id, 3);
                if id == 3 {
                    0.0
                } else {
                    100.0
                }
            },
        );
        assert_eq!((got, calls), (Some(1), 1));
        assert_eq!(pick_two(&cs, |_| true, &mut |_| 0, |_| 0.0), None);
    }

    #[test]
    fn two_choices_send_most_traffic_to_the_cheap_channel() {
        // Equal weights, one channel ten times slower: with uniform draws the slow one wins only
        // when it is drawn twice, which cannot happen (the second draw excludes the first).
        let cs = [c(1, 0, 1), c(2, 0, 1), c(3, 0, 1)];
        let cost = |id: i64| if id == 3 { 100.0 } else { 10.0 };
        let mut n = 0u64;
        let mut seen = HashMap::new();
        for _ in 0..600 {
            let id = pick_two(
                &cs,
                |_| false,
                &mut |t| {
                    n += 7;
                    n % t
                },
                cost,
            )
            .unwrap();
            *seen.entry(id).or_insert(0) += 1;
        }
        assert_eq!(seen.get(&3), None, "the slow one always loses: {seen:?}");
    }

    fn candidates() -> impl Strategy<Value = Vec<Candidate>> {
        proptest::collection::vec((0i64..4, 0u32..6), 1..10).prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (p, w))| c(i as i64 + 1, p, w))
                .collect()
        })
    }

    proptest! {
        #[test]
        fn never_returns_skipped_and_always_top_priority(
            cs in candidates(),
            skipped in proptest::collection::hash_set(1i64..11, 0..10),
            r in any::<u64>(),
        ) {
            let got = pick(&cs, |id| skipped.contains(&id), &mut |_| r);
            let open: Vec<&Candidate> = cs.iter().filter(|c| !skipped.contains(&c.id)).collect();
            match got {
                None => prop_assert!(open.is_empty()),
                Some(id) => {
                    prop_assert!(!skipped.contains(&id));
                    let top = open.iter().map(|c| c.priority).max().unwrap();
                    let chosen = cs.iter().find(|c| c.id == id).unwrap();
                    prop_assert_eq!(chosen.priority, top);
                }
            }
        }

        #[test]
        fn counting_rng_matches_weights_over_a_cycle(
            cs in candidates(),
            skipped in proptest::collection::hash_set(1i64..11, 0..10),
        ) {
            let open: Vec<&Candidate> = cs.iter().filter(|c| !skipped.contains(&c.id)).collect();
            prop_assume!(!open.is_empty());
            let top = open.iter().map(|c| c.priority).max().unwrap();
            let tier: Vec<&&Candidate> = open.iter().filter(|c| c.priority == top).collect();
            let total: u64 = tier.iter().map(|c| c.effective_weight()).sum();

            let mut counter = 0u64;
            let mut rng = |t: u64| {
                let v = counter % t;
                counter += 1;
                v
            };
            let mut seen: HashMap<i64, u64> = HashMap::new();
            for _ in 0..total {
                let id = pick(&cs, |id| skipped.contains(&id), &mut rng).unwrap();
                *seen.entry(id).or_default() += 1;
            }
            let expected: HashMap<i64, u64> = tier.iter().map(|c| (c.id, c.effective_weight())).collect();
            prop_assert_eq!(seen, expected);
        }

        #[test]
        fn retry_loop_visits_every_candidate_once(cs in candidates(), r in any::<u64>()) {
            // The relay's retry: skip what was tried, pick again, until nothing is left.
            let mut tried: HashSet<i64> = HashSet::new();
            let mut last_priority = i64::MAX;
            while let Some(id) = pick(&cs, |id| tried.contains(&id), &mut |t| r % t) {
                prop_assert!(tried.insert(id));
                let p = cs.iter().find(|c| c.id == id).unwrap().priority;
                prop_assert!(p <= last_priority, "priorities never go up");
                last_priority = p;
            }
            prop_assert_eq!(tried.len(), cs.len());
        }
    }
}
