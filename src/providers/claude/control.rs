//! The SDK control protocol of `--input-format stream-json`: `control_request`,
//! `control_response` and `control_cancel_request` lines.

use super::{turn_mut, Dialect, InitAnswer, Request};
use crate::event::*;
use crate::members::Line;
use crate::providers::{Cx, Unmapped};
use crate::wire::{is_null, is_object, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

#[derive(Deserialize)]
struct ControlRequest<'a> {
    request_id: OptStr<'a>,
    #[serde(borrow)]
    request: RequestBody<'a>,
}

#[derive(Deserialize)]
struct RequestBody<'a> {
    #[serde(borrow)]
    subtype: Str<'a>,
    tool_name: OptStr<'a>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    tool_use_id: OptStr<'a>,
    #[serde(borrow)]
    permission_suggestions: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    suggestions: Option<Vec<&'a RawValue>>,
    blocked_path: OptStr<'a>,
    decision_reason: OptStr<'a>,
    /// What kind of rule made the CLI ask (`subcommandResults`, …).
    decision_reason_type: OptStr<'a>,
    title: OptStr<'a>,
    display_name: OptStr<'a>,
    description: OptStr<'a>,
    agent_id: OptStr<'a>,
    mode: OptStr<'a>,
}

#[derive(Deserialize)]
struct WireSuggestion<'a> {
    #[serde(rename = "type")]
    ty: OptStr<'a>,
    #[serde(borrow)]
    rules: Option<Vec<Rule<'a>>>,
    #[serde(borrow)]
    directories: Option<Vec<Str<'a>>>,
    mode: OptStr<'a>,
    behavior: OptStr<'a>,
    destination: OptStr<'a>,
}

#[derive(Deserialize)]
struct Rule<'a> {
    #[serde(rename = "toolName", borrow)]
    tool_name: OptStr<'a>,
    #[serde(rename = "ruleContent")]
    rule_content: OptStr<'a>,
}

/// A permission suggestion, with a description written for people (CC-Insights requires one).
fn suggestion(raw: &RawValue) -> Option<PermissionSuggestion<'_>> {
    let w: WireSuggestion = serde_json::from_str(raw.get()).ok()?;
    let ty = w.ty.0?;
    let rule = w.rules.as_ref().and_then(|r| r.first());
    let mut description = match &*ty {
        "setMode" => format!("switch to {} mode", w.mode.as_deref().unwrap_or("?")),
        "addDirectories" | "removeDirectories" => {
            let verb = if ty == "addDirectories" {
                "allow"
            } else {
                "stop allowing"
            };
            format!(
                "{verb} {}",
                w.directories.clone().unwrap_or_default().join(", ")
            )
        }
        _ => {
            let rules: Vec<String> = w
                .rules
                .iter()
                .flatten()
                .map(|r| match (&r.tool_name.0, &r.rule_content.0) {
                    (Some(t), Some(c)) => format!("{t}({c})"),
                    (Some(t), None) => t.to_string(),
                    (None, Some(c)) => c.to_string(),
                    (None, None) => "?".into(),
                })
                .collect();
            format!(
                "{} {} rule {}",
                ty,
                w.behavior.as_deref().unwrap_or("allow"),
                rules.join(", ")
            )
        }
    };
    if let Some(d) = &w.destination.0 {
        description.push_str(&format!(" ({d})"));
    }
    Some(PermissionSuggestion {
        tool_name: rule.and_then(|r| r.tool_name.0.clone()),
        directory: w.directories.and_then(|d| d.into_iter().next()),
        mode: w.mode.0,
        kind: ty,
        description: Cow::Owned(description),
        detail: Json::Raw(raw),
    })
}

