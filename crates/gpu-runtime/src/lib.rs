//! # gpu-runtime
//!
//! The layer between warpath's algorithms and the CUDA driver:
//!
//! - **Detection** ([`gpu()`]): once per process, lazily, without panicking. The driver
//!   library is found at run time (cudarc's dynamic loading), so warpath builds and runs on
//!   machines with no CUDA at all and uses a GPU when one is there.
//! - **Where to run** ([`Exec`] → [`Target`]): `Auto` picks the GPU only when present and the
//!   input is above the algorithm's measured threshold; `WARPATH_BACKEND=cpu|cuda|auto`
//!   overrides `Auto`.
//! - **Kernels** ([`PtxModule`], [`ptx_module!`]): PTX compiled from `kernels-cuda/*.cu` by
//!   `cargo xtask kernels`, embedded, loaded on first use and cached.
//! - **Memory and launches** ([`Gpu`]): uploads, downloads, zeroed allocations with
//!   out-of-memory errors that give sizes, grid-stride launch configurations for 64-bit
//!   element counts, and event timing ([`GpuTimer`]).
//! - **Tests** ([`testing::gpu_for_test`]): GPU tests print `skipped: no CUDA device` and pass
//!   without a GPU, and fail under `WARPATH_REQUIRE_GPU=1`.
//!
//! [`axpy`] is the end-to-end example of the pattern every warpath algorithm follows.
//!
//! ```
//! use gpu_runtime::{axpy, Exec};
//! let x = vec![1.0f32; 1000];
//! let mut y = vec![2.0f32; 1000];
//! let backend = axpy(3.0, &x, &mut y, Exec::Auto)?; // the GPU only if worth it
//! assert!(y.iter().all(|&v| v == 5.0));
//! println!("ran on {backend}");
//! # Ok::<(), gpu_runtime::AxpyError>(())
//! ```

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
