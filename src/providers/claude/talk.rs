//! Driving Claude Code as the Agent SDK does (`insights run`): stream-json both ways and the
//! control protocol.
//!
//! - Started with `--output-format stream-json --verbose --input-format stream-json
//!   --permission-prompt-tool stdio` (added where missing); the `initialize` control request
//!   first, a prompt once it is answered.
//! - A prompt is a `user` line; the turn runs until the CLI's `result`.
//! - The CLI's `can_use_tool` control request is a permission request (its `request_id` is the
//!   event's `requestId`), answered by a `control_response` whose `behavior` is `allow` (with
//!   `updatedInput`: the command's, else the request's own input; `allow_always` adds the
//!   request's `permission_suggestions` as `updatedPermissions`) or `deny` (with `message`;
//!   `cancelled` adds `interrupt: true`). The SDK has no "deny always". Other control
//!   requests (hooks, MCP messages) get an empty success: this client registers none.
//! - `interrupt`, `set_model` and `set_permission_mode` are control requests; Claude Code has
//!   no reasoning-effort control.

use crate::command::{Decision, Image};
use crate::providers::talk::{add_flag, has_flag, program, Answer, Options, Outbox, Speaker, Talk};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

pub static SPEAKER: Speaker = Speaker {
    protocol: "claude",
    recognizes,
    prepare,
    new,
};

/// `claude` (or a path to it) without `-p PROMPT`: `claude -p "…"` is the one-shot CLI, unless
/// it reads stream-json input.
fn recognizes(argv: &[String]) -> bool {
    let (prog, args) = program(argv);
    let name = prog.rsplit('/').next().unwrap_or(prog);
    if !(name == "claude" || name.starts_with("claude-code") || name == "cli.js") {
        return false;
    }
    let print = args.iter().any(|a| a == "-p" || a == "--print");
    !print || has_flag(args, "--input-format")
}

fn prepare(args: &mut Vec<String>, o: &Options) {
    if let Some(id) = &o.resume {
        add_flag(args, "--resume", Some(id));
    }
    add_flag(args, "--output-format", Some("stream-json"));
    add_flag(args, "--verbose", None);
    add_flag(args, "--input-format", Some("stream-json"));
    add_flag(args, "--permission-prompt-tool", Some("stdio"));
}

fn new(o: &Options) -> Box<dyn Talk> {
    Box::new(Claude {
        token: o.token.clone(),
        ..Claude::default()
    })
}

#[derive(Default)]
struct Claude {
    token: String,
    counter: u64,
    /// The `initialize` request's id, until it is answered.
    init: Option<String>,
    ready: bool,
    running: bool,
    session: Option<String>,
    /// `can_use_tool` requests not answered yet, oldest first.
    asks: Vec<Ask>,
}

struct Ask {
    id: String,
    input: Box<RawValue>,
    suggestions: Option<Box<RawValue>>,
    tool_use_id: Option<String>,
}

/// The members of the CLI's lines this client reads.
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    ty: Option<String>,
    subtype: Option<String>,
    session_id: Option<String>,
    request_id: Option<String>,
    request: Option<Request>,
    response: Option<Response>,
}

#[derive(Deserialize)]
struct Request {
    subtype: Option<String>,
    input: Option<Box<RawValue>>,
    permission_suggestions: Option<Box<RawValue>>,
    tool_use_id: Option<String>,
}

#[derive(Deserialize)]
struct Response {
    request_id: Option<String>,
}

impl Claude {
    fn request_id(&mut self) -> String {
        self.counter += 1;
        format!("req_{}_{}", self.counter, self.token)
    }

    fn control(&mut self, request: Value, out: &mut Outbox) {
        let id = self.request_id();
        out.send(&json!({"request_id": id, "type": "control_request", "request": request}));
    }
}

impl Talk for Claude {
    fn start(&mut self, out: &mut Outbox) {
        let id = self.request_id();
        out.send(&json!({"request_id": id, "type": "control_request",
                         "request": {"subtype": "initialize"}}));
        self.init = Some(id);
    }

    fn heard(&mut self, line: &str, out: &mut Outbox) {
        let Ok(l) = serde_json::from_str::<Line>(line) else {
            return;
        };
        if let Some(s) = l.session_id.filter(|s| !s.is_empty()) {
            self.session = Some(s);
        }
        match l.ty.as_deref() {
            Some("control_response") => {
                let id = l.response.and_then(|r| r.request_id);
                if id.is_some() && id == self.init {
                    self.init = None;
                    self.ready = true;
                }
            }
            Some("control_request") => {
                let Some(id) = l.request_id else { return };
                match l.request {
                    Some(r) if r.subtype.as_deref() == Some("can_use_tool") => {
                        let input = r.input.unwrap_or_else(empty_object);
                        self.asks.push(Ask {
                            id,
                            input,
                            suggestions: r.permission_suggestions,
                            tool_use_id: r.tool_use_id,
                        });
                    }
                    _ => out.send(&json!({"type": "control_response", "response": {
                        "subtype": "success", "request_id": id, "response": {}}})),
                }
            }
            Some("result") => {
                self.running = false;
                // A request the turn left unanswered is not asked any more.
                self.asks.clear();
            }
            Some("system") if l.subtype.as_deref() == Some("init") => self.ready = true,
            _ => {}
        }
    }

