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
//! v2 notification has been seen in the stream (a sticky bit), legacy lines become `notice` events (`codex/event/<type>`, the message in
//! `extensions`, `codex.supersededBy: "v2"`) instead of content events; before that, and in
//! streams without v2, legacy lines are mapped in full. Nothing is lost and nothing doubles.
//!
//! **What the converter remembers** ([`Memory`], bounded): the stream's own thread (exec
//! lines carry no thread id after `thread.started`; answers and legacy `proto` lines none at
//! all: their events name it), threads half announced (the `thread/start` answer and the
//! `thread/started` notification are one `session_init`), server requests until the client
//! answers (the call they ask about: the answer's `toolUseId`, and the decision the call's
//! end needs), open calls until they end (a turn that ends `interrupted` ends those it left
//! open as `cancelled`, marked `insights.inferred`), whether a turn's failure was already
//! stated by an `error`, each thread's running token total (a turn's `usage` is what it
//! gained across the turn), and spawned subagents until they end. Item ids of exec
//! (`item_3`) are unique only within a thread.

use super::jsonrpc::{Envelope, Kind, Message, RpcError};
use super::memo::Memo;
use super::{Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::members::Line;
use crate::wire::{count, is_null, is_object, raw_str, Count, IfObject};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

pub const PROVIDER: Provider = Provider {
    name: "codex",
    about: "Codex: exec --json, app-server JSON-RPC v2 (client tee too), legacy codex/event",
    jsonrpc: true,
    sniff,
    convert,
    caps: super::Capabilities {
        streaming_deltas: true,
        tool_calls: true,
        tool_results: true,
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
            let method = env.method.clone().unwrap_or_default();
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
                    message: None,
                    data: None,
                },
            };
            let ext = cx.push(error_event(
                e.message.unwrap_or(Cow::Borrowed("JSON-RPC error")),
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

/// An `item/started` or `item/completed` notification, its item read in the line's pass: these
/// are a third of an app-server log, and [`Params`] keeps `item` raw (other methods' items
/// have other shapes), which read it twice.
fn item_line<'a>(method: &str, line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    #[derive(Deserialize)]
    struct ItemMessage<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        #[serde(borrow, default)]
        params: IfObject<ItemParams<'a>>,
        #[serde(rename = "emittedAtMs")]
        emitted_at_ms: Option<Count>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct ItemParams<'a> {
        #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
        thread_id: Option<Str<'a>>,
        #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
        turn_id: Option<Str<'a>>,
        #[serde(borrow)]
        item: Option<Box<Item<'a>>>,
    }
    let m: ItemMessage = line.read()?;
    if let Some(ms) = m.emitted_at_ms {
        cx.timestamp = Some(Cow::Owned(crate::time::format_millis(ms.0)));
    }
    let p = m.params.0;
    let (thread, turn, item) = p.map_or((None, None, None), |p| (p.thread_id, p.turn_id, p.item));
    cx.session_id = thread;
    cx.turn_id = turn;
    let item = item.ok_or_else(|| Unmapped(format!("{method} without an item")))?;
    v2_item(method == "item/completed", *item, cx);
    // As in `method_call`: a v2 notification.
    if super::jsonrpc::kind(true, m.id, None, false) == Some(Kind::Notification) {
        cx.sticky.saw_codex_v2();
    }
    Ok(())
}

/// The `params` object of a JSON-RPC line as written, for the few methods whose notice keeps
/// it whole: the line is parsed again ([`Message`] reads `params` typed).
fn raw_params(line: &str) -> Option<&RawValue> {
    let env: Envelope = serde_json::from_str(line).ok()?;
    env.params.filter(|p| is_object(p))
}

/// The `result` of a JSON-RPC answer as written (`null` too), for the answers whose notice
/// keeps it whole: the line is parsed again ([`Message`] reads an object `result` typed).
fn raw_result(line: &str) -> Option<&RawValue> {
    let env: Envelope = serde_json::from_str(line).ok()?;
    env.result
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

/// Ends, as `cancelled`, the calls of `thread` that its interrupted turn left open: the wire
/// never ends them (an approval `cancel` of a file change, a command stopped by
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
/// started it said (path, kind, new path, the wire's diff).
fn changes_json<'a>(changes: &[Change]) -> Json<'a> {
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
                            ChangeKind::Move => "move",
                            _ => "update",
                        })),
                    ),
                ];
                if let Some(to) = &c.move_path {
                    m.push((Cow::Borrowed("movePath"), Json::Str(Cow::Owned(to.clone()))));
                }
                if let Some(d) = &c.diff {
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
        }
        None => m.insert(
            &key,
            Running {
                turn: turn.to_owned(),
                base: None,
                now: None,
                fresh: true,
            },
            line,
        ),
    }
}

/// This line's thread reported its running total (and the usage of the request it counts).
fn usage_reported(cx: &mut Cx<'_>, turn: Option<&str>, total: Totals, last: Option<Totals>) {
    let key = line_thread(cx).unwrap_or_default();
    let line = cx.line;
    let m = &mut cx.memory().codex.usage;
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
            },
            line,
        ),
    }
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
fn command_text<'a>(raw: Option<&'a RawValue>) -> Option<Str<'a>> {
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

/// A path as a diff names it, without the `a/`/`b/` prefix: `/home/x` → `home/x`.
fn diff_path(path: &str) -> &str {
    path.trim_start_matches('/')
}

