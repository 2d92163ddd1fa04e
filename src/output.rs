//! Output policy: one locked, buffered stdout; when to flush; colour decisions.

use std::io::{self, BufWriter, IsTerminal, Write};

/// When buffered output is pushed to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushPolicy {
    /// After every input line (`--line-buffered`, or stdout is a terminal).
    Line,
    /// Whenever no further complete input line is ready, so a live pipe never waits on us,
    /// while a file read in one go is written in large blocks (the default on pipes and files).
    WhenIdle,
    /// Only when the buffer is full and at the end (`--block-buffered`).
    Block,
}

impl FlushPolicy {
    /// Flush now? `more_ready`: another complete input line is already buffered.
    pub fn flush_now(self, more_ready: bool) -> bool {
        match self {
            FlushPolicy::Line => true,
            FlushPolicy::WhenIdle => !more_ready,
            FlushPolicy::Block => false,
        }
    }
}

/// What [`widen_stdout_pipe`] asks for: Linux's default limit for a pipe an ordinary user
/// enlarges (`/proc/sys/fs/pipe-max-size`).
pub const PIPE_SIZE: i32 = 1 << 20;

/// Lets the pipe on standard output, if it is one, hold [`PIPE_SIZE`] bytes instead of Linux's
/// 64 KiB. A writer that fills a pipe waits for its reader; with 64 KiB that happens every few
/// hundred events, and each wait costs two context switches, so a large conversion or `reduce`
/// state written into a pipe is measurably faster with the larger one (the figures are in the
/// commit messages). Every subcommand asks for it.
/// Live output is unaffected: lines are flushed as before, whatever the pipe holds. Best
/// effort: where the pipe is as large already, or a limit refuses (pipe-max-size, the user's
/// share of pipe memory), it stays as it is.
pub fn widen_stdout_pipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: fstat on descriptor 1 into a zeroed `stat` of the right type, and fcntl with
    // F_GETPIPE_SZ / F_SETPIPE_SZ and an int; both only report errors, which are ignored.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(1, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFIFO {
            let size = libc::fcntl(1, libc::F_GETPIPE_SZ);
            if (0..PIPE_SIZE).contains(&size) {
                libc::fcntl(1, libc::F_SETPIPE_SZ, PIPE_SIZE);
            }
        }
    }
}

/// Buffered standard output.
pub struct Out<W: Write> {
    pub w: BufWriter<W>,
    /// One line as it is serialized (writing into a `Vec` costs less per piece than into
    /// the `BufWriter`).
    line: Vec<u8>,
}

impl Out<io::StdoutLock<'static>> {
    pub fn stdout() -> Self {
        Out::new(io::stdout().lock())
    }
}

impl<W: Write> Out<W> {
    pub fn new(w: W) -> Self {
        Out {
            w: BufWriter::with_capacity(64 * 1024, w),
            line: Vec::with_capacity(4096),
        }
    }

    /// Output with no buffer of its own: every write goes to `w` at once (`export`, whose
    /// writer takes the lines passed through in their place among the events of the tap).
    pub fn unbuffered(w: W) -> Self {
        Out {
            w: BufWriter::with_capacity(0, w),
            line: Vec::with_capacity(4096),
        }
    }

    /// Writes one JSON line.
    pub fn json_line<T: serde::Serialize>(&mut self, v: &T) -> io::Result<()> {
        self.line.clear();
        crate::json_writer::write(&mut self.line, v).map_err(io::Error::from)?;
        self.line.push(b'\n');
        self.w.write_all(&self.line)
    }

    /// Writes one JSON object line member by member, as `serde_json` would; `at_seq` is
    /// called just before the value of the member `seq` is written.
    pub fn object_line<'m, K, V>(
        &mut self,
        members: impl IntoIterator<Item = (&'m K, &'m V)>,
        mut at_seq: impl FnMut(&mut BufWriter<W>) -> io::Result<()>,
    ) -> io::Result<()>
    where
        K: AsRef<str> + ?Sized + 'm,
        V: serde::Serialize + 'm,
    {
        self.w.write_all(b"{")?;
        for (i, (k, v)) in members.into_iter().enumerate() {
            if i > 0 {
                self.w.write_all(b",")?;
            }
            serde_json::to_writer(&mut self.w, k.as_ref()).map_err(io::Error::from)?;
            self.w.write_all(b":")?;
            if k.as_ref() == "seq" {
                at_seq(&mut self.w)?;
            }
            serde_json::to_writer(&mut self.w, v).map_err(io::Error::from)?;
        }
        self.w.write_all(b"}\n")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// The last line [`Out::json_line`] wrote.
    pub fn last_line(&self) -> &[u8] {
        &self.line
    }
}

impl Out<Vec<u8>> {
    /// Output kept in memory: a chunk of `--jobs`, events `validate` checks. Lines go
    /// straight into `buf` (a buffer in front of it would only copy them once more).
    pub fn chunk(buf: Vec<u8>) -> Self {
        Out {
            w: BufWriter::with_capacity(0, buf),
            line: Vec::with_capacity(4096),
        }
    }

    /// What was written, after a flush.
    pub fn chunk_bytes(w: &BufWriter<Vec<u8>>) -> &[u8] {
        w.get_ref()
    }

