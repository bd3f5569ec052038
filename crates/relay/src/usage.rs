//! Token usage reported by OpenAI-protocol upstreams.

use serde_json::Value;

pub use switchboard_domain::price::Usage;

/// The usage in an OpenAI-protocol response or stream event, if it reports one:
/// - chat completions / completions / embeddings: `usage.prompt_tokens`, `completion_tokens`
///   (embeddings: `total_tokens - prompt_tokens`, i.e. 0), `prompt_tokens_details.cached_tokens`
///   and `.audio_tokens`, `completion_tokens_details.reasoning_tokens` and `.audio_tokens`;
///   vendors that report cache hits elsewhere are read too (DeepSeek's
///   `prompt_cache_hit_tokens`, Moonshot's top-level `cached_tokens`);
/// - the Responses API: `usage.input_tokens`, `output_tokens`,
///   `input_tokens_details.cached_tokens`, `output_tokens_details.reasoning_tokens`, at the top
///   level of a response or under `response` in stream events (`response.completed`, ...);
///   gpt-image-1's image answers report the same shape;
/// - in both shapes, the modality split where the upstream gives it: `text_tokens` and
///   `image_tokens` of the prompt and completion details (priced with the text and image extra
///   ratios).
///
/// Prompt and completion counts are the upstream's totals: cached, audio and reasoning tokens
/// are parts of them, kept for pricing (which adds only their extra ratio, never the count
/// again). A `usage` that is null or has no token counts gives `None`.
pub fn from_openai(v: &Value) -> Option<Usage> {
    let usage = match v.get("usage") {
        Some(u) if u.is_object() => u,
        _ => v.get("response")?.get("usage").filter(|u| u.is_object())?,
    };
    if usage.get("input_tokens").is_some() || usage.get("output_tokens").is_some() {
        return Some(Usage {
            prompt_tokens: int(usage, &["input_tokens"]),
            completion_tokens: int(usage, &["output_tokens"]),
            cached_tokens: int(usage, &["input_tokens_details", "cached_tokens"]),
            input_audio_tokens: int(usage, &["input_tokens_details", "audio_tokens"]),
            reasoning_tokens: int(usage, &["output_tokens_details", "reasoning_tokens"]),
            output_audio_tokens: int(usage, &["output_tokens_details", "audio_tokens"]),
            input_text_tokens: int(usage, &["input_tokens_details", "text_tokens"]),
            input_image_tokens: int(usage, &["input_tokens_details", "image_tokens"]),
            output_text_tokens: int(usage, &["output_tokens_details", "text_tokens"]),
            output_image_tokens: int(usage, &["output_tokens_details", "image_tokens"]),
            ..Usage::default()
        });
    }
    if usage.get("prompt_tokens").is_none()
        && usage.get("completion_tokens").is_none()
        && usage.get("total_tokens").is_none()
    {
        return None;
    }
    let prompt = int(usage, &["prompt_tokens"]);
    let completion = match usage.get("completion_tokens") {
        Some(_) => int(usage, &["completion_tokens"]),
        None => (int(usage, &["total_tokens"]) - prompt).max(0),
    };
    let mut cached = int(usage, &["prompt_tokens_details", "cached_tokens"]);
    if cached == 0 {
        cached = int(usage, &["prompt_cache_hit_tokens"]).max(int(usage, &["cached_tokens"]));
    }
    Some(Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: cached,
        input_audio_tokens: int(usage, &["prompt_tokens_details", "audio_tokens"]),
        reasoning_tokens: int(usage, &["completion_tokens_details", "reasoning_tokens"]),
        output_audio_tokens: int(usage, &["completion_tokens_details", "audio_tokens"]),
        input_text_tokens: int(usage, &["prompt_tokens_details", "text_tokens"]),
        input_image_tokens: int(usage, &["prompt_tokens_details", "image_tokens"]),
        output_text_tokens: int(usage, &["completion_tokens_details", "text_tokens"]),
        output_image_tokens: int(usage, &["completion_tokens_details", "image_tokens"]),
        ..Usage::default()
    })
}

/// The usage of an image generation answer: what the answer's tokens are when the upstream
/// does not split them (gpt-image-1 reports `output_tokens` without details, and every one of
/// them is an image token, as OpenAI documents).
pub fn of_image_answer(mut u: Usage) -> Usage {
    if u.output_image_tokens == 0 && u.output_text_tokens == 0 {
        u.output_image_tokens = u.completion_tokens;
    }
    u
}

/// [`from_openai`] on a raw response body, without building the document: the `usage` (or
/// `response.usage`) member is read straight into its counts, everything else is skipped. Reads
/// exactly what [`from_openai`] reads from the parsed document (the differential tests below
/// hold it to that). This runs on every non-streamed answer. `None` when the body is not a JSON
/// object or reports no usage.
///
/// The object's members are found by [`scan::members`], a walk over the bytes that checks what
/// it skips as serde_json does but builds nothing and compares no key but the top-level ones.
/// A `usage` in the plain form upstreams send (integer counts) is read by
/// [`typed::RawUsage::plain`]; any other `usage`, and a `response`, by serde. A body the walk
/// does not take (not an object, an escaped top-level key, nesting deeper than 64, anything
/// serde_json would refuse) is read by serde in full ([`from_openai_bytes_in_full`]), which
/// decides it as before. Before (serde over the whole body): ~11,200 instructions a chat
/// answer under `bench/instructions.py`; this way ~2,500.
pub fn from_openai_bytes(body: &[u8]) -> Option<Usage> {
    let Some(members) = scan::members(body) else {
        return from_openai_bytes_in_full(body);
    };
    let usage = match members.usage {
        Some(r) => match typed::RawUsage::plain(&body[r.clone()]) {
            Some(u) => Some(typed::UsageObject(Some(u))),
            None => member(body, Some(r))?,
        },
        None => None,
    };
    let response: Option<Inner> = member(body, members.response)?;
    usage_of(usage, response)
}

