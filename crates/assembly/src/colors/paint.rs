//! Stage 6 of a colored run: painting. Every unitig's k-mers get their color sets, as runs.
//!
//! Counting left, per bucket, each solid k-mer's color set by hash (`count/`). The unitigs
//! are spelled again into super-k-mers tagged with their unitig and first k-mer, to the same
//! buckets; in each bucket every k-mer finds its set hash, and consecutive k-mers of one
//! unitig with one hash become a run, sent to the range of unitigs it belongs to. Each range
//! is then sorted in memory, in unitig order, and the hashes are numbered in order of first
//! appearance (so the ids do not depend on threads, buckets or the memory bound), and every
//! unitig's runs are written in order for the writers.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};

use rayon::slice::ParallelSliceMut;

use crate::AssemblyError;
use crate::bucketing::{emit, for_each_tagged_kmer, superkmers_with};
use crate::colors::ColorSets;
use crate::count::{KmerColors, Solid};
use crate::graph::UnitigGraph;
use crate::kmer::Word;
use crate::plan::Plan;
use crate::records::{
    HashedRun, SetHashMap64, color_sets, hashed_run, hashed_runs, kmer_colors, put_unitig_colors,
    solid_runs,
};
use crate::spill::{Spill, SpillWriter};
use crate::store::Store;
use crate::work::{Progress, next_batch};

/// How many k-mers ahead of its lookup a k-mer's table entries are prefetched.
const LOOKAHEAD: usize = 12;

/// Bytes a k-mer may take in a range while it is sorted: a hashed run each (at worst) and
/// the sort's copy.
const RANGE_BYTES_PER_KMER: u64 = 2 * 28 + 8;

/// The independent check's verdict: `Ok`, or what is wrong.
pub(crate) type Verdict = Result<(), String>;

/// Paints the unitigs of `store` with the colors counting recorded; returns the color sets
/// by id (sorted color numbers each) and the check's verdict, and leaves each unitig's runs in
/// the store.
///
/// Painting meets every k-mer of every unitig in its bucket, so it also checks the unitigs
/// as [`crate::assemble`]'s verification does: every solid k-mer spelled once, no other, and
/// the unitigs' count sums adding up to the solid k-mers' counts.
///
/// # Errors
/// [`AssemblyError::Disk`]; [`AssemblyError::Interrupted`]; [`AssemblyError::Internal`] when
/// two different sets share a hash (a bug, or a 2^-128 accident).
pub(crate) fn paint<W: Word>(
    plan: &Plan,
    store: &mut Store,
    solid: &Solid,
    colors: &KmerColors,
    progress: &mut dyn FnMut(Progress),
) -> Result<(ColorSets, Verdict), AssemblyError> {
    let spelled = spell(plan, store)?;
    if let Some(p) = spelled.problem {
        return Ok((ColorSets::default(), Err(p)));
    }
    let runs = plan.spill("color-runs", spelled.ranges.len().max(1));
    let joined = join::<W>(plan, &spelled, solid, colors, &runs, progress)?;
    spelled.superkmers.remove();
    if let Err(p) = joined {
        return Ok((ColorSets::default(), Err(p)));
    }
    let unitig_colors = plan.spill("unitig-colors", 1);
    let ids = number_runs(
        plan,
        &runs,
        &spelled.ranges,
        store.stats.unitigs,
        &unitig_colors,
    )?;
    runs.remove();
    crate::budget::release_freed_memory();
    let sets = set_table(plan, colors, &ids)?;
    store.set_colors(unitig_colors);
    Ok((sets, Ok(())))
}

/// The unitigs spelled for painting.
struct Spelled {
    /// Their super-k-mers in the buckets, each tagged with its unitig and the index of its
    /// first k-mer.
    superkmers: Spill,
    /// The first unitig of each range (ranges of about a memory share of k-mers, in order).
    ranges: Vec<u32>,
    /// The sum of the unitigs' count sums (`KC`).
    total_count: u64,
    /// What is wrong with a unitig's text, if anything.
    problem: Option<String>,
}