/// The hunk that adds (`+`) or removes (`-`) a whole file's content; none for an empty file.
fn content_hunk(content: &str, sign: char) -> String {
    if content.is_empty() {
        return String::new();
    }
    let n = content.split_inclusive('\n').count();
    let range = if n == 1 {
        "1".to_owned()
    } else {
        format!("1,{n}")
    };
    let mut out = if sign == '+' {
        format!("@@ -0,0 +{range} @@\n")
    } else {
        format!("@@ -{range} +0,0 @@\n")
    };
    out.reserve(content.len() + n);
    for l in content.split_inclusive('\n') {
        out.push(sign);
        out.push_str(l);
        if !l.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
    out
}

/// A git diff of one file that `git apply` accepts, from what Codex sends: hunks for an
/// update (a move's with a trailing `Moved to: <path>` line, dropped), the raw content for
/// an add or a delete (made into one hunk). A body with headers of its own is kept.
fn git_diff(path: &str, kind: ChangeKind, move_path: Option<&str>, body: &str) -> String {
    if body.starts_with("--- ") || body.starts_with("diff ") {
        return body.to_owned();
    }
    let a = diff_path(path);
    let mut out = String::with_capacity(body.len() + 2 * a.len() + 64);
    match (kind, move_path) {
        (ChangeKind::Add, _) => {
            let hunk = content_hunk(body, '+');
            out.push_str(&format!("diff --git a/{a} b/{a}\nnew file mode 100644\n"));
            if !hunk.is_empty() {
                out.push_str(&format!("--- /dev/null\n+++ b/{a}\n{hunk}"));
            }
        }
        (ChangeKind::Delete, _) => {
            let hunk = content_hunk(body, '-');
            out.push_str(&format!(
                "diff --git a/{a} b/{a}\ndeleted file mode 100644\n"
            ));
            if !hunk.is_empty() {
                out.push_str(&format!("--- a/{a}\n+++ /dev/null\n{hunk}"));
            }
        }
        (_, Some(to)) => {
            let b = diff_path(to);
            let mut hunks = body;
            if let Some(at) = hunks.rfind("Moved to: ") {
                if hunks[at + "Moved to: ".len()..].trim_end() == to {
                    hunks = hunks[..at].trim_end_matches('\n');
                }
            }
            out.push_str(&format!(
                "diff --git a/{a} b/{b}\nrename from {a}\nrename to {b}\n"
            ));
            if !hunks.trim().is_empty() {
                out.push_str(&format!("--- a/{a}\n+++ b/{b}\n{hunks}"));
                if !hunks.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        _ => {
            out.push_str(&format!(
                "diff --git a/{a} b/{a}\n--- a/{a}\n+++ b/{a}\n{body}"
            ));
            if !body.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// Splits a multi-file unified diff (`diff --git a/x b/x` sections) into (path, kind, section).
pub fn split_diff(diff: &str) -> Vec<(String, ChangeKind, String, Option<String>)> {
    let mut out: Vec<(String, ChangeKind, String, Option<String>)> = Vec::new();
    for section in diff
        .split_inclusive('\n')
        .fold(Vec::<String>::new(), |mut acc, l| {
            if l.starts_with("diff --git ") || acc.is_empty() {
                acc.push(String::new());
            }
            if let Some(last) = acc.last_mut() {
                last.push_str(l);
            }
            acc
        })
    {
        let mut path = None;
        let mut moved = None;
        let mut kind = ChangeKind::Update;
        for l in section.lines() {
            if let Some(rest) = l.strip_prefix("diff --git ") {
                if let Some((a, b)) = rest.split_once(" b/") {
                    // A file whose two names differ moved: its path is the old one.
                    match a.strip_prefix("a/").filter(|a| *a != b) {
                        Some(a) => {
                            path = Some(a.to_owned());
                            moved = Some(b.to_owned());
                            kind = ChangeKind::Move;
                        }
                        None => path = Some(b.to_owned()),
                    }
                }
            } else if l.starts_with("new file mode") {
                kind = ChangeKind::Add;
            } else if l.starts_with("deleted file mode") {
                kind = ChangeKind::Delete;
            } else if l.starts_with("rename to ") {
                kind = ChangeKind::Move;
            } else if let Some(p) = l.strip_prefix("+++ b/") {
                path.get_or_insert_with(|| p.to_owned());
            } else if l.starts_with("@@") {
                break;
            }
        }
        if let Some(p) = path {
            out.push((p, kind, section, moved));
        } else if !section.trim().is_empty() {
            out.push((String::new(), kind, section, None));
        }
    }
    out
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

/// `rel` under directory `cwd`.
fn absolute(cwd: &str, rel: &str) -> String {
    let mut out = String::with_capacity(cwd.len() + rel.len() + 1);
    out.push_str(cwd.trim_end_matches('/'));
    out.push('/');
    out.push_str(rel);
    out
}

/// A diff section whose header paths are relative to `cwd`, with the paths `a/…`/`b/…`
/// written from the root as [`git_diff`] writes them (`a/home/dev/x`). Hunks are kept.
fn rebase_headers(section: &str, cwd: &str) -> String {
    let root = cwd.trim_matches('/');
    let mut prefix = String::with_capacity(root.len() + 1);
    if !root.is_empty() {
        prefix.push_str(root);
        prefix.push('/');
    }
    let mut out = String::with_capacity(section.len() + 6 * prefix.len());
    let mut header = true;
    for l in section.split_inclusive('\n') {
        if header && l.starts_with("@@") {
            header = false;
        }
        let rebased = header
            && [
                "--- a/",
                "+++ b/",
                "rename from ",
                "rename to ",
                "copy from ",
                "copy to ",
            ]
            .iter()
            .any(|lead| match l.strip_prefix(lead) {
                Some(rest) => {
                    out.push_str(lead);
                    out.push_str(&prefix);
                    out.push_str(rest);
                    true
                }
                None => false,
            });
        if rebased {
            continue;
        }
        match l
            .strip_prefix("diff --git a/")
            .and_then(|r| r.split_once(" b/"))
        {
            Some((a, b)) if header => {
                out.push_str("diff --git a/");
                out.push_str(&prefix);
                out.push_str(a);
                out.push_str(" b/");
                out.push_str(&prefix);
                out.push_str(b);
            }
            _ => out.push_str(l),
        }
    }
    out
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
// exec --json

#[derive(Deserialize)]
struct ExecLine<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    thread_id: Option<Str<'a>>,
    #[serde(borrow)]
    item: Option<ExecItem<'a>>,
    usage: Option<ExecUsage>,
    #[serde(borrow)]
    error: Option<MessageOnly<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    message: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    item_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    delta: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    call_id: Option<Str<'a>>,
    #[serde(borrow)]
    questions: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct MessageOnly<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    message: Option<Str<'a>>,
}

#[derive(Deserialize)]
pub(super) struct ExecUsage {
    input_tokens: Option<Count>,
    cached_input_tokens: Option<Count>,
    cache_write_input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    reasoning_output_tokens: Option<Count>,
}

impl ExecUsage {
    /// The tokens as `insights usage` counts them: as [`tokens`], cached input out of input.
    pub(super) fn usage_tokens(&self) -> crate::usage::Tokens {
        let t = tokens(self);
        crate::usage::Tokens {
            input: t.input_tokens,
            output: t.output_tokens,
            cache_read: t.cache_read_tokens.unwrap_or(0),
            cache_creation: t.cache_creation_tokens.unwrap_or(0),
            cache_creation_1h: 0,
            reasoning: t.reasoning_tokens.unwrap_or(0),
        }
    }
}

#[derive(Deserialize)]
struct ExecItem<'a> {
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(rename = "type", borrow)]
    ty: Str<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    text: Option<Str<'a>>,
    #[serde(borrow)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    aggregated_output: Option<Str<'a>>,
    exit_code: Option<i64>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(borrow)]
    changes: Option<Vec<ExecChange<'a>>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    server: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool: Option<Str<'a>>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    query: Option<Str<'a>>,
    #[serde(borrow)]
    action: Option<&'a RawValue>,
    #[serde(borrow)]
    items: Option<Vec<TodoItem<'a>>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    message: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    prompt: Option<Str<'a>>,
    #[serde(borrow)]
    receiver_thread_ids: Option<&'a RawValue>,
    #[serde(borrow)]
    agents_states: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ExecChange<'a> {
    #[serde(borrow)]
    path: Str<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    kind: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct TodoItem<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    text: Option<Str<'a>>,
    completed: Option<bool>,
}

fn exec_totals(u: &ExecUsage) -> Totals {
    [
        count(u.input_tokens),
        count(u.cached_input_tokens),
        count(u.cache_write_input_tokens),
        count(u.output_tokens),
        count(u.reasoning_output_tokens),
    ]
}

fn tokens(u: &ExecUsage) -> TokenUsage {
    TokenUsage {
        // OpenAI counts cached tokens in input_tokens; InsightsEvent, as Claude, does not.
        input_tokens: count(u.input_tokens)
            .unwrap_or(0)
            .saturating_sub(count(u.cached_input_tokens).unwrap_or(0)),
        output_tokens: count(u.output_tokens).unwrap_or(0),
        cache_read_tokens: count(u.cached_input_tokens),
        cache_creation_tokens: count(u.cache_write_input_tokens),
        reasoning_tokens: count(u.reasoning_output_tokens),
    }
}

fn exec<'a>(line: Line<'a, '_>, ty: &'a str, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ExecLine = line.read()?;
    match ty {
        "thread.started" => match w.thread_id.filter(|t| !t.is_empty()) {
            Some(t) => {
                set_stream_thread(cx, &t);
                cx.session_id = Some(t);
                cx.push(SessionInit::default());
            }
            None => notice(
                cx,
                Cow::Borrowed("thread.started without a thread_id"),
                None,
            ),
        },
        "turn.started" => {
            cx.push(TurnStart::default());
        }
        "turn.completed" => {
            turn_errored(cx);
            cx.push(TurnComplete {
                subtype: Some(Cow::Borrowed("success")),
                usage: w.usage.as_ref().map(tokens),
                ..TurnComplete::default()
            });
        }
        "turn.failed" => {
            let msg = w
                .error
                .and_then(|e| e.message)
                .unwrap_or(Cow::Borrowed("turn failed"));
            if !turn_errored(cx) {
                // No `error` line said why: the turn's own error does.
                let mut e = error_event(msg.clone(), Severity::Error);
                e.will_retry = Some(false);
                e.http_status = status_in_message(&msg);
                cx.push(e);
            }
            cx.push(TurnComplete {
                is_error: true,
                subtype: Some(Cow::Borrowed("error")),
                errors: Some(vec![msg]),
                ..TurnComplete::default()
            });
        }
        "error" => {
            let msg = w.message.unwrap_or(Cow::Borrowed("error"));
            // "Reconnecting... 1/5 (…)" notices precede a retry.
            let retrying = msg.starts_with("Reconnecting");
            let mut e = error_event(
                msg,
                if retrying {
                    Severity::Warning
                } else {
                    Severity::Error
                },
            );
            e.will_retry = Some(retrying);
            e.http_status = status_in_message(&e.message);
            cx.push(e);
            if !retrying {
                note_error(cx);
            }
        }
        "item.plan.delta" => {
            let ext = cx.push(delta(StreamDeltaKind::Text, w.item_id, w.delta));
            ext.put("block_type", "plan");
        }
        "request_user_input" => {
            cx.push(PermissionRequest {
                request_id: w.id.unwrap_or_default(),
                tool_name: Cow::Borrowed("AskUserQuestion"),
                tool_kind: ToolKind::Ask,
                tool_input: object([("questions", or_null(w.questions))]),
                tool_use_id: w.call_id,
                reason: None,
                blocked_path: None,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
        }
        "item.started" | "item.updated" | "item.completed" => {
            let item = w
                .item
                .ok_or_else(|| Unmapped(format!("{ty} without an item")))?;
            exec_item(ty, item, cx)?;
        }
        other => return Err(Unmapped(format!("unknown Codex exec event {other:?}"))),
    }
    Ok(())
}

fn exec_item<'a>(ty: &str, it: ExecItem<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let done = ty == "item.completed";
    let started = ty == "item.started";
    let status = it.status.as_deref().unwrap_or("");
    match &*it.ty {
        "agent_message" => {
            let body = strip_plan_tags(it.text.unwrap_or_default());
            text(cx, body, TextKind::Text, Some(it.id));
        }
        "reasoning" => {
            text(
                cx,
                it.text.unwrap_or_default(),
                TextKind::Thinking,
                Some(it.id),
            );
        }
        "plan" => {
            text(cx, it.text.unwrap_or_default(), TextKind::Plan, Some(it.id));
        }
        "command_execution" => {
            let cmd = command_text(it.command);
            if !done || status == "declined" || cx.events.is_empty() && !started {
                // Completed items without a start (declined, or an older build) get one.
            }
            if started || !done {
                let input = object([("command", or_null(it.command))]);
                let title = cmd
                    .as_deref()
                    .map(|c| Cow::Owned(unwrap_shell(c).into_owned()));
                if started {
                    open_call(cx, &it.id, "Bash", Vec::new());
                    cx.push(tool_invocation(
                        it.id,
                        ToolKind::Execute,
                        "Bash",
                        title,
                        input,
                    ));
                } else {
                    cx.push(ToolUpdate {
                        call_id: it.id,
                        status: it.status,
                        tool_name: Some(Cow::Borrowed("Bash")),
                        output: it.aggregated_output.map(Json::Str),
                        elapsed_ms: None,
                        parent_call_id: None,
                        title: None,
                        input: None,
                        locations: None,
                    });
                }
            } else {
                let ok = status == "completed" && it.exit_code.unwrap_or(0) == 0;
                let output = object([
                    ("stdout", or_null(it.aggregated_output)),
                    ("stderr", Json::from("")),
                    ("exit_code", or_null(it.exit_code.map(Value::from))),
                ]);
                let call = close_call(cx, &it.id);
                let mut c = completion(it.id, ok, Some(output));
                if status == "declined" {
                    c.status = declined_status(call.as_ref());
                }
                let ext = cx.push(c);
                ext.put("codex.status", it.status.unwrap_or_default());
            }
        }
        "file_change" => {
            let changes = it.changes.unwrap_or_default();
            let paths: Vec<Str<'a>> = changes.iter().map(|c| c.path.clone()).collect();
            if started {
                let files = changes
                    .iter()
                    .map(|c| Change {
                        path: c.path.to_string(),
                        kind: change_kind(c.kind.as_deref()),
                        move_path: None,
                        diff: None,
                    })
                    .collect();
                open_call(cx, &it.id, "FileChange", files);
                let input = object([("changes", exec_changes(&changes))]);
                let mut inv = tool_invocation(
                    it.id,
                    ToolKind::Edit,
                    "FileChange",
                    paths.first().cloned(),
                    input,
                );
                inv.locations = Some(paths);
                cx.push(inv);
            } else if done {
                close_call(cx, &it.id);
                let ok = status == "completed";
                let output = object([("changes", exec_changes(&changes))]);
                let mut c = completion(it.id.clone(), ok, Some(output));
                c.locations = Some(paths);
                cx.push(c);
                if ok {
                    for ch in changes {
                        cx.push(file_change(
                            ch.path,
                            change_kind(ch.kind.as_deref()),
                            None,
                            Some(it.id.clone()),
                        ));
                    }
                }
            } else {
                cx.push(ToolUpdate {
                    call_id: it.id,
                    status: it.status,
                    tool_name: Some(Cow::Borrowed("FileChange")),
                    output: None,
                    elapsed_ms: None,
                    parent_call_id: None,
                    title: None,
                    input: None,
                    locations: None,
                });
            }
        }
        "mcp_tool_call" => {
            let server = it.server.unwrap_or_default();
            let tool = it.tool.unwrap_or_default();
            if started {
                let mut inv = tool_invocation(
                    it.id,
                    ToolKind::Mcp,
                    "",
                    Some(Cow::Owned(format!("{server}.{tool}"))),
                    object([
                        ("server", Json::Str(server.clone())),
                        ("tool", Json::Str(tool.clone())),
                        ("arguments", or_null(it.arguments)),
                    ]),
                );
                inv.tool_name = Cow::Owned(format!("mcp__{server}__{tool}"));
                open_call(cx, &inv.call_id, &inv.tool_name, Vec::new());
                inv.mcp_server = Some(server);
                inv.mcp_tool = Some(tool);
                cx.push(inv);
            } else if done {
                close_call(cx, &it.id);
                let failed = it.error.is_some_and(|e| !is_null(e)) || status == "failed";
                let output = if failed { it.error } else { it.result }
                    .filter(|r| !is_null(r))
                    .map(Json::Raw);
                cx.push(completion(it.id, !failed, output));
            } else {
                cx.push(ToolUpdate {
                    call_id: it.id,
                    status: it.status,
                    tool_name: Some(Cow::Owned(format!("mcp__{server}__{tool}"))),
                    output: None,
                    elapsed_ms: None,
                    parent_call_id: None,
                    title: None,
                    input: None,
                    locations: None,
                });
            }
        }
        "web_search" => {
            if done {
                // exec reports searches only when done: invocation and completion together.
                let input = object([
                    ("query", or_null(it.query.clone())),
                    ("action", or_null(it.action)),
                ]);
                cx.push(tool_invocation(
                    it.id.clone(),
                    ToolKind::Browse,
                    "WebSearch",
                    it.query.clone(),
                    input,
                ));
                cx.push(completion(it.id, true, None));
            } else {
                let input = object([
                    ("query", or_null(it.query.clone())),
                    ("action", or_null(it.action)),
                ]);
                cx.push(tool_invocation(
                    it.id,
                    ToolKind::Browse,
                    "WebSearch",
                    it.query,
                    input,
                ));
            }
        }
        "todo_list" => {
            let entries = it
                .items
                .unwrap_or_default()
                .into_iter()
                .map(|t| PlanEntry {
                    content: t.text.unwrap_or_default(),
                    status: if t.completed.unwrap_or(false) {
                        PlanStatus::Completed
                    } else {
                        PlanStatus::Pending
                    },
                    priority: None,
                    active_form: None,
                })
                .collect();
            cx.push(PlanUpdate {
                entries,
                call_id: Some(it.id),
                parent_call_id: None,
                explanation: None,
            });
        }
        "collab_tool_call" => {
            let tool = it.tool.unwrap_or_default();
            if started {
                let name = format!("collab:{tool}");
                let mut inv = tool_invocation(
                    it.id.clone(),
                    ToolKind::Think,
                    "",
                    it.prompt.clone(),
                    object([
                        ("tool", Json::Str(tool.clone())),
                        ("prompt", or_null(it.prompt.clone())),
                        ("receiver_thread_ids", or_null(it.receiver_thread_ids)),
                    ]),
                );
                open_call(cx, &it.id, &name, Vec::new());
                inv.tool_name = Cow::Owned(name);
                cx.push(inv);
                if tool == "spawn_agent" {
                    cx.push(SubagentSpawn {
                        call_id: it.id,
                        agent_type: None,
                        description: it.prompt.clone(),
                        is_resume: false,
                        resume_agent_id: None,
                        prompt: it.prompt,
                        parent_call_id: None,
                    });
                }
            } else if done {
                close_call(cx, &it.id);
                let ok = status != "failed";
                let ext = cx.push(completion(
                    it.id.clone(),
                    ok,
                    it.agents_states.filter(|s| !is_null(s)).map(Json::Raw),
                ));
                ext.put("codex.tool", tool.clone());
                let receivers: Vec<Str<'a>> = it
                    .receiver_thread_ids
                    .and_then(|r| serde_json::from_str(r.get()).ok())
                    .unwrap_or_default();
                collab_end(
                    cx,
                    it.id,
                    &tool,
                    ok,
                    None,
                    receivers,
                    it.agents_states,
                    it.status,
                );
            } else {
                cx.push(ToolUpdate {
                    call_id: it.id,
                    status: it.status,
                    tool_name: Some(Cow::Owned(format!("collab:{tool}"))),
                    output: None,
                    elapsed_ms: None,
                    parent_call_id: None,
                    title: None,
                    input: None,
                    locations: None,
                });
            }
        }
        "error" => {
            cx.push(error_event(
                it.message.unwrap_or(Cow::Borrowed("error")),
                Severity::Error,
            ));
        }
        other => {
            let ext = cx.push(Notice {
                subtype: Cow::Owned(format!("{ty}/{other}")),
                message: None,
            });
            ext.put("codex.itemId", it.id);
        }
    }
    Ok(())
}

/// An agent message without its `<proposed_plan>` tags (plan mode wraps the plan in them;
/// the plan itself comes as a `plan` item too).
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

// ---------------------------------------------------------------------------------------------
// app-server v2

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    thread_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    turn_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    item_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    delta: Option<Str<'a>>,
    summary_index: Option<Count>,
    content_index: Option<Count>,
    #[serde(borrow)]
    item: Option<&'a RawValue>,
    #[serde(borrow)]
    thread: Option<Box<Thread<'a>>>,
    #[serde(borrow)]
    turn: Option<Box<Turn<'a>>>,
    #[serde(borrow)]
    status: Option<&'a RawValue>,
    token_usage: Option<Box<TokenUsageWire>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    diff: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    explanation: Option<Str<'a>>,
    #[serde(borrow)]
    plan: Option<Vec<PlanStep<'a>>>,
    #[serde(borrow)]
    error: Option<Box<ErrorWire<'a>>>,
    will_retry: Option<bool>,
    #[serde(borrow)]
    rate_limits: Option<Box<RateLimitsWire<'a>>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    reason: Option<Str<'a>>,
    #[serde(borrow)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cwd: Option<Str<'a>>,
    #[serde(borrow)]
    command_actions: Option<&'a RawValue>,
    #[serde(borrow)]
    available_decisions: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    grant_root: Option<Str<'a>>,
    #[serde(borrow)]
    permissions: Option<&'a RawValue>,
    #[serde(borrow)]
    questions: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    server_name: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    message: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    summary: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    details: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    from_model: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    to_model: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    call_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    conversation_id: Option<Str<'a>>,
    #[serde(borrow)]
    file_changes: Option<&'a RawValue>,
    #[serde(borrow)]
    msg: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stdin: Option<Str<'a>>,
    #[serde(borrow)]
    request_id: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Thread<'a> {
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cwd: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cli_version: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    reasoning_effort: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model_provider: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    parent_thread_id: Option<Str<'a>>,
    /// The history a `thread/resume` answer carries.
    #[serde(borrow)]
    turns: Option<&'a RawValue>,
    /// The thread's rollout file.
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    path: Option<Str<'a>>,
    /// The client that started it (`vscode`, `exec`, …) and how.
    #[serde(borrow)]
    source: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    originator: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    forked_from_id: Option<Str<'a>>,
    #[serde(borrow)]
    git_info: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    name: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    agent_nickname: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    agent_role: Option<Str<'a>>,
    ephemeral: Option<bool>,
    /// The members the event model has no field for, kept as `codex.*` extensions
    /// ([`THREAD_EXTRAS`]).
    #[serde(borrow)]
    preview: Option<&'a RawValue>,
    #[serde(borrow)]
    created_at: Option<&'a RawValue>,
    #[serde(borrow)]
    updated_at: Option<&'a RawValue>,
    #[serde(borrow)]
    recency_at: Option<&'a RawValue>,
    #[serde(borrow)]
    environments: Option<&'a RawValue>,
    #[serde(borrow)]
    history_mode: Option<&'a RawValue>,
    #[serde(borrow)]
    status: Option<&'a RawValue>,
    #[serde(borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    attached_to_thread_id: Option<&'a RawValue>,
    #[serde(borrow)]
    thread_source: Option<&'a RawValue>,
    #[serde(borrow)]
    section: Option<&'a RawValue>,
    #[serde(borrow)]
    section_entered_at: Option<&'a RawValue>,
    #[serde(borrow)]
    project_id: Option<&'a RawValue>,
    #[serde(borrow)]
    can_accept_direct_input: Option<&'a RawValue>,
    #[serde(borrow)]
    daybreak_enabled: Option<&'a RawValue>,
    #[serde(borrow)]
    extra: Option<&'a RawValue>,
}

/// A wire value worth an extension: not `null` and not `""` (both say nothing).
fn said(v: Option<&RawValue>) -> Option<&RawValue> {
    v.filter(|v| !is_null(v) && v.get() != "\"\"")
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Turn<'a> {
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(borrow)]
    error: Option<ErrorWire<'a>>,
    duration_ms: Option<Count>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ErrorWire<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    message: Option<Str<'a>>,
    #[serde(borrow)]
    codex_error_info: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    additional_details: Option<Str<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenUsageWire {
    total: Option<TokenBreakdown>,
    last: Option<TokenBreakdown>,
    model_context_window: Option<Count>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenBreakdown {
    input_tokens: Option<Count>,
    cached_input_tokens: Option<Count>,
    cache_write_input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    reasoning_output_tokens: Option<Count>,
}

impl TokenBreakdown {
    fn totals(&self) -> Totals {
        [
            count(self.input_tokens),
            count(self.cached_input_tokens),
            count(self.cache_write_input_tokens),
            count(self.output_tokens),
            count(self.reasoning_output_tokens),
        ]
    }

    fn tokens(&self) -> TokenUsage {
        TokenUsage {
            input_tokens: count(self.input_tokens)
                .unwrap_or(0)
                .saturating_sub(count(self.cached_input_tokens).unwrap_or(0)),
            output_tokens: count(self.output_tokens).unwrap_or(0),
            cache_read_tokens: count(self.cached_input_tokens),
            cache_creation_tokens: count(self.cache_write_input_tokens),
            reasoning_tokens: count(self.reasoning_output_tokens),
        }
    }

    /// Snake_case keys, as CC-Insights reads `stepUsage`.
    fn step_usage(&self) -> Value {
        json!({
            "input_tokens": count(self.input_tokens).unwrap_or(0).saturating_sub(count(self.cached_input_tokens).unwrap_or(0)),
            "output_tokens": count(self.output_tokens).unwrap_or(0),
            "cache_read_input_tokens": count(self.cached_input_tokens).unwrap_or(0),
            "cache_creation_input_tokens": count(self.cache_write_input_tokens).unwrap_or(0),
            "reasoning_output_tokens": count(self.reasoning_output_tokens).unwrap_or(0),
        })
    }
}

#[derive(Deserialize)]
struct PlanStep<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    step: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RateLimitsWire<'a> {
    primary: Option<WindowWire>,
    secondary: Option<WindowWire>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    plan_type: Option<Str<'a>>,
    #[serde(borrow)]
    credits: Option<&'a RawValue>,
    /// Which limit this is (`codex`, a model's own), and what it says beside the windows.
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    limit_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    limit_name: Option<Str<'a>>,
    #[serde(borrow)]
    rate_limit_reached_type: Option<&'a RawValue>,
    #[serde(borrow)]
    spend_control_reached: Option<&'a RawValue>,
    #[serde(borrow)]
    individual_limit: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    normal_model_slug: Option<Str<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WindowWire {
    used_percent: Option<f64>,
    window_minutes: Option<Count>,
    window_duration_mins: Option<Count>,
    resets_at: Option<Count>,
}

impl WindowWire {
    fn window(&self) -> RateLimitWindow {
        RateLimitWindow {
            used_percent: self.used_percent.map(|p| p.max(0.0).round() as u64),
            window_duration_mins: count(self.window_minutes.or(self.window_duration_mins)),
            resets_at: count(self.resets_at),
        }
    }
}

#[derive(Deserialize)]
struct InputItem<'a> {
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    ty: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    text: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    url: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    path: Option<Str<'a>>,
}

/// A ThreadItem of v2.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item<'a> {
    #[serde(rename = "type", borrow)]
    ty: Str<'a>,
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    text: Option<Str<'a>>,
    #[serde(borrow)]
    summary: Option<Vec<Str<'a>>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cwd: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(borrow)]
    command_actions: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    aggregated_output: Option<Str<'a>>,
    exit_code: Option<i64>,
    duration_ms: Option<Count>,
    #[serde(borrow)]
    changes: Option<Vec<ChangeWire<'a>>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    server: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool: Option<Str<'a>>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    query: Option<Str<'a>>,
    #[serde(borrow)]
    action: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    path: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    prompt: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    receiver_thread_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    new_thread_id: Option<Str<'a>>,
    #[serde(borrow)]
    review: Option<&'a RawValue>,
    /// Where a command came from (`agent`, `userShell`, …); items of Codex 0.100 lack it.
    #[serde(borrow)]
    source: Option<&'a RawValue>,
    /// When the item started; items of Codex 0.100 lack it.
    #[serde(borrow)]
    started_at_ms: Option<&'a RawValue>,
    /// When it completed (`null` until then).
    #[serde(borrow)]
    completed_at_ms: Option<&'a RawValue>,
    /// A command's process (a string id, or null).
    #[serde(borrow)]
    process_id: Option<&'a RawValue>,
    #[serde(borrow)]
    plugin_id: Option<&'a RawValue>,
    #[serde(borrow)]
    script_path: Option<&'a RawValue>,
    /// `collabAgentToolCall` (0.169): the agents it addresses.
    #[serde(borrow)]
    receiver_thread_ids: Option<&'a RawValue>,
    #[serde(borrow)]
    agents_states: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
    /// `dynamicToolCall`: its result.
    #[serde(borrow)]
    content_items: Option<&'a RawValue>,
    success: Option<bool>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    namespace: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct ChangeWire<'a> {
    #[serde(borrow)]
    path: Str<'a>,
    #[serde(borrow)]
    kind: Option<ChangeKindWire<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    diff: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct ChangeKindWire<'a> {
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    ty: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    move_path: Option<Str<'a>>,
}

fn method_call<'a>(
    method: &str,
    env: &Envelope<'a>,
    params: Option<Box<Params<'a>>>,
    line: &'a str,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let p = params.unwrap_or_default();
    if method == "codex/event" || method.starts_with("codex/event/") {
        cx.session_id = p.conversation_id;
        let msg = p
            .msg
            .ok_or_else(|| Unmapped("codex/event without a msg".into()))?;
        return legacy(msg, Some(env), cx);
    }
    let params = || raw_params(line);
    cx.session_id = p.thread_id.clone();
    cx.turn_id = p.turn_id.clone();
    let request_id = || env.id_text().into_owned();
    match method {
        // --- client → server
        "initialize"
        | "initialized"
        | "thread/start"
        | "thread/resume"
        | "thread/fork"
        | "thread/list"
        | "thread/read"
        | "model/list"
        | "review/start"
        | "thread/compact/start" => {
            notice(
                cx,
                Cow::Owned(method.to_owned()),
                params().map(|p| ("params", p)),
            );
        }
        "turn/start" | "turn/steer" => {
            // The prompt as the client sent it; the server echoes it as a userMessage item,
            // which becomes the `user_input`.
            notice(
                cx,
                Cow::Owned(method.to_owned()),
                params().map(|p| ("params", p)),
            );
        }
        "turn/interrupt" => {
            let ext = cx.push(SessionStatus {
                status: SessionStatusKind::Interrupted,
                message: None,
            });
            ext.put("codex.requestId", request_id());
        }
        // --- notifications
        "thread/closed" => {
            // The thread is done with: what is kept for its turns goes.
            if let Some(t) = line_thread(cx) {
                let codex = &mut cx.memory().codex;
                codex.usage.remove(&t);
                codex.cwds.remove(&t);
            }
            notice(
                cx,
                Cow::Borrowed("thread/closed"),
                params().map(|p| ("params", p)),
            );
        }
        "thread/started" => {
            // The answer to `thread/start` (`thread/resume`, `thread/fork`) came before and
            // gave the thread's `session_init` already, if the stream holds the answers. This
            // one repeats it: a stream of notifications only (or a thread the server started
            // itself, a subagent's) has no other, and a second session_init of the same
            // session states the same facts again (`validate` checks the first; `reduce` and
            // `replay` take later ones as updates, and show nothing when nothing changed).
            let t = p
                .thread
                .ok_or_else(|| Unmapped("thread/started without a thread".into()))?;
            session_init(*t, None, cx);
        }
        "thread/status/changed" => {
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct St<'a> {
                #[serde(
                    rename = "type",
                    borrow,
                    default,
                    deserialize_with = "crate::wire::opt_str"
                )]
                ty: Option<Str<'a>>,
                #[serde(borrow, default)]
                active_flags: Vec<Str<'a>>,
            }
            let st: Option<St> = match p.status {
                Some(s) if is_object(s) => Some(serde_json::from_str(s.get())?),
                _ => None,
            };
            let (status, msg) = match st.as_ref().and_then(|s| s.ty.as_deref()) {
                Some("idle") => (SessionStatusKind::Idle, None),
                Some("active") if st.as_ref().is_some_and(|s| !s.active_flags.is_empty()) => {
                    let flags = st
                        .as_ref()
                        .map(|s| s.active_flags.join(", "))
                        .unwrap_or_default();
                    (SessionStatusKind::RequiresAction, Some(Cow::Owned(flags)))
                }
                Some("active") => (SessionStatusKind::Running, None),
                Some("systemError") => (SessionStatusKind::Error, None),
                Some("notLoaded") => (SessionStatusKind::Ended, None),
                _ => (SessionStatusKind::Idle, None),
            };
            cx.push(SessionStatus {
                status,
                message: msg,
            });
        }
        "thread/tokenUsage/updated" => {
            let u = p
                .token_usage
                .ok_or_else(|| Unmapped("tokenUsage/updated without tokenUsage".into()))?;
            if let Some(total) = &u.total {
                let last = u.last.as_ref().map(TokenBreakdown::totals);
                usage_reported(cx, p.turn_id.as_deref(), total.totals(), last);
            }
            cx.push(UsageUpdate {
                step_usage: Json::Value(
                    u.last
                        .as_ref()
                        .map(TokenBreakdown::step_usage)
                        .unwrap_or_else(|| json!({})),
                ),
                total: u.total.as_ref().map(TokenBreakdown::tokens),
                context_window: count(u.model_context_window),
                context_tokens: None,
                cost_usd: None,
                parent_call_id: None,
                model: None,
                message_id: None,
            });
        }
        "turn/started" => {
            if let Some(t) = p.turn {
                usage_turn_started(cx, &t.id);
                cx.turn_id = Some(t.id);
            }
            cx.push(TurnStart::default());
        }
        "turn/completed" => {
            let t = p
                .turn
                .ok_or_else(|| Unmapped("turn/completed without a turn".into()))?;
            cx.turn_id = Some(t.id);
            let status = t.status.clone().unwrap_or(Cow::Borrowed("completed"));
            let failed = status == "failed";
            let errored = turn_errored(cx);
            if failed && !errored {
                // No `error` notification said why: the turn's own error does.
                cx.push(v2_error(t.error.as_ref(), false));
            }
            if status == "interrupted" {
                let thread = line_thread(cx);
                cancel_open_calls(cx, thread.as_deref());
            }
            let errors = t.error.and_then(|e| e.message).map(|m| vec![m]);
            let usage = turn_usage(cx, cx.turn_id.clone().as_deref());
            cx.push(TurnComplete {
                is_error: failed,
                subtype: Some(status.clone()),
                errors: if failed { errors } else { None },
                duration_ms: count(t.duration_ms),
                stop_reason: Some(status),
                usage,
                ..TurnComplete::default()
            });
        }
        "turn/diff/updated" => {
            let diff = p.diff.unwrap_or_default();
            let files = split_diff(&diff);
            if files.is_empty() {
                notice(cx, Cow::Borrowed("turn/diff/updated"), None);
            }
            cumulative_changes(cx, files);
        }
        "turn/plan/updated" => {
            let entries = p
                .plan
                .unwrap_or_default()
                .into_iter()
                .map(|s| PlanEntry {
                    status: plan_status(s.status.as_deref()),
                    content: s.step.unwrap_or_default(),
                    priority: None,
                    active_form: None,
                })
                .collect();
            cx.push(PlanUpdate {
                entries,
                call_id: None,
                parent_call_id: None,
                explanation: p.explanation,
            });
        }
        "item/started" | "item/completed" => {
            let raw = p
                .item
                .ok_or_else(|| Unmapped(format!("{method} without an item")))?;
            let item: Item = serde_json::from_str(raw.get())?;
            v2_item(method == "item/completed", item, cx);
        }
        "item/agentMessage/delta" => {
            cx.push(delta(
                StreamDeltaKind::Text,
                p.item_id,
                p.delta.map(strip_plan_tags),
            ));
        }
        "item/plan/delta" => {
            let ext = cx.push(delta(StreamDeltaKind::Text, p.item_id, p.delta));
            ext.put("block_type", "plan");
        }
        "item/reasoning/summaryTextDelta" => {
            let mut d = delta(StreamDeltaKind::Thinking, p.item_id, p.delta);
            d.block_index = count(p.summary_index);
            cx.push(d);
        }
        "item/reasoning/summaryPartAdded" => {
            let mut d = delta(StreamDeltaKind::BlockStart, p.item_id, None);
            d.block_index = count(p.summary_index);
            let ext = cx.push(d);
            ext.put("block_type", "thinking");
        }
        "item/reasoning/textDelta" => {
            let mut d = delta(StreamDeltaKind::Thinking, p.item_id, p.delta);
            d.block_index = count(p.content_index);
            let ext = cx.push(d);
            ext.put(RAW_REASONING, true);
        }
        "item/commandExecution/outputDelta" | "item/fileChange/outputDelta" => {
            cx.push(delta(StreamDeltaKind::ToolOutput, p.item_id, p.delta));
        }
        "item/commandExecution/terminalInteraction" => {
            let ext = cx.push(ToolUpdate {
                call_id: p.item_id.unwrap_or_default(),
                status: Some(Cow::Borrowed("waitingForInput")),
                tool_name: Some(Cow::Borrowed("Bash")),
                output: None,
                elapsed_ms: None,
                parent_call_id: None,
                title: None,
                input: None,
                locations: None,
            });
            ext.put_opt("codex.stdin", p.stdin);
        }
        "item/mcpToolCall/progress" => {
            cx.push(ToolUpdate {
                call_id: p.item_id.unwrap_or_default(),
                status: Some(Cow::Borrowed("progress")),
                tool_name: None,
                output: p.message.map(Json::Str),
                elapsed_ms: None,
                parent_call_id: None,
                title: None,
                input: None,
                locations: None,
            });
        }
        "error" => {
            let will_retry = p.will_retry.unwrap_or(false);
            cx.push(v2_error(p.error.as_deref(), will_retry));
            if !will_retry {
                note_error(cx);
            }
        }
        "configWarning" | "deprecationNotice" => {
            let msg = p
                .summary
                .or(p.message)
                .or(p.details)
                .unwrap_or(Cow::Borrowed(""));
            let mut e = error_event(msg, Severity::Warning);
            e.code = Some(Cow::Owned(method.to_owned()));
            cx.push(e);
        }
        "account/rateLimits/updated" => {
            let r = p.rate_limits;
            let ext = cx.push(RateLimitUpdate {
                primary: r
                    .as_ref()
                    .and_then(|r| r.primary.as_ref())
                    .map(WindowWire::window),
                secondary: r
                    .as_ref()
                    .and_then(|r| r.secondary.as_ref())
                    .map(WindowWire::window),
                plan_type: r.as_ref().and_then(|r| r.plan_type.clone()),
                ..RateLimitUpdate::default()
            });
            if let Some(r) = r {
                ext.put_opt("codex.credits", r.credits.filter(|c| !is_null(c)));
                ext.put_opt("codex.limitId", r.limit_id);
                ext.put_opt("codex.limitName", r.limit_name);
                ext.put_opt(
                    "codex.rateLimitReachedType",
                    r.rate_limit_reached_type.filter(|v| !is_null(v)),
                );
                ext.put_opt(
                    "codex.spendControlReached",
                    r.spend_control_reached.filter(|v| !is_null(v)),
                );
                ext.put_opt(
                    "codex.individualLimit",
                    r.individual_limit.filter(|v| !is_null(v)),
                );
                ext.put_opt("codex.normalModelSlug", r.normal_model_slug);
            }
        }
        "model/rerouted" => {
            let msg = format!(
                "model rerouted from {} to {}",
                p.from_model.as_deref().unwrap_or("?"),
                p.to_model.as_deref().unwrap_or("?")
            );
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("model/rerouted"),
                message: Some(Cow::Owned(msg)),
            });
            ext.put_opt("codex.reason", p.reason);
        }
        "serverRequest/resolved" => {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("serverRequest/resolved"),
                message: None,
            });
            ext.put_opt(
                "codex.requestId",
                p.request_id
                    .map(|r| raw_str(r).unwrap_or(Cow::Borrowed(r.get()))),
            );
        }
        // --- server → client requests
        "item/commandExecution/requestApproval" | "execCommandApproval" => {
            let command = command_text(p.command);
            let ext = cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Borrowed("Bash"),
                tool_kind: ToolKind::Execute,
                tool_input: object([
                    ("command", or_null(command.clone())),
                    ("cwd", or_null(p.cwd)),
                ]),
                tool_use_id: p.item_id.clone().or(p.call_id.clone()),
                reason: p.reason,
                blocked_path: None,
                suggestions: None,
                title: command
                    .as_deref()
                    .map(|c| Cow::Owned(unwrap_shell(c).into_owned())),
                parent_call_id: None,
                options: None,
            });
            ext.put_opt(
                "codex.commandActions",
                p.command_actions.filter(|a| !is_null(a)),
            );
            ext.put_opt(
                "codex.availableDecisions",
                p.available_decisions.filter(|a| !is_null(a)),
            );
            let call = p.item_id.or(p.call_id);
            remember_request(cx, &request_id(), call.as_deref(), false);
        }
        "item/fileChange/requestApproval" | "applyPatchApproval" => {
            let call = p.item_id.clone().or(p.call_id.clone());
            // v2 requests name the item; its changes came with `item/started`.
            let changes = match (&call, p.file_changes.filter(|f| !is_null(f))) {
                (_, Some(f)) => Some(("fileChanges", Json::Raw(f))),
                (Some(id), None) => cx
                    .memory()
                    .codex
                    .calls
                    .get(id)
                    .filter(|c| c.invoked)
                    .map(|c| ("changes", changes_json(&c.changes))),
                _ => None,
            };
            let first_path = changes.as_ref().and_then(|(_, c)| match c {
                Json::Array(a) => a.first().and_then(|o| match o {
                    Json::Object(Pairs(m)) => m.first().and_then(|(_, v)| match v {
                        Json::Str(s) => Some(s.clone()),
                        _ => None,
                    }),
                    _ => None,
                }),
                _ => None,
            });
            let mut input = vec![(Cow::Borrowed("grantRoot"), or_null(p.grant_root.clone()))];
            if let Some((k, v)) = changes {
                input.push((Cow::Borrowed(k), v));
            }
            let ext = cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Borrowed("FileChange"),
                tool_kind: ToolKind::Edit,
                tool_input: Json::Object(Pairs(input)),
                tool_use_id: call.clone(),
                reason: p.reason,
                blocked_path: p.grant_root.clone(),
                suggestions: None,
                title: first_path,
                parent_call_id: None,
                options: None,
            });
            ext.put_opt("codex.grantRoot", p.grant_root);
            remember_request(cx, &request_id(), call.as_deref(), false);
        }
        "item/mcpToolCall/requestApproval" => {
            let call = p.item_id.clone().or(p.call_id.clone());
            let name = call
                .as_deref()
                .and_then(|id| cx.memory().codex.calls.get(id).map(|c| c.tool_name.clone()))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "McpTool".to_owned());
            let ext = cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Owned(name),
                tool_kind: ToolKind::Mcp,
                tool_input: Json::Raw(params().unwrap_or_else(|| empty_object())),
                tool_use_id: call.clone(),
                reason: p.reason,
                blocked_path: None,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
            ext.put_opt(
                "codex.availableDecisions",
                p.available_decisions.filter(|a| !is_null(a)),
            );
            remember_request(cx, &request_id(), call.as_deref(), false);
        }
        "item/tool/call" => {
            // A dynamic tool the client runs: the request opens the call (unless its item
            // started it), the client's answer ends it.
            #[derive(Deserialize)]
            struct ToolCall<'a> {
                #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
                tool: Option<Str<'a>>,
                #[serde(borrow)]
                arguments: Option<&'a RawValue>,
                #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
                namespace: Option<Str<'a>>,
            }
            let raw = params();
            let tc: Option<ToolCall> = raw.and_then(|r| serde_json::from_str(r.get()).ok());
            let (tool, arguments, namespace) =
                tc.map_or((None, None, None), |t| (t.tool, t.arguments, t.namespace));
            let call = p.call_id.clone().unwrap_or_default();
            let name = tool.clone().unwrap_or_default();
            if !call.is_empty() && is_open(cx, &call) {
                let ext = cx.push(ToolUpdate {
                    call_id: call.clone(),
                    status: Some(Cow::Borrowed("requested")),
                    tool_name: Some(name),
                    output: None,
                    elapsed_ms: None,
                    parent_call_id: None,
                    title: None,
                    input: None,
                    locations: None,
                });
                ext.put("codex.requestId", request_id());
            } else {
                let mut inv = tool_invocation(
                    call.clone(),
                    ToolKind::Other,
                    "",
                    None,
                    object([
                        ("tool", or_null(tool.clone())),
                        ("arguments", or_null(arguments)),
                    ]),
                );
                inv.tool_name = name.clone();
                let ext = cx.push(inv);
                ext.put("codex.requestId", request_id());
                ext.put_opt("codex.namespace", namespace);
                open_call(cx, &call, &name, Vec::new());
            }
            remember_request(cx, &request_id(), Some(&call), true);
        }
        "item/permissions/requestApproval" => {
            remember_request(cx, &request_id(), p.item_id.as_deref(), false);
            cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Borrowed("Permissions"),
                tool_kind: ToolKind::Other,
                tool_input: object([("permissions", or_null(p.permissions))]),
                tool_use_id: p.item_id,
                reason: p.reason,
                blocked_path: None,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
        }
        "item/tool/requestUserInput" => {
            remember_request(cx, &request_id(), p.item_id.as_deref(), false);
            cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Borrowed("AskUserQuestion"),
                tool_kind: ToolKind::Ask,
                tool_input: object([("questions", or_null(p.questions))]),
                tool_use_id: p.item_id,
                reason: None,
                blocked_path: None,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
        }
        "mcpServer/elicitation/request" => {
            let server = p.server_name.unwrap_or_default();
            cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Owned(format!("mcp__{server}")),
                tool_kind: ToolKind::Ask,
                tool_input: Json::Raw(params().unwrap_or_else(|| empty_object())),
                tool_use_id: None,
                reason: p.message,
                blocked_path: None,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
        }
        other => {
            notice(
                cx,
                Cow::Owned(other.to_owned()),
                params().map(|p| ("params", p)),
            );
        }
    }
    // Only the server's v2 notifications duplicate legacy events.
    if env.kind() == Some(Kind::Notification)
        && ["thread/", "turn/", "item/"]
            .iter()
            .any(|p| method.starts_with(p))
    {
        cx.sticky.saw_codex_v2();
    }
    Ok(())
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

