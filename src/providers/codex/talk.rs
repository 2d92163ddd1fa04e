//! Driving `codex app-server` (`insights run`): JSON-RPC over stdio, one object a line, the
//! `jsonrpc` member left out as Codex leaves it out.
//!
//! - The handshake: `initialize` (`clientInfo`), then the `initialized` notification and
//!   `thread/start {cwd, approvalPolicy: "untrusted"}` (`--resume ID`: `thread/resume
//!   {threadId, approvalPolicy, excludeTurns: true}` instead: the thread's own cwd, and not
//!   its turns so far, whose full history 0.169 calls deprecated). Codex 0.169 asks for approvals only when the thread
//!   sets an approval policy (its config file no longer accepts `untrusted`), so the run always
//!   sets one: what is allowed is then the commands' and `--permissions`' to decide, and every
//!   request and answer is on the wire, as with the other protocols. `set_permission_mode`
//!   changes it for the next turns.
//! - A prompt is `turn/start {threadId, input}`; the turn runs until the thread's
//!   `turn/completed` (a failed `turn/start` starts none). `set_model`,
//!   `set_reasoning_effort` and `set_permission_mode` are said with the next `turn/start`
//!   (`model`, `effort`, `approvalPolicy`/`sandboxPolicy`: "this turn and subsequent turns"),
//!   as the Codex web client says them; nothing is written when the command is read.
//! - Plan mode is a collaboration mode (`set_permission_mode` `plan`, and `default` or `code`
//!   to leave it): `collaborationMode {mode, settings: {model, reasoning_effort,
//!   developer_instructions: null}}` on the next `turn/start`, where a null
//!   `developer_instructions` takes Codex's own for the mode. 0.169 accepts it only from a
//!   client that declared `capabilities.experimentalApi` at `initialize`, so this client does.
//! - `interrupt` is `turn/interrupt {threadId, turnId}`, once the turn has started: the
//!   `turn/start` answer names the turn before it is active, and Codex refuses to interrupt it
//!   then ("no active turn to interrupt"); an interrupt that comes earlier is sent at the
//!   thread's `turn/started`.
//! - Server requests that wait for an answer (their JSON-RPC id, as text, is the
//!   `permission_request` event's `requestId`, as the converter writes it):
//!   `item/commandExecution/requestApproval` and `item/fileChange/requestApproval` are
//!   answered `accept`, `acceptForSession`, `decline` or `cancel` (allow, allow_always, deny,
//!   cancelled); the v1 `execCommandApproval` and `applyPatchApproval` `approved`,
//!   `approved_for_session`, `denied` or `abort`. Codex has no "deny always", and its
//!   decisions carry no reason (`message` is not sent) and no changed input.
//!   `item/permissions/requestApproval` is granted the permissions it asks (for the turn;
//!   allow_always: the session) or none; `item/tool/requestUserInput` gets the command's
//!   `updatedInput` as its `answers` (none when denied); `mcpServer/elicitation/request`
//!   `accept` (`content`: the `updatedInput`), `decline` or `cancel`.
//! - Other server requests (dynamic tool calls: this client declares none; auth-token
//!   refreshes; attestation, which it did not opt into) get the JSON-RPC error -32601, "method
//!   not found": this client does not serve them.

use crate::command::{Decision, Image};
use crate::providers::jsonrpc::{Envelope, Kind};
use crate::providers::talk::{program, Answer, Options, Outbox, Speaker, Talk};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

pub static SPEAKER: Speaker = Speaker {
    protocol: "codex",
    recognizes,
    prepare,
    new,
};

/// The global options of `codex` that take a value: `app-server` is the first argument that
/// is neither an option nor such an option's value.
const VALUED: &[&str] = &[
    "-c",
    "--config",
    "--enable",
    "--disable",
    "-p",
    "--profile",
    "-m",
    "--model",
    "-C",
    "--cd",
    "-s",
    "--sandbox",
    "-a",
    "--ask-for-approval",
    "-i",
    "--image",
    "--remote",
];

