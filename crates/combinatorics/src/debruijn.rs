//! De Bruijn sequences `B(k, n)`: cyclic sequences over `k` symbols in which every word of
//! length `n` occurs exactly once as a (cyclic) window.
//!
//! Two constructions, both checked by [`verify_de_bruijn`]:
//! - [`de_bruijn_fkm`]: Fredricksen–Kessler–Maiorana, the concatenation in lexicographic order
//!   of the Lyndon words whose length divides `n`; constant amortised time per symbol; the
//!   lexicographically smallest De Bruijn sequence.
//! - [`de_bruijn_euler`] / [`de_bruijn_euler_with`]: an Euler circuit of the De Bruijn graph
//!   (vertices: the `k^(n-1)` words of length `n - 1`; one edge per word of length `n`), built
//!   by `graph-core` ([`graph_core::de_bruijn_graph`]) and walked by
//!   [`graph_core::euler_circuit`] on the CPU or the GPU.
//!
//! Symbols are bytes `0..k` (`k <= 256`); [`de_bruijn_string`] maps them to any alphabet.

use gpu_runtime::{Backend, Exec};
use graph_core::{EulerError, GraphError, MAX_EULER_EDGES};
use rayon::prelude::*;

use crate::DeBruijnError;

/// Largest `k^n` the FKM construction accepts: `2^32` symbols (4 GiB as bytes). The Euler
/// construction stops at `graph-core`'s edge limit [`graph_core::MAX_EULER_EDGES`]
/// (`2^32 - 2`).
pub const MAX_DE_BRUIJN_LEN: u64 = 1 << 32;

/// Bytes of memory per symbol the Euler construction needs at its peak, about: the graph's
/// targets (4), the circuit's work arrays (Hierholzer: records, stack, edge and vertex
/// sequences, about 20; the parallel algorithm about 33 at the end of its second walk: 16-byte
/// edge records and two arenas of (edge, end vertex) pairs) and the sequence itself (1).
const EULER_BYTES_PER_SYMBOL: u64 = 40;

/// Bytes per vertex of the De Bruijn graph (CSR offsets and the circuit's per-vertex records).
const EULER_BYTES_PER_VERTEX: u64 = 20;

/// Which construction to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Construction {
    /// Lyndon words (FKM): the lexicographically smallest sequence.
    #[default]
    Fkm,
    /// Euler circuit of the De Bruijn graph (`graph-core`).
    Euler,
}

/// `k^n` if it is a valid size (`k` in `1..=256`, `n >= 1`, `k^n <= limit`).
fn sequence_len(k: usize, n: usize, limit: u64) -> Result<u64, DeBruijnError> {
    if k == 0 {
        return Err(DeBruijnError::EmptyAlphabet);
    }
    if k > 256 {
        return Err(DeBruijnError::TooManySymbols { k });
    }
    if n == 0 {
        return Err(DeBruijnError::ZeroLength);
    }
    let too_long = DeBruijnError::TooLong { k, n, limit };
    let len = (0..n).try_fold(1u64, |acc, _| {
        acc.checked_mul(k as u64).filter(|&l| l <= limit)
    });
    len.ok_or(too_long)
}

fn alloc(len: u64) -> Result<Vec<u8>, DeBruijnError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len as usize)
        .map_err(|_| DeBruijnError::OutOfMemory { bytes: len })?;
    Ok(v)
}

