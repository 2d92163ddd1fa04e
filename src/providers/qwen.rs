//! Qwen Code `--output-format stream-json` (with `--include-partial-messages`).
//!
//! Qwen Code writes Claude Code's stream-json, so lines map through the Claude converter
//! ([`claude::convert_as`]) with Qwen's tool names ([`QWEN`]). Recorded with Qwen Code 0.24.4
//! against the peers mock model (`testdata/qwen/`, `testdata/record-mock`). What differs:
//!
//! | line | difference | events |
//! |---|---|---|
//! | `system/init`, `system/session_start` | `qwen_code_version`, snake_case `permission_mode`; the docs name the subtype `session_start` | `session_init` with `version` and `permissionMode` |
//! | `system/task_*` | the members are in `data` | `task_update` from `data`; a finished `task_notification` of an `agent` call also gives `subagent_complete` (Qwen's agent tool answers at once, and its subagent runs in the background) |
//! | `stream_event` `goal_state` | Qwen's own event (the session goal and activity) | `notice` `stream_event/goal_state` |
//! | `assistant` whose only text is `[API Error: …]` | Qwen reports API errors as assistant text | `error` |
//! | `result` with `error: {message}` | an object, where Claude has `errors: [string]` | `turn_complete` with `errors` |
//! | `result` `usage` | `input_tokens` counts the cached tokens (`cache_read_input_tokens`) too; no `modelUsage` | `turn_complete` `usage` with the cached tokens out of `inputTokens`, and `modelUsage`: that usage under the model the init names |
//! | tools `run_shell_command`, `read_file`, `write_file`, `edit`, `glob`, `grep_search`, `agent`, `todo_write`, … | Qwen's names | kinds, titles, subagents and plans as for the Claude tool they correspond to |
//!
//! Qwen Code's own chat files (`~/.qwen/projects/*/chats/*.jsonl`) are read here too: their
//! records are mapped by [`super::qwen_chat`].
//!
//! **Detection.** Most Qwen lines are Claude lines, member for member. `--from auto` recognises
//! the init line (`qwen_code_version` or `session_start`), `goal_state` stream events, task lines
//! with `data`, and `result` lines whose `usage` has `total_tokens`; other lines are read as
//! Claude's (tool kinds then fall back to `other`). Use `--from qwen` for whole Qwen streams.

