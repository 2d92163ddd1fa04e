//! Reading the store: the one reader of stored events, for the commands that answer from a
//! database (`replay`, `reduce`, `usage` and `sessions` with `--db`, `export --db`).
//!
//! The API, kept small and stable:
//!
//! * [`Db::open`]: a database opened for reading only (nothing is written to it); a file that
//!   is not an insights store, or a store of a newer schema, is refused as `insights store`
//!   refuses it ([`super::schema::Refused`], exit status 2, the file untouched).
//! * [`Db::sessions`]: the sessions stored, in the order they were first stored.
//! * [`Db::each`]: a session's events (or all events), in the order they were stored, as
//!   their InsightsEvent JSON lines, optionally only those after a [`Cursor`].
//! * [`Db::lines`]: the same as an [`std::io::Read`] of JSONL (each event a line), for the
//!   readers that take InsightsEvent lines (the converter passes them through); with `follow`
//!   it waits for events stored later, as `tail -f` does, so a live
//!   `agent | insights store -` can be watched from another terminal.
//!
//! The order is the order of storing (the rowid): for a file stored once, the order of its
//! events in a conversion of it.

use super::ingest::db_words;
use super::schema;
use anyhow::Context as _;
use rusqlite::{Connection, OptionalExtension as _};
use std::io::{self, Read};
use std::path::Path;
use std::time::Duration;

/// A place in the order events were stored: the rowid of the last event read, `0` before the
/// first. An event stored later has a greater cursor, so reading again after the cursor of the
/// last event read gives exactly what was stored since.
pub type Cursor = i64;

/// How often [`Lines`] looks for new events while following.
pub const POLL: Duration = Duration::from_millis(100);

/// How many events [`Lines`] reads per query.
const BATCH: i64 = 1024;

/// A session stored: what the `sessions` view says of it, without its model and working
/// directory (which read every `session_init`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// `sessionId`.
    pub id: String,
    /// Its agent (the least `provider` of its events).
    pub provider: Option<String>,
    /// The first and last `timestamp` of its events (RFC 3339), where they have one.
    pub started: Option<String>,
    pub ended: Option<String>,
    /// How many events are stored for it.
    pub events: u64,
}

/// A database opened for reading.
pub struct Db {
    conn: Connection,
    name: String,
}

impl Db {
    /// Opens the store at `path` for reading only. A file that does not exist, or a database
    /// in which nothing was stored, is an error that says how to fill it; a file that is not
    /// an insights store, or a store of another schema version, is refused.
    pub fn open(path: &Path) -> anyhow::Result<Db> {
        Ok(Db {
            conn: schema::open_read_only(path)?,
            name: path.display().to_string(),
        })
    }

    /// The connection, for queries of this module's siblings (the views, `usage --db`).
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The database's path, as given.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// A database error, named with the database and what was being read.
    pub(crate) fn error(&self, e: rusqlite::Error) -> anyhow::Error {
        anyhow::anyhow!("{}: cannot read: {}", self.name, db_words(&e))
    }

    /// The sessions stored (events with a `sessionId`), in the order they were first stored.
    pub fn sessions(&self) -> anyhow::Result<Vec<Session>> {
        let run = || -> rusqlite::Result<Vec<Session>> {
            let mut st = self.conn.prepare(
                "SELECT min(session_id), min(provider), min(time), max(time), count(*),
                        min(rowid) AS f
                 FROM events WHERE session_id <> '' GROUP BY sid ORDER BY f",
            )?;
            let rows = st.query_map([], |r| {
                Ok(Session {
                    id: r.get(0)?,
                    provider: r.get(1)?,
                    started: r.get(2)?,
                    ended: r.get(3)?,
                    events: r.get::<_, i64>(4)? as u64,
                })
            })?;
            rows.collect()
        };
        run().map_err(|e| self.error(e))
    }

    /// Whether any event of session `id` is stored.
    pub fn has_session(&self, id: &str) -> anyhow::Result<bool> {
        self.conn
            .query_row(
                "SELECT 1 FROM events
                 WHERE sid = (SELECT sid FROM session_ids WHERE session_id = ?1) LIMIT 1",
                [id],
                |_| Ok(()),
            )
            .optional()
            .map(|r| r.is_some())
            .map_err(|e| self.error(e))
    }

