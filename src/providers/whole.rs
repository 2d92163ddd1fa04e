//! Whole messages, for the wire formats that stream an agent's message as deltas and never
//! send it whole: ACP (`agent_message_chunk`, `agent_thought_chunk`), Gemini CLI's stream-json
//! (`message` with `delta`) and AceClaw (`stream.text`, `stream.thinking`). The adapter
//! contract's `assistant.message` is the whole message; a provider opts in with
//! [`super::Provider::whole_messages`], and the converter runs [`assemble`] on the events each
//! of its lines made.
//!
//! A message is the run of a session's `stream_delta` chunks of one kind (`text` or
//! `thinking`), one agent (`parentCallId`) and one message (`messageId`, when both sides have
//! one). It ends where `reduce` ends it (RULE 2 and RULE 9): at the session's next event that
//! is not its chunk. There, right before that event, the converter writes one `text` of the
//! message's kind with its whole text (and its `messageId` and `parentCallId`), marked
//! `insights.inferred`: the same event Claude's stream writes after its deltas, which `reduce`
//! and `replay` read as the final text of the streamed message. A `text` of the same kind,
//! agent and message that the provider writes itself is the final text, and nothing is added.
//! The turn's end is such an event (`turn_complete`). The end of the input is not: a stream
//! cut in the middle of a message has not said it whole (its chunks are there, which `reduce`
//! and `replay` assemble), and a log read again from a point before the cut must give the
//! events of one reading.
//!
//! The text is gathered in one buffer per open message (the session's entry of [`Memory`]),
//! appended to as each chunk passes and moved into the event at its end: no copy per chunk.
//!
//! Like an inferred `turn_start` ([`super::turns`]), the `text` takes no place in its line's
//! numbering: its id is `anchor:text`, and the line's other events keep theirs.

use super::memo::Memo;
use super::{insert_inferred, Cx};
use crate::event::{Body, Str, StreamDeltaKind, Text, TextKind};
use std::borrow::Cow;

crate::providers::memo::remember! {
    /// The message each session is streaming, by session id.
    pub struct Memory {
        pub open: Memo<Open>,
        /// Under `""`: the session that began the last message. A line that names no session
        /// (an ACP answer whose request the stream does not hold) is that session's, as
        /// `reduce` reads it (the last session named), unless a message of no session is open.
        pub current: Memo<String>,
    }
}

/// A message being streamed.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Open {
    /// Thinking, else text.
    thinking: bool,
    /// The agent's call (`parentCallId`), for a subagent's message.
    parent: Option<String>,
    /// The message's id, once a chunk has said it.
    message_id: Option<String>,
    /// The text so far.
    text: String,
    /// The provider of its chunks.
    provider: &'static str,
}

/// What an event is to the session's open message.
enum Part<'e, 'a> {
    /// A chunk of text or thinking: `(thinking, parent, message id, text)`.
    Chunk(bool, Option<&'e str>, Option<&'e str>, Option<&'e Str<'a>>),
    /// A whole text or thinking the provider wrote: `(thinking, parent, message id)`.
    Whole(bool, Option<&'e str>, Option<&'e str>),
    /// Anything else: it ends the open message.
    Other,
}

fn part<'e, 'a>(body: &'e Body<'a>) -> Part<'e, 'a> {
    match body {
        Body::StreamDelta(d) => match d.kind {
            StreamDeltaKind::Text | StreamDeltaKind::Thinking => Part::Chunk(
                d.kind == StreamDeltaKind::Thinking,
                d.parent_call_id.as_deref(),
                d.message_id.as_deref(),
                d.text_delta.as_ref(),
            ),
            _ => Part::Other,
        },
        Body::Text(t) => match t.kind {
            TextKind::Text | TextKind::Thinking => Part::Whole(
                t.kind == TextKind::Thinking,
                t.parent_call_id.as_deref(),
                t.message_id.as_deref(),
            ),
            _ => Part::Other,
        },
        _ => Part::Other,
    }
}

impl Open {
    fn new(
        thinking: bool,
        parent: Option<&str>,
        message_id: Option<&str>,
        text: &str,
        provider: &'static str,
    ) -> Open {
        Open {
            thinking,
            parent: parent.map(str::to_owned),
            message_id: message_id.map(str::to_owned),
            text: text.to_owned(),
            provider,
        }
    }