pub(super) fn control_request<'a>(
    line: Line<'a, '_>,
    cx: &mut Cx<'a>,
    d: &Dialect,
) -> Result<(), Unmapped> {
    let w: ControlRequest = line.read()?;
    let request_id = w.request_id.0.unwrap_or_default();
    let r = w.request;
    // Remembered for its answer or its cancel.
    let lineno = cx.line;
    cx.memory().claude.requests.insert(
        &request_id,
        Request {
            subtype: r.subtype.to_string(),
            tool_use_id: r.tool_use_id.as_deref().map(str::to_owned),
            tool_name: r.tool_name.as_deref().map(str::to_owned),
        },
        lineno,
    );
    match &*r.subtype {
        "can_use_tool" => {
            // The invocation's name, when the call is known (the request's, else).
            let invoked = r
                .tool_use_id
                .as_deref()
                .and_then(|id| cx.memory().claude.calls.get(id))
                .map(|c| c.name.clone())
                .filter(|n| !n.is_empty());
            let tool_name = match invoked {
                Some(n) if r.tool_name.as_deref() != Some(&*n) => Cow::Owned(n),
                _ => r.tool_name.0.unwrap_or_default(),
            };
            let input = match r.input {
                Some(i) if is_object(i) => Json::Raw(i),
                _ => Json::Value(Value::Object(Default::default())),
            };
            let suggestions: Option<Vec<_>> = r
                .permission_suggestions
                .or(r.suggestions)
                .map(|v| v.into_iter().filter_map(suggestion).collect());
            let ext = cx.push(PermissionRequest {
                request_id,
                tool_kind: (d.tool_kind)(&tool_name),
                tool_name,
                tool_input: input,
                tool_use_id: r.tool_use_id.0,
                reason: r.decision_reason.0,
                blocked_path: r.blocked_path.0,
                suggestions: suggestions.filter(|s| !s.is_empty()),
                title: r.title.0.or(r.description.0),
                parent_call_id: None,
                options: None,
            });
            ext.put_opt("claude.displayName", r.display_name.0);
            ext.put_opt("claude.agentId", r.agent_id.0);
            ext.put_opt("claude.decisionReasonType", r.decision_reason_type.0);
        }
        "interrupt" => {
            turn_mut(cx).interrupted = true;
            let ext = cx.push(SessionStatus {
                status: SessionStatusKind::Interrupted,
                message: None,
            });
            ext.put("claude.requestId", request_id);
        }
        "set_permission_mode" => {
            let ext = cx.push(SessionMode {
                current_mode_id: r.mode.0.unwrap_or_default(),
                available_modes: Vec::new(),
            });
            ext.put("claude.requestId", request_id);
        }
        other => {
            let all: Pairs<&RawValue> = line.read()?;
            let ext = cx.push(Notice {
                subtype: Cow::Owned(format!("control_request/{other}")),
                message: None,
            });
            for (k, v) in all.0 {
                if k == "request" {
                    ext.put(k, v);
                }
            }
            ext.put("claude.requestId", request_id);
        }
    }
    Ok(())
}

#[derive(Deserialize)]
struct ControlResponse<'a> {
    #[serde(borrow)]
    response: ResponseEnvelope<'a>,
}

#[derive(Deserialize)]
struct ResponseEnvelope<'a> {
    subtype: OptStr<'a>,
    request_id: OptStr<'a>,
    error: OptStr<'a>,
    #[serde(borrow, default)]
    response: crate::wire::IfObject<ResponseBody<'a>>,
}

#[derive(Deserialize)]
struct ResponseBody<'a> {
    behavior: OptStr<'a>,
    #[serde(rename = "updatedInput", borrow)]
    updated_input: Option<&'a RawValue>,
    #[serde(rename = "updatedPermissions", borrow)]
    updated_permissions: Option<&'a RawValue>,
    message: OptStr<'a>,
    interrupt: Option<bool>,
    #[serde(rename = "toolUseID")]
    tool_use_id: OptStr<'a>,
    #[serde(borrow)]
    commands: Option<Vec<SlashWire<'a>>>,
    #[serde(borrow)]
    models: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    account: Option<AccountWire<'a>>,
    /// The agents on offer as written (names, or objects with a description too).
    #[serde(borrow)]
    agents: Option<&'a RawValue>,
    output_style: OptStr<'a>,
    #[serde(borrow)]
    available_output_styles: Option<&'a RawValue>,
    #[serde(borrow)]
    pid: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SlashWire<'a> {
    #[serde(borrow)]
    name: OptStr<'a>,
    description: OptStr<'a>,
    #[serde(rename = "argumentHint")]
    argument_hint: OptStr<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AccountWire<'a> {
    #[serde(borrow)]
    email: OptStr<'a>,
    organization: OptStr<'a>,
    subscription_type: OptStr<'a>,
    token_source: OptStr<'a>,
    api_key_source: OptStr<'a>,
    api_provider: OptStr<'a>,
}

