//! One log, checked line by line as it is read.
//!
//! A line that is an InsightsEvent already is checked as written, `seq` included. Any other
//! JSON object is provider output: it goes through the converter (the same code as
//! `insights convert`, one line at a time), and each event it yields is checked in its place.
//! Every event is validated against the schema and then fed to the rule engine.
//!
//! The schema check is the fast one of [`super::fast`] first, and the jsonschema validator on
//! a `Value` only when that is not sure, so a valid event is parsed once and builds no tree.
//! With two threads per log, the reading thread checks lines that are InsightsEvents already
//! and the judging thread checks converted events (the reading thread is busy converting),
//! then runs the rules in input order.

use super::fast::{EventFacts, FastSchema};
use super::rules::{Checker, Facts, Finding, Findings, Level, Policy, Rule, StoredFacts};
use crate::convert::{Converter, Options};
use crate::detect::{Probe, Route};
use crate::diag::Diag;
use crate::input::{Line, LineReader, Source};
use crate::output::Out;
use crate::providers::UNKNOWN;
use jsonschema::Validator;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::mpsc;

/// What every log is checked with, shared by the worker threads.
pub struct Context<'a> {
    pub schema: &'a Validator,
    /// The same schema, for the fast check that spares most events the full one.
    pub fast: &'a FastSchema,
    pub opts: &'a Options,
    pub policy: &'a Policy,
}

/// How the provider lines of one provider converted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProviderHealth {
    pub lines: u64,
    pub events: u64,
    /// Lines that fell back to a `raw` event.
    pub raw: u64,
    /// Why they did, with counts.
    pub reasons: BTreeMap<String, u64>,
}

/// How the log's lines were read: InsightsEvents already, provider output by provider, or
/// unreadable.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Health {
    pub normalized: u64,
    pub providers: BTreeMap<&'static str, ProviderHealth>,
    pub unreadable: u64,
}

/// Distinct raw reasons kept per provider; further ones are counted under [`OTHER_REASONS`].
const KEEP_REASONS: usize = 32;
const OTHER_REASONS: &str = "(other reasons)";

impl Health {
    /// Whether any line was provider output, that is, conversion took place.
    pub fn converted(&self) -> bool {
        !self.providers.is_empty()
    }
}

/// Everything known about one log once it has been read.
#[derive(Debug, Default)]
pub struct FileReport {
    pub name: String,
    /// Non-blank lines read.
    pub lines: u64,
    pub events: u64,
    pub errors: u64,
    pub warnings: u64,
    pub findings: Vec<Finding>,
    /// Findings counted but not listed (over the per-rule cap), by rule.
    pub omitted: Vec<(Rule, u64)>,
    pub health: Health,
    /// The log could not be opened or read to the end.
    pub io_error: Option<String>,
}

/// Checks one source; a failure to open or read it is recorded in the report. `pipelined`:
/// give the log two threads (reading and converting on one, schema and rules on the other).
pub fn check_source(src: &Source, cx: &Context, pipelined: bool) -> FileReport {
    let name = src.name();
    match src.open() {
        Ok(r) => check_reader(r, name, cx, pipelined),
        Err(e) => FileReport {
            name,
            io_error: Some(crate::diag::io_words(&e)),
            ..FileReport::default()
        },
    }
}

/// What the reading stage hands to the judging stage, in input order.
enum Item {
    /// An event read from line `line`; `normalized`: the line was an InsightsEvent already.
    /// `facts` (stored in the batch's text) is `None` for a JSON value that is not an object;
    /// `schema` holds the schema violations (pointer, message).
    Event {
        line: u64,
        normalized: bool,
        facts: Option<StoredFacts>,
        schema: Vec<(String, String)>,
    },
    Unreadable {
        line: u64,
        column: Option<u64>,
        message: String,
    },
    TooDeep {
        line: u64,
    },
    /// The events the converter wrote for line `line` of `provider`, not checked yet: their
    /// lines are `converted[at..at + len]` of the batch (the converter writes them there
    /// itself). The judging stage splits and checks them, so that the converting thread has
    /// time to convert.
    Converted {
        line: u64,
        provider: &'static str,
        at: usize,
        len: usize,
    },
}

