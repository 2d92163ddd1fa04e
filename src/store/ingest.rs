//! Writing events, each once: the converter's events (handed over by its tap, as `reduce`
//! takes them) and InsightsEvent lines passed through are inserted with `INSERT OR IGNORE` on
//! the key `(session_id, id)`.
//!
//! Writes are batched: one transaction (`BEGIN IMMEDIATE`) per batch, committed when it is
//! 200 ms old at the end of a file, and on a pipe also whenever the next line is not there yet
//! (so readers of a live pipe's database see its events as they come), and at the end. A
//! file's record ([`super::sources`]) is written in the transaction of its events, and a file
//! is never split over two batches: a run killed at any point leaves whole files with their
//! records (or a pipe's lines up to a commit), and a run after it reads the rest as a clean
//! run would. A run stopped by a signal commits what it stored, the file it was reading
//! without its record (read again next time: its events stored are not stored twice). An
//! error of the database (a full disk, an I/O error) rolls the batch back and ends the run.

use super::sources::{self, Plan, Record};
use crate::convert::{Converter, Options};
use crate::diag::Diag;
use crate::event::Event;
use crate::input::Source;
use crate::lines::SourceLines;
use crate::output::Out;
use crate::usage::homes::Found;
use anyhow::Context as _;
use rusqlite::{CachedStatement, Connection};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The longest a batch stays open while there is something to commit.
pub const BATCH: Duration = Duration::from_millis(200);

/// What a run did, for the closing note.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Events converted or read.
    pub events: u64,
    /// Of those, the ones not stored before.
    pub added: u64,
    /// Files read (whole or what was appended).
    pub files_read: u64,
    /// Files whose record said nothing changed.
    pub files_unchanged: u64,
}

/// The database and the batch open on it.
pub struct Store {
    pub conn: Connection,
    /// Since when the open batch has been open; `None` when none is.
    open: Option<Instant>,
    /// Whether the open batch has written anything.
    dirty: bool,
    pub counts: Counts,
    name: String,
    /// The files of the standard places, with what their place says (whose they are, their
    /// project folder): `usage` reads them so ([`super::tally`]).
    pub places: HashMap<PathBuf, Found>,
    /// A buffer for [`super::tally::save`].
    tally_buf: Vec<u8>,
}

impl Store {
    pub fn new(conn: Connection, name: String) -> Store {
        Store {
            conn,
            open: None,
            dirty: false,
            counts: Counts::default(),
            name,
            places: HashMap::new(),
            tally_buf: Vec::new(),
        }
    }

