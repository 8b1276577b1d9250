//! k-means over data held in chunks by a task scheduler (Dask, `warpath.dask.KMeans`): the
//! per-chunk work and the centroid update, as pure functions of their inputs.
//!
//! One Lloyd iteration over chunked data is: [`chunk_stats`] on every chunk (per-cluster
//! weighted sums, weights and inertia share against the same centroids); the partials added
//! with [`ChunkStats::merge`] along a tree fixed by the chunks' order (never by which worker
//! finished first); then [`next_centroids`] on the total. When a cluster came out empty,
//! [`ChunkStats::far_points_needed`] says how many far points to ask each chunk for
//! ([`chunk_farthest`], global row indices), and [`next_centroids`] moves the empty clusters to
//! them exactly as [`KMeans::fit`](crate::KMeans::fit) does. Every function depends only on its
//! arguments, so a chunk recomputed elsewhere (after a worker died) gives the same bits and the
//! fit the same centroids.
//!
//! The partial sums are those of the single-process rayon path ([`KMeans::fit`](crate::KMeans::fit)):
//! fixed blocks of rows merged along a fixed binary tree, run on the calling thread (a
//! scheduler runs one task per worker thread) or on the GPU.

use std::borrow::Cow;

use gpu_runtime::{Exec, Target};
use ndarray::{Array2, ArrayView1, ArrayView2};

use crate::cpu::step_tree;
use crate::cuda::CudaStepper;
use crate::kmeans::{KMEANS_GPU_THRESHOLD, check_finite, check_weight_values, initial_centroids};
use crate::lloyd::{
    LloydState, ShiftLimit, StepStats, Stepper, candidate_order, farthest_points, shift,
    update_centroids_with,
};
use crate::{Element, Init, KMeansError};

/// The statistics of one chunk (or of several, merged) against `k` centroids of `d` columns.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkStats {
    /// Clusters.
    pub k: usize,
    /// Columns.
    pub d: usize,
    /// Per-cluster weighted sums of the points, `k * d`, row-major.
    pub sums: Vec<f64>,
    /// Per-cluster total weight (the point count when unweighted).
    pub counts: Vec<f64>,
    /// Sum of weight times squared distance to the nearest centroid.
    pub inertia: f64,
}

impl ChunkStats {
    /// Zero statistics (the neutral element of [`ChunkStats::merge`]).
    pub fn zeros(k: usize, d: usize) -> Self {
        ChunkStats {
            k,
            d,
            sums: vec![0.0; k * d],
            counts: vec![0.0; k],
            inertia: 0.0,
        }
    }

