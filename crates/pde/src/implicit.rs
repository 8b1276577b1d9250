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
//!
//! [`ImplicitVariant::SeedLeapfrog`] selects the seed's own scheme instead (CPU only; see
//! its documentation): a leapfrog `w` update and the seed's Jacobian, kept so the seed's
//! figures can be redrawn as published.
//!
//! The Newton loop ([`cn_step`]) and the run loop are shared by two backends with the same
//! formulas in the same order: host arrays (`HostCn`, the CPU solvers) and device buffers
//! (`crate::cuda::CnDevice`, the kernels `fhn_cn_*` in `kernels-cuda/pde.cu` and the GPU
//! tridiagonal solvers), where only the update's max-norm crosses the bus per iteration.

use gpu_runtime::{Backend, Exec, Target};

use crate::PdeError;
use crate::cuda::CnDevice;
use crate::kernel_types::{CnBackend, CnConstants, Source, StepError};
use crate::params::{Boundary, FhnParams, FhnState, flush_tiny, reaction, reaction_derivative};
use crate::tridiag::{self, TridiagSolver};

/// Newton's method settings for [`implicit_run`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonOptions {
    /// Stop when the max-norm of the Newton update is at most this (default `1e-10`).
    pub tol: f64,
    /// Give up (with [`PdeError::NewtonNotConverged`]) after this many iterations in one step
    /// (default 30).
    pub max_iter: u32,
    /// Tridiagonal solver for the Jacobian systems (default Thomas). On the GPU the choice
    /// is mapped as in [`tridiag::solve`]: `Thomas` runs as PCR up to
    /// [`crate::BATCH_PCR_MAX_M`] rows, and every solver as the PCR–Thomas hybrid above.
    pub solver: TridiagSolver,
    /// Which implicit scheme runs (default [`ImplicitVariant::CrankNicolson`], ours).
    pub variant: ImplicitVariant,
}

impl Default for NewtonOptions {
    fn default() -> Self {
        NewtonOptions {
            tol: 1e-10,
            max_iter: 30,
            solver: TridiagSolver::Thomas,
            variant: ImplicitVariant::CrankNicolson,
        }
    }
}

/// Which implicit scheme [`implicit_run`] and [`newton_trace`] advance.
///
/// Both are Crank–Nicolson in `v` solved by Newton's method with a tridiagonal Jacobian; they
/// differ in `w`, in the ends and in the Jacobian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImplicitVariant {
    /// Ours (the default): `w` by the trapezoidal rule coupled to `v`'s step, no-flux ends as a
    /// mirrored ghost node, and the exact Jacobian of the coupled system, so the step is
    /// second order in `dt` and `dx` and Newton's convergence is q-quadratic with every
    /// solver. Runs on the CPU and the GPU.
    #[default]
    CrankNicolson,
    /// The seed's implicit scheme (post 002, the equations before its Figs 9–12), for
    /// redrawing its figures as published. Per step, with `F` scaled by `1 / dt` as the seed
    /// writes it:
    ///
    /// ```text
    /// W = 2 dt eps (v - gamma w) + w_prev                          (leapfrog, explicit)
    /// V/dt - 1/2 [L V + f(V)] = v/dt + 1/2 [L v + f(v)] - 1/2 (w + W)   (interior nodes)
    /// V_0 = V_1,  V_{n-1} = V_{n-2}                                    (the seed's ends)
    /// ```
    ///
    /// and Newton's method with the seed's Jacobian: interior rows `alpha = -1 / (2 dx^2)` off
    /// the diagonal and `beta_i = 1/dt - 1/2 (-2/dx^2 + f'(V_i))` on it, and first and last
    /// rows `(1, 1)` exactly as the seed prints them (the derivative of `V_0 - V_1` is
    /// `(1, -1)`, so Newton's convergence is only q-linear; its fixed point still solves the
    /// equations above). `w_prev` is the previous step's `w`; the first step of each run
    /// (there is no previous `w` yet; the seed does not say how it starts) takes a forward
    /// Euler step `W = w + dt eps (v - gamma w)`. A no-flux or copy end is the seed's
    /// `V_0 = V_1`; a Dirichlet end is fixed.
    ///
    /// Not the default because it is weaker: leapfrog is only weakly stable for the decay
    /// term `-eps gamma w` (a parasitic mode growing like `exp(eps gamma t)`), the copied end
    /// is first order in `dx`, and the inexact Jacobian costs Newton iterations. CPU only
    /// (a GPU request is [`PdeError::InvalidParameter`]); no source terms.
    SeedLeapfrog,
}

