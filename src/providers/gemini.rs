//! Gemini CLI `-p … --output-format stream-json`, recorded with Gemini CLI 0.61.0
//! (`testdata/gemini/`).
//!
//! | line | events |
//! |---|---|
//! | `init` | `session_init` |
//! | `message` role `user` | `user_input` |
//! | `message` role `assistant` | `stream_delta` kind text when `delta: true` (always, in 0.61.0), else `text` |
//! | `tool_use` | `tool_invocation` (+ `subagent_spawn` for `invoke_agent`, + `plan_update` for `write_todos`) |
//! | `tool_result` | `tool_completion` (status success / error, the error's type and message) |
//! | `error` | `error` (severity warning / error) |
//! | `result` | `turn_complete` with usage per model, duration and tool count |
//!
//! Gemini streams assistant text only as deltas and never sends the whole message, so its
//! text reaches consumers as `stream_delta` events; `reduce` and `replay` join them. There is
//! no thinking, no per-step usage and no cost in this format; a tool's result does not name the
//! tool (only `tool_id`, whose prefix is the tool name), and edits carry no diff.

use super::edits::{self, Edit};
use super::memo::Memo;
use super::{Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::wire::{count, is_null, is_object, Count, OptStr};
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;
use std::borrow::Cow;

pub const PROVIDER: Provider = Provider {
    name: "gemini",
    display: "Gemini CLI",
    cc_name: "gemini",
    about: "Gemini CLI stream-json (-p --output-format stream-json)",
    jsonrpc: false,
    sniff,
    convert,
    // Capabilities: filled in by the `insights providers` change from this file's mapping
    // (ask_user, MCP names, invoke_agent, write_todos); check.
    reading: super::Reading::PLAIN,
    caps: super::Capabilities {
        streaming_deltas: true,
        tool_calls: true,
        tool_results: true,
        status_updates: false,
        reasoning: false,
        permissions: false,
        questions: true,
        file_changes: true,
        command_exec: true,
        mcp: true,
        usage: true,
        cost: false,
        subagents: true,
        plans: true,
    },
    infers_turns: true,
    whole_messages: true,
    at_end: Some(super::gemini_chat::at_end),
    talk: None,
};

crate::providers::memo::remember! {
    /// What Gemini CLI lines need of earlier lines of the stream.
    pub struct Memory {
        /// The session the stream announced (`init`), under [`SESSION`]: only `init` lines
        /// name it, and `gemini -p` runs one session per stream.
        pub session: Memo<String>,
        /// The change a `write_file` or `replace` call asks for, by call id, until its
        /// `tool_result` (whose success makes it a `file_change`; results carry no change).
        pub edits: Memo<Edit>,
    }
}

/// The key of [`Memory::session`].
const SESSION: &str = "session";

const TYPES: &[&str] = &[
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "result",
];

/// Every Gemini line has `type` and `timestamp`; `result` has no `subtype` (Claude's has).
fn sniff(p: &Probe) -> bool {
    super::gemini_chat::sniff(p)
        || p.timestamp.is_some()
            && p.subtype.is_none()
            && p.ty().is_some_and(|t| TYPES.contains(&t))
            && (p.ty() != Some("message") || p.message.is_none())
}

#[derive(Deserialize)]
struct Line<'a> {
    session_id: OptStr<'a>,
    model: OptStr<'a>,
    role: OptStr<'a>,
    content: OptStr<'a>,
    delta: Option<bool>,
    tool_name: OptStr<'a>,
    tool_id: OptStr<'a>,
    #[serde(borrow)]
    parameters: Option<&'a RawValue>,
    status: OptStr<'a>,
    #[serde(borrow)]
    output: Option<&'a RawValue>,
    // Boxed, like `stats`: rare members that would make every line's struct larger to move.
    #[serde(borrow)]
    error: Option<Box<ErrorWire<'a>>>,
    severity: OptStr<'a>,
    message: OptStr<'a>,
    #[serde(borrow)]
    stats: Option<Box<Stats<'a>>>,
}

