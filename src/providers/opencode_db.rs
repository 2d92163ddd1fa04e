//! OpenCode's own database: `~/.local/share/opencode/opencode.db` (OpenCode 1.18; SQLite, WAL),
//! where every session, message and part is a row (`testdata/session-files/opencode/`).
//!
//! It is opened read-only (`SQLITE_OPEN_READ_ONLY`): insights never writes to an agent's
//! database, and reads it while the agent has it open (WAL readers do not block the writer).
//! A copy without its `-shm` file in a folder it cannot write to is opened as immutable.
//!
//! | table | what is read |
//! |---|---|
//! | `session` | `id`, `parent_id` (a subagent's session), `directory`, `version`, `title`, `time_created` |
//! | `message` | `data`: `role`; a user message's `time`; an assistant message's `modelID`, `providerID`, `tokens` (`input` without cache reads and writes, `output` without `reasoning`, `cache.read`, `cache.write`), `cost`, `error`, `finish`, `path.cwd` |
//! | `part` | `data`: the parts `opencode run --format json` prints (`step-start`, `text`, `reasoning`, `tool`, `step-finish`), and the prompt's `text` parts |
//!
//! [`facts`] gives `usage` and `sessions` each assistant message's tokens (once per message:
//! its step-finish parts say the same again) and each prompt; [`lines`] gives the converter
//! the database as lines of `run --format json`'s shape, which the `opencode` provider maps.

use crate::wire::{Count, OptStr};
use rusqlite::{Connection, OpenFlags};
use serde::Deserialize;
use std::borrow::Cow;
use std::path::Path;

