//! `insights store`: every event once (again, a copy, a file that went on), a run killed and
//! run again ends as one clean run, two writers at once, files that are not ours refused and
//! left as they are, and the database read back with the real `sqlite3` shell.

use crate::util::{assert_same, difference, files_ending, insights, root};
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

/// Runs `insights store --db DB` on the standard places of the home `home`.
fn store_home(home: &Path, db: &Path) -> Output {
    insights()
        .env("HOME", home)
        .args(["store", "--db"])
        .arg(db)
        .output()
        .expect("run insights store")
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

/// A turn in OpenCode's database, as OpenCode writes one: a user message with its prompt, and
/// an assistant message with its step's parts, its ids made of `tag`, after time `at`.
fn add_opencode_turn(db: &Connection, session: &str, tag: &str, at: i64) {
    let user = format!("msg_{tag}u");
    let answer = format!("msg_{tag}a");
    let message = |id: &str, t: i64, data: serde_json::Value| {
        db.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data)
             VALUES (?1, ?2, ?3, ?3, ?4)",
            rusqlite::params![id, session, t, data.to_string()],
        )
        .unwrap();
    };
    let part = |id: &str, msg: &str, t: i64, data: serde_json::Value| {
        db.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
             VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
            rusqlite::params![id, msg, session, t, data.to_string()],
        )
        .unwrap();
    };
    message(
        &user,
        at,
        serde_json::json!({"role": "user", "time": {"created": at}}),
    );
    part(
        &format!("prt_{tag}1"),
        &user,
        at,
        serde_json::json!({"type": "text", "text": "And again?"}),
    );
    let tokens = serde_json::json!({"total": 120, "input": 100, "output": 20, "reasoning": 0,
                                    "cache": {"write": 0, "read": 0}});
    message(
        &answer,
        at + 10,
        serde_json::json!({"role": "assistant", "parentID": user, "modelID": "mock-model",
                           "providerID": "mock", "cost": 0, "tokens": tokens,
                           "path": {"cwd": "/home/dev/work", "root": "/"},
                           "time": {"created": at + 10, "completed": at + 40}}),
    );
    part(
        &format!("prt_{tag}2"),
        &answer,
        at + 11,
        serde_json::json!({"type": "step-start"}),
    );
    part(
        &format!("prt_{tag}3"),
        &answer,
        at + 12,
        serde_json::json!({"type": "text", "text": "Again."}),
    );
    part(
        &format!("prt_{tag}4"),
        &answer,
        at + 13,
        serde_json::json!({"type": "step-finish", "reason": "stop", "tokens": tokens, "cost": 0}),
    );
}

