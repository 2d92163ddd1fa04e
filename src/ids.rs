//! Sets of event ids, by a stable 64-bit hash of each: `validate`'s, to find the ids used twice
//! (`id-unique`), and `reduce`'s, to apply every event once ([`Applied`]).
//!
//! A log of a million events has a million ids, and a hash map of them (16 bytes a slot, 36 MB)
//! turns every insert into a cache and TLB miss: on 200 MB of Gemini output that was a sixth of
//! `validate`'s time. Repeats are rare, so both sets answer the common question, "new?", from a
//! small Bloom filter ([`Filter`]: 8 to 16 bits an id, kept in cache), and keep every id's
//! hash in a list written in order, never a table written at random.
//!
//! `validate` ([`IdSet`]) can wait for the answer: an id the filter may have seen is noted with
//! its text; one pass over the list finds which of the notes are real repeats, and the line each
//! repeats. That pass runs at the end of the log, or sooner when the notes reach an eighth of
//! the ids (a log of repeats), which keeps their memory in proportion and the passes few: linear
//! in the number of ids, even when every id repeats.
//!
//! `reduce` ([`Applied`]) must know at once: an id the filter may have seen is looked up in
//! the list, which is kept as a few sorted runs (merged as a binary counter is carried) and a
//! short unsorted tail.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Passes a precomputed 64-bit hash through unchanged.
#[derive(Default)]
pub struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Where a [`Hash64`] starts (digits of pi).
const HASH_SEED: u64 = 0x243f_6a88_85a3_08d3;
/// The odd multiplier of a [`Hash64`] step (the golden ratio in 64 bits).
const HASH_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

/// The 128-bit product of `a` and `b`, its halves xored: every bit of the result depends on
/// every bit of `a`.
#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// A stable 64-bit hash, quick for the short strings of events: each `write` mixes in the
/// length, then the bytes 8 at a time (the last word padded with zeros), one multiply per word.
/// Not SipHash: a log is not an attacker, and the hash of a key is the same in every run (a
/// state `reduce` wrote keeps the hashes of its ids).
#[derive(Clone, Copy)]
pub struct Hash64(u64);

impl Default for Hash64 {
    fn default() -> Self {
        Hash64(HASH_SEED)
    }
}

impl Hasher for Hash64 {
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut h = fold_mul(self.0 ^ bytes.len() as u64, HASH_MUL);
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            h = fold_mul(h ^ u64::from_le_bytes(word), HASH_MUL);
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            h = fold_mul(h ^ u64::from_le_bytes(word), HASH_MUL);
        }
        self.0 = h;
    }

    #[inline]
    fn write_u8(&mut self, b: u8) {
        self.0 = fold_mul(self.0 ^ u64::from(b), HASH_MUL);
    }
}

/// The stable 64-bit hash of a string.
pub fn hash64(s: &str) -> u64 {
    let mut h = Hash64::default();
    h.write(s.as_bytes());
    h.finish()
}

/// The stable 64-bit hash of a pair of strings: each is hashed with its length, so
/// `("ab", "c")` and `("a", "bc")` differ.
pub fn hash_pair(a: &str, b: &str) -> u64 {
    let mut h = Hash64::default();
    h.write(a.as_bytes());
    h.write(b.as_bytes());
    h.finish()
}

/// Bits of filter per id, at least (the filter doubles when it would have fewer): 8 for
/// `validate`, whose "maybe"s cost a note; 16 for `reduce`, whose cost a lookup.
const BITS_PER_ID: usize = 8;
const BITS_PER_APPLIED_ID: usize = 16;
/// The filter's size at first, in 64-bit words.
const FIRST_WORDS: usize = 128;
/// Notes that are never too many to keep until the end of the log.
const FEW_NOTES: usize = 4096;

