//! From events to a transcript: what to show, in which order, attached to which tool call.
//!
//! [`Model`] reads InsightsEvents one at a time and emits [`Block`]s, the units of a transcript
//! (a prompt, a tool card's start, its result, a diff, a turn footer, …). It knows nothing of
//! colour or layout; the terminal and Markdown writers do. Every string in a block has been
//! through [`clean`], so writers may print it as it is.
//!
//! Rules that shape the transcript:
//!
//! * **Streamed text is shown once.** `stream_delta` text is held per agent and content block.
//!   When the block's final event comes (Claude Code's `text` or `tool_invocation`), the held
//!   deltas are dropped and the final event is shown. When the agent goes on without one (ACP
//!   and Gemini stream text only as deltas), the held text becomes the block: at the agent's
//!   next block, message or other content, or at the end of the turn. A final `text` that
//!   repeats text shown that way is left out. Text held when the input ends is shown, once, as
//!   a [`Block::Partial`]. A live terminal shows the held text in a one-line ticker
//!   ([`Model::live`]).
//! * **Cards.** A tool call is a card: [`Block::ToolStart`], then the blocks about the call
//!   (permission request and decision, plan, result, diff, subagent summary). Each carries a
//!   [`Card`] whose `attached` says whether it directly follows its call's earlier blocks; when
//!   it does not (parallel calls, subagent traffic in between), writers repeat the card's head.
//! * **Subagents.** Events with `parentCallId` are nested one level deeper than the call that
//!   spawned them (`depth`).
//! * **Usage.** `usage_update` repeats per content block of one message, so it is never added
//!   up: the last one of the main agent gives the context in use (by the definition `reduce`
//!   shares, [`crate::event::context_in_use`]), and token and cost totals
//!   come from `turn_complete` alone. Its per-model figures, cost and API time are running
//!   totals of the agent process, whose increase is the turn's, or (ACP's) the turn's own, by
//!   the rule `reduce` follows ([`crate::event::running_turn_totals`]).
//! * **Held blocks.** Before the first session header, prompts and one-line notes wait for it
//!   (the first prompt of an SDK session, and Claude's SessionStart hooks, come before the
//!   session's `session_init`). A subagent's `tool_completion` waits for one event, its
//!   `subagent_complete` from the same input line, so that the card gets one status line.

use super::text::{clean, one_line};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::Instant;

/// The head of a tool card: what is called, and on what.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHead {
    /// The ToolKind (`execute`, `read`, …), which picks the card's glyph and colour.
    pub kind: String,
    pub name: String,
    /// The salient input: the command, the path, the pattern, the URL… (may span lines).
    pub salient: String,
    /// The call's title, when it says more than `salient`.
    pub title: Option<String>,
}

/// Where a block about a tool call belongs.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    pub head: ToolHead,
    /// Directly below the call's previous block; otherwise writers repeat `head`.
    pub attached: bool,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Failed,
    Denied,
    Cancelled,
    Interrupted,
    /// No result when the input ended.
    Running,
    /// Started in the background (Claude Code's `run_in_background`): its end, when the
    /// input tells it, is drawn where it comes.
    Background,
}

/// The tone of a one-line status message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Quiet,
    Warn,
    Bad,
}

