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
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use gpu_runtime::{Backend, Exec, Target};
use rayon::prelude::*;

use crate::AssemblyError;
use crate::bucketing::{
    Bucketed, BucketingPlan, bucket_reads, end_buckets, end_buckets_many, for_each_kmer,
    minimizer_len,
};
use crate::budget::Budget;
use crate::kmer::{Word, check_k};
use crate::reads::{ReadSource, ReadStats};
use crate::spill::{Spill, SpillWriter};
use crate::temp::{Cancel, TempSpace, check_free_space};
use crate::work::{Progress, for_each_bucket};

/// How to count.
#[derive(Debug, Clone)]
pub struct CountOptions {
    /// The k-mer length: odd, 3 to 63.
    pub k: usize,
    /// K-mers seen fewer times are dropped (the solid k-mers have at least this count); 2 by
    /// default, as BCALM2 and most assemblers (once-seen k-mers are mostly sequencing errors).
    pub min_count: u32,
    /// K-mers seen more times are dropped too (`u32::MAX`: none).
    pub max_count: u32,
    /// Minimizer length `m` (`m < k`, at most 31); 0 picks `min(k - 1, 11)`.
    pub minimizer: usize,
    /// Number of buckets; 0 picks one from the input's size and the memory bound.
    pub partitions: usize,
    /// A bound on the resident memory of the run, in bytes (0: no bound, unless `temp_dir` is
    /// given: then half of the memory available). Under a bound the run keeps its buckets in
    /// temporary files and sizes every array to fit.
    pub max_memory: u64,
    /// Where temporary files go. `None`: in memory when there is no `max_memory`, else the
    /// system's temporary folder.
    pub temp_dir: Option<PathBuf>,
    /// Worker threads; 0: rayon's thread count (`RAYON_NUM_THREADS`).
    pub threads: usize,
    /// Where the sorts run.
    pub exec: Exec,
    /// Checked between batches and buckets: once set, the run stops with
    /// [`AssemblyError::Interrupted`] and removes its temporary files.
    pub cancel: Option<Arc<Cancel>>,
}

impl CountOptions {
    /// Defaults for `k`: minimum count 2, no maximum, automatic minimizer and buckets, no
    /// memory bound (temporary data in memory), rayon's threads, `Exec::Auto`.
    pub fn new(k: usize) -> Self {
        CountOptions {
            k,
            min_count: 2,
            max_count: u32::MAX,
            minimizer: 0,
            partitions: 0,
            max_memory: 0,
            temp_dir: None,
            threads: 0,
            exec: Exec::Auto,
            cancel: None,
        }
    }
}

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

/// The solid canonical k-mers, sorted ascending, with their counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KmerCounts<W: Word> {
    /// The k-mer length.
    pub k: usize,
    /// Canonical k-mers, sorted ascending, each once.
    pub kmers: Vec<W>,
    /// `counts[i]` is how often `kmers[i]` (either strand) was seen, saturating at `u32::MAX`.
    pub counts: Vec<u32>,
    /// What counting saw.
    pub stats: CountStats,
}

/// A run's settings, checked: what every stage needs to know.
pub(crate) struct Plan {
    pub(crate) k: usize,
    pub(crate) m: usize,
    pub(crate) min_count: u32,
    pub(crate) max_count: u32,
    pub(crate) buckets: usize,
    pub(crate) budget: Budget,
    pub(crate) exec: Exec,
    pub(crate) space: Option<TempSpace>,
    pub(crate) cancel: Arc<Cancel>,
}

impl Plan {
    /// The temporary folder, if the run has one.
    pub(crate) fn space(&self) -> Option<&TempSpace> {
        self.space.as_ref()
    }

    /// Worker threads.
    pub(crate) fn threads(&self) -> usize {
        self.budget.threads
    }

    /// A new spill of this run's buckets (or `buckets` others).
    pub(crate) fn spill(&self, name: &str, buckets: usize) -> Spill {
        Spill::new(self.space(), name, buckets)
    }
}

