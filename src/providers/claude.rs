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
//! | `user` | `tool_completion` per tool_result (+ `subagent_complete`, + `file_change` for edits); `user_input` for prompt text |
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
//! directory is read session file first), else `extensions."claude.agentId"`.
//!
//! Amp and Qwen Code write the same format with their own tools; `amp.rs` and `qwen.rs` map
//! through [`convert_as`] with a [`Dialect`] and handle only what differs.

use super::memo::Memo;
use super::{split_mcp, sub, Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::members::Line;
use crate::wire::{count, is_null, is_object, raw_str, Count};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

pub const PROVIDER: Provider = Provider {
    name: "claude",
    about:
        "Claude Code stream-json (-p --output-format stream-json --verbose), SDK control protocol",
    jsonrpc: false,
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
        cost: true,
        subagents: true,
        plans: true,
    },
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
        /// The call that started a subagent, by session and agent id (a result's
        /// `agentId`): a subagent's own session file names only its agent id.
        pub agents: Memo<String>,
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
    // queue, the last prompt, file-history snapshots, titles and summaries.
    "attachment",
    "queue-operation",
    "last-prompt",
    "file-history-snapshot",
    "summary",
    "custom-title",
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
        #[serde(
            rename = "sessionId",
            borrow,
            default,
            deserialize_with = "crate::wire::opt_str"
        )]
        session_id: Option<Str<'a>>,
    }
    crate::members::read::<Named>(line, probe.members())
        .ok()?
        .session_id
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

/// What a session file's line says beyond the wire's members.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct FileMeta<'a> {
    is_sidechain: Option<bool>,
    is_meta: Option<bool>,
    is_compact_summary: Option<bool>,
    is_api_error_message: Option<bool>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    agent_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cwd: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    version: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    git_branch: Option<Str<'a>>,
    #[serde(borrow, default)]
    message: Option<FileMessage<'a>>,
    #[serde(borrow, default)]
    tool_use_result: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct FileMessage<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stop_reason: Option<Str<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
}

impl FileMeta<'_> {
    fn sidechain(&self) -> bool {
        self.is_sidechain.unwrap_or(false)
    }

    /// A prompt a person wrote: a user line of text, not a tool's result, not one the CLI
    /// adds (`isMeta`, a compaction summary). Interrupt texts count: they end the turn.
    fn prompt(&self) -> bool {
        let Some(c) = self.message.as_ref().and_then(|m| m.content) else {
            return false;
        };
        let c = c.get();
        let text = c.starts_with('"') || (c.starts_with('[') && !c.contains(r#""tool_result""#));
        text && !self.is_meta.unwrap_or(false) && !self.is_compact_summary.unwrap_or(false)
    }

    /// A call's result that says the person stopped it (`toolUseResult` "User rejected tool
    /// use", written when an interrupt stops a running call; a denied permission says "Error:
    /// The user denied this tool use.").
    fn rejected_by_user(&self) -> bool {
        self.tool_use_result
            .is_some_and(|r| r.get() == r#""User rejected tool use""#)
    }

    fn interrupt(&self) -> bool {
        let Some(c) = self.message.as_ref().and_then(|m| m.content) else {
            return false;
        };
        INTERRUPT_TEXTS.iter().any(|t| c.get().contains(t))
    }
}

/// Stop reasons after which the model waits for the person.
const TURN_ENDS: &[&str] = &["end_turn", "stop_sequence", "max_tokens", "refusal"];

/// Before a session file's line is mapped: the session's announcement the first time the
/// stream meets it, the end of a turn whose last message is complete, a new turn at a
/// person's prompt. Returns the call a subagent's line belongs to, where the stream has
/// seen the result that names the subagent.
fn file_before<'a>(f: &FileMeta<'a>, ty: &str, cx: &mut Cx<'a>) -> Option<Str<'a>> {
    let key = session_key(cx);
    let line = cx.line;
    if !cx.memory().claude.files.contains(&key) {
        cx.memory()
            .claude
            .files
            .insert(&key, FileTurn::default(), line);
        let ext = cx.push(SessionInit {
            cwd: f.cwd.clone(),
            version: f.version.clone(),
            ..SessionInit::default()
        });
        ext.put_opt("claude.gitBranch", f.git_branch.clone());
        ext.put("insights.inferred", true);
    }
    if f.rejected_by_user() {
        // The file's trace of an interrupt during a call (the stream has the `interrupt`
        // request): the call was stopped, as `interrupted` reads it.
        turn_mut(cx).interrupted = true;
    }
    if f.sidechain() {
        let id = f.agent_id.as_deref()?;
        let key = agent_key(&key, id);
        return cx.memory().claude.agents.get(&key).cloned().map(Cow::Owned);
    }
    let turn = cx
        .memory()
        .claude
        .files
        .get(&key)
        .cloned()
        .unwrap_or_default();
    if let Some((msg, reason)) = &turn.ending {
        let same = ty == "assistant"
            && f.message.as_ref().and_then(|m| m.id.as_deref()) == Some(msg.as_str());
        if !same {
            let ext = cx.push(TurnComplete {
                subtype: Some(Cow::Borrowed("success")),
                stop_reason: Some(Cow::Owned(reason.clone())),
                ..TurnComplete::default()
            });
            ext.put("insights.inferred", true);
            set_file_turn(cx, &key, FileTurn::default());
        }
    }
    if ty == "user" && f.prompt() && !f.interrupt() {
        if cx.memory().claude.files.get(&key).is_some_and(|t| t.open) {
            // The file says nothing of how the turn before ended.
            let ext = cx.push(TurnComplete::default());
            ext.put("insights.inferred", true);
        }
        let ext = cx.push(TurnStart { model: None });
        ext.put("insights.inferred", true);
        set_file_turn(
            cx,
            &key,
            FileTurn {
                open: true,
                ending: None,
            },
        );
    }
    None
}

/// After a session file's line is mapped: an interrupt or an API error ends the turn; a
/// message that stops for good ends it once its last block is written; a result that
/// names a subagent links the subagent's own file to the call.
fn file_after<'a>(
    f: &FileMeta<'a>,
    ty: &str,
    text: &'a str,
    parent: Option<Str<'a>>,
    cx: &mut Cx<'a>,
) {
    if f.sidechain() && parent.is_none() {
        for (_, ext) in cx.events.iter_mut() {
            ext.put_opt("claude.agentId", f.agent_id.clone());
        }
    }
    if ty == "user" {
        link_subagents(text, cx);
    }
    if f.sidechain() {
        return;
    }
    let key = session_key(cx);
    if ty == "user" && f.prompt() && f.interrupt() {
        // As the wire's result says of an interrupted turn.
        let ext = cx.push(TurnComplete {
            is_error: true,
            subtype: Some(Cow::Borrowed("interrupted")),
            stop_reason: Some(Cow::Borrowed("interrupted")),
            ..TurnComplete::default()
        });
        ext.put("insights.inferred", true);
        set_file_turn(cx, &key, FileTurn::default());
    } else if ty == "assistant" && f.is_api_error_message.unwrap_or(false) {
        let ext = cx.push(TurnComplete {
            is_error: true,
            subtype: Some(Cow::Borrowed("error")),
            ..TurnComplete::default()
        });
        ext.put("insights.inferred", true);
        set_file_turn(cx, &key, FileTurn::default());
    } else if ty == "assistant" {
        let m = f.message.as_ref();
        let reason = m.and_then(|m| m.stop_reason.as_deref());
        if let (Some(id), Some(r)) = (m.and_then(|m| m.id.as_deref()), reason) {
            if TURN_ENDS.contains(&r) {
                set_file_turn(
                    cx,
                    &key,
                    FileTurn {
                        open: true,
                        ending: Some((id.to_owned(), r.to_owned())),
                    },
                );
            }
        }
    }
}

fn set_file_turn(cx: &mut Cx<'_>, key: &str, t: FileTurn) {
    let line = cx.line;
    if !t.open {
        // What the stream's turn state said (an interrupt) ends with the turn.
        cx.memory().claude.turns.remove(key);
    }
    let files = &mut cx.memory().claude.files;
    if files.get(key) != Some(&t) {
        files.insert(key, t, line);
    }
}

/// Remembers the call of each subagent a tool result names (`toolUseResult.agentId`).
fn link_subagents<'a>(text: &'a str, cx: &mut Cx<'a>) {
    if !text.contains(r#""agentId""#) {
        return;
    }
    let line = cx.line;
    let links: Vec<(String, String)> = cx
        .events
        .iter()
        .filter_map(|(b, _)| match b {
            Body::SubagentComplete(s) => {
                Some((s.agent_id.as_deref()?.to_owned(), s.call_id.to_string()))
            }
            _ => None,
        })
        .collect();
    let session = session_key(cx);
    for (agent, call) in links {
        cx.memory()
            .claude
            .agents
            .insert(&agent_key(&session, &agent), call, line);
    }
}

/// A subagent's key in [`Memory::agents`]: agent ids are the session's own.
fn agent_key(session: &str, agent: &str) -> String {
    format!("{session}/{agent}")
}

/// Names the line's session: its own `session_id`, else the one the stream named last (the
/// SDK's control lines and prompts name none). `system` and `result` lines update it; an
/// init that names no session announces one the stream has not named.
fn track_session(cx: &mut Cx<'_>, ty: &str, subtype: Option<&str>) {
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

// ---------------------------------------------------------------------------------------------
// system

#[derive(Deserialize)]
struct Init<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cwd: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
    #[serde(borrow, default)]
    tools: crate::wire::NameList<'a>,
    #[serde(borrow)]
    mcp_servers: Option<Vec<WireMcp<'a>>>,
    #[serde(
        rename = "permissionMode",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    permission_mode: Option<Str<'a>>,
    #[serde(borrow, default)]
    slash_commands: crate::wire::NameList<'a>,
    #[serde(
        rename = "apiKeySource",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    api_key_source: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    claude_code_version: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    output_style: Option<Str<'a>>,
    #[serde(borrow, default)]
    agents: crate::wire::NameList<'a>,
    #[serde(borrow, default)]
    skills: crate::wire::NameList<'a>,
    #[serde(borrow)]
    plugins: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    effort: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    fast_mode_state: Option<Str<'a>>,
    #[serde(borrow)]
    memory_paths: Option<&'a RawValue>,
    analytics_disabled: Option<bool>,
    product_feedback_disabled: Option<bool>,
}

/// Puts the SDK's initialize answer onto the session's init: its commands (with their
/// descriptions), models and account replace the init's bare names.
fn merge_answer<'a>(init: &mut SessionInit<'a>, a: InitAnswer, style: &mut Option<Str<'a>>) {
    if let Some(cmds) = a.commands {
        init.slash_commands = Some(
            cmds.into_iter()
                .map(|(name, description, hint)| SlashCommand {
                    name: Cow::Owned(name),
                    description: Cow::Owned(description),
                    argument_hint: Cow::Owned(hint),
                })
                .collect(),
        );
    }
    if let Some(models) = a.models {
        init.available_models = Some(
            models
                .iter()
                .filter_map(|m| serde_json::from_str::<Value>(m).ok())
                .map(Json::Value)
                .collect(),
        );
    }
    if let Some([email, organization, subscription, token, key]) = a.account {
        let from_init = init.account.take().and_then(|a| a.api_key_source);
        init.account = Some(Account {
            email: email.map(Cow::Owned),
            organization: organization.map(Cow::Owned),
            subscription_type: subscription.map(Cow::Owned),
            token_source: token.map(Cow::Owned),
            api_key_source: key.map(Cow::Owned).or(from_init),
        });
    }
    if init.agents.is_none() {
        init.agents = a.agents.map(|v| v.into_iter().map(Cow::Owned).collect());
    }
    if style.is_none() {
        *style = a.output_style.map(Cow::Owned);
    }
}

