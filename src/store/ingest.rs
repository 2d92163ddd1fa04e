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

use super::checkpoint::Checkpoints;
use super::sources::{self, Plan, Record};
use super::tellers::{Form, Tellers, Turns};
use crate::convert::{Converter, Options};
use crate::diag::Diag;
use crate::event::Event;
use crate::input::{Source, Stamp};
use crate::lines::SourceLines;
use crate::output::Out;
use crate::usage::homes::Found;
use anyhow::Context as _;
use rusqlite::{CachedStatement, Connection, OptionalExtension as _};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The longest a batch stays open while there is something to commit.
pub const BATCH: Duration = Duration::from_millis(200);

/// The files of the standard places by path, with what their place says. Keyed by the path's
/// bytes and hashed with [`Hash64`](crate::ids::Hash64): a store again of a large home looks
/// every path up, and a `Path` hashes component by component.
pub type Places =
    HashMap<std::ffi::OsString, Place, std::hash::BuildHasherDefault<crate::ids::Hash64>>;

/// A [`Found`] file without its path (the key of [`Places`] holds it: one copy of tens of
/// thousands of paths, not two), and whether it is converted.
#[derive(Debug, Clone)]
pub struct Place {
    pub agent: Option<crate::usage::homes::Agent>,
    pub project: Option<String>,
    pub stamp: Option<Stamp>,
    /// [`Found::converts`].
    pub converts: bool,
}

impl Place {
    /// The entry of `f` in [`Places`].
    pub fn of(f: Found) -> (std::ffi::OsString, Place) {
        let converts = f.converts();
        let place = Place {
            agent: f.agent,
            project: f.project,
            stamp: f.stamp,
            converts,
        };
        (f.path.into_os_string(), place)
    }
}

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
    /// Events not stored because another form of their recording told their turn
    /// ([`super::tellers`]).
    pub told_elsewhere: u64,
}

/// The database and the batch open on it.
pub struct Store {
    pub conn: Connection,
    /// Since when the open batch has been open; `None` when none is.
    open: Option<Instant>,
    pub counts: Counts,
    name: String,
    /// The files of the standard places, with what their place says (whose they are, their
    /// project folder): `usage` reads them so ([`super::tally`]).
    pub places: Places,
    /// The database's file (the reading thread opens it read-only).
    path: PathBuf,
    /// A new database being built, written without a log and seen by no one else until it
    /// is published (src/store/fresh.rs): nothing to look up, nothing to checkpoint.
    building: bool,
    /// Every source's record, read before the sources were known ([`Store::preload`]).
    records: Option<sources::Records>,
    /// The records the last [`Store::store_all`] compared the sources with: let go by
    /// [`Store::let_go`].
    compared: Option<sources::Records>,
}

impl Store {
    pub fn new(conn: Connection, path: &Path) -> Store {
        Store {
            conn,
            open: None,
            counts: Counts::default(),
            name: path.display().to_string(),
            places: Places::default(),
            path: path.to_path_buf(),
            building: false,
            records: None,
            compared: None,
        }
    }

    /// Lets go of what the last run found and compared (the sources' places and records):
    /// freed now when `now` (before a merge, which holds every file's facts), else left to
    /// the process's exit, which `store` reaches next (tens of thousands of paths are
    /// not freed one by one).
    pub fn let_go(&mut self, now: bool) {
        let found = (std::mem::take(&mut self.places), self.compared.take());
        if !now {
            std::mem::forget(found);
        }
    }

    /// Reads every source's record now, for the next [`Store::store_all`]: `store` does it
    /// while the standard places are walked. A record that changes meanwhile is found
    /// changed by the writer, as with records read at the start of `store_all`.
    pub fn preload(&mut self) -> anyhow::Result<()> {
        if !self.building {
            let all = sources::all(&self.conn).map_err(|e| self.db_error(e, "cannot read"))?;
            self.records = Some(all);
        }
        Ok(())
    }

    /// The store of a new database being built ([`super::fresh`]) for `db`.
    pub fn building(conn: Connection, db: &Path) -> Store {
        Store {
            building: true,
            ..Store::new(conn, db)
        }
    }

    /// Commits the open batch, if any.
    pub fn commit(&mut self) -> anyhow::Result<()> {
        if self.open.take().is_some() {
            if let Err(e) = self.conn.execute_batch("COMMIT") {
                let _ = self.conn.execute_batch("ROLLBACK");
                return Err(self.db_error(e, &format!("cannot commit ({})", self.undone())));
            }
        }
        Ok(())
    }

    /// Merges the usage facts of every file and keeps them, when the run changed them
    /// ([`super::tally::keep_merged`]): `usage --db` then reads one row. Not after a signal:
    /// the run stops. The row is a shortcut (`usage --db` merges the files' facts without it):
    /// when it cannot be made, that is a warning, and no row is left (a database being built
    /// has no journal to roll back, so the row is deleted); an error only when it cannot be
    /// deleted either.
    pub fn keep_merged(&self, diag: &Diag) -> anyhow::Result<()> {
        if !self.merge_wanted() {
            return Ok(());
        }
        // The pages the run cached, and the memory freed, are let go first: the merge holds
        // every entry.
        let shrunk = self
            .conn
            .execute_batch("PRAGMA cache_size = -2048; PRAGMA shrink_memory;");
        give_back_memory();
        let Err(e) = shrunk.and_then(|()| super::tally::keep_merged(&self.conn)) else {
            return Ok(());
        };
        diag.warning(
            &self.name,
            &format!(
                "cannot keep the merged usage facts ({}): `usage --db` merges them each time",
                db_words(&e)
            ),
        );
        if self.building {
            self.conn
                .execute("DELETE FROM usage_merged", [])
                .map_err(|e| self.db_error(e, "cannot write (the new database was not made)"))?;
        }
        Ok(())
    }

    /// Whether [`Store::keep_merged`] has a merge to make: no signal came, and the merged row
    /// is missing or not this insights' (an error reading it: yes, and the merge tells it).
    pub fn merge_wanted(&self) -> bool {
        crate::signals::caught().is_none()
            && !super::tally::merged_current(&self.conn).unwrap_or(false)
    }

