//! Hostile input. `testdata/malformed/<name>.jsonl` are small inputs mixing good Claude lines
//! with bad ones; beside each, what `insights --no-timestamp testdata/malformed/<name>.jsonl`
//! must write: `<name>.events.jsonl` (stdout), `<name>.stderr` and `<name>.status` (the exit
//! code). `BLESS=1 cargo test` rewrites them from the binary (except the parts listed in
//! [`KNOWN_BUGS`], which hold the behaviour wanted, written by hand); review the diff by eye.
//!
//! Independently of the expectation files, every input line must be accounted for: it yields
//! events naming it in `line`, or exactly one diagnostic `FILE:LINE:` on stderr.

use crate::cli::{code, event, events, jsonl, lines_of, stderr, TEXT_ONLY};
use crate::util::{files_ending, root, run};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const DIR: &str = "testdata/malformed";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Events,
    Stderr,
    Status,
}

const PARTS: [Part; 3] = [Part::Events, Part::Stderr, Part::Status];

impl Part {
    fn path(self, input: &Path) -> PathBuf {
        input.with_extension(match self {
            Part::Events => "events.jsonl",
            Part::Stderr => "stderr",
            Part::Status => "status",
        })
    }
}

/// Expectation parts the binary does not meet yet: (input file name, part, the bug). Their
/// files hold what a user wants and are not rewritten by BLESS; `malformed_known_bugs` checks
/// them (`cargo test -- --ignored`). Remove an entry once its bug is fixed.
const KNOWN_BUGS: &[(&str, Part, &str)] = &[];

fn known_bug(input: &Path, part: Part) -> bool {
    let name = input.file_name().and_then(|n| n.to_str()).unwrap_or("");
    KNOWN_BUGS.iter().any(|(f, p, _)| *f == name && *p == part)
}

/// Every hostile input, sorted.
fn cases() -> Vec<PathBuf> {
    let cases: Vec<PathBuf> = files_ending(&root().join(DIR), ".jsonl")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".events.jsonl"))
        .collect();
    assert!(cases.len() >= 12, "hostile inputs under {DIR}: {cases:?}");
    cases
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

/// What the binary writes for one input, as the three expectation parts.
fn actual(input: &Path) -> BTreeMap<&'static str, String> {
    let out = run(&["--no-timestamp", &rel(input)], b"");
    let mut m = BTreeMap::new();
    m.insert(
        "events",
        String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8"),
    );
    m.insert("stderr", stderr(&out));
    m.insert("status", format!("{}\n", code(&out)));
    m
}

fn part_key(p: Part) -> &'static str {
    match p {
        Part::Events => "events",
        Part::Stderr => "stderr",
        Part::Status => "status",
    }
}

/// Compares the parts `select` picks; returns one message per difference.
fn compare(select: impl Fn(&Path, Part) -> bool, bless: bool) -> (usize, Vec<String>) {
    let rule = "~".repeat(79);
    let mut checked = 0;
    let mut failures = Vec::new();
    for input in cases() {
        let got = actual(&input);
        for part in PARTS {
            if !select(&input, part) {
                continue;
            }
            let file = part.path(&input);
            let actual = &got[part_key(part)];
            if bless && !known_bug(&input, part) {
                std::fs::write(&file, actual).expect("write expectation");
                continue;
            }
            checked += 1;
            let expected = std::fs::read_to_string(&file)
                .unwrap_or_else(|_| panic!("{}: missing (BLESS=1 cargo test)", file.display()));
            if &expected != actual {
                failures.push(format!(
                    "{} differs\n\nexpected:\n{rule}\n{expected}{rule}\n\nactual:\n{rule}\n{actual}{rule}\n",
                    rel(&file)
                ));
            }
        }
    }
    (checked, failures)
}

