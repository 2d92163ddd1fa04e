//! The database's layout (`schemas/store.sql`, included here so there is one copy), its
//! version, the migrations from older versions, and the refusal of a file that is not an
//! insights database or is of a newer version: nothing is written to such a file (the check
//! reads before anything sets WAL mode or creates a table).

use anyhow::{bail, Context as _};
use rusqlite::{Connection, OpenFlags, OptionalExtension as _};
use std::io::Read as _;
use std::path::Path;
use std::time::Duration;

/// The layout of a new database: tables, indexes and views.
pub const DDL: &str = include_str!("../../schemas/store.sql");

/// The version [`DDL`] makes.
pub const VERSION: i64 = 6;

/// The oldest version [`open_read_only`] reads: version 4 lacks only `usage_merged`, which
/// `usage --db` does without (it merges the files' facts itself).
const READS_FROM: i64 = 4;

/// One step of [`MIGRATIONS`]: statements run first (`drop`), then the part of [`DDL`] from
/// the line `marker` to the next step's marker (or its end), then `then`. So the layout is
/// written once, in `schemas/store.sql`.
struct Step {
    drop: &'static str,
    marker: Option<&'static str>,
    then: &'static str,
}

/// `MIGRATIONS[k]` takes a database of version `k + 1` to version `k + 2`, in the
/// transaction that also writes the new version.
const MIGRATIONS: &[Step] = &[
    // 1 to 2 added the tables of usage that version 3 makes again: nothing left to do.
    Step {
        drop: "",
        marker: None,
        then: "",
    },
    // 2 to 3: the usage facts packed a row per file, the index of the views by session.
    // The files stored before are read again, to fill usage_files (their events are there
    // already and are not stored twice).
    Step {
        drop: "DROP TABLE IF EXISTS usage_facts; DROP TABLE IF EXISTS usage_files;",
        marker: Some("-- Changed in version 3"),
        then: "DELETE FROM sources;",
    },
    // 3 to 4: the sessions numbered, the events' key and indexes by that number. The events
    // are copied in the order they were stored (their rowids kept); the views are made
    // again over the new table.
    Step {
        drop: "DROP VIEW IF EXISTS sessions; DROP VIEW IF EXISTS turns;
               DROP VIEW IF EXISTS tool_calls; DROP VIEW IF EXISTS usage;
               DROP INDEX IF EXISTS events_by_call; DROP INDEX IF EXISTS events_by_type;
               ALTER TABLE events RENAME TO events_v3;",
        marker: Some("-- Changed in version 4"),
        then: "INSERT INTO session_ids (session_id)
                 SELECT session_id FROM events_v3 GROUP BY session_id ORDER BY min(rowid);
               INSERT INTO events
                   (rowid, sid, session_id, id, turn_id, seq, time, provider, event, call_id, json)
                 SELECT e.rowid, s.sid, e.session_id, e.id, e.turn_id, e.seq, e.time,
                        e.provider, e.event, e.call_id, e.json
                 FROM events_v3 e JOIN session_ids s ON s.session_id = e.session_id
                 ORDER BY e.rowid;
               DROP TABLE events_v3;",
    },
    // 4 to 5: the merged usage facts, and the triggers that delete them when usage_files
    // changes. Made by the next store.
    Step {
        drop: "",
        marker: Some("-- Changed in version 5"),
        then: "",
    },
    // 5 to 6: which form told each turn. The files are read again from their start, as the
    // files read before that they are (their events are stored already, and are not stored
    // twice), so that their turns are noted.
    Step {
        drop: "",
        marker: Some("-- Changed in version 6"),
        then: READ_AGAIN,
    },
];

/// Makes every file stored be read again from its start at the next `store`, as a file read
/// before (its record kept: its events are stored already, and the turns it tells are its
/// form's, [`super::tellers`]): no size is the size it has.
const READ_AGAIN: &str = "UPDATE sources SET size = -1, offset = 0, lines = 0;";

/// The statements of `MIGRATIONS[k]`.
fn migration(k: usize) -> anyhow::Result<String> {
    let step = &MIGRATIONS[k];
    let Some(marker) = step.marker else {
        return Ok(format!("{}\n{}", step.drop, step.then));
    };
    let at = DDL
        .find(marker)
        .with_context(|| format!("internal error: no {marker:?} in schemas/store.sql"))?;
    let end = MIGRATIONS[k + 1..]
        .iter()
        .find_map(|s| s.marker.and_then(|m| DDL.find(m)))
        .unwrap_or(DDL.len());
    Ok(format!("{}\n{}\n{}", step.drop, &DDL[at..end], step.then))
}

/// How long a writer waits for another one to commit (`PRAGMA busy_timeout`): a batch is
/// committed at least every 200 ms, but one file is stored in one transaction.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(600);

