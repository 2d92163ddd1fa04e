//! `insights usage` and `insights sessions`: tokens and cost from the agents' own session
//! files, grouped, and the sessions those files hold.
//!
//! Both read only what they count: each provider module gives a line's facts (`line_facts`:
//! tokens, model, session, prompt) from the same wire types its event mapping reads, so the
//! numbers cannot drift from the events', without building events.

mod amp;
pub mod blocks;
mod codebuff;
mod copilot;
mod droid;
mod facts;
mod goose;
mod hermes;
pub mod homes;
mod kilo;
mod kimi;
mod openclaw;
mod pi;
pub mod prices;
pub mod reader;
pub mod scan;
pub mod sessions;
pub mod statusline;
mod table;

pub use facts::{FileMemo, LineFacts, Marks, Tokens, Wanted};
pub use homes::Agent;

use crate::ids::Hash64;
use crate::time::{format_day, parse_day, Zone};
use anyhow::{anyhow, bail, Context};
use scan::{Entry, Scan};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::BuildHasherDefault;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// What both commands read and which of it they keep.
#[derive(Debug, Default, clap::Args)]
pub struct Source {
    /// Session files or directories; none reads the agents' standard places
    /// (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, ~/.qwen/projects,
    /// ~/.local/share/opencode/opencode.db, and the other agents' places listed under --agent;
    /// CLAUDE_CONFIG_DIR, CODEX_HOME and the agents' *_DIR variables are honoured).
    ///
    /// The standard places are Claude Code's ~/.claude/projects and
    /// $XDG_CONFIG_HOME/claude/projects (CLAUDE_CONFIG_DIR, a comma-separated list, replaces
    /// both), Codex's ~/.codex/sessions and ~/.codex/archived_sessions (CODEX_HOME replaces
    /// ~/.codex), Gemini CLI's ~/.gemini/tmp/*/chats, Qwen Code's ~/.qwen/projects/*/chats and
    /// */subagents, and OpenCode's database, $XDG_DATA_HOME/opencode/opencode.db (else
    /// ~/.local/share/opencode/opencode.db), opened read-only; the other agents' places are
    /// listed under --agent. A directory stands for the `*.jsonl` files below it, an
    /// `opencode.db` in it, and the other agents' files below it (Amp's `threads/*.json`,
    /// Droid's `*.settings.json` under `.factory/`, OpenClaw's files, Codebuff's
    /// `chats/*/chat-messages.json`, Kilo's `kilo.db`, Goose's `goose/**/sessions.db` and
    /// Hermes' `.hermes/state.db`, read-only; Copilot's `.copilot/otel/*.jsonl` are among the
    /// `*.jsonl`).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Read the standard places under DIR instead of your home (another machine's home,
    /// a backup); repeat it to read several homes.
    ///
    /// The agents' variables (CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME, CODEX_HOME, XDG_DATA_HOME,
    /// AMP_DATA_DIR, PI_AGENT_DIR, KIMI_DATA_DIR, KILO_DATA_DIR, GOOSE_PATH_ROOT,
    /// DROID_SESSIONS_DIR, OPENCLAW_DIR, HERMES_HOME, COPILOT_OTEL_FILE_EXPORTER_PATH,
    /// CODEBUFF_DATA_DIR) are then ignored. A DIR that does not exist is an error (status 2).
    #[arg(long, value_name = "DIR")]
    pub root: Vec<PathBuf>,

    /// Only this agent (repeat or separate with commas); `insights usage --help` lists the
    /// agents read and where their files are.
    ///
    /// The places are under your home, or under each --root. The variables in parentheses
    /// replace them (a comma-separated list for the *_DIR ones), as ccusage reads them; they
    /// are ignored with --root.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "AGENT")]
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