impl ImplicitVariant {
    /// The name used in reports and on the command line: `ours` or `seed`.
    ///
    /// # Complexity
    /// `O(1)`.
    ///
    /// # Examples
    /// ```
    /// use pde::ImplicitVariant;
    /// assert_eq!(ImplicitVariant::default().name(), "ours");
    /// assert_eq!(ImplicitVariant::SeedLeapfrog.name(), "seed");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ImplicitVariant::CrankNicolson => "ours",
            ImplicitVariant::SeedLeapfrog => "seed",
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
    /// Where the run ran: on the GPU the whole Newton iteration (explicit half, assembly,
    /// solve, update) runs on the device, not only the tridiagonal solves.
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

/// Advances `state` by `steps` Crank–Nicolson / Newton steps of size `p.dt`. There is no
/// stability limit on `dt`; accuracy and Newton's convergence limit it.
///
/// On the CPU each Newton iteration assembles the tridiagonal Jacobian and solves it with
/// `opts.solver`. On the GPU (`Exec::Cuda`, or `Exec::Auto` from
/// [`tridiag::TRIDIAG_GPU_THRESHOLD`] nodes, a threshold set for host-slice solves and not
/// yet measured for this path) the run is device-resident: `v` and `w` are
/// uploaded once, kernels compute the explicit half, assemble the Jacobian, solve it (the GPU
/// solvers of [`tridiag::solve`], on device buffers) and apply the update, and the only
/// transfer per Newton iteration is the 8-byte max-norm of the update; `v` and `w` are
/// downloaded once at the end (also when the run stops with an error, so `state` then holds
/// the last completed step, as on the CPU). Both paths use the same formulas in the same
/// order and agree to round-off.
///
/// # Complexity
/// `O(n)` per Newton iteration with Thomas or cyclic reduction (`O(n log n)` with CPU PCR);
/// typically 2–4 iterations per step.
///
/// # Errors
/// [`PdeError::NewtonNotConverged`] when a step needs more than `opts.max_iter` iterations or
/// an update is not finite; [`PdeError::Tridiagonal`] when a Jacobian is singular on the CPU
/// (on the GPU a singular Jacobian shows up as a non-finite update, so as
/// [`PdeError::NewtonNotConverged`]); [`PdeError::InvalidParameter`] (also for
/// [`ImplicitVariant::SeedLeapfrog`] with `Exec::Cuda`: it is CPU only, and `Exec::Auto` runs
/// it on the CPU), [`PdeError::LengthMismatch`]; [`PdeError::Gpu`].
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

/// [`implicit_run`] with an optional source term. On the GPU the source is evaluated on the
/// host each step (it is a host closure) and its `2n` values are uploaded; everything else
/// stays on the device.
pub(crate) fn implicit_run_with_source(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    opts: NewtonOptions,
    exec: Exec,
    source: Option<Source<'_>>,
) -> Result<ImplicitStats, PdeError> {
    p.validate()?;
    if opts.variant == ImplicitVariant::SeedLeapfrog {
        check_newton_options(&opts)?;
        state.check_len(p.n)?;
        seed_checks(exec, source.is_some())?;
        return seed_run(p, state, steps, &opts);
    }
    p.refuse_copy_ends(
        "copy ends (the seed's v_0 = v_1) are implemented for the explicit scheme and the \
         seed's implicit variant only",
    )?;
    state.check_len(p.n)?;
    check_newton_options(&opts)?;
    let k = CnConstants::new(p);
    match exec.resolve(p.n as u64, tridiag::TRIDIAG_GPU_THRESHOLD)? {
        Target::Cpu => {
            let mut host = HostCn {
                p,
                k,
                solver: opts.solver,
                source,
                ws: Workspace::new(p.n),
            };
            run_steps(&mut host, state, steps, p.dt, &opts, Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            let mut dev = CnDevice::upload(gpu, p, k, state, opts.solver, source)?;
            let t_start = state.t;
            let run = run_steps(&mut dev, state, steps, p.dt, &opts, Backend::Cuda);
            // The state of the last completed step, whether the run finished or not; the
            // run's own error comes first. If the download fails, `v` and `w` were not
            // touched, so the time goes back to match them.
            let download = dev.download(state);
            if download.is_err() {
                state.t = t_start;
            }
            let stats = run?;
            download?;
            Ok(stats)
        }
    }
}

/// One Crank–Nicolson step of `state` with every Newton update's max-norm recorded, for the
/// convergence experiment: iterations run until the update is at most `opts.tol` or
/// `opts.max_iter` iterations have run, and the norms are returned either way (`state`
/// advances only when the step converged). On the GPU (`exec`, resolved as in
/// [`implicit_run`]) the norms are the ones the device reduction reads back.
///
/// # Complexity
/// As one step of [`implicit_run`].
///
/// # Errors
/// [`PdeError::InvalidParameter`] (also for [`ImplicitVariant::SeedLeapfrog`] with
/// `Exec::Cuda`), [`PdeError::LengthMismatch`], [`PdeError::Tridiagonal`] (a singular
/// Jacobian on the CPU), [`PdeError::Gpu`].
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, NewtonOptions, Scenario, newton_trace};
/// let p = FhnParams { dt: 0.25, ..FhnParams::default() };
/// let mut s = Scenario::Gaussian.initial_state(&p);
/// let opts = NewtonOptions { tol: 1e-14, ..NewtonOptions::default() };
/// let norms = newton_trace(&p, &mut s, opts, Exec::Cpu)?;
/// assert!(norms.len() >= 2 && *norms.last().unwrap() <= 1e-14);
/// assert!(norms[1] < norms[0]);
/// # Ok::<(), pde::PdeError>(())
/// ```
pub fn newton_trace(
    p: &FhnParams,
    state: &mut FhnState,
    opts: NewtonOptions,
    exec: Exec,
) -> Result<Vec<f64>, PdeError> {
    p.validate()?;
    let mut norms = Vec::new();
    if opts.variant == ImplicitVariant::SeedLeapfrog {
        check_newton_options(&opts)?;
        state.check_len(p.n)?;
        seed_checks(exec, false)?;
        let mut seed = SeedCpu::new(p, opts.solver);
        return match seed.step_traced(state, &opts, &mut norms) {
            Ok(_) | Err(StepError::Newton { .. }) => Ok(norms),
            Err(StepError::Linear(e)) => Err(PdeError::Tridiagonal(e)),
            Err(StepError::Gpu(e)) => Err(PdeError::Gpu(e)),
        };
    }
    p.refuse_copy_ends(
        "copy ends (the seed's v_0 = v_1) are implemented for the explicit scheme and the \
         seed's implicit variant only",
    )?;
    state.check_len(p.n)?;
    let k = CnConstants::new(p);
    let outcome = match exec.resolve(p.n as u64, tridiag::TRIDIAG_GPU_THRESHOLD)? {
        Target::Cpu => {
            let mut host = HostCn {
                p,
                k,
                solver: opts.solver,
                source: None,
                ws: Workspace::new(p.n),
            };
            cn_step_traced(&mut host, state, p.dt, &opts, &mut norms)
        }
        Target::Cuda(gpu) => {
            let mut dev = CnDevice::upload(gpu, p, k, state, opts.solver, None)?;
            let r = cn_step_traced(&mut dev, state, p.dt, &opts, &mut norms);
            dev.download(state)?;
            r
        }
    };
    match outcome {
        Ok(_) | Err(StepError::Newton { .. }) => Ok(norms),
        Err(StepError::Linear(e)) => Err(PdeError::Tridiagonal(e)),
        Err(StepError::Gpu(e)) => Err(PdeError::Gpu(e)),
    }
}

fn check_newton_options(opts: &NewtonOptions) -> Result<(), PdeError> {
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
    Ok(())
}

/// The seed variant runs on the CPU only and takes no source.
fn seed_checks(exec: Exec, has_source: bool) -> Result<(), PdeError> {
    if exec == Exec::Cuda {
        return Err(PdeError::InvalidParameter {
            name: "implicit variant",
            value: 1.0,
            reason: "the seed's implicit variant (leapfrog w) runs on the CPU only",
        });
    }
    if has_source {
        return Err(PdeError::InvalidParameter {
            name: "implicit variant",
            value: 1.0,
            reason: "the seed's implicit variant (leapfrog w) takes no source term",
        });
    }
    Ok(())
}

/// `steps` steps of [`ImplicitVariant::SeedLeapfrog`] on the CPU.
fn seed_run(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    opts: &NewtonOptions,
) -> Result<ImplicitStats, PdeError> {
    seed_run_observed(p, state, steps, opts, &mut |_| true)
}

/// [`seed_run`] calling `keep_going` with the state after every step and stopping (without
/// an error) when it returns `false`: one run, so the leapfrog keeps its previous `w`, for
/// the stability experiment. Checks the options like [`implicit_run`] does.
pub(crate) fn seed_run_observed(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    opts: &NewtonOptions,
    keep_going: &mut dyn FnMut(&FhnState) -> bool,
) -> Result<ImplicitStats, PdeError> {
    p.validate()?;
    check_newton_options(opts)?;
    state.check_len(p.n)?;
    let mut seed = SeedCpu::new(p, opts.solver);
    let mut stats = ImplicitStats {
        steps: 0,
        newton_iterations: 0,
        max_iterations_per_step: 0,
        backend: Backend::Cpu,
    };
    let mut norms = Vec::new();
    for step in 0..steps {
        norms.clear();
        let it = seed
            .step_traced(state, opts, &mut norms)
            .map_err(|e| step_failed(e, step, state.t, opts.tol))?;
        stats.steps += 1;
        stats.newton_iterations += it as u64;
        stats.max_iterations_per_step = stats.max_iterations_per_step.max(it);
        if !keep_going(state) {
            break;
        }
    }
    Ok(stats)
}

/// The seed's implicit scheme ([`ImplicitVariant::SeedLeapfrog`]) on host arrays.
struct SeedCpu<'a> {
    p: &'a FhnParams,
    solver: TridiagSolver,
    /// `w` of the step before the current one; `None` before the first step of a run.
    w_prev: Option<Vec<f64>>,
    ws: Workspace,
}