#[derive(Deserialize)]
struct ErrorWire<'a> {
    #[serde(rename = "type", borrow)]
    ty: OptStr<'a>,
    message: OptStr<'a>,
    /// Not seen in 0.61.0 output; read should a version send it.
    code: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Stats<'a> {
    input_tokens: Option<Count>,
    /// The part of `input_tokens` not read from the cache.
    input: Option<Count>,
    output_tokens: Option<Count>,
    cached: Option<Count>,
    duration_ms: Option<Count>,
    tool_calls: Option<Count>,
    #[serde(borrow)]
    models: Option<Pairs<'a, ModelStats>>,
}

#[derive(Deserialize)]
struct ModelStats {
    input_tokens: Option<Count>,
    input: Option<Count>,
    output_tokens: Option<Count>,
    cached: Option<Count>,
}

/// The members of tool parameters that titles, locations, subagents and plans come from: read
/// the same way from the stream's `tool_use` and from a chat file's `toolCalls`.
#[derive(Deserialize, Default)]
pub(super) struct Params<'a> {
    command: OptStr<'a>,
    description: OptStr<'a>,
    file_path: OptStr<'a>,
    absolute_path: OptStr<'a>,
    path: OptStr<'a>,
    dir_path: OptStr<'a>,
    pattern: OptStr<'a>,
    url: OptStr<'a>,
    prompt: OptStr<'a>,
    query: OptStr<'a>,
    agent_name: OptStr<'a>,
    #[serde(borrow)]
    todos: Option<Vec<Todo<'a>>>,
}

#[derive(Deserialize)]
struct Todo<'a> {
    #[serde(borrow)]
    description: OptStr<'a>,
    status: OptStr<'a>,
}

impl<'a> Params<'a> {
    /// A call's parameters (an object; anything else reads as none).
    pub(super) fn read(input: Option<&'a RawValue>) -> Params<'a> {
        input
            .and_then(|i| serde_json::from_str(i.get()).ok())
            .unwrap_or_default()
    }

    /// The path the call works on.
    pub(super) fn path(&self) -> Option<Str<'a>> {
        self.file_path
            .0
            .clone()
            .or(self.absolute_path.0.clone())
            .or(self.path.0.clone())
            .or(self.dir_path.0.clone())
    }

