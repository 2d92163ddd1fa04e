//! `insights`: a Unix filter that normalizes AI coding agents' streaming output. The work is
//! done by the library (`src/lib.rs`); this parses the command line and sets the exit status.

use clap::Parser;
use insights::cli::Cli;
use insights::output::is_broken_pipe;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = e.exit_code();
            // Help and version go to standard output: a failure to write them is an error too.
            if let Err(w) = e.print() {
                if w.kind() != std::io::ErrorKind::BrokenPipe {
                    eprintln!(
                        "insights: cannot write to standard output: {}",
                        insights::diag::io_words(&w)
                    );
                    return ExitCode::from(2);
                }
            }
            return ExitCode::from(code.clamp(0, 255) as u8);
        }
    };
    match insights::run(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("insights: {}", insights::diag::error_words(&e));
            ExitCode::from(2)
        }
    }
}