/// The `changes` of an exec `file_change` item: `[{"path", "kind"}]`.
fn exec_changes<'a>(changes: &[ExecChange<'a>]) -> Json<'a> {
    Json::Array(
        changes
            .iter()
            .map(|c| {
                object([
                    ("path", Json::Str(c.path.clone())),
                    ("kind", or_null(c.kind.clone())),
                ])
            })
            .collect(),
    )
}

fn empty_object() -> &'static RawValue {
    static EMPTY: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| RawValue::from_string("{}".into()).expect("valid JSON"))
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

/// The `error` event of an `error` notification or a failed turn's `error`: the code is
/// `codexErrorInfo`'s name (`"internalServerError"`, `{"responseTooManyFailedAttempts":…}`),
/// the HTTP status its `httpStatusCode`, or the message's "last status: 429".
fn v2_error<'a>(e: Option<&ErrorWire<'a>>, will_retry: bool) -> ErrorEvent<'a> {
    let message = match e.map(|e| (&e.message, &e.additional_details)) {
        Some((Some(m), Some(d))) => Cow::Owned(format!("{m}\n{d}")),
        Some((Some(m), None)) => m.clone(),
        _ => Cow::Borrowed("error"),
    };
    let mut ev = error_event(
        message,
        if will_retry {
            Severity::Warning
        } else {
            Severity::Error
        },
    );
    ev.will_retry = Some(will_retry);
    if let Some(info) = e.and_then(|e| e.codex_error_info).filter(|i| !is_null(i)) {
        ev.code =
            raw_str(info).or_else(|| super::jsonrpc::member_names(info.get()).into_iter().next());
        ev.http_status = http_status(info);
    }
    if ev.http_status.is_none() {
        ev.http_status = status_in_message(&ev.message);
    }
    ev
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
        .map(|p| p.0.into_iter().map(|(k, v)| (k, v.status)).collect())
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
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

