//! `--jobs N`: the output, diagnostics and exit status are those of one thread, byte for byte,
//! whatever the chunk size (`INSIGHTS_CHUNK_BYTES` makes chunks tiny, so that every chunk
//! boundary case — state carried across chunks, a chunk converted again — is met).

use crate::util::{files_ending, insights, root};
use std::io::Write;
use std::process::{Output, Stdio};

/// Every recorded capture and hostile input of testdata/, provider output only.
fn inputs() -> Vec<String> {
    files_ending(&root().join("testdata"), ".jsonl")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".events.jsonl"))
        .filter(|p| !p.components().any(|c| c.as_os_str() == "session-files"))
        .map(|p| {
            p.strip_prefix(root())
                .expect("under the root")
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// Every input of [`inputs`] one after another, each ending with a newline.
fn all_inputs() -> Vec<u8> {
    let mut data = Vec::new();
    for f in inputs() {
        data.extend(std::fs::read(root().join(f)).expect("read capture"));
        if data.last() != Some(&b'\n') {
            data.push(b'\n');
        }
    }
    data
}

fn run(args: &[String], jobs: &str, chunk: &str, stdin: Option<&[u8]>) -> Output {
    let mut child = insights()
        .args(args)
        .args(["--jobs", jobs])
        .env("INSIGHTS_CHUNK_BYTES", chunk)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn insights");
    if let Some(data) = stdin {
        let mut input = child.stdin.take().expect("stdin");
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = input.write_all(&data);
        });
    }
    child.wait_with_output().expect("wait insights")
}

fn assert_same(one: &Output, many: &Output, what: &str) {
    assert_eq!(one.status.code(), many.status.code(), "{what}: exit status");
    assert!(
        one.stdout == many.stdout,
        "{what}: standard output differs ({} vs {} bytes)",
        one.stdout.len(),
        many.stdout.len()
    );
    assert_eq!(
        String::from_utf8_lossy(&one.stderr),
        String::from_utf8_lossy(&many.stderr),
        "{what}: diagnostics"
    );
}

#[test]
fn every_capture_converts_the_same_on_several_threads() {
    let mut args: Vec<String> = vec!["--no-timestamp".into()];
    args.extend(inputs());
    let one = run(&args, "1", "1000000", None);
    assert!(one.stdout.len() > 1_000_000, "the inputs were found");
    for (jobs, chunk) in [("2", "1"), ("3", "700"), ("2", "65536")] {
        let many = run(&args, jobs, chunk, None);
        assert_same(
            &one,
            &many,
            &format!("--jobs {jobs}, chunks of {chunk} bytes"),
        );
    }
}

#[test]
fn options_that_change_output_are_kept_on_several_threads() {
    for opts in [
        &["--raw"][..],
        &["--compat", "cc-insights"],
        &["--strict"],
        &["--redact"],
        &["--from", "codex"],
    ] {
        let mut args: Vec<String> = opts.iter().map(|s| s.to_string()).collect();
        if !opts.contains(&"--compat") {
            args.push("--no-timestamp".into());
        }
        args.extend(inputs());
        let one = run(&args, "1", "1000000", None);
        let many = run(&args, "3", "500", None);
        if opts.contains(&"--compat") {
            // Events without a time of their own are stamped when read: compare the rest.
            assert_eq!(one.status.code(), many.status.code());
            assert_eq!(one.stderr, many.stderr, "{opts:?}");
            assert_eq!(
                one.stdout.iter().filter(|&&b| b == b'\n').count(),
                many.stdout.iter().filter(|&&b| b == b'\n').count(),
                "{opts:?}"
            );
        } else {
            assert_same(&one, &many, &format!("{opts:?}"));
        }
    }
}

#[test]
fn standard_input_on_several_threads() {
    let data = all_inputs();
    let args = vec!["--no-timestamp".to_string()];
    let one = run(&args, "1", "1000000", Some(&data));
    let many = run(&args, "2", "4096", Some(&data));
    assert_same(&one, &many, "standard input");
}

