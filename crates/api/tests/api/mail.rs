//! E-mail verification and password reset against a small SMTP server on 127.0.0.1 that records
//! what it receives.

use crate::common::TestApp;
use serde_json::json;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

type Inbox = Arc<Mutex<Vec<String>>>;

/// Speaks just enough SMTP (no TLS, AUTH PLAIN accepted) for one client at a time.
async fn smtp_server() -> (u16, Inbox) {
    let (port, inbox, _) = smtp_server_with_auth().await;
    (port, inbox)
}

/// [`smtp_server`], also returning the `AUTH` commands it received.
async fn smtp_server_with_auth() -> (u16, Inbox, Inbox) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let inbox: Inbox = Arc::default();
    let auths: Inbox = Arc::default();
    let (out, auths_out) = (inbox.clone(), auths.clone());
    actix_web::rt::spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else {
                return;
            };
            let inbox = inbox.clone();
            let auths = auths.clone();
            actix_web::rt::spawn(async move {
                let (r, mut w) = sock.into_split();
                let mut lines = BufReader::new(r).lines();
                w.write_all(b"220 test ESMTP\r\n").await.unwrap();
                let mut in_data = false;
                let mut data = String::new();
                while let Ok(Some(line)) = lines.next_line().await {
                    if in_data {
                        if line == "." {
                            in_data = false;
                            inbox.lock().unwrap().push(std::mem::take(&mut data));
                            w.write_all(b"250 queued\r\n").await.unwrap();
                        } else {
                            data.push_str(&line);
                            data.push('\n');
                        }
                        continue;
                    }
                    let cmd = line.to_ascii_uppercase();
                    let reply: &[u8] = if cmd.starts_with("EHLO") || cmd.starts_with("HELO") {
                        b"250-test\r\n250 AUTH PLAIN\r\n"
                    } else if cmd.starts_with("AUTH") {
                        auths.lock().unwrap().push(line.clone());
                        b"235 authenticated\r\n"
                    } else if cmd.starts_with("DATA") {
                        in_data = true;
                        b"354 go ahead\r\n"
                    } else if cmd.starts_with("QUIT") {
                        w.write_all(b"221 bye\r\n").await.unwrap();
                        return;
                    } else {
                        b"250 ok\r\n"
                    };
                    w.write_all(reply).await.unwrap();
                }
            });
        }
    });
    (port, out, auths_out)
}

/// The mail as text: its headers, then its body decoded (the server sends bodies in base64).
fn unfold(mail: &str) -> String {
    use base64::Engine;
    let Some((head, body)) = mail.split_once("\n\n") else {
        return mail.to_owned();
    };
    if !head
        .to_ascii_lowercase()
        .contains("content-transfer-encoding: base64")
    {
        return mail.to_owned();
    }
    let b64: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap_or_else(|e| panic!("body not base64 ({e}): {mail}"));
    format!("{head}\n\n{}", String::from_utf8(bytes).unwrap())
}

