//! A serde `Deserializer` over JSON text that reads what is plain itself and leaves the rest
//! to serde_json: for the values a provider's struct reads from a line ([`crate::members`])
//! and for the events `validate`'s fast check reads ([`crate::validate`]).
//!
//! serde_json's own deserializer was a tenth of converting Gemini output (the `stats` of a
//! `result` line) and half of judging the events made of it. This one walks the text with
//! [`crate::scan`]'s grammar (strings looked at 16 bytes at a time) and makes the calls serde_json
//! would make:
//!
//! * a string without escapes is borrowed (`visit_borrowed_str`); one with escapes, and every
//!   number but a plain non-negative integer of up to 19 digits, is read by serde_json from its
//!   own text, so lone surrogates, `-0` and integers beyond `u64` come out as they always did;
//! * newtype structs (`RawValue` among them), enums, byte strings and 128-bit integers are read
//!   by serde_json from the value's text;
//! * anything it is not sure of (nesting deeper than [`MAX_DEPTH`], text that is not JSON) is an
//!   error, and the caller then reads the whole text with serde_json, which says what is wrong
//!   or reads what this refused. It never accepts text that serde_json refuses, and what it
//!   reads is what serde_json reads (the tests below, the members tests, and the fast check's,
//!   which compare it with serde_json over every capture and over mutated and broken lines).

use crate::scan::{self, MAX_DEPTH};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

type Error = serde_json::Error;
type Result<T> = std::result::Result<T, Error>;

/// The reader cannot say (never shown to anyone: the fast check then asks the full validator).
fn unsure() -> Error {
    de::Error::custom("not read by the fast reader")
}

/// A line's JSON text, read from the start.
pub struct Reader<'a> {
    text: &'a str,
    /// The next byte to read.
    i: usize,
    /// How many containers the next value is in.
    depth: u32,
}

impl<'a> Reader<'a> {
    pub fn new(text: &'a str) -> Self {
        Reader {
            text,
            i: 0,
            depth: 0,
        }
    }

    /// The next byte that is not whitespace (not consumed).
    fn peek(&mut self) -> Option<u8> {
        let b = self.text.as_bytes();
        while let Some(&c) = b.get(self.i) {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' => self.i += 1,
                _ => return Some(c),
            }
        }
        None
    }

    /// Checks that nothing but whitespace is left.
    pub fn end(&mut self) -> Result<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(unsure()),
        }
    }

    /// The text from `start` to the reader's position.
    fn since(&self, start: usize) -> Result<&'a str> {
        self.text.get(start..self.i).ok_or_else(unsure)
    }

    /// The string whose opening quote is the next byte.
    fn string<V: Visitor<'a>>(&mut self, v: V) -> Result<V::Value> {
        let start = self.i;
        let (end, escaped) =
            scan::string_span(self.text.as_bytes(), start + 1).ok_or_else(unsure)?;
        self.i = end;
        if escaped {
            return by_serde_json(self.since(start)?, v);
        }
        // Both ends are quotes: the contents are whole characters.
        v.visit_borrowed_str(self.text.get(start + 1..end - 1).ok_or_else(unsure)?)
    }

    /// The number that starts with the next byte.
    fn number<V: Visitor<'a>>(&mut self, v: V) -> Result<V::Value> {
        let start = self.i;
        self.i = scan::number_end(self.text.as_bytes(), start).ok_or_else(unsure)?;
        let text = self.since(start)?;
        // Up to 19 digits always fit a u64 (its largest has 20).
        if text.len() <= 19 && text.bytes().all(|c| c.is_ascii_digit()) {
            let n = text.bytes().fold(0u64, |n, c| n * 10 + u64::from(c - b'0'));
            return v.visit_u64(n);
        }
        by_serde_json(text, v)
    }

    /// `true`, `false` or `null`, whose first byte is the next.
    fn literal(&mut self, word: &str) -> Result<()> {
        let rest = self.text.get(self.i..).unwrap_or_default();
        if !rest.starts_with(word) {
            return Err(unsure());
        }
        self.i += word.len();
        Ok(())
    }

    /// Opens a container whose bracket is the next byte.
    fn open(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(unsure());
        }
        self.depth += 1;
        self.i += 1;
        Ok(())
    }

    /// The text of the next value, skipped, for serde_json to read. Its nesting is read up
    /// to [`MAX_DEPTH`] levels, which with the few it is in stays below serde_json's 128.
    fn value_text(&mut self) -> Result<&'a str> {
        if self.depth > 20 {
            return Err(unsure());
        }
        self.peek().ok_or_else(unsure)?;
        let start = self.i;
        self.i = scan::value_end(self.text.as_bytes(), start).ok_or_else(unsure)?;
        self.since(start)
    }

    /// Closes a container: its visitor must have read every member, so `close` is next.
    fn close(&mut self, close: u8) -> Result<()> {
        if self.peek() != Some(close) {
            return Err(unsure());
        }
        self.i += 1;
        self.depth -= 1;
        Ok(())
    }
}