/// `codex app-server` (a path to the binary or its `codex.js`; the subcommand after the
/// global options). `codex` alone is the terminal UI, `codex exec` the one-shot CLI.
fn recognizes(argv: &[String]) -> bool {
    let (prog, args) = program(argv);
    let name = prog.rsplit('/').next().unwrap_or(prog);
    if !(name == "codex" || name == "codex.js" || name.starts_with("codex-")) {
        return false;
    }
    let mut valued = false;
    for a in args {
        if valued {
            valued = false;
        } else if a.starts_with('-') {
            valued = VALUED.contains(&a.as_str());
        } else {
            return a == "app-server";
        }
    }
    false
}

/// `app-server` is recognized, not added: the command line says which Codex it runs.
fn prepare(_: &mut Vec<String>, _: &Options) {}

fn new(o: &Options) -> Box<dyn Talk> {
    Box::new(Codex {
        cwd: o.cwd.clone(),
        resume: o.resume.clone(),
        ..Codex::default()
    })
}

/// The approval policy the thread starts with, so that Codex asks.
const POLICY: &str = "untrusted";

/// The values of Codex's `AskForApproval`, of its collaboration modes (`ModeKind`, with
/// `code`, the design documents' name of `default`), and of its `SandboxMode` with the
/// `SandboxPolicy` each is (`set_permission_mode`).
const POLICIES: &[&str] = &["untrusted", "on-request", "never"];
const COLLABORATION: &[(&str, &str)] = &[
    ("plan", "plan"),
    ("default", "default"),
    ("code", "default"),
];
const SANDBOXES: &[(&str, &str)] = &[
    ("read-only", "readOnly"),
    ("workspace-write", "workspaceWrite"),
    ("danger-full-access", "dangerFullAccess"),
];

#[derive(Default)]
struct Codex {
    cwd: String,
    resume: Option<String>,
    /// The last id of this client's requests (1, 2, …).
    counter: u64,
    /// This client's requests not answered yet: id and method.
    calls: Vec<(u64, &'static str)>,
    /// The thread, once `thread/start` (or `thread/resume`) has answered.
    thread: Option<String>,
    /// The thread's model, as `thread/start` (or `thread/resume`) answered or `set_model`
    /// changed it: a collaboration mode's settings name it.
    model: Option<String>,
    /// Why there is no thread: the handshake failed. Prompts are refused with it.
    failed: Option<String>,
    /// A turn is running (from `turn/start` to the thread's `turn/completed`).
    running: bool,
    /// The running turn's id, once it has started (`turn/started`).
    turn: Option<String>,
    /// An `interrupt` came before the turn had an id.
    interrupt_due: bool,
    /// Server requests waiting for an answer, oldest first.
    asks: Vec<Ask>,
    /// What the next `turn/start` says besides the prompt.
    next: Overrides,
}

#[derive(Default)]
struct Overrides {
    model: Option<String>,
    effort: Option<String>,
    approval_policy: Option<String>,
    sandbox_policy: Option<Value>,
    /// A collaboration mode, as Codex names it (`plan`, `default`).
    collaboration: Option<&'static str>,
}

struct Ask {
    /// The JSON-RPC id as the converter writes it (`requestId`).
    key: String,
    /// The id itself, echoed in the answer.
    id: Value,
    kind: AskKind,
    /// The permissions an `item/permissions/requestApproval` asks for.
    permissions: Option<Value>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum AskKind {
    /// `item/commandExecution/requestApproval`, `item/fileChange/requestApproval`.
    Approval,
    /// `execCommandApproval`, `applyPatchApproval`.
    ApprovalV1,
    Permissions,
    UserInput,
    Elicitation,
}

/// The members of a line's `params` this client reads.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Params {
    thread_id: Option<String>,
    turn: Option<Turn>,
    /// `serverRequest/resolved`.
    request_id: Option<Value>,
    /// `item/permissions/requestApproval`.
    permissions: Option<Value>,
}

#[derive(Deserialize)]
struct Turn {
    id: Option<String>,
}

/// The members of an answer's `result` this client reads.
#[derive(Deserialize, Default)]
struct Answered {
    thread: Option<Thread>,
    model: Option<String>,
}

#[derive(Deserialize)]
struct Thread {
    id: Option<String>,
}

/// The text of an error answer: its `message`, else the error as JSON.
fn error_text(e: &RawValue) -> String {
    #[derive(Deserialize)]
    struct E {
        message: Option<String>,
    }
    match serde_json::from_str::<E>(e.get()) {
        Ok(E { message: Some(m) }) => m,
        _ => e.get().to_owned(),
    }
}

impl Codex {
    fn request(&mut self, method: &'static str, params: Value, out: &mut Outbox) {
        self.counter += 1;
        self.calls.push((self.counter, method));
        out.send(&json!({"method": method, "id": self.counter, "params": params}));
    }

