//! Detection: which wire format a line is in, decided from the line alone.
//!
//! Rules, tried in this order (the first that matches wins):
//! 1. **insights**: an object whose `event` member is a *string* is an InsightsEvent already;
//!    it passes through (only `seq` is renumbered), so converting twice is a no-op. Claude's
//!    `stream_event` lines also have an `event` member, but it is an object.
//! 2. each provider of [`crate::providers::PROVIDERS`], in registry order, by its `sniff` rule
//!    (Claude: a `type` it emits, plus `message` for `user`/`assistant` and `subtype` for
//!    `system`/`result`).
//!    2b. a JSON-RPC answer that no rule claims (`{"id":4,"result":{}}`) belongs to the
//!    JSON-RPC provider (Codex app-server, ACP) of the last line that named one.
//! 3. otherwise the line is unknown and becomes a `raw` event with provider `unknown`.
//!
//! With `--from NAME` rule 2 is replaced by "always NAME"; rule 1 still applies.

use crate::providers::{Provider, PROVIDERS};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The members of a line that detection looks at, borrowed and unparsed.
#[derive(Debug, Default, Deserialize)]
pub struct Probe<'a> {
    #[serde(rename = "type", borrow)]
    pub ty: Option<&'a RawValue>,
    #[serde(borrow)]
    pub subtype: Option<&'a RawValue>,
    #[serde(borrow)]
    pub event: Option<&'a RawValue>,
    #[serde(borrow)]
    pub message: Option<&'a RawValue>,
    // JSON-RPC members (Codex app-server, ACP) and Codex's legacy `{id, msg}` envelope.
    #[serde(borrow)]
    pub jsonrpc: Option<&'a RawValue>,
    #[serde(borrow)]
    pub method: Option<&'a RawValue>,
    #[serde(borrow)]
    pub id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::keep_null")]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::keep_null")]
    pub error: Option<&'a RawValue>,
    #[serde(borrow)]
    pub msg: Option<&'a RawValue>,
    // Envelope members several providers share, read here so converters need no extra pass.
    #[serde(borrow)]
    pub session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub uuid: Option<&'a RawValue>,
    #[serde(borrow)]
    pub timestamp: Option<&'a RawValue>,
    // Members that tell the Claude-like formats apart (see each provider's `sniff`).
    /// Every OpenCode line (`testdata/opencode/text-only.jsonl` line 1).
    #[serde(rename = "sessionID", borrow)]
    pub session_id_oc: Option<&'a RawValue>,
    /// Cursor's time stamp (`assistant`, `thinking`, `tool_call` lines).
    #[serde(borrow)]
    pub timestamp_ms: Option<&'a RawValue>,
    /// Top-level usage: camelCase on Cursor's `result`, with `total_tokens` on Qwen Code's.
    #[serde(borrow)]
    pub usage: Option<&'a RawValue>,
    /// Qwen Code's `system/init` (`testdata/qwen/text-only.jsonl` line 1).
    #[serde(borrow)]
    pub qwen_code_version: Option<&'a RawValue>,
    /// Qwen Code's `system/task_*` lines keep their fields in `data`.
    #[serde(borrow)]
    pub data: Option<&'a RawValue>,
    /// AceClaw's WebSocket bridge envelope `{eventId, sessionId, receivedAt, event}`.
    #[serde(rename = "eventId", borrow)]
    pub event_id: Option<&'a RawValue>,
}

impl<'a> Probe<'a> {
    /// `type` when it is a plain string without escapes (all real type names are).
    pub fn ty(&self) -> Option<&'a str> {
        plain_str(self.ty?)
    }
    pub fn subtype(&self) -> Option<&'a str> {
        plain_str(self.subtype?)
    }
    pub fn method(&self) -> Option<&'a str> {
        plain_str(self.method?)
    }
    /// A JSON-RPC answer without a method: which provider it belongs to is not in the line.
    pub fn is_bare_response(&self) -> bool {
        self.method.is_none()
            && self.id.is_some()
            && (self.result.is_some() || self.error.is_some())
    }
    /// Whether the line is an InsightsEvent: its `event` member is a string.
    pub fn is_insights_event(&self) -> bool {
        self.event.is_some_and(|e| e.get().starts_with('"'))
    }
}

/// The contents of a JSON string literal that needs no unescaping.
fn plain_str(raw: &RawValue) -> Option<&str> {
    let s = raw.get();
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then_some(inner)
}

