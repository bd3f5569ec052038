//! Protection of secrets at rest, all under keys derived from the server secret
//! (`SESSION_SECRET`), each use with its own derivation label:
//!
//! - API keys: a SHA-256 digest for lookup (keys carry 285 bits of entropy, so the digest cannot
//!   be reversed) and the key itself sealed with ChaCha20-Poly1305 ([`KeyBox`]), so the owner can
//!   fetch it again;
//! - channel keys (the upstream providers' keys) and secret settings (`SMTPToken`, OAuth client
//!   secrets, …) sealed with ChaCha20-Poly1305 as `sealed:v1:` + base64(nonce || ciphertext)
//!   ([`SecretBox`]); a value without the prefix is a plain value written before sealing
//!   existed, which start-up seals (`crate::at_rest`).
//!
//! A database leak alone reveals none of them. Both boxes also open values sealed under the
//! previous server secrets (`SESSION_SECRET_PREVIOUS`), so the secret can be rotated: start-up
//! re-seals such values under the current secret.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Derivation label of the API-key box.
const TOKEN_KEY_LABEL: &[u8] = b"switchboard/token-key/v1";
/// Derivation label of the box of channel keys and secret settings.
const SECRET_LABEL: &[u8] = b"switchboard/secret-at-rest/v1";
/// What a value sealed by [`SecretBox`] starts with (format version 1).
pub const SEALED_PREFIX: &str = "sealed:v1:";

/// A sealed value no known server secret opens: sealed under a secret that is neither
/// `SESSION_SECRET` nor listed in `SESSION_SECRET_PREVIOUS`, or damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("sealed under a server secret this node does not know (SESSION_SECRET changed without listing the old one in SESSION_SECRET_PREVIOUS?) or damaged")]
pub struct Unreadable;

/// A stored value as the current and previous secrets see it (start-up's re-sealing pass).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reseal {
    /// Sealed under the current secret: nothing to do.
    Current,
    /// Plain, or sealed under a previous secret: the value sealed under the current secret, to
    /// store instead.
    Replace(String),
    Unreadable,
}

/// The ciphers of the current secret and of the previous ones, for one derivation label.
struct Keyring {
    current: ChaCha20Poly1305,
    previous: Vec<ChaCha20Poly1305>,
}

fn derive(label: &[u8], secret: &[u8]) -> ChaCha20Poly1305 {
    let mut h = Sha256::new();
    h.update(label);
    h.update(secret);
    ChaCha20Poly1305::new(&Key::from(<[u8; 32]>::from(h.finalize())))
}

impl Keyring {
    fn new(label: &[u8], secret: &[u8], previous: &[Vec<u8>]) -> Self {
        Keyring {
            current: derive(label, secret),
            previous: previous.iter().map(|p| derive(label, p)).collect(),
        }
    }

    /// `base64(nonce || ciphertext)` under the current secret.
    fn seal(&self, plain: &str) -> String {
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let ct = self
            .current
            .encrypt(Nonce::from_slice(&nonce), plain.as_bytes())
            .unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend_from_slice(&ct);
        B64.encode(out)
    }

    /// The plain text, and whether the current secret (not a previous one) opened it.
    fn open(&self, sealed: &str) -> Option<(String, bool)> {
        let raw = B64.decode(sealed).ok()?;
        if raw.len() < 12 {
            return None;
        }
        let (nonce, ct) = raw.split_at(12);
        let nonce = Nonce::from_slice(nonce);
        let (plain, current) = match self.current.decrypt(nonce, ct) {
            Ok(p) => (p, true),
            Err(_) => (
                self.previous
                    .iter()
                    .find_map(|c| c.decrypt(nonce, ct).ok())?,
                false,
            ),
        };
        String::from_utf8(plain).ok().map(|p| (p, current))
    }
}

/// Seals API keys (`tokens.key_ciphertext`, plain `base64(nonce || ciphertext)`).
pub struct KeyBox {
    ring: Keyring,
}

impl KeyBox {
    pub fn new(server_secret: &[u8]) -> Self {
        Self::with_previous(server_secret, &[])
    }

