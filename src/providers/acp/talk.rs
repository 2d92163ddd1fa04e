//! Driving an ACP agent (`insights run`): the Agent Client Protocol, JSON-RPC 2.0 one line each
//! way (schema v1; checked against Gemini CLI 0.61.0 `--acp` and claude-agent-acp 0.49.0).
//!
//! - `initialize` first (protocol 1, no client `fs` and no `terminal`: this client serves
//!   neither, so the agent reads and writes files and runs commands itself), then `session/new`
//!   `{cwd, mcpServers: []}`, or `session/load` `{sessionId, cwd, mcpServers}` for `--resume`
//!   when the `initialize` answer says `loadSession`. When opening the session fails with
//!   ACP's "Authentication required" (-32000) and the agent listed `authMethods`,
//!   `authenticate` with the first one, then open it again, once. Only then: Gemini CLI lists
//!   `oauth-personal` first, and authenticating with it starts an interactive login that
//!   writes to the agent's standard output and reads its input (seen on the wire after a
//!   failed `session/load`).
//! - A prompt is `session/prompt` `{sessionId, prompt: [text, images]}`; the turn runs until
//!   its answer (`stopReason`, or an error).
//! - The agent's `session/request_permission` is a permission request (its JSON-RPC id is the
//!   event's `requestId`), answered with the option whose `kind` matches the decision
//!   (`allow_once`, `allow_always`, `reject_once`, `reject_always`), or the outcome `cancelled`.
//!   A request that offers no option of that kind is not answered. ACP cannot change a tool's
//!   input, nor carry a denial's reason: `updatedInput` is refused, `message` is not sent.
//!   Every other request of the agent's gets the JSON-RPC error -32601 (method not found).
//! - `interrupt` is the `session/cancel` notification, and (as the protocol requires of a
//!   client that cancels) the outcome `cancelled` for every request still waiting.
//! - `set_permission_mode` is `session/set_mode` when the session lists `modes`, else
//!   `session/set_config_option` on its option of category `mode`. `set_model` is
//!   `session/set_config_option` on the option of category `model` (claude-agent-acp), else the
//!   older unstable `session/set_model` when the session lists `models` (Gemini CLI).
//!   `set_reasoning_effort` is `session/set_config_option` on the option of category
//!   `thought_level` (claude-agent-acp's `effort`); an agent that lists none cannot do it. The
//!   agent's refusal of a value is its error answer, an `error` event from the converter. A
//!   prompt waits for these answers, so it runs with the setting.
//! - A handshake the agent refuses (or `--resume` without `loadSession`) leaves no session:
//!   every later command is refused with the reason.

use crate::command::{Decision, Image};
use crate::providers::jsonrpc::{Envelope, Kind, RpcError};
use crate::providers::talk::{has_flag, program, Answer, Options, Outbox, Speaker, Talk};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;

pub static SPEAKER: Speaker = Speaker {
    protocol: "acp",
    recognizes,
    prepare,
    new,
};

/// An ACP agent's command line: the `--acp` or `--experimental-acp` flag (Gemini CLI, Qwen
/// Code), or a program or script whose path has `acp` as a word (`claude-agent-acp`,
/// `codex-acp`, `…/claude-agent-acp/dist/index.js`).
fn recognizes(argv: &[String]) -> bool {
    let (prog, args) = program(argv);
    has_flag(args, "--acp")
        || has_flag(args, "--experimental-acp")
        || prog.split('/').any(|part| {
            part.split(['-', '_', '.'])
                .any(|w| w.eq_ignore_ascii_case("acp"))
        })
}

/// ACP needs no arguments: the agent speaks it on its standard streams.
fn prepare(_: &mut Vec<String>, _: &Options) {}

fn new(o: &Options) -> Box<dyn Talk> {
    Box::new(Acp {
        cwd: o.cwd.clone(),
        resume: o.resume.clone(),
        ..Acp::default()
    })
}

/// ACP's error code "Authentication required".
const AUTH_REQUIRED: i64 = -32000;

/// One of our requests, until the agent answers it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sent {
    Initialize,
    Authenticate,
    /// `session/new` or `session/load`.
    Open,
    Prompt,
    /// `session/set_mode`, `session/set_config_option`, `session/set_model`.
    Setting,
}

