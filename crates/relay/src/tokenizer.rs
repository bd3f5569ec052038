//! Token counting with tiktoken (BPE tables embedded in the binary, no network): the prompt
//! estimate that is reserved before the upstream call, and the fallback count of streamed text
//! when an upstream reports no usage.

use crate::bpe::Vocab;
use base64::Engine as _;
use serde_json::Value;

use crate::endpoint::Endpoint;

/// Tokens added per chat message (`<|start|>{role}\n ... <|end|>\n`), OpenAI cookbook.
const TOKENS_PER_MESSAGE: i64 = 3;
/// Extra token when a message carries a `name`.
const TOKENS_PER_NAME: i64 = 1;
/// Every reply is primed with `<|start|>assistant<|message|>`.
const REPLY_PRIMING: i64 = 3;
/// Cost of a `detail: low` image, and the base cost of any other.
const IMAGE_BASE_TOKENS: i64 = 85;
/// Cost of one 512 px tile at high detail.
const IMAGE_TILE_TOKENS: i64 = 170;
/// Estimate for a high/auto detail image whose size we cannot know without downloading it
/// (remote URLs are never fetched on the hot path): 6 tiles + base = 1105, the cost of a 16:9
/// Full-HD picture (1920x1080 scales to 1365x768: 3x2 tiles), a common input and more than a
/// square 1024 px image (765). The reservation errs high; the upstream's usage settles the
/// real cost.
pub const UNKNOWN_IMAGE_TOKENS: i64 = 6 * IMAGE_TILE_TOKENS + IMAGE_BASE_TOKENS;

/// The two encodings in use. Each is built once, on first use, and shared.
/// `Approximate` counts without a BPE table: one token per 3 bytes, rounded up, which is at or
/// above the real count for English (about 4 bytes a token) and CJK (3 bytes a character, about
/// one token each). It serves the reservation on the request path, where an upper estimate is
/// what is needed and the tables (tens of MB, a noticeable build time) are not worth it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Cl100kBase,
    O200kBase,
    Approximate,
}

/// The encoding of `model`: o200k_base for the GPT-4o, GPT-4.1, GPT-4.5, GPT-5, o-series and
/// chatgpt-4o families (an `org/` prefix such as `openai/gpt-4o` is ignored), cl100k_base for
/// everything else, non-OpenAI models included (a fair approximation for an estimate).
pub fn encoding_for(model: &str) -> Encoding {
    let m = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o200k = [
        "gpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-5",
        "chatgpt-4o",
        "gpt-oss",
    ]
    .iter()
    .any(|p| m.starts_with(p))
        || ["o1", "o3", "o4"]
            .iter()
            .any(|p| m == *p || m.starts_with(&format!("{p}-")));
    if o200k {
        Encoding::O200kBase
    } else {
        Encoding::Cl100kBase
    }
}

/// The encoding's vocabulary (compiled in with its rank table; its split pattern is compiled
/// on first use: see [`crate::bpe`]).
fn vocab(encoding: Encoding) -> Option<&'static Vocab> {
    match encoding {
        Encoding::Cl100kBase => crate::bpe::cl100k(),
        Encoding::O200kBase => crate::bpe::o200k(),
        Encoding::Approximate => None,
    }
}

/// Number of tokens of `text` in the encoding of `model`. Special-token markers in the text
/// count as plain text, as they do upstream for user content.
pub fn count_text(model: &str, text: &str) -> i64 {
    count_encoded(encoding_for(model), text)
}

fn count_encoded(encoding: Encoding, text: &str) -> i64 {
    if text.is_empty() {
        return 0;
    }
    if encoding == Encoding::Approximate {
        return (text.len() as i64 + 2) / 3;
    }
    match vocab(encoding) {
        Some(v) => v.count(text) as i64,
        // The embedded tables cannot fail to load; should they, about 4 bytes per token.
        None => (text.len() as i64 + 3) / 4,
    }
}

/// The estimated prompt tokens of a request, reserved before the upstream call:
/// - chat completions: 3 per message + 3, plus the tokens of every message's text (role,
///   string content or its `text` parts, tool calls), 1 more per `name`, images by OpenAI's tile
///   rules (see [`image_tokens`]; a remote image of unknown size counts
///   [`UNKNOWN_IMAGE_TOKENS`] = 1105), plus the JSON text of `tools` / `functions`;
/// - completions: the prompt string(s) (arrays of token ids: their length);
/// - embeddings: the input string(s) (arrays of token ids: their length);
/// - moderations: the input text;
/// - responses: `instructions`, plus `input` as a string or as chat-like items, plus tools;
/// - rerank: the query and the documents;
/// - audio speech: the characters of `input` (TTS is priced per character);
/// - image generations and audio transcriptions/translations: 0 (priced per call or by duration).
pub fn estimate_prompt(model: &str, endpoint: Endpoint, body: &Value) -> i64 {
    estimate_prompt_with(encoding_for(model), endpoint, body)
}

