//! Reading session files for `usage` and `sessions`: every file on its own thread (files are
//! independent), each line given to its provider's `line_facts`, the results merged in path
//! order so the output does not depend on the number of threads.

use super::facts::{FileMemo, LineFacts, Tokens, Wanted};
use super::homes::{Agent, Found};
use crate::ids::{Hash64, Prehashed};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::mpsc;

/// An index into [`Scan::strings`].
pub type Sym = u32;

/// One model response (`response`), one prompt (`prompt`), or a line that names the
/// session (neither).
#[derive(Debug, Clone)]
pub struct Entry {
    pub agent: Agent,
    pub time: Option<i64>,
    pub session: Sym,
    pub project: Sym,
    pub model: Sym,
    /// The file it was read from, in [`Scan::files`].
    pub file: u32,
    pub tokens: Tokens,
    pub cost_usd: Option<f64>,
    pub response: bool,
    pub turn: bool,
}

/// Every file's entries, each response once.
#[derive(Debug, Default)]
pub struct Scan {
    pub entries: Vec<Entry>,
    pub strings: Vec<String>,
    pub files: Vec<Found>,
    /// Files that could not be read, with the reason.
    pub errors: Vec<String>,
    by_string: HashMap<String, Sym, BuildHasherDefault<Hash64>>,
    /// Responses' keys are hashes already ([`crate::ids::hash64`]).
    by_response: HashMap<u64, usize, BuildHasherDefault<Prehashed>>,
    /// The strings interned last: a file names the project and the model the file before it
    /// named, found here without hashing them and looking through the whole map.
    recent: [Sym; 4],
}

impl Scan {
    pub fn str(&self, s: Sym) -> &str {
        &self.strings[s as usize]
    }

    fn intern(&mut self, s: &str) -> Sym {
        let strings = &self.strings;
        if let Some(&i) =
            (self.recent.iter()).find(|&&i| strings.get(i as usize).is_some_and(|x| x == s))
        {
            return i;
        }
        let i = match self.by_string.get(s) {
            Some(&i) => i,
            None => {
                let i = self.strings.len() as Sym;
                self.strings.push(s.to_owned());
                self.by_string.insert(s.to_owned(), i);
                i
            }
        };
        self.recent.rotate_right(1);
        self.recent[0] = i;
        i
    }

    /// Adds one file's entries; a response already counted keeps the larger of the two.
    fn merge(&mut self, file: u32, mut part: FilePart) {
        self.merge_entries(file, &mut part.entries, &part.strings);
        self.errors.extend(part.notes);
        if let Some(err) = part.error {
            self.errors.push(err);
        }
    }

    /// Adds `entries` (emptied) of the file `file`, whose symbols are indexes in `strings`.
    fn merge_entries<S: AsRef<str>>(
        &mut self,
        file: u32,
        entries: &mut Vec<(Entry, Option<u64>)>,
        strings: &[S],
    ) {
        // The file's strings as the scan's, each looked up once rather than once per entry,
        // in the order the entries name them (the scan numbers strings as they come).
        let mut syms: Vec<Option<Sym>> = vec![None; strings.len()];
        let mut sym = |scan: &mut Scan, i: Sym| match syms[i as usize] {
            Some(s) => s,
            None => {
                let s = scan.intern(strings[i as usize].as_ref());
                syms[i as usize] = Some(s);
                s
            }
        };
        for (e, key) in entries.drain(..) {
            let entry = Entry {
                session: sym(self, e.session),
                project: sym(self, e.project),
                model: sym(self, e.model),
                file,
                ..e
            };
            use std::collections::hash_map::Entry::{Occupied, Vacant};
            let Some(k) = key else {
                self.entries.push(entry);
                continue;
            };
            // One look in the map, whether the response is new or not.
            match self.by_response.entry(k) {
                Occupied(o) => {
                    let i = *o.get();
                    if entry.tokens.total() > self.entries[i].tokens.total() {
                        self.entries[i] = entry;
                    }
                }
                Vacant(v) => {
                    v.insert(self.entries.len());
                    self.entries.push(entry);
                }
            }
        }
    }
}