/// The lexicographically smallest De Bruijn sequence `B(k, n)` (symbols `0..k`), by the FKM
/// algorithm: generate the Lyndon words of length at most `n` in lexicographic order
/// (Duval's successor rule) and concatenate those whose length divides `n`.
///
/// # Complexity
/// `O(k^n)` time (constant amortised per symbol), `O(n)` extra memory.
///
/// # Errors
/// [`DeBruijnError::EmptyAlphabet`] (`k = 0`), [`DeBruijnError::TooManySymbols`] (`k > 256`),
/// [`DeBruijnError::ZeroLength`] (`n = 0`), [`DeBruijnError::TooLong`] (`k^n > 2^32`),
/// [`DeBruijnError::OutOfMemory`].
///
/// # Examples
/// ```
/// use combinatorics::de_bruijn_fkm;
/// assert_eq!(de_bruijn_fkm(2, 3).unwrap(), [0, 0, 0, 1, 0, 1, 1, 1]);
/// ```
pub fn de_bruijn_fkm(k: usize, n: usize) -> Result<Vec<u8>, DeBruijnError> {
    let len = sequence_len(k, n, MAX_DE_BRUIJN_LEN)?;
    let mut out = alloc(len)?;
    if k == 1 {
        out.push(0);
        return Ok(out);
    }
    let top = (k - 1) as u8;
    // w[..m] is the current Lyndon word; w has room for n symbols.
    let mut w = vec![0u8; n];
    let mut m = 1usize; // length of the current word: starts at "0"
    loop {
        if n.is_multiple_of(m) {
            out.extend_from_slice(&w[..m]);
        }
        // Extend periodically to length n, then strip trailing maximal symbols and increment.
        for i in m..n {
            w[i] = w[i - m];
        }
        let mut len = n;
        while len > 0 && w[len - 1] == top {
            len -= 1;
        }
        if len == 0 {
            break;
        }
        w[len - 1] += 1;
        m = len;
    }
    debug_assert_eq!(out.len() as u64, len);
    Ok(out)
}

/// A De Bruijn sequence `B(k, n)` (symbols `0..k`) from an Euler circuit of the De Bruijn
/// graph, with `Exec::Auto` (see [`de_bruijn_euler_with`]).
///
/// # Complexity
/// `O(k^n)` time and memory (about 40 bytes per symbol at the peak).
///
/// # Errors
/// As [`de_bruijn_euler_with`].
///
/// # Examples
/// ```
/// use combinatorics::{de_bruijn_euler, verify_de_bruijn};
/// let s = de_bruijn_euler(3, 4).unwrap();
/// assert_eq!(s.len(), 81);
/// assert!(verify_de_bruijn(&s, 3, 4).is_ok());
/// ```
pub fn de_bruijn_euler(k: usize, n: usize) -> Result<Vec<u8>, DeBruijnError> {
    de_bruijn_euler_with(k, n, Exec::Auto).map(|(seq, _)| seq)
}

