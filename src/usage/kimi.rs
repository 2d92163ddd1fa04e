//! Kimi Code CLI (Moonshot): one wire file per session,
//! `~/.kimi/sessions/<group>/<session>/wire.jsonl` (`KIMI_DATA_DIR`, a comma-separated list,
//! replaces `~/.kimi`).
//!
//! A response is a line `{"timestamp":<seconds>,"message":{"type":"StatusUpdate","payload":
//! {"token_usage":{"input_other","output","input_cache_read","input_cache_creation","total"},
//! "message_id"}}}`; a prompt is a `TurnBegin` line. The wire file does not name the model:
//! it is `model` in `~/.kimi/config.json`, else `kimi-for-coding`, as ccusage takes it. A line
//! without a time takes the file's modification time. The session is the wire file's folder.

use super::reader::{each_line, millis, modified_millis, n, total_fallback, Env, Reader, Sink};
use super::{Agent, LineFacts, Tokens};
use crate::wire::{Count, OptStr};
use serde::Deserialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::Kimi,
    places,
    keep,
    owns,
    read,
};

/// The model when `config.json` names none.
const DEFAULT_MODEL: &str = "kimi-for-coding";

fn places(env: &Env) -> Vec<PathBuf> {
    env.list_or_home("KIMI_DATA_DIR", ".kimi")
        .into_iter()
        .map(|d| d.join("sessions"))
        .collect()
}

/// `sessions/<group>/<session>/wire.jsonl`.
fn keep(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "wire.jsonl")
        && p.ancestors()
            .nth(3)
            .and_then(Path::file_name)
            .is_some_and(|n| n == "sessions")
}

fn owns(p: &Path) -> bool {
    keep(p)
}

#[derive(Deserialize)]
struct Line<'a> {
    timestamp: Option<serde_json::Value>,
    #[serde(borrow)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(rename = "type", borrow)]
    kind: OptStr<'a>,
    #[serde(borrow)]
    payload: Option<Payload<'a>>,
}

#[derive(Deserialize)]
struct Payload<'a> {
    token_usage: Option<Usage>,
    #[serde(borrow)]
    message_id: OptStr<'a>,
}

#[derive(Deserialize)]
struct Usage {
    input_other: Option<Count>,
    output: Option<Count>,
    input_cache_read: Option<Count>,
    input_cache_creation: Option<Count>,
    total: Option<Count>,
}

#[derive(Deserialize)]
struct Config {
    model: Option<String>,
}

/// `model` in `config.json` of the Kimi folder that holds `sessions/`: read once per folder
/// and thread (a home has one, and thousands of sessions).
fn model_of(wire: &Path) -> String {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(PathBuf, String)>> =
            const { std::cell::RefCell::new(None) };
    }
    let root = wire.ancestors().nth(4);
    let read = |root: Option<&Path>| {
        root.and_then(|root| std::fs::read_to_string(root.join("config.json")).ok())
            .and_then(|text| serde_json::from_str::<Config>(&text).ok())
            .and_then(|c| c.model)
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned())
    };
    let Some(root) = root else {
        return read(None);
    };
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((r, model)) if r == root => model.clone(),
            _ => {
                let model = read(Some(root));
                *last = Some((root.to_path_buf(), model.clone()));
                model
            }
        }
    })
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let model = model_of(path);
    let session = path
        .parent()
        .and_then(Path::file_name)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The file's time, for the lines without one: looked up when one needs it.
    let mut modified = None;
    each_line(path, sink, &mut |no, line, sink| {
        let turn = line.contains(r#""TurnBegin""#);
        if !turn && !line.contains(r#""token_usage""#) {
            return;
        }
        let l: Line = match serde_json::from_str(line) {
            Ok(l) => l,
            Err(e) => {
                sink.bad(no, crate::wire::without_position(&e));
                return;
            }
        };
        let Some(m) = l.message else { return };
        let time = l
            .timestamp
            .as_ref()
            .and_then(millis)
            .or_else(|| *modified.get_or_insert_with(|| modified_millis(path)));
        let mut f = LineFacts {
            time,
            session: Some(Cow::Borrowed(&session)),
            ..Default::default()
        };
        match (m.kind.as_deref(), m.payload) {
            (Some("TurnBegin"), _) => f.turn = true,
            (Some("StatusUpdate"), Some(p)) => {
                let Some(u) = p.token_usage else { return };
                let mut t = Tokens {
                    input: n(u.input_other),
                    output: n(u.output),
                    cache_read: n(u.input_cache_read),
                    cache_creation: n(u.input_cache_creation),
                    ..Default::default()
                };
                total_fallback(&mut t, n(u.total));
                if t.is_zero() {
                    return;
                }
                // The same update written again counts once (ccusage's key).
                f.response = Some(crate::ids::hash64(&format!(
                    "{session}\0{:?}\0{time:?}\0{model}\0{t:?}",
                    p.message_id.as_deref()
                )));
                f.usage = Some(t);
                f.model = Some(Cow::Borrowed(&model));
            }
            _ => return,
        }
        (sink.add)(f);
    })
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{home, read, responses, tokens};

    /// ccusage's Kimi tests (tests/usage-samples/kimi): the model from `config.json`, the
    /// session from the folder, the time in seconds; a total alone is output; a line that is
    /// not JSON and a response without tokens are skipped.
    #[test]
    fn reads_status_updates() {
        let s = read(&home("kimi"));
        assert_eq!(
            responses(&s),
            vec![
                (
                    "session-a".into(),
                    "kimi-k2".into(),
                    Some(1_770_983_427_123),
                    tokens(100, 50, 10, 20)
                ),
                (
                    "session-c".into(),
                    "kimi-k2".into(),
                    Some(1_770_983_427_123),
                    tokens(0, 432, 0, 0)
                ),
            ]
        );
        assert_eq!(s.entries.iter().filter(|e| e.turn).count(), 1);
    }
}
