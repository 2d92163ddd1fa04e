//! Input policy: files or stdin, read as byte lines into a reused buffer, with a size cap.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::signals::{self, UntilSignal};

/// Where lines come from.
#[derive(Debug, Clone)]
pub enum Source {
    Stdin,
    File(PathBuf),
    /// One conversation kept in several files, read as one in time order (see
    /// [`group_conversations`]): the first file is the session's, the others its subagents'.
    Group(Vec<PathBuf>),
}

impl Source {
    pub fn from_arg(arg: &Path) -> Source {
        if arg == Path::new("-") {
            Source::Stdin
        } else {
            Source::File(arg.to_path_buf())
        }
    }

    /// The name diagnostics use.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".into(),
            Source::File(p) => p.display().to_string(),
            Source::Group(g) => g
                .first()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        }
    }

    /// Whether this is a conversation of several files (read on one thread).
    pub fn is_group(&self) -> bool {
        matches!(self, Source::Group(_))
    }

    /// The input's lines, or `None` after reporting why it cannot be opened. A group's
    /// files that cannot be opened are reported and left out.
    pub fn lines_or_report(
        &self,
        max: usize,
        diag: &mut crate::diag::Diag,
    ) -> Option<crate::lines::SourceLines<'static>> {
        match self {
            Source::Group(paths) => Some(crate::lines::SourceLines::Merged(
                crate::lines::Merge::open(paths, max, &mut |name, e| diag.io_error(name, e)),
            )),
            _ => {
                let reader = self.open_or_report(diag)?;
                Some(crate::lines::SourceLines::one(reader, self.name(), max))
            }
        }
    }

    /// Opens the input, or reports why it cannot be opened (`None`: go on with the next).
    pub fn open_or_report(&self, diag: &mut crate::diag::Diag) -> Option<Box<dyn Read + Send>> {
        match self.open() {
            Ok(r) => Some(r),
            Err(e) => {
                diag.io_error(&self.name(), &e);
                None
            }
        }
    }

    /// The size of the input if it is a regular file (standard input too, when it was
    /// redirected from one: `insights < log.jsonl`), which nothing writes to while it is read
    /// and which can be read in blocks; `None` for a pipe, a terminal or what cannot be read.
    pub fn regular_file_len(&self) -> Option<u64> {
        let meta = match self {
            // A database is read as the lines made of it, not in blocks of the file.
            Source::File(p) if crate::providers::opencode_db::is_database(p) => return None,
            Source::File(p) => std::fs::metadata(p).ok()?,
            Source::Stdin => stdin_metadata()?,
            Source::Group(_) => return None,
        };
        meta.is_file().then_some(meta.len())
    }

    pub fn open(&self) -> io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Source::Stdin => Box::new(io::stdin()),
            // OpenCode's database, read-only, as lines of its `run --format json` shape.
            Source::File(p) if crate::providers::opencode_db::is_database(p) => Box::new(
                io::Cursor::new(crate::providers::opencode_db::lines(p).map_err(io::Error::other)?),
            ),
            Source::File(p) => Box::new(File::open(p)?),
            // The files one after the other (what reads a group as one uses
            // [`Source::lines_or_report`]).
            Source::Group(paths) => {
                let mut all: Box<dyn Read + Send> = Box::new(io::empty());
                for p in paths {
                    all = Box::new(all.chain(File::open(p)?));
                }
                all
            }
        })
    }
}

/// What standard input is (through a duplicate of its descriptor, which is closed again).
#[cfg(unix)]
fn stdin_metadata() -> Option<std::fs::Metadata> {
    use std::os::fd::AsFd;
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    File::from(fd).metadata().ok()
}

#[cfg(not(unix))]
fn stdin_metadata() -> Option<std::fs::Metadata> {
    None
}

/// One line, or why it cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// The line's bytes are in the reader's buffer (without the line end).
    Ok,
    /// Longer than the cap; its bytes were skipped.
    TooLong { len: u64 },
}

/// Reads `\n`-terminated byte lines. Handles CRLF, a UTF-8 BOM on the first line and a last
/// line without a newline. Once a termination signal was caught (see [`crate::signals`]), it
/// returns no further line, and drops a line that the signal cut short.
pub struct LineReader<R> {
    inner: BufReader<UntilSignal<R>>,
    max: usize,
    lineno: u64,
    /// Whether the last line returned ended at EOF without `\n`.
    unterminated: bool,
    /// Where the next `\n` is in the buffer, as [`LineReader::has_buffered_line`] found it
    /// (so `next_line` need not look again); `None` when not known.
    next_newline: Option<usize>,
}

