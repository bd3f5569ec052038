//! Validation rules of spec section 5, as pure functions returning typed errors.

use crate::DomainError;
use serde_json::Value;

pub const USERNAME_MIN: usize = 3;
pub const USERNAME_MAX: usize = 64;
pub const PASSWORD_MIN: usize = 8;
/// bcrypt only looks at the first 72 bytes; longer passwords would silently collide.
pub const PASSWORD_MAX_BYTES: usize = 72;
pub const DISPLAY_NAME_MAX: usize = 64;
pub const EMAIL_MAX: usize = 255;
pub const GROUP_MAX: usize = 64;

/// Trims every string in a JSON document, however deeply nested (spec section 5, "generic").
pub fn trim_strings(value: &mut Value) {
    match value {
        Value::String(s) => {
            let t = s.trim();
            if t.len() != s.len() {
                *s = t.to_owned();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(trim_strings),
        Value::Object(map) => map.values_mut().for_each(trim_strings),
        _ => {}
    }
}

/// A username: 3 to 64 characters of ASCII letters and digits, CJK ideographs, `_`, `-` and `.`.
/// `@` is excluded so that a login name is never ambiguous between username and e-mail. Other
/// scripts are refused because their letters can look like Latin ones (Cyrillic `а`, Greek `ο`,
/// full-width `Ａ`): `admin` and a look-alike would be two accounts a person cannot tell apart.
/// Case does not make another name (`Alice` is `alice`): the store compares names
/// case-insensitively.
pub fn username(s: &str) -> Result<(), DomainError> {
    let n = s.chars().count();
    if n == 0 {
        return Err(DomainError::Required { field: "username" });
    }
    if n < USERNAME_MIN {
        return Err(DomainError::TooShort {
            field: "username",
            min: USERNAME_MIN,
        });
    }
    if n > USERNAME_MAX {
        return Err(DomainError::TooLong {
            field: "username",
            max: USERNAME_MAX,
        });
    }
    if !s.chars().all(username_char) {
        return Err(DomainError::invalid(
            "username",
            "only Latin letters, digits, Chinese characters, '_', '-' and '.' are allowed",
        ));
    }
    Ok(())
}

fn username_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '_' | '-' | '.')
        // CJK Unified Ideographs and Extension A.
        || matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}')
}

/// The languages of the console and of e-mails, as the `Language` setting names them.
pub const LANGUAGES: &[&str] = &["zh_CN", "zh_HK", "en", "ja"];

/// A user's language: one of [`LANGUAGES`], or empty (the site's `Language` setting).
pub fn language(s: &str) -> Result<(), DomainError> {
    if s.is_empty() || LANGUAGES.contains(&s) {
        Ok(())
    } else {
        Err(DomainError::invalid(
            "language",
            format!(
                "use one of {} (or empty for the site's)",
                LANGUAGES.join(", ")
            ),
        ))
    }
}

/// Passwords that guessing lists try first (the ones of at least [`PASSWORD_MIN`] characters),
/// refused whatever their case.
pub const COMMON_PASSWORDS: &[&str] = &[
    "12345678",
    "123456789",
    "1234567890",
    "12345678910",
    "123123123",
    "11111111",
    "111111111",
    "00000000",
    "0000000000",
    "87654321",
    "98765432",
    "11223344",
    "12341234",
    "12344321",
    "1q2w3e4r",
    "1q2w3e4r5t",
    "1qaz2wsx",
    "1qazxsw2",
    "zaq12wsx",
    "qwertyui",
    "qwertyuiop",
    "qwerty123",
    "qwerty1234",
    "qwer1234",
    "asdfghjk",
    "asdfghjkl",
    "asdf1234",
    "zxcvbnm1",
    "zxcvbnm123",
    "password",
    "password1",
    "password12",
    "password123",
    "password1234",
    "passw0rd",
    "p@ssw0rd",
    "p@ssword",
    "pass1234",
    "password!",
    "iloveyou",
    "iloveyou1",
    "iloveyou2",
    "sunshine",
    "sunshine1",
    "princess",
    "princess1",
    "football",
    "football1",
    "baseball",
    "basketball",
    "superman",
    "batman123",
    "starwars",
    "master123",
    "whatever",
    "trustno1",
    "letmein1",
    "letmein123",
    "welcome1",
    "welcome123",
    "welcome!",
    "changeme",
    "changeme1",
    "admin123",
    "admin1234",
    "administrator",
    "root1234",
    "abc12345",
    "abcd1234",
    "abcdefgh",
    "abc123456",
    "a1234567",
    "aa123456",
    "aaaaaaaa",
    "88888888",
    "66666666",
    "12121212",
    "99999999",
    "computer",
    "internet",
    "michael1",
    "jennifer",
    "charlie1",
    "dragon123",
    "monkey123",
    "shadow123",
    "qazwsxedc",
    "1234qwer",
    "q1w2e3r4",
    "q1w2e3r4t5",
    "google123",
    "secret123",
    "default1",
    "test1234",
    "testtest",
    "guest1234",
    "chatgpt123",
    "openai123",
    "qwertyqwerty",
    "1q2w3e4r5t6y",
    "123qweasd",
    "qweasdzxc",
    "147258369",
    "159753123",
    "password2",
    "password01",
    "mypassword",
    "loveyou1",
    "hello123",
    "hello1234",
    "freedom1",
    "jordan23",
    "mustang1",
    "1password",
    "access14",
    "soccer12",
    "hunter12",
    "killer123",
    "pokemon1",
    "samsung1",
    "lovelove",
];

