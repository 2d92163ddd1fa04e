//! Checkpoints on a thread of their own while [`Store::store_all`](super::ingest::Store)
//! writes.
//!
//! In WAL mode every commit appends the pages it changed to the write-ahead log; a checkpoint
//! copies them into the database file and syncs both files. SQLite's automatic checkpoint runs
//! on the committing connection, so the writer waited for each `fsync`: on a first store that
//! was a third of its time (docs/PERFORMANCE.md). Here a second connection checkpoints
//! (`PASSIVE`: it never blocks the writer, nor waits for it) whenever the log has grown by
//! [`START`] since its last one, while the writer goes on.
//!
//! A log is started again from its beginning (and so stays small on disk) only by a writer
//! that finds all of it checkpointed when its next transaction begins. Beside a writer that
//! commits all the time, the thread never gets there: the writer commits more while it
//! checkpoints. So the writer finishes the work itself, between two transactions, once the log
//! passed [`WAL_BYTES`](super::schema::WAL_BYTES) ([`LARGE`] times that while its batches are
//! large): it waits for the thread's checkpoint to end, checkpoints what is left (about its
//! last commit's frames), and its next transaction restarts the log. Small commits (a live
//! pipe's) are left to the writer, as SQLite's own checkpoint would.

use rusqlite::hooks::Wal;
use rusqlite::{Connection, OpenFlags};
use std::cell::Cell;
use std::os::raw::c_int;
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread::{Scope, ScopedJoinHandle};

/// The log's growth, in bytes, that starts the thread's next checkpoint.
const START: i64 = 16 * 1024 * 1024;

/// How many times [`WAL_BYTES`](super::schema::WAL_BYTES) the log may grow before the writer
/// finishes a checkpoint while its commits are large (a first store's batches): 256 MiB. Each
/// restart makes the writer wait for the thread's checkpoint and sync its last batch itself,
/// but a log that is not restarted is slower still: at 1 GiB a first store of 574,000 events
/// took 9.2 s instead of 7.7 s (new disk blocks for each frame, and each checkpoint walks the
/// whole log's index).
const LARGE: i64 = 4;

thread_local! {
    /// The frames in the log after this thread's last commit (SQLite's WAL hook, called by
    /// the committing thread); -1 when a commit wrote none.
    static FRAMES: Cell<c_int> = const { Cell::new(-1) };
}

/// The WAL hook: notes the frames in the log.
fn note_frames(_: &Wal, frames: c_int) -> rusqlite::Result<()> {
    FRAMES.with(|f| f.set(frames));
    Ok(())
}

/// Held while a checkpoint runs, by the thread or by the writer: the writer waits for the
/// thread's to end before it checkpoints the rest, and the thread begins none meanwhile.
type Running = Arc<Mutex<()>>;

/// Holds `running` (a thread that panicked while holding it left nothing to undo).
fn hold(running: &Mutex<()>) -> MutexGuard<'_, ()> {
    running.lock().unwrap_or_else(|e| e.into_inner())
}

/// The writer's side: told of each commit ([`Checkpoints::committed`]).
pub struct Checkpoints<'scope> {
    tx: Option<mpsc::Sender<i64>>,
    running: Running,
    /// The frames in the log after the writer's last commit.
    frames: i64,
    /// [`START`] and [`WAL_BYTES`](super::schema::WAL_BYTES), in frames.
    start: i64,
    restart: i64,
    thread: Option<ScopedJoinHandle<'scope, ()>>,
}

