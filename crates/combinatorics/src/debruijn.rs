//! De Bruijn sequences `B(k, n)`: cyclic sequences over `k` symbols in which every word of
//! length `n` occurs exactly once as a (cyclic) window.
//!
//! Two constructions, both checked by [`verify_de_bruijn`]:
//! - [`de_bruijn_fkm`]: Fredricksen–Kessler–Maiorana, the concatenation in lexicographic order
//!   of the Lyndon words whose length divides `n`; constant amortised time per symbol; the
//!   lexicographically smallest De Bruijn sequence.
//! - [`de_bruijn_euler`]: an Euler circuit of the De Bruijn graph (vertices: the `k^(n-1)`
//!   words of length `n - 1`; one edge per word of length `n`) by an iterative Hierholzer
//!   walk over the *implicit* graph: vertex `v` has out-edges `v·s` for the `k` symbols `s`,
//!   leading to `(v k + s) mod k^(n-1)`, so no adjacency list is built.
//!
//! Symbols are bytes `0..k` (`k <= 256`); [`de_bruijn_string`] maps them to any alphabet.

use crate::DeBruijnError;

/// Largest `k^n` the constructions accept: `2^32` symbols (4 GiB as bytes).
pub const MAX_DE_BRUIJN_LEN: u64 = 1 << 32;

/// Which construction to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Construction {
    /// Lyndon words (FKM): the lexicographically smallest sequence.
    #[default]
    Fkm,
    /// Euler circuit of the De Bruijn graph (Hierholzer on the implicit graph).
    Euler,
}

/// Exact `a % d` for 32-bit `a` and `d >= 1` by one 128-bit multiply (D. Lemire, O. Kaser,
/// N. Kurz, "Faster remainder by direct computation", 2019).
#[derive(Clone, Copy)]
struct FastMod {
    m: u64,
    d: u32,
}

impl FastMod {
    fn new(d: u32) -> Self {
        FastMod {
            m: (u64::MAX / d as u64).wrapping_add(1),
            d,
        }
    }

    #[inline(always)]
    fn rem(self, a: u32) -> u32 {
        let low = self.m.wrapping_mul(a as u64);
        ((low as u128 * self.d as u128) >> 64) as u32
    }
}

/// `k^n` if it is a valid size (`k` in `1..=256`, `n >= 1`, `k^n <= 2^32`).
fn sequence_len(k: usize, n: usize) -> Result<u64, DeBruijnError> {
    if k == 0 {
        return Err(DeBruijnError::EmptyAlphabet);
    }
    if k > 256 {
        return Err(DeBruijnError::TooManySymbols { k });
    }
    if n == 0 {
        return Err(DeBruijnError::ZeroLength);
    }
    let too_long = DeBruijnError::TooLong {
        k,
        n,
        limit: MAX_DE_BRUIJN_LEN,
    };
    let len = (0..n).try_fold(1u64, |acc, _| {
        acc.checked_mul(k as u64)
            .filter(|&l| l <= MAX_DE_BRUIJN_LEN)
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
    let len = sequence_len(k, n)?;
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
/// graph, by an iterative Hierholzer walk over the implicit graph (no edge list is stored:
/// each vertex keeps only the next symbol to try). The symbols are the last symbols of the
/// circuit's edges, starting at vertex `0^(n-1)`.
///
/// # Complexity
/// `O(k^n)` time; `O(k^(n-1))` memory for the per-vertex cursors plus a stack of up to `k^n`
/// vertices (4 bytes each).
///
/// # Errors
/// As [`de_bruijn_fkm`].
///
/// # Examples
/// ```
/// use combinatorics::{de_bruijn_euler, verify_de_bruijn};
/// let s = de_bruijn_euler(3, 4).unwrap();
/// assert_eq!(s.len(), 81);
/// assert!(verify_de_bruijn(&s, 3, 4).is_ok());
/// ```
pub fn de_bruijn_euler(k: usize, n: usize) -> Result<Vec<u8>, DeBruijnError> {
    let len = sequence_len(k, n)?;
    let mut out = alloc(len)?;
    if n == 1 {
        // One vertex (the empty word) with a loop per symbol.
        out.extend((0..k).map(|s| s as u8));
        return Ok(out);
    }
    let vertices = len / k as u64; // k^(n-1) <= 2^31
    let kk = k as u32;
    // Edge v·s leads to (v k + s) mod k^(n-1); v k + s < k^n <= 2^32 fits in a u32. The
    // remainders use Lemire's exact 32-bit fastmod (a multiply instead of a division).
    let vmod = FastMod::new(vertices as u32);
    let kmod = FastMod::new(kk);
    let mut next = Vec::new();
    next.try_reserve_exact(vertices as usize)
        .map_err(|_| DeBruijnError::OutOfMemory {
            bytes: vertices * 2,
        })?;
    next.resize(vertices as usize, 0u16);
    // Stack of vertices of the current trail; the symbol of the edge into vertex w is w % k.
    let mut stack: Vec<u32> = Vec::new();
    stack
        .try_reserve_exact(len as usize + 1)
        .map_err(|_| DeBruijnError::OutOfMemory {
            bytes: (len + 1) * 4,
        })?;
    stack.push(0);
    // Edges in reverse circuit order (the stack's pops), written from the back of `out`.
    out.resize(len as usize, 0);
    let mut back = len as usize;
    while let Some(&v) = stack.last() {
        let c = &mut next[v as usize];
        if (*c as u32) < kk {
            let s = *c as u32;
            *c += 1;
            stack.push(vmod.rem(v * kk + s));
        } else {
            stack.pop();
            if !stack.is_empty() {
                back -= 1;
                out[back] = kmod.rem(v) as u8;
            }
        }
    }
    debug_assert_eq!(back, 0);
    Ok(out)
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
    let len = sequence_len(k, n)?;
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
        }
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
    fn fastmod_is_exact() {
        for d in [
            1u32,
            2,
            3,
            7,
            10,
            255,
            256,
            1 << 20,
            3u32.pow(19),
            u32::MAX / 2,
            u32::MAX,
        ] {
            let f = FastMod::new(d);
            for a in [
                0u32,
                1,
                2,
                d.wrapping_sub(1),
                d,
                d.wrapping_add(1),
                12_345_678,
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!(f.rem(a), a % d, "{a} % {d}");
            }
        }
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
        assert!(matches!(
            de_bruijn_fkm(2, 33),
            Err(DeBruijnError::TooLong { .. })
        ));
        assert!(matches!(
            de_bruijn_euler(10, 10),
            Err(DeBruijnError::TooLong { .. })
        ));
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
            // FKM is the lexicographically smallest, so never larger than the Euler one.
            prop_assert!(f <= e);
            // Every word is found at a position whose window is that word.
            let lin = de_bruijn_linear(&e, n);
            let word: Vec<u8> = (0..n).map(|i| ((i * 7 + k) % k) as u8).collect();
            let at = find_in_de_bruijn(&e, k, &word).unwrap().unwrap();
            prop_assert_eq!(&lin[at..at + n], &word[..]);
        }
    }
}