    fn idle(&self) -> bool {
        self.ready && !self.running
    }

    fn busy(&self) -> bool {
        self.running
    }

    fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    fn pending(&self) -> Vec<String> {
        self.asks.iter().map(|a| a.id.clone()).collect()
    }

    fn prompt(&mut self, text: &str, images: &[Image], out: &mut Outbox) -> Result<(), String> {
        let mut content: Vec<Value> = images
            .iter()
            .map(|i| {
                json!({"type": "image", "source": {"type": "base64",
                           "media_type": i.media_type, "data": i.data}})
            })
            .collect();
        if !text.is_empty() {
            content.push(json!({"type": "text", "text": text}));
        }
        out.send(&json!({"type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": null,
            "session_id": self.session.as_deref().unwrap_or("")}));
        self.running = true;
        Ok(())
    }

    fn offers(&self, decision: Decision) -> Result<(), String> {
        match decision {
            Decision::DenyAlways => {
                Err("Claude Code offers no `deny_always` (deny, or allow)".into())
            }
            _ => Ok(()),
        }
    }

    fn answer(&mut self, request: &str, a: &Answer, out: &mut Outbox) -> Result<(), String> {
        let Some(k) = self.asks.iter().position(|x| x.id == request) else {
            return Err(format!("no permission request `{request}` is waiting"));
        };
        let mut body = match a.decision {
            Decision::Allow | Decision::AllowAlways => {
                let input: Box<RawValue> = match a.updated_input {
                    Some(t) => RawValue::from_string(t.to_owned())
                        .map_err(|e| format!("updatedInput: {e}"))?,
                    None => self.asks[k].input.clone(),
                };
                let mut b = json!({"behavior": "allow", "updatedInput": input});
                if a.decision == Decision::AllowAlways {
                    let Some(s) = &self.asks[k].suggestions else {
                        return Err("this request offers no rule to allow always \
                                    (no permission_suggestions)"
                            .into());
                    };
                    b["updatedPermissions"] = serde_json::to_value(s).unwrap_or(Value::Null);
                }
                b
            }
            Decision::Deny | Decision::Cancelled => {
                let message = a.message.unwrap_or(if a.decision == Decision::Deny {
                    "The user denied this tool use."
                } else {
                    "The user cancelled this tool use."
                });
                let mut b = json!({"behavior": "deny", "message": message});
                if a.decision == Decision::Cancelled {
                    b["interrupt"] = json!(true);
                }
                b
            }
            Decision::DenyAlways => return self.offers(a.decision),
        };
        let ask = self.asks.remove(k);
        if let Some(t) = ask.tool_use_id {
            body["toolUseID"] = json!(t);
        }
        out.send(&json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": ask.id, "response": body}}));
        Ok(())
    }

    fn interrupt(&mut self, out: &mut Outbox) -> Result<(), String> {
        self.control(json!({"subtype": "interrupt"}), out);
        Ok(())
    }

    fn set_model(&mut self, model: &str, out: &mut Outbox) -> Result<(), String> {
        self.control(json!({"subtype": "set_model", "model": model}), out);
        Ok(())
    }

    fn set_permission_mode(&mut self, mode: &str, out: &mut Outbox) -> Result<(), String> {
        self.control(json!({"subtype": "set_permission_mode", "mode": mode}), out);
        Ok(())
    }

    fn set_reasoning_effort(&mut self, _: &str, _: &mut Outbox) -> Result<(), String> {
        Err("Claude Code has no reasoning-effort control".into())
    }
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".into()).expect("{} is JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_sdk_s_command_line_and_not_the_one_shot_one() {
        assert!(recognizes(&v(&["/x/bin/claude"])));
        assert!(recognizes(&v(&["claude", "--model", "m"])));
        assert!(!recognizes(&v(&["claude", "-p", "hi"])));
        assert!(recognizes(&v(&[
            "claude",
            "-p",
            "--input-format",
            "stream-json"
        ])));
        assert!(!recognizes(&v(&["codex", "app-server"])));
        let mut a = v(&["--verbose"]);
        prepare(&mut a, &Options::default());
        assert_eq!(
            a.join(" "),
            "--verbose --output-format stream-json --input-format stream-json \
             --permission-prompt-tool stdio"
        );
    }

    #[test]
    fn a_permission_is_answered_in_the_sdk_s_terms() {
        let mut c = Claude::default();
        let mut out = Outbox::default();
        c.heard(r#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"a"},"permission_suggestions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}],"tool_use_id":"t1"}}"#, &mut out);
        c.heard(
            r#"{"type":"control_request","request_id":"h1","request":{"subtype":"hook_callback"}}"#,
            &mut out,
        );
        assert_eq!(out.lines.len(), 1, "the hook is answered at once");
        assert_eq!(c.pending(), vec!["r1".to_string()]);
        let a = Answer {
            decision: Decision::AllowAlways,
            updated_input: None,
            message: None,
        };
        c.answer("r1", &a, &mut out).unwrap();
        let sent: Value = serde_json::from_str(&out.lines[1]).unwrap();
        assert_eq!(
            sent["response"]["response"],
            json!({"behavior": "allow", "updatedInput": {"file_path": "a"}, "toolUseID": "t1",
                   "updatedPermissions": [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]})
        );
        assert!(c.pending().is_empty());
        assert!(c.answer("r1", &a, &mut out).is_err());
    }
}