/// The `n`-th e-mail received (0-based), waiting for it: mails go out after the answer.
async fn nth_mail(inbox: &Inbox, n: usize) -> String {
    for _ in 0..200 {
        if let Some(m) = inbox.lock().unwrap().get(n) {
            return unfold(m);
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("e-mail {n} never arrived");
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> &'a str {
    let i = s
        .find(start)
        .unwrap_or_else(|| panic!("{start:?} not in {s}"))
        + start.len();
    let rest = &s[i..];
    &rest[..rest.find(end).unwrap()]
}

async fn configure_smtp(app: &TestApp, port: u16) {
    let root = app.root();
    root.put(
        "/api/option",
        json!({"key": "SMTPServer", "value": "127.0.0.1"}),
    )
    .await
    .ok();
    root.put("/api/option", json!({"key": "SMTPPort", "value": port}))
        .await
        .ok();
    root.put(
        "/api/option",
        json!({"key": "SMTPFrom", "value": "noreply@example.com"}),
    )
    .await
    .ok();
    // The mails below read English (the site's language unless the recipient chose one).
    root.put("/api/option", json!({"key": "Language", "value": "en"}))
        .await
        .ok();
}

#[actix_web::test]
async fn registration_with_email_verification() {
    let app = TestApp::new().await;
    let (port, inbox) = smtp_server().await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "EmailVerificationEnabled", "value": true}),
        )
        .await
        .ok();
    let c = app.client();
    // Without SMTP configured the code cannot be sent, and the answer says so.
    c.get("/api/verification?email=v@x.io")
        .await
        .err(503, "smtp_not_configured");
    configure_smtp(&app, port).await;
    c.get("/api/verification?email=not-an-email")
        .await
        .err(400, "invalid");
    c.get("/api/verification?email=v@x.io").await.ok();
    let mail = nth_mail(&inbox, 0).await;
    assert!(mail.contains("v@x.io"));
    let code = between(&mail, "<strong>", "</strong>").to_owned();
    assert_eq!(code.len(), 6);

    let body = |code: &str| json!({"username": "vera", "password": "password-123", "email": "v@x.io", "verification_code": code});
    c.post(
        "/api/user/register",
        json!({"username": "vera", "password": "password-123", "email": "v@x.io"}),
    )
    .await
    .err(400, "required");
    c.post("/api/user/register", body("000000x"))
        .await
        .err(400, "invalid_verification_code");
    c.post("/api/user/register", body(&code)).await.ok();
    // The code is single-use.
    c.post("/api/user/register", json!({"username": "vera2", "password": "password-123", "email": "w@x.io", "verification_code": code}))
        .await
        .err(400, "invalid_verification_code");
    // The address is now taken: the answer is the one a free address gets (it does not tell who
    // is registered), and the address's owner is told somebody tried, with no code.
    let free = c.get("/api/verification?email=free@x.io").await;
    let taken = c.get("/api/verification?email=v@x.io").await;
    assert_eq!((free.status, &free.body), (taken.status, &taken.body));
    let mut mails = [nth_mail(&inbox, 1).await, nth_mail(&inbox, 2).await];
    mails.sort_by_key(|m| !m.contains("free@x.io"));
    assert!(mails[0].contains("<strong>"), "{}", mails[0]);
    assert!(mails[1].contains("v@x.io") && mails[1].contains("already uses"));
    assert!(!mails[1].contains("<strong>"), "{}", mails[1]);
}

#[actix_web::test]
async fn email_domain_restriction_applies_to_codes_and_registration() {
    let app = TestApp::new().await;
    let (port, _inbox) = smtp_server().await;
    configure_smtp(&app, port).await;
    let root = app.root();
    root.put(
        "/api/option",
        json!({"key": "EmailVerificationEnabled", "value": true}),
    )
    .await
    .ok();
    root.put(
        "/api/option",
        json!({"key": "EmailDomainRestrictionEnabled", "value": true}),
    )
    .await
    .ok();
    root.put(
        "/api/option",
        json!({"key": "EmailDomainWhitelist", "value": "good.io"}),
    )
    .await
    .ok();
    app.client()
        .get("/api/verification?email=a@evil.io")
        .await
        .err(400, "email_domain_not_allowed");
    app.client()
        .get("/api/verification?email=a@good.io")
        .await
        .ok();
}

