//! Stage 2: counting. Reads are cut into super-k-mers and bucketed by minimizer on disk
//! (`bucketing.rs`); each bucket is then counted alone (radix sort + run lengths; on the GPU,
//! groups of buckets by gpu-primitives' distinct with counts), so counting holds one bucket's
//! k-mers per thread, never the whole input's. A bucket too large for its thread's share of
//! the memory bound is counted in passes, each taking the k-mers of one hash class.
//!
//! Each bucket's solid k-mers are written back sorted (one sorted run per pass), with their
//! counts and, for each of their two ends, whether compaction decides it in this bucket; an
//! end that belongs to another bucket is sent there ("foreign" ends), so that every bucket
//! sees every k-mer that touches its ends.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use gpu_runtime::{Backend, Target};

use crate::AssemblyError;
use crate::bucketing::{
    Bucketed, BucketingPlan, bucket_reads, end_buckets, end_buckets_many, for_each_kmer,
};
use crate::count_word::CountWord;
use crate::kmer::Word;
use crate::plan::{Plan, bytes_per_occurrence};
use crate::reads::{ReadSource, ReadStats, SourceTags};
use crate::records::{ColorKeys, LEFT_HERE, RIGHT_HERE, put_foreign_end, put_solid_run};
use crate::spill::{Spill, SpillWriter};
use crate::work::{Progress, for_each_bucket};
use colored::{COLOR_WORKER_BYTES, ColorWorker, colored_pass, group_superkmers};

mod colored;
mod gpu;

use gpu::count_on_gpu;

/// What counting found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountStats {
    /// What the reader saw.
    pub reads: ReadStats,
    /// K-mer occurrences (windows of k bases) in the reads.
    pub kmers_seen: u64,
    /// Distinct canonical k-mers.
    pub distinct: u64,
    /// Distinct canonical k-mers with a count in `min_count..=max_count`.
    pub solid: u64,
    /// `count -> number of distinct k-mers seen that often` (jellyfish's `histo`).
    pub histogram: BTreeMap<u64, u64>,
    /// Buckets used.
    pub partitions: usize,
    /// Bytes of super-k-mers stored (a quarter byte a base plus one a super-k-mer).
    pub superkmer_bytes: u64,
    /// Where the sorts ran.
    pub backend: Backend,
}

/// The result of counting into buckets.
pub(crate) struct Solid {
    /// Per bucket, solid runs (`records`): the solid k-mers whose minimizer is the
    /// bucket's, sorted, their counts, and which of their ends ([`RIGHT_HERE`], [`LEFT_HERE`])
    /// compaction decides in this bucket; one run per counting pass.
    pub(crate) spill: Spill,
    /// Per bucket, foreign ends: solid k-mers of other buckets with an end decided here.
    pub(crate) foreign: Spill,
    /// Solid k-mers per bucket.
    pub(crate) sizes: Vec<u64>,
    /// Foreign ends per bucket.
    pub(crate) foreign_sizes: Vec<u64>,
    pub(crate) stats: CountStats,
    /// The solid k-mers' colors, when the reads were colored.
    pub(crate) colors: Option<KmerColors>,
}

/// What colored counting adds: each solid k-mer's color set, the sets named by hash.
pub(crate) struct KmerColors {
    /// Per bucket, one k-mer colors record per solid run, in the same order (`records`).
    pub(crate) hashes: Spill,
    /// The color sets' definitions (each written at least once; any bucket).
    pub(crate) sets: Spill,
}

/// Per-thread state of the counting stage.
struct CountWorker<'s, W> {
    foreign: SpillWriter<'s>,
    solid: SpillWriter<'s>,
    foreign_sizes: Vec<u64>,
    kmers: Vec<W>,
    scratch: Vec<u8>,
    out: Vec<u8>,
    ends: Vec<(u32, u32)>,
    flags: Vec<u8>,
    tally: Tally,
    color: Option<ColorWorker<'s>>,
}

