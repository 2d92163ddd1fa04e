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

/// Buffered standard output.
pub struct Out<W: Write> {
    pub w: BufWriter<W>,
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
        }
    }

    /// Writes one JSON line.
    pub fn json_line<T: serde::Serialize>(&mut self, v: &T) -> io::Result<()> {
        serde_json::to_writer(&mut self.w, v).map_err(io::Error::from)?;
        self.w.write_all(b"\n")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
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
