//! ACP, the Agent Client Protocol (JSON-RPC 2.0 between a client and an agent): the agent's
//! output alone, or a tee of both directions. Recorded with Gemini CLI 0.61.0 `--acp` and
//! claude-agent-acp 0.49.0 (`testdata/acp-gemini/`, `testdata/acp-claude/`); schema v1.
//!
//! | message | events |
//! |---|---|
//! | `initialize` result | `session_init` (agent name and version, capabilities in `extensions`; `sessionId` `""`: no session exists yet) |
//! | `session/new`, `session/load` result | `session_init`, then `session_mode` and `config_options` when present |
//! | `session/prompt` (client) | `turn_start`, `user_input` |
//! | `session/prompt` result | `turn_complete` (`stopReason`, usage when the agent reports it) |
//! | `session/cancel` (client) | `session_status` interrupted |
//! | `session/set_mode` (client) | `session_mode` |
//! | `session/update` `user_message_chunk` | `user_input` (a replay, `isSynthetic`) |
//! | `agent_message_chunk`, `agent_thought_chunk` | `stream_delta` text / thinking (chunks pass on as they come; `reduce` joins them) |
//! | `tool_call` | `tool_invocation` (+ `tool_completion` when it arrives finished) |
//! | `tool_call_update` | `tool_completion` when completed / failed / cancelled, else `tool_update`; each `diff` content of a finished call also a `file_change` |
//! | `plan` | `plan_update` |
//! | `available_commands_update`, `current_mode_update`, `config_option_update` | `available_commands`, `session_mode`, `config_options` |
//! | `session_info_update` | `session_info` |
//! | `usage_update` | `usage_update` (`contextTokens`, `contextWindow`, `costUsd`) |
//! | `session/request_permission` | `permission_request` with the `options` offered |
//! | its answer | `permission_response`: `cancelled`, or the option chosen (`decision` guessed from the option id: `allow`, `allow_always`, `deny`, `deny_always`; `optionId` kept) |
//! | `fs/*`, `terminal/*` requests and their answers, other client requests | `notice` |
//! | JSON-RPC errors | `error` |
//!
//! Unstable `session/update` kinds: `plan_removed` → empty `plan_update`, `compaction_update` →
//! `session_status` compacting; others → `raw`.

use super::jsonrpc::{Envelope, Kind, Message, RpcError};
use super::{Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::wire::{count, is_null, is_object, Count, IfObject};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

pub const PROVIDER: Provider = Provider {
    name: "acp",
    about: "ACP (Agent Client Protocol) JSON-RPC: an agent's output, or both directions",
    jsonrpc: true,
    sniff,
    convert,
    // Capabilities: filled in by the `insights providers` change from this file's mapping; check.
    caps: super::Capabilities {
        streaming_deltas: true,
        tool_calls: true,
        tool_results: true,
        reasoning: true,
        permissions: true,
        questions: false,
        file_changes: true,
        command_exec: true,
        mcp: false,
        usage: true,
        cost: true,
        subagents: false,
        plans: true,
    },
};

crate::remember! {
    /// What ACP lines need of earlier lines of the stream.
    pub struct Memory {
    }
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
/// ([`jsonrpc::Message`]; before, `params`, `update` and `result` were captured raw and read
/// again). What needs a member as written (a notice's `params`, an unknown answer's
/// `result`) reads the line again: those are rare.
fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let m: Message<Params, ResultBody> = Message::read(line, probe.members())?;
    let kind = m.kind();
    let (env, params, result) = m.into_parts();
    match kind {
        Some(Kind::Request) | Some(Kind::Notification) => {
            let method = env.method.clone().unwrap_or_default();
            method_call(&method, &env, params, line, cx)
        }
        Some(Kind::Response) => {
            let known = match result {
                Some(IfObject(Some(b))) => response(&env, *b, cx)?,
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
                    message: None,
                    data: None,
                },
            };
            let ext = cx.push(ErrorEvent {
                message: e.message.unwrap_or(Cow::Borrowed("JSON-RPC error")),
                severity: Severity::Error,
                code: e.code.map(|c| Cow::Owned(c.to_string())),
                http_status: e.code.filter(|c| (100..600).contains(c)).map(|c| c as u64),
                will_retry: None,
                attempt: None,
                max_retries: None,
                retry_delay_ms: None,
                request_id: Some(Cow::Owned(env.id_text().into_owned())),
                parent_call_id: None,
            });
            ext.put_opt("acp.data", e.data.filter(|d| !is_null(d)));
            Ok(())
        }
        None => Err(Unmapped("not a JSON-RPC message".into())),
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    session_id: Option<Str<'a>>,
    #[serde(borrow, default)]
    update: IfObject<Box<Update<'a>>>,
    #[serde(borrow)]
    prompt: Option<Vec<ContentBlock<'a>>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    mode_id: Option<Str<'a>>,
    #[serde(borrow)]
    tool_call: Option<&'a RawValue>,
    #[serde(borrow)]
    options: Option<Vec<OptionWire<'a>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OptionWire<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    option_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    name: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    kind: Option<Str<'a>>,
}

/// A content block (text, image, resource, …); only text and images are read here.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContentBlock<'a> {
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    ty: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    text: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    data: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    mime_type: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    uri: Option<Str<'a>>,
}

