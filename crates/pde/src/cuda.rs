//! Host side of the pde crate's CUDA kernels (`kernels-cuda/pde.cu`).

use gpu_runtime::cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use gpu_runtime::{Gpu, GpuError, PtxModule};

use crate::explicit::Coeffs;
use crate::params::Boundary;
use crate::tridiag::{Real, TridiagSolver};

static PDE: PtxModule = gpu_runtime::ptx_module!("pde");

/// Largest grid the fused shared-memory kernel holds (3 arrays of `n` doubles in 48 KiB).
pub const FUSED_MAX_N: usize = 2048;

/// Largest system size the shared-memory batch PCR kernel solves (one thread per row).
pub const BATCH_PCR_MAX_M: usize = 1024;

/// Steps per launch of the fused kernel (keeps one launch well under a second).
const FUSED_STEPS_PER_LAUNCH: u64 = 1 << 16;

fn kind(b: Boundary) -> (u32, f64) {
    match b {
        Boundary::NoFlux => (0, 0.0),
        Boundary::Dirichlet(v) => (1, v),
    }
}

/// Uploads, runs `steps` explicit steps of `batch` axons of `n` nodes, downloads.
pub(crate) fn explicit_run(
    gpu: &Gpu,
    k: &Coeffs,
    v: &mut [f64],
    w: &mut [f64],
    n: usize,
    batch: usize,
    steps: u64,
) -> Result<(), GpuError> {
    if steps == 0 || batch == 0 || n == 0 {
        return Ok(());
    }
    let bytes = (v.len() as u64) * 8;
    gpu.ensure_fits(if n <= FUSED_MAX_N {
        2 * bytes
    } else {
        4 * bytes
    })?;
    let mut dv = gpu.upload(v)?;
    let mut dw = gpu.upload(w)?;
    explicit_on_device(gpu, k, &mut dv, &mut dw, n, batch, steps)?;
    gpu.download_into(&dv, v)?;
    gpu.download_into(&dw, w)?;
    Ok(())
}

/// Runs `steps` explicit steps on device buffers (no synchronisation). The result is in
/// `dv`, `dw` (their handles may be swapped with scratch buffers).
pub(crate) fn explicit_on_device(
    gpu: &Gpu,
    k: &Coeffs,
    dv: &mut CudaSlice<f64>,
    dw: &mut CudaSlice<f64>,
    n: usize,
    batch: usize,
    steps: u64,
) -> Result<(), GpuError> {
    let (lk, lv) = kind(k.left);
    let (rk, rv) = kind(k.right);
    let n64 = n as u64;
    let total = n64 * batch as u64;
    if n <= FUSED_MAX_N {
        let f = gpu.function(&PDE, "fhn_fused_f64")?;
        let threads = (n.div_ceil(32) * 32).clamp(32, 1024) as u32;
        let cfg = LaunchConfig {
            grid_dim: (batch.min(1 << 20) as u32, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: (3 * n * 8) as u32,
        };
        let batch64 = batch as u64;
        let mut left = steps;
        while left > 0 {
            let s = left.min(FUSED_STEPS_PER_LAUNCH) as u32;
            // SAFETY: fhn_fused_f64(double* v, double* w, u64 n, u64 batch, u32 steps, 5 doubles,
            // u32, double, u32, double) reads and writes v, w [0, batch * n), both hold that
            // many doubles; the dynamic shared memory is the 3 * n doubles the kernel uses.
            unsafe {
                gpu.stream()
                    .launch_builder(&f)
                    .arg(&mut *dv)
                    .arg(&mut *dw)
                    .arg(&n64)
                    .arg(&batch64)
                    .arg(&s)
                    .arg(&k.r)
                    .arg(&k.dt)
                    .arg(&k.a)
                    .arg(&k.dte)
                    .arg(&k.gamma)
                    .arg(&lk)
                    .arg(&lv)
                    .arg(&rk)
                    .arg(&rv)
                    .launch(cfg)
                    .map_err(GpuError::launch)?;
            }
            left -= s as u64;
        }
    } else {
        let f = gpu.function(&PDE, "fhn_step_f64")?;
        // SAFETY: both buffers are written by the first step before they are read.
        let mut sv = unsafe { gpu.alloc_uninit::<f64>(total as usize)? };
        // SAFETY: as above.
        let mut sw = unsafe { gpu.alloc_uninit::<f64>(total as usize)? };
        let cfg = gpu.grid_stride(total, 256);
        for _ in 0..steps {
            // SAFETY: fhn_step_f64 reads v, w and writes vn, wn over [0, total); all four
            // buffers hold total doubles and the inputs and outputs are distinct buffers.
            unsafe {
                gpu.stream()
                    .launch_builder(&f)
                    .arg(&*dv)
                    .arg(&*dw)
                    .arg(&mut sv)
                    .arg(&mut sw)
                    .arg(&n64)
                    .arg(&total)
                    .arg(&k.r)
                    .arg(&k.dt)
                    .arg(&k.a)
                    .arg(&k.dte)
                    .arg(&k.gamma)
                    .arg(&lk)
                    .arg(&lv)
                    .arg(&rk)
                    .arg(&rv)
                    .launch(cfg)
                    .map_err(GpuError::launch)?;
            }
            std::mem::swap(dv, &mut sv);
            std::mem::swap(dw, &mut sw);
        }
    }
    Ok(())
}

/// Device time of the explicit scheme, for the CPU-versus-GPU experiment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuExplicitTiming {
    /// Seconds for upload + all steps + download (wall clock).
    pub with_transfers: f64,
    /// Device seconds for the steps alone (CUDA events).
    pub kernels_only: f64,
}

