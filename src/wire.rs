//! Small serde helpers for reading provider wire formats tolerantly.

use crate::event::{Pairs, Str};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// Where the value of the member `key` (given quoted, with its colon: `"type":`) starts
/// among an object's first members, read from its bytes without parsing them: `obj` starts
/// with `{`, and its members are stepped over one by one (a string to its closing quote,
/// escapes skipped; a number or a literal to the next `,` or `}`) until one is `key`. It is
/// then the object's own member, since nothing is nested before it. `None` when that cannot
/// be told so (a nested value comes first, the object or the bytes end, a byte is out of
/// place where a key, a colon or a comma goes): the caller parses the object then. The
/// members before it are not checked as a parse checks them (a literal is not spelled out),
/// so a caller that must reject a line that is not JSON parses it. Of a key written twice,
/// the first is read.
pub fn head_member(obj: &[u8], key: &[u8]) -> Option<usize> {
    if obj.first() != Some(&b'{') {
        return None;
    }
    let mut at = skip_space(obj, 1)?;
    loop {
        if obj[at] != b'"' {
            return None;
        }
        if obj[at..].starts_with(key) {
            return Some(at + key.len());
        }
        at = skip_space(obj, string_end(obj, at + 1)?)?;
        if obj[at] != b':' {
            return None;
        }
        at = skip_space(obj, at + 1)?;
        match obj[at] {
            b'"' => at = string_end(obj, at + 1)?,
            b'{' | b'[' => return None,
            _ => at += obj[at..].iter().position(|&b| b == b',' || b == b'}')?,
        }
        at = skip_space(obj, at)?;
        if obj[at] != b',' {
            return None;
        }
        at = skip_space(obj, at + 1)?;
    }
}

/// The first byte at or after `at` that is not JSON whitespace; `None` at the end.
fn skip_space(b: &[u8], mut at: usize) -> Option<usize> {
    while matches!(b.get(at)?, b' ' | b'\t' | b'\n' | b'\r') {
        at += 1;
    }
    Some(at)
}

/// Just past the quote that closes the string whose text starts at `at`; `None` when the
/// bytes end first. Found by `memchr`: most of a line's first strings are a few dozen bytes,
/// looked at 16 or 32 at a time.
fn string_end(b: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let i = at + memchr::memchr2(b'"', b'\\', b.get(at..)?)?;
        if b[i] == b'"' {
            return Some(i + 1);
        }
        at = i + 2;
    }
}

/// The value of [`head_member`] `key` when it is a string without escapes (its bytes, quotes
/// left out). `None` when it is not one, or cannot be told.
pub fn head_str<'a>(obj: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = head_member(obj, key)?;
    let rest = obj.get(at..)?.strip_prefix(b"\"")?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    (rest[end] == b'"').then(|| &rest[..end])
}

/// Visitor methods for `true`/`false`, numbers and `null`, all giving `$none`: for visitors
/// that read one kind of value and take any other for nothing.
macro_rules! scalars_are {
    ($none:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
    };
}

/// A JSON number read as a non-negative integer, whatever its JSON spelling (`5`, `5.0`, `-1`).
/// Negative numbers become 0; fractions are rounded. Anything else fails the parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Count, E> {
                Ok(Count(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Count, E> {
                Ok(Count(v.max(0) as u64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Count, E> {
                Ok(Count(if v.is_finite() && v > 0.0 {
                    v.round() as u64
                } else {
                    0
                }))
            }
        }
        d.deserialize_any(V)
    }
}

/// Column and message for a line that is not valid JSON: the one wording of every command
/// (convert, validate, reduce, replay). `unterminated`: the input ended inside the line.
pub fn json_problem(e: &serde_json::Error, unterminated: bool) -> (u64, String) {
    use serde_json::error::Category;
    let mut col = e.column() as u64;
    let msg = without_position(e);
    // serde_json points at the byte before an unescaped control character.
    if msg.starts_with("control character") {
        col += 1;
    }
    let msg = match e.classify() {
        Category::Eof if unterminated => {
            format!("truncated JSON: the input ended inside this line ({msg})")
        }
        Category::Eof => format!("truncated JSON: {msg}"),
        // Valid JSON, but which of the two values counts is anyone's guess.
        Category::Data if msg.starts_with("duplicate field") => {
            format!("ambiguous JSON: {}", msg.replacen("field", "member", 1))
        }
        _ => format!("invalid JSON: {msg}"),
    };
    (col, msg)
}

/// A serde_json error's message without its "at line L column C" suffix (which would point
/// into whatever sub-document was being parsed).
pub fn without_position(e: &serde_json::Error) -> String {
    let mut msg = e.to_string();
    if let Some(i) = msg.rfind(" at line ") {
        msg.truncate(i);
    }
    msg
}

/// For `Option<&RawValue>` fields with `#[serde(default, deserialize_with = "keep_null")]`:
/// a member that is `null` is kept as raw `null` instead of becoming `None` (a JSON-RPC answer
/// `{"id":3,"result":null}` is an answer all the same).
pub fn keep_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

/// [`keep_null`] for any type: `Some` whenever the member is there, whatever its value (with
/// `#[serde(default, deserialize_with = "present")]`; `null` is then the inner type's to read).
pub fn present<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// For `Option<Str>` fields, with `#[serde(borrow, default, deserialize_with = "opt_str")]`
/// (the providers' wire structs say [`OptStr`], which reads through this): serde borrows a
/// `Cow<str>` only when it is not inside an `Option`; left to itself every optional string
/// would be copied into an allocation of its own (7% of converting Claude output). A string
/// with escapes is unescaped into an owned one, as before; `null` is none.
pub fn opt_str<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<Str<'a>>, D::Error> {
    struct Opt;
    impl<'de> Visitor<'de> for Opt {
        type Value = Option<Str<'de>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("option")
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_str(CowStr).map(Some)
        }
    }
    d.deserialize_option(Opt)
}

