//! The OpenAI-compatible adapter, shared by OpenAI and every vendor that speaks its protocol
//! (DeepSeek, Moonshot, Groq, Mistral, OpenRouter, Ollama, ...): `{base}/v1/...`,
//! `Authorization: Bearer <key>`, bodies passed through.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};

use crate::endpoint::Endpoint;
use crate::error::RelayError;
use crate::provider::{classify_openai, classify_transport, ChannelTarget, UpstreamFailure};
use crate::request::RelayRequest;

/// The OpenAI-compatible family. Stateless: everything channel-specific is in the
/// [`ChannelTarget`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenAiCompatible {
    /// The upstream has OpenAI's Responses API (`/v1/responses` is passed to it); else
    /// Responses clients come through the chat bridge (see [`crate::responses::bridged`]).
    pub responses: bool,
}

impl OpenAiCompatible {
    /// Every OpenAI endpoint, the Responses API where the upstream has it (the other protocols'
    /// clients come as chat requests, see [`crate::bridge`]).
    pub fn supports(&self, endpoint: Endpoint) -> bool {
        match endpoint {
            Endpoint::GenerateContent | Endpoint::Messages => false,
            Endpoint::Responses => self.responses,
            _ => true,
        }
    }

    /// See [`crate::provider::Provider::build`].
    pub fn build(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
        raw_body: Option<&[u8]>,
        content_type: Option<&str>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        if !self.supports(req.endpoint) {
            // Other protocols' clients are sent as chat requests (see `Provider::build`).
            return Err(RelayError::UnsupportedEndpoint(req.endpoint.path().into()));
        }
        let path = req.endpoint.path();
        let url = target.url(path, || {
            switchboard_domain::channel::vendor_path(target.channel_type, path)
        })?;

        post(
            client,
            url,
            auth_headers(target)?,
            target,
            req,
            raw_body,
            content_type,
        )
    }

    /// GET `{base}/v1/models`: the ids in `data[].id`, in the upstream's order.
    pub async fn list_models(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
    ) -> Result<Vec<String>, UpstreamFailure> {
        let v = get_json(client, target, "/v1/models").await?;
        data_ids(&v)
    }

    /// The one-api family's balance query, answered by OpenAI-compatible resellers (one-api,
    /// new-api and their kin): `hard_limit_usd` of `/v1/dashboard/billing/subscription` minus
    /// `total_usage` (cents) of `/v1/dashboard/billing/usage` over the last 100 days.
    pub async fn balance(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
    ) -> Result<f64, UpstreamFailure> {
        let sub = get_json(client, target, "/v1/dashboard/billing/subscription").await?;
        let limit = sub
            .get("hard_limit_usd")
            .and_then(Value::as_f64)
            .ok_or_else(|| invalid_answer("the subscription has no hard_limit_usd"))?;
        let today = unix_days_now();
        let path = format!(
            "/v1/dashboard/billing/usage?start_date={}&end_date={}",
            civil_date(today - 100),
            civil_date(today + 1)
        );
        let usage = get_json(client, target, &path).await?;
        let used_cents = usage
            .get("total_usage")
            .and_then(Value::as_f64)
            .ok_or_else(|| invalid_answer("the usage has no total_usage"))?;
        Ok(limit - used_cents / 100.0)
    }
}

/// POSTs the OpenAI-shaped request to `url` with `headers` (the credentials), the content type
/// and the channel's custom headers: JSON bodies through [`json_body`], multipart bodies as
/// they came. Non-streamed requests get the channel timeout.
pub(crate) fn post(
    client: &reqwest::Client,
    url: reqwest::Url,
    mut headers: HeaderMap,
    target: &ChannelTarget,
    req: &RelayRequest,
    raw_body: Option<&[u8]>,
    content_type: Option<&str>,
) -> Result<reqwest::RequestBuilder, RelayError> {
    let (body, content_type) = if req.endpoint.is_multipart() {
        let (Some(raw), Some(ct)) = (raw_body, content_type) else {
            return Err(RelayError::InvalidRequest(
                "a multipart request needs its body and content type".into(),
            ));
        };
        (raw.to_vec(), ct.to_owned())
    } else {
        (
            json_body(target, req, raw_body)?,
            "application/json".to_owned(),
        )
    };
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_str(&content_type)
            .map_err(|_| RelayError::InvalidRequest("invalid content type".into()))?,
    );
    apply_custom_headers(&mut headers, target)?;
    let mut builder = client.post(url).headers(headers).body(body);
    if !req.stream && !target.timeout.is_zero() {
        builder = builder.timeout(target.timeout);
    }
    Ok(builder)
}

