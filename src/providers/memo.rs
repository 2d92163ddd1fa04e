//! What a provider remembers of a stream: the facts that one line states and a later line
//! needs (a JSON-RPC request's options for its answer, a call announced in a permission
//! request, the session a stream named).
//!
//! Each stateful provider keeps a `Memory` of its own, in its own module, made of [`Memo`]s
//! (or of other types that implement [`Remember`], such as Codex's one-bit `Seen`) and
//! declared with [`remember!`](remember); [`super::Memory`] holds one of each. The rules:
//! - **Bounded.** An entry leaves when the fact is used up (the request answered, the call
//!   ended). A memo holds at most [`Memo::CAP`] entries; past that it forgets the
//!   oldest eighth of its entries at once and says so ([`Memo::forgotten`], reported by the converter). A converter that
//!   finds nothing says `unknown` or leaves the field out: it never guesses.
//! - **The same output on any number of threads.** `--jobs` converts a chunk of lines from a
//!   guess of the state before it. While [`Memo::begin`] tracks, a memo notes the keys its
//!   chunk read without having written them first ([`Memo::read`]); the writer converts the
//!   chunk again when one of them differs between the guess and the state the chunk really
//!   starts from ([`Remember::stale`]), and otherwise puts the chunk's own writes on top of
//!   that state ([`Remember::after`]). A memo that had to forget, or that was scanned whole,
//!   depends on all of itself.

use crate::ids::{hash64, Prehashed};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// Sets and maps keyed by a [`hash64`] already computed.
type ByHash = BuildHasherDefault<Prehashed>;

/// An entry: the value, and the input line that wrote it. Keys and entries are shared between
/// copies of a memo (`Arc`): `--jobs` copies the stream's memory for each chunk, and a long log
/// keeps memos full, so that a copy that allocated per entry cost a third of two threads' time
/// (Codex, 200 MB). An entry changed in place is copied first ([`Memo::get_mut`]).
type Entry<V> = Arc<(V, u64)>;

/// A keyed memory: values by string key (a JSON-RPC id, a call id, a session id), each with
/// the input line that wrote it.
#[derive(Debug)]
pub struct Memo<V> {
    entries: BTreeMap<Arc<str>, Entry<V>>,
    /// Entries forgotten to stay within [`Memo::CAP`], in this part of the stream.
    forgotten: u64,
    /// `--jobs` bookkeeping, when [`Memo::begin`] asked for it.
    track: Option<Box<Track<V>>>,
}

/// The choice of a [`Memo::take_where`], kept to ask it again of another start.
type Pick<V> = Arc<dyn Fn(&str, &V) -> bool + Send + Sync>;

/// What a part of the stream did to a memo, beside its values. Keys are kept by their
/// [`hash64`], so that noting a line's reads and writes allocates nothing; two keys of one
/// memo that hash alike (odds of 2^-64 a pair) would count as one.
struct Track<V> {
    /// Keys written or removed, each with the order of its first write (0, 1, …).
    written: HashMap<u64, usize, ByHash>,
    /// Keys read before this part wrote them.
    read: HashSet<u64, ByHash>,
    /// Prefixes whose keys were all read ([`Memo::take_prefix`]), each with the number of
    /// keys this part had written before: the others under it came from the start.
    prefixes: BTreeMap<String, usize>,
    /// Scans ([`Memo::take_where`]), each with the number of keys this part had written
    /// before it: the part depends on the other entries the scan would choose.
    scans: Vec<(Pick<V>, usize)>,
    /// The part read the whole memo (it forgot its oldest entry).
    all: bool,
    /// Keys this part added that were not in the memo (whether it had to forget depends on
    /// how full its start was).
    added: usize,
}

impl<V> Default for Track<V> {
    fn default() -> Self {
        Track {
            written: HashMap::default(),
            read: HashSet::default(),
            prefixes: BTreeMap::new(),
            scans: Vec::new(),
            all: false,
            added: 0,
        }
    }
}

impl<V> std::fmt::Debug for Track<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Track")
            .field("written", &self.written.len())
            .field("read", &self.read.len())
            .field("prefixes", &self.prefixes)
            .field("scans", &self.scans.len())
            .field("all", &self.all)
            .finish()
    }
}

/// A copy of the values, without the `--jobs` bookkeeping of the part that made them: a copy
/// is a start for another part, which begins its own ([`Memo::begin`]).
impl<V: Clone> Clone for Memo<V> {
    fn clone(&self) -> Self {
        Memo {
            entries: self.entries.clone(),
            forgotten: self.forgotten,
            track: None,
        }
    }
}