/// [`estimate_prompt`] without a BPE table ([`Encoding::Approximate`] for the text): the
/// reservation estimate of the request path.
pub fn estimate_prompt_fast(endpoint: Endpoint, body: &Value) -> i64 {
    estimate_prompt_with(Encoding::Approximate, endpoint, body)
}

fn estimate_prompt_with(encoding: Encoding, endpoint: Endpoint, body: &Value) -> i64 {
    let mut c = Counter {
        encoding,
        tokens: 0,
    };
    match endpoint {
        Endpoint::ChatCompletions => {
            if let Some(messages) = body.get("messages").and_then(Value::as_array) {
                for m in messages {
                    c.message(m);
                }
            }
            c.tokens += REPLY_PRIMING;
            c.json(body.get("tools"));
            c.json(body.get("functions"));
        }
        Endpoint::Completions => c.inputs(body.get("prompt")),
        Endpoint::Embeddings => c.inputs(body.get("input")),
        Endpoint::Moderations => c.inputs(body.get("input")),
        Endpoint::Responses => {
            if let Some(Value::String(s)) = body.get("instructions") {
                c.push(s);
            }
            match body.get("input") {
                Some(Value::String(s)) => {
                    c.tokens += TOKENS_PER_MESSAGE;
                    c.push(s);
                }
                Some(Value::Array(items)) => {
                    for item in items {
                        c.response_item(item);
                    }
                }
                _ => {}
            }
            c.tokens += REPLY_PRIMING;
            c.json(body.get("tools"));
        }
        Endpoint::Rerank => {
            if let Some(Value::String(q)) = body.get("query") {
                c.push(q);
            }
            if let Some(docs) = body.get("documents").and_then(Value::as_array) {
                for d in docs {
                    match d {
                        Value::String(s) => c.push(s),
                        Value::Object(o) => match o.get("text") {
                            Some(Value::String(s)) => c.push(s),
                            _ => c.json(Some(d)),
                        },
                        _ => {}
                    }
                }
            }
        }
        Endpoint::AudioSpeech => {
            if let Some(Value::String(s)) = body.get("input") {
                return s.chars().count() as i64;
            }
        }
        Endpoint::ImagesGenerations
        | Endpoint::AudioTranscriptions
        | Endpoint::AudioTranslations => return 0,
        Endpoint::Messages => {
            if let Some(system) = body.get("system") {
                c.anthropic_content(system);
            }
            if let Some(messages) = body.get("messages").and_then(Value::as_array) {
                for m in messages {
                    c.tokens += TOKENS_PER_MESSAGE;
                    if let Some(content) = m.get("content") {
                        c.anthropic_content(content);
                    }
                }
            }
            c.tokens += REPLY_PRIMING;
            c.json(body.get("tools"));
        }
        Endpoint::GenerateContent => {
            if let Some(parts) = body
                .pointer("/systemInstruction/parts")
                .and_then(Value::as_array)
            {
                c.gemini_parts(parts);
            }
            if let Some(contents) = body.get("contents").and_then(Value::as_array) {
                for m in contents {
                    c.tokens += TOKENS_PER_MESSAGE;
                    if let Some(parts) = m.get("parts").and_then(Value::as_array) {
                        c.gemini_parts(parts);
                    }
                }
            }
            c.tokens += REPLY_PRIMING;
            c.json(body.get("tools"));
        }
    }
    c.tokens
}

/// Adds up the tokens of text pieces (each encoded on its own, as the cookbook does) and fixed
/// amounts.
struct Counter {
    encoding: Encoding,
    tokens: i64,
}

impl Counter {
    fn push(&mut self, s: &str) {
        self.tokens += count_encoded(self.encoding, s);
    }

    fn json(&mut self, v: Option<&Value>) {
        match v {
            None | Some(Value::Null) => {}
            Some(v) => self.push(&v.to_string()),
        }
    }

