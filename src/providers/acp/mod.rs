//! ACP, the Agent Client Protocol (JSON-RPC 2.0 between a client and an agent): the agent's
//! output alone, or a tee of both directions. Recorded with Gemini CLI 0.61.0 `--acp` and
//! claude-agent-acp 0.49.0 (`testdata/acp-gemini/`, `testdata/acp-claude/`); schema v1.
//! [`talk`] is the client side, for `insights run`; `insights run`'s lines of both directions
//! are converted here as a tee is.
//!
//! | message | events |
//! |---|---|
//! | `initialize` result | `notice` `initialize` (agent name and version, capabilities in `extensions`): no session exists yet |
//! | `session/new`, `session/load` result | `session_init` (with the agent's name and version from `initialize`; a `session/load` answer names no session, its request does), then `session_mode` and `config_options` when present |
//! | `session/prompt` (client) | `turn_start`, `user_input` |
//! | `session/prompt` result | `turn_complete` (`stopReason`, usage when the agent reports it; the session from the request), after the inferred ends of the turn's open calls (below) |
//! | `session/cancel` (client) | `session_status` interrupted |
//! | `session/set_mode` (client) | `notice` (the mode asked for); its answer: `session_mode` when it accepts, `error` when it refuses |
//! | `session/set_config_option` answer | `config_options` when it lists the session's options (claude-agent-acp) |
//! | `session/update` `user_message_chunk` | `user_input` (a replay, `isSynthetic`) |
//! | `agent_message_chunk`, `agent_thought_chunk` | `stream_delta` text / thinking (chunks pass on as they come), and the whole message as `text` where it ends (inferred, `super::whole`) |
//! | `tool_call` | `tool_invocation` (+ `tool_completion` when it arrives finished); a second `tool_call` for a call already announced is a `tool_update` |
//! | `tool_call_update` | `tool_completion` when completed / failed / cancelled (once: a repeat is a `tool_update`), else `tool_update`; a call no line announced is invoked first; when it completes, one `file_change` per file its lines showed a `diff` of (the last one) |
//! | `tool_call`/`tool_call_update` of claude-agent-acp's `Agent` or `Task` | also `subagent_spawn` once its input is known, `subagent_complete` when it finishes (the subagent's id from `_meta.claudeCode.toolResponse`) |
//! | `plan` | `plan_update` |
//! | `available_commands_update`, `current_mode_update`, `config_option_update` | `available_commands`, `session_mode`, `config_options` |
//! | `session_info_update` | `session_info` |
//! | `usage_update` | `usage_update` (`contextTokens`, `contextWindow`, `costUsd`) |
//! | `session/request_permission` | `permission_request` with the `options` offered, `toolName` the invocation's; a call announced only here (Gemini CLI) gets its `tool_invocation` first |
//! | its answer | `permission_response`: `cancelled`, or the `kind` of the option chosen, as the request offered it (`allow_once` → `allow`, `allow_always`, `reject_once` → `deny`, `reject_always` → `deny_always`); `unknown`, without `allowed`, when the stream does not hold the request. `toolUseId` and the session from the request |
//! | `fs/*`, `terminal/*` requests and their answers, other client requests | `notice` |
//! | JSON-RPC errors | `error` (`httpStatus` from a code of 400-599, as Gemini CLI sends, or from the message's words; `code` from `data.errorKind`); an error answering `session/prompt` also ends the turn: `turn_complete` with `isError` |
//!
//! Correlated across lines (the module's [`Memory`]): requests until their answer, by side and
//! id (the client and the agent number theirs apart); each session's calls until its turn ends
//! (invoked once, ended once, their diffs); the agent's `initialize` answer. Inferred, marked
//! `extensions."insights.inferred": true`: a call that ends `completed` or `failed` after the
//! client's `session/cancel`, or `failed` after its permission request was cancelled, is `cancelled`
//! (the wire's status in `acp.status`); when a turn ends, a call the wire left open is ended
//! `cancelled` if the turn was cancelled or its permission withdrawn, and `failed` if its
//! permission was refused (it never ran).
//!
//! Unstable `session/update` kinds: `plan_removed` → empty `plan_update`, `compaction_update` →
//! `session_status` compacting; others → `raw`.

pub mod talk;

use super::jsonrpc::{Envelope, Kind, Message, RpcError};
use super::memo::Memo;
use super::{Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::wire::{count, is_null, is_object, Count, IfObject, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::Arc;

pub const PROVIDER: Provider = Provider {
    name: "acp",
    display: "ACP",
    cc_name: "acp",
    about: "ACP (Agent Client Protocol) JSON-RPC: an agent's output, or both directions",
    jsonrpc: true,
    sniff,
    convert,
    // Capabilities: filled in by the `insights providers` change from this file's mapping; check.
    // Its answer to a prompt reports that prompt's own usage and cost.
    reading: super::Reading {
        running_turn_totals: false,
        ..super::Reading::PLAIN
    },
    caps: super::Capabilities {
        streaming_deltas: true,
        tool_calls: true,
        tool_results: true,
        status_updates: true,
        reasoning: true,
        permissions: true,
        questions: false,
        file_changes: true,
        command_exec: true,
        mcp: false,
        usage: true,
        cost: true,
        subagents: true,
        plans: true,
    },
    infers_turns: false,
    whole_messages: true,
    at_end: None,
    talk: Some(&talk::SPEAKER),
};

crate::providers::memo::remember! {
    /// What ACP lines need of earlier lines of the stream.
    pub struct Memory {
        /// Requests waiting for their answer, by side and JSON-RPC id ([`request_key`]): the
        /// client and the agent number their requests apart, so `0` may be both at once.
        pub requests: Memo<Request>,
        /// The calls of each session's turn, by `session` + [`SEP`] + `toolCallId`, until
        /// the turn's answer.
        pub calls: Memo<Call>,
        /// The agent's answer to `initialize` (its name and version), for the sessions' inits.
        pub agent: Memo<Agent>,
        /// Sessions the client sent `session/cancel` for, until the turn's answer.
        pub cancelling: Memo<()>,
    }
}

/// Between a session id and a call id in [`Memory::calls`]' keys.
const SEP: char = '\u{1f}';

/// A request the stream holds until its answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `session/prompt`: its answer ends the session's turn.
    Prompt { session: String },
    /// `session/request_permission`: its answer picks one of the options.
    Permission {
        session: String,
        call: Option<String>,
        /// `(optionId, kind)` of each option offered.
        options: Vec<(String, String)>,
    },
    /// `session/set_mode`: the mode is the session's once the agent accepts it.
    SetMode { session: String, mode: String },
    /// Any other request, by method: the session it named (`""` for none) and, for
    /// `session/new` and `session/load`, the `cwd` the session works in.
    Other {
        method: String,
        session: String,
        cwd: Option<String>,
    },
}

/// A call the stream announced in the current turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Call {
    /// The tool name its invocation gave.
    name: String,
    /// A `tool_completion` was written.
    ended: bool,
    /// The answer to a permission request for it.
    answer: Option<Decision>,
    /// Its `subagent_spawn` was written (claude-agent-acp's `Agent`/`Task` calls).
    spawned: bool,
    /// What the subagent's `toolResponse` said of it, whichever line carried it.
    agent: Option<AgentDone>,
    /// The subagent call it was made in (`_meta.claudeCode.parentToolUseId`).
    parent: Option<String>,
    /// The last `diff` content of each file, from lines before the call finished: `(path,
    /// whether the file is new, the unified diff)`. The diff is shared: each line of the call
    /// works on a copy of its `Call`, and a diff is as large as the texts it was made from.
    diffs: Vec<(String, bool, Arc<String>)>,
}

/// How a subagent ended, as its call's `toolResponse` says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentDone {
    id: Option<String>,
    status: Option<String>,
    summary: Option<String>,
    duration_ms: Option<u64>,
    tokens: Option<u64>,
    tool_uses: Option<u64>,
}

/// What the agent said of itself in its `initialize` answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    name: Option<String>,
    version: Option<String>,
    /// `agentCapabilities`, `protocolVersion` and `authMethods` as written.
    capabilities: Option<RawJson>,
    protocol: Option<RawJson>,
    auth: Option<RawJson>,
}

/// JSON text kept as written; equal when the texts are.
#[derive(Debug, Clone)]
pub struct RawJson(Box<RawValue>);

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl RawJson {
    fn of(r: &RawValue) -> Self {
        RawJson(r.to_owned())
    }
}

/// The side that sends `method`: the agent asks the client for permission, files and
/// terminals; everything else is the client's.
fn sent_by_agent(method: &str) -> bool {
    method == "session/request_permission"
        || ["fs/", "terminal/", "elicitation/"]
            .iter()
            .any(|p| method.starts_with(p))
}

/// The key of a request in [`Memory::requests`]: `a` (agent) or `c` (client), then its id.
fn request_key(by_agent: bool, id: &str) -> String {
    format!("{}{id}", if by_agent { 'a' } else { 'c' })
}

fn call_key(session: &str, call: &str) -> String {
    format!("{session}{SEP}{call}")
}

const METHOD_PREFIXES: &[&str] = &[
    "session/",
    "fs/",
    "terminal/",
    "elicitation/",
    "providers/",
    "nes/",
    "document/",
];
const METHODS: &[&str] = &["authenticate", "logout", "$/cancel_request", "mcp/message"];
/// Members of results only ACP sends.
const RESULT_KEYS: &[&str] = &[
    "protocolVersion",
    "sessionId",
    "stopReason",
    "outcome",
    "agentCapabilities",
];

fn sniff(p: &Probe) -> bool {
    // ACP always writes `"jsonrpc":"2.0"`.
    if p.jsonrpc.is_none() {
        return false;
    }
    if let Some(m) = p.method() {
        if m == "initialize" {
            return p
                .params
                .is_some_and(|pr| pr.get().contains("\"protocolVersion\""));
        }
        return METHODS.contains(&m) || METHOD_PREFIXES.iter().any(|pre| m.starts_with(pre));
    }
    if p.is_bare_response() {
        return p
            .result_members()
            .iter()
            .any(|k| RESULT_KEYS.contains(&k.as_ref()));
    }
    false
}

