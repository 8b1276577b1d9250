//! The CPU fill: rayon chunks of consecutive ranks, one unrank per chunk, then
//! `next_permutation` (with the last four positions from a table for `n >= 5`).

use rayon::prelude::*;

use crate::next_permutation;
use crate::rank::{MAX_N_U64, unrank_bytes};

/// Below this many permutations one thread beats rayon's fork/join.
const PARALLEL_THRESHOLD: u64 = 1 << 14;

/// Permutations per rayon task (one unrank each).
pub(super) const CHUNK: u64 = 1 << 15;

/// The CPU path; arguments already validated.
pub(super) fn fill(n: usize, start: u64, count: u64, out: &mut [u8]) {
    if n == 0 || count == 0 {
        return;
    }
    if count < PARALLEL_THRESHOLD {
        fill_chunk(n, start, out);
        return;
    }
    out.par_chunks_mut(CHUNK as usize * n)
        .enumerate()
        .for_each(|(i, dst)| fill_chunk(n, start + i as u64 * CHUNK, dst));
}

/// The CPU path with `k` permutations per unrank (the seed's versions: unrank every `k`-th
/// rank from `start`, step `next_permutation` `k - 1` times); arguments already validated.
pub(super) fn fill_steps(n: usize, start: u64, count: u64, out: &mut [u8], k: u64) {
    if n == 0 || count == 0 {
        return;
    }
    // Whole groups of k per rayon task, about CHUNK permutations each.
    let groups_per_task = (CHUNK / k).max(1);
    let task_perms = groups_per_task.saturating_mul(k).min(count);
    let task_bytes = usize::try_from(task_perms)
        .unwrap_or(usize::MAX)
        .saturating_mul(n);
    let task = |(i, dst): (usize, &mut [u8])| {
        let first = start + i as u64 * task_perms;
        for (g, group) in dst.chunks_mut(k.min(task_perms) as usize * n).enumerate() {
            fill_chunk_simple(n, first + g as u64 * k, group);
        }
    };
    if count < PARALLEL_THRESHOLD {
        out.chunks_mut(task_bytes).enumerate().for_each(task);
    } else {
        out.par_chunks_mut(task_bytes).enumerate().for_each(task);
    }
}

/// Fills `out` (a multiple of `n` bytes) with consecutive permutations from rank `first`.
fn fill_chunk(n: usize, first: u64, out: &mut [u8]) {
    macro_rules! dispatch {
        ($($k:literal)*) => {
            match n {
                $($k => fill_chunk_tail::<$k>(first, out),)*
                _ => fill_chunk_simple(n, first, out),
            }
        };
    }
    dispatch!(5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
}

/// Unrank then `next_permutation`: for tiny `n`, and each group of the `k`-step versions.
fn fill_chunk_simple(n: usize, first: u64, out: &mut [u8]) {
    let mut cur = [0u8; MAX_N_U64];
    let cur = &mut cur[..n];
    unrank_bytes(n, first, cur);
    let mut chunks = out.chunks_exact_mut(n);
    if let Some(d) = chunks.next() {
        d.copy_from_slice(cur);
    }
    for d in chunks {
        next_permutation(cur);
        d.copy_from_slice(cur);
    }
}

/// The 24 arrangements of 4 positions in lexicographic order.
const TAIL4: [[u8; 4]; 24] = {
    let mut t = [[0u8; 4]; 24];
    let mut r = 0;
    while r < 24 {
        // Unrank r among permutations of 0..4 (factorial base 3! 2! 1!).
        let mut rest = [0u8, 1, 2, 3];
        let mut left = 4;
        let mut rank = r;
        let facts = [6, 2, 1, 1];
        let mut i = 0;
        while i < 4 {
            let d = rank / facts[i];
            rank %= facts[i];
            t[r][i] = rest[d];
            let mut j = d;
            while j + 1 < left {
                rest[j] = rest[j + 1];
                j += 1;
            }
            left -= 1;
            i += 1;
        }
        r += 1;
    }
    t
};

/// Blocks of 24: the first `N - 4` positions are fixed within a block (lexicographic order), the
/// last four run through [`TAIL4`] applied to the block's sorted tail.
#[inline(never)]
fn fill_chunk_tail<const N: usize>(first: u64, out: &mut [u8]) {
    let head = N - 4;
    let mut cur = [0u8; N];
    let mut off = (first % 24) as usize;
    unrank_bytes(N, first - off as u64, &mut cur);
    let mut perms = out.chunks_exact_mut(N);
    loop {
        let tail = [cur[head], cur[head + 1], cur[head + 2], cur[head + 3]];
        let mut tails = [[0u8; 4]; 24];
        for (t, pat) in tails.iter_mut().zip(&TAIL4) {
            *t = [
                tail[pat[0] as usize],
                tail[pat[1] as usize],
                tail[pat[2] as usize],
                tail[pat[3] as usize],
            ];
        }
        for t in &tails[off..] {
            let Some(dst) = perms.next() else { return };
            dst[..head].copy_from_slice(&cur[..head]);
            dst[head..].copy_from_slice(t);
        }
        off = 0;
        // Last permutation of the block (tail descending), then one step.
        cur[head..].reverse();
        if !next_permutation(&mut cur) {
            return;
        }
    }
}
