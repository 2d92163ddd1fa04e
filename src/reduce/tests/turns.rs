//! Turns and sessions: inferred and named turns, failures and cancels, sessions named late or
//! never.

use super::*;

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

/// `--turn-ids` names the turns `reduce` finds: on every capture, the events of one of
/// `reduce`'s turns (from its start to its end, or to the session's next turn) all carry one
/// `turnId`, and two turns of a session never share one.
#[test]
fn turn_ids_name_the_turns_reduce_finds_in_every_capture() {
    let mut opts = crate::convert::Options::for_tests(64 << 20);
    opts.turn_ids = true;
    let mut bad = Vec::new();
    let mut named = 0;
    for p in crate::test_support::testdata_jsonl() {
        let name = p.to_string_lossy().into_owned();
        // (InsightsEvents, which pass through as they are, and broken lines are left out.)
        let events_only = [
            "/invalid/",
            "/malformed/",
            "/validate/",
            "/reduce/",
            "/replay/",
        ];
        if name.ends_with(".events.jsonl") || events_only.iter().any(|d| name.contains(d)) {
            continue;
        }
        let Ok(input) = std::fs::read_to_string(&p) else {
            continue;
        };
        let lines: Vec<String> = crate::test_support::convert_text(&opts, &input)
            .into_iter()
            .filter(|l| Ev::parse(l).is_ok() && serde_json::from_str::<Value>(l).is_ok())
            .collect();
        let mut red = Reducer::new(State::new(), None);
        feed(&mut red, &lines);
        red.state.finish();
        let events: Vec<Value> = lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for s in &red.state.tree.sessions {
            let mut seen: Vec<&str> = Vec::new();
            for (k, t) in s.turns.iter().enumerate() {
                // (A turn another's start ends has that start as its end.)
                let next = s.turns.get(k + 1).map_or(u64::MAX, |n| n.start_seq - 1);
                let end = t.end_seq.unwrap_or(u64::MAX).min(next);
                let ids: std::collections::BTreeSet<&str> = events
                    .iter()
                    .filter(|e| e["sessionId"] == s.session_id.as_str())
                    .filter(|e| (t.start_seq..=end).contains(&e["seq"].as_u64().unwrap_or(0)))
                    .map(|e| e["turnId"].as_str().unwrap_or("(none)"))
                    .collect();
                let short = name.rsplit("/testdata/").next().unwrap_or(&name);
                match ids.iter().next() {
                    Some(id) if ids.len() == 1 && *id != "(none)" => {
                        if seen.contains(id) {
                            bad.push(format!("{short}: turn {} has turn {id}'s id", t.index));
                        }
                        seen.push(id);
                        named += 1;
                    }
                    // (No event of the session there: the turn's events have none, `reduce`
                    // placed them.)
                    None => {}
                    _ => bad.push(format!(
                        "{short}: turn {} (seq {}..={end}) named {ids:?}",
                        t.index, t.start_seq
                    )),
                }
            }
        }
    }
    assert!(named > 100, "only {named} turns named");
    assert!(bad.is_empty(), "{} turns:\n{}", bad.len(), bad.join("\n"));
}
