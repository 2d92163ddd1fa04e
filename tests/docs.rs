//! The documentation matches the program: every `--long` option of `--help` is in the man page
//! and the README, the README's test command is what CI runs, and the help and completions work.

use crate::util::{root, run};
use std::collections::{BTreeMap, BTreeSet};

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// Runs `insights ARGS`, expecting success; returns standard output.
fn stdout_of(args: &[&str]) -> String {
    let out = run(args, b"");
    assert!(
        out.status.success(),
        "insights {}: exit {:?}\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 help")
}

/// The `--long` options that `--help` defines: the first `--name` on each option line
/// (`  -h, --help`, `      --from <PROVIDER>`), not the ones mentioned in descriptions or examples.
fn long_flags(help: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for line in help.lines() {
        let t = line.trim_start();
        let def = t.starts_with("--")
            || (t.len() > 2
                && t.as_bytes()[0] == b'-'
                && t.as_bytes()[1].is_ascii_alphanumeric()
                && t[2..].starts_with(", --"));
        if !def {
            continue;
        }
        let start = t.find("--").expect("a long option");
        let name: String = t[start + 2..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
            .collect();
        if !name.is_empty() {
            flags.insert(format!("--{name}"));
        }
    }
    flags
}

/// Every long option of the top-level command and of each subcommand.
fn all_long_flags() -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for args in [
        &["--help"][..],
        &["convert", "--help"],
        &["validate", "--help"],
        &["replay", "--help"],
        &["reduce", "--help"],
        &["schema", "--help"],
        &["providers", "--help"],
        &["completions", "--help"],
        &["usage", "--help"],
        &["sessions", "--help"],
        &["store", "--help"],
    ] {
        flags.extend(long_flags(&stdout_of(args)));
    }
    for expected in ["--from", "--raw", "--color", "--help", "--version"] {
        assert!(
            flags.contains(expected),
            "scraping --help found no {expected}: {flags:?}"
        );
    }
    flags
}

/// Roff text as a reader sees it: font escapes (`\fB`, `\fR`, `\fI`, `\fP`) removed, then every
/// remaining backslash, so `\fB\-\-from\fR` reads `--from`.
fn roff_plain(roff: &str) -> String {
    let mut s = roff.to_string();
    for esc in ["\\fB", "\\fR", "\\fI", "\\fP"] {
        s = s.replace(esc, "");
    }
    s.replace('\\', "")
}

