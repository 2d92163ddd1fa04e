//! Shared helpers: run the built binary with a scrubbed environment.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A command for the `insights` binary with an environment that cannot change its output.
pub fn insights() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_insights"));
    c.current_dir(root());
    for v in ["NO_COLOR", "CLICOLOR_FORCE", "TERM", "COLUMNS"] {
        c.env_remove(v);
    }
    // `usage` and `sessions` count days in the local zone by default.
    c.env("TZ", "UTC");
    c
}

/// Runs `insights ARGS` with `stdin` written from a thread (no pipe deadlock).
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = insights()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn insights");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait insights");
    writer.join().expect("stdin writer");
    out
}

/// The events of a capture (a path from the repository root), converted without timestamps.
pub fn events_of(input: &str) -> Vec<serde_json::Value> {
    let out = run(&["--no-timestamp", input], b"");
    assert!(
        out.status.success(),
        "{input}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect()
}

/// The state `reduce` makes of a capture, or of its first `lines` lines (`--at` the last
/// event they make).
pub fn reduce_of(input: &str, lines: Option<u64>) -> serde_json::Value {
    let at = lines.map(|n| {
        events_of(input)
            .iter()
            .filter(|e| e["line"].as_u64().is_some_and(|l| l <= n))
            .filter_map(|e| e["seq"].as_u64())
            .max()
            .unwrap_or(0)
            .to_string()
    });
    let mut args = vec!["reduce"];
    if let Some(at) = &at {
        args.extend(["--at", at]);
    }
    args.push(input);
    let out = run(&args, b"");
    assert!(
        out.status.success(),
        "{input}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("state JSON")
}

/// The events made of input line `line` (1-based).
pub fn of_line(evs: &[serde_json::Value], line: u64) -> Vec<&serde_json::Value> {
    evs.iter().filter(|e| e["line"] == line).collect()
}

/// The entries of a state of type `ty`.
pub fn entries<'v>(st: &'v serde_json::Value, ty: &str) -> Vec<&'v serde_json::Value> {
    st["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["type"] == ty)
        .collect()
}

/// All files under `dir` (recursively) whose name ends with `suffix`, sorted.
pub fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The provider captures of `testdata/DIR` (not their `.events.jsonl` goldens), one after
/// another.
pub fn captures_of(dir: &str) -> Vec<u8> {
    let mut data = Vec::new();
    for f in files_ending(&root().join("testdata").join(dir), ".jsonl") {
        if !f.to_string_lossy().ends_with(".events.jsonl") {
            data.extend(std::fs::read(&f).expect("read capture"));
        }
    }
    data
}

/// Panics when `expected` and `actual` differ, showing where ([`difference`]).
pub fn assert_same(what: &str, expected: &str, actual: &str) {
    if let Some(d) = difference(what, expected, actual) {
        panic!("\n{d}");
    }
}

/// `None` when the texts are equal; else a message naming `what`, the first line that differs
/// with two lines of context from each side, and the line counts.
pub fn difference(what: &str, expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let first = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let show = |lines: &[&str]| -> String {
        let from = first.saturating_sub(2);
        let to = (first + 3).min(lines.len());
        (from..to)
            .map(|i| format!("  {:>5} {}\n", i + 1, lines[i]))
            .collect::<String>()
    };
    Some(format!(
        "{what} differs from line {} on (expected {} lines, got {}; BLESS=1 cargo test rewrites golden files)\nexpected:\n{}actual:\n{}",
        first + 1,
        e.len(),
        a.len(),
        show(&e),
        show(&a)
    ))
}

/// Runs `check` on every item and panics at the end with every failure, not only the first.
pub fn check_each<T: std::fmt::Debug>(items: &[T], check: impl Fn(&T) -> Result<(), String>) {
    assert!(!items.is_empty(), "nothing to check");
    let failures: Vec<String> = items
        .iter()
        .filter_map(|i| check(i).err().map(|e| format!("{i:?}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "\n{} of {} failed:\n\n{}",
        failures.len(),
        items.len(),
        failures.join("\n\n")
    );
}

#[path = "../src/test_support/rng.rs"]
mod rng;
pub use rng::Rng;

/// Where `../shared/peers` is (the harness that runs the real agent CLIs beside a scripted
/// mock model): `$INSIGHTS_PEERS`, else next to the repository. `None`, with a note, when it
/// is not there: the tests that drive real CLIs are skipped.
pub fn peers() -> Option<PathBuf> {
    let dir = std::env::var_os("INSIGHTS_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/peers"));
    if dir.join("with-mock").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: no peers harness at {} (set INSIGHTS_PEERS)",
            dir.display()
        );
        None
    }
}

