//! OpenCode `opencode run --format json` (with `--thinking` for reasoning).
//!
//! `run` subscribes to OpenCode's event bus and prints finished parts only: a text part once
//! its text is complete, a tool part once the tool completed or failed (never while it runs),
//! and the start and finish of each model request ("step"). Recorded with opencode 1.18.33
//! against the peers mock model (`testdata/opencode/`, `testdata/record-mock`). Every line is
//! `{type, timestamp (epoch ms), sessionID, part | error}`; each maps on its own:
//!
//! | line | events |
//! |---|---|
//! | `step_start` | `stream_delta` messageStart (the step's `messageID`) |
//! | `text` | `text`; a `synthetic` part (written by OpenCode, not the model) is `user_input` with `isSynthetic` |
//! | `reasoning` | `text` kind thinking |
//! | `tool_use` | `tool_invocation` then `tool_completion` (`durationMs` from the part's times; a bash command with a non-zero exit code failed; a rejected permission is cancelled), + `subagent_spawn`/`subagent_complete` for `task`, + `plan_update` for `todowrite`, + `file_change` for `edit` (the tool's diff) and `write` |
//! | `step_finish` | `usage_update` (tokens, `output_tokens` with the `reasoning` in it as for the other providers, and the step's `cost` in `stepUsage` unless 0, which OpenCode writes for a model it has no price for); a step that did not end in tool calls also ends the turn: `turn_complete` with `stopReason`, and the turn's `usage` and `costUsd`, its steps' sums (OpenCode's `output` leaves reasoning out; the steps' `stepUsage` say it) |
//! | `error` | `error` (`code` is the error's name, `httpStatus` its status code), and the turn ends: a failed `turn_complete` with the steps' sums so far |
//!
//! OpenCode's database ([`super::opencode_db`]) is read as lines of the same shape, with
//! two more: `session` (`session_init`: directory, version; title and parent session in
//! `extensions`) and `prompt` (`user_input`); its `step_finish` lines name the model, which
//! `usage_update` and the turn's `modelUsage` then carry.
//!
//! OpenCode's `input` token count excludes cache reads and writes, as Anthropic's does.
//! Permission requests are answered inside `run` (rejected) and never printed, the `question`
//! tool is denied there, and subagents run in child sessions whose parts `run` does not print.
//!
//! **Detection.** OpenCode writes `sessionID` (capital `ID`) on every line; no other
//! provider does.

use super::claude;
use super::memo::Memo;
use super::{Capabilities, Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::wire::{count, is_object, raw_str, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

pub const PROVIDER: Provider = Provider {
    name: "opencode",
    display: "OpenCode",
    cc_name: "acp",
    about: "OpenCode run --format json",
    jsonrpc: false,
    sniff,
    convert,
    // A turn's `costUsd` is its own steps' sum, not a running total of the process.
    reading: super::Reading {
        running_turn_totals: false,
        ..super::Reading::PLAIN
    },
    caps: Capabilities {
        streaming_deltas: false,
        tool_calls: true,
        tool_results: true,
        status_updates: false,
        reasoning: true,
        permissions: false,
        questions: false,
        file_changes: true,
        command_exec: true,
        mcp: false,
        usage: true,
        cost: true,
        subagents: true,
        plans: true,
    },
    infers_turns: true,
    whole_messages: false,
    at_end: None,
    talk: None,
};

crate::providers::memo::remember! {
    /// What OpenCode lines need of earlier lines.
    pub struct Memory {
        /// The open turn's steps so far, by session id: the turn's totals when it ends. Only
        /// for a turn whose start this input holds (its first step, or its prompt): a turn
        /// resumed in the middle (`reduce --from-state`) gets no totals, and `reduce` sums its
        /// steps itself.
        pub turns: Memo<Steps>,
    }
}

/// The sums of a turn's steps (`step_finish`): `usage` once any step said its tokens; the
/// cache counts once any step said them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Steps {
    tokens: bool,
    input: u64,
    output: u64,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    cost: Option<f64>,
    /// The model of its steps, when the lines name it.
    model: Option<String>,
    /// The messages whose step is counted: a step read again (a capture read twice) counts once.
    counted: Vec<String>,
}

impl Steps {
    fn usage(&self) -> Option<TokenUsage> {
        self.tokens.then(|| TokenUsage {
            input_tokens: self.input,
            output_tokens: self.output,
            cache_read_tokens: self.cache_read,
            cache_creation_tokens: self.cache_write,
            // Left out: `reduce`'s sum of a turn's steps counts no reasoning, and a turn's
            // figures are the same whether `reduce` takes them from here or sums the steps
            // (a turn resumed in the middle). The steps' `stepUsage` say it.
            reasoning_tokens: None,
        })
    }
}

fn sniff(p: &Probe) -> bool {
    p.ty().is_some() && p.member("sessionID").is_some()
}

#[derive(Deserialize)]
struct Line<'a> {
    timestamp: Option<Count>,
    #[serde(rename = "sessionID")]
    session_id: OptStr<'a>,
    #[serde(borrow)]
    part: Option<Part<'a>>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    /// The database's lines ([`super::opencode_db::lines`]): a step's model, a session, a prompt.
    #[serde(rename = "modelID", borrow)]
    model_id: OptStr<'a>,
    #[serde(borrow)]
    session: Option<DbSession<'a>>,
    #[serde(borrow)]
    text: OptStr<'a>,
    synthetic: Option<bool>,
    /// A database line's message (a prompt's; the message an error ended).
    #[serde(rename = "messageID", borrow)]
    message_id: OptStr<'a>,
}

