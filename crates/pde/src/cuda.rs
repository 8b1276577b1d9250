//! Host side of the pde crate's CUDA kernels (`kernels-cuda/pde.cu`): the explicit scheme,
//! the device-resident Crank–Nicolson run, and the tridiagonal solvers. Every launch goes
//! through the generated typed launchers; this file imports only the shared types
//! (`kernel_types`, `params`, `error`).

use gpu_runtime::{DeviceBuffer, Gpu, GpuError, LaunchConfig};

use crate::kernel_types::{
    CnBackend, CnCoeffs, CnConstants, Coeffs, FhnCoeffs, Real, Source, StepError, TridiagSolver,
};
use crate::params::{FhnParams, FhnState};

/// The typed launchers of `kernels-cuda/pde.cu` (they take the coefficient sets
/// `super::FhnCoeffs` and `super::CnCoeffs`, imported above).
mod kernels {
    gpu_runtime::kernels!("pde");
}

/// Largest grid the fused shared-memory kernel holds (3 arrays of `n` doubles in 48 KiB).
pub const FUSED_MAX_N: usize = kernels::PDE_FUSED_MAX_N as usize;

/// Largest system size the shared-memory batch PCR kernel solves (one thread per row).
pub const BATCH_PCR_MAX_M: usize = kernels::PDE_BATCH_PCR_MAX_M as usize;

