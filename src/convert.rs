//! The default command: provider output in, InsightsEvent JSONL out, line by line.

use crate::cli::{Compat, Config, ConvertArgs};
use crate::compat;
use crate::detect::{self, Probe, Route};
use crate::diag::Diag;
use crate::event::{Body, Event, Extensions, Json, Pairs, RawEvent};
use crate::input::{Line, Source};
use crate::lines::SourceLines;
use crate::output::{FlushPolicy, Out};
use crate::providers::memo::{Forgot, Remember};
use crate::providers::{Cx, Memory, Provider, UNKNOWN};
use anyhow::Context;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, BufWriter, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

/// The convert command (`insights [FILE]...`): every input's lines converted to events on
/// standard output, with the exit status of docs/robustness.md.
pub fn run(args: &ConvertArgs, config: &Config) -> anyhow::Result<ExitCode> {
    let forced = crate::cli::forced(&args.from)?;
    let flush = config.flush(args.line_buffered, args.block_buffered);
    let opts = Options {
        forced,
        raw: args.raw,
        clock: !args.no_timestamp,
        flush,
        strict: args.strict,
        cc_insights: args.compat == Some(Compat::CcInsights),
        turn_ids: args.turn_ids,
        max_line: args.max_line_bytes,
    };
    // SIGINT, SIGTERM, SIGHUP end the run at a line boundary (src/signals.rs).
    crate::signals::install();
    let mut diag = Diag::new(config.color_err);
    let sources = crate::input::group_conversations(crate::input::expand_dirs(
        &crate::cli::sources(&args.files),
        &mut diag,
    ));
    // Only whole lines reach standard output, redacted with --redact (src/output.rs).
    let mut out = Out::new(crate::output::WholeLines::new(
        std::io::stdout().lock(),
        args.redact,
    ));
    let jobs = match args.jobs {
        Some(n) => usize::from(n),
        None => crate::parallel::default_jobs(&sources, flush),
    };
    // A conversation in several files is merged line by line on one thread.
    let jobs = if sources.iter().any(Source::is_group) {
        1
    } else {
        jobs
    };
    let stats = if jobs > 1 {
        let mut par = crate::parallel::Parallel::new(&opts, jobs);
        for src in &sources {
            par.run_source(src, &mut out, &mut diag)?;
            if par.stats.stopped || crate::signals::caught().is_some() {
                break;
            }
        }
        std::mem::take(&mut par.stats)
    } else {
        let mut conv = Converter::new(&opts, &mut out);
        for src in &sources {
            conv.run_source(src, &mut diag)?;
            if conv.stats.stopped || crate::signals::caught().is_some() {
                break;
            }
        }
        std::mem::take(&mut conv.stats)
    };
    out.flush().context("cannot write to standard output")?;
    if !stats.dropped.is_empty() {
        let parts: Vec<String> = stats
            .dropped
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let total: u64 = stats.dropped.values().sum();
        diag.note(&format!(
            "--compat cc-insights dropped {total} events with no CC-Insights type ({})",
            parts.join(", ")
        ));
    }
    Ok(diag.exit_code())
}

/// Everything the converter needs to know, resolved once from the command line.
#[derive(Clone)]
pub struct Options {
    /// `--from NAME`; `None` detects each line.
    pub forced: Option<&'static Provider>,
    /// `--raw`: attach the input line to every event.
    pub raw: bool,
    /// Stamp events whose line carries no time with the time it was read.
    pub clock: bool,
    pub flush: FlushPolicy,
    /// `--strict`: stop at the first unreadable line.
    pub strict: bool,
    /// `--compat cc-insights`.
    pub cc_insights: bool,
    /// `--turn-ids`: name the turn of every event of a turn ([`crate::providers::turns::Named`]).
    pub turn_ids: bool,
    pub max_line: usize,
}

#[cfg(test)]
impl Options {
    /// Detection, no clock, block-buffered, lines up to `max_line` bytes: what unit tests use.
    pub fn for_tests(max_line: usize) -> Options {
        Options {
            forced: None,
            raw: false,
            clock: false,
            flush: FlushPolicy::Block,
            strict: false,
            cc_insights: false,
            turn_ids: false,
            max_line,
        }
    }
}

/// What a run saw, for the exit status and the closing notes.
#[derive(Default, Debug)]
pub struct Stats {
    pub lines: u64,
    pub events: u64,
    pub raw_events: u64,
    /// Events `--compat` dropped, by type.
    pub dropped: BTreeMap<&'static str, u64>,
    /// `--strict` stopped the run.
    pub stopped: bool,
    /// Lines given to a provider's converter, and those of them that became `raw` events
    /// (for the warning of [`end_input`]).
    pub provider_lines: u64,
    pub provider_raw: u64,
    /// Remembered entries forgotten to stay within the caps, since the last [`end_input`].
    pub forgot: Forgot,
}

/// `--from PROVIDER` is taken to be wrong for an input when more than half of the lines given
/// to the provider's converter become `raw` events, and there are at least this many.
pub const WRONG_FROM_MIN_LINES: u64 = 10;

/// Whether `raw` lines of `lines` are most of them (more than half): the input is not what
/// the converter was asked to read. `convert` warns so (with [`WRONG_FROM_MIN_LINES`]), and
/// `validate`'s rule `mostly-raw` fails the log.
pub fn mostly_raw(lines: u64, raw: u64) -> bool {
    raw > lines / 2
}

/// The message for a line of `len` bytes over the `--max-line-bytes` limit `max`, with a limit
/// that would take it: the power of two at or above `len`, in the unit `--max-line-bytes`
/// reads (`128M`).
pub fn too_long(len: u64, max: usize) -> String {
    let fit = len.max(1).checked_next_power_of_two().unwrap_or(len);
    let unit = [(30, "G"), (20, "M"), (10, "K")]
        .into_iter()
        .find(|&(shift, _)| fit >= 1 << shift && fit % (1 << shift) == 0);
    let suggested = match unit {
        Some((shift, u)) => format!("{}{u}", fit >> shift),
        None => fit.to_string(),
    };
    format!(
        "line is {len} bytes, over the limit of {max} (raise it with --max-line-bytes {suggested})"
    )
}

/// The end of one input read to its end: the count of its unreadable lines not shown
/// ([`Diag::end_input`]), what the converter forgot to stay within its caps (`forgot`, one
/// note at the line where forgetting began: the same on any number of threads), and a
/// warning when `--from` turned most of its lines into `raw` events (`lines` given to the
/// converter, `raw` of them raw; see [`WRONG_FROM_MIN_LINES`]).
pub fn end_input(
    opts: &Options,
    name: &str,
    lines: u64,
    raw: u64,
    forgot: Forgot,
    diag: &mut Diag,
) {
    diag.end_input(name);
    if let Some(first) = forgot.first_line {
        diag.note_line(
            name,
            first,
            &format!(
                "forgot {} remembered requests or calls from here on, the oldest first, to keep \
                 at most {} of each kind; their answers or ends say less",
                forgot.count,
                crate::providers::memo::Memo::<()>::CAP
            ),
        );
    }
    if let Some(p) = opts.forced {
        if lines >= WRONG_FROM_MIN_LINES && mostly_raw(lines, raw) {
            diag.warning(
                name,
                &format!(
                    "{raw} of {lines} lines did not convert as {0} output and fell back to raw; \
                     is --from {0} right?",
                    p.name
                ),
            );
        }
    }
}

