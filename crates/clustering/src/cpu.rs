//! CPU backends: the sequential reference (the test oracle) and the rayon path.
//!
//! The rayon path splits the points into fixed blocks of rows; each block accumulates its own
//! partial sums sequentially, and the blocks' partials are merged pairwise along a fixed
//! binary tree (halves run with `rayon::join`). The tree depends only on `n`, `k` and `d`, so
//! results are bit-identical whatever the number of threads. Inside a block, points go in
//! tiles of [`TILE_ROWS`] through the assignment engine ([`crate::assign`]), which gives every
//! point the reference's label and exact distance.

use rayon::prelude::*;

use crate::assign::{
    Centres, Method, POINT_LANES, STEP_TILE_ROWS, Scratch, TILE_ROWS, dist2_small,
    nearest_in_order, nearest_tile, nearest8_in_order,
};
use crate::centres::{STREAMED_BYTES, exact_step_inertia, step_method};
use crate::lloyd::{Candidate, StepStats, Stepper, combine8, dist2_f64, farthest_points};
use crate::{Element, KMeansError};

/// Below this many multiply-adds (`n k d`) a step runs on the calling thread only: some tens
/// of microseconds of work, about what handing half of it to another thread costs (a step's
/// sums, labels and bookkeeping cost more than its multiply-adds when `k` is small, so the
/// second thread pays from a few thousand points on).
const PARALLEL_WORK: usize = 1 << 16;
/// Below this many points the passes over the data alone (the exact inertia, `predict`,
/// `transform`) run on the calling thread only.
const PARALLEL_THRESHOLD: usize = 1 << 14;

/// Whether a step over `n` points, `k` centres in `d` dimensions runs on all of rayon's
/// threads (the reduction tree is the same either way, so the result is too).
pub(crate) fn parallel_step(n: usize, k: usize, d: usize) -> bool {
    n.saturating_mul(k).saturating_mul(d) >= PARALLEL_WORK
        && n > block_rows(n, k, d)
        && rayon::current_num_threads() > 1
}

/// The threads of the team ([`crate::team::with_team`]) for a fit over `n` points, `k`
/// centres in `d` dimensions: rayon's thread count where the steps run in parallel
/// ([`parallel_step`]) and the fit is called from outside rayon's pool; 1 (no team) otherwise,
/// and inside the pool (a fit among others on rayon's threads shares them through rayon).
pub(crate) fn team_threads(n: usize, k: usize, d: usize) -> usize {
    if parallel_step(n, k, d) && rayon::current_thread_index().is_none() {
        rayon::current_num_threads()
    } else {
        1
    }
}

/// Rows per leaf of the reduction tree, a function of `n`, `k` and `d` only (never of the
/// thread count, so the sums have the same bits on any number of threads): 4,096 rows for
/// small `k * d`, more for large `k * d` so that the partials (`k * d` sums each) stay few,
/// but not more than a sixteenth of `n` (in whole tiles), so that every `rayon::join` has
/// work on both sides; and no fewer than about 2^18 multiply-adds a leaf (256 rows at least),
/// so that small data with many centres is still split among threads.
pub(crate) fn block_rows(n: usize, k: usize, d: usize) -> usize {
    let kd = (k * d).max(1);
    let by_kd = if kd <= 4096 {
        4096
    } else {
        (4096 * (kd / 4096).min(64)).next_multiple_of(TILE_ROWS)
    };
    let least = ((1usize << 18) / kd)
        .clamp(TILE_ROWS, 4096)
        .next_multiple_of(TILE_ROWS);
    let by_n = n.div_ceil(16).next_multiple_of(TILE_ROWS).max(least);
    by_kd.min(by_n)
}

