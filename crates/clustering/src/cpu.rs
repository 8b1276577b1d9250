//! CPU backends: the sequential reference (the test oracle) and the rayon path.
//!
//! The rayon path splits the points into fixed blocks of rows; each block accumulates its own
//! partial sums sequentially, and the blocks' partials are merged pairwise along a fixed
//! binary tree (halves run with `rayon::join`). The tree depends only on `n`, `k` and `d`, so
//! results are bit-identical whatever the number of threads. Inside a block, points go in
//! chunks of [`CHUNK`]; for large `k * d` the distances of a chunk to all centroids come from
//! one matrix product, `|c|^2 - 2 x.c` (the `|x|^2` term does not change the argmin), as in
//! scikit-learn; for small `k * d` they are computed directly.

use rayon::prelude::*;

use crate::lloyd::{Candidate, StepStats, Stepper, dist2_f64, farthest_points};
use crate::{Element, KMeansError};

/// Points per distance chunk (scikit-learn uses 256 as well).
pub(crate) const CHUNK: usize = 256;

/// Below this many points a step runs on the calling thread only.
const PARALLEL_THRESHOLD: usize = 1 << 14;

/// From this many `k * d` multiply-adds per point on, distances go through a matrix product.
const GEMM_MIN_KD: usize = 128;

/// Rows per leaf of the reduction tree: a function of `k * d` only, so that the partials of
/// large problems stay few.
pub(crate) fn block_rows(k: usize, d: usize) -> usize {
    let kd = k * d;
    if kd <= 4096 {
        4096
    } else {
        (4096 * (kd / 4096).min(64)).next_multiple_of(CHUNK)
    }
}

/// Squared Euclidean distance in the element type.
#[inline]
fn dist2<T: Element>(x: &[T], c: &[T]) -> T {
    let mut s = T::zero();
    for (&a, &b) in x.iter().zip(c) {
        let t = a - b;
        s = s + t * t;
    }
    s
}

/// The obviously correct assignment: every point against every centroid in `f64`, ties to the
/// lower index, sums in point order.
pub(crate) fn step_reference<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    centroids: &[f64],
    k: usize,
    labels: &mut [u32],
) -> StepStats {
    let mut st = StepStats::zeros(k, d);
    for (i, x) in data.chunks_exact(d).enumerate() {
        let mut best = f64::INFINITY;
        let mut bl = 0usize;
        for j in 0..k {
            let dist = dist2_f64(x, &centroids[j * d..(j + 1) * d]);
            if dist < best {
                best = dist;
                bl = j;
            }
        }
        let w = weights.map_or(1.0, |w| w[i]);
        if labels[i] != bl as u32 {
            st.changed += 1;
            labels[i] = bl as u32;
        }
        for (s, v) in st.sums[bl * d..(bl + 1) * d].iter_mut().zip(x) {
            *s += w * v.to_f64();
        }
        st.counts[bl] += w;
        st.inertia += w * best;
    }
    st
}

/// Centroids per block of the blocked distance kernel.
const CB: usize = 4;
/// Points per register block of the blocked distance kernel.
const PB: usize = 4;

/// Centroids in the element type plus what the fast path precomputes from them.
pub(crate) struct Prepared<T> {
    pub(crate) c: Vec<T>,
    /// Whether distances go through the blocked `|c|^2 - 2 x.c` kernel.
    pub(crate) blocked: bool,
    /// Centroids times -2 in blocks of [`CB`], each block transposed: `ct[(b * d + t) * CB + l]`
    /// is -2 times coordinate `t` of centroid `b * CB + l` (zero past `k`).
    ct: Vec<T>,
    /// `|c_j|^2`, padded to whole blocks with `T::MAX` (never the minimum).
    norms: Vec<T>,
}

