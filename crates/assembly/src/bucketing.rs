//! Stage 2a: minimizer bucketing. Reader threads parse the read files (gzip inflated there,
//! off the counting threads) into batches of base codes; worker threads cut every read piece
//! into super-k-mers (consecutive k-mers that share a minimizer) and append each to the bucket
//! of its minimizer, in temporary files ([`Spill`]). A canonical k-mer and its reverse
//! complement have the same minimizer (the smallest canonical m-mer by a fixed hash), so every
//! occurrence of a k-mer lands in one bucket, and each bucket is counted alone afterwards.
//!
//! The same order of m-mers places each end of a k-mer, its (k-1)-mer, in a bucket
//! ([`end_buckets`]): the bucket where compaction decides whether that end joins another
//! k-mer's (every k-mer with that end meets there).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

use crate::AssemblyError;
use crate::bases::code_at;
use crate::kmer::{Word, mix64};
use crate::reads::{Batch, ReadSource, ReadStats, SourceTags, read_source};
use crate::records::{
    COLORED_SUPERKMER_MAX_BYTES, CombineColored, SUPERKMER_MAX_BYTES, SUPERKMER_TAG_MAX,
    put_colored_superkmer, put_superkmer, tagged_superkmer_records,
};
use crate::spill::{Spill, SpillWriter};
use crate::temp::Cancel;
use crate::work::{Progress, next_batch, wait_reporting};

/// The default minimizer length for `k`: 11, shorter for small k (the ends of a k-mer, its
/// (k-1)-mers, must hold an m-mer).
pub(crate) fn minimizer_len(k: usize, asked: usize) -> usize {
    if asked == 0 { (k - 1).min(11) } else { asked }
}

/// The order of m-mers for minimizers: a fixed hash of the canonical m-mer. The hash is a
/// bijection of 64-bit words (splitmix64's finaliser), so two m-mers tie only when equal.
#[inline]
pub(crate) fn mmer_key(canonical_mmer: u64) -> u64 {
    mix64(canonical_mmer ^ 0x9e37_79b9_7f4a_7c15)
}

/// The bucket of a minimizer key among `p`: the key's low 32 bits scaled to `0..p` (one
/// multiplication instead of a division). A minimizer is the smallest of several keys, so its
/// high bits lean to 0; its low bits stay uniform.
#[inline]
pub(crate) fn bucket_of(key: u64, p: usize) -> usize {
    (((key & 0xffff_ffff) * p as u64) >> 32) as usize
}

/// Whether this CPU runs the AVX-512 versions of the hashing loops (detected once).
#[cfg(target_arch = "x86_64")]
fn avx512() -> bool {
    gpu_runtime::cpu::has_avx512()
}

/// [`mmer_key`] of every word, in place.
#[inline(always)]
fn hash_keys_any(keys: &mut [u64]) {
    for x in keys.iter_mut() {
        *x = mmer_key(*x);
    }
}

/// [`hash_keys_any`] compiled for AVX-512 (eight 64-bit multiplications at once).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn hash_keys_avx512(keys: &mut [u64]) {
    hash_keys_any(keys)
}

/// Hashes canonical m-mers into minimizer keys, in place (vectorised where the CPU can).
pub(crate) fn hash_keys(keys: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512F, DQ and VL (checked at run time above).
        unsafe { hash_keys_avx512(keys) };
        return;
    }
    hash_keys_any(keys)
}

/// Appends the super-k-mers of one read piece (base codes) to `out`: for each run of
/// consecutive k-mers with the same minimizer position, the bases to the bucket of the
/// minimizer. `keys` is scratch space reused across calls; `occ[b]` counts the k-mers put in
/// bucket `b`. Returns the piece's k-mers.
///
/// The minimizer of a k-mer is the smallest of its `w = k - m + 1` canonical m-mers by
/// [`mmer_key`]; the window minimum is kept and recomputed only when it leaves the window
/// (expected `O(1)` work per base on random sequence).
pub(crate) fn superkmers(
    piece: &[u8],
    k: usize,
    m: usize,
    out: &mut SpillWriter<'_>,
    occ: &mut [u64],
    keys: &mut Vec<u64>,
) -> Result<u64, AssemblyError> {
    superkmers_with(piece, k, m, occ, keys, &mut |b, _, bases| {
        emit(bases, &[], b, out)
    })
}

