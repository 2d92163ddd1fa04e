//! Unified diffs of two texts, for providers that send a file's old and new text (ACP's
//! `diff` content, the old and new strings of an edit tool's input).
//!
//! The edit script comes from Myers' O(ND) difference algorithm in its linear-space form
//! (E. W. Myers, "An O(ND) Difference Algorithm and Its Variations", 1986, section 4b): find
//! a point in the middle of a shortest edit path, then solve the parts before and after it.
//! Memory grows with the number of lines, not with its square, and the search's time is
//! bounded by a budget of steps ([`unified`]): every caller gets the bound.

use std::collections::HashMap;
use std::ops::Range;

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

/// A diff whose header paths (`diff --git a/… b/…`, `--- a/…`, `+++ b/…`, `rename from/to`,
/// `copy from/to`) start with `from` has that start replaced by `to`; other paths, and the
/// hunks, are kept. The paths are those after `a/`/`b/`, written from the root as insights
/// writes them (`a/home/dev/x` for `/home/dev/x`, as `git diff --no-index` does).
///
/// Codex names a turn's files relative to its directory, and the converter writes them from
/// the root (`from` empty, `to` the directory); a transcript names files under the session's
/// directory relative to it (`from` the directory, `to` empty), so that `git apply` takes
/// the diff there. A file outside it keeps its path from the root, which `git apply` takes
/// from `/`.
pub fn rebase(diff: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(diff.len() + 6 * to.len());
    let mut header = true;
    let path = |out: &mut String, p: &str| match p.strip_prefix(from) {
        Some(rest) if !rest.is_empty() => {
            out.push_str(to);
            out.push_str(rest);
        }
        _ => out.push_str(p),
    };
    for l in diff.split_inclusive('\n') {
        if l.starts_with("diff --git ") {
            header = true;
        } else if header && l.starts_with("@@") {
            header = false;
        }
        if !header {
            out.push_str(l);
            continue;
        }
        const LEADS: [&str; 6] = [
            "--- a/",
            "+++ b/",
            "rename from ",
            "rename to ",
            "copy from ",
            "copy to ",
        ];
        if let Some((lead, rest)) = LEADS
            .iter()
            .find_map(|lead| l.strip_prefix(lead).map(|r| (*lead, r)))
        {
            out.push_str(lead);
            path(&mut out, rest);
            continue;
        }
        match l
            .strip_prefix("diff --git a/")
            .and_then(|r| r.split_once(" b/"))
        {
            Some((a, b)) => {
                out.push_str("diff --git a/");
                path(&mut out, a);
                out.push_str(" b/");
                path(&mut out, b);
            }
            None => out.push_str(l),
        }
    }
    out
}

/// A unified diff from `old` to `new` of `path`, with three lines of context. `old` `None`
/// means the file is new.
///
/// The diff is minimal (fewest `-` and `+` lines) unless the search for it gives up; either
/// way it is correct: applied to `old`, it gives `new`. The search gives up in two ways, each
/// counted in steps of work, never timed, so the diff is the same on any machine:
/// - A search for the middle of the edit path stops after [`MAX_COST`] edits from each end,
///   which takes texts that differ in more than about twice as many lines, and splits the
///   texts where it got furthest: some lines that both texts have may show as removed and
///   added again.
/// - The whole diff stops searching after [`BUDGET`] steps. The lines it had not matched by
///   then show as removed and added, except for lines that both texts have at the start or
///   the end of such a part.
///
/// Its time is therefore linear in the size of the texts, plus at most [`BUDGET`] steps.
/// Texts of more than [`MAX_LINES`] lines together are not searched at all: every line shows
/// as removed and added, so that the memory a diff takes beside its texts and its output
/// stays bounded (the search keeps some 40 bytes per line).
pub fn unified(path: &str, old: Option<&str>, new: &str) -> String {
    let lines = |t: &str| memchr::memchr_iter(b'\n', t.as_bytes()).count() + 1;
    if old.map_or(0, lines) + lines(new) > MAX_LINES {
        return replaced(path, old, new);
    }
    unified_within(path, old, new, BUDGET).0
}

/// The most lines of the two texts together that [`unified`] searches for a shortest diff.
const MAX_LINES: usize = 1 << 20;

