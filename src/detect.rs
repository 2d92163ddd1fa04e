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
//!    2c. a line the Claude rule claims belongs to the Claude-like provider (Qwen Code,
//!    Cursor, Amp: [`CLAUDE_LIKE`]) of the last line that named one (their init lines do),
//!    when it names the same session or none, and no Claude `system/init` named Claude
//!    since: a Qwen or Cursor stream's later lines, most of which are Claude's member for
//!    member, keep their own mapping.
//! 3. otherwise the line is unknown and becomes a `raw` event with provider `unknown`.
//!
//! With `--from NAME` rule 2 is replaced by "always NAME"; rule 1 still applies.

use crate::event::Str;
use crate::providers::{Provider, PROVIDERS};
use crate::wire::{CowStr, Raw};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

/// The members of a line that detection looks at, borrowed and unparsed.
///
/// Its fields are the envelope members that several providers' rules and converters read.
/// A rule that needs any other member (OpenCode's `sessionID`, Cursor's `timestamp_ms`) names
/// it with [`Probe::member`], which looks it up among all the members the probe kept: a new
/// provider's rule needs nothing here.
///
/// [`Probe::fill`] fills it in one pass with [`crate::scan`]; serde reads the lines that pass
/// refuses (and reports what is wrong with a line that is not JSON).
#[derive(Debug, Default, PartialEq)]
pub struct Probe<'a> {
    pub ty: Option<Raw<'a>>,
    pub subtype: Option<Raw<'a>>,
    pub event: Option<Raw<'a>>,
    pub message: Option<Raw<'a>>,
    // JSON-RPC members (Codex app-server, ACP) and Codex's legacy `{id, msg}` envelope.
    pub jsonrpc: Option<Raw<'a>>,
    pub method: Option<Raw<'a>>,
    pub id: Option<Raw<'a>>,
    pub params: Option<Raw<'a>>,
    /// `result` and `error` keep a `null` (a JSON-RPC answer may be `{"id":1,"result":null}`);
    /// the other fields leave it out.
    pub result: Option<Raw<'a>>,
    pub error: Option<Raw<'a>>,
    pub msg: Option<Raw<'a>>,
    // Envelope members several providers share, read here so converters need no extra pass.
    pub session_id: Option<Raw<'a>>,
    pub uuid: Option<Raw<'a>>,
    pub timestamp: Option<Raw<'a>>,
    /// [`Probe::ty`] and [`Probe::method`], once worked out: every provider's sniff asks
    /// for them.
    ty_plain: Memo<Option<&'a str>>,
    method_plain: Memo<Option<&'a str>>,
    /// [`Probe::result_members`], once worked out: the sniffs of three JSON-RPC providers ask
    /// for them.
    result_names: Memo<Vec<Str<'a>>>,
    /// Every top-level member, in order ([`Probe::members`], [`Probe::member`]).
    all: Kept<'a>,
}

/// The names of the probe's fields, as the line spells them, each at its bit in the set of
/// fields a line has given ([`Probe::field`]).
const FIELDS: &[&str] = &[
    "type",
    "subtype",
    "event",
    "message",
    "jsonrpc",
    "method",
    "id",
    "params",
    "result",
    "error",
    "msg",
    "session_id",
    "uuid",
    "timestamp",
];

/// What a probe keeps of its line beside its fields: every member, in order, as the pass that
/// read the line found it. Not part of what the probe is, so two probes are equal whatever
/// they keep. The scan's list goes back to [`SPARE`] when the probe is dropped.
#[derive(Debug, Default)]
struct Kept<'a> {
    /// From [`crate::scan`]: names without escapes (it refuses any other), and value texts.
    scanned: Option<Vec<(&'a str, &'a str)>>,
    /// From serde, when the scan refused the line: names unescaped (copied when they had
    /// escapes), and value texts.
    read: Vec<(Str<'a>, &'a str)>,
}

impl PartialEq for Kept<'_> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

thread_local! {
    /// The allocation of the last probe's member list, emptied, for the next probe's: a probe
    /// is made per line, and a list of its own cost a `malloc` and a `free` per line.
    static SPARE: Cell<Vec<(&'static str, &'static str)>> = const { Cell::new(Vec::new()) };
}

/// `v` emptied, as a list for another lifetime in the same allocation (std collects in place
/// when the element types have one layout).
// `filter` would keep the element type, and with it the old lifetime.
#[allow(clippy::unnecessary_filter_map)]
fn emptied<'b>(v: Vec<(&str, &str)>) -> Vec<(&'b str, &'b str)> {
    v.into_iter().filter_map(|_| None).collect()
}

