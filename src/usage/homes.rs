//! Where the agents keep their session files, and whose a file is.
//!
//! | agent | files | variable |
//! |---|---|---|
//! | Claude Code | `~/.claude/projects/<project>/*.jsonl` (subagents in `<session>/subagents/`), also `$XDG_CONFIG_HOME/claude/projects` | `CLAUDE_CONFIG_DIR` (a comma-separated list) |
//! | Codex | `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, `~/.codex/archived_sessions/` | `CODEX_HOME` |
//! | Gemini CLI | `~/.gemini/tmp/<project>/chats/session-*.jsonl` | |
//! | Qwen Code | `~/.qwen/projects/<project>/chats/<session>.jsonl`, subagents in `~/.qwen/projects/<project>/subagents/<session>/*.jsonl` | |
//! | OpenCode | the SQLite database `~/.local/share/opencode/opencode.db` (read-only) | `XDG_DATA_HOME` |
//!
//! | Amp, pi, Kimi, Kilo, Goose, Droid, OpenClaw, Hermes, GitHub Copilot CLI, Codebuff | see each one's module (`amp.rs`, `pi.rs`, `kimi.rs`, `kilo.rs`, `goose.rs`, `droid.rs`, `openclaw.rs`, `hermes.rs`, `copilot.rs`, `codebuff.rs`) | `AMP_DATA_DIR`, `PI_AGENT_DIR`, `KIMI_DATA_DIR`, `KILO_DATA_DIR`, `GOOSE_PATH_ROOT`, `DROID_SESSIONS_DIR`, `OPENCLAW_DIR`, `HERMES_HOME`, `COPILOT_OTEL_FILE_EXPORTER_PATH`, `CODEBUFF_DATA_DIR` |
//!
//! Those last are read by a module each, registered in [`super::reader::READERS`].

use crate::input::Stamp;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code: ~/.claude/projects, $XDG_CONFIG_HOME/claude/projects (CLAUDE_CONFIG_DIR)
    Claude,
    /// Codex: ~/.codex/sessions, ~/.codex/archived_sessions (CODEX_HOME)
    Codex,
    /// Gemini CLI: ~/.gemini/tmp/*/chats
    Gemini,
    /// Qwen Code: ~/.qwen/projects/*/chats and */subagents
    Qwen,
    /// OpenCode: ~/.local/share/opencode/opencode.db (XDG_DATA_HOME)
    #[value(name = "opencode")]
    OpenCode,
    /// Amp: ~/.local/share/amp/threads/*.json (AMP_DATA_DIR)
    Amp,
    /// pi: ~/.pi/agent/sessions/*/*.jsonl (PI_AGENT_DIR)
    Pi,
    /// Kimi Code CLI: ~/.kimi/sessions/*/*/wire.jsonl (KIMI_DATA_DIR)
    Kimi,
    /// Kilo: ~/.local/share/kilo/kilo.db (KILO_DATA_DIR)
    Kilo,
    /// Goose: ~/.local/share/goose/sessions/sessions.db (GOOSE_PATH_ROOT)
    Goose,
    /// Droid: ~/.factory/sessions/**/*.settings.json (DROID_SESSIONS_DIR)
    Droid,
    /// OpenClaw: ~/.openclaw (also ~/.clawdbot, ~/.moltbot, ~/.moldbot), **/*.jsonl (OPENCLAW_DIR)
    #[value(name = "openclaw")]
    OpenClaw,
    /// Hermes Agent: ~/.hermes/state.db (HERMES_HOME)
    Hermes,
    /// GitHub Copilot CLI: ~/.copilot/otel/*.jsonl, OpenTelemetry export (COPILOT_OTEL_FILE_EXPORTER_PATH)
    Copilot,
    /// Codebuff: ~/.config/manicode*/projects/*/chats/*/chat-messages.json (CODEBUFF_DATA_DIR)
    Codebuff,
}

impl Agent {
    /// The agent of a [`name`](Agent::name).
    pub fn named(name: &str) -> Option<Agent> {
        <Agent as clap::ValueEnum>::value_variants()
            .iter()
            .copied()
            .find(|a| a.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Qwen => "qwen",
            Agent::OpenCode => "opencode",
            Agent::Amp => "amp",
            Agent::Pi => "pi",
            Agent::Kimi => "kimi",
            Agent::Kilo => "kilo",
            Agent::Goose => "goose",
            Agent::Droid => "droid",
            Agent::OpenClaw => "openclaw",
            Agent::Hermes => "hermes",
            Agent::Copilot => "copilot",
            Agent::Codebuff => "codebuff",
        }
    }

