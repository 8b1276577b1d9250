//! Random cost matrices and the seed's experiments (seed 002, "A Greedy Approximation
//! Algorithm for the Linear Assignment Problem"), for `warpath lap-experiment` and
//! `warpath reproduce`:
//!
//! - `lap-ties`: the seed's 6 x 6 example, where greedy's choice between two tied 25s gives
//!   174 or 167, the optimum, and the seed's proposed greedy that keeps the top `k` tie paths
//!   ([`greedy_ties`](crate::greedy_ties)), also on tie-heavy integer matrices;
//! - `lap-fig1`: approximation factors of greedy and random assignments on Exp(1) costs
//!   against the seed's theory `H_n / H_n^(2)` and `n / H_n^(2)` ([`approximation_table`]);
//! - `lap-fig2`: runtime of each solver against `n` on Exp(1) costs ([`runtime_series`]) with
//!   the seed's complexity models fitted by least squares and their mean square error
//!   ([`fit_model`]).

use std::time::Instant;

use gpu_runtime::Exec;
use ndarray::Array2;

use crate::{AssignmentError, Sense, Solver, solve};

pub(crate) mod reproduce;
pub use crate::generate::{exp_matrix, int_matrix, sparse_matrix, uniform_matrix};
pub use reproduce::{lap_fig1, lap_fig2, lap_ties, specs};

/// The distribution of generated costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostDist {
    /// i.i.d. Exp(1) ([`exp_matrix`]): the seed's costs for both figures.
    Exp,
    /// i.i.d. uniform in `[0, 1)` ([`uniform_matrix`]).
    Uniform,
}

impl CostDist {
    /// An `n x n` matrix of this distribution.
    pub fn matrix(self, n: usize, seed: u64) -> Array2<f64> {
        match self {
            CostDist::Exp => exp_matrix(n, n, seed),
            CostDist::Uniform => uniform_matrix(n, n, seed),
        }
    }
}

/// The harmonic number `H_n = sum_{k=1}^n 1/k`.
pub fn harmonic(n: usize) -> f64 {
    (1..=n).map(|k| 1.0 / k as f64).sum()
}

/// The second-order harmonic number `H_n^(2) = sum_{k=1}^n 1/k^2` (tends to pi^2/6), the
/// expected optimal cost of an `n x n` Exp(1) assignment problem (Wästlund).
pub fn harmonic2(n: usize) -> f64 {
    (1..=n).map(|k| 1.0 / (k as f64 * k as f64)).sum()
}

/// One line of the approximation table.
#[derive(Debug, Clone, PartialEq)]
pub struct ApproximationRow {
    /// Matrix size `n x n`.
    pub n: usize,
    /// Matrices averaged.
    pub samples: usize,
    /// Mean optimal cost (measured) and its theory `H_n^(2)`.
    pub optimal_mean: f64,
    /// `H_n^(2)`.
    pub optimal_theory: f64,
    /// Mean greedy cost / mean optimal cost (measured).
    pub greedy_factor: f64,
    /// `H_n / H_n^(2)`.
    pub greedy_theory: f64,
    /// Mean random cost / mean optimal cost (measured).
    pub random_factor: f64,
    /// `n / H_n^(2)`.
    pub random_theory: f64,
}

