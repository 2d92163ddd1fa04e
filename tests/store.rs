//! `insights store`: every event once (again, a copy, a file that went on), a run killed and
//! run again ends as one clean run, two writers at once, files that are not ours refused and
//! left as they are, and the database read back with the real `sqlite3` shell.

use crate::util::{files_ending, insights, root};
use rusqlite::Connection;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("insights-store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `insights store --db DB ARGS`, with XDG_DATA_HOME pointed away from the real one.
fn store(db: &Path, args: &[&Path]) -> Output {
    let mut c = insights();
    c.arg("store").arg("--db").arg(db).args(args);
    c.env("XDG_DATA_HOME", db.parent().unwrap());
    c.output().expect("run insights store")
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "status {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The numbers in the closing note: (new events, events read).
fn note(out: &Output) -> (u64, u64) {
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("note: stored "))
        .unwrap_or_else(|| panic!("no closing note: {err}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "stored").unwrap();
    (
        words[at + 1].parse().unwrap(),
        words[at + 5].parse().unwrap(),
    )
}

/// An event stored: (session_id, id, event, json).
type Row = (String, String, String, String);

/// Every event stored, in key order.
fn rows(db: &Path) -> Vec<Row> {
    let c = Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT session_id, id, event, json FROM events ORDER BY session_id, id")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The distinct (sessionId, id) of what `insights` makes of `path`.
fn converted_keys(path: &Path) -> std::collections::BTreeSet<(String, String)> {
    let out = insights().arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["sessionId"].as_str().unwrap_or("").to_owned(),
                v["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    for f in files_ending(from, ".jsonl") {
        let dest = to.join(f.strip_prefix(from).unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&f, &dest).unwrap();
    }
}

#[test]
fn each_event_is_stored_once_again_and_from_a_copy() {
    let d = scratch("once");
    let db = d.join("db").join("insights.db");
    let claude = root().join("testdata/claude");
    let first = store(&db, &[&claude]);
    ok(&first);
    let stored = rows(&db);
    // What `insights` makes of the folder, each key once (the golden `.events.jsonl` files
    // repeat the captures' events: the same keys).
    assert_eq!(
        stored
            .iter()
            .map(|r| (r.0.clone(), r.1.clone()))
            .collect::<std::collections::BTreeSet<_>>(),
        converted_keys(&claude)
    );
    assert_eq!(note(&first).0, stored.len() as u64);
    // Again: nothing read, nothing added.
    let again = store(&db, &[&claude]);
    ok(&again);
    assert_eq!(note(&again), (0, 0));
    assert_eq!(rows(&db), stored);
    // A copy elsewhere: read, nothing added.
    let copy = d.join("copy");
    copy_dir(&claude, &copy);
    let from_copy = store(&db, &[&copy]);
    ok(&from_copy);
    assert_eq!(note(&from_copy).0, 0);
    assert!(note(&from_copy).1 > 0);
    assert_eq!(rows(&db), stored);
    // Standard input, the same lines: nothing added.
    let one = claude.join("acceptedits-multi-write.jsonl");
    let mut c = insights();
    c.args(["store", "--db"]).arg(&db).arg("-");
    let out = c
        .stdin(std::fs::File::open(&one).unwrap())
        .output()
        .unwrap();
    ok(&out);
    assert_eq!(note(&out).0, 0);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Stores the first `half` lines of `lines` as one file, then the rest appended, and returns
/// the database and what the second run said.
fn store_in_two(d: &Path, lines: &[&[u8]], half: usize) -> (PathBuf, (u64, u64)) {
    let db = d.join("inc.db");
    let file = d.join("inc").join("session.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let mut f = std::fs::File::create(&file).unwrap();
    for l in &lines[..half] {
        f.write_all(l).unwrap();
        f.write_all(b"\n").unwrap();
    }
    drop(f);
    ok(&store(&db, &[&file]));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    for l in &lines[half..] {
        f.write_all(l).unwrap();
        f.write_all(b"\n").unwrap();
    }
    drop(f);
    let second = store(&db, &[&file]);
    ok(&second);
    (db, note(&second))
}

#[test]
fn lines_appended_to_a_file_are_stored_as_a_whole_read_stores_them() {
    let d = scratch("append");
    let files: Vec<PathBuf> = files_ending(&root().join("testdata/session-files"), ".jsonl")
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("/subagents/"))
        .collect();
    assert!(files.len() > 20, "{} session files", files.len());
    for f in files {
        let text = std::fs::read(&f).unwrap();
        let lines: Vec<&[u8]> = text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        if lines.len() < 2 {
            continue;
        }
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let clean_db = d.join("clean.db");
        let clean = d.join("clean").join("session.jsonl");
        std::fs::create_dir_all(clean.parent().unwrap()).unwrap();
        std::fs::copy(&f, &clean).unwrap();
        ok(&store(&clean_db, &[&clean]));
        let want = rows(&clean_db);
        let (db, (added, read)) = store_in_two(&d, &lines, lines.len() / 2);
        let got = rows(&db);
        assert!(
            got == want,
            "{}: stored in two runs, {} events; in one, {}",
            f.display(),
            got.len(),
            want.len()
        );
        // The second run stored the new lines' events only (it converted the first half
        // again, storing none of it).
        assert_eq!(read, added, "{}", f.display());
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// `copies` copies of the Claude captures, each with its own session and message ids, in
/// `files` files under `dir`.
fn generate(dir: &Path, copies: usize, files: usize) {
    let captures: Vec<String> = files_ending(&root().join("testdata/claude"), ".jsonl")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".events.jsonl"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let mut outs: Vec<std::io::BufWriter<std::fs::File>> = (0..files)
        .map(|k| {
            std::io::BufWriter::new(
                std::fs::File::create(dir.join(format!("gen-{k:02}.jsonl"))).unwrap(),
            )
        })
        .collect();
    for c in 0..copies {
        let tag = format!("c{c}-");
        for (k, text) in captures.iter().enumerate() {
            let t = text
                .replace("\"session_id\":\"", &format!("\"session_id\":\"{tag}"))
                .replace("\"uuid\":\"", &format!("\"uuid\":\"{tag}"))
                .replace("\"id\":\"", &format!("\"id\":\"{tag}"))
                .replace("\"tool_use_id\":\"", &format!("\"tool_use_id\":\"{tag}"));
            outs[(c + k) % files].write_all(t.as_bytes()).unwrap();
        }
    }
}

/// Everything a run leaves that one clean run would: the events and the files' records.
fn contents(db: &Path) -> (Vec<Row>, Vec<String>) {
    let c = Connection::open(db).unwrap();
    let mut st = c
        .prepare(
            "SELECT path || ' ' || size || ' ' || offset || ' ' || lines || ' ' || seq || ' ' \
             || head_hash || ' ' || closing FROM sources ORDER BY path",
        )
        .unwrap();
    let sources = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    (rows(db), sources)
}

#[test]
fn a_run_killed_at_any_point_then_run_again_ends_as_one_clean_run() {
    let d = scratch("kill");
    let input = d.join("in");
    std::fs::create_dir_all(&input).unwrap();
    generate(&input, 16, 6);
    let clean = d.join("clean.db");
    let t0 = std::time::Instant::now();
    ok(&store(&clean, &[&input]));
    let took = t0.elapsed();
    let want = contents(&clean);
    assert!(want.0.len() > 5_000, "{} events", want.0.len());
    // Whether some kill came after a batch was committed and before the last.
    let mut partial = false;
    // Kill points spread over the clean run's time (a seeded spread, the same every run).
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for round in 0..4 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let at = took.mul_f64(0.1 + 0.8 * (x % 1000) as f64 / 1000.0);
        let db = d.join(format!("killed-{round}.db"));
        let mut c = insights();
        c.arg("store").arg("--db").arg(&db).arg(&input);
        let mut child = c.stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(at);
        // SIGKILL: no handler runs, the transaction open is simply lost.
        child.kill().unwrap();
        child.wait().unwrap();
        if db.exists() {
            let n = Connection::open(&db)
                .and_then(|c| {
                    c.query_row("SELECT count(*) FROM events", [], |r| r.get::<_, i64>(0))
                })
                .unwrap_or(0) as usize;
            partial |= n > 0 && n < want.0.len();
        }
        ok(&store(&db, &[&input]));
        let got = contents(&db);
        assert!(
            got == want,
            "killed after {at:?} and run again: {} events, {} records; one clean run: {}, {}",
            got.0.len(),
            got.1.len(),
            want.0.len(),
            want.1.len()
        );
    }
    assert!(partial, "no kill fell between two commits");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn two_writers_at_once_store_what_one_does() {
    let d = scratch("writers");
    let input = d.join("in");
    std::fs::create_dir_all(&input).unwrap();
    generate(&input, 6, 4);
    let clean = d.join("clean.db");
    ok(&store(&clean, &[&input]));
    let want = rows(&clean);
    let db = d.join("shared.db");
    // Both read all of it, from a new database: one creates it, both write, the second
    // waits for the first's batches.
    let spawn = || {
        let mut c = insights();
        c.arg("store").arg("--db").arg(&db).arg(&input);
        c.stderr(Stdio::piped()).spawn().unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        ok(&child.wait_with_output().unwrap());
    }
    assert!(rows(&db) == want, "two writers differ from one");
    std::fs::remove_dir_all(&d).unwrap();
}

/// The bytes of a file, to compare before and after.
fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn a_file_that_is_not_an_insights_store_is_refused_and_left_as_it_is() {
    let d = scratch("refuse");
    let capture = root().join("testdata/claude/acceptedits-multi-write.jsonl");
    let refused = |db: &Path, why: &str| {
        let before = bytes(db);
        let out = store(db, &[&capture]);
        assert_eq!(out.status.code(), Some(2), "{}", db.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{err}");
        assert!(bytes(db) == before, "{} was changed", db.display());
        assert!(!Path::new(&format!("{}-wal", db.display())).exists());
    };
    // Not SQLite at all.
    let text = d.join("notes.db");
    std::fs::write(&text, "my notes\n").unwrap();
    refused(&text, "not an SQLite database");
    // SQLite, but someone else's.
    let other = d.join("other.db");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    refused(&other, "not an insights store");
    // Ours, of a newer schema.
    let newer = d.join("newer.db");
    ok(&store(&newer, &[&capture]));
    {
        let c = Connection::open(&newer).unwrap();
        c.execute_batch("UPDATE schema_version SET version = 99;")
            .unwrap();
        c.execute_batch("PRAGMA journal_mode = DELETE;").unwrap();
    }
    refused(&newer, "schema version 99 is newer");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_live_pipe_is_committed_as_it_goes() {
    let d = scratch("live");
    let db = d.join("live.db");
    let capture =
        std::fs::read(root().join("testdata/claude/acceptedits-multi-write.jsonl")).unwrap();
    let mut c = insights();
    c.arg("store").arg("--db").arg(&db).arg("-");
    let mut child = c
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let half = capture.len() / 2;
    let cut = half + capture[half..].iter().position(|&b| b == b'\n').unwrap() + 1;
    stdin.write_all(&capture[..cut]).unwrap();
    stdin.flush().unwrap();
    // The first half is committed while the pipe stays open.
    let mut seen = 0;
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        if db.exists() {
            if let Ok(c) =
                Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            {
                seen = c
                    .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
                    .unwrap_or(0);
                if seen > 0 {
                    break;
                }
            }
        }
    }
    assert!(seen > 0, "nothing committed while the pipe was open");
    stdin.write_all(&capture[cut..]).unwrap();
    drop(stdin);
    ok(&child.wait_with_output().unwrap());
    let all: i64 = Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .unwrap();
    assert!(all > seen, "{all} events in all, {seen} while open");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_sqlite3_shell_reads_the_views() {
    let Ok(v) = Command::new("sqlite3").arg("--version").output() else {
        eprintln!("sqlite3 is not installed: the readback with the sqlite3 shell is skipped");
        return;
    };
    assert!(v.status.success());
    let d = scratch("shell");
    let db = d.join("insights.db");
    ok(&store(
        &db,
        &[
            &root().join("testdata/claude"),
            &root().join("testdata/session-files"),
        ],
    ));
    let query = |sql: &str| {
        let out = Command::new("sqlite3")
            .arg("-header")
            .arg(&db)
            .arg(sql)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let usage = query("select * from usage");
    assert!(
        usage.starts_with(
            "day|session|model|agent|inputTokens|outputTokens|cacheReadTokens|\
             cacheCreationTokens|reasoningTokens|totalTokens|costUsd\n"
        ),
        "{usage}"
    );
    assert!(usage.lines().count() > 20, "{usage}");
    // The usage view's total agrees with the events it is made of, summed here.
    let c = Connection::open(&db).unwrap();
    let total: i64 = c
        .query_row("SELECT sum(totalTokens) FROM usage", [], |r| r.get(0))
        .unwrap();
    let shell_total: i64 = query("select sum(totalTokens) from usage")
        .lines()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(total, shell_total);
    for view in ["sessions", "turns", "tool_calls"] {
        let out = query(&format!("select count(*) from {view}"));
        let n: u64 = out.lines().nth(1).unwrap().parse().unwrap();
        assert!(n > 10, "{view}: {n} rows");
    }
    assert_eq!(query("select version from schema_version"), "version\n1\n");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_write_error_rolls_the_batch_back_and_is_named() {
    let d = scratch("full");
    let input = d.join("in");
    std::fs::create_dir_all(&input).unwrap();
    generate(&input, 4, 2);
    let clean = d.join("clean.db");
    ok(&store(&clean, &[&input]));
    // No file of the database may grow past 400 KiB (RLIMIT_FSIZE, its signal ignored so the
    // write fails with EFBIG): a full disk as SQLite sees one, an error of its writes.
    let db = d.join("full.db");
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 400; exec \"$0\" store --db \"$1\" \"$2\"")
        .arg(env!("CARGO_BIN_EXE_insights"))
        .arg(&db)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(the batch was rolled back)")
            && (err.contains("I/O error") || err.contains("disk is full")),
        "{err}"
    );
    // The database is whole, and a run with room ends as one clean run.
    let check: String = Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    ok(&store(&db, &[&input]));
    assert!(contents(&db) == contents(&clean));
    std::fs::remove_dir_all(&d).unwrap();
}