    /// Whose session file starts with this line: Codex's start with a `session_meta` record,
    /// Gemini CLI's with a header naming `projectHash`, Qwen Code's with a record whose
    /// message has Gemini's `parts`; anything else is read as Claude's.
    pub fn sniff(first: &str) -> Agent {
        if first.starts_with(r#"{"timestamp":"#) && first.contains(r#""type":"session_meta""#) {
            Agent::Codex
        } else if first.contains(r#""projectHash":"#) {
            Agent::Gemini
        } else if first.contains(r#""parentUuid":"#) && first.contains(r#","parts":["#) {
            Agent::Qwen
        } else {
            Agent::Claude
        }
    }
}

/// A session file, and what its place says of it.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    /// Whose it is, when its place tells; else its first line does.
    pub agent: Option<Agent>,
    /// The project folder, where the agent names projects by folder (Claude, Gemini).
    pub project: Option<String>,
    /// Its size and modification time when the walk that found it was asked for them
    /// (`store`: [`standard_stamped`]).
    pub stamp: Option<Stamp>,
}

impl Found {
    /// Whether `insights` converts it to events (`store` and `export` read it): not the files
    /// only `usage` reads ([`super::reader`]: Amp's threads, pi's, Kimi's, Goose's…).
    pub fn converts(&self) -> bool {
        self.agent.and_then(super::reader::of).is_none()
            && super::reader::owner(&self.path).is_none()
    }
}

/// The session files in the standard places under each of `roots` (home directories), or
/// under the agents' own variables and `$HOME` when there is none; and the places looked in.
pub fn standard(roots: &[PathBuf]) -> (Vec<Found>, Vec<PathBuf>) {
    standard_of(roots, None, None)
}

/// [`standard`], each file with its [`Stamp`] (`store` tells from it whether a file changed
/// since it was read).
pub fn standard_stamped(roots: &[PathBuf]) -> Vec<Found> {
    walk_all(&places_of(roots, None), None, true)
}

/// [`standard`], of `agent`'s places only when given, and of the files last modified at or
/// after `since` only when given (`statusline` reads Claude Code's files written today).
pub fn standard_of(
    roots: &[PathBuf],
    agent: Option<Agent>,
    since: Option<SystemTime>,
) -> (Vec<Found>, Vec<PathBuf>) {
    let places = places_of(roots, agent);
    let found = walk_all(&places, since, false);
    (found, places.into_iter().map(|(dir, _)| dir).collect())
}

/// The files below `places`, in the order [`walk_places`] gives them, each place walked on
/// one of up to four threads: a walk is system calls (a directory opened, listed, closed),
/// each waiting on the kernel alone.
fn walk_all(places: &[(PathBuf, Agent)], since: Option<SystemTime>, stamp: bool) -> Vec<Found> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(places.len())
        .min(4);
    let next = AtomicUsize::new(0);
    // Takes the next place not taken until there is none; each place's files kept apart.
    let work = || {
        let mut projects = Projects::default();
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((dir, agent)) = places.get(i) else {
                return done;
            };
            let mut found = Vec::new();
            walk(dir, Some(*agent), since, stamp, &mut projects, &mut |f| {
                found.push(f)
            });
            done.push((i, found));
        }
    };
    let mut parts: Vec<(usize, Vec<Found>)> = std::thread::scope(|s| {
        // This thread works too; a helper that cannot be started leaves its share to it.
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("walk".into())
                    .spawn_scoped(s, work)
                    .ok()
            })
            .collect();
        let mut parts = work();
        for h in helpers {
            match h.join() {
                Ok(p) => parts.extend(p),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        parts
    });
    parts.sort_unstable_by_key(|(i, _)| *i);
    parts.into_iter().flat_map(|(_, found)| found).collect()
}

/// The standard places under each of `roots` (or under `$HOME` and the agents' variables when
/// there is none), each with its agent; `agent`'s only when given.
pub fn places_of(roots: &[PathBuf], agent: Option<Agent>) -> Vec<(PathBuf, Agent)> {
    let mut places = Vec::new();
    if roots.is_empty() {
        places = standard_places(None);
    }
    for r in roots {
        for p in standard_places(Some(r)) {
            if !places.contains(&p) {
                places.push(p);
            }
        }
    }
    if let Some(only) = agent {
        places.retain(|(_, a)| *a == only);
    }
    places
}

/// Gives each session file below `places` to `found`, in the order [`standard`] lists them
/// (`usage` reads them while the walk goes on).
pub fn walk_places(
    places: &[(PathBuf, Agent)],
    since: Option<SystemTime>,
    found: &mut dyn FnMut(Found),
) {
    let mut projects = Projects::default();
    for (dir, agent) in places {
        walk(dir, Some(*agent), since, false, &mut projects, found);
    }
}