/// A De Bruijn sequence `B(k, n)` (symbols `0..k`) from an Euler circuit of the De Bruijn
/// graph: `graph-core` builds the graph ([`graph_core::de_bruijn_graph`]: edge id = the
/// `n`-word's number in base `k`) and its Euler circuit ([`graph_core::euler_circuit`] where
/// `exec` says: Hierholzer on the CPU for small graphs, the parallel algorithm on rayon or the
/// GPU for large ones), and the circuit is spelled: the word of its start vertex `0^(n-1)`,
/// then the last symbol of each edge, without the final `n - 1` symbols (they repeat the
/// start). Returns the sequence and the backend that ran the circuit.
///
/// Which De Bruijn sequence comes out depends on the circuit. With Hierholzer's single walk
/// (below [`graph_core::EULER_INTERLEAVE_THRESHOLD`] = 2^16 edges), which takes each vertex's
/// out-edges in symbol order, it is exactly the FKM sequence, the lexicographically smallest
/// one (the greedy smallest-symbol-first circuit from `0^(n-1)` spells it; the tests check
/// this on every size they cover). Larger graphs give other valid De Bruijn sequences that
/// start with `0^n` but are not the smallest: Hierholzer's interleaved walks (the CPU default
/// below [`graph_core::EULER_PARALLEL_MIN_THREADS`] rayon threads) give the same one on every
/// run; the parallel algorithm (large graphs on more threads) and the GPU give sequences that
/// change with the number of threads and from run to run (graph-core's parallel circuit is not
/// deterministic).
///
/// # Complexity
/// `O(k^n)` time; about 40 bytes of memory per symbol at the peak (the graph and the
/// circuit's work arrays), against 1 byte for [`de_bruijn_fkm`].
///
/// # Errors
/// [`DeBruijnError::EmptyAlphabet`], [`DeBruijnError::TooManySymbols`],
/// [`DeBruijnError::ZeroLength`]; [`DeBruijnError::TooLong`] when `k^n` exceeds
/// [`graph_core::MAX_EULER_EDGES`]; [`DeBruijnError::NotEnoughMemory`] when the construction
/// would need more memory than is available now; [`DeBruijnError::OutOfMemory`];
/// [`DeBruijnError::Gpu`] when the GPU is asked for and missing or fails;
/// [`DeBruijnError::Graph`] if `graph-core` fails in any other way.
///
/// # Examples
/// ```
/// use combinatorics::{de_bruijn_euler_with, de_bruijn_fkm, verify_de_bruijn};
/// use gpu_runtime::{Backend, Exec};
/// let (s, backend) = de_bruijn_euler_with(2, 4, Exec::Cpu).unwrap();
/// assert_eq!(backend, Backend::Cpu);
/// assert_eq!(verify_de_bruijn(&s, 2, 4), Ok(true));
/// assert_eq!(s, de_bruijn_fkm(2, 4).unwrap()); // Hierholzer spells the FKM sequence
/// ```
pub fn de_bruijn_euler_with(
    k: usize,
    n: usize,
    exec: Exec,
) -> Result<(Vec<u8>, Backend), DeBruijnError> {
    let len = sequence_len(k, n, MAX_EULER_EDGES)?;
    check_euler_memory(k, n, len, gpu_runtime::host_available_memory())?;
    let mut out = alloc(len)?;
    // k <= 256 and n <= 32 here (k^n <= 2^32 - 2 with k >= 2, or k = 1).
    let g = graph_core::de_bruijn_graph(k as u32, n as u32).map_err(|e| graph_error(k, n, e))?;
    let (trail, backend) = graph_core::euler_circuit(&g, exec).map_err(|e| euler_error(k, n, e))?;
    drop(g);
    let edges = &trail.edges;
    debug_assert_eq!(edges.len() as u64, len);
    debug_assert_eq!(trail.vertices.first(), Some(&0));
    // Edge e is the word numbered e, so its last symbol is e mod k. The circuit closes at its
    // start vertex, so the last n - 1 edges spell that vertex's word: spelling the circuit is
    // rotating the edges' last symbols right by n - 1.
    let split = edges.len() - (n - 1) % edges.len();
    let kk = k as u32;
    edges[split..]
        .par_iter()
        .chain(edges[..split].par_iter())
        .with_min_len(1 << 16)
        .map(|&e| (e % kk) as u8)
        .collect_into_vec(&mut out);
    Ok((out, backend))
}

/// Refuses, with a typed error, an Euler construction whose graph and circuit would not fit in
/// the memory available now (instead of an allocation failure aborting the process).
fn check_euler_memory(
    k: usize,
    n: usize,
    len: u64,
    available: Option<u64>,
) -> Result<(), DeBruijnError> {
    let needed = len
        .saturating_mul(EULER_BYTES_PER_SYMBOL)
        .saturating_add((len / k as u64).saturating_mul(EULER_BYTES_PER_VERTEX));
    match available {
        Some(available) if needed > available => Err(DeBruijnError::NotEnoughMemory {
            k,
            n,
            needed,
            available,
        }),
        _ => Ok(()),
    }
}

fn graph_error(k: usize, n: usize, e: GraphError) -> DeBruijnError {
    match e {
        GraphError::TooLarge { .. } => DeBruijnError::TooLong {
            k,
            n,
            limit: MAX_EULER_EDGES,
        },
        GraphError::OutOfMemory { needed, .. } => DeBruijnError::OutOfMemory { bytes: needed },
        GraphError::Gpu(g) => DeBruijnError::Gpu(g),
        other => DeBruijnError::Graph(format!("building the De Bruijn graph: {other}")),
    }
}

fn euler_error(k: usize, n: usize, e: EulerError) -> DeBruijnError {
    match e {
        EulerError::TooManyEdges { .. } => DeBruijnError::TooLong {
            k,
            n,
            limit: MAX_EULER_EDGES,
        },
        EulerError::Gpu(g) => DeBruijnError::Gpu(g),
        other => DeBruijnError::Graph(format!("the Euler circuit of the De Bruijn graph: {other}")),
    }
}