    /// A chat message: 3 + its text fields (+1 for `name`).
    fn message(&mut self, m: &Value) {
        self.tokens += TOKENS_PER_MESSAGE;
        let Some(obj) = m.as_object() else {
            return;
        };
        for (key, value) in obj {
            match (key.as_str(), value) {
                ("content", v) => self.content(v),
                ("name", Value::String(s)) => {
                    self.tokens += TOKENS_PER_NAME;
                    self.push(s);
                }
                (_, Value::String(s)) => self.push(s),
                (_, Value::Null | Value::Bool(_) | Value::Number(_)) => {}
                // tool_calls, function_call, audio references: their JSON text.
                (_, v) => self.json(Some(v)),
            }
        }
    }

    /// Anthropic content: a string, or blocks (`text`, `thinking`, `tool_use` (its name and
    /// input), `tool_result` (its content), images at [`UNKNOWN_IMAGE_TOKENS`] each).
    fn anthropic_content(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.push(s),
            Value::Array(blocks) => {
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(Value::String(s)) = b.get("text") {
                                self.push(s);
                            }
                        }
                        Some("thinking") => {
                            if let Some(Value::String(s)) = b.get("thinking") {
                                self.push(s);
                            }
                        }
                        Some("tool_use") => {
                            if let Some(Value::String(s)) = b.get("name") {
                                self.push(s);
                            }
                            self.json(b.get("input"));
                        }
                        Some("tool_result") => {
                            if let Some(c) = b.get("content") {
                                self.anthropic_content(c);
                            }
                        }
                        Some("image" | "document") => self.tokens += UNKNOWN_IMAGE_TOKENS,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// Gemini parts: `text`, function calls and responses (their JSON), inline or file data
    /// (images) at [`UNKNOWN_IMAGE_TOKENS`] each.
    fn gemini_parts(&mut self, parts: &[Value]) {
        for p in parts {
            if let Some(Value::String(s)) = p.get("text") {
                self.push(s);
            }
            self.json(p.get("functionCall"));
            self.json(p.get("functionResponse"));
            if p.get("inlineData").is_some() || p.get("fileData").is_some() {
                self.tokens += UNKNOWN_IMAGE_TOKENS;
            }
        }
    }

    /// Message content: a string, or parts (`text`, `image_url`; Responses `input_text`,
    /// `output_text`, `input_image`). Audio and file parts are not estimated.
    fn content(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.push(s),
            Value::Array(parts) => {
                for p in parts {
                    self.part(p);
                }
            }
            _ => {}
        }
    }

    fn part(&mut self, p: &Value) {
        match p.get("type").and_then(Value::as_str) {
            Some("text" | "input_text" | "output_text") => {
                if let Some(Value::String(s)) = p.get("text") {
                    self.push(s);
                }
            }
            Some("refusal") => {
                if let Some(Value::String(s)) = p.get("refusal") {
                    self.push(s);
                }
            }
            Some("image_url") => {
                // {"image_url": {"url", "detail"}} or the older {"image_url": "..."}.
                let (url, detail) = match p.get("image_url") {
                    Some(Value::String(u)) => (Some(u.as_str()), None),
                    Some(o) => (
                        o.get("url").and_then(Value::as_str),
                        o.get("detail").and_then(Value::as_str),
                    ),
                    None => (None, None),
                };
                self.tokens += image_tokens_for_url(url, detail);
            }
            Some("input_image") => {
                let url = p.get("image_url").and_then(Value::as_str);
                let detail = p.get("detail").and_then(Value::as_str);
                self.tokens += image_tokens_for_url(url, detail);
            }
            _ => {}
        }
    }

