//! AceClaw daemon: the JSON-RPC 2.0 stream between the CLI and the daemon (newline-delimited,
//! over its Unix socket), and the WebSocket bridge's envelope
//! `{eventId, sessionId, receivedAt, event: {method, params}}` around the same notifications.
//!
//! Built from AceClaw's wire schema (`aceclaw-dashboard/src/types/events.ts`), its emitters
//! (`StreamingNotificationHandler.java`), `../shared/formats/aceclaw.md` and
//! `../shared/seeds/execution-web-event-schema.md`; not checked against a recording (no
//! recorded log exists, and the daemon needs a model provider). Each line maps on its own, but
//! for its session on the socket: the `stream.*` notifications name none, and are the session
//! the client last named ([`Memory`]).
//!
//! | method | events |
//! |---|---|
//! | `stream.session_started` / `stream.session_ended` | `session_init` (model, project path as `cwd`) / `session_status` ended |
//! | `stream.turn_started` / `stream.turn_completed` | `turn_start` / `turn_complete` (duration, stop reason); `turnId` is the prompt's `requestId` |
//! | `stream.text`, `stream.thinking` | `stream_delta` text, thinking |
//! | `stream.tool_use` | `tool_invocation` (the `summary` as title; the wire has no input) |
//! | `stream.tool_completed` | `tool_completion` (failed when `isError`, the error text as output; the wire has no output) |
//! | `stream.subagent.start` / `.end` | `subagent_spawn` / `subagent_complete`, the `agentType` value (the emitter's agent id) as `callId` |
//! | `stream.plan_created` | `plan_update` (the steps, all pending; the goal as `explanation`) |
//! | `stream.plan_step_*`, `stream.plan_replanned/completed/escalated` | `task_update` (`taskType` plan_step or plan; the step or plan id as `taskId`) |
//! | `stream.usage` | `usage_update` (the last call's input in `stepUsage`, the session's totals in `total`) |
//! | `stream.compaction` | `context_compaction` |
//! | `stream.cancelled` | `session_status` interrupted |
//! | `stream.error`, `stream.budget_exhausted` | `error` (warning; error) |
//! | `permission.request` / `permission.response` / `permission.cancelled` | `permission_request` / `permission_response` (approved + remember → allow_always) / `permission_response` cancelled |
//! | `agent.prompt` (the client's request) | `user_input` |
//! | its answer `{sessionId, response, stopReason, usage}` | `turn_complete` (subtype `cancelled` when `cancelled` is true) |
//! | `stream.heartbeat`, `stream.gate`, `resume.*`, other requests and answers | `notice` with the params in `extensions` |
//! | JSON-RPC errors | `error` |
//!
//! **Detection.** AceClaw's methods are dotted (`stream.text`, `permission.request`,
//! `agent.prompt`, `session.create`, `resume.offer`), where Codex's and ACP's use slashes; a
//! bridge envelope has `eventId` and an object `event`. A bare answer with `response` and
//! `stopReason` is the answer to `agent.prompt`; other bare answers follow rule 2b.

