//! The command line: clap definitions, resolved once into the options below `main`.

use crate::output::{ColorChoice, FlushPolicy};
use crate::providers::PROVIDERS;
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// What the terminal and the environment decide for a run, resolved once from `--color`,
/// `NO_COLOR`, `TERM` and whether each stream is a terminal, then handed to the command.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Standard output is a terminal.
    pub stdout_tty: bool,
    /// Colour on standard output, for the commands that colour what they print there.
    pub color_out: bool,
    /// Colour in diagnostics on standard error.
    pub color_err: bool,
    /// The terminal's width in columns, when standard output is a terminal.
    pub width: Option<usize>,
}

impl Config {
    pub fn new(color: ColorChoice) -> Config {
        let stdout_tty = crate::output::stdout_is_tty();
        Config {
            stdout_tty,
            color_out: color.resolve(stdout_tty),
            color_err: color.resolve(crate::output::stderr_is_tty()),
            width: crate::output::terminal_width(),
        }
    }

    /// When converted events are flushed: `--line-buffered`, `--block-buffered`, else after
    /// every line on a terminal and whenever the input goes idle elsewhere.
    pub fn flush(&self, line_buffered: bool, block_buffered: bool) -> FlushPolicy {
        if line_buffered {
            FlushPolicy::Line
        } else if block_buffered {
            FlushPolicy::Block
        } else if self.stdout_tty {
            FlushPolicy::Line
        } else {
            FlushPolicy::WhenIdle
        }
    }
}

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
    ///
    /// Each FILE is one log. A line that is an InsightsEvent already is checked as written.
    /// Any other JSON object is provider output: it is converted first, as by `convert`
    /// (--from and --max-line-bytes apply), and the events it yields are checked; lines, events
    /// and lines that fell back to `raw` are counted per provider. Every event is validated
    /// against the schema, each violation with its JSON pointer, and then against the rules.
    ///
    /// A log is checked as it is read, with memory bounded by its open state; several logs are
    /// checked in parallel and reported in the order given.
    Validate(crate::validate::Args),
    /// Render a log or a live stream as a transcript for people.
    ///
    /// A session header, prompts, the agent's text wrapped to the width, thinking folded to
    /// one dimmed line, each tool call as a card (its kind, salient input, permission request
    /// and decision, status, duration, the first lines of its output, its diff), plans as
    /// checklists, subagent traffic indented under the call that spawned it, compaction
    /// dividers, errors, and a footer per turn with its duration, tokens, cost per model and
    /// context use.
    ///
    /// The input is InsightsEvent JSONL or any supported agent's raw output, converted on the
    /// fly (--from and --max-line-bytes apply as for `convert`). Each event is shown as soon as
    /// it is read. Streamed deltas are never printed twice: a pipe gets only the final text,
    /// and a terminal shows the text being written on one transient line that the final text
    /// replaces.
    ///
    /// Text from the agent and its tools is made safe first: escape sequences (CSI, OSC
    /// including OSC 8 and OSC 52, DCS, C1 controls) are removed, other control characters and
    /// bidirectional overrides are shown visibly. The colours of the transcript are the only
    /// escape sequences written, and none with `--color never`. The exit status is that of
    /// `convert`.
    ///
    /// With --db, the events come from an insights store (--session: one session's), and with
    /// --follow too, as they are stored: `insights replay --session ID --follow --db` in one
    /// terminal watches `claude ... | insights store -` in another.
    Replay(crate::replay::Args),
    /// Fold an event log into state: entries, the turn tree, totals, what is pending.
    ///
    /// The state is printed as JSON: the conversation as a UI lists it (`entries`: messages,
    /// thoughts, tool calls with their permission request, answer and output, plans, mode
    /// changes, capabilities), the sessions with their turns and each turn's entries, a
    /// subagent's under the call that started it and parallel calls marked (`tree`), tokens,
    /// cost, durations, tool calls by kind, errors and permission denials per session and per
    /// model (`totals`), what is still running or unanswered and the current plan, mode and
    /// model (`pending`), and `lastSeq`. The layout is schemas/insights-state.schema.json in
    /// the source tree, which `insights schema state` prints.
    ///
    /// The input is InsightsEvent JSONL or any supported agent's raw output, converted on the
    /// fly (--from and --max-line-bytes apply as for `convert`), but lines without a time of
    /// their own are not stamped with the time they are read: the times in the state are the
    /// provider's, and absent where the log has none.
    ///
    /// Every event is applied once: one whose `id` was applied before, in the same input or in
    /// the --from-state state, in its session, is skipped (the state keeps a 64-bit hash of
    /// the session and id of every event applied, 8 bytes an event). An event the provider
    /// numbers (AceClaw's bridge `eventId`) is known by its number instead: each session skips
    /// events at or before the last number it applied, so a tail cut from the log resumes a
    /// snapshot. Events are taken with the `seq` they carry; converted lines are numbered
    /// after the last event applied.
    ///
    /// With --db, the events come from an insights store (--session: one session's), in the
    /// order they were stored: the state is the one the same events give from a file.
    Reduce(crate::reduce::Args),
    /// Print what each provider's output carries: the capability matrix, as a table or JSON.
    ///
    /// For streaming deltas, tool calls, tool results, reasoning, permissions, questions, file
    /// changes, command execution, MCP tools, token usage, cost, subagents and plans: whether
    /// the provider's output carries it and `insights` maps it to typed events. The table is
    /// Markdown, one row per capability and one column per provider.
    Providers(crate::providers_cmd::Args),
    /// Drive an agent: commands on standard input, events of both directions on standard
    /// output.
    ///
    /// Starts AGENT, speaks its protocol and reads commands, one JSON object a line
    /// (`insights schema --commands`): send_message, permission_response, interrupt, kill,
    /// set_model, set_permission_mode, set_reasoning_effort. Claude Code is driven with the
    /// Agent SDK's stream-json control protocol, `codex app-server` with its JSON-RPC, any
    /// Agent Client Protocol agent with ACP; one-shot CLIs (`claude -p`, `codex exec`,
    /// `gemini -p`, `qwen -p`, `opencode run`) are started and converted, and only interrupt
    /// (SIGINT) and kill apply. Both directions are converted by the same code as `insights`
    /// itself; events a command caused carry its `id` as `extensions["insights.commandId"]`.
    ///
    /// Commands apply in order: a send_message waits until the agent is idle, a
    /// permission_response without requestId answers the next request, interrupt and kill act
    /// at once. A command that cannot be carried out (malformed, unknown, a request that is not
    /// waiting, a decision or a control the agent does not offer) is an `error` event and a
    /// message on standard error; nothing reaches the agent and the run goes on. At the end of
    /// standard input the running turn ends, the agent's input is closed, and the exit status
    /// is the agent's.
    Run(crate::run::Args),
    /// Print a JSON Schema (draft 2020-12): of the events (the default), of reduce's state or
    /// of the commands.
    ///
    /// The `event` schema is the one every output line follows, the same as
    /// schemas/insights-event.schema.json in the source tree; the `state` schema is that of
    /// the state `insights reduce` writes, schemas/insights-state.schema.json; the `command`
    /// schema (`--commands`) that of the command lines an agent is driven with,
    /// schemas/insights-command.schema.json.
    Schema(crate::schema::Args),
    /// List the sessions in the agents' own session files: agent, id, project, times,
    /// turns, models, tokens, cost.
    ///
    /// The files are those `usage` reads, and the sessions come most recent first: agent,
    /// session id, project, first and last time, turns (every turn started, a running one
    /// and one the agent's goal started included: the turns `reduce` lists), models,
    /// tokens, cost and the files. A table, or with --json `{"sessions":[...]}`. The options
    /// are those of `usage` but --by; --db answers from an insights store, the same rows.
    Sessions(crate::usage::sessions::Args),
    /// Sum tokens and cost from the agents' own session files, grouped by day, model, …
    ///
    /// A table, with a totals row at the end and thousands separated, or with --json
    /// `{"rows":[...],"totals":{...}}`, where each row has its group keys and `inputTokens`,
    /// `outputTokens`, `cacheReadTokens`, `cacheCreationTokens`, `reasoningTokens`,
    /// `totalTokens` and `costUsd` (null when a model has no price). --db answers from an
    /// insights store, exactly what the files stored give.
    Usage(crate::usage::Args),
    /// One line for Claude Code's status bar: model, session, today and block costs, burn
    /// rate, context.
    ///
    /// Reads the JSON Claude Code gives a status-line command on standard input (session id,
    /// model, transcript path, cost, context window) and prints the model, the session's cost,
    /// today's cost, the active billing block's cost and time left, its burn rate and the
    /// context in use, as ccusage's statusline does. Only the Claude Code session files written
    /// to today or within two block windows are read, so it stays fast with any history.
    Statusline(crate::usage::statusline::Args),
    /// Keep every event in an SQLite database, each exactly once.
    ///
    /// Reads what `insights` reads (agent output, InsightsEvent logs, session files, folders,
    /// `-` for standard input), or with no PATH the agents' standard places as `usage` does,
    /// converts it as `insights` does and inserts each event once, keyed by its session and id:
    /// storing a file again, a copy of it, or after a run that was killed, adds nothing twice.
    /// A conversation stored from its stream and from its session file is stored once: each
    /// turn from the one stored first. A file stored before is read from the offset the last
    /// run read up to (a file rewritten from its start again). Batches are transactions,
    /// committed at least every 200 ms on a live pipe; the database is in WAL mode, so it can
    /// be read while it is written, and a second writer waits for the first. A first store of
    /// files (no database yet, no `-`) is built beside it and appears whole when it ends. The
    /// tables and views (events, sources, sessions, turns, tool_calls, tellers, usage,
    /// schema_version) are schemas/store.sql in the source tree.
    ///
    /// `usage`, `sessions`, `replay` and `reduce` answer from it with --db (`replay --follow
    /// --db` as it is written).
    Store(crate::store::Args),
    /// Write the events for an engine a fleet runs: ClickHouse rows, OpenTelemetry traces.
    ///
    /// Reads what `insights` reads (agent output, InsightsEvent logs, session files, folders,
    /// `-` for standard input; the agents' standard places when no PATH is given), or with
    /// --db the events `insights store` kept, only those not exported before. `--to
    /// clickhouse` writes JSONEachRow rows for the events table of schemas/clickhouse.sql (in
    /// the source tree) on standard output; loading them twice keeps one copy after merges,
    /// and its usage view gives the numbers of `insights usage`. docs/fleet.md shows the
    /// commands.
    Export(crate::export::Args),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell).
    ///
    /// The scripts for bash, zsh and fish are also in completions/ in the source tree.
    Completions {
        /// The shell to complete for.
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
    ///
    /// A directory's files are read in path order (a Claude Code session file and its
    /// subagents' files as one conversation, line by line in time order), hidden folders
    /// included (every command reads directories so); symbolic links to directories are not
    /// followed.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The provider of the input, or `auto` to detect it line by line.
    ///
    /// `auto` detects each line's provider by its shape (the man page's DETECTION section has
    /// the rules); a named provider reads every line as its own, and `gemini` reads Gemini
    /// CLI's chat files too. Most Qwen Code lines, Cursor's `system/init` and `user` lines and
    /// Amp lines without a session id are also valid Claude lines, and `auto` reads them as
    /// Claude's: name the provider for a whole stream of one of them. A line that is already
    /// an InsightsEvent passes through either way.
    ///
    /// When more than half of an input's lines given to the provider (at least 10) fall back to
    /// `raw` events, a warning on standard error asks whether it is the right one.
    #[arg(long, value_name = "PROVIDER", default_value = "auto", value_parser = from_values())]
    pub from: String,

    /// Attach the original input line to every event as `raw`.
    ///
    /// Events of type `raw` always carry it.
    #[arg(long)]
    pub raw: bool,

    /// Omit `timestamp` where the input line carries no time of its own.
    ///
    /// Without it, such events are stamped with the time their line was read, so output
    /// differs from run to run. Use it for golden files and diffs. Times the provider wrote
    /// into a line are still used. Not with `--compat cc-insights`, whose readers require a
    /// timestamp on every event.
    #[arg(long, conflicts_with = "compat")]
    pub no_timestamp: bool,

    /// Name the turn of every event of a turn (`turnId`, the adapter contract's run id).
    ///
    /// The turns are those `insights reduce` finds: a turn runs from its `turn_start` (or,
    /// where the agent writes none, its prompt or first output) to its `turn_complete`, both
    /// included, and its id is the one the agent gives (Codex app-server's turn ids, AceClaw's
    /// request ids), else the id of its first event. A subagent's events are in the turn of
    /// their call. Events outside any turn, and InsightsEvents passed through, name none.
    /// Without it, `turnId` is written only where the agent's line names its turn. Converts on
    /// one thread (`--jobs` is ignored).
    #[arg(long)]
    pub turn_ids: bool,

    /// Flush standard output after every input line.
    #[arg(long, conflicts_with = "block_buffered")]
    pub line_buffered: bool,

    /// Flush standard output only when its buffer (64 KiB) is full and at the end.
    ///
    /// By default output is flushed after each line on a terminal, and elsewhere whenever no
    /// further complete input line is ready, so live pipes see every event at once and a file
    /// is written in large blocks. Not with --line-buffered.
    ///
    /// On Linux, when standard output is a pipe, every command raises its capacity to 1 MiB
    /// where the system allows it, so that the writer waits less often for the reader; when
    /// lines are flushed does not change.
    #[arg(long)]
    pub block_buffered: bool,

    /// Stop with status 1 at the first input line that cannot be read.
    #[arg(long)]
    pub strict: bool,

    /// Restrict output to a consumer's event types.
    ///
    /// The only consumer is `cc-insights`. `plan_update` becomes `text` of kind `plan`, with
    /// the entries in `extensions.planEntries`, and `error` becomes `text` of kind `error`,
    /// with the details in `extensions.error`. Dropped: `turn_start`, `permission_response`,
    /// `tool_update`, `file_change`, `task_update`, `hook`, `notice`, `raw`, the
    /// `session_status` events whose status CC-Insights lacks, and the `usage_update` events
    /// without token counts. The same rules apply to InsightsEvents that pass through. When
    /// anything is dropped, a note on standard error counts the dropped events by type.
    #[arg(long, value_enum, value_name = "CONSUMER")]
    pub compat: Option<Compat>,

    /// Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and
    /// skipped.
    ///
    /// BYTES is a number, or a number followed by K, M or G (or KiB, MiB, GiB: powers of
    /// 1024) or KB, MB, GB (powers of 1000).
    #[arg(long, value_name = "BYTES", default_value = "64MiB", value_parser = parse_bytes)]
    pub max_line_bytes: usize,

    /// Mask secrets in every string of the output, `raw` included, as `[REDACTED:KIND]`.
    ///
    /// For logs to share and store. The kinds: `anthropic-key` (`sk-ant-...`), `openai-key`
    /// (`sk-...`), `google-api-key` (`AIza...`), `github-token` (`ghp_`, `gho_`, `ghu_`,
    /// `ghs_`, `ghr_`, `github_pat_`...), `aws-access-key` (`AKIA`, `ASIA`...), `slack-token`
    /// (`xoxb-...`), `bearer-token` (the token after `Bearer`), `private-key` (a
    /// `-----BEGIN ... PRIVATE KEY-----` block), `url-password` (the password in
    /// `scheme://user:password@host`), and `password` or `secret` for the value of a pair
    /// whose name ends in password, passwd, secret, token, apikey, accesskey, secretkey or
    /// privatekey (`DB_PASSWORD=...`, `password: ...`, and JSON members such as
    /// `"password": "..."`). The README's Robustness section has the exact shapes.
    ///
    /// Only the contents of strings change: every line stays valid JSON with the same members.
    /// Redacting redacted output changes nothing.
    #[arg(long)]
    pub redact: bool,

    /// Convert on N threads; the output is the same, byte for byte.
    ///
    /// Lines are converted in chunks of about 1 MiB, on N cores, and written in input order;
    /// the diagnostics and the exit status too are those of one thread. The default is one thread for a pipe or terminal, `--line-buffered` or files under
    /// 8 MiB in all (standard input redirected from a file counts as that file), and one per
    /// core otherwise. With N > 1 on a pipe, a chunk goes out as soon as no further line is
    /// ready, so a live pipe still sees events at once. A run that reads a Claude Code session
    /// file with its subagents' files merges them on one thread.
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

/// Inputs of the commands that read events: normalized logs or any provider's raw output.
#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Input files; a directory stands for every `*.jsonl` file below it (an agent's
    /// session folder such as ~/.codex/sessions); `-` or none reads standard input.
    ///
    /// A directory's files are read in path order, hidden folders included; symbolic links
    /// to directories are not followed. `reduce` and `replay` read a Claude Code session file
    /// and its subagents' files as one conversation, line by line in time order; `validate`
    /// checks each file as written.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The provider of raw input, or `auto` to detect it line by line (normalized
    /// InsightsEvent lines are always recognised).
    #[arg(long, value_name = "PROVIDER", default_value = "auto", value_parser = from_values())]
    pub from: String,

    /// Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and
    /// skipped.
    ///
    /// BYTES is a number, or a number followed by K, M or G (or KiB, MiB, GiB: powers of
    /// 1024) or KB, MB, GB (powers of 1000).
    #[arg(long, value_name = "BYTES", default_value = "64MiB", value_parser = parse_bytes)]
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
            flush: FlushPolicy::WhenIdle,
            strict: false,
            cc_insights: false,
            turn_ids: false,
            max_line: self.max_line_bytes,
        })
    }
}

