//! Stage 2: counting. Consecutive k-mers of a read that share a minimizer form a super-k-mer,
//! stored once in the partition of that minimizer; a k-mer and its reverse complement have the
//! same minimizer (the smallest canonical m-mer by a fixed hash), so every occurrence of a
//! canonical k-mer lands in one partition. Each partition is then counted alone (radix sort +
//! run lengths), so the memory of counting is one partition's k-mers, not the whole input's.

use std::collections::BTreeMap;

use gpu_runtime::{Backend, Exec, Target};
use rayon::prelude::*;

use crate::AssemblyError;
use crate::kmer::{Word, check_k, mix64};
use crate::reads::{Batch, ReadSource, ReadStats, for_each_batch};

/// How to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountOptions {
    /// The k-mer length: odd, 3 to 63.
    pub k: usize,
    /// K-mers seen fewer times are dropped (the solid k-mers have at least this count); 2 by
    /// default, as BCALM2 and most assemblers (once-seen k-mers are mostly sequencing errors).
    pub min_count: u32,
    /// K-mers seen more times are dropped too (`u32::MAX`: none).
    pub max_count: u32,
    /// Minimizer length `m` (`m <= k`); 0 picks `min(k, 11)`.
    pub minimizer: usize,
    /// Number of partitions; 0 picks one from the input's size and `max_memory`.
    pub partitions: usize,
    /// Memory the counting may use, in bytes (bounds the k-mers of the partitions counted at
    /// once); 0 means half of the machine's memory.
    pub max_memory: u64,
    /// Where the partitions' sorts run.
    pub exec: Exec,
}

