//! `reduce --jobs N`: raw provider output converted on N workers while the calling thread
//! folds the events into the state, in input order.
//!
//! The result is one thread's ([`super::read_source`]) exactly: the state, the diagnostics
//! and their order. A worker does with each line of its chunk what one thread does before
//! the fold ([`Lines`]): an InsightsEvent line is copied as it is, provider output goes
//! through the chunk's converter, and what is reported about the line is kept with it. The
//! converter hands its events to the worker, which makes their views as one thread does
//! ([`Ev::fill_from`]) and packs them ([`Cargo`]); the calling thread unpacks the views and
//! folds them. Copied lines it reads from their text ([`Ev::read`]), as one thread does.
//!
//! The one thing a worker cannot do as one thread would: an InsightsEvent line that
//! [`Ev::read`] cannot read goes through the converter (it passes the line through, renumbered
//! by the converter's count of events so far in the source, or says what is wrong with it).
//! The calling thread knows that count, so it converts those lines itself ([`Fold::copied`]).

use super::apply::may_park;
use super::handover::Cargo;
use super::view::Ev;
use super::{kind, read_back, unreadable_msg, Fed, Kind, Reducer};
use crate::convert::{Converter, Options};
use crate::detect::Probe;
use crate::diag::Diag;
use crate::event::Event;
use crate::input::{Line, Source};
use crate::output::Out;
use crate::parallel::{InputLine, Parallel, Piece, Work};
use anyhow::Context as _;
use std::cell::RefCell;
use std::io::{self, Write as _};
use std::sync::Mutex;

/// What a worker made of one input line, in input order.
pub enum Item {
    /// An InsightsEvent line, copied into the chunk's output up to `end` (with its `\n`):
    /// read as written, its `seq` kept.
    Event {
        end: usize,
        lineno: u64,
        unterminated: bool,
    },
    /// What the converter made of a provider line: `made` events, packed into the chunk's
    /// cargo but for those that could not be read (`unreadable`, why), then any lines it
    /// passed through, up to `end`.
    Converted {
        end: usize,
        lineno: u64,
        made: u64,
        unreadable: Vec<String>,
    },
    /// What was reported about the line, printed before its events (as one thread prints the
    /// converter's messages while it converts, and its own after).
    Said(Box<Diag>),
}

/// What a worker hands over of a chunk.
#[derive(Default)]
pub struct Notes {
    items: Vec<Item>,
    /// The chunk's output, checked to be UTF-8 on the worker (on the calling thread, the one
    /// that waits, that check took a sixth of its time).
    text: String,
    /// The views of the events the converter made.
    cargo: Cargo,
    /// Of the line being converted: how many events the converter made, and why those that
    /// could not be read could not.
    made: u64,
    unreadable: Vec<String>,
}

/// The workers' part.
#[derive(Default)]
pub struct Lines {
    /// The cargo of chunks folded, for the next chunks (a fresh one grew for every chunk,
    /// faulting its pages in).
    spare: Mutex<Vec<Cargo>>,
}

impl Work for Lines {
    type Notes = Notes;
    const MARKS: bool = false;
    const TAPS: bool = true;

    fn notes(&self) -> Notes {
        let cargo = self
            .spare
            .lock()
            .ok()
            .and_then(|mut s| s.pop())
            .unwrap_or_default();
        Notes {
            cargo,
            ..Notes::default()
        }
    }

    fn finish(&self, out: &mut Vec<u8>, notes: &mut Notes) {
        // The converter writes UTF-8 and copied lines were `str`s: the lossy copy is never made.
        notes.text = String::from_utf8(std::mem::take(out))
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    }

    fn line(
        &self,
        conv: &mut Converter<'_, Vec<u8>>,
        notes: &RefCell<Notes>,
        l: InputLine<'_>,
        name: &str,
        diag: &mut Diag,
    ) -> anyhow::Result<bool> {
        let mut said = diag.kept();
        let item = line_item(conv, &l, name, &mut said)?;
        let mut notes = notes
            .try_borrow_mut()
            .map_err(|_| anyhow::anyhow!("internal error: a chunk's notes were in use"))?;
        if !said.is_empty() {
            notes.items.push(Item::Said(Box::new(said)));
        }
        let item = match item {
            Some(Item::Converted { end, lineno, .. }) => Some(Item::Converted {
                end,
                lineno,
                made: std::mem::take(&mut notes.made),
                unreadable: std::mem::take(&mut notes.unreadable),
            }),
            item => item,
        };
        notes.items.extend(item);
        Ok(true)
    }