/// A blocked Bloom filter of 64-bit hashes: each hash sets 3 bits of one word. It grows (by
/// doubling, filled again from the hashes its owner keeps) to keep its owner's bits an id or
/// more ([`BITS_PER_ID`]: false positives between about 0.5% and 4%; [`BITS_PER_APPLIED_ID`]:
/// under 1%, 0.44% measured at 200,000 ids).
#[derive(Clone)]
struct Filter(Vec<u64>);

impl Default for Filter {
    fn default() -> Self {
        Filter(vec![0; FIRST_WORDS])
    }
}

impl Filter {
    /// The filter word and bits of `hash` in a filter of `words` words: the word from the high
    /// half, the bits from three 6-bit fields of the low half.
    #[inline]
    fn slot(hash: u64, words: usize) -> (usize, u64) {
        let word = ((hash >> 32) * words as u64) >> 32;
        let bits =
            (1u64 << (hash & 63)) | (1u64 << ((hash >> 6) & 63)) | (1u64 << ((hash >> 12) & 63));
        (word as usize, bits)
    }

    /// Whether it has room for one more of `ids` ids.
    #[inline]
    fn has_room(&self, ids: usize, bits: usize) -> bool {
        ids * bits < self.0.len() * 64
    }

    /// Sets the bits of `hash`; whether they were all set before (it may have been added).
    #[inline]
    fn add(&mut self, hash: u64) -> bool {
        let (word, bits) = Self::slot(hash, self.0.len());
        let w = &mut self.0[word];
        let maybe = *w & bits == bits;
        *w |= bits;
        maybe
    }

    /// Whether `hash` may have been added.
    #[inline]
    fn may_have(&self, hash: u64) -> bool {
        let (word, bits) = Self::slot(hash, self.0.len());
        self.0[word] & bits == bits
    }

    /// Made again, of at least `words` words and room for `ids` ids, from `hashes`.
    fn refill(
        &mut self,
        mut words: usize,
        ids: usize,
        bits: usize,
        hashes: impl Iterator<Item = u64>,
    ) {
        while ids * bits >= words * 64 {
            words *= 2;
        }
        self.0.clear();
        self.0.resize(words, 0);
        for hash in hashes {
            self.add(hash);
        }
    }
}

/// An id the filter may have seen before.
struct Maybe {
    /// Its place in [`IdSet::seen`].
    index: usize,
    /// Where its finding would go (see [`IdSet::insert`]).
    pos: usize,
    id: String,
}

/// An id used again.
#[derive(Debug, PartialEq, Eq)]
pub struct Repeat {
    pub id: String,
    pub line: u64,
    /// The line of its use before (the last one before `line`).
    pub before: u64,
    /// The `pos` it was inserted with.
    pub pos: usize,
}

/// The ids of a log, by their 64-bit hash: two ids with the same hash count as one.
#[derive(Default)]
pub struct IdSet {
    filter: Filter,
    /// Every id's hash and line, in order.
    seen: Vec<(u64, u64)>,
    /// The ids the filter may have seen, in order.
    maybe: Vec<Maybe>,
}

impl IdSet {
    /// Adds `id` (whose hash is `hash`) at `line`. `pos` is where a finding about it would go,
    /// should it be a repeat; it comes back in [`Repeat::pos`].
    pub fn insert(&mut self, hash: u64, id: &str, line: u64, pos: usize) {
        if !self.filter.has_room(self.seen.len(), BITS_PER_ID) {
            let words = self.filter.0.len() * 2;
            let seen = &self.seen;
            self.filter
                .refill(words, seen.len(), BITS_PER_ID, seen.iter().map(|&(h, _)| h));
        }
        if self.filter.add(hash) {
            self.maybe.push(Maybe {
                index: self.seen.len(),
                pos,
                id: id.to_owned(),
            });
        }
        self.seen.push((hash, line));
    }

    /// Whether the notes are so many that [`IdSet::repeats`] should be called now.
    pub fn due(&self) -> bool {
        self.maybe.len() >= FEW_NOTES.max(self.seen.len() / 8)
    }

