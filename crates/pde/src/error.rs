//! Errors of the FitzHugh–Nagumo solvers and of the tridiagonal solvers.

use gpu_runtime::GpuError;

/// Why a tridiagonal solve could not run or produce a solution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TridiagError {
    /// The four coefficient arrays (or the solution buffer) differ in length.
    #[error("tridiagonal arrays differ in length: a {a}, b {b}, c {c}, d {d}")]
    LengthMismatch {
        /// Length of the sub-diagonal.
        a: usize,
        /// Length of the diagonal.
        b: usize,
        /// Length of the super-diagonal.
        c: usize,
        /// Length of the right-hand side.
        d: usize,
    },
    /// A pivot was zero or not finite: the system is singular or needs pivoting, which these
    /// solvers (like cuSPARSE's `gtsv2*_nopivot`) do not do.
    #[error("zero or non-finite pivot in row {row} (the system is singular or needs pivoting)")]
    ZeroPivot {
        /// Row of the failing pivot.
        row: usize,
    },
    /// A strided batch whose layout does not fit the arrays.
    #[error(
        "batch layout does not fit: {batch} systems of size {m} with stride {stride} need {needed} elements, the arrays hold {len}"
    )]
    BatchLayout {
        /// Number of systems.
        batch: usize,
        /// Size of each system.
        m: usize,
        /// Distance between the first elements of consecutive systems.
        stride: usize,
        /// Elements the layout needs.
        needed: usize,
        /// Elements the arrays hold.
        len: usize,
    },
    /// The GPU path failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// Why a FitzHugh–Nagumo run could not start or finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PdeError {
    /// A parameter is out of its domain.
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What it must be.
        reason: &'static str,
    },
    /// `dt` is above the explicit scheme's stability limit.
    #[error(
        "dt = {dt} exceeds the explicit stability limit dt_max = {limit:.6} for dx = {dx} \
         (dt_max = 2 / (4/dx^2 + K) with diffusion rate 4/dx^2 = {diffusion:.4} and reaction rate K = {reaction:.4}); \
         use dt <= {limit:.6} or the implicit scheme"
    )]
    Unstable {
        /// The time step asked for.
        dt: f64,
        /// The largest stable time step.
        limit: f64,
        /// The (smallest) grid spacing.
        dx: f64,
        /// The diffusion part of the stiffness, `4 / dx^2`.
        diffusion: f64,
        /// The reaction part of the stiffness, `K = max(0, -min f'(v))` over the state range.
        reaction: f64,
    },
    /// Newton's method did not reach its tolerance within the iteration cap, or an update was
    /// not finite (it stops at once then).
    #[error(
        "Newton's method did not converge at step {step} (t = {t}): update norm {update:.3e} after {iterations} iterations (tolerance {tol:e}); reduce dt"
    )]
    NewtonNotConverged {
        /// The time step index.
        step: u64,
        /// The time at the start of the failing step.
        t: f64,
        /// Iterations done.
        iterations: u32,
        /// Max-norm of the last Newton update.
        update: f64,
        /// The tolerance.
        tol: f64,
    },
    /// A state vector does not match the grid.
    #[error("state has {got} values but the grid has {expected} nodes")]
    LengthMismatch {
        /// Nodes on the grid (times the batch size for batches).
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// The solution became non-finite (only possible when the stability check is bypassed).
    #[error("the solution became non-finite at step {step}")]
    NonFinite {
        /// The step at which it was detected.
        step: u64,
    },
    /// A linear solve inside the implicit scheme failed.
    #[error(transparent)]
    Tridiagonal(#[from] TridiagError),
    /// The GPU path failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Writing output failed.
    #[error("output: {0}")]
    Output(String),
}
