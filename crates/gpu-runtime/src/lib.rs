#![doc = include_str!("../README.md")]

mod axpy;
mod device;
mod error;
mod exec;
mod module;
pub mod testing;

pub use axpy::{AXPY_GPU_THRESHOLD, AxpyError, axpy, axpy_device, axpy_reference, iota_on_gpu};
pub use device::{DeviceInfo, Gpu, GpuTimer, gpu, grid_stride_config};
pub use error::GpuError;
pub use exec::{Backend, Exec, Target};
pub use module::PtxModule;

/// Re-export of the cudarc driver API, so crates launch kernels with the same version.
pub use cudarc;
/// Re-export of cudarc's launch configuration.
pub use cudarc::driver::LaunchConfig;
