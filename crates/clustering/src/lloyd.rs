//! Lloyd's iteration, shared by every backend: a backend only implements [`Stepper`] (assign
//! every point to its nearest centroid and return per-cluster sums); the centroid update,
//! empty-cluster relocation and convergence test live here, so all backends (and MPI ranks)
//! make exactly the same decisions from the same statistics. The host-side helpers both
//! backends share (distances in `f64`, the farthest points for relocation) live here too, so
//! `cuda.rs` imports no other backend.

use rayon::prelude::*;

use crate::{Element, KMeansError};

/// What one assignment pass produces: per-cluster weighted sums of the points (`k * d`,
/// row-major), per-cluster weights, the weighted inertia against the centroids used, and how
/// many points changed label.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StepStats {
    pub(crate) sums: Vec<f64>,
    pub(crate) counts: Vec<f64>,
    pub(crate) inertia: f64,
    pub(crate) changed: u64,
}

impl StepStats {
    pub(crate) fn zeros(k: usize, d: usize) -> Self {
        StepStats {
            sums: written_zeros(k * d),
            counts: written_zeros(k),
            inertia: 0.0,
            changed: 0,
        }
    }

    /// Adds `other` into `self`, element by element.
    pub(crate) fn add(&mut self, other: &StepStats) {
        for (a, b) in self.sums.iter_mut().zip(&other.sums) {
            *a += b;
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.inertia += other.inertia;
        self.changed += other.changed;
    }

    /// The statistics as one flat `f64` vector (for the GPU's stats buffer and MPI).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn to_flat(&self) -> Vec<f64> {
        let mut v = Vec::with_capacity(self.sums.len() + self.counts.len() + 2);
        v.extend_from_slice(&self.sums);
        v.extend_from_slice(&self.counts);
        v.push(self.inertia);
        v.push(self.changed as f64);
        v
    }

    /// The inverse of [`StepStats::to_flat`].
    pub(crate) fn from_flat(flat: &[f64], k: usize, d: usize) -> Self {
        let kd = k * d;
        debug_assert_eq!(flat.len(), kd + k + 2);
        StepStats {
            sums: flat[..kd].to_vec(),
            counts: flat[kd..kd + k].to_vec(),
            inertia: flat[kd + k],
            changed: flat[kd + k + 1].max(0.0) as u64,
        }
    }
}

/// `n` zeros for a step's sums: a buffer a finished step left in [`SPARE`] when one is large
/// enough, else a new one, written rather than allocated zeroed. A large zeroed allocation
/// maps the shared zero page, and the first write to each page after a read (the sums are
/// read, then written) costs a copy-on-write fault whose TLB flush interrupts every other
/// core; a new buffer of this size is also a fresh mapping whose pages fault in at every
/// step, which for short steps costs as much as their arithmetic.
pub(crate) fn written_zeros(n: usize) -> Vec<f64> {
    if n >= SPARE_MIN
        && let Some(mut v) = SPARE.lock().ok().and_then(|mut spare| {
            let i = spare.iter().position(|v| v.capacity() >= n)?;
            Some(spare.swap_remove(i))
        })
    {
        v.clear();
        v.resize(n, 0.0);
        return v;
    }
    let mut v = Vec::with_capacity(n);
    v.resize(n, 0.0);
    v
}

/// The sums buffers of finished steps, kept for the next steps' leaves (any thread's), at
/// most [`SPARE_BYTES`] in all; emptied when a fit ends ([`release_spare`]).
static SPARE: std::sync::Mutex<Vec<Vec<f64>>> = std::sync::Mutex::new(Vec::new());
/// The smallest buffer worth keeping (128 KiB: smaller ones come back from the allocator's
/// own free lists).
const SPARE_MIN: usize = 1 << 14;
/// The most bytes [`SPARE`] keeps.
const SPARE_BYTES: usize = 32 << 20;

/// Keeps `v` in [`SPARE`] when it is large enough and there is room.
fn spare(v: Vec<f64>) {
    if v.capacity() < SPARE_MIN {
        return;
    }
    if let Ok(mut spare) = SPARE.lock() {
        let held: usize = spare.iter().map(|b| b.capacity() * 8).sum();
        if held + v.capacity() * 8 <= SPARE_BYTES {
            spare.push(v);
        }
    }
}