/// The events of an item's `item/started` or `item/completed` (`done`), the first of them
/// with the item's `startedAtMs` and `completedAtMs` as `codex.*` extensions (the wire's
/// times of the item, beside the line's `emittedAtMs` that is the events' `timestamp`).
fn v2_item<'a>(done: bool, it: Item<'a>, cx: &mut Cx<'a>) {
    let (started, completed) = (said(it.started_at_ms), said(it.completed_at_ms));
    let from = cx.events.len();
    v2_item_events(done, it, cx);
    if let Some((_, ext)) = cx.events.get_mut(from) {
        ext.put_opt("codex.startedAtMs", started);
        ext.put_opt("codex.completedAtMs", completed);
    }
}

fn v2_item_events<'a>(done: bool, it: Item<'a>, cx: &mut Cx<'a>) {
    let status = it.status.as_deref().unwrap_or("");
    match &*it.ty {
        "userMessage" => {
            if done {
                let items: Vec<InputItem> = it
                    .content
                    .and_then(|c| serde_json::from_str(c.get()).ok())
                    .unwrap_or_default();
                let texts: Vec<&str> = items
                    .iter()
                    .filter(|i| i.ty.as_deref() == Some("text"))
                    .filter_map(|i| i.text.as_deref())
                    .collect();
                let images: Vec<ImageData> = items
                    .iter()
                    .filter(|i| matches!(i.ty.as_deref(), Some("image" | "localImage")))
                    .map(|i| ImageData {
                        media_type: Cow::Borrowed(""),
                        data: Cow::Owned(
                            i.url
                                .clone()
                                .or(i.path.clone())
                                .unwrap_or_default()
                                .into_owned(),
                        ),
                    })
                    .collect();
                let ext = cx.push(UserInput {
                    text: Cow::Owned(texts.join("\n")),
                    images: (!images.is_empty()).then_some(images),
                    is_synthetic: false,
                    parent_call_id: None,
                });
                ext.put("codex.itemId", it.id);
            } else {
                let ext = cx.push(Notice {
                    subtype: Cow::Borrowed("item/started/userMessage"),
                    message: None,
                });
                ext.put("codex.itemId", it.id);
            }
        }
        "agentMessage" | "reasoning" | "plan" => {
            let kind = match &*it.ty {
                "reasoning" => TextKind::Thinking,
                "plan" => TextKind::Plan,
                _ => TextKind::Text,
            };
            if done {
                let body = match kind {
                    TextKind::Thinking => {
                        // The summary, then the raw reasoning (`content`) apart, marked, when
                        // the item has it.
                        let summary = it.summary.unwrap_or_default();
                        let parts: Vec<Str> = it
                            .content
                            .and_then(|c| serde_json::from_str(c.get()).ok())
                            .unwrap_or_default();
                        if !summary.is_empty() {
                            text(
                                cx,
                                Cow::Owned(summary.join("\n\n")),
                                kind,
                                Some(it.id.clone()),
                            );
                        }
                        if !parts.is_empty() {
                            let raw = text(cx, Cow::Owned(parts.join("\n")), kind, Some(it.id));
                            raw.put(RAW_REASONING, true);
                        } else if summary.is_empty() {
                            text(cx, Cow::Borrowed(""), kind, Some(it.id));
                        }
                        return;
                    }
                    TextKind::Text => strip_plan_tags(it.text.unwrap_or_default()),
                    _ => it.text.unwrap_or_default(),
                };
                text(cx, body, kind, Some(it.id));
            } else {
                let ext = cx.push(delta(StreamDeltaKind::BlockStart, Some(it.id), None));
                match kind {
                    TextKind::Thinking => ext.put("block_type", "thinking"),
                    TextKind::Plan => ext.put("block_type", "plan"),
                    _ => ext.put("block_type", "text"),
                }
            }
        }
        "commandExecution" => {
            let cmd = command_text(it.command);
            // Codex 0.100 sends no `item/started` for a command the user declined: the item
            // completes without having started (`testdata/codex-app-server-0.100/
            // command-declined.jsonl`, line 33), so its completion also states the call. Later
            // versions send `item/started` before the approval request, and their items carry
            // `source` and `startedAtMs` (0.169.0: line 22 of
            // `testdata/codex-app-server/command-declined.jsonl`); an item with either is
            // known to have started.
            let unstarted =
                done && status == "declined" && it.source.is_none() && it.started_at_ms.is_none();
            if !done || unstarted {
                let title = cmd
                    .as_deref()
                    .map(|c| Cow::Owned(unwrap_shell(c).into_owned()));
                let input = object([
                    ("command", or_null(cmd)),
                    ("cwd", or_null(it.cwd)),
                    ("commandActions", or_null(it.command_actions)),
                ]);
                let ext = cx.push(tool_invocation(
                    it.id.clone(),
                    ToolKind::Execute,
                    "Bash",
                    title,
                    input,
                ));
                ext.put_opt("codex.processId", it.process_id.filter(|v| !is_null(v)));
                ext.put_opt("codex.source", it.source.filter(|v| !is_null(v)));
                ext.put_opt("codex.pluginId", it.plugin_id.filter(|v| !is_null(v)));
                ext.put_opt("codex.scriptPath", it.script_path.filter(|v| !is_null(v)));
                if unstarted {
                    ext.put("codex.itemStarted", false);
                } else {
                    open_call(cx, &it.id, "Bash", Vec::new());
                }
            }
            if done {
                let call = close_call(cx, &it.id);
                let ok = status == "completed" && it.exit_code.unwrap_or(0) == 0;
                let output = object([
                    ("stdout", or_null(it.aggregated_output)),
                    ("stderr", Json::from("")),
                    ("exit_code", or_null(it.exit_code.map(Value::from))),
                ]);
                let mut c = completion(it.id, ok, Some(output));
                c.duration_ms = count(it.duration_ms);
                if status == "declined" {
                    c.status = declined_status(call.as_ref());
                }
                let ext = cx.push(c);
                ext.put("codex.status", it.status.unwrap_or_default());
            }
        }
        "fileChange" => {
            let changes = it.changes.unwrap_or_default();
            let paths: Vec<Str<'a>> = changes.iter().map(|c| c.path.clone()).collect();
            if !done {
                let files = &changes;
                let changes = changes
                    .iter()
                    .map(|c| {
                        object([
                            ("path", Json::Str(c.path.clone())),
                            ("kind", or_null(c.kind.as_ref().and_then(|k| k.ty.clone()))),
                            ("diff", or_null(c.diff.clone())),
                        ])
                    })
                    .collect();
                let input = object([("changes", Json::Array(changes))]);
                let files = files
                    .iter()
                    .map(|c| {
                        let to = c.kind.as_ref().and_then(|k| k.move_path.as_deref());
                        let kind = match to {
                            Some(_) => ChangeKind::Move,
                            None => change_kind(c.kind.as_ref().and_then(|k| k.ty.as_deref())),
                        };
                        Change {
                            path: c.path.to_string(),
                            kind,
                            move_path: to.map(str::to_owned),
                            diff: c.diff.as_deref().map(str::to_owned),
                        }
                    })
                    .collect();
                open_call(cx, &it.id, "FileChange", files);
                let mut inv = tool_invocation(
                    it.id,
                    ToolKind::Edit,
                    "FileChange",
                    paths.first().cloned(),
                    input,
                );
                inv.locations = Some(paths);
                cx.push(inv);
            } else {
                let call = close_call(cx, &it.id);
                let ok = status == "completed";
                let mut c = completion(
                    it.id.clone(),
                    ok,
                    Some(object([(
                        "status",
                        Json::Str(Cow::Owned(status.to_owned())),
                    )])),
                );
                if status == "declined" {
                    c.status = declined_status(call.as_ref());
                }
                c.locations = Some(paths);
                cx.push(c);
                if ok {
                    for ch in changes {
                        let kind = change_kind(ch.kind.as_ref().and_then(|k| k.ty.as_deref()));
                        let move_path = ch.kind.and_then(|k| k.move_path);
                        let diff = ch
                            .diff
                            .as_deref()
                            .map(|d| git_diff(&ch.path, kind, move_path.as_deref(), d));
                        let mut fc = file_change(ch.path, kind, diff, Some(it.id.clone()));
                        if move_path.is_some() {
                            fc.change_kind = ChangeKind::Move;
                        }
                        fc.move_path = move_path;
                        cx.push(fc);
                    }
                }
            }
        }
        "mcpToolCall" | "dynamicToolCall" => {
            let dynamic = it.ty == "dynamicToolCall";
            let server = it.server.unwrap_or_default();
            let tool = it.tool.unwrap_or_default();
            let name = if !dynamic && !server.is_empty() && !tool.is_empty() {
                format!("mcp__{server}__{tool}")
            } else if !dynamic {
                "McpTool".to_owned()
            } else {
                tool.to_string()
            };
            if !done {
                if dynamic && is_open(cx, &it.id) {
                    // Its `item/tool/call` request opened it.
                    cx.push(ToolUpdate {
                        call_id: it.id,
                        status: it.status,
                        tool_name: Some(Cow::Owned(name)),
                        output: None,
                        elapsed_ms: None,
                        parent_call_id: None,
                        title: None,
                        input: None,
                        locations: None,
                    });
                    return;
                }
                open_call(cx, &it.id, &name, Vec::new());
                let mut inv = tool_invocation(
                    it.id,
                    if dynamic {
                        ToolKind::Other
                    } else {
                        ToolKind::Mcp
                    },
                    "",
                    None,
                    object([
                        ("server", Json::Str(server.clone())),
                        ("tool", Json::Str(tool.clone())),
                        ("arguments", or_null(it.arguments)),
                    ]),
                );
                inv.tool_name = Cow::Owned(name);
                if !dynamic {
                    inv.mcp_server = Some(server);
                    inv.mcp_tool = Some(tool);
                }
                let ext = cx.push(inv);
                ext.put_opt("codex.namespace", it.namespace);
            } else {
                let was_open = close_call(cx, &it.id).is_some_and(|c| c.invoked);
                let failed = it.error.is_some_and(|e| !is_null(e))
                    || status == "failed"
                    || it.success == Some(false);
                let output = if dynamic {
                    Some(object([
                        ("contentItems", or_null(it.content_items)),
                        ("success", or_null(it.success)),
                    ]))
                } else {
                    if failed { it.error } else { it.result }
                        .filter(|r| !is_null(r))
                        .map(Json::Raw)
                };
                if dynamic && !was_open {
                    // The client's answer ended it already; the item adds its duration.
                    let ext = cx.push(Notice {
                        subtype: Cow::Borrowed("item/completed/dynamicToolCall"),
                        message: None,
                    });
                    ext.put("codex.itemId", it.id);
                    ext.put_opt("codex.status", it.status);
                    ext.put_opt("codex.durationMs", count(it.duration_ms));
                    ext.put_opt("codex.output", output);
                    return;
                }
                let mut c = completion(it.id, !failed, output);
                c.duration_ms = count(it.duration_ms);
                cx.push(c);
            }
        }
        "webSearch" => {
            let input = object([
                ("query", or_null(it.query.clone())),
                ("action", or_null(it.action)),
            ]);
            if !done {
                open_call(cx, &it.id, "WebSearch", Vec::new());
                cx.push(tool_invocation(
                    it.id,
                    ToolKind::Browse,
                    "WebSearch",
                    it.query,
                    input,
                ));
            } else {
                close_call(cx, &it.id);
                cx.push(completion(it.id, true, Some(input)));
            }
        }
        "imageView" => {
            if !done {
                open_call(cx, &it.id, "ImageView", Vec::new());
                let input = object([("path", or_null(it.path.clone()))]);
                let mut inv =
                    tool_invocation(it.id, ToolKind::Read, "ImageView", it.path.clone(), input);
                inv.locations = it.path.map(|p| vec![p]);
                cx.push(inv);
            } else {
                close_call(cx, &it.id);
                cx.push(completion(it.id, true, None));
            }
        }
        "collabToolCall" | "collabAgentToolCall" => {
            // Codex 0.169 calls it `collabAgentToolCall` (tools `spawnAgent`, `wait`,
            // `closeAgent`, …, several receivers); earlier builds `collabToolCall`
            // (`spawn_agent`, one receiver).
            let tool = it.tool.unwrap_or_default();
            let receivers: Vec<Str<'a>> = it
                .receiver_thread_ids
                .and_then(|r| serde_json::from_str(r.get()).ok())
                .unwrap_or_default();
            let agent = it
                .new_thread_id
                .or(it.receiver_thread_id)
                .or_else(|| receivers.first().cloned());
            let name = format!("collab:{tool}");
            if !done {
                open_call(cx, &it.id, &name, Vec::new());
                let input = object([
                    ("tool", Json::Str(tool.clone())),
                    ("prompt", or_null(it.prompt.clone())),
                    ("receiverThreadId", or_null(agent)),
                ]);
                let mut inv =
                    tool_invocation(it.id.clone(), ToolKind::Think, "", it.prompt.clone(), input);
                inv.tool_name = Cow::Owned(name);
                let ext = cx.push(inv);
                ext.put_opt("codex.model", it.model);
                if matches!(&*tool, "spawn_agent" | "spawnAgent") {
                    cx.push(SubagentSpawn {
                        call_id: it.id,
                        agent_type: None,
                        description: it.prompt.clone(),
                        is_resume: false,
                        resume_agent_id: None,
                        prompt: it.prompt,
                        parent_call_id: None,
                    });
                }
            } else {
                close_call(cx, &it.id);
                let ok = status != "failed";
                let ext = cx.push(completion(
                    it.id.clone(),
                    ok,
                    it.agents_states.filter(|s| !is_null(s)).map(Json::Raw),
                ));
                ext.put_opt("codex.agentThreadId", agent.clone());
                ext.put("codex.tool", tool.clone());
                collab_end(
                    cx,
                    it.id,
                    &tool,
                    ok,
                    agent,
                    receivers,
                    it.agents_states,
                    it.status,
                );
            }
        }
        "contextCompaction" => {
            if done {
                cx.push(ContextCompaction {
                    trigger: CompactionTrigger::Auto,
                    pre_tokens: None,
                    post_tokens: None,
                    summary: None,
                    duration_ms: None,
                });
            } else {
                cx.push(SessionStatus {
                    status: SessionStatusKind::Compacting,
                    message: None,
                });
            }
        }
        "enteredReviewMode" | "exitedReviewMode" => {
            let ext = cx.push(SessionMode {
                current_mode_id: Cow::Borrowed(if it.ty == "enteredReviewMode" {
                    "review"
                } else {
                    "default"
                }),
                available_modes: Vec::new(),
            });
            ext.put_opt("codex.review", it.review.filter(|r| !is_null(r)));
        }
        other => {
            let ext = cx.push(Notice {
                subtype: Cow::Owned(format!(
                    "item/{}/{other}",
                    if done { "completed" } else { "started" }
                )),
                message: None,
            });
            ext.put("codex.itemId", it.id);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Answers in a tee of both directions

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultBody<'a> {
    #[serde(borrow)]
    decision: Option<&'a RawValue>,
    #[serde(borrow)]
    thread: Option<Thread<'a>>,
    #[serde(borrow)]
    turn: Option<Turn<'a>>,
    #[serde(borrow)]
    approval_policy: Option<&'a RawValue>,
    #[serde(borrow)]
    sandbox: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    reasoning_effort: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cwd: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model_provider: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    scope: Option<Str<'a>>,
    #[serde(borrow)]
    permissions: Option<&'a RawValue>,
    #[serde(borrow)]
    answers: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    action: Option<Str<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    content_items: Option<&'a RawValue>,
    success: Option<bool>,
    /// What an answer to `thread/start` (`thread/resume`, `thread/fork`) says beside its
    /// thread and has no event field for, kept as `codex.*` extensions of its `session_mode`.
    #[serde(borrow)]
    service_tier: Option<&'a RawValue>,
    #[serde(borrow)]
    approvals_reviewer: Option<&'a RawValue>,
    #[serde(borrow)]
    active_permission_profile: Option<&'a RawValue>,
    #[serde(borrow)]
    multi_agent_mode: Option<&'a RawValue>,
    #[serde(borrow)]
    disabled_plugin_ids: Option<&'a RawValue>,
    #[serde(borrow)]
    runtime_workspace_roots: Option<&'a RawValue>,
    #[serde(borrow)]
    instruction_sources: Option<&'a RawValue>,
}

/// What an answer to `thread/start` says beside its thread: model, reasoning effort, cwd and
/// model provider (Codex 0.100 puts the model there only).
type ThreadAnswer<'a> = (
    Option<Str<'a>>,
    Option<Str<'a>>,
    Option<Str<'a>>,
    Option<Str<'a>>,
);