/// An optional string member of a wire struct, read from a string (borrowed from the input,
/// or owned when it has escapes), `null` or nothing (an absent member needs no
/// `#[serde(default)]`): the field reads `name: OptStr<'a>` where an `Option<Str>` needed
/// [`opt_str`]'s attribute.
///
/// It only borrows: `Deserialize<'de>` is implemented for `'de: 'a`, so its struct declares
/// the borrow with `#[serde(borrow)]` on one of its fields (serde puts the bound on the whole
/// struct), or it does not compile; it never copies silently.
///
/// Read it through `Deref` (`it.name.as_deref()`); take the `Option` out with `.0`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptStr<'a>(pub Option<Str<'a>>);

impl<'a> std::ops::Deref for OptStr<'a> {
    type Target = Option<Str<'a>>;
    fn deref(&self) -> &Option<Str<'a>> {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for OptStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        opt_str(d).map(OptStr)
    }
}

/// A string, borrowed when it has no escapes (a visitor for `deserialize_str`).
pub struct CowStr;

impl<'de> Visitor<'de> for CowStr {
    type Value = Str<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// A member read as `T` when it is an object, and as nothing when it is anything else: one
/// pass over it, where capturing a `RawValue` and parsing that again took two.
pub struct IfObject<T>(pub Option<T>);

impl<T> Default for IfObject<T> {
    fn default() -> Self {
        IfObject(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for IfObject<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = IfObject<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(|t| IfObject(Some(t)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(IfObject(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(IfObject(None))
            }
            scalars_are!(IfObject(None));
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// `Option<Count>` to `Option<u64>`.
pub fn count(c: Option<Count>) -> Option<u64> {
    c.map(|c| c.0)
}

impl<'de: 'a, 'a, V: Deserialize<'de>> Deserialize<'de> for Pairs<'a, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Vis<'a, V>(PhantomData<(&'a (), V)>);
        impl<'de: 'a, 'a, V: Deserialize<'de>> Visitor<'de> for Vis<'a, V> {
            type Value = Pairs<'a, V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0));
                while let Some((k, v)) = m.next_entry::<Cow<'de, str>, V>()? {
                    out.push((k, v));
                }
                Ok(Pairs(out))
            }
        }
        d.deserialize_map(Vis(PhantomData))
    }
}

/// The text of a JSON string held as raw JSON, or `None` for any other JSON value.
pub fn raw_str(raw: &RawValue) -> Option<Str<'_>> {
    json_str(raw.get())
}

/// The text of the JSON string `json`, or `None` for any other JSON value.
fn json_str(json: &str) -> Option<Str<'_>> {
    if let Some(inner) = json.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        if !inner.contains('\\') {
            return Some(Cow::Borrowed(inner));
        }
    }
    if json.starts_with('"') {
        serde_json::from_str::<Cow<str>>(json).ok()
    } else {
        None
    }
}

/// A member's JSON text, unparsed: detection's probe holds its members so. Like a
/// `&RawValue`, which only serde_json can make; a `Raw` also comes from [`crate::scan`],
/// which checks the text on its own way through the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    /// Text that is one JSON value (as [`crate::scan::members`] hands it out).
    pub fn new(json: &'a str) -> Self {
        Raw(json)
    }
    pub fn get(self) -> &'a str {
        self.0
    }
    /// The string's text, or `None` for any other JSON value.
    pub fn str(self) -> Option<Str<'a>> {
        json_str(self.0)
    }
    pub fn is_object(self) -> bool {
        self.0.starts_with('{')
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(d).map(|r| Raw(r.get()))
    }
}