/// A `session/request_permission` waiting for its answer.
#[derive(Debug)]
struct Ask {
    /// The JSON-RPC id as written, echoed in the answer.
    id: Value,
    /// The id as the `permission_request` event's `requestId` says it.
    text: String,
    /// `(optionId, kind)` of each option offered.
    options: Vec<(String, String)>,
}

#[derive(Default)]
struct Acp {
    cwd: String,
    resume: Option<String>,
    /// The last id of ours.
    counter: u64,
    sent: HashMap<u64, Sent>,
    /// From the `initialize` answer.
    load_session: bool,
    images: bool,
    auth_methods: Vec<String>,
    authenticated: bool,
    session: Option<String>,
    /// Why there is no session and will be none.
    broken: Option<String>,
    /// The session lists `modes` / `models` (the unstable list `session/set_model` chooses from).
    modes: bool,
    models: bool,
    /// The session's config options: `(category, id)`.
    config: Vec<(String, String)>,
    /// The running prompt's request id.
    prompt: Option<u64>,
    asks: Vec<Ask>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct InitResult {
    agent_capabilities: Option<AgentCapabilities>,
    auth_methods: Option<Vec<AuthMethod>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct AgentCapabilities {
    load_session: Option<bool>,
    prompt_capabilities: Option<PromptCapabilities>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PromptCapabilities {
    image: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AuthMethod {
    id: Option<String>,
}

/// The answer to `session/new` or `session/load`, and the members of others that say the
/// session's settings (`session/set_config_option`'s answer, `config_option_update`).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Settings {
    session_id: Option<String>,
    modes: Option<IgnoredAny>,
    models: Option<IgnoredAny>,
    config_options: Option<Vec<ConfigOption>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ConfigOption {
    id: Option<String>,
    category: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Permission {
    options: Option<Vec<PermissionOption>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct PermissionOption {
    option_id: Option<String>,
    kind: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct UpdateParams {
    update: Option<Settings>,
}

/// The option kind a decision picks.
fn kind_of(d: Decision) -> Option<&'static str> {
    match d {
        Decision::Allow => Some("allow_once"),
        Decision::AllowAlways => Some("allow_always"),
        Decision::Deny => Some("reject_once"),
        Decision::DenyAlways => Some("reject_always"),
        Decision::Cancelled => None,
    }
}

impl Acp {
    fn request(&mut self, method: &str, params: Value, what: Sent, out: &mut Outbox) -> u64 {
        self.counter += 1;
        let id = self.counter;
        self.sent.insert(id, what);
        out.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// `session/new`, or `session/load` for `--resume`.
    fn open(&mut self, out: &mut Outbox) {
        let cwd = self.cwd.clone();
        match self.resume.clone() {
            Some(id) if self.load_session => {
                let p = json!({"sessionId": id, "cwd": cwd, "mcpServers": []});
                self.request("session/load", p, Sent::Open, out);
            }
            Some(_) => {
                self.broken = Some(
                    "--resume needs `session/load`, which this agent does not offer \
                     (its initialize answer has no loadSession)"
                        .into(),
                )
            }
            None => {
                let p = json!({"cwd": cwd, "mcpServers": []});
                self.request("session/new", p, Sent::Open, out);
            }
        }
    }

    fn settings(&mut self, s: &Settings) {
        if let Some(list) = &s.config_options {
            self.config = list
                .iter()
                .filter_map(|o| Some((o.category.clone()?, o.id.clone()?)))
                .collect();
        }
    }

    /// The id of the session's config option of `category`.
    fn option(&self, category: &str) -> Option<String> {
        self.config
            .iter()
            .find(|(c, _)| c == category)
            .map(|(_, id)| id.clone())
    }

    /// The session, or why there is none.
    fn need_session(&self) -> Result<String, String> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        self.session
            .clone()
            .ok_or_else(|| "the agent has no session yet".into())
    }

    /// A request that changes a setting of the session.
    fn setting(&mut self, method: &str, mut params: Value, out: &mut Outbox) -> Result<(), String> {
        params["sessionId"] = json!(self.need_session()?);
        self.request(method, params, Sent::Setting, out);
        Ok(())
    }

    fn config_option(
        &mut self,
        category: &str,
        value: &str,
        out: &mut Outbox,
    ) -> Option<Result<(), String>> {
        let id = self.option(category)?;
        Some(self.setting(
            "session/set_config_option",
            json!({"configId": id, "value": value}),
            out,
        ))
    }

    /// The agent's answer to one of our requests.
    fn answered(&mut self, env: &Envelope) -> Option<String> {
        let id: u64 = env.id.and_then(|r| r.get().parse().ok())?;
        let what = self.sent.remove(&id)?;
        let error = env.error.map(|e| {
            let read = serde_json::from_str::<RpcError>(e.get()).ok();
            let code = read.as_ref().and_then(|r| r.code);
            let data = read
                .as_ref()
                .and_then(|r| r.data)
                .map(|d| d.get().to_owned());
            let message = match (read.and_then(|r| r.message.0), data) {
                (Some(m), Some(d)) => format!("{m} {d}"),
                (Some(m), None) => m.into_owned(),
                (None, _) => e.get().to_owned(),
            };
            (code, message)
        });
        let result = env.result.map(|r| r.get()).unwrap_or("null");
        match (what, error) {
            (Sent::Initialize, None) => {
                let r: InitResult = serde_json::from_str(result).unwrap_or_default();
                let caps = r.agent_capabilities.unwrap_or_default();
                self.load_session = caps.load_session == Some(true);
                self.images = caps.prompt_capabilities.and_then(|p| p.image) == Some(true);
                self.auth_methods = r
                    .auth_methods
                    .into_iter()
                    .flatten()
                    .filter_map(|m| m.id)
                    .collect();
                Some("open".into())
            }
            (Sent::Initialize, Some((_, e))) => {
                self.broken = Some(format!("the agent refused `initialize`: {e}"));
                None
            }
            (Sent::Authenticate, None) => Some("open".into()),
            (Sent::Authenticate, Some((_, e))) => {
                self.broken = Some(format!("the agent refused `authenticate`: {e}"));
                None
            }
            (Sent::Open, None) => {
                let s: Settings = serde_json::from_str(result).unwrap_or_default();
                self.session = s.session_id.clone().or_else(|| self.resume.clone());
                self.modes = s.modes.is_some();
                self.models = s.models.is_some();
                self.settings(&s);
                None
            }
            (Sent::Open, Some((Some(AUTH_REQUIRED), _)))
                if !self.authenticated && !self.auth_methods.is_empty() =>
            {
                self.authenticated = true;
                Some("authenticate".into())
            }
            (Sent::Open, Some((_, e))) => {
                self.broken = Some(format!("the agent could not open a session: {e}"));
                None
            }
            (Sent::Prompt, _) => {
                if self.prompt == Some(id) {
                    self.prompt = None;
                    // A request the turn left unanswered is not asked any more.
                    self.asks.clear();
                }
                None
            }
            (Sent::Setting, None) => {
                if let Ok(s) = serde_json::from_str::<Settings>(result) {
                    self.settings(&s);
                }
                None
            }
            (Sent::Setting, Some(_)) => None,
        }
    }
}

impl Talk for Acp {
    fn start(&mut self, out: &mut Outbox) {
        let params = json!({
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": false, "writeTextFile": false},
                "terminal": false
            },
            "clientInfo": {"name": "insights", "title": "insights run",
                           "version": env!("CARGO_PKG_VERSION")}
        });
        self.request("initialize", params, Sent::Initialize, out);
    }

    fn heard(&mut self, line: &str, out: &mut Outbox) {
        let Ok(env) = serde_json::from_str::<Envelope>(line) else {
            return;
        };
        match env.kind() {
            Some(Kind::Request) => {
                let id: Value = env
                    .id
                    .and_then(|r| serde_json::from_str(r.get()).ok())
                    .unwrap_or(Value::Null);
                let method = env.method.as_deref().unwrap_or_default();
                if method == "session/request_permission" {
                    let p: Permission = env
                        .params
                        .and_then(|p| serde_json::from_str(p.get()).ok())
                        .unwrap_or_default();
                    let options = p
                        .options
                        .into_iter()
                        .flatten()
                        .filter_map(|o| Some((o.option_id?, o.kind.unwrap_or_default())))
                        .collect();
                    let text = env.id_text().into_owned();
                    self.asks.push(Ask { id, text, options });
                } else {
                    out.send(&json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32601, "message": "Method not found",
                        "data": {"method": method}}}));
                }
            }
            Some(Kind::Notification) => {
                // The session's options change (claude-agent-acp, after a model or mode
                // change); only those lines are read further.
                if let Some(p) = env
                    .params
                    .filter(|p| p.get().contains("\"config_option_update\""))
                {
                    if let Ok(UpdateParams { update: Some(s) }) = serde_json::from_str(p.get()) {
                        self.settings(&s);
                    }
                }
            }
            Some(Kind::Response | Kind::ErrorResponse) => match self.answered(&env).as_deref() {
                Some("open") => self.open(out),
                Some("authenticate") => {
                    let m = json!({"methodId": self.auth_methods[0]});
                    self.request("authenticate", m, Sent::Authenticate, out);
                }
                _ => {}
            },
            None => {}
        }
    }

    fn idle(&self) -> bool {
        if self.broken.is_some() {
            // Nothing will run: each command is refused with the reason.
            return true;
        }
        self.session.is_some()
            && self.prompt.is_none()
            && !self.sent.values().any(|s| *s == Sent::Setting)
    }

    fn busy(&self) -> bool {
        self.prompt.is_some()
    }

    fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    fn pending(&self) -> Vec<String> {
        self.asks.iter().map(|a| a.text.clone()).collect()
    }

    fn prompt(&mut self, text: &str, images: &[Image], out: &mut Outbox) -> Result<(), String> {
        let session = self.need_session()?;
        if !images.is_empty() && !self.images {
            return Err("this agent takes no images (its promptCapabilities has no image)".into());
        }
        let mut prompt: Vec<Value> = Vec::with_capacity(images.len() + 1);
        if !text.is_empty() {
            prompt.push(json!({"type": "text", "text": text}));
        }
        prompt.extend(
            images
                .iter()
                .map(|i| json!({"type": "image", "mimeType": i.media_type, "data": i.data})),
        );
        let p = json!({"sessionId": session, "prompt": prompt});
        let id = self.request("session/prompt", p, Sent::Prompt, out);
        self.prompt = Some(id);
        Ok(())
    }

    fn answer(&mut self, request: &str, a: &Answer, out: &mut Outbox) -> Result<(), String> {
        let Some(k) = self.asks.iter().position(|x| x.text == request) else {
            return Err(format!("no permission request `{request}` is waiting"));
        };
        if a.updated_input.is_some() {
            return Err("ACP has no way to change a tool's input (`updatedInput`)".into());
        }
        let outcome = match kind_of(a.decision) {
            None => json!({"outcome": "cancelled"}),
            Some(kind) => {
                let options = &self.asks[k].options;
                let Some((option, _)) = options.iter().find(|(_, k)| k == kind) else {
                    let kinds: Vec<&str> = options.iter().map(|(_, k)| k.as_str()).collect();
                    return Err(format!(
                        "this request offers no `{kind}` option (it offers: {})",
                        kinds.join(", ")
                    ));
                };
                json!({"outcome": "selected", "optionId": option})
            }
        };
        let ask = self.asks.remove(k);
        out.send(&json!({"jsonrpc": "2.0", "id": ask.id, "result": {"outcome": outcome}}));
        Ok(())
    }

    fn interrupt(&mut self, out: &mut Outbox) -> Result<(), String> {
        let session = self.need_session()?;
        if self.prompt.is_none() {
            return Err("no turn is running".into());
        }
        out.send(&json!({"jsonrpc": "2.0", "method": "session/cancel",
                         "params": {"sessionId": session}}));
        // "When a client sends session/cancel, it MUST respond to all pending
        // session/request_permission requests with the Cancelled outcome."
        for ask in self.asks.drain(..) {
            out.send(&json!({"jsonrpc": "2.0", "id": ask.id,
                             "result": {"outcome": {"outcome": "cancelled"}}}));
        }
        Ok(())
    }

    fn set_model(&mut self, model: &str, out: &mut Outbox) -> Result<(), String> {
        self.need_session()?;
        if let Some(r) = self.config_option("model", model, out) {
            return r;
        }
        if !self.models {
            return Err(
                "this agent lists no models (no `models`, no config option of category `model`)"
                    .into(),
            );
        }
        self.setting("session/set_model", json!({"modelId": model}), out)
    }

    fn set_permission_mode(&mut self, mode: &str, out: &mut Outbox) -> Result<(), String> {
        self.need_session()?;
        if self.modes {
            return self.setting("session/set_mode", json!({"modeId": mode}), out);
        }
        self.config_option("mode", mode, out).unwrap_or_else(|| {
            Err(
                "this agent lists no modes (no `modes`, no config option of category `mode`)"
                    .into(),
            )
        })
    }

    fn set_reasoning_effort(&mut self, effort: &str, out: &mut Outbox) -> Result<(), String> {
        self.need_session()?;
        self.config_option("thought_level", effort, out)
            .unwrap_or_else(|| {
                Err("this agent lists no reasoning-effort option \
                     (no config option of category `thought_level`)"
                    .into())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    fn sent(out: &Outbox, k: usize) -> Value {
        serde_json::from_str(&out.lines[k]).unwrap()
    }

    /// A talk past its handshake, with the answers of `testdata/acp-claude/write-allowed.jsonl`
    /// (lines 2 and 4, shortened).
    fn claude() -> (Acp, Outbox) {
        let mut t = Acp {
            cwd: "/w".into(),
            ..Acp::default()
        };
        let mut out = Outbox::default();
        t.start(&mut out);
        t.heard(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"promptCapabilities":{"image":true},"loadSession":true},"authMethods":[]}}"#, &mut out);
        t.heard(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"currentModeId":"default","availableModes":[]},"configOptions":[{"id":"mode","category":"mode","type":"select","currentValue":"default","options":[]},{"id":"model","category":"model","type":"select","currentValue":"default","options":[]},{"id":"effort","category":"thought_level","type":"select","currentValue":"default","options":[]}]}}"#, &mut out);
        (t, out)
    }

    #[test]
    fn an_acp_agent_s_command_line() {
        assert!(recognizes(&v(&["/x/bin/gemini", "--acp"])));
        assert!(recognizes(&v(&["qwen", "--experimental-acp"])));
        assert!(recognizes(&v(&[
            "/usr/bin/node",
            "/c/claude-agent-acp/dist/index.js"
        ])));
        assert!(recognizes(&v(&["codex-acp"])));
        assert!(!recognizes(&v(&["/home/jacpot/bin/claude"])));
        assert!(!recognizes(&v(&["gemini", "-p", "fix the acp bug"])));
        assert!(!recognizes(&v(&["codex", "app-server"])));
    }

    #[test]
    fn the_handshake_advertises_no_client_fs_and_opens_a_session() {
        let (t, out) = claude();
        let init = sent(&out, 0);
        assert_eq!(init["method"], "initialize");
        assert_eq!(init["params"]["protocolVersion"], 1);
        assert_eq!(
            init["params"]["clientCapabilities"],
            json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false})
        );
        assert_eq!(
            sent(&out, 1),
            json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                   "params": {"cwd": "/w", "mcpServers": []}})
        );
        assert!(t.idle());
        assert_eq!(t.session(), Some("s1"));
    }

    #[test]
    fn a_refused_session_authenticates_once_then_gives_up() {
        let mut t = Acp::default();
        let mut out = Outbox::default();
        t.start(&mut out);
        t.heard(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[{"id":"oauth-personal"},{"id":"gemini-api-key"}]}}"#, &mut out);
        let fail = |id| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":"Authentication required"}}}}"#
            )
        };
        t.heard(&fail(2), &mut out);
        assert_eq!(
            sent(&out, 2),
            json!({"jsonrpc": "2.0", "id": 3, "method": "authenticate",
                   "params": {"methodId": "oauth-personal"}})
        );
        t.heard(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, &mut out);
        assert_eq!(sent(&out, 3)["method"], "session/new");
        t.heard(&fail(4), &mut out);
        assert_eq!(out.lines.len(), 4, "no second authenticate");
        assert!(t.idle(), "nothing will run: commands are refused at once");
        let e = t.prompt("hi", &[], &mut out).unwrap_err();
        assert_eq!(
            e,
            "the agent could not open a session: Authentication required"
        );
        assert_eq!(out.lines.len(), 4);
    }

    #[test]
    fn resume_loads_the_session_only_where_the_agent_can() {
        let o = Options {
            cwd: "/w".into(),
            resume: Some("old".into()),
            token: String::new(),
        };
        let init = |load: bool| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"agentCapabilities":{{"loadSession":{load}}}}}}}"#
            )
        };
        let mut t = new(&o);
        let mut out = Outbox::default();
        t.start(&mut out);
        t.heard(&init(true), &mut out);
        assert_eq!(
            sent(&out, 1),
            json!({"jsonrpc": "2.0", "id": 2, "method": "session/load",
                   "params": {"sessionId": "old", "cwd": "/w", "mcpServers": []}})
        );
        t.heard(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#, &mut out);
        assert_eq!(t.session(), Some("old"));
        let mut t = new(&o);
        let mut out = Outbox::default();
        t.start(&mut out);
        t.heard(&init(false), &mut out);
        assert_eq!(out.lines.len(), 1, "no session/load");
        assert!(t
            .prompt("hi", &[], &mut out)
            .unwrap_err()
            .contains("loadSession"));
        // Gemini CLI 0.61.0 refusing the load (a run's --log): not an authentication matter,
        // so no `authenticate`, though it lists methods.
        let mut t = new(&o);
        let mut out = Outbox::default();
        t.start(&mut out);
        t.heard(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[{"id":"oauth-personal"}],"agentCapabilities":{"loadSession":true}}}"#, &mut out);
        t.heard(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error","data":{"details":"No previous sessions found for this project."}}}"#, &mut out);
        assert_eq!(out.lines.len(), 2, "no authenticate");
        assert_eq!(
            t.prompt("hi", &[], &mut out).unwrap_err(),
            "the agent could not open a session: Internal error \
             {\"details\":\"No previous sessions found for this project.\"}"
        );
    }

    #[test]
    fn a_prompt_runs_until_its_answer() {
        let (mut t, mut out) = claude();
        let img = Image {
            media_type: "image/png".into(),
            data: "AA==".into(),
        };
        t.prompt("Look", &[img], &mut out).unwrap();
        assert_eq!(
            sent(&out, 2),
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
                "sessionId": "s1", "prompt": [{"type": "text", "text": "Look"},
                {"type": "image", "mimeType": "image/png", "data": "AA=="}]}})
        );
        assert!(t.busy() && !t.idle());
        // The agent's own request ids count from 0 too: an answer is ours only by its id.
        t.heard(r#"{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/w/a"}}"#, &mut out);
        assert_eq!(sent(&out, 3)["error"]["code"], -32601);
        assert_eq!(sent(&out, 3)["id"], 3);
        assert!(t.busy());
        t.heard(
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
            &mut out,
        );
        assert!(t.idle());
    }

    #[test]
    fn a_permission_is_answered_with_the_option_of_its_kind() {
        let (mut t, mut out) = claude();
        t.prompt("Write", &[], &mut out).unwrap();
        // testdata/acp-claude/write-allowed.jsonl line 14 (shortened).
        t.heard(r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"options":[{"kind":"allow_always","name":"Always Allow all Write","optionId":"allow_always"},{"kind":"allow_once","name":"Allow","optionId":"allow"},{"kind":"reject_once","name":"Reject","optionId":"reject"}],"sessionId":"s1","toolCall":{"toolCallId":"t1"}}}"#, &mut out);
        assert_eq!(t.pending(), vec!["0".to_string()]);
        let a = |decision| Answer {
            decision,
            updated_input: None,
            message: None,
        };
        let n = out.lines.len();
        let e = t
            .answer("0", &a(Decision::DenyAlways), &mut out)
            .unwrap_err();
        assert_eq!(
            e,
            "this request offers no `reject_always` option \
             (it offers: allow_always, allow_once, reject_once)"
        );
        let with_input = Answer {
            updated_input: Some("{}"),
            ..a(Decision::Allow)
        };
        assert!(t.answer("0", &with_input, &mut out).is_err());
        assert_eq!(
            (out.lines.len(), t.pending().len()),
            (n, 1),
            "still waiting"
        );
        t.answer("0", &a(Decision::Deny), &mut out).unwrap();
        assert_eq!(
            sent(&out, n),
            json!({"jsonrpc": "2.0", "id": 0,
                   "result": {"outcome": {"outcome": "selected", "optionId": "reject"}}})
        );
        assert!(t.pending().is_empty());
        // A string id is the requestId as written, and echoed as a string.
        t.heard(r#"{"jsonrpc":"2.0","id":"p-1","method":"session/request_permission","params":{"sessionId":"s1","options":[{"kind":"allow_once","optionId":"ok"}]}}"#, &mut out);
        assert_eq!(t.pending(), vec!["p-1".to_string()]);
        t.answer("p-1", &a(Decision::Cancelled), &mut out).unwrap();
        assert_eq!(
            sent(&out, n + 1),
            json!({"jsonrpc": "2.0", "id": "p-1",
                   "result": {"outcome": {"outcome": "cancelled"}}})
        );
    }

    #[test]
    fn interrupt_cancels_the_turn_and_its_waiting_requests() {
        let (mut t, mut out) = claude();
        assert_eq!(t.interrupt(&mut out).unwrap_err(), "no turn is running");
        t.prompt("Wait", &[], &mut out).unwrap();
        t.heard(r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","options":[]}}"#, &mut out);
        let n = out.lines.len();
        t.interrupt(&mut out).unwrap();
        assert_eq!(
            sent(&out, n),
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
        );
        assert_eq!(
            sent(&out, n + 1)["result"]["outcome"]["outcome"],
            "cancelled"
        );
        assert!(t.pending().is_empty());
        assert!(t.busy(), "until the prompt's answer");
    }

    #[test]
    fn settings_go_to_the_method_the_session_lists_and_a_prompt_waits_for_them() {
        let (mut t, mut out) = claude();
        t.set_model("haiku", &mut out).unwrap();
        assert_eq!(
            sent(&out, 2)["params"],
            json!({"sessionId": "s1", "configId": "model", "value": "haiku"})
        );
        assert_eq!(sent(&out, 2)["method"], "session/set_config_option");
        assert!(!t.idle(), "a prompt waits for the answer");
        t.heard(r#"{"jsonrpc":"2.0","id":3,"result":{"configOptions":[{"id":"effort","category":"thought_level"}]}}"#, &mut out);
        assert!(t.idle());
        t.set_permission_mode("acceptEdits", &mut out).unwrap();
        assert_eq!(
            sent(&out, 3),
            json!({"jsonrpc": "2.0", "id": 4, "method": "session/set_mode",
                   "params": {"sessionId": "s1", "modeId": "acceptEdits"}})
        );
        t.set_reasoning_effort("high", &mut out).unwrap();
        assert_eq!(
            sent(&out, 4)["params"],
            json!({"sessionId": "s1", "configId": "effort", "value": "high"})
        );
        // An error answer ends the wait too (the converter shows it).
        t.heard(
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params"}}"#,
            &mut out,
        );
        t.heard(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#, &mut out);
        assert!(t.idle());

        // Gemini CLI 0.61.0 (testdata/acp-gemini/write-allowed.jsonl line 4): `models`, no
        // config options.
        let mut g = Acp::default();
        let mut out = Outbox::default();
        g.start(&mut out);
        g.heard(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#,
            &mut out,
        );
        g.heard(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"g","modes":{"availableModes":[],"currentModeId":"default"},"models":{"availableModels":[],"currentModelId":"auto"}}}"#, &mut out);
        g.set_model("gemini-2.5-pro", &mut out).unwrap();
        assert_eq!(
            sent(&out, 2),
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/set_model",
                   "params": {"sessionId": "g", "modelId": "gemini-2.5-pro"}})
        );
        let e = g.set_reasoning_effort("high", &mut out).unwrap_err();
        assert!(e.contains("thought_level"), "{e}");
        assert_eq!(out.lines.len(), 3);
    }
}