    /// What the input left open, ended by the converter: one more converted item, on the
    /// input's last line.
    fn end(
        &self,
        conv: &mut Converter<'_, Vec<u8>>,
        notes: &RefCell<Notes>,
        lineno: u64,
        name: &str,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        conv.close_input(lineno, name, diag)
            .context("cannot convert")?;
        let mut notes = notes
            .try_borrow_mut()
            .map_err(|_| anyhow::anyhow!("internal error: a chunk's notes were in use"))?;
        if notes.made > 0 {
            let item = Item::Converted {
                end: conv.out().w.get_ref().len(),
                lineno,
                made: std::mem::take(&mut notes.made),
                unreadable: std::mem::take(&mut notes.unreadable),
            };
            notes.items.push(item);
        }
        Ok(())
    }

    /// The event's view, packed as one thread reads it ([`super::Sink::event`]), with its line
    /// if it may be parked.
    fn event(&self, notes: &mut Notes, event: &Event<'_>) -> io::Result<()> {
        notes.made += 1;
        let mut line = String::new();
        let mut ev = Ev::default();
        if let Err(e) = ev.fill_from_event_or_line(event, &mut line)? {
            notes.unreadable.push(unreadable_msg(&e));
            return Ok(());
        }
        if may_park(&ev) {
            let line = ev.line_json();
            notes.cargo.pack(&ev, line.as_deref().map(|l| l.get()));
        } else {
            notes.cargo.pack(&ev, None);
        }
        Ok(())
    }
}

fn line_item(
    conv: &mut Converter<'_, Vec<u8>>,
    l: &InputLine<'_>,
    name: &str,
    said: &mut Diag,
) -> anyhow::Result<Option<Item>> {
    let lineno = l.lineno;
    if let Line::TooLong { len } = l.line {
        // Reported as the converter reports it.
        conv.input_line(
            Line::TooLong { len },
            l.bytes,
            lineno,
            l.unterminated,
            name,
            said,
        )?;
        return Ok(None);
    }
    if l.bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let mut probe = Probe::default();
    match kind(l.bytes, &mut probe) {
        Kind::Event(text) => {
            let w = &mut conv.out().w;
            w.write_all(text.as_bytes())
                .and_then(|_| w.write_all(b"\n"))
                .context("cannot convert")?;
            Ok(Some(Item::Event {
                end: w.get_ref().len(),
                lineno,
                unterminated: l.unterminated,
            }))
        }
        Kind::Provider(text) => {
            conv.probed_line(text, &probe, lineno, name, said)
                .context("cannot convert")?;
            Ok(Some(converted(conv, lineno)))
        }
        Kind::Unreadable => {
            conv.line(l.bytes, lineno, l.unterminated, name, said)
                .context("cannot convert")?;
            Ok(Some(converted(conv, lineno)))
        }
    }
}

/// A converted line's item, its events to be counted by [`Lines::line`].
fn converted(conv: &mut Converter<'_, Vec<u8>>, lineno: u64) -> Item {
    Item::Converted {
        end: conv.out().w.get_ref().len(),
        lineno,
        made: 0,
        unreadable: Vec::new(),
    }
}

/// Reads one source as [`super::read_source`] does, with `jobs` workers.
pub fn read_source(
    src: &Source,
    opts: &Options,
    jobs: usize,
    diag: &mut Diag,
    red: &mut Reducer,
    each: &mut dyn FnMut(&mut Reducer, Fed) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let name = src.name();
    let mut out = Out::chunk(Vec::new());
    let mut fold = Fold {
        red,
        each,
        name: &name,
        seq: 0,
        conv: Converter::new(opts, &mut out),
        cargo: None,
    };
    // One converter per source, as on one thread: a new run of the workers.
    let lines = Lines::default();
    let mut par = Parallel::new(opts, jobs);
    if let Some(start) = super::converter_start(&fold.red.state) {
        par.start_from(start);
    }
    par.run(src, diag, &lines, &mut |piece| {
        let go_on = fold.piece(piece)?;
        if let Ok(mut spare) = lines.spare.lock() {
            spare.extend(fold.cargo.take());
        }
        Ok(go_on)
    })
}