/// What the reading stage hands on.
enum Piece<'t> {
    Item(Item),
    /// A checked event (see [`Item::Event`]).
    Event {
        line: u64,
        normalized: bool,
        facts: Option<Facts<'t>>,
        schema: Vec<(String, String)>,
    },
}

/// Items in input order, with the text of their facts and of the converted events.
/// `converted` is the converter's output buffer while the batch fills (the reader hands it
/// over beside each piece), and goes with the batch when it is sent.
struct Batch {
    items: Vec<Item>,
    text: String,
    converted: Vec<u8>,
}

impl Batch {
    /// An empty batch with room for a full one.
    fn new() -> Self {
        Batch {
            items: Vec::with_capacity(BATCH),
            text: String::new(),
            converted: Vec::with_capacity(BATCH_TEXT),
        }
    }

    fn push(&mut self, p: Piece) {
        let it = match p {
            Piece::Item(it) => it,
            Piece::Event {
                line,
                normalized,
                facts,
                schema,
            } => Item::Event {
                line,
                normalized,
                facts: facts.map(|f| StoredFacts::store(&f, &mut self.text)),
                schema,
            },
        };
        self.items.push(it);
    }

    /// Full, with `converted` bytes of converted events so far.
    fn full(&self, converted: usize) -> bool {
        self.items.len() >= BATCH || self.text.len() + converted >= BATCH_TEXT
    }
}

/// The converted events of a batch, checked as UTF-8 once for the whole batch: its lines are
/// then slices of it, with no check of their own.
#[derive(Clone, Copy)]
enum Converted<'b> {
    Text(&'b str),
    /// Not UTF-8, which the converter never writes: each line is read lossily.
    Bytes(&'b [u8]),
}

impl<'b> Converted<'b> {
    fn of(bytes: &'b [u8]) -> Self {
        // Not `from_utf8_lossy` first: on valid text it costs ten times `from_utf8`.
        match std::str::from_utf8(bytes) {
            Ok(t) => Converted::Text(t),
            Err(_) => Converted::Bytes(bytes),
        }
    }

    /// The events of an [`Item::Converted`].
    fn slice(self, at: usize, len: usize) -> Cow<'b, str> {
        let bytes = match self {
            // Items end at line ends, which are character boundaries.
            Converted::Text(t) => match t.get(at..at + len) {
                Some(s) => return Cow::Borrowed(s),
                None => &t.as_bytes()[at..at + len],
            },
            Converted::Bytes(b) => &b[at..at + len],
        };
        String::from_utf8_lossy(bytes)
    }
}

/// Items, and bytes of text, per batch between the two threads of a pipelined log.
const BATCH: usize = 256;
const BATCH_TEXT: usize = 256 * 1024;