impl<R: Read> LineReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, UntilSignal(inner)),
            max,
            lineno: 0,
            unterminated: false,
            next_newline: None,
        }
    }

    /// The number of the line last read (1-based).
    pub fn lineno(&self) -> u64 {
        self.lineno
    }

    /// Whether the line last read had no final newline (the input ended inside it).
    pub fn unterminated(&self) -> bool {
        self.unterminated
    }

    /// Whether a complete further line is already buffered, so reading it will not block.
    pub fn has_buffered_line(&mut self) -> bool {
        self.next_newline = memchr::memchr(b'\n', self.inner.buffer());
        self.next_newline.is_some()
    }

    /// Reads the next line into `buf` (cleared first). `None` at end of input.
    pub fn next_line(&mut self, buf: &mut Vec<u8>) -> io::Result<Option<Line>> {
        buf.clear();
        self.append_line(buf)
    }

    /// Reads the next line onto the end of `buf`, which keeps what it holds: `--jobs`
    /// gathers a chunk's lines in place, not each through a buffer of its own. What is
    /// appended is what [`LineReader::next_line`] reads; nothing for a line over the cap.
    pub fn append_line(&mut self, buf: &mut Vec<u8>) -> io::Result<Option<Line>> {
        let start = buf.len();
        if signals::caught().is_some() {
            return Ok(None);
        }
        // Room for the longest line plus its `\r\n`, which does not count.
        let cap = self.max as u64 + 2;
        let n = match self.next_newline.take() {
            Some(i) if (i as u64) < cap => {
                buf.extend_from_slice(&self.inner.buffer()[..=i]);
                self.inner.consume(i + 1);
                i + 1
            }
            _ => read_until_newline(&mut (&mut self.inner).take(cap), buf)?,
        };
        if n == 0 {
            return Ok(None);
        }
        self.lineno += 1;
        let terminated = buf.last() == Some(&b'\n');
        if terminated {
            buf.pop();
        }
        match judge(&buf[start..], terminated, self.max, self.lineno == 1) {
            Err(mut len) => {
                if !terminated {
                    let (skipped, found) = self.skip_line()?;
                    if !found && signals::caught().is_some() {
                        buf.truncate(start);
                        return Ok(None);
                    }
                    len += skipped;
                    self.unterminated = !found;
                }
                buf.truncate(start);
                Ok(Some(Line::TooLong { len }))
            }
            Ok(_) if !terminated && signals::caught().is_some() => {
                buf.truncate(start);
                Ok(None)
            }
            Ok(kept) => {
                self.unterminated = !terminated;
                buf.truncate(start + kept.end);
                if kept.start > 0 {
                    buf.drain(start..start + kept.start);
                }
                Ok(Some(Line::Ok))
            }
        }
    }

    /// Skips to just past the next `\n`; returns the bytes skipped and whether one was found.
    fn skip_line(&mut self) -> io::Result<(u64, bool)> {
        let mut skipped = 0u64;
        loop {
            let avail = self.inner.fill_buf()?;
            if avail.is_empty() {
                return Ok((skipped, false));
            }
            if let Some(i) = memchr::memchr(b'\n', avail) {
                self.inner.consume(i + 1);
                return Ok((skipped + i as u64, true));
            }
            let n = avail.len();
            self.inner.consume(n);
            skipped += n as u64;
        }
    }
}

/// What a block read by [`BlockReader`] holds besides its text.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// Number of the block's first line (1-based).
    pub first_line: u64,
    /// Lines over the cap that were skipped as they were read (longer than a block could
    /// hold): their numbers and lengths. Each stands in the text as an empty line.
    pub too_long: Vec<(u64, u64)>,
    /// The block's last line is the input's and had no newline (the text has one added).
    pub unterminated: bool,
}

/// How much a [`BlockReader`] reads past a block's size to find the line end there, and at a
/// time while a line longer than a block goes on.
const BLOCK_STEP: usize = 16 * 1024;

/// Reads whole lines a block at a time, straight into the caller's buffer: `--jobs` on a
/// regular file, where each worker reads its own block, so its bytes are copied once, by the
/// kernel, into memory of the core that converts them (through a [`LineReader`], a reading
/// thread copied every line once more, into memory another core then read). The lines are
/// left as read; [`BlockLines`] splits them by [`LineReader`]'s rules.
pub struct BlockReader<R> {
    inner: R,
    max: usize,
    /// What was read past the last block's end: the start of the next.
    carry: Vec<u8>,
    /// Number of the next block's first line.
    next_line: u64,
    done: bool,
    /// [`BLOCK_STEP`], but in tests.
    step: usize,
}

