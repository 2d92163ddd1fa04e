//! Rules 3 and 4: a tool call's lifecycle, whatever order its events come in; `tool_update` and
//! file changes.

use super::*;

#[test]
fn a_codex_plan_streamed_as_deltas_is_one_plan_entry() {
    // What the Codex converter makes of item/started plan, two item/plan/delta and
    // item/completed plan, then an agent message.
    let delta = |id: &str, t: &str| json!({"event": "stream_delta", "kind": "text", "textDelta": t, "messageId": id});
    let st = reduce(&[
        json!({"event": "turn_start", "turnId": "u1"}),
        json!({"event": "stream_delta", "kind": "blockStart", "messageId": "p1"}),
        delta("p1", "1. Read"),
        delta("p1", " the code"),
        json!({"event": "text", "kind": "plan", "text": "1. Read the code", "messageId": "p1"}),
        delta("m1", "Done"),
        json!({"event": "text", "kind": "text", "text": "Done", "messageId": "m1"}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert_eq!(
        (
            e[0]["kind"].clone(),
            e[0]["content"].clone(),
            e[0]["streaming"].clone()
        ),
        (json!("plan"), json!("1. Read the code"), Value::Null)
    );
    assert_eq!(e[1]["content"], "Done");
    assert_eq!(e[1]["kind"], Value::Null);
    // A plan text of a message whose earlier blocks are in the entry is an entry of its own.
    let st = reduce(&[
        delta("m", "a"),
        json!({"event": "text", "kind": "text", "text": "a", "messageId": "m"}),
        delta("m", "b"),
        json!({"event": "text", "kind": "plan", "text": "b", "messageId": "m"}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert_eq!(e[1]["kind"], "plan");
}

#[test]
fn rule3_and_rule4_tool_call_lifecycle() {
    let st = reduce(&[
        json!({"event": "tool_invocation", "callId": "c1", "kind": "read", "toolName": "Read",
               "title": "a.txt", "input": {"file_path": "a.txt"}, "locations": ["a.txt"],
               "timestamp": "2026-01-01T00:00:00.000Z", "mcpServer": "fs", "mcpTool": "read"}),
        json!({"event": "tool_update", "callId": "c1", "elapsedMs": 5, "status": "reading"}),
        json!({"event": "tool_completion", "callId": "c1", "status": "failed", "isError": true,
               "output": {"error": "nope"}, "timestamp": "2026-01-01T00:00:01.250Z"}),
    ]);
    let e = &entries(&st)[0];
    assert_eq!(e["type"], "tool_call");
    assert_eq!(e["toolName"], "Read");
    assert_eq!(e["mcpTool"], "read");
    assert_eq!(e["kind"], "read");
    assert_eq!(e["status"], "failed");
    assert_eq!(e["output"], json!({"error": "nope"}));
    assert_eq!(e["isError"], true);
    assert_eq!(e["elapsedMs"], 5);
    assert_eq!(e["progress"], "reading");
    assert_eq!(e["durationMs"], 1250);
    assert_eq!(e["completedSeq"], 3);
    let t = &js(&st)["totals"]["sessions"][0];
    assert_eq!(
        (t["tools"].clone(), t["failedTools"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(t["toolsByKind"], json!({"read": 1}));
    assert!(js(&st)["pending"]["sessions"][0]["tools"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn rule4_a_completion_for_an_unknown_call_still_makes_an_entry() {
    let st = reduce(&[text("x"), done("ghost")]);
    let e = entries(&st);
    assert_eq!(e[1]["type"], "tool_call");
    assert_eq!(e[1]["callId"], "ghost");
    assert_eq!(e[1]["status"], "completed");
    assert!(e[1].get("toolName").is_none());
}

#[test]
fn running_calls_are_pending_and_cancelled_when_an_interrupted_turn_ends() {
    let st = reduce(&[
        call("c1"),
        json!({"event": "session_status", "status": "interrupted"}),
    ]);
    let p = &js(&st)["pending"]["sessions"][0];
    assert_eq!(p["tools"][0]["callId"], "c1");
    assert_eq!(p["turn"], 1);
    let st = reduce(&[
        call("c1"),
        json!({"event": "session_status", "status": "interrupted"}),
        json!({"event": "turn_complete"}),
    ]);
    let j = js(&st);
    assert!(j["pending"]["sessions"][0]["tools"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(j["entries"][0]["status"], "cancelled");
    assert_eq!(j["totals"]["sessions"][0]["cancelledTools"], 1);
    assert_eq!(j["tree"]["sessions"][0]["turns"][0]["interrupted"], true);
}

#[test]
fn session_info_titles_the_session_and_tool_update_fills_in_the_call() {
    let st = reduce(&[
        json!({"event": "session_info", "title": "Fix the build"}),
        json!({"event": "tool_invocation", "callId": "c", "kind": "execute", "toolName": "sh", "input": {}}),
        json!({"event": "tool_update", "callId": "c", "title": "make", "input": {"cmd": "make"}, "locations": ["Makefile"]}),
    ]);
    let j = js(&st);
    assert_eq!(j["tree"]["sessions"][0]["title"], "Fix the build");
    assert_eq!(j["entries"][0]["title"], "make");
    assert_eq!(j["entries"][0]["input"], json!({"cmd": "make"}));
    assert_eq!(j["entries"][0]["locations"], json!(["Makefile"]));
}

#[test]
fn a_cumulative_diff_is_kept_but_not_counted_as_a_change() {
    // Recorded: Codex's multi-patch makes 4 changes, each restated by turn/diff/updated.
    let j = js(&reduce_capture("codex-app-server/multi-patch.events.jsonl"));
    assert_eq!(j["totals"]["all"]["fileChanges"], 4);
    let j = js(&reduce_capture("codex-app-server/edit-file.events.jsonl"));
    assert_eq!(j["totals"]["all"]["fileChanges"], 1);
    let turn = &j["tree"]["sessions"][0]["turns"][0];
    assert!(turn["fileChanges"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["cumulative"] == true)));
}

#[test]
fn a_kind_announced_after_the_call_began_replaces_other() {
    // ACP: a tool_call_update named the call first (kind other), then its tool_call came.
    let st = reduce(&[
        json!({"event": "tool_invocation", "callId": "c", "kind": "other", "toolName": "c", "input": {}}),
        json!({"event": "tool_update", "callId": "c", "kind": "execute", "title": "ls"}),
        json!({"event": "tool_completion", "callId": "c", "status": "completed"}),
    ]);
    let by_kind = &st.totals.sessions[0].counts.tools_by_kind;
    assert_eq!(by_kind.get("execute"), Some(&1), "{by_kind:?}");
    assert_eq!(by_kind.get("other"), None, "{by_kind:?}");
}

#[test]
fn rule3_a_call_announced_after_its_update_takes_the_announced_name_and_kind() {
    // `testdata/acp-claude/reference/update-before-call.jsonl` (written after RULE 3 and
    // RULE 4): each call's tool_call_update comes before its tool_call. The update named the
    // call with nothing known (`tool`, kind other); the tool_call brings the name (c1: its
    // kind, as ACP calls without a name of their own are named; c2: `mcp__acp__Read`,
    // cleaned to `Read`), kind, title and input.
    let st = reduce_capture("acp-claude/reference/update-before-call.events.jsonl");
    let calls: Vec<Value> = entries(&st)
        .into_iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| {
            json!([
                e["callId"],
                e["toolName"],
                e["kind"],
                e["title"],
                e["mcpServer"],
                e["status"]
            ])
        })
        .collect();
    assert_eq!(
        calls,
        [
            json!(["c1", "execute", "execute", "ls -la", null, "completed"]),
            json!(["c2", "Read", "read", "Read a.txt", "acp", "completed"]),
        ]
    );
    let by_kind = &st.totals.sessions[0].counts.tools_by_kind;
    assert_eq!(
        (
            by_kind.get("execute"),
            by_kind.get("read"),
            by_kind.get("other")
        ),
        (Some(&1), Some(&1), None),
        "{by_kind:?}"
    );
    // Only the announcement (the update with a kind) names it: a later update does not.
    let st = reduce(&[
        json!({"event": "tool_invocation", "callId": "c", "kind": "other", "toolName": "tool", "input": {}}),
        json!({"event": "tool_update", "callId": "c", "toolName": "Read", "kind": "read"}),
        json!({"event": "tool_update", "callId": "c", "toolName": "tool", "status": "in_progress"}),
    ]);
    assert_eq!(entries(&st)[0]["toolName"], "Read");
}