/// Letters the sources hold, estimated from their sizes (a gzip file counted four times).
fn input_letters(sources: &[ReadSource<'_>]) -> u64 {
    sources
        .iter()
        .map(|s| match s {
            ReadSource::File(p) => {
                let len = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
                if p.extension().is_some_and(|e| e == "gz") {
                    len * 4
                } else {
                    len
                }
            }
            ReadSource::Bytes(b, _) => b.len() as u64,
        })
        .sum()
}

/// Bytes a k-mer occurrence takes while a bucket is counted: the array, the radix sort's
/// scratch copy, and the solid k-mers' counts and flags.
fn bytes_per_occurrence<W: Word>() -> u64 {
    2 * W::BYTES as u64 + 8
}

/// Checks `options` and sizes the run for `sources`.
///
/// # Errors
/// As [`count_kmers`]: [`AssemblyError::BadK`], [`AssemblyError::InvalidParameter`],
/// [`AssemblyError::Memory`] for a bound too small, [`AssemblyError::Disk`] /
/// [`AssemblyError::DiskSpace`] for the temporary folder.
pub(crate) fn plan<W: Word>(
    sources: &[ReadSource<'_>],
    options: &CountOptions,
) -> Result<Plan, AssemblyError> {
    let k = options.k;
    check_k(k)?;
    if k > W::MAX_K {
        return Err(AssemblyError::BadK(k));
    }
    if options.min_count == 0 || options.min_count > options.max_count {
        return Err(AssemblyError::InvalidParameter(format!(
            "the minimum count must be at least 1 and at most the maximum count, not {} (max {})",
            options.min_count, options.max_count
        )));
    }
    let m = minimizer_len(k, options.minimizer);
    if m == 0 || m >= k || m > 31 {
        return Err(AssemblyError::InvalidParameter(format!(
            "the minimizer length must be from 1 to min(k - 1, 31) = {}, not {m}",
            (k - 1).min(31)
        )));
    }
    let threads = if options.threads == 0 {
        rayon::current_num_threads()
    } else {
        options.threads
    };
    let bounded = options.max_memory > 0 || options.temp_dir.is_some();
    let budget = if bounded {
        Budget::new(options.max_memory, threads)?
    } else {
        // no bound asked for: the buckets stay in memory and may take what they need
        Budget {
            total: u64::MAX / 4,
            threads,
        }
    };
    let letters = input_letters(sources);
    if options.partitions > 1 << 20 {
        return Err(AssemblyError::InvalidParameter(format!(
            "{} buckets: at most 2^20",
            options.partitions
        )));
    }
    let buckets = if options.partitions > 0 {
        options.partitions
    } else {
        // A bucket's occurrences should fit a thread's share twice over, and hold about 2^21
        // of them (their arrays then sort in cache-sized pieces and the links stay local);
        // at least four a thread, to share the work.
        let per = bytes_per_occurrence::<W>();
        let by_memory = (letters.saturating_mul(per) * 2 / budget.per_thread().max(1)) as usize;
        let by_size = (letters >> 21) as usize;
        by_memory
            .max(by_size)
            .next_power_of_two()
            .clamp(4 * threads, 1 << 16)
    };
    let space = match (&options.temp_dir, bounded) {
        (Some(dir), _) => Some(dir.clone()),
        (None, true) => Some(std::env::temp_dir()),
        (None, false) => None,
    }
    .map(|dir| {
        // The super-k-mers alone take about 0.9 bytes a letter of 150 bp reads (then the solid
        // k-mers up to 13 bytes each): refuse at once a folder that cannot hold half of that.
        let needed = letters / 2;
        check_free_space(&dir, needed)?;
        TempSpace::create(&dir)
    })
    .transpose()?;
    Ok(Plan {
        k,
        m,
        min_count: options.min_count,
        max_count: options.max_count,
        buckets,
        budget,
        exec: options.exec,
        space,
        cancel: options.cancel.clone().unwrap_or_default(),
    })
}

/// The result of counting into buckets.
pub(crate) struct Solid {
    /// Per bucket, sorted runs of `[n: u64][n words][n u32 counts][n u8 flags]`: the solid
    /// k-mers whose minimizer is the bucket's, their counts, and which of their ends
    /// ([`RIGHT_HERE`], [`LEFT_HERE`]) compaction decides in this bucket.
    pub(crate) spill: Spill,
    /// Per bucket, `[word][side u8]` records: solid k-mers of other buckets with an end
    /// decided here (side 0: its right end, 1: its left end).
    pub(crate) foreign: Spill,
    /// Solid k-mers per bucket.
    pub(crate) sizes: Vec<u64>,
    /// Foreign ends per bucket.
    pub(crate) foreign_sizes: Vec<u64>,
    pub(crate) stats: CountStats,
}

/// The right end (last k-1 bases) of a solid k-mer is decided in its own bucket.
pub(crate) const RIGHT_HERE: u8 = 1;
/// The left end (first k-1 bases) of a solid k-mer is decided in its own bucket.
pub(crate) const LEFT_HERE: u8 = 2;

/// Per-thread state of the counting stage.
struct CountWorker<'s, W> {
    foreign: SpillWriter<'s>,
    solid: SpillWriter<'s>,
    foreign_sizes: Vec<u64>,
    kmers: Vec<W>,
    scratch: Vec<u8>,
    out: Vec<u8>,
    ends: Vec<(u32, u32)>,
    tally: Tally,
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
pub(crate) fn count_buckets<W: CountWord>(
    sources: &[ReadSource<'_>],
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
        batch_letters: (usable / 32).clamp(1 << 16, 1 << 23) as usize,
        buffer: (usable / 4 / (t * b) as u64).clamp(512, 1 << 17) as usize,
    };
    let bucketed = bucket_reads(
        sources,
        &bplan,
        plan.spill("superkmers", b),
        &plan.cancel,
        progress,
    )?;
    if let Some(s) = plan.space() {
        s.sample();
    }
    let target = plan
        .exec
        .resolve(bucketed.kmers_seen, gpu_primitives::GPU_THRESHOLD_SORT)?;
    let on_gpu = matches!(target, Target::Cuda(_));
    let solid = plan.spill("solid", b);
    let foreign = plan.spill("foreign", b);
    let tally = Mutex::new(Tally::default());
    let foreign_sizes = Mutex::new(vec![0u64; b]);
    let sizes: Vec<std::sync::atomic::AtomicU64> = (0..b)
        .map(|_| std::sync::atomic::AtomicU64::new(0))
        .collect();
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
                Ok(CountWorker::<W> {
                    foreign: foreign.writer(foreign_buffer)?,
                    solid: solid.writer(1 << 16)?,
                    foreign_sizes: vec![0; b],
                    kmers: Vec::new(),
                    scratch: Vec::new(),
                    out: Vec::new(),
                    ends: Vec::new(),
                    tally: Tally::default(),
                })
            },
            &|w, bucket| {
                let n = count_bucket(plan, &bucketed, bucket, per_thread, w)?;
                sizes[bucket].store(n, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            },
            &|w| {
                w.foreign.finish()?;
                w.solid.finish()?;
                tally.lock().expect("tally").add(w.tally);
                for (a, b) in foreign_sizes
                    .lock()
                    .expect("sizes")
                    .iter_mut()
                    .zip(w.foreign_sizes)
                {
                    *a += b;
                }
                Ok(())
            },
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
    })
}