#[actix_web::test]
async fn password_reset_by_email_link() {
    let app = TestApp::new().await;
    let (port, inbox) = smtp_server().await;
    configure_smtp(&app, port).await;
    app.root()
        .put(
            "/api/option",
            json!({"key": "ServerAddress", "value": "https://gw.example.com"}),
        )
        .await
        .ok();
    let (c, _) = app.user("rosa").await;
    c.put("/api/user/self", json!({})).await.ok();
    app.root()
        .put("/api/user", json!({"id": 2, "email": "rosa@x.io"}))
        .await
        .ok();

    let visitor = app.client();
    // Unknown addresses get the same answer and no e-mail.
    let unknown = visitor.get("/api/reset_password?email=ghost@x.io").await;
    let known = visitor.get("/api/reset_password?email=rosa@x.io").await;
    assert_eq!(unknown.body, known.body);
    let mail = nth_mail(&inbox, 0).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(inbox.lock().unwrap().len(), 1);
    assert!(
        mail.contains("https://gw.example.com/user/reset?email=rosa%40x.io&token="),
        "{mail}"
    );
    let token = between(&mail, "&token=", "\"").to_owned();

    visitor
        .post(
            "/api/user/reset",
            json!({"email": "rosa@x.io", "token": "forged"}),
        )
        .await
        .err(400, "invalid_reset_link");
    visitor
        .post("/api/user/reset", json!({"email": "rosa@x.io"}))
        .await
        .err(400, "invalid_field");
    let new_password = visitor
        .post(
            "/api/user/reset",
            json!({"email": "rosa@x.io", "token": token}),
        )
        .await
        .ok()
        .as_str()
        .unwrap()
        .to_owned();
    visitor
        .post(
            "/api/user/reset",
            json!({"email": "rosa@x.io", "token": token}),
        )
        .await
        .err(400, "invalid_reset_link");
    // Old sessions end; the new password works and the old one does not.
    c.get("/api/user/self").await.err(401, "session_expired");
    visitor
        .post(
            "/api/user/login",
            json!({"username": "rosa", "password": "password-123"}),
        )
        .await
        .err(401, "invalid_credentials");
    visitor
        .post(
            "/api/user/login",
            json!({"username": "rosa", "password": new_password}),
        )
        .await
        .ok();
}

/// Whether an address is registered cannot be read from the answers of the reset and
/// verification requests, even when the mail server fails or hangs: the answer comes before any
/// mail is made. Before, a registered address alone paid the SMTP round trip and got 502 when it
/// failed (and waited for the mail server's 20 s time-out when it hung).
#[actix_web::test]
async fn reset_and_verification_answers_do_not_tell_who_is_registered() {
    let app = TestApp::new().await;
    let (c, id) = app.user("rosa").await;
    c.put("/api/user/self", json!({})).await.ok();
    app.root()
        .put("/api/user", json!({"id": id, "email": "rosa@x.io"}))
        .await
        .ok();
    let visitor = app.client();
    // Both answer 503 alike while no SMTP server is set.
    for path in ["/api/reset_password", "/api/verification"] {
        for email in ["rosa@x.io", "ghost@x.io"] {
            visitor
                .get(&format!("{path}?email={email}"))
                .await
                .err(503, "smtp_not_configured");
        }
    }
    // A mail server that refuses connections (a closed port), then one that accepts and never
    // speaks.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    actix_web::rt::spawn(async move {
        let mut held = vec![];
        while let Ok((sock, _)) = silent.accept().await {
            held.push(sock);
        }
    });
    let quick = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .build()
        .unwrap();
    for port in [closed, silent_port] {
        configure_smtp(&app, port).await;
        for path in ["/api/reset_password", "/api/verification"] {
            let mut answers = vec![];
            for email in ["rosa@x.io", "ghost@x.io"] {
                let r = quick
                    .get(app.url(&format!("{path}?email={email}")))
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("{path} {email} on port {port}: {e}"));
                answers.push((r.status().as_u16(), r.text().await.unwrap()));
            }
            assert_eq!(answers[0], answers[1], "{path} on port {port}");
            assert_eq!(answers[0].0, 200, "{path}: {}", answers[0].1);
        }
    }
}

/// The SMTP password (a secret setting) is stored sealed, and mail authenticates with it open,
/// also after the settings were reloaded from the database (another node, the periodic reload).
#[actix_web::test]
async fn the_smtp_token_is_sealed_at_rest_and_used_open() {
    use base64::Engine;
    let app = TestApp::new().await;
    let (port, inbox, auths) = smtp_server_with_auth().await;
    configure_smtp(&app, port).await;
    let root = app.root();
    for (k, v) in [
        ("EmailVerificationEnabled", json!(true)),
        ("SMTPAccount", json!("mailer@example.com")),
        ("SMTPToken", json!("smtp-password-42")),
    ] {
        root.put("/api/option", json!({"key": k, "value": v}))
            .await
            .ok();
    }
    let stored: std::collections::HashMap<String, String> =
        switchboard_store::options::all(&mut app.conn())
            .unwrap()
            .into_iter()
            .collect();
    assert!(
        // Not the password, in any part (a random ciphertext may well contain "42").
        stored["SMTPToken"].starts_with("sealed:v1:")
            && !stored["SMTPToken"].contains("smtp-password")
            && !stored["SMTPToken"].contains("password-42"),
        "{}",
        stored["SMTPToken"]
    );
    assert_eq!(stored["SMTPAccount"], "mailer@example.com");
    let expected = format!(
        "AUTH PLAIN {}",
        base64::engine::general_purpose::STANDARD.encode("\0mailer@example.com\0smtp-password-42")
    );
    app.client()
        .get("/api/verification?email=v@x.io")
        .await
        .ok();
    nth_mail(&inbox, 0).await;
    app.state.reload_settings().await.unwrap();
    app.client()
        .get("/api/verification?email=w@x.io")
        .await
        .ok();
    nth_mail(&inbox, 1).await;
    assert_eq!(*auths.lock().unwrap(), vec![expected.clone(), expected]);
    assert_eq!(inbox.lock().unwrap().len(), 2);
}

