//! Outgoing e-mail over SMTP, configured by the SMTP settings (server, port, account, token,
//! from). Port 465 uses implicit TLS, 587 requires STARTTLS, any other port upgrades with STARTTLS
//! when the server offers it.

use crate::error::{ApiError, ApiResult};
use crate::settings::View;
use lettre::message::{header::ContentType, Mailbox};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use switchboard_domain::options::OptionValues;

/// Refuses at once when no SMTP server is set: the same answer for every address, given before
/// anything about the address is looked up.
pub fn require_configured(settings: &View<'_>) -> ApiResult<()> {
    if settings.text("SMTPServer").is_empty() {
        return Err(ApiError::new(
            actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
            "smtp_not_configured",
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
            tracing::warn!(code = e.code, error = %e.message, "e-mail in the background failed");
        }
    });
}

pub async fn send(settings: &View<'_>, to: &str, subject: &str, html: &str) -> ApiResult<()> {
    require_configured(settings)?;
    let server = settings.text("SMTPServer");
    let port = u16::try_from(settings.int("SMTPPort")).unwrap_or(587);
    let account = settings.text("SMTPAccount");
    let from = {
        let f = settings.text("SMTPFrom");
        if f.is_empty() {
            account.clone()
        } else {
            f
        }
    };
    let system_name = settings.text("SystemName");
    let from: Mailbox = format!("{system_name} <{from}>")
        .parse()
        .or_else(|_| from.parse())
        .map_err(|e| ApiError::internal(format!("SMTPFrom is not a valid address: {e}")))?;
    let to: Mailbox = to
        .parse()
        .map_err(|_| ApiError::bad_request("invalid_email", "not a valid e-mail address"))?;
    let message = Message::builder()
        .from(from)
        .to(to)
        .subject(subject)
        .header(ContentType::TEXT_HTML)
        .body(html.to_owned())
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
        builder = builder.credentials(Credentials::new(account, settings.text("SMTPToken")));
    }
    builder.build().send(message).await.map_err(|e| {
        tracing::warn!(error = %e, "sending e-mail failed");
        ApiError::new(
            actix_web::http::StatusCode::BAD_GATEWAY,
            "email_send_failed",
            "the e-mail could not be sent; try again later or contact the administrator",
        )
    })?;
    Ok(())
}