    /// Adds `other` into `self`, element by element (the caller fixes the order of merges,
    /// and with it the bits of the total).
    ///
    /// # Complexity
    /// `O(k d)`.
    ///
    /// # Errors
    /// [`KMeansError::ShapeMismatch`] when `k` or `d` differ.
    ///
    /// # Examples
    /// ```
    /// use clustering::chunked::ChunkStats;
    /// let mut a = ChunkStats::zeros(2, 1);
    /// let mut b = ChunkStats::zeros(2, 1);
    /// b.counts[1] = 3.0;
    /// a.merge(&b)?;
    /// assert_eq!(a.counts, vec![0.0, 3.0]);
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn merge(&mut self, other: &ChunkStats) -> Result<(), KMeansError> {
        if (other.k, other.d) != (self.k, self.d) {
            return Err(KMeansError::ShapeMismatch {
                what: "chunk statistics (k * d)",
                expected: self.k * self.d,
                found: other.k * other.d,
            });
        }
        for (a, b) in self.sums.iter_mut().zip(&other.sums) {
            *a += b;
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.inertia += other.inertia;
        Ok(())
    }

    /// How many far points [`next_centroids`] needs from every chunk, one for each empty
    /// cluster: 0 when none is empty (then no second pass is needed).
    ///
    /// # Complexity
    /// `O(k)`.
    ///
    /// # Examples
    /// ```
    /// use clustering::chunked::ChunkStats;
    /// let mut s = ChunkStats::zeros(2, 1);
    /// s.counts = vec![4.0, 1.0];
    /// assert_eq!(s.far_points_needed(), 0);
    /// s.counts = vec![5.0, 0.0];
    /// assert_eq!(s.far_points_needed(), 1);
    /// ```
    pub fn far_points_needed(&self) -> usize {
        self.counts.iter().filter(|&&c| c <= 0.0).count()
    }

    /// The statistics as one flat vector: sums, counts, inertia (`k d + k + 1` values).
    ///
    /// # Complexity
    /// `O(k d)`.
    ///
    /// # Examples
    /// ```
    /// use clustering::chunked::ChunkStats;
    /// let s = ChunkStats::zeros(3, 2);
    /// assert_eq!(s.to_flat().len(), 3 * 2 + 3 + 1);
    /// assert_eq!(ChunkStats::from_flat(&s.to_flat(), 3, 2)?, s);
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn to_flat(&self) -> Vec<f64> {
        let mut v = Vec::with_capacity(self.sums.len() + self.k + 1);
        v.extend_from_slice(&self.sums);
        v.extend_from_slice(&self.counts);
        v.push(self.inertia);
        v
    }

    /// The inverse of [`ChunkStats::to_flat`].
    ///
    /// # Complexity
    /// `O(k d)`.
    ///
    /// # Errors
    /// [`KMeansError::ShapeMismatch`] when `flat` does not hold `k d + k + 1` values.
    ///
    /// # Examples
    /// ```
    /// use clustering::chunked::ChunkStats;
    /// let s = ChunkStats::from_flat(&[1.0, 2.0, 1.0, 1.0, 0.5], 2, 1)?;
    /// assert_eq!((s.sums, s.counts, s.inertia), (vec![1.0, 2.0], vec![1.0, 1.0], 0.5));
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn from_flat(flat: &[f64], k: usize, d: usize) -> Result<Self, KMeansError> {
        let kd = k * d;
        KMeansError::check_shape(
            "flat chunk statistics (k d + k + 1)",
            kd + k + 1,
            flat.len(),
        )?;
        Ok(ChunkStats {
            k,
            d,
            sums: flat[..kd].to_vec(),
            counts: flat[kd..kd + k].to_vec(),
            inertia: flat[kd + k],
        })
    }
}

pub use crate::lloyd::FarPoint;

/// The rows of a checked chunk (row-major, borrowed when they already are), the centroids and
/// the weights, in `f64`.
type Prepared<'a, T> = (Cow<'a, [T]>, Vec<f64>, Option<Vec<f64>>);

/// Checks a chunk and its weights against the centroids.
fn prepare<'a, T: Element>(
    data: &ArrayView2<'a, T>,
    weights: Option<ArrayView1<'_, T>>,
    centroids: &ArrayView2<'_, f64>,
    row_offset: u64,
) -> Result<Prepared<'a, T>, KMeansError> {
    let (n, d) = data.dim();
    let k = centroids.nrows();
    if k == 0 {
        return Err(KMeansError::ZeroClusters);
    }
    if d == 0 {
        return Err(KMeansError::ZeroDimensions);
    }
    KMeansError::check_shape(
        "centroid columns (the chunk's dimension)",
        d,
        centroids.ncols(),
    )?;
    let x: Cow<'a, [T]> = match data.to_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(data.iter().copied().collect()),
    };
    check_finite(&x, d, row_offset as usize)?;
    let c: Vec<f64> = centroids.iter().copied().collect();
    check_finite(&c, d, 0).map_err(|e| match e {
        KMeansError::NonFiniteData { row, col, value } => KMeansError::InvalidParameter(format!(
            "centroid {row} has a non-finite value {value} in column {col}"
        )),
        other => other,
    })?;
    let w = match weights {
        None => None,
        Some(w) => {
            KMeansError::check_shape("chunk sample weights", n, w.len())?;
            let w: Vec<f64> = w.iter().map(|v| v.to_f64()).collect();
            check_weight_values(&w, row_offset)?;
            Some(w)
        }
    };
    Ok((x, c, w))
}