/// One file's entries, with its own string table (threads share nothing while they read).
/// `insights store` keeps them (src/store/tally.rs), so that `usage --db` merges what
/// reading the files would give.
#[derive(Default)]
pub struct FilePart {
    /// Each entry (its `file` not set yet) with its response's key.
    pub entries: Vec<(Entry, Option<u64>)>,
    /// The entries' strings: symbol 0 is the empty string.
    pub strings: Vec<String>,
    pub error: Option<String>,
    /// Records that could not be read (`path:line: why`), the file read nonetheless.
    pub notes: Vec<String>,
    /// `strings` by string, once there are more than a few (a database names thousands of
    /// sessions; a session file a handful, searched faster in order).
    index: HashMap<String, Sym, BuildHasherDefault<Hash64>>,
}

impl FilePart {
    pub fn sym(&mut self, s: Option<&str>) -> Sym {
        const FEW: usize = 16;
        let s = s.unwrap_or("");
        let found = if self.strings.len() <= FEW {
            self.strings.iter().position(|x| x == s).map(|i| i as Sym)
        } else {
            if self.index.is_empty() {
                self.index = (self.strings.iter().cloned()).zip(0..).collect();
            }
            self.index.get(s).copied()
        };
        found.unwrap_or_else(|| {
            let i = self.strings.len() as Sym;
            self.strings.push(s.to_owned());
            if !self.index.is_empty() {
                self.index.insert(s.to_owned(), i);
            }
            i
        })
    }
}

/// Reads every file with `jobs` threads. Each thread sends its parts a few files at a time
/// (`BATCH`), so that the merging thread wakes once per batch rather than once per file.
pub fn scan(files: Vec<Found>, jobs: usize, wanted: Wanted) -> Scan {
    scan_from(jobs, wanted, move |give| files.into_iter().for_each(give))
}

/// [`scan`] of the files `list` gives, in the order it gives them: `list` runs on a thread of
/// its own (a walk of the agents' folders), and the files are read while it goes on.
pub fn scan_from(
    jobs: usize,
    wanted: Wanted,
    list: impl FnOnce(&mut dyn FnMut(Found)) + Send,
) -> Scan {
    const BATCH: usize = 32;
    let mut scan = Scan::new();
    let listing = &Listing::default();
    type Read = (usize, Found, FilePart);
    let (tx, rx) = mpsc::sync_channel::<Vec<Read>>(jobs * 2);
    std::thread::scope(|s| {
        let lister = s.spawn(move || {
            // Marks the list complete even when `list` panics, so no reader waits for ever.
            struct Done<'a>(&'a Listing);
            impl Drop for Done<'_> {
                fn drop(&mut self) {
                    self.0.state().done = true;
                    self.0.more.notify_all();
                }
            }
            let _done = Done(listing);
            list(&mut |f| listing.give(f));
        });
        for _ in 0..jobs.max(1) {
            let tx = tx.clone();
            s.spawn(move || {
                let mut buf = Vec::new();
                let mut batch = Vec::with_capacity(BATCH);
                while let Some((i, f)) = listing.take() {
                    let part = read_file(&f, &mut buf, wanted);
                    batch.push((i, f, part));
                    if batch.len() == BATCH
                        && tx
                            .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                            .is_err()
                    {
                        return;
                    }
                }
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
            });
        }
        drop(tx);
        // Merged in the order listed, whichever thread finishes first: `waiting[k]` is the
        // file listed `k` after the next one to merge.
        let mut waiting: std::collections::VecDeque<Option<(Found, FilePart)>> =
            std::collections::VecDeque::new();
        for batch in rx {
            for (i, f, part) in batch {
                let k = i - scan.files.len();
                if waiting.len() <= k {
                    waiting.resize_with(k + 1, || None);
                }
                waiting[k] = Some((f, part));
            }
            while let Some(Some((f, part))) = waiting.front_mut().map(Option::take) {
                waiting.pop_front();
                scan.add(f, part);
            }
        }
        if let Err(e) = lister.join() {
            std::panic::resume_unwind(e);
        }
    });
    scan
}

/// The files listed and not yet taken (by [`scan_from`]'s `list`), shared with the threads
/// that read them.
#[derive(Default)]
struct Listing {
    state: std::sync::Mutex<Listed>,
    more: std::sync::Condvar,
}