    /// Opens a batch unless one is open (waiting for another writer's, up to the busy timeout).
    fn begin(&mut self) -> anyhow::Result<()> {
        if self.open.is_none() {
            self.conn
                .execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| self.db_error(e, "cannot begin a transaction"))?;
            self.open = Some(Instant::now());
            self.dirty = false;
        }
        Ok(())
    }

    /// Commits the open batch, if any.
    pub fn commit(&mut self) -> anyhow::Result<()> {
        if self.open.take().is_some() {
            if let Err(e) = self.conn.execute_batch("COMMIT") {
                let _ = self.conn.execute_batch("ROLLBACK");
                return Err(self.db_error(e, "cannot commit (the batch was rolled back)"));
            }
        }
        self.dirty = false;
        Ok(())
    }

    /// Rolls the open batch back (after an error).
    pub fn rollback(&mut self) {
        if self.open.take().is_some() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    /// Commits when the batch is [`BATCH`] old, or when `idle` (the input has nothing
    /// more ready) and it holds something.
    fn commit_if_due(&mut self, idle: bool) -> anyhow::Result<()> {
        let due = self
            .open
            .is_some_and(|t| t.elapsed() >= BATCH || (idle && self.dirty));
        if due {
            self.commit()?;
        }
        Ok(())
    }

    /// A database error, named with the database and what was being done.
    fn db_error(&self, e: rusqlite::Error, doing: &str) -> anyhow::Error {
        anyhow::anyhow!("{}: {doing}: {}", self.name, db_words(&e))
    }

    /// Stores one source: a file from where its record says (or not at all when it did not
    /// change), a conversation of several files whole when any of them changed, standard
    /// input whole.
    pub fn source(&mut self, src: &Source, opts: &Options, diag: &mut Diag) -> anyhow::Result<()> {
        match src {
            Source::Stdin => {
                let name = src.name();
                let Some(reader) = src.open_or_report(diag) else {
                    return Ok(());
                };
                self.begin()?;
                let lines = SourceLines::one(reader, name.clone(), opts.max_line);
                self.read(lines, &name, true, 0, opts, diag)?;
                self.commit()
            }
            // OpenCode's database: read as `insights` reads it (`Source::open`).
            Source::File(path) if crate::providers::opencode_db::is_database(path) => {
                self.database(src, path, opts, diag)
            }
            Source::File(path) if self.places.get(path).is_some_and(|f| !f.converts()) => {
                self.usage_only(path, diag)
            }
            Source::File(path) => self.file(path, opts, diag),
            Source::Group(paths) => self.group(src, paths, opts, diag),
        }
    }

    /// `path`'s size and modification time now (`stat`: [`sources::stat`], or
    /// [`sources::db_stat`] for a database), and its record, looked up inside the batch
    /// (another writer may have read it meanwhile); `None` when it cannot be looked at
    /// (reported).
    #[allow(clippy::type_complexity)]
    fn looked_up(
        &mut self,
        path: &Path,
        key: &str,
        stat: fn(&Path) -> io::Result<(u64, i64)>,
        diag: &mut Diag,
    ) -> anyhow::Result<Option<((u64, i64), Option<Record>)>> {
        let now = match stat(path) {
            Ok(s) => s,
            Err(e) => {
                diag.io_error(&path.display().to_string(), &e);
                return Ok(None);
            }
        };
        self.begin()?;
        let rec = sources::lookup(&self.conn, key).map_err(|e| self.db_error(e, "cannot read"))?;
        Ok(Some((now, rec)))
    }

    fn file(&mut self, path: &Path, opts: &Options, diag: &mut Diag) -> anyhow::Result<()> {
        let name = path.display().to_string();
        let key = key_of(path);
        let Some(((size, mtime), rec)) = self.looked_up(path, &key, sources::stat, diag)? else {
            return Ok(());
        };
        let plan = match sources::plan(path, rec.as_ref(), size, mtime) {
            Ok(p) => p,
            Err(e) => {
                diag.io_error(&name, &e);
                return Ok(());
            }
        };
        let Plan::From { lines, .. } = plan else {
            self.counts.files_unchanged += 1;
            return self.commit_if_due(false);
        };
        // What the end of the last read inferred (the end of a turn the file had left open)
        // is taken back: the file went on, and its end is inferred again where it ends now.
        if lines > 0 {
            if let Some(rec) = &rec {
                self.retract(&rec.closing)?;
            }
        }
        let (reader, ends) = match sources::open_at(path, 0, size) {
            Ok(r) => r,
            Err(e) => {
                diag.io_error(&name, &e);
                return Ok(());
            }
        };
        let lines_in = SourceLines::one(Box::new(reader), name.clone(), opts.max_line);
        let Some(read) = self.read_file(lines_in, &name, lines, opts, diag)? else {
            return Ok(());
        };
        let head_len = size.min(sources::HEAD);
        let head_hash = match sources::head_hash(path, head_len) {
            Ok(h) => h,
            Err(e) => {
                diag.io_error(&name, &e);
                return Ok(());
            }
        };
        let rec = Record {
            size,
            mtime_ns: mtime,
            offset: ends.get(),
            lines: read.whole_lines,
            seq: read.seq,
            head_len,
            head_hash,
            closing: read.closing,
        };
        self.tally(path, &key)?;
        sources::save(&self.conn, &key, &rec).map_err(|e| self.db_error(e, "cannot write"))?;
        self.counts.files_read += 1;
        self.commit_if_due(false)
    }

    /// OpenCode's database: its rows, as the lines `insights` reads them as, read whole when
    /// the database (or its write-ahead log) changed since the last run, never written to
    /// ([`sources`]). The events of rows stored before have their ids (each names its row) and
    /// are not stored again; the ends the last read inferred (a turn it left open) are taken
    /// back first and inferred again where the rows end now.
    fn database(
        &mut self,
        src: &Source,
        path: &Path,
        opts: &Options,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        let name = path.display().to_string();
        let key = key_of(path);
        let Some(((size, mtime), rec)) = self.looked_up(path, &key, sources::db_stat, diag)? else {
            return Ok(());
        };
        if rec
            .as_ref()
            .is_some_and(|r| r.size == size && r.mtime_ns == mtime)
        {
            self.counts.files_unchanged += 1;
            return self.commit_if_due(false);
        }
        let Some(reader) = src.open_or_report(diag) else {
            return Ok(());
        };
        if let Some(rec) = &rec {
            self.retract(&rec.closing)?;
        }
        let lines = SourceLines::one(reader, name.clone(), opts.max_line);
        let Some(read) = self.read_file(lines, &name, 0, opts, diag)? else {
            return Ok(());
        };
        // No offset nor head: a database is read whole (its rows' ids say what is stored).
        let rec = Record {
            size,
            mtime_ns: mtime,
            offset: 0,
            lines: read.whole_lines,
            seq: read.seq,
            head_len: 0,
            head_hash: String::new(),
            closing: read.closing,
        };
        self.tally(path, &key)?;
        sources::save(&self.conn, &key, &rec).map_err(|e| self.db_error(e, "cannot write"))?;
        self.counts.files_read += 1;
        self.commit_if_due(false)
    }

    /// A file only `usage` reads (an agent whose files `insights` does not convert: Amp's
    /// threads, pi's sessions, Goose's database…): its usage facts only, so that `usage --db`
    /// counts what `usage` does; read again whole when it changed.
    fn usage_only(&mut self, path: &Path, diag: &mut Diag) -> anyhow::Result<()> {
        let key = key_of(path);
        let Some(((size, mtime), rec)) = self.looked_up(path, &key, sources::stat, diag)? else {
            return Ok(());
        };
        if rec
            .as_ref()
            .is_some_and(|r| r.size == size && r.mtime_ns == mtime)
        {
            self.counts.files_unchanged += 1;
            return self.commit_if_due(false);
        }
        let rec = Record {
            size,
            mtime_ns: mtime,
            offset: 0,
            lines: 0,
            seq: 0,
            head_len: 0,
            head_hash: String::new(),
            closing: Vec::new(),
        };
        self.tally(path, &key)?;
        sources::save(&self.conn, &key, &rec).map_err(|e| self.db_error(e, "cannot write"))?;
        self.counts.files_read += 1;
        self.commit_if_due(false)
    }

    /// A conversation kept in several files (a Claude Code session and its subagents'): its
    /// lines are merged by time, so it is read whole again when any file of it changed (the
    /// events read before are already stored); each file's record then says it was read to
    /// its end.
    fn group(
        &mut self,
        src: &Source,
        paths: &[std::path::PathBuf],
        opts: &Options,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        self.begin()?;
        let mut stats = Vec::with_capacity(paths.len());
        let mut changed = false;
        for p in paths {
            let Ok((size, mtime)) = sources::stat(p) else {
                changed = true;
                continue;
            };
            let rec = sources::lookup(&self.conn, &key_of(p))
                .map_err(|e| self.db_error(e, "cannot read"))?;
            changed |= rec.is_none_or(|r| r.size != size || r.mtime_ns != mtime);
            stats.push((p, size, mtime));
        }
        if !changed {
            self.counts.files_unchanged += paths.len() as u64;
            return self.commit_if_due(false);
        }
        let name = src.name();
        let Some(lines) = src.lines_or_report(opts.max_line, diag) else {
            return Ok(());
        };
        if self.read_file(lines, &name, 0, opts, diag)?.is_none() {
            return Ok(());
        }
        for (p, size, mtime) in stats {
            let head_len = size.min(sources::HEAD);
            let Ok(head_hash) = sources::head_hash(p, head_len) else {
                continue;
            };
            // Read whole: the offset is the size it had (a later change reads it whole again).
            let rec = Record {
                size,
                mtime_ns: mtime,
                offset: size,
                lines: 0,
                seq: 0,
                head_len,
                head_hash,
                closing: Vec::new(),
            };
            let key = key_of(p);
            self.tally(p, &key)?;
            sources::save(&self.conn, &key, &rec).map_err(|e| self.db_error(e, "cannot write"))?;
        }
        self.counts.files_read += paths.len() as u64;
        self.commit_if_due(false)
    }

    /// Keeps what `usage` reads of the file at `path` (its key `key`), as it would find it:
    /// in a standard place, or given.
    fn tally(&mut self, path: &Path, key: &str) -> anyhow::Result<()> {
        let found = match self.places.get(path) {
            Some(f) => f.clone(),
            None => crate::usage::homes::given(&[path.to_path_buf()])
                .pop()
                .unwrap_or(Found {
                    path: path.to_path_buf(),
                    agent: None,
                    project: None,
                }),
        };
        super::tally::save(&self.conn, key, &found, &mut self.tally_buf)
            .map_err(|e| self.db_error(e, "cannot store (the batch was rolled back)"))
    }

    /// [`Store::read`] of a file (or a conversation's files); `None` when it was not read to
    /// its end (a signal, an input error): then its record is not written, and the next run
    /// reads it again from where its record says (the events stored of it meanwhile are
    /// there already, and are not stored twice). A database error rolls the batch back.
    ///
    /// No savepoint is taken around a file: one made SQLite copy every page the file
    /// changed into its statement journal (14% of a first store's time), and the events of a
    /// file read in part are what a whole read gives for those lines (the same ids), so
    /// keeping them without the record changes nothing the next run ends with.
    fn read_file(
        &mut self,
        lines: SourceLines<'_>,
        name: &str,
        skip: u64,
        opts: &Options,
        diag: &mut Diag,
    ) -> anyhow::Result<Option<Outcome>> {
        let read = match self.read(lines, name, false, skip, opts, diag) {
            Ok(r) => r,
            Err(e) => {
                self.rollback();
                return Err(e);
            }
        };
        if crate::signals::caught().is_some() || read.failed {
            return Ok(None);
        }
        Ok(Some(read))
    }

    /// Takes back the events the end of a file's last read inferred (their keys).
    fn retract(&mut self, keys: &[(String, String)]) -> anyhow::Result<()> {
        for (session, id) in keys {
            self.conn
                .prepare_cached("DELETE FROM events WHERE session_id = ?1 AND id = ?2")
                .and_then(|mut st| st.execute([session, id]))
                .map_err(|e| self.db_error(e, "cannot write"))?;
        }
        Ok(())
    }

    /// Converts the lines of `rdr` and stores their events, except those of the first `skip`
    /// lines (stored by an earlier run: they are converted only so that the converter
    /// remembers what a whole read remembers, and the events after them come out as in a
    /// whole read, with the same ids). `live` (a pipe): commits whenever the next line is not
    /// there yet or the batch is [`BATCH`] old. A database error ends the run (`Err`, the
    /// batch rolled back by the caller); an input error is reported and ends this input
    /// (`failed`).
    fn read(
        &mut self,
        mut rdr: SourceLines<'_>,
        name: &str,
        live: bool,
        skip: u64,
        opts: &Options,
        diag: &mut Diag,
    ) -> anyhow::Result<Outcome> {
        let mut result = Outcome::default();
        let conn = &self.conn;
        let ins = RefCell::new(Inserter::new(conn).map_err(|e| self.db_error(e, "cannot write"))?);
        let busy = || io::Error::other("internal error: the store was fed while it was busy");
        let mut tap = |ev: &Event| match ins.try_borrow_mut() {
            Ok(mut i) => i.event(ev),
            Err(_) => Err(busy()),
        };
        let mut out = Out::new(Vec::new());
        let mut conv = Converter::new(opts, &mut out);
        conv.tap(&mut tap);
        let mut buf = Vec::with_capacity(64 * 1024);
        let mut commit_now = false;
        loop {
            let line = match rdr.next_line(&mut buf) {
                Ok(Some(l)) => l,
                Ok(None) => break,
                Err(e) => {
                    diag.io_error(rdr.name(), &e);
                    result.failed = true;
                    break;
                }
            };
            let lineno = rdr.lineno();
            let unterminated = rdr.unterminated();
            let storing = lineno > skip;
            ins.try_borrow_mut().map_err(|_| busy())?.storing = storing;
            let converted = conv.input_line(line, &buf, lineno, unterminated, rdr.name(), diag);
            let mut i = ins.try_borrow_mut().map_err(|_| busy())?;
            if let Some(e) = i.failed.take() {
                return Err(self.db_error(e, "cannot store (the batch was rolled back)"));
            }
            converted?;
            // InsightsEvents passed through.
            let out = conv.out();
            out.flush().context("cannot convert")?;
            let written = out.w.get_mut();
            if !storing {
                written.clear();
            } else if !written.is_empty() {
                let fallback = format!(
                    "line-{:016x}",
                    crate::ids::hash_pair("", &String::from_utf8_lossy(&buf))
                );
                for (k, l) in written
                    .split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                    .enumerate()
                {
                    i.line(l, &format!("{fallback}:{k}")).map_err(|e| {
                        self.db_error(e, "cannot store (the batch was rolled back)")
                    })?;
                }
                written.clear();
            }
            if !unterminated {
                result.whole_lines = rdr.lineno();
            }
            if live && i.added_since_commit > 0 {
                let idle = !rdr.has_buffered_line();
                commit_now = idle || self.open.is_some_and(|t| t.elapsed() >= BATCH);
            }
            drop(i);
            if commit_now {
                commit_now = false;
                // The statements stay prepared across the commit; none is running.
                if let Err(e) = self.conn.execute_batch("COMMIT; BEGIN IMMEDIATE") {
                    return Err(self.db_error(e, "cannot commit (the batch was rolled back)"));
                }
                self.open = Some(Instant::now());
                ins.try_borrow_mut().map_err(|_| busy())?.added_since_commit = 0;
            }
        }
        if crate::signals::caught().is_none() && !result.failed {
            {
                let mut i = ins.try_borrow_mut().map_err(|_| busy())?;
                i.storing = true;
                i.closing = Some(Vec::new());
            }
            let closed = conv.close_input(rdr.lineno(), rdr.name(), diag);
            let mut i = ins.try_borrow_mut().map_err(|_| busy())?;
            result.closing = i.closing.take().unwrap_or_default();
            if let Some(e) = i.failed.take() {
                return Err(self.db_error(e, "cannot store (the batch was rolled back)"));
            }
            closed.context("cannot convert")?;
            drop(i);
            let (n, raw) = (conv.stats.provider_lines, conv.stats.provider_raw);
            let forgot = conv.forgotten();
            crate::convert::end_input(opts, name, n, raw, forgot, diag);
        }
        result.seq = conv.seq();
        drop(conv);
        let i = ins.into_inner();
        self.counts.events += i.events;
        self.counts.added += i.added;
        if i.added > 0 {
            self.dirty = true;
        }
        Ok(result)
    }
}

