//! What the relay reads from a client request. The body stays a [`serde_json::Value`] so that
//! fields the relay does not know are passed through untouched.

use serde_json::Value;

use crate::endpoint::Endpoint;
use crate::error::RelayError;

/// A parsed client request. Only `model`, `stream` and the output limit are read; everything
/// else stays in `body` as the client sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayRequest {
    pub endpoint: Endpoint,
    /// The client's JSON object; `Value::Null` for multipart requests (their raw bytes are
    /// forwarded instead, see [`crate::provider::Provider::build`]).
    pub body: Value,
    /// The model the client asked for (before channel model mapping).
    pub model: String,
    pub stream: bool,
    /// The largest of `max_tokens`, `max_completion_tokens` and the Responses API's
    /// `max_output_tokens` that the client set: upstreams differ in the one they read (vLLM
    /// prefers `max_completion_tokens`, OpenAI's Responses API reads `max_output_tokens`), so
    /// the reservation covers the largest.
    pub max_tokens: Option<i64>,
    /// The client's `anthropic-beta` header (comma-separated flags), for the channels that
    /// speak Anthropic's protocol (see [`crate::switches::beta_flags`]).
    pub anthropic_beta: Option<String>,
    /// The chat request of a client of another protocol, made once for all the channels tried,
    /// the answer and the stream ([`crate::bridge::Bridge::chat_for`]).
    pub bridged: std::sync::OnceLock<Box<RelayRequest>>,
}

/// OpenAI's reasoning models (`o1`, `o3`, `o4`, `gpt-5` and their variants), which take
/// `max_completion_tokens` and not `max_tokens`.
pub fn is_openai_reasoning_model(model: &str) -> bool {
    ["o1", "o3", "o4", "gpt-5"].iter().any(|p| {
        model.starts_with(p)
            && model[p.len()..]
                .chars()
                .next()
                .is_none_or(|c| c == '-' || c == '.')
    })
}

/// OpenAI's chat models without reasoning (`gpt-4*`, `gpt-3.5*`, `chatgpt-*`), which refuse
/// `reasoning_effort` with 400.
pub fn refuses_reasoning_effort(model: &str) -> bool {
    ["gpt-4", "gpt-3.5", "chatgpt-"]
        .iter()
        .any(|p| model.starts_with(p))
}

/// A request body as a JSON document ([`crate::wire::from_json_bytes`]).
fn json_body(bytes: &[u8]) -> Result<Value, RelayError> {
    crate::wire::from_json_bytes(bytes)
        .map_err(|e| RelayError::InvalidRequest(format!("the request body is not valid JSON: {e}")))
}

