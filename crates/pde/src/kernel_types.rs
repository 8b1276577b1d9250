//! Types that the CPU schemes and the CUDA backend (`cuda.rs`) both need, kept at the bottom
//! so that neither side imports the other (as rayon's `iter/plumbing`): the element trait of
//! the tridiagonal solvers, the solver choice, the step
//! constants of both schemes, the `#[repr(C)]` coefficient sets the kernels take, and the
//! Crank–Nicolson backend interface.

use gpu_runtime::GpuError;

use crate::TridiagError;
use crate::params::{Boundary, FhnParams, FhnState};

pub(crate) mod sealed {
    /// Seals [`Real`](super::Real): `f32` and `f64` only (the types `kernels-cuda/pde.cu`'s
    /// tridiagonal entries exist for).
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The floating-point types the solvers accept: `f32` and `f64`.
pub trait Real:
    sealed::Sealed
    + Copy
    + Default
    + PartialOrd
    + Send
    + Sync
    + std::fmt::Debug
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + gpu_runtime::DeviceScalar
    + 'static
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Whether the value is finite.
    fn is_finite(self) -> bool;
    /// Conversion to `f64`.
    fn to_f64(self) -> f64;
    /// Conversion from `f64` (rounding for `f32`).
    fn from_f64(x: f64) -> Self;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn abs(self) -> Self {
        f32::abs(self)
    }
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn abs(self) -> Self {
        f64::abs(self)
    }
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> Self {
        x
    }
}

/// Which algorithm solves the tridiagonal systems.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TridiagSolver {
    /// The Thomas algorithm (Gaussian elimination without pivoting): `O(n)`, sequential.
    Thomas,
    /// Cyclic reduction: `O(n)` work in `log2 n` levels of independent updates.
    CyclicReduction,
    /// Parallel cyclic reduction: `O(n log n)` work, every row updated at every level; on the
    /// GPU a PCR–Thomas hybrid for single systems and shared-memory PCR for batches.
    Pcr,
}

/// Per-step constants of the explicit update.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Coeffs {
    /// `dt / dx^2`.
    pub(crate) r: f64,
    pub(crate) dt: f64,
    pub(crate) a: f64,
    /// `dt * eps`.
    pub(crate) dte: f64,
    pub(crate) gamma: f64,
    pub(crate) left: Boundary,
    pub(crate) right: Boundary,
}

impl Coeffs {
    pub(crate) fn new(p: &FhnParams, dx: f64) -> Self {
        Coeffs {
            r: p.dt / (dx * dx),
            dt: p.dt,
            a: p.a,
            dte: p.dt * p.eps,
            gamma: p.gamma,
            left: p.left,
            right: p.right,
        }
    }
}

/// Boundary kind and value as the kernels take them: 0 = no flux, 1 = Dirichlet. Copy ends
/// never reach the kernels (the explicit and implicit entry points refuse them on the GPU).
pub(crate) fn boundary_kind(b: Boundary) -> (u32, f64) {
    match b {
        Boundary::NoFlux | Boundary::Copy => (0, 0.0),
        Boundary::Dirichlet(v) => (1, v),
    }
}

/// The explicit kernels' coefficient set, one kernel argument: mirrors `struct FhnCoeffs` in
/// `kernels-cuda/pde.cu` field for field (the generated launchers check the size).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FhnCoeffs {
    pub(crate) r: f64,
    pub(crate) dt: f64,
    pub(crate) a: f64,
    pub(crate) dte: f64,
    pub(crate) gamma: f64,
    pub(crate) lkind: u32,
    pub(crate) rkind: u32,
    pub(crate) lval: f64,
    pub(crate) rval: f64,
}

// SAFETY: `#[repr(C)]` of seven f64 and two u32 placed so that no padding arises (five f64,
// two u32 filling one 8-byte slot, two f64: 64 bytes); every bit pattern is a valid value and
// zero bytes are valid.
unsafe impl gpu_runtime::DeviceScalar for FhnCoeffs {}