/// Frees every buffer [`SPARE`] keeps (at the end of a fit).
pub(crate) fn release_spare() {
    if let Ok(mut spare) = SPARE.lock() {
        spare.clear();
    }
}

impl Drop for StepStats {
    fn drop(&mut self) {
        spare(std::mem::take(&mut self.sums));
    }
}

/// A point far from its nearest centroid, found by
/// [`chunk_farthest`](crate::chunked::chunk_farthest): a candidate to seed an empty cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct FarPoint {
    /// Squared distance to its nearest centroid.
    pub dist: f64,
    /// Global row index (ties in `dist` go to the lower index).
    pub index: u64,
    /// Its nearest centroid.
    pub label: u32,
    /// Its sample weight.
    pub weight: f64,
    /// Its coordinates.
    pub point: Vec<f64>,
}

/// A point far from the centroid of its cluster, a candidate to seed an empty cluster: the
/// chunked API's [`FarPoint`], so that chunks' far points are candidates as they are.
pub(crate) type Candidate = FarPoint;

/// Farthest first, then lower index first: a total order, so every backend and every rank
/// picks the same points.
pub(crate) fn candidate_order(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    b.dist.total_cmp(&a.dist).then(a.index.cmp(&b.index))
}

/// One backend's view of the data.
pub(crate) trait Stepper {
    /// Number of dimensions.
    fn dim(&self) -> usize;
    /// Assigns every point to its nearest centroid (`k * d`, row-major, ties to the lower
    /// index), remembers the labels and returns the statistics.
    fn step(&mut self, centroids: &[f64], k: usize) -> Result<StepStats, KMeansError>;
    /// The exact inertia of the last step's labels against `centroids` (those it used), when
    /// that step's own inertia came from the faster formula (`None` when it was exact): a
    /// fit's final inertia is exact on every CPU path.
    fn exact_inertia(&mut self, _centroids: &[f64], _k: usize) -> Result<Option<f64>, KMeansError> {
        Ok(None)
    }
    /// The `m` points farthest from their centroid under the labels of the last `step`
    /// (which used `centroids`), in [`candidate_order`].
    fn farthest(&mut self, centroids: &[f64], m: usize) -> Result<Vec<Candidate>, KMeansError>;
}

/// Parameters of one Lloyd run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LloydParams {
    pub(crate) k: usize,
    pub(crate) max_iter: usize,
    /// When the summed squared centroid shift is small enough to stop.
    pub(crate) limit: ShiftLimit,
    /// Iterations already done (a resumed run starts from its checkpoint's count).
    pub(crate) start_iteration: usize,
    /// Whether the run ends with the labels of its final centroids (one more assignment
    /// pass, unless the last iteration changed no label); without, the outcome's statistics
    /// are those of the last iteration, against the centroids it started from.
    pub(crate) final_labels: bool,
}

/// When a Lloyd run has converged, from the summed squared centroid shift of an iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ShiftLimit {
    /// The shift is at most this value (scikit-learn's `tol` times the data's variance).
    Absolute(f64),
    /// The shift is at most this ratio of the previous iteration's shift (the k-means-on-CUDA
    /// seed's rule; in the first iteration, of 0: it stops only when nothing moved).
    OfPrevious(f64),
}

impl ShiftLimit {
    /// scikit-learn's rule: `tol` times the mean per-column variance of the data, which
    /// `variance` computes only when `tol` is not 0 (it costs two passes over the data).
    pub(crate) fn of_variance(tol: f64, variance: impl FnOnce() -> f64) -> Self {
        ShiftLimit::Absolute(if tol == 0.0 { 0.0 } else { tol * variance() })
    }
}

/// The end of a Lloyd run. The labels live in the stepper (they were set by the last step,
/// which used `centroids`, unless `final_labels` was off: then they are the last iteration's).
#[derive(Debug, Clone)]
pub(crate) struct LloydOutcome {
    pub(crate) centroids: Vec<f64>,
    pub(crate) last: StepStats,
    pub(crate) iterations: usize,
    pub(crate) converged: bool,
}