/// The statistics of one chunk of rows against `centroids` (`k x d`): for every cluster the
/// weighted sum and total weight of the rows nearest to it (ties to the lower index), and the
/// weighted squared distances of all rows to their nearest centroid.
///
/// On the CPU (`exec` resolves to the CPU) the rows go through the blocked tree of
/// [`KMeans::fit`](crate::KMeans::fit)'s rayon path on the calling thread, so the result
/// depends only on the arguments, bit for bit. On the GPU the direct path's sums (small `d` or
/// `k`) are added with atomics and may differ in the last bits from run to run. `row_offset` is the global index of the chunk's first row:
/// errors name global rows.
///
/// # Complexity
/// `O(n k d)` time, `O(k d)` extra memory (`O(n d)` more when the chunk is not row-major).
///
/// # Errors
/// [`KMeansError::ZeroClusters`], [`KMeansError::ZeroDimensions`],
/// [`KMeansError::ShapeMismatch`] (centroid columns, weights),
/// [`KMeansError::NonFiniteData`] naming the global row, [`KMeansError::InvalidWeights`],
/// [`KMeansError::InvalidParameter`] (non-finite centroids), [`KMeansError::Gpu`].
///
/// # Examples
/// ```
/// use clustering::chunked::chunk_stats;
/// use gpu_runtime::Exec;
/// use ndarray::array;
/// let chunk = array![[0.0], [1.0], [10.0]];
/// let centroids = array![[0.0], [9.0]];
/// let s = chunk_stats(chunk.view(), None, centroids.view(), 0, Exec::Cpu)?;
/// assert_eq!((s.sums, s.counts, s.inertia), (vec![1.0, 10.0], vec![2.0, 1.0], 2.0));
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn chunk_stats<T: Element>(
    data: ArrayView2<'_, T>,
    weights: Option<ArrayView1<'_, T>>,
    centroids: ArrayView2<'_, f64>,
    row_offset: u64,
    exec: Exec,
) -> Result<ChunkStats, KMeansError> {
    let (n, d) = data.dim();
    let k = centroids.nrows();
    let (x, c, w) = prepare(&data, weights, &centroids, row_offset)?;
    if n == 0 {
        return Ok(ChunkStats::zeros(k, d));
    }
    let mut st: StepStats = match exec.resolve(
        (n as u64).saturating_mul((k * d) as u64),
        KMEANS_GPU_THRESHOLD,
    )? {
        Target::Cpu => {
            let mut labels = vec![u32::MAX; n];
            step_tree(&x, d, (w.as_deref(), None, None), &c, k, &mut labels, false)
        }
        Target::Cuda(gpu) => CudaStepper::new(gpu, &x, d, w.as_deref())?.step(&c, k)?,
    };
    Ok(ChunkStats {
        k,
        d,
        sums: std::mem::take(&mut st.sums),
        counts: std::mem::take(&mut st.counts),
        inertia: st.inertia,
    })
}

/// The `m` rows of a chunk farthest from their nearest centroid, farthest first (ties to the
/// lower global index), with global indices `row_offset + i`.
///
/// # Complexity
/// `O(n k d + n log m)` time, `O(n + m d)` extra memory.
///
/// # Errors
/// As [`chunk_stats`] (never [`KMeansError::Gpu`]: this runs on the CPU).
///
/// # Examples
/// ```
/// use clustering::chunked::chunk_farthest;
/// use ndarray::array;
/// let chunk = array![[0.0], [1.0], [10.0]];
/// let centroids = array![[0.0], [1.0]];
/// let far = chunk_farthest(chunk.view(), None, centroids.view(), 1, 100)?;
/// assert_eq!((far[0].index, far[0].label, far[0].dist), (102, 1, 81.0));
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn chunk_farthest<T: Element>(
    data: ArrayView2<'_, T>,
    weights: Option<ArrayView1<'_, T>>,
    centroids: ArrayView2<'_, f64>,
    m: usize,
    row_offset: u64,
) -> Result<Vec<FarPoint>, KMeansError> {
    let (n, d) = data.dim();
    let k = centroids.nrows();
    let (x, c, w) = prepare(&data, weights, &centroids, row_offset)?;
    if n == 0 || m == 0 {
        return Ok(Vec::new());
    }
    let mut labels = vec![u32::MAX; n];
    step_tree(&x, d, (w.as_deref(), None, None), &c, k, &mut labels, false);
    Ok(farthest_points(
        &x,
        d,
        w.as_deref(),
        &c,
        &labels,
        m,
        row_offset,
    ))
}

