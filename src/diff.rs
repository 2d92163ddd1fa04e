//! Unified diffs of two texts, for providers that send a file's old and new text (ACP).

/// The `--- `/`+++ ` lines of a unified diff of `path` (`/dev/null` before a new file): for
/// providers that send the hunks alone.
pub fn headers(path: &str, new_file: bool) -> String {
    let p = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    let from = if new_file {
        "/dev/null".to_owned()
    } else {
        format!("a{p}")
    };
    format!("--- {from}\n+++ b{p}\n")
}

/// A unified diff from `old` to `new` of `path`, with three lines of context. `old` `None`
/// means the file is new. Texts of more than 4,000 lines fall back to replacing every line.
pub fn unified(path: &str, old: Option<&str>, new: &str) -> String {
    let a: Vec<&str> = old.map(|o| o.lines().collect()).unwrap_or_default();
    let b: Vec<&str> = new.lines().collect();
    let mut out = headers(path, old.is_none());
    let ops = if a.len() <= 4000 && b.len() <= 4000 {
        lcs_ops(&a, &b)
    } else {
        replace_all(&a, &b)
    };
    for hunk in hunks(&ops, 3) {
        let (mut ol, mut nl) = (0, 0);
        for op in &ops[hunk.clone()] {
            match op {
                Op::Same(..) => {
                    ol += 1;
                    nl += 1;
                }
                Op::Del(_) => ol += 1,
                Op::Add(_) => nl += 1,
            }
        }
        let (os, ns) = start_of(&ops, hunk.start);
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            if ol == 0 { os } else { os + 1 },
            ol,
            if nl == 0 { ns } else { ns + 1 },
            nl
        ));
        for op in &ops[hunk] {
            match op {
                Op::Same(l) => out.push_str(&format!(" {l}\n")),
                Op::Del(l) => out.push_str(&format!("-{l}\n")),
                Op::Add(l) => out.push_str(&format!("+{l}\n")),
            }
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

fn replace_all<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    a.iter()
        .map(|l| Op::Del(l))
        .chain(b.iter().map(|l| Op::Add(l)))
        .collect()
}

/// Edit script by longest common subsequence (quadratic; inputs are capped by the caller).
fn lcs_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    let (n, m) = (a.len(), b.len());
    let mut t = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[at(i, j)] = if a[i] == b[j] {
                t[at(i + 1, j + 1)] + 1
            } else {
                t[at(i + 1, j)].max(t[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(n + m);
    while i < n && j < m {
        if a[i] == b[j] {
            ops.push(Op::Same(a[i]));
            i += 1;
            j += 1;
        } else if t[at(i + 1, j)] >= t[at(i, j + 1)] {
            ops.push(Op::Del(a[i]));
            i += 1;
        } else {
            ops.push(Op::Add(b[j]));
            j += 1;
        }
    }
    ops.extend(a[i..].iter().map(|l| Op::Del(l)));
    ops.extend(b[j..].iter().map(|l| Op::Add(l)));
    ops
}

/// Ranges of `ops` that form hunks: changes with up to `ctx` lines of context around them.
fn hunks(ops: &[Op], ctx: usize) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (k, op) in ops.iter().enumerate() {
        if matches!(op, Op::Same(_)) {
            continue;
        }
        let start = k.saturating_sub(ctx);
        let end = (k + ctx + 1).min(ops.len());
        match out.last_mut() {
            Some(last) if start <= last.end => last.end = last.end.max(end),
            _ => out.push(start..end),
        }
    }
    out
}

/// Old and new line counts before op `k`.
fn start_of(ops: &[Op], k: usize) -> (usize, usize) {
    ops[..k].iter().fold((0, 0), |(o, n), op| match op {
        Op::Same(_) => (o + 1, n + 1),
        Op::Del(_) => (o + 1, n),
        Op::Add(_) => (o, n + 1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(
            unified("x.txt", Some(old), new),
            "--- a/x.txt\n+++ b/x.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
    }

    #[test]
    fn new_file() {
        assert_eq!(
            unified("/w/n.md", None, "# N\n"),
            "--- /dev/null\n+++ b/w/n.md\n@@ -0,0 +1,1 @@\n+# N\n"
        );
    }

    #[test]
    fn identical_texts_have_no_hunks() {
        assert_eq!(unified("f", Some("a\n"), "a\n"), "--- a/f\n+++ b/f\n");
    }
}