    /// The ids used again since the last call, in order of the line of their repeat.
    pub fn repeats(&mut self) -> Vec<Repeat> {
        let Some(last) = self.maybe.last().map(|m| m.index) else {
            return Vec::new();
        };
        // The line each noted hash was last seen on, so far in the pass.
        let mut lines: HashMap<u64, Option<u64>, BuildHasherDefault<Prehashed>> =
            HashMap::with_capacity_and_hasher(self.maybe.len(), Default::default());
        for m in &self.maybe {
            lines.insert(self.seen[m.index].0, None);
        }
        let mut out = Vec::new();
        let mut maybe = self.maybe.drain(..).peekable();
        for (index, &(hash, line)) in self.seen[..=last].iter().enumerate() {
            let Some(before) = lines.get_mut(&hash) else {
                continue;
            };
            if let Some(m) = maybe.next_if(|m| m.index == index) {
                if let Some(before) = *before {
                    out.push(Repeat {
                        id: m.id,
                        line,
                        before,
                        pos: m.pos,
                    });
                }
            }
            *before = Some(line);
        }
        out
    }
}

/// The unsorted tail of [`Applied`] is sorted into a run when it has this many hashes: short
/// enough to scan whenever the filter says "maybe" (32 KiB, compared 8 at a time). (16384
/// took a third more instructions on 50 MB of events: the scans cost more than the merges
/// saved.)
const TAIL: usize = 4096;

/// The ids of the events `reduce` applied, by a 64-bit hash of each ([`hash_pair`] of its
/// session and id), answering at once whether an id is new. 8 bytes an id in the list, 2 to 4
/// in the filter; two ids of one hash count as one, which among a million ids happens with a
/// chance of about 1 in 37 million.
///
/// The list is sorted runs, each at least twice as long as the next, and an unsorted tail: a
/// full tail becomes a run, and runs of equal length merge (as a binary counter carries), in
/// place at the end of the longer one, so an id is moved about log2(n / 4096) times in all,
/// in order, and a lookup (only when the filter says "maybe") is a scan of the tail and a
/// binary search of each of the few runs.
#[derive(Clone, Default)]
pub struct Applied {
    filter: Filter,
    runs: Vec<Vec<u64>>,
    tail: Vec<u64>,
    len: usize,
}

impl Applied {
    /// Adds the hash of an id; `false` (and nothing changes) when it was there already.
    #[inline]
    pub fn insert(&mut self, hash: u64) -> bool {
        if !self.filter.has_room(self.len, BITS_PER_APPLIED_ID) {
            self.grow();
        }
        if self.filter.add(hash) && self.holds(hash) {
            return false;
        }
        self.tail.push(hash);
        self.len += 1;
        if self.tail.len() == TAIL {
            self.settle();
        }
        true
    }

    /// Whether it holds `hash`.
    pub fn contains(&self, hash: u64) -> bool {
        self.filter.may_have(hash) && self.holds(hash)
    }

    /// Whether the list holds `hash` (the filter aside).
    fn holds(&self, hash: u64) -> bool {
        // The tail 8 at a time, without a branch each: the compiler makes it vector compares.
        let in_tail = self
            .tail
            .chunks(8)
            .any(|c| c.iter().fold(false, |found, &x| found | (x == hash)));
        in_tail || self.runs.iter().any(|r| r.binary_search(&hash).is_ok())
    }

    /// The tail becomes a run, and the last runs merge while the one before is no more than
    /// twice as long as the last.
    fn settle(&mut self) {
        let mut run = std::mem::replace(&mut self.tail, Vec::with_capacity(TAIL));
        sort_hashes(&mut run);
        while let Some(mut prev) = self.runs.pop() {
            if prev.len() > run.len() {
                self.runs.push(prev);
                break;
            }
            merge_into(&mut prev, &run);
            run = prev;
        }
        self.runs.push(run);
    }

    fn grow(&mut self) {
        let words = self.filter.0.len() * 2;
        let hashes = self.runs.iter().flatten().chain(&self.tail).copied();
        self.filter
            .refill(words, self.len, BITS_PER_APPLIED_ID, hashes);
    }