/// [`de_bruijn_fkm`] or [`de_bruijn_euler`].
///
/// # Complexity
/// `O(k^n)`.
///
/// # Errors
/// As [`de_bruijn_fkm`].
///
/// # Examples
/// ```
/// use combinatorics::{de_bruijn, Construction};
/// assert_eq!(de_bruijn(10, 4, Construction::Fkm).unwrap().len(), 10_000);
/// ```
pub fn de_bruijn(k: usize, n: usize, construction: Construction) -> Result<Vec<u8>, DeBruijnError> {
    match construction {
        Construction::Fkm => de_bruijn_fkm(k, n),
        Construction::Euler => de_bruijn_euler(k, n),
    }
}

/// Checks that `seq` is a De Bruijn sequence `B(k, n)`: length `k^n`, symbols below `k`, and
/// every word of length `n` occurring exactly once as a cyclic window. Independent of both
/// constructions (a bitmap of the `k^n` words, filled by a rolling base-`k` value).
///
/// # Complexity
/// `O(k^n)` time, `k^n` bits of memory.
///
/// Returns `Ok(true)` for a De Bruijn sequence and `Ok(false)` for a well-formed sequence
/// that is not one (wrong length, a repeated or missing word).
///
/// # Errors
/// The size errors of [`de_bruijn_fkm`] for bad `k` or `n`;
/// [`DeBruijnError::SymbolOutOfRange`] for a symbol `>= k`.
///
/// # Examples
/// ```
/// use combinatorics::verify_de_bruijn;
/// assert_eq!(verify_de_bruijn(&[0, 0, 1, 1], 2, 2), Ok(true));
/// assert_eq!(verify_de_bruijn(&[0, 1, 0, 1], 2, 2), Ok(false));
/// assert_eq!(verify_de_bruijn(&[0, 1, 1], 2, 2), Ok(false));
/// ```
pub fn verify_de_bruijn(seq: &[u8], k: usize, n: usize) -> Result<bool, DeBruijnError> {
    let len = sequence_len(k, n, MAX_DE_BRUIJN_LEN)?;
    if seq.len() as u64 != len {
        return Ok(false);
    }
    check_symbols(seq, k)?;
    let mut seen = vec![0u64; (len as usize).div_ceil(64)];
    let kk = k as u64;
    let high = len / kk; // k^(n-1)
    // First window: seq[0..n) cyclically.
    let mut v = 0u64;
    for i in 0..n {
        v = v * kk + seq[i % seq.len()] as u64;
    }
    for i in 0..seq.len() {
        let word = &mut seen[(v / 64) as usize];
        let bit = 1u64 << (v % 64);
        if *word & bit != 0 {
            return Ok(false);
        }
        *word |= bit;
        let incoming = seq[(i + n) % seq.len()] as u64;
        v = (v % high) * kk + incoming;
    }
    Ok(true)
}

fn check_symbols(seq: &[u8], k: usize) -> Result<(), DeBruijnError> {
    match seq.iter().position(|&s| s as usize >= k) {
        Some(position) => Err(DeBruijnError::SymbolOutOfRange {
            symbol: seq[position],
            position,
            k,
        }),
        None => Ok(()),
    }
}

/// The linear form of a cyclic De Bruijn sequence: the sequence followed by its first `n - 1`
/// symbols, length `k^n + n - 1`, in which every word of length `n` occurs exactly once as a
/// plain window — the shortest key sequence that tries every PIN (10,003 presses for all
/// 4-digit PINs instead of 40,000).
///
/// # Complexity
/// `O(k^n)`.
///
/// # Examples
/// ```
/// use combinatorics::{de_bruijn_fkm, de_bruijn_linear};
/// let pins = de_bruijn_linear(&de_bruijn_fkm(10, 4).unwrap(), 4);
/// assert_eq!(pins.len(), 10_003);
/// ```
pub fn de_bruijn_linear(cyclic: &[u8], n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(cyclic.len() + n.saturating_sub(1));
    out.extend_from_slice(cyclic);
    if !cyclic.is_empty() {
        for i in 0..n.saturating_sub(1) {
            out.push(cyclic[i % cyclic.len()]);
        }
    }
    out
}

