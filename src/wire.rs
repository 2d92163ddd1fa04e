//! Small serde helpers for reading provider wire formats tolerantly.

use crate::event::{Pairs, Str};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

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
    let s = raw.get();
    if let Some(inner) = s.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        if !inner.contains('\\') {
            return Some(Cow::Borrowed(inner));
        }
    }
    if s.starts_with('"') {
        serde_json::from_str::<Cow<str>>(raw.get()).ok()
    } else {
        None
    }
}

/// Whether raw JSON is an object.
pub fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// Whether raw JSON is `null`.
pub fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

/// A list of strings from raw JSON: string elements as they are, objects by their `name`
/// member; other elements are skipped. `None` when the value is not an array.
pub fn names(raw: &RawValue) -> Option<Vec<Str<'_>>> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Item<'a> {
        #[serde(borrow)]
        S(Cow<'a, str>),
        N {
            #[serde(borrow)]
            name: Cow<'a, str>,
        },
        Other(serde::de::IgnoredAny),
    }
    let items: Vec<Item> = serde_json::from_str(raw.get()).ok()?;
    Some(
        items
            .into_iter()
            .filter_map(|i| match i {
                Item::S(s) | Item::N { name: s } => Some(s),
                Item::Other(_) => None,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn names_from_mixed_list() {
        let raw: &RawValue = serde_json::from_str(r#"["a",{"name":"b","x":1},3]"#).unwrap();
        assert_eq!(names(raw).unwrap(), vec!["a", "b"]);
    }
}