/// Whether raw JSON is an object.
/// The HTTP status an agent's error message states in words: `API Error: 429 …`,
/// `API Error: Request rejected (429)`, `last status: 429`, `status 500`, or a JSON error body `{"error":{"code":500,…}}`. Only a
/// number from 400 to 599 right after such words counts: a message that does not say is
/// `None`.
pub fn http_status_in(message: &str) -> Option<u64> {
    const AFTER: &[&str] = &[
        "API Error: ",
        "api error: ",
        "Request rejected (",
        "last status: ",
        "status: ",
        "status ",
        "\"code\":",
        "\"code\": ",
    ];
    AFTER.iter().find_map(|w| {
        message.match_indices(w).find_map(|(i, _)| {
            let rest = &message[i + w.len()..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let n: u64 = rest[..digits].parse().ok()?;
            (digits == 3 && (400..600).contains(&n)).then_some(n)
        })
    })
}

pub fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// Whether raw JSON is `null`.
pub fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

/// A list of strings, read in the same pass as the rest of the line: string elements as they
/// are, objects by their `name` member; other elements are skipped. `None` when the member
/// is not an array (or is missing, with `#[serde(default)]`).
#[derive(Default)]
pub struct NameList<'a>(pub Option<Vec<Str<'a>>>);

impl<'de: 'a, 'a> Deserialize<'de> for NameList<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NameList<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<Self::Value, A::Error> {
                Names::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(|n| NameList(Some(n.0)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(NameList(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(NameList(None))
            }
            scalars_are!(NameList(None));
        }
        d.deserialize_any(V)
    }
}

/// The array of a [`NameList`], as a visitor: a tagless `enum` would buffer every element.
struct Names<'a>(Vec<Str<'a>>);

impl<'de> Deserialize<'de> for Names<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Names<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(NameItem(item)) = seq.next_element()? {
                    v.extend(item);
                }
                Ok(Names(v))
            }
        }
        d.deserialize_seq(V)
    }
}

/// One element of a [`NameList`]: a string, or an object's string member `name`.
struct NameItem<'a>(Option<Str<'a>>);

impl<'de> Deserialize<'de> for NameItem<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrOrSkip { object_name: true })
            .map(NameItem)
    }
}

/// Any JSON value: `Some` for a string (or, with `object_name`, an object with one string
/// member `name`), `None` for anything else, which is skipped.
struct StrOrSkip {
    object_name: bool,
}

impl<'de> Visitor<'de> for StrOrSkip {
    type Value = Option<Str<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }
    scalars_are!(None);
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut name, mut names) = (None, 0);
        while let Some(NameKey(is_name)) = map.next_key()? {
            if self.object_name && is_name {
                names += 1;
                name = map.next_value_seed(StrOrSkipSeed)?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        // A `name` given twice names nothing (as a derived struct would refuse it).
        Ok(if names == 1 { name } else { None })
    }
}

struct StrOrSkipSeed;

impl<'de> serde::de::DeserializeSeed<'de> for StrOrSkipSeed {
    type Value = Option<Str<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(StrOrSkip { object_name: false })
    }
}

/// A member name, only as "is it `name`".
struct NameKey(bool);

