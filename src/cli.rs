//! The command line: clap definitions, resolved once into the options below `main`.

use crate::output::ColorChoice;
use crate::providers::PROVIDERS;
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  claude -p \"fix the test\" --output-format stream-json --verbose | insights
  insights session.jsonl > events.jsonl
  insights --from claude --raw capture.jsonl | jq 'select(.event == \"tool_invocation\")'
  insights --compat cc-insights run.jsonl      # only the 17 CC-Insights event types
  insights schema > insights-event.schema.json

Exit status: 0 every line was read, 1 some input lines could not be read,
2 usage or I/O error, 128+N ended by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP)
after a whole line.";

/// Normalize AI coding agents' streaming output into InsightsEvent JSONL.
///
/// Reads the raw output of an agent CLI (Claude Code stream-json, ...) from files or standard
/// input, detects the provider line by line (or takes --from), and writes one normalized
/// InsightsEvent per line to standard output, as soon as it is known. Every input line is
/// accounted for: it becomes typed events, a `raw` event, or a diagnostic on standard error
/// (past 20 unreadable lines in one input, one line counts the rest).
#[derive(Debug, Parser)]
#[command(
    name = "insights",
    version,
    after_help = EXAMPLES,
    subcommand_precedence_over_arg = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub convert: ConvertArgs,

    /// When to colour diagnostics and replay's transcript: auto, always, never.
    ///
    /// auto colours a stream (standard error for diagnostics, standard output for replay) when
    /// it is a terminal, NO_COLOR is unset or empty, and TERM is not "dumb". JSON is never
    /// coloured.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true, value_name = "WHEN")]
    pub color: ColorChoice,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Convert provider output to InsightsEvent JSONL (what `insights` does without a command).
    Convert(ConvertArgs),
    /// Check event logs against the schema and the protocol's rules (for CI).
    Validate(crate::validate::Args),
    /// Render a log or a live stream as a transcript for people.
    Replay(crate::replay::Args),
    /// Fold an event log into state: entries, the turn tree, totals, what is pending.
    Reduce(crate::reduce::Args),
    /// Print what each provider's output carries: the capability matrix, as a table or JSON.
    Providers(crate::providers_cmd::Args),
    /// Print a JSON Schema (draft 2020-12): of the events (the default) or of reduce's state.
    Schema(crate::schema::Args),
    /// List the sessions in the agents' own session files: agent, id, project, times,
    /// turns, models, tokens, cost.
    Sessions(crate::usage::sessions::Args),
    /// Sum tokens and cost from the agents' own session files, grouped by day, model, …
    Usage(crate::usage::Args),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Compat {
    /// Only the 17 event types of CC-Insights; additions folded or dropped.
    CcInsights,
}

#[derive(Debug, Args, Clone)]
pub struct ConvertArgs {
    /// Input files; a directory stands for every `*.jsonl` file below it (an agent's
    /// session folder such as ~/.codex/sessions); `-` or none reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The provider of the input, or `auto` to detect it line by line.
    ///
    /// When more than half of an input's lines given to the provider (at least 10) fall back to
    /// `raw` events, a warning on standard error asks whether it is the right one.
    #[arg(long, value_name = "PROVIDER", default_value = "auto", value_parser = from_values())]
    pub from: String,

    /// Attach the original input line to every event as `raw`.
    #[arg(long)]
    pub raw: bool,

    /// Omit `timestamp` where the input line carries no time of its own.
    ///
    /// Without it, such events are stamped with the time their line was read, so output
    /// differs from run to run. Use it for golden files and diffs. Not with
    /// `--compat cc-insights`, whose readers require a timestamp on every event.
    #[arg(long, conflicts_with = "compat")]
    pub no_timestamp: bool,

    /// Flush standard output after every input line.
    #[arg(long, conflicts_with = "block_buffered")]
    pub line_buffered: bool,

