//! The command line as a Unix filter: arguments and stdin, exit statuses, diagnostics, the
//! options that shape the output (`--raw`, `--no-timestamp`, `--from`, `--compat`,
//! `--strict`), numbering and ids across files, and the pipe behaviour (live output, a reader
//! that goes away).

use crate::golden::{captures, golden_of};
use crate::util::{captures_of, insights, root, run};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The clean capture the hostile inputs are made from.
pub const TEXT_ONLY: &str = "testdata/claude/text-only.jsonl";

/// The 17 event types of CC-Insights, in the order of the design.
const CC_INSIGHTS: &[&str] = &[
    "session_init",
    "session_status",
    "text",
    "user_input",
    "tool_invocation",
    "tool_completion",
    "subagent_spawn",
    "subagent_complete",
    "turn_complete",
    "context_compaction",
    "permission_request",
    "config_options",
    "available_commands",
    "session_mode",
    "stream_delta",
    "usage_update",
    "rate_limit_update",
];

/// The exit code; a death by signal fails the test.
pub fn code(out: &Output) -> i32 {
    out.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {:?}\n{}", out.status, stderr(out)))
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every stdout line parsed as a JSON object.
pub fn events(out: &Output) -> Vec<Value> {
    let text = std::str::from_utf8(&out.stdout).expect("stdout is UTF-8");
    text.lines().map(event).collect()
}

/// One output line as a JSON object. Members nested deeper than serde_json's recursion limit
/// (128) become the string `"<N bytes nested too deep>"` instead of failing the test.
pub fn event(line: &str) -> Value {
    let v = match serde_json::from_str::<Value>(line) {
        Ok(v) => v,
        Err(_) => {
            let members: std::collections::BTreeMap<String, Box<serde_json::value::RawValue>> =
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("stdout line is not a JSON object: {e}: {line}"));
            Value::Object(
                members
                    .into_iter()
                    .map(|(k, raw)| {
                        let v = serde_json::from_str(raw.get()).unwrap_or_else(|_| {
                            Value::from(format!("<{} bytes nested too deep>", raw.get().len()))
                        });
                        (k, v)
                    })
                    .collect(),
            )
        }
    };
    assert!(v.is_object(), "not an object: {line}");
    v
}

