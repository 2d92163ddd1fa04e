//! `--to clickhouse`: one `JSONEachRow` row per event for the `events` table of
//! `schemas/clickhouse.sql`, so that loading is
//! `insights export --to clickhouse … | clickhouse-client -q 'INSERT INTO events FORMAT JSONEachRow'`.
//!
//! A row holds the event's key (`session_id`, `id`: the table is a `ReplacingMergeTree` on it,
//! so rows loaded twice are one after merges), the members a fleet's questions group and
//! filter by (time, agent, type, turn, call, tool, model), a usage_update's tokens and their
//! cost, and the whole event (`json`) for everything else.
//!
//! The cost of a request is what `insights usage` counts for it: the agent's own figure
//! (`stepUsage.cost`), else its tokens priced with the shipped table
//! ([`crate::usage::prices::Prices::shipped`]). The `usage` view then sums them as `usage`
//! does: each response once (by `messageId`, the copy with the most tokens).

use super::columns::Captured;
use super::Target;
use crate::diag::Diag;
use crate::usage::prices::Prices;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::io::Write;

/// The latest time a `DateTime64(3)` holds (2299-12-31 23:59:59.999 UTC), in milliseconds.
const LATEST_MS: i64 = 10_413_791_999_999;

/// The size of the output gathered before it is written, and of a [`Block`].
const BLOCK: usize = 256 * 1024;

/// Writes the rows to `out`: of InsightsEvent lines ([`Target`], the store's), or of the
/// blocks a [`Maker`] made on the converting thread.
pub struct Rows {
    out: Box<dyn Write>,
    buf: Vec<u8>,
    /// Events that could not be read as a row (a passed-through line that is not one).
    unreadable: u64,
    times: TimeColumn,
}

impl Rows {
    pub fn new(out: Box<dyn Write>) -> Rows {
        Rows {
            out,
            buf: Vec::with_capacity(BLOCK + 64 * 1024),
            unreadable: 0,
            times: TimeColumn::default(),
        }
    }

    /// Writes the rows of a block: each its first part as made, then its event's JSON as
    /// the `json` column.
    pub fn block(&mut self, b: &Block) -> anyhow::Result<()> {
        for &(json, prefix, end) in &b.rows {
            self.buf.extend_from_slice(&b.bytes[prefix..end]);
            json_column(&b.bytes[json..prefix], &mut self.buf);
            self.written()?;
        }
        self.unreadable += b.unreadable;
        Ok(())
    }

