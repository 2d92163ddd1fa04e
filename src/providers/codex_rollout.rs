//! Codex's own session files: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, one line per
//! record, `{"timestamp", "type", "payload"}` (`testdata/session-files/codex-*/`). Read by the
//! `codex` provider, whose events they become.
//!
//! | record | events |
//! |---|---|
//! | `session_meta` | `session_init` (id, cwd, CLI version; originator, source and model provider in `extensions`) |
//! | `turn_context` | the turn's model and cwd are remembered for the lines after it; its `collaboration_mode` is a `session_mode` when it changes (`plan`; a session starts in `default`), as the stream's `thread/settings/updated` |
//! | `event_msg` `task_started`, `task_complete`, `turn_aborted` | `turn_start`, `turn_complete` (interrupted: its open calls end `cancelled`, inferred), as the wire protocol's events |
//! | `event_msg` `token_count` | `usage_update` (`stepUsage` the response's tokens, `total` the session's), with the turn's model |
//! | `event_msg`, anything else | `notice` `codex/event/<type>`, the payload in `extensions.msg` (the file repeats each item there: the `response_item`s carry them) |
//! | `event_msg` `item_completed` of a `FileChange` | its files (kind, move, diff) kept for the call's output; the line is a notice as above |
//! | `event_msg` `item_completed` of a `Plan` | `text` kind `plan` (plan mode's proposed plan, as the stream's `plan` item); the agent message after it leaves its `<proposed_plan>` block out |
//! | `response_item` `message` | `user_input` (`isSynthetic` for what Codex writes itself: a `provenance` other than `user`, else `<environment_context>`, `<turn_aborted>`, …), `text`; `developer`/`system` → `notice` `codex/instructions` |
//! | `response_item` `reasoning` | `text` kind `thinking` (the summary; then the raw content when the file has it, marked `codex.rawReasoning`) |
//! | `response_item` `function_call`, `custom_tool_call` | `tool_invocation` (`exec_command`/`shell` → execute with the command as title, `apply_patch` → edit); `update_plan` → `plan_update`, as the stream's plans |
//! | `response_item` `*_output` | `tool_completion`: the header lines (`Wall time`, `Process exited with code N`/`Exit code: N`, `Output:`) become `durationMs` and the output `{stdout, stderr, exit_code}`, as the stream's command completions; `failed` on a non-zero exit code and on Codex's words for a call that could not run (`unsupported call`, `write_stdin failed`, …, `rejected by user`), `cancelled` when the user aborted it; a successful `apply_patch` → one `file_change` per file with its git diff. An `update_plan`'s output, or one that names no call → `notice` |
//! | `token_usage_record`, `world_state`, `compacted`, other `response_item`s | `notice` `codex/<type>`, the payload in `extensions.payload` |
//!
//! **Correlated:** the turn's model (from `turn_context`) on `usage_update`; a call's name,
//! patch and `FileChange` item until its output; the session's cwd, against which a patch's
//! relative paths are read. **Inferred:** none. A file with no `FileChange` item (older Codex)
//! gives the files the patch names; an update there names no line numbers, so its
//! `file_change` carries no diff (an added file's content is one).

use super::codex::{notice, Change};
use super::memo::Memo;
use super::{Cx, Unmapped};
use crate::detect::Probe;
use crate::event::{
    ChangeKind, Json, Notice, SessionInit, Str, Text, TextKind, ToolCallStatus, ToolCompletion,
    ToolInvocation, ToolKind, UserInput,
};
use crate::wire::{is_null, is_object, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The record types of a session file.
const TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "token_usage_record",
    "world_state",
    "compacted",
];

/// `event_msg` payloads mapped as the wire protocol maps them (`codex::legacy`).
const TURN_EVENTS: &[&str] = &["task_started", "turn_aborted", "token_count"];

crate::providers::memo::remember! {
    /// What a session file's lines need of earlier lines.
    pub struct Memory {
        /// The turn's model and the session's cwd, under [`MODEL`] and [`CWD`].
        pub context: Memo<String>,
        /// Calls invoked and not yet answered, by call id: the tool's name and, for
        /// `apply_patch`, the patch.
        pub calls: Memo<Call>,
    }
}

const MODEL: &str = "model";
const CWD: &str = "cwd";
/// Set by a `Plan` item until the agent message whose `<proposed_plan>` block it is.
const PLAN: &str = "plan";

/// A call until its output.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    name: String,
    patch: Option<String>,
    /// The files of the call's `FileChange` item (`event_msg` `item_completed`), which
    /// Codex writes before the call's output: each with its kind and diff.
    changes: Option<Vec<Change>>,
}

/// Whether a line is a session file's record: one of [`TYPES`], with a `timestamp`.
pub fn sniff(p: &Probe) -> bool {
    p.timestamp.is_some() && p.ty().is_some_and(|t| TYPES.contains(&t))
}

#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow)]
    payload: &'a RawValue,
}

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(rename = "type")]
    ty: OptStr<'a>,
    id: OptStr<'a>,
    cwd: OptStr<'a>,
    cli_version: OptStr<'a>,
    originator: OptStr<'a>,
    /// Where the session came from: a name (`cli`, `vscode`, `exec`…), or an object for a
    /// subagent's or a custom session (`{"subagent":"review"}`), kept as it is.
    #[serde(borrow, default)]
    source: Option<&'a RawValue>,
    model_provider: OptStr<'a>,
    model: OptStr<'a>,
    turn_id: OptStr<'a>,
    role: OptStr<'a>,
    /// A `turn_context`'s collaboration mode (`{"mode":"plan","settings":{…}}`).
    #[serde(borrow, default)]
    collaboration_mode: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<Vec<Part<'a>>>,
    /// Reasoning's summary parts (`turn_context` has a `summary` setting, a string).
    #[serde(borrow, default)]
    summary: Option<&'a RawValue>,
    name: OptStr<'a>,
    call_id: OptStr<'a>,
    arguments: OptStr<'a>,
    input: OptStr<'a>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    internal_chat_message_metadata_passthrough: Option<Passthrough<'a>>,
    /// An `item_completed`'s item.
    #[serde(borrow, default)]
    item: Option<Item<'a>>,
}