/// The value of a top-level member found by [`scan::members`] (`None` inside: absent or
/// null); `None` outside when serde refuses it, as it would refuse the whole body.
fn member<'de, T: serde::Deserialize<'de>>(
    body: &'de [u8],
    at: Option<std::ops::Range<usize>>,
) -> Option<Option<T>> {
    match at {
        None => Some(None),
        Some(r) => serde_json::from_slice(&body[r]).ok(),
    }
}

/// The `response` member of a Responses stream event: only its `usage` is read.
#[derive(serde::Deserialize)]
struct Inner {
    #[serde(default)]
    usage: Option<typed::UsageObject>,
}

/// The top-level `usage` when it is an object, else `response.usage`.
fn usage_of(usage: Option<typed::UsageObject>, response: Option<Inner>) -> Option<Usage> {
    let u = match usage {
        Some(typed::UsageObject(Some(u))) => u,
        _ => response?.usage?.0?,
    };
    u.usage()
}

/// [`from_openai_bytes`] with the whole body read by serde (skipping the other members with
/// `IgnoredAny`): the reading for bodies [`scan::members`] does not take, and the one the
/// walk is held to in the tests.
fn from_openai_bytes_in_full(body: &[u8]) -> Option<Usage> {
    #[derive(serde::Deserialize)]
    struct Holder {
        #[serde(default)]
        usage: Option<typed::UsageObject>,
        #[serde(default)]
        response: Option<Inner>,
    }
    let h: Holder = serde_json::from_slice(body).ok()?;
    usage_of(h.usage, h.response)
}

/// The top-level members of a JSON object, found without parsing it.
mod scan {
    use std::ops::Range;

    /// Where the values of the top-level `usage` and `response` members are (absent: `None`).
    #[derive(Debug, PartialEq)]
    pub struct Members {
        pub usage: Option<Range<usize>>,
        pub response: Option<Range<usize>>,
    }

    /// Nesting the walk follows (serde_json's own limit is 128): deeper bodies are left to it.
    const MAX_DEPTH: u32 = 64;

    /// The members of `body` when it is a JSON object that serde_json's reading of the
    /// answer accepts, but for the values of `usage` and `response`, which are only measured
    /// here and then read by serde: whitespace, literals, numbers, strings (no control
    /// characters, valid escapes), brackets that match and nothing after the object, checked
    /// by serde_json's rules for values it skips. Top-level keys must be plain (no escape)
    /// UTF-8, and `usage` and `response` may each appear once (serde refuses a repeated
    /// field). `None` for anything else, which the caller then hands to serde whole: so a
    /// `None` here never changes an answer, and a `Some` must only be given for documents
    /// serde accepts where it accepts the two members.
    pub fn members(body: &[u8]) -> Option<Members> {
        let mut s = Walk { b: body, i: 0 };
        let mut m = Members {
            usage: None,
            response: None,
        };
        s.ws();
        s.eat(b'{')?;
        s.ws();
        if s.peek()? == b'}' {
            s.i += 1;
        } else {
            loop {
                s.eat(b'"')?;
                let start = s.i;
                s.string()?;
                let key = &body[start..s.i - 1];
                if key.contains(&b'\\') || !(key.is_ascii() || std::str::from_utf8(key).is_ok()) {
                    return None;
                }
                s.ws();
                s.eat(b':')?;
                s.ws();
                let at = s.i;
                let slot = match key {
                    b"usage" => Some(&mut m.usage),
                    b"response" => Some(&mut m.response),
                    _ => None,
                };
                // The two members serde reads are only measured here (it checks them); the
                // rest is checked as serde would skip it.
                if slot.is_some() {
                    s.extent()?;
                } else {
                    s.value()?;
                }
                if slot.is_some_and(|slot| slot.replace(at..s.i).is_some()) {
                    // A repeated field, which serde refuses.
                    return None;
                }
                s.ws();
                match s.next()? {
                    b',' => s.ws(),
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        s.ws();
        (s.i == body.len()).then_some(m)
    }

    struct Walk<'a> {
        b: &'a [u8],
        i: usize,
    }

    impl Walk<'_> {
        fn peek(&self) -> Option<u8> {
            self.b.get(self.i).copied()
        }

        fn next(&mut self) -> Option<u8> {
            let c = self.peek()?;
            self.i += 1;
            Some(c)
        }

        fn eat(&mut self, c: u8) -> Option<()> {
            (self.next()? == c).then_some(())
        }

        /// JSON's whitespace (serde_json's: space, tab, line feed, carriage return).
        fn ws(&mut self) {
            while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
                self.i += 1;
            }
        }

        /// One value of any kind (with what it contains), iteratively; the stack of open
        /// containers is a bit each (1: object, 0: array).
        fn value(&mut self) -> Option<()> {
            let mut open: u64 = 0;
            let mut depth: u32 = 0;
            loop {
                // A value.
                match self.next()? {
                    b'"' => self.string()?,
                    c @ (b'{' | b'[') => {
                        depth += 1;
                        if depth > MAX_DEPTH {
                            return None;
                        }
                        let object = c == b'{';
                        open = open << 1 | u64::from(object);
                        self.ws();
                        let empty = self.peek()? == if object { b'}' } else { b']' };
                        if empty {
                            self.i += 1;
                            depth -= 1;
                            open >>= 1;
                        } else {
                            if object {
                                self.key()?;
                            }
                            continue;
                        }
                    }
                    b't' => self.literal(b"rue")?,
                    b'f' => self.literal(b"alse")?,
                    b'n' => self.literal(b"ull")?,
                    b'-' => self.number(None)?,
                    c @ b'0'..=b'9' => self.number(Some(c))?,
                    _ => return None,
                }
                // After a value: close what ends here, up to a comma before the next one.
                loop {
                    if depth == 0 {
                        return Some(());
                    }
                    let object = open & 1 == 1;
                    self.ws();
                    match self.next()? {
                        b',' => {
                            self.ws();
                            if object {
                                self.key()?;
                            }
                            break;
                        }
                        b'}' if object => {}
                        b']' if !object => {}
                        _ => return None,
                    }
                    depth -= 1;
                    open >>= 1;
                }
            }
        }

        /// Past one value without checking it: a string to its closing quote, a container to
        /// its matching bracket (counting brackets outside strings), anything else to the next
        /// delimiter. For a valid document that is where the value ends; serde then reads
        /// the value, so one that is not valid is refused there, as it would be in full (a
        /// value serde accepts, between a prefix and a rest the walk checked, makes a valid
        /// document however its end was found).
        fn extent(&mut self) -> Option<()> {
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    self.string_end()
                }
                b'{' | b'[' => {
                    let mut depth = 0u32;
                    loop {
                        match self.next()? {
                            b'"' => self.string_end()?,
                            b'{' | b'[' => depth += 1,
                            b'}' | b']' => {
                                depth -= 1;
                                if depth == 0 {
                                    return Some(());
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {
                    let from = self.i;
                    while let Some(c) = self.peek() {
                        if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\t' | b'\r') {
                            break;
                        }
                        self.i += 1;
                    }
                    (self.i > from).then_some(())
                }
            }
        }

        /// Past the rest of a string without checking it: to the first quote no backslash
        /// escapes.
        fn string_end(&mut self) -> Option<()> {
            loop {
                let at = self.i + memchr::memchr2(b'"', b'\\', &self.b[self.i..])?;
                self.i = at + 1;
                if self.b[at] == b'"' {
                    return Some(());
                }
                self.i += 1;
            }
        }

        /// A member's key and its colon, with the whitespace after it.
        fn key(&mut self) -> Option<()> {
            self.eat(b'"')?;
            self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            Some(())
        }

        /// The rest of a literal whose first letter was read.
        fn literal(&mut self, rest: &[u8]) -> Option<()> {
            let end = self.i + rest.len();
            (self.b.get(self.i..end)? == rest).then_some(())?;
            self.i = end;
            Some(())
        }

        /// A number by JSON's grammar (serde_json's `ignore_integer`): `first` is its first
        /// digit, or `None` after a minus sign.
        fn number(&mut self, first: Option<u8>) -> Option<()> {
            let first = match first {
                Some(c) => c,
                None => self.next()?,
            };
            match first {
                b'0' => {
                    if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        return None;
                    }
                }
                b'1'..=b'9' => self.digits(),
                _ => return None,
            }
            if self.peek() == Some(b'.') {
                self.i += 1;
                let from = self.i;
                self.digits();
                if self.i == from {
                    return None;
                }
            }
            if let Some(b'e' | b'E') = self.peek() {
                self.i += 1;
                if let Some(b'+' | b'-') = self.peek() {
                    self.i += 1;
                }
                let from = self.i;
                self.digits();
                if self.i == from {
                    return None;
                }
            }
            Some(())
        }

        fn digits(&mut self) {
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
        }

        /// The rest of a string after its opening quote, up to and with its closing one:
        /// valid escapes (`\uXXXX` with four hex digits, any value, as serde_json skips them),
        /// no control characters.
        fn string(&mut self) -> Option<()> {
            loop {
                self.plain();
                match self.next()? {
                    b'"' => return Some(()),
                    b'\\' => match self.next()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            let end = self.i + 4;
                            if !self.b.get(self.i..end)?.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.i = end;
                        }
                        _ => return None,
                    },
                    _ => return None,
                }
            }
        }