#[derive(Deserialize)]
struct WireMcp<'a> {
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(rename = "serverInfo", borrow)]
    server_info: Option<&'a RawValue>,
}

fn mcp_server(m: WireMcp<'_>) -> McpServer<'_> {
    let status = match m.status.as_deref() {
        Some("connected") => McpStatus::Connected,
        Some("failed") => McpStatus::Failed,
        Some("needs-auth") => McpStatus::NeedsAuth,
        _ => McpStatus::Pending,
    };
    let status_detail = m.status.filter(|s| s != status.as_str());
    McpServer {
        name: m.name,
        status,
        status_detail,
        server_info: m.server_info.filter(|r| is_object(r)).map(Json::Raw),
    }
}

#[derive(Deserialize)]
struct Status<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(
        rename = "permissionMode",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    permission_mode: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    compact_result: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    compact_error: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct CompactBoundary<'a> {
    #[serde(borrow)]
    compact_metadata: Option<&'a RawValue>,
}

/// A JSON object's members in their order, values as written.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, &'de RawValue>()? {
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The members of `compact_metadata` a `context_compaction` has fields for; the others
/// (`cumulative_dropped_tokens`, `preserved_segment`, `preserved_messages`, …) go to
/// `claude.compactMetadata`.
const COMPACT_FIELDS: [&str; 4] = ["trigger", "pre_tokens", "post_tokens", "duration_ms"];

#[derive(Deserialize)]
struct CompactMeta<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    trigger: Option<Str<'a>>,
    pre_tokens: Option<Count>,
    post_tokens: Option<Count>,
    duration_ms: Option<Count>,
}

#[derive(Deserialize)]
struct HookLine<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    hook_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    hook_name: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    hook_event: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    outcome: Option<Str<'a>>,
    exit_code: Option<i64>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stdout: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stderr: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    output: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct TaskLine<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    task_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool_use_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    description: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    subagent_type: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    task_type: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    summary: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    last_tool_name: Option<Str<'a>>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    #[serde(borrow)]
    patch: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    prompt: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    output_file: Option<Str<'a>>,
}

/// A subagent's task started: its call learns the agent id (the task may start before the
/// call's `tool_use` line, for a subagent started inside a subagent).
fn subagent_started(cx: &mut Cx<'_>, call: &str, task_id: Option<&str>) {
    let session = session_key(cx);
    let line = cx.line;
    let calls = &mut cx.memory().claude.calls;
    let agent_id = task_id.map(str::to_owned);
    match calls.get_mut(call) {
        // A call of a tool that is no subagent tool in this dialect stays what it is.
        Some(c) => {
            if let Some(sub) = c.subagent.as_mut().filter(|_| agent_id.is_some()) {
                sub.agent_id = agent_id;
            }
        }
        None => calls.insert(
            call,
            Call {
                session,
                subagent: Some(Subagent {
                    agent_id,
                    ..Subagent::default()
                }),
                ..Call::default()
            },
            line,
        ),
    }
}

/// Whether a task status says the task is over.
fn is_final(status: &str) -> bool {
    matches!(
        status,
        "completed" | "failed" | "stopped" | "killed" | "cancelled" | "canceled" | "error"
    )
}

/// A subagent's `task_notification`: its status is kept for the call's result; a background
/// subagent (whose call already returned) ends here, and is returned.
fn subagent_notified(cx: &mut Cx<'_>, call: &str, status: Option<&str>) -> Option<Subagent> {
    let status = status?;
    let calls = &mut cx.memory().claude.calls;
    let c = calls.get_mut(call)?;
    let sub = c.subagent.as_mut()?;
    if !is_final(status) {
        return None;
    }
    sub.status = Some(status.to_owned());
    if sub.launched || c.name.is_empty() {
        // Ended with no result to come (launched), or never invoked on this wire.
        let c = calls.remove(call)?;
        let sub = c.subagent?;
        return (!c.name.is_empty()).then_some(sub);
    }
    None
}

#[derive(Deserialize)]
struct PatchStatus<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct ApiRetry<'a> {
    attempt: Option<Count>,
    max_retries: Option<Count>,
    retry_delay_ms: Option<Count>,
    error_status: Option<Count>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    error: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct ThinkingTokens {
    estimated_tokens: Option<Count>,
    estimated_tokens_delta: Option<Count>,
}

#[derive(Deserialize)]
struct StateChanged<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    state: Option<Str<'a>>,
}

/// Maps a `system` line of `subtype`. `line` may also be any JSON object with the same
/// members (Qwen Code keeps the members of its `task_*` lines in `data`).
pub(crate) fn system<'a>(
    line: Line<'a, '_>,
    subtype: &'a str,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    match subtype {
        "init" => {
            let w: Init = line.read()?;
            let mut ext_style = w.output_style.clone();
            let mut init = SessionInit {
                model: w.model,
                reasoning_effort: w.effort,
                cwd: w.cwd,
                available_tools: w.tools.0,
                mcp_servers: w
                    .mcp_servers
                    .map(|v| v.into_iter().map(mcp_server).collect()),
                permission_mode: w.permission_mode,
                account: w.api_key_source.map(|k| Account {
                    api_key_source: Some(k),
                    ..Account::default()
                }),
                slash_commands: w.slash_commands.0.map(|v| {
                    v.into_iter()
                        .map(|name| SlashCommand {
                            name,
                            description: Cow::Borrowed(""),
                            argument_hint: Cow::Borrowed(""),
                        })
                        .collect()
                }),
                available_models: None,
                version: w.claude_code_version,
                agents: w.agents.0,
                skills: w.skills.0,
            };
            // The SDK's initialize answer, kept until the session was announced.
            let answer = match cx.session_id {
                Some(_) => cx.memory().claude.init.remove(""),
                None => None,
            };
            let answer_id = answer.as_ref().map(|a| a.request_id.clone());
            if let Some(a) = answer {
                merge_answer(&mut init, a, &mut ext_style);
            }
            let ext = cx.push(init);
            ext.put_opt("claude.outputStyle", ext_style);
            ext.put_opt("claude.initializeRequestId", answer_id);
            ext.put_opt("claude.plugins", w.plugins.filter(|p| !is_null(p)));
            ext.put_opt("claude.fastModeState", w.fast_mode_state);
            ext.put_opt("claude.memoryPaths", w.memory_paths.filter(|p| !is_null(p)));
            ext.put_opt("claude.analyticsDisabled", w.analytics_disabled);
            ext.put_opt(
                "claude.productFeedbackDisabled",
                w.product_feedback_disabled,
            );
        }
        "status" => {
            let w: Status = line.read()?;
            let status = match w.status.as_deref() {
                Some("compacting") => Some(SessionStatusKind::Compacting),
                Some("requesting") => Some(SessionStatusKind::Requesting),
                Some("resuming") => Some(SessionStatusKind::Resuming),
                Some(_) => None,
                None => (w.permission_mode.is_none()).then_some(SessionStatusKind::Idle),
            };
            if let Some(mode) = w.permission_mode {
                cx.push(SessionMode {
                    current_mode_id: mode,
                    available_modes: Vec::new(),
                });
            }
            if let Some(status) = status {
                let ext = cx.push(SessionStatus {
                    status,
                    message: w.compact_error,
                });
                ext.put_opt("claude.compactResult", w.compact_result);
            } else if let Some(other) = w.status {
                // A status word this version does not know: keep it as a notice.
                cx.push(Notice {
                    subtype: Cow::Borrowed("system/status"),
                    message: Some(other),
                });
            }
        }
        "compact_boundary" | "microcompact_boundary" => {
            let w: CompactBoundary = line.read()?;
            let raw = w.compact_metadata.filter(|m| is_object(m));
            let meta = raw.and_then(|m| serde_json::from_str::<CompactMeta>(m.get()).ok());
            // What the event has no field for, as the wire says it.
            let rest: Option<Pairs<Json>> = raw
                .and_then(|m| serde_json::from_str::<Members>(m.get()).ok())
                .map(|members| {
                    let mut rest = Pairs::default();
                    for (k, v) in members.0 {
                        if !COMPACT_FIELDS.contains(&k.as_str()) {
                            rest.put(k, v);
                        }
                    }
                    rest
                })
                .filter(|r| !r.0.is_empty());
            let trigger = match meta.as_ref().and_then(|m| m.trigger.as_deref()) {
                Some("manual") => CompactionTrigger::Manual,
                _ => CompactionTrigger::Auto,
            };
            let ext = cx.push(ContextCompaction {
                trigger,
                pre_tokens: count(meta.as_ref().and_then(|m| m.pre_tokens)),
                post_tokens: count(meta.as_ref().and_then(|m| m.post_tokens)),
                summary: None,
                duration_ms: count(meta.as_ref().and_then(|m| m.duration_ms)),
            });
            if subtype == "microcompact_boundary" {
                ext.put("claude.micro", true);
            }
            ext.put_opt("claude.compactMetadata", rest.map(Json::Object));
        }
        "hook_started" | "hook_progress" | "hook_response" => {
            let w: HookLine = line.read()?;
            let phase = match subtype {
                "hook_started" => HookPhase::Started,
                "hook_progress" => HookPhase::Progress,
                _ => HookPhase::Response,
            };
            cx.push(Hook {
                hook_id: w.hook_id.unwrap_or_default(),
                phase,
                hook_name: w.hook_name,
                hook_event: w.hook_event,
                outcome: w.outcome,
                exit_code: w.exit_code,
                stdout: w.stdout,
                stderr: w.stderr,
                output: w.output,
            });
        }
        "task_started" | "task_progress" | "task_updated" | "task_notification" => {
            let w: TaskLine = line.read()?;
            let phase = match subtype {
                "task_started" => TaskPhase::Started,
                "task_progress" => TaskPhase::Progress,
                "task_updated" => TaskPhase::Updated,
                _ => TaskPhase::Notification,
            };
            let patch_status = match w.patch {
                Some(p) if is_object(p) => serde_json::from_str::<PatchStatus>(p.get())?.status,
                _ => None,
            };
            let status = w.status.or(patch_status);
            let mut ended = None;
            if let Some(call) = w.tool_use_id.as_deref() {
                let agent =
                    w.task_type.as_deref() == Some("local_agent") || w.subagent_type.is_some();
                match phase {
                    TaskPhase::Started if agent => {
                        subagent_started(cx, call, w.task_id.as_deref());
                    }
                    TaskPhase::Notification => {
                        ended = subagent_notified(cx, call, status.as_deref());
                    }
                    _ => {}
                }
            }
            let ext = cx.push(TaskUpdate {
                task_id: w.task_id.clone().unwrap_or_default(),
                phase,
                call_id: w.tool_use_id.clone(),
                status: status.clone(),
                description: w.description,
                agent_type: w.subagent_type,
                task_type: w.task_type,
                summary: w.summary.clone(),
                last_tool_name: w.last_tool_name,
                usage: w.usage.filter(|u| is_object(u)).map(Json::Raw),
            });
            ext.put_opt("claude.patch", w.patch.filter(|p| is_object(p)));
            ext.put_opt("claude.prompt", w.prompt);
            ext.put_opt("claude.outputFile", w.output_file.filter(|f| !f.is_empty()));
            if let Some(sub) = ended {
                // A background subagent: its call returned at launch, it ends here.
                cx.push(SubagentComplete {
                    call_id: w.tool_use_id.unwrap_or_default(),
                    agent_id: sub.agent_id.map(Cow::Owned).or(w.task_id),
                    status,
                    summary: w.summary,
                    duration_ms: None,
                    total_tokens: None,
                    tool_use_count: None,
                    parent_call_id: None,
                });
            }
        }
        "api_retry" => {
            let w: ApiRetry = line.read()?;
            let message = match (&w.error, w.error_status) {
                (Some(e), Some(s)) => Cow::Owned(format!("API error {}: {e}", s.0)),
                (Some(e), None) => e.clone(),
                (None, Some(s)) => Cow::Owned(format!("API error {}", s.0)),
                (None, None) => Cow::Borrowed("API error"),
            };
            cx.push(ErrorEvent {
                message,
                severity: Severity::Warning,
                code: w.error,
                http_status: count(w.error_status),
                will_retry: Some(true),
                attempt: count(w.attempt),
                max_retries: count(w.max_retries),
                retry_delay_ms: count(w.retry_delay_ms),
                request_id: None,
                parent_call_id: None,
            });
        }
        "thinking_tokens" => {
            let w: ThinkingTokens = line.read()?;
            let ext = cx.push(UsageUpdate {
                step_usage: Json::Value(Value::Object(Default::default())),
                total: None,
                context_window: None,
                context_tokens: None,
                cost_usd: None,
                parent_call_id: None,
                model: None,
                message_id: None,
            });
            ext.put_opt("claude.estimatedThinkingTokens", count(w.estimated_tokens));
            ext.put_opt(
                "claude.estimatedThinkingTokensDelta",
                count(w.estimated_tokens_delta),
            );
        }
        "session_state_changed" => {
            let w: StateChanged = line.read()?;
            let status = match w.state.as_deref() {
                Some("idle") => Some(SessionStatusKind::Idle),
                Some("running") => Some(SessionStatusKind::Running),
                Some("requires_action") => Some(SessionStatusKind::RequiresAction),
                _ => None,
            };
            match status {
                Some(status) => {
                    cx.push(SessionStatus {
                        status,
                        message: None,
                    });
                }
                None => {
                    return notice(
                        line,
                        Cow::Borrowed("system/session_state_changed"),
                        w.state,
                        cx,
                    )
                }
            }
        }
        other => {
            let name = Cow::Owned(format!("system/{other}"));
            return notice(line, name, None, cx);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// assistant

#[derive(Deserialize)]
struct Assistant<'a> {
    #[serde(borrow)]
    message: AssistantMessage<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    parent_tool_use_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    error: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    request_id: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct AssistantMessage<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
    #[serde(borrow, default)]
    content: Vec<Block<'a>>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    /// Why the model stopped (`tool_use`, `end_turn`, …); null while streaming.
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stop_reason: Option<Str<'a>>,
}