fn standard_places(root: Option<&Path>) -> Vec<(PathBuf, Agent)> {
    let home = root
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
    let var = |name: &str| {
        if root.is_some() {
            None
        } else {
            std::env::var_os(name).filter(|v| !v.is_empty())
        }
    };
    let mut claude: Vec<PathBuf> = match var("CLAUDE_CONFIG_DIR") {
        Some(v) => v
            .to_string_lossy()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect(),
        None => {
            let xdg = var("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(".config")));
            xdg.map(|x| x.join("claude"))
                .into_iter()
                .chain(home.as_ref().map(|h| h.join(".claude")))
                .collect()
        }
    };
    claude.dedup();
    let codex = var("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".codex")));
    let mut places: Vec<(PathBuf, Agent)> = claude
        .into_iter()
        .map(|dir| (dir.join("projects"), Agent::Claude))
        .collect();
    if let Some(c) = codex {
        places.push((c.join("sessions"), Agent::Codex));
        places.push((c.join("archived_sessions"), Agent::Codex));
    }
    if let Some(h) = &home {
        places.push((h.join(".gemini").join("tmp"), Agent::Gemini));
        places.push((h.join(".qwen").join("projects"), Agent::Qwen));
    }
    let data = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".local").join("share")));
    if let Some(d) = data {
        places.push((d.join("opencode"), Agent::OpenCode));
    }
    let env = super::reader::Env {
        home,
        vars: root.is_none(),
    };
    for r in super::reader::READERS {
        places.extend((r.places)(&env).into_iter().map(|p| (p, r.agent)));
    }
    places
}

/// Files and directories named on the command line; a directory stands for the `*.jsonl`
/// files below it (and OpenCode's `opencode.db` in it), and the other files below it that an
/// agent's reader owns (Amp's threads, Kilo's database).
pub fn given(paths: &[PathBuf]) -> Vec<Found> {
    let mut found = Vec::new();
    let mut projects = Projects::default();
    for p in paths {
        if p.is_dir() {
            walk(p, None, None, false, &mut projects, &mut |f| found.push(f));
            let mut other = Vec::new();
            super::reader::files_below(
                p,
                |f| f.extension().is_none_or(|x| x != "jsonl") && super::reader::owner(f).is_some(),
                &mut other,
            );
            found.extend(
                other
                    .into_iter()
                    .map(|f| place(f, None, None, &mut projects)),
            );
        } else {
            found.push(place(p.clone(), None, None, &mut projects));
        }
    }
    found
}

/// The `*.jsonl` files below `dir`, and OpenCode's database when `dir` holds one. Gemini
/// CLI keeps other files beside its chats: only `chats/` is read there; Qwen Code keeps its
/// chats in `chats/` and its subagents' in `subagents/`. A place that does not exist is no
/// error. With `since`, only the files last modified at or after it; with `stamp`, each
/// with its [`Stamp`].
fn walk(
    dir: &Path,
    agent: Option<Agent>,
    since: Option<SystemTime>,
    stamp: bool,
    projects: &mut Projects,
    out: &mut dyn FnMut(Found),
) {
    let recent = |st: Option<Stamp>| {
        since.is_none_or(|s| {
            let mtime = s
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
            st.is_some_and(|st| st.mtime_ns >= mtime)
        })
    };
    // A file's stamp, when asked for or needed for `since`.
    let stamp_of = |f: &Path| {
        (stamp || since.is_some())
            .then(|| std::fs::metadata(f).ok())
            .flatten()
            .map(|m| Stamp::of(&m))
    };
    if let Some(r) = agent.and_then(super::reader::of) {
        if dir.is_file() {
            let st = stamp_of(dir);
            if recent(st) {
                out(place(dir.to_path_buf(), agent, st, projects));
            }
        } else {
            let mut files = Vec::new();
            super::reader::files_stamped(dir, r.keep, stamp || since.is_some(), &mut files);
            for (f, st) in files.into_iter().filter(|(_, st)| recent(*st)) {
                out(place(f, agent, st, projects));
            }
        }
        return;
    }
    // OpenCode's folder also holds its logs and snapshots (git objects): only the database.
    if agent == Some(Agent::OpenCode) {
        let db = dir.join(OPENCODE_DB);
        if db.is_file() {
            let st = stamp_of(&db);
            if recent(st) {
                out(place(db, agent, st, projects));
            }
        }
        return;
    }
    crate::input::jsonl_files_stamped(
        dir,
        since,
        stamp,
        &mut |p, st| {
            let f = place(p, agent, st, projects);
            let s = f.path.to_string_lossy();
            let keep = match f.agent {
                Some(Agent::Gemini) => s.contains("/chats/"),
                Some(Agent::Qwen) => s.contains("/chats/") || s.contains("/subagents/"),
                _ => true,
            };
            if keep {
                out(f);
            }
        },
        &mut |d, e| {
            if e.kind() != std::io::ErrorKind::NotFound {
                eprintln!("insights: {}: {}", d.display(), crate::diag::io_words(&e));
            }
        },
    );
}