    /// Writes out what is gathered once it is a block's worth.
    fn written(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= BLOCK {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl Target for Rows {
    fn event(&mut self, line: &str) -> anyhow::Result<()> {
        match row(line, &mut self.times, &mut self.buf) {
            Ok(()) => self.written()?,
            Err(_) => self.unreadable += 1,
        }
        Ok(())
    }

    fn finish(&mut self, diag: &mut Diag) -> anyhow::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()?;
        if self.unreadable > 0 {
            diag.note(&format!(
                "{} events were not InsightsEvents that a row can hold, and were left out",
                self.unreadable
            ));
        }
        Ok(())
    }
}

/// Rows made on the converting thread, their `json` column still to write: for each row,
/// its event's JSON and then the row up to that column, in `bytes`, at the offsets of `rows`
/// (the JSON's start, the row's start, the row's end). [`Rows::block`] writes them.
#[derive(Default)]
pub struct Block {
    bytes: Vec<u8>,
    rows: Vec<(usize, usize, usize)>,
    /// Lines passed through that could not be read as a row, left out.
    unreadable: u64,
}

/// Makes the rows of the converter's events (its tap, [`Maker::event`]) and of the lines it
/// passes through ([`Maker::passed`]), in the order it gives them, up to their `json` column,
/// and hands them on in [`Block`]s: the JSON of an event is written once, by the program's
/// writer, and the members of its row are taken from the typed event, not read back from
/// that JSON.
pub struct Maker {
    block: Block,
    captured: Captured,
    /// A line passed through, until its end comes.
    passed: Vec<u8>,
    times: TimeColumn,
    send: Box<dyn FnMut(Block) -> std::io::Result<()> + Send>,
}

impl Maker {
    /// `send` takes each full block (an error: the rows can no longer be written).
    pub fn new(send: Box<dyn FnMut(Block) -> std::io::Result<()> + Send>) -> Maker {
        Maker {
            block: Block {
                bytes: Vec::with_capacity(BLOCK + 64 * 1024),
                ..Block::default()
            },
            captured: Captured::default(),
            passed: Vec::new(),
            times: TimeColumn::default(),
            send,
        }
    }

    /// The row of an event the converter made.
    pub fn event(&mut self, ev: &crate::event::Event<'_>) -> std::io::Result<()> {
        let c = self.captured.of(&ev.body);
        // Read from its JSON text, as from the line's.
        let step_usage = match c.step_usage.get() {
            Some(json) => serde_json::from_str::<Option<StepUsage>>(json).ok(),
            None => Some(None),
        };
        let (false, Some(step_usage)) = (c.unreadable, step_usage) else {
            self.block.unreadable += 1;
            return Ok(());
        };
        fn text(t: &super::columns::Text) -> Option<Cow<'_, str>> {
            t.get().map(Cow::Borrowed)
        }
        let row = Event {
            session_id: Some(Cow::Borrowed(&ev.session_id)),
            id: Some(Cow::Borrowed(&ev.id)),
            turn_id: ev.turn_id.as_deref().map(Cow::Borrowed),
            seq: Some(ev.seq),
            timestamp: ev.timestamp.as_deref().map(Cow::Borrowed),
            provider: Some(Cow::Borrowed(ev.provider)),
            event: Some(Cow::Borrowed(ev.event)),
            call_id: text(&c.call_id),
            parent_call_id: text(&c.parent_call_id),
            tool_name: text(&c.tool_name),
            is_error: c.is_error,
            duration_ms: c.duration_ms,
            model: text(&c.model),
            message_id: text(&c.message_id),
            step_usage,
        };
        let b = &mut self.block;
        let json = b.bytes.len();
        if let Err(e) = crate::json_writer::write(&mut b.bytes, ev) {
            b.bytes.truncate(json);
            return Err(std::io::Error::other(e));
        }
        let id = row_id(&row, &b.bytes[json..]);
        let start = b.bytes.len();
        prefix_with(&row, &id, &mut self.times, &mut b.bytes).map_err(std::io::Error::other)?;
        b.rows.push((json, start, b.bytes.len()));
        self.sent_if_full()
    }

    /// Bytes the converter wrote: lines it passed through (InsightsEvents read), each made a
    /// row when its end comes.
    pub fn passed(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.passed.extend_from_slice(data);
        while let Some(end) = memchr::memchr(b'\n', &self.passed) {
            let line = &self.passed[..end];
            if !line.is_empty() {
                // The converter writes UTF-8; only a line passed through as read may not be.
                let text = String::from_utf8_lossy(line);
                let b = &mut self.block;
                match serde_json::from_str::<Event<'_>>(&text) {
                    Ok(ev) => {
                        let json = b.bytes.len();
                        b.bytes.extend_from_slice(text.as_bytes());
                        let start = b.bytes.len();
                        prefix(&ev, text.as_bytes(), &mut self.times, &mut b.bytes)
                            .map_err(std::io::Error::other)?;
                        b.rows.push((json, start, b.bytes.len()));
                    }
                    Err(_) => b.unreadable += 1,
                }
            }
            self.passed.drain(..=end);
            self.sent_if_full()?;
        }
        Ok(())
    }

    fn sent_if_full(&mut self) -> std::io::Result<()> {
        if self.block.bytes.len() >= BLOCK {
            self.send()?;
        }
        Ok(())
    }

    /// Hands the rows made so far on (a flush of the converter: no further input line is
    /// ready, so a live pipe's rows go at once).
    pub fn send(&mut self) -> std::io::Result<()> {
        if self.block.rows.is_empty() && self.block.unreadable == 0 {
            return Ok(());
        }
        let next = Block {
            bytes: Vec::with_capacity(BLOCK + 64 * 1024),
            ..Block::default()
        };
        (self.send)(std::mem::replace(&mut self.block, next))
    }
}

