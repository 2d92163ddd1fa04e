//! A line's typed struct read from the members detection's probe found, instead of from the
//! line's text again.
//!
//! [`crate::detect::Probe`] walks every top-level member of a line (and checks the whole line
//! is JSON) before a provider reads the line as its own struct. Read with
//! `serde_json::from_str`, the line was scanned a second time, member names and all, and the
//! members the provider does not use were skipped byte by byte. [`read`] hands the provider's
//! `Deserialize` the members the probe kept instead: names as they are, a member the struct
//! ignores not looked at, a string without escapes borrowed as it is (the probe checked it),
//! and any other value read from its own text by [`crate::json_reader`], which makes the calls
//! serde_json would and leaves to serde_json what is not plain.
//!
//! What comes out is what `serde_json::from_str` makes of the line, and a line this refuses is
//! read by `serde_json::from_str` after all, so that it says what is wrong in its words, with
//! the line's columns.

use crate::json_reader::Reader;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

/// The top-level members of a line, in order: names (without escapes) and value texts.
pub type Members<'a> = [(&'a str, &'a str)];

/// A line and the members the probe kept of it (none when the probe did not read it): what a
/// provider reads its struct from.
#[derive(Clone, Copy)]
pub struct Line<'a, 'm> {
    pub text: &'a str,
    members: Option<&'m Members<'a>>,
}

impl<'a, 'm> Line<'a, 'm> {
    pub fn new(text: &'a str, members: Option<&'m Members<'a>>) -> Self {
        Line { text, members }
    }

    /// The line as `T` ([`read`]).
    pub fn read<T: Deserialize<'a>>(self) -> serde_json::Result<T> {
        read(self.text, self.members)
    }
}

/// Reads `line` as `T`, from `members` (the line's, as the probe found them) when there are.
pub fn read<'a, T: Deserialize<'a>>(
    line: &'a str,
    members: Option<&Members<'a>>,
) -> serde_json::Result<T> {
    if let Some(m) = members {
        if let Ok(v) = T::deserialize(Object(m)) {
            return Ok(v);
        }
    }
    serde_json::from_str(line)
}

/// A JSON object as its members.
struct Object<'m, 'a>(&'m Members<'a>);

impl<'de> Deserializer<'de> for Object<'_, 'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> serde_json::Result<V::Value> {
        v.visit_map(Entries {
            rest: self.0.iter(),
            value: "null",
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

struct Entries<'m, 'a> {
    rest: std::slice::Iter<'m, (&'a str, &'a str)>,
    /// The text of the value of the member whose name was read last.
    value: &'a str,
}

impl<'de> MapAccess<'de> for Entries<'_, 'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> serde_json::Result<Option<K::Value>> {
        let Some(&(name, value)) = self.rest.next() else {
            return Ok(None);
        };
        self.value = value;
        seed.deserialize(de::value::BorrowedStrDeserializer::new(name))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> serde_json::Result<V::Value> {
        seed.deserialize(Value(self.value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.rest.len())
    }
}

/// One member's value, as JSON text the probe checked.
struct Value<'a>(&'a str);

impl<'a> Value<'a> {
    /// The contents of a string without escapes: what serde_json would borrow.
    fn plain_str(&self) -> Option<&'a str> {
        let inner = self.0.strip_prefix('"')?.strip_suffix('"')?;
        memchr::memchr(b'\\', inner.as_bytes())
            .is_none()
            .then_some(inner)
    }
}

/// `deserialize_*` methods answered from the value's text ([`Reader`]).
macro_rules! by_serde_json {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, v: V) -> serde_json::Result<V::Value> {
            by_json(self.0, |de| de.$method(v))
        }
    )*};
}