impl<'a> SeedCpu<'a> {
    fn new(p: &'a FhnParams, solver: TridiagSolver) -> Self {
        SeedCpu {
            p,
            solver,
            w_prev: None,
            ws: Workspace::new(p.n),
        }
    }

    /// One step (state, time and `w_prev` advance only when Newton converges), pushing each
    /// update's max-norm onto `norms`; returns the iterations.
    fn step_traced(
        &mut self,
        state: &mut FhnState,
        opts: &NewtonOptions,
        norms: &mut Vec<f64>,
    ) -> Result<u32, StepError> {
        let (p, ws) = (self.p, &mut self.ws);
        let n = p.n;
        let (dt, a, eps, gamma) = (p.dt, p.a, p.eps, p.gamma);
        let dx = p.dx();
        let inv_dx2 = 1.0 / (dx * dx);
        let (v, w) = (&state.v, &state.w);
        // W (in ws.sw): leapfrog, or forward Euler on the first step.
        for i in 0..n {
            let drift = dt * eps * (v[i] - gamma * w[i]);
            ws.sw[i] = match &self.w_prev {
                Some(wp) => 2.0 * drift + wp[i],
                None => drift + w[i],
            };
        }
        // The known right-hand side of the interior rows.
        for i in 1..n - 1 {
            let lv = (v[i + 1] - 2.0 * v[i] + v[i - 1]) * inv_dx2;
            ws.rhs[i] = v[i] / dt + 0.5 * (lv + reaction(v[i], a)) - 0.5 * (w[i] + ws.sw[i]);
        }
        ws.big_v.copy_from_slice(v);
        for i in [0, n - 1] {
            if let Some(val) = is_fixed(p, i) {
                ws.big_v[i] = val;
            }
        }
        let alpha = -0.5 * inv_dx2;
        let mut update = f64::INFINITY;
        let mut iterations = 0;
        for it in 1..=opts.max_iter {
            iterations = it;
            let bv = &ws.big_v;
            // F(V) in ws.g, the seed's Jacobian in (a, b, c).
            for i in 1..n - 1 {
                let lv = (bv[i + 1] - 2.0 * bv[i] + bv[i - 1]) * inv_dx2;
                ws.g[i] = bv[i] / dt - 0.5 * (lv + reaction(bv[i], a)) - ws.rhs[i];
                ws.a[i] = alpha;
                ws.c[i] = alpha;
                ws.b[i] = 1.0 / dt - 0.5 * (-2.0 * inv_dx2 + reaction_derivative(bv[i], a));
            }
            ws.a[0] = 0.0;
            ws.b[0] = 1.0;
            ws.c[n - 1] = 0.0;
            ws.b[n - 1] = 1.0;
            match is_fixed(p, 0) {
                Some(val) => (ws.g[0], ws.c[0]) = (bv[0] - val, 0.0),
                None => (ws.g[0], ws.c[0]) = (bv[0] - bv[1], 1.0),
            }
            match is_fixed(p, n - 1) {
                Some(val) => (ws.g[n - 1], ws.a[n - 1]) = (bv[n - 1] - val, 0.0),
                None => (ws.g[n - 1], ws.a[n - 1]) = (bv[n - 1] - bv[n - 2], 1.0),
            }
            ws.solve_delta(self.solver)?;
            // J dv = F, V <- V - dv
            for (vi, di) in ws.big_v.iter_mut().zip(&ws.delta) {
                *vi -= di;
            }
            update = update_norm(&ws.delta);
            norms.push(update);
            if !update.is_finite() {
                break;
            }
            if update <= opts.tol {
                let old_w =
                    std::mem::replace(&mut state.w, ws.sw.iter().map(|&x| flush_tiny(x)).collect());
                self.w_prev = Some(old_w);
                for (vi, &bi) in state.v.iter_mut().zip(&ws.big_v) {
                    *vi = flush_tiny(bi);
                }
                state.t += dt;
                return Ok(it);
            }
        }
        Err(StepError::Newton { iterations, update })
    }
}

