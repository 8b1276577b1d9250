//! The public k-means API: parameters, restarts and results (here), and beside them:
//!
//! - `auto.rs`: which algorithm [`Algorithm::Auto`] runs, and how many centre groups the
//!   pruned algorithms keep within the memory;
//! - `validate.rs`: checking parameters, data and weights, and the initial centroids;
//! - `predict.rs`: [`predict()`] and [`transform()`] for fitted centroids.

use gpu_runtime::{Backend, Exec, Target};
use ndarray::{Array2, ArrayView1, ArrayView2};

use crate::bounds::BoundsStepper;
use crate::cpu::{CpuKind, CpuStepper, mean_variance, team_threads};
use crate::cuda::CudaStepper;
use crate::lloyd::{LloydOutcome, LloydParams, ShiftLimit, Stepper, lloyd};
use crate::{Element, KMeansError};

mod auto;
mod predict;
mod validate;

/// A stepper that [`KMeans::fit_runs`] restarts before each run and whose labels it takes
/// after the best one.
trait RunStepper: Stepper {
    /// Forgets the previous run's labels (and bounds).
    fn restart(&mut self) -> Result<(), KMeansError>;
    /// The labels of the last step, taken out of the stepper.
    fn take_labels(&mut self) -> Result<Vec<u32>, KMeansError>;
}

impl<T: Element> RunStepper for CpuStepper<'_, T> {
    fn restart(&mut self) -> Result<(), KMeansError> {
        self.reset_labels();
        Ok(())
    }
    fn take_labels(&mut self) -> Result<Vec<u32>, KMeansError> {
        Ok(std::mem::take(&mut self.labels))
    }
}

impl<T: Element> RunStepper for BoundsStepper<'_, T> {
    fn restart(&mut self) -> Result<(), KMeansError> {
        self.reset();
        Ok(())
    }
    fn take_labels(&mut self) -> Result<Vec<u32>, KMeansError> {
        Ok(std::mem::take(&mut self.plain.labels))
    }
}

impl<T: Element> RunStepper for CudaStepper<'_, T> {
    fn restart(&mut self) -> Result<(), KMeansError> {
        self.reset_labels()
    }
    fn take_labels(&mut self) -> Result<Vec<u32>, KMeansError> {
        self.labels()
    }
}

#[cfg(test)]
pub(crate) use auto::auto_algorithm;
pub(crate) use auto::groups_for;
pub use predict::{predict, transform};
use validate::{Validated, validate};
pub(crate) use validate::{
    check_finite, check_given, check_params, check_weight_values, check_weights, initial_centroids,
};

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
    /// One run per entry (`n_init` is their number), each started from random draws made
    /// by the caller: how the Python package follows scikit-learn's random stream
    /// (`numpy.random.RandomState`), so that `KMeans(random_state=s)` starts where
    /// scikit-learn's would. Only where every row the draws index is at hand:
    /// [`KMeans::fit`] and [`chunked::sample_centroids`](crate::chunked::sample_centroids)
    /// (rows of the sample); the distributed fits refuse it.
    Drawn(Vec<Draws>),
}

/// The random draws of one run of [`Init::Drawn`], as scikit-learn's `KMeans` makes them.
#[derive(Debug, Clone, PartialEq)]
pub enum Draws {
    /// Greedy k-means++ ([`Init::KMeansPlusPlus`]) from row `first`; the candidates of each
    /// further centre are drawn by the next `2 + floor(ln k)` numbers of `uniforms` (in
    /// `[0, 1)`, `(k - 1) * (2 + floor(ln k))` in all): scikit-learn's
    /// `random_state.choice(n, p=w / w.sum())`, then `random_state.uniform(size=trials)` for
    /// every further centre.
    PlusPlus {
        /// The row of the first centre.
        first: usize,
        /// The candidates' uniform numbers, in order.
        uniforms: Vec<f64>,
    },
    /// These `k` distinct rows, in this order (scikit-learn's `init="random"`:
    /// `random_state.choice(n, size=k, replace=False, p=w / w.sum())`).
    Rows(Vec<usize>),
}

