//! `insights reduce`: fold an event log into state.
//!
//! Not built yet: this stub reserves the command's place.

use crate::cli::InputArgs;
use crate::output::ColorChoice;
use std::process::ExitCode;

#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
}

pub fn run(args: &Args, color: ColorChoice) -> anyhow::Result<ExitCode> {
    let _ = (args, color);
    anyhow::bail!("reduce is not implemented yet")
}