/// The `session_init` of a thread, from the `thread/started` notification or (with what the
/// answer says beside the thread) from the answer to `thread/start`.
///
/// The answer and the notification are one announcement: whichever comes second gives no
/// second `session_init` ([`Memory::announced`]); the notification then gives a `notice`.
/// A thread with no id announces nothing.
fn session_init<'a>(t: Thread<'a>, answer: Option<ThreadAnswer<'a>>, cx: &mut Cx<'a>) {
    let from_answer = answer.is_some();
    let (model, effort, cwd, provider) = answer.unwrap_or_default();
    if t.id.is_empty() {
        notice(cx, Cow::Borrowed("thread/started without an id"), None);
        return;
    }
    if t.parent_thread_id.is_none() {
        set_stream_thread(cx, &t.id);
    }
    let line = cx.line;
    let announced = &mut cx.memory().codex.announced;
    let second = announced.remove(&t.id).is_some();
    if !second {
        announced.insert(&t.id, (), line);
    }
    cx.session_id = Some(t.id);
    if second {
        if !from_answer {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("thread/started"),
                message: Some(Cow::Borrowed("announced by the thread/start answer")),
            });
            ext.put("codex.alreadyAnnounced", true);
        }
        return;
    }
    let cwd = t.cwd.or(cwd);
    if let Some(c) = cwd.as_deref().filter(|c| !c.is_empty()) {
        let line = cx.line;
        let id = cx.session_id.clone().unwrap_or_default();
        cx.memory().codex.cwds.insert(&id, c.to_owned(), line);
    }
    let ext = cx.push(SessionInit {
        model: model.or(t.model),
        reasoning_effort: effort.or(t.reasoning_effort),
        cwd,
        version: t.cli_version,
        ..SessionInit::default()
    });
    ext.put_opt("codex.modelProvider", t.model_provider.or(provider));
    ext.put_opt("codex.parentThreadId", t.parent_thread_id);
    ext.put_opt("codex.path", t.path);
    ext.put_opt("codex.source", t.source.filter(|v| !is_null(v)));
    ext.put_opt("codex.originator", t.originator);
    ext.put_opt("codex.forkedFromId", t.forked_from_id);
    ext.put_opt("codex.gitInfo", t.git_info.filter(|v| !is_null(v)));
    ext.put_opt("codex.threadName", t.name);
    ext.put_opt("codex.agentNickname", t.agent_nickname);
    ext.put_opt("codex.agentRole", t.agent_role);
    ext.put_opt("codex.ephemeral", t.ephemeral.filter(|e| *e));
    let extras = [
        ("codex.preview", t.preview),
        ("codex.createdAt", t.created_at),
        ("codex.updatedAt", t.updated_at),
        ("codex.recencyAt", t.recency_at),
        ("codex.environments", t.environments),
        ("codex.historyMode", t.history_mode),
        ("codex.threadStatus", t.status),
        ("codex.threadSessionId", t.session_id),
        ("codex.attachedToThreadId", t.attached_to_thread_id),
        ("codex.threadSource", t.thread_source),
        ("codex.section", t.section),
        ("codex.sectionEnteredAt", t.section_entered_at),
        ("codex.projectId", t.project_id),
        ("codex.canAcceptDirectInput", t.can_accept_direct_input),
        ("codex.daybreakEnabled", t.daybreak_enabled),
        ("codex.extra", t.extra),
    ];
    for (key, v) in extras {
        ext.put_opt(key, said(v));
    }
}

/// The items of a thread's history (the `turns` of a `thread/resume` answer), as the events
/// they record: each item as started and completed, marked `codex.history` with its turn.
fn history<'a>(turns: &'a RawValue, cx: &mut Cx<'a>) {
    #[derive(Deserialize)]
    struct HistoryTurn<'a> {
        #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
        id: Option<Str<'a>>,
        #[serde(borrow, default)]
        items: Vec<&'a RawValue>,
    }
    const CALLS: &[&str] = &[
        "commandExecution",
        "fileChange",
        "mcpToolCall",
        "dynamicToolCall",
        "webSearch",
        "imageView",
        "collabToolCall",
        "collabAgentToolCall",
    ];
    let Ok(turns) = serde_json::from_str::<Vec<HistoryTurn>>(turns.get()) else {
        return;
    };
    for t in turns {
        for raw in t.items {
            let from = cx.events.len();
            let Ok(item) = serde_json::from_str::<Item>(raw.get()) else {
                continue;
            };
            if CALLS.contains(&&*item.ty) {
                if let Ok(start) = serde_json::from_str::<Item>(raw.get()) {
                    v2_item(false, start, cx);
                }
            }
            v2_item(true, item, cx);
            for (_, ext) in &mut cx.events[from..] {
                ext.put("codex.history", true);
                ext.put_opt("codex.turnId", t.id.clone());
            }
        }
    }
}

/// Takes out the server request an answer answers.
fn take_request(cx: &mut Cx<'_>, id: &str) -> Option<Request> {
    cx.memory().codex.requests.remove(id)
}

/// The client answered server request `id` with `decision`: the answer is in the request's
/// thread, the call it asked about remembers the decision (a cancel and a denial end a
/// declined call differently). Returns the call.
fn answered<'a>(cx: &mut Cx<'a>, id: &str, decision: Option<Decision>) -> Option<Str<'a>> {
    let req = take_request(cx, id)?;
    if let Some(t) = req.thread {
        cx.session_id = Some(Cow::Owned(t));
    }
    let call = req.call?;
    let line = cx.line;
    let calls = &mut cx.memory().codex.calls;
    match calls.get_mut(&call) {
        Some(c) => c.decision = decision,
        None => calls.insert(
            &call,
            Call {
                thread: None,
                tool_name: String::new(),
                decision,
                changes: Vec::new(),
                invoked: false,
            },
            line,
        ),
    }
    Some(Cow::Owned(call))
}

fn response<'a>(
    env: &Envelope<'a>,
    result: Option<IfObject<Box<ResultBody<'a>>>>,
    line: &'a str,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let request_id: Str<'a> = Cow::Owned(env.id_text().into_owned());
    let Some(IfObject(Some(b))) = result else {
        notice(
            cx,
            Cow::Borrowed("response"),
            raw_result(line).map(|r| ("result", r)),
        );
        return Ok(());
    };
    let answer = |decision: Decision,
                  allowed: bool,
                  updated_input: Option<Json<'a>>,
                  updated_permissions: Option<Json<'a>>| PermissionResponse {
        request_id: request_id.clone(),
        decision,
        allowed: Some(allowed),
        message: None,
        updated_input,
        updated_permissions,
        interrupt: false,
        tool_use_id: None,
        option_id: None,
    };
    if let Some(d) = b.decision {
        let word = raw_str(d)
            .or_else(|| super::jsonrpc::member_names(d.get()).into_iter().next())
            .unwrap_or_default();
        let (decision, allowed) = match &*word {
            "accept" | "approved" => (Decision::Allow, true),
            "acceptForSession"
            | "approved_for_session"
            | "acceptWithExecpolicyAmendment"
            | "applyNetworkPolicyAmendment" => (Decision::AllowAlways, true),
            "cancel" | "abort" => (Decision::Cancelled, false),
            _ => (Decision::Deny, false),
        };
        let mut r = answer(decision, allowed, None, None);
        r.interrupt = matches!(&*word, "cancel" | "abort");
        r.tool_use_id = answered(cx, &request_id, Some(decision));
        let ext = cx.push(r);
        ext.put("codex.decision", d);
    } else if let Some(t) = b.thread {
        if b.approval_policy.is_none() && b.model.is_none() {
            // Other answers that carry a thread (`thread/read`, `thread/unarchive`, …)
            // describe it; they start nothing.
            cx.session_id = Some(t.id);
            notice(cx, Cow::Borrowed("response/thread"), None);
            return Ok(());
        }
        // The answer to `thread/start`, `thread/resume` or `thread/fork` (they share the
        // shape, `approvalPolicy` and `model` required): it comes before the `thread/started`
        // notification, so it gives the thread's `session_init`, then its approval policy,
        // then (`thread/resume`) the history it records.
        let turns = t
            .turns
            .filter(|t| t.get().starts_with('[') && t.get() != "[]");
        session_init(
            t,
            Some((b.model, b.reasoning_effort, b.cwd, b.model_provider)),
            cx,
        );
        let ext = cx.push(SessionMode {
            current_mode_id: b
                .approval_policy
                .and_then(raw_str)
                .unwrap_or(Cow::Borrowed("default")),
            available_modes: Vec::new(),
        });
        ext.put_opt("codex.sandbox", b.sandbox.filter(|s| !is_null(s)));
        ext.put("codex.requestId", request_id);
        let extras = [
            ("codex.serviceTier", b.service_tier),
            ("codex.approvalsReviewer", b.approvals_reviewer),
            ("codex.activePermissionProfile", b.active_permission_profile),
            ("codex.multiAgentMode", b.multi_agent_mode),
            ("codex.disabledPluginIds", b.disabled_plugin_ids),
            ("codex.runtimeWorkspaceRoots", b.runtime_workspace_roots),
            ("codex.instructionSources", b.instruction_sources),
        ];
        for (key, v) in extras {
            ext.put_opt(key, said(v));
        }
        if let Some(turns) = turns {
            history(turns, cx);
        }
    } else if let Some(t) = b.turn {
        cx.turn_id = Some(t.id);
        notice(cx, Cow::Borrowed("response/turn"), None);
    } else if b.content_items.is_some() || b.success.is_some() {
        // The client's result of a dynamic tool call (`item/tool/call`).
        let req = take_request(cx, &request_id);
        if let Some(r) = &req {
            cx.session_id = r.thread.clone().map(Cow::Owned).or(cx.session_id.take());
        }
        let call = req.filter(|r| r.tool_call).and_then(|r| r.call);
        let output = object([
            ("contentItems", or_null(b.content_items)),
            ("success", or_null(b.success)),
        ]);
        match call {
            Some(id) if close_call(cx, &id).is_some_and(|c| c.invoked) => {
                let ext = cx.push(completion(
                    Cow::Owned(id),
                    b.success != Some(false),
                    Some(output),
                ));
                ext.put("codex.requestId", request_id);
            }
            _ => {
                notice(
                    cx,
                    Cow::Borrowed("response"),
                    raw_result(line).map(|r| ("result", r)),
                );
            }
        }
    } else if b.permissions.is_some() {
        let always = b.scope.as_deref() == Some("session");
        let tool_use_id = answered(
            cx,
            &request_id,
            Some(if always {
                Decision::AllowAlways
            } else {
                Decision::Allow
            }),
        );
        let mut r = answer(
            if always {
                Decision::AllowAlways
            } else {
                Decision::Allow
            },
            true,
            None,
            b.permissions.map(Json::Raw),
        );
        r.tool_use_id = tool_use_id;
        cx.push(r);
    } else if let Some(a) = b.answers {
        let tool_use_id = answered(cx, &request_id, Some(Decision::Allow));
        let mut r = answer(
            Decision::Allow,
            true,
            Some(object([("answers", Json::Raw(a))])),
            None,
        );
        r.tool_use_id = tool_use_id;
        cx.push(r);
    } else if let Some(action) = b.action {
        let (decision, allowed) = match &*action {
            "accept" => (Decision::Allow, true),
            "cancel" => (Decision::Cancelled, false),
            _ => (Decision::Deny, false),
        };
        let tool_use_id = answered(cx, &request_id, Some(decision));
        let mut r = answer(
            decision,
            allowed,
            b.content.filter(|c| is_object(c)).map(Json::Raw),
            None,
        );
        r.tool_use_id = tool_use_id;
        cx.push(r);
    } else {
        notice(
            cx,
            Cow::Borrowed("response"),
            raw_result(line).map(|r| ("result", r)),
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// legacy codex/event

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(rename = "type", borrow)]
    ty: Str<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    message: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    delta: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    text: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    call_id: Option<Str<'a>>,
    #[serde(borrow)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cwd: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    chunk: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stdout: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stderr: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    aggregated_output: Option<Str<'a>>,
    exit_code: Option<i64>,
    #[serde(borrow)]
    changes: Option<&'a RawValue>,
    success: Option<bool>,
    info: Option<LegacyTokenInfo>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    last_agent_message: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    unified_diff: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    explanation: Option<Str<'a>>,
    #[serde(borrow)]
    plan: Option<Vec<PlanStep<'a>>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    reason: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    session_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
    #[serde(borrow)]
    invocation: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    query: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    turn_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    grant_root: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    item_id: Option<Str<'a>>,
    #[serde(borrow)]
    codex_error_info: Option<&'a RawValue>,
}

