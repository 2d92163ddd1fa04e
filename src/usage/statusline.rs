//! `insights statusline`: one line for Claude Code's status bar, from the JSON Claude Code
//! gives a status-line command on standard input (`session_id`, `transcript_path`, `model`,
//! `cost`, `context_window`, …): the model, the session's cost, today's cost, the active
//! billing block's cost and time left with its burn rate, and the context in use.
//!
//! It reads only the Claude Code session files written to since the earliest moment that
//! counts (today's midnight in the local zone, or two block windows ago, whichever is
//! earlier): a file not written since then holds nothing of today or of the active block, as
//! session files are only appended to. So a status bar costs a few files, not the whole
//! history.

use super::blocks;
use super::{load, Agent, Loaded, Source};
use crate::time::Zone;
use anyhow::Context as _;
use serde::Deserialize;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Claude Code runs it with the session's JSON on standard input; in ~/.claude/settings.json:
  \"statusLine\": {\"type\": \"command\", \"command\": \"insights statusline\"}

Example:
  echo '{\"session_id\":\"…\",\"transcript_path\":\"…\",\"model\":{\"display_name\":\"Opus\"}}' | insights statusline

It prints one line:
  🤖 Opus | 💰 $0.17 session / $1.20 today / $0.45 block (3h 19m left) | 🔥 $0.36/hr | 🧠 20,419 (10%)

Parts that cannot be known are left out (no active block, no context window size). Costs are
those of `insights usage`: the agent's own figure, else the shipped price table.

Exit status: 0, also when the input is not what Claude Code sends (the line says less); 2 when
standard input cannot be read.";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The session's cost from: auto (Claude Code's `cost.total_cost_usd`, else counted from
    /// the session files), claude (Claude Code's only), insights (counted only).
    #[arg(long, value_enum, default_value = "auto")]
    pub cost_source: CostSource,

    /// The length of a billing block, in hours.
    #[arg(long, value_name = "HOURS", default_value = "5", value_parser = super::positive_hours)]
    pub block_hours: f64,

    /// The time zone of "today" (as `usage --tz`).
    #[arg(
        long,
        visible_alias = "timezone",
        value_name = "ZONE",
        default_value = "local"
    )]
    pub tz: String,

    /// Read the standard places under DIR instead of your home (as `usage --root`).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CostSource {
    Auto,
    Claude,
    Insights,
}

/// What this command reads of Claude Code's status-line JSON.
#[derive(Debug, Default, Deserialize)]
struct Status {
    session_id: Option<String>,
    transcript_path: Option<PathBuf>,
    model: Option<Model>,
    cost: Option<Cost>,
    context_window: Option<ContextWindow>,
}

