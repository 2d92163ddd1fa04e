//! The agents read by a module of their own under `src/usage/` (Amp, pi, Kimi, Kilo, …): each
//! gives one [`Reader`] (its places, which files there are its own, how to read one), and
//! registering it is one line in [`READERS`] (and its name in [`Agent`]).
//!
//! Claude Code, Codex, Gemini CLI, Qwen Code and OpenCode are read by their stream
//! converters' modules (`line_facts`), in `homes.rs` and `scan.rs`.

use super::facts::LineFacts;
use super::homes::Agent;
use crate::input::Stamp;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// One agent's files and how they are read.
pub struct Reader {
    pub agent: Agent,
    /// Its places (directories, or files), under `env`'s home or the agent's own variables.
    pub places: fn(&Env) -> Vec<PathBuf>,
    /// Whether a file below one of its places is one of its session files.
    pub keep: fn(&Path) -> bool,
    /// Whether a file anywhere is one of its session files, from its path alone: whose a file
    /// named on the command line (or found below a directory named) is.
    pub owns: fn(&Path) -> bool,
    /// Reads one file's facts into `sink`; an error is why the file could not be read at all.
    pub read: fn(&Path, &mut Sink<'_>) -> Result<(), String>,
}

/// Every agent read by its own module. Registering one is a line here.
pub const READERS: &[&Reader] = &[
    &super::amp::READER,
    &super::pi::READER,
    &super::kimi::READER,
    &super::kilo::READER,
    &super::goose::READER,
    &super::droid::READER,
    &super::openclaw::READER,
    &super::hermes::READER,
    &super::copilot::READER,
    &super::codebuff::READER,
];

/// The reader of `agent`, when it has one.
pub fn of(agent: Agent) -> Option<&'static Reader> {
    READERS.iter().copied().find(|r| r.agent == agent)
}

/// The reader that owns the file at `path`.
pub fn owner(path: &Path) -> Option<&'static Reader> {
    READERS.iter().copied().find(|r| (r.owns)(path))
}

/// Where places are looked for: a home, and the agents' variables (none under `--root`).
pub struct Env {
    pub home: Option<PathBuf>,
    /// Whether the variables are read (no `--root`).
    pub vars: bool,
}

impl Env {
    /// A variable's value, when set and not empty (never under `--root`).
    pub fn var(&self, name: &str) -> Option<OsString> {
        if !self.vars {
            return None;
        }
        std::env::var_os(name).filter(|v| !v.is_empty())
    }

    /// A comma-separated list of directories in the variable `name` (as ccusage reads its
    /// `*_DATA_DIR` variables), else `default` under the home.
    pub fn list_or_home(&self, name: &str, default: &str) -> Vec<PathBuf> {
        match self.var(name) {
            Some(v) => v
                .to_string_lossy()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect(),
            None => self.home.iter().map(|h| h.join(default)).collect(),
        }
    }
}

/// Where a reader gives its facts, and notes what it could not read.
pub struct Sink<'s> {
    pub add: &'s mut dyn FnMut(LineFacts<'_>),
    /// Records that could not be read: `path:line: why`.
    pub notes: Vec<String>,
    path: &'s Path,
}