#[derive(Deserialize)]
struct Passthrough<'a> {
    #[serde(borrow)]
    turn_id: OptStr<'a>,
    /// Where each part of a message comes from: `provenance.type` `user`, or `harness` for
    /// what Codex writes itself.
    #[serde(default)]
    content_item_metadata: Option<Vec<ItemMeta<'a>>>,
}

#[derive(Deserialize)]
struct ItemMeta<'a> {
    #[serde(borrow, default)]
    provenance: Option<Provenance<'a>>,
}

#[derive(Deserialize)]
struct Provenance<'a> {
    #[serde(rename = "type", borrow)]
    ty: OptStr<'a>,
}

/// The item of an `event_msg` `item_completed` (the thread item the live stream sends);
/// read for a `FileChange`'s files.
#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow)]
    ty: OptStr<'a>,
    id: OptStr<'a>,
    #[serde(borrow, default)]
    changes: Option<&'a RawValue>,
    /// A `Plan` item's text: the `<proposed_plan>` block of the agent message after it.
    #[serde(borrow)]
    text: OptStr<'a>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow)]
    text: OptStr<'a>,
}

/// Converts one record of a session file.
pub fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let r: Record = crate::members::read(line, probe.members())?;
    let ty = probe.ty().unwrap_or("");
    cx.wire_time(probe.timestamp.and_then(|t| t.str()));
    if ty == "event_msg" {
        return event_msg(r.payload, cx);
    }
    let p: Payload = serde_json::from_str(r.payload.get())?;
    cx.turn_id = p.turn_id.0.clone().or_else(|| {
        p.internal_chat_message_metadata_passthrough
            .as_ref()?
            .turn_id
            .0
            .clone()
    });
    match ty {
        "session_meta" => session_meta(p, cx),
        "turn_context" => {
            let line = cx.line;
            let memory = &mut cx.memory().codex_rollout.context;
            if let Some(m) = &p.model.0 {
                memory.insert(MODEL, m.to_string(), line);
            }
            if let Some(c) = &p.cwd.0 {
                memory.insert(CWD, c.to_string(), line);
            }
            // The thread's model, whose the turn's `modelUsage` is (an aborted turn's too,
            // which the wire protocol's code ends).
            if let Some(m) = &p.model.0 {
                super::codex::set_thread_model(cx, None, m);
            }
            cx.memory().codex_rollout.context.remove(PLAN);
            notice(
                cx,
                Cow::Borrowed("codex/turn_context"),
                Some(("payload", r.payload)),
            );
            // Every turn names its collaboration mode: a `session_mode` when it changes, as
            // the live stream's `thread/settings/updated` says it.
            let collab = p.collaboration_mode.filter(|m| is_object(m));
            if let Some(raw) = collab {
                if let Some(mode) = super::codex::collaboration_mode(raw) {
                    super::codex::thread_collaboration(cx, mode, raw, false);
                }
            }
        }
        "response_item" => response_item(p, r.payload, cx),
        _ => {
            notice(
                cx,
                Cow::Owned(format!("codex/{ty}")),
                Some(("payload", r.payload)),
            );
        }
    }
    Ok(())
}

fn session_meta<'a>(p: Payload<'a>, cx: &mut Cx<'a>) {
    let line = cx.line;
    if let Some(c) = &p.cwd.0 {
        cx.memory()
            .codex_rollout
            .context
            .insert(CWD, c.to_string(), line);
    }
    if let Some(id) = p.id.0.clone().filter(|s| !s.is_empty()) {
        super::codex::set_stream_thread(cx, &id);
        cx.session_id = Some(id);
    }
    let ext = cx.push(SessionInit {
        cwd: p.cwd.0,
        version: p.cli_version.0,
        ..SessionInit::default()
    });
    ext.put_opt("codex.originator", p.originator.0);
    ext.put_opt("codex.source", p.source.filter(|v| !is_null(v)));
    ext.put_opt("codex.modelProvider", p.model_provider.0);
}

/// An `event_msg`: the protocol's own event, as the wire protocol maps it, or a notice.
fn event_msg<'a>(payload: &'a RawValue, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    #[derive(Deserialize)]
    struct Ty<'a> {
        #[serde(rename = "type", borrow)]
        ty: OptStr<'a>,
    }
    let t: Ty = serde_json::from_str(payload.get())?;
    let ty = t.ty.0.unwrap_or_default();
    if ty == "task_complete" {
        return task_complete(payload, cx);
    }
    if ty == "item_completed" && item_completed(payload, cx)? {
        return Ok(());
    }
    if !TURN_EVENTS.contains(&&*ty) {
        notice(
            cx,
            Cow::Owned(format!("codex/event/{ty}")),
            Some(("msg", payload)),
        );
        return Ok(());
    }
    super::codex::legacy(payload, None, cx)?;
    if ty == "token_count" {
        let model = cx.memory().codex_rollout.context.get(MODEL).cloned();
        for (body, _) in cx.events.iter_mut() {
            if let crate::event::Body::UsageUpdate(u) = body {
                if u.model.is_none() {
                    u.model = model.clone().map(Cow::Owned);
                }
            }
        }
    }
    Ok(())
}

