//! Amp (Sourcegraph): one JSON file per thread, `~/.local/share/amp/threads/T-<uuid>.json`
//! (`AMP_DATA_DIR`, a comma-separated list, replaces `~/.local/share/amp`).
//!
//! A thread's tokens are in its usage ledger (`usageLedger.events[]`: `timestamp`, `model`,
//! `tokens.input`, `tokens.output`, `tokens.total`, `toMessageId`), whose cache reads and writes
//! are on the assistant message it points to; a thread without a ledger (newer Amp) has them on
//! each assistant message (`messages[].usage`: `model`, `timestamp`, `inputTokens`,
//! `outputTokens`, `cacheCreationInputTokens`, `cacheReadInputTokens`, `totalTokens`). A total
//! without its parts counts as output, as ccusage counts it. Amp's `credits` are not dollars
//! and are not read: cost comes from the price table. The project is not in the file.

use super::reader::{millis, n, total_fallback, Env, Reader, Sink};
use super::{Agent, LineFacts, Tokens};
use crate::wire::Count;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::Amp,
    places,
    keep: owns,
    owns,
    read,
};

fn places(env: &Env) -> Vec<PathBuf> {
    env.list_or_home("AMP_DATA_DIR", ".local/share/amp")
        .into_iter()
        .map(|d| d.join("threads"))
        .collect()
}

/// A thread file: `threads/<name>.json`.
fn owns(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "json")
        && p.parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "threads")
}

#[derive(Deserialize)]
struct Thread<'a> {
    id: Option<String>,
    #[serde(borrow)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(rename = "usageLedger")]
    ledger: Option<Ledger<'a>>,
}

#[derive(Deserialize)]
struct Ledger<'a> {
    #[serde(borrow)]
    events: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    role: Option<String>,
    message_id: Option<Value>,
    usage: Option<Usage>,
    timestamp: Option<Value>,
    model: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Usage {
    model: Option<String>,
    timestamp: Option<Value>,
    input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    cache_creation_input_tokens: Option<Count>,
    cache_read_input_tokens: Option<Count>,
    total_tokens: Option<Count>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    timestamp: Option<Value>,
    model: Option<String>,
    tokens: Option<EventTokens>,
    to_message_id: Option<Value>,
}

#[derive(Deserialize)]
struct EventTokens {
    input: Option<Count>,
    output: Option<Count>,
    total: Option<Count>,
}

