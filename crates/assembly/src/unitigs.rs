//! Compaction in memory. The maximal unitigs of the node-centric, bidirected De Bruijn graph
//! of the solid canonical k-mers held in memory: the set BCALM2, Cuttlefish and GGCAT output.
//!
//! K-mers are linked as `oriented.rs` defines it; a unitig is a maximal chain of links, read
//! from either end; chains that close on themselves are circular unitigs.
//!
//! Every k-mer's links are found in parallel (one lookup per possible neighbour in the sorted
//! k-mer array through a prefix table); then each chain is walked from its ends in parallel,
//! and the k-mers left over (cycles) are walked last. [`compact_with`] can run the same on the
//! GPU (`cuda.rs`: list ranking by pointer jumping instead of walks), whose placement of every
//! k-mer is turned here into the identical [`Compacted`].

use gpu_runtime::{Backend, Exec, Target};
use rayon::prelude::*;

use crate::AssemblyError;
use crate::count_word::CountWord;
use crate::graph::{Link, UnitigView};
use crate::kmer::{Word, base_letter, canonical};
use crate::oriented::{
    KmerIndex, NONE, Oriented, flip, index_of, only_successors, oriented, successors, word_of,
};
use crate::placement::{CYCLE_KEY, Placement};

/// Under [`Exec::Auto`], compaction goes to the GPU from this many solid k-mers (when one is
/// present): below it the upload, the `O(log n)` launches of pointer jumping and the download
/// cost more than the CPU's walk. A starting point, not yet measured on hardware.
pub const COMPACT_GPU_THRESHOLD: u64 = 1 << 20;

/// One maximal unitig.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unitig {
    /// Its bases (`ACGT`), `k + kmers - 1` of them: each of its k-mers once. A circular
    /// unitig starts at its smallest k-mer; its last k-1 bases overlap its first (a link from
    /// its end to its own start).
    pub sequence: Vec<u8>,
    /// Number of k-mers.
    pub kmers: usize,
    /// Sum of the k-mers' counts (`KC`).
    pub total_count: u64,
    /// Whether the last k-mer links back to the first.
    pub circular: bool,
    /// First k-mer, oriented as read (private: for the links).
    pub(crate) first: Oriented,
    /// Last k-mer, oriented as read.
    pub(crate) last: Oriented,
}

impl Unitig {
    /// A unitig read back from a disk-built graph (no k-mer indices).
    pub(crate) fn stored(u: &UnitigView<'_>) -> Unitig {
        Unitig {
            sequence: u.sequence.to_vec(),
            kmers: u.kmers as usize,
            total_count: u.total_count,
            circular: u.circular,
            first: NONE,
            last: NONE,
        }
    }

    /// The mean count of its k-mers (`km`).
    pub fn mean_count(&self) -> f64 {
        self.total_count as f64 / self.kmers.max(1) as f64
    }
}

/// The compacted graph: unitigs and, for each k-mer, the unitig holding it.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    /// The k-mer length.
    pub k: usize,
    /// The unitigs: first those read from an end (in order of their first k-mer), then the
    /// circular ones.
    pub unitigs: Vec<Unitig>,
    /// `unitig_of[i]` is the unitig of k-mer `i`.
    pub(crate) unitig_of: Vec<u32>,
}