/// A header carrying a channel key, marked sensitive (kept out of debug output).
/// Takes the text by value: a `String` handed over becomes the header without a copy (the
/// relay's `Bearer` header, once a request); a `&str` is copied once.
pub(crate) fn key_header(
    target: &ChannelTarget,
    value: impl Into<String>,
) -> Result<HeaderValue, RelayError> {
    let mut v = HeaderValue::try_from(value.into()).map_err(|_| {
        RelayError::Channel(format!("channel {} key is not a valid header", target.id))
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// `url` parsed, as a channel error when it is not a valid URL.
pub(crate) fn parse_url(url: &str) -> Result<reqwest::Url, RelayError> {
    reqwest::Url::parse(url)
        .map_err(|e| RelayError::Channel(format!("invalid upstream URL {url}: {e}")))
}

/// The JSON body to send: the client's bytes when nothing changes, else the body re-serialised
/// with the mapped model and `stream_options.include_usage` (without cloning the body).
pub(crate) fn json_body(
    target: &ChannelTarget,
    req: &RelayRequest,
    raw_body: Option<&[u8]>,
) -> Result<Vec<u8>, RelayError> {
    let obj = req.body.as_object().ok_or_else(|| {
        RelayError::InvalidRequest("the request body must be a JSON object".into())
    })?;
    let mapped = target.upstream_model(&req.model);
    let model = (mapped != req.model).then_some(mapped);
    let include_usage = req.stream
        && req.endpoint.wants_include_usage()
        && obj.get("stream") == Some(&Value::Bool(true))
        && obj
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            != Some(&Value::Bool(true));
    let voice = if req.endpoint == Endpoint::AudioSpeech {
        obj.get("voice")
            .and_then(Value::as_str)
            .and_then(|v| target.mapped_voice(v))
    } else {
        None
    };
    let params = target.custom_parameters();
    let switched = crate::switches::openai_fields(target, req.endpoint, obj);
    if model.is_none()
        && !include_usage
        && voice.is_none()
        && params.is_none()
        && switched.is_empty()
    {
        if let Some(raw) = raw_body {
            return Ok(raw.to_vec());
        }
    }
    json_bytes(&Patched {
        obj,
        model,
        include_usage,
        voice,
        params,
        switched: &switched,
    })
}

/// A request body's JSON bytes.
pub(crate) fn json_bytes<T: Serialize + ?Sized>(body: &T) -> Result<Vec<u8>, RelayError> {
    serde_json::to_vec(body)
        .map_err(|e| RelayError::InvalidRequest(format!("cannot serialise the request: {e}")))
}

/// A JSON object serialised with `model` replaced, `stream_options.include_usage` set, the TTS
/// `voice` replaced (the channel's voice mapping), the channel's provider switches written
/// ([`crate::switches::openai_fields`]: keys set to their whole new value) and the channel's
/// other parameters applied last: each top-level key set to its value (replacing the client's
/// and the switches'), `null` removing it; `model`, `stream` and `stream_options` are never
/// taken from them.
struct Patched<'a> {
    obj: &'a Map<String, Value>,
    model: Option<&'a str>,
    include_usage: bool,
    voice: Option<&'a str>,
    params: Option<&'a Map<String, Value>>,
    switched: &'a [(&'static str, Value)],
}

impl Patched<'_> {
    /// The channel's value for body key `k` (`Some(Null)`: leave the key out): its other
    /// parameter, else the value its switches give the key.
    fn param(&self, k: &str) -> Option<&Value> {
        if switchboard_domain::channel_settings::RESERVED_PARAMETERS.contains(&k) {
            return None;
        }
        self.params
            .and_then(|p| p.get(k))
            .or_else(|| self.switched.iter().find(|(s, _)| *s == k).map(|(_, v)| v))
    }
}

