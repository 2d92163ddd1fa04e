//! `--jobs N`: conversion on several cores, the output byte for byte that of one core.
//!
//! The input is cut into chunks of about [`CHUNK_BYTES`] (whole lines). A regular file is
//! read by the N workers themselves, a block each in turn ([`BlockReader`]), so that the
//! bytes a worker converts were copied once, by the kernel, into its own core's cache; a pipe
//! or terminal is read by a reading thread that gathers lines into chunks (and hands a chunk
//! over as soon as no further line is ready). Each worker converts its chunk with a converter
//! of its own, into memory; the calling thread writes the chunks out in input order. Lines
//! convert independently, but for two things that cross chunk boundaries, both fixed up in
//! order by the writing thread:
//! - `seq`: each chunk numbers its events from 1, and the converter notes where each number
//!   starts; the writer puts the run's numbers in their place.
//! - what the converter remembers of the stream ([`StreamState`]: the JSON-RPC provider of
//!   bare answers, the providers' memories of requests, calls and sessions, and of facts that
//!   hold once a line states them).
//!   A worker starts from a guess: the state the last chunk any worker finished ended in,
//!   after the chunk's lead (the lines just before it, up to [`LEAD_BYTES`]) converted from
//!   it with the output unused, so that the guess knows the session and the calls the chunk
//!   starts inside. The chunk notes what it read of its start (`src/providers/memo.rs`); if
//!   any of it differs from the real start, the writer converts that chunk again from the
//!   right state. Without the lead, a log of many short sessions had most of its chunks
//!   converted twice; with it, about one chunk in thirty on the bench's inputs.
//!
//! What a worker does with each line is a [`Work`]: `insights` converts it and the calling
//! thread writes the chunk ([`Convert`]); `reduce --jobs` converts provider output and the
//! calling thread folds the events (`src/reduce/jobs.rs`).
//!
//! Diagnostics are kept per chunk and printed in order too. A termination signal ends the
//! reading at a line boundary; what was read is still converted and written. At most `3 × N` chunks are in
//! flight, so memory stays flat whatever the input's size.

use crate::convert::{Converter, Options, Stats, StreamState};
use crate::diag::Diag;
use crate::event::Event;
use crate::input::{Block, BlockLines, BlockReader, Line, LineReader, Source};
use crate::output::{FlushPolicy, Out};
use anyhow::Context;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

/// The size a chunk grows to before it is handed to a worker.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Input lines to convert, in the layout of their reader.
struct Chunk {
    index: u64,
    text: Vec<u8>,
    lines: Layout,
    /// The whole lines just before the chunk (at most [`lead_bytes`]), each ending in `\n`:
    /// a worker converts them first, output unused, so that its guess of the state the chunk
    /// starts from knows the session and the calls the chunk begins inside.
    lead: Vec<u8>,
}

/// The most bytes of [`Chunk::lead`].
const LEAD_BYTES: usize = 64 * 1024;

/// How much lead a chunk of `chunk_bytes` gets: [`LEAD_BYTES`], at most a sixteenth of the
/// chunk (tests of tiny chunks keep guessing from the bare state).
fn lead_bytes(chunk_bytes: usize) -> usize {
    LEAD_BYTES.min(chunk_bytes / 16)
}

/// The whole lines in the last `max` bytes of `text` (lines each ending in `\n`).
fn tail_lines(text: &[u8], max: usize) -> &[u8] {
    if max == 0 || !text.ends_with(b"\n") {
        return &[];
    }
    if text.len() <= max {
        return text;
    }
    let from = text.len().saturating_sub(max + 1);
    match memchr::memchr(b'\n', &text[from..]) {
        Some(i) => &text[from + i + 1..],
        None => &[],
    }
}

enum Layout {
    /// Read by a [`LineReader`] (a pipe or terminal, by the reading thread): each line as it
    /// returned it, followed by `\n` (a line over the size cap as an empty line).
    Read {
        /// Number of the chunk's first line.
        first_line: u64,
        /// Where each line ends in `text` (its `\n`).
        ends: Vec<usize>,
        /// Lines over the cap: their numbers and lengths.
        too_long: Vec<(u64, u64)>,
        /// The chunk's last line is the input's, and had no final newline.
        unterminated: bool,
    },
    /// A block of a regular file as a worker read it ([`BlockReader`]), split by
    /// [`BlockLines`].
    Block(Block),
}