impl<R: Read> BlockReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        BlockReader {
            inner,
            max,
            carry: Vec::new(),
            next_line: 1,
            done: false,
            step: BLOCK_STEP,
        }
    }

    /// Reads `step` bytes at a time past a block's size (tests and fuzzing: small steps make
    /// lines cross reads).
    #[allow(dead_code)] // the unit tests and fuzz/ (`targets::lines_read`)
    pub fn with_step(mut self, step: usize) -> Self {
        self.step = step.max(1);
        self
    }

    /// Reads the next block into `text` (cleared first): whole lines, each ending in `\n`,
    /// the fewest that hold `size` bytes, or what is left of the input. `None` at its end.
    /// Once a termination signal was caught it reads no further block, and drops a line the
    /// signal cut short.
    pub fn next_block(&mut self, text: &mut Vec<u8>, size: usize) -> io::Result<Option<Block>> {
        text.clear();
        if self.done || signals::caught().is_some() {
            self.done = true;
            return Ok(None);
        }
        text.append(&mut self.carry);
        let mut block = Block {
            first_line: self.next_line,
            ..Block::default()
        };
        // The block ends at the first newline from `size - 1` on; `searched`: no newline
        // before it from there.
        let from = size.max(1) - 1;
        let mut searched = from;
        // Where the last line read so far starts.
        let mut line_start = memchr::memrchr(b'\n', text).map_or(0, |i| i + 1);
        loop {
            if let Some(i) = text.get(searched..).and_then(|t| memchr::memchr(b'\n', t)) {
                let cut = searched + i + 1;
                self.carry.extend_from_slice(&text[cut..]);
                text.truncate(cut);
                break;
            }
            searched = searched.max(text.len());
            if text.len() - line_start >= self.max.saturating_add(2) {
                // Longer than the cap whatever follows: skip the rest of it.
                let lineno = block.first_line + count_lines(&text[..line_start]);
                let len = (text.len() - line_start) as u64;
                text.truncate(line_start);
                let (rest, found) = self.skip_line(text)?;
                if found {
                    block.too_long.push((lineno, len + rest));
                    searched = from.max(line_start);
                    line_start += memchr::memrchr(b'\n', &text[line_start..]).map_or(0, |i| i + 1);
                    continue;
                }
                if signals::caught().is_none() {
                    block.too_long.push((lineno, len + rest));
                    text.push(b'\n');
                    block.unterminated = true;
                }
                self.done = true;
                break;
            }
            let want = if text.len() < size {
                size - text.len() + self.step
            } else {
                self.step
            };
            let before = text.len();
            if self.read_more(text, want)? == 0 {
                self.done = true;
                if text.len() > line_start {
                    if signals::caught().is_some() {
                        text.truncate(line_start);
                    } else {
                        text.push(b'\n');
                        block.unterminated = true;
                    }
                }
                break;
            }
            if let Some(i) = memchr::memrchr(b'\n', &text[before..]) {
                line_start = before + i + 1;
            }
        }
        if text.is_empty() {
            return Ok(None);
        }
        self.next_line += count_lines(text);
        Ok(Some(block))
    }

    /// Appends up to `want` bytes read from the input to `text`: the number read, 0 at the
    /// input's end or once a termination signal was caught. Read into the vector's spare
    /// room, with no zeroing first (`read_to_end` hands a `File` memory it has not
    /// initialized); the reads of a regular file are short, so the signal is seen in time.
    fn read_more(&mut self, text: &mut Vec<u8>, want: usize) -> io::Result<usize> {
        if signals::caught().is_some() {
            return Ok(0);
        }
        text.reserve(want);
        (&mut self.inner).take(want as u64).read_to_end(text)
    }

    /// Reads past the rest of a line over the cap, whose start `text` no longer holds: the
    /// bytes skipped, and whether a newline ended them (`text` then has that newline and what
    /// was read after it; else it is as it was).
    fn skip_line(&mut self, text: &mut Vec<u8>) -> io::Result<(u64, bool)> {
        let start = text.len();
        let mut skipped = 0u64;
        loop {
            let n = self.read_more(text, self.step)?;
            if n == 0 {
                return Ok((skipped, false));
            }
            match memchr::memchr(b'\n', &text[start..]) {
                Some(i) => {
                    text.drain(start..start + i);
                    return Ok((skipped + i as u64, true));
                }
                None => {
                    skipped += n as u64;
                    text.truncate(start);
                }
            }
        }
    }
}

/// The number of `\n` in `bytes`.
fn count_lines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// The lines of a block [`BlockReader`] read, as [`LineReader`] would return them: CRLF
/// stripped, a BOM on the input's first line too, lines over the cap as [`Line::TooLong`]
/// (with no bytes). Yields (number, line, bytes, whether it is the input's last line and had
/// no newline).
pub struct BlockLines<'a> {
    text: &'a [u8],
    block: &'a Block,
    max: usize,
    at: usize,
    lineno: u64,
    too_long: usize,
}

impl<'a> BlockLines<'a> {
    pub fn new(text: &'a [u8], block: &'a Block, max: usize) -> Self {
        BlockLines {
            text,
            block,
            max,
            at: 0,
            lineno: block.first_line,
            too_long: 0,
        }
    }
}

impl<'a> Iterator for BlockLines<'a> {
    type Item = (u64, Line, &'a [u8], bool);

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.text.get(self.at..).filter(|r| !r.is_empty())?;
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let bytes = &rest[..end];
        self.at += end + 1;
        let lineno = self.lineno;
        self.lineno += 1;
        let unterminated = self.block.unterminated && self.at >= self.text.len();
        if let Some(&(n, len)) = self.block.too_long.get(self.too_long) {
            if n == lineno {
                self.too_long += 1;
                return Some((lineno, Line::TooLong { len }, &[], unterminated));
            }
        }
        Some(match judge(bytes, !unterminated, self.max, lineno == 1) {
            Ok(kept) => (lineno, Line::Ok, &bytes[kept], unterminated),
            Err(len) => (lineno, Line::TooLong { len }, &[], unterminated),
        })
    }
}

/// What of a line's bytes (its `\n` removed; `terminated`: there was one) the converter gets,
/// as a range of them, or the line's length if it is over the cap `max`: a CR before the
/// newline is dropped, and a BOM at the start of the input's first line. The one rule for
/// [`LineReader`] and [`BlockLines`]. A line of the cap plus two bytes or more is over it with
/// its CR counted: a [`LineReader`] gives a line up after that many bytes, before it sees
/// whether a `\r\n` ends it.
#[inline]
fn judge(bytes: &[u8], terminated: bool, max: usize, first: bool) -> Result<Range<usize>, u64> {
    let mut end = bytes.len();
    if terminated && end < max.saturating_add(2) && bytes.last() == Some(&b'\r') {
        end -= 1;
    }
    if end > max {
        return Err(end as u64);
    }
    let start = if first && bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    Ok(start.min(end)..end)
}