/// A `Plan` item (plan mode's proposed plan) is a `text` of kind `plan`, as the live stream's
/// `plan` item, and the agent message after it leaves its `<proposed_plan>` block out; `true`
/// then, the line being mapped. A call's `FileChange` item: its files, with their kinds and
/// diffs, kept for the call's output (the `event_msg` stays a notice, as the other
/// `item_completed`s: the `response_item`s carry the same calls and messages).
fn item_completed<'a>(payload: &'a RawValue, cx: &mut Cx<'a>) -> Result<bool, Unmapped> {
    let p: Payload = serde_json::from_str(payload.get())?;
    let Some(it) = p.item else { return Ok(false) };
    if it.ty.as_deref() == Some("Plan") {
        let Some(text) = it.text.0 else {
            return Ok(false);
        };
        let line = cx.line;
        cx.memory()
            .codex_rollout
            .context
            .insert(PLAN, String::new(), line);
        let model = cx.memory().codex_rollout.context.get(MODEL).cloned();
        cx.push(Text {
            text,
            kind: TextKind::Plan,
            parent_call_id: None,
            model: model.map(Cow::Owned),
            message_id: it.id.0,
        });
        return Ok(true);
    }
    if it.ty.as_deref() != Some("FileChange") {
        return Ok(false);
    }
    let Some(id) = it.id.0 else { return Ok(false) };
    let changes = super::codex::legacy_changes(it.changes);
    if let Some(call) = cx.memory().codex_rollout.calls.get_mut(&id) {
        call.changes = Some(changes);
    }
    Ok(false)
}

/// The end of a turn; with an `error` (the API failed), the error and a failed end.
fn task_complete<'a>(payload: &'a RawValue, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    #[derive(Deserialize)]
    struct Done<'a> {
        turn_id: OptStr<'a>,
        last_agent_message: OptStr<'a>,
        duration_ms: Option<crate::wire::Count>,
        #[serde(borrow, default)]
        error: Option<Failure<'a>>,
    }
    #[derive(Deserialize)]
    struct Failure<'a> {
        message: OptStr<'a>,
        #[serde(borrow, default)]
        codex_error_info: Option<&'a RawValue>,
    }
    let d: Done = serde_json::from_str(payload.get())?;
    cx.turn_id = d.turn_id.0;
    let failed = d.error.is_some();
    let mut errors = None;
    if let Some(e) = d.error {
        let message = e.message.0.unwrap_or(Cow::Borrowed("error"));
        errors = Some(vec![message.clone()]);
        // `codex_error_info` is a word (`internal_server_error`) or an object naming one.
        let code = e.codex_error_info.and_then(|c| {
            serde_json::from_str::<String>(c.get()).ok().or_else(|| {
                super::jsonrpc::member_names(c.get())
                    .into_iter()
                    .next()
                    .map(Cow::into_owned)
            })
        });
        let http_status = crate::wire::http_status_in(&message);
        let mut ev = super::codex::error_event(message, crate::event::Severity::Error);
        ev.http_status = http_status;
        ev.code = code.map(Cow::Owned);
        let ext = cx.push(ev);
        ext.put_opt("codex.errorInfo", e.codex_error_info);
    }
    let usage = super::codex::turn_usage(cx, cx.turn_id.clone().as_deref());
    // The turn's usage under the model its `turn_context` named.
    let model_usage = super::codex::turn_model_usage(cx, usage.as_ref());
    // The words of the stream's `turn/completed`: `success`/`completed`, or
    // `error_api`/`failed` with the error's message.
    let (subtype, stop_reason) = if failed {
        ("error_api", "failed")
    } else {
        ("success", "completed")
    };
    cx.push(crate::event::TurnComplete {
        is_error: failed,
        usage,
        model_usage,
        subtype: Some(Cow::Borrowed(subtype)),
        stop_reason: Some(Cow::Borrowed(stop_reason)),
        errors,
        result: d.last_agent_message.0,
        duration_ms: d.duration_ms.map(|c| c.0),
        ..crate::event::TurnComplete::default()
    });
    Ok(())
}

/// Text Codex writes into the conversation itself, not the person: the context it sends
/// with the first prompt, the instructions of `AGENTS.md`, the marker of an interrupted
/// turn. Files that say where a message comes from (`provenance`) are believed; older ones
/// are known by the tags Codex writes.
fn synthetic(text: &str, meta: Option<&Passthrough>) -> bool {
    let said = meta
        .and_then(|m| m.content_item_metadata.as_ref())
        .map(|items| {
            items.iter().any(|i| {
                i.provenance
                    .as_ref()
                    .and_then(|p| p.ty.as_deref())
                    .is_some_and(|t| t != "user")
            })
        });
    if let Some(s) = said {
        return s;
    }
    let t = text.trim_start();
    [
        "<environment_context>",
        "<user_instructions>",
        "<INSTRUCTIONS>",
        "# AGENTS.md",
        "<turn_aborted>",
        "<user_shell_command>",
        "<subagent_notification>",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

fn joined<'a>(parts: Option<Vec<Part<'a>>>) -> Option<Str<'a>> {
    let mut texts: Vec<Str<'a>> = parts?.into_iter().filter_map(|p| p.text.0).collect();
    match texts.len() {
        0 => None,
        1 => texts.pop(),
        _ => Some(Cow::Owned(texts.concat())),
    }
}

