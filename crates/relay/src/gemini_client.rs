//! Gemini clients (`/gemini/{version}/models/{model}:generateContent` and
//! `:streamGenerateContent`) on channels that speak OpenAI's chat completions: the reverse of
//! the Gemini adapter. The `GenerateContentRequest` becomes an OpenAI chat request
//! ([`chat_request`]); the `chat.completion` answer becomes a `GenerateContentResponse`
//! ([`answer`]) and the `chat.completion.chunk` stream becomes the `data:` events of an
//! `alt=sse` stream ([`GeminiClientStream`]). Usage is billed from the OpenAI answer or stream
//! as for OpenAI clients. See `docs/providers.md` for the field-by-field mapping.
//!
//! Gemini has no tool-call ids of its own (`functionCall.id` is optional and rarely sent): a
//! call without one gets `call_{n}`, `n` its position among the request's calls, so that the
//! same history gives the same ids on every turn; each `functionResponse` answers the call of
//! the same id, else the first unanswered call of the same name.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::error::RelayError;
use crate::provider::{Answer, UpstreamFailure};
use crate::providers::openai::invalid_answer;
use crate::request::RelayRequest;
use crate::sse::{SseEvent, SseReader};
use crate::usage::Usage;

fn invalid(msg: impl Into<String>) -> RelayError {
    RelayError::InvalidRequest(msg.into())
}

/// `obj[camel]`, or `obj[snake]` (Google's JSON mapping accepts both spellings).
fn field<'a>(obj: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    obj.get(camel)
        .or_else(|| obj.get(snake))
        .filter(|v| !v.is_null())
}

/// The OpenAI chat request (endpoint chat completions, same model: the channel's model mapping
/// is applied when it is sent) for a `generateContent` request. The stream flag and the output
/// limit are the request's own (set from the method name and `maxOutputTokens` when it was
/// parsed, and lowered by the balance rule).
pub fn chat_request(req: &RelayRequest) -> Result<RelayRequest, RelayError> {
    let obj = req
        .body
        .as_object()
        .ok_or_else(|| invalid("the request body must be a JSON object"))?;
    let mut messages: Vec<Value> = Vec::new();
    if let Some(system) = field(obj, "systemInstruction", "system_instruction") {
        let text = system_text(system)?;
        if !text.is_empty() {
            messages.push(json!({"role": "system", "content": text}));
        }
    }
    let Some(Value::Array(contents)) = obj.get("contents") else {
        return Err(invalid("contents must be an array of contents"));
    };
    let mut calls = Calls::default();
    for (i, turn) in contents.iter().enumerate() {
        let turn = turn
            .as_object()
            .ok_or_else(|| invalid(format!("contents[{i}] must be an object")))?;
        let role = match turn.get("role") {
            None | Some(Value::Null) => "user",
            Some(Value::String(r)) => r.as_str(),
            Some(_) => return Err(invalid(format!("contents[{i}].role must be a string"))),
        };
        let parts = match turn.get("parts") {
            Some(Value::Array(p)) => p.as_slice(),
            None | Some(Value::Null) => &[],
            Some(_) => return Err(invalid(format!("contents[{i}].parts must be an array"))),
        };
        match role {
            "user" | "function" | "" => user_turn(i, parts, &mut calls, &mut messages)?,
            "model" => model_turn(i, parts, &mut calls, &mut messages)?,
            other => {
                return Err(invalid(format!(
                    "contents[{i}].role must be user or model, not {other:?}"
                )))
            }
        }
    }
    calls.close(&mut messages);

    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    let tools = tools(obj)?;
    if !tools.is_empty() {
        let config = field(obj, "toolConfig", "tool_config")
            .and_then(|c| {
                field(
                    c.as_object()?,
                    "functionCallingConfig",
                    "function_calling_config",
                )
            })
            .and_then(Value::as_object);
        let (tools, choice) = tool_choice(tools, config)?;
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = choice {
            body.insert("tool_choice".into(), choice);
        }
    }
    if let Some(config) = field(obj, "generationConfig", "generation_config") {
        let config = config
            .as_object()
            .ok_or_else(|| invalid("generationConfig must be an object"))?;
        generation_config(config, &mut body)?;
    }
    if let Some(n) = req.max_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    if req.stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok(crate::bridge::chat(req, Value::Object(body)))
}

/// The text of `systemInstruction`: a `Content`'s text parts joined by blank lines (a bare
/// string is taken too).
fn system_text(v: &Value) -> Result<String, RelayError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Object(o) => {
            let parts = match o.get("parts") {
                Some(Value::Array(p)) => p.as_slice(),
                None | Some(Value::Null) => &[],
                Some(_) => return Err(invalid("systemInstruction.parts must be an array")),
            };
            Ok(parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n\n"))
        }
        _ => Err(invalid("systemInstruction must be a Content object")),
    }
}

/// The calls of the model turns so far that no `functionResponse` has answered yet.
#[derive(Debug, Default)]
struct Calls {
    /// Calls seen in the request (the synthesised ids count them).
    seen: usize,
    /// (id, name) of the unanswered calls, in order.
    open: Vec<(String, String)>,
}

impl Calls {
    /// The id of a model turn's call: its own, else `call_{n}`.
    fn add(&mut self, id: Option<&str>, name: &str) -> String {
        let id = match id.filter(|i| !i.is_empty()) {
            Some(id) => id.to_owned(),
            None => format!("call_{}", self.seen),
        };
        self.seen += 1;
        self.open.push((id.clone(), name.to_owned()));
        id
    }

    /// The call a response answers: the one of its id, else the first of its name.
    fn answer(&mut self, id: Option<&str>, name: &str) -> Option<String> {
        let at = id
            .filter(|i| !i.is_empty())
            .and_then(|id| self.open.iter().position(|(i, _)| i == id))
            .or_else(|| self.open.iter().position(|(_, n)| n == name))?;
        Some(self.open.remove(at).0)
    }

    /// Answers the calls left unanswered (a cancelled call): OpenAI-protocol upstreams refuse a
    /// conversation where a tool call has no tool message before the next turn.
    fn close(&mut self, out: &mut Vec<Value>) {
        for (id, name) in self.open.drain(..) {
            out.push(json!({
                "role": "tool",
                "tool_call_id": id,
                "content": format!("(no result was given for {name})"),
            }));
        }
    }
}

