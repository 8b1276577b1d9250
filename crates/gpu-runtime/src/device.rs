//! Device detection and the [`Gpu`] handle: context, stream, modules, memory, launches, timing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, sys};
use cudarc::nvrtc::Ptx;

use crate::buffer::{bytes_of, bytes_of_mut};
use crate::error::{describe, is_oom};
use crate::simulator::{driver_is_simulated, simulation_allowed};
use crate::{
    DeviceBuffer, DeviceScalar, DeviceSink, DeviceSource, GpuError, LaunchConfig, PtxModule,
};

/// The memory behind a non-empty view (only empty buffers have none).
fn present<V>(raw: &Option<V>) -> Result<&V, GpuError> {
    raw.as_ref()
        .ok_or_else(|| GpuError::Driver("a non-empty device range without memory".into()))
}

fn present_mut<V>(raw: &mut Option<V>) -> Result<&mut V, GpuError> {
    raw.as_mut()
        .ok_or_else(|| GpuError::Driver("a non-empty device range without memory".into()))
}

fn check_lengths(a: usize, b: usize) -> Result<(), GpuError> {
    if a != b {
        return Err(GpuError::LengthMismatch { left: a, right: b });
    }
    Ok(())
}

/// What the driver says about the device, as printed by `warpath info`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeviceInfo {
    /// Device ordinal (0 unless `WARPATH_DEVICE` picks another).
    pub ordinal: usize,
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability `(major, minor)`, e.g. `(9, 0)` for Hopper.
    pub compute_capability: (i32, i32),
    /// Number of streaming multiprocessors.
    pub multiprocessors: u32,
    /// Total device memory in bytes.
    pub total_memory: u64,
    /// Free device memory in bytes when the device was opened.
    pub free_memory: u64,
    /// CUDA version the driver supports, e.g. `13000` for 13.0.
    pub driver_version: i32,
    /// Whether this is warpath's simulated CUDA driver (`cargo xtask sim`), which runs the
    /// kernels on the CPU, rather than a GPU. Its results say nothing about speed.
    pub simulated: bool,
}

/// An open CUDA device: one context, one stream, and the PTX modules loaded so far.
///
/// Obtain it with [`gpu()`] (detected once per process) or, through the [`Exec`](crate::Exec)
/// policy, from [`Target::Cuda`](crate::Target). All work is queued on the device's one stream; functions
/// that return host data synchronise, functions that return device buffers do not.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
    functions: Mutex<HashMap<(&'static str, &'static str), CudaFunction>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).finish()
    }
}

static GPU: OnceLock<Result<Gpu, GpuError>> = OnceLock::new();

/// The process's GPU, detected on first use and cached (also when detection failed).
///
/// Detection never panics: it first checks that `libcuda.so` can be loaded
/// (`cudarc::driver::sys::is_culib_present`), then that the driver supports CUDA 13.0, then
/// opens device `WARPATH_DEVICE` (default 0).
///
/// # Errors
/// [`GpuError::NoDriver`], [`GpuError::DriverTooOld`], [`GpuError::NoDevice`] or
/// [`GpuError::ContextFailed`] when there is no usable GPU.
///
/// # Examples
/// ```
/// match gpu_runtime::gpu() {
///     Ok(gpu) => println!("using {}", gpu.info().name),
///     Err(e) => println!("no CUDA device: {e}"),
/// }
/// ```
pub fn gpu() -> Result<&'static Gpu, GpuError> {
    GPU.get_or_init(detect).as_ref().map_err(Clone::clone)
}