/// The converter's output into a [`Maker`] shared with its tap: what it writes (the lines it
/// passes through) becomes rows in the order written, among the events the tap hands over.
pub struct Passed<'m>(pub &'m std::cell::RefCell<Maker>);

impl Write for Passed<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.try_borrow_mut().map_err(|_| busy())?.passed(data)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.try_borrow_mut().map_err(|_| busy())?.send()
    }
}

pub fn busy() -> std::io::Error {
    std::io::Error::other("internal error: the rows were made while they were busy")
}
/// The members of an event a row is made of; the rest is only in `json`.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Event<'a> {
    #[serde(borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    turn_id: Option<Cow<'a, str>>,
    seq: Option<u64>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    provider: Option<Cow<'a, str>>,
    #[serde(borrow)]
    event: Option<Cow<'a, str>>,
    #[serde(borrow)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    parent_call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_name: Option<Cow<'a, str>>,
    is_error: Option<bool>,
    duration_ms: Option<f64>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message_id: Option<Cow<'a, str>>,
    step_usage: Option<StepUsage>,
}

/// `stepUsage` (snake_case keys, the provider's own): the counts `usage` reads.
#[derive(Deserialize, Default)]
#[serde(default)]
struct StepUsage {
    input_tokens: Option<f64>,
    output_tokens: Option<f64>,
    cache_read_input_tokens: Option<f64>,
    cache_creation_input_tokens: Option<f64>,
    reasoning_output_tokens: Option<f64>,
    reasoning_tokens: Option<f64>,
    cost: Option<f64>,
    cache_creation: Option<crate::reduce::view::CacheCreation>,
}

/// A row of `events` (schemas/clickhouse.sql), in its column order: written by
/// [`Row::write_open`], the same text as its `Serialize`.
#[derive(Serialize)]
struct Row<'a> {
    session_id: &'a str,
    id: &'a str,
    turn_id: &'a str,
    seq: u64,
    time: &'a str,
    agent: &'a str,
    event: &'a str,
    call_id: &'a str,
    parent_call_id: &'a str,
    tool_name: &'a str,
    is_error: Option<bool>,
    duration_ms: Option<u64>,
    model: &'a str,
    message_id: &'a str,
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: u64,
    cache_creation_tokens: u64,
    reasoning_tokens: u64,
    cost_usd: Option<f64>,
    // Then `json`, the whole event as a string (ClickHouse reads an object into a `String`
    // column only with a setting), written by [`json_column`].
}

/// A count as written (a number, possibly not an integer), as a `UInt64`.
fn count(v: Option<f64>) -> u64 {
    v.filter(|x| x.is_finite() && *x > 0.0)
        .map_or(0, |x| x as u64)
}

/// A member's text, `''` when the event has none.
fn text<'x>(v: &'x Option<Cow<'_, str>>) -> &'x str {
    v.as_deref().unwrap_or("")
}

/// The row of one InsightsEvent line, with its line end, appended to `into`.
fn row(line: &str, times: &mut TimeColumn, into: &mut Vec<u8>) -> anyhow::Result<()> {
    let ev: Event<'_> = serde_json::from_str(line)?;
    prefix(&ev, line.as_bytes(), times, into)?;
    json_column(line.as_bytes(), into);
    Ok(())
}

/// The row's key: the event's id, or for an event without one (the schema requires one),
/// a name made of its JSON text `line`.
fn row_id<'e>(ev: &'e Event<'_>, line: &[u8]) -> Cow<'e, str> {
    match ev.id.as_deref().filter(|i| !i.is_empty()) {
        Some(i) => Cow::Borrowed(i),
        None => Cow::Owned(format!(
            "line-{:016x}",
            crate::ids::hash_pair("", &String::from_utf8_lossy(line))
        )),
    }
}

/// The row of an event whose JSON text is `line`, up to its `json` column, appended to
/// `into`; [`json_column`] ends it.
fn prefix(
    ev: &Event<'_>,
    line: &[u8],
    times: &mut TimeColumn,
    into: &mut Vec<u8>,
) -> anyhow::Result<()> {
    let id = row_id(ev, line);
    prefix_with(ev, &id, times, into)
}

