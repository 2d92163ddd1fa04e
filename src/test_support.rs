//! What unit tests share: the recorded captures.

use std::path::{Path, PathBuf};

mod rng;
pub use rng::Rng;

/// Every `.jsonl` file under `testdata/`, sorted.
pub fn testdata_jsonl() -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(d) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"),
        &mut v,
    );
    v.sort();
    v
}

/// The events `provider` makes of `lines` as one stream (what it remembers carried from line
/// to line), each as JSON with its `event` and, when there are any, its `extensions`; the
/// envelope (`id`, `seq`) is left to the converter's own tests, except `sessionId`, the
/// line's (`""` when the provider named none).
pub fn convert_stream(
    provider: &crate::providers::Provider,
    lines: &[&str],
) -> Vec<serde_json::Value> {
    use serde_json::Value;
    let mut memory = None;
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut probe = crate::detect::Probe::default();
        probe.fill(line).expect("a JSON object");
        let mut cx = crate::providers::Cx {
            line: i as u64 + 1,
            memory: memory.take(),
            ..Default::default()
        };
        (provider.convert)(line, &probe, &mut cx)
            .unwrap_or_else(|e| panic!("line {}: {}", i + 1, e.0));
        for (b, e) in &cx.events {
            let mut v = serde_json::to_value(b).expect("an event serializes");
            v["event"] = Value::from(b.kind());
            v["sessionId"] = Value::from(cx.session_id.as_deref().unwrap_or(""));
            if !e.is_empty() {
                v["extensions"] = serde_json::to_value(e).expect("extensions serialize");
            }
            out.push(v);
        }
        memory = cx.memory.take();
    }
    out
}

