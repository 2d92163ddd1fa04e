//! Where each target's last `export --db` stopped: a small table the export keeps in the
//! store, so that each run exports only the events stored since (the store's rowid, its
//! [`Cursor`]).
//!
//! The table is the export's own, created when it is first needed (the store's schema does
//! not list it, and `insights store` never reads it):
//!
//! ```sql
//! CREATE TABLE IF NOT EXISTS export_cursors (
//!   target TEXT PRIMARY KEY,   -- clickhouse, otlp
//!   last INTEGER NOT NULL,     -- the rowid of the last event exported to it
//!   exported_at TEXT NOT NULL  -- when (UTC)
//! );
//! ```
//!
//! The cursor moves only when the target has taken every event and flushed its output: a run
//! that fails (the output closed, a signal) exports the same events again next time, which
//! both targets' engines keep once (ClickHouse's `ReplacingMergeTree`, the same span ids).

use crate::store::ingest::db_words;
use crate::store::query::Cursor;
use anyhow::Context as _;
use rusqlite::{Connection, OpenFlags, OptionalExtension as _};
use std::path::Path;

const DDL: &str = "CREATE TABLE IF NOT EXISTS export_cursors (
  target TEXT PRIMARY KEY,
  last INTEGER NOT NULL,
  exported_at TEXT NOT NULL
)";

/// The cursors of one store, on a connection of their own (the events are read on the
/// store's read-only one, [`crate::store::query::Db`]).
pub struct Cursors {
    conn: Connection,
    name: String,
}

impl Cursors {
    /// Opens the store at `path` (already opened and checked by
    /// [`crate::store::query::Db::open`]) for writing the cursors.
    pub fn open(path: &Path) -> anyhow::Result<Cursors> {
        let name = path.display().to_string();
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .with_context(|| format!("cannot open the database {name}"))?;
        conn.busy_timeout(crate::store::schema::BUSY_TIMEOUT)
            .and_then(|()| conn.execute_batch(DDL))
            .map_err(|e| {
                anyhow::anyhow!("{name}: cannot keep the export cursor: {}", db_words(&e))
            })?;
        Ok(Cursors { conn, name })
    }

    /// Where the last export to `target` stopped; 0 before the first.
    pub fn get(&self, target: &str) -> anyhow::Result<Cursor> {
        self.conn
            .query_row(
                "SELECT last FROM export_cursors WHERE target = ?1",
                [target],
                |r| r.get(0),
            )
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(|e| self.error(e))
    }

    /// Records that `target` has every event up to `last`.
    pub fn set(&self, target: &str, last: Cursor) -> anyhow::Result<()> {
        self.conn
            .execute(
                "INSERT INTO export_cursors (target, last, exported_at)
                 VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                 ON CONFLICT (target) DO UPDATE SET last = ?2, exported_at = excluded.exported_at",
                rusqlite::params![target, last],
            )
            .map(drop)
            .map_err(|e| self.error(e))
    }

    fn error(&self, e: rusqlite::Error) -> anyhow::Error {
        anyhow::anyhow!(
            "{}: cannot keep the export cursor: {}",
            self.name,
            db_words(&e)
        )
    }
}