/// Checks every line of `reader`.
pub fn check_reader(reader: impl Read, name: String, cx: &Context, pipelined: bool) -> FileReport {
    let (read, judged) = if pipelined {
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::sync_channel::<Batch>(4);
            // Judged batches go back, emptied, to be filled again: a new batch grew its
            // buffers from nothing (a copy of the text at every doubling) and was freed by
            // the other thread (on Gemini output, memmove was a fifth of the reading thread).
            let (back_tx, back) = mpsc::channel::<Batch>();
            let judge = s.spawn(move || {
                let mut j = Judge::new(cx);
                for mut b in rx {
                    let converted = Converted::of(&b.converted);
                    for it in b.items.drain(..) {
                        j.item(it, &b.text, converted);
                    }
                    b.text.clear();
                    b.converted.clear();
                    let _ = back_tx.send(b);
                }
                j.finish()
            });
            let mut batch = Batch::new();
            let mut open = true;
            let mut read = read_log(reader, &name, cx, |p, converted| {
                if !open {
                    converted.clear();
                    return; // the judge is gone (it panicked; join reports it)
                }
                batch.push(p);
                if batch.full(converted.len()) {
                    let next = back.try_recv().unwrap_or_else(|_| Batch::new());
                    let mut full = std::mem::replace(&mut batch, next);
                    // The batch takes the events written so far, and the converter goes on
                    // in the batch's emptied buffer.
                    std::mem::swap(&mut full.converted, converted);
                    open = tx.send(full).is_ok();
                }
            });
            if open {
                batch.converted = std::mem::take(&mut read.converted);
                let _ = tx.send(batch);
            }
            drop(tx);
            let judged = judge
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (read, judged)
        })
    } else {
        let mut j = Judge::new(cx);
        let read = read_log(reader, &name, cx, |p, converted| match p {
            Piece::Item(it) => {
                j.item(it, "", Converted::of(converted));
                converted.clear();
            }
            Piece::Event {
                line,
                normalized,
                facts,
                schema,
            } => j.event(line, normalized, facts, schema),
        });
        (read, j.finish())
    };
    let mut health = read.health;
    health.unreadable += judged.unreadable;
    // Raw events among the converted ones were counted by the judging stage.
    for (p, raw) in judged.raw {
        let h = health.providers.entry(p).or_default();
        h.raw += raw.raw;
        for (reason, n) in raw.reasons {
            *h.reasons.entry(reason).or_default() += n;
        }
    }
    let mut report = FileReport {
        name,
        lines: read.lines,
        events: read.events,
        errors: judged.errors,
        warnings: judged.warnings,
        findings: judged.findings,
        omitted: judged.omitted,
        health,
        io_error: read.io_error,
    };
    if let Some(first) = judged.first_raw {
        mostly_raw(&mut report, judged.raw_lines, first, cx);
    }
    report
}

/// The rule `mostly-raw`: when more than half of the log's lines fell back to `raw` events
/// (`raw_lines` of them, the first at line `first`), the log is not what it was taken for (the
/// wrong `--from`, or not an agent's output at all), and one error says so, at the first raw
/// line, in place of a `raw-event` warning for each line (the conversion lines still count
/// them by reason). Allowed (`--allow mostly-raw`, a log raw on purpose), the warnings stay.
fn mostly_raw(report: &mut FileReport, raw_lines: u64, first: u64, cx: &Context) {
    let Some(level) = cx.policy.level(Rule::MostlyRaw) else {
        return;
    };
    if !crate::convert::mostly_raw(report.lines, raw_lines) {
        return;
    }
    // The raw-event findings it replaces, listed and omitted, all of one level.
    if let Some(raw_level) = cx.policy.level(Rule::RawEvent) {
        let listed = report.findings.len();
        report.findings.retain(|f| f.rule != Rule::RawEvent);
        let mut n = (listed - report.findings.len()) as u64;
        report.omitted.retain(|&(r, more)| {
            n += if r == Rule::RawEvent { more } else { 0 };
            r != Rule::RawEvent
        });
        match raw_level {
            Level::Error => report.errors -= n,
            Level::Warning => report.warnings -= n,
        }
    }
    let lines = report.lines;
    let message = match cx.opts.forced {
        Some(p) => format!(
            "{raw_lines} of {lines} lines fell back to raw events: is --from {0} right for this \
             log? (--allow mostly-raw accepts a log that is raw on purpose)",
            p.name
        ),
        None => format!(
            "{raw_lines} of {lines} lines fell back to raw events: no provider recognises most \
             of this log; is it an agent's output? (name its provider with --from; --allow \
             mostly-raw accepts a log that is raw on purpose)"
        ),
    };
    match level {
        Level::Error => report.errors += 1,
        Level::Warning => report.warnings += 1,
    }
    report.findings.push(Finding {
        line: first,
        column: None,
        rule: Rule::MostlyRaw,
        level,
        pointer: None,
        message,
    });
}

/// What the reading stage counted.
#[derive(Default)]
struct ReadCounts {
    lines: u64,
    events: u64,
    health: Health,
    io_error: Option<String>,
    /// Converted events not handed on in a batch yet (pipelined only).
    converted: Vec<u8>,
}

