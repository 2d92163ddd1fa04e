//! Qwen Code's own chat files: `~/.qwen/projects/<project>/chats/<session>.jsonl`, and a
//! subagent's `~/.qwen/projects/<project>/subagents/<session>/agent-<type>-<call>.jsonl`
//! (`testdata/session-files/qwen/`, Qwen Code 0.24.4). Read by the `qwen` provider, whose
//! events they become; a session's chat file and its subagents' files are read as one
//! conversation, merged by time ([`crate::input::group_conversations`]), so a subagent's records
//! come inside its call, and its responses (which name no model) are under the session's model. Each line is a record `{uuid, parentUuid, sessionId, timestamp, type,
//! cwd, version, …}` whose `message` holds Gemini API content (`{role, parts}`: `text`,
//! `thought`, `functionCall`, `functionResponse`):
//!
//! | record | events |
//! |---|---|
//! | the first record of a session | `session_init` (session, cwd, version) |
//! | `user` (a person's prompt; a subagent's prompt carries `agentId`) | `user_input`; the session's open turn ends first (below) |
//! | `assistant` | `text` per text part (`thought: true`: thinking), `tool_invocation` per `functionCall` (kinds and names as the stream's), `usage_update` from `usageMetadata` under the record's `model` |
//! | `tool_result` | `tool_completion` per `functionResponse` (and `subagent_complete` for an `agent` call, whose `tool_invocation` came with a `subagent_spawn`): `toolCallResult.status` `success` completed (a shell command whose `resultDisplay.exitCode` ≠ 0 failed), `error` failed (`errorType` `execution_denied`: the approval mode refused it, listed in the turn's `permissionDenials`), `cancelled` cancelled; a successful `write_file`/`edit` → `file_change` from `resultDisplay` (`filePath`, `fileDiff`; no `originalContent`: a new file) |
//! | `system` `ui_telemetry` `qwen-code.api_error` | `error` (`httpStatus` its `status_code`) |
//! | other `system` records (`ui_telemetry`, `attribution_snapshot`, `chat_compression`, …) | `notice` `qwen/<subtype>` |
//! | a line of `~/.qwen/usage_record.jsonl` (a session's summary: models, tools, files) | `notice` `qwen/usage_record`, the line in `extensions."qwen.usageRecord"` |
//!
//! **Inferred** (marked `insights.inferred`): turn ends, the file writing none. A prompt
//! starts a turn; the turn ends at the session's next prompt or at the end of the input
//! ([`at_end`]), failed when an API error came after its last response, else completed, with
//! its responses' tokens as `usage` and, under their model, `modelUsage`.
//!
//! Tokens (`usageMetadata`, Gemini's shape): `promptTokenCount` counts the cached tokens
//! (`cachedContentTokenCount`), taken out of input here; `candidatesTokenCount` counts the
//! reasoning (`thoughtsTokenCount`) when `totalTokenCount` is prompt + candidates (Qwen's
//! OpenAI-compatible requests), else it is added. [`line_facts`] reads them the same way for
//! `insights usage`.

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
    /// What a chat file's records need of earlier records.
    pub struct Memory {
        /// Every session announced (`session_init` written).
        pub sessions: Memo<()>,
        /// The open turn of each session, by session id.
        pub turns: Memo<Turn>,
        /// Calls invoked, by call id: their tool name, and the path they change (`write_file`, `edit`).
        pub calls: Memo<(String, Option<String>)>,
    }
}

/// A session's open turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    /// Its prompt's record id (the end's anchor).
    prompt: String,
    tokens: Option<crate::usage::Tokens>,
    model: Option<String>,
    /// An API error came after its last response.
    failed: bool,
    /// Calls the approval mode refused: (tool, call id).
    denied: Vec<(String, String)>,
    /// Its last record's time (RFC 3339).
    latest: String,
}