/// The obviously correct assignment: every point against every centroid in `f64`
/// ([`dist2_f64`]), ties to the lower index, sums in point order.
pub(crate) fn step_reference<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    centroids: &[f64],
    k: usize,
    labels: &mut [u32],
) -> StepStats {
    // The step for `d == D` (`D > 0`) or any `d` (`D == 0`): a constant small dimension lets
    // the distance drop its empty partial sums ([`dist2_small`], the same bits); the seed's
    // shapes are d = 2.
    macro_rules! step_d {
        ($d:literal) => {{
            const D: usize = $d;
            let dist2 = |x: &[T], c: &[f64]| {
                if D > 0 {
                    let xv: [f64; D] = std::array::from_fn(|t| x[t].to_f64());
                    dist2_small(&xv, |u| c[u])
                } else {
                    dist2_f64(x, c)
                }
            };
            let mut st = StepStats::zeros(k, d);
            for (i, x) in data.chunks_exact(d).enumerate() {
                let mut best = f64::INFINITY;
                let mut bl = 0usize;
                for j in 0..k {
                    let dist = dist2(x, &centroids[j * d..(j + 1) * d]);
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
        }};
    }
    match d {
        1 => step_d!(1),
        2 => step_d!(2),
        4 => step_d!(4),
        8 => step_d!(8),
        _ => step_d!(0),
    }
}

/// The centres of one step, prepared for the assignment engine in the caller's order.
pub(crate) fn prepare<T: Element>(centroids: &[f64], k: usize, d: usize) -> Centres<T> {
    Centres::new(centroids, k, d, None, step_method(d, k), false)
}

/// Adds point `x` (weight `w`, exact squared distance `d2` to its centre) to cluster `label`.
#[inline(always)]
pub(crate) fn accumulate<T: Element>(st: &mut StepStats, x: &[T], w: f64, label: usize, d2: f64) {
    let d = x.len();
    add_scaled::<T, false>(
        &mut st.sums[label * d..(label + 1) * d],
        x,
        w,
        &mut [0.0; 8],
    );
    st.counts[label] += w;
    st.inertia += w * d2;
}

/// `sums += w x`, element by element in `f64`, eight lanes at a time; with `NORM`, also
/// `x_u^2` added to `acc[u % 8]` (the same pass over `x`).
#[inline(always)]
fn add_scaled<T: Element, const NORM: bool>(sums: &mut [f64], x: &[T], w: f64, acc: &mut [f64; 8]) {
    let (xs, xr) = x.as_chunks::<8>();
    let (ss, sr) = sums.as_chunks_mut::<8>();
    for (a, s) in xs.iter().zip(ss) {
        // Whole arrays in and out: the shape the vectoriser takes.
        let v: [f64; 8] = std::array::from_fn(|l| a[l].to_f64());
        let mut sv = *s;
        for l in 0..8 {
            sv[l] += w * v[l];
            if NORM {
                acc[l] += v[l] * v[l];
            }
        }
        *s = sv;
    }
    for (l, (a, s)) in xr.iter().zip(sr).enumerate() {
        let v = a.to_f64();
        *s += w * v;
        if NORM {
            acc[l] += v * v;
        }
    }
}

/// Adds point `x` (weight `w`) to cluster `label`, and `w |x|^2` to `q[label]` for
/// [`formula_inertia`] (the same pass over `x`).
#[inline(always)]
pub(crate) fn accumulate_norm<T: Element>(
    st: &mut StepStats,
    q: &mut [f64],
    x: &[T],
    w: f64,
    label: usize,
) {
    let d = x.len();
    let mut acc = [0.0f64; 8];
    add_scaled::<T, true>(&mut st.sums[label * d..(label + 1) * d], x, w, &mut acc);
    q[label] += w * combine8(acc);
    st.counts[label] += w;
}

/// The inertia of a leaf from its sums, without a distance per point:
/// `sum_j (q_j - 2 c_j . s_j + w_j |c_j|^2)` with `q_j` the weighted `|x|^2` of cluster `j`,
/// `s_j` its weighted sum and `w_j` its weight, each cluster's term at least 0. It loses digits
/// to cancellation when the points are far from the origin compared with their spread, so it
/// only serves the per-iteration reports; a fit's final inertia is computed point by point
/// ([`Stepper::exact_inertia`]).
pub(crate) fn formula_inertia(st: &StepStats, q: &[f64], centroids: &[f64], d: usize) -> f64 {
    let mut total = 0.0;
    for (j, &w) in st.counts.iter().enumerate() {
        if w == 0.0 {
            continue;
        }
        let c = &centroids[j * d..(j + 1) * d];
        let s = &st.sums[j * d..(j + 1) * d];
        let (mut cs, mut cc) = (0.0, 0.0);
        for (a, b) in c.iter().zip(s) {
            cs += a * b;
            cc += a * a;
        }
        total += (q[j] - 2.0 * cs + w * cc).max(0.0);
    }
    total
}

/// The exact inertia of `labels` against `centroids` (caller's order): the weighted
/// [`dist2_f64`] of every point, added in point order within the leaves of [`block_rows`]
/// rows and along the fixed tree, the order in which the direct path's steps add them.
pub(crate) fn exact_inertia<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    centroids: &[f64],
    k: usize,
    labels: &[u32],
) -> f64 {
    let n = labels.len();
    let parallel = n >= PARALLEL_THRESHOLD && rayon::current_num_threads() > 1;
    let sum = tree(
        n,
        block_rows(n, k, d),
        parallel,
        labels,
        &|first, rows, labels: &[u32]| {
            let mut s = 0.0;
            for (r, &l) in labels.iter().enumerate().take(rows) {
                let i = first + r;
                let l = l as usize;
                let x = &data[i * d..(i + 1) * d];
                s += weights.map_or(1.0, |w| w[i]) * dist2_f64(x, &centroids[l * d..(l + 1) * d]);
            }
            Inertia(s)
        },
    );
    sum.0
}

/// A sum of inertia shares (the leaves' result of [`exact_inertia`]).
pub(crate) struct Inertia(f64);

impl Merge for Inertia {
    fn merge(&mut self, other: &Self) {
        self.0 += other.0;
    }
}

impl Merge for StepStats {
    fn merge(&mut self, other: &Self) {
        self.add(other);
    }
}

/// What the reduction tree adds up.
pub(crate) trait Merge: Send {
    /// Adds `other` into `self`.
    fn merge(&mut self, other: &Self);
}

isa_versions!(
    /// One leaf of the reduction tree: rows `x` (with their weights and labels),
    /// sequentially, tile by tile.
    pub(crate) fn step_leaf<T: Element>(
        x: &[T],
        d: usize,
        weights: Option<&[f64]>,
        norms: Option<&[f64]>,
        packed: Option<&[T]>,
        cent: &Centres<T>,
        labels: &mut [u32],
    ) -> StepStats {
        if cent.in_order && cent.method == Method::Direct {
            // The small shapes: the dimension a constant, one fused pass per point.
            match d {
                1 => return small_leaf::<T, 1>(x, weights, cent, labels),
                2 => return small_leaf::<T, 2>(x, weights, cent, labels),
                3 => return small_leaf::<T, 3>(x, weights, cent, labels),
                4 => return small_leaf::<T, 4>(x, weights, cent, labels),
                5 => return small_leaf::<T, 5>(x, weights, cent, labels),
                6 => return small_leaf::<T, 6>(x, weights, cent, labels),
                7 => return small_leaf::<T, 7>(x, weights, cent, labels),
                8 => return small_leaf::<T, 8>(x, weights, cent, labels),
                _ => {}
            }
        }
        let mut st = StepStats::zeros(cent.k, d);
        if cent.method == Method::Fused {
            // The fused kernel ([`crate::fused::leaf`]); the inertia from the sums unless the
            // step's rule wants it exact ([`exact_step_inertia`]).
            let mut q = vec![0.0; cent.k];
            let exact = exact_step_inertia(d, cent.k);
            let rows = (weights, norms, packed);
            crate::fused::leaf(x, rows, cent, labels, (&mut st, &mut q, exact));
            if !exact {
                st.inertia = formula_inertia(&st, &q, &cent.c64, d);
            }
            return st;
        }
        // The direct path has every exact distance; the product path adds up the inertia from
        // the sums (formula_inertia) rather than compute one exact distance per point.
        let exact = cent.method == Method::Direct;
        let mut q = if exact { Vec::new() } else { vec![0.0; cent.k] };
        let mut s = Scratch::new();
        let mut out = vec![(0u32, 0f64); STEP_TILE_ROWS];
        for (ci, xc) in x.chunks(STEP_TILE_ROWS * d).enumerate() {
            let rows = xc.len() / d;
            nearest_tile(xc, cent, &mut s, &mut out[..rows]);
            for (r, xp) in xc.chunks_exact(d).enumerate() {
                let i = ci * STEP_TILE_ROWS + r;
                let (slot, d2) = out[r];
                let label = cent.id(slot);
                if labels[i] != label {
                    st.changed += 1;
                    labels[i] = label;
                }
                let w = weights.map_or(1.0, |w| w[i]);
                add_point(&mut st, &mut q, exact, xp, w, label as usize, d2);
            }
        }
        if !exact {
            st.inertia = formula_inertia(&st, &q, &cent.c64, d);
        }
        st
    }
);

/// Adds a point to its cluster: with its exact distance (direct path), or to the norms of the
/// inertia formula (product path).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_point<T: Element>(
    st: &mut StepStats,
    q: &mut [f64],
    exact: bool,
    x: &[T],
    w: f64,
    label: usize,
    d2: f64,
) {
    if exact {
        accumulate(st, x, w, label, d2);
    } else {
        accumulate_norm(st, q, x, w, label);
    }
}

