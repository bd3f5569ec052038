//! Making strings storable: what PostgreSQL refuses (NUL) and what does not fit a column.

/// `s` without control characters (NUL included); with `keep_layout`, tabs and line breaks stay
/// (free text such as a log's content).
pub(crate) fn without_controls(s: &str, keep_layout: bool) -> String {
    s.chars()
        .filter(|&c| !c.is_control() || (keep_layout && matches!(c, '\t' | '\n' | '\r')))
        .collect()
}

/// The first `max` characters of `s` (a `VARCHAR(max)` holds `max` characters on PostgreSQL and
/// on MySQL with utf8mb4).
pub(crate) fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary (MySQL's
/// `TEXT` holds 65,535 bytes).
pub(crate) fn truncate_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut at = max;
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    &s[..at]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_go_and_layout_may_stay() {
        assert_eq!(without_controls("a\0b\u{7}c\n\td", false), "abcd");
        assert_eq!(without_controls("a\0b\u{7}c\n\td", true), "abc\n\td");
        assert_eq!(without_controls("交換機 ✓", false), "交換機 ✓");
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("abc", 5), "abc");
        assert_eq!(truncate_bytes("héllo", 2), "h");
        assert_eq!(truncate_bytes("héllo", 3), "hé");
        assert_eq!(truncate_bytes("abc", 3), "abc");
    }
}
