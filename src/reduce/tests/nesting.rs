//! Parallel calls, subagents nested under their call, and AceClaw's positional subagents and plan
//! steps.

use super::*;

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
