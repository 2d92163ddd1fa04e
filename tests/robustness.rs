//! Reliability and security, end to end (README "Robustness"): the output side (a full disk, a
//! killed run), hostile input that does not fit in a file of `testdata/malformed/` (a 100 MB
//! line, a closed standard input), regressions found by fuzzing (`fuzz/`), `--redact`, and
//! properties of conversion checked on every capture of `testdata/` and on random mixes of
//! them, with a small deterministic PRNG (no dependency).

use crate::cli::{code, event, events, jsonl, lines_of, stderr, TEXT_ONLY};
use crate::util::Rng;
use crate::util::{captures_of, files_ending, insights, root, run};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A scratch directory of this test's own, emptied first.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("insights-robust-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Every provider capture under `testdata/` (not expectations, not the hostile corpus).
fn captures() -> Vec<PathBuf> {
    let skip = [
        "malformed",
        "invalid",
        "validate",
        "replay",
        "reduce",
        "session-files",
    ];
    let all: Vec<PathBuf> = files_ending(&root().join("testdata"), ".jsonl")
        .into_iter()
        .filter(|p| {
            let rel = p.strip_prefix(root().join("testdata")).unwrap();
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            !p.to_string_lossy().ends_with(".events.jsonl") && !skip.contains(&top.as_ref())
        })
        .collect();
    assert!(all.len() >= 50, "captures: {}", all.len());
    all
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

// ---------------------------------------------------------------------------------------------
// Output side

#[test]
fn a_full_disk_is_reported_with_status_2_by_every_command() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    for args in [
        &[TEXT_ONLY][..],
        &["--redact", TEXT_ONLY],
        &["--line-buffered", TEXT_ONLY],
        &["schema"],
        &["completions", "bash"],
        &["validate", TEXT_ONLY],
        &["reduce", TEXT_ONLY],
        &["replay", TEXT_ONLY],
        &["--help"],
        &["--version"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = insights()
            .args(args)
            .stdin(Stdio::null())
            .stdout(full)
            .output()
            .expect("run insights");
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            "insights: cannot write to standard output: no space left on device\n",
            "{args:?}"
        );
    }
}

/// Sends `signo` to a running child.
#[cfg(unix)]
fn signal(child: &std::process::Child, signo: libc::c_int) {
    // SAFETY: kill(2) on the pid of a child that has not been waited for.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, signo) };
    assert_eq!(r, 0, "kill: {}", std::io::Error::last_os_error());
}

/// `insights` with the signals it handles (SIGINT, SIGTERM, SIGHUP) at their default action,
/// as an interactive shell starts it. A child inherits an ignored signal: under `nohup`
/// SIGHUP is ignored, in a background job of a non-interactive shell SIGINT is, and insights
/// keeps an ignored signal ignored (src/signals.rs). The tests that send a signal must not
/// depend on how the test run itself was started.
#[cfg(unix)]
fn insights_with_default_signals() -> Command {
    insights_with_signals(libc::SIG_DFL)
}