/// Counts one bucket on the CPU, in as many passes as its thread's share of memory needs;
/// writes each pass's solid k-mers as a sorted run and sends their foreign ends. Returns the
/// bucket's solid k-mers.
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
    let per = bytes_per_occurrence::<W>();
    let passes = (occ * per).div_ceil(per_thread.max(1)).max(1);
    let k = plan.k;
    let mut solid = 0;
    for pass in 0..passes {
        plan.cancel.check()?;
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
            let mut j = i + 1;
            while j < n && kmers[j] == x {
                j += 1;
            }
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
        solid += d as u64;
        let r = write_run(plan, bucket, kmers, &counts, w);
        w.kmers = taken;
        r?;
    }
    w.tally.solid += solid;
    Ok(solid)
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
    let out = &mut w.out;
    out.clear();
    out.extend_from_slice(&(kmers.len() as u64).to_le_bytes());
    for &x in kmers {
        x.put(out);
    }
    for &c in counts {
        out.extend_from_slice(&c.to_le_bytes());
    }
    let mut rec = Vec::with_capacity(W::BYTES + 1);
    let mut ends = std::mem::take(&mut w.ends);
    ends.clear();
    end_buckets_many(kmers, plan.k, plan.m, plan.buckets, &mut ends);
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
                rec.clear();
                x.put(&mut rec);
                rec.push(side);
                w.foreign.push(end, &rec)?;
                w.foreign_sizes[end] += 1;
            }
        }
        out.push(flags);
    }
    w.ends = ends;
    w.solid.write_direct(bucket, out)
}

