//! The public k-means API: parameters, validation, restarts, results and `predict`.

use gpu_runtime::{Backend, Exec, Target};
use ndarray::{Array2, ArrayView1, ArrayView2, CowArray, Ix2};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::assign::BLOCKED_MIN;
use crate::bounds::BoundsStepper;
use crate::cpu::{CpuKind, CpuStepper, assign_parallel, mean_variance};
use crate::cuda::CudaStepper;
use crate::init::{kmeans_parallel, kmeans_plusplus, random_points};
use crate::lloyd::{LloydOutcome, LloydParams, ShiftLimit, Stepper, lloyd};
use crate::{Element, KMeansError};

/// From this much work per iteration (`n * k * d` multiply-adds) `Exec::Auto` uses the GPU.
/// An estimate, not yet set by a GPU benchmark (see BENCHMARKS.md).
pub const KMEANS_GPU_THRESHOLD: u64 = 1 << 25;

/// How the first centroids are chosen.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Init {
    /// Greedy k-means++ with `2 + ln k` candidates per centre, as scikit-learn (default).
    #[default]
    KMeansPlusPlus,
    /// `k` distinct points drawn uniformly.
    Random,
    /// k-means|| (Bahmani et al. 2012) in its simplest form: `rounds` rounds of drawing
    /// about `k / rounds` centres at once, each with probability proportional to weight times
    /// squared distance to the nearest centre so far; no oversampling or reclustering step.
    /// About one Lloyd iteration of work, where k-means++ makes `k` passes over the data: the
    /// initialisation for large `k`. `"k-means||"` parses to [`DEFAULT_PARALLEL_ROUNDS`]
    /// rounds.
    KMeansParallel {
        /// Rounds of draws (at least 1; `k` rounds is k-means++ without the greedy trials).
        rounds: usize,
    },
    /// These centroids (`k` rows, `d` columns); `n_init` is then 1.
    Given(Array2<f64>),
}

impl std::str::FromStr for Init {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "k-means++" | "kmeans++" | "plusplus" | "++" => Ok(Init::KMeansPlusPlus),
            "random" => Ok(Init::Random),
            "k-means||" | "kmeans||" | "k-means-parallel" | "parallel" => {
                Ok(Init::KMeansParallel {
                    rounds: DEFAULT_PARALLEL_ROUNDS,
                })
            }
            _ => Err(format!(
                "init must be k-means++, k-means|| or random, not `{s}`"
            )),
        }
    }
}

/// Rounds of [`Init::KMeansParallel`] when it is named `"k-means||"`.
pub const DEFAULT_PARALLEL_ROUNDS: usize = 64;

impl Init {
    /// The name `FromStr` accepts (`"given"` for [`Init::Given`]).
    pub fn name(&self) -> &'static str {
        match self {
            Init::KMeansPlusPlus => "k-means++",
            Init::Random => "random",
            Init::KMeansParallel { .. } => "k-means||",
            Init::Given(_) => "given",
        }
    }
}

/// What [`KMeans::tol`] is relative to: when a Lloyd run has converged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Convergence {
    /// scikit-learn's rule (the default): the summed squared centroid shift of an iteration is
    /// at most `tol` times the mean per-column variance of the data.
    #[default]
    Variance,
    /// The rule of the k-means-on-CUDA seed: the summed squared shift is at most `tol` times
    /// the previous iteration's shift (the first iteration stops only when no centroid moved).
    /// The seed used `tol` 0.001 on the CPU (0.01 on its GPU) and `max_iter` 1000.
    PreviousShift,
}

impl std::str::FromStr for Convergence {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "variance" => Ok(Convergence::Variance),
            "previous-shift" | "previous" => Ok(Convergence::PreviousShift),
            _ => Err(format!(
                "convergence must be variance or previous-shift, not `{s}`"
            )),
        }
    }
}

/// Which variant of Lloyd's iteration assigns the points. Every variant gives the same labels
/// and centroids from the same start (the exact nearest centre of every point, ties to the lower
/// index, at every iteration); they differ in how much distance work they skip, and in memory.
///
/// | variant | skips a point when | extra memory |
/// |---|---|---|
/// | `Lloyd` | never: every point against every centre (a register-blocked kernel up to 2,048 centres, tiled matrix products beyond) | none |
/// | `Hamerly` | its distance to its centre is below a bound on the distance to the second nearest | `8 n` bytes |
/// | `Yinyang` | as Hamerly, per group of about 16 centres, at least 8 groups of 8 or more (Ding et al., ICML 2015): only groups whose bound fails are computed | `4 n (t + 1)` bytes for `t` groups |
/// | `Elkan` | as Yinyang with one centre per group | `4 n (k + 1)` bytes |
///
/// `Auto` (the default) runs Lloyd for a single assignment pass (one iteration without
/// [`KMeans::compute_labels`]), for one iteration while `k d < 2^20` (beyond, the bounds of
/// the first pass prune the final labelling pass by more than they cost) and below 128
/// clusters (a Lloyd step's distances then cost about what the bounds' upkeep costs per
/// point). From 128 clusters it decides from what the bounds prune, as the run goes: plain
/// Lloyd steps until a step changes at most one label in 20, then Yinyang's bounds for as
/// long as a pruned step takes less than 0.9 times the last plain step's time, plain steps
/// to the end of the run after one that does not (the result is the same either way).
/// Yinyang's groups are as many as fit the budget (a quarter of the available memory and
/// twice the data's bytes, 256 MiB at least; `k / 16` at most). Elkan's bounds are checked
/// against the available memory before the fit ([`KMeansError::OutOfMemory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Chosen from `k`, `d`, `max_iter` and `compute_labels`, and from what the bounds prune
    /// as the run goes (see above).
    #[default]
    Auto,
    /// Every distance, every iteration (as scikit-learn's `"lloyd"` and FAISS).
    Lloyd,
    /// One lower bound per point (Hamerly 2010).
    Hamerly,
    /// One lower bound per point and group of centres (Ding et al. 2015).
    Yinyang,
    /// One lower bound per point and centre (Elkan 2003; scikit-learn's `"elkan"`).
    Elkan,
}