#[derive(Deserialize)]
pub(super) struct LegacyTokenInfo {
    pub(super) total_token_usage: Option<ExecUsage>,
    pub(super) last_token_usage: Option<ExecUsage>,
    model_context_window: Option<Count>,
}

fn exec_usage_snake(u: &ExecUsage) -> Value {
    json!({
        "input_tokens": count(u.input_tokens).unwrap_or(0).saturating_sub(count(u.cached_input_tokens).unwrap_or(0)),
        "output_tokens": count(u.output_tokens).unwrap_or(0),
        "cache_read_input_tokens": count(u.cached_input_tokens).unwrap_or(0),
        "cache_creation_input_tokens": count(u.cache_write_input_tokens).unwrap_or(0),
        "reasoning_output_tokens": count(u.reasoning_output_tokens).unwrap_or(0),
    })
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

/// The files of a legacy `patch_apply_begin`: `{path: {add: …} | {delete: …} | {update:
/// {move_path, …}}}`.
fn legacy_changes(changes: Option<&RawValue>) -> Vec<Change> {
    /// `{"add": {content}}`, `{"delete": {content}}`, `{"update": {unified_diff, move_path}}`.
    #[derive(Deserialize, Default)]
    struct Body<'a> {
        #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
        move_path: Option<Str<'a>>,
        #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
        unified_diff: Option<Str<'a>>,
        #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
        content: Option<Str<'a>>,
    }
    let Some(pairs) = changes
        .filter(|c| is_object(c))
        .and_then(|c| serde_json::from_str::<Pairs<&RawValue>>(c.get()).ok())
    else {
        return Vec::new();
    };
    pairs
        .0
        .into_iter()
        .map(|(path, change)| {
            let kind = super::jsonrpc::member_names(change.get())
                .into_iter()
                .next()
                .unwrap_or_default();
            let body = serde_json::from_str::<Pairs<Body>>(change.get())
                .ok()
                .and_then(|p| p.0.into_iter().next())
                .map(|(_, b)| b)
                .unwrap_or_default();
            let to = body
                .move_path
                .filter(|_| kind == "update")
                .map(Cow::into_owned);
            let kind = match (&*kind, &to) {
                (_, Some(_)) => ChangeKind::Move,
                ("add", _) => ChangeKind::Add,
                ("delete", _) => ChangeKind::Delete,
                _ => ChangeKind::Update,
            };
            Change {
                path: path.into_owned(),
                kind,
                move_path: to,
                diff: body.unified_diff.or(body.content).map(Cow::into_owned),
            }
        })
        .collect()
}