impl<V> Default for Memo<V> {
    fn default() -> Self {
        Memo {
            entries: BTreeMap::new(),
            forgotten: 0,
            track: None,
        }
    }
}

/// Values compare; the bookkeeping does not.
impl<V: PartialEq> PartialEq for Memo<V> {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl<V: Clone + PartialEq> Memo<V> {
    /// The most entries a memo holds.
    pub const CAP: usize = 4096;
    /// A full memo forgets this fraction of itself at once (its oldest entries), so that a
    /// stream that keeps it full pays one pass over it per `CAP / FORGET` new keys, not one
    /// per key, and is told so as rarely.
    const FORGET: usize = 8;

    fn note_read(&mut self, key: &str) {
        if let Some(t) = &mut self.track {
            let h = hash64(key);
            if !t.written.contains_key(&h) {
                t.read.insert(h);
            }
        }
    }

    fn note_write(&mut self, key: &str) {
        if let Some(t) = &mut self.track {
            let n = t.written.len();
            t.written.entry(hash64(key)).or_insert(n);
        }
    }

    /// Whether this part wrote `key` before its `n`th first write.
    fn own_before(t: &Track<V>, key: &str, n: usize) -> bool {
        t.written.get(&hash64(key)).is_some_and(|&o| o < n)
    }

    /// The value under `key`.
    pub fn get(&mut self, key: &str) -> Option<&V> {
        self.note_read(key);
        self.entries.get(key).map(|e| &e.0)
    }

    /// The value under `key`, to change in place.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.note_read(key);
        self.note_write(key);
        self.entries.get_mut(key).map(|e| &mut Arc::make_mut(e).0)
    }