impl<T: Element> Prepared<T> {
    pub(crate) fn new(centroids: &[f64], k: usize, d: usize) -> Self {
        let c: Vec<T> = centroids.iter().map(|&v| T::from_f64(v)).collect();
        let blocked = k * d >= GEMM_MIN_KD && k >= CB;
        let (mut ct, mut norms) = (Vec::new(), Vec::new());
        if blocked {
            let minus_two = T::zero() - T::one() - T::one();
            let blocks = k.div_ceil(CB);
            ct = vec![T::zero(); blocks * d * CB];
            norms = vec![T::MAX; blocks * CB];
            for (j, row) in c.chunks_exact(d).enumerate() {
                let (b, l) = (j / CB, j % CB);
                for (t, &v) in row.iter().enumerate() {
                    // Scaled by -2 (exact): the kernel accumulates |c|^2 - 2 x.c directly.
                    ct[(b * d + t) * CB + l] = minus_two * v;
                }
                norms[j] = row.iter().fold(T::zero(), |s, &v| s + v * v);
            }
        }
        Prepared {
            c,
            blocked,
            ct,
            norms,
        }
    }
}

/// Nearest centroid (ties to the lower index) of each point of `x`, a chunk of at most
/// [`CHUNK`] rows, written to `best`.
pub(crate) fn nearest_chunk<T: Element>(
    x: &[T],
    d: usize,
    k: usize,
    prep: &Prepared<T>,
    best: &mut [u32],
) {
    if prep.blocked {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA (checked just above).
            unsafe { blocked_nearest_avx2(x, d, prep, best) };
            return;
        }
        blocked_nearest::<T, false>(x, d, prep, best);
    } else {
        for (i, xp) in x.chunks_exact(d).enumerate() {
            let mut bd = T::MAX;
            let mut bl = 0u32;
            for (j, c) in prep.c.chunks_exact(d).enumerate().take(k) {
                let dist = dist2(xp, c);
                if dist < bd {
                    bd = dist;
                    bl = j as u32;
                }
            }
            best[i] = bl;
        }
    }
}

/// The direct nearest-centroid search for `d == D`.
#[inline(always)]
fn nearest_direct<T: Element, const D: usize>(
    x: &[T],
    k: usize,
    prep: &Prepared<T>,
    best: &mut [u32],
) {
    let (xs, _) = x.as_chunks::<D>();
    let (cs, _) = prep.c.as_chunks::<D>();
    for (xp, out) in xs.iter().zip(best.iter_mut()) {
        let mut bd = T::MAX;
        let mut bl = 0u32;
        for (j, c) in cs.iter().enumerate().take(k) {
            let mut dist = T::zero();
            for t in 0..D {
                let diff = xp[t] - c[t];
                dist = dist + diff * diff;
            }
            if dist < bd {
                bd = dist;
                bl = j as u32;
            }
        }
        *out = bl;
    }
}

/// [`blocked_nearest`] without fused multiply-adds (any CPU; tested everywhere).
#[cfg(test)]
pub(crate) fn blocked_nearest_portable<T: Element>(
    x: &[T],
    d: usize,
    prep: &Prepared<T>,
    best: &mut [u32],
) {
    blocked_nearest::<T, false>(x, d, prep, best);
}

/// [`blocked_nearest`] compiled for AVX2 with fused multiply-adds.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn blocked_nearest_avx2<T: Element>(
    x: &[T],
    d: usize,
    prep: &Prepared<T>,
    best: &mut [u32],
) {
    blocked_nearest::<T, true>(x, d, prep, best);
}