fn detect() -> Result<Gpu, GpuError> {
    // SAFETY: only tries to dlopen the driver library under its usual names.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError::NoDriver);
    }
    let simulated = driver_is_simulated();
    if simulated && !simulation_allowed() {
        return Err(GpuError::NoDevice(
            "the libcuda.so on the library path is warpath's simulated CUDA driver \
             (target/cuda-sim), which runs kernels on the CPU; set WARPATH_SIM=1 to use it, \
             or remove it from LD_LIBRARY_PATH to use a GPU"
                .into(),
        ));
    }
    let mut version = 0i32;
    // SAFETY: the library is present; cuDriverGetVersion exists in every driver and only
    // writes the int we pass.
    let rc = unsafe { sys::cuDriverGetVersion(&mut version) };
    if rc != sys::CUresult::CUDA_SUCCESS {
        return Err(GpuError::NoDevice(format!(
            "cuDriverGetVersion failed: {rc:?}"
        )));
    }
    if version < 13000 {
        return Err(GpuError::DriverTooOld {
            found_major: version / 1000,
            found_minor: (version % 1000) / 10,
        });
    }
    let count = CudaContext::device_count()
        .map_err(|e| GpuError::NoDevice(format!("the driver found no device ({})", describe(e))))?;
    let ordinal = match std::env::var("WARPATH_DEVICE") {
        Ok(s) => s.trim().parse::<usize>().map_err(|_| {
            GpuError::NoDevice(format!("WARPATH_DEVICE must be a device number, not `{s}`"))
        })?,
        Err(_) => 0,
    };
    if count <= 0 {
        return Err(GpuError::NoDevice("the driver reports 0 devices".into()));
    }
    if ordinal >= count as usize {
        return Err(GpuError::NoDevice(format!(
            "WARPATH_DEVICE={ordinal} but the driver reports {count} device(s)"
        )));
    }
    let ctx = CudaContext::new(ordinal).map_err(|e| GpuError::ContextFailed(describe(e)))?;
    let stream = ctx.default_stream();
    let name = ctx.name()?;
    let compute_capability = ctx.compute_capability()?;
    let multiprocessors =
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    let (free, total) = ctx.mem_get_info()?;
    Ok(Gpu {
        ctx,
        stream,
        info: DeviceInfo {
            ordinal,
            name,
            compute_capability,
            multiprocessors,
            total_memory: total as u64,
            free_memory: free as u64,
            driver_version: version,
            simulated,
        },
        modules: Mutex::new(HashMap::new()),
        functions: Mutex::new(HashMap::new()),
    })
}

impl Gpu {
    /// What the driver reported when the device was opened.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The CUDA context.
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream all warpath work is queued on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Current `(free, total)` device memory in bytes.
    ///
    /// # Errors
    /// A failed driver call.
    pub fn memory(&self) -> Result<(u64, u64), GpuError> {
        let (free, total) = self.ctx.mem_get_info()?;
        Ok((free as u64, total as u64))
    }