/// OpenCode's database is stored as `insights` reads it, while OpenCode has it open (WAL, rows
/// not yet copied into the database file) and without writing to it: a run again stores
/// nothing; rows added since are stored, and only they, also when they come before rows
/// stored already (a turn added to an earlier session): each event is known by its row.
#[test]
fn opencode_s_database_is_stored_by_its_rows() {
    let d = scratch("opencode-db");
    let agent = d.join("opencode.db");
    std::fs::copy(
        root().join(
            "testdata/session-files/opencode/failing-command-todo/.local/share/opencode/opencode.db",
        ),
        &agent,
    )
    .unwrap();
    // OpenCode's connection, open throughout, in its journal mode; nothing is checkpointed.
    let oc = Connection::open(&agent).unwrap();
    let mode: String = oc
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    oc.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    let first_session: String = oc
        .query_row("SELECT id FROM session", [], |r| r.get(0))
        .unwrap();
    let files = |p: &Path| {
        ["", "-wal"].map(|x| std::fs::read(format!("{}{x}", p.display())).unwrap_or_default())
    };
    let db = d.join("store.db");
    // The events a store of the database as it is now keeps, each once; their place in the
    // conversion (`seq`, `line`) is that of the read that stored them first.
    let events = |db: &Path| -> Vec<(String, String, serde_json::Value)> {
        rows(db)
            .into_iter()
            .map(|r| {
                let mut v: serde_json::Value = serde_json::from_str(&r.3).unwrap();
                let o = v.as_object_mut().unwrap();
                o.remove("seq");
                o.remove("line");
                (r.0, r.1, v)
            })
            .collect()
    };
    let same_as_a_fresh_store = |what: &str| {
        let fresh = d.join(format!("fresh-{}.db", what.replace(' ', "-")));
        ok(&store(&fresh, &[&agent]));
        assert_eq!(events(&db), events(&fresh), "{what}");
        let keys: std::collections::BTreeSet<_> =
            rows(&db).into_iter().map(|r| (r.0, r.1)).collect();
        assert_eq!(keys, converted_keys(&agent), "{what}");
    };
    let before = files(&agent);
    let first = store(&db, &[&agent]);
    ok(&first);
    let (added, read) = note(&first);
    assert!(added > 20 && added == read, "{added} of {read}");
    assert_eq!(files(&agent), before, "the agent's database was written to");
    let again = store(&db, &[&agent]);
    ok(&again);
    assert_eq!(note(&again), (0, 0));
    same_as_a_fresh_store("first");
    // A session created later, with one turn.
    let at = 1_796_600_000_000_i64;
    oc.execute(
        "INSERT INTO session SELECT 'ses_zz2', project_id, workspace_id, NULL, 'zz', directory,
           path, 'Second', version, share_url, summary_additions, summary_deletions,
           summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output,
           tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission, agent,
           model, ?1, ?1, time_compacting, time_archived FROM session WHERE id = ?2",
        rusqlite::params![at, first_session],
    )
    .unwrap();
    add_opencode_turn(&oc, "ses_zz2", "zz2", at + 100);
    let before = files(&agent);
    let second = store(&db, &[&agent]);
    ok(&second);
    let (added, read) = note(&second);
    assert!(added >= 6 && read > added, "{added} of {read}");
    assert_eq!(files(&agent), before, "the agent's database was written to");
    same_as_a_fresh_store("a session added");
    // A turn added to the first session: its lines come before the second session's.
    add_opencode_turn(&oc, &first_session, "zz1", at + 1000);
    let third = store(&db, &[&agent]);
    ok(&third);
    let (added_now, _) = note(&third);
    // The same turn's events as the second session's, less its session_init.
    assert_eq!(
        added_now,
        added - 1,
        "the new turn's events, and only those"
    );
    same_as_a_fresh_store("a turn added before stored rows");
    drop(oc);
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

/// Read back with the real `sqlite3` shell (when it is installed): the database is whole,
/// and holds `events` events, each once.
fn every_event_once_by_the_shell(db: &Path, events: usize) {
    let Ok(out) = Command::new("sqlite3")
        .arg(db)
        .arg(
            "PRAGMA integrity_check; SELECT count(*), count(DISTINCT session_id || char(0) || id) \
             FROM events;",
        )
        .output()
    else {
        eprintln!("sqlite3 is not installed: the readback with the sqlite3 shell is skipped");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text, format!("ok\n{events}|{events}\n"), "{}", db.display());
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
        if round % 2 == 0 {
            // SIGKILL: no handler runs, the transaction open is simply lost.
            child.kill().unwrap();
        } else {
            // SIGTERM: the run stops after a whole line and commits what it stored, the
            // file being read without its record (read again by the next run).
            let sent = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status()
                .unwrap();
            assert!(sent.success());
        }
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
        // A first store killed leaves its building file (src/store/fresh.rs); the next one
        // removes it.
        let building = building_files(&d);
        assert!(building.is_empty(), "{building:?}");
        let mode: String = Connection::open(&db)
            .unwrap()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let got = contents(&db);
        assert!(
            got == want,
            "killed after {at:?} and run again: {} events, {} records; one clean run: {}, {}",
            got.0.len(),
            got.1.len(),
            want.0.len(),
            want.1.len()
        );
        every_event_once_by_the_shell(&db, want.0.len());
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

/// Events committed in the store at `db` (0 while it cannot be read).
fn committed(db: &Path) -> i64 {
    if !db.exists() {
        return 0;
    }
    Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| c.query_row("SELECT count(*) FROM events", [], |r| r.get(0)))
        .unwrap_or(0)
}

/// Waits up to 5 s for events to be committed at `db`; how many there are.
fn wait_committed(db: &Path) -> i64 {
    for _ in 0..100 {
        let n = committed(db);
        if n > 0 {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    committed(db)
}

/// `child`'s exit status, waiting up to `secs`; killed and `None` after that.
fn exited(child: &mut std::process::Child, secs: u64) -> Option<std::process::ExitStatus> {
    for _ in 0..secs * 10 {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    None
}

/// `insights store --db DB -`, its standard input a pipe held here.
fn store_pipe(db: &Path) -> (std::process::Child, std::process::ChildStdin) {
    let mut c = insights();
    c.arg("store").arg("--db").arg(db).arg("-");
    let mut child = c
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

#[test]
fn a_live_pipe_is_committed_as_it_goes() {
    let d = scratch("live");
    let db = d.join("live.db");
    let capture =
        std::fs::read(root().join("testdata/claude/acceptedits-multi-write.jsonl")).unwrap();
    let (child, mut stdin) = store_pipe(&db);
    let half = capture.len() / 2;
    let cut = half + capture[half..].iter().position(|&b| b == b'\n').unwrap() + 1;
    stdin.write_all(&capture[..cut]).unwrap();
    stdin.flush().unwrap();
    // The first half is committed while the pipe stays open.
    let seen = wait_committed(&db);
    assert!(seen > 0, "nothing committed while the pipe was open");
    // An idle pipe holds no transaction: another writer stores meanwhile.
    let other = d.join("other.db-input.jsonl");
    std::fs::copy(root().join("testdata/claude/thinking-tool.jsonl"), &other).unwrap();
    let mut c = insights();
    c.arg("store").arg("--db").arg(&db).arg(&other);
    let mut writer = c.stderr(Stdio::piped()).spawn().unwrap();
    let done = exited(&mut writer, 30);
    assert!(
        done.is_some_and(|s| s.success()),
        "a second writer could not store while the pipe was idle: {done:?}"
    );
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
fn a_signal_ends_an_idle_live_pipe() {
    let d = scratch("live-signal");
    let db = d.join("live.db");
    let capture = std::fs::read(root().join("testdata/claude/thinking-tool.jsonl")).unwrap();
    let (mut child, mut stdin) = store_pipe(&db);
    stdin.write_all(&capture).unwrap();
    stdin.flush().unwrap();
    wait_committed(&db);
    assert!(
        committed(&db) > 0,
        "nothing committed while the pipe was open"
    );
    // The pipe stays open and idle: SIGTERM ends the run (128 + 15), what it stored kept.
    let sent = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(sent.success());
    let status = exited(&mut child, 5);
    drop(stdin);
    assert_eq!(status.and_then(|s| s.code()), Some(143), "{status:?}");
    assert!(committed(&db) > 0);
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
    assert_eq!(query("select version from schema_version"), "version\n6\n");
    std::fs::remove_dir_all(&d).unwrap();
}

/// The files in `dir` of a first store being built (src/store/fresh.rs).
fn building_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".building-"))
        .collect()
}

#[test]
fn a_write_error_rolls_the_batch_back_and_is_named() {
    let d = scratch("full");
    let input = d.join("in");
    std::fs::create_dir_all(&input).unwrap();
    generate(&input, 4, 2);
    let clean = d.join("clean.db");
    ok(&store(&clean, &[&input]));
    // No file of the database may grow past 480 blocks (240 KiB in dash's 512-byte blocks:
    // the layout fits, a batch does not; RLIMIT_FSIZE, its signal ignored so the
    // write fails with EFBIG): a full disk as SQLite sees one, an error of its writes.
    let full = |db: &Path| {
        Command::new("sh")
            .arg("-c")
            .arg("trap '' XFSZ; ulimit -f 480; exec \"$0\" store --db \"$1\" \"$2\"")
            .arg(env!("CARGO_BIN_EXE_insights"))
            .arg(db)
            .arg(&input)
            .output()
            .unwrap()
    };
    let disk = |err: &str| err.contains("I/O error") || err.contains("disk is full");
    // A first store (built beside the database, src/store/fresh.rs): nothing is made, and
    // its building file is gone.
    let db = d.join("new.db");
    let out = full(&db);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(the new database was not made)") && disk(&err),
        "{err}"
    );
    assert!(!db.exists());
    let left = building_files(&d);
    assert!(left.is_empty(), "{left:?}");
    // A database that exists (made by an empty pipe): the batch is rolled back.
    let db = d.join("full.db");
    let made = insights()
        .arg("store")
        .arg("--db")
        .arg(&db)
        .arg("-")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    ok(&made);
    let out = full(&db);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(the batch was rolled back)") && disk(&err),
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

/// `insights ARGS` run in the repository: (stdout, exit status).
fn answer(args: &[&str]) -> (String, Option<i32>) {
    let out = insights().args(args).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )
}

/// The recordings of `testdata/`: every stream capture (not its golden) and every
/// conversation's folder of session files.
fn recordings() -> Vec<PathBuf> {
    let t = root().join("testdata");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&t)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.ends_with("session-files"))
        .flat_map(|d| std::fs::read_dir(d).unwrap().flatten().map(|e| e.path()))
        .filter(|p| {
            let s = p.to_string_lossy();
            s.ends_with(".jsonl") && !s.ends_with(".events.jsonl")
        })
        .collect();
    for agent in std::fs::read_dir(t.join("session-files"))
        .unwrap()
        .flatten()
    {
        cases.extend(
            std::fs::read_dir(agent.path())
                .unwrap()
                .flatten()
                .map(|e| e.path()),
        );
    }
    cases.sort();
    cases
}

