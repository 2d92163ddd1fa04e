//! The lines of one source, each with the file and line it was read from: one file or
//! standard input as it is, or a conversation kept in several files (a Claude Code session
//! file and its subagents' files, [`crate::input::Source::Group`]) read as one, in time order,
//! as the agent's live stream gave it.

use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;

use crate::input::{Line, LineReader};

/// Lines from one input (`One`) or from the files of one conversation merged by time.
pub enum SourceLines<'r> {
    One {
        rdr: LineReader<Box<dyn Read + Send + 'r>>,
        name: String,
    },
    Merged(Merge),
}

impl<'r> SourceLines<'r> {
    pub fn one(reader: Box<dyn Read + Send + 'r>, name: String, max: usize) -> SourceLines<'r> {
        SourceLines::One {
            rdr: LineReader::new(reader, max),
            name,
        }
    }

    /// Reads the next line into `buf` (cleared first). `None` at the end of every file. An
    /// error is the file's that [`SourceLines::name`] names.
    pub fn next_line(&mut self, buf: &mut Vec<u8>) -> io::Result<Option<Line>> {
        match self {
            SourceLines::One { rdr, .. } => rdr.next_line(buf),
            SourceLines::Merged(m) => m.next_line(buf),
        }
    }

    /// The file the last line came from, as diagnostics name it.
    pub fn name(&self) -> &str {
        match self {
            SourceLines::One { name, .. } => name,
            SourceLines::Merged(m) => &m.parts[m.current].name,
        }
    }

    /// The number of the last line in its own file (1-based).
    pub fn lineno(&self) -> u64 {
        match self {
            SourceLines::One { rdr, .. } => rdr.lineno(),
            SourceLines::Merged(m) => m.parts[m.current].lineno,
        }
    }

    /// Whether the last line had no final newline (its file ended inside it).
    pub fn unterminated(&self) -> bool {
        match self {
            SourceLines::One { rdr, .. } => rdr.unterminated(),
            SourceLines::Merged(m) => m.parts[m.current].unterminated,
        }
    }

    /// Whether the next line can be read without waiting (files always can).
    pub fn has_buffered_line(&mut self) -> bool {
        match self {
            SourceLines::One { rdr, .. } => rdr.has_buffered_line(),
            SourceLines::Merged(_) => true,
        }
    }
}

/// The files of one conversation, each read ahead by one line: the next line is the one
/// with the earliest time (`timestamp`) among the files' next lines, the first file's on a
/// tie. A file's own lines keep their order; a line without a time goes with the line before
/// it in its file.
pub struct Merge {
    parts: Vec<Part>,
    current: usize,
}

struct Part {
    name: String,
    rdr: Option<LineReader<File>>,
    /// The next line, read ahead, with its time.
    next: Option<Ahead>,
    /// Number and end of the line last handed out.
    lineno: u64,
    unterminated: bool,
    /// The time of the file's last timed line.
    time: i64,
}

struct Ahead {
    line: Line,
    bytes: Vec<u8>,
    lineno: u64,
    unterminated: bool,
    time: i64,
}

impl Merge {
    /// Opens each file; one that cannot be opened is passed to `failed` and left out.
    pub fn open(paths: &[PathBuf], max: usize, failed: &mut dyn FnMut(&str, &io::Error)) -> Merge {
        let mut parts = Vec::new();
        for p in paths {
            let name = p.display().to_string();
            match File::open(p) {
                Ok(f) => parts.push(Part {
                    name,
                    rdr: Some(LineReader::new(f, max)),
                    next: None,
                    lineno: 0,
                    unterminated: false,
                    time: i64::MIN,
                }),
                Err(e) => failed(&name, &e),
            }
        }
        if parts.is_empty() {
            parts.push(Part {
                name: paths
                    .first()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                rdr: None,
                next: None,
                lineno: 0,
                unterminated: false,
                time: i64::MIN,
            });
        }
        Merge { parts, current: 0 }
    }

