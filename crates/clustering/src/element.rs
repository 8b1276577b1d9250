//! The element types k-means runs on: `f32` and `f64`.

pub(crate) mod sealed {
    use gpu_runtime::{DeviceBuffer, Gpu, GpuError, LaunchConfig};

    /// Seals [`Element`](super::Element), and gives each element type its typed kernel
    /// launchers (`kernels-cuda/clustering.cu`, `<kernel>_f32` / `<kernel>_f64`), so the generic
    /// CUDA backend picks them without naming the type. Implemented in `cuda.rs`; every
    /// method forwards to the generated launcher of the same name, with its safety contract.
    #[allow(clippy::too_many_arguments)]
    pub trait Sealed: gpu_runtime::DeviceScalar {
        /// `kmeans_step_small_T`.
        unsafe fn step_small(
            gpu: &Gpu,
            cfg: LaunchConfig,
            x: &DeviceBuffer<Self>,
            w: &DeviceBuffer<Self>,
            has_w: u32,
            c: &DeviceBuffer<Self>,
            n: u64,
            d: u32,
            k: u32,
            labels: &mut DeviceBuffer<u32>,
            partials: &mut DeviceBuffer<f64>,
        ) -> Result<(), GpuError>;
        /// `kmeans_norms_T`.
        unsafe fn norms(
            gpu: &Gpu,
            cfg: LaunchConfig,
            c: &DeviceBuffer<Self>,
            k: u64,
            d: u32,
            out: &mut DeviceBuffer<Self>,
        ) -> Result<(), GpuError>;
        /// `kmeans_assign_tiled_T`.
        unsafe fn assign_tiled(
            gpu: &Gpu,
            cfg: LaunchConfig,
            x: &DeviceBuffer<Self>,
            c: &DeviceBuffer<Self>,
            cnorm: &DeviceBuffer<Self>,
            n: u64,
            d: u32,
            k: u32,
            labels: &mut DeviceBuffer<u32>,
            stats: &mut DeviceBuffer<f64>,
        ) -> Result<(), GpuError>;
        /// `kmeans_accumulate_T`.
        unsafe fn accumulate(
            gpu: &Gpu,
            cfg: LaunchConfig,
            x: &DeviceBuffer<Self>,
            w: &DeviceBuffer<Self>,
            has_w: u32,
            c: &DeviceBuffer<Self>,
            labels: &DeviceBuffer<u32>,
            n: u64,
            d: u32,
            k: u32,
            stats: &mut DeviceBuffer<f64>,
        ) -> Result<(), GpuError>;
    }
}

/// A floating-point element type k-means accepts: `f32` or `f64` (sealed).
///
/// Distances are computed in the element type (as scikit-learn does); per-cluster sums,
/// weights and the inertia are accumulated in `f64` on every backend.
pub trait Element:
    Copy
    + Send
    + Sync
    + std::fmt::Debug
    + std::fmt::Display
    + PartialOrd
    + Default
    + 'static
    + ndarray::LinalgScalar
    + gpu_runtime::DeviceScalar
    + sealed::Sealed
{
    /// `"f32"` or `"f64"`: the type's name (and the suffix of its CUDA kernels).
    const NAME: &'static str;
    /// The largest finite value (the initial "best distance").
    const MAX: Self;
    /// Widens to `f64` (exact).
    fn to_f64(self) -> f64;
    /// Rounds an `f64` to this type.
    fn from_f64(v: f64) -> Self;
    /// Whether the value is neither NaN nor infinite.
    fn is_finite(self) -> bool;
    /// `self * a + b` with one rounding (use only where the CPU has FMA instructions).
    fn mul_add(self, a: Self, b: Self) -> Self;
}

impl Element for f32 {
    const NAME: &'static str = "f32";
    const MAX: Self = f32::MAX;
    #[inline]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        f32::mul_add(self, a, b)
    }
}

impl Element for f64 {
    const NAME: &'static str = "f64";
    const MAX: Self = f64::MAX;
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        f64::mul_add(self, a, b)
    }
}
