//! A run's settings: the options callers give ([`CountOptions`]) checked and turned into a
//! [`Plan`] that every stage reads: k, the minimizer length, the number of buckets, the
//! memory bound and the threads, the temporary folder, the cancel flag.

use std::path::PathBuf;
use std::sync::Arc;

use gpu_runtime::Exec;

use crate::AssemblyError;
use crate::bucketing::minimizer_len;
use crate::budget::Budget;
use crate::kmer::{Word, check_k};
use crate::reads::ReadSource;
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
    /// Store the temporary files that shrink (super-k-mers, pieces, links, glue and runs) as
    /// LZ4 blocks, as GGCAT compresses its intermediate files. A pangenome's related genomes
    /// put the same sequences side by side in a bucket, so its temporary disk shrinks by
    /// about a quarter; the blocks cost a few percent of the run's time, hence off by default.
    pub compress_temp: bool,
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
            compress_temp: false,
            cancel: None,
        }
    }
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
    /// [`CountOptions::compress_temp`].
    pub(crate) compress_temp: bool,
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

    /// [`Plan::spill`] for records that shrink as LZ4 blocks, stored so when the run compresses
    /// its temporary files ([`CountOptions::compress_temp`]).
    pub(crate) fn compressible_spill(&self, name: &str, buckets: usize) -> Spill {
        let s = self.spill(name, buckets);
        if self.compress_temp {
            s.compressed()
        } else {
            s
        }
    }

    /// [`for_each_bucket`] over buckets `0..buckets` on this run's threads, stopped by its
    /// cancel flag.
    pub(crate) fn for_buckets<S>(
        &self,
        stage: &'static str,
        buckets: usize,
        progress: &mut dyn FnMut(Progress),
        init: &(dyn Fn() -> Result<S, AssemblyError> + Sync),
        work: &(dyn Fn(&mut S, usize) -> Result<(), AssemblyError> + Sync),
        finish: &(dyn Fn(S) -> Result<(), AssemblyError> + Sync),
    ) -> Result<(), AssemblyError> {
        let order: Vec<usize> = (0..buckets).collect();
        let (threads, cancel) = (self.threads(), &self.cancel);
        for_each_bucket(stage, threads, &order, cancel, progress, init, work, finish)
    }

    /// [`Plan::for_buckets`] where each thread writes to its own writer of `spill` (`buffer`
    /// bytes a bucket) beside its scratch state from `init`; the writers are finished last.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn for_buckets_writing<'s, S>(
        &self,
        stage: &'static str,
        buckets: usize,
        progress: &mut dyn FnMut(Progress),
        spill: &'s Spill,
        buffer: usize,
        init: &(dyn Fn() -> S + Sync),
        work: &(dyn Fn(&mut SpillWriter<'s>, &mut S, usize) -> Result<(), AssemblyError> + Sync),
    ) -> Result<(), AssemblyError> {
        self.for_buckets(
            stage,
            buckets,
            progress,
            &|| Ok((spill.writer(buffer)?, init())),
            &|(out, scratch), c| work(out, scratch, c),
            &|(out, _)| out.finish(),
        )
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
pub(crate) fn bytes_per_occurrence<W: Word>() -> u64 {
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
        compress_temp: options.compress_temp,
        cancel: options.cancel.clone().unwrap_or_default(),
    })
}
