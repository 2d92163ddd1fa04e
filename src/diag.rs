//! Diagnostics on stderr: `insights: FILE:LINE:COL: message`, and the counts behind the exit
//! status.
//!
//! At most [`SHOWN_PER_INPUT`] unreadable lines of one input are reported line by line; the
//! rest are counted, and [`Diag::end_input`] says how many there were (a binary file would
//! otherwise print a message for every "line" it has). The count spans the chunks of
//! `--jobs`: a chunk keeps its messages marked, and [`Diag::absorb`] shows or counts them in
//! input order.

use owo_colors::{OwoColorize, Style};
use std::cell::RefCell;
use std::io::{self, Write};

/// Unreadable lines of one input reported one by one; further ones are only counted.
pub const SHOWN_PER_INPUT: u64 = 20;

/// An I/O error as people read it: what failed in words, `no such file or directory`, without
/// the `(os error 2)` the standard library adds to every error of the system, and starting
/// in lower case as the rest of a diagnostic does. Errors that are not the system's (a message
/// of our own, a kind without an errno) keep their own words. Every diagnostic and every error
/// message that shows an I/O error words it here, so the wording is the same for every kind.
pub fn io_words(e: &io::Error) -> String {
    let text = e.to_string();
    let Some(code) = e.raw_os_error() else {
        return text;
    };
    let text = text
        .strip_suffix(&format!(" (os error {code})"))
        .unwrap_or(&text);
    let mut chars = text.chars();
    match chars.next() {
        // Not an acronym ("IO error"): lower the first letter only when the second is lower.
        Some(c) if chars.next().is_some_and(char::is_lowercase) => c
            .to_lowercase()
            .chain(text[c.len_utf8()..].chars())
            .collect(),
        _ => text.to_owned(),
    }
}

/// An error and its causes, `context: cause: cause`, as `{:#}` writes them, but with every
/// I/O error among them in words ([`io_words`]). What `main` prints.
pub fn error_words(e: &anyhow::Error) -> String {
    e.chain()
        .map(|cause| match cause.downcast_ref::<io::Error>() {
            Some(io) => io_words(io),
            None => cause.to_string(),
        })
        .collect::<Vec<_>>()
        .join(": ")
}

pub struct Diag {
    color: bool,
    /// Kept in memory instead of written (a chunk of `--jobs`), to be printed in order.
    kept: Option<RefCell<Vec<Said>>>,
    /// Input lines that could not be read.
    pub bad_lines: u64,
    /// Files that could not be opened or read, and other I/O failures on input.
    pub io_errors: u64,
    /// Other errors that make the exit status 2 ([`Diag::error`]).
    pub errors: u64,
    /// Unreadable lines of the current input so far (of this chunk, in a kept one).
    input_bad: u64,
    /// One of them looked binary: invalid UTF-8 or a NUL byte.
    input_binary: bool,
    /// When set, every unreadable line reported is also kept here, as `FILE:LINE[:COL]: why`
    /// (and the count of those not shown): for `replay`, whose transcript names them.
    pub unreadable: Option<Vec<String>>,
}

/// A message kept in memory; `bad_line`: it reports an unreadable line (and counts towards
/// [`SHOWN_PER_INPUT`]).
struct Said {
    text: String,
    bad_line: bool,
}

impl Diag {
    /// The exit status of a run that read its inputs with these diagnostics: 128 plus the
    /// signal's number when a signal ended it, 2 after an I/O error, 1 after a line that
    /// could not be read, else 0.
    pub fn exit_code(&self) -> std::process::ExitCode {
        use std::process::ExitCode;
        if let Some(signo) = crate::signals::caught() {
            ExitCode::from(crate::signals::exit_status(signo))
        } else if self.io_errors > 0 {
            ExitCode::from(2)
        } else if self.bad_lines > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }

    pub fn new(color: bool) -> Self {
        Diag {
            color,
            kept: None,
            bad_lines: 0,
            io_errors: 0,
            errors: 0,
            input_bad: 0,
            input_binary: false,
            unreadable: None,
        }
    }

    /// Whether messages are coloured.
    pub fn color(&self) -> bool {
        self.color
    }

    /// A diagnostics sink like this one that keeps its messages in memory.
    pub fn kept(&self) -> Diag {
        Diag {
            kept: Some(RefCell::new(Vec::new())),
            ..Diag::new(self.color)
        }
    }