/// The buffers of chunks written, kept for the next chunks: a fresh buffer for every chunk
/// (a megabyte of text, two of output) cost a page fault per 4 KiB touched, 8,500 of them on
/// 50 MB of ACP output.
#[derive(Default)]
struct Buffers {
    texts: Pool,
    outs: Pool,
}

#[derive(Default)]
struct Pool(Mutex<Vec<Vec<u8>>>);

impl Pool {
    /// An empty buffer with room for `cap` bytes.
    fn take(&self, cap: usize) -> Vec<u8> {
        let mut v = self
            .0
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default();
        v.clear();
        v.reserve(cap);
        v
    }

    fn give(&self, v: Vec<u8>) {
        if let Ok(mut p) = self.0.lock() {
            p.push(v);
        }
    }
}

/// A converted chunk.
struct Done<N> {
    chunk: Chunk,
    out: Vec<u8>,
    /// Where each event's `seq` digits start in `out`.
    marks: Vec<usize>,
    /// What the [`Work`] kept of the chunk beside `out`.
    notes: N,
    diag: Diag,
    stats: Stats,
    depended: bool,
    /// The state the chunk was converted from.
    start: StreamState,
    /// What its lines set of the state themselves ([`Converter::take_states`]).
    own: StreamState,
    /// The state it ended in, from `start`.
    end: StreamState,
    /// An output error (an event that cannot be written): ends the run, as on one core.
    error: Option<anyhow::Error>,
    /// Whether a worker converted the chunk; if not ([`unconverted`]), the writer does.
    converted: bool,
    /// The number of its last line converted.
    last_line: u64,
}

/// A chunk handed on as it was read, for the writer to convert.
fn unconverted<K: Work>(work: &K, chunk: Chunk, color: bool) -> Done<K::Notes> {
    Done {
        chunk,
        out: Vec::new(),
        marks: Vec::new(),
        notes: work.notes(),
        diag: Diag::new(color).kept(),
        stats: Stats::default(),
        depended: true,
        start: StreamState::default(),
        own: StreamState::default(),
        end: StreamState::default(),
        error: None,
        converted: false,
        last_line: 0,
    }
}

/// What a worker does with each line of a chunk, with the chunk's converter: convert it
/// ([`Convert`], `insights` itself), or what a subcommand that reads events needs done before
/// the calling thread takes the chunk in order (`reduce`).
pub trait Work: Sync {
    /// What a worker keeps of a chunk beside the converter's output.
    type Notes: Send;
    /// Whether the converter notes where each event's `seq` starts ([`Piece::marks`]).
    const MARKS: bool;
    /// Whether the converter hands the events it makes to [`Work::event`] instead of writing
    /// them (lines it passes through are still written).
    const TAPS: bool = false;
    /// Handles one input line; `Ok(false)` stops the chunk (`--strict`), `Err` the run. The
    /// notes are shared with [`Work::event`], which the converter calls while it converts:
    /// borrow them around the conversion, not across it.
    fn line(
        &self,
        conv: &mut Converter<'_, Vec<u8>>,
        notes: &RefCell<Self::Notes>,
        line: InputLine<'_>,
        name: &str,
        diag: &mut Diag,
    ) -> anyhow::Result<bool>;

    /// An event the chunk's converter made, with [`Work::TAPS`]; `Err` ends the run, as an
    /// event that cannot be written does.
    fn event(&self, _notes: &mut Self::Notes, _ev: &Event<'_>) -> io::Result<()> {
        Ok(())
    }

    /// A chunk's notes, empty.
    fn notes(&self) -> Self::Notes;

    /// Last, on the worker: anything to do with the chunk's output before it is handed over.
    fn finish(&self, _out: &mut Vec<u8>, _notes: &mut Self::Notes) {}

    /// The end of the input, on the calling thread, after its last chunk (line `lineno`):
    /// the converter, which starts from the state the input left, ends what the input left
    /// open ([`Converter::close_input`]). Its events are handed to `take` as one more chunk.
    fn end(
        &self,
        conv: &mut Converter<'_, Vec<u8>>,
        _notes: &RefCell<Self::Notes>,
        lineno: u64,
        name: &str,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        conv.close_input(lineno, name, diag)
            .context("cannot write to standard output")
    }
}