/// A line read in one pass down to a `session/update`'s update and an object result
/// ([`super::jsonrpc::Message`]; before, `params`, `update` and `result` were captured raw and read
/// again). What needs a member as written (a notice's `params`, an unknown answer's
/// `result`) reads the line again: those are rare.
fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let m: Message<Params, ResultBody> = Message::read(line, probe.members())?;
    let kind = m.kind();
    let (env, params, result) = m.into_parts();
    match kind {
        Some(Kind::Request) | Some(Kind::Notification) => {
            let method = env.method.0.clone().unwrap_or_default();
            method_call(&method, &env, params, line, cx)
        }
        Some(Kind::Response) => {
            let known = match result {
                Some(IfObject(Some(b))) => response(&env, *b, cx)?,
                // An answer that is not an object (`null`) is no permission or prompt.
                _ => false,
            };
            if known {
                Ok(())
            } else {
                result_notice(&env, line, cx)
            }
        }
        Some(Kind::ErrorResponse) => {
            let e: RpcError = match env.error {
                Some(e) if is_object(e) => serde_json::from_str(e.get())?,
                _ => RpcError {
                    code: None,
                    message: OptStr(None),
                    data: None,
                },
            };
            let request = answered(&env, Shape::Error, cx);
            let message = e.message.0.unwrap_or(Cow::Borrowed("JSON-RPC error"));
            // Gemini CLI answers with the HTTP status as the code; claude-agent-acp says it
            // in the message.
            let http_status = e
                .code
                .and_then(|c| u64::try_from(c).ok())
                .filter(|c| (400..600).contains(c))
                .or_else(|| crate::wire::http_status_in(&message));
            let error_kind: Option<ErrorData> = e
                .data
                .filter(|d| is_object(d))
                .and_then(|d| serde_json::from_str(d.get()).ok());
            match &request {
                Some(
                    Request::Prompt { session }
                    | Request::Permission { session, .. }
                    | Request::Other { session, .. }
                    | Request::SetMode { session, .. },
                ) if !session.is_empty() => {
                    cx.session_id = Some(Cow::Owned(session.clone()));
                }
                _ => {}
            }
            let ext = cx.push(ErrorEvent {
                message: message.clone(),
                severity: Severity::Error,
                code: error_kind
                    .and_then(|d| d.error_kind.0)
                    .or_else(|| e.code.map(|c| Cow::Owned(c.to_string()))),
                http_status,
                will_retry: None,
                attempt: None,
                max_retries: None,
                retry_delay_ms: None,
                request_id: Some(Cow::Owned(env.id_text().into_owned())),
                parent_call_id: None,
            });
            ext.put_opt("acp.data", e.data.filter(|d| !is_null(d)));
            ext.put_opt("acp.code", e.code.map(Value::from));
            // What failed: the method of the request it answers, when the stream holds it.
            ext.put_opt(
                "acp.method",
                request.as_ref().map(|r| match r {
                    Request::Prompt { .. } => "session/prompt".to_owned(),
                    Request::Permission { .. } => "session/request_permission".to_owned(),
                    Request::SetMode { .. } => "session/set_mode".to_owned(),
                    Request::Other { method, .. } => method.clone(),
                }),
            );
            // A failed prompt ends its turn.
            if let Some(Request::Prompt { session }) = request {
                end_turn_calls(&session, false, cx);
                cx.memory().acp.cancelling.remove(&session);
                let ext = cx.push(TurnComplete {
                    is_error: true,
                    subtype: Some(Cow::Borrowed("error")),
                    errors: Some(vec![message]),
                    ..TurnComplete::default()
                });
                ext.put("acp.requestId", env.id_text().into_owned());
            }
            Ok(())
        }
        None => Err(Unmapped("not a JSON-RPC message".into())),
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    session_id: OptStr<'a>,
    #[serde(borrow, default)]
    update: IfObject<Box<Update<'a>>>,
    #[serde(borrow)]
    prompt: Option<Vec<ContentBlock<'a>>>,
    mode_id: OptStr<'a>,
    cwd: OptStr<'a>,
    #[serde(borrow)]
    tool_call: Option<&'a RawValue>,
    #[serde(borrow)]
    options: Option<Vec<OptionWire<'a>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OptionWire<'a> {
    #[serde(borrow)]
    option_id: OptStr<'a>,
    name: OptStr<'a>,
    kind: OptStr<'a>,
}

/// A content block (text, image, resource, …); only text and images are read here.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContentBlock<'a> {
    #[serde(rename = "type", borrow)]
    ty: OptStr<'a>,
    text: OptStr<'a>,
    data: OptStr<'a>,
    mime_type: OptStr<'a>,
    uri: OptStr<'a>,
}

/// A `session/update` payload, all kinds in one shape.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Update<'a> {
    session_update: OptStr<'a>,
    #[serde(rename = "type")]
    ty: OptStr<'a>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    message_id: OptStr<'a>,
    tool_call_id: OptStr<'a>,
    id: OptStr<'a>,
    title: OptStr<'a>,
    kind: OptStr<'a>,
    status: OptStr<'a>,
    #[serde(borrow)]
    locations: Option<Vec<Location<'a>>>,
    #[serde(borrow)]
    raw_input: Option<&'a RawValue>,
    #[serde(borrow)]
    raw_output: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<Meta<'a>>,
    #[serde(borrow)]
    entries: Option<Vec<Entry<'a>>>,
    #[serde(borrow)]
    available_commands: Option<Vec<&'a RawValue>>,
    current_mode_id: OptStr<'a>,
    #[serde(borrow)]
    config_options: Option<Vec<&'a RawValue>>,
    updated_at: OptStr<'a>,
    used: Option<Count>,
    size: Option<Count>,
    #[serde(borrow)]
    cost: Option<Cost<'a>>,
}

#[derive(Deserialize)]
struct Location<'a> {
    #[serde(borrow)]
    path: OptStr<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta<'a> {
    #[serde(borrow)]
    claude_code: Option<ClaudeMeta<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClaudeMeta<'a> {
    tool_name: OptStr<'a>,
    /// The subagent call a call was made in.
    parent_tool_use_id: OptStr<'a>,
    #[serde(borrow)]
    tool_response: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow)]
    content: OptStr<'a>,
    status: OptStr<'a>,
    priority: OptStr<'a>,
}

#[derive(Deserialize)]
struct Cost<'a> {
    amount: Option<f64>,
    #[serde(borrow)]
    currency: OptStr<'a>,
}

/// Tool call content: `content`, `diff` or `terminal`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolContent<'a> {
    #[serde(rename = "type")]
    ty: OptStr<'a>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    path: OptStr<'a>,
    old_text: OptStr<'a>,
    new_text: OptStr<'a>,
    terminal_id: OptStr<'a>,
}

/// ToolKind of an ACP tool kind.
fn tool_kind(kind: Option<&str>) -> ToolKind {
    match kind {
        Some("read") => ToolKind::Read,
        Some("edit") => ToolKind::Edit,
        Some("delete") => ToolKind::Delete,
        Some("move") => ToolKind::Move,
        Some("search") => ToolKind::Search,
        Some("execute") => ToolKind::Execute,
        Some("think") => ToolKind::Think,
        Some("fetch") => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

/// The name of a call whose line says nothing of it (a `tool_call_update` before its
/// `tool_call`): a placeholder, replaced when the call's own announcement comes.
const NO_NAME: &str = "tool";

/// A tool name for a call: the agent's own (`_meta.claudeCode.toolName`), the prefix of Gemini's
/// `name__name_…` call ids, else the kind, else [`NO_NAME`].
fn tool_name<'a>(u: &Update<'a>, call_id: &str) -> Str<'a> {
    if let Some(n) = u
        .meta
        .as_ref()
        .and_then(|m| m.claude_code.as_ref())
        .and_then(|c| c.tool_name.0.clone())
    {
        return n;
    }
    if let Some((prefix, _)) = call_id.split_once("__") {
        if !prefix.is_empty() {
            return Cow::Owned(prefix.to_owned());
        }
    }
    u.kind.0.clone().unwrap_or(Cow::Borrowed(NO_NAME))
}