/// [`superkmers`] handing each super-k-mer to `sink(bucket, index of its first k-mer in the
/// piece, its base codes)` instead of writing it.
pub(crate) fn superkmers_with(
    piece: &[u8],
    k: usize,
    m: usize,
    occ: &mut [u64],
    keys: &mut Vec<u64>,
    sink: &mut impl FnMut(usize, usize, &[u8]) -> Result<(), AssemblyError>,
) -> Result<u64, AssemblyError> {
    let n = piece.len();
    if n < k {
        return Ok(0);
    }
    let p = occ.len();
    let w = k - m + 1;
    let mask = <u64 as Word>::mask(m);
    keys.clear();
    let (mut fw, mut rc) = (0u64, 0u64);
    for (i, &c) in piece.iter().enumerate() {
        fw = fw.push_right(c, mask);
        rc = rc.push_left(3 - c, m);
        if i + 1 >= m {
            keys.push(fw.min(rc));
        }
    }
    hash_keys(keys);
    let window_min = |keys: &[u64], from: usize| -> usize {
        let mut best = from;
        for j in from + 1..from + w {
            if keys[j] < keys[best] {
                best = j;
            }
        }
        best
    };
    let mut min = window_min(keys, 0);
    let mut run_start = 0usize;
    let mut run_min = min;
    for kmer in 1..=n - k {
        let new = kmer + w - 1;
        if min < kmer {
            min = window_min(keys, kmer);
        } else if keys[new] < keys[min] {
            min = new;
        }
        if min != run_min {
            let b = bucket_of(keys[run_min], p);
            occ[b] += (kmer - run_start) as u64;
            sink(b, run_start, &piece[run_start..kmer - 1 + k])?;
            run_start = kmer;
            run_min = min;
        }
    }
    let b = bucket_of(keys[run_min], p);
    occ[b] += (n - k + 1 - run_start) as u64;
    sink(b, run_start, &piece[run_start..])?;
    Ok((n - k + 1) as u64)
}

/// Writes one super-k-mer (base codes) with its tag (see `records`) to bucket `b`.
#[inline]
pub(crate) fn emit(
    bases: &[u8],
    tag: &[u8],
    b: usize,
    out: &mut SpillWriter<'_>,
) -> Result<(), AssemblyError> {
    let mut rec = [0u8; SUPERKMER_MAX_BYTES + SUPERKMER_TAG_MAX];
    let n = put_superkmer(
        bases,
        (&mut rec[..SUPERKMER_MAX_BYTES]).try_into().expect("size"),
    );
    rec[n..n + tag.len()].copy_from_slice(tag);
    out.push(b, &rec[..n + tag.len()])
}

/// Calls `f` with every k-mer of a chunk of super-k-mers, as read (not canonical), with its
/// reverse complement.
#[inline]
pub(crate) fn for_each_kmer<W: Word>(chunk: &[u8], k: usize, mut f: impl FnMut(W, W)) {
    for_each_tagged_kmer(chunk, k, 0, |fw, rc, _, _| f(fw, rc));
}

/// [`for_each_kmer`] over super-k-mers with `tag_len`-byte tags: `f(k-mer, reverse
/// complement, the k-mer's index in its super-k-mer, the tag)`.
#[inline]
pub(crate) fn for_each_tagged_kmer<W: Word>(
    chunk: &[u8],
    k: usize,
    tag_len: usize,
    mut f: impl FnMut(W, W, usize, &[u8]),
) {
    let mask = W::mask(k);
    for (packed, len, tag) in tagged_superkmer_records(chunk, tag_len) {
        let mut fw = W::default();
        let mut rc = W::default();
        for j in 0..len {
            let c = code_at(packed, j);
            fw = fw.push_right(c, mask);
            rc = rc.push_left(3 - c, k);
            if j + 1 >= k {
                f(fw, rc, j + 1 - k, tag);
            }
        }
    }
}

/// The buckets of the two ends of canonical k-mer `x`: its first k-1 bases (left) and its
/// last k-1 bases (right), each placed by its own minimizer. The k-mer's own bucket (where
/// its super-k-mers went) is the bucket of the smaller of the two minimizers.
///
/// Returns `(left, right, home)`.
#[inline]
pub(crate) fn end_buckets<W: Word>(x: W, k: usize, m: usize, p: usize) -> (usize, usize, usize) {
    let (mut l, mut r) = ([0u64; 1], [0u64; 1]);
    end_keys_block(&[x], k, m, &mut l, &mut r);
    (
        bucket_of(l[0], p),
        bucket_of(r[0], p),
        bucket_of(l[0].min(r[0]), p),
    )
}

