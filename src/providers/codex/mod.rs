//! Codex CLI, in its three shapes, recognised line by line:
//!
//! - **exec** (`codex exec --json`): snake_case `{type: "thread.started" | "turn.*" |
//!   "item.*" | "error", …}` lines;
//! - **app-server v2**: JSON-RPC (the `jsonrpc` member omitted) with camelCase `thread/*`,
//!   `turn/*`, `item/*` notifications, server requests for approvals, and — in a tee of both
//!   directions — the client's requests and answers;
//! - **legacy** `codex/event` notifications (`{method: "codex/event/<type>", params: {id, msg}}`)
//!   and the bare `{id, msg}` envelope of `codex proto`.
//!
//! Mapped against Codex CLI 0.169.0 (`testdata/codex-exec/`, `testdata/codex-app-server/`).
//!
//! **Legacy and v2 together.** Builds that emit both send every event twice. The rule: once a
//! v2 notification has been seen in the stream ([`Memory::v2_seen`]), legacy lines become
//! `notice` events (`codex/event/<type>`, the message in `extensions`,
//! `codex.supersededBy: "v2"`) instead of content events; before that, and in streams without
//! v2, legacy lines are mapped in full. Nothing is lost and nothing doubles.
//!
//! **What the converter remembers** ([`Memory`], bounded): the stream's own thread (exec
//! lines carry no thread id after `thread.started`; answers and legacy `proto` lines none at
//! all: their events name it), threads half announced (the `thread/start` answer and the
//! `thread/started` notification are one `session_init`), server requests until the client
//! answers (the call they ask about: the answer's `toolUseId`, and the decision the call's
//! end needs), open calls until they end (a turn that ends `interrupted` ends those it left
//! open as `cancelled`, marked `insights.inferred`), whether a turn's failure was already
//! stated by an `error`, each thread's running token total (a turn's `usage` is what it
//! gained across the turn), spawned subagents until they end, and whether a v2 notification
//! has been seen. Item ids of exec (`item_3`) are unique only within a thread.
//!
//! **Where the code is.** This file: detection, registration, what the converter remembers
//! and the helpers that keep it, the dispatch of a line to its dialect, and what the dialects
//! share (event builders, shell commands, the collab calls of subagents). Each dialect has a
//! file of its own: [`exec`](mod@exec) (`codex exec --json`), [`app_server`] (v2
//! notifications and server requests), [`thread_items`] (v2 items, `item/started` and
//! `item/completed`), [`answers`] (the answers of a tee of both directions) and
//! [`legacy`](mod@legacy) (`codex/event`, `codex proto`); [`diff`] makes git diffs of what
//! Codex sends for a file change. [`talk`] is the other direction: how `insights run` drives
//! `codex app-server`.

mod answers;
mod app_server;
mod diff;
mod exec;
mod legacy;
pub mod talk;
mod thread_items;

use super::jsonrpc::{Kind, Message, RpcError};
use super::memo::{Memo, Remember};
use super::{Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::members::Line;
use crate::wire::{is_null, is_object, raw_str, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

use answers::{response, ResultBody};
use app_server::{method_call, Params};
use diff::{absolute, rebase_headers};
use exec::exec;
use thread_items::item_line;

// Rollout files (`codex_rollout`) carry legacy events as their `event_msg` payloads.
pub(super) use legacy::{legacy, legacy_changes, LegacyTokenInfo};

pub const PROVIDER: Provider = Provider {
    name: "codex",
    display: "Codex",
    cc_name: "codex",
    about: "Codex: exec --json, app-server JSON-RPC v2 (client tee too), legacy codex/event",
    jsonrpc: true,
    sniff,
    convert,
    // Its turn_complete's `modelUsage` is the turn's own usage under the thread's model.
    reading: super::Reading {
        raw_reasoning: true,
        running_turn_totals: false,
        ..super::Reading::PLAIN
    },
    caps: super::Capabilities {
        streaming_deltas: true,
        tool_calls: true,
        tool_results: true,
        status_updates: true,
        reasoning: true,
        permissions: true,
        questions: true,
        file_changes: true,
        command_exec: true,
        mcp: true,
        usage: true,
        cost: false,
        subagents: true,
        plans: true,
    },
    infers_turns: false,
    whole_messages: false,
    at_end: None,
    talk: Some(&talk::SPEAKER),
};

crate::providers::memo::remember! {
    /// What Codex lines need of earlier lines of the stream.
    pub struct Memory {
        /// The stream's own thread, under [`STREAM`]: the one its `thread.started`,
        /// `thread/start` answer or `session_configured` announced (not a subagent's). Lines
        /// that name no thread (exec items, answers, legacy `proto` lines) are its.
        pub stream: Memo<String>,
        /// Threads one half of whose announcement was seen (the `thread/start` answer or
        /// the `thread/started` notification), until the other half: one `session_init`.
        pub announced: Memo<()>,
        /// Server requests (approvals, questions, dynamic tool calls) not answered yet, by
        /// JSON-RPC id: what they asked about.
        pub requests: Memo<Request>,
        /// Calls invoked and not yet ended, by call (item) id.
        pub calls: Memo<Call>,
        /// Threads whose current turn reported its failure in an `error` already.
        pub errored: Memo<()>,
        /// Subagents spawned and not yet ended, by their thread id: the spawning call.
        pub agents: Memo<String>,
        /// Legacy delta flavours seen (`agent_message_content_delta`, `reasoning_content_delta`):
        /// the older twin of each (`agent_message_delta`, …) repeats it.
        pub flavours: Memo<()>,
        /// Threads' working directories, from their announcement: a turn's cumulative diff
        /// names its files relative to it.
        pub cwds: Memo<String>,
        /// Threads' running token totals (`thread/tokenUsage/updated`, legacy `token_count`),
        /// by thread: a turn's own usage is the difference of the total across it.
        pub usage: Memo<Running>,
        /// Threads' models, by thread: the announcement's, a `turn/start`'s override, a
        /// `model/rerouted`'s new model. A turn's `modelUsage` is its usage under it.
        pub models: Memo<String>,
        /// Whether an app-server v2 notification has been seen: legacy `codex/event` lines
        /// then duplicate v2 events (see `legacy.rs`).
        pub v2_seen: Seen,
        /// Agent messages (by item id) whose `item/agentMessage/delta`s are inside a
        /// `<proposed_plan>` block, left out of the message ([`plan_free_delta`]).
        pub plan_blocks: Memo<()>,
        /// Threads' collaboration modes (`plan`, `default`), by thread, once a line named
        /// one: a `thread/settings/updated` that repeats it is no news.
        pub modes: Memo<String>,
    }
}

/// A fact that, once a line states it, holds for the rest of the stream; for `--jobs`, the
/// [`Remember`] of a one-bit memory.
///
/// A part of the stream depends on its start only if it read the fact before one of its own
/// lines stated it: then it is converted again when its guessed start and its real start
/// disagree ([`Remember::stale`]).
#[derive(Debug, Default)]
pub struct Seen {
    seen: bool,
    /// A line of this part stated it.
    here: bool,
    /// This part read it before stating it.
    read: bool,
}

impl Seen {
    /// Whether the fact holds, noting a dependence on the start when no line of this part
    /// stated it.
    pub fn get(&mut self) -> bool {
        self.read |= !self.here;
        self.seen
    }

    /// States the fact.
    pub fn set(&mut self) {
        self.seen = true;
        self.here = true;
    }
}

/// The fact, without the `--jobs` bookkeeping of the part that read or stated it (as a
/// [`Memo`]'s copy).
impl Clone for Seen {
    fn clone(&self) -> Self {
        Seen {
            seen: self.seen,
            ..Seen::default()
        }
    }
}

/// The facts compare; the bookkeeping does not.
impl PartialEq for Seen {
    fn eq(&self, other: &Self) -> bool {
        self.seen == other.seen
    }
}

impl Remember for Seen {
    // Two bits, kept whether `track` asks for them or not.
    fn begin(&mut self, _track: bool) {
        self.here = false;
        self.read = false;
    }

    fn stale(&self, guess: &Self, actual: &Self) -> bool {
        self.read && guess.seen != actual.seen
    }

    fn after(&self, before: Self) -> Self {
        Seen {
            seen: self.here || before.seen,
            ..Seen::default()
        }
    }

    fn forgotten(&mut self) -> crate::providers::memo::Forgot {
        Default::default()
    }
}

/// The key of [`Memory::stream`].
const STREAM: &str = "thread";

/// A server request waiting for the client's answer.
#[derive(Clone, PartialEq, Debug)]
pub struct Request {
    /// The call (item) it asks about.
    pub call: Option<String>,
    /// The thread it was asked in.
    pub thread: Option<String>,
    /// An `item/tool/call`: its answer is the call's result.
    pub tool_call: bool,
}

/// A call invoked and not yet ended.
#[derive(Clone, PartialEq, Debug)]
pub struct Call {
    /// The thread it runs in.
    pub thread: Option<String>,
    /// The invocation's `toolName`.
    pub tool_name: String,
    /// How the client answered a permission request about it.
    pub decision: Option<Decision>,
    /// A file change's files, for its approval request (and a legacy patch's end).
    pub changes: Vec<Change>,
    /// Whether it was invoked (an answer may name a call before its item starts).
    pub invoked: bool,
}

/// Token counts as Codex reports them (`None`: not reported): input (cached ones included),
/// cached input, cache writes, output, reasoning output.
pub type Totals = [Option<u64>; 5];

/// A thread's running token total, for the usage of its current turn.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Running {
    /// The turn last started or reported in (`""`: the wire named none).
    pub turn: String,
    /// The total when that turn started; `None`: unknown (the stream began after it).
    pub base: Option<Totals>,
    /// The latest total; `None`: none reported yet.
    pub now: Option<Totals>,
    /// The turn's start was seen and no total reported since: the first report's `last`
    /// (the usage of the request it counts) is the turn's first.
    pub fresh: bool,
    /// A `model/rerouted` came after the turn had reported tokens: they are of two models,
    /// in a split the wire does not give, so the turn has no `modelUsage`.
    pub rerouted: bool,
}

/// A file a file change touches, as its call remembers it.
#[derive(Clone, PartialEq, Debug)]
pub struct Change {
    pub path: String,
    pub kind: ChangeKind,
    /// A move's new path.
    pub move_path: Option<String>,
    /// The change as the wire gives it: hunks, or an added or deleted file's content.
    pub diff: Option<String>,
}

/// `type`s of `codex exec --json`.
const EXEC_TYPES: &[&str] = &[
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "item.plan.delta",
    "request_user_input",
];

/// Method prefixes and names of the app-server protocol (server and client side).
const METHOD_PREFIXES: &[&str] = &[
    "thread/",
    "turn/",
    "item/",
    "account/",
    "model/",
    "mcpServer/",
    "serverRequest/",
    "codex/event",
    "remoteControl/",
    "hook/",
    "skills/",
    "app/",
    "fuzzyFileSearch/",
    "rawResponseItem/",
    "windowsSandbox/",
    "review/",
    "command/",
    "config/",
    "feedback/",
    "collaborationMode/",
];
const METHODS: &[&str] = &[
    "initialized",
    "error",
    "configWarning",
    "deprecationNotice",
    "execCommandApproval",
    "applyPatchApproval",
    "getConversationSummary",
    "gitDiffToRemote",
];

/// Members that only Codex puts in a JSON-RPC result.
const RESULT_KEYS: &[&str] = &["thread", "turn", "decision", "userAgent", "codexHome"];

fn sniff(p: &Probe) -> bool {
    if let Some(t) = p.ty() {
        // Gemini's stream-json has an `error` type too, always with a timestamp.
        return EXEC_TYPES.contains(&t)
            || (t == "error" && p.timestamp.is_none())
            || super::codex_rollout::sniff(p);
    }
    if let Some(m) = p.method() {
        if m == "initialize" {
            // ACP's initialize carries a protocolVersion; Codex's a clientInfo only.
            return p.params.is_some_and(|pr| {
                !pr.get().contains("\"protocolVersion\"") && pr.get().contains("\"clientInfo\"")
            });
        }
        return METHODS.contains(&m) || METHOD_PREFIXES.iter().any(|pre| m.starts_with(pre));
    }
    if p.msg.is_some_and(|r| r.is_object()) && p.id.is_some() {
        return true;
    }
    if p.is_bare_response() {
        return p
            .result_members()
            .iter()
            .any(|k| RESULT_KEYS.contains(&k.as_ref()));
    }
    false
}

fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let r = convert_line(line, probe, cx);
    if r.is_ok() {
        name_session(cx);
    }
    r
}