        /// Past the bytes of a string that need no look: up to a quote, a backslash, a
        /// control character or the end, eight bytes at a time. In each word the lowest byte
        /// flagged is exact (a borrow only runs upwards from a byte that is flagged itself).
        fn plain(&mut self) {
            const ONE: u64 = 0x0101_0101_0101_0101;
            const HIGH: u64 = 0x8080_8080_8080_8080;
            // Most strings of an answer are keys and short values: a byte at a time first.
            let stop = |c: u8| c == b'"' || c == b'\\' || c < 0x20;
            let short = self.b.len().min(self.i + 16);
            while self.i < short {
                if stop(self.b[self.i]) {
                    return;
                }
                self.i += 1;
            }
            let rest = &self.b[self.i..];
            let mut words = rest.chunks_exact(8);
            let mut at = 0;
            for w in &mut words {
                let x = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
                let quote = x ^ (ONE * u64::from(b'"'));
                let slash = x ^ (ONE * u64::from(b'\\'));
                let flagged = ((quote.wrapping_sub(ONE) & !quote)
                    | (slash.wrapping_sub(ONE) & !slash)
                    | (x.wrapping_sub(ONE * 0x20) & !x))
                    & HIGH;
                if flagged != 0 {
                    self.i += at + (flagged.trailing_zeros() / 8) as usize;
                    return;
                }
                at += 8;
            }
            for &c in words.remainder() {
                if stop(c) {
                    break;
                }
                at += 1;
            }
            self.i += at;
        }
    }
}

/// The typed reading of a `usage` object for [`from_openai_bytes`], with [`int`]'s rules: a
/// count is a number's integer value (a float truncated), 0 when negative, absent, null or not
/// a number; a details member that is not an object counts zeros; a repeated key counts its
/// last value (as a parsed document keeps it).
mod typed {
    use std::fmt;

    use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

    use super::Usage;

    /// A count, and whether its key was there at all (even as null).
    #[derive(Clone, Copy, Default)]
    pub struct Count {
        present: bool,
        n: i64,
    }

    impl<'de> Deserialize<'de> for Count {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = i64;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_i64<E>(self, v: i64) -> Result<i64, E> {
                    Ok(v.max(0))
                }
                fn visit_u64<E>(self, v: u64) -> Result<i64, E> {
                    Ok(i64::try_from(v).unwrap_or(i64::MAX))
                }
                fn visit_f64<E>(self, v: f64) -> Result<i64, E> {
                    Ok((v as i64).max(0))
                }
                fn visit_bool<E>(self, _: bool) -> Result<i64, E> {
                    Ok(0)
                }
                fn visit_str<E>(self, _: &str) -> Result<i64, E> {
                    Ok(0)
                }
                fn visit_unit<E>(self) -> Result<i64, E> {
                    Ok(0)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<i64, A::Error> {
                    Count::visit_seq_as_zero(a).map(|()| 0)
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<i64, A::Error> {
                    while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(0)
                }
            }
            d.deserialize_any(V).map(|n| Count { present: true, n })
        }
    }