#[actix_web::test]
async fn an_account_binds_an_email_address_with_a_code_sent_there() {
    let app = TestApp::new().await;
    let (port, inbox) = smtp_server().await;
    let (bea, _) = app.user("bea").await;
    let (cai, _) = app.user("cai").await;
    let code_req = |email: &str| json!({ "email": email });
    // Signed in only; a code needs mail to be configured.
    app.client()
        .post("/api/user/email/code", code_req("new@x.io"))
        .await
        .err(401, "not_logged_in");
    bea.post("/api/user/email/code", code_req("new@x.io"))
        .await
        .err(503, "smtp_not_configured");
    configure_smtp(&app, port).await;
    bea.post("/api/user/email/code", code_req("not-an-email"))
        .await
        .err(400, "invalid");
    bea.post("/api/user/email/code", json!({}))
        .await
        .err(400, "invalid_field");

    bea.post("/api/user/email/code", code_req("new@x.io"))
        .await
        .ok();
    let mail = nth_mail(&inbox, 0).await;
    assert!(mail.contains("new@x.io"));
    let code = between(&mail, "<strong>", "</strong>").to_owned();
    let bind = |email: &str, code: &str| json!({ "email": email, "code": code });

    // A wrong code, the code for another address, or the code used by another account: refused.
    bea.post("/api/user/email/bind", bind("new@x.io", "000000x"))
        .await
        .err(400, "invalid_verification_code");
    bea.post("/api/user/email/bind", bind("other@x.io", &code))
        .await
        .err(400, "invalid_verification_code");
    cai.post("/api/user/email/bind", bind("new@x.io", &code))
        .await
        .err(400, "invalid_verification_code");
    bea.post("/api/user/email/bind", bind("new@x.io", " "))
        .await
        .err(400, "required");
    assert_eq!(bea.get("/api/user/self").await.ok()["email"], "");

    // The right one binds, once.
    let r = bea
        .post("/api/user/email/bind", bind("new@x.io", &code))
        .await;
    assert_eq!(r.ok()["email"], "new@x.io");
    assert_eq!(bea.get("/api/user/self").await.ok()["email"], "new@x.io");
    bea.post("/api/user/email/bind", bind("new@x.io", &code))
        .await
        .err(400, "invalid_verification_code");
    bea.post("/api/user/email/code", code_req("NEW@x.io"))
        .await
        .err(400, "email_unchanged");

    // Another account asking for a bound address gets the same answer, and no code: the
    // address's owner is told somebody tried.
    cai.post("/api/user/email/code", code_req("new@x.io"))
        .await
        .ok();
    let told = nth_mail(&inbox, 1).await;
    assert!(told.contains("already uses it"), "{told}");
    assert!(!told.contains("<strong>"), "{told}");

    // Two accounts ask for the same free address; the first to bind it keeps it.
    bea.post("/api/user/email/code", code_req("race@x.io"))
        .await
        .ok();
    let bea_code = between(&nth_mail(&inbox, 2).await, "<strong>", "</strong>").to_owned();
    cai.post("/api/user/email/code", code_req("race@x.io"))
        .await
        .ok();
    let cai_code = between(&nth_mail(&inbox, 3).await, "<strong>", "</strong>").to_owned();
    bea.post("/api/user/email/bind", bind("race@x.io", &bea_code))
        .await
        .ok();
    cai.post("/api/user/email/bind", bind("race@x.io", &cai_code))
        .await
        .err(409, "email_taken");
    assert_eq!(cai.get("/api/user/self").await.ok()["email"], "");
    assert_eq!(bea.get("/api/user/self").await.ok()["email"], "race@x.io");
    // The user can sign in with the bound address.
    let c = app.client();
    c.post(
        "/api/user/login",
        json!({"username": "race@x.io", "password": "password-123"}),
    )
    .await
    .ok();
}