/// Whether `s` is one of [`COMMON_PASSWORDS`] (case-insensitive).
pub fn is_common_password(s: &str) -> bool {
    let lower = s.to_lowercase();
    COMMON_PASSWORDS.contains(&lower.as_str())
}

/// A new password: at least [`PASSWORD_MIN`] characters (`too_short`), not one of
/// [`COMMON_PASSWORDS`] (`weak_password`), at most [`PASSWORD_MAX_BYTES`] bytes.
pub fn password(s: &str) -> Result<(), DomainError> {
    if s.is_empty() {
        return Err(DomainError::Required { field: "password" });
    }
    if s.chars().count() < PASSWORD_MIN {
        return Err(DomainError::TooShort {
            field: "password",
            min: PASSWORD_MIN,
        });
    }
    if s.len() > PASSWORD_MAX_BYTES {
        return Err(DomainError::TooLong {
            field: "password",
            max: PASSWORD_MAX_BYTES,
        });
    }
    if is_common_password(s) {
        return Err(DomainError::WeakPassword);
    }
    Ok(())
}

pub fn display_name(s: &str) -> Result<(), DomainError> {
    if s.chars().count() > DISPLAY_NAME_MAX {
        return Err(DomainError::TooLong {
            field: "display_name",
            max: DISPLAY_NAME_MAX,
        });
    }
    Ok(())
}

/// A pragmatic e-mail check: one `@`, a non-empty local part, a dotted domain, no spaces.
pub fn email(s: &str) -> Result<(), DomainError> {
    if s.is_empty() {
        return Err(DomainError::Required { field: "email" });
    }
    if s.len() > EMAIL_MAX {
        return Err(DomainError::TooLong {
            field: "email",
            max: EMAIL_MAX,
        });
    }
    let bad = || DomainError::invalid("email", "not a valid e-mail address");
    let (local, domain) = s.split_once('@').ok_or_else(bad)?;
    if local.is_empty()
        || domain.contains('@')
        || s.chars().any(|c| c.is_whitespace() || c.is_control())
        || !domain.contains('.')
        || domain.starts_with('.')
        || domain.ends_with('.')
        || domain.contains("..")
    {
        return Err(bad());
    }
    Ok(())
}

/// Whether an e-mail's domain is on the operator's allow-list (an empty list allows all).
pub fn email_domain_allowed(email: &str, allowed: &[&str]) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let domain = email
        .rsplit_once('@')
        .map(|(_, d)| d.to_ascii_lowercase())
        .unwrap_or_default();
    allowed
        .iter()
        .any(|a| a.trim().eq_ignore_ascii_case(&domain))
}

/// A group symbol: English letters, digits, `_` and `-`, starting with a letter.
pub fn group_symbol(s: &str) -> Result<(), DomainError> {
    if s.is_empty() {
        return Err(DomainError::Required { field: "group" });
    }
    if s.len() > GROUP_MAX {
        return Err(DomainError::TooLong {
            field: "group",
            max: GROUP_MAX,
        });
    }
    let mut chars = s.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(DomainError::invalid(
            "group",
            "use English letters, digits, '_' or '-'",
        ));
    }
    Ok(())
}