fn method_call<'a>(
    method: &str,
    env: &Envelope<'a>,
    params: Option<Box<Params<'a>>>,
    line: &'a str,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let p = params.unwrap_or_default();
    cx.session_id = p.session_id.0.clone();
    if env.kind() == Some(Kind::Request) {
        let session = p.session_id.as_deref().unwrap_or_default().to_owned();
        let request = match method {
            "session/prompt" => Request::Prompt { session },
            "session/request_permission" => Request::Permission {
                session,
                call: None,
                options: p
                    .options
                    .iter()
                    .flatten()
                    .map(|o| {
                        (
                            o.option_id.as_deref().unwrap_or_default().to_owned(),
                            o.kind.as_deref().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect(),
            },
            "session/set_mode" => Request::SetMode {
                session,
                mode: p.mode_id.as_deref().unwrap_or_default().to_owned(),
            },
            _ => Request::Other {
                method: method.to_owned(),
                session,
                cwd: p.cwd.as_deref().map(str::to_owned),
            },
        };
        let key = request_key(sent_by_agent(method), &env.id_text());
        let line = cx.line;
        cx.memory().acp.requests.insert(&key, request, line);
    }
    match method {
        "session/update" => {
            let u = p
                .update
                .0
                .ok_or_else(|| Unmapped("session/update without an update".into()))?;
            update(*u, cx)
        }
        "session/prompt" => {
            cx.push(TurnStart::default());
            let blocks = p.prompt.unwrap_or_default();
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.ty.as_deref() == Some("text"))
                .filter_map(|b| b.text.as_deref())
                .collect();
            let images: Vec<ImageData> = blocks
                .iter()
                .filter(|b| b.ty.as_deref() == Some("image"))
                .map(|b| ImageData {
                    media_type: Cow::Owned(b.mime_type.0.clone().unwrap_or_default().into_owned()),
                    data: Cow::Owned(
                        b.data
                            .0
                            .clone()
                            .or(b.uri.0.clone())
                            .unwrap_or_default()
                            .into_owned(),
                    ),
                })
                .collect();
            let ext = cx.push(UserInput {
                text: Cow::Owned(texts.join("\n")),
                images: (!images.is_empty()).then_some(images),
                is_synthetic: false,
                parent_call_id: None,
            });
            ext.put("acp.requestId", env.id_text().into_owned());
            Ok(())
        }
        "session/cancel" => {
            let (session, line) = (p.session_id.as_deref().unwrap_or_default(), cx.line);
            cx.memory().acp.cancelling.insert(session, (), line);
            cx.push(SessionStatus {
                status: SessionStatusKind::Interrupted,
                message: None,
            });
            Ok(())
        }
        // Asked for: the mode changes when the agent's answer accepts it.
        "session/set_mode" if env.kind() == Some(Kind::Request) => {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("session/set_mode"),
                message: Some(Cow::Owned(format!(
                    "mode {} requested",
                    p.mode_id.as_deref().unwrap_or_default()
                ))),
            });
            ext.put("acp.requestId", env.id_text().into_owned());
            ext.put_opt("acp.modeId", p.mode_id.0);
            Ok(())
        }
        "session/request_permission" => {
            let tc: Option<Update> = match p.tool_call {
                Some(t) if is_object(t) => Some(serde_json::from_str(t.get())?),
                _ => None,
            };
            let call_id = tc.as_ref().and_then(|t| t.tool_call_id.0.clone());
            let session = p.session_id.as_deref().unwrap_or_default().to_owned();
            if let Some(id) = &call_id {
                let key = request_key(true, &env.id_text());
                if let Some(Request::Permission { call, .. }) =
                    cx.memory().acp.requests.get_mut(&key)
                {
                    *call = Some(id.to_string());
                }
            }
            // Gemini CLI announces some calls only here: the request opens them.
            let known = call_id.as_deref().and_then(|id| {
                let key = call_key(&session, id);
                cx.memory().acp.calls.get(&key).map(|c| c.name.clone())
            });
            if let (Some(t), Some(id), None) = (&tc, &call_id, &known) {
                let name = tool_name(t, id);
                let name = if name == NO_NAME {
                    t.title.0.clone().unwrap_or(name)
                } else {
                    name
                };
                let call = invoke(t, id.clone(), name, cx);
                let (key, line) = (call_key(&session, id), cx.line);
                cx.memory().acp.calls.insert(&key, call, line);
            }
            let name = match (&tc, known) {
                (_, Some(n)) => Cow::Owned(n),
                (None, None) => Cow::Borrowed(NO_NAME),
                (Some(t), None) => {
                    let id = call_id.clone().unwrap_or_default();
                    let n = tool_name(t, &id);
                    if n == NO_NAME {
                        t.title.0.clone().unwrap_or(n)
                    } else {
                        n
                    }
                }
            };
            let options = p.options.map(|v| {
                v.into_iter()
                    .map(|o| PermissionOption {
                        option_id: o.option_id.0.unwrap_or_default(),
                        name: o.name.0.unwrap_or_default(),
                        kind: o.kind.0.unwrap_or_default(),
                    })
                    .collect()
            });
            let ext = cx.push(PermissionRequest {
                request_id: Cow::Owned(env.id_text().into_owned()),
                tool_name: name,
                tool_kind: tool_kind(tc.as_ref().and_then(|t| t.kind.as_deref())),
                tool_input: tc
                    .as_ref()
                    .and_then(|t| t.raw_input)
                    .filter(|i| is_object(i))
                    .map_or_else(|| Json::Value(json!({})), Json::Raw),
                tool_use_id: call_id,
                reason: None,
                blocked_path: None,
                suggestions: None,
                title: tc.as_ref().and_then(|t| t.title.0.clone()),
                parent_call_id: None,
                options,
            });
            ext.put_opt("acp.toolCall", p.tool_call);
            Ok(())
        }
        other => {
            // The params as written: the line read again.
            let e: Envelope = serde_json::from_str(line)?;
            let ext = cx.push(Notice {
                subtype: Cow::Owned(other.to_owned()),
                message: None,
            });
            ext.put_opt("params", e.params.filter(|p| is_object(p)));
            if env.kind() == Some(Kind::Request) {
                ext.put("acp.requestId", env.id_text().into_owned());
            }
            Ok(())
        }
    }
}

/// The text of a chunk's content block, or `None` for non-text content.
fn chunk_text<'a>(
    content: Option<&'a RawValue>,
) -> Result<(Option<Str<'a>>, Option<&'a RawValue>), Unmapped> {
    let Some(raw) = content.filter(|c| is_object(c)) else {
        return Ok((None, content));
    };
    let b: ContentBlock = serde_json::from_str(raw.get())?;
    if b.ty.as_deref() == Some("text") {
        Ok((Some(b.text.0.unwrap_or_default()), None))
    } else {
        Ok((None, Some(raw)))
    }
}

fn update<'a>(u: Update<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let kind = u
        .session_update
        .0
        .clone()
        .or(u.ty.0.clone())
        .unwrap_or_default();
    match &*kind {
        "agent_message_chunk" | "agent_thought_chunk" => {
            let (text, other) = chunk_text(u.content)?;
            let ext = cx.push(StreamDelta {
                kind: if kind == "agent_thought_chunk" {
                    StreamDeltaKind::Thinking
                } else {
                    StreamDeltaKind::Text
                },
                parent_call_id: None,
                text_delta: text,
                json_delta: None,
                block_index: None,
                call_id: None,
                message_id: u.message_id.0,
            });
            ext.put_opt("acp.content", other);
        }
        "user_message_chunk" => {
            let (text, other) = chunk_text(u.content)?;
            let ext = cx.push(UserInput {
                text: text.unwrap_or_default(),
                images: None,
                is_synthetic: true,
                parent_call_id: None,
            });
            ext.put_opt("acp.content", other);
            ext.put_opt("acp.messageId", u.message_id.0);
        }
        "tool_call" | "tool_call_update" => tool_call(&kind, u, cx)?,
        "plan" | "plan_removed" => {
            let entries = u
                .entries
                .unwrap_or_default()
                .into_iter()
                .map(|e| PlanEntry {
                    content: e.content.0.unwrap_or_default(),
                    status: match e.status.as_deref() {
                        Some("in_progress") => PlanStatus::InProgress,
                        Some("completed") => PlanStatus::Completed,
                        _ => PlanStatus::Pending,
                    },
                    priority: match e.priority.as_deref() {
                        Some("high") => Some(PlanPriority::High),
                        Some("medium") => Some(PlanPriority::Medium),
                        Some("low") => Some(PlanPriority::Low),
                        _ => None,
                    },
                    active_form: None,
                })
                .collect();
            cx.push(PlanUpdate {
                entries,
                call_id: None,
                parent_call_id: None,
                explanation: None,
            });
        }
        "available_commands_update" => {
            cx.push(AvailableCommands {
                available_commands: u
                    .available_commands
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|c| is_object(c))
                    .map(Json::Raw)
                    .collect(),
            });
        }
        "current_mode_update" => {
            cx.push(SessionMode {
                current_mode_id: u.current_mode_id.0.unwrap_or_default(),
                available_modes: Vec::new(),
            });
        }
        "config_option_update" => {
            cx.push(ConfigOptions {
                config_options: u
                    .config_options
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|c| is_object(c))
                    .map(Json::Raw)
                    .collect(),
            });
        }
        "session_info_update" => {
            cx.push(SessionInfo {
                title: u.title.0,
                updated_at: u.updated_at.0,
            });
        }
        "usage_update" => {
            let usd = u
                .cost
                .as_ref()
                .filter(|c| c.currency.as_deref().is_none_or(|c| c == "USD"));
            let ext = cx.push(UsageUpdate {
                step_usage: Json::Value(json!({})),
                total: None,
                context_window: count(u.size),
                context_tokens: count(u.used),
                cost_usd: usd.and_then(|c| c.amount),
                parent_call_id: None,
                model: None,
                message_id: None,
            });
            if let Some(c) = u
                .cost
                .filter(|c| c.currency.as_deref().is_some_and(|c| c != "USD"))
            {
                ext.put(
                    "acp.cost",
                    json!({ "amount": c.amount, "currency": c.currency.0 }),
                );
            }
        }
        "compaction_update" => {
            cx.push(SessionStatus {
                status: SessionStatusKind::Compacting,
                message: None,
            });
        }
        other => {
            return Err(Unmapped(format!(
                "unknown ACP session/update kind {other:?}"
            )))
        }
    }
    Ok(())
}

/// What a subagent call's input says of the subagent.
#[derive(Deserialize)]
struct AgentInput<'a> {
    #[serde(borrow)]
    subagent_type: OptStr<'a>,
    description: OptStr<'a>,
    prompt: OptStr<'a>,
}

/// What a subagent call's `toolResponse` says of it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AgentResponse<'a> {
    agent_id: OptStr<'a>,
    status: OptStr<'a>,
    total_duration_ms: Option<Count>,
    total_tokens: Option<Count>,
    total_tool_use_count: Option<Count>,
    #[serde(borrow, default)]
    content: Vec<AgentText<'a>>,
}

#[derive(Deserialize)]
struct AgentText<'a> {
    #[serde(borrow)]
    text: OptStr<'a>,
}