impl RelayRequest {
    /// Parses a JSON request body. The body must be a JSON object; `model` must be a non-empty
    /// string except where the endpoint has an OpenAI default (moderations:
    /// `omni-moderation-latest`, image generations: `dall-e-2`); `stream` must be a boolean when
    /// present.
    pub fn parse(endpoint: Endpoint, bytes: &[u8]) -> Result<Self, RelayError> {
        let body = json_body(bytes)?;
        let obj = body.as_object().ok_or_else(|| {
            RelayError::InvalidRequest("the request body must be a JSON object".into())
        })?;

        let model = match obj.get("model") {
            Some(Value::String(m)) if !m.trim().is_empty() => m.clone(),
            None | Some(Value::Null) => endpoint
                .default_model()
                .map(str::to_owned)
                .ok_or(RelayError::MissingModel)?,
            Some(Value::String(_)) => match endpoint.default_model() {
                Some(d) => d.to_owned(),
                None => return Err(RelayError::MissingModel),
            },
            Some(_) => return Err(RelayError::InvalidRequest("model must be a string".into())),
        };

        let stream = match obj.get("stream") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(RelayError::InvalidRequest(
                    "stream must be a boolean".into(),
                ))
            }
        };

        // The first field set used to win: `{"max_tokens": 1, "max_completion_tokens": 100000}`
        // reserved one output token for an answer an upstream reading the other field let grow
        // to 100000 (found by the output-limit property of tests/fuzz.rs).
        let mut max_tokens: Option<i64> = None;
        for field in LIMIT_FIELDS {
            match obj.get(field) {
                None | Some(Value::Null) => continue,
                Some(v) => {
                    let n = as_integer(v).ok_or_else(|| {
                        RelayError::InvalidRequest(format!("{field} must be an integer"))
                    })?;
                    max_tokens = Some(max_tokens.map_or(n, |m| m.max(n)));
                }
            }
        }

        Ok(RelayRequest {
            endpoint,
            body,
            model,
            stream,
            max_tokens,
            anthropic_beta: None,
            bridged: Default::default(),
        })
    }

    /// Lowers the request's output limit to `tokens` (the relay's balance rule: the answer may
    /// not cost more than its reservation), in the field the endpoint's protocol reads: the one
    /// the client used, else `max_completion_tokens` for OpenAI's reasoning models and
    /// `max_tokens` for other chat models, `max_output_tokens` (Responses),
    /// `generationConfig.maxOutputTokens` (Gemini). The other output-limit fields the client set
    /// higher are lowered too, whichever one the upstream reads. Adapters that translate read
    /// [`RelayRequest::max_tokens`], which is set too. A limit the client set lower stays.
    pub fn limit_output(&mut self, tokens: i64) {
        let tokens = tokens.max(1);
        if self.max_tokens.is_some_and(|m| m <= tokens) {
            return;
        }
        self.max_tokens = Some(tokens);
        let Some(obj) = self.body.as_object_mut() else {
            return;
        };
        let field = match self.endpoint {
            Endpoint::Responses => "max_output_tokens",
            Endpoint::GenerateContent => {
                let config = obj
                    .entry("generationConfig")
                    .or_insert_with(|| Value::Object(serde_json::Map::new()));
                if let Some(c) = config.as_object_mut() {
                    c.insert("maxOutputTokens".into(), Value::from(tokens));
                }
                return;
            }
            Endpoint::ChatCompletions => {
                let reasoning = is_openai_reasoning_model(&self.model);
                if obj.contains_key("max_completion_tokens")
                    || (!obj.contains_key("max_tokens") && reasoning)
                {
                    "max_completion_tokens"
                } else {
                    "max_tokens"
                }
            }
            _ => "max_tokens",
        };
        obj.insert(field.into(), Value::from(tokens));
        for other in LIMIT_FIELDS {
            if obj
                .get(other)
                .and_then(as_integer)
                .is_some_and(|n| n > tokens)
            {
                obj.insert(other.into(), Value::from(tokens));
            }
        }
    }

    /// Parses a Gemini `generateContent` body for `model` (from the path; a `models/` prefix is
    /// dropped). `stream` is the method (`streamGenerateContent`); the output limit is
    /// `generationConfig.maxOutputTokens`.
    pub fn parse_gemini(model: &str, stream: bool, bytes: &[u8]) -> Result<Self, RelayError> {
        let body = json_body(bytes)?;
        if !body.is_object() {
            return Err(RelayError::InvalidRequest(
                "the request body must be a JSON object".into(),
            ));
        }
        let model = model.trim();
        let model = model.strip_prefix("models/").unwrap_or(model);
        if model.is_empty() {
            return Err(RelayError::MissingModel);
        }
        let max_tokens = match body.pointer("/generationConfig/maxOutputTokens") {
            None | Some(Value::Null) => None,
            Some(v) => Some(as_integer(v).ok_or_else(|| {
                RelayError::InvalidRequest(
                    "generationConfig.maxOutputTokens must be an integer".into(),
                )
            })?),
        };
        Ok(RelayRequest {
            endpoint: Endpoint::GenerateContent,
            body,
            model: model.to_owned(),
            stream,
            max_tokens,
            anthropic_beta: None,
            bridged: Default::default(),
        })
    }

    /// Builds the request for a multipart endpoint (audio transcriptions and translations) from
    /// its form fields `model` (required) and `stream` (`"true"` streams). `body` is
    /// `Value::Null`: the raw bytes are forwarded.
    pub fn parse_multipart(
        endpoint: Endpoint,
        content_type: &str,
        bytes: &[u8],
    ) -> Result<Self, RelayError> {
        let boundary = multipart_boundary(content_type)?;
        let model = find_form_field(&boundary, bytes, "model")?
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty())
            .ok_or(RelayError::MissingModel)?;
        let stream = find_form_field(&boundary, bytes, "stream")?
            .is_some_and(|s| s.trim().eq_ignore_ascii_case("true"));
        Ok(RelayRequest {
            endpoint,
            body: Value::Null,
            model,
            stream,
            max_tokens: None,
            anthropic_beta: None,
            bridged: Default::default(),
        })
    }
}

