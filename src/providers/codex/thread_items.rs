//! The app-server's v2 ThreadItems: what `item/started` and `item/completed` say (read in the
//! line's pass), and the items of a resumed thread's history.

use super::app_server::said;
use super::changes_json;
use super::diff::git_diff;
use super::{
    change_kind, close_call, collab_end, command_text, completion, declined_status, delta,
    file_change, is_open, object, open_call, or_null, strip_plan_block, text, tool_invocation,
    unwrap_shell, wire_status, Change, RAW_REASONING,
};
use crate::event::*;
use crate::members::Line;
use crate::providers::jsonrpc::{self, Kind};
use crate::providers::{Cx, Unmapped};
use crate::wire::{count, is_null, Count, IfObject, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

/// An `item/started` or `item/completed` notification, its item read in the line's pass: these
/// are a third of an app-server log, and [`Params`] keeps `item` raw (other methods' items
/// have other shapes), which read it twice.
///
/// [`Params`]: super::app_server::Params
pub(super) fn item_line<'a>(
    method: &str,
    line: Line<'a, '_>,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    #[derive(Deserialize)]
    struct ItemMessage<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        #[serde(borrow, default)]
        params: IfObject<ItemParams<'a>>,
        #[serde(rename = "emittedAtMs")]
        emitted_at_ms: Option<Count>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct ItemParams<'a> {
        thread_id: OptStr<'a>,
        turn_id: OptStr<'a>,
        #[serde(borrow)]
        item: Option<Box<Item<'a>>>,
    }
    let m: ItemMessage = line.read()?;
    if let Some(ms) = m.emitted_at_ms {
        cx.timestamp = Some(Cow::Owned(crate::time::format_millis(ms.0)));
    }
    let p = m.params.0;
    let (thread, turn, item) =
        p.map_or((None, None, None), |p| (p.thread_id.0, p.turn_id.0, p.item));
    cx.session_id = thread;
    cx.turn_id = turn;
    let item = item.ok_or_else(|| Unmapped(format!("{method} without an item")))?;
    v2_item(method == "item/completed", *item, cx);
    // As in `method_call`: a v2 notification.
    if jsonrpc::kind(true, m.id, None, false) == Some(Kind::Notification) {
        cx.memory().codex.v2_seen.set();
    }
    Ok(())
}

#[derive(Deserialize)]
struct InputItem<'a> {
    #[serde(rename = "type", borrow)]
    ty: OptStr<'a>,
    text: OptStr<'a>,
    url: OptStr<'a>,
    path: OptStr<'a>,
}

/// A ThreadItem of v2.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Item<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) ty: Str<'a>,
    #[serde(borrow)]
    id: Str<'a>,
    text: OptStr<'a>,
    #[serde(borrow)]
    summary: Option<Vec<Str<'a>>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    command: Option<&'a RawValue>,
    cwd: OptStr<'a>,
    status: OptStr<'a>,
    #[serde(borrow)]
    command_actions: Option<&'a RawValue>,
    aggregated_output: OptStr<'a>,
    exit_code: Option<i64>,
    duration_ms: Option<Count>,
    #[serde(borrow)]
    changes: Option<Vec<ChangeWire<'a>>>,
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
    path: OptStr<'a>,
    prompt: OptStr<'a>,
    receiver_thread_id: OptStr<'a>,
    new_thread_id: OptStr<'a>,
    #[serde(borrow)]
    review: Option<&'a RawValue>,
    /// Where a command came from (`agent`, `userShell`, …); items of Codex 0.100 lack it.
    #[serde(borrow)]
    source: Option<&'a RawValue>,
    /// When the item started; items of Codex 0.100 lack it.
    #[serde(borrow)]
    started_at_ms: Option<&'a RawValue>,
    /// When it completed (`null` until then).
    #[serde(borrow)]
    completed_at_ms: Option<&'a RawValue>,
    /// A command's process (a string id, or null).
    #[serde(borrow)]
    process_id: Option<&'a RawValue>,
    #[serde(borrow)]
    plugin_id: Option<&'a RawValue>,
    #[serde(borrow)]
    script_path: Option<&'a RawValue>,
    /// `collabAgentToolCall` (0.169): the agents it addresses.
    #[serde(borrow)]
    receiver_thread_ids: Option<&'a RawValue>,
    #[serde(borrow)]
    agents_states: Option<&'a RawValue>,
    model: OptStr<'a>,
    /// `dynamicToolCall`: its result.
    #[serde(borrow)]
    content_items: Option<&'a RawValue>,
    success: Option<bool>,
    namespace: OptStr<'a>,
}