#[test]
fn malformed_inputs_match_their_expectations() {
    let bless = std::env::var_os("BLESS").is_some();
    let (checked, failures) = compare(|i, p| !known_bug(i, p), bless);
    assert!(bless || checked > 0);
    assert!(
        failures.is_empty(),
        "\n{} (BLESS=1 cargo test rewrites them)\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn malformed_known_bugs() {
    let (checked, failures) = compare(known_bug, false);
    assert_eq!(checked, KNOWN_BUGS.len());
    let bugs: Vec<String> = KNOWN_BUGS
        .iter()
        .map(|(f, p, why)| format!("{f} {p:?}: {why}"))
        .collect();
    assert!(
        failures.is_empty(),
        "\nknown bugs:\n{}\n\n{}",
        bugs.join("\n"),
        failures.join("\n")
    );
}

#[test]
fn expectations_are_well_formed() {
    for input in cases() {
        let name = rel(&input);
        let read = |p: Part| std::fs::read_to_string(p.path(&input)).unwrap_or_default();
        let status = read(Part::Status);
        assert!(
            matches!(status.as_str(), "0\n" | "1\n"),
            "{name}: status {status:?}"
        );
        let err = read(Part::Stderr);
        for l in err.lines() {
            assert!(
                l.starts_with(&format!("insights: {name}:")),
                "{name}: a diagnostic not naming the file: {l}"
            );
            assert!(l.contains(": error: "), "{name}: {l}");
        }
        assert_eq!(
            status == "1\n",
            !err.is_empty(),
            "{name}: status vs diagnostics"
        );
        for l in read(Part::Events).lines() {
            let v = event(l);
            assert!(v["event"].is_string() && v["line"].is_u64(), "{name}: {l}");
        }
    }
}

/// The input lines that count: 1-based numbers of the non-blank lines (a trailing `\r` and a
/// BOM on line 1 are part of the line end and the file start, not of the line).
fn counted_lines(bytes: &[u8]) -> (BTreeSet<u64>, u64) {
    let mut parts: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if parts.last().is_some_and(|l| l.is_empty()) {
        parts.pop();
    }
    let mut set = BTreeSet::new();
    for (i, l) in parts.iter().enumerate() {
        let mut l = *l;
        if i == 0 {
            l = l.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(l);
        }
        l = l.strip_suffix(b"\r").unwrap_or(l);
        if !l.iter().all(u8::is_ascii_whitespace) {
            set.insert(i as u64 + 1);
        }
    }
    (set, parts.len() as u64)
}

#[test]
fn counted_lines_works() {
    let (set, n) = counted_lines(b"\xEF\xBB\xBF\n{}\r\n\r\n \t\nx");
    assert_eq!((set.into_iter().collect::<Vec<_>>(), n), (vec![2, 5], 5));
    assert_eq!(counted_lines(b"").1, 0);
    assert_eq!(counted_lines(b"a\n").1, 1);
}

/// The line numbers of the diagnostics on stderr for `file`, in order.
fn diagnosed_lines(file: &str, err: &str) -> Vec<u64> {
    let prefix = format!("insights: {file}:");
    err.lines()
        .map(|l| {
            let rest = l
                .strip_prefix(&prefix)
                .unwrap_or_else(|| panic!("{file}: stderr line not about it: {l}"));
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            assert!(
                rest[digits.len()..].starts_with(':'),
                "{file}: not FILE:LINE: {l}"
            );
            digits
                .parse()
                .unwrap_or_else(|_| panic!("{file}: no line number: {l}"))
        })
        .collect()
}

#[test]
fn every_malformed_line_is_accounted_for() {
    for input in cases() {
        let name = rel(&input);
        let bytes = std::fs::read(&input).expect("read input");
        let (counted, total) = counted_lines(&bytes);
        let out = run(&["--no-timestamp", &name], b"");
        let err = stderr(&out);
        let diagnosed = diagnosed_lines(&name, &err);
        let evented: BTreeSet<u64> = events(&out)
            .iter()
            .map(|e| e["line"].as_u64().expect("line"))
            .collect();

        let mut once = BTreeSet::new();
        for l in &diagnosed {
            assert!(once.insert(*l), "{name}:{l}: two diagnostics\n{err}");
            assert!(
                !evented.contains(l),
                "{name}:{l}: both events and a diagnostic"
            );
        }
        for l in &counted {
            assert!(
                evented.contains(l) || once.contains(l),
                "{name}:{l}: neither an event nor a diagnostic\n{err}"
            );
        }
        for l in evented.iter().chain(&once) {
            assert!(
                counted.contains(l),
                "{name}:{l}: refers to a blank or missing line ({total} lines)"
            );
        }
        let status = code(&out);
        assert_eq!(
            status,
            if diagnosed.is_empty() { 0 } else { 1 },
            "{name}: exit status\n{err}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Line ends, BOM, truncation

#[test]
fn crlf_bom_and_a_missing_final_newline_change_nothing() {
    let golden = std::fs::read_to_string(root().join("testdata/claude/text-only.events.jsonl"))
        .expect("golden");
    for f in ["crlf.jsonl", "bom.jsonl", "no-final-newline.jsonl"] {
        let f = format!("{DIR}/{f}");
        let out = run(&["--no-timestamp", &f], b"");
        assert_eq!(code(&out), 0, "{f}: {}", stderr(&out));
        assert!(out.stderr.is_empty(), "{f}: {}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), golden, "{f}");
    }
    // CRLF and BOM together, on stdin, and a CR-terminated last line.
    let text = lines_of(TEXT_ONLY);
    let input = format!("\u{feff}{}\r\n{}\r\n{}\r", text[0], text[1], text[2]);
    let out = run(&["--no-timestamp"], input.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), golden);
}

#[test]
fn a_bom_counts_only_at_the_start_of_each_input() {
    // Each file (and stdin) starts afresh: a BOM on its line 1 is fine.
    let out = run(
        &["--no-timestamp", "testdata/malformed/bom.jsonl", "-"],
        b"\xEF\xBB\xBF{\"type\":\"keep_alive\"}\n",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // (each input's first turn opens with an inferred `turn_start`)
    assert_eq!(events(&out).len(), 6);
}

#[test]
fn a_truncated_last_line_is_reported_as_truncated() {
    let text = lines_of(TEXT_ONLY);
    let cut = &text[2][..text[2].len() / 2];
    let input = format!("{}\n{}", text[0], cut);
    let out = run(&["--no-timestamp"], input.as_bytes());
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    let want = format!("insights: <stdin>:2:{}: error: truncated JSON: ", cut.len());
    assert!(err.starts_with(&want), "want {want}…, got {err}");
    assert!(err.contains("the input ended inside this line"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // line 1: its event, after the inferred `turn_start` it opens
    assert_eq!(events(&out).len(), 2, "line 1 converted");
}

#[test]
fn a_last_line_cut_inside_a_character_is_reported_as_truncated() {
    let out = run(
        &["--no-timestamp"],
        b"{\"type\":\"user\",\"message\":{\"content\":\"caf\xC3",
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "insights: <stdin>:1:41: error: invalid UTF-8: the line ends inside a character (truncated?)\n"
    );
}

// ---------------------------------------------------------------------------------------------
// Bytes that are not UTF-8, or not JSON

#[test]
fn invalid_utf8_is_reported_with_its_column() {
    let out = run(
        &["--no-timestamp"],
        b"{\"type\":\"keep_alive\"}\n{\"a\":\"\xFF\"}\n\xFE\n{\"type\":\"keep_alive\",\"n\":1}\n",
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "insights: <stdin>:2:7: error: invalid UTF-8\ninsights: <stdin>:3:1: error: invalid UTF-8\n"
    );
    let lines: Vec<u64> = events(&out)
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [1, 4]);
}

#[test]
fn json_that_is_not_an_object_is_reported() {
    for (line, found) in [
        ("[1]", "an array"),
        ("42", "a number"),
        ("\"s\"", "a string"),
        ("null", "null"),
        ("false", "a boolean"),
        ("-0.5e3", "a number"),
    ] {
        let out = run(&["--no-timestamp"], format!("{line}\n").as_bytes());
        assert_eq!(code(&out), 1, "{line}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.starts_with("insights: <stdin>:1:"), "{line}: {err}");
        assert!(
            err.ends_with(&format!(": error: expected a JSON object, found {found}\n")),
            "{line}: {err}"
        );
        assert!(out.stdout.is_empty(), "{line}");
    }
}

#[test]
fn a_line_that_is_not_an_object_is_reported_at_its_first_character() {
    // A user looks for the mistake where the line starts: `[1]` is wrong at column 1.
    for (line, col) in [
        ("[1]", 1),
        ("42", 1),
        ("\"s\"", 1),
        ("null", 1),
        ("  [ 1, 2 ]", 3),
        ("fatal: not a git repository", 1),
        ("nothing to commit", 1),
        ("true story", 1),
    ] {
        let out = run(&["--no-timestamp"], format!("{line}\n").as_bytes());
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("insights: <stdin>:1:{col}: error: ")),
            "{line:?}: want column {col}: {err}"
        );
        assert!(
            !err.contains("expected ident"),
            "{line:?}: serde jargon: {err}"
        );
    }
}

#[test]
fn a_json_array_is_never_taken_for_an_object() {
    // serde's derived Deserialize for the line probe (src/detect.rs) also accepts a sequence
    // of its fields; whatever their number, no array may get through.
    for n in 0..=12 {
        let mut items = vec![r#""keep_alive""#.to_owned()];
        items.extend(std::iter::repeat_n("null".to_owned(), n));
        let line = format!("[{}]", items.join(","));
        let out = run(&["--no-timestamp"], format!("{line}\n").as_bytes());
        assert_eq!(
            code(&out),
            1,
            "{line}: exit, stdout {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            out.stdout.is_empty(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        // (Its column is a_line_that_is_not_an_object_is_reported_at_its_first_character's.)
        let err = stderr(&out);
        assert!(
            err.starts_with("insights: <stdin>:1:")
                && err.ends_with(": error: expected a JSON object, found an array\n")
                && err.lines().count() == 1,
            "{line}: {err}"
        );
    }
}

#[test]
fn an_object_with_a_duplicate_member_is_not_called_a_non_object() {
    for line in [
        r#"{"type":"keep_alive","type":"user"}"#,
        r#"{"type":"system","subtype":"init","subtype":"status"}"#,
        r#"{"type":"assistant","message":{},"message":{}}"#,
        r#"{"type":"keep_alive","session_id":"a","session_id":"b"}"#,
    ] {
        let out = run(&["--no-timestamp"], format!("{line}\n").as_bytes());
        let err = stderr(&out);
        assert!(
            !err.contains("expected a JSON object"),
            "{line}: the line is an object: {err}"
        );
        // Either converted (as a raw event at worst) or reported for what it is.
        assert!(
            !out.stdout.is_empty() || err.contains("duplicate"),
            "{line}: {err}"
        );
    }
}

#[test]
fn a_control_character_is_reported_at_its_column() {
    let out = run(
        &["--no-timestamp"],
        b"{\"a\":\"\0\"}\n{\"type\":\"user\",\"message\":{\"content\":\"a\x01b\"}}\n",
    );
    assert_eq!(
        stderr(&out),
        "insights: <stdin>:1:7: error: invalid JSON: control character (\\u0000-\\u001F) found while parsing a string\n\
         insights: <stdin>:2:39: error: invalid JSON: control character (\\u0000-\\u001F) found while parsing a string\n"
    );
}

#[test]
fn deep_nesting_is_reported_without_a_stack_overflow() {
    let text = lines_of(TEXT_ONLY);
    let open = "[".repeat(10_000);
    let balanced = format!("{open}{}", "]".repeat(10_000));
    let objects = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    let in_member = format!("{{\"x\":{objects}}}");
    for (line, bad) in [
        (open.as_str(), true),
        (balanced.as_str(), true),
        (objects.as_str(), false),
        (in_member.as_str(), false),
    ] {
        for extra in [&[][..], &["--raw"][..], &["--from", "claude"][..]] {
            let mut args = vec!["--no-timestamp"];
            args.extend_from_slice(extra);
            let input = jsonl(&[line, &text[0]]);
            let out = run(&args, &input);
            let status = code(&out);
            let err = stderr(&out);
            let got = events(&out);
            let head = &line[..20];
            if bad {
                assert_eq!(status, 1, "{head}… {extra:?}: {err}");
                assert!(
                    err.starts_with("insights: <stdin>:1:"),
                    "{head}… {extra:?}: {err}"
                );
                assert_eq!(err.lines().count(), 1, "{err}");
            } else {
                assert_eq!(status, 0, "{head}… {extra:?}: {err}");
                assert!(err.is_empty(), "{head}… {extra:?}: {err}");
                assert_eq!(got[0]["line"], 1, "{head}… {extra:?}");
            }
            let last = got.last().expect("the next line converted");
            // the session_init, then the turn it opens (inferred)
            assert_eq!(last["event"], "turn_start", "{head}… {extra:?}");
            assert_eq!(last["line"], 2);
        }
    }
}

#[test]
fn deeply_nested_output_converts_again() {
    let input = std::fs::read(root().join(DIR).join("deep-nesting.jsonl")).expect("input");
    let once = run(&["--no-timestamp"], &input);
    let twice = run(&["--no-timestamp"], &once.stdout);
    assert_eq!(code(&twice), 0, "{}", stderr(&twice));
    assert!(twice.stderr.is_empty(), "{}", stderr(&twice));
    assert!(once.stdout == twice.stdout, "converted again differs");
}

// ---------------------------------------------------------------------------------------------
// Line length

#[test]
fn an_over_long_line_is_reported_and_the_next_one_converted() {
    let long = format!(
        "{{\"type\":\"keep_alive\",\"pad\":\"{}\"}}",
        "x".repeat(200)
    );
    let exact = format!(
        "{{\"type\":\"keep_alive\",\"pad\":\"{}\"}}",
        "y".repeat(100 - 30)
    );
    assert_eq!(exact.len(), 100);
    let input = format!("{long}\n{exact}\n{{\"type\":\"keep_alive\"}}\n{long}");
    let out = run(
        &["--no-timestamp", "--max-line-bytes", "100"],
        input.as_bytes(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let n = long.len();
    assert_eq!(
        stderr(&out),
        format!(
            "insights: <stdin>:1: error: line is {n} bytes, over the limit of 100 (raise it with --max-line-bytes 256)\n\
             insights: <stdin>:4: error: line is {n} bytes, over the limit of 100 (raise it with --max-line-bytes 256)\n"
        )
    );
    let lines: Vec<u64> = events(&out)
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 3], "a line of exactly the limit is accepted");
    // The limit the message suggests takes the line, and so do the units it is written in.
    for limit in ["256", "1K", "1KiB", "1kb"] {
        let out = run(
            &["--no-timestamp", "--max-line-bytes", limit],
            input.as_bytes(),
        );
        assert_eq!(code(&out), 0, "--max-line-bytes {limit}: {}", stderr(&out));
    }
}

#[test]
fn an_over_long_line_far_past_the_buffer_is_skipped_whole() {
    // Longer than the 64 KiB read buffer: the rest of the line must not come back as lines.
    let long = format!(
        "{{\"type\":\"keep_alive\",\"pad\":\"{}\"}}",
        "{\"a\":1}\\n".repeat(50_000)
    );
    let input = format!("{long}\n{{\"type\":\"keep_alive\"}}\n");
    let out = run(
        &["--no-timestamp", "--max-line-bytes", "1000"],
        input.as_bytes(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    let lines: Vec<u64> = events(&out)
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2]);
}

#[test]
fn long_lines_under_the_limit_are_converted_intact() {
    let text = "é".repeat(1_500_000);
    let line = format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"session_id\":\"s\"}}"
    );
    let out = run(&["--no-timestamp"], format!("{line}\n").as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let got = events(&out);
    assert_eq!(got.len(), 2, "the inferred turn_start, then the prompt");
    assert_eq!(got[1]["event"], "user_input");
    assert!(got[1]["text"] == text.as_str(), "text intact");
}

#[test]
fn max_line_bytes_does_not_count_the_line_end() {
    let line = "{\"type\":\"keep_alive\"}";
    let out = run(
        &[
            "--no-timestamp",
            "--max-line-bytes",
            &line.len().to_string(),
        ],
        format!("{line}\r\n").as_bytes(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(events(&out).len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Lines that parse but do not fit

#[test]
fn wrong_field_types_give_events_or_raw_events_with_a_reason() {
    // Each line is a Claude type with a member of the wrong JSON type: converted leniently or
    // kept whole as a `raw` event saying why, never a diagnostic (the line is a JSON object).
    let file = "testdata/malformed/wrong-field-types.jsonl";
    let out = run(&["--no-timestamp", file], b"");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let input = lines_of(file);
    let got = events(&out);
    let lines: BTreeSet<u64> = got.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(
        lines,
        (1..=input.len() as u64).collect(),
        "every line has events"
    );
    let mut raws = 0;
    for ev in got.iter().filter(|e| e["event"] == "raw") {
        let line = ev["line"].as_u64().unwrap() as usize;
        let original: Value = serde_json::from_str(&input[line - 1]).unwrap();
        assert!(ev["raw"] == original, "{ev}");
        assert!(ev["reason"].as_str().is_some_and(|r| !r.is_empty()), "{ev}");
        raws += 1;
    }
    assert!(raws > 0, "no raw event at all");
}

#[test]
fn raw_reasons_do_not_cite_a_position_in_another_document() {
    let out = run(
        &[
            "--no-timestamp",
            "testdata/malformed/wrong-field-types.jsonl",
        ],
        b"",
    );
    for ev in events(&out) {
        if let Some(reason) = ev["reason"].as_str() {
            assert!(
                !reason.contains(" at line "),
                "line {}: {reason:?}",
                ev["line"]
            );
        }
    }
}

#[test]
fn identical_lines_get_distinct_ids() {
    let input = jsonl(&[
        r#"{"type":"keep_alive"}"#,
        r#"{"type":"keep_alive"}"#,
        r#"{"hello":"world"}"#,
        r#"{"hello":"world"}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"uuid":""}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"ho"}]},"uuid":""}"#,
    ]);
    let run_ids = || -> Vec<String> {
        events(&run(&["--no-timestamp"], &input))
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let ids = run_ids();
    assert_eq!(ids, run_ids(), "stable");
    let unique: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "ids within one capture: {ids:?}");
}

// ---------------------------------------------------------------------------------------------
// Input that is not agent output

/// `n` lines that look like a binary file's: NUL bytes, invalid UTF-8.
fn binary_lines(n: usize) -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..n {
        if i % 2 == 0 {
            data.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\n");
        } else {
            data.extend_from_slice(b"\xff\xfe\x90\x01\0\0H\x8b\x05\n");
        }
    }
    data
}

#[test]
fn past_twenty_unreadable_lines_an_input_gets_one_summary_line() {
    // A binary file: 20 lines are reported one by one, then one line tells how many more
    // there were; a good line among them is still converted, and the status is still 1.
    let text = lines_of(TEXT_ONLY);
    let mut data = binary_lines(30);
    data.extend(jsonl(&[&text[0]]));
    data.extend(binary_lines(19));
    let dir = std::env::temp_dir().join(format!("insights-binary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("a.out");
    std::fs::write(&file, &data).expect("write input");
    let name = file.to_string_lossy().into_owned();
    let out = run(&["--no-timestamp", &name], b"");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        events(&out).len(),
        2,
        "the good line (and the turn it opens)"
    );
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 21, "{err}");
    assert_eq!(
        diagnosed_lines(&name, &lines[..20].join("\n")),
        (1..=20).collect::<Vec<_>>()
    );
    assert_eq!(
        lines[20],
        format!(
            "insights: {name}: error: 29 more lines could not be read (not shown); \
             is this a binary file?"
        )
    );
    // Standard input is one input; a second file has a count of its own.
    let out = run(&["--no-timestamp", "-", &name], &binary_lines(21));
    let err = stderr(&out);
    let summaries: Vec<&str> = err.lines().filter(|l| l.contains("more line")).collect();
    assert_eq!(
        summaries,
        [
            "insights: <stdin>: error: 1 more line could not be read (not shown); \
             is this a binary file?"
                .to_string(),
            format!(
                "insights: {name}: error: 29 more lines could not be read (not shown); \
                 is this a binary file?"
            )
        ]
    );
    assert_eq!(err.lines().count(), 21 + 21, "{err}");
    // --strict stops at the first line, as before.
    let out = run(&["--no-timestamp", "--strict", &name], b"");
    assert_eq!(code(&out), 1);
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);

    // Text that is not JSON: the summary without the question.
    let prose = "This is a README, not agent output.\n".repeat(25);
    let out = run(&["--no-timestamp"], prose.as_bytes());
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 21, "{err}");
    assert_eq!(
        err.lines().last(),
        Some("insights: <stdin>: error: 5 more lines could not be read (not shown)")
    );
    // Exactly 20: no summary.
    let twenty = "This is a README, not agent output.\n".repeat(20);
    let out = run(&["--no-timestamp"], twenty.as_bytes());
    assert_eq!(stderr(&out).lines().count(), 20, "{}", stderr(&out));
}