/// What [`Store::read`] read.
#[derive(Debug, Default)]
struct Outcome {
    /// Lines with a line end read (counted from the offset read from).
    whole_lines: u64,
    /// The last `seq` given.
    seq: u64,
    /// The input could not be read to its end.
    failed: bool,
    /// The keys of the events the end of the input added (inferred ends of what it left
    /// open), taken back when the file goes on.
    closing: Vec<(String, String)>,
}

/// The statements that insert events, and what they did.
struct Inserter<'c> {
    conn: &'c Connection,
    /// An event the converter made: its members given.
    made: CachedStatement<'c>,
    /// An InsightsEvent line: its members read by SQLite.
    line: CachedStatement<'c>,
    json: Vec<u8>,
    /// Whether events are stored (not while the lines an earlier run stored are converted
    /// again).
    storing: bool,
    /// When set, the keys of the events added are noted here (the end of an input).
    closing: Option<Vec<(String, String)>>,
    /// The database error that stopped the tap (the converter sees only an `io::Error`).
    failed: Option<rusqlite::Error>,
    events: u64,
    added: u64,
    added_since_commit: u64,
}

impl<'c> Inserter<'c> {
    fn new(conn: &'c Connection) -> rusqlite::Result<Self> {
        Ok(Inserter {
            conn,
            made: conn.prepare_cached(
                "INSERT OR IGNORE INTO events
                   (session_id, id, turn_id, seq, time, provider, event, call_id, json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,
                         CASE WHEN ?9 THEN json_extract(?8, '$.callId') END, ?8)",
            )?,
            line: conn.prepare_cached(
                "INSERT OR IGNORE INTO events
                   (session_id, id, turn_id, seq, time, provider, event, call_id, json)
                 SELECT coalesce(json_extract(j, '$.sessionId'), ''),
                        coalesce(nullif(json_extract(j, '$.id'), ''), ?2),
                        json_extract(j, '$.turnId'), json_extract(j, '$.seq'),
                        json_extract(j, '$.timestamp'), json_extract(j, '$.provider'),
                        coalesce(json_extract(j, '$.event'), ''), json_extract(j, '$.callId'), j
                 FROM (SELECT ?1 AS j)",
            )?,
            json: Vec::with_capacity(4096),
            storing: true,
            closing: None,
            failed: None,
            events: 0,
            added: 0,
            added_since_commit: 0,
        })
    }