    pub fn into_chunk(self) -> Vec<u8> {
        let (mut buf, rest) = self.w.into_parts();
        buf.extend_from_slice(&rest.unwrap_or_default());
        buf
    }
}

/// `--color` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`.
    Auto,
    /// Always colour.
    Always,
    /// Never colour: no escape sequence is written at all.
    Never,
}

impl ColorChoice {
    /// Decides once for a stream: `is_tty` is whether that stream is a terminal.
    pub fn resolve(self, is_tty: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_tty
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
            }
        }
    }
}

pub fn stdout_is_tty() -> bool {
    io::stdout().is_terminal()
}

pub fn stderr_is_tty() -> bool {
    io::stderr().is_terminal()
}

/// The columns of the terminal standard output writes to, asked of the terminal itself
/// (TIOCGWINSZ); `None` when standard output is not a terminal or it does not say.
pub fn terminal_width() -> Option<usize> {
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ writes only the winsize it is given.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
        (ok && ws.ws_col > 0).then_some(usize::from(ws.ws_col))
    }
    #[cfg(not(unix))]
    None
}

/// Whether an error chain is a broken pipe (the reader went away: end quietly).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn when_idle_flushes_only_without_more_input() {
        assert!(FlushPolicy::WhenIdle.flush_now(false));
        assert!(!FlushPolicy::WhenIdle.flush_now(true));
        assert!(FlushPolicy::Line.flush_now(true));
        assert!(!FlushPolicy::Block.flush_now(false));
    }

    #[test]
    fn never_and_always() {
        assert!(!ColorChoice::Never.resolve(true));
        assert!(ColorChoice::Always.resolve(false));
        assert!(!ColorChoice::Auto.resolve(false));
    }
}

/// Passes only whole lines on to `inner`, and redacts them first with `--redact`.
///
/// The `BufWriter` of [`Out`] writes its buffer out when it is full, which is mostly in the
/// middle of a line. Below it, this keeps the tail of each write back until its line is
/// complete, so the operating system is only ever handed whole lines: a reader never sees half
/// a line, and a run ended by a signal ([`crate::signals`]) leaves output ending at a line end.
/// (A disk that fills up in the middle of a write can still cut a line: that error is reported
/// and ends the run with status 2. So can SIGKILL, which stops a write to a file between
/// pages.) [`WholeLines::flush`] passes on an incomplete line too.
pub struct WholeLines<W: Write> {
    inner: W,
    /// The incomplete last line, held back.
    pending: Vec<u8>,
    redact: bool,
}

impl<W: Write> WholeLines<W> {
    pub fn new(inner: W, redact: bool) -> Self {
        WholeLines {
            inner,
            pending: Vec::new(),
            redact,
        }
    }

    fn emit(&mut self, lines: &[u8]) -> io::Result<()> {
        if self.redact {
            self.inner.write_all(&crate::redact::redact(lines))
        } else {
            self.inner.write_all(lines)
        }
    }
}

impl<W: Write> Write for WholeLines<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let Some(nl) = data.iter().rposition(|&b| b == b'\n') else {
            self.pending.extend_from_slice(data);
            return Ok(data.len());
        };
        let (lines, tail) = data.split_at(nl + 1);
        if self.pending.is_empty() {
            self.emit(lines)?;
        } else {
            let mut head = std::mem::take(&mut self.pending);
            head.extend_from_slice(lines);
            let res = self.emit(&head);
            head.clear();
            self.pending = head;
            res?;
        }
        self.pending.extend_from_slice(tail);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let tail = std::mem::take(&mut self.pending);
            self.emit(&tail)?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod whole_lines_tests {
    use super::*;

    /// Records each write it is handed.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);
    impl Write for Writes {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.0.push(data.to_vec());
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn only_whole_lines_reach_the_writer_below() {
        // A buffer smaller than the lines: BufWriter writes in the middle of lines.
        let mut out = BufWriter::with_capacity(7, WholeLines::new(Writes::default(), false));
        for i in 0..50 {
            serde_json::to_writer(
                &mut out,
                &serde_json::json!({ "n": i, "pad": "x".repeat(i % 13) }),
            )
            .unwrap();
            out.write_all(b"\n").unwrap();
        }
        out.flush().unwrap();
        let writes = out.into_inner().ok().unwrap().inner.0;
        assert!(writes.len() > 1);
        let all: Vec<u8> = writes.concat();
        assert_eq!(all.iter().filter(|&&b| b == b'\n').count(), 50);
        for w in &writes {
            assert_eq!(w.last(), Some(&b'\n'), "{}", String::from_utf8_lossy(w));
        }
    }

    #[test]
    fn flush_passes_an_incomplete_line_on() {
        let mut w = WholeLines::new(Writes::default(), false);
        w.write_all(b"a\nb").unwrap();
        assert_eq!(w.inner.0, [b"a\n".to_vec()]);
        w.flush().unwrap();
        assert_eq!(w.inner.0.concat(), b"a\nb");
    }

    #[test]
    fn redaction_sees_whole_lines() {
        let line = b"{\"t\":\"key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA end\"}\n";
        let mut w = WholeLines::new(Vec::new(), true);
        for chunk in line.chunks(5) {
            w.write_all(chunk).unwrap();
        }
        w.flush().unwrap();
        assert_eq!(w.inner, b"{\"t\":\"key [REDACTED:anthropic-key] end\"}\n");
    }
}