pub(super) fn legacy<'a>(
    msg: &'a RawValue,
    env: Option<&Envelope<'a>>,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let _ = env;
    let m: Msg = serde_json::from_str(msg.get())?;
    if cx.sticky.codex_v2_seen() {
        let ext = cx.push(Notice {
            subtype: Cow::Owned(format!("codex/event/{}", m.ty)),
            message: None,
        });
        ext.put("codex.supersededBy", "v2");
        ext.put("msg", msg);
        return Ok(());
    }
    if cx.turn_id.is_none() {
        cx.turn_id = m.turn_id.clone();
    }
    let call = || m.call_id.clone().unwrap_or_default();
    match &*m.ty {
        "session_configured" => {
            cx.session_id = m.session_id.clone().or(cx.session_id.take());
            let Some(t) = cx.session_id.clone().filter(|t| !t.is_empty()) else {
                let ext = cx.push(Notice {
                    subtype: Cow::Borrowed("codex/event/session_configured"),
                    message: Some(Cow::Borrowed("no session id")),
                });
                ext.put("msg", msg);
                return Ok(());
            };
            set_stream_thread(cx, &t);
            if let Some(c) = m.cwd.as_deref().filter(|c| !c.is_empty()) {
                let line = cx.line;
                cx.memory().codex.cwds.insert(&t, c.to_owned(), line);
            }
            cx.push(SessionInit {
                model: m.model.clone(),
                cwd: m.cwd.clone(),
                ..SessionInit::default()
            });
        }
        "task_started" => {
            let turn = cx.turn_id.clone().unwrap_or_default();
            usage_turn_started(cx, &turn);
            cx.push(TurnStart::default());
        }
        "task_complete" => {
            let usage = turn_usage(cx, cx.turn_id.clone().as_deref());
            cx.push(TurnComplete {
                subtype: Some(Cow::Borrowed("success")),
                result: m.last_agent_message.clone(),
                usage,
                ..TurnComplete::default()
            });
        }
        "turn_aborted" => {
            let thread = line_thread(cx);
            cancel_open_calls(cx, thread.as_deref());
            let usage = turn_usage(cx, cx.turn_id.clone().as_deref());
            cx.push(TurnComplete {
                subtype: Some(Cow::Borrowed("interrupted")),
                stop_reason: m.reason.clone(),
                usage,
                ..TurnComplete::default()
            });
        }
        "user_message" => {
            cx.push(UserInput {
                text: m.message.clone().unwrap_or_default(),
                images: None,
                is_synthetic: false,
                parent_call_id: None,
            });
        }
        "agent_message" => {
            text(
                cx,
                strip_plan_tags(m.message.clone().unwrap_or_default()),
                TextKind::Text,
                None,
            );
        }
        "agent_reasoning" => {
            text(
                cx,
                m.text.clone().unwrap_or_default(),
                TextKind::Thinking,
                None,
            );
        }
        "agent_reasoning_raw_content" => {
            let ext = text(
                cx,
                m.text.clone().unwrap_or_default(),
                TextKind::Thinking,
                None,
            );
            ext.put(RAW_REASONING, true);
        }
        // Each delta comes twice: the newer `*_content_delta` (with its item), then the older
        // twin; once the newer flavour is seen, the twin becomes a `notice` (`codex.duplicateOf`).
        "agent_message_content_delta" | "reasoning_content_delta" => {
            let line = cx.line;
            cx.memory().codex.flavours.insert(&m.ty, (), line);
            let kind = if m.ty == "reasoning_content_delta" {
                StreamDeltaKind::Thinking
            } else {
                StreamDeltaKind::Text
            };
            cx.push(delta(
                kind,
                m.item_id.clone(),
                m.delta.clone().map(strip_plan_tags),
            ));
        }
        "agent_message_delta" | "agent_reasoning_delta" => {
            let newer = if m.ty == "agent_message_delta" {
                "agent_message_content_delta"
            } else {
                "reasoning_content_delta"
            };
            if cx.memory().codex.flavours.contains(newer) {
                let ext = cx.push(Notice {
                    subtype: Cow::Owned(format!("codex/event/{}", m.ty)),
                    message: None,
                });
                ext.put("codex.duplicateOf", newer);
                return Ok(());
            }
            let kind = if m.ty == "agent_reasoning_delta" {
                StreamDeltaKind::Thinking
            } else {
                StreamDeltaKind::Text
            };
            cx.push(delta(kind, None, m.delta.clone().map(strip_plan_tags)));
        }
        "agent_reasoning_raw_content_delta" => {
            let ext = cx.push(delta(StreamDeltaKind::Thinking, None, m.delta.clone()));
            ext.put(RAW_REASONING, true);
        }
        "agent_reasoning_section_break" => {
            let ext = cx.push(delta(StreamDeltaKind::BlockStart, None, None));
            ext.put("block_type", "thinking");
        }
        "exec_command_begin" => {
            let cmd = command_text(m.command);
            let title = cmd
                .as_deref()
                .map(|c| Cow::Owned(unwrap_shell(c).into_owned()));
            open_call(cx, &call(), "Bash", Vec::new());
            cx.push(tool_invocation(
                call(),
                ToolKind::Execute,
                "Bash",
                title,
                object([
                    ("command", or_null(m.command)),
                    ("cwd", or_null(m.cwd.clone())),
                ]),
            ));
        }
        "exec_command_output_delta" => {
            let text = m
                .chunk
                .as_deref()
                .and_then(base64_decode)
                .map(|b| Cow::Owned(String::from_utf8_lossy(&b).into_owned()))
                .or(m.chunk.clone());
            cx.push(delta(StreamDeltaKind::ToolOutput, Some(call()), text));
        }
        "exec_command_end" => {
            close_call(cx, &call());
            let ok = m.exit_code.unwrap_or(0) == 0;
            let output = object([
                (
                    "stdout",
                    or_null(m.aggregated_output.clone().or(m.stdout.clone())),
                ),
                ("stderr", or_null(m.stderr)),
                ("exit_code", or_null(m.exit_code.map(Value::from))),
            ]);
            cx.push(completion(call(), ok, Some(output)));
        }
        "patch_apply_begin" => {
            open_call(cx, &call(), "FileChange", legacy_changes(m.changes));
            cx.push(tool_invocation(
                call(),
                ToolKind::Edit,
                "FileChange",
                None,
                object([("changes", or_null(m.changes))]),
            ));
        }
        "patch_apply_end" => {
            let ok = m.success.unwrap_or(true);
            let opened = close_call(cx, &call());
            cx.push(completion(
                call(),
                ok,
                Some(object([
                    ("stdout", or_null(m.stdout)),
                    ("stderr", or_null(m.stderr)),
                ])),
            ));
            // The files: the end names none, its begin did.
            if ok {
                for c in opened.map(|c| c.changes).unwrap_or_default() {
                    let diff = c
                        .diff
                        .as_deref()
                        .map(|d| git_diff(&c.path, c.kind, c.move_path.as_deref(), d));
                    let mut fc = file_change(Cow::Owned(c.path), c.kind, diff, Some(call()));
                    fc.move_path = c.move_path.map(Cow::Owned);
                    cx.push(fc);
                }
            }
        }
        "mcp_tool_call_begin" => {
            #[derive(Deserialize)]
            struct Inv<'a> {
                #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
                server: Option<Str<'a>>,
                #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
                tool: Option<Str<'a>>,
            }
            let inv: Option<Inv> = m
                .invocation
                .and_then(|i| serde_json::from_str(i.get()).ok());
            let (server, tool) = inv
                .map(|i| (i.server.unwrap_or_default(), i.tool.unwrap_or_default()))
                .unwrap_or_default();
            let mut ti = tool_invocation(
                call(),
                ToolKind::Mcp,
                "",
                None,
                m.invocation
                    .filter(|i| is_object(i))
                    .map(Json::Raw)
                    .unwrap_or(Json::Value(json!({}))),
            );
            ti.tool_name = Cow::Owned(format!("mcp__{server}__{tool}"));
            ti.mcp_server = Some(server);
            ti.mcp_tool = Some(tool);
            cx.push(ti);
        }
        "mcp_tool_call_end" => {
            let failed = m.result.is_some_and(|r| r.get().starts_with("{\"Err\""));
            cx.push(completion(
                call(),
                !failed,
                m.result.filter(|r| !is_null(r)).map(Json::Raw),
            ));
        }
        "web_search_begin" => {
            cx.push(tool_invocation(
                call(),
                ToolKind::Browse,
                "WebSearch",
                None,
                Json::Value(json!({})),
            ));
        }
        "web_search_end" => {
            cx.push(completion(
                call(),
                true,
                Some(object([("query", or_null(m.query))])),
            ));
        }
        "token_count" => {
            let Some(info) = m.info else {
                notice(
                    cx,
                    Cow::Borrowed("codex/event/token_count"),
                    Some(("msg", msg)),
                );
                return Ok(());
            };
            if let Some(total) = &info.total_token_usage {
                let last = info.last_token_usage.as_ref().map(exec_totals);
                let turn = cx.turn_id.clone();
                usage_reported(cx, turn.as_deref(), exec_totals(total), last);
            }
            let tot = info.total_token_usage.as_ref().map(tokens);
            cx.push(UsageUpdate {
                step_usage: Json::Value(
                    info.last_token_usage
                        .as_ref()
                        .map(exec_usage_snake)
                        .unwrap_or_else(|| json!({})),
                ),
                total: tot,
                context_window: count(info.model_context_window),
                context_tokens: None,
                cost_usd: None,
                parent_call_id: None,
                model: None,
                message_id: None,
            });
        }
        "turn_diff" => {
            let files = split_diff(m.unified_diff.as_deref().unwrap_or(""));
            cumulative_changes(cx, files);
            if cx.events.is_empty() {
                notice(cx, Cow::Borrowed("codex/event/turn_diff"), None);
            }
        }
        "plan_update" => {
            let entries = m
                .plan
                .unwrap_or_default()
                .into_iter()
                .map(|s| PlanEntry {
                    status: plan_status(s.status.as_deref()),
                    content: s.step.unwrap_or_default(),
                    priority: None,
                    active_form: None,
                })
                .collect();
            cx.push(PlanUpdate {
                entries,
                call_id: None,
                parent_call_id: None,
                explanation: m.explanation,
            });
        }
        "error" | "stream_error" | "warning" => {
            let sev = if m.ty == "error" {
                Severity::Error
            } else {
                Severity::Warning
            };
            let mut e = error_event(m.message.unwrap_or(Cow::Borrowed("error")), sev);
            e.will_retry = Some(m.ty == "stream_error");
            if let Some(info) = m.codex_error_info.filter(|i| !is_null(i)) {
                e.code = raw_str(info)
                    .or_else(|| super::jsonrpc::member_names(info.get()).into_iter().next());
                e.http_status = http_status(info);
            }
            if e.http_status.is_none() {
                e.http_status = status_in_message(&e.message);
            }
            cx.push(e);
        }
        "exec_approval_request" => {
            let cmd = command_text(m.command);
            cx.push(PermissionRequest {
                request_id: call(),
                tool_name: Cow::Borrowed("Bash"),
                tool_kind: ToolKind::Execute,
                tool_input: object([("command", or_null(cmd.clone())), ("cwd", or_null(m.cwd))]),
                tool_use_id: m.call_id.clone(),
                reason: m.reason,
                blocked_path: None,
                suggestions: None,
                title: cmd
                    .as_deref()
                    .map(|c| Cow::Owned(unwrap_shell(c).into_owned())),
                parent_call_id: None,
                options: None,
            });
        }
        "apply_patch_approval_request" => {
            cx.push(PermissionRequest {
                request_id: call(),
                tool_name: Cow::Borrowed("FileChange"),
                tool_kind: ToolKind::Edit,
                tool_input: object([
                    ("changes", or_null(m.changes)),
                    ("grantRoot", or_null(m.grant_root.clone())),
                ]),
                tool_use_id: m.call_id.clone(),
                reason: m.reason,
                blocked_path: m.grant_root,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
        }
        "context_compacted" => {
            cx.push(ContextCompaction {
                trigger: CompactionTrigger::Auto,
                pre_tokens: None,
                post_tokens: None,
                summary: None,
                duration_ms: None,
            });
        }
        other => {
            let ext = cx.push(Notice {
                subtype: Cow::Owned(format!("codex/event/{other}")),
                message: m.message,
            });
            ext.put("msg", msg);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Sticky;

    fn conv_with(line: &str, sticky: Sticky) -> (Vec<Value>, Cx<'_>) {
        let probe: Probe = serde_json::from_str(line).unwrap();
        assert!(sniff(&probe), "not recognised as Codex: {line}");
        let mut cx = Cx {
            sticky,
            ..Cx::default()
        };
        convert(line, &probe, &mut cx).unwrap();
        let evs = cx
            .events
            .iter()
            .map(|(b, e)| {
                let mut v = serde_json::to_value(b).unwrap();
                v["event"] = Value::from(b.kind());
                if !e.is_empty() {
                    v["extensions"] = serde_json::to_value(e).unwrap();
                }
                v
            })
            .collect();
        (evs, cx)
    }

    fn conv(line: &str) -> Vec<Value> {
        conv_with(line, Sticky::default()).0
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
    fn split_multi_file_diff() {
        let d = "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
        let parts = split_diff(d);
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].0.as_str(), parts[0].1), ("x", ChangeKind::Add));
        assert_eq!((parts[1].0.as_str(), parts[1].1), ("y", ChangeKind::Update));
        assert!(parts[1].2.starts_with("diff --git a/y"));
        let d = "diff --git a/src/old.py b/src/new.py\nindex 1..2\n--- a/src/old.py\n+++ b/src/new.py\n@@ -1 +1 @@\n-a\n+b\n";
        let parts = split_diff(d);
        assert_eq!(
            (parts[0].0.as_str(), parts[0].1),
            ("src/old.py", ChangeKind::Move)
        );
        assert_eq!(parts[0].3.as_deref(), Some("src/new.py"));
    }

    #[test]
    fn exec_command_lifecycle() {
        let ev = conv(
            r#"{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'uname -s'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
        );
        assert_eq!(ev[0]["event"], "tool_invocation");
        assert_eq!(ev[0]["title"], "uname -s");
        assert_eq!(ev[0]["input"]["command"], "/bin/bash -lc 'uname -s'");
        let ev = conv(
            r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"x","aggregated_output":"oops\n","exit_code":3,"status":"failed"}}"#,
        );
        assert_eq!(ev[0]["status"], "failed");
        assert_eq!(ev[0]["output"]["exit_code"], 3);
    }

    #[test]
    fn exec_mcp_and_search_and_declined() {
        let ev = conv(
            r#"{"type":"item.started","item":{"id":"i","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":1},"status":"in_progress"}}"#,
        );
        assert_eq!(ev[0]["toolName"], "mcp__docs__search");
        assert_eq!(ev[0]["mcpServer"], "docs");
        let ev = conv(
            r#"{"type":"item.completed","item":{"id":"w","type":"web_search","query":"rust","action":{"type":"search"}}}"#,
        );
        assert_eq!(ev[0]["kind"], "browse");
        assert_eq!(ev[1]["event"], "tool_completion");
        let ev = conv(
            r#"{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"rm -rf /","status":"declined"}}"#,
        );
        // Declined: it never ran, a denial (not an interrupt).
        assert_eq!(ev[0]["status"], "failed");
    }

    #[test]
    fn exec_usage_with_reasoning() {
        let ev = conv(
            r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":5,"reasoning_output_tokens":2}}"#,
        );
        assert_eq!(ev[0]["usage"]["reasoningTokens"], 2);
        assert_eq!(ev[0]["usage"]["cacheReadTokens"], 4);
    }

    #[test]
    fn v2_approval_request_and_answers() {
        let ev = conv(
            r#"{"method":"item/commandExecution/requestApproval","id":0,"params":{"threadId":"t","turnId":"u","itemId":"call_1","command":"/bin/bash -lc 'touch x'","cwd":"/w","reason":"needs write"}}"#,
        );
        assert_eq!(ev[0]["event"], "permission_request");
        assert_eq!(ev[0]["requestId"], "0");
        assert_eq!(ev[0]["toolUseId"], "call_1");
        for (d, want) in [
            ("\"accept\"", "allow"),
            ("\"acceptForSession\"", "allow_always"),
            ("\"decline\"", "deny"),
            ("\"cancel\"", "cancelled"),
            ("{\"acceptWithExecpolicyAmendment\":{}}", "allow_always"),
        ] {
            let ev = conv(&format!(r#"{{"id":0,"result":{{"decision":{d}}}}}"#));
            assert_eq!(ev[0]["decision"], want, "{d}");
        }
    }

    /// Line `n` (from 1) of a recorded capture.
    fn line_of(capture: &'static str, n: usize) -> &'static str {
        capture
            .lines()
            .nth(n - 1)
            .expect("the capture has the line")
    }

    const APP_SERVER_DECLINED: &str =
        include_str!("../../testdata/codex-app-server/command-declined.jsonl");
    const APP_SERVER_0_100_DECLINED: &str =
        include_str!("../../testdata/codex-app-server-0.100/command-declined.jsonl");

    #[test]
    fn thread_start_answer_gives_the_session_init_then_the_mode() {
        // 0.169.0: the model is on the thread too; 0.100.0: beside it only.
        for (line, version) in [
            (line_of(APP_SERVER_DECLINED, 6), "0.169.0"),
            (line_of(APP_SERVER_0_100_DECLINED, 5), "0.100.0"),
        ] {
            let (ev, cx) = conv_with(line, Sticky::default());
            let kinds: Vec<&Value> = ev.iter().map(|e| &e["event"]).collect();
            assert_eq!(kinds, ["session_init", "session_mode"], "{version}");
            assert_eq!(ev[0]["model"], "gpt-5.5", "{version}");
            assert_eq!(ev[0]["cwd"], "/home/dev/work", "{version}");
            assert_eq!(ev[0]["version"], version);
            assert_eq!(ev[0]["extensions"]["codex.modelProvider"], "mock");
            assert_eq!(ev[1]["currentModeId"], "untrusted", "{version}");
            assert_eq!(ev[1]["extensions"]["codex.requestId"], "2", "{version}");
            assert!(cx
                .session_id
                .as_deref()
                .is_some_and(|s| s.starts_with("01a2012")));
        }
        // The thread/started notification that follows states the session again.
        let ev = conv(line_of(APP_SERVER_0_100_DECLINED, 7));
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0]["event"], "session_init");
        assert_eq!(ev[0]["cwd"], "/home/dev/work");
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
    fn other_thread_answers_start_nothing() {
        // The shape of a `thread/read` answer: the thread alone.
        let ev = conv(r#"{"id":7,"result":{"thread":{"id":"t1","cwd":"/w","turns":[]}}}"#);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0]["event"], "notice");
        assert_eq!(ev[0]["subtype"], "response/thread");
    }

    #[test]
    fn a_declined_command_that_never_started_is_invoked_by_its_completion() {
        // 0.100.0: no item/started for the declined command; its completion states the call.
        let ev = conv(line_of(APP_SERVER_0_100_DECLINED, 33));
        let kinds: Vec<&Value> = ev.iter().map(|e| &e["event"]).collect();
        assert_eq!(kinds, ["tool_invocation", "tool_completion"]);
        assert_eq!(ev[0]["callId"], "call_kL61MR3k49EUSSqFxWuTy8J7");
        assert_eq!(ev[0]["toolName"], "Bash");
        assert_eq!(ev[0]["title"], "touch build.marker");
        assert_eq!(ev[0]["input"]["cwd"], "/home/dev/work");
        assert_eq!(ev[0]["extensions"]["codex.itemStarted"], false);
        // Declined without the answer in view: a denial.
        assert_eq!(ev[1]["status"], "failed");
        // 0.169.0 sends item/started (line 18) first: the completion is only that.
        let ev = conv(line_of(APP_SERVER_DECLINED, 22));
        let kinds: Vec<&Value> = ev.iter().map(|e| &e["event"]).collect();
        assert_eq!(kinds, ["tool_completion"]);
        assert_eq!(
            conv(line_of(APP_SERVER_DECLINED, 18))[0]["event"],
            "tool_invocation"
        );
    }

    #[test]
    fn thread_and_item_facts_without_a_field_are_extensions() {
        // The thread/start answer: the thread's members and the answer's own go to
        // codex.* extensions (nulls and "" say nothing and are left out).
        let ev = conv(
            r#"{"id":2,"result":{"thread":{"id":"th1","preview":"","createdAt":1795315422,"updatedAt":1795315423,"recencyAt":1795315424,"environments":[{"environmentId":"local","cwd":"/w"}],"historyMode":"paginated","status":{"type":"idle"},"sessionId":"th1","canAcceptDirectInput":true,"section":null,"projectId":null,"cwd":"/w","turns":[]},"model":"m","approvalPolicy":"never","sandbox":{"type":"dangerFullAccess"},"serviceTier":"flex","approvalsReviewer":"user","multiAgentMode":"explicitRequestOnly","disabledPluginIds":[],"runtimeWorkspaceRoots":["/w"],"instructionSources":[],"activePermissionProfile":null}}"#,
        );
        let init = &ev[0]["extensions"];
        assert_eq!(ev[0]["event"], "session_init");
        for (k, v) in [
            ("codex.createdAt", json!(1795315422)),
            ("codex.updatedAt", json!(1795315423)),
            ("codex.recencyAt", json!(1795315424)),
            (
                "codex.environments",
                json!([{"environmentId": "local", "cwd": "/w"}]),
            ),
            ("codex.historyMode", json!("paginated")),
            ("codex.threadStatus", json!({"type": "idle"})),
            ("codex.threadSessionId", json!("th1")),
            ("codex.canAcceptDirectInput", json!(true)),
        ] {
            assert_eq!(init[k], v, "{k}");
        }
        for k in ["codex.preview", "codex.section", "codex.projectId"] {
            assert!(init.get(k).is_none(), "{k}");
        }
        let mode = &ev[1]["extensions"];
        assert_eq!(ev[1]["event"], "session_mode");
        for (k, v) in [
            ("codex.serviceTier", json!("flex")),
            ("codex.approvalsReviewer", json!("user")),
            ("codex.multiAgentMode", json!("explicitRequestOnly")),
            ("codex.disabledPluginIds", json!([])),
            ("codex.runtimeWorkspaceRoots", json!(["/w"])),
            ("codex.instructionSources", json!([])),
        ] {
            assert_eq!(mode[k], v, "{k}");
        }
        assert!(mode.get("codex.activePermissionProfile").is_none());
        // An item's times, on the first event of its line.
        let started = conv(
            r#"{"method":"item/started","params":{"item":{"type":"reasoning","id":"rs1","summary":[],"content":[],"startedAtMs":1795315422351,"completedAtMs":null},"threadId":"t","turnId":"u","startedAtMs":1795315422351}}"#,
        );
        assert_eq!(
            started[0]["extensions"]["codex.startedAtMs"],
            1795315422351u64
        );
        assert!(started[0]["extensions"]
            .get("codex.completedAtMs")
            .is_none());
        let done = conv(
            r#"{"method":"item/completed","params":{"item":{"type":"commandExecution","id":"c1","command":"ls","cwd":"/w","status":"completed","exitCode":0,"aggregatedOutput":"","source":"agent","startedAtMs":10,"completedAtMs":25},"threadId":"t","turnId":"u"}}"#,
        );
        assert_eq!(done[0]["event"], "tool_completion");
        assert_eq!(
            (
                done[0]["extensions"]["codex.startedAtMs"].clone(),
                done[0]["extensions"]["codex.completedAtMs"].clone()
            ),
            (json!(10), json!(25))
        );
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

    #[test]
    fn v2_error_with_http_status() {
        let ev = conv(
            r#"{"method":"error","params":{"error":{"message":"boom","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":502}}},"willRetry":true,"threadId":"t","turnId":"u"}}"#,
        );
        assert_eq!(ev[0]["httpStatus"], 502);
        assert_eq!(ev[0]["willRetry"], true);
        assert_eq!(ev[0]["severity"], "warning");
    }

    #[test]
    fn legacy_maps_until_v2_is_seen() {
        let line = r#"{"method":"codex/event/exec_command_output_delta","params":{"id":"1","msg":{"type":"exec_command_output_delta","call_id":"call-1","stream":"stdout","chunk":"Zmlyc3QK"},"conversationId":"thread"}}"#;
        let (ev, cx) = conv_with(line, Sticky::default());
        assert_eq!(ev[0]["event"], "stream_delta");
        assert_eq!(ev[0]["textDelta"], "first\n");
        assert_eq!(cx.session_id.as_deref(), Some("thread"));
        let (ev, _) = conv_with(
            line,
            Sticky {
                codex_v2_seen: true,
                ..Sticky::default()
            },
        );
        assert_eq!(ev[0]["event"], "notice");
        assert_eq!(ev[0]["extensions"]["codex.supersededBy"], "v2");
    }

    #[test]
    fn v2_lines_set_the_sticky_bit() {
        let (_, cx) = conv_with(
            r#"{"method":"turn/started","params":{"threadId":"t","turn":{"id":"u"}}}"#,
            Sticky::default(),
        );
        assert!(cx.sticky.codex_v2_seen);
        // Item lines are read on a path of their own (`item_line`).
        let item = r#"{"method":"item/completed","params":{"threadId":"t","turnId":"u","item":{"type":"agentMessage","id":"i","text":"hi"}}}"#;
        let (ev, cx) = conv_with(item, Sticky::default());
        assert!(cx.sticky.codex_v2_seen);
        assert_eq!(ev[0]["event"], "text");
        let request = item.replacen('{', r#"{"id":3,"#, 1);
        let (_, cx) = conv_with(&request, Sticky::default());
        assert!(!cx.sticky.codex_v2_seen);
    }

    #[test]
    fn bare_proto_envelope() {
        let ev = conv(r#"{"id":"submission-1","msg":{"type":"agent_message","message":"Hello!"}}"#);
        assert_eq!(ev[0]["event"], "text");
        assert_eq!(ev[0]["text"], "Hello!");
    }

    #[test]
    fn acp_initialize_is_not_codex() {
        let probe: Probe = serde_json::from_str(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#).unwrap();
        assert!(!sniff(&probe));
    }

    /// Each event of a line as its JSON text: `serde_json::Value` cannot hold what these
    /// tests feed through.
    fn conv_text(line: &str) -> Vec<(&'static str, String)> {
        // (Converted as with `--from codex`: not every line here is one detection gives Codex.)
        let probe: Probe = serde_json::from_str(line).unwrap();
        let mut cx = Cx::default();
        convert(line, &probe, &mut cx).unwrap();
        cx.events
            .iter()
            .map(|(b, _)| (b.kind(), serde_json::to_string(b).unwrap()))
            .collect()
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
        let input = include_str!("../../fuzz/known/convert_codex-json-lone-surrogate");
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

    /// Converts lines of one stream, in order, with what the converter remembers between
    /// them; each event gets its line's `sessionId` and `line`.
    fn stream(lines: &[&str]) -> Vec<Value> {
        let mut out = Vec::new();
        let mut sticky = Sticky::default();
        let mut memory = None;
        for (i, line) in lines.iter().enumerate() {
            // Bare answers are routed to the provider of the stream, not sniffed.
            let probe: Probe = serde_json::from_str(line).unwrap();
            let mut cx = Cx {
                sticky,
                memory: memory.take(),
                line: i as u64 + 1,
                ..Cx::default()
            };
            convert(line, &probe, &mut cx).unwrap();
            for (b, e) in &cx.events {
                let mut v = serde_json::to_value(b).unwrap();
                v["event"] = Value::from(b.kind());
                v["line"] = Value::from(i + 1);
                v["sessionId"] = Value::from(cx.session_id.as_deref().unwrap_or(""));
                if !e.is_empty() {
                    v["extensions"] = serde_json::to_value(e).unwrap();
                }
                out.push(v);
            }
            sticky = cx.sticky;
            memory = cx.memory.take();
        }
        out
    }

    fn of<'v>(evs: &'v [Value], kind: &str) -> Vec<&'v Value> {
        evs.iter().filter(|e| e["event"] == kind).collect()
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
    fn diffs_of_add_delete_move_and_update_apply_with_git() {
        let add = git_diff("/w/docs/new.md", ChangeKind::Add, None, "# New\nlast");
        assert!(add.contains("@@ -0,0 +1,2 @@\n+# New\n+last\n\\ No newline at end of file\n"));
        let del = git_diff("/w/old.txt", ChangeKind::Delete, None, "remove me\n");
        assert!(del.ends_with("+++ /dev/null\n@@ -1 +0,0 @@\n-remove me\n"));
        let mv = git_diff(
            "/w/src/a.py",
            ChangeKind::Update,
            Some("/w/src/b.py"),
            "@@ -1 +1 @@\n-print(\"old\")\n+print(\"new\")\n\n\nMoved to: /w/src/b.py",
        );
        assert!(mv.contains("+++ b/w/src/b.py\n"));
        assert!(!mv.contains("Moved to"));
        let upd = git_diff(
            "/w/c.txt",
            ChangeKind::Update,
            None,
            "@@ -1,2 +1,2 @@\n n\n-x\n+y\n",
        );
        let pure_move = git_diff("/w/d.txt", ChangeKind::Update, Some("/w/e.txt"), "");
        let empty_add = git_diff("/w/empty", ChangeKind::Add, None, "");
        let git = std::process::Command::new("git").arg("--version").output();
        if !git.is_ok_and(|o| o.status.success()) {
            eprintln!("git is not available: `git apply --check` of the diffs skipped");
            return;
        }
        let dir = std::env::temp_dir().join(format!("insights-codex-diff-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("w/src")).unwrap();
        std::fs::create_dir_all(dir.join("w/docs")).unwrap();
        std::fs::write(dir.join("w/old.txt"), "remove me\n").unwrap();
        std::fs::write(dir.join("w/src/a.py"), "print(\"old\")\n").unwrap();
        std::fs::write(dir.join("w/c.txt"), "n\nx\n").unwrap();
        std::fs::write(dir.join("w/d.txt"), "d\n").unwrap();
        for (name, patch) in [
            ("add", &add),
            ("delete", &del),
            ("move", &mv),
            ("update", &upd),
            ("pure move", &pure_move),
            ("empty add", &empty_add),
        ] {
            let file = dir.join("patch.diff");
            std::fs::write(&file, patch).unwrap();
            let out = std::process::Command::new("git")
                .args(["apply", "--check", "patch.diff"])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "git apply --check rejects the {name} diff:\n{patch}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    const THREAD_START_ANSWER: &str = r#"{"id":2,"result":{"thread":{"id":"th1","cwd":"/w"},"model":"m","approvalPolicy":"untrusted","sandbox":null}}"#;
    const THREAD_STARTED: &str =
        r#"{"method":"thread/started","params":{"thread":{"id":"th1","cwd":"/w"}}}"#;

    #[test]
    fn the_thread_start_answer_and_notification_are_one_announcement() {
        let evs = stream(&[THREAD_START_ANSWER, THREAD_STARTED]);
        assert_eq!(of(&evs, "session_init").len(), 1);
        assert_eq!(evs.last().unwrap()["event"], "notice");
        // Notification first: the answer gives no second init either.
        let evs = stream(&[THREAD_STARTED, THREAD_START_ANSWER]);
        assert_eq!(of(&evs, "session_init").len(), 1);
        // An announcement without an id announces nothing.
        let evs = stream(&[r#"{"type":"thread.started","thread_id":""}"#]);
        assert!(of(&evs, "session_init").is_empty());
    }

    #[test]
    fn exec_lines_name_the_thread_the_stream_announced() {
        let evs = stream(&[
            r#"{"type":"turn.started"}"#,
            r#"{"type":"thread.started","thread_id":"t9"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}"#,
        ]);
        let ids: Vec<&Value> = evs.iter().map(|e| &e["sessionId"]).collect();
        assert_eq!(ids, ["", "t9", "t9", "t9"]);
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
        let kinds: Vec<&Value> = evs.iter().map(|e| &e["event"]).collect();
        assert_eq!(
            kinds,
            ["session_init", "turn_start", "error", "turn_complete"]
        );
        assert_eq!(evs[2]["httpStatus"], 429);
        assert_eq!(evs[3]["isError"], true);
        // A failed turn alone: its error becomes the `error`.
        let evs = stream(&[
            r#"{"method":"turn/completed","params":{"threadId":"a","turn":{"id":"u","status":"failed","error":{"message":"boom","codexErrorInfo":{"responseTooManyFailedAttempts":{"httpStatusCode":429}}}}}}"#,
        ]);
        let kinds: Vec<&Value> = evs.iter().map(|e| &e["event"]).collect();
        assert_eq!(kinds, ["error", "turn_complete"]);
        assert_eq!(evs[0]["httpStatus"], 429);
        assert_eq!(evs[0]["code"], "responseTooManyFailedAttempts");
        assert_eq!(evs[1]["isError"], true);
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
        let turns = of(&evs, "turn_complete");
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
        let turns = of(&evs, "turn_complete");
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
        assert!(of(&evs, "turn_complete")[0].get("usage").is_none());
        assert_eq!(turns[1]["usage"]["outputTokens"], 10);
    }

    #[test]
    fn wire_fields_without_an_event_field_go_to_extensions() {
        let evs = stream(&[
            r#"{"id":2,"result":{"thread":{"id":"a","path":"/h/.codex/sessions/r.jsonl","cwd":"/w","source":"vscode","originator":"o","gitInfo":null},"model":"m","approvalPolicy":"never"}}"#,
            r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"commandExecution","id":"c","command":"ls","cwd":"/w","processId":"70866","source":"agent","status":"inProgress"}}}"#,
            r#"{"method":"account/rateLimits/updated","params":{"rateLimits":{"limitId":"codex","limitName":null,"primary":{"windowMinutes":300},"secondary":null,"credits":null}}}"#,
        ]);
        let init = &of(&evs, "session_init")[0]["extensions"];
        assert_eq!(init["codex.path"], "/h/.codex/sessions/r.jsonl");
        assert_eq!(init["codex.source"], "vscode");
        assert_eq!(init["codex.originator"], "o");
        assert!(init.get("codex.gitInfo").is_none());
        let inv = &of(&evs, "tool_invocation")[0]["extensions"];
        assert_eq!(inv["codex.processId"], "70866");
        assert_eq!(inv["codex.source"], "agent");
        let rl = of(&evs, "rate_limit_update")[0];
        assert_eq!(rl["extensions"]["codex.limitId"], "codex");
        assert!(rl["extensions"].get("codex.limitName").is_none());
        // A window that states no usage has none (not 0%).
        assert_eq!(rl["primary"]["windowDurationMins"], 300);
        assert!(rl["primary"].get("usedPercent").is_none());
    }

    #[test]
    fn cumulative_diffs_name_files_by_absolute_path_as_file_changes_do() {
        let diff = r#"{"method":"turn/diff/updated","params":{"threadId":"a","turnId":"u","diff":"diff --git a/src/old.py b/src/new.py\nindex 1..2\n--- a/src/old.py\n+++ b/src/new.py\n@@ -1 +1 @@\n-a\n+b\n"}}"#;
        let evs = stream(&[
            r#"{"method":"thread/started","params":{"thread":{"id":"a","cwd":"/w/p"}}}"#,
            diff,
        ]);
        let fc = of(&evs, "file_change");
        assert_eq!(fc[0]["path"], "/w/p/src/old.py");
        assert_eq!(fc[0]["movePath"], "/w/p/src/new.py");
        assert_eq!(
            fc[0]["diff"],
            "diff --git a/w/p/src/old.py b/w/p/src/new.py\nindex 1..2\n--- a/w/p/src/old.py\n+++ b/w/p/src/new.py\n@@ -1 +1 @@\n-a\n+b\n"
        );
        assert!(fc[0].get("extensions").is_none());
        // No announcement, no cwd: the wire's relative path, said to be relative.
        let evs = stream(&[diff]);
        let fc = of(&evs, "file_change");
        assert_eq!(fc[0]["path"], "src/old.py");
        assert_eq!(fc[0]["extensions"]["codex.relativeToCwd"], true);
    }

    const FILE_STARTED: &str = r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"fileChange","id":"call_f","status":"inProgress","changes":[{"path":"/w/c.txt","kind":{"type":"update","move_path":null},"diff":"@@ -1 +1 @@\n-a\n+b\n"}]}}}"#;
    const FILE_APPROVAL: &str = r#"{"id":0,"method":"item/fileChange/requestApproval","params":{"threadId":"a","turnId":"u","itemId":"call_f","reason":null,"grantRoot":null}}"#;

    #[test]
    fn a_cancelled_approval_ends_the_call_the_turn_leaves_open() {
        let evs = stream(&[
            FILE_STARTED,
            FILE_APPROVAL,
            r#"{"id":0,"result":{"decision":"cancel"}}"#,
            r#"{"method":"turn/completed","params":{"threadId":"a","turn":{"id":"u","status":"interrupted","error":null}}}"#,
        ]);
        let req = of(&evs, "permission_request")[0];
        assert_eq!(req["toolInput"]["changes"][0]["path"], "/w/c.txt");
        assert_eq!(req["toolInput"]["changes"][0]["kind"], "update");
        // The diff the person is asked to approve, as the item gave it.
        assert_eq!(
            req["toolInput"]["changes"][0]["diff"],
            "@@ -1 +1 @@\n-a\n+b\n"
        );
        let resp = of(&evs, "permission_response")[0];
        assert_eq!(resp["decision"], "cancelled");
        assert_eq!(resp["toolUseId"], "call_f");
        assert_eq!(resp["sessionId"], "a");
        let done = of(&evs, "tool_completion");
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["status"], "cancelled");
        assert_eq!(done[0]["extensions"]["insights.inferred"], true);
        assert_eq!(evs.last().unwrap()["event"], "turn_complete");
    }

    #[test]
    fn a_declined_call_fails_and_a_cancelled_one_is_cancelled() {
        let completed = r#"{"method":"item/completed","params":{"threadId":"a","turnId":"u","item":{"type":"fileChange","id":"call_f","status":"declined","changes":[]}}}"#;
        for (decision, status) in [("decline", "failed"), ("cancel", "cancelled")] {
            let answer = format!(r#"{{"id":0,"result":{{"decision":"{decision}"}}}}"#);
            let evs = stream(&[FILE_STARTED, FILE_APPROVAL, &answer, completed]);
            assert_eq!(
                of(&evs, "tool_completion")[0]["status"],
                status,
                "{decision}"
            );
            assert!(of(&evs, "file_change").is_empty());
        }
    }

    #[test]
    fn dynamic_tool_calls_open_at_the_request_and_keep_their_result() {
        let evs = stream(&[
            r#"{"id":5,"method":"item/tool/call","params":{"threadId":"a","turnId":"u","callId":"dc1","tool":"lookup","arguments":{"q":1}}}"#,
            r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"dynamicToolCall","id":"dc1","tool":"lookup","arguments":{"q":1},"status":"inProgress"}}}"#,
            r#"{"id":5,"result":{"contentItems":[{"type":"inputText","text":"found"}],"success":true}}"#,
            r#"{"method":"item/completed","params":{"threadId":"a","turnId":"u","item":{"type":"dynamicToolCall","id":"dc1","tool":"lookup","arguments":{"q":1},"status":"completed","contentItems":[{"type":"inputText","text":"found"}],"success":true,"durationMs":3}}}"#,
        ]);
        let inv = of(&evs, "tool_invocation");
        assert_eq!(inv.len(), 1);
        assert_eq!(inv[0]["toolName"], "lookup");
        let done = of(&evs, "tool_completion");
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["output"]["contentItems"][0]["text"], "found");
        assert_eq!(done[0]["sessionId"], "a");
        assert_eq!(evs.last().unwrap()["extensions"]["codex.durationMs"], 3);
    }

    #[test]
    fn collab_agent_tool_calls_spawn_and_end_subagents() {
        let evs = stream(&[
            r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"collabAgentToolCall","id":"s1","tool":"spawnAgent","status":"inProgress","senderThreadId":"a","receiverThreadIds":[],"prompt":"go","agentsStates":{}}}}"#,
            r#"{"method":"item/completed","params":{"threadId":"a","turnId":"u","item":{"type":"collabAgentToolCall","id":"s1","tool":"spawnAgent","status":"completed","senderThreadId":"a","receiverThreadIds":["sub"],"prompt":"go","agentsStates":{"sub":{"status":"running"}}}}}"#,
            r#"{"method":"item/completed","params":{"threadId":"a","turnId":"u","item":{"type":"collabAgentToolCall","id":"w1","tool":"wait","status":"completed","senderThreadId":"a","receiverThreadIds":["sub"],"agentsStates":{"sub":{"status":"completed","message":"done"}}}}}"#,
        ]);
        assert_eq!(of(&evs, "subagent_spawn")[0]["callId"], "s1");
        let end = of(&evs, "subagent_complete");
        assert_eq!(end.len(), 1);
        assert_eq!(end[0]["callId"], "s1");
        assert_eq!(end[0]["agentId"], "sub");
        assert_eq!(end[0]["status"], "completed");
    }

    #[test]
    fn mcp_approvals_are_permission_requests_of_the_call() {
        let evs = stream(&[
            r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"mcpToolCall","id":"m1","server":"docs","tool":"find","status":"inProgress","arguments":{}}}}"#,
            r#"{"id":3,"method":"item/mcpToolCall/requestApproval","params":{"threadId":"a","itemId":"m1","reason":"writes"}}"#,
            r#"{"id":3,"result":{"decision":"acceptForSession"}}"#,
        ]);
        let req = of(&evs, "permission_request")[0];
        assert_eq!(req["toolName"], "mcp__docs__find");
        assert_eq!(req["toolUseId"], "m1");
        let resp = of(&evs, "permission_response")[0];
        assert_eq!(resp["decision"], "allow_always");
        assert_eq!(resp["toolUseId"], "m1");
    }

    #[test]
    fn a_resume_answer_records_its_history() {
        let evs = stream(&[
            r#"{"id":2,"result":{"thread":{"id":"th1","turns":[{"id":"t0","status":"completed","items":[{"type":"userMessage","id":"u0","content":[{"type":"text","text":"hi"}]},{"type":"commandExecution","id":"c0","command":"bash -lc 'ls'","status":"completed","exitCode":0,"aggregatedOutput":"a\n","source":"agent"},{"type":"agentMessage","id":"m0","text":"<proposed_plan>\n1. x\n</proposed_plan>"}]}]},"model":"m","approvalPolicy":"never"}}"#,
        ]);
        let kinds: Vec<&Value> = evs.iter().map(|e| &e["event"]).collect();
        assert_eq!(
            kinds,
            [
                "session_init",
                "session_mode",
                "user_input",
                "tool_invocation",
                "tool_completion",
                "text"
            ]
        );
        assert_eq!(evs[3]["title"], "ls");
        assert_eq!(evs[4]["extensions"]["codex.history"], true);
        assert_eq!(evs[4]["extensions"]["codex.turnId"], "t0");
        assert_eq!(evs[5]["text"], "1. x");
    }

    #[test]
    fn legacy_deltas_come_once() {
        let evs = stream(&[
            r#"{"method":"codex/event/agent_message_content_delta","params":{"id":"x","msg":{"type":"agent_message_content_delta","thread_id":"c","turn_id":"t","item_id":"i","delta":"Hel"},"conversationId":"c"}}"#,
            r#"{"method":"codex/event/agent_message_delta","params":{"id":"x","msg":{"type":"agent_message_delta","delta":"Hel"},"conversationId":"c"}}"#,
        ]);
        let deltas = of(&evs, "stream_delta");
        assert_eq!(deltas.len(), 1);
        assert_eq!(deltas[0]["messageId"], "i");
        assert_eq!(evs[1]["event"], "notice");
    }

    #[test]
    fn legacy_patches_give_their_files() {
        let evs = stream(&[
            r#"{"id":"1","msg":{"type":"patch_apply_begin","call_id":"p","changes":{"/w/a":{"add":{"content":"x\n"}},"/w/b":{"update":{"unified_diff":"","move_path":"/w/c"}}}}}"#,
            r#"{"id":"1","msg":{"type":"patch_apply_end","call_id":"p","success":true,"stdout":"","stderr":""}}"#,
        ]);
        let files = of(&evs, "file_change");
        assert_eq!(files.len(), 2);
        assert_eq!(files[0]["changeKind"], "add");
        assert_eq!(files[1]["changeKind"], "move");
        assert_eq!(files[1]["movePath"], "/w/c");
        // The begin's content and hunks become the diffs.
        assert_eq!(
            files[0]["diff"],
            "diff --git a/w/a b/w/a\nnew file mode 100644\n--- /dev/null\n+++ b/w/a\n@@ -0,0 +1 @@\n+x\n"
        );
        assert_eq!(
            files[1]["diff"],
            "diff --git a/w/b b/w/c\nrename from w/b\nrename to w/c\n"
        );
    }
}