/// The stopping rules of a Lloyd run, told one iteration at a time what happened: the loop of
/// every backend ([`lloyd`]) and the chunked driver of `warpath.dask`
/// ([`LloydRun`](crate::chunked::LloydRun)) both ask it, so they stop on the same criteria.
///
/// A run stops after `max_iter` iterations; or, converged, when an assignment pass changed no
/// label (the update would give the same centroids, so it is skipped), or when an update moved
/// the centroids by a summed squared shift within the [`ShiftLimit`].
#[derive(Debug, Clone)]
pub(crate) struct LloydState {
    limit: ShiftLimit,
    max_iter: usize,
    iteration: usize,
    previous_shift: f64,
    /// Whether a pass of this run assigned labels (the next one can compare with them).
    labels_known: bool,
    converged: bool,
    /// Whether the last pass's labels are those of the current centroids.
    labels_final: bool,
}

impl LloydState {
    /// A run that has done `start_iteration` iterations (a resumed run starts from its
    /// checkpoint's count).
    pub(crate) fn new(limit: ShiftLimit, max_iter: usize, start_iteration: usize) -> Self {
        LloydState {
            limit,
            max_iter,
            iteration: start_iteration,
            previous_shift: 0.0,
            labels_known: false,
            converged: false,
            labels_final: false,
        }
    }

    /// Whether another iteration runs.
    pub(crate) fn running(&self) -> bool {
        !self.converged && self.iteration < self.max_iter
    }

    /// Iterations done.
    pub(crate) fn iteration(&self) -> usize {
        self.iteration
    }

    /// Whether the run met a convergence rule (rather than `max_iter`).
    pub(crate) fn converged(&self) -> bool {
        self.converged
    }

    /// Whether the last assignment pass's labels are those of the current centroids (then
    /// the final labels need no further pass).
    pub(crate) fn labels_final(&self) -> bool {
        self.labels_final
    }

    /// Records an assignment pass that changed `changed` labels (`None` when nobody counted
    /// them: chunk tasks keep no labels). Returns whether the run converged on it, the labels
    /// being those of the previous pass: then the update is skipped.
    pub(crate) fn assigned(&mut self, changed: Option<u64>) -> bool {
        self.iteration += 1;
        if self.labels_known && changed == Some(0) {
            self.converged = true;
            self.labels_final = true;
        }
        self.labels_known = true;
        self.converged
    }

    /// Records the update that followed the last pass, which moved the centroids by a summed
    /// squared `shift` ([`shift`]); returns whether the run converged.
    pub(crate) fn updated(&mut self, shift: f64) -> bool {
        let bound = match self.limit {
            ShiftLimit::Absolute(t) => t,
            ShiftLimit::OfPrevious(r) => r * self.previous_shift,
        };
        self.previous_shift = shift;
        // Centroids that did not move: the pass's labels are those of the new centroids.
        self.labels_final = shift == 0.0;
        self.converged = shift <= bound;
        self.converged
    }
}

/// The summed squared shift from centroids `old` to `new`, added in index order.
pub(crate) fn shift(new: &[f64], old: &[f64]) -> f64 {
    new.iter().zip(old).map(|(a, b)| (a - b) * (a - b)).sum()
}