    /// The visitor methods of every JSON scalar (number, boolean, string, null), each giving
    /// `$value`: a member that is not an object reads as zeros.
    macro_rules! scalars_are {
        ($value:expr) => {
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok($value)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok($value)
            }
        };
    }

    /// The keys of a details member that count.
    #[derive(serde::Deserialize)]
    #[serde(field_identifier, rename_all = "snake_case")]
    enum DetailKey {
        CachedTokens,
        AudioTokens,
        TextTokens,
        ImageTokens,
        ReasoningTokens,
        #[serde(other)]
        Other,
    }

    /// `*_tokens_details`: zeros unless it is an object.
    #[derive(Clone, Copy, Default)]
    pub struct Details {
        cached: i64,
        audio: i64,
        text: i64,
        image: i64,
        reasoning: i64,
    }

    impl<'de> Deserialize<'de> for Details {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Details, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Details;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Details, A::Error> {
                    let mut out = Details::default();
                    while let Some(key) = a.next_key::<DetailKey>()? {
                        let slot = match key {
                            DetailKey::CachedTokens => &mut out.cached,
                            DetailKey::AudioTokens => &mut out.audio,
                            DetailKey::TextTokens => &mut out.text,
                            DetailKey::ImageTokens => &mut out.image,
                            DetailKey::ReasoningTokens => &mut out.reasoning,
                            DetailKey::Other => {
                                a.next_value::<IgnoredAny>()?;
                                continue;
                            }
                        };
                        *slot = a.next_value::<Count>()?.n;
                    }
                    Ok(out)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Details, A::Error> {
                    Count::visit_seq_as_zero(a).map(|_| Details::default())
                }
                scalars_are!(Details::default());
            }
            d.deserialize_any(V)
        }
    }

    impl Count {
        fn visit_seq_as_zero<'de, A: SeqAccess<'de>>(mut a: A) -> Result<(), A::Error> {
            while a.next_element::<IgnoredAny>()?.is_some() {}
            Ok(())
        }
    }

    /// A reader of [`RawUsage::plain`]'s form.
    struct Plain<'a> {
        b: &'a [u8],
        i: usize,
    }

    impl Plain<'_> {
        fn ws(&mut self) {
            while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.b.get(self.i) {
                self.i += 1;
            }
        }

        fn eat(&mut self, c: u8) -> Option<()> {
            (*self.b.get(self.i)? == c).then(|| self.i += 1)
        }

        /// An object whose keys are letters, digits and underscores; `value` reads each
        /// member's value (given the key) and the whitespace around it is skipped here.
        fn members(&mut self, mut value: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
            self.ws();
            self.eat(b'{')?;
            self.ws();
            if self.eat(b'}').is_some() {
                return Some(());
            }
            loop {
                self.eat(b'"')?;
                let from = self.i;
                while self.b.get(self.i)?.is_ascii_alphanumeric() || self.b[self.i] == b'_' {
                    self.i += 1;
                }
                let key = &self.b[from..self.i];
                self.eat(b'"')?;
                self.ws();
                self.eat(b':')?;
                self.ws();
                value(self, key)?;
                self.ws();
                match *self.b.get(self.i)? {
                    b',' => self.i += 1,
                    b'}' => {
                        self.i += 1;
                        return Some(());
                    }
                    _ => return None,
                }
                self.ws();
            }
        }

        /// `0` or a non-negative integer of up to 18 digits without a leading zero, not
        /// followed by a fraction or an exponent.
        fn integer(&mut self) -> Option<i64> {
            let from = self.i;
            let mut n: i64 = 0;
            while let Some(c @ b'0'..=b'9') = self.b.get(self.i).copied() {
                if self.i - from == 18 {
                    return None;
                }
                n = n * 10 + i64::from(c - b'0');
                self.i += 1;
            }
            let digits = self.i - from;
            let leading_zero = digits > 1 && self.b[from] == b'0';
            let more = matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E'));
            (digits > 0 && !leading_zero && !more).then_some(n)
        }
    }

    /// The keys of a `usage` object that count.
    #[derive(serde::Deserialize)]
    #[serde(field_identifier, rename_all = "snake_case")]
    enum UsageKey {
        InputTokens,
        OutputTokens,
        PromptTokens,
        CompletionTokens,
        TotalTokens,
        PromptCacheHitTokens,
        CachedTokens,
        PromptTokensDetails,
        CompletionTokensDetails,
        InputTokensDetails,
        OutputTokensDetails,
        #[serde(other)]
        Other,
    }

    /// A `usage` object's counts.
    #[derive(Default)]
    pub struct RawUsage {
        input: Count,
        output: Count,
        prompt: Count,
        completion: Count,
        total: Count,
        prompt_cache_hit: Count,
        cached: Count,
        prompt_details: Details,
        completion_details: Details,
        input_details: Details,
        output_details: Details,
    }

    /// A `usage` member: its counts when it is an object, `None` for any other value.
    pub struct UsageObject(pub Option<RawUsage>);

    impl<'de> Deserialize<'de> for UsageObject {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<UsageObject, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = UsageObject;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<UsageObject, A::Error> {
                    let mut u = RawUsage::default();
                    while let Some(key) = a.next_key::<UsageKey>()? {
                        let count = match key {
                            UsageKey::InputTokens => &mut u.input,
                            UsageKey::OutputTokens => &mut u.output,
                            UsageKey::PromptTokens => &mut u.prompt,
                            UsageKey::CompletionTokens => &mut u.completion,
                            UsageKey::TotalTokens => &mut u.total,
                            UsageKey::PromptCacheHitTokens => &mut u.prompt_cache_hit,
                            UsageKey::CachedTokens => &mut u.cached,
                            UsageKey::PromptTokensDetails
                            | UsageKey::CompletionTokensDetails
                            | UsageKey::InputTokensDetails
                            | UsageKey::OutputTokensDetails => {
                                let details = match key {
                                    UsageKey::PromptTokensDetails => &mut u.prompt_details,
                                    UsageKey::CompletionTokensDetails => &mut u.completion_details,
                                    UsageKey::InputTokensDetails => &mut u.input_details,
                                    _ => &mut u.output_details,
                                };
                                *details = a.next_value::<Details>()?;
                                continue;
                            }
                            UsageKey::Other => {
                                a.next_value::<IgnoredAny>()?;
                                continue;
                            }
                        };
                        *count = a.next_value::<Count>()?;
                    }
                    Ok(UsageObject(Some(u)))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<UsageObject, A::Error> {
                    Count::visit_seq_as_zero(a).map(|_| UsageObject(None))
                }
                scalars_are!(UsageObject(None));
            }
            d.deserialize_any(V)
        }
    }

    impl RawUsage {
        /// The counts of a `usage` object in the plain form upstreams send: keys without
        /// escapes, every value a non-negative integer of up to 18 digits or (the details
        /// members) an object of such. What the typed reading gives for it, without serde's
        /// per-key work; `None` for any other form, which serde then reads.
        pub fn plain(b: &[u8]) -> Option<RawUsage> {
            let mut u = RawUsage::default();
            let mut r = Plain { b, i: 0 };
            r.members(|r, key| {
                let count = match key {
                    b"input_tokens" => &mut u.input,
                    b"output_tokens" => &mut u.output,
                    b"prompt_tokens" => &mut u.prompt,
                    b"completion_tokens" => &mut u.completion,
                    b"total_tokens" => &mut u.total,
                    b"prompt_cache_hit_tokens" => &mut u.prompt_cache_hit,
                    b"cached_tokens" => &mut u.cached,
                    b"prompt_tokens_details"
                    | b"completion_tokens_details"
                    | b"input_tokens_details"
                    | b"output_tokens_details" => {
                        let mut d = Details::default();
                        r.members(|r, key| {
                            let n = r.integer()?;
                            match key {
                                b"cached_tokens" => d.cached = n,
                                b"audio_tokens" => d.audio = n,
                                b"text_tokens" => d.text = n,
                                b"image_tokens" => d.image = n,
                                b"reasoning_tokens" => d.reasoning = n,
                                _ => {}
                            }
                            Some(())
                        })?;
                        *match key {
                            b"prompt_tokens_details" => &mut u.prompt_details,
                            b"completion_tokens_details" => &mut u.completion_details,
                            b"input_tokens_details" => &mut u.input_details,
                            _ => &mut u.output_details,
                        } = d;
                        return Some(());
                    }
                    _ => {
                        r.integer()?;
                        return Some(());
                    }
                };
                *count = Count {
                    present: true,
                    n: r.integer()?,
                };
                Some(())
            })?;
            (r.i == b.len()).then_some(u)
        }

        /// [`super::from_openai`]'s reading of these counts.
        pub fn usage(&self) -> Option<Usage> {
            if self.input.present || self.output.present {
                return Some(Usage {
                    prompt_tokens: self.input.n,
                    completion_tokens: self.output.n,
                    cached_tokens: self.input_details.cached,
                    input_audio_tokens: self.input_details.audio,
                    reasoning_tokens: self.output_details.reasoning,
                    output_audio_tokens: self.output_details.audio,
                    input_text_tokens: self.input_details.text,
                    input_image_tokens: self.input_details.image,
                    output_text_tokens: self.output_details.text,
                    output_image_tokens: self.output_details.image,
                    ..Usage::default()
                });
            }
            if !self.prompt.present && !self.completion.present && !self.total.present {
                return None;
            }
            let prompt = self.prompt.n;
            let completion = if self.completion.present {
                self.completion.n
            } else {
                (self.total.n - prompt).max(0)
            };
            let mut cached = self.prompt_details.cached;
            if cached == 0 {
                cached = self.prompt_cache_hit.n.max(self.cached.n);
            }
            Some(Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                cached_tokens: cached,
                input_audio_tokens: self.prompt_details.audio,
                reasoning_tokens: self.completion_details.reasoning,
                output_audio_tokens: self.completion_details.audio,
                input_text_tokens: self.prompt_details.text,
                input_image_tokens: self.prompt_details.image,
                output_text_tokens: self.completion_details.text,
                output_image_tokens: self.completion_details.image,
                ..Usage::default()
            })
        }
    }
}