/// `read_until(b'\n', buf)`, finding the newline with [`memchr`]: the bytes read.
fn read_until_newline(r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut read = 0;
    loop {
        let (done, used) = {
            let avail = match r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            match memchr::memchr(b'\n', avail) {
                Some(i) => {
                    buf.extend_from_slice(&avail[..=i]);
                    (true, i + 1)
                }
                None => {
                    buf.extend_from_slice(avail);
                    (avail.is_empty(), avail.len())
                }
            }
        };
        r.consume(used);
        read += used;
        if done {
            return Ok(read);
        }
    }
}

/// The lines of `input` as one thread reads them and as `--jobs` reads them, to compare (the
/// unit tests, and the fuzz target `lines`): (number, bytes or length over the cap, whether
/// the input's last line had no newline).
pub type ReadLines = Vec<(u64, Result<Vec<u8>, u64>, bool)>;

/// `input` read by a [`LineReader`] with the cap `max`.
#[allow(dead_code)] // the unit tests and fuzz/
pub fn read_as_lines(input: &[u8], max: usize) -> io::Result<ReadLines> {
    let mut r = LineReader::new(input, max);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    while let Some(l) = r.next_line(&mut buf)? {
        let v = match l {
            Line::Ok => Ok(buf.clone()),
            Line::TooLong { len } => Err(len),
        };
        out.push((r.lineno(), v, r.unterminated()));
    }
    Ok(out)
}

/// `input` read by a [`BlockReader`] in blocks of `size` and reads of `step` past it, split
/// by [`BlockLines`]; panics if a block does not end with a whole line or is numbered wrong.
#[allow(dead_code)] // the unit tests and fuzz/
pub fn read_as_blocks(input: &[u8], max: usize, size: usize, step: usize) -> io::Result<ReadLines> {
    let mut r = BlockReader::new(input, max).with_step(step);
    let mut text = Vec::new();
    let mut out = Vec::new();
    while let Some(block) = r.next_block(&mut text, size)? {
        assert_eq!(text.last(), Some(&b'\n'), "a block ends with a line");
        assert_eq!(block.first_line, out.len() as u64 + 1, "numbered on");
        for (n, line, bytes, unterminated) in BlockLines::new(&text, &block, max) {
            let v = match line {
                Line::Ok => Ok(bytes.to_vec()),
                Line::TooLong { len } => Err(len),
            };
            out.push((n, v, unterminated));
        }
    }
    Ok(out)
}

/// Replaces each directory by the `*.jsonl` files below it (hidden directories too: the
/// agents keep their sessions in `.claude`, `.codex`, `.gemini`), in path order (a session
/// file before the folder of its name; Claude Code's subagent files in the order they
/// started); every command reads directories so. A directory that cannot be read is
/// reported on `diag`.
pub fn expand_dirs(sources: &[Source], diag: &mut crate::diag::Diag) -> Vec<Source> {
    expand_dirs_or(sources, diag, &mut |dir, diag| {
        diag.note(&format!("{}: no *.jsonl files", dir.display()))
    })
}

/// [`expand_dirs`], with `empty` called for each directory that holds no `*.jsonl` file
/// (instead of a note).
pub fn expand_dirs_or(
    sources: &[Source],
    diag: &mut crate::diag::Diag,
    empty: &mut dyn FnMut(&Path, &mut crate::diag::Diag),
) -> Vec<Source> {
    let mut out = Vec::new();
    for src in sources {
        match src {
            Source::File(p) if p.is_dir() => {
                let before = out.len();
                walk(p, &mut out, diag);
                if out.len() == before {
                    empty(p, diag);
                }
            }
            _ => out.push(src.clone()),
        }
    }
    out
}