impl Serialize for Patched<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let mut wrote_model = false;
        let mut wrote_options = false;
        for (k, v) in self.obj {
            if let Some(p) = self.param(k) {
                if !p.is_null() {
                    map.serialize_entry(k, p)?;
                }
                continue;
            }
            match (k.as_str(), self.model) {
                ("model", Some(m)) => {
                    map.serialize_entry(k, m)?;
                    wrote_model = true;
                }
                ("stream_options", _) if self.include_usage => {
                    let mut options = v.as_object().cloned().unwrap_or_default();
                    options.insert("include_usage".into(), Value::Bool(true));
                    map.serialize_entry(k, &options)?;
                    wrote_options = true;
                }
                ("voice", _) if self.voice.is_some() => map.serialize_entry(k, &self.voice)?,
                _ => map.serialize_entry(k, v)?,
            }
        }
        if let (Some(m), false) = (self.model, wrote_model) {
            map.serialize_entry("model", m)?;
        }
        if self.include_usage && !wrote_options {
            map.serialize_entry(
                "stream_options",
                &serde_json::json!({"include_usage": true}),
            )?;
        }
        for (k, p) in self.params.into_iter().flatten() {
            if !p.is_null() && !self.obj.contains_key(k) && self.param(k).is_some() {
                map.serialize_entry(k, p)?;
            }
        }
        for (k, v) in self.switched {
            let set_by_params = self.params.is_some_and(|p| p.contains_key(*k));
            if !self.obj.contains_key(*k) && !set_by_params {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// `Authorization: Bearer <key>` (none for an empty key, e.g. a local Ollama).
pub(crate) fn auth_headers(target: &ChannelTarget) -> Result<HeaderMap, RelayError> {
    let mut headers = HeaderMap::new();
    let key = target.key.trim();
    if !key.is_empty() {
        // Without `format!` (its machinery costs more than the copy), and handed over whole.
        let mut bearer = String::with_capacity("Bearer ".len() + key.len());
        bearer.push_str("Bearer ");
        bearer.push_str(key);
        headers.insert(AUTHORIZATION, key_header(target, bearer)?);
    }
    Ok(headers)
}

/// The channel's custom headers, replacing same-named ones.
pub(crate) fn apply_custom_headers(
    headers: &mut HeaderMap,
    target: &ChannelTarget,
) -> Result<(), RelayError> {
    for (name, value) in &target.custom_headers {
        let bad = || {
            RelayError::Channel(format!(
                "channel {} custom header {name:?} is invalid",
                target.id
            ))
        };
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| bad())?;
        let value = HeaderValue::from_str(value.trim()).map_err(|_| bad())?;
        headers.insert(name, value);
    }
    Ok(())
}

/// GET `{base}{path}` with the channel's credentials and headers, as JSON. Bounded by the
/// channel timeout, or 30 s when it has none (these are management calls).
async fn get_json(
    client: &reqwest::Client,
    target: &ChannelTarget,
    path: &str,
) -> Result<Value, UpstreamFailure> {
    let base = target.effective_base_url().map_err(config_failure)?;
    let headers = auth_headers(target).map_err(config_failure)?;
    get_json_at(
        client,
        target,
        &format!(
            "{base}{}",
            switchboard_domain::channel::vendor_path(target.channel_type, path)
        ),
        headers,
        classify_openai,
    )
    .await
}

/// A channel configuration error as a failure of a management call.
pub(crate) fn config_failure(e: RelayError) -> UpstreamFailure {
    UpstreamFailure {
        status: 500,
        message: e.to_string(),
        code: Some(e.code().to_owned()),
        retryable: false,
        auto_disable: false,
        kind: None,
        retry_after: None,
        gateway: false,
    }
}

/// GET `url` with `headers` plus the channel's custom headers, as JSON; a non-2xx answer is
/// classified by `classify`. Bounded by the channel timeout, or 30 s when it has none.
pub(crate) async fn get_json_at(
    client: &reqwest::Client,
    target: &ChannelTarget,
    url: &str,
    mut headers: HeaderMap,
    classify: fn(u16, &[u8], &[&str]) -> UpstreamFailure,
) -> Result<Value, UpstreamFailure> {
    apply_custom_headers(&mut headers, target).map_err(config_failure)?;
    let timeout = if target.timeout.is_zero() {
        std::time::Duration::from_secs(30)
    } else {
        target.timeout
    };
    let resp = client
        .get(url)
        .headers(headers)
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| classify_transport(&e))?;
    let status = resp.status().as_u16();
    let body = resp.bytes().await.map_err(|e| classify_transport(&e))?;
    if !(200..300).contains(&status) {
        return Err(classify(status, &body, &[]));
    }
    serde_json::from_slice(&body).map_err(|_| invalid_answer("the answer is not JSON"))
}

