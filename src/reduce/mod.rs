//! `insights reduce`: fold an event log into state, the pure function `(state, event) → state`.
//!
//! The wire stays flat; this is the reducer that builds what a UI shows, from InsightsEvents
//! only (never a provider's wire fields, so every provider is reduced alike; raw provider
//! output is converted on the fly). The state (`state.rs`, `schemas/insights-state.schema.json`)
//! has four parts:
//!
//! * **entries**: the conversation as a UI lists it, by the entry rules of the ACP seed
//!   (`entries.rs`; RULE 1–12), for every session, each entry naming its session, turn and
//!   agent (`parentCallId` for a subagent's).
//! * **tree**: sessions → turns → nodes (entries), a subagent's nodes under the node of the
//!   call that started it, parallel calls marked (`apply.rs`).
//! * **totals**: per session, per model and overall (`totals.rs`).
//! * **pending**: per session, the running turn, tools and questions, unanswered permission
//!   requests, the current plan, mode, model and rate limit.
//!
//! and `lastSeq`, plus `cursor`, the bookkeeping later events depend on.
//!
//! # Sessions
//! An event belongs to the session its `sessionId` names. An event without one (`""`: SDK
//! control messages, a prompt read from standard input, Codex exec lines after the first)
//! belongs to the current session (the last one named), except that a prompt or `turn_start`
//! while that session has no turn running is *parked* until the next event that names a
//! session or carries agent output, and is then applied to that session: the prompt of a new
//! session arrives before the agent names it. Before any session is named, events without one
//! are parked too, and agent output then goes to a session with the id `""`.
//!
//! # Turns
//! `turn_start` opens a turn (or names a running one that has nothing from the agent yet);
//! without it (Claude) a turn is opened by the first of: a top-level `user_input`, a
//! `session_init` that names its session, or agent output (`text`, `stream_delta`,
//! `tool_invocation`, `subagent_spawn`, `permission_request`, `plan_update`) while none is
//! running. `turn_complete` closes it (and makes one if none was running). A prompt while a
//! turn runs (an interruption notice, a queued prompt) joins that turn. Session-level events
//! (mode, configuration, commands, status, title) open no turn and are not the agent's work:
//! a mode changed before the first prompt (ACP's `session/set_mode`) leaves the turn its
//! `session_init` opened for the prompt's `turn_start` to name. A session's `status` (the last
//! `session_status`) ends at the turn boundary it is about: `idle` and `interrupted` when a turn
//! opens, a running turn's `running`, `requesting`, `compacting` and `requires_action` when it
//! ends (`State::status_at_boundary`).
//!
//! # Exactly once
//! Every event is applied at most once by its `id` (in its session): the state keeps a 64-bit
//! hash of the session and id of every event applied (`cursor.ids`, see [`crate::ids::Applied`]), and an event whose id is
//! there is skipped, in one stream and after `--from-state`. So a log fed twice, a snapshot
//! followed by the rest of its log or by the whole log again, or a tail that overlaps what was
//! applied all give the state of one pass. `seq` is a position within one conversion, not a
//! key: events keep the `seq` they carry, and converted provider lines are numbered after the
//! last event applied.

pub mod apply;
pub mod entries;
pub mod forget;
pub mod from_event;
pub mod handover;
pub mod jobs;
pub mod state;
pub mod summary;

pub mod totals;
pub mod view;

#[cfg(test)]
mod tests;

use crate::cli::Config;
use crate::cli::InputArgs;
use crate::convert::{Converter, Options};
use crate::detect::Probe;
use crate::diag::Diag;
use crate::event::Event;
use crate::ids::hash_pair;
use crate::input::{Line, Source};
use crate::lines::SourceLines;
use crate::output::Out;
use anyhow::Context as _;
use state::State;
use std::borrow::Cow;
use std::cell::RefCell;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use view::Ev;