/// Writes the `tool_invocation` of a call announced by `u` (a `tool_call`, or the first line
/// that names the call), and returns what the stream remembers of it.
fn invoke<'a>(u: &Update<'a>, call_id: Str<'a>, name: Str<'a>, cx: &mut Cx<'a>) -> Call {
    let parent = parent_of(u);
    let locations: Option<Vec<Str<'a>>> = u
        .locations
        .as_ref()
        .map(|v| {
            v.iter()
                .filter_map(|l| l.path.0.clone())
                .collect::<Vec<_>>()
        })
        .filter(|v| !v.is_empty());
    let kind = tool_kind(u.kind.as_deref());
    // What the call shows people before it ends (Gemini CLI: its description and working
    // directory), `content` blocks; its `diff` blocks become `file_change`s when it ends.
    let shown: Option<Value> = u
        .content
        .filter(|c| c.get().starts_with('['))
        .and_then(|c| serde_json::from_str::<Vec<ToolContent>>(c.get()).ok())
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.ty.as_deref() == Some("content"))
                .filter_map(|b| b.content)
                .filter_map(|b| serde_json::from_str::<Value>(b.get()).ok())
                .collect::<Vec<_>>()
        })
        .filter(|v| !v.is_empty())
        .map(Value::Array);
    let ext = cx.push(ToolInvocation {
        call_id,
        parent_call_id: parent.clone(),
        kind,
        tool_name: name.clone(),
        title: u.title.0.clone(),
        input: u
            .raw_input
            .filter(|i| is_object(i))
            .map_or_else(|| Json::Value(json!({})), Json::Raw),
        locations,
        model: None,
        mcp_server: None,
        mcp_tool: None,
        message_id: None,
    });
    ext.put_opt("acp.content", shown);
    // A kind the event model has no value for (`switch_mode`) is kept as the wire says it.
    if kind == ToolKind::Other {
        ext.put_opt("acp.kind", u.kind.0.clone().filter(|k| k != "other"));
    }
    Call {
        name: name.into_owned(),
        parent: parent.map(Cow::into_owned),
        ..Call::default()
    }
}

/// The subagent call `u` was made in, as claude-agent-acp says.
fn parent_of<'a>(u: &Update<'a>) -> Option<Str<'a>> {
    u.meta
        .as_ref()
        .and_then(|m| m.claude_code.as_ref())
        .and_then(|c| c.parent_tool_use_id.0.clone())
}

/// Ends a call the wire left open, as the turn's end or the permission answer implies, as
/// its own end would: in the subagent call it was made in, and a subagent call ends its
/// subagent too.
fn infer_end<'a>(call_id: String, call: Call, status: ToolCallStatus, cx: &mut Cx<'a>) {
    let call_id: Str<'a> = Cow::Owned(call_id);
    let parent: Option<Str<'a>> = call.parent.map(Cow::Owned);
    let ext = cx.push(ToolCompletion {
        call_id: call_id.clone(),
        status,
        duration_ms: None,
        output: None,
        is_error: status != ToolCallStatus::Completed,
        content: None,
        locations: None,
        parent_call_id: parent.clone(),
    });
    ext.put("insights.inferred", true);
    if call.spawned {
        let r = call.agent.unwrap_or_default();
        let ext = cx.push(SubagentComplete {
            call_id,
            agent_id: r.id.map(Cow::Owned),
            status: Some(Cow::Borrowed(match status {
                ToolCallStatus::Cancelled => "cancelled",
                _ => "failed",
            })),
            summary: r.summary.map(Cow::Owned),
            duration_ms: r.duration_ms,
            total_tokens: r.tokens,
            tool_use_count: r.tool_uses,
            parent_call_id: parent,
        });
        ext.put("insights.inferred", true);
    }
}

fn tool_call<'a>(kind: &str, u: Update<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let call_id = u
        .tool_call_id
        .0
        .clone()
        .or(u.id.0.clone())
        .unwrap_or_default();
    let session = cx.session_id.as_deref().unwrap_or_default().to_owned();
    let key = call_key(&session, &call_id);
    let status = u.status.clone();
    let finished = matches!(
        status.as_deref(),
        Some("completed" | "failed" | "cancelled" | "canceled")
    );
    let contents: Vec<ToolContent> = match u.content {
        Some(c) if c.get().starts_with('[') => serde_json::from_str(c.get())?,
        _ => Vec::new(),
    };
    let locations: Option<Vec<Str<'a>>> = u
        .locations
        .as_ref()
        .map(|v| {
            v.iter()
                .filter_map(|l| l.path.0.clone())
                .collect::<Vec<_>>()
        })
        .filter(|v| !v.is_empty());
    let name = tool_name(&u, &call_id);
    let tool_response = u
        .meta
        .as_ref()
        .and_then(|m| m.claude_code.as_ref())
        .and_then(|c| c.tool_response);
    // Each call is announced once: at its `tool_call`, or by the first line that names it
    // (an update or a permission request may come first).
    let known = cx.memory().acp.calls.get(&key).cloned();
    let fresh = known.is_none();
    let mut call = match known {
        Some(c) => c,
        None => invoke(&u, call_id.clone(), name.clone(), cx),
    };
    // The call's own announcement after a line that named it first (ACP RULE 3): its name
    // replaces the placeholder that line gave.
    let announcing = kind == "tool_call" && !fresh;
    let renamed = announcing && call.name == NO_NAME && name != NO_NAME;
    if renamed {
        call.name = name.to_string();
    }
    // The files it changes: the last diff of each, kept until it finishes.
    for d in contents.iter().filter(|c| c.ty.as_deref() == Some("diff")) {
        let Some(path) = d.path.as_deref() else {
            continue;
        };
        let old = d.old_text.as_deref().filter(|o| !o.is_empty());
        let new = d.new_text.as_deref().unwrap_or("");
        let diff = Arc::new(crate::diff::unified(path, old, new));
        call.diffs.retain(|x| x.0 != path);
        call.diffs.push((path.to_owned(), old.is_none(), diff));
    }
    if call.parent.is_none() {
        call.parent = parent_of(&u).map(Cow::into_owned);
    }
    let parent: Option<Str<'a>> = call.parent.clone().map(Cow::Owned);
    // claude-agent-acp runs a subagent as an `Agent` (or `Task`) call: it starts when its
    // input is known, and ends with the call.
    let subagent = matches!(call.name.as_str(), "Agent" | "Task")
        && u.meta
            .as_ref()
            .and_then(|m| m.claude_code.as_ref())
            .is_some();
    if subagent {
        let input: Option<AgentInput> = u
            .raw_input
            .filter(|i| is_object(i) && i.get() != "{}")
            .and_then(|i| serde_json::from_str(i.get()).ok());
        if let Some(i) = input.filter(|i| i.prompt.is_some() || i.subagent_type.is_some()) {
            if !call.spawned {
                call.spawned = true;
                cx.push(SubagentSpawn {
                    call_id: call_id.clone(),
                    agent_type: i.subagent_type.0,
                    description: i.description.0,
                    is_resume: false,
                    resume_agent_id: None,
                    prompt: i.prompt.0,
                    parent_call_id: parent.clone(),
                });
            }
        }
        let response = tool_response
            .filter(|r| is_object(r))
            .and_then(|r| serde_json::from_str::<AgentResponse>(r.get()).ok());
        if let Some(r) = response {
            let texts: Vec<&str> = r.content.iter().filter_map(|t| t.text.as_deref()).collect();
            call.agent = Some(AgentDone {
                id: r.agent_id.0.map(Cow::into_owned),
                status: r.status.0.map(Cow::into_owned),
                summary: (!texts.is_empty()).then(|| texts.join("\n")),
                duration_ms: count(r.total_duration_ms),
                tokens: count(r.total_tokens),
                tool_uses: count(r.total_tool_use_count),
            });
        }
    }
    let repeat = finished && call.ended;
    // After `session/cancel`, a call that ends ends because of it, whatever it says (Gemini
    // CLI: the running one `completed` with "Command cancelled by user.", the one not started
    // yet `failed` with "Tool execution … denied by policy.").
    // A call whose permission request was withdrawn did not fail: it was cancelled
    // (claude-agent-acp ends it `failed`).
    let stopped = finished
        && status.as_deref() != Some("cancelled")
        && (call.answer == Some(Decision::Cancelled)
            || cx.memory().acp.cancelling.contains(&session));
    if finished && !repeat {
        let failed = stopped || status.as_deref() != Some("completed");
        // Content blocks of type `content` are the result shown to people.
        let blocks: Vec<&RawValue> = contents
            .iter()
            .filter(|c| c.ty.as_deref() == Some("content"))
            .filter_map(|c| c.content)
            .filter(|c| is_object(c))
            .collect();
        let output = match (u.raw_output.filter(|o| !is_null(o)), blocks.as_slice()) {
            (Some(o), _) => Some(Json::Raw(o)),
            (None, [one]) => Some(Json::Raw(one)),
            (None, []) => None,
            (None, many) => Some(Json::Value(Value::Array(
                many.iter()
                    .filter_map(|b| serde_json::from_str(b.get()).ok())
                    .collect(),
            ))),
        };
        let content = (!blocks.is_empty()).then(|| {
            Json::Value(Value::Array(
                blocks
                    .iter()
                    .filter_map(|b| serde_json::from_str(b.get()).ok())
                    .collect(),
            ))
        });
        let ext = cx.push(ToolCompletion {
            call_id: call_id.clone(),
            status: match status.as_deref() {
                _ if stopped => ToolCallStatus::Cancelled,
                Some("completed") => ToolCallStatus::Completed,
                Some("failed") => ToolCallStatus::Failed,
                _ => ToolCallStatus::Cancelled,
            },
            duration_ms: None,
            output,
            is_error: failed,
            content,
            locations: locations.clone(),
            parent_call_id: parent.clone(),
        });
        for t in contents
            .iter()
            .filter(|c| c.ty.as_deref() == Some("terminal"))
        {
            ext.put_opt("acp.terminalId", t.terminal_id.0.clone());
        }
        if stopped {
            ext.put("insights.inferred", true);
            ext.put_opt("acp.status", status.0.clone());
        }
        if !failed {
            for (path, added, diff) in std::mem::take(&mut call.diffs) {
                cx.push(FileChange {
                    path: Cow::Owned(path),
                    change_kind: if added {
                        ChangeKind::Add
                    } else {
                        ChangeKind::Update
                    },
                    move_path: None,
                    diff: Some(Cow::Owned(Arc::unwrap_or_clone(diff))),
                    cumulative: false,
                    call_id: Some(call_id.clone()),
                    parent_call_id: parent.clone(),
                });
            }
        }
        if call.spawned {
            let r = call.agent.take().unwrap_or_default();
            cx.push(SubagentComplete {
                call_id: call_id.clone(),
                agent_id: r.id.map(Cow::Owned),
                status: Some(Cow::Owned(r.status.unwrap_or_else(|| {
                    (if stopped {
                        "cancelled"
                    } else if failed {
                        "failed"
                    } else {
                        "completed"
                    })
                    .to_owned()
                }))),
                summary: r.summary.map(Cow::Owned),
                duration_ms: r.duration_ms,
                total_tokens: r.tokens,
                tool_use_count: r.tool_uses,
                parent_call_id: call.parent.clone().map(Cow::Owned),
            });
        }
        call.ended = true;
        call.diffs.clear();
    } else if repeat || !fresh || kind == "tool_call_update" {
        let output = tool_response
            .or(u.raw_output.filter(|o| !is_null(o)))
            .map(Json::Raw);
        // The call's own announcement after a line that named it first: its kind (which
        // `reduce` takes for the announcement, with its name, when the call's is new).
        let announced = announcing
            .then(|| tool_kind(u.kind.as_deref()))
            .filter(|k| *k != ToolKind::Other || renamed);
        let ext = cx.push(ToolUpdate {
            kind: announced,
            call_id,
            status: status.0.clone(),
            tool_name: Some(name),
            output,
            elapsed_ms: None,
            parent_call_id: parent.clone(),
            title: u.title.0,
            input: u
                .raw_input
                .filter(|i| is_object(i) && i.get() != "{}")
                .map(Json::Raw),
            locations,
        });
        ext.put_opt(
            "acp.content",
            u.content.filter(|c| c.get() != "[]" && !is_null(c)),
        );
    }
    let line = cx.line;
    cx.memory().acp.calls.insert(&key, call, line);
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultBody<'a> {
    session_id: OptStr<'a>,
    #[serde(borrow)]
    modes: Option<Modes<'a>>,
    #[serde(borrow)]
    config_options: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    models: Option<Models<'a>>,
    protocol_version: Option<&'a RawValue>,
    #[serde(borrow)]
    agent_capabilities: Option<&'a RawValue>,
    #[serde(borrow)]
    agent_info: Option<AgentInfo<'a>>,
    #[serde(borrow)]
    auth_methods: Option<&'a RawValue>,
    stop_reason: OptStr<'a>,
    usage: Option<PromptUsage>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
    #[serde(borrow)]
    outcome: Option<Outcome<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Modes<'a> {
    current_mode_id: OptStr<'a>,
    #[serde(borrow, default)]
    available_modes: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Models<'a> {
    current_model_id: OptStr<'a>,
    #[serde(borrow, default)]
    available_models: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct AgentInfo<'a> {
    #[serde(borrow)]
    name: OptStr<'a>,
    version: OptStr<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptUsage {
    input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    cached_read_tokens: Option<Count>,
    cached_write_tokens: Option<Count>,
    thought_tokens: Option<Count>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Outcome<'a> {
    #[serde(borrow)]
    outcome: OptStr<'a>,
    option_id: OptStr<'a>,
}