fn response_item<'a>(p: Payload<'a>, payload: &'a RawValue, cx: &mut Cx<'a>) {
    let ty = p.ty.0.clone().unwrap_or_default();
    match &*ty {
        "message" => {
            let role = p.role.0.clone().unwrap_or_default();
            let text = joined(p.content).unwrap_or_default();
            match &*role {
                "user" => {
                    let meta = p.internal_chat_message_metadata_passthrough.as_ref();
                    cx.push(UserInput {
                        is_synthetic: synthetic(&text, meta),
                        text,
                        images: None,
                        parent_call_id: None,
                    });
                }
                "assistant" => {
                    let context = &mut cx.memory().codex_rollout.context;
                    let model = context.get(MODEL).cloned();
                    // The plan was said by its item.
                    let text = match context.remove(PLAN) {
                        Some(_) => super::codex::strip_plan_block(text),
                        None => text,
                    };
                    cx.push(Text {
                        text,
                        kind: TextKind::Text,
                        parent_call_id: None,
                        model: model.map(Cow::Owned),
                        message_id: p.id.0,
                    });
                }
                _ => {
                    let ext = cx.push(Notice {
                        subtype: Cow::Borrowed("codex/instructions"),
                        message: None,
                    });
                    ext.put("codex.role", role);
                    ext.put("codex.text", text);
                }
            }
        }
        "reasoning" => {
            let summary = joined(
                p.summary
                    .and_then(|r| serde_json::from_str::<Vec<Part>>(r.get()).ok()),
            );
            let raw = joined(p.content);
            // The summary, then the raw reasoning, marked as such (`codex.rawReasoning`).
            for (text, is_raw) in [(summary, false), (raw, true)] {
                let Some(text) = text else { continue };
                let ext = cx.push(Text {
                    text,
                    kind: TextKind::Thinking,
                    parent_call_id: None,
                    model: None,
                    message_id: p.id.0.clone(),
                });
                if is_raw {
                    ext.put(super::codex::RAW_REASONING, true);
                }
            }
            if cx.events.is_empty() {
                notice(
                    cx,
                    Cow::Borrowed("codex/reasoning"),
                    Some(("payload", payload)),
                );
            }
        }
        "function_call" | "custom_tool_call" => invocation(p, cx),
        "function_call_output" | "custom_tool_call_output" => output(p, payload, cx),
        _ => {
            notice(
                cx,
                Cow::Owned(format!("codex/{ty}")),
                Some(("payload", payload)),
            );
        }
    }
}

fn invocation<'a>(p: Payload<'a>, cx: &mut Cx<'a>) {
    let name = p.name.0.unwrap_or_default();
    let call_id = p.call_id.0.unwrap_or_default();
    let line = cx.line;
    // A plan is the plan's `plan_update`, as the live stream's (`turn/plan/updated`,
    // `todo_list`), not a call; its output ("Plan updated") is a notice.
    if name == "update_plan" {
        if let Some(plan) = p
            .arguments
            .as_deref()
            .and_then(|a| serde_json::from_str::<super::codex::Plan>(a).ok())
        {
            let call = Call {
                name: name.to_string(),
                patch: None,
                changes: None,
            };
            cx.memory().codex_rollout.calls.insert(&call_id, call, line);
            let explanation = plan.explanation.0.map(|e| Cow::Owned(e.into_owned()));
            let steps = plan.plan.map(|steps| {
                steps
                    .into_iter()
                    .map(super::codex::PlanStep::into_owned)
                    .collect()
            });
            cx.push(super::codex::plan_update(explanation, steps, Some(call_id)));
            return;
        }
    }
    // `function_call` arguments are JSON text; a custom tool's input is free text.
    let input: Json<'a> = match p.arguments.as_deref() {
        Some(a) => serde_json::from_str::<serde_json::Value>(a)
            .map(Json::Value)
            .unwrap_or_else(|_| Json::Str(Cow::Owned(a.to_owned()))),
        None => Json::Value(serde_json::json!({ "input": p.input.as_deref().unwrap_or("") })),
    };
    // The command, as the stream's: a string, or an argv list (`["bash", "-lc", script]`).
    let command = p.arguments.as_deref().and_then(|a| {
        #[derive(Deserialize)]
        struct Cmd<'x> {
            #[serde(borrow)]
            cmd: Option<&'x RawValue>,
            #[serde(borrow)]
            command: Option<&'x RawValue>,
        }
        let c: Cmd = serde_json::from_str(a).ok()?;
        super::codex::command_text(c.cmd.or(c.command)).map(Cow::into_owned)
    });
    let kind = match &*name {
        "exec_command" | "shell" | "local_shell" | "container.exec" => ToolKind::Execute,
        "apply_patch" => ToolKind::Edit,
        "update_plan" => ToolKind::Think,
        "view_image" => ToolKind::Read,
        "web_search" => ToolKind::Browse,
        n if n.starts_with("mcp__") => ToolKind::Mcp,
        _ => ToolKind::Other,
    };
    let title = command.map(|c| Cow::Owned(super::codex::unwrap_shell(&c).into_owned()));
    let call = Call {
        name: name.to_string(),
        patch: (name == "apply_patch").then(|| p.input.as_deref().unwrap_or("").to_owned()),
        changes: None,
    };
    if !call_id.is_empty() {
        cx.memory().codex_rollout.calls.insert(&call_id, call, line);
    }
    cx.push(ToolInvocation {
        call_id,
        parent_call_id: None,
        kind,
        tool_name: name,
        title,
        input,
        locations: None,
        model: None,
        mcp_server: None,
        mcp_tool: None,
        message_id: None,
    });
}

/// What Codex writes at the head of a tool's output, before the output itself: `Chunk ID`,
/// `Wall time: S seconds`, `Process exited with code N` (or, for `shell` and `apply_patch`,
/// `Exit code: N`), `Original token count`, then `Output:`. The live stream carries these as
/// the completion's `exit_code` and `durationMs`.
#[derive(Debug, Default, PartialEq)]
struct Header<'t> {
    exit_code: Option<i64>,
    duration_ms: Option<u64>,
    /// Whether any header line was there.
    seen: bool,
    /// The output itself, after the header.
    body: &'t str,
}

fn header(output: &str) -> Header<'_> {
    let mut h = Header {
        body: output,
        ..Header::default()
    };
    let mut rest = output;
    while !rest.is_empty() {
        let (line, next) = match rest.find('\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        if line == "Output:" {
            h.seen = true;
            h.body = next;
            return h;
        }
        if let Some(n) = line
            .strip_prefix("Process exited with code ")
            .or_else(|| line.strip_prefix("Exit code: "))
        {
            h.exit_code = n.trim().parse().ok();
        } else if let Some(t) = line.strip_prefix("Wall time: ") {
            h.duration_ms = t
                .trim_end_matches(" seconds")
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| (s * 1000.0).round() as u64);
        } else if !(line.starts_with("Chunk ID: ")
            || line.starts_with("Original token count: ")
            || line.starts_with("Process running with session ID "))
        {
            break;
        }
        h.seen = true;
        rest = next;
        h.body = rest;
    }
    h
}