/// The max of `|d|` over `delta`; NaN when any element is NaN (`f64::max` would skip it), so a
/// non-finite update is never missed. The GPU reduction orders the bit patterns of `|d|`,
/// which puts NaN above infinity above every finite value: the same rule.
fn update_norm(delta: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for d in delta {
        let d = d.abs();
        if d.is_nan() {
            return d;
        }
        m = m.max(d);
    }
    m
}

fn run_steps(
    backend: &mut impl CnBackend,
    state: &mut FhnState,
    steps: u64,
    dt: f64,
    opts: &NewtonOptions,
    backend_kind: Backend,
) -> Result<ImplicitStats, PdeError> {
    let mut stats = ImplicitStats {
        steps: 0,
        newton_iterations: 0,
        max_iterations_per_step: 0,
        backend: backend_kind,
    };
    for step in 0..steps {
        let it = cn_step(backend, state, dt, opts)
            .map_err(|e| step_failed(e, step, state.t, opts.tol))?;
        stats.steps += 1;
        stats.newton_iterations += it as u64;
        stats.max_iterations_per_step = stats.max_iterations_per_step.max(it);
    }
    Ok(stats)
}

/// One Crank–Nicolson step of size `dt` (state and time advance only when it converges);
/// returns the Newton iterations it took.
fn cn_step(
    backend: &mut impl CnBackend,
    state: &mut FhnState,
    dt: f64,
    opts: &NewtonOptions,
) -> Result<u32, StepError> {
    cn_step_traced(backend, state, dt, opts, &mut Vec::new())
}

