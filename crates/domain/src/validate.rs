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

/// A username: 3 to 64 characters of letters, digits, `_`, `-` and `.`. `@` is excluded so that a
/// login name is never ambiguous between username and e-mail.
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
    if !s
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(DomainError::invalid(
            "username",
            "only letters, digits, '_', '-' and '.' are allowed",
        ));
    }
    Ok(())
}

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

/// Checks that a text field holds valid JSON; returns the parsed value.
pub fn json_text(field: &'static str, s: &str) -> Result<Value, DomainError> {
    serde_json::from_str(s).map_err(|e| DomainError::invalid(field, format!("invalid JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
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
    }

    #[test]
    fn passwords() {
        assert!(password("12345678").is_ok());
        assert!(password("1234567").is_err());
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