/// A `shell` call's output as older Codex stores it: JSON text
/// `{"output": "...", "metadata": {"exit_code": N, "duration_seconds": S}}`.
#[derive(Deserialize)]
struct LegacyOutput {
    output: String,
    metadata: Option<LegacyMeta>,
}

#[derive(Deserialize)]
struct LegacyMeta {
    exit_code: Option<i64>,
    duration_seconds: Option<f64>,
}

fn legacy_output(text: &str) -> Option<LegacyOutput> {
    if !text.starts_with('{') {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// Codex's own words for a call that did not run, or failed without an exit code: a tool it
/// does not have (`unsupported call: web_search`), one not offered in the mode
/// (`request_user_input is unavailable in Default mode`), input it could not use.
fn refused(name: &str, body: &str) -> bool {
    [
        "unsupported call: ",
        "write_stdin failed",
        "failed to parse function arguments",
        "apply_patch verification failed",
    ]
    .iter()
    .any(|p| body.starts_with(p))
        || (!name.is_empty()
            && body
                .strip_prefix(name)
                .is_some_and(|r| r.starts_with(" is unavailable")))
}

fn output<'a>(p: Payload<'a>, payload: &'a RawValue, cx: &mut Cx<'a>) {
    let call_id = p.call_id.0.unwrap_or_default();
    // An output of no call: context Codex adds itself (`goal_objective`), a notice.
    if call_id.is_empty() {
        notice(
            cx,
            Cow::Borrowed("codex/function_call_output"),
            Some(("payload", payload)),
        );
        return;
    }
    let call = cx.memory().codex_rollout.calls.remove(&call_id);
    // The output is text, or an object whose `output` is.
    let text: Option<String> = p.output.and_then(|o| {
        serde_json::from_str::<String>(o.get()).ok().or_else(|| {
            #[derive(Deserialize)]
            struct Wrapped {
                output: Option<String>,
            }
            serde_json::from_str::<Wrapped>(o.get()).ok()?.output
        })
    });
    if call.as_ref().is_some_and(|c| c.name == "update_plan") {
        let ext = cx.push(Notice {
            subtype: Cow::Borrowed("codex/update_plan/output"),
            message: text.map(Cow::Owned),
        });
        ext.put("codex.callId", call_id);
        return;
    }
    let text = text.unwrap_or_default();
    let legacy = legacy_output(&text);
    let h = match &legacy {
        Some(l) => Header {
            exit_code: l.metadata.as_ref().and_then(|m| m.exit_code),
            duration_ms: l
                .metadata
                .as_ref()
                .and_then(|m| m.duration_seconds)
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| (s * 1000.0).round() as u64),
            seen: true,
            body: &l.output,
        },
        None => header(&text),
    };
    let body = h.body;
    // Codex's own words: a call the user stopped, or one they declined (it never ran).
    let status = if body.contains("aborted by user") {
        ToolCallStatus::Cancelled
    } else if body.contains("rejected by user")
        || refused(call.as_ref().map_or("", |c| c.name.as_str()), body)
    {
        ToolCallStatus::Failed
    } else {
        match h.exit_code {
            Some(0) | None => ToolCallStatus::Completed,
            Some(_) => ToolCallStatus::Failed,
        }
    };
    // A patch applied says so ("Success. Updated the following files").
    let ok = status == ToolCallStatus::Completed && body.contains("Success.");
    // With a header, the output as the live stream's command completion states it.
    let output = if h.seen {
        Some(Json::Value(serde_json::json!({
            "stdout": body,
            "stderr": "",
            "exit_code": h.exit_code,
        })))
    } else {
        p.output.map(Json::Raw)
    };
    cx.push(ToolCompletion {
        call_id: call_id.clone(),
        status,
        duration_ms: h.duration_ms,
        output,
        is_error: status == ToolCallStatus::Failed,
        content: None,
        locations: None,
        parent_call_id: None,
    });
    if !ok {
        return;
    }
    let Some(call) = call else { return };
    // The files as the call's `FileChange` item states them (with every update's diff),
    // else as the patch names them.
    let changes = match (call.changes, call.patch) {
        (Some(c), _) => c,
        (None, Some(patch)) => {
            let cwd = cx.memory().codex_rollout.context.get(CWD).cloned();
            patch_changes(&patch, cwd.as_deref())
        }
        (None, None) => return,
    };
    super::codex::push_file_changes(cx, &call_id, changes);
}

/// The files of an `apply_patch` patch (`*** Add File:`, `*** Update File:` with an optional
/// `*** Move to:`, `*** Delete File:`), their relative paths read against `cwd`: for files
/// that keep no `FileChange` item. An added file's `+` lines are its content, which makes
/// its diff; an update's hunks name no line numbers, so it has none.
fn patch_changes(patch: &str, cwd: Option<&str>) -> Vec<Change> {
    let abs = |p: &str| -> String {
        match cwd {
            Some(c) if !p.starts_with('/') => format!("{}/{}", c.trim_end_matches('/'), p),
            _ => p.to_owned(),
        }
    };
    let mut out: Vec<Change> = Vec::new();
    let mut added: Option<String> = None;
    let finish = |out: &mut Vec<Change>, added: &mut Option<String>| {
        if let (Some(text), Some(last)) = (added.take(), out.last_mut()) {
            last.diff = Some(text);
        }
    };
    for l in patch.lines() {
        if let Some(rest) = l.strip_prefix("*** ") {
            let (kind, path) = if let Some(p) = rest.strip_prefix("Add File: ") {
                (Some(ChangeKind::Add), p)
            } else if let Some(p) = rest.strip_prefix("Update File: ") {
                (Some(ChangeKind::Update), p)
            } else if let Some(p) = rest.strip_prefix("Delete File: ") {
                (Some(ChangeKind::Delete), p)
            } else if let Some(p) = rest.strip_prefix("Move to: ") {
                if let Some(last) = out.last_mut() {
                    last.kind = ChangeKind::Move;
                    last.move_path = Some(abs(p.trim()));
                }
                continue;
            } else {
                (None, "")
            };
            finish(&mut out, &mut added);
            if let Some(kind) = kind {
                if kind == ChangeKind::Add {
                    added = Some(String::new());
                }
                out.push(Change {
                    path: abs(path.trim()),
                    kind,
                    move_path: None,
                    diff: None,
                });
            }
        } else if let Some(text) = added.as_mut() {
            text.push_str(l.strip_prefix('+').unwrap_or(l));
            text.push('\n');
        }
    }
    finish(&mut out, &mut added);
    out
}

