//! Claude Code `--output-format stream-json --verbose` (with `--include-partial-messages`,
//! `--include-hook-events`), and the SDK control protocol of `--input-format stream-json`.
//!
//! Recorded with Claude Code 2.1.197 (`testdata/claude/`, `testdata/claude-sdk/`):
//!
//! | line | events |
//! |---|---|
//! | `system/init` | `session_init` (with the SDK's `initialize` answer, when one came before) |
//! | `system/status` | `session_status` (compacting, requesting, idle), `session_mode` when it carries `permissionMode` |
//! | `system/compact_boundary`, `conversation_reset` | `context_compaction` (`compact_metadata`'s other members as `claude.compactMetadata`) |
//! | `system/hook_*` | `hook` |
//! | `system/task_*` | `task_update` (+ `subagent_complete` for a background subagent's notification) |
//! | `system/api_retry` | `error` (warning, `willRetry`) |
//! | `system/thinking_tokens` | `usage_update` with the estimate in `extensions` |
//! | `system/session_state_changed` | `session_status` |
//! | other `system/*` | `notice` with the data in `extensions` |
//! | `assistant` | per block: `text` (text, thinking), `tool_invocation` (+ `subagent_spawn` for Task/Agent, + `plan_update` for TodoWrite); `error` for API error messages; then `usage_update` |
//! | `user` | `tool_completion` per tool_result (+ `subagent_complete`, + `file_change` for edits; a subagent's answer that is an API error message: `error` first, the subagent `failed`); `user_input` for prompt text |
//! | `result` | `error` for a failure no line stated yet, cancelled completions of the calls a stopped turn left open, then `turn_complete` |
//! | `stream_event` | `stream_delta` |
//! | `control_request` | `permission_request` (can_use_tool), `session_status` interrupted (interrupt), `session_mode` (set_permission_mode), else `notice` |
//! | `control_response` | `permission_response` (a can_use_tool answer), `session_init` (the initialize answer once the session is known; before, kept for the init), `error`, else `notice` |
//! | `control_cancel_request` | `permission_response` decision cancelled (of a can_use_tool), else `notice` |
//! | `rate_limit_event` | `rate_limit_update` |
//! | `tool_progress` | `tool_update` |
//! | other known types | `notice` |
//!
//! Across lines ([`Memory`]): the session the stream named last (for the SDK's lines that name
//! none), the `initialize` answer until the init, control requests until answered or cancelled,
//! tool calls until their result (name, subagent state, a file edit's input), and per session
//! the turn in progress (an interrupt asked for, an error already reported). README's Claude
//! section says what is inferred from them.
//!
//! **Claude Code's own session files** (`~/.claude/projects/<project>/<session>.jsonl`, with
//! subagents in `<session>/subagents/agent-<id>.jsonl`; `testdata/session-files/claude*/`) hold
//! the same `user` and `assistant` lines, named by `sessionId` and with `toolUseResult`, but no
//! `system/init` and no `result`. Read from them, inferred (`insights.inferred`): the
//! `session_init` the first time the stream meets a session (cwd, version, `claude.gitBranch`);
//! `turn_start` at a person's prompt; `turn_complete` after a message that stops for good
//! (`end_turn`, …) once its last block is written (at the next line), failed after an API
//! error message, interrupted at the CLI's interrupt text, without a subtype when a new
//! prompt comes first. A call whose result is "User rejected tool use" was stopped by an
//! interrupt: `cancelled`. A subagent's lines name only their `agentId`: they get the
//! `parentCallId` of the call whose result named that agent when the stream has read it (a
//! directory is read session file first, then its subagents' files in the order they started),
//! else `extensions."claude.agentId"`. The CLI's own user texts (interrupt notices, local
//! command output, caveats) and the lines it adds (`isMeta`, a compaction summary) are
//! synthetic `user_input`, never prompts. The API error
//! message that ends a subagent's file gives no `error` when its call's result stated it.
//!
//! Amp and Qwen Code write the same format with their own tools; `amp.rs` and `qwen.rs` map
//! through [`convert_as`] with a [`Dialect`] and handle only what differs.
//!
//! **Where the code is.** This file: detection, registration, what the converter remembers,
//! the dispatch of a line by its `type`, the content blocks of both directions, and the
//! `result`, `stream_event`, `rate_limit_event` and `tool_progress` lines.
//! [`system`](mod@system) maps `system` lines, [`assistant`](mod@assistant) and
//! [`user`](mod@user) the messages (tool calls and their results), [`control`] the SDK control
//! protocol, and [`session_file`] what only Claude Code's own session files need (the
//! inferred session and turns, and the facts `insights usage` reads).

mod assistant;
mod control;
mod session_file;
mod system;
pub mod talk;
mod user;

