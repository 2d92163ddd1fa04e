//! `insights export --to otlp`, read back with the official OpenTelemetry protobuf types by
//! `tests/otlp_check.py` (every capture against `insights reduce`, stable ids, the span tree,
//! and OTLP/HTTP to a local receiver that answers 503 once, or refuses everything).
//! `.ci/run` installs `opentelemetry-proto` with pip; without it the test is skipped with a
//! message.

use crate::util::root;

#[test]
fn otlp_export_decodes_with_the_official_types_and_matches_reduce() {
    let out = std::process::Command::new("python3")
        .arg(root().join("tests/otlp_check.py"))
        .arg(env!("CARGO_BIN_EXE_insights"))
        .arg(root())
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: no python3");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
}
