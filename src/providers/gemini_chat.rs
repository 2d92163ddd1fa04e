//! Gemini CLI's own chat files: `~/.gemini/tmp/<project>/chats/session-*.jsonl`
//! (`testdata/session-files/*gemini*/`). The file is a log of one JSON document: a header
//! sets the session's fields, each record is a message appended to `messages`, a `$set` line
//! sets fields again (`lastUpdated`; `messages` as a whole when the CLI rewinds the chat).
//! Read by the `gemini` provider, whose events they become.
//!
//! | record | events |
//! |---|---|
//! | header `{sessionId, projectHash, startTime, …}` | `session_init` (project hash and kind in `extensions`); the same session again: `notice` `gemini/chat-header` |
//! | `user` of text | `turn_start` (inferred), `user_input`; the turn before ends (below) |
//! | `user` of `functionResponse` parts | `tool_completion` of each call no `gemini` record has ended (a cancelled call is only here: invoked and ended at once; its output the response's `output` text, or `{message}` of its `error`), else `notice` `gemini/function-response` |
//! | `gemini` | `text` (and `thinking` from `thoughts`), `usage_update` (its `tokens`: cached input out of input, `tool` in it, thoughts in output and `reasoning_output_tokens`; the raw counts in `extensions."gemini.tokens"`); each of its `toolCalls`: `tool_invocation` (title and path read from `args` as the stream reads a `tool_use`; `write_todos` adds a `plan_update`, as the stream does), and `tool_completion` by `status` (`success`, `error`, `cancelled`; `success` of a shell command the person stopped, "Command cancelled by user.", is `cancelled`, inferred; `success` of a command whose output says `Exit Code: N`, N ≠ 0, is `failed`, `gemini.status` keeping the file's word), its output what the stream's `tool_result` gives (`resultDisplay` when it is text; an error's `{message}`; a command's exit code as `{stdout, stderr, exit_code}`), `durationMs` from the call's start (the milliseconds in its id `<tool>__<tool>_<ms>_<n>`, else the message's `timestamp`) to the call's `timestamp`; a successful `write_file`/`replace` → `file_change` from the call's arguments |
//! | `info`, a `type` of a later version (with `content`) | `notice` `gemini/<type>` |
//! | `warning`, `error` | `error` (warning or error; an HTTP status read from the text) |
//! | `$set` | `notice` `gemini/set`; when it rewinds `messages` to before the open turn's prompt, the turn failed: `error` and a failed `turn_complete` (inferred: the file keeps no cause) |
//!
//! **Correlated:** the file's session (its header) for every record; what each message has
//! given already, by message id: Gemini CLI writes a message again as it completes it (with
//! its tool calls, the same `tokens`), and only what is new becomes events, so each
//! response's `usage_update` comes once; the open turn, its prompt and its calls whose results
//! no `functionResponse` has sent back yet.
//! **Inferred** (marked `insights.inferred`): turn boundaries, the file writing none. A
//! prompt starts a turn (the header names the session but starts none); the turn ends at the
//! next prompt, at a rewind that drops its prompt, or at the end of the input (the converter's
//! [`at_end`]: Gemini CLI writes each model message first without its `toolCalls` and again
//! with them, so the final answer cannot be told from a message whose calls are still to come
//! until the file has ended). How it ended is read from its last records ([`close`]):
//! `interrupted` (`stopReason` `cancelled`) when results of its calls were never sent back to
//! the model (Gemini CLI sends every result before the turn goes on), the calls still running
//! ending `cancelled`, or when its prompt was never answered; failed, with an `error`, when a
//! rewind took its prompt back, when the model never answered the results sent back to it, or
//! when an `error` record came last; else completed (`success`). Its `turn_complete` carries
//! its responses' tokens and its duration, as the stream's `result` does.
//!
//! For `insights usage`, [`line_facts`] reads a line's tokens through the
//! same [`ChatTokens`] as the events, without building them.

use super::codex::error_event;
use super::edits;
use super::gemini::{tool_kind, Params};
use super::memo::Memo;
use super::{Cx, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::wire::{count, Count, OptStr};
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
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
        /// The open turn of each session, by session id.
        pub turn: Memo<Turn>,
    }
}

/// A session's open turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    /// Its prompt's message id.
    prompt: String,
    /// Its calls whose result no `functionResponse` has carried back to the model yet. Gemini
    /// CLI sends every result back before the turn goes on; a prompt that comes while some
    /// are left means the person stopped the turn.
    unsent: Vec<String>,
    /// What its last record was: how it ended, when nothing after it says.
    last: Last,
    /// Its responses' tokens, each response once (`None` before the first).
    tokens: Option<crate::usage::Tokens>,
    /// Its prompt's time (Unix milliseconds) and its last record's (RFC 3339): its duration
    /// and the time of an end the file does not write.
    started: Option<i64>,
    latest: String,
}

/// A turn's last record, which tells how it ended when no record after it says
/// ([`close`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum Last {
    /// Its prompt: the model has not answered.
    #[default]
    Prompt,
    /// A message of the model.
    Answer,
    /// The results of its calls, sent back to the model, which has not answered them.
    Sent,
    /// An `error` record.
    Error,
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
/// record (`id`, `timestamp`, a `type` of [`RECORDS`], none of Claude's `uuid`/`message`). A
/// `type` this reading does not know is a message record only with a message's `content` too,
/// and no `subtype`.
pub fn sniff(p: &Probe) -> bool {
    if p.jsonrpc.is_some() || p.method.is_some() {
        return false;
    }
    if p.ty.is_none() {
        return (has(p, "sessionId") && has(p, "projectHash")) || has(p, "$set");
    }
    let message = p.id.is_some()
        && p.timestamp.is_some()
        && p.uuid.is_none()
        && p.message.is_none()
        && p.session_id.is_none();
    match p.ty() {
        Some(t) if RECORDS.contains(&t) => message,
        Some(_) => message && p.subtype.is_none() && has(p, "content"),
        None => false,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record<'a> {
    #[serde(rename = "type")]
    ty: OptStr<'a>,
    id: OptStr<'a>,
    session_id: OptStr<'a>,
    project_hash: OptStr<'a>,
    start_time: OptStr<'a>,
    kind: OptStr<'a>,
    timestamp: OptStr<'a>,
    model: OptStr<'a>,
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
    #[serde(borrow)]
    subject: OptStr<'a>,
    description: OptStr<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolCall<'a> {
    id: OptStr<'a>,
    name: OptStr<'a>,
    #[serde(borrow)]
    args: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    status: OptStr<'a>,
    /// When the call ended (its result's time).
    timestamp: OptStr<'a>,
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
    #[serde(borrow)]
    id: OptStr<'a>,
}

#[derive(Deserialize)]
struct Part<'a> {
    text: OptStr<'a>,
    #[serde(rename = "functionResponse", borrow)]
    function_response: Option<FunctionResponse<'a>>,
}

