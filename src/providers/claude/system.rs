//! `system` lines: the session's init, status, compaction, hooks, tasks (subagents), API
//! retries and the rest, by `subtype`.

use super::{notice, session_key, Call, InitAnswer, Subagent};
use crate::event::*;
use crate::members::Line;
use crate::providers::{Cx, Unmapped};
use crate::wire::{count, is_null, is_object, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

#[derive(Deserialize)]
struct Init<'a> {
    cwd: OptStr<'a>,
    model: OptStr<'a>,
    #[serde(borrow, default)]
    tools: crate::wire::NameList<'a>,
    #[serde(borrow)]
    mcp_servers: Option<Vec<WireMcp<'a>>>,
    #[serde(rename = "permissionMode")]
    permission_mode: OptStr<'a>,
    #[serde(borrow, default)]
    slash_commands: crate::wire::NameList<'a>,
    #[serde(rename = "apiKeySource")]
    api_key_source: OptStr<'a>,
    claude_code_version: OptStr<'a>,
    output_style: OptStr<'a>,
    #[serde(borrow, default)]
    agents: crate::wire::NameList<'a>,
    #[serde(borrow, default)]
    skills: crate::wire::NameList<'a>,
    #[serde(borrow)]
    plugins: Option<&'a RawValue>,
    effort: OptStr<'a>,
    fast_mode_state: OptStr<'a>,
    #[serde(borrow)]
    memory_paths: Option<&'a RawValue>,
    analytics_disabled: Option<bool>,
    product_feedback_disabled: Option<bool>,
}

/// Puts the SDK's initialize answer onto the session's init: its commands (with their
/// descriptions), models and account replace the init's bare names.
fn merge_answer<'a>(init: &mut SessionInit<'a>, a: InitAnswer, style: &mut Option<Str<'a>>) {
    if let Some(cmds) = a.commands {
        init.slash_commands = Some(
            cmds.into_iter()
                .map(|(name, description, hint)| SlashCommand {
                    name: Cow::Owned(name),
                    description: Cow::Owned(description),
                    argument_hint: Cow::Owned(hint),
                })
                .collect(),
        );
    }
    if let Some(models) = a.models {
        init.available_models = Some(
            models
                .iter()
                .filter_map(|m| serde_json::from_str::<Value>(m).ok())
                .map(Json::Value)
                .collect(),
        );
    }
    if let Some([email, organization, subscription, token, key]) = a.account {
        let from_init = init.account.take().and_then(|a| a.api_key_source);
        init.account = Some(Account {
            email: email.map(Cow::Owned),
            organization: organization.map(Cow::Owned),
            subscription_type: subscription.map(Cow::Owned),
            token_source: token.map(Cow::Owned),
            api_key_source: key.map(Cow::Owned).or(from_init),
        });
    }
    if init.agents.is_none() {
        init.agents = a.agents.map(|v| v.into_iter().map(Cow::Owned).collect());
    }
    if style.is_none() {
        *style = a.output_style.map(Cow::Owned);
    }
}

#[derive(Deserialize)]
struct WireMcp<'a> {
    #[serde(borrow)]
    name: Str<'a>,
    status: OptStr<'a>,
    #[serde(rename = "serverInfo", borrow)]
    server_info: Option<&'a RawValue>,
}

fn mcp_server(m: WireMcp<'_>) -> McpServer<'_> {
    let status = match m.status.as_deref() {
        Some("connected") => McpStatus::Connected,
        Some("failed") => McpStatus::Failed,
        Some("needs-auth") => McpStatus::NeedsAuth,
        _ => McpStatus::Pending,
    };
    let status_detail = m.status.0.filter(|s| s != status.as_str());
    McpServer {
        name: m.name,
        status,
        status_detail,
        server_info: m.server_info.filter(|r| is_object(r)).map(Json::Raw),
    }
}

#[derive(Deserialize)]
struct Status<'a> {
    #[serde(borrow)]
    status: OptStr<'a>,
    #[serde(rename = "permissionMode")]
    permission_mode: OptStr<'a>,
    compact_result: OptStr<'a>,
    compact_error: OptStr<'a>,
}