/// The centroids after one Lloyd iteration, as [`KMeans::fit`](crate::KMeans::fit) and
/// scikit-learn's Lloyd update compute them: the weighted mean of each cluster of `stats` (all
/// chunks merged); the empty clusters, in index order, are moved to the farthest points of
/// `far` (the far points of every chunk, in any order; only needed when
/// [`ChunkStats::far_points_needed`] is not 0), farthest first, ties to the lower row index,
/// each taken out of its old cluster, even when that leaves its old cluster empty. A cluster
/// that is then empty (or that got no point, when every point lies on its centroid) goes where
/// scikit-learn 1.9 puts it: on the mean of the biggest cluster when that cluster's index is
/// lower, else on that cluster's weighted sum of the data centred on the data's mean, plus
/// the mean (scikit-learn fits centred data and averages the centres in index order, so it
/// copies a sum it has not yet divided; that far from the data, the cluster gets no point in
/// the next iteration and is moved again). The mean here is the weighted mean of the data
/// (from `stats`); scikit-learn's ignores sample weights, so with weights that one position
/// differs from scikit-learn's.
///
/// scikit-learn pairs the empty clusters with the far points in the order `np.argpartition`
/// returns them; for a few empty clusters that is farthest first, as here, but not always
/// (it depends on numpy's selection algorithm and the CPU), so a fit that empties many
/// clusters at once can differ from scikit-learn's.
///
/// # Complexity
/// `O(k d + f log f)` for `f` far points.
///
/// # Errors
/// [`KMeansError::ShapeMismatch`] when a far point has another dimension than `stats.d`.
///
/// # Examples
/// ```
/// use clustering::chunked::{ChunkStats, next_centroids};
/// use ndarray::array;
/// let s = ChunkStats::from_flat(&[3.0, 20.0, 3.0, 2.0, 0.0], 2, 1)?;
/// let c = next_centroids(&s, Vec::new())?;
/// assert_eq!(c, array![[1.0], [10.0]]);
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn next_centroids(stats: &ChunkStats, far: Vec<FarPoint>) -> Result<Array2<f64>, KMeansError> {
    let (k, d) = (stats.k, stats.d);
    for p in &far {
        KMeansError::check_shape("far point dimension", d, p.point.len())?;
    }
    let st = StepStats {
        sums: stats.sums.clone(),
        counts: stats.counts.clone(),
        inertia: stats.inertia,
        changed: 0,
    };
    let farthest = |m: usize| {
        let mut c = far;
        c.sort_by(candidate_order);
        c.truncate(m);
        Ok(c)
    };
    let new = update_centroids_with(farthest, k, d, &st)?;
    Ok(Array2::from_shape_vec((k, d), new).expect("k * d centroids"))
}

/// The driver of a chunked Lloyd run: the centroids and the stopping rules of
/// [`KMeans::fit`](crate::KMeans::fit), told one iteration's merged statistics at a time, so
/// that a scheduler computing the statistics stops where the local fit stops, with the same
/// centroids.
///
/// One iteration: [`chunk_stats`] of every chunk against [`LloydRun::centroids`], merged in a
/// fixed order; when [`ChunkStats::far_points_needed`] is not 0, [`chunk_farthest`] of every
/// chunk; then [`LloydRun::update`]. Iterate while [`LloydRun::running`]; then, when
/// [`LloydRun::needs_final_pass`], one more [`chunk_stats`] pass against the final centroids
/// goes to [`LloydRun::final_pass`], for their inertia.
///
/// The local fit also stops when an assignment pass changes no label. Chunk tasks keep no
/// labels, so they cannot count the changes; they need not: unchanged labels give the same
/// sums, so that update moves nothing and the shift rule stops at the same iteration, with
/// the same centroids.
///
/// # Examples
/// ```
/// use clustering::chunked::{LloydRun, chunk_stats};
/// use gpu_runtime::Exec;
/// use ndarray::array;
/// let x = array![[0.0], [1.0], [9.0], [10.0]];
/// let mut run = LloydRun::new(array![[0.0], [1.0]], 300, 1e-4, 20.5, true)?;
/// while run.running() {
///     let s = chunk_stats(x.view(), None, run.centroids(), 0, Exec::Cpu)?;
///     assert_eq!(s.far_points_needed(), 0);
///     run.update(&s, Vec::new())?;
/// }
/// if run.needs_final_pass() {
///     run.final_pass(&chunk_stats(x.view(), None, run.centroids(), 0, Exec::Cpu)?)?;
/// }
/// assert_eq!(run.centroids(), array![[0.5], [9.5]]);
/// assert!(run.converged() && run.inertia() == 1.0);
/// # Ok::<(), clustering::KMeansError>(())
/// ```
#[derive(Debug, Clone)]
pub struct LloydRun {
    centroids: Array2<f64>,
    state: LloydState,
    final_labels: bool,
    inertia: f64,
}

