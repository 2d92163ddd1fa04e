//! `insights`: a Unix filter that normalizes AI coding agents' streaming output.

mod cli;
mod compat;
mod convert;
mod detect;
mod diag;
mod diff;
mod event;
mod ids;
mod input;
mod json_reader;
mod json_writer;
mod members;
mod output;
mod parallel;
mod providers;
mod providers_cmd;
mod redact;
mod reduce;
mod replay;
mod scan;
mod schema;
mod signals;
#[cfg(test)]
mod test_support;
mod time;
mod usage;
mod validate;
mod wire;

use anyhow::Context;
use clap::{CommandFactory, Parser};
use cli::{Cli, Command, Compat, ConvertArgs};
use output::{is_broken_pipe, FlushPolicy, Out};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = e.exit_code();
            // Help and version go to standard output: a failure to write them is an error too.
            if let Err(w) = e.print() {
                if w.kind() != std::io::ErrorKind::BrokenPipe {
                    eprintln!("insights: cannot write to standard output: {w}");
                    return ExitCode::from(2);
                }
            }
            return ExitCode::from(code.clamp(0, 255) as u8);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("insights: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let color_err = cli.color.resolve(output::stderr_is_tty());
    // Every subcommand: converted events, a state or a transcript can be far bigger than
    // 64 KiB.
    output::widen_stdout_pipe();
    match cli.command {
        None => convert(&cli.convert, color_err),
        Some(Command::Convert(args)) => convert(&args, color_err),
        Some(Command::Validate(args)) => validate::run(&args, cli.color),
        Some(Command::Replay(args)) => replay::run(&args, cli.color),
        Some(Command::Reduce(args)) => reduce::run(&args, cli.color),
        Some(Command::Providers(args)) => providers_cmd::run(&args),
        Some(Command::Schema(args)) => schema::run(&args),
        Some(Command::Sessions(args)) => usage::sessions::run(&args),
        Some(Command::Usage(args)) => usage::run(&args),
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

fn convert(args: &ConvertArgs, color_err: bool) -> anyhow::Result<ExitCode> {
    let forced = cli::forced(&args.from)?;
    let flush = if args.line_buffered {
        FlushPolicy::Line
    } else if args.block_buffered {
        FlushPolicy::Block
    } else if output::stdout_is_tty() {
        FlushPolicy::Line
    } else {
        FlushPolicy::WhenIdle
    };
    let opts = convert::Options {
        forced,
        raw: args.raw,
        clock: !args.no_timestamp,
        flush,
        strict: args.strict,
        cc_insights: args.compat == Some(Compat::CcInsights),
        max_line: args.max_line_bytes,
    };
    // SIGINT, SIGTERM, SIGHUP end the run at a line boundary (src/signals.rs).
    signals::install();
    let mut diag = diag::Diag::new(color_err);
    let sources = input::expand_dirs(&cli::sources(&args.files), &mut diag);
    // Only whole lines reach standard output, redacted with --redact (src/output.rs).
    let mut out = Out::new(output::WholeLines::new(
        std::io::stdout().lock(),
        args.redact,
    ));
    let jobs = match args.jobs {
        Some(n) => usize::from(n),
        None => parallel::default_jobs(&sources, flush),
    };
    let stats = if jobs > 1 {
        let mut par = parallel::Parallel::new(&opts, jobs);
        for src in &sources {
            par.run_source(src, &mut out, &mut diag)?;
            if par.stats.stopped || signals::caught().is_some() {
                break;
            }
        }
        std::mem::take(&mut par.stats)
    } else {
        let mut conv = convert::Converter::new(&opts, &mut out);
        for src in &sources {
            conv.run_source(src, &mut diag)?;
            if conv.stats.stopped || signals::caught().is_some() {
                break;
            }
        }
        std::mem::take(&mut conv.stats)
    };
    out.flush().context("cannot write to standard output")?;
    if !stats.dropped.is_empty() {
        let parts: Vec<String> = stats
            .dropped
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let total: u64 = stats.dropped.values().sum();
        diag.note(&format!(
            "--compat cc-insights dropped {total} events with no CC-Insights type ({})",
            parts.join(", ")
        ));
    }
    Ok(if let Some(signo) = signals::caught() {
        ExitCode::from(signals::exit_status(signo))
    } else if diag.io_errors > 0 {
        ExitCode::from(2)
    } else if diag.bad_lines > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
