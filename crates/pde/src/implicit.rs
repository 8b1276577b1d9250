//! The implicit scheme: Crank–Nicolson for `v`, solved by Newton's method with a
//! tridiagonal Jacobian; `w` by the trapezoidal rule, coupled to `v`'s Crank–Nicolson step.
//!
//! One step from `(v, w)` to `(V, W)`:
//!
//! ```text
//! V - v = dt/2 [L V + f(V) - W + L v + f(v) - w]          (Crank–Nicolson for v)
//! W - w = dt/2 [eps (V - gamma W) + eps (v - gamma w)]     (trapezoidal rule for w)
//! ```
//!
//! The second line is linear in `W` node by node, so `W = alpha w + beta (v + V)` with
//! `alpha = (1 - dt eps gamma / 2) / (1 + dt eps gamma / 2)`, `beta = (dt eps / 2) / (1 + dt eps gamma / 2)`;
//! substituting it leaves one nonlinear system `G(V) = 0` whose Jacobian
//! `I - dt/2 L - dt/2 diag f'(V) + dt beta / 2 I` is tridiagonal. The whole step is second
//! order in time.

use gpu_runtime::{Backend, Exec, Target};

use crate::params::{Boundary, FhnParams, FhnState, flush_tiny, reaction, reaction_derivative};
use crate::tridiag::{self, TridiagSolver};
use crate::{PdeError, TridiagError};

/// Newton's method settings for [`implicit_run`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonOptions {
    /// Stop when the max-norm of the Newton update is at most this (default `1e-10`).
    pub tol: f64,
    /// Give up (with [`PdeError::NewtonNotConverged`]) after this many iterations in one step
    /// (default 30).
    pub max_iter: u32,
    /// Tridiagonal solver for the Jacobian systems (default Thomas).
    pub solver: TridiagSolver,
}

impl Default for NewtonOptions {
    fn default() -> Self {
        NewtonOptions {
            tol: 1e-10,
            max_iter: 30,
            solver: TridiagSolver::Thomas,
        }
    }
}

/// What an implicit run did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImplicitStats {
    /// Steps taken.
    pub steps: u64,
    /// Newton iterations over all steps.
    pub newton_iterations: u64,
    /// Most Newton iterations in one step.
    pub max_iterations_per_step: u32,
    /// Where the tridiagonal systems were solved.
    pub backend: Backend,
}

impl ImplicitStats {
    /// Mean Newton iterations per step.
    pub fn mean_iterations(&self) -> f64 {
        if self.steps == 0 {
            0.0
        } else {
            self.newton_iterations as f64 / self.steps as f64
        }
    }
}

/// A source term `(x, t) -> (s_v, s_w)` added to the right-hand sides (for manufactured
/// solutions).
pub(crate) type Source<'a> = &'a dyn Fn(f64, f64) -> (f64, f64);

/// Advances `state` by `steps` Crank–Nicolson / Newton steps of size `p.dt`. There is no
/// stability limit on `dt`; accuracy and Newton's convergence limit it.
///
/// Each Newton iteration solves one tridiagonal system with `opts.solver`, on the CPU or, when
/// `exec` says so (`Exec::Auto` from [`tridiag::TRIDIAG_GPU_THRESHOLD`] nodes), on the GPU.
///
/// # Complexity
/// `O(n)` per Newton iteration with Thomas or cyclic reduction (`O(n log n)` with CPU PCR);
/// typically 2–4 iterations per step.
///
/// # Errors
/// [`PdeError::NewtonNotConverged`] when a step needs more than `opts.max_iter` iterations;
/// [`PdeError::Tridiagonal`] when a Jacobian is singular; [`PdeError::InvalidParameter`],
/// [`PdeError::LengthMismatch`]; [`PdeError::Gpu`].
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, FhnState, NewtonOptions, implicit_run};
/// // dt = 0.5 is four times the explicit limit for dx = 0.5.
/// let p = FhnParams { dt: 0.5, ..FhnParams::default() };
/// let mut s = FhnState::rest(p.n);
/// s.v[200] = 1.0;
/// let stats = implicit_run(&p, &mut s, 20, NewtonOptions::default(), Exec::Cpu)?;
/// assert_eq!(stats.steps, 20);
/// assert!(stats.max_iterations_per_step <= 10);
/// # Ok::<(), pde::PdeError>(())
/// ```
pub fn implicit_run(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    opts: NewtonOptions,
    exec: Exec,
) -> Result<ImplicitStats, PdeError> {
    implicit_run_with_source(p, state, steps, opts, exec, None)
}

