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

use std::time::Instant;

use gpu_runtime::Exec;
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, GpuUse, Row, Spec, median};

use crate::adaptive::{AdaptiveOptions, adaptive_run};
use crate::explicit::explicit_step_reference;
use crate::implicit::{
    ImplicitVariant, NewtonOptions, implicit_run_with_source, newton_trace, seed_run_observed,
};
use crate::params::{Boundary, FhnParams, FhnState, reaction, reaction_derivative};
use crate::scenario::{Scheme, simulate};
use crate::tridiag::{self, TridiagSolver};
use crate::{PdeError, Scenario, explicit_run, explicit_run_unchecked, implicit_run};

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

fn fail(what: &str) -> impl Fn(PdeError) -> ExperimentError + '_ {
    move |e| ExperimentError::from_display(what, e)
}

fn rmse(a: &[f64], b: &[f64]) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / a.len().max(1) as f64).sqrt()
}

/// `log2(prev / cur)`: the observed order when the step halves (`None` on the first level).
fn order(prev: Option<f64>, cur: f64) -> Option<f64> {
    prev.filter(|_| cur > 0.0).map(|p| (p / cur).log2())
}

/// The two discretisations of a no-flux end: ours (a mirrored ghost node) and the seed's
/// (`v_0 = v_1`).
const ENDS: [(&str, Boundary); 2] = [("mirror", Boundary::NoFlux), ("copy", Boundary::Copy)];

const ENDS_NOTE: &str = "Ends: ours are no-flux with a mirrored ghost node (v_{-1} = v_1, second \
    order; rows `ends = mirror`); the seed writes v_0 = v_1 (the end copies its neighbour, first \
    order; rows `ends = copy`, `warpath fhn --ends copy`).";

const LIMIT_NOTE: &str = "Stability limit: the seed uses 2 dt <= dx^2; ours also counts the \
    reaction term's stiffness, dt <= 2 / (4/dx^2 + K) with K = max(0, -min f'(v)) over \
    v in [-0.4, 1] (0.1156 instead of 0.125 at dx = 0.5; the seed's is \
    `--stability-limit seed`, LimitRule::DiffusionOnly). dt = 0.05 here is below both.";

/// Profile rows `{kind: "profile", ends, t, x, v}` of `sim` at the snapshots nearest `times`,
/// every `stride`-th node.
fn profile_rows(
    sim: &crate::Simulation,
    ends: &str,
    times: &[f64],
    stride: usize,
    out: &mut Vec<Row>,
) {
    for &t in times {
        let Some(k) = (0..sim.times.len()).min_by(|&a, &b| {
            (sim.times[a] - t)
                .abs()
                .total_cmp(&(sim.times[b] - t).abs())
        }) else {
            continue;
        };
        let ts = (sim.times[k] * 100.0).round() / 100.0;
        for i in (0..sim.x.len()).step_by(stride.max(1)) {
            out.push(
                Row::new()
                    .with("kind", "profile")
                    .with("ends", ends)
                    .with("t", ts)
                    .with("x", sim.x[i])
                    .with("v", sim.v[k][i]),
            );
        }
    }
}

/// Positions of the pulses in `v`: local maxima above 1/2 inside the domain.
fn pulses(x: &[f64], v: &[f64]) -> Vec<f64> {
    (1..v.len().saturating_sub(1))
        .filter(|&i| v[i] > 0.5 && v[i] >= v[i - 1] && v[i] > v[i + 1])
        .map(|i| x[i])
        .collect()
}

/// Times at which `v` at node `i` rises through 1/2 (interpolated between snapshots).
fn rises(sim: &crate::Simulation, i: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for k in 1..sim.times.len() {
        let (a, b) = (sim.v[k - 1][i] - 0.5, sim.v[k][i] - 0.5);
        if a < 0.0 && b >= 0.0 {
            let (t0, t1) = (sim.times[k - 1], sim.times[k]);
            out.push(t0 + (t1 - t0) * (-a) / (b - a));
        }
    }
    out
}

/// The explicit scheme on the CPU from `p` with both ends set to `b`, `snaps` snapshots
/// (`what` names the run in the error).
fn explicit_with_ends(
    scenario: Scenario,
    p: FhnParams,
    b: Boundary,
    snaps: usize,
    what: &str,
) -> Result<crate::Simulation, ExperimentError> {
    let base = FhnParams {
        left: b,
        right: b,
        ..p
    };
    simulate(
        scenario,
        base,
        Scheme::Explicit,
        Exec::Cpu,
        snaps,
        &mut |_, _| {},
    )
    .map_err(fail(what))
}

