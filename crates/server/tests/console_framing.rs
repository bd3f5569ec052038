//! The console's Guides and Tools screens frame the documentation pages under `/help/`: the
//! real server sends those pages with `X-Frame-Options: SAMEORIGIN` and `frame-ancestors
//! 'self'` (only this site may frame them) and every other answer with `DENY` and
//! `frame-ancestors 'none'`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Server;

#[test]
fn help_pages_may_be_framed_by_the_site_and_nothing_else_may() {
    // A built console as the server serves it (FRONTEND_DIR): its index and two help pages.
    let console = std::env::temp_dir().join(format!("sb-framing-console-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&console);
    for dir in ["help/guides", "help/tools"] {
        std::fs::create_dir_all(console.join(dir)).unwrap();
    }
    std::fs::write(
        console.join("index.html"),
        "<!doctype html><title>c</title>",
    )
    .unwrap();
    std::fs::write(console.join("theme.js"), "// theme").unwrap();
    std::fs::write(
        console.join("help/guides/index.html"),
        "<!doctype html><title>Guides</title>",
    )
    .unwrap();
    std::fs::write(
        console.join("help/tools/index.html"),
        "<!doctype html><title>Tools</title>",
    )
    .unwrap();
    std::fs::write(console.join("help/docs.css"), "body{}").unwrap();
    let server = Server::start(
        "framing",
        &[("FRONTEND_DIR", console.display().to_string())],
    );
    let headers = |path: &str| {
        let r = server
            .http
            .get(format!("{}{path}", server.base))
            .send()
            .unwrap();
        let get = |k: &str| {
            r.headers()
                .get(k)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned()
        };
        (
            r.status().as_u16(),
            get("x-frame-options"),
            get("content-security-policy"),
        )
    };

    for path in [
        "/help/guides/index.html",
        "/help/tools/index.html",
        "/help/docs.css",
    ] {
        let (status, frame, csp) = headers(path);
        assert_eq!(status, 200, "{path}");
        assert_eq!(frame, "SAMEORIGIN", "{path}");
        assert!(csp.contains("frame-ancestors 'self'"), "{path}: {csp}");
        assert!(!csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        // The rest of the policy is the console's.
        assert!(csp.contains("script-src 'self';"), "{path}: {csp}");
    }
    // Everything else, the console itself included, may not be framed at all.
    for path in [
        "/",
        "/console/tokens",
        "/theme.js",
        "/helpdesk",
        "/api/status",
        "/api/help/x",
        "/v1/models",
    ] {
        let (_, frame, csp) = headers(path);
        assert_eq!(frame, "DENY", "{path}");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert!(!csp.contains("frame-ancestors 'self'"), "{path}: {csp}");
    }
    server.stop();
    let _ = std::fs::remove_dir_all(&console);
}