use super::jsonrpc::{Envelope, Kind, RpcError};
use super::memo::Memo;
use super::{Capabilities, Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::wire::{count, is_object, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

pub const PROVIDER: Provider = Provider {
    name: "aceclaw",
    display: "AceClaw",
    cc_name: "acp",
    about:
        "AceClaw daemon JSON-RPC notifications (stream.*, permission.*), or its WebSocket bridge",
    jsonrpc: true,
    sniff,
    convert,
    reading: super::Reading {
        event_cursor: true,
        positional_subagents: true,
        ..super::Reading::PLAIN
    },
    caps: Capabilities {
        streaming_deltas: true,
        tool_calls: true,
        tool_results: true,
        status_updates: true,
        reasoning: true,
        permissions: true,
        questions: false,
        file_changes: false,
        command_exec: true,
        mcp: false,
        usage: true,
        cost: false,
        subagents: true,
        plans: true,
    },
    infers_turns: false,
    whole_messages: true,
    at_end: None,
    talk: None,
};

/// Method prefixes of the daemon's protocol.
const METHOD_PREFIXES: &[&str] = &["stream.", "permission.", "resume.", "agent.", "session."];

fn sniff(p: &Probe) -> bool {
    if let Some(m) = p.method() {
        return METHOD_PREFIXES.iter().any(|pre| m.starts_with(pre));
    }
    if p.member("eventId").is_some() && p.event.is_some_and(|r| r.is_object()) {
        return true;
    }
    if p.is_bare_response() {
        let names = p.result_members();
        let has = |k: &str| names.iter().any(|n| n == k);
        return has("response") && has("stopReason");
    }
    false
}

/// The bridge's envelope.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Bridge<'a> {
    event_id: Option<Count>,
    session_id: OptStr<'a>,
    received_at: OptStr<'a>,
    #[serde(borrow)]
    event: &'a RawValue,
}

fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let mut bridge_id = None;
    let env: Envelope = if probe.member("eventId").is_some() && probe.method.is_none() {
        let b: Bridge = crate::members::read(line, probe.members())?;
        cx.session_id = b.session_id.0.filter(|s| !s.is_empty());
        cx.timestamp = b.received_at.0.filter(|t| crate::time::looks_rfc3339(t));
        bridge_id = count(b.event_id);
        serde_json::from_str(b.event.get())?
    } else {
        crate::members::read(line, probe.members())?
    };
    let before = cx.events.len();
    match env.kind() {
        Some(Kind::Notification | Kind::Request) => {
            let method = env.method.0.clone().unwrap_or_default();
            let params = env.params.filter(|p| is_object(p));
            method_call(&method, params, cx)?;
            if env.kind() == Some(Kind::Request) {
                for (_, ext) in &mut cx.events[before..] {
                    ext.put("aceclaw.requestId", env.id_text().into_owned());
                }
            }
        }
        Some(Kind::Response) => response(&env, cx)?,
        Some(Kind::ErrorResponse) => {
            let e: RpcError = match env.error {
                Some(e) if is_object(e) => serde_json::from_str(e.get())?,
                _ => RpcError {
                    code: None,
                    message: OptStr(None),
                    data: None,
                },
            };
            let ext = cx.push(ErrorEvent {
                message: e.message.0.unwrap_or(Cow::Borrowed("JSON-RPC error")),
                severity: Severity::Error,
                code: e.code.map(|c| Cow::Owned(c.to_string())),
                http_status: None,
                will_retry: None,
                attempt: None,
                max_retries: None,
                retry_delay_ms: None,
                request_id: Some(Cow::Owned(env.id_text().into_owned())),
                parent_call_id: None,
            });
            ext.put_opt("aceclaw.errorData", e.data);
        }
        None => return Err(Unmapped("neither a JSON-RPC call nor an answer".into())),
    }
    match bridge_id {
        Some(id) => {
            for (_, ext) in &mut cx.events[before..] {
                ext.put("aceclaw.eventId", id);
            }
        }
        None => socket_session(cx),
    }
    Ok(())
}

crate::providers::memo::remember! {
    /// What AceClaw's socket lines need of earlier lines.
    pub struct Memory {
        /// The session the socket's client last named (`session.create`'s answer,
        /// `agent.prompt`, a permission answer): the `stream.*` notifications name none, and
        /// are that session's (one client, one session at a time).
        pub session: Memo<String>,
    }
}

const SOCKET: &str = "socket";

/// On the socket: a line that names its session is remembered; one that names none is the
/// last named session's. (The bridge's envelope names the session of every event.)
fn socket_session(cx: &mut Cx<'_>) {
    match cx.session_id.take() {
        Some(id) => {
            let line = cx.line;
            let memo = &mut cx.memory().aceclaw.session;
            if memo.get(SOCKET).map(String::as_str) != Some(&*id) {
                memo.insert(SOCKET, id.to_string(), line);
            }
            cx.session_id = Some(id);
        }
        None => {
            cx.session_id = cx
                .memory()
                .aceclaw
                .session
                .get(SOCKET)
                .map(|s| Cow::Owned(s.clone()));
        }
    }
}

