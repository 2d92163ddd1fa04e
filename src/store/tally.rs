//! What `usage` and `sessions` read of each file, kept in the store (the table
//! `usage_files`, a row per file), so that `usage --db` and `sessions --db` give exactly what
//! they give on the files.
//!
//! `usage` does not count events: it reads the session files' own figures, line by line, with
//! each provider's `line_facts` (src/usage/scan.rs), and a response written in several files
//! counts once. The events say the same in other words (and a stream and its session file say
//! it twice, under different ids), so counting them would answer another question. Instead,
//! when `insights store` reads a file, it reads it as `usage` does too, and keeps the entries:
//! `--db` merges them as `usage` merges the files it reads, in the order it reads them.

use super::query::Db;
use crate::usage::homes::{Agent, Found};
use crate::usage::scan::{self, Entry, FilePart, Scan, Sym};
use crate::usage::Tokens;
use rusqlite::{params, Connection, OptionalExtension as _};
use std::borrow::Cow;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// What `usage` reads of a file, packed: its first line's time and its entries ([`pack`]).
/// Kept as one row of `usage_files` ([`put`]), so that `usage --db` reads a file in one row.
#[derive(Debug)]
pub struct Facts {
    first_ms: Option<i64>,
    packed: Vec<u8>,
}

/// Reads the file `found` as `usage` reads it (`buf` a buffer for its lines).
pub fn facts(found: &Found, buf: &mut Vec<u8>) -> Facts {
    let part = scan::read_file(found, buf, crate::usage::Wanted::ResponsesAndTurns);
    let mut packed = Vec::new();
    pack(&part, &mut packed);
    Facts {
        first_ms: crate::input::first_line_millis(&found.path),
        packed,
    }
}

/// Keeps `facts` under `key`, in place of what was kept before.
pub fn put(conn: &Connection, key: &str, facts: &Facts) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO usage_files (path, first_ms, facts) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![key, facts.first_ms, &facts.packed[..]])?;
    Ok(())
}

/// The size of one packed entry: see [`pack`].
const ENTRY: usize = 4 * 4 + 1 + 8 * 9;

/// Flags of a packed entry.
const RESPONSE: u8 = 1;
const TURN: u8 = 2;
const HAS_TIME: u8 = 4;
const HAS_COST: u8 = 8;
const HAS_KEY: u8 = 16;

/// Packs a file's entries (docs/store.md, `usage_files.facts`), all numbers little-endian:
/// the number of strings (u32), each string as its length (u32) and its UTF-8 bytes (string
/// 0 is the empty one); the number of entries (u32), each entry [`ENTRY`] bytes: the string
/// numbers of its agent, session, project and model (u32 each), flags (u8: 1 a model
/// response, 2 a prompt that starts a turn, 4 `time` is there, 8 `cost_usd` is there, 16
/// `response_key` is there), `time` (i64, Unix milliseconds), the tokens `input`, `output`,
/// `cache_read`, `cache_creation`, `cache_creation_1h`, `reasoning` (u64 each), `cost_usd`
/// (f64) and `response_key` (u64), absent ones as 0.
fn pack(part: &FilePart, out: &mut Vec<u8>) {
    let mut strings: Vec<&str> = part.strings.iter().map(String::as_str).collect();
    let agents = agent_syms(&mut strings, part.entries.iter().map(|(e, _)| e.agent));
    out.reserve(8 + strings.iter().map(|s| 4 + s.len()).sum::<usize>() + ENTRY * agents.len());
    put_strings(out, &strings);
    out.extend_from_slice(&(part.entries.len() as u32).to_le_bytes());
    for ((e, key), agent) in part.entries.iter().zip(agents) {
        put_entry(out, agent, e, *key);
    }
}

/// The string numbers of `agents`' names, each name added after `strings`' own (once).
fn agent_syms(strings: &mut Vec<&str>, agents: impl Iterator<Item = Agent>) -> Vec<u32> {
    let mut named: Vec<(Agent, u32)> = Vec::new();
    agents
        .map(|a| match named.iter().find(|(b, _)| *b == a) {
            Some(&(_, sym)) => sym,
            None => {
                let sym = match strings.iter().position(|s| *s == a.name()) {
                    Some(i) => i as u32,
                    None => {
                        strings.push(a.name());
                        (strings.len() - 1) as u32
                    }
                };
                named.push((a, sym));
                sym
            }
        })
        .collect()
}