impl From<&Coeffs> for FhnCoeffs {
    fn from(k: &Coeffs) -> Self {
        let (lkind, lval) = boundary_kind(k.left);
        let (rkind, rval) = boundary_kind(k.right);
        FhnCoeffs {
            r: k.r,
            dt: k.dt,
            a: k.a,
            dte: k.dte,
            gamma: k.gamma,
            lkind,
            rkind,
            lval,
            rval,
        }
    }
}

/// The Crank–Nicolson kernels' coefficient set, one kernel argument: mirrors `struct CnCoeffs`
/// in `kernels-cuda/pde.cu` field for field (the generated launchers check the size).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CnCoeffs {
    pub(crate) h: f64,
    pub(crate) inv_dx2: f64,
    pub(crate) a: f64,
    pub(crate) alpha: f64,
    pub(crate) beta: f64,
    pub(crate) lkind: u32,
    pub(crate) rkind: u32,
    pub(crate) lval: f64,
    pub(crate) rval: f64,
}

// SAFETY: as for `FhnCoeffs`: 64 bytes without padding, any bits valid, zero valid.
unsafe impl gpu_runtime::DeviceScalar for CnCoeffs {}

impl CnCoeffs {
    /// The kernels' coefficients of the run with constants `k` and boundaries `left`, `right`.
    pub(crate) fn new(k: &CnConstants, left: Boundary, right: Boundary) -> Self {
        let (lkind, lval) = boundary_kind(left);
        let (rkind, rval) = boundary_kind(right);
        CnCoeffs {
            h: k.h,
            inv_dx2: k.inv_dx2,
            a: k.a,
            alpha: k.alpha,
            beta: k.beta,
            lkind,
            rkind,
            lval,
            rval,
        }
    }
}

/// A source term `(x, t) -> (s_v, s_w)` added to the right-hand sides (for manufactured
/// solutions).
pub(crate) type Source<'a> = &'a dyn Fn(f64, f64) -> (f64, f64);

/// The step-independent numbers of a Crank–Nicolson step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CnConstants {
    /// `dt / 2`.
    pub(crate) h: f64,
    pub(crate) dx: f64,
    pub(crate) inv_dx2: f64,
    /// The reaction's threshold `a`.
    pub(crate) a: f64,
    /// `1 + h eps gamma`.
    pub(crate) denom: f64,
    /// `W = alpha w + beta (v + V)`.
    pub(crate) alpha: f64,
    pub(crate) beta: f64,
}

impl CnConstants {
    pub(crate) fn new(p: &FhnParams) -> Self {
        let h = 0.5 * p.dt;
        let dx = p.dx();
        let denom = 1.0 + h * p.eps * p.gamma;
        CnConstants {
            h,
            dx,
            inv_dx2: 1.0 / (dx * dx),
            a: p.a,
            denom,
            alpha: (1.0 - h * p.eps * p.gamma) / denom,
            beta: h * p.eps / denom,
        }
    }

    /// The source parts `(s_v, s_w)` of node `x` for the step from `t0` to `t1`.
    pub(crate) fn source_terms(&self, src: Source<'_>, x: f64, t0: f64, t1: f64) -> (f64, f64) {
        let (a0, b0) = src(x, t0);
        let (a1, b1) = src(x, t1);
        (self.h * (a0 + a1), self.h * (b0 + b1) / self.denom)
    }
}

/// Where one Crank–Nicolson step's work happens (host arrays or device buffers); the Newton
/// loop ([`cn_step`]) and the run loop ([`run_steps`]) are shared.
pub(crate) trait CnBackend {
    /// Computes the explicit half of the step from `state` at `t0` to `t1` and sets the
    /// Newton start.
    fn begin(&mut self, state: &FhnState, t0: f64, t1: f64) -> Result<(), StepError>;
    /// One Newton iteration; returns the max-norm of the update (non-finite when an update
    /// was not finite).
    fn newton_iteration(&mut self) -> Result<f64, StepError>;
    /// Ends a converged step: `V` becomes `v`, and `w` is advanced.
    fn finish(&mut self, state: &mut FhnState) -> Result<(), StepError>;
}

/// Why a step failed.
pub(crate) enum StepError {
    Newton { iterations: u32, update: f64 },
    Linear(TridiagError),
    Gpu(GpuError),
}

impl From<GpuError> for StepError {
    fn from(e: GpuError) -> Self {
        StepError::Gpu(e)
    }
}