    fn ours(&self, thread: Option<&str>) -> bool {
        thread.is_some() && thread == self.thread.as_deref()
    }

    fn send_interrupt(&mut self, out: &mut Outbox) {
        if let (Some(thread), Some(turn)) = (self.thread.clone(), self.turn.clone()) {
            self.interrupt_due = false;
            self.request(
                "turn/interrupt",
                json!({"threadId": thread, "turnId": turn}),
                out,
            );
        }
    }

    fn turn_ended(&mut self) {
        self.running = false;
        self.turn = None;
        self.interrupt_due = false;
        // Codex clears the requests a turn leaves unanswered.
        self.asks.clear();
    }

    /// This client's request `id` has been answered (`error`: it failed).
    fn answered(
        &mut self,
        id: &str,
        result: Option<&RawValue>,
        error: Option<&RawValue>,
        out: &mut Outbox,
    ) {
        let Some(k) = self.calls.iter().position(|(n, _)| n.to_string() == id) else {
            return;
        };
        let (_, method) = self.calls.remove(k);
        let body: Answered = result
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or_default();
        match (method, error) {
            ("initialize", None) => {
                out.send(&json!({"method": "initialized"}));
                match self.resume.clone() {
                    // Without the turns so far: 0.169 calls the full history in the answer
                    // deprecated (a `deprecationNotice`); the run goes on from there, as
                    // `claude --resume` does.
                    Some(id) => self.request(
                        "thread/resume",
                        json!({"threadId": id, "approvalPolicy": POLICY, "excludeTurns": true}),
                        out,
                    ),
                    None => {
                        let cwd = self.cwd.clone();
                        self.request(
                            "thread/start",
                            json!({"cwd": cwd, "approvalPolicy": POLICY}),
                            out,
                        )
                    }
                }
            }
            ("thread/start" | "thread/resume", None) => match body.thread.and_then(|t| t.id) {
                Some(t) => {
                    self.thread = Some(t);
                    self.model = body.model;
                }
                None => self.failed = Some(format!("{method} named no thread")),
            },
            ("initialize" | "thread/start" | "thread/resume", Some(e)) => {
                self.failed = Some(format!("Codex refused {method}: {}", error_text(e)));
            }
            // The answer names the turn before it is active: Codex refuses to interrupt it
            // then ("no active turn to interrupt"), so the turn is the one `turn/started`
            // names.
            ("turn/start", None) => {}
            // No turn started.
            ("turn/start", Some(_)) => self.turn_ended(),
            _ => {}
        }
    }

    /// A server request: kept for a command's answer, or refused at once.
    fn asked(
        &mut self,
        method: &str,
        id: &RawValue,
        key: String,
        params: Params,
        out: &mut Outbox,
    ) {
        let kind = match method {
            "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => {
                AskKind::Approval
            }
            "execCommandApproval" | "applyPatchApproval" => AskKind::ApprovalV1,
            "item/permissions/requestApproval" => AskKind::Permissions,
            "item/tool/requestUserInput" => AskKind::UserInput,
            "mcpServer/elicitation/request" => AskKind::Elicitation,
            _ => {
                let id: Value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
                out.send(&json!({"id": id, "error": {"code": -32601,
                    "message": format!("insights run does not serve {method}")}}));
                return;
            }
        };
        let id = serde_json::from_str(id.get()).unwrap_or(Value::Null);
        self.asks.push(Ask {
            key,
            id,
            kind,
            permissions: params.permissions,
        });
    }
}

impl Talk for Codex {
    fn start(&mut self, out: &mut Outbox) {
        self.request(
            "initialize",
            json!({"clientInfo": {"name": "insights", "title": "insights run",
                                  "version": env!("CARGO_PKG_VERSION")},
                   "capabilities": {"experimentalApi": true}}),
            out,
        );
    }

