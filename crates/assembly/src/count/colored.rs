//! Colored counting: a bucket's identical super-k-mers (the same bases in several inputs)
//! grouped, each group's k-mers sorted once with the group's number, and each solid k-mer's
//! color set found from the groups that hold it, named by a hash (`records`'s
//! `ColorKeys`) and defined once per thread as far as a cache of recent sets reaches.

use super::{CountWorker, group_end, write_run};
use crate::AssemblyError;
use crate::bucketing::Bucketed;
use crate::count_word::CountWord;
use crate::kmer::mix64;
use crate::plan::Plan;
use crate::records::{
    ColorKeys, KmerColorsScratch, SetHashMap64, SuperkmerGroups, put_color_set, put_kmer_colors,
};
use crate::set_code::encode_set;
use crate::spill::SpillWriter;

/// Per-thread state of colored counting.
pub(super) struct ColorWorker<'s> {
    hashes: SpillWriter<'s>,
    sets: SpillWriter<'s>,
    keys: &'s ColorKeys,
    /// The last hashes defined, by their low bits: a set met again while its slot still holds
    /// it is not defined again (a set evicted and met again is only a repeated definition on
    /// disk, which the set table skips).
    recent: Vec<u128>,
    /// Scratch bits, one a color, to list a dense set in order without sorting it.
    bits: Vec<u64>,
    colors: Vec<u32>,
    /// Per color: the group that last met it, and how often it met it there.
    stamp: Vec<u32>,
    seen: Vec<u32>,
    group: u32,
    met: Vec<u32>,
    set: Vec<u32>,
    /// `set` packed, for its definition.
    packed: Vec<u8>,
    numbering: KmerColorsScratch,
    /// A bucket's super-k-mers grouped ([`group_superkmers`]).
    superkmers: SuperkmerGroups,
    memo: ListMemo,
    run: Vec<u128>,
    out: Vec<u8>,
}

/// Slots of [`ColorWorker::recent`] (1 MiB a thread: a bucket's sets fit, so few are
/// defined twice).
const RECENT_SETS: usize = 1 << 16;

impl<'s> ColorWorker<'s> {
    /// A worker writing to `hashes` and `sets`, for the colors of `keys`.
    pub(super) fn new(
        hashes: SpillWriter<'s>,
        sets: SpillWriter<'s>,
        keys: &'s ColorKeys,
    ) -> ColorWorker<'s> {
        ColorWorker {
            hashes,
            sets,
            keys,
            recent: vec![0; RECENT_SETS],
            bits: vec![0; keys.colors().div_ceil(64)],
            colors: Vec::new(),
            stamp: vec![0; keys.colors()],
            seen: vec![0; keys.colors()],
            group: 0,
            met: Vec::new(),
            set: Vec::new(),
            packed: Vec::new(),
            numbering: KmerColorsScratch::default(),
            superkmers: SuperkmerGroups::default(),
            memo: ListMemo::default(),
            run: Vec::new(),
            out: Vec::new(),
        }
    }

    /// The color set of one group of occurrences (their colors): the colors that met it
    /// `min..=max` times, left in `set` (unsorted; `met` and `seen` keep every color met and
    /// how often when there was more than one occurrence); returns the set's hash (0: empty).
    #[inline]
    fn set_of(&mut self, occurrences: std::ops::Range<usize>, min: u64, max: u64) -> u128 {
        self.set.clear();
        if occurrences.len() == 1 {
            let c = self.colors[occurrences.start];
            if min <= 1 && max >= 1 {
                self.set.push(c);
                return self.keys.key(c);
            }
            return 0;
        }
        self.start_tally();
        for i in occurrences {
            self.tally(self.colors[i], 1);
        }
        self.tallied_set(min, max)
    }

    /// The color set of a k-mer met in several groups of identical super-k-mers (each
    /// `(colors with their multiplicities, how often the group occurs)` in `groups`): as
    /// [`ColorWorker::set_of`] over all their occurrences. Returns the set's hash and the
    /// k-mer's count.
    fn set_of_groups(
        &mut self,
        entries: &[u32],
        groups: &Groups,
        min: u64,
        max: u64,
    ) -> (u128, u64) {
        self.start_tally();
        let mut total = 0u64;
        for &g in entries {
            total += u64::from(groups.size[g as usize]);
            for &(c, n) in groups.colors(g) {
                self.tally(c, n);
            }
        }
        (self.tallied_set(min, max), total)
    }

    /// Starts counting occurrences per color afresh (`met` empty, stamps moved on).
    #[inline]
    fn start_tally(&mut self) {
        self.group = self.group.wrapping_add(1);
        if self.group == 0 {
            // the stamps wrapped: forget them all
            self.stamp.fill(0);
            self.group = 1;
        }
        self.met.clear();
    }

    /// Counts `n` more occurrences of color `c`.
    #[inline]
    fn tally(&mut self, c: u32, n: u32) {
        let i = c as usize;
        if self.stamp[i] != self.group {
            self.stamp[i] = self.group;
            self.seen[i] = 0;
            self.met.push(c);
        }
        self.seen[i] += n;
    }

    /// The colors tallied `min..=max` times, into `set`; returns the set's hash (0: empty).
    #[inline]
    fn tallied_set(&mut self, min: u64, max: u64) -> u128 {
        self.set.clear();
        let mut hash = 0u128;
        for &c in &self.met {
            let n = u64::from(self.seen[c as usize]);
            if n >= min && n <= max {
                self.set.push(c);
                hash ^= self.keys.key(c);
            }
        }
        hash
    }

    /// Writes set `hash` (in `set`) to the definitions unless this worker already has.
    #[inline]
    fn define(&mut self, hash: u128, bucket: usize) -> Result<(), AssemblyError> {
        let slot = hash as usize % RECENT_SETS;
        if self.recent[slot] == hash {
            return Ok(());
        }
        self.recent[slot] = hash;
        self.sort_set();
        self.packed.clear();
        encode_set(&self.set, &mut self.packed);
        self.out.clear();
        put_color_set(hash, &self.packed, &mut self.out);
        self.sets.push(bucket, &self.out)
    }

    /// Flushes the worker's writers.
    pub(super) fn finish(self) -> Result<(), AssemblyError> {
        self.hashes.finish()?;
        self.sets.finish()
    }

    /// Puts `set` in ascending order: a set of more than a sixteenth of the colors through
    /// one bit a color (a pangenome's sets hold tens of its genomes), a sparser one sorted.
    fn sort_set(&mut self) {
        if self.set.len() * 16 < self.keys.colors() {
            self.set.sort_unstable();
            return;
        }
        for &c in &self.set {
            self.bits[c as usize / 64] |= 1 << (c % 64);
        }
        self.set.clear();
        for (w, word) in self.bits.iter_mut().enumerate() {
            let mut x = std::mem::take(word);
            while x != 0 {
                self.set.push(64 * w as u32 + x.trailing_zeros());
                x &= x - 1;
            }
        }
    }
}

