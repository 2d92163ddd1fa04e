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
//! | `step_finish` | `usage_update` (tokens, and the step's `cost` in `stepUsage`); a step that did not end in tool calls also ends the turn: `turn_complete` with `stopReason` |
//! | `error` | `error` (`code` is the error's name, `httpStatus` its status code) |
//!
//! OpenCode's `input` token count excludes cache reads and writes, as Anthropic's does.
//! Permission requests are answered inside `run` (rejected) and never printed, the `question`
//! tool is denied there, and subagents run in child sessions whose parts `run` does not print.
//!
//! **Detection.** OpenCode writes `sessionID` (capital `ID`) on every line; no other
//! provider does.

use super::claude;
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
    reading: super::Reading::PLAIN,
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
    cx.timestamp = w
        .timestamp
        .map(|ms| Cow::Owned(crate::time::format_millis(ms.0)));
    let ty = probe.ty().unwrap_or("");
    if ty == "error" {
        return error(w.error, cx);
    }
    let Some(part) = w.part else {
        return Err(Unmapped(format!("OpenCode {ty:?} line without a part")));
    };
    cx.anchor = part.id.0.clone();
    match ty {
        "step_start" => {
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
        "step_finish" => step_finish(part, cx),
        other => return Err(Unmapped(format!("unknown OpenCode event type {other:?}"))),
    }
    Ok(())
}

fn step_finish<'a>(part: Part<'a>, cx: &mut Cx<'a>) {
    let mut usage = serde_json::Map::new();
    if let Some(t) = &part.tokens {
        let mut put = |k: &str, v: Option<Count>| {
            if let Some(v) = v {
                usage.insert(k.into(), Value::from(v.0));
            }
        };
        put("input_tokens", t.input);
        put("output_tokens", t.output);
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
    if let Some(c) = part.cost {
        usage.insert("cost".into(), json!(c));
    }
    let ext = cx.push(UsageUpdate {
        step_usage: Json::Value(Value::Object(usage)),
        total: None,
        context_window: None,
        context_tokens: None,
        cost_usd: None,
        parent_call_id: None,
        model: None,
        message_id: part.message_id.0,
    });
    ext.put_opt("opencode.reason", part.reason.0.clone());
    ext.put_opt("opencode.snapshot", part.snapshot.0);
    // `tool-calls`: the model asked for tools, and the loop goes on with another step.
    if let Some(reason) = part.reason.0.filter(|r| r != "tool-calls") {
        cx.push(TurnComplete {
            is_error: reason == "error",
            stop_reason: Some(reason),
            ..TurnComplete::default()
        });
    }
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