fn convert_line<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    if let Some(t) = probe.ty() {
        if super::codex_rollout::sniff(probe) {
            return super::codex_rollout::convert(line, probe, cx);
        }
        return exec(Line::new(line, probe.members()), t, cx);
    }
    if probe.msg.is_some() && probe.method.is_none() {
        #[derive(Deserialize)]
        struct Bare<'a> {
            #[serde(borrow)]
            msg: &'a RawValue,
        }
        let b: Bare = crate::members::read(line, probe.members())?;
        return legacy(b.msg, None, cx);
    }
    if let Some(method @ ("item/started" | "item/completed")) = probe.method() {
        return item_line(method, Line::new(line, probe.members()), cx);
    }
    // `params` and an object `result` read in the line's pass. `Params` is boxed, and its big
    // rare members inside it: moving a 1.4 KB struct from visitor to caller cost 8% of a
    // conversion in `memcpy`.
    let m: Message<Params, ResultBody> = Message::read(line, probe.members())?;
    let kind = m.kind();
    let (env, params, result) = m.into_parts();
    match kind {
        Some(Kind::Notification) | Some(Kind::Request) => {
            let method = env.method.0.clone().unwrap_or_default();
            if let Some(ms) = env.emitted_at_ms {
                cx.timestamp = Some(Cow::Owned(crate::time::format_millis(ms.0)));
            }
            method_call(&method, &env, params, line, cx)
        }
        Some(Kind::Response) => response(&env, result, line, cx),
        Some(Kind::ErrorResponse) => {
            let e: RpcError = match env.error {
                Some(e) if is_object(e) => serde_json::from_str(e.get())?,
                _ => RpcError {
                    code: None,
                    message: OptStr(None),
                    data: None,
                },
            };
            let ext = cx.push(error_event(
                e.message.0.unwrap_or(Cow::Borrowed("JSON-RPC error")),
                Severity::Error,
            ));
            ext.put_opt("jsonrpc.code", e.code.map(Value::from));
            ext.put_opt("jsonrpc.data", e.data);
            if let Body::Error(err) = &mut cx.events.last_mut().expect("pushed").0 {
                err.request_id = Some(env.id_text().into_owned().into());
            }
            Ok(())
        }
        None => Err(Unmapped(
            "neither a JSON-RPC message nor a Codex line".into(),
        )),
    }
}

pub(super) fn error_event<'a>(message: Str<'a>, severity: Severity) -> ErrorEvent<'a> {
    ErrorEvent {
        message,
        severity,
        code: None,
        http_status: None,
        will_retry: None,
        attempt: None,
        max_retries: None,
        retry_delay_ms: None,
        request_id: None,
        parent_call_id: None,
    }
}