impl Algorithm {
    /// The name `FromStr` accepts.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Lloyd => "lloyd",
            Algorithm::Hamerly => "hamerly",
            Algorithm::Yinyang => "yinyang",
            Algorithm::Elkan => "elkan",
        }
    }
}

impl std::str::FromStr for Algorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Algorithm::Auto),
            "lloyd" | "full" => Ok(Algorithm::Lloyd),
            "hamerly" => Ok(Algorithm::Hamerly),
            "yinyang" => Ok(Algorithm::Yinyang),
            "elkan" => Ok(Algorithm::Elkan),
            _ => Err(format!(
                "algorithm must be auto, lloyd, hamerly, yinyang or elkan, not `{s}`"
            )),
        }
    }
}

/// k-means parameters (a small builder); run with [`KMeans::fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct KMeans {
    /// Number of clusters.
    pub k: usize,
    /// How the first centroids are chosen.
    pub init: Init,
    /// Most Lloyd iterations per run (default 300).
    pub max_iter: usize,
    /// Convergence tolerance on the summed squared centroid shift, relative to the mean
    /// per-column variance of the data (default `1e-4`, as scikit-learn), or to the previous
    /// iteration's shift (see [`KMeans::convergence`]).
    pub tol: f64,
    /// What `tol` is relative to (default [`Convergence::Variance`]).
    pub convergence: Convergence,
    /// Independent runs from different initial centroids; the lowest inertia wins (default 1).
    pub n_init: usize,
    /// Seed of the initialisation: equal seeds give equal results.
    pub seed: u64,
    /// Where to run.
    pub exec: Exec,
    /// How points are assigned (default [`Algorithm::Auto`]); every choice gives the same
    /// result.
    pub algorithm: Algorithm,
    /// Whether a fit ends with the labels of its final centroids (default `true`; see
    /// [`KMeans::compute_labels`]).
    pub compute_labels: bool,
}

/// The result of [`KMeans::fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct KMeansResult<T> {
    /// Final centroids, `k` rows by `d` columns.
    pub centroids: Array2<T>,
    /// Index of the nearest final centroid of every point (empty when
    /// [`KMeans::compute_labels`] is off).
    pub labels: Vec<u32>,
    /// Sum over points of weight times squared distance to the nearest final centroid (with
    /// [`KMeans::compute_labels`] off: the last iteration's, to the centroids it started from,
    /// as FAISS's last `obj`; on the matrix-product path it comes from the cluster sums,
    /// `sum |x|^2 - 2 c.sum x + n |c|^2`, which loses digits to cancellation on tight clusters
    /// far from the origin).
    pub inertia: f64,
    /// Lloyd iterations of the best run.
    pub iterations: usize,
    /// Whether the best run met the tolerance before `max_iter`.
    pub converged: bool,
    /// Which backend ran.
    pub backend: Backend,
}

/// What an observer passed to [`KMeans::fit_observed`] sees after every iteration, and while
/// the initial centroids are chosen (then `iteration` is 0 and `inertia` NaN).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Which of the `n_init` runs (from 0).
    pub run: usize,
    /// Iterations done in this run (0 while initialising).
    pub iteration: usize,
    /// Inertia against the centroids the iteration started from (NaN while initialising).
    pub inertia: f64,
    /// Initial centroids chosen so far in this run (`k` once the iterations run).
    pub initialised: usize,
}

impl KMeans {
    /// Parameters for `k` clusters with scikit-learn's defaults (k-means++, 300 iterations,
    /// tol 1e-4, one run), seed 0, `Exec::Auto`.
    pub fn new(k: usize) -> Self {
        KMeans {
            k,
            init: Init::KMeansPlusPlus,
            max_iter: 300,
            tol: 1e-4,
            convergence: Convergence::Variance,
            n_init: 1,
            seed: 0,
            exec: Exec::Auto,
            algorithm: Algorithm::Auto,
            compute_labels: true,
        }
    }

    /// Sets the initialisation.
    pub fn init(mut self, init: Init) -> Self {
        self.init = init;
        self
    }

    /// Sets the iteration limit.
    pub fn max_iter(mut self, max_iter: usize) -> Self {
        self.max_iter = max_iter;
        self
    }