    /// Whether a chunk or text of this kind, agent and message belongs to this message (ids
    /// compared only when both are known, as `reduce` does).
    fn holds(&self, thinking: bool, parent: Option<&str>, message_id: Option<&str>) -> bool {
        self.thinking == thinking
            && self.parent.as_deref() == parent
            && match (self.message_id.as_deref(), message_id) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }

    /// The whole message, as the `text` event that ends it (its buffer moved out); `None`
    /// when its chunks held no text (an image).
    fn take<'a>(&mut self) -> Option<Body<'a>> {
        if self.text.is_empty() {
            return None;
        }
        let text = Text {
            text: Cow::Owned(std::mem::take(&mut self.text)),
            kind: if self.thinking {
                TextKind::Thinking
            } else {
                TextKind::Text
            },
            parent_call_id: self.parent.take().map(Cow::Owned),
            model: None,
            message_id: self.message_id.take().map(Cow::Owned),
        };
        Some(text.into())
    }
}

/// Adds the whole text of each message that ends among the line's events, before the event
/// that ends it, and gathers the chunks of the message still open (module doc).
pub fn assemble(cx: &mut Cx<'_>, provider: &'static str) {
    let sid = cx.session_id.take();
    let line = cx.line;
    let memory = &mut cx.memory.get_or_insert_with(Box::default).whole;
    let named = sid.as_deref().filter(|s| !s.is_empty());
    // A line that names no session is of the message of no session (an agent that names
    // none) when its chunks begin or continue one; else it ends the message of the session
    // that began the last one.
    let chunks = || {
        cx.events
            .iter()
            .any(|(b, _)| matches!(part(b), Part::Chunk(..)))
    };
    let current = match named {
        Some(_) => None,
        None if chunks() || memory.open.get("").is_some() => None,
        None => memory.current.get("").cloned(),
    };
    let session = named.or(current.as_deref()).unwrap_or_default();
    let memo = &mut memory.open;
    // Whether the session has a message open: looked up once, then kept up to date.
    let mut open = memo.get(session).is_some();
    let mut i = 0;
    while i < cx.events.len() {
        match part(&cx.events[i].0) {
            Part::Chunk(thinking, parent, message_id, text) => {
                let text = text.map_or("", |t| &**t);
                if open {
                    let o = memo.get_mut(session).expect("looked up as open");
                    if o.holds(thinking, parent, message_id) {
                        o.text.push_str(text);
                        if o.message_id.is_none() {
                            o.message_id = message_id.map(str::to_owned);
                        }
                        i += 1;
                        continue;
                    }
                    // Another kind, agent or message: the open one ends before it, and this
                    // chunk begins the next.
                    let next = Open::new(thinking, parent, message_id, text, provider);
                    if let Some(whole) = std::mem::replace(o, next).take() {
                        insert_inferred(&mut cx.events, &mut cx.inserted, i, whole);
                        i += 1;
                    }
                    i += 1;
                    continue;
                }
                let o = Open::new(thinking, parent, message_id, text, provider);
                memo.insert(session, o, line);
                open = true;
                if named.is_some() && memory.current.get("").map(String::as_str) != Some(session) {
                    memory.current.insert("", session.to_owned(), line);
                }
            }
            Part::Whole(thinking, parent, message_id) if open => {
                // The provider's own final text of the message, else the end of it.
                let mut o = memo.remove(session).expect("looked up as open");
                open = false;
                if !o.holds(thinking, parent, message_id) {
                    if let Some(whole) = o.take() {
                        insert_inferred(&mut cx.events, &mut cx.inserted, i, whole);
                        i += 1;
                    }
                }
            }
            Part::Other if open => {
                let mut o = memo.remove(session).expect("looked up as open");
                open = false;
                if let Some(whole) = o.take() {
                    insert_inferred(&mut cx.events, &mut cx.inserted, i, whole);
                    i += 1;
                }
            }
            Part::Whole(..) | Part::Other => {}
        }
        i += 1;
    }
    cx.session_id = sid;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{RateLimitUpdate, StreamDelta, TurnComplete};

    fn chunk<'a>(thinking: bool, message: Option<&'a str>, text: &'a str) -> Body<'a> {
        StreamDelta {
            kind: if thinking {
                StreamDeltaKind::Thinking
            } else {
                StreamDeltaKind::Text
            },
            parent_call_id: None,
            text_delta: Some(Cow::Borrowed(text)),
            json_delta: None,
            block_index: None,
            call_id: None,
            message_id: message.map(Cow::Borrowed),
        }
        .into()
    }

    fn text(s: &str) -> Body<'_> {
        Text {
            text: Cow::Borrowed(s),
            kind: TextKind::Text,
            parent_call_id: None,
            model: None,
            message_id: None,
        }
        .into()
    }

    /// One line's events after [`assemble`], the memory carried over: each as its kind, and
    /// for a text its text, `+` when inserted (its bit of `inserted` set, and marked).
    fn line<'a>(
        memory: &mut Option<Box<super::super::Memory>>,
        session: &'a str,
        bodies: Vec<Body<'a>>,
    ) -> Vec<String> {
        let mut cx = crate::test_support::line_cx(memory, session, bodies);
        assemble(&mut cx, "acp");
        *memory = cx.memory.take();
        cx.events
            .iter()
            .enumerate()
            .map(|(i, (b, e))| {
                let inserted = cx.inserted & (1 << i) != 0;
                assert_eq!(
                    inserted,
                    !e.is_empty(),
                    "{i}: inserted and only those marked"
                );
                let mark = if inserted { "+" } else { "" };
                match b {
                    Body::Text(t) => format!("{mark}{} {}", t.kind.as_str(), t.text),
                    b => format!("{mark}{}", b.kind()),
                }
            })
            .collect()
    }

    /// An event of no message (a rate limit notice).
    fn other<'a>() -> Body<'a> {
        RateLimitUpdate::default().into()
    }

    #[test]
    fn a_message_ends_at_the_next_event_that_is_not_its_chunk() {
        let mut m = None;
        assert_eq!(
            line(&mut m, "s", vec![chunk(false, None, "Hel")]),
            ["stream_delta"]
        );
        assert_eq!(
            line(&mut m, "s", vec![chunk(false, None, "lo")]),
            ["stream_delta"]
        );
        // Any other event ends it (RULE 2): the whole text comes right before it.
        assert_eq!(
            line(&mut m, "s", vec![other()]),
            ["+text Hello", "rate_limit_update"]
        );
        // Once: the next event finds nothing open.
        assert_eq!(
            line(&mut m, "s", vec![TurnComplete::default().into()]),
            ["turn_complete"]
        );
    }

    #[test]
    fn thinking_then_text_are_two_messages_and_so_are_two_message_ids() {
        let mut m = None;
        let got = line(
            &mut m,
            "s",
            vec![
                chunk(true, None, "Hm"),
                chunk(false, Some("m1"), "A"),
                chunk(false, Some("m1"), "B"),
                chunk(false, Some("m2"), "C"),
                TurnComplete::default().into(),
            ],
        );
        assert_eq!(
            got,
            [
                "stream_delta",
                "+thinking Hm",
                "stream_delta",
                "stream_delta",
                "+text AB",
                "stream_delta",
                "+text C",
                "turn_complete"
            ]
        );
    }

    #[test]
    fn the_provider_s_own_final_text_adds_nothing() {
        let mut m = None;
        line(&mut m, "s", vec![chunk(false, None, "Hi")]);
        assert_eq!(line(&mut m, "s", vec![text("Hi")]), ["text Hi"]);
        assert_eq!(line(&mut m, "s", vec![other()]), ["rate_limit_update"]);
    }

    #[test]
    fn sessions_stream_apart_and_a_message_of_no_text_writes_nothing() {
        let mut m = None;
        line(&mut m, "a", vec![chunk(false, None, "for a")]);
        line(&mut m, "b", vec![chunk(false, None, "")]);
        assert_eq!(line(&mut m, "b", vec![other()]), ["rate_limit_update"]);
        assert_eq!(
            line(&mut m, "a", vec![other()]),
            ["+text for a", "rate_limit_update"]
        );
    }
}