/// Bases of unitigs' codes a batch of [`spell`] hands to a spelling thread.
const SPELL_BATCH_BASES: usize = 1 << 20;

/// Unitigs' base codes on their way from the reading thread to a spelling thread: `unitigs`
/// holds each one's id and the end of its codes in `codes`.
#[derive(Default)]
struct CodesBatch {
    codes: Vec<u8>,
    unitigs: Vec<(u32, usize)>,
}

/// Spells every unitig's super-k-mers to the buckets, tagged: this thread reads the unitigs in
/// order (the ranges, the counts and the check of their text), the run's threads cut their
/// super-k-mers, each into its own writer. The buckets' contents come in another order with
/// other threads, which the joined runs do not depend on (they are sorted by unitig and
/// k-mer).
fn spell(plan: &Plan, store: &Store) -> Result<Spelled, AssemblyError> {
    let (k, b) = (plan.k, plan.buckets);
    // ranges of at most 2^21 k-mers: larger ones only take memory (each range's runs are
    // sorted on all threads; the unitigs are read once whatever their number)
    let per_range = (plan.budget.usable() / 4 / RANGE_BYTES_PER_KMER).clamp(1 << 16, 1 << 21);
    let superkmers = plan.compressible_spill("paint", b);
    let threads = plan.threads().max(1);
    let buffer = (plan.budget.usable() / 8 / (b * threads) as u64).clamp(256, 1 << 16) as usize;
    let (full_tx, full_rx) = mpsc::sync_channel::<CodesBatch>(threads);
    let (empty_tx, empty_rx) = mpsc::sync_channel::<CodesBatch>(2 * threads + 1);
    for _ in 0..2 * threads + 1 {
        empty_tx.send(CodesBatch::default()).expect("the pool");
    }
    let full_rx = Mutex::new(full_rx);
    let failed: Mutex<Option<AssemblyError>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let mut ranges: Vec<u32> = Vec::new();
    let (mut total_count, mut problem) = (0u64, None);
    let read = std::thread::scope(|s| {
        for _ in 0..threads {
            let (full_rx, empty_tx, failed, stop) = (&full_rx, empty_tx.clone(), &failed, &stop);
            let superkmers = &superkmers;
            s.spawn(move || {
                let r = spell_batches(plan, superkmers, buffer, full_rx, &empty_tx, stop);
                if let Err(e) = r {
                    failed.lock().expect("failure slot").get_or_insert(e);
                    stop.store(true, Ordering::Relaxed);
                    // keep the batches moving, so that the reader never waits for a pool
                    // that nobody refills
                    while let Ok(mut batch) = full_rx.lock().expect("batches").recv() {
                        batch.codes.clear();
                        batch.unitigs.clear();
                        let _ = empty_tx.send(batch);
                    }
                }
            });
        }
        drop(empty_tx);
        let mut batch = empty_rx.recv().expect("the pool");
        let mut in_range = u64::MAX;
        let mut codes = Vec::new();
        let read = store.for_each_unitig(&mut |u, _| {
            if u.kmers > u32::MAX as u64 {
                return Err(AssemblyError::InvalidParameter(format!(
                    "unitig {} holds {} k-mers: colors number at most 2^32 a unitig",
                    u.id, u.kmers
                )));
            }
            if in_range.saturating_add(u.kmers) > per_range {
                ranges.push(u.id);
                in_range = 0;
            }
            in_range += u.kmers;
            total_count += u.total_count;
            u.codes_checked(k, &mut codes, &mut problem);
            batch.codes.extend_from_slice(&codes);
            batch.unitigs.push((u.id, batch.codes.len()));
            if batch.codes.len() >= SPELL_BATCH_BASES {
                if stop.load(Ordering::Relaxed) {
                    return Err(AssemblyError::Interrupted);
                }
                let fresh = empty_rx.recv().map_err(|_| AssemblyError::Interrupted)?;
                let full = std::mem::replace(&mut batch, fresh);
                full_tx.send(full).map_err(|_| AssemblyError::Interrupted)?;
            }
            Ok(())
        });
        if read.is_ok() && !batch.unitigs.is_empty() {
            let _ = full_tx.send(batch);
        }
        drop(full_tx);
        read
    });
    // a spelling thread's error first: the reader's is then only that it was stopped
    if let Some(e) = failed.into_inner().expect("failure slot") {
        return Err(e);
    }
    read?;
    Ok(Spelled {
        superkmers,
        ranges,
        total_count,
        problem,
    })
}