/// The output side of conversion: numbers, stamps and writes events.
pub struct Converter<'o, W: Write> {
    opts: &'o Options,
    out: &'o mut Out<W>,
    seq: u64,
    detector: detect::Detector,
    /// What the providers remember of the stream (taken by each line's [`Cx`]).
    memory: Option<Box<Memory>>,
    marks: Option<Marks<W>>,
    clock: crate::time::Clock,
    /// Where events go instead of `out`, when set ([`Converter::tap`]).
    tap: Option<Tap<'o>>,
    /// The allocation of the last line's events, for the next line's ([`recycle`]).
    spare: Vec<(Body<'static>, Extensions<'static>)>,
    /// The buffer the ids of a line's events are written in, kept from line to line.
    ids: String,
    /// The client's id of the command that made the lines being converted (`insights run`),
    /// written on their events as `insights.commandId`.
    pub command_id: Option<String>,
    /// The input is live (a pipe or a terminal, or a file followed, read line by line): a
    /// prompt held for its session is let go when no further line is there to read
    /// ([`crate::providers::held`]).
    live: bool,
    /// With `--turn-ids`, the open turn of each session.
    turns: Option<crate::providers::turns::Named>,
    pub stats: Stats,
}

/// `v` emptied, as a vector for another lifetime in the same allocation: std collects in
/// place when the element types have one layout, as `Body<'a>` and `Body<'b>` do. Saves an
/// allocation per line.
// `filter` would keep the element type, and with it the old lifetime.
#[allow(clippy::unnecessary_filter_map)]
fn recycle<'b>(mut v: Vec<(Body<'_>, Extensions<'_>)>) -> Vec<(Body<'b>, Extensions<'b>)> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

