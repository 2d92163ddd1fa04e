//! `codex exec --json`: snake_case `{type: "thread.started" | "turn.*" | "item.*" | "error", …}`
//! lines, and the items (`command_execution`, `file_change`, …) they carry.

use super::{
    change_kind, close_call, collab_end, command_text, completion, declined_status, delta,
    error_event, file_change, note_error, notice, object, open_call, or_null, set_stream_thread,
    status_in_message, strip_plan_block, text, tool_invocation, turn_errored, unwrap_shell, Change,
    Totals,
};
use crate::event::*;
use crate::members::Line;
use crate::providers::{Cx, Unmapped};
use crate::wire::{count, is_null, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

#[derive(Deserialize)]
struct ExecLine<'a> {
    thread_id: OptStr<'a>,
    #[serde(borrow)]
    item: Option<ExecItem<'a>>,
    usage: Option<ExecUsage>,
    #[serde(borrow)]
    error: Option<MessageOnly<'a>>,
    message: OptStr<'a>,
    item_id: OptStr<'a>,
    delta: OptStr<'a>,
    call_id: OptStr<'a>,
    #[serde(borrow)]
    questions: Option<&'a RawValue>,
    id: OptStr<'a>,
}

#[derive(Deserialize)]
struct MessageOnly<'a> {
    #[serde(borrow)]
    message: OptStr<'a>,
}

#[derive(Deserialize)]
pub(in crate::providers) struct ExecUsage {
    input_tokens: Option<Count>,
    cached_input_tokens: Option<Count>,
    cache_write_input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    reasoning_output_tokens: Option<Count>,
}

impl ExecUsage {
    /// The tokens as `insights usage` counts them: as [`tokens`], cached input out of input.
    pub(in crate::providers) fn usage_tokens(&self) -> crate::usage::Tokens {
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
    text: OptStr<'a>,
    #[serde(borrow)]
    command: Option<&'a RawValue>,
    aggregated_output: OptStr<'a>,
    exit_code: Option<i64>,
    status: OptStr<'a>,
    #[serde(borrow)]
    changes: Option<Vec<ExecChange<'a>>>,
    server: OptStr<'a>,
    tool: OptStr<'a>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    query: OptStr<'a>,
    #[serde(borrow)]
    action: Option<&'a RawValue>,
    #[serde(borrow)]
    items: Option<Vec<TodoItem<'a>>>,
    message: OptStr<'a>,
    prompt: OptStr<'a>,
    #[serde(borrow)]
    receiver_thread_ids: Option<&'a RawValue>,
    #[serde(borrow)]
    agents_states: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ExecChange<'a> {
    #[serde(borrow)]
    path: Str<'a>,
    kind: OptStr<'a>,
}

#[derive(Deserialize)]
struct TodoItem<'a> {
    #[serde(borrow)]
    text: OptStr<'a>,
    completed: Option<bool>,
}

pub(super) fn exec_totals(u: &ExecUsage) -> Totals {
    [
        count(u.input_tokens),
        count(u.cached_input_tokens),
        count(u.cache_write_input_tokens),
        count(u.output_tokens),
        count(u.reasoning_output_tokens),
    ]
}