use super::claude::{self, Dialect};
use super::edits::{self, Edit};
use super::memo::Memo;
use super::{Capabilities, Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::members::Line;
use crate::wire::{count, is_object, raw_str, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

pub const PROVIDER: Provider = Provider {
    name: "qwen",
    display: "Qwen Code",
    cc_name: "claude",
    about: "Qwen Code stream-json (--output-format stream-json); Claude-compatible",
    jsonrpc: false,
    sniff,
    convert,
    reading: super::Reading::PLAIN,
    caps: Capabilities {
        streaming_deltas: true,
        tool_calls: true,
        tool_results: true,
        status_updates: false,
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
    infers_turns: true,
    whole_messages: false,
    at_end: Some(super::qwen_chat::at_end),
    talk: None,
};

/// Qwen Code's tools, by the Claude Code tool they correspond to.
pub(crate) const QWEN: Dialect = Dialect {
    canonical,
    tool_kind,
    json_results: false,
};

crate::providers::memo::remember! {
    /// What Qwen Code lines need of earlier lines of the stream.
    pub struct Memory {
        /// The change each write or edit call asked for, by call id, until its result: the
        /// results carry no change ([`super::edits`]).
        pub edits: Memo<Edit>,
    }
}

fn edits_memo<'r>(cx: &'r mut Cx<'_>) -> &'r mut Memo<Edit> {
    &mut cx.memory().qwen.edits
}

/// Which tools write a file (`Some((whole file, creates))`).
fn edit_kind(name: &str) -> Option<(bool, bool)> {
    match name {
        "write_file" => Some((true, false)),
        "edit" | "replace" => Some((false, false)),
        _ => None,
    }
}

fn canonical(name: &str) -> &str {
    match name {
        "run_shell_command" => "Bash",
        "read_file" | "read_many_files" => "Read",
        "write_file" => "Write",
        "edit" | "replace" => "Edit",
        "glob" => "Glob",
        "grep_search" | "search_file_content" => "Grep",
        "list_directory" => "LS",
        "web_fetch" => "WebFetch",
        "web_search" => "WebSearch",
        "agent" | "task" => "Agent",
        "todo_write" => "TodoWrite",
        "ask_user_question" => "AskUserQuestion",
        "notebook_edit" => "NotebookEdit",
        other => other,
    }
}

pub(crate) fn tool_kind(name: &str) -> ToolKind {
    match name {
        "save_memory" => ToolKind::Memory,
        "exit_plan_mode" => ToolKind::Other,
        // Qwen's MCP tools keep the server's tool name; only the mcp__ form is recognisable.
        n => claude::tool_kind(canonical(n)),
    }
}

fn sniff(p: &Probe) -> bool {
    if super::qwen_chat::sniff(p) {
        return true;
    }
    match (p.ty(), p.subtype()) {
        (Some("system"), Some("session_start")) => true,
        (Some("system"), Some("init")) => p.member("qwen_code_version").is_some(),
        // testdata/qwen/subagent.jsonl line 5: `{"type":"system","subtype":"task_started",…,"data":{…}}`.
        (Some("system"), Some(s)) => {
            s.starts_with("task_") && p.member("data").is_some_and(|r| r.is_object())
        }
        // testdata/qwen/text-only.jsonl line 4: the run's usage has `total_tokens`.
        (Some("result"), _) => p
            .member("usage")
            .is_some_and(|u| u.is_object() && u.get().contains("\"total_tokens\"")),
        // A substring test first: every Claude `stream_event` line comes through here.
        (Some("stream_event"), _) => p.event.is_some_and(|e| {
            e.get().contains("\"goal_state\"") && event_type(e) == Some("goal_state")
        }),
        _ => false,
    }
}

/// The `type` of a stream event.
fn event_type(raw: crate::wire::Raw<'_>) -> Option<&str> {
    #[derive(Deserialize)]
    struct T<'a> {
        #[serde(rename = "type", borrow)]
        ty: Option<&'a RawValue>,
    }
    if !raw.is_object() {
        return None;
    }
    let t: T = serde_json::from_str(raw.get()).ok()?;
    let s = t.ty?.get();
    s.strip_prefix('"')?.strip_suffix('"')
}

#[derive(Deserialize)]
struct InitExtra<'a> {
    #[serde(borrow)]
    qwen_code_version: OptStr<'a>,
    permission_mode: OptStr<'a>,
}

#[derive(Deserialize)]
struct DataLine<'a> {
    #[serde(borrow)]
    data: &'a RawValue,
}

#[derive(Deserialize)]
struct GoalLine<'a> {
    #[serde(borrow)]
    event: GoalEvent<'a>,
}

#[derive(Deserialize)]
struct GoalEvent<'a> {
    #[serde(borrow)]
    goal_state: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ResultError<'a> {
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ErrorObject<'a> {
    #[serde(borrow)]
    message: OptStr<'a>,
}

fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    if super::qwen_chat::sniff(probe) {
        return super::qwen_chat::convert(line, probe, cx);
    }
    match (probe.ty(), probe.subtype()) {
        (Some("system"), Some(sub @ ("init" | "session_start"))) => {
            envelope(probe, cx);
            claude::system(Line::new(line, probe.members()), "init", cx)?;
            let w: InitExtra = crate::members::read(line, probe.members())?;
            if let Some((Body::SessionInit(init), ext)) = cx.events.last_mut() {
                init.version = init.version.take().or(w.qwen_code_version.0);
                init.permission_mode = init.permission_mode.take().or(w.permission_mode.0);
                if sub == "session_start" {
                    ext.put("qwen.subtype", "session_start");
                }
            }
            super::models::note(cx, PROVIDER.name);
            Ok(())
        }
        (Some("system"), Some(sub))
            if sub.starts_with("task_") && probe.member("data").is_some() =>
        {
            envelope(probe, cx);
            let w: DataLine = crate::members::read(line, probe.members())?;
            if !is_object(w.data) {
                return Err(Unmapped("task line whose data is not an object".into()));
            }
            claude::system(Line::new(w.data.get(), None), sub, cx)?;
            if sub == "task_notification" {
                subagent_done(w.data, cx)?;
            }
            Ok(())
        }
        (Some("stream_event"), _) if probe.event.and_then(event_type) == Some("goal_state") => {
            envelope(probe, cx);
            let w: GoalLine = crate::members::read(line, probe.members())?;
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("stream_event/goal_state"),
                message: None,
            });
            ext.put_opt("qwen.goalState", w.event.goal_state);
            Ok(())
        }
        (Some("assistant"), _) => {
            claude::convert_as(line, probe, cx, &QWEN)?;
            api_errors(cx);
            edits::follow(cx, edits_memo, edit_kind);
            Ok(())
        }
        (Some("result"), _) => {
            claude::convert_as(line, probe, cx, &QWEN)?;
            let w: ResultError = crate::members::read(line, probe.members())?;
            let message = match w.error {
                Some(e) if is_object(e) => serde_json::from_str::<ErrorObject>(e.get())?.message.0,
                Some(e) => raw_str(e),
                None => None,
            };
            if let (Some(m), Some((Body::TurnComplete(tc), _))) = (message, cx.events.last_mut()) {
                tc.errors.get_or_insert_with(Vec::new).push(m);
            }
            if let Some((Body::TurnComplete(tc), _)) = cx.events.last_mut() {
                uncached(tc);
            }
            // Qwen's `result` has no `modelUsage`, but its init names the session's model, and
            // the turn's `usage` is spent on it (the result's usage counts the subagents'
            // requests too, which run on the same model).
            super::models::price(cx);
            Ok(())
        }
        (Some("user"), _) => {
            claude::convert_as(line, probe, cx, &QWEN)?;
            edits::follow(cx, edits_memo, edit_kind);
            Ok(())
        }
        _ => claude::convert_as(line, probe, cx, &QWEN),
    }
}

/// Qwen's `result` `usage.input_tokens` counts the cached prompt tokens too (Gemini's
/// `promptTokenCount`: testdata/qwen/edit-and-shell.jsonl line 12, 76,633 = the four requests'
/// prompts, 57,286 of them cache reads); `inputTokens` is the uncached part, as for Claude and
/// Codex.
fn uncached(tc: &mut TurnComplete<'_>) {
    if let Some(u) = &mut tc.usage {
        u.input_tokens = u
            .input_tokens
            .saturating_sub(u.cache_read_tokens.unwrap_or(0));
    }
}

#[derive(Deserialize)]
struct TaskDone<'a> {
    #[serde(borrow)]
    tool_use_id: OptStr<'a>,
    status: OptStr<'a>,
    usage: Option<TaskUsage>,
}

#[derive(Deserialize)]
struct TaskUsage {
    total_tokens: Option<Count>,
    tool_uses: Option<Count>,
    duration_ms: Option<Count>,
}

