//! GitHub Copilot CLI: its OpenTelemetry file export, JSON Lines in `~/.copilot/otel/*.jsonl`,
//! and the file `COPILOT_OTEL_FILE_EXPORTER_PATH` names (Copilot writes these only when
//! `COPILOT_OTEL_ENABLED=true` and `COPILOT_OTEL_EXPORTER_TYPE=file` were set as it ran).
//!
//! Each line is a span, a log record or a metric; the ones with `attributes` that carry
//! `gen_ai.usage.*` counts are read. One model response can be told four times, and is
//! counted once, from the most precise record the file has for it:
//! 1. a `chat` span (`gen_ai.operation.name` `chat`, or a name `chat <model>`): one request;
//! 2. an inference log (`event.name` `gen_ai.client.inference.operation.details`, or a body
//!    `GenAI inference: …`), counted unless a chat span has its trace or its response id;
//! 3. an agent-turn log (`copilot_chat.agent.turn`), unless a chat span or an inference log
//!    has its trace or response id;
//! 4. an `invoke_agent` span, the sum of an agent's run, unless any of the others has them.
//!
//! The counts follow OpenTelemetry's GenAI conventions: `gen_ai.usage.input_tokens` holds the
//! cached input (`cache_read.input_tokens` is taken out of it, as ccusage takes it out; a
//! cache write is counted apart, also as ccusage counts it), and `output_tokens` holds the
//! reasoning (`reasoning.output_tokens`, the part of it that was reasoning). A total without
//! its parts is output. The model is `gen_ai.response.model`, else `gen_ai.request.model`,
//! else another record of the same trace's; the session `session.id`,
//! `copilot_chat.chat_session_id`, `copilot_chat.session_id` or `gen_ai.conversation.id`
//! (the first there, as ccusage picks), else the trace's, else the trace id. The time is the span's
//! end (`[seconds, nanoseconds]`), else its start, the log's time, else the file's
//! modification time. Telemetry names no prompt: no turns are counted. The project is not in
//! the file.

use super::reader::{each_line, modified_millis, total_fallback, Env, Reader, Sink};
use super::{Agent, LineFacts, Tokens};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::Copilot,
    places,
    keep,
    owns,
    read,
};

const EXPORTER_PATH: &str = "COPILOT_OTEL_FILE_EXPORTER_PATH";

/// `~/.copilot/otel`, and the exporter's file when it is elsewhere.
fn places(env: &Env) -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> = env.home.iter().map(|h| h.join(".copilot/otel")).collect();
    if let Some(v) = env.var(EXPORTER_PATH) {
        let file = PathBuf::from(v.to_string_lossy().trim());
        if !file.as_os_str().is_empty() && !places.iter().any(|d| file.starts_with(d)) {
            places.push(file);
        }
    }
    places
}

fn keep(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "jsonl")
}

fn owns(p: &Path) -> bool {
    keep(p) && p.to_string_lossy().contains("/.copilot/otel/")
}

/// A line of the export: a span, a log record or a metric (OpenTelemetry JS's JSON).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(rename = "type")]
    kind: Option<Value>,
    name: Option<Value>,
    trace_id: Option<Value>,
    span_id: Option<Value>,
    span_context: Option<SpanContext>,
    start_time: Option<Value>,
    end_time: Option<Value>,
    hr_time: Option<Value>,
    #[serde(rename = "_hrTime")]
    hr_time_private: Option<Value>,
    time: Option<Value>,
    timestamp: Option<Value>,
    observed_timestamp: Option<Value>,
    time_unix_nano: Option<Value>,
    duration: Option<IgnoredAny>,
    #[serde(rename = "kind")]
    span_kind: Option<IgnoredAny>,
    body: Option<Value>,
    #[serde(rename = "_body")]
    body_private: Option<Value>,
    attributes: Option<Attrs>,
}

