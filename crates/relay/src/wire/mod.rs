//! Wire types: the JSON shapes the relay translates between, as borrowed serde structs.
//!
//! - [`openai`]: what translated answers are written in (`chat.completion`,
//!   `chat.completion.chunk`, `usage`, error events).
//! - [`anthropic`]: Messages answers and stream events as read from the upstream, and the
//!   Messages requests sent to it for OpenAI chat requests (Anthropic, Bedrock, Vertex AI).
//! - [`gemini`]: `generateContent` answers (whole, and each stream event) as read from the
//!   upstream, and the `generateContent` requests sent to it for OpenAI chat requests.
//!
//! Reading is lenient where the hand-written translation was: upstream answers are not
//! trusted to be well typed, so a field of an unexpected JSON type reads as absent (see
//! [`Lenient`]) rather than failing the whole answer, and unknown fields are ignored. Strings
//! borrow from the upstream's bytes unless they hold escapes.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

pub mod anthropic;
pub mod gemini;
pub mod openai;
pub mod responses;

/// `bytes` read as JSON: from a `&str` when they are UTF-8 (nearly always), where serde_json
/// checks no string's UTF-8 again (from bytes it checks each string and key it reads, ~110
/// instructions each under callgrind); from the bytes as before otherwise, so that what the
/// reading skips is not checked and an error names its line and column.
pub fn from_json_bytes<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> serde_json::Result<T> {
    match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    }
}

/// A value read leniently: `Some` when the JSON had the expected type, `None` for any other
/// JSON (which is skipped, not an error) or when absent (with `#[serde(default)]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<T> Lenient<T> {
    /// The value, when it had the expected type.
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl<'a> Lenient<Cow<'a, str>> {
    /// The string, when the JSON was one.
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// The JSON types a [`Lenient`] value can take.
trait Scalar<'de>: Sized {
    fn from_str(_: Cow<'de, str>) -> Option<Self> {
        None
    }
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    fn from_i64(_: i64) -> Option<Self> {
        None
    }
    fn from_bool(_: bool) -> Option<Self> {
        None
    }
}

impl<'de: 'a, 'a> Scalar<'de> for Cow<'a, str> {
    fn from_str(s: Cow<'de, str>) -> Option<Self> {
        Some(s)
    }
}

impl Scalar<'_> for u64 {
    fn from_u64(n: u64) -> Option<Self> {
        Some(n)
    }
}

impl Scalar<'_> for bool {
    fn from_bool(b: bool) -> Option<Self> {
        Some(b)
    }
}

struct LenientVisitor<T>(PhantomData<T>);

impl<'de, T: Scalar<'de>> Visitor<'de> for LenientVisitor<T> {
    type Value = Lenient<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_str(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_str(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_str(Cow::Owned(v))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_u64(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_i64(v)))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Lenient(T::from_bool(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lenient(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Lenient(None))
    }
}

impl<'de, T: Scalar<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor(PhantomData))
    }
}

/// Reads `T` from JSON text that is an object. Derived struct impls also accept arrays (the
/// fields by position), which no upstream means: those, and anything malformed, give `None`.
pub fn from_object<'a, T: Deserialize<'a>>(json: &'a str) -> Option<T> {
    if !json.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(json).ok()
}

/// An object read leniently: `Some` when the JSON was an object (read as `T`, whose fields
/// should be lenient too), `None` for any other JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<T: Default> Obj<T> {
    /// The object, or an empty one when the JSON was something else.
    pub fn or_empty(self) -> T {
        self.0.unwrap_or_default()
    }
}

struct ObjVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
    type Value = Obj<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Obj(None))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Obj(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Obj(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Obj(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Obj(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Obj(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Obj(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Obj(None))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjVisitor(PhantomData))
    }
}

/// A value read by its JSON type, for fields that may be a string or an array (Anthropic's
/// `system` and `content`): `null`, a string, an array of `T` (lenient elements such as
/// [`Obj`]), or anything else.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape<'a, T> {
    Null,
    Str(Cow<'a, str>),
    Arr(Vec<T>),
    Other,
}

struct ShapeVisitor<'a, T>(PhantomData<(&'a (), T)>);

impl<'de: 'a, 'a, T: Deserialize<'de>> Visitor<'de> for ShapeVisitor<'a, T> {
    type Value = Shape<'a, T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Shape::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Shape::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Shape::Str(Cow::Owned(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<T>()? {
            items.push(item);
        }
        Ok(Shape::Arr(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shape::Null)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shape::Null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Shape::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Shape::Other)
    }
}

impl<'de: 'a, 'a, T: Deserialize<'de>> Deserialize<'de> for Shape<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor(PhantomData))
    }
}

