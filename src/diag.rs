//! Diagnostics on stderr: `insights: FILE:LINE:COL: message`, and the counts behind the exit
//! status.

use owo_colors::{OwoColorize, Style};
use std::cell::RefCell;
use std::io::{self, Write};

pub struct Diag {
    color: bool,
    /// Kept in memory instead of written (a chunk of `--jobs`), to be printed in order.
    kept: Option<RefCell<Vec<u8>>>,
    /// Input lines that could not be read.
    pub bad_lines: u64,
    /// Files that could not be opened or read, and other I/O failures on input.
    pub io_errors: u64,
}

impl Diag {
    pub fn new(color: bool) -> Self {
        Diag {
            color,
            kept: None,
            bad_lines: 0,
            io_errors: 0,
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

    /// Prints what `other` kept and adds its counts to this one's.
    pub fn absorb(&mut self, other: Diag) {
        self.bad_lines += other.bad_lines;
        self.io_errors += other.io_errors;
        if let Some(kept) = other.kept {
            let kept = kept.into_inner();
            if !kept.is_empty() {
                let _ = io::stderr().lock().write_all(&kept);
            }
        }
    }

    /// Nothing was reported here.
    pub fn is_empty(&self) -> bool {
        self.bad_lines == 0
            && self.io_errors == 0
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
        // A failing stderr leaves nowhere to report to; the exit status still tells.
        match &self.kept {
            Some(kept) => {
                let _ = writeln!(kept.borrow_mut(), "{msg}");
            }
            None => {
                let _ = writeln!(io::stderr().lock(), "{msg}");
            }
        }
    }

    /// An input line that could not be read.
    pub fn bad_line(&mut self, file: &str, line: u64, col: Option<u64>, msg: &str) {
        self.bad_lines += 1;
        let loc = match col {
            Some(c) => format!("{file}:{line}:{c}"),
            None => format!("{file}:{line}"),
        };
        self.write(format_args!(
            "{} {loc}: {} {msg}",
            self.prefix(),
            self.label("error:", false)
        ));
    }

    /// An input that could not be opened or read.
    pub fn io_error(&mut self, file: &str, err: &dyn std::fmt::Display) {
        self.io_errors += 1;
        self.write(format_args!(
            "{} {file}: {} {err}",
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