/// The attributes read (OpenTelemetry's GenAI conventions, and Copilot's own); the others,
/// prompts and replies among them when Copilot captures content, are skipped unread.
#[derive(Deserialize)]
struct Attrs {
    #[serde(rename = "gen_ai.operation.name")]
    operation: Option<Value>,
    #[serde(rename = "event.name")]
    event: Option<Value>,
    #[serde(rename = "gen_ai.response.model")]
    response_model: Option<Value>,
    #[serde(rename = "gen_ai.request.model")]
    request_model: Option<Value>,
    #[serde(rename = "gen_ai.response.id")]
    response_id: Option<Value>,
    #[serde(rename = "gen_ai.conversation.id")]
    conversation_id: Option<Value>,
    #[serde(rename = "copilot_chat.session_id")]
    chat_session_id: Option<Value>,
    #[serde(rename = "copilot_chat.chat_session_id")]
    chat_chat_session_id: Option<Value>,
    #[serde(rename = "session.id")]
    session_id: Option<Value>,
    #[serde(rename = "github.copilot.interaction_id")]
    interaction_id: Option<Value>,
    #[serde(rename = "gen_ai.usage.input_tokens")]
    input: Option<Value>,
    #[serde(rename = "gen_ai.usage.output_tokens")]
    output: Option<Value>,
    #[serde(rename = "gen_ai.usage.cache_read.input_tokens")]
    cache_read: Option<Value>,
    #[serde(rename = "gen_ai.usage.cache_write.input_tokens")]
    cache_write: Option<Value>,
    #[serde(rename = "gen_ai.usage.cache_creation.input_tokens")]
    cache_creation: Option<Value>,
    #[serde(rename = "gen_ai.usage.reasoning.output_tokens")]
    reasoning: Option<Value>,
    #[serde(rename = "gen_ai.usage.reasoning_tokens")]
    reasoning_tokens: Option<Value>,
    #[serde(rename = "gen_ai.usage.total_tokens")]
    total: Option<Value>,
    #[serde(rename = "gen_ai.usage.total.token_count")]
    total_count: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpanContext {
    trace_id: Option<Value>,
}

/// What a record is, most precise first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    ChatSpan,
    InferenceLog,
    AgentTurnLog,
    AgentSpan,
}