/// Whether `text` mentions `flag` as a whole option (`--raw` does not count inside `--rawer`).
fn mentions(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(i, _)| {
        let next = text[i + flag.len()..].chars().next();
        !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

#[test]
fn every_long_flag_is_in_the_man_page() {
    let man = roff_plain(&read("man/insights.1"));
    let missing: Vec<_> = all_long_flags()
        .into_iter()
        .filter(|f| !mentions(&man, f))
        .collect();
    assert!(missing.is_empty(), "man/insights.1 lacks {missing:?}");
}

#[test]
fn every_long_flag_is_in_the_readme() {
    let readme = read("README.md");
    let missing: Vec<_> = all_long_flags()
        .into_iter()
        .filter(|f| !mentions(&readme, f))
        .collect();
    assert!(missing.is_empty(), "README.md lacks {missing:?}");
}

#[test]
fn man_page_has_its_sections_and_the_current_version() {
    let man = read("man/insights.1");
    for section in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "COMMANDS",
        "OPTIONS",
        "OUTPUT FORMAT",
        "DETECTION",
        "EXIT STATUS",
        "ENVIRONMENT",
        "EXAMPLES",
        "SEE ALSO",
    ] {
        assert!(
            man.lines().any(|l| l == format!(".SH {section}")),
            "man/insights.1 has no .SH {section}"
        );
    }
    let th = man
        .lines()
        .find(|l| l.starts_with(".TH "))
        .expect(".TH line");
    let version = format!("insights {}", env!("CARGO_PKG_VERSION"));
    assert!(th.contains(&version), "{th:?} does not name {version:?}");
}

/// The lines of the first fenced code block after the heading `## {title}`.
fn readme_block(readme: &str, title: &str) -> Vec<String> {
    let heading = format!("## {title}");
    let mut lines = readme
        .lines()
        .skip_while(|l| l.trim() != heading)
        .skip(1)
        .skip_while(|l| !l.starts_with("```"))
        .skip(1);
    let block: Vec<String> = lines
        .by_ref()
        .take_while(|l| !l.starts_with("```"))
        .map(str::to_owned)
        .collect();
    assert!(
        !block.is_empty(),
        "README.md: no code block under {heading:?}"
    );
    block
}

/// The one command of `.ci/run`: its line starting with `cargo` (after an optional `exec`).
fn ci_command() -> String {
    let script = read(".ci/run");
    let cmds: Vec<&str> = script
        .lines()
        .map(|l| l.trim().trim_start_matches("exec ").trim())
        .filter(|l| l.starts_with("cargo "))
        .collect();
    assert_eq!(
        cmds.len(),
        1,
        ".ci/run should run one cargo command: {cmds:?}"
    );
    cmds[0].to_owned()
}

#[test]
fn readme_test_command_is_what_ci_runs() {
    let block = readme_block(&read("README.md"), "The two commands");
    let tests: Vec<&String> = block
        .iter()
        .filter(|l| l.starts_with("cargo test"))
        .collect();
    assert_eq!(
        tests.len(),
        1,
        "README.md: one `cargo test` command expected: {block:?}"
    );
    assert_eq!(tests[0].trim(), ci_command());
}

#[test]
fn readme_run_command_works_on_its_sample() {
    let block = readme_block(&read("README.md"), "The two commands");
    let cmd = block
        .iter()
        .find(|l| l.starts_with("cargo run"))
        .expect("README.md: a `cargo run` command");
    let args: Vec<&str> = cmd
        .split_once(" -- ")
        .expect("`cargo run … -- ARGS`")
        .1
        .split_whitespace()
        .collect();
    for a in &args {
        if a.starts_with("testdata/") {
            assert!(
                root().join(a).is_file(),
                "README.md names {a}, which is missing"
            );
        }
    }
    let out = stdout_of(&args);
    assert!(
        out.lines().count() > 1 && out.lines().all(|l| l.starts_with("{\"event\":")),
        "insights {}: unexpected output\n{out}",
        args.join(" ")
    );
}

#[test]
fn ci_script_is_executable_bash() {
    let script = read(".ci/run");
    assert!(
        script.starts_with("#!/usr/bin/env bash\n"),
        ".ci/run: shebang"
    );
    assert!(
        script.contains("set -euo pipefail"),
        ".ci/run: set -euo pipefail"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(root().join(".ci/run"))
            .expect("stat .ci/run")
            .permissions()
            .mode();
        assert!(mode & 0o111 != 0, ".ci/run is not executable (chmod +x)");
    }
}

#[test]
fn readme_sample_events_are_real_output() {
    // The JSON lines the README shows must be lines of a golden file, i.e. what the binary
    // writes today for a shipped capture with `--no-timestamp`.
    let readme = read("README.md");
    let samples: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("{\"event\":"))
        .collect();
    assert!(!samples.is_empty(), "README.md shows no sample events");
    let goldens: String = crate::golden::captures()
        .iter()
        .map(|c| {
            let g = crate::golden::golden_of(c);
            std::fs::read_to_string(&g).unwrap_or_else(|e| panic!("{}: {e}", g.display()))
        })
        .collect();
    let golden_lines: BTreeSet<&str> = goldens.lines().collect();
    for s in samples {
        assert!(
            golden_lines.contains(s),
            "README.md shows an event no golden file has (regenerate it with \
             `insights --no-timestamp testdata/claude/thinking-tool.jsonl`):\n{s}"
        );
    }
}

#[test]
fn help_has_examples_and_exit_status() {
    let help = stdout_of(&["--help"]);
    assert!(help.contains("Examples:"), "--help lacks Examples:\n{help}");
    assert!(
        help.contains("Exit status"),
        "--help lacks Exit status\n{help}"
    );
}

#[test]
fn bash_completions_are_printed() {
    let out = stdout_of(&["completions", "bash"]);
    assert!(out.contains("insights"), "completions bash:\n{out}");
}