/// Counting on the GPU: groups of buckets (up to 2^26 k-mers, within the memory bound) go
/// through one device distinct-with-counts each; each solid k-mer is then routed to its own
/// bucket's run (the group's output is sorted, so each bucket's share stays sorted).
#[allow(clippy::too_many_arguments)]
fn count_on_gpu<W: CountWord>(
    plan: &Plan,
    bucketed: &Bucketed,
    solid: &Spill,
    foreign: &Spill,
    sizes: &[std::sync::atomic::AtomicU64],
    foreign_sizes: &Mutex<Vec<u64>>,
    tally: &Mutex<Tally>,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), AssemblyError> {
    let b = plan.buckets;
    // the host holds the k-mers, the distinct values and their counts: 24 bytes a k-mer
    let cap = (plan.budget.usable() / (3 * W::BYTES as u64 + 8)).clamp(1, 1 << 26);
    let mut w = CountWorker::<W> {
        foreign: foreign
            .writer((plan.budget.usable() / 16 / b as u64).clamp(256, 1 << 16) as usize)?,
        solid: solid.writer(1 << 16)?,
        foreign_sizes: vec![0; b],
        kmers: Vec::new(),
        scratch: Vec::new(),
        out: Vec::new(),
        ends: Vec::new(),
        tally: Tally::default(),
    };
    let mut start = 0;
    while start < b {
        plan.cancel.check()?;
        progress(Progress::Stage {
            stage: "counting",
            done: start as u64,
            total: b as u64,
        });
        let mut end = start;
        let mut total = 0;
        while end < b && (end == start || total + bucketed.occurrences[end] <= cap) {
            total += bucketed.occurrences[end];
            end += 1;
        }
        let mut kmers: Vec<W> = Vec::with_capacity(total as usize);
        for bucket in start..end {
            bucketed
                .spill
                .for_each_chunk(bucket, &mut w.scratch, &mut |chunk| {
                    for_each_kmer::<W>(chunk, plan.k, |fw, rc| {
                        kmers.push(if rc < fw { rc } else { fw })
                    });
                    Ok(())
                })?;
        }
        let (distinct, runs) = W::count_words(&mut kmers, Exec::Cuda)?;
        drop(kmers);
        let mut per_bucket: Vec<(Vec<W>, Vec<u32>)> = vec![(Vec::new(), Vec::new()); end - start];
        let homes: Vec<usize> = distinct
            .par_iter()
            .map(|&x| end_buckets(x, plan.k, plan.m, b).2)
            .collect();
        for ((&x, &c), &home) in distinct.iter().zip(&runs).zip(&homes) {
            w.tally.record(c);
            if c >= plan.min_count as u64 && c <= plan.max_count as u64 {
                let (ks, cs) = &mut per_bucket[home - start];
                ks.push(x);
                cs.push(c.min(u32::MAX as u64) as u32);
            }
        }
        for (i, (ks, cs)) in per_bucket.into_iter().enumerate() {
            w.tally.solid += ks.len() as u64;
            sizes[start + i].store(ks.len() as u64, std::sync::atomic::Ordering::Relaxed);
            if !ks.is_empty() {
                write_run(plan, start + i, &ks, &cs, &mut w)?;
            }
        }
        start = end;
    }
    w.foreign.finish()?;
    w.solid.finish()?;
    tally.lock().expect("tally").add(w.tally);
    for (a, b) in foreign_sizes
        .lock()
        .expect("sizes")
        .iter_mut()
        .zip(w.foreign_sizes)
    {
        *a += b;
    }
    Ok(())
}