    /// Strings, arrays of strings, arrays of token ids, arrays of arrays of token ids, and
    /// moderation's multimodal parts.
    fn inputs(&mut self, v: Option<&Value>) {
        match v {
            Some(Value::String(s)) => self.push(s),
            Some(Value::Array(items)) => {
                for item in items {
                    match item {
                        Value::String(s) => self.push(s),
                        Value::Number(_) => self.tokens += 1,
                        Value::Array(ids) => self.tokens += ids.len() as i64,
                        Value::Object(_) => self.part(item),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// An item of a Responses `input` array: a message (chat-like), a function call or its
    /// output, or anything else counted by its JSON text.
    fn response_item(&mut self, item: &Value) {
        match item.get("type").and_then(Value::as_str) {
            None | Some("message") => self.message(item),
            Some("function_call") => {
                for key in ["name", "arguments"] {
                    if let Some(Value::String(s)) = item.get(key) {
                        self.push(s);
                    }
                }
            }
            Some("function_call_output") => match item.get("output") {
                Some(Value::String(s)) => self.push(s),
                other => self.json(other),
            },
            Some(_) => self.json(Some(item)),
        }
    }
}

/// Tokens of one image input by OpenAI's rules: `low` detail costs 85; `high` and `auto` scale
/// the image to fit 2048x2048, then its shortest side to 768, and cost 170 per 512 px tile + 85.
pub fn image_tokens(width: u32, height: u32, detail: Option<&str>) -> i64 {
    if detail == Some("low") {
        return IMAGE_BASE_TOKENS;
    }
    if width == 0 || height == 0 {
        return IMAGE_BASE_TOKENS;
    }
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    if w > 2048.0 || h > 2048.0 {
        let scale = 2048.0 / w.max(h);
        w *= scale;
        h *= scale;
    }
    if w.min(h) > 768.0 {
        let scale = 768.0 / w.min(h);
        w *= scale;
        h *= scale;
    }
    let tiles = (w / 512.0).ceil() as i64 * (h / 512.0).ceil() as i64;
    IMAGE_TILE_TOKENS * tiles + IMAGE_BASE_TOKENS
}

/// Image tokens for an `image_url`: the real size is read from `data:` URLs (PNG, GIF, JPEG,
/// WebP headers); remote images, whose size is unknown, count [`UNKNOWN_IMAGE_TOKENS`].
fn image_tokens_for_url(url: Option<&str>, detail: Option<&str>) -> i64 {
    if detail == Some("low") {
        return IMAGE_BASE_TOKENS;
    }
    match url.and_then(data_url_dimensions) {
        Some((w, h)) => image_tokens(w, h, detail),
        None => UNKNOWN_IMAGE_TOKENS,
    }
}

/// Width and height of a base64 `data:` URL image, decoding at most its first 64 KiB.
fn data_url_dimensions(url: &str) -> Option<(u32, u32)> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    if !meta.ends_with(";base64") {
        return None;
    }
    // Whole 4-character groups only, so the prefix decodes on its own.
    let take = data.len().min(64 * 1024 / 3 * 4) / 4 * 4;
    let prefix = data.get(..take)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(prefix.trim_end_matches('='))
        .or_else(|_| {
            base64::engine::general_purpose::STANDARD_NO_PAD.decode(prefix.trim_end_matches('='))
        })
        .ok()?;
    image_dimensions(&bytes)
}

/// Width and height from the header of a PNG, GIF, JPEG or WebP image.
pub fn image_dimensions(b: &[u8]) -> Option<(u32, u32)> {
    let be16 = |i: usize| Some(u32::from(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?])));
    let le16 = |i: usize| Some(u32::from(u16::from_le_bytes([*b.get(i)?, *b.get(i + 1)?])));
    let be32 = |i: usize| Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?));
    let le24 = |i: usize| {
        let s = b.get(i..i + 3)?;
        Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
    };
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        return Some((le16(6)?, le16(8)?));
    }
    if b.len() >= 30 && &b[0..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        return match &b[12..16] {
            b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            b"VP8L" => {
                let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
                Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
            }
            _ => None,
        };
    }
    if b.starts_with(&[0xFF, 0xD8]) {
        // Walk the JPEG segments to the first start-of-frame marker.
        let mut i = 2;
        while i + 4 <= b.len() {
            if b[i] != 0xFF {
                return None;
            }
            let marker = b[i + 1];
            if marker == 0xFF {
                i += 1; // fill byte
                continue;
            }
            let len = be16(i + 2)? as usize;
            let is_sof = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
            if is_sof {
                return Some((be16(i + 7)?, be16(i + 5)?));
            }
            i += 2 + len;
        }
    }
    None
}

