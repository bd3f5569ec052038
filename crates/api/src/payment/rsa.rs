//! RSA keys as Alipay and WeChat Pay hand them out, and the one signature both speak:
//! RSASSA-PKCS1-v1_5 with SHA-256 ("RSA2", "SHA256-RSA2048"), base64.
//!
//! Keys are accepted as PEM or as the bare base64 the providers' consoles show: private keys as
//! PKCS#8 (`BEGIN PRIVATE KEY`, WeChat Pay's `apiclient_key.pem`, Alipay's Java tool) or PKCS#1
//! (`BEGIN RSA PRIVATE KEY`, Alipay's other tools); public keys as SubjectPublicKeyInfo
//! (`BEGIN PUBLIC KEY`, what both consoles show) or PKCS#1 `RSAPublicKey`. The arithmetic is
//! ring's (constant-time private-key operations).

use base64::Engine as _;
use ring::signature::{self, RsaKeyPair, UnparsedPublicKey};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// The DER bytes of a PEM text, or of bare base64 (armour lines and whitespace ignored).
fn der_of(text: &str) -> Result<Vec<u8>, String> {
    let body: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("-----"))
        .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
        .collect();
    if body.is_empty() {
        return Err("the key is empty".into());
    }
    B64.decode(body.as_bytes())
        .map_err(|_| "the key is neither PEM nor base64".into())
}

/// An RSA private key that signs with SHA-256.
pub struct PrivateKey(RsaKeyPair);

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrivateKey({} bits)", self.0.public().modulus_len() * 8)
    }
}

impl PrivateKey {
    /// Reads a PKCS#8 or PKCS#1 key, PEM or bare base64, of 2048 to 4096 bits.
    pub fn parse(text: &str) -> Result<Self, String> {
        let der = der_of(text)?;
        RsaKeyPair::from_pkcs8(&der)
            .or_else(|_| RsaKeyPair::from_der(&der))
            .map(PrivateKey)
            .map_err(|e| format!("not an RSA private key of 2048 to 4096 bits ({e})"))
    }

    /// The base64 RSA-SHA256 (PKCS#1 v1.5) signature of `message`.
    pub fn sign(&self, message: &[u8]) -> String {
        let mut sig = vec![0; self.0.public().modulus_len()];
        // Signing fails only when the output buffer has the wrong length, which it has not.
        match self.0.sign(
            &signature::RSA_PKCS1_SHA256,
            &ring::rand::SystemRandom::new(),
            message,
            &mut sig,
        ) {
            Ok(()) => B64.encode(sig),
            Err(_) => String::new(),
        }
    }
}

/// A public key to check RSA-SHA256 signatures with (PKCS#1 `RSAPublicKey` DER inside).
#[derive(Debug, Clone)]
pub struct PublicKey(Vec<u8>);

/// One DER element: its tag, its contents and what follows it.
fn tlv(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The object identifier rsaEncryption (1.2.840.113549.1.1.1), DER contents.
const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];

/// The modulus' size in bits of an `RSAPublicKey` (SEQUENCE { INTEGER n, INTEGER e }).
fn modulus_bits(rsa_public_key: &[u8]) -> Option<usize> {
    let (0x30, seq, []) = tlv(rsa_public_key)? else {
        return None;
    };
    let (0x02, n, rest) = tlv(seq)? else {
        return None;
    };
    let (0x02, e, []) = tlv(rest)? else {
        return None;
    };
    if e.is_empty() {
        return None;
    }
    let n = match n {
        [0, tail @ ..] => tail,
        n => n,
    };
    let lead = *n.first()?;
    Some(n.len() * 8 - lead.leading_zeros() as usize)
}

impl PublicKey {
    /// Reads a SubjectPublicKeyInfo or PKCS#1 public key, PEM or bare base64, of 2048 to 8192
    /// bits.
    pub fn parse(text: &str) -> Result<Self, String> {
        let der = der_of(text)?;
        let (0x30, seq, _) = tlv(&der).ok_or("the key is not DER")? else {
            return Err("the key is not a DER sequence".into());
        };
        let inner = match tlv(seq) {
            // PKCS#1: SEQUENCE { INTEGER n, INTEGER e }.
            Some((0x02, _, _)) => der.clone(),
            // SubjectPublicKeyInfo: SEQUENCE { SEQUENCE { OID, params }, BIT STRING }.
            Some((0x30, alg, rest)) => {
                let oid = match tlv(alg) {
                    Some((0x06, oid, _)) => oid,
                    _ => return Err("the key has no algorithm".into()),
                };
                if oid != RSA_ENCRYPTION {
                    return Err("not an RSA public key".into());
                }
                match tlv(rest) {
                    Some((0x03, [0, key @ ..], _)) => key.to_vec(),
                    _ => return Err("the key has no RSA public key inside".into()),
                }
            }
            _ => return Err("not a public key".into()),
        };
        match modulus_bits(&inner) {
            Some(bits) if (2048..=8192).contains(&bits) => Ok(PublicKey(inner)),
            Some(bits) => Err(format!(
                "the RSA key has {bits} bits (2048 to 8192 are accepted)"
            )),
            None => Err("the RSA public key is malformed".into()),
        }
    }

