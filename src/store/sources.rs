//! What was read of each file (the `sources` table), and where the next read of it starts.
//!
//! A file is known by its absolute path. Its record holds its size and modification time
//! when it was read, the byte offset just past the last whole line read, the number of lines
//! up to there, the last `seq` given, and a hash of its first bytes (at most [`HEAD`]). The
//! next run:
//!
//! * skips a file whose size and modification time are those recorded (it opens nothing);
//! * reads a file whose first bytes hash as recorded and that is no shorter than the offset
//!   from the offset on (what was appended), its lines numbered after the ones read (ids of
//!   lines without a provider id hold their line number, so they come out as in a whole read);
//! * reads any other file (rewritten, truncated) again from its start: the events it gives
//!   again are already stored, by their key.
//!
//! A last line without a line end is read but not counted in the offset: when the file goes
//! on, it is read again whole (its events, if it was whole, are already stored).
//!
//! OpenCode's database (`opencode.db`, [`crate::providers::opencode_db`]) has no lines to
//! read on from: its rows are read whole again whenever the database or its write-ahead log
//! changed ([`db_stat`]), and each row's events are known by the row's own id (the session,
//! message or part), so what was stored before is not stored again and new rows are.

use crate::convert::content_hash;
use rusqlite::{Connection, OptionalExtension as _};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How many first bytes of a file its head hash covers, at most.
pub const HEAD: u64 = 4096;

/// A file's record in the `sources` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    pub size: u64,
    pub mtime_ns: i64,
    /// Just past the last whole line read.
    pub offset: u64,
    /// Lines up to `offset`.
    pub lines: u64,
    /// The last `seq` given to its events.
    pub seq: u64,
    pub head_len: u64,
    pub head_hash: String,
    /// The keys `(session_id, id)` of the events the end of its last read inferred.
    pub closing: Vec<(String, String)>,
}

/// What to do with a file this run.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Nothing changed since it was read.
    Unchanged,
    /// Read from `offset` (0: the whole file), numbering lines after `lines` and events after
    /// `seq`.
    From { offset: u64, lines: u64, seq: u64 },
}

/// A file's size and modification time (nanoseconds since the epoch).
pub fn stat(path: &Path) -> io::Result<(u64, i64)> {
    let st = crate::input::Stamp::of(&std::fs::metadata(path)?);
    Ok((st.size, st.mtime_ns))
}

/// A database's size and modification time as [`stat`] gives a file's, its write-ahead log
/// (`<path>-wal`) counted in: OpenCode writes to the log, which SQLite copies into the
/// database only now and then, so the database file alone may not change when rows are added.
pub fn db_stat(path: &Path) -> io::Result<(u64, i64)> {
    let (size, mtime) = stat(path)?;
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    Ok(match stat(Path::new(&wal)) {
        Ok((wsize, wtime)) => (size.saturating_add(wsize), mtime.max(wtime)),
        Err(_) => (size, mtime),
    })
}

/// The hash of the first `len` bytes of `path`, in hex (fewer when the file is shorter).
pub fn head_hash(path: &Path, len: u64) -> io::Result<String> {
    let mut head = Vec::with_capacity(len as usize);
    File::open(path)?.take(len).read_to_end(&mut head)?;
    Ok(format!("{:016x}", content_hash(&head)))
}

/// The columns of a record, after its path.
const RECORD: &str = "size, mtime_ns, offset, lines, seq, head_len, head_hash, closing";

/// A record from a row of [`RECORD`]'s columns, from the `at`th on.
fn record(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Record> {
    Ok(Record {
        size: r.get::<_, i64>(at)? as u64,
        mtime_ns: r.get(at + 1)?,
        offset: r.get::<_, i64>(at + 2)? as u64,
        lines: r.get::<_, i64>(at + 3)? as u64,
        seq: r.get::<_, i64>(at + 4)? as u64,
        head_len: r.get::<_, i64>(at + 5)? as u64,
        head_hash: r.get(at + 6)?,
        closing: match r.get_ref(at + 7)?.as_str()? {
            // Most files end with nothing inferred.
            "[]" => Vec::new(),
            text => serde_json::from_str(text).unwrap_or_default(),
        },
    })
}

/// Records by path ([`all`]).
pub type Records =
    std::collections::HashMap<String, Record, std::hash::BuildHasherDefault<crate::ids::Hash64>>;

/// The record of `path`, if it was read before.
pub fn lookup(conn: &Connection, path: &str) -> rusqlite::Result<Option<Record>> {
    conn.prepare_cached(&format!("SELECT {RECORD} FROM sources WHERE path = ?1"))?
        .query_row([path], |r| record(r, 0))
        .optional()
}

/// Every record, by path: one read of the table, where a run of many sources would look
/// each up in a transaction of its own.
pub fn all(conn: &Connection) -> rusqlite::Result<Records> {
    // Room for every record at once (the rowids run from 1 with few gaps): a map grown
    // step by step moves every record it holds each time.
    let last: Option<i64> = conn.query_row("SELECT max(rowid) FROM sources", [], |r| r.get(0))?;
    let mut all = Records::default();
    all.reserve(usize::try_from(last.unwrap_or(0)).unwrap_or(0).min(1 << 20));
    let mut st = conn.prepare(&format!("SELECT path, {RECORD} FROM sources"))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        all.insert(r.get::<_, String>(0)?, record(r, 1)?);
    }
    Ok(all)
}

