//! Kilo (Kilo Code's CLI, an OpenCode fork): the SQLite database
//! `~/.local/share/kilo/kilo.db` (`KILO_DATA_DIR`, a comma-separated list, replaces
//! `~/.local/share/kilo`), opened read-only as OpenCode's is ([`crate::providers::opencode_db::open`]).
//!
//! Each row of `message` (`id`, `session_id`, `data`) whose `data` is an assistant message
//! with `tokens` (`input`, `output`, `reasoning`, `cache.read`, `cache.write`), `modelID`,
//! `time.created` (milliseconds, or seconds) and `cost` is a response; a `user` message is a
//! prompt. Kilo's own cost is taken when the message has one (0 too, as ccusage takes it), else
//! the price table's. A message id read in two
//! databases counts once.

use super::reader::{n, Env, Reader, Sink};
use super::{Agent, LineFacts, Tokens};
use crate::wire::{Count, OptStr};
use serde::Deserialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::Kilo,
    places,
    keep,
    owns,
    read,
};

const DB: &str = "kilo.db";

fn places(env: &Env) -> Vec<PathBuf> {
    env.list_or_home("KILO_DATA_DIR", ".local/share/kilo")
        .into_iter()
        .map(|d| d.join(DB))
        .collect()
}

fn keep(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == DB)
}

fn owns(p: &Path) -> bool {
    keep(p)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data<'a> {
    #[serde(borrow)]
    id: OptStr<'a>,
    #[serde(borrow)]
    role: OptStr<'a>,
    #[serde(rename = "modelID", borrow)]
    model_id: OptStr<'a>,
    #[serde(rename = "session_id", borrow)]
    session_id: OptStr<'a>,
    time: Option<Time>,
    tokens: Option<Usage>,
    cost: Option<f64>,
}

#[derive(Deserialize)]
struct Time {
    created: Option<f64>,
}

#[derive(Deserialize)]
struct Usage {
    input: Option<Count>,
    output: Option<Count>,
    reasoning: Option<Count>,
    total: Option<Count>,
    cache: Option<Cache>,
}

#[derive(Deserialize)]
struct Cache {
    read: Option<Count>,
    write: Option<Count>,
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let conn = crate::providers::opencode_db::open(path)?;
    let words = |e: rusqlite::Error| crate::store::ingest::db_words(&e);
    let mut stmt = conn
        .prepare("SELECT id, session_id, data FROM message")
        .map_err(words)?;
    let mut rows = stmt.query([]).map_err(words)?;
    while let Some(row) = rows.next().map_err(words)? {
        let get = |i| row.get::<_, Option<String>>(i).ok().flatten();
        let (Some(row_id), Some(data)) = (get(0), get(2)) else {
            continue;
        };
        let d: Data = match serde_json::from_str(&data) {
            Ok(d) => d,
            Err(e) => {
                sink.bad(
                    0,
                    format!("message {row_id}: {}", crate::wire::without_position(&e)),
                );
                continue;
            }
        };
        let session = d
            .session_id
            .as_deref()
            .map(str::to_owned)
            .or_else(|| get(1));
        let time = d
            .time
            .as_ref()
            .and_then(|t| t.created)
            .filter(|t| t.is_finite() && *t > 0.0)
            .map(|t| if t < 1e12 { t * 1000.0 } else { t } as i64);
        let mut f = LineFacts {
            time,
            session: session.map(Cow::Owned),
            ..Default::default()
        };
        match d.role.as_deref() {
            Some("user") => f.turn = true,
            Some("assistant") => {
                let (Some(u), Some(model), Some(_)) = (&d.tokens, d.model_id.as_deref(), time)
                else {
                    continue;
                };
                let reasoning = n(u.reasoning);
                let mut t = Tokens {
                    input: n(u.input),
                    output: n(u.output),
                    cache_read: n(u.cache.as_ref().and_then(|c| c.read)),
                    cache_creation: n(u.cache.as_ref().and_then(|c| c.write)),
                    ..Default::default()
                };
                // ccusage counts reasoning apart from output, and a total beyond the parts
                // as output only when there is none.
                let known = t.total().saturating_add(reasoning);
                if t.output == 0 {
                    t.output = n(u.total).saturating_sub(known);
                }
                t.output = t.output.saturating_add(reasoning);
                t.reasoning = reasoning;
                if t.is_zero() {
                    continue;
                }
                f.usage = Some(t);
                f.model = Some(Cow::Owned(model.trim().to_owned()));
                f.cost_usd = d.cost;
                let id =
                    d.id.as_deref()
                        .map_or_else(|| format!("{}:{row_id}", path.display()), str::to_owned);
                f.response = Some(crate::ids::hash64(&id));
            }
            _ => continue,
        }
        (sink.add)(f);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{build_sql, home, read, responses, tokens};

    /// ccusage's Kilo tests (tests/usage-samples/kilo, built into a database): Kilo's cost
    /// kept, reasoning in output, a total alone as output, a message without a time skipped.
    #[test]
    fn reads_messages_from_the_database() {
        let dir = build_sql(&home("kilo"), "kilo");
        let s = read(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let mut sonnet = tokens(100, 55, 10, 20);
        sonnet.reasoning = 5;
        let got: Vec<_> = responses(&s)
            .into_iter()
            .map(|(session, model, _, t)| (session, model, t))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "session-a".into(),
                    "claude-sonnet-4-20250514".into(),
                    sonnet
                ),
                ("session-b".into(), "gpt-5".into(), tokens(0, 234, 0, 0)),
                ("session-b".into(), "gpt-5".into(), tokens(10, 1, 0, 0)),
            ]
        );
        assert!(s.entries.iter().any(|e| e.cost_usd == Some(0.02)));
    }
}
