//! `y <- a * x + y`: the runtime's end-to-end self test, and the template every algorithm in
//! warpath follows (reference, fast CPU path, CUDA path, one `Exec` entry point).

use rayon::prelude::*;

use crate::{Backend, DeviceBuffer, DeviceSink, Exec, GpuError, Target};

/// The typed launchers of `kernels-cuda/runtime.cu`.
mod kernels {
    crate::kernels!("runtime");
}

/// Below this many elements the GPU does not pay for the two transfers (an axpy moves 12 bytes
/// per element over PCIe and does two flops, so in practice never; the self test forces `Cuda`).
pub const AXPY_GPU_THRESHOLD: u64 = 1 << 26;

/// Below this many elements one thread is faster than rayon's fork/join.
const AXPY_PARALLEL_THRESHOLD: usize = 1 << 16;

/// Errors of [`axpy`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AxpyError {
    /// `x` and `y` differ in length.
    #[error("x has {x} elements but y has {y}")]
    LengthMismatch {
        /// Length of `x`.
        x: usize,
        /// Length of `y`.
        y: usize,
    },
    /// The GPU path failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// The obviously correct reference: one sequential loop.
pub fn axpy_reference(a: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// Computes `y[i] = a * x[i] + y[i]` where `exec` says, and reports which backend ran.
///
/// # Complexity
/// `O(n)` work; `O(n / p)` time on `p` threads; on the GPU two transfers dominate.
///
/// # Errors
/// [`AxpyError::LengthMismatch`] when the slices differ in length; [`AxpyError::Gpu`] when
/// `exec` asks for a GPU that is missing or the GPU path fails.
///
/// # Examples
/// ```
/// use gpu_runtime::{axpy, Exec, Backend};
/// let x = [1.0, 2.0, 3.0];
/// let mut y = [10.0, 20.0, 30.0];
/// let ran = axpy(2.0, &x, &mut y, Exec::Cpu).unwrap();
/// assert_eq!(y, [12.0, 24.0, 36.0]);
/// assert_eq!(ran, Backend::Cpu);
/// ```
pub fn axpy(a: f32, x: &[f32], y: &mut [f32], exec: Exec) -> Result<Backend, AxpyError> {
    if x.len() != y.len() {
        return Err(AxpyError::LengthMismatch {
            x: x.len(),
            y: y.len(),
        });
    }
    match exec.resolve(x.len() as u64, AXPY_GPU_THRESHOLD)? {
        Target::Cpu => {
            if x.len() < AXPY_PARALLEL_THRESHOLD {
                axpy_reference(a, x, y);
            } else {
                y.par_chunks_mut(1 << 14)
                    .zip(x.par_chunks(1 << 14))
                    .for_each(|(yc, xc)| {
                        axpy_reference(a, xc, yc);
                    });
            }
            Ok(Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            if x.is_empty() {
                return Ok(Backend::Cuda);
            }
            gpu.ensure_fits(2 * std::mem::size_of_val(x) as u64)?;
            let dx = gpu.upload(x)?;
            let mut dy = gpu.upload(y)?;
            axpy_device(gpu, a, &dx, &mut dy)?;
            gpu.download_into(&dy, y)?;
            Ok(Backend::Cuda)
        }
    }
}

/// Device-resident `y <- a * x + y`: queues the kernel on the GPU's stream and returns without
/// waiting (use [`Gpu::synchronize`](crate::Gpu::synchronize) or a download to wait).
///
/// # Errors
/// [`AxpyError::LengthMismatch`] when the buffers differ in length; [`AxpyError::Gpu`] when the
/// launch fails.
pub fn axpy_device(
    gpu: &crate::Gpu,
    a: f32,
    x: &DeviceBuffer<f32>,
    y: &mut DeviceBuffer<f32>,
) -> Result<(), AxpyError> {
    if x.len() != y.len() {
        return Err(AxpyError::LengthMismatch {
            x: x.len(),
            y: y.len(),
        });
    }
    if x.is_empty() {
        return Ok(());
    }
    let n = x.len() as u64;
    // SAFETY: runtime_axpy_f32 reads x[0..n) and writes y[0..n); both buffers hold n elements (checked
    // above).
    unsafe { kernels::runtime_axpy_f32(gpu, gpu.grid_stride(n, 256), a, x, y, n)? };
    Ok(())
}

/// Fills a device buffer with `0, 1, 2, ...` and returns it to the host: the smallest
/// check that PTX loads and a kernel runs on this device.
///
/// # Errors
/// Any [`GpuError`].
pub fn iota_on_gpu(gpu: &crate::Gpu, n: usize) -> Result<Vec<u32>, GpuError> {
    let mut d = gpu.alloc_zeros::<u32>(n)?;
    iota(gpu, &mut d)?;
    gpu.download(&d)
}

/// Writes `0, 1, 2, ...` into `out` on the device (queued; does not synchronise). The one iota
/// every crate uses (kernels-cuda/runtime.cu).
///
/// # Errors
/// [`GpuError::TooLarge`] above `u32::MAX + 1` elements; a failed launch.
pub fn iota(gpu: &crate::Gpu, out: &mut DeviceBuffer<u32>) -> Result<(), GpuError> {
    let n = out.len() as u64;
    if n > 1 << 32 {
        return Err(GpuError::TooLarge(format!(
            "iota over {n} elements overflows u32 indices"
        )));
    }
    if n == 0 {
        return Ok(());
    }
    // SAFETY: runtime_iota_u32 writes out[0..n) with a grid-stride loop; `out` holds n elements.
    unsafe { kernels::runtime_iota_u32(gpu, gpu.grid_stride(n, 256), out, n) }
}

/// Writes `value` into every element of `out` on the device (queued; does not synchronise).
/// The one fill every crate uses (kernels-cuda/runtime.cu).
///
/// # Errors
/// A failed launch.
pub fn fill(gpu: &crate::Gpu, out: &mut impl DeviceSink<u32>, value: u32) -> Result<(), GpuError> {
    let n = out.len() as u64;
    if n == 0 {
        return Ok(());
    }
    // SAFETY: runtime_fill_u32 writes out[0..n) with a grid-stride loop; `out` holds n elements.
    unsafe { kernels::runtime_fill_u32(gpu, gpu.grid_stride(n, 256), out, value, n) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::gpu_for_test;
    use proptest::prelude::*;

    fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
        let x = (0..n).map(|i| (i % 97) as f32 * 0.5 - 7.0).collect();
        let y = (0..n).map(|i| (i % 13) as f32).collect();
        (x, y)
    }

    #[test]
    fn length_mismatch_is_an_error() {
        let mut y = [0.0; 2];
        assert_eq!(
            axpy(1.0, &[1.0], &mut y, Exec::Cpu),
            Err(AxpyError::LengthMismatch { x: 1, y: 2 })
        );
    }

    #[test]
    fn parallel_path_matches_reference() {
        let sizes = [0, 1].into_iter().chain(crate::testing::EDGE_SIZES);
        for n in sizes.chain([(1 << 16) + 1, (1 << 20) + 1]) {
            let (x, mut y) = inputs(n);
            let mut expect = y.clone();
            axpy_reference(1.5, &x, &mut expect);
            axpy(1.5, &x, &mut y, Exec::Cpu).unwrap();
            assert_eq!(y, expect, "n = {n}");
        }
    }

    #[test]
    fn gpu_matches_cpu() {
        let Some(_gpu) = gpu_for_test("axpy gpu_matches_cpu") else {
            return;
        };
        for n in [0, 1, 31, 32, 33, 1023, 1024, 1025, 65_537, (1 << 20) + 1] {
            let (x, mut y) = inputs(n);
            let mut expect = y.clone();
            axpy_reference(-0.25, &x, &mut expect);
            assert_eq!(axpy(-0.25, &x, &mut y, Exec::Cuda).unwrap(), Backend::Cuda);
            assert_eq!(y, expect, "n = {n}");
        }
    }

    #[test]
    fn gpu_iota() {
        let Some(gpu) = gpu_for_test("gpu_iota") else {
            return;
        };
        for n in [1usize, 1000, 1 << 22] {
            let v = iota_on_gpu(gpu, n).unwrap();
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32), "n = {n}");
        }
    }

    #[test]
    fn gpu_fill_writes_the_view_only() {
        let Some(gpu) = gpu_for_test("gpu_fill_writes_the_view_only") else {
            return;
        };
        for n in [1usize, 1000, (1 << 20) + 3] {
            let mut d = gpu.upload(&vec![7u32; n + 5]).unwrap();
            fill(gpu, &mut d.slice_mut(..n), u32::MAX).unwrap();
            let v = gpu.download(&d).unwrap();
            assert!(v[..n].iter().all(|&x| x == u32::MAX), "n = {n}");
            assert_eq!(v[n..], [7; 5], "n = {n}: past the view");
        }
        fill(gpu, &mut gpu.empty::<u32>().unwrap(), 1).unwrap();
    }

    #[test]
    fn cuda_without_gpu_is_an_error_not_a_fallback() {
        if crate::gpu().is_ok() {
            return; // only meaningful without a GPU
        }
        let mut y = [0.0];
        assert!(matches!(
            axpy(1.0, &[1.0], &mut y, Exec::Cuda),
            Err(AxpyError::Gpu(_))
        ));
    }

    proptest! {
        #[test]
        fn prop_matches_reference(a in -4.0f32..4.0, v in proptest::collection::vec(-1e3f32..1e3, 0..3000)) {
            let mut y: Vec<f32> = v.iter().map(|t| t * 0.5).collect();
            let mut expect = y.clone();
            axpy_reference(a, &v, &mut expect);
            axpy(a, &v, &mut y, Exec::Cpu).unwrap();
            prop_assert_eq!(y, expect);
        }
    }
}
