//! The settings snapshot every handler reads. Loaded from the database at start, replaced on every
//! write through the API, and reloaded periodically so every node converges on the same values.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use switchboard_domain::options::OptionValues;

use crate::relay::edge::RelayOptions;

#[derive(Debug, Default, Clone)]
pub struct Settings {
    inner: Arc<RwLock<Current>>,
}

/// An immutable view of all settings at one moment.
pub type Snapshot = Arc<HashMap<String, String>>;

/// The values, and what the relay reads of them on every request, parsed when they were set.
#[derive(Debug)]
struct Current {
    values: Snapshot,
    relay: RelayOptions,
}

impl Default for Current {
    fn default() -> Self {
        let values = Snapshot::default();
        let relay = RelayOptions::read(&View(&values));
        Current { values, relay }
    }
}

impl Settings {
    fn read<T>(&self, f: impl FnOnce(&Current) -> T) -> T {
        match self.inner.read() {
            Ok(g) => f(&g),
            Err(p) => f(&p.into_inner()),
        }
    }

    pub fn snapshot(&self) -> Snapshot {
        self.read(|c| Arc::clone(&c.values))
    }

    /// The relay's per-request settings ([`RelayOptions`]), parsed once per write.
    pub fn relay_options(&self) -> RelayOptions {
        self.read(|c| c.relay)
    }

    /// [`Settings::snapshot`] and [`Settings::relay_options`] of the same moment.
    pub fn snapshot_and_relay_options(&self) -> (Snapshot, RelayOptions) {
        self.read(|c| (Arc::clone(&c.values), c.relay))
    }

    pub fn replace_all(&self, values: HashMap<String, String>) {
        let relay = RelayOptions::read(&View(&values));
        let next = Current {
            values: Arc::new(values),
            relay,
        };
        match self.inner.write() {
            Ok(mut g) => *g = next,
            Err(p) => *p.into_inner() = next,
        }
    }

    pub fn set(&self, key: &str, value: &str) {
        self.set_many(&[(key.to_owned(), value.to_owned())]);
    }

    /// Applies several values at once: a reader sees all of them or none.
    pub fn set_many(&self, items: &[(String, String)]) {
        let mut next: HashMap<String, String> = (*self.snapshot()).clone();
        for (key, value) in items {
            next.insert(key.clone(), value.clone());
        }
        self.replace_all(next);
    }
}

/// Typed reads on a snapshot (defaults from the domain catalogue).
pub struct View<'a>(pub &'a HashMap<String, String>);

impl OptionValues for View<'_> {
    fn raw(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relays_options_follow_every_write() {
        let s = Settings::default();
        assert_eq!(
            s.relay_options().pre_consumed,
            500,
            "the catalogue's default"
        );
        s.set_many(&[
            ("RetryTimes".into(), "4".into()),
            ("PreConsumedQuota".into(), "9".into()),
        ]);
        let (values, relay) = s.snapshot_and_relay_options();
        assert_eq!((relay.retries, relay.pre_consumed), (4, 9));
        assert_eq!(relay, RelayOptions::read(&View(&values)));
        s.set("RetryTimes", "1");
        assert_eq!(
            (s.relay_options().retries, s.relay_options().pre_consumed),
            (1, 9)
        );
        s.replace_all(HashMap::new());
        assert_eq!(s.relay_options(), Settings::default().relay_options());
    }
}
