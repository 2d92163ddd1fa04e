//! Compiles the `insights` binary's modules into this crate as a library.
//!
//! The main crate is a binary with no `lib.rs` (STYLE.md), so nothing of it can be linked into
//! a fuzz target directly. Instead `src/main.rs` is copied to `$OUT_DIR/app.rs` without its
//! inner doc comment, every `mod NAME;` in it given the absolute path of its file, and
//! `src/lib.rs` includes that: every module of the binary, its source unchanged, with
//! `crate::` meaning what it means there. The command modules in [`OPEN`] are copied the
//! same way with their submodules made `pub`, so the targets can reach their cores
//! (`validate::check::check_reader`, `reduce::summary::render`, …).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Modules whose private submodules the fuzz targets call into.
const OPEN: &[&str] = &["validate", "reduce"];

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let src = Path::new(&manifest)
        .join("../src")
        .canonicalize()
        .expect("../src");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let app = rewrite(&src.join("main.rs"), &src, &out, true);
    std::fs::write(out.join("app.rs"), app).expect("write app.rs");
}

/// `file` with each `mod NAME;` pointed at its file by `#[path]`; `root`: it is `main.rs`
/// (drop inner attributes, which `include!` does not allow).
fn rewrite(file: &Path, dir: &Path, out: &Path, root: bool) -> String {
    println!("cargo:rerun-if-changed={}", file.display());
    let text =
        std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
    let mut s = String::new();
    for line in text.lines() {
        let t = line.trim();
        if root && (t.starts_with("//!") || t.starts_with("#![")) {
            continue;
        }
        let decl = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) else {
            writeln!(s, "{line}").unwrap();
            continue;
        };
        let as_dir = dir.join(name).join("mod.rs");
        let as_file = dir.join(format!("{name}.rs"));
        let path = if root && OPEN.contains(&name) && as_dir.is_file() {
            let copy = out.join(format!("{name}_mod.rs"));
            std::fs::write(&copy, rewrite(&as_dir, &dir.join(name), out, false))
                .expect("write module copy");
            copy
        } else if as_dir.is_file() {
            as_dir
        } else if as_file.is_file() {
            // A file loaded by `#[path]` finds its submodules beside it, not in NAME/.
            assert!(
                !dir.join(name).is_dir(),
                "{}: {name}.rs beside a {name}/ directory is not supported by fuzz/build.rs",
                dir.display()
            );
            as_file
        } else {
            panic!("{}: module {name} has no file", dir.display());
        };
        writeln!(s, "#[path = {:?}]", path.display().to_string()).unwrap();
        if root {
            writeln!(s, "{line}").unwrap();
        } else {
            // Inside an opened module: make the submodule reachable from the fuzz targets.
            writeln!(s, "pub mod {name};").unwrap();
        }
    }
    s
}