    fn heard(&mut self, line: &str, out: &mut Outbox) {
        let Ok(env) = serde_json::from_str::<Envelope>(line) else {
            return;
        };
        let params = || -> Params {
            env.params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or_default()
        };
        match env.kind() {
            Some(Kind::Response | Kind::ErrorResponse) => {
                let id = env.id_text().into_owned();
                self.answered(&id, env.result, env.error, out);
            }
            Some(Kind::Request) => {
                let (Some(method), Some(id)) = (env.method.as_deref(), env.id) else {
                    return;
                };
                self.asked(method, id, env.id_text().into_owned(), params(), out);
            }
            Some(Kind::Notification) => match env.method.as_deref() {
                Some("turn/started") => {
                    let p = params();
                    if self.ours(p.thread_id.as_deref()) && self.running && self.turn.is_none() {
                        self.turn = p.turn.and_then(|t| t.id);
                        if self.interrupt_due {
                            self.send_interrupt(out);
                        }
                    }
                }
                Some("turn/completed") => {
                    if self.ours(params().thread_id.as_deref()) {
                        self.turn_ended();
                    }
                }
                Some("serverRequest/resolved") => {
                    let key = params().request_id.map(|r| match r {
                        Value::String(s) => s,
                        v => v.to_string(),
                    });
                    if let Some(key) = key {
                        self.asks.retain(|a| a.key != key);
                    }
                }
                _ => {}
            },
            None => {}
        }
    }

    fn idle(&self) -> bool {
        (self.thread.is_some() || self.failed.is_some()) && !self.running
    }

    fn busy(&self) -> bool {
        self.running
    }

    fn session(&self) -> Option<&str> {
        self.thread.as_deref()
    }

    fn pending(&self) -> Vec<String> {
        self.asks.iter().map(|a| a.key.clone()).collect()
    }

    fn prompt(&mut self, text: &str, images: &[Image], out: &mut Outbox) -> Result<(), String> {
        let Some(thread) = self.thread.clone() else {
            return Err(self
                .failed
                .clone()
                .unwrap_or_else(|| "Codex has no thread yet".into()));
        };
        let mut input: Vec<Value> = images
            .iter()
            .map(|i| json!({"type": "image", "url": format!("data:{};base64,{}", i.media_type, i.data)}))
            .collect();
        if !text.is_empty() {
            input.push(json!({"type": "text", "text": text, "text_elements": []}));
        }
        let mut params = json!({"threadId": thread, "input": input});
        if let (Some(mode), None) = (
            self.next.collaboration,
            self.model.as_ref().or(self.next.model.as_ref()),
        ) {
            return Err(format!(
                "Codex named no model for its thread, and collaboration mode `{mode}` must name one: \
                 set_model first"
            ));
        }
        let next = std::mem::take(&mut self.next);
        if let Some(mode) = next.collaboration {
            let model = next.model.as_ref().or(self.model.as_ref());
            params["collaborationMode"] = json!({"mode": mode, "settings": {
                "model": model, "reasoning_effort": next.effort, "developer_instructions": null}});
        }
        if let Some(m) = next.model {
            self.model = Some(m.clone());
            params["model"] = json!(m);
        }
        if let Some(e) = next.effort {
            params["effort"] = json!(e);
        }
        if let Some(p) = next.approval_policy {
            params["approvalPolicy"] = json!(p);
        }
        if let Some(s) = next.sandbox_policy {
            params["sandboxPolicy"] = s;
        }
        self.request("turn/start", params, out);
        self.running = true;
        self.turn = None;
        Ok(())
    }

    fn offers(&self, decision: Decision) -> Result<(), String> {
        match decision {
            Decision::DenyAlways => Err("Codex offers no `deny_always` (deny, or cancelled to \
                                         also stop the turn)"
                .into()),
            _ => Ok(()),
        }
    }

