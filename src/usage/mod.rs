//! `insights usage` and `insights sessions`: tokens and cost from the agents' own session
//! files, grouped, and the sessions those files hold.
//!
//! Both read only what they count: each provider module gives a line's facts (`line_facts`:
//! tokens, model, session, prompt) from the same wire types its event mapping reads, so the
//! numbers cannot drift from the events', without building events.

mod facts;
pub mod homes;
pub mod prices;
mod scan;
pub mod sessions;
mod table;

pub use facts::{FileMemo, LineFacts, Tokens};
pub use homes::Agent;

use crate::time::{format_day, parse_day, Zone};
use anyhow::{anyhow, bail, Context};
use scan::{Entry, Scan};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// What both commands read and which of it they keep.
#[derive(Debug, clap::Args)]
pub struct Source {
    /// Session files or directories; none reads the agents' standard places
    /// (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, ~/.qwen/projects,
    /// ~/.local/share/opencode/opencode.db; CLAUDE_CONFIG_DIR and CODEX_HOME are honoured).
    ///
    /// The standard places are Claude Code's ~/.claude/projects and
    /// $XDG_CONFIG_HOME/claude/projects (CLAUDE_CONFIG_DIR, a comma-separated list, replaces
    /// both), Codex's ~/.codex/sessions and ~/.codex/archived_sessions (CODEX_HOME replaces
    /// ~/.codex), Gemini CLI's ~/.gemini/tmp/*/chats, Qwen Code's ~/.qwen/projects/*/chats and
    /// */subagents, and OpenCode's database, $XDG_DATA_HOME/opencode/opencode.db (else
    /// ~/.local/share/opencode/opencode.db), opened read-only. A directory stands for the
    /// `*.jsonl` files below it and an `opencode.db` in it.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Read the standard places under DIR instead of your home (another machine's home,
    /// a backup); repeat it to read several homes.
    ///
    /// The agents' variables (CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME, CODEX_HOME) are then
    /// ignored. A DIR that does not exist is an error (status 2).
    #[arg(long, value_name = "DIR")]
    pub root: Vec<PathBuf>,

    /// Only this agent (repeat or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub agent: Vec<Agent>,

    /// Only what happened on or after this day (YYYY-MM-DD or YYYYMMDD, in --tz).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,

    /// Only what happened on or before this day (YYYY-MM-DD or YYYYMMDD, in --tz).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,

    /// Only projects whose directory contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,

    /// The time zone of days, weeks and months: local (the default: TZ, else
    /// /etc/localtime), UTC, an offset such as +09:00, or a name from /usr/share/zoneinfo
    /// such as Europe/Paris.
    #[arg(
        long,
        visible_alias = "timezone",
        value_name = "ZONE",
        default_value = "local"
    )]
    pub tz: String,

    /// Prices to use over the shipped table, model by model (data/prices.json's shape).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,

    /// Write JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Threads reading files (default: one per core).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<std::num::NonZeroUsize>,

    /// Accept finding nothing: exit 0 when the places read hold no session with usage.
    ///
    /// Without it, finding nothing to count (no session file, or none that holds usage) is
    /// exit status 1, after a message that names the places looked in.
    #[arg(long)]
    pub allow_empty: bool,
}

const AFTER_HELP: &str = "\
Examples:
  insights usage                            # every agent, by day, from the standard places
  insights usage --by day,model --since 2026-11-01
  insights usage --by month,agent --json
  insights usage --root /mnt/old-laptop/home/me --root /mnt/desktop/home/me --by project
  insights usage ~/.codex/sessions --tz Europe/Paris --since 20261101

Days are those of the local time zone unless --tz says otherwise, as ccusage counts them.
Tokens: input is uncached input; output includes reasoning; reasoning is the part of output
the agent reports as reasoning; total is input, output, cache read and cache write. Cost: the
agent's own figure, else the shipped price table (data/prices.json); unknown (? or null) for
a model it has no price for.

Exit status: 0 done, 1 no usage found (no session file, or none with usage) unless
--allow-empty, 2 usage or I/O error (a path or --root that does not exist).";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// Group by these keys, in order (separate with commas): day, week (its Monday), month,
    /// session, model, project (the working directory), agent.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "day")]
    pub by: Vec<Key>,

    #[command(flatten)]
    pub source: Source,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Key {
    Day,
    Week,
    Month,
    Session,
    Model,
    Project,
    Agent,
}

impl Key {
    fn name(self) -> &'static str {
        match self {
            Key::Day => "day",
            Key::Week => "week",
            Key::Month => "month",
            Key::Session => "session",
            Key::Model => "model",
            Key::Project => "project",
            Key::Agent => "agent",
        }
    }
}

/// Read and filtered: the entries kept, priced.
pub struct Loaded {
    pub scan: Scan,
    /// Indexes into `scan.entries` of the entries the filters keep.
    pub kept: Vec<usize>,
    /// Each kept entry's cost, in `kept`'s order: its own figure, else the table's; `None`
    /// when neither knows the model.
    pub costs: Vec<Option<f64>>,
    pub zone: Zone,
    pub unpriced: BTreeSet<String>,
    /// Where the files were looked for: the standard places, or the paths given.
    pub looked: Vec<PathBuf>,
}