    /// Sets the relative tolerance.
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// Sets what the tolerance is relative to: [`Convergence::PreviousShift`] with `tol`
    /// 0.001, `max_iter` 1000 and [`Init::Random`] is the seed's k-means (its C++ version).
    ///
    /// # Examples
    /// ```
    /// use clustering::{Convergence, Init, KMeans};
    /// use ndarray::array;
    /// let data = array![[0.0], [0.2], [1.0], [1.2], [5.0], [5.2]];
    /// let seed_rule = KMeans::new(2).init(Init::Random).tol(1e-3).max_iter(1000)
    ///     .convergence(Convergence::PreviousShift);
    /// let fit = seed_rule.seed(3).fit(data.view())?;
    /// assert!(fit.converged && fit.iterations <= 1000);
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn convergence(mut self, convergence: Convergence) -> Self {
        self.convergence = convergence;
        self
    }

    /// Sets the number of runs.
    pub fn n_init(mut self, n_init: usize) -> Self {
        self.n_init = n_init;
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets where to run.
    pub fn exec(mut self, exec: Exec) -> Self {
        self.exec = exec;
        self
    }

    /// Sets how points are assigned (see [`Algorithm`]; the result does not depend on it).
    ///
    /// # Examples
    /// ```
    /// use clustering::{Algorithm, Init, KMeans};
    /// use ndarray::array;
    /// let data = array![[0.0f32, 0.0], [0.1, 0.0], [4.0, 4.0], [4.1, 4.0], [9.0, 0.0]];
    /// let init = Init::Given(array![[0.0, 0.0], [4.0, 4.0], [8.0, 0.0]]);
    /// let lloyd = KMeans::new(3).init(init.clone()).algorithm(Algorithm::Lloyd).fit(data.view())?;
    /// let yinyang = KMeans::new(3).init(init).algorithm(Algorithm::Yinyang).fit(data.view())?;
    /// assert_eq!(lloyd, yinyang);
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// Sets whether the fit ends with the labels of its final centroids (default `true`, as
    /// scikit-learn's `KMeans`). Lloyd's last iteration moves the centroids after assigning
    /// the points, so these labels take one more assignment pass (pruned by the bounds after
    /// the first iterations, a whole pass after one iteration). Off, as scikit-learn's
    /// `MiniBatchKMeans(compute_labels=False)` and FAISS's `Kmeans.train` (which returns
    /// centroids only), that pass is skipped: [`KMeansResult::labels`] is empty and
    /// [`KMeansResult::inertia`] is the last iteration's, against the centroids it started
    /// from (runs of `n_init` are compared by it). For centroids alone, e.g. training a
    /// vector index; [`predict`](crate::predict) labels any points later.
    ///
    /// # Examples
    /// ```
    /// use clustering::{Init, KMeans};
    /// use ndarray::array;
    /// let data = array![[0.0f32, 0.0], [0.2, 0.0], [4.0, 4.0], [4.2, 4.0]];
    /// let init = Init::Given(array![[0.0, 0.0], [4.0, 4.0]]);
    /// let fit = KMeans::new(2).init(init).max_iter(1).compute_labels(false).fit(data.view())?;
    /// assert!(fit.labels.is_empty());
    /// assert_eq!(fit.centroids, array![[0.1f32, 0.0], [4.1, 4.0]]);
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn compute_labels(mut self, compute_labels: bool) -> Self {
        self.compute_labels = compute_labels;
        self
    }

    /// Clusters the rows of `data` into `k` groups with Lloyd's algorithm.
    ///
    /// Runs `n_init` times from seeded initial centroids and keeps the run with the lowest
    /// inertia. Each run iterates until the summed squared centroid shift is at most
    /// `tol * mean(var(data, axis 0))` (or `tol` times the previous shift, see
    /// [`KMeans::convergence`]), no label changes, or `max_iter`. The clusters that end an
    /// iteration empty are moved to the points farthest from their centroids, as
    /// scikit-learn moves them (details at [`chunked::next_centroids`](crate::chunked::next_centroids)). Results are
    /// reproducible: the CPU path gives bit-identical results for a given seed whatever the
    /// number of threads; the GPU path adds floating-point sums in a varying order, so it
    /// agrees with the CPU up to rounding (and labels up to near-ties).
    ///
    /// # Complexity
    /// `O(n k d)` per iteration and per run (k-means++ adds `O(n k d log k)`), `O(n k d / p)`
    /// time on `p` threads; extra memory `O(n + k d)` per thread.
    ///
    /// # Errors
    /// [`KMeansError::ZeroClusters`], [`KMeansError::TooManyClusters`],
    /// [`KMeansError::ZeroDimensions`], [`KMeansError::NonFiniteData`],
    /// [`KMeansError::ShapeMismatch`] (given centroids), [`KMeansError::InvalidParameter`],
    /// [`KMeansError::Gpu`].
    ///
    /// # Examples
    /// ```
    /// use clustering::KMeans;
    /// use ndarray::array;
    /// let data = array![[0.0, 0.0], [0.1, 0.0], [10.0, 10.0], [10.1, 10.0]];
    /// let fit = KMeans::new(2).seed(7).fit(data.view())?;
    /// assert_eq!(fit.labels[0], fit.labels[1]);
    /// assert_ne!(fit.labels[0], fit.labels[2]);
    /// assert!(fit.converged && fit.inertia < 0.011);
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn fit<T: Element>(&self, data: ArrayView2<'_, T>) -> Result<KMeansResult<T>, KMeansError> {
        self.fit_observed(data, None, &mut |_| {})
    }

    /// [`KMeans::fit`] with sample weights (non-negative, finite, not all zero): every point
    /// counts `weight` times in the means, the inertia and the k-means++ draws.
    ///
    /// As scikit-learn requires of `sample_weight`, weights that are all `1` give exactly the
    /// unweighted result for the same seed: the same initial centroids (the same random
    /// numbers, the same sums), the same iterations, bit for bit on the CPU backends and in
    /// the distributed run (on the GPU, up to the rounding of its sums: the direct path's
    /// atomic sums may differ between two GPU runs). Weights that are all equal to another value give the same
    /// centroids and labels up to rounding, and an inertia scaled by that value.
    ///
    /// # Complexity
    /// As [`KMeans::fit`].
    ///
    /// # Errors
    /// As [`KMeans::fit`], and [`KMeansError::InvalidWeights`].
    ///
    /// # Examples
    /// ```
    /// use clustering::{Init, KMeans};
    /// use ndarray::array;
    /// let data = array![[0.0], [1.0], [10.0]];
    /// let w = array![3.0, 1.0, 1.0];
    /// let init = Init::Given(array![[0.0], [10.0]]);
    /// let fit = KMeans::new(2).init(init).fit_weighted(data.view(), w.view())?;
    /// assert_eq!(fit.centroids[[0, 0]], 0.25); // (3 * 0 + 1 * 1) / 4
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn fit_weighted<T: Element>(
        &self,
        data: ArrayView2<'_, T>,
        weights: ArrayView1<'_, T>,
    ) -> Result<KMeansResult<T>, KMeansError> {
        self.fit_observed(data, Some(weights), &mut |_| {})
    }

    /// [`KMeans::fit`] with optional weights and an observer called after every iteration
    /// (for progress bars).
    ///
    /// # Complexity
    /// As [`KMeans::fit`].
    ///
    /// # Errors
    /// As [`KMeans::fit_weighted`].
    ///
    /// # Examples
    /// ```
    /// use clustering::KMeans;
    /// use ndarray::array;
    /// let data = array![[0.0f32], [1.0], [5.0], [6.0]];
    /// let mut seen = 0;
    /// KMeans::new(2).fit_observed(data.view(), None, &mut |_| seen += 1)?;
    /// assert!(seen >= 1);
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn fit_observed<T: Element>(
        &self,
        data: ArrayView2<'_, T>,
        weights: Option<ArrayView1<'_, T>>,
        observer: &mut dyn FnMut(&Progress),
    ) -> Result<KMeansResult<T>, KMeansError> {
        let (n, d) = data.dim();
        let input = validate(self, data, weights)?;
        let target = self.exec.resolve(
            (n as u64).saturating_mul((self.k * d) as u64),
            KMEANS_GPU_THRESHOLD,
        )?;
        match target {
            Target::Cpu => {
                match groups_for(self.algorithm, n, d, size_of::<T>(), self.k, self.passes())? {
                    None => {
                        let mut s = CpuStepper::new(input.slice(), d, input.w(), CpuKind::Parallel);
                        self.fit_runs(
                            &input,
                            &mut s,
                            Backend::Cpu,
                            observer,
                            |s| {
                                s.labels = vec![u32::MAX; s.data.len() / s.d];
                                Ok(())
                            },
                            |s| Ok(std::mem::take(&mut s.labels)),
                        )
                    }
                    Some(t) => {
                        let mut s = BoundsStepper::new(input.slice(), d, input.w(), t)
                            .adaptive(self.algorithm == Algorithm::Auto);
                        self.fit_runs(
                            &input,
                            &mut s,
                            Backend::Cpu,
                            observer,
                            |s| {
                                s.reset();
                                Ok(())
                            },
                            |s| Ok(std::mem::take(&mut s.labels)),
                        )
                    }
                }
            }
            Target::Cuda(gpu) => {
                let mut s = CudaStepper::new(gpu, input.slice(), d, input.w())?;
                self.fit_runs(
                    &input,
                    &mut s,
                    Backend::Cuda,
                    observer,
                    |s| s.reset_labels(),
                    |s| s.labels(),
                )
            }
        }
    }

    /// [`KMeans::fit`] on the sequential reference backend (one thread, direct distances in
    /// `f64`): the oracle the fast paths are tested against.
    ///
    /// # Complexity
    /// `O(n k d)` per iteration on one thread.
    ///
    /// # Errors
    /// As [`KMeans::fit_weighted`] (never [`KMeansError::Gpu`]).
    ///
    /// # Examples
    /// ```
    /// use clustering::KMeans;
    /// use ndarray::array;
    /// let data = array![[0.0], [1.0], [9.0], [10.0]];
    /// let a = KMeans::new(2).seed(1).fit_reference(data.view(), None)?;
    /// let b = KMeans::new(2).seed(1).fit(data.view())?;
    /// assert_eq!(a.centroids, b.centroids);
    /// # Ok::<(), clustering::KMeansError>(())
    /// ```
    pub fn fit_reference<T: Element>(
        &self,
        data: ArrayView2<'_, T>,
        weights: Option<ArrayView1<'_, T>>,
    ) -> Result<KMeansResult<T>, KMeansError> {
        let d = data.ncols();
        let input = validate(self, data, weights)?;
        let mut s = CpuStepper::new(input.slice(), d, input.w(), CpuKind::Reference);
        self.fit_runs(
            &input,
            &mut s,
            Backend::Cpu,
            &mut |_| {},
            |s| {
                s.labels = vec![u32::MAX; s.data.len() / s.d];
                Ok(())
            },
            |s| Ok(std::mem::take(&mut s.labels)),
        )
    }

    /// Assignment passes of a run that reaches `max_iter`: one per iteration, and the final
    /// labels' ([`KMeans::compute_labels`]).
    fn passes(&self) -> usize {
        self.max_iter + usize::from(self.compute_labels)
    }

    /// Runs `n_init` Lloyd runs on one stepper and keeps the best.
    fn fit_runs<T: Element, S: Stepper>(
        &self,
        input: &Validated<'_, T>,
        stepper: &mut S,
        backend: Backend,
        observer: &mut dyn FnMut(&Progress),
        reset: impl Fn(&mut S) -> Result<(), KMeansError>,
        take_labels: impl Fn(&mut S) -> Result<Vec<u32>, KMeansError>,
    ) -> Result<KMeansResult<T>, KMeansError> {
        let d = input.d;
        let limit = match self.convergence {
            // `tol = 0` needs no variance (two passes over the data).
            Convergence::Variance if self.tol == 0.0 => ShiftLimit::Absolute(0.0),
            Convergence::Variance => {
                ShiftLimit::Absolute(self.tol * mean_variance(input.slice(), d))
            }
            Convergence::PreviousShift => ShiftLimit::OfPrevious(self.tol),
        };
        let runs = if matches!(self.init, Init::Given(_)) {
            1
        } else {
            self.n_init
        };
        let params = LloydParams {
            k: self.k,
            max_iter: self.max_iter,
            limit,
            start_iteration: 0,
            final_labels: self.compute_labels,
        };
        let mut best: Option<(LloydOutcome, Vec<u32>)> = None;
        for run in 0..runs {
            let start = initial_centroids_observed(
                &self.init,
                input.slice(),
                d,
                input.w(),
                self.k,
                self.seed,
                run,
                &mut |done| {
                    observer(&Progress {
                        run,
                        iteration: 0,
                        inertia: f64::NAN,
                        initialised: done,
                    })
                },
            );
            reset(stepper)?;
            let out = lloyd(stepper, start, &params, |iteration, _, st| {
                observer(&Progress {
                    run,
                    iteration,
                    inertia: st.inertia,
                    initialised: self.k,
                });
                Ok(())
            })?;
            if best
                .as_ref()
                .is_none_or(|(b, _)| out.last.inertia < b.last.inertia)
            {
                let labels = if self.compute_labels {
                    take_labels(stepper)?
                } else {
                    Vec::new()
                };
                best = Some((out, labels));
            }
        }
        let (out, labels) = best.expect("n_init >= 1 is validated");
        let centroids = Array2::from_shape_vec(
            (self.k, d),
            out.centroids.iter().map(|&v| T::from_f64(v)).collect(),
        )
        .expect("k * d centroids");
        Ok(KMeansResult {
            centroids,
            labels,
            inertia: out.last.inertia,
            iterations: out.iterations,
            converged: out.converged,
            backend,
        })
    }
}

/// Centres per group that [`Algorithm::Yinyang`] aims at (Ding et al. use ten). Groups of 8,
/// with the blocked products of the pruned steps, were slower for 20 iterations at 200,000 x
/// 128, k = 1,024 (2.13-2.21 against 2.05-2.12 s) and 100,000 x 256, k = 4,096 (4.49-4.80
/// against 4.30-4.45 s), within the noise at 10^6 x 16, k = 64 (Zen 4, 2 threads).
pub(crate) const YINYANG_GROUP_SIZE: usize = 16;

/// ... but [`Algorithm::Yinyang`] makes at least this many groups while they keep 8 centres
/// or more (`k < 128`): with four groups of 16 at k = 64 a failing group is a quarter of the
/// centres. At 10^6 x 16 float64, k = 64, 20 iterations: 722-785 against 739-807 ms (eight
/// groups of 8 against four of 16, Zen 4, 2 threads, alternating runs); 200,000 x 128 and
/// 500,000 x 32 at k = 64 within the noise. At k = 256 (500,000 x 32) groups of 8 were
/// 25% slower: the rule stops at `k / 16 = 8`.
const YINYANG_MIN_GROUPS: usize = 8;

/// The share of the available memory [`Algorithm::Auto`] and [`Algorithm::Yinyang`] let the
/// bounds take at most (the number of groups shrinks to fit).
const BOUNDS_MEMORY_SHARE: u64 = 4;
/// ... and never more than this many times the data's own bytes (or 256 MiB), so that the
/// bounds do not dominate the memory of a run.
const BOUNDS_DATA_MULTIPLE: u64 = 2;

/// `Algorithm::Auto` runs plain Lloyd steps below this many clusters: there a step of the
/// register-blocked kernel ([`crate::assign`]'s fused method) costs about what the pruned
/// steps' upkeep costs per point, so the bounds cannot pay. From this many on it runs
/// Yinyang's bounds adaptively ([`crate::bounds`]): plain steps until the labels settle, then
/// the bounds for as long as their steps take clearly less time than a plain one.
const AUTO_BOUNDS_MIN_K: usize = 128;

/// `Algorithm::Auto` prunes even a fit of one iteration (whose final labelling pass the first
/// pass's bounds then prune) when `k * d` is at least this. Measured (`WARPATH_KMEANS_TRACE=1`,
/// the FAISS benchmark's data, Zen 4, 2 threads; first pass and final pass): 100,000 x 256,
/// k = 4,096 (`k d = 2^20`): Yinyang 1.40 + 0.84 s (the final pass computes 33% of the
/// distances), Lloyd 2 x 1.25 s; at 200,000 x 128, k = 1,024 Lloyd is faster (575 against 650
/// ms), and at 500,000 x 32, k = 256 too (145 against 280 ms). Checked again with the blocked
/// group products and the vectorised group minimum (whole fits, best of 3): 100,000 x 256
/// Yinyang 1,984 against Lloyd 2,151 ms; 200,000 x 128 Lloyd 566 against 593 ms; 500,000 x
/// 32 a tie (143 against 144 ms).
const AUTO_ONE_ITERATION_BOUNDS_KD: usize = 1 << 20;

/// Bounds smaller than this are not checked against the available memory (which costs a
/// read of `/proc/meminfo`, more than a whole fit of a few hundred points).
const BOUNDS_CHECK_MIN_BYTES: u64 = 1 << 20;

/// The algorithm [`Algorithm::Auto`] runs for `d` dimensions, `k` clusters and at most
/// `passes` assignment passes (`max_iter`, and one for the final labels; never `Auto`;
/// `Yinyang` stands for every group count). A single pass has nothing to prune.
pub(crate) fn auto_algorithm(d: usize, k: usize, passes: usize) -> Algorithm {
    if passes <= 1
        || (passes <= 2 && k * d < AUTO_ONE_ITERATION_BOUNDS_KD)
        || (passes > 2 && k < AUTO_BOUNDS_MIN_K)
    {
        Algorithm::Lloyd
    } else {
        Algorithm::Yinyang
    }
}

/// The number of centre groups of the pruned algorithms (`None`: plain Lloyd) for `n` points,
/// `d` dimensions and `k` clusters; checks that the bounds fit in memory. The available memory
/// is read only when bounds of at least [`BOUNDS_CHECK_MIN_BYTES`] are asked for.
///
/// # Errors
/// [`KMeansError::OutOfMemory`] when [`Algorithm::Elkan`]'s `n k` bounds (or even Hamerly's)
/// do not fit in the available memory.
pub(crate) fn groups_for(
    algorithm: Algorithm,
    n: usize,
    d: usize,
    elem_bytes: usize,
    k: usize,
    passes: usize,
) -> Result<Option<usize>, KMeansError> {
    let algorithm = match algorithm {
        Algorithm::Auto => auto_algorithm(d, k, passes),
        a => a,
    };
    let bytes = |t: usize| BoundsStepper::<f32>::bound_bytes(n, t);
    let by_size = (k / YINYANG_GROUP_SIZE)
        .max(YINYANG_MIN_GROUPS.min(k / BLOCKED_MIN))
        .max(1);
    let largest = match algorithm {
        Algorithm::Auto | Algorithm::Lloyd => return Ok(None),
        Algorithm::Hamerly => 1,
        Algorithm::Elkan => k,
        Algorithm::Yinyang => by_size,
    };
    let available = if bytes(largest) < BOUNDS_CHECK_MIN_BYTES {
        None
    } else {
        gpu_runtime::host_available_memory()
    };
    let fits = |t: usize| available.is_none_or(|a| bytes(t) <= a / 2);
    let refuse = |what: String, t: usize| KMeansError::OutOfMemory {
        what,
        needed: bytes(t),
        available: available.unwrap_or(0) / 2,
        hint: "use algorithm yinyang (fewer groups), hamerly or lloyd",
    };
    let data_bytes = (n as u64) * (d as u64) * elem_bytes as u64;
    let budget = available
        .map_or(1 << 30, |a| a / BOUNDS_MEMORY_SHARE)
        .min((BOUNDS_DATA_MULTIPLE * data_bytes).max(256 << 20));
    Ok(Some(match algorithm {
        Algorithm::Hamerly => {
            if !fits(1) {
                return Err(refuse(format!("hamerly's bounds for {n} points"), 1));
            }
            1
        }
        Algorithm::Elkan => {
            if !fits(k) {
                return Err(refuse(
                    format!("elkan's bounds for {n} points and {k} centres"),
                    k,
                ));
            }
            k
        }
        _ => {
            let by_memory = (budget / (4 * n.max(1) as u64)).max(1) as usize;
            by_size.min(by_memory)
        }
    }))
}

/// The initial centroids of run `run` (`k * d`, row-major).
pub(crate) fn initial_centroids<T: Element>(
    init: &Init,
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    k: usize,
    seed: u64,
    run: usize,
) -> Vec<f64> {
    initial_centroids_observed(init, data, d, weights, k, seed, run, &mut |_| {})
}

/// [`initial_centroids`], telling `progress` how many centroids are chosen now and then.
#[allow(clippy::too_many_arguments)]
pub(crate) fn initial_centroids_observed<T: Element>(
    init: &Init,
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    k: usize,
    seed: u64,
    run: usize,
    progress: &mut dyn FnMut(usize),
) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(run as u64);
    match init {
        Init::KMeansPlusPlus => kmeans_plusplus(data, d, weights, k, &mut rng, progress),
        Init::KMeansParallel { rounds } => {
            kmeans_parallel(data, d, weights, k, *rounds, &mut rng, progress)
        }
        Init::Random => random_points(data, d, k, &mut rng),
        Init::Given(c) => c.iter().copied().collect(),
    }
}