impl<'de> Deserialize<'de> for NameKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NameKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E>(self, v: &str) -> Result<NameKey, E> {
                Ok(NameKey(v == "name"))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member is found past strings holding braces, quotes and escapes, and past numbers
    /// and literals; not past a nested value, nor in a line cut short.
    #[test]
    fn a_head_member_is_found_among_the_first_members_only() {
        let ty = br#""type":"#;
        let at = |line: &str| {
            head_str(line.as_bytes(), ty).map(|v| String::from_utf8_lossy(v).into_owned())
        };
        assert_eq!(at(r#"{"type":"a","type":"b"}"#).as_deref(), Some("a"));
        assert_eq!(
            at(r#"{"t":"{[\"type\":\\","n":-1.5e3,"ok":true, "type":"x"}"#).as_deref(),
            Some("x")
        );
        assert_eq!(at(r#"{ "n" : null , "type":"y"}"#).as_deref(), Some("y"));
        assert_eq!(
            at("{\x0c\"type\":\"ff\"}"),
            None,
            "a form feed is no JSON space"
        );
        assert_eq!(at(r#"{"p":{"type":"inner"},"type":"z"}"#), None);
        assert_eq!(at(r#"{"p":[1],"type":"z"}"#), None);
        assert_eq!(at(r#"{"other":"v"}"#), None);
        assert_eq!(at(r#"{"s":"cut sh"#), None);
        assert_eq!(at(r#"["type":"x"]"#), None);
        assert_eq!(
            at(r#"{"type":"esc\"aped"}"#),
            None,
            "a string with escapes is not given"
        );
        assert_eq!(head_member(br#"{"a":1,"type":{"x":1}}"#, ty), Some(14));
    }

    #[test]
    fn an_opt_str_borrows_unless_escaped_and_is_none_when_null_or_absent() {
        #[derive(serde::Deserialize)]
        struct S<'a> {
            #[serde(borrow)]
            a: OptStr<'a>,
            b: OptStr<'a>,
        }
        let s: S = serde_json::from_str(r#"{"a":"plain","b":"tab\t"}"#).unwrap();
        assert!(matches!(s.a.0, Some(Cow::Borrowed("plain"))));
        assert!(matches!(s.b.0, Some(Cow::Owned(t)) if t == "tab\t"));
        let s: S = serde_json::from_str(r#"{"a":null}"#).unwrap();
        assert_eq!((s.a.0, s.b.0), (None, None));
        // What the `opt_str` attribute read, it reads alike; what it refused (a value of
        // another type), it refuses with the same message.
        #[derive(serde::Deserialize)]
        struct Attr<'a> {
            #[serde(borrow, default, deserialize_with = "opt_str")]
            a: Option<Str<'a>>,
        }
        for line in [
            r#"{"a":"x"}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":null}"#,
            r#"{}"#,
            r#"{"a":5}"#,
            r#"{"a":["x"]}"#,
            r#"{"a":{}}"#,
        ] {
            let new = serde_json::from_str::<S>(line).map(|s| s.a.0);
            let old = serde_json::from_str::<Attr>(line).map(|s| s.a);
            assert_eq!(
                new.map_err(|e| e.to_string()),
                old.map_err(|e| e.to_string()),
                "{line}"
            );
        }
    }

    #[test]
    fn http_statuses_stated_in_words() {
        assert_eq!(
            http_status_in("Internal error: API Error: 500 mock"),
            Some(500)
        );
        assert_eq!(
            http_status_in("exceeded retry limit, last status: 429 Too Many"),
            Some(429)
        );
        assert_eq!(
            http_status_in(r#"{"error":{"code":500,"message":"x","status":"INTERNAL"}}"#),
            Some(500)
        );
        assert_eq!(
            http_status_in("Internal error: API Error: Request rejected (429) · rate limited"),
            Some(429)
        );
        assert_eq!(http_status_in("API Error: 5000 tokens"), None);
        assert_eq!(http_status_in("took 429 ms"), None);
        assert_eq!(http_status_in("status 200"), None);
    }

    #[test]
    fn count_accepts_any_number() {
        let v: Vec<Count> = serde_json::from_str("[5, 5.4, -2, 1e3]").unwrap();
        assert_eq!(v, vec![Count(5), Count(5), Count(0), Count(1000)]);
        assert!(serde_json::from_str::<Count>("\"5\"").is_err());
    }

    #[test]
    fn pairs_keep_order() {
        let p: Pairs<Count> = serde_json::from_str(r#"{"b":1,"a":2}"#).unwrap();
        assert_eq!(p.0[0].0, "b");
        assert_eq!(p.0[1].1, Count(2));
    }

    fn names(raw: &RawValue) -> Option<Vec<Str<'_>>> {
        serde_json::from_str::<NameList>(raw.get()).unwrap().0
    }

    #[test]
    fn names_from_mixed_list() {
        let raw: &RawValue = serde_json::from_str(r#"["a",{"name":"b","x":1},3]"#).unwrap();
        assert_eq!(names(raw).unwrap(), vec!["a", "b"]);
        let raw: &RawValue = serde_json::from_str(
            r#"["a\"b",{"x":[{"name":"no"}],"name":"c"},{"name":1},{"name":"d","name":"e"},["f"],null,{}]"#,
        )
        .unwrap();
        assert_eq!(names(raw).unwrap(), vec!["a\"b", "c"]);
        let raw: &RawValue = serde_json::from_str(r#"{"name":"x"}"#).unwrap();
        assert_eq!(names(raw), None);
    }

    #[test]
    fn if_object_reads_objects_only() {
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow)]
            a: &'a str,
        }
        #[derive(serde::Deserialize)]
        struct W<'a> {
            #[serde(borrow, default)]
            x: IfObject<T<'a>>,
        }
        let w: W = serde_json::from_str(r#"{"x":{"a":"b","c":[1]}}"#).unwrap();
        assert_eq!(w.x.0.map(|t| t.a), Some("b"));
        for other in [
            r#"{"x":[{"a":"b"}]}"#,
            r#"{"x":"s"}"#,
            r#"{"x":null}"#,
            r#"{"x":1.5}"#,
            "{}",
        ] {
            let w: W = serde_json::from_str(other).unwrap();
            assert!(w.x.0.is_none(), "{other}");
        }
        assert!(serde_json::from_str::<W>(r#"{"x":{"a":1}}"#).is_err());
    }
}
