//! The check behind `diff-unified`: is a `file_change` diff a unified diff that `git apply`
//! accepts? (`crate::diff` makes diffs; this only reads them.)
//!
//! A diff is one or more files. Each file is a `--- ` line, then a `+++ ` line, then hunks
//! `@@ -a[,b] +c[,d] @@` (a missing count is 1), each followed by exactly `b` lines that start
//! with ` ` or `-` and `d` that start with ` ` or `+` (a context line counts for both, and an
//! empty line is an empty context line, as `git apply` reads it). A line starting with `\`
//! (`\ No newline at end of file`) may follow any line of a hunk. Lines before a file's `--- `
//! are headers (`diff --git`, `index`, `Index:`, …) and are not read, but text after the last
//! hunk is reported, and so is a hunk line beyond the counts. A file from `/dev/null` has no
//! old lines, a file to `/dev/null` no new ones. Every hunk but a file's last ends with a
//! context line: `git apply` wants a hunk without trailing context at the end of the file.
//! (Whether the last one is at the end, only the file can tell.)
//!
//! Stricter than `git apply` where git would skip text silently (trailing text, surplus hunk
//! lines); never looser: the tests give every diff they accept to `git apply --check`.

/// Why a diff is not a unified diff: where (the line of the diff, from 1) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}

enum State {
    /// Before the first file's `--- ` line, or after a complete hunk (`after_hunk`).
    Headers,
    /// After a `--- ` line.
    Old,
    /// After a `+++ ` line: a hunk must follow.
    New,
    /// In a hunk, with these many old and new lines to come, from the hunk at `at`.
    Hunk { old: u64, new: u64, at: usize },
}

/// `Ok` when `diff` is a unified diff as described in the module; else the first problem.
/// Linear in the diff's length; allocates only for the problem.
pub fn check(diff: &str) -> Result<(), Problem> {
    let bad = |line: usize, what: &str| {
        Err(Problem {
            line,
            what: what.to_owned(),
        })
    };
    let mut state = State::Headers;
    let mut files = 0;
    // The first line of text after a complete hunk: wrong unless another file follows.
    let mut trailing: Option<usize> = None;
    let mut from_null = false;
    let mut to_null = false;
    // The line before was a hunk line, so a `\` marker may follow.
    let mut in_hunk = false;
    // The last hunk of the file so far (its line) ended with a change, not context: `git apply`
    // then wants it at the end of the file, so no hunk may follow.
    let mut at_end: Option<usize> = None;
    let mut n = 0;
    for line in diff.split_terminator('\n') {
        n += 1;
        let marker = line.starts_with('\\');
        if marker && in_hunk {
            continue;
        }
        in_hunk = false;
        match state {
            State::Headers => {
                if let Some(name) = line.strip_prefix("--- ") {
                    from_null = name.starts_with("/dev/null");
                    trailing = None;
                    at_end = None;
                    state = State::Old;
                } else if line.starts_with("@@") {
                    if files == 0 {
                        return bad(n, "a hunk before the `--- ` and `+++ ` lines");
                    }
                    if let Some(t) = trailing {
                        return bad(t, "text between hunks");
                    }
                    if let Some(h) = at_end {
                        return Err(Problem {
                            line: n,
                            what: format!("the hunk of line {h} ends without context, so git apply wants it at the end of the file, but another hunk follows"),
                        });
                    }
                    state = hunk_header(line, n, from_null, to_null)?;
                } else if files > 0 && trailing.is_none() {
                    if line.is_empty() || line.starts_with([' ', '-', '+']) || marker {
                        return bad(n, "a hunk line beyond the counts of its hunk's header");
                    }
                    trailing = Some(n);
                }
            }
            State::Old => match line.strip_prefix("+++ ") {
                Some(name) => {
                    to_null = name.starts_with("/dev/null");
                    state = State::New;
                }
                None => return bad(n, "the `--- ` line is not followed by a `+++ ` line"),
            },
            State::New => {
                if !line.starts_with("@@") {
                    return bad(
                        n,
                        "the `+++ ` line is not followed by a hunk (`@@ -a,b +c,d @@`)",
                    );
                }
                files += 1;
                state = hunk_header(line, n, from_null, to_null)?;
            }
            State::Hunk { old, new, at } => {
                let (o, w) = match line.as_bytes().first() {
                    None | Some(b' ') => (1, 1),
                    Some(b'-') => (1, 0),
                    Some(b'+') => (0, 1),
                    _ => {
                        return Err(Problem {
                            line: n,
                            what: format!(
                                "the hunk of line {at} ends early: {old} old and {new} new lines missing"
                            ),
                        })
                    }
                };
                if o > old || w > new {
                    return Err(Problem {
                        line: n,
                        what: format!(
                            "more {} lines than the header of the hunk of line {at} counts",
                            if o > old { "old" } else { "new" }
                        ),
                    });
                }
                in_hunk = true;
                state = if old == o && new == w {
                    at_end = (o != w).then_some(at);
                    State::Headers
                } else {
                    State::Hunk {
                        old: old - o,
                        new: new - w,
                        at,
                    }
                };
            }
        }
    }
    match state {
        State::Headers if files == 0 => bad(1, "no `--- ` and `+++ ` lines"),
        State::Headers => match trailing {
            Some(t) => bad(t, "text after the last hunk"),
            None => Ok(()),
        },
        State::Old | State::New => bad(n, "the diff ends before its first hunk"),
        State::Hunk { old, new, at } => Err(Problem {
            line: n,
            what: format!(
                "the diff ends in the hunk of line {at}: {old} old and {new} new lines missing"
            ),
        }),
    }
}