/// The output-limit fields of the OpenAI protocols (chat, completions, Responses) and
/// Anthropic's Messages.
const LIMIT_FIELDS: [&str; 3] = ["max_tokens", "max_completion_tokens", "max_output_tokens"];

fn as_integer(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        _ => None,
    }
}

/// The `model` form field of a `multipart/form-data` body (audio transcriptions and
/// translations).
pub fn parse_multipart_model(content_type: &str, bytes: &[u8]) -> Result<String, RelayError> {
    let boundary = multipart_boundary(content_type)?;
    find_form_field(&boundary, bytes, "model")?
        .map(|m| m.trim().to_owned())
        .filter(|m| !m.is_empty())
        .ok_or(RelayError::MissingModel)
}

/// The boundary parameter of a `multipart/form-data` content type.
fn multipart_boundary(content_type: &str) -> Result<String, RelayError> {
    let mut parts = content_type.split(';');
    let mime = parts.next().unwrap_or_default().trim();
    if !mime.eq_ignore_ascii_case("multipart/form-data") {
        return Err(RelayError::InvalidRequest(
            "the request must be multipart/form-data".into(),
        ));
    }
    for param in parts {
        if let Some((k, v)) = param.split_once('=') {
            if k.trim().eq_ignore_ascii_case("boundary") {
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(v);
                if !v.is_empty() && v.len() <= 200 {
                    return Ok(v.to_owned());
                }
            }
        }
    }
    Err(RelayError::InvalidRequest(
        "the multipart content type has no boundary".into(),
    ))
}

/// Scans the parts of a multipart body for the first text field called `name`. Parts are
/// skipped without copying (file parts can be tens of megabytes). Header lines may end in CRLF
/// (the standard) or a bare LF.
fn find_form_field(boundary: &str, body: &[u8], name: &str) -> Result<Option<String>, RelayError> {
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let malformed = || RelayError::InvalidRequest("malformed multipart body".into());

    let mut pos = find(body, delimiter, 0).ok_or_else(malformed)?;
    loop {
        pos += delimiter.len();
        let rest = &body[pos..];
        if rest.starts_with(b"--") {
            return Ok(None); // closing delimiter
        }
        // The rest of the delimiter line (optional transport padding, then the line break).
        let line_end = find(body, b"\n", pos).ok_or_else(malformed)?;
        let headers_start = line_end + 1;
        let (headers_end, content_start) = match find(body, b"\r\n\r\n", headers_start) {
            Some(i) if find(&body[headers_start..i], b"\n\n", 0).is_none() => (i, i + 4),
            _ => {
                let i = find(body, b"\n\n", headers_start).ok_or_else(malformed)?;
                (i, i + 2)
            }
        };
        let next = find(body, delimiter, content_start).ok_or_else(malformed)?;
        let headers = String::from_utf8_lossy(&body[headers_start..headers_end]);
        if part_name(&headers).as_deref() == Some(name) {
            let mut content = &body[content_start..next];
            content = content.strip_suffix(b"\n").unwrap_or(content);
            content = content.strip_suffix(b"\r").unwrap_or(content);
            let value = std::str::from_utf8(content).map_err(|_| {
                RelayError::InvalidRequest(format!("the form field {name} is not UTF-8 text"))
            })?;
            return Ok(Some(value.to_owned()));
        }
        pos = next;
    }
}

