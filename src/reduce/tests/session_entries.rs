//! Rules 7, 8, 10, 11 and 12: meta, prompt, plan, mode and command entries.

use super::*;

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

#[test]
fn a_compaction_s_summary_is_the_synthetic_text_right_after_it() {
    // testdata/claude-sdk/compact.jsonl (Claude Code 2.1.197, `/compact`): line 19 the
    // compact_boundary (manual, 21916 -> 578 tokens), line 20 the CLI's summary message
    // (`isSynthetic`, the uuid the boundary's `preserved_segment.anchor_uuid` names), line 21
    // its "Compacted" notice, synthetic too.
    let st = reduce_capture("claude-sdk/compact.events.jsonl");
    let e = entries(&st);
    let c: Vec<&Value> = e.iter().filter(|e| e["type"] == "compaction").collect();
    assert_eq!(c.len(), 1);
    assert_eq!(
        (&c[0]["trigger"], &c[0]["preTokens"], &c[0]["postTokens"]),
        (&json!("manual"), &json!(21916), &json!(578))
    );
    let summary = c[0]["summary"].as_str().expect("a summary");
    assert!(summary.starts_with(
        "This session is being continued from a previous conversation that ran out of context."
    ));
    assert!(summary.contains("\n\nSummary: the user asked for a greeting.\n\n"));
    // The summary is also the message the model is given.
    assert!(e
        .iter()
        .any(|m| m["type"] == "message" && m["content"] == summary && m["synthetic"] == true));

    // Only right after it: not after another entry, not a prompt, not a second text.
    let comp = json!({"event": "context_compaction", "trigger": "auto", "preTokens": 9});
    let synthetic = |t: &str| json!({"event": "user_input", "text": t, "isSynthetic": true});
    let st = reduce(&[
        json!({"event": "user_input", "text": "go"}),
        comp.clone(),
        json!({"event": "user_input", "text": "a prompt"}),
        comp.clone(),
        call("c1"),
        synthetic("after a call"),
        comp,
        synthetic("the summary"),
        synthetic("Compacted"),
    ]);
    let summaries: Vec<Value> = entries(&st)
        .iter()
        .filter(|e| e["type"] == "compaction")
        .map(|e| e["summary"].clone())
        .collect();
    assert_eq!(summaries, [Value::Null, Value::Null, json!("the summary")]);
}