/// [`cn_step`], pushing each update's max-norm onto `norms`.
fn cn_step_traced(
    backend: &mut impl CnBackend,
    state: &mut FhnState,
    dt: f64,
    opts: &NewtonOptions,
    norms: &mut Vec<f64>,
) -> Result<u32, StepError> {
    let (t0, t1) = (state.t, state.t + dt);
    backend.begin(state, t0, t1)?;
    let mut update = f64::INFINITY;
    let mut iterations = 0;
    for it in 1..=opts.max_iter {
        iterations = it;
        update = backend.newton_iteration()?;
        norms.push(update);
        if !update.is_finite() {
            break; // diverged: more iterations cannot help
        }
        if update <= opts.tol {
            backend.finish(state)?;
            state.t = t1;
            return Ok(it);
        }
    }
    Err(StepError::Newton { iterations, update })
}

/// The CPU path: host arrays, the Jacobian solved by `solver` on the CPU.
struct HostCn<'a> {
    p: &'a FhnParams,
    k: CnConstants,
    solver: TridiagSolver,
    source: Option<Source<'a>>,
    ws: Workspace,
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
    /// `delta` = the solution of the tridiagonal system `(a, b, c) delta = g` by `solver`.
    fn solve_delta(&mut self, solver: TridiagSolver) -> Result<(), StepError> {
        match solver {
            TridiagSolver::Thomas => tridiag::thomas_into(
                &self.a,
                &self.b,
                &self.c,
                &self.g,
                &mut self.delta,
                &mut self.scratch,
            )
            .map_err(StepError::Linear),
            solver => {
                let (x, _) = tridiag::solve(&self.a, &self.b, &self.c, &self.g, solver, Exec::Cpu)
                    .map_err(StepError::Linear)?;
                self.delta.copy_from_slice(&x);
                Ok(())
            }
        }
    }

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