/// The minimizer keys of the left and right ends of each k-mer of a block (at most 64).
///
/// The `k - m + 1` m-mers are read straight from the word and from its reverse complement's
/// (the reverse complement of the m-mer at `i` is the one at `k - m - i` of the reverse
/// complement), position by position across the block, so the keys of 64 k-mers compute side
/// by side.
#[inline(always)]
fn end_keys_block<W: Word>(xs: &[W], k: usize, m: usize, left: &mut [u64], right: &mut [u64]) {
    let n = xs.len();
    debug_assert!(n <= 64);
    // w >= 2: m < k
    let w = k - m + 1;
    let mut rc = [W::default(); 64];
    for j in 0..n {
        rc[j] = xs[j].reverse_complement(k);
    }
    let mut inner = [u64::MAX; 64];
    let mut key = [0u64; 64];
    for i in 0..w {
        for j in 0..n {
            key[j] = mmer_key(xs[j].mmer(2 * (k - m - i), m).min(rc[j].mmer(2 * i, m)));
        }
        if i == 0 {
            left[..n].copy_from_slice(&key[..n]);
        } else if i == w - 1 {
            right[..n].copy_from_slice(&key[..n]);
        } else {
            for j in 0..n {
                inner[j] = inner[j].min(key[j]);
            }
        }
    }
    for j in 0..n {
        left[j] = left[j].min(inner[j]);
        right[j] = right[j].min(inner[j]);
    }
}

