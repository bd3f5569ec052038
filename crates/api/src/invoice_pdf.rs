//! The invoice PDF. Text is set in Noto Sans CJK (one font covers Latin, Chinese and Japanese)
//! loaded from a file at run time: `INVOICE_FONT` (default [`DEFAULT_FONT`]), face
//! `INVOICE_FONT_FACE` (default 2, Simplified Chinese, for a `.ttc` collection; 0 otherwise).
//! printpdf's `text_layout` feature subsets the font, so only the glyphs used are embedded and a
//! one-page invoice weighs about ten kilobytes instead of the font's many megabytes.
//!
//! The parsed font is cached per process (parsing a CJK collection takes a moment); a missing or
//! unreadable font is never cached, so installing it later works without a restart, and it
//! answers 503 `invoice_font_missing` naming the path.

use crate::error::{ApiError, ApiResult};
use actix_web::http::StatusCode;
use printpdf::{
    Mm, Op, ParsedFont, PdfDocument, PdfFontHandle, PdfPage, PdfSaveOptions, Point, Pt, TextItem,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use switchboard_domain::invoice::{format_datetime, usd};
use switchboard_domain::ErrorCode;
use switchboard_store::invoices::ModelUsage;

pub const DEFAULT_FONT: &str = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc";
/// Face of the Noto Sans CJK collection with Simplified Chinese glyph forms.
pub const DEFAULT_TTC_FACE: usize = 2;

/// Everything printed on an invoice.
#[derive(Debug, Clone)]
pub struct InvoiceDoc {
    pub system_name: String,
    pub month: String,
    pub user_id: i64,
    pub username: String,
    pub display_name: String,
    pub status: i32,
    pub quota: i64,
    pub request_count: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub request_time_ms: i64,
    pub models: Vec<ModelUsage>,
    pub created_at: i64,
    pub quota_per_unit: i64,
}

/// The configured font file and face.
pub fn font_location() -> (PathBuf, usize) {
    let path = std::env::var("INVOICE_FONT")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_FONT));
    let face = std::env::var("INVOICE_FONT_FACE")
        .ok()
        .and_then(|f| f.trim().parse().ok())
        .unwrap_or_else(|| {
            let collection = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("ttc") || e.eq_ignore_ascii_case("otc"));
            if collection {
                DEFAULT_TTC_FACE
            } else {
                0
            }
        });
    (path, face)
}

type FontCache = Option<(PathBuf, usize, Arc<ParsedFont>)>;
static FONT: Mutex<FontCache> = Mutex::new(None);

fn font_missing(path: &Path, why: impl std::fmt::Display) -> ApiError {
    tracing::warn!(path = %path.display(), %why, "invoice font unavailable");
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::InvoiceFontMissing,
        format!(
            "the invoice font {} could not be loaded ({why}); install fonts-noto-cjk or set INVOICE_FONT",
            path.display()
        ),
    )
}

/// Loads (once per path and face) the font. Blocking: call on the blocking pool.
pub fn load_font(path: &Path, face: usize) -> ApiResult<Arc<ParsedFont>> {
    let mut cache = match FONT.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some((p, f, font)) = cache.as_ref() {
        if p == path && *f == face {
            return Ok(Arc::clone(font));
        }
    }
    let bytes = std::fs::read(path).map_err(|e| font_missing(path, e))?;
    let font = ParsedFont::from_bytes(&bytes, face, &mut Vec::new())
        .ok_or_else(|| font_missing(path, format!("face {face} is not a readable font")))?;
    let font = Arc::new(font);
    *cache = Some((path.to_path_buf(), face, Arc::clone(&font)));
    Ok(font)
}

