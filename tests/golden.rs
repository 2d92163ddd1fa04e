//! Golden files: every recorded capture `testdata/<provider>/<case>.jsonl` converts to exactly
//! `<case>.events.jsonl` (with `--no-timestamp`). `BLESS=1 cargo test` rewrites them; review the
//! diff by hand before committing.

use crate::util::{check_each, difference, files_ending, root, run};
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

/// The golden file of `capture`, or why it cannot be read: a missing golden file fails.
fn golden_text(capture: &Path) -> Result<String, String> {
    let g = golden_of(capture);
    std::fs::read_to_string(&g)
        .map_err(|e| format!("{}: {e} (BLESS=1 cargo test writes it)", g.display()))
}

#[test]
fn captures_convert_to_their_golden_files() {
    let bless = std::env::var_os("BLESS").is_some();
    check_each(&captures(), |cap| {
        let rel = cap
            .strip_prefix(root())
            .unwrap_or(cap)
            .to_string_lossy()
            .into_owned();
        let from = from_of(cap);
        let mut args = vec!["--no-timestamp", &rel];
        if let Some(f) = &from {
            args.extend(["--from", f.as_str()]);
        }
        let out = run(&args, b"");
        if !out.status.success() || !out.stderr.is_empty() {
            return Err(format!(
                "exit {:?}, stderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let actual = String::from_utf8(out.stdout).map_err(|_| "output is not UTF-8")?;
        if bless {
            return std::fs::write(golden_of(cap), &actual).map_err(|e| e.to_string());
        }
        match difference(&rel, &golden_text(cap)?, &actual) {
            Some(d) => Err(d),
            None => Ok(()),
        }
    });
}

#[test]
fn golden_files_have_no_raw_fallbacks() {
    check_each(&captures(), |cap| {
        let golden = golden_text(cap)?;
        match golden
            .lines()
            .position(|l| l.starts_with("{\"event\":\"raw\""))
        {
            Some(i) => Err(format!("{}:{}: raw event", golden_of(cap).display(), i + 1)),
            None => Ok(()),
        }
    });
}

#[test]
fn every_input_line_is_accounted_for() {
    // Each non-blank capture line yields at least one event naming it in `line`.
    check_each(&captures(), |cap| {
        let input = std::fs::read_to_string(cap).map_err(|e| e.to_string())?;
        let mut seen = std::collections::BTreeSet::new();
        for l in golden_text(cap)?.lines() {
            let v: serde_json::Value =
                serde_json::from_str(l).map_err(|e| format!("golden line: {e}"))?;
            seen.insert(v["line"].as_u64().ok_or("an event without `line`")?);
        }
        let missing: Vec<usize> = (1..)
            .zip(input.lines())
            .filter(|(n, l)| !l.trim().is_empty() && !seen.contains(n))
            .map(|(n, _)| n as usize)
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!("lines with no event: {missing:?}"))
        }
    });
}

#[test]
fn converting_output_again_is_a_no_op() {
    check_each(&captures(), |cap| {
        let golden = golden_text(cap)?;
        let out = run(&["--no-timestamp"], golden.as_bytes());
        if !out.status.success() {
            return Err(format!("exit {:?}", out.status));
        }
        match difference(
            &format!("{} converted again", golden_of(cap).display()),
            &golden,
            &String::from_utf8_lossy(&out.stdout),
        ) {
            Some(d) => Err(d),
            None => Ok(()),
        }
    });
}