#[derive(Default)]
struct Listed {
    files: std::collections::VecDeque<Found>,
    /// The place in the list of the first of `files`.
    next: usize,
    /// Whether the list is complete.
    done: bool,
    /// Threads waiting for the next file: a file listed wakes one only then (a wake is a
    /// system call, and most files are listed before a thread needs them).
    waiting: usize,
}

impl Listing {
    fn state(&self) -> std::sync::MutexGuard<'_, Listed> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn give(&self, f: Found) {
        let mut l = self.state();
        l.files.push_back(f);
        let wake = l.waiting > 0;
        drop(l);
        if wake {
            self.more.notify_one();
        }
    }

    /// The next file to read and its place in the list, once it is listed; `None` when every
    /// file is taken.
    fn take(&self) -> Option<(usize, Found)> {
        let mut l = self.state();
        loop {
            if let Some(f) = l.files.pop_front() {
                let i = l.next;
                l.next = i + 1;
                return Some((i, f));
            }
            if l.done {
                return None;
            }
            l.waiting += 1;
            l = self.more.wait(l).unwrap_or_else(|e| e.into_inner());
            l.waiting -= 1;
        }
    }
}

/// A scan of files already read (`usage --db`): [`Scan::new`], then each file in the order
/// [`scan`] merges them ([`Scan::add`]).
impl Scan {
    /// A scan of no file yet. Symbol 0 is the empty string: an unknown session, project or
    /// model.
    pub fn new() -> Scan {
        let mut scan = Scan::default();
        scan.intern("");
        scan
    }

    /// Lets go of what only merging needs (the maps of strings and responses, the entries'
    /// spare room): `store` packs a merged scan of every file, and holds nothing else then.
    pub fn merged(&mut self) {
        self.by_string = HashMap::default();
        self.by_response = HashMap::default();
        self.entries.shrink_to_fit();
    }

    /// Adds the next file read.
    pub fn add(&mut self, found: Found, part: FilePart) {
        self.merge(self.files.len() as u32, part);
        self.files.push(found);
    }

    /// Adds the next file read, as its entries (emptied) and the strings they name (borrowed
    /// from where they were kept: no string is copied but those new to the scan).
    pub fn add_entries<S: AsRef<str>>(
        &mut self,
        found: Found,
        entries: &mut Vec<(Entry, Option<u64>)>,
        strings: &[S],
    ) {
        self.merge_entries(self.files.len() as u32, entries, strings);
        self.files.push(found);
    }
}