/// Whether a line is a chat-file record: no `session_id` (the stream's), a `message` of
/// `{role, parts}`, or a `system` record with a `systemPayload`.
pub fn sniff(p: &Probe) -> bool {
    if p.ty.is_none() {
        return usage_record(p);
    }
    if p.session_id.is_some() || p.uuid.is_none() {
        return false;
    }
    match p.ty() {
        Some("user" | "assistant" | "tool_result") => p.message.is_some_and(|m| {
            let m = m.get();
            m.starts_with(r#"{"role":""#)
                && m[9..]
                    .split_once('"')
                    .is_some_and(|(_, rest)| rest.starts_with(r#","parts":"#))
        }),
        Some("system") => p.member("systemPayload").is_some(),
        _ => false,
    }
}

/// A line of `~/.qwen/usage_record.jsonl`: one session's summary (`{version, sessionId,
/// startTime, project, durationMs, models, tools, files}`), written when it ends.
fn usage_record(p: &Probe) -> bool {
    p.jsonrpc.is_none()
        && p.method.is_none()
        && p.member("models").is_some()
        && p.member("sessionId").is_some()
        && p.member("startTime").is_some()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record<'a> {
    #[serde(rename = "type", borrow)]
    ty: OptStr<'a>,
    uuid: OptStr<'a>,
    session_id: OptStr<'a>,
    timestamp: OptStr<'a>,
    cwd: OptStr<'a>,
    version: OptStr<'a>,
    model: OptStr<'a>,
    subtype: OptStr<'a>,
    agent_id: OptStr<'a>,
    #[serde(borrow)]
    message: Option<Message<'a>>,
    usage_metadata: Option<Usage>,
    #[serde(borrow)]
    tool_call_result: Option<CallResult<'a>>,
    #[serde(borrow)]
    system_payload: Option<Payload<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    parts: Option<Vec<Part<'a>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    #[serde(borrow)]
    text: OptStr<'a>,
    thought: Option<bool>,
    #[serde(borrow)]
    function_call: Option<Call<'a>>,
    #[serde(borrow)]
    function_response: Option<Response<'a>>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    id: OptStr<'a>,
    name: OptStr<'a>,
    #[serde(borrow)]
    args: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Response<'a> {
    #[serde(borrow)]
    id: OptStr<'a>,
    #[serde(borrow)]
    response: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallResult<'a> {
    #[serde(borrow)]
    status: OptStr<'a>,
    error_type: OptStr<'a>,
    #[serde(borrow)]
    result_display: Option<&'a RawValue>,
}

/// The members of a `resultDisplay` object read here.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Display<'a> {
    exit_code: Option<i64>,
    #[serde(borrow)]
    file_path: OptStr<'a>,
    file_diff: OptStr<'a>,
    #[serde(borrow)]
    original_content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    prompt_token_count: Option<Count>,
    candidates_token_count: Option<Count>,
    thoughts_token_count: Option<Count>,
    total_token_count: Option<Count>,
    cached_content_token_count: Option<Count>,
}

impl Usage {
    /// The response's tokens by `usage`'s kinds (the module doc says how).
    fn tokens(&self) -> crate::usage::Tokens {
        let n = |c: Option<Count>| c.map_or(0, |c| c.0);
        let (prompt, cached) = (
            n(self.prompt_token_count),
            n(self.cached_content_token_count),
        );
        let (out, thoughts) = (n(self.candidates_token_count), n(self.thoughts_token_count));
        let inside = self.total_token_count.is_some_and(|t| t.0 == prompt + out);
        crate::usage::Tokens {
            input: prompt.saturating_sub(cached),
            output: if inside { out } else { out + thoughts },
            cache_read: cached,
            reasoning: thoughts,
            ..Default::default()
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payload<'a> {
    #[serde(borrow)]
    ui_event: Option<UiEvent<'a>>,
}

#[derive(Deserialize)]
struct UiEvent<'a> {
    #[serde(rename = "event.name", borrow)]
    name: OptStr<'a>,
    status_code: Option<Count>,
    #[serde(borrow)]
    error: OptStr<'a>,
    error_type: OptStr<'a>,
}

pub fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    cx.own_turns = true;
    if probe.ty.is_none() {
        // `usage_record.jsonl`: the session's summary, kept whole.
        cx.session_id = probe.member("sessionId").and_then(|r| r.str());
        let ext = cx.push(Notice {
            subtype: Cow::Borrowed("qwen/usage_record"),
            message: None,
        });
        ext.put("qwen.usageRecord", Json::Raw(serde_json::from_str(line)?));
        return Ok(());
    }
    let r: Record = serde_json::from_str(line)?;
    cx.session_id = r.session_id.0.clone().filter(|s| !s.is_empty());
    cx.anchor = r.uuid.0.clone();
    cx.wire_time(r.timestamp.0.clone());
    let session = cx.session_id.as_deref().unwrap_or("").to_owned();
    let line_no = cx.line;
    // A subagent's records are its call's.
    let parent: Option<Str<'a>> = r
        .agent_id
        .0
        .as_deref()
        .and_then(agent_call)
        .map(|c| Cow::Owned(c.to_owned()));
    if !cx.memory().qwen_chat.sessions.contains(&session) {
        cx.memory().qwen_chat.sessions.insert(&session, (), line_no);
        if parent.is_none() {
            cx.push(SessionInit {
                cwd: r.cwd.0.clone(),
                version: r.version.0.clone(),
                ..SessionInit::default()
            });
        }
    }
    if let Some(t) = &r.timestamp.0 {
        if let Some(turn) = cx.memory().qwen_chat.turns.get_mut(&session) {
            turn.latest.clear();
            turn.latest.push_str(t);
        }
    }
    let parts = r.message.and_then(|m| m.parts).unwrap_or_default();
    match r.ty.as_deref() {
        Some("user") => {
            let text: String = parts.iter().filter_map(|p| p.text.as_deref()).collect();
            if parent.is_none() {
                end_turn(cx, &session);
                cx.push(TurnStart { model: None })
                    .put("insights.inferred", true);
                let prompt = r.uuid.as_deref().unwrap_or("").to_owned();
                cx.memory().qwen_chat.turns.insert(
                    &session,
                    Turn {
                        prompt,
                        latest: r.timestamp.as_deref().unwrap_or("").to_owned(),
                        ..Turn::default()
                    },
                    line_no,
                );
            }
            cx.push(UserInput {
                text: Cow::Owned(text),
                images: None,
                is_synthetic: false,
                parent_call_id: parent,
            });
        }
        Some("assistant") => assistant(
            parts,
            r.model.0,
            r.usage_metadata,
            r.uuid.0,
            parent,
            &session,
            cx,
        ),
        Some("tool_result") => tool_result(parts, r.tool_call_result, parent, &session, cx),
        Some("system") => {
            let ui = r.system_payload.and_then(|p| p.ui_event);
            match ui {
                Some(u) if u.name.as_deref() == Some("qwen-code.api_error") => {
                    let message = u
                        .error
                        .0
                        .or(u.error_type.0)
                        .unwrap_or(Cow::Borrowed("API error"));
                    cx.push(ErrorEvent {
                        message,
                        severity: Severity::Error,
                        code: None,
                        http_status: count(u.status_code),
                        will_retry: None,
                        attempt: None,
                        max_retries: None,
                        retry_delay_ms: None,
                        request_id: None,
                        parent_call_id: parent,
                    });
                    if let Some(t) = cx.memory().qwen_chat.turns.get_mut(&session) {
                        t.failed = true;
                    }
                }
                _ => {
                    let sub = r.subtype.as_deref().unwrap_or("system");
                    cx.push(Notice {
                        subtype: Cow::Owned(format!("qwen/{sub}")),
                        message: None,
                    });
                }
            }
        }
        other => return Err(Unmapped(format!("Qwen chat record of type {other:?}"))),
    }
    Ok(())
}

/// The call id in a subagent's `agentId` (`<type>-<call id>`; Qwen's call ids start `call_`).
fn agent_call(agent: &str) -> Option<&str> {
    agent.find("call_").map(|i| &agent[i..])
}

fn assistant<'a>(
    parts: Vec<Part<'a>>,
    model: Option<Str<'a>>,
    usage: Option<Usage>,
    id: Option<Str<'a>>,
    parent: Option<Str<'a>>,
    session: &str,
    cx: &mut Cx<'a>,
) {
    let line = cx.line;
    // A subagent's records name no model: it runs on its session's, the one the main agent's
    // records named last (kept with the model a stream's init names: [`super::models`]). Its
    // `.meta.json` says the same, which `usage` reads ([`subagent_model`]).
    let model = match model {
        Some(m) => {
            let models = &mut cx.memory().models.by_session;
            if parent.is_none() && models.get(session).is_none_or(|known| *known != *m) {
                models.insert(session, m.to_string(), line);
            }
            Some(m)
        }
        None => cx
            .memory()
            .models
            .by_session
            .get(session)
            .map(|m| Cow::Owned(m.clone())),
    };
    for p in parts {
        if let Some(c) = p.function_call {
            let name = c.name.0.unwrap_or_default();
            let call_id = c.id.0.unwrap_or_default();
            let args = c.args.filter(|a| crate::wire::is_object(a));
            let a: Args = args
                .and_then(|a| serde_json::from_str(a.get()).ok())
                .unwrap_or_default();
            let path = a.file_path.0;
            cx.memory().qwen_chat.calls.insert(
                &call_id,
                (name.to_string(), path.as_deref().map(str::to_owned)),
                line,
            );
            let agent = matches!(&*name, "agent" | "task");
            cx.push(ToolInvocation {
                call_id: call_id.clone(),
                parent_call_id: parent.clone(),
                kind: super::qwen::tool_kind(&name),
                tool_name: name,
                title: None,
                input: args.map_or(Json::Value(json!({})), Json::Raw),
                locations: path.map(|p| vec![p]),
                model: None,
                mcp_server: None,
                mcp_tool: None,
                message_id: id.clone(),
            });
            if agent {
                cx.push(SubagentSpawn {
                    call_id,
                    agent_type: a.subagent_type.0,
                    description: a.description.0,
                    is_resume: false,
                    resume_agent_id: None,
                    prompt: a.prompt.0,
                    parent_call_id: parent.clone(),
                });
            }
        } else if let Some(text) = p.text.0 {
            cx.push(Text {
                text,
                kind: if p.thought == Some(true) {
                    TextKind::Thinking
                } else {
                    TextKind::Text
                },
                parent_call_id: parent.clone(),
                model: model.clone(),
                message_id: id.clone(),
            });
        }
    }
    let Some(u) = usage else { return };
    let t = u.tokens();
    cx.push(UsageUpdate {
        step_usage: Json::Value(json!({
            "input_tokens": t.input,
            "output_tokens": t.output,
            "cache_read_input_tokens": t.cache_read,
            "reasoning_tokens": t.reasoning,
        })),
        total: None,
        context_window: None,
        context_tokens: None,
        cost_usd: None,
        parent_call_id: parent.clone(),
        model: model.clone(),
        message_id: id,
    });
    // The turn's tokens: the main agent's and its subagents' (the stream's `result` counts both).
    if let Some(turn) = cx.memory().qwen_chat.turns.get_mut(session) {
        turn.tokens.get_or_insert_with(Default::default).add(&t);
        if parent.is_none() {
            turn.failed = false;
        }
        if turn.model.is_none() {
            turn.model = model.map(|m| m.into_owned());
        }
    }
}

/// The members of a call's `args` read here: the path a file tool changes, an `agent` call's
/// subagent.
#[derive(Deserialize, Default)]
struct Args<'a> {
    #[serde(borrow)]
    file_path: OptStr<'a>,
    description: OptStr<'a>,
    prompt: OptStr<'a>,
    subagent_type: OptStr<'a>,
}

