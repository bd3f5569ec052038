//! Monthly invoices over HTTP: generation from the daily rollup (idempotent, one node only),
//! the user's list / detail / PDF, root-only generation and the UserInvoiceMonth switch.

use crate::common::{Client, TestApp};
use serde_json::json;
use std::process::Command;
use switchboard_api::routes::invoices::run_monthly_invoices;
use switchboard_api::{ApiConfig, AppState};
use switchboard_domain::invoice::Month;
use switchboard_domain::log::LogType;
use switchboard_store::logs::{settle_batch, ConsumeRecord};
use switchboard_store::testing::TestDb;

const MONTH: &str = "2024-02";
const DISPLAY: &str = "测试ユーザー";
const MODEL_CN: &str = "通义千问-max";
const MODEL_JA: &str = "こんにちは-model";

fn bounds() -> (i64, i64) {
    Month::parse(MONTH).unwrap().bounds()
}

#[allow(clippy::too_many_arguments)]
fn record(
    user_id: i64,
    username: &str,
    at: i64,
    model: &str,
    quota: i64,
    prompt: i32,
    completion: i32,
    ms: i32,
) -> ConsumeRecord {
    ConsumeRecord {
        request_id: Some(format!("inv-{}", crate::common::unique()).into()),
        created_at: at,
        log_type: LogType::Consume.as_i32(),
        user_id,
        username: username.into(),
        token_id: 0,
        token_name: Default::default(),
        channel_id: 0,
        model_name: model.into(),
        group_name: "default".into(),
        quota,
        prompt_tokens: prompt,
        completion_tokens: completion,
        use_time_ms: ms,
        first_response_ms: 0,
        is_stream: false,
        source_ip: Default::default(),
        content: String::new(),
        metadata: String::new(),
        cache_hit: false,
    }
}

/// Settles consume records for `user_id` in February 2024 (and just outside it) through the
/// store's ledger path, which writes the consume logs and the daily rollup together.
fn usage(app: &TestApp, user_id: i64, username: &str) {
    let (from, to) = bounds();
    let batch = vec![
        record(user_id, username, from, "gpt-4o-mini", 1_234, 100, 20, 300),
        record(user_id, username, from + 3_600, "gpt-4o-mini", 7, 1, 1, 10),
        record(
            user_id,
            username,
            from + 10 * 86_400,
            MODEL_CN,
            500_001,
            1_000,
            2_000,
            4_000,
        ),
        record(user_id, username, to - 1, MODEL_JA, 3, 3, 0, 1),
        // Outside the month on both sides.
        record(user_id, username, from - 1, "gpt-4o-mini", 99_999, 9, 9, 9),
        record(user_id, username, to, "gpt-4o-mini", 88_888, 8, 8, 8),
    ];
    let mut c = app.conn();
    assert_eq!(settle_batch(&mut c, &batch).unwrap(), batch.len());
}

async fn enable(app: &TestApp, on: bool) {
    app.root()
        .put(
            "/api/option",
            json!({"key": "UserInvoiceMonth", "value": if on { "true" } else { "false" }}),
        )
        .await
        .ok();
}

/// An app with invoices enabled and a user (display name in Chinese and Japanese) with usage.
async fn setup() -> (TestApp, Client, i64) {
    let app = TestApp::new().await;
    enable(&app, true).await;
    let (user, id) = app.user("invoice_user").await;
    user.put("/api/user/self", json!({"display_name": DISPLAY}))
        .await
        .ok();
    usage(&app, id, "invoice_user");
    (app, user, id)
}

async fn generate(root: &Client, body: serde_json::Value) -> i64 {
    let r = root.post("/api/invoice/generate", body).await;
    r.ok()["generated"].as_i64().unwrap()
}