/// A `notice` keeping a raw member in `extensions`.
pub(super) fn notice<'a>(
    cx: &mut Cx<'a>,
    subtype: Str<'a>,
    data: Option<(&'static str, &'a RawValue)>,
) {
    let ext = cx.push(Notice {
        subtype,
        message: None,
    });
    if let Some((k, v)) = data {
        if !is_null(v) {
            ext.put(k, v);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What the stream said before

/// The stream's own thread, once announced ([`Memory::stream`]).
fn stream_thread<'a>(cx: &mut Cx<'a>) -> Option<Str<'a>> {
    cx.memory()
        .codex
        .stream
        .get(STREAM)
        .map(|t| Cow::Owned(t.clone()))
}

/// Names the stream's thread on a line that names none.
fn name_session(cx: &mut Cx<'_>) {
    if cx.session_id.as_deref().is_none_or(str::is_empty) {
        cx.session_id = stream_thread(cx);
    }
}

/// Notes the stream's own thread.
pub(super) fn set_stream_thread(cx: &mut Cx<'_>, thread: &str) {
    let line = cx.line;
    let m = &mut cx.memory().codex.stream;
    if m.get(STREAM).map(String::as_str) != Some(thread) {
        m.insert(STREAM, thread.to_owned(), line);
    }
}

/// The thread of this line: its own, or the stream's.
fn line_thread(cx: &mut Cx<'_>) -> Option<String> {
    match cx.session_id.as_deref().filter(|s| !s.is_empty()) {
        Some(t) => Some(t.to_owned()),
        None => stream_thread(cx).map(Cow::into_owned),
    }
}

/// Notes a call invoked on this line, until it ends.
fn open_call(cx: &mut Cx<'_>, id: &str, tool_name: &str, changes: Vec<Change>) {
    let thread = line_thread(cx);
    let line = cx.line;
    let calls = &mut cx.memory().codex.calls;
    // A decision the client gave before the item started (Codex 0.100) stays.
    let decision = calls.get(id).and_then(|c| c.decision);
    calls.insert(
        id,
        Call {
            thread,
            tool_name: tool_name.to_owned(),
            decision,
            changes,
            invoked: true,
        },
        line,
    );
}

/// Takes out a call that ends on this line (`None`: it was not seen to start, or an answer
/// about it is all the stream said).
fn close_call(cx: &mut Cx<'_>, id: &str) -> Option<Call> {
    cx.memory().codex.calls.remove(id)
}

/// Whether a call is open (invoked and not ended).
fn is_open(cx: &mut Cx<'_>, id: &str) -> bool {
    cx.memory().codex.calls.get(id).is_some_and(|c| c.invoked)
}

/// How a call that Codex reports `declined` ended: `cancelled` when the client's answer was
/// a cancel, else `failed` (it never ran: a denial, or a refusal without a request).
fn declined_status(call: Option<&Call>) -> ToolCallStatus {
    match call.and_then(|c| c.decision) {
        Some(Decision::Cancelled) => ToolCallStatus::Cancelled,
        _ => ToolCallStatus::Failed,
    }
}

/// Ends, as `cancelled`, the calls of `thread` that its interrupted (or, on the app-server,
/// failed) turn left open: the wire never ends them (an approval `cancel` of a file change, a command stopped by
/// `turn/interrupt`). Marked `insights.inferred`.
fn cancel_open_calls(cx: &mut Cx<'_>, thread: Option<&str>) {
    let thread = thread.map(str::to_owned);
    let open = cx
        .memory()
        .codex
        .calls
        .take_where(move |_, c| c.thread == thread);
    for (id, call) in open {
        if !call.invoked {
            continue;
        }
        let mut c = completion(Cow::Owned(id), false, None);
        c.status = ToolCallStatus::Cancelled;
        let ext = cx.push(c);
        ext.put("insights.inferred", true);
    }
}

/// Notes a server request until the client answers it.
fn remember_request(cx: &mut Cx<'_>, id: &str, call: Option<&str>, tool_call: bool) {
    let thread = line_thread(cx);
    let line = cx.line;
    cx.memory().codex.requests.insert(
        id,
        Request {
            call: call.filter(|c| !c.is_empty()).map(str::to_owned),
            thread,
            tool_call,
        },
        line,
    );
}

/// The changes of a file change, as its approval request shows them: what the item that
/// started it said, in the shape of its invocation's `changes` (path, the wire's kind, where
/// a move goes, the wire's diff).
/// Without `diffs`, the diffs are left out (a completion's output: its `file_change`s carry them).
fn changes_json<'a>(changes: &[Change], diffs: bool) -> Json<'a> {
    Json::Array(
        changes
            .iter()
            .map(|c| {
                let mut m = vec![
                    (Cow::Borrowed("path"), Json::Str(Cow::Owned(c.path.clone()))),
                    (
                        Cow::Borrowed("kind"),
                        Json::Str(Cow::Borrowed(match c.kind {
                            ChangeKind::Add => "add",
                            ChangeKind::Delete => "delete",
                            // A move is an update with a `move_path` on the wire.
                            _ => "update",
                        })),
                    ),
                ];
                if let Some(to) = &c.move_path {
                    m.push((
                        Cow::Borrowed("move_path"),
                        Json::Str(Cow::Owned(to.clone())),
                    ));
                }
                if let Some(d) = c.diff.as_ref().filter(|_| diffs) {
                    m.push((Cow::Borrowed("diff"), Json::Str(Cow::Owned(d.clone()))));
                }
                Json::Object(Pairs(m))
            })
            .collect(),
    )
}

/// Notes that the current turn of this line's thread reported its failure in an `error`.
fn note_error(cx: &mut Cx<'_>) {
    let key = line_thread(cx).unwrap_or_default();
    let line = cx.line;
    cx.memory().codex.errored.insert(&key, (), line);
}

/// Whether this line's thread reported its turn's failure already (and forgets it: the turn
/// ends).
fn turn_errored(cx: &mut Cx<'_>) -> bool {
    let key = line_thread(cx).unwrap_or_default();
    cx.memory().codex.errored.remove(&key).is_some()
}

/// A turn of this line's thread started: its usage is what the running total gains from here.
fn usage_turn_started(cx: &mut Cx<'_>, turn: &str) {
    let key = line_thread(cx).unwrap_or_default();
    let line = cx.line;
    let m = &mut cx.memory().codex.usage;
    match m.get_mut(&key) {
        Some(r) => {
            if r.turn != turn {
                r.turn.clear();
                r.turn.push_str(turn);
            }
            r.base = r.now;
            r.fresh = true;
            r.rerouted = false;
        }
        None => m.insert(
            &key,
            Running {
                turn: turn.to_owned(),
                base: None,
                now: None,
                fresh: true,
                rerouted: false,
            },
            line,
        ),
    }
}

/// This line's thread reported its running total (and the usage of the request it counts).
/// Whether the total changed: a report that repeats the last one (after a cancelled request)
/// counts no new request.
fn usage_reported(
    cx: &mut Cx<'_>,
    turn: Option<&str>,
    total: Totals,
    last: Option<Totals>,
) -> bool {
    let key = line_thread(cx).unwrap_or_default();
    let line = cx.line;
    let m = &mut cx.memory().codex.usage;
    let grew = m.get(&key).is_none_or(|r| r.now != Some(total));
    match m.get_mut(&key) {
        Some(r) => {
            if let Some(t) = turn.filter(|t| *t != r.turn) {
                // A turn whose start the stream did not show: it began where the last one
                // reported ended, if any did.
                r.turn.clear();
                r.turn.push_str(t);
                r.base = r.now;
                r.fresh = false;
            }
            if r.base.is_none() && r.fresh {
                // The turn's first request: the total before it was the total without it.
                r.base = last.map(|l| std::array::from_fn(|i| sub(total[i], l[i])));
            }
            r.fresh = false;
            r.now = Some(total);
        }
        None => m.insert(
            &key,
            Running {
                turn: turn.unwrap_or_default().to_owned(),
                base: None,
                now: Some(total),
                fresh: false,
                rerouted: false,
            },
            line,
        ),
    }
    grew
}

/// `a - b`, both reported (a total cannot shrink: `None` if it did).
fn sub(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    a?.checked_sub(b?)
}

/// The usage of turn `turn` of this line's thread, which ends: what the running total gained
/// across it. `None` when no total was reported in it or its start is unknown.
pub(super) fn turn_usage(cx: &mut Cx<'_>, turn: Option<&str>) -> Option<TokenUsage> {
    let key = line_thread(cx).unwrap_or_default();
    let r = cx.memory().codex.usage.get(&key)?;
    if turn.is_some_and(|t| !r.turn.is_empty() && t != r.turn) {
        return None;
    }
    let (base, now) = (r.base?, r.now?);
    if base == now && r.fresh {
        // Nothing reported since the turn started.
        return None;
    }
    let d: Totals = std::array::from_fn(|i| sub(now[i], base[i]));
    let [input, cached, written, output, reasoning] = d;
    Some(TokenUsage {
        input_tokens: input?.saturating_sub(cached.unwrap_or(0)),
        output_tokens: output?,
        cache_read_tokens: cached,
        cache_creation_tokens: written,
        reasoning_tokens: reasoning,
    })
}

/// Notes `model` as the model of `thread` (this line's thread when `None`), from now on.
pub(super) fn set_thread_model(cx: &mut Cx<'_>, thread: Option<&str>, model: &str) {
    if model.is_empty() {
        return;
    }
    let Some(thread) = thread.map(str::to_owned).or_else(|| line_thread(cx)) else {
        return;
    };
    let line = cx.line;
    let m = &mut cx.memory().codex.models;
    if m.get(&thread).map(String::as_str) != Some(model) {
        m.insert(&thread, model.to_owned(), line);
    }
}

/// A turn's `modelUsage`: its `usage` under the model of this line's thread, when the stream
/// said which it is ([`set_thread_model`]); `None` when it did not (no model is guessed), and
/// when the model was rerouted after the turn had spent tokens ([`Running::rerouted`]).
pub(super) fn turn_model_usage<'a>(
    cx: &mut Cx<'_>,
    usage: Option<&TokenUsage>,
) -> Option<Pairs<'a, ModelTokenUsage>> {
    let usage = usage?;
    let thread = line_thread(cx)?;
    let m = &mut cx.memory().codex;
    if m.usage.get(&thread).is_some_and(|r| r.rerouted) {
        return None;
    }
    let model = m.models.get(&thread)?.clone();
    Some(usage_under(model, usage))
}

/// A `model/rerouted` of this line's thread to `model`: the thread's model from now on; a turn
/// that has reported tokens already is of two models ([`Running::rerouted`]).
pub(super) fn reroute(cx: &mut Cx<'_>, model: &str) {
    if let Some(thread) = line_thread(cx) {
        if let Some(r) = cx.memory().codex.usage.get_mut(&thread) {
            if !r.fresh {
                r.rerouted = true;
            }
        }
    }
    set_thread_model(cx, None, model);
}

/// The `mode` of a collaboration mode (`{"mode":"plan","settings":{…}}`), as a `turn/start`,
/// a `thread/settings/updated` and a session file's `turn_context` carry it.
pub(crate) fn collaboration_mode(raw: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct Mode {
        mode: Option<String>,
    }
    serde_json::from_str::<Mode>(raw.get())
        .ok()?
        .mode
        .filter(|m| !m.is_empty())
}

