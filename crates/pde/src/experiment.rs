//! The seed's experiments as functions that return tables: convergence orders (against a
//! fine reference and against a manufactured solution), stability of explicit versus implicit
//! schemes, Newton iterations per step, and time per step against `n`.

use std::time::Instant;

use gpu_runtime::Exec;

use crate::explicit::explicit_step_reference;
use crate::implicit::{NewtonOptions, implicit_run_with_source};
use crate::params::{FhnParams, FhnState, reaction};
use crate::tridiag::TridiagSolver;
use crate::{PdeError, Scenario, explicit_run, explicit_run_unchecked, implicit_run};

/// A table of results: a title, column names, rows of formatted cells, and notes.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentTable {
    /// What the table shows.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
    /// Remarks printed under the table.
    pub notes: Vec<String>,
}

impl std::fmt::Display for ExperimentTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "## {}", self.title)?;
        let cols = self.header.len();
        let mut width = vec![0; cols];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (w, c) in width.iter_mut().zip(row) {
                *w = (*w).max(c.len());
            }
        }
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let line: Vec<String> = row
                .iter()
                .zip(&width)
                .map(|(c, w)| format!("{c:>w$}"))
                .collect();
            writeln!(f, "{}", line.join("  "))?;
        }
        for n in &self.notes {
            writeln!(f, "  {n}")?;
        }
        Ok(())
    }
}

fn table(title: &str, header: &[&str]) -> ExperimentTable {
    ExperimentTable {
        title: title.into(),
        header: header.iter().map(|s| s.to_string()).collect(),
        rows: Vec::new(),
        notes: Vec::new(),
    }
}

fn rmse(a: &[f64], b: &[f64]) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / a.len().max(1) as f64).sqrt()
}