/// Writes the record of `path` (in the transaction of the events it read).
pub fn save(conn: &Connection, path: &str, rec: &Record) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO sources
           (path, size, mtime_ns, offset, lines, seq, head_len, head_hash, closing, stored_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
         ON CONFLICT (path) DO UPDATE SET size = ?2, mtime_ns = ?3, offset = ?4, lines = ?5,
           seq = ?6, head_len = ?7, head_hash = ?8, closing = ?9, stored_at = excluded.stored_at",
    )?
    .execute(rusqlite::params![
        path,
        rec.size as i64,
        rec.mtime_ns,
        rec.offset as i64,
        rec.lines as i64,
        rec.seq as i64,
        rec.head_len as i64,
        rec.head_hash,
        serde_json::to_string(&rec.closing).unwrap_or_else(|_| "[]".into()),
    ])?;
    Ok(())
}

/// Where to read `path` from, given its record and its size and modification time now.
pub fn plan(path: &Path, rec: Option<&Record>, size: u64, mtime_ns: i64) -> io::Result<Plan> {
    let Some(rec) = rec else {
        return Ok(Plan::From {
            offset: 0,
            lines: 0,
            seq: 0,
        });
    };
    if rec.size == size && rec.mtime_ns == mtime_ns {
        return Ok(Plan::Unchanged);
    }
    let same_head = size >= rec.offset
        && size >= rec.head_len
        && head_hash(path, rec.head_len)? == rec.head_hash;
    Ok(if same_head {
        Plan::From {
            offset: rec.offset,
            lines: rec.lines,
            seq: rec.seq,
        }
    } else {
        Plan::From {
            offset: 0,
            lines: 0,
            seq: 0,
        }
    })
}

/// A file opened at `offset`, read up to `size` (its size when it was looked at: what is
/// written meanwhile is for the next run), counting where the last line end it passed on
/// is ([`Ends`]).
pub fn open_at(path: &Path, offset: u64, size: u64) -> io::Result<(Counted, Ends)> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(offset))?;
    let ends = Ends(Arc::new(AtomicU64::new(offset)));
    Ok((
        Counted {
            inner: f.take(size.saturating_sub(offset)),
            pos: offset,
            last_end: Arc::clone(&ends.0),
        },
        ends,
    ))
}

/// A reader that notes the offset just past the last `\n` it has passed on.
pub struct Counted {
    inner: std::io::Take<File>,
    pos: u64,
    last_end: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(i) = memchr::memrchr(b'\n', &buf[..n]) {
            self.last_end
                .store(self.pos + i as u64 + 1, Ordering::Relaxed);
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// Where the last whole line read from a [`Counted`] ends: once the reader has been read to
/// its end, the offset to record.
pub struct Ends(Arc<AtomicU64>);

impl Ends {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_on_from_its_offset_unless_rewritten() {
        let dir = std::env::temp_dir().join(format!("insights-sources-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.jsonl");
        std::fs::write(&p, "one\ntwo\nthr").unwrap();
        let (mut r, ends) = open_at(&p, 0, 11).unwrap();
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        assert_eq!(ends.get(), 8);
        let (size, mtime) = stat(&p).unwrap();
        let rec = Record {
            size,
            mtime_ns: mtime,
            offset: 8,
            lines: 2,
            seq: 5,
            head_len: size.min(HEAD),
            head_hash: head_hash(&p, size.min(HEAD)).unwrap(),
            closing: Vec::new(),
        };
        assert_eq!(plan(&p, Some(&rec), size, mtime).unwrap(), Plan::Unchanged);
        std::fs::write(&p, "one\ntwo\nthree\nfour\n").unwrap();
        let (size, mtime) = stat(&p).unwrap();
        // The head is the old file's first 11 bytes: "one\ntwo\nthr" is still there.
        assert_eq!(
            plan(&p, Some(&rec), size, mtime + 1).unwrap(),
            Plan::From {
                offset: 8,
                lines: 2,
                seq: 5
            }
        );
        std::fs::write(&p, "ONE\ntwo\nthree\nfour\n").unwrap();
        assert_eq!(
            plan(&p, Some(&rec), size, mtime + 2).unwrap(),
            Plan::From {
                offset: 0,
                lines: 0,
                seq: 0
            }
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
