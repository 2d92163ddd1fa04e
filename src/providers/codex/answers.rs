//! Answers in a tee of both directions: the client's answers to the server's requests
//! (approvals, questions, dynamic tool calls) and the server's answers to the client's
//! (`thread/start`, `thread/resume`, …).

use super::app_server::{said, session_init, turn_subtype, ErrorWire, Thread, Turn};
use super::thread_items::{v2_item, Item};
use super::{close_call, completion, notice, object, or_null, wire_status, Call, Request};
use crate::event::*;
use crate::providers::jsonrpc::{self, Envelope};
use crate::providers::{Cx, Unmapped};
use crate::wire::{is_null, is_object, raw_str, IfObject, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The `result` of a JSON-RPC answer as written (`null` too), for the answers whose notice
/// keeps it whole: the line is parsed again ([`Message`] reads an object `result` typed).
///
/// [`Message`]: crate::providers::jsonrpc::Message
fn raw_result(line: &str) -> Option<&RawValue> {
    let env: Envelope = serde_json::from_str(line).ok()?;
    env.result
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ResultBody<'a> {
    #[serde(borrow)]
    decision: Option<&'a RawValue>,
    #[serde(borrow)]
    thread: Option<Thread<'a>>,
    #[serde(borrow)]
    turn: Option<Turn<'a>>,
    #[serde(borrow)]
    approval_policy: Option<&'a RawValue>,
    #[serde(borrow)]
    sandbox: Option<&'a RawValue>,
    model: OptStr<'a>,
    reasoning_effort: OptStr<'a>,
    cwd: OptStr<'a>,
    model_provider: OptStr<'a>,
    scope: OptStr<'a>,
    #[serde(borrow)]
    permissions: Option<&'a RawValue>,
    #[serde(borrow)]
    answers: Option<&'a RawValue>,
    action: OptStr<'a>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    content_items: Option<&'a RawValue>,
    success: Option<bool>,
    /// What an answer to `thread/start` (`thread/resume`, `thread/fork`) says beside its
    /// thread and has no event field for, kept as `codex.*` extensions of its `session_mode`.
    #[serde(borrow)]
    service_tier: Option<&'a RawValue>,
    #[serde(borrow)]
    approvals_reviewer: Option<&'a RawValue>,
    #[serde(borrow)]
    active_permission_profile: Option<&'a RawValue>,
    #[serde(borrow)]
    multi_agent_mode: Option<&'a RawValue>,
    #[serde(borrow)]
    disabled_plugin_ids: Option<&'a RawValue>,
    #[serde(borrow)]
    runtime_workspace_roots: Option<&'a RawValue>,
    #[serde(borrow)]
    instruction_sources: Option<&'a RawValue>,
}

/// A thread's history (the `turns` of a `thread/resume` answer), as the events it records:
/// each turn as a `turn_start`, its items (each as started and completed), and, when it ended,
/// its `turn_complete`, each event with the turn's id as its `turnId` and marked
/// `codex.history` (and `codex.turnId`). A turn still running has no end.
fn history<'a>(turns: &'a RawValue, cx: &mut Cx<'a>) {
    #[derive(Deserialize)]
    struct HistoryTurn<'a> {
        #[serde(borrow, default)]
        id: Str<'a>,
        status: OptStr<'a>,
        #[serde(borrow)]
        error: Option<ErrorWire<'a>>,
        #[serde(borrow, default)]
        items: Vec<&'a RawValue>,
    }
    const CALLS: &[&str] = &[
        "commandExecution",
        "fileChange",
        "mcpToolCall",
        "dynamicToolCall",
        "webSearch",
        "imageView",
        "collabToolCall",
        "collabAgentToolCall",
    ];
    let Ok(turns) = serde_json::from_str::<Vec<HistoryTurn>>(turns.get()) else {
        return;
    };
    for t in turns {
        let from = cx.events.len();
        let id = t.id;
        cx.push(TurnStart::default());
        for raw in t.items {
            let Ok(item) = serde_json::from_str::<Item>(raw.get()) else {
                continue;
            };
            if CALLS.contains(&&*item.ty) {
                if let Ok(start) = serde_json::from_str::<Item>(raw.get()) {
                    v2_item(false, start, cx);
                }
            }
            v2_item(true, item, cx);
        }
        let ended = t
            .status
            .0
            .filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case("inProgress"));
        if let Some(wire) = ended {
            let status = wire_status(wire.clone());
            let failed = status == "failed";
            let errors = t.error.and_then(|e| e.message.0).map(|m| vec![m]);
            cx.push(TurnComplete {
                is_error: failed,
                subtype: Some(turn_subtype(status)),
                errors: if failed { errors } else { None },
                stop_reason: Some(wire),
                ..TurnComplete::default()
            });
        }
        let to = cx.events.len();
        for (_, ext) in &mut cx.events[from..] {
            ext.put("codex.history", true);
            if !id.is_empty() {
                ext.put("codex.turnId", id.clone());
            }
        }
        if !id.is_empty() {
            cx.event_turns.extend((from..to).map(|i| (i, id.clone())));
        }
    }
}