/// One value read by serde_json from its text, as it would read it inside the line.
fn by_serde_json<'a, V: Visitor<'a>>(text: &'a str, v: V) -> Result<V::Value> {
    by_json(text, |de| de.deserialize_any(v))
}

/// `read` applied to a serde_json deserializer of `text`, which must be all of `text`.
pub fn by_json<'de, T>(
    text: &'de str,
    read: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'de>>) -> Result<T>,
) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = read(&mut de)?;
    de.end()?;
    Ok(value)
}

/// The name serde_json gives the newtype struct a `RawValue` is read as (it answers it with a
/// map of one member: this name, and the value's text).
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// The newtype struct `name` read from `text`, one whole JSON value: a `RawValue` is the text
/// itself, handed over as serde_json hands it (should serde_json ever change how, the
/// `RawValue` refuses it, and the caller's serde_json reads it); any other, by serde_json.
pub fn newtype_struct<'de, V: Visitor<'de>>(
    text: &'de str,
    name: &'static str,
    v: V,
) -> Result<V::Value> {
    if name == RAW_VALUE {
        return v.visit_map(RawValueMap { text: Some(text) });
    }
    by_json(text, |de| de.deserialize_newtype_struct(name, v))
}

/// `text`, known to be one whole JSON value (a `RawValue`'s text), as a `RawValue` again
/// without reading it; `None` should serde_json ever hand a `RawValue` its text otherwise.
pub fn raw_value(text: &str) -> Option<&RawValue> {
    <&RawValue as serde::Deserialize>::deserialize(Trusted(text)).ok()
}

/// Answers a `RawValue` with its text; nothing else.
struct Trusted<'a>(&'a str);

impl<'de> Deserializer<'de> for Trusted<'de> {
    type Error = Error;

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value> {
        if name != RAW_VALUE {
            return Err(unsure());
        }
        v.visit_map(RawValueMap { text: Some(self.0) })
    }

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
        Err(unsure())
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// What serde_json hands a `RawValue`'s visitor: `{RAW_VALUE: text}`.
struct RawValueMap<'a> {
    text: Option<&'a str>,
}

impl<'de> MapAccess<'de> for RawValueMap<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, k: K) -> Result<Option<K::Value>> {
        if self.text.is_none() {
            return Ok(None);
        }
        k.deserialize(de::value::BorrowedStrDeserializer::new(RAW_VALUE))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, v: V) -> Result<V::Value> {
        let text = self.text.take().ok_or_else(unsure)?;
        v.deserialize(de::value::BorrowedStrDeserializer::new(text))
    }
}

/// `deserialize_*` methods that serde_json answers from the text of the next value.
macro_rules! by_serde_json {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
            let text = self.value_text()?;
            by_json(text, |de| de.$method(v))
        }
    )*};
}

impl<'de> Deserializer<'de> for &mut Reader<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        match self.peek().ok_or_else(unsure)? {
            b'"' => self.string(v),
            b'-' | b'0'..=b'9' => self.number(v),
            b'{' => {
                self.open()?;
                let value = v.visit_map(Members {
                    r: &mut *self,
                    first: true,
                })?;
                self.close(b'}')?;
                Ok(value)
            }
            b'[' => {
                self.open()?;
                let value = v.visit_seq(Elements {
                    r: &mut *self,
                    first: true,
                })?;
                self.close(b']')?;
                Ok(value)
            }
            b't' => self.literal("true").and_then(|_| v.visit_bool(true)),
            b'f' => self.literal("false").and_then(|_| v.visit_bool(false)),
            b'n' => self.literal("null").and_then(|_| v.visit_unit()),
            _ => Err(unsure()),
        }
    }

    /// As serde_json: `null` is none, anything else some.
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        if self.peek() == Some(b'n') {
            self.literal("null")?;
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value> {
        let text = self.value_text()?;
        newtype_struct(text, name, v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value> {
        let text = self.value_text()?;
        by_json(text, |de| de.deserialize_enum(name, variants, v))
    }

    by_serde_json! { deserialize_bytes deserialize_byte_buf deserialize_i128 deserialize_u128 }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 char str string
        unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// The members of an object being read.
struct Members<'r, 'a> {
    r: &'r mut Reader<'a>,
    first: bool,
}

impl<'de> MapAccess<'de> for Members<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, k: K) -> Result<Option<K::Value>> {
        match self.r.peek() {
            Some(b'}') => return Ok(None),
            Some(b',') if !self.first => {
                self.r.i += 1;
                if self.r.peek() != Some(b'"') {
                    return Err(unsure());
                }
            }
            Some(b'"') if self.first => {}
            _ => return Err(unsure()),
        }
        self.first = false;
        k.deserialize(&mut *self.r).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, v: V) -> Result<V::Value> {
        if self.r.peek() != Some(b':') {
            return Err(unsure());
        }
        self.r.i += 1;
        v.deserialize(&mut *self.r)
    }
}

/// The elements of an array being read.
struct Elements<'r, 'a> {
    r: &'r mut Reader<'a>,
    first: bool,
}

impl<'de> SeqAccess<'de> for Elements<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, t: T) -> Result<Option<T::Value>> {
        match self.r.peek() {
            Some(b']') => return Ok(None),
            Some(b',') if !self.first => self.r.i += 1,
            Some(_) if self.first => {}
            _ => return Err(unsure()),
        }
        self.first = false;
        t.deserialize(&mut *self.r).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// What the reader makes of `text`, as a `Value`; `None` when it is not sure.
    fn read(text: &str) -> Option<Value> {
        let mut r = Reader::new(text);
        let v = Value::deserialize(&mut r).ok()?;
        r.end().ok()?;
        Some(v)
    }

