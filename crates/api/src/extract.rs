//! Request extractors shared by handlers: a JSON body with every string trimmed and errors in the
//! envelope, and the client's IP address.

use crate::error::ApiError;
use crate::AppState;
use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use switchboard_domain::net::{client_address, ForwardedHeaders};
use switchboard_domain::token::IpAllowList;
use switchboard_domain::ErrorCode;

/// A JSON request body, parsed with every nested string trimmed (spec section 5). Malformed JSON,
/// wrong types and missing fields become a 400 naming the problem; oversized bodies a 413.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for Body<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let limit = req
            .app_data::<web::Data<AppState>>()
            .map(|s| s.config.max_body_bytes)
            .unwrap_or(1 << 20);
        let fut =
            web::Bytes::from_request(&req.clone(), &mut std::mem::replace(payload, Payload::None));
        // Wrap the payload read in a size check of our own so the error is in the envelope.
        let declared = req
            .headers()
            .get(actix_web::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        Box::pin(async move {
            if declared.is_some_and(|n| n > limit) {
                return Err(too_large(limit));
            }
            let bytes = fut.await.map_err(|e| {
                if e.to_string().contains("overflow") || e.to_string().contains("larger") {
                    too_large(limit)
                } else {
                    ApiError::bad_request(
                        ErrorCode::InvalidBody,
                        format!("could not read request body: {e}"),
                    )
                }
            })?;
            if bytes.len() > limit {
                return Err(too_large(limit));
            }
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return Err(ApiError::bad_request(
                    ErrorCode::InvalidBody,
                    "request body is empty; a JSON object is expected",
                ));
            }
            let mut value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
                ApiError::bad_request(
                    ErrorCode::InvalidJson,
                    format!("request body is not valid JSON: {e}"),
                )
            })?;
            if !value.is_object() {
                return Err(ApiError::bad_request(
                    ErrorCode::InvalidBody,
                    "request body must be a JSON object",
                ));
            }
            switchboard_domain::validate::trim_strings(&mut value);
            let parsed = serde_json::from_value(value).map_err(|e| {
                ApiError::bad_request(ErrorCode::InvalidField, format!("invalid request: {e}"))
            })?;
            Ok(Body(parsed))
        })
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        actix_web::http::StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::BodyTooLarge,
        format!("request body is larger than {limit} bytes"),
    )
}

/// The client's IP address: the peer, or, when the peer is a trusted proxy, the right-most
/// forwarded address that is not a trusted proxy (`X-Forwarded-For`, else `Forwarded: for=`,
/// else `X-Real-IP`); see [`switchboard_domain::net::client_address`]. The first entries of
/// `X-Forwarded-For` are the client's own words and never decide the answer.
pub fn client_ip(req: &HttpRequest, trusted: &IpAllowList) -> String {
    let Some(peer) = req.peer_addr().map(|a| a.ip()) else {
        return "unknown".into();
    };
    if !trusted.contains(peer) {
        return ip_text(peer);
    }
    let joined = |name: &str| {
        let v: Vec<&str> = req
            .headers()
            .get_all(name)
            .filter_map(|v| v.to_str().ok())
            .collect();
        (!v.is_empty()).then(|| v.join(","))
    };
    let xff = joined("x-forwarded-for");
    let fwd = joined("forwarded");
    let real = joined("x-real-ip");
    let headers = ForwardedHeaders {
        x_forwarded_for: xff.as_deref(),
        forwarded: fwd.as_deref(),
        x_real_ip: real.as_deref(),
    };
    ip_text(client_address(peer, trusted, &headers))
}

/// `ip` as `to_string` writes it; an IPv4 address (the common case, one a relayed request)
/// without the formatting machinery, which costs ~1,000 instructions.
fn ip_text(ip: std::net::IpAddr) -> String {
    let std::net::IpAddr::V4(v4) = ip else {
        return ip.to_string();
    };
    let mut text = String::with_capacity(15);
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            text.push('.');
        }
        if octet >= 100 {
            text.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            text.push(char::from(b'0' + octet / 10 % 10));
        }
        text.push(char::from(b'0' + octet % 10));
    }
    text
}

#[cfg(test)]
mod ip_text_tests {
    use super::ip_text;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    #[test]
    fn addresses_read_as_std_writes_them() {
        for octet in 0..=255u8 {
            for ip in [
                Ipv4Addr::new(octet, 0, 10, 255),
                Ipv4Addr::new(127, octet, 1, 99),
                Ipv4Addr::new(1, 100, octet, 9),
                Ipv4Addr::new(203, 0, 113, octet),
            ] {
                assert_eq!(ip_text(IpAddr::V4(ip)), ip.to_string());
            }
        }
        let v6 = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1));
        assert_eq!(ip_text(v6), "2001:db8::1");
    }
}