#[derive(Deserialize)]
struct FunctionResponse<'a> {
    id: OptStr<'a>,
    name: OptStr<'a>,
    #[serde(borrow)]
    response: Option<&'a RawValue>,
}

/// What a `functionResponse` sent the model: the tool's output text, or its error.
#[derive(Deserialize, Default)]
struct Response<'a> {
    #[serde(borrow)]
    output: OptStr<'a>,
    error: OptStr<'a>,
}

impl<'a> Response<'a> {
    fn read(raw: Option<&'a RawValue>) -> Response<'a> {
        raw.and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or_default()
    }

    /// The response of a call's `result` (`[{functionResponse: {response}}]`).
    fn of_result(result: Option<&'a RawValue>) -> Response<'a> {
        let parts: Vec<Part<'a>> = result
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or_default();
        let raw = parts
            .into_iter()
            .find_map(|p| p.function_response.and_then(|f| f.response));
        Response::read(raw)
    }

    /// The exit code the shell tool states in its output (`Exit Code: N`, written when not 0).
    fn exit_code(&self) -> Option<i64> {
        self.output
            .as_deref()?
            .lines()
            .find_map(|l| l.strip_prefix("Exit Code: "))
            .and_then(|c| c.trim().parse().ok())
    }

    /// Whether the person stopped the command (the shell tool's words).
    fn stopped(&self) -> bool {
        self.output
            .as_deref()
            .is_some_and(|o| o.contains("Command was cancelled by user before it could complete"))
    }
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
    /// A record's `tokens`, counted as [`ChatTokens::usage`] says: the one reading that the
    /// events and [`line_facts`] share.
    fn read(raw: &RawValue) -> Option<crate::usage::Tokens> {
        serde_json::from_str::<ChatTokens>(raw.get())
            .ok()
            .map(|t| t.usage())
    }

    /// As every agent's tokens are counted: cached input out of input, tool-use prompt
    /// tokens in it, thoughts in output and in reasoning.
    fn usage(&self) -> crate::usage::Tokens {
        let n = |c: Option<Count>| count(c).unwrap_or(0);
        let cached = n(self.cached).min(n(self.input));
        crate::usage::Tokens {
            input: (n(self.input) - cached).saturating_add(n(self.tool)),
            output: n(self.output).saturating_add(n(self.thoughts)),
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
    // Its prompts start its turns, not its header ([`super::turns`]).
    cx.own_turns = true;
    cx.wire_time(
        probe
            .timestamp
            .and_then(|t| t.str())
            .or_else(|| r.start_time.0.clone()),
    );
    let at = cx.line;
    if let Some(sid) = r.session_id.0.clone().filter(|_| r.ty.is_none()) {
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
        ext.put_opt("gemini.projectHash", r.project_hash.0);
        ext.put_opt("gemini.kind", r.kind.0);
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
            let message = text_of(r.content).unwrap_or(Cow::Borrowed("error"));
            let (http_status, code) = super::gemini::api_error(&message);
            let severity = if r.ty.as_deref() == Some("warning") {
                Severity::Warning
            } else {
                note(cx, Last::Error, None);
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
    let open = cx
        .memory()
        .gemini_chat
        .turn
        .get(&key)
        .map(|t| t.prompt.clone())
        .filter(|p| !p.is_empty());
    let ext = cx.push(Notice {
        subtype: Cow::Borrowed("gemini/set"),
        message: None,
    });
    let Some(messages) = set.messages else {
        return Ok(());
    };
    ext.put("gemini.messages", Json::Value(json!(messages.len())));
    if let Some(prompt) = open {
        if !messages
            .iter()
            .any(|m| m.id.as_deref() == Some(prompt.as_str()))
        {
            if let Some(open) = cx.memory().gemini_chat.turn.remove(&key) {
                close(open, cx, true);
            }
        }
    }
    Ok(())
}

fn user<'a>(r: Record<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let parts: Vec<Part> = match r.content {
        Some(c) if c.get().starts_with('[') => serde_json::from_str(c.get())?,
        _ => Vec::new(),
    };
    let responses: Vec<FunctionResponse> = parts
        .into_iter()
        .filter_map(|p| p.function_response)
        .collect();
    if responses.is_empty() {
        let at = cx.line;
        let key = session_key(cx);
        if let Some(open) = cx.memory().gemini_chat.turn.remove(&key) {
            close(open, cx, false);
        }
        let ext = cx.push(TurnStart { model: None });
        ext.put("insights.inferred", true);
        let time = cx.timestamp.as_deref().unwrap_or("");
        let turn = Turn {
            prompt: r.id.as_deref().unwrap_or("").to_owned(),
            started: crate::time::millis(time),
            latest: time.to_owned(),
            ..Turn::default()
        };
        cx.memory().gemini_chat.turn.insert(&key, turn, at);
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
        let Some(id) = f.id.0.clone() else { continue };
        unsent(cx, &id, false);
        if ended_already(cx, &id) {
            continue;
        }
        ended = true;
        let response = Response::read(f.response);
        let error = response.error.0.clone();
        if !invoked_already(cx, &id) {
            cx.push(ToolInvocation {
                call_id: id.clone(),
                parent_call_id: None,
                kind: tool_kind(f.name.as_deref().unwrap_or("")),
                tool_name: f.name.0.clone().unwrap_or_default(),
                title: None,
                input: Json::Value(json!({})),
                locations: None,
                model: None,
                mcp_server: None,
                mcp_tool: None,
                message_id: None,
            });
        }
        let cancelled = error
            .as_deref()
            .is_some_and(|e| e.contains("canceled") || e.contains("cancelled"));
        cx.push(ToolCompletion {
            call_id: id.clone(),
            status: match (&error, cancelled) {
                (None, _) => ToolCallStatus::Completed,
                (Some(_), true) => ToolCallStatus::Cancelled,
                (Some(_), false) => ToolCallStatus::Failed,
            },
            duration_ms: None,
            output: match &error {
                Some(e) => Some(super::gemini::error_output(None, Some(e))),
                None => response.output.0.map(Json::Str),
            },
            is_error: error.is_some(),
            content: None,
            locations: None,
            parent_call_id: None,
        });
        set_call(cx, &id, true);
    }
    note(cx, Last::Sent, None);
    if !ended {
        cx.push(Notice {
            subtype: Cow::Borrowed("gemini/function-response"),
            message: None,
        });
    }
    Ok(())
}

/// Ends `open`, a session's turn: at the next prompt, at a rewind that took its prompt back
/// (`rewound`), or at the end of the input ([`at_end`]). The file writes no end of a turn, so
/// each is inferred, from what the turn's records tell ([`Last`]):
/// - `interrupted` (`stopReason` `cancelled`), the calls still running `cancelled`: results of
///   its calls were never sent back to the model (Gemini CLI sends every result before the
///   turn goes on), or the model never answered its prompt and Gemini CLI did not take the
///   prompt back (it does so when the request fails);
/// - failed, with an `error`: a rewind took the prompt back; the model never answered the
///   results sent back to it (a later request that fails leaves no record,
///   `testdata/session-files/gemini/later-turn-500`); an `error` record came last;
/// - else completed (`success`, the stream's word).
///
/// The `turn_complete` carries the turn's tokens (its responses', each once) and its duration
/// (from its prompt to its last record), as the stream's `result` does.
fn close(open: Turn, cx: &mut Cx<'_>, rewound: bool) {
    let cancelled = !rewound && (!open.unsent.is_empty() || open.last == Last::Prompt);
    if cancelled {
        for id in &open.unsent {
            if ended_already(cx, id) {
                continue;
            }
            let ext = cx.push(ToolCompletion::cancelled(Cow::Owned(id.clone())));
            ext.put("insights.inferred", true);
            set_call(cx, id, true);
        }
    }
    let failed = rewound || (!cancelled && matches!(open.last, Last::Sent | Last::Error));
    let cause = if rewound {
        "the request failed: Gemini CLI took the prompt back out of the chat (the file keeps no cause)"
    } else if failed && open.last == Last::Sent {
        "the request failed: the model never answered the results sent back to it (the file keeps no cause)"
    } else {
        ""
    };
    if !cause.is_empty() {
        let ext = cx.push(error_event(Cow::Borrowed(cause), Severity::Error));
        ext.put("insights.inferred", true);
    }
    let usage = open.tokens.map(|t| TokenUsage {
        input_tokens: t.input,
        output_tokens: t.output,
        cache_read_tokens: Some(t.cache_read),
        cache_creation_tokens: None,
        reasoning_tokens: (t.reasoning > 0).then_some(t.reasoning),
    });
    let duration_ms = crate::time::millis(&open.latest)
        .zip(open.started)
        .and_then(|(end, start)| u64::try_from(end - start).ok());
    let ext = cx.push(TurnComplete {
        is_error: failed,
        subtype: Some(Cow::Borrowed(match (cancelled, failed) {
            (true, _) => "interrupted",
            (_, true) => "error",
            _ => "success",
        })),
        stop_reason: cancelled.then_some(Cow::Borrowed("cancelled")),
        usage,
        duration_ms,
        ..TurnComplete::default()
    });
    ext.put("insights.inferred", true);
}

/// At the end of the input ([`super::Provider::at_end`]): ends the turn a session left open
/// ([`close`]), at the time of its last record; nothing when no turn is open. The last turn of
/// a file has no other end: Gemini CLI writes each model message first without its
/// `toolCalls` and again with them, so the final answer looks like a message whose calls are
/// still to come until the file ends. One session a call: called again while it ends one.
pub fn at_end(cx: &mut Cx<'_>) {
    let turn =
        super::turns::take_open_turn(cx, |m| &mut m.gemini_chat.turn, |t| (&t.prompt, &t.latest));
    if let Some(turn) = turn {
        close(turn, cx, false);
    }
}

/// Notes a record of the session's open turn: what it was, its time, the tokens of a response.
fn note(cx: &mut Cx<'_>, last: Last, tokens: Option<crate::usage::Tokens>) {
    let sid = cx.session_id.take();
    let time = cx.timestamp.clone();
    let memo = &mut cx.memory().gemini_chat.turn;
    if let Some(turn) = memo.get_mut(sid.as_deref().unwrap_or("")) {
        turn.last = last;
        if let Some(t) = time {
            turn.latest.clear();
            turn.latest.push_str(&t);
        }
        if let Some(t) = tokens {
            turn.tokens.get_or_insert_with(Default::default).add(&t);
        }
    }
    cx.session_id = sid;
}

/// Notes that call `id` of the open turn awaits its `functionResponse` (`add`), or has it.
fn unsent(cx: &mut Cx<'_>, id: &str, add: bool) {
    let key = session_key(cx);
    let Some(turn) = cx.memory().gemini_chat.turn.get_mut(&key) else {
        return;
    };
    let at = turn.unsent.iter().position(|u| u == id);
    match (add, at) {
        (true, None) => turn.unsent.push(id.to_owned()),
        (false, Some(i)) => {
            turn.unsent.remove(i);
        }
        _ => {}
    }
}

/// When a call began, as far as the file tells: Gemini CLI names a call
/// `<tool>__<tool>_<ms>_<n>`, `<ms>` the time (Unix milliseconds) the model's call reached
/// it. The message's own time is the fallback; it is not the call's when Gemini CLI adds a
/// later call to an earlier message.
fn started(id: &str) -> Option<i64> {
    let mut parts = id.rsplitn(3, '_');
    let (_n, ms) = (parts.next()?, parts.next()?);
    (ms.len() == 13 && ms.bytes().all(|b| b.is_ascii_digit()))
        .then(|| ms.parse().ok())
        .flatten()
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
    let given = cx
        .memory()
        .gemini_chat
        .messages
        .get(&key)
        .cloned()
        .unwrap_or_default();
    let thoughts = r.thoughts.unwrap_or_default();
    for t in thoughts.iter().skip(given.thoughts) {
        let text = match (&t.subject.0, &t.description.0) {
            (Some(s), Some(d)) => Cow::Owned(format!("**{s}** {d}")),
            (Some(s), None) => s.clone(),
            (None, Some(d)) => d.clone(),
            (None, None) => continue,
        };
        cx.push(Text {
            text,
            kind: TextKind::Thinking,
            parent_call_id: None,
            model: r.model.0.clone(),
            message_id: r.id.0.clone(),
        });
    }
    let text = text_of(r.content).filter(|t| !t.is_empty());
    let new_text = !given.text && text.is_some();
    if let Some(t) = text.filter(|_| new_text) {
        cx.push(Text {
            text: t,
            kind: TextKind::Text,
            parent_call_id: None,
            model: r.model.0.clone(),
            message_id: r.id.0.clone(),
        });
    }
    for call in r.tool_calls.unwrap_or_default() {
        let Some(id) = call.id.0.clone() else {
            continue;
        };
        if ended_already(cx, &id) {
            continue;
        }
        let name = call.name.0.clone().unwrap_or_default();
        if !invoked_already(cx, &id) {
            // Read as the stream reads a `tool_use`: the same title, path and plan.
            let mut p = Params::read(call.args);
            let path = p.path();
            cx.push(ToolInvocation {
                call_id: id.clone(),
                kind: tool_kind(&name),
                tool_name: name.clone(),
                title: p.title(&name, &path),
                input: call.args.map_or_else(|| Json::Value(json!({})), Json::Raw),
                locations: path.map(|p| vec![p]),
                model: r.model.0.clone(),
                mcp_server: None,
                mcp_tool: None,
                message_id: r.id.0.clone(),
                parent_call_id: None,
            });
            if let Some(plan) = p.plan(&name, id.clone()) {
                cx.push(plan);
            }
            set_call(cx, &id, false);
            unsent(cx, &id, true);
        }
        let response = Response::of_result(call.result);
        let display = call
            .result_display
            .filter(|d| d.get().starts_with('"'))
            .and_then(|d| serde_json::from_str::<Str>(d.get()).ok());
        let success = call.status.as_deref() == Some("success");
        // A command the person stopped is `success` to Gemini CLI; its shell says otherwise.
        let stopped = success
            && (display.as_deref().map(str::trim) == Some("Command cancelled by user.")
                || response.stopped());
        let exit_code = response.exit_code().filter(|_| success && !stopped);
        let status = match call.status.as_deref() {
            _ if stopped => ToolCallStatus::Cancelled,
            Some("success") if exit_code.is_some_and(|c| c != 0) => ToolCallStatus::Failed,
            Some("success") => ToolCallStatus::Completed,
            Some("cancelled") | Some("canceled") => ToolCallStatus::Cancelled,
            Some("error") => ToolCallStatus::Failed,
            // Scheduled, executing, awaiting approval: not ended yet.
            _ => continue,
        };
        // The output the stream gives: what the tool displays (text only), an error's
        // message, a command's exit code as the stream's shell completions carry it.
        let output = match (&response.error.0, exit_code) {
            (Some(e), _) if status == ToolCallStatus::Failed => {
                Some(super::gemini::error_output(None, Some(e)))
            }
            (_, Some(code)) => Some(Json::Value(json!({
                "stdout": display.as_deref().unwrap_or(""),
                "stderr": "",
                "exit_code": code,
            }))),
            _ => display.map(Json::Str),
        };
        let duration_ms = call
            .timestamp
            .as_deref()
            .and_then(crate::time::millis)
            .and_then(|end| {
                let start = started(&id)
                    .filter(|s| *s <= end)
                    .or_else(|| r.timestamp.as_deref().and_then(crate::time::millis))?;
                u64::try_from(end - start).ok()
            });
        let ext = cx.push(ToolCompletion {
            call_id: id.clone(),
            status,
            duration_ms,
            output,
            is_error: status == ToolCallStatus::Failed,
            content: None,
            locations: None,
            parent_call_id: None,
        });
        if stopped || exit_code.is_some() {
            ext.put_opt("gemini.status", call.status.0.clone());
        }
        if stopped {
            ext.put("insights.inferred", true);
        }
        set_call(cx, &id, true);
        if status == ToolCallStatus::Completed {
            let display = call
                .result_display
                .filter(|d| d.get().starts_with('{'))
                .and_then(|d| serde_json::from_str::<Display>(d.get()).ok());
            let new_file = display
                .as_ref()
                .and_then(|d| d.is_new_file)
                .unwrap_or(false);
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
                "write_file" => call
                    .args
                    .and_then(|a| edits::from_input(a.get(), true, new_file)),
                "replace" | "edit" => call
                    .args
                    .and_then(|a| edits::from_input(a.get(), false, false)),
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
        r.tokens.and_then(ChatTokens::read).map(|t| (t, r.tokens))
    };
    note(cx, Last::Answer, usage.as_ref().map(|(t, _)| *t));
    if let Some((t, raw)) = usage {
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
            model: r.model.0.clone(),
            message_id: r.id.0.clone(),
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

/// Whether a chat file's line may tell `usage` anything `wanted`: all but the updates of
/// the header (`$set`), the model's records without tokens and (unless turns are wanted) the
/// person's, their type read from the first keys where that is certain
/// ([`crate::wire::head_str`]).
pub(crate) fn line_wanted(line: &[u8], wanted: crate::usage::Wanted) -> bool {
    static TOKENS: crate::usage::Marks = crate::usage::Marks::new(&[r#""tokens":"#]);
    if line.starts_with(br#"{"$set""#) {
        return false;
    }
    match crate::wire::head_str(line, br#""type":"#) {
        Some(b"gemini") => TOKENS.any_in(line),
        Some(b"user") => wanted == crate::usage::Wanted::ResponsesAndTurns,
        _ => true,
    }
}

/// What a chat file's record tells `usage` and `sessions`, read with the same [`Record`]:
/// a `gemini` record's tokens (a message written again counts once: the session and message
/// id identify it), a person's prompt, the session of the header. It reads a line
/// [`line_wanted`] took.
pub(crate) fn line_facts<'a>(
    line: &'a str,
    memo: &mut crate::usage::FileMemo,
) -> Option<crate::usage::LineFacts<'a>> {
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
            let tokens = ChatTokens::read(r.tokens?)?;
            if tokens.is_zero() {
                return None;
            }
            f.response =
                r.id.as_deref()
                    .map(|id| crate::ids::hash_pair(memo.session.as_deref().unwrap_or(""), id));
            f.model = r.model.0;
            f.usage = Some(tokens);
        }
        Some("user") => {
            f.turn = !r.content?.get().contains(r#""functionResponse""#);
            if !f.turn {
                return None;
            }
        }
        _ => return None,
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{convert_stream, kinds, testdata_jsonl};
    use serde_json::Value;

    const HEADER: &str = r#"{"sessionId":"s1","projectHash":"ab","startTime":"2026-11-26T13:15:30.454Z","lastUpdated":"2026-11-26T13:15:30.454Z","kind":"main"}"#;

    fn prompt(id: &str, text: &str) -> String {
        format!(
            r#"{{"id":"{id}","timestamp":"2026-11-26T13:15:31.000Z","type":"user","content":[{{"text":"{text}"}}]}}"#
        )
    }

    fn events(lines: &[&str]) -> Vec<Value> {
        convert_stream(&super::super::gemini::PROVIDER, lines)
    }

    fn probe(line: &str) -> Probe<'_> {
        let mut p = Probe::default();
        p.fill(line).expect("a JSON object");
        p
    }

    /// Every recorded chat file, line by line.
    fn recorded() -> Vec<(std::path::PathBuf, String)> {
        let files: Vec<_> = testdata_jsonl()
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("/.gemini/tmp/"))
            .collect();
        assert!(
            files.len() >= 16,
            "the recorded chat files: {}",
            files.len()
        );
        files
            .into_iter()
            .map(|p| {
                let text = std::fs::read_to_string(&p).expect("a recorded chat file");
                (p, text)
            })
            .collect()
    }

    #[test]
    fn sniff_takes_chat_lines_and_leaves_the_others() {
        for line in [
            HEADER,
            r#"{"$set":{"lastUpdated":"2026-11-26T13:15:30.576Z"}}"#,
            &prompt("u1", "hi"),
            r#"{"id":"m","timestamp":"2026-11-26T13:15:30.950Z","type":"gemini","content":"x"}"#,
            r#"{"id":"m","timestamp":"2026-11-26T13:15:30.950Z","type":"info","content":"x"}"#,
            // A message type of a later Gemini CLI: still a chat record by its shape.
            r#"{"id":"m","timestamp":"2026-11-26T13:15:30.950Z","type":"compression","content":"x"}"#,
        ] {
            assert!(sniff(&probe(line)), "{line}");
        }
        for line in [
            // Claude Code's session file, Gemini's stream-json, JSON-RPC.
            r#"{"type":"user","uuid":"u","timestamp":"t","message":{"role":"user","content":"x"},"sessionId":"s"}"#,
            r#"{"type":"message","timestamp":"2026-11-26T13:15:30.950Z","role":"user","content":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"session/update","params":{}}"#,
            // Of no known type, and without a message's content.
            r#"{"id":"m","timestamp":"2026-11-26T13:15:30.950Z","type":"whatever"}"#,
            r#"{"id":"m","timestamp":"t","type":"x","subtype":"y","content":"x"}"#,
        ] {
            assert!(!sniff(&probe(line)), "{line}");
        }
    }

    #[test]
    fn header_prompt_and_a_message_written_again_give_each_event_once() {
        let first = r#"{"id":"m1","timestamp":"2026-11-26T13:15:30.950Z","type":"gemini","content":"I'll check.","thoughts":[{"subject":"Plan","description":"run uname"}],"tokens":{"input":11552,"output":40,"cached":846,"thoughts":5,"tool":2,"total":11597},"model":"gemini-3.8-flash"}"#;
        let again = r#"{"id":"m1","timestamp":"2026-11-26T13:15:30.950Z","type":"gemini","content":"I'll check.","thoughts":[{"subject":"Plan","description":"run uname"}],"tokens":{"input":11552,"output":40,"cached":846,"thoughts":5,"tool":2,"total":11597},"model":"gemini-3.8-flash","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"uname -s"},"result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"Linux"}}}],"status":"success","resultDisplay":"Linux","description":"uname -s"}],"unknownMember":{"x":1}}"#;
        let response = r#"{"id":"u2","timestamp":"2026-11-26T13:15:31.161Z","type":"user","content":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"Linux"}}}]}"#;
        let p = prompt("u1", "What is the kernel?");
        let ev = events(&[HEADER, &p, first, again, response]);
        assert_eq!(
            kinds(&ev),
            [
                "session_init",
                "turn_start",
                "user_input",
                "text",
                "text",
                "usage_update",
                "tool_invocation",
                "tool_completion",
                "notice",
            ]
        );
        assert_eq!(ev[0]["sessionId"], "s1");
        assert_eq!(ev[0]["extensions"]["gemini.projectHash"], "ab");
        assert_eq!(ev[1]["extensions"]["insights.inferred"], true);
        assert_eq!(ev[2]["text"], "What is the kernel?");
        assert_eq!(ev[3]["kind"], "thinking");
        assert_eq!(ev[3]["text"], "**Plan** run uname");
        assert_eq!(ev[4]["kind"], "text");
        // Gemini's input counts the cached part: out of input, as every agent's is.
        assert_eq!(
            ev[5]["stepUsage"],
            serde_json::json!({"input_tokens": 11552 - 846 + 2, "output_tokens": 45,
                "cache_read_input_tokens": 846, "cache_creation_input_tokens": 0,
                "reasoning_output_tokens": 5})
        );
        assert_eq!(ev[6]["kind"], "execute");
        assert_eq!(ev[6]["title"], "uname -s");
        assert_eq!(ev[7]["status"], "completed");
        assert_eq!(ev[8]["subtype"], "gemini/function-response");
        assert!(ev.iter().all(|e| e["sessionId"] == "s1"));
    }

    #[test]
    fn a_stopped_call_and_a_prompt_with_results_unsent_end_the_turn_interrupted() {
        let call = r#"{"id":"m1","timestamp":"2026-11-26T13:17:33.514Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"sleep 30"},"result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"<untrusted_context>\nCommand was cancelled by user before it could complete. There was no output before it was cancelled.\n</untrusted_context>"}}}],"status":"success","resultDisplay":"Command cancelled by user.","description":"sleep 30"},{"id":"c2","name":"read_file","args":{"file_path":"/w/a"},"status":"executing"}],"thoughts":[],"model":"gemini-3.8-flash"}"#;
        let (p1, p2) = (prompt("u1", "Wait."), prompt("u2", "Still there?"));
        let ev = events(&[HEADER, &p1, call, &p2]);
        let got: Vec<(&str, &str, &str)> = ev
            .iter()
            .map(|e| {
                (
                    e["event"].as_str().unwrap_or(""),
                    e["callId"].as_str().or(e["subtype"].as_str()).unwrap_or(""),
                    e["status"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("session_init", "", ""),
                ("turn_start", "", ""),
                ("user_input", "", ""),
                ("tool_invocation", "c1", ""),
                ("tool_completion", "c1", "cancelled"),
                ("tool_invocation", "c2", ""),
                ("tool_completion", "c2", "cancelled"),
                ("turn_complete", "interrupted", ""),
                ("turn_start", "", ""),
                ("user_input", "", ""),
            ]
        );
        assert_eq!(ev[4]["extensions"]["gemini.status"], "success");
        for i in [4, 6, 7] {
            assert_eq!(ev[i]["extensions"]["insights.inferred"], true, "{}", ev[i]);
        }
        assert_eq!(ev[7]["stopReason"], "cancelled");
    }

    /// The events of a whole input as `insights` writes them: its lines, then what the
    /// converter ends at the end of the input ([`at_end`]).
    fn converted(lines: &[&str]) -> Vec<Value> {
        use crate::convert::{Converter, Options};
        let opts = Options::for_tests(1 << 20);
        let mut out = crate::output::Out::new(Vec::new());
        let mut diag = crate::diag::Diag::new(false);
        let input = lines.join("\n");
        let mut c = Converter::new(&opts, &mut out);
        c.run_reader(input.as_bytes(), "<test>", &mut diag)
            .expect("converted");
        out.flush().expect("flushed");
        let text = out.w.into_inner().expect("the output");
        text.split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).expect("an event"))
            .collect()
    }

    fn turn_completes(ev: &[Value]) -> Vec<&Value> {
        ev.iter()
            .filter(|e| e["event"] == "turn_complete")
            .collect()
    }

    const ANSWER: &str = r#"{"id":"m2","timestamp":"2026-11-26T13:17:34.000Z","type":"gemini","content":"Done.","tokens":{"input":100,"output":7,"cached":40,"thoughts":3,"tool":0,"total":110},"model":"gemini-3.8-flash"}"#;

    #[test]
    fn a_prompt_after_the_answer_to_every_result_ends_the_turn_completed() {
        let call = r#"{"id":"m1","timestamp":"2026-11-26T13:17:33.514Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"false"},"result":[],"status":"error"}]}"#;
        let response = r#"{"id":"u2","timestamp":"2026-11-26T13:15:31.161Z","type":"user","content":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"error":"exit 1"}}}]}"#;
        let (p1, p2) = (prompt("u1", "a"), prompt("u3", "b"));
        let ev = events(&[HEADER, &p1, call, response, ANSWER, &p2]);
        let done: Vec<&Value> = ev
            .iter()
            .filter(|e| e["event"] == "tool_completion")
            .collect();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["status"], "failed");
        assert_eq!(done[0]["isError"], true);
        let turn = turn_completes(&ev);
        assert_eq!(turn.len(), 1);
        assert_eq!(turn[0]["subtype"], "success", "{}", turn[0]);
        assert!(turn[0].get("isError").is_none(), "{}", turn[0]);
        assert_eq!(turn[0]["extensions"]["insights.inferred"], true);
        // The answer's tokens, as its usage_update counts them.
        assert_eq!(
            turn[0]["usage"],
            serde_json::json!({"inputTokens": 60, "outputTokens": 10,
                "cacheReadTokens": 40, "reasoningTokens": 3})
        );
    }

    /// `testdata/session-files/gemini/later-turn-500`: the request that sends the results back
    /// fails, and the file keeps only the results sent.
    #[test]
    fn results_sent_back_that_the_model_never_answered_fail_the_turn() {
        let call = r#"{"id":"m1","timestamp":"2026-11-26T13:17:33.514Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"uname"},"result":[],"status":"success","resultDisplay":"Linux"}]}"#;
        let response = r#"{"id":"u2","timestamp":"2026-11-26T13:17:34.161Z","type":"user","content":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"Linux"}}}]}"#;
        let p1 = prompt("u1", "a");
        for lines in [
            vec![HEADER, &p1, call, response],
            vec![HEADER, &p1, call, response, &prompt("u3", "b")],
        ] {
            let ev = converted(&lines);
            let turn = turn_completes(&ev);
            assert_eq!(turn.len(), 1 + usize::from(lines.len() == 5));
            assert_eq!(turn[0]["isError"], true, "{}", turn[0]);
            assert_eq!(turn[0]["subtype"], "error");
            let error = ev.iter().find(|e| e["event"] == "error").expect("an error");
            assert_eq!(error["extensions"]["insights.inferred"], true);
        }
    }

    #[test]
    fn the_end_of_the_input_ends_the_last_turn_once_with_what_the_file_knows() {
        let p1 = prompt("u1", "a");
        let ev = converted(&[
            HEADER,
            &p1,
            ANSWER,
            r#"{"$set":{"lastUpdated":"2026-11-26T13:17:34.001Z"}}"#,
        ]);
        let turn = turn_completes(&ev);
        assert_eq!(turn.len(), 1);
        let t = turn[0];
        assert_eq!(t["subtype"], "success");
        assert_eq!(t["extensions"]["insights.inferred"], true);
        assert_eq!(t["sessionId"], "s1");
        assert_eq!(t["usage"]["inputTokens"], 60);
        // From the prompt (13:15:31.000) to the answer (13:17:34.000), at the answer's time,
        // on the input's last line.
        assert_eq!(t["durationMs"], 123_000);
        assert_eq!(t["timestamp"], "2026-11-26T13:17:34.000Z");
        assert_eq!(t["line"], 4);
        assert_eq!(t["id"], "u1-end:0");
        assert_eq!(ev.last(), Some(t));
        // The header names the session; the prompt alone starts the turn.
        let starts = ev.iter().filter(|e| e["event"] == "turn_start").count();
        assert_eq!(starts, 1);

        // A chat resumed in the same file (a second header, the history again, a new
        // prompt): the new prompt ends the first turn, the end of the input the second.
        let history = r#"{"$set":{"messages":[{"id":"u1","timestamp":"t","type":"user","content":[{"text":"a"}]},{"id":"m2","timestamp":"t","type":"gemini","content":"Done."}]}}"#;
        let again = ANSWER.replace("m2", "m3");
        let p2 = prompt("u4", "b");
        let ev = converted(&[HEADER, &p1, ANSWER, HEADER, history, &p2, &again]);
        let turn = turn_completes(&ev);
        assert_eq!(turn.len(), 2);
        assert!(turn.iter().all(|t| t["subtype"] == "success"), "{turn:?}");
        assert_eq!(turn[0]["line"], 6);
        assert_eq!(turn[1]["id"], "u4-end:0");
        let starts = ev.iter().filter(|e| e["event"] == "turn_start").count();
        assert_eq!(starts, 2);

        // A prompt the model never answered, and that Gemini CLI did not take back (as it
        // does when the request fails): the person stopped it.
        let ev = converted(&[HEADER, &p1]);
        let turn = turn_completes(&ev);
        assert_eq!(turn.len(), 1);
        assert_eq!(turn[0]["stopReason"], "cancelled");
        assert!(turn[0].get("usage").is_none());
    }

    #[test]
    fn a_rewind_that_drops_the_prompt_fails_the_turn() {
        let context = r#"{"$set":{"messages":[{"id":"ctx","timestamp":"t","type":"user","content":[{"text":"<session_context>"}]}]}}"#;
        let p = prompt("u1", "Say hello.");
        let ev = events(&[HEADER, context, &p, context]);
        assert_eq!(
            kinds(&ev),
            [
                "session_init",
                "notice",
                "turn_start",
                "user_input",
                "notice",
                "error",
                "turn_complete"
            ]
        );
        assert_eq!(ev[5]["severity"], "error");
        assert_eq!(ev[6]["isError"], true);
        assert_eq!(ev[6]["extensions"]["insights.inferred"], true);
        // A rewind that keeps the prompt fails nothing.
        let keep = r#"{"$set":{"messages":[{"id":"u1"}]}}"#;
        let ev = events(&[HEADER, &p, keep]);
        assert_eq!(
            kinds(&ev),
            ["session_init", "turn_start", "user_input", "notice"]
        );
    }

    #[test]
    fn a_call_ended_only_by_its_function_response_is_invoked_then_cancelled() {
        let response = r#"{"id":"u2","timestamp":"2026-11-26T13:16:35.799Z","type":"user","content":[{"functionResponse":{"id":"w1","name":"write_file","response":{"error":"Tool \"write_file\" was canceled by the user."}}}]}"#;
        let p = prompt("u1", "Create notes.md");
        let ev = events(&[HEADER, &p, response]);
        assert_eq!(
            kinds(&ev),
            [
                "session_init",
                "turn_start",
                "user_input",
                "tool_invocation",
                "tool_completion"
            ]
        );
        assert_eq!(ev[3]["toolName"], "write_file");
        assert_eq!(ev[3]["kind"], "edit");
        assert_eq!(ev[4]["status"], "cancelled");
    }

    #[test]
    fn outputs_exit_codes_times_and_plans_are_the_streams() {
        let call = r#"{"id":"m1","timestamp":"2026-12-05T10:28:17.435Z","type":"gemini","content":"","toolCalls":[
            {"id":"run_shell_command__run_shell_command_1796466497337_0","name":"run_shell_command","args":{"command":"echo checking; exit 1","description":"Run the check"},"result":[{"functionResponse":{"id":"run_shell_command__run_shell_command_1796466497337_0","name":"run_shell_command","response":{"output":"<untrusted_context>\nOutput: checking\nExit Code: 1\nProcess Group PGID: 15502\n</untrusted_context>"}}}],"status":"success","timestamp":"2026-12-05T10:28:17.503Z","resultDisplay":"checking","description":"echo checking; exit 1"},
            {"id":"run_shell_command__run_shell_command_1796466497340_1","name":"run_shell_command","args":{"command":"uname -s"},"result":[{"functionResponse":{"id":"run_shell_command__run_shell_command_1796466497340_1","name":"run_shell_command","response":{"output":"<untrusted_context>\nOutput: Linux\nProcess Group PGID: 1\n</untrusted_context>"}}}],"status":"success","timestamp":"2026-12-05T10:28:17.500Z","resultDisplay":"Linux"},
            {"id":"read_file__read_file_x","name":"read_file","args":{"file_path":"/w/missing.txt"},"result":[{"functionResponse":{"id":"read_file__read_file_x","name":"read_file","response":{"error":"File not found: /w/missing.txt"}}}],"status":"error","timestamp":"2026-12-05T10:28:17.532Z","resultDisplay":"File not found.","description":"Reads and returns the content of a specified file."},
            {"id":"write_todos__write_todos_1796466497400_3","name":"write_todos","args":{"todos":[{"description":"a","status":"in_progress"},{"description":"b","status":"pending"}]},"status":"success","timestamp":"2026-12-05T10:28:17.450Z","resultDisplay":{"todos":[]}}]}"#
            .replace('\n', "");
        let ev = events(&[HEADER, &call]);
        let of = |kind: &str| -> Vec<&Value> { ev.iter().filter(|e| e["event"] == kind).collect() };
        let done = of("tool_completion");
        // Exit 1 fails, the code carried as the stream's shell completions carry it.
        assert_eq!(done[0]["status"], "failed");
        assert_eq!(
            done[0]["output"],
            serde_json::json!({"stdout": "checking", "stderr": "", "exit_code": 1})
        );
        assert_eq!(done[0]["extensions"]["gemini.status"], "success");
        // From the call's start (the time in its id) to its result.
        assert_eq!(done[0]["durationMs"], 166);
        assert_eq!(done[1]["status"], "completed");
        assert_eq!(done[1]["output"], "Linux");
        assert_eq!(done[2]["status"], "failed");
        assert_eq!(
            done[2]["output"],
            serde_json::json!({"message": "File not found: /w/missing.txt"})
        );
        // No time in the id: from the message's time.
        assert_eq!(done[2]["durationMs"], 97);
        assert!(done[3].get("output").is_none(), "{}", done[3]);
        // Titles are the stream's, not the tool's description.
        let calls = of("tool_invocation");
        assert_eq!(calls[0]["title"], "Run the check");
        assert_eq!(calls[2]["title"], "/w/missing.txt");
        let plans = of("plan_update");
        assert_eq!(plans.len(), 1);
        assert_eq!(
            plans[0]["callId"],
            "write_todos__write_todos_1796466497400_3"
        );
        assert_eq!(plans[0]["entries"][0]["status"], "in_progress");
        assert_eq!(plans[0]["entries"][1]["content"], "b");
        assert_eq!(
            started("write_file__write_file_1796466512735_0"),
            Some(1796466512735)
        );
        assert_eq!(started("read_file__read_file_x"), None);
    }

    #[test]
    fn writes_and_replacements_that_succeed_change_files() {
        let call = r##"{"id":"m1","timestamp":"2026-11-26T13:14:40.025Z","type":"gemini","content":"","toolCalls":[
            {"id":"w1","name":"write_file","args":{"file_path":"/w/notes.md","content":"# Notes\n"},"status":"success","resultDisplay":{"isNewFile":true}},
            {"id":"r1","name":"replace","args":{"file_path":"/w/config.txt","old_string":"debug = false","new_string":"debug = true"},"status":"success","resultDisplay":{"isNewFile":false}},
            {"id":"r2","name":"replace","args":{"file_path":"/w/other.txt","old_string":"a","new_string":"b"},"status":"error"}]}"##
            .replace('\n', "");
        let ev = events(&[HEADER, &call]);
        let files: Vec<(&str, &str, &str)> = ev
            .iter()
            .filter(|e| e["event"] == "file_change")
            .map(|e| {
                (
                    e["path"].as_str().unwrap_or(""),
                    e["changeKind"].as_str().unwrap_or(""),
                    e["callId"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            files,
            [
                ("/w/notes.md", "add", "w1"),
                ("/w/config.txt", "update", "r1")
            ]
        );
    }

    #[test]
    fn info_warning_error_and_unknown_records() {
        let line = |ty: &str| {
            format!(
                r#"{{"id":"i","timestamp":"2026-11-26T13:14:40.025Z","type":"{ty}","content":"Request failed with status 429"}}"#
            )
        };
        let (info, warning, error, other) = (
            line("info"),
            line("warning"),
            line("error"),
            line("compression"),
        );
        let ev = events(&[HEADER, &info, &warning, &error, &other]);
        assert_eq!(
            kinds(&ev),
            ["session_init", "notice", "error", "error", "notice"]
        );
        assert_eq!(ev[1]["subtype"], "gemini/info");
        assert_eq!(ev[2]["severity"], "warning");
        assert_eq!(ev[3]["severity"], "error");
        assert_eq!(ev[4]["subtype"], "gemini/compression");
    }

    #[test]
    fn odd_values_make_no_panic() {
        for line in [
            r#"{"sessionId":7,"projectHash":null}"#,
            r#"{"$set":{"messages":"no"}}"#,
            r#"{"$set":null}"#,
            r#"{"id":"m","timestamp":"x","type":"gemini","content":{"a":1},"tokens":"many","toolCalls":[{"id":null},{"name":"write_file","status":"success"}]}"#,
            r#"{"id":"m","timestamp":"x","type":"gemini","toolCalls":{"not":"a list"}}"#,
            r#"{"id":"m","timestamp":"x","type":"user","content":[{"functionResponse":null},{"text":5},7]}"#,
            r#"{"id":"m","timestamp":"x","type":"user","content":"plain"}"#,
            r#"{"id":"m","timestamp":"x","type":"gemini","tokens":{"input":-1,"output":1e30,"cached":99999999999}}"#,
            r#"{"id":"m","timestamp":"x","type":"gemini","tokens":{"input":18446744073709551615,"output":18446744073709551615,"thoughts":18446744073709551615,"tool":18446744073709551615}}"#,
        ] {
            let p = probe(line);
            let mut cx = Cx::default();
            let _ = convert(line, &p, &mut cx);
            let _ = line_facts(line, &mut crate::usage::FileMemo::default());
        }
    }

    #[test]
    fn every_recorded_chat_line_is_mapped() {
        for (path, text) in recorded() {
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                assert!(sniff(&probe(l)), "{}:{}", path.display(), i + 1);
            }
            let ev = events(&lines);
            assert!(
                ev.iter().all(|e| e["sessionId"] != ""),
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn line_facts_count_as_the_events_do() {
        let mut checked = 0;
        for (path, text) in recorded() {
            let lines: Vec<&str> = text.lines().collect();
            // Each response's stepUsage as the events state it.
            let ev = events(&lines);
            let steps: Vec<&Value> = ev.iter().filter(|e| e["event"] == "usage_update").collect();
            let mut memo = crate::usage::FileMemo::default();
            let mut seen = std::collections::BTreeSet::new();
            for l in &lines {
                let Some(f) = line_facts(l, &mut memo) else {
                    continue;
                };
                let Some(t) = f.usage else { continue };
                let s = |e: &&&Value, k: &str| e["stepUsage"][k].as_u64();
                let step = steps
                    .iter()
                    .find(|e| {
                        s(e, "input_tokens") == Some(t.input)
                            && s(e, "output_tokens") == Some(t.output)
                            && s(e, "cache_read_input_tokens") == Some(t.cache_read)
                            && s(e, "reasoning_output_tokens") == Some(t.reasoning)
                    })
                    .unwrap_or_else(|| panic!("{}: no usage_update like {t:?}", path.display()));
                assert_eq!(step["model"].as_str(), f.model.as_deref());
                assert!(
                    f.session.is_some(),
                    "{}: a response before the header",
                    path.display()
                );
                seen.insert(f.response.expect("a response key"));
                checked += 1;
            }
            // Counted once by session and message id, the lines give what the events give.
            assert_eq!(seen.len(), steps.len(), "{}", path.display());
        }
        assert!(checked >= 15, "{checked}");
    }
}
