//! `insights store`: keep every event in an SQLite database, each exactly once.
//!
//! It reads what `insights` reads (agent output, InsightsEvent logs, session files, folders,
//! standard input), converts it as `insights` does (the converter's events taken from its tap,
//! as `reduce` takes them) and inserts each event once, by its key `(session_id, id)`
//! ([`ingest`]). Files are read incrementally: each file's size, modification time, the offset
//! read up to and a hash of its head are kept, and the next run reads only what was appended
//! ([`sources`]). The layout, its version and the refusal of a file that is not ours are in
//! [`schema`]; the layout itself is `schemas/store.sql`, described in `docs/store.md`.

pub mod checkpoint;
pub mod fresh;
pub mod ingest;
pub mod query;
pub mod schema;
pub mod sources;
pub mod tally;
pub mod tellers;

use crate::cli::Config;
use crate::diag::Diag;
use crate::input::Source;
use anyhow::Context as _;
use std::path::PathBuf;
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Examples:
  insights store                                  # the agents' standard places
  insights store ~/.claude/projects/myproj        # a folder of session files
  claude -p --output-format stream-json ... | insights store -   # a live stream
  insights store --db team.db logs/*.jsonl        # another database
  sqlite3 ~/.local/share/insights/insights.db 'select * from usage'
  insights usage --db                             # usage, sessions: answered from the store
  insights replay --session ID --follow --db      # watch a live `... | insights store -`

Every event is stored once, by its session and id: storing a file again, or a copy of it,
adds nothing. A conversation stored from its stream and from its session file is stored once:
each turn from the one stored first (docs/store.md). A file stored before is read from where
the last run stopped; one that was rewritten is read again from its start. A first store of
files (no database yet, no `-`) is built beside it, as NAME.building-..., and appears whole
when it ends. The database is plain SQLite with the views sessions, turns, tool_calls and
usage (docs/store.md).

Exit status: 0 every line was read, 1 some input lines could not be read, 2 usage or I/O
error, or a --db file that is not an insights database or is of a newer schema (left as it
is).";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// Inputs: files, folders (every `*.jsonl` file below), `-` for standard input; none
    /// reads the agents' standard places, as `usage` does.
    ///
    /// The standard places are Claude Code's ~/.claude/projects (CLAUDE_CONFIG_DIR),
    /// Codex's ~/.codex/sessions and ~/.codex/archived_sessions (CODEX_HOME) and Gemini CLI's
    /// ~/.gemini/tmp/*/chats, Qwen Code's ~/.qwen/projects and OpenCode's database
    /// (~/.local/share/opencode/opencode.db, read-only). A Claude Code or Qwen Code session
    /// file and its subagents' files are read as one conversation.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// The database; created, with its folder, when it does not exist.
    ///
    /// The default is $XDG_DATA_HOME/insights/insights.db, else
    /// ~/.local/share/insights/insights.db. A file that is not an insights database, or one
    /// of a newer schema, is refused (exit status 2) and left as it is.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// The provider of raw input, or `auto` to detect it line by line (as for `convert`).
    #[arg(long, value_name = "PROVIDER", default_value = "auto", value_parser = crate::cli::from_values())]
    pub from: String,

    /// Longest input line accepted, in bytes (`100M`, `1G`); longer lines are reported and
    /// skipped.
    #[arg(long, value_name = "BYTES", default_value = "64MiB", value_parser = crate::cli::parse_bytes)]
    pub max_line_bytes: usize,
}

/// `--db` and `--session` of the commands that read events (`replay`, `reduce`): the events
/// of a store instead of FILEs.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// Read the events from an insights store (`insights store`) instead of FILEs: those of
    /// --session, else all, in the order they were stored. Without a value, the default store
    /// ($XDG_DATA_HOME/insights/insights.db, else ~/.local/share/insights/insights.db).
    ///
    /// The events are exactly those a conversion of the files gave when they were stored, so
    /// the output is what the command gives on them. Write `--db=PATH` or put it last: `--db
    /// PATH` takes the next word as the database.
    #[arg(long, value_name = "PATH", num_args = 0..=1, conflicts_with = "files")]
    pub db: Option<Option<PathBuf>>,

    /// With --db: only the events of this session (its sessionId, as `insights sessions --db`
    /// lists them).
    #[arg(long, value_name = "ID", requires = "db")]
    pub session: Option<String>,
}

impl DbArgs {
    /// The events to read, as JSONL, when `--db` was given (`follow`: wait for more, as a
    /// live pipe stores them); and a name for them in messages. An unknown session is an
    /// error unless `follow` (it may not have begun yet; nor the store, which is then waited
    /// for).
    pub fn lines(&self, follow: bool) -> anyhow::Result<Option<(query::Lines, String)>> {
        let Some(db) = &self.db else {
            return Ok(None);
        };
        let path = match db {
            Some(p) => p.clone(),
            None => default_db()?,
        };
        // Following, a store not made yet (or still empty) is waited for; one that is not
        // ours is refused at once.
        let store = loop {
            match query::Db::open(&path) {
                Ok(s) => break s,
                Err(e) if follow && e.downcast_ref::<schema::Refused>().is_none() => {
                    std::thread::sleep(query::POLL)
                }
                Err(e) => return Err(e),
            }
        };
        if let Some(s) = &self.session {
            if !follow && !store.has_session(s)? {
                anyhow::bail!(
                    "{}: no session {s} stored (`insights sessions --db` lists them)",
                    path.display()
                );
            }
        }
        let name = match &self.session {
            Some(s) => format!("{}#{s}", path.display()),
            None => path.display().to_string(),
        };
        Ok(Some((store.lines(self.session.clone(), 0, follow), name)))
    }
}