    fn answer(&mut self, request: &str, a: &Answer, out: &mut Outbox) -> Result<(), String> {
        self.offers(a.decision)?;
        let Some(k) = self.asks.iter().position(|x| x.key == request) else {
            return Err(format!("no permission request `{request}` is waiting"));
        };
        let ask = &self.asks[k];
        let updated: Option<Value> = match a.updated_input {
            Some(t) => Some(serde_json::from_str(t).map_err(|e| format!("updatedInput: {e}"))?),
            None => None,
        };
        let allows = a.decision.allows();
        let result = match ask.kind {
            AskKind::Approval | AskKind::ApprovalV1 => {
                if updated.is_some() {
                    return Err("Codex cannot run a changed input: its approvals take no \
                                `updatedInput`"
                        .into());
                }
                let v1 = ask.kind == AskKind::ApprovalV1;
                let word = match a.decision {
                    Decision::Allow if v1 => "approved",
                    Decision::AllowAlways if v1 => "approved_for_session",
                    Decision::Cancelled if v1 => "abort",
                    _ if v1 => "denied",
                    Decision::Allow => "accept",
                    Decision::AllowAlways => "acceptForSession",
                    Decision::Cancelled => "cancel",
                    _ => "decline",
                };
                json!({"decision": word})
            }
            AskKind::Permissions => {
                let granted = match (allows, updated, &ask.permissions) {
                    (true, Some(u), _) => u,
                    (true, None, Some(p)) => p.clone(),
                    _ => json!({}),
                };
                let scope = if a.decision == Decision::AllowAlways {
                    "session"
                } else {
                    "turn"
                };
                json!({"permissions": granted, "scope": scope})
            }
            AskKind::UserInput => {
                json!({"answers": updated.filter(|_| allows).unwrap_or_else(|| json!({}))})
            }
            AskKind::Elicitation => match a.decision {
                Decision::Cancelled => json!({"action": "cancel"}),
                _ if allows => json!({"action": "accept", "content": updated}),
                _ => json!({"action": "decline"}),
            },
        };
        let ask = self.asks.remove(k);
        out.send(&json!({"id": ask.id, "result": result}));
        Ok(())
    }

    fn interrupt(&mut self, out: &mut Outbox) -> Result<(), String> {
        if !self.running {
            return Err("no turn is running".into());
        }
        if self.turn.is_some() {
            self.send_interrupt(out);
        } else {
            // Sent once `turn/start`'s answer or `turn/started` names the turn.
            self.interrupt_due = true;
        }
        Ok(())
    }

    fn set_model(&mut self, model: &str, _: &mut Outbox) -> Result<(), String> {
        self.next.model = Some(model.to_owned());
        Ok(())
    }

    fn set_permission_mode(&mut self, mode: &str, _: &mut Outbox) -> Result<(), String> {
        if POLICIES.contains(&mode) {
            self.next.approval_policy = Some(mode.to_owned());
        } else if let Some((_, kind)) = COLLABORATION.iter().find(|(m, _)| *m == mode) {
            self.next.collaboration = Some(kind);
        } else if let Some((_, ty)) = SANDBOXES.iter().find(|(m, _)| *m == mode) {
            self.next.sandbox_policy = Some(json!({"type": ty}));
        } else {
            let sandboxes: Vec<&str> = SANDBOXES.iter().map(|(m, _)| *m).collect();
            let collaboration: Vec<&str> = COLLABORATION.iter().map(|(m, _)| *m).collect();
            return Err(format!(
                "Codex has no mode `{mode}`: its modes are its approval policies ({}), \
                 collaboration modes ({}) and sandboxes ({})",
                POLICIES.join(", "),
                collaboration.join(", "),
                sandboxes.join(", ")
            ));
        }
        Ok(())
    }