/// A diff that removes every line of `old` and adds every line of `new`, written straight
/// from the texts.
fn replaced(path: &str, old: Option<&str>, new: &str) -> String {
    let (n, m) = (old.map_or(0, |o| o.lines().count()), new.lines().count());
    let mut out = headers(path, old.is_none());
    if n + m == 0 {
        return out;
    }
    let start = |len: usize| usize::from(len > 0);
    out.reserve(old.map_or(0, str::len) + new.len() + n + m + 32);
    out.push_str(&format!("@@ -{},{n} +{},{m} @@\n", start(n), start(m)));
    for (tag, text) in [('-', old.unwrap_or("")), ('+', new)] {
        for l in text.lines() {
            out.push(tag);
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// [`unified`] with a budget of `budget` steps, and the steps it took.
fn unified_within(path: &str, old: Option<&str>, new: &str, budget: usize) -> (String, usize) {
    const CONTEXT: usize = 3;
    let a: Vec<&str> = old.map(|o| o.lines().collect()).unwrap_or_default();
    let b: Vec<&str> = new.lines().collect();
    let (changes, steps) = edit_script(&a, &b, budget);
    let mut out = headers(path, old.is_none());
    let push = |out: &mut String, tag: char, lines: &[&str]| {
        for l in lines {
            out.push(tag);
            out.push_str(l);
            out.push('\n');
        }
    };
    // A hunk holds the changes whose unchanged lines between them fit in its context.
    let mut rest = &changes[..];
    while let Some(first) = rest.first() {
        let len = 1 + rest
            .windows(2)
            .take_while(|w| w[1].old.start - w[0].old.end <= 2 * CONTEXT)
            .count();
        let (hunk, last) = (&rest[..len], &rest[len - 1]);
        rest = &rest[len..];
        // The same lines come before its first change and after its last in both texts.
        let lead = first.old.start.min(CONTEXT);
        let trail = (a.len() - last.old.end).min(CONTEXT);
        let (os, oe) = (first.old.start - lead, last.old.end + trail);
        let (ns, ne) = (first.new.start - lead, last.new.end + trail);
        let start = |s: usize, e: usize| if e == s { s } else { s + 1 };
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            start(os, oe),
            oe - os,
            start(ns, ne),
            ne - ns
        ));
        let mut kept = os;
        for c in hunk {
            push(&mut out, ' ', &a[kept..c.old.start]);
            push(&mut out, '-', &a[c.old.clone()]);
            push(&mut out, '+', &b[c.new.clone()]);
            kept = c.old.end;
        }
        push(&mut out, ' ', &a[kept..oe]);
    }
    (out, steps)
}

/// The most edits the search for a middle point makes from each end before it gives up on
/// a shortest path (see [`unified`]). It bounds the search's memory to about `4 * MAX_COST`
/// words.
const MAX_COST: usize = 1024;

/// The most steps of work one diff takes in its search for a short edit script (see
/// [`unified`]): a step is one diagonal tried or one pair of lines compared. 2^25 steps take
/// about 0.15 s (release build). A 30,000-line file with 30% of its lines changed takes
/// about half of them, a 10,000-line file with 5% changed 1%.
const BUDGET: usize = 1 << 25;

/// A change of an edit script: the lines `old` of the old text are removed, and the lines
/// `new` of the new text added in their place. One of the two may be empty.
#[derive(Debug, Clone, PartialEq)]
struct Change {
    old: Range<usize>,
    new: Range<usize>,
}

/// The edit script from `a` to `b`, in order, and the steps of `budget` its search took.
/// The lines between two changes are kept.
///
/// The lines the texts end and then start with alike are kept as they are; the search works on
/// the rest with each line replaced by a number, the same for equal lines, so that
/// comparing two lines is one step however long they are.
fn edit_script(a: &[&str], b: &[&str], budget: usize) -> (Vec<Change>, usize) {
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(p, q)| p == q)
        .count();
    let (n, m) = (a.len() - suffix, b.len() - suffix);
    let prefix = a[..n]
        .iter()
        .zip(&b[..m])
        .take_while(|(p, q)| p == q)
        .count();
    let (a, b) = (&a[prefix..n], &b[prefix..m]);
    let (ai, bi) = {
        let mut ids = HashMap::new();
        let mut id = |l| {
            let next = ids.len() as u32;
            *ids.entry(l).or_insert(next)
        };
        let ai: Vec<u32> = a.iter().map(|&l| id(l)).collect();
        let bi: Vec<u32> = b.iter().map(|&l| id(l)).collect();
        (ai, bi)
    };
    let mut kept = Vec::new();
    let mut v = Search {
        budget,
        ..Search::default()
    };
    common(&ai, &bi, (0, 0), (a.len(), b.len()), &mut v, &mut kept);
    let mut changes = Vec::new();
    let (mut x, mut y) = (0, 0);
    for (i, j, len) in kept.into_iter().chain([(a.len(), b.len(), 0)]) {
        if (i, j) != (x, y) {
            changes.push(Change {
                old: prefix + x..prefix + i,
                new: prefix + y..prefix + j,
            });
        }
        (x, y) = (i + len, j + len);
    }
    (changes, v.steps)
}