/// Standard input redirected from a file (`insights < log.jsonl`) is read in blocks like a file
/// argument: the same output as one thread, whatever the chunk size, from where the file's
/// offset stands (here past a first part another reader consumed).
#[test]
fn standard_input_from_a_file_on_several_threads() {
    let data = all_inputs();
    let path =
        std::env::temp_dir().join(format!("insights-stdin-file-{}.jsonl", std::process::id()));
    std::fs::write(&path, &data).expect("write input");
    let skip = data.iter().position(|&b| b == b'\n').expect("a line") + 1;
    let run_from_file = |jobs: &str, chunk: &str| -> Output {
        let mut file = std::fs::File::open(&path).expect("open input");
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(skip as u64)).expect("seek");
        insights()
            .args(["--no-timestamp", "--jobs", jobs])
            .env("INSIGHTS_CHUNK_BYTES", chunk)
            .stdin(Stdio::from(file))
            .output()
            .expect("run insights")
    };
    let args = vec!["--no-timestamp".to_string()];
    let one = run(&args, "1", "1000000", Some(&data[skip..]));
    for (jobs, chunk) in [("1", "1000000"), ("2", "1"), ("3", "4096")] {
        assert_same(
            &one,
            &run_from_file(jobs, chunk),
            &format!("--jobs {jobs}, chunks of {chunk} bytes, from a file"),
        );
    }
    let _ = std::fs::remove_file(&path);
}

