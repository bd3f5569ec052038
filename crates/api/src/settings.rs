//! The settings snapshot every handler reads. Loaded from the database at start, replaced on every
//! write through the API, and reloaded periodically so every node converges on the same values.
//!
//! Every write parses the values once into typed groups: the relay's [`RelayOptions`], and
//! the rest ([`groups`]: site, registration, sign-in, SMTP, payment, Telegram, operation),
//! which handlers read as `state.settings.site().system_name`. Only the relay still reads
//! values by key from the [`Snapshot`] ([`View`]).

mod groups;
mod relay_options;

pub use groups::{
    Named, OAuthApp, Oidc, Operation, Payment, Registration, SignIn, Site, Smtp, Telegram,
    Turnstile, Typed, WeChat,
};

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::{Arc, RwLock};
use switchboard_domain::options::OptionValues;

pub use relay_options::{breaker_config, RelayOptions};

#[derive(Debug, Default, Clone)]
pub struct Settings {
    inner: Arc<RwLock<Current>>,
}

/// An immutable view of all settings at one moment.
pub type Snapshot = Arc<HashMap<String, String>>;

/// The values, and what the relay and the handlers read of them, parsed when they were set.
#[derive(Debug)]
struct Current {
    values: Snapshot,
    relay: RelayOptions,
    typed: Arc<Typed>,
}

impl Current {
    fn of(values: HashMap<String, String>) -> Current {
        let view = View(&values);
        let relay = RelayOptions::read(&view);
        let typed = Arc::new(Typed::read(&view));
        Current {
            values: Arc::new(values),
            relay,
            typed,
        }
    }
}

impl Default for Current {
    fn default() -> Self {
        Current::of(HashMap::new())
    }
}

/// One typed group of the settings of one moment ([`Settings::site`] and the others): it
/// derefs to the group and keeps that moment's values alive while it is held.
pub struct Group<T: 'static> {
    all: Arc<Typed>,
    pick: fn(&Typed) -> &T,
}

impl<T> Deref for Group<T> {
    type Target = T;

    fn deref(&self) -> &T {
        (self.pick)(&self.all)
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

    /// Every typed group of one moment (for work that reads several).
    pub fn typed(&self) -> Arc<Typed> {
        self.read(|c| Arc::clone(&c.typed))
    }

    fn group<T>(&self, pick: fn(&Typed) -> &T) -> Group<T> {
        Group {
            all: self.typed(),
            pick,
        }
    }

    /// Site and content ([`Site`]).
    pub fn site(&self) -> Group<Site> {
        self.group(|t| &t.site)
    }

    /// Who may register and what a new account is granted ([`Registration`]).
    pub fn registration(&self) -> Group<Registration> {
        self.group(|t| &t.registration)
    }

    /// Password, third-party and Turnstile sign-in ([`SignIn`]).
    pub fn sign_in(&self) -> Group<SignIn> {
        self.group(|t| &t.sign_in)
    }

    /// Outgoing e-mail ([`Smtp`]).
    pub fn smtp(&self) -> Group<Smtp> {
        self.group(|t| &t.smtp)
    }

    /// Online top-up ([`Payment`]).
    pub fn payment(&self) -> Group<Payment> {
        self.group(|t| &t.payment)
    }

    /// The Telegram bot ([`Telegram`]).
    pub fn telegram(&self) -> Group<Telegram> {
        self.group(|t| &t.telegram)
    }

    /// Channel tests, log clean-up, price sync, outbound policy ([`Operation`]).
    pub fn operation(&self) -> Group<Operation> {
        self.group(|t| &t.operation)
    }

    pub fn replace_all(&self, values: HashMap<String, String>) {
        let next = Current::of(values);
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

    #[test]
    fn the_typed_groups_follow_every_write() {
        let s = Settings::default();
        assert_eq!(*s.typed(), Typed::default());
        let before = s.site();
        s.set_many(&[
            ("SystemName".into(), "Gate".into()),
            ("SMTPPort".into(), "465".into()),
            ("RegisterEnabled".into(), "false".into()),
        ]);
        // A group read before the write keeps its moment.
        assert_eq!(before.system_name, "Switchboard");
        assert_eq!(s.site().system_name, "Gate");
        assert_eq!(s.smtp().port, 465);
        assert!(!s.registration().enabled);
        assert_eq!(*s.typed(), Typed::read(&View(&s.snapshot())));
        s.set("SystemName", "Other");
        assert_eq!(
            (s.site().system_name.as_str(), s.smtp().port),
            ("Other", 465)
        );
        s.replace_all(HashMap::new());
        assert_eq!(*s.typed(), Typed::default());
    }
}