impl Drop for Kept<'_> {
    fn drop(&mut self) {
        if let Some(v) = self.scanned.take() {
            SPARE.set(emptied(v));
        }
    }
}

/// A value worked out from others and kept, so that it is worked out once. Not part of what
/// holds it: two memos are equal whatever they hold.
#[derive(Debug, Default)]
struct Memo<T>(std::cell::OnceCell<T>);

impl<T> PartialEq for Memo<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> Memo<T> {
    fn get_or(&self, f: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(f)
    }
}

impl<'a> Probe<'a> {
    /// `type` when it is a plain string without escapes (all real type names are).
    pub fn ty(&self) -> Option<&'a str> {
        *self.ty_plain.get_or(|| self.ty.and_then(plain_str))
    }
    pub fn subtype(&self) -> Option<&'a str> {
        plain_str(self.subtype?)
    }
    pub fn method(&self) -> Option<&'a str> {
        *self.method_plain.get_or(|| self.method.and_then(plain_str))
    }
    /// The names of the members of `result` (none when it is not an object, or not there).
    pub fn result_members(&self) -> &[Str<'a>] {
        self.result_names.get_or(|| {
            self.result
                .map(|r| crate::providers::jsonrpc::member_names(r.get()))
                .unwrap_or_default()
        })
    }
    /// Every top-level member of the line (name, value text), when the one-pass scan read
    /// the line: the provider reads its struct from these ([`crate::members`]). `None` for a
    /// line serde read, whose names may have had escapes.
    pub fn members(&self) -> Option<&crate::members::Members<'a>> {
        self.all.scanned.as_deref()
    }
    /// The top-level member `name` of the line (its name unescaped), however the line was
    /// read: `None` when there is none or it is `null`, as for the probe's fields. A member
    /// given twice is not ambiguous here as the probe's fields are (see [`Probe::fill`]): this
    /// is its first value, and the converter, which reads the line's struct, decides.
    ///
    /// A linear search (a line has a dozen members or so, and a rule asks for one or two),
    /// inlined: the name a rule asks for is a literal, so comparing it needs no call.
    #[inline]
    pub fn member(&self, name: &str) -> Option<Raw<'a>> {
        let value = match &self.all.scanned {
            Some(all) => all.iter().find(|(k, _)| *k == name)?.1,
            None => self.all.read.iter().find(|(k, _)| k == name)?.1,
        };
        (value != "null").then_some(Raw::new(value))
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

    /// Reads the probe's members of `line`, which must be one JSON object.
    #[cfg(test)]
    pub fn read(line: &'a str) -> serde_json::Result<Self> {
        let mut p = Probe::default();
        p.fill(line)?;
        Ok(p)
    }

    /// Reads the probe's members of `line` into a default probe, where it is: the probe is some 350 bytes, which
    /// a probe returned by value (in a `Result`) was copied twice to reach its caller.
    ///
    /// A line that gives one of the probe's fields twice is an error (``duplicate field
    /// `type` ``, as serde's derive says it): which of the two a rule should see is anyone's
    /// guess. Other members may repeat.
    pub fn fill(&mut self, line: &'a str) -> serde_json::Result<()> {
        if self.fill_scanned(line).is_none() {
            *self = serde_json::from_str(line)?;
        }
        Ok(())
    }

    /// One validating pass over the line ([`crate::scan::members`]); `None` for anything it
    /// or this does not read as serde would (a probe field twice: serde says which).
    #[allow(dead_code)] // the unit tests and fuzz/ (`targets::detect`)
    pub fn scan(line: &'a str) -> Option<Self> {
        let mut p = Probe::default();
        p.fill_scanned(line)?;
        Some(p)
    }

    /// [`Probe::scan`] into `self`, a default probe.
    fn fill_scanned(&mut self, line: &'a str) -> Option<()> {
        let p = self;
        let mut seen = 0u32;
        let mut all = emptied(SPARE.take());
        all.reserve(16);
        crate::scan::members(line, |key, value| {
            all.push((key, value));
            let Some((bit, slot)) = p.field(key) else {
                return Some(());
            };
            if seen & 1 << bit != 0 {
                return None;
            }
            seen |= 1 << bit;
            if keeps_null(bit) || value != "null" {
                *slot = Some(Raw::new(value));
            }
            Some(())
        })?;
        p.all.scanned = Some(all);
        Some(())
    }

    /// The field of the member named `key`, with its bit ([`FIELDS`]); `None` for a member
    /// the probe has no field for.
    #[inline(always)]
    fn field(&mut self, key: &str) -> Option<(u32, &mut Option<Raw<'a>>)> {
        Some(match key {
            "type" => (0, &mut self.ty),
            "subtype" => (1, &mut self.subtype),
            "event" => (2, &mut self.event),
            "message" => (3, &mut self.message),
            "jsonrpc" => (4, &mut self.jsonrpc),
            "method" => (5, &mut self.method),
            "id" => (6, &mut self.id),
            "params" => (7, &mut self.params),
            "result" => (8, &mut self.result),
            "error" => (9, &mut self.error),
            "msg" => (10, &mut self.msg),
            "session_id" => (11, &mut self.session_id),
            "uuid" => (12, &mut self.uuid),
            "timestamp" => (13, &mut self.timestamp),
            _ => return None,
        })
    }
}