/// The calling thread's part: the fold, chunk by chunk.
struct Fold<'f, 'o> {
    red: &'f mut Reducer,
    each: &'f mut dyn FnMut(&mut Reducer, Fed) -> anyhow::Result<()>,
    name: &'f str,
    /// How many events the source's converter has numbered so far (one thread's converter's
    /// `seq`): the workers' and those of [`Fold::copied`].
    seq: u64,
    /// Converts the copied lines that cannot be read as they are.
    conv: Converter<'o, Vec<u8>>,
    /// The cargo of the chunk just folded, emptied, for the workers.
    cargo: Option<Cargo>,
}

impl Fold<'_, '_> {
    fn feed(&mut self, ev: &mut Ev) -> anyhow::Result<()> {
        let fed = self.red.feed(ev);
        (self.each)(self.red, fed)
    }

    /// Folds one chunk's events; `Ok(false)` once `--at` stopped the reading.
    fn piece(&mut self, piece: Piece<'_, Notes>) -> anyhow::Result<bool> {
        let diag = piece.diag;
        let text = std::mem::take(&mut piece.notes.text);
        let mut cargo = std::mem::take(&mut piece.notes.cargo);
        let mut views = cargo.unpack();
        // One view, emptied after each event.
        let mut ev = Ev::default();
        let mut start = 0;
        let mut part = |end: usize| {
            let p = text.get(start..end);
            start = end;
            p.ok_or_else(|| anyhow::anyhow!("internal error: a chunk's output was not UTF-8"))
        };
        for item in piece.notes.items.drain(..) {
            if self.red.stopped {
                break;
            }
            match item {
                Item::Said(said) => diag.absorb(*said),
                Item::Event {
                    end,
                    lineno,
                    unterminated,
                } => {
                    let line = part(end)?;
                    let line = line.strip_suffix('\n').unwrap_or(line);
                    let mut ev = Ev::default();
                    if ev.read(line).is_ok() {
                        self.feed(&mut ev)?;
                    } else {
                        drop(ev);
                        self.copied(line, lineno, unterminated, diag)?;
                    }
                }
                Item::Converted {
                    end,
                    lineno,
                    made,
                    mut unreadable,
                } => {
                    self.seq += made;
                    for _ in unreadable.len() as u64..made {
                        let got = views.next_into(&mut ev).ok_or_else(|| {
                            anyhow::anyhow!("internal error: a chunk's events did not unpack")
                        })?;
                        // Numbered by the chunk's converter: the reducer numbers it.
                        ev.seq = None;
                        self.feed(&mut ev)?;
                        got.empty(&mut ev);
                        if self.red.stopped {
                            break;
                        }
                    }
                    for e in unreadable.drain(..) {
                        diag.bad_line(self.name, lineno, None, &e);
                    }
                    for l in part(end)?.split('\n').filter(|l| !l.is_empty()) {
                        self.seq += 1;
                        if self.red.stopped {
                            continue;
                        }
                        let mut ev = Ev::default();
                        match ev.read(l) {
                            Ok(()) => {
                                ev.seq = None;
                                self.feed(&mut ev)?;
                            }
                            Err(e) => unreadable.push(unreadable_msg(&e)),
                        }
                    }
                    for e in unreadable {
                        diag.bad_line(self.name, lineno, None, &e);
                    }
                }
            }
        }
        // The buffers go back to the workers.
        *piece.out = text.into_bytes();
        // The view borrows the cargo.
        drop(ev);
        cargo.clear();
        self.cargo = Some(cargo);
        Ok(!self.red.stopped)
    }

    /// An InsightsEvent line that cannot be read as it is: the converter's (passed through,
    /// numbered after the events it numbered before, or reported), as on one thread.
    fn copied(
        &mut self,
        text: &str,
        lineno: u64,
        unterminated: bool,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        self.conv.set_seq(self.seq);
        self.conv
            .line(text.as_bytes(), lineno, unterminated, self.name, diag)
            .context("cannot convert")?;
        self.seq = self.conv.seq();
        let out = self.conv.out();
        out.flush().context("cannot convert")?;
        let buf = std::mem::take(out.w.get_mut());
        let name = self.name;
        read_back(
            &buf,
            text.as_bytes(),
            super::seq_of(text),
            lineno,
            name,
            diag,
            &mut |ev| {
                self.feed(ev)?;
                Ok(!self.red.stopped)
            },
        )?;
        Ok(())
    }
}