/// A database line's `session`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DbSession<'a> {
    #[serde(rename = "parentID", borrow)]
    parent_id: OptStr<'a>,
    directory: OptStr<'a>,
    title: OptStr<'a>,
    version: OptStr<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    id: OptStr<'a>,
    #[serde(rename = "messageID")]
    message_id: OptStr<'a>,
    text: OptStr<'a>,
    synthetic: Option<bool>,
    #[serde(borrow)]
    metadata: Option<&'a RawValue>,
    snapshot: OptStr<'a>,
    // step-finish
    reason: OptStr<'a>,
    cost: Option<f64>,
    tokens: Option<Tokens>,
    // tool
    #[serde(rename = "callID")]
    call_id: OptStr<'a>,
    tool: OptStr<'a>,
    #[serde(borrow)]
    state: Option<State<'a>>,
}

#[derive(Deserialize)]
struct Tokens {
    total: Option<Count>,
    input: Option<Count>,
    output: Option<Count>,
    reasoning: Option<Count>,
    cache: Option<Cache>,
}

#[derive(Deserialize)]
struct Cache {
    read: Option<Count>,
    write: Option<Count>,
}

#[derive(Deserialize)]
struct State<'a> {
    status: OptStr<'a>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    #[serde(borrow)]
    output: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    title: OptStr<'a>,
    #[serde(borrow)]
    metadata: Option<&'a RawValue>,
    time: Option<Time>,
}

#[derive(Deserialize)]
struct Time {
    start: Option<Count>,
    end: Option<Count>,
}

fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: Line = crate::members::read(line, probe.members())?;
    cx.session_id = w.session_id.0.filter(|s| !s.is_empty());
    // The database's own lines are known by their row (the session, the message): their
    // events keep their ids wherever the line falls when the database is read again with
    // more rows (`insights store`). The stream's error lines name no message.
    cx.anchor = match probe.ty() {
        Some("session") => cx.session_id.clone(),
        Some("prompt" | "error") => w.message_id.0.clone(),
        _ => None,
    };
    cx.timestamp = w
        .timestamp
        .map(|ms| Cow::Owned(crate::time::format_millis(ms.0)));
    let ty = probe.ty().unwrap_or("");
    match ty {
        "error" => return error(w.error, cx),
        "session" => {
            let Some(sess) = w.session else {
                return Err(Unmapped("OpenCode session line without a session".into()));
            };
            let ext = cx.push(SessionInit {
                cwd: sess.directory.0,
                version: sess.version.0,
                ..SessionInit::default()
            });
            ext.put_opt("opencode.title", sess.title.0);
            ext.put_opt("opencode.parentSessionId", sess.parent_id.0);
            return Ok(());
        }
        "prompt" => {
            // A prompt starts a turn.
            begin_turn(cx, true);
            cx.push(UserInput {
                text: w.text.0.unwrap_or_default(),
                images: None,
                is_synthetic: w.synthetic == Some(true),
                parent_call_id: None,
            });
            return Ok(());
        }
        _ => {}
    }
    let Some(part) = w.part else {
        return Err(Unmapped(format!("OpenCode {ty:?} line without a part")));
    };
    cx.anchor = part.id.0.clone();
    match ty {
        "step_start" => {
            begin_turn(cx, false);
            let ext = cx.push(StreamDelta {
                kind: StreamDeltaKind::MessageStart,
                parent_call_id: None,
                text_delta: None,
                json_delta: None,
                block_index: None,
                call_id: None,
                message_id: part.message_id.0,
            });
            ext.put_opt("opencode.snapshot", part.snapshot.0);
        }
        "text" if part.synthetic == Some(true) => {
            let ext = cx.push(UserInput {
                text: part.text.0.unwrap_or_default(),
                images: None,
                is_synthetic: true,
                parent_call_id: None,
            });
            ext.put_opt("opencode.metadata", part.metadata);
        }
        "text" | "reasoning" => {
            let ext = cx.push(Text {
                text: part.text.0.unwrap_or_default(),
                kind: if ty == "text" {
                    TextKind::Text
                } else {
                    TextKind::Thinking
                },
                parent_call_id: None,
                model: None,
                message_id: part.message_id.0,
            });
            ext.put_opt("opencode.metadata", part.metadata);
        }
        "tool_use" => tool(part, cx)?,
        "step_finish" => step_finish(part, w.model_id.0, cx),
        other => return Err(Unmapped(format!("unknown OpenCode event type {other:?}"))),
    }
    Ok(())
}

fn step_finish<'a>(part: Part<'a>, model: Option<Str<'a>>, cx: &mut Cx<'a>) {
    add_step(&part, model.as_deref(), cx);
    let mut usage = serde_json::Map::new();
    if let Some(t) = &part.tokens {
        let mut put = |k: &str, v: Option<Count>| {
            if let Some(v) = v {
                usage.insert(k.into(), Value::from(v.0));
            }
        };
        put("input_tokens", t.input);
        // Every generated token, as `output_tokens` means for the other providers: OpenCode
        // writes the reasoning apart from its `output`.
        put(
            "output_tokens",
            t.output
                .map(|o| Count(o.0.saturating_add(t.reasoning.map_or(0, |r| r.0)))),
        );
        put(
            "cache_read_input_tokens",
            t.cache.as_ref().and_then(|c| c.read),
        );
        put(
            "cache_creation_input_tokens",
            t.cache.as_ref().and_then(|c| c.write),
        );
        put("reasoning_tokens", t.reasoning);
        put("total_tokens", t.total);
    }
    // OpenCode writes 0 for a model it has no price for: no cost known.
    if let Some(c) = part.cost.filter(|c| *c > 0.0) {
        usage.insert("cost".into(), json!(c));
    }
    let ext = cx.push(UsageUpdate {
        step_usage: Json::Value(Value::Object(usage)),
        total: None,
        context_window: None,
        context_tokens: None,
        cost_usd: None,
        parent_call_id: None,
        model,
        message_id: part.message_id.0,
    });
    ext.put_opt("opencode.reason", part.reason.0.clone());
    ext.put_opt("opencode.snapshot", part.snapshot.0);
    // `tool-calls`: the model asked for tools, and the loop goes on with another step.
    if let Some(reason) = part.reason.0.filter(|r| r != "tool-calls") {
        end_turn(cx, reason);
    }
}

/// Ends the session's turn: `turn_complete` with its steps' sums (failed when `reason` is
/// `error`), and forgets them.
fn end_turn<'a>(cx: &mut Cx<'a>, reason: Str<'a>) {
    let steps = match cx.session_id.clone() {
        Some(session) => cx.memory().opencode.turns.remove(&session),
        None => None,
    }
    .unwrap_or_default();
    let usage = steps.usage();
    let model_usage = match (&usage, steps.model) {
        (Some(u), Some(m)) => Some(super::codex::usage_under(m, u)),
        _ => None,
    };
    cx.push(TurnComplete {
        is_error: reason == "error",
        stop_reason: Some(reason),
        usage,
        model_usage,
        // Rounded as `reduce` rounds the sums it makes: the same figure either way.
        cost_usd: steps.cost.map(crate::reduce::totals::dollars),
        ..TurnComplete::default()
    });
}