    /// What an error of the database undid: the batch, or the whole of a new database
    /// being built (src/store/fresh.rs: nothing is published).
    fn undone(&self) -> &'static str {
        if self.building {
            "the new database was not made"
        } else {
            "the batch was rolled back"
        }
    }

    /// Rolls the open batch back (after an error).
    pub fn rollback(&mut self) {
        if self.open.take().is_some() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    /// A database error, named with the database and what was being done.
    fn db_error(&self, e: rusqlite::Error, doing: &str) -> anyhow::Error {
        anyhow::anyhow!("{}: {doing}: {}", self.name, db_words(&e))
    }

    /// Stores `sources`, each once: a file from where its record says (or not at all when it
    /// did not change), a conversation of several files whole when any of them changed,
    /// standard input whole. Stops after the source being read when a signal came.
    ///
    /// Three threads. One reads: it looks each source's record up (on a read-only connection
    /// of its own), reads and converts what is new and writes each event's JSON
    /// ([`produce`]). Another reads the files again as `usage` does ([`read_facts`]), a file
    /// behind. This one writes: for each source it looks the record up
    /// again inside its transaction, and when it is still what the reader planned from, takes
    /// back what the last read inferred, inserts the events and saves the record. A record
    /// that changed meanwhile (another writer stored the file, or it came twice) leaves the
    /// source to what stored it. SQLite's part is the larger, so reading and converting cost
    /// no time beside it; the reader runs ahead by up to [`CHUNKS`] chunks.
    pub fn store_all(
        &mut self,
        sources: &[Source],
        opts: &Options,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        // The reader's connection sees what is committed.
        self.commit()?;
        // A database being built has no records yet, and no other connection can read it.
        let ro = if self.building {
            None
        } else {
            let ro = Connection::open_with_flags(
                &self.path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                    | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|e| self.db_error(e, "cannot open"))?;
            ro.busy_timeout(super::schema::BUSY_TIMEOUT)
                .map_err(|e| self.db_error(e, "cannot open"))?;
            Some(ro)
        };
        // Many sources: their records read at once. A record that changes meanwhile (another
        // writer stores the file) is found changed by the writer, which then leaves the
        // source, as when it changes between a lookup and the writer.
        let records = match (self.records.take(), &ro) {
            (Some(all), _) => Some(all),
            (None, Some(ro)) if sources.len() > PRELOAD => {
                Some(sources::all(ro).map_err(|e| self.db_error(e, "cannot read"))?)
            }
            _ => None,
        };
        let (tx, rx) = mpsc::sync_channel::<Chunk>(CHUNKS);
        let (spare_tx, spare_rx) = mpsc::channel::<Chunk>();
        let places = std::mem::take(&mut self.places);
        // Termination signals go to the reading thread, whose blocking read (a pipe) they
        // interrupt; it then ends after the line it read (src/signals.rs).
        let blocked = crate::signals::block();
        let (facts_tx, facts_rx) = mpsc::channel::<FactsJob>();
        let r = std::thread::scope(|s| {
            std::thread::Builder::new()
                .name("store-usage".into())
                .spawn_scoped(s, move || read_facts(facts_rx))
                .context("cannot start a thread")?;
            let reader = Reader {
                records: records.as_ref(),
                ro,
                places: &places,
                opts,
                tx,
                facts: facts_tx,
                spare: spare_rx,
                chunk: RefCell::new(Chunk::default()),
                unchanged: Default::default(),
            };
            let producer = std::thread::Builder::new()
                .name("store-read".into())
                .spawn_scoped(s, move || {
                    crate::signals::unblock();
                    produce(reader, sources, diag)
                })
                .context("cannot start a thread")?;
            let mut checkpoints = if self.building {
                Checkpoints::none(s)
            } else {
                Checkpoints::start(s, &self.path, &self.conn)
            };
            let stored = self.insert_all(&rx, &spare_tx, &mut checkpoints);
            checkpoints.end(&self.conn);
            // A database error: the reader's next chunk finds no one to take it, and it stops.
            drop(rx);
            let read = producer
                .join()
                .map_err(|_| anyhow::anyhow!("internal error: the reading thread panicked"))?;
            stored?;
            read
        });
        drop(blocked);
        self.places = places;
        self.compared = records;
        if r.is_err() {
            self.rollback();
        }
        r
    }

    /// Applies what [`produce`] sends until it ends. A database error rolls the batch back
    /// at once (the reading thread may be waiting for a pipe's next line meanwhile).
    fn insert_all(
        &mut self,
        rx: &mpsc::Receiver<Chunk>,
        spare: &mpsc::Sender<Chunk>,
        checkpoints: &mut Checkpoints<'_>,
    ) -> anyhow::Result<()> {
        let r = self.apply(rx, spare, checkpoints);
        if r.is_err() {
            self.rollback();
        }
        r
    }

    fn apply(
        &mut self,
        rx: &mpsc::Receiver<Chunk>,
        spare: &mpsc::Sender<Chunk>,
        checkpoints: &mut Checkpoints<'_>,
    ) -> anyhow::Result<()> {
        let undone = self.undone();
        let Store {
            conn,
            open,
            counts,
            name,
            ..
        } = self;
        let conn = &*conn;
        let err =
            |e: rusqlite::Error, doing: &str| anyhow::anyhow!("{name}: {doing}: {}", db_words(&e));
        let storing = format!("cannot store ({undone})");
        let storing = storing.as_str();
        // Opens a batch unless one is open (waiting for another writer's, up to the busy
        // timeout).
        let begin = |open: &mut Option<Instant>| -> anyhow::Result<()> {
            if open.is_none() {
                conn.execute_batch("BEGIN IMMEDIATE")
                    .map_err(|e| err(e, "cannot begin a transaction"))?;
                *open = Some(Instant::now());
            }
            Ok(())
        };
        // Commits the open batch (rolled back when that fails).
        // The log is checkpointed on a thread of its own (src/store/checkpoint.rs).
        let mut commit = |open: &mut Option<Instant>| -> anyhow::Result<()> {
            if open.take().is_some() {
                checkpoints.committing();
                if let Err(e) = conn.execute_batch("COMMIT") {
                    let _ = conn.execute_batch("ROLLBACK");
                    return Err(err(e, &format!("cannot commit ({undone})")));
                }
                checkpoints.committed(conn);
            }
            Ok(())
        };
        let mut ins = Inserter::new(conn).map_err(|e| err(e, "cannot write"))?;
        // Whether the source being applied is left (its record changed since it was planned).
        let mut skipping = false;
        while let Ok(chunk) = rx.recv() {
            for item in &chunk.items {
                match item {
                    Item::Begin(planned) => {
                        // The records are looked up again inside the batch (standard input
                        // has none: its batch begins with its first event).
                        if !planned.records.is_empty() {
                            begin(open)?;
                        }
                        skipping = false;
                        for (key, rec) in &planned.records {
                            let now =
                                sources::lookup(conn, key).map_err(|e| err(e, "cannot read"))?;
                            skipping |= now != *rec;
                        }
                        if !skipping {
                            retract(conn, &planned.retract).map_err(|e| err(e, "cannot write"))?;
                        }
                        ins.closing = None;
                        if !ins.waiting.items.is_empty() {
                            begin(open)?;
                        }
                        // A recording read for the first time; a file read before goes on.
                        let fresh = planned.records.iter().all(|(_, r)| r.is_none());
                        ins.next_recording(fresh).map_err(|e| err(e, storing))?;
                    }
                    _ if skipping => {
                        if let Item::End(end) = item {
                            counts.files_unchanged += end.read;
                            skipping = false;
                        }
                    }
                    Item::Event(row) => {
                        begin(open)?;
                        ins.event(&chunk.text, row).map_err(|e| err(e, storing))?
                    }
                    Item::Line {
                        json,
                        fallback,
                        id,
                        session,
                        form,
                        nth,
                    } => {
                        begin(open)?;
                        let t = &chunk.text;
                        let (json, id) = (&t[json.0..json.1], &t[id.0..id.1]);
                        ins.line(json, fallback, id, &t[session.0..session.1], *form, *nth)
                            .map_err(|e| err(e, storing))?
                    }
                    Item::LineEnd { idle } => {
                        // A pipe: commit whenever the next line is not there yet, or the batch
                        // is BATCH old (the statements stay prepared; none is running). An
                        // idle pipe holds no transaction, so another writer can go on.
                        let due = *idle || open.is_some_and(|t| t.elapsed() >= BATCH);
                        if ins.added_since_commit > 0 && due {
                            commit(open)?;
                            ins.added_since_commit = 0;
                            ins.tellers.committed();
                        }
                    }
                    Item::Closing => {
                        if !ins.waiting.items.is_empty() {
                            begin(open)?;
                        }
                        ins.flush_unnamed().map_err(|e| err(e, storing))?;
                        ins.closing = Some(Vec::new())
                    }
                    Item::End(end) => {
                        if !end.records.is_empty() || !ins.waiting.items.is_empty() {
                            begin(open)?;
                        }
                        ins.next_recording(false).map_err(|e| err(e, storing))?;
                        let closing = ins.closing.take().unwrap_or_default();
                        for (k, (key, rec, facts)) in end.records.iter().enumerate() {
                            let facts = facts.recv().map_err(|_| {
                                anyhow::anyhow!(
                                    "internal error: the thread reading for usage stopped"
                                )
                            })?;
                            super::tally::put(conn, key, &facts).map_err(|e| err(e, storing))?;
                            if end.closing && k == 0 {
                                let rec = Record {
                                    closing: closing.clone(),
                                    ..rec.clone()
                                };
                                sources::save(conn, key, &rec)
                            } else {
                                sources::save(conn, key, rec)
                            }
                            .map_err(|e| err(e, "cannot write"))?;
                        }
                        counts.files_read += end.read;
                        counts.files_unchanged += end.unchanged;
                        let due = open.is_some_and(|t| t.elapsed() >= BATCH);
                        if end.commit || due {
                            commit(open)?;
                            ins.added_since_commit = 0;
                            ins.tellers.committed();
                        }
                    }
                }
            }
            // Its buffers go back for the next chunk (the reader may have ended already); one
            // that a long line grew goes back to a chunk's size.
            let mut chunk = chunk;
            if chunk.text.capacity() > 2 * CHUNK_BYTES {
                chunk.text = Vec::new();
            }
            let _ = spare.send(chunk);
        }
        counts.events += ins.events;
        counts.added += ins.added;
        counts.told_elsewhere += ins.told_elsewhere;
        Ok(())
    }
}