    /// The call's title, by the kind of tool `name` is.
    pub(super) fn title(&self, name: &str, path: &Option<Str<'a>>) -> Option<Str<'a>> {
        match tool_kind(name) {
            ToolKind::Execute => self.description.0.clone().or(self.command.0.clone()),
            ToolKind::Search => self.pattern.0.clone().or(self.query.0.clone()),
            ToolKind::Fetch => self.url.0.clone().or(self.prompt.0.clone()),
            ToolKind::Browse => self.query.0.clone(),
            ToolKind::Think => self.agent_name.0.clone().or(self.prompt.0.clone()),
            _ => path.clone(),
        }
    }

    /// The plan a `write_todos` call sets (its `todos`); none for any other tool.
    pub(super) fn plan(&mut self, name: &str, call_id: Str<'a>) -> Option<PlanUpdate<'a>> {
        if name != "write_todos" {
            return None;
        }
        let entries = self
            .todos
            .take()
            .unwrap_or_default()
            .into_iter()
            .map(|t| PlanEntry {
                content: t.description.0.unwrap_or_default(),
                status: match t.status.as_deref() {
                    Some("in_progress") => PlanStatus::InProgress,
                    Some("completed") => PlanStatus::Completed,
                    _ => PlanStatus::Pending,
                },
                priority: None,
                active_form: None,
            })
            .collect();
        Some(PlanUpdate {
            entries,
            call_id: Some(call_id),
            parent_call_id: None,
            explanation: None,
        })
    }
}

/// A failed call's output: the error's type and message, as the stream's `tool_result`
/// states them (a chat file keeps the message only).
pub(super) fn error_output(ty: Option<&str>, message: Option<&str>) -> Json<'static> {
    Json::Value(match ty {
        Some(ty) => json!({ "type": ty, "message": message }),
        None => json!({ "message": message }),
    })
}

/// ToolKind of a Gemini CLI tool name.
pub fn tool_kind(name: &str) -> ToolKind {
    if name.starts_with("mcp__") || name.contains("__mcp") {
        return ToolKind::Mcp;
    }
    match name {
        "run_shell_command" | "list_background_processes" | "read_background_output" => {
            ToolKind::Execute
        }
        "read_file" | "read_many_files" | "list_directory" => ToolKind::Read,
        "replace" | "write_file" | "edit" => ToolKind::Edit,
        "grep_search" | "glob" | "search_file_content" => ToolKind::Search,
        "web_fetch" => ToolKind::Fetch,
        "google_web_search" => ToolKind::Browse,
        "invoke_agent" => ToolKind::Think,
        "ask_user" => ToolKind::Ask,
        "write_todos" | "save_memory" | "update_topic" => ToolKind::Memory,
        _ => ToolKind::Other,
    }
}

fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    if super::gemini_chat::sniff(probe) {
        return super::gemini_chat::convert(line, probe, cx);
    }
    let w: Line = crate::members::read(line, probe.members())?;
    cx.wire_time(probe.timestamp.and_then(|r| r.str()));
    let ty = probe.ty().unwrap_or("");
    match w.session_id.0.clone().filter(|s| !s.is_empty()) {
        Some(id) => {
            if ty == "init" {
                let line = cx.line;
                let memory = &mut cx.memory().gemini.session;
                memory.insert(SESSION, id.to_string(), line);
            }
            cx.session_id = Some(id);
        }
        // Only `init` names the session; the lines after it are that session's.
        None => {
            cx.session_id = cx
                .memory()
                .gemini
                .session
                .get(SESSION)
                .map(|s| Cow::Owned(s.clone()))
        }
    }
    match ty {
        "init" => {
            cx.push(SessionInit {
                model: w.model.0,
                ..SessionInit::default()
            });
        }
        "message" => {
            let text = w.content.0.unwrap_or_default();
            if w.role.as_deref() == Some("user") {
                cx.push(UserInput {
                    text,
                    images: None,
                    is_synthetic: false,
                    parent_call_id: None,
                });
            } else if w.delta.unwrap_or(false) {
                cx.push(StreamDelta {
                    kind: StreamDeltaKind::Text,
                    parent_call_id: None,
                    text_delta: Some(text),
                    json_delta: None,
                    block_index: None,
                    call_id: None,
                    message_id: None,
                });
            } else {
                cx.push(Text {
                    text,
                    kind: TextKind::Text,
                    parent_call_id: None,
                    model: None,
                    message_id: None,
                });
            }
        }
        "tool_use" => {
            let name = w.tool_name.0.unwrap_or_default();
            let call_id = w.tool_id.0.unwrap_or_default();
            let input = w.parameters.filter(|p| is_object(p));
            let mut p = Params::read(input);
            let path = p.path();
            let title = p.title(&name, &path);
            let edit = match &*name {
                "write_file" => input.and_then(|i| edits::from_input(i.get(), true, false)),
                "replace" | "edit" => input.and_then(|i| edits::from_input(i.get(), false, false)),
                _ => None,
            };
            if let Some(edit) = edit.filter(|_| !call_id.is_empty()) {
                let line = cx.line;
                cx.memory().gemini.edits.insert(&call_id, edit, line);
            }
            cx.push(ToolInvocation {
                call_id: call_id.clone(),
                parent_call_id: None,
                kind: tool_kind(&name),
                tool_name: name.clone(),
                title,
                input: input.map_or_else(|| Json::Value(json!({})), Json::Raw),
                locations: path.map(|p| vec![p]),
                model: None,
                mcp_server: None,
                mcp_tool: None,
                message_id: None,
            });
            if name == "invoke_agent" {
                cx.push(SubagentSpawn {
                    call_id: call_id.clone(),
                    agent_type: p.agent_name.0,
                    description: p.prompt.0.clone(),
                    is_resume: false,
                    resume_agent_id: None,
                    prompt: p.prompt.0,
                    parent_call_id: None,
                });
            } else if let Some(plan) = p.plan(&name, call_id) {
                cx.push(plan);
            }
        }
        "tool_result" => {
            let ok = w.status.as_deref() != Some("error");
            let output = match (&w.error, w.output.filter(|o| !is_null(o))) {
                (Some(e), _) if !ok => Some(error_output(e.ty.as_deref(), e.message.as_deref())),
                (_, Some(o)) => Some(Json::Raw(o)),
                _ => None,
            };
            let call_id = w.tool_id.0.unwrap_or_default();
            // A call that asked for a change: used up by its result, whatever it says.
            let edit = if call_id.is_empty() {
                None
            } else {
                cx.memory().gemini.edits.remove(&call_id)
            };
            let ext = cx.push(ToolCompletion {
                call_id: call_id.clone(),
                status: if ok {
                    ToolCallStatus::Completed
                } else {
                    ToolCallStatus::Failed
                },
                duration_ms: None,
                output,
                is_error: !ok,
                content: None,
                locations: None,
                parent_call_id: None,
            });
            if let Some(e) = w.error {
                ext.put_opt("gemini.errorType", e.ty.0);
            }
            if let Some(edit) = edit.filter(|_| ok) {
                edits::file_change(edit, call_id, None, cx);
            }
        }
        "error" => {
            let severity = match w.severity.as_deref() {
                Some("warning") => Severity::Warning,
                _ => Severity::Error,
            };
            let (http_status, code) = api_error(w.message.as_deref().unwrap_or(""));
            cx.push(ErrorEvent {
                message: w.message.0.unwrap_or(Cow::Borrowed("error")),
                severity,
                code,
                http_status,
                will_retry: None,
                attempt: None,
                max_retries: None,
                retry_delay_ms: None,
                request_id: None,
                parent_call_id: None,
            });
        }
        "result" => {
            let failed = w.status.as_deref() == Some("error");
            let stats = w.stats;
            let usage = stats.as_ref().map(|s| TokenUsage {
                input_tokens: count(s.input.or(s.input_tokens)).unwrap_or(0),
                output_tokens: count(s.output_tokens).unwrap_or(0),
                cache_read_tokens: count(s.cached),
                cache_creation_tokens: None,
                reasoning_tokens: None,
            });
            let model_usage = stats.as_ref().and_then(|s| s.models.as_ref()).map(|m| {
                Pairs(
                    m.0.iter()
                        .map(|(name, u)| {
                            let mu = ModelTokenUsage {
                                tokens: TokenUsage {
                                    input_tokens: count(u.input.or(u.input_tokens)).unwrap_or(0),
                                    output_tokens: count(u.output_tokens).unwrap_or(0),
                                    cache_read_tokens: count(u.cached),
                                    cache_creation_tokens: None,
                                    reasoning_tokens: None,
                                },
                                ..ModelTokenUsage::default()
                            };
                            (name.clone(), mu)
                        })
                        .collect(),
                )
            });
            let error = w.error;
            if failed {
                let (message, http_status, code) = match error.as_ref() {
                    Some(e) => {
                        let (status, code) = api_error(e.message.as_deref().unwrap_or(""));
                        let code = e.code.as_ref().and_then(code_text).or(code);
                        (e.message.0.clone(), status, code)
                    }
                    None => (None, None, None),
                };
                let ext = cx.push(ErrorEvent {
                    message: message.unwrap_or(Cow::Borrowed("the turn failed")),
                    severity: Severity::Error,
                    code,
                    http_status,
                    will_retry: Some(false),
                    attempt: None,
                    max_retries: None,
                    retry_delay_ms: None,
                    request_id: None,
                    parent_call_id: None,
                });
                ext.put_opt(
                    "gemini.errorType",
                    error.as_ref().and_then(|e| e.ty.0.clone()),
                );
            }
            let ext = cx.push(TurnComplete {
                is_error: failed,
                subtype: w.status.0,
                errors: error
                    .as_ref()
                    .and_then(|e| e.message.0.clone())
                    .map(|m| vec![m]),
                duration_ms: stats.as_ref().and_then(|s| count(s.duration_ms)),
                usage,
                model_usage,
                ..TurnComplete::default()
            });
            ext.put_opt(
                "gemini.toolCalls",
                stats.as_ref().and_then(|s| count(s.tool_calls)),
            );
            ext.put_opt("gemini.errorType", error.and_then(|e| e.ty.0));
        }
        other => return Err(Unmapped(format!("unknown Gemini event type {other:?}"))),
    }
    Ok(())
}