    /// Answer from an insights store (`insights store`) instead of reading the files: the same
    /// output, from what was stored. Without a value, the default store
    /// ($XDG_DATA_HOME/insights/insights.db, else ~/.local/share/insights/insights.db).
    ///
    /// PATHs given with it keep only the files stored from under them (give them before
    /// `--db`, or write `--db=PATH`). Paths are shown absolute, as the store keeps them.
    #[arg(long, value_name = "PATH", num_args = 0..=1, conflicts_with = "root")]
    pub db: Option<Option<PathBuf>>,

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
  insights usage --by block --agent claude     # Claude's 5-hour billing blocks
  insights usage --by block --active --json    # the block in progress, its burn rate
  insights usage --by month,agent --db         # from the store (insights store)

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
    /// session, model, project (the working directory), agent; or block alone.
    ///
    /// `block` cuts each agent's responses into billing blocks, the windows Claude's plans
    /// are metered in, as ccusage's `blocks` does: a block starts at the hour (UTC) of its
    /// first response and lasts --block-hours; a response after the window, or after a pause
    /// as long, starts the next, and a longer pause is a gap row. The active block (its last
    /// response less than the window ago, and its window not over) has a burn rate and a
    /// projection to its end.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "day")]
    pub by: Vec<Key>,

    /// The length of a billing block, in hours (--by block).
    #[arg(long, value_name = "HOURS", default_value = "5", value_parser = positive_hours)]
    pub block_hours: f64,

    /// Only the active block (--by block): the one in progress, if there is one.
    #[arg(long)]
    pub active: bool,

    /// Under each row, a row per model: its tokens and cost (JSON: `breakdown`, a list of
    /// them in each row).
    #[arg(long)]
    pub breakdown: bool,

    /// The order of the rows: asc (oldest, or first by key, first) or desc.
    #[arg(long, value_enum, default_value = "asc")]
    pub order: Order,

    /// A narrower table: the keys, input, output, total tokens and cost (for screenshots and
    /// narrow terminals). JSON is unchanged.
    #[arg(long)]
    pub compact: bool,

    #[command(flatten)]
    pub source: Source,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    Asc,
    Desc,
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
    /// Billing blocks (`--block-hours`); stands alone.
    Block,
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
            Key::Block => "block",
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
    /// Where the files were looked for: the standard places, or the paths given (or the
    /// store, with `from_db`).
    pub looked: Vec<PathBuf>,
    /// Read from a store (`--db`).
    pub from_db: bool,
}

pub fn load(src: &Source, wanted: Wanted) -> anyhow::Result<Loaded> {
    let zone = Zone::parse(&src.tz).map_err(|e| anyhow!(e))?;
    let day = |s: &Option<String>| {
        s.as_deref()
            .map(parse_day)
            .transpose()
            .map_err(|e| anyhow!(e))
    };
    let (since, until) = (day(&src.since)?, day(&src.until)?);
    let prices = prices::Prices::load(src.prices.as_deref())?;
    let (scan, looked) = match &src.db {
        Some(db) => {
            let path = match db {
                Some(p) => p.clone(),
                None => crate::store::default_db()?,
            };
            let store = crate::store::query::Db::open(&path)?;
            (crate::store::tally::scan(&store, &src.paths)?, vec![path])
        }
        None => read_files(src, wanted)?,
    };
    let mut kept = Vec::new();
    let mut costs = Vec::new();
    let mut unpriced = BTreeSet::new();
    // Each model's price, looked up once: a home has a few models and many responses.
    let mut price_of: Vec<Option<Option<&prices::Price>>> = vec![None; scan.strings.len()];
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
                let price = match price_of.get_mut(e.model as usize) {
                    Some(Some(known)) => *known,
                    slot => {
                        let model = scan.str(e.model);
                        let price = prices.find(model);
                        if price.is_none() {
                            unpriced.insert(if model.is_empty() {
                                "(no model)".to_owned()
                            } else {
                                model.to_owned()
                            });
                        }
                        if let Some(slot) = slot {
                            *slot = Some(price);
                        }
                        price
                    }
                };
                price.map(|p| p.cost(&e.tokens))
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
        from_db: src.db.is_some(),
    })
}