/// Takes each event the converter makes, in place of writing it.
pub type Tap<'o> = &'o mut (dyn FnMut(&Event<'_>) -> io::Result<()> + 'o);

/// Chunk mode: where each event's `seq` digits start in the chunk's output.
struct Marks<W: Write> {
    at: Vec<usize>,
    written: fn(&BufWriter<W>) -> &[u8],
}

/// What a converter remembers across lines (see [`detect::Detector`] and
/// [`crate::providers::memo`]): what `--jobs` hands from one chunk to the next.
///
/// The memory is shared: a chunk's end state is the next chunk's guess, its own state the
/// writer's, and the start it was converted from is kept to check the guess; a memory can
/// hold thousands of entries, copied only when a converter starts from it
/// ([`Converter::set_state`]).
#[derive(Clone, Default)]
pub struct StreamState {
    pub last_jsonrpc: Option<&'static Provider>,
    /// The Claude-like provider the stream named ([`detect::Detector`] rule 2c); the outer
    /// `None` in an own state: no line of the part named one.
    pub dialect: Option<Option<(&'static Provider, String)>>,
    pub memory: Arc<Memory>,
}

impl StreamState {
    /// The state after a part of the stream that set `self` itself (the own state of
    /// [`Converter::take_states`]) and started from `before`.
    pub fn after(&self, before: StreamState) -> StreamState {
        StreamState {
            last_jsonrpc: self.last_jsonrpc.or(before.last_jsonrpc),
            dialect: self.dialect.clone().or(before.dialect),
            memory: Arc::new(self.memory.after(Arc::unwrap_or_clone(before.memory))),
        }
    }

    /// Whether a part of the stream converted from `guess`, which left `own`
    /// ([`Converter::take_states`]) and `depended` ([`Converter::depended_on_start`]), must be
    /// converted again from `actual`, the state it really starts from.
    pub fn stale(&self, depended: bool, guess: &StreamState, actual: &StreamState) -> bool {
        fn basics(s: &StreamState) -> (Option<&str>, Option<(&str, &str)>) {
            (
                s.last_jsonrpc.map(|p| p.name),
                s.dialect
                    .as_ref()
                    .and_then(Option::as_ref)
                    .map(|(p, s)| (p.name, s.as_str())),
            )
        }
        (depended && basics(guess) != basics(actual))
            || self.memory.stale(&guess.memory, &actual.memory)
    }
}

impl<'o, W: Write> Converter<'o, W> {
    pub fn new(opts: &'o Options, out: &'o mut Out<W>) -> Self {
        Converter {
            opts,
            out,
            seq: 0,
            detector: detect::Detector::default(),
            memory: None,
            marks: None,
            clock: Default::default(),
            tap: None,
            spare: Vec::new(),
            ids: String::new(),
            command_id: None,
            live: false,
            turns: opts.turn_ids.then(Default::default),
            stats: Stats::default(),
        }
    }

    /// Hands each event made from provider output to `f` instead of writing it (`reduce`
    /// reads them so, without their JSON). Lines passed through are still written to `out`.
    pub fn tap(&mut self, f: Tap<'o>) {
        self.tap = Some(f);
    }

    /// The output the events are written to (a subcommand reading them back empties it).
    pub fn out(&mut self) -> &mut Out<W> {
        self.out
    }

    /// Converts every line of one input. I/O errors on the output end the run (`Err`);
    /// a failure to read the input is reported and ends only this input.
    pub fn run_source(&mut self, src: &Source, diag: &mut Diag) -> anyhow::Result<()> {
        let name = src.name();
        let Some(lines) = src.lines_or_report(self.opts.max_line, diag) else {
            return Ok(());
        };
        self.live = !src.is_group() && src.regular_file_len().is_none();
        let result = self.run_lines(lines, &name, diag);
        self.live = false;
        result
    }

    /// Reads the inputs from here on as live ones (`replay --follow`'s file, which its
    /// writer is still writing): a prompt held for its session is let go when no further
    /// line is there to read ([`crate::providers::held`]). [`Converter::run_source`] tells
    /// for itself.
    pub fn set_live(&mut self, live: bool) {
        self.live = live;
    }

    pub fn run_reader<'r>(
        &mut self,
        reader: impl Read + Send + 'r,
        name: &str,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        let lines = SourceLines::one(Box::new(reader), name.to_owned(), self.opts.max_line);
        self.run_lines(lines, name, diag)
    }

    /// Converts every line of `rdr`; `name` is the input's (a group's first file), each
    /// line's diagnostics name the file it came from.
    fn run_lines(
        &mut self,
        mut rdr: SourceLines<'_>,
        name: &str,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        let mut buf = Vec::with_capacity(64 * 1024);
        let (lines, raw) = (self.stats.provider_lines, self.stats.provider_raw);
        let mut stopped = false;
        loop {
            let line = match rdr.next_line(&mut buf) {
                Ok(Some(l)) => l,
                Ok(None) => break,
                Err(e) => {
                    diag.io_error(rdr.name(), &e);
                    break;
                }
            };
            if !self.input_line(
                line,
                &buf,
                rdr.lineno(),
                rdr.unterminated(),
                rdr.name(),
                diag,
            )? {
                stopped = true;
                break;
            }
            let more = rdr.has_buffered_line();
            // Reading on would wait for a live writer: a prompt held for its session goes now
            // (not when the output waits for the end anyway, `--block-buffered`).
            if self.live && !more && self.opts.flush != FlushPolicy::Block {
                self.let_go(name, diag)
                    .context("cannot write to standard output")?;
            }
            if self.opts.flush.flush_now(more) {
                self.out
                    .flush()
                    .context("cannot write to standard output")?;
            }
        }
        if stopped {
            diag.end_input(name);
        } else {
            self.close_input(rdr.lineno(), rdr.name(), diag)
                .context("cannot write to standard output")?;
            let lines = self.stats.provider_lines - lines;
            let forgot = self.forgotten();
            end_input(
                self.opts,
                name,
                lines,
                self.stats.provider_raw - raw,
                forgot,
                diag,
            );
        }
        Ok(())
    }

    /// The end of an input read to its end, whose last line was `lineno`: each provider's
    /// [`Provider::at_end`] ends what the input left open (the last turn of a Gemini CLI chat
    /// file), its events numbered and written after the input's. Once per input, not per
    /// line; nothing to do when no line has left anything in the memory.
    pub fn close_input(&mut self, lineno: u64, name: &str, diag: &mut Diag) -> io::Result<()> {
        self.let_go(name, diag)?;
        for p in crate::providers::PROVIDERS {
            self.close_input_of(p, lineno, name, diag)?;
        }
        Ok(())
    }

    /// The context of what the end of an input (its last line `lineno`) writes: no line of
    /// its own, the stream's memory.
    fn end_cx<'a>(&mut self, lineno: u64) -> Cx<'a> {
        Cx {
            line: lineno,
            memory: self.memory.take(),
            events: recycle(std::mem::take(&mut self.spare)),
            ..Cx::default()
        }
    }

    /// [`Converter::close_input`] for one provider; the number of events it wrote.
    pub fn close_input_of(
        &mut self,
        p: &'static Provider,
        lineno: u64,
        name: &str,
        diag: &mut Diag,
    ) -> io::Result<u64> {
        let Some(at_end) = p.at_end else {
            return Ok(0);
        };
        let before = self.stats.events;
        // Each call ends one session's open part and forgets it: at most as many calls as a
        // memo holds entries.
        for _ in 0..=crate::providers::memo::Memo::<()>::CAP {
            if self.memory.is_none() {
                break;
            }
            let mut cx = self.end_cx(lineno);
            at_end(&mut cx);
            if p.infers_turns && !cx.own_turns {
                crate::providers::turns::infer(&mut cx);
            }
            self.memory = cx.memory.take();
            if cx.events.is_empty() {
                self.spare = recycle(cx.events);
                break;
            }
            // No line of its own: the ids are the anchor's, and there is no `raw`.
            self.write_events("", lineno, p.name, cx, name, diag)?;
        }
        Ok(self.stats.events - before)
    }

    /// One line as a [`crate::input::LineReader`] returned it. I/O errors on the output are `Err`;
    /// `Ok(false)` when `--strict` stops the run at this line.
    pub fn input_line(
        &mut self,
        line: Line,
        bytes: &[u8],
        lineno: u64,
        unterminated: bool,
        name: &str,
        diag: &mut Diag,
    ) -> anyhow::Result<bool> {
        self.stats.lines += 1;
        let ok = match line {
            Line::TooLong { len } => {
                diag.bad_line(name, lineno, None, &too_long(len, self.opts.max_line));
                false
            }
            Line::Ok => self
                .line(bytes, lineno, unterminated, name, diag)
                .context("cannot write to standard output")?,
        };
        if !ok && self.opts.strict {
            self.stats.stopped = true;
            return Ok(false);
        }
        Ok(true)
    }

    /// What the lines converted so far set of the stream's state themselves, whatever
    /// state the converter started with (the state they leave is this
    /// [`StreamState::after`] the state before them), and the state they leave: both share
    /// the memory, which is moved out of the converter, not copied.
    pub fn take_states(&mut self) -> (StreamState, StreamState) {
        let memory = Arc::new(self.memory.take().map(|m| *m).unwrap_or_default());
        let own = StreamState {
            last_jsonrpc: self.detector.last_jsonrpc.filter(|_| self.detector.named),
            dialect: self
                .detector
                .dialect_named
                .then(|| self.detector.dialect.clone()),
            memory: Arc::clone(&memory),
        };
        let end = StreamState {
            last_jsonrpc: self.detector.last_jsonrpc,
            dialect: Some(self.detector.dialect.clone()),
            memory,
        };
        (own, end)
    }

    /// What the memory forgot to stay within its caps since the last call (polled once per
    /// input, not per line: the note comes at the end of the input).
    pub fn forgotten(&mut self) -> Forgot {
        if let Some(m) = self.memory.as_mut() {
            self.stats.forgot.add(m.forgotten());
        }
        std::mem::take(&mut self.stats.forgot)
    }

    /// The number of the last event numbered.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Numbers the next event `seq + 1` (`reduce --jobs` converts a line on the calling
    /// thread after lines its workers converted).
    pub fn set_seq(&mut self, seq: u64) {
        self.seq = seq;
    }

    /// Starts from what an earlier part of the stream left (`--jobs`), noting what the
    /// lines from here read of it ([`StreamState::stale`]).
    pub fn set_state(&mut self, st: StreamState) {
        self.detector.last_jsonrpc = st.last_jsonrpc;
        self.detector.dialect = st.dialect.flatten();
        // A copy only when the memory is shared (with the guess or the start kept).
        let mut memory = Box::new(Arc::unwrap_or_clone(st.memory));
        memory.begin(true);
        self.memory = Some(memory);
    }

    /// Whether the routing of a line so far depended on the state the converter started
    /// with: a JSON-RPC answer routed before any line named its provider, or a Claude-shaped
    /// line before any named the dialect. What the converters read of their memory, the
    /// memory itself tells ([`crate::providers::memo::Remember::stale`]).
    pub fn depended_on_start(&self) -> bool {
        self.detector.depended
    }

    /// Chunk mode (`--jobs`): notes where each event's `seq` digits start in the output.
    pub fn mark_seqs(&mut self, written: fn(&BufWriter<W>) -> &[u8]) {
        self.marks = Some(Marks {
            at: Vec::new(),
            written,
        });
    }

    /// The offsets noted since [`Converter::mark_seqs`].
    pub fn take_marks(&mut self) -> Vec<usize> {
        self.marks.take().map(|m| m.at).unwrap_or_default()
    }

    /// Writes an event (whose first members are `event`, `id`, `seq`).
    fn write_event(&mut self, ev: &Event) -> io::Result<()> {
        if let Some(tap) = &mut self.tap {
            return tap(ev);
        }
        let Some(m) = &mut self.marks else {
            return self.out.json_line(ev);
        };
        // Where the line starts in the chunk: what the buffer passed on and what it holds.
        let start = (m.written)(&self.out.w).len() + self.out.w.buffer().len();
        self.out.json_line(ev)?;
        // Before `seq` come only `event` and `id`, at least as long as their text (escapes
        // only lengthen it), and `,"` cannot occur inside a JSON string (its quote is
        // escaped): the first `,"seq":` from there is the member.
        let from = r#"{"event":"","id":""#.len() + ev.event.len() + ev.id.len();
        let at = self
            .out
            .last_line()
            .get(from..)
            .and_then(|rest| rest.windows(7).position(|w| w == b",\"seq\":"))
            .ok_or_else(|| io::Error::other("internal error: an event without seq"))?;
        m.at.push(start + from + at + 7);
        Ok(())
    }

    /// Writes an object with a member `seq` (passthrough, `--compat`).
    fn write_object<'m, K, V>(
        &mut self,
        members: impl IntoIterator<Item = (&'m K, &'m V)>,
    ) -> io::Result<()>
    where
        K: AsRef<str> + ?Sized + 'm,
        V: serde::Serialize + 'm,
    {
        let marks = &mut self.marks;
        self.out.object_line(members, |w| {
            if let Some(m) = marks {
                w.flush()?;
                m.at.push((m.written)(w).len());
            }
            Ok(())
        })
    }

    /// Converts one line; `Ok(false)` if it could not be read (reported on `diag`).
    pub fn line(
        &mut self,
        bytes: &[u8],
        lineno: u64,
        unterminated: bool,
        name: &str,
        diag: &mut Diag,
    ) -> io::Result<bool> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(true);
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let col = e.valid_up_to() as u64 + 1;
                let msg = if e.error_len().is_none() {
                    "invalid UTF-8: the line ends inside a character (truncated?)"
                } else {
                    "invalid UTF-8"
                };
                diag.bad_line(name, lineno, Some(col), msg);
                diag.binary_line();
                return Ok(false);
            }
        };
        // A NUL byte in a line that cannot be read: likely a binary file.
        let nul = || memchr::memchr(0, bytes).is_some();
        if let Some((col, msg)) = not_an_object(text) {
            diag.bad_line(name, lineno, Some(col), &msg);
            if nul() {
                diag.binary_line();
            }
            return Ok(false);
        }
        let mut probe = Probe::default();
        if let Err(e) = probe.fill(text) {
            let (col, msg) = crate::wire::json_problem(&e, unterminated);
            diag.bad_line(name, lineno, Some(col), &msg);
            if nul() {
                diag.binary_line();
            }
            return Ok(false);
        }
        self.probed_line(text, &probe, lineno, name, diag)
    }

    /// Converts a line that is a JSON object, whose probe the caller has read already.
    pub fn probed_line<'a>(
        &mut self,
        text: &'a str,
        probe: &Probe<'a>,
        lineno: u64,
        name: &str,
        diag: &mut Diag,
    ) -> io::Result<bool> {
        let route = self.route(probe);
        self.routed_line(text, probe, route, lineno, name, diag)
    }

    /// Where detection sends a line: the first step of [`Converter::probed_line`], for a
    /// caller that wants to know (`validate` counts lines by provider).
    pub fn route(&mut self, probe: &Probe) -> Route {
        self.detector.route(probe, self.opts.forced)
    }

    /// Converts a line that [`Converter::route`] has routed.
    pub fn routed_line<'a>(
        &mut self,
        text: &'a str,
        probe: &Probe<'a>,
        route: Route,
        lineno: u64,
        name: &str,
        diag: &mut Diag,
    ) -> io::Result<bool> {
        match route {
            Route::Passthrough => return self.passthrough(text, lineno, name, diag),
            Route::Provider(p) => {
                self.stats.provider_lines += 1;
                let mut cx = Cx {
                    line: lineno,
                    memory: self.memory.take(),
                    events: recycle(std::mem::take(&mut self.spare)),
                    ..Cx::default()
                };
                let result = convert_guarded(p, text, probe, &mut cx);
                // A prompt held for its session to write after this line's events.
                let mut after = None;
                if result.is_ok() {
                    if holds(p, &cx) {
                        return self.hold(p, text, lineno, cx, name, diag);
                    }
                    if cx.memory.as_mut().is_some_and(|m| m.held.is_some()) {
                        after = self.let_go_at(p, &mut cx, name, diag)?;
                    }
                    finish_line(p, &mut cx);
                }
                self.memory = cx.memory.take();
                match result {
                    Ok(()) => {
                        let ok = self.write_events(text, lineno, p.name, cx, name, diag)?;
                        if let Some((prompt, session)) = after {
                            self.let_go_prompt(&prompt, Some(&session), name, diag)?;
                        }
                        return Ok(ok);
                    }
                    Err(why) => {
                        self.stats.provider_raw += 1;
                        self.write_raw(text, lineno, p.name, why.0)?
                    }
                }
            }
            Route::Unknown => {
                let why = "no provider recognises this line (try --from)".to_string();
                self.write_raw(text, lineno, UNKNOWN, why)?
            }
        }
        Ok(true)
    }

    /// Holds the prompt line `text` (input line `lineno`), which `p` converted to `cx`'s events,
    /// until a line names its session ([`crate::providers::held`]); one held before is
    /// written as it was.
    fn hold(
        &mut self,
        p: &'static Provider,
        text: &str,
        lineno: u64,
        mut cx: Cx<'_>,
        name: &str,
        diag: &mut Diag,
    ) -> io::Result<bool> {
        let read_at = match &cx.timestamp {
            Some(_) => None,
            None => self.opts.clock.then(|| Arc::from(self.clock.now())),
        };
        let before = cx.memory().held.hold(crate::providers::held::Prompt {
            text: Arc::from(text),
            line: lineno,
            provider: p.name,
            read_at,
            command_id: self.command_id.as_deref().map(Arc::from),
        });
        self.memory = cx.memory.take();
        self.spare = recycle(cx.events);
        if let Some(b) = before {
            self.let_go_prompt(&b, None, name, diag)?;
        }
        Ok(true)
    }

    /// A prompt is held and `cx` holds the events of a line `p` converted: lets it go before
    /// them, named, when the line names its session and does not start with its
    /// `session_init` (as it was when `p` is not its provider); returns it with the session
    /// to write after them when the line does start so. Keeps it when the line names no
    /// session.
    fn let_go_at(
        &mut self,
        p: &'static Provider,
        cx: &mut Cx<'_>,
        name: &str,
        diag: &mut Diag,
    ) -> io::Result<Option<(Arc<crate::providers::held::Prompt>, String)>> {
        let same = cx.memory().held.provider() == Some(p.name);
        let session = cx.session_id.as_deref().unwrap_or("");
        if same && session.is_empty() {
            return Ok(None);
        }
        let session = session.to_owned();
        let Some(prompt) = cx.memory().held.take() else {
            return Ok(None);
        };
        if same && matches!(cx.events.first(), Some((Body::SessionInit(_), _))) {
            return Ok(Some((prompt, session)));
        }
        self.memory = cx.memory.take();
        let named = same.then_some(session.as_str());
        let written = self.let_go_prompt(&prompt, named, name, diag);
        cx.memory = self.memory.take();
        written.map(|_| None)
    }

    /// Writes the prompt held, if any, as it was (the end of an input, a live input that
    /// would wait); returns its provider.
    pub fn let_go(&mut self, name: &str, diag: &mut Diag) -> io::Result<Option<&'static str>> {
        let Some(m) = self.memory.as_mut() else {
            return Ok(None);
        };
        if !m.held.is_some() {
            return Ok(None);
        }
        match m.held.take() {
            Some(prompt) => {
                self.let_go_prompt(&prompt, None, name, diag)?;
                Ok(Some(prompt.provider))
            }
            None => Ok(None),
        }
    }

    /// Converts a prompt held again and writes its events, in `session` (`None`: as it was).
    fn let_go_prompt(
        &mut self,
        prompt: &crate::providers::held::Prompt,
        session: Option<&str>,
        name: &str,
        diag: &mut Diag,
    ) -> io::Result<()> {
        let Some(p) = crate::providers::by_name(prompt.provider) else {
            return Ok(());
        };
        let text: &str = &prompt.text;
        let mut probe = Probe::default();
        if probe.fill(text).is_err() {
            return Ok(()); // Not so: it was read before.
        }
        let mut cx = Cx {
            line: prompt.line,
            memory: self.memory.take(),
            events: recycle(std::mem::take(&mut self.spare)),
            ..Cx::default()
        };
        let result = convert_guarded(p, text, &probe, &mut cx);
        cx.session_id = session.map(Cow::Borrowed);
        if cx.timestamp.is_none() {
            cx.timestamp = prompt.read_at.as_deref().map(Cow::Borrowed);
        }
        if result.is_ok() {
            finish_line(p, &mut cx);
        }
        self.memory = cx.memory.take();
        // Its events name the command that sent it, not the one of the line that let it go.
        let by = std::mem::replace(
            &mut self.command_id,
            prompt.command_id.as_deref().map(str::to_owned),
        );
        let r = match result {
            Ok(()) => self
                .write_events(text, prompt.line, p.name, cx, name, diag)
                .map(|_| ()),
            Err(why) => self.write_raw(text, prompt.line, p.name, why.0),
        };
        self.command_id = by;
        r
    }

    /// Writes the events of a converted line; `Ok(false)` if they could not be (reported).
    fn write_events<'a>(
        &mut self,
        text: &'a str,
        lineno: u64,
        provider: &'static str,
        mut cx: Cx<'a>,
        name: &str,
        diag: &mut Diag,
    ) -> io::Result<bool> {
        if cx.events.is_empty() {
            // Every line is accounted for: one that maps to nothing is kept as a `raw` event.
            let why = "nothing in this line maps to an event".to_string();
            self.stats.provider_raw += 1;
            self.write_raw(text, lineno, provider, why)?;
            return Ok(true);
        }
        let clock = if self.opts.clock && cx.timestamp.is_none() {
            Some(self.clock.now().to_owned())
        } else {
            None
        };
        let timestamp = cx.timestamp.as_deref().or(clock.as_deref());
        let session_id = cx.session_id.as_deref().unwrap_or_default();
        let raw = if self.opts.raw { raw_of(text) } else { None };
        // Ids are `anchor:index`, written into one buffer for all of the line's events (and
        // the next line's: no allocation per line). The anchor is the line's own id, or one
        // made of its content.
        let mut id = std::mem::take(&mut self.ids);
        id.clear();
        match cx.anchor.as_deref().filter(|a| !a.is_empty()) {
            Some(a) => id.push_str(a),
            None => push_content_id(&mut id, text, lineno),
        }
        id.push(':');
        let id_prefix = id.len();
        // `--compat` folds events as `Value`s; all of the line's first, so that a line whose
        // events cannot be (a number beyond f64, nesting deeper than 128) is reported whole.
        let mut folded = Vec::new();
        // An inferred turn_start takes no number (`providers::turns`), nor an inferred whole
        // text (`providers::whole`): the others keep theirs (`start`, then `start2`… when a
        // line has more than one; `text`, `text2`…).
        let (mut k, mut starts, mut texts) = (0u64, 0u64, 0u64);
        let mut own_turns = std::mem::take(&mut cx.event_turns).into_iter().peekable();
        // `--turn-ids`: the session's open turn, as the line's events move it.
        let mut open = self.turns.as_ref().and_then(|t| t.open(session_id));
        for (i, (body, mut ext)) in cx.events.drain(..).enumerate() {
            let own_turn = own_turns.next_if(|(n, _)| *n == i).map(|(_, t)| t);
            id.truncate(id_prefix);
            if i < 64 && cx.inserted & (1 << i) != 0 {
                // An inferred turn start, or a message's whole text (`providers::whole`).
                let (what, n) = match body {
                    Body::TurnStart(_) => ("start", &mut starts),
                    _ => ("text", &mut texts),
                };
                id.push_str(what);
                *n += 1;
                if *n > 1 {
                    push_decimal(&mut id, *n);
                }
            } else {
                push_decimal(&mut id, k);
                k += 1;
            }
            if let Some(bad) = &cx.bad_time {
                ext.put("insights.invalidTimestamp", bad.clone());
            }
            if let Some(c) = &self.command_id {
                ext.put("insights.commandId", c.clone());
            }
            let own = own_turn.as_deref().or(cx.turn_id.as_deref());
            let placed = match self.turns {
                Some(_) => crate::providers::turns::name(
                    &mut open,
                    &body,
                    own,
                    &id,
                    !session_id.is_empty(),
                ),
                None => None,
            };
            self.seq += 1;
            let ev = Event {
                event: body.kind(),
                id: Cow::Borrowed(&id),
                seq: self.seq,
                line: lineno,
                timestamp: timestamp.map(Cow::Borrowed),
                provider,
                session_id: Cow::Borrowed(session_id),
                turn_id: own.or(placed.as_deref()).map(Cow::Borrowed),
                body,
                raw,
                extensions: ext,
            };
            if self.opts.cc_insights {
                match serde_json::to_value(&ev) {
                    Ok(Value::Object(obj)) => folded.push(obj),
                    Ok(_) => unreachable!("an event serializes to an object"),
                    Err(e) => {
                        self.seq -= folded.len() as u64 + 1;
                        let msg = crate::wire::without_position(&e);
                        diag.bad_line(
                            name,
                            lineno,
                            None,
                            &format!("--compat cc-insights cannot represent this line: {msg}"),
                        );
                        return Ok(false);
                    }
                }
                continue;
            }
            self.write_event(&ev)?;
            self.stats.events += 1;
        }
        if let Some(t) = self.turns.as_mut() {
            t.set(session_id, open);
        }
        self.spare = recycle(cx.events);
        self.ids = id;
        let first = self.seq + 1 - folded.len() as u64;
        self.seq = first - 1;
        for mut obj in folded {
            if !self.fold_compat(&mut obj) {
                continue;
            }
            self.seq += 1;
            obj.insert("seq".into(), Value::from(self.seq));
            self.write_object(&obj)?;
            self.stats.events += 1;
        }
        Ok(true)
    }

    /// `--compat cc-insights` on one event; `false` when it is dropped (and counted).
    fn fold_compat(&mut self, obj: &mut serde_json::Map<String, Value>) -> bool {
        match compat::fold(obj) {
            Ok(()) => true,
            Err(kind) => {
                *self.stats.dropped.entry(kind).or_default() += 1;
                false
            }
        }
    }

    /// Writes an event not made by a provider's mapping: a line's `raw` event, or one of the
    /// caller's own (`insights run`'s answer to a command it cannot carry out). It is numbered
    /// and stamped as the converted ones (its `seq` and `timestamp` are set here).
    pub fn write_own(&mut self, mut ev: Event<'_>) -> io::Result<()> {
        self.seq += 1;
        ev.seq = self.seq;
        if self.opts.clock {
            ev.timestamp = Some(Cow::Owned(self.clock.now().to_owned()));
        }
        self.write_event(&ev)?;
        self.stats.events += 1;
        Ok(())
    }

    fn write_raw(
        &mut self,
        text: &str,
        lineno: u64,
        provider: &'static str,
        reason: String,
    ) -> io::Result<()> {
        if self.opts.cc_insights {
            *self.stats.dropped.entry("raw").or_default() += 1;
            return Ok(());
        }
        self.stats.raw_events += 1;
        self.write_own(Event {
            event: "raw",
            id: Cow::Owned(format!("{}:0", content_id(text, lineno))),
            seq: 0,
            line: lineno,
            timestamp: None,
            provider,
            session_id: Cow::Borrowed(""),
            turn_id: None,
            body: Body::Raw(RawEvent {
                reason: Cow::Owned(reason),
            }),
            raw: raw_of(text),
            extensions: Extensions::default(),
        })
    }

    /// An InsightsEvent already: written again with only `seq` renumbered (and a member
    /// given twice written once, with its last value, as `serde_json` and `jq` read it).
    /// `Ok(false)` if it could not be read (reported).
    fn passthrough(
        &mut self,
        text: &str,
        lineno: u64,
        name: &str,
        diag: &mut Diag,
    ) -> io::Result<bool> {
        if self.opts.cc_insights {
            let mut obj: serde_json::Map<String, Value> = match serde_json::from_str(text) {
                Ok(o) => o,
                Err(e) => {
                    let (col, msg) = crate::wire::json_problem(&e, false);
                    diag.bad_line(name, lineno, Some(col), &msg);
                    return Ok(false);
                }
            };
            if !self.fold_compat(&mut obj) {
                return Ok(true);
            }
            self.seq += 1;
            obj.insert("seq".into(), Value::from(self.seq));
            self.write_object(&obj)?;
        } else {
            // Borrowed members: no tree is built, so any nesting depth passes through.
            let mut obj: Pairs<Json> = match serde_json::from_str::<Pairs<&RawValue>>(text) {
                Ok(p) => Pairs(p.0.into_iter().map(|(k, v)| (k, Json::Raw(v))).collect()),
                Err(e) => {
                    let (col, msg) = crate::wire::json_problem(&e, false);
                    diag.bad_line(name, lineno, Some(col), &msg);
                    return Ok(false);
                }
            };
            last_wins(&mut obj.0);
            self.seq += 1;
            match obj.0.iter_mut().find(|(k, _)| k == "seq") {
                Some((_, v)) => *v = Json::U64(self.seq),
                None => obj.0.push((Cow::Borrowed("seq"), Json::U64(self.seq))),
            }
            self.write_object(obj.0.iter().map(|(k, v)| (k, v)))?;
        }
        self.stats.events += 1;
        Ok(true)
    }
}

