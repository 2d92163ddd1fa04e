//! The command language, what `insights run` reads (`schemas/insights-command.schema.json`): one JSON object a line,
//! each mirroring the event it causes. Our own input, so it is read strictly: an unknown
//! command, a member the command does not take or a missing one is an error that names the
//! command and the member, and nothing reaches the agent.

use serde::Deserialize;
use serde_json::value::RawValue;

/// One command, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The client's id, echoed on the events the command causes.
    pub id: Option<String>,
    /// The session the command is for (the run's only one when absent).
    pub session_id: Option<String>,
    pub action: Action,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A prompt; a `user_input` event follows.
    SendMessage {
        text: String,
        images: Vec<Image>,
    },
    /// The answer to a `permission_request` (the next one when `request_id` is absent).
    PermissionResponse {
        request_id: Option<String>,
        decision: Decision,
        /// The tool input to run instead of the requested one (Claude), as JSON text.
        updated_input: Option<String>,
        /// Why, for the agent (a denial's reason).
        message: Option<String>,
    },
    /// Stops the running turn.
    Interrupt,
    /// Ends the agent's process.
    Kill,
    SetModel {
        model: String,
    },
    SetPermissionMode {
        mode: String,
    },
    SetReasoningEffort {
        effort: String,
    },
}

/// An image of a prompt, base64-encoded.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Image {
    pub media_type: String,
    pub data: String,
}

/// What a permission answer decides, in the agent-neutral terms of `permission_response`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    AllowAlways,
    Deny,
    DenyAlways,
    Cancelled,
}

impl Action {
    /// The command's name, as the schema spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Action::SendMessage { .. } => "send_message",
            Action::PermissionResponse { .. } => "permission_response",
            Action::Interrupt => "interrupt",
            Action::Kill => "kill",
            Action::SetModel { .. } => "set_model",
            Action::SetPermissionMode { .. } => "set_permission_mode",
            Action::SetReasoningEffort { .. } => "set_reasoning_effort",
        }
    }
}

impl Decision {
    pub fn allows(self) -> bool {
        matches!(self, Decision::Allow | Decision::AllowAlways)
    }
}

/// A command line that cannot be carried out: what it was, as far as it could be read, and
/// why, for the `error` event and the message on stderr.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandError {
    pub id: Option<String>,
    pub command: Option<String>,
    pub message: String,
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.command {
            Some(c) => write!(f, "command `{c}`: {}", self.message),
            None => write!(f, "command: {}", self.message),
        }
    }
}

/// The commands, as the schema names them.
pub const COMMANDS: &[&str] = &[
    "send_message",
    "permission_response",
    "interrupt",
    "kill",
    "set_model",
    "set_permission_mode",
    "set_reasoning_effort",
];

/// Every member any command takes; which command takes which is checked after reading.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Wire {
    command: Option<String>,
    id: Option<String>,
    session_id: Option<String>,
    text: Option<String>,
    images: Option<Vec<Image>>,
    request_id: Option<String>,
    decision: Option<Decision>,
    allowed: Option<bool>,
    updated_input: Option<Box<RawValue>>,
    message: Option<String>,
    model: Option<String>,
    mode: Option<String>,
    effort: Option<String>,
}

impl Wire {
    /// The members given, by their wire names, apart from `command`, `id` and `sessionId`.
    fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut add = |on: bool, name| {
            if on {
                v.push(name)
            }
        };
        add(self.text.is_some(), "text");
        add(self.images.is_some(), "images");
        add(self.request_id.is_some(), "requestId");
        add(self.decision.is_some(), "decision");
        add(self.allowed.is_some(), "allowed");
        add(self.updated_input.is_some(), "updatedInput");
        add(self.message.is_some(), "message");
        add(self.model.is_some(), "model");
        add(self.mode.is_some(), "mode");
        add(self.effort.is_some(), "effort");
        v
    }
}

/// The members each command takes besides `command`, `id` and `sessionId`.
fn takes(command: &str) -> &'static [&'static str] {
    match command {
        "send_message" => &["text", "images"],
        "permission_response" => &[
            "requestId",
            "decision",
            "allowed",
            "updatedInput",
            "message",
        ],
        "set_model" => &["model"],
        "set_permission_mode" => &["mode"],
        "set_reasoning_effort" => &["effort"],
        _ => &[],
    }
}