impl<'scope> Checkpoints<'scope> {
    /// Starts the thread for the database at `path`, written by `writer`, whose automatic
    /// checkpoints stop until [`Checkpoints::end`]. Without a second connection (it could not
    /// be opened, or the thread not started), the writer checkpoints as before.
    pub fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        path: &Path,
        writer: &Connection,
    ) -> Checkpoints<'scope> {
        Checkpoints::sized(scope, path, writer, START, super::schema::WAL_BYTES)
    }

    /// No thread: for a database written without a log (src/store/fresh.rs).
    pub fn none(scope: &'scope Scope<'scope, '_>) -> Checkpoints<'scope> {
        let _ = scope;
        Checkpoints {
            tx: None,
            running: Running::default(),
            frames: 0,
            start: 1,
            restart: 1,
            thread: None,
        }
    }

    /// [`Checkpoints::start`], with [`START`] and the log's size restarted given (bytes).
    fn sized<'env>(
        scope: &'scope Scope<'scope, 'env>,
        path: &Path,
        writer: &Connection,
        start: i64,
        restart: i64,
    ) -> Checkpoints<'scope> {
        let running = Running::default();
        let page = page_size(writer);
        let mut ck = Checkpoints {
            tx: None,
            running: Arc::clone(&running),
            frames: 0,
            start: (start / page).max(1),
            restart: (restart / page).max(1),
            thread: None,
        };
        let Ok(conn) = open(path) else {
            return ck;
        };
        let (tx, rx) = mpsc::channel();
        let start = ck.start;
        let spawned = std::thread::Builder::new()
            .name("store-checkpoint".into())
            .spawn_scoped(scope, move || run(&conn, &rx, &running, start));
        if let Ok(handle) = spawned {
            writer.wal_hook(Some(note_frames));
            ck.tx = Some(tx);
            ck.thread = Some(handle);
        }
        ck
    }

    /// Before the writer commits.
    pub fn committing(&self) {
        FRAMES.with(|f| f.set(-1));
    }

    /// After the writer committed, outside any transaction.
    pub fn committed(&mut self, writer: &Connection) {
        let Some(tx) = &self.tx else {
            return;
        };
        let frames = i64::from(FRAMES.with(Cell::get));
        if frames < 0 {
            return;
        }
        // The frames this commit added (after a restart the log counts from 0 again).
        let added = if frames >= self.frames {
            frames - self.frames
        } else {
            frames
        };
        self.frames = frames;
        // A live pipe's commits are small: the writer checkpoints them itself once the log
        // passed WAL_BYTES, one slow commit in about a thousand, where the thread's more
        // frequent checkpoints slowed many (its p99).
        let small = added <= self.start / 4;
        let times = if small { 1 } else { LARGE };
        if frames >= self.restart * times {
            // What the thread has not checkpointed yet (about what it was given last) is
            // checkpointed here, once its checkpoint ended; the next transaction restarts the
            // log.
            let _running = hold(&self.running);
            let _ = passive(writer);
        } else if !small {
            // The thread is gone only when it failed: the log is then checkpointed when the
            // database is closed.
            let _ = tx.send(frames);
        }
    }

    /// Stops the thread, and gives the writer its automatic checkpoints back.
    pub fn end(mut self, writer: &Connection) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
            // Replaces the WAL hook with SQLite's own.
            let pages = super::schema::WAL_BYTES / page_size(writer);
            let _ = writer.pragma_update(None, "wal_autocheckpoint", pages);
        }
    }
}

/// The database's page size, in bytes.
fn page_size(conn: &Connection) -> i64 {
    conn.query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))
        .unwrap_or(4096)
        .max(512)
}

/// The thread's connection: it writes only checkpoints.
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Its own automatic checkpoints are off: it never commits.
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    Ok(conn)
}

/// A `PASSIVE` checkpoint: whether it ran (another one was not running).
fn passive(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok(r.get::<_, i64>(0)? == 0)
    })
}

/// The thread: checkpoints whenever the log grew by `start` frames since its last one, until
/// the writer is done.
fn run(conn: &Connection, rx: &mpsc::Receiver<i64>, running: &Mutex<()>, start: i64) {
    // The log's frames when the last checkpoint began.
    let mut at = 0;
    while let Ok(mut frames) = rx.recv() {
        // Only the latest count matters.
        while let Ok(f) = rx.try_recv() {
            frames = f;
        }
        if frames < at {
            // The writer restarted the log.
            at = 0;
        }
        if frames - at < start {
            continue;
        }
        let _running = hold(running);
        if let Ok(true) = passive(conn) {
            at = frames;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commits `n` batches of `rows` rows of about 1 KB each through `ck`.
    fn write(conn: &Connection, ck: &mut Checkpoints<'_>, n: usize, rows: usize) {
        let text = "x".repeat(1000);
        for _ in 0..n {
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            for _ in 0..rows {
                conn.execute("INSERT INTO t (v) VALUES (?1)", [&text])
                    .unwrap();
            }
            ck.committing();
            conn.execute_batch("COMMIT").unwrap();
            ck.committed(conn);
        }
    }

    fn wal_len(path: &Path) -> u64 {
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        std::fs::metadata(Path::new(&wal)).map_or(0, |m| m.len())
    }

    fn writer(path: &Path) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
        conn.execute_batch("CREATE TABLE t (v TEXT)").unwrap();
        conn
    }

    /// Large commits (a first store) and small ones (a live pipe): the log is restarted, so
    /// its file stays within the bound, and every row is there after.
    #[test]
    fn the_log_stays_bounded_and_nothing_is_lost() {
        let dir = std::env::temp_dir().join(format!("insights-checkpoint-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, batches, rows) in [("large", 60, 200), ("small", 3000, 1)] {
            let path = dir.join(format!("{name}.db"));
            let conn = writer(&path);
            let page = page_size(&conn);
            let restart = 256 * 1024;
            std::thread::scope(|s| {
                let mut ck = Checkpoints::sized(s, &path, &conn, 32 * 1024, restart);
                assert!(ck.thread.is_some());
                write(&conn, &mut ck, batches, rows);
                ck.end(&conn);
            });
            // The bound: the log restarted at LARGE times its size, plus the commit that
            // passed it (and SQLite's header and frame headers).
            let bound = (restart * LARGE) as u64 + (rows as u64 * 1100 + 8 * page as u64) * 2;
            assert!(
                wal_len(&path) <= bound,
                "{name}: {} > {bound}",
                wal_len(&path)
            );
            let n: i64 = conn
                .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, (batches * rows) as i64, "{name}");
            let ok: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(ok, "ok");
            // Automatic checkpoints are back.
            let auto: i64 = conn
                .query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))
                .unwrap();
            assert_eq!(auto, super::super::schema::WAL_BYTES / page);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
