//! The seed's FitzHugh–Nagumo experiments (seed 002, Figs 1–14), for `warpath reproduce` (see
//! `warpath_report`): each returns numeric rows, the seed's numbers beside them and a chart.
//!
//! - `fhn-fig1-constant` (Fig. 1): the constant input `v(L, t) = 1` on a resting axon.
//! - `fhn-fig2-gaussian` (Fig. 2): the Gaussian impulse that splits into two pulses.
//! - `fhn-orders` (Figs 3, 4, 9, 10): RMSE against step size, explicit and Crank–Nicolson,
//!   against a fine numerical reference (the seed's method) and a manufactured solution.
//! - `fhn-cpu-gpu` (Figs 5, 6): time per explicit iteration against `n`, with and without
//!   transfers, and the core loop's share.
//! - `fhn-adaptive` (Figs 7, 8): the adaptive grid against the uniform one.
//! - `fhn-implicit-stability` (Fig. 11): bounded or not against `dt / dx^2`, per scheme and
//!   tridiagonal solver.
//! - `fhn-newton` (Fig. 12): Newton's update norms per iteration and their q-rates.
//! - `fhn-solvers-cpu-gpu` (Figs 13, 14): implicit runs and Jacobian solves against `n`.
//!
//! One file per experiment family: `pulses.rs` (Figs 1, 2), `orders.rs` (Figs 3, 4, 9, 10),
//! `cpu_gpu.rs` (Figs 5, 6), `adaptive_grid.rs` (Figs 7, 8), `stability.rs` (Fig. 11),
//! `newton.rs` (Fig. 12) and `solvers.rs` (Figs 13, 14); this file holds the list and the
//! helpers they share.

use warpath_report::{Experiment, ExperimentError, Spec};

use crate::PdeError;
use crate::implicit::ImplicitVariant;
use crate::tridiag::TridiagSolver;

mod adaptive_grid;
mod cpu_gpu;
mod newton;
mod orders;
mod pulses;
mod solvers;
mod stability;
#[cfg(test)]
mod tests;

pub use adaptive_grid::adaptive;
pub use cpu_gpu::cpu_gpu;
pub use newton::newton;
pub use orders::{Manufactured, orders};
pub use pulses::{fig1_constant, fig2_gaussian};
pub use solvers::solvers_cpu_gpu;
pub use stability::implicit_stability;

/// This crate's experiments, in the order of the seed.
pub fn specs() -> Vec<Spec> {
    vec![
        Spec {
            id: "fhn-fig1-constant",
            seed: "002",
            title: "FitzHugh-Nagumo, Fig. 1: a constant input v(L, t) = 1 starts a pulse train",
            run: fig1_constant,
        },
        Spec {
            id: "fhn-fig2-gaussian",
            seed: "002",
            title: "FitzHugh-Nagumo, Fig. 2: a Gaussian impulse splits into two pulses",
            run: fig2_gaussian,
        },
        Spec {
            id: "fhn-orders",
            seed: "002",
            title: "FitzHugh-Nagumo, Figs 3, 4, 9, 10: error against dx and dt",
            run: orders,
        },
        Spec {
            id: "fhn-cpu-gpu",
            seed: "002",
            title: "FitzHugh-Nagumo, Figs 5, 6: explicit time per iteration, CPU and GPU",
            run: cpu_gpu,
        },
        Spec {
            id: "fhn-adaptive",
            seed: "002",
            title: "FitzHugh-Nagumo, Figs 7, 8: the adaptive grid against the uniform one",
            run: adaptive,
        },
        Spec {
            id: "fhn-implicit-stability",
            seed: "002",
            title: "FitzHugh-Nagumo, Fig. 11: stability against dt / dx^2 per scheme and solver",
            run: implicit_stability,
        },
        Spec {
            id: "fhn-newton",
            seed: "002",
            title: "FitzHugh-Nagumo, Fig. 12: Newton's convergence per tridiagonal solver",
            run: newton,
        },
        Spec {
            id: "fhn-solvers-cpu-gpu",
            seed: "002",
            title: "FitzHugh-Nagumo, Figs 13, 14: implicit runs and Jacobian solves, CPU and GPU",
            run: solvers_cpu_gpu,
        },
    ]
}

/// The experiment `id` of [`specs`], with its seed and title from there and `seed_says`, the
/// seed's words, before any run.
fn seed_experiment(id: &str, seed_says: &str) -> Experiment {
    let spec = specs().into_iter().find(|s| s.id == id);
    let spec = spec.expect("every experiment is listed in specs()");
    let mut e = Experiment::new(spec.id, spec.seed, spec.title);
    e.seed_says = seed_says.into();
    e
}

/// Turns a [`PdeError`] into an [`ExperimentError`] that names `what` failed.
fn fail(what: &str) -> impl Fn(PdeError) -> ExperimentError + '_ {
    move |e| ExperimentError::from_display(what, e)
}

/// The root mean square of `a - b` (over `a`'s length, at least 1).
fn rmse(a: &[f64], b: &[f64]) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / a.len().max(1) as f64).sqrt()
}

/// `log2(prev / cur)`: the observed order when the step halves (`None` on the first level).
fn order(prev: Option<f64>, cur: f64) -> Option<f64> {
    prev.filter(|_| cur > 0.0).map(|p| (p / cur).log2())
}

/// Our implicit variant and the seed's, for the rows' `variant` key.
const OURS: ImplicitVariant = ImplicitVariant::CrankNicolson;
const SEED: ImplicitVariant = ImplicitVariant::SeedLeapfrog;

/// The name of `s` in the rows' `solver` key.
fn solver_name(s: TridiagSolver) -> &'static str {
    match s {
        TridiagSolver::Thomas => "thomas",
        TridiagSolver::CyclicReduction => "cr",
        TridiagSolver::Pcr => "pcr",
    }
}