/// Runs Lloyd's iteration from `centroids` until [`LloydState`] stops it (see there).
/// `after_iteration` sees each new set of centroids (checkpoints, progress bars); an error from
/// it stops the run.
pub(crate) fn lloyd<S: Stepper>(
    stepper: &mut S,
    mut centroids: Vec<f64>,
    p: &LloydParams,
    mut after_iteration: impl FnMut(usize, &[f64], &StepStats) -> Result<(), KMeansError>,
) -> Result<LloydOutcome, KMeansError> {
    let d = stepper.dim();
    debug_assert_eq!(centroids.len(), p.k * d);
    let mut state = LloydState::new(p.limit, p.max_iter, p.start_iteration);
    let mut last = None;
    // Whether the run stopped on a pass that changed no label.
    let mut same_labels = false;
    while state.running() {
        let stats = stepper.step(&centroids, p.k)?;
        if state.assigned(Some(stats.changed)) {
            same_labels = true;
            last = Some(stats);
            break;
        }
        let updated = update_centroids(stepper, &centroids, p.k, d, &stats)?;
        let moved = shift(&updated, &centroids);
        centroids = updated;
        after_iteration(state.iteration(), &centroids, &stats)?;
        state.updated(moved);
        last = Some(stats);
    }
    // The statistics of the final centroids' labels, unless `final_labels` is off: then
    // the last iteration's, against the centroids it started from.
    let (mut last, labels_final) = match last {
        Some(s) if same_labels => (s, true),
        Some(s) if !p.final_labels => (s, false),
        // The last update moved nothing: the last pass's labels are the final ones.
        Some(s) if state.labels_final() => (s, true),
        _ => (stepper.step(&centroids, p.k)?, true),
    };
    if labels_final && let Some(inertia) = stepper.exact_inertia(&centroids, p.k)? {
        last.inertia = inertia;
    }
    release_spare();
    Ok(LloydOutcome {
        centroids,
        last,
        iterations: state.iteration(),
        converged: state.converged(),
    })
}

/// New centroids from one step's statistics, as scikit-learn's Lloyd update computes them:
/// the weighted mean of each cluster; the empty clusters (zero weight), in index order, are
/// moved to the points farthest from their centroids, farthest first (scikit-learn pairs them in
/// `argpartition` order, which is this one for a few empty clusters), each point taken out of
/// its old cluster's sums, even when that leaves its old cluster empty. A cluster that is then
/// empty (or that no point could be moved to, when every point lies on its centroid) is placed
/// as scikit-learn 1.9's `_average_centers` places it (see [`next_centroids`]).
///
/// [`next_centroids`]: crate::chunked::next_centroids
pub(crate) fn update_centroids<S: Stepper>(
    stepper: &mut S,
    old: &[f64],
    k: usize,
    d: usize,
    stats: &StepStats,
) -> Result<Vec<f64>, KMeansError> {
    update_centroids_with(|m| stepper.farthest(old, m), k, d, stats)
}

/// [`update_centroids`] with the far points coming from `farthest(m)` (the `m` points farthest
/// from their centroid under `old`, in [`candidate_order`]), which is called only when a
/// cluster is empty: chunked fits gather them from every chunk.
pub(crate) fn update_centroids_with(
    farthest: impl FnOnce(usize) -> Result<Vec<Candidate>, KMeansError>,
    k: usize,
    d: usize,
    stats: &StepStats,
) -> Result<Vec<f64>, KMeansError> {
    let mut sums = stats.sums.clone();
    let mut counts = stats.counts.clone();
    let empties: Vec<usize> = (0..k).filter(|&j| counts[j] <= 0.0).collect();
    if !empties.is_empty() {
        let cands = farthest(empties.len())?;
        // Every point on its centroid (more clusters than distinct points): nothing to move.
        if cands.first().is_some_and(|c| c.dist > 0.0) {
            for (&j, c) in empties.iter().zip(&cands) {
                let src = c.label as usize;
                for t in 0..d {
                    sums[src * d + t] -= c.weight * c.point[t];
                    sums[j * d + t] = c.weight * c.point[t];
                }
                counts[src] -= c.weight;
                counts[j] = c.weight;
            }
        }
    }
    // The biggest cluster (the first of equal weights), for the clusters left empty.
    let biggest = (0..k).fold(0, |b, j| if counts[j] > counts[b] { j } else { b });
    let mut mean = None;
    let mut out = vec![0.0; k * d];
    for j in 0..k {
        if counts[j] > 0.0 {
            for t in 0..d {
                out[j * d + t] = sums[j * d + t] / counts[j];
            }
        } else if biggest < j {
            out.copy_within(biggest * d..(biggest + 1) * d, j * d);
        } else {
            // scikit-learn averages the centres in index order, so this one copies the
            // biggest cluster's sum, of the data it centred on its mean `mu`: S - W mu + mu.
            let mu = mean.get_or_insert_with(|| data_mean(stats, d));
            let w = counts[biggest];
            for t in 0..d {
                out[j * d + t] = sums[biggest * d + t] - w * mu[t] + mu[t];
            }
        }
    }
    Ok(out)
}