/// The members of `params` the methods use (each method has a few of them).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    session_id: OptStr<'a>,
    timestamp: OptStr<'a>,
    request_id: OptStr<'a>,
    turn_number: Option<Count>,
    duration_ms: Option<Count>,
    tool_count: Option<Count>,
    stop_reason: OptStr<'a>,
    model: OptStr<'a>,
    project_path: OptStr<'a>,
    reason: OptStr<'a>,
    delta: OptStr<'a>,
    parent_step_id: OptStr<'a>,
    id: OptStr<'a>,
    name: OptStr<'a>,
    summary: OptStr<'a>,
    is_error: Option<bool>,
    error: OptStr<'a>,
    phase: OptStr<'a>,
    original_tokens: Option<Count>,
    compacted_tokens: Option<Count>,
    agent_type: OptStr<'a>,
    prompt: OptStr<'a>,
    input_tokens: Option<Count>,
    total_input_tokens: Option<Count>,
    total_output_tokens: Option<Count>,
    // plans
    plan_id: OptStr<'a>,
    goal: OptStr<'a>,
    #[serde(borrow)]
    steps: Option<Vec<PlanStep<'a>>>,
    step_id: OptStr<'a>,
    step_index: Option<Count>,
    total_steps: Option<Count>,
    step_name: OptStr<'a>,
    success: Option<bool>,
    tokens_used: Option<Count>,
    fallback_approach: OptStr<'a>,
    attempt: Option<Count>,
    rationale: OptStr<'a>,
    // permissions
    tool: OptStr<'a>,
    description: OptStr<'a>,
    tool_use_id: OptStr<'a>,
    approved: Option<bool>,
    remember: Option<bool>,
}

#[derive(Deserialize)]
struct PlanStep<'a> {
    #[serde(borrow)]
    name: OptStr<'a>,
    description: OptStr<'a>,
}