/// The reading stage: splits the log into lines, converts provider lines, parses every event,
/// and hands each on as an [`Item`].
/// `emit` gets each piece with the converter's output buffer, which holds the events of
/// [`Item::Converted`] pieces; it may take what the buffer holds (leaving it empty).
fn read_log(
    reader: impl Read,
    name: &str,
    cx: &Context,
    emit: impl FnMut(Piece, &mut Vec<u8>),
) -> ReadCounts {
    // The converter writes its events into a `Vec`, which `emit` hands on with each piece
    // (a batch takes it when full). One converter serves the whole log, so what it remembers
    // between lines (detection, provider facts) holds.
    let mut out = Out::chunk(Vec::new());
    let mut r = Reader {
        cx,
        emit,
        read: ReadCounts::default(),
        conv: Converter::new(cx.opts, &mut out),
    };
    let mut rdr = LineReader::new(reader, cx.opts.max_line);
    let mut buf = Vec::with_capacity(64 * 1024);
    loop {
        let line = match rdr.next_line(&mut buf) {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                r.read.io_error = Some(crate::diag::io_words(&e));
                break;
            }
        };
        let lineno = rdr.lineno();
        match line {
            Line::TooLong { len } => {
                r.read.lines += 1;
                r.unreadable(
                    lineno,
                    None,
                    crate::convert::too_long(len, cx.opts.max_line),
                );
            }
            Line::Ok => r.line(&buf, lineno, rdr.unterminated(), name),
        }
    }
    if r.read.io_error.is_none() {
        r.close(rdr.lineno(), name);
    }
    let mut read = r.read;
    read.converted = std::mem::take(r.conv.out().w.get_mut());
    read
}

struct Reader<'a, 'o, F: FnMut(Piece, &mut Vec<u8>)> {
    cx: &'a Context<'a>,
    emit: F,
    read: ReadCounts,
    /// Converts provider lines; its detection also tells which provider a line is.
    conv: Converter<'o, Vec<u8>>,
}

impl<F: FnMut(Piece, &mut Vec<u8>)> Reader<'_, '_, F> {
    /// Hands a piece on, with the converter's output buffer.
    fn emit(&mut self, p: Piece) {
        (self.emit)(p, self.conv.out().w.get_mut());
    }

    fn unreadable(&mut self, line: u64, column: Option<u64>, message: String) {
        self.read.health.unreadable += 1;
        self.emit(Piece::Item(Item::Unreadable {
            line,
            column,
            message,
        }));
    }

