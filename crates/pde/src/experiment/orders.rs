//! `fhn-orders` (the seed's Figs 3, 4, 9 and 10): the observed orders of the explicit scheme and
//! Crank–Nicolson in `dx` and `dt`, against fine reference runs and a manufactured solution
//! ([`Manufactured`]).

use gpu_runtime::Exec;
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, Row};

use super::{OURS, SEED, fail, order, rmse, seed_experiment};
use crate::explicit::explicit_step_reference;
use crate::implicit::{ImplicitVariant, NewtonOptions, implicit_run_with_source};
use crate::params::{FhnParams, FhnState, reaction};
use crate::tridiag::TridiagSolver;
use crate::{PdeError, Scenario, explicit_run, implicit_run};

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

    /// The problem's parameters with spacing `dx` and step `dt`, run to `t_end`.
    fn params_at(&self, dx: f64, dt: f64, t_end: f64) -> FhnParams {
        FhnParams {
            dt,
            t_end,
            ..self.params
        }
        .with_dx(dx)
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
        let p = self.params_at(dx, dt, t_end);
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
        let p = self.params_at(dx, dt, t_end);
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

/// A measured row of the series `method`, `scheme`, `axis`: its step, RMSE and order.
fn order_row(method: &str, scheme: &str, axis: &str, step: f64, err: f64, ord: Option<f64>) -> Row {
    series_row(method, scheme, axis)
        .with("step", step)
        .with("rmse", err)
        .with("order", ord)
}

/// A row naming the series of errors it belongs to: `method`, `scheme` and the `axis` halved.
fn series_row(method: &str, scheme: &str, axis: &str) -> Row {
    Row::new()
        .with("method", method)
        .with("scheme", scheme)
        .with("axis", axis)
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
    let mut e = orders_experiment();
    let levels = ctx.pick(3usize, 5);
    let base = FhnParams {
        t_end: 5.0,
        ..FhnParams::default()
    };
    let (dt, finest) = dx_halving_rows(ctx, base, levels, &mut e.rows)?;
    let pref_dt = dt_halving_rows(ctx, base, levels, &mut e.rows)?;
    manufactured_rows(ctx, levels, &mut e.rows)?;
    orders_notes(&mut e, dt, finest, pref_dt);
    Ok(e)
}

/// The `fhn-orders` experiment with the seed's words and the orders it saw, before any run.
fn orders_experiment() -> Experiment {
    let mut e = seed_experiment(
        "fhn-orders",
        "RMSE against a run with a much smaller step. Explicit: Fig. 3, dx varied \
        against dx = 0.000045 at t = 0.91, dt = 0.0098: halving dx quarters the RMSE (order 2); \
        Fig. 4, dt varied against dt = 0.00023, dx = 0.5, several t: halving dt halves it \
        (order 1). Crank-Nicolson: Fig. 9, dx varied against dx = 0.012 at t = 0.51, \
        dt = 0.000071: unexpectedly order 1 (no explanation found); Fig. 10, dt varied against \
        dt = 0.00025, dx = 0.52: order 2 with Thomas and with cyclic reduction (Thomas showing \
        aberrations, then instability, as dt grows).",
    );
    for (scheme, axis, ord) in [
        ("explicit", "dx", 2.0),
        ("explicit", "dt", 1.0),
        ("cn-thomas", "dx", 1.0),
        ("cn-thomas", "dt", 2.0),
        ("cn-cr", "dt", 2.0),
    ] {
        e.seed_rows
            .push(series_row("reference", scheme, axis).with("order", ord));
    }
    e
}

/// The reference rows in `dx`: `dx` halving from 1 for `levels` levels, one `dt` below every
/// grid's explicit limit, each scheme (explicit, Crank–Nicolson ours and the seed's) against
/// its own run on a finer grid. Returns that `dt` and the reference's `dx`, for the notes.
fn dx_halving_rows(
    ctx: &Context,
    base: FhnParams,
    levels: usize,
    rows: &mut Vec<Row>,
) -> Result<(f64, f64), ExperimentError> {
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
            rows.push(
                order_row("reference", scheme, "dx", dx, err, order(prev, err))
                    .with("variant", variant.name()),
            );
            prev = Some(err);
        }
    }
    Ok((dt, finest))
}

/// The reference rows in `dt`: `dt` halving at `dx = 0.5` for `levels` levels, the explicit
/// scheme and Crank–Nicolson (ours and the seed's, Thomas and cyclic reduction), against a
/// Crank–Nicolson run of the same variant with a tiny step. Returns that step, for the notes.
fn dt_halving_rows(
    ctx: &Context,
    base: FhnParams,
    levels: usize,
    rows: &mut Vec<Row>,
) -> Result<f64, ExperimentError> {
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
            rows.push(
                order_row("reference", scheme, "dt", dt, err, order(prev, err))
                    .with("variant", variant.name()),
            );
            prev = Some(err);
        }
    }
    Ok(pref.dt)
}

/// The manufactured rows: exact errors of the explicit scheme and Crank–Nicolson, no
/// reference run; in `dx` with the continuous source (explicit `dt = 0.1 dx^2`, CN
/// `dt = dx / 8`), in `dt` at `dx = 0.5` with the discrete one (no spatial error).
fn manufactured_rows(
    ctx: &Context,
    levels: usize,
    rows: &mut Vec<Row>,
) -> Result<(), ExperimentError> {
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
        rows.push(order_row_ours(
            "manufactured",
            "explicit",
            "dx",
            dx,
            ee,
            order(pe, ee),
        ));
        rows.push(order_row_ours(
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
        rows.push(order_row_ours(
            "manufactured",
            "explicit",
            "dt",
            dte,
            ee,
            order(pe, ee),
        ));
        rows.push(order_row_ours(
            "manufactured",
            "cn-thomas",
            "dt",
            dti,
            ei,
            order(pi, ei),
        ));
        (pe, pi) = (Some(ee), Some(ei));
    }
    Ok(())
}

/// The notes and the chart of `fhn-orders`: the set-up (`dt` of the `dx` halving, the
/// reference's `finest` `dx` and the `dt` reference's step `pref_dt`) and what the rows show.
fn orders_notes(e: &mut Experiment, dt: f64, finest: f64, pref_dt: f64) {
    e.notes.push(format!(
        "Reference method: the Gaussian scenario (seed's parameters) at t = 5. dx halving from \
         1 with dt = {dt:.3e} for every run, against a run with dx = {finest} (explicit and \
         Crank-Nicolson each against its own); dt halving at dx = 0.5 against Crank-Nicolson \
         with dt = {:.2e}. The seed's sizes (t = 0.91 or 0.51, dx down to 0.000045) are not \
         reproducible as given (dt = 0.0098 with dx = 0.000045 breaks 2 dt <= dx^2); ours show \
         the same slopes.",
        pref_dt
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
        FigureSpec::log_lines("step", &["rmse"])
            .title("RMSE of v against the step (dx or dt) halved")
            .series(&["method", "scheme", "variant", "axis"])
            .labels("step (dx or dt)", "RMSE of v"),
    );
}