    /// Inserts an event the converter made; a database error is kept in `failed`.
    fn event(&mut self, ev: &Event) -> io::Result<()> {
        if !self.storing {
            return Ok(());
        }
        self.json.clear();
        crate::json_writer::write(&mut self.json, ev).map_err(io::Error::other)?;
        let json = std::str::from_utf8(&self.json).map_err(io::Error::other)?;
        // SQLite reads the JSON for `callId` only where it is (a tool's, a permission's
        // event): most events have none, and parsing each one again was a third of the time.
        let call = memchr::memmem::find(json.as_bytes(), b"\"callId\"").is_some();
        let r = self.made.execute(rusqlite::params![
            ev.session_id.as_ref(),
            ev.id.as_ref(),
            ev.turn_id.as_deref(),
            ev.seq as i64,
            ev.timestamp.as_deref(),
            ev.provider,
            ev.event,
            json,
            call,
        ]);
        let r = or_deep(r, self.conn, json, &ev.id);
        match self.counted(r) {
            Ok(added) => {
                if let (true, Some(keys)) = (added, self.closing.as_mut()) {
                    keys.push((ev.session_id.to_string(), ev.id.to_string()));
                }
                Ok(())
            }
            Err(e) => {
                self.failed = Some(e);
                Err(io::Error::other("the store failed"))
            }
        }
    }

