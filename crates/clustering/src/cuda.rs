//! The CUDA backend: data uploaded once, labels kept on the device, only centroids (up) and
//! the `k * d + k + 2` statistics (down) cross the bus each iteration. Kernels in
//! `kernels-cuda/clustering.cu`, launched through their generated typed launchers.

use gpu_runtime::{DeviceBuffer, Gpu, GpuError, LaunchConfig};

use crate::lloyd::{Candidate, StepStats, Stepper, farthest_points};
use crate::{Element, KMeansError};

/// The typed launchers of `kernels-cuda/clustering.cu`.
mod kernels {
    gpu_runtime::kernels!("clustering");
}

/// Threads per block of every k-means kernel.
const BLOCK: u32 = kernels::KM_BLOCK;
/// Points per block of the tiled assignment.
const TILE_POINTS: u64 = kernels::TBM as u64;
/// Dynamic shared memory the one-kernel path may use (the default limit, no opt-in).
const SMALL_SHARED_LIMIT: usize = kernels::KM_SMALL_SHARED_LIMIT as usize;

/// Shared memory of the one-kernel path for `k` clusters in `d` dimensions.
fn small_shared_bytes<T>(k: usize, d: usize) -> usize {
    (k * d + k + 2) * 8 + k * d * size_of::<T>()
}

/// The device-resident state of a k-means run.
pub(crate) struct CudaStepper<'a, T: Element> {
    gpu: &'static Gpu,
    host: &'a [T],
    host_weights: Option<&'a [f64]>,
    n: u64,
    d: usize,
    x: DeviceBuffer<T>,
    w: DeviceBuffer<T>,
    has_w: u32,
    labels: DeviceBuffer<u32>,
    centroids: Option<DeviceBuffer<T>>,
    norms: Option<DeviceBuffer<T>>,
    stats: Option<DeviceBuffer<f64>>,
    partials: Option<DeviceBuffer<f64>>,
    k: usize,
}

impl<'a, T: Element> CudaStepper<'a, T> {
    /// Uploads the data (and weights) once.
    pub(crate) fn new(
        gpu: &'static Gpu,
        host: &'a [T],
        d: usize,
        weights: Option<&'a [f64]>,
    ) -> Result<Self, KMeansError> {
        let n = host.len() / d;
        if d > u32::MAX as usize {
            return Err(GpuError::TooLarge(format!("{d} dimensions")).into());
        }
        let bytes = std::mem::size_of_val(host) as u64
            + n as u64
                * (4 + if weights.is_some() {
                    size_of::<T>() as u64
                } else {
                    0
                });
        gpu.ensure_fits(bytes)?;
        let x = gpu.upload(host)?;
        let (w, has_w) = match weights {
            Some(ws) => {
                let wt: Vec<T> = ws.iter().map(|&v| T::from_f64(v)).collect();
                (gpu.upload(&wt)?, 1)
            }
            None => (gpu.alloc_zeros::<T>(1)?, 0),
        };
        let labels = gpu.upload(&vec![u32::MAX; n])?;
        Ok(CudaStepper {
            gpu,
            host,
            host_weights: weights,
            n: n as u64,
            d,
            x,
            w,
            has_w,
            labels,
            centroids: None,
            norms: None,
            stats: None,
            partials: None,
            k: 0,
        })
    }

    /// Forgets the labels (a new run starts).
    pub(crate) fn reset_labels(&mut self) -> Result<(), KMeansError> {
        self.labels = self.gpu.upload(&vec![u32::MAX; self.n as usize])?;
        Ok(())
    }

    /// The labels of the last step.
    pub(crate) fn labels(&mut self) -> Result<Vec<u32>, KMeansError> {
        Ok(self.gpu.download(&self.labels)?)
    }

    fn grid_small(&self) -> u32 {
        // Enough blocks to fill the device a few times; each block then streams many points.
        let cfg = self.gpu.grid_stride(self.n, BLOCK);
        cfg.grid_dim
            .0
            .min(self.gpu.info().multiprocessors.max(1) * 4)
    }

    fn ensure_buffers(&mut self, k: usize, small: bool) -> Result<(), KMeansError> {
        let kd = k * self.d;
        if self.k != k || self.centroids.is_none() {
            self.centroids = Some(self.gpu.alloc_zeros::<T>(kd)?);
            self.norms = Some(self.gpu.alloc_zeros::<T>(k)?);
            self.stats = Some(self.gpu.alloc_zeros::<f64>(kd + k + 2)?);
            self.partials = None;
            self.k = k;
        }
        if small && self.partials.is_none() {
            let blocks = self.grid_small() as usize;
            self.partials = Some(self.gpu.alloc_zeros::<f64>(blocks * (kd + k + 2))?);
        }
        Ok(())
    }
}