/// [`step_leaf`] for `d == D <= 8` and centres in the caller's order (direct method): the
/// nearest centre ([`nearest_in_order`]), the label, the sums, the weight and the exact
/// distance in one pass per point, with the same operations in the same order as the general
/// leaf (so the same bits).
#[inline(always)]
fn small_leaf<T: Element, const D: usize>(
    x: &[T],
    weights: Option<&[f64]>,
    cent: &Centres<T>,
    labels: &mut [u32],
) -> StepStats {
    let mut st = StepStats::zeros(cent.k, D);
    let (xs, _) = x.as_chunks::<D>();
    // Blocks of eight rows labelled together, the rows in the vector lanes; the last few one
    // at a time, with the same distances and choice.
    let blocks = xs.chunks_exact(POINT_LANES);
    let tail = blocks.remainder();
    for (b, blk) in blocks.enumerate() {
        let (bj, bv) = nearest8_in_order::<T, D>(blk, cent);
        for l in 0..POINT_LANES {
            let i = b * POINT_LANES + l;
            let w = weights.map_or(1.0, |w| w[i]);
            add_small(&mut st, &mut labels[i], &blk[l], w, bj[l], bv[l]);
        }
    }
    let first = xs.len() - tail.len();
    for (r, xp) in tail.iter().enumerate() {
        let xv: [f64; D] = std::array::from_fn(|t| xp[t].to_f64());
        let (j, d2) = nearest_in_order::<T, D>(&xv, cent);
        let w = weights.map_or(1.0, |w| w[first + r]);
        add_small(&mut st, &mut labels[first + r], xp, w, j, d2);
    }
    st
}

