//! The AceClaw execution web event schema (`execution-web-event-schema.md`) on a small input
//! written from it and from `../shared/formats/aceclaw.md`
//! (`testdata/aceclaw/reference/bridge-lifecycle.jsonl`, the bridge's envelopes: the lifecycle
//! events are the browser's): the session and turn lifecycle events, compaction and heartbeat,
//! and notifications of the namespaces reserved for later (`stream.swarm_*`, `stream.worker_*`).
//! No AceClaw recording exists (the daemon needs a model provider).
//!
//! What each test expects was written from the wire (the facts file beside the input says it
//! line by line) before the output was looked at.

use crate::util::{entries, events_of, of_line, reduce_of, run};
use serde_json::{json, Value};

const INPUT: &str = "testdata/aceclaw/reference/bridge-lifecycle.jsonl";
const SESSION: &str = "c0ffee00-1111-4222-8333-444455556666";

/// The one event of wire line `line`, besides the whole text of a message the line ends
/// (`text`, inferred: the adapter contract's `assistant.message`).
fn one(evs: &[Value], line: u64) -> Value {
    let e: Vec<&Value> = of_line(evs, line)
        .into_iter()
        .filter(|e| !(e["event"] == "text" && e["extensions"]["insights.inferred"] == true))
        .collect();
    assert_eq!(e.len(), 1, "line {line}: {e:?}");
    e[0].clone()
}

#[test]
fn aceclaw_session_and_turn_lifecycle_events_start_and_end_them() {
    let evs = events_of(INPUT);
    // Line 1: stream.session_started {sessionId, model, timestamp, projectPath}.
    let init = one(&evs, 1);
    assert_eq!(
        (
            &init["event"],
            &init["sessionId"],
            &init["model"],
            &init["cwd"]
        ),
        (
            &"session_init".into(),
            &SESSION.into(),
            &"claude-sonnet-4-5".into(),
            &"/home/dev/work".into()
        )
    );
    // Line 2: stream.turn_started {requestId req-7, turnNumber 1}.
    let start = one(&evs, 2);
    assert_eq!(
        (
            &start["event"],
            &start["turnId"],
            &start["extensions"]["aceclaw.turnNumber"]
        ),
        (&"turn_start".into(), &"req-7".into(), &1.into())
    );
    // Line 9: stream.turn_completed {durationMs 4200, toolCount 0, stopReason END_TURN}.
    let end = one(&evs, 9);
    assert_eq!(
        (
            &end["event"],
            &end["turnId"],
            &end["durationMs"],
            &end["stopReason"],
            &end["extensions"]["aceclaw.toolCount"]
        ),
        (
            &"turn_complete".into(),
            &"req-7".into(),
            &4200.into(),
            &"END_TURN".into(),
            &0.into()
        )
    );
    assert!(end.get("isError").is_none());
    // Line 11: turn 2 ends with stopReason ERROR.
    let failed = one(&evs, 11);
    assert_eq!(
        (&failed["turnId"], &failed["isError"]),
        (&"req-8".into(), &true.into())
    );
    // Line 12: stream.session_ended {reason destroyed}.
    let ended = one(&evs, 12);
    assert_eq!(
        (&ended["event"], &ended["status"], &ended["message"]),
        (
            &"session_status".into(),
            &"ended".into(),
            &"destroyed".into()
        )
    );
    // The state: two turns by their request ids, how each ended, the session ended.
    let st = reduce_of(INPUT, None);
    let s = &st["tree"]["sessions"][0];
    let turns: Vec<(Value, Value, Value)> = s["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .map(|t| {
            (
                t["turnId"].clone(),
                t["status"].clone(),
                t["durationMs"].clone(),
            )
        })
        .collect();
    assert_eq!(
        turns,
        [
            ("req-7".into(), "completed".into(), 4200.into()),
            ("req-8".into(), "failed".into(), 100.into()),
        ]
    );
    assert_eq!(
        (&s["model"], &s["status"]),
        (&"claude-sonnet-4-5".into(), &"ended".into())
    );
}

#[test]
fn aceclaw_compaction_and_heartbeat() {
    let evs = events_of(INPUT);
    // Line 3: stream.heartbeat {phase}: a notice, the phase its message.
    let beat = one(&evs, 3);
    assert_eq!(
        (&beat["event"], &beat["subtype"], &beat["message"]),
        (
            &"notice".into(),
            &"stream.heartbeat".into(),
            &"thinking".into()
        )
    );
    // Line 5: stream.compaction {originalTokens, compactedTokens, phase}.
    let c = one(&evs, 5);
    assert_eq!(
        (
            &c["event"],
            &c["trigger"],
            &c["preTokens"],
            &c["postTokens"],
            &c["extensions"]["aceclaw.phase"]
        ),
        (
            &"context_compaction".into(),
            &"auto".into(),
            &150_000.into(),
            &30_000.into(),
            &"summarized".into()
        )
    );
    let st = reduce_of(INPUT, None);
    let comp = entries(&st, "compaction");
    assert_eq!(comp.len(), 1);
    assert_eq!(
        (
            &comp[0]["turn"],
            &comp[0]["preTokens"],
            &comp[0]["postTokens"]
        ),
        (&1.into(), &150_000.into(), &30_000.into())
    );
    // A heartbeat is no entry and ends no turn: line 9's turn_complete does.
    let end = one(&events_of(INPUT), 9);
    assert_eq!(end["event"], "turn_complete");
    assert_eq!(st["tree"]["sessions"][0]["turns"][0]["endSeq"], end["seq"]);
}

#[test]
fn aceclaw_reserved_namespaces_pass_without_breaking() {
    // Lines 6-7: stream.swarm_started and stream.worker_progress, which insights does not
    // know: each a notice that keeps its method and params, in the session, and the turn
    // goes on (line 8's text, line 9's end).
    let evs = events_of(INPUT);
    for (line, method) in [(6, "stream.swarm_started"), (7, "stream.worker_progress")] {
        let n = one(&evs, line);
        assert_eq!(
            (&n["event"], &n["subtype"], &n["sessionId"]),
            (&"notice".into(), &method.into(), &SESSION.into()),
            "line {line}"
        );
        assert_eq!(n["extensions"]["aceclaw.params"]["swarmId"], "sw-1");
    }
    assert_eq!(one(&evs, 8)["textDelta"], " Done.");
    assert!(evs.iter().all(|e| e["event"] != "raw"));
    // On the socket too (no envelope): a line of a reserved namespace is AceClaw's.
    let out = run(
        &["--no-timestamp"],
        br#"{"jsonrpc":"2.0","method":"stream.worker_started","params":{"swarmId":"sw-2","workerId":"w-9"}}
"#,
    );
    assert!(out.status.success());
    let ev: Value = serde_json::from_slice(&out.stdout).expect("one event");
    assert_eq!(
        (&ev["provider"], &ev["event"], &ev["subtype"]),
        (
            &"aceclaw".into(),
            &"notice".into(),
            &"stream.worker_started".into()
        )
    );
    assert_eq!(
        ev["extensions"]["aceclaw.params"],
        json!({"swarmId": "sw-2", "workerId": "w-9"})
    );
    // `validate` takes the whole input.
    let out = run(&["validate", INPUT], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