/// Gemini CLI's `_meta.quota` on a prompt answer: usage in total and per model.
#[derive(Deserialize)]
struct Quota<'a> {
    #[serde(borrow)]
    quota: Option<QuotaInner<'a>>,
}

#[derive(Deserialize)]
struct QuotaInner<'a> {
    token_count: Option<QuotaTokens>,
    #[serde(borrow)]
    model_usage: Option<Vec<QuotaModel<'a>>>,
}

#[derive(Deserialize)]
struct QuotaTokens {
    input_tokens: Option<Count>,
    output_tokens: Option<Count>,
}

#[derive(Deserialize)]
struct QuotaModel<'a> {
    #[serde(borrow)]
    model: OptStr<'a>,
    token_count: Option<QuotaTokens>,
}

/// claude-agent-acp's `data` on an error answer.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ErrorData<'a> {
    #[serde(borrow)]
    error_kind: OptStr<'a>,
}

/// What an answer looks like, to tell which side's request it answers.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// `outcome`: a permission answer, from the client.
    Outcome,
    /// `stopReason`: a prompt's answer, from the agent.
    StopReason,
    /// Any other result.
    Other,
    /// An error answer.
    Error,
}

/// Takes the request `env` answers out of the memory: the client's and the agent's ids are
/// counted apart, so an id may wait on both sides; the answer's shape then tells which, and
/// when it does not (an error, or two requests of no particular shape), neither is taken:
/// `None`, as when the stream does not hold the request.
fn answered(env: &Envelope, shape: Shape, cx: &mut Cx) -> Option<Request> {
    let id = env.id_text();
    let (ka, kc) = (request_key(true, &id), request_key(false, &id));
    let requests = &mut cx.memory().acp.requests;
    let fits = |r: &Request| {
        matches!(
            (shape, r),
            (Shape::Outcome, Request::Permission { .. })
                | (Shape::StopReason, Request::Prompt { .. })
                | (
                    Shape::Other,
                    Request::Other { .. } | Request::SetMode { .. }
                )
                | (Shape::Error, _)
        )
    };
    let a = requests.get(&ka).is_some_and(fits);
    let c = requests.get(&kc).is_some_and(fits);
    match (a, c) {
        (true, false) => requests.remove(&ka),
        (false, true) => requests.remove(&kc),
        _ => None,
    }
}

/// At the end of a session's turn, ends the calls the wire left open whose end the stream
/// implies, marked `insights.inferred`: all of them when the turn was cancelled, else those
/// whose permission was refused (never run: `failed`) or withdrawn (`cancelled`). The turn's
/// calls are then forgotten.
fn end_turn_calls(session: &str, cancelled: bool, cx: &mut Cx) {
    let prefix = format!("{session}{SEP}");
    let mut open: Vec<(String, Call, ToolCallStatus)> = Vec::new();
    for (key, call) in cx.memory().acp.calls.take_prefix(&prefix) {
        if call.ended {
            continue;
        }
        let status = match (cancelled, call.answer) {
            (true, _) | (false, Some(Decision::Cancelled)) => ToolCallStatus::Cancelled,
            (false, Some(Decision::Deny | Decision::DenyAlways)) => ToolCallStatus::Failed,
            _ => continue,
        };
        open.push((key[prefix.len()..].to_owned(), call, status));
    }
    // A subagent's calls end before the subagent call that made them: deepest first. Depths
    // are worked out once per call (a chain of parents from the wire, maybe a cycle, costs
    // its length once, not once per call).
    let index: std::collections::HashMap<&str, usize> = open
        .iter()
        .enumerate()
        .map(|(i, o)| (o.0.as_str(), i))
        .collect();
    let mut depths: Vec<Option<usize>> = vec![None; open.len()];
    let mut on_chain = vec![false; open.len()];
    for start in 0..open.len() {
        // Up the chain until a call whose depth is known, a call not open, or a loop.
        let mut chain = vec![start];
        on_chain[start] = true;
        let mut base = 0;
        while let Some(&i) = chain.last() {
            let Some(p) = open[i].1.parent.as_deref() else {
                break;
            };
            match index.get(p) {
                Some(&j) if depths[j].is_some() => {
                    base = depths[j].unwrap_or(0) + 1;
                    break;
                }
                Some(&j) if !on_chain[j] => {
                    on_chain[j] = true;
                    chain.push(j);
                }
                // A parent that is not open (ended, or never seen), or a loop.
                _ => {
                    base = 1;
                    break;
                }
            }
        }
        for (k, &i) in chain.iter().rev().enumerate() {
            depths[i].get_or_insert(base + k);
            on_chain[i] = false;
        }
    }
    let mut order: Vec<usize> = (0..open.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(depths[i]));
    let mut open: Vec<Option<(String, Call, ToolCallStatus)>> =
        open.into_iter().map(Some).collect();
    for i in order {
        if let Some((id, call, status)) = open[i].take() {
            infer_end(id, call, status, cx);
        }
    }
}

/// The decision of an option by its `kind` (ACP's `PermissionOptionKind`), and whether the
/// call may run; `unknown` for a kind ACP does not define.
fn decision_of(kind: &str) -> (Decision, Option<bool>) {
    match kind {
        "allow_once" => (Decision::Allow, Some(true)),
        "allow_always" => (Decision::AllowAlways, Some(true)),
        "reject_once" => (Decision::Deny, Some(false)),
        "reject_always" => (Decision::DenyAlways, Some(false)),
        _ => (Decision::Unknown, None),
    }
}

