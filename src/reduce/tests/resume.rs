//! Resuming: a log reduced in one go equals it reduced in two parts with a snapshot in between, and
//! events applied once.

use super::*;

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
