//! The settings snapshot every handler reads. Loaded from the database at start, replaced on every
//! write through the API, and reloaded periodically so every node converges on the same values.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use switchboard_domain::options::OptionValues;

#[derive(Debug, Default, Clone)]
pub struct Settings {
    inner: Arc<RwLock<Arc<HashMap<String, String>>>>,
}

/// An immutable view of all settings at one moment.
pub type Snapshot = Arc<HashMap<String, String>>;

impl Settings {
    pub fn snapshot(&self) -> Snapshot {
        match self.inner.read() {
            Ok(g) => Arc::clone(&g),
            Err(p) => Arc::clone(&p.into_inner()),
        }
    }

    pub fn replace_all(&self, values: HashMap<String, String>) {
        let next = Arc::new(values);
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