/// The HTTP status and the status name an API error message carries:
/// `[API Error: {"error":{"code":500,"message":…,"status":"INTERNAL"}}]` (the Gemini API's
/// error body), or `[API Error: 429 …]`. Nothing when the message has neither (Gemini CLI's
/// rate-limit message names no status on stdout).
pub(super) fn api_error(message: &str) -> (Option<u64>, Option<Str<'static>>) {
    #[derive(Deserialize)]
    struct Body {
        error: Option<Inner>,
    }
    #[derive(Deserialize)]
    struct Inner {
        code: Option<u64>,
        status: Option<String>,
    }
    let Some(inner) = message.strip_prefix("[API Error: ") else {
        return (None, None);
    };
    let inner = inner.split("]\n").next().unwrap_or(inner);
    let inner = inner.strip_suffix(']').unwrap_or(inner);
    if inner.starts_with('{') {
        if let Ok(Body { error: Some(e) }) = serde_json::from_str::<Body>(inner) {
            let status = e.code.filter(|c| (100..600).contains(c));
            return (status, e.status.map(Cow::Owned));
        }
        return (None, None);
    }
    let digits = inner.bytes().take_while(u8::is_ascii_digit).count();
    let status = (digits == 3 && inner[digits..].starts_with(' '))
        .then(|| inner[..3].parse().ok())
        .flatten();
    (status, None)
}