/// The ToolKind of an AceClaw tool.
fn tool_kind(name: &str) -> ToolKind {
    if name.starts_with("mcp__") {
        return ToolKind::Mcp;
    }
    match name {
        "bash" => ToolKind::Execute,
        "read_file" | "list_directory" => ToolKind::Read,
        "write_file" | "edit_file" => ToolKind::Edit,
        "grep" | "glob" => ToolKind::Search,
        "web_fetch" => ToolKind::Fetch,
        "web_search" | "browser" => ToolKind::Browse,
        "task" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

fn method_call<'a>(
    method: &str,
    params: Option<&'a RawValue>,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let p: Params = match params {
        Some(r) => serde_json::from_str(r.get())?,
        None => Params::default(),
    };
    if let Some(s) = p.session_id.0.clone().filter(|s| !s.is_empty()) {
        cx.session_id = Some(s);
    }
    if let Some(t) = p
        .timestamp
        .0
        .clone()
        .filter(|t| crate::time::looks_rfc3339(t))
    {
        cx.timestamp = Some(t);
    }
    let delta = |kind, text: Option<Str<'a>>| StreamDelta {
        kind,
        parent_call_id: None,
        text_delta: Some(text.unwrap_or_default()),
        json_delta: None,
        block_index: None,
        call_id: None,
        message_id: None,
    };
    let plan_step = |p: &Params<'a>, phase, status: Option<&'static str>, description| TaskUpdate {
        task_id: p.step_id.0.clone().unwrap_or_default(),
        phase,
        call_id: None,
        status: status.map(Cow::Borrowed),
        description,
        agent_type: None,
        task_type: Some(Cow::Borrowed("plan_step")),
        summary: None,
        last_tool_name: None,
        usage: None,
    };
    let plan = |p: &Params<'a>, status: Option<&'static str>, summary| TaskUpdate {
        task_id: p.plan_id.0.clone().unwrap_or_default(),
        phase: TaskPhase::Updated,
        call_id: None,
        status: status.map(Cow::Borrowed),
        description: None,
        agent_type: None,
        task_type: Some(Cow::Borrowed("plan")),
        summary,
        last_tool_name: None,
        usage: None,
    };
    match method {
        "stream.session_started" => {
            cx.push(SessionInit {
                model: p.model.0,
                cwd: p.project_path.0,
                ..SessionInit::default()
            });
        }
        "stream.session_ended" => {
            cx.push(SessionStatus {
                status: SessionStatusKind::Ended,
                message: p.reason.0,
            });
        }
        "stream.turn_started" => {
            cx.turn_id = p.request_id.0;
            let ext = cx.push(TurnStart { model: None });
            ext.put_opt("aceclaw.turnNumber", count(p.turn_number));
        }
        "stream.turn_completed" => {
            cx.turn_id = p.request_id.0;
            let ext = cx.push(TurnComplete {
                is_error: p.stop_reason.as_deref() == Some("ERROR"),
                duration_ms: count(p.duration_ms),
                stop_reason: p.stop_reason.0,
                ..TurnComplete::default()
            });
            ext.put_opt("aceclaw.turnNumber", count(p.turn_number));
            ext.put_opt("aceclaw.toolCount", count(p.tool_count));
        }
        "stream.text" | "stream.thinking" => {
            let kind = if method == "stream.text" {
                StreamDeltaKind::Text
            } else {
                StreamDeltaKind::Thinking
            };
            let ext = cx.push(delta(kind, p.delta.0));
            ext.put_opt("aceclaw.parentStepId", p.parent_step_id.0);
        }
        "stream.tool_use" => {
            let name = p.name.0.unwrap_or_default();
            let ext = cx.push(ToolInvocation {
                call_id: p.id.0.unwrap_or_default(),
                parent_call_id: None,
                kind: tool_kind(&name),
                tool_name: name,
                title: p.summary.0,
                input: Json::Value(json!({})),
                locations: None,
                model: None,
                mcp_server: None,
                mcp_tool: None,
                message_id: None,
            });
            ext.put_opt("aceclaw.parentStepId", p.parent_step_id.0);
        }
        "stream.tool_completed" => {
            let failed = p.is_error.unwrap_or(false);
            let ext = cx.push(ToolCompletion {
                call_id: p.id.0.unwrap_or_default(),
                status: if failed {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                },
                duration_ms: count(p.duration_ms),
                output: p.error.0.map(Json::Str),
                is_error: failed,
                content: None,
                locations: None,
                parent_call_id: None,
            });
            ext.put_opt("tool_name", p.name.0);
        }
        "stream.subagent.start" => {
            let agent = p.agent_type.0.unwrap_or_default();
            cx.push(SubagentSpawn {
                call_id: agent.clone(),
                agent_type: Some(agent),
                description: None,
                is_resume: false,
                resume_agent_id: None,
                prompt: p.prompt.0,
                parent_call_id: None,
            });
        }
        "stream.subagent.end" => {
            let agent = p.agent_type.0.unwrap_or_default();
            cx.push(SubagentComplete {
                call_id: agent,
                agent_id: None,
                status: None,
                summary: None,
                duration_ms: None,
                total_tokens: None,
                tool_use_count: None,
                parent_call_id: None,
            });
        }
        "stream.usage" => {
            let mut step = serde_json::Map::new();
            if let Some(n) = count(p.input_tokens) {
                step.insert("input_tokens".into(), Value::from(n));
            }
            let total =
                (p.total_input_tokens.is_some() || p.total_output_tokens.is_some()).then(|| {
                    TokenUsage {
                        input_tokens: count(p.total_input_tokens).unwrap_or(0),
                        output_tokens: count(p.total_output_tokens).unwrap_or(0),
                        ..TokenUsage::default()
                    }
                });
            cx.push(UsageUpdate {
                step_usage: Json::Value(Value::Object(step)),
                total,
                context_window: None,
                context_tokens: None,
                cost_usd: None,
                parent_call_id: None,
                model: None,
                message_id: None,
            });
        }
        "stream.compaction" => {
            let ext = cx.push(ContextCompaction {
                trigger: CompactionTrigger::Auto,
                pre_tokens: count(p.original_tokens),
                post_tokens: count(p.compacted_tokens),
                summary: None,
                duration_ms: None,
            });
            ext.put_opt("aceclaw.phase", p.phase.0);
        }
        "stream.cancelled" => {
            cx.push(SessionStatus {
                status: SessionStatusKind::Interrupted,
                message: None,
            });
        }
        "stream.error" | "stream.budget_exhausted" => {
            let budget = method == "stream.budget_exhausted";
            let ext = cx.push(ErrorEvent {
                message: p
                    .error
                    .0
                    .or(p.reason.0)
                    .unwrap_or(Cow::Borrowed("stream error")),
                // The daemon's stream errors are not fatal; an exhausted budget ends the turn.
                severity: if budget {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                code: budget.then_some(Cow::Borrowed("budget_exhausted")),
                http_status: None,
                will_retry: None,
                attempt: None,
                max_retries: None,
                retry_delay_ms: None,
                request_id: None,
                parent_call_id: None,
            });
            if budget {
                ext.put_opt("aceclaw.params", params);
            }
        }
        "stream.plan_created" => {
            let entries = p
                .steps
                .unwrap_or_default()
                .into_iter()
                .map(|s| PlanEntry {
                    content: match (s.name.0, s.description.0) {
                        (Some(n), Some(d)) if !d.is_empty() => Cow::Owned(format!("{n}: {d}")),
                        (Some(n), _) => n,
                        (None, d) => d.unwrap_or_default(),
                    },
                    status: PlanStatus::Pending,
                    priority: None,
                    active_form: None,
                })
                .collect();
            let ext = cx.push(PlanUpdate {
                entries,
                call_id: None,
                parent_call_id: None,
                explanation: p.goal.0,
            });
            ext.put_opt("aceclaw.planId", p.plan_id.0);
        }
        "stream.plan_step_started" => {
            let ext = cx.push(plan_step(
                &p,
                TaskPhase::Started,
                Some("in_progress"),
                p.step_name.0.clone(),
            ));
            ext.put_opt("aceclaw.planId", p.plan_id.0);
            ext.put_opt("aceclaw.stepIndex", count(p.step_index));
            ext.put_opt("aceclaw.totalSteps", count(p.total_steps));
        }
        "stream.plan_step_completed" => {
            let status = if p.success.unwrap_or(false) {
                "completed"
            } else {
                "failed"
            };
            let ext = cx.push(plan_step(
                &p,
                TaskPhase::Updated,
                Some(status),
                p.step_name.0.clone(),
            ));
            ext.put_opt("aceclaw.planId", p.plan_id.0);
            ext.put_opt("aceclaw.stepIndex", count(p.step_index));
            ext.put_opt("aceclaw.durationMs", count(p.duration_ms));
            ext.put_opt("aceclaw.tokensUsed", count(p.tokens_used));
        }
        "stream.plan_step_fallback" => {
            let ext = cx.push(plan_step(
                &p,
                TaskPhase::Progress,
                None,
                p.fallback_approach.0.clone(),
            ));
            ext.put_opt("aceclaw.planId", p.plan_id.0);
            ext.put_opt("aceclaw.stepIndex", count(p.step_index));
            ext.put_opt("aceclaw.attempt", count(p.attempt));
        }
        "stream.plan_replanned" | "stream.plan_completed" | "stream.plan_escalated" => {
            let (status, summary) = match method {
                "stream.plan_replanned" => (Some("replanned"), p.rationale.0.clone()),
                "stream.plan_escalated" => (Some("escalated"), p.reason.0.clone()),
                _ if p.success.unwrap_or(false) => (Some("completed"), None),
                _ => (Some("failed"), None),
            };
            let ext = cx.push(plan(&p, status, summary));
            ext.put_opt("aceclaw.params", params);
        }
        "permission.request" => {
            let tool = p.tool.0.unwrap_or_default();
            cx.push(PermissionRequest {
                request_id: p.request_id.0.unwrap_or_default(),
                tool_kind: tool_kind(&tool),
                tool_name: tool,
                tool_input: Json::Value(json!({})),
                tool_use_id: p.tool_use_id.0,
                reason: None,
                blocked_path: None,
                suggestions: None,
                title: p.description.0,
                parent_call_id: None,
                options: None,
            });
        }
        "permission.response" | "permission.cancelled" => {
            let approved = p.approved.unwrap_or(false);
            let decision = match (method, approved, p.remember.unwrap_or(false)) {
                ("permission.cancelled", _, _) => Decision::Cancelled,
                (_, true, true) => Decision::AllowAlways,
                (_, true, false) => Decision::Allow,
                (_, false, _) => Decision::Deny,
            };
            let ext = cx.push(PermissionResponse {
                request_id: p.request_id.0.unwrap_or_default(),
                decision,
                allowed: Some(approved && decision != Decision::Cancelled),
                message: None,
                updated_input: None,
                updated_permissions: None,
                interrupt: false,
                tool_use_id: None,
                option_id: None,
            });
            ext.put_opt("aceclaw.remember", p.remember);
        }
        "agent.prompt" => {
            cx.push(UserInput {
                text: p.prompt.0.unwrap_or_default(),
                images: None,
                is_synthetic: false,
                parent_call_id: None,
            });
        }
        other => {
            let message = match other {
                "stream.heartbeat" => p.phase.0,
                "stream.gate" => p.reason.0,
                _ => None,
            };
            let ext = cx.push(Notice {
                subtype: Cow::Owned(other.to_owned()),
                message,
            });
            ext.put_opt("aceclaw.params", params);
        }
    }
    Ok(())
}

