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
use serde::Deserialize;
use serde_json::value::RawValue;
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

/// A chat message. Only what is counted is read: the text, and the content of the run
/// state's history (the whole conversation again, in each message that has it), are skipped
/// unread.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    id: Option<Value>,
    variant: Option<Value>,
    role: Option<Value>,
    timestamp: Option<Value>,
    created_at: Option<Value>,
    metadata: Option<Metadata>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    model: Option<Value>,
    timestamp: Option<Value>,
    usage: Option<Value>,
    codebuff: Option<Provider>,
    run_state: Option<RunState>,
}

/// `codebuff` in a message's metadata, or in a history entry's `providerOptions`.
#[derive(Deserialize)]
struct Provider {
    model: Option<Value>,
    usage: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunState {
    session_state: Option<SessionState>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionState {
    main_agent_state: Option<AgentState>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AgentState {
    message_history: Option<Vec<HistoryEntry>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HistoryEntry {
    role: Option<Value>,
    provider_options: Option<ProviderOptions>,
}

#[derive(Deserialize)]
struct ProviderOptions {
    usage: Option<Value>,
    codebuff: Option<Provider>,
}

/// A non-empty string, trimmed.
fn string(v: &Option<Value>) -> Option<&str> {
    v.as_ref()?
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The usage the run state's assistant entries give, the last first; none without any.
fn run_state_usage(run: &RunState) -> Option<Usage> {
    let history = run
        .session_state
        .as_ref()?
        .main_agent_state
        .as_ref()?
        .message_history
        .as_ref()?;
    let mut usage = Usage::default();
    let mut any = false;
    for entry in history.iter().rev() {
        if string(&entry.role) != Some("assistant") {
            continue;
        }
        let Some(options) = &entry.provider_options else {
            continue;
        };
        let mut u = usage_of(options.usage.as_ref());
        if let Some(codebuff) = &options.codebuff {
            u.or(usage_of(codebuff.usage.as_ref()));
            if let Some(model) = string(&codebuff.model) {
                u.model = Some(model.to_owned());
            }
        }
        any |= u.has_tokens() || u.model.is_some();
        usage.or(u);
    }
    any.then_some(usage)
}

fn usage_of_message(m: &Message) -> Usage {
    let Some(metadata) = &m.metadata else {
        return Usage::default();
    };
    let mut u = usage_of(metadata.usage.as_ref());
    if let Some(model) = string(&metadata.model) {
        u.model = Some(model.to_owned());
    }
    u.or(usage_of(
        metadata.codebuff.as_ref().and_then(|c| c.usage.as_ref()),
    ));
    if let Some(r) = metadata.run_state.as_ref().and_then(run_state_usage) {
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
    let whole = super::reader::Whole::read(path)?;
    let text = whole.text()?;
    let messages: Vec<&RawValue> = match serde_json::from_str(&text) {
        Ok(m) => m,
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
    for (i, raw) in messages.iter().enumerate() {
        if !raw.get().starts_with('{') {
            continue;
        }
        let m: Message = match serde_json::from_str(raw.get()) {
            Ok(m) => m,
            Err(e) => {
                sink.bad(
                    0,
                    format!("message {}: {}", i + 1, crate::wire::without_position(&e)),
                );
                continue;
            }
        };
        let time = [&m.timestamp, &m.created_at]
            .into_iter()
            .chain(m.metadata.as_ref().map(|d| &d.timestamp))
            .find_map(|t| t.as_ref().and_then(millis))
            .or(fallback);
        let mut f = LineFacts {
            time,
            session: Some(Cow::Borrowed(&session)),
            cwd: Some(Cow::Borrowed(&project)),
            ..Default::default()
        };
        match string(&m.variant).or_else(|| string(&m.role)) {
            Some("user") => f.turn = true,
            Some("ai" | "agent" | "assistant") => {
                let u = usage_of_message(&m);
                if !u.has_tokens() {
                    continue;
                }
                let model = u.model.unwrap_or_else(|| "codebuff-unknown".into());
                // One message written in two files (a chat under two data folders) counts once.
                let id = match string(&m.id) {
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

    /// A chat that is not JSON is a note; so is a message that is not one, and the chat's
    /// other messages count.
    #[test]
    fn a_broken_chat_or_message_is_a_note() {
        let dir = std::env::temp_dir().join(format!("insights-codebuff-{}", std::process::id()));
        let chats = dir.join(".config/manicode/projects/p/chats");
        for (chat, text) in [
            ("a", "[\n{\"role\":"),
            (
                "b",
                r#"[{"role":"assistant","metadata":"x"},{"role":"assistant","metadata":{"usage":{"outputTokens":5}}}]"#,
            ),
        ] {
            std::fs::create_dir_all(chats.join(chat)).unwrap();
            std::fs::write(chats.join(chat).join("chat-messages.json"), text).unwrap();
        }
        let s = read(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        let got: Vec<_> = responses(&s).into_iter().map(|r| (r.0, r.3)).collect();
        assert_eq!(got, vec![("manicode/p/b".into(), tokens(0, 5, 0, 0))]);
        assert_eq!(s.errors.len(), 2, "{:?}", s.errors);
        assert!(
            s.errors[0].contains("a/chat-messages.json:2:"),
            "{}",
            s.errors[0]
        );
        assert!(
            s.errors[1].contains("message 1: invalid type"),
            "{}",
            s.errors[1]
        );
    }
}