/// Reads one command line.
pub fn parse(line: &[u8]) -> Result<Command, CommandError> {
    let w: Wire = serde_json::from_slice(line).map_err(|e| {
        // What can still be read of a line with a member the language does not have.
        #[derive(Deserialize, Default)]
        struct Named {
            command: Option<String>,
            id: Option<String>,
        }
        let named: Named = serde_json::from_slice(line).unwrap_or_default();
        let message = match e.classify() {
            serde_json::error::Category::Data => crate::wire::without_position(&e)
                .replace("unknown field", "unknown member")
                .replace("field", "member"),
            _ => crate::wire::json_problem(&e, false).1,
        };
        CommandError {
            id: named.id,
            command: named.command,
            message,
        }
    })?;
    let fail = |w: &Wire, message: String| CommandError {
        id: w.id.clone(),
        command: w.command.clone(),
        message,
    };
    let Some(name) = w.command.as_deref() else {
        return Err(fail(&w, "no `command` member".into()));
    };
    if !COMMANDS.contains(&name) {
        return Err(fail(
            &w,
            format!("unknown command (one of: {})", COMMANDS.join(", ")),
        ));
    }
    if let Some(extra) = w.given().into_iter().find(|m| !takes(name).contains(m)) {
        return Err(fail(
            &w,
            format!("`{extra}` is not a member of this command"),
        ));
    }
    let need = |v: &Option<String>, member: &str| -> Result<String, CommandError> {
        match v.as_deref() {
            Some(s) if !s.is_empty() => Ok(s.to_owned()),
            _ => Err(fail(
                &w,
                format!("`{member}` is required (a non-empty string)"),
            )),
        }
    };
    let action = match name {
        "send_message" => {
            let images = w.images.clone().unwrap_or_default();
            let text = w.text.clone().unwrap_or_default();
            if text.is_empty() && images.is_empty() {
                return Err(fail(&w, "`text` or `images` is required".into()));
            }
            Action::SendMessage { text, images }
        }
        "permission_response" => {
            let decision = match (w.decision, w.allowed) {
                (Some(d), None) => d,
                (None, Some(true)) => Decision::Allow,
                (None, Some(false)) => Decision::Deny,
                (Some(d), Some(a)) if d.allows() == a => d,
                (Some(_), Some(_)) => {
                    return Err(fail(&w, "`decision` and `allowed` disagree".into()))
                }
                (None, None) => {
                    return Err(fail(
                        &w,
                        "`decision` is required (allow, allow_always, deny, deny_always or \
                         cancelled; or `allowed`: true or false)"
                            .into(),
                    ))
                }
            };
            if w.request_id.as_deref() == Some("") {
                return Err(fail(&w, "`requestId` is empty".into()));
            }
            Action::PermissionResponse {
                request_id: w.request_id.clone(),
                decision,
                updated_input: w.updated_input.as_ref().map(|v| v.get().to_owned()),
                message: w.message.clone(),
            }
        }
        "interrupt" => Action::Interrupt,
        "kill" => Action::Kill,
        "set_model" => Action::SetModel {
            model: need(&w.model, "model")?,
        },
        "set_permission_mode" => Action::SetPermissionMode {
            mode: need(&w.mode, "mode")?,
        },
        _ => Action::SetReasoningEffort {
            effort: need(&w.effort, "effort")?,
        },
    };
    Ok(Command {
        id: w.id,
        session_id: w.session_id.filter(|s| !s.is_empty()),
        action,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> Command {
        parse(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn err(line: &str) -> CommandError {
        match parse(line.as_bytes()) {
            Ok(c) => panic!("{line}: read as {c:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn each_command_reads_as_the_schema_says() {
        let c = ok(r#"{"command":"send_message","text":"hi","id":"c1","sessionId":"s"}"#);
        assert_eq!(c.id.as_deref(), Some("c1"));
        assert_eq!(c.session_id.as_deref(), Some("s"));
        assert_eq!(
            c.action,
            Action::SendMessage {
                text: "hi".into(),
                images: vec![]
            }
        );
        let c = ok(
            r#"{"command":"permission_response","requestId":"r1","decision":"allow_always","updatedInput":{"a":1}}"#,
        );
        match c.action {
            Action::PermissionResponse {
                request_id,
                decision,
                updated_input,
                message,
            } => {
                assert_eq!(request_id.as_deref(), Some("r1"));
                assert_eq!(decision, Decision::AllowAlways);
                assert_eq!(updated_input.as_deref(), Some(r#"{"a":1}"#));
                assert_eq!(message, None);
            }
            a => panic!("{a:?}"),
        }
        // The short form of S0: `allowed`.
        let c = ok(r#"{"command":"permission_response","allowed":false,"message":"no"}"#);
        assert!(matches!(
            c.action,
            Action::PermissionResponse {
                decision: Decision::Deny,
                request_id: None,
                ..
            }
        ));
        assert_eq!(ok(r#"{"command":"interrupt"}"#).action, Action::Interrupt);
        assert_eq!(ok(r#"{"command":"kill"}"#).action, Action::Kill);
        assert_eq!(
            ok(r#"{"command":"set_model","model":"m"}"#).action,
            Action::SetModel { model: "m".into() }
        );
        assert_eq!(
            ok(r#"{"command":"set_permission_mode","mode":"plan"}"#).action,
            Action::SetPermissionMode {
                mode: "plan".into()
            }
        );
        assert_eq!(
            ok(r#"{"command":"set_reasoning_effort","effort":"high"}"#).action,
            Action::SetReasoningEffort {
                effort: "high".into()
            }
        );
    }

    #[test]
    fn bad_commands_say_which_and_why() {
        let e = err(r#"{"command":"send_message","text":"hi","id":"c2","requestID":"x"}"#);
        assert_eq!(e.command.as_deref(), Some("send_message"));
        assert_eq!(e.id.as_deref(), Some("c2"));
        assert!(
            e.message.starts_with("unknown member `requestID`"),
            "{}",
            e.message
        );
        let e = err(r#"{"command":"reboot","id":"c3"}"#);
        assert!(e.message.starts_with("unknown command"), "{}", e.message);
        assert_eq!(e.to_string().split(':').next(), Some("command `reboot`"));
        let e = err(r#"{"command":"interrupt","model":"m"}"#);
        assert_eq!(e.message, "`model` is not a member of this command");
        let e = err(r#"{"command":"set_model"}"#);
        assert_eq!(e.message, "`model` is required (a non-empty string)");
        let e = err(r#"{"command":"permission_response","decision":"deny","allowed":true}"#);
        assert_eq!(e.message, "`decision` and `allowed` disagree");
        let e = err(r#"{"command":"permission_response","decision":"maybe"}"#);
        assert!(
            e.message.contains("unknown variant `maybe`"),
            "{}",
            e.message
        );
        let e = err(r#"{"command":"send_message"}"#);
        assert_eq!(e.message, "`text` or `images` is required");
        let e = err(r#"{"text":"hi"}"#);
        assert_eq!(e.message, "no `command` member");
        let e = err(r#"{"command":"send_message","text":"#);
        assert!(e.message.starts_with("truncated JSON"), "{}", e.message);
        assert_eq!(e.command, None);
        let e = err("[1]");
        assert!(
            e.message.starts_with("invalid JSON") || e.message.contains("expected"),
            "{}",
            e.message
        );
    }

    /// The parser and `schemas/insights-command.schema.json` accept the same lines.
    #[test]
    fn the_schema_accepts_what_the_parser_accepts() {
        let schema: serde_json::Value =
            serde_json::from_str(crate::schema::COMMAND_SCHEMA).expect("the schema is JSON");
        jsonschema::draft202012::meta::validate(&schema).expect("a draft 2020-12 schema");
        let v = jsonschema::validator_for(&schema).expect("the schema compiles");
        let lines = [
            r#"{"command":"send_message","text":"hi"}"#,
            r#"{"command":"send_message","text":"","images":[{"mediaType":"image/png","data":"AA=="}]}"#,
            r#"{"command":"send_message","images":[{"mediaType":"image/png","data":"AA==","x":1}]}"#,
            r#"{"command":"send_message","text":""}"#,
            r#"{"command":"send_message"}"#,
            r#"{"command":"send_message","text":"hi","id":"1","sessionId":"s"}"#,
            r#"{"command":"send_message","text":"hi","model":"m"}"#,
            r#"{"command":"permission_response","decision":"allow"}"#,
            r#"{"command":"permission_response","requestId":"r","allowed":true}"#,
            r#"{"command":"permission_response","requestId":"r"}"#,
            r#"{"command":"permission_response","requestId":"","decision":"deny"}"#,
            r#"{"command":"permission_response","decision":"maybe"}"#,
            r#"{"command":"permission_response","decision":"cancelled","updatedInput":{"a":[1]},"message":"m"}"#,
            r#"{"command":"interrupt"}"#,
            r#"{"command":"interrupt","text":"x"}"#,
            r#"{"command":"kill","id":"k"}"#,
            r#"{"command":"set_model","model":"m"}"#,
            r#"{"command":"set_model","model":""}"#,
            r#"{"command":"set_model"}"#,
            r#"{"command":"set_permission_mode","mode":"plan"}"#,
            r#"{"command":"set_reasoning_effort","effort":"high"}"#,
            r#"{"command":"set_reasoning_effort","mode":"high"}"#,
            r#"{"command":"reboot"}"#,
            r#"{"text":"hi"}"#,
            r#"[1]"#,
        ];
        for line in lines {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let by_schema = v.is_valid(&value);
            let by_parser = parse(line.as_bytes()).is_ok();
            // One difference, by design: `decision` and `allowed` that disagree (the schema
            // does not compare members).
            assert_eq!(
                by_schema, by_parser,
                "{line}: schema {by_schema}, parser {by_parser}"
            );
        }
    }
}