/// Whether the field at `bit` holds a `null` (`result` and `error`); the others leave it out.
#[inline(always)]
fn keeps_null(bit: u32) -> bool {
    bit == 8 || bit == 9
}

/// Serde's reading of a line, for the lines the scan refuses: the same fields, the same error
/// for a field given twice (at the same column: after its name) as serde's derive gives, and
/// every member kept, so that [`Probe::member`] finds it.
impl<'de: 'a, 'a> Deserialize<'de> for Probe<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct("Probe", FIELDS, ProbeVisitor(PhantomData))
    }
}

/// Serde's side of [`Probe::fill`]: a probe from the members of an object.
struct ProbeVisitor<'a>(PhantomData<Probe<'a>>);

impl<'de: 'a, 'a> Visitor<'de> for ProbeVisitor<'a> {
    type Value = Probe<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Probe")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probe<'a>, A::Error> {
        let mut p = Probe::default();
        let mut seen = 0u32;
        let mut read = Vec::new();
        while let Some(Name(key)) = map.next_key()? {
            let field = p.field(&key);
            if let Some((bit, _)) = field {
                if seen & 1 << bit != 0 {
                    return Err(de::Error::duplicate_field(FIELDS[bit as usize]));
                }
                seen |= 1 << bit;
            }
            let value: Raw<'a> = map.next_value()?;
            if let Some((bit, slot)) = field {
                if keeps_null(bit) || value.get() != "null" {
                    *slot = Some(value);
                }
            }
            read.push((key, value.get()));
        }
        p.all.read = read;
        Ok(p)
    }
}

/// A member's name, borrowed when it has no escapes.
struct Name<'a>(Str<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for Name<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(CowStr).map(Name)
    }
}

/// The contents of a JSON string literal that needs no unescaping.
fn plain_str(raw: Raw<'_>) -> Option<&str> {
    let s = raw.get();
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    (!crate::scan::has_backslash(inner.as_bytes())).then_some(inner)
}

