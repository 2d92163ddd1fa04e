//! `insights usage` and `insights sessions` on the session files the real CLIs wrote
//! (testdata/session-files/). The expected numbers were summed by hand from the files'
//! `usage` and `token_count` records (each Claude message once by message id and request
//! id), priced from data/prices.json, and agree with ccusage 20.0.24 on the same files.

use crate::util::{insights, root};
use serde_json::Value;
use std::path::PathBuf;

const NESTED: &str = "testdata/session-files/claude/nested-subagent";
const PATCH: &str = "testdata/session-files/codex-exec/multi-patch";

fn json_of(args: &[&str]) -> Value {
    let out = insights().args(args).output().expect("run insights");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn tokens(row: &Value) -> [u64; 5] {
    [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheCreationTokens",
        "reasoningTokens",
    ]
    .map(|k| row[k].as_u64().unwrap())
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("insights-usage-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_claude_session_with_its_subagents_counts_each_message_once() {
    let v = json_of(&["usage", NESTED, "--by", "session,model", "--json"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    let r = &rows[0];
    assert_eq!(r["session"], "f6b97c1f-cc14-45bd-90ad-faa1cea12fa2");
    assert_eq!(r["model"], "claude-opus-4-8");
    // Six responses (the session's and its two subagents'), each written once per block.
    assert_eq!(tokens(r), [67, 127, 57_602, 26_986, 0]);
    // 67×5 + 127×25 + 57,602×0.5 + 26,986×6.25 dollars per million.
    assert_eq!(r["costUsd"], 0.200974);
    assert_eq!(v["totals"]["costUsd"], 0.200974);
}

#[test]
fn a_codex_rollout_counts_each_token_count_with_the_turn_s_model() {
    let v = json_of(&["usage", PATCH, "--by", "day,model,agent,project", "--json"]);
    let r = &v["rows"][0];
    assert_eq!(r["day"], "2026-11-26");
    assert_eq!(r["model"], "gpt-5.5");
    assert_eq!(r["agent"], "codex");
    assert_eq!(r["project"], "/home/dev/work");
    // input_tokens 19,263 of which 9,511 cached.
    assert_eq!(tokens(r), [9_752, 114, 9_511, 0, 0]);
    assert_eq!(r["costUsd"], 0.056936);
}

#[test]
fn a_session_file_read_twice_or_copied_counts_once() {
    // A resumed Claude session repeats the earlier messages in a new file.
    let d = temp("resume");
    let src = root().join(NESTED).join(".claude/projects/-home-dev-work");
    let main = src.join("f6b97c1f-cc14-45bd-90ad-faa1cea12fa2.jsonl");
    std::fs::copy(&main, d.join("resumed.jsonl")).unwrap();
    let once = json_of(&["usage", NESTED, "--json"]);
    let twice = json_of(&["usage", NESTED, NESTED, d.to_str().unwrap(), "--json"]);
    assert_eq!(once["totals"], twice["totals"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_forked_codex_session_counts_the_copied_responses_once() {
    // A fork's file begins with its parent's records (same times, same tokens) under its
    // own session id.
    let d = temp("fork");
    let src = crate::util::files_ending(&root().join(PATCH), ".jsonl").remove(0);
    let text = std::fs::read_to_string(&src).unwrap();
    let fork = text.replace(
        "01a217fd-b4b1-7732-8aef-8e7a49980a0c",
        "01a217fd-0000-7000-8000-000000000000",
    );
    std::fs::write(d.join("rollout-fork.jsonl"), fork).unwrap();
    std::fs::copy(&src, d.join("rollout-parent.jsonl")).unwrap();
    let v = json_of(&["usage", d.to_str().unwrap(), "--json"]);
    assert_eq!(v["totals"]["inputTokens"], 9_752);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn gemini_chat_files_count_each_response_once() {
    // write-and-replace: three responses, each written twice (again with its tool calls);
    // input counts the cached part, taken out here.
    let v = json_of(&[
        "usage",
        "testdata/session-files/gemini/write-and-replace",
        "--by",
        "agent,model,project",
        "--json",
    ]);
    let r = &v["rows"][0];
    assert_eq!(r["agent"], "gemini");
    assert_eq!(r["model"], "gemini-3.8-flash");
    assert_eq!(r["project"], "/home/dev/work");
    // input 10,474 + 10,602 + 10,742 = 31,818, of which cached 853 + 10,474 + 10,602 = 21,929;
    // output 41 + 54 + 21.
    assert_eq!(tokens(r), [9_889, 116, 21_929, 0, 0]);
}

#[test]
fn a_model_without_a_price_has_its_tokens_and_no_cost() {
    let d = temp("unpriced");
    let line = r#"{"type":"assistant","timestamp":"2026-11-20T10:00:00.000Z","sessionId":"s","requestId":"r","message":{"id":"m","model":"claude-future-9","usage":{"input_tokens":10,"output_tokens":20}}}"#;
    std::fs::write(d.join("s.jsonl"), format!("{line}\n")).unwrap();
    let out = insights()
        .args(["usage", d.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tokens(&v["rows"][0]), [10, 20, 0, 0, 0]);
    assert!(v["rows"][0]["costUsd"].is_null(), "{v}");
    assert!(v["totals"]["costUsd"].is_null());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no price for claude-future-9"), "{err}");
    // --prices gives it one.
    let prices = d.join("p.json");
    std::fs::write(
        &prices,
        r#"{"models":[{"names":["claude-future-9"],"input":1,"output":1}]}"#,
    )
    .unwrap();
    let v = json_of(&[
        "usage",
        d.join("s.jsonl").to_str().unwrap(),
        "--prices",
        prices.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["totals"]["costUsd"], 0.00003);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn days_follow_the_time_zone_and_the_filters() {
    // 13:12 UTC on the 26th is the 27th at +14:00.
    let v = json_of(&["usage", NESTED, "--tz", "+14:00", "--json"]);
    assert_eq!(v["rows"][0]["day"], "2026-11-27");
    let v = json_of(&["usage", NESTED, "--by", "week", "--json"]);
    assert_eq!(v["rows"][0]["week"], "2026-11-23");
    let v = json_of(&["usage", NESTED, "--by", "month", "--json"]);
    assert_eq!(v["rows"][0]["month"], "2026-11");
    let v = json_of(&["usage", NESTED, "--since", "2026-11-27", "--json"]);
    assert_eq!(v["rows"].as_array().unwrap().len(), 0);
    assert_eq!(v["totals"]["inputTokens"], 0);
    let v = json_of(&["usage", NESTED, "--agent", "codex", "--json"]);
    assert_eq!(v["rows"].as_array().unwrap().len(), 0);
    // ccusage's day form too.
    let v = json_of(&["usage", NESTED, "--since", "20261127", "--json"]);
    assert_eq!(v["rows"].as_array().unwrap().len(), 0);
    let v = json_of(&[
        "usage", NESTED, "--since", "20261126", "--until", "20261126", "--json",
    ]);
    assert_eq!(v["rows"].as_array().unwrap().len(), 1);
    for bad in [
        ["--tz", "Mars/Olympus"],
        ["--since", "26.11.2026"],
        ["--until", "20261131"],
    ] {
        let out = insights()
            .args(["usage", NESTED])
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

/// Days are the local time zone's unless `--tz` says otherwise, as ccusage counts them: 13:12
/// UTC on the 26th is the 27th at Kiritimati (+14:00), the 26th in Los Angeles.
#[test]
fn days_are_local_by_default() {
    let home = root().join(NESTED);
    let home = home.to_str().unwrap();
    for (tz, day, minute) in [
        ("Pacific/Kiritimati", "2026-11-27", "2026-11-27 03:12"),
        ("America/Los_Angeles", "2026-11-26", "2026-11-26 05:12"),
        ("UTC", "2026-11-26", "2026-11-26 13:12"),
    ] {
        let out = insights()
            .env("TZ", tz)
            .args(["usage", "--root", home, "--json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["rows"][0]["day"], day, "TZ={tz}");
        // --tz wins over TZ.
        let v = json_of(&["usage", "--root", home, "--tz", tz, "--json"]);
        assert_eq!(v["rows"][0]["day"], day, "--tz {tz}");
        let out = insights()
            .env("TZ", tz)
            .args(["sessions", "--root", home])
            .output()
            .unwrap();
        let table = String::from_utf8(out.stdout).unwrap();
        assert!(table.contains(minute), "TZ={tz}: {table}");
    }
}

/// Local times are right on both sides of a change of offset within an hour: Lord Howe
/// Island moves from +10:30 to +11:00 at 15:30 UTC on 2026-10-03; a POSIX rule in `TZ` may
/// change it twice.
#[test]
fn local_minutes_follow_a_change_of_offset_within_the_hour() {
    let d = temp("lord-howe");
    // The `sessions` table of two sessions, each one response at its time, read in `tz`.
    let table = |tz: &str, before: &str, after: &str| {
        let line = |session: &str, time: &str| {
            format!(
                r#"{{"type":"assistant","timestamp":"{time}","sessionId":"{session}","requestId":"r-{session}","message":{{"id":"m-{session}","model":"claude-sonnet-4-5","usage":{{"input_tokens":1,"output_tokens":1}}}}}}"#
            )
        };
        let text = format!("{}\n{}\n", line("before", before), line("after", after));
        std::fs::write(d.join("s.jsonl"), text).unwrap();
        let out = insights()
            .env("TZ", tz)
            .args(["sessions", d.to_str().unwrap()])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    // (zone, the two times, how the table shows them). A POSIX rule may change the offset
    // twice in an hour: summer time from 00:10 to 00:40 UTC in the second.
    let cases = [
        (
            "Australia/Lord_Howe",
            ["2026-10-03T15:10:00.000Z", "2026-10-03T15:50:00.000Z"],
            ["2026-10-04 01:40", "2026-10-04 02:50"],
        ),
        (
            "AAA-1BBB,M10.1.6/1:10,M10.1.6/2:40",
            ["2026-10-03T00:05:00.000Z", "2026-10-03T00:20:00.000Z"],
            ["2026-10-03 01:05", "2026-10-03 02:20"],
        ),
    ];
    for (tz, [before, after], shown) in cases {
        let t = table(tz, before, after);
        assert!(shown.iter().all(|s| t.contains(s)), "{tz}: {t}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// `--root` repeats; a root or path that does not exist is status 2; a home without session
/// files, or files without usage (stream captures), are status 1 with the places looked in
/// named, or 0 with --allow-empty; filters that keep nothing are a note and status 0.
#[test]
fn roots_repeat_and_nothing_found_is_said() {
    let (nested, patch) = (root().join(NESTED), root().join(PATCH));
    let (nested, patch) = (nested.to_str().unwrap(), patch.to_str().unwrap());
    let both = json_of(&[
        "usage", "--root", nested, "--root", patch, "--by", "agent", "--json",
    ]);
    let agents: Vec<&str> = both["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["agent"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["claude", "codex"]);
    let one = |home: &str| {
        json_of(&["usage", "--root", home, "--json"])["totals"]["totalTokens"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(
        both["totals"]["totalTokens"].as_u64().unwrap(),
        one(nested) + one(patch)
    );
    let run = |args: &[&str]| insights().args(args).output().unwrap();
    let err = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    for cmd in ["usage", "sessions"] {
        let o = run(&[cmd, "--root", "/nonexistent"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", err(&o));
        assert_eq!(
            err(&o),
            "insights: --root /nonexistent: no such file or directory\n"
        );
        let empty = temp(&format!("empty-{cmd}"));
        let e = empty.to_str().unwrap();
        let o = run(&[cmd, "--root", e]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", err(&o));
        assert!(o.stdout.is_empty(), "{cmd}");
        let what = if cmd == "usage" {
            "token usage"
        } else {
            "sessions"
        };
        assert!(
            err(&o).starts_with(&format!(
                "insights: no {what} found (--allow-empty accepts this)\n\
                 insights: looked in {e}/.config/claude/projects (missing), {e}/.claude/projects \
                 (missing), {e}/.codex/sessions (missing)"
            )),
            "{cmd}: {}",
            err(&o)
        );
        let o = run(&[cmd, "--root", e, "--allow-empty", "--json"]);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", err(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v.is_object(), "{cmd}: JSON all the same");
        std::fs::remove_dir_all(&empty).unwrap();
        // Stream captures are not session files.
        let o = run(&[cmd, "testdata/codex-exec"]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", err(&o));
        assert!(
            err(&o).contains("insights: looked in testdata/codex-exec (")
                && err(&o).contains("a stream capture"),
            "{cmd}: {}",
            err(&o)
        );
        // Filters that keep nothing are an answer.
        let o = run(&[cmd, nested, "--since", "2030-01-01"]);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", err(&o));
        assert!(
            err(&o).contains("none that --since keeps"),
            "{cmd}: {}",
            err(&o)
        );
    }
}

#[test]
fn root_reads_the_standard_places_of_another_home() {
    let home = root().join(PATCH);
    let v = json_of(&[
        "usage",
        "--root",
        home.to_str().unwrap(),
        "--by",
        "agent",
        "--json",
    ]);
    assert_eq!(v["rows"][0]["agent"], "codex");
    assert_eq!(v["totals"]["inputTokens"], 9_752);
    let out = insights()
        .args(["usage", "--root", home.to_str().unwrap()])
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("9,752"), "{table}");
    assert!(
        table.lines().last().unwrap().starts_with("total"),
        "{table}"
    );
}

#[test]
fn sessions_lists_each_session_with_its_turns_and_files() {
    let v = json_of(&["sessions", NESTED, PATCH, "--json"]);
    let s = v["sessions"].as_array().unwrap();
    assert_eq!(s.len(), 2, "{v}");
    // Most recent first.
    assert_eq!(s[0]["agent"], "codex");
    assert_eq!(s[0]["sessionId"], "01a217fd-b4b1-7732-8aef-8e7a49980a0c");
    assert_eq!(s[0]["turns"], 1);
    assert_eq!(s[0]["project"], "/home/dev/work");
    assert_eq!(s[1]["agent"], "claude");
    // One prompt from the person; the subagents' prompts are not the session's turns.
    assert_eq!(s[1]["turns"], 1);
    assert_eq!(s[1]["firstTime"], "2026-11-26T13:12:04.289Z");
    assert_eq!(s[1]["paths"].as_array().unwrap().len(), 3);
    assert_eq!(s[1]["costUsd"], 0.200974);
}

#[test]
fn the_numbers_are_ccusage_s() {
    // Installs ccusage 20.0.24 with npm when it can; prints "skipped" when it cannot.
    let out = std::process::Command::new("python3")
        .arg(root().join("tests/ccusage_compare.py"))
        .arg(env!("CARGO_BIN_EXE_insights"))
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: no python3");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
}

#[test]
fn counts_beyond_u64_saturate_and_never_stop_the_run() {
    let d = temp("huge");
    let line = |id: &str| {
        format!(
            r#"{{"type":"assistant","timestamp":"2026-11-20T10:00:00.000Z","sessionId":"s","requestId":"r{id}","message":{{"id":"{id}","model":"claude-opus-4-8","usage":{{"input_tokens":18446744073709551615,"output_tokens":1}}}}}}"#
        )
    };
    std::fs::write(
        d.join("s.jsonl"),
        format!("{}\n{}\nnot json\n", line("a"), line("b")),
    )
    .unwrap();
    let v = json_of(&["usage", d.to_str().unwrap(), "--json"]);
    assert_eq!(v["totals"]["inputTokens"], u64::MAX);
    assert_eq!(v["totals"]["outputTokens"], 2);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A Codex turn its goal started (`task_started` with `turn_trigger` `goal`, after the person's
/// prompt) is a turn the agent ran: `sessions` counts two, as `reduce` lists two.
#[test]
fn a_codex_turn_started_by_its_goal_counts_as_a_turn() {
    let d = "testdata/session-files/codex-app-server/input-search-goal";
    let v = json_of(&["sessions", "--json", d]);
    let s = &v["sessions"][0];
    assert_eq!(s["turns"], 2, "{v:#}");
}

/// `--breakdown` lists each row's models, with the numbers `--by KEY,model` gives them;
/// `--order desc` reverses the rows; `--compact` keeps the keys, input, output, total and cost.
#[test]
fn breakdown_order_and_compact_are_ccusage_s_options() {
    let all = "testdata/session-files";
    let by_model = json_of(&["usage", "--by", "agent,model", "--json", "--tz", "UTC", all]);
    let broken = json_of(&[
        "usage",
        "--by",
        "agent",
        "--breakdown",
        "--json",
        "--tz",
        "UTC",
        all,
    ]);
    let mut from_breakdown = Vec::new();
    for row in broken["rows"].as_array().unwrap() {
        let parts = row["breakdown"].as_array().unwrap();
        let mut sum = [0u64; 5];
        for m in parts {
            from_breakdown.push((row["agent"].clone(), m["model"].clone(), tokens(m)));
            for (s, t) in sum.iter_mut().zip(tokens(m)) {
                *s += t;
            }
        }
        assert_eq!(sum, tokens(row), "{row}");
    }
    let expected: Vec<(Value, Value, [u64; 5])> = by_model["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["agent"].clone(), r["model"].clone(), tokens(r)))
        .collect();
    assert_eq!(from_breakdown, expected);
    let asc = json_of(&["usage", "--by", "day", "--json", "--tz", "UTC", all]);
    let desc = json_of(&[
        "usage", "--by", "day", "--order", "desc", "--json", "--tz", "UTC", all,
    ]);
    let mut rows = asc["rows"].as_array().unwrap().clone();
    rows.reverse();
    assert_eq!(&rows, desc["rows"].as_array().unwrap());
    assert_eq!(asc["totals"], desc["totals"]);
    let out = insights()
        .args(["usage", "--by", "agent", "--compact", "--tz", "UTC", all])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let head: Vec<&str> = text
        .lines()
        .next()
        .unwrap()
        .split("  ")
        .filter(|c| !c.is_empty())
        .map(str::trim)
        .collect();
    assert_eq!(
        head,
        ["agent", "input", "output", "total tokens", "cost (USD)"],
        "{text}"
    );
}

/// `--by block` on recorded sessions: Claude's three blocks with the gaps between them, by
/// ccusage's rules (tests/ccusage_compare.py checks them against ccusage itself).
#[test]
fn billing_blocks_start_at_the_hour_and_gaps_are_rows() {
    let v = json_of(&[
        "usage",
        "--by",
        "block",
        "--agent",
        "claude",
        "--json",
        "testdata/session-files",
    ]);
    let blocks = v["blocks"].as_array().unwrap();
    for b in blocks {
        let id = b["id"].as_str().unwrap();
        if b["isGap"] == true {
            assert!(id.starts_with("gap-") && b["entries"] == 0, "{b}");
        } else {
            assert!(
                id.ends_with(":00:00.000Z"),
                "a block starts at the hour: {b}"
            );
            assert_eq!(b["startTime"], b["id"]);
        }
        assert!(b["isActive"] == false && b["burnRate"].is_null(), "{b}");
    }
    // The recorded sessions are of three days, more than 5 hours apart: a gap between each.
    let gaps: Vec<bool> = blocks.iter().map(|b| b["isGap"] == true).collect();
    assert!(gaps.windows(2).all(|w| !(w[0] && w[1])), "{gaps:?}");
    let tokens_in_blocks: u64 = blocks
        .iter()
        .map(|b| b["totalTokens"].as_u64().unwrap())
        .sum();
    let usage = json_of(&[
        "usage",
        "--by",
        "agent",
        "--agent",
        "claude",
        "--json",
        "testdata/session-files",
    ]);
    assert_eq!(
        tokens_in_blocks,
        usage["totals"]["totalTokens"].as_u64().unwrap()
    );
    let out = insights()
        .args(["usage", "--by", "block,day", "testdata/session-files"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `insights statusline` reads Claude Code's status JSON: the model's name, the session's cost
/// from Claude Code, the context after the transcript's last response (input, cache read and
/// write, and its output: what the next request reads) against the window Claude Code gives;
/// input it cannot read still gets a line, and exit status 0. (tests/ccusage_compare.py checks
/// its figures against ccusage's statusline.)
#[test]
fn statusline_says_what_claude_code_s_json_and_the_transcript_tell() {
    let home = temp("statusline");
    let transcript = root().join(NESTED).join(".claude/projects/-home-dev-work");
    let transcript = crate::util::files_ending(&transcript, ".jsonl")
        .into_iter()
        .find(|p| !p.to_string_lossy().contains("subagents"))
        .unwrap();
    // The last main-agent response of that file, its `usage` summed here.
    let last = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "assistant" && v["isSidechain"] != true)
        .last()
        .unwrap();
    let u = &last["message"]["usage"];
    let used: u64 = [
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    ]
    .iter()
    .map(|k| u[k].as_u64().unwrap_or(0))
    .sum();
    let status = serde_json::json!({
        "session_id": "s", "transcript_path": transcript,
        "model": {"id": "claude-opus-4-8", "display_name": "Opus"},
        "cost": {"total_cost_usd": 1.234},
        "context_window": {"context_window_size": 200000},
    });
    let run = |input: &str| {
        use std::io::Write;
        let mut child = insights()
            .args(["statusline", "--root"])
            .arg(&home)
            .env("TZ", "UTC")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let line = run(&status.to_string());
    let pct = (used as f64 * 100.0 / 200000.0).round() as u64;
    let (head, context) = line.trim_end().rsplit_once(" | 🧠 ").unwrap();
    assert_eq!(head, "🤖 Opus | 💰 $1.23 session / $0.00 today", "{line}");
    assert_eq!(
        context.replace(',', ""),
        format!("{used} ({pct}%)"),
        "{line}"
    );
    assert_eq!(run("not json"), "🤖 ? | 💰 $? session / $0.00 today\n");
}

/// GitHub Copilot CLI's exporter file (`COPILOT_OTEL_FILE_EXPORTER_PATH`) is read beside
/// `~/.copilot/otel`, once when it is in that folder; `CODEBUFF_DATA_DIR` replaces Codebuff's
/// channels (tests/usage-samples/, from ccusage's tests).
#[test]
fn copilot_s_exporter_file_and_codebuff_s_data_dir_are_read_once() {
    let d = temp("copilot-codebuff");
    let samples = root().join("tests/usage-samples");
    let otel = samples.join("copilot/.copilot/otel");
    let elsewhere = d.join("export.jsonl");
    std::fs::copy(otel.join("copilot-a.jsonl"), &elsewhere).unwrap();
    let input = |exporter: &std::path::Path| {
        let out = insights()
            .env("HOME", samples.join("copilot"))
            .env("COPILOT_OTEL_FILE_EXPORTER_PATH", exporter)
            .args(["usage", "--agent", "copilot", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["totals"]["inputTokens"].as_u64().unwrap()
    };
    // The four files: 19,329 + 60 + 90 input; the exporter's copy of the first adds its 19,329.
    assert_eq!(input(&otel.join("copilot-a.jsonl")), 19_479);
    assert_eq!(input(&elsewhere), 19_479 + 19_329);
    let channel = samples.join("codebuff/.config/manicode-dev");
    let out = insights()
        .env("HOME", &d)
        .env("CODEBUFF_DATA_DIR", &channel)
        .args(["usage", "--agent", "codebuff", "--by", "session", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["rows"][0]["session"],
        "manicode-dev/project-a/2026-01-02T03-04-05.000Z"
    );
    assert_eq!(v["rows"].as_array().unwrap().len(), 1);
    std::fs::remove_dir_all(&d).unwrap();
}
