//! `insights reduce`: golden states for the Claude captures (`<case>.state.json` beside each
//! capture; `BLESS=1 cargo test` rewrites them), the state schema
//! (`schemas/insights-state.schema.json`, which `insights schema state` prints) for every state
//! these tests make and every golden state, raw input reduced like its converted events,
//! exactly once (every capture fed twice, split and overlapped, resumed), `--follow`, `--at`,
//! `--from-state`, AceClaw's `eventId`, `--view summary`, and the exit status.

use crate::golden::{captures, golden_of};
use crate::util::{assert_same, files_ending, root, run};
use jsonschema::{Draft, Validator};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const STATE_SCHEMA: &str = "schemas/insights-state.schema.json";

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

fn state_schema() -> Value {
    let text = std::fs::read_to_string(root().join(STATE_SCHEMA)).expect("read the state schema");
    serde_json::from_str(&text).expect("the state schema is JSON")
}

/// The state schema, compiled once for all the tests.
fn validator() -> &'static Validator {
    static V: OnceLock<Validator> = OnceLock::new();
    V.get_or_init(|| {
        jsonschema::options()
            .with_draft(Draft::Draft202012)
            .build(&state_schema())
            .unwrap_or_else(|e| panic!("{STATE_SCHEMA} does not compile: {e}"))
    })
}

fn check(what: &str, state: &Value) {
    let problems: Vec<String> = validator()
        .iter_errors(state)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "{what} does not follow {STATE_SCHEMA}:\n{}",
        problems.join("\n")
    );
}

/// Checks what `insights reduce` printed against the state schema: a state, or with
/// `--follow` one per line (a summary is no state).
pub(crate) fn check_states(what: &str, out: &str) {
    if !out.starts_with('{') {
        return;
    }
    if out.starts_with("{\n") {
        check(what, &json(out));
    } else {
        for (i, line) in out.lines().enumerate() {
            check(&format!("{what}, state {}", i + 1), &json(line));
        }
    }
}