/// The lines of a file, without their `\n`.
pub fn lines_of(rel: &str) -> Vec<String> {
    std::fs::read_to_string(root().join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Lines joined with `\n` after each.
pub fn jsonl(lines: &[&str]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| [l.as_bytes(), b"\n"])
        .flatten()
        .copied()
        .collect()
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

fn str_of<'a>(ev: &'a Value, key: &str) -> &'a str {
    ev[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string: {ev}"))
}

fn u64_of(ev: &Value, key: &str) -> u64 {
    ev[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not an unsigned integer: {ev}"))
}

/// An event with `seq` removed, as a string: what must not change when files are combined.
fn without_seq(ev: &Value) -> String {
    let mut ev = ev.clone();
    ev.as_object_mut().expect("object").remove("seq");
    ev.to_string()
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, with fields in range.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
            && s[r].parse::<u32>().is_ok()
    };
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(99);
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
        || !matches!(b[10], b'T' | b't')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    if !(1..=12).contains(&num(5..7))
        || !(1..=31).contains(&num(8..10))
        || num(11..13) > 23
        || num(14..16) > 59
        || num(17..19) > 60
    {
        return false;
    }
    let mut i = 19;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match &s[i..] {
        "Z" | "z" => true,
        zone => {
            let z = zone.as_bytes();
            z.len() == 6
                && matches!(z[0], b'+' | b'-')
                && z[1..3].iter().all(u8::is_ascii_digit)
                && z[3] == b':'
                && z[4..6].iter().all(u8::is_ascii_digit)
        }
    }
}

#[test]
fn rfc3339_checker_works() {
    for ok in [
        "2026-11-22T02:19:59.933Z",
        "2026-11-22T02:19:59Z",
        "2026-11-22T02:19:59+01:00",
    ] {
        assert!(is_rfc3339(ok), "{ok}");
    }
    for bad in [
        "yesterday",
        "2026-11-22 02:19:59Z",
        "2026-11-22T02:19:59",
        "2026-13-22T02:19:59Z",
        "2026-11-22T02:19:59.Z",
        "1700000000",
    ] {
        assert!(!is_rfc3339(bad), "{bad}");
    }
}

// ---------------------------------------------------------------------------------------------
// Informational commands and usage errors

#[test]
fn version_and_help_exit_0() {
    let out = run(&["--version"], b"");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = String::from_utf8_lossy(&out.stdout);
    assert_eq!(v.trim(), format!("insights {}", env!("CARGO_PKG_VERSION")));

    let out = run(&["--help"], b"");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    for word in [
        "Usage:",
        "--from",
        "--raw",
        "--no-timestamp",
        "--strict",
        "Exit status",
    ] {
        assert!(help.contains(word), "--help lacks {word:?}:\n{help}");
    }
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn schema_prints_json() {
    let out = run(&["schema"], b"");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("`insights schema` prints JSON");
    assert!(v.is_object(), "the schema is an object: {v}");
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_2_and_convert_nothing() {
    let line = jsonl(&[r#"{"type":"keep_alive"}"#]);
    let cases: &[&[&str]] = &[
        &["--from", "nope"],
        &["--from"],
        &["--bogus"],
        &["-z"],
        &["--compat", "nope"],
        &["--max-line-bytes", "lots"],
        &["--max-line-bytes", "-1"],
        &["--line-buffered", "--block-buffered"],
        &["--color", "sometimes"],
        &["completions", "tcsh"],
    ];
    for args in cases {
        let out = run(args, &line);
        assert_eq!(code(&out), 2, "insights {args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "insights {args:?} wrote to stdout");
        assert!(!out.stderr.is_empty(), "insights {args:?}: no message");
    }
    let out = run(&["--from", "nope"], &line);
    let err = stderr(&out);
    assert!(err.contains("nope") && err.contains("claude"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Inputs

#[test]
fn no_file_and_dash_read_stdin() {
    let input = std::fs::read(root().join(TEXT_ONLY)).expect("capture");
    let golden = std::fs::read_to_string(golden_of(&root().join(TEXT_ONLY))).expect("golden");
    for args in [&["--no-timestamp"][..], &["--no-timestamp", "-"][..]] {
        let out = run(args, &input);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        assert!(out.stderr.is_empty(), "{args:?}: {}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), golden, "{args:?}");
    }
}

#[test]
fn files_are_read_in_order_and_seq_runs_across_them() {
    let a = "testdata/claude/text-only.jsonl";
    let b = "testdata/claude/failing-tool.jsonl";
    let c = "testdata/claude/api-error.jsonl";
    let stdin = std::fs::read(root().join(b)).expect("capture");
    let out = run(&["--no-timestamp", a, "-", c], &stdin);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let got = events(&out);

    let mut want = Vec::new();
    for f in [a, b, c] {
        let golden = std::fs::read_to_string(golden_of(&root().join(f))).expect("golden");
        for l in golden.lines() {
            want.push(without_seq(&serde_json::from_str(l).expect("golden JSON")));
        }
    }
    let got_plain: Vec<String> = got.iter().map(without_seq).collect();
    assert_eq!(got_plain, want, "events of a, stdin, c in that order");
    let seqs: Vec<u64> = got.iter().map(|e| u64_of(e, "seq")).collect();
    let expected: Vec<u64> = (1..=got.len() as u64).collect();
    assert_eq!(
        seqs, expected,
        "seq is 1-based and consecutive across files"
    );
}

#[test]
fn a_missing_file_exits_2_and_the_others_are_converted() {
    let a = "testdata/claude/text-only.jsonl";
    let missing = "testdata/claude/no-such-capture.jsonl";
    let c = "testdata/claude/api-error.jsonl";
    let out = run(&["--no-timestamp", a, missing, c], b"");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one message:\n{err}");
    assert!(
        lines[0].starts_with(&format!("insights: {missing}: error: ")),
        "names the file: {err}"
    );
    assert!(
        lines[0].ends_with(": error: no such file or directory"),
        "says why in words, without `(os error 2)`: {err}"
    );
    let got: Vec<String> = events(&out).iter().map(without_seq).collect();
    let mut want = Vec::new();
    for f in [a, c] {
        let golden = std::fs::read_to_string(golden_of(&root().join(f))).expect("golden");
        want.extend(
            golden
                .lines()
                .map(|l| without_seq(&serde_json::from_str(l).expect("golden JSON"))),
        );
    }
    assert_eq!(got, want, "both other files converted");
}

#[test]
fn a_directory_stands_for_its_jsonl_files_in_path_order_for_every_command() {
    let dir = "testdata/session-files/codex-app-server/multi-patch";
    let files = {
        let mut v = Vec::new();
        let mut stack = vec![std::path::PathBuf::from(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "jsonl") {
                    v.push(p.to_string_lossy().into_owned());
                }
            }
        }
        v.sort();
        v
    };
    assert!(!files.is_empty(), "the session file is there");
    for cmd in [
        &["--no-timestamp"][..],
        &["reduce"],
        &["replay", "--color", "never"],
    ] {
        let by_dir = run(&[cmd, &[dir]].concat(), b"");
        let by_files: Vec<&str> = cmd
            .iter()
            .copied()
            .chain(files.iter().map(String::as_str))
            .collect();
        let by_files = run(&by_files, b"");
        assert_eq!(code(&by_dir), 0, "{cmd:?}: {}", stderr(&by_dir));
        assert_eq!(by_dir.stdout, by_files.stdout, "{cmd:?}");
    }
    // A directory with no *.jsonl file says so.
    let empty = std::env::temp_dir().join(format!("insights-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("temp dir");
    let out = run(
        &["--no-timestamp", &empty.to_string_lossy(), TEXT_ONLY],
        b"",
    );
    assert!(
        stderr(&out).contains("no *.jsonl files"),
        "{}",
        stderr(&out)
    );
    assert_eq!(events(&out).len(), 5, "the capture after it is converted");
    let _ = std::fs::remove_dir(&empty);
}

#[test]
fn io_errors_win_over_bad_lines_in_the_exit_status() {
    let out = run(
        &["--no-timestamp", "-", "testdata/no-such-file.jsonl"],
        b"nope\n",
    );
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 2, "{}", stderr(&out));
}

#[test]
fn diagnostics_name_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("insights-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let f = dir.join("two-bad.jsonl");
    std::fs::write(&f, "{\"type\":\"keep_alive\"}\nnot json\n\n{\"a\":\n").expect("write");
    let f = f.to_string_lossy().into_owned();
    let out = run(&["--no-timestamp", &f, "-"], b"\n\n[1,2]\n");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    let locs: Vec<String> = err
        .lines()
        .map(|l| {
            let rest = l
                .strip_prefix("insights: ")
                .unwrap_or_else(|| panic!("prefix: {l}"));
            let (loc, msg) = rest
                .split_once(": error: ")
                .unwrap_or_else(|| panic!("{l}"));
            assert!(!msg.is_empty(), "{l}");
            // FILE:LINE:COL, the column being what comes after the last `:`.
            let (file_line, col) = loc.rsplit_once(':').expect("FILE:LINE:COL");
            assert!(col.parse::<u64>().is_ok_and(|c| c >= 1), "column: {l}");
            file_line.to_owned()
        })
        .collect();
    assert_eq!(
        locs,
        [format!("{f}:2"), format!("{f}:4"), "<stdin>:3".to_owned()],
        "{err}"
    );
}

#[test]
fn blank_lines_are_ignored() {
    let out = run(&["--no-timestamp"], b"\n \n\t\r\n\r\n   \n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );
}

#[test]
fn empty_input_is_fine() {
    let out = run(&["--no-timestamp"], b"");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );
}

// ---------------------------------------------------------------------------------------------
// Bad lines and --strict

#[test]
fn a_bad_line_does_not_stop_the_run() {
    let text = lines_of(TEXT_ONLY);
    let input = jsonl(&[&text[0], "garbage", &text[1], "[1]", &text[2]]);
    let out = run(&["--no-timestamp"], &input);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 2, "{}", stderr(&out));
    let lines: Vec<u64> = events(&out).iter().map(|e| u64_of(e, "line")).collect();
    // Line 1 is the init and the turn start inferred after it.
    assert_eq!(lines, [1, 1, 3, 3, 5]);
}

#[test]
fn strict_stops_at_the_first_bad_line() {
    let text = lines_of(TEXT_ONLY);
    let input = jsonl(&[&text[0], "garbage", &text[1], "also garbage", &text[2]]);
    // The bad line is on stdin; the file after it must not be read either.
    let out = run(&["--no-timestamp", "--strict", "-", TEXT_ONLY], &input);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one diagnostic, then stop:\n{err}");
    assert!(err.starts_with("insights: <stdin>:2:"), "{err}");
    let got = events(&out);
    assert_eq!(got.len(), 2, "only line 1 converted");
    assert_eq!(str_of(&got[0], "event"), "session_init");
    assert_eq!(str_of(&got[1], "event"), "turn_start");
}

#[test]
fn strict_on_a_later_file_keeps_what_came_before() {
    let out = run(
        &["--no-timestamp", "--strict", TEXT_ONLY, "-", TEXT_ONLY],
        b"{\"type\":\"keep_alive\"}\n{\"a\":\n{\"type\":\"keep_alive\"}\n",
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("insights: <stdin>:2:"),
        "{}",
        stderr(&out)
    );
    assert_eq!(events(&out).len(), 6, "the first file and stdin line 1");
}

#[test]
fn strict_without_bad_lines_changes_nothing() {
    let out = run(&["--no-timestamp", "--strict", TEXT_ONLY], b"");
    let plain = run(&["--no-timestamp", TEXT_ONLY], b"");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(out.stdout, plain.stdout);
    assert!(out.stderr.is_empty());
}

#[test]
fn an_unknown_object_becomes_a_raw_event() {
    let out = run(&["--no-timestamp"], b"{\"hello\":\"world\",\"n\":[1,2]}\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let got = events(&out);
    assert_eq!(got.len(), 1);
    assert_eq!(str_of(&got[0], "event"), "raw");
    assert_eq!(str_of(&got[0], "provider"), "unknown");
    assert_eq!(u64_of(&got[0], "line"), 1);
    assert_eq!(
        got[0]["raw"],
        serde_json::json!({"hello": "world", "n": [1, 2]})
    );
    assert!(!str_of(&got[0], "reason").is_empty());
}

#[test]
fn from_claude_forces_the_provider() {
    let input = jsonl(&[
        r#"{"type":"brand_new_type","x":1}"#,
        r#"{"hello":"world"}"#,
        r#"{"type":"keep_alive"}"#,
    ]);
    let auto = events(&run(&["--no-timestamp"], &input));
    let providers: Vec<&str> = auto.iter().map(|e| str_of(e, "provider")).collect();
    assert_eq!(providers, ["unknown", "unknown", "claude"]);

    let out = run(&["--no-timestamp", "--from", "claude"], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let forced = events(&out);
    let summary: Vec<(&str, &str)> = forced
        .iter()
        .map(|e| (str_of(e, "event"), str_of(e, "provider")))
        .collect();
    assert_eq!(
        summary,
        [("raw", "claude"), ("raw", "claude"), ("notice", "claude")]
    );
    assert_eq!(
        forced[0]["raw"],
        serde_json::json!({"type": "brand_new_type", "x": 1})
    );
    assert_eq!(forced[1]["raw"], serde_json::json!({"hello": "world"}));

    // Forcing the provider a capture is detected as changes nothing.
    for cap in captures() {
        let cap = rel(&cap);
        if !cap.starts_with("testdata/claude") {
            continue;
        }
        let a = run(&["--no-timestamp", &cap], b"");
        let b = run(&["--no-timestamp", "--from", "claude", &cap], b"");
        assert_eq!(code(&b), 0, "{cap}: {}", stderr(&b));
        assert!(
            a.stdout == b.stdout,
            "{cap}: --from claude differs from auto"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// What the events carry

#[test]
fn raw_attaches_the_input_line_to_every_event() {
    for cap in captures() {
        let cap = rel(&cap);
        let input = lines_of(&cap);
        let out = run(&["--no-timestamp", "--raw", &cap], b"");
        assert_eq!(code(&out), 0, "{cap}: {}", stderr(&out));
        let got = events(&out);
        assert!(!got.is_empty(), "{cap}");
        for ev in &got {
            // What the end of the input writes (the whole text of a message it left open) has
            // no line of its own, and no `raw`.
            if ev.get("raw").is_none() && ev["extensions"]["insights.inferred"] == true {
                continue;
            }
            let line = u64_of(ev, "line") as usize;
            let original: Value = serde_json::from_str(&input[line - 1]).expect("input JSON");
            assert!(
                ev["raw"] == original,
                "{cap}:{line}: raw is not the input line: {ev}"
            );
        }
        // Without --raw, the same events without the member.
        let plain = events(&run(&["--no-timestamp", &cap], b""));
        let stripped: Vec<Value> = got
            .into_iter()
            .map(|mut e| {
                e.as_object_mut().expect("object").remove("raw");
                e
            })
            .collect();
        assert!(stripped == plain, "{cap}: --raw changes more than `raw`");
    }
}

#[test]
fn every_event_has_a_timestamp_unless_no_timestamp() {
    for cap in captures() {
        let cap = rel(&cap);
        let input = lines_of(&cap);
        // The line's own time: Claude's `timestamp`, AceClaw's (in `params`, else the bridge's
        // `receivedAt`), or epoch milliseconds in RFC 3339 (Codex's `emittedAtMs`, OpenCode's
        // numeric `timestamp`, Cursor's `timestamp_ms`).
        let own_time = |line: u64| -> Option<String> {
            let v: Value = serde_json::from_str(&input[line as usize - 1]).ok()?;
            let millis = v["emittedAtMs"]
                .as_u64()
                .or_else(|| v["timestamp"].as_u64())
                .or_else(|| v["timestamp_ms"].as_u64());
            if let Some(ms) = millis {
                let out = run(
                    &["--no-timestamp"],
                    format!(
                        "{{\"method\":\"turn/started\",\"params\":{{}},\"emittedAtMs\":{ms}}}\n"
                    )
                    .as_bytes(),
                );
                return events(&out)[0]["timestamp"].as_str().map(str::to_owned);
            }
            let aceclaw = |call: &Value| {
                call["method"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("stream."))
                    .then(|| call["params"]["timestamp"].clone())
            };
            [
                Some(v["timestamp"].clone()),
                aceclaw(&v),
                aceclaw(&v["event"]),
                Some(v["receivedAt"].clone()),
            ]
            .into_iter()
            .flatten()
            .find_map(|t| t.as_str().filter(|t| is_rfc3339(t)).map(str::to_owned))
        };

        let out = run(&[&cap], b"");
        assert_eq!(code(&out), 0, "{cap}: {}", stderr(&out));
        for ev in events(&out) {
            let ts = ev["timestamp"]
                .as_str()
                .unwrap_or_else(|| panic!("{cap}: no timestamp: {ev}"));
            assert!(is_rfc3339(ts), "{cap}: not RFC 3339: {ts}");
            if let Some(own) = own_time(u64_of(&ev, "line")) {
                assert_eq!(ts, own, "{cap}: the line's own time is kept: {ev}");
            }
        }

        for ev in events(&run(&["--no-timestamp", &cap], b"")) {
            match own_time(u64_of(&ev, "line")) {
                Some(own) => assert_eq!(ev["timestamp"], own.as_str(), "{cap}: {ev}"),
                None => assert!(ev.get("timestamp").is_none(), "{cap}: stamped: {ev}"),
            }
        }
    }
    // Raw events of unknown lines are stamped too.
    let out = run(&[], b"{\"hello\":1}\n");
    let got = events(&out);
    assert!(
        is_rfc3339(got[0]["timestamp"].as_str().unwrap_or("")),
        "{:?}",
        got
    );
}

#[test]
fn ids_are_unique_within_a_capture_and_stable_across_runs() {
    for cap in captures() {
        let cap = rel(&cap);
        // With the clock on, so that only `timestamp` may differ between runs.
        let ids = |out: &Output| -> Vec<String> {
            events(out)
                .iter()
                .map(|e| str_of(e, "id").to_owned())
                .collect()
        };
        let a = ids(&run(&[&cap], b""));
        let b = ids(&run(&[&cap], b""));
        assert_eq!(a, b, "{cap}: ids differ between runs");
        let mut seen = BTreeSet::new();
        for id in &a {
            assert!(!id.is_empty(), "{cap}: empty id");
            assert!(seen.insert(id), "{cap}: id {id} twice");
        }
    }
}

#[test]
fn converting_the_output_again_is_a_no_op() {
    // Several files in one run, and with --raw: the result passes through unchanged.
    let files = [
        "testdata/claude/thinking-tool.jsonl",
        "testdata/claude/subagent.jsonl",
    ];
    for extra in [&[][..], &["--raw"][..]] {
        let mut args = vec!["--no-timestamp"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&files);
        let once = run(&args, b"");
        assert_eq!(code(&once), 0, "{}", stderr(&once));
        let twice = run(&["--no-timestamp"], &once.stdout);
        assert_eq!(code(&twice), 0, "{}", stderr(&twice));
        assert!(twice.stderr.is_empty(), "{}", stderr(&twice));
        assert!(
            once.stdout == twice.stdout,
            "{args:?} converted again differs:\n{}",
            String::from_utf8_lossy(&twice.stdout)
        );
    }
    // Timestamps from the clock survive a second pass too.
    let once = run(&[TEXT_ONLY], b"");
    let twice = run(&[], &once.stdout);
    assert!(
        once.stdout == twice.stdout,
        "stamped output converted again differs"
    );
}

// ---------------------------------------------------------------------------------------------
// --compat cc-insights

#[test]
fn compat_cc_insights_writes_only_its_17_types_and_counts_the_rest() {
    let mut dropped_somewhere = false;
    for cap in captures() {
        let cap = rel(&cap);
        // CC-Insights requires timestamps: no --no-timestamp here.
        let out = run(&["--compat", "cc-insights", &cap], b"");
        assert_eq!(code(&out), 0, "{cap}: {}", stderr(&out));
        let got = events(&out);
        for ev in &got {
            let t = str_of(ev, "event");
            assert!(
                CC_INSIGHTS.contains(&t),
                "{cap}: {t} is not a CC-Insights type"
            );
        }
        let seqs: Vec<u64> = got.iter().map(|e| u64_of(e, "seq")).collect();
        assert_eq!(
            seqs,
            (1..=got.len() as u64).collect::<Vec<_>>(),
            "{cap}: seq"
        );

        // What went missing: additions CC-Insights cannot fold (plan_update and error
        // become text, so they are not counted as dropped).
        let all = events(&run(&[&cap], b""));
        let missing = all.len() - got.len();
        let err = stderr(&out);
        if missing == 0 {
            assert!(err.is_empty(), "{cap}: note without drops: {err}");
            continue;
        }
        dropped_somewhere = true;
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{cap}: one note:\n{err}");
        let prefix = format!(
            "insights: note: --compat cc-insights dropped {missing} events with no CC-Insights type ("
        );
        let detail = lines[0]
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{cap}: note {:?}, want {prefix}…)", lines[0]));
        let mut counted: BTreeMap<String, usize> = BTreeMap::new();
        for part in detail.split(", ") {
            let (kind, n) = part
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("{cap}: {part}"));
            counted.insert(kind.to_owned(), n.parse().expect("a count"));
        }
        assert_eq!(counted.values().sum::<usize>(), missing, "{cap}: {err}");
        for (kind, n) in &counted {
            let present = all.iter().filter(|e| str_of(e, "event") == kind).count();
            assert!(
                present >= *n,
                "{cap}: dropped {n} {kind}, only {present} produced"
            );
        }
    }
    assert!(dropped_somewhere, "no capture exercised a drop");

    // Unknown lines become raw events, which CC-Insights has no type for.
    let out = run(&["--compat", "cc-insights"], b"{\"hello\":1}\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        "insights: note: --compat cc-insights dropped 1 events with no CC-Insights type (raw 1)\n"
    );
}

// ---------------------------------------------------------------------------------------------
// Pipes

/// A large input: the lines of a real capture repeated with distinct content.
fn big_input(lines: usize) -> Vec<u8> {
    let src = lines_of("testdata/claude/thinking-tool.jsonl");
    let mut out = Vec::new();
    for i in 0..lines {
        let mut v: Value = serde_json::from_str(&src[i % src.len()]).expect("capture JSON");
        let obj = v.as_object_mut().expect("object");
        if obj.contains_key("uuid") {
            obj.insert("uuid".into(), Value::from(format!("uuid-{i}")));
        }
        obj.insert("copy".into(), Value::from(i));
        serde_json::to_writer(&mut out, &v).expect("serialize");
        out.push(b'\n');
    }
    out
}

#[test]
fn a_reader_that_goes_away_ends_the_run_quietly() {
    // `insights big-input | head -1`
    let input = big_input(6000);
    let mut child = insights()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn insights");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        // Fails with a broken pipe once insights has gone: expected.
        let _ = stdin.write_all(&input);
    });
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("read one line");
    assert!(first.starts_with("{\"event\":\"session_init\""), "{first}");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    assert_eq!(
        code(&out),
        0,
        "exit status after the reader left: {:?}",
        out.status
    );
    assert!(out.stderr.is_empty(), "stderr: {}", stderr(&out));
}

#[test]
fn a_reader_that_goes_away_ends_a_run_on_several_threads() {
    // `insights -j2 big-file | head -1`: the writer stops, and the reader and workers must
    // not wait forever for it (they did: the reader blocked on a full work queue).
    // Claude SDK captures (long `control_response` lines) repeated to 24 MB: chunks of the
    // default size, the shape that deadlocked.
    let mut input = captures_of("claude-sdk");
    let one = input.clone();
    while input.len() < 24 << 20 {
        input.extend_from_slice(&one);
    }
    let path = std::env::temp_dir().join(format!("insights-epipe-{}.jsonl", std::process::id()));
    std::fs::write(&path, &input).expect("write input");
    let mut child = insights()
        .args(["--jobs", "2"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn insights");
    // `head -c 100`: gone after the first chunk, while the reader is chunks ahead.
    let mut stdout = child.stdout.take().expect("stdout");
    stdout.read_exact(&mut [0; 100]).expect("read 100 bytes");
    drop(stdout);
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("insights -j2 still running 30 s after its reader went away");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let _ = std::fs::remove_file(&path);
    assert_eq!(status.code(), Some(0), "exit status after the reader left");
}

#[test]
fn completions_to_a_reader_that_went_away_end_quietly() {
    // `insights completions bash | true`: stdout is a pipe nobody reads.
    let mut sink = std::process::Command::new("true")
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn true");
    let pipe = sink.stdin.take().expect("pipe");
    sink.wait().expect("wait true");
    let out = insights()
        .args(["completions", "bash"])
        .stdin(Stdio::null())
        .stdout(Stdio::from(pipe))
        .stderr(Stdio::piped())
        .output()
        .expect("run insights");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

/// Runs insights on pipes, with a thread forwarding its stdout lines to a channel.
struct Live {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<String>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Live {
    fn start(args: &[&str]) -> Live {
        let mut child = insights()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn insights");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Live {
            child,
            stdin,
            lines,
            reader: Some(reader),
        }
    }

    fn send(&mut self, line: &str) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(line.as_bytes()).expect("write");
        w.write_all(b"\n").expect("write");
        w.flush().expect("flush");
    }

    /// The next event, waiting at most 10 s.
    fn next(&self, what: &str) -> Value {
        let l = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("{what}: no event within 10 s ({e})"));
        serde_json::from_str(&l).expect("event JSON")
    }

    /// Closes stdin, waits, and returns the exit code, the rest of stdout and stderr.
    fn finish(mut self) -> (i32, Vec<Value>, String) {
        drop(self.stdin.take());
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            e.read_to_string(&mut err).expect("stderr");
        }
        let status = self.child.wait().expect("wait");
        self.reader
            .take()
            .expect("reader")
            .join()
            .expect("reader thread");
        let rest = self.lines.try_iter().map(|l| event(&l)).collect();
        (status.code().expect("exit code"), rest, err)
    }
}

fn assert_live(args: &[&str]) {
    let text = lines_of(TEXT_ONLY);
    let mut live = Live::start(args);
    live.send(&text[0]);
    let ev = live.next("after line 1");
    assert_eq!(str_of(&ev, "event"), "session_init", "{ev}");
    assert_eq!(str_of(&live.next("after line 1"), "event"), "turn_start");
    live.send(&text[1]);
    assert_eq!(str_of(&live.next("after line 2"), "event"), "text");
    assert_eq!(str_of(&live.next("after line 2"), "event"), "usage_update");
    live.send(&text[2]);
    assert_eq!(str_of(&live.next("after line 3"), "event"), "turn_complete");
    let (code, rest, err) = live.finish();
    assert_eq!(code, 0, "{err}");
    assert!(rest.is_empty(), "events after the end: {rest:?}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn output_is_live_on_pipes_by_default() {
    assert_live(&[]);
}

#[test]
fn line_buffered_output_is_live() {
    assert_live(&["--line-buffered"]);
}

/// The SDK's first prompt waits for the line that names its session only while that line is
/// there to read: on a live pipe whose writer has not sent it, the prompt is written at once,
/// as it came (src/providers/held.rs); in a file, the prompt is named, after the init and the
/// turn start.
#[test]
fn a_prompt_held_for_its_session_does_not_wait_on_a_live_pipe() {
    let sdk = std::fs::read_to_string(root().join("testdata/claude-sdk/edit-file.jsonl"))
        .expect("capture");
    let lines: Vec<&str> = sdk.lines().collect();
    assert!(lines[2].contains(r#""session_id":"""#), "{}", lines[2]);
    let mut live = Live::start(&[]);
    live.send(lines[2]);
    let ev = live.next("after the prompt");
    assert_eq!(str_of(&ev, "event"), "user_input", "{ev}");
    assert_eq!(str_of(&ev, "sessionId"), "", "{ev}");
    live.send(lines[3]);
    assert_eq!(
        str_of(&live.next("after the init"), "event"),
        "session_init"
    );
    let (code, _, err) = live.finish();
    assert_eq!(code, 0, "{err}");
    // The same lines from a file: the prompt follows the init, in its session and turn.
    let path = std::env::temp_dir().join(format!("insights-held-{}.jsonl", std::process::id()));
    std::fs::write(&path, format!("{}\n{}\n", lines[2], lines[3])).expect("write");
    let out = run(&[&path.to_string_lossy()], b"");
    std::fs::remove_file(&path).expect("remove");
    let evs: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(event)
        .collect();
    let kinds: Vec<&str> = evs.iter().map(|e| str_of(e, "event")).collect();
    assert_eq!(kinds, ["session_init", "turn_start", "user_input"]);
    assert_eq!(str_of(&evs[2], "sessionId"), str_of(&evs[0], "sessionId"));
    assert_eq!(evs[2]["line"], 1);
}

#[test]
fn block_buffered_output_waits_for_the_end() {
    let text = lines_of(TEXT_ONLY);
    let mut live = Live::start(&["--block-buffered"]);
    live.send(&text[0]);
    live.send(&text[1]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        live.lines.try_recv().is_err(),
        "--block-buffered wrote before its input ended"
    );
    let (code, rest, err) = live.finish();
    assert_eq!(code, 0, "{err}");
    let kinds: Vec<&str> = rest.iter().map(|e| str_of(e, "event")).collect();
    assert_eq!(
        kinds,
        ["session_init", "turn_start", "text", "usage_update"],
        "at the end"
    );
}

/// Standard output that is a pipe is widened to 1 MiB (fewer waits for the reader), whatever
/// the subcommand writes; where the machine refuses a pipe that large to anyone, there is
/// nothing to check.
#[cfg(target_os = "linux")]
#[test]
fn a_pipe_on_standard_output_is_widened() {
    use std::os::fd::AsRawFd;
    const MIB: i32 = 1 << 20;
    let (r, _w) = std::io::pipe().expect("pipe");
    // SAFETY: fcntl on a pipe this test owns.
    if unsafe { libc::fcntl(r.as_raw_fd(), libc::F_SETPIPE_SZ, MIB) } < MIB {
        return;
    }
    let file = "testdata/claude/subagent.jsonl";
    for args in [
        vec!["--no-timestamp", file],
        vec!["reduce", file],
        vec!["replay", "--color", "never", file],
        vec!["validate", file],
    ] {
        let mut child = insights()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn insights");
        let mut stdout = child.stdout.take().expect("stdout");
        let mut text = Vec::new();
        stdout.read_to_end(&mut text).expect("read");
        child.wait().expect("wait");
        // SAFETY: fcntl on the read end of the child's stdout pipe, which this test holds.
        let size = unsafe { libc::fcntl(stdout.as_raw_fd(), libc::F_GETPIPE_SZ) };
        assert_eq!(size, MIB, "insights {args:?}");
    }
}

#[test]
fn a_from_that_turns_most_lines_raw_is_warned_about_once_per_file() {
    let claude = TEXT_ONLY;
    let codex = "testdata/codex-exec/edit-file.jsonl";
    let (c, x) = (lines_of(claude), lines_of(codex));
    assert!(c.len() >= 3 && x.len() >= 6, "the captures changed");
    // Lines the Codex converter does not read (Claude's) and lines it does, `raw` of `lines`.
    let mixed = |raw: usize, lines: usize| -> Vec<u8> {
        let mut v: Vec<&str> = Vec::new();
        v.extend(c.iter().cycle().take(raw).map(String::as_str));
        v.extend(x.iter().cycle().take(lines - raw).map(String::as_str));
        jsonl(&v)
    };
    let warning = |raw: usize, lines: usize| {
        format!(
            "insights: <stdin>: warning: {raw} of {lines} lines did not convert as codex output \
             and fell back to raw; is --from codex right?\n"
        )
    };
    // More than half of at least 10 lines: warned, the status unchanged.
    for (raw, lines) in [(10, 10), (11, 20), (40, 41)] {
        let out = run(&["--no-timestamp", "--from", "codex"], &mixed(raw, lines));
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_eq!(stderr(&out), warning(raw, lines), "{raw} of {lines}");
        let raws = events(&out).iter().filter(|e| e["event"] == "raw").count();
        assert_eq!(raws, raw, "the lines are still kept");
    }
    // Half, or fewer than 10 lines: nothing said. Nor without --from, nor with the right one.
    for (raw, lines) in [(10, 20), (9, 9), (0, 12)] {
        let out = run(&["--no-timestamp", "--from", "codex"], &mixed(raw, lines));
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(out.stderr.is_empty(), "{raw} of {lines}: {}", stderr(&out));
    }
    let out = run(&["--no-timestamp"], &mixed(11, 20));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    // Once per file, named, for each file it holds for; reduce and replay say the same.
    let file = "testdata/claude/subagent-partial.jsonl";
    let n = lines_of(file).len();
    let said = format!(
        "insights: {file}: warning: {n} of {n} lines did not convert as codex output and fell \
         back to raw; is --from codex right?\n"
    );
    for cmd in [
        &["--no-timestamp"][..],
        &["reduce"],
        &["replay", "--color", "never"],
    ] {
        let args: Vec<&str> = cmd
            .iter()
            .copied()
            .chain(["--from", "codex", file, codex, file])
            .collect();
        let out = run(&args, b"");
        assert_eq!(code(&out), 0, "{cmd:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), said.repeat(2), "{cmd:?}");
    }
}

/// `--turn-ids` writes the turn on every event of it, and only adds that member: without it
/// the output is the golden's; with it, the same events, a Claude turn's named by its start's
/// id from `turn_start` to `turn_complete`, and `--jobs` changes nothing.
#[test]
fn turn_ids_name_every_event_of_a_turn() {
    let file = "testdata/claude/subagent.jsonl";
    let plain = run(&["--no-timestamp", file], b"");
    let named = run(&["--no-timestamp", "--turn-ids", file], b"");
    let jobs = run(&["--no-timestamp", "--turn-ids", "-j", "4", file], b"");
    assert_eq!(named.stdout, jobs.stdout);
    let events = |o: &Output| -> Vec<Value> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("an event"))
            .collect()
    };
    let (plain, named) = (events(&plain), events(&named));
    assert_eq!(plain.len(), named.len());
    let start = named
        .iter()
        .position(|e| e["event"] == "turn_start")
        .expect("a turn_start");
    let end = named
        .iter()
        .position(|e| e["event"] == "turn_complete")
        .expect("a turn_complete");
    let id = named[start]["id"].as_str().expect("an id");
    for (i, (p, n)) in plain.iter().zip(&named).enumerate() {
        assert!(p.get("turnId").is_none(), "{p}");
        let mut n = n.clone();
        let turn = n.as_object_mut().and_then(|o| o.remove("turnId"));
        assert_eq!(p, &n);
        let want = (start..=end).contains(&i).then(|| Value::from(id));
        assert_eq!(turn, want, "event {i}: {p}");
    }
}
