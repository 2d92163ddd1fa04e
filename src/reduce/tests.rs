//! Unit tests of the reducer: each entry rule, turns and sessions, parallel calls, subagent
//! nesting, usage accounting, resuming, and the property that reducing a log in one go equals
//! reducing it in two parts with a snapshot in between.

use super::entries::extract_new_content;
use super::state::*;
use super::view::Ev;
use super::{Fed, Reducer};
use crate::test_support::Rng;
use serde_json::{json, Value};

/// Event lines from JSON literals: `sessionId` defaults to "s", `seq` counts from 1 and `id`
/// is `e` and the `seq`.
fn lines(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut e = e.clone();
            let o = e.as_object_mut().expect("an event is an object");
            o.entry("sessionId").or_insert(json!("s"));
            o.entry("seq").or_insert(json!(i as u64 + 1));
            o.entry("id").or_insert(json!(format!("e{}", i + 1)));
            serde_json::to_string(&e).unwrap()
        })
        .collect()
}

fn feed(red: &mut Reducer, lines: &[String]) {
    for l in lines {
        let mut ev = Ev::parse(l).unwrap_or_else(|e| panic!("{l}: {e}"));
        red.feed(&mut ev);
    }
}

fn reduce_lines(lines: &[String]) -> State {
    let mut red = Reducer::new(State::new(), None);
    feed(&mut red, lines);
    red.state.finish();
    valid(&red.state);
    red.state
}

/// Checks a state against `schemas/insights-state.schema.json` (what `insights schema state`
/// prints), compiled once for all the tests.
fn valid(st: &State) {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let v = V.get_or_init(|| {
        let schema: Value = serde_json::from_str(crate::schema::STATE_SCHEMA).unwrap();
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .expect("the state schema compiles")
    });
    // (A state that keeps a value serde_json's `Value` cannot hold, nested deeper than 128 or a
    // number beyond f64, from the hostile inputs, cannot be checked.)
    let Ok(j) = serde_json::to_value(st) else {
        return;
    };
    let problems: Vec<String> = v
        .iter_errors(&j)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "a state does not follow the state schema:\n{}",
        problems.join("\n")
    );
}

fn reduce(events: &[Value]) -> State {
    reduce_lines(&lines(events))
}

/// The state of a recorded (or built) capture's events, `testdata/<path>`.
fn reduce_capture(path: &str) -> State {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(path);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    reduce_lines(&text.lines().map(str::to_owned).collect::<Vec<_>>())
}

/// The state as JSON, for comparisons and for looking into.
fn js(st: &State) -> Value {
    serde_json::to_value(st).unwrap()
}

fn entries(st: &State) -> Vec<Value> {
    js(st)["entries"].as_array().unwrap().clone()
}

fn text(t: &str) -> Value {
    json!({"event": "stream_delta", "kind": "text", "textDelta": t})
}

fn thinking(t: &str) -> Value {
    json!({"event": "stream_delta", "kind": "thinking", "textDelta": t})
}

fn call(id: &str) -> Value {
    json!({"event": "tool_invocation", "callId": id, "kind": "execute", "toolName": "Bash",
           "input": {"command": "true"}})
}

fn done(id: &str) -> Value {
    json!({"event": "tool_completion", "callId": id, "status": "completed", "output": "ok"})
}

// ---------------------------------------------------------------------------------------------
// RULE 1, 2, 9: chunks.

#[test]
fn extract_new_content_cases() {
    assert_eq!(extract_new_content("", "Hel", false), (Some("Hel"), false));
    assert_eq!(extract_new_content("Hel", "lo", false), (Some("lo"), false));
    // cumulative: the chunk repeats everything so far
    assert_eq!(
        extract_new_content("Hel", "Hello", false),
        (Some("lo"), true)
    );
    assert_eq!(extract_new_content("Hello", "Hello", true), (None, true));
    assert_eq!(extract_new_content("Hello", "", false), (None, false));
    // a delta that happens to equal the end of the text is still new text
    assert_eq!(extract_new_content("Wait.", ".", false), (Some("."), false));
}

#[test]
fn rule1_delta_chunks_append_to_the_last_assistant_message() {
    let st = reduce(&[text("Hel"), text("lo, "), text("world")]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["type"], "message");
    assert_eq!(e[0]["role"], "assistant");
    assert_eq!(e[0]["content"], "Hello, world");
    assert_eq!(e[0]["streaming"], true, "no final text yet (RULE 2)");
    assert_eq!(e[0]["updatedSeq"], 3);
}