use super::memo::Memo;
use super::{Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::members::Line;
use crate::wire::{count, is_null, is_object, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

use assistant::assistant;
use control::{control_cancel, control_request, control_response};
use session_file::{file_after, file_before, FileMeta};
use user::user;

// Paths the Claude-like providers and `insights usage` use.
pub use assistant::tool_kind;
pub(crate) use assistant::{plan_priority, plan_status};
pub(crate) use session_file::{line_facts, line_wanted};
pub(crate) use system::system;
pub(crate) use user::creation_diff;

pub const PROVIDER: Provider = Provider {
    name: "claude",
    display: "Claude Code",
    cc_name: "claude",
    about:
        "Claude Code stream-json (-p --output-format stream-json --verbose), SDK control protocol",
    jsonrpc: false,
    sniff,
    convert,
    reading: super::Reading::PLAIN,
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
        cost: true,
        subagents: true,
        plans: true,
    },
    infers_turns: true,
    whole_messages: false,
    at_end: None,
    talk: Some(&talk::SPEAKER),
};

crate::providers::memo::remember! {
    /// What Claude lines need of earlier lines of the stream.
    pub struct Memory {
        /// The session the stream named last (key `""`), for lines that name none (the SDK's
        /// control lines and prompts).
        pub session: Memo<String>,
        /// Tool calls invoked and not yet ended, by tool_use id; subagent calls also from
        /// their `task_started`.
        pub calls: Memo<Call>,
        /// Control requests not yet answered or cancelled, by request_id.
        pub requests: Memo<Request>,
        /// The turn in progress, by session id (`""` before one is known).
        pub turns: Memo<Turn>,
        /// The SDK's `initialize` answer, until the session is announced (key `""`).
        pub init: Memo<InitAnswer>,
        /// Sessions of Claude Code's own session files announced so far, with their turn.
        pub files: Memo<FileTurn>,
        /// The subagents results named, by session and agent id (a result's `agentId`):
        /// a subagent's own session file names only its agent id.
        pub agents: Memo<Agent>,
        /// The call each task was started for (`task_started`), by task id, until its
        /// notification: later task lines may name the task alone.
        pub tasks: Memo<String>,
        /// In session files: the subagent calls not yet linked to their subagent's file, by
        /// session and the prompt the call gave (see `session_file::prompt_key`). Read in
        /// time order, a subagent's first line comes before the result that names it.
        pub prompts: Memo<String>,
    }
}

/// The memory of a converter that takes up a stream (`reduce --from-state`): the subagent
/// calls its state has running, as (session, call id, tool name, agent id). A call's result
/// then ends its subagent as it does in one pass, where the `tool_use` was remembered (Qwen's
/// `agent` result names no agent: without the call, its subagent would never end).
pub fn resumed_calls<'p>(
    m: &mut super::Memory,
    calls: impl IntoIterator<Item = (&'p str, &'p str, &'p str, Option<&'p str>)>,
) {
    for (session, call, name, agent) in calls {
        let subagent = Subagent {
            agent_id: agent.map(str::to_owned),
            ..Subagent::default()
        };
        let call_memory = Call {
            session: session.to_owned(),
            name: name.to_owned(),
            subagent: Some(subagent),
            edit: None,
        };
        m.claude.calls.insert(call, call_memory, 0);
    }
}

/// A session file's turn, which the file states only through its lines: a person's
/// prompt starts it, an assistant message that stops for good (`end_turn`, …) ends it
/// once its last block is written, an API error or an interrupt ends it.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct FileTurn {
    open: bool,
    /// The message whose stop reason ends the turn, and that reason: the turn ends at the
    /// first line that is not a block of that message (with that line's time).
    ending: Option<(String, String)>,
}

/// A subagent a call's result named, for the lines of its own session file.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Agent {
    /// The call that started it.
    call: String,
    /// The API error its result ended it on, which an `error` stated already.
    api_error: Option<String>,
}

/// A tool call between its `tool_use` and its `tool_result`.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Call {
    /// The session it runs in.
    session: String,
    /// The tool's name (empty when only a `task_started` has named the call).
    name: String,
    /// For Agent/Task calls: what the wire said of the subagent so far.
    subagent: Option<Subagent>,
    /// For Write/Edit/MultiEdit/NotebookEdit: the change the input asks for, for results
    /// that carry none (a subagent's).
    edit: Option<Edit>,
}

#[derive(Clone, PartialEq, Debug, Default)]
struct Subagent {
    /// The agent id (`task_started.task_id`).
    agent_id: Option<String>,
    /// The status a `task_notification` gave.
    status: Option<String>,
    /// The call returned at once (a background agent): the subagent ends with its
    /// `task_notification`.
    launched: bool,
    /// Its key in [`Memory::prompts`], until its subagent's first line takes it.
    prompt_key: Option<String>,
}

#[derive(Clone, PartialEq, Debug)]
struct Edit {
    path: String,
    /// A Write's new content (its diff when the result says it created the file).
    content: Option<String>,
}

/// A control request waiting for its answer.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Request {
    subtype: String,
    tool_use_id: Option<String>,
    tool_name: Option<String>,
}

/// What the wire said of the turn in progress.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Turn {
    /// An interrupt was asked for (an `interrupt` request, a denial with `interrupt`).
    interrupted: bool,
    /// An `error` event already stated the turn's failure.
    error_reported: bool,
}

/// The parts of the SDK's `initialize` answer that go onto the session's init.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct InitAnswer {
    request_id: String,
    commands: Option<Vec<(String, String, String)>>,
    /// Each model object as JSON text.
    models: Option<Vec<String>>,
    account: Option<[Option<String>; 5]>,
    agents: Option<Vec<String>>,
    output_style: Option<String>,
    /// What else it said, as JSON text (`initialize_rest` in `control.rs`).
    rest: Option<String>,
}