/// [`implicit_run`] with an optional source term.
pub(crate) fn implicit_run_with_source(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    opts: NewtonOptions,
    exec: Exec,
    source: Option<Source<'_>>,
) -> Result<ImplicitStats, PdeError> {
    p.validate()?;
    state.check_len(p.n)?;
    if !(opts.tol.is_finite() && opts.tol > 0.0) {
        return Err(PdeError::InvalidParameter {
            name: "newton tol",
            value: opts.tol,
            reason: "must be finite and > 0",
        });
    }
    if opts.max_iter == 0 {
        return Err(PdeError::InvalidParameter {
            name: "newton max_iter",
            value: 0.0,
            reason: "must be at least 1",
        });
    }
    let n = p.n;
    let target = exec.resolve(n as u64, tridiag::TRIDIAG_GPU_THRESHOLD)?;
    let lin_exec = match target {
        Target::Cpu => Exec::Cpu,
        Target::Cuda(_) => Exec::Cuda,
    };
    let mut ws = Workspace::new(n);
    let mut stats = ImplicitStats {
        steps: 0,
        newton_iterations: 0,
        max_iterations_per_step: 0,
        backend: target.backend(),
    };
    for step in 0..steps {
        let it = cn_step(p, state, &opts, lin_exec, source, &mut ws).map_err(|e| match e {
            StepError::Newton { iterations, update } => PdeError::NewtonNotConverged {
                step,
                t: state.t,
                iterations,
                update,
                tol: opts.tol,
            },
            StepError::Linear(e) => PdeError::Tridiagonal(e),
        })?;
        stats.steps += 1;
        stats.newton_iterations += it as u64;
        stats.max_iterations_per_step = stats.max_iterations_per_step.max(it);
    }
    Ok(stats)
}

struct Workspace {
    rhs: Vec<f64>,
    big_v: Vec<f64>,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    g: Vec<f64>,
    delta: Vec<f64>,
    scratch: Vec<f64>,
    sw: Vec<f64>,
}

impl Workspace {
    fn new(n: usize) -> Self {
        let z = || vec![0.0; n];
        Workspace {
            rhs: z(),
            big_v: z(),
            a: z(),
            b: z(),
            c: z(),
            g: z(),
            delta: z(),
            scratch: z(),
            sw: z(),
        }
    }
}

enum StepError {
    Newton { iterations: u32, update: f64 },
    Linear(TridiagError),
}

/// `(L v)_i` with mirrored ghost nodes.
#[inline(always)]
fn lap(v: &[f64], i: usize, inv_dx2: f64) -> f64 {
    let n = v.len();
    let l = if i == 0 { v[1] } else { v[i - 1] };
    let r = if i == n - 1 { v[n - 2] } else { v[i + 1] };
    (l + r - 2.0 * v[i]) * inv_dx2
}

fn is_fixed(p: &FhnParams, i: usize) -> Option<f64> {
    let n = p.n;
    match (i, p.left, p.right) {
        (0, Boundary::Dirichlet(val), _) => Some(val),
        (i, _, Boundary::Dirichlet(val)) if i == n - 1 => Some(val),
        _ => None,
    }
}