fn tool_result<'a>(
    parts: Vec<Part<'a>>,
    result: Option<CallResult<'a>>,
    parent: Option<Str<'a>>,
    session: &str,
    cx: &mut Cx<'a>,
) {
    let display: Display = result
        .as_ref()
        .and_then(|r| r.result_display)
        .filter(|d| crate::wire::is_object(d))
        .and_then(|d| serde_json::from_str(d.get()).ok())
        .unwrap_or_default();
    let status_word = result
        .as_ref()
        .and_then(|r| r.status.as_deref())
        .unwrap_or("");
    let denied = result.as_ref().and_then(|r| r.error_type.as_deref()) == Some("execution_denied");
    for p in parts {
        let Some(resp) = p.function_response else {
            continue;
        };
        let call_id = resp.id.0.unwrap_or_default();
        let status = match status_word {
            "success" if display.exit_code.unwrap_or(0) != 0 => ToolCallStatus::Failed,
            "success" => ToolCallStatus::Completed,
            "cancelled" => ToolCallStatus::Cancelled,
            _ => ToolCallStatus::Failed,
        };
        let call = cx.memory().qwen_chat.calls.remove(&call_id);
        cx.push(ToolCompletion {
            call_id: call_id.clone(),
            status,
            duration_ms: None,
            output: resp.response.map(Json::Raw),
            is_error: status != ToolCallStatus::Completed,
            content: None,
            locations: None,
            parent_call_id: parent.clone(),
        });
        let Some((tool, path)) = call else { continue };
        if matches!(tool.as_str(), "agent" | "task") {
            cx.push(SubagentComplete {
                call_id: call_id.clone(),
                agent_id: None,
                status: Some(Cow::Borrowed(status.as_str())),
                summary: None,
                duration_ms: None,
                total_tokens: None,
                tool_use_count: None,
                parent_call_id: parent.clone(),
            });
        }
        if denied {
            if let Some(turn) = cx.memory().qwen_chat.turns.get_mut(session) {
                turn.denied.push((tool.clone(), call_id.to_string()));
            }
        }
        if status == ToolCallStatus::Completed
            && matches!(tool.as_str(), "write_file" | "edit" | "replace")
        {
            let Some(path) = display.file_path.0.clone().or(path.map(Cow::Owned)) else {
                continue;
            };
            let created =
                tool == "write_file" && display.original_content.is_none_or(|c| c.get() == "null");
            cx.push(FileChange {
                path,
                change_kind: if created {
                    ChangeKind::Add
                } else {
                    ChangeKind::Update
                },
                move_path: None,
                diff: display.file_diff.0.clone(),
                cumulative: false,
                call_id: Some(call_id),
                parent_call_id: parent.clone(),
            });
        }
    }
}