/// A user turn: its `functionResponse` parts as `tool` messages first (OpenAI wants them right
/// after the assistant's calls), then one user message of the other parts (a string when they
/// are all text).
fn user_turn(
    i: usize,
    parts: &[Value],
    calls: &mut Calls,
    out: &mut Vec<Value>,
) -> Result<(), RelayError> {
    let mut chat_parts: Vec<Value> = Vec::new();
    for (j, part) in parts.iter().enumerate() {
        let at = || format!("contents[{i}].parts[{j}]");
        let p = part
            .as_object()
            .ok_or_else(|| invalid(format!("{} must be an object", at())))?;
        if let Some(r) = field(p, "functionResponse", "function_response") {
            let r = r
                .as_object()
                .ok_or_else(|| invalid(format!("{}.functionResponse must be an object", at())))?;
            let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
            let content = response_text(r.get("response"));
            match calls.answer(r.get("id").and_then(Value::as_str), name) {
                Some(id) => out.push(json!({
                    "role": "tool",
                    "tool_call_id": id,
                    "content": content,
                })),
                // A response to no call of the conversation: OpenAI would refuse a tool message
                // without its call, so the model reads it as text.
                None => chat_parts.push(json!({
                    "type": "text",
                    "text": format!("The function {name} returned: {content}"),
                })),
            }
            continue;
        }
        if field(p, "functionCall", "function_call").is_some() {
            return Err(invalid(format!(
                "{}: a functionCall belongs in a model turn",
                at()
            )));
        }
        if let Some(part) = user_part(p, &at)? {
            chat_parts.push(part);
        }
    }
    if chat_parts.is_empty() {
        return Ok(());
    }
    calls.close(out);
    let content = if chat_parts.iter().all(|p| p["type"] == "text") {
        let text: String = chat_parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect();
        Value::String(text)
    } else {
        Value::Array(chat_parts)
    };
    out.push(json!({"role": "user", "content": content}));
    Ok(())
}

/// A `functionResponse.response` as the tool message's text: the string of `{"output": s}`,
/// `{"content": s}` or `{"result": s}` (the shapes Gemini clients wrap results in), else the
/// JSON.
fn response_text(response: Option<&Value>) -> String {
    match response {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) if o.len() == 1 => match o.iter().next() {
            Some((k, Value::String(s)))
                if matches!(k.as_str(), "output" | "content" | "result") =>
            {
                s.clone()
            }
            _ => Value::Object(o.clone()).to_string(),
        },
        Some(v) => v.to_string(),
    }
}

/// One part of a user turn as an OpenAI content part; `None` for parts that carry nothing for
/// the model (thoughts, thought signatures, metadata alone).
fn user_part(p: &Map<String, Value>, at: &dyn Fn() -> String) -> Result<Option<Value>, RelayError> {
    if let Some(text) = p.get("text") {
        let text = text
            .as_str()
            .ok_or_else(|| invalid(format!("{}.text must be a string", at())))?;
        if p.get("thought") == Some(&Value::Bool(true)) {
            return Ok(None);
        }
        return Ok(Some(json!({"type": "text", "text": text})));
    }
    if let Some(d) = field(p, "inlineData", "inline_data") {
        let d = d
            .as_object()
            .ok_or_else(|| invalid(format!("{}.inlineData must be an object", at())))?;
        let mime = field(d, "mimeType", "mime_type")
            .and_then(Value::as_str)
            .unwrap_or("application/octet-stream");
        let data = d
            .get("data")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(format!("{}.inlineData.data must be base64 text", at())))?;
        let url = format!("data:{mime};base64,{data}");
        let part = if mime.starts_with("image/") {
            json!({"type": "image_url", "image_url": {"url": url}})
        } else if let Some(format) = audio_format(mime) {
            json!({"type": "input_audio", "input_audio": {"data": data, "format": format}})
        } else {
            let name = field(d, "displayName", "display_name")
                .and_then(Value::as_str)
                .unwrap_or("file");
            json!({"type": "file", "file": {"filename": name, "file_data": url}})
        };
        return Ok(Some(part));
    }
    if let Some(f) = field(p, "fileData", "file_data") {
        let f = f
            .as_object()
            .ok_or_else(|| invalid(format!("{}.fileData must be an object", at())))?;
        let uri = field(f, "fileUri", "file_uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mime = field(f, "mimeType", "mime_type").and_then(Value::as_str);
        let web = uri.starts_with("https://") || uri.starts_with("http://");
        if web && mime.is_none_or(|m| m.starts_with("image/")) {
            return Ok(Some(
                json!({"type": "image_url", "image_url": {"url": uri}}),
            ));
        }
        return Err(invalid(format!(
            "{}: only images at http(s) URLs can be sent as fileData to this model",
            at()
        )));
    }
    if let Some(code) = field(p, "executableCode", "executable_code") {
        let text = code.get("code").and_then(Value::as_str).unwrap_or_default();
        return Ok(Some(json!({"type": "text", "text": text})));
    }
    if let Some(result) = field(p, "codeExecutionResult", "code_execution_result") {
        let text = result
            .get("output")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Ok(Some(json!({"type": "text", "text": text})));
    }
    let metadata_only = p.keys().all(|k| {
        matches!(
            k.as_str(),
            "thought"
                | "thoughtSignature"
                | "thought_signature"
                | "videoMetadata"
                | "video_metadata"
        )
    });
    if metadata_only {
        return Ok(None);
    }
    Err(invalid(format!(
        "{}: parts need text, inlineData, fileData, functionCall or functionResponse",
        at()
    )))
}

/// OpenAI's `input_audio.format` for an audio media type it takes.
fn audio_format(mime: &str) -> Option<&'static str> {
    match mime {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    }
}

/// A model turn: its text as the assistant's `content`, its function calls as `tool_calls`
/// (thoughts are dropped: OpenAI takes no reasoning back).
fn model_turn(
    i: usize,
    parts: &[Value],
    calls: &mut Calls,
    out: &mut Vec<Value>,
) -> Result<(), RelayError> {
    calls.close(out);
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for (j, part) in parts.iter().enumerate() {
        let at = || format!("contents[{i}].parts[{j}]");
        let p = part
            .as_object()
            .ok_or_else(|| invalid(format!("{} must be an object", at())))?;
        if let Some(c) = field(p, "functionCall", "function_call") {
            let c = c
                .as_object()
                .ok_or_else(|| invalid(format!("{}.functionCall must be an object", at())))?;
            let name = c
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| invalid(format!("{}.functionCall needs a name", at())))?;
            let args = match c.get("args") {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(a @ Value::Object(_)) => a.to_string(),
                Some(_) => {
                    return Err(invalid(format!(
                        "{}.functionCall.args must be an object",
                        at()
                    )))
                }
            };
            let id = calls.add(c.get("id").and_then(Value::as_str), name);
            tool_calls.push(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": args},
            }));
            continue;
        }
        if let Some(t) = p.get("text") {
            let t = t
                .as_str()
                .ok_or_else(|| invalid(format!("{}.text must be a string", at())))?;
            if p.get("thought") != Some(&Value::Bool(true)) {
                text.push_str(t);
            }
            continue;
        }
        if let Some(code) = field(p, "executableCode", "executable_code") {
            text.push_str(code.get("code").and_then(Value::as_str).unwrap_or_default());
            continue;
        }
        if let Some(result) = field(p, "codeExecutionResult", "code_execution_result") {
            text.push_str(
                result
                    .get("output")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            );
            continue;
        }
        let metadata_only = p.keys().all(|k| {
            matches!(
                k.as_str(),
                "thought" | "thoughtSignature" | "thought_signature"
            )
        });
        if !metadata_only {
            return Err(invalid(format!(
                "{}: model turns can carry text and function calls only for this model",
                at()
            )));
        }
    }
    if text.is_empty() && tool_calls.is_empty() {
        return Ok(());
    }
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    m.insert(
        "content".into(),
        if text.is_empty() {
            Value::Null
        } else {
            Value::String(text)
        },
    );
    if !tool_calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(tool_calls));
    }
    out.push(Value::Object(m));
    Ok(())
}

