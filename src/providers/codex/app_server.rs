//! The app-server protocol (JSON-RPC v2): the server's notifications and requests, and the
//! client's requests in a tee of both directions; thread announcements. Items are read in
//! [`super::thread_items`], answers in [`super::answers`].

use super::diff::split_diff;
use super::legacy::legacy;
use super::thread_items::{v2_item, Item};
use super::{
    cancel_open_calls, changes_json, command_text, cumulative_changes, delta, error_event,
    http_status, is_open, line_thread, note_error, notice, object, open_call, or_null,
    plan_free_delta, plan_update, remember_request, set_stream_thread, set_thread_model,
    status_in_message, tool_invocation, turn_errored, turn_model_usage, turn_usage, unwrap_shell,
    usage_reported, usage_turn_started, wire_status, PlanStep, Totals, RAW_REASONING,
};
use crate::event::*;
use crate::providers::jsonrpc::{self, Envelope, Kind};
use crate::providers::{Cx, Unmapped};
use crate::wire::{count, is_null, is_object, raw_str, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

/// The `params` object of a JSON-RPC line as written, for the few methods whose notice keeps
/// it whole: the line is parsed again ([`Message`] reads `params` typed).
///
/// [`Message`]: crate::providers::jsonrpc::Message
fn raw_params(line: &str) -> Option<&RawValue> {
    let env: Envelope = serde_json::from_str(line).ok()?;
    env.params.filter(|p| is_object(p))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct Params<'a> {
    thread_id: OptStr<'a>,
    turn_id: OptStr<'a>,
    item_id: OptStr<'a>,
    delta: OptStr<'a>,
    summary_index: Option<Count>,
    content_index: Option<Count>,
    #[serde(borrow)]
    item: Option<&'a RawValue>,
    #[serde(borrow)]
    thread: Option<Box<Thread<'a>>>,
    #[serde(borrow)]
    turn: Option<Box<Turn<'a>>>,
    #[serde(borrow)]
    status: Option<&'a RawValue>,
    token_usage: Option<Box<TokenUsageWire>>,
    diff: OptStr<'a>,
    explanation: OptStr<'a>,
    #[serde(borrow)]
    plan: Option<Vec<PlanStep<'a>>>,
    #[serde(borrow)]
    error: Option<Box<ErrorWire<'a>>>,
    will_retry: Option<bool>,
    #[serde(borrow)]
    rate_limits: Option<Box<RateLimitsWire<'a>>>,
    reason: OptStr<'a>,
    #[serde(borrow)]
    command: Option<&'a RawValue>,
    cwd: OptStr<'a>,
    #[serde(borrow)]
    command_actions: Option<&'a RawValue>,
    #[serde(borrow)]
    available_decisions: Option<&'a RawValue>,
    grant_root: OptStr<'a>,
    #[serde(borrow)]
    permissions: Option<&'a RawValue>,
    #[serde(borrow)]
    questions: Option<&'a RawValue>,
    server_name: OptStr<'a>,
    message: OptStr<'a>,
    summary: OptStr<'a>,
    details: OptStr<'a>,
    from_model: OptStr<'a>,
    to_model: OptStr<'a>,
    call_id: OptStr<'a>,
    conversation_id: OptStr<'a>,
    #[serde(borrow)]
    file_changes: Option<&'a RawValue>,
    #[serde(borrow)]
    msg: Option<&'a RawValue>,
    stdin: OptStr<'a>,
    #[serde(borrow)]
    request_id: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Thread<'a> {
    #[serde(borrow)]
    pub(super) id: Str<'a>,
    model: OptStr<'a>,
    cwd: OptStr<'a>,
    cli_version: OptStr<'a>,
    reasoning_effort: OptStr<'a>,
    model_provider: OptStr<'a>,
    parent_thread_id: OptStr<'a>,
    /// The history a `thread/resume` answer carries.
    #[serde(borrow)]
    pub(super) turns: Option<&'a RawValue>,
    /// The thread's rollout file.
    path: OptStr<'a>,
    /// The client that started it (`vscode`, `exec`, …) and how.
    #[serde(borrow)]
    source: Option<&'a RawValue>,
    originator: OptStr<'a>,
    forked_from_id: OptStr<'a>,
    #[serde(borrow)]
    git_info: Option<&'a RawValue>,
    name: OptStr<'a>,
    agent_nickname: OptStr<'a>,
    agent_role: OptStr<'a>,
    ephemeral: Option<bool>,
    /// The members the event model has no field for, kept as `codex.*` extensions
    /// ([`session_init`]).
    #[serde(borrow)]
    preview: Option<&'a RawValue>,
    #[serde(borrow)]
    created_at: Option<&'a RawValue>,
    #[serde(borrow)]
    updated_at: Option<&'a RawValue>,
    #[serde(borrow)]
    recency_at: Option<&'a RawValue>,
    #[serde(borrow)]
    environments: Option<&'a RawValue>,
    #[serde(borrow)]
    history_mode: Option<&'a RawValue>,
    #[serde(borrow)]
    status: Option<&'a RawValue>,
    #[serde(borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    attached_to_thread_id: Option<&'a RawValue>,
    #[serde(borrow)]
    thread_source: Option<&'a RawValue>,
    #[serde(borrow)]
    section: Option<&'a RawValue>,
    #[serde(borrow)]
    section_entered_at: Option<&'a RawValue>,
    #[serde(borrow)]
    project_id: Option<&'a RawValue>,
    #[serde(borrow)]
    can_accept_direct_input: Option<&'a RawValue>,
    #[serde(borrow)]
    daybreak_enabled: Option<&'a RawValue>,
    #[serde(borrow)]
    extra: Option<&'a RawValue>,
}

/// A wire value worth an extension: not `null` and not `""` (both say nothing).
pub(super) fn said(v: Option<&RawValue>) -> Option<&RawValue> {
    v.filter(|v| !is_null(v) && v.get() != "\"\"")
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Turn<'a> {
    #[serde(borrow)]
    pub(super) id: Str<'a>,
    pub(super) status: OptStr<'a>,
    #[serde(borrow)]
    pub(super) error: Option<ErrorWire<'a>>,
    duration_ms: Option<Count>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ErrorWire<'a> {
    pub(super) message: OptStr<'a>,
    #[serde(borrow)]
    codex_error_info: Option<&'a RawValue>,
    additional_details: OptStr<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenUsageWire {
    total: Option<TokenBreakdown>,
    last: Option<TokenBreakdown>,
    model_context_window: Option<Count>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenBreakdown {
    input_tokens: Option<Count>,
    cached_input_tokens: Option<Count>,
    cache_write_input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    reasoning_output_tokens: Option<Count>,
}

impl TokenBreakdown {
    fn totals(&self) -> Totals {
        [
            count(self.input_tokens),
            count(self.cached_input_tokens),
            count(self.cache_write_input_tokens),
            count(self.output_tokens),
            count(self.reasoning_output_tokens),
        ]
    }

    fn tokens(&self) -> TokenUsage {
        TokenUsage {
            input_tokens: count(self.input_tokens)
                .unwrap_or(0)
                .saturating_sub(count(self.cached_input_tokens).unwrap_or(0)),
            output_tokens: count(self.output_tokens).unwrap_or(0),
            cache_read_tokens: count(self.cached_input_tokens),
            cache_creation_tokens: count(self.cache_write_input_tokens),
            reasoning_tokens: count(self.reasoning_output_tokens),
        }
    }

    /// Snake_case keys, as CC-Insights reads `stepUsage`.
    fn step_usage(&self) -> Value {
        json!({
            "input_tokens": count(self.input_tokens).unwrap_or(0).saturating_sub(count(self.cached_input_tokens).unwrap_or(0)),
            "output_tokens": count(self.output_tokens).unwrap_or(0),
            "cache_read_input_tokens": count(self.cached_input_tokens).unwrap_or(0),
            "cache_creation_input_tokens": count(self.cache_write_input_tokens).unwrap_or(0),
            "reasoning_output_tokens": count(self.reasoning_output_tokens).unwrap_or(0),
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RateLimitsWire<'a> {
    primary: Option<WindowWire>,
    secondary: Option<WindowWire>,
    plan_type: OptStr<'a>,
    #[serde(borrow)]
    credits: Option<&'a RawValue>,
    /// Which limit this is (`codex`, a model's own), and what it says beside the windows.
    limit_id: OptStr<'a>,
    limit_name: OptStr<'a>,
    #[serde(borrow)]
    rate_limit_reached_type: Option<&'a RawValue>,
    #[serde(borrow)]
    spend_control_reached: Option<&'a RawValue>,
    #[serde(borrow)]
    individual_limit: Option<&'a RawValue>,
    normal_model_slug: OptStr<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WindowWire {
    used_percent: Option<f64>,
    window_minutes: Option<Count>,
    window_duration_mins: Option<Count>,
    resets_at: Option<Count>,
}

impl WindowWire {
    fn window(&self) -> RateLimitWindow {
        RateLimitWindow {
            used_percent: self.used_percent.map(|p| p.max(0.0).round() as u64),
            window_duration_mins: count(self.window_minutes.or(self.window_duration_mins)),
            resets_at: count(self.resets_at),
        }
    }
}

pub(super) fn method_call<'a>(
    method: &str,
    env: &Envelope<'a>,
    params: Option<Box<Params<'a>>>,
    line: &'a str,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    let p = params.unwrap_or_default();
    if method == "codex/event" || method.starts_with("codex/event/") {
        cx.session_id = p.conversation_id.0;
        let msg = p
            .msg
            .ok_or_else(|| Unmapped("codex/event without a msg".into()))?;
        return legacy(msg, Some(env), cx);
    }
    let params = || raw_params(line);
    cx.session_id = p.thread_id.0.clone();
    cx.turn_id = p.turn_id.0.clone();
    let request_id = || env.id_text().into_owned();
    match method {
        // --- client → server
        "initialize"
        | "initialized"
        | "thread/start"
        | "thread/resume"
        | "thread/fork"
        | "thread/list"
        | "thread/read"
        | "model/list"
        | "review/start"
        | "thread/compact/start" => {
            notice(
                cx,
                Cow::Owned(method.to_owned()),
                params().map(|p| ("params", p)),
            );
        }
        "turn/start" | "turn/steer" => {
            // The prompt as the client sent it; the server echoes it as a userMessage item,
            // which becomes the `user_input`.
            let raw = params();
            notice(
                cx,
                Cow::Owned(method.to_owned()),
                raw.map(|p| ("params", p)),
            );
            if method == "turn/start" {
                if let Some(r) = raw {
                    turn_overrides(r, cx);
                }
            }
        }
        "turn/interrupt" => {
            let ext = cx.push(SessionStatus {
                status: SessionStatusKind::Interrupted,
                message: None,
            });
            ext.put("codex.requestId", request_id());
        }
        // --- notifications
        "thread/closed" => {
            // The thread is done with: what is kept for its turns goes.
            if let Some(t) = line_thread(cx) {
                let codex = &mut cx.memory().codex;
                codex.usage.remove(&t);
                codex.cwds.remove(&t);
            }
            notice(
                cx,
                Cow::Borrowed("thread/closed"),
                params().map(|p| ("params", p)),
            );
        }
        "thread/settings/updated" => {
            // The thread's settings after a change (a `turn/start`'s overrides): its
            // collaboration mode is a `session_mode` when it is news (a stream without the
            // client's side of the wire tells the mode only here).
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct Updated<'a> {
                #[serde(borrow)]
                thread_settings: Option<Settings<'a>>,
            }
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct Settings<'a> {
                #[serde(borrow)]
                collaboration_mode: Option<&'a RawValue>,
            }
            let raw = params();
            notice(
                cx,
                Cow::Borrowed("thread/settings/updated"),
                raw.map(|p| ("params", p)),
            );
            let collab = raw
                .and_then(|r| serde_json::from_str::<Updated>(r.get()).ok())
                .and_then(|u| u.thread_settings?.collaboration_mode)
                .filter(|m| is_object(m));
            if let Some(raw) = collab {
                if let Some(mode) = super::collaboration_mode(raw) {
                    super::thread_collaboration(cx, mode, raw, false);
                }
            }
        }
        "thread/started" => {
            // The answer to `thread/start` (`thread/resume`, `thread/fork`) came before and
            // gave the thread's `session_init` already, if the stream holds the answers. This
            // one repeats it: a stream of notifications only (or a thread the server started
            // itself, a subagent's) has no other, and a second session_init of the same
            // session states the same facts again (`validate` checks the first; `reduce` and
            // `replay` take later ones as updates, and show nothing when nothing changed).
            let t = p
                .thread
                .ok_or_else(|| Unmapped("thread/started without a thread".into()))?;
            session_init(*t, None, cx);
        }
        "thread/status/changed" => {
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct St<'a> {
                #[serde(rename = "type")]
                ty: OptStr<'a>,
                #[serde(borrow, default)]
                active_flags: Vec<Str<'a>>,
            }
            let st: Option<St> = match p.status {
                Some(s) if is_object(s) => Some(serde_json::from_str(s.get())?),
                _ => None,
            };
            let (status, msg) = match st.as_ref().and_then(|s| s.ty.as_deref()) {
                Some("idle") => (SessionStatusKind::Idle, None),
                Some("active") if st.as_ref().is_some_and(|s| !s.active_flags.is_empty()) => {
                    let flags = st
                        .as_ref()
                        .map(|s| s.active_flags.join(", "))
                        .unwrap_or_default();
                    (SessionStatusKind::RequiresAction, Some(Cow::Owned(flags)))
                }
                Some("active") => (SessionStatusKind::Running, None),
                Some("systemError") => (SessionStatusKind::Error, None),
                Some("notLoaded") => (SessionStatusKind::Ended, None),
                _ => (SessionStatusKind::Idle, None),
            };
            cx.push(SessionStatus {
                status,
                message: msg,
            });
        }
        "thread/tokenUsage/updated" => {
            let u = p
                .token_usage
                .ok_or_else(|| Unmapped("tokenUsage/updated without tokenUsage".into()))?;
            let mut step = u.last.as_ref();
            let mut repeated = None;
            if let Some(total) = &u.total {
                let last = u.last.as_ref().map(TokenBreakdown::totals);
                if !usage_reported(cx, p.turn_id.as_deref(), total.totals(), last) {
                    // The total did not move: `last` is the request counted before, again.
                    repeated = step.take();
                }
            }
            let ext = cx.push(UsageUpdate {
                step_usage: Json::Value(
                    step.map(TokenBreakdown::step_usage)
                        .unwrap_or_else(|| json!({})),
                ),
                total: u.total.as_ref().map(TokenBreakdown::tokens),
                context_window: count(u.model_context_window),
                context_tokens: None,
                cost_usd: None,
                parent_call_id: None,
                model: None,
                message_id: None,
            });
            ext.put_opt(
                "codex.repeatedLast",
                repeated.map(|l| Json::Value(l.step_usage())),
            );
        }
        "turn/started" => {
            if let Some(t) = p.turn {
                usage_turn_started(cx, &t.id);
                cx.turn_id = Some(t.id);
            }
            cx.push(TurnStart::default());
        }
        "turn/completed" => {
            let t = p
                .turn
                .ok_or_else(|| Unmapped("turn/completed without a turn".into()))?;
            cx.turn_id = Some(t.id);
            // The wire's spelling stays in `stopReason`; the words compared are lower camel case.
            let wire = t.status.0.clone().unwrap_or(Cow::Borrowed("completed"));
            let status = wire_status(wire.clone());
            let failed = status == "failed";
            let errored = turn_errored(cx);
            if failed && !errored {
                // No `error` notification said why: the turn's own error does.
                cx.push(v2_error(t.error.as_ref(), false));
            }
            // A turn that ends without completing (interrupted, or failed) cuts off the calls
            // it left open: they end with it, not at a later turn's end.
            if status == "interrupted" || failed {
                let thread = line_thread(cx);
                cancel_open_calls(cx, thread.as_deref());
            }
            let errors = t.error.and_then(|e| e.message.0).map(|m| vec![m]);
            let usage = turn_usage(cx, cx.turn_id.clone().as_deref());
            let model_usage = turn_model_usage(cx, usage.as_ref());
            let subtype = turn_subtype(status);
            cx.push(TurnComplete {
                is_error: failed,
                subtype: Some(subtype),
                errors: if failed { errors } else { None },
                duration_ms: count(t.duration_ms),
                stop_reason: Some(wire),
                usage,
                model_usage,
                ..TurnComplete::default()
            });
        }
        "turn/diff/updated" => {
            let diff = p.diff.0.unwrap_or_default();
            let files = split_diff(&diff);
            if files.is_empty() {
                notice(cx, Cow::Borrowed("turn/diff/updated"), None);
            }
            cumulative_changes(cx, files);
        }
        "turn/plan/updated" => {
            cx.push(plan_update(p.explanation.0, p.plan, None));
        }
        "item/started" | "item/completed" => {
            let raw = p
                .item
                .ok_or_else(|| Unmapped(format!("{method} without an item")))?;
            let item: Item = serde_json::from_str(raw.get())?;
            v2_item(method == "item/completed", item, cx);
        }
        "item/agentMessage/delta" => {
            let (text, plan) = match p.delta.0 {
                Some(d) => match plan_free_delta(cx, p.item_id.as_deref(), d) {
                    Some(d) => (Some(d), false),
                    // All of it was plan: the `plan` item delivers it.
                    None => (None, true),
                },
                None => (None, false),
            };
            let ext = cx.push(delta(StreamDeltaKind::Text, p.item_id.0, text));
            if plan {
                ext.put("codex.proposedPlan", true);
            }
        }
        "item/plan/delta" => {
            let ext = cx.push(delta(StreamDeltaKind::Text, p.item_id.0, p.delta.0));
            ext.put("block_type", "plan");
        }
        "item/reasoning/summaryTextDelta" => {
            let mut d = delta(StreamDeltaKind::Thinking, p.item_id.0, p.delta.0);
            d.block_index = count(p.summary_index);
            cx.push(d);
        }
        "item/reasoning/summaryPartAdded" => {
            let mut d = delta(StreamDeltaKind::BlockStart, p.item_id.0, None);
            d.block_index = count(p.summary_index);
            let ext = cx.push(d);
            ext.put("block_type", "thinking");
        }
        "item/reasoning/textDelta" => {
            let mut d = delta(StreamDeltaKind::Thinking, p.item_id.0, p.delta.0);
            d.block_index = count(p.content_index);
            let ext = cx.push(d);
            ext.put(RAW_REASONING, true);
        }
        "item/commandExecution/outputDelta" | "item/fileChange/outputDelta" => {
            cx.push(delta(StreamDeltaKind::ToolOutput, p.item_id.0, p.delta.0));
        }
        "item/commandExecution/terminalInteraction" => {
            // Event reference: an empty `stdin` is the waiting state; once input arrives
            // the command runs on (the stdin is kept as `codex.stdin`).
            let waiting = p.stdin.as_deref().is_none_or(str::is_empty);
            let ext = cx.push(ToolUpdate {
                kind: None,
                call_id: p.item_id.0.unwrap_or_default(),
                status: Some(Cow::Borrowed(if waiting {
                    "waitingForInput"
                } else {
                    "running"
                })),
                tool_name: Some(Cow::Borrowed("Bash")),
                output: None,
                elapsed_ms: None,
                parent_call_id: None,
                title: None,
                input: None,
                locations: None,
            });
            ext.put_opt("codex.stdin", p.stdin.0);
        }
        "item/mcpToolCall/progress" => {
            cx.push(ToolUpdate {
                kind: None,
                call_id: p.item_id.0.unwrap_or_default(),
                status: Some(Cow::Borrowed("progress")),
                tool_name: None,
                output: p.message.0.map(Json::Str),
                elapsed_ms: None,
                parent_call_id: None,
                title: None,
                input: None,
                locations: None,
            });
        }
        "error" => {
            let will_retry = p.will_retry.unwrap_or(false);
            cx.push(v2_error(p.error.as_deref(), will_retry));
            if !will_retry {
                note_error(cx);
            }
        }
        "configWarning" | "deprecationNotice" => {
            let msg = p
                .summary
                .0
                .or(p.message.0)
                .or(p.details.0)
                .unwrap_or(Cow::Borrowed(""));
            let mut e = error_event(msg, Severity::Warning);
            e.code = Some(Cow::Owned(method.to_owned()));
            cx.push(e);
        }
        "account/rateLimits/updated" => {
            let r = p.rate_limits;
            let ext = cx.push(RateLimitUpdate {
                primary: r
                    .as_ref()
                    .and_then(|r| r.primary.as_ref())
                    .map(WindowWire::window),
                secondary: r
                    .as_ref()
                    .and_then(|r| r.secondary.as_ref())
                    .map(WindowWire::window),
                plan_type: r.as_ref().and_then(|r| r.plan_type.0.clone()),
                ..RateLimitUpdate::default()
            });
            if let Some(r) = r {
                ext.put_opt("codex.credits", r.credits.filter(|c| !is_null(c)));
                ext.put_opt("codex.limitId", r.limit_id.0);
                ext.put_opt("codex.limitName", r.limit_name.0);
                ext.put_opt(
                    "codex.rateLimitReachedType",
                    r.rate_limit_reached_type.filter(|v| !is_null(v)),
                );
                ext.put_opt(
                    "codex.spendControlReached",
                    r.spend_control_reached.filter(|v| !is_null(v)),
                );
                ext.put_opt(
                    "codex.individualLimit",
                    r.individual_limit.filter(|v| !is_null(v)),
                );
                ext.put_opt("codex.normalModelSlug", r.normal_model_slug.0);
            }
        }
        "model/rerouted" => {
            if let Some(m) = p.to_model.as_deref() {
                super::reroute(cx, m);
            }
            let msg = format!(
                "model rerouted from {} to {}",
                p.from_model.as_deref().unwrap_or("?"),
                p.to_model.as_deref().unwrap_or("?")
            );
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("model/rerouted"),
                message: Some(Cow::Owned(msg)),
            });
            ext.put_opt("codex.reason", p.reason.0);
        }
        "serverRequest/resolved" => {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("serverRequest/resolved"),
                message: None,
            });
            ext.put_opt(
                "codex.requestId",
                p.request_id
                    .map(|r| raw_str(r).unwrap_or(Cow::Borrowed(r.get()))),
            );
        }
        // --- server → client requests
        "item/commandExecution/requestApproval" | "execCommandApproval" => {
            let command = command_text(p.command);
            let ext = cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Borrowed("Bash"),
                tool_kind: ToolKind::Execute,
                tool_input: object([
                    ("command", or_null(command.clone())),
                    ("cwd", or_null(p.cwd.0)),
                ]),
                tool_use_id: p.item_id.0.clone().or(p.call_id.0.clone()),
                reason: p.reason.0,
                blocked_path: None,
                suggestions: None,
                title: command
                    .as_deref()
                    .map(|c| Cow::Owned(unwrap_shell(c).into_owned())),
                parent_call_id: None,
                options: None,
            });
            ext.put_opt(
                "codex.commandActions",
                p.command_actions.filter(|a| !is_null(a)),
            );
            ext.put_opt(
                "codex.availableDecisions",
                p.available_decisions.filter(|a| !is_null(a)),
            );
            let call = p.item_id.0.or(p.call_id.0);
            remember_request(cx, &request_id(), call.as_deref(), false);
        }
        "item/fileChange/requestApproval" | "applyPatchApproval" => {
            let call = p.item_id.0.clone().or(p.call_id.0.clone());
            // v2 requests name the item; its changes came with `item/started`.
            let changes = match (&call, p.file_changes.filter(|f| !is_null(f))) {
                (_, Some(f)) => Some(("fileChanges", Json::Raw(f))),
                (Some(id), None) => cx
                    .memory()
                    .codex
                    .calls
                    .get(id)
                    .filter(|c| c.invoked)
                    .map(|c| ("changes", changes_json(&c.changes, true))),
                _ => None,
            };
            let first_path = changes.as_ref().and_then(|(_, c)| match c {
                Json::Array(a) => a.first().and_then(|o| match o {
                    Json::Object(Pairs(m)) => m.first().and_then(|(_, v)| match v {
                        Json::Str(s) => Some(s.clone()),
                        _ => None,
                    }),
                    _ => None,
                }),
                _ => None,
            });
            let mut input = vec![(Cow::Borrowed("grantRoot"), or_null(p.grant_root.0.clone()))];
            if let Some((k, v)) = changes {
                input.push((Cow::Borrowed(k), v));
            }
            let ext = cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Borrowed("FileChange"),
                tool_kind: ToolKind::Edit,
                tool_input: Json::Object(Pairs(input)),
                tool_use_id: call.clone(),
                reason: p.reason.0,
                blocked_path: p.grant_root.0.clone(),
                suggestions: None,
                title: first_path,
                parent_call_id: None,
                options: None,
            });
            ext.put_opt("codex.grantRoot", p.grant_root.0);
            remember_request(cx, &request_id(), call.as_deref(), false);
        }
        "item/mcpToolCall/requestApproval" => {
            let call = p.item_id.0.clone().or(p.call_id.0.clone());
            let name = call
                .as_deref()
                .and_then(|id| cx.memory().codex.calls.get(id).map(|c| c.tool_name.clone()))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "McpTool".to_owned());
            let ext = cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Owned(name),
                tool_kind: ToolKind::Mcp,
                tool_input: Json::Raw(params().unwrap_or_else(|| empty_object())),
                tool_use_id: call.clone(),
                reason: p.reason.0,
                blocked_path: None,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
            ext.put_opt(
                "codex.availableDecisions",
                p.available_decisions.filter(|a| !is_null(a)),
            );
            remember_request(cx, &request_id(), call.as_deref(), false);
        }
        "item/tool/call" => {
            // A dynamic tool the client runs: the request opens the call (unless its item
            // started it), the client's answer ends it.
            #[derive(Deserialize)]
            struct ToolCall<'a> {
                tool: OptStr<'a>,
                #[serde(borrow)]
                arguments: Option<&'a RawValue>,
                namespace: OptStr<'a>,
            }
            let raw = params();
            let tc: Option<ToolCall> = raw.and_then(|r| serde_json::from_str(r.get()).ok());
            let (tool, arguments, namespace) = tc.map_or((None, None, None), |t| {
                (t.tool.0, t.arguments, t.namespace.0)
            });
            let call = p.call_id.0.clone().unwrap_or_default();
            let name = tool.clone().unwrap_or_default();
            if !call.is_empty() && is_open(cx, &call) {
                let ext = cx.push(ToolUpdate {
                    kind: None,
                    call_id: call.clone(),
                    status: Some(Cow::Borrowed("requested")),
                    tool_name: Some(name),
                    output: None,
                    elapsed_ms: None,
                    parent_call_id: None,
                    title: None,
                    input: None,
                    locations: None,
                });
                ext.put("codex.requestId", request_id());
            } else {
                let mut inv = tool_invocation(
                    call.clone(),
                    ToolKind::Other,
                    "",
                    None,
                    object([
                        ("tool", or_null(tool.clone())),
                        ("arguments", or_null(arguments)),
                    ]),
                );
                inv.tool_name = name.clone();
                let ext = cx.push(inv);
                ext.put("codex.requestId", request_id());
                ext.put_opt("codex.namespace", namespace);
                open_call(cx, &call, &name, Vec::new());
            }
            remember_request(cx, &request_id(), Some(&call), true);
        }
        "item/permissions/requestApproval" => {
            remember_request(cx, &request_id(), p.item_id.as_deref(), false);
            cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Borrowed("Permissions"),
                tool_kind: ToolKind::Other,
                tool_input: object([("permissions", or_null(p.permissions))]),
                tool_use_id: p.item_id.0,
                reason: p.reason.0,
                blocked_path: None,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
        }
        "item/tool/requestUserInput" => {
            remember_request(cx, &request_id(), p.item_id.as_deref(), false);
            cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Borrowed("AskUserQuestion"),
                tool_kind: ToolKind::Ask,
                tool_input: object([("questions", or_null(p.questions))]),
                tool_use_id: p.item_id.0,
                reason: None,
                blocked_path: None,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
        }
        "mcpServer/elicitation/request" => {
            let server = p.server_name.0.unwrap_or_default();
            cx.push(PermissionRequest {
                request_id: Cow::Owned(request_id()),
                tool_name: Cow::Owned(format!("mcp__{server}")),
                tool_kind: ToolKind::Ask,
                tool_input: Json::Raw(params().unwrap_or_else(|| empty_object())),
                tool_use_id: None,
                reason: p.message.0,
                blocked_path: None,
                suggestions: None,
                title: None,
                parent_call_id: None,
                options: None,
            });
        }
        other => {
            notice(
                cx,
                Cow::Owned(other.to_owned()),
                params().map(|p| ("params", p)),
            );
        }
    }
    // Only the server's v2 notifications duplicate legacy events.
    if env.kind() == Some(Kind::Notification)
        && ["thread/", "turn/", "item/"]
            .iter()
            .any(|p| method.starts_with(p))
    {
        cx.memory().codex.v2_seen.set();
    }
    Ok(())
}

