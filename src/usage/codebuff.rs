//! Codebuff (formerly Manicode): one JSON document per chat,
//! `~/.config/<channel>/projects/<project>/chats/<chat>/chat-messages.json`, where the channel
//! is `manicode`, `manicode-dev` or `manicode-staging` (`CODEBUFF_DATA_DIR`, a comma-separated
//! list of channel folders or of their `projects` folders, replaces them).
//!
//! The document is the chat's messages. A response is a message whose `variant` (else `role`)
//! is `ai`, `agent` or `assistant`, with tokens in `metadata.usage`, else
//! `metadata.codebuff.usage`, else the last assistant entries of the run state
//! (`metadata.runState.sessionState.mainAgentState.messageHistory[].providerOptions`, `usage`
//! or `codebuff.usage`), each kind of token taken from the first that has it. A usage object
//! is in Anthropic's words (`inputTokens`, `cacheReadInputTokens`, …) or in OpenAI's
//! (`prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`): OpenAI's
//! prompt counts its cached tokens, which are taken out of the input here (ccusage counts them
//! twice). A total without its parts is output. The model is `metadata.model` (or the usage's,
//! or the run state's), else `codebuff-unknown`; the time the message's `timestamp`,
//! `createdAt` or `metadata.timestamp`, else the chat folder's name
//! (`2026-01-02T03-04-05.000Z`), else the file's modification time. The session is
//! `<channel>/<project>/<chat>`, the project the folder. Codebuff's `credits` are not dollars
//! and are not read: cost comes from the price table. A `user` message is a prompt.

use super::reader::{millis, modified_millis, total_fallback, Env, Reader, Sink};
use super::{Agent, LineFacts, Tokens};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::Codebuff,
    places,
    keep,
    owns,
    read,
};

const CHANNELS: &[&str] = &["manicode", "manicode-dev", "manicode-staging"];
const FILE: &str = "chat-messages.json";

fn places(env: &Env) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = match env.var("CODEBUFF_DATA_DIR") {
        Some(_) => env.list_or_home("CODEBUFF_DATA_DIR", ""),
        None => env
            .home
            .iter()
            .flat_map(|h| CHANNELS.iter().map(move |c| h.join(".config").join(c)))
            .collect(),
    };
    let mut places: Vec<PathBuf> = Vec::new();
    for r in roots {
        let p = if r.file_name().is_some_and(|n| n == "projects") {
            r
        } else {
            r.join("projects")
        };
        if !places.contains(&p) {
            places.push(p);
        }
    }
    places
}

fn keep(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == FILE)
}

/// A chat file: `…/projects/<project>/chats/<chat>/chat-messages.json`.
fn owns(p: &Path) -> bool {
    keep(p)
        && p.parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|n| n == "chats")
}

/// The tokens, model of one usage object (or of several, merged: each kind from the first
/// that has it).
#[derive(Default)]
struct Usage {
    tokens: Tokens,
    model: Option<String>,
}

impl Usage {
    fn has_tokens(&self) -> bool {
        !self.tokens.is_zero()
    }

    fn or(&mut self, other: Usage) {
        let (t, o) = (&mut self.tokens, other.tokens);
        for (mine, theirs) in [
            (&mut t.input, o.input),
            (&mut t.output, o.output),
            (&mut t.cache_read, o.cache_read),
            (&mut t.cache_creation, o.cache_creation),
        ] {
            if *mine == 0 {
                *mine = theirs;
            }
        }
        if self.model.is_none() {
            self.model = other.model;
        }
    }
}

fn text<'v>(o: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    o.get(key)?
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn object<'v>(o: &'v Map<String, Value>, key: &str) -> Option<&'v Map<String, Value>> {
    o.get(key)?.as_object()
}

/// The first of `keys` with a count above 0.
fn pick(o: &Map<String, Value>, keys: &[&str]) -> u64 {
    keys.iter()
        .filter_map(|k| o.get(*k)?.as_u64())
        .find(|n| *n > 0)
        .unwrap_or(0)
}