/// `fhn-fig1-constant`: the seed's Fig. 1. The resting axon (`v_0 = 0`) with `v(L, t) = 1`,
/// the seed's parameters, explicit scheme, to `t = 306.19` (the time the seed shows), with
/// both end discretisations: the profiles `v(x)` at four times (every 8th node), and per
/// variant the pulses in the domain at the end, the period of the train at `x = 150` and the
/// fitted speed.
///
/// # Errors
/// A run failing (none expected).
pub fn fig1_constant(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "fhn-fig1-constant",
        "002",
        "FitzHugh-Nagumo, Fig. 1: a constant input v(L, t) = 1 starts a pulse train",
    );
    e.seed_says = "Fig. 1: a constant impulse v(t, L) = 1 at the end of an unexcited axon \
        (v_0(x) = 0) gives rise to oscillatory behaviour: excitation and relaxation, waves \
        travelling right to left, the state shown at t = 306.19. a = 0.01, gamma = 2, \
        eps = 0.01, N = 401, dx = 0.5, 2 dt < dx^2; explicit scheme."
        .into();
    e.seed_rows
        .push(Row::new().with("kind", "summary").with("t_end", 306.19));
    let t_end = 306.19;
    let p = FhnParams {
        t_end,
        ..FhnParams::default()
    };
    let snaps = (t_end / 0.5).round() as usize; // one snapshot per 0.5 time units
    let times = [76.55, 153.1, 229.64, t_end];
    let probe = ((150.0 / p.dx()).round() as usize).min(p.n - 1);
    for (ends, b) in ENDS {
        ctx.progress(&format!("constant input, {ends} ends"));
        let sim = explicit_with_ends(Scenario::Constant, p, b, snaps, "the constant-input run")?;
        if ends == "mirror" {
            profile_rows(&sim, ends, &times, 8, &mut e.rows);
        }
        let last = sim.v.last().map(Vec::as_slice).unwrap_or(&[]);
        let at = pulses(&sim.x, last);
        let r = rises(&sim, probe);
        let period = (r.len() >= 2).then(|| (r[r.len() - 1] - r[0]) / (r.len() - 1) as f64);
        e.rows.push(
            Row::new()
                .with("kind", "summary")
                .with("ends", ends)
                .with("t_end", sim.times.last().copied().unwrap_or(0.0))
                .with("pulses_in_domain", at.len())
                .with(
                    "pulse_positions",
                    at.iter()
                        .map(|x| format!("{x:.1}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                )
                .with("period_at_x150", period)
                .with("speed", sim.speed)
                .with("v_min", last.iter().copied().fold(f64::INFINITY, f64::min))
                .with(
                    "v_max",
                    last.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ),
        );
    }
    e.notes.push(ENDS_NOTE.into());
    e.notes.push(LIMIT_NOTE.into());
    e.notes.push(
        "`warpath fhn --scenario constant` is this run (add `--ends copy` for the seed's ends); \
         `--scenario pulse-train` is a periodic stimulus instead (v(L, t) = 1 for 5 of every \
         100 time units), which starts one pulse per stimulus for other parameters too."
            .into(),
    );
    e.notes.push(
        "The seed draws a space-time picture; the chart shows v(x) at four times (every 8th \
         node), the table summarises the train: pulses in the domain at t = 306.19, the time \
         between pulses at x = 150 and the fitted speed (negative: leftwards)."
            .into(),
    );
    e.figure = Some(
        FigureSpec::lines("x", &["v"])
            .title("v(x) at t = 76.55, 153.1, 229.64, 306.19 (constant input at x = 200)")
            .series(&["t"])
            .labels("x", "v"),
    );
    Ok(e)
}

/// `fhn-fig2-gaussian`: the seed's Fig. 2. The Gaussian `exp(-(x - 100)^2 / 10)` with the
/// seed's parameters, explicit scheme, to `t = 300`, with both end discretisations: profiles
/// at four times, and per variant the time the centre collapses (first falls below 1/2 after
/// the start), the pulse speed and the time the pulses vanish (`max v < 1/2`).
///
/// # Errors
/// A run failing (none expected).
pub fn fig2_gaussian(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "fhn-fig2-gaussian",
        "002",
        "FitzHugh-Nagumo, Fig. 2: a Gaussian impulse splits into two pulses",
    );
    e.seed_says = "Fig. 2: the impulse v_0(x) = exp(-(x - 100)^2 / 10) at t = 0 grows axially \
        before its peak collapses at t = 37.85, giving rise to two stable impulses that travel \
        in opposite directions before vanishing at t = 242.98 at the boundaries, leaving the \
        axon at rest. Same parameters as Fig. 1."
        .into();
    e.seed_rows.push(
        Row::new()
            .with("kind", "summary")
            .with("t_collapse", 37.85)
            .with("t_vanish", 242.98),
    );
    let p = FhnParams {
        t_end: 300.0,
        ..FhnParams::default()
    };
    let snaps = 600;
    let times = [0.0, 37.85, 100.0, 200.0];
    let centre = p.n / 2;
    for (ends, b) in ENDS {
        ctx.progress(&format!("Gaussian impulse, {ends} ends"));
        let sim = explicit_with_ends(Scenario::Gaussian, p, b, snaps, "the Gaussian run")?;
        if ends == "mirror" {
            profile_rows(&sim, ends, &times, 8, &mut e.rows);
        }
        let collapse = (1..sim.times.len())
            .find(|&k| sim.v[k][centre] < 0.5)
            .map(|k| sim.times[k]);
        let vanish = (1..sim.times.len())
            .find(|&k| sim.v[k].iter().all(|&v| v < 0.5))
            .map(|k| sim.times[k]);
        e.rows.push(
            Row::new()
                .with("kind", "summary")
                .with("ends", ends)
                .with("t_collapse", collapse)
                .with("t_vanish", vanish)
                .with("speed", sim.speed)
                .with(
                    "v_max_end",
                    sim.v
                        .last()
                        .map(|v| v.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
                ),
        );
    }
    e.notes.push(ENDS_NOTE.into());
    e.notes.push(LIMIT_NOTE.into());
    e.notes.push(
        "t_collapse: the first snapshot (every 0.5) where v at x = 100 is below 1/2; t_vanish: \
         the first where v < 1/2 everywhere. The seed does not define its two times; these \
         are our reading of them."
            .into(),
    );
    e.figure = Some(
        FigureSpec::lines("x", &["v"])
            .title("v(x) at t = 0, 37.85, 100, 200")
            .series(&["t"])
            .labels("x", "v"),
    );
    Ok(e)
}

/// The manufactured solution `v = 0.5 + 0.4 cos(kx) cos t`, `w = 0.2 cos(kx) sin t` with
/// `k = 3 pi / L` (no flux at both ends), and the source terms that make it exact.
///
/// With `discrete = true` the source uses the discrete Laplacian's eigenvalue
/// `-(4/dx^2) sin^2(k dx / 2)` instead of `-k^2` (`cos(kx)` is an exact eigenvector of the
/// no-flux grid Laplacian), so the spatial error vanishes and only the time error remains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Manufactured {
    /// The model parameters (`a`, `eps`, `gamma`, `length`).
    pub params: FhnParams,
    /// Whether the source cancels the spatial discretisation error.
    pub discrete: bool,
}

impl Manufactured {
    /// The default set-up: `L = 20`, `a = 0.01`, `eps = 0.1`, `gamma = 0.5`.
    pub fn new(discrete: bool) -> Self {
        Manufactured {
            params: FhnParams {
                length: 20.0,
                eps: 0.1,
                gamma: 0.5,
                v_range: (0.0, 1.0),
                ..FhnParams::default()
            },
            discrete,
        }
    }

    fn k(&self) -> f64 {
        3.0 * std::f64::consts::PI / self.params.length
    }

    /// The exact `(v, w)` at `(x, t)`.
    pub fn exact(&self, x: f64, t: f64) -> (f64, f64) {
        let c = (self.k() * x).cos();
        (0.5 + 0.4 * c * t.cos(), 0.2 * c * t.sin())
    }

    /// The source `(s_v, s_w)` at `(x, t)` for grid spacing `dx`.
    pub fn source(&self, x: f64, t: f64, dx: f64) -> (f64, f64) {
        let k = self.k();
        let c = (k * x).cos();
        let (v, w) = self.exact(x, t);
        let lam = if self.discrete {
            let s = (k * dx / 2.0).sin();
            4.0 / (dx * dx) * s * s
        } else {
            k * k
        };
        let vt = -0.4 * c * t.sin();
        let vxx = -lam * 0.4 * c * t.cos();
        let wt = 0.2 * c * t.cos();
        let p = &self.params;
        (
            vt - vxx - reaction(v, p.a) + w,
            wt - p.eps * (v - p.gamma * w),
        )
    }

    fn start(&self, p: &FhnParams) -> FhnState {
        let mut s = FhnState::rest(p.n);
        for (i, x) in p.grid().iter().enumerate() {
            (s.v[i], s.w[i]) = self.exact(*x, 0.0);
        }
        s
    }

    /// RMSE of `v` at `t_end` for forward Euler with spacing `dx` and step `dt`.
    ///
    /// # Errors
    /// Parameter errors.
    pub fn explicit_error(&self, dx: f64, dt: f64, t_end: f64) -> Result<f64, PdeError> {
        let p = FhnParams {
            dt,
            t_end,
            ..self.params
        }
        .with_dx(dx);
        let dx = p.dx();
        let x = p.grid();
        let mut s = self.start(&p);
        let (mut vn, mut wn) = (vec![0.0; p.n], vec![0.0; p.n]);
        for step in 0..p.steps() {
            let t = step as f64 * dt;
            explicit_step_reference(&p, &s.v, &s.w, &mut vn, &mut wn)?;
            for i in 0..p.n {
                let (sv, sw) = self.source(x[i], t, dx);
                vn[i] += dt * sv;
                wn[i] += dt * sw;
            }
            std::mem::swap(&mut s.v, &mut vn);
            std::mem::swap(&mut s.w, &mut wn);
        }
        let t = p.steps() as f64 * dt;
        let exact: Vec<f64> = x.iter().map(|&x| self.exact(x, t).0).collect();
        Ok(rmse(&s.v, &exact))
    }

    /// RMSE of `v` at `t_end` for Crank–Nicolson with spacing `dx` and step `dt`.
    ///
    /// # Errors
    /// Parameter and Newton errors.
    pub fn implicit_error(&self, dx: f64, dt: f64, t_end: f64) -> Result<f64, PdeError> {
        let p = FhnParams {
            dt,
            t_end,
            ..self.params
        }
        .with_dx(dx);
        let dxg = p.dx();
        let mut s = self.start(&p);
        let src = |x: f64, t: f64| self.source(x, t, dxg);
        let opts = NewtonOptions {
            tol: 1e-13,
            ..NewtonOptions::default()
        };
        implicit_run_with_source(&p, &mut s, p.steps(), opts, Exec::Cpu, Some(&src))?;
        let exact: Vec<f64> = p.grid().iter().map(|&x| self.exact(x, s.t).0).collect();
        Ok(rmse(&s.v, &exact))
    }
}

/// The Gaussian scenario on `p` to `p.t_end`: explicit, or Crank–Nicolson with `implicit`.
fn gaussian_run(p: &FhnParams, implicit: Option<TridiagSolver>) -> Result<FhnState, PdeError> {
    gaussian_run_variant(p, implicit, ImplicitVariant::CrankNicolson)
}

/// [`gaussian_run`] with the implicit scheme's `variant`.
fn gaussian_run_variant(
    p: &FhnParams,
    implicit: Option<TridiagSolver>,
    variant: ImplicitVariant,
) -> Result<FhnState, PdeError> {
    let mut s = Scenario::Gaussian.initial_state(p);
    match implicit {
        None => {
            explicit_run(p, &mut s, p.steps(), Exec::Cpu)?;
        }
        Some(solver) => {
            let opts = NewtonOptions {
                tol: 1e-12,
                solver,
                variant,
                max_iter: 200,
            };
            implicit_run(p, &mut s, p.steps(), opts, Exec::Cpu)?;
        }
    }
    Ok(s)
}

/// [`order_row`] for our schemes (`variant = ours`).
fn order_row_ours(
    method: &str,
    scheme: &str,
    axis: &str,
    step: f64,
    err: f64,
    ord: Option<f64>,
) -> Row {
    order_row(method, scheme, axis, step, err, ord).with("variant", OURS.name())
}

/// Our implicit variant and the seed's, for the rows' `variant` key.
const OURS: ImplicitVariant = ImplicitVariant::CrankNicolson;
const SEED: ImplicitVariant = ImplicitVariant::SeedLeapfrog;

fn order_row(method: &str, scheme: &str, axis: &str, step: f64, err: f64, ord: Option<f64>) -> Row {
    Row::new()
        .with("method", method)
        .with("scheme", scheme)
        .with("axis", axis)
        .with("step", step)
        .with("rmse", err)
        .with("order", ord)
}

/// The name of a Crank–Nicolson row with `solver`.
fn cn_name(solver: TridiagSolver) -> &'static str {
    match solver {
        TridiagSolver::Thomas => "cn-thomas",
        TridiagSolver::CyclicReduction => "cn-cr",
        TridiagSolver::Pcr => "cn-pcr",
    }
}