/// The maximal unitigs of sorted, distinct canonical k-mers (with their counts).
///
/// # Complexity
/// `O(n log(n / 2^b))` time for `n` k-mers (eight lookups each, in buckets of a `2^b`-entry
/// prefix table, `b <= 24`), parallel over k-mers and chains; `O(n)` memory.
///
/// # Panics
/// Never for valid input; `kmers` must be sorted, distinct and canonical (as
/// [`crate::count_kmers`] returns them), `counts` of the same length, and fewer than 2^31 - 1.
///
/// # Examples
/// ```
/// use assembly::{compact, pack, canonical};
/// // the 5-mers of one read of 9 bases: one unitig of 5 k-mers
/// let read = b"ACCGTATGG";
/// let mut kmers: Vec<u64> = (0..5).map(|i| canonical(pack(&read[i..], 5).unwrap(), 5)).collect();
/// kmers.sort();
/// let g = compact(&kmers, &[3; 5], 5);
/// assert_eq!(g.unitigs.len(), 1);
/// assert_eq!((g.unitigs[0].kmers, g.unitigs[0].total_count), (5, 15));
/// let s = String::from_utf8(g.unitigs[0].sequence.clone()).unwrap();
/// assert!(s == "ACCGTATGG" || s == "CCATACGGT"); // either strand
/// ```
pub fn compact<W: Word>(kmers: &[W], counts: &[u32], k: usize) -> Compacted {
    assert_eq!(kmers.len(), counts.len(), "one count per k-mer");
    assert!(kmers.len() < (1 << 31) - 1, "fewer than 2^31 - 1 k-mers");
    let index = KmerIndex::new(kmers, k);
    let n = kmers.len();
    // out[2i + o]: the only successor of oriented k-mer (i, o), or NONE
    let mut out: Vec<Oriented> = vec![NONE; 2 * n];
    out.par_chunks_mut(2)
        .enumerate()
        .for_each(|(i, pair)| pair.copy_from_slice(&only_successors(&index, i, k)));
    // link[2i + o]: the successor when the link goes both ways and joins two k-mers
    let link: Vec<Oriented> = (0..2 * n)
        .into_par_iter()
        .map(|o| {
            let t = out[o];
            if t == NONE || index_of(t) == o / 2 || out[flip(t) as usize] != flip(o as u32) {
                NONE
            } else {
                t
            }
        })
        .collect();
    drop(out);
    // Chains read from an end: (i, o) with no link into it, i.e. no link out of (i, !o).
    // Each chain has two ends; keep the walk whose start is the smaller of the two.
    let walks: Vec<Vec<Oriented>> = (0..2 * n as u32)
        .into_par_iter()
        .filter(|&o| link[flip(o) as usize] == NONE)
        .filter_map(|start| {
            let mut path = vec![start];
            let mut cur = start;
            while link[cur as usize] != NONE {
                cur = link[cur as usize];
                path.push(cur);
            }
            (start <= flip(cur)).then_some(path)
        })
        .collect();
    let mut unitig_of = vec![u32::MAX; n];
    let mut unitigs: Vec<Unitig> = Vec::with_capacity(walks.len());
    for path in &walks {
        let id = unitigs.len() as u32;
        for &o in path {
            unitig_of[index_of(o)] = id;
        }
        unitigs.push(spell(kmers, counts, path, k, false));
    }
    drop(walks);
    // What is left lies on cycles: every k-mer there has both links. Walk each from its
    // smallest k-mer, forward.
    for i in 0..n {
        if unitig_of[i] != u32::MAX {
            continue;
        }
        let start = oriented(i, false);
        let mut path = vec![start];
        let mut cur = link[start as usize];
        while cur != start && cur != NONE {
            path.push(cur);
            cur = link[cur as usize];
        }
        debug_assert!(cur == start, "a k-mer without an end must lie on a cycle");
        let id = unitigs.len() as u32;
        for &o in &path {
            unitig_of[index_of(o)] = id;
        }
        unitigs.push(spell(kmers, counts, &path, k, true));
    }
    Compacted {
        k,
        unitigs,
        unitig_of,
    }
}

