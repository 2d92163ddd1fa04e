//! Input policy: files or stdin, read as byte lines into a reused buffer, with a size cap.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::signals::{self, UntilSignal};

/// Where lines come from.
#[derive(Debug, Clone)]
pub enum Source {
    Stdin,
    File(PathBuf),
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

    pub fn open(&self) -> io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Source::Stdin => Box::new(io::stdin()),
            Source::File(p) => Box::new(File::open(p)?),
        })
    }
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
            if buf.len() > start && buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        if buf.len() - start > self.max {
            let mut len = (buf.len() - start) as u64;
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
            return Ok(Some(Line::TooLong { len }));
        }
        if !terminated && signals::caught().is_some() {
            buf.truncate(start);
            return Ok(None);
        }
        self.unterminated = !terminated;
        if self.lineno == 1 && buf[start..].starts_with(b"\xEF\xBB\xBF") {
            buf.drain(start..start + 3);
        }
        Ok(Some(Line::Ok))
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
}
