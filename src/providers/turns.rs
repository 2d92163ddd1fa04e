//! Inferred turn starts, for the wire formats that say where a turn ends (`result`) but not
//! where it begins: Claude Code and the formats that follow it (Qwen Code, Amp, Cursor,
//! OpenCode) and Gemini CLI's stream-json. The adapter contract's MVP subset has `run.started`
//! (`turn_start`); a provider opts in with [`super::Provider::infers_turns`], and the converter
//! runs [`infer`] on the events each of its lines made.
//!
//! A `turn_start` marked `insights.inferred` is written where `reduce` opens a turn without
//! one (`reduce`'s module doc, "Turns"): right after a `session_init` that names its session,
//! else before the first top-level prompt or piece of agent output (`user_input`, `text`,
//! `stream_delta`, `tool_invocation`, `subagent_spawn`, `permission_request`, `plan_update`),
//! or before a `turn_complete`, while no turn is open. A line that names no session opens
//! none: the prompt the SDK sends before the CLI has named its session is held for the
//! `system/init` that names it ([`super::held`]), the turn starts there, and the prompt is
//! written after the start, in the turn. A `turn_start` the provider writes
//! itself (Claude's session files) opens the turn, and `turn_complete` closes it. A
//! subagent's events (with a `parentCallId`) belong to the turn of their call and open none.
//! So `reduce` counts each turn once: the inferred start opens the turn it would have opened.
//!
//! The open turn is remembered per session ([`Memory`]), as `reduce` keeps it: a log of two
//! runs, the first killed in the middle of a turn, starts the second run's turn too, and
//! `reduce --from-state` can tell the converter which turns are running ([`resumed`]).
//!
//! An inferred event does not take a place in its line's numbering: its id is `anchor:start`,
//! and the line's other events keep the ids they have without it, so that a converter that
//! knows a turn is open (a resumed one) numbers the same events the same way.

use super::memo::Memo;
use super::Cx;
use crate::event::{Body, TurnStart};

crate::providers::memo::remember! {
    /// Whether a turn is open, by session id.
    pub struct Memory {
        /// Present (`()`) while the session's turn is open.
        pub open: Memo<()>,
        /// The last session looked up, and whether its turn is open.
        pub last: Last,
    }
}

/// The answer of [`Memory::open`] for the last session looked up, so that the lines of one
/// session (nearly all of a stream) do not hash its id again. Only a copy: every change goes to
/// both; equal to any other (the memo holds the facts), and cleared where a part of the stream
/// starts (`--jobs`), so that the part's first look-up is the memo's and its bookkeeping sees it.
#[derive(Clone, Default, Debug)]
pub struct Last(Option<(Box<str>, bool)>);

impl PartialEq for Last {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl super::memo::Remember for Last {
    fn begin(&mut self, _track: bool) {
        self.0 = None;
    }
    fn stale(&self, _guess: &Self, _actual: &Self) -> bool {
        false
    }
    fn after(&self, _before: Self) -> Self {
        Last(None)
    }
    fn forgotten(&mut self) -> super::memo::Forgot {
        Default::default()
    }
}

impl Memory {
    /// Whether `session`'s turn is open.
    fn is_open(&mut self, session: &str) -> bool {
        match &self.last.0 {
            Some((s, open)) if **s == *session => *open,
            _ => {
                let open = self.open.contains(session);
                self.last.0 = Some((session.into(), open));
                open
            }
        }
    }

