//! The distinct canonical k-mers of a pass's queries, each with the color set the graph gives
//! it: linear probing over a power of two of slots, at most three quarters full, the keys and
//! the sets in two arrays (a lookup that misses, as most of the graph's do, reads the keys
//! only).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::kmer::Word;

/// The set of a k-mer the graph does not hold (no set id has it: the sets reader stops below).
pub(crate) const NOT_FOUND: u32 = u32::MAX;

/// How many keys ahead of its use a slot is prefetched: enough lookups in flight to hide a
/// table far larger than the caches.
pub(crate) const PREFETCH_AHEAD: usize = 8;

/// The key of an empty slot: all `2 * MAX_K` bits set, which no canonical k-mer is (a k-mer
/// of `MAX_K` T's has the smaller reverse complement A...A, and shorter k-mers have fewer bits).
fn empty<W: Word>() -> W {
    W::mask(W::MAX_K)
}

/// Query k-mers to their color sets.
pub(crate) struct QueryTable<W> {
    keys: Vec<W>,
    sets: Vec<AtomicU32>,
    mask: usize,
    /// Distinct keys held.
    len: usize,
}

impl<W: Word> QueryTable<W> {
    /// An empty table of 16 slots; it doubles as keys come.
    pub(crate) fn new() -> Self {
        Self::with_slots(16)
    }

    fn with_slots(cap: usize) -> Self {
        QueryTable {
            keys: vec![empty(); cap],
            sets: (0..cap).map(|_| AtomicU32::new(NOT_FOUND)).collect(),
            mask: cap - 1,
            len: 0,
        }
    }

    /// The slots a table of `n` distinct keys has.
    fn slots_for(n: usize) -> usize {
        (n + n / 3 + 1).next_power_of_two().max(16)
    }

    /// Bytes the table holds.
    pub(crate) fn bytes(&self) -> usize {
        self.keys.len() * (W::BYTES + 4)
    }

    /// The most bytes the table holds while `extra` more distinct keys go in: its own, or,
    /// when it must grow, the grown table and (while the keys move) the one before it, at
    /// most half its size.
    pub(crate) fn bytes_growing(&self, extra: usize) -> usize {
        let slots = Self::slots_for(self.len + extra);
        if slots <= self.keys.len() {
            self.bytes()
        } else {
            slots / 2 * 3 * (W::BYTES + 4)
        }
    }

    /// Moves the keys to a table of `cap` slots (before any has a set), each new slot
    /// prefetched a few keys ahead.
    fn rehash(&mut self, cap: usize) {
        let mut bigger = Self::with_slots(cap);
        let mut keys = self.keys.iter().copied().filter(|&k| k != empty());
        let mut ahead = keys.clone().skip(PREFETCH_AHEAD);
        for key in keys.by_ref() {
            if let Some(a) = ahead.next() {
                bigger.prefetch(bigger.home(a));
            }
            let mut i = bigger.home(key);
            while bigger.keys[i] != empty() {
                i = (i + 1) & bigger.mask;
            }
            bigger.keys[i] = key;
        }
        bigger.len = self.len;
        *self = bigger;
    }

    /// The slot where the search for `key` starts.
    #[inline]
    pub(crate) fn home(&self, key: W) -> usize {
        key.hash64() as usize & self.mask
    }

    /// Asks the core to load the key of slot `i` (a hint, for a lookup soon).
    #[inline]
    pub(crate) fn prefetch(&self, i: usize) {
        gpu_primitives::prefetch(self.keys[i..].as_ptr());
    }

    /// Asks the core to load the key and the set of slot `i`.
    #[inline]
    pub(crate) fn prefetch_both(&self, i: usize) {
        gpu_primitives::prefetch(self.keys[i..].as_ptr());
        gpu_primitives::prefetch(self.sets[i..].as_ptr());
    }

