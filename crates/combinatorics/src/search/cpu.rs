//! The CPU search: a monomorphised scan per `n` and objective that re-sums only the suffix
//! `next_permutation` changed, in rayon chunks for large ranges.

use rayon::prelude::*;

use super::best::better;
use crate::next::next_permutation_pivot;
use crate::rank::{MAX_N_U64, unrank_bytes};

/// Below this many permutations one thread beats rayon's fork/join.
const PARALLEL_THRESHOLD: u64 = 1 << 14;

/// Permutations per rayon task.
const CHUNK: u64 = 1 << 16;

/// The best `(score, rank)` among `count >= 1` ranks from `start`.
pub(super) fn search(tour: bool, n: usize, m: &[f64], start: u64, count: u64) -> (f64, u64) {
    let chunk = |first: u64, len: u64| search_chunk_dispatch(tour, n, m, first, len);
    if count < PARALLEL_THRESHOLD {
        return chunk(start, count);
    }
    (0..count.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let first = start + c * CHUNK;
            chunk(first, CHUNK.min(start + count - first))
        })
        .reduce(
            || (f64::INFINITY, u64::MAX),
            |a, b| if better(b.0, b.1, a.0, a.1) { b } else { a },
        )
}

/// Monomorphises the hot loop for each `n` (fixed loop bounds) and objective.
fn search_chunk_dispatch(tour: bool, n: usize, m: &[f64], first: u64, len: u64) -> (f64, u64) {
    macro_rules! dispatch {
        ($($k:literal)*) => {
            match (tour, n) {
                (_, 0) => (0.0, first),
                $((true, $k) => search_chunk::<true, $k>(m, first, len),
                  (false, $k) => search_chunk::<false, $k>(m, first, len),)*
                _ => unreachable!("n <= 20 was validated"),
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
}

/// Recomputes the prefix sums from position `from` and returns the score.
#[inline(always)]
fn rescore<const TOUR: bool, const N: usize>(
    m: &[f64],
    p: &[u8; N],
    t: &mut [f64; MAX_N_U64 + 1],
    from: usize,
) -> f64 {
    debug_assert!(m.len() == N * N && p.iter().all(|&e| (e as usize) < N));
    // SAFETY (every `get_unchecked` below): `p` is a permutation of 0..N (it comes from
    // `unrank_bytes` and `next_permutation_pivot`, which only rearrange it), so every index
    // `a * N + b` with `a, b < N` is below `N * N == m.len()` (checked by `validate`).
    let at = |a: u8, b: u8| unsafe { *m.get_unchecked(a as usize * N + b as usize) };
    if TOUR {
        for j in from.max(1)..N {
            t[j] = t[j - 1] + at(p[j - 1], p[j]);
        }
        t[N - 1] + at(p[N - 1], p[0])
    } else {
        for j in from..N {
            t[j + 1] = t[j] + at(j as u8, p[j]);
        }
        t[N]
    }
}

/// The best `(score, rank)` among `len >= 1` consecutive ranks from `first`.
fn search_chunk<const TOUR: bool, const N: usize>(m: &[f64], first: u64, len: u64) -> (f64, u64) {
    let m = &m[..N * N];
    let mut p = [0u8; N];
    unrank_bytes(N, first, &mut p);
    let mut t = [0.0f64; MAX_N_U64 + 1];
    let mut best = rescore::<TOUR, N>(m, &p, &mut t, 0);
    let mut best_rank = first;
    for rank in first + 1..first + len {
        // Inside the validated range there is always a next permutation.
        let pivot = next_permutation_pivot(&mut p).unwrap_or(0);
        let s = rescore::<TOUR, N>(m, &p, &mut t, pivot);
        if s < best {
            best = s;
            best_rank = rank;
        }
    }
    (best, best_rank)
}