/// Top-level `type`s Claude Code writes.
const TYPES: &[&str] = &[
    "system",
    "assistant",
    "user",
    "result",
    "stream_event",
    "control_request",
    "control_response",
    "control_cancel_request",
    "rate_limit_event",
    "tool_progress",
    "tool_use_summary",
    "auth_status",
    "prompt_suggestion",
    "conversation_reset",
    "active_goal",
    "keep_alive",
    // Lines of Claude Code's own session files (~/.claude/projects/…/<session>.jsonl) that
    // carry no message: what it attached to a prompt (skill and agent listings), its prompt
    // queue, the last prompt, file-history snapshots, titles and summaries, and the mode a
    // resumed session starts in (`{"type":"mode","mode":"normal","sessionId":…}`, 2.1.197).
    "attachment",
    "queue-operation",
    "last-prompt",
    "file-history-snapshot",
    "summary",
    "custom-title",
    "mode",
];

fn sniff(p: &Probe) -> bool {
    match p.ty() {
        Some("user" | "assistant") => p.message.is_some(),
        Some("system" | "result") => p.subtype.is_some(),
        Some("stream_event") => p.event.is_some_and(|r| r.is_object()),
        Some(t) => TYPES.contains(&t),
        None => false,
    }
}

/// How a CLI that writes Claude Code's stream-json differs from it (Amp, Qwen Code): the
/// names and inputs of its tools. Everything else maps as for Claude Code, through
/// [`convert_as`].
pub(crate) struct Dialect {
    /// The Claude Code tool that a tool of the CLI corresponds to (`run_shell_command` →
    /// `Bash`), or the name itself; titles, locations, subagents and plans follow from it.
    pub canonical: for<'n> fn(&'n str) -> &'n str,
    /// The ToolKind of a tool name.
    pub tool_kind: fn(&str) -> ToolKind,
    /// A tool result whose text is a JSON object (Amp's Bash: `{"output":…,"exitCode":0}`)
    /// is passed on as that object.
    pub json_results: bool,
}

/// Claude Code itself.
pub(crate) const CLAUDE: Dialect = Dialect {
    canonical: same_name,
    tool_kind,
    json_results: false,
};

/// The session a line of Claude Code's own session files names: `sessionId` there,
/// `session_id` on the wire.
fn file_session<'a>(line: &'a str, probe: &Probe<'a>) -> Option<Str<'a>> {
    #[derive(Deserialize)]
    struct Named<'a> {
        #[serde(rename = "sessionId", borrow)]
        session_id: OptStr<'a>,
    }
    crate::members::read::<Named>(line, probe.members())
        .ok()?
        .session_id
        .0
}

fn same_name(name: &str) -> &str {
    name
}

fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    convert_as(line, probe, cx, &CLAUDE)
}

/// Maps a Claude Code stream-json line, with the tools of dialect `d`.
pub(crate) fn convert_as<'a>(
    line: &'a str,
    probe: &Probe<'a>,
    cx: &mut Cx<'a>,
    d: &Dialect,
) -> Result<(), Unmapped> {
    let wire_session = probe.session_id.and_then(|r| r.str());
    let from_file = wire_session.is_none();
    cx.session_id = wire_session
        .or_else(|| file_session(line, probe))
        .filter(|s| !s.is_empty());
    // Claude Code's own session file: the line names its session as `sessionId`.
    let file = match (from_file, &cx.session_id) {
        (true, Some(_)) => Some(serde_json::from_str::<FileMeta>(line).unwrap_or_default()),
        _ => None,
    };
    track_session(cx, probe.ty().unwrap_or(""), probe.subtype());
    cx.anchor = probe.uuid.and_then(|r| r.str());
    cx.timestamp = probe
        .timestamp
        .and_then(|r| r.str())
        .filter(|t| crate::time::looks_rfc3339(t));
    let ty = probe.ty().unwrap_or("");
    let mut parent = None;
    if let Some(f) = &file {
        // A session file's turns are the file's prompts and endings (`file_before`,
        // `file_after`), not inferred from the first line.
        cx.own_turns = true;
        parent = file_before(f, ty, cx);
    }
    let text = line;
    let line = Line::new(line, probe.members());
    let mapped = match ty {
        "system" => system(line, probe.subtype().unwrap_or(""), cx),
        "assistant" => assistant(line, cx, d, parent.clone()),
        "user" => user(line, cx, d, parent.clone()),
        "result" => result(line, cx),
        "stream_event" => stream_event(line, cx),
        "control_request" => control_request(line, cx, d),
        "control_response" => control_response(line, cx),
        "control_cancel_request" => control_cancel(line, cx),
        "rate_limit_event" => rate_limit(line, cx),
        "tool_progress" => tool_progress(line, cx),
        "conversation_reset" => {
            cx.push(ContextCompaction {
                trigger: CompactionTrigger::Cleared,
                pre_tokens: None,
                post_tokens: None,
                summary: None,
                duration_ms: None,
            });
            Ok(())
        }
        t if TYPES.contains(&t) => notice(line, Cow::Borrowed(t), None, cx),
        t => Err(Unmapped(format!("unknown Claude message type {t:?}"))),
    };
    mapped?;
    if let Some(f) = &file {
        file_after(f, ty, text, parent, cx);
    }
    Ok(())
}