pub fn load(src: &Source) -> anyhow::Result<Loaded> {
    let zone = Zone::parse(&src.tz).map_err(|e| anyhow!(e))?;
    let day = |s: &Option<String>| {
        s.as_deref()
            .map(parse_day)
            .transpose()
            .map_err(|e| anyhow!(e))
    };
    let (since, until) = (day(&src.since)?, day(&src.until)?);
    let prices = prices::Prices::load(src.prices.as_deref())?;
    let (files, looked) = if src.paths.is_empty() {
        for r in &src.root {
            match std::fs::metadata(r) {
                Err(e) => bail!("--root {}: {}", r.display(), crate::diag::io_words(&e)),
                Ok(m) if !m.is_dir() => bail!("--root {}: not a directory", r.display()),
                Ok(_) => {}
            }
        }
        homes::standard(&src.root)
    } else {
        if !src.root.is_empty() {
            bail!("--root reads the standard places: give it or paths, not both");
        }
        for p in &src.paths {
            if let Err(e) = std::fs::metadata(p) {
                bail!("{}: {}", p.display(), crate::diag::io_words(&e));
            }
        }
        (homes::given(&src.paths), src.paths.clone())
    };
    let jobs = src.jobs.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(1)
    });
    let scan = scan::scan(files, jobs);
    let mut kept = Vec::new();
    let mut costs = Vec::new();
    let mut unpriced = BTreeSet::new();
    for (i, e) in scan.entries.iter().enumerate() {
        if !src.agent.is_empty() && !src.agent.contains(&e.agent) {
            continue;
        }
        if let Some(p) = &src.project {
            if !scan.str(e.project).contains(p.as_str()) {
                continue;
            }
        }
        if since.is_some() || until.is_some() {
            let Some(day) = e.time.map(|t| zone.day(t)) else {
                continue;
            };
            if since.is_some_and(|s| day < s) || until.is_some_and(|u| day > u) {
                continue;
            }
        }
        kept.push(i);
        let cost = if !e.response {
            Some(0.0)
        } else {
            e.cost_usd.or_else(|| {
                let model = scan.str(e.model);
                let c = prices.find(model).map(|p| p.cost(&e.tokens));
                if c.is_none() {
                    unpriced.insert(if model.is_empty() {
                        "(no model)".to_owned()
                    } else {
                        model.to_owned()
                    });
                }
                c
            })
        };
        costs.push(cost);
    }
    Ok(Loaded {
        scan,
        kept,
        costs,
        zone,
        unpriced,
        looked,
    })
}

/// Sums of tokens and cost.
#[derive(Debug, Default, Clone)]
pub struct Sum {
    pub tokens: Tokens,
    /// `None` once any part's cost is unknown.
    pub cost: Option<f64>,
    pub responses: u64,
}

impl Sum {
    fn zero() -> Sum {
        Sum {
            cost: Some(0.0),
            ..Sum::default()
        }
    }