/// Takes out the server request an answer answers.
fn take_request(cx: &mut Cx<'_>, id: &str) -> Option<Request> {
    cx.memory().codex.requests.remove(id)
}

/// The client answered server request `id` with `decision`: the answer is in the request's
/// thread, the call it asked about remembers the decision (a cancel and a denial end a
/// declined call differently). Returns the call.
fn answered<'a>(cx: &mut Cx<'a>, id: &str, decision: Option<Decision>) -> Option<Str<'a>> {
    let req = take_request(cx, id)?;
    if let Some(t) = req.thread {
        cx.session_id = Some(Cow::Owned(t));
    }
    let call = req.call?;
    let line = cx.line;
    let calls = &mut cx.memory().codex.calls;
    match calls.get_mut(&call) {
        Some(c) => c.decision = decision,
        None => calls.insert(
            &call,
            Call {
                thread: None,
                tool_name: String::new(),
                decision,
                changes: Vec::new(),
                invoked: false,
            },
            line,
        ),
    }
    Some(Cow::Owned(call))
}

pub(super) fn response<'a>(
    env: &Envelope<'a>,
    result: Option<IfObject<Box<ResultBody<'a>>>>,
    line: &'a str,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let request_id: Str<'a> = Cow::Owned(env.id_text().into_owned());
    let Some(IfObject(Some(b))) = result else {
        notice(
            cx,
            Cow::Borrowed("response"),
            raw_result(line).map(|r| ("result", r)),
        );
        return Ok(());
    };
    let answer = |decision: Decision,
                  allowed: bool,
                  updated_input: Option<Json<'a>>,
                  updated_permissions: Option<Json<'a>>| PermissionResponse {
        request_id: request_id.clone(),
        decision,
        allowed: Some(allowed),
        message: None,
        updated_input,
        updated_permissions,
        interrupt: false,
        tool_use_id: None,
        option_id: None,
    };
    if let Some(d) = b.decision {
        let word = raw_str(d)
            .or_else(|| jsonrpc::member_names(d.get()).into_iter().next())
            .unwrap_or_default();
        let (decision, allowed) = match &*word {
            "accept" | "approved" => (Decision::Allow, true),
            "acceptForSession"
            | "approved_for_session"
            | "acceptWithExecpolicyAmendment"
            | "applyNetworkPolicyAmendment" => (Decision::AllowAlways, true),
            "cancel" | "abort" => (Decision::Cancelled, false),
            _ => (Decision::Deny, false),
        };
        let mut r = answer(decision, allowed, None, None);
        r.interrupt = matches!(&*word, "cancel" | "abort");
        r.tool_use_id = answered(cx, &request_id, Some(decision));
        let ext = cx.push(r);
        ext.put("codex.decision", d);
    } else if let Some(t) = b.thread {
        let turns = t
            .turns
            .filter(|t| t.get().starts_with('[') && t.get() != "[]");
        if b.approval_policy.is_none() && b.model.is_none() {
            match turns {
                // The event reference's `thread/resume` answer, `{thread: {id, turns}}`: the
                // thread and the history it records.
                Some(turns) => {
                    session_init(t, None, cx);
                    history(turns, cx);
                }
                // Other answers that carry a thread (`thread/read`, `thread/unarchive`, …)
                // describe it; they start nothing.
                None => {
                    cx.session_id = Some(t.id);
                    notice(cx, Cow::Borrowed("response/thread"), None);
                }
            }
            return Ok(());
        }
        // The answer to `thread/start`, `thread/resume` or `thread/fork` (they share the
        // shape, `approvalPolicy` and `model` required): it comes before the `thread/started`
        // notification, so it gives the thread's `session_init`, then its approval policy,
        // then (`thread/resume`) the history it records.
        session_init(
            t,
            Some((b.model.0, b.reasoning_effort.0, b.cwd.0, b.model_provider.0)),
            cx,
        );
        let ext = cx.push(SessionMode {
            current_mode_id: b
                .approval_policy
                .and_then(raw_str)
                .unwrap_or(Cow::Borrowed("default")),
            available_modes: Vec::new(),
        });
        ext.put_opt("codex.sandbox", b.sandbox.filter(|s| !is_null(s)));
        ext.put("codex.requestId", request_id);
        let extras = [
            ("codex.serviceTier", b.service_tier),
            ("codex.approvalsReviewer", b.approvals_reviewer),
            ("codex.activePermissionProfile", b.active_permission_profile),
            ("codex.multiAgentMode", b.multi_agent_mode),
            ("codex.disabledPluginIds", b.disabled_plugin_ids),
            ("codex.runtimeWorkspaceRoots", b.runtime_workspace_roots),
            ("codex.instructionSources", b.instruction_sources),
        ];
        for (key, v) in extras {
            ext.put_opt(key, said(v));
        }
        if let Some(turns) = turns {
            history(turns, cx);
        }
    } else if let Some(t) = b.turn {
        cx.turn_id = Some(t.id);
        notice(cx, Cow::Borrowed("response/turn"), None);
    } else if b.content_items.is_some() || b.success.is_some() {
        // The client's result of a dynamic tool call (`item/tool/call`).
        let req = take_request(cx, &request_id);
        if let Some(r) = &req {
            cx.session_id = r.thread.clone().map(Cow::Owned).or(cx.session_id.take());
        }
        let call = req.filter(|r| r.tool_call).and_then(|r| r.call);
        let output = object([
            ("contentItems", or_null(b.content_items)),
            ("success", or_null(b.success)),
        ]);
        match call {
            Some(id) if close_call(cx, &id).is_some_and(|c| c.invoked) => {
                let ext = cx.push(completion(
                    Cow::Owned(id),
                    b.success != Some(false),
                    Some(output),
                ));
                ext.put("codex.requestId", request_id);
            }
            _ => {
                notice(
                    cx,
                    Cow::Borrowed("response"),
                    raw_result(line).map(|r| ("result", r)),
                );
            }
        }
    } else if let Some(p) = b.permissions {
        // The permissions granted: none (`{}`, or every member null) is the denial.
        let granted = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(p.get())
            .map_or(true, |m| m.values().any(|v| !v.is_null()));
        let decision = match (granted, b.scope.as_deref()) {
            (false, _) => Decision::Deny,
            (true, Some("session")) => Decision::AllowAlways,
            (true, _) => Decision::Allow,
        };
        let tool_use_id = answered(cx, &request_id, Some(decision));
        let mut r = answer(decision, granted, None, Some(Json::Raw(p)));
        r.tool_use_id = tool_use_id;
        cx.push(r);
    } else if let Some(a) = b.answers {
        let tool_use_id = answered(cx, &request_id, Some(Decision::Allow));
        let mut r = answer(
            Decision::Allow,
            true,
            Some(object([("answers", Json::Raw(a))])),
            None,
        );
        r.tool_use_id = tool_use_id;
        cx.push(r);
    } else if let Some(action) = b.action.0 {
        let (decision, allowed) = match &*action {
            "accept" => (Decision::Allow, true),
            "cancel" => (Decision::Cancelled, false),
            _ => (Decision::Deny, false),
        };
        let tool_use_id = answered(cx, &request_id, Some(decision));
        let mut r = answer(
            decision,
            allowed,
            b.content.filter(|c| is_object(c)).map(Json::Raw),
            None,
        );
        r.tool_use_id = tool_use_id;
        cx.push(r);
    } else {
        notice(
            cx,
            Cow::Borrowed("response"),
            raw_result(line).map(|r| ("result", r)),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{
        conv, line_of, stream, APP_SERVER_0_100_DECLINED, APP_SERVER_DECLINED,
    };
    use crate::test_support::{kinds, of_kind};
    use serde_json::json;

    #[test]
    fn v2_approval_request_and_answers() {
        let ev = conv(
            r#"{"method":"item/commandExecution/requestApproval","id":0,"params":{"threadId":"t","turnId":"u","itemId":"call_1","command":"/bin/bash -lc 'touch x'","cwd":"/w","reason":"needs write"}}"#,
        );
        assert_eq!(ev[0]["event"], "permission_request");
        assert_eq!(ev[0]["requestId"], "0");
        assert_eq!(ev[0]["toolUseId"], "call_1");
        for (d, want) in [
            ("\"accept\"", "allow"),
            ("\"acceptForSession\"", "allow_always"),
            ("\"decline\"", "deny"),
            ("\"cancel\"", "cancelled"),
            ("{\"acceptWithExecpolicyAmendment\":{}}", "allow_always"),
        ] {
            let ev = conv(&format!(r#"{{"id":0,"result":{{"decision":{d}}}}}"#));
            assert_eq!(ev[0]["decision"], want, "{d}");
        }
    }

    /// `item/permissions/requestApproval` is answered with the permissions granted: all
    /// asked, for the turn or the session, or none (the denial).
    #[test]
    fn permissions_answers_grant_or_deny() {
        for (result, want) in [
            (
                r#"{"permissions":{"network":{"enabled":true}},"scope":"turn"}"#,
                "allow",
            ),
            (
                r#"{"permissions":{"network":{"enabled":true}},"scope":"session"}"#,
                "allow_always",
            ),
            (r#"{"permissions":{},"scope":"turn"}"#, "deny"),
            (
                r#"{"permissions":{"fileSystem":null,"network":null}}"#,
                "deny",
            ),
        ] {
            let ev = stream(&[&format!(r#"{{"id":3,"result":{result}}}"#)]);
            assert_eq!(ev[0]["event"], "permission_response", "{result}");
            assert_eq!(ev[0]["decision"], want, "{result}");
            assert_eq!(ev[0]["allowed"], want != "deny", "{result}");
        }
    }

    #[test]
    fn thread_start_answer_gives_the_session_init_then_the_mode() {
        // 0.169.0: the model is on the thread too; 0.100.0: beside it only.
        for (line, version) in [
            (line_of(APP_SERVER_DECLINED, 6), "0.169.0"),
            (line_of(APP_SERVER_0_100_DECLINED, 5), "0.100.0"),
        ] {
            let ev = conv(line);
            assert_eq!(kinds(&ev), ["session_init", "session_mode"], "{version}");
            assert_eq!(ev[0]["model"], "gpt-5.5", "{version}");
            assert_eq!(ev[0]["cwd"], "/home/dev/work", "{version}");
            assert_eq!(ev[0]["version"], version);
            assert_eq!(ev[0]["extensions"]["codex.modelProvider"], "mock");
            assert_eq!(ev[1]["currentModeId"], "untrusted", "{version}");
            assert_eq!(ev[1]["extensions"]["codex.requestId"], "2", "{version}");
            assert!(ev.iter().all(|e| e["sessionId"]
                .as_str()
                .is_some_and(|s| s.starts_with("01a2012"))));
        }
        // The thread/started notification that follows states the session again.
        let ev = conv(line_of(APP_SERVER_0_100_DECLINED, 7));
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0]["event"], "session_init");
        assert_eq!(ev[0]["cwd"], "/home/dev/work");
    }

    #[test]
    fn other_thread_answers_start_nothing() {
        // The shape of a `thread/read` answer: the thread alone.
        let ev = conv(r#"{"id":7,"result":{"thread":{"id":"t1","cwd":"/w","turns":[]}}}"#);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0]["event"], "notice");
        assert_eq!(ev[0]["subtype"], "response/thread");
    }

    const FILE_STARTED: &str = r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"fileChange","id":"call_f","status":"inProgress","changes":[{"path":"/w/c.txt","kind":{"type":"update","move_path":null},"diff":"@@ -1 +1 @@\n-a\n+b\n"}]}}}"#;
    const FILE_APPROVAL: &str = r#"{"id":0,"method":"item/fileChange/requestApproval","params":{"threadId":"a","turnId":"u","itemId":"call_f","reason":null,"grantRoot":null}}"#;

    #[test]
    fn a_cancelled_approval_ends_the_call_the_turn_leaves_open() {
        let evs = stream(&[
            FILE_STARTED,
            FILE_APPROVAL,
            r#"{"id":0,"result":{"decision":"cancel"}}"#,
            r#"{"method":"turn/completed","params":{"threadId":"a","turn":{"id":"u","status":"interrupted","error":null}}}"#,
        ]);
        let req = of_kind(&evs, "permission_request")[0];
        assert_eq!(req["toolInput"]["changes"][0]["path"], "/w/c.txt");
        assert_eq!(req["toolInput"]["changes"][0]["kind"], "update");
        // The diff the person is asked to approve, as the item gave it.
        assert_eq!(
            req["toolInput"]["changes"][0]["diff"],
            "@@ -1 +1 @@\n-a\n+b\n"
        );
        let resp = of_kind(&evs, "permission_response")[0];
        assert_eq!(resp["decision"], "cancelled");
        assert_eq!(resp["toolUseId"], "call_f");
        assert_eq!(resp["sessionId"], "a");
        let done = of_kind(&evs, "tool_completion");
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["status"], "cancelled");
        assert_eq!(done[0]["extensions"]["insights.inferred"], true);
        assert_eq!(evs.last().unwrap()["event"], "turn_complete");
    }

    #[test]
    fn a_declined_call_fails_and_a_cancelled_one_is_cancelled() {
        let completed = r#"{"method":"item/completed","params":{"threadId":"a","turnId":"u","item":{"type":"fileChange","id":"call_f","status":"declined","changes":[]}}}"#;
        for (decision, status) in [("decline", "failed"), ("cancel", "cancelled")] {
            let answer = format!(r#"{{"id":0,"result":{{"decision":"{decision}"}}}}"#);
            let evs = stream(&[FILE_STARTED, FILE_APPROVAL, &answer, completed]);
            assert_eq!(
                of_kind(&evs, "tool_completion")[0]["status"],
                status,
                "{decision}"
            );
            assert!(of_kind(&evs, "file_change").is_empty());
        }
    }

    #[test]
    fn a_resume_answer_records_its_history() {
        // Event reference, `thread/resume` answer: the history is replayed as its turns, with
        // their ids and ends; a `<proposed_plan>` block leaves the message (seed row 7).
        let evs = stream(&[
            r#"{"id":2,"result":{"thread":{"id":"th1","turns":[{"id":"t0","status":"completed","items":[{"type":"userMessage","id":"u0","content":[{"type":"text","text":"hi"}]},{"type":"commandExecution","id":"c0","command":"bash -lc 'ls'","status":"completed","exitCode":0,"aggregatedOutput":"a\n","source":"agent"},{"type":"agentMessage","id":"m0","text":"Plan:\n<proposed_plan>\n1. x\n</proposed_plan>\n"}]}]},"model":"m","approvalPolicy":"never"}}"#,
        ]);
        assert_eq!(
            kinds(&evs),
            [
                "session_init",
                "session_mode",
                "turn_start",
                "user_input",
                "tool_invocation",
                "tool_completion",
                "text",
                "turn_complete"
            ]
        );
        assert_eq!(evs[4]["title"], "ls");
        assert_eq!(evs[5]["extensions"]["codex.history"], true);
        assert_eq!(evs[5]["extensions"]["codex.turnId"], "t0");
        assert!(evs[2..]
            .iter()
            .all(|e| e["extensions"]["codex.turnId"] == "t0"));
        assert_eq!(evs[6]["text"], "Plan:\n");
        assert_eq!(evs[7]["subtype"], "success");
    }

    #[test]
    fn the_reference_s_resume_answer_shape_replays_its_history() {
        // Seed row 5 (codex-app-server-event-reference.md): `{thread: {id, turns: [...]}}`,
        // statuses as the reference spells them (row 4).
        let evs = stream(&[
            r#"{"id":4,"result":{"thread":{"id":"th2","turns":[{"id":"a","status":"Interrupted","items":[{"type":"agentMessage","id":"m1","text":"x"}]},{"id":"b","status":"Failed","error":{"message":"boom"},"items":[]}]}}}"#,
        ]);
        assert_eq!(
            kinds(&evs),
            [
                "session_init",
                "turn_start",
                "text",
                "turn_complete",
                "turn_start",
                "turn_complete"
            ]
        );
        assert_eq!(
            (&evs[3]["extensions"]["codex.turnId"], &evs[3]["subtype"]),
            (&json!("a"), &json!("interrupted"))
        );
        assert_eq!(evs[3]["stopReason"], "Interrupted");
        assert_eq!(
            (&evs[5]["extensions"]["codex.turnId"], &evs[5]["isError"]),
            (&json!("b"), &json!(true))
        );
        assert_eq!(evs[5]["subtype"], "error_api");
    }
}