/// An http(s) URL with its trailing slash stripped (spec section 5). Empty stays empty.
pub fn normalize_url(field: &'static str, s: &str) -> Result<String, DomainError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(String::new());
    }
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .ok_or_else(|| DomainError::invalid(field, "must start with http:// or https://"))?;
    if rest.is_empty() || rest.starts_with('/') || s.chars().any(char::is_whitespace) {
        return Err(DomainError::invalid(field, "not a valid URL"));
    }
    Ok(s.trim_end_matches('/').to_owned())
}

/// Longest model name a relayed request may ask for (the logs' `model_name` column holds 255).
pub const RELAY_MODEL_MAX: usize = 128;
/// Longest client address kept for a log (the logs' `source_ip` column holds 64).
pub const CLIENT_IP_MAX: usize = 64;

/// The model a relayed request asks for, at admission: not empty (nor only spaces), at most
/// [`RELAY_MODEL_MAX`] characters, no control characters (NUL included, which PostgreSQL
/// cannot store). Errors name the field `model`: `required`, `too_long` or `invalid`.
pub fn relay_model_name(s: &str) -> Result<(), DomainError> {
    if s.trim().is_empty() {
        return Err(DomainError::Required { field: "model" });
    }
    if s.chars().count() > RELAY_MODEL_MAX {
        return Err(DomainError::TooLong {
            field: "model",
            max: RELAY_MODEL_MAX,
        });
    }
    if s.chars().any(char::is_control) {
        return Err(DomainError::invalid(
            "model",
            "control characters are not allowed",
        ));
    }
    Ok(())
}

/// A client address as a log may keep it: an IP address (or `ip:port`, as some proxies forward
/// it) in its canonical form; anything else (a forged or broken `X-Forwarded-For`) without
/// control characters and cut to [`CLIENT_IP_MAX`] characters.
pub fn bounded_client_ip(s: &str) -> String {
    let t = s.trim();
    if let Ok(ip) = t.parse::<std::net::IpAddr>() {
        return ip.to_string();
    }
    if let Ok(sa) = t.parse::<std::net::SocketAddr>() {
        return sa.ip().to_string();
    }
    t.chars()
        .filter(|c| !c.is_control())
        .take(CLIENT_IP_MAX)
        .collect()
}