impl CountOptions {
    /// Defaults for `k`: minimum count 2, no maximum, automatic minimizer, partitions and
    /// memory, `Exec::Auto`.
    pub fn new(k: usize) -> Self {
        CountOptions {
            k,
            min_count: 2,
            max_count: u32::MAX,
            minimizer: 0,
            partitions: 0,
            max_memory: 0,
            exec: Exec::Auto,
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
    /// Partitions used.
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

/// The default minimizer length for `k`.
pub(crate) fn minimizer_len(k: usize, asked: usize) -> usize {
    if asked == 0 { k.min(11) } else { asked }
}

/// The order of m-mers for minimizers: a fixed hash of the canonical m-mer, ties by value.
#[inline]
fn mmer_key(canonical_mmer: u64) -> (u64, u64) {
    (
        mix64(canonical_mmer ^ 0x9e37_79b9_7f4a_7c15),
        canonical_mmer,
    )
}

/// Appends the super-k-mers of one read piece (base codes) to `parts`: for each run of
/// consecutive k-mers with the same minimizer position, the bases, 2-bit packed, to the
/// partition of the minimizer. `keys` is scratch space reused across calls.
///
/// The minimizer of a k-mer is the smallest of its `w = k - m + 1` canonical m-mers by
/// [`mmer_key`]; the window minimum is kept and recomputed only when it leaves the window
/// (expected `O(1)` work per base on random sequence).
fn superkmers(
    piece: &[u8],
    k: usize,
    m: usize,
    parts: &mut [Vec<u8>],
    keys: &mut Vec<(u64, u64)>,
) -> u64 {
    let n = piece.len();
    if n < k {
        return 0;
    }
    let p = parts.len() as u64;
    let w = k - m + 1;
    let mask = <u64 as Word>::mask(m);
    keys.clear();
    let (mut fw, mut rc) = (0u64, 0u64);
    for (i, &c) in piece.iter().enumerate() {
        fw = fw.push_right(c, mask);
        rc = rc.push_left(3 - c, m);
        if i + 1 >= m {
            keys.push(mmer_key(fw.min(rc)));
        }
    }
    let window_min = |keys: &[(u64, u64)], from: usize| -> usize {
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
            emit(piece, run_start, kmer - 1, k, keys[run_min].0, p, parts);
            run_start = kmer;
            run_min = min;
        }
    }
    emit(piece, run_start, n - k, k, keys[run_min].0, p, parts);
    (n - k + 1) as u64
}

/// Writes the super-k-mer of k-mers `first..=last` of `piece` to partition `hash % p`:
/// a length byte, then the bases 2-bit packed, four a byte, first base in the low bits.
fn emit(
    piece: &[u8],
    first: usize,
    last: usize,
    k: usize,
    hash: u64,
    p: u64,
    parts: &mut [Vec<u8>],
) {
    let bases = &piece[first..last + k];
    let part = &mut parts[(hash % p) as usize];
    // at most 2k - m bases (a minimizer stays in at most w windows): one byte holds the length
    debug_assert!(bases.len() < 256);
    part.push(bases.len() as u8);
    for four in bases.chunks(4) {
        let mut byte = 0u8;
        for (i, &c) in four.iter().enumerate() {
            byte |= c << (2 * i);
        }
        part.push(byte);
    }
}

/// The canonical k-mers of a partition's super-k-mers, appended to `out`.
fn partition_kmers<W: Word>(part: &[u8], k: usize, out: &mut Vec<W>) {
    let mask = W::mask(k);
    let mut i = 0;
    while i < part.len() {
        let len = part[i] as usize;
        let packed = &part[i + 1..i + 1 + len.div_ceil(4)];
        let mut fw = W::default();
        let mut rc = W::default();
        for j in 0..len {
            let c = (packed[j / 4] >> (2 * (j % 4))) & 3;
            fw = fw.push_right(c, mask);
            rc = rc.push_left(3 - c, k);
            if j + 1 >= k {
                out.push(if rc < fw { rc } else { fw });
            }
        }
        i += 1 + len.div_ceil(4);
    }
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

/// Counts the canonical k-mers of the reads in `sources`.
///
/// Reads are split at non-bases; each piece's k-mers are grouped into super-k-mers by
/// minimizer and stored in `partitions` buckets; each bucket is then sorted (radix sort, on
/// the GPU under `Exec::Cuda` or `Exec::Auto` above gpu-primitives' threshold) and counted by
/// run lengths. K-mers with a count in `min_count..=max_count` are returned, sorted.
///
/// # Complexity
/// `O(L)` time for `L` bases (radix sorts), `O(L)` memory for the stored super-k-mers (2 bits
/// a base, each super-k-mer repeating the k-1 bases it shares with the next) plus one
/// partition's k-mers at a time per thread.
///
/// # Errors
/// [`AssemblyError::BadK`] for an even k or one outside 3..=63 (and above 31 for `u64`
/// words); [`AssemblyError::InvalidParameter`] for `min_count` 0, `min_count > max_count`,
/// a minimizer longer than k, `Exec::Cuda` with 128-bit k-mers, or 2^31 - 1 solid k-mers or
/// more (what [`crate::compact`] can number); reading errors as
/// [`for_each_batch`]; [`AssemblyError::Gpu`] / [`AssemblyError::Primitive`] from the sorts.
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
    if m == 0 || m > k || m > 31 {
        return Err(AssemblyError::InvalidParameter(format!(
            "the minimizer length must be from 1 to min(k, 31), not {m}"
        )));
    }
    let p = partitions_for(sources, options);
    let mut parts: Vec<Vec<u8>> = vec![Vec::new(); p];
    let mut kmers_seen = 0u64;
    let reads = for_each_batch(sources, k, 1 << 24, progress, &mut |batch: &Batch| {
        // pieces in parallel, each task with its own partition buffers
        let pieces: Vec<&[u8]> = batch.pieces().collect();
        let chunk = pieces
            .len()
            .div_ceil(rayon::current_num_threads() * 4)
            .max(1);
        let local: Vec<(Vec<Vec<u8>>, u64)> = pieces
            .par_chunks(chunk)
            .map(|ps| {
                let mut mine = vec![Vec::new(); p];
                let mut keys = Vec::new();
                let mut seen = 0;
                for piece in ps {
                    // m <= 31: the m-mers always fit a u64
                    seen += superkmers(piece, k, m, &mut mine, &mut keys);
                }
                (mine, seen)
            })
            .collect();
        for (mine, seen) in local {
            kmers_seen += seen;
            for (dst, src) in parts.iter_mut().zip(mine) {
                dst.extend_from_slice(&src);
            }
        }
        Ok(())
    })?;
    let superkmer_bytes: u64 = parts.iter().map(|v| v.len() as u64).sum();
    // Partitions hold disjoint k-mer sets: count them in parallel on the CPU, or in groups of
    // many partitions per device distinct-with-counts on the GPU.
    let target = options
        .exec
        .resolve(kmers_seen, gpu_primitives::GPU_THRESHOLD_SORT)?;
    let on_gpu = matches!(target, Target::Cuda(_));
    let exec = if on_gpu { Exec::Cuda } else { Exec::Cpu };
    let groups = group_partitions(&parts, k, on_gpu);
    let counted: Vec<Result<Counted<W>, AssemblyError>> = if on_gpu {
        groups
            .iter()
            .map(|g| count_group::<W>(&parts, g, k, exec, options))
            .collect()
    } else {
        groups
            .par_iter()
            .map(|g| count_group::<W>(&parts, g, k, exec, options))
            .collect()
    };
    drop(parts);
    let mut kmers = Vec::new();
    let mut counts = Vec::new();
    let mut histogram = BTreeMap::new();
    let mut distinct = 0u64;
    for c in counted {
        let c = c?;
        distinct += c.distinct;
        for (n, h) in c.histogram {
            *histogram.entry(n).or_insert(0) += h;
        }
        kmers.extend_from_slice(&c.kmers);
        counts.extend_from_slice(&c.counts);
    }
    W::sort_pairs(&mut kmers, &mut counts)?;
    let solid = kmers.len() as u64;
    if solid >= (1 << 31) - 1 {
        // compaction numbers oriented k-mers in 32 bits
        return Err(AssemblyError::InvalidParameter(format!(
            "{solid} solid k-mers: compaction holds fewer than 2^31 - 1; raise the minimum count"
        )));
    }
    Ok(KmerCounts {
        k,
        kmers,
        counts,
        stats: CountStats {
            reads,
            kmers_seen,
            distinct,
            solid,
            histogram,
            partitions: p,
            superkmer_bytes,
            backend: if on_gpu { Backend::Cuda } else { Backend::Cpu },
        },
    })
}

/// What one group of partitions counted to.
struct Counted<W> {
    kmers: Vec<W>,
    counts: Vec<u32>,
    distinct: u64,
    histogram: BTreeMap<u64, u64>,
}

fn count_group<W: CountWord>(
    parts: &[Vec<u8>],
    group: &[usize],
    k: usize,
    exec: Exec,
    options: &CountOptions,
) -> Result<Counted<W>, AssemblyError> {
    let mut all: Vec<W> = Vec::new();
    for &i in group {
        partition_kmers::<W>(&parts[i], k, &mut all);
    }
    let (distinct_kmers, runs) = W::count_words(&mut all, exec)?;
    drop(all);
    let mut histogram = BTreeMap::new();
    let mut kmers = Vec::new();
    let mut counts = Vec::new();
    for (&x, &n) in distinct_kmers.iter().zip(&runs) {
        *histogram.entry(n).or_insert(0) += 1;
        if n >= options.min_count as u64 && n <= options.max_count as u64 {
            kmers.push(x);
            counts.push(n.min(u32::MAX as u64) as u32);
        }
    }
    Ok(Counted {
        distinct: distinct_kmers.len() as u64,
        kmers,
        counts,
        histogram,
    })
}

/// Groups partitions for counting: one each on the CPU (counted in parallel), as many as fit
/// 2^26 k-mers per group on the GPU (one device distinct-with-counts each).
fn group_partitions(parts: &[Vec<u8>], k: usize, on_gpu: bool) -> Vec<Vec<usize>> {
    if !on_gpu {
        return (0..parts.len()).map(|i| vec![i]).collect();
    }
    let mut groups = Vec::new();
    let mut cur = Vec::new();
    let mut size = 0usize;
    for (i, p) in parts.iter().enumerate() {
        // at most one k-mer per stored byte; about len - (k - 1) per super-k-mer
        let est = p.len() / (k / 2).max(1) * 2;
        if size + est > 1 << 26 && !cur.is_empty() {
            groups.push(std::mem::take(&mut cur));
            size = 0;
        }
        cur.push(i);
        size += est;
    }
    if !cur.is_empty() {
        groups.push(cur);
    }
    groups
}

/// The number of partitions: asked, else enough that one partition's k-mers per thread (8 or
/// 16 bytes each, twice for the sort) fit in `max_memory`, from the input's size on disk (a
/// gzip file counted four times), at least 2048 (small partitions sort in cache) and a power
/// of two.
fn partitions_for(sources: &[ReadSource<'_>], options: &CountOptions) -> usize {
    if options.partitions > 0 {
        return options.partitions;
    }
    let bytes: u64 = sources
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
        .sum();
    let memory = if options.max_memory > 0 {
        options.max_memory
    } else {
        available_memory() / 2
    };
    let per_thread = (memory / rayon::current_num_threads() as u64).max(1 << 20);
    let need = bytes.saturating_mul(32) / per_thread;
    (need as usize).next_power_of_two().clamp(2048, 1 << 16)
}

/// The memory available now (Linux `MemAvailable`), 4 GiB when unknown.
fn available_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(4 << 30, |kib| kib * 1024)
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
    fn sort_pairs(kmers: &mut [u64], counts: &mut [u32]) -> Result<(), AssemblyError> {
        gpu_primitives::radix_sort_pairs(kmers, counts, Exec::Cpu)?;
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