/// Validated input: contiguous data and `f64` weights.
pub(crate) struct Validated<'a, T> {
    data: CowArray<'a, T, Ix2>,
    weights: Option<Vec<f64>>,
    d: usize,
}

impl<T: Element> Validated<'_, T> {
    fn slice(&self) -> &[T] {
        self.data.as_slice().expect("standard layout")
    }
    fn w(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }
}

/// The first non-finite value of row-major `data` (`d` columns), as an error.
pub(crate) fn check_finite<T: Element>(
    data: &[T],
    d: usize,
    row_offset: usize,
) -> Result<(), KMeansError> {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 15;
    // Whole blocks are scanned branch-free; only a block that has a bad value is searched.
    let bad_block = if data.len() < BLOCK {
        data.iter()
            .fold(false, |bad, v| bad | !v.is_finite())
            .then_some(0)
    } else {
        data.par_chunks(BLOCK)
            .position_first(|c| c.iter().fold(false, |bad, v| bad | !v.is_finite()))
    };
    if let Some(b) = bad_block {
        let start = b * BLOCK;
        let pos = start
            + data[start..]
                .iter()
                .position(|v| !v.is_finite())
                .expect("the block has a non-finite value");
        return Err(KMeansError::NonFiniteData {
            row: row_offset + pos / d,
            col: pos % d,
            value: data[pos].to_f64(),
        });
    }
    Ok(())
}