/// The collaboration mode `mode` of this line's thread: a `session_mode` (the mode object kept
/// as `codex.collaborationMode`) when `said` (a client's `turn/start` names it) or when it is
/// news: another mode than the thread's last (a thread starts in `default`, which is no news).
pub(super) fn thread_collaboration<'a>(
    cx: &mut Cx<'a>,
    mode: String,
    raw: &'a RawValue,
    said: bool,
) {
    let thread = line_thread(cx).unwrap_or_default();
    let line = cx.line;
    let modes = &mut cx.memory().codex.modes;
    if !said && modes.get(&thread).map_or("default", String::as_str) == mode {
        return;
    }
    if modes.get(&thread) != Some(&mode) {
        modes.insert(&thread, mode.clone(), line);
    }
    let ext = cx.push(SessionMode {
        current_mode_id: Cow::Owned(mode),
        available_modes: Vec::new(),
    });
    ext.put("codex.collaborationMode", raw);
}

/// `modelUsage` of one model: `usage` under `model`.
pub(crate) fn usage_under<'a>(model: String, usage: &TokenUsage) -> Pairs<'a, ModelTokenUsage> {
    Pairs(vec![(
        Cow::Owned(model),
        ModelTokenUsage {
            tokens: usage.clone(),
            ..ModelTokenUsage::default()
        },
    )])
}

/// `"exceeded retry limit, last status: 429 Too Many Requests, …"` → 429.
fn status_in_message(msg: &str) -> Option<u64> {
    let rest = &msg[msg.find("last status: ")? + "last status: ".len()..];
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    (digits.len() == 3).then(|| digits.parse().ok()).flatten()
}

// ---------------------------------------------------------------------------------------------
// Shell commands

/// The command inside a shell wrapper (`/bin/bash -lc 'ls -1'` → `ls -1`), for display: the
/// line is split into words as a POSIX shell does (single quotes, double quotes with their
/// backslash escapes, backslashes outside quotes, concatenated segments such as
/// `"a b"'c d'`), and a shell followed by a `-c`-style flag and one script word gives the
/// script. Anything else (more words, an unterminated quote) is shown as written.
pub fn unwrap_shell(cmd: &str) -> Cow<'_, str> {
    const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh"];
    let shell_of = |w: &str| SHELLS.contains(&w.rsplit('/').next().unwrap_or(w));
    let is_c_flag = |w: &str| {
        w.len() > 1
            && w.starts_with('-')
            && w.ends_with('c')
            && w[1..].bytes().all(|b| b.is_ascii_alphabetic())
    };
    let first = cmd.split_ascii_whitespace().next().unwrap_or("");
    if shell_of(first) {
        if let Some(mut words) = shell_words(cmd) {
            if words.len() == 3 && shell_of(&words[0]) && is_c_flag(&words[1]) {
                return Cow::Owned(words.pop().unwrap_or_default());
            }
        }
        return Cow::Borrowed(cmd);
    }
    // PowerShell quotes otherwise: `pwsh -Command '…'`.
    let Some(rest) = cmd
        .split_once(" -Command ")
        .filter(|(shell, _)| {
            let name = shell.rsplit(['/', '\\']).next().unwrap_or(shell);
            matches!(name.trim_end_matches(".exe"), "pwsh" | "powershell")
        })
        .map(|(_, rest)| rest.trim())
    else {
        return Cow::Borrowed(cmd);
    };
    if let Some(inner) = rest.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return Cow::Owned(inner.replace("''", "'"));
    }
    if let Some(inner) = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return Cow::Borrowed(inner);
    }
    Cow::Borrowed(rest)
}

/// The words of a POSIX shell command line (quote removal done), or `None` when a quote is
/// not closed. Operators (`;`, `&&`, `|`) are not split out: they stay in the words they
/// touch, which is enough to tell a single script argument from a longer line.
fn shell_words(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        ch => cur.push(ch),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            n @ ('"' | '\\' | '$' | '`') => cur.push(n),
                            '\n' => {}
                            n => {
                                cur.push('\\');
                                cur.push(n);
                            }
                        },
                        ch => cur.push(ch),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(n) => cur.push(n),
                    None => cur.push('\\'),
                }
            }
            ch => {
                in_word = true;
                cur.push(ch);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

/// A command given as a string or as an argv list.
pub(super) fn command_text<'a>(raw: Option<&'a RawValue>) -> Option<Str<'a>> {
    let raw = raw?;
    if let Some(s) = raw_str(raw) {
        return Some(s);
    }
    let argv: Vec<Str> = serde_json::from_str(raw.get()).ok()?;
    // ["bash", "-lc", "ls"] → "ls"; other lists joined with spaces.
    if argv.len() == 3 && matches!(argv[1].as_ref(), "-lc" | "-c") {
        return argv.into_iter().nth(2);
    }
    Some(Cow::Owned(argv.join(" ")))
}

/// A turn's or item's status as the protocol spells it (`failed`, `inProgress`), from either
/// spelling: the event reference writes `"Completed"`, `"Interrupted"`, `"Failed"`,
/// `"InProgress"`; Codex itself sends lower camel case. Borrowed unless the wire capitalized it.
fn wire_status(s: Str<'_>) -> Str<'_> {
    match s.as_bytes().first() {
        Some(c) if c.is_ascii_uppercase() => {
            let mut out = s.into_owned();
            out[..1].make_ascii_lowercase();
            Cow::Owned(out)
        }
        _ => s,
    }
}

fn plan_status(s: Option<&str>) -> PlanStatus {
    match s {
        Some("inProgress" | "in_progress" | "InProgress") => PlanStatus::InProgress,
        Some("completed" | "Completed") => PlanStatus::Completed,
        _ => PlanStatus::Pending,
    }
}

fn change_kind(s: Option<&str>) -> ChangeKind {
    match s {
        Some("add") => ChangeKind::Add,
        Some("delete") => ChangeKind::Delete,
        Some("move") => ChangeKind::Move,
        _ => ChangeKind::Update,
    }
}

/// The `file_change`s of a turn's cumulative diff (`turn/diff/updated`, legacy `turn_diff`).
/// Codex writes it relative to the thread's cwd, and a file change item, an approval request
/// and `patch_apply_begin` with absolute paths: the paths (and the diff's headers) are made
/// absolute with the cwd the thread was announced with, so that both name a file alike.
/// Without a known cwd they stay as the wire has them, marked `codex.relativeToCwd`.
fn cumulative_changes(cx: &mut Cx<'_>, files: Vec<(String, ChangeKind, String, Option<String>)>) {
    if files.is_empty() {
        return;
    }
    let thread = line_thread(cx).unwrap_or_default();
    let cwd = cx.memory().codex.cwds.get(&thread).cloned();
    for (path, kind, section, moved) in files {
        let (path, section, moved) = match cwd.as_deref() {
            Some(cwd) if !path.is_empty() && !path.starts_with('/') => (
                absolute(cwd, &path),
                rebase_headers(&section, cwd),
                moved.map(|m| absolute(cwd, &m)),
            ),
            _ => (path, section, moved),
        };
        let relative = cwd.is_none() && !path.starts_with('/');
        let mut fc = file_change(Cow::Owned(path), kind, Some(section), None);
        fc.move_path = moved.map(Cow::Owned);
        fc.cumulative = true;
        let ext = cx.push(fc);
        if relative {
            ext.put("codex.relativeToCwd", true);
        }
    }
}

fn file_change<'a>(
    path: Str<'a>,
    kind: ChangeKind,
    diff: Option<String>,
    call_id: Option<Str<'a>>,
) -> FileChange<'a> {
    FileChange {
        path,
        change_kind: kind,
        move_path: None,
        diff: diff.map(Cow::Owned),
        cumulative: false,
        call_id,
        parent_call_id: None,
    }
}

fn tool_invocation<'a>(
    call_id: Str<'a>,
    kind: ToolKind,
    name: &'static str,
    title: Option<Str<'a>>,
    input: Json<'a>,
) -> ToolInvocation<'a> {
    ToolInvocation {
        call_id,
        parent_call_id: None,
        kind,
        tool_name: Cow::Borrowed(name),
        title,
        input,
        locations: None,
        model: None,
        mcp_server: None,
        mcp_tool: None,
        message_id: None,
    }
}

fn completion<'a>(call_id: Str<'a>, ok: bool, output: Option<Json<'a>>) -> ToolCompletion<'a> {
    ToolCompletion {
        call_id,
        status: if ok {
            ToolCallStatus::Completed
        } else {
            ToolCallStatus::Failed
        },
        duration_ms: None,
        output,
        is_error: !ok,
        content: None,
        locations: None,
        parent_call_id: None,
    }
}

fn delta<'a>(
    kind: StreamDeltaKind,
    item: Option<Str<'a>>,
    text: Option<Str<'a>>,
) -> StreamDelta<'a> {
    let is_tool = kind == StreamDeltaKind::ToolOutput;
    StreamDelta {
        kind,
        parent_call_id: None,
        text_delta: text,
        json_delta: None,
        block_index: None,
        call_id: if is_tool { item.clone() } else { None },
        message_id: if is_tool { None } else { item },
    }
}

// ---------------------------------------------------------------------------------------------
// What the dialects share