    fn line(&mut self, bytes: &[u8], lineno: u64, unterminated: bool, name: &str) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.read.lines += 1;
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let msg = if e.error_len().is_none() {
                    "invalid UTF-8: the line ends inside a character (truncated?)"
                } else {
                    "invalid UTF-8"
                };
                self.unreadable(lineno, Some(e.valid_up_to() as u64 + 1), msg.into());
                return;
            }
        };
        // What `insights` writes starts so: an InsightsEvent, with no need to probe it.
        if text.starts_with("{\"event\":\"") {
            let c = check_event(self.cx, text);
            if matches!(c, Checked::Fast(_) | Checked::Slow { .. }) {
                self.read.health.normalized += 1;
                self.emit_checked(c, lineno, true);
                return;
            }
        }
        if let Some((col, msg)) = not_an_object(text) {
            self.unreadable(lineno, Some(col), msg);
            return;
        }
        let mut probe = Probe::default();
        if let Err(e) = probe.fill(text) {
            let (col, msg) = crate::wire::json_problem(&e, unterminated);
            self.unreadable(lineno, Some(col), msg);
            return;
        }
        let route = self.conv.route(&probe);
        let provider = match route {
            Route::Passthrough => {
                self.read.health.normalized += 1;
                let c = check_event(self.cx, text);
                self.emit_checked(c, lineno, true);
                return;
            }
            Route::Provider(p) => p.name,
            Route::Unknown => UNKNOWN,
        };
        self.convert(text, &probe, route, lineno, name, provider);
    }

    /// Converts a provider line and hands on the events it yields, to be checked by the
    /// judging stage.
    fn convert<'t>(
        &mut self,
        text: &'t str,
        probe: &Probe<'t>,
        route: Route,
        lineno: u64,
        name: &str,
        provider: &'static str,
    ) {
        // The line is known to be a JSON object, so the converter has nothing to report; a
        // Diag that did would still count the line below.
        let mut diag = Diag::new(false);
        // The events go on after those of the lines before, in the buffer the batch takes.
        let at = self.conv.out().w.get_ref().len();
        let before = self.conv.stats.events;
        // Writing into a Vec cannot fail (and the `BufWriter` has no buffer of its own).
        let _ = self
            .conv
            .routed_line(text, probe, route, lineno, name, &mut diag);
        let mut at = at;
        // Counted here, split and checked by the judging stage (`Judge::converted_lines`).
        let events = self.conv.stats.events - before;
        debug_assert_eq!(
            events,
            event_lines(&self.conv.out().w.get_ref()[at..]),
            "line {lineno}"
        );
        if diag.bad_lines > 0 {
            // Reported before the line's events. The piece may take the buffer (a full
            // batch), so the events written for this line are set aside meanwhile.
            let written = self.conv.out().w.get_mut().split_off(at);
            self.unreadable(lineno, None, "the converter could not read the line".into());
            let out = self.conv.out().w.get_mut();
            at = out.len();
            out.extend_from_slice(&written);
        }
        let len = self.conv.out().w.get_ref().len() - at;
        let h = self.read.health.providers.entry(provider).or_default();
        h.lines += 1;
        h.events += events;
        self.read.events += events;
        if events > 0 {
            self.emit(Piece::Item(Item::Converted {
                line: lineno,
                provider,
                at,
                len,
            }));
        }
    }

    /// The end of the log: the converter ends what the log left open (the last turn of a
    /// Gemini CLI chat file, [`Converter::close_input`]), and its events are handed on as
    /// those of the last line.
    fn close(&mut self, lineno: u64, name: &str) {
        // A prompt still held for its session ([`crate::providers::held`]) goes as it was.
        let at = self.conv.out().w.get_ref().len();
        let before = self.conv.stats.events;
        // Writing into a Vec cannot fail.
        if let Ok(Some(provider)) = self.conv.let_go(name, &mut Diag::new(false)) {
            let events = self.conv.stats.events - before;
            let len = self.conv.out().w.get_ref().len() - at;
            self.read
                .health
                .providers
                .entry(provider)
                .or_default()
                .events += events;
            self.read.events += events;
            self.emit(Piece::Item(Item::Converted {
                line: lineno,
                provider,
                at,
                len,
            }));
        }
        for p in crate::providers::PROVIDERS {
            let mut diag = Diag::new(false);
            let at = self.conv.out().w.get_ref().len();
            // Writing into a Vec cannot fail.
            let events = self
                .conv
                .close_input_of(p, lineno, name, &mut diag)
                .unwrap_or(0);
            if events == 0 {
                continue;
            }
            let len = self.conv.out().w.get_ref().len() - at;
            self.read.health.providers.entry(p.name).or_default().events += events;
            self.read.events += events;
            self.emit(Piece::Item(Item::Converted {
                line: lineno,
                provider: p.name,
                at,
                len,
            }));
        }
    }

    /// Hands on a checked event.
    fn emit_checked(&mut self, c: Checked, line: u64, normalized: bool) {
        self.read.events += 1;
        match c {
            Checked::Fast(f) => self.emit(Piece::Event {
                line,
                normalized,
                facts: Some(f.facts()),
                schema: Vec::new(),
            }),
            Checked::Slow { value, schema } => self.emit(Piece::Event {
                line,
                normalized,
                facts: value.as_object().map(Facts::of),
                schema,
            }),
            Checked::TooDeep => self.emit(Piece::Item(Item::TooDeep { line })),
            Checked::Unreadable { column, message } => {
                self.read.health.unreadable += 1;
                self.emit(Piece::Item(Item::Unreadable {
                    line,
                    column,
                    message,
                }));
            }
        }
    }
}

/// One event, checked against the schema. `Fast` is the common case and the large one:
/// boxing it would allocate for every event.
#[allow(clippy::large_enum_variant)]
enum Checked<'t> {
    /// The fast check found it valid.
    Fast(EventFacts<'t>),
    /// Checked by the full validator: the violations (pointer, message).
    Slow {
        value: Value,
        schema: Vec<(String, String)>,
    },
    TooDeep,
    Unreadable {
        column: Option<u64>,
        message: String,
    },
}