/// Checks the parameters that do not depend on the data.
pub(crate) fn check_params(p: &KMeans) -> Result<(), KMeansError> {
    if p.k == 0 {
        return Err(KMeansError::ZeroClusters);
    }
    if p.max_iter == 0 {
        return Err(KMeansError::InvalidParameter(
            "max_iter must be at least 1".into(),
        ));
    }
    if !(p.tol.is_finite() && p.tol >= 0.0) {
        return Err(KMeansError::InvalidParameter(format!(
            "tol must be finite and non-negative, not {}",
            p.tol
        )));
    }
    if p.n_init == 0 {
        return Err(KMeansError::InvalidParameter(
            "n_init must be at least 1".into(),
        ));
    }
    if let Init::KMeansParallel { rounds: 0 } = p.init {
        return Err(KMeansError::InvalidParameter(
            "k-means|| needs at least 1 round".into(),
        ));
    }
    if p.k > u32::MAX as usize {
        return Err(KMeansError::InvalidParameter(format!(
            "k = {} is too large",
            p.k
        )));
    }
    Ok(())
}

/// Checks given centroids against `k` and `d`.
pub(crate) fn check_given(init: &Init, k: usize, d: usize) -> Result<(), KMeansError> {
    if let Init::Given(c) = init {
        if c.nrows() != k {
            return Err(KMeansError::ShapeMismatch {
                what: "given centroids (rows)",
                expected: k,
                found: c.nrows(),
            });
        }
        if c.ncols() != d {
            return Err(KMeansError::ShapeMismatch {
                what: "given centroids (columns)",
                expected: d,
                found: c.ncols(),
            });
        }
        if let Some(((r, col), v)) = c.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(KMeansError::InvalidParameter(format!(
                "given centroid {r} has a non-finite value {v} in column {col}"
            )));
        }
    }
    Ok(())
}