/// `insights` with SIGINT, SIGTERM and SIGHUP set to `action` (`SIG_DFL` or `SIG_IGN`) in the
/// child before it runs.
#[cfg(unix)]
fn insights_with_signals(action: libc::sighandler_t) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = insights();
    // SAFETY: signal(2) is async-signal-safe, so it may run between fork and exec.
    unsafe {
        c.pre_exec(move || {
            for signo in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                if libc::signal(signo, action) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    c
}

/// Starts `c` with `args`, its standard streams piped.
fn spawn_piped(mut c: Command, args: &[&str]) -> std::process::Child {
    c.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn insights")
}

/// Waits at most 20 s for a child to end, and returns its status.
fn wait_for(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("{what}: insights did not end after the signal");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Interrupts a run with `signo` while it writes lines longer than a page into a file, `trials`
/// times at growing output sizes, and checks that the output ends at a line end, that every
/// line is an event, and the exit status `128 + signo`.
#[cfg(unix)]
fn interrupted_runs_leave_only_whole_lines(signo: libc::c_int, trials: u64) {
    // Output goes out in 64 KiB blocks of whole lines (src/output.rs). With the default action
    // of the signal, Linux stops a write to a file between pages and the file keeps half a
    // line (about one kill in ten did, SIGKILL still can); handled (src/signals.rs), the write
    // completes and the run ends after the line it is on. Lines of 6 to 10 KB: longer than a
    // page, and longer than the 1 KiB line buffer of Rust's standard output.
    let dir = scratch(&format!("signal-{signo}"));
    let path = dir.join("out.jsonl");
    let mut input = Vec::new();
    for i in 0..40 {
        let text = "y".repeat(6000 + 97 * i);
        input.extend_from_slice(
            format!("{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"session_id\":\"s\"}}\n")
                .as_bytes(),
        );
    }
    let input = std::sync::Arc::new(input);
    for trial in 0..trials {
        let mut child = insights_with_default_signals()
            .args(["--no-timestamp", "--block-buffered"])
            .stdin(Stdio::piped())
            .stdout(std::fs::File::create(&path).unwrap())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn insights");
        let mut stdin = child.stdin.take().unwrap();
        let data = std::sync::Arc::clone(&input);
        let writer = std::thread::spawn(move || {
            // Until the child is gone (the pipe breaks), or long enough.
            for _ in 0..2_000 {
                if stdin.write_all(&data).is_err() {
                    break;
                }
            }
        });
        let want = 200_000 + 37_000 * trial;
        let start = Instant::now();
        while std::fs::metadata(&path).map_or(0, |m| m.len()) < want {
            assert!(start.elapsed() < Duration::from_secs(60), "no output");
            std::thread::sleep(Duration::from_micros(300));
        }
        signal(&child, signo);
        let status = wait_for(&mut child, &format!("signal {signo}, trial {trial}"));
        writer.join().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(
            status.code(),
            Some(128 + signo),
            "signal {signo}, trial {trial}: {status:?}, {err}"
        );
        assert_eq!(err, "", "signal {signo}, trial {trial}");
        let out = std::fs::read(&path).unwrap();
        assert!(out.len() as u64 >= want);
        assert_eq!(
            out.last(),
            Some(&b'\n'),
            "signal {signo}, trial {trial}: the output ends inside a line"
        );
        for (i, l) in std::str::from_utf8(&out).unwrap().lines().enumerate() {
            let ev = event(l);
            assert_eq!(ev["seq"], i as u64 + 1, "signal {signo}, trial {trial}");
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_terminated_run_leaves_only_whole_lines() {
    interrupted_runs_leave_only_whole_lines(libc::SIGTERM, 30);
}

#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_only_whole_lines() {
    interrupted_runs_leave_only_whole_lines(libc::SIGINT, 10);
}

/// Blocked on a live pipe with nothing pending, a signal ends the run at once, with the events
/// of every whole line read and nothing of a line that was still arriving.
#[cfg(unix)]
#[test]
fn a_signal_ends_a_run_waiting_for_input_at_once() {
    // `--jobs 2`: the signal must reach the thread blocked in the read (src/parallel.rs).
    for (signo, partial, jobs) in [
        (libc::SIGTERM, &b""[..], "1"),
        (libc::SIGINT, &b"{\"type\":\"user\",\"mess"[..], "1"),
        (libc::SIGHUP, &b""[..], "1"),
        (libc::SIGTERM, &b""[..], "2"),
        (libc::SIGINT, &b"{\"type\":\"user\",\"mess"[..], "2"),
    ] {
        let mut child = spawn_piped(
            insights_with_default_signals(),
            &["--no-timestamp", "--jobs", jobs],
        );
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let input = std::fs::read(root().join(TEXT_ONLY)).unwrap();
        stdin.write_all(&input).unwrap();
        stdin.write_all(partial).unwrap();
        stdin.flush().unwrap();
        // The events of the whole lines arrive (flushed before waiting for input) ...
        let want = run(&["--no-timestamp", TEXT_ONLY], b"").stdout;
        let lines = want.iter().filter(|&&b| b == b'\n').count();
        assert!(lines > 1);
        let mut got = Vec::new();
        let mut byte = [0u8; 1];
        while got.iter().filter(|&&b| b == b'\n').count() < lines {
            let n = std::io::Read::read(&mut stdout, &mut byte).unwrap();
            assert_eq!(n, 1, "signal {signo}: output ended early");
            got.push(byte[0]);
        }
        // ... then, with its input still open, insights waits in a read until the signal.
        std::thread::sleep(Duration::from_millis(100));
        let start = Instant::now();
        signal(&child, signo);
        let status = wait_for(&mut child, &format!("signal {signo}"));
        assert!(start.elapsed() < Duration::from_secs(5));
        std::io::Read::read_to_end(&mut stdout, &mut got).unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(128 + signo), "signal {signo}: {err}");
        assert_eq!(err, "", "signal {signo}");
        assert!(
            got == want,
            "signal {signo}: {}",
            String::from_utf8_lossy(&got)
        );
    }
}

/// A run that inherits ignored signals (`nohup insights …`, whose meaning is "keep running
/// when the terminal hangs up"; a background job ignores SIGINT) keeps them ignored: SIGHUP
/// and SIGINT change nothing, the run goes on converting, and ends when its input ends.
#[cfg(unix)]
#[test]
fn an_inherited_ignored_signal_stays_ignored() {
    let mut child = spawn_piped(
        insights_with_signals(libc::SIG_IGN),
        &["--no-timestamp", "--line-buffered"],
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut next_line = || {
        let mut l = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut l).expect("read output");
        l
    };
    stdin.write_all(b"{\"type\":\"keep_alive\"}\n").unwrap();
    stdin.flush().unwrap();
    assert!(next_line().contains("\"keep_alive\""));
    for signo in [libc::SIGHUP, libc::SIGINT] {
        signal(&child, signo);
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "still running");
    stdin.write_all(b"{\"type\":\"keep_alive\"}\n").unwrap();
    stdin.flush().unwrap();
    let second = next_line();
    assert!(second.contains("\"seq\":2"), "{second}");
    drop(stdin);
    let status = wait_for(&mut child, "end of input");
    assert_eq!(status.code(), Some(0));
}

/// `--jobs 2` on a regular file, which the workers read themselves: a signal stops them at a
/// block boundary, what was read is written (whole lines, numbered on from 1), and the run ends
/// with the signal's status.
#[cfg(unix)]
#[test]
fn a_signal_stops_threads_reading_a_file() {
    let one = captures_of("claude");
    let mut input = one.clone();
    while input.len() < 24 << 20 {
        input.extend_from_slice(&one);
    }
    let path = std::env::temp_dir().join(format!("insights-sigfile-{}.jsonl", std::process::id()));
    std::fs::write(&path, &input).expect("write input");
    let mut child = insights_with_default_signals()
        .args(["--no-timestamp", "--jobs", "2"])
        .arg(&path)
        .env("INSIGHTS_CHUNK_BYTES", "65536")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn insights");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 1];
    std::io::Read::read_exact(&mut stdout, &mut first).expect("output begins");
    let reader = std::thread::spawn(move || {
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut rest).map(|_| rest)
    });
    signal(&child, libc::SIGINT);
    let status = wait_for(&mut child, "SIGINT, --jobs 2 on a file");
    let _ = std::fs::remove_file(&path);
    let mut got = first.to_vec();
    got.extend(reader.join().expect("reader").expect("read output"));
    assert_eq!(status.code(), Some(128 + libc::SIGINT));
    assert_eq!(got.last(), Some(&b'\n'), "whole lines only");
    let mut seq = 0;
    for line in got.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line).expect("a JSON line");
        seq += 1;
        assert_eq!(v["seq"], seq, "numbered on");
    }
    assert!(seq > 0, "the events of the first blocks");
}

// ---------------------------------------------------------------------------------------------
// Input side

#[test]
fn a_100_mb_line_is_reported_and_the_next_one_converted() {
    let text = "x".repeat(100 * 1024 * 1024);
    let line = format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"session_id\":\"s\"}}"
    );
    let input = format!("{line}\n{{\"type\":\"keep_alive\"}}\n");

    let out = run(&["--no-timestamp"], input.as_bytes());
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out),
        format!(
            "insights: <stdin>:1: error: line is {} bytes, over the limit of 67108864 (raise it with --max-line-bytes 128M)\n",
            line.len()
        )
    );
    let got = events(&out);
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0]["event"].as_str(), got[0]["line"].as_u64()),
        (Some("notice"), Some(2))
    );

    let out = run(
        &["--no-timestamp", "--max-line-bytes", "200000000"],
        input.as_bytes(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The first event is the turn the prompt opens (inferred), the second the prompt.
    let first = out.stdout.split(|&b| b == b'\n').nth(1).unwrap();
    let ev: Value = serde_json::from_slice(first).unwrap();
    assert_eq!(ev["event"], "user_input");
    assert_eq!(ev["text"].as_str().map(str::len), Some(text.len()));
}

#[test]
fn a_closed_standard_input_is_an_empty_input() {
    let out = Command::new("sh")
        .args(["-c", "exec \"$0\" --no-timestamp <&-"])
        .arg(env!("CARGO_BIN_EXE_insights"))
        .output()
        .expect("run sh");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn a_writer_that_stops_mid_line_leaves_a_truncated_line_reported() {
    // The agent is killed while writing: standard input ends inside line 3.
    let text = lines_of(TEXT_ONLY);
    let mut child = insights()
        .arg("--no-timestamp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{}\n{}\n{}", text[0], text[1], &text[2][..40]).as_bytes())
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).starts_with(
            "insights: <stdin>:3:40: error: truncated JSON: the input ended inside this line"
        ),
        "{}",
        stderr(&out)
    );
    let lines: Vec<u64> = events(&out)
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(
        lines,
        [1, 1, 2, 2],
        "line 1 opens the turn (inferred turn_start)"
    );
}