/// The distance kernel for large `k * d`: for every block of [`CB`] centroids (kept in L1)
/// and every group of [`PB`] points, the `PB x CB` dot products are accumulated in registers
/// over the dimensions, turned into `|c|^2 - 2 x.c` and folded into a per-lane running
/// minimum (branch-free, the block number kept as a float of the same width so that the
/// selects vectorise). Lanes are merged at the end with ties to the lower index, which gives
/// exactly the sequential first-minimum.
// Index loops over fixed-size register blocks: the shape LLVM vectorises.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn blocked_nearest<T: Element, const FMA: bool>(
    x: &[T],
    d: usize,
    prep: &Prepared<T>,
    best: &mut [u32],
) {
    let rows = x.len() / d;
    debug_assert!(rows <= CHUNK);
    let groups = rows.div_ceil(PB);
    let mut bestv = [[T::MAX; PB * CB]; CHUNK.div_ceil(PB)];
    let mut bestb = [[T::zero(); PB * CB]; CHUNK.div_ceil(PB)];
    let blocks = prep.norms.len() / CB;
    // Centroid blocks per pass: about 128 KiB of centroids, which stay in L2 while every
    // group of points sweeps them with its running minimum in registers.
    let per_pass = ((128 << 10) / (d * CB * size_of::<T>()).max(1)).max(1);
    let mut b0 = 0;
    while b0 < blocks {
        let b1 = (b0 + per_pass).min(blocks);
        for g in 0..groups {
            // The last group may be short: repeat its last row (its results are not used).
            let xr: [&[T]; PB] = std::array::from_fn(|p| {
                let r = (g * PB + p).min(rows - 1);
                &x[r * d..(r + 1) * d]
            });
            let mut bv: [T; PB * CB] = bestv[g];
            let mut bb: [T; PB * CB] = bestb[g];
            for b in b0..b1 {
                let (crows, _) = prep.ct[b * d * CB..(b + 1) * d * CB].as_chunks::<CB>();
                let nb: &[T; CB] = prep.norms[b * CB..(b + 1) * CB]
                    .try_into()
                    .expect("CB norms");
                let bf = T::from_f64(b as f64);
                // Starts at |c|^2 and accumulates -2 x.c: the distance less |x|^2.
                let mut acc: [T; PB * CB] = std::array::from_fn(|i| nb[i % CB]);
                // Same length as `crows`, so the indexing below needs no bounds checks.
                let xr: [&[T]; PB] = xr.map(|r| &r[..crows.len()]);
                for (t, crow) in crows.iter().enumerate() {
                    let xv: [T; PB] = std::array::from_fn(|p| xr[p][t]);
                    for i in 0..PB * CB {
                        let (p, l) = (i / CB, i % CB);
                        acc[i] = if FMA {
                            xv[p].mul_add(crow[l], acc[i])
                        } else {
                            acc[i] + xv[p] * crow[l]
                        };
                    }
                }
                for i in 0..PB * CB {
                    let better = acc[i] < bv[i];
                    bv[i] = if better { acc[i] } else { bv[i] };
                    bb[i] = if better { bf } else { bb[i] };
                }
            }
            bestv[g] = bv;
            bestb[g] = bb;
        }
        b0 = b1;
    }
    for (i, out) in best.iter_mut().enumerate().take(rows) {
        let (g, p) = (i / PB, i % PB);
        let mut bv = T::MAX;
        let mut bi = u32::MAX;
        for l in 0..CB {
            let v = bestv[g][p * CB + l];
            let j = bestb[g][p * CB + l].to_f64() as u32 * CB as u32 + l as u32;
            if v < bv || (v == bv && j < bi) {
                bv = v;
                bi = j;
            }
        }
        *out = if bi == u32::MAX { 0 } else { bi };
    }
}

/// One leaf of the reduction tree: rows `x` (with their weights and labels), sequentially.
fn step_leaf<T: Element>(
    x: &[T],
    d: usize,
    weights: Option<&[f64]>,
    centroids: &[f64],
    k: usize,
    prep: &Prepared<T>,
    labels: &mut [u32],
) -> StepStats {
    // Small dimensions get their own copies with `d` a constant, so the loops unroll.
    match d {
        1 => step_leaf_d::<T, 1>(x, d, weights, centroids, k, prep, labels),
        2 => step_leaf_d::<T, 2>(x, d, weights, centroids, k, prep, labels),
        3 => step_leaf_d::<T, 3>(x, d, weights, centroids, k, prep, labels),
        4 => step_leaf_d::<T, 4>(x, d, weights, centroids, k, prep, labels),
        _ => step_leaf_d::<T, 0>(x, d, weights, centroids, k, prep, labels),
    }
}

