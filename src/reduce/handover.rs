//! `reduce --jobs`: the events a worker's converter makes, handed to the folding thread as
//! their views ([`Ev`]) packed into a [`Cargo`], not as JSON lines it would parse again.
//!
//! A worker makes each event's view as one thread does ([`Ev::fill_from`]) and packs it:
//! the members that are there, their strings and JSON text copied into one buffer per chunk,
//! their numbers and places into a list of words. The folding thread unpacks views that
//! borrow that buffer. Before, the worker wrote every event as JSON and the folding thread
//! read it back ([`Ev::read`]): on 50 MB of Codex output that was a third more CPU time than
//! one thread spent on the whole reduction.
//!
//! The view's line (not a member) is kept only for an event that may be parked
//! ([`super::apply::may_park`]): the reducer keeps the line of a parked event, and writes it
//! for no other.

use super::view::{CacheCreation, Denial, Ev, Exts, ModelUsage, StepUsage, TokenUsage};
use crate::event::Pairs;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// Packed views, in the order they were packed.
#[derive(Default)]
pub struct Cargo {
    /// The strings and JSON text of every view, one after another.
    text: String,
    /// Per view: which members are there (two words), then each one's words, in member order.
    words: Vec<u64>,
}

impl Cargo {
    /// Packs `ev`, with its line if `line`.
    pub fn pack(&mut self, ev: &Ev, line: Option<&str>) {
        ev.pack(self);
        line.map(Cow::Borrowed).put(self);
    }

    /// Empties it, keeping its room.
    pub fn clear(&mut self) {
        self.text.clear();
        self.words.clear();
    }

    /// Reads the views back, in order.
    pub fn unpack(&self) -> Unpack<'_> {
        Unpack {
            text: &self.text,
            words: &self.words,
            at: 0,
        }
    }

    fn word(&mut self, w: u64) {
        self.words.push(w);
    }

    fn str(&mut self, s: &str) {
        self.words.push(self.text.len() as u64);
        self.words.push(s.len() as u64);
        self.text.push_str(s);
    }
}

/// Reads a [`Cargo`]'s views back.
pub struct Unpack<'a> {
    text: &'a str,
    words: &'a [u64],
    at: usize,
}

impl<'a> Unpack<'a> {
    /// The next view into `ev`, which is empty ([`Ev::default`], or emptied by
    /// [`Unpacked::empty`]), with its line when it was packed with one. `None` when there is
    /// none left, or (an internal error) the words do not read as a view; `ev` is then to be
    /// emptied or dropped.
    pub fn next_into(&mut self, ev: &mut Ev<'a>) -> Option<Unpacked> {
        let there = ev.unpack(self)?;
        if let Some(line) = <Option<Cow<'a, str>> as Carry>::take(self)? {
            ev.line = match line {
                Cow::Borrowed(l) => l,
                Cow::Owned(_) => return None,
            };
        }
        Some(Unpacked(there))
    }

    fn word(&mut self) -> Option<u64> {
        let w = *self.words.get(self.at)?;
        self.at += 1;
        Some(w)
    }

    fn str(&mut self) -> Option<&'a str> {
        let start = usize::try_from(self.word()?).ok()?;
        let len = usize::try_from(self.word()?).ok()?;
        self.text.get(start..start.checked_add(len)?)
    }
}

/// Which members [`Unpack::next_into`] set.
#[derive(Clone, Copy)]
pub struct Unpacked(u128);

impl Unpacked {
    /// Empties `ev` of what was unpacked into it (and of what the fold sets: `seq`), without
    /// writing the whole view again: it is large (a hundred members), and an event has few.
    pub fn empty(self, ev: &mut Ev) {
        ev.empty(self.0);
    }
}

/// A member's value, packed into a [`Cargo`] and read back as it was.
pub trait Carry<'a>: Sized {
    /// Whether the member is there: a view packs only those (an absent one is its default).
    fn is_set(&self) -> bool {
        true
    }
    fn put(&self, c: &mut Cargo);
    fn take(r: &mut Unpack<'a>) -> Option<Self>;

    /// [`Carry::put`] of a member that is there (`is_set`): an `Option` is packed without
    /// saying it is `Some`.
    fn put_set(&self, c: &mut Cargo) {
        self.put(c);
    }

    /// What [`Carry::put_set`] packed.
    fn take_set(r: &mut Unpack<'a>) -> Option<Self> {
        Self::take(r)
    }
}