    /// Every hash, sorted: what a state keeps.
    pub fn sorted(&self) -> Vec<u64> {
        let mut all = Vec::with_capacity(self.len);
        all.extend_from_slice(&self.tail);
        sort_hashes(&mut all);
        for r in self.runs.iter().rev() {
            merge_into(&mut all, r);
        }
        all
    }

    /// The set of `hashes` (a state's, sorted or not; repeats count once).
    pub fn from_hashes(mut hashes: Vec<u64>) -> Applied {
        hashes.sort_unstable();
        hashes.dedup();
        hashes.shrink_to_fit();
        let len = hashes.len();
        let mut filter = Filter::default();
        filter.refill(
            FIRST_WORDS,
            len,
            BITS_PER_APPLIED_ID,
            hashes.iter().copied(),
        );
        Applied {
            filter,
            runs: if hashes.is_empty() {
                Vec::new()
            } else {
                vec![hashes]
            },
            tail: Vec::new(),
            len,
        }
    }
}

impl std::fmt::Debug for Applied {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Applied({} ids)", self.len)
    }
}

/// Hashes as text: each one's 8 bytes, little-endian, one after another, in standard base64
/// (with `=` padding), 10.7 characters a hash.
pub fn to_base64(hashes: &[u64]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bytes = Vec::with_capacity(hashes.len() * 8);
    for h in hashes {
        bytes.extend_from_slice(&h.to_le_bytes());
    }
    let full = bytes.len() / 3 * 3;
    let mut out = vec![b'='; bytes.len().div_ceil(3) * 4];
    for (g, o) in bytes[..full].chunks_exact(3).zip(out.chunks_exact_mut(4)) {
        let n = u32::from(g[0]) << 16 | u32::from(g[1]) << 8 | u32::from(g[2]);
        o[0] = ABC[(n >> 18) as usize & 63];
        o[1] = ABC[(n >> 12) as usize & 63];
        o[2] = ABC[(n >> 6) as usize & 63];
        o[3] = ABC[n as usize & 63];
    }
    // The last one or two bytes: two or three characters, and `=` for the rest.
    let rest = &bytes[full..];
    if !rest.is_empty() {
        let b = |i: usize| rest.get(i).copied().map_or(0, u32::from);
        let n = b(0) << 16 | b(1) << 8;
        let at = out.len() - 4;
        for k in 0..=rest.len() {
            out[at + k] = ABC[(n >> (18 - 6 * k)) as usize & 63];
        }
    }
    // Only letters of the alphabet and `=` were written.
    String::from_utf8(out).unwrap_or_default()
}

/// The hashes [`to_base64`] wrote; `None` if the text is not that.
pub fn from_base64(text: &str) -> Option<Vec<u64>> {
    let bytes = crate::providers::codex::base64_decode(text)?;
    if bytes.len() % 8 != 0 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(8)
            .map(|w| w.try_into().map_or(0, u64::from_le_bytes))
            .collect(),
    )
}