    /// Calls `f` with each event of `session` (all events when `None`) stored after `after`,
    /// in the order they were stored: its cursor and its InsightsEvent JSON (one line, no line
    /// end). Reads one snapshot: events stored meanwhile are not seen. Returns the cursor of
    /// the last event given (`after` when none was), to read on from.
    pub fn each(
        &self,
        session: Option<&str>,
        after: Cursor,
        mut f: impl FnMut(Cursor, &str) -> anyhow::Result<()>,
    ) -> anyhow::Result<Cursor> {
        let mut last = after;
        let mut st = self
            .conn
            .prepare_cached(select(session, after, false))
            .map_err(|e| self.error(e))?;
        let mut rows = match session {
            Some(s) => st.query(rusqlite::params![s, after]),
            None => st.query(rusqlite::params![after]),
        }
        .map_err(|e| self.error(e))?;
        while let Some(r) = rows.next().map_err(|e| self.error(e))? {
            let cursor: Cursor = r.get(0).map_err(|e| self.error(e))?;
            let json = r.get_ref(1).map_err(|e| self.error(e))?;
            let json = json
                .as_str()
                .map_err(|e| self.error(rusqlite::Error::from(e)))?;
            f(cursor, json)?;
            last = cursor;
        }
        Ok(last)
    }

    /// The events of `session` (all events when `None`) stored after `after`, as JSONL to
    /// read: each event one line. Without `follow` it ends after the last event stored when
    /// it gets there; with `follow` it then waits for more, looking every [`POLL`], and never
    /// ends (but on SIGINT, SIGTERM or SIGHUP when the program catches them).
    pub fn lines(self, session: Option<String>, after: Cursor, follow: bool) -> Lines {
        Lines {
            db: self,
            session,
            cursor: after,
            follow,
            buf: Vec::new(),
            at: 0,
        }
    }
}

/// The query of events after a cursor, of one session (`?1`, the cursor `?2`) or of all
/// (the cursor `?1`); `limit`: at most `?3` (`?2` for all) of them. A session's first events
/// are found by the key's index; later ones (following) by the rowid, which reads only the
/// events stored since.
fn select(session: Option<&str>, after: Cursor, limit: bool) -> &'static str {
    match (session.is_some(), after > 0, limit) {
        (true, false, false) => {
            "SELECT rowid, json FROM events
             WHERE sid = (SELECT sid FROM session_ids WHERE session_id = ?1) AND rowid > ?2
             ORDER BY rowid"
        }
        (true, false, true) => {
            "SELECT rowid, json FROM events
             WHERE sid = (SELECT sid FROM session_ids WHERE session_id = ?1) AND rowid > ?2
             ORDER BY rowid LIMIT ?3"
        }
        (true, true, false) => {
            "SELECT rowid, json FROM events
             WHERE +sid = (SELECT sid FROM session_ids WHERE session_id = ?1) AND rowid > ?2
             ORDER BY rowid"
        }
        (true, true, true) => {
            "SELECT rowid, json FROM events
             WHERE +sid = (SELECT sid FROM session_ids WHERE session_id = ?1) AND rowid > ?2
             ORDER BY rowid LIMIT ?3"
        }
        (false, _, false) => "SELECT rowid, json FROM events WHERE rowid > ?1 ORDER BY rowid",
        (false, _, true) => {
            "SELECT rowid, json FROM events WHERE rowid > ?1 ORDER BY rowid LIMIT ?2"
        }
    }
}

/// Stored events as JSONL ([`Db::lines`]), read a batch at a time.
pub struct Lines {
    db: Db,
    session: Option<String>,
    cursor: Cursor,
    follow: bool,
    buf: Vec<u8>,
    at: usize,
}

impl Lines {
    /// The cursor of the last event read into the buffer.
    pub fn cursor(&self) -> Cursor {
        self.cursor
    }