/// A row of [`small_leaf`] (weight `w`, label `*label` until now) joins centre `j` at squared
/// distance `d2`. The rows join in order: the bits of the sums and the inertia depend on it.
#[inline(always)]
fn add_small<T: Element, const D: usize>(
    st: &mut StepStats,
    label: &mut u32,
    xp: &[T; D],
    w: f64,
    j: u32,
    d2: f64,
) {
    if *label != j {
        st.changed += 1;
        *label = j;
    }
    let j = j as usize;
    let s = &mut st.sums[j * D..(j + 1) * D];
    for t in 0..D {
        s[t] += w * xp[t].to_f64();
    }
    st.counts[j] += w;
    st.inertia += w * d2;
}

/// The rayon step: leaves of [`block_rows`] rows merged along a fixed binary tree. `rows`:
/// the rows' weights, and where at hand their `|x|^2` ([`row_norms_parallel`]), which the
/// fused kernel then reads instead of computing, and for a few centres the rows packed for
/// the narrow kernel ([`crate::fused::narrow::pack_rows`]).
pub(crate) fn step_parallel<T: Element>(
    data: &[T],
    d: usize,
    rows: crate::fused::RowAids<'_, T>,
    centroids: &[f64],
    k: usize,
    labels: &mut [u32],
) -> StepStats {
    let parallel = parallel_step(labels.len(), k, d);
    step_tree(data, d, rows, centroids, k, labels, parallel)
}

/// `|x|^2` of every row of `data` ([`crate::lloyd::norm2`]'s bits), on all threads: computed
/// once per fit for the steps of the fused kernel, which need them for every row.
pub(crate) fn row_norms_parallel<T: Element>(data: &[T], d: usize) -> Vec<f64> {
    let mut out = vec![0.0; data.len() / d];
    data.par_chunks(TILE_ROWS * d)
        .zip(out.par_chunks_mut(TILE_ROWS))
        .for_each(|(x, o)| crate::assign::row_norms_into(x, d, o));
    out
}