/// Appends to `kept`, in order, the runs `(i, j, len)` of lines kept
/// (`a[i..i + len] == b[j..j + len]`) by an edit script of `a[x..xe]` to `b[y..ye]`. Once
/// the search's budget is spent, what is left between the runs found is removed and added.
fn common(
    a: &[u32],
    b: &[u32],
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
            break; // The budget is spent (and, for the loop's sake, a search that failed).
        }
        common(a, b, (x, y), (x + mx, y + my), v, kept);
        (x, y) = (x + mx, y + my);
    }
    if suffix > 0 {
        kept.push((xe, ye, suffix));
    }
}

/// The furthest points of the search on each diagonal, reused from one search to the next,
/// and the steps of work taken out of the budget.
#[derive(Default)]
struct Search {
    fwd: Vec<isize>,
    bwd: Vec<isize>,
    steps: usize,
    budget: usize,
}

impl Search {
    /// A point `(x, y)` of a shortest edit path from `a` to `b` (both non-empty, their first
    /// lines differ), strictly between its ends: the path's first `x` lines of `a` and `y`
    /// lines of `b` turn into each other, and so do the rest. `(0, 0)` when the budget is
    /// spent before the search finds a point past the start.
    ///
    /// Myers' middle snake: paths grow one edit at a time from the start (`fwd`) and from the
    /// end (`bwd`, on the reversed texts), each keeping the furthest point it reaches on each
    /// diagonal `k = x - y` (-1: none). Where a path from one end reaches a diagonal at or past
    /// the point the other end reached, the two make a shortest path. After [`MAX_COST`]
    /// edits from each end without meeting, or when the budget runs out, the point is where
    /// the forward search got furthest.
    fn middle(&mut self, a: &[u32], b: &[u32]) -> (usize, usize) {
        let (n, m) = (a.len() as isize, b.len() as isize);
        let delta = n - m;
        let dmax = ((n + m + 1) / 2).min(MAX_COST as isize);
        let off = dmax + 1;
        for v in [&mut self.fwd, &mut self.bwd] {
            v.clear();
            v.resize(2 * off as usize + 1, -1);
        }
        let at = |k: isize| (off + k) as usize;
        'search: for d in 0..=dmax {
            for k in (-d..=d).step_by(2) {
                if self.steps >= self.budget {
                    break 'search;
                }
                let left = self.budget - self.steps - 1;
                let Some((x, y, slid)) = furthest(&self.fwd, at, k, d, (n, m), left, |x, y| {
                    a[x as usize] == b[y as usize]
                }) else {
                    self.steps += 1;
                    self.fwd[at(k)] = -1;
                    continue;
                };
                self.steps += 1 + slid;
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
                if self.steps >= self.budget {
                    break 'search;
                }
                let left = self.budget - self.steps - 1;
                let Some((rx, ry, slid)) = furthest(&self.bwd, at, r, d, (n, m), left, |x, y| {
                    a[(n - 1 - x) as usize] == b[(m - 1 - y) as usize]
                }) else {
                    self.steps += 1;
                    self.bwd[at(r)] = -1;
                    continue;
                };
                self.steps += 1 + slid;
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
        // After `dmax` edits, the diagonals of its parity hold the search's furthest points.
        // A search cut short by the budget left some of them at fewer edits, and every point
        // it kept on any diagonal is on a path from the start.
        let spent = self.steps >= self.budget;
        (-dmax..=dmax)
            .step_by(if spent { 1 } else { 2 })
            .filter(|&k| self.fwd[at(k)] >= 0)
            .map(|k| (self.fwd[at(k)], self.fwd[at(k)] - k))
            .max_by_key(|&(x, y)| x + y)
            .map_or((0, 0), |(x, y)| (x as usize, y as usize))
    }
}

/// The furthest point on diagonal `k` after `d` edits, given `v` after `d - 1` (`at` maps a
/// diagonal to its index): one line of `a` removed from the point on `k - 1`, or one line of
/// `b` added to the point on `k + 1`, whichever stays in the `n` by `m` grid and gets further,
/// then along the diagonal while `same` lines follow, for at most `most` lines. The point,
/// and the lines it went along the diagonal; `None` if neither edit stays in the grid.
fn furthest(
    v: &[isize],
    at: impl Fn(isize) -> usize,
    k: isize,
    d: isize,
    (n, m): (isize, isize),
    most: usize,
    same: impl Fn(isize, isize) -> bool,
) -> Option<(isize, isize, usize)> {
    let x0 = if d == 0 {
        0
    } else {
        let add = Some(v[at(k + 1)]).filter(|&x| k < d && x >= 0 && x - k <= m);
        let del = Some(v[at(k - 1)]).filter(|&x| k > -d && x >= 0 && x < n);
        add.max(del.map(|x| x + 1))?
    };
    let (mut x, mut y) = (x0, x0 - k);
    let stop = n.min(x0.saturating_add(most.min(n as usize) as isize));
    while x < stop && y < m && same(x, y) {
        (x, y) = (x + 1, y + 1);
    }
    Some((x, y, (x - x0) as usize))
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
    fn texts_past_the_line_limit_are_replaced_whole_and_still_apply() {
        let old: String = (0..MAX_LINES / 2 + 10)
            .map(|i| format!("{}\n", i % 7))
            .collect();
        let new: String = (0..MAX_LINES / 2).map(|i| format!("{}\n", i % 5)).collect();
        let diff = unified("f", Some(&old), &new);
        assert_eq!(apply(&old, &diff), new);
        assert_eq!(edits(&diff), MAX_LINES + 10);
        // A new file, and a file emptied.
        let diff = unified("f", None, &new);
        assert_eq!(apply("", &diff), new);
        assert_eq!(
            replaced("f", Some("a\nb\n"), ""),
            unified("f", Some("a\nb\n"), "")
        );
        assert_eq!(replaced("f", None, "a\n"), unified("f", None, "a\n"));
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

    /// `n` lines drawn by `next` from `alphabet` lines of source code.
    fn drawn(n: usize, alphabet: usize, next: &mut impl FnMut(u64) -> usize) -> String {
        (0..n)
            .map(|_| format!("    let v{0} = f(v{0});\n", next(alphabet as u64)))
            .collect()
    }

    #[test]
    fn a_pathological_edit_stops_at_the_budget_and_its_diff_applies() {
        // 200,000 lines from an alphabet of 50 on each side (8.6 MB in all), in different
        // orders: the shortest diff is far from either end, and a search without a budget
        // takes over 4 s (release build), longer with more lines.
        let mut next = lcg(32);
        let (old, new) = (drawn(200_000, 50, &mut next), drawn(200_000, 50, &mut next));
        let t = std::time::Instant::now();
        let (diff, steps) = unified_within("f", Some(&old), &new, BUDGET);
        let took = t.elapsed();
        assert_eq!(steps, BUDGET);
        assert_eq!(apply(&old, &diff), new);
        // Unoptimized, on a loaded machine, this takes a few seconds.
        assert!(took.as_secs() < 60, "{took:?}");
    }

    #[test]
    fn past_the_budget_what_is_left_is_removed_and_added() {
        let old = numbered(0, 8000);
        let new = [10, 4000, 7000].iter().fold(old.clone(), |t, i| {
            t.replace(&format!("line {i}\n"), &format!("line {i}!\n"))
        });
        // The budget runs out in the search for the first middle point, just past line 10.
        // What follows up to the next change is kept, as the texts go on alike; from there,
        // the search has no budget left: lines 4000 to 7000 are removed and added.
        let (diff, steps) = unified_within("f", Some(&old), &new, 100);
        assert_eq!(steps, 100);
        assert_eq!(apply(&old, &diff), new);
        assert_eq!(edits(&diff), 2 + 2 * 3001);
        // With no budget, the lines the texts start and end with alike are kept.
        let (diff, steps) = unified_within("f", Some(&old), &new, 0);
        assert_eq!(steps, 0);
        assert!(diff.starts_with("--- a/f\n+++ b/f\n@@ -8,6997 +8,6997 @@\n line 7\n"));
        assert_eq!(apply(&old, &diff), new);
        assert_eq!(edits(&diff), 2 * 6991);
        // With enough, the diff is minimal.
        for budget in [100_000, BUDGET] {
            let (diff, steps) = unified_within("f", Some(&old), &new, budget);
            assert!(steps < 100_000, "{steps}");
            assert_eq!(edits(&diff), 6);
        }
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

    /// Numbers below `below`, from a linear congruential generator seeded with `seed`.
    fn lcg(mut seed: u64) -> impl FnMut(u64) -> usize {
        move |below: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % below) as usize
        }
    }

    #[test]
    fn diffs_of_random_texts_are_minimal_and_apply() {
        let mut next = lcg(0x2545_f491);
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