impl<'s, W> CountWorker<'s, W> {
    /// A worker writing solid runs to `solid` and foreign ends to `foreign` (of `buckets`
    /// buckets), with colored counting's state when the reads are colored.
    fn new(
        foreign: SpillWriter<'s>,
        solid: SpillWriter<'s>,
        buckets: usize,
        color: Option<ColorWorker<'s>>,
    ) -> CountWorker<'s, W> {
        CountWorker {
            foreign,
            solid,
            foreign_sizes: vec![0; buckets],
            kmers: Vec::new(),
            scratch: Vec::new(),
            out: Vec::new(),
            ends: Vec::new(),
            flags: Vec::new(),
            tally: Tally::default(),
            color,
        }
    }

    /// Flushes the worker's writers and adds its tally and foreign-end sizes to the run's.
    fn finish(
        self,
        tally: &Mutex<Tally>,
        foreign_sizes: &Mutex<Vec<u64>>,
    ) -> Result<(), AssemblyError> {
        self.foreign.finish()?;
        self.solid.finish()?;
        if let Some(c) = self.color {
            c.finish()?;
        }
        tally.lock().expect("tally").add(self.tally);
        for (a, b) in foreign_sizes
            .lock()
            .expect("sizes")
            .iter_mut()
            .zip(self.foreign_sizes)
        {
            *a += b;
        }
        Ok(())
    }
}

/// Counts below this are tallied in an array (one add per distinct k-mer, most of which are
/// seen a few times), larger ones in the map.
const DENSE_COUNTS: usize = 1024;

/// What the buckets counted add up to.
#[derive(Default)]
struct Tally {
    /// `dense[c]`: distinct k-mers seen `c` times, for `c < DENSE_COUNTS` (empty until used).
    dense: Vec<u64>,
    /// The same for larger counts.
    histogram: BTreeMap<u64, u64>,
    distinct: u64,
    solid: u64,
}

impl Tally {
    /// One distinct k-mer seen `c` times.
    #[inline]
    fn record(&mut self, c: u64) {
        self.distinct += 1;
        if (c as usize) < DENSE_COUNTS {
            if self.dense.is_empty() {
                self.dense = vec![0; DENSE_COUNTS];
            }
            self.dense[c as usize] += 1;
        } else {
            *self.histogram.entry(c).or_insert(0) += 1;
        }
    }

    fn add(&mut self, other: Tally) {
        if self.dense.is_empty() {
            self.dense = other.dense;
        } else {
            for (a, b) in self.dense.iter_mut().zip(&other.dense) {
                *a += b;
            }
        }
        for (n, h) in other.histogram {
            *self.histogram.entry(n).or_insert(0) += h;
        }
        self.distinct += other.distinct;
        self.solid += other.solid;
    }

    /// Count -> distinct k-mers seen that many times (counts that occur only).
    fn histogram(&self) -> BTreeMap<u64, u64> {
        let mut h = self.histogram.clone();
        for (c, &n) in self.dense.iter().enumerate() {
            if n > 0 {
                h.insert(c as u64, n);
            }
        }
        h
    }
}