/// [`compact`] on the CPU or the GPU: the same [`Compacted`], unitig for unitig (numbering,
/// orientation, start of cycles, circular flags), wherever it runs.
///
/// On the GPU (64-bit k-mers, k <= 31) every oriented k-mer's link is found by binary search
/// of its four possible successors, and the chains are ranked by pointer jumping (Wyllie list
/// ranking over the predecessor links, `O(log n)` rounds); cycles, whose jumps never reach a
/// start, are cut before their smallest k-mer and ranked again. The host then numbers the
/// unitigs (a sort of their keys), places each k-mer at its rank and spells the sequences.
///
/// # Complexity
/// CPU: as [`compact`]. GPU: `O(n log n)` work on the device (the binary searches and the
/// rounds), `O(n)` on the host (a sort of the unitigs' keys, the placement, the spelling);
/// 64 device bytes per k-mer at the peak.
///
/// # Errors
/// [`AssemblyError::InvalidParameter`] for `Exec::Cuda` with 128-bit k-mers (k > 31: the CPU
/// only); [`AssemblyError::Gpu`] when `Exec::Cuda` finds no GPU, when the arrays do not fit
/// on it ([`gpu_runtime::GpuError::OutOfMemory`]: compact on the CPU) or a launch fails.
///
/// # Panics
/// As [`compact`], for input that is not sorted, distinct canonical k-mers with one count
/// each.
///
/// # Examples
/// ```
/// use assembly::{compact, compact_with, canonical, pack, Exec};
/// let read = b"ACCGTATGGCTTAG";
/// let mut kmers: Vec<u64> = (0..10).map(|i| canonical(pack(&read[i..], 5).unwrap(), 5)).collect();
/// kmers.sort();
/// kmers.dedup();
/// let counts = vec![2; kmers.len()];
/// let g = compact_with(&kmers, &counts, 5, Exec::Auto)?; // small: the CPU
/// assert_eq!(g, compact(&kmers, &counts, 5));
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn compact_with<W: Word>(
    kmers: &[W],
    counts: &[u32],
    k: usize,
    exec: Exec,
) -> Result<Compacted, AssemblyError> {
    assert_eq!(kmers.len(), counts.len(), "one count per k-mer");
    assert!(kmers.len() < (1 << 31) - 1, "fewer than 2^31 - 1 k-mers");
    match (
        compaction_backend::<W>(kmers.len(), exec)?,
        W::as_u64s(kmers),
    ) {
        (Backend::Cuda, Some(words)) => {
            let placement = crate::cuda::place_kmers(gpu_runtime::gpu()?, words, k)?;
            Ok(from_placement(kmers, counts, k, &placement))
        }
        _ => Ok(compact(kmers, counts, k)),
    }
}

/// Where [`compact_with`] compacts `n` k-mers held in words `W` under `exec`: the GPU for
/// `Exec::Cuda` (64-bit k-mers), and for `Exec::Auto` from [`COMPACT_GPU_THRESHOLD`] k-mers
/// when a GPU is present; the CPU otherwise.
///
/// # Errors
/// [`AssemblyError::InvalidParameter`] for `Exec::Cuda` with 128-bit k-mers (k > 31 has no
/// GPU path); [`AssemblyError::Gpu`] for `Exec::Cuda` without a GPU.
///
/// # Examples
/// ```
/// use assembly::{compaction_backend, Backend, Exec};
/// assert_eq!(compaction_backend::<u64>(1000, Exec::Cpu)?, Backend::Cpu);
/// assert!(compaction_backend::<u128>(1000, Exec::Cuda).is_err());
/// # Ok::<(), assembly::AssemblyError>(())
/// ```
pub fn compaction_backend<W: Word>(n: usize, exec: Exec) -> Result<Backend, AssemblyError> {
    let gpu_words = W::as_u64s(&[]).is_some();
    if exec == Exec::Cuda && !gpu_words {
        return Err(AssemblyError::InvalidParameter(
            "k above 31 is compacted on the CPU only (128-bit k-mers have no GPU path): use \
             --backend cpu or auto"
                .into(),
        ));
    }
    Ok(match exec.resolve(n as u64, COMPACT_GPU_THRESHOLD)? {
        Target::Cuda(_) if gpu_words => Backend::Cuda,
        _ => Backend::Cpu,
    })
}

