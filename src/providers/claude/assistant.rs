//! `assistant` lines: the model's message, block by block (text, thinking, tool calls), and
//! its usage; and what a tool call is (kind, title, locations) by its name.

use super::{session_key, turn_mut, Block, Call, Dialect, Edit};
use crate::event::*;
use crate::members::Line;
use crate::providers::{split_mcp, sub, Cx, Unmapped};
use crate::wire::{is_object, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

#[derive(Deserialize)]
struct Assistant<'a> {
    #[serde(borrow)]
    message: AssistantMessage<'a>,
    parent_tool_use_id: OptStr<'a>,
    error: OptStr<'a>,
    request_id: OptStr<'a>,
}

#[derive(Deserialize)]
struct AssistantMessage<'a> {
    id: OptStr<'a>,
    model: OptStr<'a>,
    #[serde(borrow, default)]
    content: Vec<Block<'a>>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    /// Why the model stopped (`tool_use`, `end_turn`, …); null while streaming.
    stop_reason: OptStr<'a>,
}

/// The members of a tool input that titles, locations, subagents and plans are made from.
#[derive(Deserialize, Default)]
struct InputHints<'a> {
    file_path: OptStr<'a>,
    path: OptStr<'a>,
    notebook_path: OptStr<'a>,
    pattern: OptStr<'a>,
    command: OptStr<'a>,
    /// Amp's Bash.
    cmd: OptStr<'a>,
    /// Amp's glob.
    #[serde(rename = "filePattern")]
    file_pattern: OptStr<'a>,
    description: OptStr<'a>,
    url: OptStr<'a>,
    query: OptStr<'a>,
    prompt: OptStr<'a>,
    subagent_type: OptStr<'a>,
    name: OptStr<'a>,
    task: OptStr<'a>,
    resume: OptStr<'a>,
    subject: OptStr<'a>,
    #[serde(borrow)]
    todos: Option<Vec<Todo<'a>>>,
    /// Write's new content.
    content: OptStr<'a>,
}

#[derive(Deserialize)]
struct Todo<'a> {
    #[serde(borrow)]
    content: OptStr<'a>,
    status: OptStr<'a>,
    priority: OptStr<'a>,
    #[serde(rename = "activeForm")]
    active_form: OptStr<'a>,
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

/// Whether a text is the CLI's own message for a failed API call (`API Error: 500 …`): the
/// text of a synthetic assistant message, or the answer of a subagent that such a failure
/// ended.
pub(super) fn is_api_error(text: &str) -> bool {
    text.starts_with("API Error")
}

/// The HTTP status in the CLI's message for a failed API call: `API Error: 500 …`,
/// `API Error: Request rejected (429) · …`.
pub(super) fn http_status_of(message: &str) -> Option<u64> {
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
    // In a session file, the subagent's first line is found by the prompt the call gave.
    let prompt_key = match (is_subagent_tool(canon), h.prompt.as_deref()) {
        (true, Some(prompt)) if cx.memory().claude.files.contains(&session) => {
            let k = super::session_file::prompt_key(&session, prompt);
            cx.memory()
                .claude
                .prompts
                .insert(&k, call_id.to_owned(), line);
            Some(k)
        }
        _ => None,
    };
    let calls = &mut cx.memory().claude.calls;
    let subagent = is_subagent_tool(canon).then(|| {
        let mut s = calls
            .remove(call_id)
            .and_then(|c| c.subagent)
            .unwrap_or_default();
        s.prompt_key = prompt_key;
        s
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
            .0
            .clone()
            .or_else(|| h.command.0.clone())
            .or_else(|| h.cmd.0.clone()),
        "Read" | "Write" | "Edit" | "MultiEdit" => {
            h.file_path.0.clone().or_else(|| h.path.0.clone())
        }
        "NotebookEdit" | "NotebookRead" => h.notebook_path.0.clone(),
        "Glob" | "Grep" => h.pattern.0.clone().or_else(|| h.file_pattern.0.clone()),
        "WebFetch" => h.url.0.clone(),
        "WebSearch" => h.query.0.clone(),
        "Task" | "Agent" => h.description.0.clone(),
        "TaskCreate" => h.subject.0.clone(),
        _ => None,
    }
}

fn tool_locations<'a>(name: &str, h: &InputHints<'a>) -> Option<Vec<Str<'a>>> {
    let mut v: Vec<Str<'a>> = [&h.file_path.0, &h.path.0, &h.notebook_path.0]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if name == "Glob" {
        v.extend(h.pattern.0.clone().or_else(|| h.file_pattern.0.clone()));
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
pub(super) fn assistant<'a>(
    line: Line<'a, '_>,
    cx: &mut Cx<'a>,
    d: &Dialect,
    file_parent: Option<Str<'a>>,
) -> Result<(), Unmapped> {
    let w: Assistant = line.read()?;
    let parent = w.parent_tool_use_id.0.or(file_parent);
    let model = w.message.model.0;
    let message_id = w.message.id.0;
    let stop_reason = w.message.stop_reason.0;
    let synthetic = model.as_deref() == Some("<synthetic>");
    for b in w.message.content {
        let api_error = |b: &Block| b.text.as_deref().is_some_and(is_api_error);
        match &*b.ty {
            "text" if w.error.is_some() || (synthetic && api_error(&b)) => {
                // The CLI's own message for a failed API call ("API Error: 400 …").
                let message = b.text.0.unwrap_or_default();
                let http_status = http_status_of(&message);
                turn_mut(cx).error_reported = true;
                cx.push(ErrorEvent {
                    message,
                    severity: Severity::Error,
                    code: w.error.0.clone(),
                    http_status,
                    will_retry: Some(false),
                    attempt: None,
                    max_retries: None,
                    retry_delay_ms: None,
                    request_id: w.request_id.0.clone(),
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
                    text: b.text.0.unwrap_or_default(),
                    kind: TextKind::Text,
                    parent_call_id: parent.clone(),
                    model: model.clone(),
                    message_id: message_id.clone(),
                });
            }
            "thinking" | "redacted_thinking" => {
                let ext = cx.push(Text {
                    text: b.thinking.0.unwrap_or_default(),
                    kind: TextKind::Thinking,
                    parent_call_id: parent.clone(),
                    model: model.clone(),
                    message_id: message_id.clone(),
                });
                if b.ty == "redacted_thinking" {
                    ext.put("claude.redacted", true);
                }
                ext.put_opt("claude.signature", b.signature.0);
            }
            "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                let name = b.name.0.unwrap_or_default();
                let call_id = b.id.0.unwrap_or_default();
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
                        agent_type: hints.subagent_type.0.or(hints.name.0),
                        description: hints.description.0.clone().or(hints.task.0),
                        is_resume: hints.resume.is_some(),
                        resume_agent_id: hints.resume.0,
                        prompt: hints.prompt.0,
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
                            content: t.content.0.unwrap_or_default(),
                            active_form: t.active_form.0,
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
        ext.put_opt("claude.requestId", w.request_id.0);
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
        ("id", &b.id.0),
        ("name", &b.name.0),
        ("tool_use_id", &b.tool_use_id.0),
    ] {
        if let Some(v) = v {
            put(k, Json::Str(v.clone()));
        }
    }
    if let Some(v) = &b.text.0 {
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

#[cfg(test)]
mod tests {
    use super::super::convert;
    use super::super::tests::conv;
    use super::*;
    use crate::detect::Probe;

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
}