/// The largest data (in bytes) that a fit packs for the narrow kernel. The packed copy is as
/// large as the data, and a step reads both (the labels from the copy, the sums from the
/// rows): the narrow kernel pays while the two stay in the last-level cache, and loses to the
/// general kernel once they stream from memory (docs/benchmarks-history.md, clustering, "Few
/// centres").
const NARROW_MAX_BYTES: usize = 8 << 20;

/// Whether a fit over `len` values keeps its rows packed for `k` centres: the narrow
/// kernel serves them ([`crate::fused::narrow::narrow`]) and the copy is at most
/// [`NARROW_MAX_BYTES`].
fn narrow_packing<T>(len: usize, k: usize) -> bool {
    crate::fused::narrow::narrow(k) && len.saturating_mul(size_of::<T>()) <= NARROW_MAX_BYTES
}

/// The step of [`step_parallel`] with the halves of the tree run by `rayon::join` or, when
/// `parallel` is false, one after the other on the calling thread: the same tree, so the same
/// bits either way.
pub(crate) fn step_tree<T: Element>(
    data: &[T],
    d: usize,
    (weights, norms, packed): crate::fused::RowAids<'_, T>,
    centroids: &[f64],
    k: usize,
    labels: &mut [u32],
    parallel: bool,
) -> StepStats {
    let mut cent = prepare::<T>(centroids, k, d);
    cent.prefetch = size_of_val(data) >= STREAMED_BYTES;
    let n = labels.len();
    tree(
        n,
        block_rows(n, k, d),
        parallel,
        labels,
        &|first, rows, labels| {
            step_leaf(
                &data[first * d..(first + rows) * d],
                d,
                weights.map(|w| &w[first..first + rows]),
                norms.map(|v| &v[first..first + rows]),
                // Leaves start at whole tiles, so at whole packed blocks.
                packed.map(|p| &p[first * d..]),
                &cent,
                labels,
            )
        },
    )
}

/// Per-row state that the reduction tree hands to its leaves, split at a row.
pub(crate) trait Rows: Sized + Send {
    /// The first `at` rows and the rest.
    fn split_rows(self, at: usize) -> (Self, Self);
}

impl Rows for &mut [u32] {
    fn split_rows(self, at: usize) -> (Self, Self) {
        self.split_at_mut(at)
    }
}

impl Rows for &[u32] {
    fn split_rows(self, at: usize) -> (Self, Self) {
        self.split_at(at)
    }
}

/// Runs `leaf(first_row, rows, state)` on consecutive blocks of `rows_per_leaf` rows of `n`
/// and adds the results along a fixed binary tree (halves by `rayon::join` when `parallel`,
/// or the leaves on the fit's team, [`crate::team`], when this thread leads one): the tree
/// depends only on `n` and `rows_per_leaf`, so the sums have the same bits whatever the
/// number of threads.
pub(crate) fn tree<S: Rows, R: Merge>(
    n: usize,
    rows_per_leaf: usize,
    parallel: bool,
    state: S,
    leaf: &(impl Fn(usize, usize, S) -> R + Sync),
) -> R {
    let blocks = n.div_ceil(rows_per_leaf).max(1);
    if parallel && blocks > 1 && crate::team::leads_team() {
        return tree_on_team(n, rows_per_leaf, blocks, state, leaf);
    }
    tree_rec(0, blocks, 0, n, rows_per_leaf, parallel, state, leaf)
}

/// [`tree`] on the team this thread leads: every leaf's rows and state split off in row
/// order (as [`tree_rec`] splits them), the leaves run by the team, their results added
/// along the same tree by [`merge_rec`].
fn tree_on_team<S: Rows, R: Merge>(
    n: usize,
    rows_per_leaf: usize,
    blocks: usize,
    state: S,
    leaf: &(impl Fn(usize, usize, S) -> R + Sync),
) -> R {
    let mut rest = Some(state);
    let parts: Vec<(usize, usize, S)> = (0..blocks)
        .map(|i| {
            let first = (i * rows_per_leaf).min(n);
            let rows = ((i + 1) * rows_per_leaf).min(n) - first;
            let (mine, others) = rest
                .take()
                .expect("the rows not yet split")
                .split_rows(rows);
            rest = Some(others);
            (first, rows, mine)
        })
        .collect();
    let mut results: Vec<Option<R>> =
        crate::team::map_parts(parts, |_, (first, rows, s)| Some(leaf(first, rows, s)));
    merge_rec(&mut results, 0, blocks)
}