/// Counts sorted k-mers into `(kmer, count)` runs.
fn run_lengths<W: Word>(sorted: &[W]) -> (Vec<W>, Vec<u64>) {
    let mut kmers = Vec::new();
    let mut counts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let x = sorted[i];
        let mut j = i + 1;
        while j < sorted.len() && sorted[j] == x {
            j += 1;
        }
        kmers.push(x);
        counts.push((j - i) as u64);
        i = j;
    }
    (kmers, counts)
}

/// What [`read_solid_runs`] calls with each run: its k-mers, counts and flags, as bytes.
pub(crate) type RunFn<'a> = dyn FnMut(&[u8], &[u8], &[u8]) -> Result<(), AssemblyError> + 'a;

/// Reads bucket `bucket`'s solid runs, calling `f(kmers, counts, flags)` for each.
pub(crate) fn read_solid_runs<W: Word>(
    solid: &Spill,
    bucket: usize,
    buf: &mut Vec<u8>,
    f: &mut RunFn<'_>,
) -> Result<(), AssemblyError> {
    solid.read(bucket, buf)?;
    let mut at = 0;
    while at < buf.len() {
        let n = u64::from_le_bytes(buf[at..at + 8].try_into().expect("run length")) as usize;
        at += 8;
        let kmers = &buf[at..at + n * W::BYTES];
        at += n * W::BYTES;
        let counts = &buf[at..at + 4 * n];
        at += 4 * n;
        let flags = &buf[at..at + n];
        at += n;
        f(kmers, counts, flags)?;
    }
    Ok(())
}