/// Reads the session files (`usage` without `--db`): the scan, and the places looked in.
fn read_files(src: &Source, wanted: Wanted) -> anyhow::Result<(Scan, Vec<PathBuf>)> {
    let jobs = src.jobs.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(1)
    });
    if src.paths.is_empty() {
        for r in &src.root {
            match std::fs::metadata(r) {
                Err(e) => bail!("--root {}: {}", r.display(), crate::diag::io_words(&e)),
                Ok(m) if !m.is_dir() => bail!("--root {}: not a directory", r.display()),
                Ok(_) => {}
            }
        }
        // The files are read while the places are walked.
        let places = homes::places_of(&src.root, None);
        let scan = scan::scan_from(jobs, wanted, |give| homes::walk_places(&places, None, give));
        return Ok((scan, places.into_iter().map(|(dir, _)| dir).collect()));
    }
    if !src.root.is_empty() {
        bail!("--root reads the standard places: give it or paths, not both");
    }
    for p in &src.paths {
        if let Err(e) = std::fs::metadata(p) {
            bail!("{}: {}", p.display(), crate::diag::io_words(&e));
        }
    }
    Ok((
        scan::scan(homes::given(&src.paths), jobs, wanted),
        src.paths.clone(),
    ))
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

/// A row's sum, and with --breakdown its models'.
#[derive(Debug)]
struct Group {
    sum: Sum,
    models: BTreeMap<String, Sum>,
}

impl Default for Group {
    fn default() -> Group {
        Group {
            sum: Sum::zero(),
            models: BTreeMap::new(),
        }
    }
}

impl Group {
    fn breakdown_json(&self) -> Value {
        let models = self.models.iter().map(|(model, s)| {
            let mut m = Map::new();
            m.insert("model".into(), json!(model));
            s.json(&mut m);
            Value::Object(m)
        });
        Value::Array(models.collect())
    }
}

/// The number columns of a table: all of them, or with --compact input, output, total tokens
/// and cost.
struct Columns {
    compact: bool,
}

impl Columns {
    fn new(compact: bool) -> Columns {
        Columns { compact }
    }

    fn head(&self) -> Vec<String> {
        let all: &[&str] = if self.compact {
            &["input", "output", "total tokens", "cost (USD)"]
        } else {
            &[
                "input",
                "output",
                "cache read",
                "cache write",
                "reasoning",
                "total tokens",
                "cost (USD)",
            ]
        };
        all.iter().map(|s| (*s).to_owned()).collect()
    }

    fn len(&self) -> usize {
        if self.compact {
            4
        } else {
            7
        }
    }

    fn cells(&self, s: &Sum) -> Vec<String> {
        let t = &s.tokens;
        let numbers: Vec<u64> = if self.compact {
            vec![t.input, t.output, t.total()]
        } else {
            vec![
                t.input,
                t.output,
                t.cache_read,
                t.cache_creation,
                t.reasoning,
                t.total(),
            ]
        };
        let mut r: Vec<String> = numbers.into_iter().map(table::thousands).collect();
        r.push(table::dollars(s.cost));
        r
    }
}

/// Costs to a millionth of a dollar: sums of many small products carry float noise.
fn round_cents_fraction(c: f64) -> f64 {
    (c * 1e6).round() / 1e6
}