/// The position at which `word` starts in the cyclic sequence `seq` (the window may wrap
/// around the end), or `None` when it does not occur. In the linear form the same position
/// is a plain window.
///
/// # Complexity
/// `O(len(seq) + n)`: one pass of a rolling base-`k` value.
///
/// # Errors
/// [`DeBruijnError::WordLength`] when `word` or `seq` is empty;
/// [`DeBruijnError::SymbolOutOfRange`] for a symbol `>= k` in `word` or `seq`;
/// [`DeBruijnError::EmptyAlphabet`]/[`DeBruijnError::TooManySymbols`] for a bad `k`.
///
/// # Examples
/// ```
/// use combinatorics::{de_bruijn_fkm, find_in_de_bruijn};
/// let s = de_bruijn_fkm(2, 3).unwrap(); // 00010111
/// assert_eq!(find_in_de_bruijn(&s, 2, &[1, 0, 1]).unwrap(), Some(3));
/// assert_eq!(find_in_de_bruijn(&s, 2, &[1, 0, 0]).unwrap(), Some(7)); // wraps
/// ```
pub fn find_in_de_bruijn(
    seq: &[u8],
    k: usize,
    word: &[u8],
) -> Result<Option<usize>, DeBruijnError> {
    if k == 0 {
        return Err(DeBruijnError::EmptyAlphabet);
    }
    if k > 256 {
        return Err(DeBruijnError::TooManySymbols { k });
    }
    let n = word.len();
    if n == 0 || seq.is_empty() {
        return Err(DeBruijnError::WordLength {
            len: n,
            n: seq.len(),
        });
    }
    check_symbols(word, k)?;
    check_symbols(seq, k)?;
    // Compare windows directly when k^n overflows a u64; otherwise a rolling value.
    let kk = k as u128;
    let Some(high) = (1..n).try_fold(1u128, |a, _| {
        a.checked_mul(kk).filter(|&x| x <= u64::MAX as u128)
    }) else {
        let len = seq.len();
        return Ok((0..len).find(|&i| (0..n).all(|j| seq[(i + j) % len] == word[j])));
    };
    let target = word.iter().fold(0u128, |a, &s| a * kk + s as u128);
    let len = seq.len();
    let mut v = (0..n).fold(0u128, |a, i| a * kk + seq[i % len] as u128);
    for i in 0..len {
        if v == target {
            return Ok(Some(i));
        }
        v = (v % high) * kk + seq[(i + n) % len] as u128;
    }
    Ok(None)
}

/// A De Bruijn sequence over the characters of `alphabet` (distinct, any Unicode): symbol `i`
/// is the `i`-th character. With `linear`, the linear form (`k^n + n - 1` characters).
///
/// # Complexity
/// `O(k^n)`.
///
/// # Errors
/// [`DeBruijnError::DuplicateSymbol`] when a character repeats; otherwise as
/// [`de_bruijn_fkm`].
///
/// # Examples
/// ```
/// use combinatorics::{de_bruijn_string, Construction};
/// assert_eq!(de_bruijn_string("ab", 3, Construction::Fkm, false).unwrap(), "aaababbb");
/// assert_eq!(de_bruijn_string("ACGT", 1, Construction::Fkm, true).unwrap(), "ACGT");
/// ```
pub fn de_bruijn_string(
    alphabet: &str,
    n: usize,
    construction: Construction,
    linear: bool,
) -> Result<String, DeBruijnError> {
    let chars = alphabet_chars(alphabet)?;
    let seq = de_bruijn(chars.len(), n, construction)?;
    let seq = if linear {
        de_bruijn_linear(&seq, n)
    } else {
        seq
    };
    Ok(seq.iter().map(|&s| chars[s as usize]).collect())
}