/// Joins each session file with its subagents' files, which come after it in the list, into
/// one [`Source::Group`]: the conversation as the live stream told it, a subagent's lines
/// inside its call. Claude Code keeps them in `<dir>/<session>/subagents/*.jsonl` beside
/// `<dir>/<session>.jsonl`, Qwen Code in `<project>/subagents/<session>/*.jsonl` beside
/// `<project>/chats/<session>.jsonl` ([`session_files_of`]); a subagent's file joins the
/// last session file of that path before it, not across standard input. `convert`,
/// `reduce`, `replay`, `store` and `export` read so; `validate` checks each file as written.
pub fn group_conversations(sources: Vec<Source>) -> Vec<Source> {
    type Map<'a, V> = std::collections::HashMap<
        &'a std::ffi::OsStr,
        V,
        std::hash::BuildHasherDefault<crate::ids::Hash64>,
    >;
    // Only a subagent's file joins another: the session files those may join are found
    // first (a few), so that the other files, tens of thousands in a store of a large home,
    // are only looked for among them.
    let subagents: Vec<(usize, [Option<PathBuf>; 2])> = sources
        .iter()
        .enumerate()
        .filter_map(|(i, src)| match src {
            Source::File(p) => {
                let of = session_files_of(p);
                (of[0].is_some() || of[1].is_some()).then_some((i, of))
            }
            _ => None,
        })
        .collect();
    if subagents.is_empty() {
        return sources;
    }
    let wanted: Map<'_, ()> = subagents
        .iter()
        .flat_map(|(_, of)| of.iter().flatten())
        .map(|p| (p.as_os_str(), ()))
        .collect();
    // Which earlier source each file joins, by index.
    let mut joins: Vec<Option<usize>> = vec![None; sources.len()];
    {
        // The session files so far, by path: their index.
        let mut sessions: Map<'_, usize> = Map::default();
        let mut next = subagents.iter().peekable();
        for (i, src) in sources.iter().enumerate() {
            match src {
                Source::File(p) => {
                    let of = next.next_if(|(j, _)| *j == i).map(|(_, of)| of);
                    let at = of
                        .into_iter()
                        .flatten()
                        .flatten()
                        .find_map(|s| sessions.get(s.as_os_str()).copied());
                    match at {
                        Some(j) => joins[i] = Some(j),
                        None if wanted.contains_key(p.as_os_str()) => {
                            sessions.insert(p.as_os_str(), i);
                        }
                        None => {}
                    }
                }
                Source::Stdin => sessions.clear(),
                Source::Group(_) => {}
            }
        }
    }
    let mut out: Vec<Source> = Vec::with_capacity(sources.len());
    // Each source's place in `out`, when it has one of its own.
    let mut place: Vec<usize> = vec![0; sources.len()];
    for (i, src) in sources.into_iter().enumerate() {
        match (joins[i], src) {
            (Some(j), Source::File(p)) => {
                let at = place[j];
                out[at] = match std::mem::replace(&mut out[at], Source::Stdin) {
                    Source::File(f) => Source::Group(vec![f, p]),
                    Source::Group(mut g) => {
                        g.push(p);
                        Source::Group(g)
                    }
                    other => other,
                };
            }
            (_, src) => {
                place[i] = out.len();
                out.push(src);
            }
        }
    }
    out
}

/// The session files a subagent's `file` may belong to: Claude Code's `<dir>/<session>.jsonl`
/// for `<dir>/<session>/subagents/<name>.jsonl`, Qwen Code's `<project>/chats/<session>.jsonl`
/// for `<project>/subagents/<session>/<name>.jsonl`.
fn session_files_of(file: &Path) -> [Option<PathBuf>; 2] {
    // Both kinds are below a `subagents` folder: most files are told apart by their bytes.
    let bytes = file.as_os_str().as_encoded_bytes();
    if memchr::memmem::find(bytes, b"subagents").is_none()
        || !file.extension().is_some_and(|x| x == "jsonl")
    {
        return [None, None];
    }
    let parent = file.parent();
    fn named<'p>(d: Option<&'p Path>, n: &str) -> Option<&'p Path> {
        d.filter(|d| d.file_name().is_some_and(|f| f == n))
    }
    let claude = named(parent, "subagents")
        .and_then(Path::parent)
        .map(|session| session.with_extension("jsonl"));
    let qwen = parent.and_then(|session| {
        let project = named(session.parent(), "subagents")?.parent()?;
        let mut name = session.file_name()?.to_owned();
        name.push(".jsonl");
        Some(project.join("chats").join(name))
    });
    [claude, qwen]
}

fn walk(dir: &Path, out: &mut Vec<Source>, diag: &mut crate::diag::Diag) {
    jsonl_files(dir, &mut |p| out.push(Source::File(p)), &mut |d, e| {
        diag.io_error(&d.display().to_string(), &e)
    });
}

/// Calls `found` with each `*.jsonl` file below `dir` (and OpenCode's database,
/// `opencode.db`, which is read as lines: [`Source::open`]), in path order (a session file
/// before the folder of its name; the files of a `subagents` folder in the order their
/// first lines' times say), and `failed` with each directory that cannot be read.
pub fn jsonl_files(
    dir: &Path,
    found: &mut dyn FnMut(PathBuf),
    failed: &mut dyn FnMut(&Path, io::Error),
) {
    jsonl_files_since(dir, None, found, failed);
}

/// [`jsonl_files`], of the files last modified at or after `since` only when it is given
/// (`insights statusline` reads the files written today), in the order [`jsonl_files`] gives
/// them.
///
/// A directory entry's type comes from the directory itself: a regular file costs no system
/// call, or one `stat` relative to its directory with `since`; only a symbolic link is
/// followed by its path (links to files are read, links to directories are not followed).
pub fn jsonl_files_since(
    dir: &Path,
    since: Option<std::time::SystemTime>,
    found: &mut dyn FnMut(PathBuf),
    failed: &mut dyn FnMut(&Path, io::Error),
) {
    jsonl_files_stamped(dir, since, false, &mut |p, _| found(p), failed);
}

/// A file's size and modification time (nanoseconds since the epoch): what tells `store`
/// that a file changed since it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i64,
}

impl Stamp {
    pub fn of(m: &std::fs::Metadata) -> Stamp {
        let mtime_ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Stamp {
            size: m.len(),
            mtime_ns,
        }
    }
}