/// Without `ServerAddress` the reset link is absolute, made from the address the request was
/// sent to (not from forwarding headers of an untrusted peer); each mail is written in the
/// recipient's stored language, else the site's, in all four languages.
#[actix_web::test]
async fn reset_links_are_absolute_and_mails_speak_the_recipients_language() {
    let app = TestApp::new().await;
    let (port, inbox) = smtp_server().await;
    configure_smtp(&app, port).await;
    let root = app.root();
    root.put("/api/option", json!({"key": "Language", "value": "zh_CN"}))
        .await
        .ok();
    let mut people = Vec::new();
    for (name, language) in [
        ("rosa", "ja"),
        ("hana", "zh_HK"),
        ("sam", "en"),
        ("lin", ""),
    ] {
        let (c, id) = app.user(name).await;
        root.put(
            "/api/user",
            json!({"id": id, "email": format!("{name}@x.io")}),
        )
        .await
        .ok();
        people.push((language, c));
    }

    // A visitor's request, with a Host of its own and forwarding headers nobody trusts.
    let visitor = reqwest::Client::new();
    let ask = |email: &'static str| {
        let visitor = visitor.clone();
        let url = app.url(&format!("/api/reset_password?email={email}"));
        async move {
            let r = visitor
                .get(url)
                .header("X-Forwarded-Host", "evil.example")
                .header("X-Forwarded-Proto", "https")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
        }
    };
    let check = |n: usize, email: &'static str, words: &'static str| {
        let inbox = inbox.clone();
        let base = app.base.clone();
        async move {
            let mail = nth_mail(&inbox, n).await;
            let (local, _) = email.split_once('@').unwrap();
            let link = format!("{base}/user/reset?email={local}%40x.io&token=");
            assert!(link.starts_with("http://127.0.0.1:"), "{link}");
            assert!(mail.contains(&format!("href=\"{link}")), "{mail}");
            assert!(!mail.contains("evil.example"), "{mail}");
            assert!(mail.contains(words), "{email}: {words:?} not in {mail}");
        }
    };
    // No language chosen: the site's (zh_CN).
    ask("lin@x.io").await;
    check(0, "lin@x.io", "重置密码").await;

    // Each user's chosen language (the console stores it when the user switches).
    for (language, c) in &people {
        c.put("/api/user/self", json!({"language": language}))
            .await
            .ok();
    }
    let me = people[0].1.get("/api/user/self").await;
    assert_eq!(me.ok()["language"], "ja");
    people[0]
        .1
        .put("/api/user/self", json!({"language": "fr"}))
        .await
        .err(400, "invalid");
    let expectations = [
        ("rosa@x.io", "パスワードを再設定する"),
        ("hana@x.io", "重設密碼"),
        ("sam@x.io", "Reset the password"),
    ];
    for (n, (email, words)) in expectations.into_iter().enumerate() {
        ask(email).await;
        check(n + 1, email, words).await;
    }

    // The site's language for an address without an account: ja now.
    root.put("/api/option", json!({"key": "Language", "value": "ja"}))
        .await
        .ok();
    root.put(
        "/api/option",
        json!({"key": "EmailVerificationEnabled", "value": true}),
    )
    .await
    .ok();
    app.client()
        .get("/api/verification?email=new@x.io")
        .await
        .ok();
    let mail = nth_mail(&inbox, 4).await;
    assert!(mail.contains("確認コードは <strong>"), "{mail}");
    // A code to bind an address goes out in the signed-in user's language (zh_HK).
    people[1]
        .1
        .post("/api/user/email/code", json!({"email": "hana2@x.io"}))
        .await
        .ok();
    let mail = nth_mail(&inbox, 5).await;
    assert!(mail.contains("您綁定此電郵地址"), "{mail}");
}