/// A content block of either direction; which members are set depends on `type`.
#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    ty: Str<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    text: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    thinking: Option<Str<'a>>,
    /// A thinking block's signature.
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    signature: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    name: Option<Str<'a>>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool_use_id: Option<Str<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    is_error: Option<bool>,
    #[serde(borrow)]
    source: Option<ImageSource<'a>>,
}

#[derive(Deserialize)]
struct ImageSource<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    media_type: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    data: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    url: Option<Str<'a>>,
}

/// The members of a tool input that titles, locations, subagents and plans are made from.
#[derive(Deserialize, Default)]
struct InputHints<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    file_path: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    path: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    notebook_path: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    pattern: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    command: Option<Str<'a>>,
    /// Amp's Bash.
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cmd: Option<Str<'a>>,
    /// Amp's glob.
    #[serde(
        rename = "filePattern",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    file_pattern: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    description: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    url: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    query: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    prompt: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    subagent_type: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    name: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    task: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    resume: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    subject: Option<Str<'a>>,
    #[serde(borrow)]
    todos: Option<Vec<Todo<'a>>>,
    /// Write's new content.
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    content: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct Todo<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    content: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    priority: Option<Str<'a>>,
    #[serde(
        rename = "activeForm",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    active_form: Option<Str<'a>>,
}

/// ToolKind of a Claude Code tool name (CC-Insights' table, extended with newer tools).
pub fn tool_kind(name: &str) -> ToolKind {
    if name.starts_with("mcp__") {
        return ToolKind::Mcp;
    }
    match name {
        "Bash" | "BashOutput" | "KillShell" | "KillBash" | "PowerShell" => ToolKind::Execute,
        "Read" | "NotebookRead" | "LS" => ToolKind::Read,
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => ToolKind::Edit,
        "Glob" | "Grep" | "ToolSearch" => ToolKind::Search,
        "WebFetch" => ToolKind::Fetch,
        "WebSearch" => ToolKind::Browse,
        "Task" | "Agent" => ToolKind::Think,
        "AskUserQuestion" => ToolKind::Ask,
        "TodoWrite" | "TaskCreate" | "TaskUpdate" | "TaskGet" | "TaskList" => ToolKind::Memory,
        _ => ToolKind::Other,
    }
}

/// The HTTP status in the CLI's message for a failed API call: `API Error: 500 …`,
/// `API Error: Request rejected (429) · …`.
fn http_status_of(message: &str) -> Option<u64> {
    let rest = &message[message.find("API Error")? + "API Error".len()..];
    let head = &rest[..rest.len().min(48)];
    let b = head.as_bytes();
    (0..b.len().saturating_sub(2)).find_map(|i| {
        let three = b[i..i + 3].iter().all(u8::is_ascii_digit);
        let before = i == 0 || !b[i - 1].is_ascii_digit();
        let after = b.get(i + 3).is_none_or(|c| !c.is_ascii_digit());
        let n: u64 = head.get(i..i + 3)?.parse().ok()?;
        (three && before && after && (400..600).contains(&n)).then_some(n)
    })
}

/// Remembers a tool call until its result: its session and name, and what a subagent or
/// file edit needs at the end.
fn remember_call(cx: &mut Cx<'_>, call_id: &str, name: &str, canon: &str, h: &InputHints<'_>) {
    let session = session_key(cx);
    let line = cx.line;
    let edit = match canon {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => h
            .file_path
            .as_deref()
            .or(h.notebook_path.as_deref())
            .or(h.path.as_deref())
            .map(|p| Edit {
                path: p.to_owned(),
                content: (canon == "Write")
                    .then(|| h.content.as_deref().map(str::to_owned))
                    .flatten(),
            }),
        _ => None,
    };
    let calls = &mut cx.memory().claude.calls;
    let subagent = is_subagent_tool(canon).then(|| {
        calls
            .remove(call_id)
            .and_then(|c| c.subagent)
            .unwrap_or_default()
    });
    calls.insert(
        call_id,
        Call {
            session,
            name: name.to_owned(),
            subagent,
            edit,
        },
        line,
    );
}

fn is_subagent_tool(name: &str) -> bool {
    matches!(name, "Task" | "Agent")
}

fn tool_title<'a>(name: &str, h: &InputHints<'a>) -> Option<Str<'a>> {
    match name {
        "Bash" => h
            .description
            .clone()
            .or_else(|| h.command.clone())
            .or_else(|| h.cmd.clone()),
        "Read" | "Write" | "Edit" | "MultiEdit" => h.file_path.clone().or_else(|| h.path.clone()),
        "NotebookEdit" | "NotebookRead" => h.notebook_path.clone(),
        "Glob" | "Grep" => h.pattern.clone().or_else(|| h.file_pattern.clone()),
        "WebFetch" => h.url.clone(),
        "WebSearch" => h.query.clone(),
        "Task" | "Agent" => h.description.clone(),
        "TaskCreate" => h.subject.clone(),
        _ => None,
    }
}

fn tool_locations<'a>(name: &str, h: &InputHints<'a>) -> Option<Vec<Str<'a>>> {
    let mut v: Vec<Str<'a>> = [&h.file_path, &h.path, &h.notebook_path]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if name == "Glob" {
        v.extend(h.pattern.clone().or_else(|| h.file_pattern.clone()));
    }
    (!v.is_empty()).then_some(v)
}

/// A todo's status; `in-progress` is Amp's spelling.
pub(crate) fn plan_status(s: Option<&str>) -> PlanStatus {
    match s {
        Some("in_progress" | "in-progress") => PlanStatus::InProgress,
        Some("completed") => PlanStatus::Completed,
        _ => PlanStatus::Pending,
    }
}

pub(crate) fn plan_priority(s: Option<&str>) -> Option<PlanPriority> {
    match s {
        Some("high") => Some(PlanPriority::High),
        Some("medium") => Some(PlanPriority::Medium),
        Some("low") => Some(PlanPriority::Low),
        _ => None,
    }
}

/// `file_parent`: the call a subagent's session-file line belongs to (its line names none).
fn assistant<'a>(
    line: Line<'a, '_>,
    cx: &mut Cx<'a>,
    d: &Dialect,
    file_parent: Option<Str<'a>>,
) -> Result<(), Unmapped> {
    let w: Assistant = line.read()?;
    let parent = w.parent_tool_use_id.or(file_parent);
    let model = w.message.model;
    let message_id = w.message.id;
    let stop_reason = w.message.stop_reason;
    let synthetic = model.as_deref() == Some("<synthetic>");
    for b in w.message.content {
        let api_error = |b: &Block| {
            b.text
                .as_deref()
                .is_some_and(|t| t.starts_with("API Error"))
        };
        match &*b.ty {
            "text" if w.error.is_some() || (synthetic && api_error(&b)) => {
                // The CLI's own message for a failed API call ("API Error: 400 …").
                let message = b.text.unwrap_or_default();
                let http_status = http_status_of(&message);
                turn_mut(cx).error_reported = true;
                cx.push(ErrorEvent {
                    message,
                    severity: Severity::Error,
                    code: w.error.clone(),
                    http_status,
                    will_retry: Some(false),
                    attempt: None,
                    max_retries: None,
                    retry_delay_ms: None,
                    request_id: w.request_id.clone(),
                    parent_call_id: parent.clone(),
                });
            }
            "text" => {
                if b.text
                    .as_deref()
                    .is_some_and(|t| t.starts_with("[API Error: "))
                {
                    // Qwen Code's failed model request (qwen.rs makes it an `error`): the
                    // turn's failure is stated.
                    turn_mut(cx).error_reported = true;
                }
                cx.push(Text {
                    text: b.text.unwrap_or_default(),
                    kind: TextKind::Text,
                    parent_call_id: parent.clone(),
                    model: model.clone(),
                    message_id: message_id.clone(),
                });
            }
            "thinking" | "redacted_thinking" => {
                let ext = cx.push(Text {
                    text: b.thinking.unwrap_or_default(),
                    kind: TextKind::Thinking,
                    parent_call_id: parent.clone(),
                    model: model.clone(),
                    message_id: message_id.clone(),
                });
                if b.ty == "redacted_thinking" {
                    ext.put("claude.redacted", true);
                }
                ext.put_opt("claude.signature", b.signature);
            }
            "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                let name = b.name.unwrap_or_default();
                let call_id = b.id.unwrap_or_default();
                let input = match b.input {
                    Some(i) if is_object(i) => i,
                    _ => return Err(Unmapped("tool_use block without an object input".into())),
                };
                let hints: InputHints = serde_json::from_str(input.get()).unwrap_or_default();
                let canon = (d.canonical)(&name);
                let (mcp_server, mcp_tool) = if split_mcp(&name).is_some() {
                    (
                        Some(sub(&name, |n| split_mcp(n).map_or("", |x| x.0))),
                        Some(sub(&name, |n| split_mcp(n).map_or("", |x| x.1))),
                    )
                } else {
                    (None, None)
                };
                let ext = cx.push(ToolInvocation {
                    call_id: call_id.clone(),
                    parent_call_id: parent.clone(),
                    kind: (d.tool_kind)(&name),
                    tool_name: name.clone(),
                    title: tool_title(canon, &hints),
                    input: Json::Raw(input),
                    locations: tool_locations(canon, &hints),
                    model: model.clone(),
                    mcp_server,
                    mcp_tool,
                    message_id: message_id.clone(),
                });
                if b.ty != "tool_use" {
                    ext.put("claude.blockType", b.ty.clone());
                } else {
                    remember_call(cx, &call_id, &name, canon, &hints);
                }
                if is_subagent_tool(canon) {
                    cx.push(SubagentSpawn {
                        call_id: call_id.clone(),
                        agent_type: hints.subagent_type.or(hints.name),
                        description: hints.description.clone().or(hints.task),
                        is_resume: hints.resume.is_some(),
                        resume_agent_id: hints.resume,
                        prompt: hints.prompt,
                        parent_call_id: parent.clone(),
                    });
                } else if canon == "TodoWrite" {
                    let entries = hints
                        .todos
                        .unwrap_or_default()
                        .into_iter()
                        .map(|t| PlanEntry {
                            status: plan_status(t.status.as_deref()),
                            priority: plan_priority(t.priority.as_deref()),
                            content: t.content.unwrap_or_default(),
                            active_form: t.active_form,
                        })
                        .collect();
                    cx.push(PlanUpdate {
                        entries,
                        call_id: Some(call_id),
                        parent_call_id: parent.clone(),
                        explanation: None,
                    });
                }
            }
            _ => {
                // Server tool results and block types this version does not know: keep the
                // block whole as a notice.
                let raw = block_echo(&b);
                let ext = cx.push(Notice {
                    subtype: Cow::Owned(format!("assistant/{}", b.ty)),
                    message: None,
                });
                ext.put("claude.block", raw);
                ext.put_opt("claude.parentToolUseId", parent.clone());
            }
        }
    }
    if let Some(usage) = w.message.usage.filter(|u| is_object(u)) {
        let ext = cx.push(UsageUpdate {
            step_usage: Json::Raw(usage),
            total: None,
            context_window: None,
            context_tokens: None,
            cost_usd: None,
            parent_call_id: parent.clone(),
            model,
            message_id,
        });
        // CC-Insights' frontend skips its context meter for subagent usage by this key.
        ext.put_opt("parent_tool_use_id", parent);
        // The API request the usage is of (an `error` carries it as `requestId`).
        ext.put_opt("claude.requestId", w.request_id);
        ext.put_opt("claude.stopReason", stop_reason);
    }
    Ok(())
}