    /// Whether `key` has a value.
    pub fn contains(&mut self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`, written at input line `line`; forgets the oldest entry when the
    /// memo is full.
    pub fn insert(&mut self, key: &str, value: V, line: u64) {
        self.note_write(key);
        if self.entries.len() >= Self::CAP && !self.entries.contains_key(key) {
            self.forget_oldest(Self::CAP / Self::FORGET);
        }
        match self.entries.get_mut(key) {
            Some(slot) => *slot = Arc::new((value, line)),
            None => {
                if let Some(t) = &mut self.track {
                    t.added += 1;
                }
                self.entries.insert(Arc::from(key), Arc::new((value, line)));
            }
        }
    }

    /// Takes the value under `key` out.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        self.note_read(key);
        self.note_write(key);
        self.entries.remove(key).map(|e| Arc::unwrap_or_clone(e).0)
    }

    /// Takes out every entry `pick` chooses, in key order: what a part of the stream takes so
    /// depends on the entries `pick` chooses that it did not write itself.
    pub fn take_where(
        &mut self,
        pick: impl Fn(&str, &V) -> bool + Send + Sync + 'static,
    ) -> Vec<(String, V)> {
        if let Some(t) = &mut self.track {
            let own = t.written.len();
            t.scans.push((Arc::new(pick), own));
            let Some((pick, _)) = t.scans.last() else {
                return Vec::new();
            };
            let pick = Arc::clone(pick);
            return self.take_chosen(|k, v| pick(k, v));
        }
        self.take_chosen(pick)
    }

    fn take_chosen(&mut self, pick: impl Fn(&str, &V) -> bool) -> Vec<(String, V)> {
        let keys: Vec<Arc<str>> = self
            .entries
            .iter()
            .filter(|(k, e)| pick(k, &e.0))
            .map(|(k, _)| Arc::clone(k))
            .collect();
        self.take_keys(keys)
    }

    /// Takes out the entries under `keys`.
    fn take_keys(&mut self, keys: Vec<Arc<str>>) -> Vec<(String, V)> {
        keys.into_iter()
            .filter_map(|k| {
                self.note_write(&k);
                let e = self.entries.remove(&k)?;
                Some((k.to_string(), Arc::unwrap_or_clone(e).0))
            })
            .collect()
    }

    /// Takes out every entry whose key starts with `prefix`, in key order: what a part of the
    /// stream takes so depends on the entries under `prefix` it did not write itself.
    pub fn take_prefix(&mut self, prefix: &str) -> Vec<(String, V)> {
        if let Some(t) = &mut self.track {
            if !t.prefixes.contains_key(prefix) {
                let n = t.written.len();
                t.prefixes.insert(prefix.to_owned(), n);
            }
        }
        let keys: Vec<Arc<str>> = self
            .entries
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| Arc::clone(k))
            .collect();
        self.take_keys(keys)
    }

    /// The number of entries.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the memo is empty.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets the `n` entries written at the earliest input lines (ties by key).
    fn forget_oldest(&mut self, n: usize) {
        if let Some(t) = &mut self.track {
            t.all = true;
        }
        let mut by_age: Vec<(u64, &Arc<str>)> =
            self.entries.iter().map(|(k, e)| (e.1, k)).collect();
        let n = n.min(by_age.len());
        if n == 0 {
            return;
        }
        if n < by_age.len() {
            by_age.select_nth_unstable(n - 1);
        }
        let oldest: Vec<Arc<str>> = by_age[..n].iter().map(|(_, k)| Arc::clone(k)).collect();
        for k in oldest {
            self.note_write(&k);
            self.entries.remove(&k);
            self.forgotten += 1;
        }
    }

    /// Entries forgotten to stay within the cap since the last call; counts again from 0.
    pub fn forgotten(&mut self) -> u64 {
        std::mem::take(&mut self.forgotten)
    }
}

/// The `--jobs` side of a memory (see the module's doc): implemented for [`Memo`], and by
/// [`remember!`] for a struct of memos or memories.
pub trait Remember: Clone + Default + PartialEq {
    /// Starts a part of the stream: clears the bookkeeping, and keeps it while `track`.
    fn begin(&mut self, track: bool);
    /// Whether a part that started from `guess` and left `self` read anything that differs
    /// in `actual`, the state it really started from.
    fn stale(&self, guess: &Self, actual: &Self) -> bool;
    /// The state after this part, which ended as `self`, when it started from `before`
    /// without [`Remember::stale`] reads. `before` is taken, not copied: the writer of
    /// `--jobs` makes its state so once per chunk, and a memory can hold thousands of entries.
    fn after(&self, before: Self) -> Self;
    /// Entries forgotten to stay within the caps since the last call.
    fn forgotten(&mut self) -> u64;
}

impl<V: Clone + PartialEq> Remember for Memo<V> {
    fn begin(&mut self, track: bool) {
        self.track = track.then(Box::default);
    }

    fn stale(&self, guess: &Self, actual: &Self) -> bool {
        let Some(t) = &self.track else {
            return guess != actual;
        };
        if t.all {
            return guess != actual;
        }
        // From the real start, the keys it added could have filled the memo: it would have
        // forgotten entries (and said so) where it did not.
        if t.added > 0
            && guess.entries.len() != actual.entries.len()
            && actual.entries.len() + t.added >= Self::CAP
        {
            return true;
        }
        // The entries of a start that the part depends on, as `(key, entry)` in key order:
        // each one test of `depends` applies.
        fn those<V>(
            m: &Memo<V>,
            mut depends: impl FnMut(&str, &V) -> bool,
        ) -> Vec<(&Arc<str>, &Entry<V>)> {
            m.entries.iter().filter(|(k, e)| depends(k, &e.0)).collect()
        }
        let differ =
            |depends: &dyn Fn(&str, &V) -> bool| those(guess, depends) != those(actual, depends);
        (!t.read.is_empty() && differ(&|k, _| t.read.contains(&hash64(k))))
            || t.prefixes.iter().any(|(p, &own)| {
                differ(&|k, _| k.starts_with(p.as_str()) && !Self::own_before(t, k, own))
            })
            || t.scans
                .iter()
                .any(|(pick, own)| differ(&|k, v| !Self::own_before(t, k, *own) && pick(k, v)))
    }

    fn after(&self, before: Self) -> Self {
        let Some(t) = &self.track else {
            return self.clone();
        };
        // The part's own entries at its end, the start's for every key it did not write.
        let written = |k: &str| t.written.contains_key(&hash64(k));
        let mut entries = before.entries;
        if !t.written.is_empty() {
            entries.retain(|k, _| !written(k));
        }
        for (k, e) in &self.entries {
            if written(k) {
                entries.insert(Arc::clone(k), Arc::clone(e));
            }
        }
        Memo {
            entries,
            forgotten: 0,
            track: None,
        }
    }

    fn forgotten(&mut self) -> u64 {
        Memo::forgotten(self)
    }
}

/// Declares a struct of memos (or of other memories) and implements [`Remember`] for it
/// field by field, with `Clone`, `Default`, `Debug` and `PartialEq`.
macro_rules! remember {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $field:ident : $ty:ty,)* }) => {
        $(#[$m])*
        #[derive(Clone, Default, Debug, PartialEq)]
        pub struct $name { $($(#[$fm])* pub $field: $ty,)* }

        // A memory of no fields uses none of the arguments.
        #[allow(unused_variables)]
        impl $crate::providers::memo::Remember for $name {
            fn begin(&mut self, track: bool) {
                $($crate::providers::memo::Remember::begin(&mut self.$field, track);)*
            }
            fn stale(&self, guess: &Self, actual: &Self) -> bool {
                false $(|| $crate::providers::memo::Remember::stale(
                    &self.$field, &guess.$field, &actual.$field))*
            }
            fn after(&self, before: Self) -> Self {
                $name { $($field: $crate::providers::memo::Remember::after(
                    &self.$field, before.$field),)* }
            }
            fn forgotten(&mut self) -> u64 {
                0 $(+ $crate::providers::memo::Remember::forgotten(&mut self.$field))*
            }
        }
    };
}
pub(crate) use remember;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_that_reads_only_its_own_writes_is_not_stale() {
        let mut guess = Memo::default();
        guess.insert("a", 1, 1);
        let mut part = guess.clone();
        part.begin(true);
        part.insert("b", 2, 5);
        assert_eq!(part.get("b"), Some(&2));
        let mut actual = Memo::default();
        actual.insert("a", 9, 1);
        assert!(!part.stale(&guess, &actual));
        let end = part.after(actual.clone());
        assert_eq!(end.entries.get("a").map(|e| e.0), Some(9));
        assert_eq!(end.entries.get("b").map(|e| e.0), Some(2));
    }

    #[test]
    fn a_read_of_what_the_part_did_not_write_depends_on_its_start() {
        let mut guess = Memo::default();
        guess.insert("a", 1, 1);
        let mut part = guess.clone();
        part.begin(true);
        assert_eq!(part.remove("a"), Some(1));
        let same = guess.clone();
        assert!(!part.stale(&guess, &same));
        let mut actual = Memo::default();
        actual.insert("a", 2, 1);
        assert!(part.stale(&guess, &actual));
        // Read and absent in both: not stale; absent in one only: stale.
        let mut part = Memo::<i32>::default();
        part.begin(true);
        assert_eq!(part.get("x"), None);
        assert!(!part.stale(&Memo::default(), &Memo::default()));
        let mut with_x = Memo::default();
        with_x.insert("x", 5, 1);
        assert!(part.stale(&Memo::default(), &with_x));
        // The removal is a write: the end has no `a`, whatever the start had.
        let mut part = guess.clone();
        part.begin(true);
        part.remove("a");
        assert!(part.after(guess.clone()).is_empty());
    }

    #[test]
    fn a_full_memo_forgets_its_oldest_eighth_and_depends_on_all_of_itself() {
        let mut m = Memo::default();
        for i in 0..Memo::<u64>::CAP as u64 {
            m.insert(&format!("k{i}"), i, 100 + i);
        }
        let guess = m.clone();
        m.begin(true);
        m.insert("new", 0, 1_000_000);
        let gone = Memo::<u64>::CAP / 8;
        assert_eq!(m.len(), Memo::<u64>::CAP - gone + 1);
        assert!(!m.contains("k0"));
        assert!(!m.contains(&format!("k{}", gone - 1)));
        assert!(m.contains(&format!("k{gone}")));
        assert!(m.contains("new"));
        assert_eq!(m.forgotten(), gone as u64);
        assert_eq!(m.forgotten(), 0);
        // The room made lasts: the next new keys forget nothing.
        for i in 0..gone as u64 - 1 {
            m.insert(&format!("n{i}"), i, 2_000_000 + i);
        }
        assert_eq!(m.forgotten(), 0);
        let mut other = guess.clone();
        other.insert("k5", 77, 3);
        assert!(m.stale(&guess, &other));
        assert!(!m.stale(&guess, &guess));
    }

    #[test]
    fn a_part_that_would_have_filled_its_real_start_is_stale() {
        // The guess had room for the part's new keys; the real start was nearly full, so from
        // it the part would have forgotten entries (and said so).
        let mut guess = Memo::default();
        let mut actual = Memo::default();
        for i in 0..Memo::<u64>::CAP as u64 - 1 {
            actual.insert(&format!("k{i}"), i, i);
            if i < 10 {
                guess.insert(&format!("k{i}"), i, i);
            }
        }
        let mut part = guess.clone();
        part.begin(true);
        part.insert("new1", 1, 1_000_000);
        part.insert("new2", 2, 1_000_001);
        assert_eq!(part.forgotten(), 0);
        assert!(part.stale(&guess, &actual));
        // With room in the real start too, it is not.
        let mut roomy = guess.clone();
        roomy.insert("other", 0, 5);
        assert!(!part.stale(&guess, &roomy));
    }

    #[test]
    fn scans_take_in_key_order_and_depend_on_everything() {
        let mut m = Memo::default();
        m.insert("b", 2, 1);
        m.insert("a", 1, 2);
        m.insert("c", 3, 3);
        let guess = m.clone();
        m.begin(true);
        let taken = m.take_where(|_, v| *v != 2);
        assert_eq!(taken, vec![("a".to_string(), 1), ("c".to_string(), 3)]);
        let mut other = guess.clone();
        other.insert("z", 0, 4);
        assert!(m.stale(&guess, &other));
    }

    #[test]
    fn a_prefix_taken_depends_on_the_entries_under_it_only() {
        let mut m = Memo::default();
        m.insert("s1/a", 1, 1);
        m.insert("s2/a", 2, 2);
        let guess = m.clone();
        m.begin(true);
        m.insert("s1/b", 3, 3);
        let taken = m.take_prefix("s1/");
        assert_eq!(
            taken,
            vec![("s1/a".to_string(), 1), ("s1/b".to_string(), 3)]
        );
        assert_eq!(m.len(), 1);
        let mut other = guess.clone();
        other.insert("s2/z", 9, 4);
        assert!(!m.stale(&guess, &other));
        other.insert("s1/z", 9, 4);
        assert!(m.stale(&guess, &other));
        // What the start had under the prefix, taken (so written) by the take itself.
        let mut other = guess.clone();
        other.insert("s1/a", 7, 1);
        assert!(m.stale(&guess, &other));
        // The end holds neither what was taken nor what the start had under the prefix.
        let end = m.after(other.clone());
        assert!(end
            .entries
            .keys()
            .all(|k| !k.starts_with("s1/") || &**k == "s1/z"));
    }

    #[test]
    fn a_scan_depends_only_on_the_entries_it_would_choose() {
        let mut m = Memo::default();
        m.insert("s1/a", 1, 1);
        let guess = m.clone();
        m.begin(true);
        m.insert("s1/b", 2, 2);
        let taken = m.take_where(|k, _| k.starts_with("s1/"));
        assert_eq!(taken.len(), 2);
        // Another session's entry in the real start: the scan would not choose it.
        let mut other = guess.clone();
        other.insert("s2/z", 9, 0);
        assert!(!m.stale(&guess, &other));
        let end = m.after(other.clone());
        assert_eq!(
            end.entries.keys().map(|k| &**k).collect::<Vec<_>>(),
            ["s2/z"]
        );
        // One it would choose: the part must be converted again.
        other.insert("s1/z", 9, 0);
        assert!(m.stale(&guess, &other));
    }

    #[test]
    fn a_copy_shares_its_entries_until_it_changes_one() {
        let mut a = Memo::default();
        a.insert("x", vec![1], 1);
        a.insert("y", vec![2], 2);
        let mut b = a.clone();
        assert!(Arc::ptr_eq(&a.entries["x"], &b.entries["x"]));
        b.get_mut("x").unwrap().push(3);
        b.insert("y", vec![9], 5);
        assert_eq!(b.remove("y"), Some(vec![9]));
        assert_eq!(a.get("x"), Some(&vec![1]));
        assert_eq!(a.get("y"), Some(&vec![2]));
        assert_eq!(b.get("x"), Some(&vec![1, 3]));
        assert_eq!(a.remove("x"), Some(vec![1]));
        assert_eq!(b.len(), 1);
    }

    remember! {
        /// Two memos, as a provider declares them.
        pub struct Two {
            pub a: Memo<u8>,
            pub b: Memo<String>,
        }
    }

    #[test]
    fn the_macro_goes_field_by_field() {
        let mut t = Two::default();
        t.begin(true);
        t.b.insert("s", "x".into(), 1);
        let before = Two::default();
        let end = t.after(before.clone());
        assert_eq!(end.b.entries.len(), 1);
        assert!(!t.stale(&before, &before));
    }
}
