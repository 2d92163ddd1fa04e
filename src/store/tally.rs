//! What `usage` and `sessions` read of each file, kept in the store (the tables
//! `usage_facts` and `usage_files`), so that `usage --db` and `sessions --db` give exactly what
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
use crate::usage::scan::{self, Entry, FilePart, Scan};
use crate::usage::Tokens;
use rusqlite::{params, Connection};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Reads the file `found` as `usage` reads it and keeps its entries under `key` (its path in
/// `sources`), in place of what was kept of it before.
pub fn save(
    conn: &Connection,
    key: &str,
    found: &Found,
    buf: &mut Vec<u8>,
) -> rusqlite::Result<()> {
    let part = scan::read_file(found, buf);
    conn.prepare_cached("DELETE FROM usage_facts WHERE path = ?1")?
        .execute([key])?;
    let mut ins = conn.prepare_cached(
        "INSERT INTO usage_facts (path, n, agent, time, session, project, model, input, output,
           cache_read, cache_creation, cache_creation_1h, reasoning, cost_usd, response, turn,
           response_key)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )?;
    let s = |sym: scan::Sym| part.strings[sym as usize].as_str();
    for (n, (e, k)) in part.entries.iter().enumerate() {
        let t = &e.tokens;
        // Counts and keys are u64: kept as the i64 of the same bits, and read back so.
        ins.execute(params![
            key,
            n as i64,
            e.agent.name(),
            e.time,
            s(e.session),
            s(e.project),
            s(e.model),
            t.input as i64,
            t.output as i64,
            t.cache_read as i64,
            t.cache_creation as i64,
            t.cache_creation_1h as i64,
            t.reasoning as i64,
            e.cost_usd,
            e.response,
            e.turn,
            k.map(|k| k as i64),
        ])?;
    }
    conn.prepare_cached("INSERT OR REPLACE INTO usage_files (path, first_ms) VALUES (?1, ?2)")?
        .execute(params![key, crate::input::first_line_millis(&found.path)])?;
    Ok(())
}

/// The scan `usage` would make of the files stored (only those under `under`, when given),
/// read in the order `usage` reads them: the paths given in turn, each in path order (see
/// [`order`]).
pub fn scan(db: &Db, under: &[PathBuf]) -> anyhow::Result<Scan> {
    let under: Vec<PathBuf> = under
        .iter()
        .map(|p| PathBuf::from(super::ingest::key_of(p)))
        .collect();
    let conn = db.conn();
    type Read = (Vec<(String, Option<i64>)>, Vec<(String, FilePart)>);
    let read = || -> rusqlite::Result<Read> {
        let mut st = conn.prepare("SELECT path, first_ms FROM usage_files")?;
        let files = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<Vec<(String, Option<i64>)>>>()?;
        // In path order: a row of the file before's path goes on its part (no lookup a row).
        let mut parts: Vec<(String, FilePart)> = Vec::with_capacity(files.len());
        let mut st = conn.prepare(
            "SELECT path, agent, time, session, project, model, input, output, cache_read,
               cache_creation, cache_creation_1h, reasoning, cost_usd, response, turn,
               response_key
             FROM usage_facts ORDER BY path, n",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let path = r.get_ref(0)?.as_str()?;
            if parts.last().is_none_or(|(p, _)| p != path) {
                let mut p = FilePart::default();
                p.sym(None);
                parts.push((path.to_owned(), p));
            }
            let Some((_, part)) = parts.last_mut() else {
                continue;
            };
            let agent: String = r.get(1)?;
            let Ok(agent) = <Agent as clap::ValueEnum>::from_str(&agent, true) else {
                // An agent this insights does not know (a newer one stored it): not counted,
                // as `usage` would not count its files.
                continue;
            };
            let n = |i: usize| r.get::<_, i64>(i).map(|v| v as u64);
            let entry = Entry {
                agent,
                time: r.get(2)?,
                session: part.sym(Some(r.get_ref(3)?.as_str()?)),
                project: part.sym(Some(r.get_ref(4)?.as_str()?)),
                model: part.sym(Some(r.get_ref(5)?.as_str()?)),
                file: 0,
                tokens: Tokens {
                    input: n(6)?,
                    output: n(7)?,
                    cache_read: n(8)?,
                    cache_creation: n(9)?,
                    cache_creation_1h: n(10)?,
                    reasoning: n(11)?,
                },
                cost_usd: r.get(12)?,
                response: r.get(13)?,
                turn: r.get(14)?,
            };
            let key: Option<i64> = r.get(15)?;
            part.entries.push((entry, key.map(|k| k as u64)));
        }
        Ok((files, parts))
    };
    let (files, parts) = read().map_err(|e| db.error(e))?;
    let mut parts: HashMap<String, FilePart> = parts.into_iter().collect();
    // Which path given each file is under (its place in the reading order), or none.
    let place = |p: &Path| -> Option<usize> {
        if under.is_empty() {
            Some(0)
        } else {
            under.iter().position(|u| p.starts_with(u))
        }
    };
    let mut files: Vec<(usize, PathBuf, Option<i64>)> = files
        .into_iter()
        .filter_map(|(p, ms)| {
            let p = PathBuf::from(p);
            place(&p).map(|i| (i, p, ms))
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| order((&a.1, a.2), (&b.1, b.2))));
    let parts = files
        .into_iter()
        .map(|(_, path, _)| {
            let part = parts.remove(&*path.to_string_lossy()).unwrap_or_else(|| {
                let mut p = FilePart::default();
                p.sym(None);
                p
            });
            let found = Found {
                path,
                agent: None,
                project: None,
            };
            (found, part)
        })
        .collect();
    Ok(scan::from_parts(parts))
}

/// The order `usage` reads the files of a folder in (`crate::input::jsonl_files`): path
/// order, a folder right after the file of its name plus `.jsonl`, and the entries of a
/// `subagents` folder by the time of their first line (files without one, and folders, after
/// those with one), then by name.
fn order(a: (&Path, Option<i64>), b: (&Path, Option<i64>)) -> Ordering {
    let ca: Vec<Component> = a.0.components().collect();
    let cb: Vec<Component> = b.0.components().collect();
    let key = |c: &[Component], i: usize| -> OsString {
        let mut k = c[i].as_os_str().to_owned();
        if i + 1 < c.len() {
            k.push(".jsonl\0");
        }
        k
    };
    let Some(i) = (0..ca.len().min(cb.len())).find(|&i| ca[i] != cb[i]) else {
        return ca.len().cmp(&cb.len());
    };
    let (ka, kb) = (key(&ca, i), key(&cb, i));
    if i > 0 && ca[i - 1].as_os_str() == "subagents" {
        // A file's own time; a folder has none.
        let ms = |c: &[Component], ms: Option<i64>| {
            if i + 1 == c.len() {
                ms.unwrap_or(i64::MAX)
            } else {
                i64::MAX
            }
        };
        return ms(&ca, a.1).cmp(&ms(&cb, b.1)).then(ka.cmp(&kb));
    }
    ka.cmp(&kb)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        v.sort_by(|a, b| order((Path::new(a.0), a.1), (Path::new(b.0), b.1)));
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