/// Checks sample weights and converts them to `f64`.
pub(crate) fn check_weights(
    w: impl Iterator<Item = f64>,
    n: usize,
) -> Result<Vec<f64>, KMeansError> {
    let w: Vec<f64> = w.collect();
    if w.len() != n {
        return Err(KMeansError::ShapeMismatch {
            what: "sample weights",
            expected: n,
            found: w.len(),
        });
    }
    check_weight_values(&w, 0)?;
    if !w.iter().any(|&v| v > 0.0) {
        return Err(KMeansError::InvalidWeights("all weights are zero".into()));
    }
    Ok(w)
}

/// The first weight that is negative, NaN or infinite, as an error naming its global index
/// (`index_offset` is the global index of `w[0]`, for MPI shards).
pub(crate) fn check_weight_values(w: &[f64], index_offset: u64) -> Result<(), KMeansError> {
    match w
        .iter()
        .enumerate()
        .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
    {
        Some((i, v)) => Err(KMeansError::InvalidWeights(format!(
            "weight {} is {v}; weights must be finite and non-negative",
            index_offset + i as u64
        ))),
        None => Ok(()),
    }
}

fn validate<'a, T: Element>(
    p: &KMeans,
    data: ArrayView2<'a, T>,
    weights: Option<ArrayView1<'_, T>>,
) -> Result<Validated<'a, T>, KMeansError> {
    check_params(p)?;
    let (n, d) = data.dim();
    if d == 0 {
        return Err(KMeansError::ZeroDimensions);
    }
    if p.k > n {
        return Err(KMeansError::TooManyClusters { k: p.k, n });
    }
    check_given(&p.init, p.k, d)?;
    let data: CowArray<'a, T, Ix2> = if data.is_standard_layout() {
        CowArray::from(data)
    } else {
        CowArray::from(data.as_standard_layout().into_owned())
    };
    check_finite(data.as_slice().expect("standard layout"), d, 0)?;
    let weights = match weights {
        None => None,
        Some(w) => Some(check_weights(w.iter().map(|v| v.to_f64()), n)?),
    };
    Ok(Validated { data, weights, d })
}