/// `fhn-orders`: the seed's Figs 3, 4, 9 and 10. RMSE of `v` against the step size, halving
/// `levels` times, and the observed order `log2(e(h) / e(h/2))`:
///
/// - against a fine numerical reference (the seed's method), Gaussian scenario at `t = 5`:
///   explicit and Crank–Nicolson in `dx` (fixed small `dt`), explicit in `dt` and
///   Crank–Nicolson with Thomas and with cyclic reduction in `dt` (`dx = 0.5`);
/// - against a manufactured exact solution ([`Manufactured`]): the same in `dx` and `dt`.
///
/// # Errors
/// A run failing (none expected).
pub fn orders(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "fhn-orders",
        "002",
        "FitzHugh-Nagumo, Figs 3, 4, 9, 10: error against dx and dt",
    );
    e.seed_says = "RMSE against a run with a much smaller step. Explicit: Fig. 3, dx varied \
        against dx = 0.000045 at t = 0.91, dt = 0.0098: halving dx quarters the RMSE (order 2); \
        Fig. 4, dt varied against dt = 0.00023, dx = 0.5, several t: halving dt halves it \
        (order 1). Crank-Nicolson: Fig. 9, dx varied against dx = 0.012 at t = 0.51, \
        dt = 0.000071: unexpectedly order 1 (no explanation found); Fig. 10, dt varied against \
        dt = 0.00025, dx = 0.52: order 2 with Thomas and with cyclic reduction (Thomas showing \
        aberrations, then instability, as dt grows)."
        .into();
    for (scheme, axis, ord) in [
        ("explicit", "dx", 2.0),
        ("explicit", "dt", 1.0),
        ("cn-thomas", "dx", 1.0),
        ("cn-thomas", "dt", 2.0),
        ("cn-cr", "dt", 2.0),
    ] {
        e.seed_rows.push(
            Row::new()
                .with("method", "reference")
                .with("scheme", scheme)
                .with("axis", axis)
                .with("order", ord),
        );
    }
    let levels = ctx.pick(3usize, 5);
    let base = FhnParams {
        t_end: 5.0,
        ..FhnParams::default()
    };
    // dx halving, one dt below every grid's explicit limit; the reference on a finer grid.
    ctx.progress("reference runs: dx halving");
    let finest = 1.0 / (1 << (levels + 1)) as f64;
    let dt = 0.9 * base.with_dx(finest).stability_limit(finest).dt_max;
    let fine = FhnParams { dt, ..base }.with_dx(finest);
    let ref_explicit = gaussian_run(&fine, None).map_err(fail("the fine explicit reference"))?;
    let ref_cn = gaussian_run(&fine, Some(TridiagSolver::Thomas))
        .map_err(fail("the fine Crank-Nicolson reference"))?;
    let ref_seed = gaussian_run_variant(&fine, Some(TridiagSolver::Thomas), SEED)
        .map_err(fail("the fine seed-variant reference"))?;
    for (scheme, solver, variant, reference) in [
        ("explicit", None, OURS, &ref_explicit),
        ("cn-thomas", Some(TridiagSolver::Thomas), OURS, &ref_cn),
        ("cn-thomas", Some(TridiagSolver::Thomas), SEED, &ref_seed),
    ] {
        let mut prev = None;
        for l in 0..levels {
            let dx = 1.0 / (1 << l) as f64;
            let s = gaussian_run_variant(&FhnParams { dt, ..base }.with_dx(dx), solver, variant)
                .map_err(fail("a dx-halving run"))?;
            let stride = (dx / finest).round() as usize;
            let r: Vec<f64> = reference.v.iter().step_by(stride).copied().collect();
            let err = rmse(&s.v, &r);
            e.rows.push(
                order_row("reference", scheme, "dx", dx, err, order(prev, err))
                    .with("variant", variant.name()),
            );
            prev = Some(err);
        }
    }
    // dt halving at dx = 0.5 against a Crank-Nicolson run with a tiny step.
    ctx.progress("reference runs: dt halving");
    let pref = FhnParams {
        dt: 0.2 / (1 << (levels + 6)) as f64,
        ..base
    };
    let reference =
        gaussian_run(&pref, Some(TridiagSolver::Thomas)).map_err(fail("the dt reference"))?;
    let reference_seed = gaussian_run_variant(&pref, Some(TridiagSolver::Thomas), SEED)
        .map_err(fail("the seed-variant dt reference"))?;
    let mut runs: Vec<(&str, Option<TridiagSolver>, ImplicitVariant, f64)> =
        vec![("explicit", None, OURS, 0.1)];
    for variant in [OURS, SEED] {
        for solver in [TridiagSolver::Thomas, TridiagSolver::CyclicReduction] {
            runs.push((cn_name(solver), Some(solver), variant, 0.2));
        }
    }
    for (scheme, solver, variant, dt0) in runs {
        let mut prev = None;
        let reference = if variant == SEED {
            &reference_seed
        } else {
            &reference
        };
        for l in 0..levels {
            let dt = dt0 / (1 << l) as f64;
            let s = gaussian_run_variant(&FhnParams { dt, ..base }, solver, variant)
                .map_err(fail("a dt-halving run"))?;
            let err = rmse(&s.v, &reference.v);
            e.rows.push(
                order_row("reference", scheme, "dt", dt, err, order(prev, err))
                    .with("variant", variant.name()),
            );
            prev = Some(err);
        }
    }
    // The manufactured solution: exact errors, no reference run.
    ctx.progress("manufactured solution");
    let cont = Manufactured::new(false);
    let (mut pe, mut pi) = (None, None);
    for l in 0..levels {
        let dx = 1.0 / (1 << l) as f64;
        let ee = cont
            .explicit_error(dx, 0.1 * dx * dx, 1.0)
            .map_err(fail("manufactured explicit"))?;
        let ei = cont
            .implicit_error(dx, dx / 8.0, 1.0)
            .map_err(fail("manufactured Crank-Nicolson"))?;
        e.rows.push(order_row_ours(
            "manufactured",
            "explicit",
            "dx",
            dx,
            ee,
            order(pe, ee),
        ));
        e.rows.push(order_row_ours(
            "manufactured",
            "cn-thomas",
            "dx",
            dx,
            ei,
            order(pi, ei),
        ));
        (pe, pi) = (Some(ee), Some(ei));
    }
    let disc = Manufactured::new(true);
    let (mut pe, mut pi) = (None, None);
    for l in 0..levels {
        let f = (1 << l) as f64;
        let (dte, dti) = (0.04 / f, 0.2 / f);
        let ee = disc
            .explicit_error(0.5, dte, 1.0)
            .map_err(fail("manufactured explicit"))?;
        let ei = disc
            .implicit_error(0.5, dti, 1.0)
            .map_err(fail("manufactured Crank-Nicolson"))?;
        e.rows.push(order_row_ours(
            "manufactured",
            "explicit",
            "dt",
            dte,
            ee,
            order(pe, ee),
        ));
        e.rows.push(order_row_ours(
            "manufactured",
            "cn-thomas",
            "dt",
            dti,
            ei,
            order(pi, ei),
        ));
        (pe, pi) = (Some(ee), Some(ei));
    }
    e.notes.push(format!(
        "Reference method: the Gaussian scenario (seed's parameters) at t = 5. dx halving from \
         1 with dt = {dt:.3e} for every run, against a run with dx = {finest} (explicit and \
         Crank-Nicolson each against its own); dt halving at dx = 0.5 against Crank-Nicolson \
         with dt = {:.2e}. The seed's sizes (t = 0.91 or 0.51, dx down to 0.000045) are not \
         reproducible as given (dt = 0.0098 with dx = 0.000045 breaks 2 dt <= dx^2); ours show \
         the same slopes.",
        pref.dt
    ));
    e.notes.push(
        "Our Crank-Nicolson is second order in dx (the seed saw first order, Fig. 9): w is \
         advanced by the trapezoidal rule coupled to v's step (the seed: leapfrog, \
         w^{j+1} = 2 dt eps (v^j - gamma w^j) + w^{j-1}) and the ends are a mirrored ghost \
         node (the seed's v_0 = v_1 is first order, a likely cause of its slope). The \
         manufactured rows use an exact solution instead of a reference run (explicit dt = \
         0.1 dx^2, CN dt = dx / 8 when dx halves; the discrete source cancels the spatial \
         error when dt halves)."
            .into(),
    );
    e.notes.push(
        "variant = seed: the seed's own implicit scheme (ImplicitVariant::SeedLeapfrog; \
         `warpath fhn --scheme implicit --implicit-variant seed`): leapfrog w, the ends \
         v_0 = v_1 and v_{N-1} = v_{N-2}, the Jacobian with first and last rows (1, 1), each \
         against its own reference run of the same variant. It reproduces Fig. 10 (order 2 in \
         dt with Thomas and with cyclic reduction, the two solvers agreeing to round-off, so \
         no Thomas aberrations). It does not reproduce Fig. 9: in dx it is second order like \
         ours, because the Gaussian is at rest at the ends (v_0 = v_1 holds there to \
         round-off, so the first-order copied end never enters) and leapfrog w differs from \
         the trapezoidal w by O(dt^2). The seed's first-order slope is not in the equations \
         it prints, in this set-up. The manufactured rows are ours only (the seed variant \
         takes no source)."
            .into(),
    );
    e.figure = Some(
        FigureSpec::lines("step", &["rmse"])
            .title("RMSE of v against the step (dx or dt) halved")
            .series(&["method", "scheme", "variant", "axis"])
            .log(true, true)
            .labels("step (dx or dt)", "RMSE of v"),
    );
    Ok(e)
}

/// Seconds per explicit iteration on the CPU for `n` nodes: `(total, core)` over `iters`
/// iterations. The total is a fresh run: allocating and initialising the state, the work
/// arrays and the iterations; the core is `iters` more iterations on the same arrays. The
/// median of `repeats`.
fn cpu_iteration(n: usize, iters: u64, repeats: usize) -> Result<(f64, f64), PdeError> {
    let p = FhnParams {
        n,
        length: (n - 1) as f64 * 0.5,
        ..FhnParams::default()
    };
    let (mut totals, mut cores) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        let t0 = Instant::now();
        let mut scratch = crate::explicit::ExplicitScratch::default();
        let mut s = Scenario::Gaussian.initial_state(&p);
        crate::explicit::explicit_run_reusing(&p, &mut s, iters, Exec::Cpu, &mut scratch)?;
        let total = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        crate::explicit::explicit_run_reusing(&p, &mut s, iters, Exec::Cpu, &mut scratch)?;
        let core = t1.elapsed().as_secs_f64();
        std::hint::black_box(&s.v);
        totals.push(total / iters as f64);
        cores.push(core / iters as f64);
    }
    Ok((median(&mut totals), median(&mut cores)))
}