/// What to do with a line.
#[derive(Clone, Copy)]
pub enum Route {
    Passthrough,
    Provider(&'static Provider),
    Unknown,
}

/// The providers that write Claude Code's stream-json with lines of their own (rule 2c).
pub const CLAUDE_LIKE: &[&str] = &["qwen", "cursor", "amp"];

/// Detection's memory: which JSON-RPC provider the stream speaks, and which Claude-like one.
///
/// A JSON-RPC answer (`{"id":4,"result":{}}`) often carries nothing that names its provider.
/// Such a line goes to the JSON-RPC provider of the last line that did name one (rule 2b).
/// Likewise a Claude-shaped line goes to the Claude-like provider the stream named (rule 2c).
#[derive(Default)]
pub struct Detector {
    pub(crate) last_jsonrpc: Option<&'static Provider>,
    /// A line of this run named a JSON-RPC provider.
    pub(crate) named: bool,
    /// The Claude-like provider the stream named, with the `session_id` (its JSON text, or
    /// empty) of the line that named it; `None` for Claude itself (rule 2c).
    pub(crate) dialect: Option<(&'static Provider, String)>,
    /// A line of this run named the stream's Claude-like provider (or Claude).
    pub(crate) dialect_named: bool,
    /// A JSON-RPC answer was routed before any line named one, or a Claude-shaped line
    /// before any line named the dialect: the result depended on the state the detector
    /// started with (`--jobs` checks this at chunk boundaries).
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
                } else if CLAUDE_LIKE.contains(&p.name) {
                    let session = probe.session_id.map_or("", |r| r.get());
                    match &mut self.dialect {
                        Some((q, s)) if q.name == p.name && s == session => {}
                        _ => self.dialect = Some((p, session.to_owned())),
                    }
                    self.dialect_named = true;
                } else if p.name == "claude" {
                    if probe.ty() == Some("system") && probe.subtype() == Some("init") {
                        // Claude's own init names Claude.
                        self.dialect = None;
                        self.dialect_named = true;
                    } else {
                        self.depended |= !self.dialect_named;
                        if let Some((d, session)) = &self.dialect {
                            if probe.session_id.is_none_or(|r| r.get() == session) {
                                return Route::Provider(d);
                            }
                        }
                    }
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

    /// A Qwen, Cursor or Amp stream's Claude-shaped lines are the named provider's, until a
    /// Claude init names Claude (rule 2c).
    #[test]
    fn claude_shaped_lines_keep_the_provider_the_stream_named() {
        let assistant = r#"{"type":"assistant","message":{"content":[]},"session_id":"s"}"#;
        let lines = [
            (
                r#"{"type":"system","subtype":"init","session_id":"s","qwen_code_version":"0.24.4"}"#,
                "qwen",
            ),
            (assistant, "qwen"),
            // testdata/cursor/shell-read.jsonl line 1.
            (
                r#"{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":"s","model":"Auto","permissionMode":"default"}"#,
                "cursor",
            ),
            (
                r#"{"type":"user","message":{"content":"hi"},"session_id":"s"}"#,
                "cursor",
            ),
            // Another stream's line, interleaved (testdata/mixed/providers.jsonl).
            (
                r#"{"type":"user","message":{"content":"hi"},"session_id":"other"}"#,
                "claude",
            ),
            (
                r#"{"type":"system","subtype":"init","session_id":"s","tools":[],"uuid":"u","apiKeySource":"none","claude_code_version":"2.1.197"}"#,
                "claude",
            ),
            (assistant, "claude"),
        ];
        let mut d = Detector::default();
        for (line, want) in lines {
            let mut probe = Probe::default();
            probe.fill(line).unwrap();
            let got = match d.route(&probe, None) {
                Route::Provider(p) => p.name,
                _ => "other",
            };
            assert_eq!(got, want, "{line}");
        }
        assert!(!d.depended);
        // A Claude-shaped line before any init depends on the state the run started with.
        let mut d = Detector::default();
        let mut probe = Probe::default();
        probe.fill(assistant).unwrap();
        d.route(&probe, None);
        assert!(d.depended);
    }

    /// `ty` and `method` are worked out once and kept; a probe that has them is still equal
    /// to one that has not.
    #[test]
    fn type_and_method_are_worked_out_once_and_change_no_probe() {
        let line = r#"{"type":"message","method":"session/update","subtype":"x\\y"}"#;
        let a = Probe::read(line).unwrap();
        let b = Probe::read(line).unwrap();
        assert_eq!(a.ty(), Some("message"));
        assert_eq!(a.ty(), Some("message"));
        assert_eq!(a.method(), Some("session/update"));
        assert_eq!(a, b);
        assert_eq!(a.subtype(), None, "escaped: not plain");
        let escaped = Probe::read(r#"{"type":"mess\u0061ge"}"#).unwrap();
        assert_eq!((escaped.ty(), escaped.ty()), (None, None));
    }

    /// The one-pass probe reads every recorded line as serde reads it, or leaves it to serde.
    #[test]
    fn scanned_probes_are_serde_probes() {
        let (mut lines, mut scanned) = (0, 0);
        for path in crate::test_support::testdata_jsonl() {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for line in text.lines() {
                lines += 1;
                let Some(fast) = Probe::scan(line) else {
                    continue;
                };
                scanned += 1;
                let slow: Probe = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{}: serde refuses ({e}): {line}", path.display()));
                assert_eq!(fast, slow, "{}: {line}", path.display());
                for &(name, _) in fast.members().unwrap() {
                    assert_eq!(fast.member(name), slow.member(name), "{name}: {line}");
                }
            }
        }
        // Only the malformed captures are left to serde.
        assert!(
            scanned * 100 > lines * 95,
            "{scanned} of {lines} lines scanned"
        );
    }

    /// Every field of the probe has its name in [`FIELDS`], at its bit, and both passes read
    /// it alike.
    #[test]
    fn the_scan_reads_every_probe_field() {
        for (bit, name) in FIELDS.iter().enumerate() {
            let got = Probe::default().field(name).map(|(b, _)| b);
            assert_eq!(got, Some(bit as u32), "{name}");
            for value in [r#""x""#, "{}", "null"] {
                let line = format!("{{\"{name}\":{value}}}");
                let fast = Probe::scan(&line).unwrap_or_else(|| panic!("not scanned: {line}"));
                let slow: Probe = serde_json::from_str(&line).unwrap();
                assert_eq!(fast, slow, "{line}");
                if value != "null" {
                    assert_ne!(fast, Probe::default(), "{line}: member not read");
                }
            }
        }
        // A line with all of them fills every field: no field is missing from `FIELDS`.
        let line = format!(
            "{{{}}}",
            FIELDS
                .iter()
                .map(|f| format!("\"{f}\":1"))
                .collect::<Vec<_>>()
                .join(",")
        );
        for p in [
            Probe::scan(&line).unwrap(),
            serde_json::from_str(&line).unwrap(),
        ] {
            let debug = format!("{p:?}");
            let fields = debug.split("ty_plain").next().unwrap();
            assert!(!fields.contains("None"), "{debug}");
        }
    }

    #[test]
    fn what_serde_says_about_probe_members() {
        // `null` is no member, but for a JSON-RPC answer's `result` and `error`.
        let p = Probe::read(r#"{"type":null,"id":1,"result":null,"error":null}"#).unwrap();
        assert_eq!(
            p,
            serde_json::from_str(r#"{"type":null,"id":1,"result":null,"error":null}"#).unwrap()
        );
        assert!(p.ty.is_none() && p.result.is_some() && p.error.is_some());
        // A probe member twice is an error, as serde says; other members may repeat.
        let twice = r#"{"type":"a","x":1,"x":2,"type":"b"}"#;
        assert!(Probe::scan(twice).is_none());
        let e = Probe::read(twice).unwrap_err().to_string();
        assert!(e.contains("duplicate field `type`"), "{e}");
        assert!(Probe::scan(r#"{"type":"a","x":1,"x":2}"#).is_some());
        // An escaped key is left to serde, which unescapes it.
        let p = Probe::read(r#"{"typ\u0065":"system"}"#).unwrap();
        assert_eq!(p.ty(), Some("system"));
    }

    /// A rule reads any other member by name, from the scan's members or, for a line the
    /// scan refuses, serde's.
    #[test]
    fn a_member_by_name_from_either_pass() {
        let scanned = r#"{"type":"text","sessionID":"ses_1","usage":null,"n":1,"n":2}"#;
        // An escaped name (`sessionID`) and a duplicated `type`: serde reads these.
        let escaped = r#"{"type":"text","session\u0049D":"ses_1","usage":null,"n":1,"n":2}"#;
        let refused = r#"{"type":"a","sessionID":"s","type":"b"}"#;
        assert!(Probe::scan(scanned).is_some());
        assert!(Probe::scan(escaped).is_none() && Probe::scan(refused).is_none());
        for line in [scanned, escaped] {
            let p = Probe::read(line).unwrap();
            let from_serde: Probe = serde_json::from_str(line).unwrap();
            for p in [&p, &from_serde] {
                assert_eq!(
                    p.member("sessionID"),
                    Some(Raw::new(r#""ses_1""#)),
                    "{line}"
                );
                // `null` is no member, as for the probe's fields; a repeated one is its first.
                assert_eq!(p.member("usage"), None, "{line}");
                assert_eq!(p.member("n"), Some(Raw::new("1")), "{line}");
                assert_eq!(p.member("absent"), None, "{line}");
                // The probe's own fields are members too.
                assert_eq!(p.member("type"), p.ty, "{line}");
            }
        }
        // The members of a line the scan read are there for the provider; serde's are not
        // (their names may have had escapes).
        assert!(Probe::read(scanned).unwrap().members().is_some());
        assert!(Probe::read(escaped).unwrap().members().is_none());
        // A probe field twice is still an error; another member twice is not.
        let e = Probe::read(refused).unwrap_err().to_string();
        assert_eq!(e, "duplicate field `type` at line 1 column 34");
        let p = Probe::read(r#"{"type":"result","usage":{"a":1},"usage":{"b":2}}"#).unwrap();
        assert_eq!(p.member("usage"), Some(Raw::new(r#"{"a":1}"#)));
    }

    #[test]
    fn plain_strings_only() {
        assert_eq!(plain_str(Raw::new(r#""a\"b""#)), None);
        assert_eq!(plain_str(Raw::new(r#""init""#)), Some("init"));
    }
}