/// Times `steps` explicit steps of `batch` axons on the GPU, with and without transfers; the
/// state is advanced in place. The stability limit is not checked (this is a benchmark hook).
///
/// # Complexity
/// `O(batch * n * steps)` work on the device, two transfers of `batch * n` values each way.
///
/// # Errors
/// [`crate::PdeError::LengthMismatch`] unless `v.len() == w.len() == batch * p.n`;
/// [`crate::PdeError::InvalidParameter`]; [`crate::PdeError::Gpu`] when the GPU fails.
///
/// # Examples
/// ```
/// use pde::{FhnParams, FhnState, explicit_gpu_timing};
/// let Ok(gpu) = gpu_runtime::gpu() else { return };
/// let p = FhnParams::default();
/// let mut s = FhnState::rest(p.n);
/// let t = explicit_gpu_timing(gpu, &p, &mut s.v, &mut s.w, 1, 10_000).unwrap();
/// println!("10^4 steps of N = 401: {:.3} ms of kernels", t.kernels_only * 1e3);
/// ```
pub fn explicit_gpu_timing(
    gpu: &Gpu,
    p: &crate::FhnParams,
    v: &mut [f64],
    w: &mut [f64],
    batch: usize,
    steps: u64,
) -> Result<GpuExplicitTiming, crate::PdeError> {
    p.validate()?;
    let n = p.n;
    for len in [v.len(), w.len()] {
        if Some(len) != n.checked_mul(batch) {
            return Err(crate::PdeError::LengthMismatch {
                expected: n.saturating_mul(batch),
                got: len,
            });
        }
    }
    let k = Coeffs::new(p, p.dx());
    let t0 = std::time::Instant::now();
    let mut dv = gpu.upload(v)?;
    let mut dw = gpu.upload(w)?;
    let timer = gpu.timer()?;
    explicit_on_device(gpu, &k, &mut dv, &mut dw, n, batch, steps)?;
    let kernels_only = timer.stop()?;
    gpu.download_into(&dv, v)?;
    gpu.download_into(&dw, w)?;
    Ok(GpuExplicitTiming {
        with_transfers: t0.elapsed().as_secs_f64(),
        kernels_only,
    })
}

