//! `reduce` (the stored entries) and `replay` (the live display) follow the same rules: for
//! every recorded capture, they tell the same prompts, agent texts, tool calls and how each
//! ended, plans and compactions, in the same order.

use super::*;
use crate::replay::model::{Block, Model, PartialKind, Status};
use crate::replay::text::clean;

/// What both tell of one capture, one line per thing, in order.
#[derive(Debug, Default, PartialEq)]
struct Told {
    prompts: Vec<String>,
    /// The agent's texts, joined: a message that a call's update interrupts is one entry
    /// (RULE 1 appends a chunk to the last entry when it is a message) and two paragraphs of
    /// the transcript, around the call's result.
    texts: String,
    calls: Vec<String>,
    plans: usize,
    compactions: usize,
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "completed",
        Status::Failed => "failed",
        Status::Denied => "denied",
        Status::Cancelled => "cancelled",
        // No result came (the session was interrupted while it ran): not ended, for `reduce`.
        Status::Running | Status::Background | Status::Interrupted => "running",
    }
}

fn by_reduce(st: &State) -> Option<Told> {
    let mut t = Told::default();
    // (A state nested deeper than serde_json's `Value` holds, from the hostile inputs, is
    // left out.)
    let st = serde_json::to_value(st).ok()?;
    for e in st["entries"].as_array()? {
        match e["type"].as_str().unwrap_or("") {
            "message" if e["role"] == "user" => t
                .prompts
                .push(clean(e["content"].as_str().unwrap_or("")).trim().to_owned()),
            "message" => t
                .texts
                .push_str(clean(e["content"].as_str().unwrap_or("")).trim()),
            // A call refused when it asked is told as refused (one the turn's
            // `permissionDenials` names at its end is refused after its card has ended: the
            // footer tells it), a subagent's call by how the subagent ended.
            "tool_call"
                if e["permission"]["decision"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("deny")) =>
            {
                t.calls.push("denied".to_owned())
            }
            "tool_call" => {
                let s = e["subagent"]["status"].as_str().or(e["status"].as_str());
                t.calls.push(s.unwrap_or("?").to_owned())
            }
            "plan" => t.plans += 1,
            "compaction" => t.compactions += 1,
            _ => {}
        }
    }
    t.calls.sort();
    // A permission request for a call never announced is a card of its own in the transcript.
    let entries = st["entries"].as_array()?;
    let calls: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| &e["callId"])
        .collect();
    let unannounced = entries
        .iter()
        .filter(|e| e["type"] == "permission_request" && !calls.contains(&&e["callId"]))
        .count();
    let n = t.calls.len() + unannounced;
    t.calls.push(format!("{n} calls"));
    Some(t)
}

fn by_replay(lines: &[String]) -> Told {
    let mut m = Model::new();
    for l in lines {
        if let Ok(v) = serde_json::from_str::<Value>(l) {
            m.event(&v);
        }
    }
    m.finish();
    let mut t = Told::default();
    let mut starts = 0usize;
    // Each card's last status: a subagent's end after its call's end tells how it ended.
    let mut ends: Vec<(crate::replay::model::ToolHead, String)> = Vec::new();
    for b in m.drain() {
        match b {
            Block::Prompt { text, .. } => t.prompts.push(text.trim().to_owned()),
            Block::Text { text, .. } => t.texts.push_str(text.trim()),
            Block::Partial {
                kind: PartialKind::Text,
                text,
                ..
            } => t.texts.push_str(text.trim()),
            Block::ToolStart { .. } => starts += 1,
            Block::ToolEnd { status, card, .. } => {
                ends.push((card.head, status_word(status).to_owned()))
            }
            Block::SubagentDone { status, card, .. } => {
                let word = status_word(status).to_owned();
                match ends.iter_mut().rev().find(|(h, _)| *h == card.head) {
                    Some(e) => e.1 = word,
                    None => ends.push((card.head, word)),
                }
            }
            Block::Plan { .. } => t.plans += 1,
            Block::Compaction { .. } => t.compactions += 1,
            _ => {}
        }
    }
    // A call's end comes where its result does: compared as a bag, and each call once.
    let mut ends: Vec<String> = ends.into_iter().map(|(_, s)| s).collect();
    ends.sort();
    t.calls = ends;
    t.calls.push(format!("{starts} calls"));
    t
}

#[test]
fn replay_and_reduce_tell_every_capture_alike() {
    let mut bad = Vec::new();
    for p in crate::test_support::testdata_jsonl() {
        let name = p.to_string_lossy();
        // (testdata/mixed/ interleaves the lines of several agents' conversations, for
        // detection: one transcript of them all is not a conversation to agree on.)
        if !name.ends_with(".events.jsonl") || name.contains("/testdata/mixed/") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        // Lines `reduce` cannot read (numbers beyond u64, from the hostile inputs) are
        // reported by it and left out, by both.
        let lines: Vec<String> = lines.into_iter().filter(|l| Ev::parse(l).is_ok()).collect();
        let mut red = Reducer::new(State::new(), None);
        feed(&mut red, &lines);
        red.state.finish();
        let st = red.state;
        let Some(a) = by_reduce(&st) else { continue };
        let b = by_replay(&lines);
        if a != b {
            let mut why = Vec::new();
            if a.prompts != b.prompts {
                why.push(format!("prompts {:?} vs {:?}", a.prompts, b.prompts));
            }
            if a.texts != b.texts {
                why.push(format!("texts {:?} vs {:?}", a.texts, b.texts));
            }
            if a.calls != b.calls {
                why.push(format!("calls {:?} vs {:?}", a.calls, b.calls));
            }
            if a.plans != b.plans {
                why.push(format!("plans {} vs {}", a.plans, b.plans));
            }
            if a.compactions != b.compactions {
                why.push(format!(
                    "compactions {} vs {}",
                    a.compactions, b.compactions
                ));
            }
            bad.push(format!(
                "{}:\n  {}",
                p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
                    .unwrap_or(&p)
                    .display(),
                why.join("\n  ")
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} captures differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