#[test]
fn flag_scraping_reads_definitions_only() {
    let help = "\
Options:
      --from <PROVIDER>
          - claude: Claude Code (-p --output-format stream-json --verbose)
      --max-line-bytes <BYTES>
          Longer lines are skipped (raise it with --max-line-bytes)
  -h, --help
          Print help
";
    let got: Vec<String> = long_flags(help).into_iter().collect();
    assert_eq!(got, ["--from", "--help", "--max-line-bytes"]);
    assert_eq!(
        roff_plain(r"\fB\-\-max\-line\-bytes\fR \fIBYTES\fP"),
        "--max-line-bytes BYTES"
    );
    assert!(mentions("use --raw.", "--raw"));
    assert!(!mentions("use --rawer", "--raw"));
}

/// The Markdown files whose links are checked: the README, CONTRIBUTING.md and `docs/*.md`.
fn markdown_files() -> Vec<std::path::PathBuf> {
    let mut files = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root().join("docs"))
        .expect("read docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The lines of a Markdown text outside fenced code blocks, with their numbers (from 1).
fn prose_lines(md: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in md.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// `line` without its inline code spans (`` `…` ``), so that text inside them is not read as
/// a link.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].len() - rest[start..].trim_start_matches('`').len();
        let fence = &rest[start..start + ticks];
        match rest[start + ticks..].find(fence) {
            Some(end) => rest = &rest[start + ticks + end + ticks..],
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the inline links `[text](target)` of a Markdown text, with line numbers.
fn link_targets(md: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    for (n, line) in prose_lines(md) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').unwrap_or(after.len());
            links.push((n, after[..end].to_owned()));
            rest = &after[end..];
        }
    }
    links
}

/// The anchor GitHub gives a heading: lower case, punctuation other than `-` and `_` dropped,
/// spaces as `-`.
fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every heading anchor of a Markdown text (a repeated heading gets `-1`, `-2`, … as on
/// GitHub).
fn anchors(md: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines(md) {
        let level = line.len() - line.trim_start_matches('#').len();
        if !(1..=6).contains(&level) || !line[level..].starts_with(' ') {
            continue;
        }
        let base = heading_anchor(line[level..].trim().trim_end_matches('#'));
        let mut anchor = base.clone();
        let mut k = 0;
        while seen.contains(&anchor) {
            k += 1;
            anchor = format!("{base}-{k}");
        }
        seen.insert(anchor);
    }
    seen
}

/// `path` with `.` and `..` worked out, without touching the file system.
fn normalized(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = normalized(&root());
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("read a Markdown file");
        let shown = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .display()
            .to_string();
        for (line, target) in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let dest = if path.is_empty() {
                file.clone()
            } else {
                normalized(&file.parent().expect("a directory").join(path))
            };
            // A link out of the repository (the recording harness beside the checkout) cannot
            // be checked from a clone.
            if !dest.starts_with(&root) {
                continue;
            }
            if !dest.exists() {
                broken.push(format!("{shown}:{line}: {target}: no such file"));
                continue;
            }
            let is_md = dest.extension().is_some_and(|x| x == "md");
            if !fragment.is_empty() && is_md {
                let md = std::fs::read_to_string(&dest).expect("read a link's target");
                if !anchors(&md).contains(fragment) {
                    broken.push(format!("{shown}:{line}: {target}: no such heading"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn link_checking_reads_links_and_headings() {
    let md = "\
# A `b`: c & d
See [`x`](a/b.md#a-b-c--d) and [y](#z) but not `[q](r)`.
```
[in](code)
# not a heading
```
## Z
## Z
";
    let links: Vec<String> = link_targets(md).into_iter().map(|(_, t)| t).collect();
    assert_eq!(links, ["a/b.md#a-b-c--d", "#z"]);
    let got: Vec<String> = anchors(md).into_iter().collect();
    assert_eq!(got, ["a-b-c--d", "z", "z-1"]);
    assert_eq!(
        heading_anchor("Usage and cost: `insights usage` and `insights sessions`"),
        "usage-and-cost-insights-usage-and-insights-sessions"
    );
}

/// The five design documents (`shared/seeds/` beside the repository) that `docs/seeds.md`
/// goes through, one section each.
const SEEDS: [&str; 5] = [
    "insights-event-protocol.md",
    "agent-adapter-contract.md",
    "acp-entry-processing-rules.md",
    "codex-app-server-event-reference.md",
    "execution-web-event-schema.md",
];

/// The statuses a row of `docs/seeds.md` may have, in the order of its summary's columns.
const STATUSES: [&str; 4] = ["met", "partly", "not yet", "out of scope"];

/// The names of the `#[test]` functions of Rust source: a `fn` after `#[test]`, with only other
/// attributes, comments or blank lines between them.
fn test_fns(source: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut after_test = false;
    for line in source.lines() {
        let t = line.trim();
        if t.starts_with("#[test]") {
            after_test = true;
            continue;
        }
        if !after_test || t.is_empty() || t.starts_with("#[") || t.starts_with("//") {
            continue;
        }
        after_test = false;
        let rest = t.trim_start_matches("pub ").trim_start_matches("async ");
        if let Some(rest) = rest.strip_prefix("fn ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.insert(name);
        }
    }
    names
}

/// The `#[test]` functions of every `.rs` file under `tests/` and `src/`, by the file's path
/// from the root (`src/reduce/tests/chunks.rs`).
fn test_fns_by_file() -> BTreeMap<String, BTreeSet<String>> {
    let root = root();
    let mut out = BTreeMap::new();
    for dir in ["tests", "src"] {
        for file in crate::util::files_ending(&root.join(dir), ".rs") {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
            let rel = file.strip_prefix(&root).unwrap_or(&file);
            let rel = rel.to_string_lossy().replace('\\', "/");
            out.insert(rel, test_fns(&text));
        }
    }
    out
}

/// The Rust module path of a file under `src/` or `tests/` (`src/reduce/tests/chunks.rs` is
/// `reduce::tests::chunks`, `src/providers/codex/mod.rs` is `providers::codex`, `tests/docs.rs`
/// is `docs`).
fn module_path(file: &str) -> String {
    let p = file
        .trim_start_matches("src/")
        .trim_start_matches("tests/")
        .trim_end_matches(".rs")
        .trim_end_matches("/mod");
    p.replace('/', "::")
}

/// Whether `cited` names a `#[test]` function: `FILE.rs::NAME` in that file, or
/// `module::path::NAME` in the file of that module (or its inline `tests` module).
fn names_a_test(cited: &str, tests: &BTreeMap<String, BTreeSet<String>>) -> bool {
    let Some((place, name)) = cited.rsplit_once("::") else {
        return false;
    };
    if place.ends_with(".rs") {
        return tests.get(place).is_some_and(|fns| fns.contains(name));
    }
    let module = place.strip_suffix("::tests").unwrap_or(place);
    tests.iter().any(|(file, fns)| {
        (module_path(file) == module || module_path(file) == place) && fns.contains(name)
    })
}

/// The inline code spans of a line (`` `x` ``), in order.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// One row of a table of `docs/seeds.md`: its status (one of [`STATUSES`]) and the code spans
/// of its last cell, the tests that show it.
struct SeedRow {
    line: usize,
    status: &'static str,
    shown_by: Vec<String>,
}

/// The cells of a Markdown table row (`| a | b |`), trimmed; `None` for a line that is no row,
/// the header separator, or a header (its first cell is `requirement (section)` or `document`).
fn table_cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
    let header = cells[0].starts_with("requirement") || cells[0] == "document";
    (!header && !cells[0].starts_with("---")).then_some(cells)
}

/// The sections of `docs/seeds.md` (`## ` headings, with their rows), and its summary table
/// before the first of them (document name → the count of each status). Panics, naming the
/// line, on a row whose status is none of [`STATUSES`] or that has not three cells.
#[allow(clippy::type_complexity)]
fn seeds_doc(md: &str) -> (Vec<(String, Vec<SeedRow>)>, Vec<(String, Vec<usize>)>) {
    let mut sections: Vec<(String, Vec<SeedRow>)> = Vec::new();
    let mut summary = Vec::new();
    for (n, line) in prose_lines(md) {
        if let Some(h) = line.strip_prefix("## ") {
            sections.push((h.trim().to_owned(), Vec::new()));
            continue;
        }
        let Some(cells) = table_cells(line) else {
            continue;
        };
        let Some((_, rows)) = sections.last_mut() else {
            let counts = cells[1..]
                .iter()
                .map(|c| {
                    c.parse()
                        .unwrap_or_else(|_| panic!("docs/seeds.md:{n}: count {c:?}"))
                })
                .collect();
            summary.push((cells[0].to_owned(), counts));
            continue;
        };
        assert_eq!(
            cells.len(),
            3,
            "docs/seeds.md:{n}: a row has three cells: {line}"
        );
        let status = STATUSES
            .into_iter()
            .find(|s| {
                cells[1]
                    .strip_prefix(s)
                    .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric()))
            })
            .unwrap_or_else(|| {
                panic!(
                    "docs/seeds.md:{n}: the status {:?} is none of {STATUSES:?}",
                    cells[1]
                )
            });
        rows.push(SeedRow {
            line: n,
            status,
            shown_by: code_spans(cells[2])
                .into_iter()
                .map(str::to_owned)
                .collect(),
        });
    }
    (sections, summary)
}

#[test]
fn seeds_doc_cites_only_tests_that_exist_and_counts_its_rows() {
    let md = read("docs/seeds.md");
    let (sections, summary) = seeds_doc(&md);
    let tests = test_fns_by_file();
    let mut problems = Vec::new();
    for seed in SEEDS {
        let n = sections.iter().filter(|(h, _)| h.contains(seed)).count();
        if n != 1 {
            problems.push(format!("{seed}: {n} sections name it, not 1"));
        }
    }
    for (heading, rows) in &sections {
        if rows.is_empty() {
            problems.push(format!("{heading:?}: no rows"));
        }
        for row in rows {
            for cited in &row.shown_by {
                if !names_a_test(cited, &tests) {
                    problems.push(format!(
                        "docs/seeds.md:{}: `{cited}` is no #[test] fn under tests/ or src/",
                        row.line
                    ));
                }
            }
            if row.status == "met" && row.shown_by.is_empty() {
                problems.push(format!(
                    "docs/seeds.md:{}: met, but no test shows it",
                    row.line
                ));
            }
        }
        let counted: Vec<usize> = STATUSES
            .iter()
            .map(|s| rows.iter().filter(|r| r.status == *s).count())
            .collect();
        match summary.iter().find(|(name, _)| heading.starts_with(name.as_str())) {
            Some((_, said)) if *said == counted => {}
            Some((name, said)) => problems.push(format!(
                "the summary says {name}: {said:?}, its rows are {counted:?} (met, partly, not yet, out of scope)"
            )),
            None => problems.push(format!("the summary has no row for {heading:?}")),
        }
    }
    assert!(
        summary.len() == sections.len(),
        "docs/seeds.md: {} summary rows for {} sections",
        summary.len(),
        sections.len()
    );
    assert!(
        problems.is_empty(),
        "docs/seeds.md:\n{}",
        problems.join("\n")
    );
}

#[test]
fn seeds_doc_checking_reads_tests_rows_and_statuses() {
    let src =
        "#[test]\n#[ignore]\n// why\nfn a_test() {}\nfn helper() {}\n#[test]\n    pub fn b() {}\n";
    let got: Vec<String> = test_fns(src).into_iter().collect();
    assert_eq!(got, ["a_test", "b"]);
    let mut tests = BTreeMap::new();
    tests.insert("src/reduce/tests/chunks.rs".to_owned(), test_fns(src));
    tests.insert("src/providers/acp.rs".to_owned(), test_fns(src));
    assert!(names_a_test("src/reduce/tests/chunks.rs::a_test", &tests));
    assert!(names_a_test("reduce::tests::chunks::b", &tests));
    assert!(names_a_test("providers::acp::tests::a_test", &tests));
    assert!(!names_a_test("src/providers/acp.rs::helper", &tests));
    assert!(!names_a_test("tests/acp.rs::a_test", &tests));
    assert!(!names_a_test("a_test", &tests));
    let md = "| document | met | partly | not yet | out of scope |\n|---|---|---|---|---|\n| A | 1 | 0 | 1 | 0 |\n\n## A: `x.md`\n\n| requirement (section) | status | shown by |\n|---|---|---|\n| r (s) | met: why | `f.rs::t`, `g.rs::u` |\n| q | not yet: what | |\n";
    let (sections, summary) = seeds_doc(md);
    assert_eq!(summary, [("A".to_owned(), vec![1, 0, 1, 0])]);
    assert_eq!(sections.len(), 1);
    let rows = &sections[0].1;
    assert_eq!((rows[0].status, rows[1].status), ("met", "not yet"));
    assert_eq!(rows[0].shown_by, ["f.rs::t", "g.rs::u"]);
    assert!(rows[1].shown_by.is_empty());
}