/// Checks that a text field holds valid JSON; returns the parsed value.
pub fn json_text(field: &'static str, s: &str) -> Result<Value, DomainError> {
    serde_json::from_str(s).map_err(|e| DomainError::invalid(field, format!("invalid JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use serde_json::json;

    #[test]
    fn trims_nested_strings() {
        let mut v = json!({"a": "  x ", "b": [" y", {"c": "z  "}], "n": 1});
        trim_strings(&mut v);
        assert_eq!(v, json!({"a": "x", "b": ["y", {"c": "z"}], "n": 1}));
    }

    #[test]
    fn usernames() {
        assert!(username("bob").is_ok());
        assert!(username("用户名").is_ok());
        assert_eq!(
            username(""),
            Err(DomainError::Required { field: "username" })
        );
        assert_eq!(
            username("ab"),
            Err(DomainError::TooShort {
                field: "username",
                min: 3
            })
        );
        assert!(username(&"a".repeat(65)).is_err());
        assert!(username("a@b.c").is_err());
        assert!(username("a b").is_err());
        // Look-alikes of Latin letters: Cyrillic a, Greek omicron, full-width A, Latin with a
        // combining accent; and invisible characters.
        for spoof in [
            "\u{430}dmin",
            "r\u{3BF}ot",
            "\u{FF21}dmin",
            "ad\u{301}min",
            "ad\u{200B}min",
        ] {
            assert!(username(spoof).is_err(), "{spoof}");
        }
        assert!(username("Alice_2.x-y").is_ok());
    }

    #[test]
    fn relay_model_names() {
        assert!(relay_model_name("gpt-4o-mini").is_ok());
        assert!(relay_model_name("模型/name:v1@2024").is_ok());
        assert!(relay_model_name(&"m".repeat(RELAY_MODEL_MAX)).is_ok());
        assert!(
            relay_model_name(&"模".repeat(RELAY_MODEL_MAX)).is_ok(),
            "characters, not bytes"
        );
        assert_eq!(
            relay_model_name(""),
            Err(DomainError::Required { field: "model" })
        );
        assert_eq!(
            relay_model_name("  "),
            Err(DomainError::Required { field: "model" })
        );
        let long = relay_model_name(&"m".repeat(RELAY_MODEL_MAX + 1)).unwrap_err();
        assert_eq!(
            long,
            DomainError::TooLong {
                field: "model",
                max: 128
            }
        );
        assert_eq!(long.code(), ErrorCode::TooLong);
        for bad in ["gpt\0-4o", "gpt-4o\n", "a\u{7}b", "\u{1b}[31m"] {
            let e = relay_model_name(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::Invalid, "{bad:?}");
            assert!(matches!(e, DomainError::Invalid { field: "model", .. }));
        }
    }

    #[test]
    fn common_passwords_are_weak() {
        for p in ["12345678", "password", "qwerty123", "PassWord1", "P@ssw0rd"] {
            assert_eq!(password(p), Err(DomainError::WeakPassword), "{p}");
        }
        assert_eq!(DomainError::WeakPassword.code(), ErrorCode::WeakPassword);
        assert!(password("password-123").is_ok());
        assert!(password("correct horse battery").is_ok());
        assert!(COMMON_PASSWORDS.len() >= 100);
        assert!(COMMON_PASSWORDS
            .iter()
            .all(|p| p.chars().count() >= PASSWORD_MIN && *p == p.to_lowercase()));
        assert_eq!(
            password("1234567"),
            Err(DomainError::TooShort {
                field: "password",
                min: PASSWORD_MIN
            })
        );
    }

    #[test]
    fn client_ips_are_bounded() {
        assert_eq!(bounded_client_ip("203.0.113.7"), "203.0.113.7");
        assert_eq!(bounded_client_ip(" 2001:DB8::0:1 "), "2001:db8::1");
        assert_eq!(bounded_client_ip("203.0.113.7:51234"), "203.0.113.7");
        assert_eq!(bounded_client_ip("[2001:db8::1]:443"), "2001:db8::1");
        assert_eq!(
            bounded_client_ip("::ffff:255.255.255.255"),
            "::ffff:255.255.255.255"
        );
        let forged = "1".repeat(100);
        assert_eq!(bounded_client_ip(&forged), "1".repeat(CLIENT_IP_MAX));
        assert_eq!(bounded_client_ip("evil\0host\r\n"), "evilhost");
        assert_eq!(bounded_client_ip(""), "");
        let wide = "é".repeat(100);
        assert_eq!(bounded_client_ip(&wide).chars().count(), CLIENT_IP_MAX);
    }

    #[test]
    fn passwords() {
        assert!(password("84f1x9qa").is_ok());
        assert!(password("1234567").is_err());
        assert!(password("12345678").is_err(), "common");
        assert!(password("").is_err());
        assert!(password(&"x".repeat(73)).is_err());
    }

    #[test]
    fn emails() {
        assert!(email("a@b.co").is_ok());
        for bad in [
            "", "ab", "@b.co", "a@b", "a@@b.co", "a b@c.de", "a@.b.c", "a@b.c.",
        ] {
            assert!(email(bad).is_err(), "{bad} accepted");
        }
        assert!(email_domain_allowed("x@Gmail.com", &["gmail.com"]));
        assert!(!email_domain_allowed("x@evil.com", &["gmail.com"]));
        assert!(email_domain_allowed("x@evil.com", &[]));
    }

    #[test]
    fn urls_lose_trailing_slash() {
        assert_eq!(
            normalize_url("u", "https://a.b/").as_deref(),
            Ok("https://a.b")
        );
        assert_eq!(
            normalize_url("u", " http://a.b/v1// ").as_deref(),
            Ok("http://a.b/v1")
        );
        assert_eq!(normalize_url("u", "").as_deref(), Ok(""));
        assert!(normalize_url("u", "ftp://a").is_err());
        assert!(normalize_url("u", "https://").is_err());
    }

    #[test]
    fn group_symbols() {
        assert!(group_symbol("vip_1").is_ok());
        assert!(group_symbol("1vip").is_err());
        assert!(group_symbol("组").is_err());
    }
}