/// The answer to `agent.prompt`, the one answer with a shape of its own.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptResult<'a> {
    #[serde(borrow)]
    session_id: OptStr<'a>,
    response: OptStr<'a>,
    stop_reason: OptStr<'a>,
    usage: Option<PromptUsage>,
    /// The prompt was cancelled (`stream.cancelled` came before): its stop reason stays the
    /// model's (`END_TURN`).
    #[serde(default)]
    cancelled: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptUsage {
    input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    total_tokens: Option<Count>,
    llm_requests: Option<Count>,
}

/// Flags of the prompt's answer that have no field of their own.
const PROMPT_FLAGS: &[&str] = &[
    "cancelled",
    "compacted",
    "compactionPhase",
    "planned",
    "planSuccess",
    "planSteps",
    "planStepsCompleted",
];

fn response<'a>(env: &Envelope<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let request_id = Cow::Owned(env.id_text().into_owned());
    let result = env.result.filter(|r| is_object(r));
    let names = result
        .map(|r| super::jsonrpc::member_names(r.get()))
        .unwrap_or_default();
    let has = |k: &str| names.iter().any(|n| n == k);
    match result {
        Some(r) if has("stopReason") && has("response") => {
            let w: PromptResult = serde_json::from_str(r.get())?;
            if let Some(s) = w.session_id.0.filter(|s| !s.is_empty()) {
                cx.session_id = Some(s);
            }
            let usage = w.usage.as_ref().map(|u| TokenUsage {
                input_tokens: count(u.input_tokens).unwrap_or(0),
                output_tokens: count(u.output_tokens).unwrap_or(0),
                ..TokenUsage::default()
            });
            let all: Pairs<&RawValue> = serde_json::from_str(r.get())?;
            let ext = cx.push(TurnComplete {
                is_error: w.stop_reason.as_deref() == Some("ERROR"),
                // A cancelled prompt's turn is cancelled (`event::cancelled_turn`).
                subtype: (w.cancelled == Some(true)).then_some(Cow::Borrowed("cancelled")),
                result: w.response.0,
                stop_reason: w.stop_reason.0,
                usage,
                ..TurnComplete::default()
            });
            ext.put("aceclaw.requestId", request_id);
            if let Some(u) = &w.usage {
                ext.put_opt("aceclaw.totalTokens", count(u.total_tokens));
                ext.put_opt("aceclaw.llmRequests", count(u.llm_requests));
            }
            for (k, v) in all.0 {
                if PROMPT_FLAGS.contains(&&*k) {
                    ext.put(Cow::Owned(format!("aceclaw.{k}")), v);
                }
            }
        }
        _ => {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("response"),
                message: None,
            });
            ext.put("aceclaw.requestId", request_id);
            ext.put_opt("aceclaw.result", env.result);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;

    /// One line's events; the line must be one detection takes for this provider.
    fn conv(line: &str) -> Vec<Value> {
        test_support::convert_sniffed(&PROVIDER, line)
    }

    #[test]
    fn tool_use_and_completion() {
        // ../shared/formats/aceclaw.md, illustrative lines.
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"stream.tool_use","params":{"id":"toolu_01AbC","name":"read_file","summary":"src/Main.java"}}"#,
        );
        assert_eq!(ev[0]["event"], "tool_invocation");
        assert_eq!(ev[0]["kind"], "read");
        assert_eq!(ev[0]["title"], "src/Main.java");
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"stream.tool_completed","params":{"id":"toolu_01AbC","name":"read_file","durationMs":12,"isError":true,"error":"no such file"}}"#,
        );
        assert_eq!(ev[0]["status"], "failed");
        assert_eq!(ev[0]["durationMs"], 12);
        assert_eq!(ev[0]["output"], "no such file");
    }

    #[test]
    fn permissions_both_ways() {
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"permission.request","params":{"tool":"bash","description":"Run: mvn test","requestId":"perm-7c2e","toolUseId":"toolu_01XyZ"}}"#,
        );
        assert_eq!(ev[0]["event"], "permission_request");
        assert_eq!(ev[0]["toolKind"], "execute");
        assert_eq!(ev[0]["toolUseId"], "toolu_01XyZ");
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"permission.response","params":{"requestId":"perm-7c2e","sessionId":"s","approved":true,"remember":true}}"#,
        );
        assert_eq!(ev[0]["decision"], "allow_always");
    }

    #[test]
    fn socket_notifications_are_the_session_the_client_named() {
        // Issue 42 row 9: the stream.* notifications on the socket name no session.
        let ev = crate::test_support::convert_stream(
            &PROVIDER,
            &[
                r#"{"jsonrpc":"2.0","method":"stream.text","params":{"delta":"before"}}"#,
                r#"{"jsonrpc":"2.0","method":"agent.prompt","params":{"sessionId":"s1","prompt":"Go."},"id":2}"#,
                r#"{"jsonrpc":"2.0","method":"stream.text","params":{"delta":"Done."}}"#,
                r#"{"jsonrpc":"2.0","method":"agent.prompt","params":{"sessionId":"s2","prompt":"Again."},"id":3}"#,
                r#"{"jsonrpc":"2.0","method":"stream.tool_use","params":{"id":"t","name":"bash"}}"#,
            ],
        );
        let sessions: Vec<&str> = ev
            .iter()
            .map(|e| e["sessionId"].as_str().unwrap())
            .collect();
        // (Nothing is known before the first: it stays without one.)
        assert_eq!(sessions, ["", "s1", "s1", "s2", "s2"]);
    }

    #[test]
    fn a_cancelled_prompt_is_a_cancelled_turn() {
        // Issue 42 row 10: the answer after stream.cancelled says cancelled, its stop reason
        // the model's.
        let ev = conv(
            r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s","response":"","stopReason":"END_TURN","cancelled":true}}"#,
        );
        assert_eq!(ev[0]["event"], "turn_complete");
        assert_eq!(
            (&ev[0]["subtype"], &ev[0]["stopReason"]),
            (&"cancelled".into(), &"END_TURN".into())
        );
    }

    #[test]
    fn usage_totals() {
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"stream.usage","params":{"inputTokens":5321,"totalInputTokens":10234,"totalOutputTokens":812}}"#,
        );
        assert_eq!(ev[0]["stepUsage"]["input_tokens"], 5321);
        assert_eq!(ev[0]["total"]["outputTokens"], 812);
    }

    #[test]
    fn prompt_answer_ends_the_turn() {
        let ev = conv(
            r#"{"jsonrpc":"2.0","id":7,"result":{"sessionId":"s","response":"done","stopReason":"END_TURN","usage":{"inputTokens":1234,"outputTokens":56,"totalTokens":1290,"llmRequests":3},"cancelled":true}}"#,
        );
        assert_eq!(ev[0]["event"], "turn_complete");
        assert_eq!(ev[0]["result"], "done");
        assert_eq!(ev[0]["usage"]["inputTokens"], 1234);
        assert_eq!(ev[0]["extensions"]["aceclaw.cancelled"], true);
    }

    #[test]
    fn bridge_envelope() {
        let ev = conv(
            r#"{"eventId":42,"sessionId":"s1","receivedAt":"2026-07-06T10:00:00Z","event":{"method":"stream.text","params":{"delta":"hi"}}}"#,
        );
        assert_eq!(ev[0]["event"], "stream_delta");
        assert_eq!(ev[0]["textDelta"], "hi");
        assert_eq!(ev[0]["extensions"]["aceclaw.eventId"], 42);
    }

    #[test]
    fn plans() {
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"stream.plan_created","params":{"planId":"p1","stepCount":2,"goal":"Fix it","steps":[{"index":1,"name":"Read","description":"read the code"},{"index":2,"name":"Test","description":""}]}}"#,
        );
        assert_eq!(ev[0]["entries"][0]["content"], "Read: read the code");
        assert_eq!(ev[0]["entries"][1]["content"], "Test");
        let ev = conv(
            r#"{"jsonrpc":"2.0","method":"stream.plan_step_completed","params":{"planId":"p1","stepId":"p1-s1","stepIndex":1,"stepName":"Read","success":true,"durationMs":5,"tokensUsed":9}}"#,
        );
        assert_eq!(ev[0]["event"], "task_update");
        assert_eq!(ev[0]["status"], "completed");
        assert_eq!(ev[0]["taskType"], "plan_step");
    }

    #[test]
    fn other_protocols_are_not_taken() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#,
            r#"{"method":"turn/started","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
        ] {
            assert!(!sniff(&serde_json::from_str::<Probe>(line).unwrap()));
        }
    }

    /// The adapter contract's `assistant.message`: AceClaw streams text and thinking as
    /// deltas only (`stream.text`, `stream.thinking`); the converter writes each whole where
    /// it ends, inferred (testdata/aceclaw/uds-session.jsonl, lines 5-8).
    #[test]
    fn text_and_thinking_deltas_are_written_whole() {
        let ev = test_support::convert_output(
            &PROVIDER,
            &[
                r#"{"jsonrpc":"2.0","method":"stream.thinking","params":{"delta":"I should run the tests first."}}"#,
                r#"{"jsonrpc":"2.0","method":"stream.text","params":{"delta":"I'll read the file"}}"#,
                r#"{"jsonrpc":"2.0","method":"stream.text","params":{"delta":" and run the tests."}}"#,
                r#"{"jsonrpc":"2.0","method":"stream.tool_use","params":{"id":"toolu_01AbC","name":"read_file","summary":"src/Main.java"}}"#,
            ],
        );
        let texts: Vec<(&str, &str)> = ev
            .iter()
            .filter(|e| e["event"] == "text")
            .map(|e| (e["kind"].as_str().unwrap(), e["text"].as_str().unwrap()))
            .collect();
        assert_eq!(
            texts,
            [
                ("thinking", "I should run the tests first."),
                ("text", "I'll read the file and run the tests.")
            ]
        );
        assert_eq!(ev[ev.len() - 2]["event"], "text");
        assert_eq!(ev[ev.len() - 1]["event"], "tool_invocation");
    }
}
