//! The Codex app-server event reference (`codex-app-server-event-reference.md`), rows 4–8 and
//! 10 of issue 42, on a small input written from the reference and the 0.169 schema
//! (`testdata/codex-app-server/reference/resume-statuses.jsonl`): statuses as the reference
//! spells them, a resume answer's history, `turn/started` ending the plan, `<proposed_plan>`
//! blocks, a client's `turn/start` overrides, and terminal input.

use crate::util::run;
use serde_json::Value;

const INPUT: &str = "testdata/codex-app-server/reference/resume-statuses.jsonl";

fn events() -> Vec<Value> {
    let out = run(&["--no-timestamp", INPUT], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect()
}

fn state() -> Value {
    let out = run(&["reduce", INPUT], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("state JSON")
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