/// Counts the canonical k-mers of the reads in `sources`.
///
/// Reads are split at non-bases; each piece's k-mers are grouped into super-k-mers by
/// minimizer and stored in buckets (in temporary files under a memory bound or with
/// `temp_dir`, else in memory); each bucket is then sorted (radix sort, on the GPU under
/// `Exec::Cuda` or `Exec::Auto` above gpu-primitives' threshold) and counted by run lengths.
/// K-mers with a count in `min_count..=max_count` are returned, sorted.
///
/// # Complexity
/// `O(L)` time for `L` bases (radix sorts); the buckets hold about 2 bits a base; counting
/// holds one bucket per thread. The result (12 or 20 bytes a solid k-mer) is in memory.
///
/// # Errors
/// [`AssemblyError::BadK`] for an even k or one outside 3..=63 (and above 31 for `u64`
/// words); [`AssemblyError::InvalidParameter`] for `min_count` 0, `min_count > max_count`,
/// a minimizer not shorter than k, `Exec::Cuda` with 128-bit k-mers, or 2^31 - 1 solid
/// k-mers or more (what [`crate::compact`] can number); reading errors as
/// [`crate::for_each_batch`]; [`AssemblyError::Gpu`] / [`AssemblyError::Primitive`] from the
/// sorts; [`AssemblyError::Memory`], [`AssemblyError::Disk`], [`AssemblyError::DiskSpace`]
/// for the memory bound and the temporary files; [`AssemblyError::Interrupted`].
///
/// # Examples
/// ```
/// use assembly::{count_kmers, unpack, CountOptions, ReadSource};
/// let fa = b">a\nACGTTGCA\n>b\nTGCAACGT\n"; // b is a's reverse complement
/// let c = count_kmers::<u64>(&[ReadSource::Bytes(fa, "x.fa")], &CountOptions::new(5), &mut |_| {})?;
/// assert_eq!(c.stats.kmers_seen, 8);
/// let solid: Vec<String> = c.kmers.iter().map(|&x| unpack(x, 5)).collect();
/// assert_eq!(solid, ["AACGT", "CAACG", "GCAAC", "TGCAA"]); // canonical, each seen twice
/// assert!(c.counts.iter().all(|&n| n == 2));
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn count_kmers<W: CountWord>(
    sources: &[ReadSource<'_>],
    options: &CountOptions,
    progress: &mut dyn FnMut(ReadStats),
) -> Result<KmerCounts<W>, AssemblyError> {
    let buckets = count_kmer_buckets::<W>(sources, options, &mut |p| {
        if let Progress::Reading(s) = p {
            progress(s);
        }
    })?;
    let total = buckets.stats.solid;
    if total >= (1 << 31) - 1 {
        // compaction in memory numbers oriented k-mers in 32 bits
        return Err(AssemblyError::InvalidParameter(format!(
            "{total} solid k-mers: compaction holds fewer than 2^31 - 1; raise the minimum count"
        )));
    }
    let mut kmers: Vec<W> = Vec::with_capacity(total as usize);
    let mut counts: Vec<u32> = Vec::with_capacity(total as usize);
    buckets.for_each_sorted(&mut |ks, cs| {
        kmers.extend_from_slice(ks);
        counts.extend_from_slice(cs);
        Ok(())
    })?;
    Ok(KmerCounts {
        k: buckets.plan.k,
        kmers,
        counts,
        stats: buckets.stats.clone(),
    })
}

/// Counted k-mers left in their buckets (temporary files, or memory without a temporary
/// folder), read back in ascending order by [`KmerBuckets::for_each_sorted`]: what
/// `warpath kmers` writes from under a memory bound. Dropping it removes the files.
pub struct KmerBuckets<W: Word> {
    plan: Plan,
    solid: Solid,
    /// What counting saw.
    pub stats: CountStats,
    _word: std::marker::PhantomData<W>,
}

/// Counts the canonical k-mers of the reads in `sources` into buckets, within
/// `options.max_memory`, without gathering them: as [`count_kmers`], whose result
/// [`KmerBuckets::for_each_sorted`] then streams.
///
/// # Complexity
/// As [`count_kmers`], with the solid k-mers left in the buckets (13 or 21 bytes each).
///
/// # Errors
/// As [`count_kmers`].
///
/// # Examples
/// ```
/// use assembly::{count_kmer_buckets, unpack, CountOptions, ReadSource};
/// let fa = b">a\nACGTTGCA\n>b\nTGCAACGT\n";
/// let b = count_kmer_buckets::<u64>(&[ReadSource::Bytes(fa, "x.fa")], &CountOptions::new(5), &mut |_| {})?;
/// let mut seen = Vec::new();
/// b.for_each_sorted(&mut |kmers, counts| {
///     seen.extend(kmers.iter().zip(counts).map(|(&x, &n)| (unpack(x, 5), n)));
///     Ok(())
/// })?;
/// assert_eq!(seen[0], ("AACGT".to_string(), 2));
/// assert_eq!(seen.len() as u64, b.stats.solid);
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn count_kmer_buckets<W: CountWord>(
    sources: &[ReadSource<'_>],
    options: &CountOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<KmerBuckets<W>, AssemblyError> {
    if options.exec == Exec::Cuda && W::as_u64s(&[]).is_none() {
        check_k(options.k)?;
        return Err(AssemblyError::InvalidParameter(
            "k above 31 is counted on the CPU only (128-bit k-mers have no GPU sort): use \
             --backend cpu or auto"
                .into(),
        ));
    }
    let plan = plan::<W>(sources, options)?;
    let mut solid = count_buckets::<W>(sources, &plan, progress)?;
    // the foreign ends are for compaction only
    solid.foreign = plan.spill("foreign", 0);
    let stats = solid.stats.clone();
    Ok(KmerBuckets {
        plan,
        solid,
        stats,
        _word: std::marker::PhantomData,
    })
}

/// What [`KmerBuckets::for_each_sorted`] calls with each batch of k-mers and their counts.
pub type SortedFn<'a, W> = dyn FnMut(&[W], &[u32]) -> Result<(), AssemblyError> + 'a;

/// A cursor over one sorted run of a bucket, reading a batch at a time.
struct RunCursor<W> {
    bucket: usize,
    kmers_at: u64,
    counts_at: u64,
    n: u64,
    next: u64,
    kmers: Vec<W>,
    counts: Vec<u32>,
    i: usize,
}

impl<W: Word> KmerBuckets<W> {
    /// The k-mer length.
    pub fn k(&self) -> usize {
        self.plan.k
    }

    /// The largest total size of the temporary files so far (0 when kept in memory).
    pub fn temp_bytes(&self) -> u64 {
        self.plan.space().map_or(0, |s| {
            s.sample();
            s.peak()
        })
    }

    /// Calls `f` with the solid k-mers in ascending order, in batches, with their counts: a
    /// merge of every bucket's sorted runs, holding a batch of each within the memory bound.
    ///
    /// # Complexity
    /// `O(n log r)` for `n` solid k-mers in `r` runs (about one a bucket).
    ///
    /// # Errors
    /// [`AssemblyError::Disk`] reading the temporary files; the first error of `f`.
    pub fn for_each_sorted(&self, f: &mut SortedFn<'_, W>) -> Result<(), AssemblyError> {
        let spill = &self.solid.spill;
        let mut cursors: Vec<RunCursor<W>> = Vec::new();
        let mut head = [0u8; 8];
        for b in 0..spill.buckets() {
            let size = spill.bucket_bytes(b);
            let mut at = 0;
            while at < size {
                spill.read_range(b, at, &mut head)?;
                let n = u64::from_le_bytes(head);
                cursors.push(RunCursor {
                    bucket: b,
                    kmers_at: at + 8,
                    counts_at: at + 8 + n * W::BYTES as u64,
                    n,
                    next: 0,
                    kmers: Vec::new(),
                    counts: Vec::new(),
                    i: 0,
                });
                at += 8 + n * (W::BYTES as u64 + 5);
            }
        }
        let per =
            (self.plan.budget.usable() / 4 / (cursors.len().max(1) as u64 * (W::BYTES as u64 + 4)))
                .clamp(64, 1 << 16);
        let mut bytes = Vec::new();
        let mut refill = |c: &mut RunCursor<W>| -> Result<bool, AssemblyError> {
            if c.next >= c.n {
                return Ok(false);
            }
            let take = per.min(c.n - c.next);
            bytes.resize(take as usize * W::BYTES, 0);
            spill.read_range(c.bucket, c.kmers_at + c.next * W::BYTES as u64, &mut bytes)?;
            c.kmers.clear();
            c.kmers.extend(bytes.chunks_exact(W::BYTES).map(W::get));
            bytes.resize(take as usize * 4, 0);
            spill.read_range(c.bucket, c.counts_at + c.next * 4, &mut bytes)?;
            c.counts.clear();
            c.counts.extend(
                bytes
                    .chunks_exact(4)
                    .map(|x| u32::from_le_bytes(x.try_into().expect("count"))),
            );
            c.next += take;
            c.i = 0;
            Ok(true)
        };
        let mut heap = std::collections::BinaryHeap::new();
        for (j, c) in cursors.iter_mut().enumerate() {
            if refill(c)? {
                heap.push(std::cmp::Reverse((c.kmers[0], j)));
            }
        }
        let mut out_k: Vec<W> = Vec::with_capacity(1 << 16);
        let mut out_c: Vec<u32> = Vec::with_capacity(1 << 16);
        while let Some(std::cmp::Reverse((x, j))) = heap.pop() {
            let c = &mut cursors[j];
            out_k.push(x);
            out_c.push(c.counts[c.i]);
            c.i += 1;
            if c.i < c.kmers.len() || refill(c)? {
                heap.push(std::cmp::Reverse((c.kmers[c.i], j)));
            }
            if out_k.len() == 1 << 16 {
                self.plan.cancel.check()?;
                f(&out_k, &out_c)?;
                out_k.clear();
                out_c.clear();
            }
        }
        if !out_k.is_empty() {
            f(&out_k, &out_c)?;
        }
        Ok(())
    }
}

/// A k-mer word the counter can sort and count: `u64` through gpu-primitives (the radix sort
/// on the CPU; on the GPU sort and run lengths both on the device, only the distinct k-mers
/// and their counts coming back), `u128` through the standard library's sort (CPU only).
pub trait CountWord: Word {
    /// The distinct words of `v` ascending, with how often each occurs; `v` may be reordered.
    ///
    /// # Errors
    /// [`AssemblyError::Primitive`] from the primitives; `Exec::Cuda` for `u128` is
    /// [`AssemblyError::InvalidParameter`].
    fn count_words(v: &mut [Self], exec: Exec) -> Result<(Vec<Self>, Vec<u64>), AssemblyError>;
    /// Sorts words ascending on the CPU (one bucket's k-mers: on the calling thread for the
    /// most part).
    ///
    /// # Errors
    /// [`AssemblyError::Primitive`] from the radix sort.
    fn sort_words(v: &mut [Self]) -> Result<(), AssemblyError>;
    /// Sorts the end records of a bucket by key (their (k-1)-mers), moving the values along:
    /// on the CPU, or with gpu-primitives' device radix sort under `Exec::Cuda`.
    ///
    /// # Errors
    /// [`AssemblyError::Primitive`] from the radix sort (a GPU that is missing or too small);
    /// `Exec::Cuda` for `u128` is [`AssemblyError::InvalidParameter`].
    fn sort_ends(keys: &mut [Self], vals: &mut [u32], exec: Exec) -> Result<(), AssemblyError>;
    /// Sorts k-mers with their counts, ascending by k-mer, on the CPU.
    ///
    /// # Errors
    /// [`AssemblyError::Primitive`] from the radix sort.
    fn sort_pairs(kmers: &mut [Self], counts: &mut [u32]) -> Result<(), AssemblyError>;
}

impl CountWord for u64 {
    fn count_words(v: &mut [u64], exec: Exec) -> Result<(Vec<u64>, Vec<u64>), AssemblyError> {
        if exec == Exec::Cuda {
            let options = gpu_primitives::DistinctOptions {
                counts: true,
                ..Default::default()
            };
            let d = gpu_primitives::distinct_with(v, options, Exec::Cuda)?;
            let counts = d.counts.unwrap_or_default();
            return Ok((d.values, counts));
        }
        gpu_primitives::radix_sort(v, Exec::Cpu)?;
        Ok(run_lengths(v))
    }
    fn sort_words(v: &mut [u64]) -> Result<(), AssemblyError> {
        gpu_primitives::radix_sort(v, Exec::Cpu)?;
        Ok(())
    }
    fn sort_pairs(kmers: &mut [u64], counts: &mut [u32]) -> Result<(), AssemblyError> {
        gpu_primitives::radix_sort_pairs(kmers, counts, Exec::Cpu)?;
        Ok(())
    }
    fn sort_ends(keys: &mut [u64], vals: &mut [u32], exec: Exec) -> Result<(), AssemblyError> {
        gpu_primitives::radix_sort_pairs(keys, vals, exec)?;
        Ok(())
    }
}

impl CountWord for u128 {
    fn count_words(v: &mut [u128], exec: Exec) -> Result<(Vec<u128>, Vec<u64>), AssemblyError> {
        if exec == Exec::Cuda {
            return Err(AssemblyError::InvalidParameter(
                "k above 31 is counted on the CPU only (128-bit k-mers have no GPU sort): use \
                 --backend cpu or auto"
                    .into(),
            ));
        }
        if v.len() >= 1 << 16 {
            v.par_sort_unstable();
        } else {
            v.sort_unstable();
        }
        Ok(run_lengths(v))
    }
    fn sort_words(v: &mut [u128]) -> Result<(), AssemblyError> {
        v.sort_unstable();
        Ok(())
    }
    fn sort_ends(keys: &mut [u128], vals: &mut [u32], exec: Exec) -> Result<(), AssemblyError> {
        if exec == Exec::Cuda {
            return Err(AssemblyError::InvalidParameter(
                "k above 31 is compacted on the CPU only (128-bit k-mers have no GPU sort)".into(),
            ));
        }
        let mut pairs: Vec<(u128, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
        pairs.sort_unstable();
        for (i, (x, v)) in pairs.into_iter().enumerate() {
            keys[i] = x;
            vals[i] = v;
        }
        Ok(())
    }
    fn sort_pairs(kmers: &mut [u128], counts: &mut [u32]) -> Result<(), AssemblyError> {
        let mut pairs: Vec<(u128, u32)> =
            kmers.iter().copied().zip(counts.iter().copied()).collect();
        pairs.par_sort_unstable_by_key(|p| p.0);
        for (i, (x, n)) in pairs.into_iter().enumerate() {
            kmers[i] = x;
            counts[i] = n;
        }
        Ok(())
    }
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
