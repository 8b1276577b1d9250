#![doc = include_str!("../README.md")]

// The generated launchers name the crate `::gpu_runtime`, also when included here.
extern crate self as gpu_runtime;

mod axpy;
mod blas;
mod buffer;
pub mod cpu;
mod device;
mod error;
mod exec;
#[doc(hidden)]
pub mod launch;
mod launch_config;
mod module;
mod simulator;
pub mod testing;

pub use axpy::{
    AXPY_GPU_THRESHOLD, AxpyError, axpy, axpy_device, axpy_reference, fill, iota, iota_on_gpu,
};
pub use blas::{Blas, GemmScalar};
pub use buffer::{DeviceBuffer, DeviceScalar, DeviceSink, DeviceSource, DeviceView, DeviceViewMut};
pub use device::{DeviceInfo, Gpu, GpuTimer, gpu, grid_stride_config};
pub use error::GpuError;
pub use exec::{Backend, Exec, Target};
pub use launch_config::LaunchConfig;
pub use module::PtxModule;

/// Host memory available to new allocations now (`MemAvailable` from `/proc/meminfo`), in
/// bytes; `None` where it cannot be read (not Linux). Algorithms use it to refuse, with a typed
/// error, inputs whose working arrays would not fit, instead of aborting on a failed allocation.
///
/// # Examples
/// ```
/// if let Some(bytes) = gpu_runtime::host_available_memory() {
///     assert!(bytes > 0);
/// }
/// ```
pub fn host_available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