/// Takes back the events the end of a file's last read inferred (their keys).
fn retract(conn: &Connection, keys: &[(String, String)]) -> rusqlite::Result<()> {
    for (session, id) in keys {
        conn.prepare_cached(
            "DELETE FROM events WHERE id = ?2
               AND sid = (SELECT sid FROM session_ids WHERE session_id = ?1)",
        )?
        .execute([session, id])?;
    }
    Ok(())
}

/// How many bytes of a recording's events may wait for it to name their session (a stream's
/// handshake is a few KiB); past that they are stored as they are.
const WAITING_BYTES: usize = 1 << 20;

/// Above this many sources, the records are read all at once rather than each looked up.
const PRELOAD: usize = 64;

/// How many chunks the reader may be ahead of the writer: enough that neither waits for the
/// other often, few enough that memory stays small (at most about 4 MiB).
const CHUNKS: usize = 16;

/// A chunk is sent once it holds this many bytes of JSON, or this many items, or the ends of
/// this many files (each with what `usage` reads of it, a few KiB packed: files only `usage`
/// reads are many and small, and 1,024 items of them held 40 MiB).
const CHUNK_BYTES: usize = 256 * 1024;
const CHUNK_ITEMS: usize = 1024;
const CHUNK_FILES: usize = 64;

/// Items for the writing thread: their text in one buffer, each item naming its parts.
#[derive(Default)]
struct Chunk {
    text: Vec<u8>,
    items: Vec<Item>,
    /// The files whose usage facts its items wait for.
    files: usize,
}

/// A part of [`Chunk::text`]: start and end.
#[derive(Clone, Copy)]
struct Span(usize, usize);

/// An event the converter made.
#[derive(Clone, Copy)]
struct Row {
    session: Span,
    id: Span,
    turn: Option<Span>,
    seq: i64,
    time: Option<Span>,
    provider: &'static str,
    event: &'static str,
    json: Span,
    /// Whether the JSON has a `callId` (SQLite reads it from there).
    call: bool,
    /// Its recording's form, and the ordinal of its turn there ([`super::tellers`]).
    form: Form,
    nth: u32,
}

enum Item {
    /// A source is read: the records it was planned from, to be what they still are, and
    /// the keys of what its last read inferred, to take back.
    Begin(Box<Planned>),
    Event(Row),
    /// An InsightsEvent line passed through, and its id if it has none; its session, and
    /// the ordinal of its turn in its recording ([`super::tellers`]).
    Line {
        json: Span,
        fallback: String,
        id: Span,
        session: Span,
        form: Form,
        nth: u32,
    },
    /// A line of a pipe was converted; `idle`: the next one is not there yet (time to
    /// commit).
    LineEnd {
        idle: bool,
    },
    /// What follows is what the end of the input inferred.
    Closing,
    /// A source ends: what to keep of it.
    End(Box<Ended>),
}

/// What a source was planned from.
#[derive(Default)]
struct Planned {
    /// Each file's key and its record when looked up.
    records: Vec<(String, Option<Record>)>,
    retract: Vec<(String, String)>,
}

/// What to keep of a source.
#[derive(Default)]
struct Ended {
    /// Each file read to its end: its key, its record, what `usage` reads of it (read on
    /// a thread of its own, [`Reader::facts`]).
    records: Vec<(String, Record, Coming)>,
    /// The first record's `closing` is what the end of the input added.
    closing: bool,
    /// Files read, files unchanged.
    read: u64,
    unchanged: u64,
    /// Commit after it (standard input).
    commit: bool,
}

impl Chunk {
    fn put(&mut self, s: &str) -> Span {
        self.put_bytes(s.as_bytes())
    }

    fn put_bytes(&mut self, s: &[u8]) -> Span {
        let start = self.text.len();
        self.text.extend_from_slice(s);
        Span(start, self.text.len())
    }

    fn full(&self) -> bool {
        self.text.len() >= CHUNK_BYTES
            || self.items.len() >= CHUNK_ITEMS
            || self.files >= CHUNK_FILES
    }
}

/// What `usage` reads of a file, coming from the thread that reads it ([`Reader::facts`]).
type Coming = mpsc::Receiver<super::tally::Facts>;

/// A file for the thread that reads files as `usage` does, and where its facts go.
type FactsJob = (Found, mpsc::SyncSender<super::tally::Facts>);

/// Reads each file it is given as `usage` does, in turn, until the reader is gone.
fn read_facts(jobs: mpsc::Receiver<FactsJob>) {
    let mut buf = Vec::new();
    for (found, back) in jobs {
        // The writer may have stopped (a database error): then no one waits for it.
        let _ = back.send(super::tally::facts(&found, &mut buf));
    }
}

