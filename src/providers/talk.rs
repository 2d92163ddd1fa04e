//! The input side of a provider's protocol, for `insights run`: how the commands of
//! [`crate::command`] are said in the agent's own wire format, and what the loop must know of
//! the agent's lines to apply them in order (is the agent idle, which permission requests
//! wait for an answer).
//!
//! A provider that can be driven has a [`Speaker`] ([`super::Provider::talk`]); its [`Talk`]
//! is one agent process's conversation. A talk only encodes and keeps the state the encoding
//! needs (request ids, a request's input and options): what the lines mean as events is the
//! converter's, which reads the lines of both directions as it reads a recording.

use crate::command::{Decision, Image};

/// How `insights run` recognizes and starts a provider's bidirectional protocol.
pub struct Speaker {
    /// The `--protocol` name.
    pub protocol: &'static str,
    /// Whether an agent's command line (program and arguments) speaks this protocol, when
    /// `--protocol` does not say.
    pub recognizes: fn(&[String]) -> bool,
    /// Adds the arguments the protocol needs that the command line lacks (the arguments
    /// after the program's name).
    pub prepare: fn(&mut Vec<String>, &Options),
    /// A new conversation.
    pub new: fn(&Options) -> Box<dyn Talk>,
}

/// What a conversation is started with.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The work directory (the agent's cwd), for protocols whose session names one.
    pub cwd: String,
    /// `--resume ID`: the session to continue.
    pub resume: Option<String>,
    /// A token unique to this run, for request ids the agent sees.
    pub token: String,
}

/// Lines to write to the agent, in order: compact JSON, one object each, no newline.
#[derive(Debug, Default)]
pub struct Outbox {
    pub lines: Vec<String>,
}

impl Outbox {
    pub fn send(&mut self, v: &serde_json::Value) {
        self.lines.push(v.to_string());
    }
}

/// The answer to a permission request, as a command gives it.
#[derive(Debug, Clone)]
pub struct Answer<'c> {
    pub decision: Decision,
    /// The tool input to run instead, as JSON text.
    pub updated_input: Option<&'c str>,
    /// Why, for the agent.
    pub message: Option<&'c str>,
}

/// One agent process's conversation, as the driver of its protocol sees it. Every method that
/// can refuse returns the reason, in words for the `error` event; nothing is written then.
pub trait Talk: Send {
    /// The handshake, written first.
    fn start(&mut self, out: &mut Outbox);
    /// A line the agent wrote (a JSON object, or anything else, which is ignored). Answers
    /// what needs no command (a request this client does not serve) into `out`.
    fn heard(&mut self, line: &str, out: &mut Outbox);
    /// Whether a prompt can be sent now: the handshake is done and no turn is running.
    fn idle(&self) -> bool;
    /// Whether a turn is running.
    fn busy(&self) -> bool;
    /// The session, once the agent has named it.
    fn session(&self) -> Option<&str>;
    /// The permission requests waiting for an answer, oldest first, by the `requestId` their
    /// `permission_request` events carry.
    fn pending(&self) -> Vec<String>;
    fn prompt(&mut self, text: &str, images: &[Image], out: &mut Outbox) -> Result<(), String>;
    /// Whether the agent's protocol has this decision at all (a request may still not offer
    /// it: [`Talk::answer`] says so).
    fn offers(&self, _decision: Decision) -> Result<(), String> {
        Ok(())
    }
    fn answer(&mut self, request: &str, a: &Answer, out: &mut Outbox) -> Result<(), String>;
    fn interrupt(&mut self, out: &mut Outbox) -> Result<(), String>;
    fn set_model(&mut self, model: &str, out: &mut Outbox) -> Result<(), String>;
    fn set_permission_mode(&mut self, mode: &str, out: &mut Outbox) -> Result<(), String>;
    fn set_reasoning_effort(&mut self, effort: &str, out: &mut Outbox) -> Result<(), String>;
    /// What to write once the commands have ended and the agent is idle, before its input is
    /// closed (nothing, for most).
    fn finish(&mut self, _out: &mut Outbox) {}
}

/// The program's name without its directory, and the arguments, of a command line: `node
/// …/x.js` is named by its script.
pub fn program(argv: &[String]) -> (&str, &[String]) {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_owned();
    match argv {
        [node, script, rest @ ..] if base(node).starts_with("node") && !script.starts_with('-') => {
            (script.as_str(), rest)
        }
        [p, rest @ ..] => (p.as_str(), rest),
        [] => ("", &[]),
    }
}

/// Whether `args` has `flag` (as `--flag` or `--flag=value`).
pub fn has_flag(args: &[String], flag: &str) -> bool {
    args.iter()
        .any(|a| a == flag || (a.starts_with(flag) && a.as_bytes().get(flag.len()) == Some(&b'=')))
}

/// Appends `flag value` unless the command line has the flag.
pub fn add_flag(args: &mut Vec<String>, flag: &str, value: Option<&str>) {
    if !has_flag(args, flag) {
        args.push(flag.to_owned());
        if let Some(v) = value {
            args.push(v.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_node_script_is_named_by_its_script() {
        let a = v(&["/usr/bin/node", "/x/claude-agent-acp/dist/index.js", "--x"]);
        assert_eq!(program(&a).0, "/x/claude-agent-acp/dist/index.js");
        assert_eq!(program(&a).1, &a[2..]);
        let c = v(&["/bin/claude", "-p"]);
        assert_eq!(program(&c).0, "/bin/claude");
    }

    #[test]
    fn flags_are_added_once() {
        let mut a = v(&["--verbose", "--output-format=json"]);
        add_flag(&mut a, "--verbose", None);
        add_flag(&mut a, "--output-format", Some("stream-json"));
        add_flag(&mut a, "--input-format", Some("stream-json"));
        assert_eq!(
            a,
            v(&[
                "--verbose",
                "--output-format=json",
                "--input-format",
                "stream-json"
            ])
        );
    }
}
