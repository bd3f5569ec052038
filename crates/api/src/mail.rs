//! Outgoing e-mail over SMTP, configured by the SMTP settings (server, port, account, token,
//! from). Port 465 uses implicit TLS, 587 requires STARTTLS, any other port upgrades with STARTTLS
//! when the server offers it.

use crate::error::{ApiError, ApiResult};
use crate::settings::{Site, Smtp, Typed};
use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::message::{Mailbox, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use switchboard_domain::ErrorCode;

/// Refuses at once when no SMTP server is set: the same answer for every address, given before
/// anything about the address is looked up.
pub fn require_configured(smtp: &Smtp) -> ApiResult<()> {
    if smtp.server.is_empty() {
        return Err(ApiError::new(
            actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::SmtpNotConfigured,
            "e-mail is not configured on this site (SMTP server missing); contact the administrator",
        ));
    }
    Ok(())
}

/// Runs `work` (database writes and a [`send`]) after the answer: requests about an address
/// answer alike and take alike whether an account uses it or not (an SMTP round trip paid only
/// for registered addresses would tell them apart). A failure is logged, not answered.
pub fn in_background(work: impl std::future::Future<Output = ApiResult<()>> + Send + 'static) {
    tokio::spawn(async move {
        if let Err(e) = work.await {
            tracing::warn!(code = e.code.as_str(), error = %e.message, "e-mail in the background failed");
        }
    });
}

/// The language of an e-mail: the recipient's stored language when set, else the site's
/// `Language` setting, else Simplified Chinese (that setting's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    ZhCn,
    ZhHk,
    En,
    Ja,
}

impl Lang {
    fn parse(s: &str) -> Option<Lang> {
        match s.trim() {
            "zh_CN" => Some(Lang::ZhCn),
            "zh_HK" => Some(Lang::ZhHk),
            "en" => Some(Lang::En),
            "ja" => Some(Lang::Ja),
            _ => None,
        }
    }

    /// `user`: the recipient's stored language (`None` when the address has no account).
    pub fn for_recipient(user: Option<&str>, site: &Site) -> Lang {
        user.and_then(Lang::parse)
            .or_else(|| Lang::parse(&site.language))
            .unwrap_or(Lang::ZhCn)
    }
}