/// The reading side of [`Store::store_all`].
struct Reader<'a> {
    /// Where the records are looked up; none for a database being built (it has none).
    ro: Option<Connection>,
    /// Every record, read at the start when there are many sources ([`PRELOAD`]).
    records: Option<&'a sources::Records>,
    places: &'a Places,
    opts: &'a Options,
    tx: mpsc::SyncSender<Chunk>,
    /// To the thread that reads files as `usage` does ([`read_facts`]).
    facts: mpsc::Sender<FactsJob>,
    spare: mpsc::Receiver<Chunk>,
    chunk: RefCell<Chunk>,
    /// Files found unchanged, not yet told ([`Reader::unchanged`]).
    unchanged: std::cell::Cell<u64>,
}

/// Returns the heap memory freed so far to the system: glibc keeps it for the process
/// otherwise, and a first store's merge at its end would add to what the store no longer uses.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The writer is gone (it failed, and says why).
fn gone() -> io::Error {
    io::Error::other("the store stopped")
}

impl Reader<'_> {
    /// Adds an item; sends the chunk when it is full, or with `now`.
    fn push(&self, item: Item, now: bool) -> io::Result<()> {
        if matches!(item, Item::Begin(_)) {
            self.told()?;
        }
        let mut c = self
            .chunk
            .try_borrow_mut()
            .map_err(|_| io::Error::other("internal error: the store was fed while it was busy"))?;
        c.items.push(item);
        if now || c.full() {
            self.send(&mut c)?;
        }
        Ok(())
    }

    /// Sends the chunk, taking a spare one (or a new one) in its place.
    fn send(&self, c: &mut Chunk) -> io::Result<()> {
        let mut next = self.spare.try_recv().unwrap_or_default();
        next.text.clear();
        next.items.clear();
        next.files = 0;
        let full = std::mem::replace(c, next);
        self.tx.send(full).map_err(|_| gone())
    }

    /// The record of `key`, as committed (borrowed from the records read at the start: most
    /// files of a store again are unchanged, and their records are only compared).
    fn lookup(&self, key: &str) -> io::Result<Option<Cow<'_, Record>>> {
        match (&self.records, &self.ro) {
            (Some(all), _) => Ok(all.get(key).map(Cow::Borrowed)),
            (None, Some(ro)) => sources::lookup(ro, key)
                .map(|r| r.map(Cow::Owned))
                .map_err(io::Error::other),
            (None, None) => Ok(None),
        }
    }

    /// The file at `path` as `usage` finds it: in a standard place, or given.
    fn found(&self, path: &Path) -> Found {
        match self.places.get(path.as_os_str()) {
            Some(f) => Found {
                path: path.to_path_buf(),
                agent: f.agent,
                project: f.project.clone(),
                stamp: f.stamp,
            },
            None => crate::usage::homes::given(&[path.to_path_buf()])
                .pop()
                .unwrap_or(Found {
                    path: path.to_path_buf(),
                    agent: None,
                    project: None,
                    stamp: None,
                }),
        }
    }

    /// One source: planned, read, converted and sent.
    fn source(&self, src: &Source, diag: &mut Diag) -> anyhow::Result<()> {
        match src {
            Source::Stdin => {
                let name = src.name();
                let Some(reader) = src.open_or_report(diag) else {
                    return Ok(());
                };
                // Sent now: what the sources before it left is committed while it waits.
                self.push(Item::Begin(Box::default()), true)?;
                let lines = SourceLines::one(reader, name.clone(), self.opts.max_line);
                self.convert(lines, &name, true, 0, None, diag)?;
                let end = Ended {
                    commit: true,
                    ..Ended::default()
                };
                Ok(self.push(Item::End(Box::new(end)), true)?)
            }
            Source::File(path) => match self.places.get(path.as_os_str()) {
                // Before the test for OpenCode's database: Kilo's, Goose's and Hermes' files
                // are SQLite databases too, which only `usage` reads.
                Some(f) if !f.converts => self.usage_only(path, f.stamp, diag),
                // A session file the walk found (its place says it is not a database).
                Some(f) if path.extension().is_some_and(|x| x == "jsonl") => {
                    self.file(path, f.stamp, Some(Form::File), diag)
                }
                // OpenCode's database: read as `insights` reads it (`Source::open`).
                _ if crate::providers::opencode_db::is_database(path) => {
                    self.database(src, path, diag)
                }
                _ => self.file(path, None, None, diag),
            },
            Source::Group(paths) => self.group(src, paths, diag),
        }
    }

    /// `path`'s size and modification time now (the walk's `stamp` when it has one, else
    /// `stat`), and its record as committed; `None` when it cannot be looked at (reported).
    #[allow(clippy::type_complexity)]
    fn looked_up(
        &self,
        path: &Path,
        key: &str,
        stamp: Option<Stamp>,
        stat: fn(&Path) -> io::Result<(u64, i64)>,
        diag: &mut Diag,
    ) -> anyhow::Result<Option<((u64, i64), Option<Cow<'_, Record>>)>> {
        let now = match stamp.map_or_else(|| stat(path), |st| Ok((st.size, st.mtime_ns))) {
            Ok(s) => s,
            Err(e) => {
                diag.io_error(&path.display().to_string(), &e);
                return Ok(None);
            }
        };
        Ok(Some((now, self.lookup(key)?)))
    }

    /// Says that `n` files did not change: counted here, and told the writer before the
    /// next source is read or at the end ([`Reader::told`]), in one item for many files.
    fn unchanged(&self, n: u64) -> io::Result<()> {
        self.unchanged.set(self.unchanged.get() + n);
        Ok(())
    }

    /// Tells the writer of the files found unchanged since it was last told.
    fn told(&self) -> io::Result<()> {
        let n = self.unchanged.replace(0);
        if n == 0 {
            return Ok(());
        }
        let end = Ended {
            unchanged: n,
            ..Ended::default()
        };
        self.push(Item::End(Box::new(end)), false)
    }

    /// A file, read from where its record says; `form` as [`Reader::convert`] takes it.
    fn file(
        &self,
        path: &Path,
        stamp: Option<Stamp>,
        form: Option<Form>,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        let key = key_of(path);
        let Some(((size, mtime), rec)) = self.looked_up(path, &key, stamp, sources::stat, diag)?
        else {
            return Ok(());
        };
        let plan = match sources::plan(path, rec.as_deref(), size, mtime) {
            Ok(p) => p,
            Err(e) => {
                diag.io_error(&path.display().to_string(), &e);
                return Ok(());
            }
        };
        let Plan::From { lines, .. } = plan else {
            return Ok(self.unchanged(1)?);
        };
        let name = path.display().to_string();
        let rec = rec.map(Cow::into_owned);
        let (reader, ends) = match sources::open_at(path, 0, size) {
            Ok(r) => r,
            Err(e) => {
                diag.io_error(&name, &e);
                return Ok(());
            }
        };
        // What the end of the last read inferred (the end of a turn the file had left open)
        // is taken back: the file went on, and its end is inferred again where it ends now.
        let retract = match (&rec, lines > 0) {
            (Some(r), true) => r.closing.clone(),
            _ => Vec::new(),
        };
        let planned = Planned {
            records: vec![(key.clone(), rec)],
            retract,
        };
        self.push(Item::Begin(Box::new(planned)), false)?;
        let lines_in = SourceLines::one(Box::new(reader), name.clone(), self.opts.max_line);
        let read = self.convert(lines_in, &name, false, lines, form, diag)?;
        let mut end = Ended::default();
        if let Some(read) = read {
            let head_len = size.min(sources::HEAD);
            match sources::head_hash(path, head_len) {
                Ok(head_hash) => {
                    let rec = Record {
                        size,
                        mtime_ns: mtime,
                        offset: ends.get(),
                        lines: read.whole_lines,
                        seq: read.seq,
                        head_len,
                        head_hash,
                        closing: Vec::new(),
                    };
                    let facts = self.facts(path)?;
                    end.records.push((key, rec, facts));
                    end.closing = true;
                    end.read = 1;
                }
                Err(e) => diag.io_error(&name, &e),
            }
        }
        Ok(self.push(Item::End(Box::new(end)), false)?)
    }

    /// What `usage` reads of the file at `path`: read on a thread of its own, while this one
    /// converts the next file; the writer takes it when it keeps the file's record.
    fn facts(&self, path: &Path) -> io::Result<Coming> {
        let (back, coming) = mpsc::sync_channel(1);
        self.facts.send((self.found(path), back)).map_err(|_| {
            io::Error::other("internal error: the thread reading for usage stopped")
        })?;
        self.chunk.borrow_mut().files += 1;
        Ok(coming)
    }

    /// OpenCode's database: its rows, as the lines `insights` reads them as, read whole when
    /// the database (or its write-ahead log) changed since the last run, never written to
    /// ([`sources`]). The events of rows stored before have their ids (each names its row) and
    /// are not stored again; the ends the last read inferred (a turn it left open) are taken
    /// back first and inferred again where the rows end now.
    fn database(&self, src: &Source, path: &Path, diag: &mut Diag) -> anyhow::Result<()> {
        let name = path.display().to_string();
        let key = key_of(path);
        let Some(((size, mtime), rec)) =
            self.looked_up(path, &key, None, sources::db_stat, diag)?
        else {
            return Ok(());
        };
        let rec = rec.map(Cow::into_owned);
        if rec
            .as_ref()
            .is_some_and(|r| r.size == size && r.mtime_ns == mtime)
        {
            return Ok(self.unchanged(1)?);
        }
        let Some(reader) = src.open_or_report(diag) else {
            return Ok(());
        };
        let retract = rec.as_ref().map(|r| r.closing.clone()).unwrap_or_default();
        let planned = Planned {
            records: vec![(key.clone(), rec)],
            retract,
        };
        self.push(Item::Begin(Box::new(planned)), false)?;
        let lines = SourceLines::one(reader, name.clone(), self.opts.max_line);
        let read = self.convert(lines, &name, false, 0, Some(Form::File), diag)?;
        let mut end = Ended::default();
        if let Some(read) = read {
            // No offset nor head: a database is read whole (its rows' ids say what is stored).
            let rec = Record {
                size,
                mtime_ns: mtime,
                offset: 0,
                lines: read.whole_lines,
                seq: read.seq,
                head_len: 0,
                head_hash: String::new(),
                closing: Vec::new(),
            };
            end.records.push((key, rec, self.facts(path)?));
            end.closing = true;
            end.read = 1;
        }
        Ok(self.push(Item::End(Box::new(end)), false)?)
    }

    /// A file only `usage` reads (an agent whose files `insights` does not convert: Amp's
    /// threads, pi's sessions, Goose's database…): its usage facts only, so that `usage --db`
    /// counts what `usage` does; read again whole when it changed.
    ///
    /// A database (Kilo's, Goose's, Hermes') counts its write-ahead log in ([`sources::db_stat`]):
    /// its new rows may be there only.
    fn usage_only(&self, path: &Path, stamp: Option<Stamp>, diag: &mut Diag) -> anyhow::Result<()> {
        let key = key_of(path);
        let (stamp, stat): (_, fn(&Path) -> io::Result<(u64, i64)>) =
            if path.extension().is_some_and(|x| x == "db") {
                (None, sources::db_stat)
            } else {
                (stamp, sources::stat)
            };
        let Some(((size, mtime), rec)) = self.looked_up(path, &key, stamp, stat, diag)? else {
            return Ok(());
        };
        if rec
            .as_ref()
            .is_some_and(|r| r.size == size && r.mtime_ns == mtime)
        {
            return Ok(self.unchanged(1)?);
        }
        let planned = Planned {
            records: vec![(key.clone(), rec.map(Cow::into_owned))],
            retract: Vec::new(),
        };
        self.push(Item::Begin(Box::new(planned)), false)?;
        let rec = Record {
            size,
            mtime_ns: mtime,
            ..Record::default()
        };
        let end = Ended {
            records: vec![(key, rec, self.facts(path)?)],
            read: 1,
            ..Ended::default()
        };
        Ok(self.push(Item::End(Box::new(end)), false)?)
    }

    /// A conversation kept in several files (a Claude Code session and its subagents'): its
    /// lines are merged by time, so it is read whole again when any file of it changed (the
    /// events read before are already stored); each file's record then says it was read to
    /// its end.
    fn group(&self, src: &Source, paths: &[PathBuf], diag: &mut Diag) -> anyhow::Result<()> {
        let mut stats = Vec::with_capacity(paths.len());
        let mut records = Vec::with_capacity(paths.len());
        let mut changed = false;
        for p in paths {
            let key = key_of(p);
            let rec = self.lookup(&key)?;
            let walked = self.places.get(p.as_os_str()).and_then(|f| f.stamp);
            let now = walked.map_or_else(|| sources::stat(p), |st| Ok((st.size, st.mtime_ns)));
            let Ok((size, mtime)) = now else {
                changed = true;
                records.push((key, rec));
                continue;
            };
            changed |= rec
                .as_ref()
                .is_none_or(|r| r.size != size || r.mtime_ns != mtime);
            records.push((key.clone(), rec));
            stats.push((p, key, size, mtime));
        }
        if !changed {
            return Ok(self.unchanged(paths.len() as u64)?);
        }
        let records = records
            .into_iter()
            .map(|(key, rec)| (key, rec.map(Cow::into_owned)))
            .collect();
        let name = src.name();
        let Some(lines) = src.lines_or_report(self.opts.max_line, diag) else {
            return Ok(());
        };
        let planned = Planned {
            records,
            retract: Vec::new(),
        };
        self.push(Item::Begin(Box::new(planned)), false)?;
        let read = self.convert(lines, &name, false, 0, Some(Form::File), diag)?;
        let mut end = Ended::default();
        if read.is_some() {
            for (p, key, size, mtime) in stats {
                let head_len = size.min(sources::HEAD);
                let Ok(head_hash) = sources::head_hash(p, head_len) else {
                    continue;
                };
                // Read whole: the offset is the size it had (a later change reads it whole
                // again).
                let rec = Record {
                    size,
                    mtime_ns: mtime,
                    offset: size,
                    head_len,
                    head_hash,
                    ..Record::default()
                };
                end.records.push((key, rec, self.facts(p)?));
            }
            end.read = paths.len() as u64;
        }
        Ok(self.push(Item::End(Box::new(end)), false)?)
    }

    /// Converts the lines of `rdr` and sends their events, except those of the first `skip`
    /// lines (stored by an earlier run: they are converted only so that the converter
    /// remembers what a whole read remembers, and the events after them come out as in a
    /// whole read, with the same ids). `live` (a pipe): sends each line's events as soon as
    /// the next line is not there yet. `None` when it was not read to its end (a signal, an
    /// input error, reported): then no record is kept, and the next run reads it again from
    /// where its record says (the events sent of it are stored, and not stored twice).
    /// `form`: the recording's form ([`super::tellers`]) when the caller knows it (a session
    /// file of a standard place), else told by its first line.
    #[allow(clippy::too_many_arguments)]
    fn convert(
        &self,
        mut rdr: SourceLines<'_>,
        name: &str,
        live: bool,
        skip: u64,
        form: Option<Form>,
        diag: &mut Diag,
    ) -> anyhow::Result<Option<Outcome>> {
        let storing = std::cell::Cell::new(true);
        let known = std::cell::Cell::new(form);
        // Every event is placed in its turn, those of the lines stored before too.
        let turns = RefCell::new(Turns::default());
        let mut tap = |ev: &Event| -> io::Result<()> {
            let nth = turns.borrow_mut().place(ev.session_id.as_bytes(), ev.event);
            if !storing.get() {
                return Ok(());
            }
            let mut c = self.chunk.try_borrow_mut().map_err(|_| {
                io::Error::other("internal error: the store was fed while it was busy")
            })?;
            let start = c.text.len();
            crate::json_writer::write(&mut c.text, ev).map_err(io::Error::other)?;
            let json = Span(start, c.text.len());
            // SQLite reads the JSON for `callId` only where it is (a tool's, a permission's
            // event): most events have none, and parsing each one again was a third of the
            // time.
            let call = memchr::memmem::find(&c.text[start..], b"\"callId\"").is_some();
            let row = Row {
                session: c.put(ev.session_id.as_ref()),
                id: c.put(ev.id.as_ref()),
                turn: ev.turn_id.as_deref().map(|t| c.put(t)),
                seq: ev.seq as i64,
                time: ev.timestamp.as_deref().map(|t| c.put(t)),
                provider: ev.provider,
                event: ev.event,
                json,
                call,
                form: known.get().unwrap_or(Form::Stream),
                nth,
            };
            c.items.push(Item::Event(row));
            if c.full() {
                self.send(&mut c)?;
            }
            Ok(())
        };
        let mut result = Outcome::default();
        let mut failed = false;
        let mut out = Out::new(Vec::new());
        let mut conv = Converter::new(self.opts, &mut out);
        conv.tap(&mut tap);
        let mut buf = Vec::with_capacity(64 * 1024);
        loop {
            let line = match rdr.next_line(&mut buf) {
                Ok(Some(l)) => l,
                Ok(None) => break,
                Err(e) => {
                    diag.io_error(rdr.name(), &e);
                    failed = true;
                    break;
                }
            };
            let lineno = rdr.lineno();
            let unterminated = rdr.unterminated();
            storing.set(lineno > skip);
            if known.get().is_none() {
                known.set(Some(Form::of_first_line(&buf)));
            }
            conv.input_line(line, &buf, lineno, unterminated, rdr.name(), diag)?;
            // InsightsEvents passed through.
            let out = conv.out();
            out.flush().context("cannot convert")?;
            let written = out.w.get_mut();
            if !written.is_empty() {
                let fallback = format!(
                    "line-{:016x}",
                    crate::ids::hash_pair("", &String::from_utf8_lossy(&buf))
                );
                let mut c = self.chunk.borrow_mut();
                for (k, l) in written
                    .split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                    .enumerate()
                {
                    let head = LineHead::of(l);
                    let nth = turns
                        .borrow_mut()
                        .place(head.session.as_bytes(), &head.event);
                    if !storing.get() {
                        continue;
                    }
                    let session = c.put(&head.session);
                    let id = c.put(&head.id);
                    let start = c.text.len();
                    c.text.extend_from_slice(l);
                    let json = Span(start, c.text.len());
                    c.items.push(Item::Line {
                        json,
                        fallback: format!("{fallback}:{k}"),
                        id,
                        session,
                        form: known.get().unwrap_or(Form::Stream),
                        nth,
                    });
                }
                if c.full() {
                    self.send(&mut c)?;
                }
            }
            written.clear();
            if !unterminated {
                result.whole_lines = rdr.lineno();
            }
            if live {
                let idle = !rdr.has_buffered_line();
                self.push(Item::LineEnd { idle }, idle)?;
            }
        }
        if crate::signals::caught().is_some() || failed {
            return Ok(None);
        }
        storing.set(true);
        self.push(Item::Closing, false)?;
        conv.close_input(rdr.lineno(), rdr.name(), diag)
            .context("cannot convert")?;
        let (n, raw) = (conv.stats.provider_lines, conv.stats.provider_raw);
        let forgot = conv.forgotten();
        crate::convert::end_input(self.opts, name, n, raw, forgot, diag);
        result.seq = conv.seq();
        Ok(Some(result))
    }
}