impl<'a> Carry<'a> for Cow<'a, str> {
    fn put(&self, c: &mut Cargo) {
        c.str(self);
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        r.str().map(Cow::Borrowed)
    }
}

impl<'a> Carry<'a> for String {
    fn put(&self, c: &mut Cargo) {
        c.str(self);
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        r.str().map(str::to_owned)
    }
}

/// JSON text: it was a `RawValue` when packed, so it is one again without being read.
impl<'a> Carry<'a> for Cow<'a, RawValue> {
    fn put(&self, c: &mut Cargo) {
        c.str(self.get());
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        crate::json_reader::raw_value(r.str()?).map(Cow::Borrowed)
    }
}

impl<'a> Carry<'a> for u64 {
    fn put(&self, c: &mut Cargo) {
        c.word(*self);
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        r.word()
    }
}

/// Which members a view has, one bit each.
impl<'a> Carry<'a> for u128 {
    fn put(&self, c: &mut Cargo) {
        c.word(*self as u64);
        c.word((*self >> 64) as u64);
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        let lo = r.word()?;
        Some(u128::from(r.word()?) << 64 | u128::from(lo))
    }
}

impl<'a> Carry<'a> for f64 {
    fn put(&self, c: &mut Cargo) {
        c.word(self.to_bits());
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        r.word().map(f64::from_bits)
    }
}

impl<'a> Carry<'a> for bool {
    fn is_set(&self) -> bool {
        *self
    }
    fn put(&self, c: &mut Cargo) {
        c.word(u64::from(*self));
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        r.word().map(|w| w != 0)
    }
}

impl<'a, T: Carry<'a>> Carry<'a> for Option<T> {
    fn is_set(&self) -> bool {
        self.is_some()
    }
    fn put(&self, c: &mut Cargo) {
        match self {
            Some(v) => {
                c.word(1);
                v.put(c);
            }
            None => c.word(0),
        }
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        match r.word()? {
            0 => Some(None),
            _ => T::take(r).map(Some),
        }
    }
    fn put_set(&self, c: &mut Cargo) {
        if let Some(v) = self {
            v.put(c);
        }
    }
    fn take_set(r: &mut Unpack<'a>) -> Option<Self> {
        T::take(r).map(Some)
    }
}

impl<'a> Carry<'a> for Exts<'a> {
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
    fn put(&self, c: &mut Cargo) {
        self.event_id.put(c);
        self.plan_id.put(c);
        self.step_index.put(c);
        self.parent_step_id.put(c);
        self.raw_reasoning.put(c);
        self.inferred.put(c);
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        Some(Exts {
            event_id: Carry::take(r)?,
            plan_id: Carry::take(r)?,
            step_index: Carry::take(r)?,
            parent_step_id: Carry::take(r)?,
            raw_reasoning: Carry::take(r)?,
            inferred: Carry::take(r)?,
        })
    }
}

impl<'a, T: Carry<'a>> Carry<'a> for Vec<T> {
    fn put(&self, c: &mut Cargo) {
        c.word(self.len() as u64);
        for v in self {
            v.put(c);
        }
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        let n = usize::try_from(r.word()?).ok()?;
        // Each element takes a word at least: a length beyond what is left is no length.
        let mut v = Vec::with_capacity(n.min(r.words.len() - r.at));
        for _ in 0..n {
            v.push(T::take(r)?);
        }
        Some(v)
    }
}

impl<'a, A: Carry<'a>, B: Carry<'a>> Carry<'a> for (A, B) {
    fn put(&self, c: &mut Cargo) {
        self.0.put(c);
        self.1.put(c);
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        Some((A::take(r)?, B::take(r)?))
    }
}

impl<'a, V: Carry<'a>> Carry<'a> for Pairs<'a, V> {
    fn put(&self, c: &mut Cargo) {
        self.0.put(c);
    }
    fn take(r: &mut Unpack<'a>) -> Option<Self> {
        Vec::take(r).map(Pairs)
    }
}