/// The non-negative integer at `path`, 0 when absent, null or not a number.
fn int(v: &Value, path: &[&str]) -> i64 {
    let mut cur = v;
    for key in path {
        match cur.get(key) {
            Some(next) => cur = next,
            None => return 0,
        }
    }
    let n = match cur {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        _ => None,
    };
    n.unwrap_or(0).max(0)
}

#[cfg(test)]
mod typed_tests {
    use super::*;
    use proptest::prelude::*;

    /// The reading before the typed one: the `usage` members parsed as documents, then
    /// [`from_openai`]. The typed reading must give the same for every body.
    fn reference(body: &[u8]) -> Option<Usage> {
        #[derive(serde::Deserialize)]
        struct Holder {
            #[serde(default)]
            usage: Option<Value>,
            #[serde(default)]
            response: Option<Inner>,
        }
        #[derive(serde::Deserialize)]
        struct Inner {
            #[serde(default)]
            usage: Option<Value>,
        }
        let h: Holder = serde_json::from_slice(body).ok()?;
        let mut v = serde_json::Map::new();
        if let Some(u) = h.usage {
            v.insert("usage".into(), u);
        }
        if let Some(u) = h.response.and_then(|r| r.usage) {
            v.insert("response".into(), serde_json::json!({ "usage": u }));
        }
        from_openai(&Value::Object(v))
    }

