//! ACP and Gemini CLI on real captures: permissions answered each way, diffs, interrupts,
//! deltas without a final text.

use crate::util::events_of;
use serde_json::Value;

fn first<'a>(evs: &'a [Value], kind: &str) -> &'a Value {
    evs.iter()
        .find(|e| e["event"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

#[test]
fn permissions_answered_each_way() {
    for (case, decision, allowed) in [
        ("write-allowed", "allow", true),
        ("write-allow-always", "allow_always", true),
        ("write-denied", "deny", false),
        ("write-cancelled", "cancelled", false),
    ] {
        let evs = events_of(&format!("testdata/acp-claude/{case}.jsonl"));
        let req = first(&evs, "permission_request");
        let resp = first(&evs, "permission_response");
        assert_eq!(req["requestId"], resp["requestId"], "{case}");
        assert_eq!(resp["decision"], decision, "{case}");
        assert_eq!(resp["allowed"], allowed, "{case}");
        let kinds: Vec<&str> = req["options"]
            .as_array()
            .expect("options")
            .iter()
            .filter_map(|o| o["kind"].as_str())
            .collect();
        assert!(
            kinds.contains(&"allow_once") && kinds.contains(&"reject_once"),
            "{case}: {kinds:?}"
        );
    }
}

#[test]
fn a_written_file_has_a_diff() {
    let evs = events_of("testdata/acp-gemini/write-allowed.jsonl");
    let fc = first(&evs, "file_change");
    assert_eq!(fc["changeKind"], "add");
    assert!(fc["diff"].as_str().unwrap().contains("+# Notes"), "{fc}");
}

#[test]
fn cancel_interrupts_and_the_turn_ends_cancelled() {
    for path in [
        "testdata/acp-gemini/interrupt.jsonl",
        "testdata/acp-claude/interrupt.jsonl",
    ] {
        let evs = events_of(path);
        assert!(
            evs.iter()
                .any(|e| e["event"] == "session_status" && e["status"] == "interrupted"),
            "{path}"
        );
        assert_eq!(
            first(&evs, "turn_complete")["stopReason"],
            "cancelled",
            "{path}"
        );
    }
}

#[test]
fn a_plan_is_a_plan_update() {
    let evs = events_of("testdata/acp-claude/plan-todowrite.jsonl");
    let plan = first(&evs, "plan_update");
    assert!(plan["entries"].as_array().is_some_and(|e| !e.is_empty()));
}

#[test]
fn gemini_text_arrives_as_deltas_and_tools_complete() {
    let evs = events_of("testdata/gemini/failing-tool.jsonl");
    assert!(evs
        .iter()
        .any(|e| e["event"] == "stream_delta" && e["kind"] == "text"));
    assert_eq!(first(&evs, "tool_invocation")["kind"], "execute");
    assert_eq!(
        first(&evs, "tool_completion")["callId"],
        first(&evs, "tool_invocation")["callId"]
    );
    let evs = events_of("testdata/gemini/api-error.jsonl");
    assert_eq!(first(&evs, "turn_complete")["isError"], true);
}