    /// Prints what `other` kept and adds its counts to this one's, as if its messages had
    /// been reported here: unreadable lines past [`SHOWN_PER_INPUT`] of the current input
    /// are counted, not shown.
    pub fn absorb(&mut self, other: Diag) {
        self.bad_lines += other.bad_lines;
        self.io_errors += other.io_errors;
        self.errors += other.errors;
        self.input_binary |= other.input_binary;
        let mut shown = String::new();
        let mut kept_bad = 0;
        for said in other.kept.map(RefCell::into_inner).unwrap_or_default() {
            if said.bad_line {
                kept_bad += 1;
                self.input_bad += 1;
                if self.input_bad > SHOWN_PER_INPUT {
                    continue;
                }
            }
            match &self.kept {
                Some(kept) => kept.borrow_mut().push(said),
                None => shown.push_str(&said.text),
            }
        }
        // The chunk's unreadable lines it did not keep (past the cap within the chunk, so
        // past it here too).
        self.input_bad += other.input_bad.saturating_sub(kept_bad);
        if !shown.is_empty() {
            let _ = io::stderr().lock().write_all(shown.as_bytes());
        }
    }

    /// Nothing was reported here.
    pub fn is_empty(&self) -> bool {
        self.bad_lines == 0
            && self.io_errors == 0
            && self.errors == 0
            && self.input_bad == 0
            && self.kept.as_ref().is_none_or(|k| k.borrow().is_empty())
    }

    fn prefix(&self) -> String {
        let style = if self.color {
            Style::new().bold()
        } else {
            Style::new()
        };
        format!("{}", "insights:".style(style))
    }

    fn label(&self, text: &str, warn: bool) -> String {
        let style = match (self.color, warn) {
            (false, _) => Style::new(),
            (true, false) => Style::new().red().bold(),
            (true, true) => Style::new().yellow().bold(),
        };
        format!("{}", text.style(style))
    }

    fn write(&self, msg: std::fmt::Arguments) {
        self.say(msg, false);
    }

    fn say(&self, msg: std::fmt::Arguments, bad_line: bool) {
        // A failing stderr leaves nowhere to report to; the exit status still tells.
        match &self.kept {
            Some(kept) => kept.borrow_mut().push(Said {
                text: format!("{msg}\n"),
                bad_line,
            }),
            None => {
                let _ = writeln!(io::stderr().lock(), "{msg}");
            }
        }
    }

    /// An input line that could not be read. Past [`SHOWN_PER_INPUT`] of the current input,
    /// it is counted and not shown ([`Diag::end_input`] tells how many).
    pub fn bad_line(&mut self, file: &str, line: u64, col: Option<u64>, msg: &str) {
        self.bad_lines += 1;
        self.input_bad += 1;
        if self.input_bad > SHOWN_PER_INPUT {
            return;
        }
        let loc = match col {
            Some(c) => format!("{file}:{line}:{c}"),
            None => format!("{file}:{line}"),
        };
        if let Some(u) = &mut self.unreadable {
            u.push(format!("{loc}: {msg}"));
        }
        self.say(
            format_args!(
                "{} {loc}: {} {msg}",
                self.prefix(),
                self.label("error:", false)
            ),
            true,
        );
    }

    /// The line just reported as unreadable looked binary (invalid UTF-8, a NUL byte): the
    /// summary of [`Diag::end_input`] asks whether the input is a binary file.
    pub fn binary_line(&mut self) {
        self.input_binary = true;
    }

    /// The end of one input (a file, or standard input): if more of its lines were
    /// unreadable than [`SHOWN_PER_INPUT`], one line says how many were not shown.
    pub fn end_input(&mut self, file: &str) {
        let more = self.input_bad.saturating_sub(SHOWN_PER_INPUT);
        if more > 0 {
            let hint = if self.input_binary {
                "; is this a binary file?"
            } else {
                ""
            };
            let lines = if more == 1 { "line" } else { "lines" };
            if let Some(u) = &mut self.unreadable {
                u.push(format!("{file}: {more} more {lines} could not be read"));
            }
            self.write(format_args!(
                "{} {file}: {} {more} more {lines} could not be read (not shown){hint}",
                self.prefix(),
                self.label("error:", false)
            ));
        }
        self.input_bad = 0;
        self.input_binary = false;
    }