/// The value of the first entry of `table` whose names hold `s` (in any case), else the error
/// "`what` must be `choices`, not `s`": the parsing of every named option.
fn parse_named<E: Clone>(
    s: &str,
    table: &[(&[&str], E)],
    what: &str,
    choices: &str,
) -> Result<E, String> {
    let lower = s.to_ascii_lowercase();
    table
        .iter()
        .find(|(names, _)| names.contains(&lower.as_str()))
        .map(|(_, value)| value.clone())
        .ok_or_else(|| format!("{what} must be {choices}, not `{s}`"))
}

/// `FromStr` for `$t` through [`parse_named`]: each list of names (any case) parses to its
/// value; `$what` and `$choices` word the error.
macro_rules! from_names {
    ($t:ty, $what:literal, $choices:literal, [$([$($name:literal),+] => $value:expr),+ $(,)?]) => {
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let table: &[(&[&str], $t)] = &[$((&[$($name),+], $value)),+];
                parse_named(s, table, $what, $choices)
            }
        }
    };
}

from_names!(Init, "init", "k-means++, k-means|| or random", [
    ["k-means++", "kmeans++", "plusplus", "++"] => Init::KMeansPlusPlus,
    ["random"] => Init::Random,
    ["k-means||", "kmeans||", "k-means-parallel", "parallel"] => Init::KMeansParallel {
        rounds: DEFAULT_PARALLEL_ROUNDS,
    },
]);

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
            Init::Drawn(_) => "drawn",
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

from_names!(Convergence, "convergence", "variance or previous-shift", [
    ["variance"] => Convergence::Variance,
    ["previous-shift", "previous"] => Convergence::PreviousShift,
]);

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
/// Lloyd steps until a step changes at most one label in 20 (below 12 dimensions, where the
/// bounds' first step computes every distance exactly, at least 20 steps, so that a short run
/// never pays for it); then, at two steps in a row where a forecast from a sample of a few
/// hundred points says a pruned step would compute at most 30% of the distances, the bounds
/// (Yinyang's groups, or Hamerly's single bound where the forecast has the groups save too
/// little over it), for as long as the pruned steps take less than 0.9 times the run's
/// shortest plain step. After two in a row that do not, plain steps, and the bounds again
/// (Hamerly's and Yinyang's in turns) once a forecast has them compute a quarter of the share
/// the failed attempt did, or at the latest once the plain steps since number 20 times what
/// the failed attempt cost, in plain steps: bounds that lose while the centres move far often
/// win later, and the retries cost a run about 5% at most. The result is the same bits
/// either way.
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

from_names!(Algorithm, "algorithm", "auto, lloyd, hamerly, yinyang or elkan", [
    ["auto"] => Algorithm::Auto,
    ["lloyd", "full"] => Algorithm::Lloyd,
    ["hamerly"] => Algorithm::Hamerly,
    ["yinyang"] => Algorithm::Yinyang,
    ["elkan"] => Algorithm::Elkan,
]);

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