/// The entries of one file, read as `usage` reads it: its responses, and its turns when they
/// are `wanted` (the files read by an agent's own module give their turns either way).
pub fn read_file(f: &Found, buf: &mut Vec<u8>, wanted: Wanted) -> FilePart {
    let mut part = FilePart::default();
    part.sym(None);
    if f.agent == Some(Agent::OpenCode) {
        read_opencode(f, &mut part);
        return part;
    }
    if let Some(r) = f.agent.and_then(super::reader::of) {
        read_other(f, r, &mut part);
        return part;
    }
    let file = match std::fs::File::open(&f.path) {
        Ok(file) => file,
        Err(e) => {
            part.error = Some(format!(
                "{}: {}",
                f.path.display(),
                crate::diag::io_words(&e)
            ));
            return part;
        }
    };
    let mut memo = FileMemo::default();
    if f.agent == Some(Agent::Qwen) {
        memo.model = crate::providers::qwen_chat::subagent_model(&f.path);
    }
    let mut agent = f.agent;
    // Without a folder to tell, the first line tells whose file it is.
    let mut first = agent.is_none();
    // Claude names the project by its folder: `~/.claude/projects/<project>/…`.
    let folder = f.project.clone();
    // The entries gather in a vector kept from file to file, and the file's part gets them
    // in one allocation of their size (growing the part's own would copy them a few times).
    thread_local! {
        static ENTRIES: std::cell::Cell<Vec<(Entry, Option<u64>)>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut entries = ENTRIES.take();
    let read = split_lines(file, buf, &mut |bytes| {
        if first {
            let Some(line) = std::str::from_utf8(bytes).ok().map(str::trim_end) else {
                return;
            };
            if line.is_empty() {
                return;
            }
            agent = Some(Agent::sniff(line));
            first = false;
        }
        let Some(a) = agent else { return };
        // The lines that cannot tell anything are rejected by their bytes, before the
        // UTF-8 check.
        if !line_wanted(a, bytes, wanted) {
            return;
        }
        let Some(facts) = line_facts(a, bytes, &mut memo) else {
            return;
        };
        let key = facts.response;
        let entry = Entry {
            agent: a,
            time: facts.time,
            session: part.sym(facts.session.as_deref()),
            project: part.sym(facts.cwd.as_deref().or(folder.as_deref())),
            model: part.sym(facts.model.as_deref()),
            file: 0,
            response: facts.usage.is_some(),
            tokens: facts.usage.unwrap_or_default(),
            cost_usd: facts.cost_usd,
            turn: facts.turn,
        };
        entries.push((entry, key));
    });
    part.entries = entries.drain(..).collect();
    // Kept for the next file unless a large one grew it (`store`'s threads live long).
    if entries.capacity() <= 1 << 14 {
        ENTRIES.set(entries);
    }
    if let Err(e) = read {
        part.error = Some(format!(
            "{}: {}",
            f.path.display(),
            crate::diag::io_words(&e)
        ));
    }
    part
}

/// Gives each line of `input` (with its `\n`, the last one also without) to `each`, as
/// `read_until` would cut them, from `buf`: the input is read into it a chunk at a time (one
/// `read` of up to `CHUNK` bytes each, where `read_to_end` would start at 8 KiB and double)
/// and the lines are given where they lie, so only a line cut by a chunk's end is moved.
/// `buf` is kept from file to file; it holds a chunk and the longest line.
pub fn split_lines(
    mut input: impl std::io::Read,
    buf: &mut Vec<u8>,
    each: &mut dyn FnMut(&[u8]),
) -> std::io::Result<()> {
    const CHUNK: usize = 1 << 18;
    // `buf[..filled]` holds what was read and not given yet. Its length is only ever
    // grown, so the bytes it holds are initialised once for all the files read with it.
    let mut filled = 0;
    loop {
        if buf.len() < filled + CHUNK {
            buf.resize(filled + CHUNK, 0);
        }
        let n = match input.read(&mut buf[filled..filled + CHUNK]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // As `read_until`: the lines read whole before the error were given.
            Err(e) => return Err(e),
        };
        if n == 0 {
            // As `read_until`, a last line without its `\n`.
            if filled > 0 {
                each(&buf[..filled]);
            }
            return Ok(());
        }
        let end = filled + n;
        let at = give_lines(&buf[..end], each);
        buf.copy_within(at..end, 0);
        filled = end - at;
    }
}

/// Gives each whole line of `b` to `each`; the length given.
fn give_lines(b: &[u8], each: &mut dyn FnMut(&[u8])) -> usize {
    let mut at = 0;
    for n in memchr::memchr_iter(b'\n', b) {
        each(&b[at..=n]);
        at = n + 1;
    }
    at
}

/// Whether a line of `agent`'s may tell anything `wanted`: [`line_facts`] reads only the
/// lines this takes.
fn line_wanted(agent: Agent, line: &[u8], wanted: Wanted) -> bool {
    match agent {
        Agent::Claude => crate::providers::claude::line_wanted(line, wanted),
        Agent::Codex => crate::providers::codex_rollout::line_wanted(line, wanted),
        Agent::Gemini => crate::providers::gemini_chat::line_wanted(line, wanted),
        Agent::Qwen => crate::providers::qwen_chat::line_wanted(line, wanted),
        _ => false,
    }
}

/// A line's facts: Codex's read from its bytes ([`crate::providers::codex_rollout::line_facts`]),
/// the others' once it is checked for UTF-8.
fn line_facts<'a>(agent: Agent, line: &'a [u8], memo: &mut FileMemo) -> Option<LineFacts<'a>> {
    if agent == Agent::Codex {
        return crate::providers::codex_rollout::line_facts(line, memo);
    }
    let line = std::str::from_utf8(line).ok()?.trim_end();
    if line.is_empty() {
        return None;
    }
    match agent {
        Agent::Claude => crate::providers::claude::line_facts(line),
        Agent::Codex => None,
        Agent::Gemini => crate::providers::gemini_chat::line_facts(line, memo),
        Agent::Qwen => crate::providers::qwen_chat::line_facts(line, memo),
        // OpenCode's database is read by `read_opencode`; the other agents by their readers
        // (`read_other`).
        _ => None,
    }
}