#[actix_web::test]
async fn generation_is_idempotent_and_matches_the_rollup_and_logs() {
    let (app, user, _) = setup().await;
    let root = app.root();
    assert_eq!(generate(&root, json!({"month": MONTH})).await, 1);
    assert_eq!(generate(&root, json!({"month": MONTH})).await, 0);
    let list = user.get("/api/user/invoice").await;
    assert_eq!(list.ok()["total_count"], 1, "{:?}", list.body);
    let first = list.ok()["data"][0].clone();
    assert_eq!(first["month"], MONTH);

    let d = user
        .get(&format!("/api/user/invoice/detail?date={MONTH}"))
        .await;
    let inv = d.ok().clone();
    assert_eq!(inv["id"], first["id"]);
    // Prepaid: the month's charges already left the balance, so the invoice is paid.
    assert_eq!(inv["status"], 2);
    assert_eq!(inv["paid_at"], inv["created_at"]);
    // Exactly the four February requests, to the last quota unit.
    assert_eq!(inv["quota"], 1_234 + 7 + 500_001 + 3);
    assert_eq!(inv["amount"], inv["quota"]);
    assert_eq!(inv["request_count"], 4);
    assert_eq!(inv["prompt_tokens"], 100 + 1 + 1_000 + 3);
    assert_eq!(inv["completion_tokens"], 20 + 1 + 2_000);
    assert_eq!(inv["request_time_ms"], 300 + 10 + 4_000 + 1);
    let models = inv["model_details"].as_array().unwrap();
    let names: Vec<&str> = models
        .iter()
        .map(|m| m["model_name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert_eq!(names.len(), 3);
    let mini = models
        .iter()
        .find(|m| m["model_name"] == "gpt-4o-mini")
        .unwrap();
    assert_eq!(
        (mini["request_count"].as_i64(), mini["quota"].as_i64()),
        (Some(2), Some(1_241))
    );
    let per_model_quota: i64 = models.iter().map(|m| m["quota"].as_i64().unwrap()).sum();
    assert_eq!(per_model_quota, inv["quota"].as_i64().unwrap());

    // The same month's consume logs agree.
    let (from, to) = bounds();
    let s = user
        .get(&format!(
            "/api/log/self/stat?type=2&start_timestamp={from}&end_timestamp={}",
            to - 1
        ))
        .await;
    let s = s.ok();
    assert_eq!(s["quota"], inv["quota"]);
    assert_eq!(s["request_count"], inv["request_count"]);
    assert_eq!(s["prompt_tokens"], inv["prompt_tokens"]);
    assert_eq!(s["completion_tokens"], inv["completion_tokens"]);

    // Regeneration replaces the month's rows (and picks up later rollup rows).
    let (app_id, uname) = (inv["user_id"].as_i64().unwrap(), "invoice_user");
    let mut c = app.conn();
    settle_batch(
        &mut c,
        &[record(app_id, uname, from + 5, "gpt-4o-mini", 10, 0, 0, 0)],
    )
    .unwrap();
    drop(c);
    assert_eq!(generate(&root, json!({"month": MONTH})).await, 0);
    assert_eq!(
        generate(&root, json!({"month": MONTH, "regenerate": true})).await,
        1
    );
    let d = user
        .get(&format!("/api/user/invoice/detail?date={MONTH}"))
        .await;
    assert_eq!(d.ok()["quota"], 1_234 + 7 + 500_001 + 3 + 10);
    let list = user.get("/api/user/invoice").await;
    assert_eq!(list.ok()["total_count"], 1);
}

#[actix_web::test]
async fn months_are_listed_newest_first_and_bad_months_are_not_found() {
    let (app, user, id) = setup().await;
    let root = app.root();
    // A January invoice as well.
    let (jan, _) = Month::parse("2024-01").unwrap().bounds();
    let mut c = app.conn();
    settle_batch(
        &mut c,
        &[record(
            id,
            "invoice_user",
            jan + 5,
            "gpt-4o-mini",
            42,
            1,
            1,
            1,
        )],
    )
    .unwrap();
    drop(c);
    assert_eq!(generate(&root, json!({"month": "2024-01"})).await, 1);
    assert_eq!(generate(&root, json!({"month": MONTH})).await, 1);
    let r = user.get("/api/user/invoice?page=1&size=10").await;
    let months: Vec<&str> = r.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["month"].as_str().unwrap())
        .collect();
    assert_eq!(months, vec![MONTH, "2024-01"]);
    let r = user.get("/api/user/invoice?page=2&size=1").await;
    assert_eq!(r.ok()["data"][0]["month"], "2024-01");

    let this_month = Month::of(switchboard_store::now()).to_string();
    let next_month = Month::of(switchboard_store::now()).next().to_string();
    for date in [
        "2024-13",
        "2024-2",
        "garbage",
        "",
        "2023-12",
        this_month.as_str(),
        next_month.as_str(),
    ] {
        for route in ["detail", "pdf"] {
            user.get(&format!("/api/user/invoice/{route}?date={date}"))
                .await
                .err(404, "not_found");
        }
    }
    user.get("/api/user/invoice/detail")
        .await
        .err(404, "not_found");
    // Root's generation refuses malformed and unfinished months.
    root.post("/api/invoice/generate", json!({"month": "2024-13"}))
        .await
        .err(400, "invalid");
    root.post("/api/invoice/generate", json!({"month": this_month}))
        .await
        .err(400, "month_not_complete");
    root.post("/api/invoice/generate", json!({"month": next_month}))
        .await
        .err(400, "month_not_complete");
}

#[actix_web::test]
async fn users_see_only_their_own_invoices() {
    let (app, user, _) = setup().await;
    let (other, _) = app.user("other_user").await;
    assert_eq!(generate(&app.root(), json!({"month": MONTH})).await, 1);
    let r = other.get("/api/user/invoice").await;
    assert_eq!(r.ok()["total_count"], 0);
    other
        .get(&format!("/api/user/invoice/detail?date={MONTH}"))
        .await
        .err(404, "not_found");
    other
        .get(&format!("/api/user/invoice/pdf?date={MONTH}"))
        .await
        .err(404, "not_found");
    user.get(&format!("/api/user/invoice/detail?date={MONTH}"))
        .await
        .ok();
    // Anonymous callers are refused.
    app.client()
        .get("/api/user/invoice")
        .await
        .err(401, "not_logged_in");
}

#[actix_web::test]
async fn only_root_generates() {
    let (app, user, _) = setup().await;
    let (admin, _) = app.admin("invoice_admin").await;
    admin
        .post("/api/invoice/generate", json!({"month": MONTH}))
        .await
        .err(403, "forbidden");
    user.post("/api/invoice/generate", json!({"month": MONTH}))
        .await
        .err(403, "forbidden");
    let r = user.get("/api/user/invoice").await;
    assert_eq!(r.ok()["total_count"], 0);
}

#[actix_web::test]
async fn the_setting_switches_the_user_routes() {
    let (app, user, _) = setup().await;
    assert_eq!(generate(&app.root(), json!({"month": MONTH})).await, 1);
    enable(&app, false).await;
    for path in [
        "/api/user/invoice".to_string(),
        format!("/api/user/invoice/detail?date={MONTH}"),
        format!("/api/user/invoice/pdf?date={MONTH}"),
    ] {
        let m = user.get(&path).await.err(403, "invoices_disabled");
        assert!(m.contains("UserInvoiceMonth"), "{m}");
    }
    // Root can still generate while the menu is hidden.
    assert_eq!(generate(&app.root(), json!({"month": MONTH})).await, 0);
    enable(&app, true).await;
    user.get("/api/user/invoice").await.ok();
}

fn tool(name: &str) -> std::path::PathBuf {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .unwrap();
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        out.status.success() && !path.is_empty(),
        "`{name}` is required by this test and was not found: install the Debian package \
         poppler-utils (apt-get install poppler-utils)"
    );
    path.into()
}