/// The distinct characters of `alphabet`, in order.
///
/// # Errors
/// [`DeBruijnError::EmptyAlphabet`], [`DeBruijnError::TooManySymbols`],
/// [`DeBruijnError::DuplicateSymbol`].
///
/// # Examples
/// ```
/// assert_eq!(combinatorics::alphabet_chars("xyz").unwrap(), vec!['x', 'y', 'z']);
/// assert!(combinatorics::alphabet_chars("xyx").is_err());
/// ```
pub fn alphabet_chars(alphabet: &str) -> Result<Vec<char>, DeBruijnError> {
    let chars: Vec<char> = alphabet.chars().collect();
    if chars.is_empty() {
        return Err(DeBruijnError::EmptyAlphabet);
    }
    if chars.len() > 256 {
        return Err(DeBruijnError::TooManySymbols { k: chars.len() });
    }
    let mut sorted = chars.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(DeBruijnError::DuplicateSymbol(w[0]));
    }
    Ok(chars)
}

/// Maps a word over `alphabet` to symbol indices (for [`find_in_de_bruijn`]).
///
/// # Errors
/// [`DeBruijnError::UnknownSymbol`] for a character outside the alphabet, and the errors of
/// [`alphabet_chars`].
///
/// # Examples
/// ```
/// assert_eq!(combinatorics::word_to_symbols("ACGT", "GAT").unwrap(), vec![2, 0, 3]);
/// ```
pub fn word_to_symbols(alphabet: &str, word: &str) -> Result<Vec<u8>, DeBruijnError> {
    let chars = alphabet_chars(alphabet)?;
    word.chars()
        .map(|c| {
            chars
                .iter()
                .position(|&a| a == c)
                .map(|i| i as u8)
                .ok_or(DeBruijnError::UnknownSymbol(c))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_runtime::testing::gpu_for_test;
    use proptest::prelude::*;

    /// Independent oracle for small cases: count every word by brute force.
    fn brute_force_check(seq: &[u8], k: usize, n: usize) -> bool {
        let len = seq.len();
        if len as u64 != (k as u64).pow(n as u32) {
            return false;
        }
        let mut counts = std::collections::HashMap::new();
        for i in 0..len {
            let w: Vec<u8> = (0..n).map(|j| seq[(i + j) % len]).collect();
            *counts.entry(w).or_insert(0) += 1;
        }
        counts.len() == len && counts.values().all(|&c| c == 1)
    }

    #[test]
    fn both_constructions_verify() {
        let cases = (1..=16)
            .map(|n| (2usize, n))
            .chain((1..=8).map(|n| (4, n)))
            .chain((1..=5).map(|n| (10, n)))
            .chain([(1, 1), (1, 5), (3, 7), (256, 1), (256, 2), (255, 2), (7, 4)]);
        for (k, n) in cases {
            for c in [Construction::Fkm, Construction::Euler] {
                let s = de_bruijn(k, n, c).unwrap();
                assert_eq!(verify_de_bruijn(&s, k, n), Ok(true), "B({k},{n}) {c:?}");
                if s.len() <= 5000 {
                    assert!(brute_force_check(&s, k, n), "B({k},{n}) {c:?}");
                }
            }
            // Hierholzer's single walk (below the interleaving threshold) spells the FKM
            // sequence.
            let (e, backend) = de_bruijn_euler_with(k, n, Exec::Cpu).unwrap();
            assert_eq!(backend, Backend::Cpu);
            if (e.len() as u64) < graph_core::EULER_INTERLEAVE_THRESHOLD {
                assert_eq!(e, de_bruijn_fkm(k, n).unwrap(), "B({k},{n})");
            }
        }
    }

    /// From `EULER_PARALLEL_THRESHOLD` edges and with `EULER_PARALLEL_MIN_THREADS` rayon
    /// threads, graph-core runs its parallel circuit algorithm: another valid sequence,
    /// starting with `0^n`.
    #[test]
    fn euler_on_the_parallel_path_verifies() {
        let (k, n) = (2usize, 21usize);
        assert!(1u64 << n >= graph_core::EULER_PARALLEL_THRESHOLD);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(graph_core::EULER_PARALLEL_MIN_THREADS)
            .build()
            .unwrap();
        let (s, backend) = pool
            .install(|| de_bruijn_euler_with(k, n, Exec::Cpu))
            .unwrap();
        assert_eq!(backend, Backend::Cpu);
        assert_eq!(verify_de_bruijn(&s, k, n), Ok(true));
        assert!(s[..n].iter().all(|&x| x == 0));
    }

    #[test]
    fn euler_on_the_gpu_verifies() {
        if gpu_for_test("euler_on_the_gpu_verifies").is_none() {
            return;
        }
        for (k, n) in [(2usize, 1usize), (2, 5), (3, 7), (10, 5), (2, 22), (4, 11)] {
            let (s, backend) = de_bruijn_euler_with(k, n, Exec::Cuda).unwrap();
            assert_eq!(backend, Backend::Cuda);
            assert_eq!(verify_de_bruijn(&s, k, n), Ok(true), "B({k},{n})");
        }
    }

    #[test]
    fn gpu_euler_out_of_memory_is_a_typed_error() {
        gpu_runtime::testing::runs_out_of_memory(
            1024,
            || [de_bruijn_euler_with(2, 10, Exec::Cuda)],
            |e| {
                matches!(
                    e,
                    DeBruijnError::Gpu(gpu_runtime::GpuError::OutOfMemory { .. })
                )
            },
        );
    }

    #[test]
    fn euler_memory_check() {
        // B(2, 20): about 40 bytes per symbol plus 20 per vertex.
        let len = 1u64 << 20;
        let needed = 40 * len + 20 * (len / 2);
        assert_eq!(check_euler_memory(2, 20, len, Some(needed)), Ok(()));
        assert_eq!(check_euler_memory(2, 20, len, None), Ok(()));
        assert_eq!(
            check_euler_memory(2, 20, len, Some(needed - 1)),
            Err(DeBruijnError::NotEnoughMemory {
                k: 2,
                n: 20,
                needed,
                available: needed - 1
            })
        );
        assert!(
            gpu_runtime::host_available_memory().is_some_and(|b| b > 0)
                || !cfg!(target_os = "linux")
        );
    }

    #[test]
    fn fkm_is_lexicographically_smallest_known_values() {
        assert_eq!(
            de_bruijn_fkm(2, 4).unwrap(),
            [0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1]
        );
        assert_eq!(de_bruijn_fkm(3, 2).unwrap(), [0, 0, 1, 0, 2, 1, 1, 2, 2]);
        // Smallest among all B(2,4): enumerate every binary string of length 16 that verifies.
        let mut smallest: Option<Vec<u8>> = None;
        for x in 0u32..(1 << 16) {
            let s: Vec<u8> = (0..16).rev().map(|b| ((x >> b) & 1) as u8).collect();
            if verify_de_bruijn(&s, 2, 4) == Ok(true) {
                smallest = Some(s);
                break;
            }
        }
        assert_eq!(smallest.unwrap(), de_bruijn_fkm(2, 4).unwrap());
    }

    #[test]
    fn verifier_rejects() {
        let mut s = de_bruijn_fkm(3, 3).unwrap();
        s.swap(3, 4);
        assert_eq!(verify_de_bruijn(&s, 3, 3), Ok(false));
        assert!(brute_force_check(&de_bruijn_fkm(3, 3).unwrap(), 3, 3));
        assert!(!brute_force_check(&s, 3, 3));
        let mut s = de_bruijn_fkm(3, 3).unwrap();
        s[0] = 3;
        assert!(matches!(
            verify_de_bruijn(&s, 3, 3),
            Err(DeBruijnError::SymbolOutOfRange { .. })
        ));
        assert_eq!(verify_de_bruijn(&[0, 0, 1], 2, 2), Ok(false));
        assert_eq!(verify_de_bruijn(&[], 2, 2), Ok(false));
    }

    #[test]
    fn linear_form_and_find() {
        let s = de_bruijn_euler(10, 4).unwrap();
        let lin = de_bruijn_linear(&s, 4);
        assert_eq!(lin.len(), 10_003);
        let mut seen = vec![false; 10_000];
        for w in lin.windows(4) {
            let v = w.iter().fold(0usize, |a, &d| a * 10 + d as usize);
            assert!(!seen[v]);
            seen[v] = true;
        }
        assert!(seen.iter().all(|&b| b));
        for pin in [[0u8, 0, 0, 0], [1, 2, 3, 4], [9, 9, 9, 9], [9, 0, 0, 1]] {
            let at = find_in_de_bruijn(&s, 10, &pin).unwrap().unwrap();
            assert_eq!(&lin[at..at + 4], &pin);
        }
        // Not a De Bruijn sequence: absent words.
        assert_eq!(find_in_de_bruijn(&[0, 0, 0], 2, &[1, 1]).unwrap(), None);
        assert!(find_in_de_bruijn(&s, 10, &[]).is_err());
        assert!(find_in_de_bruijn(&s, 10, &[10]).is_err());
        // Long words (k^n beyond u64) fall back to direct comparison.
        let long: Vec<u8> = (0..100).map(|i| (i % 7) as u8).collect();
        assert_eq!(
            find_in_de_bruijn(&long, 200, &long[40..70]).unwrap(),
            Some(5)
        );
    }

    #[test]
    fn errors_and_strings() {
        assert_eq!(de_bruijn_fkm(0, 3), Err(DeBruijnError::EmptyAlphabet));
        assert_eq!(
            de_bruijn_euler(257, 1),
            Err(DeBruijnError::TooManySymbols { k: 257 })
        );
        assert_eq!(de_bruijn_fkm(2, 0), Err(DeBruijnError::ZeroLength));
        for too_long in [de_bruijn_fkm(2, 33), de_bruijn_euler(10, 10)] {
            assert!(matches!(too_long, Err(DeBruijnError::TooLong { .. })));
        }
        // 2^32 symbols: allowed for FKM, above graph-core's edge limit for Euler. Both error
        // before allocating anything.
        for (k, n) in [(2, 32), (256, 4), (65_536, 2)] {
            let e = de_bruijn_euler(k, n).unwrap_err();
            assert!(
                matches!(e, DeBruijnError::TooLong { limit, .. } if limit == MAX_EULER_EDGES)
                    || matches!(e, DeBruijnError::TooManySymbols { .. }),
                "B({k},{n}): {e}"
            );
        }
        assert_eq!(
            de_bruijn_euler_with(2, 0, Exec::Cpu),
            Err(DeBruijnError::ZeroLength)
        );
        assert_eq!(de_bruijn_euler(0, 2), Err(DeBruijnError::EmptyAlphabet));
        assert_eq!(
            alphabet_chars("aba"),
            Err(DeBruijnError::DuplicateSymbol('a'))
        );
        assert_eq!(
            word_to_symbols("ab", "abc"),
            Err(DeBruijnError::UnknownSymbol('c'))
        );
        let s = de_bruijn_string("αβγ", 2, Construction::Euler, true).unwrap();
        assert_eq!(s.chars().count(), 10);
        let syms = word_to_symbols("αβγ", &s).unwrap();
        let cyclic = &syms[..9];
        assert_eq!(verify_de_bruijn(cyclic, 3, 2), Ok(true));
        assert_eq!(
            de_bruijn_string("0123456789", 1, Construction::Fkm, false).unwrap(),
            "0123456789"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn prop_both_constructions(k in 1usize..=12, n in 1usize..=6) {
            prop_assume!((k as u64).pow(n as u32) <= 200_000);
            let f = de_bruijn_fkm(k, n).unwrap();
            let e = de_bruijn_euler(k, n).unwrap();
            prop_assert_eq!(verify_de_bruijn(&f, k, n), Ok(true));
            prop_assert_eq!(verify_de_bruijn(&e, k, n), Ok(true));
            // FKM is the lexicographically smallest, so never larger than the Euler one (equal
            // to it on Hierholzer's path, which these sizes take unless WARPATH_BACKEND says
            // cuda).
            prop_assert!(f <= e);
            // Every word is found at a position whose window is that word.
            let lin = de_bruijn_linear(&e, n);
            let word: Vec<u8> = (0..n).map(|i| ((i * 7 + k) % k) as u8).collect();
            let at = find_in_de_bruijn(&e, k, &word).unwrap().unwrap();
            prop_assert_eq!(&lin[at..at + n], &word[..]);
        }
    }
}