    /// A box that also opens keys sealed under the `previous` server secrets.
    pub fn with_previous(server_secret: &[u8], previous: &[Vec<u8>]) -> Self {
        KeyBox {
            ring: Keyring::new(TOKEN_KEY_LABEL, server_secret, previous),
        }
    }

    /// `base64(nonce || ciphertext)`.
    pub fn seal(&self, plain: &str) -> String {
        self.ring.seal(plain)
    }

    /// `None` when the text was sealed under an unknown secret or is damaged.
    pub fn open(&self, sealed: &str) -> Option<String> {
        self.ring.open(sealed).map(|(p, _)| p)
    }

    /// Whether `sealed` must be re-sealed under the current secret.
    pub fn reseal(&self, sealed: &str) -> Reseal {
        match self.ring.open(sealed) {
            Some((_, true)) => Reseal::Current,
            Some((plain, false)) => Reseal::Replace(self.seal(&plain)),
            None => Reseal::Unreadable,
        }
    }
}

/// Seals channel keys and secret settings: `sealed:v1:` + `base64(nonce || ciphertext)`.
pub struct SecretBox {
    ring: Keyring,
}

impl SecretBox {
    /// A box under `server_secret` that also opens values sealed under the `previous` ones.
    pub fn new(server_secret: &[u8], previous: &[Vec<u8>]) -> Self {
        SecretBox {
            ring: Keyring::new(SECRET_LABEL, server_secret, previous),
        }
    }

    pub fn is_sealed(stored: &str) -> bool {
        stored.starts_with(SEALED_PREFIX)
    }

    /// The value to store for `plain`.
    pub fn seal(&self, plain: &str) -> String {
        format!("{SEALED_PREFIX}{}", self.ring.seal(plain))
    }

    /// The plain value of a stored one: opened when sealed (under the current or a previous
    /// secret), as it is when it is a plain value written before sealing existed.
    pub fn open(&self, stored: &str) -> Result<String, Unreadable> {
        match stored.strip_prefix(SEALED_PREFIX) {
            Some(body) => self.ring.open(body).map(|(p, _)| p).ok_or(Unreadable),
            None => Ok(stored.to_owned()),
        }
    }

    /// What to store instead of `stored`: plain values are sealed, values sealed under a
    /// previous secret are re-sealed under the current one. An empty value stays empty (an
    /// unset secret setting).
    pub fn reseal(&self, stored: &str) -> Reseal {
        match stored.strip_prefix(SEALED_PREFIX) {
            None if stored.is_empty() => Reseal::Current,
            None => Reseal::Replace(self.seal(stored)),
            Some(body) => match self.ring.open(body) {
                Some((_, true)) => Reseal::Current,
                Some((plain, false)) => Reseal::Replace(self.seal(&plain)),
                None => Reseal::Unreadable,
            },
        }
    }
}

/// Lookup digest of an API key: SHA-256, in lowercase hex ([`crate::auth::sha256_hex`]).
pub fn key_digest(key: &str) -> String {
    crate::auth::sha256_hex(key)
}

/// How many digests [`key_digest_remembered`] keeps per thread before it starts again: a few
/// hundred KiB at most (each entry a 16-byte tag and the 64 digits).
const REMEMBERED_KEY_DIGESTS: usize = 4096;

thread_local! {
    static KEY_DIGESTS: std::cell::RefCell<foldhash::HashMap<u128, Box<str>>> =
        std::cell::RefCell::default();
}

/// [`key_digest`], remembered per thread: the relay digests the key of every request, and
/// SHA-256 of a 51-byte key with its hex is ~4,500 instructions, this look-up ~700.
///
/// The memo is keyed by [`key_tag`], a 128-bit keyed hash of the key, not by the key: no API
/// key is kept in memory beyond its request. What it remembers never goes stale (a key's digest
/// is a function of the key alone; revoking or editing a key changes the token cache, which is
/// keyed by the digest, not this), so nothing here is ever invalidated; a thread's memo is
/// emptied when it holds [`REMEMBERED_KEY_DIGESTS`].
pub fn key_digest_remembered(key: &str) -> String {
    let tag = key_tag(key);
    KEY_DIGESTS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(d) = memo.get(&tag) {
            return String::from(&**d);
        }
        let digest = key_digest(key);
        if memo.len() >= REMEMBERED_KEY_DIGESTS {
            memo.clear();
        }
        memo.insert(tag, digest.as_str().into());
        digest
    })
}