/// Writes the number of `strings`, then each as its length and bytes.
fn put_strings(out: &mut Vec<u8>, strings: &[&str]) {
    out.extend_from_slice(&(strings.len() as u32).to_le_bytes());
    for s in strings {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
}

/// Writes one entry in [`ENTRY`] bytes ([`pack`]); `extra` in the last 8 (the response key of
/// a file's entry, the file of a merged one).
fn put_entry(out: &mut Vec<u8>, agent: u32, e: &Entry, extra: Option<u64>) {
    let t = &e.tokens;
    let flags = (if e.response { RESPONSE } else { 0 })
        | (if e.turn { TURN } else { 0 })
        | (if e.time.is_some() { HAS_TIME } else { 0 })
        | (if e.cost_usd.is_some() { HAS_COST } else { 0 })
        | (if extra.is_some() { HAS_KEY } else { 0 });
    for sym in [agent, e.session, e.project, e.model] {
        out.extend_from_slice(&sym.to_le_bytes());
    }
    out.push(flags);
    out.extend_from_slice(&e.time.unwrap_or(0).to_le_bytes());
    for n in [
        t.input,
        t.output,
        t.cache_read,
        t.cache_creation,
        t.cache_creation_1h,
        t.reasoning,
    ] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out.extend_from_slice(&e.cost_usd.unwrap_or(0.0).to_le_bytes());
    out.extend_from_slice(&extra.unwrap_or(0).to_le_bytes());
}

/// The first `n` bytes of `b`, which goes on after them.
fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if b.len() < n {
        return None;
    }
    let (head, rest) = b.split_at(n);
    *b = rest;
    Some(head)
}

fn u32_of(b: &mut &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(take(b, 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Strings as [`put_strings`] wrote them, borrowed from `b`.
fn strings_of<'b>(b: &mut &'b [u8]) -> Option<Vec<&'b str>> {
    let n = u32_of(b)? as usize;
    let mut strings = Vec::with_capacity(n.min(b.len() / 4));
    for _ in 0..n {
        let len = u32_of(b)? as usize;
        strings.push(std::str::from_utf8(take(b, len)?).ok()?);
    }
    Some(strings)
}

/// The entries [`put_entry`] wrote after their count, each given to `each` with its extra;
/// `agents` are the strings' agents, by number. An entry of an agent this insights does not
/// know (a newer one stored it) is left out, as `usage` would not count its file. `None`
/// when the bytes are not that.
fn entries_of(
    mut b: &[u8],
    agents: &[Option<Agent>],
    each: &mut dyn FnMut(Entry, Option<u64>),
) -> Option<()> {
    let count = u32_of(&mut b)? as usize;
    if b.len() != count.checked_mul(ENTRY)? {
        return None;
    }
    for e in b.chunks_exact(ENTRY) {
        if let Some((entry, extra)) = entry_of(e, agents)? {
            each(entry, extra);
        }
    }
    Some(())
}

/// One entry of [`ENTRY`] bytes ([`put_entry`]) and its extra; `Some(None)` for an entry of
/// an agent this insights does not know (a newer one stored it: left out, as `usage` would
/// not count its file), `None` when the bytes are not an entry.
fn entry_of(e: &[u8], agents: &[Option<Agent>]) -> Option<Option<(Entry, Option<u64>)>> {
    let syms = agents.len();
    let sym = |at: usize| -> Option<Sym> {
        let s = u32::from_le_bytes(e.get(at..at + 4)?.try_into().ok()?);
        ((s as usize) < syms).then_some(s)
    };
    if e.len() != ENTRY {
        return None;
    }
    let Some(agent) = agents[sym(0)? as usize] else {
        return Some(None);
    };
    let flags = e[16];
    let n = |i: usize| u64_at(e, 25 + 8 * i);
    let entry = Entry {
        agent,
        time: (flags & HAS_TIME != 0).then(|| u64_at(e, 17) as i64),
        session: sym(4)?,
        project: sym(8)?,
        model: sym(12)?,
        file: 0,
        tokens: Tokens {
            input: n(0),
            output: n(1),
            cache_read: n(2),
            cache_creation: n(3),
            cache_creation_1h: n(4),
            reasoning: n(5),
        },
        cost_usd: (flags & HAS_COST != 0).then(|| f64::from_bits(n(6))),
        response: flags & RESPONSE != 0,
        turn: flags & TURN != 0,
    };
    Some(Some((entry, (flags & HAS_KEY != 0).then(|| n(7)))))
}

/// A file's entries from what [`pack`] wrote, into `entries` (emptied first), and the
/// strings they name, borrowed from `b`; `None` when the bytes are not that.
fn unpack<'b>(mut b: &'b [u8], entries: &mut Vec<(Entry, Option<u64>)>) -> Option<Vec<&'b str>> {
    entries.clear();
    let strings = strings_of(&mut b)?;
    let agents: Vec<Option<Agent>> = strings.iter().map(|s| Agent::named(s)).collect();
    entries.reserve(b.len() / ENTRY);
    entries_of(b, &agents, &mut |e, key| entries.push((e, key)))?;
    Some(strings)
}