/// Euclidean distances of every row of `data` to every centroid (scikit-learn's
/// `KMeans.transform`), `n x k`, in the data's type. Computed in `f64` (float32 data widened
/// tile by tile, as scikit-learn's `euclidean_distances` does), through the same tiled matrix
/// products as the assignment: `sqrt(max(0, |x|^2 + |c|^2 - 2 x.c))`.
///
/// # Complexity
/// `O(n k d)` time, `O(n k)` for the result; on all CPU threads.
///
/// # Errors
/// As [`predict`] (never [`KMeansError::Gpu`]: the distances are computed on the CPU), and
/// [`KMeansError::OutOfMemory`] when the `n x k` result does not fit.
///
/// # Examples
/// ```
/// use clustering::transform;
/// use ndarray::array;
/// let centroids = array![[0.0f32, 0.0], [3.0, 4.0]];
/// let points = array![[0.0f32, 0.0], [3.0, 0.0]];
/// assert_eq!(transform(centroids.view(), points.view())?, array![[0.0, 5.0], [3.0, 4.0]]);
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn transform<T: Element>(
    centroids: ArrayView2<'_, T>,
    data: ArrayView2<'_, T>,
) -> Result<Array2<T>, KMeansError> {
    let (k, d) = centroids.dim();
    let (c, x) = checked_pair(centroids, data)?;
    let n = data.nrows();
    let bytes = (n as u64).saturating_mul(k as u64) * size_of::<T>() as u64;
    if let Some(available) = gpu_runtime::host_available_memory()
        && bytes > available
    {
        return Err(KMeansError::OutOfMemory {
            what: format!("the {n} x {k} distances"),
            needed: bytes,
            available,
            hint: "transform the points in parts",
        });
    }
    let out = crate::cpu::distances_parallel(x.as_slice().expect("standard layout"), d, &c, k);
    Ok(Array2::from_shape_vec((n, k), out).expect("n * k distances"))
}