/// A 128-bit keyed hash of `key`: two SipHash-2-4 (a pseudo-random function under its key) with
/// independent keys drawn from the CSPRNG once per process. Without those keys no one can
/// compute a tag, so no one can choose a key that meets another's; two keys meet by chance
/// with a probability of about 2^-128, and the memo holds a few thousand.
fn key_tag(key: &str) -> u128 {
    use std::hash::Hasher;
    static SECRET: std::sync::OnceLock<[u64; 4]> = std::sync::OnceLock::new();
    let k = SECRET.get_or_init(rand::random);
    let half = |k0: u64, k1: u64| {
        // std deprecated the name `SipHasher` so as not to promise hash maps an algorithm; the
        // keyed function behind it, SipHash-2-4, is the one wanted here.
        #[allow(deprecated)]
        let mut h = std::hash::SipHasher::new_with_keys(k0, k1);
        h.write(key.as_bytes());
        h.finish()
    };
    (u128::from(half(k[0], k[1])) << 64) | u128::from(half(k[2], k[3]))
}

/// A new API key: `sk-` and 48 alphanumerics from the OS-seeded CSPRNG.
pub fn new_api_key() -> String {
    format!(
        "{}{}",
        switchboard_domain::token::KEY_PREFIX,
        crate::auth::random_string(switchboard_domain::token::KEY_BODY_LEN)
    )
}