fn positive_hours(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(h) if h > 0.0 && h <= 24.0 * 366.0 => Ok(h),
        _ => Err(format!("`{s}` is not a number of hours above 0")),
    }
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if args.by.contains(&Key::Block) {
        if args.by.len() > 1 {
            bail!("--by block stands alone: blocks are not grouped by other keys");
        }
        if args.breakdown {
            bail!(
                "--breakdown is for rows grouped by keys, not --by block: a block lists its models"
            );
        }
    } else if args.active {
        bail!("--active is for --by block");
    }
    let l = load(&args.source, Wanted::Responses)?;
    if args.by == [Key::Block] {
        let code = run_blocks(args, &l);
        ending(l);
        return code;
    }
    // Each entry's group is found by its keys' numbers ([`raw_key`]); their text is made once
    // per distinct numbers, and numbers that read alike (two days of a month) share a group.
    let mut by_raw: HashMap<Box<[i64]>, usize, BuildHasherDefault<Hash64>> = HashMap::default();
    let mut by_text: HashMap<Vec<String>, usize> = HashMap::new();
    let mut list: Vec<(Vec<String>, Group)> = Vec::new();
    let mut raw: Vec<i64> = Vec::with_capacity(args.by.len());
    let mut total = Sum::zero();
    for (k, &i) in l.kept.iter().enumerate() {
        let e = &l.scan.entries[i];
        if !e.response {
            continue;
        }
        raw.clear();
        raw.extend(args.by.iter().map(|&key| raw_key(&l, e, key)));
        let at = match by_raw.get(&raw[..]) {
            Some(&at) => at,
            None => {
                let keys: Vec<String> = args.by.iter().map(|&key| group_key(&l, e, key)).collect();
                let at = *by_text.entry(keys.clone()).or_insert_with(|| {
                    list.push((keys, Group::default()));
                    list.len() - 1
                });
                by_raw.insert(raw.as_slice().into(), at);
                at
            }
        };
        let g = &mut list[at].1;
        g.sum.add(&e.tokens, l.costs[k]);
        if args.breakdown {
            g.models
                .entry(group_key(&l, e, Key::Model))
                .or_insert_with(Sum::zero)
                .add(&e.tokens, l.costs[k]);
        }
        total.add(&e.tokens, l.costs[k]);
    }
    let mut ordered: Vec<(&Vec<String>, &Group)> = list.iter().map(|(k, g)| (k, g)).collect();
    ordered.sort_unstable_by(|a, b| a.0.cmp(b.0));
    if args.order == Order::Desc {
        ordered.reverse();
    }
    let text = if args.source.json {
        let rows: Vec<Value> = ordered
            .iter()
            .map(|(keys, g)| {
                let mut m = Map::new();
                for (key, v) in args.by.iter().zip(keys.iter()) {
                    m.insert(key.name().into(), json!(v));
                }
                g.sum.json(&mut m);
                if args.breakdown {
                    m.insert("breakdown".into(), g.breakdown_json());
                }
                Value::Object(m)
            })
            .collect();
        let mut t = Map::new();
        total.json(&mut t);
        let doc = json!({"rows": rows, "totals": t});
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else if list.is_empty() {
        // Nothing to tabulate: standard error says why (`outcome`).
        String::new()
    } else {
        let mut head: Vec<String> = args.by.iter().map(|k| k.name().to_owned()).collect();
        let cols = Columns::new(args.compact);
        head.extend(cols.head());
        let row = |keys: Vec<String>, s: &Sum| {
            let mut r = keys;
            r.extend(cols.cells(s));
            r
        };
        let mut rows: Vec<Vec<String>> = Vec::new();
        for (keys, g) in &ordered {
            rows.push(row(keys.to_vec(), &g.sum));
            for (model, s) in &g.models {
                let mut k = vec![String::new(); args.by.len()];
                k[0] = format!("  └ {model}");
                rows.push(row(k, s));
            }
        }
        let mut foot = vec![String::new(); args.by.len()];
        foot[0] = "total".to_owned();
        let mut right = vec![false; args.by.len()];
        right.extend(vec![true; cols.len()]);
        table::render(&head, &right, &rows, Some(&row(foot, &total)))
    };
    write_out(&text)?;
    report(&l);
    let found = l.scan.entries.iter().any(|e| e.response);
    let code = outcome(&l, &args.source, "token usage", found, !list.is_empty());
    ending(l);
    Ok(code)
}

/// Lets go of what was read when the command ends: the process ends with it, and freeing
/// tens of thousands of paths and strings one by one is only time the person waits for.
fn ending(l: Loaded) {
    std::mem::forget(l);
}

