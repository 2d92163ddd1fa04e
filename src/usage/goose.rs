//! Goose (Block): the SQLite database `~/.local/share/goose/sessions/sessions.db` (also
//! `~/Library/Application Support/goose/sessions/` and `~/.local/share/Block/goose/sessions/`;
//! `GOOSE_PATH_ROOT` replaces them with `<root>/data/sessions/sessions.db`), opened read-only.
//!
//! Goose keeps one row per session in `sessions`, with the tokens summed over the session
//! (`accumulated_input_tokens`, `accumulated_output_tokens`, `accumulated_total_tokens`; else
//! the last request's `input_tokens`, `output_tokens`, `total_tokens`), its model in
//! `model_config_json` (`model_name`) and its start in `created_at`: a session counts as one
//! response on the day it started, as ccusage counts it. The total beyond input and output is
//! reasoning (output here); Goose writes no cache tokens.

use super::reader::{Env, Reader, Sink};
use super::{Agent, LineFacts, Tokens};
use serde::Deserialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::Goose,
    places,
    keep,
    owns,
    read,
};

const DB: &str = "sessions.db";

fn places(env: &Env) -> Vec<PathBuf> {
    if let Some(root) = env.var("GOOSE_PATH_ROOT") {
        return vec![PathBuf::from(root).join("data/sessions").join(DB)];
    }
    let Some(home) = &env.home else {
        return Vec::new();
    };
    [
        ".local/share/goose/sessions",
        "Library/Application Support/goose/sessions",
        ".local/share/Block/goose/sessions",
    ]
    .iter()
    .map(|d| home.join(d).join(DB))
    .collect()
}

fn keep(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == DB)
}

/// `goose/sessions/sessions.db`.
fn owns(p: &Path) -> bool {
    keep(p) && p.to_string_lossy().contains("goose/")
}

#[derive(Deserialize)]
struct ModelConfig {
    model_name: Option<String>,
}

/// `created_at`: seconds or milliseconds, RFC 3339, `YYYY-MM-DD HH:MM:SS` (UTC, as SQLite's
/// `CURRENT_TIMESTAMP` writes it) or a day.
fn created(v: &rusqlite::types::Value) -> Option<i64> {
    use rusqlite::types::Value as V;
    let s = match v {
        V::Integer(n) if *n > 1_000_000_000_000 => return Some(*n),
        V::Integer(n) if *n > 0 => return n.checked_mul(1000),
        V::Text(s) => s.trim(),
        _ => return None,
    };
    if let Ok(n) = s.parse::<i64>() {
        return created(&V::Integer(n));
    }
    let b = s.as_bytes();
    match b.len() {
        19 if b[4] == b'-' && (b[10] == b' ' || b[10] == b'T') => {
            crate::time::millis(&format!("{}T{}Z", &s[..10], &s[11..]))
        }
        10 if b[4] == b'-' && b[7] == b'-' => crate::time::millis(&format!("{s}T00:00:00Z")),
        _ => crate::time::millis(s),
    }
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let words = |e: rusqlite::Error| crate::store::ingest::db_words(&e);
    let conn = rusqlite::Connection::open_with_flags(path, flags).map_err(words)?;
    let mut stmt = conn
        .prepare(
            "SELECT id, model_config_json, created_at, total_tokens, input_tokens, output_tokens, \
             accumulated_total_tokens, accumulated_input_tokens, accumulated_output_tokens \
             FROM sessions WHERE model_config_json IS NOT NULL AND TRIM(model_config_json) != ''",
        )
        .map_err(words)?;
    let mut rows = stmt.query([]).map_err(words)?;
    while let Some(row) = rows.next().map_err(words)? {
        let Ok(Some(id)) = row.get::<_, Option<String>>(0) else {
            continue;
        };
        let config = row.get::<_, String>(1).unwrap_or_default();
        let model = match serde_json::from_str::<ModelConfig>(&config) {
            Ok(c) => c
                .model_name
                .map(|m| m.trim().to_owned())
                .filter(|m| !m.is_empty()),
            Err(e) => {
                sink.bad(
                    0,
                    format!(
                        "session {id}: model_config_json: {}",
                        crate::wire::without_position(&e)
                    ),
                );
                continue;
            }
        };
        let Some(model) = model else { continue };
        let Some(time) = row
            .get::<_, rusqlite::types::Value>(2)
            .ok()
            .as_ref()
            .and_then(created)
        else {
            continue;
        };
        // A count above 0, the session's sum before the last request's.
        let count = |sum: usize, last: usize| {
            [sum, last]
                .into_iter()
                .filter_map(|i| row.get::<_, Option<i64>>(i).ok().flatten())
                .find(|n| *n > 0)
                .map(|n| n as u64)
        };
        let input = count(7, 4).unwrap_or(0);
        let output = count(8, 5).unwrap_or(0);
        let total = count(6, 3).unwrap_or(input.saturating_add(output));
        let reasoning = total.saturating_sub(input.saturating_add(output));
        let t = Tokens {
            input,
            output: output.saturating_add(reasoning),
            reasoning,
            ..Tokens::default()
        };
        if t.is_zero() {
            continue;
        }
        (sink.add)(LineFacts {
            time: Some(time),
            // The same session in two databases (one a link to the other) counts once.
            response: Some(crate::ids::hash64(&format!("goose\0{id}"))),
            session: Some(Cow::Borrowed(&id)),
            model: Some(Cow::Borrowed(&model)),
            usage: Some(t),
            ..Default::default()
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{build_sql, home, read, responses};
    use super::super::Tokens;

    /// ccusage's Goose test (tests/usage-samples/goose, built into a database): the session's
    /// accumulated tokens, the rest of its total as reasoning, its day from `created_at`.
    #[test]
    fn reads_sessions_from_the_database() {
        let dir = build_sql(&home("goose"), "goose");
        let s = read(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let t = Tokens {
            input: 100,
            output: 80,
            reasoning: 30,
            ..Tokens::default()
        };
        assert_eq!(
            responses(&s),
            vec![(
                "session-a".into(),
                "claude-sonnet-4-20250514".into(),
                Some(1_777_597_323_000),
                t
            )]
        );
    }
}