fn order(prev: Option<f64>, cur: f64) -> String {
    match prev {
        Some(p) if cur > 0.0 => format!("{:.2}", (p / cur).log2()),
        _ => "-".into(),
    }
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
    /// The default set-up: `L = 20`, `a = 0.1`, `eps = 0.1`, `gamma = 0.5`.
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

/// Manufactured-solution orders: in space (`dx` halving, explicit with `dt = 0.1 dx^2` and
/// Crank–Nicolson with `dt = dx / 8`, both expected 2) and in time (`dt` halving with the
/// discrete source, expected 1 for explicit and 2 for Crank–Nicolson). `levels` halvings.
///
/// # Complexity
/// `O(8^levels)` cell updates for the space table (explicit `dt` shrinks as `dx^2`).
///
/// # Examples
/// ```
/// let tables = pde::manufactured_orders(2)?;
/// println!("{}", tables[0]);
/// let order: f64 = tables[1].rows[1][2].parse().unwrap(); // forward Euler in time
/// assert!((order - 1.0).abs() < 0.1);
/// # Ok::<(), pde::PdeError>(())
/// ```
///
/// # Errors
/// Solver errors (none expected).
pub fn manufactured_orders(levels: usize) -> Result<Vec<ExperimentTable>, PdeError> {
    let mut space = table(
        "manufactured solution: dx halving (t = 1)",
        &["dx", "explicit RMSE", "order", "CN RMSE", "order"],
    );
    let cont = Manufactured::new(false);
    let (mut pe, mut pi) = (None, None);
    for l in 0..levels {
        let dx = 1.0 / (1 << l) as f64;
        let e = cont.explicit_error(dx, 0.1 * dx * dx, 1.0)?;
        let i = cont.implicit_error(dx, dx / 8.0, 1.0)?;
        space.rows.push(vec![
            format!("{dx}"),
            format!("{e:.3e}"),
            order(pe, e),
            format!("{i:.3e}"),
            order(pi, i),
        ]);
        (pe, pi) = (Some(e), Some(i));
    }
    space.notes.push("expected order 2 for both".into());
    let mut time = table(
        "manufactured solution: dt halving (t = 1, dx = 0.5, spatial error cancelled)",
        &["dt explicit", "RMSE", "order", "dt CN", "RMSE", "order"],
    );
    let disc = Manufactured::new(true);
    let (mut pe, mut pi) = (None, None);
    for l in 0..levels {
        let f = (1 << l) as f64;
        let (dte, dti) = (0.04 / f, 0.2 / f);
        let e = disc.explicit_error(0.5, dte, 1.0)?;
        let i = disc.implicit_error(0.5, dti, 1.0)?;
        time.rows.push(vec![
            format!("{dte}"),
            format!("{e:.3e}"),
            order(pe, e),
            format!("{dti}"),
            format!("{i:.3e}"),
            order(pi, i),
        ]);
        (pe, pi) = (Some(e), Some(i));
    }
    time.notes
        .push("expected order 1 for forward Euler, 2 for Crank-Nicolson".into());
    Ok(vec![space, time])
}

fn gaussian_run(p: &FhnParams, implicit: Option<TridiagSolver>) -> Result<FhnState, PdeError> {
    let mut s = Scenario::Gaussian.initial_state(p);
    match implicit {
        None => {
            explicit_run(p, &mut s, p.steps(), Exec::Cpu)?;
        }
        Some(solver) => {
            let opts = NewtonOptions {
                tol: 1e-12,
                solver,
                ..NewtonOptions::default()
            };
            implicit_run(p, &mut s, p.steps(), opts, Exec::Cpu)?;
        }
    }
    Ok(s)
}

/// RMSE of the Gaussian scenario at `t = 5` against fine references: `dx` halving at a fixed
/// small `dt` (expected order 2), and `dt` halving at `dx = 0.5` (expected 1 explicit, 2 CN).
///
/// # Errors
/// Solver errors (none expected).
pub fn reference_orders(levels: usize) -> Result<Vec<ExperimentTable>, PdeError> {
    let base = FhnParams {
        t_end: 5.0,
        ..FhnParams::default()
    };
    // dx halving, common dt below every grid's limit.
    let finest = 1.0 / (1 << (levels + 1)) as f64;
    let dt = 0.9 * base.with_dx(finest).stability_limit(finest).dt_max;
    let reference = gaussian_run(&FhnParams { dt, ..base }.with_dx(finest), None)?;
    let mut space = table(
        "Gaussian pulse vs fine reference: dx halving (explicit, t = 5)",
        &["dx", "RMSE", "order"],
    );
    let mut prev = None;
    for l in 0..levels {
        let dx = 1.0 / (1 << l) as f64;
        let p = FhnParams { dt, ..base }.with_dx(dx);
        let s = gaussian_run(&p, None)?;
        let stride = (dx / finest).round() as usize;
        let r: Vec<f64> = reference.v.iter().step_by(stride).copied().collect();
        let e = rmse(&s.v, &r);
        space
            .rows
            .push(vec![format!("{dx}"), format!("{e:.3e}"), order(prev, e)]);
        prev = Some(e);
    }
    space.notes.push(format!(
        "reference dx = {finest}, dt = {dt:.3e} for every run; expected order 2"
    ));
    // dt halving at dx = 0.5.
    let pref = FhnParams {
        dt: 0.2 / 512.0,
        ..base
    };
    let reference = gaussian_run(&pref, Some(TridiagSolver::Thomas))?;
    let mut time = table(
        "Gaussian pulse vs fine reference: dt halving (dx = 0.5, t = 5)",
        &["dt explicit", "RMSE", "order", "dt CN", "RMSE", "order"],
    );
    let (mut pe, mut pi) = (None, None);
    for l in 0..levels {
        let f = (1 << l) as f64;
        let (dte, dti) = (0.1 / f, 0.2 / f);
        let e = rmse(
            &gaussian_run(&FhnParams { dt: dte, ..base }, None)?.v,
            &reference.v,
        );
        let i = rmse(
            &gaussian_run(&FhnParams { dt: dti, ..base }, Some(TridiagSolver::Thomas))?.v,
            &reference.v,
        );
        time.rows.push(vec![
            format!("{dte}"),
            format!("{e:.3e}"),
            order(pe, e),
            format!("{dti}"),
            format!("{i:.3e}"),
            order(pi, i),
        ]);
        (pe, pi) = (Some(e), Some(i));
    }
    time.notes.push(format!(
        "reference: Crank-Nicolson with dt = {:.3e}; expected order 1 explicit, 2 CN",
        pref.dt
    ));
    Ok(vec![space, time])
}

/// Whether a run of the Gaussian scenario (with a `1e-6` checkerboard perturbation, so that an
/// unstable mode shows) stays bounded to `t_end`.
fn bounded_run(p: &FhnParams, implicit: Option<TridiagSolver>) -> bool {
    let mut s = Scenario::Gaussian.initial_state(p);
    for (i, v) in s.v.iter_mut().enumerate() {
        *v += if i % 2 == 0 { 1e-6 } else { -1e-6 };
    }
    let ok = match implicit {
        None => explicit_run_unchecked(p, &mut s, p.steps(), Exec::Cpu).is_ok(),
        Some(solver) => {
            let opts = NewtonOptions {
                solver,
                ..NewtonOptions::default()
            };
            implicit_run(p, &mut s, p.steps(), opts, Exec::Cpu).is_ok()
        }
    };
    ok && s.v.iter().all(|v| v.is_finite() && v.abs() < 2.0)
}

/// Largest stable `dt / dx^2` (dx = 0.5, Gaussian scenario to `t = 100`): the explicit
/// scheme's computed limit and the empirical one (bisection on unchecked runs), and
/// Crank–Nicolson with Thomas and with cyclic reduction (doubling up to `dt / dx^2 = 1024`).
///
/// # Errors
/// None in practice (failed runs count as unstable).
pub fn stability_comparison() -> Result<ExperimentTable, PdeError> {
    let base = FhnParams::default();
    let dx2 = base.dx() * base.dx();
    let mut t = table(
        "stability: largest stable dt / dx^2 (dx = 0.5, t = 100)",
        &["scheme", "computed limit", "largest stable found"],
    );
    let lim = base.stability_limit(base.dx()).dt_max / dx2;
    let (mut lo, mut hi) = (0.1, 2.0);
    for _ in 0..14 {
        let mid = 0.5 * (lo + hi);
        if bounded_run(
            &FhnParams {
                dt: mid * dx2,
                ..base
            },
            None,
        ) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    t.rows.push(vec![
        "explicit (forward Euler)".into(),
        format!("{lim:.4}"),
        format!("{lo:.4}"),
    ]);
    for (name, solver) in [
        ("Crank-Nicolson + Thomas", TridiagSolver::Thomas),
        (
            "Crank-Nicolson + cyclic reduction",
            TridiagSolver::CyclicReduction,
        ),
    ] {
        let mut best = None;
        let mut r = 0.5;
        while r <= 1024.0 {
            if bounded_run(
                &FhnParams {
                    dt: r * dx2,
                    ..base
                },
                Some(solver),
            ) {
                best = Some(r);
            } else {
                break;
            }
            r *= 2.0;
        }
        t.rows.push(vec![
            name.into(),
            "none".into(),
            match best {
                Some(r) if r >= 1024.0 => ">= 1024 (all tried)".into(),
                Some(r) => format!("{r}"),
                None => "< 0.5".into(),
            },
        ]);
    }
    t.notes.push(
        "the computed explicit limit bounds f' over v in [-0.4, 1]; near rest the empirical limit is higher"
            .into(),
    );
    Ok(t)
}

/// Newton iterations per Crank–Nicolson step against `dt` (Gaussian scenario, dx = 0.5,
/// t = 50, tolerance 1e-10).
///
/// # Errors
/// Newton non-convergence (reported in the table instead when it happens).
pub fn newton_iterations() -> Result<ExperimentTable, PdeError> {
    let mut t = table(
        "Newton iterations per Crank-Nicolson step (dx = 0.5, t = 50, tol 1e-10)",
        &["dt", "dt/dx^2", "mean iterations", "max iterations"],
    );
    for dt in [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0] {
        let p = FhnParams {
            dt,
            t_end: 50.0,
            ..FhnParams::default()
        };
        let mut s = Scenario::Gaussian.initial_state(&p);
        let row = match implicit_run(&p, &mut s, p.steps(), NewtonOptions::default(), Exec::Cpu) {
            Ok(st) => vec![
                format!("{dt}"),
                format!("{}", dt / 0.25),
                format!("{:.2}", st.mean_iterations()),
                format!("{}", st.max_iterations_per_step),
            ],
            Err(e) => vec![
                format!("{dt}"),
                format!("{}", dt / 0.25),
                format!("{e}"),
                "-".into(),
            ],
        };
        t.rows.push(row);
    }
    Ok(t)
}

/// Seconds per explicit step for `n = 2^lo ..= 2^hi` nodes on the CPU (and on the GPU, with and
/// without transfers, when one is present).
///
/// # Errors
/// Solver errors (none expected).
pub fn step_timing(lo: u32, hi: u32) -> Result<ExperimentTable, PdeError> {
    let gpu = gpu_runtime::gpu().ok();
    let mut t = table(
        "explicit step time against n",
        &[
            "n",
            "CPU s/step",
            "CPU cells/s",
            "GPU s/step (kernels)",
            "GPU s/step (with transfers)",
        ],
    );
    for e in lo..=hi {
        let n = 1usize << e;
        let steps = ((1u64 << 26) / n as u64).clamp(32, 20_000);
        let p = FhnParams {
            n,
            length: (n - 1) as f64 * 0.5,
            ..FhnParams::default()
        };
        let mut s = Scenario::Gaussian.initial_state(&p);
        let t0 = Instant::now();
        explicit_run(&p, &mut s, steps, Exec::Cpu)?;
        let cpu = t0.elapsed().as_secs_f64() / steps as f64;
        let mut row = vec![
            format!("2^{e}"),
            format!("{cpu:.3e}"),
            format!("{:.3e}", n as f64 / cpu),
        ];
        match gpu {
            Some(g) => {
                let mut s = Scenario::Gaussian.initial_state(&p);
                let tm = crate::explicit_gpu_timing(g, &p, &mut s.v, &mut s.w, 1, steps)?;
                row.push(format!("{:.3e}", tm.kernels_only / steps as f64));
                row.push(format!("{:.3e}", tm.with_transfers / steps as f64));
            }
            None => {
                row.push("no GPU".into());
                row.push("no GPU".into());
            }
        }
        t.rows.push(row);
    }
    if gpu.is_none() {
        t.notes
            .push("no CUDA device here: GPU columns could not be measured".into());
    }
    Ok(t)
}

/// Every experiment, in order (`quick` uses fewer levels and sizes).
///
/// # Errors
/// Solver errors (none expected).
pub fn all_experiments(quick: bool) -> Result<Vec<ExperimentTable>, PdeError> {
    let levels = if quick { 3 } else { 4 };
    let mut out = manufactured_orders(levels)?;
    out.extend(reference_orders(levels)?);
    out.push(stability_comparison()?);
    out.push(newton_iterations()?);
    out.push(step_timing(10, if quick { 16 } else { 24 })?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn orders(t: &ExperimentTable, col: usize) -> Vec<f64> {
        t.rows
            .iter()
            .skip(1)
            .map(|r| r[col].parse().unwrap())
            .collect()
    }

    #[test]
    fn manufactured_solution_confirms_the_orders() {
        let tables = manufactured_orders(3).unwrap();
        let (space, time) = (&tables[0], &tables[1]);
        for o in orders(space, 2).into_iter().chain(orders(space, 4)) {
            assert!((o - 2.0).abs() < 0.25, "space order {o}\n{space}");
        }
        for o in orders(time, 2) {
            assert!((o - 1.0).abs() < 0.15, "explicit time order {o}\n{time}");
        }
        for o in orders(time, 5) {
            assert!((o - 2.0).abs() < 0.2, "CN time order {o}\n{time}");
        }
        assert!(time.to_string().contains("order"));
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
}