const AFTER_HELP: &str = "\
Examples:
  insights reduce session.jsonl                        # the final state, as JSON
  claude ... | insights | insights reduce --follow     # a snapshot after every turn (JSONL)
  insights reduce --view summary logs/*.jsonl          # a table per session
  insights reduce --at 120 session.jsonl               # the state after event 120
  insights reduce --from-state snap.json session.jsonl # continue a snapshot
  insights reduce --view summary --session ID --db     # one session from the store

Exit status: 0 every line was read, 1 some input lines could not be read,
2 usage or I/O error.";

/// What to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// The state as JSON (the default).
    State,
    /// A table per session: each turn's status, tool calls, tokens, cost and duration, the
    /// session's totals, context use and what is pending.
    Summary,
}

#[derive(Debug, clap::Args, Clone)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,

    #[command(flatten)]
    pub store: crate::store::DbArgs,

    /// Print the state after every turn_complete, and at the end, instead of once.
    ///
    /// With `--view state` each snapshot is one line of JSON (JSONL); the last one is written
    /// when the input ends, if anything happened since the one before.
    #[arg(long)]
    pub follow: bool,

    /// What to print: `state` (JSON) or `summary` (a table per session).
    #[arg(long, value_enum, default_value_t = View::State, value_name = "VIEW")]
    pub view: View,

    /// Continue from a state `insights reduce` wrote: events it applied (by `id`) are skipped.
    ///
    /// So the rest of the log, the whole log again or a tail that overlaps it may follow. A
    /// FILE that is not such a state is an error (exit status 2).
    #[arg(long, value_name = "FILE")]
    pub from_state: Option<PathBuf>,

    /// Reduce only the events up to this `seq`; reading stops at the first later one.
    #[arg(long, value_name = "SEQ")]
    pub at: Option<u64>,

    /// Convert provider output on N threads while the state is built; the result is the same.
    ///
    /// Lines are converted in chunks of about 1 MiB while the calling thread folds the events
    /// in input order: the state, the diagnostics and the exit status are those of one thread.
    /// With N > 1, a pretty state of 4096 entries and sessions or more is also written on two
    /// threads, the same text. The default is as for `insights` itself: one thread for a pipe, a terminal or files
    /// under 8 MiB in all (standard input redirected from a file counts as that file), one per
    /// core otherwise.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

/// What became of one event fed to a [`Reducer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fed {
    Applied {
        turn_complete: bool,
    },
    /// An event of its `id` was applied before (in this run or the state resumed from).
    Skipped,
    /// Its `seq` is after `--at`: nothing more is read.
    Stop,
}

/// The state plus the `--at` limit.
pub struct Reducer {
    pub state: State,
    at: Option<u64>,
    pub stopped: bool,
}

impl Reducer {
    pub fn new(state: State, at: Option<u64>) -> Reducer {
        Reducer {
            state,
            at,
            stopped: false,
        }
    }

    /// Applies one event, unless an event of its `id` was applied before, or, for an event
    /// the provider numbers whose session is in the state, the session applied one at or
    /// after its place ([`Place`]); one without a `seq` is numbered after the last event
    /// applied.
    pub fn feed(&mut self, ev: &mut Ev) -> Fed {
        let seq = ev.seq.unwrap_or(self.state.last_seq + 1);
        if self.at.is_some_and(|at| seq > at) {
            self.stopped = true;
            return Fed::Stop;
        }
        // Keyed by session and id: ids are meant to be unique, but an id made of a line's
        // content and place is the same for the same line at the same place of two logs.
        let id = ev
            .id
            .as_deref()
            .filter(|id| !id.is_empty())
            .map(|id| (id, hash_pair(ev.session(), id)))
            // Neither an id nor a `seq` (the schema requires an id): known by its text, so
            // that the log read again skips it (and a second copy of it counts once).
            .or_else(|| {
                (ev.seq.is_none() && !ev.line.is_empty())
                    .then(|| ("", hash_pair(ev.session(), ev.line)))
            });
        // An event the provider numbers is known by its place, not by its id (which changes
        // when its line is converted at another place in a file), when it names its session
        // and the session is in the state to keep the place; until then (and for an event that
        // makes no session, a notice) by its id.
        let place = ev.ext.event_id.map(|n| Place {
            event_id: n,
            part: id.map_or(0, |(id, _)| part(id)),
        });
        let numbered = place.is_some() && !ev.session().is_empty();
        if numbered {
            let seen = match self.session_of(ev.session()) {
                Some(s) => place <= self.place_of(s),
                None => id.is_some_and(|(_, h)| self.state.cursor.ids.0.contains(h)),
            };
            if seen {
                return Fed::Skipped;
            }
        } else if let Some((id, h)) = id {
            if !self.state.cursor.ids.0.insert(h) {
                return Fed::Skipped;
            }
            // The SDK's first prompt, applied without its session by a run whose input ended
            // while the converter held it (`providers::held`), and named on the log read
            // again: applied once.
            if ev.event == "user_input"
                && !ev.session().is_empty()
                && self.state.cursor.ids.0.contains(hash_pair("", id))
            {
                return Fed::Skipped;
            }
        } else if ev.seq.is_some_and(|s| s <= self.state.last_seq) {
            // No id to be known by (the schema requires one): its `seq` is all there is, as
            // before ids were kept; a log read again from its start skips it.
            return Fed::Skipped;
        }
        ev.seq = Some(seq);
        let hash = id.map(|(_, h)| h);
        self.state.apply(ev);
        if numbered {
            match (self.session_of(ev.session()), place) {
                (Some(s), Some(p)) => self.set_place(s, p),
                _ => {
                    if let Some(h) = hash {
                        self.state.cursor.ids.0.insert(h);
                    }
                }
            }
        }
        Fed::Applied {
            turn_complete: ev.event == "turn_complete",
        }
    }

    /// The position of session `id` in the state, when it is there (and named).
    fn session_of(&self, id: &str) -> Option<usize> {
        if id.is_empty() {
            return None;
        }
        self.state.idx.sessions.get(id).copied()
    }

    /// Where session `s` is in its provider's numbering; none before it applied a numbered
    /// event.
    fn place_of(&self, s: usize) -> Option<Place> {
        let c = &self.state.cursor.sessions[s];
        Some(Place {
            event_id: c.last_event_id?,
            part: c.last_event_part,
        })
    }

    fn set_place(&mut self, s: usize, to: Place) {
        if self.place_of(s) >= Some(to) {
            return;
        }
        let c = &mut self.state.cursor.sessions[s];
        c.last_event_id = Some(to.event_id);
        c.last_event_part = to.part;
    }
}

/// A place in a provider's own numbering of its events: the number its line carries
/// (`extensions."aceclaw.eventId"`), then the index of the event among the line's events (the
/// end of its `id`, `anchor:index`), since a snapshot may end within a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    event_id: u64,
    part: u32,
}

/// The index of an event among the events of its line: the number after the last `:` of its
/// `id`, 0 when there is none.
fn part(id: &str) -> u32 {
    id.rsplit_once(':')
        .and_then(|(_, k)| k.parse().ok())
        .unwrap_or(0)
}

/// Where events go: the converter's (through its tap) and those of lines read as they are.
struct Sink<'r> {
    red: &'r mut Reducer,
    each: &'r mut dyn FnMut(&mut Reducer, Fed) -> anyhow::Result<()>,
    /// The `seq` the events of the line being converted keep: the line's own, when it was
    /// taken for an InsightsEvent and its `seq` is a number; `None` numbers them after the
    /// last event applied (the converter's count is not the log's: it depends on what the
    /// converter was told at the start, [`converter_start`]).
    line_seq: Option<u64>,
    /// Why `each` failed, which ends the run.
    failed: Option<anyhow::Error>,
    /// Why events of the line being converted could not be read, to be reported.
    unreadable: Vec<String>,
}

impl Sink<'_> {
    /// Feeds one event; `Err` ends the run.
    fn feed(&mut self, ev: &mut Ev) -> anyhow::Result<()> {
        let fed = self.red.feed(ev);
        (self.each)(self.red, fed)
    }

    /// An event the converter made. Read as its line would be, without the line, unless only
    /// the line tells how (then it is written and read). `Err` only if it cannot be written.
    fn event(&mut self, event: &Event) -> io::Result<()> {
        if self.red.stopped || self.failed.is_some() {
            return Ok(());
        }
        let mut line = String::new();
        let mut ev = Ev::default();
        if let Err(e) = ev.fill_from_event_or_line(event, &mut line)? {
            self.unreadable.push(unreadable_msg(&e));
            return Ok(());
        }
        ev.seq = self.line_seq;
        if let Err(e) = self.feed(&mut ev) {
            self.failed = Some(e);
            return Err(io::Error::other("reduce stopped"));
        }
        Ok(())
    }
}

/// What the converter of a source starts from: the turns the state has running that a
/// `turn_start` started, for the providers whose turn starts are inferred
/// ([`crate::providers::turns::resumed`]), the models of Qwen Code's, Amp's and Cursor's
/// sessions ([`crate::providers::models::resumed`]), and the subagent calls running in Claude's and
/// Qwen's ([`crate::providers::claude::resumed_calls`]); `None` when there are none (a fresh
/// start). A turn
/// opened by its first event (a `session_init`) is left out: the converter writes its start
/// after that event, and a snapshot taken between the two resumes with it.
pub fn converter_start(state: &State) -> Option<crate::convert::StreamState> {
    let open: Vec<(&str, &str)> = state
        .tree
        .sessions
        .iter()
        .zip(&state.pending.sessions)
        .zip(&state.cursor.sessions)
        .filter(|((_, p), c)| p.turn.is_some() && c.turn_started)
        .map(|(tp, _)| tp)
        .filter_map(|(t, _)| Some((t.session_id.as_str(), t.provider.as_deref()?)))
        .collect();
    // The subagent calls running in Claude's and Qwen's streams, whose results end them
    // ([`crate::providers::claude::resumed_calls`]).
    let calls: Vec<(&str, &str, &str, Option<&str>)> = state
        .tree
        .sessions
        .iter()
        .zip(&state.pending.sessions)
        .filter(|(t, _)| matches!(t.provider.as_deref(), Some("claude" | "qwen")))
        .flat_map(|(t, p)| p.tools.iter().map(move |call| (t, call)))
        .filter_map(|(t, call)| {
            let entry = state.entries.get(call.entry as usize)?;
            let state::Body::ToolCall(c) = &entry.body else {
                return None;
            };
            let sub = c.subagent.as_ref()?;
            let name = call.tool_name.as_deref().unwrap_or_default();
            Some((
                t.session_id.as_str(),
                call.call_id.as_str(),
                name,
                sub.agent_id.as_deref(),
            ))
        })
        .collect();
    // Qwen Code's, Amp's and Cursor's turns are priced under their session's model
    // ([`crate::providers::models`]): the session's, else the model of its last message that
    // names one (Amp's messages do, its init does not).
    let models: Vec<(&str, &str, &str)> = state
        .tree
        .sessions
        .iter()
        .filter_map(|t| {
            let provider = t.provider.as_deref()?;
            if !crate::providers::models::PROVIDERS.contains(&provider) {
                return None;
            }
            let model = t.model.as_deref().or_else(|| {
                state.entries.iter().rev().find_map(|e| match &e.body {
                    state::Body::Message(m) if e.session_id == t.session_id => m.model.as_deref(),
                    _ => None,
                })
            })?;
            Some((t.session_id.as_str(), provider, model))
        })
        .collect();
    if open.is_empty() && calls.is_empty() && models.is_empty() {
        return None;
    }
    let mut memory = crate::providers::turns::resumed(open);
    crate::providers::claude::resumed_calls(&mut memory, calls);
    crate::providers::models::resumed(&mut memory, models);
    Some(crate::convert::StreamState {
        memory: std::sync::Arc::new(memory),
        ..Default::default()
    })
}

/// Reads one source: InsightsEvent lines are parsed as written (their `seq` kept), any other
/// line goes through the converter (one per source, as in `insights convert`) and its events
/// follow. `each` sees every event fed.
pub fn read_source(
    src: &Source,
    opts: &Options,
    diag: &mut Diag,
    red: &mut Reducer,
    each: &mut dyn FnMut(&mut Reducer, Fed) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let name = src.name();
    let Some(rdr) = src.lines_or_report(opts.max_line, diag) else {
        return Ok(());
    };
    read_lines(rdr, &name, opts, diag, red, each)
}

/// [`read_source`] of lines already open (`name` names them in messages).
pub fn read_lines(
    mut rdr: SourceLines<'_>,
    name: &str,
    opts: &Options,
    diag: &mut Diag,
    red: &mut Reducer,
    each: &mut dyn FnMut(&mut Reducer, Fed) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let start = converter_start(&red.state);
    let sink = RefCell::new(Sink {
        red,
        each,
        line_seq: None,
        failed: None,
        unreadable: Vec::new(),
    });
    let busy = || anyhow::anyhow!("internal error: the reducer was fed while it was busy");
    // The converter hands its events over; lines it passes through are written here and
    // taken back after each line.
    let mut tap = |event: &Event| match sink.try_borrow_mut() {
        Ok(mut s) => s.event(event),
        Err(_) => Err(io::Error::other(busy())),
    };
    let mut out = Out::new(Vec::new());
    let mut conv = Converter::new(opts, &mut out);
    if let Some(start) = start {
        conv.set_state(start);
    }
    conv.tap(&mut tap);
    let mut buf = Vec::with_capacity(64 * 1024);
    loop {
        if sink.try_borrow().map_err(|_| busy())?.red.stopped {
            break;
        }
        let line = match rdr.next_line(&mut buf) {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                diag.io_error(rdr.name(), &e);
                break;
            }
        };
        let lineno = rdr.lineno();
        // Diagnostics name the file the line came from (a group's own file).
        let name = rdr.name();
        if let Line::TooLong { len } = line {
            // Reported as the converter reports it.
            let unterminated = rdr.unterminated();
            conv.input_line(
                Line::TooLong { len },
                &buf,
                lineno,
                unterminated,
                &name,
                diag,
            )?;
            continue;
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut probe = Probe::default();
        let kind = kind(&buf, &mut probe);
        let line_seq = match kind {
            Kind::Event(text) => {
                let mut ev = Ev::default();
                if ev.read(text).is_ok() {
                    sink.try_borrow_mut().map_err(|_| busy())?.feed(&mut ev)?;
                    continue;
                }
                seq_of(text)
            }
            _ => None,
        };
        // Provider output, or an event the view cannot read: the converter reports what is
        // unreadable, hands its events over and passes InsightsEvents through.
        sink.try_borrow_mut().map_err(|_| busy())?.line_seq = line_seq;
        let converted = match &kind {
            Kind::Provider(text) => conv.probed_line(text, &probe, lineno, &name, diag),
            _ => conv.line(&buf, lineno, rdr.unterminated(), &name, diag),
        };
        let mut s = sink.try_borrow_mut().map_err(|_| busy())?;
        if let Some(e) = s.failed.take() {
            return Err(e);
        }
        converted.context("cannot convert")?;
        for msg in s.unreadable.drain(..) {
            diag.bad_line(&name, lineno, None, &msg);
        }
        let out = conv.out();
        out.flush().context("cannot convert")?;
        let out = out.w.get_mut();
        if !s.red.stopped {
            read_back(out, &buf, line_seq, lineno, &name, diag, &mut |ev| {
                s.feed(ev)?;
                Ok(!s.red.stopped)
            })?;
        }
        out.clear();
    }
    // As `insights convert` ends an input (what was not shown, a wrong `--from`); not after
    // `--at` stopped the reading.
    if sink.try_borrow().map_err(|_| busy())?.red.stopped {
        diag.end_input(&name);
    } else {
        // What the input left open ends as `insights convert` ends it.
        sink.try_borrow_mut().map_err(|_| busy())?.line_seq = None;
        let closed = conv.close_input(rdr.lineno(), rdr.name(), diag);
        let mut s = sink.try_borrow_mut().map_err(|_| busy())?;
        if let Some(e) = s.failed.take() {
            return Err(e);
        }
        closed.context("cannot convert")?;
        for msg in s.unreadable.drain(..) {
            diag.bad_line(rdr.name(), rdr.lineno(), None, &msg);
        }
        drop(s);
        let (lines, raw) = (conv.stats.provider_lines, conv.stats.provider_raw);
        let forgot = conv.forgotten();
        crate::convert::end_input(opts, &name, lines, raw, forgot, diag);
    }
    Ok(())
}

/// Reads back the lines the converter wrote of input line `lineno` (the InsightsEvents it
/// passed through) and feeds their events with `seq` set to `line_seq`, until `feed` says the
/// reading stopped (`--at`); lines that cannot be read are reported. An event without an id
/// is known by the input line it came from (`input`), not by the line the converter wrote,
/// whose `seq` is the converter's count.
fn read_back(
    out: &[u8],
    input: &[u8],
    line_seq: Option<u64>,
    lineno: u64,
    name: &str,
    diag: &mut Diag,
    feed: &mut dyn FnMut(&mut Ev) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    // The converter writes UTF-8; the lossy copy is never made.
    let text = match std::str::from_utf8(out) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(out),
    };
    for (k, l) in text.split('\n').filter(|l| !l.is_empty()).enumerate() {
        let mut ev = Ev::default();
        match ev.read(l) {
            Ok(()) => {
                ev.seq = line_seq;
                if ev.id.as_deref().is_none_or(str::is_empty) {
                    let h = crate::ids::hash_pair("", &String::from_utf8_lossy(input));
                    ev.id = Some(Cow::Owned(format!("line-{h:016x}:{k}")));
                }
                if !feed(&mut ev)? {
                    break;
                }
            }
            Err(e) => diag.bad_line(name, lineno, None, &unreadable_msg(&e)),
        }
    }
    Ok(())
}

/// The `seq` of an InsightsEvent line `Ev::read` could not read, when it is a number.
pub(super) fn seq_of(text: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Seq {
        seq: Option<serde_json::Value>,
    }
    serde_json::from_str::<Seq>(text).ok()?.seq?.as_u64()
}

/// Why an event line cannot be reduced.
fn unreadable_msg(e: &serde_json::Error) -> String {
    format!(
        "not an InsightsEvent reduce can read: {}",
        crate::wire::without_position(e)
    )
}

/// What a line is to `reduce`.
enum Kind<'a> {
    /// An InsightsEvent, to be read as written.
    Event(&'a str),
    /// Provider output: a JSON object that is no InsightsEvent, probed for the converter
    /// (the probe [`kind`] was given).
    Provider(&'a str),
    /// Not UTF-8, or not a JSON object: the converter says why.
    Unreadable,
}

/// Tells what a (non-blank) line is, as the converter would: InsightsEvents as `insights`
/// writes them start so, others are known by the probe the converter needs anyway, read into
/// `probe` (a default one), where it is: a probe is some 400 bytes, which a probe returned by
/// value was copied to reach its caller.
fn kind<'a>(buf: &'a [u8], probe: &mut Probe<'a>) -> Kind<'a> {
    let Ok(text) = std::str::from_utf8(buf) else {
        return Kind::Unreadable;
    };
    if buf.starts_with(b"{\"event\":\"") {
        return Kind::Event(text);
    }
    if crate::convert::not_an_object(text).is_some() {
        return Kind::Unreadable;
    }
    match probe.fill(text) {
        Ok(()) if probe.is_insights_event() => Kind::Event(text),
        Ok(()) => Kind::Provider(text),
        Err(_) => Kind::Unreadable,
    }
}

pub fn run(args: &Args, config: &Config) -> anyhow::Result<ExitCode> {
    let mut diag = Diag::new(config.color_err);
    // Times are the session's own: raw lines that carry no time of their own are not stamped
    // with the moment they were read (their entries, turns and sessions have no time).
    let opts = crate::convert::Options {
        clock: false,
        ..args.input.options()?
    };
    let state = match &args.from_state {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read state {}", p.display()))?;
            State::from_json(&text)
                .with_context(|| format!("{} is not a state insights reduce wrote", p.display()))?
        }
        None => State::new(),
    };
    let mut red = Reducer::new(state, args.at);
    let mut out = Out::stdout();
    let view = args.view;
    let follow = args.follow;
    // Whether events were applied since the last snapshot written.
    let mut dirty = false;
    let mut each = |red: &mut Reducer, fed: Fed| -> anyhow::Result<()> {
        if let Fed::Applied { turn_complete } = fed {
            dirty = true;
            if follow && turn_complete {
                write_state(&mut out, &mut red.state, view, true, 1)?;
                dirty = false;
            }
        }
        Ok(())
    };
    let stored = args.store.lines(false)?;
    let sources = match stored {
        Some(_) => Vec::new(),
        None => crate::input::group_conversations(crate::input::expand_dirs(
            &args.input.sources(),
            &mut diag,
        )),
    };
    let jobs = match args.jobs {
        Some(n) => usize::from(n),
        None if stored.is_some() => 1,
        None => crate::parallel::default_jobs(&sources, opts.flush),
    };
    if let Some((lines, name)) = stored {
        // The events of a store (`--db`): InsightsEvent lines, read as a file of them is.
        let rdr = SourceLines::one(Box::new(lines), name.clone(), opts.max_line);
        read_lines(rdr, &name, &opts, &mut diag, &mut red, &mut each)?;
    }
    for src in &sources {
        // A conversation in several files is merged line by line on one thread.
        if jobs > 1 && !src.is_group() {
            jobs::read_source(src, &opts, jobs, &mut diag, &mut red, &mut each)?;
        } else {
            read_source(src, &opts, &mut diag, &mut red, &mut each)?;
        }
        if red.stopped {
            break;
        }
    }
    if !follow || dirty {
        write_state(&mut out, &mut red.state, view, follow, jobs)?;
    }
    out.flush().context("cannot write to standard output")?;
    // The process ends here: freeing a large state entry by entry would only cost time.
    std::mem::forget(red);
    Ok(if diag.io_errors > 0 {
        ExitCode::from(2)
    } else if diag.bad_lines > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Entries and sessions from which the pretty state is written on two threads, when `--jobs`
/// allows (the text is the same).
const SPLIT_AT: usize = 4096;

/// Writes the state: one JSON line when following, pretty JSON otherwise, or the summary.
fn write_state<W: Write>(
    out: &mut Out<W>,
    st: &mut State,
    view: View,
    line: bool,
    jobs: usize,
) -> anyhow::Result<()> {
    st.finish();
    let res = match view {
        View::State if line => out.json_line(st),
        View::State => {
            let mut buf = Vec::with_capacity(crate::json_writer::SPILL_AT + 4096);
            let write = if jobs > 1 && st.entries.len() + st.tree.sessions.len() >= SPLIT_AT {
                crate::json_writer::write_pretty_split
            } else {
                crate::json_writer::write_pretty
            };
            write(&mut out.w, &mut buf, st).and_then(|_| out.w.write_all(b"\n"))
        }
        View::Summary => {
            let text = summary::render(st);
            out.w.write_all(text.as_bytes()).and_then(|_| {
                if line {
                    out.w.write_all(b"\n")
                } else {
                    Ok(())
                }
            })
        }
    };
    res.and_then(|_| if line { out.flush() } else { Ok(()) })
        .context("cannot write to standard output")
}