/// An agent message without its `<proposed_plan>` tags (plan mode wraps the plan in them),
/// for the legacy protocol, which has no `plan` item: the plan stays in the message.
fn strip_plan_tags(text: Str<'_>) -> Str<'_> {
    if !text.contains("proposed_plan>") {
        return text;
    }
    let out = text
        .replace("<proposed_plan>\n", "")
        .replace("\n</proposed_plan>", "")
        .replace("<proposed_plan>", "")
        .replace("</proposed_plan>", "");
    Cow::Owned(out)
}

const PLAN_OPEN: &str = "<proposed_plan>";
const PLAN_CLOSE: &str = "</proposed_plan>";

/// An agent message without its `<proposed_plan>` blocks, tags and plan text: the event
/// reference has the client strip them, "plan text is delivered separately via the `plan`
/// item type" (the app-server's `plan` item and `item/plan/delta`, exec's `plan` item), so the
/// plan is shown once. A block still open at the end is cut to the end. The line break after
/// a block goes with it.
pub(crate) fn strip_plan_block(text: Str<'_>) -> Str<'_> {
    if !text.contains(PLAN_OPEN) {
        return text;
    }
    let (out, _) = cut_plan_blocks(&text, false);
    Cow::Owned(out)
}

/// `text` without what is inside `<proposed_plan>` blocks, starting inside one when `inside`;
/// and whether it ends inside one.
fn cut_plan_blocks(text: &str, mut inside: bool) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        if inside {
            match rest.find(PLAN_CLOSE) {
                Some(i) => {
                    rest = &rest[i + PLAN_CLOSE.len()..];
                    rest = rest.strip_prefix('\n').unwrap_or(rest);
                    inside = false;
                }
                None => return (out, true),
            }
        } else {
            match rest.find(PLAN_OPEN) {
                Some(i) => {
                    out.push_str(&rest[..i]);
                    rest = &rest[i + PLAN_OPEN.len()..];
                    inside = true;
                }
                None => {
                    out.push_str(rest);
                    return (out, false);
                }
            }
        }
    }
}

/// An `item/agentMessage/delta` without what is inside `<proposed_plan>` blocks
/// ([`strip_plan_block`]), across deltas: the message `item` whose deltas are inside a block
/// is remembered until its closing tag. `None` when nothing is left of the delta. (A tag split
/// across two deltas is not recognised.)
fn plan_free_delta<'a>(cx: &mut Cx<'a>, item: Option<&str>, delta: Str<'a>) -> Option<Str<'a>> {
    let key = item.unwrap_or("");
    let inside = cx.memory().codex.plan_blocks.contains(key);
    if !inside && !delta.contains(PLAN_OPEN) {
        return Some(delta);
    }
    let (out, ends_inside) = cut_plan_blocks(&delta, inside);
    let line = cx.line;
    let blocks = &mut cx.memory().codex.plan_blocks;
    match (inside, ends_inside) {
        (false, true) => blocks.insert(key, (), line),
        (true, false) => {
            blocks.remove(key);
        }
        _ => {}
    }
    (!out.is_empty()).then_some(Cow::Owned(out))
}

/// Pushes a `text` event; its extensions, to add to.
fn text<'a, 'c>(
    cx: &'c mut Cx<'a>,
    text: Str<'a>,
    kind: TextKind,
    message_id: Option<Str<'a>>,
) -> &'c mut Extensions<'a> {
    cx.push(Text {
        text,
        kind,
        parent_call_id: None,
        model: None,
        message_id,
    })
}

/// The extension (`true`) on thinking that is the raw reasoning (a reasoning item's
/// `content`, `item/reasoning/textDelta`, `agent_reasoning_raw_content*`); thinking without
/// it is the reasoning's summary. `reduce` keeps the two apart.
pub(super) const RAW_REASONING: &str = "codex.rawReasoning";

/// A step of a plan as Codex states it (`turn/plan/updated`, a legacy `plan_update`, the
/// arguments of an `update_plan` call in a session file).
#[derive(Deserialize)]
pub(super) struct PlanStep<'a> {
    #[serde(borrow)]
    step: OptStr<'a>,
    status: OptStr<'a>,
}

impl PlanStep<'_> {
    /// The step with its text copied, for plans parsed from text that does not outlive them
    /// (a call's arguments).
    pub(super) fn into_owned(self) -> PlanStep<'static> {
        let own = |s: OptStr| OptStr(s.0.map(|c| Cow::Owned(c.into_owned())));
        PlanStep {
            step: own(self.step),
            status: own(self.status),
        }
    }
}

/// A plan as Codex states it: `{explanation, plan: [{step, status}]}`.
#[derive(Deserialize)]
pub(super) struct Plan<'a> {
    #[serde(borrow)]
    pub explanation: OptStr<'a>,
    #[serde(borrow, default)]
    pub plan: Option<Vec<PlanStep<'a>>>,
}

/// The `plan_update` of a plan's steps: one event shape for the live stream and the session
/// files.
pub(super) fn plan_update<'a>(
    explanation: Option<Str<'a>>,
    steps: Option<Vec<PlanStep<'a>>>,
    call_id: Option<Str<'a>>,
) -> PlanUpdate<'a> {
    let entries = steps
        .unwrap_or_default()
        .into_iter()
        .map(|s| PlanEntry {
            status: plan_status(s.status.as_deref()),
            content: s.step.0.unwrap_or_default(),
            priority: None,
            active_form: None,
        })
        .collect();
    PlanUpdate {
        entries,
        call_id,
        parent_call_id: None,
        explanation,
    }
}

/// The `file_change`s of a call's applied changes, one per file, each with its git diff
/// (a legacy `patch_apply_end`, a session file's `apply_patch` output).
pub(super) fn push_file_changes<'a>(cx: &mut Cx<'a>, call_id: &Str<'a>, changes: Vec<Change>) {
    for c in changes {
        let diff = c
            .diff
            .as_deref()
            .map(|d| diff::git_diff(&c.path, c.kind, c.move_path.as_deref(), d));
        let mut fc = file_change(Cow::Owned(c.path), c.kind, diff, Some(call_id.clone()));
        fc.move_path = c.move_path.map(Cow::Owned);
        cx.push(fc);
    }
}

/// An object of the members given, in order. Raw JSON in them passes through untouched:
/// `json!` would parse it into a `serde_json::Value`, which cannot hold every JSON text (a
/// lone surrogate `"\ud800"`, `1e999`, nesting deeper than 128) and panics on it.
fn object<'a, const N: usize>(members: [(&'static str, Json<'a>); N]) -> Json<'a> {
    Json::Object(Pairs(
        members
            .into_iter()
            .map(|(k, v)| (Cow::Borrowed(k), v))
            .collect(),
    ))
}

/// A member's value, or `null` when it is absent (as `json!` writes `None`).
fn or_null<'a, T: Into<Json<'a>>>(v: Option<T>) -> Json<'a> {
    v.map_or(Json::Value(Value::Null), Into::into)
}

/// `{"httpConnectionFailed":{"httpStatusCode":502}}` → 502.
fn http_status(info: &RawValue) -> Option<u64> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Inner {
        http_status_code: Option<u64>,
    }
    // Read member by member, not as a `Value`, which fails on other members it cannot hold.
    let outer: Pairs<&RawValue> = serde_json::from_str(info.get()).ok()?;
    outer.0.iter().find_map(|(_, inner)| {
        serde_json::from_str::<Inner>(inner.get())
            .ok()?
            .http_status_code
    })
}

/// After a collab call's completion: a spawn notes the agents it started (until they end);
/// a `closeAgent` ends the agents it names, a `wait` those whose state it reports final.
/// A subagent's `subagent_complete` names the call that spawned it.
#[allow(clippy::too_many_arguments)]
fn collab_end<'a>(
    cx: &mut Cx<'a>,
    call: Str<'a>,
    tool: &str,
    ok: bool,
    agent: Option<Str<'a>>,
    receivers: Vec<Str<'a>>,
    states: Option<&'a RawValue>,
    status: Option<Str<'a>>,
) {
    let states: Vec<(Str, Option<Str>)> = states
        .filter(|s| is_object(s))
        .and_then(|s| serde_json::from_str::<Pairs<AgentState>>(s.get()).ok())
        .map(|p| p.0.into_iter().map(|(k, v)| (k, v.status.0)).collect())
        .unwrap_or_default();
    if matches!(tool, "spawn_agent" | "spawnAgent") {
        let spawned: Vec<Str> = match &agent {
            Some(a) if receivers.is_empty() => vec![a.clone()],
            _ => receivers,
        };
        if !ok {
            push_subagent_end(cx, call, spawned.into_iter().next(), status);
            return;
        }
        let line = cx.line;
        for a in spawned {
            cx.memory().codex.agents.insert(&a, call.to_string(), line);
        }
        return;
    }
    let closing = matches!(tool, "close_agent" | "closeAgent");
    let mut ended: Vec<(Str, Option<Str>)> = Vec::new();
    if closing {
        for a in receivers.into_iter().chain(agent) {
            if !ended.iter().any(|(e, _)| *e == a) {
                let st = states
                    .iter()
                    .find(|(k, _)| *k == a)
                    .and_then(|(_, s)| s.clone());
                ended.push((a, st.or(Some(Cow::Borrowed("closed")))));
            }
        }
    } else {
        for (a, st) in &states {
            let last = st.as_deref().is_some_and(|s| {
                matches!(
                    s,
                    "completed" | "errored" | "shutdown" | "notFound" | "interrupted"
                )
            });
            if last {
                ended.push((a.clone(), st.clone()));
            }
        }
    }
    for (a, st) in ended {
        if let Some(spawn) = cx.memory().codex.agents.remove(&a) {
            push_subagent_end(cx, Cow::Owned(spawn), Some(a), st);
        }
    }
}