    /// Reads the next batch into the buffer; whether there was any.
    fn fill(&mut self) -> anyhow::Result<bool> {
        self.buf.clear();
        self.at = 0;
        let db = &self.db;
        let mut st = db
            .conn
            .prepare_cached(select(self.session.as_deref(), self.cursor, true))
            .map_err(|e| db.error(e))?;
        let mut rows = match &self.session {
            Some(s) => st.query(rusqlite::params![s, self.cursor, BATCH]),
            None => st.query(rusqlite::params![self.cursor, BATCH]),
        }
        .map_err(|e| db.error(e))?;
        while let Some(r) = rows.next().map_err(|e| db.error(e))? {
            self.cursor = r.get(0).map_err(|e| db.error(e))?;
            let json = r.get_ref(1).map_err(|e| db.error(e))?;
            let bytes = json
                .as_bytes()
                .map_err(|e| db.error(rusqlite::Error::from(e)))?;
            self.buf.extend_from_slice(bytes);
            self.buf.push(b'\n');
        }
        Ok(!self.buf.is_empty())
    }
}

impl Read for Lines {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        while self.at >= self.buf.len() {
            let got = self
                .fill()
                .with_context(|| "reading the store")
                .map_err(io::Error::other)?;
            if got {
                break;
            }
            if !self.follow || crate::signals::caught().is_some() {
                return Ok(0);
            }
            std::thread::sleep(POLL);
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store at a fresh path with `lines` stored through `insights store`'s writer.
    fn stored(name: &str, lines: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("insights-query-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("t.db");
        let conn = schema::open(&db).unwrap();
        for (k, l) in lines.lines().enumerate() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            conn.execute(
                "INSERT OR IGNORE INTO session_ids (session_id) VALUES (?1)",
                [v["sessionId"].as_str().unwrap_or("")],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO events (sid, session_id, id, event, time, provider, json)
                 VALUES ((SELECT sid FROM session_ids WHERE session_id = ?1),
                         ?1, ?2, ?3, ?4, ?5, ?6)",
                rusqlite::params![
                    v["sessionId"].as_str().unwrap_or(""),
                    format!("e:{k}"),
                    v["event"].as_str().unwrap(),
                    v["timestamp"].as_str(),
                    v["provider"].as_str(),
                    l
                ],
            )
            .unwrap();
        }
        db
    }

    const LOG: &str = r#"{"event":"session_init","sessionId":"a","provider":"codex","timestamp":"2026-01-01T00:00:00Z"}
{"event":"text","sessionId":"b","provider":"claude"}
{"event":"text","sessionId":"a","provider":"codex","timestamp":"2026-01-01T00:00:05Z"}
{"event":"notice"}
"#;

    #[test]
    fn sessions_and_events_in_the_order_stored() {
        let db = Db::open(&stored("order", LOG)).unwrap();
        let s = db.sessions().unwrap();
        assert_eq!(
            s.iter()
                .map(|s| (s.id.as_str(), s.events))
                .collect::<Vec<_>>(),
            [("a", 2), ("b", 1)]
        );
        assert_eq!(s[0].started.as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(s[0].ended.as_deref(), Some("2026-01-01T00:00:05Z"));
        assert!(db.has_session("b").unwrap() && !db.has_session("c").unwrap());
        let mut got = Vec::new();
        let last = db
            .each(Some("a"), 0, |c, j| {
                got.push((c, j.to_owned()));
                Ok(())
            })
            .unwrap();
        let all: Vec<&str> = LOG.lines().collect();
        assert_eq!(got, [(1, all[0].to_owned()), (3, all[2].to_owned())]);
        assert_eq!(last, 3);
        let mut after = Vec::new();
        db.each(None, 2, |c, _| {
            after.push(c);
            Ok(())
        })
        .unwrap();
        assert_eq!(after, [3, 4]);
        let mut text = String::new();
        db.lines(None, 0, false).read_to_string(&mut text).unwrap();
        assert_eq!(text, LOG);
    }

    #[test]
    fn a_missing_or_foreign_file_is_an_error_and_left_as_it_is() {
        let dir =
            std::env::temp_dir().join(format!("insights-query-foreign-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("none.db");
        assert!(Db::open(&missing).is_err());
        assert!(!missing.exists(), "opening for reading created it");
        let text = dir.join("notes.txt");
        std::fs::write(&text, "not a database at all, longer than sixteen bytes").unwrap();
        let e = Db::open(&text).err().unwrap();
        assert!(e.downcast_ref::<schema::Refused>().is_some(), "{e}");
        let other = dir.join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        let before = std::fs::read(&other).unwrap();
        assert!(Db::open(&other).is_err());
        assert_eq!(std::fs::read(&other).unwrap(), before);
    }
}
