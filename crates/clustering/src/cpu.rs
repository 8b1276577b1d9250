//! CPU backends: the sequential reference (the test oracle) and the rayon path.
//!
//! The rayon path splits the points into fixed blocks of rows; each block accumulates its own
//! partial sums sequentially, and the blocks' partials are merged pairwise along a fixed
//! binary tree (halves run with `rayon::join`). The tree depends only on `n`, `k` and `d`, so
//! results are bit-identical whatever the number of threads. Inside a block, points go in
//! chunks of [`CHUNK`]; for large `k * d` the distances of a chunk to all centroids come from
//! one matrix product, `|c|^2 - 2 x.c` (the `|x|^2` term does not change the argmin), as in
//! scikit-learn; for small `k * d` they are computed directly.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};
use rayon::prelude::*;

use crate::lloyd::{Candidate, StepStats, Stepper, candidate_order};
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

/// Squared Euclidean distance in `f64`.
#[inline]
pub(crate) fn dist2_f64<T: Element>(x: &[T], c: &[f64]) -> f64 {
    x.iter()
        .zip(c)
        .map(|(&a, &b)| {
            let t = a.to_f64() - b;
            t * t
        })
        .sum()
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

/// Centroids in the element type plus what the fast path precomputes from them.
pub(crate) struct Prepared<T> {
    pub(crate) c: Vec<T>,
    /// `|c_j|^2` in the element type (used only by the matrix-product path).
    pub(crate) norms: Vec<T>,
    pub(crate) gemm: bool,
}

impl<T: Element> Prepared<T> {
    pub(crate) fn new(centroids: &[f64], k: usize, d: usize) -> Self {
        let c: Vec<T> = centroids.iter().map(|&v| T::from_f64(v)).collect();
        let gemm = k * d >= GEMM_MIN_KD && d >= 4 && k >= 4;
        let norms = if gemm {
            c.chunks_exact(d)
                .map(|r| r.iter().fold(T::zero(), |s, &v| s + v * v))
                .collect()
        } else {
            Vec::new()
        };
        Prepared { c, norms, gemm }
    }
}

/// Nearest centroid of each point of `x` (a chunk of at most [`CHUNK`] rows), written to
/// `best`; `dots` is scratch of `CHUNK * k`.
pub(crate) fn nearest_chunk<T: Element>(
    x: &[T],
    d: usize,
    k: usize,
    prep: &Prepared<T>,
    dots: &mut [T],
    best: &mut [u32],
) {
    let rows = x.len() / d;
    if prep.gemm {
        let xv = ArrayView2::from_shape((rows, d), x).expect("chunk shape");
        let cv = ArrayView2::from_shape((k, d), &prep.c[..]).expect("centroid shape");
        let mut out =
            ArrayViewMut2::from_shape((rows, k), &mut dots[..rows * k]).expect("scratch shape");
        general_mat_mul(T::one(), &xv, &cv.t(), T::zero(), &mut out);
        let two = T::one() + T::one();
        for (i, row) in dots[..rows * k].chunks_exact(k).enumerate() {
            let mut bd = T::MAX;
            let mut bl = 0u32;
            for (j, (&dot, &nrm)) in row.iter().zip(&prep.norms).enumerate() {
                let dist = nrm - two * dot;
                if dist < bd {
                    bd = dist;
                    bl = j as u32;
                }
            }
            best[i] = bl;
        }
    } else {
        for (i, xp) in x.chunks_exact(d).enumerate() {
            let mut bd = T::MAX;
            let mut bl = 0u32;
            for (j, c) in prep.c.chunks_exact(d).enumerate() {
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
    let mut st = StepStats::zeros(k, d);
    let mut dots = vec![T::zero(); if prep.gemm { CHUNK * k } else { 0 }];
    let mut best = [0u32; CHUNK];
    for (ci, xc) in x.chunks(CHUNK * d).enumerate() {
        let rows = xc.len() / d;
        nearest_chunk(xc, d, k, prep, &mut dots, &mut best[..rows]);
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
    let prep = Prepared::<T>::new(centroids, k, d);
    let n = labels.len();
    let rows = block_rows(k, d);
    let blocks = n.div_ceil(rows).max(1);
    let parallel = n >= PARALLEL_THRESHOLD && rayon::current_num_threads() > 1;
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

/// The `m` points farthest from their labelled centroid, in [`candidate_order`];
/// `index_offset` turns local row numbers into global ones (MPI shards).
pub(crate) fn farthest_points<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    centroids: &[f64],
    labels: &[u32],
    m: usize,
    index_offset: u64,
) -> Vec<Candidate> {
    let mut dists: Vec<(f64, usize)> = data
        .par_chunks_exact(d)
        .zip(labels.par_iter())
        .enumerate()
        .map(|(i, (x, &l))| {
            let l = l as usize;
            (dist2_f64(x, &centroids[l * d..(l + 1) * d]), i)
        })
        .collect();
    let order = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    let m = m.min(dists.len());
    if m == 0 {
        return Vec::new();
    }
    if m < dists.len() {
        dists.select_nth_unstable_by(m - 1, order);
        dists.truncate(m);
    }
    dists.sort_unstable_by(order);
    let mut out: Vec<Candidate> = dists
        .into_iter()
        .map(|(dist, i)| Candidate {
            dist,
            index: index_offset + i as u64,
            label: labels[i],
            weight: weights.map_or(1.0, |w| w[i]),
            point: data[i * d..(i + 1) * d]
                .iter()
                .map(|v| v.to_f64())
                .collect(),
        })
        .collect();
    out.sort_by(candidate_order);
    out
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
        let mut dots = vec![T::zero(); if prep.gemm { CHUNK * k } else { 0 }];
        nearest_chunk(x, d, k, &prep, &mut dots, out);
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