/// The e-mails the site sends.
pub enum Mail<'a> {
    /// A registration code.
    RegisterCode { code: &'a str },
    /// Registration was asked for with an address an account already uses: no code.
    RegisterTaken,
    /// A password-reset link (absolute).
    Reset { link: &'a str },
    /// A code that binds the address to the signed-in account.
    BindCode { code: &'a str },
    /// Binding was asked for with an address another account already uses: no code.
    BindTaken,
}

/// Escapes text for HTML (the site name is an administrator's text).
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

impl Mail<'_> {
    /// The subject and HTML body in `lang`; `minutes` is how long a code or link is valid.
    pub fn render(&self, lang: Lang, system: &str, minutes: i64) -> (String, String) {
        let sys = escape(system);
        let (subject, html) = match (self, lang) {
            (Mail::RegisterCode { code }, Lang::En) => (
                format!("{system} e-mail verification"),
                format!("<p>Your {sys} verification code is <strong>{code}</strong>.</p><p>It is valid for {minutes} minutes.</p>"),
            ),
            (Mail::RegisterCode { code }, Lang::ZhCn) => (
                format!("{system} 邮箱验证"),
                format!("<p>您的 {sys} 验证码是 <strong>{code}</strong>。</p><p>{minutes} 分钟内有效。</p>"),
            ),
            (Mail::RegisterCode { code }, Lang::ZhHk) => (
                format!("{system} 電郵驗證"),
                format!("<p>您的 {sys} 驗證碼是 <strong>{code}</strong>。</p><p>{minutes} 分鐘內有效。</p>"),
            ),
            (Mail::RegisterCode { code }, Lang::Ja) => (
                format!("{system} メールアドレスの確認"),
                format!("<p>{sys} の確認コードは <strong>{code}</strong> です。</p><p>有効期限は {minutes} 分です。</p>"),
            ),
            (Mail::RegisterTaken, Lang::En) => (
                format!("{system} e-mail verification"),
                format!("<p>Somebody asked to register a {sys} account with this address, which an account already uses.</p><p>If it was you, sign in, or reset the password if you forgot it. Otherwise ignore this e-mail.</p>"),
            ),
            (Mail::RegisterTaken, Lang::ZhCn) => (
                format!("{system} 邮箱验证"),
                format!("<p>有人想用此邮箱地址注册 {sys} 账号，但已有账号在使用该地址。</p><p>如果是您本人，请直接登录；忘记密码可以重置。否则请忽略此邮件。</p>"),
            ),
            (Mail::RegisterTaken, Lang::ZhHk) => (
                format!("{system} 電郵驗證"),
                format!("<p>有人想用此電郵地址註冊 {sys} 帳戶，但已有帳戶在使用該地址。</p><p>如果是您本人，請直接登入；忘記密碼可以重設。否則請忽略此電郵。</p>"),
            ),
            (Mail::RegisterTaken, Lang::Ja) => (
                format!("{system} メールアドレスの確認"),
                format!("<p>このメールアドレスで {sys} のアカウント登録が試みられましたが、このアドレスは既に別のアカウントで使われています。</p><p>ご本人の場合はサインインしてください。パスワードをお忘れの場合は再設定できます。心当たりがなければ、このメールは無視してください。</p>"),
            ),
            (Mail::Reset { link }, Lang::En) => (
                format!("{system} password reset"),
                format!("<p>Someone asked to reset the password of your {sys} account.</p><p><a href=\"{link}\">Reset the password</a> (valid for {minutes} minutes): {link}</p><p>If it was not you, ignore this e-mail.</p>"),
            ),
            (Mail::Reset { link }, Lang::ZhCn) => (
                format!("{system} 密码重置"),
                format!("<p>有人请求重置您的 {sys} 账号密码。</p><p><a href=\"{link}\">重置密码</a>（{minutes} 分钟内有效）：{link}</p><p>如果不是您本人操作，请忽略此邮件。</p>"),
            ),
            (Mail::Reset { link }, Lang::ZhHk) => (
                format!("{system} 密碼重設"),
                format!("<p>有人請求重設您的 {sys} 帳戶密碼。</p><p><a href=\"{link}\">重設密碼</a>（{minutes} 分鐘內有效）：{link}</p><p>如果不是您本人操作，請忽略此電郵。</p>"),
            ),
            (Mail::Reset { link }, Lang::Ja) => (
                format!("{system} パスワードの再設定"),
                format!("<p>{sys} アカウントのパスワード再設定が依頼されました。</p><p><a href=\"{link}\">パスワードを再設定する</a>（{minutes} 分間有効）：{link}</p><p>心当たりがなければ、このメールは無視してください。</p>"),
            ),
            (Mail::BindCode { code }, Lang::En) => (
                format!("{system} e-mail binding"),
                format!("<p>Your {sys} code to bind this e-mail address is <strong>{code}</strong>.</p><p>It is valid for {minutes} minutes.</p>"),
            ),
            (Mail::BindCode { code }, Lang::ZhCn) => (
                format!("{system} 邮箱绑定"),
                format!("<p>您绑定此邮箱地址的 {sys} 验证码是 <strong>{code}</strong>。</p><p>{minutes} 分钟内有效。</p>"),
            ),
            (Mail::BindCode { code }, Lang::ZhHk) => (
                format!("{system} 電郵綁定"),
                format!("<p>您綁定此電郵地址的 {sys} 驗證碼是 <strong>{code}</strong>。</p><p>{minutes} 分鐘內有效。</p>"),
            ),
            (Mail::BindCode { code }, Lang::Ja) => (
                format!("{system} メールアドレスの登録"),
                format!("<p>このメールアドレスを {sys} アカウントに登録するためのコードは <strong>{code}</strong> です。</p><p>有効期限は {minutes} 分です。</p>"),
            ),
            (Mail::BindTaken, Lang::En) => (
                format!("{system} e-mail binding"),
                format!("<p>Somebody asked to bind this address to another {sys} account, but an account already uses it. Nothing was changed.</p><p>If it was not you, you can ignore this e-mail.</p>"),
            ),
            (Mail::BindTaken, Lang::ZhCn) => (
                format!("{system} 邮箱绑定"),
                format!("<p>有人想把此邮箱地址绑定到另一个 {sys} 账号，但已有账号在使用该地址，未做任何更改。</p><p>如果不是您本人操作，可以忽略此邮件。</p>"),
            ),
            (Mail::BindTaken, Lang::ZhHk) => (
                format!("{system} 電郵綁定"),
                format!("<p>有人想把此電郵地址綁定到另一個 {sys} 帳戶，但已有帳戶在使用該地址，未作任何更改。</p><p>如果不是您本人操作，可以忽略此電郵。</p>"),
            ),
            (Mail::BindTaken, Lang::Ja) => (
                format!("{system} メールアドレスの登録"),
                format!("<p>このメールアドレスを別の {sys} アカウントに登録しようとする操作がありましたが、このアドレスは既に使われているため、何も変更されていません。</p><p>心当たりがなければ、このメールは無視してください。</p>"),
            ),
        };
        (subject, html)
    }
}

/// Renders `mail` in `lang` and sends it to `to`.
pub async fn send_mail(
    settings: &Typed,
    to: &str,
    lang: Lang,
    mail: &Mail<'_>,
    minutes: i64,
) -> ApiResult<()> {
    let (subject, html) = mail.render(lang, &settings.site.system_name, minutes);
    send(settings, to, &subject, &html).await
}

pub async fn send(settings: &Typed, to: &str, subject: &str, html: &str) -> ApiResult<()> {
    let smtp = &settings.smtp;
    require_configured(smtp)?;
    let server = smtp.server.clone();
    let port = u16::try_from(smtp.port).unwrap_or(587);
    let account = smtp.account.clone();
    let from = if smtp.from.is_empty() {
        account.clone()
    } else {
        smtp.from.clone()
    };
    let system_name = &settings.site.system_name;
    let from: Mailbox = format!("{system_name} <{from}>")
        .parse()
        .or_else(|_| from.parse())
        .map_err(|e| ApiError::internal(format!("SMTPFrom is not a valid address: {e}")))?;
    let to: Mailbox = to.parse().map_err(|_| {
        ApiError::bad_request(ErrorCode::InvalidEmail, "not a valid e-mail address")
    })?;
    // Base64 whatever the language: one transfer encoding for every text.
    let message = Message::builder()
        .from(from)
        .to(to)
        .subject(subject)
        .singlepart(
            SinglePart::builder()
                .header(ContentType::TEXT_HTML)
                .header(ContentTransferEncoding::Base64)
                .body(html.to_owned()),
        )
        .map_err(ApiError::internal)?;
    let tls_params = TlsParameters::new(server.clone()).map_err(ApiError::internal)?;
    let tls = match port {
        465 => Tls::Wrapper(tls_params),
        587 => Tls::Required(tls_params),
        _ => Tls::Opportunistic(tls_params),
    };
    let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&server)
        .port(port)
        .tls(tls)
        .timeout(Some(std::time::Duration::from_secs(20)));
    if !account.is_empty() {
        builder = builder.credentials(Credentials::new(account, smtp.token.clone()));
    }
    builder.build().send(message).await.map_err(|e| {
        tracing::warn!(error = %e, "sending e-mail failed");
        ApiError::new(
            actix_web::http::StatusCode::BAD_GATEWAY,
            ErrorCode::EmailSendFailed,
            "the e-mail could not be sent; try again later or contact the administrator",
        )
    })?;
    Ok(())
}
