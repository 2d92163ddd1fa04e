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

/// Prints expected and actual between rulers and panics, when they differ.
pub fn assert_same(what: &str, expected: &str, actual: &str) {
    if expected != actual {
        let rule = "~".repeat(79);
        panic!(
            "\n{what} differs (BLESS=1 cargo test rewrites golden files)\n\nexpected:\n{rule}\n{expected}{rule}\n\nactual:\n{rule}\n{actual}{rule}\n"
        );
    }
}
