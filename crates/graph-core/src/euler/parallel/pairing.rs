//! Stage 1 of the CPU parallel Euler circuit (see the parent module): each vertex's in-edges
//! paired with its out-edges by a cache-friendly counting sort of the edges by end vertex,
//! which also checks the degrees.

use rayon::prelude::*;

use super::Node;
use crate::par::{PAR_THRESHOLD, SharedMut};

/// Pairs each vertex's in-edges with its out-edges and copies the end vertices: `pred[pos] =
/// i` for the in-edge `i` of `v` that is the `t`-th in edge order and `pos = offsets[v] + t`
/// (in = out everywhere, so the in-edge slots of `v` are its out-edge positions). Stable, so
/// deterministic.
///
/// A direct placement (`pred[cursor[target]++] = i` for every edge) is one cache miss for the
/// cursor and one for the node per edge. Instead the edges are first bucketed by ranges of
/// `2^shift` end vertices (a stable parallel counting sort on `target >> shift`: per-chunk
/// histograms, then a scatter whose few thousand write streams stay in cache), then each
/// bucket is placed on its own: its cursors and its nodes (about 8192 slots) fit in the L2
/// cache.
///
/// The final cursors are the in-degrees, so the pairing also checks the Euler condition:
/// returns the first vertex whose in-degree differs from its out-degree, with both degrees.
/// (Such input places some edges in another vertex's slots, but never outside its bucket's,
/// so the placement stays race-free and in bounds.) `tmp` (at least `m` entries) is scratch.
pub(super) fn pair_edges(
    offsets: &[u64],
    targets: &[u32],
    nodes: &mut [Node],
    tmp: &mut [[u32; 2]],
) -> Option<(u32, u64, u64)> {
    let m = targets.len();
    let n = offsets.len() - 1;
    let avg = (m / n.max(1)).max(1);
    let mut shift = (8192 / avg).max(1).next_power_of_two().trailing_zeros();
    while (n >> shift) >= 1 << 16 {
        shift += 1;
    }
    let width = 1usize << shift;
    let nb = n.div_ceil(width);
    let chunks = if m < PAR_THRESHOLD {
        1
    } else {
        2 * rayon::current_num_threads()
    };
    let clen = m.div_ceil(chunks);
    let chunk_range = |c: usize| c * clen..((c + 1) * clen).min(m);
    // Per-chunk histograms of the buckets, then bucket-major exclusive sums: chunk c writes
    // bucket b from `start[c][b]`.
    let count = |c: usize| {
        let mut h = vec![0u32; nb];
        for &t in &targets[chunk_range(c)] {
            h[t as usize >> shift] += 1;
        }
        h
    };
    let mut start: Vec<Vec<u32>> = if chunks == 1 {
        vec![count(0)]
    } else {
        (0..chunks).into_par_iter().map(count).collect()
    };
    let mut bucket_start = Vec::with_capacity(nb + 1);
    let mut run = 0u32;
    for b in 0..nb {
        bucket_start.push(run as usize);
        for h in start.iter_mut() {
            let c = h[b];
            h[b] = run;
            run += c;
        }
    }
    bucket_start.push(m);
    // The scatter: (edge, end vertex) pairs grouped by bucket, in edge order within each.
    let wt = SharedMut::new(tmp);
    let scatter = |(c, cursor): (usize, &mut Vec<u32>)| {
        let r = chunk_range(c);
        for (i, &t) in (r.start..).zip(&targets[r]) {
            let b = t as usize >> shift;
            let at = cursor[b];
            cursor[b] = at + 1;
            // SAFETY: the ranges handed to the (chunk, bucket) pairs by the sums above are
            // disjoint, and each position in them is handed out once.
            unsafe { wt.write(at as usize, [i as u32, t]) };
        }
    };
    if chunks == 1 {
        start.iter_mut().enumerate().for_each(scatter);
    } else {
        start.par_iter_mut().enumerate().for_each(scatter);
    }
    drop(start);
    // The placement, bucket by bucket.
    let wn = SharedMut::new(nodes);
    let place = |cursor: &mut Vec<u32>, b: usize| -> Option<(u32, u64, u64)> {
        let (vlo, vhi) = (b * width, ((b + 1) * width).min(n));
        let (slo, shi) = (offsets[vlo] as usize, offsets[vhi] as usize);
        for (x, &t) in (slo..).zip(&targets[slo..shi]) {
            // SAFETY: the slots of the bucket's vertices belong to this bucket alone.
            unsafe { (*wn.ptr().add(x)).target = t };
        }
        cursor.clear();
        cursor.extend(offsets[vlo..vhi].iter().map(|&o| o as u32));
        for &[i, t] in &tmp[bucket_start[b]..bucket_start[b + 1]] {
            let v = t as usize - vlo;
            let pos = cursor[v];
            cursor[v] = pos + 1;
            if (pos as usize) < shi {
                // SAFETY: slo <= pos < shi: a slot of this bucket, which this call alone
                // writes.
                unsafe { (*wn.ptr().add(pos as usize)).pred = i };
            }
        }
        (vlo..vhi).find_map(|v| {
            let (lo, hi, end) = (offsets[v], offsets[v + 1], u64::from(cursor[v - vlo]));
            (end != hi).then(|| (v as u32, end - lo, hi - lo))
        })
    };
    if chunks == 1 {
        let mut cursor = Vec::with_capacity(width);
        (0..nb).find_map(|b| place(&mut cursor, b))
    } else {
        (0..nb)
            .into_par_iter()
            .map_init(|| Vec::with_capacity(width), place)
            .find_first(Option::is_some)
            .flatten()
    }
}