    use serde::Deserialize;

    #[test]
    fn what_it_reads_is_what_serde_json_reads() {
        let lines = [
            r#"{"event":"text","seq":1,"text":"hi","n":null,"ok":true,"no":false}"#,
            r#" { "a" : [ 1 , 2.5 , -3 , 1e3 , -0 , "x\n\u00e9" ] , "b" : { } , "c" : [ ] } "#,
            r#"{"big":18446744073709551615,"bigger":18446744073709551616,"neg":-9223372036854775808}"#,
            r#"{"digits19":9999999999999999999,"zero":0,"f":0.1,"e":-1.5E-7}"#,
            r#"{"esc":"\"\\\/\b\f\n\r\t\u0041","pair":"\ud83d\ude00","k\u0065y":1}"#,
            r#"{"dup":1,"dup":"two"}"#,
            r#"[[[["deep"]]]]"#,
            r#""just a string""#,
            "{\"utf8\":\"h\u{e9}llo \u{1f600}\"}",
        ];
        for line in lines {
            let want: Value = serde_json::from_str(line).unwrap();
            assert_eq!(read(line), Some(want), "{line}");
        }
    }

    #[test]
    fn what_serde_json_refuses_it_is_not_sure_of() {
        // Beside scan.rs's list: arrays, a lone surrogate, unquoted names.
        let more = [
            "[1,]",
            "[,1]",
            r#"{"a":-}"#,
            r#"{"a":"\ud800"}"#,
            r#"{'a':1}"#,
            r#"{a:1}"#,
        ];
        for &line in crate::scan::tests::NOT_JSON.iter().chain(&more) {
            // Any value is read, so `[]` is too (the probe wants an object).
            let want = serde_json::from_str::<Value>(line).ok();
            assert_eq!(read(line), want, "{line}");
        }
    }

    #[test]
    fn a_raw_values_text_is_a_raw_value_again() {
        for text in [r#"{"a":[1,"\u00e9"]}"#, "null", r#""s""#, "1.5e3"] {
            assert_eq!(raw_value(text).map(RawValue::get), Some(text));
        }
        assert!(<u64 as serde::Deserialize>::deserialize(Trusted("1")).is_err());
    }

    #[test]
    fn raw_values_and_typed_values_are_read_as_serde_json_reads_them() {
        use serde_json::value::RawValue;
        #[derive(Deserialize)]
        struct Line<'a> {
            #[serde(borrow)]
            raw: &'a RawValue,
            boxed: Box<RawValue>,
            opt: Option<&'a RawValue>,
            none: Option<u64>,
            kind: Kind,
            n: u128,
            list: Vec<(u8, String)>,
        }
        #[derive(Deserialize, Debug, PartialEq)]
        enum Kind {
            A,
            B(u32),
        }
        let line = r#"{"raw": {"a" : [1, "x\n"]} ,"boxed":[ null ],"opt":"s","none":null,
            "kind":{"B":7},"n":340282366920938463463374607431768211455,"list":[[1,"é"]]}"#;
        let want: Line = serde_json::from_str(line).unwrap();
        let mut r = Reader::new(line);
        let got = Line::deserialize(&mut r).unwrap();
        r.end().unwrap();
        assert_eq!(got.raw.get(), r#"{"a" : [1, "x\n"]}"#);
        assert_eq!(got.boxed.get(), want.boxed.get());
        assert_eq!(got.opt.map(RawValue::get), Some(r#""s""#));
        assert_eq!(
            (got.none, &got.kind, got.n, &got.list),
            (want.none, &want.kind, want.n, &want.list)
        );
        assert_eq!(
            Kind::deserialize(&mut Reader::new(r#""A""#)).unwrap(),
            Kind::A
        );
    }

    #[test]
    fn nesting_beyond_its_depth_is_left_to_serde_json() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(read(&deep(MAX_DEPTH as usize)).is_some());
        assert_eq!(read(&deep(MAX_DEPTH as usize + 1)), None);
    }
}