    /// Opens or closes `session`'s turn, at input line `line`.
    fn set_open(&mut self, session: &str, open: bool, line: u64) {
        if open {
            self.open.insert(session, (), line);
        } else {
            self.open.remove(session);
        }
        match &mut self.last.0 {
            Some((s, o)) if **s == *session => *o = open,
            last => *last = Some((session.into(), open)),
        }
    }
}

/// What an event means for the turn boundaries.
enum Role {
    /// Nothing (session-level, or a subagent's).
    None,
    /// Opens a turn before itself when none is open.
    Opens,
    /// A `session_init` naming its session: opens a turn after itself.
    OpensAfter,
    /// The provider's own `turn_start`.
    Starts,
    /// `turn_complete`: closes the turn (opening one before it if none was).
    Completes,
}

fn role(body: &Body, named: bool) -> Role {
    let top = |parent: &Option<crate::event::Str>| parent.as_deref().is_none_or(str::is_empty);
    // A line that names no session (the SDK's first prompt, sent before the CLI has named
    // its session) opens no turn: the turn starts at the `system/init` that names it.
    let opens = |parent| {
        if named && top(parent) {
            Role::Opens
        } else {
            Role::None
        }
    };
    match body {
        Body::TurnStart(_) => Role::Starts,
        Body::TurnComplete(_) => Role::Completes,
        Body::SessionInit(_) if named => Role::OpensAfter,
        Body::UserInput(b) => opens(&b.parent_call_id),
        Body::Text(b) => opens(&b.parent_call_id),
        Body::StreamDelta(b) => opens(&b.parent_call_id),
        Body::ToolInvocation(b) => opens(&b.parent_call_id),
        Body::SubagentSpawn(b) => opens(&b.parent_call_id),
        Body::PermissionRequest(b) => opens(&b.parent_call_id),
        Body::PlanUpdate(b) => opens(&b.parent_call_id),
        _ => Role::None,
    }
}

/// For a provider's `at_end` that ends the turns its files leave open, one session at a call
/// (Gemini CLI's and Qwen Code's chat files): takes one open turn out of `memo` (the others
/// stay), and sets the line it writes the end on: anchor `<prompt>-end`, the time of the turn's
/// last record, its session. `prompt_and_latest` says a turn's prompt id and last time (RFC
/// 3339, empty when unknown); `None` when no turn is open.
pub fn take_open_turn<V: Clone + PartialEq + Send + Sync + 'static>(
    cx: &mut Cx<'_>,
    memo: fn(&mut super::Memory) -> &mut Memo<V>,
    prompt_and_latest: fn(&V) -> (&str, &str),
) -> Option<V> {
    cx.own_turns = true;
    let line = cx.line;
    let m = memo(cx.memory());
    let mut open = m.take_where(|_, _| true).into_iter();
    let (session, turn) = open.next()?;
    for (other, t) in open {
        m.insert(&other, t, line);
    }
    let (prompt, latest) = prompt_and_latest(&turn);
    cx.anchor = Some(std::borrow::Cow::Owned(format!("{prompt}-end")));
    let time = (!latest.is_empty()).then(|| std::borrow::Cow::Owned(latest.to_owned()));
    cx.wire_time(time);
    cx.session_id = Some(std::borrow::Cow::Owned(session));
    Some(turn)
}

/// Adds an inferred `turn_start` to the line's events where a turn begins (module doc).
pub fn infer(cx: &mut Cx<'_>) {
    // Taken out for the memory's key (borrowed beside `cx.memory()`), put back at the end.
    let sid = cx.session_id.take();
    let session = sid.as_deref().unwrap_or_default();
    let named = !session.is_empty();
    // Looked up at the first event that needs it: most lines' events are all session-level
    // or all inside an open turn.
    let mut open: Option<bool> = None;
    let mut i = 0;
    while i < cx.events.len() {
        let r = role(&cx.events[i].0, named);
        if matches!(r, Role::None) {
            i += 1;
            continue;
        }
        let was = *open.get_or_insert_with(|| cx.memory().turns.is_open(session));
        let (insert_at, now) = match r {
            Role::Starts => (None, true),
            Role::Completes => ((!was).then_some(i), false),
            // Unless the line's own `turn_start` follows (a session file's first prompt).
            Role::OpensAfter => {
                let own = cx.events[i + 1..]
                    .iter()
                    .any(|(b, _)| matches!(b, Body::TurnStart(_)));
                ((!was && !own).then_some(i + 1), true)
            }
            Role::Opens => ((!was).then_some(i), true),
            Role::None => unreachable!("skipped above"),
        };
        if let Some(at) = insert_at {
            let start = TurnStart { model: None }.into();
            super::insert_inferred(&mut cx.events, &mut cx.inserted, at, start);
            i += 1;
        }
        if now != was {
            let line = cx.line;
            cx.memory().turns.set_open(session, now, line);
        }
        open = Some(now);
        i += 1;
    }
    cx.session_id = sid;
}

