//! Gemini CLI's own chat files: `~/.gemini/tmp/<project>/chats/session-*.jsonl`
//! (`testdata/session-files/*gemini*/`). The file is a log of one JSON document: a header
//! sets the session's fields, each record is a message appended to `messages`, a `$set` line
//! sets fields again (`lastUpdated`; `messages` as a whole when the CLI rewinds the chat).
//! Read by the `gemini` provider, whose events they become.
//!
//! | record | events |
//! |---|---|
//! | header `{sessionId, projectHash, startTime, …}` | `session_init` (project hash and kind in `extensions`); the same session again: `notice` `gemini/chat-header` |
//! | `user` of text | `turn_start` (inferred), `user_input` |
//! | `user` of `functionResponse` parts | `tool_completion` of each call no `gemini` record has ended (a cancelled call is only here), else `notice` `gemini/function-response` |
//! | `gemini` | `text` (and `thinking` from `thoughts`), `usage_update` (its `tokens`); each of its `toolCalls`: `tool_invocation` and `tool_completion` by `status` (`success`, `error`, `cancelled`), a successful `write_file`/`replace` → `file_change` from the call's arguments |
//! | `info`, `warning`, `error` | `notice`, `error` (warning or error) |
//! | `$set` | `notice` `gemini/set`; when it rewinds `messages` to before the open turn's prompt, the turn failed: `error` and a failed `turn_complete` (inferred: the file keeps no cause) |
//!
//! **Correlated:** the file's session (its header) for every record; what each message has
//! given already, by message id: Gemini CLI writes a message again as it completes it (with
//! its tool calls), and only what is new becomes events; the open turn and its prompt.
//! **Inferred:** turn boundaries (a prompt starts a turn; the next prompt ends the one before,
//! as does a rewind), marked `insights.inferred`.

use super::codex::error_event;
use super::edits;
use super::gemini::tool_kind;
use super::memo::Memo;
use super::{Cx, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::wire::{count, Count};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::json;
use std::borrow::Cow;

crate::providers::memo::remember! {
    /// What a chat file's lines need of earlier lines.
    pub struct Memory {
        /// The file's session (key `""`), and every session announced (by id).
        pub sessions: Memo<String>,
        /// What each message has given so far, by message id.
        pub messages: Memo<Given>,
        /// Calls invoked (`false`) or ended (`true`), by call id: a call's end is in its
        /// message's `toolCalls` or in a `functionResponse`, whichever comes first.
        pub calls: Memo<bool>,
        /// The open turn of each session, by session id: its prompt's message id.
        pub turn: Memo<String>,
    }
}

/// What a message has become already.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Given {
    text: bool,
    thoughts: usize,
    usage: bool,
}

const RECORDS: &[&str] = &["user", "gemini", "info", "warning", "error"];

fn has(p: &Probe, name: &str) -> bool {
    p.members()
        .is_some_and(|m| m.iter().any(|(k, _)| *k == name))
}

/// A chat file's line: its header (`sessionId` and `projectHash`), a `$set`, or a message
/// record (`id`, `timestamp`, a `type` of [`RECORDS`], none of Claude's `uuid`/`message`).
pub fn sniff(p: &Probe) -> bool {
    if p.jsonrpc.is_some() || p.method.is_some() {
        return false;
    }
    if p.ty.is_none() {
        return (has(p, "sessionId") && has(p, "projectHash")) || has(p, "$set");
    }
    p.ty().is_some_and(|t| RECORDS.contains(&t))
        && p.id.is_some()
        && p.timestamp.is_some()
        && p.uuid.is_none()
        && p.message.is_none()
        && p.jsonrpc.is_none()
        && p.session_id.is_none()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "crate::wire::opt_str")]
    ty: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    session_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    project_hash: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    start_time: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    kind: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    timestamp: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    thoughts: Option<Vec<Thought<'a>>>,
    #[serde(borrow)]
    tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolCall<'a>>>,
    #[serde(rename = "$set", borrow)]
    set: Option<SetDoc<'a>>,
}