/// Reads and counts into buckets: the solid k-mers of each bucket, and each bucket's foreign
/// ends.
///
/// With `tags` the reads are colored: each super-k-mer carries its color, each bucket's
/// k-mers are counted per color (on the CPU), a k-mer is solid when some color holds it
/// (`min_count..=max_count` times in that color's inputs) and its count is the sum over all
/// colors; each solid k-mer's set of such colors is recorded ([`KmerColors`]).
pub(crate) fn count_buckets<W: CountWord>(
    sources: &[ReadSource<'_>],
    tags: Option<&SourceTags>,
    plan: &Plan,
    progress: &mut dyn FnMut(Progress),
) -> Result<Solid, AssemblyError> {
    let b = plan.buckets;
    let t = plan.threads();
    let usable = plan.budget.usable();
    let bplan = BucketingPlan {
        k: plan.k,
        m: plan.m,
        buckets: b,
        threads: t,
        // a batch's codes, and each cutting thread's keys (8 bytes a letter of the batch):
        // batches past a megabyte or buffers past 32 KiB make reading no faster
        batch_letters: (usable / 64).clamp(1 << 16, 1 << 20) as usize,
        buffer: (usable / 8 / (t * b) as u64).clamp(512, 1 << 15) as usize,
    };
    let bucketed = bucket_reads(
        sources,
        tags,
        &bplan,
        plan.compressible_spill("superkmers", b),
        &plan.cancel,
        progress,
    )?;
    if let Some(s) = plan.space() {
        s.sample();
    }
    let target = plan
        .exec
        .resolve(bucketed.kmers_seen, gpu_primitives::GPU_THRESHOLD_SORT)?;
    // colored counting groups super-k-mers and sorts (k-mer, group) pairs, on the CPU only
    let on_gpu = matches!(target, Target::Cuda(_)) && tags.is_none();
    let colored = tags.map(|_| KmerColors {
        hashes: plan.spill("kmer-colors", b),
        sets: plan.spill("color-sets", b),
    });
    let keys = ColorKeys::new(tags.map_or(0, SourceTags::colors));
    let solid = plan.spill("solid", b);
    let foreign = plan.spill("foreign", b);
    let tally = Mutex::new(Tally::default());
    let foreign_sizes = Mutex::new(vec![0u64; b]);
    let sizes: Vec<AtomicU64> = (0..b).map(|_| AtomicU64::new(0)).collect();
    if on_gpu {
        count_on_gpu::<W>(
            plan,
            &bucketed,
            &solid,
            &foreign,
            &sizes,
            &foreign_sizes,
            &tally,
            progress,
        )?;
    } else {
        // largest buckets first: the stage ends with small ones, evenly spread
        let mut order: Vec<usize> = (0..b).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(bucketed.occurrences[i]));
        let per_thread = plan.budget.per_thread();
        let foreign_buffer = (usable / 16 / (t * b) as u64).clamp(256, 1 << 16) as usize;
        for_each_bucket(
            "counting",
            t,
            &order,
            &plan.cancel,
            progress,
            &|| {
                let color = match &colored {
                    Some(c) => Some(ColorWorker::new(
                        c.hashes.writer(1 << 16)?,
                        c.sets.writer(1 << 16)?,
                        &keys,
                    )),
                    None => None,
                };
                Ok(CountWorker::<W>::new(
                    foreign.writer(foreign_buffer)?,
                    solid.writer(1 << 16)?,
                    b,
                    color,
                ))
            },
            &|w, bucket| {
                let n = count_bucket(plan, &bucketed, bucket, per_thread, w)?;
                sizes[bucket].store(n, Ordering::Relaxed);
                Ok(())
            },
            &|w| w.finish(&tally, &foreign_sizes),
        )?;
    }
    if let Some(s) = plan.space() {
        s.sample();
    }
    let superkmer_bytes = bucketed.spill.total_bytes();
    bucketed.spill.remove();
    let tally = tally.into_inner().expect("tally");
    Ok(Solid {
        spill: solid,
        foreign,
        sizes: sizes.into_iter().map(|a| a.into_inner()).collect(),
        foreign_sizes: foreign_sizes.into_inner().expect("sizes"),
        stats: CountStats {
            reads: bucketed.reads,
            kmers_seen: bucketed.kmers_seen,
            distinct: tally.distinct,
            solid: tally.solid,
            histogram: tally.histogram(),
            partitions: b,
            superkmer_bytes,
            backend: if on_gpu { Backend::Cuda } else { Backend::Cpu },
        },
        colors: colored,
    })
}

/// Counts one bucket on the CPU (colored or not), in as many passes as its thread's share of
/// memory needs, each taking the k-mers of one hash class; writes each pass's solid k-mers as
/// a sorted run and sends their foreign ends. Returns the bucket's solid k-mers.
fn count_bucket<W: CountWord>(
    plan: &Plan,
    bucketed: &Bucketed,
    bucket: usize,
    per_thread: u64,
    w: &mut CountWorker<'_, W>,
) -> Result<u64, AssemblyError> {
    let occ = bucketed.occurrences[bucket];
    if occ == 0 {
        return Ok(0);
    }
    let colored = w.color.is_some();
    // a colored pass holds each occurrence's color or group too (and the sort's copy), the
    // bucket's super-k-mers and their grouping (about 8 bytes an occurrence); the cache of
    // defined sets and the memo of group lists take a few MB
    let (per, share) = if colored {
        (
            bytes_per_occurrence::<W>() + 16,
            per_thread.saturating_sub(COLOR_WORKER_BYTES),
        )
    } else {
        (bytes_per_occurrence::<W>(), per_thread)
    };
    let passes = (occ * per).div_ceil(share.max(1)).max(1);
    let mut solid = 0;
    if colored {
        let mut bytes = std::mem::take(&mut w.scratch);
        let grouped = group_superkmers(bucketed, bucket, plan, &mut bytes, w);
        let r = grouped.and_then(|g| {
            for pass in 0..passes {
                plan.cancel.check()?;
                solid += colored_pass(plan, bucket, &bytes, &g, (pass, passes), w)?;
            }
            Ok(())
        });
        w.scratch = bytes;
        r?;
    } else {
        for pass in 0..passes {
            plan.cancel.check()?;
            solid += plain_pass(plan, bucketed, bucket, (pass, passes), w)?;
        }
    }
    w.tally.solid += solid;
    Ok(solid)
}

/// The end of the run of equal values that starts at `i`.
#[inline]
fn group_end<T: PartialEq>(v: &[T], i: usize) -> usize {
    let mut j = i + 1;
    while j < v.len() && v[j] == v[i] {
        j += 1;
    }
    j
}

