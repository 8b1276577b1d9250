//! Oriented k-mers and their neighbours: the model both compactions (in memory, `unitigs.rs`;
//! per bucket, `pieces.rs`) link k-mers by.
//!
//! A canonical k-mer (`kmer.rs`) read on one strand is an *oriented* k-mer: index `i` in a
//! sorted array of canonical k-mers, read forward or as its reverse complement. Its
//! *successors* are the k-mers whose first k-1 bases are its last k-1, on either strand: at
//! most four. Oriented k-mer `s` is *linked* to `t` when `t` is its only successor, `s` is
//! `t`'s only predecessor (the reverse complement of `t` has `rc(s)` as its only successor),
//! and they are different k-mers. Links come in pairs (`s -> t` and `rc(t) -> rc(s)`), so the
//! k-mers fall into chains: the unitigs.

use crate::kmer::{Word, canonical};

/// An oriented k-mer: index `i` in the k-mer array, read forward (`false`) or as its reverse
/// complement (`true`), packed as `2 i + o`.
pub(crate) type Oriented = u32;

/// No oriented k-mer: no link (zero or several successors, or a successor with several
/// predecessors).
pub(crate) const NONE: Oriented = Oriented::MAX;

/// Oriented k-mer `i` read forward or reversed.
#[inline]
pub(crate) fn oriented(i: usize, rev: bool) -> Oriented {
    (i as u32) << 1 | rev as u32
}

/// The index of an oriented k-mer's canonical k-mer.
#[inline]
pub(crate) fn index_of(o: Oriented) -> usize {
    (o >> 1) as usize
}

/// The same k-mer read on the other strand.
#[inline]
pub(crate) fn flip(o: Oriented) -> Oriented {
    o ^ 1
}

/// The word of an oriented k-mer.
#[inline]
pub(crate) fn word_of<W: Word>(kmers: &[W], o: Oriented, k: usize) -> W {
    let x = kmers[index_of(o)];
    if o & 1 == 1 {
        x.reverse_complement(k)
    } else {
        x
    }
}

/// The canonical (k-1)-mer of oriented k-mer `o`'s right end (its last k-1 bases): the key
/// under which it meets its successors.
#[inline]
pub(crate) fn end_key<W: Word>(kmers: &[W], o: Oriented, k: usize) -> W {
    let x = word_of(kmers, o, k);
    canonical(x.and(W::mask(k - 1)), k - 1)
}

/// Finds canonical k-mers in a sorted array: a table of where each value of the top bits
/// starts, then a binary search in that bucket.
pub(crate) struct KmerIndex<'a, W: Word> {
    kmers: &'a [W],
    starts: Vec<u32>,
    shift: u32,
}

impl<'a, W: Word> KmerIndex<'a, W> {
    /// Indexes sorted, distinct `kmers` of length `k` (at most `u32::MAX - 1` of them).
    pub(crate) fn new(kmers: &'a [W], k: usize) -> Self {
        let bits = (usize::BITS - kmers.len().leading_zeros())
            .clamp(1, 24)
            .min(2 * k as u32);
        let shift = 2 * k as u32 - bits;
        let buckets = 1usize << bits;
        let mut starts = vec![0u32; buckets + 1];
        for x in kmers {
            starts[(x.to_u128() >> shift) as usize + 1] += 1;
        }
        for b in 0..buckets {
            starts[b + 1] += starts[b];
        }
        KmerIndex {
            kmers,
            starts,
            shift,
        }
    }

    /// The index of canonical k-mer `x`, if present.
    #[inline]
    pub(crate) fn find(&self, x: W) -> Option<usize> {
        let b = (x.to_u128() >> self.shift) as usize;
        self.search(x, self.starts[b] as usize, self.starts[b + 1] as usize)
    }

    #[inline]
    fn search(&self, x: W, lo: usize, hi: usize) -> Option<usize> {
        let bucket = &self.kmers[lo..hi];
        let i = bucket.partition_point(|y| *y < x);
        (i < bucket.len() && bucket[i] == x).then_some(lo + i)
    }

    /// [`KmerIndex::find`] of several k-mers at once: the bucket bounds of all are loaded
    /// before any search, so their cache misses overlap instead of queueing.
    #[inline]
    pub(crate) fn find_all<const N: usize>(&self, xs: [W; N]) -> [Option<usize>; N] {
        let ranges = xs.map(|x| {
            let b = (x.to_u128() >> self.shift) as usize;
            (self.starts[b] as usize, self.starts[b + 1] as usize)
        });
        let mut out = [None; N];
        for j in 0..N {
            out[j] = self.search(xs[j], ranges[j].0, ranges[j].1);
        }
        out
    }
}

/// The successors of oriented k-mer `o`, as oriented k-mers (at most four).
pub(crate) fn successors<'i, W: Word>(
    index: &'i KmerIndex<'_, W>,
    o: Oriented,
    k: usize,
) -> impl Iterator<Item = Oriented> + 'i {
    let s = word_of(index.kmers, o, k);
    let mask = W::mask(k);
    (0..4u8).filter_map(move |b| {
        let t = s.push_right(b, mask);
        let c = canonical(t, k);
        index.find(c).map(|j| oriented(j, c != t))
    })
}

/// The only successor of k-mer `i` read forward and read reversed, each [`NONE`] when it has
/// none or several: both readings' eight candidates looked up together.
#[inline]
pub(crate) fn only_successors<W: Word>(
    index: &KmerIndex<'_, W>,
    i: usize,
    k: usize,
) -> [Oriented; 2] {
    let mask = W::mask(k);
    let x = index.kmers[i];
    let ends = [x, x.reverse_complement(k)];
    let mut cands = [W::default(); 8];
    let mut words = [W::default(); 8];
    for (o, s) in ends.iter().enumerate() {
        for b in 0..4u8 {
            let t = s.push_right(b, mask);
            words[4 * o + b as usize] = t;
            cands[4 * o + b as usize] = canonical(t, k);
        }
    }
    let found = index.find_all(cands);
    let mut pair = [NONE; 2];
    for (o, p) in pair.iter_mut().enumerate() {
        let mut only = NONE;
        let mut count = 0;
        for b in 0..4 {
            if let Some(j) = found[4 * o + b] {
                count += 1;
                only = oriented(j, cands[4 * o + b] != words[4 * o + b]);
            }
        }
        *p = if count == 1 { only } else { NONE };
    }
    pair
}