/// A `session/update` payload, all kinds in one shape.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Update<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    session_update: Option<Str<'a>>,
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    ty: Option<Str<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    message_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool_call_id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    title: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    kind: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    current_mode_id: Option<Str<'a>>,
    #[serde(borrow)]
    config_options: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    updated_at: Option<Str<'a>>,
    used: Option<Count>,
    size: Option<Count>,
    #[serde(borrow)]
    cost: Option<Cost<'a>>,
}

#[derive(Deserialize)]
struct Location<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    path: Option<Str<'a>>,
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    tool_name: Option<Str<'a>>,
    #[serde(borrow)]
    tool_response: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    content: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    status: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    priority: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct Cost<'a> {
    amount: Option<f64>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    currency: Option<Str<'a>>,
}

/// Tool call content: `content`, `diff` or `terminal`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolContent<'a> {
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::wire::opt_str"
    )]
    ty: Option<Str<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    path: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    old_text: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    new_text: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    terminal_id: Option<Str<'a>>,
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

/// A tool name for a call: the agent's own (`_meta.claudeCode.toolName`), the prefix of Gemini's
/// `name__name_…` call ids, else the kind.
fn tool_name<'a>(u: &Update<'a>, call_id: &str) -> Str<'a> {
    if let Some(n) = u
        .meta
        .as_ref()
        .and_then(|m| m.claude_code.as_ref())
        .and_then(|c| c.tool_name.clone())
    {
        return n;
    }
    if let Some((prefix, _)) = call_id.split_once("__") {
        if !prefix.is_empty() {
            return Cow::Owned(prefix.to_owned());
        }
    }
    u.kind.clone().unwrap_or(Cow::Borrowed("tool"))
}