/// Ends the session's open turn (inferred): `turn_complete` with its tokens.
fn end_turn(cx: &mut Cx<'_>, session: &str) {
    let Some(turn) = cx.memory().qwen_chat.turns.remove(session) else {
        return;
    };
    close(turn, cx);
}

fn close(turn: Turn, cx: &mut Cx<'_>) {
    let usage = turn.tokens.map(|t| TokenUsage {
        input_tokens: t.input,
        output_tokens: t.output,
        cache_read_tokens: Some(t.cache_read),
        cache_creation_tokens: None,
        reasoning_tokens: Some(t.reasoning),
    });
    let model_usage = match (&usage, turn.model) {
        (Some(u), Some(m)) => Some(super::codex::usage_under(m, u)),
        _ => None,
    };
    let denials: Vec<Json<'_>> = turn
        .denied
        .into_iter()
        .map(|(tool, id)| Json::Value(json!({"tool_name": tool, "tool_use_id": id})))
        .collect();
    let ext = cx.push(TurnComplete {
        is_error: turn.failed,
        subtype: Some(Cow::Borrowed(if turn.failed {
            "error_during_execution"
        } else {
            "success"
        })),
        usage,
        model_usage,
        permission_denials: (!denials.is_empty()).then_some(denials),
        ..TurnComplete::default()
    });
    ext.put("insights.inferred", true);
}

