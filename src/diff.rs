//! Unified diffs of two texts, for providers that send a file's old and new text (ACP).
//!
//! The edit script comes from Myers' O(ND) difference algorithm in its linear-space form
//! (E. W. Myers, "An O(ND) Difference Algorithm and Its Variations", 1986, section 4b): find
//! a point in the middle of a shortest edit path, then solve the parts before and after it.
//! Memory grows with the number of lines, not with its square.

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
/// means the file is new.
///
/// The diff is minimal (fewest `-` and `+` lines) unless the search for the middle of the
/// edit path passes [`MAX_COST`] edits each way, which takes texts that differ in more than
/// about twice as many lines. The search then splits the texts where it got furthest, so some
/// lines that both texts have may show as removed and added again: the diff is still correct
/// (it turns `old` into `new`), and the time stays linear in the number of lines.
pub fn unified(path: &str, old: Option<&str>, new: &str) -> String {
    let a: Vec<&str> = old.map(|o| o.lines().collect()).unwrap_or_default();
    let b: Vec<&str> = new.lines().collect();
    let ops = edit_script(&a, &b);
    let mut out = headers(path, old.is_none());
    // `ops[..k]` hold `os` old lines and `ns` new lines.
    let (mut k, mut os, mut ns) = (0, 0, 0);
    for hunk in hunks(&ops, 3) {
        (os, ns) = advance(&ops[k..hunk.start], (os, ns));
        let (oe, ne) = advance(&ops[hunk.clone()], (os, ns));
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            if oe == os { os } else { os + 1 },
            oe - os,
            if ne == ns { ns } else { ns + 1 },
            ne - ns
        ));
        for op in &ops[hunk.clone()] {
            match op {
                Op::Same(l) => out.push_str(&format!(" {l}\n")),
                Op::Del(l) => out.push_str(&format!("-{l}\n")),
                Op::Add(l) => out.push_str(&format!("+{l}\n")),
            }
        }
        (k, os, ns) = (hunk.end, oe, ne);
    }
    out
}

/// The most edits the search for a middle point makes from each end before it gives up on
/// a shortest path (see [`unified`]). It bounds the time of a diff to about `MAX_COST` times
/// the number of lines, and the search's memory to about `4 * MAX_COST` words.
const MAX_COST: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

/// The edit script from `a` to `b`: the lines they keep, and between two kept lines, the
/// lines of `a` removed and then the lines of `b` added.
fn edit_script<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    let mut kept = Vec::new();
    let mut v = Search::default();
    common(a, b, (0, 0), (a.len(), b.len()), &mut v, &mut kept);
    let mut ops = Vec::with_capacity(a.len().max(b.len()));
    let (mut x, mut y) = (0, 0);
    for (i, j, len) in kept.into_iter().chain([(a.len(), b.len(), 0)]) {
        ops.extend(a[x..i].iter().map(|l| Op::Del(l)));
        ops.extend(b[y..j].iter().map(|l| Op::Add(l)));
        ops.extend(a[i..i + len].iter().map(|l| Op::Same(l)));
        (x, y) = (i + len, j + len);
    }
    ops
}

/// Appends to `kept`, in order, the runs `(i, j, len)` of lines kept
/// (`a[i..i + len] == b[j..j + len]`) by an edit script of `a[x..xe]` to `b[y..ye]`.
fn common(
    a: &[&str],
    b: &[&str],
    (mut x, mut y): (usize, usize),
    (mut xe, mut ye): (usize, usize),
    v: &mut Search,
    kept: &mut Vec<(usize, usize, usize)>,
) {
    let suffix = a[x..xe]
        .iter()
        .rev()
        .zip(b[y..ye].iter().rev())
        .take_while(|(p, q)| p == q)
        .count();
    (xe, ye) = (xe - suffix, ye - suffix);
    // The part after each middle point is solved by the next turn of the loop, and the part
    // before it by recursion: that part holds at most half the edits (or, after a search that
    // gave up, at most MAX_COST), so the recursion is shallow.
    loop {
        let prefix = a[x..xe]
            .iter()
            .zip(&b[y..ye])
            .take_while(|(p, q)| p == q)
            .count();
        if prefix > 0 {
            kept.push((x, y, prefix));
            (x, y) = (x + prefix, y + prefix);
        }
        if x == xe || y == ye {
            break;
        }
        let (mx, my) = v.middle(&a[x..xe], &b[y..ye]);
        if (mx, my) == (0, 0) || (x + mx, y + my) == (xe, ye) {
            break; // Not reached (see `middle`); this keeps the loop finite regardless.
        }
        common(a, b, (x, y), (x + mx, y + my), v, kept);
        (x, y) = (x + mx, y + my);
    }
    if suffix > 0 {
        kept.push((xe, ye, suffix));
    }
}