/// Steps per launch of the fused kernel (keeps one launch well under a second).
const FUSED_STEPS_PER_LAUNCH: u64 = 1 << 16;

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
    dv: &mut DeviceBuffer<f64>,
    dw: &mut DeviceBuffer<f64>,
    n: usize,
    batch: usize,
    steps: u64,
) -> Result<(), GpuError> {
    let coeffs = FhnCoeffs::from(k);
    let n64 = n as u64;
    let total = n64 * batch as u64;
    if n <= FUSED_MAX_N {
        let threads = (n.div_ceil(32) * 32).clamp(32, 1024) as u32;
        let cfg = LaunchConfig::blocks(batch.min(1 << 20) as u32, threads)
            .with_shared_bytes((3 * n * 8) as u32);
        let batch64 = batch as u64;
        let mut left = steps;
        while left > 0 {
            let s = left.min(FUSED_STEPS_PER_LAUNCH) as u32;
            // SAFETY: pde_fhn_fused_f64 reads and writes v, w [0, batch * n), both hold that many
            // doubles; the dynamic shared memory is the 3 * n doubles the kernel uses.
            unsafe { kernels::pde_fhn_fused_f64(gpu, cfg, dv, dw, n64, batch64, s, coeffs)? };
            left -= s as u64;
        }
    } else {
        // SAFETY: both buffers are written by the first step before they are read.
        let mut sv = unsafe { gpu.alloc_uninit::<f64>(total as usize)? };
        // SAFETY: as above.
        let mut sw = unsafe { gpu.alloc_uninit::<f64>(total as usize)? };
        let cfg = gpu.grid_stride(total, 256);
        for _ in 0..steps {
            // SAFETY: pde_fhn_step_f64 reads v, w and writes vn, wn over [0, total); all four
            // buffers hold total doubles and the inputs and outputs are distinct buffers.
            unsafe {
                kernels::pde_fhn_step_f64(gpu, cfg, dv, dw, &mut sv, &mut sw, n64, total, coeffs)?
            };
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
    p: &FhnParams,
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

/// A device-resident Crank–Nicolson run (see [`crate::implicit_run`]): `v`, `w` and every
/// per-step and per-iteration array live on the device; per Newton iteration only the 8-byte
/// max-norm of the update comes back to the host (and, in runs with a source, the `2n` source
/// values of each step go up). The kernels mirror `HostCn` in `implicit.rs`.
pub(crate) struct CnDevice<'a> {
    gpu: &'a Gpu,
    n: u64,
    k: CnConstants,
    /// The kernels' coefficient set (the constants above and the boundaries).
    coeffs: CnCoeffs,
    solver: TridiagSolver,
    source: Option<Source<'a>>,
    /// Host staging for the source values `s_v` (`[0, n)`) and `s_w` (`[n, 2n)`).
    src_host: Vec<f64>,
    /// The source values on the device: `2n` values, or an empty buffer at address 0 (the
    /// kernel reads a null `src` as "no source").
    src: DeviceBuffer<f64>,
    v: DeviceBuffer<f64>,
    w: DeviceBuffer<f64>,
    sw: DeviceBuffer<f64>,
    rhs: DeviceBuffer<f64>,
    big_v: DeviceBuffer<f64>,
    /// The Newton system; its solution `x` is the update.
    jac: DeviceTridiag<f64>,
    /// Bits of the update's max-norm (a non-negative double).
    max_bits: DeviceBuffer<u64>,
}

impl<'a> CnDevice<'a> {
    /// Allocates the device arrays and uploads `state` (once per run).
    pub(crate) fn upload(
        gpu: &'a Gpu,
        p: &FhnParams,
        k: CnConstants,
        state: &FhnState,
        solver: TridiagSolver,
        source: Option<Source<'a>>,
    ) -> Result<Self, GpuError> {
        let n = p.n;
        let arrays = 5 + if source.is_some() { 2 } else { 0 };
        gpu.ensure_fits((arrays + 9) * n as u64 * 8)?;
        let src = match source {
            Some(_) => gpu.alloc_zeros::<f64>(2 * n)?,
            None => gpu.empty::<f64>()?,
        };
        Ok(CnDevice {
            gpu,
            n: n as u64,
            k,
            coeffs: CnCoeffs::new(&k, p.left, p.right),
            solver,
            source,
            src_host: vec![0.0; if source.is_some() { 2 * n } else { 0 }],
            src,
            v: gpu.upload(&state.v)?,
            w: gpu.upload(&state.w)?,
            sw: gpu.alloc_zeros(n)?,
            rhs: gpu.alloc_zeros(n)?,
            big_v: gpu.alloc_zeros(n)?,
            jac: DeviceTridiag::alloc(gpu, n)?,
            max_bits: gpu.alloc_zeros(1)?,
        })
    }

    /// Downloads `v` and `w` into `state` (once per run, waiting for queued work); on an
    /// error `state` is left untouched.
    pub(crate) fn download(&self, state: &mut FhnState) -> Result<(), GpuError> {
        let v = self.gpu.download(&self.v)?;
        let w = self.gpu.download(&self.w)?;
        state.v = v;
        state.w = w;
        Ok(())
    }
}

impl CnBackend for CnDevice<'_> {
    fn begin(&mut self, _state: &FhnState, t0: f64, t1: f64) -> Result<(), StepError> {
        let gpu = self.gpu;
        let n = self.n as usize;
        if let Some(source) = self.source {
            let (sv, sw) = self.src_host.split_at_mut(n);
            for i in 0..n {
                (sv[i], sw[i]) = self.k.source_terms(source, i as f64 * self.k.dx, t0, t1);
            }
            gpu.upload_into(&self.src_host, &mut self.src)?;
        }
        // SAFETY: pde_fhn_cn_explicit_f64 reads v, w [0, n) and src [0, 2n) (src holds 2n doubles,
        // or is empty at address 0 and not read) and writes sw, rhs, big_v [0, n); every buffer
        // holds n doubles and the outputs are distinct from the inputs.
        unsafe {
            kernels::pde_fhn_cn_explicit_f64(
                gpu,
                gpu.grid_stride(self.n, 256),
                &self.v,
                &self.w,
                &self.src,
                &mut self.sw,
                &mut self.rhs,
                &mut self.big_v,
                self.n,
                self.coeffs,
            )?;
        }
        Ok(())
    }

    fn newton_iteration(&mut self) -> Result<f64, StepError> {
        let gpu = self.gpu;
        let cfg = gpu.grid_stride(self.n, 256);
        let [ja, jb, jc, jg] = &mut self.jac.sys;
        // SAFETY: pde_fhn_cn_assemble_f64 reads big_v, rhs [0, n) and writes a, b, c, g [0, n); all
        // hold n doubles, outputs distinct.
        unsafe {
            kernels::pde_fhn_cn_assemble_f64(
                gpu,
                cfg,
                &self.big_v,
                &self.rhs,
                ja,
                jb,
                jc,
                jg,
                self.n,
                self.coeffs,
            )?;
        }
        self.jac.solve(gpu, self.solver)?;
        gpu.zero(&mut self.max_bits)?;
        // SAFETY: pde_fhn_cn_update_f64 updates big_v [0, n) from delta [0, n) (both n doubles,
        // distinct) and atomically maxes the one u64 at max_bits; blockDim (256) is a multiple
        // of 32 as its warp reduction requires.
        unsafe {
            kernels::pde_fhn_cn_update_f64(
                gpu,
                cfg,
                &mut self.big_v,
                &self.jac.x,
                self.n,
                &mut self.max_bits,
            )?;
        }
        let mut bits = [0u64];
        gpu.download_into(&self.max_bits, &mut bits)?;
        Ok(f64::from_bits(bits[0]))
    }

    fn finish(&mut self, _state: &mut FhnState) -> Result<(), StepError> {
        let gpu = self.gpu;
        // SAFETY: pde_fhn_cn_finish_f64 reads big_v, sw [0, n) and writes v, w [0, n); all hold n
        // doubles and the outputs are distinct from the inputs.
        unsafe {
            kernels::pde_fhn_cn_finish_f64(
                gpu,
                gpu.grid_stride(self.n, 256),
                &self.big_v,
                &self.sw,
                &mut self.v,
                &mut self.w,
                self.n,
                self.k.beta,
            )?;
        }
        Ok(())
    }
}

/// One tridiagonal system on the GPU: uploads it, solves it with [`DeviceTridiag::solve`],
/// downloads the solution.
pub(crate) fn tridiag_single<T: Real>(
    gpu: &Gpu,
    a: &[T],
    b: &[T],
    c: &[T],
    d: &[T],
    solver: TridiagSolver,
) -> Result<Vec<T>, GpuError> {
    if b.is_empty() {
        return Ok(Vec::new());
    }
    let mut sys = DeviceTridiag::alloc(gpu, b.len())?;
    for (dst, src) in sys.sys.iter_mut().zip([a, b, c, d]) {
        gpu.upload_into(src, dst)?;
    }
    sys.solve(gpu, solver)?;
    gpu.download(&sys.x)
}

/// One tridiagonal system of `n >= 1` rows in device memory, with the scratch its GPU solve
/// needs: write the rows into `sys` (`a`, `b`, `c`, `d`; `a[0]` and `c[n-1]` are ignored),
/// call [`DeviceTridiag::solve`], read the solution from `x`.
pub(crate) struct DeviceTridiag<T: Real> {
    pub(crate) sys: [DeviceBuffer<T>; 4],
    /// The other half of the PCR levels' ping-pong (systems above [`BATCH_PCR_MAX_M`] rows).
    scratch: [DeviceBuffer<T>; 4],
    pub(crate) x: DeviceBuffer<T>,
}

impl<T: Real> DeviceTridiag<T> {
    /// Zeroed buffers for a system of `n >= 1` rows (9 `n` elements).
    pub(crate) fn alloc(gpu: &Gpu, n: usize) -> Result<Self, GpuError> {
        gpu.ensure_fits(9 * n as u64 * size_of::<T>() as u64)?;
        let z = || gpu.alloc_zeros::<T>(n);
        Ok(DeviceTridiag {
            sys: [z()?, z()?, z()?, z()?],
            scratch: [z()?, z()?, z()?, z()?],
            x: z()?,
        })
    }

    /// Queues the solve of the system in `sys` into `x` (no synchronisation; `sys` may be
    /// overwritten). Up to [`BATCH_PCR_MAX_M`] rows: one block of the batch kernels
    /// (shared-memory PCR, or the CR–PCR hybrid for `CyclicReduction`; `Thomas` runs as PCR,
    /// since one thread would leave the block idle). Larger: the PCR–Thomas hybrid, PCR levels
    /// in global memory until about `n / 32` interleaved systems remain, then one thread per
    /// system runs Thomas.
    pub(crate) fn solve(&mut self, gpu: &Gpu, solver: TridiagSolver) -> Result<(), GpuError> {
        let n = self.x.len();
        if n <= BATCH_PCR_MAX_M {
            let solver = match solver {
                TridiagSolver::Thomas => TridiagSolver::Pcr,
                s => s,
            };
            let [a, b, c, d] = &self.sys;
            return strided_batch_on_device(gpu, [a, b, c, d], &mut self.x, n, n, 1, solver);
        }
        let n64 = n as u64;
        // Number of interleaved subsystems left for Thomas: a power of two, about n / 32 rows
        // each, at most 2^16 of them.
        let target = (n / 32).clamp(1, 1 << 16);
        let subsystems = 1u64 << (usize::BITS - 1 - target.leading_zeros());
        let cfg = gpu.grid_stride(n64, 256);
        let mut s = 1u64;
        while s < subsystems {
            let [ai, bi, ci, di] = &self.sys;
            let [ao, bo, co, dout] = &mut self.scratch;
            // SAFETY: tridiag_pcr_level reads four input arrays and writes four distinct
            // output arrays over [0, n); all eight hold n elements.
            unsafe {
                kernels::pde_tridiag_pcr_level(gpu, cfg, ai, bi, ci, di, ao, bo, co, dout, n64, s)?
            };
            std::mem::swap(&mut self.sys, &mut self.scratch);
            s *= 2;
        }
        let [ai, bi, ci, di] = &self.sys;
        let cp = &mut self.scratch[0];
        // SAFETY: tridiag_thomas_strided reads a, b, c, d [0, n) and writes x, cp [0, n); x
        // and cp are distinct from the inputs and hold n elements; thread j < subsystems < n
        // touches rows j, j + S, ... < n only.
        unsafe {
            kernels::pde_tridiag_thomas_strided(
                gpu,
                gpu.grid_stride(subsystems, 128),
                ai,
                bi,
                ci,
                di,
                &mut self.x,
                cp,
                n64,
                subsystems,
            )?;
        }
        Ok(())
    }
}

/// Time of one tridiagonal solve on the GPU, for the solvers experiment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuTridiagTiming {
    /// Seconds for allocation, upload, solve and download (wall clock).
    pub with_transfers: f64,
    /// Device seconds for the solve alone (CUDA events; no allocation or transfer).
    pub solve_only: f64,
}

