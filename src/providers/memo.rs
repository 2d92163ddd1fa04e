//! What a provider remembers of a stream: the facts that one line states and a later line
//! needs (a JSON-RPC request's options for its answer, a call announced in a permission
//! request, the session a stream named).
//!
//! Each stateful provider keeps a `Memory` of its own, in its own module, made of [`Memo`]s
//! (or of other types that implement [`Remember`], such as Codex's one-bit `Seen`) and
//! declared with [`remember!`](remember); [`super::Memory`] holds one of each. The rules:
//! - **Bounded.** An entry leaves when the fact is used up (the request answered, the call
//!   ended). A memo holds at most [`Memo::CAP`] entries; past that it forgets the
//!   oldest eighth of its entries at once and counts them ([`Memo::forgotten`]; the converter
//!   says so at the end of the input). A converter that finds nothing says `unknown` or
//!   leaves the field out: it never guesses.
//! - **The same output on any number of threads.** `--jobs` converts a chunk of lines from a
//!   guess of the state before it. While [`Memo::begin`] tracks, a memo notes the keys its
//!   chunk looked up without having written them first; the writer converts the chunk again
//!   when one of them differs between the guess and the state the chunk really starts from
//!   ([`Remember::stale`]), and otherwise puts the chunk's own writes on top of that state
//!   ([`Remember::after`]). When forgetting may have happened (the part forgot entries, or
//!   the real start was full enough to), the writer replays the keys the part looked up, set
//!   and took on the real start ([`Shadow`]): the part stands when every lookup finds there
//!   what it found, and the state after it is the replay's; how full the guess was then does
//!   not matter.
//!
//! Entries are kept by the [`hash64`] of their key (with the key, checked on every lookup),
//! so that a memo's `--jobs` bookkeeping and the writer's checks work on hashes alone; two
//! keys of one memo that hash alike (odds of 2^-64 a pair) would share one entry.

use crate::ids::{hash64, Prehashed};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// Sets and maps keyed by a [`hash64`] already computed.
type ByHash = BuildHasherDefault<Prehashed>;

/// An entry: its key, its value, and the input line that wrote it.
#[derive(Clone, Debug, PartialEq)]
struct Item<V> {
    key: Arc<str>,
    value: V,
    line: u64,
}

/// A memo's entries, by the hash of their key. Entries are shared between copies of a memo
/// (`Arc`), and the map is a hash map, copied in one allocation: `--jobs` copies the stream's
/// memory for each chunk, and a long log keeps memos full (Codex, 200 MB: copies that
/// allocated per entry cost a third of two threads' time, and a tree's nodes a fifth). An
/// entry changed in place is copied first ([`Memo::get_mut`]); what needs key order sorts.
type Entries<V> = HashMap<u64, Arc<Item<V>>, ByHash>;

/// A keyed memory: values by string key (a JSON-RPC id, a call id, a session id), each with
/// the input line that wrote it.
#[derive(Debug)]
pub struct Memo<V> {
    entries: Entries<V>,
    /// Entries forgotten to stay within [`Memo::CAP`], in this part of the stream.
    forgotten: Forgot,
    /// `--jobs` bookkeeping, when [`Memo::begin`] asked for it.
    track: Option<Box<Track<V>>>,
}

/// Entries forgotten to stay within the caps: how many, and the input line of the first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Forgot {
    pub count: u64,
    pub first_line: Option<u64>,
}

impl Forgot {
    fn note(&mut self, count: usize, line: u64) {
        if count > 0 {
            self.count += count as u64;
            self.first_line.get_or_insert(line);
        }
    }