    /// Inserts an InsightsEvent line; `fallback` is its id when it has none.
    fn line(&mut self, line: &[u8], fallback: &str) -> rusqlite::Result<()> {
        let text = String::from_utf8_lossy(line);
        let r = self
            .line
            .execute(rusqlite::params![text.as_ref(), fallback]);
        let r = or_deep(r, self.conn, &text, fallback);
        self.counted(r).map(|_| ())
    }

    /// Counts an insert; whether it added the event.
    fn counted(&mut self, r: rusqlite::Result<usize>) -> rusqlite::Result<bool> {
        let n = r? as u64;
        self.events += 1;
        self.added += n;
        self.added_since_commit += n;
        Ok(n > 0)
    }
}

/// `r`, the insert of an event's JSON `text`, or when SQLite's JSON functions refused the
/// text (it nests deeper than their 1000 levels, which the converter passes through), the
/// insert of its members read here instead.
fn or_deep(
    r: rusqlite::Result<usize>,
    conn: &Connection,
    text: &str,
    fallback: &str,
) -> rusqlite::Result<usize> {
    match r {
        Err(rusqlite::Error::SqliteFailure(e, Some(m)))
            if e.code == rusqlite::ErrorCode::Unknown && m.contains("JSON") => {}
        r => return r,
    }
    let members = top_members(text).unwrap_or_default();
    let get = |name: &str| members.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let string = |name: &str| get(name).and_then(|v| serde_json::from_str::<String>(v).ok());
    let seq = get("seq").and_then(|v| v.parse::<i64>().ok());
    let mut st = conn.prepare_cached(
        "INSERT OR IGNORE INTO events
           (session_id, id, turn_id, seq, time, provider, event, call_id, json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    st.execute(rusqlite::params![
        string("sessionId").unwrap_or_default(),
        string("id")
            .filter(|i| !i.is_empty())
            .unwrap_or_else(|| fallback.to_owned()),
        string("turnId"),
        seq,
        string("timestamp"),
        string("provider"),
        string("event").unwrap_or_default(),
        string("callId"),
        text,
    ])
}

/// The top-level members of a JSON object (name without its quotes, value text), at any
/// depth of nesting below them: `None` for what is not one object. Names with escapes are
/// kept as written (the members read of it have none).
fn top_members(text: &str) -> Option<Vec<(&str, &str)>> {
    let b = text.as_bytes();
    let mut i = text.find('{')? + 1;
    let mut out = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    // The end of the string that starts at `i` (its closing quote's index).
    let string_end = |mut i: usize| -> Option<usize> {
        i += 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' => return Some(i),
                _ => i += 1,
            }
        }
        None
    };
    loop {
        skip_ws(&mut i);
        match b.get(i)? {
            b'}' => return Some(out),
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let kend = string_end(i)?;
        let key = &text[i + 1..kend];
        i = kend + 1;
        skip_ws(&mut i);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        skip_ws(&mut i);
        let start = i;
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'"' => i = string_end(i)?,
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => break,
                b'}' | b']' => depth -= 1,
                b',' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        out.push((key, text[start..i].trim_end()));
    }
}

/// The key of a file in `sources`: its absolute path (`store x` and `store ./x` are one file).
pub fn key_of(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// A database error in words: a full disk and an I/O error said so.
pub fn db_words(e: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => format!("the disk is full ({e})"),
        Some(ErrorCode::SystemIoFailure) => format!("an I/O error ({e})"),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => {
            format!("another writer held the database too long ({e})")
        }
        Some(ErrorCode::ReadOnly) => format!("the database is read-only ({e})"),
        _ => e.to_string(),
    }
}