    fn add(&mut self, t: &Tokens, cost: Option<f64>) {
        self.tokens.add(t);
        self.responses += 1;
        self.cost = match (self.cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    fn json(&self, into: &mut Map<String, Value>) {
        let t = &self.tokens;
        into.insert("inputTokens".into(), json!(t.input));
        into.insert("outputTokens".into(), json!(t.output));
        into.insert("cacheReadTokens".into(), json!(t.cache_read));
        into.insert("cacheCreationTokens".into(), json!(t.cache_creation));
        into.insert("reasoningTokens".into(), json!(t.reasoning));
        into.insert("totalTokens".into(), json!(t.total()));
        into.insert("costUsd".into(), json!(self.cost.map(round_cents_fraction)));
    }
}

/// Costs to a millionth of a dollar: sums of many small products carry float noise.
fn round_cents_fraction(c: f64) -> f64 {
    (c * 1e6).round() / 1e6
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let l = load(&args.source)?;
    let mut groups: BTreeMap<Vec<String>, Sum> = BTreeMap::new();
    let mut total = Sum::zero();
    for (k, &i) in l.kept.iter().enumerate() {
        let e = &l.scan.entries[i];
        if !e.response {
            continue;
        }
        let keys: Vec<String> = args.by.iter().map(|&key| group_key(&l, e, key)).collect();
        groups
            .entry(keys)
            .or_insert_with(Sum::zero)
            .add(&e.tokens, l.costs[k]);
        total.add(&e.tokens, l.costs[k]);
    }
    let text = if args.source.json {
        let rows: Vec<Value> = groups
            .iter()
            .map(|(keys, sum)| {
                let mut m = Map::new();
                for (key, v) in args.by.iter().zip(keys) {
                    m.insert(key.name().into(), json!(v));
                }
                sum.json(&mut m);
                Value::Object(m)
            })
            .collect();
        let mut t = Map::new();
        total.json(&mut t);
        let doc = json!({"rows": rows, "totals": t});
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else if groups.is_empty() {
        // Nothing to tabulate: standard error says why (`outcome`).
        String::new()
    } else {
        let mut head: Vec<String> = args.by.iter().map(|k| k.name().to_owned()).collect();
        head.extend(
            [
                "input",
                "output",
                "cache read",
                "cache write",
                "reasoning",
                "total tokens",
                "cost (USD)",
            ]
            .map(str::to_owned),
        );
        let row = |keys: Vec<String>, s: &Sum| {
            let mut r = keys;
            let t = &s.tokens;
            for n in [
                t.input,
                t.output,
                t.cache_read,
                t.cache_creation,
                t.reasoning,
                t.total(),
            ] {
                r.push(table::thousands(n));
            }
            r.push(table::dollars(s.cost));
            r
        };
        let rows: Vec<Vec<String>> = groups.iter().map(|(k, s)| row(k.clone(), s)).collect();
        let mut foot = vec![String::new(); args.by.len()];
        foot[0] = "total".to_owned();
        let mut right = vec![false; args.by.len()];
        right.extend([true; 7]);
        table::render(&head, &right, &rows, Some(&row(foot, &total)))
    };
    write_out(&text)?;
    report(&l);
    let found = l.scan.entries.iter().any(|e| e.response);
    Ok(outcome(
        &l,
        &args.source,
        "token usage",
        found,
        !groups.is_empty(),
    ))
}

/// What a command read that it could not count, on standard error.
pub fn report(l: &Loaded) {
    for e in &l.scan.errors {
        eprintln!("insights: {e}");
    }
    if !l.unpriced.is_empty() {
        let names: Vec<&str> = l.unpriced.iter().map(String::as_str).collect();
        eprintln!(
            "insights: no price for {} (cost shown as unknown; add them with --prices FILE)",
            names.join(", ")
        );
    }
}

/// How a run of `usage` or `sessions` ends, from what it found: `found`, whether the files
/// read hold anything of `what` it counts (`"token usage"`, `"sessions"`), before the filters;
/// `shown`, whether its output has a row. Finding nothing is said on standard error, with the
/// places looked in and what each held, and is status 1 unless `--allow-empty` (ccusage says
/// "No usage data found." and exits 0; a script or a typo in a path deserves a status). When
/// the files hold something but the filters kept none of it, a note says so and the status is
/// 0: that is an answer (nothing on that day), not a failure to find.
pub fn outcome(l: &Loaded, src: &Source, what: &str, found: bool, shown: bool) -> ExitCode {
    if found {
        if !shown {
            let filters: Vec<&str> = [
                ("--since", src.since.is_some()),
                ("--until", src.until.is_some()),
                ("--agent", !src.agent.is_empty()),
                ("--project", src.project.is_some()),
            ]
            .into_iter()
            .filter_map(|(f, on)| on.then_some(f))
            .collect();
            eprintln!(
                "insights: note: the {} files read hold {what}, but none that {} keeps",
                l.scan.files.len(),
                filters.join(" and ")
            );
        }
        return ExitCode::SUCCESS;
    }
    let places: Vec<String> = l
        .looked
        .iter()
        .map(|place| {
            let n = l
                .scan
                .files
                .iter()
                .filter(|f| f.path.starts_with(place))
                .count();
            let held = match n {
                _ if !place.exists() => "missing".to_owned(),
                0 => "no *.jsonl files".to_owned(),
                1 => "1 file".to_owned(),
                n => format!("{n} files"),
            };
            format!("{} ({held})", place.display())
        })
        .collect();
    let accept = if src.allow_empty {
        ""
    } else {
        " (--allow-empty accepts this)"
    };
    eprintln!("insights: no {what} found{accept}");
    eprintln!("insights: looked in {}", places.join(", "));
    if !l.scan.files.is_empty() {
        eprintln!(
            "insights: these commands read the agents' own session files; a stream capture \
             (claude -p --output-format stream-json, codex exec --json) is not one: \
             `insights reduce FILE` totals its tokens"
        );
    }
    if src.allow_empty {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

pub fn write_out(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("cannot write to standard output")
}

fn group_key(l: &Loaded, e: &Entry, key: Key) -> String {
    let day = || e.time.map(|t| l.zone.day(t));
    match key {
        Key::Day => day().map(format_day),
        Key::Week => day().map(|d| format_day(d - (d + 3).rem_euclid(7))),
        Key::Month => day().map(|d| format_day(d)[..7].to_owned()),
        Key::Session => Some(l.scan.str(e.session).to_owned()),
        Key::Model => Some(l.scan.str(e.model).to_owned()),
        Key::Project => Some(l.scan.str(e.project).to_owned()),
        Key::Agent => Some(e.agent.name().to_owned()),
    }
    .filter(|s| !s.is_empty())
    .unwrap_or_else(|| "unknown".to_owned())
}