/// The weighted mean of the data, from one step's statistics: with unit weights the column
/// mean scikit-learn centres the data on (its mean ignores sample weights).
fn data_mean(stats: &StepStats, d: usize) -> Vec<f64> {
    let total: f64 = stats.counts.iter().sum();
    let mut mu = vec![0.0; d];
    for row in stats.sums.chunks_exact(d) {
        for (m, v) in mu.iter_mut().zip(row) {
            *m += v;
        }
    }
    mu.iter_mut().for_each(|m| *m /= total);
    mu
}

/// Squared Euclidean distance in `f64`, the one every CPU label is defined by: the point
/// widened to `f64`, one subtraction and one multiplication per coordinate, the squares added
/// into eight interleaved partial sums (coordinate `t` into sum `t % 8`, in order) that
/// [`combine8`] adds in a fixed order. The order vectorises, and the assignment engine's
/// direct path reproduces it lane by lane, so both give the same bits.
///
/// From eight coordinates on, with AVX-512 or AVX2, it runs [`dist2_wide`]'s explicit
/// registers (the same operations lane by lane, so the same bits): the compiler splits the
/// portable loop's eight sums into two- and four-lane pieces.
#[inline(always)]
pub(crate) fn dist2_f64<T: Element>(x: &[T], c: &[f64]) -> f64 {
    debug_assert_eq!(x.len(), c.len());
    #[cfg(target_arch = "x86_64")]
    if let Some(v) = dist2_wide::squares::<T, true>(x, &c[..x.len()]) {
        return v;
    }
    dist2_portable(x, c)
}

/// [`dist2_f64`] in plain Rust (the reference the wide versions reproduce).
#[inline(always)]
pub(crate) fn dist2_portable<T: Element>(x: &[T], c: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let (xs, xr) = x.as_chunks::<8>();
    let (cs, cr) = c.as_chunks::<8>();
    for (a, b) in xs.iter().zip(cs) {
        // Whole arrays: the shape the vectoriser takes (one register of eight lanes).
        let v: [f64; 8] = std::array::from_fn(|l| a[l].to_f64() - b[l]);
        for l in 0..8 {
            acc[l] += v[l] * v[l];
        }
    }
    for (l, (a, b)) in xr.iter().zip(cr).enumerate() {
        let t = a.to_f64() - b;
        acc[l] += t * t;
    }
    combine8(acc)
}

/// `|x|^2` in `f64`: eight interleaved partial sums combined by [`combine8`], in explicit
/// registers from eight values on ([`dist2_f64`]'s, against the origin), the same bits.
#[inline(always)]
pub(crate) fn norm2<T: Element>(x: &[T]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if let Some(v) = dist2_wide::squares::<T, false>(x, &[]) {
        return v;
    }
    norm2_portable(x)
}

/// [`norm2`] in plain Rust (the reference the wide versions reproduce).
#[inline(always)]
pub(crate) fn norm2_portable<T: Element>(x: &[T]) -> f64 {
    let mut acc = [0.0f64; 8];
    let (xs, xr) = x.as_chunks::<8>();
    for a in xs {
        let v: [f64; 8] = std::array::from_fn(|l| a[l].to_f64());
        for l in 0..8 {
            acc[l] += v[l] * v[l];
        }
    }
    for (l, a) in xr.iter().enumerate() {
        let v = a.to_f64();
        acc[l] += v * v;
    }
    combine8(acc)
}