/// Solves one tridiagonal system on the GPU as [`crate::tridiag::solve`] does there, and
/// times it with and without the transfers.
///
/// # Complexity
/// As [`crate::tridiag::solve`] on the GPU; `5n` values cross the bus.
///
/// # Errors
/// [`crate::TridiagError::LengthMismatch`] unless the four slices have one length;
/// [`crate::TridiagError::Gpu`] when the GPU fails (a singular system shows as non-finite
/// values in the solution, not as an error).
///
/// # Examples
/// ```
/// use pde::{TridiagSolver, tridiag_gpu_timing};
/// let Ok(gpu) = gpu_runtime::gpu() else { return };
/// let n = 1000;
/// let (a, b, c, d) = (vec![-1.0; n], vec![2.5; n], vec![-1.0; n], vec![1.0; n]);
/// let (x, t) = tridiag_gpu_timing(gpu, &a, &b, &c, &d, TridiagSolver::Pcr).unwrap();
/// assert_eq!(x.len(), n);
/// println!("{:.3} ms on the device", t.solve_only * 1e3);
/// ```
pub fn tridiag_gpu_timing(
    gpu: &Gpu,
    a: &[f64],
    b: &[f64],
    c: &[f64],
    d: &[f64],
    solver: TridiagSolver,
) -> Result<(Vec<f64>, GpuTridiagTiming), crate::TridiagError> {
    let n = b.len();
    if a.len() != n || c.len() != n || d.len() != n {
        return Err(crate::TridiagError::LengthMismatch {
            a: a.len(),
            b: n,
            c: c.len(),
            d: d.len(),
        });
    }
    if n == 0 {
        let none = GpuTridiagTiming {
            with_transfers: 0.0,
            solve_only: 0.0,
        };
        return Ok((Vec::new(), none));
    }
    let t0 = std::time::Instant::now();
    let mut sys = DeviceTridiag::alloc(gpu, n)?;
    for (dst, src) in sys.sys.iter_mut().zip([a, b, c, d]) {
        gpu.upload_into(src, dst)?;
    }
    let timer = gpu.timer()?;
    sys.solve(gpu, solver)?;
    let solve_only = timer.stop()?;
    let x = gpu.download(&sys.x)?;
    Ok((
        x,
        GpuTridiagTiming {
            with_transfers: t0.elapsed().as_secs_f64(),
            solve_only,
        },
    ))
}

