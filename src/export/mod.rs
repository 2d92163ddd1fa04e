//! `insights export`: the events, in the order read, handed to a target that writes them for
//! an engine a fleet already runs: ClickHouse rows ([`clickhouse`]) or OpenTelemetry GenAI
//! traces ([`otlp`]).
//!
//! The events come from what `insights` reads (agent output, InsightsEvent logs, session
//! files, folders, standard input, the agents' standard places when no PATH is given),
//! converted by the converter itself ([`Converter::run_source`], on a thread of its own), or from
//! the store (`--db`). From the store, a target sees each event as its InsightsEvent JSON line
//! and owns its output ([`Target`]); from the converter, ClickHouse rows are made from its
//! typed events ([`clickhouse::Maker`]) and OpenTelemetry spans from `reduce`'s state.

pub mod clickhouse;
mod columns;
pub mod cursor;
pub mod otlp;

use crate::cli::Config;
use crate::convert::Converter;
use crate::diag::Diag;
use crate::input::Source;
use crate::output::Out;
use anyhow::Context as _;
use std::path::PathBuf;
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Examples:
  insights export --to clickhouse ~/.claude/projects | \\
    clickhouse-client -q 'INSERT INTO events FORMAT JSONEachRow'
  insights export --to clickhouse                  # the agents' standard places
  insights export --to clickhouse --db ~/.local/share/insights/insights.db   # what is new
  insights export --to clickhouse --db ~/.local/share/insights/insights.db --all
  claude -p --output-format stream-json ... | insights export --to clickhouse -
  insights export --to otlp --endpoint http://localhost:4318  # traces to a Collector
  insights export --to otlp ~/.codex/sessions > traces.jsonl  # OTLP/JSON lines

The ClickHouse tables are schemas/clickhouse.sql in the source tree (an events table that
keeps one copy of each event, and a usage view with the columns of `insights usage --json`):
loading the same rows again adds nothing after merges. docs/fleet.md shows the whole path.

Exit status: 0 every line was read, 1 some input lines could not be read, 2 usage or I/O
error.";

/// Where the events go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum To {
    /// JSONEachRow rows for the `events` table of schemas/clickhouse.sql, on standard output.
    Clickhouse,
    /// OpenTelemetry GenAI traces (OTLP).
    Otlp,
}

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The target: `clickhouse` or `otlp`.
    #[arg(long, value_enum, value_name = "TARGET")]
    pub to: To,

    /// Inputs: files, folders (every `*.jsonl` file below), `-` for standard input; none
    /// reads the agents' standard places, as `store` does.
    ///
    /// The standard places are Claude Code's ~/.claude/projects (CLAUDE_CONFIG_DIR),
    /// Codex's ~/.codex/sessions and ~/.codex/archived_sessions (CODEX_HOME) and Gemini CLI's
    /// ~/.gemini/tmp/*/chats, Qwen Code's ~/.qwen/projects and OpenCode's database
    /// (~/.local/share/opencode/opencode.db, read-only). A Claude Code or Qwen Code session
    /// file and its subagents' files are read as one conversation.
    #[arg(value_name = "PATH", conflicts_with = "db")]
    pub paths: Vec<PathBuf>,

    /// Read the events `insights store` kept in this database instead, only those no earlier
    /// export to the same target took.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// With --db: every stored event, not only those stored since the last export to the
    /// target (after a load that failed downstream); the cursor then moves to the end.
    ///
    /// Both targets' engines keep one copy of an event exported twice.
    #[arg(long, requires = "db")]
    pub all: bool,

    /// The provider of raw input, or `auto` to detect it line by line (as for `convert`).
    #[arg(long, value_name = "PROVIDER", default_value = "auto", value_parser = crate::cli::from_values())]
    pub from: String,

    /// Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and
    /// skipped.
    #[arg(long, value_name = "BYTES", default_value = "64MiB", value_parser = crate::cli::parse_bytes)]
    pub max_line_bytes: usize,

    /// `--to otlp`: send the spans as OTLP/HTTP protobuf to URL/v1/traces (a Collector's
    /// OTLP receiver, such as http://localhost:4318) instead of writing OTLP/JSON.
    ///
    /// Without it, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL) or
    /// OTEL_EXPORTER_OTLP_ENDPOINT (a base URL) is used when set. Batches of 512 spans; 429,
    /// 502, 503 and 504 are retried with exponential backoff (Retry-After honoured), 6 tries
    /// in all; a batch that cannot be sent is an error (exit status 2).
    /// OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TIMEOUT apply.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,

    /// `--to otlp`: include prompts, answers, tool arguments and results (the GenAI
    /// conventions' opt-in content attributes); left out by default.
    #[arg(long)]
    pub content: bool,

    /// `--to otlp`: mask secrets (API keys, tokens, passwords) in every string of the spans,
    /// as `insights --redact` does in events.
    #[arg(long)]
    pub redact: bool,
}

impl To {
    /// Its name on the command line, and its cursor's in the store.
    pub fn name(self) -> &'static str {
        match self {
            To::Clickhouse => "clickhouse",
            To::Otlp => "otlp",
        }
    }
}