/// The [`Compacted`] of a placement: unitigs numbered in order of their keys, each k-mer at
/// its rank, spelled as [`compact`] spells them.
///
/// # Panics
/// When the placement is not one (a rank outside its unitig, or two k-mers at one place): a
/// bug in the GPU path, never the input's fault.
fn from_placement<W: Word>(kmers: &[W], counts: &[u32], k: usize, p: &Placement) -> Compacted {
    let n = kmers.len();
    assert!(
        p.node.len() == n && p.key.len() == n && p.rank.len() == n,
        "GPU compaction: a placement of {} k-mers for {n}",
        p.node.len()
    );
    // the first k-mer of each unitig (rank 0), in key order, numbers the unitigs
    let mut heads: Vec<(u64, u32)> = (0..n)
        .filter(|&i| p.rank[i] == 0)
        .map(|i| (p.key[i], i as u32))
        .collect();
    heads.par_sort_unstable();
    // the unitig of each head k-mer; a k-mer finds its head from its key
    let mut id_of_head = vec![u32::MAX; n];
    for (u, &(_, i)) in heads.iter().enumerate() {
        id_of_head[i as usize] = u as u32;
    }
    let head_of = |key: u64| -> usize {
        if key & CYCLE_KEY != 0 {
            (key & (CYCLE_KEY - 1)) as usize
        } else {
            index_of(key as Oriented)
        }
    };
    let unitig_of: Vec<u32> = p
        .key
        .par_iter()
        .map(|&key| id_of_head[head_of(key)])
        .collect();
    let mut starts = vec![0usize; heads.len() + 1];
    for &u in &unitig_of {
        assert!(
            u != u32::MAX,
            "GPU compaction: a k-mer whose unitig has no head"
        );
        starts[u as usize + 1] += 1;
    }
    for u in 0..heads.len() {
        starts[u + 1] += starts[u];
    }
    let mut paths: Vec<Oriented> = vec![NONE; n];
    for (i, &u) in unitig_of.iter().enumerate() {
        let u = u as usize;
        let at = starts[u] + p.rank[i] as usize;
        assert!(
            at < starts[u + 1] && paths[at] == NONE,
            "GPU compaction: k-mer {i} placed outside its unitig or on another"
        );
        paths[at] = p.node[i];
    }
    let unitigs: Vec<Unitig> = (0..heads.len())
        .into_par_iter()
        .map(|u| {
            let path = &paths[starts[u]..starts[u + 1]];
            spell(kmers, counts, path, k, heads[u].0 & CYCLE_KEY != 0)
        })
        .collect();
    Compacted {
        k,
        unitigs,
        unitig_of,
    }
}

/// The unitig of a chain of oriented k-mers.
fn spell<W: Word>(
    kmers: &[W],
    counts: &[u32],
    path: &[Oriented],
    k: usize,
    circular: bool,
) -> Unitig {
    let first = word_of(kmers, path[0], k);
    let mut sequence: Vec<u8> = (0..k).map(|i| base_letter(first.code_at(i, k))).collect();
    let mut total = 0u64;
    for (j, &o) in path.iter().enumerate() {
        total += counts[index_of(o)] as u64;
        if j > 0 {
            sequence.push(base_letter(word_of(kmers, o, k).code_at(k - 1, k)));
        }
    }
    Unitig {
        sequence,
        kmers: path.len(),
        total_count: total,
        circular,
        first: path[0],
        last: *path.last().expect("a chain has a k-mer"),
    }
}

impl Compacted {
    /// A graph of unitigs read back from a disk-built graph, without the per-k-mer index.
    pub(crate) fn from_unitigs(k: usize, unitigs: Vec<Unitig>) -> Compacted {
        Compacted {
            k,
            unitigs,
            unitig_of: Vec::new(),
        }
    }

    fn links_with<W: Word>(&self, index: &KmerIndex<'_, W>, u: usize) -> Vec<Link> {
        let g = &self.unitigs[u];
        let mut links = Vec::new();
        for (rev, end) in [(false, g.last), (true, flip(g.first))] {
            for t in successors(index, end, self.k) {
                let v = self.unitig_of[index_of(t)];
                let h = &self.unitigs[v as usize];
                let to_rev = if h.first == t {
                    false
                } else {
                    debug_assert_eq!(h.last, flip(t), "a link enters a unitig at an end");
                    true
                };
                links.push(Link {
                    from: u as u32,
                    from_rev: rev,
                    to: v,
                    to_rev,
                });
            }
        }
        links
    }

