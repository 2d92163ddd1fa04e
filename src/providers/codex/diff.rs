//! Diffs: what Codex sends for a file change (an update's hunks, an added or deleted file's
//! content) made into a git diff, and a turn's cumulative diff split per file.

use crate::event::ChangeKind;

/// A path as a diff names it, without the `a/`/`b/` prefix: `/home/x` → `home/x`.
fn diff_path(path: &str) -> &str {
    path.trim_start_matches('/')
}

/// The hunk that adds (`+`) or removes (`-`) a whole file's content; none for an empty file.
fn content_hunk(content: &str, sign: char) -> String {
    if content.is_empty() {
        return String::new();
    }
    let n = content.split_inclusive('\n').count();
    let range = if n == 1 {
        "1".to_owned()
    } else {
        format!("1,{n}")
    };
    let mut out = if sign == '+' {
        format!("@@ -0,0 +{range} @@\n")
    } else {
        format!("@@ -{range} +0,0 @@\n")
    };
    out.reserve(content.len() + n);
    for l in content.split_inclusive('\n') {
        out.push(sign);
        out.push_str(l);
        if !l.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
    out
}

/// A git diff of one file that `git apply` accepts, from what Codex sends: hunks for an
/// update (a move's with a trailing `Moved to: <path>` line, dropped), the raw content for
/// an add or a delete (made into one hunk). A body with headers of its own is kept.
pub(super) fn git_diff(
    path: &str,
    kind: ChangeKind,
    move_path: Option<&str>,
    body: &str,
) -> String {
    if body.starts_with("--- ") || body.starts_with("diff ") {
        return body.to_owned();
    }
    let a = diff_path(path);
    let mut out = String::with_capacity(body.len() + 2 * a.len() + 64);
    match (kind, move_path) {
        (ChangeKind::Add, _) => {
            let hunk = content_hunk(body, '+');
            out.push_str(&format!("diff --git a/{a} b/{a}\nnew file mode 100644\n"));
            if !hunk.is_empty() {
                out.push_str(&format!("--- /dev/null\n+++ b/{a}\n{hunk}"));
            }
        }
        (ChangeKind::Delete, _) => {
            let hunk = content_hunk(body, '-');
            out.push_str(&format!(
                "diff --git a/{a} b/{a}\ndeleted file mode 100644\n"
            ));
            if !hunk.is_empty() {
                out.push_str(&format!("--- a/{a}\n+++ /dev/null\n{hunk}"));
            }
        }
        (_, Some(to)) => {
            let b = diff_path(to);
            let mut hunks = body;
            if let Some(at) = hunks.rfind("Moved to: ") {
                if hunks[at + "Moved to: ".len()..].trim_end() == to {
                    hunks = hunks[..at].trim_end_matches('\n');
                }
            }
            out.push_str(&format!(
                "diff --git a/{a} b/{b}\nrename from {a}\nrename to {b}\n"
            ));
            if !hunks.trim().is_empty() {
                out.push_str(&format!("--- a/{a}\n+++ b/{b}\n{hunks}"));
                if !hunks.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        _ => {
            out.push_str(&format!(
                "diff --git a/{a} b/{a}\n--- a/{a}\n+++ b/{a}\n{body}"
            ));
            if !body.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// Splits a multi-file unified diff (`diff --git a/x b/x` sections) into (path, kind, section).
pub(super) fn split_diff(diff: &str) -> Vec<(String, ChangeKind, String, Option<String>)> {
    let mut out: Vec<(String, ChangeKind, String, Option<String>)> = Vec::new();
    for section in diff
        .split_inclusive('\n')
        .fold(Vec::<String>::new(), |mut acc, l| {
            if l.starts_with("diff --git ") || acc.is_empty() {
                acc.push(String::new());
            }
            if let Some(last) = acc.last_mut() {
                last.push_str(l);
            }
            acc
        })
    {
        let mut path = None;
        let mut moved = None;
        let mut kind = ChangeKind::Update;
        for l in section.lines() {
            if let Some(rest) = l.strip_prefix("diff --git ") {
                if let Some((a, b)) = rest.split_once(" b/") {
                    // A file whose two names differ moved: its path is the old one.
                    match a.strip_prefix("a/").filter(|a| *a != b) {
                        Some(a) => {
                            path = Some(a.to_owned());
                            moved = Some(b.to_owned());
                            kind = ChangeKind::Move;
                        }
                        None => path = Some(b.to_owned()),
                    }
                }
            } else if l.starts_with("new file mode") {
                kind = ChangeKind::Add;
            } else if l.starts_with("deleted file mode") {
                kind = ChangeKind::Delete;
            } else if l.starts_with("rename to ") {
                kind = ChangeKind::Move;
            } else if let Some(p) = l.strip_prefix("+++ b/") {
                path.get_or_insert_with(|| p.to_owned());
            } else if l.starts_with("@@") {
                break;
            }
        }
        if let Some(p) = path {
            out.push((p, kind, section, moved));
        } else if !section.trim().is_empty() {
            out.push((String::new(), kind, section, None));
        }
    }
    out
}

/// `rel` under directory `cwd`.
pub(super) fn absolute(cwd: &str, rel: &str) -> String {
    let mut out = String::with_capacity(cwd.len() + rel.len() + 1);
    out.push_str(cwd.trim_end_matches('/'));
    out.push('/');
    out.push_str(rel);
    out
}

/// A diff section whose header paths are relative to `cwd`, with the paths `a/…`/`b/…`
/// written from the root as [`git_diff`] writes them (`a/home/dev/x`). Hunks are kept.
pub(super) fn rebase_headers(section: &str, cwd: &str) -> String {
    let root = cwd.trim_matches('/');
    let prefix = if root.is_empty() {
        String::new()
    } else {
        format!("{root}/")
    };
    crate::diff::rebase(section, "", &prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_multi_file_diff() {
        let d = "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
        let parts = split_diff(d);
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].0.as_str(), parts[0].1), ("x", ChangeKind::Add));
        assert_eq!((parts[1].0.as_str(), parts[1].1), ("y", ChangeKind::Update));
        assert!(parts[1].2.starts_with("diff --git a/y"));
        let d = "diff --git a/src/old.py b/src/new.py\nindex 1..2\n--- a/src/old.py\n+++ b/src/new.py\n@@ -1 +1 @@\n-a\n+b\n";
        let parts = split_diff(d);
        assert_eq!(
            (parts[0].0.as_str(), parts[0].1),
            ("src/old.py", ChangeKind::Move)
        );
        assert_eq!(parts[0].3.as_deref(), Some("src/new.py"));
    }

    #[test]
    fn diffs_of_add_delete_move_and_update_apply_with_git() {
        let add = git_diff("/w/docs/new.md", ChangeKind::Add, None, "# New\nlast");
        assert!(add.contains("@@ -0,0 +1,2 @@\n+# New\n+last\n\\ No newline at end of file\n"));
        let del = git_diff("/w/old.txt", ChangeKind::Delete, None, "remove me\n");
        assert!(del.ends_with("+++ /dev/null\n@@ -1 +0,0 @@\n-remove me\n"));
        let mv = git_diff(
            "/w/src/a.py",
            ChangeKind::Update,
            Some("/w/src/b.py"),
            "@@ -1 +1 @@\n-print(\"old\")\n+print(\"new\")\n\n\nMoved to: /w/src/b.py",
        );
        assert!(mv.contains("+++ b/w/src/b.py\n"));
        assert!(!mv.contains("Moved to"));
        let upd = git_diff(
            "/w/c.txt",
            ChangeKind::Update,
            None,
            "@@ -1,2 +1,2 @@\n n\n-x\n+y\n",
        );
        let pure_move = git_diff("/w/d.txt", ChangeKind::Update, Some("/w/e.txt"), "");
        let empty_add = git_diff("/w/empty", ChangeKind::Add, None, "");
        let git = std::process::Command::new("git").arg("--version").output();
        if !git.is_ok_and(|o| o.status.success()) {
            eprintln!("git is not available: `git apply --check` of the diffs skipped");
            return;
        }
        let dir = std::env::temp_dir().join(format!("insights-codex-diff-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("w/src")).unwrap();
        std::fs::create_dir_all(dir.join("w/docs")).unwrap();
        std::fs::write(dir.join("w/old.txt"), "remove me\n").unwrap();
        std::fs::write(dir.join("w/src/a.py"), "print(\"old\")\n").unwrap();
        std::fs::write(dir.join("w/c.txt"), "n\nx\n").unwrap();
        std::fs::write(dir.join("w/d.txt"), "d\n").unwrap();
        for (name, patch) in [
            ("add", &add),
            ("delete", &del),
            ("move", &mv),
            ("update", &upd),
            ("pure move", &pure_move),
            ("empty add", &empty_add),
        ] {
            let file = dir.join("patch.diff");
            std::fs::write(&file, patch).unwrap();
            let out = std::process::Command::new("git")
                .args(["apply", "--check", "patch.diff"])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "git apply --check rejects the {name} diff:\n{patch}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