/// The state after hunk header `line` (line `n`): `@@ -a[,b] +c[,d] @@`, then anything.
fn hunk_header(line: &str, n: usize, from_null: bool, to_null: bool) -> Result<State, Problem> {
    let bad = |what: &str| Problem {
        line: n,
        what: what.to_owned(),
    };
    let range = |s: &str| -> Option<u64> {
        let (start, count) = s.split_once(',').unwrap_or((s, "1"));
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        (digits(start) && digits(count)).then(|| count.parse().ok())?
    };
    let parsed = line
        .strip_prefix("@@ -")
        .and_then(|r| r.split_once(" +"))
        .and_then(|(old, r)| {
            let (new, _) = r.split_once(" @@")?;
            Some((range(old)?, range(new)?))
        });
    let Some((old, new)) = parsed else {
        return Err(bad("not a hunk header `@@ -a,b +c,d @@`"));
    };
    if from_null && old > 0 {
        return Err(bad("a file from /dev/null with old lines"));
    }
    if to_null && new > 0 {
        return Err(bad("a file to /dev/null with new lines"));
    }
    Ok(if old == 0 && new == 0 {
        State::Headers
    } else {
        State::Hunk { old, new, at: n }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Diffs `check` accepts, each with the files it applies to (path, content).
    const GOOD: &[(&str, &[(&str, &str)])] = &[
        (
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
            &[("f.txt", "one\ntwo\nthree\n")],
        ),
        // New file, deleted file.
        (
            "--- /dev/null\n+++ b/new.md\n@@ -0,0 +1,2 @@\n+# Notes\n+Debug is on.\n",
            &[],
        ),
        (
            "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n",
            &[("old.txt", "a\nb\n")],
        ),
        // Two hunks, a section heading after the header.
        (
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@ fn main\n-1\n+one\n 2\n@@ -5,2 +5,3 @@\n 5\n-6\n+six\n+seven\n",
            &[("f.txt", "1\n2\n3\n4\n5\n6\n")],
        ),
        // Counts left out (1); no context.
        ("--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n", &[("f.txt", "a\n")]),
        // No newline at the end, before and after; an empty line as empty context.
        (
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
            &[("f.txt", "a\n\nb")],
        ),
        // git's headers, two files, a header-only preamble (Index:, as OpenCode writes).
        (
            "diff --git a/x b/x\nindex 1111111..2222222 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-x\n+X\ndiff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+y\n",
            &[("x", "x\n")],
        ),
        (
            "Index: f.txt\n===================================================================\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n",
            &[("f.txt", "a\nb\n")],
        ),
    ];

    #[test]
    fn unified_diffs_pass() {
        for (diff, _) in GOOD {
            assert_eq!(check(diff), Ok(()), "{diff}");
        }
    }

    fn problem(diff: &str) -> (usize, String) {
        let p = check(diff).expect_err(diff);
        (p.line, p.what)
    }

    #[test]
    fn what_is_not_a_unified_diff() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "no `--- `"),
            ("Moved to: b.txt\n", 1, "no `--- `"),
            // Cursor: hunks with no file headers.
            ("@@ -1 +1 @@\n-a\n+b\n", 1, "a hunk before"),
            (
                "--- a/f\n@@ -1 +1 @@\n-a\n+b\n",
                2,
                "not followed by a `+++ `",
            ),
            ("--- a/f\n+++ b/f\n-a\n+b\n", 3, "not followed by a hunk"),
            ("--- a/f\n+++ b/f\n", 2, "ends before its first hunk"),
            (
                "--- a/f\n+++ b/f\n@@ -1 +1 @\n-a\n+b\n",
                3,
                "not a hunk header",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -x,1 +1 @@\n-a\n+b\n",
                3,
                "not a hunk header",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n",
                5,
                "ends in the hunk of line 3: 1 old and 1 new",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\nc\n",
                6,
                "ends early",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n-b\n+c\n",
                5,
                "more old lines",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n c\n",
                6,
                "beyond the counts",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n\n",
                6,
                "beyond the counts",
            ),
            (
                "--- /dev/null\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
                3,
                "from /dev/null",
            ),
            (
                "--- a/f\n+++ /dev/null\n@@ -1 +1 @@\n-a\n+b\n",
                3,
                "to /dev/null",
            ),
            // Codex's move, with its note after the hunk.
            (
                "--- a/f\n+++ b/g\n@@ -1 +1 @@\n-a\n+b\nMoved to: g\n",
                6,
                "text after the last hunk",
            ),
            ("\\ No newline at end of file\n--- a/f\n", 2, "ends before"),
            (
                "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\nnote\n@@ -3 +3 @@\n-c\n+d\n",
                6,
                "between hunks",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n@@ -3 +3 @@\n-c\n+d\n",
                6,
                "hunk of line 3 ends without context",
            ),
        ];
        for (diff, line, what) in cases {
            let (l, w) = problem(diff);
            assert!(w.contains(what), "{diff:?}: {w}");
            assert_eq!(l, *line, "{diff:?}: {w}");
        }
    }

    /// `check` is not looser than git: `git apply --check` takes every diff it accepts here.
    #[test]
    fn git_apply_takes_what_check_accepts() {
        let git = std::process::Command::new("git").arg("--version").output();
        if !git.is_ok_and(|o| o.status.success()) {
            eprintln!("git_apply_takes_what_check_accepts: skipped, no git on PATH");
            return;
        }
        let dir = std::env::temp_dir().join(format!("insights-unified-{}", std::process::id()));
        for (i, (diff, files)) in GOOD.iter().enumerate() {
            assert_eq!(check(diff), Ok(()), "{diff}");
            let case = dir.join(i.to_string());
            std::fs::create_dir_all(&case).expect("mkdir");
            for (path, content) in *files {
                std::fs::write(case.join(path), content).expect("write");
            }
            std::fs::write(case.join("the.patch"), diff).expect("write");
            let out = std::process::Command::new("git")
                .args(["apply", "--check", "the.patch"])
                .current_dir(&case)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CEILING_DIRECTORIES", &dir)
                .output()
                .expect("git runs");
            assert!(
                out.status.success(),
                "git apply --check rejects {diff:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