/// OpenCode's database: each assistant message's tokens and cost, each prompt
/// ([`crate::providers::opencode_db::facts`]).
fn read_opencode(f: &Found, part: &mut FilePart) {
    let mut add = |facts: LineFacts<'_>| push(part, Agent::OpenCode, facts);
    if let Err(e) = crate::providers::opencode_db::facts(&f.path, &mut add) {
        part.error = Some(format!("{}: {e}", f.path.display()));
    }
}

/// A file of an agent read by its own module ([`super::reader`]): its facts, and notes on
/// what it could not read.
fn read_other(f: &Found, r: &super::reader::Reader, part: &mut FilePart) {
    let mut add = |facts: LineFacts<'_>| push(part, r.agent, facts);
    let mut sink = super::reader::Sink::new(&f.path, &mut add);
    let res = (r.read)(&f.path, &mut sink);
    let notes = std::mem::take(&mut sink.notes);
    part.notes = notes;
    if let Err(e) = res {
        part.error = Some(format!("{}: {e}", f.path.display()));
    }
}

/// One fact of a file read whole (a database, a JSON document) as an entry of `part`.
fn push(part: &mut FilePart, agent: Agent, facts: LineFacts<'_>) {
    let key = facts.response;
    let entry = Entry {
        agent,
        time: facts.time,
        session: part.sym(facts.session.as_deref()),
        project: part.sym(facts.cwd.as_deref()),
        model: part.sym(facts.model.as_deref()),
        file: 0,
        response: facts.usage.is_some(),
        tokens: facts.usage.unwrap_or_default(),
        cost_usd: facts.cost_usd,
        turn: facts.turn,
    };
    part.entries.push((entry, key));
}

#[cfg(test)]
mod tests {
    /// A line that a provider's `line_wanted` rejects tells nothing: on every line of every
    /// recording under `testdata/` (streams and session files alike), read as each agent's,
    /// a rejected line has no facts.
    #[test]
    fn a_rejected_line_tells_nothing() {
        use super::{line_facts, line_wanted, Agent, FileMemo, Wanted};
        let mut rejected = 0;
        for path in crate::test_support::testdata_jsonl() {
            let text = std::fs::read(&path).unwrap_or_default();
            for line in text.split_inclusive(|&b| b == b'\n') {
                for a in [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Qwen] {
                    if line_wanted(a, line, Wanted::ResponsesAndTurns) {
                        continue;
                    }
                    rejected += 1;
                    let facts = line_facts(a, line, &mut FileMemo::default());
                    assert!(
                        facts.is_none(),
                        "{a:?}, {}: {}",
                        path.display(),
                        String::from_utf8_lossy(line)
                    );
                }
            }
        }
        assert!(rejected > 10_000, "{rejected}");
    }

