//! pi (pi-agent): JSON Lines session files, `~/.pi/agent/sessions/<project>/<time>_<session>.jsonl`
//! (`PI_AGENT_DIR`, a comma-separated list, replaces `~/.pi/agent/sessions`).
//!
//! A response is a line `{"type":"message","timestamp",…,"message":{"role":"assistant","model",
//! "usage":{"input","output","cacheRead","cacheWrite","totalTokens","cost":{"total"}}}}`; a
//! prompt is such a line whose role is `user`. The session is the file name after its first
//! `_`, the project the folder below `sessions`. pi's own cost (`usage.cost.total`) is taken as
//! it is. ccusage names the models `[pi] <model>`; here they keep their own names.

use super::reader::{each_line, millis, n, total_fallback, Env, Reader, Sink};
use super::{Agent, LineFacts, Tokens};
use crate::wire::{Count, OptStr};
use serde::Deserialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::Pi,
    places,
    keep,
    owns,
    read,
};

fn places(env: &Env) -> Vec<PathBuf> {
    env.list_or_home("PI_AGENT_DIR", ".pi/agent/sessions")
}

fn keep(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "jsonl")
}

fn owns(p: &Path) -> bool {
    keep(p) && p.to_string_lossy().contains("/.pi/agent/sessions/")
}

/// A line of a pi session file; OpenClaw, built on pi, writes the same (`openclaw.rs`).
#[derive(Deserialize)]
pub(super) struct Line<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: OptStr<'a>,
    pub timestamp: Option<serde_json::Value>,
    #[serde(borrow)]
    pub message: Option<Message<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Message<'a> {
    #[serde(borrow)]
    pub role: OptStr<'a>,
    #[serde(borrow)]
    pub model: OptStr<'a>,
    /// OpenClaw's name of the model (before `model`).
    #[serde(borrow)]
    pub model_id: OptStr<'a>,
    /// OpenClaw's time of the message (before the line's).
    pub timestamp: Option<serde_json::Value>,
    pub usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Usage {
    input: Option<Count>,
    output: Option<Count>,
    cache_read: Option<Count>,
    cache_write: Option<Count>,
    total_tokens: Option<Count>,
    cost: Option<Cost>,
}

#[derive(Deserialize)]
struct Cost {
    total: Option<f64>,
}

impl Usage {
    /// The tokens, a total without its parts as output (ccusage's rule).
    pub fn tokens(&self) -> Tokens {
        let mut t = Tokens {
            input: n(self.input),
            output: n(self.output),
            cache_read: n(self.cache_read),
            cache_creation: n(self.cache_write),
            ..Default::default()
        };
        total_fallback(&mut t, n(self.total_tokens));
        t
    }

    /// The agent's own cost of the response (`cost.total`).
    pub fn cost(&self) -> Option<f64> {
        self.cost.as_ref().and_then(|c| c.total)
    }
}

/// The key of a response written twice (ccusage's: its session, time, model, tokens and cost).
pub(super) fn response_key(f: &LineFacts<'_>, session: &str) -> u64 {
    crate::ids::hash64(&format!(
        "{session}\0{:?}\0{:?}\0{:?}\0{:?}",
        f.time, f.model, f.usage, f.cost_usd
    ))
}

/// The session id: the file name after its first `_` (`<time>_<session>.jsonl`).
fn session_of(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match stem.split_once('_') {
        Some((_, s)) => s.to_owned(),
        None => stem,
    }
}

/// The project: the folder right below a `sessions` folder.
fn project_of(path: &Path) -> Option<String> {
    let mut after = false;
    for c in path.components() {
        let s = c.as_os_str().to_string_lossy();
        if after {
            return Some(s.into_owned());
        }
        after = s == "sessions";
    }
    None
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let session = session_of(path);
    let project = project_of(path);
    each_line(path, sink, &mut |no, line, sink| {
        if !line.contains(r#""message""#) {
            return;
        }
        let l: Line = match serde_json::from_str(line) {
            Ok(l) => l,
            Err(e) => {
                sink.bad(no, crate::wire::without_position(&e));
                return;
            }
        };
        if l.kind.as_deref().is_some_and(|k| k != "message") {
            return;
        }
        let Some(m) = l.message else { return };
        let Some(time) = l.timestamp.as_ref().and_then(millis) else {
            return;
        };
        let mut f = LineFacts {
            time: Some(time),
            session: Some(Cow::Borrowed(&session)),
            cwd: project.as_deref().map(Cow::Borrowed),
            ..Default::default()
        };
        match (m.role.as_deref(), m.usage) {
            (Some("user"), _) => f.turn = true,
            (Some("assistant"), Some(u)) => {
                let t = u.tokens();
                if t.is_zero() {
                    return;
                }
                f.usage = Some(t);
                f.model = m.model.0.map(|s| Cow::Owned(s.trim().to_owned()));
                f.cost_usd = u.cost();
                f.response = Some(response_key(&f, &session));
            }
            _ => return,
        }
        (sink.add)(f);
    })
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{home, read, responses, tokens};

    /// ccusage's pi tests (tests/usage-samples/pi): a total alone is output; pi's own cost
    /// is kept; the session is the file name after `_`, the project the folder.
    #[test]
    fn reads_responses_with_their_cost() {
        let s = read(&home("pi"));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let got: Vec<_> = responses(&s)
            .into_iter()
            .map(|(session, model, _, t)| (session, model, t))
            .collect();
        assert_eq!(
            got,
            vec![
                ("session-a".into(), "gpt-5".into(), tokens(0, 333, 0, 0)),
                (
                    "session-a".into(),
                    "unknown-model-xyz".into(),
                    tokens(100, 200, 0, 0)
                ),
                (
                    "session-b".into(),
                    "unknown-model-xyz".into(),
                    tokens(100, 200, 0, 0)
                ),
            ]
        );
        let costs: Vec<_> = s.entries.iter().map(|e| e.cost_usd).collect();
        assert!(costs.contains(&Some(0.05)));
        assert!(s.entries.iter().all(|e| s.str(e.project) == "project-a"));
    }
}