pub(super) fn control_response<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ControlResponse = line.read()?;
    let env = w.response;
    let request_id = env.request_id.0.unwrap_or_default();
    let request = cx.memory().claude.requests.remove(&request_id);
    if env.subtype.as_deref() == Some("error") {
        cx.push(ErrorEvent {
            message: env
                .error
                .0
                .unwrap_or(Cow::Borrowed("control request failed")),
            severity: Severity::Error,
            code: Some(Cow::Borrowed("control_error")),
            http_status: None,
            will_retry: None,
            attempt: None,
            max_retries: None,
            retry_delay_ms: None,
            request_id: Some(request_id),
            parent_call_id: None,
        });
        return Ok(());
    }
    let body = env.response.0;
    match body {
        Some(b) if b.behavior.is_some() => {
            let behavior = b.behavior.as_deref().unwrap_or("");
            let always = b
                .updated_permissions
                .is_some_and(|p| p.get().starts_with('[') && p.get() != "[]");
            let decision = match (behavior, always) {
                ("allow", true) => Decision::AllowAlways,
                ("allow", false) => Decision::Allow,
                (_, true) => Decision::DenyAlways,
                (_, false) => Decision::Deny,
            };
            let interrupt = b.interrupt.unwrap_or(false);
            if interrupt && behavior != "allow" {
                turn_mut(cx).interrupted = true;
            }
            let tool_use_id = b
                .tool_use_id
                .0
                .or_else(|| request.and_then(|r| r.tool_use_id).map(Cow::Owned));
            cx.push(PermissionResponse {
                request_id,
                decision,
                allowed: Some(behavior == "allow"),
                message: b.message.0,
                updated_input: b.updated_input.filter(|i| is_object(i)).map(Json::Raw),
                updated_permissions: b.updated_permissions.filter(|p| !is_null(p)).map(Json::Raw),
                interrupt,
                tool_use_id,
                option_id: None,
            });
        }
        Some(b)
            if cx.session_id.is_none()
                && (b.commands.is_some() || b.models.is_some() || b.account.is_some()) =>
        {
            // The initialize answer before the session is announced: it goes onto the
            // session's init.
            let rest = initialize_rest(&b).and_then(|v| serde_json::to_string(&v).ok());
            let answer = InitAnswer {
                request_id: request_id.to_string(),
                commands: b.commands.map(|v| {
                    v.into_iter()
                        .map(|c| {
                            (
                                c.name.0.unwrap_or_default().into_owned(),
                                c.description.0.unwrap_or_default().into_owned(),
                                c.argument_hint.0.unwrap_or_default().into_owned(),
                            )
                        })
                        .collect()
                }),
                models: b.models.map(|v| {
                    v.into_iter()
                        .filter(|m| is_object(m))
                        .map(|m| m.get().to_owned())
                        .collect()
                }),
                account: b.account.map(|a| {
                    [
                        a.email,
                        a.organization,
                        a.subscription_type,
                        a.token_source,
                        a.api_key_source,
                    ]
                    .map(|f| f.0.map(Cow::into_owned))
                }),
                agents: agent_names(b.agents).map(|v| v.into_iter().map(Cow::into_owned).collect()),
                output_style: b.output_style.0.map(Cow::into_owned),
                rest,
            };
            let lineno = cx.line;
            cx.memory().claude.init.insert("", answer, lineno);
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("control_response/initialize"),
                message: Some(Cow::Borrowed(
                    "kept for the session_init that announces the session",
                )),
            });
            ext.put("claude.requestId", request_id);
        }
        Some(b) if b.commands.is_some() || b.models.is_some() || b.account.is_some() => {
            let rest = initialize_rest(&b);
            let init = SessionInit {
                slash_commands: b.commands.map(|v| {
                    v.into_iter()
                        .map(|c| SlashCommand {
                            name: c.name.0.unwrap_or_default(),
                            description: c.description.0.unwrap_or_default(),
                            argument_hint: c.argument_hint.0.unwrap_or_default(),
                        })
                        .collect()
                }),
                available_models: b.models.map(|v| {
                    v.into_iter()
                        .filter(|m| is_object(m))
                        .map(Json::Raw)
                        .collect()
                }),
                account: b.account.map(|a| Account {
                    email: a.email.0,
                    organization: a.organization.0,
                    subscription_type: a.subscription_type.0,
                    token_source: a.token_source.0,
                    api_key_source: a.api_key_source.0,
                }),
                agents: agent_names(b.agents),
                ..SessionInit::default()
            };
            let ext = cx.push(init);
            ext.put_opt("claude.outputStyle", b.output_style.0);
            ext.put_opt("claude.initialize", rest);
            ext.put("claude.requestId", request_id);
        }
        _ => {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("control_response/success"),
                message: None,
            });
            ext.put("claude.requestId", request_id);
            ext.put_opt(
                "claude.requestSubtype",
                request.map(|r| Cow::<str>::Owned(r.subtype)),
            );
            // Rare: the body is read again, whole, for the notice.
            let raw: Raw = line.read()?;
            ext.put_opt("response", raw.response.response.filter(|r| !is_null(r)));
        }
    }
    Ok(())
}