/// Names the line's session: its own `session_id`, else the one the stream named last (the
/// SDK's control lines and prompts name none). `system` and `result` lines update it; an
/// init that names no session announces one the stream has not named.
pub(crate) fn track_session(cx: &mut Cx<'_>, ty: &str, subtype: Option<&str>) {
    let line = cx.line;
    match cx.session_id.clone() {
        Some(sid) => {
            if matches!(ty, "system" | "result") {
                let m = &mut cx.memory().claude.session;
                if m.get("").map(String::as_str) != Some(&*sid) {
                    m.insert("", sid.into_owned(), line);
                }
            }
        }
        None if ty == "system" && subtype == Some("init") => {}
        None => {
            if let Some(s) = cx.memory().claude.session.get("") {
                cx.session_id = Some(Cow::Owned(s.clone()));
            }
        }
    }
}

/// The key of the line's session in the memos (`""` before the stream names one).
fn session_key(cx: &Cx<'_>) -> String {
    cx.session_id.as_deref().unwrap_or("").to_owned()
}

/// The turn in progress of the line's session, to change.
fn turn_mut<'m>(cx: &'m mut Cx<'_>) -> &'m mut Turn {
    let key = session_key(cx);
    let line = cx.line;
    let turns = &mut cx.memory().claude.turns;
    if !turns.contains(&key) {
        turns.insert(&key, Turn::default(), line);
    }
    turns.get_mut(&key).expect("just inserted")
}

/// Whether an interrupt was asked for in the line's turn.
fn interrupted(cx: &mut Cx<'_>) -> bool {
    let key = session_key(cx);
    cx.memory()
        .claude
        .turns
        .get(&key)
        .is_some_and(|t| t.interrupted)
}

/// A `notice` carrying every member of the line but the envelope in `extensions`.
fn notice<'a>(
    line: Line<'a, '_>,
    subtype: Str<'a>,
    message: Option<Str<'a>>,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let all: Pairs<&RawValue> = line.read()?;
    let ext = cx.push(Notice { subtype, message });
    for (k, v) in all.0 {
        if !matches!(&*k, "type" | "subtype" | "uuid" | "session_id") {
            ext.put(k, v);
        }
    }
    Ok(())
}

/// A content block of either direction; which members are set depends on `type`.
#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    ty: Str<'a>,
    text: OptStr<'a>,
    thinking: OptStr<'a>,
    /// A thinking block's signature.
    signature: OptStr<'a>,
    id: OptStr<'a>,
    name: OptStr<'a>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    tool_use_id: OptStr<'a>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    is_error: Option<bool>,
    #[serde(borrow)]
    source: Option<ImageSource<'a>>,
}

#[derive(Deserialize)]
struct ImageSource<'a> {
    #[serde(borrow)]
    media_type: OptStr<'a>,
    data: OptStr<'a>,
    url: OptStr<'a>,
}

// ---------------------------------------------------------------------------------------------
// result

#[derive(Deserialize)]
struct ResultLine<'a> {
    subtype: OptStr<'a>,
    is_error: Option<bool>,
    duration_ms: Option<Count>,
    duration_api_ms: Option<Count>,
    num_turns: Option<Count>,
    result: OptStr<'a>,
    stop_reason: OptStr<'a>,
    total_cost_usd: Option<f64>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    ttft_ms: Option<Count>,
    ttft_stream_ms: Option<Count>,
    time_to_request_ms: Option<Count>,
    fast_mode_state: OptStr<'a>,
    #[serde(rename = "modelUsage", borrow)]
    model_usage: Option<Pairs<'a, WireModelUsage>>,
    #[serde(borrow)]
    permission_denials: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    errors: Option<Vec<Str<'a>>>,
    terminal_reason: OptStr<'a>,
    api_error_status: Option<Count>,
    #[serde(borrow)]
    deferred_tool_use: Option<&'a RawValue>,
    /// Amp's and Qwen Code's error (Claude's is `errors`): their modules put it on the turn.
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow)]
    structured_output: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct WireUsage<'a> {
    input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    cache_read_input_tokens: Option<Count>,
    cache_creation_input_tokens: Option<Count>,
    /// The cache writes by how long they last.
    cache_creation: Option<CacheCreation>,
    /// `fast` for fast mode, billed at its own price.
    #[serde(borrow)]
    speed: OptStr<'a>,
}

#[derive(Deserialize)]
struct CacheCreation {
    ephemeral_1h_input_tokens: Option<Count>,
}

