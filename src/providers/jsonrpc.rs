//! The JSON-RPC 2.0 envelope shared by the providers that speak it (Codex app-server, ACP).
//!
//! Decoding is two-phase (as the ACP crate does): the envelope first, with `params`,
//! `result` and `error` left as raw JSON, then the method's own types. The `jsonrpc` member is
//! optional: Codex omits it on the wire.

use crate::event::Str;
use crate::wire::{raw_str, Count, IfObject, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

#[derive(Debug, Deserialize)]
pub struct Envelope<'a> {
    #[serde(borrow)]
    pub id: Option<&'a RawValue>,
    pub method: OptStr<'a>,
    #[serde(borrow)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::keep_null")]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::keep_null")]
    pub error: Option<&'a RawValue>,
    /// Not JSON-RPC: Codex stamps its notifications with the time they were sent.
    #[serde(rename = "emittedAtMs")]
    pub emitted_at_ms: Option<crate::wire::Count>,
}

/// A JSON-RPC message read in one pass: the envelope, with `params` and an object `result`
/// read as the provider's own types `P` and `R`. Read as an [`Envelope`] with both captured
/// raw and parsed again, most of every line was scanned twice (ACP: four times, down to its
/// update). Both are boxed: provider structs are large, and moving them costs.
#[derive(Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>, R: Deserialize<'de>"))]
pub struct Message<'a, P, R> {
    #[serde(borrow)]
    pub id: Option<&'a RawValue>,
    pub method: OptStr<'a>,
    #[serde(default)]
    pub params: IfObject<Box<P>>,
    #[serde(default, deserialize_with = "crate::wire::present")]
    pub result: Option<IfObject<Box<R>>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::keep_null")]
    pub error: Option<&'a RawValue>,
    /// Not JSON-RPC: Codex stamps its notifications with the time they were sent.
    #[serde(rename = "emittedAtMs")]
    pub emitted_at_ms: Option<Count>,
}

/// A [`Message`] taken apart: the envelope, `params` (an object) and `result` (when there).
pub type Parts<'a, P, R> = (Envelope<'a>, Option<Box<P>>, Option<IfObject<Box<R>>>);

impl<'a, P: Deserialize<'a>, R: Deserialize<'a>> Message<'a, P, R> {
    /// Reads `line`. Where the typed `params` or `result` refuse it, they may be members its
    /// kind of message does not use (a `result` beside an `error`): the line is then read as
    /// an [`Envelope`], and `params` (of a request or notification) and `result` (of an
    /// answer) from it, as the converters did before; what still fails, fails as it did.
    /// `members`: the line's, as detection's probe found them ([`crate::members`]).
    pub fn read(
        line: &'a str,
        members: Option<&crate::members::Members<'a>>,
    ) -> serde_json::Result<Self> {
        if let Ok(m) = crate::members::read(line, members) {
            return Ok(m);
        }
        let env: Envelope = crate::members::read(line, members)?;
        let kind = env.kind();
        let params = match (kind, env.params) {
            (Some(Kind::Request | Kind::Notification), Some(p)) => serde_json::from_str(p.get())?,
            _ => IfObject(None),
        };
        let result = match (kind, env.result) {
            (Some(Kind::Response), Some(r)) => Some(serde_json::from_str(r.get())?),
            _ => None,
        };
        Ok(Message {
            id: env.id,
            method: env.method,
            params,
            result,
            error: env.error,
            emitted_at_ms: env.emitted_at_ms,
        })
    }
}

impl<'a, P, R> Message<'a, P, R> {
    pub fn kind(&self) -> Option<Kind> {
        kind(
            self.method.is_some(),
            self.id,
            self.error,
            self.result.is_some(),
        )
    }

    /// The envelope (`params` and `result` not in it), and the two.
    pub fn into_parts(self) -> Parts<'a, P, R> {
        let env = Envelope {
            id: self.id,
            method: self.method,
            params: None,
            result: None,
            error: self.error,
            emitted_at_ms: self.emitted_at_ms,
        };
        (env, self.params.0, self.result)
    }
}