impl<'de> Deserializer<'de> for Value<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> serde_json::Result<V::Value> {
        match self.plain_str() {
            Some(s) => v.visit_borrowed_str(s),
            None => by_json(self.0, |de| de.deserialize_any(v)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> serde_json::Result<V::Value> {
        match self.plain_str() {
            Some(s) => v.visit_borrowed_str(s),
            None => by_json(self.0, |de| de.deserialize_str(v)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> serde_json::Result<V::Value> {
        self.deserialize_str(v)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> serde_json::Result<V::Value> {
        self.deserialize_str(v)
    }

    /// serde_json: `null` is none, anything else some.
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> serde_json::Result<V::Value> {
        if self.0 == "null" {
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    /// A member the struct does not read: not looked at (the probe checked it).
    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> serde_json::Result<V::Value> {
        v.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> serde_json::Result<V::Value> {
        by_json(self.0, |de| de.deserialize_unit_struct(name, v))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> serde_json::Result<V::Value> {
        crate::json_reader::newtype_struct(self.0, name, v)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> serde_json::Result<V::Value> {
        by_json(self.0, |de| de.deserialize_tuple(len, v))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        v: V,
    ) -> serde_json::Result<V::Value> {
        by_json(self.0, |de| de.deserialize_tuple_struct(name, len, v))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> serde_json::Result<V::Value> {
        by_json(self.0, |de| de.deserialize_struct(name, fields, v))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> serde_json::Result<V::Value> {
        by_json(self.0, |de| de.deserialize_enum(name, variants, v))
    }

    by_serde_json! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char deserialize_bytes
        deserialize_byte_buf deserialize_unit deserialize_seq deserialize_map
    }
}

/// `read` applied to a [`Reader`] of `text`, which must be all of `text`.
fn by_json<'de, T>(
    text: &'de str,
    read: impl FnOnce(&mut Reader<'de>) -> serde_json::Result<T>,
) -> serde_json::Result<T> {
    let mut r = Reader::new(text);
    let value = read(&mut r)?;
    r.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Probe;
    use serde::de::IgnoredAny;
    use serde_json::value::RawValue;
    use std::borrow::Cow;

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)] // compared through `Debug`
    struct Line<'a> {
        #[serde(rename = "type", borrow)]
        ty: Cow<'a, str>,
        #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
        text: Option<Cow<'a, str>>,
        n: Option<u64>,
        #[serde(borrow)]
        raw: Option<&'a RawValue>,
        nested: Option<Vec<Option<bool>>>,
    }

    /// Reads `line` both ways: the same value (as `Debug` shows it) or the same error.
    fn both<'a, T: Deserialize<'a> + std::fmt::Debug>(line: &'a str) {
        let probe = Probe::read(line).expect("a JSON object");
        let members = probe.members();
        assert!(members.is_some(), "the probe keeps the members: {line}");
        let by_members: Result<T, _> = read(line, members);
        let by_text: Result<T, _> = serde_json::from_str(line);
        match (by_members, by_text) {
            (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{line}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{line}"),
            (a, b) => panic!("{line}: by members {a:?}, by text {b:?}"),
        }
    }

    #[test]
    fn members_read_as_the_text_does() {
        both::<Line>(
            r#"{"type":"a","text":"plain","n":3,"raw":{"x": [1, "y"]},"nested":[true,null]}"#,
        );
        both::<Line>(r#"{"type":"a\nb","text":"esc\"aped","unknown":{"deep":[[[]]]}}"#);
        both::<Line>(r#"{"type":"a","text":null,"raw":"a string","n":null}"#);
        // Refused: the error is serde_json's own, with the line's column.
        both::<Line>(r#"{"type":"a","n":"3"}"#);
        both::<Line>(r#"{"text":"no type"}"#);
        both::<Line>(r#"{"type":"a","text":"x","text":"y"}"#);
        both::<Line>(r#"{"type":1}"#);
        both::<IgnoredAny>(r#"{"type":1}"#);
        both::<serde_json::Value>(r#"{"type":"x","a":[1,2.5,"\u00e9"],"b":{"c":null}}"#);
        both::<std::collections::BTreeMap<String, &RawValue>>(r#"{"a": 1 ,"b":"s"}"#);
    }

    #[test]
    fn a_plain_string_is_borrowed_from_the_line() {
        let line = r#"{"type":"t","text":"hello"}"#;
        let probe = Probe::read(line).expect("a JSON object");
        let w: Line = read(line, probe.members()).expect("a line");
        assert!(matches!(w.text, Some(Cow::Borrowed("hello"))));
    }
}
