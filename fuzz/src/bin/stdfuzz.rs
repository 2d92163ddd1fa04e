//! A std-only mutation fuzzer for the same targets as `cargo fuzz`, for machines without
//! libFuzzer (and for CI's smoke run): no coverage feedback, just seeds from `testdata/`
//! mutated by a deterministic PRNG, millions of inputs, every one checked in process.
//!
//! ```text
//! cargo run --release --no-default-features --features stdfuzz --bin stdfuzz -- [--seconds N] [--runs N] [--seed N] [TARGET]...
//! ```
//!
//! `--write-corpus` writes the seeds to `fuzz/corpus/TARGET/` and `fuzz/insights.dict` for
//! `cargo fuzz run`; `--list` lists the targets this fuzzer runs: the cargo-fuzz targets, with
//! `convert` as `convert_PROVIDER` once per provider (the provider fixed, not read from the
//! first byte).
//!
//! With no TARGET every target runs, each for `--seconds` (default 10) or `--runs` inputs.
//! A panicking input is written to `fuzz/artifacts/TARGET/crash-HASH` (replay it with
//! `cargo fuzz run TARGET FILE`, or `stdfuzz --replay TARGET FILE`), an input that takes over
//! a second to `slow-HASH`; the exit status is 1 if any was found. The diagnostics the targets
//! write on standard error are discarded (the fuzzer runs itself as a child for that).

use insights_fuzz::targets;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static LAST_PANIC: Mutex<String> = Mutex::new(String::new());

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Pieces that make JSON and agent output interesting: structure, escapes, type names of
/// every provider, huge numbers, secrets, terminal escapes.
const DICT: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\\"",
    "\\\\",
    "\\n",
    "\\u0000",
    "\\ud800",
    "\\u001b[31m",
    "\u{1b}[2J",
    "\u{202e}",
    "\u{feff}",
    "\r\n",
    "\n",
    "\0",
    "\u{ff}",
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1e999",
    "-1e999",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "0.000000000000000000001",
    "\"type\":",
    "\"subtype\":",
    "\"event\":",
    "\"message\":",
    "\"method\":",
    "\"params\":",
    "\"id\":",
    "\"result\":",
    "\"error\":",
    "\"jsonrpc\":\"2.0\"",
    "\"msg\":",
    "\"session_id\":",
    "\"sessionId\":",
    "\"uuid\":",
    "\"timestamp\":",
    "\"content\":",
    "\"text\":",
    "\"seq\":",
    "\"line\":",
    "\"raw\":",
    "\"item\":",
    "\"update\":",
    "\"sessionUpdate\":",
    "\"tool_use\"",
    "\"tool_result\"",
    "\"assistant\"",
    "\"user\"",
    "\"system\"",
    "\"result\"",
    "\"init\"",
    "\"stream_event\"",
    "\"control_request\"",
    "\"control_response\"",
    "\"item.started\"",
    "\"item.completed\"",
    "\"turn.completed\"",
    "\"thread.started\"",
    "\"session/update\"",
    "\"session/request_permission\"",
    "\"agent_message_chunk\"",
    "\"tool_call\"",
    "\"tool_call_update\"",
    "\"codex/event\"",
    "\"item/started\"",
    "\"turn/completed\"",
    "\"message\"",
    "\"tool_call\"",
    "\"step_start\"",
    "\"step_finish\"",
    "\"thinking\"",
    "\"text\"",
    "\"session_init\"",
    "\"tool_invocation\"",
    "\"tool_completion\"",
    "\"stream_delta\"",
    "\"turn_complete\"",
    "\"subagent_spawn\"",
    "\"permission_request\"",
    "\"permission_response\"",
    "sk-ant-api03-",
    "sk-proj-",
    "AIza",
    "ghp_",
    "github_pat_",
    "AKIA",
    "xoxb-",
    "Bearer ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "password=",
    "\\\"password\\\": \\\"",
    "://user:pw@",
    "[REDACTED:",
];