// The kernels pde_fhn_cn_explicit_f64, pde_fhn_cn_assemble_f64, pde_fhn_cn_update_f64 and pde_fhn_cn_finish_f64
// in kernels-cuda/pde.cu mirror these four methods formula for formula; change both together.
impl CnBackend for HostCn<'_> {
    fn begin(&mut self, state: &FhnState, t0: f64, t1: f64) -> Result<(), StepError> {
        let (p, k, ws) = (self.p, &self.k, &mut self.ws);
        let (v, w) = (&state.v, &state.w);
        for i in 0..p.n {
            let (sv, sw) = match self.source {
                Some(src) => k.source_terms(src, i as f64 * k.dx, t0, t1),
                None => (0.0, 0.0),
            };
            // The constant part of W, and G(V) = V - h (L V + f(V)) + h beta V - rhs.
            ws.sw[i] = k.alpha * w[i] + k.beta * v[i] + sw;
            ws.rhs[i] = v[i] + k.h * (lap(v, i, k.inv_dx2) + reaction(v[i], k.a))
                - k.h * (w[i] + ws.sw[i])
                + sv;
            ws.big_v[i] = is_fixed(p, i).unwrap_or(v[i]);
        }
        Ok(())
    }

    fn newton_iteration(&mut self) -> Result<f64, StepError> {
        let (p, k, ws) = (self.p, &self.k, &mut self.ws);
        let (n, h, inv_dx2) = (p.n, k.h, k.inv_dx2);
        let bv = &ws.big_v;
        for i in 0..n {
            if let Some(val) = is_fixed(p, i) {
                ws.g[i] = -(bv[i] - val);
                ws.a[i] = 0.0;
                ws.b[i] = 1.0;
                ws.c[i] = 0.0;
                continue;
            }
            let gi = bv[i] - h * (lap(bv, i, inv_dx2) + reaction(bv[i], k.a)) + h * k.beta * bv[i]
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
            ws.b[i] = 1.0 + 2.0 * h * inv_dx2 - h * reaction_derivative(bv[i], k.a) + h * k.beta;
        }
        ws.solve_delta(self.solver)?;
        for (vi, di) in ws.big_v.iter_mut().zip(&ws.delta) {
            *vi += di;
        }
        Ok(update_norm(&ws.delta))
    }

    fn finish(&mut self, state: &mut FhnState) -> Result<(), StepError> {
        // W = alpha w + beta (v + V) + source part
        let ws = &self.ws;
        for i in 0..self.p.n {
            state.w[i] = flush_tiny(ws.sw[i] + self.k.beta * ws.big_v[i]);
            state.v[i] = flush_tiny(ws.big_v[i]);
        }
        Ok(())
    }
}

/// The run's error for a step that failed: Newton's non-convergence names the step, the time
/// and the tolerance; solver and GPU errors pass through.
fn step_failed(e: StepError, step: u64, t: f64, tol: f64) -> PdeError {
    match e {
        StepError::Newton { iterations, update } => PdeError::NewtonNotConverged {
            step,
            t,
            iterations,
            update,
            tol,
        },
        StepError::Linear(e) => PdeError::Tridiagonal(e),
        StepError::Gpu(e) => PdeError::Gpu(e),
    }
}

#[cfg(test)]
mod tests;