/// The version of what `usage` reads of a file (its readers, src/usage/): kept in the store
/// as SQLite's `user_version`. One more whenever a reader counts a file otherwise, so that
/// `store` reads again the files an older insights read ([`super::schema`]'s `migrate`),
/// and `usage --db` answers as `usage` on the files does.
pub const FACTS: i64 = 1;

/// What [`Merged::write`] writes first: a merged scan packed otherwise is not read, and
/// `store` merges again. The version of the packing and of the merge (src/usage/scan.rs, the
/// order of [`order_key`]): a change of either changes it.
const MERGED: u32 = 1;

/// A merged scan to pack (docs/store.md, `usage_merged.scan`): [`MERGED`] (u32); the number
/// of the scan's own strings (u32); the scan's strings, then the agents' names
/// ([`put_strings`]); its files' paths and its errors, each
/// as strings; its entries as a file's ([`pack`]), the last 8 bytes of each its file's number.
struct Merged<'s> {
    scan: &'s Scan,
    strings: Vec<&'s str>,
    agents: Vec<u32>,
    paths: Vec<Cow<'s, str>>,
}

impl<'s> Merged<'s> {
    fn new(scan: &'s Scan) -> Merged<'s> {
        let mut strings: Vec<&str> = scan.strings.iter().map(String::as_str).collect();
        let agents = agent_syms(&mut strings, scan.entries.iter().map(|e| e.agent));
        let paths = scan
            .files
            .iter()
            .map(|f| f.path.to_string_lossy())
            .collect();
        Merged {
            scan,
            strings,
            agents,
            paths,
        }
    }

    /// The length of what [`Merged::write`] writes.
    fn len(&self) -> usize {
        let strings = |v: &mut dyn Iterator<Item = usize>| 4 + v.map(|n| 4 + n).sum::<usize>();
        8 + strings(&mut self.strings.iter().map(|s| s.len()))
            + strings(&mut self.paths.iter().map(|p| p.len()))
            + strings(&mut self.scan.errors.iter().map(String::len))
            + 4
            + ENTRY * self.scan.entries.len()
    }

    /// Writes it a piece of about 64 KiB at a time (a large scan is not packed whole in
    /// memory).
    fn write(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        const PIECE: usize = 1 << 16;
        let mut buf = Vec::with_capacity(PIECE + ENTRY);
        buf.extend_from_slice(&MERGED.to_le_bytes());
        buf.extend_from_slice(&(self.scan.strings.len() as u32).to_le_bytes());
        let paths: Vec<&str> = self.paths.iter().map(|p| &**p).collect();
        let errors: Vec<&str> = self.scan.errors.iter().map(String::as_str).collect();
        for list in [&self.strings, &paths, &errors] {
            put_strings(&mut buf, list);
            w.write_all(&buf)?;
            buf.clear();
        }
        buf.extend_from_slice(&(self.scan.entries.len() as u32).to_le_bytes());
        for (e, &agent) in self.scan.entries.iter().zip(&self.agents) {
            put_entry(&mut buf, agent, e, Some(u64::from(e.file)));
            if buf.len() >= PIECE {
                w.write_all(&buf)?;
                buf.clear();
            }
        }
        w.write_all(&buf)
    }
}

/// The scan [`Merged::write`] packed, read from `r` (`len` bytes) a piece at a time (the row
/// is megabytes: it is not held whole beside the scan made of it); `None` when the bytes are
/// not that.
fn unpack_merged(r: &mut dyn std::io::Read, len: usize) -> Option<Scan> {
    use std::io::Read as _;
    fn u32_from(r: &mut dyn std::io::Read) -> Option<u32> {
        let mut b = [0u8; 4];
        r.read_exact(&mut b).ok()?;
        Some(u32::from_le_bytes(b))
    }
    // Strings as [`put_strings`] wrote them.
    fn strings_from(r: &mut dyn std::io::Read) -> Option<Vec<String>> {
        let n = u32_from(r)? as usize;
        // Not trusted for the room to make: grown as the strings come.
        let mut strings = Vec::with_capacity(n.min(1 << 12));
        for _ in 0..n {
            let len = u32_from(r)? as usize;
            let mut b = Vec::with_capacity(len.min(1 << 16));
            r.take(len as u64).read_to_end(&mut b).ok()?;
            if b.len() != len {
                return None;
            }
            strings.push(String::from_utf8(b).ok()?);
        }
        Some(strings)
    }
    if u32_from(r)? != MERGED {
        return None;
    }
    let own = u32_from(r)? as usize;
    let mut strings = strings_from(r)?;
    if own > strings.len() {
        return None;
    }
    let agents: Vec<Option<Agent>> = strings.iter().map(|s| Agent::named(s)).collect();
    strings.truncate(own);
    let paths = strings_from(r)?;
    let errors = strings_from(r)?;
    let mut scan = Scan::default();
    scan.strings = strings;
    scan.files = paths
        .into_iter()
        .map(|p| Found {
            path: PathBuf::from(p),
            agent: None,
            project: None,
            stamp: None,
        })
        .collect();
    scan.errors = errors;
    let count = u32_from(r)? as usize;
    // Room for no more entries than the `len` bytes can hold (a corrupt count is not trusted).
    scan.entries.reserve(count.min(len / ENTRY));
    let files = scan.files.len() as u64;
    let own = own as Sym;
    // The entries, some hundreds at a time.
    let mut piece = vec![0u8; ENTRY * 736];
    let mut left = count;
    while left > 0 {
        let n = left.min(736);
        let b = &mut piece[..ENTRY * n];
        r.read_exact(b).ok()?;
        for e in b.chunks_exact(ENTRY) {
            let Some((mut e, file)) = entry_of(e, &agents)? else {
                continue;
            };
            match file {
                Some(f) if f < files && e.session < own && e.project < own && e.model < own => {
                    e.file = f as u32;
                    scan.entries.push(e);
                }
                _ => return None,
            }
        }
        left -= n;
    }
    // Nothing after the entries.
    (r.read(&mut [0u8; 1]).ok()? == 0).then_some(scan)
}

/// The scan `usage` would make of the files stored (only those under `under`, when given),
/// read in the order `usage` reads them: the paths given in turn, each in path order (see
/// [`order_key`]). Of every file, the merged facts kept by the last store (`usage_merged`)
/// when they are there; else one sequential read of `usage_files`, a row per file.
pub fn scan(db: &Db, under: &[PathBuf]) -> anyhow::Result<Scan> {
    let conn = db.conn();
    let mut scan = match under.is_empty().then(|| merged(conn)).flatten() {
        Some(scan) => scan,
        // One read transaction: the rows are listed, then read one by one.
        None => conn
            .unchecked_transaction()
            .and_then(|tx| scan_files(&tx, under))
            .map_err(|e| db.error(e))?,
    };
    // Facts an older insights read (`FACTS`) may count a file otherwise than `usage` on the
    // files now: said, with what reads them again.
    let facts: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| db.error(e))?;
    if facts < FACTS {
        scan.errors.push(format!(
            "{}: its usage facts were read by an older insights (`insights store --db {}` \
             reads the files again)",
            db.name(),
            db.name()
        ));
    }
    Ok(scan)
}

