//! `insights replay --format html` on every capture: the page holds every tool call of the
//! log, nothing the agent wrote becomes markup, and, in a real browser (Debian's Chromium,
//! headless; skipped with a message when it is not installed), the page loads, shows its
//! summary, and fits 1280 and 390 pixels without horizontal overflow.

use crate::golden::captures;
use crate::util::{insights, root};
use std::path::{Path, PathBuf};
use std::process::Command;

fn html_of(args: &[&str]) -> String {
    let out = insights()
        .args(["replay", "--format", "html"])
        .args(args)
        .output()
        .expect("run insights");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Distinct call ids of the log's `tool_invocation` events.
fn calls_of(capture: &Path) -> usize {
    let out = insights()
        .args(["--no-timestamp"])
        .arg(capture)
        .output()
        .expect("convert");
    let mut ids = std::collections::BTreeSet::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(l) else {
            continue;
        };
        if v["event"] == "tool_invocation" {
            ids.insert(format!("{}/{}", v["sessionId"], v["callId"]));
        }
    }
    ids.len()
}

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Headless Chromium as the machine's probe starts it: no network, a fresh profile.
fn browser(exe: &Path, profile: &Path) -> Command {
    let mut c = Command::new(exe);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn every_tool_call_is_on_the_page_and_nothing_is_markup() {
    let mut problems = Vec::new();
    for cap in captures() {
        let page = html_of(&[cap.to_str().unwrap()]);
        let name = cap.strip_prefix(root()).unwrap().display().to_string();
        if !page.starts_with("<!DOCTYPE html>") || !page.trim_end().ends_with("</html>") {
            problems.push(format!("{name}: not a whole page"));
            continue;
        }
        if page.contains("<script") || page.contains("http://") || page.contains("https://") {
            // Agent text may hold URLs: escaped text is fine, a fetched resource is not.
            if page.contains("<script")
                || page.contains("src=\"http")
                || page.contains("href=\"http")
            {
                problems.push(format!("{name}: a script or a fetched resource"));
            }
        }
        let tools = page.matches("<div class=\"tool\">").count();
        let calls = calls_of(&cap);
        if tools < calls {
            problems.push(format!("{name}: {tools} tool cards for {calls} calls"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn hostile_text_stays_text() {
    let line = r#"{"type":"assistant","message":{"id":"m","model":"<b>m</b>","content":[{"type":"text","text":"<script>alert(1)</script><img src=x onerror=alert(2)>"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"echo '<iframe src=//evil>'"}}]},"session_id":"s\"><script>alert(3)</script>"}"#;
    let out = crate::util::run(
        &["replay", "--format", "html", "--from", "claude"],
        line.as_bytes(),
    );
    let page = String::from_utf8(out.stdout).unwrap();
    for bad in ["<script", "<img", "<iframe", "<b>m"] {
        assert!(!page.contains(bad), "{bad} got through:\n{page}");
    }
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
}

#[test]
fn pages_load_and_fit_in_a_real_browser() {
    let Some(exe) = chromium() else {
        eprintln!("skipped: no Chromium (apt-get install chromium; .ci/run does)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("insights-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let caps = captures();
    // Two browsers at a time: each capture's page loads and shows its summary.
    let problems = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for worker in 0..2 {
            let (caps, dir, exe, problems, next) = (&caps, &dir, &exe, &problems, &next);
            s.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(cap) = caps.get(i) else { break };
                let page = dir.join(format!("p{i}.html"));
                std::fs::write(&page, html_of(&[cap.to_str().unwrap()])).unwrap();
                let dom = browser(exe, &dir.join(format!("profile{worker}")))
                    .arg("--dump-dom")
                    .arg(format!("file://{}", page.display()))
                    .output()
                    .expect("run chromium");
                let dom = String::from_utf8_lossy(&dom.stdout);
                if !dom.contains("class=\"summary\"") {
                    problems
                        .lock()
                        .unwrap()
                        .push(format!("{}: no summary in the DOM", cap.display()));
                }
            });
        }
    });
    // A few transcripts at two widths: no horizontal overflow (measured by a script added to
    // a copy for the test: the page itself has none), and screenshots that are not blank.
    for (i, case) in [
        "testdata/claude-sdk/edit-file.jsonl",
        "testdata/codex-app-server/multi-patch.jsonl",
        "testdata/acp-claude/multi-edit.jsonl",
        "testdata/claude/nested-subagent.jsonl",
    ]
    .iter()
    .enumerate()
    {
        let cap = root().join(case);
        if !cap.exists() {
            continue;
        }
        let page = html_of(&[cap.to_str().unwrap()]);
        for width in [1280, 390] {
            let probe = page.replace(
                "</body>",
                "<script>document.title=document.documentElement.scrollWidth>innerWidth?'overflow '+document.documentElement.scrollWidth:'fits'</script></body>",
            );
            let f = dir.join(format!("w{i}-{width}.html"));
            std::fs::write(&f, probe).unwrap();
            let dom = browser(&exe, &dir.join("profile-w"))
                .arg(format!("--window-size={width},900"))
                .arg("--dump-dom")
                .arg(format!("file://{}", f.display()))
                .output()
                .unwrap();
            let dom = String::from_utf8_lossy(&dom.stdout);
            if !dom.contains("<title>fits</title>") {
                let t = dom
                    .split("<title>")
                    .nth(1)
                    .and_then(|t| t.split('<').next());
                problems
                    .lock()
                    .unwrap()
                    .push(format!("{case} at {width}px: {t:?}"));
            }
            let png = dir.join(format!("{}-{width}.png", i));
            let plain = dir.join(format!("s{i}.html"));
            std::fs::write(&plain, &page).unwrap();
            browser(&exe, &dir.join("profile-s"))
                .arg(format!("--window-size={width},1200"))
                .arg(format!("--screenshot={}", png.display()))
                .arg(format!("file://{}", plain.display()))
                .output()
                .unwrap();
            let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
            // A blank page compresses to a few kilobytes.
            if size < 12_000 {
                problems
                    .lock()
                    .unwrap()
                    .push(format!("{case} at {width}px: screenshot of {size} bytes"));
            }
        }
    }
    let problems = problems.into_inner().unwrap();
    if problems.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_page_names_the_lines_it_could_not_read() {
    // A log with an unreadable line: the page's summary names it (file, line, why), read
    // in a browser when there is one.
    let dir = std::env::temp_dir().join(format!("insights-html-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("run.jsonl");
    let good = std::fs::read_to_string(root().join("testdata/claude/text-only.jsonl")).unwrap();
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(1, "{\"type\": truncated");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let page = html_of(&[log.to_str().unwrap()]);
    let want = format!("{}:2:", log.display());
    assert!(page.contains(&want), "{page}");
    if let Some(exe) = chromium() {
        let f = dir.join("page.html");
        std::fs::write(&f, &page).unwrap();
        let dom = browser(&exe, &dir.join("profile"))
            .arg("--dump-dom")
            .arg(format!("file://{}", f.display()))
            .output()
            .expect("run chromium");
        let dom = String::from_utf8_lossy(&dom.stdout);
        let summary = dom.split("class=\"summary\"").nth(1).unwrap_or("");
        assert!(
            summary.contains("could not be read") && summary.contains(&want),
            "not in the rendered summary:\n{dom}"
        );
    } else {
        eprintln!("Chromium not installed: the page was checked as text only");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The summary's cost adds each turn's share, over sessions, and says when some turns have
/// none (here a Codex turn: its wire reports tokens, no cost) rather than passing the sum of
/// the others for the whole.
#[test]
fn the_summary_cost_adds_sessions_and_marks_turns_without_a_cost() {
    let ev = |s: &str, p: &str, n: u64, extra: &str| {
        format!(
            r#"{{"event":"turn_start","id":"{s}:0","seq":{},"provider":"{p}","sessionId":"{s}"}}
{{"event":"turn_complete","id":"{s}:1","seq":{},"provider":"{p}","sessionId":"{s}","usage":{{"inputTokens":10,"outputTokens":2}}{extra}}}
"#,
            n,
            n + 1
        )
    };
    let log = ev("a", "claude", 1, r#","costUsd":0.25"#)
        + &ev("b", "claude", 3, r#","costUsd":0.5"#)
        + &ev("c", "codex", 5, "");
    let page =
        String::from_utf8(crate::util::run(&["replay", "--format", "html"], log.as_bytes()).stdout)
            .unwrap();
    assert!(
        page.contains("$0.7500 and unknown (1 turn without a cost)"),
        "{page}"
    );
}