#[test]
fn rule1_cumulative_chunks_are_deduplicated() {
    let st = reduce(&[
        text("Hel"),
        text("Hello"),
        text("Hello, world"),
        text("Hello, world"),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["content"], "Hello, world");
}

#[test]
fn rule1_a_chunk_after_another_entry_starts_a_new_message() {
    let st = reduce(&[text("before"), call("c1"), text("after")]);
    let e = entries(&st);
    let types: Vec<_> = e.iter().map(|x| x["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["message", "tool_call", "message"]);
    assert_eq!(e[0]["content"], "before");
    assert!(
        e[0].get("streaming").is_none(),
        "RULE 2: finalized by the tool call"
    );
    assert_eq!(e[2]["content"], "after");
}

#[test]
fn rule1_no_message_continues_across_a_turn() {
    let st = reduce(&[text("one"), json!({"event": "turn_complete"}), text("two")]);
    let e = entries(&st);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0]["turn"], 1);
    assert_eq!(e[1]["turn"], 2);
}

#[test]
fn rule1_a_new_message_id_starts_a_new_message() {
    let st = reduce(&[
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m1"}),
        text("first"),
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m2"}),
        text("second"),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 2);
    assert_eq!(
        (e[0]["messageId"].clone(), e[1]["messageId"].clone()),
        (json!("m1"), json!("m2"))
    );
    assert!(e[0].get("streaming").is_none());
}

#[test]
fn rule1_a_chunk_seen_twice_is_appended_once() {
    // The same event (same id) again: skipped. Another event with equal text: appended.
    let mut log = lines(&[text("Hel"), text("lo")]);
    log.push(log[1].clone());
    log.extend(
        lines(&[text("Hel"), text("lo"), text("lo")])
            .into_iter()
            .skip(2)
            .map(|l| l.replace("\"id\":\"e3\"", "\"id\":\"x3\"")),
    );
    let st = reduce_lines(&log);
    assert_eq!(entries(&st)[0]["content"], "Hellolo");
    assert_eq!(st.events.applied, 3);
}

#[test]
fn rule1_chunks_of_another_message_id_start_a_new_message() {
    // ACP: chunks carry their message's id, and no messageStart comes first.
    let chunk = |t: &str, m: &str| json!({"event": "stream_delta", "kind": "text", "textDelta": t, "messageId": m});
    let st = reduce(&[
        chunk("one", "m1"),
        chunk(" more", "m1"),
        chunk("two", "m2"),
        text(" and on"),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 2);
    assert_eq!(
        (&e[0]["content"], &e[0]["messageId"]),
        (&json!("one more"), &json!("m1"))
    );
    assert_eq!(
        (&e[1]["content"], &e[1]["messageId"]),
        (&json!("two and on"), &json!("m2"))
    );
    assert!(e[0].get("streaming").is_none());
    assert_eq!(e[1]["streaming"], true);
}

#[test]
fn rule2_and_rule9_a_message_ends_at_any_later_event_that_is_not_its_chunk() {
    for (after, what) in [
        (
            json!({"event": "usage_update", "stepUsage": {"input_tokens": 1}}),
            "usage",
        ),
        (
            json!({"event": "session_status", "status": "idle"}),
            "status",
        ),
        (
            json!({"event": "rate_limit_update", "status": "allowed"}),
            "rate limit",
        ),
        (
            json!({"event": "available_commands", "availableCommands": []}),
            "commands",
        ),
        (thinking("hmm"), "a thought"),
    ] {
        let st = reduce(&[text("Hello"), after]);
        let e = entries(&st);
        assert!(e[0].get("streaming").is_none(), "ended by {what}");
    }
    // A chunk of another agent's message ends it too, and its own next chunk continues it.
    let mut sub = text("inner");
    sub["parentCallId"] = json!("A");
    let st = reduce(&[
        json!({"event": "tool_invocation", "callId": "A", "kind": "think", "toolName": "Task", "input": {}}),
        text("Hello"),
        sub,
        text(" again"),
    ]);
    let e = entries(&st);
    let main: Vec<_> = e
        .iter()
        .filter(|x| x.get("parentCallId").is_none() && x["type"] == "message")
        .collect();
    assert_eq!(main.len(), 1);
    assert_eq!(main[0]["content"], "Hello again");
    assert_eq!(main[0]["streaming"], true);
    let inner = e.iter().find(|x| x["content"] == "inner").unwrap();
    assert!(inner.get("streaming").is_none());
    // Ended, then continued and completed by its final text: the streamed text is replaced.
    let st = reduce(&[
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m1"}),
        text("Helo"),
        json!({"event": "usage_update", "stepUsage": {"input_tokens": 1}, "messageId": "m1"}),
        text(" wrld"),
        json!({"event": "text", "kind": "text", "text": "Hello world", "messageId": "m1"}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["content"], "Hello world");
}

#[test]
fn rule2_final_text_replaces_the_streamed_text() {
    let st = reduce(&[
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m1"}),
        text("Helo "),
        text("wrld"),
        json!({"event": "text", "kind": "text", "text": "Hello world", "messageId": "m1", "model": "x"}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["content"], "Hello world");
    assert!(e[0].get("streaming").is_none());
    assert_eq!(e[0]["model"], "x");
}

#[test]
fn rule2_further_blocks_of_a_message_continue_it() {
    // Two text blocks of one message (streamed, then final each), as Claude writes them.
    let st = reduce(&[
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m1"}),
        text("A"),
        json!({"event": "text", "kind": "text", "text": "A.", "messageId": "m1"}),
        text("B"),
        json!({"event": "text", "kind": "text", "text": "B.", "messageId": "m1"}),
        // the same block delivered again adds nothing
        json!({"event": "text", "kind": "text", "text": "A.B.", "messageId": "m1"}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["content"], "A.B.");
}

#[test]
fn rule2_complete_texts_of_different_messages_are_separate() {
    let st = reduce(&[
        json!({"event": "text", "kind": "text", "text": "one", "messageId": "m1"}),
        json!({"event": "text", "kind": "text", "text": "two", "messageId": "m2"}),
        json!({"event": "text", "kind": "text", "text": "three"}),
    ]);
    assert_eq!(entries(&st).len(), 3);
}

#[test]
fn rule9_thought_chunks_and_message_chunks_do_not_mix() {
    let st = reduce(&[
        thinking("Let me "),
        thinking("think."),
        // usage lines between chunks do not end the thought (Claude writes token estimates)
        json!({"event": "usage_update", "stepUsage": {}}),
        thinking(" Done."),
        text("Answer"),
        thinking("More?"),
    ]);
    let e = entries(&st);
    let kinds: Vec<_> = e.iter().map(|x| x["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["thought", "message", "thought"]);
    assert_eq!(e[0]["content"], "Let me think. Done.");
    assert!(e[0].get("streaming").is_none(), "ended by the message");
    assert_eq!(e[2]["streaming"], true);
}

#[test]
fn text_of_kind_plan_or_error_is_its_own_message() {
    let st = reduce(&[
        text("a"),
        json!({"event": "text", "kind": "plan", "text": "1. do it"}),
        text("b"),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 3);
    assert_eq!(e[1]["kind"], "plan");
}

// ---------------------------------------------------------------------------------------------
// RULE 3, 4: tool calls.

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

// ---------------------------------------------------------------------------------------------
// RULE 5, 6: permissions.

#[test]
fn rule5_and_rule6_permission_request_and_answer() {
    let req = json!({"event": "permission_request", "requestId": "r1", "toolName": "Write",
                     "toolKind": "edit", "toolInput": {"file_path": "n.md"}, "toolUseId": "c1",
                     "options": [{"optionId": "allow"}]});
    let st = reduce(&[call("c1"), req.clone()]);
    let j = js(&st);
    assert_eq!(j["entries"][1]["type"], "permission_request");
    assert!(j["entries"][1].get("response").is_none());
    assert_eq!(j["entries"][1]["options"][0]["optionId"], "allow");
    assert_eq!(
        j["pending"]["sessions"][0]["permissions"][0]["requestId"],
        "r1"
    );
    assert_eq!(j["entries"][0]["permission"], json!({"requestId": "r1"}));

    let st = reduce(&[
        call("c1"),
        req,
        json!({"event": "permission_response", "requestId": "r1", "decision": "deny",
               "allowed": false, "message": "no"}),
        json!({"event": "tool_completion", "callId": "c1", "status": "failed", "isError": true}),
        // the turn reports the same denial again: counted once
        json!({"event": "turn_complete", "permissionDenials": [{"tool_use_id": "c1"}]}),
    ]);
    let j = js(&st);
    let answer = &j["entries"][1]["response"];
    assert_eq!(
        (answer["decision"].clone(), answer["allowed"].clone()),
        (json!("deny"), json!(false))
    );
    assert_eq!(answer["seq"], 3);
    assert!(j["pending"]["sessions"][0]["permissions"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(j["entries"][0]["permission"]["decision"], "deny");
    assert_eq!(j["entries"][0]["denied"], true);
    let t = &j["totals"]["sessions"][0];
    assert_eq!(
        (
            t["permissionRequests"].clone(),
            t["permissionDenials"].clone()
        ),
        (json!(1), json!(1))
    );
}

#[test]
fn rule6_denials_come_from_the_decision_and_count_once() {
    let req = |r: &str, c: &str| {
        json!({"event": "permission_request", "requestId": r, "toolName": "Write",
               "toolKind": "edit", "toolInput": {}, "toolUseId": c})
    };
    let answer = |r: &str, d: &str, allowed: bool| json!({"event": "permission_response", "requestId": r, "decision": d, "allowed": allowed});
    let st = reduce(&[
        call("c1"),
        req("r1", "c1"),
        answer("r1", "deny_always", false),
        // The same denial again, and the turn's list of them: one denial.
        answer("r1", "deny", false),
        call("c2"),
        req("r2", "c2"),
        // Withdrawn, and a refusal the decision does not state: not denials.
        answer("r2", "cancelled", false),
        req("r3", "none"),
        answer("r3", "allow", false),
        // A request of no known call, denied twice: one denial.
        req("r4", "ghost"),
        answer("r4", "deny", false),
        answer("r4", "deny", false),
        json!({"event": "turn_complete", "permissionDenials": [{"tool_use_id": "c1"}]}),
    ]);
    let j = js(&st);
    let t = &j["totals"]["sessions"][0];
    assert_eq!(t["permissionRequests"], 4);
    assert_eq!(t["permissionDenials"], 2);
    assert_eq!(j["entries"][0]["denied"], true);
    assert!(j["entries"][2].get("denied").is_none());
}

#[test]
fn rule3_tool_names_lose_their_mcp_prefix_and_keep_the_server_apart() {
    let st = reduce(&[
        json!({"event": "tool_invocation", "callId": "c1", "kind": "read", "toolName": "mcp__acp__Read", "input": {}}),
        json!({"event": "tool_invocation", "callId": "c2", "kind": "mcp", "toolName": "mcp__docs__search",
               "mcpServer": "docs", "mcpTool": "search", "input": {}}),
        json!({"event": "permission_request", "requestId": "r", "toolName": "mcp__acp__Write",
               "toolKind": "edit", "toolInput": {}, "toolUseId": "c3"}),
        done("c3"),
        json!({"event": "tool_invocation", "callId": "c4", "kind": "execute", "toolName": "Bash", "input": {}}),
    ]);
    let e = entries(&st);
    assert_eq!(
        (&e[0]["toolName"], &e[0]["mcpServer"], &e[0]["mcpTool"]),
        (&json!("Read"), &json!("acp"), &json!("Read"))
    );
    assert_eq!(
        (&e[1]["toolName"], &e[1]["mcpServer"]),
        (&json!("search"), &json!("docs"))
    );
    // RULE 5 keeps the request's name as the agent gave it; its call takes it cleaned.
    assert_eq!(e[2]["toolName"], "mcp__acp__Write");
    let c3 = e
        .iter()
        .find(|x| x["type"] == "tool_call" && x["callId"] == "c3")
        .unwrap();
    assert_eq!(
        (&c3["toolName"], &c3["mcpServer"]),
        (&json!("Write"), &json!("acp"))
    );
    assert_eq!(e[4]["toolName"], "Bash");
    assert!(e[4].get("mcpServer").is_none());
    let p = &js(&st)["pending"]["sessions"][0]["tools"];
    assert_eq!(p[0]["toolName"], "Read");
}

#[test]
fn rule4_whatever_the_order_nothing_is_lost() {
    let invoke = json!({"event": "tool_invocation", "callId": "c", "kind": "edit", "toolName": "Write",
                        "title": "notes.md", "input": {"file_path": "notes.md"}});
    let update = json!({"event": "tool_update", "callId": "c", "status": "writing", "elapsedMs": 4,
                        "locations": ["notes.md"]});
    let complete = json!({"event": "tool_completion", "callId": "c", "status": "completed",
                          "output": "ok", "timestamp": "2026-01-01T00:00:02Z", "durationMs": 7});
    // A later, emptier completion: a status alone.
    let again = json!({"event": "tool_completion", "callId": "c", "status": "completed"});
    let orders = [
        vec![
            invoke.clone(),
            update.clone(),
            complete.clone(),
            again.clone(),
        ],
        vec![
            update.clone(),
            invoke.clone(),
            complete.clone(),
            again.clone(),
        ],
        vec![
            complete.clone(),
            update.clone(),
            invoke.clone(),
            again.clone(),
        ],
        vec![
            update.clone(),
            complete.clone(),
            again.clone(),
            invoke.clone(),
        ],
    ];
    for (n, order) in orders.into_iter().enumerate() {
        let st = reduce(&order);
        let e = entries(&st);
        assert_eq!(e.len(), 1, "order {n}");
        let c = &e[0];
        for (k, v) in [
            ("toolName", json!("Write")),
            ("kind", json!("edit")),
            ("title", json!("notes.md")),
            ("input", json!({"file_path": "notes.md"})),
            ("status", json!("completed")),
            ("output", json!("ok")),
            ("locations", json!(["notes.md"])),
            ("elapsedMs", json!(4)),
            ("progress", json!("writing")),
            ("endedAt", json!("2026-01-01T00:00:02Z")),
            ("durationMs", json!(7)),
        ] {
            assert_eq!(c[k], v, "order {n}: {k}");
        }
        let t = &js(&st)["totals"]["sessions"][0];
        assert_eq!(t["tools"], 1, "order {n}: counted once");
        assert_eq!(t["toolsByKind"], json!({"edit": 1}), "order {n}");
        assert!(js(&st)["pending"]["sessions"][0]["tools"]
            .as_array()
            .unwrap()
            .is_empty());
    }
    // A permission before its call: the call takes what the request says of it.
    let st = reduce(&[
        json!({"event": "permission_request", "requestId": "r", "toolName": "Write", "toolKind": "edit",
               "toolInput": {"file_path": "a"}, "toolUseId": "c", "title": "Write a"}),
        json!({"event": "permission_response", "requestId": "r", "decision": "allow", "allowed": true}),
        json!({"event": "tool_invocation", "callId": "c", "toolName": "Write", "kind": "edit", "input": {"file_path": "a"}}),
    ]);
    let c = entries(&st)
        .into_iter()
        .find(|x| x["type"] == "tool_call")
        .unwrap();
    assert_eq!(
        c["permission"],
        json!({"requestId": "r", "decision": "allow", "allowed": true})
    );
    assert_eq!(c["title"], "Write a");
}

#[test]
fn a_call_announced_only_by_its_permission_request_takes_its_name() {
    let st = reduce(&[
        json!({"event": "permission_request", "requestId": "0", "toolName": "run_shell_command",
               "toolKind": "execute", "toolInput": {}, "toolUseId": "c9", "title": "date"}),
        json!({"event": "permission_response", "requestId": "0", "decision": "allow", "allowed": true}),
        done("c9"),
    ]);
    let e = &entries(&st)[1];
    assert_eq!(e["toolName"], "run_shell_command");
    assert_eq!(e["kind"], "execute");
    assert_eq!(
        e["permission"],
        json!({"requestId": "0", "decision": "allow", "allowed": true})
    );
}

// ---------------------------------------------------------------------------------------------
// RULE 7, 8, 10, 11, 12: session-level entries.

#[test]
fn rule7_meta_entries_only_when_capabilities_change() {
    let init =
        json!({"event": "session_init", "model": "m1", "cwd": "/w", "permissionMode": "default"});
    let st = reduce(&[
        init.clone(),
        json!({"event": "turn_complete"}),
        init.clone(),
        json!({"event": "turn_complete"}),
        json!({"event": "session_init", "model": "m2"}),
    ]);
    let metas: Vec<_> = entries(&st)
        .into_iter()
        .filter(|e| e["type"] == "meta")
        .collect();
    assert_eq!(metas.len(), 2);
    assert_eq!(metas[1]["model"], "m2");
    assert_eq!(metas[1]["cwd"], "/w", "unchanged members are kept");
    assert_eq!(js(&st)["pending"]["sessions"][0]["model"], "m2");
}

#[test]
fn rule7_a_new_mode_list_is_a_new_meta_entry_and_meta_carries_the_current_mode() {
    // As ACP's converter writes a session/new answer (session_init, then session_mode with the
    // modes), a mode update (an empty list), then a later session/new (session/load) of the
    // same session with another list.
    let modes = |ids: &[&str]| json!(ids.iter().map(|i| json!({"id": i})).collect::<Vec<_>>());
    let st = reduce(&[
        json!({"event": "session_init", "cwd": "/w"}),
        json!({"event": "session_mode", "currentModeId": "default",
               "availableModes": modes(&["default", "plan"])}),
        json!({"event": "session_mode", "currentModeId": "plan", "availableModes": []}),
        json!({"event": "session_init", "cwd": "/w"}),
        json!({"event": "session_mode", "currentModeId": "default",
               "availableModes": modes(&["default", "plan"])}),
        json!({"event": "session_init", "cwd": "/w"}),
        json!({"event": "session_mode", "currentModeId": "default",
               "availableModes": modes(&["default", "plan", "yolo"])}),
    ]);
    let metas: Vec<_> = entries(&st)
        .into_iter()
        .filter(|e| e["type"] == "meta")
        .collect();
    assert_eq!(metas.len(), 2, "{metas:#?}");
    assert_eq!(metas[0]["currentModeId"], "default");
    assert_eq!(metas[0]["availableModes"], modes(&["default", "plan"]));
    assert_eq!(
        metas[0]["seq"], 1,
        "the first list fills in its session_init's entry"
    );
    assert_eq!(metas[1]["seq"], 7);
    assert_eq!(metas[1]["currentModeId"], "default");
    assert_eq!(
        metas[1]["availableModes"],
        modes(&["default", "plan", "yolo"])
    );
    assert_eq!(metas[1]["cwd"], "/w", "the rest is the latest meta's");
    let changes = entries(&st)
        .into_iter()
        .filter(|e| e["type"] == "mode_change")
        .count();
    assert_eq!(changes, 2, "default -> plan -> default");
}

#[test]
fn rule7_on_a_recorded_acp_session_meta_carries_the_modes_and_the_current_mode() {
    let st = reduce_capture("acp-claude/text-only.events.jsonl");
    let metas: Vec<_> = entries(&st)
        .into_iter()
        .filter(|e| e["type"] == "meta")
        .collect();
    assert_eq!(metas.len(), 1);
    assert_eq!(metas[0]["currentModeId"], "default");
    assert!(metas[0]["availableModes"]
        .as_array()
        .is_some_and(|m| m.len() > 1));
}

#[test]
fn rule8_every_prompt_is_an_entry() {
    let st = reduce(&[
        json!({"event": "user_input", "text": "hi"}),
        json!({"event": "user_input", "text": "again", "isSynthetic": true}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0]["role"], "user");
    assert_eq!(e[1]["synthetic"], true);
    assert_eq!(e[1]["turn"], 1, "a prompt while a turn runs joins it");
}

#[test]
fn rule10_each_plan_is_an_entry_and_the_latest_is_pending() {
    let st = reduce(&[
        json!({"event": "plan_update", "entries": [{"content": "a", "status": "pending"}]}),
        json!({"event": "plan_update", "entries": [{"content": "a", "status": "completed"}]}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 2);
    let plan = &js(&st)["pending"]["sessions"][0]["plan"];
    assert_eq!(plan["entry"], 1);
    assert_eq!(plan["entries"][0]["status"], "completed");
}

#[test]
fn rule11_mode_changes_record_the_previous_mode() {
    let st = reduce(&[
        json!({"event": "session_init", "permissionMode": "default"}),
        json!({"event": "session_mode", "currentModeId": "default", "availableModes": []}),
        json!({"event": "session_mode", "currentModeId": "plan", "availableModes": []}),
    ]);
    let e: Vec<_> = entries(&st)
        .into_iter()
        .filter(|e| e["type"] == "mode_change")
        .collect();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["previousModeId"], "default");
    assert_eq!(e[0]["newModeId"], "plan");
    assert_eq!(js(&st)["pending"]["sessions"][0]["mode"], "plan");
}

#[test]
fn rule12_commands_update_the_latest_meta_in_place() {
    let st = reduce(&[
        json!({"event": "session_init", "model": "m"}),
        json!({"event": "available_commands", "availableCommands": [{"name": "a"}]}),
        json!({"event": "available_commands", "availableCommands": [{"name": "b"}]}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["availableCommands"], json!([{"name": "b"}]));
    assert_eq!(e[0]["updatedSeq"], 3);
}

// ---------------------------------------------------------------------------------------------
// Turns and sessions.

#[test]
fn turns_are_inferred_without_turn_start() {
    let st = reduce(&[
        json!({"event": "session_init", "model": "m"}),
        text("a"),
        json!({"event": "turn_complete", "durationMs": 5}),
        json!({"event": "user_input", "text": "next"}),
        text("b"),
        json!({"event": "turn_complete", "isError": true}),
        json!({"event": "turn_complete"}),
    ]);
    let turns = js(&st)["tree"]["sessions"][0]["turns"].clone();
    assert_eq!(turns.as_array().unwrap().len(), 3);
    assert_eq!(turns[0]["status"], "completed");
    assert_eq!(
        (turns[1]["status"].clone(), turns[1]["startSeq"].clone()),
        (json!("failed"), json!(4))
    );
    assert_eq!(
        turns[2]["startSeq"], turns[2]["endSeq"],
        "a lone turn_complete is a turn"
    );
    let t = &js(&st)["totals"]["sessions"][0];
    assert_eq!(
        (t["turns"].clone(), t["failedTurns"].clone()),
        (json!(3), json!(1))
    );
}

#[test]
fn a_failed_turn_ends_and_stops_its_calls() {
    // An API error while a call runs: the agent reports the error, then a failed turn_complete.
    let st = reduce(&[
        json!({"event": "user_input", "text": "go"}),
        call("c1"),
        json!({"event": "error", "message": "API Error: 500", "severity": "error", "requestId": "3"}),
        json!({"event": "turn_complete", "isError": true, "subtype": "error", "errors": ["API Error: 500"]}),
    ]);
    let j = js(&st);
    let turn = &j["tree"]["sessions"][0]["turns"][0];
    assert_eq!(turn["status"], "failed");
    assert_eq!(turn["endSeq"], 4);
    let p = &j["pending"]["sessions"][0];
    assert!(p.get("turn").is_none(), "no turn runs after the failure");
    assert!(p["tools"].as_array().unwrap().is_empty());
    assert_eq!(j["entries"][1]["status"], "cancelled");
    // The failure counts once: one failed turn, one error (the turn's `errors` repeat it).
    let t = &j["totals"]["all"];
    assert_eq!(
        [
            &t["turns"],
            &t["failedTurns"],
            &t["errors"],
            &t["cancelledTools"]
        ],
        [&json!(1), &json!(1), &json!(1), &json!(1)]
    );
    // The next prompt is a turn of its own.
    let st = reduce(&[
        json!({"event": "user_input", "text": "go"}),
        json!({"event": "error", "message": "API Error: 500", "severity": "error"}),
        json!({"event": "turn_complete", "isError": true}),
        json!({"event": "user_input", "text": "again"}),
    ]);
    let j = js(&st);
    assert_eq!(j["pending"]["sessions"][0]["turn"], 2);
    assert_eq!(j["totals"]["all"]["failedTurns"], 1);
}

#[test]
fn a_failure_with_no_turn_running_is_one_failed_turn() {
    // ACP: the prompt's error answer and the failed turn_complete name no session; the error
    // came before any agent output opened a turn.
    let st = reduce(&[
        json!({"event": "session_init", "sessionId": "A", "model": "m"}),
        json!({"event": "turn_complete", "sessionId": "A"}),
        json!({"event": "error", "sessionId": "", "message": "Internal error", "severity": "error", "code": "-32603"}),
        json!({"event": "turn_complete", "sessionId": "", "isError": true}),
    ]);
    let j = js(&st);
    let turns = j["tree"]["sessions"][0]["turns"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1]["status"], "failed");
    assert!(j["pending"]["sessions"][0].get("turn").is_none());
    let t = &j["totals"]["sessions"][0];
    assert_eq!(
        [&t["turns"], &t["failedTurns"], &t["errors"]],
        [&json!(2), &json!(1), &json!(1)]
    );
}

#[test]
fn turn_start_names_a_fresh_turn_and_ends_a_busy_one() {
    let st = reduce(&[
        json!({"event": "user_input", "text": "go"}),
        json!({"event": "turn_start", "turnId": "t1", "model": "m"}),
        text("working"),
        json!({"event": "turn_start", "turnId": "t2"}),
    ]);
    let turns = js(&st)["tree"]["sessions"][0]["turns"].clone();
    assert_eq!(turns[0]["turnId"], "t1");
    assert_eq!(turns[0]["model"], "m");
    assert_eq!(turns[0]["status"], "incomplete");
    assert_eq!(turns[1]["turnId"], "t2");
    assert_eq!(js(&st)["pending"]["sessions"][0]["turn"], 2);
}

#[test]
fn session_level_events_before_the_first_prompt_open_no_turn() {
    // Wire fact (claude-agent-acp, testdata/acp-claude/plan-exit-deny.jsonl): the client sets
    // the mode (`session/set_mode`, answered by a mode update, commands and configuration)
    // after `session/new` and before its only `session/prompt`. One prompt, one turn.
    let ev = |mut e: Value| {
        e["provider"] = json!("acp");
        e
    };
    let st = reduce(&[
        ev(json!({"event": "session_init", "cwd": "/w"})),
        ev(
            json!({"event": "session_mode", "currentModeId": "default", "availableModes": [{"id": "default"}, {"id": "plan"}]}),
        ),
        ev(json!({"event": "config_options", "configOptions": [{"id": "mode"}]})),
        ev(json!({"event": "session_mode", "currentModeId": "plan", "availableModes": []})),
        ev(json!({"event": "available_commands", "availableCommands": [{"name": "a"}]})),
        ev(json!({"event": "config_options", "configOptions": [{"id": "mode"}]})),
        ev(json!({"event": "session_status", "status": "idle"})),
        ev(json!({"event": "turn_start"})),
        ev(json!({"event": "user_input", "text": "Plan how to add a README."})),
        ev(text("Here is my plan.")),
        ev(json!({"event": "turn_complete", "subtype": "end_turn", "stopReason": "end_turn"})),
    ]);
    let j = js(&st);
    let turns = j["tree"]["sessions"][0]["turns"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(turns.len(), 1, "{turns:#?}");
    assert_eq!(turns[0]["status"], "completed");
    assert_eq!(j["totals"]["sessions"][0]["turns"], 1);
    assert_eq!(j["pending"]["sessions"][0]["mode"], "plan");
    let modes: Vec<_> = entries(&st)
        .into_iter()
        .filter(|e| e["type"] == "mode_change")
        .collect();
    assert_eq!(modes.len(), 1);
    assert_eq!(
        (&modes[0]["previousModeId"], &modes[0]["newModeId"]),
        (&json!("default"), &json!("plan"))
    );
    // A turn with work in it is still ended by the next turn_start.
    let st = reduce(&[
        json!({"event": "turn_start"}),
        json!({"event": "session_mode", "currentModeId": "plan", "availableModes": []}),
        text("working"),
        json!({"event": "turn_start"}),
    ]);
    let turns = js(&st)["tree"]["sessions"][0]["turns"].clone();
    assert_eq!(turns[0]["status"], "incomplete");
}

#[test]
fn a_status_ends_at_the_turn_boundary_it_is_about() {
    // Wire fact (Gemini CLI over ACP, testdata/acp-gemini/interrupt-sleep.jsonl): the client
    // cancels prompt 1 (`session/cancel`: status interrupted), the agent answers it
    // `cancelled`, and prompt 2 is answered `end_turn`. The session is not interrupted then.
    let st = reduce(&[
        json!({"event": "turn_start"}),
        json!({"event": "user_input", "text": "Wait for the build."}),
        call("c1"),
        json!({"event": "session_status", "status": "interrupted"}),
        json!({"event": "turn_complete", "subtype": "cancelled", "stopReason": "cancelled"}),
    ]);
    let j = js(&st);
    assert_eq!(
        j["tree"]["sessions"][0]["status"], "interrupted",
        "until a turn opens"
    );
    assert_eq!(j["tree"]["sessions"][0]["turns"][0]["interrupted"], true);
    let mut log = lines(&[
        json!({"event": "turn_start"}),
        json!({"event": "session_status", "status": "interrupted"}),
        json!({"event": "turn_complete", "subtype": "cancelled", "stopReason": "cancelled"}),
        json!({"event": "turn_start"}),
    ]);
    let j = js(&reduce_lines(&log));
    assert!(j["tree"]["sessions"][0].get("status").is_none(), "{j:#}");
    log.extend(lines(&[
        json!({"event": "turn_complete", "subtype": "end_turn", "seq": 5, "id": "e5"}),
    ]));
    let j = js(&reduce_lines(&log));
    assert!(j["tree"]["sessions"][0].get("status").is_none());
    assert_eq!(j["tree"]["sessions"][0]["turns"][1]["status"], "completed");
    // Claude's `requesting` is about the turn's work and ends with it; its SDK's `idle` and
    // Codex's `idle` (which comes before the turn_complete) last until a turn opens; Codex's
    // `running` (before its turn_start) lasts through the opening; `error` stays.
    let status = |events: &[Value]| {
        js(&reduce(events))["tree"]["sessions"][0]
            .get("status")
            .cloned()
    };
    let tc = json!({"event": "turn_complete"});
    let st = |s: &str| json!({"event": "session_status", "status": s});
    assert_eq!(status(&[text("a"), st("requesting"), tc.clone()]), None);
    assert_eq!(
        status(&[text("a"), st("idle"), tc.clone()]),
        Some(json!("idle"))
    );
    assert_eq!(
        status(&[text("a"), tc.clone(), st("idle"), text("b")]),
        None
    );
    assert_eq!(
        status(&[st("running"), json!({"event": "turn_start"})]),
        Some(json!("running"))
    );
    assert_eq!(
        status(&[text("a"), st("error"), tc.clone(), text("b")]),
        Some(json!("error"))
    );
}

#[test]
fn a_turn_carries_the_model_the_session_names_at_its_start() {
    // Wire fact: Claude Code names its model in `system/init` after it reads the prompt. With
    // `-p` that line opens the turn (testdata/claude/text-only.jsonl, line 1); the SDK writes
    // the prompt first, and the init follows it (testdata/claude-sdk/two-prompts.jsonl).
    let model = |events: &[Value]| {
        let j = js(&reduce(events));
        j["tree"]["sessions"][0]["turns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.get("model").cloned())
            .collect::<Vec<_>>()
    };
    let m = Some(json!("opus"));
    assert_eq!(
        model(&[
            json!({"event": "session_init", "model": "opus"}),
            text("a"),
            json!({"event": "turn_complete"}),
        ]),
        vec![m.clone()]
    );
    let sdk = [
        json!({"event": "user_input", "sessionId": "", "text": "one"}),
        json!({"event": "session_init", "model": "opus"}),
        text("a"),
        json!({"event": "turn_complete"}),
        json!({"event": "user_input", "sessionId": "", "text": "two"}),
        json!({"event": "session_init", "model": "sonnet"}),
        text("b"),
        json!({"event": "turn_complete"}),
    ];
    assert_eq!(model(&sdk), [m.clone(), Some(json!("sonnet"))]);
    // Once the agent has worked in the turn, a model named later is the next turn's.
    assert_eq!(
        model(&[
            json!({"event": "session_init", "model": "opus"}),
            text("a"),
            json!({"event": "session_init", "model": "sonnet"}),
            json!({"event": "turn_complete"}),
        ]),
        [m]
    );
}

#[test]
fn events_without_a_session_wait_for_the_session_that_names_itself() {
    // Claude's SDK protocol: the prompt is read before the agent says which session it is.
    let st = reduce(&[
        json!({"event": "session_init", "sessionId": "", "slashCommands": []}),
        json!({"event": "user_input", "sessionId": "", "text": "first"}),
        json!({"event": "session_init", "sessionId": "A", "model": "m"}),
        json!({"event": "text", "sessionId": "A", "kind": "text", "text": "one"}),
        json!({"event": "permission_request", "sessionId": "", "requestId": "r", "toolName": "X", "toolKind": "other", "toolInput": {}}),
        json!({"event": "turn_complete", "sessionId": "A"}),
        json!({"event": "user_input", "sessionId": "", "text": "second"}),
        json!({"event": "session_init", "sessionId": "B", "model": "m"}),
        json!({"event": "turn_complete", "sessionId": "B"}),
    ]);
    let j = js(&st);
    let ids: Vec<_> = j["tree"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].clone())
        .collect();
    assert_eq!(ids, [json!("A"), json!("B")]);
    let first = entries(&st)
        .into_iter()
        .find(|e| e["content"] == "first")
        .unwrap();
    assert_eq!(
        (first["sessionId"].clone(), first["turn"].clone()),
        (json!("A"), json!(1))
    );
    let second = entries(&st)
        .into_iter()
        .find(|e| e["content"] == "second")
        .unwrap();
    assert_eq!(
        (second["sessionId"].clone(), second["turn"].clone()),
        (json!("B"), json!(1))
    );
    let req = entries(&st)
        .into_iter()
        .find(|e| e["type"] == "permission_request")
        .unwrap();
    assert_eq!(req["sessionId"], "A");
    assert!(j["cursor"]["unattributed"].as_array().unwrap().is_empty());
}

#[test]
fn a_stream_without_session_ids_is_one_session() {
    let st = reduce(&[
        json!({"event": "user_input", "sessionId": "", "text": "hi"}),
        json!({"event": "text", "sessionId": "", "kind": "text", "text": "hello"}),
        json!({"event": "turn_complete", "sessionId": ""}),
    ]);
    let j = js(&st);
    assert_eq!(j["tree"]["sessions"][0]["sessionId"], "");
    assert_eq!(j["entries"].as_array().unwrap().len(), 2);
    assert_eq!(j["totals"]["all"]["turns"], 1);
}

// ---------------------------------------------------------------------------------------------
// Parallel calls and subagents.

#[test]
fn calls_started_while_another_runs_are_parallel() {
    let st = reduce(&[
        call("a"),
        call("b"),
        done("a"),
        done("b"),
        call("c"),
        done("c"),
    ]);
    let e = entries(&st);
    assert_eq!(e[0]["parallel"], true);
    assert_eq!(e[1]["parallel"], true);
    assert!(
        e[2].get("parallel").is_none(),
        "started after both completed"
    );
    assert_eq!(js(&st)["totals"]["sessions"][0]["parallelTools"], 2);
}

#[test]
fn a_subagent_call_is_not_parallel_with_the_call_that_started_it() {
    let mut sub = call("inner");
    sub["parentCallId"] = json!("agent");
    let st = reduce(&[
        json!({"event": "tool_invocation", "callId": "agent", "kind": "think", "toolName": "Task", "input": {}}),
        json!({"event": "subagent_spawn", "callId": "agent", "agentType": "general"}),
        sub,
    ]);
    let e = entries(&st);
    assert!(e.iter().all(|x| x.get("parallel").is_none()));
}

#[test]
fn subagents_nest_under_the_call_that_started_them() {
    let with_parent = |mut v: Value, p: &str| {
        v["parentCallId"] = json!(p);
        v
    };
    let st = reduce(&[
        json!({"event": "user_input", "text": "go"}),
        json!({"event": "tool_invocation", "callId": "A", "kind": "think", "toolName": "Task", "input": {}}),
        json!({"event": "subagent_spawn", "callId": "A", "agentType": "general", "description": "d"}),
        with_parent(json!({"event": "user_input", "text": "sub prompt"}), "A"),
        with_parent(
            json!({"event": "tool_invocation", "callId": "B", "kind": "think", "toolName": "Task", "input": {}}),
            "A",
        ),
        with_parent(call("C"), "B"),
        with_parent(done("C"), "B"),
        with_parent(
            json!({"event": "text", "kind": "text", "text": "inner answer"}),
            "A",
        ),
        with_parent(done("B"), "A"),
        json!({"event": "subagent_complete", "callId": "A", "status": "completed", "summary": "s", "totalTokens": 9}),
        done("A"),
        json!({"event": "text", "kind": "text", "text": "outer answer"}),
        json!({"event": "turn_complete"}),
    ]);
    let j = js(&st);
    let turn = &j["tree"]["sessions"][0]["turns"][0];
    assert_eq!(turn["tools"], 3);
    let top: Vec<_> = turn["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["type"].clone())
        .collect();
    assert_eq!(
        top,
        [json!("message"), json!("tool_call"), json!("message")]
    );
    let a = &turn["children"][1];
    assert_eq!(a["callId"], "A");
    let under_a: Vec<_> = a["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["type"].clone())
        .collect();
    assert_eq!(
        under_a,
        [json!("message"), json!("tool_call"), json!("message")]
    );
    assert_eq!(a["children"][1]["callId"], "B");
    assert_eq!(a["children"][1]["children"][0]["callId"], "C");
    let agent = &j["entries"][1];
    assert_eq!(agent["subagent"]["agentType"], "general");
    assert_eq!(agent["subagent"]["summary"], "s");
    assert_eq!(j["totals"]["sessions"][0]["subagents"], 1);
    // The subagent's text is its own message, not a continuation of the parent's.
    let inner = j["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["content"] == "inner answer")
        .unwrap();
    assert_eq!(inner["parentCallId"], "A");
}

// ---------------------------------------------------------------------------------------------
// Totals.

#[test]
fn aceclaw_subagents_nest_their_events_by_place_and_end_completed() {
    // The built AceClaw capture: stream.subagent.start, a grep, stream.subagent.end.
    let st = reduce_capture("aceclaw/uds-session.events.jsonl");
    let e = entries(&st);
    let at = |id: &str| e.iter().position(|x| x["callId"] == id).unwrap();
    let (sub, grep) = (at("explore"), at("toolu_01GrP"));
    assert_eq!(e[sub]["status"], "completed");
    assert_eq!(e[sub]["subagent"]["status"], "completed");
    assert_eq!(e[grep]["parentCallId"], "explore");
    assert_eq!(
        e[at("toolu_01EdT")]["parentCallId"],
        Value::Null,
        "after the end"
    );
    let turn = &js(&st)["tree"]["sessions"][0]["turns"][0];
    let node = turn["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["callId"] == "explore")
        .unwrap();
    assert_eq!(node["children"][0]["entry"], grep);
    assert!(js(&st)["cursor"]["sessions"][0]["subagents"].is_null());

    // Hand-written: a subagent inside a subagent, times from the events, and a snapshot
    // taken inside them resumes inside them.
    let ace = |mut v: Value, t: &str| {
        v["provider"] = json!("aceclaw");
        v["timestamp"] = json!(format!("2026-07-06T10:00:0{t}.000Z"));
        v
    };
    let log = lines(&[
        ace(json!({"event": "turn_start"}), "0"),
        ace(
            json!({"event": "subagent_spawn", "callId": "a", "agentType": "a"}),
            "1",
        ),
        ace(text("in a"), "1"),
        ace(
            json!({"event": "subagent_spawn", "callId": "b", "agentType": "b"}),
            "2",
        ),
        ace(call("c1"), "2"),
        ace(done("c1"), "3"),
        ace(json!({"event": "subagent_complete", "callId": "b"}), "4"),
        ace(call("c2"), "4"),
        ace(json!({"event": "subagent_complete", "callId": "a"}), "5"),
        ace(text("main"), "6"),
        ace(json!({"event": "turn_complete"}), "7"),
    ]);
    let st = reduce_lines(&log);
    let e = entries(&st);
    let parent = |i: usize| e[i]["parentCallId"].clone();
    assert_eq!(e[0]["callId"], "a");
    assert_eq!(
        (parent(1), e[1]["content"].clone()),
        (json!("a"), json!("in a"))
    );
    assert_eq!(
        (e[2]["callId"].clone(), parent(2)),
        (json!("b"), json!("a"))
    );
    assert_eq!(
        (e[3]["callId"].clone(), parent(3)),
        (json!("c1"), json!("b"))
    );
    assert_eq!(
        (e[4]["callId"].clone(), parent(4)),
        (json!("c2"), json!("a"))
    );
    assert_eq!(
        (parent(5), e[5]["content"].clone()),
        (Value::Null, json!("main"))
    );
    assert_eq!(
        (e[0]["status"].clone(), e[0]["durationMs"].clone()),
        (json!("completed"), json!(4000))
    );
    assert_eq!(
        (e[2]["status"].clone(), e[2]["durationMs"].clone()),
        (json!("completed"), json!(2000))
    );
    let turn = &js(&st)["tree"]["sessions"][0]["turns"][0];
    assert_eq!(
        turn["children"][0]["children"][1]["children"][0]["entry"],
        3
    );
    for k in 0..=log.len() {
        same(
            &format!("cut after {k}"),
            &st,
            &resumed(&log, k, &log[k..], false),
        );
    }
    let inside = resumed(&log, 5, &[], false);
    assert_eq!(
        js(&inside)["cursor"]["sessions"][0]["subagents"],
        json!(["a", "b"])
    );
}

#[test]
fn aceclaw_plan_steps_set_their_status_and_id_and_nest_their_work() {
    // The built bridge capture: plan_created (2 steps), step 1 started, an edit of step 1,
    // step 1 completed, step 2 started, a failed bash of step 2, a fallback, step 2 failed,
    // then the plan replanned, escalated and failed.
    let path = "aceclaw/bridge-plan.events.jsonl";
    let st = reduce_capture(path);
    let e = entries(&st);
    let plan = e.iter().position(|x| x["type"] == "plan").unwrap();
    let steps = json!([
        {"content": "Bump the version: Change pom.xml", "status": "completed",
         "stepId": "plan-1-step-1"},
        {"content": "Run the tests: mvn test", "status": "failed", "stepId": "plan-1-step-2"},
    ]);
    assert_eq!(e[plan]["entries"], steps);
    assert_eq!(e[plan]["planId"], "plan-1");
    // The plan's own events (replanned, escalated, then completed without success) last.
    assert_eq!(e[plan]["status"], "failed");
    assert_eq!(e[plan]["updatedSeq"], 15);
    let pending = &js(&st)["pending"]["sessions"][0]["plan"];
    assert_eq!(
        (
            pending["entry"].clone(),
            pending["entries"].clone(),
            pending["status"].clone()
        ),
        (json!(plan), steps, json!("failed"))
    );
    let at = |id: &str| e.iter().find(|x| x["callId"] == id).unwrap().clone();
    assert_eq!(at("toolu_01PoM")["parentStepId"], "plan-1-step-1");
    assert_eq!(at("toolu_01MvN")["parentStepId"], "plan-1-step-2");
    // Midway (after step 1 started and its edit): step 1 in progress, step 2 not started.
    let raw = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata")
            .join(path),
    )
    .unwrap();
    let log: Vec<String> = raw.lines().map(str::to_owned).collect();
    let mid = js(&reduce_lines(&log[..5]))["pending"]["sessions"][0]["plan"]["entries"].clone();
    assert_eq!(
        mid,
        json!([
            {"content": "Bump the version: Change pom.xml", "status": "in_progress",
             "stepId": "plan-1-step-1"},
            {"content": "Run the tests: mvn test", "status": "pending"},
        ])
    );
    for k in 0..=log.len() {
        same(
            &format!("cut after {k}"),
            &st,
            &resumed(&log, k, &log[k..], false),
        );
    }

    // Hand-written: steps found by index, else by the id an earlier event gave them, never by
    // their text; another plan's steps, an index beyond the plan and a fallback (no status)
    // change nothing; a later plan is the one updated.
    let ace = |mut v: Value, ext: Value| {
        v["provider"] = json!("aceclaw");
        v["extensions"] = ext;
        v
    };
    let plan_of = |id: &str, steps: &[&str]| {
        ace(
            json!({"event": "plan_update", "entries": steps.iter()
                .map(|c| json!({"content": c, "status": "pending"})).collect::<Vec<_>>()}),
            json!({"aceclaw.planId": id}),
        )
    };
    let step = |plan: &str, id: &str, index: Option<u64>, phase: &str, status: Option<&str>| {
        let mut v = json!({"event": "task_update", "taskId": id, "phase": phase,
                           "taskType": "plan_step", "description": "Read"});
        if let Some(s) = status {
            v["status"] = json!(s);
        }
        let mut ext = json!({"aceclaw.planId": plan});
        if let Some(i) = index {
            ext["aceclaw.stepIndex"] = json!(i);
        }
        ace(v, ext)
    };
    let of_step = |mut v: Value, id: &str| {
        v["provider"] = json!("aceclaw");
        v["extensions"] = json!({"aceclaw.parentStepId": id});
        v
    };
    let events = vec![
        ace(json!({"event": "turn_start"}), json!({})),
        plan_of("p", &["Read", "Write", "Test"]),
        step("p", "s2", Some(2), "started", Some("in_progress")),
        of_step(text("writing"), "s2"),
        of_step(call("c1"), "s2"),
        done("c1"),
        step("q", "q1", Some(1), "started", Some("in_progress")),
        step("p", "s9", Some(9), "started", Some("in_progress")),
        step("p", "s2", None, "progress", None),
        step("p", "s2", None, "updated", Some("completed")),
        step("p", "s3", None, "started", Some("in_progress")),
        step("p", "", Some(1), "updated", Some("failed")),
        ace(json!({"event": "turn_complete"}), json!({})),
    ];
    let log = lines(&events);
    let st = reduce_lines(&log);
    let e = entries(&st);
    assert_eq!(e[0]["planId"], "p");
    assert_eq!(
        e[0]["entries"],
        json!([
            {"content": "Read", "status": "failed"},
            {"content": "Write", "status": "completed", "stepId": "s2"},
            {"content": "Test", "status": "pending"},
        ]),
        "s3 names no index and no step has its id yet"
    );
    assert_eq!(e[0]["updatedSeq"], 12);
    assert_eq!(
        (e[1]["type"].clone(), e[1]["parentStepId"].clone()),
        (json!("message"), json!("s2"))
    );
    assert_eq!(
        (e[2]["callId"].clone(), e[2]["parentStepId"].clone()),
        (json!("c1"), json!("s2"))
    );
    for k in 0..=log.len() {
        same(
            &format!("cut after {k}"),
            &st,
            &resumed(&log, k, &log[k..], false),
        );
    }
    // A new plan is the latest: its steps are updated, the old entry no more.
    let mut more = events[..events.len() - 1].to_vec();
    more.push(plan_of("p", &["Adapt", "Test"]));
    more.push(step("p", "n1", Some(1), "started", Some("in_progress")));
    let st = reduce(&more);
    let e = entries(&st);
    let plans: Vec<&Value> = e.iter().filter(|x| x["type"] == "plan").collect();
    assert_eq!(plans[0]["entries"][0]["status"], "failed");
    assert_eq!(
        plans[1]["entries"],
        json!([
            {"content": "Adapt", "status": "in_progress", "stepId": "n1"},
            {"content": "Test", "status": "pending"},
        ])
    );
}

/// The plan entry of a state and `pending.plan`, without what tells when they changed.
fn plan_facts(st: &State) -> (Value, Value, Value, Value) {
    let e = entries(st);
    let plan = e.iter().find(|x| x["type"] == "plan").unwrap();
    let pending = &js(st)["pending"]["sessions"][0]["plan"];
    (
        plan["entries"].clone(),
        plan["status"].clone(),
        pending["entries"].clone(),
        pending["status"].clone(),
    )
}

#[test]
fn aceclaw_plan_events_before_their_plan_are_held_until_it_comes() {
    // The bridge capture with its plan_created (line 3) moved after every step and plan
    // event (lines 4-15): the plan comes out as in the capture's order.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/aceclaw/bridge-plan.events.jsonl");
    let raw = std::fs::read_to_string(path).unwrap();
    let log: Vec<String> = raw.lines().map(str::to_owned).collect();
    let in_order = reduce_lines(&log);
    let mut moved = log.clone();
    let plan = moved.remove(2);
    assert!(plan.contains("\"plan_update\""));
    moved.insert(14, plan);
    // Numbered in the order the bridge sent them (a lower number than the last applied is
    // skipped as already seen).
    for (n, l) in moved.iter_mut().enumerate() {
        let mut v: Value = serde_json::from_str(l).unwrap();
        v["extensions"]["aceclaw.eventId"] = json!(n + 1);
        *l = v.to_string();
    }
    let late = reduce_lines(&moved);
    assert_eq!(plan_facts(&late), plan_facts(&in_order));
    assert_eq!(plan_facts(&late).1, "failed");
    // Held in the cursor until then, and a snapshot taken while they wait resumes them.
    let held = reduce_lines(&moved[..14]);
    let waiting = &js(&held)["cursor"]["sessions"][0]["planEvents"];
    assert_eq!(waiting.as_array().unwrap().len(), 8, "{waiting}");
    assert_eq!(
        waiting[0],
        json!({"seq": 4, "planId": "plan-1", "step": {"stepId": "plan-1-step-1", "stepIndex": 1},
               "status": "in_progress"})
    );
    assert_eq!(
        waiting[7],
        json!({"seq": 15, "planId": "plan-1", "status": "failed"})
    );
    assert!(js(&late)["cursor"]["sessions"][0]
        .get("planEvents")
        .is_none());
    for k in 0..=moved.len() {
        same(
            &format!("cut after {k}"),
            &late,
            &resumed(&moved, k, &moved[k..], false),
        );
    }

    // Hand-written: events wait for the plan they name and go to no other; one that names
    // no plan before any plan changes nothing (which plan it is, nothing says).
    let ace = |mut v: Value, ext: Value| {
        v["provider"] = json!("aceclaw");
        v["extensions"] = ext;
        v
    };
    let plan_of = |id: &str, steps: &[&str]| {
        ace(
            json!({"event": "plan_update", "entries": steps.iter()
                .map(|c| json!({"content": c, "status": "pending"})).collect::<Vec<_>>()}),
            json!({"aceclaw.planId": id}),
        )
    };
    let step = |plan: Option<&str>, id: &str, index: u64, status: &str| {
        let mut ext = json!({"aceclaw.stepIndex": index});
        if let Some(p) = plan {
            ext["aceclaw.planId"] = json!(p);
        }
        ace(
            json!({"event": "task_update", "taskId": id, "phase": "updated",
                   "taskType": "plan_step", "status": status}),
            ext,
        )
    };
    let plan_status = |plan: &str, status: &str| {
        ace(
            json!({"event": "task_update", "taskId": plan, "phase": "updated",
                   "taskType": "plan", "status": status}),
            json!({}),
        )
    };
    let events = vec![
        ace(json!({"event": "turn_start"}), json!({})),
        step(None, "x1", 1, "completed"),
        step(Some("b"), "b1", 1, "completed"),
        plan_status("b", "completed"),
        step(Some("a"), "a2", 2, "in_progress"),
        plan_of("a", &["Read", "Write"]),
        plan_status("a", "replanned"),
        plan_of("b", &["Test"]),
        ace(json!({"event": "turn_complete"}), json!({})),
    ];
    let log = lines(&events);
    let st = reduce_lines(&log);
    let e = entries(&st);
    let plans: Vec<&Value> = e.iter().filter(|x| x["type"] == "plan").collect();
    assert_eq!(
        (plans[0]["entries"].clone(), plans[0]["status"].clone()),
        (
            json!([{"content": "Read", "status": "pending"},
                   {"content": "Write", "status": "in_progress", "stepId": "a2"}]),
            json!("replanned")
        )
    );
    assert_eq!(
        plans[0]["updatedSeq"], 7,
        "the plan's own event came after it"
    );
    assert_eq!(
        (plans[1]["entries"].clone(), plans[1]["status"].clone()),
        (
            json!([{"content": "Test", "status": "completed", "stepId": "b1"}]),
            json!("completed")
        )
    );
    assert!(plans[1].get("updatedSeq").is_none(), "made whole at once");
    let pending = &js(&st)["pending"]["sessions"][0]["plan"];
    assert_eq!(pending["status"], "completed");
    assert_eq!(pending["entries"], plans[1]["entries"]);
    assert!(js(&st)["cursor"]["sessions"][0].get("planEvents").is_none());
    for k in 0..=log.len() {
        same(
            &format!("cut after {k}"),
            &st,
            &resumed(&log, k, &log[k..], false),
        );
    }
    // A late event of an earlier plan goes to that plan, not to the latest.
    let mut more = events[..events.len() - 1].to_vec();
    more.push(step(Some("a"), "a1", 1, "completed"));
    let st = reduce(&more);
    let e = entries(&st);
    let plans: Vec<&Value> = e.iter().filter(|x| x["type"] == "plan").collect();
    assert_eq!(plans[0]["entries"][0]["status"], "completed");
    assert_eq!(plans[1]["entries"][0]["stepId"], "b1");

    // Bounded: of 70 events for a plan that never comes, the latest 64 are held.
    let mut many = vec![ace(json!({"event": "turn_start"}), json!({}))];
    many.extend((1..=70).map(|n| step(Some("z"), &format!("z{n}"), n, "completed")));
    let st = reduce(&many);
    let held = js(&st)["cursor"]["sessions"][0]["planEvents"].clone();
    let held = held.as_array().unwrap();
    assert_eq!(held.len(), MAX_HELD_PLAN_EVENTS);
    assert_eq!(held[0]["step"]["stepId"], "z7");
    assert_eq!(held[63]["step"]["stepId"], "z70");
}

#[test]
fn codex_raw_reasoning_is_kept_apart_from_the_summary() {
    // What the Codex converter makes of a reasoning item streamed with summary deltas
    // (item/reasoning/summaryTextDelta) and raw deltas (item/reasoning/textDelta, marked
    // codex.rawReasoning), then its item/completed (the summary, then the raw content).
    let codex = |mut v: Value, raw: bool| {
        v["provider"] = json!("codex");
        if raw {
            v["extensions"] = json!({"codex.rawReasoning": true});
        }
        v
    };
    let d = |t: &str, raw: bool| {
        codex(
            json!({"event": "stream_delta", "kind": "thinking", "textDelta": t,
                   "messageId": "rs1"}),
            raw,
        )
    };
    let fin = |t: &str, raw: bool| {
        codex(
            json!({"event": "text", "kind": "thinking", "text": t, "messageId": "rs1"}),
            raw,
        )
    };
    let events = vec![
        codex(json!({"event": "turn_start"}), false),
        codex(
            json!({"event": "stream_delta", "kind": "blockStart", "messageId": "rs1"}),
            false,
        ),
        d("The user ", true),
        d("**Plan**", false),
        d("wants uname.", true),
        d(" Run it.", false),
    ];
    let mid = reduce(&events);
    let e = entries(&mid);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (
            e[0]["type"].clone(),
            e[0]["content"].clone(),
            e[0]["rawContent"].clone(),
            e[0]["streaming"].clone()
        ),
        (
            json!("thought"),
            json!("**Plan** Run it."),
            json!("The user wants uname."),
            json!(true)
        )
    );
    let mut all = events.clone();
    all.push(fin("**Plan** Run it.", false));
    all.push(fin("The user wants uname.", true));
    all.push(codex(
        json!({"event": "text", "kind": "text", "text": "Linux", "messageId": "m1"}),
        false,
    ));
    all.push(codex(json!({"event": "turn_complete"}), false));
    let log = lines(&all);
    let st = reduce_lines(&log);
    let e = entries(&st);
    assert_eq!(e.len(), 2, "{e:?}");
    assert_eq!(e[0]["content"], "**Plan** Run it.");
    assert_eq!(e[0]["rawContent"], "The user wants uname.");
    assert!(e[0].get("streaming").is_none());
    assert_eq!(e[1]["content"], "Linux");
    for k in 0..=log.len() {
        same(
            &format!("cut after {k}"),
            &st,
            &resumed(&log, k, &log[k..], false),
        );
    }

    // Raw reasoning alone (OSS models): content empty, rawContent the text; the summary of
    // the same item, final or streamed after it, fills content.
    let st = reduce(&[
        d("raw ", true),
        d("only", true),
        fin("raw only", true),
        fin("A summary", false),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (e[0]["content"].clone(), e[0]["rawContent"].clone()),
        (json!("A summary"), json!("raw only"))
    );
    // Without any streaming: the two final texts, either order, are one thought.
    for order in [[false, true], [true, false]] {
        let evs: Vec<Value> = order
            .iter()
            .map(|&raw| fin(if raw { "raw" } else { "sum" }, raw))
            .collect();
        let e = entries(&reduce(&evs));
        assert_eq!(e.len(), 1, "{order:?}: {e:?}");
        assert_eq!(
            (e[0]["content"].clone(), e[0]["rawContent"].clone()),
            (json!("sum"), json!("raw"))
        );
    }
    // The mark is Codex's: another provider's thinking with it is ordinary thinking.
    let mut other = fin("thinking", true);
    other["provider"] = json!("claude");
    let e = entries(&reduce(&[other]));
    assert_eq!(e[0]["content"], "thinking");
    assert!(e[0].get("rawContent").is_none());
}

fn usage(msg: &str, input: u64) -> Value {
    json!({"event": "usage_update", "messageId": msg, "model": "m",
           "stepUsage": {"input_tokens": input, "output_tokens": 1,
                         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}})
}

#[test]
fn usage_repeated_on_every_block_of_a_message_counts_once() {
    let st = reduce(&[
        usage("m1", 10),
        usage("m1", 10),
        usage("m1", 10),
        usage("m2", 5),
    ]);
    let j = js(&st);
    assert_eq!(j["totals"]["sessions"][0]["inputTokens"], 15);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"].as_array().map(Vec::len),
        Some(0),
        "usage opens no turn"
    );
    assert_eq!(j["totals"]["sessions"][0]["context"]["usedTokens"], 6);
}

#[test]
fn reduce_and_replay_agree_on_the_context_in_use() {
    // Wire fact: the context after a request is its whole prompt (input, cache read, cache
    // creation) plus its output, which the next request reads back; claude-agent-acp's own
    // `used` counts it so (testdata/acp-claude/bash-cancelled.jsonl: 20,026 when its first
    // request starts, 20,047 when it ends). Claude's stream-json gives the parts
    // (testdata/claude/*: `message.usage` of each assistant line).
    let claude = [
        json!({"event": "session_init", "model": "opus"}),
        json!({"event": "usage_update", "messageId": "m1", "model": "opus",
               "stepUsage": {"input_tokens": 15, "cache_creation_input_tokens": 19063,
                             "cache_read_input_tokens": 0, "output_tokens": 1}}),
        json!({"event": "usage_update", "messageId": "m2", "model": "opus",
               "stepUsage": {"input_tokens": 11, "cache_creation_input_tokens": 65,
                             "cache_read_input_tokens": 19159, "output_tokens": 1}}),
        // A subagent's request is its own context.
        json!({"event": "usage_update", "messageId": "s1", "parentCallId": "A",
               "stepUsage": {"input_tokens": 5, "output_tokens": 1}, "contextTokens": 6}),
        // An API error's usage of no tokens tells nothing.
        json!({"event": "usage_update", "messageId": "m3", "stepUsage": {"input_tokens": 0, "output_tokens": 0}}),
        json!({"event": "turn_complete", "usage": {"inputTokens": 26, "outputTokens": 2},
               "modelUsage": {"opus": {"inputTokens": 26, "outputTokens": 2, "contextWindow": 1000000}}}),
    ];
    let acp = [
        json!({"event": "usage_update", "provider": "acp", "stepUsage": {}, "contextTokens": 20026, "contextWindow": 1000000}),
        json!({"event": "usage_update", "provider": "acp", "stepUsage": {}, "contextTokens": 20047}),
        json!({"event": "turn_complete", "provider": "acp", "usage": {"inputTokens": 31, "outputTokens": 36}}),
    ];
    // After a compaction (Claude's `compact_boundary`, testdata/claude-sdk/compact.jsonl), what
    // it left, until the next request.
    let compacted = [
        json!({"event": "usage_update", "messageId": "m1", "model": "opus",
               "stepUsage": {"input_tokens": 21900, "output_tokens": 16}}),
        json!({"event": "context_compaction", "trigger": "manual", "preTokens": 21916, "postTokens": 578}),
        json!({"event": "turn_complete", "usage": {"inputTokens": 0, "outputTokens": 0},
               "modelUsage": {"opus": {"inputTokens": 21900, "outputTokens": 16, "contextWindow": 1000000}}}),
    ];
    for (log, used) in [
        (&claude[..], 19236),
        (&acp[..], 20047),
        (&compacted[..], 578),
    ] {
        let c = &js(&reduce(log))["totals"]["sessions"][0]["context"];
        assert_eq!(
            (&c["usedTokens"], &c["windowTokens"]),
            (&json!(used), &json!(1000000))
        );
        let mut m = crate::replay::model::Model::new();
        for e in lines(log) {
            m.event(&serde_json::from_str(&e).unwrap());
        }
        m.finish();
        let footer = m
            .drain()
            .find_map(|b| match b {
                crate::replay::model::Block::Footer(f) => Some(f),
                _ => None,
            })
            .expect("a footer");
        assert_eq!(footer.models[0].context, Some((used, Some(1000000))));
    }
}

#[test]
fn turn_complete_totals_are_authoritative() {
    let st = reduce(&[
        text("x"),
        usage("m1", 10),
        usage("m1", 10),
        json!({"event": "turn_complete", "usage": {"inputTokens": 12, "outputTokens": 40}}),
    ]);
    let j = js(&st);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["tokens"]["inputTokens"],
        12
    );
    assert_eq!(j["totals"]["sessions"][0]["inputTokens"], 12);
    assert_eq!(j["totals"]["sessions"][0]["outputTokens"], 40);
    assert_eq!(j["totals"]["models"][0]["model"], "m");
}

#[test]
fn running_totals_of_cost_and_models_are_not_summed() {
    // Claude's total_cost_usd and modelUsage grow over the turns of one process.
    let tc = |cost: f64, input: u64| {
        json!({"event": "turn_complete", "costUsd": cost, "usage": {"inputTokens": 1, "outputTokens": 1},
               "modelUsage": {"big": {"inputTokens": input, "outputTokens": 2, "costUsd": cost, "contextWindow": 1000}}})
    };
    let st = reduce(&[
        text("a"),
        tc(0.5, 10),
        text("b"),
        tc(0.75, 25),
        text("c"),
        tc(0.25, 4),
    ]);
    let j = js(&st);
    let turns = &j["tree"]["sessions"][0]["turns"];
    assert_eq!(turns[0]["costUsd"], 0.5);
    assert_eq!(turns[1]["costUsd"], 0.25);
    assert_eq!(turns[1]["tokens"]["inputTokens"], 15);
    // the third report is lower: a new run, counted whole
    assert_eq!(turns[2]["costUsd"], 0.25);
    assert_eq!(turns[2]["tokens"]["inputTokens"], 4);
    let t = &j["totals"]["sessions"][0];
    assert_eq!(t["costUsd"], 1.0);
    assert_eq!(t["inputTokens"], 29);
    assert_eq!(t["models"][0]["costUsd"], 1.0);
    assert_eq!(t["context"]["windowTokens"], 1000);
}

#[test]
fn acp_turn_figures_are_each_prompt_s_own() {
    // Wire fact: ACP's answer to a prompt reports that prompt's usage (claude-agent-acp's
    // PromptResponse `usage`, Gemini CLI's `_meta.quota` per model). A Gemini CLI session of
    // three prompts, the second cancelled: the answers report 11,556 / 5 and then 11,649 / 12,
    // the third a request whose context already holds the first prompt, not a running total.
    let tc = |input: u64, output: u64| {
        json!({"event": "turn_complete", "provider": "acp", "subtype": "end_turn", "stopReason": "end_turn",
               "usage": {"inputTokens": input, "outputTokens": output},
               "modelUsage": {"gemini-3.8-flash": {"inputTokens": input, "outputTokens": output}}})
    };
    let log = |provider: &str| {
        let mut log = vec![
            json!({"event": "turn_start"}),
            text("Hi."),
            tc(11556, 5),
            json!({"event": "turn_start"}),
            json!({"event": "turn_complete", "subtype": "cancelled", "stopReason": "cancelled"}),
            json!({"event": "turn_start"}),
            text("Yes."),
            tc(11649, 12),
        ];
        for e in &mut log {
            e["provider"] = json!(provider);
        }
        log
    };
    let j = js(&reduce(&log("acp")));
    let turns = &j["tree"]["sessions"][0]["turns"];
    let io = |t: &Value| (t["inputTokens"].clone(), t["outputTokens"].clone());
    assert_eq!(io(&turns[0]["tokens"]), (json!(11556), json!(5)));
    assert_eq!(io(&turns[1]["tokens"]), (json!(0), json!(0)));
    assert_eq!(io(&turns[2]["tokens"]), (json!(11649), json!(12)));
    let t = &j["totals"]["sessions"][0];
    assert_eq!(io(t), (json!(23205), json!(17)));
    assert_eq!(t["models"][0]["model"], "gemini-3.8-flash");
    assert_eq!(io(&t["models"][0]), (json!(23205), json!(17)));
    assert_eq!(io(&j["totals"]["all"]), (json!(23205), json!(17)));
    // The same figures from Claude Code are running totals of its process.
    let j = js(&reduce(&log("claude")));
    assert_eq!(
        io(&j["tree"]["sessions"][0]["turns"][2]["tokens"]),
        (json!(93), json!(7))
    );
    assert_eq!(io(&j["totals"]["all"]), (json!(11649), json!(12)));
}

#[test]
fn an_acp_turn_s_own_cost_and_api_time_are_not_differences() {
    // The rule covers all of a turn_complete's figures: an own cost adds up, and so does an
    // own API time.
    let tc = |cost: f64, api: u64| json!({"event": "turn_complete", "provider": "acp", "costUsd": cost, "durationApiMs": api});
    let j = js(&reduce(&[
        text("a"),
        tc(0.5, 300),
        text("b"),
        tc(0.25, 200),
    ]));
    let turns = &j["tree"]["sessions"][0]["turns"];
    assert_eq!(
        (&turns[1]["costUsd"], &turns[1]["durationApiMs"]),
        (&json!(0.25), &json!(200))
    );
    assert_eq!(j["totals"]["all"]["costUsd"], 0.75);
    assert_eq!(j["totals"]["all"]["durationApiMs"], 500);
}

#[test]
fn session_running_token_totals_count_once() {
    // Codex repeats the same usage line; `total` is the session's running total.
    let u = |i: u64, total: u64| json!({"event": "usage_update", "stepUsage": {"input_tokens": i}, "total": {"inputTokens": total, "outputTokens": 0}, "contextWindow": 100});
    let st = reduce(&[
        json!({"event": "turn_start", "model": "gpt"}),
        u(10, 10),
        u(10, 10),
        u(7, 17),
        json!({"event": "turn_complete"}),
        json!({"event": "turn_start"}),
        u(5, 22),
        json!({"event": "turn_complete"}),
    ]);
    let j = js(&st);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["tokens"]["inputTokens"],
        17
    );
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][1]["tokens"]["inputTokens"],
        5
    );
    assert_eq!(j["totals"]["sessions"][0]["inputTokens"], 22);
    assert_eq!(
        j["totals"]["models"][0],
        json!({"model": "gpt", "inputTokens": 22, "outputTokens": 0, "cacheReadTokens": 0, "cacheCreationTokens": 0, "reasoningTokens": 0})
    );
}

#[test]
fn requests_own_costs_add_up_when_no_running_total_is_reported() {
    // OpenCode: each step's cost, one per message (a repeated line counts once, its last).
    let step = |m: &str, cost: f64| {
        json!({"event": "usage_update", "messageId": m,
               "stepUsage": {"input_tokens": 1, "output_tokens": 2, "cost": cost}})
    };
    let st = reduce(&[
        text("a"),
        step("m1", 0.25),
        step("m1", 0.5),
        step("m2", 0.125),
    ]);
    let j = js(&st);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["costUsd"], 0.625,
        "the running turn"
    );
    assert_eq!(j["totals"]["sessions"][0]["costUsd"], 0.625);
    let st = reduce(&[
        text("a"),
        step("m1", 0.5),
        step("m2", 0.125),
        json!({"event": "turn_complete"}),
        text("b"),
        step("m3", 1.0),
        json!({"event": "turn_complete"}),
    ]);
    let j = js(&st);
    let turns = &j["tree"]["sessions"][0]["turns"];
    assert_eq!(
        (&turns[0]["costUsd"], &turns[1]["costUsd"]),
        (&json!(0.625), &json!(1.0))
    );
    assert_eq!(j["totals"]["all"]["costUsd"], 1.625);
    // A running total of the cost, when reported, is the turn's cost.
    let st = reduce(&[
        text("a"),
        step("m1", 0.5),
        json!({"event": "turn_complete", "costUsd": 0.75}),
    ]);
    assert_eq!(js(&st)["totals"]["all"]["costUsd"], 0.75);
}

#[test]
fn a_subagents_usage_counts_once() {
    // Its requests belong to the turn; Claude's per-model running totals include them.
    let sub = |m: &str, n: u64| {
        json!({"event": "usage_update", "messageId": m, "parentCallId": "A",
               "stepUsage": {"input_tokens": n, "output_tokens": 1}})
    };
    let log = [
        json!({"event": "tool_invocation", "callId": "A", "kind": "think", "toolName": "Task", "input": {}}),
        usage("m1", 10),
        sub("s1", 5),
        sub("s1", 5),
        json!({"event": "subagent_complete", "callId": "A", "totalTokens": 999}),
    ];
    let st = reduce(&log);
    assert_eq!(
        js(&st)["totals"]["all"]["inputTokens"],
        15,
        "while the turn runs"
    );
    let mut done = log.to_vec();
    done.push(
        json!({"event": "turn_complete", "usage": {"inputTokens": 10, "outputTokens": 1},
                     "modelUsage": {"m": {"inputTokens": 15, "outputTokens": 2}}}),
    );
    let j = js(&reduce(&done));
    assert_eq!(j["totals"]["all"]["inputTokens"], 15);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["tokens"]["inputTokens"],
        15
    );
}

#[test]
fn the_running_turn_shows_its_estimate() {
    let st = reduce(&[text("x"), usage("m1", 10), usage("m2", 3)]);
    let j = js(&st);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["tokens"]["inputTokens"],
        13
    );
    assert_eq!(j["totals"]["sessions"][0]["inputTokens"], 13);
}

// ---------------------------------------------------------------------------------------------
// Resuming.

/// Reduces `lines[..k]`, writes the state, reads it back and feeds `rest`.
fn resumed(lines: &[String], k: usize, rest: &[String], pretty: bool) -> State {
    let mut red = Reducer::new(State::new(), None);
    feed(&mut red, &lines[..k]);
    red.state.finish();
    let snap = if pretty {
        serde_json::to_string_pretty(&red.state).unwrap()
    } else {
        serde_json::to_string(&red.state).unwrap()
    };
    let st =
        State::from_json(&snap).unwrap_or_else(|e| panic!("reading the snapshot: {e:#}\n{snap}"));
    let mut red = Reducer::new(st, None);
    feed(&mut red, rest);
    red.state.finish();
    valid(&red.state);
    red.state
}

fn same(what: &str, a: &State, b: &State) {
    if serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap() {
        return;
    }
    let (a, b) = (
        serde_json::to_string_pretty(a).unwrap(),
        serde_json::to_string_pretty(b).unwrap(),
    );
    let first = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or(0);
    let around = |s: &str| {
        s.lines()
            .skip(first.saturating_sub(5))
            .take(12)
            .collect::<Vec<_>>()
            .join("\n")
    };
    panic!(
        "{what}: states differ at line {first}\none go:\n{}\nresumed:\n{}",
        around(&a),
        around(&b)
    );
}

/// The exactly-once properties, for a log L and each split point k (with a j ≤ k of `rng`'s):
/// reduce(L) = reduce(L ++ L) = reduce(L[..k] ++ L[j..]) in one stream, and
/// reduce(L) = resume(reduce(L[..k]), M) for M the rest of the log L[k..], the whole log
/// again, and a tail L[j..] that overlaps what the snapshot applied.
fn check_splits(what: &str, lines: &[String], ks: impl Iterator<Item = usize>, rng: &mut Rng) {
    let whole = reduce_lines(lines);
    let twice: Vec<String> = lines.iter().chain(lines).cloned().collect();
    same(&format!("{what}, fed twice"), &whole, &reduce_lines(&twice));
    for k in ks {
        let j = rng.below(k as u64 + 1) as usize;
        let again: Vec<String> = lines[..k].iter().chain(&lines[j..]).cloned().collect();
        same(
            &format!("{what}, the first {k} then the rest from {j}"),
            &whole,
            &reduce_lines(&again),
        );
        same(
            &format!("{what}, rest after {k}"),
            &whole,
            &resumed(lines, k, &lines[k..], k % 2 == 0),
        );
        same(
            &format!("{what}, whole log after {k}"),
            &whole,
            &resumed(lines, k, lines, k % 2 == 1),
        );
        same(
            &format!("{what}, resumed after {k} from {j}"),
            &whole,
            &resumed(lines, k, &lines[j..], j % 2 == 0),
        );
    }
}

#[test]
fn resuming_skips_what_the_snapshot_has_seen() {
    let log = lines(&[text("a"), text("b"), json!({"event": "turn_complete"})]);
    let mut red = Reducer::new(State::new(), None);
    feed(&mut red, &log[..2]);
    let snap = serde_json::to_string(&red.state).unwrap();
    let mut red = Reducer::new(State::from_json(&snap).unwrap(), None);
    let fed: Vec<Fed> = log
        .iter()
        .map(|l| red.feed(&mut Ev::parse(l).unwrap()))
        .collect();
    assert_eq!(
        fed,
        [
            Fed::Skipped,
            Fed::Skipped,
            Fed::Applied {
                turn_complete: true
            }
        ]
    );
    assert_eq!(entries(&red.state)[0]["content"], "ab");
}

#[test]
fn an_event_applied_before_is_skipped_in_the_same_stream() {
    let mut rng = Rng(7);
    let log = random_log(&mut rng, 150);
    let once = reduce_lines(&log);
    let twice: Vec<String> = log.iter().chain(&log).cloned().collect();
    same("a log fed twice", &once, &reduce_lines(&twice));
    // The same id in another session is another event (an id made of a line's content and
    // place is the same for the same line at the same place of two logs).
    let a = r#"{"event":"turn_start","id":"h5d461ce0f0fea351-2:0","sessionId":"A"}"#;
    let b = r#"{"event":"turn_start","id":"h5d461ce0f0fea351-2:0","sessionId":"B"}"#;
    let st = reduce_lines(&[a.into(), b.into(), a.into()]);
    assert_eq!(st.events.applied, 2);
    assert_eq!(st.tree.sessions.len(), 2);
    // Events without an id are known by their `seq`: one at or before the last applied is
    // skipped.
    let mut v: Value =
        serde_json::from_str(&lines(&[json!({"event": "user_input", "text": "hi"})])[0]).unwrap();
    v.as_object_mut().unwrap().remove("id");
    let st = reduce_lines(&[v.to_string(), v.to_string()]);
    assert_eq!(entries(&st).len(), 1);
    assert_eq!(st.events.applied, 1);
    // With no `seq` either, by its text: the same line twice counts once.
    v.as_object_mut().unwrap().remove("seq");
    let st = reduce_lines(&[v.to_string(), v.to_string()]);
    assert_eq!(st.events.applied, 1);
}

/// An AceClaw bridge event: its `eventId` in `extensions`, and an `id` that differs each time
/// its line is converted at another place (`h<hash>-<line>:<index>`).
fn bridge(event_id: u64, place: u64, index: u32, body: Value) -> String {
    let mut e = body;
    let o = e.as_object_mut().unwrap();
    o.insert("id".into(), json!(format!("h0-{place}:{index}")));
    o.insert("sessionId".into(), json!("b"));
    o.insert("provider".into(), json!("aceclaw"));
    o.insert(
        "extensions".into(),
        json!({"aceclaw.planId": "p", "aceclaw.eventId": event_id}),
    );
    serde_json::to_string(&e).unwrap()
}

#[test]
fn a_session_resumes_after_the_last_event_id_it_applied() {
    // Lines 1-4, the third making two events.
    let log = [
        bridge(1, 1, 0, json!({"event": "turn_start"})),
        bridge(2, 2, 0, text("a")),
        bridge(3, 3, 0, text("b")),
        bridge(3, 3, 1, call("c1")),
        bridge(4, 4, 0, done("c1")),
    ];
    let whole = reduce_lines(&log);
    assert_eq!(js(&whole)["cursor"]["sessions"][0]["lastEventId"], json!(4));
    // Cut anywhere, within the two-event line too, and resumed with the lines from any
    // earlier line on, converted again at other places (other ids).
    for k in 0..=log.len() {
        for j in 0..=k {
            let tail: Vec<String> = log[j..]
                .iter()
                .map(|l| l.replace("\"id\":\"h0-", "\"id\":\"h1-"))
                .collect();
            same(
                &format!("cut after {k}, resumed from {j}"),
                &whole,
                &resumed(&log, k, &tail, k % 2 == 0),
            );
        }
    }
    // An event of another session, or one without a number, is not held back by the cursor.
    let mut red = Reducer::new(whole.clone(), None);
    let other = bridge(2, 9, 0, text("x")).replace("\"sessionId\":\"b\"", "\"sessionId\":\"o\"");
    assert!(matches!(
        red.feed(&mut Ev::parse(&other).unwrap()),
        Fed::Applied { .. }
    ));
    let bare = r#"{"event":"text","kind":"text","text":"y","id":"z:0","sessionId":"b"}"#;
    assert!(matches!(
        red.feed(&mut Ev::parse(bare).unwrap()),
        Fed::Applied { .. }
    ));
}

#[test]
fn at_stops_after_the_event() {
    let log = lines(&[text("a"), text("b"), text("c")]);
    let mut red = Reducer::new(State::new(), Some(2));
    let fed: Vec<Fed> = log
        .iter()
        .map(|l| red.feed(&mut Ev::parse(l).unwrap()))
        .collect();
    assert_eq!(fed[2], Fed::Stop);
    assert!(red.stopped);
    assert_eq!(entries(&red.state)[0]["content"], "ab");
    assert_eq!(red.state.last_seq, 2);
}

#[test]
fn a_state_of_another_version_is_refused() {
    let mut v = js(&State::new());
    v["version"] = json!(99);
    assert!(State::from_json(&v.to_string()).is_err());
    assert!(State::from_json("{}").is_err());
}

/// Every capture's events (`testdata/**/*.events.jsonl`, hostile inputs too, but for lines
/// the reducer cannot read and events without an `id`, which are applied each time they
/// come), split anywhere: the exactly-once properties hold.
#[test]
fn property_every_capture_split_anywhere_resumes_to_the_same_state() {
    let mut n = 0;
    for p in crate::test_support::testdata_jsonl() {
        if !p.to_string_lossy().ends_with(".events.jsonl") {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        let log: Vec<String> = text
            .lines()
            .filter(|l| Ev::parse(l).is_ok_and(|e| e.id.is_some_and(|id| !id.is_empty())))
            .map(str::to_owned)
            .collect();
        // Every split of the Claude captures; a sample of those of other providers.
        let claude = p
            .parent()
            .and_then(|d| d.file_name())
            .is_some_and(|d| d.to_string_lossy().starts_with("claude"));
        let mut rng = Rng(log.len() as u64 + 1);
        let ks: Vec<usize> = if claude {
            (0..=log.len()).collect()
        } else {
            (0..8)
                .map(|_| rng.below(log.len() as u64 + 1) as usize)
                .collect()
        };
        check_splits(&p.display().to_string(), &log, ks.into_iter(), &mut rng);
        n += 1;
    }
    assert!(n > 100, "{n} captures found");
}

/// A random, mostly plausible log: sessions named late or never, turns with and without
/// turn_start, streamed and final text, nested calls, permissions, usage, running totals.
fn random_log(rng: &mut Rng, len: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut running: Vec<String> = Vec::new();
    let mut agents: Vec<String> = Vec::new();
    let mut requests: Vec<String> = Vec::new();
    let mut cost = 0.0f64;
    let mut total = 0u64;
    let mut calls = 0;
    let sessions = ["s1", "s2", ""];
    for seq in 1..=len as u64 {
        let session = *rng.pick(&sessions);
        let parent = if !agents.is_empty() && rng.below(3) == 0 {
            Some(rng.pick(&agents).clone())
        } else {
            None
        };
        let msg = format!("m{}", rng.below(4));
        let mut e = match rng.below(22) {
            0 => {
                json!({"event": "session_init", "model": *rng.pick(&["a", "b"]), "permissionMode": *rng.pick(&["default", "plan"])})
            }
            1 => json!({"event": "user_input", "text": format!("prompt {seq}")}),
            2 => json!({"event": "turn_start", "turnId": format!("t{seq}")}),
            3 | 4 => {
                json!({"event": "stream_delta", "kind": *rng.pick(&["text", "thinking"]), "textDelta": *rng.pick(&["Hel", "Hello", "lo", ".", " world"])})
            }
            5 => json!({"event": "stream_delta", "kind": "messageStart", "messageId": msg}),
            6 => {
                json!({"event": "text", "kind": *rng.pick(&["text", "thinking", "plan"]), "text": *rng.pick(&["Hello", "Hello world", "x"]), "messageId": msg})
            }
            7 | 8 => {
                calls += 1;
                let id = format!("c{calls}");
                running.push(id.clone());
                if rng.below(3) == 0 {
                    agents.push(id.clone());
                }
                json!({"event": "tool_invocation", "callId": id, "kind": *rng.pick(&["execute", "read", "ask"]), "toolName": "T", "input": {"n": seq}})
            }
            9 | 10 if !running.is_empty() => {
                let i = rng.below(running.len() as u64) as usize;
                let id = running.remove(i);
                json!({"event": "tool_completion", "callId": id, "status": *rng.pick(&["completed", "failed", "cancelled"]), "output": seq, "timestamp": "2026-01-01T00:00:01Z"})
            }
            11 if !running.is_empty() => {
                let id = rng.pick(&running).clone();
                requests.push(format!("r{seq}"));
                json!({"event": "permission_request", "requestId": format!("r{seq}"), "toolName": "T", "toolKind": "edit", "toolInput": {}, "toolUseId": id})
            }
            12 if !requests.is_empty() => {
                let r = requests.remove(0);
                json!({"event": "permission_response", "requestId": r, "decision": *rng.pick(&["allow", "deny", "cancelled"]), "allowed": rng.below(2) == 0})
            }
            13 => {
                json!({"event": "usage_update", "messageId": msg, "stepUsage": {"input_tokens": rng.below(100), "output_tokens": 1}})
            }
            14 => {
                total += rng.below(50);
                json!({"event": "usage_update", "stepUsage": {}, "total": {"inputTokens": total, "outputTokens": 1}, "contextWindow": 1000})
            }
            15 => {
                cost += rng.below(1000) as f64 / 7919.0;
                if rng.below(6) == 0 {
                    cost /= 3.0;
                }
                json!({"event": "turn_complete", "costUsd": cost, "isError": rng.below(5) == 0,
                       "usage": {"inputTokens": rng.below(9), "outputTokens": 2},
                       "modelUsage": {"a": {"inputTokens": (cost * 1000.0) as u64, "outputTokens": 1, "costUsd": cost}}})
            }
            16 => json!({"event": "turn_complete"}),
            17 => {
                json!({"event": "plan_update", "entries": [{"content": "x", "status": *rng.pick(&["pending", "completed"])}]})
            }
            18 => {
                json!({"event": "session_mode", "currentModeId": *rng.pick(&["default", "plan", "acceptEdits"]), "availableModes": []})
            }
            19 => {
                json!({"event": "session_status", "status": *rng.pick(&["interrupted", "requesting", "idle"])})
            }
            20 if !running.is_empty() => {
                let id = rng.pick(&running).clone();
                json!({"event": "task_update", "taskId": format!("k{}", rng.below(3)), "phase": "progress", "callId": id})
            }
            _ => {
                json!({"event": *rng.pick(&["notice", "hook", "error", "context_compaction", "file_change", "available_commands"]),
                        "subtype": "x", "phase": "response", "hookId": "h", "message": "m", "severity": "warning",
                        "trigger": "auto", "postTokens": 9, "path": "p", "changeKind": "update", "cumulative": rng.below(2) == 0,
                        "availableCommands": [seq]})
            }
        };
        let o = e.as_object_mut().unwrap();
        o.insert("id".into(), json!(format!("e{seq}")));
        o.insert("seq".into(), json!(seq));
        o.insert("sessionId".into(), json!(session));
        if let Some(p) = parent {
            o.insert("parentCallId".into(), json!(p));
        }
        out.push(serde_json::to_string(&e).unwrap());
    }
    out
}

#[test]
fn property_random_logs_split_anywhere_resume_to_the_same_state() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..60 {
        let len = 20 + rng.below(120) as usize;
        let log = random_log(&mut rng, len);
        let ks: Vec<usize> = (0..6).map(|_| rng.below(len as u64 + 1) as usize).collect();
        check_splits(
            &format!("random log {round}"),
            &log,
            ks.into_iter(),
            &mut rng,
        );
    }
}

#[test]
fn reducing_the_same_events_twice_with_a_snapshot_is_idempotent() {
    let mut rng = Rng(42);
    let log = random_log(&mut rng, 200);
    let once = reduce_lines(&log);
    let again = resumed(&log, log.len(), &log, false);
    same("log applied twice", &once, &again);
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
fn a_line_is_read_as_an_event_when_its_event_member_is_a_string() {
    use super::{kind, Kind};
    use crate::detect::Probe;
    let cases = [
        (r#"{"event":"text","text":"hi"}"#, Some(true)),
        (r#"{"seq":1, "event" : "text"}"#, Some(true)),
        (r#"{"ev\u0065nt":"text"}"#, Some(true)),
        (
            r#"{"type":"stream_event","event":{"type":"message_start"}}"#,
            Some(false),
        ),
        (
            r#"{"type":"assistant","text":"say \"event\" twice"}"#,
            Some(false),
        ),
        (r#"{"type":"x","data":{"event":"y"}}"#, Some(false)),
        (r#"{"type":"system","subtype":"init"}"#, Some(false)),
        // What the converter reports: not an object (an array serde would read as the
        // probe's fields), not JSON, not UTF-8.
        (r#"[null,null,null]"#, None),
        (r#"{"type":"#, None),
        ("{\"type\":\"\u{fffd}\"}", Some(false)),
    ];
    for (line, event) in cases {
        let got = match kind(line.as_bytes(), &mut Probe::default()) {
            Kind::Event(_) => Some(true),
            Kind::Provider(..) => Some(false),
            Kind::Unreadable => None,
        };
        assert_eq!(got, event, "{line}");
    }
    assert!(matches!(
        kind(b"{\"type\":\"\xff\"}", &mut Probe::default()),
        Kind::Unreadable
    ));
}

#[test]
fn a_turn_an_interrupt_or_a_cancel_ended_is_cancelled_on_every_provider() {
    // Recorded: Claude's interrupt (`error_during_execution`, isError, stopReason
    // `interrupted`), Codex's interrupted turn, ACP's cancelled prompt; each then a normal turn
    // but Claude's.
    for (capture, statuses) in [
        (
            "claude-sdk/interrupt-in-subagent.events.jsonl",
            &["cancelled"][..],
        ),
        (
            "codex-app-server/interrupt-parallel-approved.events.jsonl",
            &["cancelled", "completed"][..],
        ),
        (
            "acp-gemini/cancel-parallel-then-prompt.events.jsonl",
            &["cancelled", "completed"][..],
        ),
    ] {
        let j = js(&reduce_capture(capture));
        let turns = j["tree"]["sessions"][0]["turns"].as_array().unwrap();
        let got: Vec<&str> = turns
            .iter()
            .map(|t| t["status"].as_str().unwrap())
            .collect();
        assert_eq!(got, statuses, "{capture}");
        assert_eq!(turns[0]["interrupted"], true, "{capture}");
        assert_eq!(j["totals"]["all"]["failedTurns"], 0, "{capture}");
    }
    // A failure that no interrupt caused is still a failure.
    let st = reduce(&[
        text("x"),
        json!({"event": "turn_complete", "isError": true, "subtype": "error_during_execution"}),
    ]);
    let j = js(&st);
    assert_eq!(j["tree"]["sessions"][0]["turns"][0]["status"], "failed");
    assert_eq!(j["totals"]["all"]["failedTurns"], 1);
}

#[test]
fn api_time_is_a_running_total_of_the_run() {
    // Recorded: Claude Code reports 37 ms, then 73 ms (= 37 + 36) for the second prompt.
    let j = js(&reduce_capture("claude-sdk/two-prompts.events.jsonl"));
    let turns = &j["tree"]["sessions"][0]["turns"];
    assert_eq!(turns[0]["durationApiMs"], 37);
    assert_eq!(turns[1]["durationApiMs"], 36);
    assert_eq!(j["totals"]["all"]["durationApiMs"], 73);
    // A lower report starts a new run, counted whole.
    let tc = |ms: u64| json!({"event": "turn_complete", "durationApiMs": ms});
    let j = js(&reduce(&[
        text("a"),
        tc(50),
        text("b"),
        tc(80),
        text("c"),
        tc(20),
    ]));
    let own: Vec<&Value> = (0..3)
        .map(|i| &j["tree"]["sessions"][0]["turns"][i]["durationApiMs"])
        .collect();
    assert_eq!(own, [&json!(50), &json!(30), &json!(20)]);
    assert_eq!(j["totals"]["all"]["durationApiMs"], 100);
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
