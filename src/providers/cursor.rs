//! Cursor Agent `cursor-agent -p --output-format stream-json` (also with
//! `--stream-partial-output`).
//!
//! A Claude-like envelope (`type`, `subtype`, `session_id`) with its own tool encoding. Built
//! from Cursor's documentation (cursor.com/docs/cli/reference/output-format), the example
//! lines in `../shared/formats/others.md`, and the shapes other projects parse (sources in
//! `testdata/cursor/README.md`); not checked against a recording (Cursor's agent needs
//! Cursor's service). Each line maps on its own (a line that names no session is the one the
//! stream named last, its `system/init`'s, as for Claude Code):
//!
//! | line | events |
//! |---|---|
//! | `system/init`, `user`, `assistant` | as Claude Code's (`session_init`, `user_input`, `text`); with `--stream-partial-output` each `assistant` line is one chunk of the message |
//! | `thinking/delta` | `stream_delta` thinking |
//! | `thinking/completed` | `stream_delta` blockStop |
//! | `tool_call/started` | `tool_invocation` (+ `plan_update` for `updateTodosToolCall`) |
//! | `tool_call/completed` | `tool_completion` (+ `file_change` for a successful edit, write or delete, + `plan_update` for the todo list an `updateTodosToolCall` returns) |
//! | `result` | `turn_complete` with the camelCase usage |
//!
//! The tool is the one member of `tool_call` named `<kind>ToolCall` (`shellToolCall`,
//! `readToolCall`, `editToolCall`, `mcpToolCall`, …) or `function`; `toolName` is that name
//! without `ToolCall`. Results are `{success}`, `{error}`, `{failure}`, `{rejected}` or
//! `{permissionDenied}`: success is completed (a shell command with a non-zero `exitCode`
//! failed); anything else failed, a refusal (`rejected`, `permissionDenied`: the call never
//! ran) included, with the outcome's name in `cursor.outcome`. `call_id` may carry a second line
//! (`call-1\nfc_1`); the first line is the call id, so started and completed pair up.
//!
//! **Detection.** `tool_call` and `thinking` lines are Cursor's; so are `assistant`, `user`,
//! `system` and `result` lines with `timestamp_ms`, and `result` lines whose `usage` is
//! camelCase. Cursor's `system/init` is recognised by what it lacks of Claude Code's
//! (`apiKeySource` without `tools`, `uuid` or `claude_code_version`); the plain `user` lines
//! after it look like Claude's and are routed to Cursor because the init named Cursor
//! (detection rule 2c). A stream cut before its init needs `--from cursor`.

use super::claude;
use super::{Capabilities, Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::members::Line;
use crate::wire::{count, is_object, raw_str, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

pub const PROVIDER: Provider = Provider {
    name: "cursor",
    display: "Cursor",
    cc_name: "claude",
    about: "Cursor Agent stream-json (cursor-agent -p --output-format stream-json)",
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
        permissions: false,
        questions: false,
        file_changes: true,
        command_exec: true,
        mcp: true,
        usage: true,
        cost: false,
        subagents: false,
        plans: true,
    },
    infers_turns: true,
    whole_messages: false,
    at_end: None,
    talk: None,
};

fn sniff(p: &Probe) -> bool {
    match p.ty() {
        Some("tool_call" | "thinking") => true,
        // testdata/cursor/shell-read.jsonl line 1: `apiKeySource` as Claude Code's init has
        // it, but none of `tools`, `uuid` and `claude_code_version`, which Claude's always has.
        Some("system") if p.subtype() == Some("init") && p.member("timestamp_ms").is_none() => {
            p.members().is_some_and(|m| {
                let has = |k: &str| m.iter().any(|(n, _)| *n == k);
                has("apiKeySource") && !has("tools") && !has("uuid") && !has("claude_code_version")
            })
        }
        Some("assistant" | "user" | "system") => p.member("timestamp_ms").is_some(),
        Some("result") => {
            p.member("timestamp_ms").is_some()
                || p.member("usage")
                    .is_some_and(|u| u.is_object() && u.get().contains("\"inputTokens\""))
        }
        _ => false,
    }
}

fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let ty = probe.ty().unwrap_or("");
    match ty {
        "system" | "user" | "assistant" => {
            claude::convert_as(line, probe, cx, &claude::CLAUDE)?;
            envelope(probe, cx);
            super::models::note(cx, PROVIDER.name);
            let w: Extra = crate::members::read(line, probe.members())?;
            for (_, ext) in cx.events.iter_mut() {
                ext.put_opt("cursor.modelCallId", w.model_call_id.0.clone());
            }
            Ok(())
        }
        "thinking" => {
            envelope(probe, cx);
            thinking(
                Line::new(line, probe.members()),
                probe.subtype().unwrap_or(""),
                cx,
            )
        }
        "tool_call" => {
            envelope(probe, cx);
            tool_call(Line::new(line, probe.members()), cx)
        }
        "result" => {
            envelope(probe, cx);
            result(Line::new(line, probe.members()), cx)?;
            super::models::price(cx);
            Ok(())
        }
        t => Err(Unmapped(format!("unknown Cursor message type {t:?}"))),
    }
}