/// [`end_buckets`] of many k-mers: `(left, right)` bucket of each, appended to `out`.
#[inline(always)]
fn end_buckets_many_any<W: Word>(
    xs: &[W],
    k: usize,
    m: usize,
    p: usize,
    out: &mut Vec<(u32, u32)>,
) {
    let (mut l, mut r) = ([0u64; 64], [0u64; 64]);
    for block in xs.chunks(64) {
        end_keys_block(block, k, m, &mut l, &mut r);
        for j in 0..block.len() {
            out.push((bucket_of(l[j], p) as u32, bucket_of(r[j], p) as u32));
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn end_buckets_many_avx512<W: Word>(
    xs: &[W],
    k: usize,
    m: usize,
    p: usize,
    out: &mut Vec<(u32, u32)>,
) {
    end_buckets_many_any(xs, k, m, p, out)
}

/// [`end_buckets`] of many k-mers (vectorised where the CPU can): `(left, right)` buckets,
/// appended to `out`.
pub(crate) fn end_buckets_many<W: Word>(
    xs: &[W],
    k: usize,
    m: usize,
    p: usize,
    out: &mut Vec<(u32, u32)>,
) {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512F, DQ and VL (checked at run time).
        unsafe { end_buckets_many_avx512(xs, k, m, p, out) };
        return;
    }
    end_buckets_many_any(xs, k, m, p, out)
}

/// What bucketing produced: the super-k-mers, and how many k-mers each bucket holds.
pub(crate) struct Bucketed {
    pub(crate) spill: Spill,
    pub(crate) occurrences: Vec<u64>,
    pub(crate) reads: ReadStats,
    pub(crate) kmers_seen: u64,
}

/// How bucketing sizes its buffers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BucketingPlan {
    pub(crate) k: usize,
    pub(crate) m: usize,
    pub(crate) buckets: usize,
    pub(crate) threads: usize,
    /// Base codes per batch handed from a reader to a worker.
    pub(crate) batch_letters: usize,
    /// Bytes buffered per bucket per worker before a write.
    pub(crate) buffer: usize,
}

/// Live counters of the readers, for progress.
#[derive(Default)]
struct Counters {
    reads: AtomicU64,
    letters: AtomicU64,
    non_bases: AtomicU64,
}

/// Reads every source and writes its super-k-mers to bucket files in `spill`.
///
/// Readers (one per file, at most `threads`) parse and inflate; `threads` workers cut
/// super-k-mers. Batches circulate through a fixed pool, so memory stays at
/// `(3 threads + readers) * batch_letters` bytes of batches plus each worker's buffers
/// (`buckets * buffer`).
///
/// # Errors
/// Reading errors ([`AssemblyError::Io`], [`AssemblyError::Reads`]) of the first source that
/// fails, [`AssemblyError::Disk`] for a failed write, [`AssemblyError::Interrupted`].
pub(crate) fn bucket_reads(
    sources: &[ReadSource<'_>],
    tags: Option<&SourceTags>,
    plan: &BucketingPlan,
    spill: Spill,
    cancel: &Cancel,
    progress: &mut dyn FnMut(Progress),
) -> Result<Bucketed, AssemblyError> {
    let t = plan.threads.max(1);
    let readers = if SourceTags::in_order(tags) {
        1
    } else {
        sources.len().clamp(1, t)
    };
    let pool_size = 3 * t + readers;
    let (full_tx, full_rx) = mpsc::sync_channel::<Batch>(pool_size);
    let (empty_tx, empty_rx) = mpsc::sync_channel::<Batch>(pool_size);
    for _ in 0..pool_size {
        let mut b = Batch::default();
        b.codes.reserve_exact(plan.batch_letters + 4096);
        empty_tx.send(b).expect("pool");
    }
    let empty_rx = Mutex::new(empty_rx);
    let full_rx = Mutex::new(full_rx);
    let next_source = AtomicUsize::new(0);
    let counters = Counters::default();
    let failed: Mutex<Option<AssemblyError>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let fail = |e: AssemblyError| {
        let mut f = failed.lock().expect("failure slot");
        if f.is_none() {
            *f = Some(e);
        }
        stop.store(true, Ordering::Relaxed);
    };
    let (exit_tx, exit_rx) = mpsc::channel::<()>();
    let results: Mutex<Vec<(Vec<u64>, u64)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..readers {
            let full_tx = full_tx.clone();
            let (empty_rx, next_source, counters, stop) =
                (&empty_rx, &next_source, &counters, &stop);
            let exit_tx = exit_tx.clone();
            let fail = &fail;
            s.spawn(move || {
                let r = read_sources(
                    sources,
                    tags,
                    plan,
                    next_source,
                    counters,
                    stop,
                    cancel,
                    empty_rx,
                    &full_tx,
                );
                if let Err(e) = r {
                    fail(e);
                }
                drop(full_tx);
                let _ = exit_tx.send(());
            });
        }
        drop(full_tx);
        for _ in 0..t {
            let (full_rx, empty_tx, spill, stop, results) =
                (&full_rx, empty_tx.clone(), &spill, &stop, &results);
            let fail = &fail;
            s.spawn(move || {
                let r = cut_batches(plan, spill, tags.is_some(), full_rx, &empty_tx, stop);
                match r {
                    Ok(r) => results.lock().expect("results").push(r),
                    Err(e) => fail(e),
                }
            });
        }
        drop(empty_tx);
        // progress from this thread until the readers are done
        let snapshot = || ReadStats {
            reads: counters.reads.load(Ordering::Relaxed),
            letters: counters.letters.load(Ordering::Relaxed),
            non_bases: counters.non_bases.load(Ordering::Relaxed),
        };
        drop(exit_tx);
        wait_reporting(&exit_rx, readers, &mut || {
            if cancel.is_cancelled() {
                stop.store(true, Ordering::Relaxed);
            }
            progress(Progress::Reading(snapshot()));
        });
    });
    if let Some(e) = failed.into_inner().expect("failure slot") {
        return Err(e);
    }
    cancel.check()?;
    let reads = ReadStats {
        reads: counters.reads.into_inner(),
        letters: counters.letters.into_inner(),
        non_bases: counters.non_bases.into_inner(),
    };
    progress(Progress::Reading(reads));
    let mut occurrences = vec![0u64; plan.buckets];
    let mut kmers_seen = 0;
    for (occ, seen) in results.into_inner().expect("results") {
        kmers_seen += seen;
        for (a, b) in occurrences.iter_mut().zip(occ) {
            *a += b;
        }
    }
    Ok(Bucketed {
        spill,
        occurrences,
        reads,
        kmers_seen,
    })
}