/// Starts counting the session's turn when this line starts it: a prompt, or a step while no
/// turn is open ([`super::turns`] opens it after this line).
fn begin_turn(cx: &mut Cx<'_>, prompt: bool) {
    let Some(session) = cx.session_id.clone() else {
        return;
    };
    let line = cx.line;
    let m = cx.memory();
    if prompt || !m.turns.open.contains(&session) {
        m.opencode.turns.insert(&session, Steps::default(), line);
    }
}

/// Adds a step's tokens and cost to its session's open turn, and its model, when the line
/// names it (the database's lines do; `run` prints none).
fn add_step(part: &Part<'_>, model: Option<&str>, cx: &mut Cx<'_>) {
    let Some(session) = cx.session_id.clone() else {
        return;
    };
    let line = cx.line;
    let turns = &mut cx.memory().opencode.turns;
    // A turn whose start this input does not hold: no totals.
    let Some(mut steps) = turns.remove(&session) else {
        return;
    };
    if let Some(m) = part.message_id.as_deref() {
        if steps.counted.iter().any(|c| c == m) {
            turns.insert(&session, steps, line);
            return;
        }
        steps.counted.push(m.to_owned());
    }
    if let Some(t) = &part.tokens {
        let n = |c: Option<Count>| c.map_or(0, |c| c.0);
        steps.input = steps.input.saturating_add(n(t.input));
        steps.output = steps
            .output
            .saturating_add(n(t.output))
            .saturating_add(n(t.reasoning));
        let cache = t.cache.as_ref();
        let add = |sum: &mut Option<u64>, c: Option<Count>| {
            if let Some(c) = c {
                *sum = Some(sum.unwrap_or(0).saturating_add(c.0));
            }
        };
        add(&mut steps.cache_read, cache.and_then(|c| c.read));
        add(&mut steps.cache_write, cache.and_then(|c| c.write));
        steps.tokens = true;
    }
    if let Some(c) = part.cost.filter(|c| *c > 0.0) {
        steps.cost = Some(steps.cost.unwrap_or(0.0) + c);
    }
    if let (None, Some(m)) = (&steps.model, model) {
        steps.model = Some(m.to_owned());
    }
    turns.insert(&session, steps, line);
}

/// The ToolKind of an OpenCode tool.
fn tool_kind(name: &str) -> ToolKind {
    match name {
        "bash" => ToolKind::Execute,
        "read" | "list" => ToolKind::Read,
        "edit" | "write" | "patch" | "multiedit" | "apply_patch" => ToolKind::Edit,
        "glob" | "grep" | "codesearch" => ToolKind::Search,
        "webfetch" => ToolKind::Fetch,
        "websearch" => ToolKind::Browse,
        "task" => ToolKind::Think,
        "todowrite" | "todoread" => ToolKind::Memory,
        "question" => ToolKind::Ask,
        _ => ToolKind::Other,
    }
}

/// The members of a tool input used for locations, subagents, plans and diffs.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Input<'a> {
    file_path: OptStr<'a>,
    path: OptStr<'a>,
    content: OptStr<'a>,
    // task
    description: OptStr<'a>,
    prompt: OptStr<'a>,
    #[serde(rename = "subagent_type")]
    subagent_type: OptStr<'a>,
    // todowrite
    #[serde(borrow)]
    todos: Option<Vec<Todo<'a>>>,
}

#[derive(Deserialize)]
struct Todo<'a> {
    #[serde(borrow)]
    content: OptStr<'a>,
    status: OptStr<'a>,
    priority: OptStr<'a>,
}

/// The members of a tool's metadata used here.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Meta<'a> {
    /// bash: the exit code.
    exit: Option<i64>,
    /// task: the child session.
    session_id: OptStr<'a>,
    /// edit: the change.
    #[serde(borrow)]
    filediff: Option<FileDiff<'a>>,
    diff: OptStr<'a>,
    /// write: whether the file was there before.
    exists: Option<bool>,
    filepath: OptStr<'a>,
}