    /// Whether `signature_b64` is this key's RSA-SHA256 signature of `message`.
    pub fn verify(&self, message: &[u8], signature_b64: &str) -> bool {
        let Ok(sig) = B64.decode(signature_b64.trim().as_bytes()) else {
            return false;
        };
        UnparsedPublicKey::new(&signature::RSA_PKCS1_2048_8192_SHA256, &self.0)
            .verify(message, &sig)
            .is_ok()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const MERCHANT_KEY: &str = include_str!("../../tests/fixtures/payment/merchant.key.pem");
    pub const MERCHANT_PKCS1: &str =
        include_str!("../../tests/fixtures/payment/merchant.pkcs1.pem");
    pub const MERCHANT_PUB: &str = include_str!("../../tests/fixtures/payment/merchant.pub.pem");
    pub const GATEWAY_KEY: &str = include_str!("../../tests/fixtures/payment/gateway.key.pem");
    pub const GATEWAY_PUB: &str = include_str!("../../tests/fixtures/payment/gateway.pub.pem");

    /// The base64 between a PEM's armour lines (what the providers' consoles show).
    pub fn bare(pem: &str) -> String {
        pem.lines().filter(|l| !l.starts_with("-----")).collect()
    }

    #[test]
    fn keys_in_every_accepted_form_sign_and_verify() {
        let pub_key = PublicKey::parse(MERCHANT_PUB).unwrap();
        for text in [
            MERCHANT_KEY.to_owned(),
            MERCHANT_PKCS1.to_owned(),
            bare(MERCHANT_KEY),
            bare(MERCHANT_PKCS1),
        ] {
            let key = PrivateKey::parse(&text).unwrap();
            let sig = key.sign(b"a=1&b=2");
            assert!(pub_key.verify(b"a=1&b=2", &sig));
            assert!(!pub_key.verify(b"a=1&b=3", &sig), "another message");
        }
        // PKCS#1 v1.5 is deterministic: the same message, the same signature.
        let key = PrivateKey::parse(MERCHANT_KEY).unwrap();
        assert_eq!(key.sign(b"x"), key.sign(b"x"));
        // Bare base64 of the public key, and another key's signature.
        let bare_pub = PublicKey::parse(&bare(MERCHANT_PUB)).unwrap();
        assert!(bare_pub.verify(b"x", &key.sign(b"x")));
        let other = PrivateKey::parse(GATEWAY_KEY).unwrap();
        assert!(!pub_key.verify(b"x", &other.sign(b"x")));
        assert!(PublicKey::parse(GATEWAY_PUB)
            .unwrap()
            .verify(b"x", &other.sign(b"x")));
        assert!(!pub_key.verify(b"x", "not base64!"));
    }

    #[test]
    fn what_is_not_a_key_is_refused() {
        assert!(PrivateKey::parse("").is_err());
        assert!(PrivateKey::parse("not base64!").is_err());
        assert!(PrivateKey::parse(MERCHANT_PUB).is_err(), "a public key");
        assert!(PublicKey::parse(MERCHANT_KEY).is_err(), "a private key");
        assert!(PublicKey::parse("AAAA").is_err());
        assert!(PublicKey::parse("").is_err());
        // A 1024-bit key (SubjectPublicKeyInfo), too small to be trusted.
        let small = "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDc/5440RYSuw/0EJa+E5UX54ruvXY35Wr1c6ovrIIAis5eVsuN\
                     hrhpTrAtyigOOBhCx6TwJAHYwLrR1RuMN3xhwO7RfDzlJPVc/wztUk+Pf3AvWl0zZxmCEo52G4BfaX6E2F8isYsiD9LV\
                     LYcS0mQEy2gQa0YKFOOMF1LKSNZe9QIDAQAB";
        let e = PublicKey::parse(small).unwrap_err();
        assert!(e.contains("1024 bits"), "{e}");
    }
}