/// The results of leaves `lo..hi` added along [`tree_rec`]'s tree.
fn merge_rec<R: Merge>(results: &mut [Option<R>], lo: usize, hi: usize) -> R {
    if hi - lo <= 1 {
        return results[lo].take().expect("every leaf ran");
    }
    let mid = lo + (hi - lo) / 2;
    let mut a = merge_rec(results, lo, mid);
    a.merge(&merge_rec(results, mid, hi));
    a
}

#[allow(clippy::too_many_arguments)]
fn tree_rec<S: Rows, R: Merge>(
    lo: usize,
    hi: usize,
    first: usize,
    rows: usize,
    rows_per_leaf: usize,
    parallel: bool,
    state: S,
    leaf: &(impl Fn(usize, usize, S) -> R + Sync),
) -> R {
    if hi - lo <= 1 {
        return leaf(first, rows, state);
    }
    let mid = lo + (hi - lo) / 2;
    let split = ((mid - lo) * rows_per_leaf).min(rows);
    let (sa, sb) = state.split_rows(split);
    let run_a = move || tree_rec(lo, mid, first, split, rows_per_leaf, parallel, sa, leaf);
    let run_b = move || {
        tree_rec(
            mid,
            hi,
            first + split,
            rows - split,
            rows_per_leaf,
            parallel,
            sb,
            leaf,
        )
    };
    let (mut a, b) = if parallel {
        rayon::join(run_a, run_b)
    } else {
        (run_a(), run_b())
    };
    a.merge(&b);
    a
}

/// Per-column sums (`centre = None`) or sums of squared deviations from `centre`, over the
/// rows of `data`, in a deterministic order (fixed blocks, merged in order).
pub(crate) fn column_moments<T: Element>(data: &[T], d: usize, centre: Option<&[f64]>) -> Vec<f64> {
    if d == 0 {
        return Vec::new();
    }
    let rows = 1 << 14;
    // The centre repeated once per row of a strip (`block_moments`).
    let tiled: Option<Vec<f64>> =
        centre.map(|c| c.iter().copied().cycle().take(strip_len(d)).collect());
    let parts: Vec<Vec<f64>> = data
        .par_chunks(rows * d)
        .map(|blk| block_moments(blk, d, tiled.as_deref()))
        .collect();
    let mut total = vec![0.0; d];
    for p in parts {
        for t in 0..d {
            total[t] += p[t];
        }
    }
    total
}

/// Values in a strip of [`block_moments`]: whole rows, at least 64 values.
fn strip_len(d: usize) -> usize {
    64usize.div_ceil(d) * d
}