/// The fixed order in which [`dist2_f64`] adds its eight partial sums.
#[inline(always)]
pub(crate) fn combine8(a: [f64; 8]) -> f64 {
    ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
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

/// [`dist2_f64`] and [`norm2`] in explicit vector registers: partial sum `l` in lane `l`
/// (coordinates `l, l + 8, ...`, in order), a subtraction (`DIFF`: the centre's coordinate;
/// none for a norm), a multiplication and an addition per coordinate (no fused multiply-add),
/// combined as [`combine8`] does; the same bits as [`dist2_portable`] and [`norm2_portable`].
#[cfg(target_arch = "x86_64")]
mod dist2_wide {
    use crate::Element;
    use std::arch::x86_64::*;

    /// The sum of the squares of `x - c` (`DIFF`) or of `x` (`c` unread) in the widest
    /// registers the CPU has, or `None` below eight values or without AVX2.
    #[inline(always)]
    pub(crate) fn squares<T: Element, const DIFF: bool>(x: &[T], c: &[f64]) -> Option<f64> {
        debug_assert!(!DIFF || x.len() == c.len());
        if x.len() < 8 {
            return None;
        }
        if crate::isa::has_avx512() {
            // SAFETY: the CPU has AVX-512 (checked); with `DIFF` the lengths are equal.
            return Some(unsafe { dist2_avx512::<T, DIFF>(x, c) });
        }
        if crate::isa::has_avx2() {
            // SAFETY: the CPU has AVX2 (checked); with `DIFF` the lengths are equal.
            return Some(unsafe { dist2_avx2::<T, DIFF>(x, c) });
        }
        None
    }

    /// Whether `T` is `f32` (`Element` is sealed to `f32` and `f64`).
    #[inline(always)]
    fn is_f32<T: Element>() -> bool {
        size_of::<T>() == 4
    }

    /// With AVX-512: one register of the eight sums, the last `d % 8` coordinates by masks.
    ///
    /// # Safety
    /// The CPU has AVX-512F, VL, BW and DQ; with `DIFF`, `x.len() == c.len()`.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    #[inline]
    pub(crate) unsafe fn dist2_avx512<T: Element, const DIFF: bool>(x: &[T], c: &[f64]) -> f64 {
        let d = x.len();
        let (xp, cp) = (x.as_ptr(), c.as_ptr());
        // SAFETY: every load reads coordinates below `d` (the last ones under a mask).
        unsafe {
            let load = |u: usize, m: __mmask8| -> (__m512d, __m512d) {
                let xv = if is_f32::<T>() {
                    _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, xp.add(u).cast()))
                } else {
                    _mm512_maskz_loadu_pd(m, xp.add(u).cast())
                };
                let cv = if DIFF {
                    _mm512_maskz_loadu_pd(m, cp.add(u))
                } else {
                    _mm512_setzero_pd()
                };
                (xv, cv)
            };
            let mut acc = _mm512_setzero_pd();
            let mut u = 0;
            while u + 8 <= d {
                let (xv, cv) = load(u, 0xff);
                let t = _mm512_sub_pd(xv, cv);
                acc = _mm512_add_pd(acc, _mm512_mul_pd(t, t));
                u += 8;
            }
            if u < d {
                let m = ((1u32 << (d - u)) - 1) as __mmask8;
                let (xv, cv) = load(u, m);
                let t = _mm512_sub_pd(xv, cv);
                acc = _mm512_mask_add_pd(acc, m, acc, _mm512_mul_pd(t, t));
            }
            combine(
                _mm512_castpd512_pd256(acc),
                _mm512_extractf64x4_pd::<1>(acc),
            )
        }
    }

    /// With AVX2: two registers of four sums (lanes 0-3 and 4-7), the last `d % 8`
    /// coordinates by masks.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; with `DIFF`, `x.len() == c.len()`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(crate) unsafe fn dist2_avx2<T: Element, const DIFF: bool>(x: &[T], c: &[f64]) -> f64 {
        let d = x.len();
        let (xp, cp) = (x.as_ptr(), c.as_ptr());
        // SAFETY: every load reads coordinates below `d` (the last ones under a mask).
        unsafe {
            // Four coordinates from `u`, of which the first `r` (at most 4) are read and the
            // others are 0.
            let load = |u: usize, r: usize| -> (__m256d, __m256d) {
                if r >= 4 {
                    let xv = if is_f32::<T>() {
                        _mm256_cvtps_pd(_mm_loadu_ps(xp.add(u).cast()))
                    } else {
                        _mm256_loadu_pd(xp.add(u).cast())
                    };
                    let cv = if DIFF {
                        _mm256_loadu_pd(cp.add(u))
                    } else {
                        _mm256_setzero_pd()
                    };
                    return (xv, cv);
                }
                let m64 = _mm256_cmpgt_epi64(
                    _mm256_set1_epi64x(r as i64),
                    _mm256_setr_epi64x(0, 1, 2, 3),
                );
                let xv = if is_f32::<T>() {
                    let m32 = _mm_cmpgt_epi32(_mm_set1_epi32(r as i32), _mm_setr_epi32(0, 1, 2, 3));
                    _mm256_cvtps_pd(_mm_maskload_ps(xp.add(u).cast(), m32))
                } else {
                    _mm256_maskload_pd(xp.add(u).cast(), m64)
                };
                let cv = if DIFF {
                    _mm256_maskload_pd(cp.add(u), m64)
                } else {
                    _mm256_setzero_pd()
                };
                (xv, cv)
            };
            let (mut lo, mut hi) = (_mm256_setzero_pd(), _mm256_setzero_pd());
            let mut u = 0;
            while u < d {
                // The tail's masked-off lanes load 0 and add 0 * 0: the sums (never negative)
                // keep their bits.
                let r = d - u;
                let (x0, c0) = load(u, r);
                let t0 = _mm256_sub_pd(x0, c0);
                lo = _mm256_add_pd(lo, _mm256_mul_pd(t0, t0));
                if r > 4 {
                    let (x1, c1) = load(u + 4, r - 4);
                    let t1 = _mm256_sub_pd(x1, c1);
                    hi = _mm256_add_pd(hi, _mm256_mul_pd(t1, t1));
                }
                u += 8;
            }
            combine(lo, hi)
        }
    }

    /// [`combine8`](super::combine8) of the sums `lo` (lanes 0-3) and `hi` (lanes 4-7):
    /// `((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7))`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn combine(lo: __m256d, hi: __m256d) -> f64 {
        let h = _mm256_add_pd(lo, hi);
        let q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd::<1>(h));
        _mm_cvtsd_f64(q) + _mm_cvtsd_f64(_mm_unpackhi_pd(q, q))
    }
}