/// The function tools of `tools[].functionDeclarations`. Google's own tools (search, code
/// execution, URL context, ...) have no counterpart and are refused.
fn tools(obj: &Map<String, Value>) -> Result<Vec<Value>, RelayError> {
    let list = match obj.get("tools") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(l)) => l,
        Some(_) => return Err(invalid("tools must be an array")),
    };
    let mut out = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let t = t
            .as_object()
            .ok_or_else(|| invalid(format!("tools[{i}] must be an object")))?;
        for (kind, v) in t {
            if !matches!(
                kind.as_str(),
                "functionDeclarations" | "function_declarations"
            ) {
                return Err(invalid(format!(
                    "tools[{i}]: {kind} is not supported by this model (functionDeclarations are)"
                )));
            }
            let decls = v.as_array().ok_or_else(|| {
                invalid(format!("tools[{i}].functionDeclarations must be an array"))
            })?;
            for (j, d) in decls.iter().enumerate() {
                let d = d.as_object().ok_or_else(|| {
                    invalid(format!(
                        "tools[{i}].functionDeclarations[{j}] must be an object"
                    ))
                })?;
                let name = d
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| {
                        invalid(format!("tools[{i}].functionDeclarations[{j}] needs a name"))
                    })?;
                let parameters = match (
                    field(d, "parametersJsonSchema", "parameters_json_schema"),
                    d.get("parameters").filter(|p| !p.is_null()),
                ) {
                    (Some(s @ Value::Object(_)), _) => s.clone(),
                    (_, Some(s @ Value::Object(_))) => json_schema(s),
                    (None, None) => json!({"type": "object", "properties": {}}),
                    _ => {
                        return Err(invalid(format!(
                            "tools[{i}].functionDeclarations[{j}].parameters must be an object"
                        )))
                    }
                };
                let mut f = Map::new();
                f.insert("name".into(), json!(name));
                if let Some(desc) = d.get("description").filter(|v| v.is_string()) {
                    f.insert("description".into(), desc.clone());
                }
                f.insert("parameters".into(), parameters);
                out.push(json!({"type": "function", "function": f}));
            }
        }
    }
    Ok(out)
}

/// `toolConfig.functionCallingConfig` as `tool_choice`: `AUTO` (and `VALIDATED`) -> `auto`,
/// `NONE` -> `none`, `ANY` -> `required`, or the one function when `allowedFunctionNames` names
/// one; with several, only those functions are offered.
fn tool_choice(
    tools: Vec<Value>,
    config: Option<&Map<String, Value>>,
) -> Result<(Vec<Value>, Option<Value>), RelayError> {
    let Some(config) = config else {
        return Ok((tools, None));
    };
    let allowed: Vec<&str> = match field(config, "allowedFunctionNames", "allowed_function_names") {
        None => Vec::new(),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        Some(_) => return Err(invalid("allowedFunctionNames must be an array of names")),
    };
    let choice = match config.get("mode").and_then(Value::as_str) {
        Some("AUTO" | "VALIDATED") => json!("auto"),
        Some("NONE") => json!("none"),
        Some("ANY") => match allowed.as_slice() {
            [one] => json!({"type": "function", "function": {"name": one}}),
            [] => json!("required"),
            several => {
                let offered: Vec<Value> = tools
                    .into_iter()
                    .filter(|t| {
                        t["function"]["name"]
                            .as_str()
                            .is_some_and(|n| several.contains(&n))
                    })
                    .collect();
                return Ok((offered, Some(json!("required"))));
            }
        },
        None | Some("MODE_UNSPECIFIED") => return Ok((tools, None)),
        Some(other) => {
            return Err(invalid(format!(
                "functionCallingConfig.mode {other:?} is not one of AUTO, ANY, NONE, VALIDATED"
            )))
        }
    };
    Ok((tools, Some(choice)))
}

/// Gemini's `Schema` (an OpenAPI 3.0 subset: upper-case type names, `nullable`,
/// `propertyOrdering`, 64-bit integers as strings) as JSON Schema.
fn json_schema(v: &Value) -> Value {
    let Value::Object(o) = v else {
        return v.clone();
    };
    let nullable = o.get("nullable") == Some(&Value::Bool(true));
    let mut out = Map::new();
    for (k, val) in o {
        let converted = match k.as_str() {
            "type" => {
                let lower = |t: &Value| match t {
                    Value::String(s) => Value::String(s.to_ascii_lowercase()),
                    other => other.clone(),
                };
                match val {
                    Value::Array(list) => Value::Array(list.iter().map(lower).collect()),
                    Value::String(s) if s.eq_ignore_ascii_case("TYPE_UNSPECIFIED") => continue,
                    t if nullable => json!([lower(t), "null"]),
                    t => lower(t),
                }
            }
            "nullable" | "propertyOrdering" => continue,
            "properties" | "$defs" | "definitions" | "patternProperties" => match val {
                Value::Object(m) => {
                    Value::Object(m.iter().map(|(k, s)| (k.clone(), json_schema(s))).collect())
                }
                other => other.clone(),
            },
            "items" | "additionalProperties" | "not" => json_schema(val),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => match val {
                Value::Array(list) => Value::Array(list.iter().map(json_schema).collect()),
                other => other.clone(),
            },
            "minItems" | "maxItems" | "minLength" | "maxLength" | "minProperties"
            | "maxProperties" => match val {
                Value::String(s) => s.parse::<u64>().map(Value::from).unwrap_or(val.clone()),
                other => other.clone(),
            },
            _ => val.clone(),
        };
        out.insert(k.clone(), converted);
    }
    Value::Object(out)
}

