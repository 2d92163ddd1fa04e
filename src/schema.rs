//! The published contracts, embedded: `schemas/insights-event.schema.json` (every line
//! `insights` writes) and `schemas/insights-state.schema.json` (the state `insights reduce`
//! writes), and `insights schema [event|state]`, which prints them.

use anyhow::Context as _;
use std::io::Write as _;
use std::process::ExitCode;

/// The InsightsEvent JSON Schema (draft 2020-12).
pub const EVENT_SCHEMA: &str = include_str!("../schemas/insights-event.schema.json");

/// The JSON Schema (draft 2020-12) of the state `insights reduce` writes.
pub const STATE_SCHEMA: &str = include_str!("../schemas/insights-state.schema.json");

/// Which schema to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    /// The InsightsEvent schema: every line `insights` writes.
    Event,
    /// The state `insights reduce` writes (one JSON object, or one per line with --follow).
    State,
}

#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// `event` (the default) or `state`.
    #[arg(value_enum, default_value_t = Which::Event, value_name = "WHICH")]
    pub which: Which,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let text = match args.which {
        Which::Event => EVENT_SCHEMA,
        Which::State => STATE_SCHEMA,
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}
