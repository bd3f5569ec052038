//! Documents fetched from operator-configured servers that are not model upstreams (the remote
//! price list). Bounded in time and size; the URL never appears in an error message, since it
//! may carry a secret in its query.

use std::time::Duration;

/// Largest document accepted (a full price list is well under 1 MiB).
pub const MAX_DOCUMENT: usize = 8 << 20;

/// GETs `url` and parses the answer as JSON. Errors are short sentences for the operator.
pub async fn fetch_json(
    client: &reqwest::Client,
    url: &str,
    timeout: Duration,
) -> Result<serde_json::Value, String> {
    let parsed = reqwest::Url::parse(url).map_err(|_| "the URL is not valid".to_owned())?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("the URL must start with http:// or https://".to_owned());
    }
    let mut resp = client
        .get(parsed)
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| {
            if e.is_timeout() {
                "the server did not answer in time".to_owned()
            } else {
                "could not reach the server".to_owned()
            }
        })?;
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