/// Ends one session's open turn after the input's last line ([`super::Provider::at_end`]).
pub fn at_end(cx: &mut Cx<'_>) {
    let turn =
        super::turns::take_open_turn(cx, |m| &mut m.qwen_chat.turns, |t| (&t.prompt, &t.latest));
    if let Some(turn) = turn {
        close(turn, cx);
    }
}

// ---------------------------------------------------------------------------------------------
// usage and sessions

/// The model a subagent's file (`…/subagents/<session>/agent-*.jsonl`) ran on, whose records
/// name none: the `persistedCliFlags.model` of the `.meta.json` beside it (the session's
/// model, which the subagent runs on).
pub(crate) fn subagent_model(file: &std::path::Path) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Meta {
        persisted_cli_flags: Option<Flags>,
    }
    #[derive(Deserialize)]
    struct Flags {
        model: Option<String>,
    }
    if !file.to_string_lossy().contains("/subagents/") {
        return None;
    }
    let text = std::fs::read_to_string(file.with_extension("meta.json")).ok()?;
    serde_json::from_str::<Meta>(&text)
        .ok()?
        .persisted_cli_flags?
        .model
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FactsRecord<'a> {
    #[serde(rename = "type", borrow)]
    ty: OptStr<'a>,
    uuid: OptStr<'a>,
    session_id: OptStr<'a>,
    timestamp: OptStr<'a>,
    cwd: OptStr<'a>,
    model: OptStr<'a>,
    agent_id: OptStr<'a>,
    usage_metadata: Option<Usage>,
}