// ---------------------------------------------------------------------------------------------
// Regressions found by fuzzing

#[test]
fn compat_reports_a_line_it_cannot_represent_and_goes_on() {
    // Found by fuzz target `detect`: under --compat the whole run ended with "cannot write to
    // standard output: number out of range" (status 2).
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    for value in ["1e999", deep.as_str()] {
        let line = format!(
            "{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Bash\",\"input\":{{\"n\":{value}}}}}]}},\"session_id\":\"s\"}}"
        );
        let input = jsonl(&[
            r#"{"type":"user","message":{"content":"hi"},"session_id":"s"}"#,
            &line,
            r#"{"type":"user","message":{"content":"again"},"session_id":"s"}"#,
        ]);
        let out = run(&["--compat", "cc-insights"], &input);
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        assert!(
            stderr(&out).starts_with(
                "insights: <stdin>:2: error: --compat cc-insights cannot represent this line: "
            ),
            "{}",
            stderr(&out)
        );
        let got = events(&out);
        let seqs: Vec<u64> = got.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        let lines: Vec<u64> = got.iter().map(|e| e["line"].as_u64().unwrap()).collect();
        assert_eq!((seqs, lines), (vec![1, 2], vec![1, 3]));
    }
}

#[test]
fn strict_stops_at_an_insights_event_that_cannot_be_read() {
    let input = jsonl(&[r#"{"event":"text","n":1e999}"#, r#"{"type":"keep_alive"}"#]);
    let out = run(&["--compat", "cc-insights", "--strict"], &input);
    assert_eq!(code(&out), 1);
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_member_given_twice_passes_through_once_with_its_last_value() {
    // Found by fuzz target `detect`: the second `seq` kept its old number, so `jq .seq` (the
    // last one wins) saw the wrong number.
    let input = jsonl(&[
        r#"{"event":"text","seq":5,"kind":"text","text":"first","text":"second","seq":6}"#,
    ]);
    for args in [&["--no-timestamp"][..], &["--compat", "cc-insights"]] {
        let out = run(args, &input);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "{\"event\":\"text\",\"seq\":1,\"kind\":\"text\",\"text\":\"second\"}\n",
            "{args:?}"
        );
    }
}

#[test]
fn a_duplicate_member_that_detection_reads_is_reported_as_ambiguous() {
    let out = run(&[], b"{\"type\":\"keep_alive\",\"type\":\"user\"}\n");
    assert_eq!(
        stderr(&out),
        "insights: <stdin>:1:27: error: ambiguous JSON: duplicate member `type`\n"
    );
}

#[test]
fn convert_and_validate_word_an_unreadable_line_alike() {
    for (line, col, msg) in [
        (
            &b"{\"type\":\"keep_alive\",\"type\":\"user\"}\n"[..],
            27,
            "ambiguous JSON: duplicate member `type`",
        ),
        (
            b"{\"type\":\n",
            8,
            "truncated JSON: EOF while parsing a value",
        ),
        (b"{\"a\" 1}\n", 6, "invalid JSON: expected `:`"),
    ] {
        let conv = stderr(&run(&[], line));
        assert_eq!(conv, format!("insights: <stdin>:1:{col}: error: {msg}\n"));
        let val = String::from_utf8_lossy(&run(&["validate", "-"], line).stdout).into_owned();
        assert!(
            val.contains(&format!("<stdin>:1:{col}: error: unreadable-line: {msg}\n")),
            "{val}"
        );
    }
}

#[test]
fn a_provider_line_that_maps_to_no_event_is_kept_as_a_raw_event() {
    // Found by fuzzing every converter: a line with only unknown content blocks produced
    // nothing at all, neither an event nor a diagnostic.
    let line = r#"{"type":"user","message":{"role":"user","content":[{"type":"brand_new_block","x":1}]},"session_id":"s"}"#;
    let out = run(&["--no-timestamp"], &jsonl(&[line]));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let got = events(&out);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["event"], "raw");
    assert_eq!(got[0]["provider"], "claude");
    assert_eq!(got[0]["reason"], "nothing in this line maps to an event");
    assert_eq!(got[0]["raw"], serde_json::from_str::<Value>(line).unwrap());
}

#[test]
fn a_converter_panic_costs_one_line_not_the_run() {
    // Found by fuzz target `convert_codex`: `json!` over a borrowed value serde_json cannot hold
    // (a lone surrogate escape; also a number beyond f64, nesting deeper than 128) panicked
    // in src/providers/codex/ and ended the run. Whatever the converter does with such a
    // line, the run goes on, and no panic message reaches standard error. (Since the Codex
    // converter builds these objects without `Value`, the lines yield their tool invocations, the
    // values untouched: `providers::codex::tests::values_a_json_value_cannot_hold_pass_through`.)
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let third = format!(
        r#"{{"type":"item.started","item":{{"id":"item_3","type":"command_execution","command":{deep},"status":"in_progress"}}}}"#
    );
    let input = jsonl(&[
        r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"echo \ud800","status":"in_progress"}}"#,
        r#"{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":["echo",1e999],"status":"in_progress"}}"#,
        &third,
        r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"done"}}"#,
    ]);
    let out = run(&["--no-timestamp", "--from", "codex"], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        text.contains(r#""input":{"command":"echo \ud800"}"#),
        "{text}"
    );
    assert!(
        text.contains(r#""input":{"command":["echo",1e999]}"#),
        "{text}"
    );
    assert!(
        text.contains(&format!(r#""input":{{"command":{deep}}}"#)),
        "{text}"
    );
    let got: Vec<Value> = text.lines().map(event).collect();
    let lines: BTreeSet<u64> = got.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, BTreeSet::from([1, 2, 3, 4]));
    assert!(got[..3].iter().all(|e| e["event"] == "tool_invocation"));
    assert_eq!(got.last().unwrap()["text"], "done");
}

// ---------------------------------------------------------------------------------------------
// --redact

// Fake secrets with the shapes of real ones; none of them is valid anywhere.
const ANTHROPIC: &str = "sk-ant-api03-Zq1vN8bT2mK9pL4wR7yZ1cF6hJ0dG5sA8eU3iO2nB7vM4xQ9tY6rW1kP0jH5gD3fS8aL2zC7-XyZwVuAA";
const OPENAI: &str = "sk-proj-Tq9fR2tY7uI1oP3aS6dF1gH8jK5lZ0xC4vB9nM2qW7eR3tY6uI1oP8aS5dF0gHq";
const GOOGLE: &str = "AIzaSyB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1w";
const GITHUB: &str = "ghp_R4nd0mL00k1ngT0k3nV4lu3F0rT3st1ng00";
const GITHUB_PAT: &str =
    "github_pat_11AAAAAAA0abcdefghijkl_MNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const AWS: &str = "AKIAZ7EXAMPLEKEY0001";
const SLACK: &str = "xoxb-111122223333-444455556666-AbCdEfGhIjKlMnOpQrStUvWx";
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const PEM_BODY: &str =
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0";

fn secret_input() -> Vec<u8> {
    let pem =
        format!("-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n");
    let tool_out = format!(
        "AWS_ACCESS_KEY_ID={AWS}\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE\nDATABASE_URL=postgres://app:Sup3rS3cret@db:5432/app\n{pem}"
    );
    let lines = [
        serde_json::json!({"type": "system", "subtype": "init", "session_id": "s", "model": "m",
            "cwd": "/w", "tools": [], "mcp_servers": [], "apiKeySource": "ANTHROPIC_API_KEY"}),
        serde_json::json!({"type": "user", "session_id": "s", "message": {"role": "user",
            "content": format!("My key is {ANTHROPIC}, deploy with it")}}),
        serde_json::json!({"type": "assistant", "session_id": "s", "message": {"id": "m1",
            "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
            "input": {"command": format!("OPENAI_API_KEY={OPENAI} curl -H 'Authorization: Bearer {JWT}' https://api.example.com"),
                      "env": {"GOOGLE_API_KEY": GOOGLE, "password": "hunter2hunter2"}}}]}}),
        serde_json::json!({"type": "user", "session_id": "s", "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": tool_out}]}}),
        serde_json::json!({"type": "brand_new", "session_id": "s", "token": SLACK}),
        serde_json::json!({"event": "notice", "seq": 1, "line": 6, "sessionId": "s",
            "message": format!("pushed with {GITHUB} and {GITHUB_PAT}")}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    let refs: Vec<&str> = text.iter().map(String::as_str).collect();
    jsonl(&refs)
}