    /// Both counts, from the earlier first line.
    #[inline]
    pub fn add(&mut self, other: Forgot) {
        if other.count == 0 {
            return;
        }
        self.count += other.count;
        self.first_line = match (self.first_line, other.first_line) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// What a part of the stream did to a memo's keys (by hash), in order: what a [`Shadow`]
/// replays.
#[derive(Debug)]
enum Op {
    /// A lookup, and whether it found a value.
    Read(u64, bool),
    /// A value set under the key at an input line.
    Insert(u64, Arc<str>, u64),
    /// The key's entry taken out.
    Remove(u64),
    /// The keys forgotten (sorted) just before the next `Insert`.
    Forget(Vec<u64>),
}

/// The choice of a [`Memo::take_where`], kept to ask it again of another start.
type Pick<V> = Arc<dyn Fn(&str, &V) -> bool + Send + Sync>;

/// What a part of the stream did to a memo, beside its values, by key hash: noting a line's
/// reads and writes allocates nothing.
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
    /// The part's lookups, sets and takes, in order.
    log: Vec<Op>,
    /// The number of `Insert`s in `log`.
    inserts: usize,
    /// The part forgot entries.
    forgot: bool,
}

impl<V> Default for Track<V> {
    fn default() -> Self {
        Track {
            written: HashMap::default(),
            read: HashSet::default(),
            prefixes: BTreeMap::new(),
            scans: Vec::new(),
            log: Vec::new(),
            inserts: 0,
            forgot: false,
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
            .field("log", &self.log.len())
            .field("forgot", &self.forgot)
            .finish()
    }
}

impl<V> Track<V> {
    /// Notes a lookup of the key hashed `h`, and whether it found a value.
    fn read(&mut self, h: u64, hit: bool) {
        if !self.written.contains_key(&h) {
            self.read.insert(h);
        }
        self.log.push(Op::Read(h, hit));
    }

    fn write(&mut self, h: u64) {
        let n = self.written.len();
        self.written.entry(h).or_insert(n);
    }

