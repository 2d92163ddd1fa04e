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