/// What the converter adds to the events `p` made of a line: whole messages
/// ([`crate::providers::whole`]) and inferred turn starts ([`crate::providers::turns`]).
fn finish_line(p: &Provider, cx: &mut Cx<'_>) {
    if p.whole_messages {
        crate::providers::whole::assemble(cx, p.name);
    }
    if p.infers_turns && !cx.own_turns {
        crate::providers::turns::infer(cx);
    }
}

/// Whether `p`'s line converted to `cx` is a prompt to hold for its session
/// ([`crate::providers::held`]): a lone top-level `user_input` of a line that names no
/// session, of a provider whose turns are inferred (the Claude Agent SDK's first prompt).
fn holds(p: &Provider, cx: &Cx<'_>) -> bool {
    p.infers_turns
        && cx.session_id.as_deref().is_none_or(str::is_empty)
        && matches!(&cx.events[..], [(Body::UserInput(u), _)]
            if !u.is_synthetic && u.parent_call_id.as_deref().is_none_or(str::is_empty))
}

/// Keeps one member per name: the last value, at the place of the first (as a
/// `serde_json::Map` with `preserve_order` reads it).
fn last_wins<K: Eq + std::hash::Hash + Clone, V>(members: &mut Vec<(K, V)>) {
    let n = members.len();
    let dup = if n <= 32 {
        (1..n).any(|i| members[..i].iter().any(|(k, _)| *k == members[i].0))
    } else {
        let mut seen = std::collections::HashSet::with_capacity(n);
        !members.iter().all(|(k, _)| seen.insert(k))
    };
    if !dup {
        return;
    }
    let mut at: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    let mut out: Vec<(K, V)> = Vec::with_capacity(members.len());
    for (k, v) in members.drain(..) {
        match at.get(&k) {
            Some(&i) => out[i].1 = v,
            None => {
                at.insert(k.clone(), out.len());
                out.push((k, v));
            }
        }
    }
    *members = out;
}

