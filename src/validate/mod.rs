//! `insights validate`: check recorded logs against the schema and the protocol's rules (for CI).
//!
//! Inputs are files, directories (every `*.jsonl` below them, in path order) or standard input.
//! Each input is one log, checked on its own by [`check`]: lines that are InsightsEvents already
//! are checked as written; provider output is converted first and its events are checked, and
//! how the conversion went is counted per provider. The rules and their ids are in [`rules`],
//! the output formats in [`report`].
//!
//! Logs are checked in parallel, one per worker thread, and reported in the order they were
//! given. A log is streamed: memory is bounded by its open state (see [`rules`]), not its size.

pub mod check;
pub mod fast;
pub mod report;
pub mod rules;
pub mod unified;

use crate::cli::Config;
use crate::cli::InputArgs;
use crate::diag::Diag;
use crate::input::Source;
use crate::output::{FlushPolicy, Out};
use anyhow::Context as _;
use check::{check_source, Context, FileReport};
use clap::builder::{PossibleValue, PossibleValuesParser};
use jsonschema::{Draft, Validator};
use report::Reporter;
use rules::{Policy, Rule};
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

const EXAMPLES: &str = "\
Examples:
  insights validate logs/*.jsonl                 # normalized InsightsEvent logs
  claude ... | insights validate --from claude   # raw provider output: does it convert cleanly?
  insights validate --format github logs/        # annotations in a GitHub Actions run
  insights validate --deny warnings --allow raw-event logs/

Exit status: 0 valid, 1 findings at error level (mostly-raw: a log that is mostly raw
lines, the wrong --from or no agent's output), 2 usage or I/O error, or nothing to
check (a directory without *.jsonl files, inputs without a line) unless --allow-empty.";

#[derive(Debug, clap::Args, Clone)]
#[command(after_help = after_help())]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,

    /// How to report: text (`file:line: level: rule: message`), json (one document) or github
    /// (GitHub Actions annotations).
    #[arg(long, value_enum, default_value_t = Format::Text, value_name = "FORMAT")]
    pub format: Format,

    /// Report the findings of a warning rule as errors; `warnings` means every warning rule.
    /// Repeatable.
    #[arg(long, value_name = "RULE", value_parser = rule_names(), hide_possible_values = true)]
    pub deny: Vec<String>,

    /// Silence a rule: its findings are neither reported nor counted; `warnings` silences every
    /// warning rule. Repeatable. Wins over --deny.
    #[arg(long, value_name = "RULE", value_parser = rule_names(), hide_possible_values = true)]
    pub allow: Vec<String>,

    /// Accept having nothing to check: a directory without `*.jsonl` files, or inputs without
    /// a line.
    ///
    /// Without it, each directory that holds no `*.jsonl` file is an error, and so is a run
    /// whose inputs hold no line at all (an empty file or standard input): exit status 2, so
    /// that a CI check cannot pass on nothing.
    #[arg(long)]
    pub allow_empty: bool,
}

/// `--format` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per finding, `FILE:LINE[:COLUMN]: LEVEL: RULE: MESSAGE`, then the conversion
    /// totals and a summary line; coloured on a terminal (see --color).
    Text,
    /// One JSON document: per log the counts, the conversion and every finding, then the
    /// totals.
    Json,
    /// GitHub Actions workflow commands: `::error` or `::warning`, then
    /// `file=FILE,line=LINE`, `,col=COLUMN` when known, and `,title=RULE::MESSAGE`.
    Github,
}

/// `warnings` and the rule ids.
fn rule_names() -> PossibleValuesParser {
    let mut v = vec![PossibleValue::new("warnings")];
    v.extend(Rule::ALL.iter().map(|r| PossibleValue::new(r.id())));
    PossibleValuesParser::new(v)
}

/// The rules with their levels, then examples.
fn after_help() -> String {
    let width = Rule::ALL.iter().map(|r| r.id().len()).max().unwrap_or(0);
    let mut s = String::from(
        "FILE may be a directory: every *.jsonl file below it is checked.\n\nRules (--allow and --deny take their ids):\n",
    );
    for r in Rule::ALL {
        s += &format!(
            "  {:<7}  {:<width$}  {}\n",
            r.level().as_str(),
            r.id(),
            r.about()
        );
    }
    s + "\n" + EXAMPLES
}

/// A directory argument without a log, unless `--allow-empty`.
const NO_LOGS: &str = "no *.jsonl files to validate (--allow-empty accepts this)";
/// Inputs without a line, unless `--allow-empty`.
const NO_LINES: &str = "nothing to validate: no input holds a line (--allow-empty accepts this)";

pub fn run(args: &Args, config: &Config) -> anyhow::Result<ExitCode> {
    let mut opts = args.input.options()?;
    opts.clock = false;
    opts.flush = FlushPolicy::Block;
    let policy = Policy::new(&args.allow, &args.deny)?;
    let schema_json: Value = serde_json::from_str(crate::schema::EVENT_SCHEMA)
        .context("the embedded schema is not JSON")?;
    let schema = compile(&schema_json)?;
    let fast = fast::FastSchema::compile(&schema_json);
    let cx = Context {
        schema: &schema,
        fast: &fast,
        opts: &opts,
        policy: &policy,
    };

    let mut diag = Diag::new(config.color_err);
    let sources =
        crate::input::expand_dirs_or(&args.input.sources(), &mut diag, &mut |dir, diag| {
            let dir = dir.display().to_string();
            if args.allow_empty {
                diag.note(&format!("{dir}: no *.jsonl files"));
            } else {
                diag.error(Some(&dir), NO_LOGS);
            }
        });
    let color_out = args.format == Format::Text && config.color_out;
    let mut out = Out::stdout();
    let mut reporter = Reporter::new(args.format, color_out);
    let mut lines = 0;
    each_report(&sources, &cx, |r| {
        if let Some(e) = &r.io_error {
            diag.input_failed(&r.name, e);
        }
        lines += r.lines;
        reporter.file(&mut out.w, &r)?;
        out.flush()
    })
    .context("cannot write to standard output")?;
    reporter
        .finish(&mut out.w)
        .and_then(|_| out.flush())
        .context("cannot write to standard output")?;
    let summary = reporter.summary();
    let failed = diag.io_errors > 0 || diag.errors > 0 || summary.io_errors > 0;
    // Said only when nothing else went wrong: then the status would be 0.
    if lines == 0 && !failed && !args.allow_empty {
        diag.error(None, NO_LINES);
    }
    Ok(if failed || diag.errors > 0 {
        ExitCode::from(2)
    } else if summary.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The schema as a draft 2020-12 validator that also checks `format`s, compiled once.
pub fn compile(schema: &Value) -> anyhow::Result<Validator> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .build(schema)
        .map_err(|e| anyhow::anyhow!("the embedded schema does not compile: {e}"))
}

/// Checks `sources` on worker threads, one log per thread (two when there are cores to spare),
/// and hands the reports to `f` in the order of `sources`, each as soon as it and those before
/// it are done.
fn each_report<E>(
    sources: &[Source],
    cx: &Context,
    mut f: impl FnMut(FileReport) -> Result<(), E>,
) -> Result<(), E> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = cores.min(sources.len()).max(1);
    // Cores to spare (fewer logs than cores): each log gets a second thread.
    let pipelined = cores >= 2 * workers;
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(src) = sources.get(i) else { break };
                if tx.send((i, check_source(src, cx, pipelined))).is_err() {
                    break; // the reader stopped: output failed
                }
            });
        }
        drop(tx);
        let mut done = BTreeMap::new();
        let mut want = 0;
        for (i, r) in rx {
            done.insert(i, r);
            while let Some(r) = done.remove(&want) {
                f(r)?;
                want += 1;
            }
        }
        Ok(())
    })
}