#[derive(Debug, Default, Deserialize)]
struct Model {
    id: Option<String>,
    display_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Cost {
    total_cost_usd: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
struct ContextWindow {
    context_window_size: Option<u64>,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read standard input")?;
    // Whatever Claude Code sends, the line says what it can.
    let status: Status = serde_json::from_str(&input).unwrap_or_default();
    let zone = Zone::parse(&args.tz).map_err(|e| anyhow::anyhow!(e))?;
    let now = blocks::now();
    let line = line(args, &status, &zone, now);
    super::write_out(&format!("{line}\n"))?;
    Ok(ExitCode::SUCCESS)
}

/// The Claude Code session files written to since `since` (Unix milliseconds), in the order
/// `usage` reads them.
fn recent_files(root: Option<&Path>, since: i64) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = root.into_iter().map(Path::to_path_buf).collect();
    let since = std::time::UNIX_EPOCH + std::time::Duration::from_millis(since.max(0) as u64);
    let (found, _) = super::homes::standard_of(&roots, Some(Agent::Claude), Some(since));
    found.into_iter().map(|f| f.path).collect()
}

fn line(args: &Args, status: &Status, zone: &Zone, now: i64) -> String {
    let window = (args.block_hours * 3_600_000.0) as i64;
    let today = zone.day(now);
    let midnight = today * 86_400_000 - zone.offset(now);
    let since = midnight.min(now - 2 * window);
    let files = recent_files(args.root.as_deref(), since);
    let loaded = (!files.is_empty())
        .then(|| {
            let src = Source {
                paths: files,
                agent: vec![Agent::Claude],
                tz: args.tz.clone(),
                allow_empty: true,
                ..Source::default()
            };
            load(&src, super::Wanted::Responses).ok()
        })
        .flatten();
    let mut parts = Vec::new();
    let model = status.model.as_ref();
    let name = model
        .and_then(|m| m.display_name.as_deref().or(m.id.as_deref()))
        .unwrap_or("?");
    parts.push(format!("🤖 {name}"));
    let counted = |session: &str| -> Option<f64> {
        let l = loaded.as_ref()?;
        let mut sum = 0.0;
        let mut any = false;
        for (k, &i) in l.kept.iter().enumerate() {
            let e = &l.scan.entries[i];
            if e.response && l.scan.str(e.session) == session {
                sum += l.costs[k]?;
                any = true;
            }
        }
        any.then_some(sum)
    };
    let claude = status.cost.as_ref().and_then(|c| c.total_cost_usd);
    let session = match args.cost_source {
        CostSource::Claude => claude,
        CostSource::Insights => status.session_id.as_deref().and_then(counted),
        CostSource::Auto => claude.or_else(|| status.session_id.as_deref().and_then(counted)),
    };
    let mut money = vec![format!("{} session", dollars(session))];
    // No file written to today: nothing today.
    let today_cost = loaded
        .as_ref()
        .map_or(Some(0.0), |l| day_cost(l, zone, today));
    money.push(format!("{} today", dollars(today_cost)));
    let active = loaded.as_ref().and_then(|l| {
        blocks::blocks(l, args.block_hours, now)
            .into_iter()
            .find(|b| b.active)
    });
    if let Some(b) = &active {
        money.push(format!(
            "{} block ({} left)",
            dollars(b.sum.cost),
            super::duration(b.end - now)
        ));
    }
    parts.push(format!("💰 {}", money.join(" / ")));
    if let Some(per_hour) = active
        .as_ref()
        .and_then(|b| b.burn())
        .and_then(|b| b.cost_per_hour)
    {
        parts.push(format!("🔥 ${per_hour:.2}/hr"));
    }
    if let Some(used) = status.transcript_path.as_deref().and_then(context_used) {
        let size = status
            .context_window
            .as_ref()
            .and_then(|c| c.context_window_size);
        let pct = size
            .filter(|&s| s > 0)
            .map(|s| format!(" ({}%)", (used as f64 * 100.0 / s as f64).round() as u64));
        parts.push(format!(
            "🧠 {}{}",
            super::table::thousands(used),
            pct.unwrap_or_default()
        ));
    }
    parts.join(" | ")
}

/// Today's cost: `None` when a response's cost is unknown.
fn day_cost(l: &Loaded, zone: &Zone, day: i64) -> Option<f64> {
    let mut sum = 0.0;
    for (k, &i) in l.kept.iter().enumerate() {
        let e = &l.scan.entries[i];
        if e.response && e.time.is_some_and(|t| zone.day(t) == day) {
            sum += l.costs[k]?;
        }
    }
    Some(sum)
}

fn dollars(c: Option<f64>) -> String {
    match c {
        Some(c) => format!("${c:.2}"),
        None => "$?".to_owned(),
    }
}

/// The context in use after the transcript's last main-agent response, by the definition
/// `reduce` and `replay` share ([`crate::event::context_in_use`]): read from the file's end.
fn context_used(transcript: &Path) -> Option<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::File::open(transcript).ok()?;
    let len = f.metadata().ok()?.len();
    let mut back = 64 * 1024u64;
    loop {
        let start = len.saturating_sub(back);
        f.seek(SeekFrom::Start(start)).ok()?;
        let mut buf = Vec::new();
        f.by_ref().take(back).read_to_end(&mut buf).ok()?;
        let text = String::from_utf8_lossy(&buf);
        // (The first line of a window that does not start the file may be cut.)
        let lines: Vec<&str> = text.lines().skip(usize::from(start > 0)).collect();
        if let Some(used) = lines.iter().rev().find_map(|l| last_usage(l)) {
            return Some(used);
        }
        if start == 0 || back >= 16 * 1024 * 1024 {
            return None;
        }
        back *= 4;
    }
}

/// The context a transcript line's main-agent response leaves, if it is one.
fn last_usage(line: &str) -> Option<u64> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Line {
        #[serde(rename = "type")]
        ty: Option<String>,
        is_sidechain: Option<bool>,
        message: Option<Message>,
    }
    #[derive(Deserialize)]
    struct Message {
        usage: Option<Usage>,
    }
    #[derive(Deserialize)]
    struct Usage {
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        cache_read_input_tokens: Option<u64>,
        cache_creation_input_tokens: Option<u64>,
    }
    if !line.contains("\"usage\"") {
        return None;
    }
    let l: Line = serde_json::from_str(line).ok()?;
    if l.ty.as_deref() != Some("assistant") || l.is_sidechain == Some(true) {
        return None;
    }
    let u = l.message?.usage?;
    crate::event::context_in_use(
        None,
        u.input_tokens,
        u.cache_read_input_tokens,
        u.cache_creation_input_tokens,
        u.output_tokens,
    )
}
