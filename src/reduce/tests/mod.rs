//! Unit tests of the reducer: each entry rule, turns and sessions, parallel calls, subagent
//! nesting, usage accounting, resuming, and the property that reducing a log in one go equals
//! reducing it in two parts with a snapshot in between. One file per concern; the helpers that
//! build and reduce logs are here.

mod calls;
mod chunks;
mod nesting;
mod permissions;
mod reading;
mod replay_agrees;
mod resume;
mod session_entries;
mod totals;
mod turns;

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