/// Runs `insights reduce ARGS`, expecting success; returns standard output, after checking the
/// states in it against the state schema.
fn reduce(args: &[&str]) -> String {
    let mut all = vec!["reduce"];
    all.extend_from_slice(args);
    let out = run(&all, b"");
    assert!(
        out.status.success(),
        "insights {}: exit {:?}\n{}",
        all.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "insights {}: stderr: {}",
        all.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    check_states(&format!("insights {}", all.join(" ")), &text);
    text
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// Every capture's events file, for the given provider directories (all when empty).
fn event_files(dirs: &[&str]) -> Vec<PathBuf> {
    captures()
        .into_iter()
        .filter(|c| {
            let dir = c
                .parent()
                .and_then(Path::file_name)
                .and_then(|d| d.to_str());
            dirs.is_empty() || dir.is_some_and(|d| dirs.contains(&d))
        })
        .map(|c| golden_of(&c))
        .filter(|g| g.exists())
        .collect()
}

fn state_of(events: &Path) -> PathBuf {
    let name = events.file_name().unwrap().to_string_lossy();
    events.with_file_name(name.replace(".events.jsonl", ".state.json"))
}

#[test]
fn state_schema_is_valid_draft_2020_12() {
    let s = state_schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(
        s["$id"],
        "https://insights.dev/schemas/insights-state.schema.json"
    );
    if let Err(e) = jsonschema::draft202012::meta::validate(&s) {
        panic!(
            "{STATE_SCHEMA} is not valid draft 2020-12: {}: {e}",
            e.instance_path()
        );
    }
    validator();
}

#[test]
fn schema_state_prints_the_state_schema_file() {
    let out = run(&["schema", "state"], b"");
    assert!(
        out.status.success(),
        "insights schema state: {:?}",
        out.status
    );
    let file = std::fs::read(root().join(STATE_SCHEMA)).expect("read the state schema");
    assert!(
        out.stdout == file,
        "`insights schema state` differs from {STATE_SCHEMA} (rebuild?)"
    );
    // The event schema stays the default.
    let event = run(&["schema"], b"");
    assert!(event.stdout == run(&["schema", "event"], b"").stdout);
    assert!(event.stdout != file);
}

#[test]
fn claude_captures_reduce_to_their_golden_states() {
    let bless = std::env::var_os("BLESS").is_some();
    let files = event_files(&["claude", "claude-sdk"]);
    assert!(!files.is_empty(), "no Claude captures");
    for ev in files {
        let actual = reduce(&[&rel(&ev)]);
        let golden = state_of(&ev);
        if bless {
            std::fs::write(&golden, &actual).expect("write golden state");
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_else(|_| {
            panic!("{}: no golden state (BLESS=1 cargo test)", golden.display())
        });
        assert_same(&rel(&ev), &expected, &actual);
    }
}

#[test]
fn golden_states_follow_the_state_schema() {
    let files = files_ending(&root().join("testdata"), ".state.json");
    assert!(!files.is_empty(), "no golden states");
    for golden in files {
        let text = std::fs::read_to_string(&golden).unwrap();
        check(&rel(&golden), &json(&text));
    }
}

#[test]
fn every_capture_reduces_raw_as_converted() {
    // Every provider: reducing a raw capture (converted on the fly) gives the state of its
    // converted events, times included (the times are the provider's own: a line without one
    // is not stamped with the moment it was read), and the state follows the schema.
    for cap in captures() {
        let cap = rel(&cap);
        let conv = run(&["--no-timestamp", &cap], b"");
        let from_events = {
            let out = run(&["reduce", "-"], &conv.stdout);
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        check(&format!("{cap} converted"), &json(&from_events));
        let from_raw = reduce(&[&cap]);
        assert_same(&format!("{cap} reduced raw"), &from_events, &from_raw);
    }
}

#[test]
fn times_are_the_providers_own() {
    // Raw captures (converted on the fly): an entry has the time of the event that made it
    // when its line carried one, and none otherwise (Claude's stream-json carries times on a
    // few lines only); a session starts at the first time of the events applied to it, a turn
    // ends at its turn_complete's.
    for cap in [
        "testdata/claude/parallel-tools",
        "testdata/gemini/text-only",
        "testdata/codex-app-server/edit-file",
    ] {
        let events: Vec<Value> =
            std::fs::read_to_string(root().join(format!("{cap}.events.jsonl")))
                .unwrap()
                .lines()
                .map(json)
                .collect();
        let time_of = |seq: &Value| {
            events
                .iter()
                .find(|e| e["seq"] == *seq)
                .map_or(Value::Null, |e| e["timestamp"].clone())
        };
        let state = json(&reduce(&[&format!("{cap}.jsonl")]));
        for e in state["entries"].as_array().unwrap() {
            let want = time_of(&e["seq"]);
            let got = e.get("timestamp").cloned().unwrap_or(Value::Null);
            assert_eq!(got, want, "{cap}: entry of seq {}", e["seq"]);
        }
        // (Notices and raw lines are counted, not applied to a session.)
        let first = events
            .iter()
            .filter(|e| e["event"] != "notice" && e["event"] != "raw")
            .find_map(|e| e.get("timestamp"))
            .cloned()
            .unwrap_or(Value::Null);
        let session = &state["tree"]["sessions"][0];
        assert_eq!(
            session.get("startedAt").cloned().unwrap_or(Value::Null),
            first,
            "{cap}"
        );
        for t in session["turns"].as_array().unwrap() {
            if let Some(end) = t.get("endSeq") {
                assert_eq!(
                    t.get("endedAt").cloned().unwrap_or(Value::Null),
                    time_of(end),
                    "{cap}: turn {}",
                    t["index"]
                );
            }
        }
    }
}

/// A directory of one test's own for its files, removed when the test ends, passed or failed.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Self {
        let name = format!("insights-reduce-{}-{test}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn follow_writes_a_snapshot_after_every_turn() {
    let scratch = Scratch::new("follow_writes_a_snapshot_after_every_turn");
    let ev = rel(&root().join("testdata/claude-sdk/compact.events.jsonl"));
    let out = reduce(&["--follow", &ev]);
    let snaps: Vec<Value> = out.lines().map(json).collect();
    assert_eq!(snaps.len(), 4, "one per turn_complete, none after the last");
    for (i, s) in snaps.iter().enumerate() {
        assert_eq!(s["totals"]["all"]["turns"], i as u64 + 1);
    }
    assert_eq!(snaps[3], json(&reduce(&[&ev])));

    // A log that stops in the middle of a turn gets a last snapshot at its end.
    let text = std::fs::read_to_string(root().join(&ev)).unwrap();
    let part: Vec<&str> = text.lines().take(10).collect();
    let p = scratch.file("follow-part.jsonl");
    std::fs::write(&p, part.join("\n") + "\n").unwrap();
    let out = reduce(&["--follow", p.to_str().unwrap()]);
    let snaps: Vec<Value> = out.lines().map(json).collect();
    assert_eq!(snaps.len(), 2);
    assert_eq!(snaps[1]["lastSeq"], 10);
    assert_eq!(snaps[1]["pending"]["sessions"][0]["turn"], 2);
}

#[test]
fn at_reduces_a_prefix() {
    let scratch = Scratch::new("at_reduces_a_prefix");
    let ev = root().join("testdata/claude/thinking-tool.events.jsonl");
    let text = std::fs::read_to_string(&ev).unwrap();
    for k in [1, 19, 33, 40] {
        let p = scratch.file(&format!("prefix-{k}.jsonl"));
        let part: Vec<&str> = text.lines().take(k).collect();
        std::fs::write(&p, part.join("\n") + "\n").unwrap();
        assert_same(
            &format!("--at {k}"),
            &reduce(&[p.to_str().unwrap()]),
            &reduce(&["--at", &k.to_string(), &rel(&ev)]),
        );
    }
}

#[test]
fn from_state_resumes_a_log_split_anywhere() {
    let scratch = Scratch::new("from_state_resumes_a_log_split_anywhere");
    let mut rng = crate::util::Rng(0x2545_f491_4f6c_dd1d);
    for case in [
        "testdata/claude-sdk/subagent-partial",
        "testdata/claude-sdk/compact",
        "testdata/claude-sdk/write-allow-always",
        "testdata/claude/parallel-tools",
    ] {
        let ev = format!("{case}.events.jsonl");
        let whole = reduce(&[&ev]);
        let text = std::fs::read_to_string(root().join(&ev)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..3 {
            let k = rng.index(lines.len() + 1);
            let snap = scratch.file(&format!("snap-{k}.json"));
            std::fs::write(&snap, reduce(&["--at", &k.to_string(), &ev])).unwrap();
            let snap = snap.to_str().unwrap();
            // The whole log again: what the snapshot has seen is skipped.
            assert_same(
                &format!("{ev} resumed after {k} with the whole log"),
                &whole,
                &reduce(&["--from-state", snap, &ev]),
            );
            // Only the rest of the log.
            let rest = scratch.file(&format!("rest-{k}.jsonl"));
            std::fs::write(&rest, lines[k..].join("\n") + "\n").unwrap();
            assert_same(
                &format!("{ev} resumed after {k} with the rest"),
                &whole,
                &reduce(&["--from-state", snap, rest.to_str().unwrap()]),
            );
        }
        // Raw input read again from its start has the same ids: what was applied is skipped.
        let cap = format!("{case}.jsonl");
        let k = lines.len() / 2;
        let snap = scratch.file("raw-snap.json");
        std::fs::write(&snap, reduce(&["--at", &k.to_string(), &cap])).unwrap();
        assert_same(
            &format!("{cap} resumed after {k}"),
            &whole,
            &reduce(&["--from-state", snap.to_str().unwrap(), &cap]),
        );
    }
}

/// Raw input of providers whose turn starts are inferred, mixed in one log with events the
/// converter renumbers (an InsightsEvent whose `seq` is no number, one without an id),
/// events parked until their session is known (a Codex rollout's) and a prompt held until its
/// session is named (the Claude Agent SDK's first): a snapshot taken after any event, even between an event and the `turn_start` inferred after it on the same line,
/// resumes to the state of one go when the whole log is read again. (Found by the `reduce`
/// fuzz target: the resumed converter, told which turns are running, infers fewer starts, so
/// neither the line's other ids nor the converter's count may depend on them.)
#[test]
fn from_state_resumes_after_every_event_of_inferred_turns() {
    let scratch = Scratch::new("from_state_resumes_after_every_event_of_inferred_turns");
    let first = |p: &str, n: usize| -> Vec<String> {
        let text = std::fs::read_to_string(root().join(p)).unwrap();
        text.lines().take(n).map(str::to_owned).collect()
    };
    let rollout = files_ending(
        &root().join("testdata/session-files/codex-exec/rate-limit-429"),
        ".jsonl",
    );
    let mut lines = Vec::new();
    // A Gemini answer with no init: its turn starts at the result.
    lines.push(r#"{"type":"message","timestamp":"2026-11-26T13:14:40.193Z","role":"assistant","content":"Done.","delta":true}"#.to_owned());
    lines.push(r#"{"type":"result","timestamp":"2026-11-26T13:14:40.201Z","status":"success","stats":{"total_tokens":3,"input_tokens":2,"output_tokens":1}}"#.to_owned());
    // The SDK's first prompt, held until the init names its session, then in its turn.
    lines.extend(first("testdata/claude-sdk/edit-file.jsonl", 7));
    lines.extend(first("testdata/claude/thinking-tool.jsonl", 6));
    lines.push(
        r#"{"event":"text","seq":1e999,"line":5,"provider":"claude","sessionId":"s","text":"x"}"#
            .to_owned(),
    );
    lines.push(r#"{"event":"text","seq":5,"kind":"text","text":"first","text":"second","seq":6,"sessionId":"s"}"#.to_owned());
    lines.extend(first(&rel(&rollout[0]), 12));
    lines.extend(first("testdata/gemini/edit-file.jsonl", 8));
    lines.extend(first("testdata/session-files/claude/mixed-quoting/.claude/projects/-home-dev-work/9591c553-1e6e-4d05-92a1-43670f6e0c66.jsonl", 8));
    let log = scratch.file("mixed.jsonl");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let log = log.to_str().unwrap();
    let whole = reduce(&[log]);
    let last = json(&whole)["lastSeq"].as_u64().unwrap();
    assert!(last > 40, "{last} events: the pieces convert");
    for k in 1..last {
        let snap = scratch.file(&format!("snap-{k}.json"));
        std::fs::write(&snap, reduce(&["--at", &k.to_string(), log])).unwrap();
        assert_same(
            &format!("resumed after seq {k}"),
            &whole,
            &reduce(&["--from-state", snap.to_str().unwrap(), log]),
        );
    }
}

/// A log that ends while the converter holds the SDK's first prompt for its session (the
/// CLI has not answered yet) has the prompt without its session; the grown log, read again
/// from that state, names it, and it still counts once.
#[test]
fn a_prompt_held_at_the_end_of_a_log_counts_once_when_the_log_grows() {
    let scratch = Scratch::new("a_prompt_held_at_the_end_of_a_log_counts_once");
    let cap = "testdata/claude-sdk/edit-file.jsonl";
    let text = std::fs::read_to_string(root().join(cap)).unwrap();
    let head = scratch.file("head.jsonl");
    std::fs::write(
        &head,
        text.lines().take(3).collect::<Vec<_>>().join("\n") + "\n",
    )
    .unwrap();
    let snap = scratch.file("snap.json");
    std::fs::write(&snap, reduce(&[head.to_str().unwrap()])).unwrap();
    let prompts = |state: &str| {
        json(state)["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                e["role"] == "user"
                    && e["content"]
                        .as_str()
                        .is_some_and(|c| c.starts_with("Change the greeting"))
            })
            .count()
    };
    assert_eq!(prompts(&reduce(&[cap])), 1);
    let resumed = reduce(&["--from-state", snap.to_str().unwrap(), cap]);
    assert_eq!(prompts(&resumed), 1, "{resumed}");
}

/// AceClaw's bridge numbers its events (`eventId`): a tail cut from the log, whose lines have
/// other line numbers and so other ids, resumes after the last one the snapshot applied,
/// whether it starts just after it or overlaps it.
#[test]
fn an_aceclaw_bridge_log_resumes_by_event_id() {
    let scratch = Scratch::new("an_aceclaw_bridge_log_resumes_by_event_id");
    let cap = "testdata/aceclaw/bridge-plan.jsonl";
    let whole = reduce(&[cap]);
    let text = std::fs::read_to_string(root().join(cap)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 10, "{cap} is long enough to split");
    let write = |name: &str, part: &[&str]| {
        let p = scratch.file(name);
        std::fs::write(&p, part.join("\n") + "\n").unwrap();
        p.to_string_lossy().into_owned()
    };
    for k in [1, 5, 10, lines.len() - 1] {
        let head = write(&format!("head-{k}.jsonl"), &lines[..k]);
        let snap = scratch.file(&format!("snap-{k}.json"));
        std::fs::write(&snap, reduce(&[&head])).unwrap();
        let snap = snap.to_string_lossy().into_owned();
        for j in [k, k.saturating_sub(3), 0] {
            let tail = write(&format!("tail-{k}-{j}.jsonl"), &lines[j..]);
            assert_same(
                &format!("{cap}: lines after {k} resumed from line {}", j + 1),
                &whole,
                &reduce(&["--from-state", &snap, &tail]),
            );
        }
    }
}

/// Whether an event id is made of its line's content and place (`h` + 16 hex digits + `-` +
/// the line number + `:` + the index, `start` or `text` for an inferred event): not the same when the line is read at another place.
fn is_content_id(id: &str) -> bool {
    let Some(rest) = id.strip_prefix('h') else {
        return false;
    };
    let (hex, place) = rest.split_at(rest.len().min(16));
    hex.len() == 16
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
        && place
            .strip_prefix('-')
            .and_then(|p| p.split_once(':'))
            .is_some_and(|(l, k)| {
                // The index of an inferred event is `start` or `text` (and a number).
                let k = k
                    .strip_prefix("start")
                    .or_else(|| k.strip_prefix("text"))
                    .map_or(k, |n| if n.is_empty() { "0" } else { n });
                !l.is_empty()
                    && !k.is_empty()
                    && (l.to_owned() + k).bytes().all(|b| b.is_ascii_digit())
            })
}

/// Raw captures, converted on the fly: a capture read twice (two inputs, each numbered from
/// its first line) is applied once. Where every event is known wherever its line is read (a
/// provider id, or AceClaw's eventId), a capture's first k lines followed by its lines from j
/// (j ≤ k) in one file, and a snapshot of the first k lines resumed with a file of the lines
/// from j, give the state of one pass too. (The other captures' lines without a provider id
/// have ids made of their place in the file, which a tail cut from it changes.)
#[test]
fn raw_captures_read_again_are_applied_once() {
    let scratch = Scratch::new("raw_captures_read_again_are_applied_once");
    let mut stable = Vec::new();
    for cap in captures() {
        let events = std::fs::read_to_string(golden_of(&cap))
            .unwrap_or_else(|e| panic!("{}: {e}", golden_of(&cap).display()));
        let name = rel(&cap);
        let from = crate::golden::from_of(&cap);
        let mut args: Vec<&str> = Vec::new();
        if let Some(f) = &from {
            args.extend(["--from", f]);
        }
        let with = |more: &[&str]| -> Vec<String> {
            args.iter().chain(more).map(|s| s.to_string()).collect()
        };
        let reduce_with = |more: &[&str]| {
            let a = with(more);
            reduce(&a.iter().map(String::as_str).collect::<Vec<_>>())
        };
        let once = reduce_with(&[&name]);
        assert_same(
            &format!("{name} read twice"),
            &once,
            &reduce_with(&[&name, &name]),
        );
        let known_anywhere = events.lines().all(|l| {
            let e = json(l);
            !e["id"].as_str().is_some_and(is_content_id)
                || e["extensions"]["aceclaw.eventId"].is_u64()
        });
        if !known_anywhere {
            continue;
        }
        stable.push(name.clone());
        let text = std::fs::read_to_string(&cap).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let n = lines.len();
        let write = |file: &str, part: Vec<&str>| {
            let p = scratch.file(file);
            std::fs::write(&p, part.join("\n") + "\n").unwrap();
            p.to_string_lossy().into_owned()
        };
        for (k, j) in [(n / 2, n / 4), (n - n / 3, n / 2), (n, 0)] {
            let again = write("again.jsonl", [&lines[..k], &lines[j..]].concat());
            assert_same(
                &format!("{name}: the first {k} lines, then the lines from {}", j + 1),
                &once,
                &reduce_with(&[&again]),
            );
            let head = write("head.jsonl", lines[..k].to_vec());
            let snap = scratch.file("snap.json");
            std::fs::write(&snap, reduce_with(&[&head])).unwrap();
            let snap = snap.to_string_lossy().into_owned();
            let tail = write("tail.jsonl", lines[j..].to_vec());
            assert_same(
                &format!("{name}: {k} lines resumed with the lines from {}", j + 1),
                &once,
                &reduce_with(&["--from-state", &snap, &tail]),
            );
        }
    }
    // Claude's stream-json, Qwen's, OpenCode's and AceClaw's bridge: the others have lines
    // without a provider id.
    assert!(stable.len() >= 30, "{stable:?}");
}

#[test]
fn summary_view_of_the_claude_captures() {
    let files: Vec<String> = event_files(&["claude", "claude-sdk"])
        .iter()
        .map(|p| rel(p))
        .collect();
    let mut args = vec!["--view", "summary"];
    args.extend(files.iter().map(String::as_str));
    let actual = reduce(&args);
    let golden = root().join("testdata/reduce/summary.txt");
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&golden).unwrap_or_else(|_| {
        panic!(
            "{}: no golden summary (BLESS=1 cargo test)",
            golden.display()
        )
    });
    assert_same("reduce --view summary", &expected, &actual);
}

#[test]
fn exit_status_and_diagnostics() {
    let scratch = Scratch::new("exit_status_and_diagnostics");
    // A missing input: reported, status 2, the state of the rest still written.
    let out = run(
        &[
            "reduce",
            "no-such-file.jsonl",
            "testdata/claude/text-only.events.jsonl",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-file.jsonl"));
    assert_eq!(
        json(&String::from_utf8_lossy(&out.stdout))["totals"]["all"]["turns"],
        1
    );

    // An unreadable line: reported with its place, status 1.
    let out = run(
        &["reduce"],
        b"{\"event\":\"text\",\"kind\":\"text\",\"text\":\"hi\",\"sessionId\":\"s\"}\nnot json\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<stdin>:2:"), "{err}");
    assert_eq!(
        json(&String::from_utf8_lossy(&out.stdout))["entries"][0]["content"],
        "hi"
    );

    // A state that is not one: status 2.
    let bad = scratch.file("bad-state.json");
    std::fs::write(&bad, "{\"version\": 99}").unwrap();
    let out = run(&["reduce", "--from-state", bad.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad-state.json"));

    // Usage errors.
    assert_eq!(run(&["reduce", "--at", "x"], b"").status.code(), Some(2));
    assert_eq!(run(&["reduce", "--view", "x"], b"").status.code(), Some(2));
}

#[test]
fn an_empty_input_is_an_empty_state() {
    let s = json(&reduce(&["-"]));
    assert_eq!(s["lastSeq"], 0);
    assert_eq!(
        reduce(&["--follow", "-"]),
        "",
        "nothing happened, nothing to follow"
    );
}

#[test]
fn a_question_is_pending_until_it_is_resolved_on_claude_and_codex() {
    use crate::util::{entries, events_of, of_line, reduce_of};
    // Claude (a recording, `claude-sdk/ask-user-question.jsonl`): AskUserQuestion is a call of
    // kind `ask` (line 6), which the SDK client is asked about (7) and allows (8); its result
    // (9, its structured result with `answers` empty) resolves the question, unanswered.
    let cap = "testdata/claude-sdk/ask-user-question.jsonl";
    let call = "toolu_01NQGuvN5w6bVTzj4Yd5Ftmi";
    let evs = events_of(cap);
    let asked = of_line(&evs, 6);
    assert_eq!(
        (&asked[0]["event"], &asked[0]["kind"], &asked[0]["callId"]),
        (&"tool_invocation".into(), &"ask".into(), &call.into())
    );
    assert_eq!(
        asked[0]["input"]["questions"][0]["question"],
        "Which color should the banner be?"
    );
    let req = of_line(&evs, 7);
    assert_eq!(
        (&req[0]["event"], &req[0]["toolKind"], &req[0]["toolUseId"]),
        (&"permission_request".into(), &"ask".into(), &call.into())
    );
    let questions = |st: &Value| -> Vec<Value> {
        st["pending"]["sessions"][0]["questions"]
            .as_array()
            .expect("questions")
            .iter()
            .map(|q| q["callId"].clone())
            .collect()
    };
    for line in [6, 7, 8] {
        assert_eq!(
            questions(&reduce_of(cap, Some(line))),
            [Value::from(call)],
            "line {line}"
        );
    }
    let st = reduce_of(cap, Some(9));
    assert!(questions(&st).is_empty());
    let t = &entries(&st, "tool_call")[0];
    assert_eq!(
        (
            &t["status"],
            &t["output"]["answers"],
            &t["permission"]["decision"]
        ),
        (&"completed".into(), &serde_json::json!({}), &"allow".into())
    );
    // Codex (a written input): `requestUserInput` asks with no call of its own (line 23); its
    // answer (24) resolves it.
    let cap = "testdata/codex-app-server/reference/items-and-questions.jsonl";
    assert_eq!(questions(&reduce_of(cap, Some(23))), [Value::from("q1")]);
    assert!(questions(&reduce_of(cap, Some(24))).is_empty());
}