/// Sorts hashes, which are spread evenly over the 64 bits: by their top bits first, one
/// counting pass into about one bucket each, then by insertion, which has next to nothing left
/// to move. A tenth of the instructions of `sort_unstable` on a tail of 4096.
fn sort_hashes(v: &mut Vec<u64>) {
    if v.len() < 64 {
        v.sort_unstable();
        return;
    }
    let bits = usize::BITS - v.len().leading_zeros();
    let bucket = |h: u64| (h >> (64 - bits)) as usize;
    let mut starts = vec![0usize; (1 << bits) + 1];
    for &h in v.iter() {
        starts[bucket(h) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut out = vec![0u64; v.len()];
    for &h in v.iter() {
        let b = &mut starts[bucket(h)];
        out[*b] = h;
        *b += 1;
    }
    for i in 1..out.len() {
        let x = out[i];
        let mut j = i;
        while j > 0 && out[j - 1] > x {
            out[j] = out[j - 1];
            j -= 1;
        }
        out[j] = x;
    }
    *v = out;
}

/// Merges sorted `b` into sorted `a`, in place: `a` grows by `b`'s length and is filled from
/// its end, so nothing is allocated but that room. (No hash is in both.)
fn merge_into(a: &mut Vec<u64>, b: &[u64]) {
    let mut i = a.len();
    a.resize(i + b.len(), 0);
    let mut k = a.len();
    for &y in b.iter().rev() {
        // Those of `a` above `y` move up, then `y` goes below them.
        while i > 0 && a[i - 1] > y {
            i -= 1;
            k -= 1;
            a[k] = a[i];
        }
        k -= 1;
        a[k] = y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inserts `ids` at lines 1, 2, … with the hash of `hash`, pos = index.
    fn repeats_of(ids: &[&str], hash: impl Fn(&str) -> u64) -> Vec<(u64, u64, String)> {
        let mut set = IdSet::default();
        let mut found = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            set.insert(hash(id), id, i as u64 + 1, i);
            if set.due() {
                found.extend(set.repeats());
            }
        }
        found.extend(set.repeats());
        found
            .into_iter()
            .map(|r| {
                assert_eq!(r.pos as u64 + 1, r.line);
                (r.line, r.before, r.id)
            })
            .collect()
    }

    /// A well-mixed hash for tests (FNV-1a, then a multiply).
    fn mixed(s: &str) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in s.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        h.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (h >> 29)
    }

    #[test]
    fn a_repeat_names_the_use_before_it() {
        let got = repeats_of(&["a", "b", "a", "c", "a", "b"], mixed);
        assert_eq!(
            got,
            [
                (3, 1, "a".to_owned()),
                (5, 3, "a".to_owned()),
                (6, 2, "b".to_owned())
            ]
        );
    }

    #[test]
    fn many_distinct_ids_have_no_repeats_and_few_notes() {
        let ids: Vec<String> = (0..200_000).map(|i| format!("u{i}:0")).collect();
        let mut set = IdSet::default();
        for (i, id) in ids.iter().enumerate() {
            set.insert(mixed(id), id, i as u64 + 1, i);
        }
        // The filter answers most inserts alone: under 5% are noted for the last pass.
        assert!(
            set.maybe.len() < ids.len() / 20,
            "{} notes",
            set.maybe.len()
        );
        assert!(set.filter.0.len() * 64 >= ids.len() * BITS_PER_ID);
        assert_eq!(set.repeats(), []);
    }

    #[test]
    fn every_id_repeated_is_found_once_per_repeat() {
        let ids: Vec<String> = (0..30_000).map(|i| format!("x{}", i % 10_000)).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let got = repeats_of(&refs, mixed);
        assert_eq!(got.len(), 20_000);
        let mut last = 0;
        for (line, before, id) in got {
            assert_eq!(line - before, 10_000, "{id}");
            assert!(line > last, "in order");
            last = line;
        }
    }

    /// A log of repeats is resolved as it goes: the notes stay within an eighth of the ids
    /// (or a few thousand), and the passes over the list are few.
    #[test]
    fn the_notes_of_a_log_of_repeats_stay_few() {
        let mut set = IdSet::default();
        let (mut passes, mut found) = (0, 0);
        for i in 0..400_000u64 {
            let id = format!("r{}", i % 1000);
            set.insert(mixed(&id), &id, i + 1, 0);
            assert!(set.maybe.len() <= FEW_NOTES.max(set.seen.len() / 8));
            if set.due() {
                passes += 1;
                found += set.repeats().len();
            }
        }
        found += set.repeats().len();
        assert_eq!(found, 399_000);
        assert!(passes < 40, "{passes} passes");
    }

    #[test]
    fn ids_with_one_hash_count_as_one() {
        assert_eq!(repeats_of(&["a", "b"], |_| 7), [(2, 1, "b".to_owned())]);
    }

    #[test]
    fn applied_answers_at_once_whether_an_id_is_new() {
        let mut set = Applied::default();
        let ids: Vec<String> = (0..50_000).map(|i| format!("u{i}:0")).collect();
        for id in &ids {
            assert!(set.insert(hash64(id)), "{id} is new");
        }
        assert_eq!(set.len, ids.len());
        // Every id again, in another order: none is new, and nothing changes.
        for id in ids.iter().rev().step_by(3) {
            assert!(set.contains(hash64(id)));
            assert!(!set.insert(hash64(id)), "{id} was there");
        }
        assert_eq!(set.len, ids.len());
        assert!(!set.contains(hash64("u50000:0")));
        // Runs at least double from the last to the first: few of them.
        assert!(set.runs.len() <= 10, "{} runs", set.runs.len());
        for w in set.runs.windows(2) {
            assert!(w[0].len() > w[1].len());
        }
        assert!(set.filter.0.len() * 64 >= set.len * BITS_PER_APPLIED_ID);
    }

    #[test]
    fn applied_round_trips_through_its_sorted_hashes() {
        let mut set = Applied::default();
        for i in 0..3000u64 {
            set.insert(mixed(&i.to_string()));
        }
        let sorted = set.sorted();
        assert_eq!(sorted.len(), 3000);
        assert!(sorted.windows(2).all(|w| w[0] < w[1]));
        // Inserted in another order, the same list.
        let mut other = Applied::default();
        for i in (0..3000u64).rev() {
            other.insert(mixed(&i.to_string()));
        }
        assert_eq!(other.sorted(), sorted);
        let mut back = Applied::from_hashes(sorted.clone());
        assert_eq!(back.len, 3000);
        assert!(!back.insert(mixed("17")));
        assert!(back.insert(mixed("3000")));
        assert_eq!(back.sorted().len(), 3001);
        assert!(Applied::from_hashes(Vec::new()).sorted().is_empty());
    }

    #[test]
    fn hashes_as_base64() {
        assert_eq!(to_base64(&[]), "");
        // "first\n" and two zero bytes, as the standard alphabet writes them.
        let h = u64::from_le_bytes(*b"first\n\0\0");
        assert_eq!(to_base64(&[h]), "Zmlyc3QKAAA=");
        let hs: Vec<u64> = (0..100).map(|i| mixed(&format!("{i}"))).collect();
        for n in 0..hs.len() {
            assert_eq!(from_base64(&to_base64(&hs[..n])).as_deref(), Some(&hs[..n]));
        }
        assert_eq!(from_base64("Zmlyc3QK"), None, "6 bytes are no hash");
        assert_eq!(from_base64("!!!!"), None);
    }

    #[test]
    fn hash64_is_the_same_in_every_run() {
        // States keep these hashes: a change here makes old states apply their events again.
        assert_eq!(hash64(""), 0xe184_8576_4ba0_3644);
        assert_eq!(hash64("toolu_01ABCDEFGHIJ"), 0x1759_a195_e59f_c3d9);
    }

    #[test]
    fn hashes_sort_as_sort_unstable_sorts_them() {
        for n in [0, 1, 63, 64, 65, 1000, 4096, 5000] {
            let mut v: Vec<u64> = (0..n as u64).map(|i| mixed(&i.to_string())).collect();
            // Some alike in their top bits, and the extremes.
            v.extend([0, u64::MAX, 1 << 63, (1 << 63) + 1]);
            let mut want = v.clone();
            want.sort_unstable();
            sort_hashes(&mut v);
            assert_eq!(v, want, "{n}");
        }
    }

    /// At 16 bits an id, the filter of [`Applied`] sends few new ids to the list.
    #[test]
    fn applied_looks_few_new_ids_up() {
        let mut set = Applied::default();
        for i in 0..200_000u64 {
            set.insert(mixed(&format!("a{i}")));
        }
        let maybe = (0..200_000u64)
            .filter(|i| set.filter.may_have(mixed(&format!("b{i}"))))
            .count();
        eprintln!("false positives: {maybe} of 200000");
        assert!(maybe < 200_000 / 100, "{maybe}");
    }
}
