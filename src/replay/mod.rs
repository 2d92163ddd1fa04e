//! `insights replay`: a pretty, safe transcript of a log or a live stream, for people.
//!
//! The input is read on a thread of its own: normalized InsightsEvent lines, or any provider's
//! raw output converted on the fly (`convert::Converter`, the same code as `insights convert`).
//! Event lines reach the renderer over a bounded channel as soon as they are known. The
//! renderer folds them into transcript blocks ([`model`]) and writes them to a terminal
//! ([`term`]), as Markdown ([`markdown`]) or as one HTML page ([`html`]).
//!
//! Liveness: output is flushed whenever no further event is waiting, so `agent | insights
//! replay` shows each step at once while a file is written in large blocks. On a terminal, text
//! that is still being streamed (and a tool call that is still running) is shown on a single
//! transient line, the ticker, which is overwritten by the final text; on a pipe or in Markdown
//! streamed deltas are never printed, as their final text follows.

pub mod figures;
pub mod html;
pub mod markdown;
pub mod model;
pub mod term;
pub mod text;

use crate::cli::Config;
use crate::cli::InputArgs;
use crate::convert::{Converter, LineSink, Options};
use crate::diag::Diag;
use crate::input::Source;
use crate::output::{self, Out};
use anyhow::Context;
use html::Html;
use markdown::Markdown;
use model::{Block, Model};
use serde_json::Value;
use std::io::{self, Read, Write};
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::time::Duration;
use term::{Layout, Palette, Term};

/// The transcript's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Laid out for a terminal, coloured per --color.
    Terminal,
    /// Markdown for issues and pull requests: prompts quoted, outputs and diffs in fenced code
    /// blocks, thinking in a collapsed `<details>`, no colour.
    Markdown,
    /// One self-contained HTML page (inline CSS, no script, nothing fetched): a summary of the
    /// sessions at the top, tool calls whose output folds open, coloured diffs, folded
    /// thinking, subagents indented under their call; everything the agent or a tool wrote is
    /// escaped.
    Html,
}

#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,

    #[command(flatten)]
    pub store: crate::store::DbArgs,

    /// Output format: terminal, markdown or html.
    #[arg(long, value_enum, default_value_t = Format::Terminal, value_name = "FORMAT")]
    pub format: Format,

    /// Columns to lay the transcript out in (at least 20).
    ///
    /// Default: the COLUMNS environment variable, else the width of the terminal standard
    /// output is (asked again before each block, so a resized terminal is followed), else 80.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(20..))]
    pub width: Option<u16>,

    /// Show thinking in full, not folded to one dimmed line.
    #[arg(long)]
    pub thinking: bool,

    /// Show tool output, diffs, long commands and summaries in full, not cut after a few lines.
    #[arg(long)]
    pub full: bool,

    /// Replay with the recorded pauses between timestamps, N times as fast.
    ///
    /// Without it the transcript is written as fast as the input arrives.
    #[arg(long, value_name = "N", value_parser = positive)]
    pub speed: Option<f64>,

    /// The longest pause --speed makes, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = non_negative)]
    pub max_gap: f64,

    /// Keep reading the last FILE as it grows, like `tail -f` (stop with Ctrl-C); with --db,
    /// keep reading the events stored (a live `... | insights store -`), looking every 100 ms.
    #[arg(long)]
    pub follow: bool,

    /// Mask secrets (API keys, tokens, passwords) as `[REDACTED:KIND]` before they are shown,
    /// as `insights --redact` does in events: for a transcript to share.
    #[arg(long)]
    pub redact: bool,
}

fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a number greater than 0")),
    }
}

fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds")),
    }
}

/// `--width`, else `COLUMNS`, else the terminal's own width (`Some` only then: it is read
/// again as the transcript goes, to follow a resize), else 80.
fn resolve_width(arg: Option<u16>, terminal: Option<usize>) -> (usize, bool) {
    if let Some(w) = arg {
        return (usize::from(w), false);
    }
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c >= 20);
    match (columns, terminal) {
        (Some(c), _) => (c.min(1000), false),
        (None, Some(t)) => (clamp_width(t), true),
        (None, None) => (80, false),
    }
}

/// A terminal width as replay lays out in: 20 to 1,000 columns.
fn clamp_width(w: usize) -> usize {
    w.clamp(20, 1000)
}