/// `fhn-cpu-gpu`: the seed's Figs 5 and 6. Seconds per explicit iteration (30 iterations, the
/// median of 3 runs) for `n = 2^10 ..= 2^24` (quick: `2^16`): on one CPU thread and on all
/// cores, the total (allocation, initialisation and the loop) and the core loop alone; on the
/// GPU, "w/o tx" (upload once, 30 steps, download once) and "w/ tx" (upload, one step and
/// download every iteration), each with its kernel time. Ratio rows at the largest `n`.
///
/// # Errors
/// A run failing (none expected).
pub fn cpu_gpu(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "fhn-cpu-gpu",
        "002",
        "FitzHugh-Nagumo, Figs 5, 6: explicit time per iteration, CPU and GPU",
    );
    e.seed_says = "Wall time of one explicit iteration, the mean of 30, against N (up to 2^24), \
        sequential C# on an i7-2360QM against CUDAfy on a GeForce GT 525m (96 cores). At \
        N = 2^24 'GPU w/o tx' (no intermediate results sent back) is 19x faster than 'GPU w/ \
        tx' and 73x faster than the CPU; the core loop is 3.7% of the CPU's time and 14.9% of \
        the GPU's, and the GPU's core loop is 18x faster than the CPU's (Fig. 6)."
        .into();
    e.seed_rows.push(
        Row::new()
            .with("kind", "ratios")
            .with("n", 1u64 << 24)
            .with("gpu_wo_tx_vs_w_tx", 19.0)
            .with("gpu_wo_tx_vs_cpu", 73.0)
            .with("cpu_core_share", 0.037)
            .with("gpu_core_share", 0.149)
            .with("core_gpu_vs_cpu", 18.0),
    );
    let hi = ctx.pick(16u32, 24);
    let iters = 30u64;
    let gpu = if ctx.gpu_rows() {
        gpu_runtime::gpu().ok()
    } else {
        None
    };
    let simulated = ctx.gpu == GpuUse::Simulated;
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| ExperimentError::from_display("a one-thread pool", e))?;
    let mut last = std::collections::BTreeMap::new();
    for k in (10..=hi).step_by(2) {
        let n = 1usize << k;
        ctx.progress(&format!("n = 2^{k}"));
        let repeats = if n >= 1 << 22 { 1 } else { 3 };
        for (backend, pool) in [("cpu", Some(&one_thread)), ("cpu-parallel", None)] {
            let (total, core) = match pool {
                Some(pool) => pool.install(|| cpu_iteration(n, iters, repeats)),
                None => cpu_iteration(n, iters, repeats),
            }
            .map_err(fail("a CPU run"))?;
            e.rows.push(
                Row::new()
                    .with("kind", "time")
                    .with("n", n)
                    .with("backend", backend)
                    .secs("total_s_per_iter", total)
                    .secs("core_s_per_iter", core)
                    .with("core_share", core / total),
            );
            last.insert(backend, (n, total, core));
        }
        let Some(g) = gpu else { continue };
        if simulated && n > 1 << 10 {
            continue; // the simulator is slow: its rows check results, not speed
        }
        let p = FhnParams {
            n,
            length: (n - 1) as f64 * 0.5,
            ..FhnParams::default()
        };
        let it = if simulated { 2 } else { iters };
        // w/o tx: one upload, `it` steps, one download.
        let mut s = Scenario::Gaussian.initial_state(&p);
        let t0 = Instant::now();
        let tm = crate::explicit_gpu_timing(g, &p, &mut s.v, &mut s.w, 1, it)
            .map_err(fail("the GPU run"))?;
        let total = t0.elapsed().as_secs_f64() / it as f64;
        let core = tm.kernels_only / it as f64;
        // the CPU's answer after the same steps, to check the GPU's
        let mut c = Scenario::Gaussian.initial_state(&p);
        explicit_run(&p, &mut c, it, Exec::Cpu).map_err(fail("the CPU check"))?;
        let agree = s.v.iter().zip(&c.v).all(|(a, b)| (a - b).abs() < 1e-9);
        e.rows.push(
            Row::new()
                .with("kind", "time")
                .with("n", n)
                .on_gpu(ctx)
                .with("variant", "w/o tx")
                .secs("total_s_per_iter", total)
                .secs("core_s_per_iter", core)
                .with("core_share", (!simulated).then_some(core / total))
                .with("matches_cpu", agree),
        );
        // w/ tx: every iteration uploads, steps and downloads.
        let mut s = Scenario::Gaussian.initial_state(&p);
        let (mut total_tx, mut core_tx) = (0.0, 0.0);
        let t0 = Instant::now();
        for _ in 0..it {
            let tm = crate::explicit_gpu_timing(g, &p, &mut s.v, &mut s.w, 1, 1)
                .map_err(fail("the GPU run"))?;
            core_tx += tm.kernels_only;
        }
        total_tx += t0.elapsed().as_secs_f64();
        let agree_tx = s.v.iter().zip(&c.v).all(|(a, b)| (a - b).abs() < 1e-9);
        e.rows.push(
            Row::new()
                .with("kind", "time")
                .with("n", n)
                .on_gpu(ctx)
                .with("variant", "w/ tx")
                .secs("total_s_per_iter", total_tx / it as f64)
                .secs("core_s_per_iter", core_tx / it as f64)
                .with("core_share", (!simulated).then_some(core_tx / total_tx))
                .with("matches_cpu", agree_tx),
        );
        last.insert("cuda w/o tx", (n, total, core));
        last.insert("cuda w/ tx", (n, total_tx / it as f64, core_tx / it as f64));
    }
    // Ratios at the largest n measured on every backend, keyed like the seed's row.
    if let Some(&(n, cpu_total, cpu_core)) = last.get("cpu") {
        let mut r = Row::new()
            .with("kind", "ratios")
            .with("n", n)
            .with("cpu_core_share", cpu_core / cpu_total);
        if let (Some(&(gn, wo, wo_core)), Some(&(_, w, _)), false) =
            (last.get("cuda w/o tx"), last.get("cuda w/ tx"), simulated)
            && gn == n
        {
            r = r
                .with("gpu_wo_tx_vs_w_tx", w / wo)
                .with("gpu_wo_tx_vs_cpu", cpu_total / wo)
                .with("gpu_core_share", wo_core / wo)
                .with("core_gpu_vs_cpu", cpu_core / wo_core);
        }
        if let Some(&(_, par_total, par_core)) = last.get("cpu-parallel") {
            r = r
                .with("parallel_vs_cpu_total", cpu_total / par_total)
                .with("parallel_vs_cpu_core", cpu_core / par_core);
        }
        e.rows.push(r);
    }
    e.notes.push(
        "backend cpu: one thread (the seed's CPU code was sequential); cpu-parallel: rayon on \
         every core (time-blocked above 2^15 nodes). Our total includes allocating and \
         initialising v and w; the seed's CPU total had 96% outside the core loop, which ours \
         does not reproduce (allocation is cheap here)."
            .into(),
    );
    e.notes.push(
        "GPU w/ tx uploads v and w, runs one step and downloads them every iteration; w/o tx \
         uploads once and downloads once per 30 iterations (the seed's definitions as we read \
         them). On the CPU the core loop is 30 more iterations on the arrays the total \
         allocated. core_s_per_iter on the GPU is CUDA-event time of the kernels alone. Times are \
         medians of 3 runs (one run from 2^22 nodes)."
            .into(),
    );
    if gpu.is_none() {
        e.notes
            .push("No usable CUDA device in this run: CPU rows only.".into());
    } else if simulated {
        e.notes.push(
            "Simulated driver: GPU rows at n = 2^10 only, 2 iterations, results checked \
             against the CPU (matches_cpu), no times."
                .into(),
        );
    }
    e.figure = Some(
        FigureSpec::lines("n", &["total_s_per_iter", "core_s_per_iter"])
            .title("seconds per explicit iteration (total, and core loop alone)")
            .series(&["backend", "variant"])
            .log(true, true)
            .labels("N (nodes)", "seconds per iteration"),
    );
    Ok(e)
}

/// Local extrema of `v` (sign changes of the first difference, ignoring steps below `1e-9`):
/// a smooth front or pulse has one or two, a numerical oscillation many.
fn extrema(v: &[f64]) -> usize {
    let mut last = 0.0f64;
    let mut count = 0;
    for d in v.windows(2).map(|w| w[1] - w[0]) {
        if d.abs() < 1e-9 {
            continue;
        }
        if last != 0.0 && (d > 0.0) != (last > 0.0) {
            count += 1;
        }
        last = d;
    }
    count
}

/// `fhn-adaptive`: the seed's Figs 7 and 8. The adaptive grid ([`adaptive_run`], default
/// options) against the uniform explicit scheme on its finest grid (`N = 401`): for the
/// Gaussian with the seed's parameters at the seed's six times (Fig. 8), the mean nodes per
/// step since the previous time and the RMSE against the uniform run; for the Gaussian with
/// `eps = 0` (Fig. 7) at `t = 60.11, 90.12, 120.11`, the local extrema (oscillations) and the
/// overshoot above 1 of both schemes.
///
/// # Errors
/// A run failing (none expected).
pub fn adaptive(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "fhn-adaptive",
        "002",
        "FitzHugh-Nagumo, Figs 7, 8: the adaptive grid against the uniform one",
    );
    e.seed_says = "Fig. 7: a centred Gaussian with eps = 0 shows numerical oscillations in the \
        explicit scheme at t = 60.11, 90.12, 120.11 as it approaches the steady state; the \
        adaptive scheme removes them. Fig. 8: on the divergent impulse (Fig. 2's set-up) at \
        t = 15.06, 30.13, 45.05, 60.12, 75.05, 90.11 the adaptive grid follows the dynamics \
        without losing quality and uses 2-3x fewer nodes than the explicit scheme."
        .into();
    for ratio in [2.0, 3.0] {
        e.seed_rows.push(
            Row::new()
                .with("case", "divergent impulse")
                .with("node_ratio", ratio),
        );
    }
    let opts = AdaptiveOptions::default();
    for (case, eps, times) in [
        (
            "divergent impulse",
            0.01,
            &[15.06, 30.13, 45.05, 60.12, 75.05, 90.11][..],
        ),
        ("eps = 0", 0.0, &[60.11, 90.12, 120.11][..]),
    ] {
        ctx.progress(case);
        let p = FhnParams {
            eps,
            ..FhnParams::default()
        };
        let mut a = Scenario::Gaussian.initial_state(&p);
        let mut u = a.clone();
        let mut done = 0u64;
        for &t in times {
            let upto = (t / p.dt).round() as u64;
            let steps = upto - done;
            let st = adaptive_run(&p, &mut a, steps, &opts).map_err(fail("the adaptive run"))?;
            explicit_run(&p, &mut u, steps, Exec::Cpu).map_err(fail("the uniform run"))?;
            done = upto;
            let over = |v: &[f64]| v.iter().copied().fold(0.0f64, |m, x| m.max(x - 1.0));
            e.rows.push(
                Row::new()
                    .with("case", case)
                    .with("t", t)
                    .with("uniform_nodes", p.n)
                    .with("adaptive_nodes", st.mean_nodes)
                    .with("node_ratio", p.n as f64 / st.mean_nodes)
                    .with("rmse_vs_uniform", rmse(&a.v, &u.v))
                    .with("extrema_uniform", extrema(&u.v))
                    .with("extrema_adaptive", extrema(&a.v))
                    .with("overshoot_uniform", over(&u.v))
                    .with("overshoot_adaptive", over(&a.v)),
            );
        }
    }
    e.notes.push(
        "adaptive_nodes: the mean number of active nodes per step since the previous time \
         shown (from t = 0 for the first); node_ratio = 401 / adaptive_nodes. The adaptive \
         grid is drawn from the uniform one: every 8th node everywhere, every 2nd where \
         |v_x| > 0.01 or |v_t| > 0.001, every node within 6 of an inflection point, regridded \
         every 10 steps (AdaptiveOptions::default())."
            .into(),
    );
    e.notes.push(
        "The seed's oscillations (Fig. 7) do not appear in our uniform run: dt = 0.05 is well \
         inside our stability limit (0.1156) and values are never pushed past it, so \
         extrema_uniform stays at the count of real pulses and fronts. The seed's 2 dt < dx^2 \
         allowed dt close to 0.125, where the stiff reaction near v = 1 is only just damped."
            .into(),
    );
    e.figure = Some(
        FigureSpec::lines("t", &["node_ratio"])
            .title("uniform nodes / adaptive nodes per step (seed: 2-3x)")
            .series(&["case"])
            .labels("t", "401 / mean adaptive nodes"),
    );
    Ok(e)
}