    /// A line read for the turns and not for the responses alone tells no response and
    /// leaves the file's memo as it was: on every line of every recording under `testdata/`,
    /// read as each agent's, and on lines that spell a usage's key otherwise (a space before
    /// the colon, an escape), which are read for the responses too.
    #[test]
    fn a_line_left_to_the_turns_tells_no_response() {
        use super::{line_facts, line_wanted, Agent, FileMemo, Wanted};
        let only_for_turns = |a, line: &[u8]| {
            line_wanted(a, line, Wanted::ResponsesAndTurns)
                && !line_wanted(a, line, Wanted::Responses)
        };
        let mut left = 0;
        for path in crate::test_support::testdata_jsonl() {
            let text = std::fs::read(&path).unwrap_or_default();
            for line in text.split_inclusive(|&b| b == b'\n') {
                for a in [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Qwen] {
                    if !only_for_turns(a, line) {
                        continue;
                    }
                    left += 1;
                    let mut memo = FileMemo::default();
                    let facts = line_facts(a, line, &mut memo);
                    let said = |f: Option<crate::usage::LineFacts>| f.and_then(|f| f.usage);
                    assert_eq!(said(facts), None, "{a:?}, {}", path.display());
                    assert_eq!(format!("{memo:?}"), format!("{:?}", FileMemo::default()));
                }
            }
        }
        assert!(left > 100, "{left}");
        let spelled = [
            (
                Agent::Claude,
                r#"{"type":"user","message":{"role":"user","content":"hi","id":"msg_1","model":"claude-sonnet-4-5","us\u0061ge":{"input_tokens":100,"output_tokens":50}},"requestId":"req_1","timestamp":"2026-11-27T01:48:01.461Z","sessionId":"s1"}"#,
            ),
            (
                Agent::Claude,
                r#"{"type":"user","message":{"role":"user","content":"hi","id":"msg_1","model":"claude-sonnet-4-5","usage" : {"input_tokens":100,"output_tokens":50}},"requestId":"req_1","timestamp":"2026-11-27T01:48:01.461Z","sessionId":"s1"}"#,
            ),
            (
                Agent::Qwen,
                r#"{"uuid":"a1","sessionId":"s2","timestamp":"2026-12-05T22:47:52.090Z","type":"assistant","model":"m","message":{"parts":[{"text":"Hello.","type":"user"}]},"usageMetadata" :{"promptTokenCount":100,"candidatesTokenCount":10,"totalTokenCount":110}}"#,
            ),
            (
                Agent::Qwen,
                r#"{"uuid":"a1","sessionId":"s2","timestamp":"2026-12-05T22:47:52.090Z","type":"assistant","model":"m","message":{"parts":[{"text":"Hello.","type":"user"}]},"usage\u004detadata":{"promptTokenCount":100,"candidatesTokenCount":10,"totalTokenCount":110}}"#,
            ),
        ];
        for (a, line) in spelled {
            assert!(line_wanted(a, line.as_bytes(), Wanted::Responses), "{line}");
            let facts = line_facts(a, line.as_bytes(), &mut FileMemo::default());
            assert!(facts.and_then(|f| f.usage).is_some(), "{line}");
        }
    }

    /// Reading the responses alone gives the responses that reading the turns too gives: on
    /// every file under `testdata/` (its agent told as `usage` tells it, by its place or its
    /// first line), the same entries with a usage, the same keys, times, sessions, projects
    /// and models. Fewer lines are read: the prompts.
    #[test]
    fn responses_read_alone_are_the_responses_read_with_the_turns() {
        use super::{read_file, Wanted};
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let found = crate::usage::homes::given(&[root]);
        assert!(found.len() > 300, "{}", found.len());
        let (mut responses, mut prompts) = (0, 0);
        for f in &found {
            let seen = |wanted| {
                let part = read_file(f, &mut Vec::new(), wanted);
                let turns = part.entries.iter().filter(|(e, _)| e.turn).count();
                let mut kept: Vec<String> = (part.entries.iter())
                    .filter(|(e, _)| e.response)
                    .map(|(e, key)| {
                        let s = |i: super::Sym| part.strings[i as usize].clone();
                        let (session, project, model) = (s(e.session), s(e.project), s(e.model));
                        format!(
                            "{key:?} {:?} {session} {project} {model} {:?} {:?}",
                            e.time, e.tokens, e.cost_usd
                        )
                    })
                    .collect();
                kept.sort();
                (kept, turns, part.error)
            };
            let (all, turns, error) = seen(Wanted::ResponsesAndTurns);
            let (alone, _, error_alone) = seen(Wanted::Responses);
            assert_eq!(all, alone, "{}", f.path.display());
            assert_eq!(error, error_alone, "{}", f.path.display());
            responses += all.len();
            prompts += turns;
        }
        assert!(
            responses > 400 && prompts > 100,
            "{responses} responses, {prompts} prompts"
        );
    }

    /// Lines as `read_until` cuts them, also across chunks and without a last `\n`.
    #[test]
    fn lines_are_cut_as_read_until_cuts_them() {
        use std::io::BufRead as _;
        let long = "x".repeat(700_000);
        for text in [
            String::new(),
            "a\n\nb".to_owned(),
            format!("a\n{long}\nb\n"),
            format!("{long}{long}"),
            "\n".repeat(300_000),
        ] {
            let mut ours = Vec::new();
            let mut buf = Vec::new();
            super::split_lines(text.as_bytes(), &mut buf, &mut |l| ours.push(l.to_vec())).unwrap();
            let mut theirs = Vec::new();
            let mut r = std::io::BufReader::new(text.as_bytes());
            loop {
                let mut l = Vec::new();
                if r.read_until(b'\n', &mut l).unwrap() == 0 {
                    break;
                }
                theirs.push(l);
            }
            assert_eq!(ours, theirs);
        }
    }
}