fn name<T: Real>(base: &str) -> String {
    format!("{base}_{}", T::SUFFIX)
}

/// One tridiagonal system on the GPU: the batch kernels (one block) for n <= 1024, else the
/// PCR–Thomas hybrid.
pub(crate) fn tridiag_single<T: Real>(
    gpu: &Gpu,
    a: &[T],
    b: &[T],
    c: &[T],
    d: &[T],
    solver: TridiagSolver,
) -> Result<Vec<T>, GpuError> {
    let n = b.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    if n <= BATCH_PCR_MAX_M {
        let mut x = vec![T::ZERO; n];
        let solver = match solver {
            TridiagSolver::Thomas => TridiagSolver::Pcr, // one thread would be idle-heavy
            s => s,
        };
        tridiag_strided_batch(gpu, a, b, c, d, &mut x, n, n, 1, solver)?;
        return Ok(x);
    }
    let sz = size_of::<T>() as u64;
    gpu.ensure_fits(9 * n as u64 * sz)?;
    let mut cur = [
        gpu.upload(a)?,
        gpu.upload(b)?,
        gpu.upload(c)?,
        gpu.upload(d)?,
    ];
    let mut nxt = [
        gpu.alloc_zeros::<T>(n)?,
        gpu.alloc_zeros::<T>(n)?,
        gpu.alloc_zeros::<T>(n)?,
        gpu.alloc_zeros::<T>(n)?,
    ];
    let n64 = n as u64;
    // Number of interleaved subsystems left for Thomas: a power of two, about n / 32 rows
    // each, at most 2^16 of them.
    let target = (n / 32).clamp(1, 1 << 16);
    let subsystems = 1u64 << (usize::BITS - 1 - target.leading_zeros());
    let level = gpu.function(&PDE, &name::<T>("tridiag_pcr_level"))?;
    let cfg = gpu.grid_stride(n64, 256);
    let mut s = 1u64;
    while s < subsystems {
        let [ai, bi, ci, di] = &cur;
        let [ao, bo, co, dout] = &mut nxt;
        // SAFETY: tridiag_pcr_level reads four input arrays and writes four distinct output
        // arrays over [0, n); all eight hold n elements.
        unsafe {
            gpu.stream()
                .launch_builder(&level)
                .arg(ai)
                .arg(bi)
                .arg(ci)
                .arg(di)
                .arg(ao)
                .arg(bo)
                .arg(co)
                .arg(dout)
                .arg(&n64)
                .arg(&s)
                .launch(cfg)
                .map_err(GpuError::launch)?;
        }
        std::mem::swap(&mut cur, &mut nxt);
        s *= 2;
    }
    let thomas = gpu.function(&PDE, &name::<T>("tridiag_thomas_strided"))?;
    let [ai, bi, ci, di] = &cur;
    let [x, cp, _, _] = &mut nxt;
    // SAFETY: tridiag_thomas_strided reads a, b, c, d [0, n) and writes x, cp [0, n); x and
    // cp are distinct from the inputs and hold n elements; thread j < subsystems < n touches
    // rows j, j + S, ... < n only.
    unsafe {
        gpu.stream()
            .launch_builder(&thomas)
            .arg(ai)
            .arg(bi)
            .arg(ci)
            .arg(di)
            .arg(&mut *x)
            .arg(cp)
            .arg(&n64)
            .arg(&subsystems)
            .launch(gpu.grid_stride(subsystems, 128))
            .map_err(GpuError::launch)?;
    }
    gpu.download(&*x)
}