/// The comparisons `usage --db` and `sessions --db` must pass against the files under `dir`.
fn usage_answers(dir: &Path, db: &Path) -> Vec<String> {
    let dir = dir.to_str().unwrap();
    let db = format!("--db={}", db.display());
    let mut failures = Vec::new();
    let mut same = |args: &[&str]| {
        let files = answer(args);
        let mut with_db = args.to_vec();
        with_db.push(&db);
        let stored = answer(&with_db);
        if files != stored {
            failures.push(
                difference(&args.join(" "), &files.0, &stored.0).unwrap_or_else(|| {
                    format!("{}: exit {:?} vs {:?}", args.join(" "), files.1, stored.1)
                }),
            );
        }
    };
    for by in [
        "day,session,model,agent,project",
        "week,model",
        "month,agent",
    ] {
        same(&["usage", "--json", "--tz", "UTC", "--by", by, dir]);
    }
    same(&["usage", "--tz", "UTC", "--by", "session,model", dir]);
    same(&[
        "usage",
        "--json",
        "--agent",
        "codex",
        "--since",
        "2026-01-01",
        dir,
    ]);
    same(&["sessions", "--json", "--tz", "UTC", dir]);
    same(&["sessions", "--tz", "UTC", dir]);
    failures
}

#[test]
fn usage_and_sessions_from_the_store_are_those_of_the_files() {
    let d = scratch("usage-db");
    let testdata = root().join("testdata");
    let db = d.join("all.db");
    // Every recording of testdata/ (some lines of its malformed/ ones cannot be read: 1).
    let out = store(&db, &[&testdata]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let failures = usage_answers(&testdata, &db);
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
    // A re-run and a copy (another path) change nothing of what the files under the first
    // path give; the copy answers as its own files do.
    let files = root().join("testdata/session-files");
    let copy = d.join("copy");
    copy_dir(&files, &copy);
    ok(&store(&db, &[&files]));
    ok(&store(&db, &[&copy]));
    let mut failures = usage_answers(&files, &db);
    failures.extend(usage_answers(&copy, &db));
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
    // A run killed (SIGKILL) while it stores, then run again.
    let killed = d.join("killed.db");
    let mut c = insights();
    c.arg("store").arg("--db").arg(&killed).arg(&files);
    let mut child = c.stderr(Stdio::null()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    ok(&store(&killed, &[&files]));
    let failures = usage_answers(&files, &killed);
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
    std::fs::remove_dir_all(&d).unwrap();
}

/// The files of a recording as `store` converts them, each a conversation: a file, or a Claude
/// Code session file with its subagents' files (`<session>/subagents/`), or a Qwen Code one
/// with its subagents' (`chats/<session>.jsonl`, `subagents/<session>/`).
fn conversations(case: &Path) -> Vec<Vec<PathBuf>> {
    if !case.is_dir() {
        return vec![vec![case.to_path_buf()]];
    }
    let files = files_ending(case, ".jsonl");
    // OpenCode's database, read as its own conversation.
    let databases = files_ending(case, "/opencode.db")
        .into_iter()
        .map(|d| vec![d]);
    files
        .iter()
        .filter(|f| !f.to_string_lossy().contains("/subagents/"))
        .map(|f| {
            let mut unit = vec![f.clone()];
            unit.extend(files_ending(
                &f.with_extension("").join("subagents"),
                ".jsonl",
            ));
            let chats = f.parent().filter(|p| p.ends_with("chats"));
            if let (Some(chats), Some(stem)) = (chats, f.file_stem()) {
                let project = chats.parent().unwrap();
                unit.extend(files_ending(
                    &project.join("subagents").join(stem),
                    ".jsonl",
                ));
            }
            unit
        })
        .chain(databases)
        .collect()
}

/// A top-level string member of an event line, read without parsing what nests below (some
/// recordings nest deeper than serde_json reads): the header members come first.
fn member_of(line: &str, name: &str) -> String {
    let key = format!("\"{name}\":\"");
    line.find(&key)
        .and_then(|i| {
            let rest = &line[i + key.len()..];
            rest.find('"').map(|j| rest[..j].to_owned())
        })
        .unwrap_or_default()
}

fn session_of(line: &str) -> String {
    member_of(line, "sessionId")
}

fn id_of(line: &str) -> String {
    member_of(line, "id")
}

#[test]
fn replay_and_reduce_of_a_stored_session_are_those_of_its_events() {
    let d = scratch("replay-db");
    let cases = recordings();
    assert!(cases.len() > 300, "{} recordings", cases.len());
    // Two at a time: the cases are many, and each runs a few commands.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    let sessions = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..2 {
            let (d, cases, next, failures, sessions) = (&d, &cases, &next, &failures, &sessions);
            s.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let db = d.join(format!("w{w}.db"));
                for ext in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
                }
                let _ = store(&db, &[case]);
                // What `store` converts: each file on its own (its events numbered from 1), a
                // Claude Code session file with its subagents' files.
                let mut text = String::new();
                for unit in conversations(case) {
                    let conv = insights()
                        .arg("--no-timestamp")
                        .args(&unit)
                        .output()
                        .unwrap();
                    text.push_str(&String::from_utf8_lossy(&conv.stdout));
                }
                let keyed: Vec<(String, String, &str)> =
                    text.lines().map(|l| (session_of(l), id_of(l), l)).collect();
                let ids: std::collections::BTreeSet<&str> = keyed
                    .iter()
                    .map(|k| k.0.as_str())
                    .filter(|s| !s.is_empty())
                    .collect();
                for id in ids {
                    sessions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    // The session's events, each once (the first of an id, as stored; an event
                    // without an id is keyed by its line's content).
                    let mut seen = std::collections::HashSet::new();
                    let mine: String = keyed
                        .iter()
                        .filter(|k| k.0 == id && (k.1.is_empty() || seen.insert(k.1.clone())))
                        .map(|k| format!("{}\n", k.2))
                        .collect();
                    let file = d.join(format!("w{w}.jsonl"));
                    std::fs::write(&file, mine).unwrap();
                    let file = file.to_str().unwrap();
                    let dbarg = format!("--db={}", db.display());
                    for cmd in [
                        &["replay", "--format", "markdown", "--width", "80"][..],
                        &["reduce"][..],
                    ] {
                        let mut a = cmd.to_vec();
                        a.push(file);
                        let mut b = cmd.to_vec();
                        b.extend(["--session", id, &dbarg]);
                        let (x, y) = (answer(&a), answer(&b));
                        if x != y {
                            let why = difference(&cmd.join(" "), &x.0, &y.0)
                                .unwrap_or_else(|| format!("exit {:?} vs {:?}", x.1, y.1));
                            failures
                                .lock()
                                .unwrap()
                                .push(format!("{} {id}: {why}", case.display()));
                        }
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(sessions.into_inner() > 300, "too few sessions compared");
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn replay_follows_a_live_pipe_into_the_store() {
    let d = scratch("follow");
    let db = d.join("live.db");
    let capture = root().join("testdata/claude/acceptedits-multi-write.jsonl");
    let want = answer(&["replay", "--format", "markdown", capture.to_str().unwrap()]).0;
    let conv = insights().arg(&capture).output().unwrap();
    let first = String::from_utf8_lossy(&conv.stdout);
    let first: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let session = first["sessionId"].as_str().unwrap().to_owned();
    // The follower starts first: the store does not exist yet.
    let shown = d.join("shown.md");
    let mut follower = insights()
        .args([
            "replay",
            "--format",
            "markdown",
            "--follow",
            "--session",
            &session,
        ])
        .arg(format!("--db={}", db.display()))
        .stdout(std::fs::File::create(&shown).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The writer: `insights store -`, fed a line at a time.
    let mut writer = insights()
        .arg("store")
        .arg("--db")
        .arg(&db)
        .arg("-")
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = writer.stdin.take().unwrap();
    let text = std::fs::read_to_string(&capture).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let half = lines.len() / 2;
    for l in &lines[..half] {
        writeln!(stdin, "{l}").unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // While the pipe is open, the follower shows what was stored so far.
    let mut partial = String::new();
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        partial = std::fs::read_to_string(&shown).unwrap_or_default();
        if !partial.is_empty() {
            break;
        }
    }
    assert!(!partial.is_empty(), "nothing shown while the pipe was open");
    for l in &lines[half..] {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    ok(&writer.wait_with_output().unwrap());
    // It ends showing what replay shows of the whole capture (the end of the turn is in the
    // capture itself: nothing waits for the input's end).
    let mut got = String::new();
    for _ in 0..100 {
        got = std::fs::read_to_string(&shown).unwrap_or_default();
        if got == want {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    follower.kill().unwrap();
    follower.wait().unwrap();
    assert_same("replay --follow --db", &want, &got);
    std::fs::remove_dir_all(&d).unwrap();
}

/// The agents only `usage` reads (Amp's threads, pi's and Kimi's sessions…): `store` keeps
/// their usage, not events, so `usage --db` and `sessions --db` answer as the files do; and
/// from the standard places of a home too.
#[test]
fn usage_only_agents_are_stored_for_usage() {
    let d = scratch("usage-only");
    let samples = root().join("tests/usage-samples");
    let db = d.join("samples.db");
    ok(&store(&db, &[&samples]));
    let failures = usage_answers(&samples, &db);
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
    let events: i64 = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM events WHERE event != 'raw'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    // (A `.jsonl` file given in a folder is converted, its lines `raw` when no provider
    // knows them: Droid's session lines.)
    assert_eq!(
        events, 0,
        "no events are made of files insights does not convert"
    );
    // A home's standard places: the same, and a second run reads nothing again.
    let home = d.join("home");
    copy_dir(&samples.join("pi"), &home);
    copy_dir(
        &root().join("testdata/session-files/claude/subagent-write"),
        &home,
    );
    // Kilo's, Goose's and Hermes' databases in their places: SQLite files, but not
    // OpenCode's (which `store` converts).
    for (agent, sql) in [
        ("kilo", ".local/share/kilo/kilo.sql"),
        ("goose", ".local/share/goose/sessions/sessions.sql"),
        ("hermes", ".hermes/state.sql"),
    ] {
        let to = home.join(sql).with_extension("db");
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let text = std::fs::read_to_string(samples.join(agent).join(sql)).unwrap();
        Connection::open(&to).unwrap().execute_batch(&text).unwrap();
    }
    // Kilo's in WAL mode, as a running agent keeps it: its new rows may be in the log only.
    let kilo = home.join(".local/share/kilo/kilo.db");
    Connection::open(&kilo)
        .unwrap()
        .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    let db = d.join("home.db");
    let store = || {
        let out = store_home(&home, &db);
        ok(&out);
        out
    };
    let run = || note(&store());
    let first = run();
    assert_eq!(run(), (0, 0), "after {first:?}");
    // A row written to the log only (the agent's connection open, nothing checkpointed):
    // the database counts as changed, and is read again.
    let agent = Connection::open(&kilo).unwrap();
    agent
        .execute_batch(
            "PRAGMA wal_autocheckpoint=0;
             INSERT INTO message VALUES ('row-9', 'session-c', '{\"id\":\"msg-9\",\"role\":\"assistant\",\"providerID\":\"anthropic\",\"modelID\":\"claude-sonnet-4-20250514\",\"time\":{\"created\":1767398400000},\"tokens\":{\"input\":7,\"output\":3,\"cache\":{\"read\":0,\"write\":0}}}');",
        )
        .unwrap();
    let err = String::from_utf8_lossy(&store().stderr).into_owned();
    assert!(err.contains("(1 files read,"), "{err}");
    let answer = |db: Option<&Path>| {
        let mut c = insights();
        c.env("HOME", &home)
            .args(["usage", "--json", "--tz", "UTC", "--by", "day,agent"]);
        if let Some(db) = db {
            c.arg("--db").arg(db);
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    let files = answer(None);
    for agent in ["pi", "kilo", "goose", "hermes"] {
        assert!(files.contains(&format!("\"{agent}\"")), "{agent}: {files}");
    }
    assert_eq!(files, answer(Some(&db)));
    assert!(
        files.contains("2026-01-03"),
        "the row in the log counted: {files}"
    );
    drop(agent);
    std::fs::remove_dir_all(&d).unwrap();
}

/// `usage --db` given no path reads the merged facts `store` keeps (`usage_merged`): the
/// same answers as the files, and the same again without the row (merged from `usage_files`
/// as it is read); a file that grew deletes the row in the store's transaction, and the store
/// makes it again.
#[test]
fn the_merged_usage_facts_answer_as_the_files_do() {
    let d = scratch("usage-merged");
    let home = d.join("home");
    for case in [
        "claude/subagent-write",
        "codex-exec/multi-patch",
        "codex-exec/rate-limit-429",
        "gemini/later-turn-500",
    ] {
        copy_dir(&root().join("testdata/session-files").join(case), &home);
    }
    let db = d.join("home.db");
    let stored = || ok(&store_home(&home, &db));
    let answers = |db: Option<&Path>| {
        let mut all = Vec::new();
        for args in [
            &[
                "usage",
                "--json",
                "--tz",
                "UTC",
                "--by",
                "day,session,model,agent,project",
            ][..],
            &[
                "usage",
                "--json",
                "--tz",
                "UTC",
                "--by",
                "month,agent",
                "--breakdown",
            ],
            &["sessions", "--json", "--tz", "UTC"],
        ] {
            let mut c = insights();
            c.env("HOME", &home).args(args);
            if let Some(db) = db {
                c.arg(format!("--db={}", db.display()));
            }
            let out = c.output().unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            all.push(String::from_utf8(out.stdout).unwrap());
        }
        all
    };
    let merged_rows = || -> i64 {
        Connection::open(&db)
            .unwrap()
            .query_row("SELECT count(*) FROM usage_merged", [], |r| r.get(0))
            .unwrap()
    };
    stored();
    assert_eq!(merged_rows(), 1);
    let files = answers(None);
    assert!(
        files[0].contains("\"codex\"") && files[0].contains("\"claude\""),
        "{}",
        files[0]
    );
    assert_eq!(answers(Some(&db)), files);
    Connection::open(&db)
        .unwrap()
        .execute("DELETE FROM usage_merged", [])
        .unwrap();
    assert_eq!(answers(Some(&db)), files, "merged from usage_files");
    // A Claude session file grows by a response: the trigger deletes the row, the store
    // makes it again, and both count the new response.
    let session = std::fs::read_dir(home.join(".claude/projects"))
        .unwrap()
        .flat_map(|p| std::fs::read_dir(p.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(&session).unwrap();
    let last = text
        .lines()
        .rev()
        .find(|l| l.contains("\"usage\"") && l.contains("\"assistant\""))
        .unwrap();
    let again = last
        .replacen("\"id\":\"msg_", "\"id\":\"msg_grown", 1)
        .replacen("\"uuid\":\"", "\"uuid\":\"grown-", 1);
    std::fs::write(&session, format!("{text}{again}\n")).unwrap();
    stored();
    assert_eq!(merged_rows(), 1);
    let grown = answers(None);
    assert_ne!(grown, files, "the new response counts");
    assert_eq!(answers(Some(&db)), grown);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A store whose usage facts an older insights read (SQLite's `user_version` below this
/// insights' `FACTS`) has every file read again by the next `store`: the events are not
/// stored twice, and `usage --db` answers as `usage` on the files. One a newer insights
/// read is left as it is.
#[test]
fn usage_facts_an_older_insights_read_are_read_again() {
    let d = scratch("facts-version");
    let home = d.join("home");
    for case in ["claude/subagent-write", "codex-exec/multi-patch"] {
        copy_dir(&root().join("testdata/session-files").join(case), &home);
    }
    let db = d.join("home.db");
    let stored = || {
        let out = store_home(&home, &db);
        ok(&out);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        // "… (N files read, M unchanged)": N.
        err.lines()
            .find(|l| l.contains("note: stored "))
            .and_then(|l| l.rsplit_once('('))
            .and_then(|(_, s)| s.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no files read in the note: {err}"))
    };
    let version = || -> i64 {
        Connection::open(&db)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };
    let usage = |db: Option<&Path>| {
        let mut c = insights();
        c.env("HOME", &home).args([
            "usage",
            "--json",
            "--tz",
            "UTC",
            "--by",
            "day,session,model",
        ]);
        if let Some(db) = db {
            c.arg(format!("--db={}", db.display()));
        }
        let out = c.output().unwrap();
        ok(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let files = stored();
    assert!(files > 0);
    let current = version();
    assert!(current >= 1, "user_version {current}");
    let events = rows(&db);
    assert_eq!(stored(), 0, "nothing changed");
    // As an older insights left it: its facts are not this one's, and `usage --db` says so.
    let older = |db: &Path| {
        let out = insights()
            .env("HOME", &home)
            .args(["usage", "--json", "--tz", "UTC"])
            .arg(format!("--db={}", db.display()))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).contains("read by an older insights")
    };
    assert!(!older(&db));
    let c = Connection::open(&db).unwrap();
    c.execute_batch("PRAGMA user_version = 0; DELETE FROM usage_files;")
        .unwrap();
    drop(c);
    assert!(older(&db));
    assert_eq!(stored(), files, "every file read again");
    assert!(!older(&db));
    assert_eq!(version(), current);
    assert_eq!(rows(&db), events, "no event stored twice");
    assert_eq!(usage(Some(&db)), usage(None));
    // A newer insights' facts are left.
    Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", current + 1)
        .unwrap();
    assert_eq!(stored(), 0);
    assert_eq!(version(), current + 1);
    std::fs::remove_dir_all(&d).unwrap();
}

/// The conversations of `testdata/` recorded twice: a stream capture (`<agent>/<name>.jsonl`)
/// and the session files the CLI wrote meanwhile (`session-files/<agent>/<name>/`, a home).
fn streams_and_their_session_files() -> Vec<(PathBuf, PathBuf)> {
    let t = root().join("testdata");
    let mut pairs = Vec::new();
    for agent in std::fs::read_dir(t.join("session-files"))
        .unwrap()
        .flatten()
    {
        for home in std::fs::read_dir(agent.path()).unwrap().flatten() {
            let stream = t
                .join(agent.file_name())
                .join(home.file_name())
                .with_extension("jsonl");
            if stream.is_file() {
                pairs.push((stream, home.path()));
            }
        }
    }
    pairs.sort();
    pairs
}

/// Stores the standard places of `home` (OpenCode's database under its `.local/share` too).
fn store_home_all(home: &Path, db: &Path) -> Output {
    insights()
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .args(["store", "--db"])
        .arg(db)
        .output()
        .expect("run insights store")
}

/// The turns stored of each session (the `turns` view's, after a start), 0 for a session
/// without.
fn turns_by_session(db: &Path) -> std::collections::BTreeMap<String, i64> {
    let c = Connection::open(db).unwrap();
    let mut st = c
        .prepare(
            "SELECT s.session_id,
                    (SELECT count(*) FROM turns t WHERE t.session_id = s.session_id AND t.turn > 0)
             FROM session_ids s WHERE s.session_id <> ''
               AND EXISTS (SELECT 1 FROM events e WHERE e.sid = s.sid)",
        )
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The number of turns a recording's facts (`*.facts.json`, written from the wire) list.
fn facts_turns(facts: &Path) -> Option<usize> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(facts).ok()?).ok()?;
    v["turns"].as_array().map(Vec::len)
}

/// A conversation stored from its stream and from its session files, in either order, is
/// stored once: each turn from the recording stored first, the other adding only the turns
/// and sessions it alone has (nothing, where both tell the same turns). Checked on every
/// such pair of `testdata/`, with the stream stored as a capture and as the InsightsEvents of
/// a pipe; and against the facts written from the wire, where both recordings' facts give
/// the same number of turns.
#[test]
fn a_stream_and_its_session_file_are_stored_once() {
    let d = scratch("stream-and-file");
    let pairs = streams_and_their_session_files();
    assert!(pairs.len() > 60, "{} pairs", pairs.len());
    let (mut failures, mut nothing_added) = (Vec::new(), 0);
    for (k, (stream, home)) in pairs.iter().enumerate() {
        let db = |name: &str| d.join(format!("{k}-{name}.db"));
        let events = d.join(format!("{k}.events.jsonl"));
        let conv = insights()
            .arg("--no-timestamp")
            .arg(stream)
            .output()
            .unwrap();
        std::fs::write(&events, &conv.stdout).unwrap();
        let stream_alone = db("s");
        let _ = store(&stream_alone, &[stream]);
        let file_alone = db("f");
        ok(&store_home_all(home, &file_alone));
        let (s_turns, f_turns) = (
            turns_by_session(&stream_alone),
            turns_by_session(&file_alone),
        );
        let mut both_turns = s_turns.clone();
        for (s, n) in &f_turns {
            let t = both_turns.entry(s.clone()).or_default();
            *t = (*t).max(*n);
        }
        // Whether `b` tells nothing `a` does not: its sessions and turns are among a's.
        let within = |a: &std::collections::BTreeMap<String, i64>,
                      b: &std::collections::BTreeMap<String, i64>| {
            b.iter().all(|(s, n)| a.get(s).is_some_and(|m| m >= n))
        };
        let facts = [
            stream.with_extension("facts.json"),
            files_ending(home, ".facts.json")
                .into_iter()
                .next()
                .unwrap_or_default(),
        ];
        let wire_turns = match facts.map(|f| facts_turns(&f)) {
            [Some(a), Some(b)] if a == b && a > 0 => Some(a as i64),
            _ => None,
        };
        for (order, stream_as_events) in [("sf", false), ("fs", false), ("ef", true), ("fe", true)]
        {
            let both = db(order);
            let stream_store = || {
                if stream_as_events {
                    store(&both, &[&events])
                } else {
                    store(&both, &[stream])
                }
            };
            let (second, first_turns, second_turns) = if order.starts_with('f') {
                ok(&store_home_all(home, &both));
                (stream_store(), &f_turns, &s_turns)
            } else {
                stream_store();
                (store_home_all(home, &both), &s_turns, &f_turns)
            };
            let (added, _) = note(&second);
            let what = format!("{} ({order})", home.display());
            let turns = turns_by_session(&both);
            if turns != both_turns {
                failures.push(format!("{what}: turns {turns:?}, want {both_turns:?}"));
            }
            if within(first_turns, second_turns) {
                if added != 0 {
                    failures.push(format!("{what}: the second recording added {added} events"));
                } else {
                    nothing_added += 1;
                }
            }
            if let Some(n) = wire_turns {
                let stored: i64 = turns.values().sum();
                if stored != n {
                    failures.push(format!("{what}: {stored} turns, the wire says {n}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    assert!(
        nothing_added > 250,
        "only {nothing_added} stores added nothing"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A session resumed in a second stream (`claude -p --resume`, `codex exec resume`, a second
/// prompt over a new connection): each pair of `testdata/` whose stream has two turns or more
/// is cut before its second turn into two recordings, stored one after the other, and the
/// session files before or after them. The second stream's turns follow the first's: the
/// files add nothing after both, nor both after the files; and a copy of the first stream
/// stored again tells no turn (the files then still add their second turn).
#[test]
fn a_session_resumed_in_a_second_stream_is_stored_once_with_its_files() {
    let d = scratch("resumed");
    let mut checked = 0;
    let mut failures = Vec::new();
    for (k, (stream, home)) in streams_and_their_session_files().iter().enumerate() {
        let out = insights()
            .arg("--no-timestamp")
            .arg(stream)
            .output()
            .unwrap();
        // The line of the second turn's start, of a stream of one session.
        let starts: Vec<(String, u64)> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains("\"event\":\"turn_start\""))
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["sessionId"].as_str().unwrap_or("").to_owned(),
                    v["line"].as_u64().unwrap(),
                )
            })
            .collect();
        if starts.len() < 2 || starts.iter().any(|s| s.0 != starts[0].0) {
            continue;
        }
        let text = std::fs::read_to_string(stream).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let cut = (starts[1].1 - 1) as usize;
        let part = |n: &str, ls: &[&str]| {
            let p = d.join(format!("{k}-{n}.jsonl"));
            std::fs::write(&p, ls.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
            p
        };
        let (first, second) = (part("1", &lines[..cut]), part("2", &lines[cut..]));
        let copy = part("copy", &lines[..cut]);
        let file_turns = {
            let db = d.join(format!("{k}-f.db"));
            ok(&store_home_all(home, &db));
            turns_by_session(&db)
        };
        let session = &starts[0].0;
        let want = file_turns
            .get(session)
            .copied()
            .unwrap_or(0)
            .max(starts.len() as i64);
        let what = home.display().to_string();
        // The streams, then the files.
        let db = d.join(format!("{k}-sf.db"));
        let _ = store(&db, &[&first]);
        let _ = store(&db, &[&second]);
        let events_of = |db: &Path| -> i64 {
            Connection::open(db)
                .unwrap()
                .query_row(
                    "SELECT count(*) FROM events WHERE session_id = ?1",
                    [session],
                    |r| r.get(0),
                )
                .unwrap()
        };
        let before = events_of(&db);
        ok(&store_home_all(home, &db));
        // What the files added to the session (a session of their own, such as Gemini CLI's
        // start-up chat, is theirs alone).
        let added = events_of(&db) - before;
        let turns = turns_by_session(&db).get(session).copied().unwrap_or(0);
        if turns != want || (file_turns.get(session) <= Some(&(starts.len() as i64)) && added != 0)
        {
            failures.push(format!(
                "{what}: streams then files: {turns} turns (want {want}), the files added {added}"
            ));
        }
        // The files, then the streams.
        let db = d.join(format!("{k}-fs.db"));
        ok(&store_home_all(home, &db));
        let added: u64 = [&first, &second]
            .iter()
            .map(|p| note(&store(&db, &[p])).0)
            .sum();
        let turns = turns_by_session(&db).get(session).copied().unwrap_or(0);
        if turns != want {
            failures.push(format!("{what}: files then streams: {turns} turns (want {want}), the streams added {added}"));
        }
        // The first stream and a copy of it, then the files: the copy tells nothing.
        let db = d.join(format!("{k}-copy.db"));
        let _ = store(&db, &[&first]);
        let _ = store(&db, &[&copy]);
        ok(&store_home_all(home, &db));
        let turns = turns_by_session(&db).get(session).copied().unwrap_or(0);
        let want_copy = file_turns.get(session).copied().unwrap_or(0).max(1);
        if turns != want_copy {
            failures.push(format!(
                "{what}: a stream, its copy, then files: {turns} turns (want {want_copy})"
            ));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    assert!(checked >= 15, "only {checked} resumed conversations");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A store of version 5 (no tellers) is brought to version 6: its files are read again,
/// adding no event, so that their turns are noted; the conversation's stream stored then adds
/// nothing.
#[test]
fn a_store_of_version_5_notes_the_turns_of_its_files() {
    let d = scratch("v5");
    let home = root().join("testdata/session-files/codex-exec/multi-patch");
    let stream = root().join("testdata/codex-exec/multi-patch.jsonl");
    let db = d.join("v5.db");
    ok(&store_home_all(&home, &db));
    {
        let c = Connection::open(&db).unwrap();
        c.execute_batch("DROP TABLE tellers; UPDATE schema_version SET version = 5;")
            .unwrap();
    }
    let again = store_home_all(&home, &db);
    ok(&again);
    assert_eq!(note(&again).0, 0, "the files' events are stored already");
    let c = Connection::open(&db).unwrap();
    let version: i64 = c
        .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 6);
    let told: i64 = c
        .query_row(
            "SELECT count(*) FROM tellers WHERE told AND form = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(told >= 2, "the session's start and its turn: {told}");
    let out = store(&db, &[&stream]);
    ok(&out);
    assert_eq!(note(&out).0, 0, "the stream adds nothing");
    std::fs::remove_dir_all(&d).unwrap();
}