impl Checked<'_> {
    /// What the rules read, for an event that is a JSON object.
    fn facts(&self) -> Option<Facts<'_>> {
        match self {
            Checked::Fast(f) => Some(f.facts()),
            Checked::Slow { value, .. } => value.as_object().map(Facts::of),
            _ => None,
        }
    }
}

/// The fast check, and when it is not sure, the full validator on a `Value` (its violations
/// are not listed when the schema rule is allowed).
fn check_event<'t>(cx: &Context, text: &'t str) -> Checked<'t> {
    if let Some(f) = cx.fast.check(text) {
        return Checked::Fast(f);
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return if crate::wire::without_position(&e).contains("recursion limit") {
                Checked::TooDeep
            } else {
                let (column, message) = crate::wire::json_problem(&e, false);
                Checked::Unreadable {
                    column: Some(column),
                    message,
                }
            };
        }
    };
    let mut schema = Vec::new();
    if cx.policy.level(Rule::Schema).is_some() && !cx.schema.is_valid(&value) {
        for e in cx.schema.iter_errors(&value) {
            schema.push((e.instance_path().to_string(), e.to_string()));
        }
    }
    Checked::Slow { value, schema }
}

/// Raw events among a provider's converted events, and why.
#[derive(Default)]
struct RawCount {
    raw: u64,
    reasons: BTreeMap<String, u64>,
}

/// What the judging stage found.
struct Judged {
    errors: u64,
    warnings: u64,
    findings: Vec<Finding>,
    omitted: Vec<(Rule, u64)>,
    /// Of the converted events, which it checked.
    raw: BTreeMap<&'static str, RawCount>,
    unreadable: u64,
    /// Lines with a `raw` event (converted, or InsightsEvents already), and the first of them.
    raw_lines: u64,
    first_raw: Option<u64>,
}

/// The judging stage: converted events against the schema, the schema violations found
/// while reading, and the rules, in order.
struct Judge<'a> {
    cx: &'a Context<'a>,
    findings: Findings<'a>,
    checker: Checker,
    raw: BTreeMap<&'static str, RawCount>,
    unreadable: u64,
    /// Lines with a `raw` event, the first of them and the last (a line counts once).
    raw_lines: u64,
    first_raw: Option<u64>,
    last_raw: u64,
}