/// [`step_leaf`] for `d == D` (`D > 0`) or any `d` (`D == 0`).
#[inline(always)]
fn step_leaf_d<T: Element, const D: usize>(
    x: &[T],
    d: usize,
    weights: Option<&[f64]>,
    centroids: &[f64],
    k: usize,
    prep: &Prepared<T>,
    labels: &mut [u32],
) -> StepStats {
    let d = if D > 0 { D } else { d };
    let mut st = StepStats::zeros(k, d);
    let mut best = [0u32; CHUNK];
    for (ci, xc) in x.chunks(CHUNK * d).enumerate() {
        let rows = xc.len() / d;
        if prep.blocked || D == 0 {
            nearest_chunk(xc, d, k, prep, &mut best[..rows]);
        } else {
            nearest_direct::<T, D>(xc, k, prep, &mut best[..rows]);
        }
        for (r, xp) in xc.chunks_exact(d).enumerate() {
            let i = ci * CHUNK + r;
            let bl = best[r] as usize;
            let w = weights.map_or(1.0, |w| w[i]);
            if labels[i] != best[r] {
                st.changed += 1;
                labels[i] = best[r];
            }
            let c = &centroids[bl * d..(bl + 1) * d];
            let s = &mut st.sums[bl * d..(bl + 1) * d];
            let mut dist = 0.0;
            for t in 0..d {
                let v = xp[t].to_f64();
                s[t] += w * v;
                let diff = v - c[t];
                dist += diff * diff;
            }
            st.counts[bl] += w;
            st.inertia += w * dist;
        }
    }
    st
}

/// The rayon step: leaves of [`block_rows`] rows merged along a fixed binary tree.
pub(crate) fn step_parallel<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    centroids: &[f64],
    k: usize,
    labels: &mut [u32],
) -> StepStats {
    let parallel = labels.len() >= PARALLEL_THRESHOLD && rayon::current_num_threads() > 1;
    step_tree(data, d, weights, centroids, k, labels, parallel)
}

/// The step of [`step_parallel`] with the halves of the tree run by `rayon::join` or, when
/// `parallel` is false, one after the other on the calling thread: the same tree, so the same
/// bits either way.
pub(crate) fn step_tree<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    centroids: &[f64],
    k: usize,
    labels: &mut [u32],
    parallel: bool,
) -> StepStats {
    let prep = Prepared::<T>::new(centroids, k, d);
    let n = labels.len();
    let rows = block_rows(k, d);
    let blocks = n.div_ceil(rows).max(1);
    tree(
        data, d, weights, centroids, k, &prep, labels, 0, blocks, rows, parallel,
    )
}

#[allow(clippy::too_many_arguments)]
fn tree<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    centroids: &[f64],
    k: usize,
    prep: &Prepared<T>,
    labels: &mut [u32],
    lo: usize,
    hi: usize,
    rows: usize,
    parallel: bool,
) -> StepStats {
    if hi - lo <= 1 {
        return step_leaf(data, d, weights, centroids, k, prep, labels);
    }
    let mid = lo + (hi - lo) / 2;
    let split = ((mid - lo) * rows).min(labels.len());
    let (la, lb) = labels.split_at_mut(split);
    let (da, db) = data.split_at(split * d);
    let (wa, wb) = match weights {
        Some(w) => {
            let (a, b) = w.split_at(split);
            (Some(a), Some(b))
        }
        None => (None, None),
    };
    let mut run_a = move || tree(da, d, wa, centroids, k, prep, la, lo, mid, rows, parallel);
    let mut run_b = move || tree(db, d, wb, centroids, k, prep, lb, mid, hi, rows, parallel);
    let (mut a, b) = if parallel {
        rayon::join(run_a, run_b)
    } else {
        (run_a(), run_b())
    };
    a.add(&b);
    a
}