/// [`prefix`] with the row's key `id` ([`row_id`]).
fn prefix_with(
    ev: &Event<'_>,
    id: &str,
    times: &mut TimeColumn,
    into: &mut Vec<u8>,
) -> anyhow::Result<()> {
    let time = times.of(ev.timestamp.as_deref());
    let u = ev.step_usage.as_ref();
    let tokens = crate::usage::Tokens {
        input: count(u.and_then(|u| u.input_tokens)),
        output: count(u.and_then(|u| u.output_tokens)),
        cache_read: count(u.and_then(|u| u.cache_read_input_tokens)),
        cache_creation: count(u.and_then(|u| u.cache_creation_input_tokens)),
        cache_creation_1h: u
            .and_then(|u| u.cache_creation.as_ref())
            .and_then(|c| c.ephemeral_1h_input_tokens)
            .unwrap_or(0),
        reasoning: count(u.and_then(|u| u.reasoning_output_tokens.or(u.reasoning_tokens))),
    };
    let event = text(&ev.event);
    let cost_usd = if event == "usage_update" {
        u.and_then(|u| u.cost).or_else(|| {
            let model = ev.model.as_deref()?;
            Some(Prices::shipped().find(model)?.cost(&tokens))
        })
    } else {
        None
    };
    let r = Row {
        session_id: text(&ev.session_id),
        id,
        turn_id: text(&ev.turn_id),
        seq: ev.seq.unwrap_or(0),
        time,
        agent: text(&ev.provider),
        event,
        call_id: text(&ev.call_id),
        parent_call_id: text(&ev.parent_call_id),
        tool_name: text(&ev.tool_name),
        is_error: ev.is_error,
        duration_ms: ev.duration_ms.map(|d| count(Some(d))),
        model: text(&ev.model),
        message_id: text(&ev.message_id),
        input_tokens: tokens.input,
        output_tokens: tokens.output,
        cache_read_tokens: tokens.cache_read,
        cache_creation_tokens: tokens.cache_creation,
        reasoning_tokens: tokens.reasoning,
        cost_usd,
    };
    r.write_open(into)?;
    into.extend_from_slice(b",\"json\":");
    Ok(())
}

impl Row<'_> {
    /// The row's members as serde_json writes the struct, the object left open for its last
    /// member: written one by one (strings by the program's writer, whose escaping is the
    /// converter's), not through a serializer, which cost as much per member as the whole
    /// `json` column per byte (a test compares the two).
    fn write_open(&self, into: &mut Vec<u8>) -> serde_json::Result<()> {
        use crate::json_writer::write_str;
        let mut digits = itoa::Buffer::new();
        let mut number = |into: &mut Vec<u8>, key: &[u8], n: u64| {
            into.extend_from_slice(key);
            into.extend_from_slice(digits.format(n).as_bytes());
        };
        let text = |into: &mut Vec<u8>, key: &[u8], v: &str| {
            into.extend_from_slice(key);
            write_str(into, v);
        };
        text(into, b"{\"session_id\":", self.session_id);
        text(into, b",\"id\":", self.id);
        text(into, b",\"turn_id\":", self.turn_id);
        number(into, b",\"seq\":", self.seq);
        text(into, b",\"time\":", self.time);
        text(into, b",\"agent\":", self.agent);
        text(into, b",\"event\":", self.event);
        text(into, b",\"call_id\":", self.call_id);
        text(into, b",\"parent_call_id\":", self.parent_call_id);
        text(into, b",\"tool_name\":", self.tool_name);
        into.extend_from_slice(match self.is_error {
            Some(true) => b",\"is_error\":true",
            Some(false) => b",\"is_error\":false",
            None => b",\"is_error\":null",
        });
        match self.duration_ms {
            Some(d) => number(into, b",\"duration_ms\":", d),
            None => into.extend_from_slice(b",\"duration_ms\":null"),
        }
        text(into, b",\"model\":", self.model);
        text(into, b",\"message_id\":", self.message_id);
        number(into, b",\"input_tokens\":", self.input_tokens);
        number(into, b",\"output_tokens\":", self.output_tokens);
        number(into, b",\"cache_read_tokens\":", self.cache_read_tokens);
        number(
            into,
            b",\"cache_creation_tokens\":",
            self.cache_creation_tokens,
        );
        number(into, b",\"reasoning_tokens\":", self.reasoning_tokens);
        into.extend_from_slice(b",\"cost_usd\":");
        // A number as serde_json writes it (`null` when not finite), or `null`.
        serde_json::to_writer(&mut *into, &self.cost_usd)
    }
}

