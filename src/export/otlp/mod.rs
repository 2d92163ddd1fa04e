//! `--to otlp`: OpenTelemetry GenAI traces (issue 45, part 2).
//!
//! Each input is reduced as `insights reduce` reduces it ([`crate::reduce::read_source`] into
//! a [`Reducer`] of its own), and the turns that ended become spans ([`spans`]): the spans are
//! built from the reducer's turns tree, entries and totals, never from the events again. They
//! go out in batches of at most [`BATCH_SPANS`] spans, each an `ExportTraceServiceRequest`
//! ([`proto`]) with one resource and one scope:
//!
//! * by default as OTLP/JSON on standard output, one request a line, the format of the
//!   Collector's OTLP JSON file receiver (`otlpjsonfile`);
//! * with `--endpoint URL` (or `OTEL_EXPORTER_OTLP_ENDPOINT` set) as OTLP/HTTP protobuf to
//!   `URL/v1/traces` ([`http`]), retried as the OTLP specification says; a batch that cannot
//!   be sent ends the export with an error (exit status 2).
//!
//! The resource is `service.name` (`OTEL_SERVICE_NAME`, else `insights`) and the attributes of
//! `OTEL_RESOURCE_ATTRIBUTES`.

pub mod http;
pub mod proto;
pub mod spans;

use super::Args;
use crate::diag::Diag;
use crate::input::Source;
use crate::reduce::state::State;
use crate::reduce::{Fed, Reducer};
use anyhow::{bail, Context as _};
use proto::{
    AnyValue, ExportTraceServiceRequest, InstrumentationScope, KeyValue, Resource, ResourceSpans,
    ScopeSpans, Span, Value,
};
use std::io::Write;

/// The semantic conventions followed: the version's schema URL, on every request.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.41.0";

/// Spans per request at most: the OpenTelemetry SDKs' default batch
/// (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`).
pub const BATCH_SPANS: usize = 512;

/// The sessions a reducer keeps at least: when it holds more than [`LET_GO_AT`], all but the
/// [`KEEP`] that changed last are exported and let go ([`spans::Exporter::let_go`]), so that
/// one file of thousands of sessions is held a few hundred sessions at a time, not whole. A
/// session let go that comes back keeps its turns' ids; read whole, it would also keep what
/// its earlier events left (its model, its open calls), so this many sessions interleaved
/// are read exactly.
const KEEP: usize = 256;

/// See [`KEEP`].
const LET_GO_AT: usize = 2 * KEEP;

/// Events fed between two looks at the number of sessions.
const CHECK_EVERY: u64 = 256;