/// How a run of the Gaussian scenario (with a `1e-6` checkerboard perturbation, so that an
/// unstable mode shows) to `p.t_end` ended: `"bounded"` (`|v| < 2` after every step),
/// `"unbounded"` (stopped after the first step with `|v| >= 2`), or
/// `"newton-failed"` (Crank–Nicolson whose Newton iteration did not converge in 30
/// iterations); and the largest `|v|` where it ended (`None` when not finite).
fn bounded_run(p: &FhnParams, implicit: Option<TridiagSolver>) -> (&'static str, Option<f64>) {
    bounded_run_variant(p, implicit, OURS)
}

/// [`bounded_run`] with the implicit scheme's `variant`; the seed's runs as one run (its
/// leapfrog needs the previous step's `w`), checked after every step.
fn bounded_run_variant(
    p: &FhnParams,
    implicit: Option<TridiagSolver>,
    variant: ImplicitVariant,
) -> (&'static str, Option<f64>) {
    let mut s = Scenario::Gaussian.initial_state(p);
    for (i, v) in s.v.iter_mut().enumerate() {
        *v += if i % 2 == 0 { 1e-6 } else { -1e-6 };
    }
    let max_abs = |s: &FhnState| {
        let max = s.v.iter().map(|v| v.abs()).fold(0.0f64, f64::max);
        s.v.iter().all(|v| v.is_finite()).then_some(max)
    };
    if let (Some(solver), SEED) = (implicit, variant) {
        let opts = NewtonOptions {
            solver,
            variant,
            ..NewtonOptions::default()
        };
        let mut blew_up = false;
        let run = seed_run_observed(p, &mut s, p.steps(), &opts, &mut |st| {
            blew_up = max_abs(st).is_none_or(|m| m >= 2.0);
            !blew_up
        });
        let max = max_abs(&s);
        return match (run, blew_up) {
            (_, true) => ("unbounded", max),
            (Err(_), false) => ("newton-failed", max),
            (Ok(_), false) => ("bounded", max),
        };
    }
    let total = p.steps();
    let mut done = 0;
    while done < total {
        let steps = 1;
        let ok = match implicit {
            None => explicit_run_unchecked(p, &mut s, steps, Exec::Cpu).is_ok(),
            Some(solver) => {
                let opts = NewtonOptions {
                    solver,
                    ..NewtonOptions::default()
                };
                implicit_run(p, &mut s, steps, opts, Exec::Cpu).is_ok()
            }
        };
        done += steps;
        let max = s.v.iter().map(|v| v.abs()).fold(0.0f64, f64::max);
        let max = s.v.iter().all(|v| v.is_finite()).then_some(max);
        if !ok {
            return ("newton-failed", max);
        }
        if max.is_none_or(|m| m >= 2.0) {
            return ("unbounded", max);
        }
    }
    let max = s.v.iter().map(|v| v.abs()).fold(0.0f64, f64::max);
    ("bounded", Some(max))
}

/// `fhn-implicit-stability`: the seed's Fig. 11. For `dt / dx^2` from 0.25 to 1024
/// (`dx = 0.5`, the Gaussian scenario with a checkerboard perturbation to `t = 100`): whether
/// the explicit scheme and Crank–Nicolson with Thomas, cyclic reduction and PCR stay bounded,
/// and the largest `|v|`; the explicit scheme's computed limits (ours and the seed's) and its
/// empirical limit (bisection).
///
/// # Errors
/// None in practice (failed runs count as unstable).
pub fn implicit_stability(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "fhn-implicit-stability",
        "002",
        "FitzHugh-Nagumo, Fig. 11: stability against dt / dx^2 per scheme and solver",
    );
    e.seed_says = "Fig. 11: the explicit scheme is stable up to precisely 2 dt <= dx^2 \
        (dt/dx^2 = 0.5); the implicit scheme up to dt <= dx^2 depending on the tridiagonal \
        solver: Thomas becomes unstable around dt/dx^2 = 0.9, cyclic reduction around 1.05."
        .into();
    for (scheme, limit) in [("explicit", 0.5), ("cn-thomas", 0.9), ("cn-cr", 1.05)] {
        e.seed_rows.push(
            Row::new()
                .with("kind", "limit")
                .with("scheme", scheme)
                .with("largest_stable_ratio", limit),
        );
    }
    let base = FhnParams::default();
    let dx2 = base.dx() * base.dx();
    let ratios: Vec<f64> = ctx.pick(
        vec![0.25, 0.45, 0.5, 0.55, 0.9, 1.05, 2.0, 8.0, 32.0, 128.0],
        vec![
            0.25, 0.4, 0.45, 0.48, 0.5, 0.52, 0.55, 0.6, 0.8, 0.9, 1.0, 1.05, 1.1, 1.5, 2.0, 4.0,
            8.0, 16.0, 32.0, 64.0, 128.0, 256.0,
        ],
    );
    let schemes: [(&str, Option<TridiagSolver>, ImplicitVariant); 6] = [
        ("explicit", None, OURS),
        ("cn-thomas", Some(TridiagSolver::Thomas), OURS),
        ("cn-cr", Some(TridiagSolver::CyclicReduction), OURS),
        ("cn-pcr", Some(TridiagSolver::Pcr), OURS),
        ("cn-thomas", Some(TridiagSolver::Thomas), SEED),
        ("cn-cr", Some(TridiagSolver::CyclicReduction), SEED),
    ];
    for (scheme, solver, variant) in schemes {
        ctx.progress(&format!("{scheme} ({})", variant.name()));
        let mut largest = None;
        let mut unbounded = None;
        for &r in &ratios {
            if solver.is_none() && r > 2.0 {
                break; // long blown up
            }
            let p = FhnParams {
                dt: r * dx2,
                ..base
            };
            let (outcome, max) = bounded_run_variant(&p, solver, variant);
            e.rows.push(
                Row::new()
                    .with("kind", "sweep")
                    .with("scheme", scheme)
                    .with("variant", variant.name())
                    .with("dt_over_dx2", r)
                    .with("outcome", outcome)
                    .with("max_abs_v", max),
            );
            if outcome == "bounded" && largest.is_none_or(|l| l < r) && unbounded.is_none() {
                largest = Some(r);
            }
            if outcome == "unbounded" && unbounded.is_none() {
                unbounded = Some(r);
            }
        }
        let mut row = Row::new()
            .with("kind", "limit")
            .with("scheme", scheme)
            .with("variant", variant.name())
            .with("largest_stable_ratio", largest)
            .with("first_unbounded_ratio", unbounded);
        if solver.is_none() {
            let ours = base.stability_limit(base.dx()).dt_max / dx2;
            let (mut lo, mut hi) = (0.1, 2.0);
            for _ in 0..14 {
                let mid = 0.5 * (lo + hi);
                if bounded_run(
                    &FhnParams {
                        dt: mid * dx2,
                        ..base
                    },
                    None,
                )
                .0 == "bounded"
                {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            row = row
                .with("largest_stable_ratio", lo)
                .with("computed_limit_ours", ours)
                .with(
                    "computed_limit_seed",
                    FhnParams {
                        limit_rule: crate::LimitRule::DiffusionOnly,
                        ..base
                    }
                    .stability_limit(base.dx())
                    .dt_max
                        / dx2,
                );
        }
        e.rows.push(row);
    }
    e.notes.push(
        "outcome: bounded (|v| < 2 after every step to t = 100), unbounded (the run stopped \
         after the first step with |v| >= 2; max_abs_v is |v| then), or \
         newton-failed (a Crank-Nicolson step needed more than 30 Newton iterations). \
         largest_stable_ratio: the largest ratio tried that stayed bounded (below the first \
         unbounded one); for the explicit scheme found by bisection. Our computed explicit \
         limit counts the reaction's stiffness over v in [-0.4, 1] and is stricter than the \
         seed's 0.5; near rest the empirical limit is the seed's."
            .into(),
    );
    e.notes.push(
        "Our Crank-Nicolson never became unbounded, with any solver (it is A-stable, and the \
         exact tridiagonal solves agree to round-off, so the solver does not change \
         stability): the seed's limits of 0.9 (Thomas) and 1.05 (cyclic reduction) are not \
         reproduced. At dt/dx^2 = 64 and 128 (dt = 16 and 32, steps longer than a pulse's \
         rise) Newton's iteration from the previous step stops converging within 30 \
         iterations: an accuracy limit, reported as newton-failed, not instability (at 256, \
         two steps to t = 100, it converges again). The seed's \
         w update (leapfrog, w^{j+1} = 2 dt eps (v^j - gamma w^j) + w^{j-1}) is only weakly \
         stable and its Jacobian's first and last rows (1, 1) are not the derivative of \
         v_0 = v_1; either may explain its limits."
            .into(),
    );
    e.notes.push(
        "variant = seed: the seed's own implicit scheme (leapfrog w, ends v_0 = v_1, Jacobian \
         end rows (1, 1); Thomas and cyclic reduction), run as one run per ratio (the \
         leapfrog needs the previous w) and checked after every step. It does not reproduce \
         the seed's 0.9 / 1.05 either: both solvers give the same outcome and the same \
         max |v| at every ratio (each solves the seed's Jacobian exactly), bounded through \
         the ratios in its limit row; above them the first step's Newton iteration does not \
         converge in 30 iterations (newton-failed, not blow-up): the 1e-6 checkerboard puts \
         v_0 != v_1, so the (1, 1) end rows act and Newton is only q-linear (fhn-newton's \
         t = 0 rows), slower as dt grows. A solver-dependent limit needs \
         solvers that do not solve the same system to round-off, which the post's equations \
         do not explain."
            .into(),
    );
    e.figure = Some(
        FigureSpec::points("dt_over_dx2", &["max_abs_v"])
            .title("max |v| at t = 100, or when |v| first passed 2, against dt / dx^2")
            .series(&["scheme", "variant"])
            .log(true, true)
            .labels("dt / dx^2", "max |v|"),
    );
    Ok(e)
}

fn solver_name(s: TridiagSolver) -> &'static str {
    match s {
        TridiagSolver::Thomas => "thomas",
        TridiagSolver::CyclicReduction => "cr",
        TridiagSolver::Pcr => "pcr",
    }
}