/// A strided batch on the GPU (layout already validated by the caller): for `m <= 1024`,
/// shared-memory PCR (`Pcr`) or the CR–PCR hybrid (`CyclicReduction`), one block per system;
/// otherwise, and for `Thomas`, one thread per system.
#[allow(clippy::too_many_arguments)]
pub(crate) fn tridiag_strided_batch<T: Real>(
    gpu: &Gpu,
    a: &[T],
    b: &[T],
    c: &[T],
    d: &[T],
    x: &mut [T],
    m: usize,
    stride: usize,
    batch: usize,
    solver: TridiagSolver,
) -> Result<(), GpuError> {
    if m == 0 || batch == 0 {
        return Ok(());
    }
    let sz = size_of::<T>() as u64;
    gpu.ensure_fits(6 * b.len() as u64 * sz)?;
    let da = gpu.upload(a)?;
    let db = gpu.upload(b)?;
    let dc = gpu.upload(c)?;
    let dd = gpu.upload(d)?;
    let mut dx = gpu.upload(&*x)?; // keeps the elements between systems
    let (m64, s64, b64) = (m as u64, stride as u64, batch as u64);
    if m <= BATCH_PCR_MAX_M && solver == TridiagSolver::CyclicReduction {
        let f = gpu.function(&PDE, &name::<T>("tridiag_batch_cr_pcr"))?;
        let threads = (m.next_power_of_two() / 2).clamp(32, 512) as u32;
        let pcr_rows = (threads as u64).min(64);
        let cfg = LaunchConfig {
            grid_dim: (batch.min(1 << 20) as u32, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: (5 * m) as u32 * sz as u32,
        };
        // SAFETY: tridiag_batch_cr_pcr reads rows [k*stride, k*stride + m) of a, b, c, d and
        // writes those of x for k < batch (the caller checked stride*(batch-1)+m <= len);
        // pcr_rows <= blockDim as the kernel requires; the shared memory is its 5 m elements.
        unsafe {
            gpu.stream()
                .launch_builder(&f)
                .arg(&da)
                .arg(&db)
                .arg(&dc)
                .arg(&dd)
                .arg(&mut dx)
                .arg(&m64)
                .arg(&s64)
                .arg(&b64)
                .arg(&pcr_rows)
                .launch(cfg)
                .map_err(GpuError::launch)?;
        }
    } else if m <= BATCH_PCR_MAX_M && solver == TridiagSolver::Pcr {
        let f = gpu.function(&PDE, &name::<T>("tridiag_batch_pcr"))?;
        let threads = m.next_power_of_two().clamp(32, 1024) as u32;
        let cfg = LaunchConfig {
            grid_dim: (batch.min(1 << 20) as u32, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: (4 * m) as u32 * sz as u32,
        };
        // SAFETY: tridiag_batch_pcr reads rows [k*stride, k*stride + m) of a, b, c, d and
        // writes those of x for k < batch; the caller checked stride*(batch-1)+m <= len;
        // blockDim >= m and the shared memory is the 4 m elements the kernel uses.
        unsafe {
            gpu.stream()
                .launch_builder(&f)
                .arg(&da)
                .arg(&db)
                .arg(&dc)
                .arg(&dd)
                .arg(&mut dx)
                .arg(&m64)
                .arg(&s64)
                .arg(&b64)
                .launch(cfg)
                .map_err(GpuError::launch)?;
        }
    } else {
        let f = gpu.function(&PDE, &name::<T>("tridiag_batch_thomas"))?;
        let mut cp = gpu.alloc_zeros::<T>(b.len())?;
        // SAFETY: as above, one thread per system; cp has the arrays' length and layout.
        unsafe {
            gpu.stream()
                .launch_builder(&f)
                .arg(&da)
                .arg(&db)
                .arg(&dc)
                .arg(&dd)
                .arg(&mut dx)
                .arg(&mut cp)
                .arg(&m64)
                .arg(&s64)
                .arg(&b64)
                .launch(gpu.grid_stride(b64, 128))
                .map_err(GpuError::launch)?;
        }
    }
    gpu.download_into(&dx, x)
}