/// A spelling thread of [`spell`]: cuts each batch's unitigs into tagged super-k-mers in its
/// own writer, and returns the batch to the pool.
fn spell_batches(
    plan: &Plan,
    superkmers: &Spill,
    buffer: usize,
    full_rx: &Mutex<mpsc::Receiver<CodesBatch>>,
    empty_tx: &mpsc::SyncSender<CodesBatch>,
    stop: &AtomicBool,
) -> Result<(), AssemblyError> {
    let mut out = superkmers.writer(buffer)?;
    let mut occ = vec![0u64; plan.buckets];
    let mut keys = Vec::new();
    while let Some(mut batch) = next_batch(full_rx, stop) {
        let mut from = 0;
        for &(id, to) in &batch.unitigs {
            let id = id.to_le_bytes();
            superkmers_with(
                &batch.codes[from..to],
                plan.k,
                plan.m,
                &mut occ,
                &mut keys,
                &mut |bucket, first, s| {
                    let mut tag = [0u8; 8];
                    tag[..4].copy_from_slice(&id);
                    tag[4..].copy_from_slice(&(first as u32).to_le_bytes());
                    emit(s, &tag, bucket, &mut out)
                },
            )?;
            from = to;
        }
        batch.codes.clear();
        batch.unitigs.clear();
        // the pool is gone only when the reader has stopped
        let _ = empty_tx.send(batch);
    }
    out.finish()
}

/// The range of unitig `u`, given the first unitig of each range.
#[inline]
fn range_of(starts: &[u32], u: u32) -> usize {
    starts.partition_point(|&s| s <= u).saturating_sub(1)
}

/// One bucket's solid k-mers, sorted, with their set hashes, whether a unitig has spelled
/// each, and an index by leading bits.
struct Table<W> {
    keys: Vec<W>,
    hashes: Vec<u128>,
    seen: Vec<bool>,
    index: Vec<u32>,
    shift: usize,
}

impl<W: Word> Table<W> {
    /// Loads bucket `c`: its solid runs and their colors; returns the sum of their counts.
    fn load(
        &mut self,
        c: usize,
        k: usize,
        solid: &Solid,
        colors: &KmerColors,
        buf: &mut Vec<u8>,
    ) -> Result<u64, AssemblyError> {
        self.keys.clear();
        solid.spill.read(c, buf)?;
        // one sorted run per counting pass: several need a sort
        let (mut filled, mut sum) = (0, 0u64);
        for run in solid_runs::<W>(buf) {
            let before = self.keys.len();
            self.keys.extend(run.kmers());
            sum += run.counts().map(u64::from).sum::<u64>();
            filled += usize::from(self.keys.len() > before);
        }
        colors.hashes.read(c, buf)?;
        self.hashes.clear();
        self.hashes.extend(kmer_colors(buf));
        if self.hashes.len() != self.keys.len() {
            return Err(AssemblyError::Internal(format!(
                "bucket {c}: {} solid k-mers, {} colors",
                self.keys.len(),
                self.hashes.len()
            )));
        }
        if filled > 1 {
            let mut pairs: Vec<(W, u128)> = self
                .keys
                .iter()
                .copied()
                .zip(self.hashes.iter().copied())
                .collect();
            pairs.sort_unstable_by_key(|e| e.0);
            for (i, (x, h)) in pairs.into_iter().enumerate() {
                self.keys[i] = x;
                self.hashes[i] = h;
            }
        }
        self.seen.clear();
        self.seen.resize(self.keys.len(), false);
        self.index_keys(k);
        Ok(sum)
    }

