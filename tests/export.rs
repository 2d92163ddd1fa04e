//! `insights export`: the ClickHouse rows loaded into a real ClickHouse engine (chDB, by
//! tests/clickhouse_check.py), the same rows from files and from the store, the store's
//! cursor, and what is not there.

use crate::util::{insights, root, run};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("insights-export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "status {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn export(args: &[&str]) -> Output {
    ok(insights()
        .arg("export")
        .args(["--to", "clickhouse"])
        .args(args)
        .output()
        .expect("run insights export"))
}

/// The rows' lines, sorted.
fn sorted(out: &Output) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    v.sort();
    v
}

#[test]
fn clickhouse_keeps_one_copy_and_its_usage_is_insights_usage() {
    // chDB: ClickHouse in-process (`pip install chdb`, which .ci/run does); skipped with a
    // message when it is not installed.
    let out = std::process::Command::new("python3")
        .arg(root().join("tests/clickhouse_check.py"))
        .arg(env!("CARGO_BIN_EXE_insights"))
        .env("TZ", "UTC")
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: no python3");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(77) {
        eprintln!("skipped: {err}");
        return;
    }
    eprintln!("{text}{err}");
    assert!(out.status.success(), "{text}{err}");
}

#[test]
fn rows_are_the_same_from_files_again_and_from_the_store_whose_cursor_moves() {
    let d = scratch("store");
    let db = d.join("s.db");
    let claude = root().join("testdata/session-files/claude");
    let gemini = root().join("testdata/session-files/gemini");
    let files = export(&[claude.to_str().unwrap()]);
    assert!(!files.stdout.is_empty());
    // Again: the same rows (times are the events' own, never the clock's).
    assert_eq!(export(&[claude.to_str().unwrap()]).stdout, files.stdout);
    let store = |p: &Path| {
        ok(insights()
            .arg("store")
            .arg("--db")
            .arg(&db)
            .arg(p)
            .output()
            .unwrap())
    };
    store(&claude);
    let first = export(&["--db", db.to_str().unwrap()]);
    assert_eq!(sorted(&first), sorted(&files));
    // Nothing new: nothing exported.
    let none = export(&["--db", db.to_str().unwrap()]);
    assert!(
        none.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&none.stdout)
    );
    // Only what was stored since.
    store(&gemini);
    let since = export(&["--db", db.to_str().unwrap()]);
    assert_eq!(sorted(&since), sorted(&export(&[gemini.to_str().unwrap()])));
    // --all: everything again.
    let all = export(&["--db", db.to_str().unwrap(), "--all"]);
    assert_eq!(all.stdout.len(), first.stdout.len() + since.stdout.len());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_stream_on_standard_input_is_exported_and_every_row_has_a_key() {
    let capture = std::fs::read(root().join("testdata/claude/mixed-quoting.jsonl")).unwrap();
    let out = ok(run(&["export", "--to", "clickhouse", "-"], &capture));
    let mut keys = BTreeSet::new();
    let mut n = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(!v["id"].as_str().unwrap().is_empty(), "{line}");
        keys.insert((v["session_id"].to_string(), v["id"].to_string()));
        n += 1;
    }
    assert!(n > 5);
    assert_eq!(keys.len(), n, "two rows with one key");
}

#[test]
fn what_is_not_there_is_an_error() {
    // --to otlp is built (tests/otlp.rs): an empty input has no spans.
    let out = run(&["export", "--to", "otlp", "-"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let out = run(&["export", "--to", "clickhouse", "no/such/file"], b"");
    assert_eq!(out.status.code(), Some(2));
    let d = scratch("missing");
    let db = d.join("none.db");
    let out = run(
        &["export", "--to", "clickhouse", "--db", db.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!db.exists(), "--db made a database");
    std::fs::remove_dir_all(&d).unwrap();
}