    fn set_reasoning_effort(&mut self, effort: &str, _: &mut Outbox) -> Result<(), String> {
        self.next.effort = Some(effort.to_owned());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    fn sent(out: &Outbox, i: usize) -> Value {
        serde_json::from_str(&out.lines[i]).unwrap()
    }

    /// A talk past its handshake, on thread `t1`.
    fn started() -> (Codex, Outbox) {
        let mut c = Codex {
            cwd: "/w".into(),
            ..Codex::default()
        };
        let mut out = Outbox::default();
        c.start(&mut out);
        c.heard(r#"{"id":1,"result":{"userAgent":"x"}}"#, &mut out);
        c.heard(
            r#"{"id":2,"result":{"thread":{"id":"t1"},"model":"m","approvalPolicy":"untrusted"}}"#,
            &mut out,
        );
        (c, out)
    }

    #[test]
    fn the_app_server_s_command_line() {
        assert!(recognizes(&v(&["codex", "app-server"])));
        assert!(recognizes(&v(&[
            "/x/bin/codex",
            "-c",
            "model=m",
            "app-server"
        ])));
        assert!(recognizes(&v(&[
            "node",
            "/x/codex/bin/codex.js",
            "app-server"
        ])));
        assert!(!recognizes(&v(&["codex", "exec", "app-server"])));
        assert!(!recognizes(&v(&["codex"])));
        assert!(!recognizes(&v(&["claude", "app-server"])));
        let mut a = v(&["app-server"]);
        prepare(&mut a, &Options::default());
        assert_eq!(a, v(&["app-server"]));
    }

    #[test]
    fn plan_mode_is_a_collaboration_mode_on_the_next_turn() {
        let (mut c, mut out) = started();
        assert_eq!(
            sent(&out, 0)["params"]["capabilities"],
            json!({"experimentalApi": true}),
            "0.169 takes collaborationMode only from an experimental client"
        );
        c.set_permission_mode("plan", &mut out).unwrap();
        c.prompt("plan it", &[], &mut out).unwrap();
        assert_eq!(
            sent(&out, 3)["params"]["collaborationMode"],
            json!({"mode": "plan", "settings": {"model": "m", "reasoning_effort": null,
                   "developer_instructions": null}})
        );
        c.heard(
            r#"{"method":"turn/completed","params":{"threadId":"t1","turn":{"id":"u1"}}}"#,
            &mut out,
        );
        // `code`, the design documents' word, is Codex's `default`; a new model is named.
        c.set_permission_mode("code", &mut out).unwrap();
        c.set_model("m2", &mut out).unwrap();
        c.set_reasoning_effort("high", &mut out).unwrap();
        c.prompt("do it", &[], &mut out).unwrap();
        let p = sent(&out, 4)["params"].clone();
        assert_eq!(
            p["collaborationMode"],
            json!({"mode": "default", "settings": {"model": "m2", "reasoning_effort": "high",
                   "developer_instructions": null}})
        );
        assert_eq!(
            (p["model"].clone(), p["effort"].clone()),
            (json!("m2"), json!("high"))
        );
        c.heard(
            r#"{"method":"turn/completed","params":{"threadId":"t1","turn":{"id":"u2"}}}"#,
            &mut out,
        );
        c.prompt("again", &[], &mut out).unwrap();
        assert!(
            sent(&out, 5)["params"].get("collaborationMode").is_none(),
            "said once"
        );
    }

    #[test]
    fn the_handshake_then_a_turn() {
        let (mut c, mut out) = started();
        assert_eq!(sent(&out, 0)["method"], "initialize");
        assert_eq!(sent(&out, 1), json!({"method": "initialized"}));
        assert_eq!(
            sent(&out, 2)["params"],
            json!({"cwd": "/w", "approvalPolicy": "untrusted"})
        );
        assert!(c.idle());
        assert_eq!(c.session(), Some("t1"));
        c.set_model("gpt-x", &mut out).unwrap();
        c.set_reasoning_effort("low", &mut out).unwrap();
        c.set_permission_mode("never", &mut out).unwrap();
        assert!(c.set_permission_mode("review", &mut out).is_err());
        assert_eq!(out.lines.len(), 3, "the overrides wait for the next turn");
        c.prompt("hi", &[], &mut out).unwrap();
        assert_eq!(
            sent(&out, 3)["params"],
            json!({"threadId": "t1", "model": "gpt-x", "effort": "low",
                   "approvalPolicy": "never",
                   "input": [{"type": "text", "text": "hi", "text_elements": []}]})
        );
        assert!(c.busy() && !c.idle());
        // An interrupt before the turn has an id waits for it.
        c.interrupt(&mut out).unwrap();
        assert_eq!(out.lines.len(), 4);
        // The answer names the turn before it is active: not yet.
        c.heard(
            r#"{"id":3,"result":{"turn":{"id":"u1","status":"inProgress"}}}"#,
            &mut out,
        );
        assert_eq!(out.lines.len(), 4);
        c.heard(
            r#"{"method":"turn/started","params":{"threadId":"t1","turn":{"id":"u1"}}}"#,
            &mut out,
        );
        assert_eq!(
            sent(&out, 4),
            json!({"method": "turn/interrupt", "id": 4, "params": {"threadId": "t1", "turnId": "u1"}})
        );
        // Another thread's turn (a subagent's) is not ours.
        c.heard(
            r#"{"method":"turn/completed","params":{"threadId":"t2","turn":{"id":"u9"}}}"#,
            &mut out,
        );
        assert!(c.busy());
        c.heard(r#"{"method":"turn/completed","params":{"threadId":"t1","turn":{"id":"u1","status":"interrupted"}}}"#, &mut out);
        assert!(c.idle());
        assert!(c.interrupt(&mut out).is_err());
        c.prompt("again", &[], &mut out).unwrap();
        assert_eq!(sent(&out, 5)["params"].get("model"), None);
        // A refused turn/start starts no turn.
        c.heard(
            r#"{"id":5,"error":{"code":-32600,"message":"bad"}}"#,
            &mut out,
        );
        assert!(c.idle());
    }

    #[test]
    fn a_failed_handshake_refuses_prompts() {
        let mut c = Codex::default();
        let mut out = Outbox::default();
        c.start(&mut out);
        c.heard(
            r#"{"id":1,"error":{"code":-32600,"message":"nope"}}"#,
            &mut out,
        );
        assert!(c.idle());
        let e = c.prompt("hi", &[], &mut out).unwrap_err();
        assert!(e.contains("nope"), "{e}");
    }

    #[test]
    fn resume_is_thread_resume() {
        let mut c = Codex {
            resume: Some("t0".into()),
            ..Codex::default()
        };
        let mut out = Outbox::default();
        c.start(&mut out);
        c.heard(r#"{"id":1,"result":{}}"#, &mut out);
        assert_eq!(
            sent(&out, 2),
            json!({"method": "thread/resume", "id": 2,
                   "params": {"threadId": "t0", "approvalPolicy": "untrusted",
                              "excludeTurns": true}})
        );
    }

    /// The requests are kept by the id the converter gives their `permission_request`
    /// ([`Envelope::id_text`]) and answered with the id as Codex sent it.
    #[test]
    fn approvals_are_answered_in_codex_s_terms() {
        let (mut c, mut out) = started();
        let n = out.lines.len();
        c.heard(r#"{"method":"item/fileChange/requestApproval","id":0,"params":{"threadId":"t1","turnId":"u1","itemId":"call_1"}}"#, &mut out);
        c.heard(r#"{"method":"execCommandApproval","id":"v1","params":{"conversationId":"t1","callId":"c2","command":["ls"]}}"#, &mut out);
        c.heard(r#"{"method":"item/permissions/requestApproval","id":7,"params":{"threadId":"t1","turnId":"u1","itemId":"c3","permissions":{"network":{"enabled":true}}}}"#, &mut out);
        c.heard(r#"{"method":"item/tool/call","id":8,"params":{"threadId":"t1","callId":"c4","tool":"x"}}"#, &mut out);
        assert_eq!(
            sent(&out, n)["error"]["code"],
            -32601,
            "a dynamic tool call is refused"
        );
        assert_eq!(c.pending(), v(&["0", "v1", "7"]));
        let a = |decision| Answer {
            decision,
            updated_input: None,
            message: Some("why"),
        };
        assert!(c.answer("0", &a(Decision::DenyAlways), &mut out).is_err());
        c.answer("0", &a(Decision::AllowAlways), &mut out).unwrap();
        c.answer("v1", &a(Decision::Deny), &mut out).unwrap();
        c.answer("7", &a(Decision::Allow), &mut out).unwrap();
        assert_eq!(
            sent(&out, n + 1),
            json!({"id": 0, "result": {"decision": "acceptForSession"}})
        );
        assert_eq!(
            sent(&out, n + 2),
            json!({"id": "v1", "result": {"decision": "denied"}})
        );
        assert_eq!(
            sent(&out, n + 3),
            json!({"id": 7, "result": {"permissions": {"network": {"enabled": true}}, "scope": "turn"}})
        );
        assert!(c.pending().is_empty());
        // A request Codex resolved itself (the turn ended) is not waiting any more.
        c.heard(r#"{"method":"item/commandExecution/requestApproval","id":9,"params":{"threadId":"t1"}}"#, &mut out);
        c.heard(
            r#"{"method":"serverRequest/resolved","params":{"threadId":"t1","requestId":9}}"#,
            &mut out,
        );
        assert!(c.pending().is_empty());
    }
}
