//! Droid (Factory): one settings file per session, `~/.factory/sessions/**/<session>.settings.json`
//! (`DROID_SESSIONS_DIR`, a comma-separated list, replaces `~/.factory/sessions`).
//!
//! The file holds the session's running totals (`tokenUsage`: `inputTokens`, `outputTokens`,
//! `cacheReadTokens`, `cacheCreationTokens`, `thinkingTokens`, `totalTokens`), its `model`
//! and its provider (`providerLock`, `providerLockTimestamp`): a session counts as one
//! response, at `providerLockTimestamp` (else the file's modification time), as ccusage counts
//! it. Thinking tokens are output (and reasoning). The model is written as Factory shows it
//! (`custom:Claude-Opus-4.5-Thinking-[Anthropic]-0`) and is read as ccusage reads it:
//! without `custom:` and the bracketed parts, lower case, `.` and spaces as `-`
//! (`claude-opus-4-5-thinking-0`); without one, the `Model: …` the session's `<session>.jsonl`
//! beside it names in its first 500 lines, else `claude-unknown`, `gpt-unknown`, … by provider.
//! A session written in two files (an archived copy) counts once, with its fuller totals.

use super::reader::{modified_millis, n, total_fallback, Env, Reader, Sink};
use super::{Agent, LineFacts, Tokens};
use crate::wire::Count;
use serde::Deserialize;
use std::borrow::Cow;
use std::io::BufRead;
use std::path::{Path, PathBuf};

pub const READER: Reader = Reader {
    agent: Agent::Droid,
    places,
    keep,
    owns,
    read,
};

const SUFFIX: &str = ".settings.json";

fn places(env: &Env) -> Vec<PathBuf> {
    env.list_or_home("DROID_SESSIONS_DIR", ".factory/sessions")
}

fn keep(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(SUFFIX))
}

fn owns(p: &Path) -> bool {
    keep(p) && p.to_string_lossy().contains("/.factory/")
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Settings {
    model: Option<String>,
    provider_lock: Option<String>,
    provider_lock_timestamp: Option<String>,
    token_usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    cache_creation_tokens: Option<Count>,
    cache_read_tokens: Option<Count>,
    thinking_tokens: Option<Count>,
    total_tokens: Option<Count>,
}

/// Factory's display name of a model as a model name (see the module's documentation).
fn model_name(shown: &str) -> String {
    let raw = shown.strip_prefix("custom:").unwrap_or(shown);
    let mut depth = 0u32;
    let bare: String = raw
        .chars()
        .filter(|&c| match c {
            '[' => {
                depth += 1;
                false
            }
            ']' => {
                depth = depth.saturating_sub(1);
                false
            }
            _ => depth == 0,
        })
        .collect();
    let lower = bare.trim().trim_end_matches('-').to_ascii_lowercase();
    let mut out = String::with_capacity(lower.len());
    for c in lower.chars() {
        let c = if c == '.' || c.is_whitespace() {
            '-'
        } else {
            c
        };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    out.trim_matches('-').to_owned()
}

/// The provider as ccusage names it, from `providerLock`: what names the model when nothing
/// else does.
fn provider(lock: Option<&str>) -> &'static str {
    let Some(p) = lock.map(str::trim).filter(|p| !p.is_empty()) else {
        return "unknown";
    };
    match p.to_ascii_lowercase().replace('-', "_").as_str() {
        "claude" | "anthropic" => "anthropic",
        "openai" => "openai",
        "google" | "google_ai" | "gemini" | "vertex" | "vertex_ai" => "google",
        "xai" | "x_ai" | "grok" => "xai",
        _ => "other",
    }
}

/// The `Model: …` that the session's transcript (`<session>.jsonl`) names first.
fn transcript_model(settings: &Path, session: &str) -> Option<String> {
    let file = std::fs::File::open(settings.with_file_name(format!("{session}.jsonl"))).ok()?;
    std::io::BufReader::new(file)
        .lines()
        .take(500)
        .map_while(Result::ok)
        .find_map(|line| {
            let tail = line.split_once("Model:")?.1;
            let raw = tail.split(['"', '\\', '[']).next().unwrap_or("").trim();
            Some(model_name(raw)).filter(|m| !m.is_empty())
        })
}

fn read(path: &Path, sink: &mut Sink<'_>) -> Result<(), String> {
    let whole = super::reader::Whole::read(path)?;
    let text = whole.text()?;
    let s: Settings = match serde_json::from_str(&text) {
        Ok(s) => s,
        Err(e) => {
            sink.bad(e.line(), crate::wire::without_position(&e));
            return Ok(());
        }
    };
    let Some(u) = s.token_usage else {
        return Ok(());
    };
    let thinking = n(u.thinking_tokens);
    let mut t = Tokens {
        input: n(u.input_tokens),
        output: n(u.output_tokens),
        cache_read: n(u.cache_read_tokens),
        cache_creation: n(u.cache_creation_tokens),
        ..Tokens::default()
    };
    // ccusage's rule, with the thinking tokens among the parts.
    total_fallback(&mut t, n(u.total_tokens).saturating_sub(thinking));
    t.output = t.output.saturating_add(thinking);
    t.reasoning = thinking;
    if t.is_zero() {
        return Ok(());
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let session = name.strip_suffix(SUFFIX).unwrap_or(&name).to_owned();
    let model = s
        .model
        .as_deref()
        .map(model_name)
        .or_else(|| transcript_model(path, &session))
        .filter(|m| !m.is_empty());
    let model = model.unwrap_or_else(|| {
        match provider(s.provider_lock.as_deref()) {
            "anthropic" => "claude-unknown",
            "openai" => "gpt-unknown",
            "google" => "gemini-unknown",
            "xai" => "grok-unknown",
            _ => "unknown",
        }
        .to_owned()
    });
    let time = s
        .provider_lock_timestamp
        .as_deref()
        .and_then(|t| crate::time::millis(t.trim()))
        .or_else(|| modified_millis(path));
    (sink.add)(LineFacts {
        time,
        session: Some(Cow::Borrowed(&session)),
        model: Some(Cow::Borrowed(&model)),
        usage: Some(t),
        response: Some(crate::ids::hash64(&format!("droid\0{session}"))),
        ..Default::default()
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::reader::sample::{home, read, responses, tokens};

    #[test]
    fn model_names_are_read_as_ccusage_reads_them() {
        assert_eq!(
            super::model_name("custom:Claude-Opus-4.5-Thinking-[Anthropic]-0"),
            "claude-opus-4-5-thinking-0"
        );
        assert_eq!(
            super::model_name("Claude-Sonnet-4-[Anthropic]"),
            "claude-sonnet-4"
        );
        assert_eq!(super::model_name("gemini-2.5-pro"), "gemini-2-5-pro");
    }

    /// ccusage's Droid tests (tests/usage-samples/droid): a session's totals with its thinking
    /// as output; the model from the transcript; an archived copy counted once, with its fuller
    /// totals; a file without tokens is none.
    #[test]
    fn reads_settings_files() {
        let s = read(&home("droid"));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let mut a = tokens(100, 55, 10, 20);
        a.reasoning = 5;
        let got: Vec<_> = responses(&s)
            .into_iter()
            .map(|(session, model, _, t)| (session, model, t))
            .collect();
        assert_eq!(
            got,
            vec![
                ("session-a".into(), "claude-sonnet-4".into(), a),
                (
                    "session-b".into(),
                    "claude-opus-4-5-thinking".into(),
                    tokens(10, 20, 0, 0)
                ),
                ("session-c".into(), "gpt-5".into(), tokens(100, 200, 0, 0)),
            ]
        );
    }
}