/// One line of a chunk, as its reader returned it.
pub struct InputLine<'b> {
    pub line: Line,
    pub bytes: &'b [u8],
    pub lineno: u64,
    /// The input's last line, without a final newline.
    pub unterminated: bool,
}

/// `insights` itself: each line converted, its events written.
pub struct Convert;

impl Work for Convert {
    type Notes = ();
    const MARKS: bool = true;

    fn notes(&self) {}

    fn line(
        &self,
        conv: &mut Converter<'_, Vec<u8>>,
        _: &RefCell<()>,
        l: InputLine<'_>,
        name: &str,
        diag: &mut Diag,
    ) -> anyhow::Result<bool> {
        conv.input_line(l.line, l.bytes, l.lineno, l.unterminated, name, diag)
    }
}

/// A chunk done, handed to the calling thread in input order.
pub struct Piece<'p, N> {
    /// What the chunk's converter wrote (or [`Work::finish`] left of it). The buffer is
    /// used again for a later chunk.
    pub out: &'p mut Vec<u8>,
    /// Where each event's `seq` digits start in `out`, numbered from 1 in the chunk (with
    /// [`Work::MARKS`]).
    pub marks: &'p [usize],
    pub notes: &'p mut N,
    /// Where diagnostics go (those of the chunk's lines were printed just before).
    pub diag: &'p mut Diag,
    /// The next chunk is converted already (flush policy).
    pub more_ready: bool,
}

/// Converts every source with `jobs` workers, keeping `seq`, state and statistics across
/// sources as one converter would.
pub struct Parallel<'a> {
    opts: &'a Options,
    jobs: usize,
    chunk_bytes: usize,
    seq: u64,
    state: StreamState,
    /// Chunks converted from a guessed state, and how many of the guesses were wrong.
    guessed: u64,
    missed: u64,
    /// Set when most guesses were wrong: the workers only read, the writer converts.
    serial: Arc<AtomicBool>,
    /// The number of the last line of the source taken so far.
    last_line: u64,
    pub stats: Stats,
}

/// `INSIGHTS_CHUNK_STATS=1`: how many chunks were converted from a guessed start and how many
/// of those the writer converted again, on standard error (for measuring `--jobs`).
impl Drop for Parallel<'_> {
    fn drop(&mut self) {
        if std::env::var_os("INSIGHTS_CHUNK_STATS").is_some() {
            eprintln!(
                "insights: {} chunks from a guessed start, {} converted again{}",
                self.guessed,
                self.missed,
                if self.serial.load(Ordering::Relaxed) {
                    "; guessing stopped"
                } else {
                    ""
                }
            );
        }
    }
}

impl<'a> Parallel<'a> {
    pub fn new(opts: &'a Options, jobs: usize) -> Self {
        Parallel {
            opts,
            jobs: jobs.max(1),
            chunk_bytes: chunk_bytes(),
            seq: 0,
            state: StreamState::default(),
            guessed: 0,
            missed: 0,
            serial: Arc::new(AtomicBool::new(false)),
            last_line: 0,
            stats: Stats::default(),
        }
    }

    /// Starts the next source from `state` rather than from nothing (`reduce` taking up a log
    /// whose state has turns running, [`crate::reduce::converter_start`]).
    pub fn start_from(&mut self, state: StreamState) {
        self.state = state;
    }

    /// Converts one source and writes its events, numbered after those of the sources before.
    pub fn run_source<W: Write>(
        &mut self,
        src: &Source,
        out: &mut Out<W>,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        let mut seq = self.seq;
        // A chunk's output with the run's numbers, written in one piece: the lines of a chunk
        // are whole, so the buffered writer passes it on without copying it (written number by
        // number, it split lines, which the writer below then joined again: two copies).
        let mut renumbered = Vec::new();
        let opts = self.opts;
        let result = self.run(src, diag, &Convert, &mut |piece| {
            seq = renumber(piece.out, piece.marks, seq, &mut renumbered)?;
            out.w
                .write_all(&renumbered)
                .context("cannot write to standard output")?;
            if opts.flush.flush_now(piece.more_ready) {
                out.flush().context("cannot write to standard output")?;
            }
            Ok(true)
        });
        self.seq = seq;
        result
    }