impl<'a> Judge<'a> {
    fn new(cx: &'a Context<'a>) -> Judge<'a> {
        Judge {
            cx,
            findings: Findings::new(cx.policy),
            checker: Checker::new(),
            raw: BTreeMap::new(),
            unreadable: 0,
            raw_lines: 0,
            first_raw: None,
            last_raw: 0,
        }
    }

    /// `text` and `converted`: those of the batch the item came in.
    fn item(&mut self, it: Item, text: &str, converted: Converted) {
        match it {
            Item::Unreadable {
                line,
                column,
                message,
            } => self
                .findings
                .push_at(Rule::UnreadableLine, line, column, None, message),
            Item::TooDeep { line } => self.too_deep(line),
            Item::Event {
                line,
                normalized,
                facts,
                schema,
            } => self.event(line, normalized, facts.map(|f| f.facts(text)), schema),
            Item::Converted {
                line,
                provider,
                at,
                len,
            } => self.converted_lines(line, provider, &converted.slice(at, len)),
        }
    }

    /// Checks the events the converter wrote for one line.
    fn converted_lines(&mut self, line: u64, provider: &'static str, text: &str) {
        for ev in text.split('\n').filter(|l| !l.is_empty()) {
            self.converted(line, provider, ev);
        }
    }

    fn too_deep(&mut self, line: u64) {
        self.findings.push(Rule::TooDeep, line, || {
            "the event nests deeper than 128 levels: not checked".into()
        });
    }

    fn event(
        &mut self,
        line: u64,
        normalized: bool,
        facts: Option<Facts>,
        schema: Vec<(String, String)>,
    ) {
        for (at, message) in schema {
            self.findings
                .push_at(Rule::Schema, line, None, Some(at), message);
        }
        if let Some(f) = facts {
            if f.event == "raw" && self.last_raw != line {
                self.raw_lines += 1;
                self.first_raw.get_or_insert(line);
                self.last_raw = line;
            }
            self.checker.event(&f, line, normalized, &mut self.findings);
        }
    }

    /// An event the converter wrote for line `line`.
    fn converted(&mut self, line: u64, provider: &'static str, text: &str) {
        let mut c = check_event(self.cx, text);
        if let Some(f) = c.facts() {
            if f.event == "raw" {
                let h = self.raw.entry(provider).or_default();
                h.raw += 1;
                let reason = f.reason.unwrap_or("");
                let known = h.reasons.len() < KEEP_REASONS || h.reasons.contains_key(reason);
                let key = if known { reason } else { OTHER_REASONS };
                *h.reasons.entry(key.to_owned()).or_default() += 1;
            }
        }
        match &mut c {
            Checked::Fast(_) | Checked::Slow { .. } => {
                let schema = match &mut c {
                    Checked::Slow { schema, .. } => std::mem::take(schema),
                    _ => Vec::new(),
                };
                self.event(line, false, c.facts(), schema);
            }
            Checked::TooDeep => self.too_deep(line),
            Checked::Unreadable { column, message } => {
                self.unreadable += 1;
                let message = std::mem::take(message);
                self.findings
                    .push_at(Rule::UnreadableLine, line, *column, None, message);
            }
        }
    }

    fn finish(mut self) -> Judged {
        self.checker.finish(&mut self.findings);
        Judged {
            errors: self.findings.errors,
            warnings: self.findings.warnings,
            omitted: self.findings.omitted().collect(),
            findings: self.findings.list,
            raw: self.raw,
            unreadable: self.unreadable,
            raw_lines: self.raw_lines,
            first_raw: self.first_raw,
        }
    }
}

/// A diagnostic for a line whose first character cannot start a JSON object (as conversion
/// reports it).
fn not_an_object(text: &str) -> Option<(u64, String)> {
    let start = text.len() - text.trim_start().len();
    let rest = &text[start..];
    let found = match rest.as_bytes().first()? {
        b'{' => return None,
        b'[' => "found an array",
        b'"' => "found a string",
        _ if rest.starts_with("true") || rest.starts_with("false") => "found a boolean",
        _ if rest.starts_with("null") => "found null",
        b'-' | b'0'..=b'9' => "found a number",
        _ => return Some((start as u64 + 1, "not JSON: expected a JSON object".into())),
    };
    Some((start as u64 + 1, format!("expected a JSON object, {found}")))
}

/// The number of non-empty lines in `out` (what `Judge::converted_lines` checks).
fn event_lines(out: &[u8]) -> u64 {
    let (mut n, mut start) = (0, 0);
    for end in memchr::memchr_iter(b'\n', out) {
        n += u64::from(end > start);
        start = end + 1;
    }
    n + u64::from(start < out.len())
}