/// A non-empty string, trimmed.
fn text(v: Option<&Value>) -> Option<&str> {
    v?.as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// A count: a number, or a string of digits.
fn count(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64().or_else(|| n.as_i64().map(|i| i.max(0) as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The first of `values` with a count above 0.
fn first_count(values: &[&Option<Value>]) -> u64 {
    values
        .iter()
        .filter_map(|v| count(v.as_ref()))
        .find(|c| *c > 0)
        .unwrap_or(0)
}

impl Attrs {
    fn model(&self) -> Option<&str> {
        text(self.response_model.as_ref()).or_else(|| text(self.request_model.as_ref()))
    }

    /// The session the record names, and how sure that is: of the surest attributes, the
    /// last in ccusage's list (`session.id` before `gen_ai.conversation.id`), as it picks.
    fn session(&self) -> Option<(&str, u8)> {
        [
            (&self.session_id, 3),
            (&self.chat_chat_session_id, 3),
            (&self.chat_session_id, 3),
            (&self.conversation_id, 3),
            (&self.interaction_id, 2),
            (&self.response_id, 1),
        ]
        .into_iter()
        .find_map(|(v, rank)| Some((text(v.as_ref())?, rank)))
    }

    /// The tokens, `None` when there are none.
    fn tokens(&self) -> Option<Tokens> {
        let input = first_count(&[&self.input]);
        let cache_read = first_count(&[&self.cache_read]);
        let mut t = Tokens {
            input: input - input.min(cache_read),
            output: first_count(&[&self.output]),
            cache_read,
            cache_creation: first_count(&[&self.cache_write, &self.cache_creation]),
            ..Default::default()
        };
        total_fallback(&mut t, first_count(&[&self.total, &self.total_count]));
        t.reasoning = first_count(&[&self.reasoning, &self.reasoning_tokens]).min(t.output);
        (!t.is_zero()).then_some(t)
    }
}

/// `[seconds, nanoseconds]` as milliseconds.
fn from_parts(v: Option<&Value>) -> Option<i64> {
    let parts = v?.as_array()?;
    let (s, ns) = (count(parts.first())?, count(parts.get(1))?);
    Some(
        s.checked_mul(1000)?
            .checked_add(ns / 1_000_000)?
            .min(i64::MAX as u64) as i64,
    )
}

/// A number of seconds, milliseconds, microseconds or nanoseconds, by its size.
fn from_scalar(v: Option<&Value>) -> Option<i64> {
    let raw = count(v)?;
    let ms = match raw {
        r if r >= 100_000_000_000_000_000 => r / 1_000_000,
        r if r >= 100_000_000_000_000 => r / 1_000,
        r if r >= 100_000_000_000 => r,
        r => r.saturating_mul(1000),
    };
    Some(ms.min(i64::MAX as u64) as i64)
}

impl Record {
    fn trace(&self) -> Option<&str> {
        text(self.trace_id.as_ref()).or_else(|| text(self.span_context.as_ref()?.trace_id.as_ref()))
    }

    fn is_span(&self) -> bool {
        if let Some(kind) = &self.kind {
            return kind.as_str() == Some("span");
        }
        text(self.name.as_ref()).is_some()
            && (text(self.span_id.as_ref()).is_some()
                || text(self.trace_id.as_ref()).is_some()
                || self.start_time.is_some()
                || self.end_time.is_some()
                || self.duration.is_some()
                || self.span_kind.is_some())
    }

    fn body(&self) -> Option<&str> {
        text(self.body.as_ref()).or_else(|| text(self.body_private.as_ref()))
    }

    fn kind(&self, a: &Attrs) -> Option<Kind> {
        let operation = text(a.operation.as_ref());
        let name = text(self.name.as_ref()).unwrap_or("");
        let event = text(a.event.as_ref());
        let body = self.body().unwrap_or("");
        if self.is_span() {
            if operation == Some("chat") || name.starts_with("chat ") {
                Some(Kind::ChatSpan)
            } else if operation == Some("invoke_agent") || name.starts_with("invoke_agent ") {
                Some(Kind::AgentSpan)
            } else {
                None
            }
        } else if event == Some("gen_ai.client.inference.operation.details")
            || body.starts_with("GenAI inference:")
        {
            Some(Kind::InferenceLog)
        } else if event == Some("copilot_chat.agent.turn")
            || body.starts_with("copilot_chat.agent.turn")
        {
            Some(Kind::AgentTurnLog)
        } else {
            None
        }
    }

    fn time(&self) -> Option<i64> {
        from_parts(self.end_time.as_ref())
            .or_else(|| from_parts(self.start_time.as_ref()))
            .or_else(|| from_parts(self.hr_time.as_ref()))
            .or_else(|| from_parts(self.hr_time_private.as_ref()))
            .or_else(|| from_parts(self.time.as_ref()))
            .or_else(|| from_scalar(self.timestamp.as_ref()))
            .or_else(|| from_scalar(self.observed_timestamp.as_ref()))
            .or_else(|| count(self.time_unix_nano.as_ref()).map(|n| (n / 1_000_000) as i64))
            .filter(|t| *t > 0)
    }
}

/// A record with tokens, before the overlaps are taken out.
struct Candidate {
    kind: Kind,
    trace: Option<String>,
    response: Option<String>,
    model: Option<String>,
    session: Option<String>,
    time: Option<i64>,
    tokens: Tokens,
}

/// What the records of one trace say of it: its model and its surest session.
#[derive(Default)]
struct Trace {
    model: Option<String>,
    session: Option<(String, u8)>,
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let mut traces: HashMap<String, Trace> = HashMap::new();
    let mut found = Vec::new();
    each_line(path, sink, &mut |no, line, sink| {
        if !line.contains(r#""attributes""#) {
            return;
        }
        let r: Record = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) => {
                sink.bad(no, crate::wire::without_position(&e));
                return;
            }
        };
        let Some(a) = &r.attributes else { return };
        let trace = r.trace();
        if let Some(id) = trace {
            let t = traces.entry(id.to_owned()).or_default();
            if t.model.is_none() {
                t.model = a.model().map(str::to_owned);
            }
            if let Some((s, rank)) = a.session() {
                if t.session.as_ref().is_none_or(|(_, r)| rank > *r) {
                    t.session = Some((s.to_owned(), rank));
                }
            }
        }
        let (Some(kind), Some(tokens)) = (r.kind(a), a.tokens()) else {
            return;
        };
        found.push(Candidate {
            kind,
            trace: trace.map(str::to_owned),
            response: text(a.response_id.as_ref()).map(str::to_owned),
            model: a.model().map(str::to_owned),
            session: a.session().map(|(s, _)| s.to_owned()),
            time: r.time(),
            tokens,
        });
    })?;
    // The traces and response ids each kind of record tells.
    let mut told: HashMap<Kind, (HashSet<&str>, HashSet<&str>)> = HashMap::new();
    for c in &found {
        let (traces, responses) = told.entry(c.kind).or_default();
        traces.extend(c.trace.as_deref());
        responses.extend(c.response.as_deref());
    }
    let told_before = |c: &Candidate| {
        told.iter().any(|(kind, (traces, responses))| {
            *kind < c.kind
                && (c.trace.as_deref().is_some_and(|t| traces.contains(t))
                    || c.response.as_deref().is_some_and(|r| responses.contains(r)))
        })
    };
    // The file's time, for the records without one: looked up when one needs it.
    let mut modified = None;
    for c in found.iter().filter(|c| !told_before(c)) {
        let trace = c.trace.as_deref().and_then(|t| traces.get(t));
        let model = c
            .model
            .as_deref()
            .or_else(|| trace?.model.as_deref())
            .unwrap_or("unknown");
        let session = c
            .session
            .as_deref()
            .or_else(|| trace?.session.as_ref().map(|(s, _)| s.as_str()))
            .or(c.trace.as_deref())
            .unwrap_or("unknown-session");
        (sink.add)(LineFacts {
            time: c
                .time
                .or_else(|| *modified.get_or_insert_with(|| modified_millis(path))),
            session: Some(Cow::Borrowed(session)),
            model: Some(Cow::Borrowed(model)),
            usage: Some(c.tokens),
            ..Default::default()
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{by_session, home, read, responses, tokens};

    /// ccusage's Copilot tests (tests/usage-samples/copilot): a chat span's input less its
    /// cache reads, reasoning inside output; of a response told by an agent span, an inference
    /// log and a chat span, the chat span's count only; a total alone is output; a metric is
    /// no response.
    #[test]
    fn reads_spans_and_logs_each_response_once() {
        let s = read(&home("copilot"));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let got = by_session(&s);
        let mut sonnet = tokens(19_329, 281, 123, 25);
        sonnet.reasoning = 128;
        let mut reasoned = tokens(90, 50, 10, 20);
        reasoned.reasoning = 5;
        assert_eq!(
            got,
            vec![
                ("conv-1".into(), "claude-sonnet-4".into(), sonnet),
                ("conv-3".into(), "test-model".into(), reasoned),
                ("conv-4".into(), "test-model".into(), tokens(0, 567, 0, 0)),
                (
                    "conv-dupe".into(),
                    "gpt-5.4-mini".into(),
                    tokens(60, 10, 0, 0)
                ),
            ]
        );
        // A span's time is its end; a record without one has the file's time.
        let times: Vec<_> = responses(&s).into_iter().map(|r| r.2).collect();
        assert!(times.contains(&Some(1_775_934_264_967)), "{times:?}");
        assert!(times.iter().all(Option::is_some));
    }

    /// Records of one trace lend a record without a model or session theirs (`session.id`
    /// before `gen_ai.conversation.id`, as ccusage picks); an inference log with no chat span
    /// is counted, and an agent span of another trace too; a line that is not JSON is a note.
    #[test]
    fn a_trace_lends_its_model_and_session() {
        let dir = std::env::temp_dir().join(format!("insights-copilot-{}", std::process::id()));
        let otel = dir.join(".copilot/otel");
        std::fs::create_dir_all(&otel).unwrap();
        std::fs::write(
            otel.join("x.jsonl"),
            concat!(
                r#"{"type":"span","traceId":"t1","spanId":"a","name":"invoke_agent x","attributes":{"gen_ai.request.model":"gpt-5","gen_ai.conversation.id":"c1","session.id":"s1"}}"#,
                "\n",
                r#"{"hrTime":[1775934263,0],"spanContext":{"traceId":"t1"},"attributes":{"event.name":"gen_ai.client.inference.operation.details","gen_ai.usage.input_tokens":"7","gen_ai.usage.output_tokens":3}}"#,
                "\n",
                r#"{"type":"span","traceId":"t2","spanId":"b","name":"invoke_agent y","startTime":[1775934200,0],"attributes":{"gen_ai.usage.output_tokens":4}}"#,
                "\nnot json \"attributes\"\n",
            ),
        )
        .unwrap();
        let s = read(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        let got = responses(&s);
        assert_eq!(
            got,
            vec![
                (
                    "t2".into(),
                    "unknown".into(),
                    Some(1_775_934_200_000),
                    tokens(0, 4, 0, 0)
                ),
                (
                    "s1".into(),
                    "gpt-5".into(),
                    Some(1_775_934_263_000),
                    tokens(7, 3, 0, 0)
                ),
            ]
        );
        assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
        assert!(s.errors[0].contains("x.jsonl:4:"), "{}", s.errors[0]);
    }
}