/// The `id`s of `data[]` (OpenAI, Azure and Anthropic model lists).
pub(crate) fn data_ids(v: &Value) -> Result<Vec<String>, UpstreamFailure> {
    let ids: Option<Vec<String>> = v.get("data").and_then(Value::as_array).map(|data| {
        data.iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str))
            .map(str::to_owned)
            .collect()
    });
    ids.ok_or_else(|| invalid_answer("the model list has no data array"))
}

pub(crate) fn invalid_answer(what: &str) -> UpstreamFailure {
    UpstreamFailure {
        status: 502,
        message: format!("unexpected upstream answer: {what}"),
        code: Some("upstream_invalid_response".into()),
        retryable: false,
        auto_disable: false,
        kind: None,
        retry_after: None,
        gateway: false,
    }
}

fn unix_days_now() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    (secs / 86_400) as i64
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01 (proleptic Gregorian, H. Hinnant's
/// civil_from_days).
pub(crate) fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_goes_as_a_sensitive_bearer_header_and_a_broken_key_is_refused() {
        let mut t = ChannelTarget {
            key: " sk-upstream \n".into(),
            ..ChannelTarget::default()
        };
        let h = auth_headers(&t).unwrap();
        assert_eq!(h[AUTHORIZATION], "Bearer sk-upstream");
        assert!(h[AUTHORIZATION].is_sensitive());
        t.key = "sk-a\nb".into();
        assert!(
            matches!(auth_headers(&t), Err(RelayError::Channel(m)) if m.contains("not a valid header"))
        );
        t.key = "  ".into();
        assert!(auth_headers(&t).unwrap().is_empty(), "no key: no header");
    }

    fn body_on(target: &ChannelTarget, endpoint: Endpoint, raw: &str) -> Value {
        let req = RelayRequest::parse(endpoint, raw.as_bytes()).unwrap();
        let bytes = json_body(target, &req, Some(raw.as_bytes())).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn voice_mapping_and_other_parameters_rewrite_the_body() {
        let mut t = ChannelTarget::default();
        let speech = r#"{"model":"tts-1","input":"hi","voice":"alloy","speed":1.5}"#;
        assert_eq!(
            json_body(
                &t,
                &RelayRequest::parse(Endpoint::AudioSpeech, speech.as_bytes()).unwrap(),
                Some(speech.as_bytes())
            )
            .unwrap(),
            speech.as_bytes(),
            "nothing to change: the client's bytes"
        );
        t.config.insert(
            "voice_mapping".into(),
            serde_json::json!({"alloy": "zh-CN-XiaoxiaoNeural"}),
        );
        let v = body_on(&t, Endpoint::AudioSpeech, speech);
        assert_eq!(v["voice"], "zh-CN-XiaoxiaoNeural");
        assert_eq!(v["speed"], 1.5);
        let v = body_on(&t, Endpoint::AudioSpeech, &speech.replace("alloy", "echo"));
        assert_eq!(v["voice"], "echo", "unmapped voices pass");
        // The mapping is a speech setting: a chat body with a `voice` field is left alone.
        let chat = r#"{"model":"m","messages":[],"voice":"alloy"}"#;
        assert_eq!(
            body_on(&t, Endpoint::ChatCompletions, chat)["voice"],
            "alloy"
        );

        t.config.insert(
            "custom_parameter".into(),
            serde_json::json!({"temperature": 0.1, "user": null, "safe_mode": {"on": true}, "model": "x", "stream": false}),
        );
        let chat = r#"{"model":"m","messages":[],"temperature":1.2,"user":"u1","stream":true}"#;
        let v = body_on(&t, Endpoint::ChatCompletions, chat);
        assert_eq!(v["temperature"], 0.1, "replaces the client's value");
        assert!(v.get("user").is_none(), "null removes the key");
        assert_eq!(v["safe_mode"], serde_json::json!({"on": true}), "added");
        assert_eq!(
            (v["model"].as_str(), v["stream"].as_bool()),
            (Some("m"), Some(true))
        );
        assert_eq!(v["stream_options"]["include_usage"], true);
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(civil_date(20_819), "2027-01-01");
        assert_eq!(civil_date(-1), "1969-12-31");
    }
}
