//! `insights usage` and `insights sessions`: tokens and cost from the agents' own session
//! files, grouped, and the sessions those files hold.
//!
//! Both read only what they count: each provider module gives a line's facts (`line_facts`:
//! tokens, model, session, prompt) from the same wire types its event mapping reads, so the
//! numbers cannot drift from the events', without building events.

mod facts;
mod homes;
mod prices;
mod scan;
pub mod sessions;
mod table;

pub use facts::{FileMemo, LineFacts, Tokens};
pub use homes::Agent;

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
    /// (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp; CLAUDE_CONFIG_DIR and
    /// CODEX_HOME are honoured).
    ///
    /// The standard places are Claude Code's ~/.claude/projects and
    /// $XDG_CONFIG_HOME/claude/projects (CLAUDE_CONFIG_DIR, a comma-separated list, replaces
    /// both), Codex's ~/.codex/sessions and ~/.codex/archived_sessions (CODEX_HOME replaces
    /// ~/.codex), and Gemini CLI's ~/.gemini/tmp/*/chats. A directory stands for the `*.jsonl`
    /// files below it.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Read the standard places under DIR instead of your home (another machine's home,
    /// a backup).
    ///
    /// The agents' variables (CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME, CODEX_HOME) are then
    /// ignored.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Only this agent (repeat or separate with commas).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub agent: Vec<Agent>,

    /// Only what happened on or after this day (YYYY-MM-DD, in --tz).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,

    /// Only what happened on or before this day (YYYY-MM-DD, in --tz).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,

    /// Only projects whose directory contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,

    /// The time zone of days, weeks and months: UTC (the default), local, an offset such
    /// as +09:00, or a name from /usr/share/zoneinfo such as Europe/Paris.
    #[arg(long, value_name = "ZONE", default_value = "UTC")]
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
}

const AFTER_HELP: &str = "\
Examples:
  insights usage                            # every agent, by day, from the standard places
  insights usage --by day,model --since 2026-11-01
  insights usage --by month,agent --json
  insights usage --root /mnt/old-laptop/home/me --by project
  insights usage ~/.codex/sessions --tz Europe/Paris

Tokens: input is uncached input; output includes reasoning; reasoning is the part of output
the agent reports as reasoning. Cost: the agent's own figure, else the shipped price table
(data/prices.json); unknown (? or null) for a model it has no price for.

Exit status: 0 done, 2 usage or I/O error.";

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
}

pub fn load(src: &Source) -> anyhow::Result<Loaded> {
    let zone = Zone::parse(&src.tz)?;
    let since = src.since.as_deref().map(parse_day).transpose()?;
    let until = src.until.as_deref().map(parse_day).transpose()?;
    let prices = prices::Prices::load(src.prices.as_deref())?;
    let files = if src.paths.is_empty() {
        homes::standard(src.root.as_deref())
    } else {
        if src.root.is_some() {
            bail!("--root reads the standard places: give it or paths, not both");
        }
        for p in &src.paths {
            if !p.exists() {
                bail!("{}: no such file or directory", p.display());
            }
        }
        homes::given(&src.paths)
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
    } else {
        let mut head: Vec<String> = args.by.iter().map(|k| k.name().to_owned()).collect();
        head.extend(
            [
                "input",
                "output",
                "cache read",
                "cache write",
                "reasoning",
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
        right.extend([true; 6]);
        table::render(&head, &right, &rows, Some(&row(foot, &total)))
    };
    write_out(&text)?;
    report(&l);
    Ok(ExitCode::SUCCESS)
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

/// Days since 1970-01-01 as YYYY-MM-DD.
pub fn format_day(d: i64) -> String {
    let (y, m, day) = crate::time::civil_from_days(d);
    format!("{y:04}-{m:02}-{day:02}")
}

fn parse_day(s: &str) -> anyhow::Result<i64> {
    let t = crate::time::parse(&format!("{s}T00:00:00Z"))
        .ok_or_else(|| anyhow!("{s:?}: expected a day as YYYY-MM-DD"))?;
    Ok(crate::time::days_from_civil(
        i64::from(t.year),
        i64::from(t.month),
        i64::from(t.day),
    ))
}

/// The time zone that days are counted in.
pub enum Zone {
    Fixed(i64),
    /// The C library's zone: `TZ` as set from `--tz`, or the system's for `local`.
    System,
}

impl Zone {
    fn parse(s: &str) -> anyhow::Result<Zone> {
        if s.eq_ignore_ascii_case("utc") || s == "Z" {
            return Ok(Zone::Fixed(0));
        }
        if let Some(rest) = s.strip_prefix(['+', '-']) {
            let sign = if s.starts_with('-') { -1 } else { 1 };
            let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
            let (Ok(h), Ok(m)) = (h.parse::<i64>(), m.parse::<i64>()) else {
                bail!("--tz {s:?}: expected an offset such as +09:00");
            };
            if h > 23 || m > 59 {
                bail!("--tz {s:?}: expected an offset such as +09:00");
            }
            return Ok(Zone::Fixed(sign * (h * 60 + m) * 60_000));
        }
        if s != "local" {
            if s.contains("..") || !PathBuf::from("/usr/share/zoneinfo").join(s).is_file() {
                bail!("--tz {s:?}: no such time zone (try UTC, local, +09:00 or Europe/Paris)");
            }
            // Set before any thread starts: the C library reads it in tzset().
            std::env::set_var("TZ", s);
        }
        #[cfg(unix)]
        {
            extern "C" {
                // POSIX; the libc crate does not declare it.
                fn tzset();
            }
            // SAFETY: tzset reads TZ; no other thread runs yet.
            unsafe { tzset() };
            Ok(Zone::System)
        }
        #[cfg(not(unix))]
        bail!("--tz {s:?}: only UTC and offsets on this system")
    }

    /// The day (days since 1970-01-01) of a time in this zone.
    pub fn day(&self, ms: i64) -> i64 {
        (ms + self.offset(ms)).div_euclid(86_400_000)
    }

    fn offset(&self, ms: i64) -> i64 {
        match self {
            Zone::Fixed(o) => *o,
            #[cfg(unix)]
            Zone::System => {
                let t = ms.div_euclid(1000) as libc::time_t;
                // SAFETY: localtime_r writes only the tm it is given.
                let mut tm: libc::tm = unsafe { std::mem::zeroed() };
                if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
                    0
                } else {
                    tm.tm_gmtoff * 1000
                }
            }
            #[cfg(not(unix))]
            Zone::System => 0,
        }
    }
}