isa_versions!(
    /// [`column_moments`] of one block of rows (`tiled`: the centre repeated over a strip).
    ///
    /// Each strip of rows ([`strip_len`] values; the last one may be shorter) is added value
    /// by value into one sum per position of the strip, a loop that vectorises whatever `d`
    /// is (one row at a time into `d` sums would stay scalar at small `d` and carry each
    /// sum's dependency from row to row); the strip's sums of each column are folded at the
    /// end.
    fn block_moments<T: Element>(blk: &[T], d: usize, tiled: Option<&[f64]>) -> Vec<f64> {
        let mut acc = vec![0.0; strip_len(d)];
        match tiled {
            None => {
                for strip in blk.chunks(acc.len()) {
                    for (a, &v) in acc.iter_mut().zip(strip) {
                        *a += v.to_f64();
                    }
                }
            }
            Some(c) => {
                for strip in blk.chunks(acc.len()) {
                    for ((a, &v), &c) in acc.iter_mut().zip(strip).zip(c) {
                        let e = v.to_f64() - c;
                        *a += e * e;
                    }
                }
            }
        }
        let mut s = vec![0.0; d];
        for row in acc.chunks_exact(d) {
            for (s, &a) in s.iter_mut().zip(row) {
                *s += a;
            }
        }
        s
    }
);

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
    /// The rows' `|x|^2` for the fused kernel, computed at the first step that needs them.
    norms: Option<Vec<f64>>,
    /// The rows packed for the narrow kernel (a few centres), made at the first step that
    /// uses it.
    packed: Option<Vec<T>>,
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
            norms: None,
            packed: None,
        }
    }

    /// Forgets the labels (a new run starts).
    pub(crate) fn reset_labels(&mut self) {
        self.labels = vec![u32::MAX; self.data.len() / self.d];
    }

    /// The exact inertia of the labels against `centroids` (`k * d`).
    pub(crate) fn labels_inertia(&self, centroids: &[f64], k: usize) -> f64 {
        exact_inertia(self.data, self.d, self.weights, centroids, k, &self.labels)
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
            CpuKind::Parallel => {
                let (data, d) = (self.data, self.d);
                let fused = step_method(d, k) == Method::Fused;
                let norms: Option<&[f64]> = fused.then(|| {
                    self.norms
                        .get_or_insert_with(|| row_norms_parallel(data, d))
                        .as_slice()
                });
                let packed: Option<&[T]> =
                    (fused && narrow_packing::<T>(data.len(), k)).then(|| {
                        self.packed
                            .get_or_insert_with(|| crate::fused::narrow::pack_rows(data, d))
                            .as_slice()
                    });
                step_parallel(
                    data,
                    d,
                    (self.weights, norms, packed),
                    centroids,
                    k,
                    &mut self.labels,
                )
            }
        })
    }

    fn exact_inertia(&mut self, centroids: &[f64], k: usize) -> Result<Option<f64>, KMeansError> {
        let formula = self.kind == CpuKind::Parallel && !exact_step_inertia(self.d, k);
        Ok(formula.then(|| self.labels_inertia(centroids, k)))
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

isa_versions!(
    /// The labels (caller's indices) of the rows of `x`, at most [`TILE_ROWS`].
    fn labels_tile<T: Element>(
        x: &[T],
        cent: &Centres<T>,
        s: &mut Scratch<T>,
        out: &mut [u32],
    ) -> () {
        let mut res = [(0u32, 0f64); TILE_ROWS];
        let rows = out.len();
        nearest_tile(x, cent, s, &mut res[..rows]);
        for (o, r) in out.iter_mut().zip(&res[..rows]) {
            *o = cent.id(r.0);
        }
    }
);

/// Nearest centroid of every point (the fast path; `predict`).
pub(crate) fn assign_parallel<T: Element>(
    data: &[T],
    d: usize,
    centroids: &[f64],
    k: usize,
) -> Vec<u32> {
    let cent = prepare::<T>(centroids, k, d);
    let n = data.len() / d;
    let mut labels = vec![0u32; n];
    let work = |s: &mut Scratch<T>, (x, out): (&[T], &mut [u32])| labels_tile(x, &cent, s, out);
    if n >= PARALLEL_THRESHOLD {
        data.par_chunks(TILE_ROWS * d)
            .zip(labels.par_chunks_mut(TILE_ROWS))
            .for_each_init(Scratch::new, work);
    } else {
        let mut s = Scratch::new();
        data.chunks(TILE_ROWS * d)
            .zip(labels.chunks_mut(TILE_ROWS))
            .for_each(|p| work(&mut s, p));
    }
    labels
}

/// Euclidean distances of every row of `data` to every centroid (`n * k`, row-major), in `f64`
/// products tile by tile (float32 rows widened first), rounded to the data's type.
pub(crate) fn distances_parallel<T: Element>(
    data: &[T],
    d: usize,
    centroids: &[f64],
    k: usize,
) -> Vec<T> {
    let n = data.len() / d;
    let cent = Centres::<f64>::new(centroids, k, d, None, Method::Gemm, false);
    let mut out = vec![T::zero(); n * k];
    let work = |s: &mut (Scratch<f64>, Vec<f64>, Vec<f64>), (x, o): (&[T], &mut [T])| {
        let (scratch, wide, tile) = s;
        wide.clear();
        wide.extend(x.iter().map(|v| v.to_f64()));
        crate::assign::distances_tile(wide, &cent, scratch, tile);
        for (o, v) in o.iter_mut().zip(tile.iter()) {
            *o = T::from_f64(*v);
        }
    };
    let init = || (Scratch::new(), Vec::new(), Vec::new());
    if n >= PARALLEL_THRESHOLD / 4 {
        data.par_chunks(TILE_ROWS * d)
            .zip(out.par_chunks_mut(TILE_ROWS * k))
            .for_each_init(init, work);
    } else {
        let mut s = init();
        data.chunks(TILE_ROWS * d)
            .zip(out.chunks_mut(TILE_ROWS * k))
            .for_each(|p| work(&mut s, p));
    }
    out
}