/// [`jsonl_files_since`], each file given with its [`Stamp`] when `stamp` asks for it (or
/// `since` made it known): a `stat` relative to its directory, which `store` would otherwise
/// make by the file's whole path. `None` when it cannot be had.
pub fn jsonl_files_stamped(
    dir: &Path,
    since: Option<std::time::SystemTime>,
    stamp: bool,
    found: &mut dyn FnMut(PathBuf, Option<Stamp>),
    failed: &mut dyn FnMut(&Path, io::Error),
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd.collect::<Result<Vec<_>, _>>(),
        Err(e) => Err(e),
    };
    let entries = match entries {
        Ok(v) => v,
        Err(e) => {
            failed(dir, e);
            return;
        }
    };
    let recent = |m: &std::fs::Metadata| since.is_none_or(|s| m.modified().is_ok_and(|t| t >= s));
    // Each entry kept: a directory (true), or a file to give (false) with its stamp.
    // Filtering before the orderings below keeps the order of what is kept, as both are
    // stable sorts.
    let mut kept: Vec<(std::fs::DirEntry, bool, Option<Stamp>)> = entries
        .into_iter()
        .filter_map(|e| {
            let ty = e.file_type().ok();
            if ty.is_some_and(|t| t.is_dir()) {
                return Some((e, true, None));
            }
            let name = e.file_name();
            let named =
                Path::new(&name).extension().is_some_and(|x| x == "jsonl") || name == "opencode.db";
            if !named {
                return None;
            }
            if ty.is_some_and(|t| t.is_file()) {
                if since.is_none() && !stamp {
                    return Some((e, false, None));
                }
                return match e.metadata() {
                    Ok(m) if recent(&m) => Some((e, false, Some(Stamp::of(&m)))),
                    Ok(_) => None,
                    Err(_) => since.is_none().then_some((e, false, None)),
                };
            }
            match std::fs::metadata(e.path()) {
                Ok(m) if m.is_file() && recent(&m) => Some((e, false, Some(Stamp::of(&m)))),
                _ => None,
            }
        })
        .collect();
    // Path order, but a session file before the folder of the same name: Claude Code keeps a
    // session's subagents in `<session>/subagents/`, and their lines name only the agent
    // id that the session's own file links to its call.
    kept.sort_by_cached_key(|(e, is_dir, _)| {
        let mut key = e.file_name();
        if *is_dir {
            // Sorts right after `<name>.jsonl`.
            key.push(".jsonl\0");
        }
        key
    });
    // A session's subagents (`<session>/subagents/agent-<id>.jsonl`) are named by a random
    // agent id: they are read in the order they started (their first line's time), so a
    // subagent's own subagents come after it, where its file names the call that started
    // them. Files without a time keep their place after those with one.
    if dir.file_name().is_some_and(|n| n == "subagents") {
        kept.sort_by_cached_key(|(e, is_dir, _)| {
            if *is_dir {
                i64::MAX
            } else {
                first_line_millis(&e.path()).unwrap_or(i64::MAX)
            }
        });
    }
    for (e, is_dir, st) in kept {
        if is_dir {
            jsonl_files_stamped(&e.path(), since, stamp, found, failed);
        } else {
            found(e.path(), st);
        }
    }
}

/// The time (`timestamp`, in Unix milliseconds) of a JSON Lines file's first line, when it
/// has one; at most the first 1 MiB is read.
pub fn first_line_millis(path: &Path) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Timed<'a> {
        #[serde(borrow)]
        timestamp: Option<std::borrow::Cow<'a, str>>,
    }
    let mut line = Vec::new();
    let file = File::open(path).ok()?;
    read_until_newline(&mut BufReader::new(file.take(1 << 20)), &mut line).ok()?;
    let t: Timed = serde_json::from_slice(&line).ok()?;
    crate::time::millis(&t.timestamp?)
}