/// Seeds: every `*.jsonl` under `testdata/`, in pieces of a few lines (at most 16 KiB), so a
/// mutation changes a small input.
fn seeds(root: &Path) -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        let mut piece = Vec::new();
        let mut n = 0;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            if piece.len() + line.len() > 16 * 1024 || n == 8 {
                if !piece.is_empty() {
                    out.push(std::mem::take(&mut piece));
                }
                n = 0;
            }
            if line.len() <= 16 * 1024 {
                piece.extend_from_slice(line);
                n += 1;
            }
        }
        if !piece.is_empty() {
            out.push(piece);
        }
    }
    out
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], input: &mut Vec<u8>) {
    let rounds = 1 + rng.below(6);
    for _ in 0..rounds {
        let len = input.len();
        match rng.below(12) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.below(len + 1);
                let tok = DICT[rng.below(DICT.len())].as_bytes();
                input.splice(i..i, tok.iter().copied());
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                input.drain(i..i + n);
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(256));
                let copy = input[i..i + n].to_vec();
                let j = rng.below(len + 1);
                input.splice(j..j, copy);
            }
            5 => {
                // Splice a line of another seed in.
                let other = &seeds[rng.below(seeds.len())];
                let lines: Vec<&[u8]> = other.split_inclusive(|&b| b == b'\n').collect();
                if let Some(l) = lines.get(rng.below(lines.len())) {
                    let at = line_start(input, rng.below(len + 1));
                    input.splice(at..at, l.iter().copied());
                }
            }
            6 if len > 0 => {
                input.truncate(rng.below(len));
            }
            7 => {
                // Deep nesting.
                let depth = 1 + rng.below(3000);
                let i = rng.below(len + 1);
                let open = if rng.below(2) == 0 { "[" } else { "{\"a\":" };
                input.splice(i..i, open.repeat(depth).into_bytes());
            }
            8 if len > 0 => {
                // Swap two lines.
                let mut lines: Vec<Vec<u8>> = input
                    .split_inclusive(|&b| b == b'\n')
                    .map(<[u8]>::to_vec)
                    .collect();
                let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                lines.swap(a, b);
                *input = lines.concat();
            }
            9 => {
                // Replace a JSON scalar's digits or a string's contents with a dictionary word.
                if let Some(i) = (0..8)
                    .map(|_| rng.below(len.max(1)))
                    .find(|&i| input.get(i) == Some(&b':'))
                {
                    let tok = DICT[rng.below(DICT.len())].as_bytes();
                    input.splice(i + 1..i + 1, tok.iter().copied());
                }
            }
            10 if len > 0 => {
                // Repeat a byte many times (long strings, long lines).
                let i = rng.below(len);
                let n = rng.below(5000);
                let b = input[i];
                input.splice(i..i, std::iter::repeat_n(b, n));
            }
            _ => {
                let other = &seeds[rng.below(seeds.len())];
                input.extend_from_slice(other);
            }
        }
    }
    if input.len() > 256 * 1024 {
        input.truncate(256 * 1024);
    }
}

/// A panic message cut to a readable length.
fn short(msg: &str) -> String {
    let mut s: String = msg.chars().take(1500).collect();
    if s.len() < msg.len() {
        s.push_str(" …");
    }
    s.replace('\n', "\n  ")
}

fn line_start(b: &[u8], i: usize) -> usize {
    b[..i]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1)
}