impl WireUsage<'_> {
    fn tokens(&self) -> crate::usage::Tokens {
        crate::usage::Tokens {
            input: count(self.input_tokens).unwrap_or(0),
            output: count(self.output_tokens).unwrap_or(0),
            cache_read: count(self.cache_read_input_tokens).unwrap_or(0),
            cache_creation: count(self.cache_creation_input_tokens).unwrap_or(0),
            cache_creation_1h: self
                .cache_creation
                .as_ref()
                .and_then(|c| count(c.ephemeral_1h_input_tokens))
                .unwrap_or(0),
            reasoning: 0,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireModelUsage {
    input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    cache_read_input_tokens: Option<Count>,
    cache_creation_input_tokens: Option<Count>,
    web_search_requests: Option<Count>,
    #[serde(rename = "costUSD")]
    cost_usd: Option<f64>,
    context_window: Option<Count>,
    max_output_tokens: Option<Count>,
}

fn result<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ResultLine = line.read()?;
    // The wire's usage says more than the event's (`server_tool_use`, `service_tier`,
    // `cache_creation`, `speed`, …): it is kept whole as `claude.usage`.
    let wire_usage = w.usage.filter(|u| !is_null(u));
    let parsed: Option<WireUsage> = wire_usage
        .map(|u| serde_json::from_str(u.get()))
        .transpose()?;
    let usage = parsed.map(|u| TokenUsage {
        input_tokens: count(u.input_tokens).unwrap_or(0),
        output_tokens: count(u.output_tokens).unwrap_or(0),
        cache_read_tokens: count(u.cache_read_input_tokens),
        cache_creation_tokens: count(u.cache_creation_input_tokens),
        reasoning_tokens: None,
    });
    let model_usage = w.model_usage.map(|m| {
        Pairs(
            m.0.into_iter()
                .map(|(model, u)| {
                    let mu = ModelTokenUsage {
                        tokens: TokenUsage {
                            input_tokens: count(u.input_tokens).unwrap_or(0),
                            output_tokens: count(u.output_tokens).unwrap_or(0),
                            cache_read_tokens: count(u.cache_read_input_tokens),
                            cache_creation_tokens: count(u.cache_creation_input_tokens),
                            reasoning_tokens: None,
                        },
                        cost_usd: u.cost_usd,
                        context_window: count(u.context_window),
                        web_search_requests: count(u.web_search_requests),
                        max_output_tokens: count(u.max_output_tokens),
                    };
                    (model, mu)
                })
                .collect(),
        )
    });
    let is_error = w.is_error.unwrap_or(false);
    let key = session_key(cx);
    let turn = cx.memory().claude.turns.remove(&key).unwrap_or_default();
    // The turn was stopped: an interrupt was asked for and the turn did not end normally,
    // or the CLI says it aborted.
    let aborted = w
        .terminal_reason
        .as_deref()
        .is_some_and(|r| r.starts_with("aborted"));
    let stopped = aborted || (turn.interrupted && is_error);
    if stopped {
        end_open_calls(cx, &key);
    } else if is_error && !turn.error_reported && w.error.is_none() {
        // A failure no earlier line stated: say it before the turn ends.
        let message = match (&w.errors, &w.result.0) {
            (Some(e), _) if !e.is_empty() => Cow::Owned(e.join("; ")),
            (_, Some(r)) if !r.is_empty() => r.clone(),
            _ => w
                .subtype
                .0
                .clone()
                .unwrap_or(Cow::Borrowed("the turn failed")),
        };
        cx.push(ErrorEvent {
            message,
            severity: Severity::Error,
            code: w.subtype.0.clone().filter(|s| s != "success"),
            http_status: count(w.api_error_status),
            will_retry: Some(false),
            attempt: None,
            max_retries: None,
            retry_delay_ms: None,
            request_id: None,
            parent_call_id: None,
        });
    }
    let (stop_reason, wire_stop) = if stopped {
        (Some(Cow::Borrowed("interrupted")), w.stop_reason.0)
    } else {
        (w.stop_reason.0, None)
    };
    let ext = cx.push(TurnComplete {
        is_error,
        subtype: w.subtype.0,
        errors: w.errors.filter(|e| !e.is_empty()),
        result: w.result.0,
        cost_usd: w.total_cost_usd,
        duration_ms: count(w.duration_ms),
        duration_api_ms: count(w.duration_api_ms),
        num_turns: count(w.num_turns),
        usage,
        model_usage,
        permission_denials: w.permission_denials.map(|v| {
            v.into_iter()
                .filter(|d| is_object(d))
                .map(Json::Raw)
                .collect()
        }),
        stop_reason,
    });
    ext.put_opt("claude.stopReason", wire_stop);
    ext.put_opt("claude.terminalReason", w.terminal_reason.0);
    ext.put_opt("claude.ttftMs", count(w.ttft_ms));
    ext.put_opt("claude.ttftStreamMs", count(w.ttft_stream_ms));
    ext.put_opt("claude.timeToRequestMs", count(w.time_to_request_ms));
    ext.put_opt("claude.fastModeState", w.fast_mode_state.0);
    ext.put_opt("claude.usage", wire_usage);
    ext.put_opt("claude.apiErrorStatus", count(w.api_error_status));
    ext.put_opt(
        "claude.deferredToolUse",
        w.deferred_tool_use.filter(|d| !is_null(d)),
    );
    ext.put_opt(
        "claude.structuredOutput",
        w.structured_output.filter(|d| !is_null(d)),
    );
    Ok(())
}

/// Ends the calls of `session` that a stopped turn left open: `cancelled`, and inferred (the
/// wire never ends them). Background subagents already launched run on.
fn end_open_calls(cx: &mut Cx<'_>, session: &str) {
    let session = session.to_owned();
    let open = cx.memory().claude.calls.take_where(move |_, c| {
        c.session == session
            && !c.name.is_empty()
            && !c.subagent.as_ref().is_some_and(|s| s.launched)
    });
    for (id, c) in open {
        let id: Str<'static> = Cow::Owned(id);
        let ext = cx.push(ToolCompletion::cancelled(id.clone()));
        ext.put("insights.inferred", true);
        if let Some(sub) = c.subagent {
            let ext = cx.push(SubagentComplete {
                call_id: id,
                agent_id: sub.agent_id.map(Cow::Owned),
                status: Some(Cow::Borrowed("cancelled")),
                summary: None,
                duration_ms: None,
                total_tokens: None,
                tool_use_count: None,
                parent_call_id: None,
            });
            ext.put("insights.inferred", true);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// stream_event

#[derive(Deserialize)]
struct StreamLine<'a> {
    #[serde(borrow)]
    event: StreamEvent<'a>,
    parent_tool_use_id: OptStr<'a>,
    ttft_ms: Option<Count>,
}

#[derive(Deserialize)]
struct StreamEvent<'a> {
    #[serde(rename = "type", borrow)]
    ty: Str<'a>,
    index: Option<Count>,
    #[serde(borrow)]
    content_block: Option<StreamBlock<'a>>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    message: Option<StreamMessage<'a>>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct StreamBlock<'a> {
    #[serde(rename = "type", borrow)]
    ty: Str<'a>,
    id: OptStr<'a>,
    name: OptStr<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type")]
    ty: OptStr<'a>,
    text: OptStr<'a>,
    thinking: OptStr<'a>,
    partial_json: OptStr<'a>,
    signature: OptStr<'a>,
    #[serde(borrow)]
    citation: Option<&'a RawValue>,
    stop_reason: OptStr<'a>,
}

#[derive(Deserialize)]
struct StreamMessage<'a> {
    #[serde(borrow)]
    id: OptStr<'a>,
    model: OptStr<'a>,
}

fn stream_event<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: StreamLine = line.read()?;
    let ev = w.event;
    let delta = |kind| StreamDelta {
        kind,
        parent_call_id: w.parent_tool_use_id.0.clone(),
        text_delta: None,
        json_delta: None,
        block_index: count(ev.index),
        call_id: None,
        message_id: None,
    };
    match &*ev.ty {
        "message_start" => {
            let mut d = delta(StreamDeltaKind::MessageStart);
            let msg = ev.message;
            d.message_id = msg.as_ref().and_then(|m| m.id.0.clone());
            let ext = cx.push(d);
            ext.put_opt("claude.model", msg.and_then(|m| m.model.0));
            ext.put_opt("claude.ttftMs", count(w.ttft_ms));
        }
        "content_block_start" => {
            let mut d = delta(StreamDeltaKind::BlockStart);
            let block = ev.content_block;
            let is_tool = block.as_ref().is_some_and(|b| b.ty.ends_with("tool_use"));
            if is_tool {
                d.call_id = block.as_ref().and_then(|b| b.id.0.clone());
            }
            let ext = cx.push(d);
            if let Some(b) = block {
                if is_tool {
                    ext.put_opt("tool_name", b.name.0);
                }
                ext.put("block_type", b.ty);
            }
        }
        "content_block_delta" => {
            let Some(dl) = ev.delta else {
                return Err(Unmapped("content_block_delta without a delta".into()));
            };
            match dl.ty.as_deref() {
                Some("text_delta") => {
                    let mut d = delta(StreamDeltaKind::Text);
                    d.text_delta = Some(dl.text.0.unwrap_or_default());
                    cx.push(d);
                }
                Some("thinking_delta") => {
                    let mut d = delta(StreamDeltaKind::Thinking);
                    d.text_delta = Some(dl.thinking.0.unwrap_or_default());
                    cx.push(d);
                }
                Some("input_json_delta") => {
                    let mut d = delta(StreamDeltaKind::ToolInput);
                    d.json_delta = Some(dl.partial_json.0.unwrap_or_default());
                    cx.push(d);
                }
                Some("signature_delta") => {
                    let ext = cx.push(delta(StreamDeltaKind::Thinking));
                    ext.put_opt("claude.signatureDelta", dl.signature.0);
                }
                Some("citations_delta") => {
                    let ext = cx.push(delta(StreamDeltaKind::Text));
                    ext.put_opt("claude.citation", dl.citation);
                }
                other => {
                    return Err(Unmapped(format!(
                        "unknown content_block_delta type {:?}",
                        other.unwrap_or("")
                    )))
                }
            }
        }
        "content_block_stop" => {
            cx.push(delta(StreamDeltaKind::BlockStop));
        }
        "message_delta" => {
            let ext = cx.push(delta(StreamDeltaKind::MessageStop));
            ext.put_opt("claude.stopReason", ev.delta.and_then(|d| d.stop_reason.0));
            ext.put_opt("claude.usage", ev.usage.filter(|u| is_object(u)));
        }
        "message_stop" => {
            cx.push(delta(StreamDeltaKind::MessageStop));
        }
        other => {
            return Err(Unmapped(format!("unknown stream event type {other:?}")));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// rate limits, progress

#[derive(Deserialize)]
struct RateLimitLine<'a> {
    #[serde(borrow)]
    rate_limit_info: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RateLimitInfo<'a> {
    #[serde(borrow)]
    status: OptStr<'a>,
    resets_at: Option<Count>,
    rate_limit_type: OptStr<'a>,
    utilization: Option<f64>,
}

fn rate_limit<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: RateLimitLine = line.read()?;
    let info_raw = w.rate_limit_info.filter(|i| is_object(i));
    let info: Option<RateLimitInfo> = match info_raw {
        Some(r) => Some(serde_json::from_str(r.get())?),
        None => None,
    };
    let mut ev = RateLimitUpdate::default();
    if let Some(info) = info {
        let window = |mins| RateLimitWindow {
            // Claude reports utilization as a fraction of the limit.
            used_percent: info
                .utilization
                .map(|u| if u <= 1.0 { u * 100.0 } else { u })
                .map(|p| p.max(0.0).round() as u64),
            window_duration_mins: mins,
            resets_at: count(info.resets_at),
        };
        match info.rate_limit_type.as_deref() {
            Some("five_hour") => ev.primary = Some(window(Some(300))),
            Some(t) if t.starts_with("seven_day") => ev.secondary = Some(window(Some(10080))),
            _ if info.utilization.is_some() || info.resets_at.is_some() => {
                ev.primary = Some(window(None))
            }
            _ => {}
        }
        ev.status = info.status.0;
        ev.rate_limit_type = info.rate_limit_type.0;
    }
    let ext = cx.push(ev);
    ext.put_opt("claude.rateLimitInfo", info_raw);
    Ok(())
}

#[derive(Deserialize)]
struct ToolProgress<'a> {
    #[serde(borrow)]
    tool_use_id: OptStr<'a>,
    tool_name: OptStr<'a>,
    parent_tool_use_id: OptStr<'a>,
    elapsed_time_seconds: Option<f64>,
    task_id: OptStr<'a>,
}