/// What lists show instead of the key: `sk-abcd**********wxyz`-style, fitting 16 characters.
pub fn key_hint(key: &str) -> String {
    let body = key.strip_prefix("sk-").unwrap_or(key);
    if body.len() < 8 {
        return "sk-****".into();
    }
    format!("sk-{}**{}", &body[..4], &body[body.len() - 4..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_key_digest_is_the_digest_of_that_key() {
        let keys: Vec<String> = (0..50).map(|_| new_api_key()).collect();
        for _ in 0..2 {
            for k in &keys {
                assert_eq!(key_digest_remembered(k), key_digest(k));
            }
        }
        // Keys that differ in one character or only in length each get their own digest.
        let k = &keys[0];
        let mut other = k.clone().into_bytes();
        other[10] = if other[10] == b'a' { b'b' } else { b'a' };
        let other = String::from_utf8(other).unwrap();
        let shorter = &k[..k.len() - 1];
        for v in [k.as_str(), other.as_str(), shorter, "", "sk-"] {
            assert_eq!(key_digest_remembered(v), key_digest(v), "{v}");
        }
        assert_ne!(key_tag(k), key_tag(&other));
        assert_ne!(key_tag(k), key_tag(shorter));
        assert_ne!(key_digest_remembered(k), key_digest_remembered(shorter));
    }

    #[test]
    fn the_memo_starts_again_when_full_and_stays_right() {
        let first: Vec<String> = (0..10).map(|i| format!("sk-first-{i}")).collect();
        for k in &first {
            key_digest_remembered(k);
        }
        for i in 0..REMEMBERED_KEY_DIGESTS + 10 {
            let k = format!("sk-filler-{i}");
            assert_eq!(key_digest_remembered(&k), key_digest(&k));
        }
        KEY_DIGESTS.with(|m| assert!(m.borrow().len() <= REMEMBERED_KEY_DIGESTS));
        for k in &first {
            assert_eq!(key_digest_remembered(k), key_digest(k));
        }
    }

    #[test]
    fn seal_round_trips_only_under_the_same_secret() {
        let a = KeyBox::new(b"secret-one-0123456789");
        let k = new_api_key();
        assert!(switchboard_domain::token::is_well_formed_key(&k));
        let sealed = a.seal(&k);
        assert!(!sealed.contains(&k[3..]));
        assert_eq!(a.open(&sealed).as_deref(), Some(k.as_str()));
        assert_eq!(KeyBox::new(b"another-secret-0123456").open(&sealed), None);
        assert_eq!(a.open("garbage"), None);
        assert_ne!(a.seal(&k), sealed, "fresh nonce every time");
    }

    #[test]
    fn secrets_are_sealed_with_a_prefix_and_their_own_key() {
        let secret = b"secret-one-0123456789";
        let b = SecretBox::new(secret, &[]);
        let sealed = b.seal("sk-upstream-abcdef");
        assert!(SecretBox::is_sealed(&sealed), "{sealed}");
        assert!(!sealed.contains("upstream"));
        assert_eq!(b.open(&sealed), Ok("sk-upstream-abcdef".to_owned()));
        assert_ne!(
            b.seal("sk-upstream-abcdef"),
            sealed,
            "fresh nonce every time"
        );
        // Plain values written before sealing existed read as they are, and are to be sealed.
        assert_eq!(b.open("sk-legacy"), Ok("sk-legacy".to_owned()));
        match b.reseal("sk-legacy") {
            Reseal::Replace(v) => assert_eq!(b.open(&v), Ok("sk-legacy".to_owned())),
            other => panic!("{other:?}"),
        }
        assert_eq!(b.reseal(""), Reseal::Current);
        assert_eq!(b.reseal(&sealed), Reseal::Current);
        // Not the API-key box's key: one derived key per use.
        let body = &sealed[SEALED_PREFIX.len()..];
        assert_eq!(KeyBox::new(secret).open(body), None);
        assert_eq!(
            b.open(&format!("{SEALED_PREFIX}{}", KeyBox::new(secret).seal("x"))),
            Err(Unreadable)
        );
        assert_eq!(b.open("sealed:v1:garbage"), Err(Unreadable));
        assert_eq!(b.reseal("sealed:v1:garbage"), Reseal::Unreadable);
    }

    #[test]
    fn previous_secrets_open_and_are_resealed_under_the_current_one() {
        let (old, new) = (
            b"old-secret-0123456789".to_vec(),
            b"new-secret-0123456789".to_vec(),
        );
        let under_old = SecretBox::new(&old, &[]).seal("sk-rotate");
        assert_eq!(SecretBox::new(&new, &[]).open(&under_old), Err(Unreadable));
        let b = SecretBox::new(&new, &[b"unrelated-0123456789".to_vec(), old.clone()]);
        assert_eq!(b.open(&under_old), Ok("sk-rotate".to_owned()));
        let Reseal::Replace(resealed) = b.reseal(&under_old) else {
            panic!("a value under a previous secret is re-sealed")
        };
        assert_eq!(
            SecretBox::new(&new, &[]).open(&resealed),
            Ok("sk-rotate".to_owned())
        );
        assert_eq!(SecretBox::new(&old, &[]).open(&resealed), Err(Unreadable));
        assert_eq!(b.reseal(&resealed), Reseal::Current);

        let key = KeyBox::new(&old).seal("sk-key");
        let kb = KeyBox::with_previous(&new, std::slice::from_ref(&old));
        assert_eq!(kb.open(&key).as_deref(), Some("sk-key"));
        let Reseal::Replace(k2) = kb.reseal(&key) else {
            panic!("an API key under a previous secret is re-sealed")
        };
        assert_eq!(KeyBox::new(&new).open(&k2).as_deref(), Some("sk-key"));
        assert_eq!(kb.reseal(&k2), Reseal::Current);
        assert_eq!(KeyBox::new(&new).reseal(&key), Reseal::Unreadable);
    }

    #[test]
    fn hints_hide_the_key() {
        let k = "sk-abcdEFGHijklMNOPqrstUVWXyz0123456789ABCDEFGHwxyz";
        assert_eq!(key_hint(k), "sk-abcd**wxyz");
        assert!(key_hint(k).len() <= 16);
        assert_eq!(key_digest(k).len(), 64);
    }

    #[test]
    fn key_digests_are_lowercase_hex_sha256() {
        // Stored digests were written this way: a change of encoding would lock every key out.
        assert_eq!(
            key_digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        for k in [
            "",
            "sk-",
            "sk-abcdEFGHijklMNOPqrstUVWXyz0123456789ABCDEFGHwxyz",
            "ключ",
        ] {
            assert_eq!(key_digest(k), hex::encode(Sha256::digest(k.as_bytes())));
        }
    }
}

/// Equal byte strings, compared in time that depends only on their lengths (signatures,
/// webhook secrets, bearer tokens).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod constant_time_tests {
    use super::constant_time_eq;

    #[test]
    fn constant_time_eq_compares_whole_strings() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