/// `session_id` (else, as for Claude Code, the one the stream named last) and the line's
/// time (`timestamp_ms`).
fn envelope<'a>(probe: &Probe<'a>, cx: &mut Cx<'a>) {
    cx.session_id = probe
        .session_id
        .and_then(|r| r.str())
        .filter(|s| !s.is_empty());
    claude::track_session(cx, probe.ty().unwrap_or(""), probe.subtype());
    if let Some(ms) = probe
        .member("timestamp_ms")
        .and_then(|t| serde_json::from_str::<Count>(t.get()).ok())
    {
        cx.timestamp = Some(Cow::Owned(crate::time::format_millis(ms.0)));
    }
}

#[derive(Deserialize)]
struct Extra<'a> {
    #[serde(borrow)]
    model_call_id: OptStr<'a>,
}

#[derive(Deserialize)]
struct Thinking<'a> {
    #[serde(borrow)]
    text: OptStr<'a>,
}

fn thinking<'a>(line: Line<'a, '_>, subtype: &str, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: Thinking = line.read()?;
    let (kind, text) = match subtype {
        "delta" => (
            StreamDeltaKind::Thinking,
            Some(w.text.0.unwrap_or_default()),
        ),
        "completed" => (StreamDeltaKind::BlockStop, None),
        other => {
            return Err(Unmapped(format!(
                "unknown Cursor thinking subtype {other:?}"
            )))
        }
    };
    let ext = cx.push(StreamDelta {
        kind,
        parent_call_id: None,
        text_delta: text,
        json_delta: None,
        block_index: None,
        call_id: None,
        message_id: None,
    });
    if kind == StreamDeltaKind::BlockStop {
        ext.put("block_type", "thinking");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// tool_call

#[derive(Deserialize)]
struct ToolCallLine<'a> {
    subtype: OptStr<'a>,
    call_id: OptStr<'a>,
    #[serde(borrow)]
    tool_call: &'a RawValue,
    model_call_id: OptStr<'a>,
    #[serde(rename = "startedAtMs", borrow)]
    started_at_ms: Option<&'a RawValue>,
    #[serde(rename = "completedAtMs", borrow)]
    completed_at_ms: Option<&'a RawValue>,
    duration_ms: Option<Count>,
}

/// One `<kind>ToolCall` (or `function`) member of `tool_call`.
#[derive(Deserialize, Default)]
struct Tool<'a> {
    #[serde(borrow)]
    args: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    description: OptStr<'a>,
    // `function`: a tool outside Cursor's own set.
    name: OptStr<'a>,
    arguments: OptStr<'a>,
}