    /// Makes room for `extra` more distinct keys (fewer may come: repeats): the table grows
    /// once to its size for them all, rather than doubling step by step as they come.
    pub(crate) fn reserve(&mut self, extra: usize) {
        let slots = Self::slots_for(self.len + extra);
        if slots > self.keys.len() {
            self.rehash(slots);
        }
    }

    /// Inserts every key (queries' windows, repeats allowed), growing at three quarters full.
    pub(crate) fn insert_all(&mut self, keys: &[W]) {
        for (j, &key) in keys.iter().enumerate() {
            if self.len + 1 > self.keys.len() / 4 * 3 {
                self.rehash(self.keys.len() * 2);
            }
            if let Some(&ahead) = keys.get(j + PREFETCH_AHEAD) {
                self.prefetch(self.home(ahead));
            }
            let mut i = self.home(key);
            loop {
                let slot = &mut self.keys[i];
                if *slot == key {
                    break;
                }
                if *slot == empty() {
                    *slot = key;
                    self.len += 1;
                    break;
                }
                i = (i + 1) & self.mask;
            }
        }
    }

    /// The slot of `key`, searched from its [`QueryTable::home`], `None` when no query has it.
    #[inline]
    pub(crate) fn find(&self, key: W, home: usize) -> Option<usize> {
        let mut i = home;
        loop {
            let k = self.keys[i];
            if k == key {
                return Some(i);
            }
            if k == empty() {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Gives slot `i` its set; the set it had ([`NOT_FOUND`] the first time).
    #[inline]
    pub(crate) fn give(&self, i: usize, set: u32) -> u32 {
        self.sets[i].swap(set, Ordering::Relaxed)
    }

    /// The set of slot `i`, [`NOT_FOUND`] when the graph does not hold its k-mer.
    #[inline]
    pub(crate) fn set(&self, i: usize) -> u32 {
        self.sets[i].load(Ordering::Relaxed)
    }

    /// Replaces every set found by `f` of it (in parallel).
    pub(crate) fn map_sets(&self, f: impl Fn(u32) -> u32 + Sync) {
        use rayon::prelude::*;
        self.sets.par_chunks(1 << 16).for_each(|chunk| {
            for s in chunk {
                let v = s.load(Ordering::Relaxed);
                if v != NOT_FOUND {
                    s.store(f(v), Ordering::Relaxed);
                }
            }
        });
    }

    /// Every slot's set, in slot order.
    pub(crate) fn sets(&self) -> impl Iterator<Item = u32> + '_ {
        self.sets.iter().map(|s| s.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_share_a_slot_and_only_keys_are_found() {
        let keys: Vec<u64> = (0..3000u64).map(|x| (x % 1000) * 7919).collect();
        let mut t = QueryTable::<u64>::new();
        let before = t.bytes_growing(1000);
        t.insert_all(&keys[..10]);
        t.insert_all(&keys[10..]); // grows on the way
        assert_eq!((t.len, t.keys.len()), (1000, 2048));
        assert_eq!(before, 2048 / 2 * 3 * 12);
        assert_eq!((t.bytes(), t.bytes_growing(500)), (2048 * 12, 2048 * 12));
        let mut slots = Vec::new();
        for &x in &keys {
            slots.push(t.find(x, t.home(x)).unwrap());
            assert_eq!(t.find(x + 1, t.home(x + 1)), None);
        }
        for j in 0..3000 {
            assert_eq!(slots[j], slots[j % 1000]);
        }
        let s = slots[5];
        assert_eq!(
            (t.set(s), t.give(s, 7), t.give(s, 7), t.set(s)),
            (NOT_FOUND, NOT_FOUND, 7, 7)
        );
        assert_eq!(t.sets().filter(|&x| x != NOT_FOUND).count(), 1);
        // the empty key is no canonical k-mer of any k, in either word
        assert_eq!(empty::<u64>(), (1 << 62) - 1);
        assert_eq!(crate::kmer::canonical(empty::<u64>(), 31), 0);
        assert_eq!(crate::kmer::canonical(empty::<u128>(), 63), 0);
    }
}