/// `reduce --jobs N` and one thread: the same exit status and diagnostics, byte for byte, and
/// the same state apart from the times the clock stamps on events without their own.
fn assert_same_state(one: &Output, many: &Output, what: &str) {
    assert_eq!(one.status.code(), many.status.code(), "{what}: exit status");
    assert_eq!(
        String::from_utf8_lossy(&one.stderr),
        String::from_utf8_lossy(&many.stderr),
        "{what}: diagnostics"
    );
    // Members of the pretty JSON are a line each; the times and the durations computed from
    // them are left out. (Not read back as JSON: the hostile inputs nest deeper and hold
    // larger numbers than serde_json reads.)
    let state = |o: &Output| {
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(text.starts_with('{'), "{what}: a state");
        text.lines()
            .filter(|l| {
                let l = l.trim_start();
                ![
                    "\"timestamp\":",
                    "\"startedAt\":",
                    "\"endedAt\":",
                    "\"durationMs\":",
                ]
                .iter()
                .any(|k| l.starts_with(k))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (a, b) = (state(one), state(many));
    assert!(
        a == b,
        "{what}: the states differ ({} vs {} bytes)",
        a.len(),
        b.len()
    );
}

#[test]
fn every_capture_reduces_the_same_on_several_threads() {
    // One source per file (a converter each, as on one thread) and all of them at once on
    // standard input.
    let mut args: Vec<String> = vec!["reduce".into()];
    args.extend(inputs());
    let one = run(&args, "1", "1000000", None);
    assert!(one.stdout.len() > 100_000, "the inputs were found");
    for (jobs, chunk) in [("2", "1"), ("3", "700"), ("2", "65536")] {
        let many = run(&args, jobs, chunk, None);
        assert_same_state(
            &one,
            &many,
            &format!("--jobs {jobs}, chunks of {chunk} bytes"),
        );
    }
    let data = all_inputs();
    let args = vec!["reduce".to_string()];
    let one = run(&args, "1", "1000000", Some(&data));
    let many = run(&args, "2", "4096", Some(&data));
    assert_same_state(&one, &many, "standard input");
}

/// A state of over 4096 entries and sessions is written on two threads (`reduce`'s
/// `SPLIT_AT`, `json_writer::write_pretty_split`) when `--jobs` allows: the same text.
#[test]
fn a_large_state_is_the_same_written_on_two_threads() {
    // Ten copies, each with Claude's line ids of its own: a copy of the same events would be
    // skipped (`reduce` applies each event id once). Not every input is UTF-8.
    let once = all_inputs();
    let uuid = b"\"uuid\":\"";
    let mut data = Vec::new();
    for k in 0..10 {
        let mut rest = &once[..];
        while let Some(i) = rest.windows(uuid.len()).position(|w| w == uuid) {
            data.extend_from_slice(&rest[..i + uuid.len()]);
            data.extend_from_slice(format!("r{k}-").as_bytes());
            rest = &rest[i + uuid.len()..];
        }
        data.extend_from_slice(rest);
    }
    let args = vec!["reduce".to_string()];
    let one = run(&args, "1", "1000000", Some(&data));
    let entries = String::from_utf8_lossy(&one.stdout)
        .lines()
        .filter(|l| l.starts_with("    {"))
        .count();
    assert!(entries > 4096, "{entries} elements at the second level");
    let many = run(&args, "2", "1000000", Some(&data));
    assert_same_state(&one, &many, "a large state, --jobs 2");
}

/// What one thread does with each line before the fold, the workers do, but for InsightsEvent
/// lines the view cannot read, which the converter handles on the calling thread (passed
/// through with the converter's count, or reported): events and raw Gemini output (which
/// carries its own times) mixed with such lines, lines over the cap, blank ones and ones that
/// are not UTF-8; every line in a chunk of its own, or a few together.
#[test]
fn reduce_on_several_threads_handles_every_kind_of_line_as_one_thread() {
    let raw = std::fs::read(root().join("testdata/gemini/edit-file.jsonl")).expect("capture");
    let events =
        std::fs::read(root().join("testdata/gemini/edit-file.events.jsonl")).expect("golden");
    let mut data = Vec::new();
    data.extend_from_slice(&raw);
    // `seq` is no number: the view cannot read it, the converter renumbers it.
    data.extend_from_slice(
        b"{\"event\":\"text\",\"id\":\"x:0\",\"seq\":\"9\",\"kind\":\"text\",\"text\":\"hi\",\"sessionId\":\"s\"}\n",
    );
    // Neither can read this: reported.
    data.extend_from_slice(b"{\"event\":\"text\",\"id\":\"y:0\",\"text\":5}\n");
    data.extend_from_slice(b"{\"event\":\"text\", broken\n\n   \n\xff\xfe\n");
    data.extend_from_slice(&[b'{'; 300]);
    data.push(b'\n');
    data.extend_from_slice(&events);
    data.extend_from_slice(&raw);
    data.extend_from_slice(b"{\"event\":\"text\",\"id\":\"z:0\",\"seq\":[],\"text\":\"end\"}");
    let path = std::env::temp_dir().join(format!(
        "insights-reduce-kinds-{}.jsonl",
        std::process::id()
    ));
    std::fs::write(&path, &data).expect("write input");
    let file = path.to_string_lossy().into_owned();
    for extra in [&[][..], &["--at", "12"], &["--follow"]] {
        let mut args: Vec<String> = vec!["reduce".into(), "--max-line-bytes".into(), "200".into()];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(file.clone());
        let one = run(&args, "1", "1000000", None);
        assert_eq!(one.status.code(), Some(1), "{extra:?}: lines were reported");
        let err = String::from_utf8_lossy(&one.stderr);
        if extra.is_empty() {
            assert!(
                err.contains("not an InsightsEvent reduce can read"),
                "{err}"
            );
            assert!(err.contains("over the limit"), "{err}");
        }
        for (jobs, chunk) in [("2", "1"), ("3", "300"), ("2", "4096")] {
            let many = run(&args, jobs, chunk, None);
            let what = format!("{extra:?} --jobs {jobs}, chunks of {chunk} bytes");
            assert_eq!(one.status.code(), many.status.code(), "{what}");
            assert_eq!(err, String::from_utf8_lossy(&many.stderr), "{what}");
            assert!(one.stdout == many.stdout, "{what}: the states differ");
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// The count of unreadable lines past which an input gets one summary line, and the warning
/// about a `--from` that turns most lines `raw`, span the chunks: the same diagnostics as one
/// thread, for a file, standard input and `reduce`, whatever the chunk size.
#[test]
fn per_input_counts_span_chunks() {
    // Not agent output: 300 lines of a binary file, among them good Claude lines, twice over.
    let good = std::fs::read(root().join("testdata/claude/text-only.jsonl")).expect("capture");
    let mut data = Vec::new();
    for i in 0..300 {
        if i % 100 == 50 {
            data.extend_from_slice(&good);
        }
        data.extend_from_slice(if i % 3 == 0 {
            b"\x7fELF\x02\x01\x01\0\0\0\0\0\x03\0>\0\n".as_slice()
        } else {
            b"\xff\xfe\x90\x01\0\0H\x8b\x05 not json\n".as_slice()
        });
    }
    let path = std::env::temp_dir().join(format!("insights-binary-{}.bin", std::process::id()));
    std::fs::write(&path, &data).expect("write input");
    let file = path.to_string_lossy().into_owned();
    // And a Claude capture under --from codex.
    let claude = "testdata/claude/subagent-partial.jsonl".to_string();
    for args in [
        vec!["--no-timestamp".to_string(), file.clone(), file.clone()],
        vec!["reduce".to_string(), file.clone(), file.clone()],
        vec![
            "--no-timestamp".into(),
            "--from".into(),
            "codex".into(),
            claude.clone(),
            file.clone(),
        ],
        vec![
            "reduce".into(),
            "--from".into(),
            "codex".into(),
            claude.clone(),
        ],
    ] {
        let one = run(&args, "1", "1000000", None);
        let err = String::from_utf8_lossy(&one.stderr).into_owned();
        assert!(
            err.contains("more lines could not be read") || err.contains("warning:"),
            "{args:?}: {err}"
        );
        for (jobs, chunk) in [("2", "1"), ("3", "97"), ("2", "4096")] {
            let many = run(&args, jobs, chunk, None);
            let what = format!("{args:?} --jobs {jobs}, chunks of {chunk} bytes");
            assert_eq!(one.status.code(), many.status.code(), "{what}");
            assert_eq!(err, String::from_utf8_lossy(&many.stderr), "{what}");
            if args[0] != "reduce" {
                assert!(one.stdout == many.stdout, "{what}: standard output");
            }
        }
    }
    let args = vec!["--no-timestamp".to_string()];
    let one = run(&args, "1", "1000000", Some(&data));
    let many = run(&args, "2", "100", Some(&data));
    assert_same(&one, &many, "standard input");
    assert_eq!(
        String::from_utf8_lossy(&one.stderr).lines().last(),
        Some(
            "insights: <stdin>: error: 280 more lines could not be read (not shown); \
             is this a binary file?"
        )
    );
    let _ = std::fs::remove_file(&path);
}

/// Converts `data` (a log that fills the stream's memory) on one thread, then on 2 and 3
/// threads with chunks small and large, and checks that the output and diagnostics are one
/// thread's, with one note of what was forgotten; with `none_again`, also that no chunk was
/// converted again. Returns one thread's output.
fn same_with_a_full_memory(name: &str, data: &str, none_again: bool) -> String {
    let path =
        std::env::temp_dir().join(format!("insights-full-{name}-{}.jsonl", std::process::id()));
    std::fs::write(&path, data).expect("write input");
    let args = vec![
        "--no-timestamp".to_string(),
        path.to_string_lossy().into_owned(),
    ];
    let one = run(&args, "1", "1000000", None);
    let err = String::from_utf8_lossy(&one.stderr).into_owned();
    assert_eq!(err.matches("forgot ").count(), 1, "{name}: one note: {err}");
    for (jobs, chunk) in [("2", "4096"), ("3", "65536"), ("2", "262144")] {
        let many = run(&args, jobs, chunk, None);
        assert_same(
            &one,
            &many,
            &format!("{name}: --jobs {jobs}, chunks of {chunk} bytes"),
        );
    }
    if none_again {
        let stats = insights()
            .args(&args)
            .args(["--jobs", "2"])
            .env("INSIGHTS_CHUNK_BYTES", "65536")
            .env("INSIGHTS_CHUNK_STATS", "1")
            .output()
            .expect("run insights");
        let err = String::from_utf8_lossy(&stats.stderr);
        assert!(err.contains(", 0 converted again"), "{name}: {err}");
    }
    let _ = std::fs::remove_file(&path);
    String::from_utf8_lossy(&one.stdout).into_owned()
}

/// A log that keeps a memory full (more Codex threads than the converter keeps the working
/// directory of), looking up threads started just before, and with `old` also threads started
/// long before (forgotten by then or not, depending on how full the memory was). Without old
/// lookups, no chunk depends on how full the memory was at its start: none is converted again.
#[test]
fn a_full_memory_converts_the_same_on_several_threads() {
    for old in [true, false] {
        let mut data = String::new();
        for n in 0..6000u32 {
            data.push_str(&format!(
                "{{\"method\":\"thread/started\",\"params\":{{\"thread\":{{\"id\":\"t{n}\",\
                 \"cwd\":\"/w/{n}\"}}}}}}\n"
            ));
            if n % 7 != 0 {
                continue;
            }
            // A turn's diff: paths made absolute only when the thread's cwd is known.
            let mut threads = vec![n.saturating_sub(3)];
            if old {
                threads.push(n.saturating_sub(4500 + n % 400));
            }
            for t in threads {
                data.push_str(&format!(
                    "{{\"method\":\"turn/diff/updated\",\"params\":{{\"threadId\":\"t{t}\",\
                     \"turnId\":\"u{n}\",\"diff\":\"diff --git a/f.txt b/f.txt\\n--- a/f.txt\\n\
                     +++ b/f.txt\\n@@ -1 +1 @@\\n-a\\n+b\\n\"}}}}\n"
                ));
            }
        }
        let out = same_with_a_full_memory(&format!("codex-{old}"), &data, !old);
        assert!(out.contains("\"path\":\"/w/"), "cwds known");
        assert_eq!(
            out.contains("\"codex.relativeToCwd\":true"),
            old,
            "cwds forgotten"
        );
    }
}

/// The same with ACP, whose turn ends take every call of a session (a scan of the memory, by
/// prefix): a memory full of calls no turn ended, and turns ended, recent and old, whose calls
/// were forgotten by then or not.
#[test]
fn a_full_memory_with_scans_converts_the_same_on_several_threads() {
    let mut data = String::new();
    for k in 0..4000u32 {
        data.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{k},\"method\":\"session/prompt\",\
             \"params\":{{\"sessionId\":\"s{k}\",\"prompt\":[]}}}}\n"
        ));
        for j in 0..3 {
            data.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\
                 \"sessionId\":\"s{k}\",\"update\":{{\"sessionUpdate\":\"tool_call\",\
                 \"toolCallId\":\"c{k}-{j}\",\"status\":\"pending\",\"kind\":\"execute\"}}}}}}\n"
            ));
        }
        for done in [
            Some(k).filter(|k| k % 5 == 0),
            k.checked_sub(3000).filter(|k| k % 5 == 1),
        ]
        .into_iter()
        .flatten()
        {
            data.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{done},\"result\":{{\"stopReason\":\"cancelled\"}}}}\n"
            ));
        }
    }
    let out = same_with_a_full_memory("acp", &data, false);
    // The calls of the turns ended at once (800 turns, 3 calls each), and of the old turns
    // ended late (200 turns), those not forgotten by then: not all of them.
    let cancelled = out.matches("\"status\":\"cancelled\"").count();
    assert!(
        (2400..3000).contains(&cancelled),
        "{cancelled} calls cancelled"
    );
}