/// A struct packed member by member.
macro_rules! carry_struct {
    ($ty:ident $(<$a:lifetime>)? { $($field:ident),* $(,)? }) => {
        impl<'a> Carry<'a> for $ty $(<$a>)? {
            fn put(&self, c: &mut Cargo) {
                $(self.$field.put(c);)*
            }
            fn take(r: &mut Unpack<'a>) -> Option<Self> {
                Some($ty {
                    $($field: Carry::take(r)?,)*
                })
            }
        }
    };
}

carry_struct!(StepUsage {
    input_tokens,
    output_tokens,
    cache_read_input_tokens,
    cache_creation_input_tokens,
    cost,
    cache_creation,
});
carry_struct!(CacheCreation {
    ephemeral_1h_input_tokens
});
carry_struct!(TokenUsage {
    input_tokens,
    output_tokens,
    cache_read_tokens,
    cache_creation_tokens,
    reasoning_tokens,
});
carry_struct!(ModelUsage {
    input_tokens,
    output_tokens,
    cache_read_tokens,
    cache_creation_tokens,
    reasoning_tokens,
    cost_usd,
    context_window,
    context_tokens,
    web_search_requests,
    max_output_tokens,
});
carry_struct!(Denial<'a> { tool_use_id });

#[cfg(test)]
mod tests {
    use super::*;

    /// The view as `Debug` shows it, with where it came from blanked.
    fn shown(ev: &Ev) -> String {
        let mut s = format!("{ev:?}");
        if let Some(at) = s.find(", line: ") {
            s.truncate(at);
        }
        s
    }

    #[test]
    fn views_come_back_as_they_were_packed() {
        let lines = [
            r#"{"event":"text","seq":3,"sessionId":"s","text":"a\"b","kind":"text","isError":true}"#,
            r#"{"event":"tool_invocation","input":{"a":[1,{"b":null}]},"locations":["x","y\n"],"durationMs":0}"#,
            r#"{"event":"turn_complete","costUsd":0.1,"errors":["e"],"modelUsage":{"m":{"inputTokens":1,"costUsd":2.5}},"permissionDenials":[{"tool_use_id":"t"},{}],"allowed":false}"#,
            r#"{"event":"usage_update","stepUsage":{"input_tokens":4},"total":{"inputTokens":5}}"#,
            r#"{"event":"user_input","images":[1,2],"text":""}"#,
        ];
        let mut c = Cargo::default();
        for (i, l) in lines.iter().enumerate() {
            let ev = Ev::parse(l).unwrap();
            c.pack(&ev, (i % 2 == 0).then_some(*l));
        }
        let mut r = c.unpack();
        let mut ev = Ev::default();
        let empty = shown(&ev);
        for (i, l) in lines.iter().enumerate() {
            let got = r.next_into(&mut ev).unwrap();
            assert_eq!(shown(&ev), shown(&Ev::parse(l).unwrap()), "{l}");
            assert_eq!(ev.line, if i % 2 == 0 { *l } else { "" });
            ev.seq = Some(7);
            got.empty(&mut ev);
            assert_eq!(shown(&ev), empty);
            assert_eq!(ev.line, "");
        }
        assert!(r.next_into(&mut ev).is_none());
    }

    #[test]
    fn words_that_are_no_view_are_refused() {
        let mut c = Cargo::default();
        c.pack(
            &Ev::parse(r#"{"event":"text","text":"abc"}"#).unwrap(),
            None,
        );
        for cut in 0..c.words.len() {
            let short = Cargo {
                text: c.text.clone(),
                words: c.words[..cut].to_vec(),
            };
            assert!(
                short.unpack().next_into(&mut Ev::default()).is_none(),
                "{cut}"
            );
        }
        let mut long = Cargo {
            text: c.text.clone(),
            words: c.words.clone(),
        };
        // The text member's length, beyond the text.
        let len = long.words.len() - 2;
        long.words[len] = 99;
        assert!(long.unpack().next_into(&mut Ev::default()).is_none());
    }
}
