//! Legacy `codex/event` notifications (`{method: "codex/event/<type>", params: {id, msg}}`) and
//! the bare `{id, msg}` envelope of `codex proto`; rollout files' `event_msg` payloads map
//! through [`legacy`] too.

use super::diff::split_diff;
use super::exec::{exec_totals, exec_usage_snake, tokens, ExecUsage};
use super::{
    base64_decode, cancel_open_calls, close_call, command_text, completion, cumulative_changes,
    delta, error_event, http_status, line_thread, notice, object, open_call, or_null, plan_update,
    push_file_changes, set_stream_thread, status_in_message, strip_plan_tags, text,
    tool_invocation, turn_usage, unwrap_shell, usage_reported, usage_turn_started, Change,
    PlanStep, RAW_REASONING,
};
use crate::event::*;
use crate::providers::jsonrpc::{self, Envelope};
use crate::providers::{Cx, Unmapped};
use crate::wire::{count, is_null, is_object, raw_str, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(rename = "type", borrow)]
    ty: Str<'a>,
    message: OptStr<'a>,
    delta: OptStr<'a>,
    text: OptStr<'a>,
    call_id: OptStr<'a>,
    #[serde(borrow)]
    command: Option<&'a RawValue>,
    cwd: OptStr<'a>,
    chunk: OptStr<'a>,
    stdout: OptStr<'a>,
    stderr: OptStr<'a>,
    aggregated_output: OptStr<'a>,
    exit_code: Option<i64>,
    #[serde(borrow)]
    changes: Option<&'a RawValue>,
    success: Option<bool>,
    info: Option<LegacyTokenInfo>,
    last_agent_message: OptStr<'a>,
    unified_diff: OptStr<'a>,
    explanation: OptStr<'a>,
    #[serde(borrow)]
    plan: Option<Vec<PlanStep<'a>>>,
    reason: OptStr<'a>,
    session_id: OptStr<'a>,
    model: OptStr<'a>,
    #[serde(borrow)]
    invocation: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    query: OptStr<'a>,
    turn_id: OptStr<'a>,
    grant_root: OptStr<'a>,
    item_id: OptStr<'a>,
    #[serde(borrow)]
    codex_error_info: Option<&'a RawValue>,
}

#[derive(Deserialize)]
pub(in crate::providers) struct LegacyTokenInfo {
    pub(in crate::providers) total_token_usage: Option<ExecUsage>,
    pub(in crate::providers) last_token_usage: Option<ExecUsage>,
    model_context_window: Option<Count>,
}

/// The files of a legacy `patch_apply_begin`: `{path: {add: …} | {delete: …} | {update:
/// {move_path, …}}}`; or of a session file's `FileChange` item, whose changes name their kind
/// in a `type` member: `{path: {type: "update", unified_diff, move_path}}`.
pub(in crate::providers) fn legacy_changes(changes: Option<&RawValue>) -> Vec<Change> {
    /// `{"add": {content}}`, `{"delete": {content}}`, `{"update": {unified_diff, move_path}}`,
    /// or the body itself with its kind in `type`.
    #[derive(Deserialize, Default)]
    struct Body<'a> {
        #[serde(rename = "type", borrow)]
        ty: OptStr<'a>,
        #[serde(borrow)]
        move_path: OptStr<'a>,
        unified_diff: OptStr<'a>,
        content: OptStr<'a>,
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
            let tagged = serde_json::from_str::<Body>(change.get())
                .ok()
                .filter(|b| b.ty.0.is_some());
            let (kind, body) = match tagged {
                Some(b) => (b.ty.0.clone().unwrap_or_default(), b),
                None => (
                    jsonrpc::member_names(change.get())
                        .into_iter()
                        .next()
                        .unwrap_or_default(),
                    serde_json::from_str::<Pairs<Body>>(change.get())
                        .ok()
                        .and_then(|p| p.0.into_iter().next())
                        .map(|(_, b)| b)
                        .unwrap_or_default(),
                ),
            };
            let to = body
                .move_path
                .0
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
                diff: body.unified_diff.0.or(body.content.0).map(Cow::into_owned),
            }
        })
        .collect()
}