fn tool_progress<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ToolProgress = line.read()?;
    let ext = cx.push(ToolUpdate {
        kind: None,
        call_id: w.tool_use_id.0.unwrap_or_default(),
        status: Some(Cow::Borrowed("running")),
        tool_name: w.tool_name.0,
        output: None,
        elapsed_ms: w
            .elapsed_time_seconds
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| (s * 1000.0).round() as u64),
        parent_call_id: w.parent_tool_use_id.0,
        title: None,
        input: None,
        locations: None,
    });
    ext.put_opt("claude.taskId", w.task_id.0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{self, of_kind};
    use serde_json::Value;

    /// One line's events; the line must be one detection takes for Claude.
    pub(super) fn conv(line: &str) -> Vec<Value> {
        test_support::convert_sniffed(&PROVIDER, line)
    }

    /// Converts lines of one stream, with one memory, and returns all their events.
    pub(super) fn stream(lines: &[&str]) -> Vec<Value> {
        test_support::convert_stream(&PROVIDER, lines)
    }

    pub(super) const INIT: &str =
        r#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}"#;

    #[test]
    fn a_resumed_session_file_s_mode_line_is_a_notice_of_its_session() {
        // Claude Code 2.1.197 writes it when `--resume` opens a session file.
        let ev = conv(r#"{"type":"mode","mode":"normal","sessionId":"s1"}"#);
        let notice = of_kind(&ev, "notice");
        assert_eq!(notice.len(), 1, "{ev:?}");
        assert_eq!(notice[0]["subtype"], "mode");
        assert_eq!(notice[0]["sessionId"], "s1");
    }

    #[test]
    fn wire_fields_without_an_event_field_go_to_extensions() {
        // Lines of claude/edit-file.jsonl, cut down.
        let ev = conv(
            r#"{"type":"system","subtype":"init","session_id":"s","memory_paths":{"auto":"/m/"},"analytics_disabled":true,"product_feedback_disabled":true}"#,
        );
        let x = &ev[0]["extensions"];
        assert_eq!(x["claude.memoryPaths"]["auto"], "/m/");
        assert_eq!(x["claude.analyticsDisabled"], true);
        assert_eq!(x["claude.productFeedbackDisabled"], true);
        let ev = conv(
            r#"{"type":"assistant","message":{"id":"m","model":"c","content":[{"type":"thinking","thinking":"t","signature":"sig"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}},"session_id":"s","request_id":"req_1"}"#,
        );
        assert_eq!(ev[0]["extensions"]["claude.signature"], "sig");
        assert_eq!(ev[1]["event"], "usage_update");
        assert_eq!(ev[1]["extensions"]["claude.requestId"], "req_1");
        assert_eq!(ev[1]["extensions"]["claude.stopReason"], "end_turn");
        let ev = conv(
            r#"{"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"x"},"decision_reason_type":"subcommandResults","tool_use_id":"t"}}"#,
        );
        assert_eq!(
            ev[0]["extensions"]["claude.decisionReasonType"],
            "subcommandResults"
        );
        let ev = conv(
            r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":9,"ttft_ms":69,"ttft_stream_ms":58,"time_to_request_ms":51,"session_id":"s","fast_mode_state":"off","usage":{"input_tokens":1,"output_tokens":2,"service_tier":"standard","speed":"standard"}}"#,
        );
        let x = &ev[0]["extensions"];
        assert_eq!(ev[0]["usage"]["outputTokens"], 2);
        assert_eq!(x["claude.ttftMs"], 69);
        assert_eq!(x["claude.ttftStreamMs"], 58);
        assert_eq!(x["claude.timeToRequestMs"], 51);
        assert_eq!(x["claude.fastModeState"], "off");
        assert_eq!(x["claude.usage"]["service_tier"], "standard");
    }

    #[test]
    fn rate_limit_event_windows() {
        let ev = conv(
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1790000000,"rateLimitType":"five_hour","utilization":0.8}}"#,
        );
        assert_eq!(ev[0]["event"], "rate_limit_update");
        assert_eq!(ev[0]["primary"]["usedPercent"], 80);
        assert_eq!(ev[0]["primary"]["windowDurationMins"], 300);
        assert_eq!(ev[0]["status"], "allowed_warning");
        let ev = conv(r#"{"type":"rate_limit_event","rate_limit_info":{}}"#);
        assert_eq!(ev[0]["event"], "rate_limit_update");
    }

    #[test]
    fn tool_progress_is_tool_update() {
        let ev = conv(
            r#"{"type":"tool_progress","tool_use_id":"t","tool_name":"Bash","parent_tool_use_id":null,"elapsed_time_seconds":1.5}"#,
        );
        assert_eq!(ev[0]["event"], "tool_update");
        assert_eq!(ev[0]["elapsedMs"], 1500);
    }

    #[test]
    fn unknown_stream_delta_is_unmapped() {
        let line = r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"future_delta"}}}"#;
        let probe: Probe = serde_json::from_str(line).unwrap();
        let mut cx = Cx::default();
        assert!(convert(line, &probe, &mut cx).is_err());
    }

    #[test]
    fn wrong_field_type_is_unmapped_not_a_panic() {
        let line = r#"{"type":"assistant","message":{"content":"not blocks"}}"#;
        let probe: Probe = serde_json::from_str(line).unwrap();
        let mut cx = Cx::default();
        assert!(convert(line, &probe, &mut cx).is_err());
        assert!(cx.events.is_empty());
    }

    #[test]
    fn a_failed_turn_states_its_error_once_then_ends() {
        // The CLI's synthetic message says it: no second error at the result.
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: Request rejected (429) · rate limited"}]},"error":"rate_limit","session_id":"s1"}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429)","session_id":"s1"}"#,
        ]);
        let errors = of_kind(&ev, "error");
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0]["httpStatus"], 429);
        assert_eq!(errors[0]["code"], "rate_limit");
        assert_eq!(ev.last().unwrap()["event"], "turn_complete");
        assert_eq!(ev.last().unwrap()["isError"], true);
        // Nothing said it before the result: the result's error comes first.
        let ev = stream(&[
            INIT,
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["too many turns"],"session_id":"s1"}"#,
        ]);
        assert_eq!(ev[1]["event"], "error");
        assert_eq!(ev[1]["message"], "too many turns");
        assert_eq!(ev[1]["code"], "error_max_turns");
        assert_eq!(ev[2]["event"], "turn_complete");
    }

    #[test]
    fn an_interrupt_cancels_what_it_stops_and_ends_the_turn_cancelled() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 30"}},{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/a"}}]},"session_id":"s1"}"#,
            r#"{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}"#,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"r1"}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"rejected"}]},"tool_use_result":"User rejected tool use","session_id":"s1"}"#,
            r#"{"type":"result","subtype":"error_during_execution","is_error":true,"stop_reason":"tool_use","session_id":"s1"}"#,
        ]);
        let done = of_kind(&ev, "tool_completion");
        assert_eq!(done[0]["callId"], "t1");
        assert_eq!(done[0]["status"], "cancelled");
        // t2 never ended on the wire: ended by the stopped turn, inferred.
        assert_eq!(done[1]["callId"], "t2");
        assert_eq!(done[1]["status"], "cancelled");
        assert_eq!(done[1]["extensions"]["insights.inferred"], true);
        let tc = of_kind(&ev, "turn_complete")[0];
        assert_eq!(tc["stopReason"], "interrupted");
        assert_eq!(tc["extensions"]["claude.stopReason"], "tool_use");
        assert!(of_kind(&ev, "error").is_empty());
        // The control lines name the session the stream named.
        assert_eq!(of_kind(&ev, "session_status")[0]["sessionId"], "s1");
        assert_eq!(
            of_kind(&ev, "notice")[0]["extensions"]["claude.requestSubtype"],
            "interrupt"
        );
    }

    #[test]
    fn a_rejected_limit_without_utilization_states_no_percentage() {
        let ev = conv(
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1790000000,"rateLimitType":"five_hour"}}"#,
        );
        assert_eq!(ev[0]["status"], "rejected");
        assert!(ev[0]["primary"].get("usedPercent").is_none());
        assert_eq!(ev[0]["primary"]["resetsAt"], 1790000000);
    }

    #[test]
    fn deferred_tool_use_is_kept() {
        let ev = conv(
            r#"{"type":"result","subtype":"success","is_error":false,"deferred_tool_use":{"id":"t1","name":"Bash","input":{"command":"ls"}}}"#,
        );
        assert_eq!(
            ev[0]["extensions"]["claude.deferredToolUse"]["name"],
            "Bash"
        );
    }

    #[test]
    fn conversation_reset_is_cleared_compaction() {
        let ev = conv(r#"{"type":"conversation_reset"}"#);
        assert_eq!(ev[0]["trigger"], "cleared");
    }
}