/// OpenCode's database file name (`~/.local/share/opencode/`).
pub const OPENCODE_DB: &str = "opencode.db";

/// What a file's path says: whose it is and its project folder.
fn place(
    path: PathBuf,
    agent: Option<Agent>,
    stamp: Option<Stamp>,
    projects: &mut Projects,
) -> Found {
    let s = path.to_string_lossy();
    let agent = agent.or_else(|| super::reader::owner(&path).map(|r| r.agent));
    let agent = if agent.is_none() && s.ends_with(".db") {
        Some(Agent::OpenCode)
    } else {
        agent
    };
    let agent = agent.or(if s.contains("/.qwen/") {
        Some(Agent::Qwen)
    } else if s.contains("/.codex/") {
        Some(Agent::Codex)
    } else if s.contains("/chats/session-") {
        Some(Agent::Gemini)
    } else if s.contains("/projects/") {
        Some(Agent::Claude)
    } else {
        None
    });
    let after = |marker: &str| {
        s.find(marker)
            .and_then(|i| s[i + marker.len()..].split('/').next())
            .map(str::to_owned)
    };
    let project = match agent {
        Some(Agent::Claude | Agent::Qwen) => after("/projects/"),
        Some(Agent::Gemini) => projects.gemini(&path).or_else(|| after("/tmp/")),
        _ => None,
    };
    Found {
        path,
        agent,
        project,
        stamp,
    }
}

/// Gemini CLI writes the project's directory in `<project>/.project_root`, beside `chats/`:
/// read once per project folder, not once per chat.
#[derive(Default)]
struct Projects {
    gemini: Option<(PathBuf, Option<String>)>,
}

impl Projects {
    fn gemini(&mut self, chat: &Path) -> Option<String> {
        let dir = chat.parent()?.parent()?;
        match &self.gemini {
            Some((d, p)) if d == dir => p.clone(),
            _ => {
                let p = std::fs::read_to_string(dir.join(".project_root"))
                    .ok()
                    .map(|t| t.trim().to_owned())
                    .filter(|t| !t.is_empty());
                self.gemini = Some((dir.to_path_buf(), p.clone()));
                p
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk of all places at once (on several threads) gives the files in the order of
    /// the streaming walk `usage` reads while it goes, and stamps each as its `stat` says.
    #[test]
    fn the_places_walked_at_once_are_in_order_and_stamped() {
        let home = std::env::temp_dir().join(format!("insights-walk-all-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        let files = [
            ".claude/projects/-p/b.jsonl",
            ".claude/projects/-p/a.jsonl",
            ".claude/projects/-p/a/subagents/agent-1.jsonl",
            ".claude/projects/-q/c.jsonl",
            ".codex/sessions/2026/01/02/rollout-2.jsonl",
            ".codex/sessions/2026/01/01/rollout-1.jsonl",
            ".gemini/tmp/h/chats/session-1.jsonl",
            ".gemini/tmp/h/logs.jsonl",
            ".pi/agent/sessions/--p--/s.jsonl",
            ".kimi/sessions/h/s1/wire.jsonl",
            ".kimi/sessions/h/s2/wire.jsonl",
        ];
        for (i, f) in files.iter().enumerate() {
            let p = home.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x".repeat(i + 1)).unwrap();
        }
        let places = places_of(std::slice::from_ref(&home), None);
        let mut streamed = Vec::new();
        walk_places(&places, None, &mut |f| streamed.push(f.path));
        let (all, _) = standard(std::slice::from_ref(&home));
        let stamped = standard_stamped(std::slice::from_ref(&home));
        std::fs::write(home.join(files[0]), "grown").unwrap();
        let paths = |v: &[Found]| v.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&all), streamed);
        assert_eq!(paths(&stamped), streamed);
        assert_eq!(streamed.len(), files.len() - 1, "{streamed:?}");
        for (i, f) in files.iter().enumerate() {
            let Some(found) = stamped.iter().find(|s| s.path == home.join(f)) else {
                continue;
            };
            let st = found.stamp.expect("stamped");
            // The first file grew after the walk: its stamp is the walk's.
            assert_eq!(st.size, i as u64 + 1, "{f}");
        }
        assert!(all.iter().all(|f| f.stamp.is_none()));
        std::fs::remove_dir_all(&home).unwrap();
    }
}