/// The merged facts kept, when they are there and read (a store of version 4 has none):
/// read through blob I/O, a piece at a time.
fn merged(conn: &Connection) -> Option<Scan> {
    let blob = conn
        .blob_open(rusqlite::MAIN_DB, "usage_merged", "scan", 1, true)
        .ok()?;
    let len = blob.len();
    unpack_merged(&mut std::io::BufReader::with_capacity(1 << 16, blob), len)
}

/// Whether the merged row is there, and of this version: its first 4 bytes read through blob
/// I/O (`substr` would read the whole row, megabytes, on every run).
pub fn merged_current(c: &Connection) -> rusqlite::Result<bool> {
    let there: Option<bool> = c
        .query_row(
            "SELECT typeof(scan) = 'blob' AND length(scan) >= 4 FROM usage_merged WHERE id = 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if there != Some(true) {
        return Ok(false);
    }
    // A row another writer changed or deleted since the query cannot be opened or read:
    // not current, and the merge that follows makes it again (an error of the database
    // shows there).
    let Ok(blob) = c.blob_open(rusqlite::MAIN_DB, "usage_merged", "scan", 1, true) else {
        return Ok(false);
    };
    let mut head = [0u8; 4];
    Ok(blob.read_at_exact(&mut head, 0).is_ok() && head == MERGED.to_le_bytes())
}

