//! Bedrock's framing: requests must carry a SigV4 `Authorization` and `x-amz-date` (the
//! signature itself is not checked: the relay's unit tests check it against AWS's published
//! example); streams are binary event stream frames (prelude with lengths and CRC-32, string
//! headers, payload, message CRC-32).

use actix_web::HttpRequest;

/// Whether the request is SigV4-signed.
pub(super) fn signed(req: &HttpRequest) -> bool {
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    auth.starts_with("AWS4-HMAC-SHA256 Credential=")
        && auth.contains(", SignedHeaders=")
        && auth.contains(", Signature=")
        && req.headers().contains_key("x-amz-date")
}

/// The model id of a path segment (`%3A` -> `:`).
pub(super) fn decode_model(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// One event stream frame with string headers.
pub(super) fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (name, value) in headers {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(7); // string
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value.as_bytes());
    }
    let total = (16 + h.len() + payload.len()) as u32;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let prelude = crc32(&out);
    out.extend_from_slice(&prelude.to_be_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_and_checksums() {
        assert_eq!(
            decode_model("anthropic.claude-v2%3A1"),
            "anthropic.claude-v2:1"
        );
        assert_eq!(decode_model("plain"), "plain");
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(frame(&[], b"").len(), 16);
    }
}