/// One usage object, in Anthropic's or OpenAI's words.
fn usage_of(v: Option<&Value>) -> Usage {
    let Some(u) = v.and_then(Value::as_object) else {
        return Usage::default();
    };
    let input = pick(
        u,
        &[
            "inputTokens",
            "input_tokens",
            "promptTokens",
            "prompt_tokens",
        ],
    );
    let flat_read = pick(u, &["cacheReadInputTokens", "cache_read_input_tokens"]);
    let details_read = [
        ("promptTokensDetails", "cachedTokens"),
        ("prompt_tokens_details", "cached_tokens"),
    ]
    .iter()
    .map(|(d, k)| object(u, d).map_or(0, |d| pick(d, &[k])))
    .max()
    .unwrap_or(0);
    let mut tokens = Tokens {
        input,
        output: pick(
            u,
            &[
                "outputTokens",
                "output_tokens",
                "completionTokens",
                "completion_tokens",
            ],
        ),
        cache_read: flat_read.max(details_read),
        cache_creation: pick(
            u,
            &[
                "cacheCreationInputTokens",
                "cache_creation_input_tokens",
                "cacheCreationTokens",
                "cache_creation_tokens",
                "cachedTokensCreated",
                "cached_tokens_created",
            ],
        ),
        ..Default::default()
    };
    total_fallback(
        &mut tokens,
        pick(u, &["totalTokens", "total_tokens", "total"]),
    );
    // OpenAI's prompt counts the cached tokens its details name.
    if details_read > flat_read {
        tokens.input -= tokens.input.min(details_read);
    }
    Usage {
        tokens,
        model: text(u, "model").map(str::to_owned),
    }
}

/// The usage the run state's assistant entries give, the last first; none without any.
fn run_state_usage(metadata: &Map<String, Value>) -> Option<Usage> {
    let history = metadata
        .get("runState")?
        .get("sessionState")?
        .get("mainAgentState")?
        .get("messageHistory")?
        .as_array()?;
    let mut usage = Usage::default();
    let mut any = false;
    for entry in history.iter().rev().filter_map(Value::as_object) {
        if text(entry, "role") != Some("assistant") {
            continue;
        }
        let Some(options) = object(entry, "providerOptions") else {
            continue;
        };
        let mut u = usage_of(options.get("usage"));
        if let Some(codebuff) = object(options, "codebuff") {
            let model = text(codebuff, "model").map(str::to_owned);
            u.or(usage_of(codebuff.get("usage")));
            if model.is_some() {
                u.model = model;
            }
        }
        any |= u.has_tokens() || u.model.is_some();
        usage.or(u);
    }
    any.then_some(usage)
}

fn usage_of_message(m: &Map<String, Value>) -> Usage {
    let Some(metadata) = object(m, "metadata") else {
        return Usage::default();
    };
    let model = text(metadata, "model").map(str::to_owned);
    let mut u = usage_of(metadata.get("usage"));
    if model.is_some() {
        u.model = model;
    }
    u.or(usage_of(
        object(metadata, "codebuff").and_then(|c| c.get("usage")),
    ));
    if let Some(r) = run_state_usage(metadata) {
        u.or(r);
    }
    u
}