    fn next_line(&mut self, buf: &mut Vec<u8>) -> io::Result<Option<Line>> {
        for (i, p) in self.parts.iter_mut().enumerate() {
            if let Err(e) = p.read_ahead() {
                // The error is this file's; it ends this file alone, the others go on.
                self.current = i;
                return Err(e);
            }
        }
        let pick = self
            .parts
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.next.as_ref().map(|a| (a.time, i)))
            .min();
        let Some((_, i)) = pick else {
            return Ok(None);
        };
        self.current = i;
        let p = &mut self.parts[i];
        let Some(a) = p.next.take() else {
            return Ok(None);
        };
        buf.clear();
        buf.extend_from_slice(&a.bytes);
        p.lineno = a.lineno;
        p.unterminated = a.unterminated;
        Ok(Some(a.line))
    }
}

impl Part {
    /// Reads the file's next line ahead, unless one is waiting or the file is done.
    fn read_ahead(&mut self) -> io::Result<()> {
        if self.next.is_some() {
            return Ok(());
        }
        let Some(rdr) = &mut self.rdr else {
            return Ok(());
        };
        let mut bytes = Vec::new();
        let line = match rdr.next_line(&mut bytes) {
            Ok(Some(l)) => l,
            Ok(None) => {
                self.rdr = None;
                return Ok(());
            }
            Err(e) => {
                self.rdr = None;
                return Err(e);
            }
        };
        if let Some(t) = line_time(&bytes) {
            self.time = t;
        }
        self.next = Some(Ahead {
            line,
            lineno: rdr.lineno(),
            unterminated: rdr.unterminated(),
            bytes,
            time: self.time,
        });
        Ok(())
    }
}

/// The line's `timestamp` in Unix milliseconds, when it is a JSON object with one.
fn line_time(line: &[u8]) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Timed<'a> {
        #[serde(borrow)]
        timestamp: Option<std::borrow::Cow<'a, str>>,
    }
    let t: Timed = serde_json::from_slice(line).ok()?;
    crate::time::millis(&t.timestamp?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_merge_by_time_and_keep_their_own_order_and_numbers() {
        let dir = std::env::temp_dir().join(format!("insights-merge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.jsonl");
        let b = dir.join("b.jsonl");
        std::fs::write(
            &a,
            concat!(
                r#"{"timestamp":"2026-01-01T00:00:01Z","n":"a1"}"#,
                "\n",
                r#"{"timestamp":"2026-01-01T00:00:00.500Z","n":"a2"}"#,
                "\n",
                r#"{"n":"a3"}"#,
                "\n",
                r#"{"timestamp":"2026-01-01T00:00:05Z","n":"a4"}"#,
                "\n",
            ),
        )
        .unwrap();
        std::fs::write(
            &b,
            concat!(
                r#"{"timestamp":"2026-01-01T00:00:02Z","n":"b1"}"#,
                "\n",
                "not json\n",
                r#"{"timestamp":"2026-01-01T00:00:05Z","n":"b3"}"#,
            ),
        )
        .unwrap();
        let missing = dir.join("missing.jsonl");
        let mut failed = Vec::new();
        let m = Merge::open(&[a, missing, b], 1 << 20, &mut |n, _| {
            failed.push(n.to_owned())
        });
        assert_eq!(failed.len(), 1);
        let mut lines = SourceLines::Merged(m);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        while let Some(l) = lines.next_line(&mut buf).unwrap() {
            assert_eq!(l, Line::Ok);
            let file = if lines.name().ends_with("a.jsonl") {
                "a"
            } else {
                "b"
            };
            got.push(format!(
                "{file}{}{}",
                lines.lineno(),
                if lines.unterminated() { "$" } else { "" }
            ));
        }
        // a2 is earlier than a1 but stays after it; a3 has a1's time; ties go to the first.
        assert_eq!(got, ["a1", "a2", "a3", "b1", "b2", "a4", "b3$"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