    /// Indexes the k-mers by their leading bits, about two k-mers a slot: those whose leading
    /// bits are `p` lie at `index[p]..index[p + 1]`.
    fn index_keys(&mut self, k: usize) {
        let bits = (usize::BITS - (self.keys.len() / 2).leading_zeros()).clamp(1, 24) as usize;
        let bits = bits.min(2 * k);
        self.shift = 2 * k - bits;
        self.index.clear();
        self.index.resize((1 << bits) + 1, 0);
        // counts per slot, then their running sums
        for x in &self.keys {
            self.index[(x.to_u128() >> self.shift) as usize + 1] += 1;
        }
        for p in 1..self.index.len() {
            self.index[p] += self.index[p - 1];
        }
    }

    /// Asks the core for the cache lines [`Table::find`] of `x` will read.
    #[inline]
    fn prefetch(&self, x: W) {
        let at = self.index[(x.to_u128() >> self.shift) as usize] as usize;
        if at < self.keys.len() {
            gpu_primitives::prefetch(&self.keys[at]);
            gpu_primitives::prefetch(&self.hashes[at]);
        }
    }

    /// Where k-mer `x` is, if it is here.
    #[inline]
    fn find(&self, x: W) -> Option<usize> {
        let p = (x.to_u128() >> self.shift) as usize;
        let (lo, hi) = (self.index[p] as usize, self.index[p + 1] as usize);
        let i = lo + self.keys[lo..hi].partition_point(|&y| y < x);
        (i < hi && self.keys[i] == x).then_some(i)
    }
}

/// In each bucket, finds every spelled k-mer's set hash and sends the runs of one hash to
/// their unitig's range; checks that the unitigs spell each solid k-mer once and no other.
/// Returns the check's verdict.
fn join<W: Word>(
    plan: &Plan,
    spelled: &Spelled,
    solid: &Solid,
    colors: &KmerColors,
    runs: &Spill,
    progress: &mut dyn FnMut(Progress),
) -> Result<Verdict, AssemblyError> {
    let k = plan.k;
    let ranges = &spelled.ranges;
    let buffer = (plan.budget.usable() / 16 / (plan.threads() * ranges.len().max(1)) as u64)
        .clamp(256, 1 << 16) as usize;
    let bad: Mutex<Option<String>> = Mutex::new(None);
    let sums = AtomicU64::new(0);
    plan.for_buckets_writing(
        "colors",
        plan.buckets,
        progress,
        runs,
        buffer,
        &|| {
            let table = Table::<W> {
                keys: Vec::new(),
                hashes: Vec::new(),
                seen: Vec::new(),
                index: Vec::new(),
                shift: 0,
            };
            (Vec::<u8>::new(), table, Vec::new())
        },
        &|out, (buf, table, pending), c| {
            let sum = table.load(c, k, solid, colors, buf)?;
            sums.fetch_add(sum, Ordering::Relaxed);
            let mut run: Option<HashedRun> = None;
            let mut problem: Option<&str> = None;
            let mut result: Result<(), AssemblyError> = Ok(());
            let mut range = (u32::MAX, 0usize);
            spelled.superkmers.for_each_chunk(c, buf, &mut |chunk| {
                // the chunk's k-mers first, so each lookup's cache lines are asked for ahead
                pending.clear();
                for_each_tagged_kmer::<W>(chunk, k, 8, |fw, rc, j, tag| {
                    let x = if rc < fw { rc } else { fw };
                    let u = u32::from_le_bytes(tag[..4].try_into().expect("unitig"));
                    let pos = u32::from_le_bytes(tag[4..].try_into().expect("k-mer")) + j as u32;
                    pending.push((x, u, pos));
                });
                for t in 0..pending.len() {
                    if let Some(&(ahead, _, _)) = pending.get(t + LOOKAHEAD) {
                        table.prefetch(ahead);
                    }
                    let (x, u, pos) = pending[t];
                    let Some(i) = table.find(x) else {
                        problem.get_or_insert("the unitigs spell a k-mer that is not solid");
                        continue;
                    };
                    if std::mem::replace(&mut table.seen[i], true) {
                        problem.get_or_insert("the unitigs spell a k-mer twice");
                    }
                    let h = table.hashes[i];
                    match &mut run {
                        Some(r) if r.0 == u && r.1 + r.2 == pos && r.3 == h => r.2 += 1,
                        _ => {
                            if let Some(r) = run.replace((u, pos, 1, h))
                                && result.is_ok()
                            {
                                result = flush(out, ranges, &mut range, r);
                            }
                        }
                    }
                }
                Ok(())
            })?;
            if let Some(r) = run
                && result.is_ok()
            {
                result = flush(out, ranges, &mut range, r);
            }
            result?;
            if problem.is_none() && table.seen.iter().any(|&s| !s) {
                problem = Some("a solid k-mer is in no unitig");
            }
            if let Some(p) = problem {
                bad.lock()
                    .expect("verdict")
                    .get_or_insert_with(|| format!("bucket {c}: {p}"));
            }
            Ok(())
        },
    )?;
    if let Some(p) = bad.into_inner().expect("verdict") {
        return Ok(Err(p));
    }
    let sums = sums.into_inner();
    if sums != spelled.total_count {
        return Ok(Err(format!(
            "the unitigs' KC add up to {}, the solid k-mers' counts to {sums}",
            spelled.total_count
        )));
    }
    Ok(Ok(()))
}