/// The reading side of [`Store::store_all`]: each source in turn, until the last or a
/// signal; then what is left is sent.
fn produce(reader: Reader<'_>, sources: &[Source], diag: &mut Diag) -> anyhow::Result<()> {
    for src in sources {
        reader.source(src, diag)?;
        if crate::signals::caught().is_some() {
            break;
        }
    }
    reader.told()?;
    let mut c = reader.chunk.borrow_mut();
    Ok(reader.send(&mut c)?)
}

/// What [`Reader::convert`] read.
#[derive(Debug, Default)]
struct Outcome {
    /// Lines with a line end read (counted from the offset read from).
    whole_lines: u64,
    /// The last `seq` given.
    seq: u64,
}

/// The statements that insert events, and what they did.
struct Inserter<'c> {
    conn: &'c Connection,
    /// An event the converter made: its members given.
    made: CachedStatement<'c>,
    /// An InsightsEvent line: its members read by SQLite (its session numbered first).
    line: CachedStatement<'c>,
    line_session: CachedStatement<'c>,
    /// When set, the keys of the events added are noted here (the end of an input).
    closing: Option<Vec<(String, String)>>,
    /// The session of the last event inserted, and its number (`session_ids.sid`).
    session: Option<(Vec<u8>, i64)>,
    /// Which form told each turn.
    tellers: Tellers<'c>,
    /// The last session the recording being stored named, and its turn there.
    named: Option<(i64, u32)>,
    /// The recording's events that came before it named a session ([`Inserter::place`]).
    waiting: Chunk,
    events: u64,
    added: u64,
    /// Events of turns another form told, not stored.
    told_elsewhere: u64,
    added_since_commit: u64,
}