pub(super) fn tokens(u: &ExecUsage) -> TokenUsage {
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

pub(super) fn exec_usage_snake(u: &ExecUsage) -> Value {
    json!({
        "input_tokens": count(u.input_tokens).unwrap_or(0).saturating_sub(count(u.cached_input_tokens).unwrap_or(0)),
        "output_tokens": count(u.output_tokens).unwrap_or(0),
        "cache_read_input_tokens": count(u.cached_input_tokens).unwrap_or(0),
        "cache_creation_input_tokens": count(u.cache_write_input_tokens).unwrap_or(0),
        "reasoning_output_tokens": count(u.reasoning_output_tokens).unwrap_or(0),
    })
}

pub(super) fn exec<'a>(line: Line<'a, '_>, ty: &'a str, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ExecLine = line.read()?;
    match ty {
        "thread.started" => match w.thread_id.0.filter(|t| !t.is_empty()) {
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
                .and_then(|e| e.message.0)
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
                subtype: Some(Cow::Borrowed("error_api")),
                errors: Some(vec![msg]),
                ..TurnComplete::default()
            });
        }
        "error" => {
            let msg = w.message.0.unwrap_or(Cow::Borrowed("error"));
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
            let ext = cx.push(delta(StreamDeltaKind::Text, w.item_id.0, w.delta.0));
            ext.put("block_type", "plan");
        }
        "request_user_input" => {
            cx.push(PermissionRequest {
                request_id: w.id.0.unwrap_or_default(),
                tool_name: Cow::Borrowed("AskUserQuestion"),
                tool_kind: ToolKind::Ask,
                tool_input: object([("questions", or_null(w.questions))]),
                tool_use_id: w.call_id.0,
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
            let body = strip_plan_block(it.text.0.unwrap_or_default());
            text(cx, body, TextKind::Text, Some(it.id));
        }
        "reasoning" => {
            text(
                cx,
                it.text.0.unwrap_or_default(),
                TextKind::Thinking,
                Some(it.id),
            );
        }
        "plan" => {
            text(
                cx,
                it.text.0.unwrap_or_default(),
                TextKind::Plan,
                Some(it.id),
            );
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
                        kind: None,
                        call_id: it.id,
                        status: it.status.0,
                        tool_name: Some(Cow::Borrowed("Bash")),
                        output: it.aggregated_output.0.map(Json::Str),
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
                    ("stdout", or_null(it.aggregated_output.0)),
                    ("stderr", Json::from("")),
                    ("exit_code", or_null(it.exit_code.map(Value::from))),
                ]);
                let call = close_call(cx, &it.id);
                let mut c = completion(it.id, ok, Some(output));
                if status == "declined" {
                    c.status = declined_status(call.as_ref());
                }
                let ext = cx.push(c);
                ext.put("codex.status", it.status.0.unwrap_or_default());
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
                    kind: None,
                    call_id: it.id,
                    status: it.status.0,
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
            let server = it.server.0.unwrap_or_default();
            let tool = it.tool.0.unwrap_or_default();
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
                    kind: None,
                    call_id: it.id,
                    status: it.status.0,
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
                    ("query", or_null(it.query.0.clone())),
                    ("action", or_null(it.action)),
                ]);
                cx.push(tool_invocation(
                    it.id.clone(),
                    ToolKind::Browse,
                    "WebSearch",
                    it.query.0.clone(),
                    input,
                ));
                cx.push(completion(it.id, true, None));
            } else {
                let input = object([
                    ("query", or_null(it.query.0.clone())),
                    ("action", or_null(it.action)),
                ]);
                cx.push(tool_invocation(
                    it.id,
                    ToolKind::Browse,
                    "WebSearch",
                    it.query.0,
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
                    content: t.text.0.unwrap_or_default(),
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
            let tool = it.tool.0.unwrap_or_default();
            if started {
                let name = format!("collab:{tool}");
                let mut inv = tool_invocation(
                    it.id.clone(),
                    ToolKind::Think,
                    "",
                    it.prompt.0.clone(),
                    object([
                        ("tool", Json::Str(tool.clone())),
                        ("prompt", or_null(it.prompt.0.clone())),
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
                        description: it.prompt.0.clone(),
                        is_resume: false,
                        resume_agent_id: None,
                        prompt: it.prompt.0,
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
                    it.status.0,
                );
            } else {
                cx.push(ToolUpdate {
                    kind: None,
                    call_id: it.id,
                    status: it.status.0,
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
                it.message.0.unwrap_or(Cow::Borrowed("error")),
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

/// The `changes` of an exec `file_change` item: `[{"path", "kind"}]`.
fn exec_changes<'a>(changes: &[ExecChange<'a>]) -> Json<'a> {
    Json::Array(
        changes
            .iter()
            .map(|c| {
                object([
                    ("path", Json::Str(c.path.clone())),
                    ("kind", or_null(c.kind.0.clone())),
                ])
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{conv, stream};
    use serde_json::Value;

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
}