fn nonempty(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let whole = super::reader::Whole::read(path)?;
    let text = whole.text()?;
    let thread: Thread = match serde_json::from_str(&text) {
        Ok(t) => t,
        Err(e) => {
            sink.bad(e.line(), crate::wire::without_position(&e));
            return Ok(());
        }
    };
    let Some(id) = nonempty(thread.id.as_deref()) else {
        sink.bad(0, "a thread without an `id`");
        return Ok(());
    };
    let session = || Some(Cow::Owned(id.to_owned()));
    let mut messages = Vec::new();
    for raw in thread.messages.iter().flatten() {
        match serde_json::from_str::<Message>(raw.get()) {
            Ok(m) => messages.push(m),
            Err(e) => sink.bad(
                0,
                format!("a message: {}", crate::wire::without_position(&e)),
            ),
        }
    }
    // A prompt starts a turn.
    for m in messages
        .iter()
        .filter(|m| m.role.as_deref() == Some("user"))
    {
        (sink.add)(LineFacts {
            time: m.timestamp.as_ref().and_then(millis),
            session: session(),
            turn: true,
            ..Default::default()
        });
    }
    if let Some(events) = thread.ledger.and_then(|l| l.events) {
        // Cache reads and writes, by the assistant message the event points to.
        let cache: HashMap<i64, (u64, u64)> = messages
            .iter()
            .filter(|m| m.role.as_deref() == Some("assistant"))
            .filter_map(|m| {
                let u = m.usage.as_ref();
                Some((
                    m.message_id.as_ref()?.as_i64()?,
                    (
                        n(u.and_then(|u| u.cache_creation_input_tokens)),
                        n(u.and_then(|u| u.cache_read_input_tokens)),
                    ),
                ))
            })
            .collect();
        for raw in events {
            let ev: Event = match serde_json::from_str(raw.get()) {
                Ok(ev) => ev,
                Err(e) => {
                    sink.bad(
                        0,
                        format!("a ledger event: {}", crate::wire::without_position(&e)),
                    );
                    continue;
                }
            };
            let (Some(time), Some(model), Some(tok)) = (
                ev.timestamp.as_ref().and_then(millis),
                nonempty(ev.model.as_deref()),
                ev.tokens.as_ref(),
            ) else {
                continue;
            };
            let (write, read) = ev
                .to_message_id
                .as_ref()
                .and_then(Value::as_i64)
                .and_then(|id| cache.get(&id).copied())
                .unwrap_or_default();
            let mut t = Tokens {
                input: n(tok.input),
                output: n(tok.output),
                cache_read: read,
                cache_creation: write,
                ..Default::default()
            };
            total_fallback(&mut t, n(tok.total));
            give(sink, time, model, t, session());
        }
        return Ok(());
    }
    for m in messages
        .iter()
        .filter(|m| m.role.as_deref() == Some("assistant"))
    {
        let Some(u) = &m.usage else { continue };
        let time = u
            .timestamp
            .as_ref()
            .or(m.timestamp.as_ref())
            .and_then(millis);
        let model = nonempty(u.model.as_deref()).or(nonempty(m.model.as_deref()));
        let (Some(time), Some(model)) = (time, model) else {
            continue;
        };
        let mut t = Tokens {
            input: n(u.input_tokens),
            output: n(u.output_tokens),
            cache_read: n(u.cache_read_input_tokens),
            cache_creation: n(u.cache_creation_input_tokens),
            ..Default::default()
        };
        total_fallback(&mut t, n(u.total_tokens));
        give(sink, time, model, t, session());
    }
    Ok(())
}

/// One response, unless it has no tokens.
fn give(sink: &mut Sink<'_>, time: i64, model: &str, t: Tokens, session: Option<Cow<'_, str>>) {
    if t.is_zero() {
        return;
    }
    (sink.add)(LineFacts {
        time: Some(time),
        session,
        model: Some(Cow::Borrowed(model)),
        usage: Some(t),
        ..Default::default()
    });
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{home, read, responses, tokens};

    /// ccusage's Amp tests, as threads (tests/usage-samples/amp): a ledger's events with the
    /// cache tokens of their messages, before the messages' own usage; a total alone is output;
    /// a response without tokens is none.
    #[test]
    fn reads_ledgers_messages_and_totals() {
        let s = read(&home("amp"));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let got: Vec<_> = responses(&s)
            .into_iter()
            .map(|(session, model, _, t)| (session, model, t))
            .collect();
        let haiku = "claude-haiku-4-5-20251001".to_owned();
        assert_eq!(
            got,
            vec![
                ("T-thread-b".into(), "gpt-5".into(), tokens(1, 2, 0, 0)),
                ("T-thread-c".into(), "gpt-5".into(), tokens(0, 345, 0, 0)),
                (
                    "T-thread-a".into(),
                    haiku.clone(),
                    tokens(10, 178, 11372, 986)
                ),
                ("T-thread-e".into(), haiku.clone(), tokens(0, 345, 0, 0)),
                ("T-thread-a".into(), haiku, tokens(5, 42, 12000, 0)),
            ]
        );
        // The one prompt (T-thread-a's).
        assert_eq!(s.entries.iter().filter(|e| e.turn).count(), 1);
    }

    #[test]
    fn a_broken_thread_is_a_note() {
        let dir = std::env::temp_dir().join(format!("insights-amp-{}", std::process::id()));
        let threads = dir.join(".local/share/amp/threads");
        std::fs::create_dir_all(&threads).unwrap();
        std::fs::write(threads.join("T-x.json"), "{\"id\":\"T-x\",\n\"messages\":[").unwrap();
        let s = read(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(s.entries.is_empty());
        assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
        assert!(s.errors[0].contains("T-x.json:2:"), "{}", s.errors[0]);
    }
}