/// The events of an answer whose `result` is an object, `false` if it is none ACP defines.
fn response<'a>(env: &Envelope<'a>, b: ResultBody<'a>, cx: &mut Cx<'a>) -> Result<bool, Unmapped> {
    let request_id: Str<'a> = Cow::Owned(env.id_text().into_owned());
    if let Some(o) = b.outcome {
        let cancelled = o.outcome.as_deref() == Some("cancelled");
        // The decision is the kind of the option picked, which only the request says.
        let request = answered(env, Shape::Outcome, cx);
        let (session, call, kind) = match request {
            Some(Request::Permission {
                session,
                call,
                options,
            }) => {
                let picked = o.option_id.as_deref().unwrap_or_default();
                let kind = options
                    .into_iter()
                    .find(|(id, _)| id == picked)
                    .map(|o| o.1);
                (Some(session), call, kind)
            }
            _ => (None, None, None),
        };
        let (decision, allowed) = match (cancelled, kind.as_deref()) {
            (true, _) => (Decision::Cancelled, Some(false)),
            (false, Some(k)) => decision_of(k),
            (false, None) => (Decision::Unknown, None),
        };
        if let (Some(s), Some(c)) = (&session, &call) {
            if let Some(known) = cx.memory().acp.calls.get_mut(&call_key(s, c)) {
                known.answer = Some(decision);
            }
        }
        cx.session_id = session.map(Cow::Owned);
        cx.push(PermissionResponse {
            request_id,
            decision,
            allowed,
            message: None,
            updated_input: None,
            updated_permissions: None,
            interrupt: false,
            tool_use_id: call.map(Cow::Owned),
            option_id: o.option_id.0,
        });
    } else if let Some(stop) = b.stop_reason.0 {
        // The answer names no session: its request does.
        let session = match answered(env, Shape::StopReason, cx) {
            Some(Request::Prompt { session }) => Some(session),
            _ => None,
        };
        if let Some(s) = &session {
            end_turn_calls(s, stop == "cancelled", cx);
            cx.memory().acp.cancelling.remove(s);
        }
        cx.session_id = session.map(Cow::Owned);
        let mut usage = b.usage.as_ref().map(|u| TokenUsage {
            input_tokens: count(u.input_tokens).unwrap_or(0),
            output_tokens: count(u.output_tokens).unwrap_or(0),
            cache_read_tokens: count(u.cached_read_tokens),
            cache_creation_tokens: count(u.cached_write_tokens),
            reasoning_tokens: count(u.thought_tokens),
        });
        let quota: Option<Quota> = b.meta.and_then(|m| serde_json::from_str(m.get()).ok());
        let quota = quota.and_then(|q| q.quota);
        if usage.is_none() {
            usage = quota
                .as_ref()
                .and_then(|q| q.token_count.as_ref())
                .map(|t| TokenUsage {
                    input_tokens: count(t.input_tokens).unwrap_or(0),
                    output_tokens: count(t.output_tokens).unwrap_or(0),
                    ..TokenUsage::default()
                });
        }
        let model_usage = quota.and_then(|q| q.model_usage).map(|v| {
            Pairs(
                v.into_iter()
                    .map(|m| {
                        let t = m.token_count;
                        let mu = ModelTokenUsage {
                            tokens: TokenUsage {
                                input_tokens: t
                                    .as_ref()
                                    .and_then(|t| count(t.input_tokens))
                                    .unwrap_or(0),
                                output_tokens: t
                                    .as_ref()
                                    .and_then(|t| count(t.output_tokens))
                                    .unwrap_or(0),
                                ..TokenUsage::default()
                            },
                            ..ModelTokenUsage::default()
                        };
                        (m.model.0.unwrap_or_default(), mu)
                    })
                    .collect(),
            )
        });
        let ext = cx.push(TurnComplete {
            subtype: Some(stop.clone()),
            usage,
            model_usage,
            stop_reason: Some(stop),
            ..TurnComplete::default()
        });
        ext.put("acp.requestId", request_id);
    } else if let Some(sid) = b.session_id.0.clone() {
        let cwd = match answered(env, Shape::Other, cx) {
            Some(Request::Other { cwd, .. }) => cwd,
            _ => None,
        };
        session_opened(sid, cwd, Some(b), request_id, cx);
    } else if b.protocol_version.is_some() || b.agent_capabilities.is_some() {
        // No session exists yet: the agent's name and version go onto the inits of the
        // sessions it makes.
        answered(env, Shape::Other, cx);
        let info = b.agent_info;
        let agent = Agent {
            name: info
                .as_ref()
                .and_then(|i| i.name.as_deref().map(str::to_owned)),
            version: info
                .as_ref()
                .and_then(|i| i.version.as_deref().map(str::to_owned)),
            capabilities: b.agent_capabilities.map(RawJson::of),
            protocol: b.protocol_version.map(RawJson::of),
            auth: b.auth_methods.map(RawJson::of),
        };
        let line = cx.line;
        cx.memory().acp.agent.insert("", agent, line);
        let ext = cx.push(Notice {
            subtype: Cow::Borrowed("initialize"),
            message: None,
        });
        ext.put_opt(
            "acp.agentVersion",
            info.as_ref().and_then(|i| i.version.0.clone()),
        );
        ext.put_opt("acp.agentName", info.and_then(|i| i.name.0));
        ext.put_opt("acp.protocolVersion", b.protocol_version);
        ext.put_opt("acp.agentCapabilities", b.agent_capabilities);
        ext.put_opt("acp.authMethods", b.auth_methods);
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// A session the agent opened (`session/new`, `session/load`): its `session_init` (with the
/// agent's name and version from `initialize`), then its modes and config options when the
/// answer `b` lists them.
fn session_opened<'a>(
    sid: Str<'a>,
    cwd: Option<String>,
    b: Option<ResultBody<'a>>,
    request_id: Str<'a>,
    cx: &mut Cx<'a>,
) {
    cx.session_id = Some(sid);
    let agent = cx.memory().acp.agent.get("").cloned();
    let models = b.as_ref().and_then(|b| b.models.as_ref());
    let ext = cx.push(SessionInit {
        cwd: cwd.map(Cow::Owned),
        version: agent
            .as_ref()
            .and_then(|a| a.version.clone())
            .map(Cow::Owned),
        model: models.and_then(|m| m.current_model_id.0.clone()),
        available_models: models.map(|m| {
            m.available_models
                .iter()
                .copied()
                .filter(|x| is_object(x))
                .map(Json::Raw)
                .collect()
        }),
        ..SessionInit::default()
    });
    ext.put("acp.requestId", request_id);
    if let Some(a) = agent {
        ext.put_opt("acp.agentName", a.name);
        ext.put_opt("acp.protocolVersion", a.protocol.map(|r| r.0));
        ext.put_opt("acp.agentCapabilities", a.capabilities.map(|r| r.0));
        ext.put_opt("acp.authMethods", a.auth.map(|r| r.0));
    }
    let Some(b) = b else { return };
    if let Some(m) = b.modes {
        cx.push(SessionMode {
            current_mode_id: m.current_mode_id.0.unwrap_or_default(),
            available_modes: m
                .available_modes
                .into_iter()
                .filter(|x| is_object(x))
                .map(Json::Raw)
                .collect(),
        });
    }
    config_options(b.config_options, cx);
}

/// The session's config options, when an answer lists them.
fn config_options<'a>(list: Option<Vec<&'a RawValue>>, cx: &mut Cx<'a>) {
    if let Some(c) = list {
        cx.push(ConfigOptions {
            config_options: c
                .into_iter()
                .filter(|x| is_object(x))
                .map(Json::Raw)
                .collect(),
        });
    }
}