/// Where requests go.
pub trait Sink {
    fn send(&mut self, req: &ExportTraceServiceRequest) -> anyhow::Result<()>;
    /// Writes what is buffered.
    fn flush(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// OTLP/JSON lines, written by the program's writer ([`crate::json_writer`]: serde_json's
/// text, with its string escaping several times as fast) into a buffer kept from request to
/// request, then written out whole.
pub struct JsonLines<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> JsonLines<W> {
    pub fn new(out: W) -> Self {
        JsonLines {
            out,
            buf: Vec::new(),
        }
    }
}

impl<W: Write> Sink for JsonLines<W> {
    fn send(&mut self, req: &ExportTraceServiceRequest) -> anyhow::Result<()> {
        self.buf.clear();
        crate::json_writer::write(&mut self.buf, req).context("cannot write a request")?;
        self.buf.push(b'\n');
        self.out
            .write_all(&self.buf)
            .context("cannot write to standard output")
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        self.out.flush().context("cannot write to standard output")
    }
}

impl Sink for http::Sender {
    fn send(&mut self, req: &ExportTraceServiceRequest) -> anyhow::Result<()> {
        http::Sender::send(self, req)
    }
}

/// What an export did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    pub turns: u64,
    pub spans: u64,
    pub requests: u64,
}

/// `insights export --to otlp`: reduces `sources` and sends the spans of their ended turns.
pub fn run(
    args: &Args,
    sources: &[Source],
    opts: &crate::convert::Options,
    diag: &mut Diag,
) -> anyhow::Result<Stats> {
    let env = |k: &str| std::env::var(k).ok();
    let endpoint = http::Endpoint::configure(args.endpoint.as_deref(), &env)?;
    let span_opts = spans::Options {
        content: args.content,
        redact: args.redact,
    };
    let resource = resource(&env)?;
    match endpoint {
        Some(e) => {
            let mut sender = http::Sender::new(e);
            let stats = export(sources, opts, diag, span_opts, resource, &mut sender)?;
            if sender.rejected > 0 {
                bail!(
                    "the endpoint rejected {} of {} spans",
                    sender.rejected,
                    stats.spans
                );
            }
            Ok(stats)
        }
        None => {
            let mut out = JsonLines::new(std::io::BufWriter::new(std::io::stdout().lock()));
            let stats = export(sources, opts, diag, span_opts, resource, &mut out)?;
            out.flush()?;
            Ok(stats)
        }
    }
}

/// Reduces each source as `insights reduce` reduces it, and hands the spans of its ended
/// turns to `sink` in batches.
///
/// Each source (a file, standard input, or a Claude Code session with its subagents' files)
/// has a reducer of its own, dropped once its spans are made: the memory is that of the
/// largest input, not of them all (a fleet machine's thousands of session files). Within an
/// input, sessions are let go past [`LET_GO_AT`] ([`KEEP`]), so one file of thousands of
/// sessions is not held whole either. The ids do not depend on it: a session read again, in
/// the same file or another, has the same ids.
pub fn export(
    sources: &[Source],
    opts: &crate::convert::Options,
    diag: &mut Diag,
    span_opts: spans::Options,
    resource: Resource,
    sink: &mut dyn Sink,
) -> anyhow::Result<Stats> {
    let mut stats = Stats::default();
    let mut batch = Batch {
        resource,
        spans: Vec::with_capacity(BATCH_SPANS),
        requests: 0,
    };
    for src in sources {
        let mut red = Reducer::new(State::new(), None);
        let mut exporter = spans::Exporter::default();
        let mut fed = 0u64;
        let mut each = |red: &mut Reducer, _: Fed| -> anyhow::Result<()> {
            fed += 1;
            if fed % CHECK_EVERY == 0 && red.state.tree.sessions.len() > LET_GO_AT {
                exporter.let_go(&mut red.state, KEEP, &span_opts, &mut batch.spans)?;
                batch.flush(sink, false)?;
            }
            Ok(())
        };
        crate::reduce::read_source(src, opts, diag, &mut red, &mut each)?;
        exporter.ended_turns(&red.state, &span_opts, &mut batch.spans);
        stats.turns += exporter.turns;
        stats.spans += exporter.spans;
        batch.flush(sink, false)?;
        if crate::signals::caught().is_some() {
            break;
        }
    }
    batch.flush(sink, true)?;
    stats.requests = batch.requests;
    Ok(stats)
}

/// The OTLP target of `insights export --to otlp --db PATH --all`: the stored events, as
/// lines, fed to one reducer; the spans of the turns that ended are made and sent as their
/// sessions are let go ([`KEEP`]) and at the end.
///
/// Without `--all` it refuses: the store's cursor moves by events, and a turn begun before it
/// would come back as its tail alone, a turn of its own (another index, so other ids) with
/// part of its calls. `--all` reads every stored event again, and the ids make the same spans.
/// Files (no `--db`) are read by [`run`].
pub fn target(args: &Args, out: Box<dyn Write>) -> anyhow::Result<Box<dyn super::Target>> {
    if args.db.is_some() && !args.all {
        bail!(
            "--to otlp --db exports whole turns only: add --all (every stored event again; \
             the span ids are the same, so a backend keeps one copy), or give the files"
        );
    }
    let env = |k: &str| std::env::var(k).ok();
    let sink: Box<dyn Sink> = match http::Endpoint::configure(args.endpoint.as_deref(), &env)? {
        Some(e) => Box::new(http::Sender::new(e)),
        None => Box::new(JsonLines::new(std::io::BufWriter::new(out))),
    };
    Ok(Box::new(Lines {
        red: Reducer::new(State::new(), None),
        exporter: spans::Exporter::default(),
        fed: 0,
        span_opts: spans::Options {
            content: args.content,
            redact: args.redact,
        },
        batch: Batch {
            resource: resource(&env)?,
            spans: Vec::new(),
            requests: 0,
        },
        sink,
    }))
}

/// Event lines into a reducer, spans as sessions are let go and at the end ([`target`]).
struct Lines {
    red: Reducer,
    exporter: spans::Exporter,
    /// Events fed.
    fed: u64,
    span_opts: spans::Options,
    batch: Batch,
    sink: Box<dyn Sink>,
}

impl super::Target for Lines {
    fn event(&mut self, line: &str) -> anyhow::Result<()> {
        let mut ev = crate::reduce::view::Ev::default();
        // The store keeps InsightsEvents it read; one it cannot read is left out of the state
        // as `insights reduce` leaves it out.
        if ev.read(line).is_ok() {
            self.red.feed(&mut ev);
            self.fed += 1;
            if self.fed % CHECK_EVERY == 0 && self.red.state.tree.sessions.len() > LET_GO_AT {
                self.exporter.let_go(
                    &mut self.red.state,
                    KEEP,
                    &self.span_opts,
                    &mut self.batch.spans,
                )?;
                self.batch.flush(self.sink.as_mut(), false)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, diag: &mut Diag) -> anyhow::Result<()> {
        let exporter = &mut self.exporter;
        exporter.ended_turns(&self.red.state, &self.span_opts, &mut self.batch.spans);
        self.batch.flush(self.sink.as_mut(), true)?;
        self.sink.flush()?;
        diag.note(&format!(
            "{} turns, {} spans, {} requests",
            exporter.turns, exporter.spans, self.batch.requests
        ));
        Ok(())
    }
}

/// Spans waiting to be sent.
struct Batch {
    resource: Resource,
    spans: Vec<Span>,
    requests: u64,
}

impl Batch {
    /// Sends the spans in requests of [`BATCH_SPANS`]; the last, shorter one only at the end.
    fn flush(&mut self, sink: &mut dyn Sink, end: bool) -> anyhow::Result<()> {
        while self.spans.len() >= BATCH_SPANS || (end && !self.spans.is_empty()) {
            let n = self.spans.len().min(BATCH_SPANS);
            let rest = self.spans.split_off(n);
            let spans = std::mem::replace(&mut self.spans, rest);
            sink.send(&self.request(spans))?;
            self.requests += 1;
        }
        Ok(())
    }

    fn request(&self, spans: Vec<Span>) -> ExportTraceServiceRequest {
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(self.resource.clone()),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "insights".to_owned(),
                        version: env!("CARGO_PKG_VERSION").to_owned(),
                    }),
                    spans,
                    schema_url: SCHEMA_URL.to_owned(),
                }],
                schema_url: SCHEMA_URL.to_owned(),
            }],
        }
    }
}