/// What a client's `turn/start` overrides "for this turn and subsequent turns" (0.169 schema):
/// the model and reasoning effort, as a `session_init` that updates the session (`reduce`
/// gives the turn the server then starts that model), and the collaboration mode (`plan`,
/// `code`, `default`), as a `session_mode` (its settings, which may name a model and an effort
/// too, kept as `codex.collaborationMode`).
fn turn_overrides<'a>(raw: &'a RawValue, cx: &mut Cx<'a>) {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Overrides<'a> {
        model: OptStr<'a>,
        effort: OptStr<'a>,
        #[serde(borrow)]
        collaboration_mode: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Mode<'a> {
        #[serde(borrow)]
        mode: OptStr<'a>,
        #[serde(borrow, default)]
        settings: Option<ModeSettings<'a>>,
    }
    #[derive(Deserialize)]
    struct ModeSettings<'a> {
        #[serde(borrow)]
        model: OptStr<'a>,
        #[serde(borrow)]
        reasoning_effort: OptStr<'a>,
    }
    let Ok(o) = serde_json::from_str::<Overrides>(raw.get()) else {
        return;
    };
    let collab = o.collaboration_mode.filter(|m| is_object(m));
    let mode: Option<Mode> = collab.and_then(|m| serde_json::from_str(m.get()).ok());
    let (mode, settings) = match mode {
        Some(m) => (m.mode.0, m.settings),
        None => (None, None),
    };
    let (set_model, set_effort) =
        settings.map_or((None, None), |s| (s.model.0, s.reasoning_effort.0));
    let model = o.model.0.or(set_model);
    let effort = o.effort.0.or(set_effort);
    if let Some(m) = &model {
        set_thread_model(cx, None, m);
    }
    if model.is_some() || effort.is_some() {
        let ext = cx.push(SessionInit {
            model,
            reasoning_effort: effort,
            ..SessionInit::default()
        });
        ext.put("codex.turnStart", true);
    }
    if let (Some(m), Some(raw)) = (mode, collab) {
        super::thread_collaboration(cx, m.into_owned(), raw, true);
    }
}