/// Another answer, its `result` as written (the line read again): an accepted
/// `session/set_mode` is the session's new mode, any other a notice.
fn result_notice<'a>(env: &Envelope<'a>, line: &'a str, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let e: Envelope = serde_json::from_str(line)?;
    match answered(env, Shape::Other, cx) {
        Some(Request::SetMode { session, mode }) => {
            cx.session_id = (!session.is_empty()).then_some(Cow::Owned(session));
            let ext = cx.push(SessionMode {
                current_mode_id: Cow::Owned(mode),
                available_modes: Vec::new(),
            });
            ext.put("acp.requestId", env.id_text().into_owned());
            ext.put_opt(
                "result",
                e.result.filter(|r| !is_null(r) && r.get() != "{}"),
            );
            return Ok(());
        }
        // The schema's `session/load` answer does not name the session: its request does.
        Some(Request::Other {
            method,
            session,
            cwd,
        }) if method == "session/load" && !session.is_empty() => {
            let b = match e.result.filter(|r| is_object(r)) {
                Some(r) => Some(serde_json::from_str(r.get())?),
                None => None,
            };
            let id = Cow::Owned(env.id_text().into_owned());
            session_opened(Cow::Owned(session), cwd, b, id, cx);
            return Ok(());
        }
        Some(Request::Other {
            method, session, ..
        }) => {
            cx.session_id = (!session.is_empty()).then_some(Cow::Owned(session));
            // An accepted `session/set_config_option`: the session's options now.
            if method == "session/set_config_option" {
                let b: Option<ResultBody> = match e.result.filter(|r| is_object(r)) {
                    Some(r) => Some(serde_json::from_str(r.get())?),
                    None => None,
                };
                if let Some(list) = b.and_then(|b| b.config_options) {
                    config_options(Some(list), cx);
                    return Ok(());
                }
            }
        }
        _ => {}
    }
    let ext = cx.push(Notice {
        subtype: Cow::Borrowed("response"),
        message: None,
    });
    ext.put("acp.requestId", env.id_text().into_owned());
    ext.put_opt("result", e.result.filter(|r| !is_null(r)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{self, kinds, of_kind};

    /// One line's events; the line must be one detection takes for ACP.
    fn conv(line: &str) -> Vec<Value> {
        test_support::convert_sniffed(&PROVIDER, line)
    }

    /// A line detection routes to ACP by its memory (an answer naming no provider).
    fn routed(line: &str) -> Vec<Value> {
        test_support::convert_line(&PROVIDER, line)
    }

    fn stream(lines: &[&str]) -> Vec<Value> {
        test_support::convert_stream(&PROVIDER, lines)
    }

    const ASK: &str = r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","options":[{"kind":"allow_always","optionId":"bypassPermissions"},{"kind":"allow_once","optionId":"default"},{"kind":"reject_once","optionId":"plan"}],"toolCall":{"toolCallId":"t1","title":"Ready to code?","kind":"switch_mode","rawInput":{"plan":"p"}}}}"#;

    #[test]
    fn a_decision_is_the_kind_of_the_option_picked() {
        for (picked, decision, allowed) in [
            ("plan", "deny", Some(false)),
            ("bypassPermissions", "allow_always", Some(true)),
            ("default", "allow", Some(true)),
            ("other", "unknown", None),
        ] {
            let answer = format!(
                r#"{{"jsonrpc":"2.0","id":0,"result":{{"outcome":{{"outcome":"selected","optionId":"{picked}"}}}}}}"#
            );
            let ev = stream(&[ASK, &answer]);
            let last = ev.last().unwrap();
            assert_eq!(last["decision"], decision, "{picked}");
            assert_eq!(last.get("allowed").and_then(Value::as_bool), allowed);
            assert_eq!(last["toolUseId"], "t1");
            assert_eq!(last["sessionId"], "s");
        }
        // No request in the stream: the words of the option id say nothing.
        let ev = stream(&[
            r#"{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}"#,
        ]);
        assert_eq!(ev[0]["decision"], "unknown");
        assert!(ev[0].get("allowed").is_none());
    }

    #[test]
    fn a_call_announced_only_by_its_permission_request_is_invoked_there_once() {
        let ev = stream(&[
            ASK,
            r#"{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"plan"}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","status":"pending","title":"Ready to code?","kind":"switch_mode"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
        ]);
        assert_eq!(
            kinds(&ev),
            [
                "tool_invocation",
                "permission_request",
                "permission_response",
                "tool_update",
                "turn_complete"
            ]
        );
    }

    #[test]
    fn the_client_and_the_agent_number_their_requests_apart() {
        // Both sides have a request 3 waiting: the answer's shape says whose it is.
        let ev = stream(&[
            r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/a","content":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":429,"message":"rate limit"}}"#,
        ]);
        let last = ev.last().unwrap();
        assert_eq!(last["event"], "turn_complete");
        assert_eq!(last["isError"], true);
        assert_eq!(last["sessionId"], "s");
        assert_eq!(ev[ev.len() - 2]["httpStatus"], 429);
    }

    #[test]
    fn a_turn_ends_the_calls_it_implies_and_only_those() {
        let update = |id: &str, status: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"tool_call","toolCallId":"{id}","status":"{status}","kind":"execute"}}}}}}"#
            )
        };
        let (a, b) = (update("a", "pending"), update("b", "in_progress"));
        let prompt = r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#;
        let ev = stream(&[
            prompt,
            &a,
            &b,
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}"#,
        ]);
        let ends: Vec<_> = ev
            .iter()
            .filter(|e| e["event"] == "tool_completion")
            .map(|e| {
                (
                    e["callId"].clone(),
                    e["status"].clone(),
                    e["extensions"]["insights.inferred"].clone(),
                )
            })
            .collect();
        assert_eq!(ends.len(), 2);
        assert!(ends.iter().all(|(_, s, i)| s == "cancelled" && i == true));
        // A turn that ends normally leaves an open call alone (nothing says how it ended).
        let ev = stream(&[
            prompt,
            &a,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
        ]);
        assert!(ev.iter().all(|e| e["event"] != "tool_completion"));
    }

    #[test]
    fn a_call_that_ends_after_the_cancel_was_cancelled_whatever_it_says() {
        // Gemini CLI after `session/cancel` (a recording): the running command `completed`
        // "Command cancelled by user.", the one not started yet `failed` "… denied by policy."
        let call = |id: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"tool_call","toolCallId":"{id}","status":"in_progress","kind":"execute"}}}}}}"#
            )
        };
        let end = |id: &str, status: &str, text: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"tool_call_update","toolCallId":"{id}","status":"{status}","content":[{{"type":"content","content":{{"type":"text","text":"{text}"}}}}]}}}}}}"#
            )
        };
        let prompt = r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#;
        let cancel = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#;
        let ev = stream(&[
            prompt,
            &call("a"),
            &call("b"),
            cancel,
            &end("a", "completed", "Command cancelled by user."),
            &end("b", "failed", "Tool execution for Shell denied by policy."),
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}"#,
        ]);
        let ends: Vec<_> = ev
            .iter()
            .filter(|e| e["event"] == "tool_completion")
            .map(|e| (e["status"].clone(), e["extensions"]["acp.status"].clone()))
            .collect();
        assert_eq!(
            ends,
            [
                (json!("cancelled"), json!("completed")),
                (json!("cancelled"), json!("failed"))
            ]
        );
        // Without the cancel, a failure is a failure.
        let ev = stream(&[prompt, &call("b"), &end("b", "failed", "exit 1")]);
        assert!(ev
            .iter()
            .any(|e| e["event"] == "tool_completion" && e["status"] == "failed"));
    }

    #[test]
    fn a_write_changes_each_file_once_when_it_completes() {
        let diff = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"w","content":[{"type":"diff","path":"/p/a","oldText":null,"newText":"x\n"}]}}}"#;
        let done = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"w","status":"completed"}}}"#;
        let failed = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"w","status":"failed"}}}"#;
        let ev = stream(&[diff, diff, done, done]);
        let changes: Vec<_> = ev.iter().filter(|e| e["event"] == "file_change").collect();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0]["changeKind"], "add");
        assert_eq!(
            ev.iter()
                .filter(|e| e["event"] == "tool_completion")
                .count(),
            1
        );
        assert_eq!(
            ev.iter()
                .filter(|e| e["event"] == "tool_invocation")
                .count(),
            1
        );
        let ev = stream(&[diff, failed]);
        assert!(ev.iter().all(|e| e["event"] != "file_change"));
    }

    #[test]
    fn doc_examples() {
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"Check","priority":"high","status":"pending"}]}}}"#,
        );
        assert_eq!(ev[0]["entries"][0]["priority"], "high");
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":53000,"size":200000,"cost":{"amount":0.045,"currency":"USD"}}}}"#,
        );
        assert_eq!(ev[0]["contextTokens"], 53000);
        assert_eq!(ev[0]["costUsd"], 0.045);
        let ev = conv(r#"{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"cancelled"}}}"#);
        assert_eq!(ev[0]["decision"], "cancelled");
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_001","status":"completed","content":[{"type":"content","content":{"type":"text","text":"done"}},{"type":"diff","path":"/p/c.json","oldText":"a\n","newText":"b\n"}]}}}"#,
        );
        // No line announced the call: the update does.
        assert_eq!(ev[0]["event"], "tool_invocation");
        assert_eq!(ev[1]["event"], "tool_completion");
        assert_eq!(ev[1]["output"]["text"], "done");
        assert_eq!(ev[2]["event"], "file_change");
        assert_eq!(
            ev[2]["diff"],
            "--- a/p/c.json\n+++ b/p/c.json\n@@ -1,1 +1,1 @@\n-a\n+b\n"
        );
    }

    #[test]
    fn what_message_does_not_read_typed_is_kept_as_written() {
        // An answer ACP does not define, and one whose result is not an object: notices with
        // the result as written (`result_notice` reads the line again).
        let ev = routed(r#"{"jsonrpc":"2.0","id":7,"result":{"content":"a\u0041","n":1}}"#);
        assert_eq!(ev[0]["event"], "notice");
        assert_eq!(ev[0]["subtype"], "response");
        assert_eq!(ev[0]["extensions"]["result"]["content"], "aA");
        // As written, to the byte (a `Value` would have turned 1e999 into null).
        let line = r#"{"jsonrpc":"2.0","id":7,"result":{"content":"a\u0041","n":1e999}}"#;
        let probe: Probe = serde_json::from_str(line).unwrap();
        let mut cx = Cx::default();
        convert(line, &probe, &mut cx).unwrap();
        let (_, ext) = &cx.events[0];
        let written = serde_json::to_string(ext).unwrap();
        assert!(
            written.contains(r#""result":{"content":"a\u0041","n":1e999}"#),
            "{written}"
        );
        let ev = routed(r#"{"jsonrpc":"2.0","id":"r","result":null}"#);
        assert_eq!(ev[0]["subtype"], "response");
        assert_eq!(ev[0]["extensions"]["acp.requestId"], "r");
        assert!(ev[0]["extensions"].get("result").is_none());
        // A client request ACP maps to a notice keeps its params as written.
        let ev = conv(
            r#"{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/p"}}"#,
        );
        assert_eq!(ev[0]["subtype"], "fs/read_text_file");
        assert_eq!(ev[0]["extensions"]["params"]["path"], "/p");
        assert_eq!(ev[0]["extensions"]["acp.requestId"], "2");
    }

    #[test]
    fn a_result_beside_an_error_is_not_read() {
        // `Message` reads a result typed; where it cannot, the line is read as before it did.
        let ev = routed(
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-1,"message":"m"},"result":{"stopReason":5}}"#,
        );
        assert_eq!(ev[0]["event"], "error");
        assert_eq!(ev[0]["message"], "m");
    }

    #[test]
    fn session_info_and_unknown_kinds() {
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":"Fix"}}}"#,
        );
        assert_eq!(ev[0]["event"], "session_info");
        let line = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"future"}}}"#;
        let probe: Probe = serde_json::from_str(line).unwrap();
        let mut cx = Cx::default();
        assert!(convert(line, &probe, &mut cx).is_err());
    }

    #[test]
    fn codex_lines_are_not_acp() {
        for line in [
            r#"{"method":"initialize","id":1,"params":{"clientInfo":{"name":"x"}}}"#,
            r#"{"id":0,"result":{"decision":"accept"}}"#,
            r#"{"method":"turn/started","params":{}}"#,
        ] {
            let probe: Probe = serde_json::from_str(line).unwrap();
            assert!(!sniff(&probe), "{line}");
        }
    }

    /// The schema's `session/load` answer names no session (`insights run --resume` sends
    /// the request, whose `sessionId` and `cwd` it is); claude-agent-acp's does, and is read
    /// as `session/new`'s.
    #[test]
    fn a_loaded_session_is_the_one_its_request_names() {
        let ev = stream(&[
            r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"old","cwd":"/w","mcpServers":[]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"}]}}}"#,
        ]);
        assert_eq!(kinds(&ev), ["notice", "session_init", "session_mode"]);
        assert_eq!(ev[1]["sessionId"], "old");
        assert_eq!(ev[1]["cwd"], "/w");
        assert_eq!(ev[2]["sessionId"], "old");
        let ev = stream(&[
            r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"old","cwd":"/w","mcpServers":[]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":null}"#,
        ]);
        assert_eq!(kinds(&ev), ["notice", "session_init"]);
    }

    /// claude-agent-acp answers `session/set_config_option` with the session's options now
    /// (after `insights run`'s `set_model`: `model` is `haiku`, and `effort` is gone).
    #[test]
    fn an_accepted_config_option_answers_with_the_options() {
        let ev = stream(&[
            r#"{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"configId":"model","value":"claude-haiku-4-5","sessionId":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"haiku","options":[]}]}}"#,
        ]);
        assert_eq!(kinds(&ev), ["notice", "config_options"]);
        assert_eq!(ev[1]["sessionId"], "s");
        assert_eq!(ev[1]["configOptions"][0]["currentValue"], "haiku");
        // Without options, the answer is a notice as any other.
        let ev = stream(&[
            r#"{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"configId":"x","value":"y","sessionId":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        ]);
        assert_eq!(kinds(&ev), ["notice", "notice"]);
    }

    #[test]
    fn a_subagent_call_left_open_by_a_cancel_ends_its_calls_then_its_subagent() {
        // claude-agent-acp (a recording): an `Agent` call runs a `Bash` inside it; the client
        // cancels; the wire ends neither.
        let prompt = r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#;
        let agent = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"_meta":{"claudeCode":{"toolName":"Agent"}},"sessionUpdate":"tool_call","toolCallId":"ag","rawInput":{"description":"Wait","prompt":"Wait 30 s","subagent_type":"general-purpose"},"status":"pending","kind":"think","title":"Wait"}}}"#;
        let bash = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"_meta":{"claudeCode":{"toolName":"Bash","parentToolUseId":"ag"}},"sessionUpdate":"tool_call","toolCallId":"b1","rawInput":{"command":"sleep 30"},"status":"pending","kind":"execute","title":"sleep 30"}}}"#;
        let cancel = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#;
        let done = r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}"#;
        let ev = stream(&[prompt, agent, bash, cancel, done]);
        let ends: Vec<(&str, &str, &Value)> = ev
            .iter()
            .filter(|e| {
                matches!(
                    e["event"].as_str(),
                    Some("tool_completion" | "subagent_complete")
                )
            })
            .map(|e| {
                (
                    e["event"].as_str().unwrap(),
                    e["callId"].as_str().unwrap(),
                    &e["parentCallId"],
                )
            })
            .collect();
        assert_eq!(
            ends,
            [
                ("tool_completion", "b1", &json!("ag")),
                ("tool_completion", "ag", &Value::Null),
                ("subagent_complete", "ag", &Value::Null),
            ]
        );
        let sub = of_kind(&ev, "subagent_complete")[0];
        assert_eq!(sub["status"], "cancelled");
        assert_eq!(sub["extensions"]["insights.inferred"], true);
        assert_eq!(kinds(&ev).last(), Some(&"turn_complete"));
    }

    #[test]
    fn a_cancel_ends_a_long_chain_of_calls_deepest_first_and_a_loop_once() {
        // Parents come from the wire: a chain 3,000 deep (each call made in the one before),
        // and two calls that name each other.
        let call = |id: &str, parent: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"_meta":{{"claudeCode":{{"toolName":"Bash","parentToolUseId":"{parent}"}}}},"sessionUpdate":"tool_call","toolCallId":"{id}","status":"pending","kind":"execute"}}}}}}"#
            )
        };
        let mut lines = vec![r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#.to_owned()];
        lines.extend((0..3000).map(|i| call(&format!("c{i}"), &format!("c{}", i.max(1) - 1))));
        lines.push(call("x", "y"));
        lines.push(call("y", "x"));
        lines.push(
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#.to_owned(),
        );
        lines.push(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}"#.to_owned());
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let ev = stream(&lines);
        let ended: Vec<&str> = of_kind(&ev, "tool_completion")
            .iter()
            .map(|e| e["callId"].as_str().unwrap())
            .collect();
        assert_eq!(ended.len(), 3002);
        assert_eq!(ended[0], "c2999");
        let at = |id: &str| ended.iter().position(|c| *c == id).unwrap();
        assert!(at("c2") < at("c1") && at("c1") < at("c0"));
    }

    #[test]
    fn a_mode_changes_when_the_agent_accepts_it_not_when_the_client_asks() {
        let ask = r#"{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"s","modeId":"plan"}}"#;
        let ev = stream(&[ask]);
        assert_eq!(kinds(&ev), ["notice"]);
        assert_eq!(ev[0]["extensions"]["acp.modeId"], "plan");
        // Accepted (claude-agent-acp answers `{}`).
        let ev = stream(&[ask, r#"{"jsonrpc":"2.0","id":3,"result":{}}"#]);
        assert_eq!(kinds(&ev), ["notice", "session_mode"]);
        assert_eq!(ev[1]["currentModeId"], "plan");
        assert_eq!(ev[1]["sessionId"], "s");
        // Refused (a recording: an unknown mode id): an error naming the request, no mode.
        let ev = stream(&[
            ask,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error","data":{"details":"Invalid Mode"}}}"#,
        ]);
        assert_eq!(kinds(&ev), ["notice", "error"]);
        assert_eq!(ev[1]["extensions"]["acp.method"], "session/set_mode");
        assert_eq!(ev[1]["sessionId"], "s");
    }

    #[test]
    fn a_call_keeps_what_it_shows_and_a_kind_without_an_event_value() {
        // Gemini CLI announces a command it runs without asking with its description.
        let ev = stream(&[
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","status":"in_progress","title":"mkdir d2","content":[{"type":"content","content":{"type":"text","text":"[current working directory /w] (Make d2)"}}],"locations":[],"kind":"execute"}}}"#,
        ]);
        let inv = of_kind(&ev, "tool_invocation")[0];
        assert_eq!(
            inv["extensions"]["acp.content"][0]["text"],
            "[current working directory /w] (Make d2)"
        );
        assert!(inv["extensions"].get("acp.kind").is_none());
        let ev = stream(&[ASK]);
        let inv = of_kind(&ev, "tool_invocation")[0];
        assert_eq!(inv["kind"], "other");
        assert_eq!(inv["extensions"]["acp.kind"], "switch_mode");
    }

    #[test]
    fn a_tool_call_after_its_own_update_brings_its_kind() {
        // Issue 42 row 10: the update named the call first; its announcement keeps its kind.
        let ev = crate::test_support::convert_stream(
            &PROVIDER,
            &[
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"in_progress"}}}"#,
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","status":"in_progress","title":"ls","kind":"execute"}}}"#,
            ],
        );
        let update = ev
            .iter()
            .find(|e| e["event"] == "tool_update" && e["title"] == "ls");
        assert_eq!(
            update.map(|e| &e["kind"]),
            Some(&serde_json::json!("execute")),
            "{ev:#?}"
        );
    }

    /// The adapter contract's `assistant.message`: ACP streams a message as chunks only; where
    /// it ends (here a chunk of another kind, then the prompt's answer) the converter writes
    /// the whole text, inferred, numbered apart from the line's events. A stream cut in the
    /// middle of a message has it written at the end of the input.
    #[test]
    fn chunks_are_written_whole_where_their_message_ends() {
        const S: &str = r#""sessionId":"s""#;
        let chunk = |kind: &str, text: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{{S},"update":{{"sessionUpdate":"{kind}","content":{{"type":"text","text":"{text}"}}}}}}}}"#
            )
        };
        let prompt = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{{S},"prompt":[{{"type":"text","text":"hi"}}]}}}}"#
        );
        let (t1, t2, m1, m2) = (
            chunk("agent_thought_chunk", "Think"),
            chunk("agent_thought_chunk", "ing."),
            chunk("agent_message_chunk", "Hello, "),
            chunk("agent_message_chunk", "world."),
        );
        let answer = r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#;
        let ev = test_support::convert_output(&PROVIDER, &[&prompt, &t1, &t2, &m1, &m2, answer]);
        let whole: Vec<_> = of_kind(&ev, "text");
        assert_eq!(whole.len(), 2, "{ev:#?}");
        assert_eq!(
            (&whole[0]["kind"], &whole[0]["text"]),
            (&json!("thinking"), &json!("Thinking."))
        );
        assert_eq!(
            (&whole[1]["kind"], &whole[1]["text"]),
            (&json!("text"), &json!("Hello, world."))
        );
        for w in &whole {
            assert_eq!(w["extensions"]["insights.inferred"], true);
            assert_eq!(w["sessionId"], "s");
            assert!(w["id"].as_str().unwrap().ends_with(":text"), "{w}");
        }
        // Each right before the event that ends its message, which keeps its own id.
        let k = kinds(&ev);
        let at = k.iter().position(|&e| e == "turn_complete").unwrap();
        assert_eq!(k[at - 1], "text");
        assert!(ev[at]["id"].as_str().unwrap().ends_with(":0"));
        // Cut short: the end of the input is no end of the message (its chunks are there).
        let ev = test_support::convert_output(&PROVIDER, &[&prompt, &m1, &m2]);
        assert!(of_kind(&ev, "text").is_empty(), "{ev:#?}");
    }

    #[test]
    fn a_tool_call_after_its_own_update_names_it() {
        // ACP RULE 3 (seeds row 116): the update named the call first, with nothing of it (the
        // placeholder name `tool`); its `tool_call` brings its name, here claude-agent-acp's
        // own in `_meta`, and the kind: the update that says so carries both. A call named
        // by its announcement keeps that name whatever later updates say.
        let up = |extra: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"tool_call_update","toolCallId":"c"{extra}}}}}}}"#
            )
        };
        let call = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","status":"pending","title":"Read a.txt","kind":"read","_meta":{"claudeCode":{"toolName":"Read"}}}}}"#;
        let first = up(r#","status":"in_progress""#);
        let last = up(r#","status":"in_progress","title":"Read a.txt (1 line)""#);
        let ev = crate::test_support::convert_stream(&PROVIDER, &[&first, call, &last]);
        let names: Vec<(&str, &Value, &Value)> = ev
            .iter()
            .take(3)
            .map(|e| (e["event"].as_str().unwrap(), &e["toolName"], &e["kind"]))
            .collect();
        assert_eq!(
            names,
            [
                ("tool_invocation", &"tool".into(), &"other".into()),
                ("tool_update", &"tool".into(), &Value::Null),
                ("tool_update", &"Read".into(), &"read".into()),
            ]
        );
        // A later update is no announcement.
        assert_eq!((ev.len(), &ev[3]["kind"]), (4, &Value::Null));
    }
}