#[test]
fn redact_masks_realistic_secrets_everywhere_raw_included() {
    let input = secret_input();
    let secrets = [
        ANTHROPIC,
        OPENAI,
        GOOGLE,
        GITHUB,
        GITHUB_PAT,
        AWS,
        SLACK,
        JWT,
        PEM_BODY,
        "hunter2hunter2",
        "Sup3rS3cret",
        "wJalrXUtnFEMI",
    ];
    let plain = run(&["--no-timestamp", "--raw"], &input);
    let plain = String::from_utf8(plain.stdout).unwrap();
    for s in secrets {
        assert!(plain.contains(s), "the test input lacks {s}");
    }

    let out = run(&["--no-timestamp", "--raw", "--redact"], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    for s in secrets {
        assert!(!text.contains(s), "{s} is still in the output:\n{text}");
    }
    for kind in [
        "anthropic-key",
        "openai-key",
        "google-api-key",
        "github-token",
        "aws-access-key",
        "slack-token",
        "bearer-token",
        "private-key",
        "url-password",
        "password",
        "secret",
    ] {
        assert!(
            text.contains(&format!("[REDACTED:{kind}]")),
            "no {kind}:\n{text}"
        );
    }
    // Same events, same structure: only strings changed.
    let (a, b) = (events(&out), plain.lines().map(event).collect::<Vec<_>>());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x["event"], y["event"]);
        assert_eq!(x["seq"], y["seq"]);
    }
    assert!(
        text.contains("\"apiKeySource\":\"ANTHROPIC_API_KEY\""),
        "{text}"
    );
    // Redacted output converts again unchanged, and redacting it again changes nothing.
    let again = run(&["--no-timestamp", "--redact"], &out.stdout);
    assert_eq!(String::from_utf8(again.stdout).unwrap(), text);
}

