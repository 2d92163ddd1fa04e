//! Shared helpers: run the built binary with a scrubbed environment.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A command for the `insights` binary with an environment that cannot change its output.
pub fn insights() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_insights"));
    c.current_dir(root());
    for v in ["NO_COLOR", "CLICOLOR_FORCE", "TERM", "COLUMNS"] {
        c.env_remove(v);
    }
    // `usage` and `sessions` count days in the local zone by default.
    c.env("TZ", "UTC");
    c
}

/// Runs `insights ARGS` with `stdin` written from a thread (no pipe deadlock).
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = insights()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn insights");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait insights");
    writer.join().expect("stdin writer");
    out
}

/// The events of a capture (a path from the repository root), converted without timestamps.
pub fn events_of(input: &str) -> Vec<serde_json::Value> {
    let out = run(&["--no-timestamp", input], b"");
    assert!(
        out.status.success(),
        "{input}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect()
}

/// The state `reduce` makes of a capture, or of its first `lines` lines (`--at` the last
/// event they make).
pub fn reduce_of(input: &str, lines: Option<u64>) -> serde_json::Value {
    let at = lines.map(|n| {
        events_of(input)
            .iter()
            .filter(|e| e["line"].as_u64().is_some_and(|l| l <= n))
            .filter_map(|e| e["seq"].as_u64())
            .max()
            .unwrap_or(0)
            .to_string()
    });
    let mut args = vec!["reduce"];
    if let Some(at) = &at {
        args.extend(["--at", at]);
    }
    args.push(input);
    let out = run(&args, b"");
    assert!(
        out.status.success(),
        "{input}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("state JSON")
}

/// The events made of input line `line` (1-based).
pub fn of_line(evs: &[serde_json::Value], line: u64) -> Vec<&serde_json::Value> {
    evs.iter().filter(|e| e["line"] == line).collect()
}

/// The entries of a state of type `ty`.
pub fn entries<'v>(st: &'v serde_json::Value, ty: &str) -> Vec<&'v serde_json::Value> {
    st["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["type"] == ty)
        .collect()
}

/// All files under `dir` (recursively) whose name ends with `suffix`, sorted.
pub fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The provider captures of `testdata/DIR` (not their `.events.jsonl` goldens), one after
/// another.
pub fn captures_of(dir: &str) -> Vec<u8> {
    let mut data = Vec::new();
    for f in files_ending(&root().join("testdata").join(dir), ".jsonl") {
        if !f.to_string_lossy().ends_with(".events.jsonl") {
            data.extend(std::fs::read(&f).expect("read capture"));
        }
    }
    data
}

/// Panics when `expected` and `actual` differ, showing where ([`difference`]).
pub fn assert_same(what: &str, expected: &str, actual: &str) {
    if let Some(d) = difference(what, expected, actual) {
        panic!("\n{d}");
    }
}

/// `None` when the texts are equal; else a message naming `what`, the first line that differs
/// with two lines of context from each side, and the line counts.
pub fn difference(what: &str, expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let first = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let show = |lines: &[&str]| -> String {
        let from = first.saturating_sub(2);
        let to = (first + 3).min(lines.len());
        (from..to)
            .map(|i| format!("  {:>5} {}\n", i + 1, lines[i]))
            .collect::<String>()
    };
    Some(format!(
        "{what} differs from line {} on (expected {} lines, got {}; BLESS=1 cargo test rewrites golden files)\nexpected:\n{}actual:\n{}",
        first + 1,
        e.len(),
        a.len(),
        show(&e),
        show(&a)
    ))
}

/// Runs `check` on every item and panics at the end with every failure, not only the first.
pub fn check_each<T: std::fmt::Debug>(items: &[T], check: impl Fn(&T) -> Result<(), String>) {
    assert!(!items.is_empty(), "nothing to check");
    let failures: Vec<String> = items
        .iter()
        .filter_map(|i| check(i).err().map(|e| format!("{i:?}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "\n{} of {} failed:\n\n{}",
        failures.len(),
        items.len(),
        failures.join("\n\n")
    );
}

#[path = "../src/test_support/rng.rs"]
mod rng;
pub use rng::Rng;