impl<T: Element> Stepper for CudaStepper<'_, T> {
    fn dim(&self) -> usize {
        self.d
    }

    fn step(&mut self, centroids: &[f64], k: usize) -> Result<StepStats, KMeansError> {
        let d = self.d;
        let kd = k * d;
        let stats_len = (kd + k + 2) as u64;
        let small = small_shared_bytes::<T>(k, d) <= SMALL_SHARED_LIMIT;
        self.ensure_buffers(k, small)?;
        let gpu = self.gpu;
        let c_host: Vec<T> = centroids.iter().map(|&v| T::from_f64(v)).collect();
        let (n, d32, k32) = (self.n, d as u32, k as u32);
        let blocks = self.grid_small();
        let (Some(c), Some(norms), Some(stats)) = (
            self.centroids.as_mut(),
            self.norms.as_mut(),
            self.stats.as_mut(),
        ) else {
            unreachable!("ensure_buffers allocates them")
        };
        gpu.upload_into(&c_host, c)?;
        if n == 0 {
            return Ok(StepStats::zeros(k, d));
        }
        if small {
            let Some(partials) = self.partials.as_mut() else {
                unreachable!("ensure_buffers allocates them")
            };
            let cfg = LaunchConfig::blocks(blocks, BLOCK)
                .with_shared_bytes(small_shared_bytes::<T>(k, d) as u32);
            // SAFETY: kmeans_step_small_T(x[n*d], w[n or 1], has_w, c[k*d], n, d, k,
            // labels[n], partials[grid * (k*d+k+2)]): every buffer has those sizes (x, w and
            // labels from `new`, c and partials from `ensure_buffers` for this k and grid), and
            // the dynamic shared memory holds the statistics plus the centroids.
            unsafe {
                kernels::clustering_kmeans_step_small(
                    gpu,
                    cfg,
                    &self.x,
                    &self.w,
                    self.has_w,
                    c,
                    n,
                    d32,
                    k32,
                    &mut self.labels,
                    partials,
                )?;
            }
            // SAFETY: clustering_kmeans_reduce_partials(partials[blocks*stats], blocks, stats, out[stats]):
            // partials holds `blocks` rows of `stats_len`, stats holds `stats_len`.
            unsafe {
                kernels::clustering_kmeans_reduce_partials(
                    gpu,
                    gpu.grid_stride(stats_len, BLOCK),
                    partials,
                    blocks as u64,
                    stats_len,
                    stats,
                )?;
            }
        } else {
            let k64 = k as u64;
            gpu.zero(stats)?;
            let tiles = n.div_ceil(TILE_POINTS);
            if tiles > i32::MAX as u64 {
                return Err(GpuError::TooLarge(format!("{n} points for the tiled path")).into());
            }
            // SAFETY: kmeans_norms_T(c[k*d], k, d, out[k]): both buffers sized for this k.
            unsafe {
                kernels::clustering_kmeans_norms(
                    gpu,
                    gpu.grid_stride(k64, BLOCK),
                    c,
                    k64,
                    d32,
                    norms,
                )?
            };
            // SAFETY: kmeans_assign_tiled_T(x[n*d], c[k*d], norms[k], n, d, k, labels[n],
            // stats[k*d+k+2]); one block of KM_BLOCK threads per TBM points, every access is
            // bounds-checked against n, d and k in the kernel.
            unsafe {
                kernels::clustering_kmeans_assign_tiled(
                    gpu,
                    LaunchConfig::blocks(tiles as u32, BLOCK),
                    &self.x,
                    c,
                    norms,
                    n,
                    d32,
                    k32,
                    &mut self.labels,
                    stats,
                )?;
            }
            // SAFETY: kmeans_accumulate_T(x[n*d], w, has_w, c[k*d], labels[n], n, d, k,
            // stats[k*d+k+2]); labels were all written by the assignment (values < k).
            unsafe {
                kernels::clustering_kmeans_accumulate(
                    gpu,
                    gpu.grid_stride(n.saturating_mul(32), BLOCK),
                    &self.x,
                    &self.w,
                    self.has_w,
                    c,
                    &self.labels,
                    n,
                    d32,
                    k32,
                    stats,
                )?;
            }
        }
        let flat = gpu.download(&*stats)?;
        Ok(StepStats::from_flat(&flat, k, d))
    }

    fn farthest(&mut self, centroids: &[f64], m: usize) -> Result<Vec<Candidate>, KMeansError> {
        let labels = self.labels()?;
        Ok(farthest_points(
            self.host,
            self.d,
            self.host_weights,
            centroids,
            &labels,
            m,
            0,
        ))
    }
}