/// The `name` parameter of a part's `Content-Disposition: form-data` header.
fn part_name(headers: &str) -> Option<String> {
    for line in headers.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case("content-disposition") {
            continue;
        }
        for param in value.split(';').skip(1) {
            let Some((k, v)) = param.split_once('=') else {
                continue;
            };
            if k.trim().eq_ignore_ascii_case("name") {
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(v);
                return Some(v.to_owned());
            }
        }
    }
    None
}

/// Position of `needle` in `haystack` at or after `from`.
fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let first = *needle.first()?;
    let mut i = from;
    while i + needle.len() <= haystack.len() {
        let off = haystack[i..=haystack.len() - needle.len()]
            .iter()
            .position(|&b| b == first)?;
        i += off;
        if &haystack[i..i + needle.len()] == needle {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(endpoint: Endpoint, v: Value) -> Result<RelayRequest, RelayError> {
        RelayRequest::parse(endpoint, v.to_string().as_bytes())
    }

    #[test]
    fn bodies_are_read_as_utf8_and_anything_else_is_refused_as_json() {
        let body =
            r#"{"model":"gpt-4o","messages":[{"role":"user","content":"café 你好 \u00e9"}]}"#;
        let r = RelayRequest::parse(Endpoint::ChatCompletions, body.as_bytes()).unwrap();
        assert_eq!(r.body["messages"][0]["content"], "café 你好 é");
        // Latin-1 bytes in a string: not UTF-8, so not JSON.
        let latin1 = b"{\"model\":\"gpt-4o\",\"messages\":[{\"content\":\"caf\xe9\"}]}";
        for parsed in [
            RelayRequest::parse(Endpoint::ChatCompletions, latin1),
            RelayRequest::parse_gemini("m", false, latin1),
        ] {
            match parsed {
                Err(RelayError::InvalidRequest(m)) => assert!(
                    m.starts_with("the request body is not valid JSON: ") && m.contains("column"),
                    "{m}"
                ),
                other => panic!("{:?}", other.map(|r| r.body)),
            }
        }
    }

    #[test]
    fn parses_gemini_bodies() {
        let body = json!({"contents": [], "generationConfig": {"maxOutputTokens": 64}});
        let r =
            RelayRequest::parse_gemini("models/gemini-2.5-pro", true, body.to_string().as_bytes())
                .unwrap();
        assert_eq!(r.endpoint, Endpoint::GenerateContent);
        assert_eq!(
            (r.model.as_str(), r.stream, r.max_tokens),
            ("gemini-2.5-pro", true, Some(64))
        );
        assert_eq!(r.body, body);
        assert!(RelayRequest::parse_gemini("m", false, b"[]").is_err());
        assert!(RelayRequest::parse_gemini("", false, b"{}").is_err());
        let bad = json!({"generationConfig": {"maxOutputTokens": "many"}});
        assert!(RelayRequest::parse_gemini("m", false, bad.to_string().as_bytes()).is_err());
    }

    #[test]
    fn the_output_limit_is_lowered_in_the_protocol_s_own_field() {
        let mut r = RelayRequest::parse(
            Endpoint::ChatCompletions,
            json!({"model": "gpt-4o", "messages": []})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
        r.limit_output(300);
        assert_eq!(
            (r.body["max_tokens"].as_i64(), r.max_tokens),
            (Some(300), Some(300))
        );
        r.limit_output(500);
        assert_eq!(r.max_tokens, Some(300), "a lower limit stays");
        let mut r = RelayRequest::parse(
            Endpoint::ChatCompletions,
            json!({"model": "o3-mini", "messages": []})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
        r.limit_output(10);
        assert_eq!(r.body["max_completion_tokens"], 10);
        assert!(r.body.get("max_tokens").is_none());
        let mut r = RelayRequest::parse(
            Endpoint::ChatCompletions,
            json!({"model": "gpt-4o", "max_completion_tokens": 900})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
        r.limit_output(10);
        assert_eq!(r.body["max_completion_tokens"], 10);
        let mut r = RelayRequest::parse(
            Endpoint::Responses,
            json!({"model": "gpt-4o", "input": "hi"})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
        r.limit_output(7);
        assert_eq!(r.body["max_output_tokens"], 7);
        let mut r = RelayRequest::parse_gemini(
            "gemini-2.0-flash",
            false,
            json!({"contents": [], "generationConfig": {"temperature": 1}})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
        r.limit_output(8);
        assert_eq!(r.body["generationConfig"]["maxOutputTokens"], 8);
        assert_eq!(r.body["generationConfig"]["temperature"], 1);
    }

    /// Regression (tests/fuzz.rs, output-limit property): a small `max_tokens` beside a large
    /// `max_completion_tokens` or `max_output_tokens` reserved for the small one while an
    /// upstream reading the other could answer at length; `limit_output` left the other as sent.
    #[test]
    fn every_output_limit_field_counts_and_is_lowered() {
        let mut r = parse(
            Endpoint::ChatCompletions,
            json!({"model": "gpt-4o", "max_tokens": 1, "max_completion_tokens": 100000}),
        )
        .unwrap();
        assert_eq!(r.max_tokens, Some(100_000));
        r.limit_output(50);
        assert_eq!(r.max_tokens, Some(50));
        assert_eq!(r.body["max_tokens"], 1, "a lower limit stays");
        assert_eq!(r.body["max_completion_tokens"], 50);

        let mut r = parse(
            Endpoint::Responses,
            json!({"model": "gpt-4o", "max_tokens": 5, "max_output_tokens": 100000}),
        )
        .unwrap();
        assert_eq!(r.max_tokens, Some(100_000));
        r.limit_output(20);
        assert_eq!(
            (
                r.body["max_output_tokens"].as_i64(),
                r.body["max_tokens"].as_i64()
            ),
            (Some(20), Some(5))
        );

        // A chat body carrying only the Responses field: both end within the limit.
        let mut r = parse(
            Endpoint::ChatCompletions,
            json!({"model": "gpt-4o", "max_output_tokens": 23957}),
        )
        .unwrap();
        r.limit_output(1);
        assert_eq!(r.body["max_output_tokens"], 1);
        assert_eq!(r.body["max_tokens"], 1);
    }

    #[test]
    fn parses_model_stream_and_max_tokens() {
        let r = parse(
            Endpoint::ChatCompletions,
            json!({"model": "gpt-4o", "stream": true, "max_completion_tokens": 50, "x_unknown": [1]}),
        )
        .unwrap();
        assert_eq!(r.model, "gpt-4o");
        assert!(r.stream);
        assert_eq!(r.max_tokens, Some(50));
        assert_eq!(r.body["x_unknown"], json!([1]));

        // Several limit fields: the largest counts (an upstream may read any of them).
        let r = parse(
            Endpoint::Completions,
            json!({"model": "m", "max_tokens": 7, "max_completion_tokens": 9}),
        )
        .unwrap();
        assert_eq!((r.stream, r.max_tokens), (false, Some(9)));
        let r = parse(
            Endpoint::Responses,
            json!({"model": "m", "max_output_tokens": 3.0}),
        )
        .unwrap();
        assert_eq!(r.max_tokens, Some(3));
    }

    #[test]
    fn rejects_bad_bodies() {
        assert!(matches!(
            RelayRequest::parse(Endpoint::ChatCompletions, b"{not json"),
            Err(RelayError::InvalidRequest(_))
        ));
        assert!(matches!(
            parse(Endpoint::ChatCompletions, json!([1])),
            Err(RelayError::InvalidRequest(_))
        ));
        assert_eq!(
            parse(Endpoint::ChatCompletions, json!({"messages": []})),
            Err(RelayError::MissingModel)
        );
        assert_eq!(
            parse(Endpoint::Embeddings, json!({"model": "  "})),
            Err(RelayError::MissingModel)
        );
        assert!(matches!(
            parse(Endpoint::ChatCompletions, json!({"model": 3})),
            Err(RelayError::InvalidRequest(_))
        ));
        assert!(matches!(
            parse(
                Endpoint::ChatCompletions,
                json!({"model": "m", "stream": "yes"})
            ),
            Err(RelayError::InvalidRequest(_))
        ));
        assert!(matches!(
            parse(
                Endpoint::ChatCompletions,
                json!({"model": "m", "max_tokens": 1.5})
            ),
            Err(RelayError::InvalidRequest(_))
        ));
    }

    #[test]
    fn moderations_and_images_default_their_model() {
        let r = parse(Endpoint::Moderations, json!({"input": "hi"})).unwrap();
        assert_eq!(r.model, "omni-moderation-latest");
        let r = parse(Endpoint::ImagesGenerations, json!({"prompt": "a cat"})).unwrap();
        assert_eq!(r.model, "dall-e-2");
    }

    fn form(boundary: &str, fields: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, filename, content) in fields {
            out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
            match filename {
                Some(f) => out.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: audio/mpeg\r\n\r\n").as_bytes(),
                ),
                None => out.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
                ),
            }
            out.extend_from_slice(content);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        out
    }

    #[test]
    fn finds_the_model_field_after_a_binary_file() {
        let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW";
        // Binary content holding lookalikes of the delimiter prefix and of a header.
        let audio: Vec<u8> = (0..5000u32)
            .map(|i| (i * 7 % 256) as u8)
            .chain(b"--\r\n\r\nname=\"model\"\xff\xfe".iter().copied())
            .collect();
        let body = form(
            boundary,
            &[
                ("file", Some("a.mp3"), &audio),
                ("model", None, b"whisper-1"),
                ("stream", None, b"true"),
            ],
        );
        let ct = format!("multipart/form-data; boundary={boundary}");
        assert_eq!(parse_multipart_model(&ct, &body).unwrap(), "whisper-1");
        let r = RelayRequest::parse_multipart(Endpoint::AudioTranscriptions, &ct, &body).unwrap();
        assert_eq!(r.model, "whisper-1");
        assert!(r.stream);
        assert_eq!(r.body, Value::Null);

        let quoted = format!("multipart/form-data; charset=utf-8; boundary=\"{boundary}\"");
        assert_eq!(parse_multipart_model(&quoted, &body).unwrap(), "whisper-1");
    }

    #[test]
    fn multipart_errors() {
        let body = form("b", &[("file", Some("a.wav"), b"RIFF")]);
        assert_eq!(
            parse_multipart_model("multipart/form-data; boundary=b", &body),
            Err(RelayError::MissingModel)
        );
        assert!(matches!(
            parse_multipart_model("application/json", &body),
            Err(RelayError::InvalidRequest(_))
        ));
        assert!(matches!(
            parse_multipart_model("multipart/form-data", &body),
            Err(RelayError::InvalidRequest(_))
        ));
        assert!(matches!(
            parse_multipart_model("multipart/form-data; boundary=zzz", &body),
            Err(RelayError::InvalidRequest(_))
        ));
        // Truncated: the model part never ends.
        let cut = b"--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1";
        assert!(matches!(
            parse_multipart_model("multipart/form-data; boundary=b", cut),
            Err(RelayError::InvalidRequest(_))
        ));
    }

    #[test]
    fn multipart_tolerates_bare_lf() {
        let body = b"--b\nContent-Disposition: form-data; name=model\n\ngpt-4o-transcribe\n--b--\n";
        assert_eq!(
            parse_multipart_model("multipart/form-data; boundary=b", body).unwrap(),
            "gpt-4o-transcribe"
        );
    }

    #[test]
    fn find_works_at_edges() {
        assert_eq!(find(b"abcabd", b"abd", 0), Some(3));
        assert_eq!(find(b"abc", b"abc", 0), Some(0));
        assert_eq!(find(b"abc", b"abcd", 0), None);
        assert_eq!(find(b"aaa", b"a", 3), None);
        assert_eq!(find(b"", b"a", 0), None);
    }
}