    /// Every unitig's links, computed in parallel: for unitig `u`, those out of its `+` end
    /// first, then those out of its `-` end, each in order of the next base.
    ///
    /// # Panics
    /// When `kmers` are not the k-mers [`compact`] built this graph from (a graph read back
    /// from [`crate::Assembly::to_graph`] comes with its links instead).
    pub fn all_links<W: Word>(&self, kmers: &[W]) -> Vec<Vec<Link>> {
        assert_eq!(
            self.unitig_of.len(),
            kmers.len(),
            "all_links needs the k-mers the graph was compacted from"
        );
        let index = KmerIndex::new(kmers, self.k);
        (0..self.unitigs.len())
            .into_par_iter()
            .map(|u| self.links_with(&index, u))
            .collect()
    }
}

/// Checks unitigs independently of how they were built: every unitig's text is bases, `k +
/// kmers - 1` long; the canonical k-mers of all the texts, sorted, are exactly the solid
/// k-mers, each once; each is held by the unitig whose text spells it; each unitig's counts
/// add up to its `KC`. Returns the first problem found.
///
/// # Complexity
/// `O(total length)` to spell the k-mers (parallel over unitigs) plus one radix sort of them:
/// no random lookups.
///
/// # Errors
/// A message naming the unitig (or k-mer) and what is wrong.
pub fn verify_unitigs<W: CountWord>(
    graph: &Compacted,
    kmers: &[W],
    counts: &[u32],
) -> Result<(), String> {
    let k = graph.k;
    let mask = W::mask(k);
    let spelled: Vec<Result<Vec<W>, String>> = graph
        .unitigs
        .par_iter()
        .enumerate()
        .map(|(u, g)| {
            if g.sequence.len() != k + g.kmers - 1 {
                return Err(format!(
                    "unitig {u}: length {} for {} k-mers",
                    g.sequence.len(),
                    g.kmers
                ));
            }
            let mut x = W::default();
            let mut out = Vec::with_capacity(g.kmers);
            for (i, &b) in g.sequence.iter().enumerate() {
                let code = crate::kmer::base_code(b)
                    .ok_or_else(|| format!("unitig {u}: `{}` is not a base", b as char))?;
                x = x.push_right(code, mask);
                if i + 1 >= k {
                    out.push(canonical(x, k));
                }
            }
            Ok(out)
        })
        .collect();
    let mut all: Vec<W> = Vec::with_capacity(kmers.len());
    let mut owner: Vec<u32> = Vec::with_capacity(kmers.len());
    for (u, r) in spelled.into_iter().enumerate() {
        let v = r?;
        owner.extend(std::iter::repeat_n(u as u32, v.len()));
        all.extend_from_slice(&v);
    }
    if all.len() != kmers.len() {
        return Err(format!(
            "the unitigs spell {} k-mers, not {}",
            all.len(),
            kmers.len()
        ));
    }
    W::sort_pairs(&mut all, &mut owner).map_err(|e| e.to_string())?;
    let mut totals = vec![0u64; graph.unitigs.len()];
    for i in 0..all.len() {
        if all[i] != kmers[i] {
            return Err(format!(
                "k-mer {i}: the unitigs spell a k-mer twice or one that is not solid"
            ));
        }
        if graph.unitig_of[i] != owner[i] {
            return Err(format!(
                "k-mer {i} is spelled by unitig {} but held by unitig {}",
                owner[i], graph.unitig_of[i]
            ));
        }
        totals[owner[i] as usize] += counts[i] as u64;
    }
    for (u, g) in graph.unitigs.iter().enumerate() {
        if totals[u] != g.total_count {
            return Err(format!(
                "unitig {u}: counts add to {}, not {}",
                totals[u], g.total_count
            ));
        }
    }
    Ok(())
}