/// `generationConfig` in the chat request: `temperature`, `topP` -> `top_p`, `seed`,
/// `presencePenalty`, `frequencyPenalty`, `stopSequences` -> `stop`, `candidateCount` -> `n`,
/// `responseMimeType`/`responseJsonSchema`/`responseSchema` -> `response_format`,
/// `thinkingConfig` -> `reasoning_effort` ([`reasoning_effort`]). `topK`, `responseLogprobs`,
/// `logprobs`, `mediaResolution`, `speechConfig` and `responseModalities` have no chat
/// counterpart and are dropped (`maxOutputTokens` is the request's output limit).
fn generation_config(
    config: &Map<String, Value>,
    body: &mut Map<String, Value>,
) -> Result<(), RelayError> {
    for (camel, snake, to) in [
        ("temperature", "temperature", "temperature"),
        ("topP", "top_p", "top_p"),
        ("seed", "seed", "seed"),
        ("presencePenalty", "presence_penalty", "presence_penalty"),
        ("frequencyPenalty", "frequency_penalty", "frequency_penalty"),
    ] {
        if let Some(v) = field(config, camel, snake) {
            if !v.is_number() {
                return Err(invalid(format!(
                    "generationConfig.{camel} must be a number"
                )));
            }
            body.insert(to.into(), v.clone());
        }
    }
    match field(config, "stopSequences", "stop_sequences") {
        None => {}
        Some(Value::Array(s)) if s.is_empty() => {}
        Some(Value::Array(s)) if s.iter().all(Value::is_string) => {
            body.insert("stop".into(), Value::Array(s.clone()));
        }
        Some(_) => {
            return Err(invalid(
                "generationConfig.stopSequences must be an array of strings",
            ))
        }
    }
    if let Some(n) = field(config, "candidateCount", "candidate_count") {
        let n = n
            .as_u64()
            .filter(|n| *n >= 1)
            .ok_or_else(|| invalid("generationConfig.candidateCount must be a positive integer"))?;
        if n > 1 {
            body.insert("n".into(), json!(n));
        }
    }
    let mime = field(config, "responseMimeType", "response_mime_type").and_then(Value::as_str);
    let schema = match (
        field(config, "responseJsonSchema", "response_json_schema"),
        field(config, "responseSchema", "response_schema"),
    ) {
        (Some(s @ Value::Object(_)), _) => Some(s.clone()),
        (None, Some(s @ Value::Object(_))) => Some(json_schema(s)),
        (None, None) => None,
        _ => return Err(invalid("generationConfig.responseSchema must be an object")),
    };
    match (mime, schema) {
        (Some("application/json"), Some(schema)) => {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}),
            );
        }
        (Some("application/json"), None) => {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
        (None | Some("text/plain"), _) => {}
        (Some(other), _) => {
            return Err(invalid(format!(
                "generationConfig.responseMimeType {other:?} is not supported by this model \
                 (text/plain and application/json are)"
            )))
        }
    }
    if let Some(t) = field(config, "thinkingConfig", "thinking_config") {
        let t = t
            .as_object()
            .ok_or_else(|| invalid("generationConfig.thinkingConfig must be an object"))?;
        if let Some(effort) = reasoning_effort(t)? {
            body.insert("reasoning_effort".into(), json!(effort));
        }
    }
    Ok(())
}

/// OpenAI's `reasoning_effort` for a `thinkingConfig`: `thinkingLevel` `minimal`, `low`,
/// `medium`, `high` as they are; a `thinkingBudget` of 1 to 1024 tokens is `low`, up to 8192
/// `medium`, more `high`. A budget of -1 (dynamic) or 0 (no thinking) asks for nothing: the
/// model's default applies (non-reasoning models refuse the field, and OpenAI has no "off"
/// that every reasoning model takes). `includeThoughts` changes nothing: the reasoning an
/// upstream returns is always passed on as thought parts.
pub fn reasoning_effort(t: &Map<String, Value>) -> Result<Option<&'static str>, RelayError> {
    if let Some(level) = field(t, "thinkingLevel", "thinking_level") {
        let level = level.as_str().unwrap_or_default();
        return match level.to_ascii_lowercase().as_str() {
            "minimal" => Ok(Some("minimal")),
            "low" => Ok(Some("low")),
            "medium" => Ok(Some("medium")),
            "high" => Ok(Some("high")),
            "thinking_level_unspecified" => Ok(None),
            _ => Err(invalid(format!(
                "thinkingConfig.thinkingLevel {level:?} is not one of MINIMAL, LOW, MEDIUM, HIGH"
            ))),
        };
    }
    let Some(budget) = field(t, "thinkingBudget", "thinking_budget") else {
        return Ok(None);
    };
    let budget = budget
        .as_i64()
        .ok_or_else(|| invalid("thinkingConfig.thinkingBudget must be an integer"))?;
    Ok(match budget {
        ..=0 => None,
        1..=1024 => Some("low"),
        1025..=8192 => Some("medium"),
        _ => Some("high"),
    })
}

// ---------------------------------------------------------------------------------------------
// Answers

/// A `GenerateContentResponse` as written for Gemini clients.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ResponseOut<'a> {
    candidates: Vec<CandidateOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage_metadata: Option<UsageMetadata>,
    model_version: &'a str,
    response_id: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CandidateOut<'a> {
    content: ContentOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finish_reason: Option<&'static str>,
    index: u64,
}

#[derive(Debug, Serialize)]
struct ContentOut<'a> {
    role: &'static str,
    parts: Vec<PartOut<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum PartOut<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Thought {
        text: Cow<'a, str>,
        thought: bool,
    },
    Call {
        #[serde(rename = "functionCall")]
        function_call: CallOut<'a>,
    },
}

#[derive(Debug, Serialize)]
struct CallOut<'a> {
    /// The upstream's call id: Gemini clients send it back in the `functionResponse`.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Cow<'a, str>>,
    name: Cow<'a, str>,
    args: Value,
}

impl<'a> CallOut<'a> {
    /// A call with its arguments (JSON text) as an object; `{}` when they are not one.
    fn new(id: Option<Cow<'a, str>>, name: Cow<'a, str>, arguments: &str) -> Self {
        let args = serde_json::from_str::<Value>(arguments)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        CallOut { id, name, args }
    }
}

/// `usageMetadata`: the prompt count includes cached tokens (also given as
/// `cachedContentTokenCount`); `candidatesTokenCount` excludes the reasoning tokens, given as
/// `thoughtsTokenCount` (Gemini's split).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    prompt_token_count: i64,
    candidates_token_count: i64,
    total_token_count: i64,
    #[serde(skip_serializing_if = "is_zero")]
    thoughts_token_count: i64,
    #[serde(skip_serializing_if = "is_zero")]
    cached_content_token_count: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl From<&Usage> for UsageMetadata {
    fn from(u: &Usage) -> Self {
        let prompt = u.prompt_tokens.max(0);
        let completion = u.completion_tokens.max(0);
        let thoughts = u.reasoning_tokens.clamp(0, completion);
        UsageMetadata {
            prompt_token_count: prompt,
            candidates_token_count: completion - thoughts,
            total_token_count: u.total_tokens(),
            thoughts_token_count: thoughts,
            cached_content_token_count: u.cached_tokens.saturating_add(u.cached_read_tokens),
        }
    }
}

/// Gemini's finish reason for an OpenAI one (function calls end with `STOP` in Gemini).
pub fn finish_reason(finish: Option<&str>) -> &'static str {
    match finish {
        None | Some("stop" | "tool_calls" | "function_call") => "STOP",
        Some("length") => "MAX_TOKENS",
        Some("content_filter") => "SAFETY",
        Some(_) => "OTHER",
    }
}