    /// An error about an input as a whole, that makes the exit status 2; `file` is `None`
    /// for one about all of them.
    pub fn error(&mut self, file: Option<&str>, msg: &str) {
        self.errors += 1;
        let at = file.map(|f| format!(" {f}:")).unwrap_or_default();
        self.write(format_args!(
            "{}{at} {} {msg}",
            self.prefix(),
            self.label("error:", false)
        ));
    }

    /// A warning about one input, that changes no exit status.
    pub fn warning(&self, file: &str, msg: &str) {
        self.write(format_args!(
            "{} {file}: {} {msg}",
            self.prefix(),
            self.label("warning:", true)
        ));
    }

    /// An input that could not be opened or read, the error in words ([`io_words`]).
    pub fn io_error(&mut self, file: &str, err: &io::Error) {
        self.input_failed(file, &io_words(err));
    }

    /// An input that could not be opened or read, `why` said already in words.
    pub fn input_failed(&mut self, file: &str, why: &str) {
        self.io_errors += 1;
        self.write(format_args!(
            "{} {file}: {} {why}",
            self.prefix(),
            self.label("error:", false)
        ));
    }

    /// Information about an input line that changes no exit status.
    pub fn note_line(&self, file: &str, line: u64, msg: &str) {
        self.write(format_args!(
            "{} {file}:{line}: {} {msg}",
            self.prefix(),
            self.label("note:", true)
        ));
    }

    /// Information that changes no exit status.
    pub fn note(&self, msg: &str) {
        self.write(format_args!(
            "{} {} {msg}",
            self.prefix(),
            self.label("note:", true)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Diag {
        /// What a kept sink holds, as it would be printed.
        fn kept_text(&self) -> String {
            let kept = self.kept.as_ref().expect("a kept sink").borrow();
            kept.iter().map(|s| s.text.as_str()).collect()
        }
    }

    #[cfg(unix)]
    #[test]
    fn io_errors_are_in_words() {
        let gone = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(io_words(&gone), "no such file or directory");
        let denied = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(io_words(&denied), "permission denied");
        let dir = io::Error::from_raw_os_error(libc::EISDIR);
        assert_eq!(io_words(&dir), "is a directory");
        let own = io::Error::new(io::ErrorKind::InvalidData, "Line too long");
        assert_eq!(io_words(&own), "Line too long");
        let e = anyhow::Error::new(gone).context("cannot open x.json");
        assert_eq!(
            error_words(&e),
            "cannot open x.json: no such file or directory"
        );
    }

    #[test]
    fn past_the_cap_an_input_s_bad_lines_are_counted_not_shown() {
        let mut d = Diag::new(false).kept();
        for n in 1..=25 {
            d.bad_line("f", n, None, "bad");
        }
        d.end_input("f");
        d.bad_line("g", 1, Some(2), "bad");
        d.end_input("g");
        let text = d.kept_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 22, "{text}");
        assert_eq!(lines[19], "insights: f:20: error: bad");
        assert_eq!(
            lines[20],
            "insights: f: error: 5 more lines could not be read (not shown)"
        );
        assert_eq!(lines[21], "insights: g:1:2: error: bad");
        assert_eq!(d.bad_lines, 26);
    }

    #[test]
    fn the_cap_spans_the_chunks_absorbed_in_order() {
        // Three chunks of 15, 1 and 15 bad lines, the first of them binary, as `--jobs` keeps
        // them: the same text as one sink that saw the 31 lines.
        let mut one = Diag::new(false).kept();
        let mut parts = Diag::new(false).kept();
        let mut n = 0;
        for size in [15, 1, 15] {
            let mut chunk = parts.kept();
            for _ in 0..size {
                n += 1;
                one.bad_line("f", n, None, "bad");
                chunk.bad_line("f", n, None, "bad");
                if n == 1 {
                    one.binary_line();
                    chunk.binary_line();
                }
            }
            chunk.note_line("f", n, "a note is always shown");
            one.note_line("f", n, "a note is always shown");
            parts.absorb(chunk);
        }
        one.end_input("f");
        parts.end_input("f");
        let text = parts.kept_text();
        assert_eq!(text, one.kept_text());
        assert_eq!(parts.bad_lines, 31);
        assert!(
            text.ends_with(
                "insights: f: error: 11 more lines could not be read (not shown); \
                 is this a binary file?\n"
            ),
            "{text}"
        );
        assert_eq!(text.matches("a note is always shown").count(), 3);
    }
}