/// The default database: `$XDG_DATA_HOME/insights/insights.db`, else
/// `~/.local/share/insights/insights.db`.
pub fn default_db() -> anyhow::Result<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local").join("share"))
        })
        .context("no database given, and neither XDG_DATA_HOME nor HOME is set: give --db")?;
    Ok(data.join("insights").join("insights.db"))
}

/// The sources to store, grouped into conversations ([`crate::input::group_conversations`]),
/// and the files of the standard places among them (with their stamps, when walked): the
/// standard places when no path is given, else each path (a folder for its files).
fn sources_of(paths: &[PathBuf], diag: &mut Diag) -> (Vec<Source>, ingest::Places) {
    let mut places = ingest::Places::default();
    let sources = if paths.is_empty() {
        let found = crate::usage::homes::standard_stamped(&[]);
        let mut files = Vec::with_capacity(found.len());
        places = found
            .into_iter()
            .map(|f| {
                files.push(Source::File(f.path.clone()));
                ingest::Place::of(f)
            })
            .collect();
        files
    } else {
        let given: Vec<Source> = paths.iter().map(|p| Source::from_arg(p)).collect();
        let mut files = crate::input::expand_dirs(&given, diag);
        // The files only `usage` reads (Amp's threads, Goose's database…): their usage facts.
        for f in crate::usage::homes::given(paths) {
            if !f.converts() {
                if !files
                    .iter()
                    .any(|s| matches!(s, Source::File(p) if *p == f.path))
                {
                    files.push(Source::File(f.path.clone()));
                }
                let (path, place) = ingest::Place::of(f);
                places.insert(path, place);
            }
        }
        files
    };
    (crate::input::group_conversations(sources), places)
}

pub fn run(args: &Args, config: &Config) -> anyhow::Result<ExitCode> {
    crate::signals::install();
    let mut diag = Diag::new(config.color_err);
    // Times are the session's own: a line without a time is not stamped with the moment it
    // was read (it would differ from run to run).
    let opts = crate::convert::Options {
        forced: crate::cli::forced(&args.from)?,
        raw: false,
        clock: false,
        flush: crate::output::FlushPolicy::WhenIdle,
        strict: false,
        cc_insights: false,
        turn_ids: false,
        max_line: args.max_line_bytes,
    };
    let db = match &args.db {
        Some(p) => p.clone(),
        None => default_db()?,
    };
    for p in &args.paths {
        if p.as_os_str() != "-" {
            std::fs::metadata(p).with_context(|| format!("{}: cannot read", p.display()))?;
        }
    }
    // A first store of files is built beside the database and published whole (fresh.rs).
    let files_only = !args.paths.iter().any(|p| p.as_os_str() == "-");
    let building = if files_only { fresh::start(&db)? } else { None };
    // The sources are found on a thread of their own while the database is opened and,
    // for the standard places (many files), every source's record is read.
    let (found, opened) = std::thread::scope(|s| {
        let finding = std::thread::Builder::new()
            .name("store-find".into())
            .spawn_scoped(s, || sources_of(&args.paths, &mut diag))
            .context("cannot start a thread")?;
        let opened = match building {
            Some(_) => None,
            None => Some(schema::open(&db).and_then(|conn| {
                let mut store = ingest::Store::new(conn, &db);
                if args.paths.is_empty() {
                    store.preload()?;
                }
                Ok(store)
            })),
        };
        let found = finding.join().map_err(|_| {
            anyhow::anyhow!("internal error: the thread finding the sources panicked")
        })?;
        anyhow::Ok((found, opened))
    })?;
    let mut found = Some(found);
    let mut built = None;
    if let Some(b) = building {
        let conn = schema::open_building(b.path())?;
        let mut store = ingest::Store::building(conn, &db);
        let (sources, places) = found
            .take()
            .unwrap_or_else(|| sources_of(&args.paths, &mut diag));
        store.places = places;
        store.store_all(&sources, &opts, &mut diag)?;
        store.commit()?;
        // Freed before the merge (a first store's peak memory): found again below in the
        // rare case that another writer made the database meanwhile.
        drop(sources);
        store.let_go(true);
        store.keep_merged(&diag)?;
        let counts = store.counts;
        if b.publish(store.conn, &db)? {
            built = Some(counts);
        }
        // Else another writer made the database meanwhile: the sources are stored into it
        // below, each event once.
    }
    let c = match built {
        Some(c) => c,
        None => {
            let mut store = match opened {
                Some(store) => store?,
                None => ingest::Store::new(schema::open(&db)?, &db),
            };
            let (sources, places) = match found.take() {
                Some(found) => found,
                None => sources_of(&args.paths, &mut diag),
            };
            store.places = places;
            store.store_all(&sources, &opts, &mut diag)?;
            store.commit()?;
            let merge = store.merge_wanted();
            store.let_go(merge);
            if merge {
                drop(sources);
                store.keep_merged(&diag)?;
            } else {
                // `store` ends next: left to the exit, as in `let_go`.
                std::mem::forget(sources);
            }
            store.counts
        }
    };
    let told = match c.told_elsewhere {
        0 => String::new(),
        n => format!("; {n} events of turns another recording of their conversation told"),
    };
    diag.note(&format!(
        "stored {} new events of {} read into {} ({} files read, {} unchanged{told})",
        c.added,
        c.events,
        db.display(),
        c.files_read,
        c.files_unchanged
    ));
    Ok(diag.exit_code())
}