pub(in crate::providers) fn legacy<'a>(
    msg: &'a RawValue,
    env: Option<&Envelope<'a>>,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let _ = env;
    let m: Msg = serde_json::from_str(msg.get())?;
    if cx.memory().codex.v2_seen.get() {
        let ext = cx.push(Notice {
            subtype: Cow::Owned(format!("codex/event/{}", m.ty)),
            message: None,
        });
        ext.put("codex.supersededBy", "v2");
        ext.put("msg", msg);
        return Ok(());
    }
    if cx.turn_id.is_none() {
        cx.turn_id = m.turn_id.0.clone();
    }
    let call = || m.call_id.0.clone().unwrap_or_default();
    match &*m.ty {
        "session_configured" => {
            cx.session_id = m.session_id.0.clone().or(cx.session_id.take());
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
            if let Some(model) = m.model.as_deref() {
                super::set_thread_model(cx, Some(&t), model);
            }
            cx.push(SessionInit {
                model: m.model.0.clone(),
                cwd: m.cwd.0.clone(),
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
            let model_usage = super::turn_model_usage(cx, usage.as_ref());
            cx.push(TurnComplete {
                subtype: Some(Cow::Borrowed("success")),
                result: m.last_agent_message.0.clone(),
                usage,
                model_usage,
                ..TurnComplete::default()
            });
        }
        "turn_aborted" => {
            let thread = line_thread(cx);
            cancel_open_calls(cx, thread.as_deref());
            let usage = turn_usage(cx, cx.turn_id.clone().as_deref());
            let model_usage = super::turn_model_usage(cx, usage.as_ref());
            cx.push(TurnComplete {
                subtype: Some(Cow::Borrowed("interrupted")),
                stop_reason: m.reason.0.clone(),
                usage,
                model_usage,
                ..TurnComplete::default()
            });
        }
        "user_message" => {
            cx.push(UserInput {
                text: m.message.0.clone().unwrap_or_default(),
                images: None,
                is_synthetic: false,
                parent_call_id: None,
            });
        }
        "agent_message" => {
            text(
                cx,
                strip_plan_tags(m.message.0.clone().unwrap_or_default()),
                TextKind::Text,
                None,
            );
        }
        "agent_reasoning" => {
            text(
                cx,
                m.text.0.clone().unwrap_or_default(),
                TextKind::Thinking,
                None,
            );
        }
        "agent_reasoning_raw_content" => {
            let ext = text(
                cx,
                m.text.0.clone().unwrap_or_default(),
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
                m.item_id.0.clone(),
                m.delta.0.clone().map(strip_plan_tags),
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
            cx.push(delta(kind, None, m.delta.0.clone().map(strip_plan_tags)));
        }
        "agent_reasoning_raw_content_delta" => {
            let ext = cx.push(delta(StreamDeltaKind::Thinking, None, m.delta.0.clone()));
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
                    ("cwd", or_null(m.cwd.0.clone())),
                ]),
            ));
        }
        "exec_command_output_delta" => {
            let text = m
                .chunk
                .as_deref()
                .and_then(base64_decode)
                .map(|b| Cow::Owned(String::from_utf8_lossy(&b).into_owned()))
                .or(m.chunk.0.clone());
            cx.push(delta(StreamDeltaKind::ToolOutput, Some(call()), text));
        }
        "exec_command_end" => {
            close_call(cx, &call());
            let ok = m.exit_code.unwrap_or(0) == 0;
            let output = object([
                (
                    "stdout",
                    or_null(m.aggregated_output.0.clone().or(m.stdout.0.clone())),
                ),
                ("stderr", or_null(m.stderr.0)),
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
                    ("stdout", or_null(m.stdout.0)),
                    ("stderr", or_null(m.stderr.0)),
                ])),
            ));
            // The files: the end names none, its begin did.
            if ok {
                let changes = opened.map(|c| c.changes).unwrap_or_default();
                push_file_changes(cx, &call(), changes);
            }
        }
        "mcp_tool_call_begin" => {
            #[derive(Deserialize)]
            struct Inv<'a> {
                #[serde(borrow)]
                server: OptStr<'a>,
                tool: OptStr<'a>,
            }
            let inv: Option<Inv> = m
                .invocation
                .and_then(|i| serde_json::from_str(i.get()).ok());
            let (server, tool) = inv
                .map(|i| (i.server.0.unwrap_or_default(), i.tool.0.unwrap_or_default()))
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
                Some(object([("query", or_null(m.query.0))])),
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
            let mut step = info.last_token_usage.as_ref();
            let mut repeated = None;
            if let Some(total) = &info.total_token_usage {
                let last = info.last_token_usage.as_ref().map(exec_totals);
                let turn = cx.turn_id.clone();
                if !usage_reported(cx, turn.as_deref(), exec_totals(total), last) {
                    // The total did not move: `last` is the request counted before, again.
                    repeated = step.take();
                }
            }
            let tot = info.total_token_usage.as_ref().map(tokens);
            let ext = cx.push(UsageUpdate {
                step_usage: Json::Value(step.map(exec_usage_snake).unwrap_or_else(|| json!({}))),
                total: tot,
                context_window: count(info.model_context_window),
                context_tokens: None,
                cost_usd: None,
                parent_call_id: None,
                model: None,
                message_id: None,
            });
            ext.put_opt(
                "codex.repeatedLast",
                repeated.map(|l| Json::Value(exec_usage_snake(l))),
            );
        }
        "turn_diff" => {
            let files = split_diff(m.unified_diff.as_deref().unwrap_or(""));
            cumulative_changes(cx, files);
            if cx.events.is_empty() {
                notice(cx, Cow::Borrowed("codex/event/turn_diff"), None);
            }
        }
        "plan_update" => {
            cx.push(plan_update(m.explanation.0, m.plan, None));
        }
        "error" | "stream_error" | "warning" => {
            let sev = if m.ty == "error" {
                Severity::Error
            } else {
                Severity::Warning
            };
            let mut e = error_event(m.message.0.unwrap_or(Cow::Borrowed("error")), sev);
            e.will_retry = Some(m.ty == "stream_error");
            if let Some(info) = m.codex_error_info.filter(|i| !is_null(i)) {
                e.code =
                    raw_str(info).or_else(|| jsonrpc::member_names(info.get()).into_iter().next());
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
                tool_input: object([("command", or_null(cmd.clone())), ("cwd", or_null(m.cwd.0))]),
                tool_use_id: m.call_id.0.clone(),
                reason: m.reason.0,
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
                    ("grantRoot", or_null(m.grant_root.0.clone())),
                ]),
                tool_use_id: m.call_id.0.clone(),
                reason: m.reason.0,
                blocked_path: m.grant_root.0,
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
                message: m.message.0,
            });
            ext.put("msg", msg);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{conv, stream};
    use crate::test_support::of_kind;

    #[test]
    fn legacy_maps_until_v2_is_seen() {
        let line = r#"{"method":"codex/event/exec_command_output_delta","params":{"id":"1","msg":{"type":"exec_command_output_delta","call_id":"call-1","stream":"stdout","chunk":"Zmlyc3QK"},"conversationId":"thread"}}"#;
        let ev = conv(line);
        assert_eq!(ev[0]["event"], "stream_delta");
        assert_eq!(ev[0]["textDelta"], "first\n");
        assert_eq!(ev[0]["sessionId"], "thread");
        let v2 = r#"{"method":"turn/started","params":{"threadId":"thread","turn":{"id":"u"}}}"#;
        let ev = stream(&[v2, line]);
        let last = ev.last().unwrap();
        assert_eq!(last["event"], "notice");
        assert_eq!(last["extensions"]["codex.supersededBy"], "v2");
    }

    #[test]
    fn bare_proto_envelope() {
        let ev = conv(r#"{"id":"submission-1","msg":{"type":"agent_message","message":"Hello!"}}"#);
        assert_eq!(ev[0]["event"], "text");
        assert_eq!(ev[0]["text"], "Hello!");
    }

    #[test]
    fn legacy_deltas_come_once() {
        let evs = stream(&[
            r#"{"method":"codex/event/agent_message_content_delta","params":{"id":"x","msg":{"type":"agent_message_content_delta","thread_id":"c","turn_id":"t","item_id":"i","delta":"Hel"},"conversationId":"c"}}"#,
            r#"{"method":"codex/event/agent_message_delta","params":{"id":"x","msg":{"type":"agent_message_delta","delta":"Hel"},"conversationId":"c"}}"#,
        ]);
        let deltas = of_kind(&evs, "stream_delta");
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
        let files = of_kind(&evs, "file_change");
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