    /// Flush standard output only when its buffer is full and at the end.
    ///
    /// By default output is flushed after each line on a terminal, and elsewhere whenever no
    /// further complete input line is ready, so live pipes see every event at once.
    #[arg(long)]
    pub block_buffered: bool,

    /// Stop with status 1 at the first input line that cannot be read.
    #[arg(long)]
    pub strict: bool,

    /// Restrict output to a consumer's event types.
    #[arg(long, value_enum, value_name = "CONSUMER")]
    pub compat: Option<Compat>,

    /// Longest input line accepted, in bytes; longer lines are reported and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    pub max_line_bytes: usize,

    /// Mask secrets in every string of the output, `raw` included, as `[REDACTED:KIND]`.
    ///
    /// API keys (Anthropic, OpenAI, Google, GitHub, AWS, Slack), bearer tokens, private key
    /// blocks, passwords in URLs and `password=`-style pairs. The kind is kept, for example
    /// `[REDACTED:anthropic-key]`. See the README's Robustness section for the exact shapes.
    #[arg(long)]
    pub redact: bool,

    /// Convert on N threads; the output is the same, byte for byte.
    ///
    /// Lines are converted in chunks of about 1 MiB, on N cores, and written in input order.
    /// The default is one thread for a pipe or terminal, `--line-buffered` or files under
    /// 8 MiB in all (standard input redirected from a file counts as that file), and one per
    /// core otherwise. With N > 1 on a pipe, a chunk goes out as soon as no further line is
    /// ready, so a live pipe still sees events at once.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

/// Inputs of the commands that read events: normalized logs or any provider's raw output.
#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Input files; a directory stands for every `*.jsonl` file below it (an agent's
    /// session folder such as ~/.codex/sessions); `-` or none reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The provider of raw input, or `auto` to detect it line by line (normalized
    /// InsightsEvent lines are always recognised).
    #[arg(long, value_name = "PROVIDER", default_value = "auto", value_parser = from_values())]
    pub from: String,

    /// Longest input line accepted, in bytes; longer lines are reported and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    pub max_line_bytes: usize,
}

impl InputArgs {
    pub fn sources(&self) -> Vec<crate::input::Source> {
        sources(&self.files)
    }

    /// Conversion options for reading: events flow on as soon as they are known.
    pub fn options(&self) -> anyhow::Result<crate::convert::Options> {
        Ok(crate::convert::Options {
            forced: forced(&self.from)?,
            raw: false,
            clock: true,
            flush: crate::output::FlushPolicy::WhenIdle,
            strict: false,
            cc_insights: false,
            max_line: self.max_line_bytes,
        })
    }
}

/// The provider `--from` names, `None` for auto.
pub fn forced(from: &str) -> anyhow::Result<Option<&'static crate::providers::Provider>> {
    match from {
        "auto" => Ok(None),
        name => crate::providers::by_name(name)
            .map(Some)
            .ok_or_else(|| anyhow::anyhow!("unknown provider {name:?}")),
    }
}

/// Files as sources; none means standard input.
pub fn sources(files: &[PathBuf]) -> Vec<crate::input::Source> {
    if files.is_empty() {
        vec![crate::input::Source::Stdin]
    } else {
        files
            .iter()
            .map(|f| crate::input::Source::from_arg(f))
            .collect()
    }
}

fn from_values() -> PossibleValuesParser {
    let mut v =
        vec![PossibleValue::new("auto").help("Detect the provider of each line by its shape")];
    v.extend(
        PROVIDERS
            .iter()
            .map(|p| PossibleValue::new(p.name).help(p.about)),
    );
    PossibleValuesParser::new(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bare_files_mean_convert() {
        let cli = Cli::try_parse_from(["insights", "--from", "claude", "a.jsonl", "-"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.convert.files.len(), 2);
        assert_eq!(cli.convert.from, "claude");
    }

    #[test]
    fn unknown_provider_is_a_usage_error() {
        assert!(Cli::try_parse_from(["insights", "--from", "nope"]).is_err());
    }
}
