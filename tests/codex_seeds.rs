//! The Codex app-server event reference (`codex-app-server-event-reference.md`), on small
//! inputs written from the reference and the 0.169 schema, and on recordings where one has the
//! method:
//! * `testdata/codex-app-server/reference/resume-statuses.jsonl`: rows 4–8 and 10 of issue 42,
//!   statuses as the reference spells them, a resume answer's history, `turn/started` ending the
//!   plan, `<proposed_plan>` blocks, a client's `turn/start` overrides, and terminal input;
//! * `testdata/codex-app-server/reference/items-and-questions.jsonl`: the streaming methods and
//!   item types no recording has (plan updates, reasoning parts, output deltas, MCP progress,
//!   web search, image view, review mode, plan items, compaction), a `requestUserInput`
//!   question and its answer, and a thread that is unloaded.
//!
//! What each test expects was written from the wire (the facts files beside the inputs say it
//! line by line) before the output was looked at.

use crate::util::{entries, events_of, of_line, reduce_of};
use serde_json::Value;

const INPUT: &str = "testdata/codex-app-server/reference/resume-statuses.jsonl";
const ITEMS: &str = "testdata/codex-app-server/reference/items-and-questions.jsonl";

fn events() -> Vec<Value> {
    events_of(INPUT)
}

fn state() -> Value {
    reduce_of(INPUT, None)
}

#[test]
fn codex_reference_history_turns_keep_their_ids_and_ends() {
    let evs = events();
    let ends: Vec<_> = evs
        .iter()
        .filter(|e| e["event"] == "turn_complete")
        .map(|e| (e["turnId"].clone(), e["subtype"].clone()))
        .collect();
    assert_eq!(ends[0], (Value::from("a"), Value::from("interrupted")));
    assert_eq!(ends[1], (Value::from("b"), Value::from("error_api")));
    let turns = &state()["tree"]["sessions"][0]["turns"];
    let got: Vec<_> = turns
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["turnId"].as_str().unwrap_or("").to_owned(),
                t["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want = [
        ("a", "cancelled"),
        ("b", "failed"),
        ("c", "failed"),
        ("d", "cancelled"),
    ];
    assert_eq!(
        got,
        want.map(|(a, b)| (a.to_owned(), b.to_owned())),
        "rows 4 and 5: statuses as the reference spells them, history turns with ids"
    );
}

#[test]
fn codex_reference_turn_start_overrides_plan_block_and_terminal_input() {
    let evs = events();
    // Row 8: the client's turn/start sets the model, effort and collaboration mode.
    let init = evs
        .iter()
        .find(|e| e["event"] == "session_init" && e["extensions"]["codex.turnStart"] == true)
        .expect("a session_init from turn/start");
    assert_eq!(
        (&init["model"], &init["reasoningEffort"]),
        (&"o3".into(), &"high".into())
    );
    assert!(evs
        .iter()
        .any(|e| e["event"] == "session_mode" && e["currentModeId"] == "plan"));
    let st = state();
    let turns = &st["tree"]["sessions"][0]["turns"];
    assert_eq!(turns[2]["model"], "o3");
    assert_eq!(st["pending"]["sessions"][0]["mode"], "plan");
    // Row 6: turn/started of turn d ended turn c's plan.
    assert!(st["pending"]["sessions"][0].get("plan").is_none());
    // Row 7: the plan block is out of the message.
    let text: String = evs
        .iter()
        .filter(|e| e["event"] == "stream_delta" && e["kind"] == "text")
        .filter_map(|e| e["textDelta"].as_str())
        .collect();
    assert_eq!(text, "Here:\nDone.");
    // Row 10: stdin sent is no longer waiting.
    let st: Vec<_> = evs
        .iter()
        .filter(|e| e["event"] == "tool_update")
        .map(|e| e["status"].clone())
        .collect();
    assert_eq!(st, [Value::from("waitingForInput"), Value::from("running")]);
}