/// `--by block`: the billing blocks, as a table or JSON.
fn run_blocks(args: &Args, l: &Loaded) -> anyhow::Result<ExitCode> {
    let now = blocks::now();
    let mut all = blocks::blocks(l, args.block_hours, now);
    if args.active {
        all.retain(|b| b.active);
    }
    if args.order == Order::Desc {
        all.reverse();
    }
    let mut total = Sum::zero();
    for b in all.iter().filter(|b| !b.gap) {
        total.tokens.add(&b.sum.tokens);
        total.responses += b.sum.responses;
        total.cost = match (total.cost, b.sum.cost) {
            (Some(a), Some(c)) => Some(a + c),
            _ => None,
        };
    }
    let text = if args.source.json {
        let rows: Vec<Value> = all.iter().map(|b| b.json(now)).collect();
        let mut t = Map::new();
        total.json(&mut t);
        let mut s = serde_json::to_string_pretty(&json!({"blocks": rows, "totals": t}))?;
        s.push('\n');
        s
    } else if all.is_empty() {
        String::new()
    } else {
        let cols = Columns::new(args.compact);
        let mut head: Vec<String> = ["block", "agent", "state", "models"]
            .map(str::to_owned)
            .to_vec();
        head.extend(cols.head());
        let row = |key: Vec<String>, s: &Sum| {
            let mut r = key;
            r.extend(cols.cells(s));
            r
        };
        let mut notes = Vec::new();
        let rows: Vec<Vec<String>> = all
            .iter()
            .map(|b| {
                let state = if b.gap {
                    format!("gap {}", duration(b.end - b.start))
                } else if b.active {
                    if let (Some(burn), Some((tokens, cost, left))) = (b.burn(), b.projection(now))
                    {
                        notes.push(format!(
                            "active {} block: {} left; {} tokens a minute, ${} an hour; at that \
                             rate {} tokens and ${} by its end",
                            b.agent,
                            duration(left as i64 * 60_000),
                            table::thousands(burn.tokens_per_minute.round() as u64),
                            table::dollars(burn.cost_per_hour),
                            table::thousands(tokens),
                            table::dollars(cost),
                        ));
                    }
                    format!("active, {} left", duration(b.end - now))
                } else {
                    format!(
                        "{} of activity",
                        duration(b.last.unwrap_or(b.start) - b.first.unwrap_or(b.start))
                    )
                };
                let key = vec![
                    l.zone.minute(b.start),
                    b.agent.to_owned(),
                    state,
                    b.models.join(", "),
                ];
                row(key, &b.sum)
            })
            .collect();
        let mut right = vec![false; 4];
        right.extend(vec![true; cols.len()]);
        let foot = row(
            vec!["total".into(), String::new(), String::new(), String::new()],
            &total,
        );
        let mut t = table::render(&head, &right, &rows, Some(&foot));
        for n in notes {
            t.push_str(&n);
            t.push('\n');
        }
        t
    };
    write_out(&text)?;
    report(l);
    let found = l.scan.entries.iter().any(|e| e.response);
    Ok(outcome(
        l,
        &args.source,
        "token usage",
        found,
        !all.is_empty() || args.active,
    ))
}

/// A span of time as `2h 05m` (or `35m`).
fn duration(ms: i64) -> String {
    let m = ms.max(0) / 60_000;
    match m / 60 {
        0 => format!("{}m", m % 60),
        h => format!("{h}h {:02}m", m % 60),
    }
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
                _ if l.from_db => format!("{} files stored", l.scan.files.len()),
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

/// A number for `e`'s `key`, the same for entries whose [`group_key`] is the same text, and
/// quick to make: its day (or its week's Monday), a symbol, an agent.
fn raw_key(l: &Loaded, e: &Entry, key: Key) -> i64 {
    let day = || e.time.map_or(i64::MIN, |t| l.zone.day(t));
    match key {
        Key::Day | Key::Month => day(),
        Key::Week => e.time.map_or(i64::MIN, |t| {
            let d = l.zone.day(t);
            d - (d + 3).rem_euclid(7)
        }),
        Key::Session => i64::from(e.session),
        Key::Model => i64::from(e.model),
        Key::Project => i64::from(e.project),
        Key::Agent => e.agent as i64,
        Key::Block => i64::MIN,
    }
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
        // `--by block` is not a grouping key (`run_blocks`).
        Key::Block => None,
    }
    .filter(|s| !s.is_empty())
    .unwrap_or_else(|| "unknown".to_owned())
}