/// Conversion options for the commands that keep events or send them on (`store`, `export`):
/// times are the events' own, a line without one is not stamped with the moment it was read
/// (it would differ from run to run, and an event kept twice must be the same event).
pub fn keeping_options(from: &str, max_line: usize) -> anyhow::Result<crate::convert::Options> {
    Ok(crate::convert::Options {
        forced: forced(from)?,
        raw: false,
        clock: false,
        flush: FlushPolicy::WhenIdle,
        strict: false,
        cc_insights: false,
        turn_ids: false,
        max_line,
    })
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

/// A byte size as the options take it: a number, optionally followed by `K`, `M` or `G` (or
/// `KiB`, `MiB`, `GiB`: powers of 1024, as `sort -S` and `head -c` read them) or `KB`, `MB`,
/// `GB` (powers of 1000); the letters in either case. Every option that is a byte size parses
/// with it.
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?}: expected a number of bytes such as 1048576, 100M or 1GiB"))?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?} (use K, M or G, KiB, MiB, GiB, or KB, MB, GB)"
            ))
        }
    };
    n.checked_mul(mult)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| format!("{s:?}: too large"))
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

pub fn from_values() -> PossibleValuesParser {
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
    fn byte_sizes_take_units() {
        for (s, n) in [
            ("40", 40),
            ("100M", 100 << 20),
            ("100m", 100 << 20),
            ("64MiB", 64 << 20),
            ("2K", 2048),
            ("2KB", 2000),
            ("1G", 1 << 30),
            ("1gb", 1_000_000_000),
            ("0", 0),
        ] {
            assert_eq!(parse_bytes(s), Ok(n), "{s}");
        }
        for s in [
            "",
            "M",
            "1.5M",
            "-1",
            "10X",
            "99999999999999999999",
            "18446744073709551615G",
        ] {
            assert!(parse_bytes(s).is_err(), "{s}");
        }
        let cli = Cli::try_parse_from(["insights", "--max-line-bytes", "100M"]).unwrap();
        assert_eq!(cli.convert.max_line_bytes, 100 << 20);
        let cli = Cli::try_parse_from(["insights"]).unwrap();
        assert_eq!(cli.convert.max_line_bytes, 64 << 20);
    }

    #[test]
    fn unknown_provider_is_a_usage_error() {
        assert!(Cli::try_parse_from(["insights", "--from", "nope"]).is_err());
    }
}