/// A subagent's state in a collab call's `agentsStates`.
#[derive(Deserialize)]
struct AgentState<'a> {
    #[serde(borrow)]
    status: OptStr<'a>,
}

/// The `subagent_complete` of the subagent that call `spawn` started.
fn push_subagent_end<'a>(
    cx: &mut Cx<'a>,
    spawn: Str<'a>,
    agent: Option<Str<'a>>,
    status: Option<Str<'a>>,
) {
    cx.push(SubagentComplete {
        call_id: spawn,
        agent_id: agent,
        status,
        summary: None,
        duration_ms: None,
        total_tokens: None,
        tool_use_count: None,
        parent_call_id: None,
    });
}

/// Decodes standard base64 (legacy command output chunks); `None` if it is not base64.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    }
    let bytes: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let trimmed: &[u8] = {
        let mut end = bytes.len();
        while end > 0 && bytes[end - 1] == b'=' {
            end -= 1;
        }
        &bytes[..end]
    };
    let mut out = Vec::with_capacity(trimmed.len() * 3 / 4);
    for chunk in trimmed.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * i);
        }
        let n = match chunk.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => return None,
        };
        for i in 0..n {
            out.push((acc >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{self, kinds, of_kind};
    use serde_json::json;

    /// One line's events; the line must be one detection takes for Codex.
    pub(super) fn conv(line: &str) -> Vec<Value> {
        test_support::convert_sniffed(&PROVIDER, line)
    }

    /// Line `n` (from 1) of a recorded capture.
    pub(super) fn line_of(capture: &'static str, n: usize) -> &'static str {
        capture
            .lines()
            .nth(n - 1)
            .expect("the capture has the line")
    }

    pub(super) const APP_SERVER_DECLINED: &str =
        include_str!("../../../testdata/codex-app-server/command-declined.jsonl");
    pub(super) const APP_SERVER_0_100_DECLINED: &str =
        include_str!("../../../testdata/codex-app-server-0.100/command-declined.jsonl");

    /// Each event of a line as its JSON text: `serde_json::Value` cannot hold what these
    /// tests feed through.
    pub(super) fn conv_text(line: &str) -> Vec<(&'static str, String)> {
        // (Converted as with `--from codex`: not every line here is one detection gives Codex.)
        test_support::convert_stream_with(&PROVIDER, &[line], |b, _, _| {
            (b.kind(), serde_json::to_string(b).unwrap())
        })
    }

    /// Converts lines of one stream, in order, with what the converter remembers between
    /// them; each event gets its line's `sessionId`.
    pub(super) fn stream(lines: &[&str]) -> Vec<Value> {
        test_support::convert_stream(&PROVIDER, lines)
    }

    /// `--jobs`: a chunk that judged a legacy line from a start without the v2 notification
    /// before it is converted again from its real start; a chunk that saw the notification
    /// itself is not, and the state after it holds the notification whatever its start.
    #[test]
    fn a_chunk_judging_legacy_lines_depends_on_the_v2_notifications_before_it() {
        use crate::convert::{Converter, Options, StreamState};
        const V2: &str = r#"{"method":"turn/started","params":{"threadId":"t","turn":{"id":"u"}}}"#;
        const LEGACY: &str = r#"{"method":"codex/event/agent_message","params":{"id":"1","msg":{"type":"agent_message","message":"hi"},"conversationId":"t"}}"#;
        let opts = Options::for_tests(1 << 20);
        // The chunk's own state, whether it depended on its start, and its end state.
        let chunk = |start: &StreamState, lines: &[&str]| {
            let mut out = crate::output::Out::new(Vec::new());
            let mut conv = Converter::new(&opts, &mut out);
            conv.set_state(start.clone());
            let text = lines.join("\n");
            let mut diag = crate::diag::Diag::new(false);
            conv.run_reader(text.as_bytes(), "<test>", &mut diag)
                .unwrap();
            let depended = conv.depended_on_start();
            let (own, end) = conv.take_states();
            (own, depended, end)
        };
        let seen = |s: &StreamState| s.memory.codex.v2_seen.seen;
        let before = StreamState::default();
        assert!(seen(&chunk(&before, &[V2]).2));
        // A start that differs from `before` only by the notification.
        let mut memory = crate::providers::Memory::default();
        memory.codex.v2_seen.set();
        let after_v2 = StreamState {
            memory: std::sync::Arc::new(memory),
            ..StreamState::default()
        };
        // Guessed without the notification the real start has.
        let (own, depended, _) = chunk(&before, &[LEGACY]);
        assert!(own.stale(depended, &before, &after_v2));
        assert!(!own.stale(depended, &before, &before));
        // Guessed with it, the real start without.
        let (own, depended, _) = chunk(&after_v2, &[LEGACY]);
        assert!(own.stale(depended, &after_v2, &before));
        // The notification in the chunk, before the legacy line.
        let (own, depended, _) = chunk(&before, &[V2, LEGACY]);
        assert!(!own.stale(depended, &before, &after_v2));
        assert!(seen(&own.after(before.clone())));
        // Neither read nor stated: the start's fact carries through.
        let (own, depended, _) = chunk(&before, &[]);
        assert!(!own.stale(depended, &before, &after_v2));
        assert!(seen(&own.after(after_v2.clone())));
    }

    #[test]
    fn a_fact_read_before_a_line_stated_it_is_a_dependence_on_the_start() {
        let unset = Seen::default();
        let mut set = Seen::default();
        set.set();
        // Stated by the start a `--jobs` part was converted from (a guess): what it read
        // depends on it.
        let mut part = set.clone();
        part.begin(true);
        assert!(part.get());
        assert!(part.stale(&set, &unset));
        assert!(!part.stale(&set, &set));
        // Stated by a line of the part before it read it: no dependence.
        let mut part = unset.clone();
        part.begin(true);
        part.set();
        assert!(part.get());
        assert!(!part.stale(&unset, &set));
        assert_eq!(part.after(unset.clone()), set);
        // Read, and not stated by anyone: it depends on the start.
        let mut part = unset.clone();
        part.begin(true);
        assert!(!part.get());
        assert!(part.stale(&unset, &set));
        // Neither read nor stated: the start's fact holds after the part.
        let mut part = unset.clone();
        part.begin(true);
        assert!(!part.stale(&unset, &set));
        assert_eq!(part.after(set.clone()), set);
        assert_eq!(part.after(unset.clone()), unset);
    }

    #[test]
    fn shell_unwrapping() {
        assert_eq!(unwrap_shell("/bin/bash -lc 'uname -s'"), "uname -s");
        assert_eq!(
            unwrap_shell("/bin/bash -lc \"echo a; echo 'b' >&2\""),
            "echo a; echo 'b' >&2"
        );
        assert_eq!(unwrap_shell("bash -lc 'it'\\''s'"), "it's");
        assert_eq!(unwrap_shell("pwsh -Command 'echo hi'"), "echo hi");
        assert_eq!(unwrap_shell("ls -la"), "ls -la");
        assert_eq!(unwrap_shell("python -c 'print(1)'"), "python -c 'print(1)'");
    }

    #[test]
    fn base64() {
        assert_eq!(base64_decode("Zmlyc3QK").unwrap(), b"first\n");
        assert_eq!(base64_decode("YQ==").unwrap(), b"a");
        assert!(base64_decode("!!").is_none());
    }

    #[test]
    fn acp_initialize_is_not_codex() {
        let probe: Probe = serde_json::from_str(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#).unwrap();
        assert!(!sniff(&probe));
    }

    #[test]
    fn a_result_a_message_does_not_use_is_not_read() {
        // `Message` reads a result typed; where it cannot, the line is read as before it did.
        let ev = conv(r#"{"id":6,"error":{"code":-1,"message":"m"},"result":{"thread":5}}"#);
        assert_eq!(ev[0]["event"], "error");
        assert_eq!(ev[0]["requestId"], "6");
        let ev = conv(
            r#"{"method":"turn/started","params":{"threadId":"t","turn":{"id":"u"}},"result":{"thread":5}}"#,
        );
        assert_eq!(ev[0]["event"], "turn_start");
        let line = r#"{"id":6,"result":{"thread":5}}"#;
        let probe: Probe = serde_json::from_str(line).unwrap();
        assert!(convert(line, &probe, &mut Cx::default()).is_err());
    }

    #[test]
    fn raw_reasoning_is_marked_apart_from_the_summary() {
        // App-server deltas: the summary's unmarked, the raw reasoning's marked.
        let summary = conv(
            r#"{"method":"item/reasoning/summaryTextDelta","params":{"threadId":"t","turnId":"u","itemId":"rs1","delta":"**Plan**","summaryIndex":0}}"#,
        );
        assert_eq!(summary[0]["kind"], "thinking");
        assert!(summary[0].get("extensions").is_none());
        let raw = conv(
            r#"{"method":"item/reasoning/textDelta","params":{"threadId":"t","turnId":"u","itemId":"rs1","delta":"raw thinking","contentIndex":0}}"#,
        );
        assert_eq!(raw[0]["textDelta"], "raw thinking");
        assert_eq!(raw[0]["extensions"][RAW_REASONING], true);
        // A completed item with both: the summary, then the raw content, marked.
        let done = conv(
            r#"{"method":"item/completed","params":{"item":{"type":"reasoning","id":"rs1","summary":["**Plan**","Then act."],"content":["raw one","raw two"]},"threadId":"t","turnId":"u"}}"#,
        );
        let texts: Vec<_> = done
            .iter()
            .map(|e| (e["text"].clone(), e["extensions"][RAW_REASONING].clone()))
            .collect();
        assert_eq!(
            texts,
            vec![
                (json!("**Plan**\n\nThen act."), Value::Null),
                (json!("raw one\nraw two"), json!(true)),
            ]
        );
        assert!(done.iter().all(|e| e["messageId"] == "rs1"));
        // Raw content alone (OSS models) is marked; an empty item is one unmarked empty text.
        let only_raw = conv(
            r#"{"method":"item/completed","params":{"item":{"type":"reasoning","id":"rs2","summary":[],"content":["just raw"]},"threadId":"t","turnId":"u"}}"#,
        );
        assert_eq!(only_raw.len(), 1);
        assert_eq!(only_raw[0]["extensions"][RAW_REASONING], true);
        let empty = conv(
            r#"{"method":"item/completed","params":{"item":{"type":"reasoning","id":"rs3","summary":[],"content":[]},"threadId":"t","turnId":"u"}}"#,
        );
        assert_eq!(empty.len(), 1);
        assert_eq!(empty[0]["text"], "");
        assert!(empty[0].get("extensions").is_none());
        // Legacy events: agent_reasoning is the summary, *_raw_content the raw reasoning.
        let legacy = |ty: &str, field: &str| {
            conv(&format!(
                r#"{{"method":"codex/event/{ty}","params":{{"id":"1","msg":{{"type":"{ty}","{field}":"x"}},"conversationId":"thread"}}}}"#
            ))
        };
        assert!(legacy("agent_reasoning", "text")[0]
            .get("extensions")
            .is_none());
        assert_eq!(
            legacy("agent_reasoning_raw_content", "text")[0]["extensions"][RAW_REASONING],
            true
        );
        assert_eq!(
            legacy("agent_reasoning_raw_content_delta", "delta")[0]["extensions"][RAW_REASONING],
            true
        );
        assert!(legacy("agent_reasoning_delta", "delta")[0]
            .get("extensions")
            .is_none());
        // codex exec's reasoning item is the summary (its `text`).
        let exec = conv(
            r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Summarizing**"}}"#,
        );
        assert_eq!(exec[0]["kind"], "thinking");
        assert!(exec[0].get("extensions").is_none());
    }

    /// Values that `serde_json::Value` cannot hold (found by fuzz target `convert_codex`, where
    /// `json!` over them panicked): they pass through untouched, in every wire format.
    #[test]
    fn values_a_json_value_cannot_hold_pass_through() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        for v in [r#""echo \ud800""#, "[\"echo\",1e999]", deep.as_str()] {
            for (line, kind, member) in [
                (
                    format!(
                        r#"{{"type":"item.started","item":{{"id":"i","type":"command_execution","command":{v},"status":"in_progress"}}}}"#
                    ),
                    "tool_invocation",
                    format!(r#""input":{{"command":{v}}}"#),
                ),
                (
                    format!(
                        r#"{{"type":"item.started","item":{{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","arguments":{v}}}}}"#
                    ),
                    "tool_invocation",
                    format!(r#""arguments":{v}}}"#),
                ),
                (
                    format!(
                        r#"{{"type":"item.completed","item":{{"id":"i","type":"web_search","query":"q","action":{v}}}}}"#
                    ),
                    "tool_invocation",
                    format!(r#""action":{v}}}"#),
                ),
                (
                    format!(
                        r#"{{"method":"item/started","params":{{"threadId":"t","turnId":"u","item":{{"id":"i","type":"commandExecution","command":"ls","cwd":"/w","commandActions":{v}}}}}}}"#
                    ),
                    "tool_invocation",
                    format!(r#""commandActions":{v}}}"#),
                ),
                (
                    format!(
                        r#"{{"method":"item/fileChange/requestApproval","id":3,"params":{{"threadId":"t","turnId":"u","itemId":"i","fileChanges":{v}}}}}"#
                    ),
                    "permission_request",
                    format!(r#""fileChanges":{v}}}"#),
                ),
                (
                    format!(r#"{{"id":3,"result":{{"answers":{v}}}}}"#),
                    "permission_response",
                    format!(r#"{{"answers":{v}}}"#),
                ),
                (
                    format!(
                        r#"{{"method":"codex/event/exec_command_begin","params":{{"id":"1","msg":{{"type":"exec_command_begin","call_id":"c","command":{v},"cwd":"/w"}},"conversationId":"t"}}}}"#
                    ),
                    "tool_invocation",
                    format!(r#""input":{{"command":{v},"cwd":"/w"}}"#),
                ),
                (
                    format!(
                        r#"{{"method":"codex/event/patch_apply_begin","params":{{"id":"1","msg":{{"type":"patch_apply_begin","call_id":"c","changes":{v}}},"conversationId":"t"}}}}"#
                    ),
                    "tool_invocation",
                    format!(r#""input":{{"changes":{v}}}"#),
                ),
            ] {
                let evs = conv_text(&line);
                let (k, text) = &evs[0];
                assert_eq!(*k, kind, "{line:.120}");
                assert!(text.contains(&member), "{line:.120}\n{text:.300}");
            }
        }
    }

    /// The input of fuzz/known/convert_codex-json-lone-surrogate: the command keeps its lone
    /// surrogate escape, the line yields its tool invocation.
    #[test]
    fn the_known_lone_surrogate_input_converts() {
        let input = include_str!("../../../fuzz/known/convert_codex-json-lone-surrogate");
        let line = input
            .lines()
            .find(|l| l.contains(r"\ud800"))
            .expect("the line with the lone surrogate");
        let evs = conv_text(line);
        assert_eq!(evs[0].0, "tool_invocation");
        assert!(evs[0].1.contains(r"c\ud800king"), "{}", evs[0].1);
    }

    #[test]
    fn http_status_is_read_beside_members_a_value_cannot_hold() {
        let info: &RawValue = serde_json::from_str(
            r#"{"other":"\ud800","httpConnectionFailed":{"x":1e999,"httpStatusCode":502}}"#,
        )
        .unwrap();
        assert_eq!(http_status(info), Some(502));
    }

    #[test]
    fn shell_titles_read_quotes_as_a_shell_does() {
        // testdata facts mixed-quoting: a double-quoted wrapper with backslash escapes and
        // concatenated segments.
        assert_eq!(
            unwrap_shell(r#"/bin/bash -lc "echo \"a b\"'c d' && printf '%s\\n' \"it's\"""#),
            r#"echo "a b"'c d' && printf '%s\n' "it's""#
        );
        assert_eq!(unwrap_shell(r#"bash -lc 'a'"b c"'d'"#), "ab cd");
        assert_eq!(
            unwrap_shell(r#"bash -c "x \$HOME \`y\` \q""#),
            r"x $HOME `y` \q"
        );
        assert_eq!(unwrap_shell("/bin/zsh -lc ls\\ -la"), "ls -la");
        // Not one script: shown as written.
        assert_eq!(unwrap_shell("bash -lc 'a' b"), "bash -lc 'a' b");
        assert_eq!(unwrap_shell("bash -lc 'open"), "bash -lc 'open");
        assert_eq!(unwrap_shell("bash script.sh"), "bash script.sh");
    }

    #[test]
    fn a_failed_turn_gives_an_error_then_the_failed_turn_complete() {
        // exec: the `error` line says it; the failed turn adds no second error.
        let evs = stream(&[
            r#"{"type":"thread.started","thread_id":"t"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}"#,
            r#"{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}"#,
        ]);
        assert_eq!(
            kinds(&evs),
            ["session_init", "turn_start", "error", "turn_complete"]
        );
        assert_eq!(evs[2]["httpStatus"], 429);
        assert_eq!(evs[3]["isError"], true);
        // A failed turn alone: its error becomes the `error`.
        let evs = stream(&[
            r#"{"method":"turn/completed","params":{"threadId":"a","turn":{"id":"u","status":"failed","error":{"message":"boom","codexErrorInfo":{"responseTooManyFailedAttempts":{"httpStatusCode":429}}}}}}"#,
        ]);
        assert_eq!(kinds(&evs), ["error", "turn_complete"]);
        assert_eq!(evs[0]["httpStatus"], 429);
        assert_eq!(evs[0]["code"], "responseTooManyFailedAttempts");
        assert_eq!(evs[1]["isError"], true);
    }

    #[test]
    fn a_report_that_repeats_the_total_is_no_new_request() {
        // codex app-server 0.169 (a recording): after a cancelled request the running total
        // is reported again, unchanged, with the earlier request's `last`.
        let report = |t: &str| {
            format!(
                r#"{{"method":"thread/tokenUsage/updated","params":{{"threadId":"a","turnId":"{t}","tokenUsage":{{"total":{{"totalTokens":9516,"inputTokens":9505,"cachedInputTokens":0,"outputTokens":11}},"last":{{"totalTokens":9516,"inputTokens":9505,"cachedInputTokens":0,"outputTokens":11}}}}}}}}"#
            )
        };
        let (first, again) = (report("u1"), report("u2"));
        let evs = stream(&[&first, &again]);
        let ups = of_kind(&evs, "usage_update");
        assert_eq!(ups[0]["stepUsage"]["input_tokens"], 9505);
        assert_eq!(ups[1]["stepUsage"], json!({}));
        assert_eq!(ups[1]["total"]["inputTokens"], 9505);
        assert_eq!(
            ups[1]["extensions"]["codex.repeatedLast"]["input_tokens"],
            9505
        );
    }

    #[test]
    fn a_turn_uses_what_the_running_total_gained_across_it() {
        fn usage(turn: &str, total: [u64; 3], last: [u64; 3]) -> String {
            let b = |t: [u64; 3]| {
                format!(
                    r#"{{"totalTokens":{},"inputTokens":{},"cachedInputTokens":{},"outputTokens":{}}}"#,
                    t[0] + t[2],
                    t[0],
                    t[1],
                    t[2]
                )
            };
            format!(
                r#"{{"method":"thread/tokenUsage/updated","params":{{"threadId":"a","turnId":"{turn}","tokenUsage":{{"total":{},"last":{}}}}}}}"#,
                b(total),
                b(last)
            )
        }
        let started = |t: &str| {
            format!(
                r#"{{"method":"turn/started","params":{{"threadId":"a","turn":{{"id":"{t}","items":[],"status":"inProgress"}}}}}}"#
            )
        };
        let completed = |t: &str| {
            format!(
                r#"{{"method":"turn/completed","params":{{"threadId":"a","turn":{{"id":"{t}","items":[],"status":"completed"}}}}}}"#
            )
        };
        // Two requests in the first turn, one in the second: each turn's own tokens, never
        // the thread's total.
        let lines = [
            started("u1"),
            usage("u1", [100, 0, 5], [100, 0, 5]),
            usage("u1", [250, 100, 12], [150, 100, 7]),
            completed("u1"),
            started("u2"),
            completed("u2x"),
            usage("u2", [450, 200, 20], [200, 100, 8]),
            completed("u2"),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let evs = stream(&lines);
        let turns = of_kind(&evs, "turn_complete");
        let steps: Vec<&Value> = of_kind(&evs, "usage_update")
            .iter()
            .map(|u| &u["stepUsage"])
            .collect();
        assert_eq!(steps[0]["input_tokens"], 100);
        assert_eq!(turns[0]["usage"]["inputTokens"], 150);
        assert_eq!(turns[0]["usage"]["cacheReadTokens"], 100);
        assert_eq!(turns[0]["usage"]["outputTokens"], 12);
        // A turn the running total does not name: unknown.
        assert!(turns[1].get("usage").is_none());
        assert_eq!(turns[2]["usage"]["inputTokens"], 100);
        assert_eq!(turns[2]["usage"]["cacheReadTokens"], 100);
        assert_eq!(turns[2]["usage"]["outputTokens"], 8);
        // A stream that begins inside the thread's life, after its turn started: the total
        // before the turn is unknown, and so is the turn's usage; the next turn's is known.
        let lines = [
            usage("u1", [900, 0, 50], [300, 0, 10]),
            completed("u1"),
            started("u2"),
            usage("u2", [1100, 100, 60], [200, 100, 10]),
            completed("u2"),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let evs = stream(&lines);
        let turns = of_kind(&evs, "turn_complete");
        assert!(turns[0].get("usage").is_none());
        assert_eq!(turns[1]["usage"]["inputTokens"], 100);
        assert_eq!(turns[1]["usage"]["cacheReadTokens"], 100);
        // A closed thread's total is forgotten.
        let closed = r#"{"method":"thread/closed","params":{"threadId":"a"}}"#.to_owned();
        let lines = [
            started("u1"),
            usage("u1", [100, 0, 5], [100, 0, 5]),
            closed,
            usage("u1", [150, 0, 9], [50, 0, 4]),
            completed("u1"),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let evs = stream(&lines);
        assert!(of_kind(&evs, "turn_complete")[0].get("usage").is_none());
        assert_eq!(turns[1]["usage"]["outputTokens"], 10);
    }

    #[test]
    fn a_move_is_said_by_the_call_its_approval_and_its_file_change() {
        // codex app-server 0.169 (a recording): a patch moving src/old.py to lib/new.py.
        let change = r#"[{"path":"/w/src/old.py","kind":{"type":"update","move_path":"/w/lib/new.py"},"diff":"@@ -1 +1 @@\n-a\n+b\n\n\nMoved to: /w/lib/new.py"}]"#;
        let item = |status: &str| {
            format!(r#"{{"type":"fileChange","id":"f1","status":"{status}","changes":{change}}}"#)
        };
        let lines = [
            format!(r#"{{"method":"item/started","params":{{"threadId":"a","turnId":"u","item":{}}}}}"#, item("inProgress")),
            r#"{"id":0,"method":"item/fileChange/requestApproval","params":{"threadId":"a","turnId":"u","itemId":"f1"}}"#.to_owned(),
            format!(r#"{{"method":"item/completed","params":{{"threadId":"a","turnId":"u","item":{}}}}}"#, item("completed")),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let evs = stream(&lines);
        let moved =
            json!({"path": "/w/src/old.py", "kind": "update", "move_path": "/w/lib/new.py"});
        let inv = of_kind(&evs, "tool_invocation")[0];
        assert_eq!(inv["input"]["file_path"], "/w/src/old.py");
        assert_eq!(inv["input"]["changes"][0]["move_path"], moved["move_path"]);
        assert_eq!(inv["locations"], json!(["/w/src/old.py", "/w/lib/new.py"]));
        let ask = of_kind(&evs, "permission_request")[0];
        assert_eq!(
            ask["toolInput"]["changes"][0]["move_path"],
            moved["move_path"]
        );
        assert_eq!(ask["toolInput"]["changes"][0]["kind"], "update");
        let done = of_kind(&evs, "tool_completion")[0];
        assert_eq!(done["output"], json!({"changes": [moved]}));
        assert_eq!(done["locations"], inv["locations"]);
        assert_eq!(done["extensions"]["codex.status"], "completed");
        let fc = of_kind(&evs, "file_change")[0];
        assert_eq!(
            (&fc["changeKind"], &fc["movePath"]),
            (&json!("move"), &moved["move_path"])
        );
    }

    #[test]
    fn cumulative_diffs_name_files_by_absolute_path_as_file_changes_do() {
        let diff = r#"{"method":"turn/diff/updated","params":{"threadId":"a","turnId":"u","diff":"diff --git a/src/old.py b/src/new.py\nindex 1..2\n--- a/src/old.py\n+++ b/src/new.py\n@@ -1 +1 @@\n-a\n+b\n"}}"#;
        let evs = stream(&[
            r#"{"method":"thread/started","params":{"thread":{"id":"a","cwd":"/w/p"}}}"#,
            diff,
        ]);
        let fc = of_kind(&evs, "file_change");
        assert_eq!(fc[0]["path"], "/w/p/src/old.py");
        assert_eq!(fc[0]["movePath"], "/w/p/src/new.py");
        assert_eq!(
            fc[0]["diff"],
            "diff --git a/w/p/src/old.py b/w/p/src/new.py\nindex 1..2\n--- a/w/p/src/old.py\n+++ b/w/p/src/new.py\n@@ -1 +1 @@\n-a\n+b\n"
        );
        assert!(fc[0].get("extensions").is_none());
        // No announcement, no cwd: the wire's relative path, said to be relative.
        let evs = stream(&[diff]);
        let fc = of_kind(&evs, "file_change");
        assert_eq!(fc[0]["path"], "src/old.py");
        assert_eq!(fc[0]["extensions"]["codex.relativeToCwd"], true);
    }
}