/// The members of `args` that titles, locations and plans are made from.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Args<'a> {
    command: OptStr<'a>,
    path: OptStr<'a>,
    glob_pattern: OptStr<'a>,
    pattern: OptStr<'a>,
    target_directory: OptStr<'a>,
    query: OptStr<'a>,
    url: OptStr<'a>,
    description: OptStr<'a>,
    // mcpToolCall
    name: OptStr<'a>,
    provider_identifier: OptStr<'a>,
    tool_name: OptStr<'a>,
    // updateTodosToolCall
    #[serde(borrow)]
    todos: Option<Vec<Todo<'a>>>,
}

#[derive(Deserialize)]
struct Todo<'a> {
    #[serde(borrow)]
    content: OptStr<'a>,
    status: OptStr<'a>,
}

/// What a successful edit, write or delete reports.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Success<'a> {
    path: OptStr<'a>,
    diff_string: OptStr<'a>,
    exit_code: Option<i64>,
    /// updateTodosToolCall: the list after the update.
    #[serde(borrow)]
    todos: Option<Vec<Todo<'a>>>,
}

/// A todo list as the whole plan. Statuses are `pending`, … or `TODO_STATUS_PENDING`, ….
fn plan<'a>(todos: Vec<Todo<'a>>, call_id: Str<'a>) -> PlanUpdate<'a> {
    let entries = todos
        .into_iter()
        .map(|t| PlanEntry {
            status: claude::plan_status(
                t.status
                    .as_deref()
                    .map(|s| s.trim_start_matches("TODO_STATUS_").to_ascii_lowercase())
                    .as_deref(),
            ),
            content: t.content.0.unwrap_or_default(),
            priority: None,
            active_form: None,
        })
        .collect();
    PlanUpdate {
        entries,
        call_id: Some(call_id),
        parent_call_id: None,
        explanation: None,
    }
}