#[actix_web::test]
async fn pdf_has_cjk_and_latin_text_and_renders() {
    let pdftotext = tool("pdftotext");
    let pdftoppm = tool("pdftoppm");
    let _font = FontEnv::default_font();
    let (app, user, _) = setup().await;
    assert_eq!(generate(&app.root(), json!({"month": MONTH})).await, 1);

    let r = user
        .http
        .get(user.base.clone() + &format!("/api/user/invoice/pdf?date={MONTH}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let h = r.headers().clone();
    assert_eq!(h["content-type"], "application/pdf");
    assert_eq!(
        h["content-disposition"],
        format!("attachment; filename=\"invoice-{MONTH}.pdf\"")
    );
    let bytes = r.bytes().await.unwrap();
    assert!(bytes.starts_with(b"%PDF"), "not a PDF");
    // Subset font: far below the size of the CJK font file.
    assert!(bytes.len() < 300_000, "PDF is {} bytes", bytes.len());

    let dir = std::env::temp_dir().join(format!("sb-invoice-{}", crate::common::unique()));
    std::fs::create_dir_all(&dir).unwrap();
    let pdf = dir.join("invoice.pdf");
    std::fs::write(&pdf, &bytes).unwrap();

    let out = Command::new(&pdftotext)
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    assert!(out.status.success(), "pdftotext: {:?}", out);
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "Switchboard",
        MONTH,
        DISPLAY,
        "invoice_user",
        MODEL_CN,
        MODEL_JA,
        "gpt-4o-mini",
        "月度账单",
        "状态: 已支付",
        "$1.002490",
        "501245",
    ] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    // No English label in the Chinese PDF.
    for english in ["Status", "paid", "Monthly invoice", "Requests"] {
        assert!(!text.contains(english), "{english:?} in:\n{text}");
    }

    // In the reader's language: English and Japanese on request; an unknown one is refused.
    for (lang, wants) in [
        ("en", ["Monthly invoice", "Status: paid", "Requests"]),
        ("ja", ["月次請求書", "状態: 支払済み", "リクエスト数"]),
        ("zh_HK", ["月度賬單", "狀態: 已支付", "請求次數"]),
    ] {
        let bytes = user
            .http
            .get(user.base.clone() + &format!("/api/user/invoice/pdf?date={MONTH}&lang={lang}"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let file = dir.join(format!("invoice-{lang}.pdf"));
        std::fs::write(&file, &bytes).unwrap();
        let out = Command::new(&pdftotext)
            .arg(&file)
            .arg("-")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for want in wants {
            assert!(
                text.contains(want),
                "{lang}: {want:?} missing from:\n{text}"
            );
        }
    }
    user.get(&format!("/api/user/invoice/pdf?date={MONTH}&lang=fr"))
        .await
        .err(400, "invalid_language");

    let prefix = dir.join("page");
    let out = Command::new(&pdftoppm)
        .args(["-png", "-r", "50", "-f", "1", "-l", "1"])
        .arg(&pdf)
        .arg(&prefix)
        .output()
        .unwrap();
    assert!(out.status.success(), "pdftoppm: {:?}", out);
    let png = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "png"))
        .expect("pdftoppm wrote no PNG");
    let img = std::fs::read(&png).unwrap();
    assert!(
        img.starts_with(b"\x89PNG") && img.len() > 1_000,
        "{} bytes",
        img.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[actix_web::test]
async fn a_missing_font_answers_503() {
    let (app, user, _) = setup().await;
    assert_eq!(generate(&app.root(), json!({"month": MONTH})).await, 1);
    let missing = "/nonexistent/switchboard-invoice-font.ttc";
    let _guard = FontEnv::set(missing);
    let m = user
        .get(&format!("/api/user/invoice/pdf?date={MONTH}"))
        .await
        .err(503, "invoice_font_missing");
    assert!(m.contains(missing), "{m}");
}

/// Sets `INVOICE_FONT` for one test and restores the default afterwards. Tests touching the
/// variable serialise on a mutex (the PDF test reads the default).
struct FontEnv(#[allow(dead_code)] std::sync::MutexGuard<'static, ()>);

static FONT_ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl FontEnv {
    fn set(path: &str) -> FontEnv {
        let g = FONT_ENV.lock().unwrap_or_else(|p| p.into_inner());
        std::env::set_var("INVOICE_FONT", path);
        FontEnv(g)
    }

    fn default_font() -> FontEnv {
        let g = FONT_ENV.lock().unwrap_or_else(|p| p.into_inner());
        std::env::remove_var("INVOICE_FONT");
        FontEnv(g)
    }
}

impl Drop for FontEnv {
    fn drop(&mut self) {
        std::env::remove_var("INVOICE_FONT");
    }
}

/// Two nodes (two application states with their own pools) on one database run the monthly job
/// at the same moment: exactly one generates.
#[actix_web::test]
async fn one_node_generates_the_monthly_invoices() {
    let mut dbs = vec![TestDb::sqlite()];
    dbs.extend(TestDb::postgres());
    dbs.extend(TestDb::mysql());
    for db in dbs {
        let backend = db.backend;
        let app = TestApp::on(db, |_| {}).await;
        let (_, a) = app.user("node_user_a").await;
        let (_, b) = app.user("node_user_b").await;
        usage(&app, a, "node_user_a");
        usage(&app, b, "node_user_b");
        let (pool2, backend2) = switchboard_store::conn::connect(&app.db.dsn, 4).unwrap();
        let node2 = AppState::new(pool2, backend2, ApiConfig::for_tests()).unwrap();
        // 2024-03-01 00:00:05 UTC: the job bills February.
        let t = Month::parse("2024-03").unwrap().start() + 5;
        let (r1, r2) = tokio::join!(
            run_monthly_invoices(&app.state, t),
            run_monthly_invoices(&node2, t)
        );
        let (n1, n2) = (r1.unwrap(), r2.unwrap());
        assert_eq!(
            (n1.min(n2), n1.max(n2)),
            (0, 2),
            "{backend:?}: {n1} and {n2}"
        );
        // Later ticks (any node, any time this month) find the month done.
        assert_eq!(run_monthly_invoices(&node2, t + 7_200).await.unwrap(), 0);
        assert_eq!(
            run_monthly_invoices(&app.state, t + 86_400).await.unwrap(),
            0
        );
        let mut c = app.conn();
        assert_eq!(
            switchboard_store::invoices::count_month(&mut c, MONTH).unwrap(),
            2
        );
        // On the 1st of April the job bills March (each user's request at 2024-03-01 00:00:00);
        // in May, April without usage gives nothing.
        let april = Month::parse("2024-04").unwrap().start();
        assert_eq!(run_monthly_invoices(&app.state, april).await.unwrap(), 2);
        let may = Month::parse("2024-05").unwrap().start();
        assert_eq!(run_monthly_invoices(&node2, may).await.unwrap(), 0);
    }
}