#[derive(Deserialize)]
struct ChangeWire<'a> {
    #[serde(borrow)]
    path: Str<'a>,
    #[serde(borrow)]
    kind: Option<ChangeKindWire<'a>>,
    diff: OptStr<'a>,
}

#[derive(Deserialize)]
struct ChangeKindWire<'a> {
    #[serde(rename = "type", borrow)]
    ty: OptStr<'a>,
    move_path: OptStr<'a>,
}

/// The events of an item's `item/started` or `item/completed` (`done`), the first of them
/// with the item's `startedAtMs` and `completedAtMs` as `codex.*` extensions (the wire's
/// times of the item, beside the line's `emittedAtMs` that is the events' `timestamp`).
pub(super) fn v2_item<'a>(done: bool, it: Item<'a>, cx: &mut Cx<'a>) {
    let (started, completed) = (said(it.started_at_ms), said(it.completed_at_ms));
    let from = cx.events.len();
    v2_item_events(done, it, cx);
    if let Some((_, ext)) = cx.events.get_mut(from) {
        ext.put_opt("codex.startedAtMs", started);
        ext.put_opt("codex.completedAtMs", completed);
    }
}

fn v2_item_events<'a>(done: bool, it: Item<'a>, cx: &mut Cx<'a>) {
    let status = it.status.0.clone().map(wire_status);
    let status = status.as_deref().unwrap_or("");
    match &*it.ty {
        "userMessage" => {
            if done {
                let items: Vec<InputItem> = it
                    .content
                    .and_then(|c| serde_json::from_str(c.get()).ok())
                    .unwrap_or_default();
                let texts: Vec<&str> = items
                    .iter()
                    .filter(|i| i.ty.as_deref() == Some("text"))
                    .filter_map(|i| i.text.as_deref())
                    .collect();
                let images: Vec<ImageData> = items
                    .iter()
                    .filter(|i| matches!(i.ty.as_deref(), Some("image" | "localImage")))
                    .map(|i| ImageData {
                        media_type: Cow::Borrowed(""),
                        data: Cow::Owned(
                            i.url
                                .0
                                .clone()
                                .or(i.path.0.clone())
                                .unwrap_or_default()
                                .into_owned(),
                        ),
                    })
                    .collect();
                let ext = cx.push(UserInput {
                    text: Cow::Owned(texts.join("\n")),
                    images: (!images.is_empty()).then_some(images),
                    is_synthetic: false,
                    parent_call_id: None,
                });
                ext.put("codex.itemId", it.id);
            } else {
                let ext = cx.push(Notice {
                    subtype: Cow::Borrowed("item/started/userMessage"),
                    message: None,
                });
                ext.put("codex.itemId", it.id);
            }
        }
        "agentMessage" | "reasoning" | "plan" => {
            let kind = match &*it.ty {
                "reasoning" => TextKind::Thinking,
                "plan" => TextKind::Plan,
                _ => TextKind::Text,
            };
            if done {
                let body = match kind {
                    TextKind::Thinking => {
                        // The summary, then the raw reasoning (`content`) apart, marked, when
                        // the item has it.
                        let summary = it.summary.unwrap_or_default();
                        let parts: Vec<Str> = it
                            .content
                            .and_then(|c| serde_json::from_str(c.get()).ok())
                            .unwrap_or_default();
                        if !summary.is_empty() {
                            text(
                                cx,
                                Cow::Owned(summary.join("\n\n")),
                                kind,
                                Some(it.id.clone()),
                            );
                        }
                        if !parts.is_empty() {
                            let raw = text(cx, Cow::Owned(parts.join("\n")), kind, Some(it.id));
                            raw.put(RAW_REASONING, true);
                        } else if summary.is_empty() {
                            text(cx, Cow::Borrowed(""), kind, Some(it.id));
                        }
                        return;
                    }
                    TextKind::Text => strip_plan_block(it.text.0.unwrap_or_default()),
                    _ => it.text.0.unwrap_or_default(),
                };
                text(cx, body, kind, Some(it.id));
            } else {
                let ext = cx.push(delta(StreamDeltaKind::BlockStart, Some(it.id), None));
                match kind {
                    TextKind::Thinking => ext.put("block_type", "thinking"),
                    TextKind::Plan => ext.put("block_type", "plan"),
                    _ => ext.put("block_type", "text"),
                }
            }
        }
        "commandExecution" => {
            let cmd = command_text(it.command);
            // Codex 0.100 sends no `item/started` for a command the user declined: the item
            // completes without having started (`testdata/codex-app-server-0.100/
            // command-declined.jsonl`, line 33), so its completion also states the call. Later
            // versions send `item/started` before the approval request, and their items carry
            // `source` and `startedAtMs` (0.169.0: line 22 of
            // `testdata/codex-app-server/command-declined.jsonl`); an item with either is
            // known to have started.
            let unstarted =
                done && status == "declined" && it.source.is_none() && it.started_at_ms.is_none();
            if !done || unstarted {
                let title = cmd
                    .as_deref()
                    .map(|c| Cow::Owned(unwrap_shell(c).into_owned()));
                let input = object([
                    ("command", or_null(cmd)),
                    ("cwd", or_null(it.cwd.0)),
                    ("commandActions", or_null(it.command_actions)),
                ]);
                let ext = cx.push(tool_invocation(
                    it.id.clone(),
                    ToolKind::Execute,
                    "Bash",
                    title,
                    input,
                ));
                ext.put_opt("codex.processId", it.process_id.filter(|v| !is_null(v)));
                ext.put_opt("codex.source", it.source.filter(|v| !is_null(v)));
                ext.put_opt("codex.pluginId", it.plugin_id.filter(|v| !is_null(v)));
                ext.put_opt("codex.scriptPath", it.script_path.filter(|v| !is_null(v)));
                if unstarted {
                    ext.put("codex.itemStarted", false);
                } else {
                    open_call(cx, &it.id, "Bash", Vec::new());
                }
            }
            if done {
                let call = close_call(cx, &it.id);
                let ok = status == "completed" && it.exit_code.unwrap_or(0) == 0;
                let output = object([
                    ("stdout", or_null(it.aggregated_output.0)),
                    ("stderr", Json::from("")),
                    ("exit_code", or_null(it.exit_code.map(Value::from))),
                ]);
                let mut c = completion(it.id, ok, Some(output));
                c.duration_ms = count(it.duration_ms);
                if status == "declined" {
                    c.status = declined_status(call.as_ref());
                }
                let ran = !unstarted && status != "declined";
                let ext = cx.push(c);
                ext.put("codex.status", it.status.0.unwrap_or_default());
                if ran {
                    // The process and source it ran under, which may not be those it started
                    // with (after an approval).
                    ext.put_opt("codex.processId", it.process_id.filter(|v| !is_null(v)));
                    ext.put_opt("codex.source", it.source.filter(|v| !is_null(v)));
                }
            }
        }
        "fileChange" => {
            let changes = it.changes.unwrap_or_default();
            // The files it touches: each path, and where a move takes it.
            let paths: Vec<Str<'a>> = changes
                .iter()
                .flat_map(|c| {
                    let to = c.kind.as_ref().and_then(|k| k.move_path.0.clone());
                    std::iter::once(c.path.clone()).chain(to)
                })
                .collect();
            // The changes as the memory keeps them: one shape for the call's input, its output
            // and its approval request (`changes_json`).
            let files: Vec<Change> = changes
                .iter()
                .map(|c| {
                    let to = c.kind.as_ref().and_then(|k| k.move_path.as_deref());
                    let kind = match to {
                        Some(_) => ChangeKind::Move,
                        None => change_kind(c.kind.as_ref().and_then(|k| k.ty.as_deref())),
                    };
                    Change {
                        path: c.path.to_string(),
                        kind,
                        move_path: to.map(str::to_owned),
                        diff: c.diff.as_deref().map(str::to_owned),
                    }
                })
                .collect();
            if !done {
                let mut input = vec![(
                    Cow::Borrowed("file_path"),
                    or_null(changes.first().map(|c| c.path.clone())),
                )];
                if changes.len() > 1 {
                    input.push((
                        Cow::Borrowed("paths"),
                        Json::Array(changes.iter().map(|c| Json::Str(c.path.clone())).collect()),
                    ));
                }
                input.push((Cow::Borrowed("changes"), changes_json(&files, true)));
                let input = Json::Object(Pairs(input));
                open_call(cx, &it.id, "FileChange", files);
                let mut inv = tool_invocation(
                    it.id,
                    ToolKind::Edit,
                    "FileChange",
                    changes.first().map(|c| c.path.clone()),
                    input,
                );
                inv.locations = Some(paths);
                cx.push(inv);
            } else {
                let call = close_call(cx, &it.id);
                let ok = status == "completed";
                let output = object([("changes", changes_json(&files, false))]);
                let mut c = completion(it.id.clone(), ok, Some(output));
                if status == "declined" {
                    c.status = declined_status(call.as_ref());
                }
                c.locations = Some(paths);
                let ext = cx.push(c);
                ext.put("codex.status", status.to_owned());
                if ok {
                    for ch in changes {
                        let kind = change_kind(ch.kind.as_ref().and_then(|k| k.ty.as_deref()));
                        let move_path = ch.kind.and_then(|k| k.move_path.0);
                        let diff = ch
                            .diff
                            .as_deref()
                            .map(|d| git_diff(&ch.path, kind, move_path.as_deref(), d));
                        let mut fc = file_change(ch.path, kind, diff, Some(it.id.clone()));
                        if move_path.is_some() {
                            fc.change_kind = ChangeKind::Move;
                        }
                        fc.move_path = move_path;
                        cx.push(fc);
                    }
                }
            }
        }
        "mcpToolCall" | "dynamicToolCall" => {
            let dynamic = it.ty == "dynamicToolCall";
            let server = it.server.0.unwrap_or_default();
            let tool = it.tool.0.unwrap_or_default();
            let name = if !dynamic && !server.is_empty() && !tool.is_empty() {
                format!("mcp__{server}__{tool}")
            } else if !dynamic {
                "McpTool".to_owned()
            } else {
                tool.to_string()
            };
            if !done {
                if dynamic && is_open(cx, &it.id) {
                    // Its `item/tool/call` request opened it.
                    cx.push(ToolUpdate {
                        kind: None,
                        call_id: it.id,
                        status: it.status.0,
                        tool_name: Some(Cow::Owned(name)),
                        output: None,
                        elapsed_ms: None,
                        parent_call_id: None,
                        title: None,
                        input: None,
                        locations: None,
                    });
                    return;
                }
                open_call(cx, &it.id, &name, Vec::new());
                let mut inv = tool_invocation(
                    it.id,
                    if dynamic {
                        ToolKind::Other
                    } else {
                        ToolKind::Mcp
                    },
                    "",
                    None,
                    object([
                        ("server", Json::Str(server.clone())),
                        ("tool", Json::Str(tool.clone())),
                        ("arguments", or_null(it.arguments)),
                    ]),
                );
                inv.tool_name = Cow::Owned(name);
                if !dynamic {
                    inv.mcp_server = Some(server);
                    inv.mcp_tool = Some(tool);
                }
                let ext = cx.push(inv);
                ext.put_opt("codex.namespace", it.namespace.0);
            } else {
                let was_open = close_call(cx, &it.id).is_some_and(|c| c.invoked);
                let failed = it.error.is_some_and(|e| !is_null(e))
                    || status == "failed"
                    || it.success == Some(false);
                let output = if dynamic {
                    Some(object([
                        ("contentItems", or_null(it.content_items)),
                        ("success", or_null(it.success)),
                    ]))
                } else {
                    if failed { it.error } else { it.result }
                        .filter(|r| !is_null(r))
                        .map(Json::Raw)
                };
                if dynamic && !was_open {
                    // The client's answer ended it already; the item adds its duration.
                    let ext = cx.push(Notice {
                        subtype: Cow::Borrowed("item/completed/dynamicToolCall"),
                        message: None,
                    });
                    ext.put("codex.itemId", it.id);
                    ext.put_opt("codex.status", it.status.0);
                    ext.put_opt("codex.durationMs", count(it.duration_ms));
                    ext.put_opt("codex.output", output);
                    return;
                }
                let mut c = completion(it.id, !failed, output);
                c.duration_ms = count(it.duration_ms);
                cx.push(c);
            }
        }
        "webSearch" => {
            let input = object([
                ("query", or_null(it.query.0.clone())),
                ("action", or_null(it.action)),
            ]);
            if !done {
                open_call(cx, &it.id, "WebSearch", Vec::new());
                cx.push(tool_invocation(
                    it.id,
                    ToolKind::Browse,
                    "WebSearch",
                    it.query.0,
                    input,
                ));
            } else {
                close_call(cx, &it.id);
                cx.push(completion(it.id, true, Some(input)));
            }
        }
        "imageView" => {
            if !done {
                open_call(cx, &it.id, "ImageView", Vec::new());
                let input = object([("path", or_null(it.path.0.clone()))]);
                let mut inv =
                    tool_invocation(it.id, ToolKind::Read, "ImageView", it.path.0.clone(), input);
                inv.locations = it.path.0.map(|p| vec![p]);
                cx.push(inv);
            } else {
                close_call(cx, &it.id);
                cx.push(completion(it.id, true, None));
            }
        }
        "collabToolCall" | "collabAgentToolCall" => {
            // Codex 0.169 calls it `collabAgentToolCall` (tools `spawnAgent`, `wait`,
            // `closeAgent`, …, several receivers); earlier builds `collabToolCall`
            // (`spawn_agent`, one receiver).
            let tool = it.tool.0.unwrap_or_default();
            let receivers: Vec<Str<'a>> = it
                .receiver_thread_ids
                .and_then(|r| serde_json::from_str(r.get()).ok())
                .unwrap_or_default();
            let agent = it
                .new_thread_id
                .0
                .or(it.receiver_thread_id.0)
                .or_else(|| receivers.first().cloned());
            let name = format!("collab:{tool}");
            if !done {
                open_call(cx, &it.id, &name, Vec::new());
                let input = object([
                    ("tool", Json::Str(tool.clone())),
                    ("prompt", or_null(it.prompt.0.clone())),
                    ("receiverThreadId", or_null(agent)),
                ]);
                let mut inv = tool_invocation(
                    it.id.clone(),
                    ToolKind::Think,
                    "",
                    it.prompt.0.clone(),
                    input,
                );
                inv.tool_name = Cow::Owned(name);
                let ext = cx.push(inv);
                ext.put_opt("codex.model", it.model.0);
                if matches!(&*tool, "spawn_agent" | "spawnAgent") {
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
            } else {
                close_call(cx, &it.id);
                let ok = status != "failed";
                let ext = cx.push(completion(
                    it.id.clone(),
                    ok,
                    it.agents_states.filter(|s| !is_null(s)).map(Json::Raw),
                ));
                ext.put_opt("codex.agentThreadId", agent.clone());
                ext.put("codex.tool", tool.clone());
                collab_end(
                    cx,
                    it.id,
                    &tool,
                    ok,
                    agent,
                    receivers,
                    it.agents_states,
                    it.status.0,
                );
            }
        }
        "contextCompaction" => {
            if done {
                cx.push(ContextCompaction {
                    trigger: CompactionTrigger::Auto,
                    pre_tokens: None,
                    post_tokens: None,
                    summary: None,
                    duration_ms: None,
                });
            } else {
                cx.push(SessionStatus {
                    status: SessionStatusKind::Compacting,
                    message: None,
                });
            }
        }
        "enteredReviewMode" | "exitedReviewMode" => {
            let ext = cx.push(SessionMode {
                current_mode_id: Cow::Borrowed(if it.ty == "enteredReviewMode" {
                    "review"
                } else {
                    "default"
                }),
                available_modes: Vec::new(),
            });
            ext.put_opt("codex.review", it.review.filter(|r| !is_null(r)));
        }
        other => {
            let ext = cx.push(Notice {
                subtype: Cow::Owned(format!(
                    "item/{}/{other}",
                    if done { "completed" } else { "started" }
                )),
                message: None,
            });
            ext.put("codex.itemId", it.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{
        conv, line_of, stream, APP_SERVER_0_100_DECLINED, APP_SERVER_DECLINED,
    };
    use crate::test_support::{kinds, of_kind};

    #[test]
    fn a_declined_command_that_never_started_is_invoked_by_its_completion() {
        // 0.100.0: no item/started for the declined command; its completion states the call.
        let ev = conv(line_of(APP_SERVER_0_100_DECLINED, 33));
        assert_eq!(kinds(&ev), ["tool_invocation", "tool_completion"]);
        assert_eq!(ev[0]["callId"], "call_kL61MR3k49EUSSqFxWuTy8J7");
        assert_eq!(ev[0]["toolName"], "Bash");
        assert_eq!(ev[0]["title"], "touch build.marker");
        assert_eq!(ev[0]["input"]["cwd"], "/home/dev/work");
        assert_eq!(ev[0]["extensions"]["codex.itemStarted"], false);
        // Declined without the answer in view: a denial.
        assert_eq!(ev[1]["status"], "failed");
        // 0.169.0 sends item/started (line 18) first: the completion is only that.
        let ev = conv(line_of(APP_SERVER_DECLINED, 22));
        assert_eq!(kinds(&ev), ["tool_completion"]);
        assert_eq!(
            conv(line_of(APP_SERVER_DECLINED, 18))[0]["event"],
            "tool_invocation"
        );
    }

    #[test]
    fn collab_agent_tool_calls_spawn_and_end_subagents() {
        let evs = stream(&[
            r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"collabAgentToolCall","id":"s1","tool":"spawnAgent","status":"inProgress","senderThreadId":"a","receiverThreadIds":[],"prompt":"go","agentsStates":{}}}}"#,
            r#"{"method":"item/completed","params":{"threadId":"a","turnId":"u","item":{"type":"collabAgentToolCall","id":"s1","tool":"spawnAgent","status":"completed","senderThreadId":"a","receiverThreadIds":["sub"],"prompt":"go","agentsStates":{"sub":{"status":"running"}}}}}"#,
            r#"{"method":"item/completed","params":{"threadId":"a","turnId":"u","item":{"type":"collabAgentToolCall","id":"w1","tool":"wait","status":"completed","senderThreadId":"a","receiverThreadIds":["sub"],"agentsStates":{"sub":{"status":"completed","message":"done"}}}}}"#,
        ]);
        assert_eq!(of_kind(&evs, "subagent_spawn")[0]["callId"], "s1");
        let end = of_kind(&evs, "subagent_complete");
        assert_eq!(end.len(), 1);
        assert_eq!(end[0]["callId"], "s1");
        assert_eq!(end[0]["agentId"], "sub");
        assert_eq!(end[0]["status"], "completed");
    }
}
