//! `insights replay`: golden transcripts of every Claude capture (plain, with colours shown as
//! tags, a few as Markdown), hostile escape sequences, a live pipe, `--follow`, `--speed`, and
//! exit statuses. `BLESS=1 cargo test` rewrites `testdata/replay/`; read the transcripts by eye
//! before committing them.

use crate::golden::captures;
use crate::util::{assert_same, insights, root, run};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const WIDTH: &str = "80";

/// Captures that also get a Markdown golden file.
const MARKDOWN: &[&str] = &[
    "claude/thinking-tool",
    "claude/subagent-partial",
    "claude-sdk/edit-file",
    "claude-sdk/write-cancelled",
    "claude-sdk/compact",
];

fn replay(args: &[&str], stdin: &[u8]) -> Output {
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    run(&all, stdin)
}

/// Standard output of a run that must succeed quietly.
fn clean_run(what: &str, args: &[&str], stdin: &[u8]) -> String {
    let out = replay(args, stdin);
    assert!(
        out.status.success(),
        "{what}: exit {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{what}: stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 transcript")
}

/// SGR escapes shown as tags: `\x1b[32m` is `(green)`, `\x1b[0m` is `(/)`. Panics on any
/// other escape sequence: replay writes colours and nothing else.
pub fn tags(s: &str) -> String {
    let name = |p: &str| match p {
        "0" => "/",
        "1" => "bold",
        "2" => "dimmed",
        "3" => "italic",
        "4" => "underline",
        "31" => "red",
        "32" => "green",
        "33" => "yellow",
        "34" => "blue",
        "35" => "magenta",
        "36" => "cyan",
        "37" => "white",
        other => panic!("unexpected SGR parameter {other:?}"),
    };
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('\x1b') {
        out.push_str(&rest[..i]);
        let seq = &rest[i..];
        let end = seq.find('m').unwrap_or(seq.len());
        let params = seq.get(2..end).unwrap_or("");
        assert!(
            seq.starts_with("\x1b[")
                && end < seq.len()
                && params.bytes().all(|b| b.is_ascii_digit() || b == b';'),
            "an escape that is not a colour: {:?}",
            &seq[..seq.len().min(24)]
        );
        let names: Vec<&str> = params.split(';').map(name).collect();
        out.push_str(&format!("({})", names.join(" ")));
        rest = &seq[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Every capture of a Claude provider (`testdata/claude*/`).
fn claude_captures() -> Vec<PathBuf> {
    captures()
        .into_iter()
        .filter(|p| dir_of(p).starts_with("claude"))
        .collect()
}

fn dir_of(p: &Path) -> String {
    p.parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_string()
}

fn stem_of(p: &Path) -> String {
    p.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .trim_end_matches(".jsonl")
        .to_string()
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

/// `testdata/replay/<provider>/<case>.<ext>`
fn golden(capture: &Path, ext: &str) -> PathBuf {
    root()
        .join("testdata/replay")
        .join(dir_of(capture))
        .join(format!("{}.{ext}", stem_of(capture)))
}

/// Compares with a golden file, or writes it with `BLESS=1`.
fn check(golden: &Path, actual: &str) {
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().expect("dir")).expect("mkdir");
        std::fs::write(golden, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(golden)
        .unwrap_or_else(|_| panic!("{}: no golden file (BLESS=1 cargo test)", golden.display()));
    assert_same(&rel(golden), &expected, actual);
}

#[test]
fn transcripts_of_every_claude_capture() {
    let caps = claude_captures();
    assert!(caps.len() >= 30, "too few captures: {}", caps.len());
    for cap in caps {
        let r = rel(&cap);
        let plain = clean_run(&r, &["--color", "never", "--width", WIDTH, &r], b"");
        assert!(!plain.contains('\x1b'), "{r}: an escape with --color never");
        for (i, l) in plain.lines().enumerate() {
            let w = l.chars().count();
            assert!(w <= 80, "{r}: line {} is {w} columns wide: {l}", i + 1);
            assert_eq!(l, l.trim_end(), "{r}: line {} ends in spaces", i + 1);
        }
        check(&golden(&cap, "txt"), &plain);

        let colour = clean_run(&r, &["--color", "always", "--width", WIDTH, &r], b"");
        check(&golden(&cap, "color.txt"), &tags(&colour));

        // The normalized events give the same transcript as the raw capture.
        let events = r.replace(".jsonl", ".events.jsonl");
        let again = clean_run(
            &events,
            &["--color", "never", "--width", WIDTH, &events],
            b"",
        );
        assert_same(&format!("{events} replayed"), &plain, &again);
    }
}

#[test]
fn every_capture_of_every_provider_replays_cleanly() {
    // No golden files beyond Claude's: other providers' mappings are still moving. Their
    // transcripts must still be well formed.
    for cap in captures() {
        let r = rel(&cap);
        for args in [
            &["--color", "never", "--width", "60"][..],
            &["--color", "always", "--width", "60", "--full", "--thinking"],
            &["--format", "markdown"],
        ] {
            let mut all = args.to_vec();
            all.push(&r);
            let out = replay(&all, b"");
            assert_eq!(
                out.status.code(),
                Some(0),
                "{r} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8(out.stdout).expect("utf-8");
            let text = tags(&text);
            assert_inert(&format!("{r} {args:?}"), &text);
            assert!(!text.trim().is_empty(), "{r} {args:?}: an empty transcript");
        }
        let plain = clean_run(&r, &["--color", "never", "--width", "60", &r], b"");
        for l in plain.lines() {
            assert!(l.chars().count() <= 60, "{r}: wider than 60 columns: {l}");
        }
    }
}

#[test]
fn markdown_transcripts() {
    for case in MARKDOWN {
        let cap = root().join(format!("testdata/{case}.jsonl"));
        let r = rel(&cap);
        let md = clean_run(&r, &["--format", "markdown", &r], b"");
        assert!(!md.contains('\x1b'), "{r}: an escape in Markdown");
        // Fences open and close in pairs.
        let fences = md
            .lines()
            .filter(|l| l.trim_start_matches("> ").starts_with("```"))
            .count();
        assert_eq!(fences % 2, 0, "{r}: unbalanced code fences");
        check(&golden(&cap, "md"), &md);
    }
}

#[test]
fn every_final_text_is_shown_exactly_once() {
    // Streamed deltas and the final text carry the same words: only one may reach the page.
    for cap in claude_captures() {
        let r = rel(&cap);
        let plain = clean_run(&r, &["--color", "never", "--width", "200", &r], b"");
        let events = std::fs::read_to_string(cap.with_extension("events.jsonl")).expect("events");
        for l in events.lines() {
            let ev: Value = serde_json::from_str(l).expect("event");
            if ev["event"] != "text" || ev["kind"] != "text" || ev.get("parentCallId").is_some() {
                continue;
            }
            let text = ev["text"].as_str().expect("text");
            assert_eq!(plain.matches(text).count(), 1, "{r}: {text:?} in\n{plain}");
        }
    }
}

#[test]
fn a_stream_cut_short_is_shown_once_as_unfinished() {
    let input = [
        json!({"event":"session_init","sessionId":"s","model":"m","cwd":"/w"}),
        json!({"event":"stream_delta","sessionId":"s","kind":"messageStart","messageId":"m1"}),
        json!({"event":"stream_delta","sessionId":"s","kind":"text","textDelta":"Half a sen","blockIndex":0}),
        json!({"event":"stream_delta","sessionId":"s","kind":"text","textDelta":"tence","blockIndex":0}),
    ];
    let out = clean_run(
        "cut",
        &["--color", "never", "--width", WIDTH],
        &jsonl(&input),
    );
    assert_eq!(out.matches("Half a sentence").count(), 1, "{out}");
    assert!(
        out.contains("⋯ unfinished text (the stream stopped here)"),
        "{out}"
    );
}

fn jsonl(events: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in events {
        serde_json::to_writer(&mut out, e).expect("json");
        out.push(b'\n');
    }
    out
}

/// Text that tries to take over a terminal: clear the screen, set the title, write the
/// clipboard (OSC 52), hide a link (OSC 8), use 8-bit C1 controls, ring the bell, reorder
/// text with bidi overrides, switch to the alternate screen, overprint.
const HOSTILE: &str = "A\x1b[2J\x1b[H\x1b]0;pwned\x07B\x1b]52;c;cHduZWQ=\x07C\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\D\u{9b}31mE\u{9d}0;t\u{9c}F\x07G\u{202e}H\u{2066}I\u{200f}J\x1bP1;2q\x1b\\K\x1b[?1049hL\x08M\x00N\x7fO\x1b(0P\u{85}Q";

fn hostile_events() -> Vec<u8> {
    let h = HOSTILE;
    let mut events = vec![
        json!({"event":"session_init","sessionId":h,"model":h,"cwd":h,"permissionMode":h,"version":h,"provider":h}),
        json!({"event":"user_input","sessionId":h,"text":h}),
        json!({"event":"text","kind":"thinking","text":h}),
        json!({"event":"text","kind":"text","text":h}),
        json!({"event":"tool_invocation","callId":"c1","kind":h,"toolName":h,"title":h,"input":{"command":h}}),
        json!({"event":"permission_request","requestId":"r","toolName":h,"toolKind":"edit","toolInput":{"file_path":h},"toolUseId":"c1","reason":h,"blockedPath":h,"suggestions":[{"type":"x","description":h,"detail":{}}]}),
        json!({"event":"permission_response","requestId":"r","decision":h,"allowed":true,"message":h}),
        json!({"event":"tool_completion","callId":"c1","status":"completed","output":{"stdout":h,"stderr":h}}),
        json!({"event":"tool_invocation","callId":"c2","kind":"edit","toolName":"Edit","input":{"file_path":h,"pattern":h}}),
        json!({"event":"tool_completion","callId":"c2","status":"failed","output":h}),
        json!({"event":"file_change","path":h,"changeKind":h,"movePath":h,"diff":format!("--- a\n+++ b\n@@ -1 +1 @@\n-{h}\n+{h}\n"),"callId":"c2"}),
        json!({"event":"plan_update","entries":[{"content":h,"status":h}],"explanation":h}),
        json!({"event":"tool_invocation","callId":"a","kind":"think","toolName":"Agent","input":{"description":h,"subagent_type":h}}),
        json!({"event":"subagent_spawn","callId":"a"}),
        json!({"event":"user_input","text":h,"parentCallId":"a"}),
        json!({"event":"tool_completion","callId":"a","status":"completed","output":[{"type":"text","text":h}]}),
        json!({"event":"subagent_complete","callId":"a","summary":h}),
        json!({"event":"session_status","status":"error","message":h}),
        json!({"event":"session_mode","currentModeId":h,"availableModes":[]}),
        json!({"event":"error","message":h,"severity":"error","code":h,"requestId":h}),
        json!({"event":"hook","hookId":"k","phase":"response","hookName":h,"outcome":h,"exitCode":1,"output":h}),
        json!({"event":"notice","subtype":h,"message":h}),
        json!({"event":"task_update","taskId":h,"phase":"started","description":h}),
        json!({"event":"rate_limit_update","status":h,"rateLimitType":h}),
        json!({"event":"raw","reason":h,"raw":{}}),
        json!({"event":"context_compaction","trigger":h,"preTokens":1,"postTokens":0}),
        json!({"event":"stream_delta","kind":"messageStart","messageId":"m9"}),
        json!({"event":"stream_delta","kind":"thinking","textDelta":h,"blockIndex":0}),
        json!({"event":"stream_delta","kind":"blockStart","blockIndex":1,"callId":"c9","extensions":{"tool_name":h}}),
        json!({"event":"stream_delta","kind":"toolInput","jsonDelta":h,"blockIndex":1}),
        json!({"event":"turn_complete","isError":true,"subtype":h,"result":h,"errors":[h],"stopReason":h,
               "usage":{"inputTokens":1,"outputTokens":1},"modelUsage":{h:{"inputTokens":1,"outputTokens":1,"costUsd":0.5}},
               "permissionDenials":[{"tool_name":h,"tool_use_id":h}]}),
    ];
    // Raw Claude lines, converted on the fly, carry it too.
    events.push(json!({"type":"assistant","session_id":"s","message":{"id":"m","model":h,"role":"assistant","content":[{"type":"text","text":h},{"type":"tool_use","id":"t1","name":h,"input":{"command":h}}]}}));
    events.push(json!({"type":"user","session_id":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":h,"is_error":true}]}}));
    events.push(
        json!({"type":"tool_progress","tool_use_id":"t2","tool_name":h,"elapsed_time_seconds":1}),
    );
    jsonl(&events)
}

/// Fails on any byte or character that could steer a terminal.
fn assert_inert(what: &str, out: &str) {
    for (i, c) in out.chars().enumerate() {
        let bad = (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}');
        assert!(!bad, "{what}: {c:?} at character {i} of\n{out}");
    }
}

#[test]
fn hostile_text_cannot_reach_the_terminal() {
    let input = hostile_events();
    for args in [
        &["--color", "never"][..],
        &["--color", "never", "--full", "--thinking"],
        &["--format", "markdown"],
        &["--format", "markdown", "--full", "--thinking"],
    ] {
        let out = replay(args, &input);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert_inert(&format!("{args:?}"), &text);
        assert!(
            text.contains("<U+202E>"),
            "{args:?}: the bidi override is not shown"
        );
        assert!(!text.contains("pwned"), "{args:?}: an OSC payload is shown");
        assert!(
            !text.contains("cHduZWQ"),
            "{args:?}: an OSC 52 payload is shown"
        );
        assert!(
            !text.contains("evil.example"),
            "{args:?}: an OSC 8 target is shown"
        );
    }
    for args in [
        &["--color", "always"][..],
        &["--color", "always", "--full", "--thinking"],
    ] {
        let out = replay(args, &input);
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8(out.stdout).expect("utf-8");
        // Only colours: tags() panics on anything else; what remains must be inert.
        assert_inert(&format!("{args:?}"), &tags(&text));
    }
}

/// Runs `insights replay ARGS` with stdin and stdout on pipes; a thread forwards output.
struct Live {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    chunks: mpsc::Receiver<Vec<u8>>,
    seen: String,
}

impl Live {
    fn start(args: &[&str]) -> Live {
        let mut child = insights()
            .arg("replay")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn insights");
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take().expect("stdout");
        let (tx, chunks) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Live {
            child,
            stdin,
            chunks,
            seen: String::new(),
        }
    }

    fn send(&mut self, lines: &[&str]) {
        let w = self.stdin.as_mut().expect("stdin open");
        for l in lines {
            w.write_all(l.as_bytes()).expect("write");
            w.write_all(b"\n").expect("write");
        }
        w.flush().expect("flush");
    }

    /// Waits (10 s at most) until the output so far contains `needle`.
    fn expect(&mut self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.seen.contains(needle) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(c) => self.seen.push_str(&String::from_utf8_lossy(&c)),
                Err(_) => panic!(
                    "no {needle:?} within 10 s; the output so far:\n{}",
                    self.seen
                ),
            }
        }
    }

    /// Output that arrives within `ms` milliseconds.
    fn settle(&mut self, ms: u64) {
        while let Ok(c) = self.chunks.recv_timeout(Duration::from_millis(ms)) {
            self.seen.push_str(&String::from_utf8_lossy(&c));
        }
    }

    fn finish(mut self) -> (i32, String, String) {
        drop(self.stdin.take());
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            e.read_to_string(&mut err).expect("stderr");
        }
        let status = self.child.wait().expect("wait");
        self.settle(200);
        (status.code().unwrap_or(-1), self.seen, err)
    }
}

fn capture_lines(rel: &str) -> Vec<String> {
    std::fs::read_to_string(root().join(rel))
        .expect("capture")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_live_pipe_shows_each_step_as_it_arrives() {
    // claude -p … --include-partial-messages | insights replay
    let lines = capture_lines("testdata/claude/thinking-tool.jsonl");
    let l: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut live = Live::start(&["--color", "never", "--width", WIDTH]);
    live.send(&l[..1]);
    live.expect("━━ claude · claude-opus-4-8[1m]");
    live.send(&l[1..24]); // the thinking, and the first text's deltas and final text
    live.expect("I'll check with uname.");
    assert!(
        !live.seen.contains("$ Bash"),
        "the tool call came early:\n{}",
        live.seen
    );
    live.send(&l[24..31]);
    live.expect("$ Bash  uname -s");
    assert!(
        !live.seen.contains("✓ ok"),
        "the result came early:\n{}",
        live.seen
    );
    live.send(&l[31..35]);
    live.expect("✓ ok");
    live.send(&l[35..41]);
    live.expect("The kernel is Linux.");
    live.settle(300);
    assert!(
        !live.seen.contains("turn 1"),
        "the footer came early:\n{}",
        live.seen
    );
    live.send(&l[41..]);
    live.expect("── ✓ turn 1");
    let (code, seen, err) = live.finish();
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    assert_eq!(seen.matches("I'll check with uname.").count(), 1, "{seen}");
    let golden = std::fs::read_to_string(root().join("testdata/replay/claude/thinking-tool.txt"))
        .expect("testdata/replay/claude/thinking-tool.txt");
    if std::env::var_os("BLESS").is_none() {
        assert_same("the live transcript", &golden, &seen);
    }
}

#[test]
fn follow_reads_a_growing_file() {
    let lines = capture_lines("testdata/claude/text-only.jsonl");
    let path = std::env::temp_dir().join(format!("insights-follow-{}.jsonl", std::process::id()));
    std::fs::write(&path, format!("{}\n", lines[0])).expect("write");
    let p = path.to_string_lossy().into_owned();
    let mut live = Live::start(&["--color", "never", "--follow", &p]);
    live.expect("━━ claude");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    writeln!(f, "{}", lines[1]).expect("append");
    live.expect("Hello! I am a scripted model.");
    writeln!(f, "{}", lines[2]).expect("append");
    live.expect("── ✓ turn 1");
    // Still following: it has not ended by itself.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        live.child.try_wait().expect("try_wait").is_none(),
        "--follow stopped at the end of the file"
    );
    live.child.kill().expect("kill");
    let _ = live.child.wait();
    let _ = std::fs::remove_file(&path);
}

#[test]
fn speed_replays_the_recorded_pauses() {
    let ev = |t: &str, text: &str| json!({"event":"text","kind":"text","timestamp":t,"text":text});
    let input = jsonl(&[
        ev("2026-01-01T00:00:00.000Z", "one"),
        ev("2026-01-01T00:00:01.000Z", "two"),
    ]);
    let t = Instant::now();
    let out = clean_run("speed", &["--color", "never", "--speed", "2"], &input);
    let took = t.elapsed();
    assert!(out.contains("one") && out.contains("two"), "{out}");
    assert!(
        took >= Duration::from_millis(450),
        "--speed 2 waited only {took:?}"
    );

    let input = jsonl(&[
        ev("2026-01-01T00:00:00.000Z", "one"),
        ev("2026-01-01T01:00:00.000Z", "an hour later"),
    ]);
    let t = Instant::now();
    clean_run("max-gap", &["--speed", "1", "--max-gap", "0.2"], &input);
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(180),
        "--max-gap 0.2 waited only {took:?}"
    );
    assert!(
        took < Duration::from_secs(5),
        "--max-gap 0.2 waited {took:?}"
    );

    // Without --speed, instant.
    let t = Instant::now();
    clean_run("instant", &[], &input);
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn exit_statuses_follow_convert() {
    let text = capture_lines("testdata/claude/text-only.jsonl");
    let input = format!("{}\nnot json\n{}\n{}\n", text[0], text[1], text[2]);
    let out = replay(&["--color", "never"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1), "a bad line");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("<stdin>:2:1: error: not JSON"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Hello! I am a scripted model."),
        "the rest was not shown:\n{stdout}"
    );
    assert!(stdout.contains("── ✓ turn 1"), "{stdout}");

    let out = replay(&["no-such-file.jsonl"], b"");
    assert_eq!(out.status.code(), Some(2), "a missing file");
    for bad in [
        &["--speed", "0"][..],
        &["--width", "5"],
        &["--format", "pdf"],
        &["--max-gap", "-1"],
    ] {
        let out = replay(bad, b"");
        assert_eq!(out.status.code(), Some(2), "{bad:?} is a usage error");
    }
    // Nothing to show is said, with the status of `validate`'s nothing to check.
    for empty in [&b""[..], b"\n\n"] {
        let out = replay(&[], empty);
        assert_eq!(out.status.code(), Some(2), "empty input");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("error: no events"), "{stderr}");
    }
}

#[test]
fn a_reader_that_goes_away_ends_the_replay_quietly() {
    // `insights replay big.jsonl | head -1`
    let one = std::fs::read(root().join("testdata/claude/subagent-partial.events.jsonl"))
        .expect("events");
    let input: Vec<u8> = std::iter::repeat_n(one, 300).flatten().collect();
    let mut child = insights()
        .args(["replay", "--color", "never"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn insights");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input); // a broken pipe once insights has gone
    });
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).expect("read the start");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    assert_eq!(out.status.code(), Some(0), "{:?}", out.status);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn colour_auto_on_a_pipe_writes_no_escapes() {
    let cap = "testdata/claude/edit-file.jsonl";
    let out = clean_run(cap, &[cap], b"");
    assert!(!out.contains('\x1b'));
    let forced = insights()
        .args(["replay", "--color", "always", cap])
        .env("NO_COLOR", "1")
        .output()
        .expect("run");
    assert!(
        String::from_utf8_lossy(&forced.stdout).contains('\x1b'),
        "--color always wins"
    );
}

#[test]
fn width_comes_from_the_flag_or_columns() {
    let cap = "testdata/claude/failing-tool.jsonl";
    let widest = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let narrow = clean_run(cap, &["--color", "never", "--width", "40", cap], b"");
    assert!(widest(&narrow) <= 40, "{narrow}");
    let out = insights()
        .args(["replay", "--color", "never", cap])
        .env("COLUMNS", "50")
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(widest(&text) <= 50 && widest(&text) > 40, "{text}");
}

#[test]
fn replay_flags_are_documented() {
    let help = String::from_utf8(replay(&["--help"], b"").stdout).expect("help");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let man = std::fs::read_to_string(root().join("man/insights.1"))
        .expect("man page")
        .replace("\\fB", "")
        .replace("\\fR", "")
        .replace("\\fI", "")
        .replace("\\fP", "")
        .replace('\\', "");
    let mut flags = Vec::new();
    for line in help.lines() {
        let t = line.trim_start();
        if let Some(rest) = t
            .strip_prefix("--")
            .or_else(|| t.get(4..).and_then(|r| r.strip_prefix("--")))
        {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            flags.push(format!("--{name}"));
        }
    }
    for f in [
        "--format",
        "--width",
        "--thinking",
        "--full",
        "--speed",
        "--max-gap",
        "--follow",
    ] {
        assert!(
            flags.iter().any(|x| x == f),
            "replay --help lacks {f}: {flags:?}"
        );
    }
    for f in &flags {
        assert!(readme.contains(f.as_str()), "README.md lacks {f}");
        assert!(man.contains(f.as_str()), "man/insights.1 lacks {f}");
    }
    assert!(
        readme.contains("insights replay"),
        "README.md has no replay section"
    );
}

/// On a terminal, with `COLUMNS` unset, lines fill the terminal's own width and do not pass it
/// (util-linux `script` gives the run a terminal; the test is skipped without it).
#[test]
fn the_transcript_fits_the_terminal_s_own_width() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` to run replay on a terminal");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_insights");
    let cap = crate::util::root().join("testdata/claude/thinking-tool.jsonl");
    for cols in [60, 140] {
        let cmd = format!(
            "stty cols {cols} rows 40; {bin} replay --color never {}",
            cap.display()
        );
        let out = std::process::Command::new("script")
            .args(["-qc", &cmd, "/dev/null"])
            .env_remove("COLUMNS")
            .output()
            .expect("run script");
        let text = String::from_utf8_lossy(&out.stdout);
        let widest = text
            .lines()
            // What the terminal shows: a live ticker is overwritten after a carriage return.
            .map(|l| {
                let l = l.trim_end_matches('\r');
                let shown = l.rsplit('\r').next().unwrap_or(l);
                shown.trim_start_matches("\x1b[K").chars().count()
            })
            .max()
            .unwrap_or(0);
        assert_eq!(
            widest, cols,
            "widest line {widest} on {cols} columns:\n{text:?}"
        );
    }
}

/// `replay --redact` masks secrets before they are shown, in every format.
#[test]
fn redact_masks_secrets_in_transcripts() {
    let key = format!("sk-ant-api03-{}-AAAAAAAA", "A".repeat(93));
    let line = format!(
        r#"{{"type":"assistant","message":{{"id":"m","model":"c","content":[{{"type":"text","text":"the key is {key}"}}]}},"session_id":"s"}}"#
    );
    for format in ["terminal", "markdown", "html"] {
        let out = crate::util::run(
            &["replay", "--redact", "--format", format, "--from", "claude"],
            line.as_bytes(),
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains(&key), "{format}: {text}");
        assert!(
            text.contains("[REDACTED:anthropic-key]"),
            "{format}: {text}"
        );
    }
}

/// The ```` ```diff ```` blocks of a Markdown transcript, in order.
fn diff_blocks(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for l in md.lines() {
        match &mut cur {
            None if l.trim_start_matches('`') == "diff" && l.starts_with("```") => {
                cur = Some(String::new())
            }
            Some(d) if !l.is_empty() && l.chars().all(|c| c == '`') => {
                out.push(std::mem::take(d));
                cur = None;
            }
            Some(d) => {
                d.push_str(l);
                d.push('\n');
            }
            None => {}
        }
    }
    out
}

#[test]
fn the_diffs_of_a_transcript_apply_with_git_in_the_session_s_directory() {
    // Codex's patch of four files (update, add, delete, move) and a declined change, as
    // recorded: each diff the transcript shows applies with `git apply` to the files as they
    // were, in the session's directory (its header paths are relative to it).
    if !std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipped: git is not available");
        return;
    }
    for (case, want) in [
        ("testdata/codex-app-server/multi-patch.jsonl", 4),
        ("testdata/codex-app-server/patch-declined.jsonl", 1),
    ] {
        let md = clean_run(case, &["--format", "markdown", "--full", case], b"");
        let diffs = diff_blocks(&md);
        assert_eq!(diffs.len(), want, "{case}:\n{md}");
        let dir =
            std::env::temp_dir().join(format!("insights-replay-git-{}-{want}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("config.txt"), "name = demo\ndebug = false\n").unwrap();
        std::fs::write(dir.join("obsolete.txt"), "remove me\n").unwrap();
        std::fs::write(dir.join("src/old_name.py"), "print(\"old\")\n").unwrap();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(&dir)
                .output()
                .expect("git")
        };
        git(&["init", "-q", "."]);
        for d in &diffs {
            assert!(!d.contains("a/home/"), "{case}: a path from the root:\n{d}");
            let f = dir.join("change.diff");
            std::fs::write(&f, d).unwrap();
            let out = git(&["apply", "--check", f.to_str().unwrap()]);
            assert!(
                out.status.success(),
                "{case}: git apply --check refused\n{d}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn synthetic_inputs_are_never_prompts() {
    // The converters mark what the agent or the harness wrote on the user's behalf
    // (`<environment_context>`, interrupt markers, compaction summaries) `isSynthetic`.
    let events = jsonl(&[
        json!({"event":"session_init","sessionId":"s","provider":"codex","cwd":"/w"}),
        json!({"event":"user_input","sessionId":"s","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>","isSynthetic":true}),
        json!({"event":"user_input","sessionId":"s","text":"Real prompt"}),
    ]);
    for format in ["terminal", "markdown", "html"] {
        let out = clean_run(format, &["--format", format, "--color", "never"], &events);
        let synthetic = out
            .lines()
            .find(|l| l.contains("environment"))
            .unwrap_or_else(|| panic!("{format}: not shown at all:\n{out}"));
        assert!(
            !synthetic.contains('❯'),
            "{format}: drawn as a prompt: {synthetic}"
        );
        assert!(out.contains('❯'), "{format}: the real prompt:\n{out}");
    }
}

#[test]
fn unreadable_lines_are_named_in_markdown_and_html() {
    let text = capture_lines("testdata/claude/text-only.jsonl");
    let input = format!("{}\nnot json\n{}\n{}\n", text[0], text[1], text[2]);
    for format in ["markdown", "html"] {
        let out = replay(&["--format", format], input.as_bytes());
        assert_eq!(out.status.code(), Some(1), "{format}");
        let page = String::from_utf8_lossy(&out.stdout);
        assert!(
            page.contains("1 input line could not be read")
                && page.contains("&lt;stdin&gt;:2:1: not JSON")
                || page.contains("`<stdin>:2:1: not JSON"),
            "{format}:\n{page}"
        );
    }
}

/// One story everywhere: each turn's footer shows the tokens `reduce` counts for that turn
/// (its subagents' too; summed from its steps where the agent reports no total, as in its own
/// session files), on every capture and every recording's session files. The footers are
/// those of the turns a `turn_complete` ended; `reduce`'s turns ended by one are compared.
#[test]
fn footers_show_the_tokens_reduce_counts() {
    let mut inputs: Vec<String> = captures().iter().map(|p| rel(p)).collect();
    let files = root().join("testdata/session-files");
    for agent in std::fs::read_dir(&files).unwrap().flatten() {
        for rec in std::fs::read_dir(agent.path()).unwrap().flatten() {
            if rec.path().is_dir() {
                inputs.push(rel(&rec.path()));
            }
        }
    }
    assert!(inputs.len() > 100, "{} inputs", inputs.len());
    crate::util::check_each(&inputs, |p| {
        let out = replay(&["--format", "markdown", p], b"");
        let md = String::from_utf8_lossy(&out.stdout);
        let mut shown = [0u64; 4];
        let mut footers = 0;
        for l in md.lines() {
            if ["**✓ Turn", "**✗ Turn", "**■ Turn"]
                .iter()
                .any(|t| l.starts_with(t))
            {
                footers += 1;
            }
            // (A Markdown line break ends the line.)
            let Some(t) = l.trim_end_matches('\\').strip_prefix("tokens ") else {
                continue;
            };
            for part in t.split(" · ") {
                let (n, what) = part.split_once(' ').unwrap_or((part, ""));
                let n: u64 = n.replace(',', "").parse().unwrap_or(0);
                let i = match what {
                    "in" => 0,
                    "out" => 1,
                    "cache read" => 2,
                    "cache write" => 3,
                    _ => continue,
                };
                shown[i] += n;
            }
        }
        let state: Value = serde_json::from_slice(&run(&["reduce", p], b"").stdout)
            .map_err(|e| format!("{p}: reduce: {e}"))?;
        let mut counted = [0u64; 4];
        let mut turns = 0;
        for s in state["tree"]["sessions"].as_array().into_iter().flatten() {
            for t in s["turns"].as_array().into_iter().flatten() {
                if t["endSeq"].is_null() || t["status"] == "incomplete" || t["status"] == "running"
                {
                    continue;
                }
                turns += 1;
                let k = &t["tokens"];
                for (i, name) in [
                    "inputTokens",
                    "outputTokens",
                    "cacheReadTokens",
                    "cacheCreationTokens",
                ]
                .iter()
                .enumerate()
                {
                    counted[i] += k[name].as_u64().unwrap_or(0);
                }
            }
        }
        if (footers, shown) != (turns, counted) {
            return Err(format!(
                "{p}: replay shows {footers} turns with tokens {shown:?}, reduce ended {turns} with {counted:?}"
            ));
        }
        Ok(())
    });
}

/// One story everywhere: `sessions` (what `usage` adds up, from the agents' own files, as
/// ccusage does) and `reduce` of the same files count the same turns, tokens and cost per
/// session. A turn is every turn started: one cut off at the file's end, and one the agent's
/// goal started, count in both.
#[test]
fn sessions_and_reduce_count_the_same_turns_tokens_and_cost() {
    let files = root().join("testdata/session-files");
    let mut dirs = Vec::new();
    for agent in std::fs::read_dir(&files).unwrap().flatten() {
        for rec in std::fs::read_dir(agent.path()).unwrap().flatten() {
            if rec.path().is_dir() {
                dirs.push(rel(&rec.path()));
            }
        }
    }
    const FIGURES: [&str; 4] = [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheCreationTokens",
    ];
    crate::util::check_each(&dirs, |d| {
        let listed: Value =
            serde_json::from_slice(&run(&["sessions", "--json", "--allow-empty", d], b"").stdout)
                .map_err(|e| format!("{d}: sessions: {e}"))?;
        let state: Value = serde_json::from_slice(&run(&["reduce", d], b"").stdout)
            .map_err(|e| format!("{d}: reduce: {e}"))?;
        let reduced = state["totals"]["sessions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let tree = state["tree"]["sessions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for s in listed["sessions"].as_array().into_iter().flatten() {
            let id = &s["sessionId"];
            let r = reduced.iter().find(|r| &r["sessionId"] == id);
            let of =
                |v: Option<&Value>| FIGURES.map(|f| v.and_then(|v| v[f].as_u64()).unwrap_or(0));
            let (a, b) = (of(Some(s)), of(r));
            if a != b {
                return Err(format!("{d}: session {id}: sessions {a:?}, reduce {b:?}"));
            }
            let started = tree
                .iter()
                .find(|t| &t["sessionId"] == id)
                .and_then(|t| t["turns"].as_array())
                .map_or(0, Vec::len) as u64;
            if s["turns"].as_u64() != Some(started) {
                return Err(format!(
                    "{d}: session {id}: sessions {} turns, reduce {started}",
                    s["turns"]
                ));
            }
            // The same prices, request by request; a session without tokens costs nothing,
            // which `sessions` writes as 0 and `reduce` leaves out.
            let cost = |v: Option<&Value>| v.and_then(|v| v["costUsd"].as_f64());
            let (x, y) = (cost(Some(s)), cost(r));
            let same = match (x, y) {
                (Some(x), Some(y)) => (x - y).abs() < 1e-6,
                (Some(z), None) | (None, Some(z)) => z == 0.0 && a == [0; 4],
                (None, None) => true,
            };
            if !same {
                return Err(format!(
                    "{d}: session {id}: cost: sessions {x:?}, reduce {y:?}"
                ));
            }
        }
        Ok(())
    });
}