/// The resource of every span: the attributes of `OTEL_RESOURCE_ATTRIBUTES`, and
/// `service.name` from `OTEL_SERVICE_NAME`, else from those attributes, else `insights`.
pub fn resource(env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<Resource> {
    let mut attrs: Vec<(String, String)> = match env("OTEL_RESOURCE_ATTRIBUTES") {
        Some(v) => key_values(&v).context("in OTEL_RESOURCE_ATTRIBUTES")?,
        None => Vec::new(),
    };
    let service = env("OTEL_SERVICE_NAME").filter(|s| !s.trim().is_empty());
    match (service, attrs.iter().position(|(k, _)| k == "service.name")) {
        (Some(s), Some(i)) => attrs[i].1 = s,
        (Some(s), None) => attrs.insert(0, ("service.name".to_owned(), s)),
        (None, Some(_)) => {}
        (None, None) => attrs.insert(0, ("service.name".to_owned(), "insights".to_owned())),
    }
    Ok(Resource {
        attributes: attrs
            .into_iter()
            .map(|(key, v)| KeyValue {
                key,
                value: Some(AnyValue {
                    value: Some(Value::StringValue(v)),
                }),
            })
            .collect(),
    })
}

/// The `key=value,key=value` lists of `OTEL_RESOURCE_ATTRIBUTES` and
/// `OTEL_EXPORTER_OTLP_HEADERS` (W3C Baggage without properties): keys and values trimmed,
/// values percent-decoded; a later key replaces an earlier one.
pub fn key_values(text: &str) -> anyhow::Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for item in text.split(',').filter(|i| !i.trim().is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            bail!("{item:?} is not key=value");
        };
        let k = k.trim();
        if k.is_empty() {
            bail!("{item:?} has no key");
        }
        let v = percent_decode(v.trim()).with_context(|| format!("the value of {k}"))?;
        out.retain(|(o, _)| o != k);
        out.push((k.to_owned(), v));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> anyhow::Result<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(byte) => out.push(byte),
                None => bail!("{s:?}: a % not followed by two hex digits"),
            }
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).with_context(|| format!("{s:?} is not UTF-8 once decoded"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_from_environment() {
        let vars = |k: &str| match k {
            "OTEL_RESOURCE_ATTRIBUTES" => Some("team=a%2Cb, host.name = m1".to_owned()),
            _ => None,
        };
        let r = resource(&vars).unwrap();
        let pairs: Vec<_> = r
            .attributes
            .iter()
            .map(|kv| match &kv.value {
                Some(AnyValue {
                    value: Some(Value::StringValue(s)),
                }) => (kv.key.as_str(), s.as_str()),
                _ => panic!("not a string"),
            })
            .collect();
        assert_eq!(
            pairs,
            [
                ("service.name", "insights"),
                ("team", "a,b"),
                ("host.name", "m1")
            ]
        );
        let vars = |k: &str| match k {
            "OTEL_SERVICE_NAME" => Some("ci".to_owned()),
            "OTEL_RESOURCE_ATTRIBUTES" => Some("service.name=x".to_owned()),
            _ => None,
        };
        let r = resource(&vars).unwrap();
        assert_eq!(r.attributes.len(), 1);
        assert!(key_values("a").is_err());
        assert!(key_values("a=%zz").is_err());
    }

    /// The spans of every request a sink was sent, as JSON.
    struct Collect(std::rc::Rc<std::cell::RefCell<Vec<String>>>);

    impl Sink for Collect {
        fn send(&mut self, req: &ExportTraceServiceRequest) -> anyhow::Result<()> {
            for rs in &req.resource_spans {
                for ss in &rs.scope_spans {
                    for sp in &ss.spans {
                        self.0.borrow_mut().push(serde_json::to_string(sp)?);
                    }
                }
            }
            Ok(())
        }
    }

    /// A session of one turn (`turn` in the session `s`), with a model request and a call.
    fn turn_lines(s: usize, turn: usize, seq: &mut u64, out: &mut Vec<String>) {
        let sid = format!("s{s}");
        let t = |k: u64| format!("2026-12-06T05:{:02}:{:02}.000Z", (s / 60) % 60, k);
        let mut line = |body: String| {
            *seq += 1;
            out.push(format!(
                r#"{{"id":"{sid}:{turn}:{seq}","seq":{seq},"timestamp":"{}","provider":"claude","sessionId":"{sid}",{body}}}"#,
                t(*seq % 60)
            ));
        };
        line(r#""event":"turn_start""#.to_owned());
        line(format!(
            r#""event":"text","text":"hi","kind":"text","model":"claude-opus-4-8","messageId":"m{turn}""#
        ));
        line(format!(
            r#""event":"tool_invocation","callId":"c{turn}","toolName":"Bash","input":{{}},"model":"claude-opus-4-8","messageId":"m{turn}""#
        ));
        line(format!(
            r#""event":"tool_completion","callId":"c{turn}","isError":false,"result":"ok""#
        ));
        // The cost a turn reports is the session's so far: a session let go and come back
        // no longer knows its earlier turns' (the one limit of letting go), so only the
        // first turn reports one here.
        let cost = if turn == 1 { r#","costUsd":0.01"# } else { "" };
        line(format!(
            r#""event":"turn_complete","isError":false,"subtype":"success"{cost}"#
        ));
    }

    #[test]
    fn a_log_of_many_sessions_is_let_go_with_the_same_spans_and_ids() {
        // Three times LET_GO_AT sessions of one turn, then the first one's second turn: it
        // comes back after it was let go, and its turn has the ids of a whole read.
        let mut lines = Vec::new();
        let mut seq = 0;
        let n = 3 * LET_GO_AT;
        for s in 0..n {
            turn_lines(s, 1, &mut seq, &mut lines);
        }
        turn_lines(0, 2, &mut seq, &mut lines);
        let opts = spans::Options::default();

        // Read whole: one reducer, the spans at the end.
        let mut red = Reducer::new(State::new(), None);
        for l in &lines {
            let mut ev = crate::reduce::view::Ev::default();
            ev.read(l).unwrap();
            red.feed(&mut ev);
        }
        let mut whole = Vec::new();
        spans::Exporter::default().ended_turns(&red.state, &opts, &mut whole);
        let mut whole: Vec<String> = whole
            .iter()
            .map(|sp| serde_json::to_string(sp).unwrap())
            .collect();

        let got = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut target = Lines {
            red: Reducer::new(State::new(), None),
            exporter: spans::Exporter::default(),
            fed: 0,
            span_opts: opts,
            batch: Batch {
                resource: resource(&|_| None).unwrap(),
                spans: Vec::new(),
                requests: 0,
            },
            sink: Box::new(Collect(got.clone())),
        };
        use crate::export::Target as _;
        for l in &lines {
            target.event(l).unwrap();
            // Never more sessions than the limit and one check's worth of new ones.
            assert!(target.red.state.tree.sessions.len() <= LET_GO_AT + CHECK_EVERY as usize);
        }
        target.finish(&mut crate::diag::Diag::new(false)).unwrap();
        assert!(
            target.red.state.tree.sessions.len() < n / 2,
            "sessions were let go"
        );
        let mut got = got.borrow().clone();
        assert_eq!(
            got.len(),
            (n + 1) * 3,
            "an agent, a chat and a tool span a turn"
        );
        whole.sort();
        got.sort();
        let only = |a: &[String], b: &[String]| {
            a.iter()
                .filter(|x| b.binary_search(x).is_err())
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(only(&got, &whole), only(&whole, &got));
    }
}