/// A strided batch on the GPU (layout already validated by the caller): uploads, solves with
/// [`strided_batch_on_device`], downloads into `x`.
pub(crate) fn tridiag_strided_batch<T: Real>(
    gpu: &Gpu,
    [a, b, c, d]: [&[T]; 4],
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
    strided_batch_on_device(gpu, [&da, &db, &dc, &dd], &mut dx, m, stride, batch, solver)?;
    gpu.download_into(&dx, x)
}

/// Queues the solve of a strided batch held in device buffers (layout valid, `m >= 1`,
/// `batch >= 1`): for `m <= BATCH_PCR_MAX_M`, shared-memory PCR (`Pcr`) or the CR–PCR hybrid
/// (`CyclicReduction`), one block per system; otherwise, and for `Thomas`, one thread per
/// system.
fn strided_batch_on_device<T: Real>(
    gpu: &Gpu,
    sys: [&DeviceBuffer<T>; 4],
    dx: &mut DeviceBuffer<T>,
    m: usize,
    stride: usize,
    batch: usize,
    solver: TridiagSolver,
) -> Result<(), GpuError> {
    let sz = size_of::<T>() as u32;
    let (m64, s64, b64) = (m as u64, stride as u64, batch as u64);
    let [a, b, c, d] = sys;
    let blocks = batch.min(1 << 20) as u32;
    if m <= BATCH_PCR_MAX_M && solver == TridiagSolver::CyclicReduction {
        let threads = (m.next_power_of_two() / 2).clamp(32, 512) as u32;
        let pcr_rows = (threads as u64).min(64);
        let cfg = LaunchConfig::blocks(blocks, threads).with_shared_bytes((5 * m) as u32 * sz);
        // SAFETY: tridiag_batch_cr_pcr reads rows [k*stride, k*stride + m) of a, b, c, d and
        // writes those of x for k < batch (the caller checked stride*(batch-1)+m <= len);
        // pcr_rows <= blockDim as the kernel requires; the shared memory is its 5 m elements.
        unsafe {
            kernels::pde_tridiag_batch_cr_pcr(gpu, cfg, a, b, c, d, dx, m64, s64, b64, pcr_rows)?
        };
    } else if m <= BATCH_PCR_MAX_M && solver == TridiagSolver::Pcr {
        let threads = m.next_power_of_two().clamp(32, 1024) as u32;
        let cfg = LaunchConfig::blocks(blocks, threads).with_shared_bytes((4 * m) as u32 * sz);
        // SAFETY: tridiag_batch_pcr reads rows [k*stride, k*stride + m) of a, b, c, d and
        // writes those of x for k < batch; the caller checked stride*(batch-1)+m <= len;
        // blockDim >= m and the shared memory is the 4 m elements the kernel uses.
        unsafe { kernels::pde_tridiag_batch_pcr(gpu, cfg, a, b, c, d, dx, m64, s64, b64)? };
    } else {
        let mut cp = gpu.alloc_zeros::<T>(b.len())?;
        let cfg = gpu.grid_stride(b64, 128);
        // SAFETY: as above, one thread per system; cp has the arrays' length and layout.
        unsafe {
            kernels::pde_tridiag_batch_thomas(gpu, cfg, a, b, c, d, dx, &mut cp, m64, s64, b64)?
        };
    }
    Ok(())
}