/// The color sets of k-mers met in several groups, by their list of groups, for one pass:
/// the k-mers of a stretch that several different super-k-mers cover share one list, so each
/// list's set is tallied once (a pangenome's bucket has a few lists for every ten such
/// k-mers, each tallying tens of colors). Lists are keyed by a hash and compared whole.
#[derive(Default)]
struct ListMemo {
    slots: SetHashMap64<u32>,
    lists: Vec<u32>,
    /// Where each entry's list ends in `lists` (it starts where the one before ends).
    ends: Vec<u32>,
    /// Each entry's set hash and count.
    results: Vec<(u128, u64)>,
}

/// Entries a [`ListMemo`] holds before it starts afresh (a few MB at most).
const MEMO_ENTRIES: usize = 1 << 16;

/// About the most a colored worker's caches take: the recent definitions (16 bytes a slot)
/// and the memo of group lists (its map, results and lists: about 64 bytes an entry).
pub(super) const COLOR_WORKER_BYTES: u64 = 16 * RECENT_SETS as u64 + 64 * MEMO_ENTRIES as u64;

impl ListMemo {
    fn clear(&mut self) {
        self.slots.clear();
        self.lists.clear();
        self.ends.clear();
        self.results.clear();
    }

    fn key(list: &[u32]) -> u64 {
        list.iter()
            .fold(list.len() as u64, |h, &g| mix64(h ^ u64::from(g)))
    }

    /// The result memoised for `list` (keyed `key`), if any.
    #[inline]
    fn get(&self, key: u64, list: &[u32]) -> Option<(u128, u64)> {
        let &e = self.slots.get(&key)?;
        let e = e as usize;
        let start = if e == 0 { 0 } else { self.ends[e - 1] as usize };
        (&self.lists[start..self.ends[e] as usize] == list).then(|| self.results[e])
    }

    fn insert(&mut self, key: u64, list: &[u32], result: (u128, u64)) {
        if self.results.len() >= MEMO_ENTRIES {
            self.clear();
        }
        self.slots.insert(key, self.results.len() as u32);
        self.lists.extend_from_slice(list);
        self.ends.push(self.lists.len() as u32);
        self.results.push(result);
    }
}

/// A bucket's groups of identical super-k-mers (the same bases, any colors): per group its
/// colors with their multiplicities, how many super-k-mers it holds, and the hash of its
/// color set (0: empty).
#[derive(Default)]
struct Groups {
    flat: Vec<(u32, u32)>,
    offsets: Vec<u32>,
    size: Vec<u32>,
    hash: Vec<u128>,
}

impl Groups {
    fn colors(&self, g: u32) -> &[(u32, u32)] {
        &self.flat[self.offsets[g as usize] as usize..self.offsets[g as usize + 1] as usize]
    }
}

/// A colored bucket's super-k-mers, grouped: where each group's first record lies (its
/// bases and their number) and the groups' colors.
pub(super) struct Grouped {
    leaders: Vec<(usize, usize)>,
    groups: Groups,
}

