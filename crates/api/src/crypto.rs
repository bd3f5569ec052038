//! Protection of API keys at rest: a SHA-256 digest for lookup (keys carry 285 bits of entropy,
//! so the digest cannot be reversed) and the key itself sealed with ChaCha20-Poly1305 under a key
//! derived from the server secret, so the owner can fetch it again. A database leak alone reveals
//! neither.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore;
use sha2::{Digest, Sha256};

pub struct KeyBox {
    cipher: ChaCha20Poly1305,
}

impl KeyBox {
    pub fn new(server_secret: &[u8]) -> Self {
        let mut h = Sha256::new();
        h.update(b"switchboard/token-key/v1");
        h.update(server_secret);
        let key = Key::from(<[u8; 32]>::from(h.finalize()));
        KeyBox {
            cipher: ChaCha20Poly1305::new(&key),
        }
    }

    /// `base64(nonce || ciphertext)`.
    pub fn seal(&self, plain: &str) -> String {
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let ct = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), plain.as_bytes())
            .unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend_from_slice(&ct);
        B64.encode(out)
    }

    /// `None` when the text was sealed under another secret or is damaged.
    pub fn open(&self, sealed: &str) -> Option<String> {
        let raw = B64.decode(sealed).ok()?;
        if raw.len() < 12 {
            return None;
        }
        let (nonce, ct) = raw.split_at(12);
        let plain = self.cipher.decrypt(Nonce::from_slice(nonce), ct).ok()?;
        String::from_utf8(plain).ok()
    }
}

/// Lookup digest of an API key.
pub fn key_digest(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
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
    fn hints_hide_the_key() {
        let k = "sk-abcdEFGHijklMNOPqrstUVWXyz0123456789ABCDEFGHwxyz";
        assert_eq!(key_hint(k), "sk-abcd**wxyz");
        assert!(key_hint(k).len() <= 16);
        assert_eq!(key_digest(k).len(), 64);
    }
}