/// One pass of [`count_bucket`] over the k-mers of hash class `pass` of `passes`: sorts
/// them, keeps those seen `min_count..=max_count` times. Returns how many it kept.
fn plain_pass<W: CountWord>(
    plan: &Plan,
    bucketed: &Bucketed,
    bucket: usize,
    (pass, passes): (u64, u64),
    w: &mut CountWorker<'_, W>,
) -> Result<u64, AssemblyError> {
    let (occ, k) = (bucketed.occurrences[bucket], plan.k);
    let mut taken = std::mem::take(&mut w.kmers);
    let kmers = &mut taken;
    kmers.clear();
    let expect = (occ / passes + occ / passes / 16 + 64) as usize;
    if kmers.capacity() < expect {
        kmers.reserve_exact(expect - kmers.len());
    }
    bucketed
        .spill
        .for_each_chunk(bucket, &mut w.scratch, &mut |chunk| {
            for_each_kmer::<W>(chunk, k, |fw, rc| {
                let c = if rc < fw { rc } else { fw };
                if passes == 1 || c.hash64() % passes == pass {
                    kmers.push(c);
                }
            });
            Ok(())
        })?;
    W::sort_words(kmers)?;
    // run lengths in place: distinct k-mers to the front, counts beside
    let mut counts: Vec<u32> = Vec::new();
    let mut d = 0;
    let mut i = 0;
    let n = kmers.len();
    while i < n {
        let x = kmers[i];
        let j = group_end(&kmers[..n], i);
        let c = (j - i) as u64;
        w.tally.record(c);
        if c >= plan.min_count as u64 && c <= plan.max_count as u64 {
            kmers[d] = x;
            counts.push(c.min(u32::MAX as u64) as u32);
            d += 1;
        }
        i = j;
    }
    kmers.truncate(d);
    let r = write_run(plan, bucket, kmers, &counts, w);
    w.kmers = taken;
    r?;
    Ok(d as u64)
}

/// Writes one sorted run of a bucket's solid k-mers (with counts and end flags) and sends the
/// foreign ends.
fn write_run<W: Word>(
    plan: &Plan,
    bucket: usize,
    kmers: &[W],
    counts: &[u32],
    w: &mut CountWorker<'_, W>,
) -> Result<(), AssemblyError> {
    let mut rec = Vec::with_capacity(W::BYTES + 1);
    let mut ends = std::mem::take(&mut w.ends);
    ends.clear();
    end_buckets_many(kmers, plan.k, plan.m, plan.buckets, &mut ends);
    w.flags.clear();
    for (&x, &(left, right)) in kmers.iter().zip(&ends) {
        let (left, right) = (left as usize, right as usize);
        debug_assert_eq!(
            end_buckets(x, plan.k, plan.m, plan.buckets).2,
            bucket,
            "a k-mer counted outside its minimizer's bucket"
        );
        let mut flags = 0u8;
        for (end, side, here) in [(right, 0u8, RIGHT_HERE), (left, 1u8, LEFT_HERE)] {
            if end == bucket {
                flags |= here;
            } else {
                put_foreign_end(x, side, &mut rec);
                w.foreign.push(end, &rec)?;
                w.foreign_sizes[end] += 1;
            }
        }
        w.flags.push(flags);
    }
    w.ends = ends;
    w.out.clear();
    put_solid_run(kmers, counts, &w.flags, &mut w.out);
    w.solid.write_direct(bucket, &w.out)
}

#[cfg(test)]
mod tests {
    use super::{DENSE_COUNTS, Tally};
    use std::collections::BTreeMap;

    /// The tally's histogram is the plain count of counts, below, at and above the array's
    /// end, and merging tallies (one per worker) adds them, whichever has used its array.
    #[test]
    fn tally_histogram_is_the_count_of_counts() {
        let counts: Vec<u64> = (0..5000u64)
            .map(|i| match i % 7 {
                0 => DENSE_COUNTS as u64 - 1,
                1 => DENSE_COUNTS as u64,
                2 => 1 + i % 3,
                3 => 40_000 + i % 2,
                _ => 2,
            })
            .collect();
        let mut want: BTreeMap<u64, u64> = BTreeMap::new();
        for &c in &counts {
            *want.entry(c).or_insert(0) += 1;
        }
        let (mut a, mut b) = (Tally::default(), Tally::default());
        for (i, &c) in counts.iter().enumerate() {
            if i < 3000 { a.record(c) } else { b.record(c) }
        }
        let mut merged = Tally::default();
        merged.add(a);
        merged.add(b);
        merged.add(Tally::default());
        assert_eq!(merged.histogram(), want);
        assert_eq!(merged.distinct, counts.len() as u64);
    }
}