fn empty_object() -> &'static RawValue {
    static EMPTY: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| RawValue::from_string("{}".into()).expect("valid JSON"))
}

/// The `error` event of an `error` notification or a failed turn's `error`: the code is
/// `codexErrorInfo`'s name (`"internalServerError"`, `{"responseTooManyFailedAttempts":…}`),
/// the HTTP status its `httpStatusCode`, or the message's "last status: 429".
fn v2_error<'a>(e: Option<&ErrorWire<'a>>, will_retry: bool) -> ErrorEvent<'a> {
    let message = match e.map(|e| (&e.message.0, &e.additional_details.0)) {
        Some((Some(m), Some(d))) => Cow::Owned(format!("{m}\n{d}")),
        Some((Some(m), None)) => m.clone(),
        _ => Cow::Borrowed("error"),
    };
    let mut ev = error_event(
        message,
        if will_retry {
            Severity::Warning
        } else {
            Severity::Error
        },
    );
    ev.will_retry = Some(will_retry);
    if let Some(info) = e.and_then(|e| e.codex_error_info).filter(|i| !is_null(i)) {
        ev.code = raw_str(info).or_else(|| jsonrpc::member_names(info.get()).into_iter().next());
        ev.http_status = http_status(info);
    }
    if ev.http_status.is_none() {
        ev.http_status = status_in_message(&ev.message);
    }
    ev
}