/// Qwen's `agent` tool answers at once ("Background agent launched"); the subagent's end is
/// the task notification of that call.
fn subagent_done<'a>(data: &'a RawValue, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: TaskDone = serde_json::from_str(data.get())?;
    let (Some(call_id), Some(status)) = (w.tool_use_id.0, w.status.0) else {
        return Ok(());
    };
    if !matches!(&*status, "completed" | "failed" | "cancelled" | "stopped") {
        return Ok(());
    }
    let u = w.usage;
    cx.push(SubagentComplete {
        call_id,
        agent_id: None,
        status: Some(status),
        summary: None,
        duration_ms: count(u.as_ref().and_then(|u| u.duration_ms)),
        total_tokens: count(u.as_ref().and_then(|u| u.total_tokens)),
        tool_use_count: count(u.as_ref().and_then(|u| u.tool_uses)),
        parent_call_id: None,
    });
    Ok(())
}

/// The members every line shares, as the Claude converter reads them.
fn envelope<'a>(probe: &Probe<'a>, cx: &mut Cx<'a>) {
    cx.session_id = probe
        .session_id
        .and_then(|r| r.str())
        .filter(|s| !s.is_empty());
    cx.anchor = probe.uuid.and_then(|r| r.str());
    cx.wire_time(probe.timestamp.and_then(|r| r.str()));
}