/// A control response's body as written.
#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(borrow)]
    response: RawEnvelope<'a>,
}

#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow)]
    response: Option<&'a RawValue>,
}

/// The members of an `initialize` answer that the session's init has no field for (the
/// process id, the output styles on offer, the account's API provider, the agents with their
/// descriptions), as one object, their values as written; `None` when there are none.
fn initialize_rest<'a>(b: &ResponseBody<'a>) -> Option<Json<'a>> {
    let mut rest: Vec<(Str<'a>, Json<'a>)> = Vec::new();
    let mut raw = |k: &'static str, v: Option<&'a RawValue>| {
        if let Some(v) = v.filter(|v| !is_null(v)) {
            rest.push((Cow::Borrowed(k), Json::Raw(v)));
        }
    };
    // Agents named only by name are the init's `agents`.
    raw("agents", b.agents.filter(|a| a.get().contains('{')));
    raw("available_output_styles", b.available_output_styles);
    raw("pid", b.pid);
    if let Some(p) = b.account.as_ref().and_then(|a| a.api_provider.0.clone()) {
        rest.push((
            Cow::Borrowed("account"),
            Json::Object(Pairs(vec![(Cow::Borrowed("apiProvider"), Json::Str(p))])),
        ));
    }
    (!rest.is_empty()).then_some(Json::Object(Pairs(rest)))
}

/// The names of the agents an `initialize` answer offers.
fn agent_names<'a>(agents: Option<&'a RawValue>) -> Option<Vec<Str<'a>>> {
    agents.and_then(|a| {
        serde_json::from_str::<crate::wire::NameList>(a.get())
            .ok()?
            .0
    })
}

#[derive(Deserialize)]
struct ControlCancel<'a> {
    #[serde(borrow)]
    request_id: OptStr<'a>,
}