/// The members of a block this converter does not interpret, as they are (raw JSON in them
/// passes through untouched; a `Value` could not hold every number).
fn block_echo<'a>(b: &Block<'a>) -> Json<'a> {
    let mut m = Pairs::default();
    let mut put = |k: &'static str, v: Json<'a>| m.0.push((Cow::Borrowed(k), v));
    put("type", Json::Str(b.ty.clone()));
    for (k, v) in [
        ("id", &b.id),
        ("name", &b.name),
        ("tool_use_id", &b.tool_use_id),
    ] {
        if let Some(v) = v {
            put(k, Json::Str(v.clone()));
        }
    }
    if let Some(v) = &b.text {
        put("text", Json::Str(v.clone()));
    }
    if let Some(v) = b.input {
        put("input", Json::Raw(v));
    }
    if let Some(v) = b.content {
        put("content", Json::Raw(v));
    }
    if let Some(v) = b.is_error {
        put("is_error", Json::Bool(v));
    }
    Json::Object(m)
}

// ---------------------------------------------------------------------------------------------
// user

#[derive(Deserialize)]
struct User<'a> {
    #[serde(borrow)]
    message: UserMessage<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    parent_tool_use_id: Option<Str<'a>>,
    /// `toolUseResult` in Claude Code's own session files.
    #[serde(borrow, alias = "toolUseResult")]
    tool_use_result: Option<&'a RawValue>,
    #[serde(rename = "isSynthetic")]
    is_synthetic: Option<bool>,
    #[serde(rename = "isReplay")]
    is_replay: Option<bool>,
}

#[derive(Deserialize)]
struct UserMessage<'a> {
    #[serde(borrow)]
    content: &'a RawValue,
}

/// What Claude Code reports about a finished tool call (`tool_use_result`), the parts used here.
#[derive(Deserialize, Default)]
struct ToolUseResult<'a> {
    #[serde(
        rename = "agentId",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    agent_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(rename = "totalDurationMs")]
    total_duration_ms: Option<Count>,
    #[serde(rename = "totalTokens")]
    total_tokens: Option<Count>,
    #[serde(rename = "totalToolUseCount")]
    total_tool_use_count: Option<Count>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(
        rename = "filePath",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    file_path: Option<Str<'a>>,
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    ty: Option<Str<'a>>,
    #[serde(rename = "structuredPatch", borrow)]
    structured_patch: Option<Vec<Hunk<'a>>>,
}

#[derive(Deserialize)]
struct Hunk<'a> {
    #[serde(rename = "oldStart")]
    old_start: Count,
    #[serde(rename = "oldLines")]
    old_lines: Count,
    #[serde(rename = "newStart")]
    new_start: Count,
    #[serde(rename = "newLines")]
    new_lines: Count,
    #[serde(borrow)]
    lines: Vec<Str<'a>>,
}

/// A unified diff from Claude Code's structured patch.
fn unified_diff(path: &str, hunks: &[Hunk], created: bool) -> String {
    let mut d = String::new();
    let old = if created {
        "/dev/null".to_string()
    } else {
        format!("a{}", slash(path))
    };
    d.push_str(&format!("--- {old}\n+++ b{}\n", slash(path)));
    for h in hunks {
        d.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            h.old_start.0, h.old_lines.0, h.new_start.0, h.new_lines.0
        ));
        for l in &h.lines {
            d.push_str(l);
            d.push('\n');
        }
    }
    d
}

/// A unified diff that creates a file with `content`.
pub(crate) fn creation_diff(path: &str, content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let mut d = format!("--- /dev/null\n+++ b{}\n", slash(path));
    if !lines.is_empty() {
        d.push_str(&format!("@@ -0,0 +1,{} @@\n", lines.len()));
        for l in lines {
            d.push('+');
            d.push_str(l);
            d.push('\n');
        }
    }
    d
}

fn slash(path: &str) -> Cow<'_, str> {
    if path.starts_with('/') {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(format!("/{path}"))
    }
}

/// A JSON object written as a string (`"{\"output\":\"ok\"}"`), decoded.
fn json_text(raw: &RawValue) -> Option<Json<'static>> {
    let text = raw_str(raw)?;
    let v: Value = serde_json::from_str(text.trim()).ok()?;
    v.is_object().then_some(Json::Value(v))
}

/// The text of a tool_result's or an Agent result's content: a string, or its text blocks.
/// A subagent's answer as its call's result gives it, without the CLI's footer (`agentId: …
/// (use SendMessage …)\n<usage>subagent_tokens: N\ntool_uses: N\nduration_ms: N</usage>`),
/// and the footer's figures: tokens, tool uses, duration.
/// A subagent's answer and its footer's figures (tokens, tool uses, duration) and agent id,
/// from the text of a result without `tool_use_result` (a subagent's own subagent).
fn subagent_answer(raw: &RawValue) -> (Option<String>, [Option<u64>; 3], Option<String>) {
    let Some(text) = content_text(raw) else {
        return (None, [None; 3], None);
    };
    let Some(at) = text
        .find("agentId: ")
        .filter(|&i| i == 0 || text[..i].ends_with('\n'))
    else {
        return (Some(text), [None; 3], None);
    };
    let footer = &text[at..];
    let agent = footer["agentId: ".len()..]
        .split(|c: char| c.is_whitespace() || c == '(' || c == ',')
        .next()
        .filter(|a| !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        .map(str::to_owned);
    let figure = |name: &str| {
        let rest = &footer[footer.find(name)? + name.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let figures = [
        figure("subagent_tokens: "),
        figure("tool_uses: "),
        figure("duration_ms: "),
    ];
    let answer = text[..at].trim_end_matches('\n');
    (
        (!answer.is_empty()).then(|| answer.to_owned()),
        figures,
        agent,
    )
}

fn content_text(raw: &RawValue) -> Option<String> {
    if let Some(s) = raw_str(raw) {
        return Some(s.into_owned());
    }
    #[derive(Deserialize)]
    struct T<'a> {
        #[serde(
            rename = "type",
            borrow,
            default,
            deserialize_with = "crate::wire::opt_str"
        )]
        ty: Option<Str<'a>>,
        #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
        text: Option<Str<'a>>,
    }
    let blocks: Vec<T> = serde_json::from_str(raw.get()).ok()?;
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.ty.as_deref() == Some("text"))
        .filter_map(|b| b.text.as_deref())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The `user` texts Claude Code writes itself when an interrupt stops a turn.
const INTERRUPT_TEXTS: &[&str] = &[
    "[Request interrupted by user]",
    "[Request interrupted by user for tool use]",
];