impl LloydRun {
    /// A run from `centroids` (`k x d`) of at most `max_iter` iterations that converges when
    /// an iteration moves the centroids by a summed squared shift of at most `tol` times
    /// `variance` (the mean per-column variance of the data; not used when `tol` is 0), as
    /// [`KMeans::tol`](crate::KMeans::tol). `final_labels` as
    /// [`KMeans::compute_labels`](crate::KMeans::compute_labels): whether the run ends with the
    /// inertia of its final centroids (a last pass, when needed) or with its last iteration's.
    ///
    /// # Complexity
    /// `O(k d)`.
    ///
    /// # Errors
    /// [`KMeansError::ZeroClusters`], [`KMeansError::ZeroDimensions`],
    /// [`KMeansError::InvalidParameter`] (non-finite centroids, a negative or non-finite `tol`
    /// or `variance`).
    pub fn new(
        centroids: Array2<f64>,
        max_iter: usize,
        tol: f64,
        variance: f64,
        final_labels: bool,
    ) -> Result<Self, KMeansError> {
        let (k, d) = centroids.dim();
        if k == 0 {
            return Err(KMeansError::ZeroClusters);
        }
        if d == 0 {
            return Err(KMeansError::ZeroDimensions);
        }
        if centroids.iter().any(|v| !v.is_finite()) {
            return Err(KMeansError::InvalidParameter(
                "the initial centroids have a non-finite value".into(),
            ));
        }
        for (name, v) in [("tol", tol), ("variance", variance)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(KMeansError::InvalidParameter(format!(
                    "{name} must be finite and non-negative, not {v}"
                )));
            }
        }
        Ok(LloydRun {
            centroids: centroids.as_standard_layout().into_owned(),
            state: LloydState::new(ShiftLimit::of_variance(tol, || variance), max_iter, 0),
            final_labels,
            inertia: f64::NAN,
        })
    }

    /// The current centroids (those the next iteration's statistics are computed against).
    pub fn centroids(&self) -> ArrayView2<'_, f64> {
        self.centroids.view()
    }

    /// Whether another iteration runs (not converged, fewer than `max_iter` iterations).
    pub fn running(&self) -> bool {
        self.state.running()
    }

    /// Iterations done.
    pub fn iterations(&self) -> usize {
        self.state.iteration()
    }

    /// Whether the run converged (rather than reaching `max_iter`).
    pub fn converged(&self) -> bool {
        self.state.converged()
    }

    /// The inertia the run ends with: after [`LloydRun::final_pass`], that of the final
    /// centroids; before, the last iteration's, against the centroids it started from (NaN
    /// before the first).
    pub fn inertia(&self) -> f64 {
        self.inertia
    }

    /// One iteration: the centroids from `stats` (every chunk's, merged, against
    /// [`LloydRun::centroids`]) and `far` (the far points of every chunk when a cluster is
    /// empty), as [`next_centroids`] computes them; returns the summed squared shift.
    ///
    /// # Complexity
    /// As [`next_centroids`].
    ///
    /// # Errors
    /// [`KMeansError::ShapeMismatch`] (statistics or far points of another shape),
    /// [`KMeansError::InvalidParameter`] when the run has stopped.
    pub fn update(&mut self, stats: &ChunkStats, far: Vec<FarPoint>) -> Result<f64, KMeansError> {
        self.check_shape(stats)?;
        if !self.running() {
            return Err(KMeansError::InvalidParameter(
                "the Lloyd run has stopped: no further iteration".into(),
            ));
        }
        self.state.assigned(None);
        let new = next_centroids(stats, far)?;
        let moved = shift(
            new.as_slice().expect("standard layout"),
            self.centroids.as_slice().expect("standard layout"),
        );
        self.centroids = new;
        self.inertia = stats.inertia;
        self.state.updated(moved);
        Ok(moved)
    }

    /// Whether the run needs one more pass of statistics against the final centroids for
    /// their inertia: with `final_labels`, unless the last iteration moved nothing.
    pub fn needs_final_pass(&self) -> bool {
        self.final_labels && !self.state.labels_final()
    }

    /// Takes the statistics of every chunk against the final centroids (merged): the run's
    /// inertia becomes theirs.
    ///
    /// # Errors
    /// [`KMeansError::ShapeMismatch`] (statistics of another shape).
    pub fn final_pass(&mut self, stats: &ChunkStats) -> Result<(), KMeansError> {
        self.check_shape(stats)?;
        self.inertia = stats.inertia;
        Ok(())
    }

    fn check_shape(&self, stats: &ChunkStats) -> Result<(), KMeansError> {
        let (k, d) = self.centroids.dim();
        if (stats.k, stats.d) != (k, d) {
            return Err(KMeansError::ShapeMismatch {
                what: "chunk statistics (k * d)",
                expected: k * d,
                found: stats.k * stats.d,
            });
        }
        Ok(())
    }
}