pub(super) fn control_cancel<'a>(line: Line<'a, '_>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    let w: ControlCancel = line.read()?;
    let request_id = w.request_id.0.unwrap_or_default();
    let request = cx.memory().claude.requests.remove(&request_id);
    match request {
        Some(r) if r.subtype == "can_use_tool" => {
            cx.push(PermissionResponse {
                request_id,
                decision: Decision::Cancelled,
                allowed: Some(false),
                message: None,
                updated_input: None,
                updated_permissions: None,
                interrupt: false,
                tool_use_id: r.tool_use_id.map(Cow::Owned),
                option_id: None,
            });
        }
        // Not a permission request (a hook callback, …), or one this stream does not show.
        other => {
            let ext = cx.push(Notice {
                subtype: Cow::Borrowed("control_cancel_request"),
                message: None,
            });
            ext.put("claude.requestId", request_id);
            ext.put(
                "claude.requestSubtype",
                other.map_or(Cow::Borrowed("unknown"), |r| Cow::Owned(r.subtype)),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{conv, stream, INIT};
    use crate::test_support::of_kind;

    #[test]
    fn can_use_tool_with_suggestions() {
        let ev = conv(
            r#"{"type":"control_request","request_id":"f5","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"./gradlew"},"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"./gradlew:*"}],"behavior":"allow","destination":"localSettings"}],"tool_use_id":"toolu_1","blocked_path":"/etc"}}"#,
        );
        assert_eq!(ev[0]["event"], "permission_request");
        assert_eq!(ev[0]["requestId"], "f5");
        assert_eq!(ev[0]["toolKind"], "execute");
        assert_eq!(ev[0]["blockedPath"], "/etc");
        let s = &ev[0]["suggestions"][0];
        assert_eq!(s["type"], "addRules");
        assert_eq!(s["toolName"], "Bash");
        assert_eq!(
            s["description"],
            "addRules allow rule Bash(./gradlew:*) (localSettings)"
        );
    }

    #[test]
    fn deny_with_interrupt() {
        let ev = conv(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"behavior":"deny","message":"no","interrupt":true}}}"#,
        );
        assert_eq!(ev[0]["event"], "permission_response");
        assert_eq!(ev[0]["decision"], "deny");
        assert_eq!(ev[0]["interrupt"], true);
        assert_eq!(ev[0]["allowed"], false);
    }

    #[test]
    fn control_error_is_an_error() {
        let ev = conv(
            r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":"boom"}}"#,
        );
        assert_eq!(ev[0]["event"], "error");
        assert_eq!(ev[0]["message"], "boom");
    }

    #[test]
    fn a_denial_without_interrupt_fails_the_call() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -r build"}}]},"session_id":"s1"}"#,
            r#"{"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"rm -r build"},"tool_use_id":"t1"}}"#,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"p1","response":{"behavior":"deny","message":"no"}}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"The user denied this tool use."}]},"session_id":"s1"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s1"}"#,
        ]);
        let answer = of_kind(&ev, "permission_response")[0];
        assert_eq!(answer["decision"], "deny");
        // The answer names no call; its request did.
        assert_eq!(answer["toolUseId"], "t1");
        assert_eq!(of_kind(&ev, "tool_completion")[0]["status"], "failed");
        assert!(of_kind(&ev, "turn_complete")[0].get("stopReason").is_none());
    }

    #[test]
    fn a_cancel_is_a_permission_answer_only_for_a_permission_request() {
        let ev = stream(&[
            INIT,
            r#"{"type":"control_request","request_id":"h1","request":{"subtype":"hook_callback","callback_id":"c"}}"#,
            r#"{"type":"control_cancel_request","request_id":"h1"}"#,
            r#"{"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{},"tool_use_id":"t9"}}"#,
            r#"{"type":"control_cancel_request","request_id":"p1"}"#,
            r#"{"type":"control_cancel_request","request_id":"gone"}"#,
        ]);
        let answers = of_kind(&ev, "permission_response");
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0]["requestId"], "p1");
        assert_eq!(answers[0]["decision"], "cancelled");
        assert_eq!(answers[0]["toolUseId"], "t9");
        let notices: Vec<_> = of_kind(&ev, "notice")
            .into_iter()
            .filter(|n| n["subtype"] == "control_cancel_request")
            .map(|n| n["extensions"]["claude.requestSubtype"].clone())
            .collect();
        assert_eq!(notices, vec!["hook_callback", "unknown"]);
    }

    #[test]
    fn the_initialize_answer_goes_onto_the_session_init() {
        let ev = stream(&[
            r#"{"type":"control_request","request_id":"i1","request":{"subtype":"initialize"}}"#,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"i1","response":{"commands":[{"name":"compact","description":"Free up context","argumentHint":""}],"models":[{"value":"default"}],"account":{"email":"a@b","tokenSource":"none","apiProvider":"firstParty"},"output_style":"default","available_output_styles":["default","Learning"],"pid":21069}}}"#,
            r#"{"type":"user","message":{"content":"hi"},"session_id":""}"#,
            r#"{"type":"system","subtype":"init","session_id":"s1","slash_commands":["compact"],"apiKeySource":"none"}"#,
            r#"{"type":"user","message":{"content":"again"},"session_id":""}"#,
        ]);
        let inits = of_kind(&ev, "session_init");
        assert_eq!(inits.len(), 1);
        assert_eq!(inits[0]["sessionId"], "s1");
        assert_eq!(
            inits[0]["slashCommands"][0]["description"],
            "Free up context"
        );
        assert_eq!(inits[0]["availableModels"][0]["value"], "default");
        assert_eq!(inits[0]["account"]["email"], "a@b");
        assert_eq!(inits[0]["account"]["apiKeySource"], "none");
        assert_eq!(inits[0]["extensions"]["claude.initializeRequestId"], "i1");
        // What the init has no field for stays, as the answer said it.
        assert_eq!(
            inits[0]["extensions"]["claude.initialize"],
            serde_json::json!({"account": {"apiProvider": "firstParty"}, "available_output_styles": ["default", "Learning"], "pid": 21069})
        );
        assert_eq!(inits[0]["extensions"]["claude.outputStyle"], "default");
        let inputs = of_kind(&ev, "user_input");
        assert_eq!(inputs[0]["sessionId"], "", "not named yet");
        assert_eq!(inputs[1]["sessionId"], "s1");
    }

    #[test]
    fn a_permission_request_takes_the_invocation_tool_name() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__srv__do","input":{}}]},"session_id":"s1"}"#,
            r#"{"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool","tool_name":"do","input":{},"tool_use_id":"t1"}}"#,
        ]);
        assert_eq!(
            of_kind(&ev, "permission_request")[0]["toolName"],
            "mcp__srv__do"
        );
    }
}