thread_local! {
    /// Set while a converter runs: its panic message is kept, not printed.
    static IN_CONVERTER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static PANIC_MESSAGE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Runs a provider's converter. A panic in it (a bug: they must not panic) is caught and the
/// line becomes a `raw` event saying so, instead of ending the run and losing the rest of the
/// stream. Fuzzing builds (`--cfg fuzzing`) let it through, for the fuzzer to report.
fn convert_guarded<'a>(
    p: &Provider,
    text: &'a str,
    probe: &Probe<'a>,
    cx: &mut Cx<'a>,
) -> Result<(), crate::providers::Unmapped> {
    if cfg!(fuzzing) {
        return (p.convert)(text, probe, cx);
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_CONVERTER.with(std::cell::Cell::get) {
                PANIC_MESSAGE.with(|m| *m.borrow_mut() = info.to_string().replace('\n', " "));
            } else {
                previous(info)
            }
        }));
    });
    IN_CONVERTER.with(|f| f.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        (p.convert)(text, probe, &mut *cx)
    }));
    IN_CONVERTER.with(|f| f.set(false));
    result.unwrap_or_else(|_| {
        cx.events.clear();
        cx.event_turns.clear();
        let msg = PANIC_MESSAGE.with(|m| std::mem::take(&mut *m.borrow_mut()));
        Err(crate::providers::Unmapped(format!(
            "internal error in the {} converter, please report it: {msg}",
            p.name
        )))
    })
}

