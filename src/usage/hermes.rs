//! Hermes Agent (Nous Research): the SQLite database `~/.hermes/state.db` (`HERMES_HOME`, a
//! comma-separated list, replaces `~/.hermes`), opened read-only.
//!
//! Hermes keeps one row per session in `sessions`, with the session's sums (`input_tokens`,
//! `output_tokens`, `cache_read_tokens`, `cache_write_tokens`, `reasoning_tokens`), its
//! `model`, its start (`started_at`, seconds) and its cost (`actual_cost_usd`, else
//! `estimated_cost_usd`): a session counts as one response on the day it started, as ccusage
//! counts it. Reasoning is output here (ccusage keeps it apart); the cost is Hermes' own when
//! above 0, else the price table's. A session in two databases counts once.

use super::reader::{Env, Reader, Sink};
use super::{Agent, LineFacts, Tokens};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::Hermes,
    places,
    keep,
    owns,
    read,
};

const DB: &str = "state.db";

fn places(env: &Env) -> Vec<PathBuf> {
    env.list_or_home("HERMES_HOME", ".hermes")
        .into_iter()
        .map(|d| d.join(DB))
        .collect()
}

fn keep(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == DB)
}

fn owns(p: &Path) -> bool {
    keep(p) && p.to_string_lossy().contains("/.hermes/")
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let words = |e: rusqlite::Error| crate::store::ingest::db_words(&e);
    let conn = rusqlite::Connection::open_with_flags(path, flags).map_err(words)?;
    let mut stmt = conn
        .prepare(
            "SELECT id, model, started_at, input_tokens, output_tokens, cache_read_tokens, \
             cache_write_tokens, reasoning_tokens, actual_cost_usd, estimated_cost_usd \
             FROM sessions WHERE model IS NOT NULL AND TRIM(model) != ''",
        )
        .map_err(words)?;
    let mut rows = stmt.query([]).map_err(words)?;
    while let Some(row) = rows.next().map_err(words)? {
        let real = |i: usize| {
            row.get::<_, Option<f64>>(i)
                .ok()
                .flatten()
                .filter(|v| v.is_finite())
        };
        let count = |i: usize| real(i).filter(|v| *v > 0.0).map_or(0, |v| v as u64);
        let (Ok(Some(id)), Ok(Some(model))) = (
            row.get::<_, Option<String>>(0),
            row.get::<_, Option<String>>(1),
        ) else {
            continue;
        };
        let model = model.trim();
        let Some(started) = real(2).filter(|v| *v > 0.0) else {
            sink.bad(0, format!("session {id}: no started_at"));
            continue;
        };
        let time = if started > 1e12 {
            started
        } else {
            started * 1000.0
        } as i64;
        let reasoning = count(7);
        let t = Tokens {
            input: count(3),
            output: count(4).saturating_add(reasoning),
            cache_read: count(5),
            cache_creation: count(6),
            reasoning,
            ..Tokens::default()
        };
        let cost = real(8).or(real(9)).map(|c| c.max(0.0));
        if t.is_zero() && cost.unwrap_or(0.0) == 0.0 {
            continue;
        }
        (sink.add)(LineFacts {
            time: Some(time),
            session: Some(Cow::Borrowed(&id)),
            model: Some(Cow::Borrowed(model)),
            usage: Some(t),
            cost_usd: cost.filter(|c| *c > 0.0),
            response: Some(crate::ids::hash64(&format!("hermes\0{id}"))),
            ..Default::default()
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{build_sql, home, read, responses, tokens};

    /// ccusage's Hermes test (tests/usage-samples/hermes, built into a database): a session's
    /// sums, its reasoning as output, Hermes' actual cost before its estimate.
    #[test]
    fn reads_sessions_from_the_database() {
        let dir = build_sql(&home("hermes"), "hermes");
        let s = read(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let mut t = tokens(1200, 310, 50, 20);
        t.reasoning = 10;
        assert_eq!(
            responses(&s),
            vec![(
                "session-1".into(),
                "claude-sonnet-4-20250514".into(),
                Some(1_750_000_000_250),
                t
            )]
        );
        assert_eq!(s.entries[0].cost_usd, Some(0.34));
    }
}