// ---------------------------------------------------------------------------------------------
// usage and sessions

#[derive(Deserialize)]
struct FactsRecord<'a> {
    timestamp: OptStr<'a>,
    #[serde(rename = "type")]
    ty: OptStr<'a>,
    #[serde(borrow)]
    payload: Option<FactsPayload<'a>>,
}

/// What [`line_facts`] reads of a payload: the rest (a `session_meta`'s instructions, tens of
/// kilobytes) is skipped, not taken apart.
#[derive(Deserialize)]
struct FactsPayload<'a> {
    #[serde(rename = "type", borrow)]
    ty: OptStr<'a>,
    id: OptStr<'a>,
    cwd: OptStr<'a>,
    model: OptStr<'a>,
    #[serde(default)]
    info: Option<super::codex::LegacyTokenInfo>,
}

/// A record's own `type`, read from its bytes where that is certain ([`head_str`]); `None`
/// when it cannot be told so.
///
/// [`head_str`]: crate::wire::head_str
fn top_type(line: &[u8]) -> Option<&[u8]> {
    crate::wire::head_str(line, br#""type":"#)
}

/// An `event_msg`'s own `type` (its payload's), read as [`top_type`] reads the record's.
fn payload_type(line: &[u8]) -> Option<&[u8]> {
    let at = crate::wire::head_member(line, br#""payload":"#)?;
    top_type(&line[at..])
}

/// Whether a rollout's line may tell `usage` anything: [`line_facts`] reads only the lines
/// this takes. Most of a rollout's bytes are records of other types (`response_item`,
/// `world_state`) or events of other types (`item_completed`, `agent_message`): their
/// types, among the first keys, reject them without reading the rest. A line whose types
/// cannot be told so is taken when it names one of the types read.
pub(crate) fn line_wanted(line: &[u8], wanted: crate::usage::Wanted) -> bool {
    use crate::usage::{Marks, Wanted};
    static MARKS: Marks = Marks::new(&[
        "token_count",
        "turn_context",
        "session_meta",
        "task_started",
    ]);
    let named = || MARKS.any_in(line);
    match top_type(line) {
        Some(b"session_meta" | b"turn_context") => true,
        Some(b"event_msg") => match payload_type(line) {
            Some(b"token_count") => true,
            Some(b"task_started") => wanted == Wanted::ResponsesAndTurns,
            Some(_) => false,
            None => named(),
        },
        Some(_) => false,
        None => named(),
    }
}

/// A `session_meta` record's time, session and folder, read from its first keys where that
/// is certain ([`head_str`]): the record also holds the agent's instructions, tens of
/// kilobytes that parsing would only skip. `None` when they cannot be read so. The rest of
/// the line is not checked as a parse checks it: a member of an unexpected type further on
/// does not hide the session (nor does it from ccusage, whose parse is untyped), and the
/// line must end its object (`}`), but one cut right after a nested object still names it.
///
/// [`head_str`]: crate::wire::head_str
fn session_head(line: &[u8]) -> Option<(&str, &str, &str)> {
    let b = line.trim_ascii_end();
    if b.last() != Some(&b'}') {
        return None;
    }
    let payload = &b[crate::wire::head_member(b, br#""payload":"#)?..];
    fn text(v: &[u8]) -> Option<&str> {
        std::str::from_utf8(v).ok()
    }
    Some((
        text(crate::wire::head_str(b, br#""timestamp":"#)?)?,
        text(crate::wire::head_str(payload, br#""id":"#)?)?,
        text(crate::wire::head_str(payload, br#""cwd":"#)?)?,
    ))
}

/// What a session file's record tells `usage` and `sessions`: a `token_count`'s tokens of
/// the last response (the same usage as the event's `stepUsage`; from the difference of the
/// running totals where the record has no `last_token_usage`), with the model of the turn's
/// `turn_context`; a turn's start (`task_started`, unless its goal started it); the session's
/// id and cwd. A running total written again unchanged is no new response, and a response
/// copied into a forked session's file (same time, model and tokens) is the same response.
/// It reads a line [`line_wanted`] took, as bytes: a `session_meta` read from its first keys
/// is not checked for UTF-8 beyond them.
pub(crate) fn line_facts<'a>(
    line: &'a [u8],
    memo: &mut crate::usage::FileMemo,
) -> Option<crate::usage::LineFacts<'a>> {
    if top_type(line) == Some(b"session_meta") {
        if let Some((time, id, cwd)) = session_head(line) {
            memo.session = Some(id.to_owned());
            memo.cwd = Some(cwd.to_owned());
            return Some(crate::usage::LineFacts {
                time: crate::time::millis(time),
                session: Some(Cow::Borrowed(id)),
                cwd: Some(Cow::Borrowed(cwd)),
                ..Default::default()
            });
        }
    }
    let line = std::str::from_utf8(line).ok()?;
    let r: FactsRecord = serde_json::from_str(line).ok()?;
    let p = r.payload?;
    let mut f = crate::usage::LineFacts {
        time: r.timestamp.as_deref().and_then(crate::time::millis),
        ..Default::default()
    };
    match (r.ty.as_deref()?, p.ty.as_deref()) {
        ("session_meta", _) => {
            memo.session = p.id.as_deref().map(str::to_owned);
            memo.cwd = p.cwd.as_deref().map(str::to_owned);
        }
        ("turn_context", _) => {
            if let Some(m) = &p.model.0 {
                memo.model = Some(m.to_string());
            }
            if let Some(c) = &p.cwd.0 {
                memo.cwd = Some(c.to_string());
            }
            return None;
        }
        // Every turn the agent ran, a person's prompt or one its goal started
        // (`turn_attribution.turn_trigger: "goal"`): the turns `reduce` lists.
        ("event_msg", Some("task_started")) => f.turn = true,
        ("event_msg", Some("token_count")) => {
            let info = p.info?;
            let total = info.total_token_usage.as_ref().map(|u| u.usage_tokens());
            let before = memo.totals;
            if total.is_some() && total == before {
                return None;
            }
            if total.is_some() {
                memo.totals = total;
            }
            let step = match (&info.last_token_usage, total) {
                (Some(last), _) => last.usage_tokens(),
                (None, Some(t)) => {
                    let b = before.unwrap_or_default();
                    crate::usage::Tokens {
                        input: t.input.saturating_sub(b.input),
                        output: t.output.saturating_sub(b.output),
                        cache_read: t.cache_read.saturating_sub(b.cache_read),
                        cache_creation: t.cache_creation.saturating_sub(b.cache_creation),
                        cache_creation_1h: 0,
                        reasoning: t.reasoning.saturating_sub(b.reasoning),
                    }
                }
                (None, None) => return None,
            };
            if step.is_zero() {
                return None;
            }
            // A forked session's file begins with a copy of its parent's records: the same
            // response at the same moment with the same tokens is the parent's, counted once.
            f.response = r.timestamp.as_deref().map(|t| {
                let key = format!(
                    "{t}|{}|{}|{}|{}|{}",
                    memo.model.as_deref().unwrap_or(""),
                    step.input,
                    step.cache_read,
                    step.output,
                    step.reasoning
                );
                crate::ids::hash_pair("codex", &key)
            });
            f.usage = Some(step);
            f.model = memo.model.clone().map(Cow::Owned);
        }
        _ => return None,
    }
    f.session = memo.session.clone().map(Cow::Owned);
    f.cwd = memo.cwd.clone().map(Cow::Owned);
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record's type is read from its bytes only where it is surely the top-level key.
    #[test]
    fn a_record_s_type_is_read_from_its_first_keys_only_when_certain() {
        let t = |l: &'static str| top_type(l.as_bytes()).map(|b| std::str::from_utf8(b).unwrap());
        assert_eq!(
            t(r#"{"timestamp":"x","type":"response_item","payload":{"type":"message"}}"#),
            Some("response_item")
        );
        assert_eq!(
            t(r#"{"timestamp":"x","ordinal":3,"type":"event_msg","payload":{}}"#),
            Some("event_msg")
        );
        // A nested object or an array before it: not told.
        assert_eq!(
            t(r#"{"payload":{"type":"token_count"},"type":"event_msg"}"#),
            None
        );
        assert_eq!(t(r#"{"a":[1],"type":"event_msg"}"#), None);
        // A string holding a brace, or a key that only ends with `type`, is stepped over.
        assert_eq!(t(r#"{"a":"{","type":"event_msg"}"#), Some("event_msg"));
        assert_eq!(
            t(r#"{"a\"type":"x","type":"event_msg"}"#),
            Some("event_msg")
        );
        // An escape in the value: not told.
        assert_eq!(t(r#"{"type":"event\u005fmsg"}"#), None);
        // What the type rejects, the whole parse rejects too.
        let mut memo = crate::usage::FileMemo::default();
        let item = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","text":"token_count session_meta"}}"#;
        assert!(!line_wanted(
            item.as_bytes(),
            crate::usage::Wanted::ResponsesAndTurns
        ));
        assert!(line_facts(item.as_bytes(), &mut memo).is_none());
    }

    /// `usage` reads the lines of the types it counts, told by their first keys where that is
    /// certain, else by the names in them; what it takes, it reads as the whole parse does.
    #[test]
    fn usage_takes_the_lines_of_the_types_it_counts() {
        let wanted = |l: &str| line_wanted(l.as_bytes(), crate::usage::Wanted::ResponsesAndTurns);
        let event = |t: &str| {
            format!(
                r#"{{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{{"type":"{t}","text":"token_count"}}}}"#
            )
        };
        assert!(wanted(&event("token_count")));
        assert!(wanted(&event("task_started")));
        assert!(!wanted(&event("agent_message")));
        assert!(wanted(
            r#"{"timestamp":"x","type":"turn_context","payload":{}}"#
        ));
        assert!(!wanted(
            r#"{"timestamp":"x","type":"world_state","payload":{"type":"token_count"}}"#
        ));
        // The payload's type after a nested value: told by the names in the line.
        assert!(wanted(
            r#"{"type":"event_msg","payload":{"info":{},"type":"token_count"}}"#
        ));
        assert!(!wanted(
            r#"{"type":"event_msg","payload":{"info":{},"type":"agent_message"}}"#
        ));
        assert!(wanted(
            r#"{"payload":{"type":"task_started"},"type":"event_msg"}"#
        ));

        // A `session_meta` read from its first keys, or parsed when they cannot be read so:
        // the same facts either way.
        let heads = [
            r#"{"timestamp":"2026-10-01T00:00:00.000Z","type":"session_meta","payload":{"session_id":"s0","id":"sess-1","cwd":"/p","instructions":"{[long]}","git":{"id":"no"}}}"#,
            r#"{"timestamp":"2026-10-01T00:00:00.000Z","type":"session_meta","payload":{"git":{"id":"no"},"id":"sess-1","cwd":"/p"}}"#,
            r#"{"timestamp":"2026-10-01T00:00:00.000Z","type":"session_meta","payload":{"id":"sess\u002d1","cwd":"/p"}}"#,
        ];
        assert!(session_head(heads[0].as_bytes()).is_some());
        assert!(session_head(heads[1].as_bytes()).is_none());
        assert!(session_head(heads[2].as_bytes()).is_none());
        for (l, id) in heads.iter().zip(["sess-1", "sess-1", "sess-1"]) {
            assert!(wanted(l));
            let mut memo = crate::usage::FileMemo::default();
            let f = line_facts(l.as_bytes(), &mut memo).expect("facts");
            assert_eq!(
                f.time,
                crate::time::millis("2026-10-01T00:00:00.000Z"),
                "{l}"
            );
            assert_eq!(f.session.as_deref(), Some(id), "{l}");
            assert_eq!(f.cwd.as_deref(), Some("/p"), "{l}");
            assert_eq!(memo.session.as_deref(), Some(id), "{l}");
            assert_eq!(memo.cwd.as_deref(), Some("/p"), "{l}");
        }
        // A line cut short (by a write not finished) is no record.
        let cut = &heads[0][..heads[0].find("long").unwrap_or(0)];
        assert!(line_facts(cut.as_bytes(), &mut crate::usage::FileMemo::default()).is_none());
    }
    use crate::test_support::convert_sniffed;

    /// A subagent's rollout names its source with an object (the app-server schema's
    /// `SessionSource`): its session and working directory are read all the same, by the
    /// events and by `usage`.
    #[test]
    fn a_session_source_may_be_an_object() {
        let meta = r#"{"timestamp":"2026-10-01T00:00:00.000Z","type":"session_meta","payload":{"id":"sess-1","cwd":"/p","cli_version":"0.169.0","source":{"subagent":"review"}}}"#;
        let events = convert_sniffed(&super::super::codex::PROVIDER, meta);
        let init = events
            .iter()
            .find(|e| e["event"] == "session_init")
            .expect("a session_init");
        assert_eq!(init["sessionId"], "sess-1");
        assert_eq!(init["cwd"], "/p");
        assert_eq!(
            init["extensions"]["codex.source"],
            serde_json::json!({"subagent": "review"})
        );
        let mut memo = crate::usage::FileMemo::default();
        line_facts(meta.as_bytes(), &mut memo);
        assert_eq!(memo.session.as_deref(), Some("sess-1"));
        assert_eq!(memo.cwd.as_deref(), Some("/p"));
    }

    #[test]
    fn a_patch_names_its_files_against_the_cwd() {
        let patch = "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n+Added.\n*** Update File: config.txt\n@@\n-a\n+b\n*** Delete File: old.txt\n*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n-x\n+y\n*** End Patch\n";
        let c = patch_changes(patch, Some("/w"));
        let kinds: Vec<_> = c.iter().map(|c| (c.path.as_str(), c.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("/w/docs/new.md", ChangeKind::Add),
                ("/w/config.txt", ChangeKind::Update),
                ("/w/old.txt", ChangeKind::Delete),
                ("/w/src/a.py", ChangeKind::Move),
            ]
        );
        assert_eq!(c[3].move_path.as_deref(), Some("/w/src/b.py"));
        let add = c[0].diff.as_deref().unwrap_or_default();
        assert_eq!(add, "# New\nAdded.\n");
        assert!(c[1].diff.is_none());
    }

    #[test]
    fn reasoning_keeps_the_raw_content_apart_from_the_summary() {
        let line = r#"{"timestamp":"2026-11-26T02:55:09.900Z","type":"response_item","payload":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"**Plan**"}],"content":[{"type":"reasoning_text","text":"raw thinking"}],"encrypted_content":"gAAA"}}"#;
        let got: Vec<(String, bool)> = convert_sniffed(&super::super::codex::PROVIDER, line)
            .iter()
            .map(|e| {
                let raw = e["extensions"].get(super::super::codex::RAW_REASONING);
                (e["text"].as_str().unwrap().to_owned(), raw.is_some())
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("**Plan**".to_owned(), false),
                ("raw thinking".to_owned(), true)
            ]
        );
    }

    #[test]
    fn output_headers_and_context() {
        let h = header("Exit code: 2\nWall time: 0 seconds\nOutput:\nboom\n");
        assert_eq!(
            (h.exit_code, h.duration_ms, h.body),
            (Some(2), Some(0), "boom\n")
        );
        let h = header("Chunk ID: 1a\nWall time: 0.0250 seconds\nProcess exited with code 1\nOriginal token count: 3\nOutput:\ncat: x\n");
        assert_eq!(
            (h.exit_code, h.duration_ms, h.body),
            (Some(1), Some(25), "cat: x\n")
        );
        let h = header("Wall time: 0.5 seconds\naborted by user");
        assert_eq!((h.exit_code, h.body), (None, "aborted by user"));
        let h = header("unsupported call: web_search");
        assert!(!h.seen && refused("web_search", h.body));
        assert!(refused(
            "request_user_input",
            "request_user_input is unavailable in Default mode"
        ));
        let old = legacy_output(
            r#"{"output":"boom\n","metadata":{"exit_code":1,"duration_seconds":0.25}}"#,
        );
        let m = old.as_ref().and_then(|o| o.metadata.as_ref());
        assert_eq!(m.and_then(|m| m.exit_code), Some(1));
        assert_eq!(old.map(|o| o.output), Some("boom\n".to_owned()));
        assert!(synthetic("<environment_context>\n  <cwd>/w</cwd>", None));
        assert!(synthetic("<turn_aborted>\nThe user interrupted", None));
        assert!(!synthetic("Create the build marker.", None));
    }
}