fn method_call<'a>(
    method: &str,
    env: &Envelope<'a>,
    params: Option<Box<Params<'a>>>,
    line: &'a str,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let p = params.unwrap_or_default();
    cx.session_id = p.session_id.clone();
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
                    media_type: Cow::Owned(b.mime_type.clone().unwrap_or_default().into_owned()),
                    data: Cow::Owned(
                        b.data
                            .clone()
                            .or(b.uri.clone())
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
            cx.push(SessionStatus {
                status: SessionStatusKind::Interrupted,
                message: None,
            });
            Ok(())
        }
        "session/set_mode" => {
            let ext = cx.push(SessionMode {
                current_mode_id: p.mode_id.unwrap_or_default(),
                available_modes: Vec::new(),
            });
            ext.put("acp.requestId", env.id_text().into_owned());
            Ok(())
        }
        "session/request_permission" => {
            let tc: Option<Update> = match p.tool_call {
                Some(t) if is_object(t) => Some(serde_json::from_str(t.get())?),
                _ => None,
            };
            let call_id = tc.as_ref().and_then(|t| t.tool_call_id.clone());
            let name = match &tc {
                Some(t) => {
                    let id = call_id.clone().unwrap_or_default();
                    let n = tool_name(t, &id);
                    if n == "tool" {
                        t.title.clone().unwrap_or(n)
                    } else {
                        n
                    }
                }
                None => Cow::Borrowed("tool"),
            };
            let options = p.options.map(|v| {
                v.into_iter()
                    .map(|o| PermissionOption {
                        option_id: o.option_id.unwrap_or_default(),
                        name: o.name.unwrap_or_default(),
                        kind: o.kind.unwrap_or_default(),
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
                title: tc.as_ref().and_then(|t| t.title.clone()),
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
        Ok((Some(b.text.unwrap_or_default()), None))
    } else {
        Ok((None, Some(raw)))
    }
}

fn update<'a>(u: Update<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let kind = u
        .session_update
        .clone()
        .or(u.ty.clone())
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
                message_id: u.message_id,
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
            ext.put_opt("acp.messageId", u.message_id);
        }
        "tool_call" | "tool_call_update" => tool_call(&kind, u, cx)?,
        "plan" | "plan_removed" => {
            let entries = u
                .entries
                .unwrap_or_default()
                .into_iter()
                .map(|e| PlanEntry {
                    content: e.content.unwrap_or_default(),
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
                current_mode_id: u.current_mode_id.unwrap_or_default(),
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
                title: u.title,
                updated_at: u.updated_at,
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
                    json!({ "amount": c.amount, "currency": c.currency }),
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

fn tool_call<'a>(kind: &str, u: Update<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let call_id = u.tool_call_id.clone().or(u.id.clone()).unwrap_or_default();
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
        .map(|v| v.iter().filter_map(|l| l.path.clone()).collect::<Vec<_>>())
        .filter(|v| !v.is_empty());
    let name = tool_name(&u, &call_id);
    let tool_response = u
        .meta
        .as_ref()
        .and_then(|m| m.claude_code.as_ref())
        .and_then(|c| c.tool_response);
    if kind == "tool_call" {
        cx.push(ToolInvocation {
            call_id: call_id.clone(),
            parent_call_id: None,
            kind: tool_kind(u.kind.as_deref()),
            tool_name: name.clone(),
            title: u.title.clone(),
            input: u
                .raw_input
                .filter(|i| is_object(i))
                .map_or_else(|| Json::Value(json!({})), Json::Raw),
            locations: locations.clone(),
            model: None,
            mcp_server: None,
            mcp_tool: None,
            message_id: None,
        });
    }
    if finished {
        let failed = status.as_deref() != Some("completed");
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
                Some("completed") => ToolCallStatus::Completed,
                Some("failed") => ToolCallStatus::Failed,
                _ => ToolCallStatus::Cancelled,
            },
            duration_ms: None,
            output,
            is_error: failed,
            content,
            locations: locations.clone(),
            parent_call_id: None,
        });
        for t in contents
            .iter()
            .filter(|c| c.ty.as_deref() == Some("terminal"))
        {
            ext.put_opt("acp.terminalId", t.terminal_id.clone());
        }
        if !failed {
            for d in contents.iter().filter(|c| c.ty.as_deref() == Some("diff")) {
                let Some(path) = d.path.clone() else { continue };
                let old = d.old_text.as_deref().filter(|o| !o.is_empty());
                let new = d.new_text.as_deref().unwrap_or("");
                let change = if old.is_none() {
                    ChangeKind::Add
                } else {
                    ChangeKind::Update
                };
                let diff = crate::diff::unified(&path, old, new);
                cx.push(FileChange {
                    path,
                    change_kind: change,
                    move_path: None,
                    diff: Some(Cow::Owned(diff)),
                    cumulative: false,
                    call_id: Some(call_id.clone()),
                    parent_call_id: None,
                });
            }
        }
    } else if kind == "tool_call_update" {
        let output = tool_response
            .or(u.raw_output.filter(|o| !is_null(o)))
            .map(Json::Raw);
        let ext = cx.push(ToolUpdate {
            call_id,
            status: status.clone(),
            tool_name: Some(name),
            output,
            elapsed_ms: None,
            parent_call_id: None,
            title: u.title,
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
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultBody<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    session_id: Option<Str<'a>>,
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    stop_reason: Option<Str<'a>>,
    usage: Option<PromptUsage>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
    #[serde(borrow)]
    outcome: Option<Outcome<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Modes<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    current_mode_id: Option<Str<'a>>,
    #[serde(borrow, default)]
    available_modes: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Models<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    current_model_id: Option<Str<'a>>,
    #[serde(borrow, default)]
    available_models: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct AgentInfo<'a> {
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    name: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    version: Option<Str<'a>>,
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    outcome: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    option_id: Option<Str<'a>>,
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
    #[serde(borrow, default, deserialize_with = "crate::wire::opt_str")]
    model: Option<Str<'a>>,
    token_count: Option<QuotaTokens>,
}

/// The decision an option id stands for, as far as its words tell.
fn decision_of(option_id: &str) -> (Decision, bool) {
    let id = option_id.to_ascii_lowercase();
    let always = id.contains("always") || id.contains("session");
    let no = ["reject", "deny", "cancel", "disallow", "decline", "no"]
        .iter()
        .any(|w| {
            id == *w
                || id.starts_with(&format!("{w}_"))
                || id.starts_with(&format!("{w}-"))
                || id.contains(&format!("_{w}"))
                || id.contains(&format!("-{w}"))
        });
    match (no, always) {
        (true, true) => (Decision::DenyAlways, false),
        (true, false) => (Decision::Deny, false),
        (false, true) => (Decision::AllowAlways, true),
        (false, false) => (Decision::Allow, true),
    }
}

/// The events of an answer whose `result` is an object, `false` if it is none ACP defines.
fn response<'a>(env: &Envelope<'a>, b: ResultBody<'a>, cx: &mut Cx<'a>) -> Result<bool, Unmapped> {
    let request_id: Str<'a> = Cow::Owned(env.id_text().into_owned());
    if let Some(o) = b.outcome {
        let cancelled = o.outcome.as_deref() == Some("cancelled");
        let (decision, allowed) = if cancelled {
            (Decision::Cancelled, false)
        } else {
            decision_of(o.option_id.as_deref().unwrap_or(""))
        };
        cx.push(PermissionResponse {
            request_id,
            decision,
            allowed,
            message: None,
            updated_input: None,
            updated_permissions: None,
            interrupt: false,
            tool_use_id: None,
            option_id: o.option_id,
        });
    } else if let Some(stop) = b.stop_reason {
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
                        (m.model.unwrap_or_default(), mu)
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
    } else if let Some(sid) = b.session_id {
        cx.session_id = Some(sid);
        let ext = cx.push(SessionInit {
            model: b.models.as_ref().and_then(|m| m.current_model_id.clone()),
            available_models: b.models.as_ref().map(|m| {
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
        if let Some(m) = b.modes {
            cx.push(SessionMode {
                current_mode_id: m.current_mode_id.unwrap_or_default(),
                available_modes: m
                    .available_modes
                    .into_iter()
                    .filter(|x| is_object(x))
                    .map(Json::Raw)
                    .collect(),
            });
        }
        if let Some(c) = b.config_options {
            cx.push(ConfigOptions {
                config_options: c
                    .into_iter()
                    .filter(|x| is_object(x))
                    .map(Json::Raw)
                    .collect(),
            });
        }
    } else if b.protocol_version.is_some() || b.agent_capabilities.is_some() {
        let info = b.agent_info;
        let ext = cx.push(SessionInit {
            version: info.as_ref().and_then(|i| i.version.clone()),
            ..SessionInit::default()
        });
        ext.put_opt("acp.agentName", info.and_then(|i| i.name));
        ext.put_opt("acp.protocolVersion", b.protocol_version);
        ext.put_opt("acp.agentCapabilities", b.agent_capabilities);
        ext.put_opt("acp.authMethods", b.auth_methods);
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// An answer kept as a notice, its `result` as written (the line read again).
fn result_notice<'a>(env: &Envelope<'a>, line: &'a str, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let e: Envelope = serde_json::from_str(line)?;
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

    fn conv(line: &str) -> Vec<Value> {
        let probe: Probe = serde_json::from_str(line).unwrap();
        assert!(sniff(&probe), "not recognised as ACP: {line}");
        routed(line)
    }

    /// A line detection routes to ACP by its memory (an answer naming no provider).
    fn routed(line: &str) -> Vec<Value> {
        let probe: Probe = serde_json::from_str(line).unwrap();
        let mut cx = Cx::default();
        convert(line, &probe, &mut cx).unwrap();
        cx.events
            .iter()
            .map(|(b, e)| {
                let mut v = serde_json::to_value(b).unwrap();
                v["event"] = Value::from(b.kind());
                if !e.is_empty() {
                    v["extensions"] = serde_json::to_value(e).unwrap();
                }
                v
            })
            .collect()
    }

    #[test]
    fn decisions_from_option_ids() {
        assert_eq!(decision_of("proceed_once").0, Decision::Allow);
        assert_eq!(decision_of("proceed_always").0, Decision::AllowAlways);
        assert_eq!(decision_of("allow_always").0, Decision::AllowAlways);
        assert_eq!(decision_of("cancel").0, Decision::Deny);
        assert_eq!(decision_of("reject").0, Decision::Deny);
        assert_eq!(decision_of("reject-always").0, Decision::DenyAlways);
        assert_eq!(decision_of("allow").0, Decision::Allow);
        assert_eq!(decision_of("know").0, Decision::Allow);
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
        assert_eq!(ev[0]["event"], "tool_completion");
        assert_eq!(ev[0]["output"]["text"], "done");
        assert_eq!(ev[1]["event"], "file_change");
        assert_eq!(
            ev[1]["diff"],
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
}
