//! The counted k-mers handed to callers: gathered in memory ([`count_kmers`]) or left in
//! their buckets and streamed in ascending order ([`KmerBuckets`], what `warpath kmers`
//! writes from under a memory bound).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use gpu_runtime::Exec;

use crate::AssemblyError;
use crate::count::{CountStats, Solid, count_buckets};
use crate::count_word::CountWord;
use crate::kmer::{Word, check_k};
use crate::plan::{CountOptions, Plan, plan};
use crate::reads::{ReadSource, ReadStats};
use crate::records::SolidRunLayout;
use crate::work::Progress;

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
    let mut solid = count_buckets::<W>(sources, None, &plan, progress)?;
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
        let mut head = [0u8; SolidRunLayout::HEAD];
        for b in 0..spill.buckets() {
            let size = spill.bucket_bytes(b);
            let mut at = 0;
            while at < size {
                spill.read_range(b, at, &mut head)?;
                let n = u64::from_le_bytes(head);
                let layout = SolidRunLayout::of::<W>(at, n);
                cursors.push(RunCursor {
                    bucket: b,
                    kmers_at: layout.kmers,
                    counts_at: layout.counts,
                    n,
                    next: 0,
                    kmers: Vec::new(),
                    counts: Vec::new(),
                    i: 0,
                });
                at = layout.end;
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
        let mut heap = BinaryHeap::new();
        for (j, c) in cursors.iter_mut().enumerate() {
            if refill(c)? {
                heap.push(Reverse((c.kmers[0], j)));
            }
        }
        let mut out_k: Vec<W> = Vec::with_capacity(1 << 16);
        let mut out_c: Vec<u32> = Vec::with_capacity(1 << 16);
        while let Some(Reverse((x, j))) = heap.pop() {
            let c = &mut cursors[j];
            out_k.push(x);
            out_c.push(c.counts[c.i]);
            c.i += 1;
            if c.i < c.kmers.len() || refill(c)? {
                heap.push(Reverse((c.kmers[c.i], j)));
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
