//! The library behind the `insights` command: a Unix filter that normalizes AI coding agents'
//! streaming output into InsightsEvent JSONL, and the commands built on those events
//! (`validate`, `replay`, `reduce`, `usage`, `sessions`, `store`, `export`).
//!
//! `src/main.rs` only parses the command line and calls [`run()`]. The modules are public so that
//! the fuzz targets (`fuzz/`) can call into them; they are this program's internals, not a
//! stable API.
//!
//! Their documentation is for people who work on the program: build it with
//! `cargo doc --document-private-items`, where links to private items resolve.

#![allow(rustdoc::private_intra_doc_links)]

pub mod cli;
pub mod command;
pub mod compat;
pub mod convert;
pub mod detect;
pub mod diag;
pub mod diff;
pub mod event;
pub mod export;
pub mod ids;
pub mod input;
pub mod json_reader;
pub mod json_writer;
pub mod lines;
pub mod members;
pub mod output;
pub mod parallel;
pub mod providers;
pub mod providers_cmd;
pub mod redact;
pub mod reduce;
pub mod replay;
pub mod run;
pub mod scan;
pub mod schema;
pub mod signals;
pub mod store;
#[cfg(test)]
mod test_support;
pub mod time;
pub mod usage;
pub mod validate;
pub mod wire;

use anyhow::Context;
use clap::CommandFactory;
use cli::{Cli, Command};
use std::io::Write;
use std::process::ExitCode;

/// Runs the command `cli` names, and gives the exit status it ends with. An `Err` is a failure
/// that ends the run (exit status 2), or a broken pipe (see [`output::is_broken_pipe`]).
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let config = cli::Config::new(cli.color);
    // Every subcommand: converted events, a state or a transcript can be far bigger than
    // 64 KiB.
    output::widen_stdout_pipe();
    match cli.command {
        None => convert::run(&cli.convert, &config),
        Some(Command::Convert(args)) => convert::run(&args, &config),
        Some(Command::Validate(args)) => validate::run(&args, &config),
        Some(Command::Replay(args)) => replay::run(&args, &config),
        Some(Command::Reduce(args)) => reduce::run(&args, &config),
        Some(Command::Providers(args)) => providers_cmd::run(&args),
        Some(Command::Run(args)) => run::run(&args, &config),
        Some(Command::Schema(args)) => schema::run(&args),
        Some(Command::Sessions(args)) => usage::sessions::run(&args),
        Some(Command::Usage(args)) => usage::run(&args),
        Some(Command::Statusline(args)) => usage::statusline::run(&args),
        Some(Command::Store(args)) => store::run(&args, &config),
        Some(Command::Export(args)) => export::run(&args, &config),
        Some(Command::Completions { shell }) => {
            // Generated into memory first: clap_complete panics on a failed write.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "insights", &mut script);
            let mut out = std::io::stdout().lock();
            out.write_all(&script)
                .and_then(|_| out.flush())
                .context("cannot write to standard output")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