fn user<'a>(
    line: Line<'a, '_>,
    cx: &mut Cx<'a>,
    d: &Dialect,
    file_parent: Option<Str<'a>>,
) -> Result<(), Unmapped> {
    let w: User = line.read()?;
    let parent = w.parent_tool_use_id.or(file_parent);
    let synthetic = w.is_synthetic.unwrap_or(false);
    let replay = w.is_replay.unwrap_or(false);
    let push_input = |cx: &mut Cx<'a>, text: Str<'a>, images: Option<Vec<ImageData<'a>>>| {
        // The CLI writes these itself when an interrupt stops a turn: the person typed
        // nothing. The line has no `isSynthetic`; the text is the CLI's own.
        let cli_text = !synthetic && images.is_none() && INTERRUPT_TEXTS.contains(&&*text);
        let ext = cx.push(UserInput {
            text,
            images,
            is_synthetic: synthetic || cli_text,
            parent_call_id: parent.clone(),
        });
        if replay {
            ext.put("isReplay", true);
        }
        if cli_text {
            ext.put("claude.interruptNotice", true);
        }
    };
    if let Some(text) = raw_str(w.message.content) {
        push_input(cx, text, None);
        return Ok(());
    }
    let blocks: Vec<Block> = serde_json::from_str(w.message.content.get())?;
    let mut texts: Vec<Str<'a>> = Vec::new();
    let mut images: Vec<ImageData<'a>> = Vec::new();
    let tool_results = blocks.iter().filter(|b| b.ty == "tool_result").count();
    for b in blocks {
        match &*b.ty {
            "tool_result" => {
                let call_id = b.tool_use_id.unwrap_or_default();
                let is_error = b.is_error.unwrap_or(false);
                // The line's tool_use_result describes its (only) tool_result.
                let meta = w.tool_use_result.filter(|_| tool_results == 1);
                let output = match (meta, b.content) {
                    (Some(m), _) if !is_null(m) => Some(Json::Raw(m)),
                    (_, Some(c)) if d.json_results => Some(json_text(c).unwrap_or(Json::Raw(c))),
                    (_, Some(c)) => Some(Json::Raw(c)),
                    _ => None,
                };
                let content = b
                    .content
                    .filter(|c| c.get().starts_with('['))
                    .map(Json::Raw);
                let call = cx.memory().claude.calls.remove(&call_id);
                // An error result after an interrupt was asked for: the interrupt stopped
                // the call ("User rejected tool use").
                let stopped = is_error && interrupted(cx);
                cx.push(ToolCompletion {
                    call_id: call_id.clone(),
                    status: if stopped {
                        ToolCallStatus::Cancelled
                    } else if is_error {
                        ToolCallStatus::Failed
                    } else {
                        ToolCallStatus::Completed
                    },
                    duration_ms: None,
                    output,
                    is_error,
                    content,
                    locations: None,
                    parent_call_id: parent.clone(),
                });
                let info: ToolUseResult = match meta {
                    Some(m) if is_object(m) => serde_json::from_str(m.get()).unwrap_or_default(),
                    _ => ToolUseResult::default(),
                };
                let sub = call.as_ref().and_then(|c| c.subagent.clone());
                if info.agent_id.is_some() || sub.is_some() {
                    let sub = sub.unwrap_or_default();
                    // The result's status, else the task's, else the result's own verdict.
                    let status = info
                        .status
                        .clone()
                        .or_else(|| sub.status.clone().map(Cow::Owned))
                        .unwrap_or(Cow::Borrowed(if stopped {
                            "cancelled"
                        } else if is_error {
                            "failed"
                        } else {
                            "completed"
                        }));
                    let agent_id = info
                        .agent_id
                        .clone()
                        .or(sub.agent_id.clone().map(Cow::Owned));
                    // The call answered as its subagent started, and the task has not ended:
                    // its end is the task's (Qwen's agent tool; qwen.rs maps it).
                    let at_launch = info.status.is_none()
                        && info.agent_id.is_none()
                        && !is_error
                        && sub.agent_id.is_some()
                        && sub.status.is_none();
                    if at_launch {
                        // Nothing to end yet.
                    } else if status.starts_with("async") {
                        // A background subagent: launched, it ends with its notification.
                        if let Some(mut c) = call.clone() {
                            let s = c.subagent.get_or_insert_with(Subagent::default);
                            s.launched = true;
                            s.agent_id = agent_id.as_deref().map(str::to_owned);
                            let line = cx.line;
                            cx.memory().claude.calls.insert(&call_id, c, line);
                        }
                    } else {
                        // Without `tool_use_result` (a subagent's own subagent), the answer
                        // and its figures are in the result's text.
                        let (answer, [tokens, uses, duration], text_agent) =
                            b.content.map_or((None, [None; 3], None), subagent_answer);
                        cx.push(SubagentComplete {
                            call_id: call_id.clone(),
                            agent_id: agent_id.or(text_agent.map(Cow::Owned)),
                            status: Some(status),
                            summary: info
                                .content
                                .and_then(content_text)
                                .or(answer)
                                .map(Cow::Owned),
                            duration_ms: count(info.total_duration_ms).or(duration),
                            total_tokens: count(info.total_tokens).or(tokens),
                            tool_use_count: count(info.total_tool_use_count).or(uses),
                            parent_call_id: parent.clone(),
                        });
                    }
                }
                let mut changed = false;
                if !is_error {
                    if let (Some(path), Some(hunks)) = (&info.file_path, &info.structured_patch) {
                        changed = true;
                        let created = info.ty.as_deref() == Some("create");
                        let diff = if !hunks.is_empty() {
                            Some(unified_diff(path, hunks, created))
                        } else if created {
                            info.content
                                .and_then(raw_str)
                                .map(|c| creation_diff(path, &c))
                        } else {
                            None
                        };
                        cx.push(FileChange {
                            path: path.clone(),
                            change_kind: if created {
                                ChangeKind::Add
                            } else {
                                ChangeKind::Update
                            },
                            move_path: None,
                            diff: diff.map(Cow::Owned),
                            cumulative: false,
                            call_id: Some(call_id.clone()),
                            parent_call_id: parent.clone(),
                        });
                    }
                }
                // A result that carries no change (a subagent's): the change the call's
                // input asked for.
                if let (false, false, Some(edit)) = (is_error, changed, call.and_then(|c| c.edit)) {
                    let said = b.content.and_then(content_text);
                    let created = edit.content.is_some()
                        && said
                            .as_deref()
                            .is_some_and(|t| t.starts_with("File created"));
                    let diff = match (&edit.content, created) {
                        (Some(c), true) => Some(Cow::Owned(creation_diff(&edit.path, c))),
                        _ => None,
                    };
                    let ext = cx.push(FileChange {
                        path: Cow::Owned(edit.path),
                        change_kind: if created {
                            ChangeKind::Add
                        } else {
                            ChangeKind::Update
                        },
                        move_path: None,
                        diff,
                        cumulative: false,
                        call_id: Some(call_id),
                        parent_call_id: parent.clone(),
                    });
                    ext.put("claude.fromInput", true);
                }
            }
            "text" => texts.extend(b.text),
            "image" => {
                if let Some(src) = b.source {
                    images.push(ImageData {
                        media_type: src.media_type.unwrap_or_default(),
                        data: src.data.or(src.url).unwrap_or_default(),
                    });
                }
            }
            _ => {}
        }
    }
    if !texts.is_empty() || !images.is_empty() {
        let text = if texts.len() == 1 {
            texts.pop().unwrap_or_default()
        } else {
            Cow::Owned(texts.join("\n"))
        };
        push_input(cx, text, (!images.is_empty()).then_some(images));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// result

#[derive(Deserialize)]
struct ResultLine<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    subtype: Option<Str<'a>>,
    is_error: Option<bool>,
    duration_ms: Option<Count>,
    duration_api_ms: Option<Count>,
    num_turns: Option<Count>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    result: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stop_reason: Option<Str<'a>>,
    total_cost_usd: Option<f64>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    ttft_ms: Option<Count>,
    ttft_stream_ms: Option<Count>,
    time_to_request_ms: Option<Count>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    fast_mode_state: Option<Str<'a>>,
    #[serde(rename = "modelUsage", borrow)]
    model_usage: Option<Pairs<'a, WireModelUsage>>,
    #[serde(borrow)]
    permission_denials: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    errors: Option<Vec<Str<'a>>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    terminal_reason: Option<Str<'a>>,
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    speed: Option<Str<'a>>,
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
        let message = match (&w.errors, &w.result) {
            (Some(e), _) if !e.is_empty() => Cow::Owned(e.join("; ")),
            (_, Some(r)) if !r.is_empty() => r.clone(),
            _ => w
                .subtype
                .clone()
                .unwrap_or(Cow::Borrowed("the turn failed")),
        };
        cx.push(ErrorEvent {
            message,
            severity: Severity::Error,
            code: w.subtype.clone().filter(|s| s != "success"),
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
        (Some(Cow::Borrowed("interrupted")), w.stop_reason)
    } else {
        (w.stop_reason, None)
    };
    let ext = cx.push(TurnComplete {
        is_error,
        subtype: w.subtype,
        errors: w.errors.filter(|e| !e.is_empty()),
        result: w.result,
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
    ext.put_opt("claude.terminalReason", w.terminal_reason);
    ext.put_opt("claude.ttftMs", count(w.ttft_ms));
    ext.put_opt("claude.ttftStreamMs", count(w.ttft_stream_ms));
    ext.put_opt("claude.timeToRequestMs", count(w.time_to_request_ms));
    ext.put_opt("claude.fastModeState", w.fast_mode_state);
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
        let ext = cx.push(ToolCompletion {
            call_id: id.clone(),
            status: ToolCallStatus::Cancelled,
            duration_ms: None,
            output: None,
            is_error: false,
            content: None,
            locations: None,
            parent_call_id: None,
        });
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    parent_tool_use_id: Option<Str<'a>>,
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    name: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
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
    thinking: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    partial_json: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    signature: Option<Str<'a>>,
    #[serde(borrow)]
    citation: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stop_reason: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct StreamMessage<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
}

fn stream_event<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: StreamLine = line.read()?;
    let ev = w.event;
    let delta = |kind| StreamDelta {
        kind,
        parent_call_id: w.parent_tool_use_id.clone(),
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
            d.message_id = msg.as_ref().and_then(|m| m.id.clone());
            let ext = cx.push(d);
            ext.put_opt("claude.model", msg.and_then(|m| m.model));
            ext.put_opt("claude.ttftMs", count(w.ttft_ms));
        }
        "content_block_start" => {
            let mut d = delta(StreamDeltaKind::BlockStart);
            let block = ev.content_block;
            let is_tool = block.as_ref().is_some_and(|b| b.ty.ends_with("tool_use"));
            if is_tool {
                d.call_id = block.as_ref().and_then(|b| b.id.clone());
            }
            let ext = cx.push(d);
            if let Some(b) = block {
                if is_tool {
                    ext.put_opt("tool_name", b.name);
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
                    d.text_delta = Some(dl.text.unwrap_or_default());
                    cx.push(d);
                }
                Some("thinking_delta") => {
                    let mut d = delta(StreamDeltaKind::Thinking);
                    d.text_delta = Some(dl.thinking.unwrap_or_default());
                    cx.push(d);
                }
                Some("input_json_delta") => {
                    let mut d = delta(StreamDeltaKind::ToolInput);
                    d.json_delta = Some(dl.partial_json.unwrap_or_default());
                    cx.push(d);
                }
                Some("signature_delta") => {
                    let ext = cx.push(delta(StreamDeltaKind::Thinking));
                    ext.put_opt("claude.signatureDelta", dl.signature);
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
            ext.put_opt("claude.stopReason", ev.delta.and_then(|d| d.stop_reason));
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
// control protocol

#[derive(Deserialize)]
struct ControlRequest<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    request_id: Option<Str<'a>>,
    #[serde(borrow)]
    request: RequestBody<'a>,
}

#[derive(Deserialize)]
struct RequestBody<'a> {
    #[serde(borrow)]
    subtype: Str<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool_name: Option<Str<'a>>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool_use_id: Option<Str<'a>>,
    #[serde(borrow)]
    permission_suggestions: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    suggestions: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    blocked_path: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    decision_reason: Option<Str<'a>>,
    /// What kind of rule made the CLI ask (`subcommandResults`, …).
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    decision_reason_type: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    title: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    display_name: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    description: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    agent_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    mode: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct WireSuggestion<'a> {
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    ty: Option<Str<'a>>,
    #[serde(borrow)]
    rules: Option<Vec<Rule<'a>>>,
    #[serde(borrow)]
    directories: Option<Vec<Str<'a>>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    mode: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    behavior: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    destination: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct Rule<'a> {
    #[serde(
        rename = "toolName",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    tool_name: Option<Str<'a>>,
    #[serde(
        rename = "ruleContent",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    rule_content: Option<Str<'a>>,
}

/// A permission suggestion, with a description written for people (CC-Insights requires one).
fn suggestion(raw: &RawValue) -> Option<PermissionSuggestion<'_>> {
    let w: WireSuggestion = serde_json::from_str(raw.get()).ok()?;
    let ty = w.ty?;
    let rule = w.rules.as_ref().and_then(|r| r.first());
    let mut description = match &*ty {
        "setMode" => format!("switch to {} mode", w.mode.as_deref().unwrap_or("?")),
        "addDirectories" | "removeDirectories" => {
            let verb = if ty == "addDirectories" {
                "allow"
            } else {
                "stop allowing"
            };
            format!(
                "{verb} {}",
                w.directories.clone().unwrap_or_default().join(", ")
            )
        }
        _ => {
            let rules: Vec<String> = w
                .rules
                .iter()
                .flatten()
                .map(|r| match (&r.tool_name, &r.rule_content) {
                    (Some(t), Some(c)) => format!("{t}({c})"),
                    (Some(t), None) => t.to_string(),
                    (None, Some(c)) => c.to_string(),
                    (None, None) => "?".into(),
                })
                .collect();
            format!(
                "{} {} rule {}",
                ty,
                w.behavior.as_deref().unwrap_or("allow"),
                rules.join(", ")
            )
        }
    };
    if let Some(d) = &w.destination {
        description.push_str(&format!(" ({d})"));
    }
    Some(PermissionSuggestion {
        tool_name: rule.and_then(|r| r.tool_name.clone()),
        directory: w.directories.and_then(|d| d.into_iter().next()),
        mode: w.mode,
        kind: ty,
        description: Cow::Owned(description),
        detail: Json::Raw(raw),
    })
}

fn control_request<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>, d: &Dialect) -> Result<(), Unmapped> {
    let w: ControlRequest = line.read()?;
    let request_id = w.request_id.unwrap_or_default();
    let r = w.request;
    // Remembered for its answer or its cancel.
    let lineno = cx.line;
    cx.memory().claude.requests.insert(
        &request_id,
        Request {
            subtype: r.subtype.to_string(),
            tool_use_id: r.tool_use_id.as_deref().map(str::to_owned),
            tool_name: r.tool_name.as_deref().map(str::to_owned),
        },
        lineno,
    );
    match &*r.subtype {
        "can_use_tool" => {
            // The invocation's name, when the call is known (the request's, else).
            let invoked = r
                .tool_use_id
                .as_deref()
                .and_then(|id| cx.memory().claude.calls.get(id))
                .map(|c| c.name.clone())
                .filter(|n| !n.is_empty());
            let tool_name = match invoked {
                Some(n) if r.tool_name.as_deref() != Some(&*n) => Cow::Owned(n),
                _ => r.tool_name.unwrap_or_default(),
            };
            let input = match r.input {
                Some(i) if is_object(i) => Json::Raw(i),
                _ => Json::Value(Value::Object(Default::default())),
            };
            let suggestions: Option<Vec<_>> = r
                .permission_suggestions
                .or(r.suggestions)
                .map(|v| v.into_iter().filter_map(suggestion).collect());
            let ext = cx.push(PermissionRequest {
                request_id,
                tool_kind: (d.tool_kind)(&tool_name),
                tool_name,
                tool_input: input,
                tool_use_id: r.tool_use_id,
                reason: r.decision_reason,
                blocked_path: r.blocked_path,
                suggestions: suggestions.filter(|s| !s.is_empty()),
                title: r.title.or(r.description),
                parent_call_id: None,
                options: None,
            });
            ext.put_opt("claude.displayName", r.display_name);
            ext.put_opt("claude.agentId", r.agent_id);
            ext.put_opt("claude.decisionReasonType", r.decision_reason_type);
        }
        "interrupt" => {
            turn_mut(cx).interrupted = true;
            let ext = cx.push(SessionStatus {
                status: SessionStatusKind::Interrupted,
                message: None,
            });
            ext.put("claude.requestId", request_id);
        }
        "set_permission_mode" => {
            let ext = cx.push(SessionMode {
                current_mode_id: r.mode.unwrap_or_default(),
                available_modes: Vec::new(),
            });
            ext.put("claude.requestId", request_id);
        }
        other => {
            let all: Pairs<&RawValue> = line.read()?;
            let ext = cx.push(Notice {
                subtype: Cow::Owned(format!("control_request/{other}")),
                message: None,
            });
            for (k, v) in all.0 {
                if k == "request" {
                    ext.put(k, v);
                }
            }
            ext.put("claude.requestId", request_id);
        }
    }
    Ok(())
}

#[derive(Deserialize)]
struct ControlResponse<'a> {
    #[serde(borrow)]
    response: ResponseEnvelope<'a>,
}

#[derive(Deserialize)]
struct ResponseEnvelope<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    subtype: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    request_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    error: Option<Str<'a>>,
    #[serde(borrow, default)]
    response: crate::wire::IfObject<ResponseBody<'a>>,
}

#[derive(Deserialize)]
struct ResponseBody<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    behavior: Option<Str<'a>>,
    #[serde(rename = "updatedInput", borrow)]
    updated_input: Option<&'a RawValue>,
    #[serde(rename = "updatedPermissions", borrow)]
    updated_permissions: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    message: Option<Str<'a>>,
    interrupt: Option<bool>,
    #[serde(
        rename = "toolUseID",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    tool_use_id: Option<Str<'a>>,
    #[serde(borrow)]
    commands: Option<Vec<SlashWire<'a>>>,
    #[serde(borrow)]
    models: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    account: Option<AccountWire<'a>>,
    #[serde(borrow, default)]
    agents: crate::wire::NameList<'a>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    output_style: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct SlashWire<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    name: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    description: Option<Str<'a>>,
    #[serde(
        rename = "argumentHint",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    argument_hint: Option<Str<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AccountWire<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    email: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    organization: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    subscription_type: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    token_source: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    api_key_source: Option<Str<'a>>,
}