#[derive(Deserialize)]
struct CompactBoundary<'a> {
    #[serde(borrow)]
    compact_metadata: Option<&'a RawValue>,
}

/// A JSON object's members in their order, values as written.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, &'de RawValue>()? {
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The members of `compact_metadata` a `context_compaction` has fields for; the others
/// (`cumulative_dropped_tokens`, `preserved_segment`, `preserved_messages`, …) go to
/// `claude.compactMetadata`.
const COMPACT_FIELDS: [&str; 4] = ["trigger", "pre_tokens", "post_tokens", "duration_ms"];

#[derive(Deserialize)]
struct CompactMeta<'a> {
    #[serde(borrow)]
    trigger: OptStr<'a>,
    pre_tokens: Option<Count>,
    post_tokens: Option<Count>,
    duration_ms: Option<Count>,
}

#[derive(Deserialize)]
struct HookLine<'a> {
    #[serde(borrow)]
    hook_id: OptStr<'a>,
    hook_name: OptStr<'a>,
    hook_event: OptStr<'a>,
    outcome: OptStr<'a>,
    exit_code: Option<i64>,
    stdout: OptStr<'a>,
    stderr: OptStr<'a>,
    output: OptStr<'a>,
}

#[derive(Deserialize)]
struct TaskLine<'a> {
    task_id: OptStr<'a>,
    tool_use_id: OptStr<'a>,
    description: OptStr<'a>,
    subagent_type: OptStr<'a>,
    task_type: OptStr<'a>,
    status: OptStr<'a>,
    summary: OptStr<'a>,
    last_tool_name: OptStr<'a>,
    #[serde(borrow)]
    usage: Option<&'a RawValue>,
    #[serde(borrow)]
    patch: Option<&'a RawValue>,
    prompt: OptStr<'a>,
    output_file: OptStr<'a>,
}

/// A subagent's task started: its call learns the agent id (the task may start before the
/// call's `tool_use` line, for a subagent started inside a subagent).
fn subagent_started(cx: &mut Cx<'_>, call: &str, task_id: Option<&str>) {
    let session = session_key(cx);
    let line = cx.line;
    let calls = &mut cx.memory().claude.calls;
    let agent_id = task_id.map(str::to_owned);
    match calls.get_mut(call) {
        // A call of a tool that is no subagent tool in this dialect stays what it is.
        Some(c) => {
            if let Some(sub) = c.subagent.as_mut().filter(|_| agent_id.is_some()) {
                sub.agent_id = agent_id;
            }
        }
        None => calls.insert(
            call,
            Call {
                session,
                subagent: Some(Subagent {
                    agent_id,
                    ..Subagent::default()
                }),
                ..Call::default()
            },
            line,
        ),
    }
}

/// Whether a task status says the task is over.
fn is_final(status: &str) -> bool {
    matches!(
        status,
        "completed" | "failed" | "stopped" | "killed" | "cancelled" | "canceled" | "error"
    )
}

/// A subagent's `task_notification`: its status is kept for the call's result; a background
/// subagent (whose call already returned) ends here, and is returned.
fn subagent_notified(cx: &mut Cx<'_>, call: &str, status: Option<&str>) -> Option<Subagent> {
    let status = status?;
    let calls = &mut cx.memory().claude.calls;
    let c = calls.get_mut(call)?;
    let sub = c.subagent.as_mut()?;
    if !is_final(status) {
        return None;
    }
    sub.status = Some(status.to_owned());
    if sub.launched || c.name.is_empty() {
        // Ended with no result to come (launched), or never invoked on this wire.
        let c = calls.remove(call)?;
        let sub = c.subagent?;
        return (!c.name.is_empty()).then_some(sub);
    }
    None
}

#[derive(Deserialize)]
struct PatchStatus<'a> {
    #[serde(borrow)]
    status: OptStr<'a>,
}

#[derive(Deserialize)]
struct ApiRetry<'a> {
    attempt: Option<Count>,
    max_retries: Option<Count>,
    retry_delay_ms: Option<Count>,
    error_status: Option<Count>,
    #[serde(borrow)]
    error: OptStr<'a>,
}