/// The writer's page cache, in KiB (SQLite's default is 2 MiB). A batch of a first store
/// writes about 10 MB of new pages; with the default cache SQLite spilled dirty pages to the
/// WAL before the commit and read back index pages it had just evicted.
pub const CACHE_KIB: i64 = 16 * 1024;

/// How large the WAL may grow, in bytes, before a commit checkpoints it
/// (`wal_autocheckpoint`, in pages; SQLite's default is 1,000 pages, 4 MB with 4 KiB pages,
/// which a batch of a first store passed at every commit); and how large the WAL file stays
/// after a checkpoint (`journal_size_limit`). Each checkpoint writes the pages of the WAL to
/// the database and syncs it; fewer of them write the pages that several batches change
/// (the indexes' and the table's last ones) once instead of once a batch.
pub const WAL_BYTES: i64 = 64 * 1024 * 1024;

/// The page size of a new database (SQLite's default is 4 KiB). Events are about 1 KB of
/// JSON each; with 16 KiB pages a first store makes a quarter of the page writes and
/// B-tree splits: `INSERT … SELECT` of 300,000 stored events into a new database took 30%
/// less CPU time than with 4 KiB pages (the same with 32 and 64 KiB). A database made
/// before keeps its page size.
pub const PAGE_SIZE: i64 = 16 * 1024;

/// The first bytes of every SQLite 3 database file.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Why a database is refused (exit status 2, the file untouched).
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Opens the database at `path` for writing, creating it (and its folder) when it does not
/// exist, and brings its layout to [`VERSION`]: WAL mode, the busy timeout set. A file that is
/// not an SQLite database, an SQLite database that is not an insights store, or a store of a
/// newer version is refused ([`Refused`]) before anything is written to it.
pub fn open(path: &Path) -> anyhow::Result<Connection> {
    let fresh = check_file(path)?;
    if fresh {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the folder {}", dir.display()))?;
        }
    }
    if !fresh {
        // Read only, until the file is known to be ours: a read-only connection writes
        // nothing, not even a checkpoint when it closes.
        let ro = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .with_context(|| format!("cannot open the database {}", path.display()))?;
        ro.busy_timeout(BUSY_TIMEOUT)?;
        if let Some(v) = version_of(&ro, path)? {
            if v > VERSION {
                return Err(newer(path, v).into());
            }
        }
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)
        .with_context(|| format!("cannot open the database {}", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    if fresh {
        // Before anything is written: the page size of a database is fixed once it has a
        // table (and, in WAL mode, for good).
        conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    }
    when_free(|| conn.pragma_update(None, "journal_mode", "WAL"))
        .with_context(|| format!("cannot set WAL mode on {}", path.display()))?;
    // In WAL mode, NORMAL loses no committed transaction to a crash of the program, only
    // (at worst) the last ones to a power failure, and never corrupts.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // A writer's page cache and checkpoints: see [`CACHE_KIB`] and [`WAL_BYTES`].
    conn.pragma_update(None, "cache_size", -CACHE_KIB)?;
    let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    conn.pragma_update(None, "wal_autocheckpoint", WAL_BYTES / page.max(512))?;
    conn.pragma_update(None, "journal_size_limit", WAL_BYTES)?;
    migrate(&conn).with_context(|| format!("cannot set up {}", path.display()))?;
    Ok(conn)
}

/// Opens a new database being built at `path` (an empty file, src/store/fresh.rs): the
/// layout of [`VERSION`] made, written without a journal until it is published.
pub fn open_building(path: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open the database {}", path.display()))?;
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    super::fresh::unjournaled(&conn)?;
    conn.pragma_update(None, "cache_size", -CACHE_KIB / 2)?;
    migrate(&conn).with_context(|| format!("cannot set up {}", path.display()))?;
    Ok(conn)
}

/// Opens the database at `path` for reading only: nothing is written to it, not even its
/// layout. A file that does not exist is an error (nothing was stored there yet); a file that
/// is not an insights store, or a store of another version, is refused ([`Refused`]) as
/// [`open`] refuses it. An empty database (created, nothing stored) reads as empty.
pub fn open_read_only(path: &Path) -> anyhow::Result<Connection> {
    if check_file(path)? {
        bail!(
            "{}: no insights store there (nothing stored yet): `insights store --db {}` \
             makes one",
            path.display(),
            path.display()
        );
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open the database {}", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    match version_of(&conn, path)? {
        None => bail!(
            "{}: an empty database (nothing stored yet): `insights store --db {}` fills it",
            path.display(),
            path.display()
        ),
        Some(v) if v > VERSION => return Err(newer(path, v).into()),
        Some(v) if v < READS_FROM => bail!(
            "{}: schema version {v} is older than this insights reads ({READS_FROM}): \
             `insights store --db {}` brings it up to date",
            path.display(),
            path.display()
        ),
        Some(_) => {}
    }
    Ok(conn)
}

/// The refusal of a store of a newer schema version `v`.
fn newer(path: &Path, v: i64) -> Refused {
    Refused(format!(
        "{}: schema version {v} is newer than this insights knows ({VERSION}); \
         use a newer insights (the file is left as it is)",
        path.display()
    ))
}

/// `f`, tried again while another writer holds the database, for up to [`BUSY_TIMEOUT`]:
/// SQLite answers a change of journal mode racing another writer (two writers creating one
/// database at once) with "database is locked" at once, without calling its busy handler.
fn when_free<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = std::time::Instant::now();
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

/// Whether `path` is to be created (absent or empty); `Err(Refused)` when it is a file that
/// is not an SQLite database. Reads at most its first 16 bytes.
fn check_file(path: &Path) -> anyhow::Result<bool> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot open the database {}", path.display()))
        }
    };
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(Refused(format!("{}: a directory, not a database", path.display())).into());
    }
    let mut head = Vec::with_capacity(16);
    (&mut f)
        .take(16)
        .read_to_end(&mut head)
        .with_context(|| format!("cannot read the database {}", path.display()))?;
    if head.is_empty() {
        return Ok(true);
    }
    if head.as_slice() != MAGIC {
        return Err(Refused(format!(
            "{}: not an SQLite database (left as it is); give --db a new file or an insights store",
            path.display()
        ))
        .into());
    }
    Ok(false)
}