/// Per-column sums (`centre = None`) or sums of squared deviations from `centre`, over the
/// rows of `data`, in a deterministic order (fixed blocks, merged in order).
pub(crate) fn column_moments<T: Element>(data: &[T], d: usize, centre: Option<&[f64]>) -> Vec<f64> {
    let rows = 1 << 14;
    let parts: Vec<Vec<f64>> = data
        .par_chunks(rows * d)
        .map(|blk| {
            let mut s = vec![0.0; d];
            for x in blk.chunks_exact(d) {
                for t in 0..d {
                    let v = x[t].to_f64();
                    s[t] += match centre {
                        None => v,
                        Some(c) => (v - c[t]) * (v - c[t]),
                    };
                }
            }
            s
        })
        .collect();
    let mut total = vec![0.0; d];
    for p in parts {
        for t in 0..d {
            total[t] += p[t];
        }
    }
    total
}

/// The mean over columns of the per-column variance (scikit-learn's tolerance scale).
pub(crate) fn mean_variance<T: Element>(data: &[T], d: usize) -> f64 {
    let n = (data.len() / d.max(1)) as f64;
    if n == 0.0 || d == 0 {
        return 0.0;
    }
    let mean: Vec<f64> = column_moments(data, d, None)
        .into_iter()
        .map(|s| s / n)
        .collect();
    let ss = column_moments(data, d, Some(&mean));
    ss.iter().sum::<f64>() / n / d as f64
}

/// Which CPU algorithm a [`CpuStepper`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CpuKind {
    Reference,
    Parallel,
}

/// A CPU backend over contiguous row-major data.
pub(crate) struct CpuStepper<'a, T> {
    pub(crate) data: &'a [T],
    pub(crate) d: usize,
    pub(crate) weights: Option<&'a [f64]>,
    pub(crate) labels: Vec<u32>,
    pub(crate) kind: CpuKind,
    /// Global index of the first row (MPI shards).
    pub(crate) index_offset: u64,
}

impl<'a, T: Element> CpuStepper<'a, T> {
    pub(crate) fn new(data: &'a [T], d: usize, weights: Option<&'a [f64]>, kind: CpuKind) -> Self {
        let n = data.len() / d;
        CpuStepper {
            data,
            d,
            weights,
            labels: vec![u32::MAX; n],
            kind,
            index_offset: 0,
        }
    }
}

impl<T: Element> Stepper for CpuStepper<'_, T> {
    fn dim(&self) -> usize {
        self.d
    }

    fn step(&mut self, centroids: &[f64], k: usize) -> Result<StepStats, KMeansError> {
        Ok(match self.kind {
            CpuKind::Reference => step_reference(
                self.data,
                self.d,
                self.weights,
                centroids,
                k,
                &mut self.labels,
            ),
            CpuKind::Parallel => step_parallel(
                self.data,
                self.d,
                self.weights,
                centroids,
                k,
                &mut self.labels,
            ),
        })
    }

    fn farthest(&mut self, centroids: &[f64], m: usize) -> Result<Vec<Candidate>, KMeansError> {
        Ok(farthest_points(
            self.data,
            self.d,
            self.weights,
            centroids,
            &self.labels,
            m,
            self.index_offset,
        ))
    }
}

/// Nearest centroid of every point (the fast path; `predict`).
pub(crate) fn assign_parallel<T: Element>(
    data: &[T],
    d: usize,
    centroids: &[f64],
    k: usize,
) -> Vec<u32> {
    let prep = Prepared::<T>::new(centroids, k, d);
    let n = data.len() / d;
    let mut labels = vec![0u32; n];
    let work = |(x, out): (&[T], &mut [u32])| {
        nearest_chunk(x, d, k, &prep, out);
    };
    if n >= PARALLEL_THRESHOLD {
        data.par_chunks(CHUNK * d)
            .zip(labels.par_chunks_mut(CHUNK))
            .for_each(work);
    } else {
        data.chunks(CHUNK * d)
            .zip(labels.chunks_mut(CHUNK))
            .for_each(work);
    }
    labels
}