/// A part of a chunk's text, bound as SQL text without a second UTF-8 check (it was written
/// as JSON, or copied from the converter's strings).
struct Text<'t>(&'t [u8]);

impl rusqlite::ToSql for Text<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::Borrowed(
            rusqlite::types::ValueRef::Text(self.0),
        ))
    }
}

impl<'c> Inserter<'c> {
    fn new(conn: &'c Connection) -> rusqlite::Result<Self> {
        Ok(Inserter {
            conn,
            made: conn.prepare_cached(
                "INSERT OR IGNORE INTO events
                   (sid, session_id, id, turn_id, seq, time, provider, event, call_id, json)
                 VALUES (?10, ?1, ?2, ?3, ?4, ?5, ?6, ?7,
                         CASE WHEN ?9 THEN json_extract(?8, '$.callId') END, ?8)",
            )?,
            line_session: conn.prepare_cached(
                "INSERT OR IGNORE INTO session_ids (session_id)
                 VALUES (coalesce(json_extract(?1, '$.sessionId'), ''))",
            )?,
            line: conn.prepare_cached(
                "INSERT OR IGNORE INTO events
                   (sid, session_id, id, turn_id, seq, time, provider, event, call_id, json)
                 SELECT (SELECT sid FROM session_ids WHERE session_id = s), s,
                        coalesce(nullif(json_extract(j, '$.id'), ''), ?2),
                        json_extract(j, '$.turnId'), json_extract(j, '$.seq'),
                        json_extract(j, '$.timestamp'), json_extract(j, '$.provider'),
                        coalesce(json_extract(j, '$.event'), ''), json_extract(j, '$.callId'), j
                 FROM (SELECT ?1 AS j, coalesce(json_extract(?1, '$.sessionId'), '') AS s)",
            )?,
            closing: None,
            session: None,
            tellers: Tellers::new(conn)?,
            named: None,
            waiting: Chunk::default(),
            events: 0,
            added: 0,
            told_elsewhere: 0,
            added_since_commit: 0,
        })
    }