fn fnv(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= u64::from(x);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn save(dir: &Path, target: &str, what: &str, input: &[u8]) -> PathBuf {
    let d = dir.join("artifacts").join(target);
    std::fs::create_dir_all(&d).expect("create artifacts dir");
    let p = d.join(format!("{what}-{:016x}", fnv(input)));
    std::fs::write(&p, input).expect("write artifact");
    p
}

struct Args {
    seconds: Option<u64>,
    runs: Option<u64>,
    seed: u64,
    targets: Vec<String>,
    replay: Option<(String, PathBuf)>,
}

fn args() -> Args {
    let mut a = Args {
        seconds: None,
        runs: None,
        seed: 1,
        targets: Vec::new(),
        replay: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        let mut num = |what: &str| -> u64 {
            it.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{what} takes a number"))
        };
        match x.as_str() {
            "--seconds" => a.seconds = Some(num("--seconds")),
            "--runs" => a.runs = Some(num("--runs")),
            "--seed" => a.seed = num("--seed"),
            "--replay" => {
                let t = it.next().expect("--replay TARGET FILE");
                let f = it.next().expect("--replay TARGET FILE");
                a.replay = Some((t, f.into()));
            }
            "--write-corpus" => {
                // Seeds for `cargo fuzz run`: fuzz/corpus/TARGET/, and the dictionary.
                let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
                let seeds = seeds(&dir.join("../testdata"));
                for t in targets::names() {
                    let d = dir.join("corpus").join(&t);
                    std::fs::create_dir_all(&d).expect("create corpus dir");
                    // `convert` takes its provider from the first byte: each seed once per
                    // provider.
                    let inputs: Vec<Vec<u8>> = if t == "convert" {
                        targets::providers()
                            .into_iter()
                            .flat_map(|p| {
                                seeds
                                    .iter()
                                    .filter_map(move |s| targets::convert_input(p, s))
                            })
                            .collect()
                    } else {
                        seeds.clone()
                    };
                    for s in &inputs {
                        std::fs::write(d.join(format!("seed-{:016x}", fnv(s))), s)
                            .expect("write seed");
                    }
                }
                let dict: String = DICT
                    .iter()
                    .map(|w| {
                        let esc: String = w
                            .bytes()
                            .map(|b| match b {
                                b'"' | b'\\' => format!("\\{}", b as char),
                                0x20..=0x7e => (b as char).to_string(),
                                _ => format!("\\x{b:02X}"),
                            })
                            .collect();
                        format!("\"{esc}\"\n")
                    })
                    .collect();
                std::fs::write(dir.join("insights.dict"), dict).expect("write dict");
                println!(
                    "{} seeds for each target in fuzz/corpus/, fuzz/insights.dict",
                    seeds.len()
                );
                std::process::exit(0);
            }
            "--list" => {
                for n in targets::smoke_names() {
                    println!("{n}");
                }
                std::process::exit(0);
            }
            _ if x.starts_with('-') => panic!("unknown option {x}"),
            _ => a.targets.push(x),
        }
    }
    a
}

fn main() -> ExitCode {
    // Run as a child with standard error discarded: the targets report bad input lines there.
    if std::env::var_os("INSIGHTS_STDFUZZ_CHILD").is_none() {
        let status = Command::new(std::env::current_exe().expect("current exe"))
            .args(std::env::args_os().skip(1))
            .env("INSIGHTS_STDFUZZ_CHILD", "1")
            .stderr(Stdio::null())
            .status()
            .expect("run the fuzzer");
        return ExitCode::from(status.code().unwrap_or(2).clamp(0, 255) as u8);
    }
    std::panic::set_hook(Box::new(|info| {
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = info.to_string();
    }));
    let a = args();
    let fuzz_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if let Some((t, f)) = &a.replay {
        let run = targets::by_name(t).unwrap_or_else(|| panic!("no target {t}"));
        let input = std::fs::read(f).expect("read the input");
        return match catch_unwind(AssertUnwindSafe(|| run(&input))) {
            Ok(()) => {
                println!("{t}: {}: ok", f.display());
                ExitCode::SUCCESS
            }
            Err(_) => {
                println!("{t}: {}: {}", f.display(), LAST_PANIC.lock().unwrap());
                ExitCode::from(1)
            }
        };
    }
    let names = if a.targets.is_empty() {
        targets::smoke_names()
    } else {
        a.targets.clone()
    };
    let seeds = seeds(&fuzz_dir.join("../testdata"));
    assert!(!seeds.is_empty(), "no seeds under testdata/");
    let budget = Duration::from_secs(a.seconds.unwrap_or(10));
    let (mut found, mut failed) = (0, 0u64);
    for name in &names {
        let run = targets::by_name(name).unwrap_or_else(|| panic!("no target {name}"));
        let mut rng = Rng(a.seed ^ fnv(name.as_bytes()));
        let start = Instant::now();
        let (mut execs, mut crashes, mut slow) = (0u64, 0u64, 0u64);
        let mut input = Vec::new();
        loop {
            let done = match a.runs {
                Some(n) => execs >= n,
                None => start.elapsed() >= budget,
            };
            if done {
                break;
            }
            // Seeds as they are and mutations of them in turn, so that even a short run
            // mutates.
            input.clear();
            let s = execs as usize / 2;
            if execs % 2 == 0 && s < seeds.len() {
                input.extend_from_slice(&seeds[s]);
            } else {
                input.extend_from_slice(&seeds[rng.below(seeds.len())]);
                mutate(&mut rng, &seeds, &mut input);
            }
            let t0 = Instant::now();
            let res = catch_unwind(AssertUnwindSafe(|| run(&input)));
            execs += 1;
            if res.is_err() {
                crashes += 1;
                let p = save(&fuzz_dir, name, "crash", &input);
                println!(
                    "{name}: CRASH, input saved to {}\n  {}",
                    p.display(),
                    short(&LAST_PANIC.lock().unwrap())
                );
                if crashes >= 5 {
                    break;
                }
            } else if t0.elapsed() > Duration::from_secs(1) {
                slow += 1;
                let p = save(&fuzz_dir, name, "slow", &input);
                println!(
                    "{name}: slow input ({:?}), saved to {}",
                    t0.elapsed(),
                    p.display()
                );
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name}: {execs} inputs in {secs:.1} s ({:.0}/s), {crashes} crashes, {slow} slow",
            execs as f64 / secs
        );
        let _ = std::io::stdout().flush();
        found += crashes + slow;
        failed += u64::from(crashes + slow > 0);
    }
    // A closing line CI can read.
    println!(
        "stdfuzz: {} passed, {failed} failed",
        names.len() as u64 - failed
    );
    if found > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