/// Initial centroids from a sample of the rows (a chunked fit draws them from a fixed
/// subsample): k-means++, random distinct rows or the given ones, exactly as run `run` of
/// [`KMeans::fit`](crate::KMeans::fit) with `seed` would pick them from this data.
///
/// # Complexity
/// `O(s k d log k)` for k-means++ on `s` rows, `O(s + k d)` otherwise.
///
/// # Errors
/// [`KMeansError::ZeroClusters`], [`KMeansError::TooManyClusters`] (fewer sample rows than
/// `k`), [`KMeansError::ZeroDimensions`], [`KMeansError::NonFiniteData`],
/// [`KMeansError::InvalidWeights`], [`KMeansError::ShapeMismatch`] (given centroids),
/// [`KMeansError::InvalidParameter`] (draws of [`Init::Drawn`] that do not fit the sample, or
/// no draws for run `run`).
///
/// # Examples
/// ```
/// use clustering::{Init, chunked::sample_centroids};
/// use ndarray::array;
/// let sample = array![[0.0], [1.0], [10.0], [11.0]];
/// let c = sample_centroids(sample.view(), None, 2, &Init::KMeansPlusPlus, 7, 0)?;
/// assert_eq!(c.dim(), (2, 1));
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn sample_centroids<T: Element>(
    sample: ArrayView2<'_, T>,
    weights: Option<ArrayView1<'_, T>>,
    k: usize,
    init: &Init,
    seed: u64,
    run: usize,
) -> Result<Array2<f64>, KMeansError> {
    let (n, d) = sample.dim();
    let params = crate::KMeans::new(k).init(init.clone());
    crate::kmeans::check_params(&params)?;
    if d == 0 {
        return Err(KMeansError::ZeroDimensions);
    }
    if k > n {
        return Err(KMeansError::TooManyClusters { k, n });
    }
    crate::kmeans::check_given(init, k, Some(n), d)?;
    if let Init::Drawn(runs) = init
        && run >= runs.len()
    {
        return Err(KMeansError::InvalidParameter(format!(
            "run {run} of {} drawn starts",
            runs.len()
        )));
    }
    let x: Vec<T> = sample.iter().copied().collect();
    check_finite(&x, d, 0)?;
    let w = match weights {
        None => None,
        Some(w) => Some(crate::kmeans::check_weights(
            w.iter().map(|v| v.to_f64()),
            n,
        )?),
    };
    let c = initial_centroids(init, &x, d, w.as_deref(), k, seed, run, &mut |_| {});
    Ok(Array2::from_shape_vec((k, d), c).expect("k * d centroids"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KMeans;
    use crate::data::generate_blobs;
    use ndarray::{Array1, s};

    /// Chunked Lloyd on the CPU, chunks merged in order, driven by [`LloydRun`]: the loop
    /// `warpath.dask` runs. Returns the centroids, iterations and inertia.
    fn chunked_fit(
        x: ArrayView2<'_, f64>,
        w: Option<&Array1<f64>>,
        start: Array2<f64>,
        rows: usize,
        iters: usize,
        tol: f64,
    ) -> (Array2<f64>, usize, f64) {
        let (k, d) = start.dim();
        let chunks = || x.axis_chunks_iter(ndarray::Axis(0), rows).enumerate();
        let weights = |i: usize, n: usize| w.map(|w| w.slice(s![i * rows..i * rows + n]));
        let stats = |c: ArrayView2<'_, f64>| {
            let mut total = ChunkStats::zeros(k, d);
            for (i, ch) in chunks() {
                let wc = weights(i, ch.nrows());
                total
                    .merge(&chunk_stats(ch, wc, c, (i * rows) as u64, Exec::Cpu).unwrap())
                    .unwrap();
            }
            total
        };
        let variance = crate::cpu::mean_variance(x.as_slice().unwrap(), d);
        let mut run = LloydRun::new(start, iters, tol, variance, true).unwrap();
        while run.running() {
            let total = stats(run.centroids());
            let m = total.far_points_needed();
            let mut far = Vec::new();
            for (i, ch) in chunks().filter(|_| m > 0) {
                let wc = weights(i, ch.nrows());
                far.extend(chunk_farthest(ch, wc, run.centroids(), m, (i * rows) as u64).unwrap());
            }
            run.update(&total, far).unwrap();
        }
        if run.needs_final_pass() {
            let total = stats(run.centroids());
            run.final_pass(&total).unwrap();
        }
        (run.centroids().to_owned(), run.iterations(), run.inertia())
    }

    #[test]
    fn chunked_runs_stop_where_the_library_fit_stops() {
        // tol relative to the variance; k = 7 from one duplicated start centroid (an empty
        // cluster in the first iteration); the chunked run and the local fit agree on the
        // iterations, the centroids and the inertia.
        let blobs = generate_blobs(4000, 3, 6, 0.4, 11);
        let x = blobs.data.view();
        let mut start = x.slice(s![..7, ..]).to_owned();
        let first = start.row(0).to_owned();
        start.row_mut(6).assign(&first);
        for tol in [1e-2, 1e-4, 0.0] {
            let lib = KMeans::new(7)
                .init(Init::Given(start.clone()))
                .tol(tol)
                .algorithm(crate::Algorithm::Lloyd)
                .fit(x)
                .unwrap();
            for rows in [4000, 900] {
                let (c, it, inertia) = chunked_fit(x, None, start.clone(), rows, 300, tol);
                assert_eq!(it, lib.iterations, "tol {tol} rows {rows}");
                for (a, b) in c.iter().zip(lib.centroids.iter()) {
                    assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{a} vs {b}");
                }
                assert!((inertia - lib.inertia).abs() <= 1e-9 * lib.inertia);
            }
        }
    }

    #[test]
    fn a_stopped_run_refuses_updates_and_shapes_are_checked() {
        let mut run = LloydRun::new(ndarray::array![[0.0], [1.0]], 1, 0.0, 0.0, true).unwrap();
        let s = ChunkStats::from_flat(&[0.0, 3.0, 1.0, 2.0, 0.5], 2, 1).unwrap();
        assert!(run.update(&ChunkStats::zeros(3, 1), Vec::new()).is_err());
        assert_eq!(run.update(&s, Vec::new()).unwrap(), 0.25);
        assert!(!run.running() && !run.converged() && run.needs_final_pass());
        assert!(run.update(&s, Vec::new()).is_err());
        assert!(LloydRun::new(ndarray::array![[f64::NAN]], 1, 0.0, 0.0, true).is_err());
        assert!(LloydRun::new(ndarray::array![[0.0]], 1, -1.0, 0.0, true).is_err());
    }

    #[test]
    fn chunked_fit_matches_the_library_fit() {
        let blobs = generate_blobs(5000, 3, 6, 0.3, 5);
        let x = blobs.data.view();
        let start = x.slice(s![..6, ..]).to_owned();
        let lib = KMeans::new(6)
            .init(Init::Given(start.clone()))
            .tol(0.0)
            .fit(x)
            .unwrap();
        for rows in [5000, 1000, 777] {
            let (c, it, _) = chunked_fit(x, None, start.clone(), rows, 300, 0.0);
            assert_eq!(it, lib.iterations, "rows {rows}");
            for (a, b) in c.iter().zip(lib.centroids.iter()) {
                assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn one_chunk_is_the_library_step_bit_for_bit() {
        let blobs = generate_blobs(20000, 4, 8, 0.5, 9);
        let x = blobs.data.view();
        let c = x.slice(s![..8, ..]).to_owned();
        let s1 = chunk_stats(x, None, c.view(), 0, Exec::Cpu).unwrap();
        let mut labels = vec![u32::MAX; 20000];
        let flat: Vec<f64> = c.iter().copied().collect();
        let st = crate::cpu::step_parallel(
            x.as_slice().unwrap(),
            4,
            (None, None, None),
            &flat,
            8,
            &mut labels,
        );
        assert_eq!(
            (s1.sums, s1.counts, s1.inertia),
            (st.sums.clone(), st.counts.clone(), st.inertia)
        );
    }

    #[test]
    fn empty_clusters_are_relocated_as_the_library_does() {
        // Two far-away duplicates of the first centroid leave cluster 2 empty.
        let x = ndarray::array![[0.0], [0.5], [1.0], [20.0], [21.0], [50.0]];
        let start = ndarray::array![[0.0], [20.0], [0.0]];
        let lib = KMeans::new(3)
            .init(Init::Given(start.clone()))
            .tol(0.0)
            .max_iter(1)
            .fit(x.view())
            .unwrap();
        let (c, _, _) = chunked_fit(x.view(), None, start, 2, 1, 0.0);
        assert_eq!(c, lib.centroids);
        assert_eq!(c[[2, 0]], 50.0);
    }

    #[test]
    fn weights_enter_the_sums_and_unit_weights_change_nothing() {
        let blobs = generate_blobs(3000, 2, 4, 0.4, 3);
        let x = blobs.data.view();
        let start = x.slice(s![..4, ..]).to_owned();
        let ones = Array1::from_elem(3000, 1.0);
        assert_eq!(
            chunked_fit(x, None, start.clone(), 700, 50, 0.0),
            chunked_fit(x, Some(&ones), start, 700, 50, 0.0)
        );
        let w = ndarray::array![3.0, 1.0];
        let s = chunk_stats(
            ndarray::array![[0.0], [1.0]].view(),
            Some(w.view()),
            ndarray::array![[0.0]].view(),
            0,
            Exec::Cpu,
        )
        .unwrap();
        assert_eq!((s.sums[0], s.counts[0], s.inertia), (1.0, 4.0, 1.0));
    }

    #[test]
    fn bad_chunks_name_the_global_row() {
        let x = ndarray::array![[0.0, 1.0], [2.0, f64::NAN]];
        let c = ndarray::array![[0.0, 0.0]];
        let e = chunk_stats(x.view(), None, c.view(), 40, Exec::Cpu).unwrap_err();
        assert!(
            matches!(
                e,
                KMeansError::NonFiniteData {
                    row: 41,
                    col: 1,
                    ..
                }
            ),
            "{e}"
        );
        let e =
            chunk_stats(x.view(), None, ndarray::array![[0.0]].view(), 0, Exec::Cpu).unwrap_err();
        assert!(matches!(e, KMeansError::ShapeMismatch { .. }));
        let w = ndarray::array![1.0, -1.0];
        let ok = ndarray::array![[0.0, 1.0], [2.0, 3.0]];
        let e = chunk_stats(ok.view(), Some(w.view()), c.view(), 10, Exec::Cpu).unwrap_err();
        assert!(e.to_string().contains("weight 11"), "{e}");
        assert!(sample_centroids(ok.view(), None, 3, &Init::Random, 0, 0).is_err());
    }

    #[test]
    fn sample_centroids_are_the_library_choice() {
        let blobs = generate_blobs(2000, 3, 5, 0.3, 1);
        let x = blobs.data.view();
        let c = sample_centroids(x, None, 5, &Init::KMeansPlusPlus, 11, 0).unwrap();
        let flat = initial_centroids(
            &Init::KMeansPlusPlus,
            x.as_slice().unwrap(),
            3,
            None,
            5,
            11,
            0,
            &mut |_| {},
        );
        assert_eq!(c.iter().copied().collect::<Vec<_>>(), flat);
    }
}