/// Below this the update norms are round-off, and their ratios say nothing about the rate.
const ROUND_OFF: f64 = 1e-13;

/// `fhn-newton`: the seed's Fig. 12. Newton's update norms `||dv||_inf` per iteration for one
/// Crank–Nicolson step (`dt = 0.25`, `dt/dx^2 = 1`) from the Gaussian's state at `t = 20, 40,
/// 60` and from the Gaussian at `t = 0` with a `1e-6` checkerboard (its ends not at rest),
/// with each tridiagonal solver (and the GPU's where there is one), run until the update
/// is at most 2^-52; the q-linear ratios `d_{k+1} / d_k` and q-quadratic ratios
/// `d_{k+1} / d_k^2` (over updates above 1e-13), and the mean iterations per step to the
/// default tolerance `1e-10` for several `dt`. Rows with `variant = seed` run the seed's own
/// scheme ([`ImplicitVariant::SeedLeapfrog`]) with Thomas and cyclic reduction.
///
/// # Errors
/// A run failing (none expected).
pub fn newton(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "fhn-newton",
        "002",
        "FitzHugh-Nagumo, Fig. 12: Newton's convergence per tridiagonal solver",
    );
    e.seed_says = "Fig. 12: Thomas typically takes more Newton iterations than cyclic \
        reduction for the same accuracy. Taking the adjustments down to machine epsilon \
        (2^-52), Thomas gives ||dv_{n+1}|| < 0.037 ||dv_n|| (q-linear) and cyclic reduction \
        ||dv_{n+1}|| < 0.17 ||dv_n||^2 (q-quadratic)."
        .into();
    e.seed_rows.push(
        Row::new()
            .with("kind", "rate")
            .with("solver", "thomas")
            .with("max_linear_ratio", 0.037),
    );
    e.seed_rows.push(
        Row::new()
            .with("kind", "rate")
            .with("solver", "cr")
            .with("max_quadratic_ratio", 0.17),
    );
    let solvers = [
        TridiagSolver::Thomas,
        TridiagSolver::CyclicReduction,
        TridiagSolver::Pcr,
    ];
    let mut runs: Vec<(TridiagSolver, Exec, bool, ImplicitVariant)> = solvers
        .iter()
        .map(|&s| (s, Exec::Cpu, false, OURS))
        .collect();
    if ctx.gpu_rows() {
        runs.push((TridiagSolver::Pcr, Exec::Cuda, true, OURS));
    }
    runs.push((TridiagSolver::Thomas, Exec::Cpu, false, SEED));
    runs.push((TridiagSolver::CyclicReduction, Exec::Cpu, false, SEED));
    let trace_opts = |solver, variant| NewtonOptions {
        tol: f64::EPSILON,
        max_iter: if variant == SEED { 200 } else { 12 },
        solver,
        variant,
    };
    let dt = 0.25;
    let p = FhnParams {
        dt,
        ..FhnParams::default()
    };
    // the states to step from: the Gaussian (explicit run) at t = 20, 40, 60
    let mut starts = Vec::new();
    let mut s = Scenario::Gaussian.initial_state(&FhnParams::default());
    for t in [20.0, 40.0, 60.0] {
        let q = FhnParams::default();
        let steps = ((t - s.t) / q.dt).round() as u64;
        explicit_run(&q, &mut s, steps, Exec::Cpu).map_err(fail("the start states"))?;
        starts.push(s.clone());
    }
    // and the Gaussian at t = 0 with the stability experiment's 1e-6 checkerboard, so that
    // v_0 != v_1 and the seed variant's (1, 1) end rows act
    let mut perturbed = Scenario::Gaussian.initial_state(&FhnParams::default());
    for (i, v) in perturbed.v.iter_mut().enumerate() {
        *v += if i % 2 == 0 { 1e-6 } else { -1e-6 };
    }
    starts.push(perturbed);
    for &(solver, exec, gpu, variant) in &runs {
        ctx.progress(&format!(
            "{} traces ({})",
            solver_name(solver),
            variant.name()
        ));
        let (mut lin, mut quad) = (0.0f64, 0.0f64);
        let mut iterations = Vec::new();
        for start in &starts {
            let mut st = start.clone();
            let t0 = st.t;
            let norms = newton_trace(&p, &mut st, trace_opts(solver, variant), exec)
                .map_err(fail("a trace"))?;
            iterations.push(norms.len() as f64);
            for (k, &d) in norms.iter().enumerate() {
                let prev = k.checked_sub(1).map(|j| norms[j]);
                let usable = prev.filter(|&p| p > ROUND_OFF && d > ROUND_OFF);
                let (ql, qq) = (usable.map(|p| d / p), usable.map(|p| d / (p * p)));
                if let (Some(l), Some(q)) = (ql, qq) {
                    lin = lin.max(l);
                    quad = quad.max(q);
                }
                let row = Row::new()
                    .with("kind", "trace")
                    .with("solver", solver_name(solver))
                    .with("variant", variant.name())
                    .with("t", t0.round())
                    .with("iteration", k + 1)
                    .with("update", d)
                    .with("linear_ratio", ql)
                    .with("quadratic_ratio", qq);
                e.rows.push(if gpu {
                    row.on_gpu(ctx)
                } else {
                    row.with("backend", "cpu")
                });
            }
        }
        let row = Row::new()
            .with("kind", "rate")
            .with("solver", solver_name(solver))
            .with("variant", variant.name())
            .with("max_linear_ratio", lin)
            .with("max_quadratic_ratio", quad)
            .with(
                "mean_iterations_to_eps",
                iterations.iter().sum::<f64>() / starts.len() as f64,
            );
        e.rows.push(if gpu {
            row.on_gpu(ctx)
        } else {
            row.with("backend", "cpu")
        });
    }
    // Iterations per step to the default tolerance against dt.
    ctx.progress("iterations against dt");
    for dt in ctx.pick(
        vec![0.05, 0.25, 1.0, 5.0],
        vec![0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0],
    ) {
        let q = FhnParams {
            dt,
            t_end: 50.0,
            ..FhnParams::default()
        };
        let per_variant = solvers
            .iter()
            .map(|&s| (s, OURS))
            .chain([(TridiagSolver::Thomas, SEED)]);
        for (solver, variant) in per_variant {
            let mut s = Scenario::Gaussian.initial_state(&q);
            let opts = NewtonOptions {
                solver,
                variant,
                max_iter: if variant == SEED { 200 } else { 30 },
                ..NewtonOptions::default()
            };
            let st = implicit_run(&q, &mut s, q.steps(), opts, Exec::Cpu)
                .map_err(fail("an implicit run"))?;
            e.rows.push(
                Row::new()
                    .with("kind", "iterations")
                    .with("solver", solver_name(solver))
                    .with("variant", variant.name())
                    .with("backend", "cpu")
                    .with("dt", dt)
                    .with("dt_over_dx2", dt / 0.25)
                    .with("mean_iterations", st.mean_iterations())
                    .with("max_iterations", st.max_iterations_per_step),
            );
        }
    }
    e.notes.push(
        "Our Newton iteration uses the exact Jacobian of the Crank-Nicolson system, solved \
         exactly (to round-off) by every tridiagonal solver, so the convergence is q-quadratic \
         whatever the solver, and the solvers give the same updates: max_quadratic_ratio is \
         bounded while the linear ratios fall towards 0. The seed's q-linear Thomas suggests \
         its Thomas solved a different (inexact) Jacobian."
            .into(),
    );
    e.notes.push(
        "variant = seed: the seed's own implicit scheme (leapfrog w, ends v_0 = v_1, the \
         Jacobian with end rows (1, 1) as printed; Thomas and cyclic reduction, up to 200 \
         iterations). From t = 20, 40, 60 the ends are at rest (v_0 = v_1 = 0 to round-off), \
         so the inexact end rows never act and it is q-quadratic, as ours. From t = 0 (the \
         1e-6 checkerboard puts v_0 != v_1) the (1, 1) rows act and it is q-linear (see its \
         trace rows and its rate row's max_linear_ratio), with both solvers alike: the \
         printed Jacobian reproduces the seed's q-linear convergence, but not a difference \
         between Thomas (q-linear, 0.037) and cyclic reduction (q-quadratic) - each solver \
         solves the same system to round-off."
            .into(),
    );
    e.notes.push(
        "Ratios are taken only where both updates are above 1e-13 (below that the norms are \
         round-off of v ~ 1). mean_iterations (kind iterations): Crank-Nicolson to \
         t = 50, tolerance 1e-10, as `warpath fhn --scheme implicit` runs it."
            .into(),
    );
    e.figure = Some(
        FigureSpec::lines("iteration", &["update"])
            .title(
                "Newton update ||dv||_inf per iteration (dt/dx^2 = 1), per solver and start time",
            )
            .series(&["solver", "variant", "backend", "t"])
            .log(false, true)
            .labels("Newton iteration", "max |dv|"),
    );
    Ok(e)
}