/// The schema version of the database, `None` for an empty one (to be created); refused when
/// it holds tables but no version of ours.
fn version_of(conn: &Connection, path: &Path) -> anyhow::Result<Option<i64>> {
    let not_ours = |why: &str| {
        Refused(format!(
            "{}: an SQLite database, but not an insights store ({why}; left as it is)",
            path.display()
        ))
    };
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| not_ours(&e.to_string()))?;
    if tables == 0 {
        return Ok(None);
    }
    let has_version: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'",
        [],
        |r| r.get(0),
    )?;
    if !has_version {
        return Err(not_ours("no schema_version table").into());
    }
    let v: Option<i64> = conn
        .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
        .optional()
        .map_err(|e| not_ours(&e.to_string()))?
        .flatten();
    match v {
        Some(v) if v >= 1 => Ok(Some(v)),
        _ => Err(not_ours("schema_version holds no version").into()),
    }
}

/// Creates the layout in an empty database, or runs the migrations from its version, with the
/// new version in one transaction (a second writer doing the same waits, then finds it done).
fn migrate(conn: &Connection) -> anyhow::Result<()> {
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    // Read again under the write lock: another writer may have created or migrated it.
    let tables: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE name = 'schema_version'",
        [],
        |r| r.get(0),
    )?;
    let now: Option<i64> = if tables == 0 {
        None
    } else {
        tx.query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))?
    };
    match now {
        None => {
            tx.execute_batch(DDL)?;
            tx.execute(
                "INSERT INTO schema_version (version) VALUES (?1)",
                [VERSION],
            )?;
        }
        Some(v) if v < VERSION => {
            for k in (v - 1) as usize..MIGRATIONS.len() {
                tx.execute_batch(&migration(k)?)?;
                tx.execute("UPDATE schema_version SET version = ?1", [k as i64 + 2])?;
            }
        }
        Some(v) if v > VERSION => bail!("schema version {v} is newer than {VERSION}"),
        Some(_) => {}
    }
    // Usage facts read by an older insights' readers are read again: every file's record
    // goes, so this run reads each file whole (its events, stored already, are not stored
    // twice) and its facts anew. A newer insights' facts are left as they are.
    let facts: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if facts < super::tally::FACTS {
        if now.is_some() {
            tx.execute_batch("DELETE FROM usage_merged; DELETE FROM usage_files;")?;
            tx.execute_batch(READ_AGAIN)?;
        }
        tx.pragma_update(None, "user_version", super::tally::FACTS)?;
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ddl_makes_every_view_and_they_run() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(DDL).unwrap();
        for view in ["sessions", "turns", "tool_calls", "usage"] {
            conn.prepare(&format!("SELECT * FROM {view}"))
                .unwrap()
                .query([])
                .unwrap()
                .next()
                .unwrap();
        }
    }

    #[test]
    fn migrations_reach_the_version() {
        assert_eq!(MIGRATIONS.len() as i64, VERSION - 1);
    }

    /// The events of versions 1 to 3 (keyed by the session's id), with a view over them, as
    /// those versions made them.
    const V3_EVENTS: &str = "
        CREATE TABLE events (session_id TEXT NOT NULL, id TEXT NOT NULL, turn_id TEXT,
          seq INTEGER, time TEXT, provider TEXT, event TEXT NOT NULL, call_id TEXT,
          json TEXT NOT NULL, UNIQUE (session_id, id));
        CREATE INDEX events_by_call ON events (session_id, call_id) WHERE call_id IS NOT NULL;
        CREATE INDEX events_by_type ON events (session_id, event);
        CREATE VIEW sessions AS SELECT session_id, count(*) AS events FROM events
          GROUP BY session_id;
        INSERT INTO events VALUES ('b', 'b:0', NULL, 1, NULL, 'codex', 'text', NULL, '{}');
        INSERT INTO events VALUES ('a', 'a:0', NULL, 1, NULL, 'claude', 'session_init', NULL,
          '{\"model\":\"m\"}');
        INSERT INTO events VALUES ('b', 'b:1', NULL, 2, NULL, 'codex', 'tool_invocation', 'c',
          '{}');";

    /// The tables of usage of version 2 (a row per fact), as version 2's layout made them.
    const V2_USAGE: &str = "
        CREATE TABLE usage_facts (path TEXT NOT NULL, n INTEGER NOT NULL, agent TEXT NOT NULL,
          time INTEGER, session TEXT NOT NULL, project TEXT NOT NULL, model TEXT NOT NULL,
          input INTEGER NOT NULL, output INTEGER NOT NULL, cache_read INTEGER NOT NULL,
          cache_creation INTEGER NOT NULL, cache_creation_1h INTEGER NOT NULL,
          reasoning INTEGER NOT NULL, cost_usd REAL, response INTEGER NOT NULL,
          turn INTEGER NOT NULL, response_key INTEGER, PRIMARY KEY (path, n)) WITHOUT ROWID;
        CREATE TABLE usage_files (path TEXT PRIMARY KEY, first_ms INTEGER);";

    #[test]
    fn stores_of_older_versions_are_migrated_keeping_their_events() {
        let dir = std::env::temp_dir().join(format!("insights-migrate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Version 1 is the layout without what later versions added; version 3 added
        // usage_files with its facts.
        let v1 = &DDL[..DDL.find("-- Changed in version 3").unwrap()];
        let v3_usage = &DDL[DDL.find("-- Changed in version 3").unwrap()
            ..DDL.find("-- Changed in version 4").unwrap()];
        for (version, extra) in [(1, ""), (2, V2_USAGE), (3, v3_usage)] {
            let db = dir.join(format!("v{version}.db"));
            {
                let c = Connection::open(&db).unwrap();
                c.execute_batch(v1).unwrap();
                c.execute_batch(V3_EVENTS).unwrap();
                c.execute_batch(extra).unwrap();
                c.execute("INSERT INTO schema_version VALUES (?1)", [version])
                    .unwrap();
                c.execute_batch(
                    "INSERT INTO sources VALUES ('/x.jsonl', 1, 1, 1, 1, 1, 1, 'h', '[]', 'now');",
                )
                .unwrap();
            }
            let c = open(&db).unwrap();
            let v: i64 = c
                .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
                .unwrap();
            assert_eq!(v, VERSION);
            let n: i64 = c
                .query_row("SELECT count(*) FROM sources WHERE size <> -1", [], |r| {
                    r.get(0)
                })
                .unwrap();
            // Every file is read again: versions 1 and 2 for their usage tables (their
            // records gone), and any store made before the facts' version was kept
            // (`user_version` 0) or before version 6 (their records read from the start).
            assert_eq!(n, 0, "version {version}: files not read again");
            let facts: i64 = c
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .unwrap();
            assert_eq!(facts, super::super::tally::FACTS);
            c.query_row("SELECT count(facts) FROM usage_files", [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap();
            let old: i64 = c
                .query_row(
                    "SELECT count(*) FROM sqlite_schema
                     WHERE name IN ('usage_facts', 'events_v3')",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(old, 0, "version {version}: old tables left");
            // The events, in the order stored, each under its session's number.
            let events: Vec<(i64, i64, String, String)> = c
                .prepare(
                    "SELECT e.rowid, e.sid, s.session_id, e.id FROM events e
                     JOIN session_ids s USING (sid) ORDER BY e.rowid",
                )
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let want = [(1, 1, "b", "b:0"), (2, 2, "a", "a:0"), (3, 1, "b", "b:1")];
            let want: Vec<_> = want
                .iter()
                .map(|&(r, s, sess, id)| (r, s, sess.to_owned(), id.to_owned()))
                .collect();
            assert_eq!(events, want, "version {version}");
            for view in ["sessions", "turns", "tool_calls", "usage"] {
                c.prepare(&format!("SELECT * FROM {view}"))
                    .unwrap()
                    .query([])
                    .unwrap()
                    .next()
                    .unwrap();
            }
            let model: Option<String> = c
                .query_row(
                    "SELECT model FROM sessions WHERE session_id = 'a'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(model.as_deref(), Some("m"), "version {version}");
        }
    }
}