/// The furthest points of the search on each diagonal, reused from one search to the next.
#[derive(Default)]
struct Search {
    fwd: Vec<isize>,
    bwd: Vec<isize>,
}

impl Search {
    /// A point `(x, y)` of a shortest edit path from `a` to `b` (both non-empty, their first
    /// lines differ), strictly between its ends: the path's first `x` lines of `a` and `y`
    /// lines of `b` turn into each other, and so do the rest.
    ///
    /// Myers' middle snake: paths grow one edit at a time from the start (`fwd`) and from the
    /// end (`bwd`, on the reversed texts), each keeping the furthest point it reaches on each
    /// diagonal `k = x - y` (-1: none). Where a path from one end reaches a diagonal at or past
    /// the point the other end reached, the two make a shortest path. After [`MAX_COST`]
    /// edits from each end without meeting, the point is where the forward search got
    /// furthest.
    fn middle(&mut self, a: &[&str], b: &[&str]) -> (usize, usize) {
        let (n, m) = (a.len() as isize, b.len() as isize);
        let delta = n - m;
        let dmax = ((n + m + 1) / 2).min(MAX_COST as isize);
        let off = dmax + 1;
        for v in [&mut self.fwd, &mut self.bwd] {
            v.clear();
            v.resize(2 * off as usize + 1, -1);
        }
        let at = |k: isize| (off + k) as usize;
        for d in 0..=dmax {
            for k in (-d..=d).step_by(2) {
                let Some((x, y)) = furthest(&self.fwd, at, k, d, (n, m), |x, y| {
                    a[x as usize] == b[y as usize]
                }) else {
                    self.fwd[at(k)] = -1;
                    continue;
                };
                self.fwd[at(k)] = x;
                // With `delta` odd the paths meet after an odd number of edits: forward `d`
                // and backward `d - 1`.
                let r = delta - k;
                if delta % 2 != 0 && r.abs() < d {
                    let rx = self.bwd[at(r)];
                    if rx >= 0 && x + rx >= n {
                        return (x as usize, y as usize);
                    }
                }
            }
            for r in (-d..=d).step_by(2) {
                let Some((rx, ry)) = furthest(&self.bwd, at, r, d, (n, m), |x, y| {
                    a[(n - 1 - x) as usize] == b[(m - 1 - y) as usize]
                }) else {
                    self.bwd[at(r)] = -1;
                    continue;
                };
                self.bwd[at(r)] = rx;
                let k = delta - r;
                if delta % 2 == 0 && k.abs() <= d {
                    let x = self.fwd[at(k)];
                    if x >= 0 && x + rx >= n {
                        return ((n - rx) as usize, (m - ry) as usize);
                    }
                }
            }
        }
        (-dmax..=dmax)
            .step_by(2)
            .filter(|&k| self.fwd[at(k)] >= 0)
            .map(|k| (self.fwd[at(k)], self.fwd[at(k)] - k))
            .max_by_key(|&(x, y)| x + y)
            .map_or((0, 0), |(x, y)| (x as usize, y as usize))
    }
}