/// The parts of an OpenAI message or delta: its reasoning as a thought, its text, its calls.
fn message_parts<'a>(m: &'a Value) -> Vec<PartOut<'a>> {
    let mut parts = Vec::new();
    let reasoning = m
        .get("reasoning_content")
        .or_else(|| m.get("reasoning"))
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty());
    if let Some(r) = reasoning {
        parts.push(PartOut::Thought {
            text: r.into(),
            thought: true,
        });
    }
    let text = crate::translate::content_str(m.get("content"));
    if !text.is_empty() {
        parts.push(PartOut::Text { text });
    }
    for c in m
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let f = &c["function"];
        parts.push(PartOut::Call {
            function_call: CallOut::new(
                c.get("id").and_then(Value::as_str).map(Cow::Borrowed),
                f["name"].as_str().unwrap_or_default().into(),
                f["arguments"].as_str().unwrap_or_default(),
            ),
        });
    }
    parts
}

/// A `chat.completion` as a `GenerateContentResponse` (one candidate per choice); the usage to
/// bill is OpenAI's.
pub fn answer(req: &RelayRequest, body: &[u8]) -> Result<Answer, UpstreamFailure> {
    let v: Value =
        crate::wire::from_json_bytes(body).map_err(|_| invalid_answer("the answer is not JSON"))?;
    let choices = v
        .get("choices")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
        .ok_or_else(|| invalid_answer("the answer has no choices"))?;
    let candidates = choices
        .iter()
        .enumerate()
        .map(|(i, c)| CandidateOut {
            content: ContentOut {
                role: "model",
                parts: message_parts(&c["message"]),
            },
            finish_reason: Some(finish_reason(c["finish_reason"].as_str())),
            index: c["index"].as_u64().unwrap_or(i as u64),
        })
        .collect();
    let usage = crate::usage::from_openai(&v);
    let out = ResponseOut {
        candidates,
        usage_metadata: usage.as_ref().map(UsageMetadata::from),
        model_version: v["model"].as_str().unwrap_or(&req.model),
        response_id: v["id"].as_str().unwrap_or_default(),
    };
    Ok(Answer {
        body: serde_json::to_vec(&out).unwrap_or_default(),
        usage,
    })
}

// ---------------------------------------------------------------------------------------------
// Streams

/// A tool call being streamed: its pieces of arguments gathered until the call is complete.
#[derive(Debug)]
struct PendingCall {
    index: u64,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Google's error object for an OpenAI error event: `{"error": {"code", "message",
/// "status"}}`, the code and status from the OpenAI type.
#[derive(Debug, Serialize)]
struct ErrorOut<'a> {
    error: ErrorBodyOut<'a>,
}

#[derive(Debug, Serialize)]
struct ErrorBodyOut<'a> {
    code: u16,
    message: &'a str,
    status: &'static str,
}

/// The HTTP code and Google status for an OpenAI error type or code.
fn google_status(kind: &str) -> (u16, &'static str) {
    match kind {
        "invalid_request_error" | "invalid_request" => (400, "INVALID_ARGUMENT"),
        "authentication_error" | "invalid_api_key" => (401, "UNAUTHENTICATED"),
        "permission_error" => (403, "PERMISSION_DENIED"),
        "not_found_error" | "model_not_found" => (404, "NOT_FOUND"),
        "rate_limit_error" | "rate_limit_exceeded" | "insufficient_quota" => {
            (429, "RESOURCE_EXHAUSTED")
        }
        "overloaded_error" | "service_unavailable" => (503, "UNAVAILABLE"),
        "timeout" | "upstream_timeout" => (504, "DEADLINE_EXCEEDED"),
        _ => (500, "INTERNAL"),
    }
}

/// Turns an OpenAI `chat.completion.chunk` stream into the `data:` events of a Gemini
/// `streamGenerateContent?alt=sse` stream: one `GenerateContentResponse` per text or reasoning
/// piece (reasoning as a `thought: true` part), tool calls gathered until they are complete,
/// and a last event with the function calls, the `finishReason` and the `usageMetadata`,
/// written at `[DONE]` (or at a clean end after a finish reason: a stream cut off before one
/// ends without it, which Gemini clients take as an incomplete answer). Only the first choice
/// is followed. An `{"error"}` event becomes Google's error object, and ends the stream.
#[derive(Debug)]
pub struct GeminiClientStream {
    reader: SseReader,
    events: Vec<SseEvent>,
    model: String,
    id: String,
    started: bool,
    calls: Vec<PendingCall>,
    finish: Option<String>,
    usage: Option<Usage>,
    /// The last event (or an error) is written: later input is ignored.
    ended: bool,
}

impl GeminiClientStream {
    pub fn new(model: &str) -> Self {
        GeminiClientStream {
            reader: SseReader::new(),
            events: Vec::new(),
            model: model.to_owned(),
            id: String::new(),
            started: false,
            calls: Vec::new(),
            finish: None,
            usage: None,
            ended: false,
        }
    }

    /// The usage the upstream reported so far.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    fn write(&self, out: &mut Vec<u8>, parts: Vec<PartOut<'_>>, last: bool) {
        let response = ResponseOut {
            candidates: vec![CandidateOut {
                content: ContentOut {
                    role: "model",
                    parts,
                },
                finish_reason: last.then(|| finish_reason(self.finish.as_deref())),
                index: 0,
            }],
            usage_metadata: if last {
                self.usage.as_ref().map(UsageMetadata::from)
            } else {
                None
            },
            model_version: &self.model,
            response_id: &self.id,
        };
        crate::sse::write_data(out, &response);
    }

    /// The last event: the gathered calls, the finish reason and the usage.
    fn end(&mut self, out: &mut Vec<u8>) {
        if self.ended || !self.started {
            return;
        }
        self.ended = true;
        let calls = std::mem::take(&mut self.calls);
        let parts = calls
            .iter()
            .map(|c| PartOut::Call {
                function_call: CallOut::new(
                    c.id.as_deref().map(Cow::Borrowed),
                    Cow::Borrowed(&c.name),
                    &c.arguments,
                ),
            })
            .collect();
        self.write(out, parts, true);
    }

    fn event(&mut self, e: &SseEvent, out: &mut Vec<u8>) {
        if self.ended {
            return;
        }
        if e.data.trim() == "[DONE]" {
            self.end(out);
            return;
        }
        let Ok(v) = serde_json::from_str::<Value>(&e.data) else {
            return;
        };
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .or_else(|| err.as_str())
                .unwrap_or("the upstream stream failed");
            let kind = err
                .get("type")
                .and_then(Value::as_str)
                .or_else(|| err.get("code").and_then(Value::as_str))
                .unwrap_or_default();
            let (code, status) = google_status(kind);
            let event = ErrorOut {
                error: ErrorBodyOut {
                    code,
                    message,
                    status,
                },
            };
            crate::sse::write_data(out, &event);
            self.ended = true;
            return;
        }
        if !v.is_object() {
            return;
        }
        if !self.started {
            self.started = true;
            if let Some(id) = v.get("id").and_then(Value::as_str) {
                self.id = id.to_owned();
            }
            if let Some(m) = v
                .get("model")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
            {
                self.model = m.to_owned();
            }
        }
        if let Some(u) = crate::usage::from_openai(&v) {
            self.usage = Some(u);
        }
        let Some(choice) = v
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find(|c| c["index"].as_u64().unwrap_or(0) == 0))
        else {
            return;
        };
        let delta = &choice["delta"];
        let reasoning = delta
            .get("reasoning_content")
            .or_else(|| delta.get("reasoning"))
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty());
        if let Some(r) = reasoning {
            let part = PartOut::Thought {
                text: r.into(),
                thought: true,
            };
            self.write(out, vec![part], false);
        }
        let text = crate::translate::content_str(delta.get("content"));
        if !text.is_empty() {
            self.write(out, vec![PartOut::Text { text }], false);
        }
        for c in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = c["index"].as_u64().unwrap_or(0);
            let f = &c["function"];
            let piece = f["arguments"].as_str().unwrap_or_default();
            match self.calls.iter_mut().find(|p| p.index == index) {
                Some(p) => {
                    p.arguments.push_str(piece);
                    if let Some(name) = f["name"].as_str().filter(|n| !n.is_empty()) {
                        if p.name.is_empty() {
                            p.name = name.to_owned();
                        }
                    }
                    if p.id.is_none() {
                        p.id = c["id"].as_str().map(str::to_owned);
                    }
                }
                None => self.calls.push(PendingCall {
                    index,
                    id: c["id"].as_str().map(str::to_owned),
                    name: f["name"].as_str().unwrap_or_default().to_owned(),
                    arguments: piece.to_owned(),
                }),
            }
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            self.finish = Some(f.to_owned());
        }
    }
}

