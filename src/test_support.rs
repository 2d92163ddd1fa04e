//! What unit tests share: the recorded captures.

use std::path::{Path, PathBuf};

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