/// `(content, status)` of each entry of a plan.
fn steps(plan: &Value) -> Vec<(String, String)> {
    plan["entries"]
        .as_array()
        .expect("plan entries")
        .iter()
        .map(|s| {
            (
                s["content"].as_str().unwrap_or("").to_owned(),
                s["status"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn codex_reference_plan_updates_give_the_steps_and_the_current_plan() {
    // `turn/plan/updated` in the reference's spelling (written input, line 3)…
    let evs = events_of(ITEMS);
    let plan = of_line(&evs, 3);
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0]["event"], "plan_update");
    assert_eq!(plan[0]["explanation"], "Three steps.");
    assert_eq!(
        steps(plan[0]),
        pairs(&[
            ("look", "completed"),
            ("ask", "in_progress"),
            ("finish", "pending")
        ])
    );
    // …and in the 0.169 schema's, on a recording (`plan.jsonl`, lines 18 and 21): two updates
    // of one plan; the latest is the current plan.
    let rec = "testdata/codex-app-server/plan.jsonl";
    let evs = events_of(rec);
    let plans: Vec<&Value> = evs.iter().filter(|e| e["event"] == "plan_update").collect();
    assert_eq!(
        plans.iter().map(|p| p["line"].clone()).collect::<Vec<_>>(),
        [Value::from(18), Value::from(21)]
    );
    assert_eq!(plans[0]["explanation"], "Two steps to release.");
    assert_eq!(
        steps(plans[0]),
        pairs(&[
            ("Bump the version", "in_progress"),
            ("Tag the release", "pending")
        ])
    );
    let latest = pairs(&[
        ("Bump the version", "completed"),
        ("Tag the release", "in_progress"),
    ]);
    assert_eq!(steps(plans[1]), latest);
    let st = reduce_of(rec, Some(21));
    assert_eq!(steps(&st["pending"]["sessions"][0]["plan"]), latest);
    assert_eq!(
        entries(&st, "plan").len(),
        2,
        "each plan is an entry (RULE 10)"
    );
}

#[test]
fn codex_reference_summary_parts_break_the_reasoning_into_one_thought() {
    // Lines 4-8: reasoning r1 in two summary parts; `summaryPartAdded` (line 6) opens the
    // second, index 1.
    let evs = events_of(ITEMS);
    let got: Vec<(Value, Value, Value)> = (4..=8)
        .flat_map(|l| of_line(&evs, l))
        .map(|e| {
            (
                e["kind"].clone(),
                e["blockIndex"].clone(),
                e["messageId"].clone(),
            )
        })
        .collect();
    let r1 = Value::from("r1");
    assert_eq!(
        got,
        [
            ("blockStart".into(), Value::Null, r1.clone()),
            ("thinking".into(), 0.into(), r1.clone()),
            ("blockStart".into(), 1.into(), r1.clone()),
            ("thinking".into(), 1.into(), r1.clone()),
            ("thinking".into(), Value::Null, r1.clone()),
        ]
    );
    let done = of_line(&evs, 8);
    assert_eq!(done[0]["event"], "text");
    assert_eq!(done[0]["text"], "**Look** first.\n\nThen ask.");
    // One thought, the parts apart.
    let st = reduce_of(ITEMS, None);
    let thoughts = entries(&st, "thought");
    assert_eq!(thoughts.len(), 1);
    assert_eq!(thoughts[0]["content"], "**Look** first.\n\nThen ask.");
    // On a recording (`thinking-tool.jsonl`, line 15): the first part, index 0.
    let evs = events_of("testdata/codex-app-server/thinking-tool.jsonl");
    let part = of_line(&evs, 15);
    assert_eq!(
        (
            &part[0]["kind"],
            &part[0]["blockIndex"],
            &part[0]["extensions"]["block_type"]
        ),
        (&"blockStart".into(), &0.into(), &"thinking".into())
    );
}

#[test]
fn codex_reference_output_deltas_are_the_call_s_output_streamed() {
    // Lines 10-11: the command's output streamed; line 12 completes it with the whole.
    let evs = events_of(ITEMS);
    let deltas: Vec<&Value> = evs
        .iter()
        .filter(|e| e["event"] == "stream_delta" && e["kind"] == "toolOutput")
        .collect();
    let got: Vec<(Value, Value)> = deltas
        .iter()
        .map(|e| (e["callId"].clone(), e["textDelta"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("x1".into(), "a.txt\n".into()),
            ("x1".into(), "b.txt\n".into()),
            (
                "p1".into(),
                "Success. Updated the following files:\nM /w/a.txt\n".into()
            ),
        ]
    );
    let done = of_line(&evs, 12);
    assert_eq!(done[0]["event"], "tool_completion");
    assert_eq!(done[0]["output"]["stdout"], "a.txt\nb.txt\n");
    // In the state: the calls' output, not a message.
    let st = reduce_of(ITEMS, None);
    let x1 = entries(&st, "tool_call")
        .into_iter()
        .find(|e| e["callId"] == "x1")
        .expect("x1");
    assert_eq!(x1["output"]["stdout"], "a.txt\nb.txt\n");
    assert!(entries(&st, "message")
        .iter()
        .all(|m| !m["content"].as_str().unwrap_or("").contains("a.txt")));
}

#[test]
fn codex_reference_mcp_progress_updates_the_running_call() {
    let evs = events_of(ITEMS);
    let p = of_line(&evs, 17);
    assert_eq!(
        (
            &p[0]["event"],
            &p[0]["callId"],
            &p[0]["status"],
            &p[0]["output"]
        ),
        (
            &"tool_update".into(),
            &"m1".into(),
            &"progress".into(),
            &"2 of 5 sources".into()
        )
    );
    // Still running after its progress; completed with its result.
    let st = reduce_of(ITEMS, Some(17));
    let tools = &st["pending"]["sessions"][0]["tools"];
    assert_eq!(tools.as_array().map(Vec::len), Some(1));
    assert_eq!(tools[0]["callId"], "m1");
    let st = reduce_of(ITEMS, None);
    let m1 = entries(&st, "tool_call")
        .into_iter()
        .find(|e| e["callId"] == "m1")
        .expect("m1");
    assert_eq!(
        (
            &m1["status"],
            &m1["kind"],
            &m1["output"]["content"][0]["text"]
        ),
        (&"completed".into(), &"mcp".into(), &"found".into())
    );
}

#[test]
fn codex_reference_item_types_web_image_review_plan_and_compaction() {
    let evs = events_of(ITEMS);
    let first = |line| of_line(&evs, line)[0].clone();
    // webSearch (19-20): a browse call that completes with its query.
    let (w, wd) = (first(19), first(20));
    assert_eq!(
        (&w["event"], &w["toolName"], &w["kind"]),
        (
            &"tool_invocation".into(),
            &"WebSearch".into(),
            &"browse".into()
        )
    );
    assert_eq!(
        (&wd["status"], &wd["output"]["query"]),
        (&"completed".into(), &"serde borrow".into())
    );
    // imageView (21-22): a read of the image's path.
    let (i, id) = (first(21), first(22));
    assert_eq!(
        (&i["toolName"], &i["kind"], &i["locations"][0]),
        (&"ImageView".into(), &"read".into(), &"/w/shot.png".into())
    );
    assert_eq!(id["status"], "completed");
    // plan (25): the plan's text, kind plan.
    let pl = first(25);
    assert_eq!(
        (&pl["event"], &pl["kind"], &pl["text"]),
        (&"text".into(), &"plan".into(), &"1. look\n2. ask".into())
    );
    // Review mode (28, 31): the session's mode, and back.
    let (on, off) = (first(28), first(31));
    assert_eq!(
        (
            &on["event"],
            &on["currentModeId"],
            &on["extensions"]["codex.review"]
        ),
        (
            &"session_mode".into(),
            &"review".into(),
            &"current changes".into()
        )
    );
    assert_eq!(off["currentModeId"], "default");
    // contextCompaction (29-30): compacting while it runs, then one compaction.
    let (c, cd) = (first(29), first(30));
    assert_eq!(
        (&c["event"], &c["status"]),
        (&"session_status".into(), &"compacting".into())
    );
    assert_eq!(
        (&cd["event"], &cd["trigger"]),
        (&"context_compaction".into(), &"auto".into())
    );
    let st = reduce_of(ITEMS, None);
    let calls: Vec<(Value, Value)> = entries(&st, "tool_call")
        .iter()
        .map(|e| (e["toolName"].clone(), e["status"].clone()))
        .collect();
    assert!(calls.contains(&("WebSearch".into(), "completed".into())));
    assert!(calls.contains(&("ImageView".into(), "completed".into())));
    let plan_msgs: Vec<&Value> = entries(&st, "message")
        .into_iter()
        .filter(|m| m["kind"] == "plan")
        .collect();
    assert_eq!(plan_msgs.len(), 1);
    let compactions = entries(&st, "compaction");
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0]["turn"], 2);
    let modes = entries(&st, "mode_change");
    assert_eq!(
        (&modes[0]["previousModeId"], &modes[0]["newModeId"]),
        (&"review".into(), &"default".into())
    );
    assert_eq!(st["pending"]["sessions"][0]["mode"], "default");
}

#[test]
fn codex_reference_a_user_input_request_is_a_question_until_its_answers() {
    // Line 23: `item/tool/requestUserInput`, request id 9, item q1, one question.
    let evs = events_of(ITEMS);
    let q = of_line(&evs, 23);
    assert_eq!(q.len(), 1);
    let q = q[0];
    assert_eq!(
        (
            &q["event"],
            &q["requestId"],
            &q["toolName"],
            &q["toolKind"],
            &q["toolUseId"]
        ),
        (
            &"permission_request".into(),
            &"9".into(),
            &"AskUserQuestion".into(),
            &"ask".into(),
            &"q1".into()
        )
    );
    let question = &q["toolInput"]["questions"][0];
    assert_eq!(
        (&question["id"], &question["options"][1]["label"]),
        (&"color".into(), &"blue".into())
    );
    // Line 24: the client's `{answers}`.
    let a = of_line(&evs, 24);
    assert_eq!(
        (&a[0]["event"], &a[0]["requestId"], &a[0]["decision"]),
        (&"permission_response".into(), &"9".into(), &"allow".into())
    );
    assert_eq!(
        a[0]["updatedInput"]["answers"]["color"]["answers"],
        serde_json::json!(["blue"])
    );
    // Pending as a question (and a request) until answered, then neither.
    let st = reduce_of(ITEMS, Some(23));
    let p = &st["pending"]["sessions"][0];
    assert_eq!(
        (&p["questions"][0]["callId"], &p["questions"][0]["kind"]),
        (&"q1".into(), &"ask".into())
    );
    assert_eq!(p["permissions"][0]["requestId"], "9");
    let st = reduce_of(ITEMS, Some(24));
    let p = &st["pending"]["sessions"][0];
    assert_eq!(p["questions"], serde_json::json!([]));
    assert_eq!(p["permissions"], serde_json::json!([]));
    let req = entries(&st, "permission_request");
    assert_eq!(req[0]["response"]["decision"], "allow");
}

#[test]
fn codex_reference_an_unloaded_thread_has_ended() {
    // Line 33: thread status notLoaded.
    let evs = events_of(ITEMS);
    let last = evs.last().expect("events");
    assert_eq!(
        (&last["line"], &last["event"], &last["status"]),
        (&33.into(), &"session_status".into(), &"ended".into())
    );
    let st = reduce_of(ITEMS, None);
    assert_eq!(st["tree"]["sessions"][0]["status"], "ended");
}