#[derive(Deserialize)]
struct FileDiff<'a> {
    #[serde(borrow)]
    file: OptStr<'a>,
    patch: OptStr<'a>,
}

fn tool<'a>(part: Part<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let Some(state) = part.state else {
        return Err(Unmapped("tool part without a state".into()));
    };
    let name = part.tool.0.unwrap_or_default();
    let call_id = part.call_id.0.unwrap_or_default();
    let input_raw = state.input.filter(|i| is_object(i));
    let input: Input = input_raw
        .and_then(|i| serde_json::from_str(i.get()).ok())
        .unwrap_or_default();
    let meta: Meta = state
        .metadata
        .filter(|m| is_object(m))
        .and_then(|m| serde_json::from_str(m.get()).ok())
        .unwrap_or_default();
    let locations: Vec<Str<'a>> = [&input.file_path.0, &input.path.0]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    cx.push(ToolInvocation {
        call_id: call_id.clone(),
        parent_call_id: None,
        kind: tool_kind(&name),
        tool_name: name.clone(),
        title: state.title.0.clone(),
        input: input_raw.map_or(Json::Value(json!({})), Json::Raw),
        locations: (!locations.is_empty()).then_some(locations),
        model: None,
        mcp_server: None,
        mcp_tool: None,
        message_id: part.message_id.0.clone(),
    });
    match &*name {
        "task" => {
            cx.push(SubagentSpawn {
                call_id: call_id.clone(),
                agent_type: input.subagent_type.0.clone(),
                description: input.description.0.clone(),
                is_resume: false,
                resume_agent_id: None,
                prompt: input.prompt.0.clone(),
                parent_call_id: None,
            });
        }
        "todowrite" => {
            let entries = input
                .todos
                .unwrap_or_default()
                .into_iter()
                .map(|t| PlanEntry {
                    status: claude::plan_status(t.status.as_deref()),
                    priority: claude::plan_priority(t.priority.as_deref()),
                    content: t.content.0.unwrap_or_default(),
                    active_form: None,
                })
                .collect();
            cx.push(PlanUpdate {
                entries,
                call_id: Some(call_id.clone()),
                parent_call_id: None,
                explanation: None,
            });
        }
        _ => {}
    }
    let status_word = state.status.as_deref().unwrap_or("");
    let error_text = state.error.and_then(raw_str);
    let status = match status_word {
        "completed" if meta.exit.unwrap_or(0) == 0 => ToolCallStatus::Completed,
        "completed" => ToolCallStatus::Failed,
        _ if error_text
            .as_deref()
            .is_some_and(|e| e.starts_with("The user rejected permission")) =>
        {
            ToolCallStatus::Cancelled
        }
        _ => ToolCallStatus::Failed,
    };
    let duration_ms = state.time.as_ref().and_then(|t| match (t.start, t.end) {
        (Some(a), Some(b)) if b.0 >= a.0 => Some(b.0 - a.0),
        _ => None,
    });
    let output = match status_word {
        "completed" => state.output.map(Json::Raw),
        _ => state.error.map(Json::Raw),
    };
    let ext = cx.push(ToolCompletion {
        call_id: call_id.clone(),
        status,
        duration_ms,
        output,
        is_error: status != ToolCallStatus::Completed,
        content: None,
        locations: None,
        parent_call_id: None,
    });
    ext.put_opt("opencode.metadata", state.metadata.filter(|m| is_object(m)));
    if status_word != "completed" {
        ext.put("opencode.status", status_word.to_owned());
    }
    if status != ToolCallStatus::Completed && name != "task" {
        return Ok(());
    }
    match &*name {
        "task" => {
            let summary = state
                .output
                .and_then(raw_str)
                .map(|o| Cow::Owned(task_result(&o).to_owned()));
            cx.push(SubagentComplete {
                call_id: call_id.clone(),
                agent_id: meta.session_id.0,
                status: Some(Cow::Owned(status.as_str().to_owned())),
                summary,
                duration_ms,
                total_tokens: None,
                tool_use_count: None,
                parent_call_id: None,
            });
        }
        "edit" | "multiedit" => {
            let (file, patch) = match meta.filediff {
                Some(f) => (f.file.0, f.patch.0),
                None => (None, None),
            };
            if let Some(path) = file.or(input.file_path.0) {
                cx.push(FileChange {
                    path,
                    change_kind: ChangeKind::Update,
                    move_path: None,
                    diff: patch.or(meta.diff.0),
                    cumulative: false,
                    call_id: Some(call_id),
                    parent_call_id: None,
                });
            }
        }
        "write" => {
            if let Some(path) = meta.filepath.0.or(input.file_path.0) {
                let created = meta.exists == Some(false);
                let diff = input
                    .content
                    .0
                    .filter(|_| created)
                    .map(|c| Cow::Owned(claude::creation_diff(&path, &c)));
                cx.push(FileChange {
                    path,
                    change_kind: if created {
                        ChangeKind::Add
                    } else {
                        ChangeKind::Update
                    },
                    move_path: None,
                    diff,
                    cumulative: false,
                    call_id: Some(call_id),
                    parent_call_id: None,
                });
            }
        }
        _ => {}
    }
    Ok(())
}