/// The contract's word for how a turn of status `status` (lower camel case) ended: `success`,
/// `error_api` for a failed turn; an interrupted one says so (the wire's status stays in
/// `stopReason`).
pub(super) fn turn_subtype(status: Str<'_>) -> Str<'_> {
    match &*status {
        "completed" => Cow::Borrowed("success"),
        "failed" => Cow::Borrowed("error_api"),
        _ => status,
    }
}

/// What an answer to `thread/start` says beside its thread: model, reasoning effort, cwd and
/// model provider (Codex 0.100 puts the model there only).
type ThreadAnswer<'a> = (
    Option<Str<'a>>,
    Option<Str<'a>>,
    Option<Str<'a>>,
    Option<Str<'a>>,
);

/// The `session_init` of a thread, from the `thread/started` notification or (with what the
/// answer says beside the thread) from the answer to `thread/start`.
///
/// The answer and the notification are one announcement: whichever comes second gives no
/// second `session_init` ([`Memory::announced`]); the notification then gives a `notice`.
/// A thread with no id announces nothing.
///
/// [`Memory::announced`]: super::Memory::announced
pub(super) fn session_init<'a>(t: Thread<'a>, answer: Option<ThreadAnswer<'a>>, cx: &mut Cx<'a>) {
    let from_answer = answer.is_some();
    let (model, effort, cwd, provider) = answer.unwrap_or_default();
    if t.id.is_empty() {
        notice(cx, Cow::Borrowed("thread/started without an id"), None);
        return;
    }
    if t.parent_thread_id.is_none() {
        set_stream_thread(cx, &t.id);
    }
    let line = cx.line;
    let announced = &mut cx.memory().codex.announced;
    let second = announced.remove(&t.id).is_some();
    if !second {
        announced.insert(&t.id, (), line);
    }
    cx.session_id = Some(t.id);
    if second {
        if !from_answer {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("thread/started"),
                message: Some(Cow::Borrowed("announced by the thread/start answer")),
            });
            ext.put("codex.alreadyAnnounced", true);
        }
        return;
    }
    let cwd = t.cwd.0.or(cwd);
    if let Some(c) = cwd.as_deref().filter(|c| !c.is_empty()) {
        let line = cx.line;
        let id = cx.session_id.clone().unwrap_or_default();
        cx.memory().codex.cwds.insert(&id, c.to_owned(), line);
    }
    let model = model.or(t.model.0);
    if let Some(m) = &model {
        set_thread_model(cx, None, m);
    }
    let ext = cx.push(SessionInit {
        model,
        reasoning_effort: effort.or(t.reasoning_effort.0),
        cwd,
        version: t.cli_version.0,
        ..SessionInit::default()
    });
    ext.put_opt("codex.modelProvider", t.model_provider.0.or(provider));
    ext.put_opt("codex.parentThreadId", t.parent_thread_id.0);
    ext.put_opt("codex.path", t.path.0);
    ext.put_opt("codex.source", t.source.filter(|v| !is_null(v)));
    ext.put_opt("codex.originator", t.originator.0);
    ext.put_opt("codex.forkedFromId", t.forked_from_id.0);
    ext.put_opt("codex.gitInfo", t.git_info.filter(|v| !is_null(v)));
    ext.put_opt("codex.threadName", t.name.0);
    ext.put_opt("codex.agentNickname", t.agent_nickname.0);
    ext.put_opt("codex.agentRole", t.agent_role.0);
    ext.put_opt("codex.ephemeral", t.ephemeral.filter(|e| *e));
    let extras = [
        ("codex.preview", t.preview),
        ("codex.createdAt", t.created_at),
        ("codex.updatedAt", t.updated_at),
        ("codex.recencyAt", t.recency_at),
        ("codex.environments", t.environments),
        ("codex.historyMode", t.history_mode),
        ("codex.threadStatus", t.status),
        ("codex.threadSessionId", t.session_id),
        ("codex.attachedToThreadId", t.attached_to_thread_id),
        ("codex.threadSource", t.thread_source),
        ("codex.section", t.section),
        ("codex.sectionEnteredAt", t.section_entered_at),
        ("codex.projectId", t.project_id),
        ("codex.canAcceptDirectInput", t.can_accept_direct_input),
        ("codex.daybreakEnabled", t.daybreak_enabled),
        ("codex.extra", t.extra),
    ];
    for (key, v) in extras {
        ext.put_opt(key, said(v));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{conv, stream};
    use crate::test_support::{self, of_kind};
    use serde_json::json;

    #[test]
    fn v2_error_with_http_status() {
        let ev = conv(
            r#"{"method":"error","params":{"error":{"message":"boom","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":502}}},"willRetry":true,"threadId":"t","turnId":"u"}}"#,
        );
        assert_eq!(ev[0]["httpStatus"], 502);
        assert_eq!(ev[0]["willRetry"], true);
        assert_eq!(ev[0]["severity"], "warning");
    }

    #[test]
    fn v2_lines_supersede_the_legacy_lines_after_them() {
        let legacy = r#"{"method":"codex/event/exec_command_output_delta","params":{"id":"1","msg":{"type":"exec_command_output_delta","call_id":"call-1","stream":"stdout","chunk":"Zmlyc3QK"},"conversationId":"t"}}"#;
        let after = |first: &str| {
            assert!(
                test_support::sniffs(&super::super::PROVIDER, first),
                "{first}"
            );
            stream(&[first, legacy]).last().unwrap()["event"].clone()
        };
        assert_eq!(
            after(r#"{"method":"turn/started","params":{"threadId":"t","turn":{"id":"u"}}}"#),
            "notice"
        );
        // Item lines are read on a path of their own (`item_line`).
        let item = r#"{"method":"item/completed","params":{"threadId":"t","turnId":"u","item":{"type":"agentMessage","id":"i","text":"hi"}}}"#;
        assert_eq!(conv(item)[0]["event"], "text");
        assert_eq!(after(item), "notice");
        // A request is not a v2 notification.
        let request = item.replacen('{', r#"{"id":3,"#, 1);
        assert_eq!(after(&request), "stream_delta");
    }

    const THREAD_START_ANSWER: &str = r#"{"id":2,"result":{"thread":{"id":"th1","cwd":"/w"},"model":"m","approvalPolicy":"untrusted","sandbox":null}}"#;
    const THREAD_STARTED: &str =
        r#"{"method":"thread/started","params":{"thread":{"id":"th1","cwd":"/w"}}}"#;

    /// CC-Insights' `modelUsage`: a turn's usage under the thread's model, which the
    /// `thread/start` answer announced (`"model":"m"`), a `model/rerouted` changes, and none
    /// when no line said it (testdata/codex-app-server/text-only.jsonl, lines 2, 11, 20, 23),
    /// or when the turn had spent tokens before the reroute (the wire does not split them).
    #[test]
    fn a_turn_s_usage_is_under_the_thread_s_model() {
        let started = r#"{"method":"turn/started","params":{"threadId":"th1","turn":{"id":"t1","items":[],"status":"inProgress"}}}"#;
        let usage = |total: u64| {
            format!(
                r#"{{"method":"thread/tokenUsage/updated","params":{{"threadId":"th1","turnId":"t1","tokenUsage":{{"total":{t},"last":{t}}}}}}}"#,
                t = format!(
                    r#"{{"totalTokens":{},"inputTokens":{total},"cachedInputTokens":0,"outputTokens":15,"reasoningOutputTokens":0}}"#,
                    total + 15
                )
            )
        };
        let done = r#"{"method":"turn/completed","params":{"threadId":"th1","turn":{"id":"t1","items":[],"status":"completed"}}}"#;
        let (u1, u2) = (usage(9494), usage(9600));
        let evs = stream(&[THREAD_START_ANSWER, started, &u1, done]);
        let tc = of_kind(&evs, "turn_complete");
        assert_eq!(tc[0]["usage"]["inputTokens"], 9494);
        assert_eq!(tc[0]["modelUsage"]["m"]["inputTokens"], 9494);
        assert_eq!(tc[0]["modelUsage"]["m"]["outputTokens"], 15);
        let rerouted = r#"{"method":"model/rerouted","params":{"threadId":"th1","turnId":"t1","fromModel":"m","toModel":"m2","reason":"x"}}"#;
        let evs = stream(&[THREAD_START_ANSWER, started, rerouted, &u1, done]);
        let tc = of_kind(&evs, "turn_complete");
        assert!(tc[0]["modelUsage"].get("m").is_none());
        assert_eq!(tc[0]["modelUsage"]["m2"]["inputTokens"], 9494);
        // Rerouted after the turn spent tokens: of two models, split as the wire does not say.
        let evs = stream(&[THREAD_START_ANSWER, started, &u1, rerouted, &u2, done]);
        let tc = of_kind(&evs, "turn_complete");
        assert!(tc[0].get("usage").is_some());
        assert!(tc[0].get("modelUsage").is_none());
        // The next turn is the new model's.
        let started2 = started.replace("\"t1\"", "\"t2\"");
        let done2 = done.replace("\"t1\"", "\"t2\"");
        let u3 = usage(9700).replace("\"t1\"", "\"t2\"");
        let evs = stream(&[
            THREAD_START_ANSWER,
            started,
            &u1,
            rerouted,
            &u2,
            done,
            &started2,
            &u3,
            &done2,
        ]);
        let tc = of_kind(&evs, "turn_complete");
        assert_eq!(tc[1]["modelUsage"]["m2"]["inputTokens"], 100);
        // No announcement seen: the model is unknown, and no modelUsage is written.
        let evs = stream(&[started, &u1, &u2, done]);
        let tc = of_kind(&evs, "turn_complete");
        assert!(tc[0].get("usage").is_some());
        assert!(tc[0].get("modelUsage").is_none());
    }

    #[test]
    fn the_thread_start_answer_and_notification_are_one_announcement() {
        let evs = stream(&[THREAD_START_ANSWER, THREAD_STARTED]);
        assert_eq!(of_kind(&evs, "session_init").len(), 1);
        assert_eq!(evs.last().unwrap()["event"], "notice");
        // Notification first: the answer gives no second init either.
        let evs = stream(&[THREAD_STARTED, THREAD_START_ANSWER]);
        assert_eq!(of_kind(&evs, "session_init").len(), 1);
        // An announcement without an id announces nothing.
        let evs = stream(&[r#"{"type":"thread.started","thread_id":""}"#]);
        assert!(of_kind(&evs, "session_init").is_empty());
    }

    #[test]
    fn wire_fields_without_an_event_field_go_to_extensions() {
        let evs = stream(&[
            r#"{"id":2,"result":{"thread":{"id":"a","path":"/h/.codex/sessions/r.jsonl","cwd":"/w","source":"vscode","originator":"o","gitInfo":null},"model":"m","approvalPolicy":"never"}}"#,
            r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"commandExecution","id":"c","command":"ls","cwd":"/w","processId":"70866","source":"agent","status":"inProgress"}}}"#,
            r#"{"method":"account/rateLimits/updated","params":{"rateLimits":{"limitId":"codex","limitName":null,"primary":{"windowMinutes":300},"secondary":null,"credits":null}}}"#,
            // After an approval the command runs under another process and source.
            r#"{"method":"item/completed","params":{"threadId":"a","turnId":"u","item":{"type":"commandExecution","id":"c","command":"ls","cwd":"/w","processId":"70871","source":"unifiedExecStartup","status":"completed","exitCode":0,"aggregatedOutput":""}}}"#,
        ]);
        let done = &of_kind(&evs, "tool_completion")[0]["extensions"];
        assert_eq!(done["codex.processId"], "70871");
        assert_eq!(done["codex.source"], "unifiedExecStartup");
        let init = &of_kind(&evs, "session_init")[0]["extensions"];
        assert_eq!(init["codex.path"], "/h/.codex/sessions/r.jsonl");
        assert_eq!(init["codex.source"], "vscode");
        assert_eq!(init["codex.originator"], "o");
        assert!(init.get("codex.gitInfo").is_none());
        let inv = &of_kind(&evs, "tool_invocation")[0]["extensions"];
        assert_eq!(inv["codex.processId"], "70866");
        assert_eq!(inv["codex.source"], "agent");
        let rl = of_kind(&evs, "rate_limit_update")[0];
        assert_eq!(rl["extensions"]["codex.limitId"], "codex");
        assert!(rl["extensions"].get("codex.limitName").is_none());
        // A window that states no usage has none (not 0%).
        assert_eq!(rl["primary"]["windowDurationMins"], 300);
        assert!(rl["primary"].get("usedPercent").is_none());
    }

    #[test]
    fn thread_and_item_facts_without_a_field_are_extensions() {
        // The thread/start answer: the thread's members and the answer's own go to
        // codex.* extensions (nulls and "" say nothing and are left out).
        let ev = conv(
            r#"{"id":2,"result":{"thread":{"id":"th1","preview":"","createdAt":1795315422,"updatedAt":1795315423,"recencyAt":1795315424,"environments":[{"environmentId":"local","cwd":"/w"}],"historyMode":"paginated","status":{"type":"idle"},"sessionId":"th1","canAcceptDirectInput":true,"section":null,"projectId":null,"cwd":"/w","turns":[]},"model":"m","approvalPolicy":"never","sandbox":{"type":"dangerFullAccess"},"serviceTier":"flex","approvalsReviewer":"user","multiAgentMode":"explicitRequestOnly","disabledPluginIds":[],"runtimeWorkspaceRoots":["/w"],"instructionSources":[],"activePermissionProfile":null}}"#,
        );
        let init = &ev[0]["extensions"];
        assert_eq!(ev[0]["event"], "session_init");
        for (k, v) in [
            ("codex.createdAt", json!(1795315422)),
            ("codex.updatedAt", json!(1795315423)),
            ("codex.recencyAt", json!(1795315424)),
            (
                "codex.environments",
                json!([{"environmentId": "local", "cwd": "/w"}]),
            ),
            ("codex.historyMode", json!("paginated")),
            ("codex.threadStatus", json!({"type": "idle"})),
            ("codex.threadSessionId", json!("th1")),
            ("codex.canAcceptDirectInput", json!(true)),
        ] {
            assert_eq!(init[k], v, "{k}");
        }
        for k in ["codex.preview", "codex.section", "codex.projectId"] {
            assert!(init.get(k).is_none(), "{k}");
        }
        let mode = &ev[1]["extensions"];
        assert_eq!(ev[1]["event"], "session_mode");
        for (k, v) in [
            ("codex.serviceTier", json!("flex")),
            ("codex.approvalsReviewer", json!("user")),
            ("codex.multiAgentMode", json!("explicitRequestOnly")),
            ("codex.disabledPluginIds", json!([])),
            ("codex.runtimeWorkspaceRoots", json!(["/w"])),
            ("codex.instructionSources", json!([])),
        ] {
            assert_eq!(mode[k], v, "{k}");
        }
        assert!(mode.get("codex.activePermissionProfile").is_none());
        // An item's times, on the first event of its line.
        let started = conv(
            r#"{"method":"item/started","params":{"item":{"type":"reasoning","id":"rs1","summary":[],"content":[],"startedAtMs":1795315422351,"completedAtMs":null},"threadId":"t","turnId":"u","startedAtMs":1795315422351}}"#,
        );
        assert_eq!(
            started[0]["extensions"]["codex.startedAtMs"],
            1795315422351u64
        );
        assert!(started[0]["extensions"]
            .get("codex.completedAtMs")
            .is_none());
        let done = conv(
            r#"{"method":"item/completed","params":{"item":{"type":"commandExecution","id":"c1","command":"ls","cwd":"/w","status":"completed","exitCode":0,"aggregatedOutput":"","source":"agent","startedAtMs":10,"completedAtMs":25},"threadId":"t","turnId":"u"}}"#,
        );
        assert_eq!(done[0]["event"], "tool_completion");
        assert_eq!(
            (
                done[0]["extensions"]["codex.startedAtMs"].clone(),
                done[0]["extensions"]["codex.completedAtMs"].clone()
            ),
            (json!(10), json!(25))
        );
    }

    #[test]
    fn dynamic_tool_calls_open_at_the_request_and_keep_their_result() {
        let evs = stream(&[
            r#"{"id":5,"method":"item/tool/call","params":{"threadId":"a","turnId":"u","callId":"dc1","tool":"lookup","arguments":{"q":1}}}"#,
            r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"dynamicToolCall","id":"dc1","tool":"lookup","arguments":{"q":1},"status":"inProgress"}}}"#,
            r#"{"id":5,"result":{"contentItems":[{"type":"inputText","text":"found"}],"success":true}}"#,
            r#"{"method":"item/completed","params":{"threadId":"a","turnId":"u","item":{"type":"dynamicToolCall","id":"dc1","tool":"lookup","arguments":{"q":1},"status":"completed","contentItems":[{"type":"inputText","text":"found"}],"success":true,"durationMs":3}}}"#,
        ]);
        let inv = of_kind(&evs, "tool_invocation");
        assert_eq!(inv.len(), 1);
        assert_eq!(inv[0]["toolName"], "lookup");
        let done = of_kind(&evs, "tool_completion");
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["output"]["contentItems"][0]["text"], "found");
        assert_eq!(done[0]["sessionId"], "a");
        assert_eq!(evs.last().unwrap()["extensions"]["codex.durationMs"], 3);
    }

    #[test]
    fn mcp_approvals_are_permission_requests_of_the_call() {
        let evs = stream(&[
            r#"{"method":"item/started","params":{"threadId":"a","turnId":"u","item":{"type":"mcpToolCall","id":"m1","server":"docs","tool":"find","status":"inProgress","arguments":{}}}}"#,
            r#"{"id":3,"method":"item/mcpToolCall/requestApproval","params":{"threadId":"a","itemId":"m1","reason":"writes"}}"#,
            r#"{"id":3,"result":{"decision":"acceptForSession"}}"#,
        ]);
        let req = of_kind(&evs, "permission_request")[0];
        assert_eq!(req["toolName"], "mcp__docs__find");
        assert_eq!(req["toolUseId"], "m1");
        let resp = of_kind(&evs, "permission_response")[0];
        assert_eq!(resp["decision"], "allow_always");
        assert_eq!(resp["toolUseId"], "m1");
    }
}