/// The approximation experiment: for each `n`, `samples` Exp(1) matrices solved exactly
/// (Jonker–Volgenant), greedily and randomly; `progress` is called after each matrix.
///
/// # Complexity
/// `samples` JV solves and greedy sorts per size.
///
/// # Errors
/// Only if a solver fails, which Exp(1) matrices cannot make it do.
///
/// # Examples
/// ```
/// let t = assignment::experiments::approximation_table(&[10], 20, 1, |_| {})?;
/// assert!(t[0].greedy_factor > 1.0 && t[0].random_factor > t[0].greedy_factor);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn approximation_table(
    sizes: &[usize],
    samples: usize,
    seed: u64,
    mut progress: impl FnMut(usize),
) -> Result<Vec<ApproximationRow>, AssignmentError> {
    let mut rows = Vec::new();
    for (k, &n) in sizes.iter().enumerate() {
        let (mut opt, mut gre, mut ran) = (0.0, 0.0, 0.0);
        for s in 0..samples {
            let sseed = seed ^ ((k as u64) << 40) ^ (s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let c = exp_matrix(n, n, sseed);
            opt += solve(
                c.view(),
                Solver::JonkerVolgenant,
                Sense::Minimize,
                Exec::Cpu,
            )?
            .cost;
            gre += solve(c.view(), Solver::Greedy, Sense::Minimize, Exec::Cpu)?.cost;
            ran += solve(
                c.view(),
                Solver::Random { seed: sseed },
                Sense::Minimize,
                Exec::Cpu,
            )?
            .cost;
            progress(1);
        }
        let m = samples.max(1) as f64;
        let h2 = harmonic2(n);
        rows.push(ApproximationRow {
            n,
            samples,
            optimal_mean: opt / m,
            optimal_theory: h2,
            greedy_factor: gre / opt,
            greedy_theory: harmonic(n) / h2,
            random_factor: ran / opt,
            random_theory: n as f64 / h2,
        });
    }
    Ok(rows)
}

/// Runtime of one solver on one size.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimePoint {
    /// The solver.
    pub solver: Solver,
    /// Matrix size `n x n`.
    pub n: usize,
    /// Median seconds over the repetitions.
    pub seconds: f64,
}