    /// Whether an event of `session` (its number `sid`), in the turn `nth` of a recording of
    /// `form`, is stored ([`super::tellers`]). An event that names no session is placed in the
    /// last session its recording named, at that session's turn; before the recording names
    /// one, it waits, and goes with the first session named ([`Inserter::flush`]).
    fn place(
        &mut self,
        session: &[u8],
        sid: i64,
        form: Form,
        nth: u32,
    ) -> rusqlite::Result<Placed> {
        let (teller, told) = if !session.is_empty() {
            let turn = self.tellers.turn(sid, form, nth)?;
            if !self.waiting.items.is_empty() {
                // The events that came before it are the same recording's preamble.
                let told = self.tellers.told_elsewhere(sid, form, 0)?;
                self.flush(if told { None } else { Some((sid, 0)) })?;
            }
            self.named = Some((sid, turn));
            ((sid, turn), self.tellers.told_elsewhere(sid, form, turn)?)
        } else if let Some((named, turn)) = self.named {
            (
                (named, turn),
                self.tellers.told_elsewhere(named, form, turn)?,
            )
        } else if self.waiting.text.len() < WAITING_BYTES {
            return Ok(Placed::Waits);
        } else {
            // A recording that names no session for long: its events are stored as they are.
            self.flush_unnamed()?;
            return Ok(Placed::Stored(None));
        };
        if told {
            self.events += 1;
            self.told_elsewhere += 1;
            return Ok(Placed::Told(teller));
        }
        Ok(Placed::Stored(Some(teller)))
    }

    /// Stores the events waiting for their recording to name a session, as told by the turn
    /// `teller` of a session; drops them with `None` (another form told it).
    fn flush(&mut self, teller: Option<(i64, u32)>) -> rusqlite::Result<()> {
        let mut waiting = std::mem::take(&mut self.waiting);
        for item in &waiting.items {
            match (item, teller) {
                (Item::Event(row), Some(t)) => self.insert(&waiting.text, row, None, Some(t))?,
                (
                    Item::Line {
                        json,
                        fallback,
                        form,
                        ..
                    },
                    Some(t),
                ) => self.insert_line(&waiting.text[json.0..json.1], fallback, Some((*form, t)))?,
                _ => {
                    self.events += 1;
                    self.told_elsewhere += 1;
                }
            }
        }
        waiting.text.clear();
        waiting.items.clear();
        self.waiting = waiting;
        Ok(())
    }

    /// Stores the events waiting for a session that their recording never named.
    fn flush_unnamed(&mut self) -> rusqlite::Result<()> {
        let mut waiting = std::mem::take(&mut self.waiting);
        for item in &waiting.items {
            match item {
                Item::Event(row) => self.insert(&waiting.text, row, None, None)?,
                Item::Line { json, fallback, .. } => {
                    self.insert_line(&waiting.text[json.0..json.1], fallback, None)?
                }
                _ => {}
            }
        }
        waiting.text.clear();
        waiting.items.clear();
        self.waiting = waiting;
        Ok(())
    }

    /// The end of a recording: what waits is stored, and its sessions forgotten. `fresh`: the
    /// next recording is new (not a file read before going on).
    fn next_recording(&mut self, fresh: bool) -> rusqlite::Result<()> {
        self.flush_unnamed()?;
        self.named = None;
        self.tellers.begin(fresh);
        Ok(())
    }

    /// Inserts an event the converter made, its parts in `text`, unless another form told its
    /// turn.
    fn event(&mut self, text: &[u8], row: &Row) -> rusqlite::Result<()> {
        let session = &text[row.session.0..row.session.1];
        let sid = self.sid(session)?;
        match self.place(session, sid, row.form, row.nth)? {
            Placed::Stored(teller) => self.insert(text, row, Some(sid), teller),
            Placed::Told((s, turn)) => {
                let id = &text[row.id.0..row.id.1];
                self.had(s, row.form, turn, sid, id)
            }
            Placed::Waits => {
                let w = &mut self.waiting;
                let mut copy = |s: Span| w.put_bytes(&text[s.0..s.1]);
                let row = Row {
                    session: copy(row.session),
                    id: copy(row.id),
                    turn: row.turn.map(&mut copy),
                    time: row.time.map(&mut copy),
                    json: copy(row.json),
                    ..*row
                };
                w.items.push(Item::Event(row));
                Ok(())
            }
        }
    }