/// An error `code` as text (a string, or a number written out).
fn code_text(v: &serde_json::Value) -> Option<Str<'static>> {
    match v {
        serde_json::Value::String(s) => Some(Cow::Owned(s.clone())),
        serde_json::Value::Number(n) => Some(Cow::Owned(n.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;
    use serde_json::Value;

    /// One line's events; the line must be one detection takes for this provider.
    fn conv(line: &str) -> Vec<Value> {
        test_support::convert_sniffed(&PROVIDER, line)
    }

    /// Converts lines in order, with the memory a stream carries; each event with its
    /// `sessionId`.
    fn stream(lines: &[&str]) -> Vec<Value> {
        crate::test_support::convert_stream(&PROVIDER, lines)
    }

    const INIT: &str =
        r#"{"type":"init","timestamp":"2026-01-01T00:00:00Z","session_id":"s1","model":"auto"}"#;

    #[test]
    fn every_event_names_the_session_init_announced() {
        let ev = stream(&[
            INIT,
            r#"{"type":"message","timestamp":"2026-01-01T00:00:00Z","role":"user","content":"hi"}"#,
            r#"{"type":"result","timestamp":"2026-01-01T00:00:01Z","status":"success"}"#,
        ]);
        assert!(ev.iter().all(|e| e["sessionId"] == "s1"), "{ev:?}");
        // A stream cut before its init says nothing of the session.
        let ev = stream(&[
            r#"{"type":"message","timestamp":"2026-01-01T00:00:00Z","role":"user","content":"hi"}"#,
        ]);
        assert_eq!(ev[0]["sessionId"], "");
    }

    #[test]
    fn a_failed_result_is_an_error_then_a_failed_turn() {
        let ev = stream(&[
            INIT,
            r#"{"type":"result","timestamp":"2026-01-01T00:00:01Z","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":500,\"message\":\"boom\",\"status\":\"INTERNAL\"}}]"}}"#,
        ]);
        assert_eq!(ev[1]["event"], "error");
        assert_eq!(ev[1]["httpStatus"], 500);
        assert_eq!(ev[1]["code"], "INTERNAL");
        assert_eq!(ev[1]["extensions"]["gemini.errorType"], "unknown");
        assert_eq!(ev[2]["event"], "turn_complete");
        assert_eq!(ev[2]["isError"], true);
        // A message that names no status gives none.
        let ev = stream(&[
            r#"{"type":"result","timestamp":"2026-01-01T00:00:01Z","status":"error","error":{"type":"unknown","message":"[API Error: rate limit reached]\nPlease wait"}}"#,
        ]);
        assert_eq!(ev[0]["event"], "error");
        assert!(ev[0].get("httpStatus").is_none() && ev[0].get("code").is_none());
        assert_eq!(ev[1]["isError"], true);
        assert_eq!(api_error("[API Error: 429 Too Many Requests]").0, Some(429));
        assert_eq!(api_error("[API Error: 12 apples]").0, None);
    }

    #[test]
    fn successful_writes_and_replaces_are_file_changes_from_their_input() {
        let ev = stream(&[
            INIT,
            r##"{"type":"tool_use","timestamp":"2026-01-01T00:00:00Z","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"/w/notes.md","content":"# Notes\n"}}"##,
            r#"{"type":"tool_use","timestamp":"2026-01-01T00:00:00Z","tool_name":"replace","tool_id":"r1","parameters":{"file_path":"/w/c.txt","old_string":"debug = false","new_string":"debug = true"}}"#,
            r#"{"type":"tool_use","timestamp":"2026-01-01T00:00:00Z","tool_name":"replace","tool_id":"r2","parameters":{"file_path":"/w/d.txt","old_string":"a","new_string":"b"}}"#,
            r#"{"type":"tool_result","timestamp":"2026-01-01T00:00:00Z","tool_id":"w1","status":"success"}"#,
            r#"{"type":"tool_result","timestamp":"2026-01-01T00:00:00Z","tool_id":"r1","status":"success"}"#,
            r#"{"type":"tool_result","timestamp":"2026-01-01T00:00:00Z","tool_id":"r2","status":"error","error":{"type":"EDIT_NO_OCCURRENCE_FOUND","message":"no match"}}"#,
        ]);
        let changes: Vec<&Value> = ev.iter().filter(|e| e["event"] == "file_change").collect();
        assert_eq!(changes.len(), 2, "{ev:?}");
        assert_eq!(changes[0]["path"], "/w/notes.md");
        assert_eq!(changes[0]["changeKind"], "add");
        assert_eq!(changes[0]["callId"], "w1");
        assert_eq!(
            changes[0]["diff"],
            "--- /dev/null\n+++ b/w/notes.md\n@@ -0,0 +1,1 @@\n+# Notes\n"
        );
        assert_eq!(changes[0]["extensions"]["insights.inferred"], true);
        assert_eq!(changes[1]["path"], "/w/c.txt");
        assert_eq!(changes[1]["changeKind"], "update");
        assert_eq!(
            changes[1]["diff"],
            "--- a/w/c.txt\n+++ b/w/c.txt\n@@ -1,1 +1,1 @@\n-debug = false\n+debug = true\n"
        );
        // A result whose call was not in the stream says nothing of a change.
        let ev = stream(&[
            r#"{"type":"tool_result","timestamp":"2026-01-01T00:00:00Z","tool_id":"w9","status":"success"}"#,
        ]);
        assert_eq!(ev.len(), 1);
    }

    #[test]
    fn tool_error_result() {
        let ev = conv(
            r#"{"type":"tool_result","timestamp":"2026-01-01T00:00:00Z","tool_id":"run_shell_command-1","status":"error","error":{"type":"TOOL_EXECUTION_ERROR","message":"Command failed"}}"#,
        );
        assert_eq!(ev[0]["status"], "failed");
        assert_eq!(ev[0]["output"]["message"], "Command failed");
        assert_eq!(
            ev[0]["extensions"]["gemini.errorType"],
            "TOOL_EXECUTION_ERROR"
        );
    }

    #[test]
    fn warning_error_event() {
        let ev = conv(
            r#"{"type":"error","timestamp":"2026-01-01T00:00:00Z","severity":"warning","message":"Loop detected, stopping execution"}"#,
        );
        assert_eq!(ev[0]["severity"], "warning");
    }

    #[test]
    fn todos_are_a_plan() {
        let ev = conv(
            r#"{"type":"tool_use","timestamp":"2026-01-01T00:00:00Z","tool_name":"write_todos","tool_id":"t","parameters":{"todos":[{"description":"a","status":"in_progress"}]}}"#,
        );
        assert_eq!(ev[0]["kind"], "memory");
        assert_eq!(ev[1]["event"], "plan_update");
        assert_eq!(ev[1]["entries"][0]["status"], "in_progress");
    }

    #[test]
    fn claude_and_codex_lines_are_not_gemini() {
        for line in [
            r#"{"type":"result","subtype":"success","timestamp":"2026-01-01T00:00:00Z"}"#,
            r#"{"type":"error","message":"Reconnecting... 1/5"}"#,
            r#"{"type":"user","message":{"content":"hi"},"timestamp":"2026-01-01T00:00:00Z"}"#,
        ] {
            let probe: Probe = serde_json::from_str(line).unwrap();
            assert!(!sniff(&probe), "{line}");
        }
    }

    /// The adapter contract's `assistant.message`: Gemini CLI's stream-json writes the agent's
    /// messages as deltas only (`"delta":true`); the converter writes each whole where it ends
    /// (the tool call, the result), inferred.
    #[test]
    fn delta_messages_are_written_whole_where_they_end() {
        let ev = test_support::convert_output(
            &PROVIDER,
            &[
                INIT,
                r#"{"type":"message","timestamp":"2026-01-01T00:00:00Z","role":"user","content":"hi"}"#,
                r#"{"type":"message","timestamp":"2026-01-01T00:00:01Z","role":"assistant","content":"I'll ","delta":true}"#,
                r#"{"type":"message","timestamp":"2026-01-01T00:00:01Z","role":"assistant","content":"look.","delta":true}"#,
                r#"{"type":"tool_use","timestamp":"2026-01-01T00:00:02Z","tool_name":"read_file","tool_id":"r1","parameters":{"file_path":"a"}}"#,
                r#"{"type":"tool_result","timestamp":"2026-01-01T00:00:03Z","tool_id":"r1","status":"success","output":"x"}"#,
                r#"{"type":"message","timestamp":"2026-01-01T00:00:04Z","role":"assistant","content":"Done.","delta":true}"#,
                r#"{"type":"result","timestamp":"2026-01-01T00:00:05Z","status":"success"}"#,
            ],
        );
        let got: Vec<String> = ev
            .iter()
            .filter(|e| e["event"] != "stream_delta")
            .map(|e| match e["event"].as_str().unwrap() {
                "text" => format!("text {}", e["text"].as_str().unwrap()),
                k => k.to_owned(),
            })
            .collect();
        assert_eq!(
            got,
            [
                "session_init",
                "turn_start",
                "user_input",
                "text I'll look.",
                "tool_invocation",
                "tool_completion",
                "text Done.",
                "turn_complete"
            ]
        );
        for e in ev.iter().filter(|e| e["event"] == "text") {
            assert_eq!(e["extensions"]["insights.inferred"], true);
            assert_eq!(e["sessionId"], "s1");
            // The time of the line whose event ended the message.
            assert!(e["timestamp"].is_string());
        }
    }
}