/// A reader thread: takes sources in turn and sends full batches.
#[allow(clippy::too_many_arguments)]
fn read_sources(
    sources: &[ReadSource<'_>],
    tags: Option<&SourceTags>,
    plan: &BucketingPlan,
    next_source: &AtomicUsize,
    counters: &Counters,
    stop: &AtomicBool,
    cancel: &Cancel,
    empty_rx: &Mutex<mpsc::Receiver<Batch>>,
    full_tx: &mpsc::SyncSender<Batch>,
) -> Result<(), AssemblyError> {
    let take = || empty_rx.lock().expect("pool").recv().ok();
    let Some(mut batch) = take() else {
        return Ok(());
    };
    loop {
        let i = next_source.fetch_add(1, Ordering::Relaxed);
        if i >= sources.len() {
            return Ok(());
        }
        let mut seen = ReadStats::default();
        let mut told = ReadStats::default();
        let tell = |s: &ReadStats, told: &mut ReadStats| {
            counters
                .reads
                .fetch_add(s.reads - told.reads, Ordering::Relaxed);
            counters
                .letters
                .fetch_add(s.letters - told.letters, Ordering::Relaxed);
            counters
                .non_bases
                .fetch_add(s.non_bases - told.non_bases, Ordering::Relaxed);
            *told = *s;
        };
        let mut tagger = SourceTags::tagger(tags, i);
        read_source(
            &sources[i],
            plan.k,
            plan.batch_letters,
            &mut batch,
            &mut seen,
            tagger.as_deref_mut(),
            &mut |b, s| {
                if stop.load(Ordering::Relaxed) || cancel.is_cancelled() {
                    return Err(AssemblyError::Interrupted);
                }
                tell(s, &mut told);
                let fresh = take().ok_or(AssemblyError::Interrupted)?;
                let full = std::mem::replace(b, fresh);
                full_tx.send(full).map_err(|_| AssemblyError::Interrupted)
            },
        )?;
        tell(&seen, &mut told);
    }
}

/// A worker thread: cuts the super-k-mers of each batch it receives into its own spill
/// writer, returns the batch to the pool. Returns its k-mers per bucket and in all. Colored
/// super-k-mers ([`put_colored_superkmer`]) are combined in the writer's buffers.
fn cut_batches(
    plan: &BucketingPlan,
    spill: &Spill,
    colored: bool,
    full_rx: &Mutex<mpsc::Receiver<Batch>>,
    empty_tx: &mpsc::SyncSender<Batch>,
    stop: &AtomicBool,
) -> Result<(Vec<u64>, u64), AssemblyError> {
    let mut out = spill.writer(plan.buffer)?;
    if colored {
        out = out.combining(Box::new(CombineColored::default()));
    }
    let mut occ = vec![0u64; plan.buckets];
    let mut keys = Vec::new();
    let mut seen = 0u64;
    while let Some(mut batch) = next_batch(full_rx, stop) {
        if batch.tags.is_empty() {
            for piece in batch.pieces() {
                seen += superkmers(piece, plan.k, plan.m, &mut out, &mut occ, &mut keys)?;
            }
        } else {
            let mut rec = [0u8; COLORED_SUPERKMER_MAX_BYTES];
            for (piece, &color) in batch.pieces().zip(&batch.tags) {
                seen += superkmers_with(
                    piece,
                    plan.k,
                    plan.m,
                    &mut occ,
                    &mut keys,
                    &mut |b, _, bases| {
                        let n = put_colored_superkmer(bases, color, &mut rec);
                        out.push(b, &rec[..n])
                    },
                )?;
            }
        }
        batch.clear();
        // the pool is gone only when every reader has stopped: nothing more to read then
        let _ = empty_tx.send(batch);
    }
    out.finish()?;
    Ok((occ, seen))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimizer is the smallest key of its window, so its high bits lean to 0: buckets
    /// taken from the high bits would give bucket 0 about `w` times its share and leave the
    /// last buckets nearly empty ([`bucket_of`] takes the low bits). The buckets of the
    /// minimizers of a random sequence must be even.
    #[test]
    fn minimizer_buckets_are_even() {
        let (k, m, p) = (31usize, 11usize, 64usize);
        let mut state = 0x1234_5678_9abc_def0u64;
        let seq: Vec<u64> = (0..400_000)
            .map(|_| {
                state = mix64(state);
                state & 3
            })
            .collect();
        let mask = (1u64 << (2 * m)) - 1;
        let mut keys = Vec::new();
        let (mut fw, mut rc) = (0u64, 0u64);
        for (i, &c) in seq.iter().enumerate() {
            fw = (fw << 2 | c) & mask;
            rc = rc >> 2 | (3 - c) << (2 * (m - 1));
            if i + 1 >= m {
                keys.push(mmer_key(fw.min(rc)));
            }
        }
        let w = k - m + 1;
        let mut counts = vec![0u64; p];
        for win in keys.windows(w) {
            let min = *win.iter().min().expect("a window");
            counts[bucket_of(min, p)] += 1;
        }
        let mean = counts.iter().sum::<u64>() as f64 / p as f64;
        let (lo, hi) = (
            *counts.iter().min().expect("buckets") as f64,
            *counts.iter().max().expect("buckets") as f64,
        );
        assert!(hi < 1.6 * mean && lo > 0.5 * mean, "buckets {counts:?}");
    }
}