/// What to do with a line.
pub enum Route {
    Passthrough,
    Provider(&'static Provider),
    Unknown,
}

/// Detection's memory: which JSON-RPC provider the stream speaks.
///
/// A JSON-RPC answer (`{"id":4,"result":{}}`) often carries nothing that names its provider.
/// Such a line goes to the JSON-RPC provider of the last line that did name one (rule 2b).
/// This is the only state detection keeps; converters stay stateless.
#[derive(Default)]
pub struct Detector {
    pub(crate) last_jsonrpc: Option<&'static Provider>,
    /// A line of this run named a JSON-RPC provider.
    named: bool,
    /// A JSON-RPC answer was routed before any line named one: the result depended on the
    /// state the detector started with (`--jobs` checks this at chunk boundaries).
    pub(crate) depended: bool,
}

impl Detector {
    /// Applies the rules above. `forced` is the provider chosen with `--from`.
    pub fn route(&mut self, probe: &Probe, forced: Option<&'static Provider>) -> Route {
        if probe.is_insights_event() {
            return Route::Passthrough;
        }
        if let Some(p) = forced {
            return Route::Provider(p);
        }
        match PROVIDERS.iter().find(|p| (p.sniff)(probe)) {
            Some(p) => {
                if p.jsonrpc {
                    self.last_jsonrpc = Some(p);
                    self.named = true;
                }
                Route::Provider(p)
            }
            None if probe.is_bare_response() && !self.named => {
                self.depended = true;
                match self.last_jsonrpc {
                    Some(p) => Route::Provider(p),
                    None => Route::Unknown,
                }
            }
            None => match self.last_jsonrpc {
                Some(p) if probe.is_bare_response() => Route::Provider(p),
                _ => Route::Unknown,
            },
        }
    }
}

/// Routes one line on its own, without detection's memory.
#[cfg(test)]
pub fn route(probe: &Probe, forced: Option<&'static Provider>) -> Route {
    Detector::default().route(probe, forced)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(line: &str) -> &'static str {
        let probe: Probe = serde_json::from_str(line).unwrap();
        match route(&probe, None) {
            Route::Passthrough => "insights",
            Route::Provider(p) => p.name,
            Route::Unknown => "unknown",
        }
    }

    #[test]
    fn rules_in_order() {
        // testdata/claude/thinking-tool.jsonl line 3: `event` is an object.
        assert_eq!(
            name(r#"{"type":"stream_event","event":{"type":"message_stop"}}"#),
            "claude"
        );
        assert_eq!(name(r#"{"event":"text","id":"x","text":"hi"}"#), "insights");
        assert_eq!(name(r#"{"type":"system","subtype":"init"}"#), "claude");
        assert_eq!(name(r#"{"type":"nonsense"}"#), "unknown");
        assert_eq!(name(r#"{}"#), "unknown");
    }

    #[test]
    fn claude_like_formats_by_what_only_they_write() {
        // Claude's own lines stay Claude's (testdata/claude/text-only.jsonl).
        assert_eq!(
            name(
                r#"{"type":"system","subtype":"init","session_id":"28e5c88f-66bb-4260-b740-ce3907541df7","claude_code_version":"2.1.197"}"#
            ),
            "claude"
        );
        assert_eq!(
            name(r#"{"type":"result","subtype":"success","usage":{"input_tokens":1}}"#),
            "claude"
        );
        // testdata/qwen/text-only.jsonl line 1, testdata/opencode/text-only.jsonl line 1,
        // testdata/cursor/shell-read.jsonl line 3, testdata/amp/bash-edit.jsonl line 1.
        assert_eq!(
            name(r#"{"type":"system","subtype":"init","qwen_code_version":"0.24.4"}"#),
            "qwen"
        );
        assert_eq!(
            name(r#"{"type":"text","timestamp":1,"sessionID":"ses_1","part":{}}"#),
            "opencode"
        );
        assert_eq!(
            name(r#"{"type":"thinking","subtype":"delta","text":"x","timestamp_ms":1}"#),
            "cursor"
        );
        assert_eq!(
            name(r#"{"type":"system","subtype":"init","session_id":"T-7f3c1a52"}"#),
            "amp"
        );
        assert_eq!(
            name(r#"{"jsonrpc":"2.0","method":"stream.text","params":{"delta":"x"}}"#),
            "aceclaw"
        );
    }

    #[test]
    fn plain_strings_only() {
        let raw: &RawValue = serde_json::from_str(r#""a\"b""#).unwrap();
        assert_eq!(plain_str(raw), None);
        let raw: &RawValue = serde_json::from_str(r#""init""#).unwrap();
        assert_eq!(plain_str(raw), Some("init"));
    }
}