/// The furthest point on diagonal `k` after `d` edits, given `v` after `d - 1` (`at` maps a
/// diagonal to its index): one line of `a` removed from the point on `k - 1`, or one line of
/// `b` added to the point on `k + 1`, whichever stays in the `n` by `m` grid and gets further,
/// then along the diagonal while `same` lines follow. `None` if neither does.
fn furthest(
    v: &[isize],
    at: impl Fn(isize) -> usize,
    k: isize,
    d: isize,
    (n, m): (isize, isize),
    same: impl Fn(isize, isize) -> bool,
) -> Option<(isize, isize)> {
    let mut x = if d == 0 {
        0
    } else {
        let add = Some(v[at(k + 1)]).filter(|&x| k < d && x >= 0 && x - k <= m);
        let del = Some(v[at(k - 1)]).filter(|&x| k > -d && x >= 0 && x < n);
        add.max(del.map(|x| x + 1))?
    };
    let mut y = x - k;
    while x < n && y < m && same(x, y) {
        (x, y) = (x + 1, y + 1);
    }
    Some((x, y))
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

/// Old and new line counts `(o, n)` advanced past `ops`.
fn advance(ops: &[Op], (o, n): (usize, usize)) -> (usize, usize) {
    ops.iter().fold((o, n), |(o, n), op| match op {
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

    /// `n` numbered lines, from `from`.
    fn numbered(from: usize, n: usize) -> String {
        (from..from + n).map(|i| format!("line {i}\n")).collect()
    }

    /// `old` with the hunks of `diff` applied, checking every context and removed line.
    fn apply(old: &str, diff: &str) -> String {
        let old: Vec<&str> = old.lines().collect();
        let (mut out, mut next) = (String::new(), 0);
        let mut lines = diff.lines().skip(2).peekable();
        while let Some(h) = lines.next() {
            // `@@ -start,count …`: with no old lines, the hunk goes after line `start`.
            let (start, count) = h[4..h.find(" +").unwrap()].split_once(',').unwrap();
            let start: usize = start.parse().unwrap();
            let at = if count == "0" { start } else { start - 1 };
            for l in &old[next..at] {
                out.push_str(l);
                out.push('\n');
            }
            next = at;
            while let Some(l) = lines.next_if(|l| !l.starts_with("@@")) {
                let (tag, text) = l.split_at(1);
                if tag != "+" {
                    assert_eq!(old[next], text, "line {} of old", next + 1);
                    next += 1;
                }
                if tag != "-" {
                    out.push_str(text);
                    out.push('\n');
                }
            }
        }
        for l in &old[next..] {
            out.push_str(l);
            out.push('\n');
        }
        out
    }

    /// Lines marked `-` or `+` in `diff`.
    fn edits(diff: &str) -> usize {
        diff.lines()
            .skip(2)
            .filter(|l| l.starts_with(['-', '+']))
            .count()
    }

    #[test]
    fn one_changed_line_of_thousands_gives_one_hunk() {
        for n in [4000, 8000] {
            let old = numbered(0, n);
            let new = old.replace("line 2000\n", "line two thousand\n");
            assert_eq!(
                unified("f", Some(&old), &new),
                "--- a/f\n+++ b/f\n@@ -1998,7 +1998,7 @@\n line 1997\n line 1998\n line 1999\n\
                 -line 2000\n+line two thousand\n line 2001\n line 2002\n line 2003\n",
                "{n} lines"
            );
        }
    }

    #[test]
    fn completely_different_texts_of_8000_lines() {
        let (old, new) = (numbered(0, 8000), numbered(8000, 8000));
        let t = std::time::Instant::now();
        let diff = unified("f", Some(&old), &new);
        let took = t.elapsed();
        assert!(diff.starts_with("--- a/f\n+++ b/f\n@@ -1,8000 +1,8000 @@\n-line 0\n"));
        assert_eq!(edits(&diff), 16000);
        assert_eq!(apply(&old, &diff), new);
        // Unoptimized, on a loaded machine, this takes a fraction of a second.
        assert!(took.as_secs() < 10, "{took:?}");
    }

    #[test]
    fn past_the_cost_bound_the_diff_is_still_correct() {
        // Every third line changed: 2 x 2,667 edits, more than a search of MAX_COST edits
        // from each end can join.
        let old = numbered(0, 8000);
        let new: String = old
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i % 3 == 0 {
                    format!("{l}!\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let diff = unified("f", Some(&old), &new);
        assert_eq!(apply(&old, &diff), new);
        assert!(edits(&diff) >= 2 * 2667);
    }

    /// Longest common subsequence of `a` and `b`, by the quadratic table.
    fn lcs(a: &[&str], b: &[&str]) -> usize {
        let mut t = vec![vec![0; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                t[i][j] = if a[i] == b[j] {
                    t[i + 1][j + 1] + 1
                } else {
                    t[i + 1][j].max(t[i][j + 1])
                };
            }
        }
        t[0][0]
    }

    #[test]
    fn diffs_of_random_texts_are_minimal_and_apply() {
        let mut seed = 0x2545_f491_u64;
        let mut next = |below: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % below) as usize
        };
        for _ in 0..3000 {
            let words = ["a", "b", "c", "d"];
            let alphabet = 1 + next(4) as u64;
            let mut text = || -> String {
                (0..next(14))
                    .map(|_| format!("{}\n", words[next(alphabet)]))
                    .collect()
            };
            let (old, new) = (text(), text());
            let diff = unified("f", Some(&old), &new);
            assert_eq!(apply(&old, &diff), new, "{old:?} -> {new:?}:\n{diff}");
            let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
            assert_eq!(
                edits(&diff),
                a.len() + b.len() - 2 * lcs(&a, &b),
                "{old:?} -> {new:?}:\n{diff}"
            );
        }
    }
}
