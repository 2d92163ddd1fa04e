//! The prompt an SDK client sends before the CLI has named its session, held until a line
//! names it (CC-Insights requires a `sessionId` on every event; the adapter contract's events
//! carry their session).
//!
//! A Claude Agent SDK client writes its first prompt (`{"type":"user",…,"session_id":""}`)
//! before the CLI has started; the CLI's `system/init`, a line or two later, names the
//! session. Later prompts of the stream name the session the stream named
//! (`claude::track_session`), so this happens once per recording. The converter
//! (`src/convert.rs`) holds such a line, converted to a lone top-level `user_input` of an
//! unnamed session of a provider that infers its turns, instead of writing it, and converts
//! it again when it lets it go:
//! - **named**, at the next line of the same provider that names a session: after that line's
//!   events when the line starts with its `session_init` (the prompt then opens, or is in, the
//!   turn that starts there), else before them;
//! - **as it was** (`sessionId: ""`), when another prompt is to be held (at most one is), at a
//!   line of another provider, at the end of the input, and on live input (a pipe or a
//!   terminal, read line by line) when no further line is there to read: a CLI that takes
//!   seconds to start, or never answers, does not hold the prompt back.
//!
//! The prompt keeps its line number, id and the time it was read, so its events are the ones it
//! would have made, with the session and the turn filled in, and later in the output than its
//! line. Held in the stream's memory ([`Held`]), it crosses `--jobs` chunks and the inputs of a
//! run as any other memory.

use std::sync::Arc;

/// A prompt line held.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// The input line.
    pub text: Arc<str>,
    /// Its number in its input.
    pub line: u64,
    /// The provider that converted it.
    pub provider: &'static str,
    /// The time it was read (`--no-timestamp`: none).
    pub read_at: Option<Arc<str>>,
    /// The command that sent it (`insights run`), named on its events when they are written.
    pub command_id: Option<Arc<str>>,
}

/// The prompt held, if any; a [`super::memo::Remember`]: a part of the stream that looked at it
/// before setting it depends on its start's.
#[derive(Debug, Clone, Default)]
pub struct Held {
    prompt: Option<Arc<Prompt>>,
    /// `--jobs` bookkeeping: (looked at before set, set).
    track: Option<(bool, bool)>,
}

/// The prompts compare; the bookkeeping does not.
impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        self.prompt == other.prompt
    }
}

impl Held {
    /// Whether a prompt is held (looked at).
    pub fn is_some(&mut self) -> bool {
        self.look();
        self.prompt.is_some()
    }

    /// The provider of the prompt held (looked at).
    pub fn provider(&mut self) -> Option<&'static str> {
        self.look();
        self.prompt.as_ref().map(|p| p.provider)
    }

    /// Holds `p`; the prompt held before, if any, is returned.
    pub fn hold(&mut self, p: Prompt) -> Option<Arc<Prompt>> {
        let before = self.take();
        self.prompt = Some(Arc::new(p));
        before
    }

    /// Lets the prompt held go.
    pub fn take(&mut self) -> Option<Arc<Prompt>> {
        self.look();
        if let Some(t) = &mut self.track {
            t.1 = true;
        }
        self.prompt.take()
    }

    fn look(&mut self) {
        if let Some(t) = &mut self.track {
            t.0 |= !t.1;
        }
    }
}

impl super::memo::Remember for Held {
    fn begin(&mut self, track: bool) {
        self.track = track.then_some((false, false));
    }
    fn stale(&self, guess: &Self, actual: &Self) -> bool {
        match self.track {
            Some((looked, _)) => looked && guess.prompt != actual.prompt,
            None => guess != actual,
        }
    }
    fn after(&self, before: Self) -> Self {
        let own = self.track.is_none_or(|(_, set)| set);
        Held {
            prompt: if own {
                self.prompt.clone()
            } else {
                before.prompt
            },
            track: None,
        }
    }
    fn forgotten(&mut self) -> super::memo::Forgot {
        Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::memo::Remember;
    use super::*;

    fn prompt(line: u64) -> Prompt {
        Prompt {
            text: Arc::from("{}"),
            line,
            provider: "claude",
            read_at: None,
            command_id: None,
        }
    }

    #[test]
    fn a_part_that_looked_at_the_held_prompt_depends_on_its_start() {
        let mut with = Held::default();
        with.hold(prompt(3));
        let without = Held::default();
        // Looked (and found none): stale when the real start held one.
        let mut part = without.clone();
        part.begin(true);
        assert!(!part.is_some());
        assert!(part.stale(&without, &with));
        assert!(!part.stale(&without, &without));
        // Set before it looked: its own, whatever the start.
        let mut part = without.clone();
        part.begin(true);
        part.hold(prompt(9));
        assert!(
            part.stale(&without, &with),
            "hold looks at the one it replaces"
        );
        let mut part = without.clone();
        part.begin(true);
        assert_eq!(part.after(with.clone()), with);
        // Taken: the state after it holds none, from any start.
        let mut part = with.clone();
        part.begin(true);
        assert_eq!(part.take().map(|p| p.line), Some(3));
        assert_eq!(part.after(with.clone()), without);
    }
}