/// Hands each complete line written to it to a callback: lets the subcommands consume the
/// converter's output as a stream of event lines.
pub struct LineSink<F: FnMut(&[u8]) -> io::Result<()>> {
    buf: Vec<u8>,
    f: F,
}

impl<F: FnMut(&[u8]) -> io::Result<()>> LineSink<F> {
    pub fn new(f: F) -> Self {
        LineSink { buf: Vec::new(), f }
    }
}

impl<F: FnMut(&[u8]) -> io::Result<()>> Write for LineSink<F> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut rest = data;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            if self.buf.is_empty() {
                (self.f)(&rest[..i])?;
            } else {
                self.buf.extend_from_slice(&rest[..i]);
                let line = std::mem::take(&mut self.buf);
                (self.f)(&line)?;
            }
            rest = &rest[i + 1..];
        }
        self.buf.extend_from_slice(rest);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The line as a borrowed raw JSON value (the line is known to be valid JSON).
fn raw_of(text: &str) -> Option<&RawValue> {
    serde_json::from_str::<&RawValue>(text).ok()
}

/// A diagnostic for a line whose first character cannot start a JSON object.
pub(crate) fn not_an_object(text: &str) -> Option<(u64, String)> {
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

/// The id stem of a line without a provider id: its content hash and its line number, so
/// identical lines get distinct ids and the same input always the same ones.
/// Appends `n` in decimal.
fn push_decimal(s: &mut String, n: u64) {
    // Not `write!`: it costs more than the rest of an id (8% of converting Gemini output);
    // nor digits checked as UTF-8 again (a tenth of the rest).
    s.push_str(itoa::Buffer::new().format(n));
}

/// `h` + the line's content hash in 16 hex digits + `-` + the line number.
fn content_id(text: &str, lineno: u64) -> String {
    let mut s = String::with_capacity(40);
    push_content_id(&mut s, text, lineno);
    s
}

/// Appends [`content_id`].
fn push_content_id(s: &mut String, text: &str, lineno: u64) {
    // Two hex digits per byte of the hash, from a table.
    const HEX2: [[u8; 2]; 256] = {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut t = [[0u8; 2]; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = [HEX[i >> 4], HEX[i & 0xf]];
            i += 1;
        }
        t
    };
    let h = content_hash(text.as_bytes());
    let mut hex = [b'h'; 17];
    for (i, b) in h.to_be_bytes().iter().enumerate() {
        hex[1 + 2 * i..3 + 2 * i].copy_from_slice(&HEX2[usize::from(*b)]);
    }
    s.push_str(std::str::from_utf8(&hex).unwrap_or_default());
    s.push('-');
    push_decimal(s, lineno);
}

/// A stable 64-bit content hash for ids of lines without a provider id (not cryptographic:
/// the line number in the id keeps ids unique). Eight bytes at a time, little-endian, so it
/// is the same on every machine; about eight times the speed of FNV-1a, which took 8% of a
/// conversion of Claude SDK output (long `control_response` lines carry no id).
pub fn content_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = w.try_into().map_or(0, u64::from_le_bytes);
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let rest = words.remainder();
    let mut tail = [0u8; 8];
    tail[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^= h >> 32;
    h = h.wrapping_mul(K);
    h ^ (h >> 29)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Options {
        Options::for_tests(1 << 20)
    }

    #[test]
    fn recycle_keeps_the_allocation() {
        let v: Vec<(Body<'static>, Extensions<'static>)> = Vec::with_capacity(4);
        let at = v.as_ptr() as usize;
        let w = recycle(v);
        assert_eq!(w.as_ptr() as usize, at);
        assert_eq!(w.capacity(), 4);
    }

    fn run(input: &str, opts: &Options) -> (String, Stats, u64) {
        let mut out = Out::new(Vec::new());
        let mut diag = Diag::new(false);
        let mut c = Converter::new(opts, &mut out);
        c.run_reader(input.as_bytes(), "<test>", &mut diag).unwrap();
        let stats = std::mem::take(&mut c.stats);
        out.flush().unwrap();
        let text = String::from_utf8(out.w.into_inner().unwrap()).unwrap();
        (text, stats, diag.bad_lines)
    }

    #[test]
    fn ids_written_by_hand_as_format_writes_them() {
        for n in [0, 1, 9, 10, 99, 100, 12345, u64::MAX] {
            let mut s = String::from("x");
            push_decimal(&mut s, n);
            assert_eq!(s, format!("x{n}"));
        }
        for (text, line) in [("", 0), ("{}", 7), (r#"{"type":"message"}"#, 123456789)] {
            let want = format!("h{:016x}-{line}", content_hash(text.as_bytes()));
            assert_eq!(content_id(text, line), want);
        }
    }

    #[test]
    fn bad_lines_are_counted_and_the_run_goes_on() {
        let (out, stats, bad) = run("nope\n[1]\n{\"type\":\"keep_alive\"}\n{\"a\":\n", &opts());
        assert_eq!(bad, 3);
        assert_eq!(stats.events, 1);
        assert!(out.contains("\"event\":\"notice\""));
    }

    #[test]
    fn strict_stops_at_the_first_bad_line() {
        let mut o = opts();
        o.strict = true;
        let (out, stats, bad) = run("nope\n{\"type\":\"keep_alive\"}\n", &o);
        assert_eq!((bad, stats.events, stats.stopped), (1, 0, true));
        assert!(out.is_empty());
    }

    #[test]
    fn unknown_lines_become_raw_with_the_object() {
        let (out, stats, _) = run("{\"hello\":1}\n", &opts());
        assert_eq!(stats.raw_events, 1);
        let v: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["event"], "raw");
        assert_eq!(v["provider"], "unknown");
        assert_eq!(v["raw"]["hello"], 1);
    }

    #[test]
    fn converting_twice_is_a_no_op() {
        let input = "{\"type\":\"keep_alive\",\"uuid\":\"u\"}\n{\"type\":\"user\",\"message\":{\"content\":\"hi\"},\"session_id\":\"s\"}\n";
        let (once, _, _) = run(input, &opts());
        let (twice, _, _) = run(&once, &opts());
        assert_eq!(once, twice);
    }

    #[test]
    fn ids_are_deterministic_and_unique_per_line() {
        let input = "{\"type\":\"keep_alive\"}\n{\"type\":\"keep_alive\",\"n\":1}\n";
        let (a, _, _) = run(input, &opts());
        let (b, _, _) = run(input, &opts());
        assert_eq!(a, b);
        let ids: Vec<String> = a
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_ne!(ids[0], ids[1]);
    }

    #[test]
    fn a_converter_panic_becomes_a_raw_event_and_the_run_goes_on() {
        // No converter is known to panic any more (fuzzing found the last ones): a stand-in.
        fn boom<'a>(
            _: &'a str,
            _: &Probe<'a>,
            _: &mut Cx<'a>,
        ) -> Result<(), crate::providers::Unmapped> {
            panic!("boom at {}", 42)
        }
        let panics: &'static Provider = Box::leak(Box::new(Provider {
            name: "claude",
            display: "Claude Code",
            cc_name: "claude",
            about: "",
            jsonrpc: false,
            sniff: |_| true,
            convert: boom,
            reading: crate::providers::Reading::PLAIN,
            caps: crate::providers::Capabilities::default(),
            infers_turns: false,
            whole_messages: false,
            at_end: None,
            talk: None,
        }));
        let mut o = opts();
        o.forced = Some(panics);
        let (out, stats, bad) = run("{\"a\":1}\n{\"b\":2}\n", &o);
        assert_eq!((stats.events, stats.raw_events, bad), (2, 2, 0));
        let first: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        assert_eq!(first["event"], "raw");
        let reason = first["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("internal error in the claude converter")
                && reason.contains("boom at 42"),
            "{reason}"
        );
    }

    #[test]
    fn content_hash_is_fixed() {
        // Ids of lines without a provider id depend on it: a change must be deliberate.
        assert_eq!(content_hash(b""), 0x8603_89c1_cc83_d5ef);
        assert_eq!(
            content_hash(b"{\"type\":\"keep_alive\"}"),
            0x53b4_efba_c3bb_7018
        );
        assert_ne!(content_hash(b"ab"), content_hash(b"ba"));
        assert_ne!(content_hash(b"a"), content_hash(b"a\0"));
    }

    #[test]
    fn compat_drops_and_counts() {
        let mut o = opts();
        o.cc_insights = true;
        let (out, stats, _) = run("{\"type\":\"keep_alive\"}\n{\"x\":1}\n", &o);
        assert!(out.is_empty());
        assert_eq!(stats.dropped.get("notice"), Some(&1));
        assert_eq!(stats.dropped.get("raw"), Some(&1));
    }

    /// `[line, event, sessionId]` of each event `input` converts to.
    fn shapes(input: &str) -> Vec<(u64, String, String)> {
        let (out, _, bad) = run(input, &opts());
        assert_eq!(bad, 0);
        out.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["line"].as_u64().unwrap(),
                    v["event"].as_str().unwrap().to_owned(),
                    v["sessionId"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    const PROMPT: &str = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]},"parent_tool_use_id":null,"session_id":""}"#;
    const CONTROL: &str =
        r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}"#;
    const INIT: &str =
        r#"{"type":"system","subtype":"init","session_id":"s","uuid":"u4","model":"m"}"#;
    const ANSWER: &str = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Hello."}]},"session_id":"s","uuid":"u5"}"#;
    const RESULT: &str =
        r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s","uuid":"u6"}"#;

    fn lines(ls: &[&str]) -> String {
        ls.iter().map(|l| format!("{l}\n")).collect()
    }

    fn ev(line: u64, event: &str, session: &str) -> (u64, String, String) {
        (line, event.into(), session.into())
    }

    #[test]
    fn the_sdk_s_first_prompt_waits_for_the_line_that_names_its_session() {
        // After the init and the turn it starts, in that turn; a line naming no session
        // between them leaves it held. Its line and id stay its own.
        let input = lines(&[PROMPT, CONTROL, INIT, ANSWER, RESULT]);
        assert_eq!(
            shapes(&input),
            [
                ev(2, "notice", ""),
                ev(3, "session_init", "s"),
                ev(3, "turn_start", "s"),
                ev(1, "user_input", "s"),
                ev(4, "text", "s"),
                ev(5, "turn_complete", "s"),
            ]
        );
        let (out, _, _) = run(&input, &opts());
        let prompt: Value = serde_json::from_str(out.lines().nth(3).unwrap()).unwrap();
        assert_eq!(prompt["id"], format!("{}:0", content_id(PROMPT, 1)));
        assert_eq!(prompt["seq"], 4);
        // Named by a line that is no init: before its events, the prompt opens the turn.
        assert_eq!(
            shapes(&lines(&[PROMPT, ANSWER])),
            [
                ev(1, "turn_start", "s"),
                ev(1, "user_input", "s"),
                ev(2, "text", "s"),
            ]
        );
    }

    #[test]
    fn a_prompt_held_goes_as_it_was_at_the_end_and_for_another() {
        // The input ends first: written as it came, outside any turn.
        assert_eq!(
            shapes(&lines(&[PROMPT, CONTROL])),
            [ev(2, "notice", ""), ev(1, "user_input", "")]
        );
        // At most one is held: the first goes as it was when the second comes.
        assert_eq!(
            shapes(&lines(&[PROMPT, PROMPT, INIT]))[..2],
            [ev(1, "user_input", ""), ev(3, "session_init", "s")]
        );
        // Another provider's line: let go as it was, before it.
        let gemini =
            r#"{"type":"init","timestamp":"2026-01-01T00:00:00Z","session_id":"g","model":"x"}"#;
        assert_eq!(
            shapes(&lines(&[PROMPT, gemini]))[..2],
            [ev(1, "user_input", ""), ev(2, "session_init", "g")]
        );
        // A prompt of a session already named is not held.
        assert_eq!(
            shapes(&lines(&[INIT, PROMPT]))[1..],
            [ev(1, "turn_start", "s"), ev(2, "user_input", "s")]
        );
    }
}