    /// Looks up `kernel` in `module`, loading the module on first use. Both are cached.
    ///
    /// # Errors
    /// [`GpuError::ModuleLoad`] when the driver rejects the PTX, [`GpuError::KernelNotFound`]
    /// when the module has no such kernel.
    pub(crate) fn function(
        &self,
        module: &PtxModule,
        kernel: &'static str,
    ) -> Result<CudaFunction, GpuError> {
        let key = (module.name, kernel);
        if let Some(f) = lock(&self.functions).get(&key) {
            return Ok(f.clone());
        }
        let loaded = {
            let mut modules = lock(&self.modules);
            match modules.get(module.name) {
                Some(m) => m.clone(),
                None => {
                    let m = self
                        .ctx
                        .load_module(Ptx::from_src(module.ptx))
                        .map_err(|e| GpuError::ModuleLoad {
                            module: module.name,
                            reason: describe(e),
                        })?;
                    modules.insert(module.name, m.clone());
                    m
                }
            }
        };
        // cudarc's load_function does not make the context current, and the driver refuses a
        // thread without one (CUDA_ERROR_INVALID_CONTEXT): a thread whose first GPU call finds
        // the module already loaded by another thread would fail (found by the simulated driver).
        self.ctx.bind_to_thread()?;
        // Only CUDA_ERROR_NOT_FOUND means the kernel is missing; anything else (a sticky error
        // of the context, say) is reported as what it is.
        let f = loaded.load_function(kernel).map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_NOT_FOUND {
                GpuError::KernelNotFound {
                    module: module.name,
                    kernel: kernel.to_owned(),
                }
            } else {
                GpuError::from(e)
            }
        })?;
        lock(&self.functions).insert(key, f.clone());
        Ok(f)
    }

    fn oom(&self, bytes: u64) -> GpuError {
        let (free, total) = self.memory().unwrap_or((0, self.info.total_memory));
        GpuError::OutOfMemory {
            requested: bytes,
            free,
            total,
        }
    }

    fn map_alloc(&self, e: cudarc::driver::DriverError, bytes: u64) -> GpuError {
        if is_oom(&e) {
            self.oom(bytes)
        } else {
            GpuError::from(e)
        }
    }

    /// Fails with [`GpuError::OutOfMemory`] (with sizes) unless `bytes` more fit on the device
    /// now. Call it before a multi-buffer operation so that it fails before doing any work.
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`].
    pub fn ensure_fits(&self, bytes: u64) -> Result<(), GpuError> {
        let (free, total) = self.memory()?;
        if bytes > free {
            return Err(GpuError::OutOfMemory {
                requested: bytes,
                free,
                total,
            });
        }
        Ok(())
    }

    /// Allocates `n` zeroed elements on the device (`n` may be 0: an empty buffer).
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] with the sizes when it does not fit.
    pub fn alloc_zeros<T: DeviceScalar>(&self, n: usize) -> Result<DeviceBuffer<T>, GpuError> {
        let bytes = n.saturating_mul(size_of::<T>());
        if bytes == 0 {
            return self.empty();
        }
        let raw = self
            .stream
            .alloc_zeros::<u8>(bytes)
            .map_err(|e| self.map_alloc(e, bytes as u64))?;
        Ok(DeviceBuffer::from_raw(Some(raw), n))
    }

    /// Allocates `n` elements on the device without initialising them (`n` may be 0).
    ///
    /// # Safety
    /// The contents are garbage until written: every element must be written by a kernel or a
    /// copy before it is read.
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] with the sizes when it does not fit.
    pub unsafe fn alloc_uninit<T: DeviceScalar>(
        &self,
        n: usize,
    ) -> Result<DeviceBuffer<T>, GpuError> {
        let bytes = n.saturating_mul(size_of::<T>());
        if bytes == 0 {
            return self.empty();
        }
        // SAFETY: forwarded to the caller (see the function's contract).
        let raw = unsafe { self.stream.alloc::<u8>(bytes) }
            .map_err(|e| self.map_alloc(e, bytes as u64))?;
        Ok(DeviceBuffer::from_raw(Some(raw), n))
    }

    /// A buffer of no element, without a zero-byte allocation request (which the driver
    /// refuses). Its address is 0: kernels that take an optional buffer read it as "none".
    ///
    /// # Errors
    /// None today; `Result` for symmetry with the allocations.
    pub fn empty<T: DeviceScalar>(&self) -> Result<DeviceBuffer<T>, GpuError> {
        Ok(DeviceBuffer::from_raw(None, 0))
    }

    /// Copies a host slice to a new device buffer.
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] with the sizes when it does not fit.
    pub fn upload<T: DeviceScalar>(&self, host: &[T]) -> Result<DeviceBuffer<T>, GpuError> {
        if host.is_empty() {
            return self.empty();
        }
        let bytes = bytes_of(host);
        let raw = self
            .stream
            .clone_htod(bytes)
            .map_err(|e| self.map_alloc(e, bytes.len() as u64))?;
        Ok(DeviceBuffer::from_raw(Some(raw), host.len()))
    }

    /// Copies a host slice into existing device memory of the same length (queued after earlier
    /// work; returns when the host slice may be reused).
    ///
    /// # Errors
    /// [`GpuError::LengthMismatch`] when the lengths differ; a failed copy.
    pub fn upload_into<T: DeviceScalar>(
        &self,
        host: &[T],
        dev: &mut impl DeviceSink<T>,
    ) -> Result<(), GpuError> {
        check_lengths(host.len(), dev.len())?;
        if host.is_empty() {
            return Ok(());
        }
        let mut dst = dev.view_mut();
        self.stream
            .memcpy_htod(bytes_of(host), present_mut(&mut dst.raw)?)
            .map_err(GpuError::launch)
    }

    /// Copies device memory (a buffer or a view) back to a new `Vec`, waiting for queued work
    /// first.
    ///
    /// # Errors
    /// A failed copy, which also reports earlier failed launches on the stream.
    pub fn download<T: DeviceScalar>(
        &self,
        dev: &impl DeviceSource<T>,
    ) -> Result<Vec<T>, GpuError> {
        let n = dev.len();
        let mut out: Vec<T> = Vec::with_capacity(n);
        if n > 0 {
            let view = dev.view();
            // SAFETY: the capacity holds n elements; the copy below writes all n * size_of::<T>()
            // bytes before `set_len`, and any bytes form a valid `T` (DeviceScalar's contract).
            unsafe {
                let bytes = std::slice::from_raw_parts_mut(
                    out.as_mut_ptr().cast::<u8>(),
                    n * size_of::<T>(),
                );
                self.stream
                    .memcpy_dtoh(present(&view.raw)?, bytes)
                    .map_err(GpuError::launch)?;
                out.set_len(n);
            }
        }
        Ok(out)
    }

    /// Copies device memory into an existing host slice of the same length, waiting for queued
    /// work first.
    ///
    /// # Errors
    /// [`GpuError::LengthMismatch`] when the lengths differ; a failed copy, which also reports
    /// earlier failed launches on the stream.
    pub fn download_into<T: DeviceScalar>(
        &self,
        dev: &impl DeviceSource<T>,
        host: &mut [T],
    ) -> Result<(), GpuError> {
        check_lengths(host.len(), dev.len())?;
        if host.is_empty() {
            return Ok(());
        }
        let view = dev.view();
        self.stream
            .memcpy_dtoh(present(&view.raw)?, bytes_of_mut(host))
            .map_err(GpuError::launch)
    }

    /// Copies device memory to device memory of the same length, queued on the stream (does not
    /// synchronise).
    ///
    /// # Errors
    /// [`GpuError::LengthMismatch`] when the lengths differ; a failed copy.
    pub fn copy<T: DeviceScalar>(
        &self,
        src: &impl DeviceSource<T>,
        dst: &mut impl DeviceSink<T>,
    ) -> Result<(), GpuError> {
        check_lengths(src.len(), dst.len())?;
        if src.is_empty() {
            return Ok(());
        }
        let from = src.view();
        let mut to = dst.view_mut();
        self.stream
            .memcpy_dtod(present(&from.raw)?, present_mut(&mut to.raw)?)
            .map_err(GpuError::launch)
    }

    /// A new buffer holding a copy of `src`, queued on the stream (does not synchronise).
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] with the sizes; a failed copy.
    pub fn duplicate<T: DeviceScalar>(
        &self,
        src: &impl DeviceSource<T>,
    ) -> Result<DeviceBuffer<T>, GpuError> {
        // SAFETY: the copy below writes every element.
        let mut out = unsafe { self.alloc_uninit::<T>(src.len()) }?;
        self.copy(src, &mut out)?;
        Ok(out)
    }

    /// Sets every byte of `dst` to zero, queued on the stream (does not synchronise).
    ///
    /// # Errors
    /// A failed memset.
    pub fn zero<T: DeviceScalar>(&self, dst: &mut impl DeviceSink<T>) -> Result<(), GpuError> {
        if dst.is_empty() {
            return Ok(());
        }
        let mut to = dst.view_mut();
        self.stream
            .memset_zeros(present_mut(&mut to.raw)?)
            .map_err(GpuError::launch)
    }

    /// Waits for all queued work; reports a failed kernel as [`GpuError::LaunchFailed`].
    ///
    /// # Errors
    /// [`GpuError::LaunchFailed`].
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream.synchronize().map_err(GpuError::launch)
    }

    /// A launch configuration for a grid-stride kernel over `n` elements (`n` may exceed
    /// `u32::MAX`): `block` threads per block and at most enough blocks to fill the device
    /// `blocks_per_sm` times over. The kernel must loop `for (i = start; i < n; i += stride)`
    /// with 64-bit `i` (see `kernels-cuda/common.cuh`).
    pub fn grid_stride(&self, n: u64, block: u32) -> LaunchConfig {
        grid_stride_config(n, block, self.info.multiprocessors, 16)
    }

    /// Starts a timer on the stream; [`GpuTimer::stop`] returns the elapsed device time.
    ///
    /// # Errors
    /// A failed event creation or record.
    pub fn timer(&self) -> Result<GpuTimer, GpuError> {
        // Timing must be enabled explicitly: cudarc's default (`None`) creates events with
        // CU_EVENT_DISABLE_TIMING, and cuEventElapsedTime then fails with
        // CUDA_ERROR_INVALID_HANDLE (found by the simulated driver).
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.ctx.new_event(flags)?;
        let stop = self.ctx.new_event(flags)?;
        start.record(&self.stream)?;
        Ok(GpuTimer {
            start,
            stop,
            stream: self.stream.clone(),
        })
    }
}

/// A grid-stride launch configuration: `ceil(n / block)` blocks, capped at
/// `multiprocessors * blocks_per_sm`, at least one block.
pub fn grid_stride_config(
    n: u64,
    block: u32,
    multiprocessors: u32,
    blocks_per_sm: u32,
) -> LaunchConfig {
    let block = block.clamp(32, 1024);
    let wanted = n.div_ceil(block as u64).max(1);
    let cap = (multiprocessors.max(1) as u64) * (blocks_per_sm.max(1) as u64);
    LaunchConfig {
        grid_dim: (wanted.min(cap) as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Device time between two CUDA events on the stream: the way to time GPU work.
/// `stop` records the end event and waits for it, so the figure includes all work queued
/// between `Gpu::timer()` and `stop()`.
pub struct GpuTimer {
    start: CudaEvent,
    stop: CudaEvent,
    stream: Arc<CudaStream>,
}

impl GpuTimer {
    /// Records the end, waits for it, and returns the elapsed seconds.
    ///
    /// # Errors
    /// [`GpuError::LaunchFailed`] when queued work failed.
    pub fn stop(self) -> Result<f64, GpuError> {
        self.stop.record(&self.stream)?;
        self.stop.synchronize().map_err(GpuError::launch)?;
        let ms = self.start.elapsed_ms(&self.stop)?;
        Ok(ms as f64 / 1e3)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::gpu_for_test;

    static RUNTIME: PtxModule = crate::ptx_module!("runtime");

    #[test]
    fn gpu_timer_measures_device_time() {
        let Some(gpu) = gpu_for_test("gpu_timer_measures_device_time") else {
            return;
        };
        // Regression: the events used to be created with timing disabled, so `stop` failed
        // with CUDA_ERROR_INVALID_HANDLE on every driver.
        let t = gpu.timer().unwrap();
        let buf = gpu.alloc_zeros::<u32>(1000).unwrap();
        drop(buf);
        let seconds = t.stop().unwrap();
        assert!((0.0..60.0).contains(&seconds), "{seconds}");
    }

    #[test]
    fn gpu_kernel_lookup_works_from_a_fresh_thread() {
        let Some(gpu) = gpu_for_test("gpu_kernel_lookup_works_from_a_fresh_thread") else {
            return;
        };
        // Load the module here, then look a kernel of it up first thing on a new thread: the
        // lookup must make the context current there (it used to fail with
        // CUDA_ERROR_INVALID_CONTEXT on a thread that had made no other CUDA call).
        gpu.function(&RUNTIME, "runtime_iota_u32").unwrap();
        std::thread::spawn(move || {
            // The launcher looks axpy_f32 up (module already loaded) on this thread.
            let x = gpu.upload(&[1.0f32, 2.0, 3.0]).unwrap();
            let mut y = gpu.upload(&[1.0f32; 3]).unwrap();
            crate::axpy_device(gpu, 2.0, &x, &mut y).unwrap();
            assert_eq!(gpu.download(&y).unwrap(), [3.0, 5.0, 7.0]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn grid_stride_caps_and_rounds() {
        let c = grid_stride_config(0, 256, 132, 16);
        assert_eq!(c.grid_dim.0, 1);
        let c = grid_stride_config(1000, 256, 132, 16);
        assert_eq!(c.grid_dim.0, 4);
        let c = grid_stride_config(u64::MAX / 2, 256, 132, 16);
        assert_eq!(c.grid_dim.0, 132 * 16);
        assert_eq!(c.block_dim.0, 256);
    }
}