/// One Crank–Nicolson step; returns the Newton iterations it took.
fn cn_step(
    p: &FhnParams,
    state: &mut FhnState,
    opts: &NewtonOptions,
    lin_exec: Exec,
    source: Option<Source<'_>>,
    ws: &mut Workspace,
) -> Result<u32, StepError> {
    let n = p.n;
    let dt = p.dt;
    let h = 0.5 * dt;
    let dx = p.dx();
    let inv_dx2 = 1.0 / (dx * dx);
    let denom = 1.0 + h * p.eps * p.gamma;
    let alpha = (1.0 - h * p.eps * p.gamma) / denom;
    let beta = h * p.eps / denom;
    let (t0, t1) = (state.t, state.t + dt);
    let (v, w) = (&state.v, &state.w);
    // Explicit half and the constant part of W.
    for i in 0..n {
        let (mut sv, mut sw) = (0.0, 0.0);
        if let Some(src) = source {
            let x = i as f64 * dx;
            let (a0, b0) = src(x, t0);
            let (a1, b1) = src(x, t1);
            sv = h * (a0 + a1);
            sw = h * (b0 + b1) / denom;
        }
        ws.sw[i] = alpha * w[i] + beta * v[i] + sw;
        // G(V) = V - h (L V + f(V)) + h beta V - rhs
        ws.rhs[i] =
            v[i] + h * (lap(v, i, inv_dx2) + reaction(v[i], p.a)) - h * (w[i] + ws.sw[i]) + sv;
    }
    ws.big_v.copy_from_slice(v);
    for i in 0..n {
        if let Some(val) = is_fixed(p, i) {
            ws.big_v[i] = val;
        }
    }
    let mut update = f64::INFINITY;
    for it in 1..=opts.max_iter {
        let bv = &ws.big_v;
        for i in 0..n {
            if let Some(val) = is_fixed(p, i) {
                ws.g[i] = -(bv[i] - val);
                ws.a[i] = 0.0;
                ws.b[i] = 1.0;
                ws.c[i] = 0.0;
                continue;
            }
            let gi = bv[i] - h * (lap(bv, i, inv_dx2) + reaction(bv[i], p.a)) + h * beta * bv[i]
                - ws.rhs[i];
            ws.g[i] = -gi;
            let off = -h * inv_dx2;
            ws.a[i] = if i == 0 {
                0.0
            } else if i == n - 1 {
                2.0 * off
            } else {
                off
            };
            ws.c[i] = if i == n - 1 {
                0.0
            } else if i == 0 {
                2.0 * off
            } else {
                off
            };
            ws.b[i] = 1.0 + 2.0 * h * inv_dx2 - h * reaction_derivative(bv[i], p.a) + h * beta;
        }
        match (opts.solver, lin_exec) {
            (TridiagSolver::Thomas, Exec::Cpu) => {
                tridiag::thomas_into(&ws.a, &ws.b, &ws.c, &ws.g, &mut ws.delta, &mut ws.scratch)
                    .map_err(StepError::Linear)?
            }
            (solver, exec) => {
                let (x, _) = tridiag::solve(&ws.a, &ws.b, &ws.c, &ws.g, solver, exec)
                    .map_err(StepError::Linear)?;
                ws.delta.copy_from_slice(&x);
            }
        }
        update = 0.0;
        for (vi, di) in ws.big_v.iter_mut().zip(&ws.delta) {
            *vi += di;
            update = update.max(di.abs());
        }
        if !update.is_finite() {
            break;
        }
        if update <= opts.tol {
            // W = alpha w + beta (v + V) + source part
            for i in 0..n {
                state.w[i] = flush_tiny(ws.sw[i] + beta * ws.big_v[i]);
                state.v[i] = flush_tiny(ws.big_v[i]);
            }
            state.t = t1;
            return Ok(it);
        }
    }
    Err(StepError::Newton {
        iterations: opts.max_iter,
        update,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explicit_run;

    #[test]
    fn agrees_with_explicit_for_small_dt() {
        let p = FhnParams {
            n: 101,
            length: 50.0,
            dt: 0.01,
            right: Boundary::Dirichlet(1.0),
            ..FhnParams::default()
        };
        let mut s = FhnState::rest(101);
        for (i, v) in s.v.iter_mut().enumerate() {
            let x = i as f64 * 0.5;
            *v = (-(x - 25.0) * (x - 25.0) / 10.0).exp();
        }
        s.apply_boundaries(&p);
        let mut e = s.clone();
        let stats = implicit_run(&p, &mut s, 500, NewtonOptions::default(), Exec::Cpu).unwrap();
        explicit_run(&p, &mut e, 500, Exec::Cpu).unwrap();
        let diff =
            s.v.iter()
                .zip(&e.v)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
        assert!(diff < 2e-3, "CN vs explicit differ by {diff}");
        assert!((s.t - 5.0).abs() < 1e-9);
        assert!(stats.max_iterations_per_step >= 1 && stats.max_iterations_per_step < 8);
        assert_eq!(s.v[100], 1.0);
    }

    #[test]
    fn all_solvers_give_the_same_run() {
        let p = FhnParams {
            n: 77,
            length: 38.0,
            dt: 0.4,
            ..FhnParams::default()
        };
        let mut base = FhnState::rest(77);
        base.v[30] = 1.0;
        base.v[31] = 0.8;
        let mut runs = Vec::new();
        for solver in [
            TridiagSolver::Thomas,
            TridiagSolver::CyclicReduction,
            TridiagSolver::Pcr,
        ] {
            let mut s = base.clone();
            implicit_run(
                &p,
                &mut s,
                30,
                NewtonOptions {
                    solver,
                    ..NewtonOptions::default()
                },
                Exec::Cpu,
            )
            .unwrap();
            runs.push(s);
        }
        for r in &runs[1..] {
            for (a, b) in r.v.iter().zip(&runs[0].v) {
                assert!((a - b).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn newton_non_convergence_is_an_error() {
        let p = FhnParams {
            n: 41,
            length: 20.0,
            dt: 0.5,
            ..FhnParams::default()
        };
        let mut s = FhnState::rest(41);
        s.v[20] = 1.0;
        let opts = NewtonOptions {
            max_iter: 1,
            ..NewtonOptions::default()
        };
        match implicit_run(&p, &mut s, 3, opts, Exec::Cpu) {
            Err(PdeError::NewtonNotConverged {
                step: 0,
                iterations: 1,
                ..
            }) => {}
            other => panic!("expected NewtonNotConverged, got {other:?}"),
        }
        let bad = NewtonOptions {
            tol: 0.0,
            ..NewtonOptions::default()
        };
        assert!(matches!(
            implicit_run(&p, &mut s, 1, bad, Exec::Cpu),
            Err(PdeError::InvalidParameter { .. })
        ));
    }

    #[test]
    fn large_dt_stays_bounded() {
        // 20x the explicit limit: CN stays bounded where forward Euler would blow up.
        let p = FhnParams {
            dt: 2.5,
            ..FhnParams::default()
        };
        let mut s = FhnState::rest(p.n);
        s.v[200] = 1.0;
        implicit_run(&p, &mut s, 40, NewtonOptions::default(), Exec::Cpu).unwrap();
        assert!(s.v.iter().all(|v| v.is_finite() && v.abs() < 2.0));
    }
}