/// The ToolKind of a Cursor tool (its key without `ToolCall`).
fn tool_kind(kind: &str) -> ToolKind {
    match kind {
        "shell" => ToolKind::Execute,
        "read" | "ls" => ToolKind::Read,
        "edit" | "write" | "multiEdit" => ToolKind::Edit,
        "delete" => ToolKind::Delete,
        "glob" | "grep" | "semSearch" | "codebaseSearch" => ToolKind::Search,
        "webFetch" => ToolKind::Fetch,
        "webSearch" => ToolKind::Browse,
        "updateTodos" | "readTodos" => ToolKind::Memory,
        "mcp" => ToolKind::Mcp,
        "task" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The call id: the first line of `call_id` (the rest, when there is one, is Cursor's
/// model-side id).
fn call_id<'a>(raw: Option<Str<'a>>) -> (Str<'a>, Option<Str<'a>>) {
    let Some(id) = raw else {
        return (Cow::Borrowed(""), None);
    };
    if !id.contains('\n') {
        return (id, None);
    }
    let first = super::sub(&id, |s| s.split('\n').next().unwrap_or(""));
    (first, Some(id))
}

/// A time in milliseconds written as a number or a string of digits.
fn millis(raw: Option<&RawValue>) -> Option<u64> {
    let raw = raw?;
    match raw_str(raw) {
        Some(s) => s.parse().ok(),
        None => serde_json::from_str::<Count>(raw.get()).ok().map(|c| c.0),
    }
}

fn tool_call<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ToolCallLine = line.read()?;
    if !is_object(w.tool_call) {
        return Err(Unmapped("tool_call is not an object".into()));
    }
    let members: Pairs<&RawValue> = serde_json::from_str(w.tool_call.get())?;
    let Some((key, raw_tool)) = members
        .0
        .iter()
        .find(|(k, v)| (k.ends_with("ToolCall") || k == "function") && is_object(v))
        .map(|(k, v)| (k.clone(), *v))
    else {
        return Err(Unmapped("tool_call names no <kind>ToolCall".into()));
    };
    let tool: Tool = serde_json::from_str(raw_tool.get())?;
    let kind_name = super::sub(&key, |k| k.strip_suffix("ToolCall").unwrap_or(k));
    let args_raw = match (&tool.arguments.0, tool.args) {
        (_, Some(a)) if is_object(a) => Some(Json::Raw(a)),
        // `function` carries its arguments as a JSON string.
        (Some(text), _) => Some(
            serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .filter(|v| v.is_object())
                .map(Json::Value)
                .unwrap_or_else(|| Json::Str(text.clone())),
        ),
        _ => None,
    };
    let args: Args = match tool.args {
        Some(a) if is_object(a) => serde_json::from_str(a.get()).unwrap_or_default(),
        _ => Args::default(),
    };
    let (call_id, full_id) = call_id(w.call_id.0);
    let put_common = |ext: &mut Extensions<'a>| {
        ext.put_opt("cursor.callId", full_id.clone());
        ext.put_opt("cursor.modelCallId", w.model_call_id.0.clone());
    };
    match w.subtype.as_deref() {
        Some("started") => {
            let kind = if key == "function" {
                ToolKind::Other
            } else {
                tool_kind(&kind_name)
            };
            let mcp = kind == ToolKind::Mcp;
            let tool_name = if key == "function" {
                tool.name.0.clone().unwrap_or(Cow::Borrowed("function"))
            } else if mcp {
                args.name.0.clone().unwrap_or_else(|| kind_name.clone())
            } else {
                kind_name.clone()
            };
            let title = args
                .command
                .0
                .clone()
                .or_else(|| args.path.0.clone())
                .or_else(|| args.glob_pattern.0.clone())
                .or_else(|| args.pattern.0.clone())
                .or_else(|| args.query.0.clone())
                .or_else(|| args.url.0.clone())
                .or_else(|| tool.description.0.clone())
                .or_else(|| args.description.0.clone());
            let locations: Vec<Str<'a>> = [&args.path.0, &args.target_directory.0]
                .into_iter()
                .flatten()
                .cloned()
                .collect();
            let ext = cx.push(ToolInvocation {
                call_id: call_id.clone(),
                parent_call_id: None,
                kind,
                tool_name,
                title,
                input: args_raw.unwrap_or(Json::Value(serde_json::json!({}))),
                locations: (!locations.is_empty()).then_some(locations),
                model: None,
                mcp_server: if mcp {
                    args.provider_identifier.0
                } else {
                    None
                },
                mcp_tool: if mcp { args.tool_name.0 } else { None },
                message_id: None,
            });
            put_common(ext);
            if kind_name == "updateTodos" {
                cx.push(plan(args.todos.unwrap_or_default(), call_id));
            }
            Ok(())
        }
        Some("completed") => {
            let outcome: Option<(Str<'a>, &'a RawValue)> = match tool.result {
                Some(r) if is_object(r) => {
                    let p: Pairs<&RawValue> = serde_json::from_str(r.get())?;
                    p.0.into_iter().find(|(k, _)| {
                        matches!(
                            &**k,
                            "success" | "error" | "failure" | "rejected" | "permissionDenied"
                        )
                    })
                }
                _ => None,
            };
            let mut success: Success = match &outcome {
                Some((k, v)) if k == "success" && is_object(v) => {
                    serde_json::from_str(v.get()).unwrap_or_default()
                }
                _ => Success::default(),
            };
            let status = match outcome.as_ref().map(|(k, _)| &**k) {
                None => ToolCallStatus::Completed,
                Some("success") if success.exit_code.unwrap_or(0) == 0 => ToolCallStatus::Completed,
                // A refused call never ran: failed, as on every provider (the refusal is
                // the outcome's name, kept in `cursor.outcome`).
                Some(_) => ToolCallStatus::Failed,
            };
            let duration_ms = match (millis(w.started_at_ms), millis(w.completed_at_ms)) {
                (Some(a), Some(b)) if b >= a => Some(b - a),
                _ => count(w.duration_ms),
            };
            let ext = cx.push(ToolCompletion {
                call_id: call_id.clone(),
                status,
                duration_ms,
                output: outcome
                    .as_ref()
                    .map(|(_, v)| Json::Raw(v))
                    .or(tool.result.map(Json::Raw)),
                is_error: status != ToolCallStatus::Completed,
                content: None,
                locations: None,
                parent_call_id: None,
            });
            ext.put_opt("cursor.outcome", outcome.as_ref().map(|(k, _)| k.clone()));
            ext.put_opt("cursor.tool", Some(key.clone()));
            put_common(ext);
            if kind_name == "updateTodos" && status == ToolCallStatus::Completed {
                if let Some(todos) = success.todos.take() {
                    cx.push(plan(todos, call_id.clone()));
                }
            }
            let change = match &*kind_name {
                "edit" | "multiEdit" => Some(ChangeKind::Update),
                "write" => Some(ChangeKind::Add),
                "delete" => Some(ChangeKind::Delete),
                _ => None,
            };
            if let (Some(change_kind), ToolCallStatus::Completed) = (change, status) {
                if let Some(path) = success.path.0.or(args.path.0) {
                    // Cursor sends the hunks alone: the headers make it a unified diff.
                    let diff = success.diff_string.0.filter(|d| !d.is_empty()).map(|d| {
                        if d.starts_with("@@") {
                            let new_file = change_kind == ChangeKind::Add;
                            Cow::Owned(crate::diff::headers(&path, new_file) + &d)
                        } else {
                            d
                        }
                    });
                    cx.push(FileChange {
                        path,
                        change_kind,
                        move_path: None,
                        diff,
                        cumulative: false,
                        call_id: Some(call_id),
                        parent_call_id: None,
                    });
                }
            }
            Ok(())
        }
        other => Err(Unmapped(format!(
            "unknown Cursor tool_call subtype {:?}",
            other.unwrap_or("")
        ))),
    }
}