/// What a JSON-RPC message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A method call that expects an answer (`id` + `method`).
    Request,
    /// A method call without an answer (`method`, no `id`).
    Notification,
    /// An answer (`id` + `result`).
    Response,
    /// A failed answer (`id` + `error`).
    ErrorResponse,
}

impl Envelope<'_> {
    pub fn kind(&self) -> Option<Kind> {
        kind(
            self.method.is_some(),
            self.id,
            self.error,
            self.result.is_some(),
        )
    }

    /// The request id as text (`0`, `"abc"` → `abc`), for `requestId`.
    pub fn id_text(&self) -> Str<'_> {
        match self.id {
            Some(raw) => raw_str(raw).unwrap_or(Cow::Borrowed(raw.get())),
            None => Cow::Borrowed(""),
        }
    }
}

/// What a message is, from whether it has a `method`, its `id`, its `error` and whether it has
/// a `result` (`null` included): for a converter that reads the envelope its own way.
pub fn kind(
    has_method: bool,
    id: Option<&RawValue>,
    error: Option<&RawValue>,
    has_result: bool,
) -> Option<Kind> {
    let has_id = id.is_some_and(|i| i.get() != "null");
    match (has_method, has_id) {
        (true, true) => Some(Kind::Request),
        (true, false) => Some(Kind::Notification),
        (false, _) if error.is_some_and(|e| e.get() != "null") => Some(Kind::ErrorResponse),
        (false, _) if has_result => Some(Kind::Response),
        _ => None,
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Deserialize)]
pub struct RpcError<'a> {
    pub code: Option<i64>,
    pub message: OptStr<'a>,
    #[serde(borrow)]
    pub data: Option<&'a RawValue>,
}

/// The names of the members of a JSON object (empty for anything else). Detection asks this
/// of JSON-RPC answers, so it reads them with [`crate::scan::members`] (no value is built),
/// and with serde_json only what that refuses (a name with an escape, say).
pub fn member_names(json: &str) -> Vec<Str<'_>> {
    if !json.starts_with('{') {
        return Vec::new();
    }
    let mut names = Vec::new();
    let scanned = crate::scan::members(json, |name, _| {
        names.push(Str::Borrowed(name));
        Some(())
    });
    if scanned.is_some() {
        return names;
    }
    serde_json::from_str::<crate::event::Pairs<&RawValue>>(json)
        .map(|p| p.0.into_iter().map(|(k, _)| k).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(s: &str) -> Envelope<'_> {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn member_names_as_serde_reads_them() {
        assert_eq!(
            member_names(r#"{"a":1, "b" : {"c":[2]},"a":null}"#),
            ["a", "b", "a"]
        );
        assert_eq!(member_names(r#"{"\u0061b":1,"c":2}"#), ["ab", "c"]);
        assert!(member_names(r#"{"a":1,}"#).is_empty());
        assert!(member_names("[1]").is_empty());
        assert!(member_names("{}").is_empty());
    }

    #[test]
    fn kinds() {
        assert_eq!(env(r#"{"method":"a","id":1}"#).kind(), Some(Kind::Request));
        assert_eq!(env(r#"{"method":"a"}"#).kind(), Some(Kind::Notification));
        assert_eq!(env(r#"{"id":1,"result":{}}"#).kind(), Some(Kind::Response));
        assert_eq!(
            env(r#"{"id":1,"error":{"code":1}}"#).kind(),
            Some(Kind::ErrorResponse)
        );
        assert_eq!(env(r#"{"id":1}"#).kind(), None);
    }

    #[test]
    fn id_text() {
        assert_eq!(env(r#"{"id":7,"result":1}"#).id_text(), "7");
        assert_eq!(env(r#"{"id":"r-1","result":1}"#).id_text(), "r-1");
    }
}