/// The answer inside a task tool's output `<task …><task_result>…</task_result></task>`.
fn task_result(output: &str) -> &str {
    output
        .split_once("<task_result>")
        .and_then(|(_, rest)| rest.split_once("</task_result>"))
        .map_or(output, |(inner, _)| inner.trim())
}

#[derive(Deserialize)]
struct ErrorObject<'a> {
    name: OptStr<'a>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ErrorData<'a> {
    #[serde(borrow)]
    message: OptStr<'a>,
    status_code: Option<Count>,
}

fn error<'a>(raw: Option<&'a RawValue>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let e: ErrorObject = match raw {
        Some(r) if is_object(r) => serde_json::from_str(r.get())?,
        _ => {
            return Err(Unmapped(
                "OpenCode error line without an error object".into(),
            ))
        }
    };
    let data: Option<ErrorData> = match e.data {
        Some(d) if is_object(d) => Some(serde_json::from_str(d.get())?),
        _ => None,
    };
    let message = data
        .as_ref()
        .and_then(|d| d.message.0.clone())
        .or_else(|| e.name.0.clone())
        .unwrap_or(Cow::Borrowed("error"));
    let ext = cx.push(ErrorEvent {
        message,
        severity: Severity::Error,
        code: e.name.0,
        http_status: count(data.as_ref().and_then(|d| d.status_code)),
        will_retry: None,
        attempt: None,
        max_retries: None,
        retry_delay_ms: None,
        request_id: None,
        parent_call_id: None,
    });
    ext.put_opt("opencode.error", e.data.filter(|d| is_object(d)));
    // `run` prints an error when the session's prompt failed: the turn ends there (a
    // context overflow is then compacted, and OpenCode goes on in a new turn).
    end_turn(cx, Cow::Borrowed("error"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;

    /// One line's events; the line must be one detection takes for this provider.
    fn conv(line: &str) -> Vec<Value> {
        test_support::convert_sniffed(&PROVIDER, line)
    }

    #[test]
    fn step_finish_tokens_and_cost() {
        // The shape of OpenCode's own test fixture (../shared/formats/others.md).
        let ev = conv(
            r#"{"type":"step_finish","timestamp":4,"sessionID":"ses_abc","part":{"type":"step-finish","reason":"stop","tokens":{"total":180,"input":100,"output":50,"reasoning":20,"cache":{"read":7,"write":3}},"cost":0.0125}}"#,
        );
        assert_eq!(ev[0]["event"], "usage_update");
        assert_eq!(ev[0]["stepUsage"]["input_tokens"], 100);
        assert_eq!(ev[0]["stepUsage"]["cache_read_input_tokens"], 7);
        assert_eq!(ev[0]["stepUsage"]["cost"], 0.0125);
        assert_eq!(ev[1]["event"], "turn_complete");
        assert_eq!(ev[1]["stopReason"], "stop");
        // Its step's start is not in this input: no totals (`reduce` sums the steps).
        assert!(ev[1].get("usage").is_none());
    }

    /// docs/seeds.md row 47: the turn carries its steps' sums (testdata/opencode/edit-and-shell.jsonl).
    #[test]
    fn a_turn_s_usage_and_cost_are_its_steps_sums() {
        let step = |msg: &str, reason: &str, input: u64, cost: f64| {
            format!(
                r#"{{"type":"step_finish","timestamp":4,"sessionID":"s","part":{{"type":"step-finish","messageID":"{msg}","reason":"{reason}","tokens":{{"total":0,"input":{input},"output":2,"reasoning":1,"cache":{{"read":5,"write":0}}}},"cost":{cost}}}}}"#
            )
        };
        let a = step("m1", "tool-calls", 10, 0.5);
        let b = step("m2", "stop", 20, 0.25);
        let c = step("m3", "stop", 7, 0.0);
        let start =
            r#"{"type":"step_start","timestamp":3,"sessionID":"s","part":{"type":"step-start"}}"#;
        // The first step read again (a capture read twice) counts once.
        let ev =
            test_support::convert_output(&PROVIDER, &[start, &a, start, &a, start, &b, start, &c]);
        let tc = test_support::of_kind(&ev, "turn_complete");
        assert_eq!(tc.len(), 2);
        assert_eq!(tc[0]["usage"]["inputTokens"], 30);
        assert_eq!(tc[0]["usage"]["outputTokens"], 6);
        assert_eq!(tc[0]["usage"]["cacheReadTokens"], 10);
        assert_eq!(tc[0]["costUsd"], 0.75);
        // The next turn starts from nothing.
        assert_eq!(tc[1]["usage"]["inputTokens"], 7);
    }

    #[test]
    fn tool_steps_do_not_end_the_turn() {
        let ev = conv(
            r#"{"type":"step_finish","timestamp":4,"sessionID":"s","part":{"type":"step-finish","reason":"tool-calls","cost":0}}"#,
        );
        assert_eq!(ev.len(), 1);
    }

    #[test]
    fn failing_bash_and_rejected_write() {
        let ev = conv(
            r#"{"type":"tool_use","timestamp":1,"sessionID":"s","part":{"type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"false"},"output":"","metadata":{"exit":1},"title":"false","time":{"start":10,"end":15}},"id":"p"}}"#,
        );
        assert_eq!(ev[0]["kind"], "execute");
        assert_eq!(ev[1]["status"], "failed");
        assert_eq!(ev[1]["durationMs"], 5);
        let ev = conv(
            r#"{"type":"tool_use","timestamp":1,"sessionID":"s","part":{"type":"tool","tool":"write","callID":"w","state":{"status":"error","input":{"filePath":"/h/n.md","content":"x"},"error":"The user rejected permission to use this specific tool call.","time":{"start":1,"end":2}},"id":"p"}}"#,
        );
        assert_eq!(ev[1]["status"], "cancelled");
        assert_eq!(ev.len(), 2);
    }

    #[test]
    fn task_result_is_the_summary() {
        assert_eq!(
            task_result("<task id=\"x\">\n<task_result>\nLinux\n</task_result>\n</task>"),
            "Linux"
        );
        assert_eq!(task_result("plain"), "plain");
    }

    #[test]
    fn error_line() {
        let ev = conv(
            r#"{"type":"error","timestamp":1,"sessionID":"s","error":{"name":"APIError","data":{"message":"invalid x-api-key","statusCode":401,"isRetryable":false}}}"#,
        );
        assert_eq!(ev[0]["message"], "invalid x-api-key");
        assert_eq!(ev[0]["code"], "APIError");
        assert_eq!(ev[0]["httpStatus"], 401);
        assert_eq!(ev[1]["event"], "turn_complete");
        assert_eq!(ev[1]["isError"], true);
    }

    #[test]
    fn only_opencode_lines() {
        for line in [
            r#"{"type":"error","timestamp":"2026-01-01T00:00:00Z","message":"x"}"#,
            r#"{"type":"text","text":"x"}"#,
        ] {
            assert!(!sniff(&serde_json::from_str::<Probe>(line).unwrap()));
        }
    }
}