/// What every target is: it is given each event, in the order read, as its InsightsEvent
/// JSON line (one object, no line end), and writes what it makes of them to its own output
/// (standard output, an endpoint). Events of one session come in their order; the end of an
/// input has already been written by the converter (a turn the input left open ends there),
/// so a target needs no notice of it.
pub trait Target {
    /// One event. `Err` ends the run (the output failed).
    fn event(&mut self, line: &str) -> anyhow::Result<()>;

    /// The end of the run: writes what is held, flushes, and tells `diag` what it left out.
    fn finish(&mut self, diag: &mut Diag) -> anyhow::Result<()>;
}

/// The target `--to` names, writing to standard output.
fn target(args: &Args) -> anyhow::Result<Box<dyn Target>> {
    let stdout = Box::new(std::io::stdout().lock());
    match args.to {
        To::Clickhouse => Ok(Box::new(clickhouse::Rows::new(stdout))),
        To::Otlp => otlp::target(args, stdout),
    }
}

pub fn run(args: &Args, config: &Config) -> anyhow::Result<ExitCode> {
    crate::signals::install();
    let mut diag = Diag::new(config.color_err);
    if let Some(db) = &args.db {
        let mut target = target(args)?;
        return from_store(db, args, target.as_mut(), diag);
    }
    // Exporting the same input twice gives the same rows: times are the events' own.
    let opts = crate::cli::keeping_options(&args.from, args.max_line_bytes)?;
    let sources = crate::input::given_or_standard(&args.paths, &mut diag)?;
    if args.to == To::Otlp {
        // Spans are built from the reducer's state, which reads the files itself.
        otlp::run(args, &sources, &opts, &mut diag)?;
        return Ok(diag.exit_code());
    }
    let mut rows = clickhouse::Rows::new(Box::new(std::io::stdout().lock()));
    convert_into(&sources, &opts, &mut diag, &mut rows)?;
    rows.finish(&mut diag)?;
    Ok(diag.exit_code())
}

/// `--db`: the events stored after the target's cursor ([`cursor`]), in the order stored;
/// the cursor moves to the last one once the target has them all.
fn from_store(
    path: &std::path::Path,
    args: &Args,
    target: &mut dyn Target,
    mut diag: Diag,
) -> anyhow::Result<ExitCode> {
    let db = crate::store::query::Db::open(path)?;
    let cursors = cursor::Cursors::open(path)?;
    let name = args.to.name();
    let after = if args.all { 0 } else { cursors.get(name)? };
    let mut n = 0u64;
    let last = db.each(None, after, |_, json| {
        n += 1;
        if crate::signals::caught().is_some() {
            anyhow::bail!("stopped by a signal; the next run exports these events again");
        }
        target.event(json)
    })?;
    target.finish(&mut diag)?;
    cursors.set(name, last)?;
    let since = if args.all {
        String::new()
    } else {
        format!(" since the last export to {name}")
    };
    diag.note(&format!(
        "exported {n} events stored in {}{since}",
        path.display()
    ));
    Ok(diag.exit_code())
}

/// Converts every source as `insights` does and writes each event's row ([`clickhouse`]).
/// Each source has a converter of its own, as in `insights store`: an event's `seq` is its
/// place in its file's conversion, so a file gives the same rows exported alone, with others,
/// or from the store.
///
/// The converter runs on a thread of its own and hands each event over (its tap, as to
/// `store` and `reduce`): the rows are made from the typed events up to their `json` column
/// there ([`clickhouse::Maker`]), and this thread writes that column and the rows out
/// ([`clickhouse::Rows::block`]), so that the work takes two cores. A block goes as soon as
/// the converter flushes (when no further input line is ready), so a live pipe is exported
/// at once.
fn convert_into(
    sources: &[Source],
    opts: &crate::convert::Options,
    diag: &mut Diag,
    rows: &mut clickhouse::Rows,
) -> anyhow::Result<()> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<clickhouse::Block>(4);
    std::thread::scope(|scope| {
        let converting = scope.spawn(move || {
            let maker = std::cell::RefCell::new(clickhouse::Maker::new(Box::new(move |b| {
                tx.send(b)
                    .map_err(|_| std::io::Error::other("the export target failed"))
            })));
            let mut tap = |ev: &crate::event::Event<'_>| {
                maker
                    .try_borrow_mut()
                    .map_err(|_| clickhouse::busy())?
                    .event(ev)
            };
            // Unbuffered: a line passed through becomes a row in its place among the events.
            let mut out = Out::unbuffered(clickhouse::Passed(&maker));
            let mut result = Ok(());
            for src in sources {
                let mut conv = Converter::new(opts, &mut out);
                conv.tap(&mut tap);
                result = conv.run_source(src, diag);
                if result.is_err() || conv.stats.stopped || crate::signals::caught().is_some() {
                    break;
                }
            }
            result.and_then(|()| out.flush().context("cannot export"))
        });
        // Why the target failed: the converter then sees only a closed channel.
        let mut failed: Option<anyhow::Error> = None;
        for block in rx {
            if let Err(e) = rows.block(&block) {
                failed = Some(e);
                break;
            }
        }
        let converted = match converting.join() {
            Ok(r) => r,
            Err(_) => Err(anyhow::anyhow!(
                "internal error: the converting thread panicked"
            )),
        };
        match failed {
            Some(e) => Err(e),
            None => converted,
        }
    })
}