/// The `json` column, the whole event `line` as a string, and the row's end.
fn json_column(line: &[u8], into: &mut Vec<u8>) {
    escape_text(into, line);
    into.extend_from_slice(b"}\n");
}

/// `text`, a JSON text, as a JSON string: the bytes [`crate::json_writer::write_str_bytes`]
/// writes, made faster for JSON text, where every few bytes is a quote to escape. The text
/// goes 16 bytes at a time: the bytes to escape in a block are found at once
/// ([`crate::scan::special_mask16`]), and each run before one is copied as 16 bytes into room
/// made beforehand (the bytes past the run are written over next), not by a call to `memcpy`
/// of its length, nor by a search from each escape to the next. The last 32 bytes or fewer,
/// where a 16-byte copy from a run's start could pass the end, go as the writer writes them.
fn escape_text(out: &mut Vec<u8>, text: &[u8]) {
    // A block writes at most 16 six-byte escapes and copies 16 bytes past its end.
    const BLOCK_ROOM: usize = 16 * 6 + 16;
    let mut j = out.len();
    // Room for the text and a quarter more (its quotes escaped), grown if it needs more.
    out.resize(j + text.len() + text.len() / 4 + BLOCK_ROOM + 1, 0);
    out[j] = b'"';
    j += 1;
    let mut i = 0;
    while i + 32 <= text.len() {
        if out.len() < j + BLOCK_ROOM {
            out.resize(j + BLOCK_ROOM + 2 * (text.len() - i), 0);
        }
        let Ok(block) = <&[u8; 16]>::try_from(&text[i..i + 16]) else {
            break;
        };
        let mut mask = crate::scan::special_mask16(block);
        let mut from = i;
        while mask != 0 {
            let k = i + mask.trailing_zeros() as usize;
            out[j..j + 16].copy_from_slice(&text[from..from + 16]);
            j += k - from;
            // All six bytes are copied (a copy of a known length), the room allows it; `n`
            // of them are the escape.
            let (e, n) = crate::json_writer::escape_of(text[k]);
            out[j..j + 6].copy_from_slice(&e);
            j += n;
            from = k + 1;
            mask &= mask - 1;
        }
        out[j..j + 16].copy_from_slice(&text[from..from + 16]);
        j += i + 16 - from;
        i += 16;
    }
    out.truncate(j);
    loop {
        let k = crate::scan::string_special(text, i);
        out.extend_from_slice(&text[i..k]);
        let Some(&b) = text.get(k) else { break };
        let (e, n) = crate::json_writer::escape_of(b);
        out.extend_from_slice(&e[..n]);
        i = k + 1;
    }
    out.push(b'"');
}

/// The `time` column of the last timestamp seen ([`time_column`]): the events of one input
/// line, and often of several, have the same.
#[derive(Default)]
struct TimeColumn {
    ts: Option<String>,
    column: String,
}

impl TimeColumn {
    fn of(&mut self, ts: Option<&str>) -> &str {
        if self.column.is_empty() || self.ts.as_deref() != ts {
            self.column = time_column(ts);
            self.ts = ts.map(str::to_owned);
        }
        &self.column
    }
}