/// The Crank–Nicolson Jacobian at the rest state for `n` nodes, `dx = 0.5`, `dt = 0.25`
/// (the matrix every Newton iteration solves, up to the reaction term on the diagonal), and a
/// right-hand side.
fn rest_jacobian(n: usize) -> [Vec<f64>; 4] {
    let (dt, dx) = (0.25, 0.5);
    let h = dt / 2.0;
    let off = -h / (dx * dx);
    let mut a = vec![off; n];
    let mut c = vec![off; n];
    a[0] = 0.0;
    c[n - 1] = 0.0;
    a[n - 1] = 2.0 * off;
    c[0] = 2.0 * off;
    let b: Vec<f64> = (0..n)
        .map(|i| {
            let v = 0.5 + 0.5 * (i as f64 * 0.01).sin();
            1.0 + 2.0 * h / (dx * dx) - h * reaction_derivative(v, 0.01)
        })
        .collect();
    let d: Vec<f64> = (0..n).map(|i| ((i % 17) as f64 - 8.0) * 1e-3).collect();
    [a, b, c, d]
}

/// `fhn-solvers-cpu-gpu`: the seed's Figs 13 and 14. Against `n` (`2^10 ..= 2^22`; quick
/// `2^16`), `dx = 0.5`, `dt = 0.25`: seconds per Crank–Nicolson step of the Gaussian scenario
/// (10 steps; on the GPU device-resident, one upload and one download) with Thomas, cyclic
/// reduction and PCR on the CPU and PCR and cyclic reduction on the GPU (Fig. 13); and the
/// seconds of one Jacobian solve alone (the median of 5; on the GPU CUDA-event time without
/// transfers, and with them) (Fig. 14).
///
/// # Errors
/// A run failing (none expected).
pub fn solvers_cpu_gpu(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "fhn-solvers-cpu-gpu",
        "002",
        "FitzHugh-Nagumo, Figs 13, 14: implicit runs and Jacobian solves, CPU and GPU",
    );
    e.seed_says = "Fig. 13: sequential Thomas and cyclic reduction perform equally well on the \
        CPU (whole implicit runs); parallel cyclic reduction on the GPU shows no significant \
        gain. Fig. 14: the Jacobian solve alone (no initialisation or transfers), parallel \
        cyclic reduction on the GPU is 4-5x faster than both sequential CPU solvers. (C# on an \
        i7-2360QM, CUDAfy on a GeForce GT 525m; the adjustments go back to the host every \
        Newton iteration.)"
        .into();
    for ratio in [4.0, 5.0] {
        e.seed_rows.push(
            Row::new()
                .with("kind", "ratio")
                .with("solve_gpu_cr_vs_cpu", ratio),
        );
    }
    let hi = ctx.pick(16u32, 22);
    let gpu = ctx.gpu_rows();
    let simulated = ctx.gpu == GpuUse::Simulated;
    let cpu_solvers = [
        TridiagSolver::Thomas,
        TridiagSolver::CyclicReduction,
        TridiagSolver::Pcr,
    ];
    let gpu_solvers = [TridiagSolver::Pcr, TridiagSolver::CyclicReduction];
    let steps = 10u64;
    for k in (10..=hi).step_by(2) {
        let n = 1usize << k;
        ctx.progress(&format!("n = 2^{k}"));
        let p = FhnParams {
            n,
            length: (n - 1) as f64 * 0.5,
            dt: 0.25,
            ..FhnParams::default()
        };
        // CPU PCR is O(n log n) per solve: up to 2^18 nodes
        let mut runs: Vec<(TridiagSolver, Exec)> = cpu_solvers
            .iter()
            .filter(|&&s| s != TridiagSolver::Pcr || n <= 1 << 18)
            .map(|&s| (s, Exec::Cpu))
            .collect();
        if gpu && !(simulated && n > 1 << 10) {
            runs.extend(gpu_solvers.iter().map(|&s| (s, Exec::Cuda)));
        }
        let [a, b, c, d] = rest_jacobian(n);
        let reference = tridiag::thomas(&a, &b, &c, &d)
            .map_err(|e| ExperimentError::from_display("the reference solve", e))?;
        for (solver, exec) in runs {
            let on_gpu = exec == Exec::Cuda;
            // Fig. 13: whole implicit steps.
            let s = Scenario::Gaussian.initial_state(&p);
            let opts = NewtonOptions {
                solver,
                ..NewtonOptions::default()
            };
            let st_steps = if simulated && on_gpu { 2 } else { steps };
            let mut per = Vec::new();
            let mut st = None;
            for _ in 0..if n >= 1 << 18 || simulated { 1 } else { 3 } {
                let mut s = s.clone();
                let t0 = Instant::now();
                st = Some(
                    implicit_run(&p, &mut s, st_steps, opts, exec)
                        .map_err(fail("an implicit run"))?,
                );
                per.push(t0.elapsed().as_secs_f64() / st_steps as f64);
            }
            let per_step = median(&mut per);
            let st = st.expect("one run at least");
            e.rows.push(
                Row::new()
                    .with("kind", "run")
                    .with("n", n)
                    .with("solver", solver_name(solver))
                    .on_backend(ctx, on_gpu)
                    .secs("step_s", per_step)
                    .with("newton_per_step", st.mean_iterations()),
            );
            // Fig. 14: one Jacobian solve.
            let repeats = if n >= 1 << 20 { 3 } else { 5 };
            let (mut solve, mut with_tx) = (Vec::new(), Vec::new());
            let mut max_err = 0.0f64;
            for _ in 0..repeats {
                let x = if on_gpu {
                    let g = gpu_runtime::gpu()
                        .map_err(|e| ExperimentError::from_display("the GPU", e))?;
                    let (x, tm) = crate::tridiag_gpu_timing(g, &a, &b, &c, &d, solver)
                        .map_err(|e| ExperimentError::from_display("a GPU solve", e))?;
                    solve.push(tm.solve_only);
                    with_tx.push(tm.with_transfers);
                    x
                } else {
                    let t0 = Instant::now();
                    let (x, _) = tridiag::solve(&a, &b, &c, &d, solver, Exec::Cpu)
                        .map_err(|e| ExperimentError::from_display("a CPU solve", e))?;
                    solve.push(t0.elapsed().as_secs_f64());
                    x
                };
                max_err = x
                    .iter()
                    .zip(&reference)
                    .fold(max_err, |m, (p, q)| m.max((p - q).abs()));
                if simulated && on_gpu {
                    break;
                }
            }
            let mut row = Row::new()
                .with("kind", "solve")
                .with("n", n)
                .with("solver", solver_name(solver))
                .on_backend(ctx, on_gpu)
                .secs("solve_s", median(&mut solve));
            if on_gpu {
                row = row.secs("solve_with_transfers_s", median(&mut with_tx));
            }
            e.rows.push(row.with("max_error_vs_thomas", max_err));
        }
    }
    e.notes.push(
        "On the GPU our implicit run is device-resident (v, w and the Newton system stay on \
         the device; only the 8-byte update norm comes back per Newton iteration), where the \
         seed sent the adjustments back every iteration. GPU `thomas` is not a row: on the \
         GPU a single system runs as PCR (up to 1024 rows) or the PCR-Thomas hybrid."
            .into(),
    );
    e.notes.push(
        "The Jacobian of Fig. 14 is a Crank-Nicolson Newton matrix (dt = 0.25, dx = 0.5, a \
         smooth v in the reaction term); every solver's answer is checked against Thomas \
         (max_error_vs_thomas). CPU pcr is O(n log n) PCR (rows up to 2^18 nodes); cpu rows \
         run on one thread (the solvers are sequential). Times: medians of 3 (one run from \
         2^18 nodes; solves: medians of 5, 3 from 2^20)."
            .into(),
    );
    if !gpu {
        e.notes
            .push("No usable CUDA device in this run: CPU rows only.".into());
    }
    e.figure = Some(
        FigureSpec::lines("n", &["step_s", "solve_s"])
            .title("seconds per Crank-Nicolson step (step_s) and per Jacobian solve (solve_s)")
            .series(&["backend", "solver"])
            .log(true, true)
            .labels("N (nodes)", "seconds"),
    );
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpath_report::Size;

    fn quick() -> Context {
        Context::new(Size::Quick)
    }

    fn rows<'a>(e: &'a Experiment, key: &str, value: &str) -> Vec<&'a Row> {
        e.rows
            .iter()
            .filter(|r| r.get_text(key).as_deref() == Some(value))
            .collect()
    }

    #[test]
    fn specs_list_the_eight_ids_of_seed_002() {
        let ids: Vec<&str> = specs().iter().map(|s| s.id).collect();
        assert_eq!(
            ids,
            [
                "fhn-fig1-constant",
                "fhn-fig2-gaussian",
                "fhn-orders",
                "fhn-cpu-gpu",
                "fhn-adaptive",
                "fhn-implicit-stability",
                "fhn-newton",
                "fhn-solvers-cpu-gpu"
            ]
        );
        assert!(specs().iter().all(|s| s.seed == "002"));
    }

    #[test]
    fn constant_input_starts_a_left_moving_train_with_both_ends() {
        let e = fig1_constant(&quick()).unwrap();
        let summary = rows(&e, "kind", "summary");
        assert_eq!(summary.len(), 2);
        for r in summary {
            // pulses about one wavelength apart travel left at about 0.6
            let n = r.get_f64("pulses_in_domain").unwrap();
            assert!((2.0..=4.0).contains(&n), "{r:?}");
            let period = r.get_f64("period_at_x150").unwrap();
            assert!((80.0..120.0).contains(&period), "{r:?}");
            let speed = r.get_f64("speed").unwrap();
            assert!((-0.7..-0.5).contains(&speed), "{r:?}");
            assert!(r.get_f64("v_max").unwrap() > 0.8);
        }
        let profiles = rows(&e, "kind", "profile");
        assert_eq!(profiles.len(), 4 * 51);
        // the stimulated end is held at 1
        let end = profiles
            .iter()
            .find(|r| r.get_f64("x") == Some(200.0))
            .unwrap();
        assert_eq!(end.get_f64("v"), Some(1.0));
    }

    #[test]
    fn gaussian_splits_then_vanishes_at_the_ends() {
        let e = fig2_gaussian(&quick()).unwrap();
        for r in rows(&e, "kind", "summary") {
            let collapse = r.get_f64("t_collapse").unwrap();
            let vanish = r.get_f64("t_vanish").unwrap();
            assert!((20.0..80.0).contains(&collapse), "{r:?}");
            assert!(
                (150.0..300.0).contains(&vanish) && vanish > collapse,
                "{r:?}"
            );
            assert!(r.get_f64("speed").unwrap().abs() > 0.5, "{r:?}");
        }
        let peak = rows(&e, "kind", "profile")
            .into_iter()
            .filter(|r| r.get_f64("t") == Some(0.0))
            .filter_map(|r| r.get_f64("v"))
            .fold(0.0, f64::max);
        assert!((peak - 1.0).abs() < 1e-12);
    }

    #[test]
    fn orders_are_the_schemes_orders() {
        let e = orders(&quick()).unwrap();
        let check_variant =
            |variant: &str, method: &str, scheme: &str, axis: &str, want: f64, tol: f64| {
                let os: Vec<f64> = e
                    .rows
                    .iter()
                    .filter(|r| {
                        r.get_text("method").as_deref() == Some(method)
                            && r.get_text("scheme").as_deref() == Some(scheme)
                            && r.get_text("axis").as_deref() == Some(axis)
                            && r.get_text("variant").as_deref() == Some(variant)
                    })
                    .filter_map(|r| r.get_f64("order"))
                    .collect();
                assert_eq!(os.len(), 2, "{variant} {method} {scheme} {axis}");
                for o in os {
                    assert!(
                        (o - want).abs() < tol,
                        "{variant} {method} {scheme} {axis}: order {o}"
                    );
                }
            };
        // the seed's own implicit variant: order 2 in dt (its Fig. 10) and, here, in dx
        check_variant("seed", "reference", "cn-thomas", "dt", 2.0, 0.3);
        check_variant("seed", "reference", "cn-cr", "dt", 2.0, 0.3);
        check_variant("seed", "reference", "cn-thomas", "dx", 2.0, 0.3);
        let check = |method: &str, scheme: &str, axis: &str, want: f64, tol: f64| {
            let os: Vec<f64> = e
                .rows
                .iter()
                .filter(|r| {
                    r.get_text("method").as_deref() == Some(method)
                        && r.get_text("scheme").as_deref() == Some(scheme)
                        && r.get_text("axis").as_deref() == Some(axis)
                        && r.get_text("variant").as_deref() == Some("ours")
                })
                .filter_map(|r| r.get_f64("order"))
                .collect();
            assert_eq!(os.len(), 2, "{method} {scheme} {axis}");
            for o in os {
                assert!(
                    (o - want).abs() < tol,
                    "{method} {scheme} {axis}: order {o}"
                );
            }
        };
        check("reference", "explicit", "dx", 2.0, 0.3);
        check("reference", "cn-thomas", "dx", 2.0, 0.3);
        check("reference", "explicit", "dt", 1.0, 0.2);
        check("reference", "cn-thomas", "dt", 2.0, 0.3);
        check("reference", "cn-cr", "dt", 2.0, 0.3);
        check("manufactured", "explicit", "dx", 2.0, 0.25);
        check("manufactured", "cn-thomas", "dx", 2.0, 0.25);
        check("manufactured", "explicit", "dt", 1.0, 0.15);
        check("manufactured", "cn-thomas", "dt", 2.0, 0.2);
    }

    #[test]
    fn discrete_source_removes_the_spatial_error() {
        let m = Manufactured::new(true);
        let coarse = m.implicit_error(2.0, 0.01, 0.5).unwrap();
        let fine = m.implicit_error(0.25, 0.01, 0.5).unwrap();
        assert!(coarse < 1e-5 && fine < 1e-5, "{coarse} {fine}");
        let c = Manufactured::new(false)
            .implicit_error(2.0, 0.01, 0.5)
            .unwrap();
        assert!(c > 10.0 * coarse);
    }

    #[test]
    fn cpu_gpu_times_every_size_and_the_core_is_part_of_the_total() {
        let e = cpu_gpu(&quick()).unwrap();
        let times = rows(&e, "kind", "time");
        assert_eq!(times.len(), 2 * 4); // n = 2^10, 2^12, 2^14, 2^16 on two CPU backends
        for r in &times {
            let (t, c) = (
                r.get_f64("total_s_per_iter").unwrap(),
                r.get_f64("core_s_per_iter").unwrap(),
            );
            // The core loop and the whole iteration are timed in separate runs (medians), so
            // on a loaded machine the core can come out a little above the total: only a
            // gross inversion is a bug.
            assert!(
                c > 0.0 && t > 0.0 && c.is_finite() && t.is_finite(),
                "{r:?}"
            );
            assert!(c <= 3.0 * t, "core far above the total: {r:?}");
        }
        let ratios = rows(&e, "kind", "ratios");
        assert_eq!(ratios[0].get_f64("n"), Some(65536.0));
        let share = ratios[0].get_f64("cpu_core_share").unwrap();
        assert!(share > 0.0 && share <= 3.0, "{share}");
    }

    #[test]
    fn adaptive_grid_uses_fewer_nodes_and_follows_the_uniform_run() {
        let e = adaptive(&quick()).unwrap();
        let div = rows(&e, "case", "divergent impulse");
        assert_eq!(div.len(), 6);
        for r in &div {
            assert!(r.get_f64("node_ratio").unwrap() > 1.5, "{r:?}");
            assert!(r.get_f64("rmse_vs_uniform").unwrap() < 0.05, "{r:?}");
        }
        assert_eq!(rows(&e, "case", "eps = 0").len(), 3);
    }

    #[test]
    fn explicit_blows_up_above_its_limit_and_crank_nicolson_never_does() {
        let e = implicit_stability(&quick()).unwrap();
        let limits = rows(&e, "kind", "limit");
        let explicit = limits
            .iter()
            .find(|r| r.get_text("scheme").as_deref() == Some("explicit"))
            .unwrap();
        let emp = explicit.get_f64("largest_stable_ratio").unwrap();
        let ours = explicit.get_f64("computed_limit_ours").unwrap();
        assert!(ours < 0.5 && ours > 0.45, "{ours}");
        assert!((emp - 0.5).abs() < 0.02 && emp >= ours, "{emp}");
        assert_eq!(explicit.get_f64("first_unbounded_ratio"), Some(0.5));
        for r in limits
            .iter()
            .filter(|r| r.get_text("scheme").as_deref() != Some("explicit"))
        {
            assert!(r.get("first_unbounded_ratio").unwrap().is_null(), "{r:?}");
            let want = if r.get_text("variant").as_deref() == Some("seed") {
                2.0
            } else {
                8.0
            };
            assert!(r.get_f64("largest_stable_ratio").unwrap() >= want, "{r:?}");
        }
        assert_eq!(limits.len(), 6);
        let sweep = rows(&e, "kind", "sweep");
        let at = |s: &str, variant: &str, r: f64| {
            sweep
                .iter()
                .find(|x| {
                    x.get_text("scheme").as_deref() == Some(s)
                        && x.get_text("variant").as_deref() == Some(variant)
                        && x.get_f64("dt_over_dx2") == Some(r)
                })
                .and_then(|x| x.get_text("outcome"))
                .unwrap()
        };
        assert_eq!(at("explicit", "ours", 0.45), "bounded");
        assert_eq!(at("explicit", "ours", 0.55), "unbounded");
        for variant in ["ours", "seed"] {
            // the seed's limits (0.9 Thomas, 1.05 cyclic reduction) are passed either way
            for r in [0.9, 1.05, 2.0] {
                assert_eq!(at("cn-thomas", variant, r), "bounded");
                assert_eq!(at("cn-cr", variant, r), "bounded");
            }
        }
    }

    #[test]
    fn newton_converges_quadratically_with_every_solver() {
        let e = newton(&quick()).unwrap();
        let is_seed = |r: &&Row| r.get_text("variant").as_deref() == Some("seed");
        let (seed, rates): (Vec<_>, Vec<_>) =
            rows(&e, "kind", "rate").into_iter().partition(is_seed);
        assert_eq!(rates.len(), 3);
        for r in rates {
            let q = r.get_f64("max_quadratic_ratio").unwrap();
            assert!(q > 0.0 && q < 10.0, "{r:?}");
            let it = r.get_f64("mean_iterations_to_eps").unwrap();
            assert!((2.0..=6.0).contains(&it), "{r:?}");
        }
        // the seed's variant: q-linear (from the start whose ends are not at rest), the same
        // with Thomas and cyclic reduction
        assert_eq!(seed.len(), 2);
        let lin: Vec<f64> = seed
            .iter()
            .map(|r| r.get_f64("max_linear_ratio").unwrap())
            .collect();
        assert!(lin.iter().all(|&l| (0.1..1.0).contains(&l)), "{lin:?}");
        assert!((lin[0] - lin[1]).abs() < 1e-6, "{lin:?}");
        // every trace ends at round-off
        for r in rows(&e, "kind", "trace") {
            assert!(r.get_f64("update").unwrap() < 1.0);
        }
        let its: Vec<_> = rows(&e, "kind", "iterations")
            .into_iter()
            .filter(|r| !is_seed(r))
            .collect();
        assert_eq!(its.len(), 4 * 3);
        let mean: Vec<f64> = its
            .iter()
            .filter_map(|r| r.get_f64("mean_iterations"))
            .collect();
        assert!(mean.iter().all(|&m| (2.0..10.0).contains(&m)), "{mean:?}");
        assert!(
            mean[0] < mean[mean.len() - 1],
            "more iterations for longer steps"
        );
    }

    #[test]
    fn solvers_agree_with_thomas_and_are_timed() {
        let e = solvers_cpu_gpu(&quick()).unwrap();
        let solves = rows(&e, "kind", "solve");
        assert_eq!(solves.len(), 4 * 3);
        for r in &solves {
            assert!(r.get_f64("max_error_vs_thomas").unwrap() < 1e-10, "{r:?}");
            assert!(r.get_f64("solve_s").unwrap() > 0.0);
        }
        for r in rows(&e, "kind", "run") {
            let it = r.get_f64("newton_per_step").unwrap();
            assert!((1.0..6.0).contains(&it), "{r:?}");
        }
    }
}
