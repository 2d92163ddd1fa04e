//! `insights providers`: the capability matrix, and the README's copy of it.

use crate::util::{root, run};
use serde_json::Value;

fn stdout_of(args: &[&str]) -> String {
    let out = run(args, b"");
    assert!(
        out.status.success(),
        "insights {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn readme_table_is_the_command_output() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let table: String = readme
        .lines()
        .skip_while(|l| !l.starts_with("| capability "))
        .take_while(|l| l.starts_with('|'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!table.is_empty(), "README.md has no capability table");
    let printed = stdout_of(&["providers"]);
    assert!(
        table == printed,
        "the README's capability table differs from `insights providers`:\n{printed}"
    );
}

#[test]
fn json_matches_the_table() {
    let v: Value = serde_json::from_str(&stdout_of(&["providers", "--json"])).expect("JSON");
    let list = v.as_array().expect("an array");
    let table = stdout_of(&["providers"]);
    let header = table.lines().next().unwrap_or("");
    for p in list {
        let name = p["name"].as_str().expect("name");
        assert!(
            header.contains(&format!("`{name}`")),
            "{name} not in the table"
        );
        let caps = p["capabilities"].as_object().expect("capabilities");
        assert_eq!(caps.len(), 14, "{name}");
        assert!(caps.values().all(Value::is_boolean), "{name}");
    }
    // Every --from name is a provider of the matrix.
    let help = stdout_of(&["convert", "--help"]);
    for p in list {
        assert!(help.contains(p["name"].as_str().unwrap_or("?")));
    }
}

#[test]
fn mixed_providers_are_each_detected() {
    // testdata/mixed/providers.jsonl interleaves nine providers' lines; --from auto must give
    // every line its own provider and no raw event.
    let out = run(&["--no-timestamp", "testdata/mixed/providers.jsonl"], b"");
    assert!(out.status.success());
    let mut seen = std::collections::BTreeSet::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let ev: Value = serde_json::from_str(l).expect("JSON");
        assert_ne!(ev["event"], "raw", "{l}");
        seen.insert(ev["provider"].as_str().unwrap_or("").to_owned());
    }
    for p in [
        "claude", "codex", "gemini", "acp", "qwen", "opencode", "cursor", "amp", "aceclaw",
    ] {
        assert!(
            seen.contains(p),
            "no {p} events in the mixed file: {seen:?}"
        );
    }
}