#[cfg(test)]
mod dist2_tests {
    use super::{dist2_f64, dist2_portable, norm2, norm2_portable};
    use crate::Element;
    use rand::{Rng, SeedableRng};

    /// Values over many magnitudes (and exact zeros), so that the additions round.
    fn values<T: Element>(rng: &mut impl Rng, d: usize) -> Vec<T> {
        (0..d)
            .map(|_| {
                let v = if rng.random_bool(0.1) {
                    0.0
                } else {
                    rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-6..6))
                };
                T::from_f64(v)
            })
            .collect()
    }

    fn same_bits<T: Element>() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for d in 0..80 {
            for _ in 0..20 {
                let x = values::<T>(&mut rng, d);
                let c: Vec<f64> = values::<T>(&mut rng, d)
                    .iter()
                    .map(|v| v.to_f64() * 1.3)
                    .collect();
                let want = dist2_portable(&x, &c).to_bits();
                assert_eq!(dist2_f64(&x, &c).to_bits(), want, "{} d {d}", T::NAME);
                let norm = norm2_portable(&x).to_bits();
                assert_eq!(norm2(&x).to_bits(), norm, "norm {} d {d}", T::NAME);
                #[cfg(target_arch = "x86_64")]
                if d > 0 {
                    if crate::isa::has_avx2() {
                        // SAFETY: AVX2 checked, equal lengths.
                        let got = unsafe { super::dist2_wide::dist2_avx2::<T, true>(&x, &c) };
                        assert_eq!(got.to_bits(), want, "avx2 {} d {d}", T::NAME);
                    }
                    if crate::isa::has_avx512() {
                        // SAFETY: AVX-512 checked, equal lengths.
                        let got = unsafe { super::dist2_wide::dist2_avx512::<T, true>(&x, &c) };
                        assert_eq!(got.to_bits(), want, "avx512 {} d {d}", T::NAME);
                    }
                }
            }
        }
    }

    #[test]
    fn wide_versions_give_the_portable_bits_for_distances_and_norms() {
        same_bits::<f32>();
        same_bits::<f64>();
    }
}