/// Reads a colored bucket's super-k-mers into `bytes` and groups the identical ones (the same
/// bases, any colors: most of a pangenome's super-k-mers recur in many genomes) with
/// [`SuperkmerGroups`] (the writers merged each buffer's records of the same bases already,
/// so here a group joins the records of a few chunks); each group gets its colors with their
/// multiplicities and its color set (defined once here). The groups are numbered in the order
/// the records come, which varies with the threads that wrote the bucket; nothing that is
/// written depends on it (a k-mer's set and count do not depend on the order of its groups).
pub(super) fn group_superkmers<W: CountWord>(
    bucketed: &Bucketed,
    bucket: usize,
    plan: &Plan,
    bytes: &mut Vec<u8>,
    w: &mut CountWorker<'_, W>,
) -> Result<Grouped, AssemblyError> {
    let (min, max) = (plan.min_count as u64, plan.max_count as u64);
    bucketed.spill.read(bucket, bytes)?;
    let c = w.color.as_mut().expect("a colored worker");
    c.superkmers.group(bytes);
    let mut g = Grouped {
        leaders: std::mem::take(&mut c.superkmers.leaders),
        groups: Groups::default(),
    };
    // the colors by group, where `set_of` reads them
    std::mem::swap(&mut c.colors, &mut c.superkmers.colors);
    g.groups.offsets.push(0);
    for group in 0..g.leaders.len() {
        let r = c.superkmers.range(group);
        let (i, j) = (r.start, r.end);
        let hash = c.set_of(i..j, min, max);
        // the group's colors with multiplicities (set_of left the counts in `seen` for more
        // than one super-k-mer)
        if j - i == 1 {
            g.groups.flat.push((c.colors[i], 1));
        } else {
            for &col in &c.met {
                g.groups.flat.push((col, c.seen[col as usize]));
            }
        }
        g.groups.offsets.push(g.groups.flat.len() as u32);
        g.groups.size.push((j - i) as u32);
        g.groups.hash.push(if c.set.is_empty() { 0 } else { hash });
        if !c.set.is_empty() {
            c.define(hash, bucket)?;
        }
    }
    Ok(g)
}

/// One pass of [`count_bucket`] over a colored bucket's k-mers of hash class `pass` of
/// `passes`: each group's k-mers are sorted once with the group's number; a k-mer is solid
/// when some color holds it `min_count..=max_count` times (a k-mer met in several groups, in
/// super-k-mers that differ around it, merges their colors), and the solid run is written
/// with the hashes of its k-mers' color sets. Returns how many it kept.
pub(super) fn colored_pass<W: CountWord>(
    plan: &Plan,
    bucket: usize,
    bytes: &[u8],
    g: &Grouped,
    (pass, passes): (u64, u64),
    w: &mut CountWorker<'_, W>,
) -> Result<u64, AssemblyError> {
    let (k, min, max) = (plan.k, plan.min_count as u64, plan.max_count as u64);
    let mut kmers = std::mem::take(&mut w.kmers);
    kmers.clear();
    let c = w.color.as_mut().expect("a colored worker");
    let owners = &mut c.colors;
    owners.clear();
    let mask = W::mask(k);
    for (group, &(at, len)) in g.leaders.iter().enumerate() {
        let packed = &bytes[at..at + crate::bases::packed_len(len)];
        let (mut fw, mut rc) = (W::default(), W::default());
        for j in 0..len {
            let code = crate::bases::code_at(packed, j);
            fw = fw.push_right(code, mask);
            rc = rc.push_left(3 - code, k);
            if j + 1 >= k {
                let x = if rc < fw { rc } else { fw };
                if passes == 1 || x.hash64() % passes == pass {
                    kmers.push(x);
                    owners.push(group as u32);
                }
            }
        }
    }
    W::sort_pairs(&mut kmers, owners)?;
    let owners = std::mem::take(&mut c.colors);
    let groups = &g.groups;
    c.memo.clear();
    let mut counts: Vec<u32> = Vec::new();
    c.run.clear();
    let (mut d, mut i, n) = (0, 0, kmers.len());
    let mut result = Ok(());
    while i < n {
        let x = kmers[i];
        let j = group_end(&kmers[..n], i);
        let (hash, total) = if j - i == 1 {
            let gi = owners[i] as usize;
            (groups.hash[gi], u64::from(groups.size[gi]))
        } else {
            let list = &owners[i..j];
            let key = ListMemo::key(list);
            if let Some(known) = c.memo.get(key, list) {
                // tallied (and defined) before in this pass
                known
            } else {
                let (mut hash, total) = c.set_of_groups(list, groups, min, max);
                if c.set.is_empty() {
                    hash = 0;
                } else if result.is_ok() {
                    result = c.define(hash, bucket);
                }
                c.memo.insert(key, list, (hash, total));
                (hash, total)
            }
        };
        w.tally.record(total);
        if hash != 0 {
            kmers[d] = x;
            counts.push(total.min(u32::MAX as u64) as u32);
            c.run.push(hash);
            d += 1;
        }
        i = j;
    }
    c.colors = owners;
    result?;
    kmers.truncate(d);
    c.out.clear();
    put_kmer_colors(&c.run, &mut c.numbering, &mut c.out);
    c.hashes.write_direct(bucket, &c.out)?;
    let r = write_run(plan, bucket, &kmers, &counts, w);
    w.kmers = kmers;
    r?;
    Ok(d as u64)
}
