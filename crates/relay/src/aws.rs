//! AWS plumbing for Bedrock: Signature Version 4 request signing and the `vnd.amazon.eventstream`
//! binary framing of streamed answers. Written from AWS's documentation ("Create a signed AWS
//! API request", "Event stream encoding") and tested against its published example.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// Credentials and scope of one signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key: String,
    pub secret_key: String,
    /// `x-amz-security-token` for temporary credentials.
    pub session_token: Option<String>,
    pub region: String,
}

/// What to add to the request: `Authorization` and the headers it signed besides `host` and
/// the caller's (`x-amz-date`, and `x-amz-security-token` for temporary credentials).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    pub authorization: String,
    pub amz_date: String,
    pub security_token: Option<String>,
}

/// URI-encodes `s` as SigV4 wants: unreserved characters (`A-Z a-z 0-9 - . _ ~`) kept,
/// everything else as `%XY` (upper-case hex).
pub fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC accepts keys of any length.
    let mut m = <HmacSha256 as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// The canonical URI of an (already percent-encoded) path for services other than S3: every
/// segment encoded once more.
fn canonical_uri(path: &str) -> String {
    if path.is_empty() {
        return "/".into();
    }
    path.split('/')
        .map(uri_encode)
        .collect::<Vec<_>>()
        .join("/")
}

fn canonical_query(url: &reqwest::Url) -> String {
    let mut pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (uri_encode(&k), uri_encode(&v)))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// `host[:port]` as the `host` header carries it.
fn host_header(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    }
}

/// Signs a request (`AWS4-HMAC-SHA256`) made at `amz_date` (`YYYYMMDDTHHMMSSZ`): `headers`
/// are the other headers to sign (lower-case names), `host` and `x-amz-date` (and the session
/// token) are added.
pub fn sign(
    creds: &Credentials,
    service: &str,
    method: &str,
    url: &reqwest::Url,
    headers: &[(&str, &str)],
    payload: &[u8],
    amz_date: &str,
) -> Signed {
    let date = &amz_date[..amz_date.len().min(8)];
    let host = host_header(url);
    let mut signed: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| {
            (
                k.to_ascii_lowercase(),
                v.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect();
    signed.push(("host".into(), host));
    signed.push(("x-amz-date".into(), amz_date.to_owned()));
    if let Some(t) = &creds.session_token {
        signed.push(("x-amz-security-token".into(), t.clone()));
    }
    signed.sort();
    let canonical_headers: String = signed.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed_headers = signed
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let canonical_request = format!(
        "{method}\n{}\n{}\n{canonical_headers}\n{signed_headers}\n{}",
        canonical_uri(url.path()),
        canonical_query(url),
        sha256_hex(payload)
    );
    let scope = format!("{date}/{}/{service}/aws4_request", creds.region);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        sha256_hex(canonical_request.as_bytes())
    );
    let k_date = hmac(
        format!("AWS4{}", creds.secret_key).as_bytes(),
        date.as_bytes(),
    );
    let k_region = hmac(&k_date, creds.region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    let k_signing = hmac(&k_service, b"aws4_request");
    let signature = hex::encode(hmac(&k_signing, string_to_sign.as_bytes()));
    Signed {
        authorization: format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
            creds.access_key
        ),
        amz_date: amz_date.to_owned(),
        security_token: creds.session_token.clone(),
    }
}

/// `YYYYMMDDTHHMMSSZ` for seconds since the Unix epoch.
pub fn amz_date(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let rem = unix_secs % 86_400;
    let date = crate::providers::openai::civil_date(days).replace('-', "");
    format!(
        "{date}T{:02}{:02}{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

// ---------------------------------------------------------------------------------------------
// Event stream framing

/// CRC-32 (IEEE 802.3, reflected, as zlib's), which event stream frames carry.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// One decoded frame: its string headers and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub headers: Vec<(String, String)>,
    pub payload: Vec<u8>,
}

impl Frame {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Encodes a frame with string headers (for tests and mocks).
    pub fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
        let mut h = Vec::new();
        for (k, v) in headers {
            h.push(k.len() as u8);
            h.extend_from_slice(k.as_bytes());
            h.push(7);
            h.extend_from_slice(&(v.len() as u16).to_be_bytes());
            h.extend_from_slice(v.as_bytes());
        }
        let total = 12 + h.len() + payload.len() + 4;
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(&(total as u32).to_be_bytes());
        out.extend_from_slice(&(h.len() as u32).to_be_bytes());
        let prelude_crc = crc32(&out);
        out.extend_from_slice(&prelude_crc.to_be_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(payload);
        let crc = crc32(&out);
        out.extend_from_slice(&crc.to_be_bytes());
        out
    }
}

/// Largest frame accepted (AWS limits messages to 16 MiB).
const MAX_FRAME: usize = 16 << 20;

/// Reassembles frames from chunks split anywhere.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
}

impl FrameReader {
    /// The frames completed by `chunk`; `Err` for a corrupt stream (bad length or checksum),
    /// the frames before the corrupt one being in `out` all the same.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Frame>) -> Result<(), String> {
        self.buf.extend_from_slice(chunk);
        loop {
            if self.buf.len() < 12 {
                return Ok(());
            }
            let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            let total = be(&self.buf[0..4]) as usize;
            let headers_len = be(&self.buf[4..8]) as usize;
            if be(&self.buf[8..12]) != crc32(&self.buf[0..8]) {
                return Err("event stream prelude checksum mismatch".into());
            }
            if !(16..=MAX_FRAME).contains(&total) || headers_len > total - 16 {
                return Err("invalid event stream frame length".into());
            }
            if self.buf.len() < total {
                return Ok(());
            }
            let frame: Vec<u8> = self.buf.drain(..total).collect();
            if be(&frame[total - 4..]) != crc32(&frame[..total - 4]) {
                return Err("event stream message checksum mismatch".into());
            }
            let headers = parse_headers(&frame[12..12 + headers_len])?;
            out.push(Frame {
                headers,
                payload: frame[12 + headers_len..total - 4].to_vec(),
            });
        }
    }
}