/// Sends one run to its range (`range` caches the last unitig's range).
#[inline]
fn flush(
    out: &mut SpillWriter<'_>,
    ranges: &[u32],
    range: &mut (u32, usize),
    r: HashedRun,
) -> Result<(), AssemblyError> {
    if range.0 != r.0 {
        *range = (r.0, range_of(ranges, r.0));
    }
    out.push(range.1, &hashed_run(r))
}

/// Reads the ranges in order, sorts and merges each one's runs, numbers the set hashes in
/// order of first appearance and writes every unitig's runs in order. Returns the numbers.
fn number_runs(
    plan: &Plan,
    runs: &Spill,
    ranges: &[u32],
    unitigs: u64,
    out: &Spill,
) -> Result<SetHashMap64<u32>, AssemblyError> {
    let mut ids: SetHashMap64<u32> = SetHashMap64::default();
    let mut w = out.writer(1 << 20)?;
    let (mut buf, mut all, mut mine, mut rec) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut next: u32 = 0;
    for r in 0..ranges.len() {
        plan.cancel.check()?;
        runs.read(r, &mut buf)?;
        all.clear();
        all.extend(hashed_runs(&buf));
        // (unitig, first k-mer) is unique: the order does not depend on the threads
        all.par_sort_unstable_by_key(|x| (x.0, x.1));
        let mut i = 0;
        while i < all.len() {
            let u = all[i].0;
            if u != next {
                return Err(AssemblyError::Internal(format!(
                    "unitig {next} has no colors"
                )));
            }
            mine.clear();
            let mut end = 0u32;
            while i < all.len() && all[i].0 == u {
                let (_, first, n, h) = all[i];
                if first != end {
                    return Err(AssemblyError::Internal(format!(
                        "unitig {u}: k-mer {end} has no colors"
                    )));
                }
                let fresh = ids.len() as u32;
                let id = *ids.entry(h as u64).or_insert(fresh);
                match mine.last_mut() {
                    Some((set, count)) if *set == id => *count += n,
                    _ => mine.push((id, n)),
                }
                end += n;
                i += 1;
            }
            rec.clear();
            put_unitig_colors(&mine, &mut rec);
            w.push(0, &rec)?;
            next += 1;
        }
    }
    if u64::from(next) != unitigs {
        return Err(AssemblyError::Internal(format!(
            "{unitigs} unitigs, {next} painted"
        )));
    }
    w.finish()?;
    Ok(ids)
}