/// Shortens `s` to at most `max` characters (an ellipsis marks the cut).
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// The PDF's words in one of the console's four languages (`lang` of the download).
pub struct Labels {
    pub title: &'static str,
    pub monthly: &'static str,
    pub user: &'static str,
    pub status: &'static str,
    pub paid: &'static str,
    pub unpaid: &'static str,
    pub amount: &'static str,
    pub quota: &'static str,
    pub requests: &'static str,
    pub tokens: &'static str,
    pub prompt_completion: (&'static str, &'static str),
    pub request_time: &'static str,
    pub seconds: &'static str,
    pub columns: [&'static str; 5],
    pub generated: &'static str,
}

impl Labels {
    /// The labels of one of the console's languages (`zh_CN`, `zh_HK`, `en`, `ja`); `None` for
    /// any other.
    pub fn for_lang(lang: &str) -> Option<&'static Labels> {
        match lang {
            "zh_CN" => Some(&ZH_CN),
            "zh_HK" => Some(&ZH_HK),
            "en" => Some(&EN),
            "ja" => Some(&JA),
            _ => None,
        }
    }
}

static ZH_CN: Labels = Labels {
    title: "账单",
    monthly: "月度账单",
    user: "用户",
    status: "状态",
    paid: "已支付",
    unpaid: "未支付",
    amount: "金额",
    quota: "额度",
    requests: "请求次数",
    tokens: "Tokens",
    prompt_completion: ("输入", "输出"),
    request_time: "请求耗时",
    seconds: "秒",
    columns: ["模型", "请求次数", "Tokens（输入 / 输出）", "额度", "美元"],
    generated: "生成时间",
};
static ZH_HK: Labels = Labels {
    title: "賬單",
    monthly: "月度賬單",
    user: "用戶",
    status: "狀態",
    paid: "已支付",
    unpaid: "未支付",
    amount: "金額",
    quota: "額度",
    requests: "請求次數",
    tokens: "Tokens",
    prompt_completion: ("輸入", "輸出"),
    request_time: "請求耗時",
    seconds: "秒",
    columns: ["模型", "請求次數", "Tokens（輸入 / 輸出）", "額度", "美元"],
    generated: "生成時間",
};
static EN: Labels = Labels {
    title: "Invoice",
    monthly: "Monthly invoice",
    user: "User",
    status: "Status",
    paid: "paid",
    unpaid: "unpaid",
    amount: "Amount",
    quota: "quota",
    requests: "Requests",
    tokens: "Tokens",
    prompt_completion: ("prompt", "completion"),
    request_time: "Request time",
    seconds: "s",
    columns: ["Model", "Requests", "Tokens (in / out)", "Quota", "USD"],
    generated: "Generated",
};
static JA: Labels = Labels {
    title: "請求書",
    monthly: "月次請求書",
    user: "ユーザー",
    status: "状態",
    paid: "支払済み",
    unpaid: "未払い",
    amount: "金額",
    quota: "クォータ",
    requests: "リクエスト数",
    tokens: "トークン",
    prompt_completion: ("入力", "出力"),
    request_time: "リクエスト時間",
    seconds: "秒",
    columns: [
        "モデル",
        "リクエスト数",
        "トークン（入力 / 出力）",
        "クォータ",
        "米ドル",
    ],
    generated: "作成日時",
};

const PAGE_W: f32 = 210.0;
const PAGE_H: f32 = 297.0;
const MARGIN: f32 = 18.0;
const ROWS_FIRST_PAGE: usize = 30;
const ROWS_PER_PAGE: usize = 45;
/// Table columns (mm from the left): model, requests, tokens (prompt / completion), quota, USD.
const COLS: [f32; 5] = [MARGIN, 92.0, 114.0, 150.0, 172.0];

