//! Administrator-written HTML (the notice, the footer, the About page and the home page content):
//! cleaned to an allow-list before anyone's browser gets it. This is the one place that decides
//! what such HTML may contain; the settings store the cleaned text and every endpoint that
//! serves it cleans it again (a value imported or edited in the database is cleaned too).
//!
//! Kept: ammonia's default allow-list of formatting tags (headings, paragraphs, lists, tables,
//! emphasis, code, images, links, ...) and their harmless attributes, plus `target` on links
//! (which then carry `rel="noopener noreferrer"`). Dropped: `<script>`, `<style>`, `<meta>`,
//! `<link>`, `<base>`, `<iframe>`/`<frame>`/`<object>`/`<embed>`, forms, every event handler
//! and `style` attribute, and any link or image address whose scheme is not `http`, `https` or
//! `mailto` (relative addresses stay: they point at the site itself).

use std::collections::HashSet;
use std::sync::LazyLock;

/// Schemes a link or image address may use.
pub const URL_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

static CLEANER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut b = ammonia::Builder::default();
    b.url_schemes(URL_SCHEMES.iter().copied().collect::<HashSet<_>>())
        .add_tag_attributes("a", ["target"]);
    b
});

/// `text` with everything outside the allow-list removed (the text inside a removed formatting
/// tag stays; a script's or style's content goes with it).
pub fn sanitize(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    CLEANER.clean(text).to_string()
}

/// A page's content (About, home page): either the address of a page to show in a frame, which
/// must be a single `http://` or `https://` address, or HTML, cleaned by [`sanitize`].
pub fn page_content(text: &str) -> String {
    let t = text.trim();
    if is_http_address(t) {
        t.to_owned()
    } else {
        sanitize(t)
    }
}

/// A single `http://` or `https://` address (what the console shows in a frame): something
/// after the scheme, no white space, control characters, quotes or angle brackets.
pub fn is_http_address(t: &str) -> bool {
    let Some(rest) = t
        .strip_prefix("https://")
        .or_else(|| t.strip_prefix("http://"))
    else {
        return false;
    };
    !rest.is_empty()
        && !rest.starts_with('/')
        && !t
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "<>\"'`".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangerous_parts_go() {
        let cases = [
            (
                r#"<meta http-equiv="refresh" content="0;url=https://evil.example">Hi"#,
                "Hi",
            ),
            ("<script>alert(1)</script><b>x</b>", "<b>x</b>"),
            (r#"<img src=x onerror="alert(1)">"#, r#"<img src="x">"#),
            (r#"<iframe src="https://evil.example"></iframe>ok"#, "ok"),
            (
                r#"<a href="javascript:alert(1)">a</a>"#,
                r#"<a rel="noopener noreferrer">a</a>"#,
            ),
            (
                r#"<a href="data:text/html,x">a</a>"#,
                r#"<a rel="noopener noreferrer">a</a>"#,
            ),
            (r#"<p style="position:fixed">p</p>"#, "<p>p</p>"),
            (
                "<base href=\"https://evil.example/\"><link rel=stylesheet href=x>t",
                "t",
            ),
            ("<form action=x><input name=a></form>f", "f"),
            ("<style>body{display:none}</style>s", "s"),
        ];
        for (input, want) in cases {
            assert_eq!(sanitize(input), want, "{input}");
        }
    }

    #[test]
    fn harmless_html_stays() {
        for keep in [
            "<p>Hello <b>world</b></p>",
            r#"<a href="https://example.com" target="_blank" rel="noopener noreferrer">e</a>"#,
            r#"<a href="mailto:ops@example.com" rel="noopener noreferrer">mail</a>"#,
            r#"<a href="/about" rel="noopener noreferrer">about</a>"#,
            r#"<img src="https://example.com/a.png" alt="a">"#,
            "<h2>T</h2><ul><li>one</li></ul>",
            "plain text",
            "",
        ] {
            assert_eq!(sanitize(keep), keep);
        }
        // Cleaning twice changes nothing (what is saved is what is served).
        let once = sanitize("a < b & <i>c</i> <script>x</script>");
        assert_eq!(sanitize(&once), once);
    }

    #[test]
    fn page_content_is_an_http_address_or_clean_html() {
        assert_eq!(
            page_content(" https://example.com/about "),
            "https://example.com/about"
        );
        assert_eq!(page_content("http://example.com"), "http://example.com");
        assert_eq!(page_content("javascript:alert(1)"), "javascript:alert(1)");
        assert!(!is_http_address("javascript:alert(1)"));
        assert!(!is_http_address("https://x.example <script>"));
        assert!(!is_http_address("https://"));
        assert!(!is_http_address("data:text/html,<script>"));
        assert_eq!(
            page_content("https://x.example <script>alert(1)</script>"),
            "https://x.example "
        );
        assert_eq!(
            page_content("<meta http-equiv=refresh content=0>About"),
            "About"
        );
    }
}