fn control_response<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ControlResponse = line.read()?;
    let env = w.response;
    let request_id = env.request_id.unwrap_or_default();
    let request = cx.memory().claude.requests.remove(&request_id);
    if env.subtype.as_deref() == Some("error") {
        cx.push(ErrorEvent {
            message: env.error.unwrap_or(Cow::Borrowed("control request failed")),
            severity: Severity::Error,
            code: Some(Cow::Borrowed("control_error")),
            http_status: None,
            will_retry: None,
            attempt: None,
            max_retries: None,
            retry_delay_ms: None,
            request_id: Some(request_id),
            parent_call_id: None,
        });
        return Ok(());
    }
    let body = env.response.0;
    match body {
        Some(b) if b.behavior.is_some() => {
            let behavior = b.behavior.as_deref().unwrap_or("");
            let always = b
                .updated_permissions
                .is_some_and(|p| p.get().starts_with('[') && p.get() != "[]");
            let decision = match (behavior, always) {
                ("allow", true) => Decision::AllowAlways,
                ("allow", false) => Decision::Allow,
                (_, true) => Decision::DenyAlways,
                (_, false) => Decision::Deny,
            };
            let interrupt = b.interrupt.unwrap_or(false);
            if interrupt && behavior != "allow" {
                turn_mut(cx).interrupted = true;
            }
            let tool_use_id = b
                .tool_use_id
                .or_else(|| request.and_then(|r| r.tool_use_id).map(Cow::Owned));
            cx.push(PermissionResponse {
                request_id,
                decision,
                allowed: Some(behavior == "allow"),
                message: b.message,
                updated_input: b.updated_input.filter(|i| is_object(i)).map(Json::Raw),
                updated_permissions: b.updated_permissions.filter(|p| !is_null(p)).map(Json::Raw),
                interrupt,
                tool_use_id,
                option_id: None,
            });
        }
        Some(b)
            if cx.session_id.is_none()
                && (b.commands.is_some() || b.models.is_some() || b.account.is_some()) =>
        {
            // The initialize answer before the session is announced: it goes onto the
            // session's init.
            let answer = InitAnswer {
                request_id: request_id.to_string(),
                commands: b.commands.map(|v| {
                    v.into_iter()
                        .map(|c| {
                            (
                                c.name.unwrap_or_default().into_owned(),
                                c.description.unwrap_or_default().into_owned(),
                                c.argument_hint.unwrap_or_default().into_owned(),
                            )
                        })
                        .collect()
                }),
                models: b.models.map(|v| {
                    v.into_iter()
                        .filter(|m| is_object(m))
                        .map(|m| m.get().to_owned())
                        .collect()
                }),
                account: b.account.map(|a| {
                    [
                        a.email,
                        a.organization,
                        a.subscription_type,
                        a.token_source,
                        a.api_key_source,
                    ]
                    .map(|f| f.map(Cow::into_owned))
                }),
                agents: b
                    .agents
                    .0
                    .map(|v| v.into_iter().map(Cow::into_owned).collect()),
                output_style: b.output_style.map(Cow::into_owned),
            };
            let lineno = cx.line;
            cx.memory().claude.init.insert("", answer, lineno);
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("control_response/initialize"),
                message: Some(Cow::Borrowed(
                    "kept for the session_init that announces the session",
                )),
            });
            ext.put("claude.requestId", request_id);
        }
        Some(b) if b.commands.is_some() || b.models.is_some() || b.account.is_some() => {
            let init = SessionInit {
                slash_commands: b.commands.map(|v| {
                    v.into_iter()
                        .map(|c| SlashCommand {
                            name: c.name.unwrap_or_default(),
                            description: c.description.unwrap_or_default(),
                            argument_hint: c.argument_hint.unwrap_or_default(),
                        })
                        .collect()
                }),
                available_models: b.models.map(|v| {
                    v.into_iter()
                        .filter(|m| is_object(m))
                        .map(Json::Raw)
                        .collect()
                }),
                account: b.account.map(|a| Account {
                    email: a.email,
                    organization: a.organization,
                    subscription_type: a.subscription_type,
                    token_source: a.token_source,
                    api_key_source: a.api_key_source,
                }),
                agents: b.agents.0,
                ..SessionInit::default()
            };
            let ext = cx.push(init);
            ext.put_opt("claude.outputStyle", b.output_style);
            ext.put("claude.requestId", request_id);
        }
        _ => {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("control_response/success"),
                message: None,
            });
            ext.put("claude.requestId", request_id);
            ext.put_opt(
                "claude.requestSubtype",
                request.map(|r| Cow::<str>::Owned(r.subtype)),
            );
            // Rare: the body is read again, whole, for the notice.
            #[derive(Deserialize)]
            struct Raw<'a> {
                #[serde(borrow)]
                response: RawEnvelope<'a>,
            }
            #[derive(Deserialize)]
            struct RawEnvelope<'a> {
                #[serde(borrow)]
                response: Option<&'a RawValue>,
            }
            let raw: Raw = line.read()?;
            ext.put_opt("response", raw.response.response.filter(|r| !is_null(r)));
        }
    }
    Ok(())
}

#[derive(Deserialize)]
struct ControlCancel<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    request_id: Option<Str<'a>>,
}

fn control_cancel<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ControlCancel = line.read()?;
    let request_id = w.request_id.unwrap_or_default();
    let request = cx.memory().claude.requests.remove(&request_id);
    match request {
        Some(r) if r.subtype == "can_use_tool" => {
            cx.push(PermissionResponse {
                request_id,
                decision: Decision::Cancelled,
                allowed: Some(false),
                message: None,
                updated_input: None,
                updated_permissions: None,
                interrupt: false,
                tool_use_id: r.tool_use_id.map(Cow::Owned),
                option_id: None,
            });
        }
        // Not a permission request (a hook callback, …), or one this stream does not show.
        other => {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("control_cancel_request"),
                message: None,
            });
            ext.put("claude.requestId", request_id);
            ext.put(
                "claude.requestSubtype",
                other.map_or(Cow::Borrowed("unknown"), |r| Cow::Owned(r.subtype)),
            );
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    resets_at: Option<Count>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    rate_limit_type: Option<Str<'a>>,
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
        ev.status = info.status;
        ev.rate_limit_type = info.rate_limit_type;
    }
    let ext = cx.push(ev);
    ext.put_opt("claude.rateLimitInfo", info_raw);
    Ok(())
}

#[derive(Deserialize)]
struct ToolProgress<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool_use_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool_name: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    parent_tool_use_id: Option<Str<'a>>,
    elapsed_time_seconds: Option<f64>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    task_id: Option<Str<'a>>,
}