struct PageBuilder {
    font: PdfFontHandle,
    ops: Vec<Op>,
    columns: [&'static str; 5],
}

impl PageBuilder {
    fn new(font: PdfFontHandle, columns: [&'static str; 5]) -> Self {
        PageBuilder {
            font,
            ops: Vec::new(),
            columns,
        }
    }

    /// Writes `text` with its baseline at `(x, y)` mm from the top left.
    fn text(&mut self, x: f32, y: f32, size: f32, text: &str) {
        if text.is_empty() {
            return;
        }
        self.ops.extend([
            Op::StartTextSection,
            Op::SetFont {
                font: self.font.clone(),
                size: Pt(size),
            },
            Op::SetTextCursor {
                pos: Point::new(Mm(x), Mm(PAGE_H - y)),
            },
            Op::ShowText {
                items: vec![TextItem::Text(text.to_owned())],
            },
            Op::EndTextSection,
        ]);
    }

    fn table_header(&mut self, y: f32) {
        for (x, h) in COLS.iter().zip(self.columns) {
            self.text(*x, y, 9.0, h);
        }
    }

    fn finish(self) -> PdfPage {
        PdfPage::new(Mm(PAGE_W), Mm(PAGE_H), self.ops)
    }
}

/// Renders the invoice with the words of `labels`. CPU-bound: call on the blocking pool.
pub fn render(font: &ParsedFont, doc: &InvoiceDoc, labels: &Labels) -> Vec<u8> {
    let l = labels;
    let title = format!("{} {} {}", doc.system_name, l.title, doc.month);
    let mut pdf = PdfDocument::new(&title);
    let font_id = pdf.add_font(font);
    let handle = PdfFontHandle::External(font_id);
    let per = doc.quota_per_unit;

    let mut pages = Vec::new();
    let mut page = PageBuilder::new(handle.clone(), l.columns);
    let mut y = MARGIN + 6.0;
    page.text(MARGIN, y, 18.0, &clip(&doc.system_name, 40));
    y += 9.0;
    page.text(MARGIN, y, 13.0, &format!("{} · {}", l.monthly, doc.month));
    y += 10.0;
    let user = if doc.display_name.is_empty() || doc.display_name == doc.username {
        format!("{} (#{})", doc.username, doc.user_id)
    } else {
        format!("{} / {} (#{})", doc.display_name, doc.username, doc.user_id)
    };
    let status = if doc.status == 2 { l.paid } else { l.unpaid };
    let (prompt, completion) = l.prompt_completion;
    let lines = [
        format!("{}: {}", l.user, clip(&user, 70)),
        format!("{}: {status}", l.status),
        format!(
            "{}: {}  ({} {})",
            l.amount,
            usd(doc.quota, per),
            doc.quota,
            l.quota
        ),
        format!("{}: {}", l.requests, doc.request_count),
        format!(
            "{}: {} {prompt} / {} {completion}",
            l.tokens, doc.prompt_tokens, doc.completion_tokens
        ),
        format!(
            "{}: {:.1} {}",
            l.request_time,
            doc.request_time_ms as f64 / 1000.0,
            l.seconds
        ),
    ];
    for l in &lines {
        page.text(MARGIN, y, 10.5, l);
        y += 6.0;
    }
    y += 4.0;
    page.table_header(y);
    y += 6.0;
    let mut rows_left = ROWS_FIRST_PAGE;
    for m in &doc.models {
        if rows_left == 0 {
            pages.push(
                std::mem::replace(&mut page, PageBuilder::new(handle.clone(), l.columns)).finish(),
            );
            y = MARGIN + 6.0;
            page.table_header(y);
            y += 6.0;
            rows_left = ROWS_PER_PAGE;
        }
        let cells = [
            clip(&m.model_name, 36),
            m.request_count.to_string(),
            format!("{} / {}", m.prompt_tokens, m.completion_tokens),
            m.quota.to_string(),
            usd(m.quota, per),
        ];
        for (x, c) in COLS.iter().zip(cells.iter()) {
            page.text(*x, y, 9.0, c);
        }
        y += 5.5;
        rows_left -= 1;
    }
    y += 6.0;
    page.text(
        MARGIN,
        y,
        9.0,
        &format!("{}: {} UTC", l.generated, format_datetime(doc.created_at)),
    );
    pages.push(page.finish());

    pdf.with_pages(pages)
        .save(&PdfSaveOptions::default(), &mut Vec::new())
}
