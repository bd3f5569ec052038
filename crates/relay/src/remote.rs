//! Documents fetched from operator-configured servers that are not model upstreams (the remote
//! price list). Bounded in time and size; the URL never appears in an error message, since it
//! may carry a secret in its query.
//!
//! Unless private destinations are allowed, the fetch goes through the outbound URL policy
//! ([`crate::outbound`]): public addresses only, checked on the address connected to. A refused
//! destination, a closed port, an unreachable host and a timeout all give the same
//! [`UNREACHABLE`] message, so the fetch cannot be used to map the server's network.

use std::time::Duration;

use crate::client::ClientPool;
use crate::outbound::refused_before_lookup;

/// Largest document accepted (a full price list is well under 1 MiB).
pub const MAX_DOCUMENT: usize = 8 << 20;

/// The one message for a destination that is refused, unreachable or silent.
pub const UNREACHABLE: &str = "could not reach the server";

/// GETs `url` and parses the answer as JSON: through the public-only client of `pool`, or when
/// `allow_private`, through its ordinary client (environment proxies apply). Errors are short
/// sentences for the operator.
pub async fn fetch_json(
    pool: &ClientPool,
    url: &str,
    timeout: Duration,
    allow_private: bool,
) -> Result<serde_json::Value, String> {
    let parsed = reqwest::Url::parse(url).map_err(|_| "the URL is not valid".to_owned())?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("the URL must start with http:// or https://".to_owned());
    }
    let client = if allow_private {
        pool.get(None)
    } else {
        if refused_before_lookup(&parsed) {
            return Err(UNREACHABLE.to_owned());
        }
        pool.public_only()
    }
    .map_err(|_| UNREACHABLE.to_owned())?;
    let mut resp = client
        .get(parsed)
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(timeout)
        .send()
        .await
        .map_err(|_| UNREACHABLE.to_owned())?;
    if !resp.status().is_success() {
        return Err(format!(
            "the server answered HTTP {}",
            resp.status().as_u16()
        ));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|_| "the answer was cut off".to_owned())?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(format!(
                "the answer is larger than {} MiB",
                MAX_DOCUMENT >> 20
            ));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("the answer is not JSON: {e}"))
}