fn tool_progress<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ToolProgress = line.read()?;
    let ext = cx.push(ToolUpdate {
        call_id: w.tool_use_id.unwrap_or_default(),
        status: Some(Cow::Borrowed("running")),
        tool_name: w.tool_name,
        output: None,
        elapsed_ms: w
            .elapsed_time_seconds
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| (s * 1000.0).round() as u64),
        parent_call_id: w.parent_tool_use_id,
        title: None,
        input: None,
        locations: None,
    });
    ext.put_opt("claude.taskId", w.task_id);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// usage and sessions

/// A session file's line as `insights usage` and `insights sessions` read it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FactsLine<'a> {
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    ty: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    timestamp: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    session_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    cwd: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    request_id: Option<Str<'a>>,
    /// Older Claude Code versions wrote each response's cost.
    #[serde(rename = "costUSD")]
    cost_usd: Option<f64>,
    is_meta: Option<bool>,
    is_sidechain: Option<bool>,
    is_compact_summary: Option<bool>,
    #[serde(borrow)]
    message: Option<FactsMessage<'a>>,
}

#[derive(Deserialize)]
struct FactsMessage<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
    #[serde(borrow)]
    usage: Option<WireUsage<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
}

/// What a line of a Claude Code session file (`~/.claude/projects/…/*.jsonl`) tells
/// `usage` and `sessions`: an assistant line's tokens (the same `usage` the events carry),
/// keyed by message id and request id, since Claude Code writes one line per content block
/// of a message and a resumed session repeats earlier messages; a person's prompt.
pub(crate) fn line_facts<'a>(line: &'a str) -> Option<crate::usage::LineFacts<'a>> {
    let has_usage = line.contains(r#""usage":{"#);
    if !has_usage && !line.contains(r#""type":"user""#) {
        return None;
    }
    let w: FactsLine = serde_json::from_str(line).ok()?;
    let mut f = crate::usage::LineFacts {
        time: w.timestamp.as_deref().and_then(crate::time::millis),
        session: w.session_id,
        cwd: w.cwd,
        cost_usd: w.cost_usd,
        ..Default::default()
    };
    let msg = w.message?;
    match (w.ty.as_deref(), msg.usage) {
        (_, Some(u)) => {
            let tokens = u.tokens();
            // API errors are written as messages of the model `<synthetic>`, with no tokens.
            if tokens.is_zero() || msg.model.as_deref() == Some("<synthetic>") {
                return None;
            }
            f.model = match (msg.model, u.speed.as_deref()) {
                (Some(m), Some("fast")) => Some(Cow::Owned(format!("{m}-fast"))),
                (m, _) => m,
            };
            f.response = msg
                .id
                .as_deref()
                .map(|id| crate::ids::hash_pair(id, w.request_id.as_deref().unwrap_or("")));
            f.usage = Some(tokens);
        }
        (Some("user"), None) => {
            let content = msg.content?.get();
            let person = match content.as_bytes().first() {
                Some(b'"') => serde_json::from_str::<Str>(content)
                    .is_ok_and(|t| !INTERRUPT_TEXTS.contains(&&*t)),
                Some(b'[') => !content.contains(r#""tool_result""#),
                _ => false,
            };
            f.prompt = person
                && !w.is_meta.unwrap_or(false)
                && !w.is_sidechain.unwrap_or(false)
                && !w.is_compact_summary.unwrap_or(false);
            if !f.prompt {
                return None;
            }
        }
        _ => return None,
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subagent_answer_loses_the_footer_and_keeps_its_figures() {
        let raw: Box<RawValue> = serde_json::from_str(
            r#"[{"type":"text","text":"There are 2 files."},{"type":"text","text":"agentId: a1 (use SendMessage with to: 'a1' to continue this agent)\n<usage>subagent_tokens: 11790\ntool_uses: 1\nduration_ms: 134</usage>"}]"#,
        )
        .unwrap();
        let (answer, figures, agent) = subagent_answer(&raw);
        assert_eq!(answer.as_deref(), Some("There are 2 files."));
        assert_eq!(figures, [Some(11790), Some(1), Some(134)]);
        assert_eq!(agent.as_deref(), Some("a1"));
        let raw: Box<RawValue> = serde_json::from_str(r#""no footer""#).unwrap();
        assert_eq!(
            subagent_answer(&raw),
            (Some("no footer".into()), [None; 3], None)
        );
    }

    /// Converts one line and returns the events as JSON values (body and extensions only).
    fn conv(line: &str) -> Vec<Value> {
        let probe: Probe = serde_json::from_str(line).unwrap();
        assert!(sniff(&probe), "not recognised as Claude: {line}");
        let mut cx = Cx::default();
        convert(line, &probe, &mut cx).unwrap();
        cx.events
            .iter()
            .map(|(b, e)| {
                let mut v = serde_json::to_value(b).unwrap();
                v["event"] = Value::from(b.kind());
                if !e.is_empty() {
                    v["extensions"] = serde_json::to_value(e).unwrap();
                }
                v
            })
            .collect()
    }

    /// A compact boundary's metadata that the event has no field for goes to
    /// `claude.compactMetadata`, as written and in its order; none when there is none.
    #[test]
    fn compact_metadata_is_kept_whole() {
        let ev = conv(
            r#"{"type":"system","subtype":"compact_boundary","session_id":"s","uuid":"u","compact_metadata":{"trigger":"manual","pre_tokens":21916,"post_tokens":578,"cumulative_dropped_tokens":21338,"duration_ms":42,"preserved_segment":{"head_uuid":"h","anchor_uuid":"a","tail_uuid":"h"},"preserved_messages":{"anchor_uuid":"a","uuids":["h"]}}}"#,
        );
        assert_eq!(ev[0]["event"], "context_compaction");
        assert_eq!(
            (
                ev[0]["preTokens"].clone(),
                ev[0]["postTokens"].clone(),
                ev[0]["durationMs"].clone()
            ),
            (Value::from(21916), Value::from(578), Value::from(42))
        );
        let rest = &ev[0]["extensions"]["claude.compactMetadata"];
        assert_eq!(
            rest,
            &serde_json::json!({"cumulative_dropped_tokens": 21338,
                    "preserved_segment": {"head_uuid": "h", "anchor_uuid": "a", "tail_uuid": "h"},
                    "preserved_messages": {"anchor_uuid": "a", "uuids": ["h"]}})
        );
        let keys: Vec<&String> = rest.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3);
        let plain = conv(
            r#"{"type":"system","subtype":"compact_boundary","session_id":"s","uuid":"u","compact_metadata":{"trigger":"auto","pre_tokens":5}}"#,
        );
        assert!(plain[0].get("extensions").is_none());
    }

    /// A block of a kind this converter does not know is kept whole, raw JSON as written
    /// (it went through a `Value` before, and a number beyond f64 made it `null`).
    #[test]
    fn unknown_blocks_are_kept_as_written() {
        let line = r#"{"type":"assistant","message":{"content":[{"type":"future_block","id":"s1","name":"web_search","input":{"n":1e999,"q":"x"}}]}}"#;
        let probe: Probe = serde_json::from_str(line).unwrap();
        let mut cx = Cx::default();
        convert(line, &probe, &mut cx).unwrap();
        let (body, ext) = &cx.events[0];
        assert_eq!(body.kind(), "notice");
        assert_eq!(
            serde_json::to_string(ext).unwrap(),
            r#"{"claude.block":{"type":"future_block","id":"s1","name":"web_search","input":{"n":1e999,"q":"x"}}}"#
        );
    }

    #[test]
    fn tool_kinds() {
        assert_eq!(tool_kind("Bash"), ToolKind::Execute);
        assert_eq!(tool_kind("Agent"), ToolKind::Think);
        assert_eq!(tool_kind("mcp__probe__x"), ToolKind::Mcp);
        assert_eq!(tool_kind("ExitPlanMode"), ToolKind::Other);
        assert_eq!(tool_kind("TodoWrite"), ToolKind::Memory);
    }

    #[test]
    fn assistant_text_and_usage() {
        let ev = conv(
            r#"{"type":"assistant","message":{"id":"m1","model":"claude-x","content":[{"type":"text","text":"4"}],"usage":{"input_tokens":10,"output_tokens":5}},"parent_tool_use_id":null,"session_id":"s","uuid":"u"}"#,
        );
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0]["event"], "text");
        assert_eq!(ev[0]["kind"], "text");
        assert_eq!(ev[0]["model"], "claude-x");
        assert_eq!(ev[1]["event"], "usage_update");
        assert_eq!(ev[1]["stepUsage"]["input_tokens"], 10);
    }

    #[test]
    fn mcp_tool_use_keeps_server_and_tool() {
        let ev = conv(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__probe__danger_note","input":{"note":"x"}}]}}"#,
        );
        assert_eq!(ev[0]["kind"], "mcp");
        assert_eq!(ev[0]["mcpServer"], "probe");
        assert_eq!(ev[0]["mcpTool"], "danger_note");
    }

    #[test]
    fn todowrite_is_also_a_plan() {
        let ev = conv(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"TodoWrite","input":{"todos":[{"content":"a","status":"in_progress","activeForm":"doing a"},{"content":"b","status":"weird"}]}}]}}"#,
        );
        assert_eq!(ev[1]["event"], "plan_update");
        assert_eq!(ev[1]["entries"][0]["status"], "in_progress");
        assert_eq!(ev[1]["entries"][1]["status"], "pending");
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
    fn the_cli_s_interrupt_lines_are_synthetic_user_input() {
        // claude-sdk/interrupt.jsonl line 10: the CLI's text after an interrupt.
        for text in INTERRUPT_TEXTS {
            let ev = conv(&format!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"text","text":"{text}"}}]}},"parent_tool_use_id":null,"session_id":"s"}}"#
            ));
            assert_eq!(ev[0]["event"], "user_input");
            assert_eq!(ev[0]["isSynthetic"], true);
            assert_eq!(ev[0]["extensions"]["claude.interruptNotice"], true);
            let ev = conv(&format!(
                r#"{{"type":"user","message":{{"role":"user","content":"{text}"}}}}"#
            ));
            assert_eq!(ev[0]["isSynthetic"], true);
        }
        // A person who types something else is a person.
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":"[Request interrupted by user] no, go on"}}"#,
        );
        assert!(ev[0].get("isSynthetic").is_none());
    }

    #[test]
    fn user_string_content_is_user_input() {
        let ev =
            conv(r#"{"type":"user","message":{"role":"user","content":"hi"},"isReplay":true}"#);
        assert_eq!(ev[0]["event"], "user_input");
        assert_eq!(ev[0]["text"], "hi");
        assert_eq!(ev[0]["extensions"]["isReplay"], true);
    }

    #[test]
    fn tool_result_error_string() {
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"<tool_use_error>File does not exist.</tool_use_error>","is_error":true,"tool_use_id":"toolu_123"}]},"tool_use_result":"Error: File does not exist."}"#,
        );
        assert_eq!(ev[0]["event"], "tool_completion");
        assert_eq!(ev[0]["status"], "failed");
        assert_eq!(ev[0]["isError"], true);
        assert_eq!(ev[0]["output"], "Error: File does not exist.");
    }

    #[test]
    fn edit_result_gives_file_change_with_diff() {
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"ok"}]},"tool_use_result":{"filePath":"/p/f.py","oldString":"a","newString":"b","structuredPatch":[{"oldStart":3,"oldLines":1,"newStart":3,"newLines":1,"lines":["-a","+b"]}]}}"#,
        );
        assert_eq!(ev[1]["event"], "file_change");
        assert_eq!(ev[1]["changeKind"], "update");
        assert_eq!(
            ev[1]["diff"],
            "--- a/p/f.py\n+++ b/p/f.py\n@@ -3,1 +3,1 @@\n-a\n+b\n"
        );
    }

    #[test]
    fn created_file_diff_from_content() {
        let ev = conv(
            r##"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"ok"}]},"tool_use_result":{"type":"create","filePath":"/w/n.md","content":"# N\nx\n","structuredPatch":[]}}"##,
        );
        assert_eq!(ev[1]["changeKind"], "add");
        assert_eq!(
            ev[1]["diff"],
            "--- /dev/null\n+++ b/w/n.md\n@@ -0,0 +1,2 @@\n+# N\n+x\n"
        );
    }

    #[test]
    fn can_use_tool_with_suggestions() {
        let ev = conv(
            r#"{"type":"control_request","request_id":"f5","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"./gradlew"},"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"./gradlew:*"}],"behavior":"allow","destination":"localSettings"}],"tool_use_id":"toolu_1","blocked_path":"/etc"}}"#,
        );
        assert_eq!(ev[0]["event"], "permission_request");
        assert_eq!(ev[0]["requestId"], "f5");
        assert_eq!(ev[0]["toolKind"], "execute");
        assert_eq!(ev[0]["blockedPath"], "/etc");
        let s = &ev[0]["suggestions"][0];
        assert_eq!(s["type"], "addRules");
        assert_eq!(s["toolName"], "Bash");
        assert_eq!(
            s["description"],
            "addRules allow rule Bash(./gradlew:*) (localSettings)"
        );
    }

    #[test]
    fn deny_with_interrupt() {
        let ev = conv(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"behavior":"deny","message":"no","interrupt":true}}}"#,
        );
        assert_eq!(ev[0]["event"], "permission_response");
        assert_eq!(ev[0]["decision"], "deny");
        assert_eq!(ev[0]["interrupt"], true);
        assert_eq!(ev[0]["allowed"], false);
    }

    #[test]
    fn control_error_is_an_error() {
        let ev = conv(
            r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":"boom"}}"#,
        );
        assert_eq!(ev[0]["event"], "error");
        assert_eq!(ev[0]["message"], "boom");
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
    fn unknown_system_subtype_is_a_notice_with_data() {
        let ev = conv(r#"{"type":"system","subtype":"files_persisted","files":["a"],"uuid":"u"}"#);
        assert_eq!(ev[0]["event"], "notice");
        assert_eq!(ev[0]["subtype"], "system/files_persisted");
        assert_eq!(ev[0]["extensions"]["files"][0], "a");
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

    /// Converts lines of one stream, with one memory, and returns all their events.
    fn stream(lines: &[&str]) -> Vec<Value> {
        crate::test_support::convert_stream(&PROVIDER, lines)
    }

    fn find<'v>(ev: &'v [Value], kind: &str) -> Vec<&'v Value> {
        ev.iter().filter(|e| e["event"] == kind).collect()
    }

    const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}"#;

    #[test]
    fn http_status_from_the_cli_message() {
        assert_eq!(http_status_of("API Error: 500 mock: internal"), Some(500));
        assert_eq!(
            http_status_of("API Error: Request rejected (429) · rate limited"),
            Some(429)
        );
        assert_eq!(
            http_status_of("API Error: 529 {\"type\":\"error\"}"),
            Some(529)
        );
        assert_eq!(http_status_of("API Error: Request was aborted."), None);
        assert_eq!(http_status_of("no error 500 here"), None);
    }

    #[test]
    fn a_failed_turn_states_its_error_once_then_ends() {
        // The CLI's synthetic message says it: no second error at the result.
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: Request rejected (429) · rate limited"}]},"error":"rate_limit","session_id":"s1"}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429)","session_id":"s1"}"#,
        ]);
        let errors = find(&ev, "error");
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
        let done = find(&ev, "tool_completion");
        assert_eq!(done[0]["callId"], "t1");
        assert_eq!(done[0]["status"], "cancelled");
        // t2 never ended on the wire: ended by the stopped turn, inferred.
        assert_eq!(done[1]["callId"], "t2");
        assert_eq!(done[1]["status"], "cancelled");
        assert_eq!(done[1]["extensions"]["insights.inferred"], true);
        let tc = find(&ev, "turn_complete")[0];
        assert_eq!(tc["stopReason"], "interrupted");
        assert_eq!(tc["extensions"]["claude.stopReason"], "tool_use");
        assert!(find(&ev, "error").is_empty());
        // The control lines name the session the stream named.
        assert_eq!(find(&ev, "session_status")[0]["sessionId"], "s1");
        assert_eq!(
            find(&ev, "notice")[0]["extensions"]["claude.requestSubtype"],
            "interrupt"
        );
    }

    #[test]
    fn a_denial_without_interrupt_fails_the_call() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -r build"}}]},"session_id":"s1"}"#,
            r#"{"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"rm -r build"},"tool_use_id":"t1"}}"#,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"p1","response":{"behavior":"deny","message":"no"}}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"The user denied this tool use."}]},"session_id":"s1"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s1"}"#,
        ]);
        let answer = find(&ev, "permission_response")[0];
        assert_eq!(answer["decision"], "deny");
        // The answer names no call; its request did.
        assert_eq!(answer["toolUseId"], "t1");
        assert_eq!(find(&ev, "tool_completion")[0]["status"], "failed");
        assert!(find(&ev, "turn_complete")[0].get("stopReason").is_none());
    }

    #[test]
    fn a_cancel_is_a_permission_answer_only_for_a_permission_request() {
        let ev = stream(&[
            INIT,
            r#"{"type":"control_request","request_id":"h1","request":{"subtype":"hook_callback","callback_id":"c"}}"#,
            r#"{"type":"control_cancel_request","request_id":"h1"}"#,
            r#"{"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{},"tool_use_id":"t9"}}"#,
            r#"{"type":"control_cancel_request","request_id":"p1"}"#,
            r#"{"type":"control_cancel_request","request_id":"gone"}"#,
        ]);
        let answers = find(&ev, "permission_response");
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0]["requestId"], "p1");
        assert_eq!(answers[0]["decision"], "cancelled");
        assert_eq!(answers[0]["toolUseId"], "t9");
        let notices: Vec<_> = find(&ev, "notice")
            .into_iter()
            .filter(|n| n["subtype"] == "control_cancel_request")
            .map(|n| n["extensions"]["claude.requestSubtype"].clone())
            .collect();
        assert_eq!(notices, vec!["hook_callback", "unknown"]);
    }

    #[test]
    fn a_subagent_write_without_result_metadata_changes_its_file() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a1","name":"Agent","input":{"description":"d","prompt":"p"}}]},"session_id":"s1"}"#,
            r##"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"w1","name":"Write","input":{"file_path":"/w/n.md","content":"# N\n"}}]},"parent_tool_use_id":"a1","session_id":"s1"}"##,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"w1","content":"File created successfully at: /w/n.md"}]},"parent_tool_use_id":"a1","session_id":"s1"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"e1","name":"Edit","input":{"file_path":"/w/m.md","old_string":"a","new_string":"b"}}]},"parent_tool_use_id":"a1","session_id":"s1"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"e1","is_error":true,"content":"File has not been read yet."}]},"parent_tool_use_id":"a1","session_id":"s1"}"#,
        ]);
        let changes = find(&ev, "file_change");
        assert_eq!(changes.len(), 1, "a failed edit changes nothing");
        assert_eq!(changes[0]["path"], "/w/n.md");
        assert_eq!(changes[0]["changeKind"], "add");
        assert_eq!(
            changes[0]["diff"],
            "--- /dev/null\n+++ b/w/n.md\n@@ -0,0 +1,1 @@\n+# N\n"
        );
        assert_eq!(changes[0]["parentCallId"], "a1");
    }

    #[test]
    fn a_nested_subagent_completes_from_its_task_and_result() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"outer","name":"Agent","input":{"description":"o","prompt":"p"}}]},"session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_started","task_id":"ta","tool_use_id":"outer","task_type":"local_agent","session_id":"s1"}"#,
            // The inner task starts before its call's line.
            r#"{"type":"system","subtype":"task_started","task_id":"tb","tool_use_id":"inner","task_type":"local_agent","session_id":"s1"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"inner","name":"Agent","input":{"description":"i","prompt":"p"}}]},"parent_tool_use_id":"outer","session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_notification","task_id":"tb","tool_use_id":"inner","status":"completed","session_id":"s1"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"inner","content":[{"type":"text","text":"2 files"}]}]},"parent_tool_use_id":"outer","session_id":"s1"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"outer","content":"done"}]},"tool_use_result":{"status":"completed","agentId":"ta"},"session_id":"s1"}"#,
        ]);
        let done = find(&ev, "subagent_complete");
        assert_eq!(done.len(), 2);
        assert_eq!(done[0]["callId"], "inner");
        assert_eq!(done[0]["agentId"], "tb");
        assert_eq!(done[0]["status"], "completed");
        assert_eq!(done[1]["callId"], "outer");
        assert_eq!(done[1]["agentId"], "ta");
    }

    #[test]
    fn a_background_subagent_ends_with_its_notification() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"bg","name":"Agent","input":{"description":"b","prompt":"p","run_in_background":true}}]},"session_id":"s1"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"bg","content":"launched"}]},"tool_use_result":{"status":"async_launched","agentId":"tb"},"session_id":"s1"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_notification","task_id":"tb","tool_use_id":"bg","status":"completed","summary":"ok","session_id":"s1"}"#,
        ]);
        let done = find(&ev, "subagent_complete");
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["callId"], "bg");
        assert_eq!(done[0]["status"], "completed");
        assert_eq!(done[0]["agentId"], "tb");
    }

    #[test]
    fn the_initialize_answer_goes_onto_the_session_init() {
        let ev = stream(&[
            r#"{"type":"control_request","request_id":"i1","request":{"subtype":"initialize"}}"#,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"i1","response":{"commands":[{"name":"compact","description":"Free up context","argumentHint":""}],"models":[{"value":"default"}],"account":{"email":"a@b","tokenSource":"none"}}}}"#,
            r#"{"type":"user","message":{"content":"hi"},"session_id":""}"#,
            r#"{"type":"system","subtype":"init","session_id":"s1","slash_commands":["compact"],"apiKeySource":"none"}"#,
            r#"{"type":"user","message":{"content":"again"},"session_id":""}"#,
        ]);
        let inits = find(&ev, "session_init");
        assert_eq!(inits.len(), 1);
        assert_eq!(inits[0]["sessionId"], "s1");
        assert_eq!(
            inits[0]["slashCommands"][0]["description"],
            "Free up context"
        );
        assert_eq!(inits[0]["availableModels"][0]["value"], "default");
        assert_eq!(inits[0]["account"]["email"], "a@b");
        assert_eq!(inits[0]["account"]["apiKeySource"], "none");
        assert_eq!(inits[0]["extensions"]["claude.initializeRequestId"], "i1");
        let inputs = find(&ev, "user_input");
        assert_eq!(inputs[0]["sessionId"], "", "not named yet");
        assert_eq!(inputs[1]["sessionId"], "s1");
    }

    #[test]
    fn a_permission_request_takes_the_invocation_tool_name() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__srv__do","input":{}}]},"session_id":"s1"}"#,
            r#"{"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool","tool_name":"do","input":{},"tool_use_id":"t1"}}"#,
        ]);
        assert_eq!(
            find(&ev, "permission_request")[0]["toolName"],
            "mcp__srv__do"
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
