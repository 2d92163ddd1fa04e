//! Golden files: every recorded capture `testdata/<provider>/<case>.jsonl` converts to exactly
//! `<case>.events.jsonl` (with `--no-timestamp`). `BLESS=1 cargo test` rewrites them; review the
//! diff by hand before committing.

use crate::util::{assert_same, files_ending, root, run};
use std::path::{Path, PathBuf};

/// Every capture with a golden file beside it (or to be blessed).
pub fn captures() -> Vec<PathBuf> {
    files_ending(&root().join("testdata"), ".jsonl")
        .into_iter()
        .filter(|p| is_capture(p))
        .collect()
}

fn is_capture(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_dir = |d: &str| p.components().any(|c| c.as_os_str() == d);
    // `session-files/` holds the CLIs' own session files of the recordings (for a later issue),
    // not wire captures.
    !name.contains(".events.")
        && !in_dir("malformed")
        && !in_dir("invalid")
        && !in_dir("scenarios")
        && !in_dir("session-files")
}

pub fn golden_of(capture: &Path) -> PathBuf {
    capture.with_extension("events.jsonl")
}

/// The `--from` a capture is converted with: the `from` of its `<case>.meta.json`, for the
/// Claude-compatible variants (Qwen Code, Amp) whose lines `--from auto` reads as Claude's.
pub fn from_of(capture: &Path) -> Option<String> {
    let meta = std::fs::read_to_string(capture.with_extension("meta.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&meta).ok()?;
    v["from"].as_str().map(str::to_owned)
}

#[test]
fn captures_convert_to_their_golden_files() {
    let bless = std::env::var_os("BLESS").is_some();
    let caps = captures();
    assert!(!caps.is_empty(), "no captures under testdata/");
    for cap in caps {
        let rel = cap
            .strip_prefix(root())
            .unwrap_or(&cap)
            .to_string_lossy()
            .into_owned();
        let from = from_of(&cap);
        let mut args = vec!["--no-timestamp", &rel];
        if let Some(f) = &from {
            args.extend(["--from", f.as_str()]);
        }
        let out = run(&args, b"");
        assert!(
            out.status.success(),
            "{rel}: exit {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{rel}: stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let actual = String::from_utf8(out.stdout).expect("utf-8 output");
        let golden = golden_of(&cap);
        if bless {
            std::fs::write(&golden, &actual).expect("write golden");
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_else(|_| {
            panic!("{}: no golden file (BLESS=1 cargo test)", golden.display())
        });
        assert_same(&rel, &expected, &actual);
    }
}

#[test]
fn golden_files_have_no_raw_fallbacks() {
    for cap in captures() {
        let golden = std::fs::read_to_string(golden_of(&cap)).unwrap_or_default();
        for (i, l) in golden.lines().enumerate() {
            assert!(
                !l.starts_with("{\"event\":\"raw\""),
                "{}:{}: raw event",
                golden_of(&cap).display(),
                i + 1
            );
        }
    }
}

#[test]
fn every_input_line_is_accounted_for() {
    // Each non-blank capture line yields at least one event naming it in `line`.
    for cap in captures() {
        let input = std::fs::read_to_string(&cap).expect("capture");
        let golden = std::fs::read_to_string(golden_of(&cap)).unwrap_or_default();
        let mut seen = std::collections::BTreeSet::new();
        for l in golden.lines() {
            let v: serde_json::Value = serde_json::from_str(l).expect("golden line is JSON");
            seen.insert(v["line"].as_u64().expect("line"));
        }
        for (i, l) in input.lines().enumerate() {
            if !l.trim().is_empty() {
                assert!(
                    seen.contains(&(i as u64 + 1)),
                    "{}:{}: no event",
                    cap.display(),
                    i + 1
                );
            }
        }
    }
}

#[test]
fn converting_output_again_is_a_no_op() {
    for cap in captures() {
        let golden = std::fs::read(golden_of(&cap)).unwrap_or_default();
        let out = run(&["--no-timestamp"], &golden);
        assert!(out.status.success());
        assert_same(
            &format!("{} converted again", golden_of(&cap).display()),
            &String::from_utf8_lossy(&golden),
            &String::from_utf8_lossy(&out.stdout),
        );
    }
}