/// Opens the database read-only; a copy that cannot be opened so (a WAL database without its
/// `-shm` file, in a folder it may not create one in) is opened as immutable.
pub fn open(path: &Path) -> Result<Connection, String> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let probe =
        |c: &Connection| c.query_row("SELECT count(*) FROM message", [], |r| r.get::<_, i64>(0));
    let first = Connection::open_with_flags(path, flags).and_then(|c| probe(&c).map(|_| c));
    match first {
        Ok(c) => Ok(c),
        Err(e) => {
            let uri = format!("file:{}?immutable=1", path.display());
            Connection::open_with_flags(&uri, flags | OpenFlags::SQLITE_OPEN_URI)
                .and_then(|c| probe(&c).map(|_| c))
                .map_err(|_| crate::store::ingest::db_words(&e))
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageData<'a> {
    #[serde(borrow)]
    role: OptStr<'a>,
    #[serde(rename = "modelID", borrow)]
    model_id: OptStr<'a>,
    tokens: Option<Tokens>,
    cost: Option<f64>,
}

#[derive(Deserialize)]
struct Tokens {
    input: Option<Count>,
    output: Option<Count>,
    reasoning: Option<Count>,
    cache: Option<Cache>,
}

#[derive(Deserialize)]
struct Cache {
    read: Option<Count>,
    write: Option<Count>,
}

impl Tokens {
    /// By `usage`'s kinds: output with the reasoning in it.
    fn tokens(&self) -> crate::usage::Tokens {
        let n = |c: Option<Count>| c.map_or(0, |c| c.0);
        let reasoning = n(self.reasoning);
        crate::usage::Tokens {
            input: n(self.input),
            output: n(self.output).saturating_add(reasoning),
            cache_read: n(self.cache.as_ref().and_then(|c| c.read)),
            cache_creation: n(self.cache.as_ref().and_then(|c| c.write)),
            reasoning,
            ..Default::default()
        }
    }
}

/// Each assistant message's tokens and cost (OpenCode's own figure, when not 0), and each
/// prompt (a subagent's child session has its task's), in time order.
pub fn facts(path: &Path, add: &mut dyn FnMut(crate::usage::LineFacts<'_>)) -> Result<(), String> {
    let conn = open(path)?;
    let mut stmt = conn
        .prepare(
            "SELECT m.id, m.session_id, m.time_created, m.data, s.directory \
             FROM message m LEFT JOIN session s ON s.id = m.session_id \
             ORDER BY m.time_created, m.id",
        )
        .map_err(|e| crate::store::ingest::db_words(&e))?;
    let mut rows = stmt
        .query([])
        .map_err(|e| crate::store::ingest::db_words(&e))?;
    while let Some(row) = rows
        .next()
        .map_err(|e| crate::store::ingest::db_words(&e))?
    {
        let get = |i| row.get::<_, Option<String>>(i).ok().flatten();
        let (Some(id), Some(data)) = (get(0), get(3)) else {
            continue;
        };
        let session = get(1);
        let time = row.get::<_, Option<i64>>(2).ok().flatten();
        let Ok(m) = serde_json::from_str::<MessageData>(&data) else {
            continue;
        };
        let mut f = crate::usage::LineFacts {
            time,
            session: session.clone().map(Cow::Owned),
            cwd: get(4).map(Cow::Owned),
            ..Default::default()
        };
        match m.role.as_deref() {
            Some("assistant") => {
                let Some(t) = m
                    .tokens
                    .as_ref()
                    .map(Tokens::tokens)
                    .filter(|t| !t.is_zero())
                else {
                    continue;
                };
                f.usage = Some(t);
                f.model = m.model_id.0.map(|m| Cow::Owned(m.into_owned()));
                f.cost_usd = m.cost.filter(|c| *c > 0.0);
                f.response = Some(crate::ids::hash64(&id));
            }
            // A prompt starts a turn, in a subagent's child session too (its task's prompt).
            Some("user") => f.turn = true,
            _ => continue,
        }
        add(f);
    }
    Ok(())
}

/// The database as lines of `opencode run --format json`'s shape, each session in turn (in
/// the order they were created), for the `opencode` provider to map. Every line names its row
/// (the session, the message, the part), which its events' ids are made of: read again with
/// more rows, the database gives the same events the same ids (`insights store` keeps each
/// once):
/// - a `session` line per session: `{"type":"session","timestamp","sessionID","session":{"parentID","directory","title","version"}}`;
/// - per user message, a `prompt` line with the text of its `text` parts (`"synthetic": true`
///   when OpenCode wrote them all);
/// - per assistant message, its parts as `run` prints them (`step_start`, `text`,
///   `reasoning`, `tool_use`, `step_finish`, with `modelID` from the message on
///   `step_finish`), and an `error` line (with its `messageID`) when the message ended in an
///   error. Parts of other
///   types (`patch`, `file`, `snapshot`, `compaction`, …) are left out.
pub fn lines(path: &Path) -> Result<Vec<u8>, String> {
    let conn = open(path)?;
    let words = |e: rusqlite::Error| crate::store::ingest::db_words(&e);
    let mut out = Vec::new();
    let mut sessions = conn
        .prepare(
            "SELECT id, parent_id, directory, title, version, time_created FROM session \
             ORDER BY time_created, id",
        )
        .map_err(words)?;
    let sessions: Vec<(String, serde_json::Value, i64)> = sessions
        .query_map([], |r| {
            let id: String = r.get(0)?;
            let s = serde_json::json!({
                "parentID": r.get::<_, Option<String>>(1)?,
                "directory": r.get::<_, Option<String>>(2)?,
                "title": r.get::<_, Option<String>>(3)?,
                "version": r.get::<_, Option<String>>(4)?,
            });
            Ok((id, s, r.get::<_, i64>(5)?))
        })
        .map_err(words)?
        .collect::<Result<_, _>>()
        .map_err(words)?;
    let mut messages = conn
        .prepare("SELECT id, time_created, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")
        .map_err(words)?;
    let mut parts = conn
        .prepare("SELECT id, time_created, data FROM part WHERE message_id = ?1 ORDER BY id")
        .map_err(words)?;
    let mut push = |v: serde_json::Value| {
        // A Value always serializes.
        if serde_json::to_writer(&mut out, &v).is_ok() {
            out.push(b'\n');
        }
    };
    for (sid, session, created) in sessions {
        push(
            serde_json::json!({"type": "session", "timestamp": created, "sessionID": sid, "session": session}),
        );
        let rows: Vec<(String, i64, String)> = messages
            .query_map([&sid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(words)?
            .collect::<Result<_, _>>()
            .map_err(words)?;
        for (mid, time, data) in rows {
            let Ok(mut m) = serde_json::from_str::<serde_json::Value>(&data) else {
                continue;
            };
            let ps: Vec<(String, i64, String)> = parts
                .query_map([&mid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(words)?
                .collect::<Result<_, _>>()
                .map_err(words)?;
            let role = m["role"].as_str().unwrap_or("").to_owned();
            if role == "user" {
                let mut text = String::new();
                let mut synthetic = !ps.is_empty();
                for (_, _, d) in &ps {
                    let Ok(p) = serde_json::from_str::<serde_json::Value>(d) else {
                        continue;
                    };
                    if p["type"] == "text" {
                        text.push_str(p["text"].as_str().unwrap_or(""));
                        synthetic &= p["synthetic"] == true;
                    }
                }
                push(
                    serde_json::json!({"type": "prompt", "timestamp": time, "sessionID": sid,
                    "messageID": mid, "text": text, "synthetic": synthetic}),
                );
                continue;
            }
            let model = m["modelID"].take();
            for (pid, ptime, d) in ps {
                let Ok(mut p) = serde_json::from_str::<serde_json::Value>(&d) else {
                    continue;
                };
                let ty = match p["type"].as_str() {
                    Some("step-start") => "step_start",
                    Some("text") => "text",
                    Some("reasoning") => "reasoning",
                    Some("tool") => "tool_use",
                    Some("step-finish") => "step_finish",
                    _ => continue,
                };
                if let Some(o) = p.as_object_mut() {
                    o.insert("id".into(), pid.into());
                    o.insert("messageID".into(), mid.clone().into());
                    o.insert("sessionID".into(), sid.clone().into());
                }
                let mut line = serde_json::json!({"type": ty, "timestamp": ptime, "sessionID": sid, "part": p});
                if ty == "step_finish" && !model.is_null() {
                    line["modelID"] = model.clone();
                }
                push(line);
            }
            if !m["error"].is_null() {
                let t = m["time"]["completed"].as_i64().unwrap_or(time);
                push(
                    serde_json::json!({"type": "error", "timestamp": t, "sessionID": sid, "messageID": mid, "error": m["error"].take()}),
                );
            }
        }
    }
    Ok(out)
}

/// Whether the file at `path` is an SQLite database (its 16-byte header).
pub fn is_database(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| &head == b"SQLite format 3\0")
}
