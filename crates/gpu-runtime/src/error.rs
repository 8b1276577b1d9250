//! The error type of every GPU operation.

use cudarc::driver::{DriverError, sys::CUresult};

/// Why a GPU operation could not run.
///
/// Every GPU path in warpath returns this (or wraps it in its crate's error), never panics.
/// It is `Clone` so that the result of device detection can be cached and handed out again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    /// `libcuda.so` could not be loaded: no NVIDIA driver on this machine.
    #[error(
        "no CUDA driver: libcuda.so was not found (install the NVIDIA driver, version 580 or newer)"
    )]
    NoDriver,
    /// The driver is present but too old for the CUDA 13.0 PTX that warpath ships.
    #[error(
        "the NVIDIA driver supports CUDA {found_major}.{found_minor}, warpath's kernels need CUDA 13.0 (driver 580 or newer)"
    )]
    DriverTooOld {
        /// Major CUDA version the driver supports.
        found_major: i32,
        /// Minor CUDA version the driver supports.
        found_minor: i32,
    },
    /// The driver loaded but reports no usable device.
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    /// `WARPATH_BACKEND=cpu` turned the GPU off.
    #[error("the CUDA backend is disabled by WARPATH_BACKEND=cpu")]
    Disabled,
    /// `WARPATH_BACKEND` holds something other than `cpu`, `cuda` or `auto`.
    #[error("WARPATH_BACKEND must be `cpu`, `cuda` or `auto`, not `{0}`")]
    BadBackendVariable(String),
    /// Creating the CUDA context failed.
    #[error("could not create a CUDA context: {0}")]
    ContextFailed(String),
    /// An allocation did not fit in device memory.
    #[error(
        "GPU out of memory: asked for {requested} bytes, {free} bytes free of {total} on the device"
    )]
    OutOfMemory {
        /// Bytes asked for.
        requested: u64,
        /// Bytes free on the device when the allocation failed.
        free: u64,
        /// Total device memory in bytes.
        total: u64,
    },
    /// A PTX module could not be loaded (usually a driver older than the PTX ISA).
    #[error("could not load the PTX module `{module}`: {reason}")]
    ModuleLoad {
        /// Module name (the `.cu` file's stem).
        module: &'static str,
        /// The driver's error.
        reason: String,
    },
    /// The kernel is not in the module: the PTX is stale or the name is wrong.
    #[error("kernel `{kernel}` not found in module `{module}` (run `cargo xtask kernels`)")]
    KernelNotFound {
        /// Module name.
        module: &'static str,
        /// Kernel name asked for.
        kernel: String,
    },
    /// A kernel launch, or the work it queued, failed.
    #[error("kernel launch failed: {0}")]
    LaunchFailed(String),
    /// A generated launcher for a family of kernels (`<family>_f32`, `<family>_f64`, ...) was
    /// called with element types that no entry of the family takes (a programming error in the
    /// host code; the launcher's docs list the entries).
    #[error("no `{family}_*` kernel takes the element types {types}")]
    NoKernelForTypes {
        /// The family: the entries' common name.
        family: &'static str,
        /// The element types asked for, e.g. `(i8, u64)`.
        types: &'static str,
    },
    /// The input cannot be handled by the GPU path (for example a count above a kernel's limit).
    #[error("input too large for the GPU path: {0}")]
    TooLarge(String),
    /// Two device or host ranges of a copy have different lengths (a programming error).
    #[error("copy between ranges of different lengths: {left} and {right} elements")]
    LengthMismatch {
        /// Elements on the side read.
        left: usize,
        /// Elements on the side written.
        right: usize,
    },
    /// Any other driver call that failed.
    #[error("CUDA driver call failed: {0}")]
    Driver(String),
}

impl GpuError {
    /// Converts a failed launch (or a failed synchronisation after launches) into
    /// [`GpuError::LaunchFailed`].
    pub(crate) fn launch(e: DriverError) -> Self {
        GpuError::LaunchFailed(describe(e))
    }
}

impl From<DriverError> for GpuError {
    fn from(e: DriverError) -> Self {
        GpuError::Driver(describe(e))
    }
}

/// The driver's name for an error code, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`, followed under the
/// simulated driver by its explanation (which kernel faulted where, which rule a call broke).
pub(crate) fn describe(e: DriverError) -> String {
    match crate::simulator::simulator_diagnostic() {
        Some(why) => format!("{:?} (simulated driver: {why})", e.0),
        None => format!("{:?}", e.0),
    }
}

/// Whether a driver error is an out-of-memory condition.
pub(crate) fn is_oom(e: &DriverError) -> bool {
    e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY
}