/// A pass of [`set_table`] over one bucket, with a thread's read buffer.
type SetWork<'a> = dyn Fn(&mut Vec<u8>, usize) -> Result<(), AssemblyError> + Sync + 'a;

/// The color sets by id, packed, from the definitions counting wrote (each already packed),
/// the buckets shared by the run's threads: one pass sizes each set from its first definition
/// met, the next copies that definition in place, so only the packed sets are ever held. Ids
/// are keyed by the low 64 bits of a set's 128-bit hash: a repeated definition whose high
/// bits differ is another set under the same key, an error; one with the same 128 bits is the
/// same set (as counting takes it), and is skipped. A set has one packed form, so the table
/// does not depend on which thread meets it first.
fn set_table(
    plan: &Plan,
    colors: &KmerColors,
    ids: &SetHashMap64<u32>,
) -> Result<ColorSets, AssemblyError> {
    let n = ids.len();
    let each_bucket = |work: &SetWork<'_>| {
        plan.for_buckets(
            "color sets",
            colors.sets.buckets(),
            &mut |_| {},
            &|| Ok(Vec::new()),
            work,
            &|_| Ok(()),
        )
    };
    let atomics = |len: usize| -> Vec<AtomicU64> { (0..len).map(|_| AtomicU64::new(0)).collect() };
    let flags = || -> Vec<AtomicBool> { (0..n).map(|_| AtomicBool::new(false)).collect() };
    // the packed size of each id's set at `id + 1`, and the high 64 bits of its hash
    let (sizes, high, sized) = (atomics(n + 1), atomics(n), flags());
    each_bucket(&|buf, b| {
        colors.sets.read(b, buf)?;
        for (hash, packed) in color_sets(buf) {
            if let Some(&id) = ids.get(&(hash as u64))
                && !sized[id as usize].swap(true, Ordering::Relaxed)
            {
                // never 0: a form byte at least
                sizes[id as usize + 1].store(packed.len() as u64, Ordering::Relaxed);
                high[id as usize].store((hash >> 64) as u64, Ordering::Relaxed);
            }
        }
        Ok(())
    })?;
    let mut sizes: Vec<u64> = sizes.into_iter().map(AtomicU64::into_inner).collect();
    if let Some(i) = sizes[1..].iter().position(|&n| n == 0) {
        return Err(AssemblyError::Internal(format!(
            "color set {i} is never defined"
        )));
    }
    for i in 1..sizes.len() {
        sizes[i] += sizes[i - 1];
    }
    let bytes: Vec<AtomicU8> = (0..sizes[n]).map(|_| AtomicU8::new(0)).collect();
    let written = flags();
    let collision = || AssemblyError::Internal("two color sets share a hash".into());
    each_bucket(&|buf, b| {
        colors.sets.read(b, buf)?;
        for (hash, packed) in color_sets(buf) {
            let Some(&id) = ids.get(&(hash as u64)) else {
                continue;
            };
            let id = id as usize;
            if (hash >> 64) as u64 != high[id].load(Ordering::Relaxed) {
                return Err(collision());
            }
            if written[id].swap(true, Ordering::Relaxed) {
                continue; // a repeat of the set written
            }
            let slot = &bytes[sizes[id] as usize..sizes[id + 1] as usize];
            if slot.len() != packed.len() {
                return Err(collision());
            }
            for (to, &from) in slot.iter().zip(packed) {
                to.store(from, Ordering::Relaxed);
            }
        }
        Ok(())
    })?;
    let bytes: Vec<u8> = bytes.into_iter().map(AtomicU8::into_inner).collect();
    Ok(ColorSets::from_packed(bytes, sizes))
}