impl crate::sse::EventTranslator for GeminiClientStream {
    fn reader(&mut self) -> (&mut SseReader, &mut Vec<SseEvent>) {
        (&mut self.reader, &mut self.events)
    }

    fn event(&mut self, e: &SseEvent, out: &mut Vec<u8>) {
        GeminiClientStream::event(self, e, out);
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        if self.finish.is_some() {
            self.end(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::Endpoint;
    use crate::sse::EventTranslator as _;

    fn gemini(body: Value, stream: bool) -> RelayRequest {
        RelayRequest::parse_gemini("gemini-2.5-pro", stream, body.to_string().as_bytes()).unwrap()
    }

    fn refused(body: Value) -> String {
        match chat_request(&gemini(body, false)) {
            Err(RelayError::InvalidRequest(m)) => m,
            other => panic!("{:?}", other.map(|r| r.body)),
        }
    }

    #[test]
    fn requests_become_chat_requests() {
        let req = gemini(
            json!({
                "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Be kind."}]},
                "contents": [
                    {"role": "user", "parts": [
                        {"text": "Look at "},
                        {"inlineData": {"mimeType": "image/png", "data": "AAA"}}
                    ]},
                    {"role": "model", "parts": [
                        {"text": "thinking...", "thought": true},
                        {"text": "Let me look."},
                        {"functionCall": {"name": "lookup", "args": {"q": 1}}, "thoughtSignature": "sig"},
                        {"functionCall": {"name": "lookup", "args": {"q": 2}}},
                        {"functionCall": {"id": "own", "name": "read"}}
                    ]},
                    {"role": "user", "parts": [
                        {"functionResponse": {"id": "own", "name": "read", "response": {"output": "file"}}},
                        {"functionResponse": {"name": "lookup", "response": {"hits": [1]}}},
                        {"functionResponse": {"name": "lookup", "response": {"output": "two"}}}
                    ]},
                    {"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {}}}]},
                    {"parts": [{"functionResponse": {"name": "lookup", "response": {"content": "three"}}}, {"text": "And?"}]}
                ],
                "tools": [{"functionDeclarations": [
                    {"name": "lookup", "description": "Finds.", "parameters": {
                        "type": "OBJECT", "required": ["q"], "propertyOrdering": ["q", "type"],
                        "properties": {
                            "q": {"type": "INTEGER", "nullable": true},
                            "type": {"type": "ARRAY", "minItems": "1", "items": {"type": "STRING", "enum": ["a"]}}
                        }
                    }},
                    {"name": "read", "parametersJsonSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
                    {"name": "now"}
                ]}],
                "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}},
                "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
                "cachedContent": "cachedContents/abc",
                "generationConfig": {
                    "temperature": 0.5, "topP": 0.9, "topK": 40, "maxOutputTokens": 100,
                    "stopSequences": ["END"], "candidateCount": 2, "seed": 7,
                    "responseMimeType": "application/json",
                    "responseSchema": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}},
                    "thinkingConfig": {"thinkingBudget": 8192, "includeThoughts": true}
                }
            }),
            true,
        );
        let chat = chat_request(&req).unwrap();
        assert_eq!(chat.endpoint, Endpoint::ChatCompletions);
        assert_eq!(
            (chat.model.as_str(), chat.stream, chat.max_tokens),
            ("gemini-2.5-pro", true, Some(100))
        );
        assert_eq!(
            chat.body,
            json!({
                "model": "gemini-2.5-pro", "max_tokens": 100, "stop": ["END"], "temperature": 0.5,
                "top_p": 0.9, "seed": 7, "n": 2, "reasoning_effort": "medium",
                "stream": true, "stream_options": {"include_usage": true},
                "response_format": {"type": "json_schema", "json_schema": {"name": "response",
                    "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                "tools": [
                    {"type": "function", "function": {"name": "lookup", "description": "Finds.", "parameters": {
                        "type": "object", "required": ["q"],
                        "properties": {
                            "q": {"type": ["integer", "null"]},
                            "type": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["a"]}}
                        }
                    }}},
                    {"type": "function", "function": {"name": "read", "parameters":
                        {"type": "object", "properties": {"path": {"type": "string"}}}}},
                    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}
                ],
                "tool_choice": {"type": "function", "function": {"name": "read"}},
                "messages": [
                    {"role": "system", "content": "Be brief.\n\nBe kind."},
                    {"role": "user", "content": [
                        {"type": "text", "text": "Look at "},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}
                    ]},
                    {"role": "assistant", "content": "Let me look.", "tool_calls": [
                        {"id": "call_0", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}},
                        {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":2}"}},
                        {"id": "own", "type": "function", "function": {"name": "read", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "own", "content": "file"},
                    {"role": "tool", "tool_call_id": "call_0", "content": "{\"hits\":[1]}"},
                    {"role": "tool", "tool_call_id": "call_1", "content": "two"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_3", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_3", "content": "three"},
                    {"role": "user", "content": "And?"}
                ]
            })
        );
        // The same history gives the same ids.
        assert_eq!(chat_request(&req).unwrap().body, chat.body);
    }

    #[test]
    fn unanswered_and_unmatched_calls_keep_the_conversation_valid() {
        let chat = chat_request(&gemini(
            json!({"contents": [
                {"role": "user", "parts": [{"text": "go"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "a"}}, {"functionCall": {"name": "b"}}]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "b", "response": {"output": "B"}}},
                    {"functionResponse": {"name": "zzz", "response": {"output": "Z"}}}
                ]}
            ]}),
            false,
        ))
        .unwrap();
        assert_eq!(
            chat.body["messages"],
            json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_0", "type": "function", "function": {"name": "a", "arguments": "{}"}},
                    {"id": "call_1", "type": "function", "function": {"name": "b", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "B"},
                {"role": "tool", "tool_call_id": "call_0", "content": "(no result was given for a)"},
                {"role": "user", "content": "The function zzz returned: Z"}
            ])
        );
        assert!(chat.body.get("stream").is_none() && chat.body.get("tools").is_none());
    }

    #[test]
    fn other_parts_and_settings() {
        let chat = chat_request(&gemini(
            json!({
                "system_instruction": {"parts": [{"text": "snake case too"}]},
                "contents": [{"role": "user", "parts": [
                    {"inline_data": {"mime_type": "application/pdf", "data": "UEs="}},
                    {"inlineData": {"mimeType": "audio/wav", "data": "UklG"}},
                    {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://x/a.jpg"}},
                    {"text": "ignored thought", "thought": true}
                ]}],
                "tools": [{"functionDeclarations": [{"name": "f"}, {"name": "g"}, {"name": "h"}]}],
                "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f", "h"]}},
                "generationConfig": {"responseMimeType": "application/json", "candidateCount": 1,
                    "thinkingConfig": {"thinkingBudget": -1}}
            }),
            false,
        ))
        .unwrap();
        let b = &chat.body;
        assert_eq!(
            b["messages"][0],
            json!({"role": "system", "content": "snake case too"})
        );
        assert_eq!(
            b["messages"][1]["content"],
            json!([
                {"type": "file", "file": {"filename": "file", "file_data": "data:application/pdf;base64,UEs="}},
                {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
                {"type": "image_url", "image_url": {"url": "https://x/a.jpg"}}
            ])
        );
        let names: Vec<&str> = b["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["f", "h"]);
        assert_eq!(b["tool_choice"], "required");
        assert_eq!(b["response_format"], json!({"type": "json_object"}));
        assert!(b.get("n").is_none() && b.get("reasoning_effort").is_none());

        for (mode, choice) in [
            ("AUTO", json!("auto")),
            ("NONE", json!("none")),
            ("ANY", json!("required")),
        ] {
            let chat = chat_request(&gemini(
                json!({"contents": [], "tools": [{"functionDeclarations": [{"name": "f"}]}],
                    "toolConfig": {"functionCallingConfig": {"mode": mode}}}),
                false,
            ))
            .unwrap();
            assert_eq!(chat.body["tool_choice"], choice, "{mode}");
        }
        let effort = |t: Value| reasoning_effort(t.as_object().unwrap()).unwrap();
        assert_eq!(effort(json!({"thinkingBudget": 0})), None);
        assert_eq!(effort(json!({"thinkingBudget": 1024})), Some("low"));
        assert_eq!(effort(json!({"thinkingBudget": 24576})), Some("high"));
        assert_eq!(effort(json!({"thinkingLevel": "HIGH"})), Some("high"));
        assert_eq!(effort(json!({"includeThoughts": true})), None);
    }

    #[test]
    fn bad_requests_are_refused() {
        for (body, needle) in [
            (json!({}), "contents must be an array"),
            (json!({"contents": "hi"}), "contents must be an array"),
            (json!({"contents": [5]}), "contents[0] must be an object"),
            (
                json!({"contents": [{"role": "system", "parts": []}]}),
                "role must be user or model",
            ),
            (
                json!({"contents": [{"parts": {"text": "x"}}]}),
                "parts must be an array",
            ),
            (
                json!({"contents": [{"parts": [{"text": 5}]}]}),
                "text must be a string",
            ),
            (
                json!({"contents": [{"parts": [{"bogus": 1}]}]}),
                "parts need text",
            ),
            (
                json!({"contents": [{"parts": [{"inlineData": {"mimeType": "image/png"}}]}]}),
                "data must be base64",
            ),
            (
                json!({"contents": [{"parts": [{"fileData": {"fileUri": "gs://b/f.pdf"}}]}]}),
                "only images",
            ),
            (
                json!({"contents": [{"parts": [{"functionCall": {"name": "f"}}]}]}),
                "belongs in a model turn",
            ),
            (
                json!({"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]}),
                "needs a name",
            ),
            (
                json!({"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": [1]}}]}]}),
                "args must be an object",
            ),
            (
                json!({"contents": [], "tools": [{"googleSearch": {}}]}),
                "googleSearch is not supported",
            ),
            (
                json!({"contents": [], "tools": [{"functionDeclarations": [{"description": "x"}]}]}),
                "needs a name",
            ),
            (
                json!({"contents": [], "tools": [{"functionDeclarations": [{"name": "f", "parameters": "x"}]}]}),
                "parameters must be an object",
            ),
            (
                json!({"contents": [], "tools": [{"functionDeclarations": [{"name": "f"}]}],
                "toolConfig": {"functionCallingConfig": {"mode": "SOMETIMES"}}}),
                "mode",
            ),
            (
                json!({"contents": [], "generationConfig": {"temperature": "hot"}}),
                "temperature must be a number",
            ),
            (
                json!({"contents": [], "generationConfig": {"stopSequences": "END"}}),
                "stopSequences",
            ),
            (
                json!({"contents": [], "generationConfig": {"candidateCount": 0}}),
                "candidateCount",
            ),
            (
                json!({"contents": [], "generationConfig": {"responseMimeType": "text/x.enum"}}),
                "responseMimeType",
            ),
            (
                json!({"contents": [], "generationConfig": {"thinkingConfig": {"thinkingBudget": "lots"}}}),
                "thinkingBudget",
            ),
            (
                json!({"contents": [], "systemInstruction": 5}),
                "systemInstruction",
            ),
        ] {
            let m = refused(body.clone());
            assert!(m.contains(needle), "{body}: {m}");
        }
        let not_object = RelayRequest {
            body: json!([1]),
            ..gemini(json!({"contents": []}), false)
        };
        assert!(matches!(
            chat_request(&not_object),
            Err(RelayError::InvalidRequest(_))
        ));
    }

    #[test]
    fn answers_become_generate_content_responses() {
        let req = gemini(json!({"contents": []}), false);
        let body = json!({
            "id": "chatcmpl-abc", "object": "chat.completion", "model": "gpt-4o-2024",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Let me look.", "reasoning_content": "Hmm.",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "now", "arguments": "not json"}}
                ]
            }}, {"index": 1, "finish_reason": "length", "message": {"role": "assistant", "content": "Other"}}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 15, "total_tokens": 35,
                "prompt_tokens_details": {"cached_tokens": 8},
                "completion_tokens_details": {"reasoning_tokens": 5}}
        });
        let a = answer(&req, body.to_string().as_bytes()).unwrap();
        let v: Value = serde_json::from_slice(&a.body).unwrap();
        assert_eq!(
            v,
            json!({
                "candidates": [{
                    "content": {"role": "model", "parts": [
                        {"text": "Hmm.", "thought": true},
                        {"text": "Let me look."},
                        {"functionCall": {"id": "call_1", "name": "lookup", "args": {"q": "x"}}},
                        {"functionCall": {"id": "call_2", "name": "now", "args": {}}}
                    ]},
                    "finishReason": "STOP", "index": 0
                }, {
                    "content": {"role": "model", "parts": [{"text": "Other"}]},
                    "finishReason": "MAX_TOKENS", "index": 1
                }],
                "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 10,
                    "totalTokenCount": 35, "thoughtsTokenCount": 5, "cachedContentTokenCount": 8},
                "modelVersion": "gpt-4o-2024", "responseId": "chatcmpl-abc"
            })
        );
        let u = a.usage.unwrap();
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.cached_tokens),
            (20, 15, 8)
        );

        let bare =
            json!({"choices": [{"message": {"content": "hi"}, "finish_reason": "content_filter"}]});
        let v: Value =
            serde_json::from_slice(&answer(&req, bare.to_string().as_bytes()).unwrap().body)
                .unwrap();
        assert_eq!(
            v,
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]},
                "finishReason": "SAFETY", "index": 0}],
                "modelVersion": "gemini-2.5-pro", "responseId": ""})
        );
        assert!(answer(&req, b"nope").is_err());
        assert!(answer(&req, br#"{"choices": []}"#).is_err());
    }

    fn chunk(delta: Value, finish: Value) -> String {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    }

    /// The output for `upstream` fed whole, checked the same at every split point.
    fn translate(upstream: &str) -> String {
        let bytes = upstream.as_bytes();
        let mut whole: Option<String> = None;
        for split in 0..=bytes.len() {
            let mut s = GeminiClientStream::new("gemini-2.5-pro");
            let mut out = Vec::new();
            s.feed(&bytes[..split], &mut out);
            s.feed(&bytes[split..], &mut out);
            s.finish(&mut out);
            let text = String::from_utf8(out).unwrap();
            match &whole {
                None => whole = Some(text),
                Some(w) => assert_eq!(&text, w, "split at {split}"),
            }
        }
        whole.unwrap()
    }

    const USAGE: &str = "data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\n";

    #[test]
    fn text_streams_become_sse_events() {
        let mut upstream = String::new();
        upstream += &chunk(json!({"role": "assistant", "content": ""}), Value::Null);
        upstream += &chunk(json!({"reasoning_content": "Hmm"}), Value::Null);
        upstream += &chunk(json!({"content": "Hi"}), Value::Null);
        upstream += &chunk(json!({"content": " there"}), Value::Null);
        upstream += &chunk(json!({}), json!("stop"));
        upstream += USAGE;
        upstream += "data: [DONE]\n\n";
        let head = r#"{"candidates":[{"content":{"role":"model","parts":"#;
        let tail = r#","modelVersion":"gpt-4o","responseId":"chatcmpl-1"}"#;
        assert_eq!(
            translate(&upstream),
            format!(
                "data: {head}[{{\"text\":\"Hmm\",\"thought\":true}}]}},\"index\":0}}]{tail}\n\n\
                 data: {head}[{{\"text\":\"Hi\"}}]}},\"index\":0}}]{tail}\n\n\
                 data: {head}[{{\"text\":\" there\"}}]}},\"index\":0}}]{tail}\n\n\
                 data: {head}[]}},\"finishReason\":\"STOP\",\"index\":0}}],\
                 \"usageMetadata\":{{\"promptTokenCount\":9,\"candidatesTokenCount\":4,\"totalTokenCount\":13}}{tail}\n\n"
            )
        );
    }

    #[test]
    fn tool_calls_are_gathered_into_one_part() {
        let mut upstream = String::new();
        upstream += &chunk(
            json!({"role": "assistant", "content": "Looking."}),
            Value::Null,
        );
        upstream += &chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": ""}}]}),
            Value::Null,
        );
        upstream += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\":"}}]}),
            Value::Null,
        );
        upstream += &chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "function": {"name": "now", "arguments": "{}"}}]}),
            Value::Null,
        );
        upstream += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"x\"}"}}]}),
            Value::Null,
        );
        upstream += &chunk(json!({}), json!("tool_calls"));
        upstream += USAGE;
        upstream += "data: [DONE]\n\n";
        let out = translate(&upstream);
        let events: Vec<Value> = out
            .split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| serde_json::from_str(e.strip_prefix("data: ").unwrap()).unwrap())
            .collect();
        assert_eq!(events.len(), 2);
        assert_eq!(
            events[0]["candidates"][0]["content"]["parts"],
            json!([{"text": "Looking."}])
        );
        assert_eq!(
            events[1],
            json!({
                "candidates": [{"content": {"role": "model", "parts": [
                    {"functionCall": {"id": "call_1", "name": "lookup", "args": {"q": "x"}}},
                    {"functionCall": {"id": "call_2", "name": "now", "args": {}}}
                ]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 4, "totalTokenCount": 13},
                "modelVersion": "gpt-4o", "responseId": "chatcmpl-1"
            })
        );
    }

    #[test]
    fn streams_end_cleanly_only_after_a_finish_reason() {
        // Cut off before a finish reason: no last event (the client sees an incomplete answer).
        let cut = chunk(json!({"content": "Hi"}), Value::Null);
        assert_eq!(translate(&cut).matches("data: ").count(), 1);
        assert!(!translate(&cut).contains("finishReason"));
        // A finish reason and a clean end without [DONE]: the last event is written.
        let ended = cut.clone() + &chunk(json!({}), json!("length"));
        let out = translate(&ended);
        assert!(out.ends_with(
            "\"finishReason\":\"MAX_TOKENS\",\"index\":0}],\"modelVersion\":\"gpt-4o\",\"responseId\":\"chatcmpl-1\"}\n\n"
        ));
        assert_eq!(out.matches("finishReason").count(), 1);
    }

    #[test]
    fn stream_errors_become_google_errors() {
        let upstream = chunk(json!({"content": "Hi"}), Value::Null)
            + "data: {\"error\":{\"message\":\"slow down\",\"type\":\"rate_limit_error\"}}\n\n"
            + &chunk(json!({"content": "late"}), Value::Null)
            + "data: [DONE]\n\n";
        let out = translate(&upstream);
        assert!(out.ends_with(
            "data: {\"error\":{\"code\":429,\"message\":\"slow down\",\"status\":\"RESOURCE_EXHAUSTED\"}}\n\n"
        ));
        assert!(!out.contains("late") && !out.contains("finishReason"));
        let out = translate("data: {\"error\":{\"message\":\"boom\"}}\n\n");
        assert_eq!(
            out,
            "data: {\"error\":{\"code\":500,\"message\":\"boom\",\"status\":\"INTERNAL\"}}\n\n"
        );
    }
}