#[derive(Deserialize)]
struct Thought<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    subject: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    description: Option<Str<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolCall<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    name: Option<Str<'a>>,
    #[serde(borrow)]
    args: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    description: Option<Str<'a>>,
    #[serde(borrow)]
    result_display: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Display {
    is_new_file: Option<bool>,
    file_path: Option<String>,
    original_content: Option<String>,
    new_content: Option<String>,
}

#[derive(Deserialize)]
struct SetDoc<'a> {
    #[serde(borrow, default)]
    messages: Option<Vec<SetMessage<'a>>>,
}

#[derive(Deserialize)]
struct SetMessage<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    text: Option<Str<'a>>,
    #[serde(rename = "functionResponse", borrow)]
    function_response: Option<FunctionResponse<'a>>,
}

#[derive(Deserialize)]
struct FunctionResponse<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    name: Option<Str<'a>>,
    #[serde(borrow)]
    response: Option<&'a RawValue>,
}

/// A response's tokens. `input` counts the cached part (`total` is `input` + `output`);
/// `tool` is prompt tokens of tool use; `thoughts` are generated apart from `output`.
#[derive(Deserialize)]
struct ChatTokens {
    input: Option<Count>,
    output: Option<Count>,
    cached: Option<Count>,
    thoughts: Option<Count>,
    tool: Option<Count>,
}

impl ChatTokens {
    /// As every agent's tokens are counted: cached input out of input, tool-use prompt
    /// tokens in it, thoughts in output and in reasoning.
    fn usage(&self) -> crate::usage::Tokens {
        let n = |c: Option<Count>| count(c).unwrap_or(0);
        let cached = n(self.cached).min(n(self.input));
        crate::usage::Tokens {
            input: n(self.input) - cached + n(self.tool),
            output: n(self.output) + n(self.thoughts),
            cache_read: cached,
            cache_creation: 0,
            cache_creation_1h: 0,
            reasoning: n(self.thoughts),
        }
    }
}

/// Converts one line of a chat file.
pub fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let r: Record = crate::members::read(line, probe.members())?;
    cx.wire_time(
        probe
            .timestamp
            .and_then(|t| t.str())
            .or_else(|| r.start_time.clone()),
    );
    let at = cx.line;
    if let Some(sid) = r.session_id.clone().filter(|_| r.ty.is_none()) {
        cx.session_id = Some(sid.clone());
        let sessions = &mut cx.memory().gemini_chat.sessions;
        if sessions.get("").map(String::as_str) != Some(&*sid) {
            sessions.insert("", sid.to_string(), at);
        }
        if sessions.contains(&sid) {
            cx.push(Notice {
                subtype: Cow::Borrowed("gemini/chat-header"),
                message: None,
            });
            return Ok(());
        }
        sessions.insert(&sid, String::new(), at);
        let ext = cx.push(SessionInit::default());
        ext.put_opt("gemini.projectHash", r.project_hash);
        ext.put_opt("gemini.kind", r.kind);
        return Ok(());
    }
    cx.session_id = cx
        .memory()
        .gemini_chat
        .sessions
        .get("")
        .cloned()
        .map(Cow::Owned);
    if let Some(set) = r.set {
        return set_line(set, cx);
    }
    match r.ty.as_deref().unwrap_or("") {
        "user" => user(r, cx),
        "gemini" => gemini(r, cx),
        "error" | "warning" => {
            let message = text_of(r.content).unwrap_or_else(|| Cow::Borrowed("error"));
            let (http_status, code) = super::gemini::api_error(&message);
            let severity = if r.ty.as_deref() == Some("warning") {
                Severity::Warning
            } else {
                Severity::Error
            };
            cx.push(ErrorEvent {
                code,
                http_status,
                ..error_event(message, severity)
            });
            Ok(())
        }
        t => {
            cx.push(Notice {
                subtype: Cow::Owned(format!("gemini/{t}")),
                message: text_of(r.content),
            });
            Ok(())
        }
    }
}

/// Whether a call's `resultDisplay` text says the person cancelled it.
fn stopped_by_user(display: Option<&RawValue>) -> bool {
    display
        .and_then(crate::wire::raw_str)
        .is_some_and(|d| d.starts_with("Command cancelled by user"))
}