/// One step of a script given to `insights run` ([`with_mock`]).
pub enum Step<'a> {
    /// Write this command line.
    Send(&'a str),
    /// Wait until an event of this type has come out.
    Until(&'a str),
    /// Send this signal to `insights run` (as a terminal's Ctrl-C would, for SIGINT).
    Signal(&'a str),
}

/// What a run beside a real CLI left: its events, exit status, standard error, and the
/// scratch folder (`work/` the agent's work dir, `mock/requests.jsonl` the model requests).
pub struct Mocked {
    pub events: Vec<serde_json::Value>,
    pub status: Option<i32>,
    pub stderr: String,
    pub scratch: PathBuf,
}

impl Mocked {
    /// The events of one type.
    pub fn of(&self, event: &str) -> Vec<&serde_json::Value> {
        self.events.iter().filter(|e| e["event"] == event).collect()
    }

    /// A file of the agent's work dir, if it is there.
    pub fn file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.scratch.join("work").join(name)).ok()
    }

    /// The model requests the mock received, as it logged them.
    pub fn requests(&self) -> String {
        std::fs::read_to_string(self.scratch.join("mock/requests.jsonl")).unwrap_or_default()
    }

    /// The events and standard error, for assertion messages.
    pub fn dump(&self) -> String {
        let evs: Vec<String> = self
            .events
            .iter()
            .map(|e| {
                let s = e.to_string();
                match s.char_indices().nth(240) {
                    Some((i, _)) => format!("{}…", &s[..i]),
                    None => s,
                }
            })
            .collect();
        format!("{}\n--- stderr\n{}", evs.join("\n"), self.stderr)
    }
}

/// Runs `insights run RUN_ARGS -- $PEERS_CLI AGENT` beside the real CLI of `provider` and the
/// mock model scripted by `testdata/scenarios/run/SCENARIO.json`, in a new scratch folder,
/// writing `steps` to its standard input (then closing it). `AGENT` is shell text after the
/// CLI's argv (`$PEERS_ARGS` is the harness's flags). `None` when the harness is not there.
pub fn with_mock(
    provider: &str,
    scenario: &str,
    run_args: &[&str],
    agent: &str,
    steps: &[Step],
) -> Option<Mocked> {
    use std::io::BufRead;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    let peers = peers()?;
    let scratch = std::env::temp_dir().join(format!(
        "insights-run-{provider}-{scenario}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    // `exec` keeps the shell's pid: the file names `insights run`'s process.
    let script = format!(
        "echo $$ > \"$PEERS_WORKDIR/../run.pid\"; exec \"$0\" run \"$@\" -- $PEERS_CLI {agent}"
    );
    let mut child = Command::new(peers.join("with-mock"))
        .arg(provider)
        .arg(root().join(format!("testdata/scenarios/run/{scenario}.json")))
        .args(["--", "sh", "-c", &script, env!("CARGO_BIN_EXE_insights")])
        .args(run_args)
        .env("PEERS_SCRATCH", &scratch)
        .env("PEERS_KEEP_WORK", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn with-mock");
    let events = Arc::new(Mutex::new(Vec::<serde_json::Value>::new()));
    let out = child.stdout.take().expect("stdout");
    let seen = Arc::clone(&events);
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            let v =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not an event: {e}: {line}"));
            seen.lock().unwrap().push(v);
        }
    });
    let mut err = child.stderr.take().expect("stderr");
    let errs = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let mut input = child.stdin.take().expect("stdin");
    let deadline = Instant::now() + Duration::from_secs(120);
    for step in steps {
        match step {
            Step::Send(line) => {
                let _ = input.write_all(format!("{line}\n").as_bytes());
                let _ = input.flush();
            }
            Step::Signal(sig) => {
                let pid = std::fs::read_to_string(scratch.join("run.pid")).expect("run.pid");
                let ok = Command::new("kill")
                    .args([format!("-{sig}"), pid.trim().to_owned()])
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "kill -{sig} {pid}");
            }
            Step::Until(ty) => {
                while !events.lock().unwrap().iter().any(|e| e["event"] == *ty) {
                    if Instant::now() > deadline {
                        let _ = child.kill();
                        panic!("no `{ty}` event came: {:?}", events.lock().unwrap());
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }
    drop(input);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait with-mock") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("insights run did not end: {:?}", events.lock().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().expect("stdout reader");
    let stderr = errs.join().expect("stderr reader");
    let events = std::mem::take(&mut *events.lock().unwrap());
    Some(Mocked {
        events,
        status: status.code(),
        stderr,
        scratch,
    })
}