/// Times `solver` on `n x n` matrices of `dist` for each size (`reps` repetitions, each on its
/// own matrix, median; the matrix is made before the clock starts).
///
/// # Complexity
/// `reps` solves per size.
///
/// # Errors
/// The solver's errors (for example brute force beyond its limit).
///
/// # Examples
/// ```
/// use assignment::experiments::{runtime_series, CostDist};
/// let pts = runtime_series(assignment::Solver::Greedy, &[4, 8], 3, 1, gpu_runtime::Exec::Cpu, CostDist::Exp)?;
/// assert_eq!(pts.iter().map(|p| p.n).collect::<Vec<_>>(), [4, 8]);
/// # Ok::<(), assignment::AssignmentError>(())
/// ```
pub fn runtime_series(
    solver: Solver,
    sizes: &[usize],
    reps: usize,
    seed: u64,
    exec: Exec,
    dist: CostDist,
) -> Result<Vec<RuntimePoint>, AssignmentError> {
    let mut out = Vec::new();
    for &n in sizes {
        let mut times = Vec::new();
        for r in 0..reps.max(1) {
            let c = dist.matrix(n, seed + r as u64);
            let t = Instant::now();
            solve(c.view(), solver, Sense::Minimize, exec)?;
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        out.push(RuntimePoint {
            solver,
            n,
            seconds: times[times.len() / 2],
        });
    }
    Ok(out)
}

/// The exponent `b` of the least-squares fit `seconds ~ a * n^b` over the points (log-log),
/// `None` with fewer than two usable points.
///
/// # Examples
/// ```
/// use assignment::experiments::fit_exponent;
/// let b = fit_exponent(&[(10, 1.0), (20, 8.0), (40, 64.0)]).unwrap();
/// assert!((b - 3.0).abs() < 1e-9);
/// ```
pub fn fit_exponent(points: &[(usize, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|&&(n, t)| n > 0 && t > 0.0)
        .map(|&(n, t)| ((n as f64).ln(), t.ln()))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let m = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / m;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / m;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The exponent of a runtime series by [`fit_exponent`]: against `n!` for brute force
/// (`t ~ (n!)^b`, `b` near 1), against `n` for the other solvers.
///
/// # Examples
/// ```
/// use assignment::experiments::{RuntimePoint, series_exponent};
/// let pt = |n, seconds| RuntimePoint { solver: assignment::Solver::Greedy, n, seconds };
/// let b = series_exponent(&[pt(10, 1.0), pt(20, 4.0)]).unwrap();
/// assert!((b - 2.0).abs() < 1e-9);
/// ```
pub fn series_exponent(pts: &[RuntimePoint]) -> Option<f64> {
    let xy: Vec<(usize, f64)> = pts
        .iter()
        .map(|p| {
            let x = if p.solver == Solver::BruteForce {
                (1..=p.n).product()
            } else {
                p.n
            };
            (x, p.seconds)
        })
        .collect();
    fit_exponent(&xy)
}

/// A solver's time complexity, as the seed's Table 2 gives it: the model fitted to its
/// runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Complexity {
    /// `n!` (brute force).
    Factorial,
    /// `n` (random).
    Linear,
    /// `n^2 log n` (greedy).
    SquareLog,
    /// `n^3` (Hungarian; also Jonker–Volgenant's and the auction's worst case).
    Cubic,
}

impl Complexity {
    /// The model's shape at `n` (the fitted time is `scale * f(n)`).
    pub fn at(self, n: usize) -> f64 {
        let x = n as f64;
        match self {
            Complexity::Factorial => (1..=n).map(|k| k as f64).product(),
            Complexity::Linear => x,
            Complexity::SquareLog => x * x * x.max(1.0).ln().max(f64::MIN_POSITIVE),
            Complexity::Cubic => x * x * x,
        }
    }

    /// The model as the seed writes it (`n!`, `n`, `n^2 log n`, `n^3`).
    pub fn name(self) -> &'static str {
        match self {
            Complexity::Factorial => "n!",
            Complexity::Linear => "n",
            Complexity::SquareLog => "n^2 log n",
            Complexity::Cubic => "n^3",
        }
    }

    /// The seed's model of `solver` (Table 2; the solvers the seed did not have get `n^3`).
    pub fn of(solver: Solver) -> Self {
        match solver {
            Solver::BruteForce => Complexity::Factorial,
            Solver::Random { .. } => Complexity::Linear,
            Solver::Greedy | Solver::GreedyTies { .. } => Complexity::SquareLog,
            Solver::Hungarian
            | Solver::JonkerVolgenant
            | Solver::Auction
            | Solver::Sparse
            | Solver::Auto => Complexity::Cubic,
        }
    }
}

/// A least-squares fit of `seconds ~ scale * f(n)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelFit {
    /// The model.
    pub model: Complexity,
    /// The fitted factor (seconds per unit of `f(n)`).
    pub scale: f64,
    /// Mean square error of the fit over the points, in seconds squared.
    pub mse: f64,
}

/// Fits `seconds ~ scale * f(n)` to the points by least squares, as the seed does (its
/// Levenberg–Marquardt on this one-parameter linear model converges to the closed form
/// `scale = sum f t / sum f^2`), and reports the mean square error. `None` without a point.
///
/// # Complexity
/// `O(points)`.
///
/// # Examples
/// ```
/// use assignment::experiments::{fit_model, Complexity};
/// let pts = [(10, 2e-3), (20, 16e-3), (40, 128e-3)];
/// let f = fit_model(&pts, Complexity::Cubic).unwrap();
/// assert!((f.scale - 2e-6).abs() < 1e-15 && f.mse < 1e-20);
/// ```
pub fn fit_model(points: &[(usize, f64)], model: Complexity) -> Option<ModelFit> {
    let fs: Vec<(f64, f64)> = points.iter().map(|&(n, t)| (model.at(n), t)).collect();
    if fs.is_empty() {
        return None;
    }
    let sff: f64 = fs.iter().map(|(f, _)| f * f).sum();
    let sft: f64 = fs.iter().map(|(f, t)| f * t).sum();
    let scale = if sff > 0.0 { sft / sff } else { 0.0 };
    let mse = fs.iter().map(|(f, t)| (t - scale * f).powi(2)).sum::<f64>() / fs.len() as f64;
    Some(ModelFit { model, scale, mse })
}