/// The line's session, the key of [`Memory::turn`].
fn session_key(cx: &Cx<'_>) -> String {
    cx.session_id.as_deref().unwrap_or("").to_owned()
}

/// The text of a message's content: a string, or its parts' `text`.
fn text_of(content: Option<&RawValue>) -> Option<Str<'_>> {
    let c = content?;
    if c.get().starts_with('"') {
        return serde_json::from_str(c.get()).ok();
    }
    let parts: Vec<Part> = serde_json::from_str(c.get()).ok()?;
    let texts: Vec<&str> = parts.iter().filter_map(|p| p.text.as_deref()).collect();
    (!texts.is_empty()).then(|| Cow::Owned(texts.join("\n")))
}

/// A `$set`: a notice; a rewind of `messages` that drops the open turn's prompt fails it.
fn set_line<'a>(set: SetDoc<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let key = session_key(cx);
    let open = cx.memory().gemini_chat.turn.get(&key).cloned();
    let ext = cx.push(Notice {
        subtype: Cow::Borrowed("gemini/set"),
        message: None,
    });
    let Some(messages) = set.messages else {
        return Ok(());
    };
    ext.put("gemini.messages", Json::Value(json!(messages.len())));
    if let Some(prompt) = open {
        if !messages.iter().any(|m| m.id.as_deref() == Some(prompt.as_str())) {
            let ext = cx.push(error_event(
                Cow::Borrowed(
                    "the request failed: Gemini CLI took the prompt back out of the chat (the file keeps no cause)",
                ),
                Severity::Error,
            ));
            ext.put("insights.inferred", true);
            let ext = cx.push(TurnComplete {
                is_error: true,
                subtype: Some(Cow::Borrowed("error")),
                ..TurnComplete::default()
            });
            ext.put("insights.inferred", true);
            cx.memory().gemini_chat.turn.remove(&key);
        }
    }
    Ok(())
}

fn user<'a>(r: Record<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let parts: Vec<Part> = match r.content {
        Some(c) if c.get().starts_with('[') => serde_json::from_str(c.get())?,
        _ => Vec::new(),
    };
    let responses: Vec<FunctionResponse> =
        parts.into_iter().filter_map(|p| p.function_response).collect();
    if responses.is_empty() {
        let at = cx.line;
        let key = session_key(cx);
        if cx.memory().gemini_chat.turn.contains(&key) {
            // The file says nothing of how the turn before ended.
            let ext = cx.push(TurnComplete::default());
            ext.put("insights.inferred", true);
        }
        let ext = cx.push(TurnStart { model: None });
        ext.put("insights.inferred", true);
        if let Some(id) = &r.id {
            cx.memory().gemini_chat.turn.insert(&key, id.to_string(), at);
        }
        cx.push(UserInput {
            text: text_of(r.content).unwrap_or_default(),
            images: None,
            is_synthetic: false,
            parent_call_id: None,
        });
        return Ok(());
    }
    let mut ended = false;
    for f in responses {
        let Some(id) = f.id.clone() else { continue };
        if ended_already(cx, &id) {
            continue;
        }
        ended = true;
        let error = f
            .response
            .and_then(|v| serde_json::from_str::<serde_json::Value>(v.get()).ok())
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned));
        if !invoked_already(cx, &id) {
            cx.push(ToolInvocation {
                call_id: id.clone(),
                parent_call_id: None,
                kind: tool_kind(f.name.as_deref().unwrap_or("")),
                tool_name: f.name.clone().unwrap_or_default(),
                title: None,
                input: Json::Value(json!({})),
                locations: None,
                model: None,
                mcp_server: None,
                mcp_tool: None,
                message_id: None,
            });
        }
        let cancelled = error.as_deref().is_some_and(|e| e.contains("canceled") || e.contains("cancelled"));
        cx.push(ToolCompletion {
            call_id: id.clone(),
            status: match (&error, cancelled) {
                (None, _) => ToolCallStatus::Completed,
                (Some(_), true) => ToolCallStatus::Cancelled,
                (Some(_), false) => ToolCallStatus::Failed,
            },
            duration_ms: None,
            output: f.response.map(Json::Raw),
            is_error: error.is_some(),
            content: None,
            locations: None,
            parent_call_id: None,
        });
        set_call(cx, &id, true);
    }
    if !ended {
        cx.push(Notice {
            subtype: Cow::Borrowed("gemini/function-response"),
            message: None,
        });
    }
    Ok(())
}