/// The builder's setters: `pub fn name(mut self, name: Type) -> Self`, each with its docs.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $name: $ty) -> Self {
                self.$name = $name;
                self
            }
        )*
    };
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

    setters! {
        /// Sets the initialisation.
        init: Init;

        /// Sets the iteration limit.
        max_iter: usize;

        /// Sets the relative tolerance.
        tol: f64;

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
        convergence: Convergence;

        /// Sets the number of runs.
        n_init: usize;

        /// Sets the seed.
        seed: u64;

        /// Sets where to run.
        exec: Exec;

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
        algorithm: Algorithm;

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
        compute_labels: bool;
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
            // The steps on a team of this thread and rayon's (crate::team), whose helpers
            // stay awake between the steps of the fit.
            Target::Cpu => {
                let groups =
                    groups_for(self.algorithm, n, d, size_of::<T>(), self.k, self.passes())?;
                crate::team::with_team(team_threads(n, self.k, d), || match groups {
                    None => {
                        let mut s = CpuStepper::new(input.slice(), d, input.w(), CpuKind::Parallel);
                        self.fit_runs(&input, &mut s, Backend::Cpu, observer)
                    }
                    Some(t) => {
                        let mut s = BoundsStepper::new(input.slice(), d, input.w(), t)
                            .adaptive(self.algorithm == Algorithm::Auto);
                        self.fit_runs(&input, &mut s, Backend::Cpu, observer)
                    }
                })
            }
            Target::Cuda(gpu) => {
                let mut s = CudaStepper::new(gpu, input.slice(), d, input.w())?;
                self.fit_runs(&input, &mut s, Backend::Cuda, observer)
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
        self.fit_runs(&input, &mut s, Backend::Cpu, &mut |_| {})
    }

    /// Assignment passes of a run that reaches `max_iter`: one per iteration, and the final
    /// labels' ([`KMeans::compute_labels`]).
    fn passes(&self) -> usize {
        self.max_iter + usize::from(self.compute_labels)
    }

    /// Runs `n_init` Lloyd runs on one stepper and keeps the best.
    fn fit_runs<T: Element, S: RunStepper>(
        &self,
        input: &Validated<'_, T>,
        stepper: &mut S,
        backend: Backend,
        observer: &mut dyn FnMut(&Progress),
    ) -> Result<KMeansResult<T>, KMeansError> {
        let d = input.d;
        let limit = match self.convergence {
            Convergence::Variance => {
                ShiftLimit::of_variance(self.tol, || mean_variance(input.slice(), d))
            }
            Convergence::PreviousShift => ShiftLimit::OfPrevious(self.tol),
        };
        let runs = match &self.init {
            Init::Given(_) => 1,
            Init::Drawn(runs) => runs.len(),
            _ => self.n_init,
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
            let start = initial_centroids(
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
            stepper.restart()?;
            let out = lloyd(stepper, start, &params, |iteration, _, st| {
                observer(&Progress {
                    run,
                    iteration,
                    inertia: st.inertia,
                    initialised: self.k,
                });
                Ok(())
            })?;
            // scikit-learn's rule: a run replaces the best so far when its inertia is lower
            // and its clustering differs (the same clustering stopped by `tol` at other
            // centroids is not a better one); without labels, on the inertia alone.
            if best
                .as_ref()
                .is_none_or(|(b, _)| out.last.inertia < b.last.inertia)
            {
                let labels = if self.compute_labels {
                    stepper.take_labels()?
                } else {
                    Vec::new()
                };
                let same = best.as_ref().is_some_and(|(_, bl)| {
                    self.compute_labels && same_clustering(&labels, bl, self.k)
                });
                if !same {
                    best = Some((out, labels));
                }
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

/// Whether labels `a` name the same clusters as labels `b`, up to a renaming of `a`'s
/// (scikit-learn's `_is_same_clustering`: every point of one cluster of `a` shares one label
/// of `b`).
pub(crate) fn same_clustering(a: &[u32], b: &[u32], k: usize) -> bool {
    let mut map = vec![u32::MAX; k];
    a.iter().zip(b).all(|(&x, &y)| {
        let m = &mut map[x as usize];
        if *m == u32::MAX {
            *m = y;
        }
        *m == y
    })
}

/// [`KMeans::fit`] for one element type, as a function pointer.
#[cfg(all(debug_assertions, not(fuzzing)))]
type Fit<T> = fn(&KMeans, ArrayView2<'_, T>) -> Result<KMeansResult<T>, KMeansError>;

/// The fits compiled here for both element types. Builds at opt-level 0 or 1 (the dev and
/// test profiles, `debug_assertions` on) share generic code between crates, so every crate
/// that fits (the CLI, the examples, the integration tests) links these copies instead of
/// compiling the whole k-means stack again, most of such a crate's build. Optimised builds
/// do not share generic code, and leave them out, as does the fuzz build (debug assertions at
/// opt-level 3, and no fits: they would only add to its build).
#[cfg(all(debug_assertions, not(fuzzing)))]
#[used]
static SHARED_FITS: (Fit<f32>, Fit<f64>) = (KMeans::fit::<f32>, KMeans::fit::<f64>);