/// The sources of the commands that read the agents' standard places when given no path
/// (`store`, `export`): each path given (a directory for its `*.jsonl` files, `-` for standard
/// input), else the standard places; a Claude Code session and its subagents' files joined
/// into one conversation. A path that does not exist is an error.
pub fn given_or_standard(
    paths: &[PathBuf],
    diag: &mut crate::diag::Diag,
) -> anyhow::Result<Vec<Source>> {
    use anyhow::Context as _;
    let sources = if paths.is_empty() {
        let (found, _) = crate::usage::homes::standard(&[]);
        found
            .into_iter()
            .filter(crate::usage::homes::Found::converts)
            .map(|f| Source::File(f.path))
            .collect()
    } else {
        for p in paths {
            if p.as_os_str() != "-" {
                std::fs::metadata(p).with_context(|| format!("{}: cannot read", p.display()))?;
            }
        }
        let given: Vec<Source> = paths.iter().map(|p| Source::from_arg(p)).collect();
        expand_dirs(&given, diag)
    };
    Ok(group_conversations(sources))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<(Result<String, u64>, bool)> {
        let mut r = LineReader::new(input, max);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        while let Some(l) = r.next_line(&mut buf).unwrap() {
            let v = match l {
                Line::Ok => Ok(String::from_utf8_lossy(&buf).into_owned()),
                Line::TooLong { len } => Err(len),
            };
            out.push((v, r.unterminated()));
        }
        out
    }

    /// `statusline` walks with `since`: the files written since then, in the order the whole
    /// walk gives them (its subagents by their first lines' times too).
    #[test]
    fn the_files_since_a_moment_are_the_whole_walk_s_in_its_order() {
        use std::time::{Duration, SystemTime};
        let dir = std::env::temp_dir().join(format!("insights-since-{}", std::process::id()));
        let subs = dir.join("p").join("s1").join("subagents");
        std::fs::create_dir_all(&subs).unwrap();
        let line = |t: &str| format!("{{\"type\":\"user\",\"timestamp\":\"{t}\"}}\n");
        let old = SystemTime::now() - Duration::from_secs(30 * 86_400);
        let files = [
            ("p/s0.jsonl", "2026-01-01T00:00:00.000Z", true),
            ("p/s1.jsonl", "2026-01-01T00:00:00.000Z", false),
            (
                "p/s1/subagents/agent-a.jsonl",
                "2026-01-01T00:00:03.000Z",
                false,
            ),
            (
                "p/s1/subagents/agent-b.jsonl",
                "2026-01-01T00:00:01.000Z",
                true,
            ),
            (
                "p/s1/subagents/agent-c.jsonl",
                "2026-01-01T00:00:02.000Z",
                false,
            ),
            ("p/s2.jsonl", "2026-01-01T00:00:00.000Z", true),
            ("p/notes.txt", "", false),
        ];
        for (name, t, is_old) in files {
            let path = dir.join(name);
            std::fs::write(&path, line(t)).unwrap();
            if is_old {
                std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_modified(old)
                    .unwrap();
            }
        }
        let walk = |since| {
            let mut found = Vec::new();
            jsonl_files_since(&dir, since, &mut |p| found.push(p), &mut |d, e| {
                panic!("{d:?}: {e}")
            });
            found
        };
        let all = walk(None);
        let since = SystemTime::now() - Duration::from_secs(86_400);
        let recent = walk(Some(since));
        let expected: Vec<PathBuf> = all
            .iter()
            .filter(|p| std::fs::metadata(p).unwrap().modified().unwrap() >= since)
            .cloned()
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            all.iter().map(name).collect::<Vec<_>>(),
            [
                "s0.jsonl",
                "s1.jsonl",
                "agent-b.jsonl",
                "agent-c.jsonl",
                "agent-a.jsonl",
                "s2.jsonl"
            ]
        );
        assert_eq!(recent, expected);
        assert_eq!(
            recent.iter().map(name).collect::<Vec<_>>(),
            ["s1.jsonl", "agent-c.jsonl", "agent-a.jsonl"]
        );
    }

    /// Subagent files are named by random ids: they are read in the order they started, a
    /// session's own file first; elsewhere path order holds.
    #[test]
    fn subagent_files_come_in_the_order_they_started() {
        let dir = std::env::temp_dir().join(format!("insights-subagents-{}", std::process::id()));
        let subs = dir.join("s1").join("subagents");
        std::fs::create_dir_all(&subs).unwrap();
        let line = |t: &str| format!("{{\"type\":\"user\",\"timestamp\":\"{t}\"}}\n");
        std::fs::write(dir.join("s1.jsonl"), line("2026-01-01T00:00:00.000Z")).unwrap();
        std::fs::write(subs.join("agent-a.jsonl"), line("2026-01-01T00:00:02.000Z")).unwrap();
        std::fs::write(subs.join("agent-b.jsonl"), line("2026-01-01T00:00:01.000Z")).unwrap();
        std::fs::write(subs.join("agent-c.jsonl"), "not json\n").unwrap();
        let mut found = Vec::new();
        jsonl_files(&dir, &mut |p| found.push(p), &mut |d, e| {
            panic!("{d:?}: {e}")
        });
        std::fs::remove_dir_all(&dir).unwrap();
        let names: Vec<String> = found
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "s1.jsonl",
                "agent-b.jsonl",
                "agent-a.jsonl",
                "agent-c.jsonl"
            ]
        );
    }

    #[test]
    fn a_session_file_and_its_subagents_files_are_one_conversation() {
        let f = |p: &str| Source::File(PathBuf::from(p));
        // Each source, a group as its file count and first file.
        let shown = |got: Vec<Source>| -> Vec<String> {
            got.iter()
                .map(|s| match s {
                    Source::Group(g) => format!("{} files from {}", g.len(), s.name()),
                    s => s.name(),
                })
                .collect()
        };
        let got = group_conversations(vec![
            f("p/s1.jsonl"),
            f("p/s1/subagents/agent-a.jsonl"),
            f("p/s1/subagents/agent-b.jsonl"),
            f("p/s2.jsonl"),
            f("p/s3/subagents/agent-c.jsonl"),
            Source::Stdin,
            f("p/s1/subagents/agent-d.jsonl"),
        ]);
        assert_eq!(
            shown(got),
            [
                "3 files from p/s1.jsonl",
                "p/s2.jsonl",
                "p/s3/subagents/agent-c.jsonl",
                "<stdin>",
                "p/s1/subagents/agent-d.jsonl"
            ]
        );
        // Qwen Code's: the chats first, then the subagents' folders.
        let got = group_conversations(vec![
            f("q/chats/s1.jsonl"),
            f("q/chats/s2.jsonl"),
            f("q/subagents/s1/agent-a.jsonl"),
            f("q/subagents/s2/agent-b.jsonl"),
            f("q/subagents/s2/agent-c.jsonl"),
            f("q/subagents/s3/agent-d.jsonl"),
        ]);
        assert_eq!(
            shown(got),
            [
                "2 files from q/chats/s1.jsonl",
                "3 files from q/chats/s2.jsonl",
                "q/subagents/s3/agent-d.jsonl"
            ]
        );
    }

    #[test]
    fn crlf_bom_and_missing_newline() {
        let got = lines(b"\xEF\xBB\xBF{\"a\":1}\r\n\n{}", 100);
        assert_eq!(got[0].0, Ok("{\"a\":1}".into()));
        assert_eq!(got[1].0, Ok("".into()));
        assert_eq!(got[2], (Ok("{}".into()), true));
    }

    #[test]
    fn over_long_lines_are_skipped_whole() {
        let got = lines(b"0123456789\nabc\n0123456789", 5);
        assert_eq!(got[0].0, Err(10));
        assert_eq!(got[1].0, Ok("abc".into()));
        assert_eq!(got[2], (Err(10), true));
    }

    /// `append_line` reads what `next_line` reads, onto what the buffer holds.
    #[test]
    fn appended_lines_are_the_lines_read() {
        for (input, max) in [
            (&b"\xEF\xBB\xBF{\"a\":1}\r\n\n\r\n{}"[..], 100),
            (b"0123456789\nabc\n\r\n0123456789", 5),
            (b"\n\n", 5),
        ] {
            let mut r = LineReader::new(input, max);
            let mut all = b"kept\r".to_vec();
            let mut got = Vec::new();
            while let Some(l) = r.append_line(&mut all).unwrap() {
                got.push(l);
                all.push(b'|');
            }
            let want = lines(input, max);
            let mut text = String::from("kept\r");
            for (l, _) in &want {
                text.push_str(l.as_deref().unwrap_or(""));
                text.push('|');
            }
            assert_eq!(String::from_utf8_lossy(&all), text, "{input:?}");
            let kinds: Vec<_> = want.iter().map(|(l, _)| l.is_ok()).collect();
            let got_kinds: Vec<_> = got.iter().map(|l| matches!(l, Line::Ok)).collect();
            assert_eq!(got_kinds, kinds);
        }
    }

    /// The one rule: a CR before the newline dropped (counted in a line of the cap plus two
    /// bytes or more), the cap, a BOM on the first line only.
    #[test]
    fn what_of_a_line_the_converter_gets() {
        assert_eq!(judge(b"abc\r", true, 3, false), Ok(0..3));
        assert_eq!(judge(b"abc\r", false, 3, false), Err(4));
        assert_eq!(judge(b"abcd\r", true, 4, false), Ok(0..4));
        assert_eq!(judge(b"abcd\r", true, 3, false), Err(5));
        assert_eq!(judge(b"abcd", true, 3, false), Err(4));
        assert_eq!(judge(b"\r", true, 0, false), Ok(0..0));
        assert_eq!(judge(b"\xEF\xBB\xBF{}\r", true, 9, true), Ok(3..5));
        assert_eq!(judge(b"\xEF\xBB\xBF{}", true, 9, false), Ok(0..5));
        assert_eq!(judge(b"\xEF\xBB\xBF{}", true, 4, true), Err(5));
    }

    /// A block reader's lines, split by BlockLines, are a LineReader's, whatever the block
    /// size, the read size and the cap: CRLF, lone CRs, a BOM, blank lines, lines over the
    /// cap (in a block, across reads, at the end), no final newline.
    #[test]
    fn blocks_hold_the_lines_a_line_reader_reads() {
        let mut inputs: Vec<Vec<u8>> = vec![
            b"\xEF\xBB\xBF{\"a\":1}\r\n\n\r\n{}".to_vec(),
            b"0123456789\nabc\n\r\n0123456789".to_vec(),
            b"\n\n".to_vec(),
            b"".to_vec(),
            b"abc".to_vec(),
            b"abc\r".to_vec(),
            b"abcd\r\nabcde\r\nabcdef\r\n\r\r\n\r".to_vec(),
            b"\xEF\xBB\xBFabcdefgh\nx\n".to_vec(),
            b"\xEF\xBB\xBF\n".to_vec(),
            b"a\rb\n\r\n\r\r\n".to_vec(),
        ];
        // Seeded, from an alphabet of the bytes that matter.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..300 {
            let mut v = Vec::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                v.push([b'a', b'b', b'\r', b'\n', b'\n', b'x'][(seed % 6) as usize]);
            }
            if seed % 5 == 0 {
                v.splice(0..0, *b"\xEF\xBB\xBF");
            }
            inputs.push(v);
        }
        for input in &inputs {
            for max in [0, 1, 2, 3, 4, 5, 7, 10, 100] {
                let want = read_as_lines(input, max).unwrap();
                for size in [1, 2, 3, 5, 8, 64] {
                    for step in [1, 2, 3, 16] {
                        assert_eq!(
                            read_as_blocks(input, max, size, step).unwrap(),
                            want,
                            "{:?} max {max} size {size} step {step}",
                            String::from_utf8_lossy(input)
                        );
                    }
                }
            }
        }
    }
}