/// What unfinished streamed text was.
#[derive(Debug, Clone, PartialEq)]
pub enum PartialKind {
    Text,
    Thinking,
    ToolInput(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub provider: String,
    pub model: Option<String>,
    pub cwd: Option<String>,
    pub mode: Option<String>,
    pub version: Option<String>,
    pub session: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Tokens {
    /// `12 in · 34 out · 5,600 cache read · 7,800 cache write` (cache counts when not 0).
    pub fn summary(&self) -> String {
        use super::text::thousands;
        let mut parts = vec![
            format!("{} in", thousands(self.input)),
            format!("{} out", thousands(self.output)),
        ];
        if self.cache_read > 0 {
            parts.push(format!("{} cache read", thousands(self.cache_read)));
        }
        if self.cache_write > 0 {
            parts.push(format!("{} cache write", thousands(self.cache_write)));
        }
        parts.join(" · ")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelLine {
    pub name: String,
    /// The turn's cost (`None` when only the session's total is known).
    pub cost: Option<f64>,
    /// The session's cost so far, when the agent reports running totals (Claude Code does,
    /// in a session of several turns).
    pub session_cost: Option<f64>,
    /// Input and output tokens, shown when several models took part.
    pub tokens: Option<(u64, u64)>,
    /// Tokens in the context at the last request, and the context window.
    pub context: Option<(u64, Option<u64>)>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Footer {
    /// Neither failed nor cancelled.
    pub ok: bool,
    /// The word an interrupt or a cancel ended the turn with (`interrupted`, `cancelled`):
    /// such a turn is not shown as failed ([`crate::event::cancelled_turn`]).
    pub cancelled: Option<String>,
    pub turn: u64,
    /// The provider's result subtype when the turn failed.
    pub subtype: Option<String>,
    pub duration_ms: Option<u64>,
    pub api_ms: Option<u64>,
    pub steps: Option<u64>,
    pub tokens: Option<Tokens>,
    pub models: Vec<ModelLine>,
    pub cost: Option<f64>,
    /// The session's cost so far, when costs are running totals.
    pub session_cost: Option<f64>,
    pub errors: Vec<String>,
    pub denials: Vec<String>,
    pub stop: Option<String>,
    /// The turn's result text, when the transcript has not shown it already.
    pub result: Option<String>,
}

/// One unit of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Header(Header),
    /// The session's model, mode or directory changed.
    SessionChange {
        changes: Vec<String>,
        attached: bool,
    },
    Prompt {
        depth: usize,
        text: String,
        /// Written by the agent on the user's behalf, or replayed.
        synthetic: bool,
    },
    Text {
        depth: usize,
        text: String,
    },
    Thinking {
        depth: usize,
        text: String,
    },
    /// Streamed text whose final event never came.
    Partial {
        depth: usize,
        kind: PartialKind,
        text: String,
    },
    ToolStart {
        depth: usize,
        head: ToolHead,
    },
    ToolEnd {
        depth: usize,
        card: Card,
        status: Status,
        duration_ms: Option<u64>,
        output: String,
        /// Standard error, or the error text of a call that did not succeed.
        errors: String,
        /// The permission decision just above already said how the call ended (denied,
        /// cancelled): writers leave out the status word, so that each call has one.
        decided: bool,
    },
    Diff {
        depth: usize,
        card: Option<Card>,
        path: String,
        change: String,
        move_path: Option<String>,
        diff: Option<String>,
        /// The change was proposed and never made (its approval was declined or cancelled):
        /// writers mark it as not applied.
        proposed: bool,
    },
    Permission {
        depth: usize,
        card: Card,
        reason: Option<String>,
        blocked_path: Option<String>,
        suggestions: Vec<String>,
    },
    Decision {
        depth: usize,
        card: Option<Card>,
        decision: String,
        message: Option<String>,
    },
    Plan {
        depth: usize,
        card: Option<Card>,
        /// (status, content): `pending`, `in_progress` or `completed`.
        entries: Vec<(String, String)>,
        explanation: Option<String>,
    },
    SubagentDone {
        depth: usize,
        card: Card,
        status: Status,
        duration_ms: Option<u64>,
        tokens: Option<u64>,
        tool_uses: Option<u64>,
        summary: String,
    },
    Compaction {
        trigger: String,
        pre: Option<u64>,
        post: Option<u64>,
        duration_ms: Option<u64>,
    },
    Status {
        depth: usize,
        attached: bool,
        tone: Tone,
        text: String,
    },
    Error {
        depth: usize,
        warning: bool,
        message: String,
        details: Vec<String>,
    },
    Hook {
        depth: usize,
        attached: bool,
        name: String,
        ok: bool,
        outcome: String,
        output: String,
    },
    Notice {
        depth: usize,
        text: String,
    },
    Footer(Footer),
}

impl Block {
    /// The card a block continues, if any.
    pub fn card(&self) -> Option<&Card> {
        match self {
            Block::ToolEnd { card, .. }
            | Block::Permission { card, .. }
            | Block::SubagentDone { card, .. } => Some(card),
            Block::Diff { card, .. } | Block::Decision { card, .. } | Block::Plan { card, .. } => {
                card.as_ref()
            }
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
struct Session {
    /// Its header was shown.
    shown: bool,
    model: Option<String>,
    cwd: Option<String>,
    mode: Option<String>,
    turns: u64,
    /// The running totals of the cost reported at the last turn's end, overall and per model
    /// ([`crate::event::running_turn_totals`]), each with the sum of earlier runs.
    cost: Running,
    models: HashMap<String, ModelRun>,
    /// `durationApiMs` reported at the last turn's end: a running total of the run, as the
    /// cost is (Claude Code adds every request of its process).
    api_ms: Option<u64>,
}

/// One running total a provider reports (the cost, a model's tokens): its last report in the
/// current run of the agent process, and the sum of earlier runs.
#[derive(Debug, Default, Clone, Copy)]
struct Running {
    last: Option<f64>,
    base: f64,
}

impl Running {
    /// A new report: the turn's share of it (its increase since the last, or all of a report
    /// of a new run: lower than the last, or `new_run`) and the session's total so far (`None`
    /// at the first report, which is all the turn's).
    fn report(&mut self, now: f64, new_run: bool) -> (f64, Option<f64>) {
        let share = match self.last {
            Some(last) if !new_run && now >= last => (now - last, Some(self.base + now)),
            Some(last) => {
                self.base += last;
                (now, Some(self.base + now))
            }
            None => (now, None),
        };
        self.last = Some(now);
        share
    }
}

/// The running totals of one model's `modelUsage`.
#[derive(Debug, Default, Clone, Copy)]
struct ModelRun {
    input: Running,
    output: Running,
    cost: Running,
}

#[derive(Debug)]
struct Call {
    head: ToolHead,
    depth: usize,
    started_ms: Option<i64>,
    elapsed_ms: Option<u64>,
    decision: Option<String>,
    /// The message that came with the decision.
    decision_message: Option<String>,
    /// The input as compact JSON: an output that only repeats it is not shown.
    input: String,
    spawned: bool,
    interrupted: bool,
    done: bool,
    seen: Instant,
    /// A `tool_update` refined the head (ACP sends the command or path after the call
    /// began): the call's next block shows the head again.
    refined: bool,
    /// The change its input proposed was shown, marked not applied.
    proposed: bool,
    /// The end of the background task it started was shown.
    task_ended: bool,
    /// Only a permission request (a question) opened the card: no call was announced.
    asked_only: bool,
}

impl Call {
    fn new(head: ToolHead, depth: usize) -> Call {
        Call {
            head,
            depth,
            started_ms: None,
            elapsed_ms: None,
            decision: None,
            decision_message: None,
            input: String::new(),
            spawned: false,
            interrupted: false,
            done: false,
            seen: Instant::now(),
            refined: false,
            proposed: false,
            task_ended: false,
            asked_only: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum StreamKind {
    Text,
    Thinking,
    ToolInput,
}

/// Streamed text of one content block, waiting for its final event.
#[derive(Debug)]
struct Stream {
    parent: Option<String>,
    message: Option<String>,
    index: Option<u64>,
    kind: StreamKind,
    call: Option<String>,
    tool: Option<String>,
    text: String,
}

/// A subagent's result, held back for one event (see the module documentation).
#[derive(Debug)]
struct Held {
    call: String,
    block: Block,
}

#[derive(Debug, Default)]
struct Turn {
    /// Texts and errors shown in this turn, to leave out a result that repeats them.
    shown: Vec<String>,
    /// Paths whose change a call of this turn has shown.
    changed: std::collections::BTreeSet<String>,
    /// The turn's cumulative diff per path (Codex's `turn/diff/updated`): each replaces the
    /// one before; shown once, at the end of the turn, for paths no call has shown.
    cumulative: std::collections::BTreeMap<String, Block>,
    /// The context in use at the main agent's last request.
    context: Option<Ctx>,
}

/// The context in use at the main agent's last request ([`crate::event::context_in_use`]),
/// that request's model, and the context window its usage_update named.
#[derive(Debug)]
struct Ctx {
    used: u64,
    model: Option<String>,
    window: Option<u64>,
}

/// The transcript's state: sessions, tool calls, streams, the current turn.
#[derive(Default)]
pub struct Model {
    /// Every event fed to `reduce` too: footers show its figures.
    figures: super::figures::Figures,
    sessions: HashMap<String, Session>,
    current: Option<String>,
    headers: u64,
    calls: HashMap<String, Call>,
    order: Vec<String>,
    requests: HashMap<String, String>,
    streams: Vec<Stream>,
    /// The message being streamed, per agent (`None` is the main agent).
    messages: HashMap<Option<String>, String>,
    last_stream: Option<usize>,
    /// Streams shown before a final event came, (parent, kind, text): a final `text` that
    /// arrives after all repeats one of them and is not shown again.
    flushed: Vec<(Option<String>, StreamKind, String)>,
    held: Option<Held>,
    /// Prompts and notes that came before the first session header.
    early: Vec<Block>,
    turn: Turn,
    /// The call whose card the last block belongs to.
    last_call: Option<String>,
    /// A call that began without its input (ACP agents send it in a `tool_update` right
    /// after): its head is drawn once that comes, or before anything else is drawn, so that
    /// each call has one card.
    pending: Option<String>,
    /// A call whose permission request came before its `tool_use` and named no parent while
    /// a subagent ran (Claude's SDK asks before it reports a subagent's call): its blocks wait
    /// for the call, which says where it belongs, or until anything else is drawn.
    parked: Option<(String, Vec<Block>)>,
    out: Vec<Block>,
}

fn st<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k)?.as_str()
}

fn num(v: &Value, k: &str) -> Option<u64> {
    v.get(k)?.as_u64()
}

/// A cleaned, non-empty string member.
fn text_of(v: &Value, k: &str) -> Option<String> {
    st(v, k).map(clean).filter(|s| !s.trim().is_empty())
}

/// JSON on one line, with a space after each `,` and `:` so that it wraps between members.
fn compact(v: &Value) -> String {
    use serde::Serialize;
    struct Spaced;
    impl serde_json::ser::Formatter for Spaced {
        fn begin_array_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first {
                Ok(())
            } else {
                w.write_all(b", ")
            }
        }
        fn begin_object_key<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first {
                Ok(())
            } else {
                w.write_all(b", ")
            }
        }
        fn begin_object_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
        ) -> std::io::Result<()> {
            w.write_all(b": ")
        }
    }
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, Spaced);
    if v.serialize(&mut ser).is_err() {
        return String::new();
    }
    clean(&String::from_utf8_lossy(&buf))
}

impl Model {
    pub fn new() -> Self {
        Model::default()
    }

    /// The blocks emitted since the last call.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Block> {
        self.out.drain(..)
    }

    /// Draws the head of the call that waited for its input, if any.
    fn start_pending(&mut self) {
        if let Some(id) = self.pending.take() {
            if let Some(c) = self.calls.get(&id) {
                let (depth, head) = (c.depth, c.head.clone());
                self.emit_card(Some(&id), Block::ToolStart { depth, head });
            }
        }
    }

    /// Draws the blocks of a parked call, nested `depth` when its call said where it belongs.
    fn unpark(&mut self, depth: Option<usize>) {
        let Some((id, blocks)) = self.parked.take() else {
            return;
        };
        if let (Some(d), Some(c)) = (depth, self.calls.get_mut(&id)) {
            c.depth = d;
        }
        for mut b in blocks {
            if let Some(d) = depth {
                set_depth(&mut b, d);
            }
            self.emit_card(Some(&id), b);
        }
    }

    fn emit(&mut self, b: Block) {
        self.unpark(None);
        self.start_pending();
        if self.headers == 0 {
            let early = matches!(
                b,
                Block::Prompt { depth: 0, .. }
                    | Block::Hook {
                        attached: false,
                        ..
                    }
                    | Block::Notice { .. }
                    | Block::Status {
                        attached: false,
                        ..
                    }
            );
            if early {
                self.early.push(b);
                return;
            }
        }
        if !self.early.is_empty() && !matches!(b, Block::Header(_)) {
            self.out.append(&mut self.early);
        }
        let header = matches!(b, Block::Header(_));
        self.last_call = match &b {
            Block::ToolStart { .. } => self.last_call.take(),
            Block::Status { attached: true, .. }
            | Block::Hook { attached: true, .. }
            | Block::SessionChange { attached: true, .. } => self.last_call.take(),
            b if b.card().is_some() => self.last_call.take(),
            _ => None,
        };
        self.out.push(b);
        if header {
            self.out.append(&mut self.early);
        }
    }

    fn emit_card(&mut self, call: Option<&str>, b: Block) {
        if let (Some(c), Some((id, blocks))) = (call, &mut self.parked) {
            if c == id {
                blocks.push(b);
                self.last_call = Some(c.to_string());
                return;
            }
        }
        self.emit(b);
        if let Some(c) = call.and_then(|c| self.calls.get_mut(c)) {
            c.refined = false;
        }
        self.last_call = call.map(str::to_string);
    }

    fn card(&self, call: &str) -> Option<Card> {
        let c = self.calls.get(call)?;
        Some(Card {
            head: c.head.clone(),
            attached: self.last_call.as_deref() == Some(call) && !c.refined,
        })
    }

    fn depth_of(&self, parent: Option<&str>) -> usize {
        match parent {
            None => 0,
            Some(p) => self.calls.get(p).map_or(1, |c| c.depth + 1),
        }
    }

    fn cwd(&self) -> Option<&str> {
        let s = self.sessions.get(self.current.as_deref()?)?;
        s.cwd.as_deref()
    }

    /// A path relative to the session's directory when it lies inside it.
    fn rel(&self, p: &str) -> String {
        if let Some(cwd) = self.cwd() {
            if let Some(r) = p.strip_prefix(cwd).and_then(|r| r.strip_prefix('/')) {
                if !r.is_empty() {
                    return clean(r);
                }
            }
        }
        clean(p)
    }

    /// A diff as the transcript shows it: header paths of files under the session's
    /// directory relative to it (`a/src/x.rs`), so that `git apply` takes it there; others
    /// from the root, as git writes them (`a/etc/x`, for `git apply` run from `/`).
    fn diff_text(&self, diff: &str) -> String {
        match self
            .cwd()
            .map(|c| c.trim_matches('/'))
            .filter(|c| !c.is_empty())
        {
            Some(root) => clean(&crate::diff::rebase(diff, &format!("{root}/"), "")),
            None => clean(diff),
        }
    }

    /// Reads one event (a parsed InsightsEvent line).
    pub fn event(&mut self, ev: &Value) {
        self.figures.feed(ev);
        self.shown(ev);
    }

    /// [`Model::event`] of an event read from `line`.
    pub fn event_line(&mut self, line: &str, ev: &Value) {
        self.figures.feed_line(line);
        self.shown(ev);
    }

    fn shown(&mut self, ev: &Value) {
        let kind = st(ev, "event").unwrap_or("");
        if let Some(Held { call, block }) = self.held.take() {
            if kind == "subagent_complete" && st(ev, "callId") == Some(call.as_str()) {
                self.subagent_complete(ev, Some(block));
                return;
            }
            self.emit_card(Some(&call), block);
        }
        self.dispatch(kind, ev);
    }

    fn dispatch(&mut self, kind: &str, ev: &Value) {
        if self.pending.is_some() {
            match kind {
                "tool_update" if st(ev, "callId") == self.pending.as_deref() => {
                    self.tool_update(ev);
                    return self.start_pending();
                }
                "stream_delta" | "usage_update" | "tool_update" | "turn_start"
                | "config_options" | "available_commands" => {}
                _ => self.start_pending(),
            }
        }
        let parent = st(ev, "parentCallId");
        let depth = self.depth_of(parent);
        // Other content ends the text its agent was streaming: when no final `text` came for
        // it (providers that stream only deltas), the streamed text is the text.
        if matches!(
            kind,
            "user_input"
                | "tool_invocation"
                | "tool_completion"
                | "subagent_spawn"
                | "subagent_complete"
                | "file_change"
                | "permission_request"
                | "permission_response"
                | "plan_update"
                | "context_compaction"
                | "error"
        ) || (kind == "session_status"
            && matches!(st(ev, "status"), Some("interrupted" | "error" | "ended")))
        {
            self.flush_streams(|s| s.parent.as_deref() == parent, false);
        }
        match kind {
            "session_init" => self.session_init(ev),
            "user_input" => self.user_input(ev, depth),
            "text" => self.text(ev, depth),
            "tool_invocation" => self.tool_invocation(ev, depth),
            "tool_completion" => self.tool_completion(ev),
            "subagent_spawn" => self.subagent_spawn(ev, depth),
            "subagent_complete" => self.subagent_complete(ev, None),
            "file_change" => self.file_change(ev, depth),
            "permission_request" => self.permission_request(ev, depth),
            "permission_response" => self.permission_response(ev, depth),
            "plan_update" => self.plan_update(ev, depth),
            "context_compaction" => {
                // The main agent's context is what the compaction left, until its next request.
                if let (None, Some(used)) = (parent, num(ev, "postTokens")) {
                    let window = self.turn.context.as_ref().and_then(|c| c.window);
                    self.turn.context = Some(Ctx {
                        used,
                        model: None,
                        window,
                    });
                }
                self.emit(Block::Compaction {
                    trigger: st(ev, "trigger").map(clean).unwrap_or_default(),
                    pre: num(ev, "preTokens"),
                    post: num(ev, "postTokens"),
                    duration_ms: num(ev, "durationMs"),
                });
            }
            "session_status" => self.session_status(ev, depth),
            "session_mode" => self.session_mode(ev),
            "stream_delta" => self.stream_delta(ev),
            // The main agent's context; a subagent's is its own.
            "usage_update" if parent.is_none() => {
                let u = ev.get("stepUsage").unwrap_or(&Value::Null);
                let used = crate::event::context_in_use(
                    num(ev, "contextTokens"),
                    num(u, "input_tokens"),
                    num(u, "cache_read_input_tokens"),
                    num(u, "cache_creation_input_tokens"),
                    num(u, "output_tokens"),
                );
                let window = num(ev, "contextWindow");
                match (used, &mut self.turn.context) {
                    (Some(used), c) => {
                        let window = window.or(c.as_ref().and_then(|c| c.window));
                        *c = Some(Ctx {
                            used,
                            model: st(ev, "model").map(str::to_string),
                            window,
                        });
                    }
                    (None, Some(c)) => c.window = window.or(c.window),
                    (None, None) => {}
                }
            }
            "rate_limit_update" => self.rate_limit(ev),
            "tool_update" => self.tool_update(ev),
            "error" => self.error(ev, depth),
            "task_update" => self.task_update(ev, depth),
            "hook" => self.hook(ev, depth),
            "notice" => self.notice(ev, depth),
            "raw" => {
                let line = num(ev, "line")
                    .map(|l| format!(" on line {l}"))
                    .unwrap_or_default();
                let why = text_of(ev, "reason").unwrap_or_default();
                self.emit(Block::Notice {
                    depth: 0,
                    text: format!("unrecognised input{line}: {}", one_line(&why)),
                });
            }
            "turn_complete" => self.turn_complete(ev),
            // turn_start, config_options, available_commands, and types added later.
            _ => {}
        }
    }

    /// Folds what a `tool_update` tells into its call: the time it has run, and a refined
    /// title or input (the call's next block then shows the new head).
    fn tool_update(&mut self, ev: &Value) {
        let Some(id) = st(ev, "callId") else { return };
        let input = ev.get("input").filter(|i| !i.is_null());
        let title = st(ev, "title");
        let refined = match self.calls.get(id) {
            Some(c) if input.is_some() || title.is_some() => {
                let name = st(ev, "toolName").unwrap_or(&c.head.name).to_string();
                let kind = c.head.kind.clone();
                let title = title.map(str::to_string).or_else(|| c.head.title.clone());
                let head = match input {
                    Some(i) => self.tool_head(&name, &kind, i, title.as_deref()),
                    None if c.head.salient.is_empty()
                        || title.as_deref() == Some(&c.head.salient) =>
                    {
                        self.tool_head(&name, &kind, &Value::Null, title.as_deref())
                    }
                    None => ToolHead {
                        title: title.filter(|t| *t != c.head.salient).map(|t| clean(&t)),
                        ..c.head.clone()
                    },
                };
                (head != c.head && !head.salient.is_empty()).then_some(head)
            }
            _ => None,
        };
        let Some(c) = self.calls.get_mut(id) else {
            return;
        };
        if let Some(e) = num(ev, "elapsedMs") {
            c.elapsed_ms = Some(c.elapsed_ms.map_or(e, |x| x.max(e)));
        }
        if let Some(head) = refined {
            if let Some(i) = input {
                c.input = i.to_string();
            }
            c.head = head;
            c.refined = true;
        }
    }

    /// The end of the input: held blocks, cut-off streams and calls without a result.
    pub fn finish(&mut self) {
        self.unpark(None);
        if let Some(Held { call, block }) = self.held.take() {
            self.emit_card(Some(&call), block);
        }
        self.flush_streams(|_| true, true);
        let early = std::mem::take(&mut self.early);
        self.out.extend(early);
        self.close_calls();
        self.cumulative_diffs();
    }

    /// The turn's cumulative diffs of the paths no call has shown, once each.
    fn cumulative_diffs(&mut self) {
        let cumulative = std::mem::take(&mut self.turn.cumulative);
        for (path, block) in cumulative {
            if !self.turn.changed.contains(&path) {
                self.emit(block);
            }
        }
    }

    /// Ends the cards of calls without a result, at the end of their turn or of the input.
    fn close_calls(&mut self) {
        self.start_pending();
        for id in std::mem::take(&mut self.order) {
            let Some(card) = self.card(&id) else { continue };
            let c = self.calls.get_mut(&id).expect("call exists");
            let answered = c.asked_only && c.decision.is_some();
            if c.done || answered {
                // A question that was answered and never became a call has said all
                // there is: its answer (no call for `reduce` either).
                c.done = true;
                continue;
            }
            c.done = true;
            let status = if c.interrupted {
                Status::Interrupted
            } else {
                Status::Running
            };
            let depth = c.depth;
            self.emit_card(
                Some(&id),
                Block::ToolEnd {
                    depth,
                    card,
                    status,
                    duration_ms: None,
                    output: String::new(),
                    errors: String::new(),
                    decided: false,
                },
            );
        }
    }

    fn session_init(&mut self, ev: &Value) {
        let sid = st(ev, "sessionId").unwrap_or("");
        let model = text_of(ev, "model");
        let cwd = st(ev, "cwd").filter(|s| !s.is_empty()).map(str::to_string);
        let mode = text_of(ev, "permissionMode");
        if sid.is_empty() && model.is_none() && cwd.is_none() {
            return; // an SDK initialize answer: commands and account only
        }
        self.current = Some(sid.to_string());
        let s = self.sessions.entry(sid.to_string()).or_default();
        if !s.shown {
            s.shown = true;
            s.model = model.clone();
            s.cwd = cwd.clone();
            let mode = mode.or_else(|| s.mode.clone());
            s.mode = mode.clone();
            self.headers += 1;
            self.emit(Block::Header(Header {
                provider: st(ev, "provider").map(clean).unwrap_or_default(),
                model,
                cwd: cwd.map(|c| clean(&c)),
                mode,
                version: text_of(ev, "version"),
                session: clean(sid),
            }));
            return;
        }
        let mut changes = Vec::new();
        if model.is_some() && model != s.model {
            changes.push(format!("model → {}", model.clone().unwrap_or_default()));
            s.model = model;
        }
        if mode.is_some() && mode != s.mode {
            changes.push(format!(
                "permission mode → {}",
                mode.clone().unwrap_or_default()
            ));
            s.mode = mode;
        }
        if cwd.is_some() && cwd != s.cwd {
            changes.push(format!(
                "directory → {}",
                clean(cwd.as_deref().unwrap_or(""))
            ));
            s.cwd = cwd;
        }
        if !changes.is_empty() {
            self.emit(Block::SessionChange {
                changes,
                attached: false,
            });
        }
    }

    fn session_mode(&mut self, ev: &Value) {
        let Some(mode) = text_of(ev, "currentModeId") else {
            return;
        };
        let sid = st(ev, "sessionId").unwrap_or("");
        let key = if sid.is_empty() {
            self.current.clone().unwrap_or_default()
        } else {
            sid.to_string()
        };
        let s = self.sessions.entry(key).or_default();
        if s.mode.as_deref() == Some(mode.as_str()) {
            return;
        }
        let before = s.mode.replace(mode.clone());
        if !s.shown || before.is_none() {
            return; // the header tells, or it is the first word on the mode
        }
        let attached = self.last_call.is_some();
        self.emit(Block::SessionChange {
            changes: vec![format!("permission mode → {mode}")],
            attached,
        });
    }

    fn user_input(&mut self, ev: &Value, depth: usize) {
        let mut text = st(ev, "text").map(clean).unwrap_or_default();
        if let Some(n) = ev.get("images").and_then(Value::as_array).map(Vec::len) {
            if n > 0 {
                let s = if n == 1 { "" } else { "s" };
                text.push_str(&format!(
                    "{}[{n} image{s}]",
                    if text.is_empty() { "" } else { " " }
                ));
            }
        }
        let synthetic = ev.get("isSynthetic") == Some(&Value::Bool(true))
            || ev.pointer("/extensions/isReplay") == Some(&Value::Bool(true));
        self.emit(Block::Prompt {
            depth,
            text,
            synthetic,
        });
    }

    fn text(&mut self, ev: &Value, depth: usize) {
        let text = st(ev, "text").map(clean).unwrap_or_default();
        let kind = st(ev, "kind").unwrap_or("text");
        let parent = st(ev, "parentCallId");
        let sk = if kind == "thinking" {
            StreamKind::Thinking
        } else {
            StreamKind::Text
        };
        self.take_stream(parent, st(ev, "messageId"), sk, None);
        if text.trim().is_empty() {
            return;
        }
        let shown = self
            .flushed
            .iter()
            .position(|(p, k, t)| p.as_deref() == parent && *k == sk && t == text.trim());
        if let Some(i) = shown {
            self.flushed.remove(i);
            return; // its deltas were shown already
        }
        match kind {
            "thinking" => self.emit(Block::Thinking { depth, text }),
            "error" => {
                self.turn.shown.push(text.trim().to_string());
                self.emit(Block::Error {
                    depth,
                    warning: false,
                    message: text,
                    details: Vec::new(),
                });
            }
            _ => {
                self.turn.shown.push(text.trim().to_string());
                self.emit(Block::Text { depth, text });
            }
        }
    }

    fn tool_head(&self, name: &str, kind: &str, input: &Value, title: Option<&str>) -> ToolHead {
        let mut salient = self.salient(input);
        let mut title = title;
        // A shell wrapper (`/bin/bash -lc '…'`) whose title is the command it runs, as the
        // converter read it: the title is what a person reads.
        if let Some(t) = title.filter(|t| {
            kind == "execute"
                && !t.trim().is_empty()
                && (salient.contains(" -lc ") || salient.contains(" -c "))
                && salient != *t
        }) {
            let inner = clean(t);
            if salient.contains(inner.trim()) || salient.contains(&inner.replace('\'', "'\\''")) {
                salient = inner.trim().to_string();
                title = None;
            }
        }
        if salient.is_empty() {
            // No input yet (ACP agents send it later): the title says what the call does.
            salient = title
                .map(clean)
                .filter(|t| t.trim() != name.trim())
                .unwrap_or_default();
            title = None;
        }
        let title = title
            .map(clean)
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .filter(|t| {
                let rt = self.rel(t);
                rt != salient
                    && !salient.contains(t.as_str())
                    && !salient.contains(rt.as_str())
                    && !t.contains(salient.as_str())
            });
        ToolHead {
            kind: clean(kind),
            name: clean(name),
            salient,
            title,
        }
    }

    /// The input that says what a call does: the command, the path, the pattern, the URL, …
    fn salient(&self, input: &Value) -> String {
        let Some(o) = input.as_object() else {
            return match input {
                Value::Null => String::new(),
                Value::String(s) => clean(s),
                v => compact(v),
            };
        };
        let s = |k: &str| o.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        let path = s("file_path").or(s("notebook_path")).or(s("path"));
        if let Some(c) = s("command").or(s("cmd")) {
            return clean(c);
        }
        if let Some(p) = s("pattern") {
            let mut out = clean(p);
            if let Some(path) = path {
                out.push_str(&format!(" in {}", self.rel(path)));
            }
            if let Some(g) = s("glob") {
                out.push_str(&format!(" ({})", clean(g)));
            }
            return out;
        }
        // A change of several files (Codex's patch) names them all, not its first.
        if let Some(changes) = o.get("changes").and_then(Value::as_array) {
            let paths: Vec<String> = changes
                .iter()
                .filter_map(|c| st(c, "path"))
                .map(|p| self.rel(p))
                .collect();
            if paths.len() > 1 || (path.is_none() && !paths.is_empty()) {
                return paths.join(", ");
            }
        }
        if let Some(p) = path {
            return self.rel(p);
        }
        if let Some(u) = s("url").or(s("query")) {
            return clean(u);
        }
        if let Some(subject) = s("subject") {
            return clean(subject);
        }
        if let Some(d) = s("description") {
            return match s("subagent_type") {
                Some(t) => format!("{} ({})", clean(d), clean(t)),
                None => clean(d),
            };
        }
        if let Some(todos) = o.get("todos").and_then(Value::as_array) {
            let n = todos.len();
            return format!("{n} item{}", if n == 1 { "" } else { "s" });
        }
        if let Some(id) = s("taskId") {
            return match s("status") {
                Some(st) => format!("#{} → {}", clean(id), clean(st)),
                None => format!("#{}", clean(id)),
            };
        }
        if let Some(p) = s("prompt") {
            return one_line(&clean(p));
        }
        if let Some(first) = o.values().find_map(Value::as_str).filter(|s| !s.is_empty()) {
            return clean(first);
        }
        if o.is_empty() {
            String::new()
        } else {
            compact(input)
        }
    }

    fn tool_invocation(&mut self, ev: &Value, depth: usize) {
        let Some(id) = st(ev, "callId") else { return };
        let mut name = st(ev, "toolName").unwrap_or("tool").to_string();
        if let (Some(server), Some(tool)) = (st(ev, "mcpServer"), st(ev, "mcpTool")) {
            name = format!("{server}/{tool}");
        }
        let head = self.tool_head(
            &name,
            st(ev, "kind").unwrap_or("other"),
            ev.get("input").unwrap_or(&Value::Null),
            st(ev, "title"),
        );
        self.take_stream(
            st(ev, "parentCallId"),
            None,
            StreamKind::ToolInput,
            Some(id),
        );
        if self.parked.as_ref().is_some_and(|(p, _)| p == id) {
            self.unpark(Some(depth));
        }
        // A call whose card a permission request opened just now goes on in it.
        let continues = self.last_call.as_deref() == Some(id);
        let before = self.calls.remove(id);
        if before.is_none() {
            self.order.push(id.to_string());
        }
        let (decision, decision_message, proposed) = before
            .map(|c| (c.decision, c.decision_message, c.proposed))
            .unwrap_or_default();
        self.calls.insert(
            id.to_string(),
            Call {
                started_ms: st(ev, "timestamp").and_then(crate::time::millis),
                input: ev.get("input").map(compact).unwrap_or_default(),
                decision,
                decision_message,
                proposed,
                ..Call::new(head.clone(), depth)
            },
        );
        let no_input = ev
            .get("input")
            .is_none_or(|i| i.is_null() || i.as_object().is_some_and(Map::is_empty));
        if !continues && no_input {
            self.start_pending();
            self.pending = Some(id.to_string());
        } else if !continues {
            self.emit_card(Some(id), Block::ToolStart { depth, head });
        }
    }

    /// A subagent starts. One the input announces without a call of its own (AceClaw's
    /// bridge names the subagent by its type) opens a card here, an `Agent` call with the
    /// subagent's type and prompt, as `reduce` makes it a call.
    fn subagent_spawn(&mut self, ev: &Value, depth: usize) {
        let Some(id) = st(ev, "callId") else { return };
        if !self.calls.contains_key(id) {
            let mut input = Map::new();
            for (from, to) in [("agentType", "subagent_type"), ("prompt", "prompt")] {
                if let Some(v) = ev.get(from).filter(|v| v.is_string()) {
                    input.insert(to.into(), v.clone());
                }
            }
            let mut call = Map::new();
            call.insert("callId".into(), id.into());
            call.insert("toolName".into(), "Agent".into());
            call.insert("kind".into(), "think".into());
            call.insert("input".into(), Value::Object(input));
            for k in ["timestamp", "parentCallId"] {
                if let Some(v) = ev.get(k) {
                    call.insert(k.into(), v.clone());
                }
            }
            if let Some(t) = ev.get("agentType").filter(|v| v.is_string()) {
                call.insert("title".into(), t.clone());
            }
            self.tool_invocation(&Value::Object(call), depth);
        }
        if let Some(c) = self.calls.get_mut(id) {
            c.spawned = true;
        }
    }

    /// A call the input never introduced (it began before the input did): its card opens
    /// with what is known, its id, as `reduce` makes it a call.
    fn unknown_call(&mut self, id: &str, depth: usize, name: Option<&str>) {
        if self.calls.contains_key(id) {
            return;
        }
        let head = ToolHead {
            kind: "other".into(),
            name: clean(name.unwrap_or("tool")),
            salient: clean(id),
            title: None,
        };
        self.calls
            .insert(id.to_string(), Call::new(head.clone(), depth));
        self.emit_card(Some(id), Block::ToolStart { depth, head });
    }

    fn tool_completion(&mut self, ev: &Value) {
        let Some(id) = st(ev, "callId") else { return };
        let depth = self.depth_of(st(ev, "parentCallId"));
        self.unknown_call(id, depth, None);
        let ended = st(ev, "timestamp").and_then(crate::time::millis);
        let card = self.card(id).expect("call exists");
        let c = self.calls.get_mut(id).expect("call exists");
        c.done = true;
        let denied = c.decision.as_deref().is_some_and(|d| d.starts_with("deny"));
        let background = c.input.contains("\"run_in_background\": true");
        let status = match st(ev, "status") {
            Some("completed") if background => Status::Background,
            Some("completed") => Status::Ok,
            _ if denied => Status::Denied,
            Some("cancelled") => Status::Cancelled,
            _ if c.interrupted => Status::Interrupted,
            _ => Status::Failed,
        };
        // Times of two clocks can meet here (a provider's, and the reading time of a log
        // converted later): a negative or day-long difference is not a duration.
        let duration_ms = c.elapsed_ms.or_else(|| {
            let (a, b) = (c.started_ms?, ended?);
            u64::try_from(b - a).ok().filter(|d| *d < 86_400_000)
        });
        let value = ev
            .get("output")
            .filter(|v| !v.is_null())
            .or_else(|| ev.get("content"))
            .unwrap_or(&Value::Null);
        let (mut output, mut errors) = output_text(value);
        if !c.input.is_empty() && output == c.input {
            output.clear();
        }
        if status != Status::Ok && errors.is_empty() {
            errors = std::mem::take(&mut output);
        }
        // The denial's message was shown with the decision.
        if status == Status::Denied
            && c.decision_message
                .as_deref()
                .is_some_and(|m| errors.trim().trim_start_matches("Error: ") == m.trim())
        {
            errors.clear();
        }
        // The decision above said it already: one status per call.
        let decided = card.attached
            && match (status, c.decision.as_deref()) {
                (Status::Denied, Some(d)) => d.starts_with("deny"),
                (Status::Cancelled, Some(d)) => d == "cancelled",
                _ => false,
            };
        let depth = c.depth;
        let block = Block::ToolEnd {
            depth,
            card,
            status,
            duration_ms,
            output,
            errors,
            decided,
        };
        if c.spawned {
            self.held = Some(Held {
                call: id.to_string(),
                block,
            });
        } else {
            self.emit_card(Some(id), block);
        }
    }

    fn subagent_complete(&mut self, ev: &Value, held: Option<Block>) {
        let Some(id) = st(ev, "callId") else { return };
        let depth = self.depth_of(st(ev, "parentCallId"));
        self.unknown_call(id, depth, Some("Agent"));
        // The subagent's own end, unless its call's end says worse: a call can return
        // normally with a subagent that failed (Claude's Agent whose model answered an API
        // error).
        let own = match st(ev, "status") {
            Some("completed" | "success" | "ok") | None => Status::Ok,
            Some("cancelled" | "killed" | "stopped") => Status::Cancelled,
            Some(_) => Status::Failed,
        };
        let (status, duration) = match &held {
            Some(Block::ToolEnd {
                status,
                duration_ms,
                ..
            }) if *status != Status::Ok => (*status, *duration_ms),
            Some(Block::ToolEnd { duration_ms, .. }) => (own, *duration_ms),
            _ => (own, None),
        };
        let mut summary = text_of(ev, "summary").unwrap_or_default();
        if summary.is_empty() {
            if let Some(Block::ToolEnd { output, errors, .. }) = &held {
                summary = if output.is_empty() {
                    errors.clone()
                } else {
                    output.clone()
                };
            }
        }
        let card = self.card(id).expect("call exists");
        let c = self.calls.get_mut(id).expect("call exists");
        c.done = true;
        let depth = c.depth;
        self.emit_card(
            Some(id),
            Block::SubagentDone {
                depth,
                card,
                status,
                duration_ms: num(ev, "durationMs").or(duration),
                tokens: num(ev, "totalTokens"),
                tool_uses: num(ev, "toolUseCount"),
                summary,
            },
        );
    }

    fn file_change(&mut self, ev: &Value, depth: usize) {
        let call = st(ev, "callId");
        let card = call.and_then(|c| self.card(c));
        let depth = call
            .and_then(|c| self.calls.get(c))
            .map_or(depth, |c| c.depth);
        let path = st(ev, "path").map(|p| self.rel(p)).unwrap_or_default();
        let move_path = st(ev, "movePath").map(|p| self.rel(p));
        if ev.get("cumulative") == Some(&Value::Bool(true)) {
            let block = Block::Diff {
                depth,
                card: None,
                path: path.clone(),
                change: st(ev, "changeKind").map(clean).unwrap_or_default(),
                move_path,
                diff: st(ev, "diff").map(|d| self.diff_text(d)),
                proposed: false,
            };
            self.turn.cumulative.insert(path, block);
            return;
        }
        self.turn.changed.insert(path.clone());
        self.emit_card(
            call.filter(|_| card.is_some()),
            Block::Diff {
                depth,
                card,
                path,
                change: st(ev, "changeKind").map(clean).unwrap_or_default(),
                move_path,
                diff: st(ev, "diff").map(|d| self.diff_text(d)),
                proposed: false,
            },
        );
    }

    fn permission_request(&mut self, ev: &Value, depth: usize) {
        let call = st(ev, "toolUseId")
            .map(str::to_string)
            .unwrap_or_else(|| format!("request:{}", st(ev, "requestId").unwrap_or("")));
        if let Some(r) = st(ev, "requestId") {
            self.requests.insert(r.to_string(), call.clone());
        }
        if !self.calls.contains_key(&call) {
            // The request comes first (ACP agents ask before they report the call): it
            // opens the card.
            let head = self.tool_head(
                st(ev, "toolName").unwrap_or("tool"),
                st(ev, "toolKind").unwrap_or("other"),
                ev.get("toolInput").unwrap_or(&Value::Null),
                st(ev, "title"),
            );
            let has_call = st(ev, "toolUseId").is_some();
            if has_call {
                self.order.push(call.clone());
            }
            let subagent_runs = self.calls.values().any(|c| c.spawned && !c.done);
            if has_call && subagent_runs && st(ev, "parentCallId").is_none() {
                self.unpark(None);
                self.parked = Some((call.clone(), Vec::new()));
            }
            self.calls.insert(
                call.clone(),
                Call {
                    // Without a tool use id no result can come to end the card.
                    done: !has_call,
                    asked_only: true,
                    ..Call::new(head.clone(), depth)
                },
            );
            self.emit_card(Some(&call), Block::ToolStart { depth, head });
        }
        if let (Some(c), Some(i)) = (
            self.calls.get_mut(&call),
            ev.get("toolInput").filter(|i| !i.is_null()),
        ) {
            if c.input.is_empty() || c.input == "{}" {
                c.input = compact(i);
            }
        }
        let card = self.card(&call).expect("call exists");
        let depth = self.calls[&call].depth;
        let suggestions = ev
            .get("suggestions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| text_of(s, "description"))
                    .map(|s| one_line(&s))
                    .collect()
            })
            .unwrap_or_default();
        self.emit_card(
            Some(&call),
            Block::Permission {
                depth,
                card,
                reason: text_of(ev, "reason"),
                blocked_path: st(ev, "blockedPath").map(|p| self.rel(p)),
                suggestions,
            },
        );
    }

    fn permission_response(&mut self, ev: &Value, depth: usize) {
        let call = st(ev, "toolUseId")
            .map(str::to_string)
            .or_else(|| self.requests.get(st(ev, "requestId")?).cloned());
        let decision = st(ev, "decision").map(clean).unwrap_or_default();
        let card = call.as_deref().and_then(|c| self.card(c));
        let message = text_of(ev, "message");
        let depth = match call.as_deref().and_then(|c| self.calls.get_mut(c)) {
            Some(c) => {
                c.decision = Some(decision.clone());
                c.decision_message = message.clone();
                c.depth
            }
            None => depth,
        };
        let refused = decision.starts_with("deny") || decision == "cancelled";
        self.emit_card(
            call.as_deref().filter(|_| card.is_some()),
            Block::Decision {
                depth,
                card,
                decision,
                message,
            },
        );
        if let Some(id) = call.filter(|_| refused) {
            self.proposed(&id);
        }
    }

    /// Shows, once, the change a call's input proposed and its refused approval kept from
    /// being made, marked not applied: Codex's `changes` (each file with its diff, or the
    /// content it adds or deletes), or an edit tool's `old_string`/`new_string` or `content`
    /// ([`crate::providers::edits::from_input`]).
    fn proposed(&mut self, id: &str) {
        let Some(c) = self.calls.get_mut(id) else {
            return;
        };
        if c.proposed || c.input.is_empty() {
            return;
        }
        c.proposed = true;
        let depth = c.depth;
        let input = c.input.clone();
        let mut files: Vec<(String, String, Option<String>, String)> = Vec::new();
        let value: Value = serde_json::from_str(&input).unwrap_or(Value::Null);
        if let Some(changes) = value.get("changes").and_then(Value::as_array) {
            for ch in changes {
                let Some(path) = st(ch, "path") else { continue };
                let body = st(ch, "diff").unwrap_or("");
                let kind = st(ch, "kind").unwrap_or("update");
                let to = st(ch, "move_path").map(str::to_string);
                let diff = match kind {
                    "add" => crate::diff::unified(path, None, body),
                    "delete" => crate::diff::unified(path, Some(body), ""),
                    _ if body.starts_with("@@") => {
                        crate::diff::headers(path, false) + body.trim_end_matches('\n') + "\n"
                    }
                    _ => body.to_string(),
                };
                let kind = if to.is_some() { "move" } else { kind };
                files.push((path.to_string(), kind.to_string(), to, diff));
            }
        } else if let Some(e) = crate::providers::edits::from_input(&input, false, false)
            .or_else(|| crate::providers::edits::from_input(&input, true, false))
        {
            let old = e.old.as_deref().filter(|o| !o.is_empty());
            let kind = if e.old.as_deref() == Some("") {
                "add"
            } else {
                "update"
            };
            let diff = crate::diff::unified(&e.path, old, &e.new);
            files.push((e.path, kind.to_string(), None, diff));
        }
        for (path, kind, to, diff) in files {
            let card = self.card(id);
            let block = Block::Diff {
                depth,
                card,
                path: self.rel(&path),
                change: clean(&kind),
                move_path: to.map(|t| self.rel(&t)),
                diff: (!diff.trim().is_empty()).then(|| self.diff_text(&diff)),
                proposed: true,
            };
            self.emit_card(Some(id), block);
        }
    }

    fn plan_update(&mut self, ev: &Value, depth: usize) {
        let call = st(ev, "callId");
        let card = call.and_then(|c| self.card(c));
        let depth = call
            .and_then(|c| self.calls.get(c))
            .map_or(depth, |c| c.depth);
        let entries = ev
            .get("entries")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|e| {
                        (
                            st(e, "status").unwrap_or("pending").to_string(),
                            one_line(&st(e, "content").map(clean).unwrap_or_default()),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.emit_card(
            call.filter(|_| card.is_some()),
            Block::Plan {
                depth,
                card,
                entries,
                explanation: text_of(ev, "explanation"),
            },
        );
    }

    fn session_status(&mut self, ev: &Value, depth: usize) {
        let message = text_of(ev, "message").map(|m| one_line(&m));
        let with = |base: &str| match &message {
            Some(m) => format!("{base}: {m}"),
            None => base.to_string(),
        };
        let (tone, text) = match st(ev, "status").unwrap_or("") {
            "compacting" => (Tone::Quiet, with("compacting the context…")),
            "resuming" => (Tone::Quiet, with("resuming")),
            "ended" => (Tone::Quiet, with("session ended")),
            "interrupted" => {
                for c in self.calls.values_mut().filter(|c| !c.done) {
                    c.interrupted = true;
                }
                (Tone::Warn, with("interrupted"))
            }
            "error" => (Tone::Bad, with("session error")),
            _ => return, // idle, requesting, running, requires_action: the transcript shows them
        };
        self.emit(Block::Status {
            depth,
            attached: false,
            tone,
            text,
        });
    }

    fn rate_limit(&mut self, ev: &Value) {
        let Some(status) = st(ev, "status").filter(|s| *s != "allowed") else {
            return;
        };
        let mut text = format!("rate limit: {}", clean(status).replace('_', " "));
        for key in ["primary", "secondary"] {
            if let Some(w) = ev.get(key) {
                if let Some(p) = num(w, "usedPercent") {
                    text.push_str(&format!(" · {p}% used"));
                    if let Some(m) = num(w, "windowDurationMins") {
                        text.push_str(&format!(" of {}", window(m)));
                    }
                }
            }
        }
        if let Some(t) = text_of(ev, "rateLimitType") {
            text.push_str(&format!(" ({})", t.replace('_', " ")));
        }
        self.emit(Block::Status {
            depth: 0,
            attached: false,
            tone: Tone::Warn,
            text,
        });
    }

    fn error(&mut self, ev: &Value, depth: usize) {
        let message = text_of(ev, "message").unwrap_or_else(|| "error".into());
        let warning = st(ev, "severity") == Some("warning");
        let mut details = Vec::new();
        if ev.get("willRetry") == Some(&Value::Bool(true)) {
            let mut r = "retrying".to_string();
            if let Some(a) = num(ev, "attempt") {
                r.push_str(&match num(ev, "maxRetries") {
                    Some(m) => format!(" ({a}/{m})"),
                    None => format!(" (attempt {a})"),
                });
            }
            if let Some(d) = num(ev, "retryDelayMs") {
                r.push_str(&format!(" in {}", super::text::duration(d)));
            }
            details.push(r);
        }
        if let Some(code) = text_of(ev, "code").filter(|c| c != "unknown") {
            details.push(format!("code {code}"));
        }
        if let Some(h) = num(ev, "httpStatus") {
            if !message.contains(&h.to_string()) {
                details.push(format!("HTTP {h}"));
            }
        }
        if let Some(r) = text_of(ev, "requestId") {
            details.push(format!("request {r}"));
        }
        if !warning {
            self.turn.shown.push(message.trim().to_string());
        }
        self.emit(Block::Error {
            depth,
            warning,
            message,
            details,
        });
    }

    fn task_update(&mut self, ev: &Value, depth: usize) {
        if let Some(id) = st(ev, "callId").filter(|c| self.calls.contains_key(*c)) {
            return self.task_end(id, ev);
        }
        let phase = st(ev, "phase").unwrap_or("");
        if !matches!(phase, "started" | "notification") {
            return;
        }
        let what = text_of(ev, "description")
            .or_else(|| text_of(ev, "summary"))
            .or_else(|| text_of(ev, "taskId"))
            .unwrap_or_default();
        let status = match phase {
            "started" => "started".to_string(),
            _ => text_of(ev, "status").unwrap_or_else(|| "update".into()),
        };
        self.emit(Block::Notice {
            depth,
            text: format!("task {}: {status}", one_line(&what)),
        });
    }

    /// The end of a task a call started, drawn where it comes: a background command killed,
    /// failed or finished after its call returned (and its turn ended). A subagent's task is
    /// told by its card (`subagent_complete`), a task that ends before its call returns by
    /// the call's result.
    fn task_end(&mut self, id: &str, ev: &Value) {
        let Some(c) = self.calls.get(id) else { return };
        if c.spawned || c.task_ended || !c.done {
            return;
        }
        let status = match st(ev, "status") {
            Some("completed" | "success") => Status::Ok,
            Some("killed" | "stopped" | "cancelled") => Status::Cancelled,
            Some("failed" | "error") => Status::Failed,
            _ => return,
        };
        let description = text_of(ev, "description");
        let output = text_of(ev, "summary")
            .filter(|s| Some(s) != description.as_ref() && *s != c.head.salient)
            .unwrap_or_default();
        let duration_ms = ev.get("usage").and_then(|u| num(u, "duration_ms"));
        let depth = c.depth;
        let Some(card) = self.card(id) else { return };
        if let Some(c) = self.calls.get_mut(id) {
            c.task_ended = true;
        }
        self.emit_card(
            Some(id),
            Block::ToolEnd {
                depth,
                card,
                status,
                duration_ms,
                output,
                errors: String::new(),
                decided: false,
            },
        );
    }

    fn hook(&mut self, ev: &Value, depth: usize) {
        if st(ev, "phase") != Some("response") {
            return;
        }
        let name = text_of(ev, "hookName")
            .or_else(|| text_of(ev, "hookEvent"))
            .unwrap_or_else(|| "hook".into());
        let outcome = text_of(ev, "outcome").unwrap_or_default();
        let exit = ev.get("exitCode").and_then(Value::as_i64);
        let ok = exit.is_none_or(|c| c == 0) && matches!(outcome.as_str(), "" | "success");
        let mut outcome = if outcome.is_empty() && ok {
            "ok".to_string()
        } else {
            outcome
        };
        if let Some(c) = exit.filter(|c| *c != 0) {
            outcome.push_str(&format!(" (exit {c})"));
        }
        let output = text_of(ev, "output")
            .or_else(|| {
                let out = text_of(ev, "stdout").unwrap_or_default();
                let err = text_of(ev, "stderr").unwrap_or_default();
                let both = [out, err]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n");
                (!both.is_empty()).then_some(both)
            })
            .unwrap_or_default();
        let tool_hook = matches!(
            st(ev, "hookEvent"),
            Some("PreToolUse" | "PostToolUse" | "PostToolUseFailure" | "PermissionRequest")
        );
        let attached = tool_hook && self.last_call.is_some();
        let depth = match (attached, self.last_call.as_deref()) {
            (true, Some(c)) => self.calls.get(c).map_or(depth, |c| c.depth),
            _ => depth,
        };
        self.emit(Block::Hook {
            depth,
            attached,
            name,
            ok,
            outcome,
            output: output.trim_end().to_string(),
        });
    }

    fn notice(&mut self, ev: &Value, depth: usize) {
        let sub = st(ev, "subtype").unwrap_or("");
        if bookkeeping(ev, sub) {
            return;
        }
        // Without a message a notice is protocol chatter (Codex sends dozens per turn).
        let Some(m) = text_of(ev, "message") else {
            return;
        };
        let text = format!("{}: {}", clean(sub), one_line(&m));
        self.emit(Block::Notice { depth, text });
    }

    fn turn_complete(&mut self, ev: &Value) {
        self.flush_streams(|_| true, false);
        if let Some(Held { call, block }) = self.held.take() {
            self.emit_card(Some(&call), block);
        }
        self.close_calls();
        self.cumulative_diffs();
        let sid = st(ev, "sessionId")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .or_else(|| self.current.clone())
            .unwrap_or_default();
        let turn = std::mem::take(&mut self.turn);
        let is_error = ev.get("isError") == Some(&Value::Bool(true));
        let tokens = ev.get("usage").map(|u| Tokens {
            input: num(u, "inputTokens").unwrap_or(0),
            output: num(u, "outputTokens").unwrap_or(0),
            cache_read: num(u, "cacheReadTokens").unwrap_or(0),
            cache_write: num(u, "cacheCreationTokens").unwrap_or(0),
        });
        let usage: Vec<(&String, &Value)> = ev
            .get("modelUsage")
            .and_then(Value::as_object)
            .map(Map::iter)
            .map(Iterator::collect)
            .unwrap_or_default();
        // Claude Code's per-model figures and costs are running totals of its process, ACP's
        // the turn's own ([`crate::event::running_turn_totals`]).
        let running = crate::event::running_turn_totals(st(ev, "provider").unwrap_or(""));
        let session = self.sessions.entry(sid).or_default();
        session.turns += 1;
        let turn_no = session.turns;
        let several = usage.len() > 1;
        let context_model = match &turn.context {
            Some(Ctx { model: Some(m), .. }) => usage
                .iter()
                .position(|(k, _)| *k == m)
                .or_else(|| usage.iter().position(|(k, _)| k.starts_with(m.as_str())))
                .or((usage.len() == 1).then_some(0)),
            Some(Ctx { model: None, .. }) => (usage.len() == 1).then_some(0),
            None => None,
        };
        // As `reduce` reads them: a report in which a model is missing or any figure is lower
        // than the last starts a new run of the agent process, counted whole.
        let figures = |u: &Value| {
            (
                num(u, "inputTokens").unwrap_or(0) as f64,
                num(u, "outputTokens").unwrap_or(0) as f64,
                u.get("costUsd").and_then(Value::as_f64),
            )
        };
        let new_run = running
            && session.models.iter().any(|(name, m)| {
                let Some((_, u)) = usage.iter().find(|(k, _)| *k == name) else {
                    return true;
                };
                let (i, o, c) = figures(u);
                let below = |r: &Running, now: f64| r.last.is_some_and(|l| now < l);
                below(&m.input, i) || below(&m.output, o) || below(&m.cost, c.unwrap_or(0.0))
            });
        // (turn's share, session's total) of a reported figure.
        let share = |r: &mut Running, now: f64, new_run: bool| -> (f64, Option<f64>) {
            if running {
                r.report(now, new_run)
            } else {
                (now, None)
            }
        };
        let mut models: Vec<ModelLine> = Vec::new();
        for (i, (name, u)) in usage.iter().enumerate() {
            let (input, output, reported) = figures(u);
            let m = session.models.entry(name.to_string()).or_default();
            let input = share(&mut m.input, input, new_run).0 as u64;
            let output = share(&mut m.output, output, new_run).0 as u64;
            let (cost, session_cost) = match reported {
                Some(c) => {
                    let (turn, total) = share(&mut m.cost, c, new_run);
                    (Some(turn), total)
                }
                None => (None, None),
            };
            let tokens = several.then_some((input, output));
            models.push(ModelLine {
                name: clean(name),
                cost,
                session_cost,
                tokens,
                context: (context_model == Some(i))
                    .then(|| {
                        turn.context
                            .as_ref()
                            .map(|c| (c.used, num(u, "contextWindow").or(c.window)))
                    })
                    .flatten(),
            });
        }
        if models.is_empty() {
            if let Some(c) = &turn.context {
                models.push(ModelLine {
                    name: c.model.as_deref().map(clean).unwrap_or_default(),
                    cost: None,
                    session_cost: None,
                    tokens: None,
                    context: Some((c.used, c.window)),
                });
            }
        }
        let (cost, session_cost) = match ev.get("costUsd").and_then(Value::as_f64) {
            Some(c) => {
                let (turn, total) = share(&mut session.cost, c, false);
                if c == 0.0 && models.is_empty() {
                    (None, None)
                } else {
                    (Some(turn), total)
                }
            }
            None => (None, None),
        };
        // The turn's own API time: the increase of the run's total, or all of a lower report
        // (a new run); as it is where figures are the turn's own.
        let api_ms = num(ev, "durationApiMs").map(|ms| match session.api_ms.replace(ms) {
            Some(last) if running && ms >= last => ms - last,
            _ => ms,
        });
        let denials = ev
            .get("permissionDenials")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|d| {
                        let id = st(d, "tool_use_id").or(st(d, "toolUseId"));
                        match id.and_then(|i| self.calls.get(i)) {
                            Some(c) => one_line(&format!("{}  {}", c.head.name, c.head.salient)),
                            None => st(d, "tool_name")
                                .or(st(d, "toolName"))
                                .map(clean)
                                .unwrap_or_else(|| "a tool".into()),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        let result = text_of(ev, "result")
            .filter(|r| !turn.shown.iter().any(|s| s == r.trim()))
            .map(|r| r.trim_end().to_string());
        let cancelled = crate::event::cancelled_turn(st(ev, "stopReason"), st(ev, "subtype"))
            .map(str::to_string);
        // A stop reason that the footer's title already says (`interrupted`) is not repeated.
        let stop = st(ev, "stopReason")
            .filter(|s| Some(*s) != cancelled.as_deref())
            .filter(|s| {
                !matches!(
                    *s,
                    "end_turn" | "stop_sequence" | "tool_use" | "completed" | "stop" | "success"
                )
            })
            .map(|s| clean(s).replace('_', " "));
        let errors = ev
            .get("errors")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(clean)
                    .filter(|e| !turn.shown.iter().any(|s| s == e.trim()))
                    .collect()
            })
            .unwrap_or_default();
        // The turn's tokens and cost as `reduce` counts them (`figures`): its subagents' too,
        // and a turn the agent reports no total for (a session file's) summed from its steps.
        let (tokens, cost) = match self.figures.ended(st(ev, "sessionId").unwrap_or("")) {
            Some(f) => {
                let t = f.tokens;
                let counted = t != crate::reduce::state::Tokens::default();
                let tokens = if counted {
                    Some(Tokens {
                        input: t.input_tokens,
                        output: t.output_tokens,
                        cache_read: t.cache_read_tokens,
                        cache_write: t.cache_creation_tokens,
                    })
                } else {
                    tokens
                };
                // (A cost of 0 the footer would not show stays unshown.)
                let cost = match f.cost {
                    Some(c) if c > 0.0 || cost.is_some() => Some(c),
                    _ => cost,
                };
                (tokens, cost)
            }
            None => (tokens, cost),
        };
        self.emit(Block::Footer(Footer {
            ok: !is_error && cancelled.is_none(),
            cancelled,
            turn: turn_no,
            subtype: st(ev, "subtype")
                .filter(|_| is_error)
                .filter(|s| *s != "success")
                .map(|s| clean(s).replace('_', " ")),
            duration_ms: num(ev, "durationMs"),
            api_ms,
            steps: num(ev, "numTurns"),
            tokens,
            models,
            cost,
            session_cost,
            errors,
            denials,
            stop,
            result,
        }));
    }

    // -- streaming ------------------------------------------------------------------------

    fn stream_delta(&mut self, ev: &Value) {
        let parent = st(ev, "parentCallId").map(str::to_string);
        let index = num(ev, "blockIndex");
        match st(ev, "kind").unwrap_or("") {
            "messageStart" => {
                // Whatever the previous message left unfinished will not be finished now.
                self.flush_streams(|s| s.parent == parent, false);
                match st(ev, "messageId") {
                    Some(m) => self.messages.insert(parent, m.to_string()),
                    None => self.messages.remove(&parent),
                };
            }
            "blockStart" => {
                let tool = ev
                    .pointer("/extensions/tool_name")
                    .and_then(Value::as_str)
                    .map(clean);
                if let Some(call) = st(ev, "callId") {
                    self.stream_for(parent, index, StreamKind::ToolInput).call =
                        Some(call.to_string());
                    let i = self.last_stream.expect("stream exists");
                    self.streams[i].tool = tool;
                }
            }
            kind @ ("text" | "thinking" | "toolInput") => {
                let sk = match kind {
                    "text" => StreamKind::Text,
                    "thinking" => StreamKind::Thinking,
                    _ => StreamKind::ToolInput,
                };
                let delta = st(ev, "textDelta").or(st(ev, "jsonDelta")).unwrap_or("");
                if let Some(m) = st(ev, "messageId") {
                    self.messages.insert(parent.clone(), m.to_string());
                }
                let message = self.messages.get(&parent).cloned();
                // Another block or message of the same agent began: the ones before it are
                // complete (their final events, if any, came before).
                self.flush_streams(
                    |s| {
                        s.parent == parent
                            && (s.kind != sk
                                || s.index != index
                                || (s.message.is_some()
                                    && message.is_some()
                                    && s.message != message))
                    },
                    false,
                );
                let s = self.stream_for(parent, index, sk);
                s.text.push_str(delta);
            }
            _ => {}
        }
    }

    fn stream_for(
        &mut self,
        parent: Option<String>,
        index: Option<u64>,
        kind: StreamKind,
    ) -> &mut Stream {
        let found = self
            .streams
            .iter()
            .position(|s| s.parent == parent && s.index == index && s.kind == kind);
        let i = match found {
            Some(i) => i,
            None => {
                let message = self.messages.get(&parent).cloned();
                self.streams.push(Stream {
                    parent,
                    message,
                    index,
                    kind,
                    call: None,
                    tool: None,
                    text: String::new(),
                });
                self.streams.len() - 1
            }
        };
        self.last_stream = Some(i);
        &mut self.streams[i]
    }

    /// Drops the stream a final event completes.
    fn take_stream(
        &mut self,
        parent: Option<&str>,
        message: Option<&str>,
        kind: StreamKind,
        call: Option<&str>,
    ) {
        let found = self.streams.iter().position(|s| {
            s.kind == kind
                && s.parent.as_deref() == parent
                && (message.is_none() || s.message.is_none() || s.message.as_deref() == message)
                && (call.is_none() || s.call.is_none() || s.call.as_deref() == call)
        });
        if let Some(i) = found {
            self.streams.remove(i);
            self.last_stream = None;
        }
    }

    /// Shows the streams `which` selects, which will get no final event now, and forgets
    /// them: as the agent's text and thinking, or, when the input was `cut` short, marked
    /// unfinished. Streamed tool input is only shown when cut.
    fn flush_streams(&mut self, which: impl Fn(&Stream) -> bool, cut: bool) {
        if self.streams.is_empty() {
            return;
        }
        let (gone, keep): (Vec<Stream>, Vec<Stream>) = std::mem::take(&mut self.streams)
            .into_iter()
            .partition(|s| which(s));
        self.streams = keep;
        self.last_stream = None;
        for s in gone {
            let text = clean(&s.text);
            if text.trim().is_empty() {
                continue;
            }
            let depth = self.depth_of(s.parent.as_deref());
            if !cut && s.kind != StreamKind::ToolInput {
                if self.flushed.len() >= 8 {
                    self.flushed.remove(0);
                }
                self.flushed
                    .push((s.parent.clone(), s.kind, text.trim().to_string()));
            }
            let block = match (s.kind, cut) {
                (StreamKind::Text, false) => {
                    self.turn.shown.push(text.trim().to_string());
                    Block::Text { depth, text }
                }
                (StreamKind::Thinking, false) => Block::Thinking { depth, text },
                (StreamKind::ToolInput, false) => continue,
                (StreamKind::Text, true) => Block::Partial {
                    depth,
                    kind: PartialKind::Text,
                    text,
                },
                (StreamKind::Thinking, true) => Block::Partial {
                    depth,
                    kind: PartialKind::Thinking,
                    text,
                },
                (StreamKind::ToolInput, true) => Block::Partial {
                    depth,
                    kind: PartialKind::ToolInput(s.tool.unwrap_or_default()),
                    text,
                },
            };
            self.emit(block);
        }
    }

    /// What a live terminal may show on its one transient line, as (label, text): the text
    /// being streamed, or the call still running. Writers keep the end of `text`, the newest.
    pub fn live(&self) -> Option<(String, String)> {
        if let Some(s) = self.last_stream.and_then(|i| self.streams.get(i)) {
            let label = match s.kind {
                StreamKind::Text => "writing",
                StreamKind::Thinking => "thinking",
                StreamKind::ToolInput => "preparing",
            };
            let tool = s
                .tool
                .as_deref()
                .map(|t| format!(" {t}"))
                .unwrap_or_default();
            return Some((format!("… {label}{tool}"), one_line(&clean(&s.text))));
        }
        let running = self
            .order
            .iter()
            .rev()
            .filter_map(|id| self.calls.get(id))
            .find(|c| !c.done)?;
        let secs = running.seen.elapsed().as_secs();
        Some((
            format!("◌ {} running · {}s", running.head.name, secs),
            one_line(&running.head.salient),
        ))
    }
}

/// Moves a block about a call to `depth` (the call turned out to be a subagent's).
fn set_depth(b: &mut Block, d: usize) {
    match b {
        Block::ToolStart { depth, .. }
        | Block::ToolEnd { depth, .. }
        | Block::Permission { depth, .. }
        | Block::Decision { depth, .. }
        | Block::Diff { depth, .. }
        | Block::Plan { depth, .. }
        | Block::Hook { depth, .. }
        | Block::Status { depth, .. } => *depth = d,
        _ => {}
    }
}

/// A notice that only describes the protocol, not the conversation: control messages
/// (`control_request/…`, `control_response/…`), keep-alives and heartbeats, status pings, and
/// messages the converter marks as announced already by another event (Codex's
/// `thread/started` after the `thread/start` answer, `codex.alreadyAnnounced`). Transcripts
/// leave them out.
fn bookkeeping(ev: &Value, sub: &str) -> bool {
    sub.starts_with("control_request/")
        || sub.starts_with("control_response/")
        || sub.ends_with("keep_alive")
        || sub.ends_with("heartbeat")
        || sub == "system/status"
        || ev
            .get("extensions")
            .and_then(Value::as_object)
            .is_some_and(|x| {
                x.iter()
                    .any(|(k, v)| k.ends_with("alreadyAnnounced") && *v == Value::Bool(true))
            })
}

/// A rate-limit window for people (`5h`, `7d`, `90min`).
fn window(mins: u64) -> String {
    if mins % 1440 == 0 {
        format!("{}d", mins / 1440)
    } else if mins % 60 == 0 {
        format!("{}h", mins / 60)
    } else {
        format!("{mins}min")
    }
}

/// The readable text of a tool's output: (output, errors).
///
/// Known shapes: a string; `stdout`/`stderr` (shells); `file.content` (file reads); content
/// blocks, in a list (`[{type: text, text}]`, MCP and subagents) or one alone (ACP's
/// cancelled shell call: `{type: text, text: "Command cancelled by user."}`). Results that only echo an edit or a
/// plan (`structuredPatch`, `originalFile`, `newTodos`) show nothing: the diff or the plan is
/// shown from its own event. Anything else is shown as compact JSON.
pub fn output_text(v: &Value) -> (String, String) {
    match v {
        Value::Null => (String::new(), String::new()),
        Value::String(s) => (clean(s), String::new()),
        Value::Array(a) => (blocks_text(a), String::new()),
        Value::Object(o) => {
            let s = |k: &str| o.get(k).and_then(Value::as_str);
            if s("stdout").is_some() || s("stderr").is_some() {
                let mut err = clean(s("stderr").unwrap_or(""));
                if o.get("interrupted") == Some(&Value::Bool(true)) {
                    if !err.is_empty() {
                        err.push('\n');
                    }
                    err.push_str("(interrupted)");
                }
                return (clean(s("stdout").unwrap_or("")), err);
            }
            if let Some(c) = o
                .get("file")
                .and_then(|f| f.get("content"))
                .and_then(Value::as_str)
            {
                return (clean(c), String::new());
            }
            if is_block(o) {
                return (blocks_text(std::slice::from_ref(v)), String::new());
            }
            // Codex's file change answers with the list of its changes, shown from their
            // own `file_change`s.
            let changes_only = o.len() == 1
                && o.get("changes")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().all(|c| c.get("path").is_some()));
            if changes_only
                || ["structuredPatch", "originalFile", "newTodos", "oldTodos"]
                    .iter()
                    .any(|k| o.contains_key(*k))
            {
                return (String::new(), String::new());
            }
            match o.get("content") {
                Some(Value::Array(a)) => (blocks_text(a), String::new()),
                Some(Value::String(s)) => (clean(s), String::new()),
                _ => (compact(v), String::new()),
            }
        }
        v => (compact(v), String::new()),
    }
}

/// A content block: text (`{type: text, text}`) or an image.
fn is_block(o: &Map<String, Value>) -> bool {
    match o.get("type").and_then(Value::as_str) {
        Some("text") => o.get("text").is_some_and(Value::is_string),
        Some("image") => true,
        _ => false,
    }
}

fn blocks_text(a: &[Value]) -> String {
    a.iter()
        .map(|b| match (st(b, "type"), st(b, "text")) {
            (_, Some(t)) => clean(t),
            (Some("image"), _) => "[image]".to_string(),
            _ => compact(b),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
