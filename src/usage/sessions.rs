//! `insights sessions`: one row per session found in the agents' session files.

use super::{load, table, write_out, Agent, Source, Sum};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Examples:
  insights sessions                         # every agent's sessions, most recent first
  insights sessions --agent codex --since 2026-11-20
  insights sessions --project myrepo --json | jq -r '.sessions[].paths[]'
  insights sessions --db=team.db                   # from a store (insights store)

Exit status: 0 done, 1 no sessions found (no session file, or none with a session) unless
--allow-empty, 2 usage or I/O error (a path or --root that does not exist).";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    #[command(flatten)]
    pub source: Source,
}

#[derive(Default)]
struct Session {
    project: String,
    first: Option<i64>,
    last: Option<i64>,
    turns: u64,
    models: BTreeSet<String>,
    sum: Sum,
    /// The session's files: a Claude session has its subagents' files too.
    paths: BTreeSet<String>,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let l = load(&args.source, super::Wanted::ResponsesAndTurns)?;
    let mut sessions: BTreeMap<(Agent, String), Session> = BTreeMap::new();
    for (k, &i) in l.kept.iter().enumerate() {
        let e = &l.scan.entries[i];
        let file = &l.scan.files[e.file as usize];
        let id = match l.scan.str(e.session) {
            "" => file
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            s => s.to_owned(),
        };
        let s = sessions.entry((e.agent, id)).or_insert_with(|| Session {
            sum: Sum::zero(),
            ..Session::default()
        });
        if s.project.is_empty() {
            s.project = l.scan.str(e.project).to_owned();
        }
        if let Some(t) = e.time {
            s.first = Some(s.first.map_or(t, |f| f.min(t)));
            s.last = Some(s.last.map_or(t, |f| f.max(t)));
        }
        s.paths.insert(file.path.display().to_string());
        if e.turn {
            s.turns += 1;
        }
        if e.response {
            let m = l.scan.str(e.model);
            if !m.is_empty() {
                s.models.insert(m.to_owned());
            }
            s.sum.add(&e.tokens, l.costs[k]);
        }
    }
    // Most recent first, as people look for the session they just ran.
    let mut list: Vec<(&(Agent, String), &Session)> = sessions.iter().collect();
    list.sort_by(|a, b| b.1.last.cmp(&a.1.last).then_with(|| a.0.cmp(b.0)));
    let time = |t: Option<i64>| t.map(|t| crate::time::format_millis(t.max(0) as u64));
    let text = if args.source.json {
        let rows: Vec<Value> = list
            .iter()
            .map(|((agent, id), s)| {
                let mut m = Map::new();
                m.insert("agent".into(), json!(agent.name()));
                m.insert("sessionId".into(), json!(id));
                m.insert("project".into(), json!(s.project));
                m.insert("firstTime".into(), json!(time(s.first)));
                m.insert("lastTime".into(), json!(time(s.last)));
                m.insert("turns".into(), json!(s.turns));
                m.insert("models".into(), json!(s.models));
                s.sum.json(&mut m);
                m.insert("paths".into(), json!(s.paths));
                Value::Object(m)
            })
            .collect();
        let mut s = serde_json::to_string_pretty(&json!({ "sessions": rows }))?;
        s.push('\n');
        s
    } else {
        let head: Vec<String> = [
            "last",
            "agent",
            "session",
            "project",
            "turns",
            "models",
            "tokens",
            "cost (USD)",
            "path",
        ]
        .map(str::to_owned)
        .to_vec();
        let rows: Vec<Vec<String>> = list
            .iter()
            .map(|((agent, id), s)| {
                let last = s.last.map(|t| l.zone.minute(t)).unwrap_or_default();
                vec![
                    last,
                    agent.name().to_owned(),
                    id.clone(),
                    s.project.clone(),
                    table::thousands(s.turns),
                    s.models.iter().cloned().collect::<Vec<_>>().join(","),
                    table::thousands(s.sum.tokens.total()),
                    table::dollars(s.sum.cost),
                    s.paths.iter().next().cloned().unwrap_or_default(),
                ]
            })
            .collect();
        let right = [false, false, false, false, true, false, true, true, false];
        if rows.is_empty() {
            String::new()
        } else {
            table::render(&head, &right, &rows, None)
        }
    };
    write_out(&text)?;
    super::report(&l);
    let found = !l.scan.entries.is_empty();
    Ok(super::outcome(
        &l,
        &args.source,
        "sessions",
        found,
        !sessions.is_empty(),
    ))
}
