//! Codex: the three shapes on real captures, and legacy `codex/event` next to v2.

use crate::util::{root, run};
use serde_json::Value;

fn events(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect()
}

fn count(evs: &[Value], kind: &str) -> usize {
    evs.iter().filter(|e| e["event"] == kind).count()
}

/// The lines of a capture, keeping those `keep` accepts.
fn filtered(path: &str, keep: impl Fn(&str) -> bool) -> Vec<u8> {
    let text = std::fs::read_to_string(root().join(path)).expect("capture");
    let mut out = Vec::new();
    for l in text.lines().filter(|l| keep(l)) {
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    }
    out
}

fn is_legacy(l: &str) -> bool {
    l.contains("\"method\":\"codex/event")
}

fn is_v2_notification(l: &str) -> bool {
    [
        "\"method\":\"item/",
        "\"method\":\"turn/",
        "\"method\":\"thread/",
    ]
    .iter()
    .any(|m| l.contains(m))
}

const BOTH: &[&str] = &[
    "testdata/codex-app-server-0.100/thinking-tool.jsonl",
    "testdata/codex-app-server-0.100/command-declined.jsonl",
    "testdata/codex-app-server-0.100/edit-file.jsonl",
    "testdata/codex-app-server-0.100/interrupt.jsonl",
];

#[test]
fn v2_and_legacy_together_do_not_duplicate_content() {
    // Codex 0.100.0 emits every event twice: as v2 and as codex/event. The content events
    // must be those of the v2 lines alone.
    for path in BOTH {
        let both = events(&run(&["--no-timestamp", path], b"").stdout);
        let v2_only = events(&run(&["--no-timestamp"], &filtered(path, |l| !is_legacy(l))).stdout);
        for kind in [
            "text",
            "tool_invocation",
            "tool_completion",
            "user_input",
            "turn_complete",
            "permission_request",
            "stream_delta",
            "usage_update",
        ] {
            assert_eq!(count(&both, kind), count(&v2_only, kind), "{path}: {kind}");
        }
        assert!(
            both.iter()
                .any(|e| e["extensions"]["codex.supersededBy"] == "v2"),
            "{path}"
        );
    }
}

#[test]
fn legacy_alone_is_mapped_in_full() {
    // The same run as a legacy-only stream (an older client, `codex proto`): the codex/event
    // lines then carry the content.
    let path = BOTH[0];
    let legacy = events(
        &run(
            &["--no-timestamp"],
            &filtered(path, |l| !is_v2_notification(l)),
        )
        .stdout,
    );
    let v2_only = events(&run(&["--no-timestamp"], &filtered(path, |l| !is_legacy(l))).stdout);
    assert_eq!(count(&legacy, "text"), count(&v2_only, "text"));
    assert_eq!(count(&legacy, "tool_invocation"), 1);
    assert_eq!(count(&legacy, "tool_completion"), 1);
    assert!(count(&legacy, "stream_delta") > 0);
    assert!(legacy
        .iter()
        .all(|e| e["extensions"]["codex.supersededBy"].is_null()));
}

#[test]
fn app_server_approval_round_trip() {
    let evs = events(
        &run(
            &[
                "--no-timestamp",
                "testdata/codex-app-server/command-declined.jsonl",
            ],
            b"",
        )
        .stdout,
    );
    let req = evs
        .iter()
        .find(|e| e["event"] == "permission_request")
        .expect("request");
    let resp = evs
        .iter()
        .find(|e| e["event"] == "permission_response")
        .expect("response");
    assert_eq!(req["requestId"], resp["requestId"]);
    assert_eq!(resp["decision"], "deny");
    let done = evs
        .iter()
        .find(|e| e["event"] == "tool_completion")
        .expect("completion");
    // Declined: the command never ran, a denial (not an interrupt: `cancelled`).
    assert_eq!(done["status"], "failed");
    assert_eq!(done["callId"], req["toolUseId"]);
    assert_eq!(resp["toolUseId"], req["toolUseId"]);
}

#[test]
fn exec_and_app_server_interleaved_with_claude() {
    // Lines of three shapes in one stream are each recognised.
    let mut input = filtered("testdata/codex-exec/thinking-tool.jsonl", |_| true);
    input.extend(filtered("testdata/claude/text-only.jsonl", |_| true));
    input.extend(filtered(
        "testdata/codex-app-server/text-only.jsonl",
        |_| true,
    ));
    let out = run(&["--no-timestamp"], &input);
    assert!(out.status.success());
    let evs = events(&out.stdout);
    assert_eq!(count(&evs, "raw"), 0);
    let providers: std::collections::BTreeSet<&str> =
        evs.iter().filter_map(|e| e["provider"].as_str()).collect();
    assert_eq!(
        providers.into_iter().collect::<Vec<_>>(),
        ["claude", "codex"]
    );
}

#[test]
fn interrupt_ends_the_turn_interrupted() {
    let evs = events(
        &run(
            &[
                "--no-timestamp",
                "testdata/codex-app-server/interrupt.jsonl",
            ],
            b"",
        )
        .stdout,
    );
    assert!(evs
        .iter()
        .any(|e| e["event"] == "session_status" && e["status"] == "interrupted"));
    let tc = evs
        .iter()
        .find(|e| e["event"] == "turn_complete")
        .expect("turn_complete");
    assert_eq!(tc["subtype"], "interrupted");
}
