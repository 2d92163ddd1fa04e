//! The published contracts, embedded: `schemas/insights-event.schema.json` (every line
//! `insights` writes), `schemas/insights-state.schema.json` (the state `insights reduce`
//! writes) and `schemas/insights-command.schema.json` (the commands `insights run` reads), and
//! `insights schema [event|state|command]`, which prints them.

use anyhow::Context as _;
use std::io::Write as _;
use std::process::ExitCode;

/// The InsightsEvent JSON Schema (draft 2020-12).
pub const EVENT_SCHEMA: &str = include_str!("../schemas/insights-event.schema.json");

/// The JSON Schema (draft 2020-12) of the state `insights reduce` writes.
pub const STATE_SCHEMA: &str = include_str!("../schemas/insights-state.schema.json");

/// The JSON Schema (draft 2020-12) of the commands `insights run` reads.
pub const COMMAND_SCHEMA: &str = include_str!("../schemas/insights-command.schema.json");

/// Which schema to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    /// The InsightsEvent schema: every line `insights` writes.
    Event,
    /// The state `insights reduce` writes (one JSON object, or one per line with --follow).
    State,
    /// The commands `insights run` reads, one a line.
    Command,
}

#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// `event` (the default), `state` or `command`.
    #[arg(value_enum, default_value_t = Which::Event, value_name = "WHICH")]
    pub which: Which,

    /// The commands' schema (the same as `command`).
    #[arg(long, conflicts_with = "which")]
    pub commands: bool,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let which = if args.commands {
        Which::Command
    } else {
        args.which
    };
    let text = match which {
        Which::Event => EVENT_SCHEMA,
        Which::State => STATE_SCHEMA,
        Which::Command => COMMAND_SCHEMA,
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}
