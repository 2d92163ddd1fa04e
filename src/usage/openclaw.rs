//! OpenClaw (formerly Clawdbot, Moltbot): JSON Lines session files below `~/.openclaw`
//! (also `~/.clawdbot`, `~/.moltbot`, `~/.moldbot`; `OPENCLAW_DIR`, a comma-separated list,
//! replaces them), such as `agents/<agent>/sessions/<session>.jsonl`, and their archived copies
//! (`<session>.jsonl.deleted.<time>`, `<session>.jsonl.reset.<time>`).
//!
//! OpenClaw is built on pi and writes pi's lines ([`super::pi::Line`]): a response is a
//! `message` line with an assistant `message.usage`; its model is the message's `modelId` or
//! `model`, else the last `model_change` line's (or a `custom` line of `customType`
//! `model-snapshot`, whose `data` may hold it); its time the message's `timestamp`
//! (milliseconds or RFC 3339), else the line's, else the file's modification time. The session
//! is the file name before `.jsonl`. OpenClaw's own cost (`usage.cost.total`) is taken as it
//! is. ccusage names the models `[openclaw] <model>`; here they keep their own names.

use super::pi::{response_key, Line};
use super::reader::{each_line, millis, modified_millis, Env, Reader, Sink};
use super::{Agent, LineFacts, Marks};
use crate::wire::OptStr;
use serde::Deserialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::OpenClaw,
    places,
    keep,
    owns,
    read,
};

const HOMES: [&str; 4] = [".openclaw", ".clawdbot", ".moltbot", ".moldbot"];

fn places(env: &Env) -> Vec<PathBuf> {
    if env.var("OPENCLAW_DIR").is_some() {
        return env.list_or_home("OPENCLAW_DIR", "");
    }
    HOMES
        .iter()
        .filter_map(|d| env.home.as_ref().map(|h| h.join(d)))
        .collect()
}

/// `<session>.jsonl`, `<session>.jsonl.deleted.<time>` or `<session>.jsonl.reset.<time>`.
fn keep(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name.find(".jsonl").is_some_and(|i| {
        let rest = &name[i..];
        rest == ".jsonl" || rest.starts_with(".jsonl.deleted.") || rest.starts_with(".jsonl.reset.")
    })
}

fn owns(p: &Path) -> bool {
    let s = p.to_string_lossy();
    keep(p) && HOMES.iter().any(|h| s.contains(&format!("/{h}/")))
}

/// A `model_change` line, or a `model-snapshot` one (its `data`, else itself).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelChange<'a> {
    #[serde(rename = "type", borrow)]
    kind: OptStr<'a>,
    #[serde(borrow)]
    custom_type: OptStr<'a>,
    #[serde(borrow)]
    model_id: OptStr<'a>,
    #[serde(borrow)]
    model: OptStr<'a>,
    #[serde(borrow)]
    data: Option<Box<ModelChange<'a>>>,
}

impl ModelChange<'_> {
    fn is_change(&self) -> bool {
        self.kind.as_deref() == Some("model_change")
            || (self.kind.as_deref() == Some("custom")
                && self.custom_type.as_deref() == Some("model-snapshot"))
    }

    fn model(&self) -> Option<String> {
        let m = self.model_id.as_deref().or(self.model.as_deref())?.trim();
        Some(m.to_owned()).filter(|m| !m.is_empty())
    }
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let session = match name.find(".jsonl") {
        Some(i) if i > 0 => name[..i].to_owned(),
        _ => name.clone(),
    };
    // The file's time, asked for only when a record has none.
    let mut modified = None;
    let mut current: Option<String> = None;
    static CHANGE: Marks = Marks::new(&[r#""model_change""#, r#""model-snapshot""#]);
    static USAGE: Marks = Marks::new(&[r#""usage""#]);
    each_line(path, sink, &mut |no, line, sink| {
        let change = CHANGE.any_in(line.as_bytes());
        if !change && !USAGE.any_in(line.as_bytes()) {
            return;
        }
        if change {
            match serde_json::from_str::<ModelChange>(line) {
                Ok(c) if c.is_change() => {
                    let m = c.data.as_deref().map_or_else(|| c.model(), |d| d.model());
                    if m.is_some() {
                        current = m;
                    }
                    return;
                }
                Ok(_) => {}
                Err(e) => {
                    sink.bad(no, crate::wire::without_position(&e));
                    return;
                }
            }
        }
        let l: Line = match serde_json::from_str(line) {
            Ok(l) => l,
            Err(e) => {
                sink.bad(no, crate::wire::without_position(&e));
                return;
            }
        };
        if l.kind.as_deref() != Some("message") {
            return;
        }
        let Some(m) = l.message else { return };
        let (Some("assistant"), Some(u)) = (m.role.as_deref(), &m.usage) else {
            return;
        };
        let t = u.tokens();
        if t.is_zero() {
            return;
        }
        let model = m
            .model_id
            .as_deref()
            .or(m.model.as_deref())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .or_else(|| current.clone())
            .unwrap_or_else(|| "unknown".to_owned());
        let time = m
            .timestamp
            .as_ref()
            .or(l.timestamp.as_ref())
            .and_then(millis)
            .or_else(|| *modified.get_or_insert_with(|| modified_millis(path)));
        let mut f = LineFacts {
            time,
            session: Some(Cow::Borrowed(&session)),
            model: Some(Cow::Owned(model)),
            usage: Some(t),
            cost_usd: u.cost(),
            ..Default::default()
        };
        f.response = Some(response_key(&f, &session));
        (sink.add)(f);
    })
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{by_session, home, read, tokens};

    /// ccusage's OpenClaw tests (tests/usage-samples/openclaw): the model from a
    /// `model_change` line, a record written twice counted once, OpenClaw's cost kept, a total
    /// alone as output.
    #[test]
    fn reads_session_files() {
        let s = read(&home("openclaw"));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let got = by_session(&s);
        assert_eq!(
            got,
            vec![
                ("abc".into(), "gpt-5.2".into(), tokens(1660, 55, 108_928, 0)),
                ("def".into(), "gpt-5.2".into(), tokens(1000, 500, 0, 0)),
                ("ghi".into(), "gpt-5.2".into(), tokens(0, 222, 0, 0)),
                ("session".into(), "gpt-5.2".into(), tokens(1, 1, 0, 0)),
            ]
        );
        let costs: Vec<_> = s.entries.iter().filter_map(|e| e.cost_usd).collect();
        assert_eq!(costs, vec![0.02, 0.99]);
    }
}