/// Where blocks go.
enum Sink<W: Write> {
    Term(Box<Term<W>>),
    Markdown(Markdown<W>),
    Html(Html<W>),
}

impl<W: Write> Sink<W> {
    fn block(&mut self, b: &Block) -> io::Result<()> {
        match self {
            Sink::Term(t) => t.block(b),
            Sink::Markdown(m) => m.block(b),
            Sink::Html(h) => h.block(b),
        }
    }

    fn ticker(&mut self, live: Option<(&str, &str)>) -> io::Result<()> {
        match self {
            Sink::Term(t) => t.ticker(live),
            Sink::Markdown(_) | Sink::Html(_) => Ok(()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Term(t) => t.flush(),
            Sink::Markdown(m) => m.flush(),
            Sink::Html(h) => h.flush(),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        match self {
            Sink::Term(t) => {
                t.ticker(None)?;
                t.flush()
            }
            Sink::Markdown(m) => m.finish(),
            Sink::Html(h) => h.finish(),
        }
    }
}

/// Sleeps between events by their recorded timestamps (`--speed`).
struct Pace {
    speed: Option<f64>,
    max_gap: Duration,
    last: Option<i64>,
}

impl Pace {
    /// How long to wait before the event stamped `ts`.
    fn gap(&mut self, ts: Option<&str>) -> Option<Duration> {
        let speed = self.speed?;
        let t = crate::time::millis(ts?)?;
        let last = self.last.replace(t)?;
        let ms = (t - last) as f64 / speed;
        (ms > 0.0).then(|| Duration::from_secs_f64(ms / 1000.0).min(self.max_gap))
    }
}

/// The renderer: events in, blocks out to the sink.
struct Replay<W: Write> {
    model: Model,
    sink: Sink<W>,
    pace: Pace,
    /// Show the ticker (a terminal that a person watches).
    live: bool,
    ticker: Option<(String, String)>,
    /// `--redact`: secrets masked in every event before it is shown.
    redact: bool,
}

impl<W: Write> Replay<W> {
    fn event(&mut self, line: &[u8]) -> io::Result<()> {
        let line = if self.redact {
            crate::redact::redact(line)
        } else {
            std::borrow::Cow::Borrowed(line)
        };
        let ev: Value = match serde_json::from_slice(&line) {
            Ok(v) => v,
            Err(e) => {
                // Valid JSON reached us, so it is nested too deeply to show.
                let text = format!(
                    "an event could not be shown: {}",
                    crate::wire::without_position(&e)
                );
                return self.sink.block(&Block::Notice { depth: 0, text });
            }
        };
        if let Some(d) = self.pace.gap(ev.get("timestamp").and_then(Value::as_str)) {
            self.show_ticker()?;
            self.sink.flush()?;
            std::thread::sleep(d);
        }
        match std::str::from_utf8(&line) {
            Ok(text) => self.model.event_line(text, &ev),
            Err(_) => self.model.event(&ev),
        }
        self.write_blocks()
    }

    fn write_blocks(&mut self) -> io::Result<()> {
        let blocks: Vec<Block> = self.model.drain().collect();
        if !blocks.is_empty() {
            self.ticker = None;
        }
        for b in &blocks {
            self.sink.block(b)?;
        }
        Ok(())
    }

    /// Draws the ticker when it changed.
    fn show_ticker(&mut self) -> io::Result<()> {
        if !self.live {
            return Ok(());
        }
        let now = self.model.live();
        if now != self.ticker {
            self.sink
                .ticker(now.as_ref().map(|(l, t)| (l.as_str(), t.as_str())))?;
            self.ticker = now;
        }
        Ok(())
    }

    /// The end of the input. `unreadable` names the input lines that could not be read
    /// (`FILE:LINE:COL: why`): Markdown and HTML, which are read away from the terminal that
    /// showed them on standard error, name them too.
    fn finish(&mut self, unreadable: &[String]) -> io::Result<()> {
        self.model.finish();
        self.write_blocks()?;
        match &mut self.sink {
            Sink::Markdown(m) => m.unreadable(unreadable)?,
            Sink::Html(h) => h.unreadable(unreadable),
            Sink::Term(_) => {}
        }
        self.sink.finish()
    }
}

pub fn run(args: &Args, config: &Config) -> anyhow::Result<ExitCode> {
    let mut opts = args.input.options()?;
    // Times are the provider's or the log's; the time a line is read here means nothing.
    opts.clock = false;
    let sources = args.input.sources();
    let terminal = args.format == Format::Terminal;
    let color_out = terminal && config.color_out;
    let color_err = config.color_err;
    let (width, track) = resolve_width(args.width, config.width);
    let lay = Layout {
        width,
        full: args.full,
        thinking: args.thinking,
    };
    let w = Out::stdout().w;
    let sink = if terminal {
        let mut t = Term::new(w, Palette::new(color_out), lay);
        if track {
            t.follow_width(|| output::terminal_width().map(clamp_width));
        }
        Sink::Term(Box::new(t))
    } else if args.format == Format::Html {
        Sink::Html(Html::new(w, lay))
    } else {
        Sink::Markdown(Markdown::new(w, lay))
    };
    let mut replay = Replay {
        model: Model::new(),
        sink,
        pace: Pace {
            speed: args.speed,
            max_gap: Duration::from_secs_f64(args.max_gap),
            last: None,
        },
        live: config.stdout_tty && terminal,
        ticker: None,
        redact: args.redact,
    };

    let stored = args.store.lines(args.follow)?;
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(1024);
    let follow = args.follow;
    let reader = std::thread::spawn(move || {
        let mut diag = Diag::new(color_err);
        diag.unreadable = Some(Vec::new());
        let sources = match stored {
            Some(_) => Vec::new(),
            None => {
                crate::input::group_conversations(crate::input::expand_dirs(&sources, &mut diag))
            }
        };
        let send = |line: &[u8]| {
            tx.send(line.to_vec())
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
        };
        let r = read(&sources, stored, &opts, follow, &mut diag, send);
        let unreadable = diag.unreadable.take().unwrap_or_default();
        (r, diag.io_errors, diag.bad_lines, unreadable)
    });

    let tick = Duration::from_millis(250);
    let stdout = "cannot write to standard output";
    let mut events = 0u64;
    loop {
        let line = match rx.try_recv() {
            Ok(l) => l,
            Err(TryRecvError::Disconnected) => break,
            Err(TryRecvError::Empty) => {
                // Nothing more is waiting: show what there is before blocking.
                replay.show_ticker().context(stdout)?;
                replay.sink.flush().context(stdout)?;
                match wait(&rx, tick, &mut replay).context(stdout)? {
                    Some(l) => l,
                    None => break,
                }
            }
        };
        events += 1;
        replay.event(&line).context(stdout)?;
    }
    let (r, io_errors, bad_lines, unreadable) = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the input reader failed"))?;
    replay.finish(&unreadable).context(stdout)?;
    r?;
    // Nothing to show is said, as `validate` says it has nothing to check (and with its
    // status, 2), unless an input could not be opened or read, which was said already.
    if events == 0 && io_errors == 0 {
        let mut diag = Diag::new(color_err);
        diag.error(None, "no events: the input holds nothing to replay");
        return Ok(ExitCode::from(2));
    }
    Ok(if io_errors > 0 {
        ExitCode::from(2)
    } else if bad_lines > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Waits for the next event line, keeping the ticker up to date; `None` at the end of input.
fn wait<W: Write>(
    rx: &mpsc::Receiver<Vec<u8>>,
    tick: Duration,
    replay: &mut Replay<W>,
) -> io::Result<Option<Vec<u8>>> {
    loop {
        match rx.recv_timeout(tick) {
            Ok(l) => return Ok(Some(l)),
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
            Err(RecvTimeoutError::Timeout) => replay.show_ticker()?,
        }
    }
}

/// Reads every source through the converter and hands each event line to `f`. With
/// `follow`, the last source, when it is a file, is read on as it grows and never ends.
/// `stored` (`--db`): the events of a store instead, read as a file of them is (with
/// `follow`, as they are stored).
fn read(
    sources: &[Source],
    stored: Option<(crate::store::query::Lines, String)>,
    opts: &Options,
    follow: bool,
    diag: &mut Diag,
    f: impl FnMut(&[u8]) -> io::Result<()>,
) -> anyhow::Result<()> {
    let mut out = Out::new(LineSink::new(f));
    let mut conv = Converter::new(opts, &mut out);
    if let Some((lines, name)) = stored {
        conv.set_live(follow);
        conv.run_reader(lines, &name, diag)?;
    }
    let last = sources.len().saturating_sub(1);
    for (i, src) in sources.iter().enumerate() {
        match src {
            Source::File(p) if follow && i == last => match std::fs::File::open(p) {
                Ok(file) => {
                    // Written as it is read: a prompt held for its session does not wait.
                    conv.set_live(true);
                    conv.run_reader(Follow(file), &src.name(), diag)?
                }
                Err(e) => diag.io_error(&src.name(), &e),
            },
            _ => conv.run_source(src, diag)?,
        }
    }
    drop(conv);
    out.flush()?;
    Ok(())
}

/// A file read like `tail -f`: at its end, waits for more instead of ending.
struct Follow(std::fs::File);

impl Read for Follow {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.0.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pace_divides_gaps_and_caps_them() {
        let mut p = Pace {
            speed: Some(2.0),
            max_gap: Duration::from_secs(1),
            last: None,
        };
        assert_eq!(p.gap(Some("2026-01-01T00:00:00.000Z")), None);
        assert_eq!(
            p.gap(Some("2026-01-01T00:00:01.000Z")),
            Some(Duration::from_millis(500))
        );
        assert_eq!(p.gap(None), None);
        assert_eq!(
            p.gap(Some("2026-01-01T00:01:00.000Z")),
            Some(Duration::from_secs(1))
        );
        assert_eq!(p.gap(Some("2026-01-01T00:00:00.000Z")), None);
        let mut off = Pace {
            speed: None,
            max_gap: Duration::from_secs(1),
            last: None,
        };
        assert_eq!(off.gap(Some("2026-01-01T00:00:00.000Z")), None);
    }

    /// What a terminal shows after `out`: `\r` returns to the line's start and overwrites.
    fn screen(out: &str) -> String {
        let mut lines: Vec<Vec<char>> = vec![Vec::new()];
        let mut col = 0;
        for c in out.chars() {
            match c {
                '\r' => col = 0,
                '\n' => {
                    lines.push(Vec::new());
                    col = 0;
                }
                c => {
                    let line = lines.last_mut().expect("a line");
                    if col < line.len() {
                        line[col] = c;
                    } else {
                        line.push(c);
                    }
                    col += 1;
                }
            }
        }
        let text: Vec<String> = lines
            .iter()
            .map(|l| l.iter().collect::<String>().trim_end().to_string())
            .collect();
        text.join("\n")
    }

    #[test]
    fn a_live_terminal_ends_with_the_same_screen_as_a_pipe() {
        // The ticker shows the deltas as they come, and leaves no trace: the screen is the
        // transcript a pipe gets, with every text once.
        let root = env!("CARGO_MANIFEST_DIR");
        let render = |events: &str, live: bool| {
            let lay = Layout {
                width: 80,
                full: false,
                thinking: false,
            };
            let mut r = Replay {
                model: Model::new(),
                sink: Sink::Term(Box::new(Term::new(Vec::new(), Palette::new(false), lay))),
                pace: Pace {
                    speed: None,
                    max_gap: Duration::ZERO,
                    last: None,
                },
                live,
                ticker: None,
                redact: false,
            };
            for line in events.lines() {
                r.event(line.as_bytes()).unwrap();
                r.show_ticker().unwrap(); // as when no further event is waiting
            }
            r.finish(&[]).unwrap();
            let Sink::Term(t) = r.sink else {
                unreachable!()
            };
            String::from_utf8(t.into_inner()).unwrap()
        };
        for case in [
            "claude/thinking-tool",
            "claude/subagent-partial",
            "claude-sdk/subagent-partial",
            "acp-claude/thinking-tool",
        ] {
            let events = std::fs::read_to_string(format!("{root}/testdata/{case}.events.jsonl"))
                .expect("events");
            let pipe = render(&events, false);
            let tty = render(&events, true);
            assert!(!pipe.contains('\r'), "{case}: a ticker on a pipe");
            assert!(tty.contains("… writing: "), "{case}: no ticker shown");
            assert_eq!(screen(&tty).trim_end(), pipe.trim_end(), "{case}");
        }
    }

    #[test]
    fn width_comes_from_the_flag_then_columns_then_the_terminal() {
        assert_eq!(resolve_width(Some(42), Some(140)), (42, false));
        if std::env::var_os("COLUMNS").is_none() {
            assert_eq!(resolve_width(None, Some(140)), (140, true));
            assert_eq!(resolve_width(None, Some(5000)), (1000, true));
            assert_eq!(resolve_width(None, None), (80, false));
        }
    }
}