/// The level counts of a report agree with its findings (a consistency check for tests).
#[cfg(test)]
fn levels(r: &FileReport) -> (usize, usize) {
    let e = r
        .findings
        .iter()
        .filter(|f| f.level == super::rules::Level::Error)
        .count();
    (e, r.findings.len() - e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converted_events_are_sliced_from_the_batch() {
        let text = "{\"a\":\"é\"}\n{}\n";
        let c = Converted::of(text.as_bytes());
        assert!(matches!(c, Converted::Text(_)));
        assert_eq!(c.slice(0, 11), "{\"a\":\"é\"}\n");
        assert_eq!(c.slice(11, 3), "{}\n");
        // Not UTF-8 (never written by the converter): read lossily, line by line.
        let bytes = b"{\"a\":\"\xff\"}\n{}\n";
        let c = Converted::of(bytes);
        assert!(matches!(c, Converted::Bytes(_)));
        assert_eq!(c.slice(0, 10), "{\"a\":\"\u{fffd}\"}\n");
        assert_eq!(c.slice(10, 3), "{}\n");
    }

    #[test]
    fn event_lines_are_the_non_empty_lines() {
        for (out, n) in [
            ("", 0),
            ("\n", 0),
            ("{}\n", 1),
            ("{}\n{}\n", 2),
            ("{}\n\n{}", 2),
            ("{}", 1),
        ] {
            let split = out.split('\n').filter(|l| !l.is_empty()).count() as u64;
            assert_eq!(event_lines(out.as_bytes()), n, "{out:?}");
            assert_eq!(split, n, "{out:?}");
        }
    }

    fn opts() -> Options {
        Options::for_tests(1 << 20)
    }

    fn run(input: &str) -> FileReport {
        let schema: Value = serde_json::from_str(crate::schema::EVENT_SCHEMA).unwrap();
        let v = super::super::compile(&schema).unwrap();
        let fast = FastSchema::compile(&schema);
        let o = opts();
        let p = Policy::default();
        let cx = Context {
            schema: &v,
            fast: &fast,
            opts: &o,
            policy: &p,
        };
        check_reader(input.as_bytes(), "<test>".into(), &cx, false)
    }

    fn rules(r: &FileReport) -> Vec<(u64, &'static str)> {
        r.findings.iter().map(|f| (f.line, f.rule.id())).collect()
    }

    #[test]
    fn unreadable_lines_are_findings_with_columns() {
        let r = run("nope\n[1]\n\n{\"a\":\n");
        assert_eq!(
            rules(&r),
            [
                (1, "unreadable-line"),
                (2, "unreadable-line"),
                (4, "unreadable-line")
            ]
        );
        assert_eq!(r.findings[1].column, Some(1));
        assert!(
            r.findings[2].message.starts_with("truncated JSON"),
            "{:?}",
            r.findings[2]
        );
        assert_eq!((r.lines, r.health.unreadable), (3, 3));
    }

    #[test]
    fn schema_findings_carry_the_pointer() {
        let r = run(
            r#"{"event":"session_status","id":"a:0","seq":1,"line":1,"provider":"claude","sessionId":"","status":"sleepy"}"#,
        );
        assert_eq!(rules(&r), [(1, "schema")]);
        assert_eq!(r.findings[0].pointer.as_deref(), Some("/status"));
        assert_eq!(levels(&r), (1, 0));
    }

    #[test]
    fn provider_lines_are_converted_and_counted() {
        let r = run("{\"type\":\"keep_alive\"}\n{\"hello\":1}\n");
        assert_eq!(r.events, 2);
        assert_eq!(r.health.normalized, 0);
        let claude = &r.health.providers["claude"];
        assert_eq!((claude.lines, claude.events, claude.raw), (1, 1, 0));
        let unknown = &r.health.providers["unknown"];
        assert_eq!((unknown.lines, unknown.raw), (1, 1));
        assert_eq!(
            unknown.reasons.keys().collect::<Vec<_>>(),
            ["no provider recognises this line (try --from)"]
        );
        assert_eq!(rules(&r), [(2, "raw-event")]);
        assert_eq!(levels(&r), (0, 1));
    }

    #[test]
    fn a_log_of_mostly_raw_lines_fails_once_in_place_of_its_raw_warnings() {
        let r = run("{\"foo\":1}\n{\"type\":\"keep_alive\"}\n{\"foo\":2}\n");
        assert_eq!(rules(&r), [(1, "mostly-raw")]);
        assert_eq!(levels(&r), (1, 0));
        assert_eq!((r.errors, r.warnings), (1, 0));
        assert!(
            r.findings[0]
                .message
                .starts_with("2 of 3 lines fell back to raw events"),
            "{}",
            r.findings[0].message
        );
        // Half of the lines is not most of them.
        let r = run("{\"foo\":1}\n{\"type\":\"keep_alive\"}\n");
        assert_eq!(rules(&r), [(1, "raw-event")]);
    }

    #[test]
    fn over_deep_events_are_a_warning_not_a_crash() {
        let deep = format!(
            "{{\"event\":\"notice\",\"id\":\"a:0\",\"seq\":1,\"x\":{}1{}}}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let r = run(&deep);
        assert_eq!(rules(&r), [(1, "too-deep")]);
    }
}
