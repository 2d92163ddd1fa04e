//! The event ids of one log, to find those used twice (`id-unique`).
//!
//! A log of a million events has a million ids, and a hash map of them (16 bytes a slot, 36 MB)
//! turns every insert into a cache and TLB miss: on 200 MB of Gemini output that was a sixth of
//! `validate`'s time. Repeats are rare, so the set answers the common question, "new?", from a
//! small Bloom filter (8 to 16 bits an id, kept in cache), and appends every id's hash and line
//! to a list in order. An id the filter may have seen is noted with its text; one pass over the
//! list finds which of the notes are real repeats, and the line each repeats. That pass runs at
//! the end of the log, or sooner when the notes reach an eighth of the ids (a log of repeats),
//! which keeps their memory in proportion and the passes few: linear in the number of ids,
//! even when every id repeats.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::rules::Prehashed;

/// Bits of filter per id, at least (the filter doubles when it would have fewer).
const BITS_PER_ID: usize = 8;
/// The filter's size at first, in 64-bit words.
const FIRST_WORDS: usize = 128;
/// Notes that are never too many to keep until the end of the log.
const FEW_NOTES: usize = 4096;

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
pub struct IdSet {
    /// A blocked Bloom filter: each hash sets 3 bits of one word.
    filter: Vec<u64>,
    /// Every id's hash and line, in order.
    seen: Vec<(u64, u64)>,
    /// The ids the filter may have seen, in order.
    maybe: Vec<Maybe>,
}

impl Default for IdSet {
    fn default() -> Self {
        IdSet {
            filter: vec![0; FIRST_WORDS],
            seen: Vec::new(),
            maybe: Vec::new(),
        }
    }
}

/// The filter word and bits of `hash` in a filter of `words` words: the word from the high
/// half, the bits from three 6-bit fields of the low half.
#[inline]
fn slot(hash: u64, words: usize) -> (usize, u64) {
    let word = ((hash >> 32) * words as u64) >> 32;
    let bits = (1u64 << (hash & 63)) | (1u64 << ((hash >> 6) & 63)) | (1u64 << ((hash >> 12) & 63));
    (word as usize, bits)
}

impl IdSet {
    /// Adds `id` (whose hash is `hash`) at `line`. `pos` is where a finding about it would go,
    /// should it be a repeat; it comes back in [`Repeat::pos`].
    pub fn insert(&mut self, hash: u64, id: &str, line: u64, pos: usize) {
        if self.seen.len() * BITS_PER_ID >= self.filter.len() * 64 {
            self.grow();
        }
        let (word, bits) = slot(hash, self.filter.len());
        let w = &mut self.filter[word];
        if *w & bits == bits {
            self.maybe.push(Maybe {
                index: self.seen.len(),
                pos,
                id: id.to_owned(),
            });
        }
        *w |= bits;
        self.seen.push((hash, line));
    }

    /// Doubles the filter and fills it again from the list.
    fn grow(&mut self) {
        let words = self.filter.len() * 2;
        self.filter.clear();
        self.filter.resize(words, 0);
        for &(hash, _) in &self.seen {
            let (word, bits) = slot(hash, words);
            self.filter[word] |= bits;
        }
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
        assert!(set.filter.len() * 64 >= ids.len() * BITS_PER_ID);
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
}