#[cfg(test)]
mod fast_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gemini_contents_are_counted_like_messages() {
        let chat = json!({"messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Say hello"}
        ]});
        let gemini = json!({
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "contents": [{"role": "user", "parts": [{"text": "Say hello"}]}]
        });
        // One message fewer (the system instruction is not a turn) and no role names; the same
        // text.
        let m = "gemini-2.5-pro";
        assert_eq!(
            estimate_prompt(m, Endpoint::GenerateContent, &gemini),
            estimate_prompt(m, Endpoint::ChatCompletions, &chat)
                - 3
                - count_text(m, "system")
                - count_text(m, "user")
        );
        let image = json!({"contents": [{"role": "user", "parts": [
            {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}
        ]}]});
        assert_eq!(
            estimate_prompt_fast(Endpoint::GenerateContent, &image),
            3 + UNKNOWN_IMAGE_TOKENS + 3
        );
    }

    #[test]
    fn the_fast_estimate_does_not_undercount_text() {
        let body = json!({"messages": [
            {"role": "system", "content": "You are a helpful assistant that answers briefly."},
            {"role": "user", "content": "请用一句话介绍一下你自己，然后告诉我今天的天气怎么样。"},
            {"role": "user", "content": [{"type": "text", "text": "What is in this picture?"}, {"type": "image_url", "image_url": {"url": "https://x.invalid/a.png", "detail": "low"}}]}
        ]});
        let exact = estimate_prompt("gpt-4o", Endpoint::ChatCompletions, &body);
        let fast = estimate_prompt_fast(Endpoint::ChatCompletions, &body);
        assert!(fast >= exact, "fast {fast} < exact {exact}");
        assert!(fast <= exact * 2, "fast {fast} far above exact {exact}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_counts() {
        assert_eq!(count_text("gpt-3.5-turbo", "hello world"), 2);
        assert_eq!(count_text("gpt-4o", "hello world"), 2);
        assert_eq!(count_text("gpt-4", ""), 0);
        // The OpenAI cookbook's comparison of encodings ("How to count tokens with tiktoken").
        assert_eq!(count_text("gpt-4", "tiktoken is great!"), 6);
        assert_eq!(count_text("gpt-4", "antidisestablishmentarianism"), 6);
        assert_eq!(count_text("gpt-4", "2 + 2 = 4"), 7);
        assert_eq!(count_text("gpt-4", "お誕生日おめでとう"), 9);
        assert_eq!(count_text("gpt-4o", "お誕生日おめでとう"), 8);
        // Special-token markers in user text are ordinary text.
        assert!(count_text("gpt-4", "<|endoftext|>") > 1);
    }

    #[test]
    fn encodings_by_family() {
        for m in [
            "gpt-4o",
            "gpt-4o-mini-2024-07-18",
            "gpt-4.1-nano",
            "o1",
            "o3-mini",
            "o4-mini",
            "chatgpt-4o-latest",
            "openai/gpt-4o",
            "gpt-5",
        ] {
            assert_eq!(encoding_for(m), Encoding::O200kBase, "{m}");
        }
        for m in [
            "gpt-4",
            "gpt-4-turbo",
            "gpt-3.5-turbo",
            "text-embedding-3-small",
            "claude-3-5-sonnet",
            "o1x",
            "deepseek-chat",
        ] {
            assert_eq!(encoding_for(m), Encoding::Cl100kBase, "{m}");
        }
    }

    #[test]
    fn chat_estimate_follows_the_cookbook() {
        // 3 messages: 3 * 3 + 3 priming + role/content tokens.
        let body = json!({"model": "gpt-4", "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "hello world"},
            {"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]}
        ]});
        // system 1 + "You are a helpful assistant." 6, user 1 + 2, assistant 1 + "Hi!" 2.
        let text: i64 = [
            "system",
            "You are a helpful assistant.",
            "user",
            "hello world",
            "assistant",
            "Hi!",
        ]
        .iter()
        .map(|s| count_text("gpt-4", s))
        .sum();
        assert_eq!(text, 13);
        assert_eq!(
            estimate_prompt("gpt-4", Endpoint::ChatCompletions, &body),
            9 + 3 + 13
        );

        // A name adds one token plus its text.
        let named = json!({"messages": [{"role": "user", "name": "bob", "content": "hi"}]});
        assert_eq!(
            estimate_prompt("gpt-4", Endpoint::ChatCompletions, &named),
            3 + 3 + 1 + count_text("gpt-4", "user") + 1 + 1
        );
    }

    #[test]
    fn chat_estimate_counts_images_and_tools() {
        let base = json!({"messages": [{"role": "user", "content": []}]});
        let empty = estimate_prompt("gpt-4o", Endpoint::ChatCompletions, &base);
        let with = |part: Value| {
            let body = json!({"messages": [{"role": "user", "content": [part]}]});
            estimate_prompt("gpt-4o", Endpoint::ChatCompletions, &body) - empty
        };
        assert_eq!(
            with(
                json!({"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}})
            ),
            85
        );
        assert_eq!(
            with(json!({"type": "image_url", "image_url": {"url": "https://x/y.png"}})),
            UNKNOWN_IMAGE_TOKENS
        );
        // A 1x1 PNG as a data URL: one tile.
        let png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
        assert_eq!(
            with(json!({"type": "image_url", "image_url": {"url": png, "detail": "high"}})),
            170 + 85
        );

        let tools = json!([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]);
        let body = json!({"messages": [{"role": "user", "content": []}], "tools": tools});
        assert_eq!(
            estimate_prompt("gpt-4o", Endpoint::ChatCompletions, &body),
            empty + count_text("gpt-4o", &tools.to_string())
        );
    }

    #[test]
    fn tile_rules() {
        // OpenAI's worked examples.
        assert_eq!(image_tokens(1024, 1024, Some("high")), 765);
        assert_eq!(image_tokens(2048, 4096, Some("high")), 1105);
        assert_eq!(image_tokens(4096, 8192, Some("low")), 85);
        assert_eq!(image_tokens(512, 512, None), 255);
        assert_eq!(image_tokens(1024, 1024, Some("auto")), 765);
        assert_eq!(image_tokens(1920, 1080, None), UNKNOWN_IMAGE_TOKENS);
        assert_eq!(UNKNOWN_IMAGE_TOKENS, 1105);
    }

    #[test]
    fn image_headers() {
        let mut gif = b"GIF89a".to_vec();
        gif.extend_from_slice(&[0x20, 0x03, 0x58, 0x02]);
        assert_eq!(image_dimensions(&gif), Some((800, 600)));

        // A JPEG with an APP0 segment before SOF0 (height 480, width 640).
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01,
            0xE0, 0x02, 0x80, 0x03,
        ];
        assert_eq!(image_dimensions(&jpeg), Some((640, 480)));

        let mut webp = b"RIFF\0\0\0\0WEBPVP8X".to_vec();
        webp.extend_from_slice(&[0; 8]);
        webp.extend_from_slice(&[0xFF, 0x03, 0x00, 0xFF, 0x01, 0x00]); // 1024 x 512
        webp.extend_from_slice(&[0; 4]);
        assert_eq!(image_dimensions(&webp), Some((1024, 512)));
        assert_eq!(image_dimensions(b"not an image"), None);
    }

    #[test]
    fn other_endpoints() {
        let m = "text-embedding-3-small";
        assert_eq!(
            estimate_prompt(m, Endpoint::Embeddings, &json!({"input": "hello world"})),
            2
        );
        assert_eq!(
            estimate_prompt(m, Endpoint::Embeddings, &json!({"input": [[1, 2, 3], [4]]})),
            4
        );
        assert_eq!(
            estimate_prompt(m, Endpoint::Embeddings, &json!({"input": [1, 2, 3]})),
            3
        );
        assert_eq!(
            estimate_prompt(
                "gpt-3.5-turbo-instruct",
                Endpoint::Completions,
                &json!({"prompt": ["hello world", "hello world"]})
            ),
            4
        );
        assert_eq!(
            estimate_prompt(
                "omni-moderation-latest",
                Endpoint::Moderations,
                &json!({"input": [{"type": "text", "text": "hello world"}]})
            ),
            2
        );
        assert_eq!(
            estimate_prompt("tts-1", Endpoint::AudioSpeech, &json!({"input": "héllo"})),
            5
        );
        assert_eq!(
            estimate_prompt(
                "dall-e-3",
                Endpoint::ImagesGenerations,
                &json!({"prompt": "a cat"})
            ),
            0
        );
        assert_eq!(
            estimate_prompt(
                "rerank-v3",
                Endpoint::Rerank,
                &json!({"query": "hello", "documents": ["world", {"text": "x"}]})
            ),
            3
        );
    }

    #[test]
    fn responses_estimate() {
        let s = estimate_prompt(
            "gpt-4o",
            Endpoint::Responses,
            &json!({"input": "hello world", "instructions": "Be brief."}),
        );
        assert_eq!(s, 3 + 3 + count_text("gpt-4o", "Be brief.") + 2);

        let items = estimate_prompt(
            "gpt-4o",
            Endpoint::Responses,
            &json!({"input": [
                {"role": "user", "content": [{"type": "input_text", "text": "hello world"}, {"type": "input_image", "image_url": "https://x", "detail": "low"}]},
                {"type": "function_call_output", "call_id": "c1", "output": "42"}
            ]}),
        );
        assert_eq!(items, 3 + 3 + 85 + 1 + 2 + 1);
    }
}