/// The string headers of a frame (other value types are skipped).
fn parse_headers(mut b: &[u8]) -> Result<Vec<(String, String)>, String> {
    let bad = || "invalid event stream header".to_owned();
    let mut out = Vec::new();
    while !b.is_empty() {
        let n = usize::from(b[0]);
        let name = b.get(1..1 + n).ok_or_else(bad)?;
        let kind = *b.get(1 + n).ok_or_else(bad)?;
        b = &b[2 + n..];
        let fixed = match kind {
            0 | 1 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(4),
            5 | 8 => Some(8),
            9 => Some(16),
            6 | 7 => None,
            _ => return Err(bad()),
        };
        match fixed {
            Some(len) => b = b.get(len..).ok_or_else(bad)?,
            None => {
                let len = usize::from(u16::from_be_bytes([
                    *b.first().ok_or_else(bad)?,
                    *b.get(1).ok_or_else(bad)?,
                ]));
                let value = b.get(2..2 + len).ok_or_else(bad)?;
                if kind == 7 {
                    out.push((
                        String::from_utf8_lossy(name).into_owned(),
                        String::from_utf8_lossy(value).into_owned(),
                    ));
                }
                b = &b[2 + len..];
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's published SigV4 example (IAM ListUsers, 2015-08-30), whose canonical request hash
    /// is f536975d..., signing key c4afb1cc... and signature 5d672d79....
    #[test]
    fn signs_the_published_example() {
        let creds = Credentials {
            access_key: "AKIDEXAMPLE".into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
            region: "us-east-1".into(),
        };
        let url =
            reqwest::Url::parse("https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08")
                .unwrap();
        let s = sign(
            &creds,
            "iam",
            "GET",
            &url,
            &[(
                "content-type",
                "application/x-www-form-urlencoded; charset=utf-8",
            )],
            b"",
            "20150830T123600Z",
        );
        assert_eq!(
            s.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, \
             Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        );
    }

    #[test]
    fn paths_are_encoded_twice() {
        assert_eq!(
            canonical_uri("/model/anthropic.claude-v2%3A1/invoke"),
            "/model/anthropic.claude-v2%253A1/invoke"
        );
        assert_eq!(uri_encode("a b:c~"), "a%20b%3Ac~");
        assert_eq!(amz_date(1_440_938_160), "20150830T123600Z");
    }

    #[test]
    fn frames_round_trip_at_any_split() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let mut bytes = Frame::encode(&[(":event-type", "chunk")], br#"{"bytes":"e30="}"#);
        bytes.extend(Frame::encode(&[(":message-type", "event")], b""));
        for split in 0..bytes.len() {
            let mut r = FrameReader::default();
            let mut out = Vec::new();
            r.feed(&bytes[..split], &mut out).unwrap();
            r.feed(&bytes[split..], &mut out).unwrap();
            assert_eq!(out.len(), 2, "split at {split}");
            assert_eq!(out[0].header(":event-type"), Some("chunk"));
            assert_eq!(out[0].payload, br#"{"bytes":"e30="}"#);
            assert!(out[1].payload.is_empty());
        }
        let mut corrupt = bytes.clone();
        corrupt[20] ^= 1;
        assert!(FrameReader::default()
            .feed(&corrupt, &mut Vec::new())
            .is_err());
    }
}