    /// Any JSON value a count may be given as.
    fn count() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "12",
            "0",
            "7",
            "-5",
            "3.7",
            "1e3",
            "-0.5",
            "null",
            "\"7\"",
            "true",
            "{}",
            "{\"a\":1}",
            "[1,2]",
            "18446744073709551615",
            "9223372036854775808",
        ])
        .prop_map(str::to_owned)
    }

    /// An object of `keys` (repeats allowed: a repeated key counts its last value), or
    /// another value.
    fn object_of(
        keys: &'static [&'static str],
        value: BoxedStrategy<String>,
    ) -> BoxedStrategy<String> {
        prop_oneof![
            3 => prop::collection::vec((prop::sample::select(keys), value), 0..6).prop_map(
                |entries| {
                    let inner: Vec<String> =
                        entries.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", inner.join(","))
                }
            ),
            1 => count(),
        ]
        .boxed()
    }

    fn details() -> BoxedStrategy<String> {
        object_of(
            &[
                "cached_tokens",
                "audio_tokens",
                "text_tokens",
                "image_tokens",
                "reasoning_tokens",
                "other",
            ],
            count().boxed(),
        )
    }

    fn usage() -> BoxedStrategy<String> {
        const KEYS: &[&str] = &[
            "input_tokens",
            "output_tokens",
            "prompt_tokens",
            "completion_tokens",
            "total_tokens",
            "prompt_cache_hit_tokens",
            "cached_tokens",
            "prompt_tokens_details",
            "completion_tokens_details",
            "input_tokens_details",
            "output_tokens_details",
            "x",
        ];
        prop_oneof![
            3 => prop::collection::vec((prop::sample::select(KEYS), count(), details()), 0..8)
                .prop_map(|entries| {
                    let inner: Vec<String> = entries
                        .iter()
                        .map(|(k, c, d)| {
                            let v = if k.ends_with("_details") { d } else { c };
                            format!("\"{k}\":{v}")
                        })
                        .collect();
                    format!("{{{}}}", inner.join(","))
                }),
            1 => count(),
        ]
        .boxed()
    }

    fn body() -> impl Strategy<Value = String> {
        let member = prop_oneof![
            3 => usage().prop_map(|u| format!("\"usage\":{u}")),
            2 => prop_oneof![usage().prop_map(|u| format!("{{\"usage\":{u}}}")), count()]
                .prop_map(|r| format!("\"response\":{r}")),
            1 => Just("\"choices\":[{\"message\":{\"content\":\"\\\"usage\\\": 5\"}}]".to_owned()),
            1 => Just("\"id\":\"chatcmpl-1\"".to_owned()),
        ];
        prop::collection::vec(member, 0..4).prop_map(|m| format!("{{{}}}", m.join(",")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn the_typed_reading_reads_what_the_document_reading_reads(body in body()) {
            prop_assert_eq!(from_openai_bytes(body.as_bytes()), reference(body.as_bytes()), "{}", body);
        }
    }

    /// Any JSON value, nested a few levels, with strings that need escapes.
    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-z\"\\\\/\n\t\u{1}é中😀 ]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z_\"]{0,6}", inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// An answer's body: members of any value around a `usage` and a `response`, compact or
    /// pretty-printed; and whether the walk must take it (no repeated `usage` or `response`,
    /// which serde refuses).
    fn answer() -> impl Strategy<Value = (String, bool)> {
        let member = prop_oneof![
            3 => usage().prop_map(|u| ("usage".to_owned(), u)),
            1 => prop_oneof![usage().prop_map(|u| format!("{{\"usage\":{u}}}")), count()]
                .prop_map(|r| ("response".to_owned(), r)),
            4 => ("[a-z_]{1,8}", any_value(), any::<bool>()).prop_map(|(k, v, pretty)| {
                let v = if pretty {
                    serde_json::to_string_pretty(&v).unwrap()
                } else {
                    v.to_string()
                };
                (k, v)
            }),
        ];
        (prop::collection::vec(member, 0..5), "[ \n]{0,2}").prop_map(|(m, ws)| {
            let once = |k: &str| m.iter().filter(|(key, _)| key == k).count() <= 1;
            let take = once("usage") && once("response");
            let members: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\" : {v}")).collect();
            (format!("{ws}{{{ws}{}{ws}}}{ws}", members.join(",\n")), take)
        })
    }

    /// An answer with a few bytes replaced, inserted or removed: mostly the bytes JSON's
    /// grammar turns on, and some that are not text.
    fn damaged() -> impl Strategy<Value = Vec<u8>> {
        const BYTES: &[u8] = b"\"\\{}[],: 0-.eE+tfnu\x01\x1f\xc3\xff9a";
        let edit = (
            any::<prop::sample::Index>(),
            0..3u8,
            prop::sample::select(BYTES),
        );
        (answer(), prop::collection::vec(edit, 1..4)).prop_map(|((body, _), edits)| {
            let mut b = body.into_bytes();
            for (at, kind, byte) in edits {
                let i = at.index(b.len() + 1);
                match kind {
                    0 if i < b.len() => b[i] = byte,
                    1 => b.insert(i, byte),
                    _ if i < b.len() => {
                        b.remove(i);
                    }
                    _ => b.push(byte),
                }
            }
            b
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// The walk over the members gives what serde's reading of the whole body gives, for
        /// answers of every shape (and takes them all: the fast path is the one used).
        #[test]
        fn the_walk_reads_what_the_whole_reading_reads((body, take) in answer()) {
            prop_assert_eq!(scan::members(body.as_bytes()).is_some(), take, "{}", body);
            prop_assert_eq!(
                from_openai_bytes(body.as_bytes()),
                from_openai_bytes_in_full(body.as_bytes()),
                "{}", body
            );
        }

        /// ... and for broken ones: it never takes a body that serde refuses, unless serde
        /// refuses one of the two members it leaves to serde.
        #[test]
        fn the_walk_takes_no_body_that_serde_refuses(body in damaged()) {
            use serde::de::IgnoredAny;
            if let Some(m) = scan::members(&body) {
                let valid = |r: Option<std::ops::Range<usize>>| {
                    r.is_none_or(|r| serde_json::from_slice::<IgnoredAny>(&body[r]).is_ok())
                };
                if valid(m.usage) && valid(m.response) {
                    prop_assert!(
                        serde_json::from_slice::<IgnoredAny>(&body).is_ok(),
                        "the walk took {:?}", String::from_utf8_lossy(&body)
                    );
                }
            }
            prop_assert_eq!(
                from_openai_bytes(&body),
                from_openai_bytes_in_full(&body),
                "{:?}", String::from_utf8_lossy(&body)
            );
        }
    }

    #[test]
    fn plain_usage_objects_are_read_without_serde_and_others_with_it() {
        let typed = |b: &[u8]| -> Option<Usage> {
            serde_json::from_slice::<typed::UsageObject>(b)
                .ok()?
                .0?
                .usage()
        };
        for plain in [
            r#"{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18,"prompt_tokens_details":{"cached_tokens":3,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":2,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}"#,
            r#"{ "prompt_tokens" : 0 , "completion_tokens" : 123456789012345678 }"#,
            r#"{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10,"prompt_cache_hit_tokens":4,"prompt_cache_miss_tokens":5}"#,
            r#"{"input_tokens":5,"output_tokens":2,"input_tokens_details":{"cached_tokens":1},"output_tokens_details":{"reasoning_tokens":1},"total_tokens":7}"#,
            r#"{"prompt_tokens":1,"prompt_tokens":2,"prompt_tokens_details":{"cached_tokens":1},"prompt_tokens_details":{}}"#,
            r#"{}"#,
        ] {
            let raw = typed::RawUsage::plain(plain.as_bytes()).unwrap_or_else(|| panic!("{plain}"));
            assert_eq!(raw.usage(), typed(plain.as_bytes()), "{plain}");
        }
        for other in [
            r#"{"prompt_tokens":1.5}"#,
            r#"{"prompt_tokens":-1}"#,
            r#"{"prompt_tokens":1e3}"#,
            r#"{"prompt_tokens":01}"#,
            r#"{"prompt_tokens":1234567890123456789}"#,
            r#"{"prompt_tokens":"3"}"#,
            r#"{"prompt_tokens":null}"#,
            r#"{"prompt_tokens":3,"cost":{"usd":1}}"#,
            r#"{"prompt_tokens_details":null}"#,
            r#"{"prompt\u005ftokens":3}"#,
            r#"{"prompt_tokens":3,}"#,
            r#"[1]"#,
        ] {
            assert!(
                typed::RawUsage::plain(other.as_bytes()).is_none(),
                "{other}"
            );
            let body = format!("{{\"usage\":{other}}}");
            assert_eq!(
                from_openai_bytes(body.as_bytes()),
                from_openai_bytes_in_full(body.as_bytes()),
                "{other}"
            );
        }
    }

    #[test]
    fn the_walk_finds_the_members_of_an_openai_answer() {
        let body = br#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"a \"usage\": {} \u00e9","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0}},"service_tier":"default","system_fingerprint":"fp"}"#;
        let m = scan::members(body).expect("taken");
        let usage = m.usage.expect("usage found");
        assert!(body[usage.clone()].starts_with(br#"{"prompt_tokens":9"#));
        assert!(body[usage].ends_with(br#""audio_tokens":0}}"#));
        assert_eq!(m.response, None);
        assert_eq!(
            from_openai_bytes(body).map(|u| (u.prompt_tokens, u.completion_tokens)),
            Some((9, 12))
        );
        let event = b"{ \"type\" : \"response.completed\",\n \"response\" : {\"usage\": {\"input_tokens\": 5, \"output_tokens\": 2}} }\n";
        let m = scan::members(event).expect("taken");
        assert_eq!(m.usage, None);
        assert_eq!(from_openai_bytes(event).map(|u| u.prompt_tokens), Some(5));
    }

    #[test]
    fn the_walk_leaves_to_serde_what_it_does_not_take() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(70), "]".repeat(70));
        for body in [
            // Serde refuses these: the answer reads no usage.
            r#"{"usage":{"prompt_tokens":1},"usage":{"prompt_tokens":2}}"#,
            r#"{"usage":{"prompt_tokens":1},}"#,
            r#"{"usage":{"prompt_tokens":1},"a":[1,]}"#,
            r#"{"usage":{"prompt_tokens":1},"a":01}"#,
            r#"{"usage":{"prompt_tokens":1},"a":1.}"#,
            r#"{"usage":{"prompt_tokens":1},"a":1e}"#,
            r#"{"usage":{"prompt_tokens":1},"a":-}"#,
            r#"{"usage":{"prompt_tokens":1},"a":tru}"#,
            r#"{"usage":{"prompt_tokens":1},"a":[}"#,
            r#"{"usage":{"prompt_tokens":1},"a":"\x"}"#,
            r#"{"usage":{"prompt_tokens":1},"a":"\u12"}"#,
            "{\"usage\":{\"prompt_tokens\":1},\"a\":\"\u{1}\"}",
            r#"{"usage":{"prompt_tokens":1}} x"#,
            r#"{"usage":{"prompt_tokens":1}"#,
            // Serde takes these; the walk leaves them to it.
            r#"{"us\u0061ge":{"prompt_tokens":1}}"#,
            r#"[{"prompt_tokens":1}]"#,
            &deep,
        ] {
            assert_eq!(scan::members(body.as_bytes()), None, "{body}");
            assert_eq!(
                from_openai_bytes(body.as_bytes()),
                from_openai_bytes_in_full(body.as_bytes()),
                "{body}"
            );
        }
        // Taken by the walk; serde refuses the member's value, so the whole answer.
        let body = br#"{"usage":{"prompt_tokens":1},"response":"x"}"#;
        assert!(scan::members(body).is_some());
        assert_eq!(from_openai_bytes(body), None);
        assert_eq!(from_openai_bytes_in_full(body), None);
        assert_eq!(
            from_openai_bytes(br#"{"us\u0061ge":{"prompt_tokens":1}}"#).map(|u| u.prompt_tokens),
            Some(1)
        );
    }

    #[test]
    fn typed_reading_examples() {
        for (body, want) in [
            (
                r#"{"usage":{"prompt_tokens":3,"completion_tokens":4,"prompt_tokens":5}}"#,
                Some((5, 4)),
            ),
            (r#"{"usage":{"prompt_tokens":null}}"#, Some((0, 0))),
            (
                r#"{"usage":{"total_tokens":9,"prompt_tokens":2}}"#,
                Some((2, 7)),
            ),
            (r#"{"usage":{"foo":1}}"#, None),
            (
                r#"{"usage":5,"response":{"usage":{"input_tokens":1,"output_tokens":2}}}"#,
                Some((1, 2)),
            ),
            (r#"{"usage":{},"usage":{}}"#, None),
            (r#"[1]"#, None),
            (r#"{"response":"x","usage":{"prompt_tokens":1}}"#, None),
        ] {
            let got =
                from_openai_bytes(body.as_bytes()).map(|u| (u.prompt_tokens, u.completion_tokens));
            assert_eq!(got, want, "{body}");
            assert_eq!(
                from_openai_bytes(body.as_bytes()),
                reference(body.as_bytes()),
                "{body}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chat_usage_with_details() {
        let v = json!({"usage": {
            "prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
            "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 7},
            "completion_tokens_details": {"reasoning_tokens": 128, "audio_tokens": 3,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
        }});
        let u = from_openai(&v).unwrap();
        assert_eq!(
            u,
            Usage {
                prompt_tokens: 2006,
                completion_tokens: 300,
                cached_tokens: 1920,
                input_audio_tokens: 7,
                reasoning_tokens: 128,
                output_audio_tokens: 3,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn embeddings_usage() {
        let u = from_openai(&json!({"usage": {"prompt_tokens": 8, "total_tokens": 8}})).unwrap();
        assert_eq!((u.prompt_tokens, u.completion_tokens), (8, 0));
    }

    #[test]
    fn responses_usage_top_level_and_nested() {
        let usage = json!({"input_tokens": 36, "input_tokens_details": {"cached_tokens": 10},
            "output_tokens": 87, "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 123});
        let expected = Usage {
            prompt_tokens: 36,
            completion_tokens: 87,
            cached_tokens: 10,
            reasoning_tokens: 20,
            ..Usage::default()
        };
        assert_eq!(from_openai(&json!({"usage": usage})), Some(expected));
        assert_eq!(
            from_openai(&json!({"type": "response.completed", "response": {"usage": usage}})),
            Some(expected)
        );
    }

    #[test]
    fn absent_or_null_usage() {
        assert_eq!(from_openai(&json!({"choices": []})), None);
        assert_eq!(from_openai(&json!({"usage": null})), None);
        assert_eq!(from_openai(&json!({"usage": {}})), None);
        assert_eq!(
            from_openai(&json!({"type": "response.created", "response": {"usage": null}})),
            None
        );
    }

    #[test]
    fn from_raw_bytes() {
        let body = br#"{"id":"x","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#;
        assert_eq!(
            from_openai_bytes(body).map(|u| (u.prompt_tokens, u.completion_tokens)),
            Some((3, 1))
        );
        let nested = br#"{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":5,"output_tokens":2}}}"#;
        assert_eq!(from_openai_bytes(nested).map(|u| u.prompt_tokens), Some(5));
        assert_eq!(from_openai_bytes(b"not json"), None);
        assert_eq!(from_openai_bytes(b"[1]"), None);
    }

    #[test]
    fn text_and_image_buckets() {
        let chat = json!({"usage": {"prompt_tokens": 300, "completion_tokens": 20,
            "prompt_tokens_details": {"text_tokens": 45, "image_tokens": 255, "cached_tokens": 0},
            "completion_tokens_details": {"text_tokens": 20}}});
        let u = from_openai(&chat).unwrap();
        assert_eq!(
            (
                u.input_text_tokens,
                u.input_image_tokens,
                u.output_text_tokens,
                u.output_image_tokens
            ),
            (45, 255, 20, 0)
        );
        // gpt-image-1: input split, output all image tokens
        let image = br#"{"created":1,"data":[{"b64_json":"x"}],"usage":{"total_tokens":4210,
            "input_tokens":50,"output_tokens":4160,
            "input_tokens_details":{"text_tokens":40,"image_tokens":10}}}"#;
        let u = of_image_answer(from_openai_bytes(image).unwrap());
        assert_eq!(
            (u.prompt_tokens, u.input_text_tokens, u.input_image_tokens),
            (50, 40, 10)
        );
        assert_eq!((u.completion_tokens, u.output_image_tokens), (4160, 4160));
        // an answer that splits its output keeps the split
        let split = br#"{"usage":{"input_tokens":5,"output_tokens":100,
            "output_tokens_details":{"text_tokens":30,"image_tokens":70}}}"#;
        let u = of_image_answer(from_openai_bytes(split).unwrap());
        assert_eq!((u.output_text_tokens, u.output_image_tokens), (30, 70));
    }

    #[test]
    fn vendor_cache_fields() {
        let deepseek = json!({"usage": {"prompt_tokens": 100, "completion_tokens": 5,
            "prompt_cache_hit_tokens": 64, "prompt_cache_miss_tokens": 36}});
        assert_eq!(from_openai(&deepseek).map(|u| u.cached_tokens), Some(64));
        let moonshot =
            json!({"usage": {"prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 50}});
        assert_eq!(from_openai(&moonshot).map(|u| u.cached_tokens), Some(50));
    }
}
