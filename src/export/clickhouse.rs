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

use super::Target;
use crate::diag::Diag;
use crate::usage::prices::Prices;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::io::Write;

/// The latest time a `DateTime64(3)` holds (2299-12-31 23:59:59.999 UTC), in milliseconds.
const LATEST_MS: i64 = 10_413_791_999_999;

/// Writes the rows to `out`.
pub struct Rows {
    out: std::io::BufWriter<Box<dyn Write>>,
    row: Vec<u8>,
    /// Events that could not be read as a row (a passed-through line that is not one).
    unreadable: u64,
    rows: u64,
}

impl Rows {
    pub fn new(out: Box<dyn Write>) -> Rows {
        Rows {
            out: std::io::BufWriter::with_capacity(256 * 1024, out),
            row: Vec::with_capacity(4096),
            unreadable: 0,
            rows: 0,
        }
    }
}

impl Target for Rows {
    fn event(&mut self, line: &str) -> anyhow::Result<()> {
        self.row.clear();
        match row(line, &mut self.row) {
            Ok(()) => {
                self.out.write_all(&self.row)?;
                self.rows += 1;
            }
            Err(_) => self.unreadable += 1,
        }
        Ok(())
    }

    fn finish(&mut self, diag: &mut Diag) -> anyhow::Result<()> {
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

/// A row of `events` (schemas/clickhouse.sql), in its column order.
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
    /// The whole event, as a string (ClickHouse reads an object into a `String` column only
    /// with a setting).
    json: &'a str,
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
fn row(line: &str, into: &mut Vec<u8>) -> anyhow::Result<()> {
    let ev: Event<'_> = serde_json::from_str(line)?;
    // An event without an id (the schema requires one) is known by its text.
    let id = match ev.id.as_deref().filter(|i| !i.is_empty()) {
        Some(i) => i.to_owned(),
        None => format!("line-{:016x}", crate::ids::hash_pair("", line)),
    };
    let time = time_column(ev.timestamp.as_deref());
    let u = ev.step_usage.unwrap_or_default();
    let tokens = crate::usage::Tokens {
        input: count(u.input_tokens),
        output: count(u.output_tokens),
        cache_read: count(u.cache_read_input_tokens),
        cache_creation: count(u.cache_creation_input_tokens),
        cache_creation_1h: u
            .cache_creation
            .and_then(|c| c.ephemeral_1h_input_tokens)
            .unwrap_or(0),
        reasoning: count(u.reasoning_output_tokens.or(u.reasoning_tokens)),
    };
    let event = text(&ev.event);
    let cost_usd = if event == "usage_update" {
        u.cost.or_else(|| {
            let model = ev.model.as_deref()?;
            Some(Prices::shipped().find(model)?.cost(&tokens))
        })
    } else {
        None
    };
    let r = Row {
        session_id: text(&ev.session_id),
        id: &id,
        turn_id: text(&ev.turn_id),
        seq: ev.seq.unwrap_or(0),
        time: &time,
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
        json: line,
    };
    // The program's writer: its string escaping is the converter's, several times as fast
    // as serde_json's on the `json` column, which is most of a row.
    crate::json_writer::write(into, &r)?;
    into.push(b'\n');
    Ok(())
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
        row(line, &mut out).unwrap();
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
    fn an_event_without_a_time_or_an_id_still_has_a_key() {
        let mut out = Vec::new();
        row(r#"{"event":"text","text":"hi"}"#, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["time"], "1970-01-01 00:00:00.000");
        assert!(v["id"].as_str().unwrap().starts_with("line-"));
        assert!(v["cost_usd"].is_null());
    }
}