#[test]
fn redact_leaves_the_captures_alone_but_for_secrets() {
    // The recorded sessions hold no secret: --redact must not change a byte of them, except
    // for a few strings listed here that do look like one.
    let mut changed = Vec::new();
    let files: Vec<String> = captures().iter().map(|p| rel(p)).collect();
    let mut args = vec!["--no-timestamp", "--raw"];
    args.extend(files.iter().map(String::as_str));
    let plain = run(&args, b"");
    args.push("--redact");
    let redacted = run(&args, b"");
    let (p, r) = (
        String::from_utf8(plain.stdout).unwrap(),
        String::from_utf8(redacted.stdout).unwrap(),
    );
    assert_eq!(p.lines().count(), r.lines().count());
    for (a, b) in p.lines().zip(r.lines()) {
        if a != b {
            assert!(b.contains("[REDACTED:"), "{b}");
            changed.push(b.to_owned());
        }
    }
    assert!(
        changed.len() <= 5,
        "{} lines of real captures redacted, false positives?\n{}",
        changed.len(),
        changed.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Properties of conversion

/// `v`'s `line`, and the line number inside an id built from it (`h<hash>-<line>:<k>`),
/// moved back by `offset`: from a whole file's numbering to a piece's.
fn unshift(v: &mut Value, offset: u64) {
    if let Some(n) = v["line"].as_u64() {
        v["line"] = Value::from(n - offset);
    }
    if let Some(id) = v["id"].as_str() {
        if let Some((stem, k)) = id.rsplit_once(':') {
            if let Some((hash, n)) = stem.split_once('-') {
                if hash.len() == 17 && hash.starts_with('h') {
                    if let Ok(n) = n.parse::<u64>() {
                        v["id"] = Value::from(format!("{hash}-{}:{k}", n - offset));
                    }
                }
            }
        }
    }
}

/// The line indices (0-based, sorted) where pieces start, without 0 and the end.
fn split_at_lines(bytes: &[u8], cuts: &[usize]) -> Vec<(Vec<u8>, u64)> {
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let mut bounds = vec![0];
    bounds.extend(cuts.iter().copied().filter(|&c| c > 0 && c < lines.len()));
    bounds.push(lines.len());
    bounds.dedup();
    bounds
        .windows(2)
        .map(|w| (lines[w[0]..w[1]].concat(), w[0] as u64))
        .collect()
}

/// Converts `input` with `--no-timestamp`.
fn convert(input: &[u8]) -> std::process::Output {
    run(&["--no-timestamp"], input)
}

fn values(stdout: &[u8]) -> Vec<Value> {
    std::str::from_utf8(stdout)
        .expect("UTF-8")
        .lines()
        .map(event)
        .collect()
}

#[test]
fn conversion_is_deterministic_and_converting_again_changes_nothing() {
    for f in captures() {
        let name = rel(&f);
        let input = std::fs::read(&f).unwrap();
        let once = convert(&input);
        let twice = convert(&input);
        assert!(once.stdout == twice.stdout, "{name}: two runs differ");
        assert!(
            once.stderr == twice.stderr,
            "{name}: two runs differ on stderr"
        );
        let again = convert(&once.stdout);
        assert_eq!(code(&again), 0, "{name}: {}", stderr(&again));
        assert!(
            again.stdout == once.stdout,
            "{name}: converting the output again changed it"
        );
    }
}

/// Property: a file cut at line boundaries into pieces, the pieces given as the files of one
/// run, converts to the same events as the whole file, except that `line` (and an id built
/// from it) counts from 1 in each piece. `seq` is the same: it counts across the files of a
/// run. (Converted in separate runs, no provider gives the same events: each remembers at
/// least whether a turn is open, for the `turn_start` it infers.)
#[test]
fn conversion_of_a_split_file_equals_conversion_of_the_whole() {
    // Claude and the formats converted as Claude (Qwen, Amp, Cursor) remember calls, requests
    // and the session across lines (issue 28).
    let dir = scratch("split");
    let mut rng = Rng(9);
    for f in captures() {
        let name = rel(&f);
        let input = std::fs::read(&f).unwrap();
        let n = input.split_inclusive(|&b| b == b'\n').count();
        let whole = values(&convert(&input).stdout);
        // A prompt held for its session is written at the end of its input: no cut between
        // it and the line that names the session (src/providers/held.rs).
        let held: Vec<(u64, u64)> = whole
            .windows(2)
            .filter(|w| w[1]["line"].as_u64() < w[0]["line"].as_u64())
            .filter_map(|w| Some((w[1]["line"].as_u64()?, w[0]["line"].as_u64()?)))
            .collect();
        let apart = |c: &usize| !held.iter().any(|&(p, at)| (p..at).contains(&(*c as u64)));
        for round in 0..2 {
            let mut cuts: Vec<usize> = if round == 0 {
                (1..n).collect() // every line a file of its own
            } else {
                (0..1 + rng.index(3)).map(|_| rng.index(n + 1)).collect()
            };
            cuts.retain(apart);
            cuts.sort_unstable();
            let pieces = split_at_lines(&input, &cuts);
            // The whole file's events, in the numbering of the piece each comes from.
            let offsets: Vec<u64> = pieces.iter().map(|p| p.1).collect();
            let want: Vec<Value> = whole
                .iter()
                .map(|v| {
                    let mut v = v.clone();
                    let line = v["line"].as_u64().expect("line");
                    let k = offsets.iter().rposition(|&o| o < line).unwrap();
                    unshift(&mut v, offsets[k]);
                    v
                })
                .collect();

            let paths: Vec<String> = pieces
                .iter()
                .enumerate()
                .map(|(i, (bytes, _))| {
                    let p = dir.join(format!("piece-{i}.jsonl"));
                    std::fs::write(&p, bytes).unwrap();
                    p.to_string_lossy().into_owned()
                })
                .collect();
            let mut args = vec!["--no-timestamp"];
            args.extend(paths.iter().map(String::as_str));
            let got = values(&run(&args, b"").stdout);
            assert!(
                got == want,
                "{name}: cut at {cuts:?}: one run over the pieces differs"
            );
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn random_mixes_of_captures_and_bad_lines_keep_every_property() {
    // Lines drawn from every capture, with hostile lines among them: each run accounts for
    // every line, is deterministic and converts to itself again.
    let pool: Vec<Vec<u8>> = captures()
        .iter()
        .flat_map(|f| {
            std::fs::read(f)
                .unwrap()
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        })
        .collect();
    let hostile: &[&[u8]] = &[
        b"not json",
        b"[1,2]",
        b"{\"a\":",
        b"\xff\xfe",
        b"{\"type\":\"keep_alive\",\"type\":\"x\"}",
        b"{\"id\":7,\"result\":{}}",
        b"{\"event\":\"text\",\"seq\":1e999,\"text\":\"x\",\"text\":\"y\"}",
        b"   ",
        b"{}",
        b"{\"n\":1e999,\"type\":\"result\",\"subtype\":\"success\"}",
    ];
    let mut rng = Rng(42);
    for round in 0..25 {
        let mut input = Vec::new();
        for _ in 0..(5 + rng.index(40)) {
            if rng.index(5) == 0 {
                input.extend_from_slice(hostile[rng.index(hostile.len())]);
            } else {
                input.extend_from_slice(&pool[rng.index(pool.len())]);
            }
            input.push(b'\n');
        }
        let once = convert(&input);
        let twice = convert(&input);
        assert!(
            once.stdout == twice.stdout && once.stderr == twice.stderr,
            "round {round}"
        );
        let again = convert(&once.stdout);
        assert!(again.stdout == once.stdout, "round {round}: not idempotent");

        // Accounting: every non-blank line has events (by `line`) or one diagnostic.
        let err = stderr(&once);
        let diagnosed: BTreeSet<u64> = err
            .lines()
            .map(|l| {
                l.strip_prefix("insights: <stdin>:")
                    .unwrap()
                    .split(':')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert_eq!(diagnosed.len(), err.lines().count(), "round {round}: {err}");
        let evented: BTreeSet<u64> = events(&once)
            .iter()
            .filter_map(|e| e["line"].as_u64())
            .collect();
        for (i, l) in input.split(|&b| b == b'\n').enumerate() {
            let n = i as u64 + 1;
            if l.iter().all(u8::is_ascii_whitespace) || l.starts_with(b"{\"event\"") {
                continue; // blank, or an InsightsEvent keeping its own `line`
            }
            assert!(
                evented.contains(&n) != diagnosed.contains(&n),
                "round {round}: line {n} has {} events and {} diagnostics: {}",
                evented.contains(&n),
                diagnosed.contains(&n),
                String::from_utf8_lossy(l)
            );
        }
    }
}

#[test]
fn reduce_of_a_split_with_resume_equals_reduce_of_the_whole() {
    // The reducer's own tests check this on every capture in process (src/reduce/tests.rs);
    // here it is the command line: `reduce --from-state` with the state of a prefix, over
    // the whole log again.
    let dir = scratch("reduce");
    let mut rng = Rng(7);
    for f in captures().iter().step_by(7) {
        let name = rel(f);
        let log = convert(&std::fs::read(f).unwrap()).stdout;
        let n = log.iter().filter(|&&b| b == b'\n').count();
        let whole = run(&["reduce"], &log);
        assert_eq!(code(&whole), 0, "{name}: {}", stderr(&whole));
        let cut = rng.index(n + 1);
        let prefix: Vec<u8> = log
            .split_inclusive(|&b| b == b'\n')
            .take(cut)
            .collect::<Vec<_>>()
            .concat();
        let snap = run(&["reduce"], &prefix);
        let state = dir.join("state.json");
        std::fs::write(&state, &snap.stdout).unwrap();
        let resumed = run(&["reduce", "--from-state", &state.to_string_lossy()], &log);
        assert_eq!(code(&resumed), 0, "{name}: {}", stderr(&resumed));
        crate::reduce::check_states(&name, &String::from_utf8_lossy(&resumed.stdout));
        assert!(
            resumed.stdout == whole.stdout,
            "{name}: resumed after {cut} of {n} events differs"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

// ---------------------------------------------------------------------------------------------
// reduce reads back every state it writes (found by fuzz target `reduce`).

#[test]
fn reduce_reads_back_every_state_it_writes() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    for value in [
        r#"{"a":1,"a":2}"#.to_owned(),
        r#""\ud800""#.to_owned(),
        "1e999".to_owned(),
        deep,
    ] {
        let log = format!(
            "{{\"event\":\"tool_invocation\",\"seq\":1,\"sessionId\":\"s\",\"callId\":\"c\",\"toolName\":\"Bash\",\"kind\":\"execute\",\"input\":{{\"v\":{value}}}}}\n"
        );
        let dir = scratch("known");
        let state = dir.join("state.json");
        let first = run(&["reduce"], log.as_bytes());
        std::fs::write(&state, &first.stdout).unwrap();
        let again = run(&["reduce", "--from-state", &state.to_string_lossy()], b"");
        assert_eq!(code(&again), 0, "{value:.40}: {}", stderr(&again));
        assert!(
            again.stdout == first.stdout,
            "{value:.40}: the state changed"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn reduce_reads_back_a_tree_of_deeply_nested_subagents() {
    // Each subagent nests its calls one level deeper in `tree`: 120 of them are 240 levels of
    // JSON, more than one serde_json parse allows (128).
    let mut log = String::from(
        "{\"event\":\"session_init\",\"id\":\"i:0\",\"seq\":1,\"line\":1,\"provider\":\"claude\",\"sessionId\":\"s\"}\n",
    );
    let mut seq = 2;
    for i in 0..120 {
        let parent = match i {
            0 => String::new(),
            _ => format!(",\"parentCallId\":\"c{}\"", i - 1),
        };
        log += &format!("{{\"event\":\"tool_invocation\",\"id\":\"t{i}:0\",\"seq\":{seq},\"line\":{seq},\"provider\":\"claude\",\"sessionId\":\"s\",\"callId\":\"c{i}\",\"kind\":\"think\",\"toolName\":\"Task\",\"input\":{{}}{parent}}}\n");
        seq += 1;
        log += &format!("{{\"event\":\"subagent_spawn\",\"id\":\"p{i}:0\",\"seq\":{seq},\"line\":{seq},\"provider\":\"claude\",\"sessionId\":\"s\",\"callId\":\"c{i}\",\"isResume\":false{parent}}}\n");
        seq += 1;
    }
    let dir = scratch("deep-tree");
    let state = dir.join("state.json");
    let whole = run(&["reduce"], log.as_bytes());
    assert_eq!(code(&whole), 0, "{}", stderr(&whole));
    std::fs::write(&state, &whole.stdout).unwrap();
    let again = run(&["reduce", "--from-state", &state.to_string_lossy()], b"");
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert!(again.stdout == whole.stdout, "the state changed");
    // Resuming in the middle of the chain gives the state of one go.
    let cut = log.match_indices('\n').nth(150).unwrap().0 + 1;
    let first = run(&["reduce"], &log.as_bytes()[..cut]);
    std::fs::write(&state, &first.stdout).unwrap();
    let rest = run(
        &["reduce", "--from-state", &state.to_string_lossy()],
        &log.as_bytes()[cut..],
    );
    assert_eq!(code(&rest), 0, "{}", stderr(&rest));
    assert!(rest.stdout == whole.stdout, "resumed state differs");
    std::fs::remove_dir_all(dir).unwrap();
}