// ---------------------------------------------------------------------------------------------
// result

#[derive(Deserialize)]
struct ResultLine<'a> {
    #[serde(borrow)]
    subtype: OptStr<'a>,
    is_error: Option<bool>,
    duration_ms: Option<Count>,
    duration_api_ms: Option<Count>,
    result: OptStr<'a>,
    request_id: OptStr<'a>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    cache_read_tokens: Option<Count>,
    cache_write_tokens: Option<Count>,
}

fn result<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ResultLine = line.read()?;
    let ext = cx.push(TurnComplete {
        is_error: w.is_error.unwrap_or(false),
        subtype: w.subtype.0,
        result: w.result.0,
        duration_ms: count(w.duration_ms),
        duration_api_ms: count(w.duration_api_ms),
        usage: w.usage.map(|u| TokenUsage {
            input_tokens: count(u.input_tokens).unwrap_or(0),
            output_tokens: count(u.output_tokens).unwrap_or(0),
            cache_read_tokens: count(u.cache_read_tokens),
            cache_creation_tokens: count(u.cache_write_tokens),
            reasoning_tokens: None,
        }),
        ..TurnComplete::default()
    });
    ext.put_opt("cursor.requestId", w.request_id.0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;
    use serde_json::Value;

    /// One line's events; the line must be one detection takes for this provider.
    fn conv(line: &str) -> Vec<Value> {
        test_support::convert_sniffed(&PROVIDER, line)
    }

    #[test]
    fn lines_that_name_no_session_are_the_announced_one_s() {
        let ev = test_support::convert_stream(
            &PROVIDER,
            &[
                r#"{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":"s1","model":"Auto","permissionMode":"default"}"#,
                r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#,
                r#"{"type":"thinking","subtype":"delta","text":"I ","timestamp_ms":1}"#,
                r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"pwd"}}},"timestamp_ms":2}"#,
            ],
        );
        assert_eq!(ev.len(), 4, "{ev:#?}");
        for e in &ev {
            assert_eq!(e["sessionId"], "s1", "{e}");
        }
    }

    #[test]
    fn shell_started_and_completed() {
        let ev = conv(
            r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"pwd"},"description":"Print working directory"}},"session_id":"s","timestamp_ms":1002}"#,
        );
        assert_eq!(ev[0]["event"], "tool_invocation");
        assert_eq!(ev[0]["kind"], "execute");
        assert_eq!(ev[0]["toolName"], "shell");
        assert_eq!(ev[0]["title"], "pwd");
        let ev = conv(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"false"},"result":{"success":{"stdout":"","stderr":"","exitCode":1}}}},"session_id":"s"}"#,
        );
        assert_eq!(ev[0]["status"], "failed");
        assert_eq!(ev[0]["output"]["exitCode"], 1);
    }

    #[test]
    fn call_id_first_line_pairs_started_and_completed() {
        let ev = conv(
            r#"{"type":"tool_call","subtype":"started","call_id":"call-1\nfc_1","tool_call":{"readToolCall":{"args":{"path":"/a.txt"}}}}"#,
        );
        assert_eq!(ev[0]["callId"], "call-1");
        assert_eq!(ev[0]["extensions"]["cursor.callId"], "call-1\nfc_1");
    }

    #[test]
    fn edit_success_gives_a_file_change() {
        let ev = conv(
            r#"{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"/w/a.py"},"result":{"success":{"path":"/w/a.py","linesAdded":1,"linesRemoved":1,"diffString":"-a\n+b\n"}}}}}"#,
        );
        assert_eq!(ev[0]["status"], "completed");
        assert_eq!(ev[1]["event"], "file_change");
        assert_eq!(ev[1]["diff"], "-a\n+b\n");
        let ev = conv(
            r#"{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":"/w/a.py"},"result":{"success":{"path":"/w/a.py","diffString":"@@ -1 +1 @@\n-a\n+b\n"}}}}}"#,
        );
        assert_eq!(
            ev[1]["diff"],
            "--- a/w/a.py\n+++ b/w/a.py\n@@ -1 +1 @@\n-a\n+b\n"
        );
    }

    #[test]
    fn rejected_mcp_call_failed() {
        let ev = conv(
            r#"{"type":"tool_call","subtype":"started","call_id":"m","tool_call":{"mcpToolCall":{"args":{"name":"bb-get_pr","args":{"prId":1},"providerIdentifier":"bb","toolName":"get_pr"}}}}"#,
        );
        assert_eq!(ev[0]["kind"], "mcp");
        assert_eq!(ev[0]["mcpServer"], "bb");
        assert_eq!(ev[0]["mcpTool"], "get_pr");
        let ev = conv(
            r#"{"type":"tool_call","subtype":"completed","call_id":"m","tool_call":{"mcpToolCall":{"result":{"rejected":{"reason":"no"}}}}}"#,
        );
        assert_eq!(ev[0]["status"], "failed");
        assert_eq!(ev[0]["extensions"]["cursor.outcome"], "rejected");
    }

    #[test]
    fn result_usage_is_camel_case() {
        let ev = conv(
            r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":2500,"result":"ok","usage":{"inputTokens":120,"outputTokens":45,"cacheReadTokens":10,"cacheWriteTokens":2}}"#,
        );
        assert_eq!(ev[0]["usage"]["inputTokens"], 120);
        assert_eq!(ev[0]["usage"]["cacheCreationTokens"], 2);
    }

    #[test]
    fn thinking_deltas() {
        let ev = conv(r#"{"type":"thinking","subtype":"delta","text":"hm","timestamp_ms":1}"#);
        assert_eq!(ev[0]["kind"], "thinking");
        assert_eq!(ev[0]["textDelta"], "hm");
    }

    #[test]
    fn claude_lines_are_not_taken() {
        for line in [
            r#"{"type":"result","subtype":"success","usage":{"input_tokens":1}}"#,
            r#"{"type":"assistant","message":{"content":[]}}"#,
        ] {
            assert!(!sniff(&serde_json::from_str::<Probe>(line).unwrap()));
        }
    }
}