    /// Notes that the recording had the turn `turn` of session `s`, which another form told,
    /// when the event `id` of session `sid` it did not store is not stored already (a copy of
    /// a recording has nothing of its own).
    fn had(&mut self, s: i64, form: Form, turn: u32, sid: i64, id: &[u8]) -> rusqlite::Result<()> {
        if !self.tellers.may_cover(s, form, turn) {
            return Ok(());
        }
        let stored: bool = self
            .conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM events WHERE sid = ?1 AND id = ?2)")?
            .query_row(rusqlite::params![sid, Text(id)], |r| r.get(0))?;
        if !stored {
            self.tellers.cover(s, form, turn)?;
        }
        Ok(())
    }

    /// Inserts an event the converter made, its parts in `text`; `sid`: its session's number,
    /// when known. When it is added (not stored before), the turn `teller` is its form's.
    fn insert(
        &mut self,
        text: &[u8],
        row: &Row,
        sid: Option<i64>,
        teller: Option<(i64, u32)>,
    ) -> rusqlite::Result<()> {
        let part = |s: Span| Text(&text[s.0..s.1]);
        let sid = match sid {
            Some(sid) => sid,
            None => self.sid(&text[row.session.0..row.session.1])?,
        };
        let r = self.made.execute(rusqlite::params![
            part(row.session),
            part(row.id),
            row.turn.map(part),
            row.seq,
            row.time.map(part),
            row.provider,
            row.event,
            part(row.json),
            row.call,
            sid,
        ]);
        let r = match r {
            Err(e) if is_deep(&e) => {
                let json = String::from_utf8_lossy(&text[row.json.0..row.json.1]);
                let id = String::from_utf8_lossy(&text[row.id.0..row.id.1]);
                deep(self.conn, &json, &id)
            }
            r => r,
        };
        // A recording read before (going on, or read again) tells the turns of the events it
        // stored before too; a new one only those it adds (a copy tells none).
        let added = self.counted(r)?;
        if added || !self.tellers.fresh() {
            if let Some((s, turn)) = teller {
                self.tellers.claim(s, row.form, turn)?;
            }
        }
        // What the end of the input inferred, to take back when the file goes on: stored now
        // or before (a file read again).
        if let Some(keys) = self.closing.as_mut() {
            let s = |s: Span| String::from_utf8_lossy(&text[s.0..s.1]).into_owned();
            keys.push((s(row.session), s(row.id)));
        }
        Ok(())
    }

    /// The number of `session` (`session_ids.sid`), numbered now when it is new.
    fn sid(&mut self, session: &[u8]) -> rusqlite::Result<i64> {
        match &self.session {
            Some((s, sid)) if s.as_slice() == session => Ok(*sid),
            _ => {
                let sid = sid_of(self.conn, session)?;
                self.session = Some((session.to_vec(), sid));
                Ok(sid)
            }
        }
    }

    /// Inserts an InsightsEvent line of `session`, in the turn `nth` of its recording of
    /// `form`, unless another form told that turn; `fallback` is its id when it has none.
    #[allow(clippy::too_many_arguments)]
    fn line(
        &mut self,
        line: &[u8],
        fallback: &str,
        id: &[u8],
        session: &[u8],
        form: Form,
        nth: u32,
    ) -> rusqlite::Result<()> {
        let sid = self.sid(session)?;
        match self.place(session, sid, form, nth)? {
            Placed::Stored(teller) => self.insert_line(line, fallback, teller.map(|t| (form, t))),
            Placed::Told((s, turn)) => {
                let id = if id.is_empty() {
                    fallback.as_bytes()
                } else {
                    id
                };
                self.had(s, form, turn, sid, id)
            }
            Placed::Waits => {
                let w = &mut self.waiting;
                let json = w.put_bytes(line);
                let session = w.put_bytes(session);
                let id = w.put_bytes(id);
                w.items.push(Item::Line {
                    json,
                    fallback: fallback.to_owned(),
                    id,
                    session,
                    form,
                    nth,
                });
                Ok(())
            }
        }
    }

    /// Inserts an InsightsEvent line; `fallback` is its id when it has none. When it is added,
    /// the turn `teller` is its form's.
    fn insert_line(
        &mut self,
        line: &[u8],
        fallback: &str,
        teller: Option<(Form, (i64, u32))>,
    ) -> rusqlite::Result<()> {
        let text = String::from_utf8_lossy(line);
        let r = self.line_session.execute([text.as_ref()]).and_then(|_| {
            self.line
                .execute(rusqlite::params![text.as_ref(), fallback])
        });
        let r = match r {
            Err(e) if is_deep(&e) => deep(self.conn, &text, fallback),
            r => r,
        };
        let added = self.counted(r)?;
        if added || !self.tellers.fresh() {
            if let Some((form, (sid, turn))) = teller {
                self.tellers.claim(sid, form, turn)?;
            }
        }
        Ok(())
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

/// Where [`Inserter::place`] puts an event.
enum Placed {
    /// Stored; when it is added, the turn (session number, turn) it tells is its form's.
    Stored(Option<(i64, u32)>),
    /// Not stored: another form told its turn, (session number, turn).
    Told((i64, u32)),
    /// Waits for its recording to name a session.
    Waits,
}

/// What an InsightsEvent line passed through says of its place: its session and type
/// (empty when it names none, or is not an object).
#[derive(Default, serde::Deserialize)]
struct LineHead<'a> {
    #[serde(borrow, default, rename = "sessionId")]
    session: Cow<'a, str>,
    #[serde(borrow, default)]
    event: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Cow<'a, str>,
}

impl<'a> LineHead<'a> {
    fn of(line: &'a [u8]) -> LineHead<'a> {
        serde_json::from_slice(line).unwrap_or_default()
    }
}

/// Whether SQLite's JSON functions refused an event's text: it nests deeper than their 1000
/// levels, which the converter passes through.
fn is_deep(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(e, Some(m))
        if e.code == rusqlite::ErrorCode::Unknown && m.contains("JSON"))
}

/// The insert of an event's JSON `text` that SQLite's JSON functions refused
/// ([`is_deep`]): its members read here instead.
fn deep(conn: &Connection, text: &str, fallback: &str) -> rusqlite::Result<usize> {
    let members = top_members(text).unwrap_or_default();
    let get = |name: &str| members.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let string = |name: &str| get(name).and_then(|v| serde_json::from_str::<String>(v).ok());
    let seq = get("seq").and_then(|v| v.parse::<i64>().ok());
    let session = string("sessionId").unwrap_or_default();
    let sid = sid_of(conn, session.as_bytes())?;
    let mut st = conn.prepare_cached(
        "INSERT OR IGNORE INTO events
           (session_id, id, turn_id, seq, time, provider, event, call_id, json, sid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    st.execute(rusqlite::params![
        session,
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
        sid,
    ])
}

/// The number of the session `session` (`session_ids.sid`), numbered now when it is new.
fn sid_of(conn: &Connection, session: &[u8]) -> rusqlite::Result<i64> {
    let found = conn
        .prepare_cached("SELECT sid FROM session_ids WHERE session_id = ?1")?
        .query_row([Text(session)], |r| r.get(0))
        .optional()?;
    match found {
        Some(sid) => Ok(sid),
        None => {
            conn.prepare_cached("INSERT INTO session_ids (session_id) VALUES (?1)")?
                .execute([Text(session)])?;
            Ok(conn.last_insert_rowid())
        }
    }
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
    // Most paths (all that a walk of the standard places finds) are absolute and normal
    // already: taken as they are, without parsing their components.
    if let Some(s) = path.to_str() {
        let normal = s.starts_with('/')
            && !s.contains("//")
            && !s.contains("/./")
            && !s.ends_with("/.")
            && (s.len() == 1 || !s.ends_with('/'));
        if normal {
            return s.to_owned();
        }
    }
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

#[cfg(test)]
mod tests {
    use super::key_of;
    use std::path::Path;

    #[test]
    fn a_key_is_the_absolute_path_with_or_without_the_shortcut() {
        for p in [
            "/",
            "/a/b.jsonl",
            "/a/../b.jsonl",
            "/a//b.jsonl",
            "//a/b",
            "/a/./b",
            "/a/b/.",
            "/a/b/",
            "/a/.b/c..d",
            "a/b.jsonl",
            "./a",
        ] {
            let slow = std::path::absolute(p).unwrap().display().to_string();
            assert_eq!(key_of(Path::new(p)), slow, "{p}");
        }
    }
}