/// Whether a chat file's line may tell `usage` anything `wanted`: [`line_facts`] reads only
/// the lines this takes, those with a usage or (for turns) of a person. A line that names a
/// person may name a usage otherwise spelled (`"usageMetadata"` before a space, or with a `\u`
/// escape): it is read for responses too.
pub(crate) fn line_wanted(line: &[u8], wanted: crate::usage::Wanted) -> bool {
    use crate::usage::{Marks, Wanted};
    static USAGE: Marks = Marks::new(&[r#""usageMetadata":"#]);
    static USER: Marks = Marks::new(&[r#""type":"user""#]);
    static NAMED: Marks = Marks::new(&[r#""usageMetadata""#, r"\u"]);
    USAGE.any_in(line)
        || (USER.any_in(line) && (wanted == Wanted::ResponsesAndTurns || NAMED.any_in(line)))
}

/// What a chat-file record tells `usage` and `sessions`: an `assistant` record's tokens
/// ([`Usage::tokens`], as the events count them), a person's prompt (a `user` record without
/// `agentId`). It reads a line [`line_wanted`] took.
pub(crate) fn line_facts<'a>(
    line: &'a str,
    memo: &crate::usage::FileMemo,
) -> Option<crate::usage::LineFacts<'a>> {
    let r: FactsRecord = serde_json::from_str(line).ok()?;
    let mut f = crate::usage::LineFacts {
        time: r.timestamp.as_deref().and_then(crate::time::millis),
        session: r.session_id.0,
        cwd: r.cwd.0,
        ..Default::default()
    };
    match (r.ty.as_deref(), r.usage_metadata) {
        (Some("assistant"), Some(u)) => {
            let t = u.tokens();
            if t.is_zero() {
                return None;
            }
            // A subagent's records name no model: its `.meta.json`'s ([`subagent_model`]).
            f.model = r.model.0.or_else(|| memo.model.clone().map(Cow::Owned));
            f.response = r
                .uuid
                .as_deref()
                .map(|id| crate::ids::hash_pair(f.session.as_deref().unwrap_or(""), id));
            f.usage = Some(t);
        }
        (Some("user"), _) if r.agent_id.is_none() => f.turn = true,
        _ => return None,
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::kinds;

    const USER: &str = r#"{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-12-05T22:47:50.949Z","type":"user","provenance":"real_user","cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[{"text":"Hi"}]}}"#;
    const ASSISTANT: &str = r#"{"uuid":"a1","parentUuid":"u1","sessionId":"s","timestamp":"2026-12-05T22:47:52.090Z","type":"assistant","cwd":"/w","version":"0.24.4","model":"mock-model","message":{"role":"model","parts":[{"text":"Think.","thought":true},{"text":"Hello."}]},"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":10,"thoughtsTokenCount":2,"totalTokenCount":110,"cachedContentTokenCount":60}}"#;

    #[test]
    fn sniff_takes_chat_records_only() {
        let p = |l: &str| {
            let mut p = Probe::default();
            p.fill(l).expect("JSON");
            sniff(&p)
        };
        assert!(p(USER));
        assert!(p(ASSISTANT));
        assert!(!p(
            r#"{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"hi"}}"#
        ));
        assert!(!p(
            r#"{"type":"assistant","uuid":"u","session_id":"s","message":{"role":"model","parts":[]}}"#
        ));
    }

    #[test]
    fn a_prompt_and_an_answer_make_a_turn() {
        let ev =
            crate::test_support::convert_output(&super::super::qwen::PROVIDER, &[USER, ASSISTANT]);
        assert_eq!(
            kinds(&ev),
            [
                "session_init",
                "turn_start",
                "user_input",
                "text",
                "text",
                "usage_update",
                "turn_complete"
            ]
        );
        assert_eq!(ev[3]["kind"], "thinking");
        assert_eq!(ev[5]["stepUsage"]["input_tokens"], 40);
        assert_eq!(ev[5]["stepUsage"]["output_tokens"], 10);
        assert_eq!(ev[6]["modelUsage"]["mock-model"]["cacheReadTokens"], 60);
    }

    #[test]
    fn line_facts_count_as_the_events_do() {
        let memo = crate::usage::FileMemo::default();
        let f = line_facts(ASSISTANT, &memo).expect("a response");
        let t = f.usage.expect("tokens");
        assert_eq!(
            (t.input, t.output, t.cache_read, t.reasoning),
            (40, 10, 60, 2)
        );
        assert!(line_facts(USER, &memo).expect("a prompt").turn);
    }
}