#[derive(Deserialize)]
struct ThinkingTokens {
    estimated_tokens: Option<Count>,
    estimated_tokens_delta: Option<Count>,
}

#[derive(Deserialize)]
struct StateChanged<'a> {
    #[serde(borrow)]
    state: OptStr<'a>,
}

/// Maps a `system` line of `subtype`. `line` may also be any JSON object with the same
/// members (Qwen Code keeps the members of its `task_*` lines in `data`).
pub(crate) fn system<'a>(
    line: Line<'a, '_>,
    subtype: &'a str,
    cx: &mut Cx<'a>,
) -> Result<(), Unmapped> {
    match subtype {
        "init" => {
            let w: Init = line.read()?;
            let mut ext_style = w.output_style.0.clone();
            let mut init = SessionInit {
                model: w.model.0,
                reasoning_effort: w.effort.0,
                cwd: w.cwd.0,
                available_tools: w.tools.0,
                mcp_servers: w
                    .mcp_servers
                    .map(|v| v.into_iter().map(mcp_server).collect()),
                permission_mode: w.permission_mode.0,
                account: w.api_key_source.0.map(|k| Account {
                    api_key_source: Some(k),
                    ..Account::default()
                }),
                slash_commands: w.slash_commands.0.map(|v| {
                    v.into_iter()
                        .map(|name| SlashCommand {
                            name,
                            description: Cow::Borrowed(""),
                            argument_hint: Cow::Borrowed(""),
                        })
                        .collect()
                }),
                available_models: None,
                version: w.claude_code_version.0,
                agents: w.agents.0,
                skills: w.skills.0,
            };
            // The SDK's initialize answer, kept until the session was announced.
            let answer = match cx.session_id {
                Some(_) => cx.memory().claude.init.remove(""),
                None => None,
            };
            let answer_id = answer.as_ref().map(|a| a.request_id.clone());
            let answer_rest = answer
                .as_ref()
                .and_then(|a| a.rest.clone())
                .and_then(|r| RawValue::from_string(r).ok());
            if let Some(a) = answer {
                merge_answer(&mut init, a, &mut ext_style);
            }
            let ext = cx.push(init);
            ext.put_opt("claude.outputStyle", ext_style);
            ext.put_opt("claude.initializeRequestId", answer_id);
            ext.put_opt("claude.initialize", answer_rest);
            ext.put_opt("claude.plugins", w.plugins.filter(|p| !is_null(p)));
            ext.put_opt("claude.fastModeState", w.fast_mode_state.0);
            ext.put_opt("claude.memoryPaths", w.memory_paths.filter(|p| !is_null(p)));
            ext.put_opt("claude.analyticsDisabled", w.analytics_disabled);
            ext.put_opt(
                "claude.productFeedbackDisabled",
                w.product_feedback_disabled,
            );
        }
        "status" => {
            let w: Status = line.read()?;
            let status = match w.status.as_deref() {
                Some("compacting") => Some(SessionStatusKind::Compacting),
                Some("requesting") => Some(SessionStatusKind::Requesting),
                Some("resuming") => Some(SessionStatusKind::Resuming),
                Some(_) => None,
                None => (w.permission_mode.is_none()).then_some(SessionStatusKind::Idle),
            };
            if let Some(mode) = w.permission_mode.0 {
                cx.push(SessionMode {
                    current_mode_id: mode,
                    available_modes: Vec::new(),
                });
            }
            if let Some(status) = status {
                let ext = cx.push(SessionStatus {
                    status,
                    message: w.compact_error.0,
                });
                ext.put_opt("claude.compactResult", w.compact_result.0);
            } else if let Some(other) = w.status.0 {
                // A status word this version does not know: keep it as a notice.
                cx.push(Notice {
                    subtype: Cow::Borrowed("system/status"),
                    message: Some(other),
                });
            }
        }
        "compact_boundary" | "microcompact_boundary" => {
            let w: CompactBoundary = line.read()?;
            let raw = w.compact_metadata.filter(|m| is_object(m));
            let meta = raw.and_then(|m| serde_json::from_str::<CompactMeta>(m.get()).ok());
            // What the event has no field for, as the wire says it.
            let rest: Option<Pairs<Json>> = raw
                .and_then(|m| serde_json::from_str::<Members>(m.get()).ok())
                .map(|members| {
                    let mut rest = Pairs::default();
                    for (k, v) in members.0 {
                        if !COMPACT_FIELDS.contains(&k.as_str()) {
                            rest.put(k, v);
                        }
                    }
                    rest
                })
                .filter(|r| !r.0.is_empty());
            let trigger = match meta.as_ref().and_then(|m| m.trigger.as_deref()) {
                Some("manual") => CompactionTrigger::Manual,
                _ => CompactionTrigger::Auto,
            };
            let ext = cx.push(ContextCompaction {
                trigger,
                pre_tokens: count(meta.as_ref().and_then(|m| m.pre_tokens)),
                post_tokens: count(meta.as_ref().and_then(|m| m.post_tokens)),
                summary: None,
                duration_ms: count(meta.as_ref().and_then(|m| m.duration_ms)),
            });
            if subtype == "microcompact_boundary" {
                ext.put("claude.micro", true);
            }
            ext.put_opt("claude.compactMetadata", rest.map(Json::Object));
        }
        "hook_started" | "hook_progress" | "hook_response" => {
            let w: HookLine = line.read()?;
            let phase = match subtype {
                "hook_started" => HookPhase::Started,
                "hook_progress" => HookPhase::Progress,
                _ => HookPhase::Response,
            };
            cx.push(Hook {
                hook_id: w.hook_id.0.unwrap_or_default(),
                phase,
                hook_name: w.hook_name.0,
                hook_event: w.hook_event.0,
                outcome: w.outcome.0,
                exit_code: w.exit_code,
                stdout: w.stdout.0,
                stderr: w.stderr.0,
                output: w.output.0,
            });
        }
        "task_started" | "task_progress" | "task_updated" | "task_notification" => {
            let w: TaskLine = line.read()?;
            let phase = match subtype {
                "task_started" => TaskPhase::Started,
                "task_progress" => TaskPhase::Progress,
                "task_updated" => TaskPhase::Updated,
                _ => TaskPhase::Notification,
            };
            let patch_status = match w.patch {
                Some(p) if is_object(p) => serde_json::from_str::<PatchStatus>(p.get())?.status.0,
                _ => None,
            };
            let status = w.status.0.or(patch_status);
            // The task's call: the line's own, else the one its `task_started` named.
            let task = w.task_id.as_deref().unwrap_or_default().to_owned();
            let call_id: Option<Str<'_>> = match (&w.tool_use_id.0, task.is_empty()) {
                (Some(c), false) if phase == TaskPhase::Started => {
                    let line = cx.line;
                    cx.memory().claude.tasks.insert(&task, c.to_string(), line);
                    Some(c.clone())
                }
                (Some(c), _) => Some(c.clone()),
                (None, false) => cx.memory().claude.tasks.get(&task).cloned().map(Cow::Owned),
                (None, true) => None,
            };
            if phase == TaskPhase::Notification && !task.is_empty() {
                cx.memory().claude.tasks.remove(&task);
            }
            let mut ended = None;
            if let Some(call) = call_id.as_deref() {
                let agent =
                    w.task_type.as_deref() == Some("local_agent") || w.subagent_type.is_some();
                match phase {
                    TaskPhase::Started if agent => {
                        subagent_started(cx, call, w.task_id.as_deref());
                    }
                    TaskPhase::Notification => {
                        ended = subagent_notified(cx, call, status.as_deref());
                    }
                    _ => {}
                }
            }
            let ext = cx.push(TaskUpdate {
                task_id: w.task_id.0.clone().unwrap_or_default(),
                phase,
                call_id: call_id.clone(),
                status: status.clone(),
                description: w.description.0,
                agent_type: w.subagent_type.0,
                task_type: w.task_type.0,
                summary: w.summary.0.clone(),
                last_tool_name: w.last_tool_name.0,
                usage: w.usage.filter(|u| is_object(u)).map(Json::Raw),
            });
            ext.put_opt("claude.patch", w.patch.filter(|p| is_object(p)));
            ext.put_opt("claude.prompt", w.prompt.0);
            ext.put_opt(
                "claude.outputFile",
                w.output_file.0.filter(|f| !f.is_empty()),
            );
            if let Some(sub) = ended {
                // A background subagent: its call returned at launch, it ends here.
                cx.push(SubagentComplete {
                    call_id: call_id.unwrap_or_default(),
                    agent_id: sub.agent_id.map(Cow::Owned).or(w.task_id.0),
                    status,
                    summary: w.summary.0,
                    duration_ms: None,
                    total_tokens: None,
                    tool_use_count: None,
                    parent_call_id: None,
                });
            }
        }
        "api_retry" => {
            let w: ApiRetry = line.read()?;
            let message = match (&w.error.0, w.error_status) {
                (Some(e), Some(s)) => Cow::Owned(format!("API error {}: {e}", s.0)),
                (Some(e), None) => e.clone(),
                (None, Some(s)) => Cow::Owned(format!("API error {}", s.0)),
                (None, None) => Cow::Borrowed("API error"),
            };
            cx.push(ErrorEvent {
                message,
                severity: Severity::Warning,
                code: w.error.0,
                http_status: count(w.error_status),
                will_retry: Some(true),
                attempt: count(w.attempt),
                max_retries: count(w.max_retries),
                retry_delay_ms: count(w.retry_delay_ms),
                request_id: None,
                parent_call_id: None,
            });
        }
        "thinking_tokens" => {
            let w: ThinkingTokens = line.read()?;
            let ext = cx.push(UsageUpdate {
                step_usage: Json::Value(Value::Object(Default::default())),
                total: None,
                context_window: None,
                context_tokens: None,
                cost_usd: None,
                parent_call_id: None,
                model: None,
                message_id: None,
            });
            ext.put_opt("claude.estimatedThinkingTokens", count(w.estimated_tokens));
            ext.put_opt(
                "claude.estimatedThinkingTokensDelta",
                count(w.estimated_tokens_delta),
            );
        }
        "session_state_changed" => {
            let w: StateChanged = line.read()?;
            let status = match w.state.as_deref() {
                Some("idle") => Some(SessionStatusKind::Idle),
                Some("running") => Some(SessionStatusKind::Running),
                Some("requires_action") => Some(SessionStatusKind::RequiresAction),
                _ => None,
            };
            match status {
                Some(status) => {
                    cx.push(SessionStatus {
                        status,
                        message: None,
                    });
                }
                None => {
                    return notice(
                        line,
                        Cow::Borrowed("system/session_state_changed"),
                        w.state.0,
                        cx,
                    )
                }
            }
        }
        other => {
            let name = Cow::Owned(format!("system/{other}"));
            return notice(line, name, None, cx);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{conv, stream, INIT};
    use crate::test_support::of_kind;
    use serde_json::{json, Value};

    /// A compact boundary's metadata that the event has no field for goes to
    /// `claude.compactMetadata`, as written and in its order; none when there is none.
    #[test]
    fn compact_metadata_is_kept_whole() {
        let ev = conv(
            r#"{"type":"system","subtype":"compact_boundary","session_id":"s","uuid":"u","compact_metadata":{"trigger":"manual","pre_tokens":21916,"post_tokens":578,"cumulative_dropped_tokens":21338,"duration_ms":42,"preserved_segment":{"head_uuid":"h","anchor_uuid":"a","tail_uuid":"h"},"preserved_messages":{"anchor_uuid":"a","uuids":["h"]}}}"#,
        );
        assert_eq!(ev[0]["event"], "context_compaction");
        assert_eq!(
            (
                ev[0]["preTokens"].clone(),
                ev[0]["postTokens"].clone(),
                ev[0]["durationMs"].clone()
            ),
            (Value::from(21916), Value::from(578), Value::from(42))
        );
        let rest = &ev[0]["extensions"]["claude.compactMetadata"];
        assert_eq!(
            rest,
            &serde_json::json!({"cumulative_dropped_tokens": 21338,
                    "preserved_segment": {"head_uuid": "h", "anchor_uuid": "a", "tail_uuid": "h"},
                    "preserved_messages": {"anchor_uuid": "a", "uuids": ["h"]}})
        );
        let keys: Vec<&String> = rest.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3);
        let plain = conv(
            r#"{"type":"system","subtype":"compact_boundary","session_id":"s","uuid":"u","compact_metadata":{"trigger":"auto","pre_tokens":5}}"#,
        );
        assert!(plain[0].get("extensions").is_none());
    }

    #[test]
    fn unknown_system_subtype_is_a_notice_with_data() {
        let ev = conv(r#"{"type":"system","subtype":"files_persisted","files":["a"],"uuid":"u"}"#);
        assert_eq!(ev[0]["event"], "notice");
        assert_eq!(ev[0]["subtype"], "system/files_persisted");
        assert_eq!(ev[0]["extensions"]["files"][0], "a");
    }

    #[test]
    fn a_task_line_that_names_the_task_alone_is_its_calls() {
        // Claude Code 2.1.197 (a recording): `task_updated` carries the task id only.
        let ev = stream(&[
            INIT,
            r#"{"type":"system","subtype":"task_started","task_id":"ta","tool_use_id":"call_a","task_type":"local_agent","session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_updated","task_id":"ta","patch":{"status":"running"},"session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_notification","task_id":"ta","tool_use_id":"call_a","status":"completed","session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_updated","task_id":"ta","session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_updated","task_id":"tz","session_id":"s1"}"#,
        ]);
        let calls: Vec<&Value> = of_kind(&ev, "task_update")
            .iter()
            .map(|t| &t["callId"])
            .collect();
        // After its notification, and for a task never started here: unknown.
        assert_eq!(
            calls,
            [
                &json!("call_a"),
                &json!("call_a"),
                &json!("call_a"),
                &Value::Null,
                &Value::Null
            ]
        );
    }

    #[test]
    fn a_nested_subagent_completes_from_its_task_and_result() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"outer","name":"Agent","input":{"description":"o","prompt":"p"}}]},"session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_started","task_id":"ta","tool_use_id":"outer","task_type":"local_agent","session_id":"s1"}"#,
            // The inner task starts before its call's line.
            r#"{"type":"system","subtype":"task_started","task_id":"tb","tool_use_id":"inner","task_type":"local_agent","session_id":"s1"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"inner","name":"Agent","input":{"description":"i","prompt":"p"}}]},"parent_tool_use_id":"outer","session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_notification","task_id":"tb","tool_use_id":"inner","status":"completed","session_id":"s1"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"inner","content":[{"type":"text","text":"2 files"}]}]},"parent_tool_use_id":"outer","session_id":"s1"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"outer","content":"done"}]},"tool_use_result":{"status":"completed","agentId":"ta"},"session_id":"s1"}"#,
        ]);
        let done = of_kind(&ev, "subagent_complete");
        assert_eq!(done.len(), 2);
        assert_eq!(done[0]["callId"], "inner");
        assert_eq!(done[0]["agentId"], "tb");
        assert_eq!(done[0]["status"], "completed");
        assert_eq!(done[1]["callId"], "outer");
        assert_eq!(done[1]["agentId"], "ta");
    }

    #[test]
    fn a_background_subagent_ends_with_its_notification() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"bg","name":"Agent","input":{"description":"b","prompt":"p","run_in_background":true}}]},"session_id":"s1"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"bg","content":"launched"}]},"tool_use_result":{"status":"async_launched","agentId":"tb"},"session_id":"s1"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s1"}"#,
            r#"{"type":"system","subtype":"task_notification","task_id":"tb","tool_use_id":"bg","status":"completed","summary":"ok","session_id":"s1"}"#,
        ]);
        let done = of_kind(&ev, "subagent_complete");
        assert_eq!(done.len(), 1);
        assert_eq!(done[0]["callId"], "bg");
        assert_eq!(done[0]["status"], "completed");
        assert_eq!(done[0]["agentId"], "tb");
    }
}