/// Centroids (in `f64`) and data checked for [`predict`] and [`transform`].
fn checked_pair<'a, T: Element>(
    centroids: ArrayView2<'_, T>,
    data: ArrayView2<'a, T>,
) -> Result<(Vec<f64>, CowArray<'a, T, Ix2>), KMeansError> {
    let (k, d) = centroids.dim();
    if k == 0 {
        return Err(KMeansError::ZeroClusters);
    }
    if data.ncols() != d {
        return Err(KMeansError::ShapeMismatch {
            what: "data columns (the centroids' dimension)",
            expected: d,
            found: data.ncols(),
        });
    }
    if d == 0 {
        return Err(KMeansError::ZeroDimensions);
    }
    let c = centroids.as_standard_layout();
    check_finite(c.as_slice().expect("standard layout"), d, 0)?;
    let c: Vec<f64> = c.iter().map(|v| v.to_f64()).collect();
    let x: CowArray<'a, T, Ix2> = if data.is_standard_layout() {
        CowArray::from(data)
    } else {
        CowArray::from(data.as_standard_layout().into_owned())
    };
    check_finite(x.as_slice().expect("standard layout"), d, 0)?;
    Ok((c, x))
}

/// Index of the nearest centroid (ties to the lower index) of every row of `data`.
///
/// # Complexity
/// `O(n k d)`, `O(n k d / p)` time on `p` threads.
///
/// # Errors
/// [`KMeansError::ZeroClusters`] without centroids, [`KMeansError::ShapeMismatch`] when the
/// column counts differ, [`KMeansError::NonFiniteData`] (data or centroids), [`KMeansError::Gpu`].
///
/// # Examples
/// ```
/// use clustering::predict;
/// use gpu_runtime::Exec;
/// use ndarray::array;
/// let centroids = array![[0.0, 0.0], [10.0, 10.0]];
/// let points = array![[1.0, 1.0], [9.0, 8.0], [-3.0, 0.0]];
/// assert_eq!(predict(centroids.view(), points.view(), Exec::Cpu)?, vec![0, 1, 0]);
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn predict<T: Element>(
    centroids: ArrayView2<'_, T>,
    data: ArrayView2<'_, T>,
    exec: Exec,
) -> Result<Vec<u32>, KMeansError> {
    let (k, d) = centroids.dim();
    let n = data.nrows();
    if n == 0 && k > 0 && data.ncols() == d {
        return Ok(Vec::new());
    }
    let (c, x) = checked_pair(centroids, data)?;
    let xs = x.as_slice().expect("standard layout");
    match exec.resolve(
        (n as u64).saturating_mul((k * d) as u64),
        KMEANS_GPU_THRESHOLD,
    )? {
        Target::Cpu => Ok(assign_parallel(xs, d, &c, k)),
        Target::Cuda(gpu) => {
            let mut s = CudaStepper::new(gpu, xs, d, None)?;
            s.step(&c, k)?;
            s.labels()
        }
    }
}