    /// Runs `work` over every line of one source, on the workers, and hands each chunk done
    /// to `take`, in input order; `take` returns `Ok(false)` to stop.
    pub fn run<K: Work>(
        &mut self,
        src: &Source,
        diag: &mut Diag,
        work: &K,
        take: &mut dyn FnMut(Piece<'_, K::Notes>) -> anyhow::Result<bool>,
    ) -> anyhow::Result<()> {
        let name = src.name();
        let Some(reader) = src.open_or_report(diag) else {
            return Ok(());
        };
        // A regular file (standard input too, redirected from one) is read by the workers, a
        // block each; a pipe or terminal by a reading thread, and it is live: a chunk goes out
        // as soon as no further line is ready.
        let feed = if src.regular_file_len().is_some() {
            Feed::Blocks(Mutex::new(Blocks {
                reader: BlockReader::new(reader, self.opts.max_line),
                next: 0,
                error: None,
                tail: Vec::new(),
            }))
        } else {
            Feed::Thread { reader, live: true }
        };
        let (lines, raw) = (self.stats.provider_lines, self.stats.provider_raw);
        self.last_line = 0;
        if self.run_feed(feed, &name, diag, work, take)?
            && self.close_input(&name, diag, work, take)?
        {
            let lines = self.stats.provider_lines - lines;
            let raw = self.stats.provider_raw - raw;
            let forgot = std::mem::take(&mut self.stats.forgot);
            crate::convert::end_input(self.opts, &name, lines, raw, forgot, diag);
        } else {
            diag.end_input(&name);
        }
        Ok(())
    }

    /// `Ok(false)` when the run stopped before the end of the input (`--strict`, `take`).
    fn run_feed<R: Read + Send, K: Work>(
        &mut self,
        feed: Feed<R>,
        name: &str,
        diag: &mut Diag,
        work: &K,
        take: &mut dyn FnMut(Piece<'_, K::Notes>) -> anyhow::Result<bool>,
    ) -> anyhow::Result<bool> {
        let jobs = self.jobs;
        let (work_tx, work_rx) = mpsc::sync_channel::<Chunk>(jobs);
        // Owned by the workers alone: when the writer stops early (a closed pipe), they stop
        // at their next chunk, the channel closes, and the reader's next send fails instead of
        // waiting forever for room.
        let work_rx = Arc::new(Mutex::new(work_rx));
        let (done_tx, done_rx) = mpsc::channel::<Done<K::Notes>>();
        // One credit per chunk in flight: the reader takes one, the writer gives it back.
        let (credit_tx, credit_rx) = mpsc::sync_channel::<()>(3 * jobs);
        let opts = self.opts;
        let color = diag.color();
        let chunk_bytes = self.chunk_bytes;
        let buffers = &Buffers::default();
        // Termination signals go to the threads that read: the reading thread, whose blocking
        // read they interrupt, or the workers that read a regular file (whose reads do not
        // block); the lines read by then are converted and written (src/signals.rs).
        let _blocked = crate::signals::block();
        let (thread_feed, blocks) = match feed {
            Feed::Thread { reader, live } => (Some((reader, live)), None),
            Feed::Blocks(b) => (None, Some(b)),
        };
        let blocks = blocks.as_ref();
        std::thread::scope(|scope| {
            let reader_thread = thread_feed.map(|(reader, live)| {
                let credit_tx = credit_tx.clone();
                scope.spawn(move || {
                    crate::signals::unblock();
                    let texts = &buffers.texts;
                    read_chunks(
                        reader,
                        opts.max_line,
                        chunk_bytes,
                        live,
                        texts,
                        work_tx,
                        credit_tx,
                    )
                })
            });
            let guess = Arc::new(Mutex::new(self.state.clone()));
            let serial = Arc::clone(&self.serial);
            for _ in 0..jobs {
                let work_rx = Arc::clone(&work_rx);
                let done_tx = done_tx.clone();
                let credit_tx = credit_tx.clone();
                let guess = Arc::clone(&guess);
                let serial = Arc::clone(&serial);
                scope.spawn(move || {
                    if blocks.is_some() {
                        crate::signals::unblock();
                    }
                    loop {
                        let next = match blocks {
                            Some(blocks) => {
                                next_block(blocks, chunk_bytes, &buffers.texts, &credit_tx)
                            }
                            None => work_rx.lock().ok().and_then(|rx| rx.recv().ok()),
                        };
                        let Some(chunk) = next else { return };
                        // Guesses that keep failing are not worth a conversion: the writer
                        // converts the chunk itself, from the state it really starts from.
                        if serial.load(Ordering::Relaxed) {
                            if done_tx.send(unconverted(work, chunk, color)).is_err() {
                                return;
                            }
                            continue;
                        }
                        let start = guess
                            .lock()
                            .map_or_else(|_| StreamState::default(), |g| g.clone());
                        let start = Start::Guess(start);
                        let mut done =
                            work_chunk(work, opts, chunk, name, start, color, &buffers.outs);
                        // The next guess; nothing else reads a chunk's end state.
                        if let Ok(mut g) = guess.lock() {
                            *g = std::mem::take(&mut done.end);
                        }
                        if done_tx.send(done).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(done_tx);
            drop(work_rx);
            drop(credit_tx);
            let written =
                self.in_order(&done_rx, credit_rx, name, diag, color, buffers, work, take);
            // Unblocks the reader and the workers if the writer stopped early.
            drop(done_rx);
            let read = match reader_thread {
                Some(t) => t
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("the reading thread panicked"))),
                None => match blocks
                    .and_then(|b| b.lock().ok())
                    .and_then(|mut b| b.error.take())
                {
                    Some(e) => Err(e),
                    None => Ok(()),
                },
            };
            let whole = written?;
            if let Err(e) = read {
                diag.io_error(name, &e);
            }
            Ok(whole)
        })
    }

    /// The calling thread: takes chunks done in input order, converts again one whose start
    /// was guessed wrong, and hands them to `take`; `Ok(false)` when it stopped before the
    /// last chunk.
    #[allow(clippy::too_many_arguments)]
    fn in_order<K: Work>(
        &mut self,
        done_rx: &Receiver<Done<K::Notes>>,
        credit_rx: Receiver<()>,
        name: &str,
        diag: &mut Diag,
        color: bool,
        buffers: &Buffers,
        work: &K,
        take: &mut dyn FnMut(Piece<'_, K::Notes>) -> anyhow::Result<bool>,
    ) -> anyhow::Result<bool> {
        let mut waiting: BTreeMap<u64, Done<K::Notes>> = BTreeMap::new();
        let mut next = 0u64;
        loop {
            let mut done = match waiting.remove(&next) {
                Some(d) => d,
                None => match done_rx.recv() {
                    Ok(d) if d.chunk.index == next => d,
                    Ok(d) => {
                        waiting.insert(d.chunk.index, d);
                        continue;
                    }
                    Err(_) => return Ok(true),
                },
            };
            next += 1;
            let _ = credit_rx.try_recv();
            let stale = !done.converted || done.own.stale(done.depended, &done.start, &self.state);
            if done.converted {
                self.guessed += 1;
                self.missed += u64::from(stale);
                // Most guesses wrong (a log of many short sessions, whose chunks each start
                // inside a session the one before announced): stop guessing.
                if self.guessed >= 4 && self.missed * 2 > self.guessed {
                    self.serial.store(true, Ordering::Relaxed);
                }
            }
            if stale {
                buffers.outs.give(std::mem::take(&mut done.out));
                done = work_chunk(
                    work,
                    self.opts,
                    done.chunk,
                    name,
                    Start::Known(self.state.clone()),
                    color,
                    &buffers.outs,
                );
            }
            self.state = done.own.after(std::mem::take(&mut self.state));
            self.last_line = self.last_line.max(done.last_line);
            // What the stream forgot is what the part forgot from its real start (which the
            // state after it knows), not from its guess.
            if let Some(m) = Arc::get_mut(&mut self.state.memory) {
                done.stats.forgot = crate::providers::memo::Remember::forgotten(m);
            }
            diag.absorb(done.diag);
            let go_on = take(Piece {
                out: &mut done.out,
                marks: &done.marks,
                notes: &mut done.notes,
                diag,
                more_ready: waiting.contains_key(&next),
            })?;
            add_stats(&mut self.stats, done.stats);
            buffers.texts.give(done.chunk.text);
            buffers.outs.give(done.out);
            if let Some(e) = done.error {
                return Err(e);
            }
            if self.stats.stopped || !go_on {
                return Ok(false);
            }
        }
    }
}

impl Parallel<'_> {
    /// The end of a source read to its end: [`Work::end`] with a converter that starts from
    /// the state the source left, its output handed to `take` as one more chunk, and the state
    /// it leaves the next source's. `Ok(false)` when `take` stopped.
    fn close_input<K: Work>(
        &mut self,
        name: &str,
        diag: &mut Diag,
        work: &K,
        take: &mut dyn FnMut(Piece<'_, K::Notes>) -> anyhow::Result<bool>,
    ) -> anyhow::Result<bool> {
        let notes = RefCell::new(work.notes());
        let mut tap = |ev: &Event<'_>| match notes.try_borrow_mut() {
            Ok(mut n) => work.event(&mut n, ev),
            Err(_) => Err(io::Error::other(
                "internal error: an event was made while the chunk's notes were in use",
            )),
        };
        let mut out = Out::chunk(Vec::new());
        let mut conv = Converter::new(self.opts, &mut out);
        conv.set_state(std::mem::take(&mut self.state));
        if K::MARKS {
            conv.mark_seqs(Out::chunk_bytes);
        }
        if K::TAPS {
            conv.tap(&mut tap);
        }
        let result = work.end(&mut conv, &notes, self.last_line, name, diag);
        let marks = conv.take_marks();
        let (_, mut end) = conv.take_states();
        let stats = std::mem::take(&mut conv.stats);
        drop(conv);
        // The whole state, no part's: nothing to check it against.
        if let Some(m) = Arc::get_mut(&mut end.memory) {
            crate::providers::memo::Remember::begin(m, false);
        }
        self.state = end;
        result?;
        let mut out = out.into_chunk();
        let mut notes = notes.into_inner();
        work.finish(&mut out, &mut notes);
        let go_on = take(Piece {
            out: &mut out,
            marks: &marks,
            notes: &mut notes,
            diag,
            more_ready: false,
        })?;
        add_stats(&mut self.stats, stats);
        Ok(go_on && !self.stats.stopped)
    }
}

/// Where chunks come from.
enum Feed<R> {
    /// A reading thread gathers lines into chunks.
    Thread { reader: R, live: bool },
    /// The workers read a regular file a block each, in turn.
    Blocks(Mutex<Blocks<R>>),
}

/// A regular file the workers read in turn.
struct Blocks<R> {
    reader: BlockReader<R>,
    /// The index of the next chunk.
    next: u64,
    /// The read error that ended the input.
    error: Option<io::Error>,
    /// The last lines of the block read last: the next one's [`Chunk::lead`].
    tail: Vec<u8>,
}

/// A worker's next chunk of a regular file: taken with a credit (at most `3 × N` chunks in
/// flight), read into a buffer of the pool by the worker itself, so that the bytes it converts
/// are in its core's cache. `None` at the end of the input (or of the run).
fn next_block<R: Read>(
    blocks: &Mutex<Blocks<R>>,
    chunk_bytes: usize,
    texts: &Pool,
    credit_tx: &SyncSender<()>,
) -> Option<Chunk> {
    credit_tx.send(()).ok()?;
    let mut text = texts.take(chunk_bytes + 64 * 1024);
    let mut b = blocks.lock().ok()?;
    if b.error.is_some() {
        return None;
    }
    match b.reader.next_block(&mut text, chunk_bytes) {
        Ok(Some(block)) => {
            let index = b.next;
            b.next += 1;
            let lead = std::mem::replace(
                &mut b.tail,
                tail_lines(&text, lead_bytes(chunk_bytes)).to_vec(),
            );
            Some(Chunk {
                index,
                text,
                lines: Layout::Block(block),
                lead,
            })
        }
        Ok(None) => None,
        Err(e) => {
            b.error = Some(e);
            None
        }
    }
}

/// The chunk size: [`CHUNK_BYTES`], or `INSIGHTS_CHUNK_BYTES` (for tests of tiny chunks).
fn chunk_bytes() -> usize {
    std::env::var("INSIGHTS_CHUNK_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(CHUNK_BYTES)
}

/// The reading thread: lines into chunks, chunks to the workers.
fn read_chunks(
    reader: impl Read,
    max_line: usize,
    chunk_bytes: usize,
    live: bool,
    texts: &Pool,
    work_tx: SyncSender<Chunk>,
    credit_tx: SyncSender<()>,
) -> io::Result<()> {
    let mut rdr = LineReader::new(reader, max_line);
    let mut index = 0u64;
    let new_chunk = |index: u64, first_line: u64, lead: &[u8]| Chunk {
        index,
        lead: lead.to_vec(),
        text: texts.take(chunk_bytes + 64 * 1024),
        lines: Layout::Read {
            first_line,
            ends: Vec::new(),
            too_long: Vec::new(),
            unterminated: false,
        },
    };
    let mut chunk = new_chunk(0, 1, &[]);
    let send = |chunk: Chunk| -> bool { credit_tx.send(()).is_ok() && work_tx.send(chunk).is_ok() };
    let result = loop {
        match rdr.append_line(&mut chunk.text) {
            Ok(Some(line)) => {
                if let Layout::Read {
                    ends,
                    too_long,
                    unterminated,
                    ..
                } = &mut chunk.lines
                {
                    if let Line::TooLong { len } = line {
                        too_long.push((rdr.lineno(), len));
                    }
                    ends.push(chunk.text.len());
                    *unterminated = rdr.unterminated();
                }
                chunk.text.push(b'\n');
                if chunk.text.len() >= chunk_bytes || (live && !rdr.has_buffered_line()) {
                    index += 1;
                    let lead = tail_lines(&chunk.text, lead_bytes(chunk_bytes));
                    let next = new_chunk(index, rdr.lineno() + 1, lead);
                    let full = std::mem::replace(&mut chunk, next);
                    if !send(full) {
                        return Ok(());
                    }
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    if !chunk.text.is_empty() {
        send(chunk);
    }
    result
}

/// Runs `work` over one chunk, with a converter that starts from the state `from` (a guess:
/// after the chunk's [`Chunk::lead`] converted from it), into memory.
fn work_chunk<K: Work>(
    work: &K,
    opts: &Options,
    chunk: Chunk,
    name: &str,
    from: Start,
    color: bool,
    outs: &Pool,
) -> Done<K::Notes> {
    let from = match from {
        Start::Known(s) => s,
        Start::Guess(s) => warm_up(opts, &chunk, name, s, outs),
    };
    let notes = RefCell::new(work.notes());
    let mut tap = |ev: &Event<'_>| match notes.try_borrow_mut() {
        Ok(mut n) => work.event(&mut n, ev),
        Err(_) => Err(io::Error::other(
            "internal error: an event was made while the chunk's notes were in use",
        )),
    };
    let mut out = Out::chunk(outs.take(chunk.text.len() * 2));
    let mut diag = Diag::new(color).kept();
    let mut conv = Converter::new(opts, &mut out);
    // Shares the memory with `from`, kept to check the guess: copied once, by the converter.
    conv.set_state(from.clone());
    if K::MARKS {
        conv.mark_seqs(Out::chunk_bytes);
    }
    if K::TAPS {
        conv.tap(&mut tap);
    }
    let mut error = None;
    let mut last_line = 0;
    let mut each = |line: Line, bytes: &[u8], lineno: u64, unterminated: bool| -> bool {
        last_line = lineno;
        let l = InputLine {
            line,
            bytes,
            lineno,
            unterminated,
        };
        match work.line(&mut conv, &notes, l, name, &mut diag) {
            Ok(go_on) => go_on,
            Err(e) => {
                error = Some(e);
                false
            }
        }
    };
    match &chunk.lines {
        Layout::Read {
            first_line,
            ends,
            too_long,
            unterminated,
        } => {
            let mut too_long = too_long.iter().peekable();
            let mut start = 0;
            for (i, &end) in ends.iter().enumerate() {
                let bytes = &chunk.text[start..end];
                start = end + 1;
                let lineno = first_line + i as u64;
                let line = match too_long.peek() {
                    Some(&&(n, len)) if n == lineno => {
                        too_long.next();
                        Line::TooLong { len }
                    }
                    _ => Line::Ok,
                };
                if !each(line, bytes, lineno, *unterminated && i + 1 == ends.len()) {
                    break;
                }
            }
        }
        Layout::Block(block) => {
            for (lineno, line, bytes, unterminated) in
                BlockLines::new(&chunk.text, block, opts.max_line)
            {
                if !each(line, bytes, lineno, unterminated) {
                    break;
                }
            }
        }
    }
    let marks = conv.take_marks();
    let depended = conv.depended_on_start();
    let (own, end) = conv.take_states();
    let stats = std::mem::take(&mut conv.stats);
    drop(conv);
    let mut out = out.into_chunk();
    let mut notes = notes.into_inner();
    work.finish(&mut out, &mut notes);
    Done {
        chunk,
        out,
        marks,
        notes,
        diag,
        stats,
        depended,
        start: from,
        own,
        end,
        error,
        converted: true,
        last_line,
    }
}

/// The state a chunk starts from: known (the writer's), or a worker's guess.
enum Start {
    Known(StreamState),
    Guess(StreamState),
}

/// The guess `from` after the lines of `chunk`'s lead, converted with their output and
/// diagnostics unused. A lead longer than a quarter of its chunk (a live pipe's chunks of a
/// line or two) is not worth it.
fn warm_up(
    opts: &Options,
    chunk: &Chunk,
    name: &str,
    from: StreamState,
    outs: &Pool,
) -> StreamState {
    let lead = &chunk.lead;
    if lead.is_empty() || lead.len() > chunk.text.len() / 4 {
        return from;
    }
    let first = match &chunk.lines {
        Layout::Read { first_line, .. } => *first_line,
        Layout::Block(b) => b.first_line,
    };
    let count = memchr::memchr_iter(b'\n', lead).count() as u64;
    let Some(mut lineno) = first.checked_sub(count) else {
        return from;
    };
    let mut sink = Out::chunk(outs.take(lead.len() * 2));
    let mut diag = Diag::new(false).kept();
    let mut conv = Converter::new(opts, &mut sink);
    conv.set_state(from);
    for bytes in lead.split(|&b| b == b'\n') {
        if lineno >= first {
            break;
        }
        if conv
            .input_line(Line::Ok, bytes, lineno, false, name, &mut diag)
            .is_err()
        {
            break;
        }
        lineno += 1;
    }
    let (_, state) = conv.take_states();
    drop(conv);
    outs.give(sink.into_chunk());
    state
}

/// A chunk's output with its events numbered from `seq + 1`, into `to` (cleared first);
/// returns the last number.
fn renumber(bytes: &[u8], marks: &[usize], mut seq: u64, to: &mut Vec<u8>) -> io::Result<u64> {
    to.clear();
    to.reserve(bytes.len() + marks.len() * 8);
    let mut at = 0;
    let (mut local_buf, mut seq_buf) = ([0u8; 20], [0u8; 20]);
    for (i, &m) in marks.iter().enumerate() {
        let local = digits(i as u64 + 1, &mut local_buf);
        if bytes.get(m..m + local.len()) != Some(local) {
            return Err(io::Error::other(format!(
                "internal error: event {} of a chunk is numbered otherwise",
                i + 1
            )));
        }
        seq += 1;
        to.extend_from_slice(&bytes[at..m]);
        to.extend_from_slice(digits(seq, &mut seq_buf));
        at = m + local.len();
    }
    to.extend_from_slice(&bytes[at..]);
    Ok(seq)
}

/// The decimal digits of `n`, in `buf`.
fn digits(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

fn add_stats(total: &mut Stats, part: Stats) {
    total.lines += part.lines;
    total.events += part.events;
    total.raw_events += part.raw_events;
    for (k, n) in part.dropped {
        *total.dropped.entry(k).or_default() += n;
    }
    total.stopped |= part.stopped;
    total.provider_lines += part.provider_lines;
    total.provider_raw += part.provider_raw;
    total.forgot.add(part.forgot);
}

/// The `--jobs` to use when none is given: one for anything live (a pipe, a terminal) or
/// small, else one per core; standard input redirected from a file counts as that file.
pub fn default_jobs(sources: &[Source], flush: FlushPolicy) -> usize {
    if flush == FlushPolicy::Line {
        return 1;
    }
    let mut total = 0u64;
    for s in sources {
        match s.regular_file_len() {
            Some(len) => total += len,
            None => return 1,
        }
    }
    if total < 8 * CHUNK_BYTES as u64 {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