fn ended_already(cx: &mut Cx<'_>, id: &str) -> bool {
    cx.memory().gemini_chat.calls.get(id) == Some(&true)
}

fn invoked_already(cx: &mut Cx<'_>, id: &str) -> bool {
    cx.memory().gemini_chat.calls.contains(id)
}

fn set_call(cx: &mut Cx<'_>, id: &str, ended: bool) {
    let at = cx.line;
    cx.memory().gemini_chat.calls.insert(id, ended, at);
}

/// Changes what message `key` has given.
fn mark(cx: &mut Cx<'_>, key: &str, f: impl FnOnce(&mut Given)) {
    let at = cx.line;
    let memo = &mut cx.memory().gemini_chat.messages;
    let mut g = memo.get(key).cloned().unwrap_or_default();
    f(&mut g);
    memo.insert(key, g, at);
}

fn gemini<'a>(r: Record<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let key = r.id.as_deref().unwrap_or("").to_owned();
    let given = cx.memory().gemini_chat.messages.get(&key).cloned().unwrap_or_default();
    let thoughts = r.thoughts.unwrap_or_default();
    for t in thoughts.iter().skip(given.thoughts) {
        let text = match (&t.subject, &t.description) {
            (Some(s), Some(d)) => Cow::Owned(format!("**{s}** {d}")),
            (Some(s), None) => s.clone(),
            (None, Some(d)) => d.clone(),
            (None, None) => continue,
        };
        cx.push(Text {
            text,
            kind: TextKind::Thinking,
            parent_call_id: None,
            model: r.model.clone(),
            message_id: r.id.clone(),
        });
    }
    let text = text_of(r.content).filter(|t| !t.is_empty());
    let new_text = !given.text && text.is_some();
    if let Some(t) = text.filter(|_| new_text) {
        cx.push(Text {
            text: t,
            kind: TextKind::Text,
            parent_call_id: None,
            model: r.model.clone(),
            message_id: r.id.clone(),
        });
    }
    for call in r.tool_calls.unwrap_or_default() {
        let Some(id) = call.id.clone() else { continue };
        if ended_already(cx, &id) {
            continue;
        }
        let name = call.name.clone().unwrap_or_default();
        let path = call.args.and_then(|a| {
            serde_json::from_str::<serde_json::Value>(a.get())
                .ok()?
                .get("file_path")
                .and_then(|p| p.as_str())
                .map(str::to_owned)
        });
        if !invoked_already(cx, &id) {
            cx.push(ToolInvocation {
                call_id: id.clone(),
                kind: tool_kind(&name),
                tool_name: Cow::Owned(name.to_string()),
                title: call.description.clone(),
                input: call.args.map_or_else(|| Json::Value(json!({})), Json::Raw),
                locations: path.clone().map(|p| vec![Cow::Owned(p)]),
                model: r.model.clone(),
                mcp_server: None,
                mcp_tool: None,
                message_id: r.id.clone(),
                parent_call_id: None,
            });
            set_call(cx, &id, false);
        }
        let status = match call.status.as_deref() {
            // A shell command the person stopped is written as a success whose display
            // says so ("Command cancelled by user."): the wire protocol says cancelled.
            Some("success") if stopped_by_user(call.result_display) => ToolCallStatus::Cancelled,
            Some("success") => ToolCallStatus::Completed,
            Some("cancelled") | Some("canceled") => ToolCallStatus::Cancelled,
            Some("error") => ToolCallStatus::Failed,
            // Scheduled, executing, awaiting approval: not ended yet.
            _ => continue,
        };
        cx.push(ToolCompletion {
            call_id: id.clone(),
            status,
            duration_ms: None,
            output: call.result.map(Json::Raw),
            is_error: status == ToolCallStatus::Failed,
            content: None,
            locations: None,
            parent_call_id: None,
        });
        set_call(cx, &id, true);
        if status == ToolCallStatus::Completed {
            let display = call
                .result_display
                .filter(|d| d.get().starts_with('{'))
                .and_then(|d| serde_json::from_str::<Display>(d.get()).ok());
            let new_file = display.as_ref().and_then(|d| d.is_new_file).unwrap_or(false);
            // The file's whole content before and after, where the chat keeps it: a diff of
            // the file, not only of the replaced text.
            let whole = display.and_then(|d| {
                Some(edits::Edit {
                    path: d.file_path?,
                    old: d.original_content.filter(|_| !new_file),
                    new: d.new_content?,
                    creates: new_file,
                    whole: true,
                })
            });
            let edit = match &*name {
                "write_file" | "replace" | "edit" if whole.is_some() => whole,
                "write_file" => call.args.and_then(|a| edits::from_input(a.get(), true, new_file)),
                "replace" | "edit" => call.args.and_then(|a| edits::from_input(a.get(), false, false)),
                _ => None,
            };
            if let Some(edit) = edit {
                edits::file_change(edit, id, None, cx);
            }
        }
    }
    let usage = if given.usage {
        None
    } else {
        r.tokens
            .and_then(|t| serde_json::from_str::<ChatTokens>(t.get()).ok())
            .map(|t| (t, r.tokens))
    };
    if let Some((t, raw)) = usage {
        let t = t.usage();
        cx.push(UsageUpdate {
            step_usage: Json::Value(json!({
                "input_tokens": t.input,
                "output_tokens": t.output,
                "cache_read_input_tokens": t.cache_read,
                "cache_creation_input_tokens": 0,
                "reasoning_output_tokens": t.reasoning,
            })),
            total: None,
            context_window: None,
            context_tokens: None,
            cost_usd: None,
            parent_call_id: None,
            model: r.model.clone(),
            message_id: r.id.clone(),
        })
        .put_opt("gemini.tokens", raw.map(Json::Raw));
    }
    let n_thoughts = thoughts.len().max(given.thoughts);
    let had_usage = given.usage || r.tokens.is_some();
    mark(cx, &key, |g| {
        g.text |= new_text;
        g.thoughts = n_thoughts;
        g.usage = had_usage;
    });
    if cx.events.is_empty() {
        cx.push(Notice {
            subtype: Cow::Borrowed("gemini/message-again"),
            message: None,
        });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// usage and sessions

/// What a chat file's record tells `usage` and `sessions`, read with the same [`Record`]:
/// a `gemini` record's tokens (a message written again counts once: the session and message
/// id identify it), a person's prompt, the session of the header.
pub(crate) fn line_facts<'a>(
    line: &'a str,
    memo: &mut crate::usage::FileMemo,
) -> Option<crate::usage::LineFacts<'a>> {
    if line.starts_with(r#"{"$set""#) {
        return None;
    }
    let r: Record = serde_json::from_str(line).ok()?;
    if let Some(s) = r.session_id.as_ref().filter(|_| r.ty.is_none()) {
        memo.session = Some(s.to_string());
    }
    let mut f = crate::usage::LineFacts {
        time: r.timestamp.as_deref().and_then(crate::time::millis),
        session: memo.session.clone().map(Cow::Owned),
        ..Default::default()
    };
    match r.ty.as_deref() {
        None if r.session_id.is_some() => {}
        Some("gemini") => {
            let tokens = serde_json::from_str::<ChatTokens>(r.tokens?.get()).ok()?.usage();
            if tokens.is_zero() {
                return None;
            }
            f.response = r.id.as_deref().map(|id| {
                crate::ids::hash_pair(memo.session.as_deref().unwrap_or(""), id)
            });
            f.model = r.model;
            f.usage = Some(tokens);
        }
        Some("user") => {
            f.prompt = !r.content?.get().contains(r#""functionResponse""#);
            if !f.prompt {
                return None;
            }
        }
        _ => return None,
    }
    Some(f)
}