impl<'s> Sink<'s> {
    pub fn new(path: &'s Path, add: &'s mut dyn FnMut(LineFacts<'_>)) -> Sink<'s> {
        Sink {
            add,
            notes: Vec::new(),
            path,
        }
    }

    /// A record at `line` (1-based; 0 for the whole file or a database row) that could not be read.
    /// Only the first few of a file are kept, with a count of the rest.
    pub fn bad(&mut self, line: usize, why: impl std::fmt::Display) {
        const KEPT: usize = 3;
        let at = if line == 0 {
            String::new()
        } else {
            format!(":{line}")
        };
        match self.notes.len() {
            n if n < KEPT => self
                .notes
                .push(format!("{}{at}: {why} (not counted)", self.path.display())),
            KEPT => self.notes.push(format!(
                "{}: more records that could not be read (not counted)",
                self.path.display()
            )),
            _ => {}
        }
    }
}

/// Reads a JSON Lines file, giving each non-empty line with its number to `each`; a line that
/// is not UTF-8 is a note.
pub fn each_line(
    path: &Path,
    sink: &mut Sink<'_>,
    each: &mut dyn FnMut(usize, &str, &mut Sink<'_>),
) -> Result<(), String> {
    thread_local! {
        /// The lines' buffer, kept from file to file (it holds a read of 256 KiB).
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let file = std::fs::File::open(path).map_err(|e| crate::diag::io_words(&e))?;
    let mut buf = BUF.with(|b| b.take());
    let mut n = 0;
    let read = super::scan::split_lines(file, &mut buf, &mut |line| {
        n += 1;
        match std::str::from_utf8(line) {
            Ok(line) if line.trim().is_empty() => {}
            Ok(line) => each(n, line.trim_end(), sink),
            Err(_) => sink.bad(n, "not UTF-8"),
        }
    });
    BUF.with(|b| b.replace(buf));
    read.map_err(|e| crate::diag::io_words(&e))
}

/// A whole file's bytes (a JSON document), read into a buffer kept from file to file and
/// given back when dropped: `fs::read_to_string` asks for the file's size first (a system
/// call of its own) and allocates for every file, where these agents keep thousands of small
/// ones.
pub struct Whole {
    buf: Vec<u8>,
    len: usize,
}

thread_local! {
    /// [`Whole`]'s buffer. Its length only grows, so its bytes are set once per thread.
    static WHOLE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Whole {
    pub fn read(path: &Path) -> Result<Whole, String> {
        use std::io::Read as _;
        const CHUNK: usize = 1 << 18;
        let mut file = std::fs::File::open(path).map_err(|e| crate::diag::io_words(&e))?;
        let mut whole = Whole {
            buf: WHOLE.with(|b| b.take()),
            len: 0,
        };
        loop {
            if whole.buf.len() < whole.len + CHUNK {
                whole.buf.resize(whole.len + CHUNK, 0);
            }
            match file.read(&mut whole.buf[whole.len..]) {
                Ok(0) => return Ok(whole),
                Ok(n) => whole.len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(crate::diag::io_words(&e)),
            }
        }
    }

    /// Its text; not UTF-8 is an error, worded as `fs::read_to_string` words it.
    pub fn text(&self) -> Result<&str, String> {
        std::str::from_utf8(&self.buf[..self.len]).map_err(|_| {
            let e = std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            );
            crate::diag::io_words(&e)
        })
    }
}

impl Drop for Whole {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        WHOLE.with(|b| b.replace(buf));
    }
}

/// The files below `dir` (in path order, links to directories not followed) that `keep` keeps.
pub fn files_below(dir: &Path, keep: fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let mut stamped = Vec::new();
    files_stamped(dir, keep, false, &mut stamped);
    out.extend(stamped.into_iter().map(|(p, _)| p));
}

/// [`files_below`], each file with its [`Stamp`] when `stamp` asks for it (a `stat`
/// relative to its directory; a link's by its path).
pub fn files_stamped(
    dir: &Path,
    keep: fn(&Path) -> bool,
    stamp: bool,
    out: &mut Vec<(PathBuf, Option<Stamp>)>,
) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    // Each name made once (`DirEntry::file_name` makes a new one at each call).
    let mut entries: Vec<_> = rd
        .filter_map(Result::ok)
        .map(|e| (e.file_name(), e))
        .collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (_, e) in entries {
        let p = e.path();
        let ty = e.file_type().ok();
        if ty.is_some_and(|t| t.is_dir()) {
            files_stamped(&p, keep, stamp, out);
        } else if keep(&p) {
            let st = stamp
                .then(|| match ty {
                    Some(t) if t.is_symlink() => std::fs::metadata(&p),
                    _ => e.metadata(),
                })
                .and_then(Result::ok)
                .map(|m| Stamp::of(&m));
            out.push((p, st));
        }
    }
}

/// A count the record may leave out: 0 then.
pub fn n(c: Option<crate::wire::Count>) -> u64 {
    c.map_or(0, |c| c.0)
}

/// ccusage's rule for a total without its parts: the tokens a total names beyond its parts
/// are output when no output is given (else they are not counted in a kind).
pub fn total_fallback(t: &mut super::Tokens, total: u64) {
    let missing = total.saturating_sub(t.total());
    if missing > 0 && t.output == 0 {
        t.output = missing;
    }
}

/// The file's modification time as Unix milliseconds: the time of its records that carry none.
pub fn modified_millis(path: &Path) -> Option<i64> {
    let m = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let d = m.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(d.as_millis() as i64)
}

/// A JSON timestamp as Unix milliseconds: an RFC 3339 string, or a number of seconds (below
/// 10^12) or milliseconds.
pub fn millis(v: &serde_json::Value) -> Option<i64> {
    match v {
        serde_json::Value::String(s) => crate::time::millis(s.trim()),
        serde_json::Value::Number(n) => {
            let f = n.as_f64()?;
            if !f.is_finite() || f <= 0.0 {
                None
            } else if f < 1e12 {
                Some((f * 1000.0).trunc() as i64)
            } else {
                Some(f as i64)
            }
        }
        _ => None,
    }
}

/// For the agents' tests: the scan of a sample home (`tests/usage-samples/<agent>/`), or of
/// any home, read as `usage --root HOME` reads it; and each response's facts, in time order.
#[cfg(test)]
pub mod sample {
    use super::super::scan::{scan, Scan};
    use super::super::Tokens;
    use std::path::{Path, PathBuf};

    pub fn home(agent: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/usage-samples")
            .join(agent)
    }

    pub fn read(home: &Path) -> Scan {
        let (files, _) = super::super::homes::standard(&[home.to_path_buf()]);
        scan(files, 1, super::super::Wanted::ResponsesAndTurns)
    }

    /// `(session, model, time, tokens)` of each response.
    pub fn responses(s: &Scan) -> Vec<(String, String, Option<i64>, Tokens)> {
        let mut v: Vec<_> = s
            .entries
            .iter()
            .filter(|e| e.response)
            .map(|e| {
                let (session, model) = (s.str(e.session).to_owned(), s.str(e.model).to_owned());
                (session, model, e.time, e.tokens)
            })
            .collect();
        v.sort_by(|a, b| (a.2, &a.0).cmp(&(b.2, &b.0)));
        v
    }

    /// `(session, model, tokens)` of each response, by session (in time order within one).
    pub fn by_session(s: &Scan) -> Vec<(String, String, Tokens)> {
        let mut v: Vec<_> = responses(s)
            .into_iter()
            .map(|(session, model, _, t)| (session, model, t))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// A copy of the sample home `from` in a new temporary folder, each `*.sql` in it built
    /// into the SQLite database of the same name (`kilo.sql` into `kilo.db`).
    pub fn build_sql(from: &Path, tag: &str) -> PathBuf {
        fn copy(from: &Path, to: &Path) {
            std::fs::create_dir_all(to).unwrap();
            for e in std::fs::read_dir(from).unwrap() {
                let e = e.unwrap();
                let (src, dst) = (e.path(), to.join(e.file_name()));
                if src.is_dir() {
                    copy(&src, &dst);
                } else if src.extension().is_some_and(|x| x == "sql") {
                    let sql = std::fs::read_to_string(&src).unwrap();
                    rusqlite::Connection::open(dst.with_extension("db"))
                        .and_then(|c| c.execute_batch(&sql))
                        .unwrap();
                } else {
                    std::fs::copy(&src, &dst).unwrap();
                }
            }
        }
        let dir = std::env::temp_dir().join(format!("insights-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        copy(from, &dir);
        dir
    }

    pub fn tokens(input: u64, output: u64, cache_read: u64, cache_creation: u64) -> Tokens {
        Tokens {
            input,
            output,
            cache_read,
            cache_creation,
            ..Tokens::default()
        }
    }
}