/// Qwen Code reports a failed model request as an assistant message `[API Error: …]`.
fn api_errors(cx: &mut Cx<'_>) {
    for (body, _) in cx.events.iter_mut() {
        let Body::Text(t) = body else { continue };
        if t.kind != TextKind::Text {
            continue;
        }
        let Some(inner) = t
            .text
            .strip_prefix("[API Error: ")
            .and_then(|r| r.strip_suffix(']'))
        else {
            continue;
        };
        let http_status = inner
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|d| d.parse().ok());
        let message = Cow::Owned(inner.to_owned());
        *body = Body::Error(ErrorEvent {
            message,
            severity: Severity::Error,
            code: None,
            http_status,
            will_retry: Some(false),
            attempt: None,
            max_retries: None,
            retry_delay_ms: None,
            request_id: None,
            parent_call_id: t.parent_call_id.take(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{self, kinds};
    use serde_json::Value;

    /// One line's events, converted as `--from` does.
    fn conv(line: &str) -> Vec<Value> {
        test_support::convert_line(&PROVIDER, line)
    }

    fn sniffs(line: &str) -> bool {
        test_support::sniffs(&PROVIDER, line)
    }

    #[test]
    fn init_takes_qwen_members() {
        let line = r#"{"type":"system","subtype":"init","uuid":"u","session_id":"s","cwd":"/w","tools":["run_shell_command"],"model":"m","permission_mode":"auto","qwen_code_version":"0.24.4"}"#;
        assert!(sniffs(line));
        let ev = conv(line);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0]["event"], "session_init");
        assert_eq!(ev[0]["version"], "0.24.4");
        assert_eq!(ev[0]["permissionMode"], "auto");
    }

    #[test]
    fn session_start_is_init() {
        let line = r#"{"type":"system","subtype":"session_start","uuid":"u","session_id":"s","model":"qwen3-coder-plus"}"#;
        assert!(sniffs(line));
        let ev = conv(line);
        assert_eq!(ev[0]["event"], "session_init");
        assert_eq!(ev[0]["model"], "qwen3-coder-plus");
    }

    #[test]
    fn shell_tool_is_execute_with_a_title() {
        let ev = conv(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"run_shell_command","input":{"command":"uname -s","description":"Print the kernel name"}}]}}"#,
        );
        assert_eq!(ev[0]["kind"], "execute");
        assert_eq!(ev[0]["title"], "Print the kernel name");
    }

    #[test]
    fn agent_tool_spawns_a_subagent_and_todo_write_plans() {
        let ev = conv(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"agent","input":{"description":"d","prompt":"p","subagent_type":"general-purpose"}},{"type":"tool_use","id":"b","name":"todo_write","input":{"todos":[{"id":"1","content":"x","status":"in_progress"}]}}]}}"#,
        );
        assert_eq!(
            kinds(&ev),
            [
                "tool_invocation",
                "subagent_spawn",
                "tool_invocation",
                "plan_update"
            ]
        );
        assert_eq!(ev[1]["agentType"], "general-purpose");
    }

    #[test]
    fn task_lines_read_data() {
        let line = r#"{"type":"system","subtype":"task_notification","uuid":"u","session_id":"s","data":{"task_id":"t1","tool_use_id":"a","status":"completed","usage":{"total_tokens":5}}}"#;
        assert!(sniffs(line));
        let ev = conv(line);
        assert_eq!(ev[0]["event"], "task_update");
        assert_eq!(ev[0]["taskId"], "t1");
        assert_eq!(ev[0]["status"], "completed");
        assert_eq!(ev[1]["event"], "subagent_complete");
        assert_eq!(ev[1]["callId"], "a");
        assert_eq!(ev[1]["totalTokens"], 5);
    }

    #[test]
    fn goal_state_is_a_notice() {
        let line = r#"{"type":"stream_event","uuid":"u","session_id":"s","event":{"type":"goal_state","goal_state":{"v":2,"goal":null,"activity":"idle"}}}"#;
        assert!(sniffs(line));
        let ev = conv(line);
        assert_eq!(ev[0]["subtype"], "stream_event/goal_state");
        assert_eq!(ev[0]["extensions"]["qwen.goalState"]["activity"], "idle");
    }

    #[test]
    fn api_error_text_is_an_error() {
        let ev = conv(
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"[API Error: 400 {\"type\":\"error\"}]"}]}}"#,
        );
        assert_eq!(ev[0]["event"], "error");
        assert_eq!(ev[0]["httpStatus"], 400);
        assert_eq!(ev[0]["message"], "400 {\"type\":\"error\"}");
    }

    #[test]
    fn result_error_object_becomes_errors() {
        let line = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0},"error":{"message":"boom"}}"#;
        assert!(sniffs(line));
        let ev = conv(line);
        assert_eq!(ev[0]["errors"][0], "boom");
        assert_eq!(ev[0]["isError"], true);
    }

    /// docs/seeds.md row 47: the init names the model, the result has usage but no
    /// `modelUsage` (testdata/qwen/edit-and-shell.jsonl lines 1 and 12).
    #[test]
    fn a_turn_s_usage_is_under_the_init_s_model() {
        let ev = test_support::convert_stream(
            &PROVIDER,
            &[
                r#"{"type":"system","subtype":"init","uuid":"u","session_id":"s","model":"mock-model","qwen_code_version":"0.24.4"}"#,
                r#"{"type":"result","subtype":"success","uuid":"r","session_id":"s","is_error":false,"usage":{"input_tokens":76633,"output_tokens":101,"cache_read_input_tokens":57286,"total_tokens":76734}}"#,
            ],
        );
        let tc = test_support::of_kind(&ev, "turn_complete");
        assert_eq!(tc[0]["usage"]["inputTokens"], 76633 - 57286);
        assert_eq!(tc[0]["modelUsage"]["mock-model"]["outputTokens"], 101);
        assert_eq!(tc[0]["modelUsage"]["mock-model"]["cacheReadTokens"], 57286);
        // No init, no model guessed.
        let ev = conv(
            r#"{"type":"result","subtype":"success","uuid":"r","session_id":"s","is_error":false,"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}"#,
        );
        assert!(ev[0].get("modelUsage").is_none());
    }

    #[test]
    fn claude_lines_are_not_taken() {
        assert!(!sniffs(
            r#"{"type":"system","subtype":"init","claude_code_version":"2.1.197"}"#
        ));
        assert!(!sniffs(
            r#"{"type":"result","subtype":"success","usage":{"input_tokens":1}}"#
        ));
        assert!(!sniffs(
            r#"{"type":"system","subtype":"task_progress","usage":{"total_tokens":1}}"#
        ));
        assert!(!sniffs(
            r#"{"type":"stream_event","event":{"type":"message_stop"}}"#
        ));
    }
}