/// A borrowed lenient string (the common case).
pub type Str<'a> = Lenient<Cow<'a, str>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct T<'a> {
        #[serde(default, borrow)]
        s: Str<'a>,
        #[serde(default)]
        n: Lenient<u64>,
        #[serde(default)]
        b: Lenient<bool>,
    }

    #[test]
    fn lenient_values_read_as_absent_when_mistyped() {
        let t: T = serde_json::from_str(r#"{"s": "x", "n": 3, "b": true}"#).unwrap();
        assert!(matches!(t.s.0, Some(Cow::Borrowed("x"))));
        assert_eq!((t.n.0, t.b.0), (Some(3), Some(true)));
        let t: T = serde_json::from_str(r#"{"s": {"a": [1]}, "n": -1, "b": "yes"}"#).unwrap();
        assert_eq!((t.s.0, t.n.0, t.b.0), (None, None, None));
        let t: T = serde_json::from_str(r#"{"s": "a\"b", "n": 1.5, "b": null}"#).unwrap();
        assert_eq!(t.s.as_str(), Some("a\"b"));
        assert_eq!((t.n.0, t.b.0), (None, None));
        let t: T = serde_json::from_str("{}").unwrap();
        assert_eq!(t.s.0, None);
    }

    #[test]
    fn only_objects_read_as_structs() {
        assert!(from_object::<T>(r#" {"s": "x"}"#).is_some());
        // A derived struct would take an array by position.
        assert!(serde_json::from_str::<T>(r#"["x", 1, true]"#).is_ok());
        assert!(from_object::<T>(r#"["x", 1, true]"#).is_none());
        assert!(from_object::<T>("5").is_none());
        assert!(from_object::<T>("{").is_none());
    }

    #[test]
    fn gemini_events_wrapped_or_not() {
        let obj = r#"{"candidates": [{"content": {"parts": [{"text": "hi"}, {"functionCall": null}]}, "finishReason": "STOP"}], "responseId": "r"}"#;
        let wrapped = format!("[{obj}]");
        for data in [obj, wrapped.as_str()] {
            let v = gemini::GenerateContentResponse::read_event(data).unwrap();
            assert_eq!(v.response_id.as_str(), Some("r"));
            let c = v.candidate().unwrap();
            assert_eq!(c.finish_reason.as_str(), Some("STOP"));
            let parts = c.parts();
            assert_eq!(parts[0].text.as_str(), Some("hi"));
            // A `functionCall` of null is still a call (with empty fields), as before.
            assert_eq!(parts[1].call().unwrap().args_json(), "{}");
        }
        let v = gemini::GenerateContentResponse::read_event("[1, 2]").unwrap();
        assert!(v.candidate().is_none());
        assert!(gemini::GenerateContentResponse::read_event("nope").is_none());
    }

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    struct Block<'a> {
        #[serde(default, borrow)]
        text: Str<'a>,
    }

    #[test]
    fn objects_and_shapes_read_from_values_and_text_alike() {
        let v = serde_json::json!({"a": "s", "b": [{"text": "t"}, 5, null, {"text": 1}], "c": {"k": 1}, "d": null});
        #[derive(serde::Deserialize)]
        struct Holder<'a> {
            #[serde(borrow)]
            a: Shape<'a, Obj<Block<'a>>>,
            #[serde(borrow)]
            b: Shape<'a, Obj<Block<'a>>>,
            #[serde(borrow)]
            c: Shape<'a, Obj<Block<'a>>>,
            #[serde(default, borrow)]
            d: Option<Shape<'a, Obj<Block<'a>>>>,
            #[serde(default, borrow)]
            e: Obj<Block<'a>>,
        }
        let text = v.to_string();
        for h in [
            Holder::deserialize(&v).unwrap(),
            serde_json::from_str::<Holder>(&text).unwrap(),
        ] {
            assert_eq!(h.a, Shape::Str(Cow::Borrowed("s")));
            let Shape::Arr(items) = h.b else {
                panic!("an array")
            };
            assert_eq!(items.len(), 4);
            assert_eq!(items[0].0.as_ref().unwrap().text.as_str(), Some("t"));
            assert_eq!((items[1].0.is_none(), items[2].0.is_none()), (true, true));
            assert_eq!(items[3].0.as_ref().unwrap().text.as_str(), None);
            assert_eq!(h.c, Shape::Other);
            assert!(h.d.is_none());
            assert!(h.e.0.is_none());
        }
        // Strings borrow from the parsed value too.
        let h = Holder::deserialize(&v).unwrap();
        assert!(matches!(h.a, Shape::Str(Cow::Borrowed(_))));
    }

    #[test]
    fn gemini_embeddings_pass_their_values_through() {
        let body = br#"{"embeddings": [{"values": [0.5, 0.25]}, {"values": null}, 7, {}]}"#;
        let v = gemini::EmbedResponse::read(body).unwrap();
        let list = v.list().unwrap();
        assert_eq!(list.len(), 4);
        assert_eq!(list[0].values.map(|r| r.get()), Some("[0.5, 0.25]"));
        assert_eq!(list[0].floats(), vec![0.5, 0.25]);
        assert_eq!(list[1].values.map(|r| r.get()), Some("null"));
        assert!(list[2].values.is_none() && list[3].values.is_none());
        let out: Vec<_> = list
            .iter()
            .map(|e| match e.values {
                Some(r) => openai::EmbeddingData::Floats(r),
                None => openai::EmbeddingData::Empty([]),
            })
            .collect();
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            "[[0.5, 0.25],null,[],[]]"
        );
        assert!(gemini::EmbedResponse::read(b"[1]").is_none());
    }

    #[test]
    fn anthropic_events_borrow_and_read_errors() {
        let data = r#"{"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "hi"}}"#;
        let e = anthropic::StreamEvent::read(data).unwrap();
        assert_eq!(
            (e.kind.as_str(), e.index.0),
            (Some("content_block_delta"), Some(1))
        );
        let d = e.delta();
        assert!(matches!(d.text.0, Some(Cow::Borrowed("hi"))));
        let e = anthropic::StreamEvent::read(
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
        )
        .unwrap();
        assert_eq!(
            e.error_parts(),
            (Some("Overloaded".into()), Some("overloaded_error".into()))
        );
        let e = anthropic::StreamEvent::read(r#"{"type": "error", "message": "bare"}"#).unwrap();
        assert_eq!(e.error_parts(), (Some("bare".into()), Some("error".into())));
    }
}