/// The turn each session is in, for `--turn-ids`: the converter names every event of a turn
/// by it (`turnId`, the adapter contract's `RunID`), by `reduce`'s rules (its module doc,
/// "Turns"): a `turn_start` opens a turn, or names the running one while that has nothing
/// from the agent yet; without one, a top-level prompt or piece of agent output opens it;
/// `turn_complete` is its last event. A turn's id is the one the wire gives its first event
/// (Codex app-server's turn ids, AceClaw's `requestId`), else that event's id. A subagent's
/// events are in the turn of their call. Events outside any turn (a `session_init` before the
/// first prompt, control lines between turns) name none.
///
/// Kept by the converter, not in its [`Memory`]: `--turn-ids` converts on one thread, and a
/// converter resumed by `reduce --from-state` (which reads no ids) does not name turns.
#[derive(Default, Debug)]
pub struct Named {
    open: std::collections::HashMap<Box<str>, Open>,
}

/// A session's open turn.
#[derive(Clone, Debug)]
pub struct Open {
    id: std::sync::Arc<str>,
    /// Nothing from the agent yet (only its prompt, and what is about the session): a
    /// `turn_start` names this turn rather than opening another.
    fresh: bool,
}

impl Named {
    /// `session`'s open turn.
    pub fn open(&self, session: &str) -> Option<Open> {
        self.open.get(session).cloned()
    }

    /// Sets `session`'s open turn (`None`: closed).
    pub fn set(&mut self, session: &str, turn: Option<Open>) {
        match turn {
            Some(t) => {
                self.open.insert(session.into(), t);
            }
            None => {
                self.open.remove(session);
            }
        }
    }
}

/// The turn of an event of a line named `session` (`body`, its event id `id`, the turn id its
/// line gives it `own`), given its session's open turn `open`, which it moves.
pub fn name(
    open: &mut Option<Open>,
    body: &Body,
    own: Option<&str>,
    id: &str,
    named: bool,
) -> Option<std::sync::Arc<str>> {
    let new = |own: Option<&str>| Open {
        id: std::sync::Arc::from(own.unwrap_or(id)),
        fresh: true,
    };
    match role(body, named) {
        Role::Starts => match open {
            Some(o) if o.fresh => {}
            _ => *open = Some(new(own)),
        },
        Role::Opens if open.is_none() => *open = Some(new(own)),
        Role::Completes => {
            return open.take().map(|o| o.id).or_else(|| {
                own.map(std::sync::Arc::from)
                    .or(Some(std::sync::Arc::from(id)))
            });
        }
        _ => {}
    }
    let o = open.as_mut()?;
    if o.fresh && agent_work(body) {
        o.fresh = false;
    }
    Some(std::sync::Arc::clone(&o.id))
}

/// Whether a top-level event is the agent's work in its turn (an entry of the turn other
/// than its prompt and a mode change, for `reduce`).
fn agent_work(body: &Body) -> bool {
    let top = |parent: &Option<crate::event::Str>| parent.as_deref().is_none_or(str::is_empty);
    match body {
        Body::Text(b) => top(&b.parent_call_id),
        Body::StreamDelta(b) => top(&b.parent_call_id),
        Body::ToolInvocation(b) => top(&b.parent_call_id),
        Body::SubagentSpawn(b) => top(&b.parent_call_id),
        Body::PermissionRequest(b) => top(&b.parent_call_id),
        Body::PlanUpdate(b) => top(&b.parent_call_id),
        Body::ContextCompaction(_) | Body::Error(_) => true,
        _ => false,
    }
}

