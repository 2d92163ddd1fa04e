//! `insights run`: drive an agent with one command language ([`crate::command`]) and read it
//! with one event language. The agent is a child process ([`agent`]); the loop ([`drive`])
//! applies the commands in order, says them in the agent's protocol (its provider's
//! [`crate::providers::talk::Talk`]), and converts the lines of both directions with the
//! converter, as `insights` converts a recording of them.

pub mod agent;
pub mod drive;

use crate::cli::Config;
use crate::providers::talk::Speaker;
use crate::providers::PROVIDERS;
use std::path::PathBuf;
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Examples:
  # a script: prompt, allow what it asks, prompt again
  printf '%s\\n' '{\"command\":\"send_message\",\"text\":\"Create notes.txt\"}' \\
    '{\"command\":\"permission_response\",\"decision\":\"allow\"}' \\
    '{\"command\":\"send_message\",\"text\":\"Now delete it\"}' |
    insights run --permissions deny -- claude
  insights run --prompt 'Fix the tests' --permissions allow -- codex app-server
  insights run --log session.jsonl -- gemini --acp < commands.jsonl | insights replay

Commands are JSON lines on standard input (insights schema --commands); events are JSON lines
on standard output. A first Ctrl-C interrupts the agent's turn, a second one kills the agent.

Exit status: the agent's (128 + N when signal N ended it); 127 when it cannot be started;
2 on a usage error.";

/// What happens to a permission request that no command answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Permissions {
    /// Wait for a `permission_response`; once the commands have ended, deny.
    Ask,
    /// Allow it (once).
    Allow,
    /// Deny it.
    Deny,
}

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The agent's protocol, when its command line does not make it clear: claude (the Agent
    /// SDK's stream-json control protocol), codex (`codex app-server`), acp (the Agent Client
    /// Protocol), or one-shot (started and converted; only interrupt and kill apply).
    #[arg(long, value_name = "PROTOCOL", value_parser = protocols())]
    pub protocol: Option<String>,

    /// What happens to a permission request no command answers: ask waits for a
    /// `permission_response` (and denies once standard input has ended), allow and deny answer
    /// at once, for unattended runs.
    #[arg(long, value_enum, default_value_t = Permissions::Ask, value_name = "WHAT")]
    pub permissions: Permissions,

    /// A first `send_message` with this text, before the commands on standard input.
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,

    /// Write the lines of both directions to FILE as they pass, in order: a capture that
    /// `insights FILE` converts to the same events.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Continue the session ID: `claude --resume`, Codex `thread/resume`, ACP `session/load`.
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,

    /// Omit `timestamp` where the agent's line carries no time of its own (for comparisons).
    #[arg(long)]
    pub no_timestamp: bool,

    /// Name the turn of every event of a turn (`turnId`), as `insights --turn-ids` does.
    #[arg(long)]
    pub turn_ids: bool,

    /// The agent's command line, after `--`.
    #[arg(last = true, required = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// The `--protocol` names: each speaking provider's, and `one-shot`.
fn protocols() -> clap::builder::PossibleValuesParser {
    let mut v: Vec<&'static str> = PROVIDERS
        .iter()
        .filter_map(|p| p.talk.map(|t| t.protocol))
        .collect();
    v.push("one-shot");
    clap::builder::PossibleValuesParser::new(v)
}

/// The provider and its protocol (`None`: a one-shot CLI) for the agent's command line.
pub fn choose(
    protocol: Option<&str>,
    argv: &[String],
) -> (Option<&'static str>, Option<&'static Speaker>) {
    let speaking = || PROVIDERS.iter().filter_map(|p| p.talk.map(|t| (p.name, t)));
    let found = match protocol {
        Some("one-shot") => None,
        Some(name) => speaking().find(|(_, t)| t.protocol == name),
        None => speaking().find(|(_, t)| (t.recognizes)(argv)),
    };
    match found {
        Some((p, t)) => (Some(p), Some(t)),
        None => (one_shot_provider(argv), None),
    }
}

/// The provider a one-shot CLI's output is, by the program's name, for the run's own events.
fn one_shot_provider(argv: &[String]) -> Option<&'static str> {
    let (prog, _) = crate::providers::talk::program(argv);
    let name = prog.rsplit('/').next().unwrap_or(prog);
    PROVIDERS
        .iter()
        .map(|p| p.name)
        .find(|n| name.starts_with(n))
}

pub fn run(args: &Args, config: &Config) -> anyhow::Result<ExitCode> {
    drive::run(args, config)
}