    /// Whether this part wrote the key hashed `h` before its `n`th first write.
    fn own_before(&self, h: u64, n: usize) -> bool {
        self.written.get(&h).is_some_and(|&o| o < n)
    }
}

/// A copy of the values, without the `--jobs` bookkeeping of the part that made them: a copy
/// is a start for another part, which begins its own ([`Memo::begin`]).
impl<V: Clone> Clone for Memo<V> {
    fn clone(&self) -> Self {
        Memo {
            entries: self.entries.clone(),
            forgotten: Forgot::default(),
            track: None,
        }
    }
}

impl<V> Default for Memo<V> {
    fn default() -> Self {
        Memo {
            entries: HashMap::default(),
            forgotten: Forgot::default(),
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

    /// The key's hash, and its entry if it has one.
    fn find(&self, key: &str) -> (u64, Option<&Arc<Item<V>>>) {
        let h = hash64(key);
        (h, self.entries.get(&h).filter(|it| &*it.key == key))
    }

    /// The value under `key`.
    pub fn get(&mut self, key: &str) -> Option<&V> {
        let h = hash64(key);
        let found = self.entries.get(&h).filter(|it| &*it.key == key);
        if let Some(t) = &mut self.track {
            t.read(h, found.is_some());
        }
        found.map(|it| &it.value)
    }

    /// The value under `key`, to change in place.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let h = hash64(key);
        if let Some(t) = &mut self.track {
            let hit = self.entries.get(&h).is_some_and(|it| &*it.key == key);
            t.read(h, hit);
            t.write(h);
        }
        match self.entries.get_mut(&h) {
            Some(it) if &*it.key == key => Some(&mut Arc::make_mut(it).value),
            _ => None,
        }
    }

    /// Whether `key` has a value.
    pub fn contains(&mut self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`, written at input line `line`; forgets the oldest entries when
    /// the memo is full.
    pub fn insert(&mut self, key: &str, value: V, line: u64) {
        let (h, found) = self.find(key);
        let key: Arc<str> = found.map_or_else(|| Arc::from(key), |it| Arc::clone(&it.key));
        if let Some(t) = &mut self.track {
            t.write(h);
        }
        if self.entries.len() >= Self::CAP && !self.entries.contains_key(&h) {
            self.forget_oldest(Self::CAP / Self::FORGET, line);
        }
        if let Some(t) = &mut self.track {
            t.log.push(Op::Insert(h, Arc::clone(&key), line));
            t.inserts += 1;
        }
        self.entries.insert(h, Arc::new(Item { key, value, line }));
    }

    /// Takes the value under `key` out.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let (h, found) = self.find(key);
        let hit = found.is_some();
        if let Some(t) = &mut self.track {
            t.read(h, hit);
            t.log.push(Op::Remove(h));
            t.write(h);
        }
        if !hit {
            return None;
        }
        self.entries
            .remove(&h)
            .map(|it| Arc::unwrap_or_clone(it).value)
    }

    /// Takes out every entry `pick` chooses, in key order: what a part of the stream takes so
    /// depends on the entries `pick` chooses that it did not write itself.
    pub fn take_where(
        &mut self,
        pick: impl Fn(&str, &V) -> bool + Send + Sync + 'static,
    ) -> Vec<(String, V)> {
        if let Some(t) = &mut self.track {
            let own = t.written.len();
            let pick: Pick<V> = Arc::new(pick);
            t.scans.push((Arc::clone(&pick), own));
            return self.take_chosen(|k, v| pick(k, v));
        }
        self.take_chosen(pick)
    }

    /// Takes out the entries `pick` chooses, in key order.
    fn take_chosen(&mut self, pick: impl Fn(&str, &V) -> bool) -> Vec<(String, V)> {
        let mut chosen: Vec<(Arc<str>, u64)> = self
            .entries
            .iter()
            .filter(|(_, it)| pick(&it.key, &it.value))
            .map(|(&h, it)| (Arc::clone(&it.key), h))
            .collect();
        chosen.sort_unstable();
        chosen
            .into_iter()
            .filter_map(|(k, h)| {
                if let Some(t) = &mut self.track {
                    t.write(h);
                    t.log.push(Op::Read(h, true));
                    t.log.push(Op::Remove(h));
                }
                let it = self.entries.remove(&h)?;
                Some((k.to_string(), Arc::unwrap_or_clone(it).value))
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
        self.take_chosen(|k, _| k.starts_with(prefix))
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

    /// The value under `key`, noting nothing.
    #[cfg(test)]
    fn peek(&self, key: &str) -> Option<&V> {
        self.find(key).1.map(|it| &it.value)
    }

    /// Forgets the `n` entries written at the earliest input lines (ties by key), to make room
    /// for a key set at input line `line`.
    fn forget_oldest(&mut self, n: usize, line: u64) {
        let gone = oldest(
            self.entries.iter().map(|(&h, it)| (it.line, &*it.key, h)),
            n,
        );
        for h in &gone {
            self.entries.remove(h);
        }
        self.forgotten.note(gone.len(), line);
        if let Some(t) = &mut self.track {
            t.forgot = true;
            t.log.push(Op::Forget(gone));
        }
    }

    /// Entries forgotten to stay within the cap since the last call; counts again from 0.
    #[inline]
    pub fn forgotten(&mut self) -> Forgot {
        if self.forgotten.count == 0 {
            return Forgot::default();
        }
        std::mem::take(&mut self.forgotten)
    }

    /// Whether what the part noted in `t` could have made a memo forget entries, from `start`
    /// or from the guess it was converted from: then [`Shadow`] tells what really happens.
    fn may_forget(t: &Track<V>, start: &Self) -> bool {
        t.forgot || start.entries.len() + t.inserts >= Self::CAP
    }
}

/// The hashes of the `n` entries among `(line, key, hash)` written at the earliest lines
/// (ties by key), sorted: the entries a full memo forgets.
fn oldest<'k>(entries: impl Iterator<Item = (u64, &'k str, u64)>, n: usize) -> Vec<u64> {
    let mut by_age: Vec<(u64, &str, u64)> = entries.collect();
    let n = n.min(by_age.len());
    if n == 0 {
        return Vec::new();
    }
    if n < by_age.len() {
        by_age.select_nth_unstable(n - 1);
    }
    let mut gone: Vec<u64> = by_age[..n].iter().map(|&(_, _, h)| h).collect();
    gone.sort_unstable();
    gone
}

/// A part of the stream's key operations replayed on another start (the one it really
/// starts from): which keys a memo holds at the end, what it forgot on the way, and whether
/// the part's lookups and forgettings would have gone the same. The start's entries are
/// read, not copied: `over` holds the keys the replay set or took out.
struct Shadow {
    /// Keys set (with their line and key) or taken out (`None`) by the replay.
    over: HashMap<u64, Option<(u64, Arc<str>)>, ByHash>,
    /// Every lookup of the part finds a value here exactly when it found one.
    same_reads: bool,
    /// The replay forgets the same keys, at the same moments, as the part did.
    same_forgets: bool,
    forgot: Forgot,
    /// The keys the replay forgot.
    gone: Vec<u64>,
}

impl Shadow {
    fn replay<V: Clone + PartialEq>(t: &Track<V>, start: &Memo<V>) -> Shadow {
        let mut s = Shadow {
            over: HashMap::default(),
            same_reads: true,
            same_forgets: true,
            forgot: Forgot::default(),
            gone: Vec::new(),
        };
        let mut len = start.entries.len();
        let mut theirs: Option<&Vec<u64>> = None;
        for op in &t.log {
            match op {
                Op::Read(h, hit) => s.same_reads &= s.holds(start, *h) == *hit,
                Op::Remove(h) => {
                    len -= usize::from(s.holds(start, *h));
                    s.over.insert(*h, None);
                }
                Op::Forget(hs) => theirs = Some(hs),
                Op::Insert(h, k, line) => {
                    let theirs = theirs.take();
                    if len >= Memo::<V>::CAP && !s.holds(start, *h) {
                        let from_start = start
                            .entries
                            .iter()
                            .filter(|(h, _)| !s.over.contains_key(h))
                            .map(|(&h, it)| (it.line, &*it.key, h));
                        let set = s
                            .over
                            .iter()
                            .filter_map(|(&h, v)| v.as_ref().map(|(l, k)| (*l, &**k, h)));
                        let gone =
                            oldest(from_start.chain(set), Memo::<V>::CAP / Memo::<V>::FORGET);
                        s.forgot.note(gone.len(), *line);
                        s.same_forgets &= theirs == Some(&gone);
                        len -= gone.len();
                        for g in &gone {
                            s.over.insert(*g, None);
                        }
                        s.gone.extend(gone);
                    } else {
                        s.same_forgets &= theirs.is_none();
                    }
                    len += usize::from(!s.holds(start, *h));
                    s.over.insert(*h, Some((*line, Arc::clone(k))));
                }
            }
        }
        s
    }

    /// Whether the replay holds the key hashed `h`.
    fn holds<V>(&self, start: &Memo<V>, h: u64) -> bool {
        match self.over.get(&h) {
            Some(v) => v.is_some(),
            None => start.entries.contains_key(&h),
        }
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
    fn forgotten(&mut self) -> Forgot;
}

impl<V: Clone + PartialEq> Remember for Memo<V> {
    fn begin(&mut self, track: bool) {
        self.track = track.then(Box::default);
        self.forgotten = Forgot::default();
    }

    fn stale(&self, guess: &Self, actual: &Self) -> bool {
        let Some(t) = &self.track else {
            return guess != actual;
        };
        // The entries of a start that the part depends on, in key order: each one test of
        // `depends` applies.
        fn those<V>(
            m: &Memo<V>,
            mut depends: impl FnMut(u64, &str, &V) -> bool,
        ) -> Vec<&Arc<Item<V>>> {
            let mut those: Vec<_> = m
                .entries
                .iter()
                .filter(|(&h, it)| depends(h, &it.key, &it.value))
                .map(|(_, it)| it)
                .collect();
            those.sort_unstable_by(|a, b| a.key.cmp(&b.key));
            those
        }
        let differ = |depends: &dyn Fn(u64, &str, &V) -> bool| {
            those(guess, depends) != those(actual, depends)
        };
        let read_differs = t
            .read
            .iter()
            .any(|h| guess.entries.get(h) != actual.entries.get(h))
            || t.prefixes.iter().any(|(p, &own)| {
                differ(&|h, k, _| k.starts_with(p.as_str()) && !t.own_before(h, own))
            })
            || t.scans
                .iter()
                .any(|(pick, own)| differ(&|h, k, v| !t.own_before(h, *own) && pick(k, v)));
        if read_differs || !Self::may_forget(t, actual) {
            return read_differs;
        }
        // Forgetting happened, here or from the real start: the part stands if, replayed on
        // the real start, each of its lookups finds what it found (a scan, which looks at
        // every entry, only if the same entries were forgotten at the same moments), and it
        // still holds every entry it wrote that the replay keeps.
        let s = Shadow::replay(t, actual);
        !s.same_reads
            || (!s.same_forgets && (!t.prefixes.is_empty() || !t.scans.is_empty()))
            || t.written
                .keys()
                .any(|h| s.holds(actual, *h) && !self.entries.contains_key(h))
    }

    fn after(&self, before: Self) -> Self {
        let Some(t) = &self.track else {
            return self.clone();
        };
        // Where forgetting happened, the replay on `before` says which keys stay.
        let shadow = Self::may_forget(t, &before).then(|| Shadow::replay(t, &before));
        let kept: Vec<(u64, bool)> = t
            .written
            .keys()
            .map(|&h| (h, shadow.as_ref().is_none_or(|s| s.holds(&before, h))))
            .collect();
        let mut entries = before.entries;
        if let Some(s) = &shadow {
            for h in &s.gone {
                entries.remove(h);
            }
        }
        // The part's own entries at its end, the start's for every key it did not write.
        for (h, kept) in kept {
            match self.entries.get(&h).filter(|_| kept) {
                Some(it) => {
                    entries.insert(h, Arc::clone(it));
                }
                None => {
                    entries.remove(&h);
                }
            }
        }
        Memo {
            entries,
            forgotten: shadow.map(|s| s.forgot).unwrap_or_default(),
            track: None,
        }
    }

    fn forgotten(&mut self) -> Forgot {
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
            fn forgotten(&mut self) -> $crate::providers::memo::Forgot {
                let mut all = $crate::providers::memo::Forgot::default();
                $(all.add($crate::providers::memo::Remember::forgotten(&mut self.$field));)*
                all
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
        assert_eq!(end.peek("a"), Some(&9));
        assert_eq!(end.peek("b"), Some(&2));
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
    fn a_full_memo_forgets_its_oldest_eighth() {
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
        let forgot = Forgot {
            count: gone as u64,
            first_line: Some(1_000_000),
        };
        assert_eq!(m.forgotten(), forgot);
        assert_eq!(m.forgotten(), Forgot::default());
        // The room made lasts: the next new keys forget nothing.
        for i in 0..gone as u64 - 1 {
            m.insert(&format!("n{i}"), i, 2_000_000 + i);
        }
        assert_eq!(m.forgotten(), Forgot::default());
        assert!(!m.stale(&guess, &guess));
        // From the real start, `k600` is the oldest: forgotten there instead of an entry the
        // part looked up and found forgotten.
        let mut other = guess.clone();
        other.insert("k600", 77, 3);
        assert!(m.stale(&guess, &other));
        // From a start whose only difference is a newer entry, the same keys are forgotten.
        let mut newer = guess.clone();
        newer.insert("k4000", 77, 999_999);
        assert!(!m.stale(&guess, &newer));
        let end = m.after(newer.clone());
        assert_eq!(end.peek("k4000"), Some(&77));
        assert_eq!(end.forgotten, forgot);
    }

    #[test]
    fn what_a_part_forgets_is_what_its_real_start_makes_it_forget() {
        // The guess was emptier than the real start (the chunk before wrote keys the guess
        // never saw): the part forgot nothing, the real start forgets its oldest eighth. The
        // part looked up only recent keys, so it stands, and the state after it is the real
        // start's run: forgotten entries gone and counted.
        let cap = Memo::<u64>::CAP as u64;
        let mut guess = Memo::default();
        for i in 0..cap - 100 {
            guess.insert(&format!("k{i:05}"), i, i);
        }
        let mut actual = guess.clone();
        for i in cap - 100..cap {
            actual.insert(&format!("k{i:05}"), i, i);
        }
        let mut part = guess.clone();
        part.begin(true);
        for i in 0..50 {
            part.insert(&format!("n{i}"), i, 10_000 + i);
        }
        assert_eq!(part.get("k03990"), Some(&3990));
        assert_eq!(part.get("n3"), Some(&3));
        assert_eq!(part.forgotten(), Forgot::default());
        assert!(!part.stale(&guess, &actual));
        let end = part.after(actual.clone());
        assert_eq!(end.entries.len(), cap as usize - (cap / 8) as usize + 50);
        assert!(end.peek("k00000").is_none());
        assert!(end.peek("k04095").is_some());
        assert!(end.peek("n49").is_some());
        assert_eq!(
            end.forgotten,
            Forgot {
                count: cap / 8,
                first_line: Some(10_000),
            }
        );
        // As one pass from the real start leaves it.
        let mut one = actual.clone();
        for i in 0..50 {
            one.insert(&format!("n{i}"), i, 10_000 + i);
        }
        assert_eq!(end, one);
        assert_eq!(one.forgotten().count, cap / 8);
        // A lookup of an entry the real start forgets before it: converted again.
        let mut part = guess.clone();
        part.begin(true);
        part.insert("n0", 0, 10_000);
        assert_eq!(part.get("k00001"), Some(&1));
        part.insert("n1", 1, 10_001);
        assert!(part.stale(&guess, &actual));
    }

    #[test]
    fn a_part_that_fills_its_real_start_stands_unless_it_read_what_that_forgets() {
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
        assert_eq!(part.forgotten(), Forgot::default());
        // It read nothing it did not write: it stands, and the forgetting is the real start's.
        assert!(!part.stale(&guess, &actual));
        assert_eq!(
            part.after(actual.clone()).forgotten.count,
            Memo::<u64>::CAP as u64 / 8
        );
        // Had it looked up an old key, it would not.
        let mut part = guess.clone();
        part.begin(true);
        part.insert("new1", 1, 1_000_000);
        part.insert("new2", 2, 1_000_001);
        assert_eq!(part.get("k0"), Some(&0));
        assert!(part.stale(&guess, &actual));
        // With room in the real start too, it is not.
        let mut roomy = guess.clone();
        roomy.insert("other", 0, 5);
        assert!(!part.stale(&guess, &roomy));
    }

    #[test]
    fn a_scan_after_forgetting_otherwise_than_the_real_start_is_stale() {
        // The guess is full: the part forgets the oldest eighth, `p/old` among them, then
        // takes every `p/` entry. The real start has room: it forgets nothing, and its take
        // would have taken `p/old` too.
        let cap = Memo::<u64>::CAP as u64;
        let mut guess = Memo::default();
        guess.insert("p/old", 0, 0);
        for i in 1..cap {
            guess.insert(&format!("k{i:05}"), i, i);
        }
        let mut actual = guess.clone();
        actual.remove("k04095");
        let mut part = guess.clone();
        part.begin(true);
        part.insert("new", 1, 10_000);
        assert_eq!(part.forgotten().count, cap / 8);
        assert!(part.take_prefix("p/").is_empty());
        assert!(part.stale(&guess, &actual));
        // From the guess itself, it stands.
        assert!(!part.stale(&guess, &guess));
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
            .values()
            .all(|it| !it.key.starts_with("s1/") || &*it.key == "s1/z"));
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
            end.entries.values().map(|it| &*it.key).collect::<Vec<_>>(),
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
        assert!(Arc::ptr_eq(
            &a.entries[&hash64("x")],
            &b.entries[&hash64("x")]
        ));
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