/// The time a chat folder's name tells: `2026-01-02T03-04-05.000Z`.
fn chat_time(chat: &str) -> Option<i64> {
    let (date, time) = chat.split_once('T')?;
    let time = time.replacen('-', ":", 2);
    crate::time::millis(&format!("{date}T{time}"))
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let text_of = std::fs::read_to_string(path).map_err(|e| crate::diag::io_words(&e))?;
    let messages: Vec<Value> = match serde_json::from_str(&text_of) {
        Ok(Value::Array(m)) => m,
        Ok(_) => {
            sink.bad(0, "not a list of messages");
            return Ok(());
        }
        Err(e) => {
            sink.bad(e.line(), crate::wire::without_position(&e));
            return Ok(());
        }
    };
    let name = |p: Option<&Path>| {
        p.and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
    };
    let chat_dir = path.parent();
    let project_dir = chat_dir.and_then(Path::parent).and_then(Path::parent);
    let chat = name(chat_dir).unwrap_or_else(|| "unknown".into());
    let project = name(project_dir).unwrap_or_else(|| "unknown".into());
    let channel = name(project_dir.and_then(Path::parent).and_then(Path::parent))
        .unwrap_or_else(|| "manicode".into());
    let session = format!("{channel}/{project}/{chat}");
    let fallback = chat_time(&chat).or_else(|| modified_millis(path));
    for (i, m) in messages.iter().enumerate() {
        let Some(m) = m.as_object() else { continue };
        let time = ["timestamp", "createdAt"]
            .iter()
            .find_map(|k| m.get(*k).and_then(millis))
            .or_else(|| object(m, "metadata")?.get("timestamp").and_then(millis))
            .or(fallback);
        let role = text(m, "variant").or_else(|| text(m, "role"));
        let mut f = LineFacts {
            time,
            session: Some(Cow::Borrowed(&session)),
            cwd: Some(Cow::Borrowed(&project)),
            ..Default::default()
        };
        match role {
            Some("user") => f.turn = true,
            Some("ai" | "agent" | "assistant") => {
                let u = usage_of_message(m);
                if !u.has_tokens() {
                    continue;
                }
                let model = u.model.unwrap_or_else(|| "codebuff-unknown".into());
                // One message written in two files (a chat under two data folders) counts once.
                let id = match text(m, "id") {
                    Some(id) => format!("codebuff\0{session}\0{id}"),
                    None => format!("codebuff\0{session}\0{time:?}\0{model}\0{i}"),
                };
                f.response = Some(crate::ids::hash64(&id));
                f.usage = Some(u.tokens);
                f.model = Some(Cow::Owned(model));
            }
            _ => continue,
        }
        (sink.add)(f);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{home, read, responses, tokens};

    /// ccusage's Codebuff tests (tests/usage-samples/codebuff): a message's own usage; the
    /// run state's usage in OpenAI's words, its cached tokens taken out of the prompt; a total
    /// alone is output, under `codebuff-unknown`; the chat folder's name is the time of a
    /// message without one; the user's message is a prompt.
    #[test]
    fn reads_chats_in_each_channel() {
        let s = read(&home("codebuff"));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let got = responses(&s);
        let at = |t: &str| crate::time::millis(t);
        assert_eq!(
            got,
            vec![
                (
                    "manicode-dev/project-a/2026-01-02T03-04-05.000Z".into(),
                    "openai/gpt-5".into(),
                    at("2026-01-02T03:04:05.000Z"),
                    tokens(90, 50, 10, 0)
                ),
                (
                    "manicode/project-a/2026-01-02T03-04-05.000Z".into(),
                    "claude-sonnet-4-20250514".into(),
                    at("2026-01-02T03:04:06.000Z"),
                    tokens(100, 50, 10, 20)
                ),
                (
                    "manicode/project-c/2026-01-03T04-05-06.000Z".into(),
                    "codebuff-unknown".into(),
                    at("2026-01-03T04:05:06.000Z"),
                    tokens(0, 789, 0, 0)
                ),
            ]
        );
        assert_eq!(s.entries.iter().filter(|e| e.turn).count(), 1);
        assert!(s.entries.iter().any(|e| s.str(e.project) == "project-c"));
    }

    #[test]
    fn a_broken_chat_is_a_note() {
        let dir = std::env::temp_dir().join(format!("insights-codebuff-{}", std::process::id()));
        let chat = dir.join(".config/manicode/projects/p/chats/c");
        std::fs::create_dir_all(&chat).unwrap();
        std::fs::write(chat.join("chat-messages.json"), "[\n{\"role\":").unwrap();
        let s = read(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(s.entries.is_empty());
        assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
        assert!(
            s.errors[0].contains("chat-messages.json:2:"),
            "{}",
            s.errors[0]
        );
    }
}