/// The `time` column: the event's timestamp in UTC as ClickHouse reads a `DateTime64(3)`
/// (`2026-11-26 13:12:06.916`); an event without one (a stream read from a pipe carries
/// none) has 1970-01-01 00:00:00.000.
fn time_column(ts: Option<&str>) -> String {
    let ms = ts
        .and_then(crate::time::millis)
        .unwrap_or(0)
        .clamp(0, LATEST_MS);
    let mut t = crate::time::format_millis(ms as u64);
    t.pop(); // the `Z`
    t.replace_range(10..11, " ");
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_keeps_the_key_the_tokens_and_the_event() {
        let line = r#"{"event":"usage_update","id":"m:1","seq":9,"timestamp":"2026-11-26T14:12:06.916+01:00","provider":"claude","sessionId":"s","stepUsage":{"input_tokens":12,"output_tokens":25,"cache_read_input_tokens":0,"cache_creation_input_tokens":19063},"model":"claude-opus-4-8","messageId":"msg_1"}"#;
        let mut out = Vec::new();
        row(line, &mut TimeColumn::default(), &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["session_id"], "s");
        assert_eq!(v["id"], "m:1");
        assert_eq!(v["time"], "2026-11-26 13:12:06.916");
        assert_eq!(v["agent"], "claude");
        assert_eq!(v["cache_creation_tokens"], 19063);
        assert!(v["cost_usd"].as_f64().unwrap() > 0.0);
        assert_eq!(v["json"], line);
        assert!(out.ends_with(b"}\n"));
    }

    #[test]
    fn the_json_column_is_escaped_as_the_writer_escapes_a_string() {
        let mut texts: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"{}".to_vec(),
            br#"{"event":"text","id":"a\"b","text":"line\none\ttab \\ end"}"#.to_vec(),
        ];
        // Every byte, alone, in runs around the 16-byte copy, and packed.
        let all: Vec<u8> = (0..=255u8).collect();
        texts.push(all.clone());
        for b in 0..=255u8 {
            for run in [0, 1, 15, 16, 17, 40] {
                let mut t = vec![b'a'; run];
                t.push(b);
                t.extend(std::iter::repeat(b'z').take(run));
                t.push(b);
                texts.push(t);
            }
        }
        texts.push(vec![0x01; 100]);
        texts.push(vec![b'"'; 100]);
        // Longer texts, every length to 100, a byte to escape every `gap` bytes (blocks with
        // none, one, several, all of them escaped, and the tail after them).
        for len in 0..100usize {
            for gap in [1usize, 2, 3, 7, 16, 17, 31] {
                for b in [b'"', b'\\', b'\n', 0x01, 0x1f] {
                    let t: Vec<u8> = (0..len)
                        .map(|k| {
                            if k % gap == gap - 1 {
                                b
                            } else {
                                b'a' + (k % 26) as u8
                            }
                        })
                        .collect();
                    texts.push(t);
                }
            }
        }
        for t in texts {
            let mut want = b"prefix".to_vec();
            crate::json_writer::write_str_bytes(&mut want, &t);
            let mut got = b"prefix".to_vec();
            escape_text(&mut got, &t);
            assert_eq!(got, want, "{t:?}");
        }
    }

    #[test]
    fn a_row_is_written_as_serde_json_writes_it() {
        let mut rows = Vec::new();
        for (k, (text, is_error, duration_ms, cost_usd)) in [
            ("", None, None, None),
            ("a \"q\" \\ \n\u{1} é", Some(true), Some(0), Some(0.1)),
            ("x", Some(false), Some(u64::MAX), Some(f64::NAN)),
            ("2026-11-26 13:12:06.916", None, Some(7), Some(1e-9)),
        ]
        .into_iter()
        .enumerate()
        {
            rows.push(Row {
                session_id: text,
                id: text,
                turn_id: text,
                seq: k as u64 * 1_000_000_007,
                time: text,
                agent: text,
                event: text,
                call_id: text,
                parent_call_id: text,
                tool_name: text,
                is_error,
                duration_ms,
                model: text,
                message_id: text,
                input_tokens: k as u64,
                output_tokens: u64::MAX,
                cache_read_tokens: 0,
                cache_creation_tokens: 19_063,
                reasoning_tokens: 1,
                cost_usd,
            });
        }
        for r in rows {
            let mut ours = Vec::new();
            r.write_open(&mut ours).unwrap();
            ours.push(b'}');
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&r).unwrap()
            );
        }
    }

    #[test]
    fn an_event_without_a_time_or_an_id_still_has_a_key() {
        let mut out = Vec::new();
        row(
            r#"{"event":"text","text":"hi"}"#,
            &mut TimeColumn::default(),
            &mut out,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["time"], "1970-01-01 00:00:00.000");
        assert!(v["id"].as_str().unwrap().starts_with("line-"));
        assert!(v["cost_usd"].is_null());
    }
}