/// Merges every file's facts and keeps them (`usage_merged`), unless they are kept already
/// in this insights' packing: after a store that changed `usage_files` (whose triggers deleted
/// what was kept), or after another insights kept them otherwise. In one transaction of its
/// own, so what is kept is what `usage_files` holds; looked at first without the write lock
/// (a run that changed nothing does not wait for another writer).
pub fn keep_merged(conn: &Connection) -> rusqlite::Result<()> {
    if merged_current(conn)? {
        return Ok(());
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    if !merged_current(&tx)? {
        let mut scan = scan_files(&tx, &[])?;
        scan.merged();
        let merged = Merged::new(&scan);
        let len = merged.len();
        tx.execute(
            "INSERT OR REPLACE INTO usage_merged (id, scan) VALUES (1, zeroblob(?1))",
            [len as i64],
        )?;
        // Written into the row in place: the packed scan is as large as the entries.
        let mut blob = tx.blob_open(rusqlite::MAIN_DB, "usage_merged", "scan", 1, false)?;
        let wrote = merged.write(&mut blob);
        drop(blob);
        wrote.map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    }
    tx.commit()
}

/// [`fn@scan`] of the rows of `usage_files`.
fn scan_files(conn: &Connection, under: &[PathBuf]) -> rusqlite::Result<Scan> {
    let under: Vec<PathBuf> = under
        .iter()
        .map(|p| PathBuf::from(super::ingest::key_of(p)))
        .collect();
    // Which path given each file is under (its place in the reading order), or none.
    let place = |p: &Path| -> Option<usize> {
        if under.is_empty() {
            Some(0)
        } else {
            under.iter().position(|u| p.starts_with(u))
        }
    };
    // The rows without their facts, in the reading order; then each row's facts, read in
    // turn and unpacked from SQLite's copy (the facts of every file are not held at once).
    // Each file's place in the reading order, path, first line's time, rowid and facts' size.
    type Row = (usize, PathBuf, Option<i64>, i64, i64);
    let read = || -> rusqlite::Result<Vec<Row>> {
        let mut st =
            conn.prepare("SELECT path, first_ms, rowid, length(facts) FROM usage_files")?;
        let mut rows = st.query([])?;
        let mut files = Vec::new();
        while let Some(r) = rows.next()? {
            let path = PathBuf::from(r.get_ref(0)?.as_str()?);
            let Some(i) = place(&path) else {
                continue;
            };
            files.push((i, path, r.get(1)?, r.get(2)?, r.get(3)?));
        }
        Ok(files)
    };
    let mut files = read()?;
    files.sort_by_cached_key(|f| (f.0, order_key(&f.1, f.2)));
    let mut scan = Scan::new();
    // At most this many entries (the facts' sizes, their strings counted as entries).
    let most: i64 = files.iter().map(|f| f.4.max(0)).sum();
    scan.entries
        .reserve(usize::try_from(most).unwrap_or(0) / ENTRY);
    let mut facts = conn.prepare("SELECT facts FROM usage_files WHERE rowid = ?1")?;
    let mut entries = Vec::new();
    for (_, path, _, rowid, _) in files {
        let found = Found {
            path,
            agent: None,
            project: None,
            stamp: None,
        };
        let mut rows = facts.query([rowid])?;
        let packed = match rows.next()? {
            Some(r) => r.get_ref(0)?.as_blob()?,
            None => &[],
        };
        match unpack(packed, &mut entries) {
            Some(strings) => scan.add_entries(found, &mut entries, &strings),
            None => {
                // Not what this insights packs: counted as a file it could not read.
                let mut p = FilePart::default();
                p.sym(None);
                p.error = Some(format!(
                    "{}: its usage facts in the store cannot be read (`insights store` \
                     reads it again once the file changes)",
                    found.path.display()
                ));
                scan.add(found, p);
            }
        }
    }
    Ok(scan)
}

/// The order `usage` reads the files of a folder in (`crate::input::jsonl_files`): path
/// order, a folder right after the file of its name plus `.jsonl`, and the entries of a
/// `subagents` folder by the time of their first line (files without one, and folders, after
/// those with one), then by name. As a key (compared as a whole), made once per file: each
/// component's time (below `subagents`; 0 elsewhere) and name, a folder's name followed by
/// `.jsonl\0`.
fn order_key(path: &Path, first_ms: Option<i64>) -> Vec<(i64, OsString)> {
    let c: Vec<Component> = path.components().collect();
    (0..c.len())
        .map(|i| {
            let last = i + 1 == c.len();
            let mut name = c[i].as_os_str().to_owned();
            if !last {
                name.push(".jsonl\0");
            }
            let time = if i > 0 && c[i - 1].as_os_str() == "subagents" {
                // A file's own time; a folder has none.
                if last {
                    first_ms.unwrap_or(i64::MAX)
                } else {
                    i64::MAX
                }
            } else {
                0
            };
            (time, name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry of `agent` with the string numbers of its session, project and model, and
    /// tokens of every kind (reasoning the largest number).
    fn sample(
        agent: Agent,
        time: Option<i64>,
        [session, project, model]: [Sym; 3],
        cost_usd: Option<f64>,
        response: bool,
        turn: bool,
    ) -> Entry {
        Entry {
            agent,
            time,
            session,
            project,
            model,
            file: 0,
            tokens: Tokens {
                input: 1,
                output: 2,
                cache_read: 3,
                cache_creation: 4,
                cache_creation_1h: 5,
                reasoning: u64::MAX,
            },
            cost_usd,
            response,
            turn,
        }
    }

    /// Each agent is read back from the name packed for it.
    #[test]
    fn agents_are_named_back() {
        for a in <Agent as clap::ValueEnum>::value_variants() {
            assert_eq!(Agent::named(a.name()), Some(*a));
        }
        assert_eq!(Agent::named("someone"), None);
    }

    #[test]
    fn a_part_packed_is_unpacked_as_it_was() {
        let mut part = FilePart::default();
        part.sym(None);
        let (s, p, m) = (
            part.sym(Some("sess")),
            part.sym(Some("/proj")),
            part.sym(Some("claude")),
        );
        let entry = |agent, time, cost, response, turn| {
            sample(agent, time, [s, p, m], cost, response, turn)
        };
        part.entries.push((
            entry(Agent::Claude, Some(-7), Some(0.25), true, false),
            Some(u64::MAX - 1),
        ));
        part.entries
            .push((entry(Agent::Gemini, None, None, false, true), None));
        let mut buf = Vec::new();
        pack(&part, &mut buf);
        let mut entries = Vec::new();
        let strings = unpack(&buf, &mut entries).unwrap();
        let mut back = FilePart::default();
        back.entries = entries;
        back.strings = strings.iter().map(|s| s.to_string()).collect();
        let show = |p: &FilePart| {
            p.entries
                .iter()
                .map(|(e, k)| {
                    format!(
                        "{:?} {:?} {} {} {} {:?} {:?} {} {} {k:?}",
                        e.agent,
                        e.time,
                        p.strings[e.session as usize],
                        p.strings[e.project as usize],
                        p.strings[e.model as usize],
                        e.tokens,
                        e.cost_usd,
                        e.response,
                        e.turn
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(show(&back), show(&part));
        assert_eq!(back.strings[0], "");
        assert!(unpack(&buf[..buf.len() - 1], &mut Vec::new()).is_none());
        assert!(unpack(&[], &mut Vec::new()).is_none());
    }

    /// A merged scan is read back as it was kept: strings, files, errors and entries (each
    /// with its file); bytes of another kind or cut short are not read.
    #[test]
    fn a_merged_scan_is_unpacked_as_it_was() {
        let mut scan = Scan::new();
        let entry = |agent, time| sample(agent, time, [1, 2, 3], Some(0.5), true, false);
        let strings = ["", "s1", "/p", "model-a"];
        for (i, agent) in [Agent::Claude, Agent::Codex, Agent::Kimi]
            .into_iter()
            .enumerate()
        {
            let found = Found {
                path: PathBuf::from(format!("/h/file-{i}.jsonl")),
                agent: None,
                project: None,
                stamp: None,
            };
            let mut entries = vec![
                (entry(agent, Some(i as i64)), Some(i as u64)),
                (entry(agent, None), None),
            ];
            scan.add_entries(found, &mut entries, &strings);
        }
        scan.errors.push("/h/bad: unreadable".into());
        let merged = Merged::new(&scan);
        let mut packed = Vec::new();
        merged.write(&mut packed).unwrap();
        assert_eq!(packed.len(), merged.len());
        let back = unpack_merged(&mut &packed[..], packed.len()).unwrap();
        let paths = |s: &Scan| s.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
        assert_eq!(format!("{:?}", back.entries), format!("{:?}", scan.entries));
        assert_eq!(back.strings, scan.strings);
        assert_eq!(paths(&back), paths(&scan));
        assert_eq!(back.errors, scan.errors);
        assert_eq!(back.entries.iter().map(|e| e.file).max(), Some(2));
        assert!(unpack_merged(&mut &packed[..packed.len() - 1], packed.len() - 1).is_none());
        let mut other = packed.clone();
        other[0] = 9;
        assert!(unpack_merged(&mut &other[..], other.len()).is_none());
        // A count of entries past what the bytes hold: no room made for it, and not read.
        let huge: Vec<u8> = [MERGED, 0, 0, 0, 0, u32::MAX]
            .iter()
            .flat_map(|n| n.to_le_bytes())
            .collect();
        assert!(unpack_merged(&mut &huge[..], huge.len()).is_none());
    }

    /// `store` keeps a merged scan when there is none, or one packed by another insights, and
    /// leaves a current one; an entry naming a string past the scan's own is not read.
    #[test]
    fn a_merged_scan_is_kept_once_and_made_again_when_foreign() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(super::super::schema::DDL).unwrap();
        let header = |c: &Connection| -> Vec<u8> {
            c.query_row("SELECT substr(scan, 1, 4) FROM usage_merged", [], |r| {
                r.get(0)
            })
            .unwrap()
        };
        keep_merged(&conn).unwrap();
        assert_eq!(header(&conn), MERGED.to_le_bytes());
        conn.execute("UPDATE usage_merged SET scan = x'09000000'", [])
            .unwrap();
        keep_merged(&conn).unwrap();
        assert_eq!(header(&conn), MERGED.to_le_bytes());
        // A change of usage_files deletes it (the triggers).
        conn.execute(
            "INSERT INTO usage_files (path, first_ms, facts) VALUES ('/f', NULL, x'')",
            [],
        )
        .unwrap();
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM usage_merged", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0);
        // An entry whose session is an agent's name (past the scan's own strings).
        let mut scan = Scan::new();
        let found = Found {
            path: PathBuf::from("/f"),
            agent: None,
            project: None,
            stamp: None,
        };
        scan.add_entries(found, &mut Vec::new(), &[""]);
        scan.entries
            .push(sample(Agent::Claude, None, [0, 0, 0], None, true, false));
        let mut packed = Vec::new();
        Merged::new(&scan).write(&mut packed).unwrap();
        assert!(unpack_merged(&mut &packed[..], packed.len()).is_some());
        // The session's number (the entry's bytes 4..8) set to 1: "claude", an agent's name.
        let at = packed.len() - ENTRY + 4;
        packed[at] = 1;
        assert!(unpack_merged(&mut &packed[..], packed.len()).is_none());
    }

    #[test]
    fn files_are_in_the_order_a_folder_is_read_in() {
        let mut v = [
            ("/h/p/s/subagents/agent-b.jsonl", Some(1)),
            ("/h/p/s.jsonl", None),
            ("/h/p/s/subagents/agent-a.jsonl", Some(2)),
            ("/h/p/r.jsonl", None),
            ("/h/p-x.jsonl", None),
            ("/h/p/s/subagents/agent-c.jsonl", None),
        ];
        v.sort_by_cached_key(|a| order_key(Path::new(a.0), a.1));
        let got: Vec<&str> = v.iter().map(|x| x.0).collect();
        assert_eq!(
            got,
            [
                "/h/p-x.jsonl",
                "/h/p/r.jsonl",
                "/h/p/s.jsonl",
                "/h/p/s/subagents/agent-b.jsonl",
                "/h/p/s/subagents/agent-a.jsonl",
                "/h/p/s/subagents/agent-c.jsonl",
            ]
        );
    }
}