/// The memory of a converter that takes up a stream in which `open` (session id, provider
/// name) have a turn running: `reduce --from-state` reading the rest of a log, whose state
/// knows the turns its first part opened. Without it, the rest's first line of agent output
/// would start another turn. Sessions without an id are left out: their lines open no turn.
pub fn resumed<'p>(open: impl IntoIterator<Item = (&'p str, &'p str)>) -> super::Memory {
    let mut m = super::Memory::default();
    for (session, provider) in open {
        let infers = super::by_name(provider).is_some_and(|p| p.infers_turns);
        if infers && !session.is_empty() {
            m.turns.open.insert(session, (), 0);
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{SessionInit, TurnComplete, UserInput};

    /// The kinds of the events [`infer`] leaves for one line, and whether it inserted them, the
    /// memory carried over.
    fn line<'a>(
        memory: &mut Option<Box<super::super::Memory>>,
        session: &'a str,
        bodies: Vec<Body<'a>>,
    ) -> Vec<(&'static str, bool)> {
        let mut cx = crate::test_support::line_cx(memory, session, bodies);
        infer(&mut cx);
        *memory = cx.memory.take();
        // Whether each was inserted (bit of `inserted`, and so marked).
        cx.events
            .iter()
            .enumerate()
            .map(|(i, (b, e))| {
                let inserted = cx.inserted & (1 << i) != 0;
                assert_eq!(inserted, !e.is_empty(), "{i}");
                (b.kind(), inserted)
            })
            .collect()
    }

    fn prompt<'a>() -> Body<'a> {
        UserInput {
            text: "hi".into(),
            images: None,
            is_synthetic: false,
            parent_call_id: None,
        }
        .into()
    }

    #[test]
    fn a_turn_starts_once_after_the_init_or_before_the_prompt() {
        let mut m = None;
        let init = || -> Body { SessionInit::default().into() };
        let done = || -> Body { TurnComplete::default().into() };
        // The SDK's first prompt names no session: the turn starts at the init.
        assert_eq!(line(&mut m, "", vec![prompt()]), [("user_input", false)]);
        assert_eq!(
            line(&mut m, "s", vec![init()]),
            [("session_init", false), ("turn_start", true)]
        );
        assert_eq!(line(&mut m, "s", vec![prompt()]), [("user_input", false)]);
        assert_eq!(line(&mut m, "s", vec![done()]), [("turn_complete", false)]);
        // The next prompt opens the next turn; a result with no turn open gets one.
        assert_eq!(
            line(&mut m, "s", vec![prompt(), done(), done()]),
            [
                ("turn_start", true),
                ("user_input", false),
                ("turn_complete", false),
                ("turn_start", true),
                ("turn_complete", false)
            ]
        );
        // A turn_start the provider wrote itself is not doubled.
        assert_eq!(
            line(
                &mut m,
                "s",
                vec![TurnStart { model: None }.into(), prompt()]
            ),
            [("turn_start", false), ("user_input", false)]
        );
    }

    #[test]
    fn each_session_has_its_own_turn_and_a_files_own_start_is_not_doubled() {
        let mut m = None;
        let init = || -> Body { SessionInit::default().into() };
        let start = || -> Body { TurnStart { model: None }.into() };
        // A run killed in the middle of its turn, then another run in the same log.
        assert_eq!(
            line(&mut m, "a", vec![init()]),
            [("session_init", false), ("turn_start", true)]
        );
        assert_eq!(
            line(&mut m, "b", vec![init()]),
            [("session_init", false), ("turn_start", true)]
        );
        // A session file's first prompt line: the init it announces, then its own start.
        assert_eq!(
            line(&mut m, "c", vec![init(), start(), prompt()]),
            [
                ("session_init", false),
                ("turn_start", false),
                ("user_input", false)
            ]
        );
        // Two starts inserted in one line: both marked, the bits follow the shifts.
        assert_eq!(
            line(&mut m, "d", vec![TurnComplete::default().into(), prompt()]),
            [
                ("turn_start", true),
                ("turn_complete", false),
                ("turn_start", true),
                ("user_input", false)
            ]
        );
    }

    #[test]
    fn resumed_knows_the_open_turns_of_inferring_providers_only() {
        let mut m = resumed([
            ("a", "claude"),
            ("b", "codex"),
            ("c", "nobody"),
            ("", "gemini"),
        ]);
        assert!(m.turns.open.contains("a"));
        assert!(!m.turns.open.contains("b"));
        assert!(!m.turns.open.contains("c"));
        assert!(!m.turns.open.contains(""));
    }
}
